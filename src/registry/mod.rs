//! Live games: one actor task per game, loading by replay, idle eviction,
//! and event subscriptions.
//!
//! - [`Registry`]: finds or loads a game's actor and sends it commands; also
//!   creation, listing and replay, which read the store directly.
//! - `actor`: the task that owns one game's state and runs its commands one
//!   at a time: dedupe the request id, check the turn token, decide, append
//!   durably, evolve, broadcast, reply.
//! - `stream`: StreamEvents, history then live with no gap or duplicate.
//! - [`log`]: a stored log decoded and replayed, for the actors and for
//!   the operator commands alike.
//!
//! The registry knows no game's rules: it calls [`crate::game::decide`] and
//! [`crate::game::evolve`].

mod actor;
mod clock;
mod error;
mod heavy;
pub mod log;
mod presence;
mod replay;
mod residency;
pub mod snapshot;
mod stream;
mod thinking;
mod wakes;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prost::Message;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

pub use clock::{Clock, ClockSample};
pub use error::RegistryError;
pub use heavy::HeavyReadSettings;
pub use stream::EventStream;
pub use thinking::Answer;
pub use thinking::EngineSettings;

use crate::game::{Command, GameConfig, GameState, SeatLimits};
use crate::metrics::Metrics;
use crate::proto::convert::View;
use crate::proto::{self as pb, convert};
use crate::store::{EventStore, ListOrder, LoadFrom, NewEvent, NewGame, TokenHash};
use crate::tokens::SeatTokenKeys;
use actor::{Actor, Loaded, Msg};
use residency::{ActorShared, Budget, Limits, make_room};

/// Limits and timings of a registry.
#[derive(Debug, Clone)]
pub struct RegistrySettings {
    /// Largest board a new game may have, in cells (default 1,000,000).
    pub max_cells: u64,
    /// Seat count and name length limits.
    pub seat_limits: SeatLimits,
    /// How long a game with no traffic and no subscribers stays in memory.
    pub idle_timeout: Duration,
    /// Commands a game's mailbox holds before further ones are refused with
    /// UNAVAILABLE / OVERLOADED.
    pub mailbox: usize,
    /// Live events buffered per game for subscribers; a subscriber further
    /// behind catches up from the store.
    pub broadcast_capacity: usize,
    /// How long a followed stream stays silent before a heartbeat.
    pub heartbeat_interval: Duration,
    /// Event streams open at once on this server (default 10,000).
    pub max_streams: usize,
    /// Event streams open at once on one game (default 1,000).
    pub max_streams_per_game: usize,
    /// Games held in memory at once (default 100,000). An idle game leaves
    /// after `idle_timeout`, or sooner, least recently used first, to make
    /// room for another.
    pub max_live_games: usize,
    /// What the games held in memory may weigh in all, in bytes (default 2
    /// GiB, estimated per game from its board, moves, recorded requests and
    /// buffers). Idle games are evicted, least recently used first, to keep
    /// under it.
    pub max_live_bytes: usize,
    /// On a shared store (Postgres), how often every game in memory catches
    /// up from the store even without a notification (default 2 s): the
    /// safety net for notifications lost while a connection was down.
    pub catch_up_interval: Duration,
    /// Where the server reads the time for commands, events and deadlines
    /// (the system clock; tests set a manual one).
    pub clock: Clock,
    /// Limits on bot moves and analyses.
    pub engines: EngineSettings,
    /// Limits on the reads that rebuild positions (GetReplay pages with
    /// positions, views and analyses at a past sequence).
    pub heavy_reads: HeavyReadSettings,
    /// Events between a game's snapshots (default 1,000; 0: none taken).
    /// A game whose log has grown this many events past its latest
    /// snapshot (or its start) gets a new one after its next append; cold
    /// loads and views of past sequences start from the latest usable one.
    pub snapshot_every: u64,
}

impl Default for RegistrySettings {
    fn default() -> Self {
        RegistrySettings {
            max_cells: 1_000_000,
            seat_limits: SeatLimits::default(),
            idle_timeout: Duration::from_secs(300),
            mailbox: 1024,
            broadcast_capacity: 1024,
            heartbeat_interval: Duration::from_secs(15),
            max_streams: 10_000,
            max_streams_per_game: 1_000,
            max_live_games: 100_000,
            max_live_bytes: 2 << 30,
            catch_up_interval: Duration::from_secs(2),
            clock: Clock::System,
            engines: EngineSettings::default(),
            heavy_reads: HeavyReadSettings::default(),
            snapshot_every: 1000,
        }
    }
}

/// What an analysis asks for (see [`Registry::analyze`]).
#[derive(Debug, Clone, Copy)]
pub struct AnalysisRequest {
    /// The engine; `None` for the strongest for the game.
    pub engine: Option<crate::engine::EngineKind>,
    /// 1 to [`crate::engine::MAX_STRENGTH`].
    pub strength: u8,
    /// Seeds the engine's generator (stream: the position's sequence + 1).
    pub seed: u64,
    /// The node budget; 0 for the server's.
    pub nodes: u64,
    /// The time budget; `None` for the server's.
    pub time: Option<Duration>,
    /// One move (SuggestMove) rather than every move's score.
    pub suggest: bool,
}

/// What an analysis found, for the seat to move after `sequence`.
#[derive(Debug, Clone)]
pub struct AnalysisReply {
    /// The seat to move.
    pub seat: crate::rules::Seat,
    /// The sequence of the position analysed.
    pub sequence: u64,
    /// The engine that answered.
    pub engine: crate::engine::EngineKind,
    /// The move, or every move's score.
    pub answer: Answer,
}

/// The seat credential a call presented.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Credential {
    /// No `authorization` metadata.
    #[default]
    None,
    /// A bearer token, by its SHA-256 hash.
    Token(TokenHash),
    /// An `authorization` value that is not a bearer token; says what is
    /// wrong with it. Refused by games that take seat tokens, ignored by
    /// the others.
    Malformed(String),
}

