//! StreamEvents: stored history, a caught-up marker, then live events, with
//! no gap and no duplicate.
//!
//! The order is what makes it gapless: subscribe to the game's live
//! broadcast first (the actor answers with the sequence the subscription
//! starts after), then read the stored history up to that sequence, then
//! forward live events above the last one sent. A subscriber that falls
//! behind the broadcast buffer is never skipped ahead: it subscribes again
//! and reads what it missed from the store.

use std::sync::Arc;

use prost::Message;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::time::{Instant, sleep_until};

use super::{Registry, RegistryError, StreamRequest, StreamSlot};
use crate::proto::{self as pb, convert};

/// Items buffered between the stream task and the client at most (the
/// bytes they hold are bounded too: `stream_buffer_bytes`). Each is boxed:
/// the channel allocates its slots 32 at a time, 8 bytes each then
/// instead of an item's 300, for every follower.
const CLIENT_BUFFER: usize = 64;
/// Events read from the store per query while catching up.
const PAGE: u32 = 512;

type Item = Result<pb::StreamEventsResponse, RegistryError>;

/// An item of a stream, holding its share of the stream's byte buffer until
/// the transport takes it (drop it then).
pub struct Buffered {
    /// The stream item: a message, or the error that ends the stream.
    pub item: Item,
    _bytes: Option<OwnedSemaphorePermit>,
}

/// The sending end of a stream: at most [`CLIENT_BUFFER`] items holding at
/// most `capacity` encoded bytes wait for the client (an item larger than
/// that waits alone).
struct Sink {
    tx: mpsc::Sender<Box<Buffered>>,
    bytes: Arc<Semaphore>,
    capacity: usize,
}

impl Sink {
    /// Sends a stream message of kind `kind` once the buffer has room for
    /// it; `false` when the client has gone.
    async fn message(&self, kind: pb::stream_events_response::Kind) -> bool {
        let item = pb::StreamEventsResponse { kind: Some(kind) };
        let size = item.encoded_len();
        let want = u32::try_from(size.clamp(1, self.capacity)).unwrap_or(u32::MAX);
        let Ok(permit) = Arc::clone(&self.bytes).acquire_many_owned(want).await else {
            return false;
        };
        self.tx
            .send(Box::new(Buffered {
                item: Ok(item),
                _bytes: Some(permit),
            }))
            .await
            .is_ok()
    }

    /// Resolves when the client has gone.
    async fn closed(&self) {
        self.tx.closed().await;
    }
}

pub(super) fn spawn(registry: StreamSlot, request: StreamRequest) -> mpsc::Receiver<Box<Buffered>> {
    let (tx, rx) = mpsc::channel(CLIENT_BUFFER);
    let capacity = registry
        .settings()
        .stream_buffer_bytes
        .clamp(1, Semaphore::MAX_PERMITS);
    let sink = Sink {
        tx,
        bytes: Arc::new(Semaphore::new(capacity)),
        capacity,
    };
    let span = tracing::info_span!(
        "stream",
        game_id = %request.game_id,
        from_sequence = request.from_sequence,
        follow = request.follow
    );
    tokio::spawn(tracing::Instrument::instrument(
        async move {
            if let Err(error) = run(&registry, &request, &sink).await {
                // The closing status waits for nothing but the channel.
                let _ = sink
                    .tx
                    .send(Box::new(Buffered {
                        item: Err(error),
                        _bytes: None,
                    }))
                    .await;
            }
            // The subscription is gone: the game may be idle now.
            registry.settle();
        },
        span,
    ));
    rx
}

fn event(e: pb::GameEvent) -> pb::stream_events_response::Kind {
    pb::stream_events_response::Kind::Event(e)
}

async fn run(registry: &Registry, request: &StreamRequest, tx: &Sink) -> Result<(), RegistryError> {
    let StreamRequest {
        game_id,
        from_sequence,
        follow,
        round,
        credential,
    } = request;
    // The seat this stream keeps present, held for the stream's life.
    let mut presence = None;
    let (game_id, from_sequence, follow) = (game_id.as_str(), *from_sequence, *follow);
    // Whether an event is in the round asked for.
    let wanted = |e: &pb::GameEvent| round.is_none_or(|r| r == e.round);
    let store = &registry.inner.store;
    let shutdown = registry.inner.shutdown.clone();
    let heartbeat = registry.settings().heartbeat_interval;
    // The last sequence sent, or skipped as before `from_sequence`.
    let mut last = from_sequence.saturating_sub(1);
    // The last sequence actually sent (0 if none), for heartbeats.
    let mut sent = 0;
    let mut caught_up = false;
    // Held while a stream that fell behind reads what it missed.
    let mut lagging = None;
    loop {
        let (mut live, head, seat) = registry.subscribe(game_id, credential, follow).await?;
        if presence.is_none() {
            presence = seat;
        }
        while last < head {
            let page = store.read(game_id, last + 1, head, PAGE).await?;
            if page.is_empty() {
                return Err(RegistryError::Internal(format!(
                    "game {game_id}: events {}..={head} missing",
                    last + 1
                )));
            }
            for stored in page {
                let wire = pb::GameEvent::decode(stored.payload.as_slice()).map_err(|e| {
                    RegistryError::Internal(format!(
                        "game {game_id} event {}: {e}",
                        stored.sequence
                    ))
                })?;
                last = stored.sequence;
                if !wanted(&wire) {
                    continue;
                }
                sent = last;
                if !tx.message(event(wire)).await {
                    return Ok(());
                }
            }
        }
        drop(lagging.take());
        if !caught_up {
            caught_up = true;
            let marker =
                pb::stream_events_response::Kind::CaughtUp(pb::CaughtUp { sequence: head });
            if !tx.message(marker).await || !follow {
                return Ok(());
            }
        }
        // A heartbeat goes out once the stream has been quiet for the
        // interval: the timer is moved on when it fires early, never on
        // each event (resetting a timer per event per follower was a
        // measurable share of a big fan-out).
        let mut quiet_since = Instant::now();
        let beat = sleep_until(quiet_since + heartbeat);
        tokio::pin!(beat);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return Err(RegistryError::ShuttingDown),
                () = tx.closed() => return Ok(()),
                received = live.recv() => match received {
                    Ok(e) if e.sequence <= last => {}
                    Ok(e) if e.sequence == last + 1 && !wanted(&e) => last = e.sequence,
                    Ok(e) if e.sequence == last + 1 => {
                        last = e.sequence;
                        sent = last;
                        if !tx.message(event(e.as_ref().clone())).await {
                            return Ok(());
                        }
                        quiet_since = Instant::now();
                    }
                    // A gap (cannot happen with one writer per game) or a
                    // lagged or closed subscription: resubscribe and read
                    // what was missed from the store.
                    Ok(_) | Err(RecvError::Lagged(_)) | Err(RecvError::Closed) => {
                        lagging = Some(registry.inner.metrics.stream_catching_up());
                        tracing::debug!(last, "subscriber fell behind; catching up from the store");
                        break;
                    }
                },
                () = &mut beat => {
                    let due = quiet_since + heartbeat;
                    if Instant::now() < due {
                        beat.as_mut().reset(due);
                        continue;
                    }
                    quiet_since = Instant::now();
                    beat.as_mut().reset(quiet_since + heartbeat);
                    let hb = pb::Heartbeat { sequence: sent, sent_at: Some(convert::timestamp(registry.settings().clock.now_ms())) };
                    if !tx.message(pb::stream_events_response::Kind::Heartbeat(hb)).await {
                        return Ok(());
                    }
                }
            }
        }
    }
}
