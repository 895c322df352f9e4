//! The service shell: one [`Application::build`] used by `main` and by the
//! tests, which binds the listener first (port 0 picks a free one) and then
//! serves until a shutdown signal.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_util::sync::CancellationToken;
use tonic::codec::CompressionEncoding;
use tower::util::MapResponseLayer;
use tracing::Instrument;

use crate::api::auth::AccessSettings;
use crate::api::{GameApi, transport_refusals};
use crate::metrics::Sample;
use crate::proto::{FILE_DESCRIPTOR_SET, game_service_server::GameServiceServer};
use crate::registry::{Clock, Registry, RegistrySettings};
use crate::store::{EventStore, Migration, PostgresStore, SqliteOptions, SqliteStore};
use crate::telemetry::CallLayer;
use crate::tokens::SeatTokenKeys;
use crate::transport::{self, Activity, TransportSettings};
use crate::web::{self, WebSettings};

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
    /// [`SqliteOptions::synchronous_normal`]).
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

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The database URL names a backend this build does not have.
    #[error("unsupported database url {0:?}: use sqlite://<path>, a file path or postgres://...")]
    UnsupportedDatabase(String),
    /// The store failed to open or migrate.
    #[error("opening the {backend} store {database}: {source}")]
    Store {
        /// "SQLite" or "PostgreSQL".
        backend: &'static str,
        /// The database (a file path, or a URL without its password).
        database: String,
        /// The cause.
        source: crate::store::StoreError,
    },
    /// A SQLite file to be read does not exist.
    #[error("no SQLite database at {}", .0.display())]
    NoDatabase(PathBuf),
    /// The listener could not be bound.
    #[error("binding {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
    /// The TLS certificate or key could not be read.
    #[error("reading TLS {what} {path}: {source}")]
    TlsFile {
        /// "certificate" or "key".
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The TLS certificate and key do not make an identity (unparsable, or
    /// the key is not the certificate's).
    #[error("TLS identity from {cert} and {key}: {why}")]
    TlsIdentity {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// What rustls said, with its causes.
        why: String,
    },
    /// Reflection could not be built from the descriptors.
    #[error("server reflection: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    /// The seat token secret file could not be used.
    #[error(transparent)]
    SecretFile(#[from] crate::tokens::SecretFileError),
    /// Seat tokens are on with PostgreSQL, and no secret file was given.
    #[error(
        "with PostgreSQL every node must derive seat tokens from the same secret: pass --seat-token-secret-file <path> (the same file on every node), or --no-seat-tokens"
    )]
    SecretFileRequired,
}

/// A database URL, parsed: which backend it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    /// SQLite: `sqlite://<path>`, `sqlite:<path>` or a plain file path.
    Sqlite(String),
    /// PostgreSQL: `postgres://...` or `postgresql://...`.
    Postgres(String),
}

/// How [`Database::open`] opens a store.
#[derive(Debug, Clone, Copy)]
pub struct StoreOptions {
    /// Connections in the PostgreSQL pool (ignored for SQLite).
    pub postgres_connections: u32,
    /// SQLite `synchronous=NORMAL` instead of FULL.
    pub sqlite_synchronous_normal: bool,
    /// Read an existing, migrated database without writing to it: a SQLite
    /// file that does not exist is an error, not a new empty database, and
    /// nothing is migrated.
    pub read_only: bool,
}

