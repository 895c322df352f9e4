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

mod chess;
mod config;
mod moves;
mod outcome;
mod rules;
mod seats;
mod time;
mod view;

use super::{self as pb, ErrorReason};

pub use super::event_format::{event_from_proto, event_to_proto, event_type};
pub(super) use chess::{chess_played_from_proto, chess_played_to_proto};
pub use config::{
    MAX_LABELS, WireConfig, config_from_proto, label_key_problem, undo_policy_to_proto,
};
pub(super) use moves::cell_from_proto;
pub use moves::{
    action_from_proto, cell_to_proto, move_from_proto, move_on_position_to_proto, move_to_proto,
    roll_to_proto, seat_from_proto,
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

/// A protobuf enum on the wire, named as the proto files name it.
pub(super) trait WireEnum: TryFrom<i32> {
    /// The enum's name, for the error on a number that is none of its
    /// values.
    const NAME: &'static str;
}

/// Implements [`WireEnum`] for generated enums, named by their type.
macro_rules! wire_enum {
    ($($name:ident),+ $(,)?) => {$(
        impl WireEnum for pb::$name {
            const NAME: &'static str = stringify!($name);
        }
    )+};
}

wire_enum!(
    AbsenceAction,
    Action,
    ChessPieceKind,
    ChessVariant,
    DrawRule,
    Engine,
    EndReason,
    ExpiryPolicy,
    Forfeit,
    GameView,
    OverlineRule,
    Overshoot,
    PopBothLines,
    UndoPolicy,
);

/// The value of the enum field `field` numbered `value` (what the caller
/// makes of UNSPECIFIED is its own business).
///
/// # Errors
/// [`FieldError`] with `reason` naming `field` when `value` is none of the
/// enum's values: "7 is not one of the UndoPolicy values".
pub(super) fn enum_field<E: WireEnum>(
    value: i32,
    field: &str,
    reason: ErrorReason,
) -> Result<E, FieldError> {
    E::try_from(value).map_err(|_| {
        FieldError::new(
            field,
            format!("{value} is not one of the {} values", E::NAME),
            reason,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_enum_number_names_its_field_its_enum_and_the_reason() {
        let err = enum_field::<pb::UndoPolicy>(99, "undo_policy", ErrorReason::InvalidRequest)
            .unwrap_err();
        assert_eq!(
            err,
            FieldError::invalid("undo_policy", "99 is not one of the UndoPolicy values")
        );
        let known = enum_field(2, "rules.gomoku.overline", ErrorReason::InvalidRules);
        assert_eq!(known, Ok(pb::OverlineRule::Exact));
    }
}
