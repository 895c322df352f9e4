//! StreamAllEvents: every game's events in commit order, from after a
//! checkpoint, then live, as KurrentDB's subscription to `$all`, with one
//! feed per cell.
//!
//! Each cell's events have positions dense from 1 and in commit order (see
//! [`EventStore::read_feed`]), so a reader that reads on from the last
//! position it scanned can neither skip nor repeat an event. There is no
//! live buffer to fall behind: a reader reads its cell's feed from the
//! store a page at a time, caught up or not (a store may serve its latest
//! events from memory: SQLite's writer keeps a tail of them while the feed
//! has readers), and once it has read
//! everything it waits for the store's signal (a commit of this node) or,
//! on a store other nodes write too, at most [`POLL`] (their commits). A
//! reader holds at most one page: a client that stops reading stops the
//! reads.

use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::{SelectAll, StreamExt};
use prost::Message;
use tokio::sync::watch;
use tokio::time::{Instant, sleep_until};
use tokio_stream::Stream;

use super::stream::Traced;
use super::{Registry, RegistryError, StreamPermit, StreamSlot};
use crate::proto::{self as pb, convert, event_format};
use crate::store::{EventStore, FeedRange, GameTag};

/// Events read from the store per query: a reader that stops being read
/// holds at most this many (about 14 KB of moves).
const PAGE: u32 = 128;

/// The checkpoint interval when a request gives none, in positions.
pub const DEFAULT_CHECKPOINT_INTERVAL: u32 = 1_000;

/// The largest checkpoint interval a request may ask for, in positions.
pub const MAX_CHECKPOINT_INTERVAL: u32 = 100_000;

/// How long a caught-up reader of a store that other nodes write waits
/// before it looks for their commits (its own node's wake it at once).
pub const POLL: Duration = Duration::from_millis(200);

/// What a StreamAllEvents call asks for, checked.
#[derive(Debug, Clone)]
pub struct FeedRequest {
    /// Per cell, the position to start after (a cell with no entry: 0).
    pub after: Vec<u64>,
    /// Whether to go on once caught up.
    pub follow: bool,
    /// Only these event types (names of `crate::proto::EVENT_TYPES`);
    /// `None`, every event.
    pub event_types: Option<Vec<&'static str>>,
    /// A checkpoint at least every this many positions scanned (1 to
    /// [`MAX_CHECKPOINT_INTERVAL`]).
    pub checkpoint_interval: u32,
    /// Only the events with a lifecycle.
    pub lifecycle_only: bool,
    /// Only the events of games that have every one of these tags.
    pub tags: Vec<GameTag>,
    /// Start at each cell's last position as the feed opens (`after` is
    /// then empty).
    pub from_end: bool,
}

/// A stream's items: its messages, or the error that ends it.
type Item = Result<pb::StreamAllEventsResponse, RegistryError>;

/// An open feed (see [`Registry::feed`]), polled by the transport: it
/// reads the store only as fast as the client takes its messages.
/// Dropping it gives back its stream slot.
///
/// Items are `StreamAllEventsResponse` messages, or a [`RegistryError`] as
/// the last item: `ShuttingDown`, `Internal` (a stored event that does not
/// decode), or the store's own errors.
pub type FeedStream = Traced<Item>;

/// What one cell's reader found.
enum Part {
    /// An event of the cell, at `position`.
    Event {
        cell: usize,
        position: u64,
        game_id: String,
        payload: bytes::Bytes,
        lifecycle: i32,
        created_payload: Option<bytes::Bytes>,
    },
    /// Every matching event of the cell up to `position` has been given;
    /// `caught_up` when that was the cell's last position.
    Scanned {
        cell: usize,
        position: u64,
        caught_up: bool,
    },
}

