//! The cluster on a real HA stack: two PostgreSQL cells, each a Patroni
//! cluster (primary and synchronous standby, etcd, HAProxy following the
//! primary), and four plylog nodes, all in network namespaces this test
//! makes (`tests/ha/stack.sh`). Clients play about two thousand games
//! through random nodes with request ids and expected sequences while the
//! test kills a node, cuts one off from both cells, pauses one longer than
//! its lease, fails over one cell's primary, and has a node join and one
//! leave. At the end every acknowledged request is sent again through a
//! random node and must get its original reply; every log is dense; every
//! deadline has one timeout; no append committed under a lease its writer
//! did not hold (an audit trigger in each cell). It prints the figures.
//!
//! Opt-in: `PLYLOG_HA=1` (root, and Debian's patroni, etcd-server,
//! haproxy and postgresql); `.ci/run` runs it. Takes about five minutes.
//!
//! `PLYLOG_HA_BEFORE=<a plylog binary>` measures an earlier build, one with
//! no slots (before one owner per game), with the same clients on one cell:
//! the steady state, the node killed and the node cut off, then the same
//! checks at the end. It prints the figures that build can show (the
//! "before" column of docs/operations/deployment.md) and checks nothing
//! that build never promised (the fence, the audit of leases).

mod load;
mod stack;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use libtest_mimic::Arguments;
use plylog::proto as pb;
use prost::Message;
use sqlx::postgres::{PgListener, PgPool, PgPoolOptions};

use load::{Kind, Load, cell_of};
use stack::{Node, Stack};

const CELLS: [&str; 2] = ["a", "b"];

fn main() {
    let args = Arguments::from_args();
    let availability = plylog_testkit::optional::availability(
        "ha",
        std::env::var("PLYLOG_HA").is_ok_and(|v| v == "1"),
        "PLYLOG_REQUIRE_HA",
        "the HA stack test is opt-in: set PLYLOG_HA=1 (as root, with Debian's patroni, etcd-server, haproxy and postgresql; about five minutes)",
    );
    let trial = plylog_testkit::optional::trial(
        "ha::the_cluster_survives_a_real_ha_stack",
        &availability,
        the_cluster_survives_a_real_ha_stack,
    );
    libtest_mimic::run(&args, vec![trial]).exit();
}

fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// The `q`th quantile of `values` (sorted here), in the values' unit.
fn quantile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let index = ((values.len() as f64 - 1.0) * q).round() as usize;
    values[index]
}

/// The audit each cell gets once the nodes migrated it: an append (not a
/// game's creation) committed by a node (its connections'
/// `application_name`) that did not hold its game's slot under an
/// unexpired lease at that moment is recorded in `ha_stale`.
const AUDIT: &str = r#"
CREATE TABLE IF NOT EXISTS ha_stale (game_id TEXT, sequence BIGINT, writer TEXT, holder TEXT,
  expires_at TIMESTAMPTZ, at TIMESTAMPTZ DEFAULT now());
CREATE OR REPLACE FUNCTION ha_audit() RETURNS TRIGGER LANGUAGE plpgsql AS $$
DECLARE holder TEXT; ends TIMESTAMPTZ;
BEGIN
  IF NEW.sequence = 1 THEN RETURN NEW; END IF;
  SELECT s.node, s.expires_at INTO holder, ends
    FROM slot_leases s JOIN games g ON g.slot = s.slot WHERE g.game_id = NEW.game_id;
  IF holder IS DISTINCT FROM current_setting('application_name') OR ends <= now() THEN
    INSERT INTO ha_stale (game_id, sequence, writer, holder, expires_at)
      VALUES (NEW.game_id, NEW.sequence, current_setting('application_name'), holder, ends);
  END IF;
  RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS ha_audit ON events;
CREATE TRIGGER ha_audit AFTER INSERT ON events FOR EACH ROW EXECUTE FUNCTION ha_audit();
"#;

/// What the test measures on its way, printed at the end.
#[derive(Default)]
struct Figures {
    lines: Vec<(String, String, String)>,
}

