//! PGN, the Portable Game Notation (Steven J. Edwards, 1994, "Standard:
//! Portable Game Notation Specification and Implementation Guide"): games
//! read from and written as text, tags and SAN movetext with comments.
//!
//! Reading follows the specification's import format, as lenient as PGN
//! readers are: comments (`{...}` and `;` to the end of the line),
//! numeric annotation glyphs (`$1`), move numbers with or without their
//! dots, and variations (`(...)`, skipped: only the main line is a game).
//! Writing follows its export format (section 8): the seven-tag roster
//! first and in its order, then the other tags, then the movetext with a
//! move number before each White move and before a Black move that follows
//! a comment (`1... e5`), lines of at most 80 characters.

use std::fmt::Write as _;

use super::{ChessGame, ChessMove, ChessMoveError, ChessSetupError, ChessVariant};

/// The seven tags every exported game has, in this order (section 8.1.1).
pub const SEVEN_TAG_ROSTER: [&str; 7] =
    ["Event", "Site", "Date", "Round", "White", "Black", "Result"];

/// A game of a PGN file: its tags in the order read, its main line and its
/// result.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PgnGame {
    /// Tag pairs (`[White "Carlsen"]`), in order.
    pub tags: Vec<(String, String)>,
    /// The main line's moves, in order.
    pub moves: Vec<PgnMove>,
    /// The game termination marker: `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub result: String,
}

/// A move of the movetext, as SAN, with its annotations and the comment
/// that follows it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PgnMove {
    /// The move in SAN as written (`Nf3`, `exd8=Q+`), without its suffix
    /// annotation.
    pub san: String,
    /// A suffix annotation written on the move (`!`, `?`, `!!`, `??`, `!?`
    /// or `?!`; section 8.2.3.8), empty for none.
    pub suffix: String,
    /// Numeric annotation glyphs after it (`$1`, as written).
    pub nags: Vec<String>,
    /// The text of the brace comment after it, trimmed (`[%clk 0:05:00]`).
    pub comment: Option<String>,
}

/// Why a PGN text or game was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PgnError {
    /// The text does not read as PGN: where (1-based line) and why.
    #[error("line {line}: {why}")]
    Syntax {
        /// The line, from 1.
        line: usize,
        /// What is wrong, in words.
        why: String,
    },
    /// The game's `FEN` tag (or its `Variant`) does not set up a position.
    #[error("the starting position: {0}")]
    Setup(#[from] ChessSetupError),
    /// A move of the movetext is not legal where it stands.
    #[error("move {ply} ({san}): {source}")]
    Move {
        /// Its ply, from 1.
        ply: usize,
        /// The move as written.
        san: String,
        /// Why it was refused.
        source: ChessMoveError,
    },
}

impl PgnGame {
    /// The value of tag `name`, if the game has it.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(tag, _)| tag == name)
            .map(|(_, value)| value.as_str())
    }

    /// The game's starting position: its `FEN` tag (with `SetUp "1"`) or
    /// the standard start, in the variant its `Variant` tag names
    /// (`Chess960`; standard chess otherwise).
    ///
    /// # Errors
    /// [`PgnError::Setup`] for a FEN that does not set up a position.
    pub fn start(&self) -> Result<ChessGame, PgnError> {
        let variant = match self.tag("Variant") {
            Some(v)
                if v.eq_ignore_ascii_case("chess960") || v.eq_ignore_ascii_case("fischerandom") =>
            {
                ChessVariant::Chess960
            }
            _ => ChessVariant::Standard,
        };
        match self.tag("FEN") {
            Some(fen) => Ok(ChessGame::from_fen(variant, fen)?),
            None => Ok(ChessGame::new(variant)),
        }
    }

    /// Plays the main line from the start, every move through the rules:
    /// each move played and the position after the last.
    ///
    /// # Errors
    /// [`PgnError::Setup`]; [`PgnError::Move`] for the first move that
    /// does not read as a legal move.
    pub fn replay(&self) -> Result<(Vec<ChessMove>, ChessGame), PgnError> {
        let mut game = self.start()?;
        let mut played = Vec::with_capacity(self.moves.len());
        for (ply, mv) in self.moves.iter().enumerate() {
            let refused = |source: ChessMoveError| PgnError::Move {
                ply: ply + 1,
                san: mv.san.clone(),
                source,
            };
            let chess_move = game.parse_san(&mv.san).map_err(|e| refused(e.into()))?;
            game.play(chess_move).map_err(refused)?;
            played.push(chess_move);
        }
        Ok((played, game))
    }
}

