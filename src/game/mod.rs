//! The game aggregate: turn order, the move log, the outcome and undo, as pure
//! functions over a [`GameState`].
//!
//! - [`GameConfig`] / [`SeatInfo`]: the rules and seats a game is created
//!   with, validated by [`GameConfig::new`].
//! - [`Command`]: what a seat asks for; [`decide`] turns a command into
//!   [`Event`]s or a [`GameError`] without changing anything.
//! - [`evolve`] applies one event and cannot fail; [`GameState::replay`] is the
//!   fold of evolve over a stored log, checking each event is well-formed
//!   first (a corrupt log is a [`ReplayError`], never a panic).
//!
//! How a win is detected is the rules' business ([`crate::rules`]); storage,
//! time and the network are not known here, and no game is named: every
//! game reaches this layer through [`crate::rules::RuleSet`].
//!
//! The crate's front page has a runnable example of [`decide`] and
//! [`evolve`].

mod config;
mod event;
mod state;

pub use config::{EMPTY_CELL, GameConfig, InvalidSeats, SeatInfo, SeatLimits, UndoPolicy};
pub use event::Event;
pub use state::{
    Command, GameError, GameState, GameStatus, PlayedMove, ReplayError, decide, evolve,
};
