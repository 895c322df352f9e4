//! Reading SAN (Standard Algebraic Notation, FIDE Laws Appendix C) the way
//! PGN readers do: the move is matched against the legal moves, so a text
//! that fits none is illegal and one that fits several is ambiguous, each
//! said apart (a PGN's movetext is written by many programs, some of them
//! loose: `0-0` for `O-O`, `e8Q` for `e8=Q`, a missing `+`, an unneeded
//! disambiguation are all read).

use cozy_chess::{File, Move, Piece, Rank, Square};

use super::{ChessGame, ChessMove};

/// Why a SAN move was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SanError {
    /// The text is not SAN at all.
    #[error("{0:?} is not SAN (like Nf3, exd5, e8=Q or O-O)")]
    NotSan(String),
    /// No legal move fits it.
    #[error("{0} is not a legal move here")]
    Illegal(String),
    /// Several legal moves fit it (their UCI is given): it needs the file
    /// or rank of the piece that moves.
    #[error("{san} is ambiguous: it fits {}", .candidates.join(", "))]
    Ambiguous {
        /// The move as given.
        san: String,
        /// The legal moves it fits, in UCI.
        candidates: Vec<String>,
    },
}

/// What a SAN text says of its move.
enum Pattern {
    /// Castling, short (`O-O`) or long (`O-O-O`).
    Castle { long: bool },
    /// A piece (or pawn) moving to `to`, maybe from a given file and rank,
    /// maybe promoting.
    Move {
        piece: Piece,
        from_file: Option<File>,
        from_rank: Option<Rank>,
        to: Square,
        promotion: Option<Piece>,
    },
}

/// The legal move of `game` that `text` names.
pub(super) fn parse(game: &ChessGame, text: &str) -> Result<ChessMove, SanError> {
    let pattern = pattern(text).ok_or_else(|| SanError::NotSan(text.to_owned()))?;
    let board = &game.board;
    let us = board.side_to_move();
    // Castling is the king's move onto its own rook.
    let castles = |mv: &Move| board.color_on(mv.to) == Some(us);
    let fits = |mv: &Move| match &pattern {
        Pattern::Castle { long } => {
            let rights = board.castle_rights(us);
            let rook = if *long { rights.long } else { rights.short };
            castles(mv)
                && board.piece_on(mv.from) == Some(Piece::King)
                && Some(mv.to.file()) == rook
        }
        Pattern::Move {
            piece,
            from_file,
            from_rank,
            to,
            promotion,
        } => {
            !castles(mv)
                && board.piece_on(mv.from) == Some(*piece)
                && mv.to == *to
                && mv.promotion == *promotion
                && from_file.is_none_or(|file| mv.from.file() == file)
                && from_rank.is_none_or(|rank| mv.from.rank() == rank)
        }
    };
    let mut found: Vec<ChessMove> = game
        .legal_moves()
        .into_iter()
        .filter(|mv| fits(&mv.0))
        .collect();
    match found.len() {
        0 => Err(SanError::Illegal(text.to_owned())),
        1 => Ok(found.remove(0)),
        _ => Err(SanError::Ambiguous {
            san: text.to_owned(),
            candidates: found.iter().map(|&mv| game.uci(mv)).collect(),
        }),
    }
}

/// What `text` says, `None` when it is not SAN.
fn pattern(text: &str) -> Option<Pattern> {
    // Check, mate and annotation marks say nothing of the move.
    let text = text.trim_end_matches(['+', '#', '!', '?']);
    match text {
        "O-O" | "0-0" => return Some(Pattern::Castle { long: false }),
        "O-O-O" | "0-0-0" => return Some(Pattern::Castle { long: true }),
        _ => {}
    }
    let mut chars: Vec<char> = text.chars().collect();
    let piece = match chars.first()? {
        'K' => Piece::King,
        'Q' => Piece::Queen,
        'R' => Piece::Rook,
        'B' => Piece::Bishop,
        'N' => Piece::Knight,
        'a'..='h' => Piece::Pawn,
        _ => return None,
    };
    if piece != Piece::Pawn {
        chars.remove(0);
    }
    let promotion = match chars.last()? {
        'Q' => Some(Piece::Queen),
        'R' => Some(Piece::Rook),
        'B' => Some(Piece::Bishop),
        'N' => Some(Piece::Knight),
        _ => None,
    };
    if promotion.is_some() {
        if piece != Piece::Pawn {
            return None;
        }
        chars.pop();
        if chars.last() == Some(&'=') {
            chars.pop();
        }
    }
    let rank = Rank::try_from(chars.pop()?).ok()?;
    let file = File::try_from(chars.pop()?).ok()?;
    let to = Square::new(file, rank);
    if chars.last() == Some(&'x') {
        chars.pop();
    }
    let (from_file, from_rank) = match chars.as_slice() {
        [] => (None, None),
        [c] => match (File::try_from(*c), Rank::try_from(*c)) {
            (Ok(file), _) => (Some(file), None),
            (_, Ok(rank)) => (None, Some(rank)),
            _ => return None,
        },
        [f, r] => (
            Some(File::try_from(*f).ok()?),
            Some(Rank::try_from(*r).ok()?),
        ),
        _ => return None,
    };
    Some(Pattern::Move {
        piece,
        from_file,
        from_rank,
        to,
        promotion,
    })
}