/// The games of a PGN text, in order.
///
/// # Errors
/// [`PgnError::Syntax`]: a tag that does not close, a comment or variation
/// that does not end, a token that is not PGN.
pub fn parse(text: &str) -> Result<Vec<PgnGame>, PgnError> {
    let mut reader = Reader {
        chars: text.chars().collect(),
        at: 0,
        line: 1,
    };
    let mut games = Vec::new();
    let mut game = PgnGame::default();
    let mut in_movetext = false;
    while let Some(c) = reader.peek() {
        match c {
            '\n' | ' ' | '\t' | '\r' => {
                reader.next();
            }
            '%' if reader.at_line_start() => reader.skip_line(),
            // Tags begin a game; at the start of a line they also end one
            // that had no termination marker.
            '[' if !in_movetext || reader.at_line_start() => {
                if in_movetext && (!game.moves.is_empty() || !game.tags.is_empty()) {
                    game.result = game.tag("Result").unwrap_or("*").to_owned();
                    games.push(std::mem::take(&mut game));
                }
                in_movetext = false;
                let tag = reader.tag()?;
                game.tags.push(tag);
            }
            '{' => {
                let comment = reader.comment()?;
                if let Some(last) = game.moves.last_mut() {
                    last.comment = Some(match last.comment.take() {
                        Some(earlier) => format!("{earlier} {comment}"),
                        None => comment,
                    });
                }
                in_movetext = true;
            }
            ';' => reader.skip_line(),
            '(' => {
                reader.variation()?;
                in_movetext = true;
            }
            '$' => {
                reader.next();
                let nag = format!("${}", reader.word());
                if let Some(last) = game.moves.last_mut() {
                    last.nags.push(nag);
                }
            }
            _ => {
                let word = reader.word();
                in_movetext = true;
                match word.as_str() {
                    "1-0" | "0-1" | "1/2-1/2" | "*" => {
                        game.result = word;
                        games.push(std::mem::take(&mut game));
                        in_movetext = false;
                    }
                    _ => {
                        // A move number, with its dots, may stick to the move
                        // (`4.e4`, `12...0-0`; castling with zeros is no number).
                        let after_digits = word.trim_start_matches(|c: char| c.is_ascii_digit());
                        let san = if after_digits.starts_with('.') {
                            after_digits.trim_start_matches('.')
                        } else if after_digits.is_empty() {
                            ""
                        } else {
                            word.as_str()
                        };
                        if san.is_empty() {
                            continue;
                        }
                        if !san.starts_with(|c: char| "KQRBNOabcdefgh0".contains(c)) {
                            return Err(PgnError::Syntax {
                                line: reader.line,
                                why: format!("{word:?} is not a move, a move number or a result"),
                            });
                        }
                        let marks = san.len() - san.trim_end_matches(['!', '?']).len();
                        let (san, suffix) = san.split_at(san.len() - marks);
                        game.moves.push(PgnMove {
                            san: san.to_owned(),
                            suffix: suffix.to_owned(),
                            ..PgnMove::default()
                        });
                    }
                }
            }
        }
    }
    if !game.moves.is_empty() || !game.tags.is_empty() {
        // A game without its termination marker ends with the text.
        game.result = game.tag("Result").unwrap_or("*").to_owned();
        games.push(game);
    }
    Ok(games)
}

/// `game` in PGN's export format (see the module), ending with a blank
/// line. Tags of the seven-tag roster the game lacks are written with
/// their unknown value (`?`; `????.??.??` for the date).
pub fn write(game: &PgnGame) -> String {
    let mut out = String::new();
    for name in SEVEN_TAG_ROSTER {
        let value = match (game.tag(name), name) {
            (Some(value), _) => value.to_owned(),
            (None, "Result") => game.result.clone(),
            (None, "Date") => "????.??.??".to_owned(),
            (None, _) => "?".to_owned(),
        };
        write_tag(&mut out, name, &value);
    }
    for (name, value) in &game.tags {
        if !SEVEN_TAG_ROSTER.contains(&name.as_str()) {
            write_tag(&mut out, name, value);
        }
    }
    out.push('\n');
    let (mut number, mut black) = first_move(game);
    let mut tokens = Vec::new();
    let mut after_comment = true;
    for mv in &game.moves {
        if !black {
            tokens.push(format!("{number}."));
        } else if after_comment {
            tokens.push(format!("{number}..."));
        }
        tokens.push(format!("{}{}", mv.san, mv.suffix));
        tokens.extend(mv.nags.iter().cloned());
        after_comment = false;
        if let Some(comment) = &mv.comment {
            tokens.push(format!("{{ {comment} }}"));
            after_comment = true;
        }
        if black {
            number += 1;
        }
        black = !black;
    }
    tokens.push(game.result.clone());
    let mut line = String::new();
    for token in tokens {
        if !line.is_empty() && line.len() + 1 + token.len() > 80 {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&token);
    }
    out.push_str(&line);
    out.push_str("\n\n");
    out
}

