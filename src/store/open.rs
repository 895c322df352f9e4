//! Opening a store from a database URL: which backend a URL names
//! ([`Database`]), how to open it ([`StoreOptions`]: migrated, or read-only
//! for the operator's commands), and the URL as logs show it
//! ([`redacted`]). The server, the operator's commands and the load
//! generator all open their store here.

use std::path::PathBuf;
use std::sync::Arc;

use super::{Cells, EventStore, Migration, PostgresStore, SqliteOptions, SqliteStore, StoreError};

/// Why a store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The database URL names a backend this build does not have.
    #[error("unsupported database url {0:?}: use sqlite://<path>, a file path or postgres://...")]
    UnsupportedDatabase(String),
    /// The store failed to open or migrate.
    #[error("opening the {backend} store {database}: {source}")]
    Store {
        /// "SQLite" or "PostgreSQL".
        backend: &'static str,
        /// The database (a file path, or a URL without its password).
        database: String,
        /// The cause.
        source: StoreError,
    },
    /// Several databases that cannot be cells of one store, in words.
    #[error("{0}")]
    Cells(String),
    /// A SQLite file to be read does not exist.
    #[error("no SQLite database at {}", .0.display())]
    NoDatabase(PathBuf),
}

/// A database URL, parsed: which backend it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    /// SQLite: `sqlite://<path>`, `sqlite:<path>` or a plain file path.
    Sqlite(String),
    /// PostgreSQL: `postgres://...` or `postgresql://...`.
    Postgres(String),
}

/// How [`Database::open`] opens a store.
#[derive(Debug, Clone, Copy)]
pub struct StoreOptions {
    /// Connections in the PostgreSQL pool (ignored for SQLite).
    pub postgres_connections: u32,
    /// SQLite `synchronous=NORMAL` instead of FULL.
    pub sqlite_synchronous_normal: bool,
    /// Read an existing, migrated database without writing to it: a SQLite
    /// file that does not exist is an error, not a new empty database, and
    /// nothing is migrated.
    pub read_only: bool,
}