/// A request's idempotency key, fingerprint, turn token, credential and the
/// view its reply asks for.
#[derive(Debug, Clone, Default)]
pub struct RequestMeta {
    /// The caller's request id; empty means no deduplication.
    pub request_id: String,
    /// The request as received, with id and turn token cleared (and the
    /// seat token's hash); empty when `request_id` is, since nothing
    /// compares it then.
    pub fingerprint: Vec<u8>,
    /// The sequence the caller expects the game to be at.
    pub expected_sequence: Option<u64>,
    /// The seat credential the call presented.
    pub credential: Credential,
    /// How much of the game the reply carries (internal commands: basic).
    pub view: convert::View,
}

/// What a command appended and the game after it.
#[derive(Debug, Clone)]
pub struct CommandReply {
    /// The appended events, in order.
    pub events: Vec<pb::GameEvent>,
    /// The game after them.
    pub game: pb::Game,
    /// The new token of a ReissueSeatToken command; `None` for others.
    pub seat_token: Option<String>,
}

/// What CreateGame made (or, for a retry, had made).
#[derive(Debug, Clone)]
pub struct Created {
    /// The game as it stood right after creation.
    pub game: pb::Game,
    /// One token per seat, in seat order; empty when the game takes no seat
    /// tokens. For a retry, a seat whose token was re-issued since (or whose
    /// secret was retired) gets an empty string.
    pub seat_tokens: Vec<String>,
    /// Whether this call created the game (false: a retry).
    pub created: bool,
}

/// A page of legal moves.
#[derive(Debug, Clone)]
pub struct LegalMovesPage {
    /// The reply, without its page token.
    pub reply: pb::ListLegalMovesResponse,
    /// The offset of the next page, if there is one.
    pub next_offset: Option<usize>,
}

#[derive(Clone)]
struct Handle {
    /// Tells this actor from an earlier or later one of the same game.
    id: u64,
    /// Boxed messages: a queue keeps its capacity after a burst, so a
    /// slot holds a pointer rather than a whole message.
    mailbox: flume::Sender<Box<(Msg, tracing::Span)>>,
    shared: Arc<ActorShared>,
}

impl AsRef<ActorShared> for Handle {
    fn as_ref(&self) -> &ActorShared {
        &self.shared
    }
}

impl Handle {
    /// Queues `msg`, counted as pending (call under the map lock).
    ///
    /// # Errors
    /// [`RegistryError::Overloaded`] when the mailbox is full.
    fn queue(&self, msg: Msg, tick: u64, metrics: &Metrics) -> Result<(), RegistryError> {
        metrics.mailbox_depth(self.shared.queued(tick));
        self.mailbox
            .try_send(Box::new((msg, tracing::Span::current())))
            .map_err(|e| {
                self.shared.done();
                match e {
                    flume::TrySendError::Full(_) => {
                        metrics.shed("mailbox");
                        RegistryError::Overloaded
                    }
                    flume::TrySendError::Disconnected(_) => {
                        RegistryError::Internal("game actor mailbox closed".into())
                    }
                }
            })
    }
}

struct Inner {
    store: Arc<dyn EventStore>,
    settings: RegistrySettings,
    /// The secrets seat tokens are derived from; `None` when the server has
    /// none (then no game can be created with seat tokens or have one
    /// re-issued).
    keys: Option<SeatTokenKeys>,
    actors: Mutex<HashMap<String, Handle>>,
    /// What the games in memory weigh.
    budget: Budget,
    shutdown: CancellationToken,
    /// Event streams open now.
    streams: AtomicUsize,
    /// The server's metrics.
    metrics: Metrics,
    /// Messages whose actor stopped without answering them.
    actor_failures: std::sync::atomic::AtomicU64,
    /// On a shared store, where this node's presence counts go.
    presence: Option<presence::PresenceSink>,
    /// The pools bot moves and analyses run in.
    thinking: thinking::Thinking,
    /// Wakes the timer queue (see [`wakes`]): a game left memory, or a new
    /// game was not kept there.
    wakes: Arc<tokio::sync::Notify>,
    /// When this registry started, on its clock (Unix epoch milliseconds):
    /// a seat's absence recorded before counts from here.
    started_at_ms: i64,
    /// The pool the reads that rebuild positions run in.
    heavy: heavy::HeavyReads,
}

/// The live games of one server. Cheap to clone.
#[derive(Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

/// Which steps of a GetReplay page carry the position after them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayPositions {
    /// `None`: every step. `Some(0)`: none. `Some(n)`: the steps whose
    /// sequence is a multiple of `n`, and the game's last.
    pub every: Option<u32>,
    /// These sequences as well, sorted.
    pub at: Vec<u64>,
}

impl ReplayPositions {
    /// Whether any step carries its position.
    pub fn any(&self) -> bool {
        self.every != Some(0) || !self.at.is_empty()
    }

    /// Whether the step of `sequence` carries its position, in a game whose
    /// log ends at `last`.
    pub fn wants(&self, sequence: u64, last: u64) -> bool {
        let every = match self.every {
            None => true,
            Some(0) => false,
            Some(n) => sequence.is_multiple_of(u64::from(n)) || sequence == last,
        };
        every || self.at.binary_search(&sequence).is_ok()
    }
}

/// Most encoded bytes of the steps of one GetReplay page, or of the games
/// of one ListGames page (2 MiB, half a default client's 4 MiB limit); a
/// page always holds at least one.
pub const PAGE_BYTES: usize = 2 * 1024 * 1024;

/// Most pieces the positions of one GetReplay page hold in all (about 2 MB
/// on the wire), so a page of a game on a huge board stays small.
pub const REPLAY_PIECE_BUDGET: usize = 250_000;

