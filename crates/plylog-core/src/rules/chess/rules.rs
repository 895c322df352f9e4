//! Chess as a [`Game`] of the [`crate::rules::RuleSet`]: the rules a game
//! is created with ([`ChessRules`]), the position the game layer holds
//! ([`ChessPosition`]: the game and how to take each move back) and what a
//! move records of itself ([`ChessPlayed`]).
//!
//! Seat 0 plays the side to move in the start position (White from the
//! standard start), seat 1 the other side; in a rematch that rotates the
//! first mover, the other way round. A move is sent as text
//! ([`MoveText`], UCI or SAN, read on the position by [`Game::play`]) or
//! as squares ([`Move::Chess`], as engines play); either way the log
//! records the squares, and the event carries the move in both UCI and
//! SAN.

use std::fmt;
use std::sync::Arc;

use super::PieceKind;
use super::{ChessEnding, ChessGame, ChessMove, ChessUndo, ChessVariant, DrawClaim};
use crate::rules::{
    EndReason, Game, GamePosition, IllegalMove, InvalidRules, Move, Outcome, Played, Seat,
};

/// How the draws a player may claim (threefold repetition, fifty moves)
/// come about in a game. Fivefold repetition and seventy-five moves end a
/// game whatever this says (FIDE 9.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum DrawRule {
    /// A seat claims them (the `CLAIM_DRAW` action; FIDE 9.2, 9.3), the
    /// default.
    Claimed,
    /// The move that makes them ends the game at once, as many servers do
    /// for bots and casual play.
    Automatic,
}

/// The rules of a chess game: the variant, where it starts and how
/// claimable draws come about. Validated: the start has a legal move.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "ChessRulesSpec", try_from = "ChessRulesSpec")]
pub struct ChessRules {
    variant: ChessVariant,
    /// The start as a FEN when it is not the variant's standard start.
    fen: Option<String>,
    draws: DrawRule,
    start: ChessGame,
}

/// [`ChessRules`] as snapshots keep them.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename = "ChessRules")]
struct ChessRulesSpec {
    variant: ChessVariant,
    fen: Option<String>,
    draws: DrawRule,
}

impl From<ChessRules> for ChessRulesSpec {
    fn from(rules: ChessRules) -> Self {
        ChessRulesSpec {
            variant: rules.variant,
            fen: rules.fen,
            draws: rules.draws,
        }
    }
}

impl TryFrom<ChessRulesSpec> for ChessRules {
    type Error = InvalidRules;

    fn try_from(spec: ChessRulesSpec) -> Result<Self, InvalidRules> {
        ChessRules::new(spec.variant, spec.fen.as_deref(), None, spec.draws)
    }
}

impl ChessRules {
    /// Standard chess from the standard start, draws claimed.
    pub fn standard() -> Self {
        Self::new(ChessVariant::Standard, None, None, DrawRule::Claimed)
            .expect("the standard start is playable")
    }

    /// Chess of `variant` starting from `fen` (X-FEN or Shredder-FEN), or
    /// from Chess960 start `chess960_start` (0 to 959, 518 the standard
    /// one), or else from the standard start.
    ///
    /// # Errors
    /// [`InvalidRules`] naming `fen` (it does not parse, is impossible,
    /// castles as Chess960 in standard chess, or has already ended) or
    /// `chess960_start` (out of range, given with a FEN or in standard
    /// chess).
    pub fn new(
        variant: ChessVariant,
        fen: Option<&str>,
        chess960_start: Option<u32>,
        draws: DrawRule,
    ) -> Result<Self, InvalidRules> {
        let start = match (fen, chess960_start) {
            (Some(_), Some(_)) => {
                return Err(InvalidRules::new(
                    "chess960_start",
                    "give a FEN or a Chess960 start, not both",
                ));
            }
            (Some(fen), None) => ChessGame::from_fen(variant, fen)
                .map_err(|e| InvalidRules::new("fen", e.to_string()))?,
            (None, Some(_)) if variant == ChessVariant::Standard => {
                return Err(InvalidRules::new(
                    "chess960_start",
                    "a Chess960 start needs the Chess960 variant",
                ));
            }
            (None, Some(number)) => ChessGame::chess960(number)
                .map_err(|e| InvalidRules::new("chess960_start", e.to_string()))?,
            (None, None) => ChessGame::new(variant),
        };
        if let Some(ending) = start.ending() {
            return Err(InvalidRules::new(
                "fen",
                format!("the position has already ended ({})", ending_name(ending)),
            ));
        }
        let standard = ChessGame::new(variant);
        let fen = (start != standard).then(|| start.fen());
        Ok(ChessRules {
            variant,
            fen,
            draws,
            start,
        })
    }

