//! One owner per game: slot leases in PostgreSQL, fencing, forwarding and
//! handoff, with real servers on one fresh schema (in this process, or the
//! real binary where a node must die by SIGKILL). Named `cluster::<test>`;
//! ignored (or failed, with `PLYLOG_REQUIRE_POSTGRES=1`) without
//! PostgreSQL.

use std::collections::HashSet;
use std::time::Duration;

use libtest_mimic::Trial;
use plylog::api::auth::AccessSettings;
use plylog::app::{ClusterSettings, Settings};
use plylog::metrics::Sample;
use plylog::proto::{self as pb};
use plylog::registry::ownership::slot_of;
use plylog::registry::{Registry, RegistrySettings};
use rand::{Rng, SeedableRng};
use sqlx::{Connection, PgConnection};
use tonic::Code;

use plylog_testkit::optional::{self, trial};
use plylog_testkit::postgres::{fresh_postgres_schema, postgres_configured};
use plylog_testkit::process::{Server, plylog};
use plylog_testkit::wait::{wait_for, wait_until};
use plylog_testkit::{
    App, connect, create_from, create_mnk, metadata, place, plain_move_request, reason, seed,
    spawn_app, timed_tic_tac_toe,
};

/// The slot count the first migration fixes.
const SLOTS: u32 = 1024;

/// The cluster tests.
pub(crate) fn trials() -> Vec<Trial> {
    let postgres = optional::availability(
        "cluster",
        postgres_configured(),
        "PLYLOG_REQUIRE_POSTGRES",
        "no PostgreSQL is configured: set DATABASE_URL=postgres://... (or PLYLOG_TEST_BACKEND=postgres) to run these tests",
    );
    vec![
        trial(
            "cluster::the_server_and_the_database_put_every_game_in_the_same_slot",
            &postgres,
            the_server_and_the_database_put_every_game_in_the_same_slot,
        ),
        trial(
            "cluster::a_node_alone_holds_every_slot_from_its_first_call",
            &postgres,
            a_node_alone_holds_every_slot_from_its_first_call,
        ),
        trial(
            "cluster::two_nodes_divide_the_slots_and_each_game_runs_on_one_of_them",
            &postgres,
            two_nodes_divide_the_slots_and_each_game_runs_on_one_of_them,
        ),
        trial(
            "cluster::an_append_under_a_lease_that_moved_on_is_fenced_and_writes_nothing",
            &postgres,
            an_append_under_a_lease_that_moved_on_is_fenced_and_writes_nothing,
        ),
        trial(
            "cluster::a_graceful_stop_hands_every_slot_to_the_other_node",
            &postgres,
            a_graceful_stop_hands_every_slot_to_the_other_node,
        ),
        trial(
            "cluster::with_redirect_a_call_for_another_nodes_game_names_its_owner",
            &postgres,
            with_redirect_a_call_for_another_nodes_game_names_its_owner,
        ),
        trial(
            "cluster::a_killed_nodes_games_time_out_once_on_the_node_that_takes_its_slots",
            &postgres,
            a_killed_nodes_games_time_out_once_on_the_node_that_takes_its_slots,
        ),
        trial(
            "cluster::three_nodes_run_each_game_its_deadline_and_its_bot_once",
            &postgres,
            three_nodes_run_each_game_its_deadline_and_its_bot_once,
        ),
        trial(
            "cluster::a_stream_passed_on_counts_in_the_passing_nodes_max_streams",
            &postgres,
            a_stream_passed_on_counts_in_the_passing_nodes_max_streams,
        ),
        trial(
            "cluster::a_node_restarted_under_its_name_takes_its_slots_back_at_once",
            &postgres,
            a_node_restarted_under_its_name_takes_its_slots_back_at_once,
        ),
        trial(
            "cluster::two_cells_keep_each_game_in_its_slots_cell_and_list_them_all_once",
            &postgres,
            two_cells_keep_each_game_in_its_slots_cell_and_list_them_all_once,
        ),
    ]
}

/// A node on `url` with leases of `lease`, redirecting when `redirect`.
async fn node(url: &str, lease: Duration, redirect: bool) -> App {
    node_with(url, lease, redirect, RegistrySettings::default()).await
}

/// [`node`] with `registry` settings.
async fn node_with(url: &str, lease: Duration, redirect: bool, registry: RegistrySettings) -> App {
    node_on(&[url], lease, redirect, registry).await
}

