//! Time on the wire: timestamps, durations, time controls and the
//! disconnect policy (whose grace period is a duration).

use prost_types::{Duration, Timestamp};

use super::{FieldError, enum_field};
use crate::game::{AbsenceAction, AbsencePolicy, ExpiryPolicy, Fischer, TimeControl};
use crate::proto::{self as pb, ErrorReason};

/// Unix epoch milliseconds as a protobuf Timestamp.
pub fn timestamp(ms: i64) -> Timestamp {
    Timestamp {
        seconds: ms.div_euclid(1000),
        nanos: (ms.rem_euclid(1000) * 1_000_000) as i32,
    }
}

/// A protobuf Timestamp as Unix epoch milliseconds (0 when absent).
pub fn timestamp_ms(ts: Option<&Timestamp>) -> i64 {
    ts.map_or(0, |t| t.seconds * 1000 + i64::from(t.nanos) / 1_000_000)
}

/// Milliseconds as a protobuf Duration.
pub fn duration(ms: i64) -> Duration {
    Duration {
        seconds: ms.div_euclid(1000),
        nanos: (ms.rem_euclid(1000) * 1_000_000) as i32,
    }
}

/// A protobuf Duration as whole milliseconds.
///
/// # Errors
/// [`FieldError`] (INVALID_TIME_CONTROL) for a negative duration, `nanos`
/// of a second or more (protobuf's Duration keeps them from -999,999,999
/// to 999,999,999: `{seconds: 1, nanos: 2000000000}` is no duration, not
/// 3 s), one with a part of a millisecond, or one too long to count.
fn duration_ms(d: &Duration, field: &str) -> Result<u64, FieldError> {
    let invalid = |why: &str| FieldError::new(field, why, ErrorReason::InvalidTimeControl);
    if d.seconds < 0 || d.nanos < 0 {
        return Err(invalid("a duration must not be negative"));
    }
    if d.nanos >= 1_000_000_000 {
        return Err(invalid(
            "nanos must be from 0 to 999,999,999: whole seconds go in seconds",
        ));
    }
    if d.nanos % 1_000_000 != 0 {
        return Err(invalid("a duration must be whole milliseconds"));
    }
    (d.seconds as u64)
        .checked_mul(1000)
        .and_then(|ms| ms.checked_add(d.nanos as u64 / 1_000_000))
        .ok_or_else(|| invalid("the duration is too long"))
}

/// A time control on the wire, its seed filled in.
pub fn time_control_to_proto(tc: &TimeControl) -> pb::TimeControl {
    let ms = |ms: u64| duration(ms as i64);
    pb::TimeControl {
        per_move: tc.per_move_ms.map(ms),
        initial: tc.clock.map(|c| ms(c.initial_ms)),
        increment: tc.clock.map(|c| ms(c.increment_ms)),
        on_expiry: match tc.on_expiry {
            ExpiryPolicy::Forfeit => pb::ExpiryPolicy::Forfeit,
            ExpiryPolicy::RandomMove => pb::ExpiryPolicy::RandomMove,
            ExpiryPolicy::Draw => pb::ExpiryPolicy::Draw,
        } as i32,
        seed: Some(tc.seed),
    }
}

/// A time control from the wire, unchecked (see [`TimeControl::check`]);
/// a missing seed reads as 0 (CreateGame fills one in before this).
///
/// # Errors
/// [`FieldError`] (INVALID_TIME_CONTROL) for a malformed duration, an
/// increment without a clock, or an unknown expiry policy.
pub(super) fn time_control_from_proto(tc: &pb::TimeControl) -> Result<TimeControl, FieldError> {
    let invalid = |field: &str, why: String| {
        FieldError::new(
            format!("time_control.{field}"),
            why,
            ErrorReason::InvalidTimeControl,
        )
    };
    let ms = |d: Option<&Duration>, field: &str| {
        d.map(|d| duration_ms(d, &format!("time_control.{field}")))
            .transpose()
    };
    let per_move_ms = ms(tc.per_move.as_ref(), "per_move")?;
    let initial = ms(tc.initial.as_ref(), "initial")?;
    let increment = ms(tc.increment.as_ref(), "increment")?;
    let clock = match (initial, increment) {
        (Some(initial_ms), increment) => Some(Fischer {
            initial_ms,
            increment_ms: increment.unwrap_or(0),
        }),
        (None, Some(_)) => {
            return Err(invalid(
                "increment",
                "an increment needs a clock (`initial`)".into(),
            ));
        }
        (None, None) => None,
    };
    let on_expiry = match enum_field(
        tc.on_expiry,
        "time_control.on_expiry",
        ErrorReason::InvalidTimeControl,
    )? {
        pb::ExpiryPolicy::Unspecified | pb::ExpiryPolicy::Forfeit => ExpiryPolicy::Forfeit,
        pb::ExpiryPolicy::RandomMove => ExpiryPolicy::RandomMove,
        pb::ExpiryPolicy::Draw => ExpiryPolicy::Draw,
    };
    Ok(TimeControl {
        per_move_ms,
        clock,
        on_expiry,
        seed: tc.seed.unwrap_or(0),
    })
}

/// Gives a time control without a seed one from `draw` (the server draws
/// it, outside the pure core).
pub fn fill_time_control_seed(tc: &mut pb::TimeControl, draw: impl FnOnce() -> u64) {
    if tc.seed.is_none() {
        tc.seed = Some(draw());
    }
}

/// A disconnect policy on the wire.
pub fn absence_to_proto(absence: &AbsencePolicy) -> pb::AbsencePolicy {
    pb::AbsencePolicy {
        grace: Some(duration(absence.grace_ms as i64)),
        on_absence: match absence.action {
            AbsenceAction::Expire => pb::AbsenceAction::Expire,
            AbsenceAction::OfferDraw => pb::AbsenceAction::OfferDraw,
        } as i32,
    }
}

/// A disconnect policy from the wire, unchecked (see
/// [`GameConfig::with_absence`]).
///
/// # Errors
/// [`FieldError`] (INVALID_TIME_CONTROL) for a missing or malformed grace
/// period or an unknown action.
pub(super) fn absence_from_proto(absence: &pb::AbsencePolicy) -> Result<AbsencePolicy, FieldError> {
    let grace = absence.grace.as_ref().ok_or_else(|| {
        FieldError::new(
            "absence.grace",
            "a grace period is required",
            ErrorReason::InvalidTimeControl,
        )
    })?;
    let action = match enum_field(
        absence.on_absence,
        "absence.on_absence",
        ErrorReason::InvalidTimeControl,
    )? {
        pb::AbsenceAction::Unspecified | pb::AbsenceAction::Expire => AbsenceAction::Expire,
        pb::AbsenceAction::OfferDraw => AbsenceAction::OfferDraw,
    };
    Ok(AbsencePolicy {
        grace_ms: duration_ms(grace, "absence.grace")?,
        action,
    })
}
