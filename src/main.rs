//! The `plylog` command: `plylog serve` (the default) runs the gRPC
//! service; the operator's commands (`games`, `show`, `export`, `import`,
//! `verify`, `migrate`) work on the database directly ([`plylog::ops`]);
//! `plylog bench` measures a server: it runs the `plylog-bench` binary
//! (crates/plylog-bench) that sits next to this one, as git and cargo run
//! their external subcommands.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use plylog::api::auth::AccessSettings;
use plylog::app::{Application, ClusterSettings, Settings, TlsFiles, shutdown_signal};
use plylog::registry::GameLimitArgs;
use plylog::registry::{EngineSettings, HeavyReadSettings, RegistrySettings};
use plylog::telemetry::{self, LogFormat};
use plylog::transport::TransportSettings;
use plylog::web::WebSettings;

/// The process's allocator: mimalloc (Microsoft's, <https://github.com/microsoft/mimalloc>),
/// for the many small, short-lived allocations of HTTP/2 frames, protobuf
/// messages and events that cross threads.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Authoritative turn-based board games over gRPC.
#[derive(Debug, Parser)]
#[command(
    name = "plylog",
    version,
    about,
    args_conflicts_with_subcommands = true,
    after_help = "Exit codes: 0 done; 1 verify found a bad log (serve: any failure, logged); \
                  2 a usage error; 3 any other failure of an operator command or a bench (one \
                  line on standard error)."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// How logs are written to stdout: text lines, or one JSON object per
    /// event with its span's fields (game_id, seat, request_id...). RUST_LOG
    /// filters them (default info; plylog=debug adds a line per call). The
    /// operator commands log to stderr, warnings only by default.
    #[arg(long, env = "PLYLOG_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text, global = true)]
    log_format: LogFormat,
    /// Export traces over OTLP/gRPC to this collector, e.g.
    /// http://127.0.0.1:4317 (a caller's W3C traceparent metadata continues
    /// its trace). Needs the `otlp` cargo feature (on by default). The
    /// server's only: the operator commands export nothing.
    #[arg(long, env = "PLYLOG_OTLP_ENDPOINT", global = true)]
    otlp_endpoint: Option<String>,
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the gRPC service (the default when no command is given).
    Serve(Box<ServeArgs>),
    #[command(flatten)]
    Ops(plylog::ops::Command),
    /// Measure a server under load (play, follow, cold, replay, forward), beside a
    /// no-op gRPC handler measured the same way: runs the plylog-bench
    /// binary next to this one (`plylog bench --help` for its commands).
    #[command(disable_help_flag = true)]
    Bench {
        /// plylog-bench's arguments, passed through.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// Generate Connect Four's opening book (data/connect4-book.bin) with
    /// the project's own solver; the same arguments give the same bytes.
    Connect4Book(BookArgs),
}

/// The arguments of `plylog connect4-book`.
#[derive(Debug, Clone, Args)]
struct BookArgs {
    /// Where to write the book.
    #[arg(long, default_value = "data/connect4-book.bin")]
    out: PathBuf,
    /// The node budget the book is made for: positions the engine proves
    /// within it are left out (the server's default --bot-nodes).
    #[arg(long, default_value_t = 1_000_000)]
    nodes: u64,
    /// The most discs of a position in the book.
    #[arg(long, default_value_t = 42)]
    max_moves: u32,
}

