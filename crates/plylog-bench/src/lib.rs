//! `plylog bench`: a load generator for a plylog server, which also
//! measures a no-op gRPC handler (in a child process) with the same client so that
//! every run can be quoted as a ratio to it (these machines are shared:
//! absolute figures move with the neighbours, ratios within one run much
//! less).
//!
//! A crate of its own, so that the server's library holds no client code:
//! its binary `plylog-bench` (src/main.rs) is what `plylog bench` runs. It
//! uses the server's library for the generated gRPC client and, in `cold`
//! mode, for a server in this process.
//!
//! # Map
//! - [`Command`]: the five modes as clap parses them; [`run`] runs one and
//!   turns its result into the exit code.
//! - [`play`]: boardgame.io's benchmark workload (each slot plays random
//!   3×3 tic-tac-toe games to the end, repeat) against a URL, then the same
//!   closed-loop client against the no-op handler; [`feed`]: the feed
//!   reader `play --feed-reader` measures it with.
//! - [`follow`]: one big game, many StreamEvents followers, one writer; the
//!   time from the writer's acknowledgement to each follower's receipt.
//! - [`cold`]: an in-process server fills a database with long games, a
//!   fresh one loads each of them once (the first GetGame after a restart).
//! - [`replay`]: one long game played through the server, then its whole
//!   GetReplay read with every position and with the events only.
//! - [`forward`]: GetGame through a game's owner and through another node
//!   of its cluster: what a call passed on costs.
//! - [`noop`]: the no-op handler (grpc.health.v1 Health/Check answering at
//!   once) and the closed loop that drives it.
//! - [`Latencies`]: every sample of a run, for exact quantiles.
//!
//! Exit codes: 0 done, 2 a usage error (clap), 3 anything else, with one
//! line on standard error.

pub mod cold;
pub mod feed;
pub mod follow;
pub mod forward;
pub mod noop;
pub mod play;
pub mod replay;

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use plylog::app::AppError;
use plylog::proto as pb;
use tonic::transport::{Channel, Endpoint};

/// Calls a closed-loop client sends on one HTTP/2 connection at most, as
/// the outside ceiling tool does: slots are spread over
/// `ceil(slots / 16)` connections.
pub const SLOTS_PER_CONNECTION: usize = 16;

/// The load generator's modes.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// SubmitMove throughput and latency under boardgame.io's workload
    /// (random 3x3 tic-tac-toe games, played to the end, over and over),
    /// beside a no-op gRPC handler measured the same way.
    Play(play::PlayArgs),
    /// StreamEvents fan-out: the latency from a writer's SubmitMove reply to
    /// each of many followers of the same game.
    Follow(follow::FollowArgs),
    /// Cold loads: the first GetGame of long games after a restart, on an
    /// in-process server and the database given.
    Cold(cold::ColdArgs),
    /// GetReplay: whole replays of one long game, with every step's
    /// position and with the events only.
    Replay(replay::ReplayArgs),
    /// Forwarding: GetGame through a game's owner and through another node
    /// of the same cluster, and the latency the hop adds.
    Forward(forward::ForwardArgs),
    /// The no-op baseline's server, in a process of its own (what `play`
    /// runs it as): prints `listening <address>`, then serves until its
    /// standard input closes.
    #[command(hide = true)]
    NoopServe,
}

/// Why a run could not be done (exit code 3).
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The URL is not one tonic can connect to.
    #[error("{url} is not a server URL such as http://127.0.0.1:50051: {source}")]
    BadUrl {
        /// The URL given.
        url: String,
        /// What tonic made of it.
        source: tonic::transport::Error,
    },
    /// Connecting to the server failed.
    #[error("connecting to {url}: {source}")]
    Connect {
        /// The URL given.
        url: String,
        /// The transport's error.
        source: tonic::transport::Error,
    },
    /// A call the run cannot go on without failed (creating the followed
    /// game, a writer's move, filling a game).
    #[error("{call}: {status}")]
    Call {
        /// What was called, e.g. `CreateGame`.
        call: &'static str,
        /// The server's answer.
        status: Box<tonic::Status>,
    },
    /// The in-process server (cold mode) or the no-op handler's process
    /// failed.
    #[error(transparent)]
    Server(#[from] AppError),
    /// Binding or serving the no-op handler failed.
    #[error("the no-op handler: {0}")]
    NoOp(String),
    /// The run could not be done or measured nothing, in words.
    #[error("{0}")]
    Failed(String),
    /// Writing the report failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl BenchError {
    /// A failed call the run needed.
    fn call(call: &'static str, status: tonic::Status) -> Self {
        BenchError::Call {
            call,
            status: Box::new(status),
        }
    }
}

