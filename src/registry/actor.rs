//! The actor that owns one live game.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use prost::Message;
use tokio::sync::{OwnedSemaphorePermit, broadcast, oneshot};
use tokio::time::{Instant, sleep_until};
use tracing::{Instrument, Span};

use super::residency::{self, ActorShared, LiveEvent, PresenceGuard};
use super::wakes;
use super::{
    CommandReply, Credential, Handle, LegalMovesPage, Registry, RegistryError, RequestMeta,
};
use super::{log, snapshot};
use crate::engine::{Bot, Choice, Score};
use crate::game::ReplayError;
use crate::game::{Command, Event, GameError, GameState, decide, evolve};
use crate::proto::convert::View;
use crate::proto::{self as pb, convert};
use crate::rules::Seat;
use crate::store::chain::{self, Chain};
use crate::store::{
    Append, LoadFrom, NewEvent, RequestRecord, Snapshot, StoreError, StoredEvent, TokenHash, Wake,
};

/// How often a command is decided again after its append lost a race to
/// another writer (another node on a shared database).
const CONFLICT_RETRIES: usize = 3;

/// How long the timer queue leaves a game whose bot is thinking on this
/// node before it claims it again, in milliseconds (see [`Actor::wake`]).
const BOT_LEASE_MS: i64 = 5_000;

/// How long after a timeout that could not be appended it is tried again.
const TIMEOUT_RETRY: std::time::Duration = std::time::Duration::from_secs(1);

/// A bot's answer: the sequence of the position it searched, its seat,
/// and its move (`None`: stopped, or no move found).
type BotAnswer = (u64, Seat, Option<Choice>);

/// Events read from the store per query while catching up.
const CATCH_UP_PAGE: u32 = 512;

type Reply<T> = oneshot::Sender<Result<T, RegistryError>>;

/// A stream's subscription: the live events, the sequence it starts after,
/// and the seat it keeps present, if any.
pub(super) type Subscription = (broadcast::Receiver<LiveEvent>, u64, Option<PresenceGuard>);

/// What an actor is asked to do.
pub(super) enum Msg {
    Execute {
        command: Command,
        request: RequestMeta,
        reply: Reply<CommandReply>,
    },
    View {
        at: Option<u64>,
        view: View,
        reply: Reply<pb::Game>,
    },
    /// The game's state, the latest or right after event `at`.
    State {
        at: Option<u64>,
        reply: Reply<GameState>,
    },
    LegalMoves {
        at: Option<u64>,
        offset: usize,
        limit: usize,
        reply: Reply<LegalMovesPage>,
    },
    /// A stream subscribes; when it follows with a seat's token, the seat
    /// is present while the subscription's guard lives.
    Subscribe {
        credential: Credential,
        follow: bool,
        reply: Reply<Subscription>,
    },
    /// Another node appended (up to `upto`, when known): read the new
    /// events from the store, apply and broadcast them.
    CatchUp { upto: Option<u64> },
    /// The timer queue claimed the game's wake (postponing it to
    /// `claimed_until`): do what is due (a timeout, an absence), then
    /// answer; the game's next wake is written after.
    Wake {
        claimed_until: i64,
        reply: Reply<()>,
    },
}

impl Msg {
    /// What the message asks, for spans: `execute`, `view`, ...
    fn name(&self) -> &'static str {
        match self {
            Msg::Execute { .. } => "execute",
            Msg::View { .. } => "view",
            Msg::State { .. } => "state",
            Msg::LegalMoves { .. } => "legal_moves",
            Msg::Subscribe { .. } => "subscribe",
            Msg::CatchUp { .. } => "catch_up",
            Msg::Wake { .. } => "wake",
        }
    }

    fn fail(self, error: RegistryError) {
        let text = error.to_string();
        match self {
            Msg::Execute { reply, .. } => drop(reply.send(Err(error))),
            Msg::View { reply, .. } => drop(reply.send(Err(error))),
            Msg::State { reply, .. } => drop(reply.send(Err(error))),
            Msg::LegalMoves { reply, .. } => drop(reply.send(Err(error))),
            Msg::Subscribe { reply, .. } => drop(reply.send(Err(error))),
            Msg::Wake { reply, .. } => drop(reply.send(Err(error))),
            Msg::CatchUp { .. } => {}
        }
        tracing::trace!(error = %text, "request failed");
    }
}

/// Decodes a stored event into its wire and domain forms (see
/// [`log::decode`]); a corrupt one is an internal error naming the game.
pub(super) fn decode(
    game_id: &str,
    stored: &StoredEvent,
) -> Result<(pb::GameEvent, Event), RegistryError> {
    log::decode(game_id, stored).map_err(|e| corrupt(game_id, &e))
}

/// A stored log that fails its checks, as the error a caller gets.
pub(super) fn corrupt(game_id: &str, error: &ReplayError) -> RegistryError {
    RegistryError::Corrupt(format!("game {game_id}: {error}"))
}

/// Rebuilds a game from stored events `1..` (see [`log::rebuild`]); a log
/// that fails its checks is [`RegistryError::Corrupt`], naming the game.
fn rebuild(game_id: &str, stored: &[StoredEvent]) -> Result<(GameState, i64), RegistryError> {
    log::rebuild(game_id, stored).map_err(|e| corrupt(game_id, &e))
}

/// A game as an actor starts with it: from the store, or just created.
pub(crate) struct Loaded {
    /// The game state.
    pub(crate) state: GameState,
    /// Unix epoch milliseconds of creation.
    pub(crate) created_at_ms: i64,
    /// The deduplicated requests, by id.
    pub(crate) requests: HashMap<String, RequestRecord>,
    /// The seats' token hashes (empty: moves need no token).
    pub(crate) seat_token_hashes: Vec<TokenHash>,
    /// The sequence of the snapshot it was loaded from (0: none).
    pub(crate) snapshot_at: u64,
    /// The game's wake as the store holds it.
    pub(crate) wake: Wake,
    /// When its last event was recorded (Unix epoch milliseconds).
    pub(crate) last_recorded_at_ms: i64,
    /// The integrity chain value of its last event.
    pub(crate) chain: Chain,
    /// Loaded from a snapshot: its sequence and chain value, for the
    /// events it covers to be checked before the first append.
    pub(crate) unchecked_prefix: Option<(u64, Chain)>,
}

