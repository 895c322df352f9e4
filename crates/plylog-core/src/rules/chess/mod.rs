//! Chess, as the FIDE Laws of Chess (2023) define its moves and endings,
//! and Chess960 (the Laws' Guidelines II): positions from the start or a
//! FEN, moves in UCI and SAN, and every way a game ends by rule.
//!
//! Legal moves come from `cozy-chess` (MIT), a maintained move generator
//! whose positions keep about what a FEN keeps; this file adds the game's
//! history (for repetitions), the endings and the text forms. Everything
//! here is checked against an independent implementation, python-chess
//! (GPL-3.0; only its output is used: `scripts/chess_traces.py` writes the
//! traces `tests/rules/chess.rs` replays), and against published perft
//! counts.
//!
//! # Endings (FIDE Laws)
//! - 5.1.1 checkmate, 5.2.1 stalemate;
//! - 5.2.2 a dead position, in the simple cases python-chess and lichess
//!   recognise ([`ChessGame::insufficient_material`]);
//! - 9.6.1 the same position a fifth time and 9.6.2 seventy-five moves of
//!   each side without a capture or a pawn move end the game at once (a
//!   checkmate on the 75th move stands);
//! - 9.2 threefold repetition and 9.3 fifty moves are draws a player
//!   claims, either on the position as it stands or, before playing it,
//!   with the move that makes it (9.2.1.1, 9.3.1):
//!   [`ChessGame::claimable_draw`] and [`ChessGame::claimable_draw_with`].
//!
//! Repetitions count the game's first position too, also when it was
//! given as a FEN: positions before it are not known, so they do not
//! count. Two positions are the same (9.2.2) when the same pieces stand on
//! the same squares with the same side to move, the same castling rights
//! and the same en passant capture possible (an en passant square no pawn
//! can legally take on does not count).
//!
//! # Text forms
//! - UCI: `e2e4`, `e7e8q`; castling as the king's two-square move in
//!   standard chess (`e1g1`, also read as king takes own rook, `e1h1`),
//!   and as king takes own rook in Chess960, where the two can differ.
//! - SAN (the Laws' Appendix C): `Nf3`, `exd6`, `e8=Q+`, `O-O`; read
//!   leniently as PGN readers do (`0-0`, no `=`, missing or extra `+`/`#`,
//!   an unneeded disambiguation), written canonically.
//! - FEN: X-FEN's `KQkq` in standard chess, Shredder-FEN's rook files in
//!   Chess960; the en passant square only when a capture there is legal
//!   (as python-chess writes it).

pub mod pgn;
mod rules;
mod san;
#[cfg(test)]
mod tests;

use std::fmt;

use cozy_chess::{BitBoard, Board, Color, File, GameStatus, Move, Piece, Rank, Square};

pub use rules::{ChessPlayed, ChessPosition, ChessRules, DrawRule, MoveText};
pub use san::SanError;

/// Which chess: the standard start and castling, or Chess960's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ChessVariant {
    /// Standard chess.
    Standard,
    /// Chess960 (Fischer random chess): one of 960 back ranks, castling
    /// to the standard king and rook squares from wherever they start.
    Chess960,
}

/// A move of a [`ChessGame`]: from a square to a square, with the piece a
/// pawn promotes to. Castling is the king's move onto its own rook's
/// square (Chess960's convention, which covers standard chess too). Its
/// text forms depend on the position: [`ChessGame::uci`],
/// [`ChessGame::san`].
///
/// Serialized as its squares and promotion (`e2e4`, `e7e8q`, castling
/// `e1h1`): see its `Display`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct ChessMove(Move);

impl From<ChessMove> for String {
    fn from(mv: ChessMove) -> String {
        mv.to_string()
    }
}

impl TryFrom<String> for ChessMove {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        text.parse::<Move>()
            .map(ChessMove)
            .map_err(|_| format!("{text:?} is not a chess move's squares"))
    }
}

/// A side of the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Side {
    /// White, who moves first from the standard start.
    White,
    /// Black.
    Black,
}

/// What a piece is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum PieceKind {
    /// A pawn.
    Pawn,
    /// A knight.
    Knight,
    /// A bishop.
    Bishop,
    /// A rook.
    Rook,
    /// A queen.
    Queen,
    /// A king.
    King,
}

