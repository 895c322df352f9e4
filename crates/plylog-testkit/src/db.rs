//! The database a test's servers keep their logs in: a fresh SQLite file, or
//! with `PLYLOG_TEST_BACKEND=postgres` a fresh PostgreSQL schema.

use std::path::PathBuf;

use crate::postgres::{PgSchema, fresh_postgres_schema, on_postgres, postgres_configured};

/// Where the tests' servers keep their logs: a fresh SQLite file per server
/// by default, or with `PLYLOG_TEST_BACKEND=postgres` a fresh schema per
/// server in the PostgreSQL database of `DATABASE_URL` (default
/// `postgres://postgres@127.0.0.1:5432/test`).
pub struct TestDatabase {
    /// The database URL a server is given.
    pub url: String,
    /// The SQLite file, when the backend is SQLite.
    pub file: Option<PathBuf>,
    /// The PostgreSQL schema, dropped with this value.
    _schema: Option<PgSchema>,
    _dir: tempfile::TempDir,
}

/// Runs `sql` on the test database directly (SQLite file or PostgreSQL
/// schema) and returns the rows it changed.
pub async fn execute(db: &TestDatabase, sql: &str) -> u64 {
    match &db.file {
        Some(_) => {
            let mut conn = <sqlx::SqliteConnection as sqlx::Connection>::connect(&db.url)
                .await
                .unwrap();
            sqlx::query(sql)
                .execute(&mut conn)
                .await
                .unwrap()
                .rows_affected()
        }
        None => {
            let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&db.url)
                .await
                .unwrap();
            sqlx::query(sql)
                .execute(&mut conn)
                .await
                .unwrap()
                .rows_affected()
        }
    }
}

impl TestDatabase {
    /// The seat token secret file of this database's servers, written on
    /// first use.
    pub fn secret_file(&self) -> PathBuf {
        let path = self._dir.path().join("seat-token-secret");
        if !path.exists() {
            let secret: String = (0..64)
                .map(|_| char::from_digit(rand::random_range(0..16), 16).unwrap())
                .collect();
            std::fs::write(&path, format!("{secret}\n")).expect("secret file written");
        }
        path
    }

    /// A fresh PostgreSQL schema, whatever the configured backend, when
    /// `DATABASE_URL` names a PostgreSQL database or the suite runs on
    /// PostgreSQL (for a test that needs PostgreSQL's table locks).
    pub async fn postgres() -> Option<Self> {
        if !postgres_configured() {
            return None;
        }
        let schema = fresh_postgres_schema().await;
        Some(TestDatabase {
            url: schema.url.clone(),
            file: None,
            _schema: Some(schema),
            _dir: tempfile::tempdir().expect("temp dir"),
        })
    }

    /// A fresh database of the configured backend.
    pub async fn fresh() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        if on_postgres() {
            let schema = fresh_postgres_schema().await;
            TestDatabase {
                url: schema.url.clone(),
                file: None,
                _schema: Some(schema),
                _dir: dir,
            }
        } else {
            let file = dir.path().join("plylog.db");
            TestDatabase {
                url: format!("sqlite://{}", file.display()),
                file: Some(file),
                _schema: None,
                _dir: dir,
            }
        }
    }
}
