//! The registry's limits and timings.

use std::time::Duration;

use super::{Clock, EngineSettings, HeavyReadSettings};
use crate::game::SeatLimits;

/// Limits and timings of a registry.
#[derive(Debug, Clone)]
pub struct RegistrySettings {
    /// Largest board a new game may have, in cells (default 1,000,000).
    pub max_cells: u64,
    /// Seat count and name length limits.
    pub seat_limits: SeatLimits,
    /// How long a game with no traffic and no subscribers stays in memory.
    pub idle_timeout: Duration,
    /// Commands a game's mailbox holds before further ones are refused with
    /// UNAVAILABLE / OVERLOADED.
    pub mailbox: usize,
    /// Live events buffered per game for subscribers; a subscriber further
    /// behind catches up from the store.
    pub broadcast_capacity: usize,
    /// How long a followed stream stays silent before a heartbeat.
    pub heartbeat_interval: Duration,
    /// Event streams open at once on this server (default 10,000).
    pub max_streams: usize,
    /// Event streams open at once on one game (default 1,000).
    pub max_streams_per_game: usize,
    /// Games held in memory at once (default 100,000). An idle game leaves
    /// after `idle_timeout`, or sooner, least recently used first, to make
    /// room for another.
    pub max_live_games: usize,
    /// What the games held in memory may weigh in all, in bytes (default 2
    /// GiB, estimated per game from its board, moves, recorded requests and
    /// buffers). Idle games are evicted, least recently used first, to keep
    /// under it.
    pub max_live_bytes: usize,
    /// Where the server reads the time for commands, events and deadlines
    /// (the system clock; tests set a manual one).
    pub clock: Clock,
    /// Limits on bot moves and analyses.
    pub engines: EngineSettings,
    /// Limits on the reads that rebuild positions (GetReplay pages with
    /// positions, views and analyses at a past sequence).
    pub heavy_reads: HeavyReadSettings,
    /// Events between a game's snapshots (default 1,000; 0: none taken).
    /// A game whose log has grown this many events past its latest
    /// snapshot (or its start) gets a new one after its next append; cold
    /// loads and views of past sequences start from the latest usable one.
    pub snapshot_every: u64,
}

impl Default for RegistrySettings {
    fn default() -> Self {
        RegistrySettings {
            max_cells: 1_000_000,
            seat_limits: SeatLimits::default(),
            idle_timeout: Duration::from_secs(300),
            mailbox: 1024,
            broadcast_capacity: 1024,
            heartbeat_interval: Duration::from_secs(15),
            max_streams: 10_000,
            max_streams_per_game: 1_000,
            max_live_games: 100_000,
            max_live_bytes: 2 << 30,
            clock: Clock::System,
            engines: EngineSettings::default(),
            heavy_reads: HeavyReadSettings::default(),
            snapshot_every: 1000,
        }
    }
}

/// The limits every new game is checked against, as flags: `plylog serve`
/// applies them to CreateGame and `plylog import` to each game it reads,
/// with the same defaults ([`RegistrySettings::default`]).
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct GameLimitArgs {
    /// Largest board a new game may have, in cells.
    #[arg(long, env = "PLYLOG_MAX_CELLS", default_value_t = RegistrySettings::default().max_cells)]
    pub max_cells: u64,
    /// Most seats in one game (at most 255).
    #[arg(long, env = "PLYLOG_MAX_SEATS", default_value_t = RegistrySettings::default().seat_limits.max_seats)]
    pub max_seats: usize,
}

impl GameLimitArgs {
    /// The seat limits these flags set (the rest at their defaults).
    pub fn seat_limits(&self) -> crate::game::SeatLimits {
        crate::game::SeatLimits {
            max_seats: self.max_seats,
            ..crate::game::SeatLimits::default()
        }
    }
}
