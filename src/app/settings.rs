//! What a server is started with: [`Settings`] (every setting, with the
//! defaults the command line has), the game-limit flags `serve` and
//! `import` share ([`GameLimitArgs`]), the TLS identity's files
//! ([`TlsFiles`]), the seat token secrets the settings and the database
//! give ([`seat_token_keys`]), and the file descriptors the settings may
//! need at their limits.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::AppError;
use crate::api::auth::AccessSettings;
use crate::registry::RegistrySettings;
use crate::store::Database;
use crate::tokens::SeatTokenKeys;
use crate::transport::TransportSettings;
use crate::web::WebSettings;

/// Everything a server needs to start.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Address to listen on; port 0 picks a free port.
    pub listen: SocketAddr,
    /// `sqlite://path`, `sqlite:path` or a plain file path (SQLite), or
    /// `postgres://...` (PostgreSQL, which several nodes may share).
    pub database_url: String,
    /// Connections in the PostgreSQL pool (ignored for SQLite).
    pub postgres_connections: u32,
    /// SQLite `synchronous=NORMAL` instead of FULL (see
    /// [`crate::store::SqliteOptions::synchronous_normal`]).
    pub sqlite_synchronous_normal: bool,
    /// Game limits and timings.
    pub registry: RegistrySettings,
    /// How long shutdown waits for in-flight calls and streams to finish
    /// before it closes their connections.
    pub shutdown_grace: Duration,
    /// Seat tokens and the CreateGame API key.
    pub access: AccessSettings,
    /// Largest request message accepted, in bytes (default 64 KiB); a
    /// larger one is RESOURCE_EXHAUSTED / REQUEST_TOO_LARGE.
    pub max_request_bytes: usize,
    /// Calls served at once (streams aside) before further ones are shed
    /// with UNAVAILABLE / OVERLOADED (default 4,096).
    pub max_in_flight: usize,
    /// Serve TLS (rustls) with this certificate chain and key; `None`
    /// serves plaintext HTTP/2.
    pub tls: Option<TlsFiles>,
    /// Connection limits and timings.
    pub transport: TransportSettings,
    /// How often the store is checked for the health service: NOT_SERVING
    /// while it cannot be reached, SERVING again once it can.
    pub store_check_interval: Duration,
    /// Serve Prometheus metrics over HTTP at `/metrics` on this address
    /// (port 0 picks a free one); `None` serves none.
    pub metrics_listen: Option<SocketAddr>,
    /// Connections the metrics endpoint holds open at once (default 100);
    /// one more is accepted and closed at once. Its other limits and
    /// timings are `transport`'s.
    pub metrics_max_connections: usize,
    /// The dashboard and the origins allowed to call with grpc-web.
    pub web: WebSettings,
}

impl Settings {
    /// Settings for a server on `listen` with its log at `database_url`, and
    /// every other setting at the default the command line has.
    pub fn new(listen: SocketAddr, database_url: impl Into<String>) -> Self {
        Settings {
            listen,
            database_url: database_url.into(),
            postgres_connections: 16,
            sqlite_synchronous_normal: false,
            registry: RegistrySettings::default(),
            shutdown_grace: Duration::from_secs(10),
            access: AccessSettings {
                seat_tokens: true,
                ..AccessSettings::default()
            },
            max_request_bytes: 64 * 1024,
            max_in_flight: 4096,
            tls: None,
            transport: TransportSettings::default(),
            store_check_interval: Duration::from_secs(5),
            metrics_listen: None,
            metrics_max_connections: 100,
            web: WebSettings::default(),
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

/// PEM files of a TLS identity.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// The certificate chain, leaf first.
    pub cert: PathBuf,
    /// The private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// File descriptors the server may hold at its limits: one per connection,
/// the database pool (or SQLite's file, WAL, shared memory and readers),
/// and 64 for the listener, the secret file, the runtime and logs.
pub(super) fn descriptors_needed(settings: &Settings) -> u64 {
    let database = if settings.database_url.starts_with("postgres") {
        u64::from(settings.postgres_connections) + 1
    } else {
        16
    };
    let metrics = settings
        .metrics_listen
        .map_or(0, |_| settings.metrics_max_connections as u64);
    settings.transport.max_connections as u64 + metrics + database + 64
}

/// The secrets seat tokens are derived from: the configured file; without
/// one, with SQLite, `<database file>.seat-token-secret` (created if missing;
/// an in-memory database gets a secret that lives as long as it does); with
/// PostgreSQL none, which is an error while new games get seat tokens.
/// `None` when games get no seat tokens.
///
/// # Errors
/// [`AppError::SecretFile`] when the file cannot be read (or created) or
/// holds no usable secret; [`AppError::SecretFileRequired`].
pub fn seat_token_keys(
    access: &AccessSettings,
    database: &Database,
) -> Result<Option<SeatTokenKeys>, AppError> {
    if let Some(path) = &access.seat_token_secret_file {
        return Ok(Some(SeatTokenKeys::read(path)?));
    }
    if let Database::Postgres(_) = database {
        return if access.seat_tokens {
            Err(AppError::SecretFileRequired)
        } else {
            Ok(None)
        };
    }
    let Some(file) = database.sqlite_file() else {
        return Ok(Some(SeatTokenKeys::ephemeral()));
    };
    let mut path = file.into_os_string();
    path.push(".seat-token-secret");
    Ok(Some(SeatTokenKeys::read_or_create(&PathBuf::from(path))?))
}
