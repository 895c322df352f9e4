//! The binary as an operator meets it: what it logs when it starts, and how
//! it fails when its database cannot be opened.

use std::process::Stdio;
use std::time::Duration;

use plylog_testkit::process;
use process::{Server, output_within, plylog};

#[test]
fn startup_logs_name_the_address_backend_database_tls_durability_and_limits() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plylog.db");
    let url = format!("sqlite://{}", file.display());
    let server = Server::start(
        |port| {
            let mut command = plylog();
            command
                .args(["--listen", &format!("127.0.0.1:{port}")])
                .args(["--database-url", &url])
                .args(["--max-connections", "123", "--max-live-memory-mb", "77"]);
            command
        },
        0,
    );
    let starting = server.log_lines("plylog starting");
    let [line] = starting.as_slice() else {
        panic!("one startup line: {starting:?}")
    };
    for expected in [
        "backend=\"SQLite\"".to_owned(),
        format!("database={url}"),
        "durability=journal_mode=wal,synchronous=FULL".to_owned(),
        "tls=\"off\"".to_owned(),
        "max_connections=123".to_owned(),
        "max_live_memory_mb=77".to_owned(),
        "max_in_flight=4096".to_owned(),
    ] {
        assert!(line.contains(&expected), "{expected} missing from: {line}");
    }
    assert_eq!(
        server
            .log_lines(&format!("plylog serving addr=127.0.0.1:{}", server.port))
            .len(),
        1
    );
    server.kill();
}

/// Runs the binary with `args` until it exits (at most 30 s); its exit
/// success and everything it printed.
fn run_to_exit(args: &[&str]) -> (bool, String) {
    let child = plylog()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let output = output_within(child, Duration::from_secs(30), "plylog");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

#[test]
fn a_sqlite_file_that_cannot_be_opened_is_named_in_the_error() {
    let (ok, output) = run_to_exit(&[
        "--listen",
        "127.0.0.1:0",
        "--database-url",
        "/nonexistent-plylog-dir/games.db",
    ]);
    assert!(!ok, "{output}");
    assert!(
        output.contains("opening the SQLite store /nonexistent-plylog-dir/games.db"),
        "{output}"
    );
    assert!(output.contains("unable to open database file"), "{output}");
}

#[test]
fn a_postgres_password_never_reaches_the_log() {
    // Nothing listens on port 1: the connection fails, and the error names
    // the database without its password.
    let (ok, output) = run_to_exit(&[
        "--listen",
        "127.0.0.1:0",
        "--database-url",
        "postgres://plylog:hunter2-secret@127.0.0.1:1/plylog",
        "--no-seat-tokens",
    ]);
    assert!(!ok, "{output}");
    assert!(
        output.contains("postgres://plylog:***@127.0.0.1:1/plylog"),
        "{output}"
    );
    assert!(!output.contains("hunter2-secret"), "{output}");
}

/// `plylog bench ARGS` runs the plylog-bench binary beside plylog with the
/// same arguments and exits as it exits; without it, it fails with one
/// line naming the command that builds it. Stand-ins play plylog-bench:
/// echo (prints its arguments, exits 0) and false (exits 1).
#[cfg(unix)]
#[test]
fn plylog_bench_runs_the_binary_beside_it_and_exits_as_it_does() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let binary = dir.path().join("plylog");
    if std::fs::hard_link(process::binary(), &binary).is_err() {
        std::fs::copy(process::binary(), &binary).unwrap();
    }
    let bench = || {
        std::process::Command::new(&binary)
            .args([
                "bench",
                "play",
                "--url",
                "http://127.0.0.1:1",
                "--secs",
                "1",
            ])
            .output()
            .unwrap()
    };
    let missing = bench();
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("cargo build -p plylog-bench"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");

    let stand_in = dir.path().join("plylog-bench");
    std::os::unix::fs::symlink("/bin/echo", &stand_in).unwrap();
    let echoed = bench();
    assert!(echoed.status.success());
    assert_eq!(
        String::from_utf8_lossy(&echoed.stdout),
        "play --url http://127.0.0.1:1 --secs 1\n"
    );
    std::fs::remove_file(&stand_in).unwrap();
    std::os::unix::fs::symlink("/bin/false", &stand_in).unwrap();
    assert_eq!(bench().status.code(), Some(1));
}