impl Registry {
    /// Opens the feed `request` asks for, holding one of the server's
    /// stream slots while it is open.
    ///
    /// # Errors
    /// [`RegistryError::FeedPositionOutOfRange`] for a position past its
    /// cell's last; `LimitReached` (`max_streams`); the store's errors.
    pub async fn feed(&self, request: FeedRequest) -> Result<FeedStream, RegistryError> {
        let store = Arc::clone(&self.inner.store);
        let cells = store.cell_count();
        let mut after = request.after.clone();
        after.resize(cells, 0);
        if request.from_end {
            for (cell, at) in after.iter_mut().enumerate() {
                *at = store.feed_head(cell).await?;
            }
        }
        for (cell, &at) in after.iter().enumerate() {
            if at == 0 {
                continue;
            }
            let last = store.feed_head(cell).await?;
            if at > last {
                return Err(RegistryError::FeedPositionOutOfRange { cell, at, last });
            }
        }
        let StreamPermit(slot) = self.stream_permit()?;
        let span = tracing::debug_span!(
            "feed",
            after = ?after,
            follow = request.follow,
            event_types = ?request.event_types,
            lifecycle_only = request.lifecycle_only,
            tags = ?request.tags
        );
        Ok(Traced::new(span, items(slot, store, after, request)))
    }
}

