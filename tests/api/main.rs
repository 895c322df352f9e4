//! Black-box tests of the gRPC service: each starts the real server on an
//! ephemeral loopback port with a temporary SQLite file and talks to it with
//! a real tonic client. Set `TEST_LOG=1` to see the server's logs.
//!
//! Most modules run the server in this process (`plylog_testkit::TestServer`);
//! `cli`, `connections`, `crash` and `telemetry` run the real `plylog`
//! binary as a child process (`plylog_testkit::Server`, or the build that
//! `PLYLOG_BIN` names).

/// Clocks and timeouts on a test clock, resign, abort, draw offers,
/// takebacks by consent and redo.
mod around;
/// Bot seats, SuggestMove and AnalyzePosition.
mod bots;
/// Chess: real games in SAN, perft through the API, endings, draw claims
/// and refusals.
mod chess;
/// The binary's start-up log and how it fails to open a database.
mod cli;
/// Reply compression above a threshold, gRPC and Connect.
mod compression;
/// The Connect protocol: JSON and binary over HTTP/1.1 and HTTP/2.
mod connect;
/// The connection layer under attack: idle, half-open and never-reading
/// clients, the connection limit, running out of file descriptors.
mod connections;
/// Nothing acknowledged is lost across SIGKILLs and SIGTERMs.
mod crash;
/// CreateGame, ListGames and every creation rejection.
mod create;
/// Seat tokens and the CreateGame API key.
mod credentials;
/// StreamAllEvents: every game's events in commit order from a
/// checkpoint, filters, checkpoints, refusals.
mod feed;
/// 100,000 random and malformed requests.
mod fuzz;
/// Exactly-once moves, turn tokens, deadlines, overload, stream resumption
/// under concurrency.
mod guarantees;
/// Restarts on the same file, idle eviction, shutdown.
mod lifecycle;
/// Request size, open streams and games in memory are bounded.
mod limits;
/// Labels, and ListGames' filter against an in-memory filter.
mod listing;
/// SubmitMove, ListLegalMoves and every move rejection.
mod moves;
/// Prometheus metrics after a scripted game.
mod observability;
/// Health and reflection, as grpcurl uses them.
mod operations;
/// Pascal Pons' Connect Four test sets, played move by move.
mod pons;
/// GetGame at past sequences and GetReplay.
mod replay;
/// Snakes and ladders: seeded dice through the API.
mod snakes;
/// Snapshots: used by cold loads and past views, never changing an answer.
mod snapshots;
/// StreamEvents: history, caught-up, live, heartbeats, no gaps or duplicates.
mod stream;
/// Traces reach an OTLP collector; JSON logs carry the call's fields.
mod telemetry;
/// TLS from a certificate and key.
mod tls;
/// Undo and its rejection.
mod undo;
/// grpc-web (binary and text, unary and streams) over HTTP/1.1, CORS, and
/// the dashboard's files.
mod web;

/// Says which backend the suite runs on, so a run without PostgreSQL says
/// the Postgres run was skipped.
#[test]
fn backend() {
    if plylog_testkit::on_postgres() {
        println!("black-box suite on PostgreSQL (a fresh schema per server)");
    } else {
        println!(
            "black-box suite on SQLite; its PostgreSQL run is skipped (set PLYLOG_TEST_BACKEND=postgres)"
        );
    }
}
