//! Live games: one actor task per game, loading by replay, idle eviction,
//! and event subscriptions.
//!
//! Where a change goes:
//!
//! - `mod.rs` (here): [`Registry`], the handle callers hold, and the map of
//!   the games' actors in memory: finding or spawning a game's actor,
//!   sending it a message, evicting idle games, stream slots.
//! - `settings`: [`RegistrySettings`], the limits and timings, and
//!   [`GameLimitArgs`], the game-limit flags `serve` and `import` share.
//! - `requests`: what callers ask and what the registry answers
//!   ([`RequestMeta`], [`CommandReply`], [`Created`], ...).
//! - `create`: creating a game, idempotent by request id.
//! - `queries`: the read side: views, legal moves, replay pages, past
//!   states rebuilt from the store, the list of games.
//! - `analysis`: SuggestMove and AnalyzePosition.
//! - `cluster`: the referenced clock's corrections; `ownership`: slots,
//!   their leases and where a game's calls go.
//! - `actor/`: the task that owns one game's state and runs its commands one
//!   at a time (its own `mod.rs` maps its jobs).
//! - `stream`: StreamEvents, history then live with no gap or duplicate.
//! - `feed`: StreamAllEvents, every game's events in commit order from a
//!   checkpoint, one feed per cell.
//! - `wakes`: the timer queue that brings games back when they are due.
//! - `residency`: the memory budget and eviction; `presence`: a shared
//!   store's presence counts; `thinking`: the engine pools; `heavy`: the
//!   heavy-read pool; `replay`: a GetReplay page; `clock`: the server's
//!   clock; `error`: [`RegistryError`].
//! - [`log`]: a stored log decoded and replayed, for the actors and for
//!   the operator commands alike; [`snapshot`]: snapshots' format.
//!
//! The registry knows no game's rules: it calls [`crate::game::decide`] and
//! [`crate::game::evolve`].

mod actor;
mod analysis;
mod clock;
mod cluster;
mod create;
mod error;
mod feed;
mod heavy;
pub mod log;
pub mod ownership;
mod presence;
mod queries;
mod replay;
mod requests;
mod residency;
mod settings;
pub mod snapshot;
mod stream;
mod thinking;
mod wakes;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

pub use clock::{Clock, ClockSample};
pub use create::NewGameRequest;
pub use error::{RegistryError, game_reason};
pub use feed::{
    DEFAULT_CHECKPOINT_INTERVAL, FeedRequest, FeedStream, MAX_CHECKPOINT_INTERVAL,
    POLL as FEED_POLL,
};
pub use heavy::HeavyReadSettings;
pub use ownership::{Ownership, Route};
pub use requests::{
    AnalysisReply, AnalysisRequest, CommandReply, Created, Credential, LegalMovesPage, PAGE_BYTES,
    REPLAY_PIECE_BUDGET, ReplayPositions, RequestMeta, StreamRequest,
};
pub use settings::{GameLimitArgs, RegistrySettings};
pub use stream::{EventStream, Traced};
pub use thinking::Answer;
pub use thinking::EngineSettings;

use crate::game::Command;
use crate::metrics::Metrics;
use crate::store::EventStore;
use crate::tokens::SeatTokenKeys;
use actor::{Actor, Loaded, Msg};
use cluster::keep_clock_corrected;
use residency::{ActorShared, Budget, Limits, make_room};

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
                let (error, refused) = match e {
                    flume::TrySendError::Full(refused) => {
                        metrics.shed("mailbox");
                        (RegistryError::Overloaded, refused)
                    }
                    flume::TrySendError::Disconnected(refused) => (
                        RegistryError::Internal("game actor mailbox closed".into()),
                        refused,
                    ),
                };
                refused.0.count_refusal(&error, self.shared.kind(), metrics);
                error
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
    /// On a store with slots, which games this node runs (see
    /// [`ownership`]); `None`: every game.
    ownership: Option<Ownership>,
}

/// The live games of one server. Cheap to clone.
#[derive(Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

impl Registry {
    /// A registry over `store`, deriving seat tokens with `keys`. With
    /// `ownership` (a store with slots) it runs only the games of the slots
    /// it holds, and keeps its leases (see [`Registry::keep_leases`]; call
    /// it once before serving): the only node that writes a game is the one
    /// that has it in memory, which so never needs to read what others
    /// wrote.
    pub fn new(
        store: Arc<dyn EventStore>,
        settings: RegistrySettings,
        keys: Option<SeatTokenKeys>,
        ownership: Option<Ownership>,
    ) -> Self {
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
                ownership,
            }),
        };
        if registry.inner.ownership.is_some() {
            let weak = Arc::downgrade(&registry.inner);
            tokio::spawn(ownership::keep_leases(weak));
        }
        if matches!(registry.settings().clock, Clock::Referenced(_)) {
            let weak = Arc::downgrade(&registry.inner);
            tokio::spawn(keep_clock_corrected(weak));
        }
        registry
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

    /// Resolves once the server is shutting down (see
    /// [`Registry::shutdown`]).
    pub async fn stopping(&self) {
        self.inner.shutdown.cancelled().await;
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
        let error =
            RegistryError::Internal(format!("game {game_id}: its actor stopped three times"));
        // No actor answered: a move refused so is counted here, of a kind
        // unknown.
        let (reply, _) = oneshot::channel();
        make(reply).count_refusal(&error, None, &self.inner.metrics);
        Err(error)
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
        // Only the holder of the game's slot runs it.
        if let Err(error) = self.fence(game_id) {
            msg.count_refusal(&error, None, &self.inner.metrics);
            return Err(error);
        }
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
        let StreamPermit(slot) = self.stream_permit()?;
        Ok(stream::open(slot, request))
    }

    /// One of the server's `max_streams` stream slots, for a stream this
    /// node passes on to the node that runs its game (given back when
    /// dropped).
    ///
    /// # Errors
    /// [`RegistryError::LimitReached`] when `max_streams` streams are open.
    pub fn stream_permit(&self) -> Result<StreamPermit, RegistryError> {
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
        Ok(StreamPermit(StreamSlot(self.clone())))
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

/// One of the server's `max_streams` stream slots (see
/// [`Registry::stream_permit`]), given back when dropped.
pub struct StreamPermit(StreamSlot);

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
