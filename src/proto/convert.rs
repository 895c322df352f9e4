//! Conversions between the wire types and the domain types.
//!
//! Wire to domain goes through checks that name the offending field
//! ([`FieldError`]); domain to wire cannot fail. Events decoded from storage
//! use the same checks, so a corrupt row becomes an error, never a panic.

use prost_types::{Duration, Timestamp};

use super::{self as pb, ErrorReason};
use crate::engine::{Bot, Chooser, EngineKind, MAX_STRENGTH, Score};
use crate::game::{
    AbsenceAction, AbsencePolicy, Action, Event, ExpiryPolicy, Fischer, GameConfig, GameState,
    GameStatus, InvalidTimeControl, Offer, SeatInfo, SeatLimits, TimeControl, UndoPolicy,
};
use crate::rules::{
    ConnectFourRules, Coord, EndReason, Forfeit, GomokuRules, HexRules, MnkRules, Move,
    OthelloRules, Outcome, Overline, Overshoot, Played, PopBothLines, Roll, RuleSet, Seat,
    SnakesLaddersOptions, SnakesLaddersRules, WildRules,
};

/// Boards with at most this many cells have their pieces read off the board
/// itself rather than off the moves played.
pub const MAX_SCAN_CELLS: u64 = 4096;

/// Boards with at most this many cells also travel as text rows.
pub const MAX_TEXT_CELLS: u64 = 1024;

/// A request field that does not convert, with the reason clients switch on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {why}")]
pub struct FieldError {
    /// The field path, e.g. `rules.mnk.k` or `move.place.row`.
    pub field: String,
    /// A short lowercase sentence.
    pub why: String,
    /// The stable reason.
    pub reason: ErrorReason,
}

impl FieldError {
    /// A field error with `reason`.
    pub fn new(field: impl Into<String>, why: impl Into<String>, reason: ErrorReason) -> Self {
        FieldError {
            field: field.into(),
            why: why.into(),
            reason,
        }
    }

    /// A missing or malformed field (INVALID_REQUEST).
    pub fn invalid(field: impl Into<String>, why: impl Into<String>) -> Self {
        FieldError::new(field, why, ErrorReason::InvalidRequest)
    }
}

/// Unix epoch milliseconds as a protobuf Timestamp.
pub fn timestamp(ms: i64) -> Timestamp {
    Timestamp {
        seconds: ms.div_euclid(1000),
        nanos: (ms.rem_euclid(1000) * 1_000_000) as i32,
    }
}

/// A protobuf Timestamp as Unix epoch milliseconds (0 when absent).
pub fn timestamp_ms(ts: Option<&Timestamp>) -> i64 {
    ts.map_or(0, |t| t.seconds * 1000 + i64::from(t.nanos) / 1_000_000)
}

/// Milliseconds as a protobuf Duration.
pub fn duration(ms: i64) -> Duration {
    Duration {
        seconds: ms.div_euclid(1000),
        nanos: (ms.rem_euclid(1000) * 1_000_000) as i32,
    }
}

/// A protobuf Duration as whole milliseconds.
///
/// # Errors
/// [`FieldError`] (INVALID_TIME_CONTROL) for a negative duration, `nanos`
/// of a second or more (protobuf's Duration keeps them from -999,999,999
/// to 999,999,999: `{seconds: 1, nanos: 2000000000}` is no duration, not
/// 3 s), one with a part of a millisecond, or one too long to count.
fn duration_ms(d: &Duration, field: &str) -> Result<u64, FieldError> {
    let invalid = |why: &str| FieldError::new(field, why, ErrorReason::InvalidTimeControl);
    if d.seconds < 0 || d.nanos < 0 {
        return Err(invalid("a duration must not be negative"));
    }
    if d.nanos >= 1_000_000_000 {
        return Err(invalid(
            "nanos must be from 0 to 999,999,999: whole seconds go in seconds",
        ));
    }
    if d.nanos % 1_000_000 != 0 {
        return Err(invalid("a duration must be whole milliseconds"));
    }
    (d.seconds as u64)
        .checked_mul(1000)
        .and_then(|ms| ms.checked_add(d.nanos as u64 / 1_000_000))
        .ok_or_else(|| invalid("the duration is too long"))
}

/// A time control on the wire, its seed filled in.
pub fn time_control_to_proto(tc: &TimeControl) -> pb::TimeControl {
    let ms = |ms: u64| duration(ms as i64);
    pb::TimeControl {
        per_move: tc.per_move_ms.map(ms),
        initial: tc.clock.map(|c| ms(c.initial_ms)),
        increment: tc.clock.map(|c| ms(c.increment_ms)),
        on_expiry: match tc.on_expiry {
            ExpiryPolicy::Forfeit => pb::ExpiryPolicy::Forfeit,
            ExpiryPolicy::RandomMove => pb::ExpiryPolicy::RandomMove,
            ExpiryPolicy::Draw => pb::ExpiryPolicy::Draw,
        } as i32,
        seed: Some(tc.seed),
    }
}

/// A time control from the wire, unchecked (see [`TimeControl::check`]);
/// a missing seed reads as 0 (CreateGame fills one in before this).
///
/// # Errors
/// [`FieldError`] (INVALID_TIME_CONTROL) for a malformed duration, an
/// increment without a clock, or an unknown expiry policy.
fn time_control_from_proto(tc: &pb::TimeControl) -> Result<TimeControl, FieldError> {
    let invalid = |field: &str, why: String| {
        FieldError::new(
            format!("time_control.{field}"),
            why,
            ErrorReason::InvalidTimeControl,
        )
    };
    let ms = |d: Option<&Duration>, field: &str| {
        d.map(|d| duration_ms(d, &format!("time_control.{field}")))
            .transpose()
    };
    let per_move_ms = ms(tc.per_move.as_ref(), "per_move")?;
    let initial = ms(tc.initial.as_ref(), "initial")?;
    let increment = ms(tc.increment.as_ref(), "increment")?;
    let clock = match (initial, increment) {
        (Some(initial_ms), increment) => Some(Fischer {
            initial_ms,
            increment_ms: increment.unwrap_or(0),
        }),
        (None, Some(_)) => {
            return Err(invalid(
                "increment",
                "an increment needs a clock (`initial`)".into(),
            ));
        }
        (None, None) => None,
    };
    let on_expiry = match pb::ExpiryPolicy::try_from(tc.on_expiry) {
        Ok(pb::ExpiryPolicy::Unspecified | pb::ExpiryPolicy::Forfeit) => ExpiryPolicy::Forfeit,
        Ok(pb::ExpiryPolicy::RandomMove) => ExpiryPolicy::RandomMove,
        Ok(pb::ExpiryPolicy::Draw) => ExpiryPolicy::Draw,
        Err(_) => {
            return Err(invalid(
                "on_expiry",
                format!("{} is not one of the ExpiryPolicy values", tc.on_expiry),
            ));
        }
    };
    Ok(TimeControl {
        per_move_ms,
        clock,
        on_expiry,
        seed: tc.seed.unwrap_or(0),
    })
}

