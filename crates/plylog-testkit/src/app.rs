//! Servers in this process: [`spawn_app`] starts one from its settings on a
//! loopback port, and [`TestServer`] is one on a fresh [`TestDatabase`]
//! with a client, the settings most tests want and restarts on the same
//! database.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use plylog::api::auth::AccessSettings;
use plylog::app::{Application, Settings};
use plylog::proto::game_service_client::GameServiceClient;
use plylog::registry::{Registry, RegistrySettings};
use plylog::web::WebSettings;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::calls::{Client, channel, within};
use crate::db::TestDatabase;
use crate::logs;

/// A server running in this process, on a task of the test's runtime.
/// Dropping it stops the server (as [`App::stop`] does, without waiting).
pub struct App {
    /// Where it serves gRPC (and grpc-web and the dashboard).
    pub addr: SocketAddr,
    /// Where it serves its Prometheus metrics, when its settings ask.
    pub metrics_addr: Option<SocketAddr>,
    /// Its registry, to look at what is in memory.
    pub registry: Registry,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

/// Builds a server from `settings` (listen on port 0 for a free one) and
/// runs it on a task of this runtime. The listener is bound when this
/// returns, so a client can connect at once.
///
/// # Panics
/// When the server does not build, or later fails while running.
pub async fn spawn_app(settings: Settings) -> App {
    logs::init();
    let app = Application::build(settings).await.expect("server builds");
    let addr = app.local_addr();
    let metrics_addr = app.metrics_addr();
    let registry = app.registry();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        app.run_until(async {
            let _ = stopped.await;
        })
        .await
        .expect("server runs");
    });
    App {
        addr,
        metrics_addr,
        registry,
        stop: Some(stop),
        task: Some(task),
    }
}

impl App {
    /// Stops the server gracefully and waits until it has.
    ///
    /// # Panics
    /// When the server failed while running.
    pub async fn stop(mut self) {
        self.shutdown().await;
    }

    async fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("server task");
        }
    }

    /// Leaves the server running until the test's runtime ends; its address.
    pub fn detach(mut self) -> SocketAddr {
        if let Some(stop) = self.stop.take() {
            // The server stops when this sender goes: keep it as long as
            // the runtime runs.
            tokio::spawn(async move {
                let _stop = stop;
                std::future::pending::<()>().await
            });
        }
        self.addr
    }
}

/// Test settings: fast heartbeats so stream tests need not wait long.
pub fn settings() -> RegistrySettings {
    RegistrySettings {
        heartbeat_interval: Duration::from_millis(200),
        ..RegistrySettings::default()
    }
}

/// The server's default limit on calls served at once.
const MAX_IN_FLIGHT: usize = 4096;

/// A running server on a fresh test database (see [`TestDatabase`]).
pub struct TestServer {
    /// Where it serves gRPC.
    pub addr: SocketAddr,
    /// Where the server serves its Prometheus metrics.
    pub metrics_addr: SocketAddr,
    /// A client connected to it.
    pub client: Client,
    /// Its database, shared with the servers that restart on it.
    pub db: Arc<TestDatabase>,
    /// The server's registry, to look at what is in memory.
    pub registry: Registry,
    app: App,
}

impl Drop for TestServer {
    /// Every test also checks that no game actor died with a message in
    /// hand (a panic the retry in `Registry::ask` would otherwise hide).
    fn drop(&mut self) {
        if !std::thread::panicking() {
            assert_eq!(
                self.registry.actor_failures(),
                0,
                "a game actor stopped without answering (it panicked)"
            );
        }
    }
}

impl TestServer {
    /// A server on a fresh database.
    pub async fn start() -> Self {
        TestServer::start_with(settings()).await
    }

    /// A server on a fresh database with `registry` settings.
    pub async fn start_with(registry: RegistrySettings) -> Self {
        TestServer::start_secured(registry, AccessSettings::default()).await
    }

    /// A server on `db` with `registry` settings.
    pub async fn start_on(db: TestDatabase, registry: RegistrySettings) -> Self {
        TestServer::start_full(
            Arc::new(db),
            registry,
            AccessSettings::default(),
            MAX_IN_FLIGHT,
            WebSettings::default(),
        )
        .await
    }

    /// A server on a fresh database with `registry` and `access` settings.
    pub async fn start_secured(registry: RegistrySettings, access: AccessSettings) -> Self {
        let db = Arc::new(TestDatabase::fresh().await);
        TestServer::start_full(db, registry, access, MAX_IN_FLIGHT, WebSettings::default()).await
    }

    /// A server on a fresh database serving at most `max_in_flight` calls at
    /// once.
    pub async fn start_with_in_flight(max_in_flight: usize) -> Self {
        let db = Arc::new(TestDatabase::fresh().await);
        TestServer::start_full(
            db,
            settings(),
            AccessSettings::default(),
            max_in_flight,
            WebSettings::default(),
        )
        .await
    }

