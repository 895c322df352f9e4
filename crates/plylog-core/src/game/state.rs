//! The game state, [`decide`] and [`evolve`].

use std::collections::HashMap;
use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{AbsenceAction, EMPTY_CELL, Event, ExpiryPolicy, GameConfig, MAX_TIME_MS, UndoPolicy};
use crate::engine::random_move;
use crate::rules::{Coord, EndReason, IllegalMove, Move, Outcome, Played, Position, Roll, Seat};

/// A reading of the server's clock: Unix epoch milliseconds. The shell
/// reads the clock and passes it in; nothing here reads one.
pub type Millis = i64;

/// Rounds of automatic moves after which a game nobody plays ends: once
/// the server has played, in a row, this many moves per seat in play that
/// a person plays (random moves on expiry, [`ExpiryPolicy::RandomMove`],
/// for a seat whose time ran out or that stayed away), with no move, undo,
/// redo, offer, answer or rematch request of such a seat in between, the
/// next expiry of such a seat ends the game with no result and
/// [`EndReason::Abandoned`] instead of another move. Bot seats neither
/// count nor reset the count; a game with no person's seat in play never
/// ends this way.
pub const AUTOMATIC_ROUNDS: u32 = 3;

/// What a seat asks of a game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// Play `mv` for `seat`.
    Play {
        /// The seat playing.
        seat: Seat,
        /// The move requested.
        mv: Move,
    },
    /// Play `mv`, which the engine of bot seat `seat` chose on the
    /// position after event `sequence`. Decides to nothing when the game
    /// has moved on since (a move undone, a resignation): the choice is
    /// stale.
    BotPlay {
        /// The bot seat.
        seat: Seat,
        /// The engine's move.
        mv: Move,
        /// The sequence of the last event the engine saw.
        sequence: u64,
        /// Whether the engine proved the move best (see
        /// [`crate::engine::Chooser::proven`]).
        proven: bool,
    },
    /// Take back the last move on the board.
    Undo {
        /// The seat asking, when stated.
        requested_by: Option<Seat>,
    },
    /// Play again the last move undone, while no other move was played
    /// since (under the undo policy, as for [`Command::Undo`]).
    Redo {
        /// The seat asking, when stated.
        requested_by: Option<Seat>,
    },
    /// Something a seat does that is not a move: resign, abort, offer or
    /// answer a draw or a takeback.
    Act {
        /// The seat acting (required: `None` is refused).
        seat: Option<Seat>,
        /// What it does.
        action: Action,
    },
    /// Play again: a new round with the same seats once this one is over
    /// (at once when it is; otherwise when it ends).
    Rematch {
        /// The seat asking (required: `None` is refused).
        seat: Option<Seat>,
        /// Whether the next round's first mover is the seat after this
        /// round's (otherwise the same seat moves first).
        rotate: bool,
    },
    /// `seat` has held no followed stream for the game's grace period on its
    /// own turn: the shell tracks presence (it is not a fact of the log
    /// until it changes the game) and reports this. Decides to nothing when
    /// the seat is no longer to move.
    GraceExpired {
        /// The absent seat.
        seat: Seat,
    },
    /// The turn's deadline may have passed: the shell's timer fired. Decides
    /// to nothing when no deadline has passed (a move came first).
    Timeout,
    /// Replace `seat`'s credential (an operator's command; whoever may give
    /// it is checked outside the game). Allowed in any state, also after the
    /// game ended.
    ReissueSeatToken {
        /// The seat whose token is replaced.
        seat: Seat,
    },
}

/// What a seat may do besides moving ([`Command::Act`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Give up: with two seats in play the other wins; with more, the seat
    /// is out and play goes on.
    Resign,
    /// Call the game off with no result, before every seat has moved.
    Abort,
    /// Offer a draw (accepts a pending offer of another seat).
    OfferDraw,
    /// Accept the pending draw offer.
    AcceptDraw,
    /// Decline the pending draw offer.
    DeclineDraw,
    /// Ask for the last move on the board to be taken back (consent policy).
    RequestTakeback,
    /// Accept the pending takeback request.
    AcceptTakeback,
    /// Decline the pending takeback request.
    DeclineTakeback,
}

/// Why [`decide`] refuses a command. Nothing is appended for a refusal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    /// The rules refuse the move on this position.
    #[error(transparent)]
    Illegal(#[from] IllegalMove),
    /// The seat number is not at this table.
    #[error("seat {seat} is not at this table (seats 0 to {max})")]
    NoSuchSeat {
        /// The seat asked for.
        seat: u32,
        /// The highest seat index.
        max: u32,
    },
    /// Another seat is to move.
    #[error("seat {seat} is not to move; seat {to_move} is")]
    NotYourTurn {
        /// The seat that tried to move.
        seat: u8,
        /// The seat whose turn it is.
        to_move: u8,
    },
    /// The game has ended.
    #[error("the game is over")]
    GameOver,
    /// No move is on the board.
    #[error("there is no move to undo")]
    NothingToUndo,
    /// The game was created with undo disabled.
    #[error("undo is disabled in this game")]
    UndoDisabled,
    /// Under the last-mover policy, only the seat that played the last move
    /// may undo it, and must say so.
    #[error("only the seat that played the last move (seat {last_mover}) may undo it{}", match .requested_by { Some(s) => format!(", not seat {s}"), None => "; state the seat".into() })]
    NotLastMover {
        /// The seat that played the last move.
        last_mover: u8,
        /// The seat that asked, when stated.
        requested_by: Option<u8>,
    },
    /// But under the any-seat policy, only the seat whose undone move it is
    /// may redo it, and must say so.
    #[error("only the seat that played the undone move (seat {mover}) may redo it{}", match .requested_by { Some(s) => format!(", not seat {s}"), None => "; state the seat".into() })]
    NotRedoer {
        /// The seat that played the move to redo.
        mover: u8,
        /// The seat that asked, when stated.
        requested_by: Option<u8>,
    },
    /// A command that needs its seat named came without one.
    #[error("state the seat acting")]
    SeatRequired,
    /// No move was undone since the last move played.
    #[error("there is no undone move to redo")]
    NothingToRedo,
    /// The game takes back moves by consent only: ask with a takeback
    /// request.
    #[error("takebacks in this game need the other seats' consent: request a takeback")]
    ConsentRequired,
    /// Takeback requests need the consent undo policy.
    #[error("this game's undo policy is not consent: use undo")]
    TakebackNotAllowed,
    /// There is no pending offer (or request) of another seat to answer.
    #[error("there is no pending {what} of another seat to answer")]
    NoPendingOffer {
        /// "draw offer" or "takeback request".
        what: &'static str,
    },
    /// The seat already made the pending offer (or request), or agreed to it.
    #[error("seat {seat} already agreed to the pending {what}")]
    AlreadyAgreed {
        /// The seat.
        seat: u8,
        /// "draw offer" or "takeback request".
        what: &'static str,
    },
    /// A rematch was already asked for in this round.
    #[error("a rematch is already pending: the next round starts when this one ends")]
    RematchPending,
    /// Every seat has moved: the game can no longer be aborted (resign or
    /// offer a draw instead).
    #[error("every seat has moved: too late to abort")]
    AbortTooLate,
    /// The seat resigned or forfeited and is out of play.
    #[error("seat {seat} is out of play")]
    SeatOut {
        /// The seat.
        seat: u8,
    },
    /// The seat is played by an engine: nobody else moves or acts for it.
    #[error("seat {seat} is a bot: the server plays it")]
    SeatIsBot {
        /// The seat.
        seat: u8,
    },
    /// The turn's deadline passed before the command came: the timeout is
    /// appended instead.
    #[error("seat {seat}'s time ran out at {deadline_ms} ms after the epoch")]
    TimeExpired {
        /// The seat whose time ran out.
        seat: u8,
        /// The deadline, Unix epoch milliseconds.
        deadline_ms: Millis,
    },
}

