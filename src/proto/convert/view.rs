//! A game as a reply shows it: the position (board, clocks, offers) and,
//! in the full view, the configuration it was created with.

use super::chess::chess_position_to_proto;
use super::{
    FieldError, absence_to_proto, duration, enum_field, outcome_to_proto, rules_to_proto,
    seat_to_proto, time_control_to_proto, timestamp, undo_policy_to_proto,
};
use crate::game::{GameState, GameStatus, Offer};
use crate::proto::{self as pb, ErrorReason};
use crate::rules::{Coord, Position, RuleSet, Seat};

/// Boards with at most this many cells have their pieces read off the board
/// itself rather than off the moves played.
pub const MAX_SCAN_CELLS: u64 = 4096;

/// Boards with at most this many cells also travel as text rows.
pub const MAX_TEXT_CELLS: u64 = 1024;

/// A game status on the wire.
pub fn status_to_proto(status: GameStatus) -> pb::GameStatus {
    match status {
        GameStatus::InProgress => pb::GameStatus::InProgress,
        GameStatus::Won => pb::GameStatus::Won,
        GameStatus::Drawn => pb::GameStatus::Drawn,
        GameStatus::NoResult => pb::GameStatus::NoResult,
    }
}

/// A pending offer on the wire.
fn offer_to_proto(offer: &Offer) -> pb::PendingOffer {
    pb::PendingOffer {
        by: offer.by.0.into(),
        agreed: (0..)
            .zip(&offer.agreed)
            .filter(|(_, agreed)| **agreed)
            .map(|(seat, _)| seat)
            .collect(),
    }
}

/// The clocks of `state` on the wire, `None` when it is untimed.
fn clocks_to_proto(state: &GameState) -> Option<pb::Clocks> {
    state.config().time_control()?;
    let clocks = state.clocks();
    Some(pb::Clocks {
        remaining: clocks.remaining_ms.iter().map(|ms| duration(*ms)).collect(),
        turn_started: Some(timestamp(clocks.turn_started)),
        deadline: state.deadline().map(timestamp),
    })
}

/// The board of `state`, sparse. Pieces are read off the board itself when
/// it has at most [`MAX_SCAN_CELLS`] cells or its pieces can move (Pop Out);
/// on larger boards where pieces stay put they come from the moves on the
/// board, so the cost is O(moves), not O(cells). The text rows
/// are drawn only for boards of at most [`MAX_TEXT_CELLS`] cells.
pub fn board_to_proto(state: &GameState) -> pb::Board {
    let Some(board) = state.position().board() else {
        return pb::Board::default();
    };
    let scan = board.cells() <= MAX_SCAN_CELLS || !state.config().rules().pieces_stay_put();
    let pieces: Vec<(Coord, Seat)> = if scan {
        board.pieces().collect()
    } else {
        let mut pieces: Vec<_> = state
            .moves()
            .iter()
            .filter_map(|m| Some((m.placement?, m.mv.piece(m.seat))))
            .collect();
        pieces.sort_unstable_by_key(|(at, _)| *at);
        pieces
    };
    let text = if board.cells() <= MAX_TEXT_CELLS {
        state.render()
    } else {
        Vec::new()
    };
    pb::Board {
        rows: board.rows(),
        cols: board.cols(),
        pieces: pieces
            .into_iter()
            .map(|(at, seat)| pb::Piece {
                row: at.row as i32,
                col: at.col as i32,
                seat: seat.0.into(),
            })
            .collect(),
        text,
    }
}

/// The position of `state` on the wire.
pub fn position_to_proto(state: &GameState) -> pb::Position {
    position_in_view(state, View::Full)
}

/// How much of a game a reply carries (`plylog.v1.GameView`, AIP-157).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    /// No configuration and no board: O(1) in the board's size.
    #[default]
    Basic,
    /// Everything.
    Full,
}

/// Reads a write's `view` (unspecified: [`View::Basic`]).
///
/// # Errors
/// An unknown enum number, as INVALID_ARGUMENT on `field`.
pub fn view_from_proto(view: i32, field: &str) -> Result<View, FieldError> {
    Ok(
        match enum_field(view, field, ErrorReason::InvalidRequest)? {
            pb::GameView::Unspecified | pb::GameView::Basic => View::Basic,
            pb::GameView::Full => View::Full,
        },
    )
}

/// The position of `state`; its board only in the full view.
fn position_in_view(state: &GameState, view: View) -> pb::Position {
    pb::Position {
        sequence: state.sequence(),
        ply: state.moves().len() as u32,
        status: status_to_proto(state.status()) as i32,
        seat_to_move: state.to_move().map(|s| s.0.into()),
        outcome: state
            .end_reason()
            .map(|reason| outcome_to_proto(state.outcome(), reason)),
        board: (view == View::Full).then(|| board_to_proto(state)),
        squares: state.position().squares().to_vec(),
        clocks: clocks_to_proto(state),
        seats_out: (0..state.config().seats().len() as u32)
            .filter(|s| state.is_out(Seat(*s as u8)))
            .collect(),
        draw_offer: state.draw_offer().map(offer_to_proto),
        takeback_request: state.takeback_request().map(offer_to_proto),
        redoable: state.undone().len() as u32,
        round: state.round(),
        rematch: state.rematch().map(|(seat, rotate)| pb::RematchRequested {
            seat: seat.0.into(),
            rotate,
        }),
        // Presence is the shell's: the actor fills it in.
        seats_present: Vec::new(),
        chess: match (state.config().rules(), state.position()) {
            (RuleSet::Chess(rules), Position::Chess(position)) => Some(chess_position_to_proto(
                rules,
                position,
                state.to_move().is_none(),
                view == View::Full,
            )),
            _ => None,
        },
    }
}

/// A game view: configuration plus the position of `state`, all of it.
pub fn game_to_proto(
    game_id: &str,
    state: &GameState,
    created_at_ms: i64,
    last_sequence: u64,
) -> pb::Game {
    game_in_view(game_id, state, created_at_ms, last_sequence, View::Full)
}

/// The game of `state` as `view` shows it: the full view is
/// [`game_to_proto`]'s; the basic view leaves out the configuration and the
/// board (see `plylog.v1.GameView`).
pub fn game_in_view(
    game_id: &str,
    state: &GameState,
    created_at_ms: i64,
    last_sequence: u64,
    view: View,
) -> pb::Game {
    let position = Some(position_in_view(state, view));
    let game = pb::Game {
        game_id: game_id.to_owned(),
        position,
        created_at: Some(timestamp(created_at_ms)),
        last_sequence,
        ..pb::Game::default()
    };
    match view {
        View::Basic => game,
        View::Full => {
            let config = state.config();
            pb::Game {
                rules: Some(rules_to_proto(config.rules())),
                seats: config.seats().iter().map(seat_to_proto).collect(),
                undo_policy: undo_policy_to_proto(config.undo_policy()) as i32,
                time_control: config.time_control().map(time_control_to_proto),
                absence: config.absence().map(absence_to_proto),
                labels: config.labels().clone(),
                ..game
            }
        }
    }
}