    /// A server on a fresh database with `web` settings (CORS origins, the
    /// dashboard switch).
    pub async fn start_web(web: WebSettings) -> Self {
        let db = Arc::new(TestDatabase::fresh().await);
        TestServer::start_full(
            db,
            settings(),
            AccessSettings::default(),
            MAX_IN_FLIGHT,
            web,
        )
        .await
    }

    /// A server on a fresh database whose settings `tune` changes last
    /// (reply compression, say).
    pub async fn start_tuned(tune: impl FnOnce(&mut Settings)) -> Self {
        let db = Arc::new(TestDatabase::fresh().await);
        TestServer::start_tuned_on(
            db,
            settings(),
            AccessSettings::default(),
            MAX_IN_FLIGHT,
            WebSettings::default(),
            tune,
        )
        .await
    }

    async fn start_full(
        db: Arc<TestDatabase>,
        registry: RegistrySettings,
        access: AccessSettings,
        max_in_flight: usize,
        web: WebSettings,
    ) -> Self {
        TestServer::start_tuned_on(db, registry, access, max_in_flight, web, |_| {}).await
    }

    async fn start_tuned_on(
        db: Arc<TestDatabase>,
        registry: RegistrySettings,
        access: AccessSettings,
        max_in_flight: usize,
        web: WebSettings,
        tune: impl FnOnce(&mut Settings),
    ) -> Self {
        let mut access = access;
        if access.seat_token_secret_file.is_none() && db.file.is_none() {
            // PostgreSQL needs a secret file (SQLite makes its own beside
            // the database file): one per database, across restarts.
            access.seat_token_secret_file = Some(db.secret_file());
        }
        let mut settings = Settings {
            postgres_connections: 8,
            registry,
            shutdown_grace: Duration::from_secs(1),
            // Seat tokens have their own tests (credentials.rs); the others
            // run without them and speak for any seat.
            access,
            max_in_flight,
            metrics_listen: Some("127.0.0.1:0".parse().unwrap()),
            web,
            ..Settings::new("127.0.0.1:0".parse().unwrap(), db.url.clone())
        };
        tune(&mut settings);
        let app = spawn_app(settings).await;
        let client = GameServiceClient::new(channel(app.addr).await);
        TestServer {
            addr: app.addr,
            metrics_addr: app.metrics_addr.expect("a metrics listener"),
            client,
            db,
            registry: app.registry.clone(),
            app,
        }
    }

    /// The server's metrics, scraped over HTTP as Prometheus does: each
    /// sample line's name with its labels (`name{a="x",b="y"}`), and value.
    pub async fn scrape(&self) -> std::collections::HashMap<String, f64> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(self.metrics_addr)
            .await
            .expect("metrics endpoint connects");
        let request = "GET /metrics HTTP/1.1\r\nHost: plylog\r\nConnection: close\r\n\r\n";
        stream.write_all(request.as_bytes()).await.expect("sent");
        let mut reply = String::new();
        within(stream.read_to_string(&mut reply))
            .await
            .expect("read");
        let (head, body) = reply.split_once("\r\n\r\n").expect("an HTTP reply");
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        assert!(
            head.to_lowercase()
                .contains("content-type: application/openmetrics-text"),
            "{head}"
        );
        assert!(body.trim_end().ends_with("# EOF"), "complete exposition");
        body.lines()
            .filter(|line| !line.starts_with('#') && !line.is_empty())
            .map(|line| {
                let (name, value) = line.rsplit_once(' ').expect("name value");
                (name.to_owned(), value.parse().expect("a number"))
            })
            .collect()
    }

    /// Stops the server gracefully and waits until it has.
    pub async fn stop(mut self) {
        self.shutdown().await;
    }

    async fn shutdown(&mut self) {
        self.app.shutdown().await;
    }

    /// Stops this server and starts another on the same database.
    pub async fn restart(self) -> Self {
        self.restart_secured(AccessSettings::default()).await
    }

    /// Stops this server and starts another on the same database with
    /// `registry` settings (a test clock, say), doing `meanwhile` while no
    /// server runs.
    pub async fn restart_with(
        mut self,
        registry: RegistrySettings,
        meanwhile: impl FnOnce(),
    ) -> Self {
        self.shutdown().await;
        meanwhile();
        TestServer::start_full(
            Arc::clone(&self.db),
            registry,
            AccessSettings::default(),
            MAX_IN_FLIGHT,
            WebSettings::default(),
        )
        .await
    }

    /// Stops this server and starts another on the same database with
    /// `access` settings.
    pub async fn restart_secured(mut self, access: AccessSettings) -> Self {
        self.shutdown().await;
        TestServer::start_full(
            Arc::clone(&self.db),
            settings(),
            access,
            MAX_IN_FLIGHT,
            WebSettings::default(),
        )
        .await
    }
}