impl Database {
    /// Which backend `url` names.
    ///
    /// # Errors
    /// [`OpenError::UnsupportedDatabase`] for a URL of another scheme.
    pub fn parse(url: &str) -> Result<Self, OpenError> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Database::Postgres(url.to_owned()));
        }
        if url.contains("://") && !url.starts_with("sqlite:") {
            return Err(OpenError::UnsupportedDatabase(url.to_owned()));
        }
        Ok(Database::Sqlite(url.to_owned()))
    }

    /// "SQLite" or "PostgreSQL".
    pub fn backend(&self) -> &'static str {
        match self {
            Database::Sqlite(_) => "SQLite",
            Database::Postgres(_) => "PostgreSQL",
        }
    }

    /// The URL as logs and errors show it, without a password.
    pub fn redacted(&self) -> String {
        match self {
            Database::Sqlite(url) | Database::Postgres(url) => redacted(url),
        }
    }

    /// The SQLite database's file; `None` for PostgreSQL and for an
    /// in-memory SQLite database.
    pub fn sqlite_file(&self) -> Option<PathBuf> {
        let Database::Sqlite(url) = self else {
            return None;
        };
        let file = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
            .unwrap_or(url);
        let file = file.split('?').next().unwrap_or(file);
        (!file.is_empty() && !file.starts_with(":memory:")).then(|| PathBuf::from(file))
    }

    /// Opens the store: migrated (creating a SQLite file if missing), or
    /// read-only (see [`StoreOptions::read_only`]).
    ///
    /// # Errors
    /// [`OpenError::NoDatabase`] for a missing SQLite file opened read-only;
    /// [`OpenError::Store`] when the store does not open or migrate.
    pub async fn open(&self, options: StoreOptions) -> Result<Arc<dyn EventStore>, OpenError> {
        self.open_cell(options, 0, 1).await
    }

    /// Opens the store as cell `cell` of `cells` (see [`Cells`]): as
    /// [`Database::open`], and a PostgreSQL database records which cell it
    /// is when first opened, and refuses to open as another.
    async fn open_cell(
        &self,
        options: StoreOptions,
        cell: usize,
        cells: usize,
    ) -> Result<Arc<dyn EventStore>, OpenError> {
        let opened: Result<Arc<dyn EventStore>, _> = match self {
            Database::Postgres(url) => {
                let store = if options.read_only {
                    PostgresStore::open_read_only(url, options.postgres_connections).await
                } else {
                    PostgresStore::open(url, options.postgres_connections).await
                };
                match store {
                    Ok(store) => match store.take_cell(cell, cells, options.read_only).await {
                        Ok(()) => Ok(Arc::new(store) as Arc<dyn EventStore>),
                        Err(error) => {
                            store.close().await;
                            Err(error)
                        }
                    },
                    Err(error) => Err(error),
                }
            }
            Database::Sqlite(url) => {
                if let Some(file) = self.sqlite_file().filter(|_| options.read_only)
                    && !file.exists()
                {
                    return Err(OpenError::NoDatabase(file));
                }
                let mut sqlite = SqliteOptions::new(url.clone());
                sqlite.synchronous_normal = options.sqlite_synchronous_normal;
                sqlite.read_only = options.read_only;
                SqliteStore::open(&sqlite)
                    .await
                    .map(|s| Arc::new(s) as Arc<dyn EventStore>)
            }
        };
        opened.map_err(|source| self.store_error(source))
    }

    /// Opens every database of `databases` as one store: the one itself,
    /// or several PostgreSQL databases as [`Cells`], in the order given
    /// (cell 0 first).
    ///
    /// # Errors
    /// As for [`Database::open`]; [`OpenError::Cells`] for several
    /// databases that are not all PostgreSQL, or that do not divide the
    /// games into the same slots.
    pub async fn open_all(
        databases: &[Database],
        options: StoreOptions,
    ) -> Result<Arc<dyn EventStore>, OpenError> {
        if let [database] = databases {
            return database.open(options).await;
        }
        if databases.is_empty() || databases.iter().any(|d| matches!(d, Database::Sqlite(_))) {
            return Err(OpenError::Cells(
                "several databases (cells) must all be PostgreSQL".to_owned(),
            ));
        }
        let opening = databases
            .iter()
            .enumerate()
            .map(|(cell, database)| database.open_cell(options, cell, databases.len()));
        let mut stores = Vec::with_capacity(databases.len());
        let mut failed = None;
        for opened in futures_util::future::join_all(opening).await {
            match opened {
                Ok(store) => stores.push(store),
                Err(error) => {
                    failed.get_or_insert(error);
                }
            }
        }
        if let Some(error) = failed {
            futures_util::future::join_all(stores.iter().map(|s| s.close())).await;
            return Err(error);
        }
        Cells::new(stores)
            .await
            .map(|cells| Arc::new(cells) as Arc<dyn EventStore>)
            .map_err(|error| OpenError::Cells(error.to_string()))
    }

    /// Applies the migrations the database lacks (creating a SQLite file
    /// if missing) and says which they were.
    ///
    /// # Errors
    /// [`OpenError::Store`] when the database cannot be opened or a
    /// migration fails.
    pub async fn migrate(&self) -> Result<Vec<Migration>, OpenError> {
        match self {
            Database::Postgres(url) => PostgresStore::migrate(url).await,
            Database::Sqlite(url) => SqliteStore::migrate(&SqliteOptions::new(url.clone())).await,
        }
        .map_err(|source| self.store_error(source))
    }

    fn store_error(&self, source: StoreError) -> OpenError {
        OpenError::Store {
            backend: self.backend(),
            database: self.redacted(),
            source,
        }
    }
}

/// A database URL fit for logs: the password (in the authority or a
/// `password=` parameter) replaced by `***`.
pub fn redacted(url: &str) -> String {
    let mut out = url.to_owned();
    if let Some(scheme_end) = out.find("://") {
        let authority_start = scheme_end + 3;
        let authority_end = out[authority_start..]
            .find(['/', '?'])
            .map_or(out.len(), |i| authority_start + i);
        if let Some(at) = out[authority_start..authority_end].rfind('@') {
            let userinfo = &out[authority_start..authority_start + at];
            if let Some(colon) = userinfo.find(':') {
                let start = authority_start + colon + 1;
                out.replace_range(start..authority_start + at, "***");
            }
        }
    }
    if let Some(query) = out.find('?') {
        let (head, params) = out.split_at(query + 1);
        let params: Vec<String> = params
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                _ => p.to_owned(),
            })
            .collect();
        out = format!("{head}{}", params.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::redacted;

    #[test]
    fn a_database_url_is_logged_without_its_password() {
        for (url, shown) in [
            (
                "postgres://plylog:s3cret@db.internal:5432/plylog",
                "postgres://plylog:***@db.internal:5432/plylog",
            ),
            (
                "postgres://plylog@db/plylog?password=s3cret&sslmode=require",
                "postgres://plylog@db/plylog?password=***&sslmode=require",
            ),
            ("postgres://db/plylog", "postgres://db/plylog"),
            ("sqlite://plylog.db", "sqlite://plylog.db"),
            ("/var/lib/plylog.db", "/var/lib/plylog.db"),
        ] {
            assert_eq!(redacted(url), shown);
        }
    }
}