impl Figures {
    fn add(&mut self, figure: &str, value: String, goal: &str) {
        println!("ha: {figure}: {value} (goal {goal})");
        self.lines.push((figure.to_owned(), value, goal.to_owned()));
    }
}

struct Cluster {
    stack: Stack,
    /// The earlier build measured instead of this one, if any.
    before: Option<PathBuf>,
    urls: Vec<String>,
    nodes: Vec<Node>,
    pools: Vec<PgPool>,
}

impl Cluster {
    fn node_urls(&self, i: usize) -> Vec<String> {
        self.urls
            .iter()
            .map(|url| format!("{url}?application_name=node{i}"))
            .collect()
    }

    fn start(&mut self, i: usize) {
        let node = Node::start(
            i,
            &self.stack.dir,
            &self.node_urls(i),
            self.before.as_deref(),
        );
        self.nodes[i - 1] = node;
    }

    /// Metrics of every running node, summed by name (a node that does not
    /// answer counts with its last reading).
    fn scrape(&mut self) -> Vec<HashMap<String, f64>> {
        self.nodes
            .iter_mut()
            .map(|n| n.scrape().unwrap_or_else(|| n.last_metrics.clone()))
            .collect()
    }

    /// The slots `node` holds now, over both cells (every slot for an
    /// earlier build, whose nodes each run any game).
    async fn slots_of(&self, node: &str) -> HashSet<i32> {
        if self.before.is_some() {
            return (0..1024).collect();
        }
        let mut slots = HashSet::new();
        for pool in &self.pools {
            let held: Vec<i32> = sqlx::query_scalar(
                "SELECT slot FROM slot_leases WHERE node = $1 AND expires_at > now()",
            )
            .bind(node)
            .fetch_all(pool)
            .await
            .unwrap_or_default();
            slots.extend(held);
        }
        slots
    }

