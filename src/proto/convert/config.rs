//! What a game is created with: rules, seats, undo policy, time control
//! and disconnect policy, checked together into a [`GameConfig`].

use std::collections::BTreeMap;

use super::time::{absence_from_proto, time_control_from_proto};
use super::{FieldError, enum_field, rules_from_proto, seats::bot_from_proto};
use crate::game::{GameConfig, InvalidTimeControl, SeatInfo, SeatLimits, UndoPolicy};
use crate::proto::{self as pb, ErrorReason};

/// An undo policy on the wire.
pub fn undo_policy_to_proto(policy: UndoPolicy) -> pb::UndoPolicy {
    match policy {
        UndoPolicy::LastMover => pb::UndoPolicy::LastMover,
        UndoPolicy::AnySeat => pb::UndoPolicy::AnySeat,
        UndoPolicy::Disabled => pb::UndoPolicy::Disabled,
        UndoPolicy::Consent => pb::UndoPolicy::Consent,
    }
}

/// What a game is created with on the wire: rules, seats, undo policy and
/// time control.
#[derive(Debug, Clone, Copy)]
pub struct WireConfig<'a> {
    /// The rules (required).
    pub rules: Option<&'a pb::RuleSet>,
    /// The seats.
    pub seats: &'a [pb::Seat],
    /// The UndoPolicy value.
    pub undo_policy: i32,
    /// The time control, absent when untimed.
    pub time_control: Option<&'a pb::TimeControl>,
    /// The disconnect policy, absent when none.
    pub absence: Option<&'a pb::AbsencePolicy>,
    /// When the players were matched, absent when not said.
    pub matched_at: Option<&'a prost_types::Timestamp>,
    /// The caller's labels, key to value (empty: none).
    pub labels: &'a BTreeMap<String, String>,
    /// When the clocks start, absent when at the creation.
    pub clocks_start_at: Option<&'a prost_types::Timestamp>,
}

/// Most labels a game has (CreateGame's `labels`).
pub const MAX_LABELS: usize = 16;
/// Most characters in a label's key.
const MAX_LABEL_KEY_CHARS: usize = 63;
/// Most characters in a label's value.
const MAX_LABEL_VALUE_CHARS: usize = 128;

/// Why `key` is not a label key, if it is not: 1 to
/// 63 characters, a lowercase ASCII letter and then
/// lowercase ASCII letters, digits, `_` or `-` (so that a filter can name
/// it as `labels.<key>`).
pub fn label_key_problem(key: &str) -> Option<String> {
    let mut chars = key.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rest_ok =
        chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if !first_ok || !rest_ok || key.len() > MAX_LABEL_KEY_CHARS {
        return Some(format!(
            "label key {key:?}: 1 to {MAX_LABEL_KEY_CHARS} characters, a lowercase letter \
             then lowercase letters, digits, '_' or '-'"
        ));
    }
    None
}

/// The labels of a new game, checked: at most [`MAX_LABELS`], each key as
/// [`label_key_problem`] says, each value 0 to [`MAX_LABEL_VALUE_CHARS`]
/// characters with no control character.
///
/// # Errors
/// [`FieldError`] naming `labels` (INVALID_REQUEST).
fn check_labels(labels: &BTreeMap<String, String>) -> Result<(), FieldError> {
    if labels.len() > MAX_LABELS {
        return Err(FieldError::invalid(
            "labels",
            format!("{} labels: at most {MAX_LABELS}", labels.len()),
        ));
    }
    for (key, value) in labels {
        if let Some(problem) = label_key_problem(key) {
            return Err(FieldError::invalid("labels", problem));
        }
        if value.chars().count() > MAX_LABEL_VALUE_CHARS || value.chars().any(char::is_control) {
            return Err(FieldError::invalid(
                "labels",
                format!(
                    "the value of label {key:?}: at most {MAX_LABEL_VALUE_CHARS} characters, \
                     no control characters"
                ),
            ));
        }
    }
    Ok(())
}

