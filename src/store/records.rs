//! The values the [`EventStore`] trait takes and gives: what a write
//! appends ([`NewGame`], [`Append`], [`NewEvent`], [`RequestRecord`],
//! [`Wake`]), what a read gives back ([`GameLog`], [`StoredEvent`],
//! [`LogTail`], [`Snapshot`], [`GameRecord`], ...), presence, and slot
//! leases ([`Fence`], [`LeaseRound`], [`SlotHolder`]).

use std::sync::Arc;

#[cfg(doc)]
use super::EventStore;
use super::chain;

/// An event ready to be appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEvent {
    /// Its sequence: the game's current sequence + 1, + 2, ...
    pub sequence: u64,
    /// The GameEvent oneof case, e.g. `"move_played"`.
    pub event_type: &'static str,
    /// The encoded `plylog.v1.GameEvent`, shared (not copied) with the
    /// game's live subscribers once appended.
    pub payload: bytes::Bytes,
    /// Unix epoch milliseconds when the server recorded it.
    pub recorded_at_ms: i64,
    /// Its integrity chain value (see [`chain`]).
    pub chain: chain::Chain,
    /// What it does to its game's life: `plylog.v1.Lifecycle`'s value (0:
    /// nothing; see [`crate::proto::event_format::lifecycle`]).
    pub lifecycle: i32,
}

impl NewEvent {
    /// The event at `sequence` of game `game_id`, after the event whose
    /// chain value is `previous` ([`chain::GENESIS`] for sequence 1), with
    /// its chain value computed, changing nothing in its game's life (see
    /// [`NewEvent::with_lifecycle`]).
    pub fn chained(
        previous: &chain::Chain,
        game_id: &str,
        sequence: u64,
        event_type: &'static str,
        payload: bytes::Bytes,
        recorded_at_ms: i64,
    ) -> Self {
        NewEvent {
            sequence,
            event_type,
            chain: chain::link(previous, game_id, sequence, &payload),
            payload,
            recorded_at_ms,
            lifecycle: 0,
        }
    }

    /// The same event, doing `lifecycle` (`plylog.v1.Lifecycle`'s value) to
    /// its game's life.
    pub fn with_lifecycle(self, lifecycle: i32) -> Self {
        NewEvent { lifecycle, ..self }
    }
}

/// An event read back from the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// Its sequence (1-based).
    pub sequence: u64,
    /// The encoded `plylog.v1.GameEvent`.
    pub payload: Vec<u8>,
    /// Its integrity chain value as stored: 32 bytes when intact (see
    /// [`chain`]; the readers check it, the store does not).
    pub chain: Vec<u8>,
}

/// An event read from the feed (see [`EventStore::read_feed`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedEvent {
    /// Its position in its cell's feed: dense from 1, in commit order.
    pub position: u64,
    /// The game it belongs to.
    pub game_id: String,
    /// Its sequence in that game's log.
    pub sequence: u64,
    /// The GameEvent oneof case, e.g. `"move_played"`.
    pub event_type: String,
    /// The encoded `plylog.v1.GameEvent`.
    pub payload: bytes::Bytes,
    /// What it does to its game's life (`plylog.v1.Lifecycle`'s value; 0:
    /// nothing).
    pub lifecycle: i32,
    /// For an event with a lifecycle: its game's encoded GameCreated event
    /// (the seats); `None` otherwise.
    pub created_payload: Option<bytes::Bytes>,
}

/// Which events of the feed to read (see [`EventStore::read_feed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedRange<'a> {
    /// Positions after this one (0: from the first).
    pub after: u64,
    /// Positions up to and including this one.
    pub upto: u64,
    /// Only events whose `event_type` is one of these; `None`, every event.
    pub event_types: Option<&'a [&'a str]>,
    /// Only events with a lifecycle (see [`FeedEvent::lifecycle`]).
    pub lifecycle_only: bool,
    /// Only events of games that have every one of these tags.
    pub tags: &'a [GameTag],
    /// At most this many.
    pub limit: u32,
}

impl StoredEvent {
    /// Its stored chain value, `None` when it is not 32 bytes.
    pub fn chain_value(&self) -> Option<chain::Chain> {
        self.chain.as_slice().try_into().ok()
    }
}

/// A deduplicated request: its id, what it asked, and the events it appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    /// The caller's idempotency key.
    pub request_id: String,
    /// The request as received, with its id and turn token cleared.
    pub fingerprint: Vec<u8>,
    /// The first sequence it appended.
    pub first_sequence: u64,
    /// The last sequence it appended.
    pub last_sequence: u64,
}

/// A new game: its id, its GameCreated event (sequence 1) and, when the
/// request had one, its idempotency key and fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGame {
    /// The game's id.
    pub game_id: String,
    /// The GameCreated event, sequence 1.
    pub created: NewEvent,
    /// `(request_id, fingerprint)` of the CreateGame request.
    pub request: Option<(String, Vec<u8>)>,
    /// `plylog.v1.GameStatus` of the new game.
    pub status: i32,
    /// The SHA-256 hash of each seat's token, in seat order; empty when the
    /// game takes moves without seat tokens.
    pub seat_token_hashes: Vec<TokenHash>,
    /// When the new game is next due (its first turn's deadline, a bot to
    /// move first, ...).
    pub wake: Wake,
    /// What the game is found by in listings ([`ListFilter::tags`]): its
    /// kind, its players and its labels, as its GameCreated event says.
    pub tags: Vec<GameTag>,
}