pub(super) struct Actor {
    registry: Registry,
    game_id: String,
    state: GameState,
    created_at_ms: i64,
    requests: HashMap<String, RequestRecord>,
    /// Bytes of the recorded requests' ids and fingerprints.
    request_bytes: usize,
    seat_token_hashes: Vec<TokenHash>,
    /// What this actor shares with the registry (pending messages, weight,
    /// the live broadcast, presence).
    shared: Arc<ActorShared>,
    /// Where a seat's absence counts from when this node has not seen it
    /// since the actor started: the time the store last recorded the seat
    /// to move absent from (written with the game's wake; not before this
    /// server started, so its downtime does not count), or else the
    /// actor's start.
    absent_from: i64,
    /// The game's wake as the store holds it (see [`super::wakes`]).
    stored_wake: Wake,
    /// When the game's last event was recorded (Unix epoch milliseconds):
    /// the next is recorded no earlier.
    last_recorded_at_ms: i64,
    /// The integrity chain value of the game's last event: the next event
    /// links onto it (see [`crate::store::chain`]).
    chain: Chain,
    /// Loaded from a snapshot whose events have not been checked yet (see
    /// [`Actor::prefix_checked`]): its sequence and chain value.
    unchecked_prefix: Option<(u64, Chain)>,
    /// Why the game's log was found corrupt after it was loaded: every
    /// message is refused with it from then on.
    found_corrupt: Option<String>,
    /// After a failed append whose state could not be rebuilt at once (the
    /// store was unreachable): the sequence to rebuild it at. Nothing is
    /// answered or decided from the state until it is (see
    /// [`Actor::restored`]); the actor stays, with its subscribers.
    stale_at: Option<u64>,
    /// The turn (round, seat, start) whose absence was last reported.
    reported_absence: Option<(u32, Seat, i64)>,
    /// On a shared store: a turn whose seat another node still served (or
    /// had served too recently), and when to look again.
    absence_check: Option<((u32, Seat, i64), i64)>,
    /// The bot move being decided: the sequence of the position it is
    /// decided on, and the flag that stops it.
    thinking: Option<(u64, Arc<AtomicBool>)>,
    /// While a bot decides its move here and the timer queue has claimed
    /// the game: the sequence of the position and until when the game's
    /// wake is leased to this node (see [`Actor::wake`]).
    bot_lease: Option<(u64, i64)>,
    /// The sequence whose bot move could not be appended: the next attempt
    /// waits a while first.
    bot_failed: Option<u64>,
    /// The sequence of the latest snapshot this actor loaded or took (0:
    /// none): the next is taken [`super::RegistrySettings::snapshot_every`]
    /// events later.
    snapshot_at: u64,
    /// How many of the next messages were queued before the load read the
    /// store: the load's read began after they arrived, so they are
    /// answered without another freshness check (see [`Actor::handle`]).
    queued_before_load: u32,
}

/// Bytes a recorded request's id and fingerprint hold.
fn record_bytes(record: &RequestRecord) -> usize {
    record.request_id.len() + record.fingerprint.len()
}

/// A loaded game's actor and its mailbox, or `None` when it did not load.
type Prepared = Option<(Box<Actor>, flume::Receiver<Box<(Msg, Span)>>)>;

/// A root span named `game` with `game_id`: the span of an actor's own work
/// (see [`Actor::span`]).
fn game_span(game_id: &str) -> Span {
    tracing::info_span!(parent: None, "game", game_id = %game_id)
}

impl Actor {
    /// Starts the actor task of `game_id`, with its state when the caller
    /// has it (a new game) or to be loaded from the store.
    pub(super) fn spawn(registry: Registry, game_id: String, state: Option<Loaded>) -> Handle {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let (mailbox, queue) = flume::bounded(registry.settings().mailbox);
        let shared = Arc::new(ActorShared::new());
        // The task's future lives as long as the game is in memory, so it
        // is kept small (issue 15's memory per live game): it holds no span
        // (see `Actor::span`), and loading runs in a future of its own,
        // boxed and freed once done, so the task keeps neither it nor its
        // arguments.
        let span = game_span(&game_id);
        let prepared = Actor::prepare(
            registry,
            game_id,
            id,
            state.map(Box::new),
            Arc::clone(&shared),
            queue,
        );
        tokio::spawn(Actor::run(Box::pin(prepared.instrument(span)), id));
        Handle {
            id,
            mailbox,
            shared,
        }
    }

    /// The actor task: waits for the game to be `prepared`, then serves it.
    /// The actor is boxed, since a future keeps a `self` argument apart from
    /// the local it is moved into: served inline, it took its size twice.
    async fn run(prepared: Pin<Box<dyn Future<Output = Prepared> + Send>>, id: u64) {
        let Some((actor, queue)) = prepared.await else {
            return;
        };
        actor.serve(id, queue).await;
    }

    /// The actor of the game, loaded unless `state` is given, and its
    /// mailbox; `None` when the game cannot load (everything queued is then
    /// answered with the error). The state comes boxed, and [`Actor::new`]
    /// unboxes it, which frees the box (a move out of it would keep it as
    /// long as the task).
    async fn prepare(
        registry: Registry,
        game_id: String,
        id: u64,
        state: Option<Box<Loaded>>,
        shared: Arc<ActorShared>,
        queue: flume::Receiver<Box<(Msg, Span)>>,
    ) -> Prepared {
        let (loaded, queued_before_load) = match state {
            Some(loaded) => (Ok(loaded), 0),
            None => {
                // Counted before the load's first read, so every one of
                // these arrived before the log was read.
                let queued = u32::try_from(queue.len()).unwrap_or(u32::MAX);
                let loaded = Actor::load(&registry, &game_id).await.map(Box::new);
                (loaded, queued)
            }
        };
        let loaded = match loaded {
            Ok(loaded) => loaded,
            Err(error) => {
                // Answer everything queued, then leave; later requests load anew.
                registry.forget(&game_id, id);
                // Messages are queued under the registry's lock through the
                // handle in its map: once it is forgotten nothing more
                // arrives (a caller whose message the dropped receiver takes
                // with it sends it again, to a new actor).
                for queued in queue.drain() {
                    let (msg, _) = *queued;
                    msg.fail(error.for_another_caller());
                    shared.done();
                }
                registry.inner.budget.release(&shared);
                return None;
            }
        };
        shared.set_kind(crate::metrics::kind(loaded.state.config().rules()));
        Some((
            Box::new(Actor::new(
                registry,
                game_id,
                loaded,
                shared,
                queued_before_load,
            )),
            queue,
        ))
    }

    /// The span of the actor's own work (loading, timers, bots), which no
    /// call asked for: `game`, with the game's id, a root span. One is made
    /// for each piece of work: a span held for as long as the game is in
    /// memory cost about 400 bytes per live game (issue 15), and would reach
    /// a trace collector only when the game left memory.
    fn span(&self) -> Span {
        game_span(&self.game_id)
    }

    /// The actor of a loaded game.
    fn new(
        registry: Registry,
        game_id: String,
        loaded: Box<Loaded>,
        shared: Arc<ActorShared>,
        queued_before_load: u32,
    ) -> Self {
        let loaded = *loaded;
        let request_bytes = loaded.requests.values().map(record_bytes).sum();
        let absent_from = match loaded.wake.absent_since_ms {
            Some(since) => since.max(registry.inner.started_at_ms),
            None => registry.settings().clock.now_ms(),
        };
        let actor = Actor {
            registry,
            game_id,
            state: loaded.state,
            created_at_ms: loaded.created_at_ms,
            requests: loaded.requests,
            request_bytes,
            seat_token_hashes: loaded.seat_token_hashes,
            absent_from,
            stored_wake: loaded.wake,
            last_recorded_at_ms: loaded.last_recorded_at_ms,
            chain: loaded.chain,
            unchecked_prefix: loaded.unchecked_prefix,
            found_corrupt: None,
            stale_at: None,
            reported_absence: None,
            absence_check: None,
            thinking: None,
            bot_lease: None,
            bot_failed: None,
            snapshot_at: loaded.snapshot_at,
            shared,
            queued_before_load,
        };
        tracing::debug!(sequence = actor.state.sequence(), "game loaded");
        actor
    }

