//! Field checks the handlers share: ids, seats and limits, each naming
//! the field at fault in a [`FieldError`].

use crate::game::MIN_TIME_MS;
use crate::proto::convert::{self, FieldError};
use crate::rules::Seat;

/// Longest request id, game id or page token accepted, in characters.
pub const MAX_ID_CHARS: usize = 128;

/// Checks a new game as CreateGame does, and `plylog import` for each game
/// it reads: the game id (`None`: the server picks one) and the rules,
/// seats, undo policy, time control and disconnect policy, against the
/// server's `max_cells` and `seat_limits`, every time limit at least
/// [`MIN_TIME_MS`].
///
/// # Errors
/// [`FieldError`] naming the first field at fault (see [`check_game_id`]
/// and [`convert::config_from_proto`]).
pub fn check_new_game(
    game_id: Option<&str>,
    wire: convert::WireConfig<'_>,
    max_cells: u64,
    seat_limits: crate::game::SeatLimits,
) -> Result<crate::game::GameConfig, FieldError> {
    if let Some(game_id) = game_id {
        check_game_id(game_id)?;
    }
    convert::config_from_proto(wire, max_cells, seat_limits, MIN_TIME_MS)
}

/// Checks a game id (1 to [`MAX_ID_CHARS`] characters of
/// `[A-Za-z0-9._~-]`), and records it on the call's span.
///
/// # Errors
/// [`FieldError`] naming `game_id` (INVALID_REQUEST).
pub fn check_game_id(game_id: &str) -> Result<(), FieldError> {
    if game_id.is_empty() {
        return Err(FieldError::invalid("game_id", "game_id is required"));
    }
    if game_id.chars().count() > MAX_ID_CHARS
        || !game_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._~-".contains(c))
    {
        return Err(FieldError::invalid(
            "game_id",
            format!("game_id must be 1 to {MAX_ID_CHARS} characters of [A-Za-z0-9._~-]"),
        ));
    }
    tracing::Span::current().record("game_id", game_id);
    Ok(())
}

/// The seat a request names, checked, and recorded on the call's span.
pub(super) fn requested_seat(seat: u32) -> Result<Seat, FieldError> {
    let seat = convert::seat_from_proto(seat, "seat")?;
    tracing::Span::current().record("seat", seat.0);
    Ok(seat)
}

/// The seat a request must name, checked, and recorded on the call's span.
pub(super) fn required_seat(seat: Option<u32>) -> Result<Seat, FieldError> {
    requested_seat(seat.ok_or_else(|| FieldError::invalid("seat", "seat is required"))?)
}

pub(super) fn check_request_id(request_id: &str) -> Result<(), FieldError> {
    if request_id.chars().count() > MAX_ID_CHARS {
        return Err(FieldError::invalid(
            "request_id",
            format!("request_id must be at most {MAX_ID_CHARS} characters"),
        ));
    }
    // Stored as text, which PostgreSQL's cannot hold with a NUL in it.
    // Other characters are kept as sent (and escaped in the logs).
    if request_id.contains('\0') {
        return Err(FieldError::invalid(
            "request_id",
            "request_id must not contain NUL".to_owned(),
        ));
    }
    Ok(())
}

/// Most sequences a GetReplay may list in `position_at`.
pub(super) const MAX_POSITION_AT: usize = 1000;

/// Checks a StreamAllEvents request against the server's `cells`: at most
/// one position per cell, known event types (each kept once), a checkpoint
/// interval of at most [`crate::registry::MAX_CHECKPOINT_INTERVAL`] (0:
/// the default).
///
/// # Errors
/// [`FieldError`] naming `after`, `event_types` or `checkpoint_interval`
/// (INVALID_REQUEST).
pub(super) fn feed_request(
    req: crate::proto::StreamAllEventsRequest,
    cells: usize,
) -> Result<crate::registry::FeedRequest, FieldError> {
    use crate::proto::event_format::EVENT_TYPES;
    use crate::registry::{DEFAULT_CHECKPOINT_INTERVAL, MAX_CHECKPOINT_INTERVAL};
    if req.after.len() > cells {
        return Err(FieldError::invalid(
            "after",
            format!(
                "after has {} positions but the server has {cells} cell(s): one position per cell",
                req.after.len()
            ),
        ));
    }
    let mut event_types = Vec::new();
    for name in &req.event_types {
        let known = EVENT_TYPES
            .iter()
            .find(|t| **t == name.as_str())
            .ok_or_else(|| {
                FieldError::invalid(
                    "event_types",
                    format!(
                        "unknown event type {name:?}: one of {}",
                        EVENT_TYPES.join(", ")
                    ),
                )
            })?;
        if !event_types.contains(known) {
            event_types.push(*known);
        }
    }
    let checkpoint_interval = match req.checkpoint_interval {
        0 => DEFAULT_CHECKPOINT_INTERVAL,
        n if n > MAX_CHECKPOINT_INTERVAL => {
            return Err(FieldError::invalid(
                "checkpoint_interval",
                format!("checkpoint_interval is at most {MAX_CHECKPOINT_INTERVAL}"),
            ));
        }
        n => n,
    };
    if req.from_end && !req.after.is_empty() {
        return Err(FieldError::invalid(
            "from_end",
            "from_end starts at the feed's end: leave after empty",
        ));
    }
    Ok(crate::registry::FeedRequest {
        after: req.after,
        follow: req.follow,
        event_types: (!event_types.is_empty()).then_some(event_types),
        checkpoint_interval,
        lifecycle_only: req.lifecycle_only,
        tags: super::filter::game_filter(&req.filter)?,
        from_end: req.from_end,
    })
}