    /// The variant.
    pub fn variant(&self) -> ChessVariant {
        self.variant
    }

    /// The start's FEN when it is not the variant's standard start.
    pub fn fen(&self) -> Option<&str> {
        self.fen.as_deref()
    }

    /// How claimable draws come about.
    pub fn draws(&self) -> DrawRule {
        self.draws
    }

    /// The game as it starts.
    pub fn start(&self) -> &ChessGame {
        &self.start
    }
}

impl fmt::Display for ChessRules {
    /// `chess` or `chess960`, with ` from FEN` for a start of its own.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.variant {
            ChessVariant::Standard => "chess",
            ChessVariant::Chess960 => "chess960",
        };
        match (&self.fen, self.variant) {
            (Some(_), ChessVariant::Standard) => write!(f, "{name} from FEN"),
            _ => f.write_str(name),
        }
    }
}

/// A chess move as a player sends it, UCI or SAN, kept inline (so that
/// [`Move`] stays `Copy`): at most [`MoveText::MAX`] bytes of ASCII.
#[derive(Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct MoveText {
    len: u8,
    bytes: [u8; MoveText::MAX],
}

impl MoveText {
    /// The longest text a move may be, in bytes: SAN's longest,
    /// `exd8=Q+` with a `!?`, is 9. Kept small so that a [`Move`] stays
    /// 12 bytes, as every move of every game sits in an undo stack.
    pub const MAX: usize = 10;

    /// `text`, trimmed, when it is ASCII of 1 to [`MoveText::MAX`] bytes.
    pub fn new(text: &str) -> Option<Self> {
        let text = text.trim();
        if text.is_empty() || text.len() > Self::MAX || !text.is_ascii() {
            return None;
        }
        let mut bytes = [0; Self::MAX];
        bytes[..text.len()].copy_from_slice(text.as_bytes());
        Some(MoveText {
            len: text.len() as u8,
            bytes,
        })
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl From<MoveText> for String {
    fn from(text: MoveText) -> String {
        text.as_str().to_owned()
    }
}

impl TryFrom<String> for MoveText {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        MoveText::new(&text)
            .ok_or_else(|| format!("{text:?} is not 1 to {} ASCII characters", MoveText::MAX))
    }
}

impl fmt::Debug for MoveText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// What a chess move recorded of itself, beside its squares
/// ([`Played::mv`]): its text forms, what it took and how it ended the
/// game. Read from the log, never derived again on replay.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChessPlayed {
    /// The move in UCI (`e2e4`, `e1g1`).
    pub uci: String,
    /// The move in SAN (`e4`, `O-O`, `exd8=Q#`).
    pub san: String,
    /// The piece it took, if any (a pawn for en passant).
    pub captured: Option<PieceKind>,
    /// Whether it gives check (mate included).
    pub check: bool,
    /// Why it ended the game, when it did (a [`Played::outcome`] is set).
    pub end: Option<EndReason>,
}

/// A chess game's position as the game layer holds it: the game, and how
/// to take back each move on it in O(1).
///
/// Serialized (in snapshots) as its start and its moves, and rebuilt from
/// them by playing the moves again.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "ChessPositionSpec", try_from = "ChessPositionSpec")]
pub struct ChessPosition {
    start: Arc<ChessGame>,
    game: ChessGame,
    moves: Vec<(ChessMove, ChessUndo)>,
}