/// A stored log that cannot be replayed: the store's corruption, reported
/// rather than applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event {sequence}: {why}")]
pub struct ReplayError {
    /// The sequence of the offending event.
    pub sequence: u64,
    /// What is wrong with it.
    pub why: String,
}

/// Where a game stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GameStatus {
    /// Moves are being played.
    InProgress,
    /// A seat has won.
    Won,
    /// The game was drawn.
    Drawn,
    /// The game ended without a result (aborted).
    NoResult,
}

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
        } = played;
        let effects =
            (!flips.is_empty() || roll.is_some() || !passes.is_empty() || outcome.is_some()).then(
                || {
                    Box::new(Effects {
                        flips,
                        roll,
                        passes,
                        outcome,
                    })
                },
            );
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
        let (flips, roll, passes, outcome) = match self.effects.as_deref() {
            Some(e) => (
                e.flips.clone(),
                e.roll.clone(),
                e.passes.clone(),
                e.outcome.clone(),
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
            },
        }
        .serialize(serializer)
    }
}

/// A pending draw offer or takeback request: who made it and which seats
/// have agreed (the maker included).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Offer {
    /// The seat that made it.
    pub by: Seat,
    /// Agreement by seat index.
    pub agreed: Vec<bool>,
    /// Whether another seat has moved since the offer was made (a draw
    /// offer then lapses at the offering seat's next move).
    pub others_moved: bool,
}

/// Where a game's clocks stand after its last event: each seat's time left
/// as of the start of the current turn, and when that turn started.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Clocks {
    /// Milliseconds each seat had left when the current turn started (its
    /// game clock; empty when the game has only a per-move limit).
    pub remaining_ms: Vec<Millis>,
    /// When the current turn started, Unix epoch milliseconds.
    pub turn_started: Millis,
}

/// Most moves a decoded stack reserves room for at once (one entry each).
const STACK_RESERVE: usize = 1 << 20;

/// Decodes a move stack into a vector of its announced length (postcard
/// announces it), up to [`STACK_RESERVE`] entries, where serde's own `Vec`
/// reserves at most 1 MiB and then grows: a 100,000-move stack was copied
/// over and over, the largest cost of a cold load from a snapshot (issue
/// 15's profile).
fn stack<'de, D>(deserializer: D) -> Result<Vec<PlayedMove>, D::Error>
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

/// A game as the fold of its events: configuration, position, whose turn it
/// is, the moves on the board (the undo stack) and the moves undone since
/// the last move (the redo stack), the clocks, the seats out of play, any
/// pending offer, the outcome, the moves the server played in a row for
/// seats nobody plays (see [`AUTOMATIC_ROUNDS`]), and the sequence of the
/// last event applied (1-based; 1 right after creation).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GameState {
    config: Arc<GameConfig>,
    position: Position,
    to_move: Seat,
    #[serde(deserialize_with = "stack")]
    moves: Vec<PlayedMove>,
    #[serde(deserialize_with = "stack")]
    redo: Vec<PlayedMove>,
    outcome: Option<Outcome>,
    /// Why the game ended; `Some` exactly when it has.
    ended: Option<EndReason>,
    sequence: u64,
    clocks: Clocks,
    /// Seats out of play, by index.
    out: Vec<bool>,
    /// Seats that have played a move, by index.
    moved: Vec<bool>,
    draw_offer: Option<Offer>,
    takeback: Option<Offer>,
    /// When the round started: the game's creation for round 0, the
    /// RoundStarted event's time after a rematch.
    started_at: Millis,
    /// The round, from 0, and the seat that moved first in it.
    round: u32,
    first: Seat,
    /// A rematch asked for during the round: who asked, and whether to
    /// rotate the first mover.
    rematch: Option<(Seat, bool)>,
    /// Whether the seat to move was reported absent this turn (once is
    /// enough, whichever node reports it).
    absence_logged: bool,
    /// How often each position (pieces and seat to move, by digest) has
    /// occurred, kept only for rule sets that draw on repetition.
    repetitions: HashMap<u64, u32>,
    /// Moves the server played in a row for seats that people play (on
    /// expiry or absence), since such a seat last moved or acted itself
    /// (see [`AUTOMATIC_ROUNDS`]).
    automatic_moves: u32,
    /// Whether the last event applied was a TimeExpired or SeatAbsent:
    /// the event after it is the server's, on the seat's behalf.
    on_behalf: bool,
}

impl GameState {
    /// The state right after the GameCreated event (sequence 1), recorded
    /// at `created_at`: empty board, seat 0 to move, its turn (and clock)
    /// started.
    pub fn new(config: GameConfig, created_at: Millis) -> Self {
        let seats = config.seats().len();
        let position = config.rules().initial_position(seats);
        let initial = config
            .time_control()
            .and_then(|tc| tc.clock)
            .map(|clock| vec![clock.initial_ms as Millis; seats])
            .unwrap_or_default();
        let mut state = GameState {
            config: Arc::new(config),
            position,
            to_move: Seat(0),
            moves: Vec::new(),
            redo: Vec::new(),
            outcome: None,
            ended: None,
            sequence: 1,
            clocks: Clocks {
                remaining_ms: initial,
                turn_started: created_at,
            },
            out: vec![false; seats],
            moved: vec![false; seats],
            started_at: created_at,
            draw_offer: None,
            takeback: None,
            round: 0,
            first: Seat(0),
            rematch: None,
            absence_logged: false,
            repetitions: HashMap::new(),
            automatic_moves: 0,
            on_behalf: false,
        };
        state.count_position(1);
        state
    }