/// Runs `command`, writing its report to standard output, and gives the
/// exit code: 0 done, 3 failed (the reason on standard error, one line).
pub async fn run(command: Command) -> ExitCode {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = match command {
        Command::Play(args) => play::run(&args, &mut out).await,
        Command::Follow(args) => follow::run(&args, &mut out).await,
        Command::Cold(args) => cold::run(&args, &mut out).await,
        Command::Replay(args) => replay::run(&args, &mut out).await,
        Command::Forward(args) => forward::run(&args, &mut out).await,
        Command::NoopServe => noop::serve(&mut out).await,
    }
    .and_then(|()| Ok(out.flush()?));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("plylog: {}", plylog::ops::one_line(&error));
            ExitCode::from(3)
        }
    }
}

/// Every latency sample of a run, in nanoseconds, kept whole so that
/// quantiles are exact (a 10 s run at 50,000 calls/s keeps 4 MB).
#[derive(Debug, Clone, Default)]
pub struct Latencies {
    nanos: Vec<u64>,
}

impl Latencies {
    /// Adds one sample.
    pub fn record(&mut self, elapsed: Duration) {
        self.nanos
            .push(u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX));
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: Latencies) {
        self.nanos.extend(other.nanos);
    }

    /// How many samples there are.
    pub fn len(&self) -> usize {
        self.nanos.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.nanos.is_empty()
    }

    /// The samples' quantiles; `None` when there are none.
    pub fn summary(mut self) -> Option<Summary> {
        self.nanos.sort_unstable();
        let sorted = &self.nanos;
        let at = |q: f64| {
            // Nearest rank: the smallest sample with at least q of them at
            // or below it.
            let rank = (q * sorted.len() as f64).ceil() as usize;
            Duration::from_nanos(sorted[rank.clamp(1, sorted.len()) - 1])
        };
        (!sorted.is_empty()).then(|| Summary {
            count: sorted.len(),
            p50: at(0.5),
            p99: at(0.99),
            max: at(1.0),
        })
    }
}

/// The measured part of a closed-loop run: calls count when they are sent
/// at or after its start and answered at or before its end, so the slots'
/// start-up (connections, the server's first games) and the calls cut off
/// at the end are left out.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    start: Instant,
    end: Instant,
}

impl Window {
    /// The window that opens `warmup` from now and lasts `length`.
    pub fn after(warmup: Duration, length: Duration) -> Self {
        let start = Instant::now() + warmup;
        Window {
            start,
            end: start + length,
        }
    }

    /// Whether it has ended: the slots stop sending.
    pub fn is_over(&self) -> bool {
        Instant::now() >= self.end
    }

    /// Whether a call sent at `sent` and answered at `answered` falls in it.
    pub fn holds(&self, sent: Instant, answered: Instant) -> bool {
        sent >= self.start && answered <= self.end
    }

    /// How long it lasts.
    pub fn length(&self) -> Duration {
        self.end - self.start
    }
}

/// What a closed loop's calls did inside its [`Window`]: the latency of
/// each call answered OK, and the failures by call and status code.
#[derive(Debug, Default)]
pub struct Tally {
    /// One sample per successful call.
    pub latencies: Latencies,
    /// Failures by `call code` (`SubmitMove Unavailable`): how many, and the
    /// first one's message.
    pub errors: BTreeMap<String, (u64, String)>,
}

impl Tally {
    /// Counts a call sent at `sent` and answered now, if both fall in
    /// `window`: its latency when `failure` is `None`, else its status under
    /// `call`. Returns whether it counted.
    pub fn add(
        &mut self,
        window: &Window,
        sent: Instant,
        failure: Option<&tonic::Status>,
        call: &str,
    ) -> bool {
        let answered = Instant::now();
        if !window.holds(sent, answered) {
            return false;
        }
        match failure {
            None => self.latencies.record(answered - sent),
            Some(status) => {
                let entry = self
                    .errors
                    .entry(format!("{call} {:?}", status.code()))
                    .or_insert_with(|| (0, status.message().to_owned()));
                entry.0 += 1;
            }
        }
        true
    }

    /// Adds everything `other` counted.
    pub fn merge(&mut self, other: Tally) {
        self.latencies.merge(other.latencies);
        for (key, (count, message)) in other.errors {
            self.errors.entry(key).or_insert((0, message)).0 += count;
        }
    }