/// Gives a time control without a seed one from `draw` (the server draws
/// it, outside the pure core).
pub fn fill_time_control_seed(tc: &mut pb::TimeControl, draw: impl FnOnce() -> u64) {
    if tc.seed.is_none() {
        tc.seed = Some(draw());
    }
}

/// The rule set on the wire, every default filled in.
pub fn rules_to_proto(rules: &RuleSet) -> pb::RuleSet {
    let kind = match rules {
        RuleSet::Mnk(r) => pb::rule_set::Kind::Mnk(pb::MnkRules {
            rows: r.rows() as i32,
            cols: r.cols() as i32,
            k: r.k() as i32,
        }),
        RuleSet::ConnectFour(r) => pb::rule_set::Kind::ConnectFour(pb::ConnectFourRules {
            rows: Some(r.rows() as i32),
            cols: Some(r.cols() as i32),
            k: Some(r.k() as i32),
            pop_out: r.pop_out().is_some(),
            pop_both_lines: match r.pop_out() {
                None => pb::PopBothLines::Unspecified,
                Some(PopBothLines::MoverWins) => pb::PopBothLines::MoverWins,
                Some(PopBothLines::OpponentWins) => pb::PopBothLines::OpponentWins,
            } as i32,
        }),
        RuleSet::Gomoku(r) => pb::rule_set::Kind::Gomoku(pb::GomokuRules {
            rows: Some(r.board().rows() as i32),
            cols: Some(r.board().cols() as i32),
            k: Some(r.board().k() as i32),
            overline: match r.overline() {
                Overline::Wins => pb::OverlineRule::Freestyle,
                Overline::DoesNotWin => pb::OverlineRule::Exact,
            } as i32,
        }),
        RuleSet::Othello(r) => pb::rule_set::Kind::Othello(pb::OthelloRules {
            size: Some(r.side() as i32),
        }),
        RuleSet::Hex(r) => pb::rule_set::Kind::Hex(pb::HexRules {
            size: Some(r.size() as i32),
            swap: r.swap(),
        }),
        RuleSet::Wild(r) => pb::rule_set::Kind::Wild(pb::WildRules {
            rows: Some(r.board().rows() as i32),
            cols: Some(r.board().cols() as i32),
            k: Some(r.board().k() as i32),
        }),
        RuleSet::SnakesLadders(r) => pb::rule_set::Kind::SnakesLadders(pb::SnakesLaddersRules {
            squares: Some(r.squares() as i32),
            jumps: r.jumps().iter().map(|&j| jump_to_proto(j)).collect(),
            chaining: r.chaining(),
            overshoot: match r.overshoot() {
                Overshoot::ExactLanding => pb::Overshoot::ExactLanding,
                Overshoot::BounceBack => pb::Overshoot::BounceBack,
                Overshoot::ReachOrPass => pb::Overshoot::ReachOrPass,
            } as i32,
            dice: Some(r.dice() as i32),
            sides: Some(r.sides() as i32),
            extra_turn_on_six: r.extra_turn_on_six(),
            three_sixes_forfeit: r.three_sixes_forfeit(),
            seed: Some(r.seed()),
        }),
    };
    pb::RuleSet { kind: Some(kind) }
}