    /// Serves the game's messages, timers and bot answers until it is
    /// evicted or dropped as idle.
    async fn serve(mut self: Box<Self>, id: u64, queue: flume::Receiver<Box<(Msg, Span)>>) {
        let actor = &mut *self;
        actor.report_weight();
        let idle = actor.registry.settings().idle_timeout;
        let clock = actor.registry.settings().clock.clone();
        let mut deadline = Instant::now() + idle;
        // After a timeout that could not be appended, when to try again.
        let mut retry_at = None;
        // The turn of the bot move to decide, while it waits for one, and
        // its answer, once it has one.
        let mut turn = None;
        let mut answer = None;
        loop {
            // The turn's deadline, armed afresh after every message (and so
            // after a load, a move, or a catch-up from another node).
            let turn_ends = actor.state.deadline();
            let grace_ends = actor.grace_ends();
            // Neither a bot nor the stored wake acts on a stale state (see
            // `Actor::restore`): the next message rebuilds it first.
            if actor.stale_at.is_none() {
                // A bot to move starts thinking (once per position).
                if let Some(waiting) = actor.think() {
                    turn = Some(waiting);
                    answer = None;
                }
                // The store's timer queue brings the game back when it is
                // due if it leaves memory meanwhile: a game waiting on a
                // deadline or a bot may be evicted like any other.
                actor.store_wake().await;
            }
            // Boxed once polled: a timer that is not armed (most games
            // have no clock) then takes a pointer's room in the task, which
            // lives as long as the game, instead of two sleeps'.
            let after = |deadline: Option<i64>| {
                let clock = &clock;
                async move {
                    Box::pin(async move {
                        clock.sleep_until(deadline.unwrap_or_default()).await;
                        if let Some(at) = retry_at {
                            sleep_until(at).await;
                        }
                    })
                    .await;
                }
            };
            let timer = after(turn_ends);
            let grace = after(grace_ends.map(|(_, at)| at));
            tokio::select! {
                // A command already queued is decided first: one that comes
                // after the deadline is refused as too late, and appends the
                // timeout itself.
                biased;
                msg = queue.recv_async() => match msg {
                    Ok(queued) => {
                        actor.dispatch(*queued).await;
                        actor.report_weight();
                        actor.shared.done();
                        actor.registry.settle();
                        deadline = Instant::now() + idle;
                    }
                    // Evicted: the registry dropped the last sender.
                    Err(flume::RecvError::Disconnected) => break,
                },
                () = timer, if turn_ends.is_some() => {
                    let span = actor.span();
                    let settled = Box::pin(actor.time_out().instrument(span)).await;
                    retry_at = (!settled).then(|| Instant::now() + TIMEOUT_RETRY);
                    actor.report_weight();
                    actor.registry.settle();
                }
                () = grace, if grace_ends.is_some() => {
                    if let Some((seat, _)) = grace_ends {
                        let span = actor.span();
                        let settled = Box::pin(actor.report_absence(seat).instrument(span)).await;
                        retry_at = (!settled).then(|| Instant::now() + TIMEOUT_RETRY);
                    }
                    actor.report_weight();
                    actor.registry.settle();
                }
                permit = async { turn.as_mut().expect("a bot waits for its turn").await }, if turn.is_some() => {
                    turn = None;
                    // No permit: the server is shutting down.
                    if let Ok(permit) = permit {
                        answer = actor.search(permit);
                    }
                }
                answered = async { answer.as_mut().expect("a bot is thinking").await }, if answer.is_some() => {
                    answer = None;
                    match answered {
                        Ok((sequence, seat, choice)) => {
                            let span = actor.span();
                            Box::pin(actor.play_bot(sequence, seat, choice).instrument(span)).await;
                        }
                        // The decision's task ended without an answer (it
                        // panicked): the position is decided afresh, after
                        // the pause of a bot move that failed.
                        Err(_) => {
                            if let Some((sequence, _)) = actor.thinking.take() {
                                actor.bot_failed = Some(sequence);
                            }
                        }
                    }
                    actor.report_weight();
                    actor.registry.settle();
                }
                // A seat came or went: the grace timer is armed afresh.
                () = actor.shared.presence_changed() => {}
                () = sleep_until(deadline) => {
                    // A game whose clock runs may leave too: its wake is in
                    // the store, and the timer queue brings it back.
                    if actor.registry.leave(&actor.game_id, id, &actor.shared) {
                        tracing::debug!(game_id = %actor.game_id, "idle game dropped from memory");
                        break;
                    }
                    deadline = Instant::now() + idle;
                }
            }
        }
        // A decision under way is of no use once the game left memory.
        if let Some((_, stop)) = actor.thinking.take() {
            stop.store(true, Ordering::Relaxed);
        }
        actor.registry.inner.budget.release(&actor.shared);
        // Its wake may be the next due now that it is not in memory.
        if actor.stored_wake.at_ms.is_some() {
            actor.registry.inner.wakes.notify_one();
        }
    }

    /// Tells the registry what this game weighs now, and when that takes the
    /// live games over the memory budget, has it evict idle others.
    fn report_weight(&self) {
        let capacity = self.registry.settings().broadcast_capacity;
        let weight = residency::weight(
            &self.state,
            self.requests.len(),
            self.request_bytes,
            &self.shared,
            capacity,
        );
        self.registry.inner.budget.set_weight(&self.shared, weight);
        self.registry.make_room_for(&self.game_id);
    }

    /// Records a request's id with what it appended.
    fn remember(&mut self, record: RequestRecord) {
        self.request_bytes += record_bytes(&record);
        if let Some(old) = self.requests.insert(record.request_id.clone(), record) {
            self.request_bytes -= record_bytes(&old);
        }
    }

    /// Loads the game from its latest usable snapshot and the events after
    /// it (checked against the snapshot's chain value), or replays its
    /// whole log (its chain checked from the start) when it has none or it
    /// is unusable. The events a snapshot covers are not read here: the
    /// first append checks them (see [`Actor::prefix_checked`]).
    ///
    /// # Errors
    /// [`RegistryError::Corrupt`] for a log that fails its checks; store
    /// failures.
    async fn load(registry: &Registry, game_id: &str) -> Result<Loaded, RegistryError> {
        let mut log = registry.load_log(game_id, LoadFrom::Snapshot).await?;
        let resumed = log.snapshot.as_ref().and_then(|s| {
            snapshot::usable(game_id, s, &log.events).map(|resumed| (resumed, s.sequence))
        });
        let ((state, created_at_ms), snapshot_at) = match resumed {
            Some(resumed) => resumed,
            None => {
                if log.snapshot.is_some() {
                    // Its events start at the snapshot: read them all.
                    log = registry.load_log(game_id, LoadFrom::Start).await?;
                }
                (rebuild(game_id, &log.events)?, 0)
            }
        };
        // Checked above, from the snapshot's chain value or from the start.
        let stored_chain = |event: Option<&StoredEvent>| {
            event
                .and_then(StoredEvent::chain_value)
                .ok_or_else(|| RegistryError::Corrupt(format!("game {game_id}: no chain value")))
        };
        let chain = stored_chain(log.events.last())?;
        let unchecked_prefix = match snapshot_at {
            0 | 1 => None,
            at => Some((at, stored_chain(log.events.first())?)),
        };
        let requests = log
            .requests
            .into_iter()
            .map(|r| (r.request_id.clone(), r))
            .collect();
        let last_recorded_at_ms = match log.events.last() {
            Some(last) => log::recorded_at(&decode(game_id, last)?.0),
            None => created_at_ms,
        };
        Ok(Loaded {
            state,
            created_at_ms,
            requests,
            seat_token_hashes: log.seat_token_hashes,
            snapshot_at,
            wake: log.wake,
            last_recorded_at_ms,
            chain,
            unchecked_prefix,
        })
    }

