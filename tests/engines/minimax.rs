//! The minimax bot never loses tic-tac-toe: checked over the whole game
//! tree, against every sequence of the opponent's replies, as either seat.

use std::sync::atomic::AtomicBool;

use plylog::engine::{Bot, Budget, EngineKind, MAX_STRENGTH, Node};
use plylog::rules::{MnkRules, Outcome, RuleSet, Seat};

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