/// Writes the opening book, printing a line per position solved.
fn connect4_book(args: &BookArgs) -> ExitCode {
    let started = std::time::Instant::now();
    let bytes =
        plylog::engine::generate_book(args.nodes, args.max_moves, |position, score, entries| {
            eprintln!(
                "{entries} entries, {:.0} s: a position of {} discs scores {score}",
                started.elapsed().as_secs_f64(),
                position.moves()
            );
        });
    match std::fs::write(&args.out, &bytes) {
        Ok(()) => {
            eprintln!(
                "{} entries written to {}",
                bytes.len() / 8,
                args.out.display()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("plylog: cannot write {}: {error}", args.out.display());
            ExitCode::from(3)
        }
    }
}

/// Runs `plylog-bench ARGS`, the binary in this one's directory, with the
/// log format this command was given, and exits as it exits: 3 (with one
/// line on standard error, naming the command that builds it) when it is
/// missing or cannot be run, or when a signal ended it.
fn bench(args: Vec<OsString>, log_format: LogFormat) -> ExitCode {
    let name = format!("plylog-bench{}", std::env::consts::EXE_SUFFIX);
    let binary = match std::env::current_exe() {
        Ok(exe) => exe.with_file_name(name),
        Err(error) => {
            eprintln!("plylog: cannot find the plylog binary's directory: {error}");
            return ExitCode::from(3);
        }
    };
    if !binary.is_file() {
        eprintln!(
            "plylog: plylog bench runs {}, which is missing: build it with \
             `cargo build -p plylog-bench` (`--release` for a release build)",
            binary.display()
        );
        return ExitCode::from(3);
    }
    let log_format = clap::ValueEnum::to_possible_value(&log_format)
        .map(|value| value.get_name().to_owned())
        .unwrap_or_default();
    match std::process::Command::new(&binary)
        .args(args)
        .env("PLYLOG_LOG_FORMAT", log_format)
        .status()
    {
        Ok(status) => status
            .code()
            .and_then(|code| u8::try_from(code).ok())
            .map_or(ExitCode::from(3), ExitCode::from),
        Err(error) => {
            eprintln!("plylog: running {}: {error}", binary.display());
            ExitCode::from(3)
        }
    }
}

#[derive(Debug, Clone, Args)]
struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "PLYLOG_LISTEN", default_value = "127.0.0.1:50051")]
    listen: SocketAddr,
    /// Serve Prometheus metrics at http://<address>/metrics (off unless
    /// given; 127.0.0.1:9464 is the customary port).
    #[arg(long, env = "PLYLOG_METRICS_LISTEN")]
    metrics_listen: Option<SocketAddr>,
    /// Connections the metrics port holds open at once; one more is
    /// accepted and closed at once. Its idle and header timeouts are the
    /// gRPC port's.
    #[arg(long, env = "PLYLOG_METRICS_MAX_CONNECTIONS", default_value_t = 100)]
    metrics_max_connections: usize,
    /// Do not serve the dashboard (by default it is at http://<listen>/,
    /// on the gRPC port).
    #[arg(long, env = "PLYLOG_NO_DASHBOARD")]
    no_dashboard: bool,
    /// An origin whose pages may call the API with grpc-web or Connect, e.g.
    /// https://admin.example.com (repeat the flag for more; * allows any).
    /// None by default: only the dashboard's own origin.
    #[arg(long = "cors-origin", env = "PLYLOG_CORS_ORIGINS", value_delimiter = ',', value_parser = plylog::web::parse_origin)]
    cors_origins: Vec<http::HeaderValue>,
    /// Compress a reply message only when it is at least this many bytes
    /// (before compression), and only for callers that accept gzip or
    /// zstd; "off" compresses none. Requests are accepted compressed
    /// whatever their size.
    #[arg(long, env = "PLYLOG_COMPRESS_REPLIES_ABOVE", default_value = "4096", value_parser = plylog::compression::ReplyCompression::parse)]
    compress_replies_above: plylog::compression::ReplyCompression,
    /// Event store: sqlite://<path> (created if missing), a file path, or
    /// postgres://user@host:port/database (shared by several nodes).
    /// Repeated (or several in the variable, separated by spaces): several
    /// PostgreSQL databases, "cells", each holding the games of its share
    /// of the slots; always give the same databases in the same order.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "sqlite://plylog.db",
        value_delimiter = ' ',
        num_args = 1
    )]
    database_url: Vec<String>,
    /// Connections in the PostgreSQL pool.
    #[arg(long, env = "PLYLOG_POSTGRES_CONNECTIONS", default_value_t = 16)]
    postgres_connections: u32,
    /// With PostgreSQL: this node's name, which it holds its slot leases
    /// under (a restart under the same name takes them back at once).
    /// Default: the advertised address.
    #[arg(long, env = "PLYLOG_NODE_NAME")]
    node_name: Option<String>,
    /// With PostgreSQL: the host:port other nodes reach this node's gRPC
    /// port at, to pass on calls for the games it runs. Default: the bound
    /// listen address (give one when listening on 0.0.0.0).
    #[arg(long, env = "PLYLOG_ADVERTISE_ADDRESS")]
    advertise_address: Option<String>,
    /// With PostgreSQL: milliseconds a slot lease lasts from its last
    /// renewal; a dead or cut-off node's games move to another node within
    /// it. Every node of a database should use the same.
    #[arg(long, env = "PLYLOG_SLOT_LEASE_MS", default_value_t = 6000)]
    slot_lease_ms: u64,
    /// With PostgreSQL: answer a call for a game another node runs with
    /// UNAVAILABLE / NOT_OWNER and the owner's address, instead of passing
    /// the call on to it (always so with --tls-cert).
    #[arg(long, env = "PLYLOG_CLUSTER_REDIRECT")]
    cluster_redirect: bool,
    #[command(flatten)]
    limits: GameLimitArgs,
    /// Bot moves decided at once (default: half the cores, at least 1);
    /// more bots wait their turn, leaving the other cores to players.
    #[arg(long, env = "PLYLOG_BOT_THREADS")]
    bot_threads: Option<usize>,
    /// Node budget of one bot move: positions for minimax and connect4,
    /// iterations for MCTS. A bot game replays move for move only under the
    /// same budget.
    #[arg(long, env = "PLYLOG_BOT_NODES", default_value_t = 1_000_000)]
    bot_nodes: u64,
    /// Most milliseconds one bot move may think once it has a bot thread;
    /// then the bot plays the best move found so far (which, unlike a move
    /// decided within --bot-nodes, depends on the machine's speed). Bots get
    /// threads first come, first served, one move at a time.
    #[arg(long, env = "PLYLOG_BOT_MOVE_MS", default_value_t = 2_000)]
    bot_move_ms: u64,
    /// SuggestMove and AnalyzePosition calls running at once; more get
    /// UNAVAILABLE / OVERLOADED.
    #[arg(long, env = "PLYLOG_MAX_ANALYSES", default_value_t = 2)]
    max_analyses: usize,
    /// Most nodes one analysis may visit.
    #[arg(long, env = "PLYLOG_ANALYSIS_NODES", default_value_t = 100_000_000)]
    analysis_nodes: u64,
    /// Most milliseconds one analysis may think.
    #[arg(long, env = "PLYLOG_ANALYSIS_TIME_LIMIT_MS", default_value_t = 10_000)]
    analysis_time_limit_ms: u64,
    /// Heavy reads (GetReplay pages with positions, GetGame and analyses
    /// at a past sequence) running at once, each rebuilding positions on a
    /// thread of its own (default: half the cores, at least 1); the others
    /// wait their turn, leaving the other cores to moves and light calls.
    #[arg(long, env = "PLYLOG_HEAVY_READ_THREADS")]
    heavy_read_threads: Option<usize>,
    /// Heavy reads admitted at once, running or waiting; more get
    /// UNAVAILABLE / OVERLOADED (retry with backoff).
    #[arg(long, env = "PLYLOG_MAX_HEAVY_READS", default_value_t = 64)]
    max_heavy_reads: usize,
    /// Seconds a game with no traffic and no subscribers stays in memory.
    #[arg(long, env = "PLYLOG_IDLE_TIMEOUT_SECS", default_value_t = 300)]
    idle_timeout_secs: u64,
    /// Events between a game's snapshots (a cache of its state, so a long
    /// log loads without replaying from the start); 0 takes none.
    #[arg(long, env = "PLYLOG_SNAPSHOT_EVERY", default_value_t = 1000)]
    snapshot_every: u64,
    /// Seconds of silence on a followed stream before a heartbeat.
    #[arg(long, env = "PLYLOG_HEARTBEAT_SECS", default_value_t = 15)]
    heartbeat_secs: u64,
    /// Seconds shutdown waits for in-flight calls and open streams before it
    /// closes their connections.
    #[arg(long, env = "PLYLOG_SHUTDOWN_GRACE_SECS", default_value_t = 10)]
    shutdown_grace_secs: u64,
    /// SQLite synchronous=NORMAL instead of FULL: faster commits, but a power
    /// loss (not a crash) may lose the last acknowledged moves.
    #[arg(long, env = "PLYLOG_SQLITE_SYNCHRONOUS_NORMAL")]
    sqlite_synchronous_normal: bool,
    /// Largest request message accepted, in bytes.
    #[arg(long, env = "PLYLOG_MAX_REQUEST_BYTES", default_value_t = 64 * 1024)]
    max_request_bytes: usize,
    /// Calls served at once (event streams aside); further ones are shed
    /// with UNAVAILABLE / OVERLOADED.
    #[arg(long, env = "PLYLOG_MAX_IN_FLIGHT", default_value_t = 4096)]
    max_in_flight: usize,
    /// Event streams open at once on this server.
    #[arg(long, env = "PLYLOG_MAX_STREAMS", default_value_t = 10_000)]
    max_streams: usize,
    /// Event streams open at once on one game.
    #[arg(long, env = "PLYLOG_MAX_STREAMS_PER_GAME", default_value_t = 1_000)]
    max_streams_per_game: usize,
    /// Games held in memory at once; at the limit, idle games are evicted,
    /// least recently used first (they reload from the log when next asked).
    #[arg(long, env = "PLYLOG_MAX_LIVE_GAMES", default_value_t = 100_000)]
    max_live_games: usize,
    /// Memory the games held in memory may weigh in all, in MiB (estimated
    /// per game from its board, moves, request ids and buffers); idle games
    /// are evicted, least recently used first, to stay under it.
    #[arg(long, env = "PLYLOG_MAX_LIVE_MEMORY_MB", default_value_t = 2048)]
    max_live_memory_mb: usize,
    /// Connections open at once; one more is accepted and closed at once.
    #[arg(long, env = "PLYLOG_MAX_CONNECTIONS", default_value_t = 10_000)]
    max_connections: usize,
    /// Seconds a connection may stay open with no call before it is closed.
    #[arg(long, env = "PLYLOG_IDLE_CONNECTION_SECS", default_value_t = 300)]
    idle_connection_secs: u64,
    /// Seconds between HTTP/2 keepalive pings to each client.
    #[arg(long, env = "PLYLOG_KEEPALIVE_SECS", default_value_t = 60)]
    keepalive_secs: u64,
    /// Seconds a keepalive ping may go unanswered before the connection is
    /// closed (a half-open connection goes within keepalive + this).
    #[arg(long, env = "PLYLOG_KEEPALIVE_TIMEOUT_SECS", default_value_t = 20)]
    keepalive_timeout_secs: u64,
    /// KiB buffered per event stream in HTTP/2's send buffer towards a
    /// client that does not read, besides the batch being written, whatever
    /// window the client advertises (events further behind wait in the
    /// game's live buffer, shared by all its streams, or in the store).
    /// Each buffered frame costs HTTP/2 about 300 bytes more: keep it small.
    #[arg(long, env = "PLYLOG_STREAM_BUFFER_KIB", default_value_t = 1)]
    stream_buffer_kib: usize,
    /// Calls (streams included) one connection may have open at once.
    #[arg(long, env = "PLYLOG_MAX_STREAMS_PER_CONNECTION", default_value_t = 200)]
    max_streams_per_connection: u32,
    /// Milliseconds between checks that the database answers; health is
    /// NOT_SERVING while it does not.
    #[arg(long, env = "PLYLOG_STORE_CHECK_MS", default_value_t = 5000)]
    store_check_ms: u64,
    /// Commands one game queues before further ones are refused with
    /// UNAVAILABLE / OVERLOADED.
    #[arg(long, env = "PLYLOG_MAILBOX", default_value_t = 1024)]
    mailbox: usize,
    /// Serve TLS with this PEM certificate chain (needs --tls-key).
    #[arg(long, env = "PLYLOG_TLS_CERT", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, env = "PLYLOG_TLS_KEY", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Create games without seat tokens, so any caller may move for any seat.
    /// Only for a server that nothing but your own backend can reach.
    #[arg(long, env = "PLYLOG_NO_SEAT_TOKENS")]
    no_seat_tokens: bool,
    /// Require this key for CreateGame and ReissueSeatToken, sent as
    /// metadata "authorization: Bearer <key>". Unset: anyone may create
    /// games, and nobody may re-issue seat tokens.
    #[arg(long, env = "PLYLOG_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// File of secrets seat tokens are derived from (one per line, the first
    /// current; see docs/operations/configuration.md). Default with SQLite:
    /// <database file>.seat-token-secret, created if missing. Required with
    /// PostgreSQL unless --no-seat-tokens: every node reads the same file.
    #[arg(long, env = "PLYLOG_SEAT_TOKEN_SECRET_FILE")]
    seat_token_secret_file: Option<PathBuf>,
}

