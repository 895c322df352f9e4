//! `plylog bench cold`: how long the first GetGame of a long game takes
//! after a restart, when the server must load the game by replaying its
//! log.
//!
//! A server started in this process (the real [`Application`], seat tokens
//! off, on a loopback port) creates `--games` m,n,k games on the database
//! given and plays `--moves` moves in each, in an order that never makes
//! three in a row (15×15, k=5 and 225 moves by default: the board fills
//! up and the last move draws). That server stops; a fresh one starts on
//! the same database with nothing in memory, and each game is read once
//! with GetGame, one after another (cold), then once more (warm, the game
//! in memory), for comparison. The database keeps the games.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use plylog::api::auth::AccessSettings;
use plylog::app::{AppError, Application, Settings};
use plylog::proto as pb;
use plylog::proto::game_service_client::GameServiceClient;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::follow::write_quantiles;
use super::{
    BenchError, Latencies, connect, create_game, load_average, millis, no_line_moves, place,
};

/// Games filled at once.
const FILLERS: usize = 16;

/// `plylog bench cold`: the first GetGame of each game after a restart.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Prints the time to fill the games, then the p50, p99 and max of the \
first GetGame of each game on a freshly started server (cold: the game is loaded from the \
log) and of a second one (warm), in milliseconds, and their ratio; the load average before \
and after. The games stay in the database."
)]
pub struct ColdArgs {
    /// The database the in-process servers use: sqlite://PATH (created if
    /// missing) or postgres://USER@HOST:PORT/DATABASE.
    #[arg(long)]
    database_url: String,
    /// Games created and loaded.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    games: u32,
    /// Moves played in each game (at most rows x cols).
    #[arg(long, default_value_t = 225)]
    moves: u32,
    /// Board rows.
    #[arg(long, default_value_t = 15)]
    rows: i32,
    /// Board columns.
    #[arg(long, default_value_t = 15)]
    cols: i32,
    /// Stones in a row that win (at least 3: the moves never make three).
    #[arg(long, default_value_t = 5)]
    k: i32,
    /// Seed of the moves' order; default: a random one. Printed either way.
    #[arg(long)]
    seed: Option<u64>,
}

/// A server running in this process until [`Running::stop`].
struct Running {
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), AppError>>,
}

impl Running {
    /// Builds and starts a server on `database_url`: a free loopback port,
    /// no seat tokens, a one-second shutdown grace.
    async fn start(database_url: &str) -> Result<Self, BenchError> {
        let settings = Settings {
            access: AccessSettings {
                seat_tokens: false,
                ..AccessSettings::default()
            },
            shutdown_grace: Duration::from_secs(1),
            ..Settings::new(SocketAddr::from(([127, 0, 0, 1], 0)), database_url)
        };
        let app = Application::build(settings).await?;
        let addr = app.local_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(app.run_until(async {
            let _ = stopped.await;
        }));
        Ok(Running { addr, stop, task })
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops it gracefully and waits until it has closed the store.
    async fn stop(self) -> Result<(), BenchError> {
        let _ = self.stop.send(());
        match self.task.await {
            Ok(result) => Ok(result?),
            Err(error) => Err(BenchError::Failed(format!("the server task: {error}"))),
        }
    }
}

/// Fills the games, restarts, loads each once cold and once warm, and
/// writes the report to `out`.
///
/// # Errors
/// [`BenchError::Server`] when a server cannot start on the database;
/// [`BenchError::Call`] when a game cannot be created or played, or a
/// GetGame fails; [`BenchError::Failed`] for a board that cannot take the
/// moves.
pub async fn run(args: &ColdArgs, out: &mut impl Write) -> Result<(), BenchError> {
    let seed = args.seed.unwrap_or_else(rand::random);
    let moves = args.moves as usize;
    let order = |game: usize| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(game as u64);
        no_line_moves(args.rows, args.cols, moves, &mut rng)
    };
    if args.k < 3 || order(0).is_none() {
        return Err(BenchError::Failed(format!(
            "{moves} moves without three in a row need k >= 3 and room on the board \
             (k={}, {}x{})",
            args.k, args.rows, args.cols
        )));
    }
    writeln!(
        out,
        "plylog bench cold: {} games of {moves} moves on {}x{} k={}, seed {seed}, on {}",
        args.games,
        args.rows,
        args.cols,
        args.k,
        plylog::store::redacted(&args.database_url)
    )?;
    writeln!(out, "load average before: {}", load_average())?;