impl Database {
    /// Which backend `url` names.
    ///
    /// # Errors
    /// [`AppError::UnsupportedDatabase`] for a URL of another scheme.
    pub fn parse(url: &str) -> Result<Self, AppError> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Database::Postgres(url.to_owned()));
        }
        if url.contains("://") && !url.starts_with("sqlite:") {
            return Err(AppError::UnsupportedDatabase(url.to_owned()));
        }
        Ok(Database::Sqlite(url.to_owned()))
    }

    /// "SQLite" or "PostgreSQL".
    pub fn backend(&self) -> &'static str {
        match self {
            Database::Sqlite(_) => "SQLite",
            Database::Postgres(_) => "PostgreSQL",
        }
    }

    /// The URL as logs and errors show it, without a password.
    pub fn redacted(&self) -> String {
        match self {
            Database::Sqlite(url) | Database::Postgres(url) => redacted(url),
        }
    }

    /// The SQLite database's file; `None` for PostgreSQL and for an
    /// in-memory SQLite database.
    pub fn sqlite_file(&self) -> Option<PathBuf> {
        let Database::Sqlite(url) = self else {
            return None;
        };
        let file = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
            .unwrap_or(url);
        let file = file.split('?').next().unwrap_or(file);
        (!file.is_empty() && !file.starts_with(":memory:")).then(|| PathBuf::from(file))
    }

    /// Opens the store: migrated (creating a SQLite file if missing), or
    /// read-only (see [`StoreOptions::read_only`]).
    ///
    /// # Errors
    /// [`AppError::NoDatabase`] for a missing SQLite file opened read-only;
    /// [`AppError::Store`] when the store does not open or migrate.
    pub async fn open(&self, options: StoreOptions) -> Result<Arc<dyn EventStore>, AppError> {
        let opened: Result<Arc<dyn EventStore>, _> = match self {
            Database::Postgres(url) if options.read_only => {
                PostgresStore::open_read_only(url, options.postgres_connections)
                    .await
                    .map(|s| Arc::new(s) as Arc<dyn EventStore>)
            }
            Database::Postgres(url) => PostgresStore::open(url, options.postgres_connections)
                .await
                .map(|s| Arc::new(s) as Arc<dyn EventStore>),
            Database::Sqlite(url) => {
                if let Some(file) = self.sqlite_file().filter(|_| options.read_only)
                    && !file.exists()
                {
                    return Err(AppError::NoDatabase(file));
                }
                let mut sqlite = SqliteOptions::new(url.clone());
                sqlite.synchronous_normal = options.sqlite_synchronous_normal;
                sqlite.read_only = options.read_only;
                SqliteStore::open(&sqlite)
                    .await
                    .map(|s| Arc::new(s) as Arc<dyn EventStore>)
            }
        };
        opened.map_err(|source| self.store_error(source))
    }

    /// Applies the migrations the database lacks (creating a SQLite file
    /// if missing) and says which they were.
    ///
    /// # Errors
    /// [`AppError::Store`] when the database cannot be opened or a
    /// migration fails.
    pub async fn migrate(&self) -> Result<Vec<Migration>, AppError> {
        match self {
            Database::Postgres(url) => PostgresStore::migrate(url).await,
            Database::Sqlite(url) => SqliteStore::migrate(&SqliteOptions::new(url.clone())).await,
        }
        .map_err(|source| self.store_error(source))
    }

    fn store_error(&self, source: crate::store::StoreError) -> AppError {
        AppError::Store {
            backend: self.backend(),
            database: self.redacted(),
            source,
        }
    }
}

/// A bound, ready server: the store is open and migrated, the listener bound.
pub struct Application {
    listener: TcpListener,
    local_addr: SocketAddr,
    metrics_listener: Option<(TcpListener, SocketAddr)>,
    metrics_max_connections: usize,
    web: WebSettings,
    store: Arc<dyn EventStore>,
    registry: Registry,
    shutdown_grace: Duration,
    access: AccessSettings,
    max_request_bytes: usize,
    max_in_flight: usize,
    tls: Option<TlsAcceptor>,
    transport: TransportSettings,
    store_check_interval: Duration,
    activity: Arc<Activity>,
}

