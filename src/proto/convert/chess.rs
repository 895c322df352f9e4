//! Chess on the wire: its rules, its position, and what a move recorded
//! (`ChessRules`, `ChessPosition`, `ChessMovePlayed`).

use super::{FieldError, end_reason_to_proto, enum_field};
use crate::proto::{self as pb, ErrorReason};
use crate::rules::chess::{
    ChessMove, ChessPlayed, ChessPosition, ChessRules, ChessVariant, DrawRule, PieceKind, Side,
};
use crate::rules::{EndReason, Game, Move};

/// Chess rules on the wire: the start's FEN when it is not the standard
/// start.
pub(super) fn chess_rules_to_proto(rules: &ChessRules) -> pb::ChessRules {
    pb::ChessRules {
        variant: match rules.variant() {
            ChessVariant::Standard => pb::ChessVariant::Standard,
            ChessVariant::Chess960 => pb::ChessVariant::Chess960,
        } as i32,
        fen: rules.fen().unwrap_or_default().to_owned(),
        chess960_start: None,
        draw_rule: match rules.draws() {
            DrawRule::Claimed => pb::DrawRule::Claimed,
            DrawRule::Automatic => pb::DrawRule::Automatic,
        } as i32,
    }
}

/// Chess rules from the wire.
///
/// # Errors
/// [`FieldError`] with [`ErrorReason::InvalidRules`] naming
/// `rules.chess.<field>`.
pub(super) fn chess_rules_from_proto(rules: &pb::ChessRules) -> Result<ChessRules, FieldError> {
    let variant = match enum_field(
        rules.variant,
        "rules.chess.variant",
        ErrorReason::InvalidRules,
    )? {
        pb::ChessVariant::Unspecified | pb::ChessVariant::Standard => ChessVariant::Standard,
        pb::ChessVariant::Chess960 => ChessVariant::Chess960,
    };
    let draws = match enum_field(
        rules.draw_rule,
        "rules.chess.draw_rule",
        ErrorReason::InvalidRules,
    )? {
        pb::DrawRule::Unspecified | pb::DrawRule::Claimed => DrawRule::Claimed,
        pb::DrawRule::Automatic => DrawRule::Automatic,
    };
    let fen = Some(rules.fen.trim()).filter(|fen| !fen.is_empty());
    ChessRules::new(variant, fen, rules.chess960_start, draws).map_err(|e| {
        FieldError::new(
            format!("rules.chess.{}", e.field),
            e.why,
            ErrorReason::InvalidRules,
        )
    })
}

/// A chess position on the wire; its pieces and text rows only when
/// `full`. The side to move is left out once the game is over.
pub(super) fn chess_position_to_proto(
    rules: &ChessRules,
    position: &ChessPosition,
    over: bool,
    full: bool,
) -> pb::ChessPosition {
    let game = position.game();
    pb::ChessPosition {
        fen: game.fen(),
        side_to_move: if over {
            pb::ChessSide::Unspecified
        } else {
            side_to_proto(game.side_to_move())
        } as i32,
        castling_rights: game.castling_rights(),
        en_passant_square: game.en_passant_square().unwrap_or_default(),
        halfmove_clock: game.halfmove_clock(),
        fullmove_number: game.fullmove_number(),
        in_check: game.in_check(),
        claimable_draw: match rules.claimable_draw(position) {
            Some(reason) if !over => end_reason_to_proto(reason),
            _ => pb::EndReason::Unspecified,
        } as i32,
        pieces: if full {
            game.pieces()
                .into_iter()
                .map(|(square, side, kind)| pb::ChessPiece {
                    square,
                    side: side_to_proto(side) as i32,
                    kind: piece_kind_to_proto(kind) as i32,
                })
                .collect()
        } else {
            Vec::new()
        },
        text: if full { game.board_rows() } else { Vec::new() },
    }
}

/// What a chess move did, on the wire.
pub(in crate::proto) fn chess_played_to_proto(chess: &ChessPlayed) -> pb::ChessMovePlayed {
    pb::ChessMovePlayed {
        uci: chess.uci.clone(),
        san: chess.san.clone(),
        captured: chess
            .captured
            .map_or(pb::ChessPieceKind::Unspecified, piece_kind_to_proto) as i32,
        check: chess.check,
    }
}

/// A stored chess move: its squares (`move.chess.text`, as events record
/// them: castling as king takes rook) and what it did (`chess`), with the
/// reason it ended the game (`end`) from the event's outcome.
///
/// # Errors
/// [`FieldError`] naming what is missing or unreadable.
pub(in crate::proto) fn chess_played_from_proto(
    mv: Move,
    chess: Option<&pb::ChessMovePlayed>,
    end: Option<EndReason>,
    field: &str,
) -> Result<(Move, Box<ChessPlayed>), FieldError> {
    let squares = match mv {
        Move::ChessText(text) => ChessMove::try_from(text.as_str().to_owned())
            .map_err(|why| FieldError::invalid(format!("{field}.move.chess.text"), why))?,
        Move::Chess(mv) => mv,
        _ => {
            return Err(FieldError::invalid(
                format!("{field}.move"),
                "a chess move's facts on a move that is not chess",
            ));
        }
    };
    let chess = chess.ok_or_else(|| {
        FieldError::invalid(format!("{field}.chess"), "a chess move without its facts")
    })?;
    let captured = match enum_field(
        chess.captured,
        &format!("{field}.chess.captured"),
        ErrorReason::InvalidRequest,
    )? {
        pb::ChessPieceKind::Unspecified => None,
        pb::ChessPieceKind::Pawn => Some(PieceKind::Pawn),
        pb::ChessPieceKind::Knight => Some(PieceKind::Knight),
        pb::ChessPieceKind::Bishop => Some(PieceKind::Bishop),
        pb::ChessPieceKind::Rook => Some(PieceKind::Rook),
        pb::ChessPieceKind::Queen => Some(PieceKind::Queen),
        pb::ChessPieceKind::King => Some(PieceKind::King),
    };
    Ok((
        Move::Chess(squares),
        Box::new(ChessPlayed {
            uci: chess.uci.clone(),
            san: chess.san.clone(),
            captured,
            check: chess.check,
            end,
        }),
    ))
}

fn side_to_proto(side: Side) -> pb::ChessSide {
    match side {
        Side::White => pb::ChessSide::White,
        Side::Black => pb::ChessSide::Black,
    }
}

fn piece_kind_to_proto(kind: PieceKind) -> pb::ChessPieceKind {
    match kind {
        PieceKind::Pawn => pb::ChessPieceKind::Pawn,
        PieceKind::Knight => pb::ChessPieceKind::Knight,
        PieceKind::Bishop => pb::ChessPieceKind::Bishop,
        PieceKind::Rook => pb::ChessPieceKind::Rook,
        PieceKind::Queen => pb::ChessPieceKind::Queen,
        PieceKind::King => pb::ChessPieceKind::King,
    }
}