/// How a game ended by rule, at once (no claim needed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChessEnding {
    /// The side to move is checkmated (5.1.1): the other side wins.
    Checkmate,
    /// The side to move has no legal move and is not in check (5.2.1).
    Stalemate,
    /// Neither side can checkmate by any series of legal moves, in the
    /// simple cases (5.2.2; see [`ChessGame::insufficient_material`]).
    InsufficientMaterial,
    /// The same position for the fifth time (9.6.1).
    FivefoldRepetition,
    /// Seventy-five moves of each side with no capture and no pawn move
    /// (9.6.2).
    SeventyFiveMoves,
}

/// A draw a player may claim (9.2, 9.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DrawClaim {
    /// The same position for the third time.
    ThreefoldRepetition,
    /// Fifty moves of each side with no capture and no pawn move.
    FiftyMoves,
}

/// Why a FEN or a start was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChessSetupError {
    /// The FEN does not parse, or describes an impossible position (no
    /// king, the side not to move in check, a pawn on a back rank, ...):
    /// the parser's reason.
    #[error("invalid FEN: {0}")]
    Fen(String),
    /// Castling rights standard chess does not have (a king off e1/e8, a
    /// castling rook off the a- and h-files): a Chess960 position. The
    /// rights as read.
    #[error(
        "castling rights {0}: standard chess castles a king on e1/e8 with a rook on the a- or h-file (this is a Chess960 position)"
    )]
    Chess960Castling(String),
    /// A Chess960 start numbered outside 0 to 959.
    #[error("Chess960 start {0}: the starts are numbered 0 to 959")]
    NoSuchStart(u32),
}

/// Why a move was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChessMoveError {
    /// The text is not a UCI move (`e2e4`, `e7e8q`).
    #[error("{0:?} is not a UCI move (like e2e4 or e7e8q)")]
    NotUci(String),
    /// A SAN move that is not well formed, not legal, or ambiguous.
    #[error(transparent)]
    San(#[from] SanError),
    /// A move (from UCI) that is not legal in the position: why, in words.
    #[error("{uci} is not legal: {why}")]
    Illegal {
        /// The move as given.
        uci: String,
        /// Why not, in words.
        why: &'static str,
    },
    /// The game has ended by rule: no more moves.
    #[error("the game has ended ({0:?})")]
    Ended(ChessEnding),
}

/// A chess game: its position and the positions since the last capture,
/// pawn move or loss of a castling right (those a later position can
/// repeat), with its variant. Moves are played with [`ChessGame::play`];
/// a move is taken back by keeping the game before it (a `ChessGame` is a
/// value: clone it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChessGame {
    variant: ChessVariant,
    board: Board,
    /// The positions that may repeat, oldest first, the current one last:
    /// at most 151 (the 75-move rule ends a game before more).
    repeatable: Vec<Board>,
    /// Halfmoves since the last capture or pawn move.
    halfmove_clock: u32,
}

/// What [`ChessGame::take_back`] needs to take a move back: the halfmove
/// clock before it and, when it made earlier positions unrepeatable, those
/// positions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChessUndo {
    halfmove_clock: u32,
    forgotten: Option<Vec<Board>>,
}

impl ChessUndo {
    /// The heap memory it holds, in bytes.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.forgotten
            .as_ref()
            .map_or(0, |boards| boards.capacity() * std::mem::size_of::<Board>())
    }
}

/// The halfmove clock at which the 75-move rule ends a game (9.6.2).
const SEVENTY_FIVE_MOVES: u32 = 150;

/// The halfmove clock from which the fifty-move rule can be claimed (9.3).
const FIFTY_MOVES: u32 = 100;

impl ChessGame {
    /// A game of `variant` from the standard start (for Chess960: start
    /// 518, which is the standard one).
    pub fn new(variant: ChessVariant) -> Self {
        Self::at(variant, Board::default())
    }

    /// A Chess960 game from start `number` (0 to 959, Scharnagl's
    /// numbering; 518 is the standard start).
    ///
    /// # Errors
    /// [`ChessSetupError::NoSuchStart`].
    pub fn chess960(number: u32) -> Result<Self, ChessSetupError> {
        if number >= 960 {
            return Err(ChessSetupError::NoSuchStart(number));
        }
        Ok(Self::at(
            ChessVariant::Chess960,
            Board::chess960_startpos(number),
        ))
    }

