//! The random engine: a uniformly random legal move.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Budget, Choice, Engine, Node, Score};
use crate::rules::{Move, Position, RuleSet, Seat};

/// A legal move of `seat` on `position` drawn uniformly from `rng`: index
/// `random_range(0..n)` into the rules' order of the `n` legal moves;
/// `None` when there is none. What [`RandomEngine`] plays, and what the
/// game layer plays for a seat whose time ran out under the random-move
/// policy.
pub fn random_move(
    rules: &RuleSet,
    position: &Position,
    seat: Seat,
    rng: &mut ChaCha8Rng,
) -> Option<Move> {
    let count = rules.legal_move_count(position, seat);
    let index = (count > 0).then(|| rng.random_range(0..count))?;
    rules.legal_moves(position, seat).nth(index)
}

/// Plays a legal move drawn uniformly from the generator (index
/// `random_range(0..n)` into the rules' order of the `n` legal moves), so
/// the same seed and moves give the same game. Plays every game, a race
/// included (where its only move is to roll). Strength and budget change
/// nothing; its score is a [`Score::WinRate`] of 1,000 divided by the seats
/// in play, as it knows nothing better.
#[derive(Debug, Clone, Copy, Default)]
pub struct RandomEngine;

impl Engine for RandomEngine {
    fn supports(&self, _: &RuleSet, _: usize) -> Result<(), String> {
        Ok(())
    }

    fn choose(
        &self,
        node: &Node<'_>,
        _: u8,
        _: &Budget<'_>,
        rng: &mut ChaCha8Rng,
    ) -> Option<Choice> {
        if node.outcome().is_some() {
            return None;
        }
        let mv = random_move(node.rules(), node.position(), node.to_move(), rng)?;
        let in_play = node.in_play().count().max(1) as u16;
        Some(Choice {
            mv,
            score: Score::WinRate(1000 / in_play),
            nodes: 1,
        })
    }
}