/// [`node_with`] on the cells `urls` (cell 0 first).
async fn node_on(
    urls: &[&str],
    lease: Duration,
    redirect: bool,
    registry: RegistrySettings,
) -> App {
    let settings = Settings {
        cell_urls: urls[1..].iter().map(|u| (*u).to_owned()).collect(),
        postgres_connections: 4,
        registry: RegistrySettings {
            heartbeat_interval: Duration::from_millis(200),
            ..registry
        },
        shutdown_grace: Duration::from_secs(1),
        access: AccessSettings {
            seat_tokens: false,
            ..AccessSettings::default()
        },
        cluster: ClusterSettings {
            lease,
            redirect,
            ..ClusterSettings::default()
        },
        ..Settings::new("127.0.0.1:0".parse().unwrap(), urls[0])
    };
    spawn_app(settings).await
}

/// A metric's value from `registry`'s metrics (0 when it has no sample).
fn metric(registry: &Registry, name: &str) -> f64 {
    registry
        .metrics()
        .encode(Sample::default())
        .lines()
        .filter(|line| line.starts_with(name))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

async fn database(url: &str) -> PgConnection {
    PgConnection::connect(url)
        .await
        .expect("the test schema answers")
}

async fn the_server_and_the_database_put_every_game_in_the_same_slot() {
    let seed = seed::seed("the_server_and_the_database_put_every_game_in_the_same_slot");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let schema = fresh_postgres_schema().await;
    // The migrations make the function.
    let app = node(&schema.url, Duration::from_secs(6), false).await;
    let mut db = database(&schema.url).await;
    let alphabet: Vec<char> = "ABCxyz0189._~-é".chars().collect();
    for n in 0..2_000 {
        let len = rng.random_range(1..=40);
        let id: String = (0..len)
            .map(|_| alphabet[rng.random_range(0..alphabet.len())])
            .collect();
        let slots = if n % 2 == 0 { SLOTS } else { 7 };
        let stored: i32 = sqlx::query_scalar("SELECT plylog_slot($1, $2)")
            .bind(&id)
            .bind(slots as i32)
            .fetch_one(&mut db)
            .await
            .unwrap();
        assert_eq!(stored as u32, slot_of(&id, slots), "game id {id:?}");
    }
    // And the row of a created game holds it.
    let mut client = connect(app.addr.port()).await;
    client
        .create_game(create_mnk("slotted", 3, 3, 3))
        .await
        .unwrap();
    let stored: i32 = sqlx::query_scalar("SELECT slot FROM games WHERE game_id = 'slotted'")
        .fetch_one(&mut db)
        .await
        .unwrap();
    assert_eq!(stored as u32, slot_of("slotted", SLOTS));
    println!("2,000 random ids: the same slot in Rust and in SQL");
}

async fn a_node_alone_holds_every_slot_from_its_first_call() {
    let schema = fresh_postgres_schema().await;
    let app = node(&schema.url, Duration::from_secs(6), false).await;
    assert_eq!(app.registry.served_slot_count(), SLOTS as usize);
    let mut client = connect(app.addr.port()).await;
    client
        .create_game(create_mnk("alone", 3, 3, 3))
        .await
        .unwrap();
    client
        .submit_move(plain_move_request("alone", 0, place(1, 1)))
        .await
        .expect("the only node runs every game");
    assert!(app.registry.is_live("alone"));
    assert_eq!(metric(&app.registry, "plylog_forwarded_calls"), 0.0);
    assert_eq!(metric(&app.registry, "plylog_slots_owned"), SLOTS as f64);
}

/// Waits until the nodes' held slots add up to every slot, each node
/// holding some; returns how many each holds.
async fn settled(apps: &[&App]) -> Vec<usize> {
    wait_for(
        "the slots divided between the nodes",
        Duration::from_secs(30),
        Duration::from_millis(20),
        async || {
            let held: Vec<usize> = apps
                .iter()
                .map(|a| a.registry.served_slot_count())
                .collect();
            (held.iter().sum::<usize>() == SLOTS as usize && held.iter().all(|h| *h > 0))
                .then_some(held)
        },
    )
    .await
}

async fn two_nodes_divide_the_slots_and_each_game_runs_on_one_of_them() {
    let schema = fresh_postgres_schema().await;
    let lease = Duration::from_millis(1_500);
    let a = node(&schema.url, lease, false).await;
    let b = node(&schema.url, lease, false).await;
    let held = settled(&[&a, &b]).await;
    // Rendezvous hashing: each slot a coin toss between the two nodes
    // (1024 tosses: 512 ± 5 × 16, which random ports miss about once in
    // two million runs).
    for h in &held {
        assert!((432..=592).contains(h), "slots held {held:?}");
    }
    let nodes = [connect(a.addr.port()).await, connect(b.addr.port()).await];
    let mut owners = HashSet::new();
    for g in 0..32usize {
        let mut via = nodes[g % 2].clone();
        let request = if g % 4 < 2 {
            create_mnk(&format!("named-{g}"), 3, 3, 3)
        } else {
            create_mnk("", 3, 3, 3)
        };
        let game = create_from(&mut via, request).await;
        // Every move through the other node.
        let mut other = nodes[(g + 1) % 2].clone();
        for (seat, (row, col)) in [(0, (0, 0)), (1, (1, 1)), (0, (2, 2))] {
            let reply = other
                .submit_move(plain_move_request(&game.game_id, seat, place(row, col)))
                .await
                .expect("a move through either node");
            if let Some(owner) = reply.metadata().get("plylog-owner") {
                owners.insert(owner.to_str().unwrap().to_owned());
            }
        }
        let live: Vec<bool> = [&a, &b]
            .iter()
            .map(|app| app.registry.is_live(&game.game_id))
            .collect();
        assert_eq!(
            live.iter().filter(|l| **l).count(),
            1,
            "game {} in memory on exactly one node: {live:?}",
            game.game_id
        );
    }
    // A move passed on came back naming the node that ran it.
    let addresses: HashSet<String> = [&a, &b].iter().map(|a| a.addr.to_string()).collect();
    assert!(
        !owners.is_empty() && owners.is_subset(&addresses),
        "{owners:?}"
    );
    let forwarded = metric(&a.registry, "plylog_forwarded_calls")
        + metric(&b.registry, "plylog_forwarded_calls");
    assert!(forwarded > 0.0);
    println!("slots held {held:?}; {forwarded} calls passed on; every game in memory on one node");
}

async fn an_append_under_a_lease_that_moved_on_is_fenced_and_writes_nothing() {
    let schema = fresh_postgres_schema().await;
    let app = node(&schema.url, Duration::from_secs(3), false).await;
    let mut client = connect(app.addr.port()).await;
    client
        .create_game(create_mnk("fenced", 3, 3, 3))
        .await
        .unwrap();
    client
        .submit_move(plain_move_request("fenced", 0, place(0, 0)))
        .await
        .unwrap();
    // Another holder took the slot (as after this node paused past its
    // lease), and this node has not heard of it yet.
    let mut db = database(&schema.url).await;
    sqlx::query(
        "UPDATE slot_leases SET epoch = epoch + 1 WHERE slot = plylog_slot('fenced', 1024)",
    )
    .execute(&mut db)
    .await
    .unwrap();
    let mut request = plain_move_request("fenced", 1, place(1, 1));
    request.request_id = "the-fenced-move".into();
    let refused = client
        .submit_move(request.clone())
        .await
        .expect_err("an append under a lease that moved on");
    assert_eq!(refused.code(), Code::Unavailable, "{refused:?}");
    assert_eq!(reason(&refused), "NOT_OWNER");
    let (last, events): (i64, i64) = sqlx::query_as(
        "SELECT (SELECT last_sequence FROM games WHERE game_id = 'fenced'), \
         (SELECT count(*) FROM events WHERE game_id = 'fenced')",
    )
    .fetch_one(&mut db)
    .await
    .unwrap();
    assert_eq!(
        (last, events),
        (2, 2),
        "nothing of the fenced append was written"
    );
    assert_eq!(metric(&app.registry, "plylog_appends_fenced"), 1.0);
    // The node takes the slot again at its next round (it is the only
    // node), and the same request then lands once.
    let reply = wait_for(
        "the slot taken again",
        Duration::from_secs(20),
        Duration::from_millis(50),
        async || client.clone().submit_move(request.clone()).await.ok(),
    )
    .await
    .into_inner();
    assert_eq!(reply.game.unwrap().last_sequence, 3);
    let again = client.submit_move(request).await.unwrap().into_inner();
    assert_eq!(
        again.game.unwrap().last_sequence,
        3,
        "the retry's original reply"
    );
}

async fn a_graceful_stop_hands_every_slot_to_the_other_node() {
    let schema = fresh_postgres_schema().await;
    // A lease far longer than the wait: the other node can only have the
    // slots in time if the stopping node released them.
    let lease = Duration::from_secs(120);
    let a = node(&schema.url, lease, false).await;
    let b = node(&schema.url, Duration::from_millis(1_200), false).await;
    // B joins: A gives up B's share at A's next round (every 20 s with
    // this lease), so B starts with none; A's stop hands over all.
    let mut client = connect(b.addr.port()).await;
    client
        .create_game(create_mnk("handed-over", 3, 3, 3))
        .await
        .unwrap();
    let stopping = std::time::Instant::now();
    a.stop().await;
    wait_until("B holds every slot", Duration::from_secs(10), || {
        b.registry.served_slot_count() == SLOTS as usize
    })
    .await;
    println!(
        "graceful stop: every slot held by the other node {:?} after the stop began",
        stopping.elapsed()
    );
    client
        .submit_move(plain_move_request("handed-over", 0, place(1, 1)))
        .await
        .expect("B runs the game now");
    assert!(b.registry.is_live("handed-over"));
}

async fn with_redirect_a_call_for_another_nodes_game_names_its_owner() {
    let schema = fresh_postgres_schema().await;
    let lease = Duration::from_millis(1_500);
    let a = node(&schema.url, lease, true).await;
    let b = node(&schema.url, lease, false).await;
    settled(&[&a, &b]).await;
    // A game B runs: created through B with B's pick of id.
    let mut via_b = connect(b.addr.port()).await;
    let game = create_from(&mut via_b, create_mnk("", 3, 3, 3)).await;
    assert!(
        b.registry.is_live(&game.game_id),
        "B picks an id in its slots"
    );
    let mut via_a = connect(a.addr.port()).await;
    let refused = via_a
        .submit_move(plain_move_request(&game.game_id, 0, place(0, 0)))
        .await
        .expect_err("A redirects");
    assert_eq!(refused.code(), Code::Unavailable);
    assert_eq!(reason(&refused), "NOT_OWNER");
    assert_eq!(metadata(&refused, "owner"), Some(b.addr.to_string()));
    assert!(!a.registry.is_live(&game.game_id));
}

/// The real binary on `url`, with `more` arguments.
fn binary_node(url: &str, more: &[&str]) -> Server {
    Server::start(
        |port| {
            let mut command = plylog();
            command
                .args(["--listen", &format!("127.0.0.1:{port}")])
                .args(["--database-url", url, "--no-seat-tokens"])
                .args(more);
            command
        },
        0,
    )
}

async fn a_killed_nodes_games_time_out_once_on_the_node_that_takes_its_slots() {
    const GAMES: usize = 24;
    let schema = fresh_postgres_schema().await;
    let lease = ["--slot-lease-ms", "1500"];
    let doomed = binary_node(&schema.url, &lease);
    let survivor = binary_node(&schema.url, &lease);
    let mut via_doomed = connect(doomed.port).await;
    let survivor_client = connect(survivor.port).await;
    let survivor_addr = format!("127.0.0.1:{}", survivor.port);
    // Games the doomed node runs: it picks their ids in its slots.
    wait_for(
        "the doomed node to hold slots",
        Duration::from_secs(30),
        Duration::from_millis(50),
        async || {
            let mut db = database(&schema.url).await;
            let held: i64 = sqlx::query_scalar(
                "SELECT count(DISTINCT node) FROM slot_leases WHERE expires_at > now()",
            )
            .fetch_one(&mut db)
            .await
            .ok()?;
            (held == 2).then_some(())
        },
    )
    .await;
    // Untimed games too: how long after the kill each can be moved again.
    let mut untimed = Vec::new();
    for _ in 0..GAMES {
        let game = create_from(&mut via_doomed, create_mnk("", 3, 3, 3)).await;
        untimed.push(game.game_id);
    }
    let mut ids = Vec::new();
    for _ in 0..GAMES {
        let game = create_from(&mut via_doomed, timed_tic_tac_toe("", 3)).await;
        ids.push(game.game_id);
    }
    let mut db = database(&schema.url).await;
    let on_doomed: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM games g JOIN slot_leases l ON l.slot = g.slot \
         WHERE l.node <> $1",
    )
    .bind(&survivor_addr)
    .fetch_one(&mut db)
    .await
    .unwrap();
    // A follower on the survivor of a game the doomed node runs: its stream
    // is passed on to the doomed node, and must carry on through the
    // survivor once the game moves there, with no gap and no repeat.
    let mut followed = plylog_testkit::follow(&mut survivor_client.clone(), &untimed[0], 1).await;
    let mut seen = Vec::new();
    while seen.is_empty() {
        if let Some(pb::stream_events_response::Kind::Event(event)) =
            plylog_testkit::within(followed.message())
                .await
                .unwrap()
                .unwrap()
                .kind
        {
            seen.push(event.sequence);
        }
    }
    drop(doomed);
    let killed = std::time::Instant::now();
    let mut first_moves = Vec::new();
    for id in &untimed {
        wait_for(
            &format!("{id} to be moved through the survivor"),
            Duration::from_secs(30),
            Duration::from_millis(20),
            async || {
                survivor_client
                    .clone()
                    .submit_move(plain_move_request(id, 0, place(1, 1)))
                    .await
                    .ok()
            },
        )
        .await;
        first_moves.push(killed.elapsed());
    }
    while seen.len() < 2 {
        if let Some(pb::stream_events_response::Kind::Event(event)) =
            plylog_testkit::within(followed.message())
                .await
                .unwrap()
                .unwrap()
                .kind
        {
            seen.push(event.sequence);
        }
    }
    assert_eq!(
        seen,
        [1, 2],
        "the follower's stream carried on through the new owner"
    );
    for id in &ids {
        let game = wait_for(
            &format!("{id} to time out on the survivor"),
            Duration::from_secs(30),
            Duration::from_millis(50),
            async || {
                let game = survivor_client
                    .clone()
                    .get_game(pb::GetGameRequest {
                        game_id: id.clone(),
                        at_sequence: None,
                    })
                    .await
                    .ok()?
                    .into_inner()
                    .game?;
                (game.position.as_ref()?.status == pb::GameStatus::Won as i32).then_some(game)
            },
        )
        .await;
        assert_eq!(
            game.last_sequence, 3,
            "{id}: one TimeExpired, one GameEnded"
        );
    }
    let expired: Vec<(String, i64)> = sqlx::query_as(
        "SELECT game_id, count(*) FROM events WHERE event_type = 'time_expired' \
         GROUP BY game_id",
    )
    .fetch_all(&mut db)
    .await
    .unwrap();
    assert_eq!(expired.len(), GAMES);
    assert!(expired.iter().all(|(_, n)| *n == 1), "{expired:?}");
    println!(
        "{GAMES} timed games, each timed out once on the survivor ({on_doomed} of the {} games were in the killed node's slots); kill -> first acknowledged move of each of {GAMES} untimed games: max {:?} (lease 1.5 s)",
        2 * GAMES,
        first_moves.iter().max().unwrap()
    );
}