impl Registry {
    /// A registry over `store`, deriving seat tokens with `keys`. On a
    /// shared store it follows the store's change feed, telling each game in
    /// memory to catch up when another node appends to it (and every one of
    /// them periodically).
    pub fn new(
        store: Arc<dyn EventStore>,
        settings: RegistrySettings,
        keys: Option<SeatTokenKeys>,
    ) -> Self {
        let changes = store.changes();
        let shutdown = CancellationToken::new();
        let thinking = thinking::Thinking::new(settings.engines, shutdown.clone());
        let settings_heavy = settings.heavy_reads;
        let presence = store.shared().then(|| {
            presence::spawn_writer(Arc::clone(&store), settings.clock.clone(), shutdown.clone())
        });
        let started_at_ms = settings.clock.now_ms();
        let registry = Registry {
            inner: Arc::new(Inner {
                store,
                settings,
                keys,
                actors: Mutex::new(HashMap::new()),
                budget: Budget::new(),
                shutdown,
                streams: AtomicUsize::new(0),
                metrics: Metrics::new(),
                actor_failures: std::sync::atomic::AtomicU64::new(0),
                presence,
                thinking,
                wakes: Arc::new(tokio::sync::Notify::new()),
                started_at_ms,
                heavy: heavy::HeavyReads::new(settings_heavy),
            }),
        };
        if let Some(changes) = changes {
            let weak = Arc::downgrade(&registry.inner);
            tokio::spawn(follow_changes(weak, changes));
        }
        if matches!(registry.settings().clock, Clock::Referenced(_)) {
            let weak = Arc::downgrade(&registry.inner);
            tokio::spawn(keep_clock_corrected(weak));
        }
        registry
    }

    /// Corrects a referenced clock (see [`Clock::correct`]) toward the
    /// store's: five readings of the database's clock, the quickest one
    /// kept. Returns the offset and error set, in milliseconds; `None` when
    /// the clock is not referenced or the store has no clock of its own.
    ///
    /// # Errors
    /// Store failures (the clock keeps its last correction).
    pub async fn correct_clock(&self) -> Result<Option<(i64, i64)>, RegistryError> {
        let clock = &self.inner.settings.clock;
        if !matches!(clock, Clock::Referenced(_)) {
            return Ok(None);
        }
        let mut samples = Vec::with_capacity(CLOCK_SAMPLES);
        for _ in 0..CLOCK_SAMPLES {
            let sent_ms = clock.local_ms();
            let Some(reference_ms) = self.inner.store.clock_ms().await? else {
                return Ok(None);
            };
            let received_ms = clock.local_ms();
            samples.push(ClockSample {
                sent_ms,
                reference_ms,
                received_ms,
            });
        }
        Ok(clock.correct(&samples))
    }

    /// Asks the game's actor, if it is in memory, to catch up to `upto`
    /// (every actor when `game_id` is `None`). A full mailbox skips it: the
    /// next command or periodic catch-up reads the store anyway.
    fn catch_up(&self, game_id: Option<&str>, upto: Option<u64>) {
        let actors = self.inner.actors.lock().expect("registry lock");
        let tick = self.inner.budget.tick();
        let nudge = |handle: &Handle| {
            let _ = handle.queue(Msg::CatchUp { upto }, tick, &self.inner.metrics);
        };
        match game_id {
            Some(game_id) => actors.get(game_id).into_iter().for_each(nudge),
            None => actors.values().for_each(nudge),
        }
    }

    /// The settings.
    pub fn settings(&self) -> &RegistrySettings {
        &self.inner.settings
    }

    /// Ends open event streams with UNAVAILABLE / SHUTTING_DOWN. In-flight
    /// commands still complete.
    pub fn shutdown(&self) {
        self.inner.shutdown.cancel();
    }

    /// How many games are in memory.
    pub fn live_games(&self) -> usize {
        self.inner.actors.lock().expect("registry lock").len()
    }

    /// What the games in memory weigh, in bytes (an estimate; see
    /// [`RegistrySettings::max_live_bytes`]).
    pub fn live_bytes(&self) -> usize {
        self.inner.budget.total()
    }

