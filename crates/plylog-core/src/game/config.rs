//! A game's fixed configuration: its rule set and its seats.

use std::collections::BTreeMap;

use super::Millis;
use crate::engine::{Bot, MAX_STRENGTH};
use crate::rules::{MAX_SEATS, RuleSet, Seat};

/// One player's seat as given at creation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SeatInfo {
    /// The caller's opaque player identifier (1 to `max_id_chars` characters).
    pub player_id: String,
    /// A human-readable name (0 to `max_id_chars` characters).
    pub display_name: String,
    /// The symbol drawn for this seat's pieces (1 to 4 characters, no
    /// whitespace, unique within the game).
    pub symbol: String,
    /// `Some` when an engine plays this seat: the server decides its moves
    /// and nobody else may move, act or ask for a rematch for it.
    pub bot: Option<Bot>,
}

/// Bounds on seats a server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeatLimits {
    /// Most seats in one game (at most [`MAX_SEATS`]).
    pub max_seats: usize,
    /// Most characters in a player id or display name.
    pub max_id_chars: usize,
    /// Whether player ids, display names and symbols must be free of
    /// characters that act on a terminal or reorder text
    /// ([`is_disruptive`]). True for a new game (the default); false to
    /// read back a stored one as it was created, since games created before
    /// the check may hold them (every text output escapes them:
    /// [`escape_disruptive`]).
    pub plain_text: bool,
}

impl Default for SeatLimits {
    fn default() -> Self {
        SeatLimits {
            max_seats: 16,
            max_id_chars: 128,
            plain_text: true,
        }
    }
}

/// Whether `c` acts on what shows text instead of drawing: a control
/// character (Unicode general category Cc: ESC, which starts terminal
/// escape sequences, BEL, CR, LF, DEL, the C1 controls), a bidirectional
/// formatting character (the `Bidi_Control` property of [UAX #9]: marks,
/// embeddings, overrides and isolates, which make `admin\u{202e}gnp.exe`
/// show as "adminexe.png"), or the line and paragraph separators U+2028 and
/// U+2029. Read from ICU4X's `icu_properties` data.
///
/// [UAX #9]: https://www.unicode.org/reports/tr9/#Directional_Formatting_Characters
pub fn is_disruptive(c: char) -> bool {
    use icu_properties::props::{BidiControl, BinaryProperty};
    c.is_control() || c == '\u{2028}' || c == '\u{2029}' || BidiControl::for_char(c)
}

/// `text` fit for a terminal, a log line or a page: each [`is_disruptive`]
/// character written as its Rust escape (`\u{1b}`, `\u{202e}`), everything
/// else as it is.
pub fn escape_disruptive(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_disruptive) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_disruptive(c) {
            escaped.extend(c.escape_unicode());
        } else {
            escaped.push(c);
        }
    }
    std::borrow::Cow::Owned(escaped)
}

/// The first [`is_disruptive`] character of `text`, escaped, when `limits`
/// refuse them.
fn disruptive_in(text: &str, limits: SeatLimits) -> Option<String> {
    text.chars()
        .find(|c| limits.plain_text && is_disruptive(*c))
        .map(|c| c.escape_unicode().to_string())
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
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum UndoPolicy {
    /// Only the seat that played the last move, stating its seat (the
    /// default).
    #[default]
    LastMover,
    /// Any seat, or a request that states none.
    AnySeat,
    /// Nobody: every undo (and redo) is refused.
    Disabled,
    /// By consent: a seat asks for a takeback and every other seat still in
    /// play accepts it; a plain undo is refused. Redo is the mover's own.
    Consent,
}

/// What happens when the seat to move runs out of time.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum ExpiryPolicy {
    /// The seat forfeits: with two seats in play the other wins; with more,
    /// the seat is out and play goes on (the default).
    #[default]
    Forfeit,
    /// The server plays a uniformly random legal move for the seat, drawn
    /// from the time control's seed.
    RandomMove,
    /// The game is drawn.
    Draw,
}

/// A game clock in the Fischer style: each seat starts with `initial_ms`
/// and gains `increment_ms` after each of its moves, up to
/// [`MAX_TIME_MS`] on its clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Fischer {
    /// Each seat's time at the start, in milliseconds (at least 1).
    pub initial_ms: u64,
    /// Time added to a seat's clock after each of its moves, in milliseconds.
    pub increment_ms: u64,
}

/// How a game is timed: a limit per turn, a game clock, or both (a turn
/// then ends at whichever runs out first). A turn starts when the seat gets
/// it (at creation for the first); its time runs while offers and other
/// requests come and go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct TimeControl {
    /// The most milliseconds a seat may take for one turn.
    pub per_move_ms: Option<u64>,
    /// The game clock, when the game has one.
    pub clock: Option<Fischer>,
    /// What happens when time runs out.
    pub on_expiry: ExpiryPolicy,
    /// Seeds the random moves of [`ExpiryPolicy::RandomMove`]: the move
    /// played for the event at sequence `s` is drawn from stream `s` of
    /// ChaCha8 seeded with this (rand_chacha's `ChaCha8Rng::seed_from_u64`).
    pub seed: u64,
}

