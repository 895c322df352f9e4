//! plylog: authoritative turn-based board games over gRPC, each game an
//! event-sourced move log.
//!
//! Dependencies point one way: [`api`] -> [`registry`] -> [`game`] ->
//! [`rules`], and [`registry`] -> [`store`]. Nothing under [`rules`] or
//! [`game`] does I/O, async, or reads the clock.
//!
//! # Example: a game's log, decided and evolved
//! ```
//! use plylog::game::{Command, Event, GameConfig, GameState, SeatInfo, SeatLimits, decide, evolve};
//! use plylog::rules::{ConnectFourRules, Move, RuleSet, Seat};
//!
//! let seat = |symbol: &str| SeatInfo {
//!     player_id: symbol.to_lowercase(),
//!     display_name: String::new(),
//!     symbol: symbol.into(),
//! };
//! let rules = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
//! let config = GameConfig::new(rules, vec![seat("R"), seat("Y")], SeatLimits::default())
//!     .expect("two seats with distinct symbols");
//! let mut state = GameState::new(config.clone());
//! let mut log = vec![Event::GameCreated(config)];
//! let play = Command::Play { seat: Seat(0), mv: Move::Drop { column: 3 } };
//! for event in decide(&state, &play).expect("a legal drop") {
//!     evolve(&mut state, &event);
//!     log.push(event);
//! }
//! assert_eq!((state.sequence(), state.to_move()), (2, Some(Seat(1))));
//! // The same seat again is refused, and nothing changes.
//! assert!(decide(&state, &play).is_err());
//! // The log replays to the same state.
//! assert_eq!(GameState::replay(log).expect("a well-formed log"), state);
//! ```

pub mod api;
pub mod app;
pub mod game;
pub mod proto;
pub mod registry;
pub mod rules;
pub mod store;
pub mod tokens;
pub mod transport;
