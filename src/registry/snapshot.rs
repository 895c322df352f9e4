//! Snapshots: a game's state after one of its events, kept so that loading
//! a long log does not replay it from sequence 1 (issue 15: a
//! 100,000-move game loads in a fraction of a full replay).
//!
//! A snapshot is only a cache, and is checked as a whole before it is
//! used. Its payload is the [`FORMAT`] version (a postcard varint), the
//! SHA-256 of the rest (its checksum, 32 bytes), then, postcard-encoded, the
//! game's creation time, the integrity chain value of the event it was
//! taken after (see [`crate::store::chain`]) and the [`GameState`]. It is
//! used only when its format is this build's, its checksum matches, it
//! decodes whole, its state holds its invariants
//! ([`GameState::check_invariants`]) at the snapshot's sequence, its chain
//! value is the stored event's at that sequence, and the events after it
//! link onto that value and replay onto the state; otherwise the game is
//! replayed from sequence 1, so deleting every snapshot changes no answer.
//! The chain value vouches for every event up to the snapshot: a log
//! changed under a snapshot no longer matches it.
//!
//! Postcard: <https://postcard.jamesmunns.com/wire-format>.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::log;
use crate::game::GameState;
use crate::store::chain::Chain;
use crate::store::{Snapshot, StoredEvent};

/// The encoding's version. Any change to the serialized shape of
/// [`GameState`] (a field added, removed, reordered or retyped anywhere
/// in it, its rules and positions included) must bump it, so a snapshot
/// written by an older build is replayed past, not misread; the
/// golden-bytes test below fails on such a change as a reminder. 3: the
/// checksum, and the chain value in place of the event payload's hash. 4:
/// the game's configuration keeps when its players were matched
/// (CreateGame's `matched_at`). 5: and its labels, and when its clocks
/// start (`clocks_start_at`). 6: chess (a move's [`crate::rules::Played::chess`], new
/// moves, rules, positions and end reasons).
pub const FORMAT: u32 = 6;

/// What follows the format version and the checksum: `S` is `&GameState`
/// when encoding and `GameState` when decoding.
#[derive(Serialize, Deserialize)]
struct Body<S> {
    /// Unix epoch milliseconds of the game's creation.
    created_at_ms: i64,
    /// The integrity chain value of the event at the snapshot's sequence.
    chain: Chain,
    state: S,
}

/// Why a snapshot was not used (the game is then replayed from 1).
#[derive(Debug, thiserror::Error)]
pub enum Unusable {
    /// Written by a build with another encoding.
    #[error("format {found}, this build reads {FORMAT}")]
    Format {
        /// The format it names.
        found: u32,
    },
    /// Its bytes are not the ones it was written with.
    #[error("its checksum does not match its bytes")]
    Checksum,
    /// The bytes do not decode (or run past the state).
    #[error("does not decode: {0}")]
    Decode(String),
    /// The state breaks an invariant (see [`GameState::check_invariants`]).
    #[error("its state does not hold: {0}")]
    Invariant(String),
    /// The stored event at its sequence is not the one it was taken after
    /// (its chain value differs), or is missing.
    #[error("its chain value does not match the event at sequence {0}")]
    Chain(u64),
    /// The state is not at the snapshot's sequence.
    #[error("holds sequence {found}, not {sequence}")]
    Sequence {
        /// The row's sequence.
        sequence: u64,
        /// The state's.
        found: u64,
    },
    /// An event after it does not link onto it or replay onto it.
    #[error("the events after it do not replay: {0}")]
    Replay(String),
}

/// Encodes `state` (of a game created at `created_at_ms`, Unix epoch
/// milliseconds) as a snapshot payload, taken after the event whose chain
/// value is `chain`. O(state).
pub fn encode(state: &GameState, created_at_ms: i64, chain: Chain) -> Vec<u8> {
    let body = Body {
        created_at_ms,
        chain,
        state,
    };
    let body = postcard::to_stdvec(&body).expect("a game state encodes into memory");
    let mut bytes = postcard::to_stdvec(&FORMAT).expect("a u32 encodes");
    bytes.extend_from_slice(&Sha256::digest(&body));
    bytes.extend_from_slice(&body);
    bytes
}

