//! `plylog.v1.StreamEventsResponse`, written by hand rather than generated,
//! so a server can send an event as the bytes it already has: a stored or
//! just-appended event is an encoded `GameEvent`, and its stream message is
//! those bytes behind one field header. A game's event is then encoded once
//! for all its followers, not once per follower (issue 15's fan-out:
//! cloning and encoding each follower's copy was about 5% of the server's
//! samples in a profile of 10,000 followers).
//!
//! On the wire it is exactly the generated message: clients decode it as
//! usual, into [`StreamEventsResponse::kind`].

use bytes::{Buf, BufMut, Bytes};
use prost::encoding::{DecodeContext, WireType};
use prost::{DecodeError, Message};

use super::replay::{field_len, put_field};

/// `StreamEventsResponse.event`: field 1, length-delimited.
const EVENT_KEY: u32 = 1;

/// `GameEvent.sequence`: field 2, a varint.
const SEQUENCE_KEY: u32 = 2;

/// The oneof of [`StreamEventsResponse`], as prost would generate it.
pub mod stream_events_response {
    use crate::proto::{CaughtUp, GameEvent, Heartbeat};

    /// What a stream message carries: exactly one is set.
    #[expect(
        clippy::large_enum_variant,
        reason = "the shape prost generates, which clients match on"
    )]
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Kind {
        /// An event of the log, in sequence order, each exactly once.
        #[prost(message, tag = "1")]
        Event(GameEvent),
        /// The stored history has been sent; sent once per stream.
        #[prost(message, tag = "2")]
        CaughtUp(CaughtUp),
        /// The stream is alive but nothing happened for a while.
        #[prost(message, tag = "3")]
        Heartbeat(Heartbeat),
    }
}

use stream_events_response::Kind;

/// One message of StreamEvents (see the proto): an event, the caught-up
/// marker or a heartbeat. A server may hold an event as its encoded bytes
/// ([`StreamEventsResponse::encoded_event`]); such a message encodes to the
/// same bytes as one whose [`StreamEventsResponse::kind`] holds the decoded
/// event, but the two do not compare equal. A decoded message always has
/// its `kind`.
#[derive(Clone, PartialEq, Default, Debug)]
pub struct StreamEventsResponse {
    /// What the message carries; `None` when it holds an encoded event.
    pub kind: Option<Kind>,
    /// An encoded `GameEvent`, sent as the event case.
    event_bytes: Option<Bytes>,
}

impl StreamEventsResponse {
    /// A message of `kind`.
    pub fn new(kind: Kind) -> Self {
        StreamEventsResponse {
            kind: Some(kind),
            event_bytes: None,
        }
    }

    /// The sequence of the event this message carries, `None` for a
    /// caught-up marker or a heartbeat (or encoded bytes with no sequence
    /// field: sequence 0 is omitted on the wire). An encoded event is not
    /// decoded: its top-level fields are skipped up to `sequence` (field 2,
    /// right after the game id).
    pub fn event_sequence(&self) -> Option<u64> {
        if let Some(Kind::Event(event)) = &self.kind {
            return Some(event.sequence);
        }
        let mut bytes = self.event_bytes.as_ref()?.as_ref();
        while bytes.has_remaining() {
            let (tag, wire_type) = prost::encoding::decode_key(&mut bytes).ok()?;
            if tag == SEQUENCE_KEY && wire_type == WireType::Varint {
                return prost::encoding::decode_varint(&mut bytes).ok();
            }
            prost::encoding::skip_field(wire_type, tag, &mut bytes, DecodeContext::default())
                .ok()?;
        }
        None
    }

    /// The event case, from an encoded `GameEvent` (as the log stores it).
    /// The bytes are sent as they are: the caller vouches that they decode.
    /// O(1): the bytes are shared, not copied.
    pub fn encoded_event(event: Bytes) -> Self {
        StreamEventsResponse {
            kind: None,
            event_bytes: Some(event),
        }
    }
}