    /// Waits until the running nodes hold all 1,024 slots between them,
    /// each some (at most `within`); with an earlier build, until each
    /// running node answers.
    async fn settled(&mut self, within: Duration) {
        let started = Instant::now();
        if self.before.is_some() {
            loop {
                if self
                    .nodes
                    .iter_mut()
                    .filter(|n| n.running())
                    .all(|n| n.scrape().is_some())
                {
                    return;
                }
                assert!(started.elapsed() < within, "the nodes answer");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
        loop {
            let running: Vec<usize> = self
                .nodes
                .iter()
                .filter(|n| n.running())
                .map(|n| n.index)
                .collect();
            let held: Vec<f64> = self
                .nodes
                .iter_mut()
                .filter(|n| n.running())
                .map(|n| n.metric("plylog_slots_owned"))
                .collect();
            if held.iter().sum::<f64>() == 1024.0 && held.iter().all(|h| *h > 0.0) {
                println!("ha: nodes {running:?} hold {held:?} slots");
                return;
            }
            assert!(
                started.elapsed() < within,
                "the slots did not settle on nodes {running:?} within {within:?}: {held:?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Events of `kind` recorded in [from_ms, to_ms) (the cells' clocks),
    /// over both cells; with `games`, only theirs.
    async fn events_between(
        &self,
        event_type: &str,
        from_ms: i64,
        to_ms: i64,
        games: Option<&[String]>,
    ) -> Vec<(String, Vec<u8>)> {
        let mut all = Vec::new();
        for pool in &self.pools {
            let rows: Vec<(String, Vec<u8>)> = sqlx::query_as(
                "SELECT game_id, payload FROM events WHERE event_type = $1 \
                 AND recorded_at_ms >= $2 AND recorded_at_ms < $3 \
                 AND ($4::text[] IS NULL OR game_id = ANY($4))",
            )
            .bind(event_type)
            .bind(from_ms)
            .bind(to_ms)
            .bind(games)
            .fetch_all(pool)
            .await
            .expect("events read");
            all.extend(rows);
        }
        all
    }
}

/// Clients playing tic-tac-toe games of some slots with no pause between
/// moves (see [`Load::hammer`]).
struct Hammers {
    stop: Arc<std::sync::atomic::AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Hammers {
    fn start(load: &Arc<Load>, slots: HashSet<i32>, clients: u64, seed: u64) -> Hammers {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let tasks = (0..clients)
            .map(|h| {
                let (load, slots, stop) = (Arc::clone(load), slots.clone(), Arc::clone(&stop));
                tokio::spawn(async move { load.hammer(seed.wrapping_add(h), &slots, &stop).await })
            })
            .collect();
        Hammers { stop, tasks }
    }

    async fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        for task in self.tasks {
            tokio::time::timeout(Duration::from_secs(120), task)
                .await
                .expect("the hammers stop within 120 s")
                .expect("a hammer");
        }
    }
}

/// For each game matching `of` that had a move acknowledged in the 5 s
/// before `at` and one after it (a game being played), the seconds from
/// `at` to its first acknowledged move after.
fn first_acks_after(load: &Load, at: Instant, of: impl Fn(&str) -> bool) -> Vec<f64> {
    let acked = load.acked.lock().unwrap();
    let playing: HashSet<&str> = acked
        .iter()
        .filter(|a| a.at <= at && at - a.at < Duration::from_secs(5))
        .map(|a| a.game_id.as_str())
        .filter(|id| of(id))
        .collect();
    let mut first: HashMap<&str, Instant> = HashMap::new();
    for a in acked
        .iter()
        .filter(|a| a.at > at && playing.contains(a.game_id.as_str()))
    {
        first.entry(a.game_id.as_str()).or_insert(a.at);
    }
    first.values().map(|t| (*t - at).as_secs_f64()).collect()
}

/// Polls `cell`'s HAProxy address until a write commits; the time it took.
async fn wait_writable(pool: &PgPool, within: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let write = tokio::time::timeout(
            Duration::from_secs(2),
            sqlx::raw_sql(
                "CREATE TABLE IF NOT EXISTS ha_probe (x INT); INSERT INTO ha_probe VALUES (1)",
            )
            .execute(pool),
        )
        .await;
        if matches!(write, Ok(Ok(_))) {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < within,
            "the cell took no write within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn the_cluster_survives_a_real_ha_stack() {
    let seed = plylog_testkit::seed::seed("ha");
    let run_started = Instant::now();
    let dir = PathBuf::from(format!("/tmp/plylog-ha-{}", std::process::id()));
    let stack = Stack::up(&dir);
    println!(
        "ha: stack up in {:?} (state and logs in {})",
        run_started.elapsed(),
        dir.display()
    );
    let before = std::env::var_os("PLYLOG_HA_BEFORE").map(PathBuf::from);
    // An earlier build: one database.
    let cells = if before.is_some() { 1 } else { CELLS.len() };
    let urls: Vec<String> = CELLS[..cells].iter().map(|c| Stack::url(c)).collect();
    let mut pools = Vec::new();
    for url in &urls {
        pools.push(
            PgPoolOptions::new()
                .max_connections(4)
                .acquire_timeout(Duration::from_secs(3))
                .connect_lazy(url)
                .expect("a cell's URL"),
        );
    }
    let mut cluster = Cluster {
        stack,
        before,
        urls,
        nodes: Vec::new(),
        pools,
    };
    for i in 1..=4 {
        let node = Node::start(
            i,
            &cluster.stack.dir,
            &cluster.node_urls(i),
            cluster.before.as_deref(),
        );
        cluster.nodes.push(node);
    }
    cluster.settled(Duration::from_secs(60)).await;
    // An earlier build has no slot leases to audit.
    let earlier = cluster.before.is_some();
    for pool in cluster.pools.iter().filter(|_| !earlier) {
        sqlx::raw_sql(AUDIT)
            .execute(pool)
            .await
            .expect("the audit trigger");
    }
    let mut figures = Figures::default();

    // The clients: 16 players of untimed and bot games, and a thousand
    // timed games made at 7 a second.
    let load = Arc::new(Load::new(seed));
    let mut clients = Vec::new();
    for p in 0..16u64 {
        let load = Arc::clone(&load);
        let mix = [
            Kind::TicTacToe,
            Kind::TicTacToe,
            Kind::ConnectFour,
            Kind::Bot,
        ];
        clients.push(tokio::spawn(async move {
            load.player(seed.wrapping_add(p), &mix).await
        }));
    }
    {
        let load = Arc::clone(&load);
        clients.push(tokio::spawn(async move {
            load.timed_games(seed.wrapping_add(100), 7, 1000).await
        }));
    }

    // Steady state.
    tokio::time::sleep(Duration::from_secs(10)).await;
    // Notices on the channel an earlier build sent one on for every append
    // group (and every node listened to), in the first cell.
    let notices = Arc::new(AtomicU64::new(0));
    let listening = {
        let mut listener = PgListener::connect_with(&cluster.pools[0])
            .await
            .expect("a listener on the first cell");
        listener
            .listen("plylog_events")
            .await
            .expect("LISTEN plylog_events");
        let notices = Arc::clone(&notices);
        tokio::spawn(async move {
            while listener.recv().await.is_ok() {
                notices.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let before = cluster.scrape();
    let (from_ms, steady) = (unix_ms(), Instant::now());
    let notices_before = notices.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_secs(20)).await;
    let noticed = notices.load(Ordering::Relaxed) - notices_before;
    let after = cluster.scrape();
    let created = load.games.lock().unwrap().len();
    let to_ms = unix_ms();
    listening.abort();
    {
        let (appended, listeners): (i64, i64) = sqlx::query_as(
            "SELECT (SELECT count(*) FROM events WHERE recorded_at_ms >= $1 AND recorded_at_ms < $2), \
             (SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'node%' \
              AND query ILIKE 'LISTEN%')",
        )
        .bind(from_ms)
        .bind(to_ms)
        .fetch_one(&cluster.pools[0])
        .await
        .expect("appends and listeners counted");
        figures.add(
            "NOTIFY deliveries per append (first cell, steady state)",
            format!(
                "{:.2} ({noticed} notices x {listeners} listening nodes, {appended} events appended)",
                (noticed as f64 * listeners as f64) / appended.max(1) as f64
            ),
            "0",
        );
    }
    let delta = |name: &str| -> f64 {
        after
            .iter()
            .map(|m| m.get(name).copied().unwrap_or(0.0))
            .sum::<f64>()
            - before
                .iter()
                .map(|m| m.get(name).copied().unwrap_or(0.0))
                .sum::<f64>()
    };
    let expired = cluster
        .events_between("time_expired", from_ms, to_ms, None)
        .await
        .len();
    let counted = |name: &str| after.iter().any(|m| m.contains_key(name));
    figures.add(
        "timeout attempts per deadline (steady state)",
        if counted("plylog_timeout_attempts_total") {
            format!(
                "{:.3} ({} attempts, {expired} TimeExpired events)",
                delta("plylog_timeout_attempts_total") / expired.max(1) as f64,
                delta("plylog_timeout_attempts_total")
            )
        } else {
            format!("not counted by this build ({expired} TimeExpired events)")
        },
        "1.00",
    );
    let bot_games: Vec<String> = load
        .games
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, k)| *k == Kind::Bot)
        .map(|(id, _)| id.clone())
        .collect();
    let bot_moves = cluster
        .events_between("move_played", from_ms, to_ms, Some(&bot_games))
        .await
        .iter()
        .filter(|(_, payload)| {
            matches!(
                pb::GameEvent::decode(payload.as_slice()).ok().and_then(|e| e.kind),
                Some(pb::game_event::Kind::MovePlayed(played)) if played.seat == 1
            )
        })
        .count();
    // An earlier build counted the moves its bots decided, one search each.
    let searches = if counted("plylog_bot_searches_total") {
        delta("plylog_bot_searches_total")
    } else {
        delta("plylog_bot_moves_total")
    };
    figures.add(
        "bot searches per bot move (steady state)",
        format!(
            "{:.3} ({searches} searches, {bot_moves} bot moves)",
            searches / bot_moves.max(1) as f64,
        ),
        "1.00",
    );
    let in_progress: i64 = {
        let mut n = 0;
        for pool in &cluster.pools {
            n += sqlx::query_scalar::<_, i64>("SELECT count(*) FROM games WHERE status = $1")
                .bind(pb::GameStatus::InProgress as i32)
                .fetch_one(pool)
                .await
                .unwrap();
        }
        n
    };
    let per_node = |name: &str| -> Vec<f64> {
        after
            .iter()
            .map(|m| m.get(name).copied().unwrap_or(0.0))
            .collect()
    };
    let live = per_node("plylog_live_games");
    let slots = per_node("plylog_slots_owned");
    let busiest = |v: &[f64]| {
        v.iter().copied().fold(0.0, f64::max) / (v.iter().sum::<f64>() / v.len() as f64)
    };
    // Nothing is evicted this early (a game leaves memory after 300 s
    // idle), so a node holds every game it served a call of or loaded:
    // copies per game.
    figures.add(
        "games in memory, summed over the nodes / games created",
        format!(
            "{:.2} ({} in memory, {created} created)",
            live.iter().sum::<f64>() / created.max(1) as f64,
            live.iter().sum::<f64>()
        ),
        "<= 1.00 (each game on one node)",
    );
    figures.add(
        "busiest node's slots / mean; games in memory / mean",
        format!(
            "{}; {:.2} {live:?} ({in_progress} games in progress)",
            if earlier {
                "no slots".to_owned()
            } else {
                format!("{:.2} {slots:?}", busiest(&slots))
            },
            busiest(&live)
        ),
        "<= 1.2; <= 1.25",
    );
    // Forwarding's cost: GetGame through the owner and through another node
    // (an earlier build serves every call where it lands).
    if !earlier {
        let games: Vec<String> = load
            .games
            .lock()
            .unwrap()
            .iter()
            .take(200)
            .map(|(id, _)| id.clone())
            .collect();
        let (mut direct, mut passed) = (Vec::new(), Vec::new());
        for id in &games {
            let mut owner = None;
            for i in 1..=4 {
                let started = Instant::now();
                let Ok(reply) = load
                    .client_of(i)
                    .get_game(pb::GetGameRequest {
                        game_id: id.clone(),
                        ..Default::default()
                    })
                    .await
                else {
                    continue;
                };
                let took = started.elapsed().as_secs_f64() * 1000.0;
                let named = reply
                    .metadata()
                    .get("plylog-owner")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                match named {
                    Some(_) => passed.push(took),
                    None => {
                        direct.push(took);
                        owner = Some(i);
                    }
                }
            }
            let _ = owner;
        }
        let (d50, d99) = (quantile(&mut direct, 0.5), quantile(&mut direct, 0.99));
        let (p50, p99) = (quantile(&mut passed, 0.5), quantile(&mut passed, 0.99));
        figures.add(
            "forwarded GetGame added latency p50 / p99",
            format!(
                "{:.2} ms / {:.2} ms (owner {d50:.2}/{d99:.2} ms, passed on {p50:.2}/{p99:.2} ms, {} + {} calls)",
                p50 - d50,
                p99 - d99,
                direct.len(),
                passed.len()
            ),
            "<= 0.5 ms / <= 2 ms",
        );
    }
    println!("ha: steady state done at {:?}", steady.elapsed());

    // kill -9 of node 4.
    let killed_slots = cluster.slots_of("node4").await;
    // Games of its slots being played when it dies.
    let hammers = Hammers::start(&load, killed_slots.clone(), 32, seed + 3000);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let kill_at = Instant::now();
    cluster.nodes[3].kill();
    println!("ha: node4 killed holding {} slots", killed_slots.len());
    tokio::time::sleep(Duration::from_secs(15)).await;
    hammers.stop().await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    {
        let affected: HashSet<String> = load
            .games
            .lock()
            .unwrap()
            .iter()
            .filter(|(id, _)| {
                killed_slots.contains(&(plylog::registry::ownership::slot_of(id, 1024) as i32))
            })
            .map(|(id, _)| id.clone())
            .collect();
        let mut waits = first_acks_after(&load, kill_at, |id| affected.contains(id));
        figures.add(
            "node killed: kill to the first acknowledged move of each game it ran, p99",
            format!(
                "{:.2} s over {} games being played (p50 {:.2} s, max {:.2} s)",
                quantile(&mut waits, 0.99),
                waits.len(),
                quantile(&mut waits, 0.5),
                quantile(&mut waits, 1.0)
            ),
            "<= 10 s (lease 6 s)",
        );
    }

    // Node 3 cut off from both cells for 15 s, with appends in flight
    // (its statements sent before the cut reach the database when TCP
    // sends them again after it, under leases long taken by others).
    let hammers = Hammers::start(&load, cluster.slots_of("node3").await, 48, seed + 2000);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let fenced_before = cluster.nodes[2].metric("plylog_appends_fenced_total");
    cluster.stack.cut(3);
    println!("ha: node3 cut off");
    tokio::time::sleep(Duration::from_secs(15)).await;
    cluster.stack.heal(3);
    println!("ha: node3 back");
    tokio::time::sleep(Duration::from_secs(3)).await;
    hammers.stop().await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    let fenced_cut = cluster.nodes[2].metric("plylog_appends_fenced_total") - fenced_before;
    if !earlier {
        figures.add(
            "fenced append attempts in the cut-off scenario",
            format!("{fenced_cut}"),
            "> 0",
        );
    }
    // An earlier build has no slots to pause, hand over or move between
    // cells: it goes from here to the end.
    let fenced = if earlier {
        None
    } else {
        Some(slot_scenarios(&mut cluster, &load, &mut figures, seed).await)
    };

    // The end: clients stop, timed games play out.
    tokio::time::sleep(Duration::from_secs(5)).await;
    load.stop.store(true, Ordering::Relaxed);
    for client in clients {
        tokio::time::timeout(Duration::from_secs(120), client)
            .await
            .expect("the clients stop within 120 s")
            .expect("a client task");
    }
    let timed: Vec<String> = load
        .games
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, k)| *k == Kind::Timed)
        .map(|(id, _)| id.clone())
        .collect();
    let settle = Instant::now();
    let stuck = loop {
        let mut open = 0i64;
        for pool in &cluster.pools {
            open += sqlx::query_scalar::<_, i64>(
                "SELECT count(*) FROM games WHERE status = $1 AND game_id = ANY($2)",
            )
            .bind(pb::GameStatus::InProgress as i32)
            .bind(&timed)
            .fetch_one(pool)
            .await
            .unwrap();
        }
        if open == 0 || settle.elapsed() >= Duration::from_secs(60) {
            break open;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    figures.add(
        "timed games still in progress 60 s after the clients stopped (a deadline without its timeout)",
        format!("{stuck}"),
        "0",
    );
    let games = load.games.lock().unwrap().len();
    println!(
        "ha: {games} games ({} timed), {} acknowledged requests",
        timed.len(),
        load.acked.lock().unwrap().len()
    );

    // Every acknowledged request, again through a random node.
    let running: Vec<usize> = cluster
        .nodes
        .iter()
        .filter(|n| n.running())
        .map(|n| n.index)
        .collect();
    let (differing, replayed) = load
        .replay_acknowledged(seed.wrapping_add(7), &running)
        .await;
    figures.add(
        "acknowledged requests whose retry got another reply (lost or duplicated)",
        format!("{} of {replayed}", differing.len()),
        "0",
    );
    // Dense logs, one timeout per deadline, no stale commit, in both cells.
    let (mut gaps, mut doubled, mut stale, mut lateness) = (0i64, 0i64, 0i64, Vec::new());
    for pool in &cluster.pools {
        gaps += sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM games g WHERE g.last_sequence <> \
             (SELECT count(*) FROM events e WHERE e.game_id = g.game_id) \
             OR g.last_sequence <> (SELECT coalesce(max(sequence), 0) FROM events e WHERE e.game_id = g.game_id)",
        )
        .fetch_one(pool)
        .await
        .unwrap();
        doubled += sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM (SELECT event_type, lag(event_type) OVER \
             (PARTITION BY game_id ORDER BY sequence) AS before FROM events) e \
             WHERE event_type = 'time_expired' AND before = 'time_expired'",
        )
        .fetch_one(pool)
        .await
        .unwrap();
        if !earlier {
            stale += sqlx::query_scalar::<_, i64>("SELECT count(*) FROM ha_stale")
                .fetch_one(pool)
                .await
                .unwrap();
        }
        let late: Vec<i64> = sqlx::query_scalar(
            "SELECT recorded_at_ms - before - 2000 FROM (SELECT event_type, recorded_at_ms, \
             lag(recorded_at_ms) OVER (PARTITION BY game_id ORDER BY sequence) AS before \
             FROM events) e WHERE event_type = 'time_expired'",
        )
        .fetch_all(pool)
        .await
        .unwrap();
        lateness.extend(late.into_iter().map(|ms| ms as f64 / 1000.0));
    }
    figures.add("games whose log is not dense", format!("{gaps}"), "0");
    figures.add(
        "deadlines with two timeout events",
        format!("{doubled}"),
        "0",
    );
    figures.add(
        "timeouts' lateness past their deadline p50 / p99 / max",
        format!(
            "{:.2} s / {:.2} s / {:.2} s over {} deadlines",
            quantile(&mut lateness, 0.5),
            quantile(&mut lateness, 0.99),
            quantile(&mut lateness, 1.0),
            lateness.len()
        ),
        "each once; late by at most about a lease around the disruptions",
    );
    if !earlier {
        figures.add(
            "appends committed by a node not holding the slot's lease (audit trigger)",
            format!("{stale}"),
            "0",
        );
    }
    let mut refusals: HashMap<String, usize> = HashMap::new();
    for failure in load.failures.lock().unwrap().iter() {
        *refusals
            .entry(format!(
                "cell {} {:?} {}",
                CELLS[failure.cell], failure.code, failure.reason
            ))
            .or_default() += 1;
    }
    println!("ha: failed attempts (each retried) by cell, code and reason: {refusals:?}");
    let abandoned = load.abandoned.lock().unwrap().clone();
    let unexpected = load.unexpected.lock().unwrap().clone();
    println!("ha: done in {:?}", run_started.elapsed());
    println!("| figure | value | goal |\n|---|---|---|");
    for (figure, value, goal) in &figures.lines {
        println!("| {figure} | {value} | {goal} |");
    }
    assert!(
        abandoned.is_empty(),
        "requests never answered: {abandoned:?}"
    );
    assert!(unexpected.is_empty(), "unexpected replies: {unexpected:?}");
    assert!(
        differing.is_empty(),
        "retries with another reply: {differing:?}"
    );
    assert_eq!(
        stuck, 0,
        "timed games still in progress 60 s after the clients stopped: a deadline without its timeout"
    );
    assert_eq!(gaps, 0, "logs with gaps");
    assert_eq!(doubled, 0, "deadlines timed out twice");
    assert_eq!(stale, 0, "appends committed outside their writer's lease");
    if let Some(fenced) = fenced {
        assert!(fenced > 0.0, "the pause scenario exercised the fence");
        assert!(fenced_cut > 0.0, "the cut-off scenario exercised the fence");
        assert!(games >= 1500, "about two thousand games: {games}");
    }
}

/// The scenarios of slots: node 2 paused longer than its lease with appends
/// in flight, node 4 joining again, cell a's primary killed, node 1 leaving
/// gracefully. The fenced append attempts of the pause.
async fn slot_scenarios(
    cluster: &mut Cluster,
    load: &Arc<Load>,
    figures: &mut Figures,
    seed: u64,
) -> f64 {
    // Node 2 paused (SIGSTOP) for 10 s, longer than its lease, with
    // appends in flight: games of its slots played with no pause between
    // moves, and every write of both cells held for a moment around the
    // stop (a lock on the games table), so that its writers have appends
    // queued behind the statements in flight when it stops. Those were
    // decided under its leases and are sent when it resumes, after the
    // leases ended.
    let hammers = Hammers::start(load, cluster.slots_of("node2").await, 96, seed + 1000);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let fenced_before = cluster.nodes[1].metric("plylog_appends_fenced_total");
    let mut held = Vec::new();
    for pool in &cluster.pools {
        let mut hold = pool.begin().await.expect("a transaction on the cell");
        sqlx::query("LOCK TABLE games IN SHARE ROW EXCLUSIVE MODE")
            .execute(&mut *hold)
            .await
            .expect("the games table locked");
        held.push(hold);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    cluster.nodes[1].pause();
    println!("ha: node2 paused");
    tokio::time::sleep(Duration::from_millis(200)).await;
    for hold in held {
        hold.rollback().await.expect("the lock released");
    }
    tokio::time::sleep(Duration::from_millis(9_800)).await;
    cluster.nodes[1].resume();
    println!("ha: node2 resumed");
    tokio::time::sleep(Duration::from_secs(3)).await;
    hammers.stop().await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let fenced = cluster.nodes[1].metric("plylog_appends_fenced_total") - fenced_before;
    figures.add(
        "fenced append attempts in the pause scenario",
        format!("{fenced}"),
        "> 0",
    );

    // Node 4 joins again.
    cluster.start(4);
    cluster.settled(Duration::from_secs(60)).await;

    // Cell a's primary killed.
    let member = cluster.stack.kill_primary("a");
    let failover_at = Instant::now();
    println!("ha: cell a's primary {member} killed");
    let unavailable = wait_writable(&cluster.pools[0], Duration::from_secs(90)).await;
    println!("ha: cell a writable again after {unavailable:?}");
    tokio::time::sleep(Duration::from_secs(10)).await;
    let failover_end = Instant::now();
    {
        let mut gaps = first_acks_after(load, failover_at, |id| cell_of(id) == 0);
        let any_after = load
            .acked
            .lock()
            .unwrap()
            .iter()
            .filter(|a| a.at > failover_at && cell_of(&a.game_id) == 0)
            .map(|a| a.at)
            .min();
        let mut b_reasons: HashMap<String, usize> = HashMap::new();
        for f in load.failures.lock().unwrap().iter() {
            if f.cell == 1 && f.at > failover_at && f.at < failover_end {
                *b_reasons
                    .entry(format!("{:?} {}", f.code, f.reason))
                    .or_default() += 1;
            }
        }
        let b_errors: usize = b_reasons.values().sum();
        println!("ha: cell b's failed attempts during cell a's failover: {b_reasons:?}");
        figures.add(
            "primary failover: cell a's write gap, p99 over its games",
            format!(
                "{:.2} s over {} games (first write through HAProxy after {:.2} s; first acknowledged move after {:.2} s)",
                quantile(&mut gaps, 0.99),
                gaps.len(),
                unavailable.as_secs_f64(),
                any_after.map_or(f64::NAN, |a| (a - failover_at).as_secs_f64())
            ),
            "<= 30 s",
        );
        figures.add(
            "primary failover: the other cell's failed attempts",
            format!("{b_errors}"),
            "0",
        );
    }
    cluster.stack.restart_member("a", &member);
    println!("ha: {member} back as a standby");

    // Node 1 leaves gracefully.
    let leaving = cluster.slots_of("node1").await;
    let stop_at = Instant::now();
    let stopping = {
        let mut node = std::mem::replace(&mut cluster.nodes[0], Node::placeholder(1));
        std::thread::spawn(move || {
            node.stop();
            node
        })
    };
    let mut handoff: HashMap<i32, f64> = HashMap::new();
    while handoff.len() < leaving.len() && stop_at.elapsed() < Duration::from_secs(30) {
        for pool in &cluster.pools {
            let rows: Vec<(i32, Option<String>)> = sqlx::query_as(
                "SELECT slot, node FROM slot_leases WHERE slot = ANY($1) AND expires_at > now()",
            )
            .bind(leaving.iter().copied().collect::<Vec<i32>>())
            .fetch_all(pool)
            .await
            .unwrap_or_default();
            for (slot, node) in rows {
                if node.is_some_and(|n| n != "node1") {
                    handoff
                        .entry(slot)
                        .or_insert(stop_at.elapsed().as_secs_f64());
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let _stopped = stopping.join().expect("node 1 stops");
    let mut times: Vec<f64> = handoff.values().copied().collect();
    figures.add(
        "graceful stop: SIGTERM to each slot's new holder, p99",
        format!(
            "{:.2} s over {} of {} slots",
            quantile(&mut times, 0.99),
            handoff.len(),
            leaving.len()
        ),
        "<= 2 s",
    );
    assert_eq!(
        handoff.len(),
        leaving.len(),
        "every slot of the leaving node taken"
    );
    fenced
}
