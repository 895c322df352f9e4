//! How each rule set is named.

use super::*;

#[test]
fn each_rule_set_is_named_with_what_sets_it_apart_from_the_standard_game() {
    let max = u64::MAX;
    let named = [
        (RuleSet::Mnk(MnkRules::TIC_TAC_TOE), "tic-tac-toe"),
        (
            RuleSet::Mnk(MnkRules::new(4, 5, 3, max).unwrap()),
            "mnk 4x5 k=3",
        ),
        (
            RuleSet::ConnectFour(ConnectFourRules::STANDARD),
            "connect-four",
        ),
        (
            RuleSet::ConnectFour(
                ConnectFourRules::new(Some(8), None, Some(5), max)
                    .unwrap()
                    .with_pop_out(PopBothLines::MoverWins),
            ),
            "connect-four 8x7 k=5 pop-out",
        ),
        (
            RuleSet::Gomoku(GomokuRules::new(None, None, None, Overline::DoesNotWin, max).unwrap()),
            "gomoku 15x15",
        ),
        (
            RuleSet::Gomoku(
                GomokuRules::new(Some(19), Some(19), Some(6), Overline::Wins, max).unwrap(),
            ),
            "gomoku 19x19 k=6 freestyle",
        ),
        (
            RuleSet::Wild(WildRules::new(None, None, None, max).unwrap()),
            "wild tic-tac-toe",
        ),
        (
            RuleSet::Wild(WildRules::new(Some(4), None, None, max).unwrap()),
            "wild 4x3 k=3",
        ),
        (
            RuleSet::Othello(OthelloRules::new(Some(6)).unwrap()),
            "othello 6x6",
        ),
        (
            RuleSet::SnakesLadders(
                SnakesLaddersRules::new(SnakesLaddersOptions::default(), max).unwrap(),
            ),
            "snakes-and-ladders 100",
        ),
        (
            RuleSet::Hex(HexRules::new(None, false, max).unwrap()),
            "hex 11x11",
        ),
        (
            RuleSet::Hex(HexRules::new(Some(7), true, max).unwrap()),
            "hex 7x7 swap",
        ),
    ];
    for (rules, name) in named {
        assert_eq!(rules.to_string(), name);
    }
}
