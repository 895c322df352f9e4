//! The bitboard and its move strings, the table's size, the solver's scores
//! against Pons' positions, and the engine's choices at each strength.

use std::sync::atomic::AtomicBool;

use rand::SeedableRng;

use super::table::TABLE_ENTRIES;
use super::*;
use crate::rules::{Outcome, Position, Seat};

fn unlimited(stop: &AtomicBool) -> Budget<'_> {
    Budget {
        nodes: u64::MAX,
        stop,
    }
}

fn solve(moves: &str) -> i32 {
    let stop = AtomicBool::new(false);
    let position = C4Bitboard::from_moves(moves).expect("a legal sequence");
    Solver::new()
        .solve(&position, &unlimited(&stop))
        .expect("no limit")
}

/// The crate's position after `moves` (Pons' notation), and the seat
/// to move.
fn rules_position(moves: &str) -> (RuleSet, Position, Seat) {
    let rules = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
    let mut position = rules.initial_position(2);
    let mut seat = Seat(0);
    for ch in moves.chars() {
        let column = ch.to_digit(10).expect("a digit") - 1;
        let played = rules
            .play(&position, seat, Move::Drop { column })
            .expect("legal");
        assert_eq!(played.outcome, None, "{moves}: the game ended");
        rules.apply(&mut position, seat, &played);
        seat = Seat(1 - seat.0);
    }
    (rules, position, seat)
}

#[test]
fn move_strings_are_checked() {
    assert_eq!(C4Bitboard::from_moves("4453").map(|p| p.moves()), Ok(4));
    assert_eq!(C4Bitboard::from_moves(""), Ok(C4Bitboard::new()));
    assert_eq!(
        C4Bitboard::from_moves("448"),
        Err(BitboardError::NotAColumn {
            index: 3,
            found: '8'
        })
    );
    assert_eq!(
        C4Bitboard::from_moves("40"),
        Err(BitboardError::NotAColumn {
            index: 2,
            found: '0'
        })
    );
    assert_eq!(
        C4Bitboard::from_moves("1111111"),
        Err(BitboardError::ColumnFull {
            index: 7,
            column: 1
        })
    );
    assert_eq!(
        C4Bitboard::from_moves("1212121"),
        Err(BitboardError::GameOver { index: 7 })
    );
    assert_eq!(
        "1212121".parse::<C4Bitboard>().unwrap_err().to_string(),
        "move 7 completes a four: the game is over"
    );
}

#[test]
fn the_table_fits_in_32_mib_and_its_size_is_a_prime_above_2_to_the_17() {
    const { assert!(Solver::TABLE_BYTES <= 32 << 20) };
    const { assert!(TABLE_ENTRIES > 1 << 17) };
    let n = TABLE_ENTRIES;
    assert!(
        (2..)
            .take_while(|d| d * d <= n)
            .all(|d| !n.is_multiple_of(d))
    );
}

#[test]
fn a_win_with_the_next_disc_scores_by_the_discs_placed() {
    // The first player holds columns 1 to 3 of the bottom row: its
    // fourth disc, in column 4, wins.
    assert_eq!(solve("112233"), 18);
    let position = C4Bitboard::from_moves("112233").unwrap();
    assert!(position.is_winning_move(3));
    assert!(!position.is_winning_move(4));
    // Three stacked in column 1: the fourth on top wins.
    assert_eq!(solve("121212"), 18);
    // The first player holds columns 2 to 4 with both ends open: the
    // second player blocks one end, the first wins with its fourth
    // disc at the other.
    assert_eq!(solve("22334"), -18);
    // A random game's 32 discs; the first player wins with its 17th,
    // in column 2 only.
    let late = C4Bitboard::from_moves("75137177345565475523113433766444").unwrap();
    let stop = AtomicBool::new(false);
    let scores = Solver::new()
        .analyze(&late, &unlimited(&stop))
        .expect("no limit");
    assert_eq!(scores[1], Some(5));
    assert!(
        scores
            .iter()
            .enumerate()
            .all(|(col, s)| col == 1 || *s < Some(5))
    );
}

#[test]
fn the_best_column_of_analyze_scores_as_the_position() {
    let stop = AtomicBool::new(false);
    let mut solver = Solver::new();
    for moves in [
        "2252576253462244111563365343671351441",
        "7422341735647741166133573473242566",
        "52753311433677442422121",
    ] {
        let position = C4Bitboard::from_moves(moves).unwrap();
        let score = solver.solve(&position, &unlimited(&stop));
        let scores = solver.analyze(&position, &unlimited(&stop)).unwrap();
        assert_eq!(scores.iter().flatten().max().copied(), score, "{moves}");
        for col in 0..7 {
            assert_eq!(scores[col as usize].is_some(), position.can_play(col));
        }
    }
}