impl Application {
    /// Opens the store (running migrations) and binds the listener.
    ///
    /// # Errors
    /// [`AppError`]: an unsupported URL, a store that does not open, an
    /// address that cannot be bound.
    pub async fn build(settings: Settings) -> Result<Self, AppError> {
        let tls = settings.tls.as_ref().map(tls_acceptor).transpose()?;
        let database = Database::parse(&settings.database_url)?;
        let store = database
            .open(StoreOptions {
                postgres_connections: settings.postgres_connections,
                sqlite_synchronous_normal: settings.sqlite_synchronous_normal,
                read_only: false,
            })
            .await?;
        let keys = seat_token_keys(&settings.access, &database)?;
        let backend = database.backend();
        let database = database.redacted();
        let durability = store.durability().await.unwrap_or_else(|error| {
            tracing::warn!(error = %error, "could not read the store's durability settings");
            Vec::new()
        });
        transport::raise_descriptor_limit(descriptors_needed(&settings));
        tracing::info!(
            backend,
            database = %database,
            durability = %durability
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect::<Vec<_>>()
                .join(","),
            tls = if tls.is_some() { "on" } else { "off" },
            max_connections = settings.transport.max_connections,
            max_in_flight = settings.max_in_flight,
            max_streams = settings.registry.max_streams,
            max_live_games = settings.registry.max_live_games,
            max_live_memory_mb = settings.registry.max_live_bytes >> 20,
            max_request_bytes = settings.max_request_bytes,
            idle_connection_secs = settings.transport.idle_timeout.as_secs(),
            "plylog starting"
        );
        let listener =
            TcpListener::bind(settings.listen)
                .await
                .map_err(|source| AppError::Bind {
                    addr: settings.listen,
                    source,
                })?;
        let local_addr = listener.local_addr().map_err(|source| AppError::Bind {
            addr: settings.listen,
            source,
        })?;
        let metrics_listener = match settings.metrics_listen {
            Some(addr) => {
                let bind = |source| AppError::Bind { addr, source };
                let listener = TcpListener::bind(addr).await.map_err(bind)?;
                let local = listener.local_addr().map_err(bind)?;
                Some((listener, local))
            }
            None => None,
        };
        let mut registry_settings = settings.registry;
        // Several nodes judge each other's deadlines: on a shared store the
        // clock is corrected toward the database's.
        if store.shared() && matches!(registry_settings.clock, Clock::System) {
            registry_settings.clock = Clock::referenced();
        }
        let registry = Registry::new(Arc::clone(&store), registry_settings, keys);
        match registry.correct_clock().await {
            Ok(Some((offset_ms, error_ms))) => {
                tracing::info!(offset_ms, error_ms, "clock corrected toward the database's")
            }
            Ok(None) => {}
            Err(error) => tracing::warn!(
                error = %error,
                "the database's clock could not be read; this node's own clock is used until it can"
            ),
        }
        Ok(Application {
            listener,
            local_addr,
            metrics_listener,
            metrics_max_connections: settings.metrics_max_connections.max(1),
            web: settings.web,
            store,
            registry,
            shutdown_grace: settings.shutdown_grace,
            access: settings.access,
            max_request_bytes: settings.max_request_bytes,
            max_in_flight: settings.max_in_flight.max(1),
            tls,
            transport: settings.transport,
            store_check_interval: settings.store_check_interval,
            activity: Arc::new(Activity::default()),
        })
    }