/// A time control that cannot be used, naming the offending field (e.g.
/// `time_control.per_move`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {why}")]
pub struct InvalidTimeControl {
    /// The field at fault.
    pub field: String,
    /// A short lowercase sentence.
    pub why: String,
}

/// What happens when the seat to move has stayed away (held no followed
/// stream) for the grace period.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum AbsenceAction {
    /// The game's expiry policy applies, as if its time ran out (forfeit in
    /// an untimed game); the reason is [`crate::rules::EndReason::Abandoned`].
    #[default]
    Expire,
    /// A draw is offered on the absent seat's behalf; the others may accept.
    OfferDraw,
}

/// A disconnect policy: how long the seat to move may be away, and what
/// happens then. Presence needs seat tokens (a seat is present while it
/// follows the game's stream with its token).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct AbsencePolicy {
    /// The grace period, in milliseconds ([`MIN_TIME_MS`] to
    /// [`MAX_TIME_MS`]).
    pub grace_ms: u64,
    /// What happens once it has passed.
    pub action: AbsenceAction,
}

/// Longest time a clock or turn may be given: 30 days, in milliseconds. A
/// seat's clock never holds more: an increment that would take it past
/// stops there.
pub const MAX_TIME_MS: u64 = 30 * 24 * 60 * 60 * 1000;

/// Shortest per-move limit, starting clock or grace period a new game may
/// have: 1 s, in milliseconds. Shorter ones let a game whose seats all
/// stay away play itself a move per millisecond (issue 35: 610 events/s
/// from one 1 ms game); games stored before the limit keep theirs (they
/// are read with a shortest time of 1 ms).
pub const MIN_TIME_MS: u64 = 1_000;

/// Why `ms` is not from `shortest_ms` to [`MAX_TIME_MS`], if it is not.
fn out_of_range(ms: u64, shortest_ms: u64) -> Option<String> {
    let shortest = shortest_ms.max(1);
    (!(shortest..=MAX_TIME_MS).contains(&ms))
        .then(|| format!("{ms} ms is not from {shortest} ms to {MAX_TIME_MS} ms"))
}

impl TimeControl {
    /// Checks the time control is usable: at least a per-move limit or a
    /// clock, each limit from `shortest_ms` (at least 1 ms; new games:
    /// [`MIN_TIME_MS`]) to [`MAX_TIME_MS`], the increment at most
    /// [`MAX_TIME_MS`].
    ///
    /// # Errors
    /// A short lowercase sentence naming the field at fault.
    pub fn check(&self, shortest_ms: u64) -> Result<(), InvalidTimeControl> {
        let invalid = |field: &str, why: String| {
            Err(InvalidTimeControl {
                field: format!("time_control.{field}"),
                why,
            })
        };
        if self.per_move_ms.is_none() && self.clock.is_none() {
            return invalid(
                "per_move",
                "a time control needs a per-move limit, a clock, or both".into(),
            );
        }
        if let Some(why) = self
            .per_move_ms
            .and_then(|ms| out_of_range(ms, shortest_ms))
        {
            return invalid("per_move", why);
        }
        if let Some(clock) = self.clock {
            if let Some(why) = out_of_range(clock.initial_ms, shortest_ms) {
                return invalid("initial", why);
            }
            if clock.increment_ms > MAX_TIME_MS {
                return invalid(
                    "increment",
                    format!("{} ms is over {MAX_TIME_MS} ms", clock.increment_ms),
                );
            }
        }
        Ok(())
    }
}

/// A game's rules and seats, checked together: 2 or more seats (turn order is
/// seat order), each with a player id and a unique symbol; and who may undo.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GameConfig {
    rules: RuleSet,
    seats: Vec<SeatInfo>,
    undo_policy: UndoPolicy,
    time_control: Option<TimeControl>,
    absence: Option<AbsencePolicy>,
    matched_at: Option<Millis>,
    labels: BTreeMap<String, String>,
    clocks_start_at: Option<Millis>,
}

