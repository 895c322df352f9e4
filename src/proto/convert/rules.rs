//! The rule set of every game on the wire, and the dice seed the server
//! draws for rules with chance.

use super::chess::{chess_rules_from_proto, chess_rules_to_proto};
use super::{FieldError, enum_field};
use crate::proto::{self as pb, ErrorReason};
use crate::rules::{
    ConnectFourRules, GomokuRules, HexRules, MnkRules, OthelloRules, Overline, Overshoot,
    PopBothLines, RuleSet, SnakesLaddersOptions, SnakesLaddersRules, WildRules,
};

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
        RuleSet::Chess(r) => pb::rule_set::Kind::Chess(chess_rules_to_proto(r)),
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
            "a rule set is required (mnk, connect_four, gomoku, wild, othello, snakes_ladders, hex or chess)",
            ErrorReason::InvalidRules,
        )),
        Some(pb::rule_set::Kind::Mnk(m)) => {
            MnkRules::new(m.rows.into(), m.cols.into(), m.k.into(), max_cells)
                .map(RuleSet::Mnk)
                .map_err(|e| invalid("rules.mnk", e))
        }
        Some(pb::rule_set::Kind::ConnectFour(c)) => {
            let both_lines = match enum_field(
                c.pop_both_lines,
                "rules.connect_four.pop_both_lines",
                ErrorReason::InvalidRules,
            )? {
                pb::PopBothLines::MoverWins | pb::PopBothLines::Unspecified => {
                    PopBothLines::MoverWins
                }
                pb::PopBothLines::OpponentWins => PopBothLines::OpponentWins,
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
            let overline = match enum_field(
                g.overline,
                "rules.gomoku.overline",
                ErrorReason::InvalidRules,
            )? {
                pb::OverlineRule::Freestyle => Overline::Wins,
                pb::OverlineRule::Exact | pb::OverlineRule::Unspecified => Overline::DoesNotWin,
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
        Some(pb::rule_set::Kind::Chess(c)) => chess_rules_from_proto(c).map(RuleSet::Chess),
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
            let overshoot = match enum_field(
                r.overshoot,
                "rules.snakes_ladders.overshoot",
                ErrorReason::InvalidRules,
            )? {
                pb::Overshoot::Unspecified | pb::Overshoot::ExactLanding => Overshoot::ExactLanding,
                pb::Overshoot::BounceBack => Overshoot::BounceBack,
                pb::Overshoot::ReachOrPass => Overshoot::ReachOrPass,
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

pub(super) fn jump_to_proto((from, to): (u32, u32)) -> pb::Jump {
    pb::Jump {
        from: from as i32,
        to: to as i32,
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