    /// A game of `variant` from the position `fen` (X-FEN or
    /// Shredder-FEN castling rights; the move counters may be left out,
    /// as EPD does: 0 and 1).
    ///
    /// A position that has already ended by rule is accepted: see
    /// [`ChessGame::ending`].
    ///
    /// # Errors
    /// [`ChessSetupError::Fen`] for a FEN that does not parse or an
    /// impossible position.
    pub fn from_fen(variant: ChessVariant, fen: &str) -> Result<Self, ChessSetupError> {
        let mut fields: Vec<&str> = fen.split_whitespace().collect();
        if fields.len() == 4 {
            fields.extend(["0", "1"]);
        }
        // The move generator keeps the clock only up to 100 (all it needs
        // to know of the fifty-move rule); the game keeps it whole.
        let halfmove_clock = match fields.get(4) {
            Some(clock) => clock
                .parse::<u32>()
                .ok()
                .filter(|&clock| clock <= SEVENTY_FIVE_MOVES)
                .ok_or_else(|| {
                    ChessSetupError::Fen(format!(
                        "the halfmove clock {clock:?} is not a number from 0 to {SEVENTY_FIVE_MOVES}"
                    ))
                })?,
            None => 0,
        };
        let capped = halfmove_clock.min(100).to_string();
        if let Some(clock) = fields.get_mut(4) {
            *clock = &capped;
        }
        let shredder = fields
            .get(2)
            .and_then(|rights| shredder_rights(fields[0], rights));
        if let Some(rights) = &shredder {
            fields[2] = rights;
        }
        let fen = fields.join(" ");
        let board = Board::from_fen(&fen, true).map_err(|e| ChessSetupError::Fen(e.to_string()))?;
        if variant == ChessVariant::Standard {
            standard_castling(&board)?;
        }
        let mut game = Self::at(variant, board);
        game.halfmove_clock = halfmove_clock;
        Ok(game)
    }

    fn at(variant: ChessVariant, board: Board) -> Self {
        ChessGame {
            variant,
            repeatable: vec![board.clone()],
            halfmove_clock: u32::from(board.halfmove_clock()),
            board,
        }
    }

    /// The variant.
    pub fn variant(&self) -> ChessVariant {
        self.variant
    }

    /// The side to move.
    pub fn side_to_move(&self) -> Side {
        side(self.board.side_to_move())
    }

    /// The piece on `square` (`"e4"`), with its side; `None` for an empty
    /// square or a name that is not a square.
    pub fn piece_on(&self, square: &str) -> Option<(Side, PieceKind)> {
        let square: Square = square.parse().ok()?;
        Some((
            side(self.board.color_on(square)?),
            kind(self.board.piece_on(square)?),
        ))
    }

    /// Every piece, as (square name, side, kind), from a1 to h8 rank by
    /// rank.
    pub fn pieces(&self) -> Vec<(String, Side, PieceKind)> {
        Square::ALL
            .iter()
            .filter_map(|&square| {
                let color = self.board.color_on(square)?;
                let piece = self.board.piece_on(square)?;
                Some((square.to_string(), side(color), kind(piece)))
            })
            .collect()
    }

    /// Whether the side to move is in check.
    pub fn in_check(&self) -> bool {
        !self.board.checkers().is_empty()
    }

    /// Moves since the last capture or pawn move, of either side (the
    /// halfmove clock: 100 is the fifty-move rule's fifty moves).
    pub fn halfmove_clock(&self) -> u32 {
        self.halfmove_clock
    }

    /// The number of the move being played: 1 at the start, counting up
    /// after each Black move.
    pub fn fullmove_number(&self) -> u32 {
        u32::from(self.board.fullmove_number())
    }

    /// The castling rights as X-FEN or Shredder-FEN write them (`KQkq`,
    /// `HAha` in Chess960), `-` for none.
    pub fn castling_rights(&self) -> String {
        let fen = self.board_fen();
        fen.split(' ').nth(2).unwrap_or("-").to_owned()
    }

    /// The square a pawn can take en passant on now (`"e3"`), `None` when
    /// no such capture is legal.
    pub fn en_passant_square(&self) -> Option<String> {
        effective_en_passant(&self.board).map(|square| square.to_string())
    }

