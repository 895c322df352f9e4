//! `plylog.v1.GetReplayResponse`, written by hand rather than generated, so
//! a server can put its steps in as bytes: a stored event is already an
//! encoded `GameEvent`, and a step is that event's bytes behind a field
//! header. A 10,000-step page then costs a copy of each event, not a decode
//! into a `ReplayStep` and an encode back (issue 15's GetReplay goal).
//!
//! On the wire it is exactly the generated message: clients decode it as
//! usual, into [`GetReplayResponse::steps`].

use bytes::{Buf, BufMut};
use prost::encoding::{DecodeContext, WireType, encode_key, encode_varint, encoded_len_varint};
use prost::{DecodeError, Message};

use super::{Game, ReplayStep};

/// `ReplayStep.event` and `GetReplayResponse.steps`: field 1 and field 2,
/// length-delimited.
const EVENT_KEY: u32 = 1;
const STEPS_KEY: u32 = 2;
const POSITION_KEY: u32 = 2;

/// The reply of GetReplay (see the proto for its fields): the game at its
/// latest position, the page's steps, and the next page's token.
#[derive(Clone, PartialEq, Default)]
pub struct GetReplayResponse {
    /// The game at its latest position.
    pub game: Option<Game>,
    /// The steps of this page, in order, after those of
    /// [`GetReplayResponse::push_encoded_step`]. A decoded reply has them
    /// all here.
    pub steps: Vec<ReplayStep>,
    /// Pass as page_token to get the next steps; empty on the last page.
    pub next_page_token: String,
    /// Steps already encoded, as fields of this message (key, length, a
    /// `ReplayStep`), in order.
    encoded_steps: Vec<u8>,
}

impl GetReplayResponse {
    /// Appends a step made of an encoded `GameEvent` (as stored) and the
    /// encoded `Position` after it, if any. The bytes are copied as they
    /// are: the caller vouches that they decode.
    pub fn push_encoded_step(&mut self, event: &[u8], position: Option<&[u8]>) {
        let buf = &mut self.encoded_steps;
        buf.reserve(Self::encoded_step_len(
            event.len(),
            position.map(<[u8]>::len),
        ));
        encode_key(STEPS_KEY, WireType::LengthDelimited, buf);
        encode_varint(step_len(event.len(), position.map(<[u8]>::len)) as u64, buf);
        for (key, bytes) in [(EVENT_KEY, Some(event)), (POSITION_KEY, position)] {
            if let Some(bytes) = bytes {
                put_field(key, bytes, buf);
            }
        }
    }

    /// The bytes [`GetReplayResponse::push_encoded_step`] adds for an event
    /// of `event_len` bytes and a position of `position_len` bytes, if any.
    pub fn encoded_step_len(event_len: usize, position_len: Option<usize>) -> usize {
        field_len(STEPS_KEY, step_len(event_len, position_len))
    }
}

/// The bytes of a `ReplayStep` of an event of `event_len` bytes and a
/// position of `position_len` bytes, if any.
fn step_len(event_len: usize, position_len: Option<usize>) -> usize {
    field_len(EVENT_KEY, event_len) + position_len.map_or(0, |len| field_len(POSITION_KEY, len))
}

impl std::fmt::Debug for GetReplayResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GetReplayResponse")
            .field("game", &self.game)
            .field("steps", &self.steps)
            .field("next_page_token", &self.next_page_token)
            .field("encoded_steps_bytes", &self.encoded_steps.len())
            .finish()
    }
}

/// The bytes of a length-delimited field (key, length, `len` bytes).
pub(super) fn field_len(tag: u32, len: usize) -> usize {
    prost::encoding::key_len(tag) + encoded_len_varint(len as u64) + len
}

/// Writes `bytes` as length-delimited field `tag`: key, length, bytes.
pub(super) fn put_field(tag: u32, bytes: &[u8], buf: &mut impl BufMut) {
    encode_key(tag, WireType::LengthDelimited, buf);
    encode_varint(bytes.len() as u64, buf);
    buf.put_slice(bytes);
}

impl Message for GetReplayResponse {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        if let Some(game) = &self.game {
            prost::encoding::message::encode(1, game, buf);
        }
        buf.put_slice(&self.encoded_steps);
        prost::encoding::message::encode_repeated(STEPS_KEY, &self.steps, buf);
        if !self.next_page_token.is_empty() {
            prost::encoding::string::encode(3, &self.next_page_token, buf);
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        let field = match tag {
            1 => "game",
            STEPS_KEY => "steps",
            3 => "next_page_token",
            _ => return prost::encoding::skip_field(wire_type, tag, buf, ctx),
        };
        match tag {
            1 => prost::encoding::message::merge(
                wire_type,
                self.game.get_or_insert_with(Game::default),
                buf,
                ctx,
            ),
            STEPS_KEY => {
                prost::encoding::message::merge_repeated(wire_type, &mut self.steps, buf, ctx)
            }
            _ => prost::encoding::string::merge(wire_type, &mut self.next_page_token, buf, ctx),
        }
        .map_err(|mut error| {
            error.push("GetReplayResponse", field);
            error
        })
    }

    fn encoded_len(&self) -> usize {
        self.game
            .as_ref()
            .map_or(0, |game| prost::encoding::message::encoded_len(1, game))
            + self.encoded_steps.len()
            + prost::encoding::message::encoded_len_repeated(STEPS_KEY, &self.steps)
            + if self.next_page_token.is_empty() {
                0
            } else {
                prost::encoding::string::encoded_len(3, &self.next_page_token)
            }
    }

    fn clear(&mut self) {
        *self = GetReplayResponse::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::{GameEvent, Position};

    /// Steps pushed encoded read back as the same steps, between a game and
    /// a token, and their reported lengths are what they added.
    #[test]
    fn encoded_steps_decode_as_the_generated_message() {
        let event = |sequence| GameEvent {
            sequence,
            round: 2,
            ..GameEvent::default()
        };
        let position = Position {
            sequence: 8,
            ply: 3,
            ..Position::default()
        };
        let mut reply = GetReplayResponse {
            game: Some(Game {
                game_id: "g".to_owned(),
                ..Game::default()
            }),
            next_page_token: "9".to_owned(),
            ..GetReplayResponse::default()
        };
        let mut added = 0;
        let position_bytes = position.encode_to_vec();
        for (event, position) in [(event(7), None), (event(8), Some(&position_bytes))] {
            let event = event.encode_to_vec();
            reply.push_encoded_step(&event, position.map(Vec::as_slice));
            added += GetReplayResponse::encoded_step_len(event.len(), position.map(Vec::len));
        }
        let bytes = reply.encode_to_vec();
        assert_eq!(bytes.len(), reply.encoded_len());
        let decoded = GetReplayResponse::decode(bytes.as_slice()).expect("decodes");
        let expected = vec![
            ReplayStep {
                event: Some(event(7)),
                position: None,
            },
            ReplayStep {
                event: Some(event(8)),
                position: Some(position),
            },
        ];
        assert_eq!(decoded.steps, expected);
        assert_eq!(decoded.game, reply.game);
        assert_eq!(decoded.next_page_token, "9");
        let without_steps = GetReplayResponse {
            steps: Vec::new(),
            ..decoded.clone()
        };
        assert_eq!(added, bytes.len() - without_steps.encoded_len());
        // Byte for byte what the same steps encode to from their fields.
        assert_eq!(decoded.encode_to_vec(), bytes);
    }
}