    /// Checks the call's seat token against the acting seat's, in a game
    /// with seat tokens: a move must present its seat's token, an undo any
    /// seat's (which then names the seat asking). Returns the command with
    /// the undo's seat filled in from the token. A re-issue (authorized by
    /// the API key at the edge) needs a game that takes seat tokens.
    fn authorize(
        &self,
        command: Command,
        credential: &Credential,
    ) -> Result<Command, RegistryError> {
        if let Command::Timeout | Command::GraceExpired { .. } | Command::BotPlay { .. } = command {
            // The actor's own commands: no caller to authorize.
            return Ok(command);
        }
        if let Command::ReissueSeatToken { .. } = command {
            return if self.seat_token_hashes.is_empty() {
                Err(RegistryError::NoSeatTokens {
                    game_id: self.game_id.clone(),
                })
            } else {
                Ok(command)
            };
        }
        if self.seat_token_hashes.is_empty() {
            return Ok(command);
        }
        let presented = match credential {
            Credential::None => return Err(RegistryError::Unauthenticated),
            Credential::Malformed(why) => {
                return Err(RegistryError::PermissionDenied { why: why.clone() });
            }
            Credential::Token(hash) => hash,
        };
        let holder = self.seat_token_hashes.iter().position(|h| h == presented);
        let denied = |why: String| Err(RegistryError::PermissionDenied { why });
        match command {
            // A seat that is not at the table is refused by decide, as such.
            Command::Play { seat, .. } if seat.index() >= self.seat_token_hashes.len() => {
                Ok(command)
            }
            Command::Play { seat, .. } if holder == Some(seat.index()) => Ok(command),
            Command::Play { seat, .. } => denied(format!("the seat token is not {seat}'s")),
            // The token names the seat asking.
            Command::Undo { requested_by: seat }
            | Command::Redo { requested_by: seat }
            | Command::Act { seat, .. }
            | Command::Rematch { seat, .. } => match (holder, seat) {
                (None, _) => denied("the seat token is not one of this game's".into()),
                (Some(holder), Some(seat)) if seat.index() != holder => {
                    denied(format!("the seat token is not {seat}'s"))
                }
                (Some(holder), _) => {
                    let seat = Some(Seat(holder as u8));
                    Ok(match command {
                        Command::Undo { .. } => Command::Undo { requested_by: seat },
                        Command::Redo { .. } => Command::Redo { requested_by: seat },
                        Command::Act { action, .. } => Command::Act { seat, action },
                        Command::Rematch { rotate, .. } => Command::Rematch { seat, rotate },
                        other => other,
                    })
                }
            },
            Command::ReissueSeatToken { .. }
            | Command::Timeout
            | Command::GraceExpired { .. }
            | Command::BotPlay { .. } => {
                unreachable!("handled above")
            }
        }
    }

    /// A new token for `seat`, issued by the event at sequence `generation`,
    /// and the game's seat token hashes with it in place of the old one.
    fn issue_token(
        &self,
        seat: Seat,
        generation: u64,
    ) -> Result<(String, Vec<TokenHash>), RegistryError> {
        let keys = self
            .registry
            .inner
            .keys
            .as_ref()
            .ok_or(RegistryError::NoTokenSecret)?;
        let token = keys.issue(&self.game_id, seat.0.into(), generation);
        let mut hashes = self.seat_token_hashes.clone();
        hashes[seat.index()] = crate::tokens::hash(&token);
        Ok((token, hashes))
    }

    /// The token a recorded SeatTokenReissued event at `sequence` issued to
    /// `seat`, derived again; empty when the seat's token was re-issued
    /// since (or the secret that made it was retired).
    fn reissued_token(&self, seat: Seat, sequence: u64) -> String {
        let keys = self.registry.inner.keys.as_ref();
        let hash = self.seat_token_hashes.get(seat.index());
        keys.zip(hash)
            .and_then(|(keys, hash)| keys.recover(&self.game_id, seat.0.into(), sequence, hash))
            .unwrap_or_default()
    }

