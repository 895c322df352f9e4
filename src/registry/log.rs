//! Stored logs read back: each payload decoded into its wire and domain
//! forms, and a whole log replayed through the rules. One path for the game
//! actors, GetReplay and the operator commands (`plylog verify` ...), so a log
//! the server would refuse to load is refused by them too, for the same
//! reason.

use prost::Message;

use crate::game::{Event, GameState, ReplayError};
use crate::proto::{self as pb, convert};
use crate::store::StoredEvent;

/// Decodes a stored event into its wire and domain forms.
///
/// # Errors
/// [`ReplayError`] at the event's sequence: a payload that does not decode,
/// that names another sequence, or that is not a well-formed event.
pub fn decode(stored: &StoredEvent) -> Result<(pb::GameEvent, Event), ReplayError> {
    let wire = decode_wire(stored)?;
    let event = convert::event_from_proto(&wire).map_err(|e| ReplayError {
        sequence: stored.sequence,
        why: e.to_string(),
    })?;
    Ok((wire, event))
}

/// Decodes a stored event into its wire form only, for a reader that
/// passes it on without applying it (GetReplay's events).
///
/// # Errors
/// [`ReplayError`] at the event's sequence: a payload that does not decode
/// or that names another sequence.
pub fn decode_wire(stored: &StoredEvent) -> Result<pb::GameEvent, ReplayError> {
    let bad = |why: String| ReplayError {
        sequence: stored.sequence,
        why,
    };
    let wire = pb::GameEvent::decode(stored.payload.as_slice()).map_err(|e| bad(e.to_string()))?;
    if wire.sequence != stored.sequence {
        return Err(bad(format!("payload says sequence {}", wire.sequence)));
    }
    Ok(wire)
}

/// The time a stored event was recorded at, Unix epoch milliseconds.
pub fn recorded_at(wire: &pb::GameEvent) -> i64 {
    convert::timestamp_ms(wire.recorded_at.as_ref())
}

/// Decodes stored events that must run densely from sequence `first`, in
/// order (see [`decode`]): the first that is missing (the sequences skip)
/// or does not decode is an error at its sequence.
pub fn decode_run(
    stored: &[StoredEvent],
    first: u64,
) -> impl Iterator<Item = Result<(pb::GameEvent, Event), ReplayError>> + '_ {
    stored.iter().zip(first..).map(|(s, expected)| {
        if s.sequence != expected {
            return Err(ReplayError {
                sequence: expected,
                why: format!("missing: the log skips to sequence {}", s.sequence),
            });
        }
        decode(s)
    })
}

/// Rebuilds a game from its stored events `1..` (all of them, or the first
/// N for the position after event N): the state, and the time of creation
/// (Unix epoch milliseconds).
///
/// # Errors
/// [`ReplayError`] naming the first event that is missing (the sequences
/// skip), does not decode, or does not fit the position it lands on.
pub fn rebuild(stored: &[StoredEvent]) -> Result<(GameState, i64), ReplayError> {
    let mut created_at_ms = 0;
    let mut events = Vec::with_capacity(stored.len());
    for (decoded, expected) in decode_run(stored, 1).zip(1..) {
        let (wire, event) = decoded?;
        if expected == 1 {
            created_at_ms = recorded_at(&wire);
        }
        events.push((event, recorded_at(&wire)));
    }
    let state = GameState::replay(events)?;
    Ok((state, created_at_ms))
}