/// Checks a wire rule set against a board limit of `max_cells`.
///
/// # Errors
/// [`FieldError`] with [`ErrorReason::InvalidRules`] naming the field.
pub fn rules_from_proto(
    rules: Option<&pb::RuleSet>,
    max_cells: u64,
) -> Result<RuleSet, FieldError> {
    let invalid = |prefix: &str, e: crate::rules::InvalidRules| {
        FieldError::new(
            format!("{prefix}.{}", e.field),
            e.why,
            ErrorReason::InvalidRules,
        )
    };
    match rules.and_then(|r| r.kind.as_ref()) {
        None => Err(FieldError::new(
            "rules",
            "a rule set is required (mnk, connect_four, gomoku, wild, othello or snakes_ladders)",
            ErrorReason::InvalidRules,
        )),
        Some(pb::rule_set::Kind::Mnk(m)) => {
            MnkRules::new(m.rows.into(), m.cols.into(), m.k.into(), max_cells)
                .map(RuleSet::Mnk)
                .map_err(|e| invalid("rules.mnk", e))
        }
        Some(pb::rule_set::Kind::ConnectFour(c)) => {
            let both_lines = match pb::PopBothLines::try_from(c.pop_both_lines) {
                Ok(pb::PopBothLines::MoverWins | pb::PopBothLines::Unspecified) => {
                    PopBothLines::MoverWins
                }
                Ok(pb::PopBothLines::OpponentWins) => PopBothLines::OpponentWins,
                Err(_) => {
                    return Err(FieldError::new(
                        "rules.connect_four.pop_both_lines",
                        format!("{} is not one of the PopBothLines values", c.pop_both_lines),
                        ErrorReason::InvalidRules,
                    ));
                }
            };
            let rules = ConnectFourRules::new(
                c.rows.map(i64::from),
                c.cols.map(i64::from),
                c.k.map(i64::from),
                max_cells,
            )
            .map_err(|e| invalid("rules.connect_four", e))?;
            Ok(RuleSet::ConnectFour(if c.pop_out {
                rules.with_pop_out(both_lines)
            } else {
                rules
            }))
        }
        Some(pb::rule_set::Kind::Gomoku(g)) => {
            let overline = match pb::OverlineRule::try_from(g.overline) {
                Ok(pb::OverlineRule::Freestyle) => Overline::Wins,
                Ok(pb::OverlineRule::Exact | pb::OverlineRule::Unspecified) => Overline::DoesNotWin,
                Err(_) => {
                    return Err(FieldError::new(
                        "rules.gomoku.overline",
                        format!(
                            "overline rule {} is not one of the OverlineRule values",
                            g.overline
                        ),
                        ErrorReason::InvalidRules,
                    ));
                }
            };
            GomokuRules::new(
                g.rows.map(i64::from),
                g.cols.map(i64::from),
                g.k.map(i64::from),
                overline,
                max_cells,
            )
            .map(RuleSet::Gomoku)
            .map_err(|e| invalid("rules.gomoku", e))
        }
        Some(pb::rule_set::Kind::Hex(h)) => HexRules::new(h.size.map(i64::from), h.swap, max_cells)
            .map(RuleSet::Hex)
            .map_err(|e| invalid("rules.hex", e)),
        Some(pb::rule_set::Kind::Othello(o)) => OthelloRules::new(o.size.map(i64::from))
            .map(RuleSet::Othello)
            .map_err(|e| invalid("rules.othello", e)),
        Some(pb::rule_set::Kind::Wild(w)) => WildRules::new(
            w.rows.map(i64::from),
            w.cols.map(i64::from),
            w.k.map(i64::from),
            max_cells,
        )
        .map(RuleSet::Wild)
        .map_err(|e| invalid("rules.wild", e)),
        Some(pb::rule_set::Kind::SnakesLadders(r)) => {
            let overshoot = match pb::Overshoot::try_from(r.overshoot) {
                Ok(pb::Overshoot::Unspecified | pb::Overshoot::ExactLanding) => {
                    Overshoot::ExactLanding
                }
                Ok(pb::Overshoot::BounceBack) => Overshoot::BounceBack,
                Ok(pb::Overshoot::ReachOrPass) => Overshoot::ReachOrPass,
                Err(_) => {
                    return Err(FieldError::new(
                        "rules.snakes_ladders.overshoot",
                        format!("{} is not one of the Overshoot values", r.overshoot),
                        ErrorReason::InvalidRules,
                    ));
                }
            };
            let options = SnakesLaddersOptions {
                squares: r.squares.map(i64::from),
                jumps: r
                    .jumps
                    .iter()
                    .map(|j| (i64::from(j.from), i64::from(j.to)))
                    .collect(),
                chaining: r.chaining,
                overshoot: Some(overshoot),
                dice: r.dice.map(i64::from),
                sides: r.sides.map(i64::from),
                extra_turn_on_six: r.extra_turn_on_six,
                three_sixes_forfeit: r.three_sixes_forfeit,
                seed: r.seed.ok_or_else(|| {
                    FieldError::new(
                        "rules.snakes_ladders.seed",
                        "a seed is required here (CreateGame draws one when it is absent)",
                        ErrorReason::InvalidRules,
                    )
                })?,
            };
            SnakesLaddersRules::new(options, max_cells)
                .map(RuleSet::SnakesLadders)
                .map_err(|e| invalid("rules.snakes_ladders", e))
        }
    }
}

fn jump_to_proto((from, to): (u32, u32)) -> pb::Jump {
    pb::Jump {
        from: from as i32,
        to: to as i32,
    }
}

/// A seat on the wire.
pub fn seat_to_proto(seat: &SeatInfo) -> pb::Seat {
    pb::Seat {
        player_id: seat.player_id.clone(),
        display_name: seat.display_name.clone(),
        symbol: seat.symbol.clone(),
        bot: seat.bot.as_ref().map(|bot| pb::Bot {
            engine: engine_to_proto(bot.engine) as i32,
            strength: bot.strength.into(),
            seed: Some(bot.seed),
        }),
    }
}

/// An engine on the wire.
pub fn engine_to_proto(engine: EngineKind) -> pb::Engine {
    match engine {
        EngineKind::Random => pb::Engine::Random,
        EngineKind::Minimax => pb::Engine::Minimax,
        EngineKind::ConnectFour => pb::Engine::Connect4,
        EngineKind::Mcts => pb::Engine::Mcts,
    }
}

/// An Engine value from the wire; `None` for ENGINE_UNSPECIFIED.
///
/// # Errors
/// INVALID_REQUEST naming `field` for a value outside the enum.
pub fn engine_from_proto(value: i32, field: &str) -> Result<Option<EngineKind>, FieldError> {
    match pb::Engine::try_from(value) {
        Ok(pb::Engine::Unspecified) => Ok(None),
        Ok(pb::Engine::Random) => Ok(Some(EngineKind::Random)),
        Ok(pb::Engine::Minimax) => Ok(Some(EngineKind::Minimax)),
        Ok(pb::Engine::Connect4) => Ok(Some(EngineKind::ConnectFour)),
        Ok(pb::Engine::Mcts) => Ok(Some(EngineKind::Mcts)),
        Err(_) => Err(FieldError::invalid(
            field,
            format!("{value} is not one of the Engine values"),
        )),
    }
}

/// A strength from the wire: 0 means [`MAX_STRENGTH`].
///
/// # Errors
/// `reason` naming `field` above [`MAX_STRENGTH`].
pub fn strength_from_proto(
    strength: u32,
    field: &str,
    reason: ErrorReason,
) -> Result<u8, FieldError> {
    match strength {
        0 => Ok(MAX_STRENGTH),
        s if s <= u32::from(MAX_STRENGTH) => Ok(s as u8),
        s => Err(FieldError::new(
            field,
            format!("strength {s} is not from 1 to {MAX_STRENGTH}"),
            reason,
        )),
    }
}