/// The number of the game's first move and whether Black plays it, from
/// its `FEN` tag (the standard start: 1, White).
fn first_move(game: &PgnGame) -> (u32, bool) {
    let Some(fen) = game.tag("FEN") else {
        return (1, false);
    };
    let fields: Vec<&str> = fen.split_whitespace().collect();
    let black = fields.get(1) == Some(&"b");
    let number = fields.get(5).and_then(|n| n.parse().ok()).unwrap_or(1);
    (number, black)
}

fn write_tag(out: &mut String, name: &str, value: &str) {
    let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
    let _ = writeln!(out, "[{name} \"{escaped}\"]");
}

/// A cursor over a PGN text, counting lines.
struct Reader {
    chars: Vec<char>,
    at: usize,
    line: usize,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn at_line_start(&self) -> bool {
        self.at == 0 || self.chars.get(self.at - 1) == Some(&'\n')
    }

    fn skip_line(&mut self) {
        while let Some(c) = self.next() {
            if c == '\n' {
                break;
            }
        }
    }

    /// A word: everything up to white space or a PGN delimiter.
    fn word(&mut self) -> String {
        let mut word = String::new();
        while let Some(c) = self.peek() {
            if c.is_whitespace() || "{}()[];$".contains(c) {
                break;
            }
            word.push(c);
            self.next();
        }
        if word.is_empty() {
            // A stray delimiter: taken as a word of its own.
            if let Some(c) = self.next() {
                word.push(c);
            }
        }
        word
    }

    /// `[Name "value"]`.
    fn tag(&mut self) -> Result<(String, String), PgnError> {
        let line = self.line;
        let syntax = |why: String| PgnError::Syntax { line, why };
        self.next();
        let mut name = String::new();
        while let Some(c) = self
            .peek()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        {
            name.push(c);
            self.next();
        }
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.next();
        }
        if name.is_empty() || self.next() != Some('"') {
            return Err(syntax("a tag is [Name \"value\"]".into()));
        }
        let mut value = String::new();
        loop {
            match self.next() {
                Some('\\') => match self.next() {
                    Some(c) => value.push(c),
                    None => return Err(syntax("a tag's value does not end".into())),
                },
                Some('"') => break,
                Some('\n') | None => return Err(syntax("a tag's value does not end".into())),
                Some(c) => value.push(c),
            }
        }
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.next();
        }
        if self.next() != Some(']') {
            return Err(syntax(format!("tag {name} does not close with ]")));
        }
        Ok((name, value))
    }

    /// `{...}`, its text trimmed.
    fn comment(&mut self) -> Result<String, PgnError> {
        let line = self.line;
        self.next();
        let mut text = String::new();
        loop {
            match self.next() {
                Some('}') => return Ok(text.split_whitespace().collect::<Vec<_>>().join(" ")),
                Some(c) => text.push(c),
                None => {
                    return Err(PgnError::Syntax {
                        line,
                        why: "a comment does not end".into(),
                    });
                }
            }
        }
    }

    /// `(...)`, nested, skipped (comments in it may hold parentheses).
    fn variation(&mut self) -> Result<(), PgnError> {
        let line = self.line;
        let mut depth = 0;
        while let Some(c) = self.peek() {
            match c {
                '{' => {
                    self.comment()?;
                    continue;
                }
                ';' => {
                    self.skip_line();
                    continue;
                }
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        self.next();
                        return Ok(());
                    }
                }
                _ => {}
            }
            self.next();
        }
        Err(PgnError::Syntax {
            line,
            why: "a variation does not end".into(),
        })
    }
}
