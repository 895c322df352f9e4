//! Which games stay in memory: each actor's weight, the server's memory
//! budget, and eviction of the least recently used idle games.
//!
//! Every actor shares an [`ActorShared`] with the registry: how many
//! messages it has queued or in hand (`pending`, raised under the registry's
//! map lock before a message is queued, lowered by the actor once the
//! message is answered), when it was last used, what its game weighs, and
//! its live broadcast (whose receiver count is its subscribers). A game is
//! *idle* when nothing is pending and nobody is subscribed; only idle games
//! are evicted, least recently used first, so a game with a call in flight
//! or an open stream is never dropped from under it. Eviction removes the
//! actor's handle from the map under the lock; with its last sender gone the
//! actor's mailbox closes and the task ends.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use tokio::sync::{Notify, broadcast};

use super::Clock;
use super::presence::{PresenceChange, PresenceSink};
use crate::game::{GameState, Millis};
use crate::proto as pb;
use crate::rules::Seat;

/// Bytes every live game costs besides its board and moves: the actor task
/// and the boxed actor with its state, its mailbox, configuration, maps and
/// strings. Measured at about 3.2 KB for a finished 3x3 game (server RSS
/// growth over 5,000 games, less their moves), rounded up.
pub(super) const ACTOR_OVERHEAD_BYTES: usize = 4 * 1024;

/// Bytes one live-broadcast slot costs (a lock, a counter and a
/// [`LiveEvent`], not counting the event's bytes).
const BROADCAST_SLOT_BYTES: usize = 88;

/// Bytes a move on the board costs in the state, beyond the board itself,
/// on average: its undo-stack entry (48 bytes, and as much again of spare
/// room while the stack grows), a move's flips or a roll's path, a
/// repetition count.
const MOVE_BYTES: usize = 96;

/// Bytes one recorded request id costs beyond its id and fingerprint.
const REQUEST_BYTES: usize = 96;

/// An event as a game's live broadcast carries it: what a stream needs to
/// choose it, and its encoded `GameEvent`, the bytes the store was given.
/// Every subscriber sends the same bytes: a game's event is encoded once
/// for its whole fan-out (issue 15). Each subscriber's copy shares them
/// (one reference count, not an `Arc` around the event as well: with
/// 10,000 subscribers every shared count is a contended cache line).
#[derive(Debug, Clone)]
pub(super) struct LiveEvent {
    /// Its sequence in the game's log.
    pub(super) sequence: u64,
    /// The round it belongs to.
    pub(super) round: u32,
    /// The encoded `plylog.v1.GameEvent`.
    pub(super) payload: Bytes,
}

/// What an actor shares with the registry.
pub(super) struct ActorShared {
    /// Messages queued for the actor or being handled by it.
    pending: AtomicUsize,
    /// The registry's use counter when a message was last sent to it.
    last_used: AtomicU64,
    /// What the game weighs in memory now, in bytes, as counted in the
    /// registry's total (0 once it left the total).
    weight: AtomicUsize,
    /// The live event broadcast, made on the first subscription.
    live: OnceLock<broadcast::Sender<LiveEvent>>,
    /// Which seats follow the game with their seat token, by seat.
    presence: Mutex<HashMap<Seat, SeatPresence>>,
    /// Wakes the actor when a seat comes or goes.
    presence_changed: Notify,
    /// The game's kind, once loaded (a metrics label).
    kind: OnceLock<&'static str>,
}

/// A seat's followed streams with its token, and since when it has had
/// none (`None`: not since the actor started).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct SeatPresence {
    /// Streams open now.
    pub(super) streams: u32,
    /// When the last one closed, Unix epoch milliseconds.
    pub(super) absent_since: Option<Millis>,
}

/// Counts a seat present for as long as it is held (one per stream that
/// presented the seat's token); dropping it records when the seat went
/// absent, if it was its last stream, and wakes the actor.
pub(crate) struct PresenceGuard {
    shared: Arc<ActorShared>,
    seat: Seat,
    clock: Clock,
    /// On a shared store: the game, and where this node's counts go.
    sink: Option<(String, PresenceSink)>,
}

impl PresenceGuard {
    pub(super) fn new(
        shared: Arc<ActorShared>,
        seat: Seat,
        clock: Clock,
        sink: Option<(String, PresenceSink)>,
    ) -> Self {
        let guard = PresenceGuard {
            shared,
            seat,
            clock,
            sink,
        };
        guard.change(|p| p.streams += 1);
        guard
    }

