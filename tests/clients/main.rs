//! plylog as its clients meet it: the Python client example against the
//! real binary (`python_client::...`, in `python_client.rs`), the
//! TypeScript client package packed, installed and played with over
//! Connect, grpc-web and gRPC (`node_client::...`, in `node_client.rs`),
//! the Python client package's wheel built, installed and played with over
//! gRPC and Connect (`python_package::...`, in `python_package.rs`),
//! the chess rules against python-chess (`chess_oracle::...`), the
//! dashboard in a headless Chromium (`browser::...`, in `browser.rs`), and
//! the docs' examples, links and generated references (`docs::...`, in
//! `docs.rs`).
//!
//! Each suite needs something beyond cargo (a Python with gRPC packages,
//! Node and npm, Chromium and ChromeDriver): without it its tests are
//! listed as ignored with the reason printed, and with
//! `PLYLOG_REQUIRE_PYTHON=1`, `PLYLOG_REQUIRE_NODE=1` or
//! `PLYLOG_REQUIRE_BROWSER=1` (as in `.ci/run`) they fail instead. Runs on
//! libtest-mimic (`harness = false`), which takes at most one filter:
//! `cargo test --test clients browser`.

use std::process::ExitCode;

use libtest_mimic::Arguments;

/// The dashboard in a real browser.
mod browser;
/// The chess rules against python-chess.
mod chess_oracle;
/// The docs: examples run, links followed, references regenerated.
mod docs;
/// The TypeScript client package (docs/guide/clients.md).
mod node_client;
/// The Python client example (docs/guide/clients.md).
mod python_client;
/// The Python client package (clients/python): built, installed, played.
mod python_package;

fn main() -> ExitCode {
    let args = Arguments::from_args();
    let mut tests = python_client::trials();
    tests.extend(node_client::trials());
    tests.extend(python_package::trials());
    tests.extend(browser::trials());
    tests.extend(chess_oracle::trials());
    tests.extend(docs::trials());
    libtest_mimic::run(&args, tests).exit_code()
}