    /// The kind of game `game_id` is (see [`crate::metrics::kind`]), when
    /// it is in memory and loaded.
    pub fn kind_of(&self, game_id: &str) -> Option<&'static str> {
        let actors = self.inner.actors.lock().expect("registry lock");
        actors.get(game_id).and_then(|h| h.shared.kind())
    }

    /// Whether `game_id` is in memory now.
    pub fn is_live(&self, game_id: &str) -> bool {
        self.inner
            .actors
            .lock()
            .expect("registry lock")
            .contains_key(game_id)
    }

    fn limits(&self) -> Limits {
        Limits {
            games: self.inner.settings.max_live_games,
            bytes: self.inner.settings.max_live_bytes,
        }
    }

    /// After `game_id`'s weight grew: evicts idle other games, least
    /// recently used first, while the live games weigh more than the budget.
    fn make_room_for(&self, game_id: &str) {
        if self.inner.budget.total() <= self.inner.settings.max_live_bytes {
            return;
        }
        let mut actors = self.inner.actors.lock().expect("registry lock");
        if !make_room(
            &mut actors,
            &self.inner.budget,
            self.limits(),
            0,
            Some(game_id),
        ) {
            tracing::debug!(
                live_bytes = self.inner.budget.total(),
                "over the memory budget with every other game busy or watched"
            );
        }
    }

    /// After an actor answered a message: when the last eviction left the
    /// live games over a limit (every other game was busy or watched then),
    /// evicts idle games now, least recently used first, the caller's own
    /// game included (it may be idle now too). So games loaded in a rush
    /// leave as soon as the rush is over, not at their idle timeout.
    fn settle(&self) {
        if !self.inner.budget.over() {
            return;
        }
        let mut actors = self.inner.actors.lock().expect("registry lock");
        make_room(&mut actors, &self.inner.budget, self.limits(), 0, None);
    }

    /// Sends a message to the game's actor, spawning (and so loading) it when
    /// the game is not in memory. `make` builds the message around a fresh
    /// reply channel; a message whose actor stopped without answering it is
    /// sent again to a new one (up to three times).
    async fn ask<T>(
        &self,
        game_id: &str,
        make: impl Fn(oneshot::Sender<Result<T, RegistryError>>) -> Msg,
    ) -> Result<T, RegistryError> {
        for _ in 0..3 {
            let (reply, answer) = oneshot::channel();
            self.send(game_id, make(reply), None)?;
            if let Ok(result) = answer.await {
                return result;
            }
            // The actor stopped before answering: eviction, shutdown and a
            // failed load all answer what is queued, so it panicked. Count
            // it (see `actor_failures`) and ask a fresh one, which loads the
            // game from the log.
            self.inner.actor_failures.fetch_add(1, Ordering::Relaxed);
        }
        Err(RegistryError::Internal(format!(
            "game {game_id}: its actor stopped three times"
        )))
    }

    /// Queues `msg` for the game's actor under the map lock, spawning the
    /// actor if needed (with `state` when the caller already has it). A game
    /// that must be loaded while memory is at its limits first evicts idle
    /// games, least recently used first. Work on a game that exists is never
    /// refused for room: when every game in memory is busy or watched, the
    /// game loads anyway (such games are bounded by `max_in_flight` and
    /// `max_streams`).
    ///
    /// # Errors
    /// [`RegistryError::Overloaded`] when the mailbox is full.
    fn send(&self, game_id: &str, msg: Msg, state: Option<Loaded>) -> Result<(), RegistryError> {
        let mut actors = self.inner.actors.lock().expect("registry lock");
        let tick = self.inner.budget.tick();
        let handle = match actors.get(game_id) {
            Some(handle) if !handle.mailbox.is_disconnected() => handle.clone(),
            _ => {
                if !make_room(&mut actors, &self.inner.budget, self.limits(), 1, None) {
                    tracing::debug!(
                        live_games = actors.len(),
                        "at the memory limits with every game busy or watched; loading anyway"
                    );
                }
                let handle = Actor::spawn(self.clone(), game_id.to_owned(), state);
                if let Some(old) = actors.insert(game_id.to_owned(), handle.clone()) {
                    self.inner.budget.release(&old.shared);
                }
                handle
            }
        };
        handle.queue(msg, tick, &self.inner.metrics)
    }

    /// Removes the game's actor from the map, if `actor` is still the one
    /// there, whatever its mailbox holds (an actor that failed to load).
    fn forget(&self, game_id: &str, actor: u64) {
        let mut actors = self.inner.actors.lock().expect("registry lock");
        if actors.get(game_id).is_some_and(|h| h.id == actor)
            && let Some(handle) = actors.remove(game_id)
        {
            self.inner.budget.release(&handle.shared);
        }
    }

    /// Removes the game's actor from the map if `actor` is still the one
    /// there and the game is idle under the lock (nothing pending, nobody
    /// subscribed; a deadline it waits on is the timer queue's). Returns
    /// whether the actor should stop.
    fn leave(&self, game_id: &str, actor: u64, shared: &ActorShared) -> bool {
        let mut actors = self.inner.actors.lock().expect("registry lock");
        if !shared.is_idle() {
            return false;
        }
        if actors.get(game_id).is_some_and(|h| h.id == actor)
            && let Some(handle) = actors.remove(game_id)
        {
            self.inner.budget.release(&handle.shared);
        }
        true
    }

    /// Creates a game, with a token for each seat when `seat_tokens` (see
    /// [`crate::tokens`]), or returns the game an earlier identical request
    /// (same request id) created, with the same tokens.
    ///
    /// # Errors
    /// [`RegistryError::GameExists`], [`RegistryError::RequestIdReused`],
    /// [`RegistryError::NoTokenSecret`] when tokens are asked for and the
    /// server has no secret, store failures.
    pub async fn create(
        &self,
        game_id: Option<String>,
        config: GameConfig,
        seat_tokens: bool,
        request: RequestMeta,
    ) -> Result<Created, RegistryError> {
        let store = &self.inner.store;
        if let Some(created) = self.find_creation(&request).await? {
            return Ok(created);
        }
        if config.absence().is_some() && !seat_tokens {
            return Err(RegistryError::PresenceUnavailable {
                why: "seat tokens: a seat is present while it streams with its token",
            });
        }
        let recorded_at_ms = self.settings().clock.now_ms();
        let game_id = game_id.unwrap_or_else(|| time_ordered_id(recorded_at_ms));
        let tokens: Vec<String> = match (&self.inner.keys, seat_tokens) {
            (_, false) => Vec::new(),
            (None, true) => return Err(RegistryError::NoTokenSecret),
            (Some(keys), true) => (0..config.seats().len() as u32)
                .map(|seat| keys.issue(&game_id, seat, 1))
                .collect(),
        };
        let seat_token_hashes: Vec<TokenHash> =
            tokens.iter().map(|t| crate::tokens::hash(t)).collect();
        let state = GameState::new(config.clone(), recorded_at_ms);
        // Nobody follows a new game yet: a seat to move under an absence
        // policy is away from its first turn's start.
        let absent_since = state.config().absence().map(|_| recorded_at_ms);
        let grace_ends = state
            .config()
            .absence()
            .map(|policy| recorded_at_ms.saturating_add(policy.grace_ms as i64));
        let wake = wakes::of(&state, grace_ends, absent_since, None);
        let event = crate::game::Event::GameCreated(config.clone());
        let payload =
            convert::event_to_proto(&game_id, 1, recorded_at_ms, &event, config.rules(), 0)
                .encode_to_vec()
                .into();
        let created = NewEvent::chained(
            &crate::store::chain::GENESIS,
            &game_id,
            1,
            convert::event_type(&event),
            payload,
            recorded_at_ms,
        );
        let chain = created.chain;
        let new_game = NewGame {
            game_id: game_id.clone(),
            created,
            request: (!request.request_id.is_empty())
                .then(|| (request.request_id.clone(), request.fingerprint.clone())),
            status: pb::GameStatus::InProgress as i32,
            seat_token_hashes: seat_token_hashes.clone(),
            wake,
        };
        match store.create(new_game).await {
            Ok(()) => {
                self.inner
                    .metrics
                    .game_created(crate::metrics::kind(config.rules()));
                let game = convert::game_to_proto(&game_id, &state, recorded_at_ms, 1);
                // Keep the new game warm, if there is room: its first move
                // then needs no replay.
                let mut actors = self.inner.actors.lock().expect("registry lock");
                let room = !actors.contains_key(&game_id)
                    && make_room(&mut actors, &self.inner.budget, self.limits(), 1, None);
                if let std::collections::hash_map::Entry::Vacant(slot) = actors.entry(game_id)
                    && room
                {
                    let loaded = Loaded {
                        state,
                        created_at_ms: recorded_at_ms,
                        requests: HashMap::new(),
                        seat_token_hashes,
                        snapshot_at: 0,
                        wake,
                        last_recorded_at_ms: recorded_at_ms,
                        chain,
                        unchecked_prefix: None,
                    };
                    let handle = Actor::spawn(self.clone(), slot.key().clone(), Some(loaded));
                    slot.insert(handle);
                } else if wake.at_ms.is_some() {
                    // Not in memory here: the timer queue picks it up.
                    self.inner.wakes.notify_one();
                }
                Ok(Created {
                    game,
                    seat_tokens: tokens,
                    created: true,
                })
            }
            Err(crate::store::StoreError::GameExists) => {
                match self.find_creation(&request).await? {
                    Some(created) => Ok(created),
                    None => Err(RegistryError::GameExists { game_id }),
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The game a CreateGame request id already created, as it was created,
    /// with its seat tokens derived again.
    async fn find_creation(&self, request: &RequestMeta) -> Result<Option<Created>, RegistryError> {
        if request.request_id.is_empty() {
            return Ok(None);
        }
        let Some(found) = self.inner.store.find_creation(&request.request_id).await? else {
            return Ok(None);
        };
        if found.fingerprint != request.fingerprint {
            return Err(RegistryError::RequestIdReused {
                request_id: request.request_id.clone(),
            });
        }
        let mut game = self.game(&found.game_id, Some(1), View::Full).await?;
        // The original reply, exactly: as the log stood right after it.
        game.last_sequence = 1;
        let seat_tokens = self.recover_tokens(&found.game_id, 1, &found.seat_token_hashes);
        Ok(Some(Created {
            game,
            seat_tokens,
            created: false,
        }))
    }

    /// The tokens issued at `generation` whose hashes are `hashes` (one per
    /// seat, in seat order), derived again; an empty string for a seat none
    /// of the server's secrets gives.
    fn recover_tokens(&self, game_id: &str, generation: u64, hashes: &[TokenHash]) -> Vec<String> {
        let Some(keys) = &self.inner.keys else {
            return Vec::new();
        };
        hashes
            .iter()
            .zip(0..)
            .map(|(hash, seat)| {
                keys.recover(game_id, seat, generation, hash)
                    .unwrap_or_default()
            })
            .collect()
    }

    /// Runs `command` on the game: deduplicated by request id, checked
    /// against the turn token, decided, appended durably, then applied.
    ///
    /// # Errors
    /// [`RegistryError`]: the game is unknown, the command is refused, the
    /// turn token is stale, the request id is reused, the game is
    /// overloaded, or the store failed.
    pub async fn execute(
        &self,
        game_id: &str,
        command: Command,
        request: RequestMeta,
    ) -> Result<CommandReply, RegistryError> {
        self.ask(game_id, |reply| Msg::Execute {
            command,
            request: request.clone(),
            reply,
        })
        .await
    }

    /// The game at its latest position, or right after event `at`, as
    /// `view` shows it. A position before the last is rebuilt from the
    /// store, a heavy read (see [`HeavyReadSettings`]).
    ///
    /// # Errors
    /// [`RegistryError::NotFound`], [`RegistryError::SequenceOutOfRange`],
    /// [`RegistryError::HeavyReadsBusy`], store failures.
    pub async fn game(
        &self,
        game_id: &str,
        at: Option<u64>,
        view: View,
    ) -> Result<pb::Game, RegistryError> {
        match self.before_the_last(game_id, at).await? {
            Some((at, last)) => {
                let (state, created_at_ms) = self.state_after(game_id, at).await?;
                Ok(convert::game_in_view(
                    game_id,
                    &state,
                    created_at_ms,
                    last,
                    view,
                ))
            }
            None => {
                self.ask(game_id, |reply| Msg::View { at, view, reply })
                    .await
            }
        }
    }

    /// A game's state: the latest, or right after event `at`.
    ///
    /// # Errors
    /// As [`Registry::game`].
    pub async fn state(&self, game_id: &str, at: Option<u64>) -> Result<GameState, RegistryError> {
        match self.before_the_last(game_id, at).await? {
            Some((at, _)) => Ok(self.state_after(game_id, at).await?.0),
            None => self.ask(game_id, |reply| Msg::State { at, reply }).await,
        }
    }

    /// `Some((at, last))` when `at` asks for a position before the game's
    /// last event `last`: a heavy read, rebuilt outside the game's actor
    /// (which would otherwise wait for it, moves and all). `None` for the
    /// latest position or one past the log, which the actor answers.
    async fn before_the_last(
        &self,
        game_id: &str,
        at: Option<u64>,
    ) -> Result<Option<(u64, u64)>, RegistryError> {
        let Some(at) = at.filter(|at| *at > 0) else {
            return Ok(None);
        };
        let last = self
            .ask(game_id, |reply| Msg::View {
                at: None,
                view: View::Basic,
                reply,
            })
            .await?
            .last_sequence;
        Ok((at < last).then_some((at, last)))
    }

    /// Runs an analysis of `state` with `engine` (`None`: the strongest for
    /// the game): SuggestMove's one move when `suggest`, otherwise
    /// AnalyzePosition's scores. `nodes` and `time` are the call's budget,
    /// capped by the server's (0 / `None`: the server's). Runs on a blocking
    /// thread, at most [`EngineSettings::max_analyses`] at once.
    ///
    /// # Errors
    /// [`RegistryError::EngineUnsupported`], [`RegistryError::AnalysesBusy`],
    /// [`RegistryError::AnalysisExhausted`], and
    /// [`RegistryError::Rejected`] with a game over.
    pub async fn analyze(
        &self,
        state: GameState,
        request: AnalysisRequest,
    ) -> Result<AnalysisReply, RegistryError> {
        let rules = state.config().rules();
        let seats = state.config().seats().len();
        let engine = request
            .engine
            .unwrap_or_else(|| crate::engine::EngineKind::best_for(rules, seats));
        engine
            .supports(rules, seats)
            .map_err(|why| RegistryError::EngineUnsupported { why })?;
        let thinking = &self.inner.thinking;
        let limit = thinking.settings().analysis_nodes;
        let nodes = match request.nodes {
            0 => limit,
            n => n.min(limit),
        };
        let sequence = state.sequence();
        let seat = state.to_move();
        let bot = crate::engine::Bot {
            engine,
            strength: request.strength,
            seed: request.seed,
        };
        let job = thinking.job(Arc::new(state), &bot, nodes);
        let started = std::time::Instant::now();
        let answer = thinking.analyze(job, request.time, request.suggest).await;
        let outcome = match &answer {
            Ok(_) => "answered",
            Err(RegistryError::AnalysesBusy { .. }) => {
                self.inner.metrics.shed("max_analyses");
                "busy"
            }
            Err(RegistryError::AnalysisExhausted { .. }) => "exhausted",
            Err(_) => "refused",
        };
        self.inner
            .metrics
            .analyzed(engine.name(), outcome, started.elapsed());
        let answer = answer?;
        Ok(AnalysisReply {
            seat: seat.unwrap_or(crate::rules::Seat(0)),
            sequence,
            engine,
            answer,
        })
    }

    /// A page of the legal moves of the seat to move, `offset` moves into
    /// the list of the position at sequence `at` (the current one if `None`).
    ///
    /// # Errors
    /// [`RegistryError::NotFound`]; [`RegistryError::SequenceMismatch`] when
    /// the game has moved on from `at`.
    pub async fn legal_moves(
        &self,
        game_id: &str,
        at: Option<u64>,
        offset: usize,
        limit: usize,
    ) -> Result<LegalMovesPage, RegistryError> {
        self.ask(game_id, |reply| Msg::LegalMoves {
            at,
            offset,
            limit,
            reply,
        })
        .await
    }

    /// A live subscription to the game's events and the sequence it starts
    /// after: every event above that sequence arrives on the receiver.
    async fn subscribe(
        &self,
        game_id: &str,
        credential: &Credential,
        follow: bool,
    ) -> Result<actor::Subscription, RegistryError> {
        self.ask(game_id, |reply| Msg::Subscribe {
            credential: credential.clone(),
            follow,
            reply,
        })
        .await
    }

    /// A page of the game's events from sequence `from`, each with the
    /// position after it where `positions` asks for one; and the sequence
    /// the next page starts at, if any. A page holds at most `limit` steps
    /// and ends early once its positions hold [`REPLAY_PIECE_BUDGET`] pieces
    /// or its steps [`PAGE_BYTES`] encoded bytes (always at least one step).
    /// The game itself comes from its actor; the page reads only its own
    /// events from the store (in chunks of `limit`, more when `round`
    /// skips some), and rebuilds a position only when the page asks for
    /// one, from the latest snapshot before `from`. O(page), not O(log).
    /// A page with positions is a heavy read (see [`HeavyReadSettings`]).
    ///
    /// # Errors
    /// [`RegistryError::NotFound`], [`RegistryError::HeavyReadsBusy`], a
    /// corrupt log, store failures.
    pub async fn replay(
        &self,
        game_id: &str,
        from: u64,
        limit: usize,
        round: Option<u32>,
        positions: &ReplayPositions,
        view: View,
    ) -> Result<(pb::GetReplayResponse, Option<u64>), RegistryError> {
        let game = self.game(game_id, None, view).await?;
        let last = game.last_sequence;
        // A page with positions rebuilds them: a heavy read, filled on the
        // heavy-read pool (the store is read here). It starts from the
        // state after the event before `from`.
        let admission = if positions.any() {
            Some(self.admit_heavy_read().await?)
        } else {
            None
        };
        let state = match (&admission, from) {
            (Some(admission), 2..) if from <= last => {
                Some(self.rebuild_after(admission, game_id, from - 1).await?.0)
            }
            _ => None,
        };
        let mut cursor = from.max(1);
        // Every event sent is checked against the integrity chain, from
        // the stored chain value of the event before it.
        let chain = match cursor {
            // Nothing is sent from the start, or past the end.
            1 => crate::store::chain::GENESIS,
            _ if cursor > last => crate::store::chain::GENESIS,
            _ => {
                let before = self
                    .inner
                    .store
                    .read(game_id, cursor - 1, cursor - 1, 1)
                    .await?;
                before
                    .first()
                    .and_then(crate::store::StoredEvent::chain_value)
                    .ok_or_else(|| {
                        RegistryError::Corrupt(format!(
                            "game {game_id}: event {} is missing or has no whole chain value",
                            cursor - 1
                        ))
                    })?
            }
        };
        let mut page =
            replay::ReplayPage::new(game_id, game, limit, round, positions, state, chain);
        let chunk = u32::try_from(limit.clamp(1, 10_000)).unwrap_or(10_000);
        while cursor <= last && !page.is_full() {
            let stored = self.inner.store.read(game_id, cursor, last, chunk).await?;
            let Some(end) = stored.last().map(|e| e.sequence) else {
                break;
            };
            page = match &admission {
                Some(admission) => {
                    admission
                        .run(move || {
                            let mut page = page;
                            page.take(&stored).map(|()| page)
                        })
                        .await??
                }
                None => {
                    page.take(&stored)?;
                    page
                }
            };
            cursor = end + 1;
        }
        Ok(page.finish())
    }

    /// The game's state right after event `at`, with its creation time
    /// (Unix epoch milliseconds): resumed from its latest snapshot when that
    /// is at or before `at` and usable, otherwise replayed from sequence 1.
    /// A heavy read: admitted to the heavy-read pool and rebuilt on its
    /// threads.
    ///
    /// # Errors
    /// [`RegistryError::NotFound`] (no event `at`),
    /// [`RegistryError::HeavyReadsBusy`], a corrupt log, store failures.
    pub(crate) async fn state_after(
        &self,
        game_id: &str,
        at: u64,
    ) -> Result<(GameState, i64), RegistryError> {
        let admission = self.admit_heavy_read().await?;
        self.rebuild_after(&admission, game_id, at).await
    }

    /// Admits a heavy read and waits for its turn to run (see
    /// [`HeavyReadSettings`]).
    ///
    /// # Errors
    /// [`RegistryError::HeavyReadsBusy`], counted as shed.
    async fn admit_heavy_read(&self) -> Result<heavy::Admission, RegistryError> {
        self.inner.heavy.admit().await.inspect_err(|_| {
            self.inner.metrics.shed("max_heavy_reads");
        })
    }

    /// [`Registry::state_after`] for a heavy read already admitted and
    /// running: the store is read here, the state rebuilt on a blocking
    /// thread.
    async fn rebuild_after(
        &self,
        admission: &heavy::Admission,
        game_id: &str,
        at: u64,
    ) -> Result<(GameState, i64), RegistryError> {
        let store = &self.inner.store;
        let mut resumed = None;
        if let Some(snapshot) = store.snapshot(game_id).await?.filter(|s| s.sequence <= at) {
            let events = store.read(game_id, snapshot.sequence, at, u32::MAX).await?;
            let id = game_id.to_owned();
            resumed = admission
                .run(move || snapshot::usable(&id, &snapshot, &events))
                .await?;
        }
        let (state, created_at_ms) = match resumed {
            Some(resumed) => resumed,
            None => {
                let stored = store.read(game_id, 1, at, u32::MAX).await?;
                if stored.is_empty() {
                    return Err(RegistryError::NotFound {
                        game_id: game_id.to_owned(),
                    });
                }
                let id = game_id.to_owned();
                admission
                    .run(move || log::rebuild(&id, &stored))
                    .await?
                    .map_err(|e| actor::corrupt(game_id, &e))?
            }
        };
        // A log missing its last events rebuilds short: never a wrong answer.
        if state.sequence() != at {
            return Err(RegistryError::Corrupt(format!(
                "game {game_id}: the log ends at sequence {} before {at}",
                state.sequence()
            )));
        }
        Ok((state, created_at_ms))
    }

    /// The game's whole stored log, from where `from` says.
    ///
    /// # Errors
    /// [`RegistryError::NotFound`], store failures.
    async fn load_log(
        &self,
        game_id: &str,
        from: LoadFrom,
    ) -> Result<crate::store::GameLog, RegistryError> {
        self.inner
            .store
            .load(game_id, from)
            .await?
            .ok_or_else(|| RegistryError::NotFound {
                game_id: game_id.to_owned(),
            })
    }

    /// Up to `limit` games in `order` after the one at `cursor` (0: from
    /// the first), and the cursor of the last one listed.
    ///
    /// # Errors
    /// A corrupt creation event, store failures.
    pub async fn list(
        &self,
        cursor: i64,
        order: ListOrder,
        limit: u32,
    ) -> Result<(Vec<pb::GameSummary>, Option<i64>), RegistryError> {
        let records = self.inner.store.list(cursor, order, limit).await?;
        let mut next = records
            .last()
            .map(|r| r.cursor)
            .filter(|_| records.len() == limit as usize);
        let mut bytes = 0;
        let mut games = Vec::with_capacity(records.len());
        let mut last_cursor = cursor;
        for record in records {
            let record_cursor = record.cursor;
            let summary = summary_of(record)?;
            // A page stays under PAGE_BYTES however big each game's rules.
            let size = summary.encoded_len();
            if bytes + size > PAGE_BYTES && !games.is_empty() {
                next = Some(last_cursor);
                break;
            }
            bytes += size;
            last_cursor = record_cursor;
            games.push(summary);
        }
        Ok((games, next))
    }

    /// Starts the timer queue (see `registry/wakes.rs`): from now on every game whose
    /// wake comes due (a turn's time running out, an absent seat's grace
    /// period ending, a bot to move) is loaded, if it is not in memory, and
    /// does what is due; a deadline that passed while the server was down
    /// times out at once, and a bot to move decides its move again (its
    /// seed makes it the same move). Nothing is loaded before it is due,
    /// and a game waiting on a deadline may leave memory like any other.
    /// Call once, when the server starts serving.
    pub fn start_timer_queue(&self) {
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(wakes::run(weak, Arc::clone(&self.inner.wakes)));
    }

    /// Streams the game's events from `from_sequence` (history, a caught-up
    /// marker, then live events when `follow`), ending with an error item
    /// when the game is unknown, has `max_streams_per_game` streams open, or
    /// the server shuts down.
    ///
    /// # Errors
    /// [`RegistryError::LimitReached`] when `max_streams` streams are open.
    pub fn stream(&self, request: StreamRequest) -> Result<stream::EventStream, RegistryError> {
        let max = self.inner.settings.max_streams;
        let taken = self
            .inner
            .streams
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < max).then_some(open + 1)
            });
        if taken.is_err() {
            return Err(RegistryError::LimitReached {
                limit: "max_streams",
                max,
            });
        }
        let slot = StreamSlot(self.clone());
        Ok(stream::open(slot, request))
    }

    /// Heavy reads admitted now, running or waiting (see
    /// [`HeavyReadSettings`]).
    pub fn heavy_reads(&self) -> usize {
        self.inner.heavy.admitted()
    }

    /// How many event streams are open.
    pub fn open_streams(&self) -> usize {
        self.inner.streams.load(Ordering::Acquire)
    }

    /// How many times a stream fell behind its game's live events (or lost
    /// its subscription) and read what it missed from the store.
    pub fn stream_catch_ups(&self) -> u64 {
        self.inner.metrics.stream_catch_ups()
    }

    /// The server's metrics, which every layer records into.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// How many messages a game's actor dropped without answering: it
    /// stopped while handling them (a panic; eviction and shutdown answer
    /// everything queued first). Each was sent again to a fresh actor, which
    /// loads the game from the log, so the caller still got its answer; a
    /// count above 0 is a bug to look for in the logs.
    pub fn actor_failures(&self) -> u64 {
        self.inner.actor_failures.load(Ordering::Relaxed)
    }
}

