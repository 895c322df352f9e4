//! StreamEvents: stored history, a caught-up marker, then live events, with
//! no gap and no duplicate.
//!
//! The order is what makes it gapless: subscribe to the game's live
//! broadcast first (the actor answers with the sequence the subscription
//! starts after), then read the stored history up to that sequence, then
//! forward live events above the last one sent. A subscriber that falls
//! behind the broadcast buffer is never skipped ahead: it subscribes again
//! and reads what it missed from the store.

use std::pin::Pin;
use std::task::{Context, Poll};

use prost::Message;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::{Instant, sleep_until};
use tokio_stream::Stream;
use tracing::Span;

use super::{RegistryError, StreamRequest, StreamSlot};
use crate::proto::{self as pb, convert};

/// Events read from the store per query while catching up: a stream that
/// stops being read mid-page holds the rest of it (128 events, about 14
/// KB for moves; 512 held about 60 KB).
const PAGE: u32 = 128;

/// A stream's items: its messages, or the error that ends it.
pub(super) type Item = Result<pb::StreamEventsResponse, RegistryError>;

/// An open event stream (see [`super::Registry::stream`]), polled by the
/// transport itself: no task and no buffer of its own stand between the
/// game's broadcast and the client's HTTP/2 stream. The transport polls it
/// only while the client's window and HTTP/2's send buffer have room, so a
/// follower that does not read stops taking events, falls behind the
/// broadcast, and later reads what it missed from the store. Dropping it (the client went
/// away) drops its subscription and gives back its stream slot.
///
/// Items are `StreamEventsResponse` messages in order, or a
/// [`RegistryError`] as the last item: `NotFound`, `LimitReached`
/// (`max_streams_per_game`), `ShuttingDown`, `Internal` (an event missing
/// or corrupt in the store), or the store's own errors.
pub type EventStream = Traced<Item>;

/// A stream of `I` whose every poll runs inside its tracing span, so what
/// it logs while reading and sending carries the call's fields: the type
/// of [`EventStream`] and of the feed's stream.
pub struct Traced<I> {
    span: Span,
    items: Pin<Box<dyn Stream<Item = I> + Send>>,
}

impl<I> Traced<I> {
    /// `items`, polled inside `span`.
    pub(super) fn new(span: Span, items: impl Stream<Item = I> + Send + 'static) -> Self {
        Traced {
            span,
            items: Box::pin(items),
        }
    }
}

impl<I> Stream for Traced<I> {
    type Item = I;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<I>> {
        let this = &mut *self;
        let _entered = this.span.enter();
        this.items.as_mut().poll_next(cx)
    }
}

/// Opens the stream `request` asks for, holding `slot` for as long as it
/// is open.
pub(super) fn open(slot: StreamSlot, request: StreamRequest) -> EventStream {
    // DEBUG, as a call's span: the stream enters it on every poll, and at
    // INFO that took about 7% of the server's CPU when 10,000 followers
    // each took one event (issue 15).
    let span = tracing::debug_span!(
        "stream",
        game_id = %request.game_id,
        from_sequence = request.from_sequence,
        follow = request.follow
    );
    Traced::new(span, items(slot, request))
}

fn message(kind: pb::stream_events_response::Kind) -> pb::StreamEventsResponse {
    pb::StreamEventsResponse::new(kind)
}

/// The stream's messages: the stored history from `from_sequence`, the
/// caught-up marker, then (when following) live events and heartbeats.
/// An error is the last item.
fn items(registry: StreamSlot, request: StreamRequest) -> impl Stream<Item = Item> + Send {
    async_stream::try_stream! {
        let StreamRequest {
            game_id,
            from_sequence,
            follow,
            round,
            credential,
        } = &request;
        // The seat this stream keeps present, held for the stream's life.
        let mut presence = None;
        let (game_id, from_sequence, follow) = (game_id.as_str(), *from_sequence, *follow);
        // Whether an event of this round is in the round asked for.
        let wanted = |of: u32| round.is_none_or(|r| r == of);
        let store = &registry.inner.store;
        let shutdown = registry.inner.shutdown.clone();
        // Made once, not per event: with thousands of followers of a game,
        // registering with the shared shutdown signal per event took its
        // lock twice per event per stream.
        let cancelled = shutdown.cancelled();
        tokio::pin!(cancelled);
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
                page.first().ok_or_else(|| {
                    RegistryError::Internal(format!(
                        "game {game_id}: events {}..={head} missing",
                        last + 1
                    ))
                })?;
                for stored in page {
                    // Decoded to check it and read its round; sent as stored.
                    let wire = pb::GameEvent::decode(stored.payload.as_slice()).map_err(|e| {
                        RegistryError::Internal(format!(
                            "game {game_id} event {}: {e}",
                            stored.sequence
                        ))
                    })?;
                    last = stored.sequence;
                    if !wanted(wire.round) {
                        continue;
                    }
                    sent = last;
                    yield pb::StreamEventsResponse::encoded_event(stored.payload.into());
                }
            }
            drop(lagging.take());
            if !caught_up {
                caught_up = true;
                yield message(pb::stream_events_response::Kind::CaughtUp(pb::CaughtUp {
                    sequence: head,
                }));
                if !follow {
                    break;
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
                let next = tokio::select! {
                    // An event first: a stream woken by one then polls
                    // neither the shutdown signal nor the heartbeat timer.
                    // A stream that keeps up sees shutdown once its game's
                    // live buffer is drained, at most its capacity later.
                    biased;
                    received = live.recv() => match received {
                        Ok(e) if e.sequence <= last => continue,
                        Ok(e) if e.sequence == last + 1 && !wanted(e.round) => {
                            last = e.sequence;
                            continue;
                        }
                        Ok(e) if e.sequence == last + 1 => {
                            last = e.sequence;
                            sent = last;
                            quiet_since = Instant::now();
                            // The game's encoded event, shared by every
                            // subscriber: no copy, no encoding per stream.
                            Ok(pb::StreamEventsResponse::encoded_event(e.payload))
                        }
                        // A gap (cannot happen with one writer per game) or
                        // a lagged or closed subscription: resubscribe and
                        // read what was missed from the store.
                        Ok(_) | Err(RecvError::Lagged(_)) | Err(RecvError::Closed) => {
                            lagging = Some(registry.inner.metrics.stream_catching_up());
                            tracing::debug!(last, "subscriber fell behind; catching up from the store");
                            break;
                        }
                    },
                    () = &mut cancelled => Err(RegistryError::ShuttingDown),
                    () = &mut beat => {
                        let due = quiet_since + heartbeat;
                        if Instant::now() < due {
                            beat.as_mut().reset(due);
                            continue;
                        }
                        quiet_since = Instant::now();
                        beat.as_mut().reset(quiet_since + heartbeat);
                        Ok(message(pb::stream_events_response::Kind::Heartbeat(pb::Heartbeat {
                            sequence: sent,
                            sent_at: Some(convert::timestamp(registry.settings().clock.now_ms())),
                        })))
                    }
                };
                yield next?;
            }
        }
    }
}