/// [`ChessPosition`] as snapshots keep it.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename = "ChessPosition")]
struct ChessPositionSpec {
    variant: ChessVariant,
    start: String,
    moves: Vec<ChessMove>,
}

impl From<ChessPosition> for ChessPositionSpec {
    fn from(position: ChessPosition) -> Self {
        ChessPositionSpec {
            variant: position.start.variant(),
            start: position.start.fen(),
            moves: position.moves.iter().map(|(mv, _)| *mv).collect(),
        }
    }
}

impl TryFrom<ChessPositionSpec> for ChessPosition {
    type Error = String;

    fn try_from(spec: ChessPositionSpec) -> Result<Self, String> {
        let start = ChessGame::from_fen(spec.variant, &spec.start).map_err(|e| e.to_string())?;
        let mut position = ChessPosition::new(start);
        for mv in spec.moves {
            if !position.game.is_legal(mv) {
                return Err(format!("{mv} is not legal after the moves before it"));
            }
            position.play(mv);
        }
        Ok(position)
    }
}

impl ChessPosition {
    fn new(start: ChessGame) -> Self {
        ChessPosition {
            game: start.clone(),
            start: Arc::new(start),
            moves: Vec::new(),
        }
    }

    /// The game as it stands.
    pub fn game(&self) -> &ChessGame {
        &self.game
    }

    /// The game as it started.
    pub fn start(&self) -> &ChessGame {
        &self.start
    }

    /// The moves played from the start (each one that can be taken back).
    pub fn plies(&self) -> usize {
        self.moves.len()
    }

    fn play(&mut self, mv: ChessMove) {
        let undo = self.game.play_undoable(mv);
        self.moves.push((mv, undo));
    }
}

impl GamePosition for ChessPosition {
    fn board(&self) -> Option<&crate::rules::Board> {
        None
    }

    fn digest(&self) -> u64 {
        self.game.digest()
    }

    fn heap_bytes(&self) -> usize {
        self.game.heap_bytes()
            + self.moves.capacity() * std::mem::size_of::<(ChessMove, ChessUndo)>()
            + self
                .moves
                .iter()
                .map(|(_, undo)| undo.heap_bytes())
                .sum::<usize>()
    }

    /// The board's eight ranks, rank 8 first, in FEN's letters (`.` for
    /// an empty square); `symbols` and `empty` are not used.
    fn render(&self, _symbols: &[&str], _empty: &str) -> Vec<String> {
        self.game.board_rows()
    }
}

impl Game for ChessRules {
    type Position = ChessPosition;

    fn initial_position(&self, _seats: usize) -> ChessPosition {
        ChessPosition::new(self.start.clone())
    }

    fn check_move(&self, mv: Move) -> Result<(), IllegalMove> {
        match mv {
            Move::Chess(_) | Move::ChessText(_) => Ok(()),
            _ => Err(IllegalMove::WrongMoveKind {
                variant: "chess",
                expected: "chess moves (UCI or SAN text)",
            }),
        }
    }

    fn play(&self, position: &ChessPosition, seat: Seat, mv: Move) -> Result<Played, IllegalMove> {
        let game = &position.game;
        let mv = match mv {
            Move::Chess(mv) => mv,
            Move::ChessText(text) => game.parse_move(text.as_str())?,
            other => {
                self.check_move(other)?;
                unreachable!("check_move refuses every other kind")
            }
        };
        game.check_legal(mv)?;
        let after = game.after(mv);
        let end = match after.ending() {
            Some(ChessEnding::Checkmate) => Some((
                Outcome::Win {
                    seat,
                    line: Vec::new(),
                },
                EndReason::Checkmate,
            )),
            Some(ending) => Some((Outcome::Draw, ending_reason(ending))),
            None if self.draws == DrawRule::Automatic => after
                .claimable_draw()
                .map(|claim| (Outcome::Draw, claim_reason(claim))),
            None => None,
        };
        let (outcome, end) = end.unzip();
        Ok(Played {
            mv: Move::Chess(mv),
            placement: None,
            flips: Vec::new(),
            roll: None,
            passes: Vec::new(),
            outcome,
            chess: Some(Box::new(ChessPlayed {
                uci: game.uci(mv),
                san: game.san(mv),
                captured: game.captured(mv),
                check: after.in_check(),
                end,
            })),
        })
    }