/// What a StreamEvents call asks for.
#[derive(Debug, Clone)]
pub struct StreamRequest {
    /// The game.
    pub game_id: String,
    /// The first sequence to send (1-based; 0 reads as 1).
    pub from_sequence: u64,
    /// Whether to keep following after the history.
    pub follow: bool,
    /// Only the events of this round (from 0); `None`: every round.
    pub round: Option<u32>,
    /// The seat token the call presented: a followed stream with a seat's
    /// token keeps the seat present.
    pub credential: Credential,
}

/// One of the server's `max_streams` stream slots, given back when dropped
/// (with its stream's subscription gone, the game may be idle now: the
/// registry settles its memory budget then).
struct StreamSlot(Registry);

impl std::ops::Deref for StreamSlot {
    type Target = Registry;
    fn deref(&self) -> &Registry {
        &self.0
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.inner.streams.fetch_sub(1, Ordering::AcqRel);
        self.0.settle();
    }
}

/// Readings of the database's clock per correction.
const CLOCK_SAMPLES: usize = 5;

/// How often a referenced clock is corrected again: a quartz clock drifts
/// by at most about 0.1 ms a second, so by a millisecond or so between two
/// corrections.
const CLOCK_CORRECTION_INTERVAL: Duration = Duration::from_secs(10);