    /// Starts round `round` at `at` with `first` to move: the state right
    /// after creation, but for the round, the log's sequence, and the
    /// first mover.
    fn start_round(&mut self, round: u32, first: Seat, at: Millis) {
        let config = (*self.config).clone();
        let sequence = self.sequence;
        *self = GameState {
            config: Arc::clone(&self.config),
            round,
            first,
            to_move: first,
            sequence,
            ..GameState::new(config, at)
        };
        self.repetitions.clear();
        self.count_position(1);
    }

    /// Rebuilds a game from its whole log: each event in sequence order from
    /// 1, with the time it was recorded at. Each event is checked to be
    /// well-formed for the state it lands on before [`evolve`] applies it.
    ///
    /// # Errors
    /// [`ReplayError`] when the log is empty, does not start with
    /// GameCreated, or holds an event that does not fit (a second
    /// GameCreated, a move by the wrong seat or onto an occupied or off-board
    /// cell, an undo with nothing to undo, anything but a token re-issue
    /// after the game ended).
    pub fn replay(events: impl IntoIterator<Item = (Event, Millis)>) -> Result<Self, ReplayError> {
        let mut events = events.into_iter();
        let Some((Event::GameCreated(config), created_at)) = events.next() else {
            return Err(ReplayError {
                sequence: 1,
                why: "the log does not start with GameCreated".into(),
            });
        };
        let mut state = GameState::new(config, created_at);
        for (event, at) in events {
            state.apply_stored(&event, at)?;
        }
        Ok(state)
    }

    /// Applies one stored event, recorded at `at`, after checking it fits
    /// this state: one step of [`GameState::replay`].
    ///
    /// # Errors
    /// [`ReplayError`] as for [`GameState::replay`]; the state is unchanged.
    pub fn apply_stored(&mut self, event: &Event, at: Millis) -> Result<(), ReplayError> {
        self.check(event).map_err(|why| ReplayError {
            sequence: self.sequence + 1,
            why,
        })?;
        evolve(self, event, at);
        Ok(())
    }

    fn check(&self, event: &Event) -> Result<(), String> {
        let agreeing = |offer: &Option<Offer>, seat: Seat| match offer {
            Some(offer) if !offer.agreed.get(seat.index()).copied().unwrap_or(true) => {
                self.check_in_play(seat)
            }
            _ => Err(format!("{seat} answers no pending offer")),
        };
        match event {
            Event::GameCreated(_) => Err("a second GameCreated".into()),
            Event::MovePlayed {
                seat, ply, played, ..
            }
            | Event::MoveRedone { seat, ply, played } => {
                self.check_turn(*seat)?;
                let rules = self.config.rules();
                rules.check_move(played.mv).map_err(|e| e.to_string())?;
                if matches!(event, Event::MoveRedone { .. })
                    && self.redo.last().is_none_or(|m| m.mv != played.mv)
                {
                    return Err("a redo of a move that was not undone last".into());
                }
                let expected_ply = self.moves.len() as u32 + 1;
                if *ply != expected_ply {
                    return Err(format!("ply {ply}, but the move is ply {expected_ply}"));
                }
                rules.check_played(&self.position, *seat, played)?;
                self.check_effects(*seat, played)
            }
            Event::TurnPassed { seat } | Event::TimeExpired { seat } => self.check_turn(*seat),
            Event::SeatAbsent { seat } => {
                self.check_turn(*seat)?;
                if self.absence_logged {
                    return Err(format!("{seat} reported absent twice in one turn"));
                }
                Ok(())
            }
            Event::SeatTokenReissued { seat } => {
                self.seat(*seat).map(|_| ()).map_err(|e| e.to_string())
            }
            Event::MoveUndone {
                undone_sequence,
                placement,
                ..
            } => match self.moves.last() {
                // Logs written before races had no cells record a roll's
                // square as its placement: the sequence names the move.
                Some(last)
                    if last.sequence == *undone_sequence
                        && (last.placement.is_none() || last.placement == *placement) =>
                {
                    Ok(())
                }
                _ => Err(format!(
                    "undo of sequence {undone_sequence}, which is not the last move"
                )),
            },
            Event::SeatOut { seat, .. } => {
                self.check_in_play(*seat)?;
                if self.in_play().count() <= 2 {
                    return Err(format!("{seat} left with fewer than three seats in play"));
                }
                Ok(())
            }
            Event::GameEnded { .. } => self.check_in_progress(),
            Event::DrawOffered { seat } | Event::TakebackRequested { seat } => {
                self.check_in_play(*seat)
            }
            Event::DrawAccepted { seat } | Event::DrawDeclined { seat } => {
                agreeing(&self.draw_offer, *seat)
            }
            Event::TakebackAccepted { seat } | Event::TakebackDeclined { seat } => {
                agreeing(&self.takeback, *seat)
            }
            // Any seat at the table may ask, also one out of play.
            Event::RematchRequested { seat, .. } => {
                self.check_in_progress()?;
                self.seat(*seat).map(|_| ()).map_err(|e| e.to_string())
            }
            Event::RoundStarted { round, first } => {
                self.seat(*first).map_err(|e| e.to_string())?;
                if self.ended.is_none() {
                    return Err("a round started before the last one ended".into());
                }
                if *round != self.round + 1 {
                    return Err(format!("round {round} after round {}", self.round));
                }
                Ok(())
            }
        }
    }

    /// Checks that a recorded move's effects are the ones the rules give
    /// it on this position: where its piece lands, the discs it flips (in
    /// any order) and the outcome. A roll's dice are not drawn again (its
    /// rules check the record, see `Game::check_played`).
    fn check_effects(&self, seat: Seat, played: &Played) -> Result<(), String> {
        if played.roll.is_some() {
            return Ok(());
        }
        let fresh = self
            .config
            .rules()
            .play(&self.position, seat, played.mv)
            .map_err(|e| e.to_string())?;
        if fresh.placement != played.placement {
            return Err(format!(
                "{:?} recorded at {:?}, but it lands at {:?}",
                played.mv, played.placement, fresh.placement
            ));
        }
        let sorted = |flips: &[Coord]| {
            let mut flips = flips.to_vec();
            flips.sort_unstable();
            flips
        };
        if sorted(&fresh.flips) != sorted(&played.flips) {
            return Err(format!("{:?} recorded with other flips", played.mv));
        }
        if fresh.outcome != played.outcome {
            return Err(format!(
                "{:?} recorded with outcome {:?}, but it gives {:?}",
                played.mv, played.outcome, fresh.outcome
            ));
        }
        Ok(())
    }

    /// The configuration.
    pub fn config(&self) -> &GameConfig {
        &self.config
    }