async fn a_node_restarted_under_its_name_takes_its_slots_back_at_once() {
    let schema = fresh_postgres_schema().await;
    // With a lease of ten minutes, only taking its own leases back lets the
    // restarted node serve before the test times out.
    let args = ["--slot-lease-ms", "600000", "--node-name", "the-node"];
    let first = binary_node(&schema.url, &args);
    let mut client = connect(first.port).await;
    client
        .create_game(create_mnk("kept", 3, 3, 3))
        .await
        .unwrap();
    drop(first);
    let second = binary_node(&schema.url, &args);
    let mut client = connect(second.port).await;
    client
        .submit_move(plain_move_request("kept", 0, place(1, 1)))
        .await
        .expect("the restarted node runs its games from its first call");
    let mut db = database(&schema.url).await;
    let (nodes, min_epoch, max_epoch): (i64, i64, i64) =
        sqlx::query_as("SELECT count(DISTINCT node), min(epoch), max(epoch) FROM slot_leases")
            .fetch_one(&mut db)
            .await
            .unwrap();
    assert_eq!(
        (nodes, min_epoch, max_epoch),
        (1, 2, 2),
        "every slot taken again, once"
    );
}

/// The figures on three nodes in this process: timed games held in
/// memory over all nodes per timed game, timeout attempts per deadline, bot
/// searches per bot move, the busiest node's share of slots and games, and
/// what passing a call on adds to its latency. Calls go to random nodes.
async fn three_nodes_run_each_game_its_deadline_and_its_bot_once() {
    const TIMED: usize = 48;
    const BOTS: usize = 24;
    let seed = seed::seed("three_nodes_run_each_game_its_deadline_and_its_bot_once");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let schema = fresh_postgres_schema().await;
    let lease = Duration::from_secs(3);
    let apps = [
        node(&schema.url, lease, false).await,
        node(&schema.url, lease, false).await,
        node(&schema.url, lease, false).await,
    ];
    let held = settled(&apps.iter().collect::<Vec<_>>()).await;
    let mut clients = Vec::new();
    for app in &apps {
        clients.push(connect(app.addr.port()).await);
    }
    let any = |rng: &mut rand::rngs::StdRng| clients[rng.random_range(0..3)].clone();
    let mut timed = Vec::new();
    for g in 0..TIMED {
        let id = format!("timed-{g}");
        any(&mut rng)
            .create_game(timed_tic_tac_toe(&id, 2))
            .await
            .unwrap();
        timed.push(id);
    }
    let live: Vec<usize> = apps.iter().map(|a| a.registry.live_games()).collect();
    let held_in_memory: usize = live.iter().sum();
    let mut bots = Vec::new();
    for g in 0..BOTS {
        let id = format!("bot-{g}");
        let mut request = create_mnk(&id, 3, 3, 3);
        request.seats[1].bot = Some(pb::Bot {
            engine: pb::Engine::Random as i32,
            strength: 1,
            seed: Some(g as u64),
        });
        any(&mut rng).create_game(request).await.unwrap();
        any(&mut rng)
            .submit_move(plain_move_request(&id, 0, place(1, 1)))
            .await
            .unwrap();
        bots.push(id);
    }
    let game_of = async |client: &mut plylog_testkit::Client, id: &str| {
        client
            .get_game(pb::GetGameRequest {
                game_id: id.to_owned(),
                at_sequence: None,
            })
            .await
            .ok()
            .and_then(|reply| reply.into_inner().game)
    };
    for id in &bots {
        let mut client = any(&mut rng);
        wait_for(
            &format!("{id}'s bot to move"),
            Duration::from_secs(30),
            Duration::from_millis(20),
            async || {
                game_of(&mut client, id)
                    .await
                    .filter(|g| g.last_sequence >= 3)
            },
        )
        .await;
    }
    for id in &timed {
        let mut client = any(&mut rng);
        wait_for(
            &format!("{id} to time out"),
            Duration::from_secs(30),
            Duration::from_millis(20),
            async || {
                game_of(&mut client, id).await.filter(|g| {
                    g.position.as_ref().map(|p| p.status) == Some(pb::GameStatus::Won as i32)
                })
            },
        )
        .await;
    }
    let total = |name: &str| apps.iter().map(|a| metric(&a.registry, name)).sum::<f64>();
    let attempts = total("plylog_timeout_attempts");
    let searches = total("plylog_bot_searches");
    let mut db = database(&schema.url).await;
    let (expired, bot_moves): (i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM events WHERE event_type = 'time_expired'), \
         (SELECT count(*) FROM events WHERE game_id LIKE 'bot-%' AND sequence = 3)",
    )
    .fetch_one(&mut db)
    .await
    .unwrap();
    assert_eq!(expired as usize, TIMED, "each deadline timed out once");
    assert_eq!(bot_moves as usize, BOTS);
    // Each game in memory on one node at most; each deadline tried once,
    // each bot move searched once.
    assert!(held_in_memory <= TIMED, "{live:?}");
    assert_eq!(attempts, TIMED as f64, "timeout attempts");
    assert_eq!(searches, BOTS as f64, "bot searches");
    let mean = |v: &[usize]| v.iter().sum::<usize>() as f64 / v.len() as f64;
    let busiest = |v: &[usize]| *v.iter().max().unwrap() as f64 / mean(v);

    // What passing a call on adds: GetGame straight to a game's owner and
    // through another node, alternately.
    let (mut direct, mut passed) = (Vec::new(), Vec::new());
    for round in 0..400 {
        let id = &timed[round % TIMED];
        let owner = apps
            .iter()
            .position(|a| {
                a.registry.is_live(id)
                    || matches!(a.registry.route(id), plylog::registry::Route::Local(_))
            })
            .expect("an owner");
        for (target, out) in [(owner, &mut direct), ((owner + 1) % 3, &mut passed)] {
            let mut client = clients[target].clone();
            let started = std::time::Instant::now();
            game_of(&mut client, id).await.expect("answered");
            out.push(started.elapsed());
        }
    }
    direct.sort();
    passed.sort();
    let at = |v: &[Duration], p: f64| v[((v.len() as f64 * p) as usize).min(v.len() - 1)];
    println!(
        "3 nodes: slots {held:?} (busiest / mean {:.2}); timed games in memory over all nodes / timed games {:.2} ({live:?}); timeout attempts per deadline {:.2}; bot searches per bot move {:.2}; GetGame p50 {:?} direct, {:?} passed on; p99 {:?} direct, {:?} passed on",
        busiest(&held),
        held_in_memory as f64 / TIMED as f64,
        attempts / TIMED as f64,
        searches / BOTS as f64,
        at(&direct, 0.5),
        at(&passed, 0.5),
        at(&direct, 0.99),
        at(&passed, 0.99),
    );
}