/// The state right after the last of `events` of game `game_id`, resumed
/// from `snapshot`: `events` start at the snapshot's own sequence (checked
/// against its chain value) and run densely on from there, each linking
/// onto the one before. Returns the state and the game's creation time
/// (Unix epoch milliseconds).
///
/// # Errors
/// [`Unusable`]: the caller replays the game from sequence 1 instead.
pub fn resume(
    game_id: &str,
    snapshot: &Snapshot,
    events: &[StoredEvent],
) -> Result<(GameState, i64), Unusable> {
    let (found, rest) =
        postcard::take_from_bytes::<u32>(&snapshot.payload).map_err(decode_error)?;
    if found != FORMAT {
        return Err(Unusable::Format { found });
    }
    let (checksum, body) = rest.split_at_checked(32).ok_or(Unusable::Checksum)?;
    if Sha256::digest(body).as_slice() != checksum {
        return Err(Unusable::Checksum);
    }
    let (body, left) = postcard::take_from_bytes::<Body<GameState>>(body).map_err(decode_error)?;
    if !left.is_empty() {
        return Err(Unusable::Decode(format!(
            "{} bytes after the state",
            left.len()
        )));
    }
    let mut state = body.state;
    if state.sequence() != snapshot.sequence {
        return Err(Unusable::Sequence {
            sequence: snapshot.sequence,
            found: state.sequence(),
        });
    }
    state.check_invariants().map_err(Unusable::Invariant)?;
    let (first, after) = events
        .split_first()
        .filter(|(first, _)| first.sequence == snapshot.sequence && first.chain == body.chain)
        .ok_or(Unusable::Chain(snapshot.sequence))?;
    let replay = |e: crate::game::ReplayError| Unusable::Replay(e.to_string());
    log::check_chain(game_id, &body.chain, after, first.sequence + 1).map_err(replay)?;
    for decoded in log::decode_run(game_id, after, snapshot.sequence + 1) {
        let (wire, event) = decoded.map_err(replay)?;
        state
            .apply_stored(&event, log::recorded_at(&wire))
            .map_err(replay)?;
    }
    Ok((state, body.created_at_ms))
}

/// [`resume`] for a server: the resumed state and creation time, or `None`
/// after logging why `snapshot` (of `game_id`) is not usable, for the
/// caller to replay the game from sequence 1.
pub(crate) fn usable(
    game_id: &str,
    snapshot: &Snapshot,
    events: &[StoredEvent],
) -> Option<(GameState, i64)> {
    resume(game_id, snapshot, events)
        .inspect_err(|why| {
            tracing::warn!(
                game_id,
                sequence = snapshot.sequence,
                why = %why,
                "snapshot not used; replaying from the start"
            );
        })
        .ok()
}

