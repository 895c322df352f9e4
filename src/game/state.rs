//! The game state, [`decide`] and [`evolve`].

use std::collections::HashMap;
use std::sync::Arc;

use super::{Event, GameConfig, UndoPolicy};
use crate::rules::{IllegalMove, Move, Outcome, Played, Position, Seat};

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
    /// Take back the last move on the board.
    Undo {
        /// The seat asking, when stated.
        requested_by: Option<Seat>,
    },
    /// Replace `seat`'s credential (an operator's command; whoever may give
    /// it is checked outside the game). Allowed in any state, also after the
    /// game ended.
    ReissueSeatToken {
        /// The seat whose token is replaced.
        seat: Seat,
    },
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
}

/// A move on the board, as the undo stack keeps it: who played it, the
/// sequence of its MovePlayed event, and what it did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayedMove {
    /// Who played it.
    pub seat: Seat,
    /// The sequence of its MovePlayed event.
    pub sequence: u64,
    /// What it did, as the rules recorded it.
    pub played: Played,
}

/// A game as the fold of its events: configuration, position, whose turn it
/// is, the moves on the board (the undo stack), the outcome, and the sequence
/// of the last event applied (1-based; 1 right after creation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameState {
    config: Arc<GameConfig>,
    position: Position,
    to_move: Seat,
    moves: Vec<PlayedMove>,
    outcome: Option<Outcome>,
    sequence: u64,
    /// How often each position (pieces and seat to move, by digest) has
    /// occurred, kept only for rule sets that draw on repetition.
    repetitions: HashMap<u64, u32>,
}

impl GameState {
    /// The state right after the GameCreated event (sequence 1): empty
    /// board, seat 0 to move.
    pub fn new(config: GameConfig) -> Self {
        let position = config.rules().initial_position(config.seats().len());
        let mut state = GameState {
            config: Arc::new(config),
            position,
            to_move: Seat(0),
            moves: Vec::new(),
            outcome: None,
            sequence: 1,
            repetitions: HashMap::new(),
        };
        state.count_position(1);
        state
    }

    /// Rebuilds a game from its whole log, `events` in sequence order from 1.
    /// Each event is checked to be well-formed for the state it lands on
    /// before [`evolve`] applies it.
    ///
    /// # Errors
    /// [`ReplayError`] when the log is empty, does not start with
    /// GameCreated, or holds an event that does not fit (a second
    /// GameCreated, a move by the wrong seat or onto an occupied or off-board
    /// cell, an undo with nothing to undo).
    pub fn replay(events: impl IntoIterator<Item = Event>) -> Result<Self, ReplayError> {
        let mut events = events.into_iter();
        let Some(Event::GameCreated(config)) = events.next() else {
            return Err(ReplayError {
                sequence: 1,
                why: "the log does not start with GameCreated".into(),
            });
        };
        let mut state = GameState::new(config);
        for event in events {
            state.apply_stored(&event)?;
        }
        Ok(state)
    }

    /// Applies one stored event after checking it fits this state: one step
    /// of [`GameState::replay`].
    ///
    /// # Errors
    /// [`ReplayError`] as for [`GameState::replay`]; the state is unchanged.
    pub fn apply_stored(&mut self, event: &Event) -> Result<(), ReplayError> {
        self.check(event).map_err(|why| ReplayError {
            sequence: self.sequence + 1,
            why,
        })?;
        evolve(self, event);
        Ok(())
    }

    fn check(&self, event: &Event) -> Result<(), String> {
        match event {
            Event::GameCreated(_) => Err("a second GameCreated".into()),
            Event::MovePlayed { seat, played, .. } => {
                self.check_turn(*seat)?;
                let rules = self.config.rules();
                rules.check_move(played.mv).map_err(|e| e.to_string())?;
                rules.check_played(&self.position, *seat, played)
            }
            Event::TurnPassed { seat } => self.check_turn(*seat),
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
                        && (last.played.placement.is_none()
                            || last.played.placement == *placement) =>
                {
                    Ok(())
                }
                _ => Err(format!(
                    "undo of sequence {undone_sequence}, which is not the last move"
                )),
            },
        }
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

    /// The seat to move, `None` once the game is over.
    pub fn to_move(&self) -> Option<Seat> {
        self.outcome.is_none().then_some(self.to_move)
    }

    /// The moves on the board, oldest first.
    pub fn moves(&self) -> &[PlayedMove] {
        &self.moves
    }

    /// How the game ended, `None` while in progress.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// In progress, won or drawn.
    pub fn status(&self) -> GameStatus {
        match self.outcome {
            None => GameStatus::InProgress,
            Some(Outcome::Win { .. }) => GameStatus::Won,
            Some(Outcome::Draw) => GameStatus::Drawn,
        }
    }