    /// The handling of a queued message, in an `actor` span with the game's
    /// id, a child of the calling request's span when a call sent it (so a
    /// trace shows both), a root span otherwise. The span is DEBUG, as the
    /// call's: made on every call, at INFO it cost about 5% of a move's
    /// throughput at G=64 (issue 15), so the log lines of a call's handling
    /// name their game themselves.
    ///
    /// Boxed, as every handler [`Actor::serve`] awaits, and made outside it:
    /// the task between messages then holds only the serving loop's state,
    /// not the largest handler's nor the message (a few KB per live game).
    fn dispatch(
        &mut self,
        (msg, caller): (Msg, Span),
    ) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        let span = tracing::debug_span!(parent: &caller, "actor", msg = msg.name(), game_id = %self.game_id);
        Box::pin(self.handle(msg).instrument(span))
    }

    async fn handle(&mut self, msg: Msg) {
        // Whatever a caller asks of a game on a shared store, it is answered
        // from the log as it stands, not from what this node last saw (a
        // command checks on its own: see `decide_fresh`). A message queued
        // before the load read the store is answered from a log read after
        // it arrived, which is as fresh as the check would make it: a cold
        // load's first request skips that extra query.
        let read_after_arrival = self.queued_before_load > 0;
        self.queued_before_load = self.queued_before_load.saturating_sub(1);
        if let Some(why) = &self.found_corrupt {
            msg.fail(RegistryError::Corrupt(why.clone()));
            return;
        }
        if let Err(error) = self.restored().await {
            msg.fail(error);
            return;
        }
        if !read_after_arrival
            && !matches!(msg, Msg::CatchUp { .. } | Msg::Execute { .. })
            && let Err(error) = self.fresh().await
        {
            msg.fail(error);
            return;
        }
        match msg {
            Msg::Execute {
                command,
                request,
                reply,
            } => {
                let _ = reply.send(self.decide_fresh(command, &request).await);
            }
            Msg::View { at, view, reply } => {
                let _ = reply.send(self.view(at, view).await);
            }
            Msg::State { at, reply } => {
                let _ = reply.send(self.state_at(at).await);
            }
            Msg::CatchUp { upto } => {
                if upto.is_none_or(|upto| upto > self.state.sequence())
                    && let Err(error) = self.catch_up().await
                {
                    tracing::warn!(game_id = %self.game_id, error = %error, "catch-up failed; the next one retries");
                }
            }
            Msg::LegalMoves {
                at,
                offset,
                limit,
                reply,
            } => {
                let current = self.state.sequence();
                let page = match at {
                    Some(expected) if expected != current => {
                        Err(RegistryError::SequenceMismatch { expected, current })
                    }
                    _ => Ok(self.legal_moves(offset, limit)),
                };
                let _ = reply.send(page);
            }
            Msg::Subscribe {
                credential,
                follow,
                reply,
            } => {
                let _ = reply.send(self.subscribe(&credential, follow));
            }
            Msg::Wake {
                claimed_until,
                reply,
            } => {
                // The claim postponed the stored wake; the serving loop
                // writes the real one once this is answered. A bot that is
                // thinking here leases the game.
                self.stored_wake.at_ms = Some(claimed_until);
                if let Some((sequence, _)) = self.thinking {
                    let now = self.registry.settings().clock.now_ms();
                    self.bot_lease = Some((sequence, now.saturating_add(BOT_LEASE_MS)));
                }
                self.wake_due().await;
                let _ = reply.send(Ok(()));
            }
        }
    }

    /// Does what is due now, for the timer queue: a turn whose time ran out
    /// times out, an absent seat past its grace period is reported (a bot
    /// to move starts thinking in the serving loop). What cannot be
    /// appended now is tried again by the game's own timers.
    async fn wake_due(&mut self) {
        let now = self.registry.settings().clock.now_ms();
        if self
            .state
            .deadline()
            .is_some_and(|deadline| now >= deadline)
        {
            self.time_out().await;
        }
        if let Some((seat, at)) = self.grace_ends()
            && now >= at
        {
            self.report_absence(seat).await;
        }
    }

    /// A subscription to the live events; a followed one that presents a
    /// seat's token keeps that seat present while it lasts.
    fn subscribe(
        &self,
        credential: &Credential,
        follow: bool,
    ) -> Result<Subscription, RegistryError> {
        let max = self.registry.settings().max_streams_per_game;
        let capacity = self.registry.settings().broadcast_capacity;
        let seat = match credential {
            Credential::None => None,
            Credential::Malformed(why) => {
                return Err(RegistryError::PermissionDenied { why: why.clone() });
            }
            Credential::Token(hash) => {
                let holder = self.seat_token_hashes.iter().position(|h| h == hash);
                let holder = holder.ok_or_else(|| RegistryError::PermissionDenied {
                    why: "the seat token is not one of this game's".into(),
                })?;
                Some(Seat(holder as u8))
            }
        };
        let live = self.shared.live(capacity);
        if live.receiver_count() >= max {
            return Err(RegistryError::LimitReached {
                limit: "max_streams_per_game",
                max,
            });
        }
        let clock = self.registry.settings().clock.clone();
        let sink = self.registry.inner.presence.clone();
        let presence = seat.filter(|_| follow).map(|seat| {
            let sink = sink.map(|sink| (self.game_id.clone(), sink));
            PresenceGuard::new(Arc::clone(&self.shared), seat, clock, sink)
        });
        Ok((live.subscribe(), self.state.sequence(), presence))
    }

    /// Starts deciding the move of the bot seat to move, unless it is
    /// already being decided on this position; stops a decision on an
    /// earlier position. The decision waits for its turn first (see
    /// [`super::thinking::Thinking::bot_turn`]); returns where the turn's
    /// permit will come, for [`Actor::search`] (one channel per decision: a
    /// game without bots holds none). While it waits, the game holds no
    /// copy of its state for it, and may leave memory (the timer queue
    /// brings it back).
    fn think(&mut self) -> Option<oneshot::Receiver<OwnedSemaphorePermit>> {
        let sequence = self.state.sequence();
        let bot = self
            .state
            .to_move()
            .and_then(|seat| self.state.config().bot(seat).map(|_| seat));
        if let Some((at, stop)) = &self.thinking {
            if *at == sequence && bot.is_some() {
                return None;
            }
            stop.store(true, Ordering::Relaxed);
            self.thinking = None;
        }
        bot?;
        let stop = Arc::new(AtomicBool::new(false));
        self.thinking = Some((sequence, stop));
        let registry = self.registry.clone();
        let (turns, turn) = oneshot::channel();
        let pause = self.bot_failed.take() == Some(sequence);
        tokio::spawn(
            async move {
                if pause {
                    tokio::time::sleep(TIMEOUT_RETRY).await;
                }
                if let Some(permit) = registry.inner.thinking.bot_turn().await {
                    // Gone (the game left memory, or moved on): the permit
                    // goes back with the message.
                    let _ = turns.send(permit);
                }
            }
            .instrument(self.span()),
        );
        Some(turn)
    }

    /// Runs the decision [`Actor::think`] started, now that it has its
    /// turn's `permit`, on the state as it stands; returns where its answer
    /// will come. `None` (the permit given back) when the game moved on
    /// from the position meanwhile.
    fn search(&mut self, permit: OwnedSemaphorePermit) -> Option<oneshot::Receiver<BotAnswer>> {
        let sequence = self.state.sequence();
        let (at, stop) = self.thinking.as_ref()?;
        if *at != sequence {
            return None;
        }
        let stop = Arc::clone(stop);
        let seat = self.state.to_move()?;
        let bot = *self.state.config().bot(seat)?;
        let thinking = &self.registry.inner.thinking;
        let job = thinking.job(
            Arc::new(self.state.clone()),
            &bot,
            thinking.settings().bot_nodes,
        );
        let registry = self.registry.clone();
        let (answers, answer) = oneshot::channel();
        tokio::spawn(
            async move {
                let engine = bot.engine.name();
                let started = std::time::Instant::now();
                let choice = registry.inner.thinking.bot_move(permit, job, stop).await;
                if choice.is_some() {
                    registry.metrics().bot_moved(engine, started.elapsed());
                }
                let _ = answers.send((sequence, seat, choice));
            }
            .instrument(self.span()),
        );
        Some(answer)
    }

    /// Appends the bot's move decided on the position after `sequence`,
    /// unless the game has moved on since. An engine that found no move
    /// (it should not) is replaced by a random legal move from the bot's
    /// generator, so a bot never stalls its game.
    async fn play_bot(&mut self, sequence: u64, seat: Seat, choice: Option<Choice>) {
        if self.thinking.as_ref().is_none_or(|(at, _)| *at != sequence) {
            return;
        }
        self.thinking = None;
        if self.state.sequence() != sequence {
            return;
        }
        let proven = matches!(
            choice,
            Some(Choice {
                score: Score::Exact(_),
                ..
            })
        );
        let mv = match choice {
            Some(choice) => {
                tracing::debug!(%seat, nodes = choice.nodes, score = ?choice.score, "bot chose");
                Some(choice.mv)
            }
            None => self.state.config().bot(seat).and_then(|bot: &Bot| {
                tracing::warn!(%seat, engine = bot.engine.name(), "engine found no move; playing a random one");
                crate::engine::random_move(
                    self.state.config().rules(),
                    self.state.position(),
                    seat,
                    &mut bot.rng(sequence + 1),
                )
            }),
        };
        let Some(mv) = mv else {
            return;
        };
        let request = RequestMeta::default();
        let result = match self.fresh().await {
            Ok(()) => {
                let command = Command::BotPlay {
                    seat,
                    mv,
                    sequence,
                    proven,
                };
                Box::pin(self.execute(command, &request)).await
            }
            Err(error) => Err(error),
        };
        if let Err(error) = result {
            tracing::warn!(error = %error, "bot move not appended; deciding again");
            self.bot_failed = Some(self.state.sequence());
        }
    }

    /// When the seat to move, away from the game, has been so for the
    /// grace period of its turn: the seat and that time. `None` without an
    /// absence policy, when the game is over, the seat is present, or its
    /// absence this turn was already reported.
    fn grace_ends(&self) -> Option<(Seat, i64)> {
        let policy = self.state.config().absence()?;
        let seat = self.state.to_move()?;
        let since = self.absent_since()?;
        let key = (self.state.round(), seat, self.state.clocks().turn_started);
        if self.reported_absence == Some(key) {
            return None;
        }
        let due = since.saturating_add(policy.grace_ms as i64);
        match self.absence_check {
            Some((checked, again)) if checked == key => Some((seat, due.max(again))),
            _ => Some((seat, due)),
        }
    }

    /// Since when the seat to move, in a game with an absence policy, has
    /// held no followed stream on this node (not before its turn started);
    /// `None` without an absence policy, when the game is over or the seat
    /// is present.
    fn absent_since(&self) -> Option<i64> {
        self.state.config().absence()?;
        let seat = self.state.to_move()?;
        let presence = self.shared.presence_of(seat);
        if presence.streams > 0 {
            return None;
        }
        let turn = self.state.clocks().turn_started;
        Some(presence.absent_since.unwrap_or(self.absent_from).max(turn))
    }

    /// The seat to move stayed away past the grace period: appends what the
    /// absence policy does, once per turn.
    /// Returns whether it is settled (appended, or nothing to append).
    async fn report_absence(&mut self, seat: Seat) -> bool {
        let key = (self.state.round(), seat, self.state.clocks().turn_started);
        // The actor's own command: no id, no turn token, no caller.
        let request = RequestMeta::default();
        let result = match self.fresh().await {
            Ok(()) => match self.absent_everywhere(seat, key).await {
                Ok(true) => self.execute(Command::GraceExpired { seat }, &request).await,
                // Present on another node, or not for long enough yet: the
                // timer looks again later.
                Ok(false) => return true,
                Err(error) => Err(error),
            },
            Err(error) => Err(error),
        };
        match result {
            Ok(_) => {
                self.reported_absence = Some(key);
                true
            }
            Err(error) => {
                tracing::warn!(error = %error, "absence not appended; retrying");
                false
            }
        }
    }

    /// Whether `seat` has been away from every node for the grace period of
    /// turn `key`. On a store only this node writes, this node's count is
    /// all there is (the timer fired: yes). On a shared store it asks the
    /// store for the other nodes' counts (its own row may lag behind its
    /// count by a queued write); when another node serves the seat, or
    /// served it too recently, it notes when to look again.
    async fn absent_everywhere(
        &mut self,
        seat: Seat,
        key: (u32, Seat, i64),
    ) -> Result<bool, RegistryError> {
        let Some(grace) = self.state.config().absence().map(|p| p.grace_ms as i64) else {
            return Ok(false);
        };
        let store = Arc::clone(&self.registry.inner.store);
        let Some(everywhere) = store.presence(&self.game_id, seat.0).await? else {
            return Ok(true);
        };
        let settings = self.registry.settings();
        let now = settings.clock.now_ms();
        if everywhere.present {
            let again = (settings.catch_up_interval.as_millis() as i64).min(grace);
            self.absence_check = Some((key, now.saturating_add(again)));
            return Ok(false);
        }
        let here = self.shared.presence_of(seat).absent_since;
        let since = here
            .unwrap_or(self.absent_from)
            .max(everywhere.absent_since_ms.unwrap_or(i64::MIN))
            .max(key.2);
        let due = since.saturating_add(grace);
        if now < due {
            self.absence_check = Some((key, due));
            return Ok(false);
        }
        Ok(true)
    }

    fn game_view(&self, view: View) -> pb::Game {
        let mut game = convert::game_in_view(
            &self.game_id,
            &self.state,
            self.created_at_ms,
            self.state.sequence(),
            view,
        );
        if self.state.config().absence().is_some()
            && let Some(position) = game.position.as_mut()
        {
            position.seats_present = (0..self.state.config().seats().len() as u8)
                .filter(|s| self.shared.presence_of(Seat(*s)).streams > 0)
                .map(u32::from)
                .collect();
        }
        game
    }

    async fn view(&self, at: Option<u64>, view: View) -> Result<pb::Game, RegistryError> {
        let last = self.state.sequence();
        match at {
            None | Some(0) => Ok(self.game_view(view)),
            Some(at) if at == last => Ok(self.game_view(view)),
            Some(at) if at > last => Err(RegistryError::SequenceOutOfRange { at, last }),
            Some(at) => {
                let (state, created_at_ms) = self.past(at).await?;
                Ok(convert::game_in_view(
                    &self.game_id,
                    &state,
                    created_at_ms,
                    last,
                    view,
                ))
            }
        }
    }

    /// The state, the latest or rebuilt from the store right after `at`.
    async fn state_at(&self, at: Option<u64>) -> Result<GameState, RegistryError> {
        let last = self.state.sequence();
        match at {
            None | Some(0) => Ok(self.state.clone()),
            Some(at) if at == last => Ok(self.state.clone()),
            Some(at) if at > last => Err(RegistryError::SequenceOutOfRange { at, last }),
            Some(at) => Ok(self.past(at).await?.0),
        }
    }

    /// The state right after event `at`, rebuilt from the store (from a
    /// snapshot when one serves), with the game's creation time.
    async fn past(&self, at: u64) -> Result<(GameState, i64), RegistryError> {
        self.registry.state_after(&self.game_id, at).await
    }

    /// Whether a snapshot is due once an append ending at `last` commits
    /// (see [`super::RegistrySettings::snapshot_every`]).
    fn snapshot_due(&self, last: u64) -> bool {
        let every = self.registry.settings().snapshot_every;
        every > 0 && last >= self.snapshot_at.saturating_add(every)
    }

    /// Takes a snapshot of the state as it stands (right after an append,
    /// with the chain value of its last event) and saves it in the
    /// background: a snapshot is a cache, so one that fails to save is only
    /// logged.
    fn take_snapshot(&mut self) {
        let sequence = self.state.sequence();
        let payload = snapshot::encode(&self.state, self.created_at_ms, self.chain);
        self.snapshot_at = sequence;
        let store = Arc::clone(&self.registry.inner.store);
        let snapshot = Snapshot {
            game_id: self.game_id.clone(),
            sequence,
            payload,
        };
        let bytes = snapshot.payload.len();
        let game_id = self.game_id.clone();
        tokio::spawn(
            async move {
                match store.save_snapshot(snapshot).await {
                    Ok(()) => tracing::debug!(sequence, bytes, "snapshot saved"),
                    // The server is stopping: the next load replays further.
                    Err(StoreError::Closed) => tracing::debug!(sequence, "snapshot not saved"),
                    Err(error) => {
                        tracing::warn!(%game_id, sequence, error = %error, "snapshot not saved");
                    }
                }
            }
            .in_current_span(),
        );
    }

    fn legal_moves(&self, offset: usize, limit: usize) -> LegalMovesPage {
        let rules = self.state.config().rules();
        let (total, moves) = match self.state.to_move() {
            None => (0, Vec::new()),
            Some(seat) => (
                rules.legal_move_count(self.state.position(), seat),
                rules
                    .legal_moves(self.state.position(), seat)
                    .skip(offset)
                    .take(limit)
                    .map(convert::move_to_proto)
                    .collect(),
            ),
        };
        let next_offset =
            (offset + moves.len() < total && !moves.is_empty()).then_some(offset + moves.len());
        LegalMovesPage {
            reply: pb::ListLegalMovesResponse {
                seat_to_move: self.state.to_move().map(|s| s.0.into()),
                moves,
                sequence: self.state.sequence(),
                total: total as u32,
                next_page_token: String::new(),
            },
            next_offset,
        }
    }

    /// The reply a recorded request got, rebuilt from the log.
    async fn recorded_reply(
        &self,
        record: &RequestRecord,
        view: View,
    ) -> Result<CommandReply, RegistryError> {
        let store = &self.registry.inner.store;
        let stored = store
            .read(
                &self.game_id,
                record.first_sequence,
                record.last_sequence,
                u32::MAX,
            )
            .await?;
        let mut events = Vec::with_capacity(stored.len());
        let mut seat_token = None;
        for s in &stored {
            let (wire, event) = decode(&self.game_id, s)?;
            if let Event::SeatTokenReissued { seat } = event {
                seat_token = Some(self.reissued_token(seat, s.sequence));
            }
            events.push(wire);
        }
        let mut game = self.view(Some(record.last_sequence), view).await?;
        // The original reply, exactly: as the log stood right after it.
        game.last_sequence = record.last_sequence;
        Ok(CommandReply {
            events,
            game,
            seat_token,
        })
    }

    async fn execute(
        &mut self,
        command: Command,
        request: &RequestMeta,
    ) -> Result<CommandReply, RegistryError> {
        // The actor's own commands (a timeout, a bot's move) come here
        // without a message.
        self.restored().await?;
        self.prefix_checked().await?;
        for _ in 0..CONFLICT_RETRIES {
            // Authorized afresh on every attempt, against the state this
            // attempt decides on: after a lost race the actor has caught up,
            // and a seat token another node re-issued meanwhile no longer
            // acts (issue 35).
            let command = self.authorize(command, &request.credential)?;
            if let Some(record) = self.requests.get(&request.request_id) {
                if record.fingerprint != request.fingerprint {
                    return Err(RegistryError::RequestIdReused {
                        request_id: request.request_id.clone(),
                    });
                }
                return self.recorded_reply(record, request.view).await;
            }
            let current = self.state.sequence();
            if let Some(expected) = request.expected_sequence.filter(|e| *e != current) {
                return Err(RegistryError::SequenceMismatch { expected, current });
            }
            // Time in a game never goes backwards, whichever node's clock
            // recorded the event before.
            let recorded_at_ms = self
                .registry
                .settings()
                .clock
                .now_ms()
                .max(self.last_recorded_at_ms);
            let events = match decide(&self.state, &command, recorded_at_ms) {
                Err(expired @ GameError::TimeExpired { .. }) => {
                    // Too late: the timeout lands first, then the refusal.
                    self.time_out().await;
                    return Err(expired.into());
                }
                Err(refused) => return Err(refused.into()),
                Ok(events) if events.is_empty() => {
                    return Ok(CommandReply {
                        events: Vec::new(),
                        game: self.game_view(request.view),
                        seat_token: None,
                    });
                }
                Ok(events) => events,
            };
            let issued = match command {
                Command::ReissueSeatToken { seat } => Some(self.issue_token(seat, current + 1)?),
                _ => None,
            };
            let rules = self.state.config().rules();
            // Each event belongs to the round in play when it lands; a
            // RoundStarted to the round it starts.
            let mut round = self.state.round();
            let wire: Vec<pb::GameEvent> = events
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    if let Event::RoundStarted { round: next, .. } = e {
                        round = *next;
                    }
                    convert::event_to_proto(
                        &self.game_id,
                        current + 1 + i as u64,
                        recorded_at_ms,
                        e,
                        rules,
                        round,
                    )
                })
                .collect();
            let last = current + events.len() as u64;
            let record = (!request.request_id.is_empty()).then(|| RequestRecord {
                request_id: request.request_id.clone(),
                fingerprint: request.fingerprint.clone(),
                first_sequence: current + 1,
                last_sequence: last,
            });
            // The events are applied before they are durable, so the append
            // can carry what follows from them (the status, the next wake):
            // one source of truth, `evolve`. Nothing sees the state until
            // the append is answered (the actor handles one message at a
            // time); if it fails, the state is rebuilt from the store.
            let (fresh, was_over) = (
                !self.state.anyone_moved(),
                self.state.end_reason().is_some(),
            );
            events
                .iter()
                .for_each(|e| evolve(&mut self.state, e, recorded_at_ms));
            let wake = self.wake();
            let mut chain = self.chain;
            let append = Append {
                game_id: self.game_id.clone(),
                expected: current,
                events: wire
                    .iter()
                    .zip(&events)
                    .map(|(w, e)| {
                        let event = NewEvent::chained(
                            &chain,
                            &self.game_id,
                            w.sequence,
                            convert::event_type(e),
                            w.encode_to_vec().into(),
                            recorded_at_ms,
                        );
                        chain = event.chain;
                        event
                    })
                    .collect(),
                request: record.clone(),
                status: convert::status_to_proto(self.state.status()) as i32,
                seat_token_hashes: issued.as_ref().map(|(_, hashes)| hashes.clone()),
                wake,
            };
            // The bytes go to the subscribers too, once appended: shared,
            // not copied. None are kept when nobody follows the game: the
            // actor handles one message at a time, so nobody subscribes
            // while the append is under way.
            let payloads: Vec<_> = if self.shared.subscribers() > 0 {
                append.events.iter().map(|e| e.payload.clone()).collect()
            } else {
                Vec::new()
            };
            let snapshot_due = self.snapshot_due(last);
            let appending = std::time::Instant::now();
            let appended = self
                .registry
                .inner
                .store
                .append(append)
                .instrument(tracing::debug_span!("store.append", events = events.len()))
                .await;
            match appended {
                Ok(()) => {
                    self.registry
                        .metrics()
                        .appended(events.len(), appending.elapsed());
                    self.stored_wake = wake;
                    self.last_recorded_at_ms = recorded_at_ms;
                    self.chain = chain;
                    self.observe(fresh, was_over, recorded_at_ms);
                    if let Some(record) = record {
                        self.remember(record);
                    }
                    for (event, payload) in wire.iter().zip(payloads) {
                        self.shared.broadcast(event, payload);
                    }
                    tracing::debug!(sequence = last, "appended");
                    if snapshot_due {
                        self.take_snapshot();
                    }
                    let seat_token = issued.map(|(token, hashes)| {
                        self.seat_token_hashes = hashes;
                        token
                    });
                    return Ok(CommandReply {
                        events: wire,
                        game: self.game_view(request.view),
                        seat_token,
                    });
                }
                Err(StoreError::Conflict) => {
                    tracing::info!(game_id = %self.game_id, expected = current, "append conflict; catching up");
                    self.restore(current).await?;
                    self.catch_up().await?;
                }
                Err(error) => {
                    tracing::error!(game_id = %self.game_id, error = %error, "append failed; catching up");
                    // Whether it committed is unknown: trust only the store.
                    self.restore(current).await?;
                    self.catch_up().await?;
                    return Err(error.into());
                }
            }
        }
        // Other nodes kept appending between this node's catch-up and its
        // append: contention, not a failure. Nothing was appended for this
        // command; the caller retries it as it is.
        Err(RegistryError::Contended {
            game_id: self.game_id.clone(),
            attempts: CONFLICT_RETRIES,
        })
    }

    /// Puts back the state as it stood at `sequence`, before events applied
    /// ahead of an append that failed: rebuilt from the store (its latest
    /// snapshot at or before `sequence` and the events after it). When that
    /// fails too, the state stays marked stale, and the next message
    /// rebuilds it first (see [`Actor::restored`]).
    ///
    /// # Errors
    /// Store failures and a corrupt log, as [`Registry::state_after`].
    async fn restore(&mut self, sequence: u64) -> Result<(), RegistryError> {
        self.stale_at = Some(sequence);
        self.restored().await
    }

    /// Rebuilds the state if an earlier failed append left it stale (see
    /// [`Actor::restore`]); nothing otherwise.
    ///
    /// # Errors
    /// Store failures and a corrupt log, as [`Registry::state_after`]: the
    /// state stays stale.
    async fn restored(&mut self) -> Result<(), RegistryError> {
        let Some(sequence) = self.stale_at else {
            return Ok(());
        };
        match self.registry.state_after(&self.game_id, sequence).await {
            Ok((state, _)) => {
                self.state = state;
                self.stale_at = None;
                Ok(())
            }
            Err(error) => {
                tracing::warn!(game_id = %self.game_id, error = %error, "the state before a failed append could not be rebuilt yet; the next message tries again");
                Err(error)
            }
        }
    }

    /// Checks, before the first append after a load from a snapshot, that
    /// the events the snapshot covers are intact: read from the store, they
    /// must link from the start of the chain to the snapshot's chain value
    /// (the hashing runs on a blocking thread). A load from a snapshot
    /// skips reading them (issue 15: that is what makes a long game's load
    /// fast), and the state it serves meanwhile is the snapshot's, which
    /// its checksum and chain value vouch for; but no move is added to a
    /// log whose earlier events changed (issue 35). Found corrupt, the game
    /// refuses every message from then on.
    ///
    /// # Errors
    /// [`RegistryError::Corrupt`]; store failures (checked again at the
    /// next append).
    async fn prefix_checked(&mut self) -> Result<(), RegistryError> {
        if let Some(why) = &self.found_corrupt {
            return Err(RegistryError::Corrupt(why.clone()));
        }
        let Some((sequence, vouched)) = self.unchecked_prefix else {
            return Ok(());
        };
        let store = &self.registry.inner.store;
        let events = store.read(&self.game_id, 1, sequence, u32::MAX).await?;
        let game_id = self.game_id.clone();
        let checked = tokio::task::spawn_blocking(move || {
            let chain = log::check_chain(&game_id, &chain::GENESIS, &events, 1)
                .map_err(|e| corrupt(&game_id, &e))?;
            if events.len() as u64 != sequence || chain != vouched {
                return Err(RegistryError::Corrupt(format!(
                    "game {game_id}: the events up to its snapshot at {sequence} do not give \
                     the snapshot's chain value"
                )));
            }
            Ok(())
        })
        .await
        .map_err(|e| RegistryError::Internal(format!("the prefix check stopped: {e}")))?;
        match checked {
            Ok(()) => {
                self.unchecked_prefix = None;
                Ok(())
            }
            Err(RegistryError::Corrupt(why)) => {
                tracing::error!(game_id = %self.game_id, why, "corrupt log under a snapshot");
                self.found_corrupt = Some(why.clone());
                Err(RegistryError::Corrupt(why))
            }
            Err(other) => Err(other),
        }
    }

    /// When the game is next due, as the timer queue keeps it (see
    /// [`super::wakes`]): its turn's deadline, the absent seat to move's
    /// grace period, a bot to move.
    ///
    /// A bot to move is due at once, as the append that made it so writes:
    /// should this node stop before its bot moves, the queue brings the
    /// game back. Once the queue has claimed the game while its bot thinks
    /// here, the game is leased for [`BOT_LEASE_MS`] instead (due when the
    /// lease runs out, and claimed again then), so that the queue does not
    /// claim it over and over while it thinks, and a node that stops
    /// mid-thought delays the bot by that much at most.
    fn wake(&self) -> Wake {
        let grace = self.grace_ends().map(|(_, at)| at);
        let leased = self
            .bot_lease
            .filter(|(sequence, _)| *sequence == self.state.sequence())
            .map(|(_, until)| until);
        wakes::of(&self.state, grace, self.absent_since(), leased)
    }

    /// Writes the game's wake when it is not what the store holds (a seat
    /// came or went, a claim postponed it, a load found it stale). A write
    /// that fails is tried again after the next message or timer.
    async fn store_wake(&mut self) {
        let wake = self.wake();
        if wake == self.stored_wake {
            return;
        }
        let store = Arc::clone(&self.registry.inner.store);
        match store
            .set_wake(&self.game_id, self.state.sequence(), wake)
            .await
        {
            Ok(()) => self.stored_wake = wake,
            Err(error) => {
                tracing::warn!(game_id = %self.game_id, error = %error, "the game's wake was not stored; trying again later");
            }
        }
    }

    /// Records the game-health metrics of an append made at `at`: the
    /// round's first move, when nobody had moved before it (`fresh`), and
    /// the game's end, when it was not over before it (`was_over`).
    fn observe(&self, fresh: bool, was_over: bool, at: i64) {
        let metrics = self.registry.metrics();
        let kind = crate::metrics::kind(self.state.config().rules());
        let elapsed = at - self.state.started_at();
        if fresh && self.state.anyone_moved() {
            metrics.first_move(kind, elapsed);
        }
        if let (false, Some(reason)) = (was_over, self.state.end_reason()) {
            metrics.game_finished(
                kind,
                self.state.outcome(),
                reason,
                self.state.moves().len(),
                elapsed,
            );
        }
    }

    /// The turn's deadline has passed (the timer fired, or a command came
    /// too late): appends the timeout's events, once. On a shared store the
    /// actor catches up first, and the (game, sequence) uniqueness lets one
    /// node's timeout land; another node's attempt then decides to nothing.
    /// Returns whether the timeout is settled (appended, or not due).
    async fn time_out(&mut self) -> bool {
        // The actor's own command: no id, no turn token, no caller.
        let request = RequestMeta::default();
        let result = match self.fresh().await {
            Ok(()) => Box::pin(self.execute(Command::Timeout, &request)).await,
            Err(error) => Err(error),
        };
        match result {
            Ok(reply) => {
                if !reply.events.is_empty() {
                    tracing::debug!(sequence = self.state.sequence(), "turn timed out");
                }
                true
            }
            Err(error) => {
                tracing::warn!(error = %error, "timeout not appended; retrying");
                false
            }
        }
    }

    /// On a shared store, catches up before answering anything (a view,
    /// legal moves, a subscription, a timeout), so a game cached here never
    /// acts on a log another node has moved on. It reads the game's last
    /// sequence (one query) and the log only when that moved on.
    async fn fresh(&mut self) -> Result<(), RegistryError> {
        if self.registry.inner.store.shared() && self.behind().await? {
            self.catch_up().await?;
        }
        Ok(())
    }

    /// Whether the store's log of this game reaches past this actor's
    /// sequence (another node appended).
    async fn behind(&self) -> Result<bool, RegistryError> {
        let store = &self.registry.inner.store;
        let last = store
            .last_sequences(std::slice::from_ref(&self.game_id))
            .await?;
        Ok(last
            .first()
            .is_some_and(|(_, last)| *last > self.state.sequence()))
    }

    /// Executes `command` with no read of the store first, even on a shared
    /// one: an append decided on a stale position conflicts in the store
    /// (it only appends at the sequence this actor holds) and is decided
    /// again after a catch-up. A refusal may come from a stale position too
    /// (not your turn, a sequence mismatch, an unknown token), so on a
    /// shared store a refused command is decided once more after a catch-up
    /// when the log had moved on.
    async fn decide_fresh(
        &mut self,
        command: Command,
        request: &RequestMeta,
    ) -> Result<CommandReply, RegistryError> {
        let reply = self.execute(command, request).await;
        if reply.is_err() && self.registry.inner.store.shared() && self.behind().await? {
            self.catch_up().await?;
            return self.execute(command, request).await;
        }
        reply
    }

    /// Reads the events other nodes appended after this actor's sequence,
    /// with the requests that produced them, and applies both in one step:
    /// a page is decoded and checked whole, its request records are taken
    /// in, then its events are applied and broadcast to this node's
    /// subscribers. A read that fails changes nothing, so the actor never
    /// holds an event whose request record it has not also read (which would
    /// let a retry of that request be decided a second time).
    async fn catch_up(&mut self) -> Result<(), RegistryError> {
        let store = Arc::clone(&self.registry.inner.store);
        let start = self.state.sequence();
        loop {
            let after = self.state.sequence();
            let tail = store
                .read_since(&self.game_id, after, CATCH_UP_PAGE)
                .await?;
            if tail.events.is_empty() {
                break;
            }
            let chain = log::check_chain(&self.game_id, &self.chain, &tail.events, after + 1)
                .map_err(|e| corrupt(&self.game_id, &e))?;
            let mut page = Vec::with_capacity(tail.events.len());
            for stored in tail.events {
                let (wire, event) = decode(&self.game_id, &stored)?;
                page.push((wire, event, stored.payload));
            }
            for record in tail.requests {
                self.remember(record);
            }
            self.seat_token_hashes = tail.seat_token_hashes;
            // The node that appended wrote the wake that follows.
            self.stored_wake = tail.wake;
            for (wire, event, payload) in page {
                let at = log::recorded_at(&wire);
                self.state
                    .apply_stored(&event, at)
                    .map_err(|e| corrupt(&self.game_id, &e))?;
                self.last_recorded_at_ms = self.last_recorded_at_ms.max(at);
                self.shared.broadcast(&wire, payload.into());
            }
            self.chain = chain;
        }
        if self.state.sequence() > start {
            self.registry
                .metrics()
                .store_caught_up(self.state.sequence() - start);
            tracing::debug!(from = start, to = self.state.sequence(), "caught up");
        }
        Ok(())
    }
}