    /// The shared configuration, cheap to clone.
    pub fn shared_config(&self) -> Arc<GameConfig> {
        Arc::clone(&self.config)
    }

    /// The position.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The position as text, one string per line: each cell its owner's
    /// symbol or [`EMPTY_CELL`] (see [`Position::render`]).
    pub fn render(&self) -> Vec<String> {
        let symbols: Vec<&str> = self
            .config
            .seats()
            .iter()
            .map(|seat| seat.symbol.as_str())
            .collect();
        self.position.render(&symbols, EMPTY_CELL)
    }

    /// The seat to move, `None` once the game is over.
    pub fn to_move(&self) -> Option<Seat> {
        self.ended.is_none().then_some(self.to_move)
    }

    /// The moves on the board, oldest first.
    pub fn moves(&self) -> &[PlayedMove] {
        &self.moves
    }

    /// The moves undone since the last move played, the next to redo last.
    pub fn undone(&self) -> &[PlayedMove] {
        &self.redo
    }

    /// The result, `None` while in progress or when the game ended with no
    /// result.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// Why the game ended, `None` while in progress.
    pub fn end_reason(&self) -> Option<EndReason> {
        self.ended
    }

    /// In progress, won, drawn or ended with no result.
    pub fn status(&self) -> GameStatus {
        match (self.ended, &self.outcome) {
            (None, _) => GameStatus::InProgress,
            (Some(_), Some(Outcome::Win { .. })) => GameStatus::Won,
            (Some(_), Some(Outcome::Draw)) => GameStatus::Drawn,
            (Some(_), None) => GameStatus::NoResult,
        }
    }

    /// Checks what a state read back from storage (a snapshot) must hold,
    /// so that using it cannot panic: every seat it names is one of the
    /// game's, its board is whole (see [`crate::rules::Board::check`]) and every move on
    /// it or undone lands on it, and the per-seat lists have one entry per
    /// seat. It does not prove the state is the one its log replays to:
    /// the snapshot's checksum and chain value vouch for that.
    ///
    /// # Errors
    /// What does not hold, in words.
    pub fn check_invariants(&self) -> Result<(), String> {
        let seats = self.config.seats().len();
        let seat = |seat: Seat, what: &str| {
            if seat.index() < seats {
                Ok(())
            } else {
                Err(format!("{what} is seat {} of {seats}", seat.0))
            }
        };
        seat(self.to_move, "the seat to move")?;
        seat(self.first, "the first seat")?;
        let tokens = self.position.squares().len();
        for (list, len) in [
            ("out", self.out.len()),
            ("moved", self.moved.len()),
            ("the race", if tokens == 0 { seats } else { tokens }),
        ] {
            if len != seats {
                return Err(format!("{list} lists {len} seats of {seats}"));
            }
        }
        if !self.clocks.remaining_ms.is_empty() && self.clocks.remaining_ms.len() != seats {
            return Err(format!(
                "{} clocks for {seats} seats",
                self.clocks.remaining_ms.len()
            ));
        }
        for offer in [&self.draw_offer, &self.takeback].into_iter().flatten() {
            seat(offer.by, "an offer's seat")?;
            if offer.agreed.len() != seats {
                return Err(format!("an offer lists {} seats", offer.agreed.len()));
            }
        }
        if let Some((asker, _)) = self.rematch {
            seat(asker, "the rematch's seat")?;
        }
        if let Some(Outcome::Win { seat: winner, .. }) = &self.outcome {
            seat(*winner, "the winner")?;
        }
        let board = self.position.board();
        if let Some(board) = board {
            board.check(seats)?;
        }
        for played in self.moves.iter().chain(&self.redo) {
            seat(played.seat, "a move's seat")?;
            if let (Some(board), Some(at)) = (board, played.placement)
                && !board.contains(at.row.into(), at.col.into())
            {
                return Err(format!("a move at {at}, off the board"));
            }
            if played.sequence > self.sequence {
                return Err(format!(
                    "a move at sequence {} after {}",
                    played.sequence, self.sequence
                ));
            }
        }
        Ok(())
    }

    /// The sequence of the last event applied (1-based).
    pub fn sequence(&self) -> u64 {
        self.sequence
    }

    /// The clocks as of the last event.
    pub fn clocks(&self) -> &Clocks {
        &self.clocks
    }

    /// When the current turn ends, Unix epoch milliseconds: the turn's start
    /// plus the shorter of the per-move limit and the seat's clock. `None`
    /// in an untimed game or one that is over.
    pub fn deadline(&self) -> Option<Millis> {
        let tc = self.config.time_control()?;
        self.ended.is_none().then_some(())?;
        let per_move = tc.per_move_ms.map(|ms| ms as Millis);
        let clock = self.clocks.remaining_ms.get(self.to_move.index()).copied();
        let limit = match (per_move, clock) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        Some(self.clocks.turn_started.saturating_add(limit))
    }

    /// The pending draw offer.
    pub fn draw_offer(&self) -> Option<&Offer> {
        self.draw_offer.as_ref()
    }

    /// The pending takeback request.
    pub fn takeback_request(&self) -> Option<&Offer> {
        self.takeback.as_ref()
    }

    /// When the round started, Unix epoch milliseconds: the game's creation
    /// for round 0, the RoundStarted event's time after a rematch.
    pub fn started_at(&self) -> Millis {
        self.started_at
    }

    /// Whether any seat has played a move this round (undone moves count:
    /// they were played).
    pub fn anyone_moved(&self) -> bool {
        self.moved.contains(&true)
    }

    /// The round, counted from 0 (one more after each rematch).
    pub fn round(&self) -> u32 {
        self.round
    }

    /// The pending rematch request: who asked, and whether it rotates the
    /// first mover.
    pub fn rematch(&self) -> Option<(Seat, bool)> {
        self.rematch
    }

    /// Whether `seat` is out of play (resigned or forfeited).
    pub fn is_out(&self, seat: Seat) -> bool {
        self.out.get(seat.index()).copied().unwrap_or(false)
    }