/// A fact about a game that listings filter on, fixed at its creation
/// (stored as its [`GameTag::encode`]d text, one row per tag, indexed).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GameTag {
    /// The game's kind: the `RuleSet` field it was created with
    /// ([`crate::metrics::kind`]).
    Kind(String),
    /// A player sits at it (a seat's `player_id`).
    Player(String),
    /// It has the label `key` = `value`.
    Label(String, String),
}

impl GameTag {
    /// The stored text: `kind:<kind>`, `player:<player id>` or
    /// `label:<key>=<value>` (a label key has no `=`).
    pub fn encode(&self) -> String {
        match self {
            GameTag::Kind(kind) => format!("kind:{kind}"),
            GameTag::Player(player_id) => format!("player:{player_id}"),
            GameTag::Label(key, value) => format!("label:{key}={value}"),
        }
    }
}

/// Which games [`EventStore::list`] lists: those that meet every condition
/// given (the default lists every game).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ListFilter {
    /// Only games whose `plylog.v1.GameStatus` is this.
    pub status: Option<i32>,
    /// Only games that have every one of these tags.
    pub tags: Vec<GameTag>,
    /// Only games created at or after this time (Unix epoch milliseconds).
    pub created_from_ms: Option<i64>,
    /// Only games whose last event was recorded at or after this time
    /// (Unix epoch milliseconds).
    pub updated_from_ms: Option<i64>,
}

impl ListFilter {
    /// Whether it lists every game.
    pub fn is_empty(&self) -> bool {
        *self == ListFilter::default()
    }
}

/// When a game next needs the server with no client asking: what the
/// store's timer queue keeps per game (see [`EventStore::claim_wakes`]), in
/// the game's row, indexed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wake {
    /// Unix epoch milliseconds (on the server's clock) when the game is due:
    /// the end of the turn's time, of the absent seat's grace period, or at
    /// once for a bot to move. `None`: not until a client acts.
    pub at_ms: Option<i64>,
    /// Since when the seat to move has had no followed stream, as the node
    /// that wrote this last knew it (Unix epoch milliseconds; games with an
    /// absence policy only): where its grace period counts from when the
    /// game is loaded again.
    pub absent_since_ms: Option<i64>,
}

/// The SHA-256 hash of a seat token: all a store keeps of it.
pub type TokenHash = [u8; 32];

/// Events to append to one game, all or nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Append {
    /// The game's id.
    pub game_id: String,
    /// The game's sequence before the append; the events take
    /// `expected + 1 ..`.
    pub expected: u64,
    /// The events, in sequence order.
    pub events: Vec<NewEvent>,
    /// The request that produced them, when it carried an id.
    pub request: Option<RequestRecord>,
    /// `plylog.v1.GameStatus` after the events.
    pub status: i32,
    /// The game's seat token hashes after the events, when they change (a
    /// seat's token was re-issued); written in the same transaction.
    pub seat_token_hashes: Option<Vec<TokenHash>>,
    /// When the game is next due after the events; written in the same
    /// transaction.
    pub wake: Wake,
    /// The slot lease the append was decided under, checked in the same
    /// statement (`None` on a store with no slots): an append whose lease is
    /// no longer the slot's moves nothing and fails with
    /// [`crate::store::StoreError::Fenced`].
    pub fence: Option<Fence>,
}

/// The slot lease an append was decided under (see
/// [`crate::registry::Route`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    /// The node holding the lease.
    pub node: Arc<str>,
    /// The game's slot.
    pub slot: i32,
    /// The lease's epoch: each new holder of a slot takes the next.
    pub epoch: i64,
}

/// One round of a node's lease keeping (see [`crate::store::EventStore::lease_round`]).
#[derive(Debug, Clone)]
pub struct LeaseRound {
    /// The node's name (its leases are its by this name, across restarts).
    pub node: String,
    /// Where other nodes forward its games' calls.
    pub address: String,
    /// How long a lease lasts from this round, in milliseconds of the
    /// database's clock.
    pub lease_ms: i64,
    /// The slots the node holds in this cell, with their epochs.
    pub held: Vec<(i32, i64)>,
    /// The cell whose slots the round keeps: slot `s` is cell
    /// `s % cells`'s ([`crate::store::cell_of_slot`]).
    pub cell: usize,
    /// How many cells there are (1: every slot).
    pub cells: usize,
}

/// A slot's holder after a lease round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotHolder {
    /// The slot.
    pub slot: i32,
    /// Whether the round's node holds it now.
    pub mine: bool,
    /// Its lease's epoch.
    pub epoch: i64,
    /// The holder's address, when another live node holds it.
    pub address: Option<String>,
}

