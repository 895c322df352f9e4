//! The matchmaker killed mid-run and started again rates each finished
//! game exactly once: against a real plylog server (in this process, on
//! SQLite or, with `PLYLOG_TEST_BACKEND=postgres`, PostgreSQL), the real
//! matchmaker binary is SIGKILLed once it has rated a few games, then run
//! again on the same ledger to the end.

use std::path::Path;
use std::time::Duration;

use plylog::proto as pb;
use plylog_testkit::TestServer;
use rusqlite::Connection;
use skillratings::Outcomes;
use skillratings::glicko2::{Glicko2Config, Glicko2Rating, glicko2};
use tokio_stream::StreamExt;

const GAMES: u64 = 24;
const QUEUE: &str = "restart";

fn matchmaker(server: &TestServer, ledger: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_matchmaker"));
    command
        .args(["--plylog", &format!("http://{}", server.addr)])
        .arg("--ledger")
        .arg(ledger)
        .args([
            "--queue",
            QUEUE,
            "--players",
            "6",
            "--games",
            &GAMES.to_string(),
        ])
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true);
    command
}

/// Rows of the ledger's `rated` table (0 while it does not exist yet).
fn rated(ledger: &Path) -> u64 {
    Connection::open(ledger)
        .and_then(|c| c.query_row("SELECT count(*) FROM rated", [], |r| r.get(0)))
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_matchmaker_killed_mid_run_rates_each_finished_game_exactly_once() {
    let server = TestServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.db");
    // A crash right after the fifth rating commits, before anything else.
    let crashed = tokio::time::timeout(
        Duration::from_secs(120),
        matchmaker(&server, &ledger)
            .args(["--crash-after-rating", "5"])
            .status(),
    )
    .await
    .expect("the first run crashes within 120 s")
    .expect("it runs");
    assert!(!crashed.success());
    assert_eq!(rated(&ledger), 5);
    // Then a SIGKILL anywhere once 5 more are rated.
    let mut second = matchmaker(&server, &ledger)
        .spawn()
        .expect("the matchmaker starts");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    while rated(&ledger) < 10 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no 10 games rated in 120 s"
        );
        assert!(
            second.try_wait().unwrap().is_none(),
            "the matchmaker ended early"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    second.kill().await.expect("SIGKILL");
    let killed_at = rated(&ledger);
    assert!(killed_at < GAMES, "killed after the last game");
    let again = tokio::time::timeout(
        Duration::from_secs(300),
        matchmaker(&server, &ledger).status(),
    )
    .await
    .expect("the restarted matchmaker finishes within 300 s")
    .expect("it runs");
    assert!(again.success(), "{again:?}");

    // plylog has exactly the games paired: a creation retried after the
    // kill found its game, never made a second.
    let mut client = server.client.clone();
    let games = client
        .list_games(pb::ListGamesRequest {
            filter: format!("labels.queue = \"{QUEUE}\""),
            page_size: 1000,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .games;
    assert_eq!(games.len() as u64, GAMES);
    assert!(
        games
            .iter()
            .all(|g| g.status() != pb::GameStatus::InProgress)
    );

    // Each game rated once, and the ratings are those of rating each end
    // once, in the feed's order, from the start.
    let conn = Connection::open(&ledger).unwrap();
    let count: u64 = conn
        .query_row("SELECT count(*) FROM rated", [], |r| r.get(0))
        .unwrap();
    assert_eq!(count, GAMES, "killed after {killed_at}");
    let request = pb::StreamAllEventsRequest {
        lifecycle_only: true,
        filter: format!("labels.queue = \"{QUEUE}\""),
        ..Default::default()
    };
    let mut feed = client
        .stream_all_events(request)
        .await
        .unwrap()
        .into_inner();
    let mut expected: std::collections::BTreeMap<String, (Glicko2Rating, u32)> = Default::default();
    let mut ends = 0;
    while let Some(message) = feed.next().await {
        let Some(pb::stream_all_events_response::Kind::Event(event)) = message.unwrap().kind else {
            continue;
        };
        if event.lifecycle() != pb::Lifecycle::Ended {
            continue;
        }
        ends += 1;
        let outcome = match event.outcome.and_then(|o| o.kind) {
            Some(pb::outcome::Kind::Win(win)) if win.seat == 0 => Outcomes::WIN,
            Some(pb::outcome::Kind::Win(_)) => Outcomes::LOSS,
            Some(pb::outcome::Kind::Draw(_)) => Outcomes::DRAW,
            _ => continue,
        };
        let [a, b] = [&event.player_ids[0], &event.player_ids[1]].map(|p| {
            expected
                .get(p)
                .copied()
                .unwrap_or((Glicko2Rating::new(), 0))
        });
        let (ra, rb) = glicko2(&a.0, &b.0, &outcome, &Glicko2Config::new());
        expected.insert(event.player_ids[0].clone(), (ra, a.1 + 1));
        expected.insert(event.player_ids[1].clone(), (rb, b.1 + 1));
    }
    assert_eq!(ends, GAMES);
    let mut query = conn
        .prepare("SELECT player_id, rating, deviation, volatility, games FROM players")
        .unwrap();
    let stored: Vec<(String, f64, f64, f64, u32)> = query
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (player, rating, deviation, volatility, rated_games) in stored {
        let (want, games) = expected
            .get(&player)
            .copied()
            .unwrap_or((Glicko2Rating::new(), 0));
        assert_eq!(
            (rating, deviation, volatility, rated_games),
            (want.rating, want.deviation, want.volatility, games),
            "{player} (killed after {killed_at} games rated)"
        );
    }
}