#[test]
fn known_positions_get_their_pons_scores() {
    // The first lines of Pons' End-Easy, Middle-Easy and Begin-Easy sets.
    assert_eq!(solve("2252576253462244111563365343671351441"), -1);
    assert_eq!(solve("7422341735647741166133573473242566"), 1);
    assert_eq!(solve("5554224333234511764415115"), 4);
    assert_eq!(solve("52753311433677442422121"), 8);
    assert_eq!(solve("32164625"), 11);
}

#[test]
fn a_full_board_is_a_draw() {
    // A random game that filled the board without a four.
    let drawn = "656173566152215676422337377473141445425321";
    assert_eq!(solve(drawn), 0);
    assert_eq!(solve(&drawn[..41]), 0);
    let full = C4Bitboard::from_moves(drawn).unwrap();
    assert_eq!(full.moves(), 42);
    assert!((0..7).all(|col| !full.can_play(col)));
    let stop = AtomicBool::new(false);
    assert_eq!(
        Solver::new().analyze(&full, &unlimited(&stop)),
        Some([None; 7])
    );
}

#[test]
fn a_position_built_through_the_rules_is_the_same_bitboard() {
    for moves in ["", "4", "4453", "2252576253462244111563365343671351441"] {
        let (_, position, seat) = rules_position(moves);
        assert_eq!(
            C4Bitboard::from_position(&position, seat),
            C4Bitboard::from_moves(moves),
            "{moves}"
        );
        assert_eq!(
            C4Bitboard::from_position(&position, Seat(1 - seat.0)),
            Err(BitboardError::WrongTurn {
                to_move: Seat(1 - seat.0),
                first: (moves.len() as u32).div_ceil(2),
                second: moves.len() as u32 / 2,
            })
        );
    }
}

#[test]
fn other_games_and_sizes_are_refused() {
    let small = RuleSet::ConnectFour(ConnectFourRules::new(Some(5), None, None, 100).unwrap());
    let position = small.initial_position(2);
    assert_eq!(
        C4Bitboard::from_position(&position, Seat(0)),
        Err(BitboardError::NotStandard)
    );
    assert!(ConnectFourEngine.supports(&small, 2).is_err());
    let standard = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
    assert_eq!(ConnectFourEngine.supports(&standard, 2), Ok(()));
    assert_eq!(
        ConnectFourEngine.supports(&standard, 3),
        Err("the connect4 engine plays only standard 7x6 connect four for two seats".into())
    );
}

#[test]
fn a_spent_budget_or_a_stop_gives_no_score() {
    let position = C4Bitboard::from_moves("32164625").unwrap();
    let stop = AtomicBool::new(false);
    let mut solver = Solver::new();
    let tight = Budget {
        nodes: 10,
        stop: &stop,
    };
    assert_eq!(solver.solve(&position, &tight), None);
    assert_eq!(solver.analyze(&position, &tight), None);
    let stopped = AtomicBool::new(true);
    assert_eq!(solver.solve(&position, &unlimited(&stopped)), None);
    // What the interrupted searches stored is sound.
    assert_eq!(solver.solve(&position, &unlimited(&stop)), Some(11));
}

#[test]
fn a_reset_solver_searches_as_a_new_one() {
    let stop = AtomicBool::new(false);
    let first = C4Bitboard::from_moves("52753311433677442422121").unwrap();
    let other = C4Bitboard::from_moves("5554224333234511764415115").unwrap();
    let mut solver = Solver::new();
    solver.solve(&first, &unlimited(&stop));
    let fresh = solver.nodes();
    solver.solve(&other, &unlimited(&stop));
    solver.reset();
    assert_eq!(solver.nodes(), 0);
    solver.solve(&first, &unlimited(&stop));
    assert_eq!(solver.nodes(), fresh);
    // Without a reset, the table answers at once.
    solver.reset();
    solver.solve(&first, &unlimited(&stop));
    let before = solver.nodes();
    solver.solve(&first, &unlimited(&stop));
    assert!(solver.nodes() - before < fresh);
}

fn choose(moves: &str, strength: u8, nodes: u64, seed: u64) -> Choice {
    let (rules, position, seat) = rules_position(moves);
    let node = Node::new(&rules, position, seat, vec![false; 2]);
    let stop = AtomicBool::new(false);
    let budget = Budget { nodes, stop: &stop };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    ConnectFourEngine
        .choose(&node, strength, &budget, &mut rng)
        .expect("a legal move")
}

#[test]
fn every_strength_takes_a_win_in_one() {
    for strength in 1..=MAX_STRENGTH {
        let choice = choose("112233", strength, 100_000, 7);
        assert_eq!(choice.mv, Move::Drop { column: 3 }, "strength {strength}");
    }
    assert_eq!(choose("112233", 10, 1_000_000, 7).score, Score::Exact(18));
    assert_eq!(
        choose("112233", 1, 1_000_000, 7).score,
        Score::Heuristic(18 * WIN_UNIT)
    );
}