    /// The sequence of the last event applied (1-based).
    pub fn sequence(&self) -> u64 {
        self.sequence
    }

    /// Whether `seat` may act now: the game is on and it is `seat`'s turn.
    fn check_turn(&self, seat: Seat) -> Result<(), String> {
        if self.outcome.is_some() {
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
}

/// A position's identity for repetition: its pieces and the seat to move.
fn key(position: &Position, to_move: Seat) -> u64 {
    position.digest() ^ (u64::from(to_move.0) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Decides what `command` does to `state`: the events to append, or why it
/// is refused. Pure: `state` is not changed.
///
/// # Errors
/// [`GameError`]: an unknown seat, not this seat's turn, the game over, an
/// illegal move, or nothing to undo.
pub fn decide(state: &GameState, command: &Command) -> Result<Vec<Event>, GameError> {
    match *command {
        Command::Play { seat, mv } => {
            // A request that is wrong whatever the position is refused as
            // such before the position's own refusals.
            let seat = state.seat(seat)?;
            state.config.rules().check_move(mv)?;
            if state.outcome.is_some() {
                return Err(GameError::GameOver);
            }
            if seat != state.to_move {
                return Err(GameError::NotYourTurn {
                    seat: seat.0,
                    to_move: state.to_move.0,
                });
            }
            let rules = state.config.rules();
            let mut played = rules.play(&state.position, seat, mv)?;
            if played.outcome.is_none() && rules.draws_on_repetition() {
                // The third occurrence of a position is a draw.
                let mut after = state.position.clone();
                rules.apply(&mut after, seat, &played);
                let next = rules.next_to_move(state.config.seats().len(), seat, &played);
                let seen = state.repetitions.get(&key(&after, next));
                if seen.is_some_and(|n| *n >= 2) {
                    played.outcome = Some(Outcome::Draw);
                }
            }
            let passes = std::mem::take(&mut played.passes)
                .into_iter()
                .map(|seat| Event::TurnPassed { seat });
            Ok(std::iter::once(Event::MovePlayed {
                seat,
                ply: state.moves.len() as u32 + 1,
                played,
            })
            .chain(passes)
            .collect())
        }
        Command::Undo { requested_by } => {
            if let Some(seat) = requested_by {
                state.seat(seat)?;
            }
            let policy = state.config.undo_policy();
            if policy == UndoPolicy::Disabled {
                return Err(GameError::UndoDisabled);
            }
            let last = state.moves.last().ok_or(GameError::NothingToUndo)?;
            if policy == UndoPolicy::LastMover && requested_by != Some(last.seat) {
                return Err(GameError::NotLastMover {
                    last_mover: last.seat.0,
                    requested_by: requested_by.map(|s| s.0),
                });
            }
            Ok(vec![Event::MoveUndone {
                seat: last.seat,
                undone_sequence: last.sequence,
                placement: last.played.placement,
                requested_by,
            }])
        }
        Command::ReissueSeatToken { seat } => Ok(vec![Event::SeatTokenReissued {
            seat: state.seat(seat)?,
        }]),
    }
}

/// Applies one well-formed event to `state` and advances its sequence by
/// one. No rule is checked here: every rule lives in [`decide`], and
/// [`GameState::replay`] checks stored events before applying them.
///
/// # Panics
/// On an event that [`decide`] could not have produced for `state` (a
/// placement off the board, a GameCreated after the start).
pub fn evolve(state: &mut GameState, event: &Event) {
    state.sequence += 1;
    let config = Arc::clone(&state.config);
    let rules = config.rules();
    match event {
        Event::GameCreated(_) => panic!("GameCreated is only ever the first event"),
        Event::MovePlayed { seat, played, .. } => {
            rules.apply(&mut state.position, *seat, played);
            state.outcome = played.outcome.clone();
            state.to_move = rules.next_to_move(config.seats().len(), *seat, played);
            state.moves.push(PlayedMove {
                seat: *seat,
                sequence: state.sequence,
                played: played.clone(),
            });
            state.count_position(1);
        }
        Event::TurnPassed { seat } => {
            state.to_move = seat.next(config.seats().len());
        }
        Event::SeatTokenReissued { .. } => {}
        Event::MoveUndone { seat, .. } => {
            state.count_position(-1);
            if let Some(undone) = state.moves.pop() {
                rules.undo(&mut state.position, undone.seat, &undone.played);
            }
            state.outcome = None;
            state.to_move = *seat;
        }
    }
}
