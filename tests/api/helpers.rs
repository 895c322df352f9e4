//! A real server on a loopback port, a real client, and small builders.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use plylog::api::auth::AccessSettings;
use plylog::app::{Application, Settings};
use plylog::proto::game_service_client::GameServiceClient;
use plylog::proto::{self as pb};
use plylog::registry::{Registry, RegistrySettings};
use plylog::web::WebSettings;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::Channel;
use tonic_types::StatusExt;

pub(crate) type Client = GameServiceClient<Channel>;

/// Test settings: fast heartbeats so stream tests need not wait long.
pub(crate) fn settings() -> RegistrySettings {
    RegistrySettings {
        heartbeat_interval: Duration::from_millis(200),
        ..RegistrySettings::default()
    }
}

/// The server's default limit on calls served at once.
const MAX_IN_FLIGHT: usize = 4096;

#[path = "../support/logs.rs"]
mod logs;
#[path = "../support/postgres.rs"]
mod postgres_support;
#[path = "../support/seed.rs"]
pub(crate) mod seed;
#[path = "../support/wait.rs"]
mod wait;
pub(crate) use postgres_support::{PgSchema, fresh_postgres_schema, on_postgres};
pub(crate) use wait::wait_until;

/// Where the tests' servers keep their logs: a fresh SQLite file per server
/// by default, or with `PLYLOG_TEST_BACKEND=postgres` a fresh schema per
/// server in the PostgreSQL database of `DATABASE_URL` (default
/// `postgres://postgres@127.0.0.1:5432/test`).
pub(crate) struct TestDatabase {
    /// The database URL a server is given.
    pub(crate) url: String,
    /// The SQLite file, when the backend is SQLite.
    pub(crate) file: Option<PathBuf>,
    /// The PostgreSQL schema, dropped with this value.
    _schema: Option<PgSchema>,
    _dir: tempfile::TempDir,
}

/// Runs `sql` on the test database directly (SQLite file or PostgreSQL
/// schema) and returns the rows it changed.
pub(crate) async fn execute(db: &TestDatabase, sql: &str) -> u64 {
    match &db.file {
        Some(_) => {
            let mut conn = <sqlx::SqliteConnection as sqlx::Connection>::connect(&db.url)
                .await
                .unwrap();
            sqlx::query(sql)
                .execute(&mut conn)
                .await
                .unwrap()
                .rows_affected()
        }
        None => {
            let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&db.url)
                .await
                .unwrap();
            sqlx::query(sql)
                .execute(&mut conn)
                .await
                .unwrap()
                .rows_affected()
        }
    }
}

impl TestDatabase {
    /// The seat token secret file of this database's servers, written on
    /// first use.
    pub(crate) fn secret_file(&self) -> PathBuf {
        let path = self._dir.path().join("seat-token-secret");
        if !path.exists() {
            let secret: String = (0..64)
                .map(|_| char::from_digit(rand::random_range(0..16), 16).unwrap())
                .collect();
            std::fs::write(&path, format!("{secret}\n")).expect("secret file written");
        }
        path
    }

    /// A fresh PostgreSQL schema, whatever the configured backend, when
    /// `DATABASE_URL` names a PostgreSQL database or the suite runs on
    /// PostgreSQL (for a test that needs PostgreSQL's table locks).
    pub(crate) async fn postgres() -> Option<Self> {
        let configured = std::env::var("DATABASE_URL").is_ok_and(|url| url.starts_with("postgres"));
        if !configured && !on_postgres() {
            return None;
        }
        let schema = fresh_postgres_schema().await;
        Some(TestDatabase {
            url: schema.url.clone(),
            file: None,
            _schema: Some(schema),
            _dir: tempfile::tempdir().expect("temp dir"),
        })
    }

    /// A fresh database of the configured backend.
    pub(crate) async fn fresh() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        if on_postgres() {
            let schema = fresh_postgres_schema().await;
            TestDatabase {
                url: schema.url.clone(),
                file: None,
                _schema: Some(schema),
                _dir: dir,
            }
        } else {
            let file = dir.path().join("plylog.db");
            TestDatabase {
                url: format!("sqlite://{}", file.display()),
                file: Some(file),
                _schema: None,
                _dir: dir,
            }
        }
    }
}