impl Message for StreamEventsResponse {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        match (&self.event_bytes, &self.kind) {
            (Some(event), _) => put_field(EVENT_KEY, event, buf),
            (None, Some(kind)) => kind.encode(buf),
            (None, None) => {}
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if !matches!(tag, 1..=3) {
            return prost::encoding::skip_field(wire_type, tag, buf, ctx);
        }
        // Merging into a message that holds encoded bytes merges into what
        // they decode to.
        if let Some(event) = self.event_bytes.take() {
            self.kind = Some(Kind::Event(Message::decode(event)?));
        }
        Kind::merge(&mut self.kind, tag, wire_type, buf, ctx).map_err(|mut error| {
            error.push("StreamEventsResponse", "kind");
            error
        })
    }

    fn encoded_len(&self) -> usize {
        match (&self.event_bytes, &self.kind) {
            (Some(event), _) => field_len(EVENT_KEY, event.len()),
            (None, Some(kind)) => kind.encoded_len(),
            (None, None) => 0,
        }
    }

    fn clear(&mut self) {
        *self = StreamEventsResponse::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{CaughtUp, GameEvent};

    /// A stream that follows its game across owners reads each event's
    /// sequence, encoded or not.
    #[test]
    fn an_events_sequence_is_read_from_its_bytes_without_decoding_it() {
        let event = GameEvent {
            game_id: "a-game".into(),
            sequence: 300,
            round: 2,
            ..Default::default()
        };
        let encoded = StreamEventsResponse::encoded_event(event.encode_to_vec().into());
        assert_eq!(encoded.event_sequence(), Some(300));
        let decoded = StreamEventsResponse::new(Kind::Event(event));
        assert_eq!(decoded.event_sequence(), Some(300));
        let marker = StreamEventsResponse::new(Kind::CaughtUp(CaughtUp { sequence: 4 }));
        assert_eq!(marker.event_sequence(), None);
    }

    /// An encoded event encodes byte for byte as the same event decoded,
    /// reports that length, and decodes back to it; the other cases go
    /// through as prost encodes them.
    #[test]
    fn an_encoded_event_is_the_generated_message_on_the_wire() {
        let event = GameEvent {
            game_id: "g".to_owned(),
            sequence: 300,
            round: 2,
            ..GameEvent::default()
        };
        let decoded = StreamEventsResponse::new(Kind::Event(event.clone()));
        let encoded = StreamEventsResponse::encoded_event(event.encode_to_vec().into());
        let bytes = encoded.encode_to_vec();
        assert_eq!(bytes, decoded.encode_to_vec());
        assert_eq!(encoded.encoded_len(), bytes.len());
        assert_eq!(
            StreamEventsResponse::decode(bytes.as_slice()).expect("decodes"),
            decoded
        );
        let marker = StreamEventsResponse::new(Kind::CaughtUp(CaughtUp { sequence: 9 }));
        let bytes = marker.encode_to_vec();
        assert_eq!(bytes.len(), marker.encoded_len());
        assert_eq!(
            StreamEventsResponse::decode(bytes.as_slice()).expect("decodes"),
            marker
        );
        assert_eq!(StreamEventsResponse::default().encoded_len(), 0);
    }

    /// A field merged into a message holding encoded bytes merges into the
    /// event they hold, as it would into the decoded event.
    #[test]
    fn merging_into_an_encoded_event_merges_into_its_event() {
        let first = GameEvent {
            sequence: 4,
            ..GameEvent::default()
        };
        let more = StreamEventsResponse::new(Kind::Event(GameEvent {
            round: 3,
            ..GameEvent::default()
        }));
        let mut merged = StreamEventsResponse::encoded_event(first.encode_to_vec().into());
        merged
            .merge(more.encode_to_vec().as_slice())
            .expect("merges");
        let expected = GameEvent {
            sequence: 4,
            round: 3,
            ..GameEvent::default()
        };
        assert_eq!(merged, StreamEventsResponse::new(Kind::Event(expected)));
    }
}
