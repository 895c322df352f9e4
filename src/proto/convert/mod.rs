//! Conversions between the wire types and the domain types, one file per
//! vocabulary (as the proto files group them):
//!
//! - `time.rs`: timestamps, durations, time controls and the disconnect
//!   policy ([`time_control_to_proto`], [`absence_to_proto`]).
//! - `rules.rs`: the rule set of every game, and the dice seed the server
//!   draws ([`rules_from_proto`], [`fill_seed`]).
//! - `seats.rs`: seats, bots, engines, strengths and scores
//!   ([`seat_to_proto`], [`engine_from_proto`]).
//! - `config.rs`: everything a game is created with, checked together
//!   ([`WireConfig`], [`config_from_proto`]).
//! - `moves.rs`: cells, moves, rolls, actions and seat numbers
//!   ([`move_from_proto`], [`action_from_proto`]).
//! - `outcome.rs`: end reasons and results ([`outcome_to_proto`]).
//! - `view.rs`: a game as a reply shows it: position, board, clocks and
//!   offers, in the basic or the full [`View`] ([`game_in_view`]).
//!
//! How events are stored is not a conversion but the storage schema: it is
//! in [`crate::proto::event_format`], re-exported here
//! ([`event_to_proto`], [`event_from_proto`], [`event_type`]).
//!
//! Wire to domain goes through checks that name the offending field
//! ([`FieldError`]); domain to wire cannot fail. Events decoded from storage
//! use the same checks, so a corrupt row becomes an error, never a panic.

mod config;
mod moves;
mod outcome;
mod rules;
mod seats;
mod time;
mod view;

use super::ErrorReason;

pub use super::event_format::{event_from_proto, event_to_proto, event_type};
pub use config::{WireConfig, config_from_proto, undo_policy_to_proto};
pub(super) use moves::cell_from_proto;
pub use moves::{
    action_from_proto, cell_to_proto, move_from_proto, move_to_proto, roll_to_proto,
    seat_from_proto,
};
pub(super) use outcome::{end_reason_from_proto, outcome_from_proto};
pub use outcome::{end_reason_to_proto, outcome_to_proto};
pub use rules::{fill_seed, restore_sent_seed, rules_from_proto, rules_to_proto};
pub(super) use seats::chooser_to_proto;
pub use seats::{
    engine_from_proto, engine_to_proto, fill_bot_seeds, score_to_proto, seat_to_proto,
    strength_from_proto,
};
pub use time::{
    absence_to_proto, duration, fill_time_control_seed, time_control_to_proto, timestamp,
    timestamp_ms,
};
pub use view::{
    MAX_SCAN_CELLS, MAX_TEXT_CELLS, View, board_to_proto, game_in_view, game_to_proto,
    position_to_proto, status_to_proto, view_from_proto,
};

/// A request field that does not convert, with the reason clients switch on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {why}")]
pub struct FieldError {
    /// The field path, e.g. `rules.mnk.k` or `move.place.row`.
    pub field: String,
    /// A short lowercase sentence.
    pub why: String,
    /// The stable reason.
    pub reason: ErrorReason,
}

impl FieldError {
    /// A field error with `reason`.
    pub fn new(field: impl Into<String>, why: impl Into<String>, reason: ErrorReason) -> Self {
        FieldError {
            field: field.into(),
            why: why.into(),
            reason,
        }
    }

    /// A missing or malformed field (INVALID_REQUEST).
    pub fn invalid(field: impl Into<String>, why: impl Into<String>) -> Self {
        FieldError::new(field, why, ErrorReason::InvalidRequest)
    }
}