/// A bot seat from the wire (its seed filled in: a missing one reads as
/// 0; CreateGame fills one in before this).
fn bot_from_proto(bot: &pb::Bot, field: &str) -> Result<Bot, FieldError> {
    let engine = engine_from_proto(bot.engine, &format!("{field}.engine"))?.ok_or_else(|| {
        FieldError::new(
            format!("{field}.engine"),
            "a bot seat needs an engine",
            ErrorReason::InvalidSeats,
        )
    })?;
    Ok(Bot {
        engine,
        strength: strength_from_proto(
            bot.strength,
            &format!("{field}.strength"),
            ErrorReason::InvalidSeats,
        )?,
        seed: bot.seed.unwrap_or(0),
    })
}

/// Gives every bot seat without a seed one from `draw` (the server draws
/// them, outside the pure core).
pub fn fill_bot_seeds(seats: &mut [pb::Seat], mut draw: impl FnMut() -> u64) {
    for bot in seats.iter_mut().filter_map(|s| s.bot.as_mut()) {
        bot.seed.get_or_insert_with(&mut draw);
    }
}

/// What chose a bot's move, on the wire.
fn chooser_to_proto(chooser: &Chooser) -> pb::Chooser {
    pb::Chooser {
        engine: engine_to_proto(chooser.engine) as i32,
        strength: chooser.strength.into(),
        proven: chooser.proven,
    }
}

/// An engine's score on the wire.
pub fn score_to_proto(score: Score) -> pb::Score {
    use pb::score::Kind;
    pb::Score {
        kind: Some(match score {
            Score::Exact(v) => Kind::Exact(v),
            Score::Heuristic(v) => Kind::Heuristic(v),
            Score::WinRate(w) => Kind::WinRatePerMille(w.into()),
        }),
    }
}

/// An undo policy on the wire.
pub fn undo_policy_to_proto(policy: UndoPolicy) -> pb::UndoPolicy {
    match policy {
        UndoPolicy::LastMover => pb::UndoPolicy::LastMover,
        UndoPolicy::AnySeat => pb::UndoPolicy::AnySeat,
        UndoPolicy::Disabled => pb::UndoPolicy::Disabled,
        UndoPolicy::Consent => pb::UndoPolicy::Consent,
    }
}

/// What a game is created with on the wire: rules, seats, undo policy and
/// time control.
#[derive(Debug, Clone, Copy)]
pub struct WireConfig<'a> {
    /// The rules (required).
    pub rules: Option<&'a pb::RuleSet>,
    /// The seats.
    pub seats: &'a [pb::Seat],
    /// The UndoPolicy value.
    pub undo_policy: i32,
    /// The time control, absent when untimed.
    pub time_control: Option<&'a pb::TimeControl>,
    /// The disconnect policy, absent when none.
    pub absence: Option<&'a pb::AbsencePolicy>,
}

/// Checks wire rules, seats, undo policy and time control together: a
/// board of at most `max_cells`, seats within `limits`, time limits of at
/// least `shortest_ms` ([`crate::game::MIN_TIME_MS`] for a new game; 1 for
/// a stored one, whose limits were checked when it was created).
///
/// # Errors
/// [`FieldError`] with [`ErrorReason::InvalidRules`],
/// [`ErrorReason::InvalidSeats`], [`ErrorReason::InvalidTimeControl`], or
/// INVALID_REQUEST naming `undo_policy` for a value outside the enum.
pub fn config_from_proto(
    wire: WireConfig<'_>,
    max_cells: u64,
    limits: SeatLimits,
    shortest_ms: u64,
) -> Result<GameConfig, FieldError> {
    let WireConfig {
        rules,
        seats,
        undo_policy,
        time_control,
        absence,
    } = wire;
    let undo_policy = match pb::UndoPolicy::try_from(undo_policy) {
        Ok(pb::UndoPolicy::Unspecified | pb::UndoPolicy::LastMover) => UndoPolicy::LastMover,
        Ok(pb::UndoPolicy::AnySeat) => UndoPolicy::AnySeat,
        Ok(pb::UndoPolicy::Disabled) => UndoPolicy::Disabled,
        Ok(pb::UndoPolicy::Consent) => UndoPolicy::Consent,
        Err(_) => {
            return Err(FieldError::invalid(
                "undo_policy",
                format!("{undo_policy} is not one of the UndoPolicy values"),
            ));
        }
    };
    let rules = rules_from_proto(rules, max_cells)?;
    let seats = seats
        .iter()
        .enumerate()
        .map(|(i, s)| {
            Ok(SeatInfo {
                player_id: s.player_id.clone(),
                display_name: s.display_name.clone(),
                symbol: s.symbol.clone(),
                bot: s
                    .bot
                    .as_ref()
                    .map(|bot| bot_from_proto(bot, &format!("seats[{i}].bot")))
                    .transpose()?,
            })
        })
        .collect::<Result<_, FieldError>>()?;
    let config = GameConfig::new(rules, seats, limits)
        .map(|config| config.with_undo_policy(undo_policy))
        .map_err(|e| {
            let reason = if e.field.ends_with(".bot.engine") {
                ErrorReason::EngineUnsupported
            } else {
                ErrorReason::InvalidSeats
            };
            FieldError::new(e.field, e.why, reason)
        })?;
    let invalid =
        |e: InvalidTimeControl| FieldError::new(e.field, e.why, ErrorReason::InvalidTimeControl);
    let config = match time_control {
        None => config,
        Some(tc) => config
            .with_time_control(time_control_from_proto(tc)?, shortest_ms)
            .map_err(invalid)?,
    };
    match absence {
        None => Ok(config),
        Some(absence) => config
            .with_absence(absence_from_proto(absence)?, shortest_ms)
            .map_err(invalid),
    }
}

/// A disconnect policy on the wire.
pub fn absence_to_proto(absence: &AbsencePolicy) -> pb::AbsencePolicy {
    pb::AbsencePolicy {
        grace: Some(duration(absence.grace_ms as i64)),
        on_absence: match absence.action {
            AbsenceAction::Expire => pb::AbsenceAction::Expire,
            AbsenceAction::OfferDraw => pb::AbsenceAction::OfferDraw,
        } as i32,
    }
}

