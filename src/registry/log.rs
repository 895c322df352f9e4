//! Stored logs read back: each payload decoded into its wire and domain
//! forms, and a whole log replayed through the rules. One path for the game
//! actors, GetReplay and the operator commands (`plylog verify` ...), so a log
//! the server would refuse to load is refused by them too, for the same
//! reason.

use prost::Message;

use crate::game::{Event, GameState, ReplayError};
use crate::proto::{self as pb, convert};
use crate::store::StoredEvent;
use crate::store::chain::{self, Chain};

/// Decodes a stored event of game `game_id` into its wire and domain forms.
///
/// # Errors
/// [`ReplayError`] at the event's sequence: a payload that does not decode,
/// that names another game or sequence, or that is not a well-formed event.
pub fn decode(game_id: &str, stored: &StoredEvent) -> Result<(pb::GameEvent, Event), ReplayError> {
    let wire = decode_wire(stored)?;
    if wire.game_id != game_id {
        return Err(malformed(
            stored,
            format!("payload names game {:?}", wire.game_id),
        ));
    }
    let event = convert::event_from_proto(&wire).map_err(|e| malformed(stored, e.to_string()))?;
    Ok((wire, event))
}

/// Decodes a stored event into its wire form.
///
/// # Errors
/// [`ReplayError`] at the event's sequence: a payload that does not decode
/// or that names another sequence.
fn decode_wire(stored: &StoredEvent) -> Result<pb::GameEvent, ReplayError> {
    let wire = pb::GameEvent::decode(stored.payload.as_slice())
        .map_err(|e| malformed(stored, e.to_string()))?;
    check_sequence(stored, wire.sequence)?;
    Ok(wire)
}

/// The two fields of a `plylog.v1.GameEvent` that GetReplay needs of an
/// event it passes on as stored: decoding only these reads the event's
/// fields' framing and skips their contents.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
struct EventHeader {
    #[prost(uint64, tag = "2")]
    sequence: u64,
    #[prost(uint32, tag = "4")]
    round: u32,
}

/// The round of a stored event that is passed on as it is (GetReplay's
/// events only), after checking that its fields are well framed and that
/// it names its own sequence. Its contents are not decoded: `plylog
/// verify`, and every load of the game, decode them all.
///
/// # Errors
/// [`ReplayError`] at the event's sequence: a payload whose fields do not
/// frame, or that names another sequence.
pub fn stored_round(stored: &StoredEvent) -> Result<u32, ReplayError> {
    let header = EventHeader::decode(stored.payload.as_slice())
        .map_err(|e| malformed(stored, e.to_string()))?;
    check_sequence(stored, header.sequence)?;
    Ok(header.round)
}

fn malformed(stored: &StoredEvent, why: String) -> ReplayError {
    ReplayError {
        sequence: stored.sequence,
        why,
    }
}

fn check_sequence(stored: &StoredEvent, named: u64) -> Result<(), ReplayError> {
    if named == stored.sequence {
        Ok(())
    } else {
        Err(malformed(stored, format!("payload says sequence {named}")))
    }
}

/// The time a stored event was recorded at, Unix epoch milliseconds.
pub fn recorded_at(wire: &pb::GameEvent) -> i64 {
    convert::timestamp_ms(wire.recorded_at.as_ref())
}

/// Decodes stored events of game `game_id` that must run densely from
/// sequence `first`, in order (see [`decode`]): the first that is missing
/// (the sequences skip) or does not decode is an error at its sequence.
pub fn decode_run<'a>(
    game_id: &'a str,
    stored: &'a [StoredEvent],
    first: u64,
) -> impl Iterator<Item = Result<(pb::GameEvent, Event), ReplayError>> + 'a {
    stored.iter().zip(first..).map(move |(s, expected)| {
        check_dense(s, expected)?;
        decode(game_id, s)
    })
}

fn check_dense(stored: &StoredEvent, expected: u64) -> Result<(), ReplayError> {
    if stored.sequence == expected {
        Ok(())
    } else {
        Err(ReplayError {
            sequence: expected,
            why: format!("missing: the log skips to sequence {}", stored.sequence),
        })
    }
}

/// Checks the integrity chain (see [`chain`]) of stored events of game
/// `game_id` that run densely from sequence `first`, after the event whose
/// chain value is `previous` ([`chain::GENESIS`] when `first` is 1).
/// Returns the chain value of the last event (`previous` when there is
/// none). O(bytes of the payloads); nothing is decoded.
///
/// # Errors
/// [`ReplayError`] at the first event that is missing (the sequences
/// skip) or whose stored chain value is not the one its bytes and its
/// predecessor's give: a stored byte of it, or of its chain value, changed.
pub fn check_chain(
    game_id: &str,
    previous: &Chain,
    stored: &[StoredEvent],
    first: u64,
) -> Result<Chain, ReplayError> {
    let mut previous = *previous;
    for (event, expected) in stored.iter().zip(first..) {
        check_dense(event, expected)?;
        let linked = chain::link(&previous, game_id, event.sequence, &event.payload);
        if event.chain != linked {
            return Err(malformed(
                event,
                "the integrity chain breaks here: a stored byte of this event or of its \
                 chain value changed"
                    .into(),
            ));
        }
        previous = linked;
    }
    Ok(previous)
}

/// Rebuilds game `game_id` from its stored events `1..` (all of them, or
/// the first N for the position after event N), after checking their
/// integrity chain: the state, and the time of creation (Unix epoch
/// milliseconds).
///
/// # Errors
/// [`ReplayError`] naming the first event that is missing (the sequences
/// skip), breaks the chain, does not decode, or does not fit the position
/// it lands on.
pub fn rebuild(game_id: &str, stored: &[StoredEvent]) -> Result<(GameState, i64), ReplayError> {
    check_chain(game_id, &chain::GENESIS, stored, 1)?;
    let mut created_at_ms = 0;
    let mut events = Vec::with_capacity(stored.len());
    for (decoded, expected) in decode_run(game_id, stored, 1).zip(1..) {
        let (wire, event) = decoded?;
        if expected == 1 {
            created_at_ms = recorded_at(&wire);
        }
        events.push((event, recorded_at(&wire)));
    }
    let state = GameState::replay(events)?;
    Ok((state, created_at_ms))
}
