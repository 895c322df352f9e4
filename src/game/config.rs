//! A game's fixed configuration: its rule set and its seats.

use crate::rules::{MAX_SEATS, RuleSet};

/// One player's seat as given at creation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatInfo {
    /// The caller's opaque player identifier (1 to `max_id_chars` characters).
    pub player_id: String,
    /// A human-readable name (0 to `max_id_chars` characters).
    pub display_name: String,
    /// The symbol drawn for this seat's pieces (1 to 4 characters, no
    /// whitespace, unique within the game).
    pub symbol: String,
}

/// Bounds on seats a server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeatLimits {
    /// Most seats in one game (at most [`MAX_SEATS`]).
    pub max_seats: usize,
    /// Most characters in a player id or display name.
    pub max_id_chars: usize,
}

impl Default for SeatLimits {
    fn default() -> Self {
        SeatLimits {
            max_seats: 16,
            max_id_chars: 128,
        }
    }
}

/// The most characters in a seat's symbol.
const MAX_SYMBOL_CHARS: usize = 4;

/// The symbol board pictures use for an empty cell, which no seat may take.
pub const EMPTY_CELL: &str = ".";

/// Whether `c` draws nothing by itself: Unicode's
/// `Default_Ignorable_Code_Point` property ([UAX #44]; soft hyphen,
/// zero-width and direction marks, word joiners, variation selectors, the
/// byte-order mark, Hangul fillers, shorthand format controls, musical
/// formatting controls, tag characters), read from ICU4X's
/// `icu_properties` data, plus the blank Braille pattern U+2800, which is not
/// default-ignorable but draws nothing either. A symbol made only of these
/// would look like an empty cell.
///
/// [UAX #44]: https://www.unicode.org/reports/tr44/#Default_Ignorable_Code_Point
fn is_invisible(c: char) -> bool {
    use icu_properties::props::{BinaryProperty, DefaultIgnorableCodePoint};
    c == '\u{2800}' || DefaultIgnorableCodePoint::for_char(c)
}

/// How a symbol draws, for telling symbols apart: its visible characters in
/// Unicode normalization form C (so "é" and "e\u{301}" are one symbol).
fn drawn(symbol: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    symbol.chars().filter(|c| !is_invisible(*c)).nfc().collect()
}

/// Seats that cannot sit at one table, naming the offending field (e.g.
/// `seats[1].symbol`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {why}")]
pub struct InvalidSeats {
    /// The field at fault, e.g. `"seats"` or `"seats[2].symbol"`.
    pub field: String,
    /// A short lowercase sentence.
    pub why: String,
}

/// Who may take back the last move on the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum UndoPolicy {
    /// Only the seat that played the last move, stating its seat (the
    /// default).
    #[default]
    LastMover,
    /// Any seat, or a request that states none.
    AnySeat,
    /// Nobody: every undo is refused.
    Disabled,
}

/// A game's rules and seats, checked together: 2 or more seats (turn order is
/// seat order), each with a player id and a unique symbol; and who may undo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameConfig {
    rules: RuleSet,
    seats: Vec<SeatInfo>,
    undo_policy: UndoPolicy,
}

impl GameConfig {
    /// Checks the seats against `limits` and pairs them with `rules`.
    ///
    /// # Errors
    /// [`InvalidSeats`] for fewer seats than the rules need (2), more than
    /// they seat (wild games: 2) or more than `limits.max_seats`,
    /// an empty or overlong player id, an overlong display name, or a symbol
    /// that is empty, longer than 4 characters, contains whitespace or repeats
    /// another seat's.
    pub fn new(
        rules: RuleSet,
        seats: Vec<SeatInfo>,
        limits: SeatLimits,
    ) -> Result<Self, InvalidSeats> {
        let invalid = |field: String, why: String| Err(InvalidSeats { field, why });
        let max_seats = limits.max_seats.min(MAX_SEATS);
        let (fewest, most) = rules.seat_range();
        if seats.len() < fewest {
            return invalid(
                "seats".into(),
                format!("a game needs at least {fewest} seats, got {}", seats.len()),
            );
        }
        if seats.len() > most {
            return invalid(
                "seats".into(),
                format!(
                    "these rules seat at most {most} players, got {}",
                    seats.len()
                ),
            );
        }
        if seats.len() > max_seats {
            return invalid(
                "seats".into(),
                format!("{} seats is over the limit of {max_seats}", seats.len()),
            );
        }
        for (i, seat) in seats.iter().enumerate() {
            let id_chars = seat.player_id.chars().count();
            if id_chars == 0 || id_chars > limits.max_id_chars {
                return invalid(
                    format!("seats[{i}].player_id"),
                    format!("player id must be 1 to {} characters", limits.max_id_chars),
                );
            }
            if seat.display_name.chars().count() > limits.max_id_chars {
                return invalid(
                    format!("seats[{i}].display_name"),
                    format!(
                        "display name must be at most {} characters",
                        limits.max_id_chars
                    ),
                );
            }
            let symbol_chars = seat.symbol.chars().count();
            let shown = drawn(&seat.symbol);
            if symbol_chars == 0
                || symbol_chars > MAX_SYMBOL_CHARS
                || seat
                    .symbol
                    .chars()
                    .any(|c| c.is_whitespace() || c.is_control())
                || shown
                    .chars()
                    .next()
                    .is_none_or(unicode_normalization::char::is_combining_mark)
            {
                return invalid(
                    format!("seats[{i}].symbol"),
                    format!(
                        "symbol {:?} must be 1 to {MAX_SYMBOL_CHARS} visible characters without whitespace",
                        seat.symbol
                    ),
                );
            }
            if shown == EMPTY_CELL {
                return invalid(
                    format!("seats[{i}].symbol"),
                    format!("symbol {EMPTY_CELL:?} is reserved: it marks empty cells"),
                );
            }
            if let Some(j) = seats[..i].iter().position(|s| drawn(&s.symbol) == shown) {
                return invalid(
                    format!("seats[{i}].symbol"),
                    format!(
                        "symbol {:?} draws like seat {j}'s {:?}",
                        seat.symbol, seats[j].symbol
                    ),
                );
            }
        }
        Ok(GameConfig {
            rules,
            seats,
            undo_policy: UndoPolicy::default(),
        })
    }

    /// The same game with `policy` deciding who may undo.
    pub fn with_undo_policy(self, policy: UndoPolicy) -> Self {
        GameConfig {
            undo_policy: policy,
            ..self
        }
    }

    /// Who may take back the last move.
    pub fn undo_policy(&self) -> UndoPolicy {
        self.undo_policy
    }

    /// The rule set.
    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    /// The seats in turn order.
    pub fn seats(&self) -> &[SeatInfo] {
        &self.seats
    }
}