/// A disconnect policy from the wire, unchecked (see
/// [`GameConfig::with_absence`]).
///
/// # Errors
/// [`FieldError`] (INVALID_TIME_CONTROL) for a missing or malformed grace
/// period or an unknown action.
fn absence_from_proto(absence: &pb::AbsencePolicy) -> Result<AbsencePolicy, FieldError> {
    let grace = absence.grace.as_ref().ok_or_else(|| {
        FieldError::new(
            "absence.grace",
            "a grace period is required",
            ErrorReason::InvalidTimeControl,
        )
    })?;
    let action = match pb::AbsenceAction::try_from(absence.on_absence) {
        Ok(pb::AbsenceAction::Unspecified | pb::AbsenceAction::Expire) => AbsenceAction::Expire,
        Ok(pb::AbsenceAction::OfferDraw) => AbsenceAction::OfferDraw,
        Err(_) => {
            return Err(FieldError::new(
                "absence.on_absence",
                format!(
                    "{} is not one of the AbsenceAction values",
                    absence.on_absence
                ),
                ErrorReason::InvalidTimeControl,
            ));
        }
    };
    Ok(AbsencePolicy {
        grace_ms: duration_ms(grace, "absence.grace")?,
        action,
    })
}

/// A cell on the wire.
pub fn cell_to_proto(at: Coord) -> pb::Cell {
    pb::Cell {
        row: at.row as i32,
        col: at.col as i32,
    }
}

fn cell_from_proto(cell: Option<&pb::Cell>, field: &str) -> Result<Coord, FieldError> {
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
    };
    pb::Move { kind: Some(kind) }
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
            "a move is required (place, drop, pop, roll or swap)",
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

/// A stored roll (replay checks it against the position).
fn roll_from_proto(roll: &pb::RollResult) -> Result<Roll, FieldError> {
    let square = |n: i32| {
        u32::try_from(n)
            .map_err(|_| FieldError::invalid("move_played.roll.jumps", "a negative square"))
    };
    Ok(Roll {
        dice: roll.dice.clone(),
        from: roll.from,
        passed: roll.passed.clone(),
        jumps: roll
            .jumps
            .iter()
            .map(|j| Ok((square(j.from)?, square(j.to)?)))
            .collect::<Result<_, FieldError>>()?,
        to: roll.to,
        sixes_before: roll.sixes_before,
        extra_turn: roll.extra_turn,
        forfeit: match pb::Forfeit::try_from(roll.forfeit) {
            Ok(pb::Forfeit::Unspecified) => None,
            Ok(pb::Forfeit::Overshoot) => Some(Forfeit::Overshoot),
            Ok(pb::Forfeit::ThirdSix) => Some(Forfeit::ThirdSix),
            Err(_) => {
                return Err(FieldError::invalid(
                    "move_played.roll.forfeit",
                    format!("{} is not one of the Forfeit values", roll.forfeit),
                ));
            }
        },
    })
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
    Ok(match pb::Action::try_from(action) {
        Ok(pb::Action::Resign) => Action::Resign,
        Ok(pb::Action::Abort) => Action::Abort,
        Ok(pb::Action::OfferDraw) => Action::OfferDraw,
        Ok(pb::Action::AcceptDraw) => Action::AcceptDraw,
        Ok(pb::Action::DeclineDraw) => Action::DeclineDraw,
        Ok(pb::Action::RequestTakeback) => Action::RequestTakeback,
        Ok(pb::Action::AcceptTakeback) => Action::AcceptTakeback,
        Ok(pb::Action::DeclineTakeback) => Action::DeclineTakeback,
        Ok(pb::Action::Unspecified) | Err(_) => {
            return Err(FieldError::invalid(
                "action",
                format!("{action} is not an action: give one of the Action values"),
            ));
        }
    })
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
    }
}

