//! The Python client example (examples/python/error_details.py, in
//! docs/guide/clients.md) run
//! against the real binary: a client reads the ErrorInfo reason of a
//! refused move with grpcio-status.
//!
//! Needs a Python with the packages of examples/python/requirements.txt:
//! `PLYLOG_PYTHON` names it, or `.venv/bin/python` in the repository is used
//! when it has them. Without one the test is listed as ignored with the
//! reason printed; with `PLYLOG_REQUIRE_PYTHON=1` (as in `.ci/run`) that
//! fails it instead.

use std::path::PathBuf;
use std::process::Command;

use libtest_mimic::Trial;

use plylog_testkit::optional;
use plylog_testkit::process;
use process::Server;

/// The Python to run the example with, if one has its packages.
fn python() -> Option<PathBuf> {
    python_with("grpc, grpc_status, grpc_tools")
}

/// `PLYLOG_PYTHON`, or else the repository's `.venv/bin/python`, if it can
/// import `modules` (as an `import` statement lists them).
pub(crate) fn python_with(modules: &str) -> Option<PathBuf> {
    let candidate = std::env::var_os("PLYLOG_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python"));
    Command::new(&candidate)
        .args(["-c", &format!("import {modules}")])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|_| candidate)
}

/// The tests, named `python_client::<test>`: ignored (or failed, as
/// `PLYLOG_REQUIRE_*` says) without what they need.
pub(crate) fn trials() -> Vec<Trial> {
    let python = optional::availability(
        "python_client",
        python().is_some(),
        "PLYLOG_REQUIRE_PYTHON",
        "no Python with grpcio, grpcio-status and grpcio-tools: `python3 -m venv .venv && .venv/bin/pip install -r examples/python/requirements.txt`, or set PLYLOG_PYTHON",
    );
    vec![optional::trial(
        "python_client::the_python_example_reads_the_reason_of_a_refused_move",
        &python,
        the_python_example_reads_the_reason_of_a_refused_move,
    )]
}

async fn the_python_example_reads_the_reason_of_a_refused_move() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::sqlite_in(dir.path());
    let example =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/python/error_details.py");
    let output = Command::new(python().expect("checked by the harness"))
        .arg(example)
        .arg(format!("127.0.0.1:{}", server.port))
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    // A refused move is the client's business, not an error of the server.
    assert_eq!(server.log_lines("ERROR"), Vec::<String>::new());
    server.kill();
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for expected in [
        "code: FAILED_PRECONDITION",
        "message: cell (1, 1) is occupied",
        "domain: plylog.v1",
        "reason: CELL_OCCUPIED",
        "enum value: 7",
    ] {
        assert!(
            stdout.contains(expected),
            "{expected} missing from:\n{stdout}"
        );
    }
}
