//! PostgreSQL for the tests: whether they run on it, and a fresh schema per
//! server that is dropped again when the test is done.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Whether the black-box tests run on PostgreSQL.
pub fn on_postgres() -> bool {
    std::env::var("PLYLOG_TEST_BACKEND").is_ok_and(|b| b == "postgres")
}

/// Whether PostgreSQL is there for the tests that need it whatever the
/// backend: `DATABASE_URL` names a PostgreSQL database, or the black-box
/// tests run on PostgreSQL.
pub fn postgres_configured() -> bool {
    on_postgres() || std::env::var("DATABASE_URL").is_ok_and(|url| url.starts_with("postgres"))
}

/// The PostgreSQL database the Postgres tests use.
pub fn postgres_url() -> String {
    std::env::var("DATABASE_URL")
        .ok()
        .filter(|url| url.starts_with("postgres"))
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// Schemas older than this are left over from a test run that was killed
/// before it could drop them, and are dropped by the next run.
const STALE_AFTER: Duration = Duration::from_secs(3600);

/// A fresh schema in the Postgres test database, dropped (with everything in
/// it) when this value is dropped.
pub struct PgSchema {
    /// A URL whose connections use the schema.
    pub url: String,
    name: String,
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        let name = self.name.clone();
        // Drop runs inside the test's runtime: use a thread with its own.
        let dropped = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime")
                .block_on(drop_schema(&name))
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            eprintln!("could not drop test schema {}: {dropped:?}", self.name);
        }
    }
}

async fn drop_schema(name: &str) -> Result<(), sqlx::Error> {
    use sqlx::Connection;
    let mut admin = sqlx::PgConnection::connect(&postgres_url()).await?;
    // Connections of servers the test left running may still hold locks.
    sqlx::query("SET lock_timeout = '10s'")
        .execute(&mut admin)
        .await?;
    sqlx::query(&format!("DROP SCHEMA IF EXISTS {name} CASCADE"))
        .execute(&mut admin)
        .await?;
    admin.close().await
}

/// A fresh, empty schema in the Postgres test database, and a URL whose
/// connections use it. Schemas a killed test run left behind (named
/// `t_<unix seconds>_<uuid>`, over an hour old) are dropped first.
pub async fn fresh_postgres_schema() -> PgSchema {
    use sqlx::Connection;
    let base = postgres_url();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    let name = format!("t_{now}_{}", uuid::Uuid::new_v4().simple());
    let mut admin = sqlx::PgConnection::connect(&base)
        .await
        .expect("the Postgres test database answers");
    let schemas: Vec<String> = sqlx::query_scalar(
        "SELECT schema_name::text FROM information_schema.schemata WHERE schema_name LIKE 't\\_%'",
    )
    .fetch_all(&mut admin)
    .await
    .expect("schemas listed");
    for stale in schemas.iter().filter(|schema| {
        schema
            .split('_')
            .nth(1)
            .and_then(|secs| secs.parse::<u64>().ok())
            .is_some_and(|made| now.saturating_sub(made) > STALE_AFTER.as_secs())
    }) {
        let _ = sqlx::query(&format!("DROP SCHEMA IF EXISTS {stale} CASCADE"))
            .execute(&mut admin)
            .await;
    }
    sqlx::query(&format!("CREATE SCHEMA {name}"))
        .execute(&mut admin)
        .await
        .expect("a fresh schema");
    let _ = admin.close().await;
    let joiner = if base.contains('?') { '&' } else { '?' };
    PgSchema {
        url: format!("{base}{joiner}options%5Bsearch_path%5D={name}"),
        name,
    }
}
