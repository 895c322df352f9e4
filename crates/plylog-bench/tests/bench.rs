//! `plylog bench` as the real binary (`plylog-bench`, which `plylog bench`
//! runs): each mode runs briefly against a real server (the real
//! [`Application`], started by the test in its process, or in process by
//! `bench cold` itself) and must exit 0 with its report. No figure is
//! checked: a test is not a benchmark. That `plylog bench` runs this
//! binary is tested with the `plylog` binary (tests/cli.rs at the root).

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::Duration;

use plylog::api::auth::AccessSettings;
use plylog::app::{Application, Settings};
use plylog_testkit::optional;
use plylog_testkit::postgres::{fresh_postgres_schema, postgres_configured};
use plylog_testkit::process::output_within;
use tokio::runtime::Runtime;
use tokio::sync::oneshot;

/// Runs `plylog bench` with `args` until it exits (at most 60 s): its exit
/// success, standard output and standard error.
fn bench(args: &[&str]) -> (bool, String, String) {
    let child = Command::new(env!("CARGO_BIN_EXE_plylog-bench"))
        .env("RUST_LOG", "info")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("plylog-bench starts");
    let output = output_within(
        child,
        Duration::from_secs(60),
        &format!("plylog bench {args:?}"),
    );
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    println!("{stdout}{stderr}");
    (output.status.success(), stdout, stderr)
}

/// A server serving on a runtime of its own until [`Server::kill`] (or
/// drop), which ends it at once.
struct Server {
    port: u16,
    _stop: oneshot::Sender<()>,
    _runtime: Runtime,
}

impl Server {
    /// Ends the server: its runtime stops with it.
    fn kill(self) {}
}

/// `plylog serve` on a fresh SQLite file, with seat tokens (the default).
fn server(dir: &tempfile::TempDir) -> Server {
    server_on(
        format!("sqlite://{}", dir.path().join("plylog.db").display()),
        true,
    )
}

/// `plylog serve` on the database at `url`, with seat tokens or without
/// (nodes of a cluster would need a shared secret for them).
fn server_on(url: String, seat_tokens: bool) -> Server {
    let runtime = Runtime::new().expect("a runtime");
    let settings = Settings {
        access: AccessSettings {
            seat_tokens,
            ..AccessSettings::default()
        },
        ..Settings::new(SocketAddr::from(([127, 0, 0, 1], 0)), url)
    };
    let app = runtime
        .block_on(Application::build(settings))
        .expect("the server starts");
    let port = app.local_addr().port();
    let (stop, stopped) = oneshot::channel::<()>();
    runtime.spawn(app.run_until(async {
        let _ = stopped.await;
    }));
    Server {
        port,
        _stop: stop,
        _runtime: runtime,
    }
}

/// `bench play` against `url` with `slots` slots for one second, no
/// warm-up, and `more` arguments.
fn play_a_second(url: &str, slots: &str, more: &[&str]) -> (bool, String, String) {
    let args = [
        &[
            "play",
            "--url",
            url,
            "--secs",
            "1",
            "--warmup-secs",
            "0",
            "--slots",
            slots,
        ][..],
        more,
    ]
    .concat();
    bench(&args)
}

#[test]
fn bench_play_measures_the_server_and_the_no_op_handler_and_prints_their_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(&dir);
    let url = format!("http://127.0.0.1:{}", server.port);
    let (ok, stdout, stderr) = play_a_second(&url, "2", &["--seed", "7", "--request-ids"]);
    assert!(ok, "exit 0: {stderr}");
    assert!(stdout.contains("seed 7"), "the seed is printed: {stdout}");
    for row in ["plylog SubmitMove", "no-op Health/Check", "load average"] {
        assert!(stdout.contains(row), "{row} in: {stdout}");
    }
    let ratio = stdout
        .lines()
        .find_map(|line| line.strip_prefix("ratio plylog / no-op (calls/s): "))
        .expect("a ratio line");
    assert!(ratio.parse::<f64>().is_ok_and(|r| r > 0.0), "{ratio}");
    assert!(!stdout.contains(": error "), "no call failed: {stdout}");
    server.kill();
}

#[test]
fn bench_play_json_is_one_object_with_both_targets() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(&dir);
    let url = format!("http://127.0.0.1:{}", server.port);
    let (ok, stdout, stderr) = play_a_second(&url, "1", &["--json"]);
    assert!(ok, "exit 0: {stderr}");
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert_eq!(report["targets"].as_array().map(Vec::len), Some(2));
    assert!(
        report["ratio"].as_f64().is_some_and(|r| r > 0.0),
        "{report}"
    );
    assert!(report["seed"].is_u64());
    server.kill();
}

#[test]
fn bench_play_with_a_feed_reader_measures_twice_and_says_the_reader_caught_up() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(&dir);
    let url = format!("http://127.0.0.1:{}", server.port);
    let (ok, stdout, stderr) =
        play_a_second(&url, "4", &["--feed-reader", "--no-baseline", "--json"]);
    assert!(ok, "exit 0: {stderr}");
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    let targets = report["targets"].as_array().expect("targets");
    assert_eq!(targets[1]["target"], "plylog, feed reader", "{report}");
    let reader = &report["feedReader"];
    // Every event of the second run (4 slots, a game created per slot at
    // least, and its moves) came to the reader, and it reached the end.
    assert!(
        reader["events"].as_u64().is_some_and(|n| n >= 8),
        "{report}"
    );
    assert!(reader["caughtUpAfterMs"].as_f64().is_some(), "{report}");
    server.kill();
}

