//! Placeholder, filled in by its own commit.

use rand_chacha::ChaCha8Rng;

use super::{Budget, Choice, Engine, Node};
use crate::rules::RuleSet;

/// Placeholder.
#[derive(Debug, Clone, Copy, Default)]
pub struct MctsEngine;

impl Engine for MctsEngine {
    fn supports(&self, _: &RuleSet, _: usize) -> Result<(), String> {
        Err("not yet".into())
    }

    fn choose(&self, _: &Node<'_>, _: u8, _: &Budget<'_>, _: &mut ChaCha8Rng) -> Option<Choice> {
        None
    }
}