    let server = Running::start(&args.database_url).await?;
    let filled = Instant::now();
    let game_ids = fill(&server.url(), args, &order).await?;
    writeln!(
        out,
        "filled in {:.2} s; restarting the server",
        filled.elapsed().as_secs_f64()
    )?;
    server.stop().await?;

    let server = Running::start(&args.database_url).await?;
    let mut client = GameServiceClient::new(connect(&server.url(), 1).await?.remove(0));
    let cold = get_each(&mut client, &game_ids, moves).await?;
    let warm = get_each(&mut client, &game_ids, moves).await?;
    server.stop().await?;
    write_quantiles(out, "first GetGame after a restart (cold)", cold.clone())?;
    write_quantiles(out, "second GetGame (warm)", warm.clone())?;
    if let (Some(cold), Some(warm)) = (cold.summary(), warm.summary()) {
        writeln!(
            out,
            "cold / warm (p50): {:.2} ({} ms / {} ms)",
            cold.p50.as_secs_f64() / warm.p50.as_secs_f64(),
            millis(cold.p50),
            millis(warm.p50)
        )?;
    }
    writeln!(out, "load average after: {}", load_average())?;
    Ok(())
}

/// GetGame of each game in turn: the latency of each.
///
/// # Errors
/// [`BenchError::Call`] when one fails; [`BenchError::Failed`] when a game
/// has fewer events than its moves.
async fn get_each(
    client: &mut GameServiceClient<tonic::transport::Channel>,
    game_ids: &[String],
    moves: usize,
) -> Result<Latencies, BenchError> {
    let mut latencies = Latencies::default();
    for game_id in game_ids {
        let sent = Instant::now();
        let reply = client
            .get_game(pb::GetGameRequest {
                game_id: game_id.clone(),
                at_sequence: None,
            })
            .await
            .map_err(|status| BenchError::call("GetGame", status))?;
        latencies.record(sent.elapsed());
        let sequence = reply.into_inner().game.map_or(0, |game| game.last_sequence);
        if sequence < moves as u64 + 1 {
            return Err(BenchError::Failed(format!(
                "game {game_id} has {sequence} events, not {}",
                moves + 1
            )));
        }
    }
    Ok(latencies)
}

/// Creates the games and plays their moves, [`FILLERS`] games at once: the
/// games' ids, in the order they were asked for.
async fn fill(
    url: &str,
    args: &ColdArgs,
    order: &(dyn Fn(usize) -> Option<Vec<(i32, i32)>> + Sync),
) -> Result<Vec<String>, BenchError> {
    let games = args.games as usize;
    let channel = connect(url, 1).await?.remove(0);
    let next = Arc::new(AtomicUsize::new(0));
    let orders: Vec<Vec<(i32, i32)>> = (0..games).filter_map(order).collect();
    let orders = Arc::new(orders);
    let fillers: Vec<_> = (0..FILLERS.min(games))
        .map(|_| {
            let mut client = GameServiceClient::new(channel.clone());
            let (next, orders) = (Arc::clone(&next), Arc::clone(&orders));
            let (rows, cols, k) = (args.rows, args.cols, args.k);
            tokio::spawn(async move {
                let mut ids = Vec::new();
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(cells) = orders.get(index) else {
                        return Ok::<_, BenchError>(ids);
                    };
                    let (game_id, _) = create_game(&mut client, rows, cols, k).await?;
                    for (ply, cell) in cells.iter().enumerate() {
                        client
                            .submit_move(place(&game_id, (ply % 2) as u32, *cell, ""))
                            .await
                            .map_err(|status| BenchError::call("SubmitMove", status))?;
                    }
                    ids.push((index, game_id));
                }
            })
        })
        .collect();
    let mut ids = Vec::with_capacity(games);
    for filler in fillers {
        let filled = filler
            .await
            .map_err(|error| BenchError::Failed(format!("a filler: {error}")))??;
        ids.extend(filled);
    }
    ids.sort_unstable();
    Ok(ids.into_iter().map(|(_, id)| id).collect())
}
