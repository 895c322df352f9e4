//! The game state, [`decide`] and [`evolve`]: the aggregate [`GameState`]
//! here, each of its parts in a child module that adds its own
//! `impl GameState` where it needs one.
//!
//! - `mod.rs` (here): [`GameState`] itself, its creation and a new round,
//!   its read accessors, [`GameStatus`], [`Millis`] and
//!   [`AUTOMATIC_ROUNDS`].
//! - `command.rs`: [`Command`] and [`Action`], what a seat asks for.
//! - `error.rs`: [`GameError`] (a refused command) and [`ReplayError`] (a
//!   log that cannot be replayed).
//! - `undo_stack.rs`: [`PlayedMove`], an undo-stack entry, and its serde.
//! - `decide.rs`: [`decide`] and the moves, undos, redos and rematches it
//!   decides; a seat leaving play.
//! - `offers.rs`: [`Offer`] and [`Command::Act`] (resign, abort, draw
//!   offers, takeback requests).
//! - `clock.rs`: [`Clocks`], the turn's deadline and charging for a turn,
//!   timeouts and the absence grace.
//! - `evolve.rs`: [`evolve`], one event applied to the state.
//! - `replay.rs`: [`GameState::replay`] and the checks of a stored event or
//!   snapshot.

use std::collections::HashMap;
use std::sync::Arc;

use super::{EMPTY_CELL, GameConfig};
use crate::rules::{EndReason, Outcome, Played, Position, Seat};

mod clock;
mod command;
mod decide;
mod error;
mod evolve;
mod offers;
mod replay;
mod undo_stack;

pub use clock::Clocks;
pub use command::{Action, Command};
pub use decide::decide;
pub use error::{GameError, ReplayError};
pub use evolve::evolve;
pub use offers::Offer;
pub use undo_stack::PlayedMove;

/// A reading of the server's clock: Unix epoch milliseconds. The shell
/// reads the clock and passes it in; nothing here reads one.
pub type Millis = i64;

/// Rounds of automatic moves after which a game nobody plays ends: once
/// the server has played, in a row, this many moves per seat in play that
/// a person plays (random moves on expiry,
/// [`ExpiryPolicy::RandomMove`](super::ExpiryPolicy::RandomMove), for a
/// seat whose time ran out or that stayed away), with no move, undo,
/// redo, offer, answer or rematch request of such a seat in between, the
/// next expiry of such a seat ends the game with no result and
/// [`EndReason::Abandoned`] instead of another move. Bot seats neither
/// count nor reset the count; a game with no person's seat in play never
/// ends this way.
pub const AUTOMATIC_ROUNDS: u32 = 3;

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
    #[serde(deserialize_with = "undo_stack::stack")]
    moves: Vec<PlayedMove>,
    #[serde(deserialize_with = "undo_stack::stack")]
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
    /// started, at `created_at` or at the configuration's later
    /// [`GameConfig::clocks_start_at`] (a move before it is charged no
    /// time).
    pub fn new(config: GameConfig, created_at: Millis) -> Self {
        let clocks_start = config
            .clocks_start_at()
            .map_or(created_at, |at| at.max(created_at));
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
                turn_started: clocks_start,
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

    /// The sequence of the last event applied (1-based).
    pub fn sequence(&self) -> u64 {
        self.sequence
    }

    /// When the round started, Unix epoch milliseconds: the game's creation
    /// for round 0, the RoundStarted event's time after a rematch.
    pub fn started_at(&self) -> Millis {
        self.started_at
    }

    /// Since when the round's seats have been waiting for its first move,
    /// Unix epoch milliseconds: for round 0, when a matchmaking service
    /// matched the players ([`crate::game::GameConfig::matched_at`]) if it
    /// said, else as [`GameState::started_at`].
    pub fn waiting_since(&self) -> Millis {
        match (self.round, self.config.matched_at()) {
            (0, Some(matched_at)) => matched_at,
            _ => self.started_at,
        }
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
}

/// A position's identity for repetition: its pieces and the seat to move.
fn key(position: &Position, to_move: Seat) -> u64 {
    position.digest() ^ (u64::from(to_move.0) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}
