//! Prometheus metrics: the three game-health signals (rejected moves, time
//! to the first move, game lengths), games finished by result, and the
//! service's own (calls, latency, live games, streams, mailboxes, shed
//! calls, the store, bots and analyses, slots and forwarding).
//!
//! One [`Metrics`] per server, made by the [`crate::registry::Registry`] and
//! shared by every layer; [`Metrics::encode`] writes them in the OpenMetrics
//! text format (which Prometheus scrapes), answered by [`service`] on
//! `--metrics-listen` (whose connections [`crate::transport::serve`] bounds
//! as it does the gRPC port's). Every label takes values from a fixed set (game kinds,
//! error reasons, method names, engines), never from what a caller sends, so
//! the number of series stays bounded. docs/reference/metrics.md lists every
//! metric (generated from this registry by tests/clients/docs.rs).

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry as Collection, Unit};

use crate::rules::{EndReason, Outcome, RuleSet};

/// Every name [`kind`] gives.
pub const KINDS: [&str; 8] = [
    "mnk",
    "connect_four",
    "gomoku",
    "wild",
    "othello",
    "snakes_ladders",
    "hex",
    "chess",
];

/// A game kind: the `RuleSet` field the game was created with (one of
/// [`KINDS`]).
pub fn kind(rules: &RuleSet) -> &'static str {
    match rules {
        RuleSet::Mnk(_) => "mnk",
        RuleSet::ConnectFour(_) => "connect_four",
        RuleSet::Gomoku(_) => "gomoku",
        RuleSet::Wild(_) => "wild",
        RuleSet::Othello(_) => "othello",
        RuleSet::SnakesLadders(_) => "snakes_ladders",
        RuleSet::Hex(_) => "hex",
        RuleSet::Chess(_) => "chess",
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabel {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RejectionLabels {
    kind: &'static str,
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FinishLabels {
    kind: &'static str,
    result: &'static str,
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    method: &'static str,
    code: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MethodLabel {
    method: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LimitLabel {
    limit: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LeaseLabel {
    change: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EngineLabel {
    engine: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AnalysisLabels {
    engine: &'static str,
    outcome: &'static str,
}

/// A histogram family whose histograms all have `buckets`.
type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

fn seconds_buckets() -> Histogram {
    // 1 ms to about 33 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

fn first_move_buckets() -> Histogram {
    Histogram::new([
        0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 86400.0,
    ])
}

fn game_seconds_buckets() -> Histogram {
    Histogram::new([
        10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0, 1800.0, 3600.0, 7200.0, 86400.0,
    ])
}

fn plies_buckets() -> Histogram {
    // 1 to 4,096 plies.
    Histogram::new(exponential_buckets(1.0, 2.0, 13))
}

fn events_buckets() -> Histogram {
    Histogram::new([1.0, 2.0, 3.0, 4.0, 8.0, 16.0, 64.0])
}

fn depth_buckets() -> Histogram {
    Histogram::new([1.0, 2.0, 4.0, 8.0, 16.0, 64.0, 256.0, 1024.0])
}

/// The server's metrics. Cheap to clone; every clone records into the same
/// series.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

struct Inner {
    collection: Collection,
    games_created: Family<KindLabel, Counter>,
    moves_rejected: Family<RejectionLabels, Counter>,
    first_move: Histograms<KindLabel>,
    game_plies: Histograms<KindLabel>,
    game_duration: Histograms<KindLabel>,
    games_finished: Family<FinishLabels, Counter>,
    calls: Family<CallLabels, Counter>,
    call_duration: Histograms<MethodLabel>,
    shed: Family<LimitLabel, Counter>,
    live_games: Gauge,
    live_memory: Gauge,
    open_streams: Gauge,
    calls_in_flight: Gauge,
    connections: Gauge,
    lagging_streams: Gauge,
    stream_catch_ups: Counter,
    mailbox_depth: Histogram,
    append_duration: Histogram,
    append_events: Histogram,
    store_catch_ups: Counter,
    store_catch_up_events: Counter,
    bot_moves: Family<EngineLabel, Counter>,
    bot_duration: Histograms<EngineLabel>,
    analyses: Family<AnalysisLabels, Counter>,
    analysis_duration: Histograms<EngineLabel>,
    slots_owned: Gauge,
    leases: Family<LeaseLabel, Counter>,
    appends_fenced: Counter,
    forwarded_calls: Family<MethodLabel, Counter>,
    timeout_attempts: Counter,
    bot_searches: Counter,
}

/// Values sampled when the metrics are scraped, from the parts that hold
/// them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sample {
    /// Games in memory.
    pub live_games: usize,
    /// What they weigh, in bytes (the registry's estimate).
    pub live_memory_bytes: usize,
    /// Event streams open.
    pub open_streams: usize,
    /// Calls being served (streams aside).
    pub calls_in_flight: usize,
    /// Connections open.
    pub connections: usize,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Every metric at zero, registered under the `plylog_` prefix.
    pub fn new() -> Self {
        let mut c = Collection::with_prefix("plylog");
        let games_created = Family::<KindLabel, Counter>::default();
        c.register(
            "games_created",
            "Games created, by kind",
            games_created.clone(),
        );
        let moves_rejected = Family::<RejectionLabels, Counter>::default();
        c.register(
            "moves_rejected",
            "SubmitMove calls refused, by game kind and ErrorInfo reason (kind \"unknown\" when the game did not load or the call was refused before reaching it): the rate says how stale clients are",
            moves_rejected.clone(),
        );
        let first_move: Histograms<KindLabel> =
            Family::new_with_constructor(first_move_buckets as fn() -> Histogram);
        c.register_with_unit(
            "first_move",
            "Time from a game's creation (or from when its players were matched, when CreateGame gave matched_at; or a rematch round's start) to its first move, by kind: a long tail means games nobody plays",
            Unit::Seconds,
            first_move.clone(),
        );
        let game_plies: Histograms<KindLabel> =
            Family::new_with_constructor(plies_buckets as fn() -> Histogram);
        c.register(
            "game_length_plies",
            "Moves on the board when a game ended, by kind: a shift means the rules changed",
            game_plies.clone(),
        );
        let game_duration: Histograms<KindLabel> =
            Family::new_with_constructor(game_seconds_buckets as fn() -> Histogram);
        c.register_with_unit(
            "game_duration",
            "Time from a game's creation (or a round's start) to its end, by kind",
            Unit::Seconds,
            game_duration.clone(),
        );
        let games_finished = Family::<FinishLabels, Counter>::default();
        c.register(
            "games_finished",
            "Games (rounds) ended, by kind, result (win, draw, none) and end reason",
            games_finished.clone(),
        );
        let calls = Family::<CallLabels, Counter>::default();
        c.register(
            "grpc_calls",
            "gRPC calls answered, by method and status code (a stream counts when it ends)",
            calls.clone(),
        );
        let call_duration: Histograms<MethodLabel> =
            Family::new_with_constructor(seconds_buckets as fn() -> Histogram);
        c.register_with_unit(
            "grpc_call_duration",
            "Time from a call's request to its response headers, by method",
            Unit::Seconds,
            call_duration.clone(),
        );
        let shed = Family::<LimitLabel, Counter>::default();
        c.register(
            "shed_calls",
            "Calls refused with UNAVAILABLE / OVERLOADED, by the limit they hit (max_in_flight, mailbox, max_analyses)",
            shed.clone(),
        );
        let live_games = Gauge::default();
        c.register("live_games", "Games in memory", live_games.clone());
        let live_memory = Gauge::default();
        c.register_with_unit(
            "live_games_memory",
            "What the games in memory weigh (the registry's estimate)",
            Unit::Bytes,
            live_memory.clone(),
        );
        let open_streams = Gauge::default();
        c.register(
            "open_streams",
            "StreamEvents calls open",
            open_streams.clone(),
        );
        let calls_in_flight = Gauge::default();
        c.register(
            "calls_in_flight",
            "Calls being served, streams aside (limit: max_in_flight)",
            calls_in_flight.clone(),
        );
        let connections = Gauge::default();
        c.register("connections", "Connections open", connections.clone());
        let lagging_streams = Gauge::default();
        c.register(
            "lagging_streams",
            "Event streams reading events they missed from the store now",
            lagging_streams.clone(),
        );
        let stream_catch_ups = Counter::default();
        c.register(
            "stream_catch_ups",
            "Times an event stream fell behind its game's live events and read what it missed from the store",
            stream_catch_ups.clone(),
        );
        let mailbox_depth = depth_buckets();
        c.register(
            "mailbox_depth",
            "Messages in a game's mailbox as each one is queued, the new one included",
            mailbox_depth.clone(),
        );
        let append_duration = seconds_buckets();
        c.register_with_unit(
            "store_append_duration",
            "Time to append one command's events to the store, commit included",
            Unit::Seconds,
            append_duration.clone(),
        );
        let append_events = events_buckets();
        c.register(
            "store_append_events",
            "Events in one append (the batch of one command)",
            append_events.clone(),
        );
        let store_catch_ups = Counter::default();
        c.register(
            "store_catch_ups",
            "Times a game in memory read events it did not write itself: after an append whose outcome was unknown, or one that lost to a write behind its back (PostgreSQL)",
            store_catch_ups.clone(),
        );
        let store_catch_up_events = Counter::default();
        c.register(
            "store_catch_up_events",
            "Events read by those catch-ups",
            store_catch_up_events.clone(),
        );
        let bot_moves = Family::<EngineLabel, Counter>::default();
        c.register(
            "bot_moves",
            "Moves bots decided, by engine",
            bot_moves.clone(),
        );
        let bot_duration: Histograms<EngineLabel> =
            Family::new_with_constructor(seconds_buckets as fn() -> Histogram);
        c.register_with_unit(
            "bot_move_duration",
            "Time a bot took to decide a move, waiting for a thread included, by engine",
            Unit::Seconds,
            bot_duration.clone(),
        );
        let analyses = Family::<AnalysisLabels, Counter>::default();
        c.register(
            "analyses",
            "SuggestMove and AnalyzePosition searches, by engine and outcome (answered, exhausted, busy, refused)",
            analyses.clone(),
        );
        let analysis_duration: Histograms<EngineLabel> =
            Family::new_with_constructor(seconds_buckets as fn() -> Histogram);
        c.register_with_unit(
            "analysis_duration",
            "Time an analysis searched, by engine",
            Unit::Seconds,
            analysis_duration.clone(),
        );
        let slots_owned = Gauge::default();
        c.register(
            "slots_owned",
            "Slots whose lease this node holds (a store with slots: PostgreSQL)",
            slots_owned.clone(),
        );
        let leases = Family::<LeaseLabel, Counter>::default();
        c.register(
            "slot_leases",
            "Slot leases this node acquired or lost (lost: released, ended, or taken by another node)",
            leases.clone(),
        );
        let appends_fenced = Counter::default();
        c.register(
            "appends_fenced",
            "Appends the store refused because their slot lease was no longer this node's (nothing was written)",
            appends_fenced.clone(),
        );
        let forwarded_calls = Family::<MethodLabel, Counter>::default();
        c.register(
            "forwarded_calls",
            "Calls passed on to the node that runs their game, by method",
            forwarded_calls.clone(),
        );
        let timeout_attempts = Counter::default();
        c.register(
            "timeout_attempts",
            "Timeouts a game's actor decided and tried to append (appended or failed)",
            timeout_attempts.clone(),
        );
        let bot_searches = Counter::default();
        c.register(
            "bot_searches",
            "Bot move searches started",
            bot_searches.clone(),
        );
        Metrics {
            inner: Arc::new(Inner {
                collection: c,
                games_created,
                moves_rejected,
                first_move,
                game_plies,
                game_duration,
                games_finished,
                calls,
                call_duration,
                shed,
                live_games,
                live_memory,
                open_streams,
                calls_in_flight,
                connections,
                lagging_streams,
                stream_catch_ups,
                mailbox_depth,
                append_duration,
                append_events,
                store_catch_ups,
                store_catch_up_events,
                bot_moves,
                bot_duration,
                analyses,
                analysis_duration,
                slots_owned,
                leases,
                appends_fenced,
                forwarded_calls,
                timeout_attempts,
                bot_searches,
            }),
        }
    }

    /// Every metric in the OpenMetrics text format, after setting the
    /// gauges sampled from `sample`.
    pub fn encode(&self, sample: Sample) -> String {
        let i = &self.inner;
        let gauge = |g: &Gauge, v: usize| g.set(i64::try_from(v).unwrap_or(i64::MAX));
        gauge(&i.live_games, sample.live_games);
        gauge(&i.live_memory, sample.live_memory_bytes);
        gauge(&i.open_streams, sample.open_streams);
        gauge(&i.calls_in_flight, sample.calls_in_flight);
        gauge(&i.connections, sample.connections);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &i.collection)
            .expect("writing to a String never fails");
        text
    }

    /// A game of `kind` was created.
    pub fn game_created(&self, kind: &'static str) {
        self.inner
            .games_created
            .get_or_create(&KindLabel { kind })
            .inc();
    }

    /// A SubmitMove call was refused with ErrorInfo `reason`, on a game of
    /// `kind` (`"unknown"` when the game is not known): counted by the
    /// registry for a refusal of the game, by the API for one before it.
    pub fn move_rejected(&self, kind: &'static str, reason: &'static str) {
        self.inner
            .moves_rejected
            .get_or_create(&RejectionLabels { kind, reason })
            .inc();
    }

    /// A game's (or round's) first move landed `elapsed_ms` after it
    /// started.
    pub fn first_move(&self, kind: &'static str, elapsed_ms: i64) {
        self.inner
            .first_move
            .get_or_create(&KindLabel { kind })
            .observe(seconds(elapsed_ms));
    }

    /// A game (or round) ended `elapsed_ms` after it started, with `plies`
    /// moves on the board.
    pub fn game_finished(
        &self,
        kind: &'static str,
        outcome: Option<&Outcome>,
        reason: EndReason,
        plies: usize,
        elapsed_ms: i64,
    ) {
        let result = match outcome {
            Some(Outcome::Win { .. }) => "win",
            Some(Outcome::Draw) => "draw",
            None => "none",
        };
        let i = &self.inner;
        i.games_finished
            .get_or_create(&FinishLabels {
                kind,
                result,
                reason: end_reason(reason),
            })
            .inc();
        i.game_plies
            .get_or_create(&KindLabel { kind })
            .observe(plies as f64);
        i.game_duration
            .get_or_create(&KindLabel { kind })
            .observe(seconds(elapsed_ms));
    }

    /// A call to `method` was answered with `code` (a stream's when it
    /// ends).
    pub fn call_answered(&self, method: &'static str, code: tonic::Code) {
        self.inner
            .calls
            .get_or_create(&CallLabels {
                method,
                code: code_name(code),
            })
            .inc();
    }

    /// A call to `method` had its response headers after `latency`.
    pub fn call_latency(&self, method: &'static str, latency: Duration) {
        self.inner
            .call_duration
            .get_or_create(&MethodLabel { method })
            .observe(latency.as_secs_f64());
    }

    /// This node holds `slots` slot leases now.
    pub fn slots_owned(&self, slots: usize) {
        self.inner
            .slots_owned
            .set(i64::try_from(slots).unwrap_or(i64::MAX));
    }

    /// This node acquired `count` slot leases.
    pub fn leases_acquired(&self, count: u64) {
        let change = "acquired";
        self.inner
            .leases
            .get_or_create(&LeaseLabel { change })
            .inc_by(count);
    }

    /// This node lost (or released) `count` slot leases.
    pub fn leases_lost(&self, count: u64) {
        let change = "lost";
        self.inner
            .leases
            .get_or_create(&LeaseLabel { change })
            .inc_by(count);
    }

    /// The store refused an append for its fence.
    pub fn append_fenced(&self) {
        self.inner.appends_fenced.inc();
    }

    /// A `method` call was passed on to its game's owner.
    pub fn call_forwarded(&self, method: &'static str) {
        self.inner
            .forwarded_calls
            .get_or_create(&MethodLabel { method })
            .inc();
    }

    /// A game's actor tried to append a timeout it decided (appended, or
    /// failed); a look that found nothing due is not counted.
    pub fn timeout_attempted(&self) {
        self.inner.timeout_attempts.inc();
    }

    /// A bot move search started.
    pub fn bot_search_started(&self) {
        self.inner.bot_searches.inc();
    }

    /// A call was refused at `limit` (`max_in_flight`, `mailbox`,
    /// `max_analyses`).
    pub fn shed(&self, limit: &'static str) {
        self.inner.shed.get_or_create(&LimitLabel { limit }).inc();
    }

    /// A message was queued for a game, finding `depth` messages in its
    /// mailbox with it.
    pub fn mailbox_depth(&self, depth: usize) {
        self.inner.mailbox_depth.observe(depth as f64);
    }

    /// One command's `events` were appended in `elapsed`.
    pub fn appended(&self, events: usize, elapsed: Duration) {
        self.inner.append_duration.observe(elapsed.as_secs_f64());
        self.inner.append_events.observe(events as f64);
    }

    /// A game in memory read `events` that another node appended.
    pub fn store_caught_up(&self, events: u64) {
        self.inner.store_catch_ups.inc();
        self.inner.store_catch_up_events.inc_by(events);
    }

    /// An event stream fell behind and reads what it missed from the store
    /// while the returned guard lives.
    pub fn stream_catching_up(&self) -> LaggingGuard {
        self.inner.stream_catch_ups.inc();
        self.inner.lagging_streams.inc();
        LaggingGuard(self.inner.lagging_streams.clone())
    }

    /// Times an event stream fell behind (the counter's value).
    pub fn stream_catch_ups(&self) -> u64 {
        self.inner.stream_catch_ups.get()
    }

    /// A bot of `engine` decided a move in `elapsed`.
    pub fn bot_moved(&self, engine: &'static str, elapsed: Duration) {
        let i = &self.inner;
        i.bot_moves.get_or_create(&EngineLabel { engine }).inc();
        i.bot_duration
            .get_or_create(&EngineLabel { engine })
            .observe(elapsed.as_secs_f64());
    }

    /// An analysis by `engine` ended with `outcome` (`answered`,
    /// `exhausted`, `busy`, `refused`) after `elapsed`.
    pub fn analyzed(&self, engine: &'static str, outcome: &'static str, elapsed: Duration) {
        let i = &self.inner;
        i.analyses
            .get_or_create(&AnalysisLabels { engine, outcome })
            .inc();
        if outcome != "busy" {
            i.analysis_duration
                .get_or_create(&EngineLabel { engine })
                .observe(elapsed.as_secs_f64());
        }
    }
}

/// Holds an event stream in `plylog_lagging_streams` until dropped.
#[derive(Debug)]
pub struct LaggingGuard(Gauge<i64, std::sync::atomic::AtomicI64>);

impl Drop for LaggingGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}

fn seconds(ms: i64) -> f64 {
    ms.max(0) as f64 / 1000.0
}

/// The end reason as a label: `line_completed`, `timeout`, ...
fn end_reason(reason: EndReason) -> &'static str {
    match reason {
        EndReason::LineCompleted => "line_completed",
        EndReason::BoardFull => "board_full",
        EndReason::Repetition => "repetition",
        EndReason::DiscCount => "disc_count",
        EndReason::RaceFinished => "race_finished",
        EndReason::Connection => "connection",
        EndReason::Resignation => "resignation",
        EndReason::Timeout => "timeout",
        EndReason::Agreement => "agreement",
        EndReason::Aborted => "aborted",
        EndReason::Abandoned => "abandoned",
        EndReason::Checkmate => "checkmate",
        EndReason::Stalemate => "stalemate",
        EndReason::InsufficientMaterial => "insufficient_material",
        EndReason::ThreefoldRepetition => "threefold_repetition",
        EndReason::FiftyMoves => "fifty_moves",
        EndReason::FivefoldRepetition => "fivefold_repetition",
        EndReason::SeventyFiveMoves => "seventy_five_moves",
    }
}

/// A gRPC status code's name as the gRPC spec spells it (`OK`,
/// `INVALID_ARGUMENT`, ...).
pub fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code as C;
    match code {
        C::Ok => "OK",
        C::Cancelled => "CANCELLED",
        C::Unknown => "UNKNOWN",
        C::InvalidArgument => "INVALID_ARGUMENT",
        C::DeadlineExceeded => "DEADLINE_EXCEEDED",
        C::NotFound => "NOT_FOUND",
        C::AlreadyExists => "ALREADY_EXISTS",
        C::PermissionDenied => "PERMISSION_DENIED",
        C::ResourceExhausted => "RESOURCE_EXHAUSTED",
        C::FailedPrecondition => "FAILED_PRECONDITION",
        C::Aborted => "ABORTED",
        C::OutOfRange => "OUT_OF_RANGE",
        C::Unimplemented => "UNIMPLEMENTED",
        C::Internal => "INTERNAL",
        C::Unavailable => "UNAVAILABLE",
        C::DataLoss => "DATA_LOSS",
        C::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// The metrics endpoint as a service for [`crate::transport::serve`]
/// (which bounds its connections as it does the gRPC port's): `/metrics`
/// answers every metric of `metrics`, with the gauges sampled by `sample`
/// at each scrape; any other path is 404.
pub fn service(
    metrics: Metrics,
    sample: impl Fn() -> Sample + Send + Sync + 'static,
) -> impl tower::Service<
    http::Request<hyper::body::Incoming>,
    Response = http::Response<tonic::body::Body>,
    Error = std::convert::Infallible,
    Future = std::future::Ready<
        Result<http::Response<tonic::body::Body>, std::convert::Infallible>,
    >,
> + Clone
+ Send
+ 'static {
    let sample = Arc::new(sample);
    tower::service_fn(move |request: http::Request<hyper::body::Incoming>| {
        let reply = if request.uri().path() == "/metrics" {
            http::Response::builder()
                .header(
                    http::header::CONTENT_TYPE,
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                )
                .body(tonic::body::Body::new(metrics.encode(sample())))
        } else {
            http::Response::builder()
                .status(http::StatusCode::NOT_FOUND)
                .body(tonic::body::Body::new(
                    "metrics are at /metrics\n".to_owned(),
                ))
        };
        std::future::ready(Ok(reply.expect("static response parts are valid")))
    })
}
