//! The service shell: one [`Application::build`] used by `main` and by the
//! tests, which binds the listener first (port 0 picks a free one) and then
//! serves until a shutdown signal.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use std::path::PathBuf;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use tonic::transport::server::TcpIncoming;
use tonic::transport::{Identity, Server, ServerTlsConfig};

use crate::api::auth::AccessSettings;
use crate::api::{GameApi, transport_refusals};
use crate::proto::{FILE_DESCRIPTOR_SET, game_service_server::GameServiceServer};
use crate::registry::{Registry, RegistrySettings};
use crate::store::{EventStore, PostgresStore, SqliteOptions, SqliteStore};
use crate::tokens::SeatTokenKeys;
use tower::util::MapResponseLayer;

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
    #[error("opening the store: {0}")]
    Store(#[from] crate::store::StoreError),
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
    /// The transport failed.
    #[error("transport: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// The seat token secret file could not be used.
    #[error(transparent)]
    SecretFile(#[from] crate::tokens::SecretFileError),
    /// Seat tokens are on with PostgreSQL, and no secret file was given.
    #[error(
        "with PostgreSQL every node must derive seat tokens from the same secret: pass --seat-token-secret-file <path> (the same file on every node), or --no-seat-tokens"
    )]
    SecretFileRequired,
}

/// A bound, ready server: the store is open and migrated, the listener bound.
pub struct Application {
    listener: TcpListener,
    local_addr: SocketAddr,
    store: Arc<dyn EventStore>,
    registry: Registry,
    shutdown_grace: Duration,
    access: AccessSettings,
    max_request_bytes: usize,
    max_in_flight: usize,
    tls: Option<ServerTlsConfig>,
}

impl Application {
    /// Opens the store (running migrations) and binds the listener.
    ///
    /// # Errors
    /// [`AppError`]: an unsupported URL, a store that does not open, an
    /// address that cannot be bound.
    pub async fn build(settings: Settings) -> Result<Self, AppError> {
        let tls = match &settings.tls {
            None => None,
            Some(files) => {
                let read = |what, path: &PathBuf| {
                    std::fs::read(path).map_err(|source| AppError::TlsFile {
                        what,
                        path: path.clone(),
                        source,
                    })
                };
                let identity =
                    Identity::from_pem(read("certificate", &files.cert)?, read("key", &files.key)?);
                let config = ServerTlsConfig::new().identity(identity);
                // Build the acceptor now, so a bad pair fails before serving.
                if let Err(error) = Server::builder().tls_config(config.clone()) {
                    let mut why = error.to_string();
                    let mut source = std::error::Error::source(&error);
                    while let Some(cause) = source {
                        why = format!("{why}: {cause}");
                        source = cause.source();
                    }
                    return Err(AppError::TlsIdentity {
                        cert: files.cert.clone(),
                        key: files.key.clone(),
                        why,
                    });
                }
                Some(config)
            }
        };
        let url = &settings.database_url;
        let postgres = url.starts_with("postgres://") || url.starts_with("postgresql://");
        if !postgres && url.contains("://") && !url.starts_with("sqlite:") {
            return Err(AppError::UnsupportedDatabase(url.clone()));
        }
        let keys = seat_token_keys(&settings.access, url, postgres)?;
        let store: Arc<dyn EventStore> = if postgres {
            Arc::new(PostgresStore::open(url, settings.postgres_connections).await?)
        } else {
            let mut options = SqliteOptions::new(url.clone());
            options.synchronous_normal = settings.sqlite_synchronous_normal;
            Arc::new(SqliteStore::open(&options).await?)
        };
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
        let registry = Registry::new(Arc::clone(&store), settings.registry, keys);
        Ok(Application {
            listener,
            local_addr,
            store,
            registry,
            shutdown_grace: settings.shutdown_grace,
            access: settings.access,
            max_request_bytes: settings.max_request_bytes,
            max_in_flight: settings.max_in_flight.max(1),
            tls,
        })
    }

    /// The bound address (with the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The server's registry of live games (for tests and tools that look
    /// inside a running server: games and bytes in memory, open streams).
    pub fn registry(&self) -> Registry {
        self.registry.clone()
    }

    /// Serves until `shutdown` resolves, then stops accepting, ends open
    /// event streams with UNAVAILABLE, lets in-flight calls finish (for at
    /// most the shutdown grace period, after which their connections are
    /// closed: a client that stopped reading cannot hold the server up),
    /// closes the store and returns. A move whose reply was cut off that way
    /// was either committed or not; a retry with its request_id tells which.
    ///
    /// # Errors
    /// [`AppError::Reflection`] or [`AppError::Transport`].
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
        };
        let registry = self.registry.clone();
        let draining = CancellationToken::new();
        let drain_started = draining.clone();
        let stopping = async move {
            shutdown.await;
            tracing::info!("shutting down: draining in-flight calls");
            health.set_not_serving::<GameServiceServer<GameApi>>().await;
            health
                .set_service_status("", tonic_health::ServingStatus::NotServing)
                .await;
            registry.shutdown();
            drain_started.cancel();
        };
        tracing::info!(addr = %self.local_addr, "plylog serving");
        let game_service =
            GameServiceServer::new(GameApi::new(self.registry, self.access, self.max_in_flight))
                .max_decoding_message_size(self.max_request_bytes);
        let mut builder = Server::builder();
        if let Some(tls) = self.tls {
            builder = builder.tls_config(tls)?;
        }
        let server = builder
            .layer(MapResponseLayer::new(transport_refusals(
                self.max_request_bytes,
            )))
            .add_service(health_service.max_decoding_message_size(self.max_request_bytes))
            .add_service(
                reflection()
                    .build_v1()?
                    .max_decoding_message_size(self.max_request_bytes),
            )
            .add_service(
                reflection()
                    .build_v1alpha()?
                    .max_decoding_message_size(self.max_request_bytes),
            )
            .add_service(game_service)
            .serve_with_incoming_shutdown(
                // Without TCP_NODELAY a small reply can wait out the peer's
                // delayed ACK (~40 ms) before it is sent.
                TcpIncoming::from(self.listener).with_nodelay(Some(true)),
                stopping,
            );
        let grace = self.shutdown_grace;
        tokio::select! {
            served = server => served?,
            () = async {
                draining.cancelled().await;
                tokio::time::sleep(grace).await;
            } => {
                tracing::warn!(grace_ms = grace.as_millis() as u64, "calls still open after the shutdown grace period; closing their connections");
            }
        }
        self.store.close().await;
        tracing::info!("plylog stopped");
        Ok(())
    }
}

/// The secrets seat tokens are derived from: the configured file; without
/// one, with SQLite, `<database file>.seat-token-secret` (created if missing;
/// an in-memory database gets a secret that lives as long as it does); with
/// PostgreSQL none, which is an error while new games get seat tokens.
fn seat_token_keys(
    access: &AccessSettings,
    url: &str,
    postgres: bool,
) -> Result<Option<SeatTokenKeys>, AppError> {
    if let Some(path) = &access.seat_token_secret_file {
        return Ok(Some(SeatTokenKeys::read(path)?));
    }
    if postgres {
        return if access.seat_tokens {
            Err(AppError::SecretFileRequired)
        } else {
            Ok(None)
        };
    }
    let file = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .unwrap_or(url);
    let file = file.split('?').next().unwrap_or(file);
    if file.is_empty() || file == ":memory:" || file.starts_with(":memory:") {
        return Ok(Some(SeatTokenKeys::ephemeral()));
    }
    let path = PathBuf::from(format!("{file}.seat-token-secret"));
    Ok(Some(SeatTokenKeys::read_or_create(&path)?))
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
