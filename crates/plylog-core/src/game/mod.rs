//! The game aggregate: turn order, the move log, the outcome and undo, as pure
//! functions over a [`GameState`].
//!
//! - [`GameConfig`] / [`SeatInfo`]: the rules and seats a game is created
//!   with, validated by [`GameConfig::new`].
//! - [`Command`]: what a seat asks for; [`decide`] turns a command, with the
//!   server's clock reading, into [`Event`]s or a [`GameError`] without
//!   changing anything.
//! - [`evolve`] applies one event, with the time it was recorded at, and
//!   cannot fail; [`GameState::replay`] is the fold of evolve over a stored
//!   log, checking each event is well-formed first (a corrupt log is a
//!   [`ReplayError`], never a panic).
//! - Time is data: a [`TimeControl`] sets deadlines, the clocks are part of
//!   the state, and a [`Command::Timeout`] given at a clock reading past the
//!   deadline decides to the timeout's events. Nothing here reads a clock.
//!
//! # Files
//! - `config.rs`: [`GameConfig`], [`SeatInfo`], [`TimeControl`] and the
//!   policies a game is created with.
//! - `event.rs`: [`Event`], what the log records.
//! - `state/`: [`GameState`], [`decide`] and [`evolve`], one part per file
//!   (commands, errors, the undo stack, offers, clocks, replay); its
//!   `mod.rs` has the map.
//! - `setup.rs`: [`setup`], a position set up from a config and moves
//!   (what SuggestMove and AnalyzePosition analyse), with [`SetupError`].
//!
//! How a win is detected is the rules' business ([`crate::rules`]); storage,
//! time and the network are not known here, and no game is named: every
//! game reaches this layer through [`crate::rules::RuleSet`].
//!
//! The server crate's front page (`plylog`, src/lib.rs) has a runnable
//! example of [`decide`] and [`evolve`].

mod config;
mod event;
mod setup;
mod state;

pub use config::{
    AbsenceAction, AbsencePolicy, EMPTY_CELL, ExpiryPolicy, Fischer, GameConfig, InvalidSeats,
    InvalidTimeControl, MAX_TIME_MS, MIN_TIME_MS, SeatInfo, SeatLimits, TimeControl, UndoPolicy,
    escape_disruptive, is_disruptive,
};
pub use event::Event;
pub use setup::{SetupError, setup};
pub use state::{
    AUTOMATIC_ROUNDS, Action, Clocks, Command, GameError, GameState, GameStatus, Millis, Offer,
    PlayedMove, ReplayError, decide, evolve,
};
