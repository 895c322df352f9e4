//! The actor that owns one live game: its mailbox and the serving loop,
//! which waits on the next message, the turn's timer, the absence grace
//! timer, a bot's turn and answer, and idleness, and hands each to the job
//! that does it. Each job adds its own `impl Actor` in a file of its own:
//!
//! - `mod.rs` (here): the actor's fields, spawning and loading it, the
//!   serving loop and the dispatch of a message.
//! - `messages`: what an actor is asked, and how a message is refused
//!   (a refused move counted in `moves_rejected`).
//! - `execute`: a command, as the recipe authorize → recorded reply? →
//!   turn token → decide → encode → commit → reply; restoring the state
//!   after a failed append.
//! - `seat_tokens`: the seat tokens as a value (authorize, holder, issue,
//!   recover), unit-tested without a runtime.
//! - `load`: loading from a snapshot or the whole log; the check of a
//!   snapshot's prefix before the first append; a corrupt log's error.
//! - `catch_up`: on a shared store, reading what other nodes appended.
//! - `timers`: the game's wake in the store's timer queue, and timeouts.
//! - `bots`: a bot seat's thinking and its move.
//! - `subscriptions`: live subscriptions and the presence and absence of
//!   seats.
//! - `views`: the game as a reply shows it, past states, legal-move pages.
//! - `snapshots`: when a snapshot is due, and taking it.

mod bots;
mod catch_up;
mod execute;
mod load;
mod messages;
mod seat_tokens;
mod snapshots;
mod subscriptions;
mod timers;
mod views;

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use tokio::time::{Instant, sleep_until};
use tracing::{Instrument, Span};

use super::residency::{self, ActorShared};
use super::{Handle, Registry, RegistryError};
use crate::game::{GameState, ReplayError};
use crate::rules::Seat;
use crate::store::chain::Chain;
use crate::store::{RequestRecord, TokenHash, Wake};
pub(super) use load::{corrupt, decode};
pub(super) use messages::{Msg, Subscription};
use seat_tokens::SeatTokens;
use timers::BOT_LEASE_MS;

/// How long after a timeout that could not be appended it is tried again.
const TIMEOUT_RETRY: std::time::Duration = std::time::Duration::from_secs(1);

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
    /// The seats' tokens (none: moves need no token).
    seat_tokens: SeatTokens,
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
    found_corrupt: Option<ReplayError>,
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
        let loaded = match state {
            Some(loaded) => Ok(loaded),
            None => Actor::load(&registry, &game_id).await.map(Box::new),
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
                    msg.fail(error.for_another_caller(), None, registry.metrics());
                    shared.done();
                }
                registry.inner.budget.release(&shared);
                return None;
            }
        };
        shared.set_kind(crate::metrics::kind(loaded.state.config().rules()));
        Some((
            Box::new(Actor::new(registry, game_id, loaded, shared)),
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
            seat_tokens: SeatTokens::new(loaded.seat_token_hashes),
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

    /// Answers `msg` with `error` (a refused move is counted under this
    /// game's kind).
    fn refuse(&self, msg: Msg, error: RegistryError) {
        msg.fail(error, self.shared.kind(), self.registry.metrics());
    }

    async fn handle(&mut self, msg: Msg) {
        if let Some(why) = &self.found_corrupt {
            self.refuse(msg, corrupt(&self.game_id, why));
            return;
        }
        if let Err(error) = self.restored().await {
            self.refuse(msg, error);
            return;
        }
        match msg {
            Msg::Execute {
                command,
                request,
                reply,
            } => match self.execute(command, &request).await {
                Ok(answer) => drop(reply.send(Ok(answer))),
                Err(error) => self.refuse(
                    Msg::Execute {
                        command,
                        request,
                        reply,
                    },
                    error,
                ),
            },
            Msg::View { at, view, reply } => {
                let _ = reply.send(self.view(at, view).await);
            }
            Msg::State { at, reply } => {
                let _ = reply.send(self.state_at(at).await);
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
}