/// Corrects the registry's referenced clock every
/// [`CLOCK_CORRECTION_INTERVAL`] until the registry is dropped or shut
/// down.
async fn keep_clock_corrected(inner: std::sync::Weak<Inner>) {
    loop {
        let Some(shutdown) = inner.upgrade().map(|i| i.shutdown.clone()) else {
            return;
        };
        // The server corrects it once before it serves (see
        // `Registry::correct_clock`); this keeps it corrected.
        tokio::select! {
            () = tokio::time::sleep(CLOCK_CORRECTION_INTERVAL) => {}
            () = shutdown.cancelled() => return,
        }
        let Some(inner) = inner.upgrade() else { return };
        let registry = Registry { inner };
        match registry.correct_clock().await {
            Ok(Some((offset_ms, error_ms))) => {
                tracing::debug!(offset_ms, error_ms, "clock corrected toward the database's");
            }
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(error = %error, "the database's clock could not be read; the last correction stands");
            }
        }
    }
}

/// Follows a shared store's change feed until the registry is dropped or
/// shut down: a change wakes its game and a possible loss wakes them all.
/// Every `catch_up_interval` one query reads the last sequence of every game
/// in memory, and wakes those that are behind.
async fn follow_changes(
    inner: std::sync::Weak<Inner>,
    mut changes: mpsc::Receiver<crate::store::Change>,
) {
    let Some(interval) = inner.upgrade().map(|i| i.settings.catch_up_interval) else {
        return;
    };
    let mut tick = tokio::time::interval(interval);
    loop {
        let change = tokio::select! {
            change = changes.recv() => match change {
                Some(change) => Some(change),
                None => return,
            },
            _ = tick.tick() => None,
        };
        let Some(inner) = inner.upgrade() else { return };
        if inner.shutdown.is_cancelled() {
            return;
        }
        let registry = Registry { inner };
        match change {
            Some(crate::store::Change::Appended { game_id, sequence }) => {
                registry.catch_up(Some(&game_id), Some(sequence));
            }
            Some(crate::store::Change::Missed) => registry.catch_up(None, None),
            None => {
                let live: Vec<String> = registry
                    .inner
                    .actors
                    .lock()
                    .expect("registry lock")
                    .keys()
                    .cloned()
                    .collect();
                for ids in live.chunks(10_000) {
                    match registry.inner.store.last_sequences(ids).await {
                        Ok(lasts) => lasts.iter().for_each(|(game_id, sequence)| {
                            registry.catch_up(Some(game_id), Some(*sequence));
                        }),
                        Err(error) => {
                            tracing::warn!(error = %error, "periodic catch-up query failed");
                            registry.catch_up(None, None);
                        }
                    }
                }
            }
        }
    }
}

