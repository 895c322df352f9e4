//! What plylog's test binaries share, in one dev-only crate (the root
//! package's `[dev-dependencies]`), so every binary reaches the same
//! helpers by name instead of including files with `#[path]`.
//!
//! # Where a helper goes
//! - A server in this process: [`app`] ([`spawn_app`] from settings,
//!   [`TestServer`] on a fresh database with a client and restarts).
//! - The real `plylog` binary as a child process: [`process`] ([`Server`]
//!   kills and reaps its child when dropped).
//! - The database of a test: [`db`] ([`TestDatabase`]: SQLite or, with
//!   `PLYLOG_TEST_BACKEND=postgres`, a fresh PostgreSQL schema), built on
//!   [`postgres`].
//! - A request or a move: [`requests`] (builders for every request the tests
//!   send); a call that expects an answer, and reading answers and
//!   refusals: [`calls`]; raw bytes as a request body: [`codec`].
//! - Games written straight into a store: [`stored`].
//! - Waiting for something with a deadline: [`wait`] (never a bare loop).
//! - Chess's perft fixtures: [`perft`].
//! - Seeded randomness: [`seed`]; the servers' logs with `TEST_LOG=1`:
//!   [`logs`]; tests that need PostgreSQL, a Python or a browser, as
//!   libtest-mimic trials: [`optional`].

pub mod app;
pub mod calls;
pub mod codec;
pub mod db;
pub mod logs;
pub mod optional;
pub mod perft;
pub mod postgres;
pub mod process;
pub mod requests;
pub mod seed;
pub mod stored;
pub mod wait;

pub use app::{App, TestServer, settings, spawn_app};
pub use calls::*;
pub use codec::RawCodec;
pub use db::{TestDatabase, execute};
pub use perft::{PerftCase, UNREACHABLE, perft_cases};
pub use postgres::{
    PgSchema, fresh_postgres_schema, on_postgres, postgres_configured, postgres_url,
};
pub use process::Server;
pub use requests::*;
pub use wait::*;
