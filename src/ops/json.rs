//! A stored event as one line of JSON: the `plylog.v1.GameEvent` in
//! protobuf's canonical JSON mapping (proto3 JSON: lowerCamelCase field
//! names, enums by name, 64-bit integers as strings, timestamps in RFC
//! 3339, default values left out), by prost-reflect from the descriptors
//! compiled into the binary. The event carries its game id, sequence and
//! recording time, so a line needs nothing around it.

use std::sync::LazyLock;

use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};

use crate::game::is_disruptive;
use crate::proto::{self as pb, FILE_DESCRIPTOR_SET};

/// The descriptor of `plylog.v1.GameEvent`, read once from the binary's own
/// descriptor set.
static GAME_EVENT: LazyLock<MessageDescriptor> = LazyLock::new(|| {
    DescriptorPool::decode(FILE_DESCRIPTOR_SET)
        .expect("the compiled-in descriptor set decodes")
        .get_message_by_name("plylog.v1.GameEvent")
        .expect("the descriptor set has plylog.v1.GameEvent")
});

/// The descriptor of `plylog.v1.StreamAllEventsResponse`, for `plylog
/// feed`'s lines.
static FEED_MESSAGE: LazyLock<MessageDescriptor> = LazyLock::new(|| {
    GAME_EVENT
        .parent_pool()
        .get_message_by_name("plylog.v1.StreamAllEventsResponse")
        .expect("the descriptor set has plylog.v1.StreamAllEventsResponse")
});

/// The stored event `payload` (an encoded GameEvent) as one line of JSON,
/// without the newline, every [`is_disruptive`] character in it escaped
/// ([`escape_disruptive`]).
///
/// # Errors
/// A payload that is not an encoded GameEvent, or holds a value JSON
/// cannot show (a timestamp past the year 9999).
pub(super) fn to_line(payload: &[u8]) -> Result<String, String> {
    line_of(&GAME_EVENT, payload)
}

/// A StreamAllEvents message as one line of JSON, as [`to_line`] writes an
/// event: `{"event":{"position":"7","event":{...}}}` or
/// `{"checkpoint":{...}}`.
///
/// # Errors
/// As [`to_line`].
pub(super) fn feed_line(message: &pb::StreamAllEventsResponse) -> Result<String, String> {
    line_of(&FEED_MESSAGE, &message.encode_to_vec())
}

/// `bytes`, an encoded message of `descriptor`, as one line of JSON.
fn line_of(descriptor: &MessageDescriptor, bytes: &[u8]) -> Result<String, String> {
    let message = DynamicMessage::decode(descriptor.clone(), bytes).map_err(|e| e.to_string())?;
    serde_json::to_string(&message)
        .map(escape_disruptive)
        .map_err(|e| e.to_string())
}

/// JSON text with each [`is_disruptive`] character written as a `\uXXXX`
/// escape, which reads back as the same character. serde_json escapes the
/// C0 controls itself but writes DEL, the C1 controls and the
/// bidirectional formatting characters as they are, and a terminal acts on
/// them. They are all in the Basic Multilingual Plane, and JSON's
/// structure is ASCII, so each sits inside a string.
pub(super) fn escape_disruptive(json: String) -> String {
    if !json.chars().any(is_disruptive) {
        return json;
    }
    let mut escaped = String::with_capacity(json.len() + 8);
    for c in json.chars() {
        if is_disruptive(c) {
            escaped.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            escaped.push(c);
        }
    }
    escaped
}

/// A line of JSON read back as a GameEvent. Unknown fields are refused.
///
/// # Errors
/// What is wrong with the line, in serde_json's words.
pub(super) fn from_line(line: &str) -> Result<pb::GameEvent, String> {
    let mut json = serde_json::Deserializer::from_str(line);
    let event = DynamicMessage::deserialize(GAME_EVENT.clone(), &mut json)
        .and_then(|event| json.end().map(|()| event))
        .map_err(|e| e.to_string())?;
    pb::GameEvent::decode(event.encode_to_vec().as_slice()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::convert;

    #[test]
    fn an_event_line_is_canonical_proto3_json_and_reads_back_the_same() {
        let event = pb::GameEvent {
            game_id: "g1".into(),
            sequence: 12,
            recorded_at: Some(convert::timestamp(1_700_000_000_250)),
            round: 0,
            kind: Some(pb::game_event::Kind::MoveUndone(pb::MoveUndone {
                seat: 1,
                undone_sequence: 11,
                placement: Some(pb::Cell { row: 0, col: 2 }),
                requested_by: Some(0),
            })),
        };
        let line = to_line(&event.encode_to_vec()).unwrap();
        assert_eq!(
            line,
            r#"{"gameId":"g1","sequence":"12","recordedAt":"2023-11-14T22:13:20.250Z","moveUndone":{"seat":1,"undoneSequence":"11","placement":{"col":2},"requestedBy":0}}"#
        );
        assert_eq!(from_line(&line).unwrap(), event);
    }

    #[test]
    fn a_payload_that_json_cannot_show_is_an_error_not_a_panic() {
        let far = pb::GameEvent {
            recorded_at: Some(prost_types::Timestamp {
                seconds: i64::MAX,
                nanos: 0,
            }),
            ..Default::default()
        };
        assert!(to_line(&far.encode_to_vec()).is_err());
        assert!(to_line(b"\xff\xff").is_err());
    }

    #[test]
    fn a_line_escapes_what_acts_on_a_terminal_and_reads_back_the_same() {
        let event = pb::GameEvent {
            game_id: "g1".into(),
            sequence: 1,
            kind: Some(pb::game_event::Kind::GameCreated(pb::GameCreated {
                seats: vec![pb::Seat {
                    player_id: "admin\u{202e}gnp.exe".into(),
                    display_name: "\u{1b}]0;title\u{7}\u{9b}2J\u{7f}".into(),
                    symbol: "X".into(),
                    bot: None,
                }],
                ..Default::default()
            })),
            ..Default::default()
        };
        let line = to_line(&event.encode_to_vec()).unwrap();
        assert!(!line.chars().any(is_disruptive), "{line:?}");
        assert!(
            line.contains(r#""playerId":"admin\u202egnp.exe""#),
            "{line}"
        );
        assert!(
            line.contains(r#""displayName":"\u001b]0;title\u0007\u009b2J\u007f""#),
            "{line}"
        );
        assert_eq!(from_line(&line).unwrap(), event);
    }

    #[test]
    fn a_line_with_an_unknown_field_or_trailing_text_is_refused() {
        let unknown = from_line(r#"{"gameId":"g1","sequence":"1","colour":"red"}"#).unwrap_err();
        assert!(unknown.contains("colour"), "{unknown}");
        assert!(from_line(r#"{"gameId":"g1"} {}"#).is_err());
    }
}
