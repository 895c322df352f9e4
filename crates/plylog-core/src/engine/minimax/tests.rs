//! Proven results, wins taken before blocks, the heuristic of a shallow
//! search, and the games it refuses.

use std::sync::atomic::AtomicBool;

use super::*;
use crate::engine::{Bot, EngineKind};
use crate::rules::MnkRules;

fn choose(rules: &RuleSet, cells: &[(u32, u32)], strength: u8) -> Choice {
    let mut node = Node::new(rules, rules.initial_position(2), Seat(0), vec![false; 2]);
    for (row, col) in cells {
        node.play(Move::Place(Coord::new(*row, *col)))
            .expect("legal");
    }
    let stop = AtomicBool::new(false);
    let budget = Budget {
        nodes: 1_000_000,
        stop: &stop,
    };
    MinimaxEngine
        .choose(&node, strength, &budget, &mut bot().rng(1))
        .expect("a move")
}

fn bot() -> Bot {
    Bot {
        engine: EngineKind::Minimax,
        strength: MAX_STRENGTH,
        seed: 0,
    }
}

#[test]
fn tic_tac_toe_from_the_empty_board_is_a_proven_draw() {
    let rules = RuleSet::Mnk(MnkRules::TIC_TAC_TOE);
    assert_eq!(choose(&rules, &[], MAX_STRENGTH).score, Score::Exact(0));
}

#[test]
fn it_completes_its_own_row_before_blocking() {
    let rules = RuleSet::Mnk(MnkRules::TIC_TAC_TOE);
    // X: (0,0) (0,1); O: (1,0) (1,1); X to move wins at (0,2) with 4
    // cells left empty.
    let choice = choose(&rules, &[(0, 0), (1, 0), (0, 1), (1, 1)], MAX_STRENGTH);
    assert_eq!(choice.mv, Move::Place(Coord::new(0, 2)));
    assert_eq!(choice.score, Score::Exact(5));
}

#[test]
fn it_blocks_a_row_it_cannot_beat() {
    let rules = RuleSet::Mnk(MnkRules::TIC_TAC_TOE);
    // X: (0,0) (0,1) (2,2)... O to move must block (0,2).
    let choice = choose(&rules, &[(0, 0), (1, 1), (0, 1)], MAX_STRENGTH);
    assert_eq!(choice.mv, Move::Place(Coord::new(0, 2)));
}

#[test]
fn a_shallow_search_answers_a_heuristic() {
    let rules = RuleSet::Mnk(MnkRules::new(7, 7, 4, 1000).expect("valid"));
    let choice = choose(&rules, &[(3, 3)], 2);
    assert!(matches!(choice.score, Score::Heuristic(_)), "{choice:?}");
}

#[test]
fn it_refuses_races_and_more_than_two_seats() {
    let rules = RuleSet::Mnk(MnkRules::TIC_TAC_TOE);
    assert!(MinimaxEngine.supports(&rules, 3).is_err());
    assert!(MinimaxEngine.supports(&rules, 2).is_ok());
}

#[test]
fn the_window_count_favours_the_seat_with_more_open_lines() {
    let mut board = Board::new(3, 3);
    board.put(Coord::new(1, 1), Seat(0));
    // The centre is in 4 of tic-tac-toe's 8 lines.
    assert_eq!(window_total(&board, 3), 4);
    // Kept up to date move by move, the count is the same as afresh.
    board.put(Coord::new(0, 0), Seat(1));
    assert_eq!(
        window_total(&board, 3),
        4 + window_change(&board, Coord::new(0, 0), Seat(1), 3)
    );
}