async fn a_stream_passed_on_counts_in_the_passing_nodes_max_streams() {
    let schema = fresh_postgres_schema().await;
    let lease = Duration::from_secs(3);
    let one_stream = RegistrySettings {
        max_streams: 1,
        ..RegistrySettings::default()
    };
    let a = node_with(&schema.url, lease, false, one_stream).await;
    let b = node(&schema.url, lease, false).await;
    settled(&[&a, &b]).await;
    // Two games B runs (B picks their ids in its slots).
    let mut via_b = connect(b.addr.port()).await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let game = create_from(&mut via_b, create_mnk("", 3, 3, 3)).await;
        ids.push(game.game_id);
    }
    let mut via_a = connect(a.addr.port()).await;
    let mut first = plylog_testkit::follow(&mut via_a, &ids[0], 1).await;
    let opened = plylog_testkit::within(first.message()).await;
    assert!(
        matches!(opened, Ok(Some(_))),
        "the first stream is passed on: {opened:?}"
    );
    let mut second = plylog_testkit::follow(&mut via_a, &ids[1], 1).await;
    let refused = plylog_testkit::within(second.message())
        .await
        .expect_err("A holds one stream at most");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    assert_eq!(reason(&refused), "LIMIT_REACHED");
    drop(first);
}

async fn two_cells_keep_each_game_in_its_slots_cell_and_list_them_all_once() {
    let cells = [fresh_postgres_schema().await, fresh_postgres_schema().await];
    let urls = [cells[0].url.as_str(), cells[1].url.as_str()];
    let lease = Duration::from_millis(1_500);
    let a = node_on(&urls, lease, false, RegistrySettings::default()).await;
    let b = node_on(&urls, lease, false, RegistrySettings::default()).await;
    let held = settled(&[&a, &b]).await;
    let nodes = [connect(a.addr.port()).await, connect(b.addr.port()).await];
    let mut created = Vec::new();
    for g in 0..40usize {
        let mut request = if g % 2 == 0 {
            create_mnk(&format!("named-{g}"), 3, 3, 3)
        } else {
            create_mnk("", 3, 3, 3)
        };
        request.request_id = format!("create-{g}");
        let game = create_from(&mut nodes[g % 2].clone(), request.clone()).await;
        // The same request through the other node: the same game, found in
        // the one cell its request id (or its id) names.
        let again = create_from(&mut nodes[(g + 1) % 2].clone(), request).await;
        assert_eq!(again.game_id, game.game_id, "request create-{g} retried");
        let reply = nodes[(g + 1) % 2]
            .clone()
            .submit_move(plain_move_request(&game.game_id, 0, place(1, 1)))
            .await
            .expect("a move through either node");
        assert_eq!(reply.into_inner().game.unwrap().last_sequence, 2);
        created.push(game.game_id);
    }
    // Each game, its log and its request ids are in its slot's cell only.
    for (cell, schema) in cells.iter().enumerate() {
        let mut conn = database(&schema.url).await;
        let ids: Vec<String> = sqlx::query_scalar("SELECT game_id FROM games")
            .fetch_all(&mut conn)
            .await
            .unwrap();
        let expected: HashSet<&String> = created
            .iter()
            .filter(|id| plylog::store::cell_of_slot(slot_of(id, SLOTS), 2) == cell)
            .collect();
        assert_eq!(ids.iter().collect::<HashSet<_>>(), expected, "cell {cell}");
        assert!(
            !expected.is_empty(),
            "cell {cell} holds some of the 40 games"
        );
        let (cells_recorded, cell_recorded): (i32, i32) =
            sqlx::query_as("SELECT cells, cell FROM cluster_config")
                .fetch_one(&mut conn)
                .await
                .unwrap();
        assert_eq!((cells_recorded, cell_recorded), (2, cell as i32));
    }
    // Paged through in small pages, both orders: every game once.
    for order_by in ["created_at", "created_at desc"] {
        let mut listed = Vec::new();
        let mut token = String::new();
        loop {
            let page = nodes[0]
                .clone()
                .list_games(pb::ListGamesRequest {
                    page_size: 7,
                    page_token: token.clone(),
                    order_by: order_by.to_owned(),
                    filter: String::new(),
                })
                .await
                .expect("a page")
                .into_inner();
            listed.extend(page.games.into_iter().map(|g| g.game_id));
            if page.next_page_token.is_empty() {
                break;
            }
            token = page.next_page_token;
        }
        let mut sorted = listed.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), listed.len(), "{order_by}: listed twice");
        let mut all = created.clone();
        all.sort();
        assert_eq!(sorted, all, "{order_by}: every game listed");
    }
    // The feed: one per cell, each dense from 1 and holding its own games'
    // events (a creation and a move each), ending with a checkpoint of both
    // cells' positions; resuming one position back in cell 0 sends one
    // event.
    let feed = |after: Vec<u64>| {
        let mut node = nodes[1].clone();
        async move {
            let mut stream = node
                .stream_all_events(pb::StreamAllEventsRequest {
                    after,
                    ..Default::default()
                })
                .await
                .expect("the feed")
                .into_inner();
            let mut messages = Vec::new();
            while let Some(message) = stream.message().await.expect("the feed's messages") {
                messages.push(message.kind.expect("a kind"));
            }
            messages
        }
    };
    let messages = feed(Vec::new()).await;
    let mut in_cell = [Vec::new(), Vec::new()];
    for message in &messages {
        if let pb::stream_all_events_response::Kind::Event(e) = message {
            let game = &e.event.as_ref().expect("the event").game_id;
            let cell = plylog::store::cell_of_slot(slot_of(game, SLOTS), 2);
            assert_eq!(e.cell as usize, cell, "{game} in its slot's cell's feed");
            in_cell[cell].push(e.position);
        }
    }
    for (cell, positions) in in_cell.iter().enumerate() {
        assert_eq!(
            *positions,
            (1..=positions.len() as u64).collect::<Vec<_>>(),
            "cell {cell}'s feed"
        );
    }
    assert_eq!(in_cell[0].len() + in_cell[1].len(), 80);
    let ends = [in_cell[0].len() as u64, in_cell[1].len() as u64];
    match messages.last() {
        Some(pb::stream_all_events_response::Kind::Checkpoint(last)) => {
            assert_eq!(
                (last.positions.as_slice(), last.caught_up),
                (&ends[..], true)
            );
        }
        other => panic!("the feed ends with a checkpoint: {other:?}"),
    }
    let resumed = feed(vec![ends[0] - 1, ends[1]]).await;
    let events: Vec<(u32, u64)> = resumed
        .iter()
        .filter_map(|m| match m {
            pb::stream_all_events_response::Kind::Event(e) => Some((e.cell, e.position)),
            pb::stream_all_events_response::Kind::Checkpoint(_) => None,
        })
        .collect();
    assert_eq!(events, [(0, ends[0])]);
    // The operator's commands read every cell.
    let games = plylog()
        .args([
            "games",
            "--database-url",
            urls[0],
            "--database-url",
            urls[1],
        ])
        .output()
        .expect("plylog games runs");
    let listed = String::from_utf8_lossy(&games.stdout);
    assert!(games.status.success(), "{games:?}");
    for id in &created {
        assert!(listed.contains(id.as_str()), "plylog games lists {id}");
    }
    let verify = plylog()
        .args([
            "verify",
            "--database-url",
            urls[0],
            "--database-url",
            urls[1],
        ])
        .output()
        .expect("plylog verify runs");
    assert!(verify.status.success(), "{verify:?}");
    // The cells in another order: refused before anything is served.
    let swapped = Settings {
        cell_urls: vec![urls[0].to_owned()],
        access: AccessSettings {
            seat_tokens: false,
            ..AccessSettings::default()
        },
        ..Settings::new("127.0.0.1:0".parse().unwrap(), urls[1])
    };
    let refused = plylog::app::Application::build(swapped)
        .await
        .err()
        .expect("cells given in another order are refused");
    assert!(
        plylog::api::cause_chain(&refused).contains("is cell 1 of 2"),
        "{}",
        plylog::api::cause_chain(&refused)
    );
    println!("slots held {held:?}; 40 games in their cells, listed once in both orders");
    a.stop().await;
    b.stop().await;
}