    /// The seats still in play.
    fn in_play(&self) -> impl Iterator<Item = Seat> + '_ {
        self.out
            .iter()
            .enumerate()
            .filter(|(_, out)| !**out)
            .map(|(i, _)| Seat(i as u8))
    }

    /// Whether every seat in play that a person plays has stopped playing:
    /// the server has played [`AUTOMATIC_ROUNDS`] moves per such seat in a
    /// row. `false` when no such seat is in play.
    fn is_unattended(&self) -> bool {
        let people = self
            .in_play()
            .filter(|s| self.config.bot(*s).is_none())
            .count() as u32;
        people > 0 && self.automatic_moves >= AUTOMATIC_ROUNDS.saturating_mul(people)
    }

    fn check_in_progress(&self) -> Result<(), String> {
        match self.ended {
            Some(_) => Err("an event after the game ended".into()),
            None => Ok(()),
        }
    }

    fn check_in_play(&self, seat: Seat) -> Result<(), String> {
        self.check_in_progress()?;
        self.seat(seat).map_err(|e| e.to_string())?;
        if self.is_out(seat) {
            return Err(format!("{seat} is out of play"));
        }
        Ok(())
    }

    /// Whether `seat` may act now: the game is on and it is `seat`'s turn.
    fn check_turn(&self, seat: Seat) -> Result<(), String> {
        if self.ended.is_some() {
            return Err("a move after the game ended".into());
        }
        if seat != self.to_move {
            return Err(format!("{seat} acted but {} was to move", self.to_move));
        }
        Ok(())
    }

    /// The digest of the current position with the seat to move, where the
    /// rule set draws on repetition.
    fn position_key(&self) -> Option<u64> {
        self.config
            .rules()
            .draws_on_repetition()
            .then(|| key(&self.position, self.to_move))
    }

    /// Counts the current position `by` more (or fewer) occurrences.
    fn count_position(&mut self, by: i32) {
        if let Some(key) = self.position_key() {
            let count = self.repetitions.entry(key).or_insert(0);
            *count = count.saturating_add_signed(by);
        }
    }

    /// Whether `seat` names a seat at this table.
    fn seat(&self, seat: Seat) -> Result<Seat, GameError> {
        let count = self.config.seats().len();
        if seat.index() < count {
            Ok(seat)
        } else {
            Err(GameError::NoSuchSeat {
                seat: seat.0.into(),
                max: count as u32 - 1,
            })
        }
    }

    /// `seat`, when it is at this table and not a bot seat.
    fn human(&self, seat: Seat) -> Result<Seat, GameError> {
        match self.config.bot(self.seat(seat)?) {
            Some(_) => Err(GameError::SeatIsBot { seat: seat.0 }),
            None => Ok(seat),
        }
    }

    /// Refuses a command of `seat` once the game is over, the seat is out,
    /// or the turn's deadline has passed at `now`.
    fn check_can_act(&self, seat: Seat, now: Millis) -> Result<(), GameError> {
        self.seat(seat)?;
        if self.ended.is_some() {
            return Err(GameError::GameOver);
        }
        self.check_deadline(now)?;
        if self.is_out(seat) {
            return Err(GameError::SeatOut { seat: seat.0 });
        }
        Ok(())
    }

    fn check_deadline(&self, now: Millis) -> Result<(), GameError> {
        match self.deadline() {
            Some(deadline) if now >= deadline => Err(GameError::TimeExpired {
                seat: self.to_move.0,
                deadline_ms: deadline,
            }),
            _ => Ok(()),
        }
    }

    /// The seat to move after `seat` played `played`: the rules' choice,
    /// skipping seats out of play.
    fn next_after(&self, seat: Seat, played: &Played) -> Seat {
        let seats = self.config.seats().len();
        self.skip_out(self.config.rules().next_to_move(seats, seat, played))
    }

    /// `seat`, or the first seat after it in turn order that is in play.
    fn skip_out(&self, seat: Seat) -> Seat {
        let seats = self.config.seats().len();
        let mut next = seat;
        for _ in 0..seats {
            if !self.is_out(next) {
                break;
            }
            next = next.next(seats);
        }
        next
    }

    /// Charges the seat to move for the time since its turn started (while
    /// the game is on), and starts the next turn at `at`.
    fn charge(&mut self, at: Millis) {
        let elapsed = at.saturating_sub(self.clocks.turn_started).max(0);
        if self.ended.is_none()
            && let Some(left) = self.clocks.remaining_ms.get_mut(self.to_move.index())
        {
            *left = left.saturating_sub(elapsed).max(0);
        }
        self.clocks.turn_started = at;
        self.absence_logged = false;
    }

    /// Whether the game ended by something other than a move (resignation,
    /// time, agreement, abort), which no undo takes back.
    fn ended_off_the_board(&self) -> bool {
        matches!(
            self.ended,
            Some(
                EndReason::Resignation
                    | EndReason::Timeout
                    | EndReason::Agreement
                    | EndReason::Aborted
                    | EndReason::Abandoned
            )
        )
    }
}

