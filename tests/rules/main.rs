//! The rules and the game aggregate checked without a server, in one test
//! binary: the aggregate's given/when/then and property tests over every
//! game, seat validation, real game records, OpenSpiel's traces, the
//! tic-tac-toe reference figures and the Milton Bradley snakes-and-ladders
//! board. Each module's fixtures are under `tests/fixtures/`, with their
//! sources.

mod aggregate;
mod game_records;
mod openspiel_traces;
mod rules_reference;
mod seats;
mod snakes_ladders;

use plylog::game::{GameConfig, SeatInfo, SeatLimits};
use plylog::rules::RuleSet;

/// A seat of player `id` shown as `symbol`, without a display name.
fn seat(id: &str, symbol: &str) -> SeatInfo {
    SeatInfo {
        player_id: id.into(),
        display_name: String::new(),
        symbol: symbol.into(),
    }
}

/// A game of `rules` for the players `ids`, each shown by its first letter.
///
/// # Panics
/// When two first letters are the same, or the rules refuse the table.
fn table(rules: RuleSet, ids: &[&str]) -> GameConfig {
    let seats = ids.iter().map(|id| seat(id, &id[..1])).collect();
    GameConfig::new(rules, seats, SeatLimits::default()).expect("a valid table")
}
