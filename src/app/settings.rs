//! What a server is started with: [`Settings`] (every setting, with the
//! defaults the command line has), the TLS identity's files
//! ([`TlsFiles`]), and the file descriptors the settings may need at their
//! limits. The game-limit flags `serve` and `import` share are
//! [`crate::registry::GameLimitArgs`]; the seat token secrets the settings
//! and the database give, [`crate::api::auth::seat_token_keys`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::api::auth::AccessSettings;
use crate::compression::ReplyCompression;
use crate::registry::RegistrySettings;
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
    /// Further PostgreSQL databases, cells 1, 2, ... (`database_url` is
    /// cell 0), each holding the games of its slots (see
    /// [`crate::store::Cells`]); empty: one database. Always the same
    /// databases in the same order.
    pub cell_urls: Vec<String>,
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
    /// Which replies are compressed, for callers that accept it.
    pub reply_compression: ReplyCompression,
    /// How this node takes part in a cluster (PostgreSQL only).
    pub cluster: ClusterSettings,
}

/// How a node takes part in a cluster on PostgreSQL: its name and address,
/// its slot leases, and what it does with a call for a game another node
/// runs (see `crate::registry::ownership`). A SQLite server ignores them.
#[derive(Debug, Clone)]
pub struct ClusterSettings {
    /// The node's name, which its leases are held under: a restart under
    /// the same name takes them back at once. `None`: the advertised
    /// address.
    pub node_name: Option<String>,
    /// The `host:port` other nodes reach this node's gRPC port at, to pass
    /// calls on to it. `None`: the bound address (the listen address with
    /// its real port).
    pub advertise_address: Option<String>,
    /// How long a slot's lease lasts from its last renewal (default 6 s):
    /// a dead or cut-off node's games move to another node within it.
    pub lease: Duration,
    /// Answer a call for a game another node runs with UNAVAILABLE /
    /// NOT_OWNER naming the owner, rather than passing it on.
    pub redirect: bool,
}

impl Default for ClusterSettings {
    fn default() -> Self {
        ClusterSettings {
            node_name: None,
            advertise_address: None,
            lease: crate::registry::ownership::DEFAULT_LEASE,
            redirect: false,
        }
    }
}

impl Settings {
    /// Settings for a server on `listen` with its log at `database_url`, and
    /// every other setting at the default the command line has.
    pub fn new(listen: SocketAddr, database_url: impl Into<String>) -> Self {
        Settings {
            listen,
            database_url: database_url.into(),
            cell_urls: Vec::new(),
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
            reply_compression: ReplyCompression::default(),
            cluster: ClusterSettings::default(),
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
        (u64::from(settings.postgres_connections) + 1) * (1 + settings.cell_urls.len() as u64)
    } else {
        16
    };
    let metrics = settings
        .metrics_listen
        .map_or(0, |_| settings.metrics_max_connections as u64);
    settings.transport.max_connections as u64 + metrics + database + 64
}