/// A new game's id when the caller names none: a UUID version 7 (RFC 9562,
/// section 5.7), whose first 48 bits are `now_ms` (Unix epoch milliseconds,
/// the server's clock) and the other 74 random, in its hyphenated text
/// form.
///
/// Ids made later sort later, so the games being played now sit together at
/// the end of every index on `game_id` (the events' and requests' primary
/// keys, the games' unique id): a group commit of 64 moves in 64 games then
/// writes a few pages of each index, where random (version 4) ids wrote
/// about one page per move (issue 15's profile of the SQLite writer).
fn time_ordered_id(now_ms: crate::game::Millis) -> String {
    let ms = u64::try_from(now_ms).unwrap_or(0);
    let at =
        uuid::Timestamp::from_unix(uuid::NoContext, ms / 1_000, (ms % 1_000) as u32 * 1_000_000);
    uuid::Uuid::new_v7(at).to_string()
}

/// The ListGames line of a stored game.
fn summary_of(record: crate::store::GameRecord) -> Result<pb::GameSummary, RegistryError> {
    let wire = pb::GameEvent::decode(record.created_payload.as_slice())
        .map_err(|e| RegistryError::Corrupt(format!("game {}: {e}", record.game_id)))?;
    let Some(pb::game_event::Kind::GameCreated(created)) = wire.kind else {
        return Err(RegistryError::Corrupt(format!(
            "game {}: event 1 is not GameCreated",
            record.game_id
        )));
    };
    Ok(pb::GameSummary {
        game_id: record.game_id,
        rules: created.rules,
        seats: created.seats,
        status: record.status,
        last_sequence: record.last_sequence,
        created_at: Some(convert::timestamp(record.created_at_ms)),
        updated_at: record.last_event_at_ms.map(convert::timestamp),
    })
}

#[cfg(test)]
mod tests {
    use super::time_ordered_id;

    #[test]
    fn server_picked_game_ids_are_uuid_v7_in_the_order_they_were_made() {
        let seed = 15;
        println!("seed {seed} (ids draw from the OS, the clock readings from it)");
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed);
        let mut at: i64 = 1_764_547_200_000;
        let mut last = String::new();
        for _ in 0..1_000 {
            at += rand::Rng::random_range(&mut rng, 1..5_000);
            let id = time_ordered_id(at);
            let uuid = uuid::Uuid::parse_str(&id).expect("a UUID");
            assert_eq!(uuid.get_version_num(), 7, "{id}");
            assert_eq!(id, uuid.hyphenated().to_string());
            let (secs, nanos) = uuid.get_timestamp().expect("v7 has one").to_unix();
            assert_eq!(
                secs as i64 * 1_000 + i64::from(nanos / 1_000_000),
                at,
                "{id}"
            );
            assert!(id > last, "{id} sorts after {last}");
            last = id;
        }
    }
}