#[test]
fn every_strength_blocks_a_threat() {
    // The first player holds columns 1 to 3 of the bottom row and
    // threatens column 4 (index 3).
    for strength in 1..=MAX_STRENGTH {
        let choice = choose("11223", strength, 100_000, 3);
        assert_eq!(choice.mv, Move::Drop { column: 3 }, "strength {strength}");
    }
}

#[test]
fn perfect_play_picks_a_column_of_the_best_exact_score() {
    let moves = "52753311433677442422121";
    let choice = choose(moves, MAX_STRENGTH, u64::MAX, 1);
    assert_eq!(choice.score, Score::Exact(8));
    let stop = AtomicBool::new(false);
    let position = C4Bitboard::from_moves(moves).unwrap();
    let scores = Solver::new().analyze(&position, &unlimited(&stop)).unwrap();
    let Move::Drop { column } = choice.mv else {
        panic!("a drop")
    };
    assert_eq!(scores[column as usize], Some(8));
    // The same seed gives the same move.
    assert_eq!(choose(moves, MAX_STRENGTH, u64::MAX, 1), choice);
}

#[test]
fn a_spent_budget_falls_back_to_a_legal_heuristic_move() {
    for nodes in [0, 100, 5_000] {
        let choice = choose("4", MAX_STRENGTH, nodes, 5);
        assert!(matches!(choice.score, Score::Heuristic(_)), "{nodes}");
        assert!(matches!(choice.mv, Move::Drop { column } if column < 7));
    }
    // A full column is never chosen.
    let choice = choose("444444", 3, 0, 5);
    assert_ne!(choice.mv, Move::Drop { column: 3 });
}

fn analysis(moves: &str, strength: u8, nodes: u64) -> Analysis {
    let (rules, position, seat) = rules_position(moves);
    let node = Node::new(&rules, position, seat, vec![false; 2]);
    let stop = AtomicBool::new(false);
    let budget = Budget { nodes, stop: &stop };
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    ConnectFourEngine
        .analyze(&node, strength, &budget, &mut rng)
        .expect("an analysis")
}

#[test]
fn the_analysis_scores_every_column_as_pons_does() {
    // The first player wins at once in column 2 (index 1), with its
    // 17th disc: 22 - 17 = 5.
    let moves = "75137177345565475523113433766444";
    let exact = analysis(moves, MAX_STRENGTH, u64::MAX);
    let stop = AtomicBool::new(false);
    let position = C4Bitboard::from_moves(moves).unwrap();
    let scores = Solver::new().analyze(&position, &unlimited(&stop)).unwrap();
    let expected: Vec<(Move, Score)> = (0..7)
        .filter_map(|column| {
            Some((
                Move::Drop { column },
                Score::Exact(scores[column as usize]?),
            ))
        })
        .collect();
    assert_eq!(exact.moves, expected);
    assert_eq!(exact.score, Score::Exact(5));
    // Weaker: a heuristic value for every legal column, the immediate
    // win still the best.
    let rough = analysis(moves, 3, u64::MAX);
    assert_eq!(rough.moves.len(), expected.len());
    assert!(
        rough
            .moves
            .iter()
            .all(|(_, s)| matches!(s, Score::Heuristic(_)))
    );
    assert_eq!(rough.score, Score::Heuristic(5 * WIN_UNIT));
    assert_eq!(rough.moves[1].1, Score::Heuristic(5 * WIN_UNIT));
    // Without the budget to solve: the win is proven all the same, the
    // other columns keep heuristic values below it.
    let spent = analysis(moves, MAX_STRENGTH, 0);
    assert_eq!(spent.score, Score::Exact(5));
    for (i, (mv, score)) in spent.moves.iter().enumerate() {
        assert_eq!(*mv, expected[i].0);
        match i {
            1 => assert_eq!(*score, Score::Exact(5)),
            _ => assert!(matches!(score, Score::Heuristic(v) if *v < 5 * WIN_UNIT)),
        }
    }
}

#[test]
fn a_finished_game_has_no_move() {
    let (rules, position, seat) = rules_position("112233");
    let mut node = Node::new(&rules, position, seat, vec![false; 2]);
    node.play(Move::Drop { column: 3 }).unwrap();
    assert!(matches!(node.outcome(), Some(Outcome::Win { .. })));
    let stop = AtomicBool::new(false);
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    assert_eq!(
        ConnectFourEngine.choose(&node, MAX_STRENGTH, &unlimited(&stop), &mut rng),
        None
    );
    assert_eq!(
        C4Bitboard::from_position(node.position(), node.to_move()),
        Err(BitboardError::AlreadyWon)
    );
}