    /// Changes the seat's count with `change`, reporting the new count to
    /// the store's writer (under the presence lock, so in order).
    fn change(&self, change: impl FnOnce(&mut SeatPresence)) {
        self.shared.presence_of_mut(self.seat, |p| {
            change(p);
            if let Some((game_id, sink)) = &self.sink {
                sink.send(PresenceChange {
                    game_id: game_id.clone(),
                    seat: self.seat,
                    now: *p,
                });
            }
        });
    }
}

impl Drop for PresenceGuard {
    fn drop(&mut self) {
        let now = self.clock.now_ms();
        self.change(|p| {
            p.streams = p.streams.saturating_sub(1);
            if p.streams == 0 {
                p.absent_since = Some(now);
            }
        });
    }
}

impl ActorShared {
    pub(super) fn new() -> Self {
        ActorShared {
            pending: AtomicUsize::new(0),
            last_used: AtomicU64::new(0),
            weight: AtomicUsize::new(0),
            live: OnceLock::new(),
            presence: Mutex::new(HashMap::new()),
            presence_changed: Notify::new(),
            kind: OnceLock::new(),
        }
    }

    /// Changes `seat`'s presence with `change` and wakes the actor.
    fn presence_of_mut(&self, seat: Seat, change: impl FnOnce(&mut SeatPresence)) {
        let mut presence = self.presence.lock().expect("presence lock");
        change(presence.entry(seat).or_default());
        self.presence_changed.notify_one();
    }

    /// `seat`'s presence now.
    pub(super) fn presence_of(&self, seat: Seat) -> SeatPresence {
        let presence = self.presence.lock().expect("presence lock");
        presence.get(&seat).copied().unwrap_or_default()
    }

    /// Resolves when a seat came or went since the last call.
    pub(super) async fn presence_changed(&self) {
        self.presence_changed.notified().await;
    }

    /// The game's kind, once the actor loaded it.
    pub(super) fn kind(&self) -> Option<&'static str> {
        self.kind.get().copied()
    }

    /// Records the game's kind (once; later calls change nothing).
    pub(super) fn set_kind(&self, kind: &'static str) {
        let _ = self.kind.set(kind);
    }

    /// Counts a message about to be queued (under the map lock) and marks
    /// the game used at `tick`.
    /// Returns the messages pending with it.
    pub(super) fn queued(&self, tick: u64) -> usize {
        let pending = self.pending.fetch_add(1, Ordering::AcqRel) + 1;
        self.last_used.store(tick, Ordering::Release);
        pending
    }

    /// Uncounts a message that was answered, or that could not be queued.
    pub(super) fn done(&self) {
        self.pending.fetch_sub(1, Ordering::AcqRel);
    }

    /// Open subscriptions to the game's live events.
    pub(super) fn subscribers(&self) -> usize {
        self.live.get().map_or(0, broadcast::Sender::receiver_count)
    }

    /// Whether the game may leave memory: nothing pending, nobody
    /// subscribed. A deadline it waits on does not keep it: the store's
    /// timer queue brings it back when due. Meaningful under the map lock,
    /// where messages are counted before they are queued.
    pub(super) fn is_idle(&self) -> bool {
        self.pending.load(Ordering::Acquire) == 0 && self.subscribers() == 0
    }

    /// The live broadcast, made with `capacity` slots on first use.
    pub(super) fn live(&self, capacity: usize) -> &broadcast::Sender<LiveEvent> {
        self.live.get_or_init(|| broadcast::channel(capacity).0)
    }

    /// Sends `event`, encoded as `payload`, to the subscribers, if there
    /// were ever any.
    pub(super) fn broadcast(&self, event: &pb::GameEvent, payload: Bytes) {
        if let Some(live) = self.live.get() {
            let _ = live.send(LiveEvent {
                sequence: event.sequence,
                round: event.round,
                payload,
            });
        }
    }

    /// The broadcast's slots, if made (tokio rounds the capacity up to a
    /// power of two).
    fn broadcast_slots(&self, capacity: usize) -> usize {
        self.live
            .get()
            .map_or(0, |_| capacity.max(1).next_power_of_two())
    }
}

/// An estimate of what a live game weighs, in bytes: its board and
/// bookkeeping ([`crate::rules::Position::heap_bytes`]), its moves, its
/// recorded requests (`request_bytes`: their ids and fingerprints), its
/// broadcast buffer and the actor's own overhead. O(1).
pub(super) fn weight(
    state: &GameState,
    requests: usize,
    request_bytes: usize,
    shared: &ActorShared,
    broadcast_capacity: usize,
) -> usize {
    ACTOR_OVERHEAD_BYTES
        + state.position().heap_bytes()
        + state.moves().len() * MOVE_BYTES
        + requests * REQUEST_BYTES
        + request_bytes
        + shared.broadcast_slots(broadcast_capacity) * BROADCAST_SLOT_BYTES
}