    fn apply(&self, position: &mut ChessPosition, _seat: Seat, played: &Played) {
        let Move::Chess(mv) = played.mv else {
            panic!("a chess game applies chess moves, not {:?}", played.mv)
        };
        position.play(mv);
    }

    fn undo(&self, position: &mut ChessPosition, _seat: Seat, played: &Played) {
        let (mv, undo) = position.moves.pop().expect("a move to take back");
        assert_eq!(
            Move::Chess(mv),
            played.mv,
            "the move taken back is the last"
        );
        position.game.take_back(undo);
    }

    fn check_played(
        &self,
        position: &ChessPosition,
        seat: Seat,
        played: &Played,
    ) -> Result<(), String> {
        let Move::Chess(mv) = played.mv else {
            return Err(format!("{:?} is not a chess move's squares", played.mv));
        };
        let Some(facts) = played.chess.as_deref() else {
            return Err("a chess move without its UCI and SAN".into());
        };
        if played.placement.is_some() || played.roll.is_some() || !played.flips.is_empty() {
            return Err("a chess move with cells, flips or dice".into());
        }
        // Every fact the log holds is what the rules say of the move here.
        let fresh = self
            .play(position, seat, Move::Chess(mv))
            .map_err(|e| e.to_string())?;
        match fresh.chess.as_deref() {
            Some(here) if here == facts => Ok(()),
            here => Err(format!("recorded as {facts:?}, but it is {here:?} here")),
        }
    }

    fn legal_moves<'a>(
        &'a self,
        position: &'a ChessPosition,
        _seat: Seat,
    ) -> impl Iterator<Item = Move> + 'a {
        position.game.legal_moves().into_iter().map(Move::Chess)
    }

    fn legal_move_count(&self, position: &ChessPosition, _seat: Seat) -> usize {
        position.game.legal_move_count()
    }

    fn pieces_stay_put(&self) -> bool {
        false
    }

    /// Threefold repetition or fifty moves, on the position as it stands
    /// (FIDE 9.2, 9.3), whatever the game's [`DrawRule`].
    fn claimable_draw(&self, position: &ChessPosition) -> Option<EndReason> {
        position.game.claimable_draw().map(claim_reason)
    }

    fn end_reason(&self, played: &Played) -> EndReason {
        match (played.chess.as_deref().and_then(|c| c.end), &played.outcome) {
            (Some(reason), _) => reason,
            (None, Some(Outcome::Win { .. })) => EndReason::Checkmate,
            (None, _) => EndReason::Stalemate,
        }
    }
}

/// The end reason of an ending by rule.
fn ending_reason(ending: ChessEnding) -> EndReason {
    match ending {
        ChessEnding::Checkmate => EndReason::Checkmate,
        ChessEnding::Stalemate => EndReason::Stalemate,
        ChessEnding::InsufficientMaterial => EndReason::InsufficientMaterial,
        ChessEnding::FivefoldRepetition => EndReason::FivefoldRepetition,
        ChessEnding::SeventyFiveMoves => EndReason::SeventyFiveMoves,
    }
}

/// The end reason of a claimed (or automatic) draw.
fn claim_reason(claim: DrawClaim) -> EndReason {
    match claim {
        DrawClaim::ThreefoldRepetition => EndReason::ThreefoldRepetition,
        DrawClaim::FiftyMoves => EndReason::FiftyMoves,
    }
}

fn ending_name(ending: ChessEnding) -> &'static str {
    match ending {
        ChessEnding::Checkmate => "checkmate",
        ChessEnding::Stalemate => "stalemate",
        ChessEnding::InsufficientMaterial => "insufficient material",
        ChessEnding::FivefoldRepetition => "fivefold repetition",
        ChessEnding::SeventyFiveMoves => "seventy-five moves",
    }
}
