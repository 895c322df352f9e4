//! plylog: authoritative turn-based board games over gRPC, each game an
//! event-sourced move log.
//!
//! Dependencies point one way: [`api`] -> [`registry`] -> [`game`] ->
//! [`engine`] -> [`rules`], and [`registry`] -> [`store`]. [`rules`],
//! [`engine`] and [`game`] are the crate `plylog-core` (crates/plylog-core),
//! re-exported here: it has no dependency that does I/O, async, reads the
//! clock or draws OS randomness, so the core stays pure by construction.
//! [`ops`] holds the operator's commands (`plylog games`, `export`,
//! `verify`, ...), which read the [`store`] without a server. [`app`]
//! starts and stops the server. The load generator, `plylog bench`, is a
//! crate of its own (crates/plylog-bench), a client of this one.
//!
//! # Where a change goes
//! Each folder's `mod.rs` has the map of its own files.
//! - A game's rules, turn order, offers, clocks, undo, engines: the core
//!   crate (`plylog-core`; its front page says which module).
//! - A new RPC or field: `proto/plylog/v1/*.proto`, its handler in [`api`]
//!   (`api/mod.rs`; field checks, paging, admission and request traits in
//!   the files beside it) and its conversion in [`proto`]`::convert` (one
//!   file per vocabulary; the stored event format, the storage schema, is
//!   `proto/event_format.rs`).
//! - What a live game does with a command (authorize, decide, commit,
//!   reply), its timers, bots, subscriptions and seat tokens: the game
//!   actor, [`registry`]`/actor/`, one file per job. Creating games, the
//!   read side, analysis and cluster work: the files beside it in
//!   [`registry`].
//! - Storage: [`store`] (the `EventStore` trait, SQLite, PostgreSQL with its
//!   SQL in `.sql` files, opening a database, the integrity chain).
//! - Start-up, settings, the router stack, health and TLS: [`app`]; the
//!   connection layer under it: [`transport`]; the dashboard: [`web`].
//! - Watching it: [`metrics`] and [`telemetry`]; operating it: [`ops`];
//!   seat-token secrets: [`tokens`].
//!
//! # Example: a game's log, decided and evolved
//! Commands carry the server's clock reading and events the time they were
//! recorded at (Unix epoch milliseconds), so replay gives the same clocks.
//! ```
//! use plylog::game::{
//!     Command, Event, Fischer, GameConfig, GameState, MIN_TIME_MS, SeatInfo, SeatLimits,
//!     TimeControl, decide, evolve,
//! };
//! use plylog::rules::{ConnectFourRules, EndReason, Move, Outcome, RuleSet, Seat};
//!
//! let seat = |symbol: &str| SeatInfo {
//!     player_id: symbol.to_lowercase(),
//!     display_name: String::new(),
//!     symbol: symbol.into(),
//!     bot: None,
//! };
//! let rules = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
//! // Five minutes each, two seconds more after each move.
//! let clock = Fischer { initial_ms: 300_000, increment_ms: 2_000 };
//! let timed = TimeControl { per_move_ms: None, clock: Some(clock), on_expiry: Default::default(), seed: 7 };
//! let config = GameConfig::new(rules, vec![seat("R"), seat("Y")], SeatLimits::default())
//!     .expect("two seats with distinct symbols")
//!     .with_time_control(timed, MIN_TIME_MS)
//!     .expect("a usable time control");
//! let t0 = 1_700_000_000_000;
//! let mut state = GameState::new(config.clone(), t0);
//! let mut log = vec![(Event::GameCreated(config), t0)];
//! let play = Command::Play { seat: Some(Seat(0)), mv: Move::Drop { column: 3 } };
//! // Seat 0 thinks for ten seconds.
//! for event in decide(&state, &play, t0 + 10_000).expect("a legal drop") {
//!     evolve(&mut state, &event, t0 + 10_000);
//!     log.push((event, t0 + 10_000));
//! }
//! assert_eq!((state.sequence(), state.to_move()), (2, Some(Seat(1))));
//! assert_eq!(state.clocks().remaining_ms[0], 292_000);
//! // The same seat again is refused, and nothing changes.
//! assert!(decide(&state, &play, t0 + 11_000).is_err());
//! // The log replays to the same state, clocks included.
//! assert_eq!(GameState::replay(log.clone()).expect("a well-formed log"), state);
//! // Seat 1 lets its five minutes run out: the timer's command decides the
//! // timeout, and under the default policy seat 0 wins.
//! assert!(decide(&state, &Command::Timeout, t0 + 309_999).unwrap().is_empty());
//! let timeout = decide(&state, &Command::Timeout, t0 + 310_000).unwrap();
//! assert_eq!(
//!     timeout[1],
//!     Event::GameEnded {
//!         outcome: Some(Outcome::Win { seat: Seat(0), line: vec![] }),
//!         reason: EndReason::Timeout,
//!     }
//! );
//! ```

pub mod api;
pub mod app;
pub mod compression;
pub mod connect;
pub mod metrics;
pub mod ops;
pub mod proto;
pub mod registry;
pub mod store;
pub mod telemetry;
pub mod tokens;
pub mod transport;
pub mod web;

pub use plylog_core::{engine, game, rules};