/// A position's identity for repetition: its pieces and the seat to move.
fn key(position: &Position, to_move: Seat) -> u64 {
    position.digest() ^ (u64::from(to_move.0) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Decides what `command`, given at `now` (the server's clock), does to
/// `state`: the events to append, or why it is refused. Pure: `state` is
/// not changed, and `now` is the only time it knows.
///
/// # Errors
/// [`GameError`]: an unknown seat, not this seat's turn, the game over, an
/// illegal move, nothing to undo or redo, an offer that is not pending, the
/// turn's time run out, and the rest of [`GameError`].
pub fn decide(state: &GameState, command: &Command, now: Millis) -> Result<Vec<Event>, GameError> {
    let mut events = decide_round(state, command, now)?;
    // A rematch asked for during the round starts the next one right after
    // the event that ends this one.
    let ends = |e: &Event| match e {
        Event::MovePlayed { played, .. } | Event::MoveRedone { played, .. } => {
            played.outcome.is_some()
        }
        Event::GameEnded { .. } => true,
        _ => false,
    };
    if let Some((_, rotate)) = state.rematch
        && events.iter().any(ends)
        && !events
            .iter()
            .any(|e| matches!(e, Event::RoundStarted { .. }))
    {
        events.push(next_round(state, rotate));
    }
    Ok(events)
}

/// The RoundStarted of the round after `state`'s.
fn next_round(state: &GameState, rotate: bool) -> Event {
    let seats = state.config.seats().len();
    Event::RoundStarted {
        round: state.round + 1,
        first: if rotate {
            state.first.next(seats)
        } else {
            state.first
        },
    }
}

/// What `command` does within the current round.
fn decide_round(
    state: &GameState,
    command: &Command,
    now: Millis,
) -> Result<Vec<Event>, GameError> {
    match *command {
        Command::Play { seat, mv } => {
            // A request that is wrong whatever the position is refused as
            // such before the position's own refusals.
            let seat = state.human(seat)?;
            state.config.rules().check_move(mv)?;
            state.check_can_act(seat, now)?;
            if seat != state.to_move {
                return Err(GameError::NotYourTurn {
                    seat: seat.0,
                    to_move: state.to_move.0,
                });
            }
            play(state, seat, mv, false)
        }
        Command::BotPlay {
            seat,
            mv,
            sequence,
            proven,
        } => {
            let Some(bot) = state.config.bot(seat) else {
                return Err(GameError::NoSuchSeat {
                    seat: seat.0.into(),
                    max: state.config.seats().len() as u32 - 1,
                });
            };
            if sequence != state.sequence || state.ended.is_some() || seat != state.to_move {
                return Ok(Vec::new());
            }
            state.check_can_act(seat, now)?;
            let mut events = play(state, seat, mv, false)?;
            if let Some(Event::MovePlayed { chosen_by, .. }) = events.first_mut() {
                *chosen_by = Some(bot.chooser(proven));
            }
            Ok(events)
        }
        Command::Undo { requested_by } => {
            if let Some(seat) = requested_by {
                state.seat(seat)?;
                if state.is_out(seat) && state.ended.is_none() {
                    return Err(GameError::SeatOut { seat: seat.0 });
                }
            }
            let policy = state.config.undo_policy();
            match policy {
                UndoPolicy::Disabled => return Err(GameError::UndoDisabled),
                UndoPolicy::Consent => return Err(GameError::ConsentRequired),
                UndoPolicy::LastMover | UndoPolicy::AnySeat => {}
            }
            if state.ended_off_the_board() {
                return Err(GameError::GameOver);
            }
            // A player's undo also takes back the bots' replies to its
            // move: the moves on top played by bot seats, then the one
            // under them.
            let mut from = state
                .moves
                .len()
                .checked_sub(1)
                .ok_or(GameError::NothingToUndo)?;
            if requested_by.is_none_or(|s| state.config.bot(s).is_none()) {
                while from > 0 && state.config.bot(state.moves[from].seat).is_some() {
                    from -= 1;
                }
                if state.config.bot(state.moves[from].seat).is_some() {
                    from = state.moves.len() - 1;
                }
            }
            let last = &state.moves[from];
            if policy == UndoPolicy::LastMover && requested_by != Some(last.seat) {
                return Err(GameError::NotLastMover {
                    last_mover: last.seat.0,
                    requested_by: requested_by.map(|s| s.0),
                });
            }
            if state.ended.is_none() {
                state.check_deadline(now)?;
            }
            Ok(state.moves[from..]
                .iter()
                .rev()
                .map(|m| undo(m, requested_by))
                .collect())
        }
        Command::Redo { requested_by } => {
            if let Some(seat) = requested_by {
                state.seat(seat)?;
            }
            let policy = state.config.undo_policy();
            if policy == UndoPolicy::Disabled {
                return Err(GameError::UndoDisabled);
            }
            let next = state.redo.last().ok_or(GameError::NothingToRedo)?;
            if policy != UndoPolicy::AnySeat && requested_by != Some(next.seat) {
                return Err(GameError::NotRedoer {
                    mover: next.seat.0,
                    requested_by: requested_by.map(|s| s.0),
                });
            }
            state.check_can_act(next.seat, now)?;
            if next.seat != state.to_move {
                return Err(GameError::NothingToRedo);
            }
            play(state, next.seat, next.mv, true)
        }
        Command::Act { seat, action } => {
            let seat = state.human(seat.ok_or(GameError::SeatRequired)?)?;
            state.check_can_act(seat, now)?;
            act(state, seat, action)
        }
        Command::Rematch { seat, rotate } => {
            let seat = state.human(seat.ok_or(GameError::SeatRequired)?)?;
            if state.ended.is_some() {
                return Ok(vec![next_round(state, rotate)]);
            }
            if state.round > 0 && !state.anyone_moved() {
                // A round a rematch started, where nobody has moved yet:
                // this is the same request (both seats pressed Rematch).
                return Ok(Vec::new());
            }
            if state.rematch.is_some() {
                return Err(GameError::RematchPending);
            }
            state.check_deadline(now)?;
            Ok(vec![Event::RematchRequested { seat, rotate }])
        }
        Command::Timeout => timeout(state, now),
        Command::GraceExpired { seat } => absent(state, state.seat(seat)?),
        Command::ReissueSeatToken { seat } => Ok(vec![Event::SeatTokenReissued {
            seat: state.seat(seat)?,
        }]),
    }
}

/// The MoveUndone that takes back `last`.
fn undo(last: &PlayedMove, requested_by: Option<Seat>) -> Event {
    Event::MoveUndone {
        seat: last.seat,
        undone_sequence: last.sequence,
        placement: last.placement,
        requested_by,
    }
}

/// The events of `seat` playing `mv` (a redo of the last undone move when
/// `redo`): the move, any passes it forces, and a draw when it repeats a
/// position a third time where the rules say so.
fn play(state: &GameState, seat: Seat, mv: Move, redo: bool) -> Result<Vec<Event>, GameError> {
    let rules = state.config.rules();
    let mut played = rules.play(&state.position, seat, mv)?;
    let mut repeated = false;
    if played.outcome.is_none() && rules.draws_on_repetition() {
        // The third occurrence of a position is a draw.
        let mut after = state.position.clone();
        rules.apply(&mut after, seat, &played);
        let next = state.next_after(seat, &played);
        repeated = state
            .repetitions
            .get(&key(&after, next))
            .is_some_and(|n| *n >= 2);
    }
    let passes = std::mem::take(&mut played.passes)
        .into_iter()
        .map(|seat| Event::TurnPassed { seat });
    let ply = state.moves.len() as u32 + 1;
    let event = if redo {
        Event::MoveRedone { seat, ply, played }
    } else {
        Event::MovePlayed {
            seat,
            ply,
            played,
            chosen_by: None,
        }
    };
    let mut events: Vec<Event> = std::iter::once(event).chain(passes).collect();
    if repeated {
        events.push(Event::GameEnded {
            outcome: Some(Outcome::Draw),
            reason: EndReason::Repetition,
        });
    }
    Ok(events)
}

/// `seat` leaves play for `reason`: the last seat left in play wins (no
/// result when none is left), otherwise play goes on without it.
///
/// A pending draw offer or takeback request that `seat` alone had not
/// agreed to is agreed by everyone left: the draw, or the takeback,
/// follows.
fn leave(state: &GameState, seat: Seat, reason: EndReason) -> Vec<Event> {
    let mut others = state.in_play().filter(|s| *s != seat);
    let (Some(_), Some(_)) = (others.next(), others.next()) else {
        let mut others = state.in_play().filter(|s| *s != seat);
        return vec![Event::GameEnded {
            outcome: others.next().map(|seat| Outcome::Win {
                seat,
                line: Vec::new(),
            }),
            reason,
        }];
    };
    let mut events = vec![Event::SeatOut { seat, reason }];
    // Agreed by every seat still in play once `seat` is out (an offer of
    // `seat`'s own lapses with it).
    let agreed = |offer: &Option<Offer>| {
        offer
            .as_ref()
            .is_some_and(|o| o.by != seat && all_agree(state, &o.agreed, seat))
    };
    if agreed(&state.draw_offer) {
        events.push(Event::GameEnded {
            outcome: Some(Outcome::Draw),
            reason: EndReason::Agreement,
        });
    } else if agreed(&state.takeback)
        && let (Some(last), Some(offer)) = (state.moves.last(), &state.takeback)
    {
        events.push(undo(last, Some(offer.by)));
    }
    events
}

/// Whether every seat in play but those agreed in `offer` has now agreed,
/// with `seat` agreeing too.
fn all_agree(state: &GameState, offer: &[bool], seat: Seat) -> bool {
    state
        .in_play()
        .all(|s| s == seat || offer.get(s.index()).copied().unwrap_or(false))
}

/// What `seat` doing `action` appends.
fn act(state: &GameState, seat: Seat, action: Action) -> Result<Vec<Event>, GameError> {
    const DRAW: &str = "draw offer";
    const TAKEBACK: &str = "takeback request";
    // The pending offer `seat` may answer.
    let pending = |offer: &Option<Offer>, what: &'static str| match offer {
        Some(offer) if offer.agreed[seat.index()] => {
            Err(GameError::AlreadyAgreed { seat: seat.0, what })
        }
        Some(offer) => Ok(offer.agreed.clone()),
        None => Err(GameError::NoPendingOffer { what }),
    };
    let draw = || Event::GameEnded {
        outcome: Some(Outcome::Draw),
        reason: EndReason::Agreement,
    };
    let take_back = |by: Seat| -> Result<Event, GameError> {
        let last = state.moves.last().ok_or(GameError::NothingToUndo)?;
        Ok(undo(last, Some(by)))
    };
    let mut events = Vec::new();
    match action {
        Action::Resign => events.extend(leave(state, seat, EndReason::Resignation)),
        Action::Abort => {
            if state.in_play().all(|s| state.moved[s.index()]) {
                return Err(GameError::AbortTooLate);
            }
            events.push(Event::GameEnded {
                outcome: None,
                reason: EndReason::Aborted,
            });
        }
        Action::OfferDraw => match &state.draw_offer {
            Some(offer) if !offer.agreed[seat.index()] => {
                return act(state, seat, Action::AcceptDraw);
            }
            Some(_) => {
                return Err(GameError::AlreadyAgreed {
                    seat: seat.0,
                    what: DRAW,
                });
            }
            None => {
                events.push(Event::DrawOffered { seat });
                if all_agree(state, &[], seat) {
                    events.push(draw());
                }
            }
        },
        Action::AcceptDraw => {
            let agreed = pending(&state.draw_offer, DRAW)?;
            events.push(Event::DrawAccepted { seat });
            if all_agree(state, &agreed, seat) {
                events.push(draw());
            }
        }
        Action::DeclineDraw => {
            pending(&state.draw_offer, DRAW)?;
            events.push(Event::DrawDeclined { seat });
        }
        Action::RequestTakeback => {
            if state.config.undo_policy() != UndoPolicy::Consent {
                return Err(GameError::TakebackNotAllowed);
            }
            match &state.takeback {
                // Another seat's request stands: asking too accepts it.
                Some(offer) if !offer.agreed[seat.index()] => {
                    return act(state, seat, Action::AcceptTakeback);
                }
                Some(_) => {
                    return Err(GameError::AlreadyAgreed {
                        seat: seat.0,
                        what: TAKEBACK,
                    });
                }
                None => {}
            }
            let undone = take_back(seat)?;
            events.push(Event::TakebackRequested { seat });
            if all_agree(state, &[], seat) {
                events.push(undone);
            }
        }
        Action::AcceptTakeback => {
            let agreed = pending(&state.takeback, TAKEBACK)?;
            events.push(Event::TakebackAccepted { seat });
            if all_agree(state, &agreed, seat) {
                let by = state.takeback.as_ref().map_or(seat, |offer| offer.by);
                events.push(take_back(by)?);
            }
        }
        Action::DeclineTakeback => {
            pending(&state.takeback, TAKEBACK)?;
            events.push(Event::TakebackDeclined { seat });
        }
    }
    Ok(events)
}

/// What the timer firing at `now` appends: nothing before the deadline;
/// after it, a TimeExpired and what the expiry policy does.
fn timeout(state: &GameState, now: Millis) -> Result<Vec<Event>, GameError> {
    let (Some(deadline), Some(tc)) = (state.deadline(), state.config.time_control()) else {
        return Ok(Vec::new());
    };
    if now < deadline {
        return Ok(Vec::new());
    }
    let seat = state.to_move;
    let mut events = vec![Event::TimeExpired { seat }];
    events.extend(expire(
        state,
        seat,
        tc.on_expiry,
        tc.seed,
        EndReason::Timeout,
    )?);
    Ok(events)
}

/// What `policy` does to `seat`, the seat to move, whose time ran out or
/// who stayed away past the grace period (`reason`), once the event that
/// says so (sequence `state.sequence + 1`) is appended. A random move is
/// drawn from stream `state.sequence + 2` of ChaCha8 seeded with `seed`,
/// unless the game is unattended (see [`AUTOMATIC_ROUNDS`]): it then ends
/// with no result, [`EndReason::Abandoned`].
fn expire(
    state: &GameState,
    seat: Seat,
    policy: ExpiryPolicy,
    seed: u64,
    reason: EndReason,
) -> Result<Vec<Event>, GameError> {
    Ok(match policy {
        ExpiryPolicy::Draw => vec![Event::GameEnded {
            outcome: Some(Outcome::Draw),
            reason,
        }],
        // Nobody plays this game any more: it ends rather than playing
        // itself to the end of the board.
        ExpiryPolicy::RandomMove if state.config.bot(seat).is_none() && state.is_unattended() => {
            vec![Event::GameEnded {
                outcome: None,
                reason: EndReason::Abandoned,
            }]
        }
        ExpiryPolicy::RandomMove => {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(state.sequence + 2);
            match random_move(state.config.rules(), &state.position, seat, &mut rng) {
                Some(mv) => play(state, seat, mv, false)?,
                None => leave(state, seat, reason),
            }
        }
        ExpiryPolicy::Forfeit => leave(state, seat, reason),
    })
}

/// What the shell's report that `seat` stayed away past the grace period
/// on its turn appends: a SeatAbsent, then the absence policy's action.
/// Nothing when the game has no absence policy, is over, or `seat` is not
/// to move (a move came first).
fn absent(state: &GameState, seat: Seat) -> Result<Vec<Event>, GameError> {
    let Some(policy) = state.config.absence() else {
        return Ok(Vec::new());
    };
    // A bot seat is never away.
    if state.ended.is_some()
        || seat != state.to_move
        || state.absence_logged
        || state.config.bot(seat).is_some()
    {
        return Ok(Vec::new());
    }
    let mut events = vec![Event::SeatAbsent { seat }];
    match policy.action {
        // Offering while another seat's offer stands accepts it; a seat
        // whose own offer stands has nothing more to offer.
        AbsenceAction::OfferDraw => {
            events.extend(act(state, seat, Action::OfferDraw).unwrap_or_default())
        }
        AbsenceAction::Expire => {
            let (on_expiry, seed) = state
                .config
                .time_control()
                .map_or((ExpiryPolicy::Forfeit, 0), |tc| (tc.on_expiry, tc.seed));
            events.extend(expire(state, seat, on_expiry, seed, EndReason::Abandoned)?);
        }
    }
    Ok(events)
}

/// Applies one well-formed event, recorded at `at`, to `state` and advances
/// its sequence by one. No rule is checked here: every rule lives in
/// [`decide`], and [`GameState::replay`] checks stored events before
/// applying them.
///
/// # Panics
/// On an event that [`decide`] could not have produced for `state` (a
/// placement off the board, a GameCreated after the start).
pub fn evolve(state: &mut GameState, event: &Event, at: Millis) {
    state.sequence += 1;
    let config = Arc::clone(&state.config);
    let rules = config.rules();
    // Whether the server appended this event for a seat whose time ran out
    // or that stayed away (the event right after that news).
    let on_behalf = std::mem::take(&mut state.on_behalf);
    // A person's own move or action starts the count of automatic moves
    // again (a bot's changes nothing).
    let reset_by = |state: &mut GameState, seat: Option<Seat>| {
        if !on_behalf && seat.is_none_or(|s| config.bot(s).is_none()) {
            state.automatic_moves = 0;
        }
    };
    let set_offer = |offer: &mut Option<Offer>, seat: Seat| {
        let offer = offer.get_or_insert_with(|| Offer {
            by: seat,
            agreed: vec![false; config.seats().len()],
            others_moved: false,
        });
        offer.agreed[seat.index()] = true;
    };
    match event {
        Event::GameCreated(_) => panic!("GameCreated is only ever the first event"),
        Event::MovePlayed { seat, played, .. } | Event::MoveRedone { seat, played, .. } => {
            state.charge(at);
            if on_behalf && config.bot(*seat).is_none() {
                state.automatic_moves = state.automatic_moves.saturating_add(1);
            }
            reset_by(state, Some(*seat));
            // An increment stops at the longest a clock may hold.
            if let (Some(left), Some(clock)) = (
                state.clocks.remaining_ms.get_mut(seat.index()),
                config.time_control().and_then(|tc| tc.clock),
            ) {
                *left = left
                    .saturating_add(clock.increment_ms as Millis)
                    .min(MAX_TIME_MS as Millis);
            }
            rules.apply(&mut state.position, *seat, played);
            if let Some(outcome) = &played.outcome {
                state.ended = Some(rules.end_reason(outcome));
            }
            state.outcome = played.outcome.clone();
            state.to_move = state.next_after(*seat, played);
            state
                .moves
                .push(PlayedMove::new(*seat, state.sequence, played.clone()));
            if matches!(event, Event::MoveRedone { .. }) {
                state.redo.pop();
            } else {
                state.redo.clear();
            }
            state.moved[seat.index()] = true;
            // A draw offer stands over the offering seat's own move (offer,
            // then move) and lapses at its next one.
            match &mut state.draw_offer {
                Some(offer) if offer.by == *seat && offer.others_moved => state.draw_offer = None,
                Some(offer) if offer.by != *seat => offer.others_moved = true,
                _ => {}
            }
            state.takeback = None;
            state.count_position(1);
        }
        Event::TurnPassed { seat } => {
            state.charge(at);
            state.to_move = seat.next(config.seats().len());
        }
        Event::SeatTokenReissued { .. } => {}
        Event::MoveUndone {
            seat, requested_by, ..
        } => {
            reset_by(state, *requested_by);
            state.charge(at);
            state.count_position(-1);
            if let Some(undone) = state.moves.pop() {
                rules.undo(&mut state.position, undone.seat, &undone.played());
                // The increment the move earned goes with it (a redo earns
                // it again).
                if let (Some(left), Some(clock)) = (
                    state.clocks.remaining_ms.get_mut(undone.seat.index()),
                    config.time_control().and_then(|tc| tc.clock),
                ) {
                    *left = left.saturating_sub(clock.increment_ms as Millis).max(0);
                }
                state.redo.push(undone);
            }
            state.outcome = None;
            state.ended = None;
            // The turn goes back to the undone move's seat, or past it
            // while that seat is out of play.
            state.to_move = state.skip_out(*seat);
            state.takeback = None;
        }
        Event::TimeExpired { .. } => {
            state.charge(at);
            state.on_behalf = true;
        }
        Event::SeatAbsent { .. } => {
            state.absence_logged = true;
            state.on_behalf = true;
        }
        Event::SeatOut { seat, .. } => {
            state.out[seat.index()] = true;
            for offer in [&mut state.draw_offer, &mut state.takeback] {
                if offer.as_ref().is_some_and(|o| o.by == *seat) {
                    *offer = None;
                }
            }
            if state.to_move == *seat {
                state.charge(at);
                state.to_move = state.skip_out(*seat);
            }
        }
        Event::GameEnded { outcome, reason } => {
            state.charge(at);
            state.outcome = outcome.clone();
            state.ended = Some(*reason);
            state.draw_offer = None;
            state.takeback = None;
        }
        Event::DrawOffered { seat } | Event::DrawAccepted { seat } => {
            reset_by(state, Some(*seat));
            set_offer(&mut state.draw_offer, *seat);
        }
        Event::DrawDeclined { seat } => {
            reset_by(state, Some(*seat));
            state.draw_offer = None;
        }
        Event::TakebackRequested { seat } | Event::TakebackAccepted { seat } => {
            reset_by(state, Some(*seat));
            set_offer(&mut state.takeback, *seat);
        }
        Event::TakebackDeclined { seat } => {
            reset_by(state, Some(*seat));
            state.takeback = None;
        }
        Event::RematchRequested { seat, rotate } => {
            reset_by(state, Some(*seat));
            state.rematch = Some((*seat, *rotate));
        }
        Event::RoundStarted { round, first } => state.start_round(*round, *first, at),
    }
    // A finished game stays in memory for a while and seldom grows again:
    // its undo stack keeps no spare room (up to half its size otherwise,
    // at 48 bytes a move). Once shrunk this costs a comparison per event.
    if state.ended.is_some() && state.moves.capacity() > state.moves.len() {
        state.moves.shrink_to_fit();
    }
}