fn end_reason_from_proto(reason: i32, field: &str) -> Result<EndReason, FieldError> {
    Ok(match pb::EndReason::try_from(reason) {
        Ok(pb::EndReason::LineCompleted) => EndReason::LineCompleted,
        Ok(pb::EndReason::BoardFull) => EndReason::BoardFull,
        Ok(pb::EndReason::Repetition) => EndReason::Repetition,
        Ok(pb::EndReason::DiscCount) => EndReason::DiscCount,
        Ok(pb::EndReason::RaceFinished) => EndReason::RaceFinished,
        Ok(pb::EndReason::Connection) => EndReason::Connection,
        Ok(pb::EndReason::Resignation) => EndReason::Resignation,
        Ok(pb::EndReason::Timeout) => EndReason::Timeout,
        Ok(pb::EndReason::Agreement) => EndReason::Agreement,
        Ok(pb::EndReason::Aborted) => EndReason::Aborted,
        Ok(pb::EndReason::Abandoned) => EndReason::Abandoned,
        Ok(pb::EndReason::Unspecified) | Err(_) => {
            return Err(FieldError::invalid(
                field,
                format!("{reason} is not an EndReason"),
            ));
        }
    })
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
fn outcome_from_proto(outcome: &pb::Outcome) -> Result<Option<Outcome>, FieldError> {
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

/// The seed field of rules that draw dice, `None` for rules without chance.
fn seed_field(rules: &mut pb::RuleSet) -> Option<&mut Option<u64>> {
    match rules.kind.as_mut() {
        Some(pb::rule_set::Kind::SnakesLadders(r)) => Some(&mut r.seed),
        _ => None,
    }
}

/// Gives rules that draw dice a seed from `draw` when the caller sent none
/// (the server draws it, outside the pure rules). Returns the seed field as
/// the caller sent it, for [`restore_sent_seed`]; `None` for rules without
/// chance.
pub fn fill_seed(rules: &mut pb::RuleSet, draw: impl FnOnce() -> u64) -> Option<Option<u64>> {
    let seed = seed_field(rules)?;
    let sent = *seed;
    *seed = Some(sent.unwrap_or_else(draw));
    Some(sent)
}

/// Puts back the seed field as sent (see [`fill_seed`]), so that a request
/// fingerprinted from `rules` is the same on a retry that sends no seed.
pub fn restore_sent_seed(rules: &mut pb::RuleSet, sent: Option<Option<u64>>) {
    if let (Some(seed), Some(sent)) = (seed_field(rules), sent) {
        *seed = sent;
    }
}

/// The GameEvent oneof case name of `event`, stored as the row's type.
pub fn event_type(event: &Event) -> &'static str {
    match event {
        Event::GameCreated(_) => "game_created",
        Event::MovePlayed { .. } => "move_played",
        Event::MoveUndone { .. } => "move_undone",
        Event::TurnPassed { .. } => "turn_passed",
        Event::SeatTokenReissued { .. } => "seat_token_reissued",
        Event::MoveRedone { .. } => "move_redone",
        Event::TimeExpired { .. } => "time_expired",
        Event::SeatOut { .. } => "seat_out",
        Event::GameEnded { .. } => "game_ended",
        Event::DrawOffered { .. } => "draw_offered",
        Event::DrawAccepted { .. } => "draw_accepted",
        Event::DrawDeclined { .. } => "draw_declined",
        Event::TakebackRequested { .. } => "takeback_requested",
        Event::TakebackAccepted { .. } => "takeback_accepted",
        Event::TakebackDeclined { .. } => "takeback_declined",
        Event::RematchRequested { .. } => "rematch_requested",
        Event::RoundStarted { .. } => "round_started",
        Event::SeatAbsent { .. } => "seat_absent",
    }
}

/// A move and what it did on the wire (a MovePlayed or a move_redone), with
/// the reason `rules` give for its outcome.
fn played_to_proto(
    seat: Seat,
    ply: u32,
    played: &Played,
    rules: &RuleSet,
    chosen_by: Option<&Chooser>,
) -> pb::MovePlayed {
    pb::MovePlayed {
        chosen_by: chosen_by.map(chooser_to_proto),
        seat: seat.0.into(),
        r#move: Some(move_to_proto(played.mv)),
        // The wire names a roll's square as the cell (0, square).
        placement: played
            .placement
            .or_else(|| played.roll.as_ref().map(|r| Coord::new(0, r.to)))
            .map(cell_to_proto),
        ply,
        outcome: played
            .outcome
            .as_ref()
            .map(|o| outcome_to_proto(Some(o), rules.end_reason(o))),
        flipped: played.flips.iter().copied().map(cell_to_proto).collect(),
        roll: played.roll.as_deref().map(roll_to_proto),
    }
}

/// An event of round `round` of a game played by `rules` on the wire and
/// in storage, recorded at `recorded_at_ms` (Unix epoch milliseconds).
pub fn event_to_proto(
    game_id: &str,
    sequence: u64,
    recorded_at_ms: i64,
    event: &Event,
    rules: &RuleSet,
    round: u32,
) -> pb::GameEvent {
    use pb::game_event::Kind;
    let action = |seat: &Seat| pb::SeatAction {
        seat: seat.0.into(),
    };
    let kind = match event {
        Event::GameCreated(config) => Kind::GameCreated(pb::GameCreated {
            rules: Some(rules_to_proto(config.rules())),
            seats: config.seats().iter().map(seat_to_proto).collect(),
            undo_policy: undo_policy_to_proto(config.undo_policy()) as i32,
            time_control: config.time_control().map(time_control_to_proto),
            absence: config.absence().map(absence_to_proto),
        }),
        Event::MovePlayed {
            seat,
            ply,
            played,
            chosen_by,
        } => Kind::MovePlayed(played_to_proto(
            *seat,
            *ply,
            played,
            rules,
            chosen_by.as_ref(),
        )),
        Event::MoveRedone { seat, ply, played } => {
            Kind::MoveRedone(played_to_proto(*seat, *ply, played, rules, None))
        }
        Event::TimeExpired { seat } => Kind::TimeExpired(pb::TimeExpired {
            seat: seat.0.into(),
        }),
        Event::SeatAbsent { seat } => Kind::SeatAbsent(pb::SeatAbsent {
            seat: seat.0.into(),
        }),
        Event::SeatOut { seat, reason } => Kind::SeatOut(pb::SeatOut {
            seat: seat.0.into(),
            reason: end_reason_to_proto(*reason) as i32,
        }),
        Event::GameEnded { outcome, reason } => Kind::GameEnded(pb::GameEnded {
            outcome: Some(outcome_to_proto(outcome.as_ref(), *reason)),
        }),
        Event::DrawOffered { seat } => Kind::DrawOffered(action(seat)),
        Event::DrawAccepted { seat } => Kind::DrawAccepted(action(seat)),
        Event::DrawDeclined { seat } => Kind::DrawDeclined(action(seat)),
        Event::TakebackRequested { seat } => Kind::TakebackRequested(action(seat)),
        Event::TakebackAccepted { seat } => Kind::TakebackAccepted(action(seat)),
        Event::TakebackDeclined { seat } => Kind::TakebackDeclined(action(seat)),
        Event::RematchRequested { seat, rotate } => Kind::RematchRequested(pb::RematchRequested {
            seat: seat.0.into(),
            rotate: *rotate,
        }),
        Event::RoundStarted { round, first } => Kind::RoundStarted(pb::RoundStarted {
            round: *round,
            first: first.0.into(),
        }),
        Event::TurnPassed { seat } => Kind::TurnPassed(pb::TurnPassed {
            seat: seat.0.into(),
        }),
        Event::SeatTokenReissued { seat } => Kind::SeatTokenReissued(pb::SeatTokenReissued {
            seat: seat.0.into(),
        }),
        Event::MoveUndone {
            seat,
            undone_sequence,
            placement,
            requested_by,
        } => Kind::MoveUndone(pb::MoveUndone {
            seat: seat.0.into(),
            undone_sequence: *undone_sequence,
            placement: placement.map(cell_to_proto),
            requested_by: requested_by.map(|s| s.0.into()),
        }),
    };
    pb::GameEvent {
        game_id: game_id.to_owned(),
        sequence,
        recorded_at: Some(timestamp(recorded_at_ms)),
        round,
        kind: Some(kind),
    }
}

/// Decodes a stored event. Rule sets are rebuilt without a cell limit (the
/// limit applied when the game was created) and seats without the server's
/// current seat limits or the check for disruptive characters in names
/// (games created before it may hold them).
///
/// # Errors
/// [`FieldError`] naming what is missing or malformed.
pub fn event_from_proto(event: &pb::GameEvent) -> Result<Event, FieldError> {
    use pb::game_event::Kind;
    match event.kind.as_ref() {
        None => Err(FieldError::invalid("kind", "an event kind is required")),
        Some(Kind::GameCreated(created)) => {
            let limits = SeatLimits {
                max_seats: crate::rules::MAX_SEATS,
                max_id_chars: usize::MAX,
                plain_text: false,
            };
            config_from_proto(
                WireConfig {
                    rules: created.rules.as_ref(),
                    seats: &created.seats,
                    undo_policy: created.undo_policy,
                    time_control: created.time_control.as_ref(),
                    absence: created.absence.as_ref(),
                },
                u64::MAX,
                limits,
                1,
            )
            .map(Event::GameCreated)
        }
        Some(Kind::MovePlayed(m)) => {
            let (seat, ply, played) = played_from_proto(m, "move_played")?;
            let chosen_by = m
                .chosen_by
                .as_ref()
                .map(|c| {
                    let engine = engine_from_proto(c.engine, "move_played.chosen_by.engine")?
                        .ok_or_else(|| {
                            FieldError::invalid(
                                "move_played.chosen_by.engine",
                                "a bot's move names its engine",
                            )
                        })?;
                    let strength = strength_from_proto(
                        c.strength,
                        "move_played.chosen_by.strength",
                        ErrorReason::InvalidRequest,
                    )?;
                    Ok::<_, FieldError>(Chooser {
                        engine,
                        strength,
                        proven: c.proven,
                    })
                })
                .transpose()?;
            Ok(Event::MovePlayed {
                seat,
                ply,
                played,
                chosen_by,
            })
        }
        Some(Kind::MoveRedone(m)) => {
            let (seat, ply, played) = played_from_proto(m, "move_redone")?;
            Ok(Event::MoveRedone { seat, ply, played })
        }
        Some(Kind::TimeExpired(t)) => Ok(Event::TimeExpired {
            seat: seat_from_proto(t.seat, "time_expired.seat")?,
        }),
        Some(Kind::SeatAbsent(a)) => Ok(Event::SeatAbsent {
            seat: seat_from_proto(a.seat, "seat_absent.seat")?,
        }),
        Some(Kind::SeatOut(s)) => Ok(Event::SeatOut {
            seat: seat_from_proto(s.seat, "seat_out.seat")?,
            reason: end_reason_from_proto(s.reason, "seat_out.reason")?,
        }),
        Some(Kind::GameEnded(e)) => {
            let outcome = e.outcome.as_ref().ok_or_else(|| {
                FieldError::invalid("game_ended.outcome", "an outcome is required")
            })?;
            Ok(Event::GameEnded {
                outcome: outcome_from_proto(outcome)?,
                reason: end_reason_from_proto(outcome.reason, "game_ended.outcome.reason")?,
            })
        }
        Some(Kind::DrawOffered(a)) => Ok(Event::DrawOffered {
            seat: seat_from_proto(a.seat, "draw_offered.seat")?,
        }),
        Some(Kind::DrawAccepted(a)) => Ok(Event::DrawAccepted {
            seat: seat_from_proto(a.seat, "draw_accepted.seat")?,
        }),
        Some(Kind::DrawDeclined(a)) => Ok(Event::DrawDeclined {
            seat: seat_from_proto(a.seat, "draw_declined.seat")?,
        }),
        Some(Kind::TakebackRequested(a)) => Ok(Event::TakebackRequested {
            seat: seat_from_proto(a.seat, "takeback_requested.seat")?,
        }),
        Some(Kind::TakebackAccepted(a)) => Ok(Event::TakebackAccepted {
            seat: seat_from_proto(a.seat, "takeback_accepted.seat")?,
        }),
        Some(Kind::TakebackDeclined(a)) => Ok(Event::TakebackDeclined {
            seat: seat_from_proto(a.seat, "takeback_declined.seat")?,
        }),
        Some(Kind::RematchRequested(r)) => Ok(Event::RematchRequested {
            seat: seat_from_proto(r.seat, "rematch_requested.seat")?,
            rotate: r.rotate,
        }),
        Some(Kind::RoundStarted(r)) => Ok(Event::RoundStarted {
            round: r.round,
            first: seat_from_proto(r.first, "round_started.first")?,
        }),
        Some(Kind::TurnPassed(p)) => Ok(Event::TurnPassed {
            seat: seat_from_proto(p.seat, "turn_passed.seat")?,
        }),
        Some(Kind::SeatTokenReissued(r)) => Ok(Event::SeatTokenReissued {
            seat: seat_from_proto(r.seat, "seat_token_reissued.seat")?,
        }),
        Some(Kind::MoveUndone(u)) => Ok(Event::MoveUndone {
            seat: seat_from_proto(u.seat, "move_undone.seat")?,
            undone_sequence: u.undone_sequence,
            placement: u
                .placement
                .as_ref()
                .map(|c| cell_from_proto(Some(c), "move_undone.placement"))
                .transpose()?,
            requested_by: u
                .requested_by
                .map(|s| seat_from_proto(s, "move_undone.requested_by"))
                .transpose()?,
        }),
    }
}

/// A move and what it did, from a MovePlayed or move_redone at `field`.
fn played_from_proto(m: &pb::MovePlayed, field: &str) -> Result<(Seat, u32, Played), FieldError> {
    let mv = move_from_proto(m.r#move.as_ref(), &format!("{field}.move"))?;
    let roll = m
        .roll
        .as_ref()
        .map(roll_from_proto)
        .transpose()?
        .map(Box::new);
    let placement = cell_from_proto(m.placement.as_ref(), &format!("{field}.placement"))?;
    // A roll's placement on the wire is its square: see above.
    let placement = match (mv, &roll) {
        (Move::Roll, Some(roll)) if placement == Coord::new(0, roll.to) => None,
        (Move::Roll, Some(_)) => {
            return Err(FieldError::invalid(
                format!("{field}.placement"),
                "a roll's placement is (0, the square it rests on)",
            ));
        }
        _ => Some(placement),
    };
    let outcome = match m.outcome.as_ref().map(outcome_from_proto).transpose()? {
        Some(None) => {
            return Err(FieldError::invalid(
                format!("{field}.outcome"),
                "a move does not end a game with no result",
            ));
        }
        Some(outcome) => outcome,
        None => None,
    };
    let played = Played {
        mv,
        placement,
        flips: m
            .flipped
            .iter()
            .map(|c| cell_from_proto(Some(c), &format!("{field}.flipped")))
            .collect::<Result<_, _>>()?,
        roll,
        passes: Vec::new(),
        outcome,
    };
    Ok((
        seat_from_proto(m.seat, &format!("{field}.seat"))?,
        m.ply,
        played,
    ))
}

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
    match pb::GameView::try_from(view) {
        Ok(pb::GameView::Unspecified | pb::GameView::Basic) => Ok(View::Basic),
        Ok(pb::GameView::Full) => Ok(View::Full),
        Err(_) => Err(FieldError::invalid(
            field,
            format!("{field} must be GAME_VIEW_BASIC or GAME_VIEW_FULL, not {view}"),
        )),
    }
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
                ..game
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Command, decide, evolve};

    #[test]
    fn every_event_kind_survives_the_round_trip_through_the_wire() {
        let seats = ["X", "O"]
            .map(|s| SeatInfo {
                player_id: s.into(),
                display_name: "n".into(),
                symbol: s.into(),
                bot: None,
            })
            .to_vec();
        let mut with_bot = seats.clone();
        with_bot[1].bot = Some(Bot {
            engine: EngineKind::ConnectFour,
            strength: 7,
            seed: u64::MAX,
        });
        let bot_config = GameConfig::new(
            RuleSet::ConnectFour(ConnectFourRules::STANDARD),
            with_bot,
            SeatLimits::default(),
        )
        .unwrap();
        let config = GameConfig::new(
            RuleSet::ConnectFour(ConnectFourRules::STANDARD),
            seats,
            SeatLimits::default(),
        )
        .unwrap()
        .with_undo_policy(UndoPolicy::AnySeat);
        let mut state = GameState::new(config.clone(), 0);
        let mut events = vec![Event::GameCreated(config)];
        for (seat, column) in [(0, 0), (1, 1), (0, 0), (1, 1), (0, 0), (1, 1), (0, 0)] {
            let cmd = Command::Play {
                seat: Seat(seat),
                mv: Move::Drop { column },
            };
            events.extend(decide(&state, &cmd, 0).unwrap());
            evolve(&mut state, events.last().unwrap(), 0);
        }
        events.extend(
            decide(
                &state,
                &Command::Undo {
                    requested_by: Some(Seat(1)),
                },
                0,
            )
            .unwrap(),
        );
        // The events around the moves, each in a shape decide gives.
        let seat = Seat(1);
        events.extend([
            Event::TimeExpired { seat },
            Event::SeatOut {
                seat,
                reason: EndReason::Timeout,
            },
            Event::GameEnded {
                outcome: None,
                reason: EndReason::Aborted,
            },
            Event::GameEnded {
                outcome: Some(Outcome::Win {
                    seat,
                    line: Vec::new(),
                }),
                reason: EndReason::Resignation,
            },
            Event::DrawOffered { seat },
            Event::DrawAccepted { seat },
            Event::DrawDeclined { seat },
            Event::TakebackRequested { seat },
            Event::TakebackAccepted { seat },
            Event::TakebackDeclined { seat },
            Event::RematchRequested { seat, rotate: true },
            Event::RoundStarted {
                round: 1,
                first: seat,
            },
        ]);
        if let Some(Event::MovePlayed {
            seat, ply, played, ..
        }) = events.get(1).cloned()
        {
            events.push(Event::MoveRedone {
                seat,
                ply,
                played: played.clone(),
            });
            events.push(Event::MovePlayed {
                seat,
                ply,
                played,
                chosen_by: Some(Chooser {
                    engine: EngineKind::Mcts,
                    strength: 3,
                    proven: false,
                }),
            });
        }
        events.push(Event::GameCreated(bot_config));
        let rules = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
        for (i, event) in events.iter().enumerate() {
            let wire = event_to_proto("g", i as u64 + 1, 1_700_000_000_123, event, &rules, 0);
            assert_eq!(timestamp_ms(wire.recorded_at.as_ref()), 1_700_000_000_123);
            assert_eq!(&event_from_proto(&wire).unwrap(), event);
        }
    }

    #[test]
    fn a_stored_roll_whose_placement_is_not_its_square_is_refused() {
        let roll = Roll {
            dice: vec![3],
            from: 0,
            passed: vec![1, 2, 3],
            jumps: Vec::new(),
            to: 3,
            sixes_before: 0,
            extra_turn: false,
            forfeit: None,
        };
        let event = Event::MovePlayed {
            seat: Seat(0),
            ply: 1,
            played: Played {
                mv: Move::Roll,
                placement: None,
                flips: Vec::new(),
                roll: Some(Box::new(roll)),
                passes: Vec::new(),
                outcome: None,
            },
            chosen_by: None,
        };
        let rules = RuleSet::SnakesLadders(
            SnakesLaddersRules::new(SnakesLaddersOptions::default(), u64::MAX).unwrap(),
        );
        let mut wire = event_to_proto("g", 2, 0, &event, &rules, 0);
        let Some(pb::game_event::Kind::MovePlayed(played)) = wire.kind.as_mut() else {
            panic!("a move")
        };
        assert_eq!(played.placement, Some(pb::Cell { row: 0, col: 3 }));
        assert_eq!(event_from_proto(&wire).unwrap(), event);
        let Some(pb::game_event::Kind::MovePlayed(played)) = wire.kind.as_mut() else {
            panic!("a move")
        };
        played.placement = Some(pb::Cell { row: 0, col: 4 });
        assert_eq!(
            event_from_proto(&wire).unwrap_err().field,
            "move_played.placement"
        );
    }

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
