//! plylog: authoritative turn-based board games over gRPC, each game an
//! event-sourced move log.
//!
//! Dependencies point one way: [`api`] -> [`registry`] -> [`game`] ->
//! [`rules`], and [`registry`] -> [`store`]. Nothing under [`rules`] or
//! [`game`] does I/O, async, or reads the clock.

pub mod api;
pub mod app;
pub mod game;
pub mod proto;
pub mod registry;
pub mod rules;
pub mod store;
pub mod tokens;
pub mod transport;