fn decode_error(error: postcard::Error) -> Unusable {
    Unusable::Decode(error.to_string())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::game::{
        Command, Event, GameConfig, PlayedMove, SeatInfo, SeatLimits, decide, evolve,
    };
    use crate::rules::{
        ChessRules, ConnectFourRules, GomokuRules, HexRules, MnkRules, Move, OthelloRules,
        Overline, Played, PopBothLines, RuleSet, SnakesLaddersOptions, SnakesLaddersRules,
        WildRules,
    };

    /// A game of `rules` for two seats after `plies` uniformly random legal
    /// moves (fewer if it ends), seeded by `seed`, with one undo halfway.
    fn played(rules: RuleSet, plies: usize, seed: u64) -> GameState {
        played_with_log(rules, plies, seed).0
    }

    /// [`played`], and its events with their sequences.
    fn played_with_log(rules: RuleSet, plies: usize, seed: u64) -> (GameState, Vec<(u64, Event)>) {
        let seat = |id: &str, symbol: &str| SeatInfo {
            player_id: id.into(),
            display_name: String::new(),
            symbol: symbol.into(),
            bot: None,
        };
        let seats = vec![seat("ann", "X"), seat("bob", "O")];
        let config = GameConfig::new(rules, seats, SeatLimits::default()).expect("seats");
        let mut state = GameState::new(config, 1_000);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut log = Vec::new();
        for ply in 0..plies {
            let at = 1_000 + ply as i64;
            let command = match state.to_move() {
                None => break,
                Some(seat) if ply == plies / 2 && ply > 0 => Command::Undo {
                    requested_by: Some(Seat(1 - seat.0)),
                },
                Some(seat) => {
                    let rules = state.config().rules();
                    let moves: Vec<Move> = rules.legal_moves(state.position(), seat).collect();
                    let mv = moves[rng.random_range(0..moves.len())];
                    Command::Play {
                        seat: Some(seat),
                        mv,
                    }
                }
            };
            for event in decide(&state, &command, at).expect("a legal command") {
                evolve(&mut state, &event, at);
                log.push((state.sequence(), event));
            }
        }
        (state, log)
    }

    use crate::rules::Seat;

    /// A chain value standing for the log up to `sequence`, whose event
    /// there has payload `payload`.
    fn chain_at(sequence: u64, payload: &[u8]) -> Chain {
        crate::store::chain::link(&[9; 32], "g", sequence, payload)
    }

    fn stored(sequence: u64, payload: &[u8]) -> StoredEvent {
        StoredEvent {
            sequence,
            payload: payload.to_vec(),
            chain: chain_at(sequence, payload).to_vec(),
        }
    }

    fn snapshot_of(state: &GameState, event: &[u8]) -> Snapshot {
        Snapshot {
            game_id: "g".into(),
            sequence: state.sequence(),
            payload: encode(state, 42, chain_at(state.sequence(), event)),
        }
    }

    /// One rule set of every game kind.
    fn every_kind() -> Vec<RuleSet> {
        vec![
            RuleSet::Mnk(MnkRules::new(3, 3, 3, 100).unwrap()),
            RuleSet::Chess(ChessRules::standard()),
            RuleSet::Gomoku(
                GomokuRules::new(None, None, None, Overline::DoesNotWin, 1_000).unwrap(),
            ),
            RuleSet::Wild(WildRules::new(None, None, None, 100).unwrap()),
            RuleSet::ConnectFour(ConnectFourRules::STANDARD),
            RuleSet::ConnectFour(ConnectFourRules::STANDARD.with_pop_out(PopBothLines::MoverWins)),
            RuleSet::Othello(OthelloRules::new(None).unwrap()),
            RuleSet::Hex(HexRules::new(None, true, 1_000).unwrap()),
            RuleSet::SnakesLadders(
                SnakesLaddersRules::new(
                    SnakesLaddersOptions {
                        jumps: vec![(3, 22), (27, 5)],
                        extra_turn_on_six: true,
                        seed: 7,
                        ..SnakesLaddersOptions::default()
                    },
                    1_000,
                )
                .unwrap(),
            ),
        ]
    }

    #[test]
    fn every_game_kind_comes_back_whole() {
        let seed = 15;
        println!("seed {seed}");
        for rules in every_kind() {
            for plies in [0, 1, 7, 40] {
                let state = played(rules.clone(), plies, seed);
                let snapshot = snapshot_of(&state, b"event");
                let resumed = resume("g", &snapshot, &[stored(state.sequence(), b"event")]);
                assert_eq!(
                    resumed.expect("resumes"),
                    (state, 42),
                    "{rules:?} after {plies} plies"
                );
            }
        }
    }

    #[test]
    fn an_unusable_snapshot_says_why() {
        let state = played(RuleSet::Mnk(MnkRules::new(3, 3, 3, 100).unwrap()), 4, 1);
        let at = state.sequence();
        let good = snapshot_of(&state, b"event");
        let with = |payload: Vec<u8>, sequence: u64| Snapshot {
            payload,
            sequence,
            ..good.clone()
        };
        let why = |snapshot: &Snapshot, events: &[StoredEvent]| {
            resume("g", snapshot, events).unwrap_err().to_string()
        };
        let events = [stored(at, b"event")];
        let mut other = good.payload.clone();
        other[0] = 9;
        assert_eq!(
            why(&with(other, at), &events),
            "format 9, this build reads 6"
        );
        // Any byte after the version changes the checksum or the bytes it
        // covers.
        let mut trailing = good.payload.clone();
        trailing.push(0);
        assert_eq!(
            why(&with(trailing, at), &events),
            "its checksum does not match its bytes"
        );
        let cut = good.payload[..20].to_vec();
        assert_eq!(
            why(&with(cut, at), &events),
            "its checksum does not match its bytes"
        );
        let mut trailing = encode(&state, 42, chain_at(at, b"event"));
        let body = trailing.split_off(33);
        let mut body_with_more = body.clone();
        body_with_more.push(0);
        trailing.truncate(1);
        trailing.extend_from_slice(&Sha256::digest(&body_with_more));
        trailing.extend_from_slice(&body_with_more);
        assert_eq!(
            why(&with(trailing, at), &events),
            "does not decode: 1 bytes after the state"
        );
        assert_eq!(
            why(&good, &[stored(at, b"other")]),
            format!("its chain value does not match the event at sequence {at}")
        );
        assert_eq!(
            why(&good, &[]),
            format!("its chain value does not match the event at sequence {at}")
        );
        let early = with(good.payload.clone(), at - 1);
        assert_eq!(
            why(&early, &[stored(at - 1, b"event")]),
            format!("holds sequence {at}, not {}", at - 1)
        );
        assert_eq!(
            why(&good, &[stored(at, b"event"), stored(at + 2, b"x")]),
            format!(
                "the events after it do not replay: event {}: missing: the log skips to sequence {}",
                at + 1,
                at + 2
            )
        );
    }

    /// Issue 35, item 10: a snapshot is checked whole. Every one-bit
    /// change of its bytes, in every game kind, is refused (it never
    /// resumes to another state, and never panics).
    #[test]
    fn every_changed_bit_of_a_snapshot_is_refused() {
        let seed = 35;
        println!("seed {seed}");
        let mut tried = 0;
        for rules in every_kind() {
            let state = played(rules.clone(), 12, seed);
            let good = snapshot_of(&state, b"event");
            let events = [stored(state.sequence(), b"event")];
            assert!(resume("g", &good, &events).is_ok(), "{rules:?}");
            for at in 0..good.payload.len() {
                for bit in 0..8 {
                    let mut bad = good.clone();
                    bad.payload[at] ^= 1 << bit;
                    let resumed = resume("g", &bad, &events);
                    assert!(
                        resumed.is_err(),
                        "{rules:?}: bit {bit} of byte {at} changed, yet it resumed"
                    );
                    tried += 1;
                }
            }
        }
        println!("{tried} one-bit changes refused");
    }

    /// A snapshot whose checksum matches (written by a faulty build, or
    /// forged) but whose board holds a seat the game does not have is
    /// refused by the state's invariants, not used (a panic, before).
    #[test]
    fn a_state_that_breaks_its_invariants_is_refused_though_its_checksum_matches() {
        let state = played(RuleSet::Mnk(MnkRules::new(3, 3, 3, 100).unwrap()), 3, 3);
        let chain = chain_at(state.sequence(), b"event");
        let good = encode(&state, 42, chain);
        // The board: 3 rows, 3 columns, then its 9 cells (one stone).
        let body = &good[33..];
        let cells = body
            .windows(3)
            .position(|w| w == [3, 3, 9])
            .expect("the board's dimensions")
            + 3;
        let mut forged = body.to_vec();
        let stone = (cells..cells + 9)
            .find(|i| forged[*i] != 0)
            .expect("a stone");
        forged[stone] = 7;
        let mut payload = good[..1].to_vec();
        payload.extend_from_slice(&Sha256::digest(&forged));
        payload.extend_from_slice(&forged);
        let snapshot = Snapshot {
            payload,
            ..snapshot_of(&state, b"event")
        };
        let events = [stored(state.sequence(), b"event")];
        assert_eq!(
            resume("g", &snapshot, &events).unwrap_err().to_string(),
            "its state does not hold: a cell holds seat 6 of 2"
        );
    }

    /// The encoding of a fixed game, byte for byte. When this fails, the
    /// shape of [`GameState`] changed: bump [`FORMAT`] (older snapshots are
    /// then replayed past, not misread) and update the bytes here.
    #[test]
    fn the_encoding_is_pinned_to_its_format_version() {
        let state = played(RuleSet::Mnk(MnkRules::new(3, 3, 3, 100).unwrap()), 3, 3);
        let bytes = encode(&state, 1_764_547_200_000, [7; 32]);
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(FORMAT, 6);
        assert_eq!(hex, GOLDEN, "the snapshot encoding changed: bump FORMAT");
    }

    #[test]
    fn undo_stack_entries_keep_and_serialize_the_whole_played_move() {
        /// An undo-stack entry as it was kept before it was made compact.
        #[derive(Serialize)]
        #[serde(rename = "PlayedMove")]
        struct Whole<'a> {
            seat: Seat,
            sequence: u64,
            played: &'a Played,
        }
        // An m,n,k move but the last is 48 bytes, not a whole `Played`.
        assert_eq!(std::mem::size_of::<PlayedMove>(), 48);
        let seed = 15;
        println!("seed {seed}");
        let mut with_effects = 0;
        for rules in every_kind() {
            for plies in [1, 7, 40, 200] {
                let (state, log) = played_with_log(rules.clone(), plies, seed);
                let recorded: HashMap<u64, &Played> = log
                    .iter()
                    .filter_map(|(sequence, event)| match event {
                        Event::MovePlayed { played, .. } | Event::MoveRedone { played, .. } => {
                            Some((*sequence, played))
                        }
                        _ => None,
                    })
                    .collect();
                assert!(!state.moves().is_empty(), "{rules:?}: no move on the board");
                for entry in state.moves() {
                    let played = recorded[&entry.sequence];
                    assert_eq!(&entry.played(), played, "{rules:?} after {plies} plies");
                    with_effects += usize::from(
                        !played.flips.is_empty()
                            || played.roll.is_some()
                            || played.outcome.is_some(),
                    );
                    let whole = Whole {
                        seat: entry.seat,
                        sequence: entry.sequence,
                        played,
                    };
                    assert_eq!(
                        postcard::to_allocvec(entry).expect("encodes"),
                        postcard::to_allocvec(&whole).expect("encodes"),
                        "{rules:?} after {plies} plies"
                    );
                    assert_eq!(
                        serde_json::to_value(entry).expect("encodes"),
                        serde_json::to_value(&whole).expect("encodes"),
                        "{rules:?} after {plies} plies"
                    );
                }
            }
        }
        // Flips, rolls and outcomes were among them.
        assert!(with_effects > 20, "{with_effects} moves with effects");
    }

    const GOLDEN: &str = concat!(
        "06371a4d4adcf58e948122c0f32d101592a99b711dc69fce45a7b2ece555fdbf",
        "118090acf3da6607070707070707070707070707070707070707070707070707",
        "07070707070707000303030203616e6e0001580003626f6200014f0000000000",
        "0000000303090000000000010000000101010004000102010102000000000000",
        "00000400d40f0200000201000000d00f00000000000000",
    );
}