/// The feed's messages: each cell's events merged as they come, a
/// checkpoint of every cell's position after each cell's scanned range, and
/// (when following) a checkpoint as a heartbeat when nothing was sent for
/// the heartbeat interval. An error is the last item.
fn items(
    slot: StreamSlot,
    store: Arc<dyn EventStore>,
    after: Vec<u64>,
    request: FeedRequest,
) -> impl Stream<Item = Item> + Send {
    async_stream::try_stream! {
        let poll = store.shared().then_some(POLL);
        let types: Option<Arc<[&'static str]>> = request.event_types.map(Arc::from);
        let tags: Arc<[GameTag]> = Arc::from(request.tags);
        let mut readers = SelectAll::new();
        for (cell, &from) in after.iter().enumerate() {
            readers.push(Box::pin(cell_parts(CellReader {
                store: Arc::clone(&store),
                cell,
                after: from,
                follow: request.follow,
                event_types: types.clone(),
                lifecycle_only: request.lifecycle_only,
                tags: Arc::clone(&tags),
                interval: u64::from(request.checkpoint_interval),
                poll,
            })));
        }
        let mut positions = after;
        let mut caught_up = vec![false; positions.len()];
        let heartbeat = slot.settings().heartbeat_interval;
        let clock = slot.settings().clock.clone();
        let shutdown = slot.inner.shutdown.clone();
        let cancelled = shutdown.cancelled();
        tokio::pin!(cancelled);
        let mut quiet_since = Instant::now();
        let beat = sleep_until(quiet_since + heartbeat);
        tokio::pin!(beat);
        loop {
            // Ok(None): every cell's reader ended (not following, all
            // caught up); Ok(Some(None)): quiet for the heartbeat interval.
            let next: Result<Option<Option<Part>>, RegistryError> = tokio::select! {
                biased;
                part = readers.next() => part.transpose().map(|part| part.map(Some)),
                () = &mut cancelled => Err(RegistryError::ShuttingDown),
                () = &mut beat => {
                    let due = quiet_since + heartbeat;
                    if Instant::now() < due {
                        beat.as_mut().reset(due);
                        continue;
                    }
                    Ok(Some(None))
                }
            };
            let Some(part) = next? else {
                break;
            };
            quiet_since = Instant::now();
            beat.as_mut().reset(quiet_since + heartbeat);
            let checkpoint = |positions: &[u64], caught_up: &[bool]| {
                message(pb::stream_all_events_response::Kind::Checkpoint(pb::FeedCheckpoint {
                    positions: positions.to_vec(),
                    caught_up: caught_up.iter().all(|&c| c),
                    sent_at: Some(convert::timestamp(clock.now_ms())),
                }))
            };
            yield match part {
                None => checkpoint(&positions, &caught_up),
                Some(Part::Event { cell, position, game_id, payload, lifecycle, created_payload }) => {
                    positions[cell] = position;
                    let corrupt = |e: prost::DecodeError| {
                        RegistryError::Internal(format!(
                            "cell {cell} feed position {position} (game {game_id}): {e}"
                        ))
                    };
                    let event = pb::GameEvent::decode(payload).map_err(corrupt)?;
                    let player_ids = match created_payload {
                        Some(created) => match pb::GameEvent::decode(created)
                            .map_err(corrupt)?
                            .kind
                        {
                            Some(pb::game_event::Kind::GameCreated(created)) => {
                                created.seats.into_iter().map(|seat| seat.player_id).collect()
                            }
                            _ => Vec::new(),
                        },
                        None => Vec::new(),
                    };
                    let outcome = (lifecycle == pb::Lifecycle::Ended as i32)
                        .then(|| event_format::outcome_of(&event))
                        .flatten();
                    message(pb::stream_all_events_response::Kind::Event(pb::FeedEvent {
                        cell: cell as u32,
                        position,
                        event: Some(event),
                        lifecycle,
                        player_ids,
                        outcome,
                    }))
                }
                Some(Part::Scanned { cell, position, caught_up: cell_caught_up }) => {
                    positions[cell] = position;
                    caught_up[cell] = cell_caught_up;
                    checkpoint(&positions, &caught_up)
                }
            };
        }
    }
}

fn message(kind: pb::stream_all_events_response::Kind) -> pb::StreamAllEventsResponse {
    pb::StreamAllEventsResponse { kind: Some(kind) }
}

/// One cell's reader: where it starts and what it reads.
struct CellReader {
    store: Arc<dyn EventStore>,
    cell: usize,
    after: u64,
    follow: bool,
    event_types: Option<Arc<[&'static str]>>,
    lifecycle_only: bool,
    tags: Arc<[GameTag]>,
    /// Positions per scanned range (a checkpoint after each).
    interval: u64,
    /// How long to wait for other nodes' commits; `None`: only this node
    /// writes the store.
    poll: Option<Duration>,
}

/// One cell's events after `reader.after`, in position order, and a
/// [`Part::Scanned`] after each range of `interval` positions and when
/// caught up; when following, then the cell's new events as they commit.
fn cell_parts(reader: CellReader) -> impl Stream<Item = Result<Part, RegistryError>> + Send {
    async_stream::try_stream! {
        let CellReader {
            store, cell, after, follow, event_types, lifecycle_only, tags, interval, poll,
        } = reader;
        let mut signal = store.feed_signal(cell);
        let mut last = after;
        let mut said_caught_up = false;
        loop {
            // Marked seen before the head is read: a commit after this
            // point changes it, so the wait below cannot miss one.
            signal.borrow_and_update();
            let head = store.feed_head(cell).await?;
            while last < head {
                let upto = head.min(last.saturating_add(interval));
                let mut from = last;
                loop {
                    let range = FeedRange {
                        after: from,
                        upto,
                        event_types: event_types.as_deref(),
                        lifecycle_only,
                        tags: &tags,
                        limit: PAGE,
                    };
                    let page = store.read_feed(cell, range).await?;
                    let full = page.len() == PAGE as usize;
                    for event in page {
                        from = event.position;
                        yield Part::Event {
                            cell,
                            position: event.position,
                            game_id: event.game_id,
                            payload: event.payload,
                            lifecycle: event.lifecycle,
                            created_payload: event.created_payload,
                        };
                    }
                    if !full {
                        break;
                    }
                }
                last = upto;
                said_caught_up = last == head;
                yield Part::Scanned { cell, position: last, caught_up: said_caught_up };
            }
            if !said_caught_up {
                said_caught_up = true;
                yield Part::Scanned { cell, position: last, caught_up: true };
            }
            if !follow {
                break;
            }
            wait_for_commit(&mut signal, poll).await;
        }
    }
}

/// Waits until this node commits to the cell (`signal` changes) or, when
/// other nodes write it too, `poll` has passed.
async fn wait_for_commit(signal: &mut watch::Receiver<u64>, poll: Option<Duration>) {
    match poll {
        Some(poll) => {
            // The store closed: only the poll (or the stream's end) is
            // left to wait for.
            if let Ok(Err(_closed)) = tokio::time::timeout(poll, signal.changed()).await {
                tokio::time::sleep(poll).await;
            }
        }
        None => {
            if signal.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}
