//! plylog's pure core: the games' rules, the game aggregate and the
//! engines that bots and analysis play with.
//!
//! Dependencies point one way: [`game`] -> [`engine`] -> [`rules`]. Nothing
//! here does I/O, async, reads a clock or draws OS randomness, and that
//! holds by construction: this crate's `Cargo.toml` has no tokio, tonic,
//! sqlx, prost or hyper, and `rand` comes without its OS generators
//! (`.ci/run` checks the dependency tree). Time and seeds arrive as data in
//! commands and rules, so a game's log replays to the same state.
//!
//! # Where a change goes
//! - A new game: one file in [`rules`] and one arm in [`rules::RuleSet`].
//! - What a seat may ask for, and what it leads to (turns, offers, clocks,
//!   undo): [`game`].
//! - How a bot or an analysis chooses a move: [`engine`].
//!
//! The server (crate `plylog`) re-exports these modules as `plylog::rules`,
//! `plylog::game` and `plylog::engine`.

pub mod engine;
pub mod game;
pub mod rules;