    /// The legal moves, in no particular order.
    pub fn legal_moves(&self) -> Vec<ChessMove> {
        let mut moves = Vec::with_capacity(64);
        self.board.generate_moves(|piece_moves| {
            moves.extend(piece_moves.into_iter().map(ChessMove));
            false
        });
        moves
    }

    /// How many legal moves there are (perft's depth 1), without listing
    /// them.
    pub fn legal_move_count(&self) -> usize {
        let mut count = 0;
        self.board.generate_moves(|piece_moves| {
            count += piece_moves.len();
            false
        });
        count
    }

    /// The leaves of this position's tree of legal moves `depth` plies deep
    /// (perft, the Chess Programming Wiki's move-generation check: depth 1
    /// is the legal moves, depth 0 the position itself), walked with
    /// [`ChessGame::legal_moves`] and [`ChessGame::after`] as a game plays
    /// them, the last ply counted rather than played.
    pub fn perft(&self, depth: u32) -> u64 {
        match depth {
            0 => 1,
            1 => self.legal_move_count() as u64,
            _ => self
                .legal_moves()
                .into_iter()
                .map(|mv| self.after(mv).perft(depth - 1))
                .sum(),
        }
    }

    /// Whether `mv` is legal here.
    pub fn is_legal(&self, mv: ChessMove) -> bool {
        self.board.is_legal(mv.0)
    }

    /// Plays `mv`, a legal move of a game that has not ended.
    ///
    /// # Errors
    /// [`ChessMoveError::Ended`] once the game has ended by rule;
    /// [`ChessMoveError::Illegal`] for a move that is not legal here.
    pub fn play(&mut self, mv: ChessMove) -> Result<(), ChessMoveError> {
        if let Some(ending) = self.ending() {
            return Err(ChessMoveError::Ended(ending));
        }
        self.check_legal(mv)?;
        self.play_legal(mv, false);
        Ok(())
    }

    /// Whether `mv` is legal here, and if not, why.
    ///
    /// # Errors
    /// [`ChessMoveError::Illegal`], saying why in words.
    pub fn check_legal(&self, mv: ChessMove) -> Result<(), ChessMoveError> {
        if self.board.is_legal(mv.0) {
            Ok(())
        } else {
            Err(ChessMoveError::Illegal {
                uci: self.uci(mv),
                why: self.why_illegal(mv),
            })
        }
    }

    /// This game after `mv`, a move [`ChessGame::is_legal`] accepts
    /// (perft and search walk the tree with it; endings are not checked).
    ///
    /// # Panics
    /// When `mv` is not legal.
    pub fn after(&self, mv: ChessMove) -> ChessGame {
        let mut next = self.clone();
        next.play_legal(mv, false);
        next
    }

    /// Plays `mv`, a legal move; with `keep`, returns the positions it
    /// makes unrepeatable in the [`ChessUndo`] (a move taken back needs
    /// them), else drops them without giving up their room (a copy played
    /// on, as perft and [`ChessGame::after`] do, allocates nothing).
    fn play_legal(&mut self, mv: ChessMove, keep: bool) -> ChessUndo {
        let rights_before = self.castle_rights_both();
        let halfmove_clock = self.halfmove_clock;
        self.board.play(mv.0);
        if self.board.halfmove_clock() == 0 {
            self.halfmove_clock = 0;
        } else {
            self.halfmove_clock += 1;
        }
        let mut forgotten = None;
        if self.halfmove_clock == 0 || self.castle_rights_both() != rights_before {
            // Nothing before this move can be seen again.
            if keep {
                forgotten = Some(std::mem::take(&mut self.repeatable));
            } else {
                self.repeatable.clear();
            }
        }
        self.repeatable.push(self.board.clone());
        ChessUndo {
            halfmove_clock,
            forgotten,
        }
    }

    /// Plays `mv`, a legal move, and returns what [`ChessGame::take_back`]
    /// needs to take it back: O(1) both ways, as a search walks the tree.
    ///
    /// # Panics
    /// When `mv` is not legal.
    pub(crate) fn play_undoable(&mut self, mv: ChessMove) -> ChessUndo {
        assert!(self.board.is_legal(mv.0), "{mv} is not legal here");
        self.play_legal(mv, true)
    }