    /// The bound address (with the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The bound address of the metrics endpoint, if it serves one.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_listener.as_ref().map(|(_, addr)| *addr)
    }

    /// The server's registry of live games (for tests and tools that look
    /// inside a running server: games and bytes in memory, open streams).
    pub fn registry(&self) -> Registry {
        self.registry.clone()
    }

    /// The store the server runs on (for tests that check its settings).
    pub fn store(&self) -> Arc<dyn EventStore> {
        Arc::clone(&self.store)
    }

    /// What the connection layer holds now: connections and calls open.
    pub fn activity(&self) -> Arc<Activity> {
        Arc::clone(&self.activity)
    }

    /// Serves until `shutdown` resolves, then stops accepting, ends open
    /// event streams with UNAVAILABLE, lets in-flight calls finish (for at
    /// most the shutdown grace period, after which their connections are
    /// closed: a client that stopped reading cannot hold the server up),
    /// closes the store and returns. A move whose reply was cut off that way
    /// was either committed or not; a retry with its request_id tells which.
    ///
    /// # Errors
    /// [`AppError::Reflection`] when the reflection service cannot be built.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), AppError> {
        let (health, health_service) = tonic_health::server::health_reporter();
        health.set_serving::<GameServiceServer<GameApi>>().await;
        health
            .set_service_status("", tonic_health::ServingStatus::Serving)
            .await;
        let reflection = || {
            // Both reflection versions list both, whichever a client speaks.
            tonic_reflection::server::Builder::configure()
                .include_reflection_service(false)
                .register_encoded_file_descriptor_set(tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET)
                .register_encoded_file_descriptor_set(
                    tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET,
                )
                .register_encoded_file_descriptor_set(FILE_DESCRIPTOR_SET)
                .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
                // google.rpc's ErrorInfo, BadRequest, RetryInfo...: lets
                // grpcurl decode the error details we send.
                .register_encoded_file_descriptor_set(tonic_types::pb::FILE_DESCRIPTOR_SET)
        };
        let limit = self.max_request_bytes;
        let api = GameApi::new(self.registry.clone(), self.access, self.max_in_flight);
        let calls = api.clone();
        // gzip and zstd requests are accepted; a reply is compressed when
        // the caller's grpc-accept-encoding offers one of them. The request
        // limit applies to the decompressed message.
        let game_service = GameServiceServer::new(api)
            .max_decoding_message_size(limit)
            .accept_compressed(CompressionEncoding::Gzip)
            .accept_compressed(CompressionEncoding::Zstd)
            .send_compressed(CompressionEncoding::Gzip)
            .send_compressed(CompressionEncoding::Zstd);
        let routes = tonic::service::Routes::new(health_service.max_decoding_message_size(limit))
            .add_service(reflection().build_v1()?.max_decoding_message_size(limit))
            .add_service(
                reflection()
                    .build_v1alpha()?
                    .max_decoding_message_size(limit),
            )
            .add_service(game_service)
            .prepare();
        let metrics = self.registry.metrics().clone();
        let (dashboard, cors, grpc_web) = web::layers(&self.web);
        let service = tower::ServiceBuilder::new()
            .layer(dashboard)
            .layer(cors)
            .layer(grpc_web)
            .layer(CallLayer::new(metrics.clone()))
            .layer(MapResponseLayer::new(transport_refusals(limit)))
            .service(routes);

        // Games that come due (clocks running out, absent seats, bots to
        // move) are loaded then, not now.
        self.registry.start_timer_queue();
        let draining = CancellationToken::new();
        if let Some((listener, addr)) = self.metrics_listener {
            let registry = self.registry.clone();
            let activity = Arc::clone(&self.activity);
            let calls = calls.clone();
            let sample = move || Sample {
                live_games: registry.live_games(),
                live_memory_bytes: registry.live_bytes(),
                open_streams: registry.open_streams(),
                calls_in_flight: calls.in_flight(),
                connections: activity.connections(),
            };
            tracing::info!(addr = %addr, "metrics at http://{addr}/metrics");
            // The gRPC port's protections, HTTP/1.1 only, with a limit of
            // its own: a flood of the metrics port cannot take the gRPC
            // port's connection slots.
            let settings = TransportSettings {
                max_connections: self.metrics_max_connections,
                http2: false,
                ..self.transport.clone()
            };
            let stop = draining.clone();
            tokio::spawn(
                transport::serve(
                    listener,
                    crate::metrics::service(metrics, sample),
                    None,
                    settings,
                    Arc::new(Activity::default()),
                    async move { stop.cancelled().await },
                )
                .instrument(tracing::info_span!("metrics_port", %addr)),
            );
        }
        let checks = tokio::spawn(watch_store(
            Arc::clone(&self.store),
            health.clone(),
            self.store_check_interval,
            draining.clone(),
        ));
        let registry = self.registry.clone();
        let activity = Arc::clone(&self.activity);
        let drain_started = draining.clone();
        let stopping = async move {
            shutdown.await;
            tracing::info!(
                in_flight = calls.in_flight(),
                streams = registry.open_streams(),
                connections = activity.connections(),
                "shutting down: draining in-flight calls"
            );
            drain_started.cancel();
            health.set_not_serving::<GameServiceServer<GameApi>>().await;
            health
                .set_service_status("", tonic_health::ServingStatus::NotServing)
                .await;
            registry.shutdown();
        };
        tracing::info!(addr = %self.local_addr, "plylog serving");
        if self.web.dashboard {
            let scheme = if self.tls.is_some() { "https" } else { "http" };
            tracing::info!(
                cors_origins = self.web.cors_origins.len(),
                "dashboard at {scheme}://{}/",
                self.local_addr
            );
        }
        let served = transport::serve(
            self.listener,
            service,
            self.tls,
            self.transport,
            Arc::clone(&self.activity),
            stopping,
        );
        let grace = self.shutdown_grace;
        tokio::select! {
            () = served => {
                tracing::info!("every call in flight was answered");
            }
            () = async {
                draining.cancelled().await;
                tokio::time::sleep(grace).await;
            } => {
                tracing::warn!(
                    grace_ms = grace.as_millis() as u64,
                    calls = self.activity.calls(),
                    "calls still open after the shutdown grace period; closing their connections"
                );
            }
        }
        checks.abort();
        self.store.close().await;
        tracing::info!("plylog stopped");
        Ok(())
    }
}