#[test]
fn bench_play_against_nothing_fails_with_one_line() {
    let (ok, _, stderr) = bench(&["play", "--url", "http://127.0.0.1:1", "--secs", "1"]);
    assert!(!ok);
    assert!(
        stderr.starts_with("plylog: connecting to http://127.0.0.1:1"),
        "{stderr}"
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
}

#[test]
fn bench_replay_reads_the_whole_replay_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(&dir);
    let url = format!("http://127.0.0.1:{}", server.port);
    let (ok, stdout, stderr) = bench(&[
        "replay", "--url", &url, "--moves", "30", "--rows", "10", "--cols", "10", "--rounds", "2",
    ]);
    assert!(ok, "exit 0: {stderr}");
    // 30 moves and the creation: 31 steps, one page each way.
    for line in [
        "one 10x10 k=5 game of 30 moves",
        "every position: 31 steps in 1 page of ",
        "events only: 31 steps in 1 page of ",
        "(median of 2)",
    ] {
        assert!(stdout.contains(line), "{line} in: {stdout}");
    }
    let bytes = |label: &str| -> usize {
        let line = stdout.lines().find(|l| l.starts_with(label)).unwrap();
        let after = line.split(" page of ").nth(1).unwrap();
        after.split(' ').next().unwrap().parse().unwrap()
    };
    assert!(
        bytes("events only") < bytes("every position"),
        "events only is smaller: {stdout}"
    );
    server.kill();
}

#[test]
fn bench_follow_delivers_every_move_to_every_follower() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(&dir);
    let url = format!("http://127.0.0.1:{}", server.port);
    let (ok, stdout, stderr) = bench(&[
        "follow",
        "--url",
        &url,
        "--followers",
        "5",
        "--streams-per-connection",
        "2",
        "--moves",
        "10",
        "--rows",
        "10",
        "--cols",
        "10",
        "--interval-ms",
        "1",
    ]);
    assert!(ok, "exit 0: {stderr}");
    for line in [
        "5 followers on 3 connections",
        "followers caught up: 5 of 5",
        "events delivered: 50 of 50",
        "0 out of order",
        "follower latency after the writer's ack, ms: p50 ",
        "writer's SubmitMove, ms: p50 ",
    ] {
        assert!(stdout.contains(line), "{line} in: {stdout}");
    }
    server.kill();
}

#[test]
fn bench_cold_fills_games_restarts_and_loads_each_one() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("cold.db").display());
    let (ok, stdout, stderr) = bench(&[
        "cold",
        "--database-url",
        &url,
        "--games",
        "2",
        "--moves",
        "25",
        "--rows",
        "5",
        "--cols",
        "5",
    ]);
    assert!(ok, "exit 0: {stderr}");
    for line in [
        "2 games of 25 moves on 5x5 k=5",
        "first GetGame after a restart (cold), ms: p50 ",
        "(2 samples)",
        "second GetGame (warm), ms: p50 ",
        "cold / warm (p50): ",
    ] {
        assert!(stdout.contains(line), "{line} in: {stdout}");
    }
}

#[test]
fn bench_forward_reads_each_game_through_its_owner_and_through_the_other_node() {
    // Two nodes need one PostgreSQL: skipped without it, failed without it
    // when PLYLOG_REQUIRE_POSTGRES=1.
    let available = optional::availability(
        "bench forward",
        postgres_configured(),
        "PLYLOG_REQUIRE_POSTGRES",
        "no PostgreSQL is configured: set DATABASE_URL=postgres://... to run it",
    )
    .unwrap();
    if !available {
        return;
    }
    let schema = Runtime::new().unwrap().block_on(fresh_postgres_schema());
    let (a, b) = (
        server_on(schema.url.clone(), false),
        server_on(schema.url.clone(), false),
    );
    let (ok, stdout, stderr) = bench(&[
        "forward",
        "--url",
        &format!("http://127.0.0.1:{}", a.port),
        "--via",
        &format!("http://127.0.0.1:{}", b.port),
        "--games",
        "10",
        "--rounds",
        "2",
    ]);
    assert!(ok, "exit 0: {stderr}");
    // Each of 10 games read twice through each node: one of the two runs
    // it, the other passes the call on (a pair read while its slot moved
    // from one node to the other is left out).
    for line in ["10 games created through ", "added by one hop: p50 "] {
        assert!(stdout.contains(line), "{line} in: {stdout}");
    }
    let calls = |label: &str| -> usize {
        let line = stdout.lines().find(|l| l.starts_with(label)).unwrap();
        line[label.len()..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let served = calls("served by the owner: ");
    assert!(served > 0 && served <= 20, "{stdout}");
    assert_eq!(calls("passed on to the owner: "), served, "{stdout}");
    a.kill();
    b.kill();
}

#[test]
fn bench_forward_through_one_node_twice_fails_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(&dir);
    let url = format!("http://127.0.0.1:{}", server.port);
    let (ok, _, stderr) = bench(&[
        "forward", "--url", &url, "--via", &url, "--games", "2", "--rounds", "1",
    ]);
    assert!(!ok);
    assert!(stderr.contains("no call was passed on"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    server.kill();
}