    /// Takes back the last move played with [`ChessGame::play_undoable`],
    /// given what it returned.
    pub(crate) fn take_back(&mut self, undo: ChessUndo) {
        self.repeatable.pop();
        if let Some(forgotten) = undo.forgotten {
            self.repeatable = forgotten;
        }
        self.board = self
            .repeatable
            .last()
            .expect("a game keeps its current position")
            .clone();
        self.halfmove_clock = undo.halfmove_clock;
    }

    /// The piece `mv`, a legal move, takes (a pawn, for en passant).
    pub fn captured(&self, mv: ChessMove) -> Option<PieceKind> {
        let Move { from, to, .. } = mv.0;
        let us = self.board.side_to_move();
        if self.board.color_on(to) == Some(!us) {
            return self.board.piece_on(to).map(kind);
        }
        let en_passant = self.board.piece_on(from) == Some(Piece::Pawn) && from.file() != to.file();
        en_passant.then_some(PieceKind::Pawn)
    }

    /// The board as eight lines of text, rank 8 first, a1 at the start of
    /// the last line: FEN's letters (`K` a white king, `p` a black pawn)
    /// and `.` for an empty square.
    pub fn board_rows(&self) -> Vec<String> {
        Rank::ALL
            .iter()
            .rev()
            .map(|&rank| {
                File::ALL
                    .iter()
                    .map(|&file| {
                        let square = Square::new(file, rank);
                        match (self.board.color_on(square), self.board.piece_on(square)) {
                            (Some(color), Some(piece)) => {
                                let letter: char = piece.into();
                                match color {
                                    Color::White => letter.to_ascii_uppercase(),
                                    Color::Black => letter,
                                }
                            }
                            _ => '.',
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// A 64-bit digest of the position (pieces, side to move, castling
    /// rights and en passant file): the move generator's Zobrist hash.
    pub fn digest(&self) -> u64 {
        self.board.hash()
    }

    /// The side to move's material less the other side's, in centipawns,
    /// with the classical values (Shannon 1950): pawn 100, knight and
    /// bishop 300, rook 500, queen 900 (kings not counted).
    pub fn material_balance(&self) -> i32 {
        const VALUES: [(Piece, i32); 5] = [
            (Piece::Pawn, 100),
            (Piece::Knight, 300),
            (Piece::Bishop, 300),
            (Piece::Rook, 500),
            (Piece::Queen, 900),
        ];
        let us = self.board.side_to_move();
        VALUES
            .iter()
            .map(|&(piece, value)| {
                let count = |color| self.board.colored_pieces(color, piece).len() as i32;
                value * (count(us) - count(!us))
            })
            .sum()
    }

    /// The heap memory the game holds, in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.repeatable.capacity() * std::mem::size_of::<Board>()
    }

    fn castle_rights_both(&self) -> [cozy_chess::CastleRights; 2] {
        [
            *self.board.castle_rights(Color::White),
            *self.board.castle_rights(Color::Black),
        ]
    }

    fn why_illegal(&self, mv: ChessMove) -> &'static str {
        let Move {
            from,
            to,
            promotion,
        } = mv.0;
        let us = self.board.side_to_move();
        if self.board.color_on(from) != Some(us) {
            return "the side to move has no piece on the square it moves from";
        }
        let promotes = self.board.piece_on(from) == Some(Piece::Pawn)
            && to.rank() == Rank::Eighth.relative_to(us);
        if promotes && promotion.is_none() {
            "a pawn reaching the last rank must promote (like e7e8q)"
        } else if !promotes && promotion.is_some() {
            "only a pawn reaching the last rank promotes"
        } else if self.in_check() {
            "the king is in check and the move does not end the check"
        } else {
            "the piece cannot move there (its way is blocked, it does not move that way, or the move would leave its king in check)"
        }
    }

    /// How the game has ended by rule, `None` while it goes on. A
    /// checkmate comes before the other endings that may hold with it.
    pub fn ending(&self) -> Option<ChessEnding> {
        match self.board.status() {
            GameStatus::Won => return Some(ChessEnding::Checkmate),
            GameStatus::Drawn if self.legal_move_count() == 0 => {
                return Some(ChessEnding::Stalemate);
            }
            _ => {}
        }
        if self.insufficient_material() {
            Some(ChessEnding::InsufficientMaterial)
        } else if self.is_fivefold_repetition() {
            Some(ChessEnding::FivefoldRepetition)
        } else if self.is_seventy_five_moves() {
            Some(ChessEnding::SeventyFiveMoves)
        } else {
            None
        }
    }

    /// Whether the position stands for the fifth time (9.6.1).
    pub fn is_fivefold_repetition(&self) -> bool {
        self.repetitions() >= 5
    }

    /// Whether seventy-five moves of each side have passed with no
    /// capture and no pawn move, and the side to move has a move (9.6.2: a
    /// mate on the 75th move stands).
    pub fn is_seventy_five_moves(&self) -> bool {
        self.halfmove_clock >= SEVENTY_FIVE_MOVES && self.legal_move_count() > 0
    }

    /// Whether the side to move is checkmated.
    pub fn is_checkmate(&self) -> bool {
        self.board.status() == GameStatus::Won
    }

    /// Whether the side to move has no legal move and is not in check.
    pub fn is_stalemate(&self) -> bool {
        !self.in_check() && self.legal_move_count() == 0
    }

    /// Whether neither side has the material to checkmate, as python-chess
    /// and lichess decide it: each side has at most a king and either one
    /// knight (with the other side holding no piece but king and queens)
    /// or bishops all on one colour of square (with no pawn or knight on
    /// the board, nor a bishop of the other colour).
    pub fn insufficient_material(&self) -> bool {
        [Color::White, Color::Black]
            .into_iter()
            .all(|color| self.cannot_mate(color))
    }

    fn cannot_mate(&self, color: Color) -> bool {
        let board = &self.board;
        let ours = board.colors(color);
        let heavy =
            board.pieces(Piece::Pawn) | board.pieces(Piece::Rook) | board.pieces(Piece::Queen);
        if !(ours & heavy).is_empty() {
            return false;
        }
        if !(ours & board.pieces(Piece::Knight)).is_empty() {
            let theirs = board.colors(!color);
            let minor_or_more = theirs & !board.pieces(Piece::King) & !board.pieces(Piece::Queen);
            return ours.len() <= 2 && minor_or_more.is_empty();
        }
        let bishops = board.pieces(Piece::Bishop);
        if !(ours & bishops).is_empty() {
            let one_colour = (bishops & BitBoard::DARK_SQUARES).is_empty()
                || (bishops & BitBoard::LIGHT_SQUARES).is_empty();
            return one_colour
                && board.pieces(Piece::Pawn).is_empty()
                && board.pieces(Piece::Knight).is_empty();
        }
        true
    }

    /// How many times the current position has stood in this game,
    /// itself included (1 the first time).
    pub fn repetitions(&self) -> usize {
        let now = &self.board;
        self.repeatable
            .iter()
            .filter(|seen| seen.same_position(now))
            .count()
    }

    /// A draw the side to move may claim on the position as it stands:
    /// the third (or later) time it stands, or fifty moves of each side
    /// with no capture and no pawn move (unless the position is mate).
    /// Threefold comes first when both hold.
    pub fn claimable_draw(&self) -> Option<DrawClaim> {
        if self.ending() == Some(ChessEnding::Checkmate) {
            return None;
        }
        if self.repetitions() >= 3 {
            Some(DrawClaim::ThreefoldRepetition)
        } else if self.halfmove_clock >= FIFTY_MOVES && self.legal_move_count() > 0 {
            Some(DrawClaim::FiftyMoves)
        } else {
            None
        }
    }

    /// A draw the side to move may claim by announcing `mv`, a legal move,
    /// without playing it on the board (9.2.1.1, 9.3.1): the position as
    /// it stands is claimable, or the one `mv` makes would be.
    pub fn claimable_draw_with(&self, mv: ChessMove) -> Option<DrawClaim> {
        self.claimable_draw().or_else(|| {
            self.is_legal(mv)
                .then(|| self.after(mv).claimable_draw())
                .flatten()
        })
    }

    /// Whether a threefold repetition can be claimed now, on the position
    /// or with some legal move.
    pub fn can_claim_threefold_repetition(&self) -> bool {
        self.repetitions() >= 3
            || self
                .legal_moves()
                .into_iter()
                .any(|mv| self.after(mv).repetitions() >= 3)
    }

    /// Whether the fifty-move rule can be claimed now, on the position or
    /// with some legal move.
    pub fn can_claim_fifty_moves(&self) -> bool {
        let fifty =
            |game: &ChessGame| game.halfmove_clock >= FIFTY_MOVES && game.legal_move_count() > 0;
        fifty(self)
            || (self.halfmove_clock + 1 >= FIFTY_MOVES
                && self
                    .legal_moves()
                    .into_iter()
                    .any(|mv| fifty(&self.after(mv))))
    }

    /// The position as a FEN (see the module's text forms).
    pub fn fen(&self) -> String {
        let fen = self.board_fen();
        let mut fields: Vec<String> = fen.split(' ').map(str::to_owned).collect();
        if let Some(en_passant) = fields.get_mut(3) {
            *en_passant = effective_en_passant(&self.board)
                .map_or_else(|| "-".to_owned(), |square| square.to_string());
        }
        if let Some(clock) = fields.get_mut(4) {
            *clock = self.halfmove_clock.to_string();
        }
        fields.join(" ")
    }

    /// The move generator's FEN of the position: X-FEN castling in
    /// standard chess, Shredder-FEN in Chess960; its en passant square and
    /// halfmove clock are its own (see [`ChessGame::fen`]).
    fn board_fen(&self) -> String {
        match self.variant {
            ChessVariant::Standard => format!("{}", self.board),
            ChessVariant::Chess960 => format!("{:#}", self.board),
        }
    }

    /// `mv` in UCI (see the module's text forms).
    pub fn uci(&self, mv: ChessMove) -> String {
        match self.variant {
            ChessVariant::Standard => {
                cozy_chess::util::display_uci_move(&self.board, mv.0).to_string()
            }
            ChessVariant::Chess960 => mv.0.to_string(),
        }
    }

    /// The move `text` names in UCI (a legal move or not: see
    /// [`ChessGame::play`]).
    ///
    /// # Errors
    /// [`ChessMoveError::NotUci`] for text that is not a UCI move.
    pub fn parse_uci(&self, text: &str) -> Result<ChessMove, ChessMoveError> {
        let not_uci = || ChessMoveError::NotUci(text.to_owned());
        // The promotion letter, if any, names a piece a pawn becomes (the
        // parser below would read `k` or `p` as none).
        if !(4..=5).contains(&text.len())
            || !text.is_ascii()
            || text.len() == 5 && !text.ends_with(['q', 'r', 'b', 'n'])
        {
            return Err(not_uci());
        }
        let mv = match self.variant {
            ChessVariant::Standard => cozy_chess::util::parse_uci_move(&self.board, text),
            ChessVariant::Chess960 => text.parse::<Move>(),
        }
        .map_err(|_| not_uci())?;
        Ok(ChessMove(mv))
    }

    /// `mv`, a legal move, in SAN (see the module's text forms), with `+`
    /// or `#` when it gives check or mate.
    ///
    /// # Panics
    /// When `mv` is not legal.
    pub fn san(&self, mv: ChessMove) -> String {
        cozy_chess::util::display_san_move(&self.board, mv.0).to_string()
    }

    /// The legal move `text` names in SAN (read leniently: see the
    /// module's text forms).
    ///
    /// # Errors
    /// [`SanError`]: not SAN, no legal move fits, or several do.
    pub fn parse_san(&self, text: &str) -> Result<ChessMove, SanError> {
        san::parse(self, text)
    }

    /// The move `text` names, in UCI or SAN, whichever it reads as.
    ///
    /// # Errors
    /// The SAN reading's error when it is neither (a text that looks like
    /// UCI, `e2e4`, gives the UCI error).
    pub fn parse_move(&self, text: &str) -> Result<ChessMove, ChessMoveError> {
        match self.parse_uci(text) {
            Ok(mv) => Ok(mv),
            Err(uci) => match self.parse_san(text) {
                Ok(mv) => Ok(mv),
                Err(_) if looks_like_uci(text) => Err(uci),
                Err(san) => Err(san.into()),
            },
        }
    }
}

impl Default for ChessGame {
    fn default() -> Self {
        Self::new(ChessVariant::Standard)
    }
}

impl fmt::Display for ChessMove {
    /// The move's squares and promotion (`e2e4`, `e7e8q`; castling as king
    /// takes rook, `e1h1`): [`ChessGame::uci`] gives the position's UCI.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// Checks that `board`'s castling rights are standard chess's.
///
/// # Errors
/// [`ChessSetupError::Chess960Castling`].
fn standard_castling(board: &Board) -> Result<(), ChessSetupError> {
    for color in [Color::White, Color::Black] {
        let rights = board.castle_rights(color);
        let home = Square::new(File::E, Rank::First.relative_to(color));
        let any = rights.short.is_some() || rights.long.is_some();
        if (any && board.king(color) != home)
            || rights.short.is_some_and(|file| file != File::H)
            || rights.long.is_some_and(|file| file != File::A)
        {
            let shredder = format!("{board:#}");
            let rights = shredder.split(' ').nth(2).unwrap_or("?").to_owned();
            return Err(ChessSetupError::Chess960Castling(rights));
        }
    }
    Ok(())
}

/// X-FEN castling rights (`KQkq`: the outermost rook on that side of the
/// king) as Shredder-FEN's rook files (`HAha`), read off `placement` (the
/// FEN's first field); `None` when there is nothing to convert or the
/// placement does not parse (the FEN parser then says what is wrong).
fn shredder_rights(placement: &str, rights: &str) -> Option<String> {
    if !rights.chars().any(|c| "KQkq".contains(c)) {
        return None;
    }
    let ranks: Vec<&str> = placement.split('/').collect();
    // The back rank of each side: rank 1 is the FEN's last, rank 8 its first.
    let back_rank = |white: bool| -> Option<Vec<char>> {
        let text = if white { ranks.last()? } else { ranks.first()? };
        let mut squares = Vec::with_capacity(8);
        for c in text.chars() {
            match c.to_digit(10) {
                Some(empty) => squares.extend(std::iter::repeat_n(' ', empty as usize)),
                None => squares.push(c),
            }
        }
        Some(squares)
    };
    let mut converted = String::new();
    for right in rights.chars() {
        let white = right.is_ascii_uppercase();
        let (king, rook) = if white { ('K', 'R') } else { ('k', 'r') };
        let file = match right.to_ascii_uppercase() {
            side @ ('K' | 'Q') => {
                let squares = back_rank(white)?;
                let king_at = squares.iter().position(|&c| c == king)?;
                let rooks = squares.iter().enumerate().filter(|&(_, &c)| c == rook);
                let outermost = if side == 'K' {
                    rooks
                        .filter(|&(at, _)| at > king_at)
                        .map(|(at, _)| at)
                        .max()
                } else {
                    rooks
                        .filter(|&(at, _)| at < king_at)
                        .map(|(at, _)| at)
                        .min()
                }?;
                (b'A' + outermost as u8) as char
            }
            other => other,
        };
        converted.push(if white {
            file
        } else {
            file.to_ascii_lowercase()
        });
    }
    Some(converted)
}

/// Whether `text` has UCI's shape: two squares and maybe a promotion.
fn looks_like_uci(text: &str) -> bool {
    let bytes = text.as_bytes();
    let square = |at: usize| {
        bytes.get(at).is_some_and(|f| (b'a'..=b'h').contains(f))
            && bytes.get(at + 1).is_some_and(|r| (b'1'..=b'8').contains(r))
    };
    (4..=5).contains(&bytes.len()) && square(0) && square(2)
}

/// The square a pawn of the side to move can legally take en passant on.
fn effective_en_passant(board: &Board) -> Option<Square> {
    let file: File = board.en_passant()?;
    let color = board.side_to_move();
    let square = Square::new(file, Rank::Sixth.relative_to(color));
    let mut legal = false;
    board.generate_moves_for(board.colored_pieces(color, Piece::Pawn), |moves| {
        legal |= moves.to.has(square);
        legal
    });
    legal.then_some(square)
}

fn side(color: Color) -> Side {
    match color {
        Color::White => Side::White,
        Color::Black => Side::Black,
    }
}

fn kind(piece: Piece) -> PieceKind {
    match piece {
        Piece::Pawn => PieceKind::Pawn,
        Piece::Knight => PieceKind::Knight,
        Piece::Bishop => PieceKind::Bishop,
        Piece::Rook => PieceKind::Rook,
        Piece::Queen => PieceKind::Queen,
        Piece::King => PieceKind::King,
    }
}
