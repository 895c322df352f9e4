//! PostgreSQL for the tests: whether they run on it, and a fresh schema per
//! server. Shared by the test crates with `#[path]`.

/// Whether the black-box tests run on PostgreSQL.
pub(crate) fn on_postgres() -> bool {
    std::env::var("PLYLOG_TEST_BACKEND").is_ok_and(|b| b == "postgres")
}

/// The PostgreSQL database the Postgres tests use.
pub(crate) fn postgres_url() -> String {
    std::env::var("DATABASE_URL")
        .ok()
        .filter(|url| url.starts_with("postgres"))
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// A fresh, empty schema in the Postgres test database, and a URL whose
/// connections use it.
pub(crate) async fn fresh_postgres_schema() -> String {
    use sqlx::Connection;
    let base = postgres_url();
    let schema = format!("t_{}", uuid::Uuid::new_v4().simple());
    let mut admin = sqlx::PgConnection::connect(&base)
        .await
        .expect("the Postgres test database answers");
    sqlx::query(&format!("CREATE SCHEMA {schema}"))
        .execute(&mut admin)
        .await
        .expect("a fresh schema");
    let _ = admin.close().await;
    let joiner = if base.contains('?') { '&' } else { '?' };
    format!("{base}{joiner}options%5Bsearch_path%5D={schema}")
}