/// A running server on a fresh test database (see [`TestDatabase`]).
pub(crate) struct TestServer {
    pub(crate) addr: SocketAddr,
    /// Where the server serves its Prometheus metrics.
    pub(crate) metrics_addr: SocketAddr,
    pub(crate) client: Client,
    pub(crate) db: Arc<TestDatabase>,
    /// The server's registry, to look at what is in memory.
    pub(crate) registry: Registry,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
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
    pub(crate) async fn start() -> Self {
        TestServer::start_with(settings()).await
    }

    /// A server on a fresh database with `registry` settings.
    pub(crate) async fn start_with(registry: RegistrySettings) -> Self {
        TestServer::start_secured(registry, AccessSettings::default()).await
    }

    /// A server on `db` with `registry` settings.
    pub(crate) async fn start_on(db: TestDatabase, registry: RegistrySettings) -> Self {
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
    pub(crate) async fn start_secured(registry: RegistrySettings, access: AccessSettings) -> Self {
        let db = Arc::new(TestDatabase::fresh().await);
        TestServer::start_full(db, registry, access, MAX_IN_FLIGHT, WebSettings::default()).await
    }

    /// A server on a fresh database serving at most `max_in_flight` calls at
    /// once.
    pub(crate) async fn start_with_in_flight(max_in_flight: usize) -> Self {
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
    pub(crate) async fn start_web(web: WebSettings) -> Self {
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

    async fn start_full(
        db: Arc<TestDatabase>,
        registry: RegistrySettings,
        access: AccessSettings,
        max_in_flight: usize,
        web: WebSettings,
    ) -> Self {
        logs::init();
        let mut access = access;
        if access.seat_token_secret_file.is_none() && db.file.is_none() {
            // PostgreSQL needs a secret file (SQLite makes its own beside
            // the database file): one per database, across restarts.
            access.seat_token_secret_file = Some(db.secret_file());
        }
        let settings = Settings {
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
        let app = Application::build(settings).await.expect("server builds");
        let addr = app.local_addr();
        let metrics_addr = app.metrics_addr().expect("a metrics listener");
        let registry = app.registry();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            app.run_until(async {
                let _ = stopped.await;
            })
            .await
            .expect("server runs");
        });
        let client = GameServiceClient::new(channel(addr).await);
        TestServer {
            addr,
            metrics_addr,
            client,
            db,
            registry,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// The server's metrics, scraped over HTTP as Prometheus does: each
    /// sample line's name with its labels (`name{a="x",b="y"}`), and value.
    pub(crate) async fn scrape(&self) -> std::collections::HashMap<String, f64> {
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
    pub(crate) async fn stop(mut self) {
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

    /// Stops this server and starts another on the same database.
    pub(crate) async fn restart(self) -> Self {
        self.restart_secured(AccessSettings::default()).await
    }

    /// Stops this server and starts another on the same database with
    /// `registry` settings (a test clock, say), doing `meanwhile` while no
    /// server runs.
    pub(crate) async fn restart_with(
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
    pub(crate) async fn restart_secured(mut self, access: AccessSettings) -> Self {
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

/// A channel to `addr` (the listener is bound before the server task starts,
/// so connecting needs no wait).
pub(crate) async fn channel(addr: SocketAddr) -> Channel {
    Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        // No call waits for ever: one the server never answers fails the
        // test (DEADLINE_EXCEEDED) instead of hanging it. Streams' items
        // are bounded by `within`.
        .timeout(Duration::from_secs(30))
        .connect_timeout(Duration::from_secs(10))
        .connect()
        .await
        .expect("connects")
}

pub(crate) fn seat(id: &str, symbol: &str) -> pb::Seat {
    pb::Seat {
        player_id: id.into(),
        display_name: format!("player {id}"),
        symbol: symbol.into(),
        bot: None,
    }
}

pub(crate) fn two_seats() -> Vec<pb::Seat> {
    vec![seat("alice", "X"), seat("bob", "O")]
}

pub(crate) fn mnk(rows: i32, cols: i32, k: i32) -> pb::RuleSet {
    pb::RuleSet {
        kind: Some(pb::rule_set::Kind::Mnk(pb::MnkRules { rows, cols, k })),
    }
}

pub(crate) fn connect_four() -> pb::RuleSet {
    pb::RuleSet {
        kind: Some(pb::rule_set::Kind::ConnectFour(
            pb::ConnectFourRules::default(),
        )),
    }
}

pub(crate) fn create_request(game_id: &str, rules: pb::RuleSet) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        request_id: String::new(),
        game_id: game_id.into(),
        rules: Some(rules),
        seats: two_seats(),
        undo_policy: pb::UndoPolicy::Unspecified as i32,
        time_control: None,
        absence: None,
    }
}

/// Creates a game and returns it.
pub(crate) async fn create(client: &mut Client, game_id: &str, rules: pb::RuleSet) -> pb::Game {
    create_from(client, create_request(game_id, rules)).await
}

/// Sends `request` and returns the created game.
pub(crate) async fn create_from(client: &mut Client, request: pb::CreateGameRequest) -> pb::Game {
    client
        .create_game(request)
        .await
        .expect("game created")
        .into_inner()
        .game
        .unwrap()
}

pub(crate) fn place(row: i32, col: i32) -> pb::Move {
    pb::Move {
        kind: Some(pb::r#move::Kind::Place(pb::Place {
            row,
            col,
            mark: None,
        })),
    }
}

/// Places seat `mark`'s symbol on (row, col), in a wild game.
pub(crate) fn place_mark(row: i32, col: i32, mark: u32) -> pb::Move {
    pb::Move {
        kind: Some(pb::r#move::Kind::Place(pb::Place {
            row,
            col,
            mark: Some(mark),
        })),
    }
}

pub(crate) fn drop_in(column: i32) -> pb::Move {
    pb::Move {
        kind: Some(pb::r#move::Kind::Drop(pb::Drop { column })),
    }
}

pub(crate) fn move_request(game_id: &str, seat: u32, mv: pb::Move) -> pb::SubmitMoveRequest {
    pb::SubmitMoveRequest {
        game_id: game_id.into(),
        seat: Some(seat),
        r#move: Some(mv),
        request_id: String::new(),
        expected_sequence: None,
        view: pb::GameView::Full as i32,
    }
}

/// Plays a move and returns the reply.
pub(crate) async fn play(
    client: &mut Client,
    game_id: &str,
    seat: u32,
    mv: pb::Move,
) -> Result<pb::SubmitMoveResponse, tonic::Status> {
    client
        .submit_move(move_request(game_id, seat, mv))
        .await
        .map(tonic::Response::into_inner)
}

/// Plays `moves` alternately from seat 0, expecting each to be accepted.
pub(crate) async fn play_all(
    client: &mut Client,
    game_id: &str,
    moves: &[pb::Move],
) -> pb::SubmitMoveResponse {
    let mut last = None;
    for (i, mv) in moves.iter().enumerate() {
        last = Some(
            play(client, game_id, (i % 2) as u32, *mv)
                .await
                .expect("move accepted"),
        );
    }
    last.expect("at least one move")
}

pub(crate) async fn get_game(client: &mut Client, game_id: &str) -> pb::Game {
    client
        .get_game(pb::GetGameRequest {
            game_id: game_id.into(),
            at_sequence: None,
        })
        .await
        .expect("game found")
        .into_inner()
        .game
        .unwrap()
}

/// The ErrorInfo reason of a status.
pub(crate) fn reason(status: &tonic::Status) -> String {
    status
        .get_error_details()
        .error_info()
        .map(|i| i.reason.clone())
        .unwrap_or_default()
}

/// The ErrorInfo metadata value `key` of a status.
pub(crate) fn metadata(status: &tonic::Status, key: &str) -> Option<String> {
    status
        .get_error_details()
        .error_info()
        .and_then(|i| i.metadata.get(key).cloned())
}

/// The BadRequest field named by a status.
pub(crate) fn bad_field(status: &tonic::Status) -> Option<String> {
    status
        .get_error_details()
        .bad_request()
        .and_then(|b| b.field_violations.first().map(|v| v.field.clone()))
}

/// Asserts a status's code and reason.
#[track_caller]
pub(crate) fn assert_rejected(
    result: Result<impl std::fmt::Debug, tonic::Status>,
    code: tonic::Code,
    expected_reason: &str,
) -> tonic::Status {
    let status = result.expect_err("expected a rejection");
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (code, expected_reason),
        "status: {status:?}"
    );
    assert!(!status.message().is_empty());
    status
}

pub(crate) fn position(game: &pb::Game) -> &pb::Position {
    game.position.as_ref().unwrap()
}

pub(crate) fn board_text(game: &pb::Game) -> Vec<String> {
    position(game).board.as_ref().unwrap().text.clone()
}

/// Reads a whole stream (follow = false) into its items.
pub(crate) async fn read_stream(
    client: &mut Client,
    game_id: &str,
    from_sequence: u64,
) -> Vec<pb::stream_events_response::Kind> {
    let mut stream = client
        .stream_events(pb::StreamEventsRequest {
            game_id: game_id.into(),
            from_sequence,
            follow: false,
            round: None,
        })
        .await
        .expect("stream opens")
        .into_inner();
    let mut items = Vec::new();
    while let Some(item) = within(stream.message()).await.expect("stream item") {
        items.push(item.kind.unwrap());
    }
    items
}

/// Opens a followed event stream from `from_sequence`.
pub(crate) async fn follow(
    client: &mut Client,
    game_id: &str,
    from_sequence: u64,
) -> tonic::Streaming<pb::StreamEventsResponse> {
    client
        .stream_events(pb::StreamEventsRequest {
            game_id: game_id.into(),
            from_sequence,
            follow: true,
            round: None,
        })
        .await
        .expect("stream opens")
        .into_inner()
}

/// X (seat 0) takes the top row; O plays (1,0) and (1,1) in between. The
/// fifth move wins.
pub(crate) fn x_wins_top_row() -> [pb::Move; 5] {
    [
        place(0, 0),
        place(1, 0),
        place(0, 1),
        place(1, 1),
        place(0, 2),
    ]
}

/// The first page of ListGames (up to 50 games, oldest first).
pub(crate) async fn list_games(client: &mut Client) -> Vec<pb::GameSummary> {
    client
        .list_games(pb::ListGamesRequest::default())
        .await
        .expect("games listed")
        .into_inner()
        .games
}

/// Sends raw bytes as a request body and decodes nothing back.
#[derive(Default)]
pub(crate) struct RawCodec;

/// [`RawCodec`]'s encoder.
pub(crate) struct RawEncoder;
/// [`RawCodec`]'s decoder.
pub(crate) struct RawDecoder;

impl tonic::codec::Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = ();
    type Encoder = RawEncoder;
    type Decoder = RawDecoder;
    fn encoder(&mut self) -> RawEncoder {
        RawEncoder
    }
    fn decoder(&mut self) -> RawDecoder {
        RawDecoder
    }
}

impl tonic::codec::Encoder for RawEncoder {
    type Item = Vec<u8>;
    type Error = tonic::Status;
    fn encode(
        &mut self,
        item: Vec<u8>,
        dst: &mut tonic::codec::EncodeBuf<'_>,
    ) -> Result<(), tonic::Status> {
        bytes::BufMut::put_slice(dst, &item);
        Ok(())
    }
}

impl tonic::codec::Decoder for RawDecoder {
    type Item = ();
    type Error = tonic::Status;
    fn decode(
        &mut self,
        buf: &mut tonic::codec::DecodeBuf<'_>,
    ) -> Result<Option<()>, tonic::Status> {
        bytes::Buf::advance(buf, bytes::Buf::remaining(buf));
        Ok(Some(()))
    }
}

/// Awaits `answer` for at most 10 s: a reply that never comes fails the
/// test instead of hanging it.
pub(crate) async fn within<T>(answer: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), answer)
        .await
        .expect("an answer within 10 s")
}
