//! Moves on the wire: cells, the move kinds, dice rolls, actions and seat
//! numbers.

use super::rules::jump_to_proto;
use super::{FieldError, enum_field};
use crate::game::Action;
use crate::proto::{self as pb, ErrorReason};
use crate::rules::chess::MoveText;
use crate::rules::{Coord, Forfeit, Move, Position, Roll, Seat};

/// A cell on the wire.
pub fn cell_to_proto(at: Coord) -> pb::Cell {
    pb::Cell {
        row: at.row as i32,
        col: at.col as i32,
    }
}

pub(in crate::proto) fn cell_from_proto(
    cell: Option<&pb::Cell>,
    field: &str,
) -> Result<Coord, FieldError> {
    let cell = cell.ok_or_else(|| FieldError::invalid(field, "a cell is required"))?;
    coord(cell.row, cell.col, field)
}

fn coord(row: i32, col: i32, field: &str) -> Result<Coord, FieldError> {
    let side = |value: i32, name: &str| {
        u32::try_from(value).map_err(|_| {
            FieldError::new(
                format!("{field}.{name}"),
                format!("{name} {value} is off the board"),
                ErrorReason::OutOfBounds,
            )
        })
    };
    Ok(Coord::new(side(row, "row")?, side(col, "col")?))
}

/// A move on the wire.
pub fn move_to_proto(mv: Move) -> pb::Move {
    let kind = match mv {
        Move::Place(at) => pb::r#move::Kind::Place(pb::Place {
            row: at.row as i32,
            col: at.col as i32,
            mark: None,
        }),
        Move::PlaceMark { at, mark } => pb::r#move::Kind::Place(pb::Place {
            row: at.row as i32,
            col: at.col as i32,
            mark: Some(mark.0.into()),
        }),
        Move::Drop { column } => pb::r#move::Kind::Drop(pb::Drop {
            column: column as i32,
        }),
        Move::Pop { column } => pb::r#move::Kind::Pop(pb::Pop {
            column: column as i32,
        }),
        Move::Roll => pb::r#move::Kind::Roll(pb::RollDice {}),
        Move::Swap => pb::r#move::Kind::Swap(pb::Swap {}),
        Move::Chess(mv) => pb::r#move::Kind::Chess(pb::ChessMove {
            text: mv.to_string(),
        }),
        Move::ChessText(text) => pb::r#move::Kind::Chess(pb::ChessMove {
            text: text.as_str().to_owned(),
        }),
    };
    pb::Move { kind: Some(kind) }
}

/// A move of `position` on the wire: as [`move_to_proto`], except that a
/// chess move is written in the position's UCI (standard castling as the
/// king's two-square move, `e1g1`).
pub fn move_on_position_to_proto(position: &Position, mv: Move) -> pb::Move {
    match (position, mv) {
        (Position::Chess(chess), Move::Chess(mv)) => pb::Move {
            kind: Some(pb::r#move::Kind::Chess(pb::ChessMove {
                text: chess.game().uci(mv),
            })),
        },
        _ => move_to_proto(mv),
    }
}

