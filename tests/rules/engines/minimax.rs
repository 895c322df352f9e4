//! The minimax bot never loses tic-tac-toe: checked over the whole game
//! tree, against every sequence of the opponent's replies, as either seat.

use std::sync::atomic::AtomicBool;

use plylog::engine::{Bot, Budget, EngineKind, MAX_STRENGTH, Node};
use plylog::rules::{Coord, MnkRules, Move, Outcome, RuleSet, Seat};

/// What the walk saw: games ended, and how.
#[derive(Debug, Default)]
struct Tally {
    bot_wins: u64,
    draws: u64,
    bot_losses: u64,
    bot_moves: u64,
}

/// Plays on from `node`: the bot (at `bot`) moves as its engine says, the
/// opponent tries every legal move; each finished game is tallied.
fn walk(node: &mut Node<'_>, bot: Seat, tally: &mut Tally) {
    if let Some(outcome) = node.outcome() {
        match outcome {
            Outcome::Draw => tally.draws += 1,
            Outcome::Win { seat, .. } if *seat == bot => tally.bot_wins += 1,
            Outcome::Win { .. } => tally.bot_losses += 1,
        }
        return;
    }
    if node.to_move() == bot {
        let engine = Bot {
            engine: EngineKind::Minimax,
            strength: MAX_STRENGTH,
            seed: 0,
        };
        let stop = AtomicBool::new(false);
        let budget = Budget {
            nodes: 1_000_000,
            stop: &stop,
        };
        let choice = engine
            .engine
            .engine()
            .choose(node, engine.strength, &budget, &mut engine.rng(0))
            .expect("the bot has a move while the game is on");
        tally.bot_moves += 1;
        let step = node.play(choice.mv).expect("the bot plays a legal move");
        walk(node, bot, tally);
        node.undo(&step);
    } else {
        for mv in node.moves() {
            let step = node.play(mv).expect("a listed move is legal");
            walk(node, bot, tally);
            node.undo(&step);
        }
    }
}

#[test]
fn the_minimax_bot_never_loses_tic_tac_toe_against_any_sequence_of_replies() {
    let rules = RuleSet::Mnk(MnkRules::TIC_TAC_TOE);
    for bot in [Seat(0), Seat(1)] {
        let mut node = Node::new(&rules, rules.initial_position(2), Seat(0), vec![false; 2]);
        let mut tally = Tally::default();
        walk(&mut node, bot, &mut tally);
        eprintln!("minimax as {bot}: {tally:?}");
        assert_eq!(tally.bot_losses, 0, "minimax as {bot} lost: {tally:?}");
        // Every reply was tried: the opponent's first moves alone give 9
        // (as seat 1) or 8 (as seat 0) subtrees, each with finished games.
        assert!(tally.draws + tally.bot_wins >= 8, "{tally:?}");
    }
}

/// A 1000x1000 board with five in a row (k=5), three stones on it: seat
/// 0's at (500,500) and (500,501), seat 1's at (501,500); seat 1 to move.
fn huge_board() -> (RuleSet, Vec<(u32, u32)>) {
    let rules = RuleSet::Mnk(MnkRules::new(1000, 1000, 5, 1_000_000).expect("valid"));
    (rules, vec![(500, 500), (501, 500), (500, 501)])
}

fn node_after<'r>(rules: &'r RuleSet, cells: &[(u32, u32)]) -> Node<'r> {
    let mut node = Node::new(rules, rules.initial_position(2), Seat(0), vec![false; 2]);
    for (row, col) in cells {
        node.play(Move::Place(Coord::new(*row, *col)))
            .expect("legal");
    }
    node
}

#[test]
fn on_a_million_cells_minimax_searches_near_the_stones_within_its_node_budget() {
    let (rules, cells) = huge_board();
    let node = node_after(&rules, &cells);
    let stop = AtomicBool::new(false);
    let budget = Budget {
        nodes: 20_000,
        stop: &stop,
    };
    let bot = Bot {
        engine: EngineKind::Minimax,
        strength: MAX_STRENGTH,
        seed: 0,
    };
    let choice = bot
        .engine
        .engine()
        .choose(&node, bot.strength, &budget, &mut bot.rng(4))
        .expect("a move");
    assert!(choice.nodes <= 20_000, "{choice:?}");
    let Move::Place(at) = choice.mv else {
        panic!("a placement: {choice:?}")
    };
    // Every move searched is within two king steps of a stone: a search of
    // every legal move would, within this budget, not get past the first
    // rows of the board.
    assert!(
        cells
            .iter()
            .any(|(r, c)| at.row.abs_diff(*r) <= 2 && at.col.abs_diff(*c) <= 2),
        "{at} is far from the stones"
    );
    // Blocks seat 0's pair's open end or builds next to it, as a search
    // of the neighbourhood should: the move is deterministic.
    let again = bot
        .engine
        .engine()
        .choose(&node, bot.strength, &budget, &mut bot.rng(4))
        .expect("a move");
    assert_eq!(again, choice);
}

#[test]
fn a_stopped_search_does_no_more_work_and_an_analysis_then_has_no_answer() {
    let (rules, cells) = huge_board();
    let node = node_after(&rules, &cells);
    let stop = AtomicBool::new(true);
    let budget = Budget {
        nodes: u64::MAX,
        stop: &stop,
    };
    let bot = Bot {
        engine: EngineKind::Minimax,
        strength: MAX_STRENGTH,
        seed: 0,
    };
    let engine = bot.engine.engine();
    // Stopped before it starts: no move, rather than a search of 1,024
    // nodes per move of the million the board has.
    assert_eq!(engine.choose(&node, 3, &budget, &mut bot.rng(4)), None);
    assert_eq!(engine.analyze(&node, 3, &budget, &mut bot.rng(4)), None);
    let mcts = EngineKind::Mcts.engine();
    assert_eq!(mcts.analyze(&node, 3, &budget, &mut bot.rng(4)), None);
}
