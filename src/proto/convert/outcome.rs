//! How a game ends on the wire: the end reason and the result.

use super::moves::cell_from_proto;
use super::{FieldError, enum_field};
use super::{cell_to_proto, seat_from_proto};
use crate::proto::{self as pb, ErrorReason};
use crate::rules::{EndReason, Outcome};

/// An end reason on the wire.
pub fn end_reason_to_proto(reason: EndReason) -> pb::EndReason {
    match reason {
        EndReason::LineCompleted => pb::EndReason::LineCompleted,
        EndReason::BoardFull => pb::EndReason::BoardFull,
        EndReason::Repetition => pb::EndReason::Repetition,
        EndReason::DiscCount => pb::EndReason::DiscCount,
        EndReason::RaceFinished => pb::EndReason::RaceFinished,
        EndReason::Connection => pb::EndReason::Connection,
        EndReason::Resignation => pb::EndReason::Resignation,
        EndReason::Timeout => pb::EndReason::Timeout,
        EndReason::Agreement => pb::EndReason::Agreement,
        EndReason::Aborted => pb::EndReason::Aborted,
        EndReason::Abandoned => pb::EndReason::Abandoned,
        EndReason::Checkmate => pb::EndReason::Checkmate,
        EndReason::Stalemate => pb::EndReason::Stalemate,
        EndReason::InsufficientMaterial => pb::EndReason::InsufficientMaterial,
        EndReason::ThreefoldRepetition => pb::EndReason::ThreefoldRepetition,
        EndReason::FiftyMoves => pb::EndReason::FiftyMoves,
        EndReason::FivefoldRepetition => pb::EndReason::FivefoldRepetition,
        EndReason::SeventyFiveMoves => pb::EndReason::SeventyFiveMoves,
    }
}

pub(in crate::proto) fn end_reason_from_proto(
    reason: i32,
    field: &str,
) -> Result<EndReason, FieldError> {
    Ok(
        match enum_field(reason, field, ErrorReason::InvalidRequest)? {
            pb::EndReason::LineCompleted => EndReason::LineCompleted,
            pb::EndReason::BoardFull => EndReason::BoardFull,
            pb::EndReason::Repetition => EndReason::Repetition,
            pb::EndReason::DiscCount => EndReason::DiscCount,
            pb::EndReason::RaceFinished => EndReason::RaceFinished,
            pb::EndReason::Connection => EndReason::Connection,
            pb::EndReason::Resignation => EndReason::Resignation,
            pb::EndReason::Timeout => EndReason::Timeout,
            pb::EndReason::Agreement => EndReason::Agreement,
            pb::EndReason::Aborted => EndReason::Aborted,
            pb::EndReason::Abandoned => EndReason::Abandoned,
            pb::EndReason::Checkmate => EndReason::Checkmate,
            pb::EndReason::Stalemate => EndReason::Stalemate,
            pb::EndReason::InsufficientMaterial => EndReason::InsufficientMaterial,
            pb::EndReason::ThreefoldRepetition => EndReason::ThreefoldRepetition,
            pb::EndReason::FiftyMoves => EndReason::FiftyMoves,
            pb::EndReason::FivefoldRepetition => EndReason::FivefoldRepetition,
            pb::EndReason::SeventyFiveMoves => EndReason::SeventyFiveMoves,
            pb::EndReason::Unspecified => {
                return Err(FieldError::invalid(
                    field,
                    format!("{reason} is not an EndReason"),
                ));
            }
        },
    )
}

/// A result and why the game ended, on the wire; `None` is no result.
pub fn outcome_to_proto(outcome: Option<&Outcome>, reason: EndReason) -> pb::Outcome {
    let kind = match outcome {
        Some(Outcome::Win { seat, line }) => pb::outcome::Kind::Win(pb::Win {
            seat: seat.0.into(),
            line: line.iter().copied().map(cell_to_proto).collect(),
        }),
        Some(Outcome::Draw) => pb::outcome::Kind::Draw(pb::Draw {}),
        None => pb::outcome::Kind::NoResult(pb::NoResult {}),
    };
    pb::Outcome {
        kind: Some(kind),
        reason: end_reason_to_proto(reason) as i32,
    }
}

/// An outcome from the wire; `None` is no result. The reason is the
/// caller's to read.
pub(in crate::proto) fn outcome_from_proto(
    outcome: &pb::Outcome,
) -> Result<Option<Outcome>, FieldError> {
    match &outcome.kind {
        None => Err(FieldError::invalid(
            "outcome",
            "an outcome kind is required",
        )),
        Some(pb::outcome::Kind::NoResult(_)) => Ok(None),
        Some(pb::outcome::Kind::Draw(_)) => Ok(Some(Outcome::Draw)),
        Some(pb::outcome::Kind::Win(w)) => Ok(Some(Outcome::Win {
            seat: seat_from_proto(w.seat, "outcome.win.seat")?,
            line: w
                .line
                .iter()
                .map(|c| cell_from_proto(Some(c), "outcome.win.line"))
                .collect::<Result<_, _>>()?,
        })),
    }
}
