//! Seats and bots on the wire: engines, strengths, seeds, and what an
//! engine answers (its choice and its score).

use super::{FieldError, enum_field};
use crate::engine::{Bot, Chooser, EngineKind, MAX_STRENGTH, Score};
use crate::game::SeatInfo;
use crate::proto::{self as pb, ErrorReason};

/// A seat on the wire.
pub fn seat_to_proto(seat: &SeatInfo) -> pb::Seat {
    pb::Seat {
        player_id: seat.player_id.clone(),
        display_name: seat.display_name.clone(),
        symbol: seat.symbol.clone(),
        bot: seat.bot.as_ref().map(|bot| pb::Bot {
            engine: engine_to_proto(bot.engine) as i32,
            strength: bot.strength.into(),
            seed: Some(bot.seed),
        }),
    }
}

/// An engine on the wire.
pub fn engine_to_proto(engine: EngineKind) -> pb::Engine {
    match engine {
        EngineKind::Random => pb::Engine::Random,
        EngineKind::Minimax => pb::Engine::Minimax,
        EngineKind::ConnectFour => pb::Engine::Connect4,
        EngineKind::Mcts => pb::Engine::Mcts,
    }
}

/// An Engine value from the wire; `None` for ENGINE_UNSPECIFIED.
///
/// # Errors
/// INVALID_REQUEST naming `field` for a value outside the enum.
pub fn engine_from_proto(value: i32, field: &str) -> Result<Option<EngineKind>, FieldError> {
    Ok(
        match enum_field(value, field, ErrorReason::InvalidRequest)? {
            pb::Engine::Unspecified => None,
            pb::Engine::Random => Some(EngineKind::Random),
            pb::Engine::Minimax => Some(EngineKind::Minimax),
            pb::Engine::Connect4 => Some(EngineKind::ConnectFour),
            pb::Engine::Mcts => Some(EngineKind::Mcts),
        },
    )
}

/// A strength from the wire: 0 means [`MAX_STRENGTH`].
///
/// # Errors
/// `reason` naming `field` above [`MAX_STRENGTH`].
pub fn strength_from_proto(
    strength: u32,
    field: &str,
    reason: ErrorReason,
) -> Result<u8, FieldError> {
    match strength {
        0 => Ok(MAX_STRENGTH),
        s if s <= u32::from(MAX_STRENGTH) => Ok(s as u8),
        s => Err(FieldError::new(
            field,
            format!("strength {s} is not from 1 to {MAX_STRENGTH}"),
            reason,
        )),
    }
}

/// A bot seat from the wire (its seed filled in: a missing one reads as
/// 0; CreateGame fills one in before this).
pub(super) fn bot_from_proto(bot: &pb::Bot, field: &str) -> Result<Bot, FieldError> {
    let engine = engine_from_proto(bot.engine, &format!("{field}.engine"))?.ok_or_else(|| {
        FieldError::new(
            format!("{field}.engine"),
            "a bot seat needs an engine",
            ErrorReason::InvalidSeats,
        )
    })?;
    Ok(Bot {
        engine,
        strength: strength_from_proto(
            bot.strength,
            &format!("{field}.strength"),
            ErrorReason::InvalidSeats,
        )?,
        seed: bot.seed.unwrap_or(0),
    })
}

/// Gives every bot seat without a seed one from `draw` (the server draws
/// them, outside the pure core).
pub fn fill_bot_seeds(seats: &mut [pb::Seat], mut draw: impl FnMut() -> u64) {
    for bot in seats.iter_mut().filter_map(|s| s.bot.as_mut()) {
        bot.seed.get_or_insert_with(&mut draw);
    }
}

/// What chose a bot's move, on the wire.
pub(in crate::proto) fn chooser_to_proto(chooser: &Chooser) -> pb::Chooser {
    pb::Chooser {
        engine: engine_to_proto(chooser.engine) as i32,
        strength: chooser.strength.into(),
        proven: chooser.proven,
    }
}

/// An engine's score on the wire.
pub fn score_to_proto(score: Score) -> pb::Score {
    use pb::score::Kind;
    pb::Score {
        kind: Some(match score {
            Score::Exact(v) => Kind::Exact(v),
            Score::Heuristic(v) => Kind::Heuristic(v),
            Score::WinRate(w) => Kind::WinRatePerMille(w.into()),
        }),
    }
}