/// Checks the shape of a wire move (whether it is legal is the rules'
/// business, given the position).
///
/// # Errors
/// [`FieldError`]: the move or its kind is missing (INVALID_REQUEST), a
/// negative coordinate (OUT_OF_BOUNDS).
pub fn move_from_proto(mv: Option<&pb::Move>, field: &str) -> Result<Move, FieldError> {
    match mv.and_then(|m| m.kind.as_ref()) {
        None => Err(FieldError::invalid(
            field,
            "a move is required (place, drop, pop, roll, swap or chess)",
        )),
        Some(pb::r#move::Kind::Place(p)) => {
            let at = coord(p.row, p.col, &format!("{field}.place"))?;
            match p.mark {
                None => Ok(Move::Place(at)),
                Some(mark) => Ok(Move::PlaceMark {
                    at,
                    mark: seat_from_proto(mark, &format!("{field}.place.mark"))?,
                }),
            }
        }
        Some(pb::r#move::Kind::Drop(d)) => {
            column_from_proto(d.column, &format!("{field}.drop.column"))
                .map(|column| Move::Drop { column })
        }
        Some(pb::r#move::Kind::Pop(p)) => {
            column_from_proto(p.column, &format!("{field}.pop.column"))
                .map(|column| Move::Pop { column })
        }
        Some(pb::r#move::Kind::Roll(_)) => Ok(Move::Roll),
        Some(pb::r#move::Kind::Swap(_)) => Ok(Move::Swap),
        Some(pb::r#move::Kind::Chess(c)) => MoveText::new(&c.text)
            .map(Move::ChessText)
            .ok_or_else(|| {
                FieldError::new(
                    format!("{field}.chess.text"),
                    format!(
                        "{:?} is not a chess move: give UCI (e2e4) or SAN (Nf3) of 1 to {} ASCII characters",
                        c.text,
                        MoveText::MAX
                    ),
                    ErrorReason::InvalidMoveText,
                )
            }),
    }
}

/// A roll on the wire.
pub fn roll_to_proto(roll: &Roll) -> pb::RollResult {
    pb::RollResult {
        dice: roll.dice.clone(),
        from: roll.from,
        passed: roll.passed.clone(),
        jumps: roll.jumps.iter().map(|&j| jump_to_proto(j)).collect(),
        to: roll.to,
        sixes_before: roll.sixes_before,
        extra_turn: roll.extra_turn,
        forfeit: match roll.forfeit {
            None => pb::Forfeit::Unspecified,
            Some(Forfeit::Overshoot) => pb::Forfeit::Overshoot,
            Some(Forfeit::ThirdSix) => pb::Forfeit::ThirdSix,
        } as i32,
    }
}

fn column_from_proto(column: i32, field: &str) -> Result<u32, FieldError> {
    u32::try_from(column).map_err(|_| {
        FieldError::new(
            field,
            format!("column {column} is off the board"),
            ErrorReason::OutOfBounds,
        )
    })
}

/// An action from the wire.
///
/// # Errors
/// [`FieldError`] naming `action` when it is unspecified or unknown.
pub fn action_from_proto(action: i32) -> Result<Action, FieldError> {
    Ok(
        match enum_field(action, "action", ErrorReason::InvalidRequest)? {
            pb::Action::Resign => Action::Resign,
            pb::Action::Abort => Action::Abort,
            pb::Action::OfferDraw => Action::OfferDraw,
            pb::Action::AcceptDraw => Action::AcceptDraw,
            pb::Action::DeclineDraw => Action::DeclineDraw,
            pb::Action::RequestTakeback => Action::RequestTakeback,
            pb::Action::AcceptTakeback => Action::AcceptTakeback,
            pb::Action::DeclineTakeback => Action::DeclineTakeback,
            pb::Action::ClaimDraw => Action::ClaimDraw,
            pb::Action::Unspecified => {
                return Err(FieldError::invalid(
                    "action",
                    format!("{action} is not an action: give one of the Action values"),
                ));
            }
        },
    )
}

/// A seat number from the wire.
///
/// # Errors
/// [`FieldError`] when it is over 255 (no table has that many seats).
pub fn seat_from_proto(seat: u32, field: &str) -> Result<Seat, FieldError> {
    u8::try_from(seat)
        .map(Seat)
        .map_err(|_| FieldError::invalid(field, format!("seat {seat} is not at this table")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_coordinates_are_out_of_bounds_with_the_field_named() {
        let mv = pb::Move {
            kind: Some(pb::r#move::Kind::Place(pb::Place {
                row: -1,
                col: 0,
                mark: None,
            })),
        };
        let err = move_from_proto(Some(&mv), "move").unwrap_err();
        assert_eq!(
            (err.field.as_str(), err.reason),
            ("move.place.row", ErrorReason::OutOfBounds)
        );
        assert_eq!(
            move_from_proto(None, "move").unwrap_err().reason,
            ErrorReason::InvalidRequest
        );
    }
}