    /// The failures in words, one per kind:
    /// `SubmitMove Unavailable x3 (first: "...")`; empty when there were none.
    pub fn error_lines(&self) -> Vec<String> {
        self.errors
            .iter()
            .map(|(key, (count, message))| format!("{key} x{count} (first: {message:?})"))
            .collect()
    }
}

/// Quantiles of a set of latency samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// How many samples.
    pub count: usize,
    /// The median.
    pub p50: Duration,
    /// The 99th percentile.
    pub p99: Duration,
    /// The largest sample.
    pub max: Duration,
}

/// A duration in milliseconds, as reports print it (`0.062`, `8.51`).
pub fn millis(duration: Duration) -> String {
    format!("{:.3}", duration.as_secs_f64() * 1e3)
}

/// The machine's load averages over 1, 5 and 15 minutes, as
/// `/proc/loadavg` gives them (`1.95 3.11 2.87`); `unknown` where there is
/// no such file.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|text| !text.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// `count` HTTP/2 connections to `url` (plaintext `http://`), each its own
/// TCP connection with Nagle off.
///
/// # Errors
/// [`BenchError::BadUrl`], [`BenchError::Connect`].
pub async fn connect(url: &str, count: usize) -> Result<Vec<Channel>, BenchError> {
    let endpoint = Endpoint::from_shared(url.to_owned())
        .map_err(|source| BenchError::BadUrl {
            url: url.to_owned(),
            source,
        })?
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(10));
    let mut channels = Vec::with_capacity(count);
    for _ in 0..count {
        let channel = endpoint
            .connect()
            .await
            .map_err(|source| BenchError::Connect {
                url: url.to_owned(),
                source,
            })?;
        channels.push(channel);
    }
    Ok(channels)
}

/// How many connections a closed loop of `slots` uses:
/// `ceil(slots / SLOTS_PER_CONNECTION)`, at least 1.
pub fn connections_for(slots: usize) -> usize {
    slots.div_ceil(SLOTS_PER_CONNECTION).max(1)
}

/// A two-seat m,n,k game's CreateGame request, `X` and `O`; an empty
/// `game_id` lets the server pick one.
pub fn create_mnk(game_id: String, rows: i32, cols: i32, k: i32) -> pb::CreateGameRequest {
    let seat = |player: &str, symbol: &str| pb::Seat {
        player_id: player.to_owned(),
        symbol: symbol.to_owned(),
        ..pb::Seat::default()
    };
    pb::CreateGameRequest {
        game_id,
        rules: Some(pb::RuleSet {
            kind: Some(pb::rule_set::Kind::Mnk(pb::MnkRules { rows, cols, k })),
        }),
        seats: vec![seat("bench-0", "X"), seat("bench-1", "O")],
        ..pb::CreateGameRequest::default()
    }
}

/// A SubmitMove placing on (`row`, `col`) for `seat`, with that seat's
/// token as `authorization: Bearer <token>` when the server issued one
/// (an empty token sends none: a server run with `--no-seat-tokens`).
pub fn place(
    game_id: &str,
    seat: u32,
    (row, col): (i32, i32),
    token: &str,
) -> tonic::Request<pb::SubmitMoveRequest> {
    let mut request = tonic::Request::new(pb::SubmitMoveRequest {
        game_id: game_id.to_owned(),
        seat: Some(seat),
        r#move: Some(pb::Move {
            kind: Some(pb::r#move::Kind::Place(pb::Place {
                row,
                col,
                mark: None,
            })),
        }),
        ..pb::SubmitMoveRequest::default()
    });
    if !token.is_empty()
        && let Ok(value) = format!("Bearer {token}").parse()
    {
        request.metadata_mut().insert("authorization", value);
    }
    request
}

/// The sequence of the last event a write appended, from its reply's
/// events (or its game, when it carries no events).
pub fn last_sequence(events: &[pb::GameEvent], game: Option<&pb::Game>) -> Option<u64> {
    events
        .last()
        .map(|event| event.sequence)
        .or_else(|| game.map(|game| game.last_sequence))
}

/// Creates a `rows`×`cols` m,n,k game (`k` in a row), its id chosen by
/// the server, through `client`: the id and the seats' tokens (none from a
/// server run with `--no-seat-tokens`).
///
/// # Errors
/// [`BenchError::Call`] when CreateGame fails; [`BenchError::Failed`] when
/// its reply has no game.
pub async fn create_game(
    client: &mut plylog::proto::game_service_client::GameServiceClient<Channel>,
    rows: i32,
    cols: i32,
    k: i32,
) -> Result<(String, Vec<String>), BenchError> {
    let created = client
        .create_game(create_mnk(String::new(), rows, cols, k))
        .await
        .map_err(|status| BenchError::call("CreateGame", status))?
        .into_inner();
    let game_id = created
        .game
        .map(|game| game.game_id)
        .ok_or_else(|| BenchError::Failed("CreateGame replied without the game".into()))?;
    Ok((game_id, created.seat_tokens))
}

