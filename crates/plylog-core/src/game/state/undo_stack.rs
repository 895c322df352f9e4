//! The undo stack's entries: [`PlayedMove`], kept small in memory, and
//! their serde (snapshots keep the format of a whole [`Played`], and a
//! decoded stack reserves its announced length at once).

use crate::rules::{ChessPlayed, Coord, Move, Outcome, Played, Roll, Seat};

/// A move on the board, as the undo stack keeps it: who played it, the
/// sequence of its MovePlayed event, the move, its placement, and whatever
/// else it did (flips, a roll, passes, an outcome) only when it did any.
///
/// Every move of every live game sits on an undo stack, and most do nothing
/// but put a piece down: such a move takes 48 bytes here, where a whole
/// [`Played`] inline took 128 (issue 15's memory per game). It serializes
/// exactly as `{ seat, sequence, played: Played }`, so snapshots keep their
/// format.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(from = "RecordedMove")]
pub struct PlayedMove {
    /// Who played it.
    pub seat: Seat,
    /// The sequence of its MovePlayed event.
    pub sequence: u64,
    /// The move as requested.
    pub mv: Move,
    /// The cell whose piece it put down or took away, as
    /// [`Played::placement`].
    pub placement: Option<Coord>,
    /// The rest of its [`Played`], `None` when all of it is empty.
    effects: Option<Box<Effects>>,
}

/// What a move did besides putting down or taking away a piece: the fields
/// of [`Played`] an m,n,k move leaves empty until the last.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Effects {
    flips: Vec<Coord>,
    roll: Option<Box<Roll>>,
    passes: Vec<Seat>,
    outcome: Option<Outcome>,
    chess: Option<Box<ChessPlayed>>,
}

impl PlayedMove {
    /// The undo-stack entry of `played`, played by `seat` as event
    /// `sequence`.
    pub fn new(seat: Seat, sequence: u64, played: Played) -> Self {
        let Played {
            mv,
            placement,
            flips,
            roll,
            passes,
            outcome,
            chess,
        } = played;
        let effects = (!flips.is_empty()
            || roll.is_some()
            || !passes.is_empty()
            || outcome.is_some()
            || chess.is_some())
        .then(|| {
            Box::new(Effects {
                flips,
                roll,
                passes,
                outcome,
                chess,
            })
        });
        PlayedMove {
            seat,
            sequence,
            mv,
            placement,
            effects,
        }
    }

    /// What the move did, as the rules recorded it (a copy).
    pub fn played(&self) -> Played {
        let (flips, roll, passes, outcome, chess) = match self.effects.as_deref() {
            Some(e) => (
                e.flips.clone(),
                e.roll.clone(),
                e.passes.clone(),
                e.outcome.clone(),
                e.chess.clone(),
            ),
            None => Default::default(),
        };
        Played {
            mv: self.mv,
            placement: self.placement,
            flips,
            roll,
            passes,
            outcome,
            chess,
        }
    }
}

/// [`PlayedMove`] as it is serialized: the whole [`Played`].
#[derive(serde::Deserialize)]
#[serde(rename = "PlayedMove")]
struct RecordedMove {
    seat: Seat,
    sequence: u64,
    played: Played,
}

impl From<RecordedMove> for PlayedMove {
    fn from(recorded: RecordedMove) -> Self {
        PlayedMove::new(recorded.seat, recorded.sequence, recorded.played)
    }
}

impl serde::Serialize for PlayedMove {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        /// [`Played`]'s fields, borrowed, in its order and under its names.
        #[derive(serde::Serialize)]
        #[serde(rename = "Played")]
        struct PlayedRef<'a> {
            mv: Move,
            placement: Option<Coord>,
            flips: &'a [Coord],
            roll: Option<&'a Roll>,
            passes: &'a [Seat],
            outcome: Option<&'a Outcome>,
            chess: Option<&'a ChessPlayed>,
        }
        #[derive(serde::Serialize)]
        #[serde(rename = "PlayedMove")]
        struct Ref<'a> {
            seat: Seat,
            sequence: u64,
            played: PlayedRef<'a>,
        }
        let effects = self.effects.as_deref();
        Ref {
            seat: self.seat,
            sequence: self.sequence,
            played: PlayedRef {
                mv: self.mv,
                placement: self.placement,
                flips: effects.map_or(&[], |e| &e.flips),
                roll: effects.and_then(|e| e.roll.as_deref()),
                passes: effects.map_or(&[], |e| &e.passes),
                outcome: effects.and_then(|e| e.outcome.as_ref()),
                chess: effects.and_then(|e| e.chess.as_deref()),
            },
        }
        .serialize(serializer)
    }
}

/// Most moves a decoded stack reserves room for at once (one entry each).
const STACK_RESERVE: usize = 1 << 20;

/// Decodes a move stack into a vector of its announced length (postcard
/// announces it), up to [`STACK_RESERVE`] entries, where serde's own `Vec`
/// reserves at most 1 MiB and then grows: a 100,000-move stack was copied
/// over and over, the largest cost of a cold load from a snapshot (issue
/// 15's profile).
pub(super) fn stack<'de, D>(deserializer: D) -> Result<Vec<PlayedMove>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    struct Stack;
    impl<'de> serde::de::Visitor<'de> for Stack {
        type Value = Vec<PlayedMove>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a sequence of played moves")
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            let mut stack = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(STACK_RESERVE));
            while let Some(played) = seq.next_element()? {
                stack.push(played);
            }
            Ok(stack)
        }
    }
    deserializer.deserialize_seq(Stack)
}