impl ServeArgs {
    fn settings(self) -> Settings {
        Settings {
            listen: self.listen,
            database_url: self.database_url.first().cloned().unwrap_or_default(),
            cell_urls: self.database_url.iter().skip(1).cloned().collect(),
            postgres_connections: self.postgres_connections,
            sqlite_synchronous_normal: self.sqlite_synchronous_normal,
            shutdown_grace: Duration::from_secs(self.shutdown_grace_secs),
            max_request_bytes: self.max_request_bytes,
            max_in_flight: self.max_in_flight,
            tls: self
                .tls_cert
                .zip(self.tls_key)
                .map(|(cert, key)| TlsFiles { cert, key }),
            transport: TransportSettings {
                max_connections: self.max_connections.max(1),
                idle_timeout: Duration::from_secs(self.idle_connection_secs.max(1)),
                keepalive_interval: Duration::from_secs(self.keepalive_secs.max(1)),
                keepalive_timeout: Duration::from_secs(self.keepalive_timeout_secs.max(1)),
                stream_send_buffer_bytes: self.stream_buffer_kib.max(1) * 1024,
                max_streams_per_connection: self.max_streams_per_connection.max(1),
                ..TransportSettings::default()
            },
            store_check_interval: Duration::from_millis(self.store_check_ms.max(100)),
            metrics_listen: self.metrics_listen,
            metrics_max_connections: self.metrics_max_connections.max(1),
            web: WebSettings {
                dashboard: !self.no_dashboard,
                cors_origins: self.cors_origins,
            },
            reply_compression: self.compress_replies_above,
            cluster: ClusterSettings {
                node_name: self.node_name.filter(|name| !name.is_empty()),
                advertise_address: self.advertise_address.filter(|a| !a.is_empty()),
                lease: Duration::from_millis(self.slot_lease_ms.max(600)),
                redirect: self.cluster_redirect,
            },
            access: AccessSettings {
                seat_tokens: !self.no_seat_tokens,
                api_key: self.api_key.filter(|key| !key.is_empty()),
                seat_token_secret_file: self.seat_token_secret_file,
            },
            registry: RegistrySettings {
                max_cells: self.limits.max_cells,
                seat_limits: self.limits.seat_limits(),
                idle_timeout: Duration::from_secs(self.idle_timeout_secs),
                heartbeat_interval: Duration::from_secs(self.heartbeat_secs.max(1)),
                max_streams: self.max_streams,
                max_streams_per_game: self.max_streams_per_game,
                max_live_games: self.max_live_games.max(1),
                max_live_bytes: self.max_live_memory_mb.max(1).saturating_mul(1 << 20),
                mailbox: self.mailbox.max(1),
                snapshot_every: self.snapshot_every,
                engines: EngineSettings {
                    bot_threads: self
                        .bot_threads
                        .unwrap_or(EngineSettings::default().bot_threads)
                        .max(1),
                    bot_nodes: self.bot_nodes.max(1),
                    bot_move_time: Duration::from_millis(self.bot_move_ms.max(1)),
                    max_analyses: self.max_analyses,
                    analysis_nodes: self.analysis_nodes.max(1),
                    analysis_time: Duration::from_millis(self.analysis_time_limit_ms.max(1)),
                },
                heavy_reads: HeavyReadSettings {
                    threads: self
                        .heavy_read_threads
                        .unwrap_or(HeavyReadSettings::default().threads)
                        .max(1),
                    max_heavy_reads: self.max_heavy_reads,
                },
                ..RegistrySettings::default()
            },
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let args = match cli.command {
        Some(Command::Serve(args)) => *args,
        None => cli.serve,
        Some(Command::Ops(command)) => {
            if let Err(error) = telemetry::init_for_command(cli.log_format) {
                eprintln!("plylog: {error}");
                return ExitCode::from(3);
            }
            return plylog::ops::run(command).await;
        }
        Some(Command::Bench { args }) => return bench(args, cli.log_format),
        Some(Command::Connect4Book(args)) => return connect4_book(&args),
    };
    let telemetry = match telemetry::init(cli.log_format, cli.otlp_endpoint.as_deref()) {
        Ok(telemetry) => telemetry,
        Err(error) => {
            eprintln!("plylog: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = async {
        let app = Application::build(args.settings()).await?;
        app.run_until(shutdown_signal()).await
    }
    .await;
    let code = match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(error = %plylog::api::cause_chain(&error), "plylog failed");
            ExitCode::FAILURE
        }
    };
    telemetry.shutdown();
    code
}