/// The memory the live games weigh in all, against the budget.
pub(super) struct Budget {
    /// The sum of every live actor's weight, in bytes.
    total: AtomicUsize,
    /// The counter `last_used` values come from.
    tick: AtomicU64,
    /// Whether the last [`make_room`] left the live games over a limit
    /// (every other game was busy or watched): the next actor to finish a
    /// message then tries again, so the excess leaves once the rush is over.
    over: AtomicBool,
}

impl Budget {
    pub(super) fn new() -> Self {
        Budget {
            total: AtomicUsize::new(0),
            tick: AtomicU64::new(0),
            over: AtomicBool::new(false),
        }
    }

    /// Whether the live games were last seen over a limit.
    pub(super) fn over(&self) -> bool {
        self.over.load(Ordering::Acquire)
    }

    /// The next use mark.
    pub(super) fn tick(&self) -> u64 {
        self.tick.fetch_add(1, Ordering::Relaxed)
    }

    /// Bytes the live games weigh.
    pub(super) fn total(&self) -> usize {
        self.total.load(Ordering::Acquire)
    }

    /// Sets what `shared`'s game weighs now.
    pub(super) fn set_weight(&self, shared: &ActorShared, weight: usize) {
        let old = shared.weight.swap(weight, Ordering::AcqRel);
        if weight >= old {
            self.total.fetch_add(weight - old, Ordering::AcqRel);
        } else {
            self.total.fetch_sub(old - weight, Ordering::AcqRel);
        }
    }

    /// Takes `shared`'s game out of the total (it left memory); idempotent.
    pub(super) fn release(&self, shared: &ActorShared) {
        self.set_weight(shared, 0);
    }
}

/// The limits on live games: how many, and what they weigh in bytes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// Games in memory at most.
    pub(super) games: usize,
    /// Bytes the games in memory weigh at most.
    pub(super) bytes: usize,
}

impl Limits {
    /// Whether `games` games weighing `bytes` break these limits.
    fn exceeded_by(self, games: usize, bytes: usize) -> bool {
        games > self.games || bytes > self.bytes
    }

    /// The limits less a twentieth (at least one game, one byte): where
    /// eviction stops, so a server at its limit does not scan the whole map
    /// for every game it loads.
    fn low_water(self) -> Limits {
        Limits {
            games: self.games - (self.games / 20).clamp(1, self.games),
            bytes: self.bytes - (self.bytes / 20).clamp(1, self.bytes),
        }
    }
}