/// Checks the store every `interval` until `stop`, and keeps the health
/// service in step: NOT_SERVING (for "" and plylog.v1.GameService) while the
/// store cannot be reached, SERVING again once it can.
async fn watch_store(
    store: Arc<dyn EventStore>,
    health: tonic_health::server::HealthReporter,
    interval: Duration,
    stop: CancellationToken,
) {
    let mut serving = true;
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = ticker.tick() => {}
        }
        let reachable = match tokio::time::timeout(
            interval.max(Duration::from_secs(1)),
            store.ping(),
        )
        .await
        {
            Ok(Ok(())) => true,
            Ok(Err(error)) => {
                if serving {
                    tracing::warn!(error = %crate::api::cause_chain(&error), "the store cannot be reached; health is NOT_SERVING");
                }
                false
            }
            Err(_) => {
                if serving {
                    tracing::warn!("the store did not answer in time; health is NOT_SERVING");
                }
                false
            }
        };
        if reachable == serving || stop.is_cancelled() {
            continue;
        }
        serving = reachable;
        let status = if serving {
            tracing::info!("the store can be reached again; health is SERVING");
            tonic_health::ServingStatus::Serving
        } else {
            tonic_health::ServingStatus::NotServing
        };
        health.set_service_status("", status).await;
        health
            .set_service_status("plylog.v1.GameService", status)
            .await;
    }
}

/// A TLS acceptor for the PEM certificate chain and key in `files`,
/// offering HTTP/2 by ALPN.
///
/// # Errors
/// [`AppError::TlsFile`] when a file cannot be read;
/// [`AppError::TlsIdentity`] when the files hold no certificate or key, or
/// the key is not the certificate's.
fn tls_acceptor(files: &TlsFiles) -> Result<TlsAcceptor, AppError> {
    let read = |what, path: &PathBuf| {
        std::fs::read(path).map_err(|source| AppError::TlsFile {
            what,
            path: path.clone(),
            source,
        })
    };
    let identity = |why: String| AppError::TlsIdentity {
        cert: files.cert.clone(),
        key: files.key.clone(),
        why,
    };
    let cert_pem = read("certificate", &files.cert)?;
    let key_pem = read("key", &files.key)?;
    let certs = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| identity(format!("reading the certificate: {e}")))?;
    if certs.is_empty() {
        return Err(identity("no certificate in the certificate file".into()));
    }
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| identity(format!("reading the key: {e}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| identity(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| identity(format!("{e:?}")))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// File descriptors the server may hold at its limits: one per connection,
/// the database pool (or SQLite's file, WAL, shared memory and readers),
/// and 64 for the listener, the secret file, the runtime and logs.
fn descriptors_needed(settings: &Settings) -> u64 {
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

/// A database URL fit for logs: the password (in the authority or a
/// `password=` parameter) replaced by `***`.
pub fn redacted(url: &str) -> String {
    let mut out = url.to_owned();
    if let Some(scheme_end) = out.find("://") {
        let authority_start = scheme_end + 3;
        let authority_end = out[authority_start..]
            .find(['/', '?'])
            .map_or(out.len(), |i| authority_start + i);
        if let Some(at) = out[authority_start..authority_end].rfind('@') {
            let userinfo = &out[authority_start..authority_start + at];
            if let Some(colon) = userinfo.find(':') {
                let start = authority_start + colon + 1;
                out.replace_range(start..authority_start + at, "***");
            }
        }
    }
    if let Some(query) = out.find('?') {
        let (head, params) = out.split_at(query + 1);
        let params: Vec<String> = params
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                _ => p.to_owned(),
            })
            .collect();
        out = format!("{head}{}", params.join("&"));
    }
    out
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

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}

#[cfg(test)]
mod tests {
    use super::redacted;

    #[test]
    fn a_database_url_is_logged_without_its_password() {
        for (url, shown) in [
            (
                "postgres://plylog:s3cret@db.internal:5432/plylog",
                "postgres://plylog:***@db.internal:5432/plylog",
            ),
            (
                "postgres://plylog@db/plylog?password=s3cret&sslmode=require",
                "postgres://plylog@db/plylog?password=***&sslmode=require",
            ),
            ("postgres://db/plylog", "postgres://db/plylog"),
            ("sqlite://plylog.db", "sqlite://plylog.db"),
            ("/var/lib/plylog.db", "/var/lib/plylog.db"),
        ] {
            assert_eq!(redacted(url), shown);
        }
    }
}