/// [`no_line_moves`] for a game of `k` in a row that must not end before
/// its last move.
///
/// # Errors
/// [`BenchError::Failed`] when `k` < 3, or the board has no room for the
/// moves (fewer cells than moves + 1, or too few of either kind).
pub fn unending_moves(
    rows: i32,
    cols: i32,
    k: i32,
    moves: usize,
    rng: &mut impl rand::Rng,
) -> Result<Vec<(i32, i32)>, BenchError> {
    if k < 3 || moves as i64 >= i64::from(rows) * i64::from(cols) {
        return Err(BenchError::Failed(format!(
            "{moves} moves need k >= 3 and more than {moves} cells (k={k}, {rows}x{cols})"
        )));
    }
    no_line_moves(rows, cols, moves, rng).ok_or_else(|| {
        BenchError::Failed(format!(
            "a {rows}x{cols} board has no room for {moves} moves without three in a row"
        ))
    })
}

/// `moves` cells of a `rows`×`cols` board, alternately for seat 0 and
/// seat 1, such that neither seat ever has three in a row in any
/// direction: one seat takes the cells with `(col + 2·row) mod 4 < 2`, the
/// other the rest, each in an order shuffled by `rng`. So on any board with
/// k ≥ 3 no game ends before its last move (a full board is a draw).
/// `None` when the board has too few cells of either kind.
pub fn no_line_moves(
    rows: i32,
    cols: i32,
    moves: usize,
    rng: &mut impl rand::Rng,
) -> Option<Vec<(i32, i32)>> {
    use rand::seq::SliceRandom;
    let (mut first, mut second): (Vec<_>, Vec<_>) = (0..rows)
        .flat_map(|row| (0..cols).map(move |col| (row, col)))
        .partition(|(row, col)| (col + 2 * row).rem_euclid(4) < 2);
    let (need_first, need_second) = (moves.div_ceil(2), moves / 2);
    if first.len() < need_first || second.len() < need_second {
        std::mem::swap(&mut first, &mut second);
    }
    if first.len() < need_first || second.len() < need_second {
        return None;
    }
    first.shuffle(rng);
    second.shuffle(rng);
    Some(
        (0..moves)
            .map(|ply| {
                if ply % 2 == 0 {
                    first[ply / 2]
                } else {
                    second[ply / 2]
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn quantiles_are_nearest_rank_over_every_sample() {
        let mut samples = Latencies::default();
        for ms in 1..=100 {
            samples.record(Duration::from_millis(ms));
        }
        let summary = samples.summary().expect("samples");
        assert_eq!(summary.count, 100);
        assert_eq!(summary.p50, Duration::from_millis(50));
        assert_eq!(summary.p99, Duration::from_millis(99));
        assert_eq!(summary.max, Duration::from_millis(100));
        assert_eq!(Latencies::default().summary(), None);
    }

    #[test]
    fn no_line_moves_fill_a_15x15_board_without_three_in_a_row() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let moves = no_line_moves(15, 15, 225, &mut rng).expect("the board has room");
        let mut board = [[None; 15]; 15];
        for (ply, (row, col)) in moves.iter().enumerate() {
            assert!(
                board[*row as usize][*col as usize].is_none(),
                "each cell once"
            );
            board[*row as usize][*col as usize] = Some(ply % 2);
        }
        let at = |row: i32, col: i32| {
            board
                .get(usize::try_from(row).ok()?)?
                .get(usize::try_from(col).ok()?)
                .copied()
                .flatten()
        };
        for row in 0..15 {
            for col in 0..15 {
                for (dr, dc) in [(0, 1), (1, 0), (1, 1), (1, -1)] {
                    let line = [0, 1, 2].map(|i| at(row + i * dr, col + i * dc));
                    assert!(
                        line[0].is_none() || line.iter().any(|cell| *cell != line[0]),
                        "three in a row through ({row}, {col})"
                    );
                }
            }
        }
        assert_eq!(no_line_moves(3, 3, 10, &mut rng), None);
    }

    #[test]
    fn slots_share_connections_sixteen_at_a_time() {
        assert_eq!(connections_for(1), 1);
        assert_eq!(connections_for(16), 1);
        assert_eq!(connections_for(17), 2);
        assert_eq!(connections_for(64), 4);
    }
}
