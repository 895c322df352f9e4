//! The service shell: one [`Application::build`] used by `main` and by the
//! tests, which binds the listener first (port 0 picks a free one) and then
//! serves until a shutdown signal.
//!
//! # Map
//! - this file: [`Application`], its start-up ([`Application::build`]: the
//!   store, the registry, the listeners) and its serve-and-drain loop
//!   ([`Application::run_until`]), [`AppError`], [`shutdown_signal`].
//! - `settings`: [`Settings`], [`TlsFiles`] and the file descriptor
//!   budget.
//! - `router`: the gRPC services and the tower layers around them.
//! - `health`: grpc.health.v1, kept in step with the store.
//! - `tls`: the rustls acceptor.
//!
//! Opening the database is the store's ([`crate::store::Database`]).

mod health;
mod router;
mod settings;
mod tls;

pub use settings::{ClusterSettings, Settings, TlsFiles};

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::api::GameApi;
use crate::api::auth::AccessSettings;
use crate::compression::ReplyCompression;
use crate::metrics::Sample;
use crate::registry::{Clock, Ownership, Registry};
use crate::store::{Database, EventStore, OpenError, StoreOptions};
use crate::transport::{self, Activity, TransportSettings};
use crate::web::WebSettings;

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The store could not be opened (see [`OpenError`]).
    #[error(transparent)]
    Open(#[from] OpenError),
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
}

/// A bound, ready server: the store is open and migrated, the listener bound.
pub struct Application {
    listener: TcpListener,
    local_addr: SocketAddr,
    metrics_listener: Option<(TcpListener, SocketAddr)>,
    metrics_max_connections: usize,
    web: WebSettings,
    reply_compression: ReplyCompression,
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
    /// Refuse calls for games other nodes run instead of passing them on.
    redirect: bool,
}

impl Application {
    /// Opens the store (running migrations) and binds the listener.
    ///
    /// # Errors
    /// [`AppError`]: an unsupported URL, a store that does not open, an
    /// address that cannot be bound.
    pub async fn build(settings: Settings) -> Result<Self, AppError> {
        let tls = settings.tls.as_ref().map(tls::tls_acceptor).transpose()?;
        let database = Database::parse(&settings.database_url)?;
        let mut databases = vec![database.clone()];
        for url in &settings.cell_urls {
            databases.push(Database::parse(url)?);
        }
        // The secret is read before the store opens, so a start refused
        // for it leaves no tables behind in a database it never served;
        // all but the default secret beside a SQLite file, which is made
        // after that file, so a path that cannot hold it is named as the
        // store's.
        let keys_beside_the_file =
            database.sqlite_file().is_some() && settings.access.seat_token_secret_file.is_none();
        let early_keys = if keys_beside_the_file {
            None
        } else {
            Some(crate::api::auth::seat_token_keys(
                &settings.access,
                &database,
            )?)
        };
        let store = Database::open_all(
            &databases,
            StoreOptions {
                postgres_connections: settings.postgres_connections,
                sqlite_synchronous_normal: settings.sqlite_synchronous_normal,
                read_only: false,
            },
        )
        .await?;
        let keys = match early_keys {
            Some(keys) => keys,
            None => crate::api::auth::seat_token_keys(&settings.access, &database)?,
        };
        let backend = database.backend();
        let database = databases
            .iter()
            .map(Database::redacted)
            .collect::<Vec<_>>()
            .join(" ");
        let durability = store.durability().await.unwrap_or_else(|error| {
            tracing::warn!(error = %error, "could not read the store's durability settings");
            Vec::new()
        });
        transport::raise_descriptor_limit(settings::descriptors_needed(&settings));
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
        // A store with slots (PostgreSQL): this node runs the games of the
        // slots it holds, under its name, reachable at its address.
        let slot_count = store
            .slot_count()
            .await
            .map_err(|source| OpenError::Store {
                backend,
                database: database.clone(),
                source,
            })?;
        let ownership = match slot_count {
            Some(slots) => {
                let address = settings
                    .cluster
                    .advertise_address
                    .clone()
                    .unwrap_or_else(|| local_addr.to_string());
                let node = settings
                    .cluster
                    .node_name
                    .clone()
                    .unwrap_or_else(|| address.clone());
                Some(Ownership::new(
                    &node,
                    &address,
                    slots,
                    store.cell_count(),
                    settings.cluster.lease,
                ))
            }
            None => None,
        };
        let registry = Registry::new(Arc::clone(&store), registry_settings, keys, ownership);
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
        if let Some(node) = registry.node_name() {
            // The first lease round before serving, so that a node alone
            // serves every game from its first call.
            let started = std::time::Instant::now();
            match registry.keep_leases().await {
                Ok(()) => tracing::info!(
                    node,
                    slots = registry.served_slot_count(),
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "slot leases taken"
                ),
                Err(error) => tracing::warn!(
                    error = %error,
                    "the slot leases could not be taken yet; calls are passed on or refused until they are"
                ),
            }
        }
        Ok(Application {
            listener,
            local_addr,
            metrics_listener,
            metrics_max_connections: settings.metrics_max_connections.max(1),
            web: settings.web,
            reply_compression: settings.reply_compression,
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
            // Nodes pass calls to each other over plaintext HTTP/2: with
            // TLS, clients are redirected to the owner instead.
            redirect: settings.cluster.redirect || settings.tls.is_some(),
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
        let (health, health_service) = health::serving().await;
        let limit = self.max_request_bytes;
        let api = GameApi::new(self.registry.clone(), self.access, self.max_in_flight)
            .redirecting(self.redirect);
        let calls = api.clone();
        let metrics = self.registry.metrics().clone();
        let service = router::service(
            api,
            health_service,
            limit,
            &self.web,
            self.reply_compression,
            metrics.clone(),
        )?;

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
        let checks = tokio::spawn(health::watch_store(
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
            health::not_serving(&health).await;
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
        // Every call was answered: the slots go to the other nodes now,
        // rather than when their leases end.
        if let Err(error) = self.registry.release_slots().await {
            tracing::warn!(error = %crate::api::cause_chain(&error), "the slot leases could not be released; they end by themselves");
        }
        self.store.close().await;
        tracing::info!("plylog stopped");
        Ok(())
    }
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