/// Makes room for `incoming` more games in `actors`: when the live games
/// (plus `incoming`) break `limits`, evicts idle games other than `keep`,
/// least recently used first, until they are under the low-water mark or no
/// idle game is left. Returns whether the limits now hold, and notes the
/// answer in the budget ([`Budget::over`]). Call under the map lock.
pub(super) fn make_room<H: AsRef<ActorShared>>(
    actors: &mut HashMap<String, H>,
    budget: &Budget,
    limits: Limits,
    incoming: usize,
    keep: Option<&str>,
) -> bool {
    if !limits.exceeded_by(actors.len() + incoming, budget.total()) {
        budget.over.store(false, Ordering::Release);
        return true;
    }
    let mut idle: Vec<(u64, String)> = actors
        .iter()
        .filter(|(id, h)| Some(id.as_str()) != keep && h.as_ref().is_idle())
        .map(|(id, h)| (h.as_ref().last_used.load(Ordering::Acquire), id.clone()))
        .collect();
    idle.sort_unstable();
    let target = limits.low_water();
    for (_, id) in idle {
        if !target.exceeded_by(actors.len() + incoming, budget.total()) {
            break;
        }
        if let Some(handle) = actors.remove(&id) {
            budget.release(handle.as_ref());
            tracing::debug!(game_id = %id, "idle game evicted to make room");
        }
    }
    let fits = !limits.exceeded_by(actors.len() + incoming, budget.total());
    budget.over.store(!fits, Ordering::Release);
    fits
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Games `g0`.. weighing `weight` bytes each, used in that order.
    fn games(count: usize, weight: usize, budget: &Budget) -> HashMap<String, Arc<ActorShared>> {
        (0..count)
            .map(|g| {
                let shared = Arc::new(ActorShared::new());
                shared.queued(budget.tick());
                shared.done();
                budget.set_weight(&shared, weight);
                (format!("g{g}"), shared)
            })
            .collect()
    }

    fn names(actors: &HashMap<String, Arc<ActorShared>>) -> Vec<String> {
        let mut names: Vec<String> = actors.keys().cloned().collect();
        names.sort();
        names
    }

    #[test]
    fn the_total_follows_each_games_weight_up_and_down() {
        let budget = Budget::new();
        let (a, b) = (ActorShared::new(), ActorShared::new());
        budget.set_weight(&a, 100);
        budget.set_weight(&a, 300);
        assert_eq!(budget.total(), 300);
        budget.set_weight(&a, 50);
        budget.set_weight(&b, 20);
        assert_eq!(budget.total(), 70);
        budget.release(&a);
        budget.release(&a);
        assert_eq!(budget.total(), 20);
    }

    #[test]
    fn under_the_limits_nothing_is_evicted() {
        let budget = Budget::new();
        let mut actors = games(5, 10, &budget);
        let limits = Limits {
            games: 6,
            bytes: 60,
        };
        assert!(make_room(&mut actors, &budget, limits, 1, None));
        assert_eq!(actors.len(), 5);
    }

    #[test]
    fn at_a_limit_the_least_recently_used_idle_games_go_first_down_to_the_low_water_mark() {
        let budget = Budget::new();
        let mut actors = games(40, 10, &budget);
        // g0 is used again: now the most recent.
        actors["g0"].queued(budget.tick());
        actors["g0"].done();
        // g1 has a call in flight, g2 a subscriber: neither may go.
        actors["g1"].queued(budget.tick());
        let _subscriber = actors["g2"].live(4).subscribe();
        let limits = Limits {
            games: 40,
            bytes: 1_000_000,
        };
        // Room for one more: down to 38 (40 less a twentieth) with it.
        assert!(make_room(&mut actors, &budget, limits, 1, None));
        assert_eq!(actors.len(), 37);
        assert_eq!(budget.total(), 370);
        for kept in ["g0", "g1", "g2"] {
            assert!(actors.contains_key(kept), "{kept} was evicted");
        }
        // The oldest idle ones left: g3, g4, g5.
        for gone in ["g3", "g4", "g5"] {
            assert!(!actors.contains_key(gone), "{gone} stayed");
        }
        assert!(actors.contains_key("g6"));
    }

    #[test]
    fn over_the_memory_budget_idle_games_go_down_to_its_low_water_mark() {
        let budget = Budget::new();
        // 41 games of 10 bytes against a budget of 400: down to 380.
        let mut actors = games(41, 10, &budget);
        let limits = Limits {
            games: 1000,
            bytes: 400,
        };
        assert!(make_room(&mut actors, &budget, limits, 0, None));
        assert_eq!(actors.len(), 38);
        assert_eq!(budget.total(), 380);
        assert!(!budget.over());
    }

    #[test]
    fn with_every_game_busy_a_game_loaded_anyway_is_noted_over_the_limit() {
        let budget = Budget::new();
        let mut actors = games(2, 10, &budget);
        for shared in actors.values() {
            shared.queued(budget.tick());
        }
        let limits = Limits {
            games: 2,
            bytes: 1000,
        };
        // Two busy games fill the limit: a third would break it.
        assert!(!make_room(&mut actors, &budget, limits, 1, None));
        assert_eq!(actors.len(), 2);
        assert!(budget.over(), "the excess is noted for settle");
        // With none incoming the two fit, and the note is cleared.
        assert!(make_room(&mut actors, &budget, limits, 0, None));
        assert!(!budget.over());
    }

    #[test]
    fn over_the_memory_budget_idle_games_go_but_the_growing_one_and_busy_ones_stay() {
        let budget = Budget::new();
        let mut actors = games(4, 100, &budget);
        actors["g0"].queued(budget.tick());
        let limits = Limits {
            games: 100,
            bytes: 150,
        };
        // g3 grew: every idle game but g3 leaves; g0 is busy, so the
        // budget still does not hold.
        assert!(!make_room(&mut actors, &budget, limits, 0, Some("g3")));
        assert_eq!(names(&actors), ["g0", "g3"]);
        assert_eq!(budget.total(), 200);
        assert!(budget.over(), "the excess is noted for later");
        // Once g0 is idle again it may go, and the budget holds.
        actors["g0"].done();
        assert!(make_room(&mut actors, &budget, limits, 0, Some("g3")));
        assert_eq!(names(&actors), ["g3"]);
        assert_eq!(budget.total(), 100);
        assert!(!budget.over());
    }
}