impl GameConfig {
    /// Checks the seats against `limits` and pairs them with `rules`.
    ///
    /// # Errors
    /// [`InvalidSeats`] for fewer seats than the rules need (2), more than
    /// they seat (wild games: 2) or more than `limits.max_seats`,
    /// an empty or overlong player id, an overlong display name, or a symbol
    /// that is empty, longer than 4 characters, contains whitespace or repeats
    /// another seat's; a player id, display name or symbol holding an
    /// [`is_disruptive`] character when `limits.plain_text`; a bot seat whose strength is not from 1 to
    /// [`MAX_STRENGTH`] or whose engine cannot play these rules.
    pub fn new(
        rules: RuleSet,
        mut seats: Vec<SeatInfo>,
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
            for (field, what, text) in [
                ("player_id", "player id", &seat.player_id),
                ("display_name", "display name", &seat.display_name),
            ] {
                if let Some(c) = disruptive_in(text, limits) {
                    return invalid(
                        format!("seats[{i}].{field}"),
                        format!(
                            "{what} holds {c}: control and bidirectional formatting characters are refused"
                        ),
                    );
                }
            }
            let symbol_chars = seat.symbol.chars().count();
            let shown = drawn(&seat.symbol);
            if symbol_chars == 0
                || symbol_chars > MAX_SYMBOL_CHARS
                || disruptive_in(&seat.symbol, limits).is_some()
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
            if let Some(bot) = &seat.bot {
                if !(1..=MAX_STRENGTH).contains(&bot.strength) {
                    return invalid(
                        format!("seats[{i}].bot.strength"),
                        format!("strength {} is not from 1 to {MAX_STRENGTH}", bot.strength),
                    );
                }
                if let Err(why) = bot.engine.supports(&rules, seats.len()) {
                    return invalid(format!("seats[{i}].bot.engine"), why);
                }
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
        // A config lives as long as its game: no spare room (a collected
        // Vec of two seats holds four).
        seats.shrink_to_fit();
        Ok(GameConfig {
            rules,
            seats,
            undo_policy: UndoPolicy::default(),
            time_control: None,
            absence: None,
            matched_at: None,
            labels: BTreeMap::new(),
            clocks_start_at: None,
        })
    }

    /// The same game, its players matched at `matched_at` (Unix epoch
    /// milliseconds, by a matchmaking service): the time its first move is
    /// measured from ([`crate::game::GameState::waiting_since`]). The
    /// caller bounds it against the creation time.
    pub fn with_matched_at(self, matched_at: Millis) -> Self {
        GameConfig {
            matched_at: Some(matched_at),
            ..self
        }
    }

    /// When a matchmaking service matched the players (Unix epoch
    /// milliseconds); `None` when not given.
    pub fn matched_at(&self) -> Option<Millis> {
        self.matched_at
    }

    /// The same game, labelled with `labels` (key to value): the caller's
    /// names for what the game belongs to, which the rules never read. The
    /// caller checks their number and spelling.
    pub fn with_labels(self, labels: BTreeMap<String, String>) -> Self {
        GameConfig { labels, ..self }
    }

    /// The same game, its clocks starting at `at` (Unix epoch
    /// milliseconds; `None`: at the creation): the first turn's time, and a
    /// game clock's, count from then (lichess bulk pairing's
    /// `startClocksAt`). The caller bounds it against the creation time.
    pub fn with_clocks_start_at(self, at: Option<Millis>) -> Self {
        GameConfig {
            clocks_start_at: at,
            ..self
        }
    }

    /// When the clocks start, if after the creation.
    pub fn clocks_start_at(&self) -> Option<Millis> {
        self.clocks_start_at
    }

    /// The caller's labels, key to value, in key order (empty: none).
    pub fn labels(&self) -> &BTreeMap<String, String> {
        &self.labels
    }

    /// The same game with `policy` deciding who may undo.
    pub fn with_undo_policy(self, policy: UndoPolicy) -> Self {
        GameConfig {
            undo_policy: policy,
            ..self
        }
    }

    /// The same game timed by `time_control`, each of its limits at least
    /// `shortest_ms` (see [`TimeControl::check`]).
    ///
    /// # Errors
    /// [`InvalidTimeControl`] naming the field at fault.
    pub fn with_time_control(
        self,
        time_control: TimeControl,
        shortest_ms: u64,
    ) -> Result<Self, InvalidTimeControl> {
        time_control.check(shortest_ms)?;
        Ok(GameConfig {
            time_control: Some(time_control),
            ..self
        })
    }

    /// The same game with a disconnect policy.
    ///
    /// # Errors
    /// [`InvalidTimeControl`] naming `absence.grace` when the grace period
    /// is not from `shortest_ms` (at least 1 ms; new games:
    /// [`MIN_TIME_MS`]) to [`MAX_TIME_MS`].
    pub fn with_absence(
        self,
        absence: AbsencePolicy,
        shortest_ms: u64,
    ) -> Result<Self, InvalidTimeControl> {
        if let Some(why) = out_of_range(absence.grace_ms, shortest_ms) {
            return Err(InvalidTimeControl {
                field: "absence.grace".into(),
                why,
            });
        }
        Ok(GameConfig {
            absence: Some(absence),
            ..self
        })
    }

    /// The disconnect policy; `None`: absence changes nothing (the default).
    pub fn absence(&self) -> Option<&AbsencePolicy> {
        self.absence.as_ref()
    }

    /// How the game is timed; `None`: untimed (the default).
    pub fn time_control(&self) -> Option<&TimeControl> {
        self.time_control.as_ref()
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

    /// The engine playing `seat`, when it is a bot seat.
    pub fn bot(&self, seat: Seat) -> Option<&Bot> {
        self.seats.get(seat.index())?.bot.as_ref()
    }

    /// Whether any seat is a bot seat.
    pub fn has_bots(&self) -> bool {
        self.seats.iter().any(|s| s.bot.is_some())
    }
}
