//! The rules, the game aggregate and the engines checked without a server,
//! in one test binary: the aggregate's given/when/then and property tests
//! over every game, seat validation, real game records, OpenSpiel's traces,
//! the tic-tac-toe reference figures and the Milton Bradley
//! snakes-and-ladders board; the engines against exhaustive game trees and
//! published solver results, and MCTS against the random engine. Each
//! module's fixtures are under `tests/fixtures/`, with their sources.

mod aggregate;
mod around;
/// Chess move generation against published perft counts.
mod chess;
/// The engines against references: exhaustive game trees and published
/// solver results.
mod engines;
mod game_records;
/// MCTS against the random engine on gomoku and Othello.
mod mcts_strength;
mod openspiel_traces;
mod rules_reference;
mod seats;
mod snakes_ladders;

use plylog::game::{Event, GameConfig, Millis, SeatInfo, SeatLimits};
use plylog::rules::RuleSet;

/// The clock reading of every command and event in untimed games: time
/// plays no part in them.
const T0: Millis = 0;

/// A log of events all recorded at [`T0`], for replay.
fn untimed(log: impl IntoIterator<Item = Event>) -> impl Iterator<Item = (Event, Millis)> {
    log.into_iter().map(|event| (event, T0))
}

/// A seat of player `id` shown as `symbol`, without a display name.
fn seat(id: &str, symbol: &str) -> SeatInfo {
    SeatInfo {
        player_id: id.into(),
        display_name: String::new(),
        symbol: symbol.into(),
        bot: None,
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