/// A timestamp field (`field`) as Unix epoch milliseconds.
///
/// # Errors
/// [`FieldError`] naming `field` (INVALID_REQUEST) for nanos outside
/// 0 to 999,999,999 or a time outside the years 0001 to 9999 (protobuf's
/// Timestamp range).
fn timestamp_ms(at: &prost_types::Timestamp, field: &str) -> Result<i64, FieldError> {
    /// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, as protobuf bounds a
    /// Timestamp.
    const SECONDS: std::ops::RangeInclusive<i64> = -62_135_596_800..=253_402_300_799;
    if !SECONDS.contains(&at.seconds) || !(0..1_000_000_000).contains(&at.nanos) {
        return Err(FieldError::invalid(
            field,
            format!(
                "{field} is not a valid timestamp (years 0001 to 9999, nanos below one second)"
            ),
        ));
    }
    Ok(at.seconds * 1000 + i64::from(at.nanos) / 1_000_000)
}

/// Checks wire rules, seats, undo policy and time control together: a
/// board of at most `max_cells`, seats within `limits`, time limits of at
/// least `shortest_ms` ([`crate::game::MIN_TIME_MS`] for a new game; 1 for
/// a stored one, whose limits were checked when it was created).
///
/// # Errors
/// [`FieldError`] with [`ErrorReason::InvalidRules`],
/// [`ErrorReason::InvalidSeats`], [`ErrorReason::InvalidTimeControl`], or
/// INVALID_REQUEST naming `undo_policy` for a value outside the enum.
pub fn config_from_proto(
    wire: WireConfig<'_>,
    max_cells: u64,
    limits: SeatLimits,
    shortest_ms: u64,
) -> Result<GameConfig, FieldError> {
    let WireConfig {
        rules,
        seats,
        undo_policy,
        time_control,
        absence,
        matched_at,
        labels,
        clocks_start_at,
    } = wire;
    check_labels(labels)?;
    let undo_policy = match enum_field(undo_policy, "undo_policy", ErrorReason::InvalidRequest)? {
        pb::UndoPolicy::Unspecified | pb::UndoPolicy::LastMover => UndoPolicy::LastMover,
        pb::UndoPolicy::AnySeat => UndoPolicy::AnySeat,
        pb::UndoPolicy::Disabled => UndoPolicy::Disabled,
        pb::UndoPolicy::Consent => UndoPolicy::Consent,
    };
    let rules = rules_from_proto(rules, max_cells)?;
    let seats = seats
        .iter()
        .enumerate()
        .map(|(i, s)| {
            Ok(SeatInfo {
                player_id: s.player_id.clone(),
                display_name: s.display_name.clone(),
                symbol: s.symbol.clone(),
                bot: s
                    .bot
                    .as_ref()
                    .map(|bot| bot_from_proto(bot, &format!("seats[{i}].bot")))
                    .transpose()?,
            })
        })
        .collect::<Result<_, FieldError>>()?;
    let config = GameConfig::new(rules, seats, limits)
        .map(|config| config.with_undo_policy(undo_policy))
        .map_err(|e| {
            let reason = if e.field.ends_with(".bot.engine") {
                ErrorReason::EngineUnsupported
            } else {
                ErrorReason::InvalidSeats
            };
            FieldError::new(e.field, e.why, reason)
        })?;
    let invalid =
        |e: InvalidTimeControl| FieldError::new(e.field, e.why, ErrorReason::InvalidTimeControl);
    let config = match time_control {
        None => config,
        Some(tc) => config
            .with_time_control(time_control_from_proto(tc)?, shortest_ms)
            .map_err(invalid)?,
    };
    let config = config.with_labels(labels.clone()).with_clocks_start_at(
        clocks_start_at
            .map(|at| timestamp_ms(at, "clocks_start_at"))
            .transpose()?,
    );
    let config = match matched_at {
        None => config,
        Some(at) => config.with_matched_at(timestamp_ms(at, "matched_at")?),
    };
    match absence {
        None => Ok(config),
        Some(absence) => config
            .with_absence(absence_from_proto(absence)?, shortest_ms)
            .map_err(invalid),
    }
}