/// This node's presence count for a seat of a game (see
/// [`EventStore::record_presence`]; the store names the node).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresenceRecord {
    /// The game.
    pub game_id: String,
    /// The seat.
    pub seat: u8,
    /// The seat's streams open on this node.
    pub streams: u32,
    /// When its last stream here closed (Unix epoch milliseconds).
    pub absent_since_ms: Option<i64>,
    /// The server's clock now (Unix epoch milliseconds).
    pub now_ms: i64,
}

/// A seat's presence over every node of a shared store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedPresence {
    /// Whether some live node serves it a stream.
    pub present: bool,
    /// The latest time it went absent on any node (a node that stopped
    /// refreshing its count: its last refresh); `None` when never recorded.
    pub absent_since_ms: Option<i64>,
}

/// How long a node's presence count counts without a refresh.
pub const PRESENCE_TTL: std::time::Duration = std::time::Duration::from_secs(15);

/// What a game's log gained after a sequence the reader already holds: one
/// page of events, every request whose events overlap that page, and the
/// seat token hashes as they stand. A catch-up applies all of it or none,
/// so a node never holds an event whose request record it has not read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogTail {
    /// Events after the sequence asked for, in sequence order; empty when
    /// the reader is up to date.
    pub events: Vec<StoredEvent>,
    /// The requests that appended any of `events` (a request whose events
    /// run past the page is included with the page its first event is in).
    pub requests: Vec<RequestRecord>,
    /// The seat token hashes now (empty: the game takes no seat tokens).
    /// Read only when `events` is not empty.
    pub seat_token_hashes: Vec<TokenHash>,
    /// The game's wake now (read only when `events` is not empty).
    pub wake: Wake,
}

/// A game's state cached after one of its events (see [`EventStore::load`]):
/// opaque bytes to the store, which keeps the latest per game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The game.
    pub game_id: String,
    /// The sequence of the last event the state includes (1 or more).
    pub sequence: u64,
    /// The encoded snapshot (see `registry::snapshot`).
    pub payload: Vec<u8>,
}

/// Where [`EventStore::load`] starts reading a game's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadFrom {
    /// From sequence 1: the whole log, and no snapshot.
    Start,
    /// From the game's latest snapshot, when it has one (its events from
    /// the snapshot's own sequence on); from sequence 1 when it has none.
    Snapshot,
}

/// A whole game as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameLog {
    /// The snapshot the events start at, when loaded from one.
    pub snapshot: Option<Snapshot>,
    /// Every event in sequence order: from 1, or from the snapshot's
    /// sequence (inclusive, so its chain value can be checked against the
    /// snapshot's) when `snapshot` is set.
    pub events: Vec<StoredEvent>,
    /// Every deduplicated request of the game.
    pub requests: Vec<RequestRecord>,
    /// The seat token hashes given at creation (empty: none required).
    pub seat_token_hashes: Vec<TokenHash>,
    /// The game's wake as stored (see [`Wake`]).
    pub wake: Wake,
}

/// A game whose wake came due, as [`EventStore::claim_wakes`] claims it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueWake {
    /// The game.
    pub game_id: String,
    /// The wake time it had before the claim postponed it (Unix epoch
    /// milliseconds).
    pub at_ms: i64,
}

/// A whole game written at once, as `plylog import` restores it: its
/// creation and every later event, in one transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoredGame {
    /// The game row and its GameCreated event; `status` is the status after
    /// the last event.
    pub game: NewGame,
    /// The events after the first, in sequence order from 2.
    pub events: Vec<NewEvent>,
}

/// A schema migration: its version and what it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migration {
    /// The version (the file name's leading number).
    pub version: i64,
    /// What it does (the rest of the file name).
    pub description: String,
}

/// A line of the game list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameRecord {
    /// Position in creation order in its cell, the paging cursor.
    pub cursor: i64,
    /// The cell it was read from (0 for a store of one cell).
    pub cell: usize,
    /// The game's id.
    pub game_id: String,
    /// Unix epoch milliseconds of creation.
    pub created_at_ms: i64,
    /// The sequence of the last event.
    pub last_sequence: u64,
    /// `plylog.v1.GameStatus` after the last event.
    pub status: i32,
    /// The encoded GameCreated event (sequence 1).
    pub created_payload: Vec<u8>,
    /// Unix epoch milliseconds at which the last event (at
    /// `last_sequence`) was recorded; `None` when no event is stored there.
    pub last_event_at_ms: Option<i64>,
}

/// The order of [`EventStore::list`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListOrder {
    /// Creation order, oldest first.
    OldestFirst,
    /// Newest first.
    NewestFirst,
}

/// What a CreateGame idempotency key maps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreationRecord {
    /// The game it created.
    pub game_id: String,
    /// The request it keyed.
    pub fingerprint: Vec<u8>,
    /// The game's seat token hashes now (empty: none), from which the
    /// tokens CreateGame returned are derived again.
    pub seat_token_hashes: Vec<TokenHash>,
}
