//! Engine work off the game actors: bot moves and analyses run on tokio's
//! blocking threads, each bounded by a semaphore, and stop through their
//! budget's flag: set at their deadline, when their caller goes away, and
//! at shutdown.
//!
//! Bot moves are scheduled fairly: the bot permits are handed out first
//! come, first served (tokio's semaphore is FIFO), and a bot holds one for
//! one move and at most [`EngineSettings::bot_move_time`], then queues
//! again behind the bots already waiting. So a bot waits at most about
//! `bot_move_time` times the bots ahead of it divided by
//! [`EngineSettings::bot_threads`], however heavy the other games' bots
//! are.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rand_chacha::ChaCha8Rng;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::RegistryError;
use crate::engine::{Analysis, Bot, Budget, Choice, EngineKind, Node};
use crate::game::GameState;

/// Limits on engine work, part of [`super::RegistrySettings`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineSettings {
    /// Bot moves decided at once on this server (default: half the cores,
    /// at least 1); further bots wait their turn, so games of players and
    /// the runtime keep the other cores.
    pub bot_threads: usize,
    /// The node budget of one bot move (default 1,000,000): positions for
    /// minimax and connect4, iterations for MCTS. The same budget gives the
    /// same move on every machine, so a bot game plays again move for move
    /// (unless `bot_move_time` cut a move short).
    pub bot_nodes: u64,
    /// The most time one bot move may think (default 2 s), counted from
    /// when it gets its permit: then the engine plays the best move it has
    /// found (which, unlike one decided within `bot_nodes`, depends on the
    /// machine's speed). Keeps every bot game moving and the pool fair.
    pub bot_move_time: Duration,
    /// Analyses (SuggestMove, AnalyzePosition) running at once (default
    /// 2); more are refused with UNAVAILABLE / OVERLOADED.
    pub max_analyses: usize,
    /// The most nodes one analysis may visit (default 100,000,000).
    pub analysis_nodes: u64,
    /// The most time one analysis may take (default 10 s).
    pub analysis_time: Duration,
}

impl Default for EngineSettings {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        EngineSettings {
            bot_threads: (cores / 2).max(1),
            bot_nodes: 1_000_000,
            bot_move_time: Duration::from_secs(2),
            max_analyses: 2,
            analysis_nodes: 100_000_000,
            analysis_time: Duration::from_secs(10),
        }
    }
}

/// The server's engine pools: permits for bot moves and for analyses, and
/// the server's shutdown, which stops every search.
#[derive(Debug)]
pub(super) struct Thinking {
    settings: EngineSettings,
    bots: Arc<Semaphore>,
    analyses: Arc<Semaphore>,
    shutdown: CancellationToken,
}

/// What to search: the state's position, seat to move and seats in play.
#[derive(Debug, Clone)]
pub(super) struct Job {
    /// The game as it stands.
    pub(super) state: Arc<GameState>,
    /// The engine.
    pub(super) engine: EngineKind,
    /// 1 to [`crate::engine::MAX_STRENGTH`].
    pub(super) strength: u8,
    /// The generator.
    pub(super) rng: ChaCha8Rng,
    /// The node budget.
    pub(super) nodes: u64,
}

impl Job {
    /// The node to search from; `None` when the game is over.
    fn node(&self) -> Option<Node<'_>> {
        let seat = self.state.to_move()?;
        let seats = self.state.config().seats().len();
        let out = (0..seats)
            .map(|i| self.state.is_out(crate::rules::Seat(i as u8)))
            .collect();
        Some(Node::new(
            self.state.config().rules(),
            self.state.position().clone(),
            seat,
            out,
        ))
    }
}

/// Sets the flag when dropped: a search whose caller went away stops.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Runs `search` on a blocking thread with `stop` as its flag, setting the
/// flag when `limit` has passed or `shutdown` is cancelled: its answer, and
/// whether the deadline (not shutdown, nor a caller's stop) cut it short.
async fn search_within<T: Send + 'static>(
    limit: Duration,
    stop: &Arc<AtomicBool>,
    shutdown: &CancellationToken,
    search: impl FnOnce(&AtomicBool) -> Option<T> + Send + 'static,
) -> (Option<T>, bool) {
    let flag = Arc::clone(stop);
    let mut work = tokio::task::spawn_blocking(move || search(&flag));
    let mut timed_out = false;
    let answer = tokio::select! {
        done = &mut work => done,
        () = tokio::time::sleep(limit) => {
            timed_out = !stop.swap(true, Ordering::Relaxed);
            work.await
        }
        () = shutdown.cancelled() => {
            stop.store(true, Ordering::Relaxed);
            work.await
        }
    };
    (answer.ok().flatten(), timed_out)
}

impl Thinking {
    pub(super) fn new(settings: EngineSettings, shutdown: CancellationToken) -> Self {
        Thinking {
            settings,
            bots: Arc::new(Semaphore::new(settings.bot_threads.max(1))),
            analyses: Arc::new(Semaphore::new(settings.max_analyses)),
            shutdown,
        }
    }

    /// The limits.
    pub(super) fn settings(&self) -> &EngineSettings {
        &self.settings
    }

    /// A search of `state` by `bot`'s engine and strength, with its
    /// generator for the next event's sequence, within `nodes`.
    pub(super) fn job(&self, state: Arc<GameState>, bot: &Bot, nodes: u64) -> Job {
        Job {
            rng: bot.rng(state.sequence() + 1),
            state,
            engine: bot.engine,
            strength: bot.strength,
            nodes,
        }
    }

    /// Waits for a bot permit, first come, first served: a bot's turn to
    /// think. `None` at shutdown. The caller takes the game's state only
    /// once it has the permit, so a bot waiting its turn holds no copy of
    /// its game.
    ///
    /// # Cancellation safety
    /// Dropping the future gives up the place in the queue.
    pub(super) async fn bot_turn(&self) -> Option<OwnedSemaphorePermit> {
        tokio::select! {
            permit = Arc::clone(&self.bots).acquire_owned() => permit.ok(),
            () = self.shutdown.cancelled() => None,
        }
    }

    /// Decides a bot's move with its turn's `permit` (see
    /// [`Thinking::bot_turn`]): runs the engine on a blocking thread until
    /// it answers, [`EngineSettings::bot_move_time`] passes (then it plays
    /// the best move found so far) or `stop` is set. `None` when stopped or
    /// when the engine found no move. At shutdown the search stops and the
    /// future never resolves, so that no move is appended then.
    ///
    /// # Cancellation safety
    /// Dropping the future stops the search.
    pub(super) async fn bot_move(
        &self,
        permit: OwnedSemaphorePermit,
        job: Job,
        stop: Arc<AtomicBool>,
    ) -> Option<Choice> {
        let _permit = permit;
        if self.shutdown.is_cancelled() {
            return std::future::pending().await;
        }
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        let _guard = StopOnDrop(Arc::clone(&stop));
        let limit = self.settings.bot_move_time;
        let (choice, timed_out) = search_within(limit, &stop, &self.shutdown, move |flag| {
            let budget = Budget {
                nodes: job.nodes,
                stop: flag,
            };
            let mut rng = job.rng.clone();
            let engine = job.engine.engine();
            engine.choose(&job.node()?, job.strength, &budget, &mut rng)
        })
        .await;
        if self.shutdown.is_cancelled() {
            return std::future::pending().await;
        }
        choice.filter(|_| timed_out || !stop.load(Ordering::Relaxed))
    }

    /// Runs an analysis within `time` (capped by the server's limit):
    /// `suggest` asks for one move, otherwise every move's score.
    ///
    /// # Errors
    /// [`RegistryError::AnalysesBusy`] when every analysis permit is taken,
    /// [`RegistryError::AnalysisExhausted`] when the engine had no answer
    /// within the time, [`RegistryError::Rejected`] with
    /// [`crate::game::GameError::GameOver`] when the game is over.
    ///
    /// # Cancellation safety
    /// Dropping the future stops the search.
    pub(super) async fn analyze(
        &self,
        job: Job,
        time: Option<Duration>,
        suggest: bool,
    ) -> Result<Answer, RegistryError> {
        let _permit = Arc::clone(&self.analyses)
            .try_acquire_owned()
            .map_err(|_| RegistryError::AnalysesBusy {
                max: self.settings.max_analyses,
            })?;
        if job.state.to_move().is_none() {
            return Err(RegistryError::Rejected(crate::game::GameError::GameOver));
        }
        let limit = time.map_or(self.settings.analysis_time, |t| {
            t.min(self.settings.analysis_time)
        });
        let stop = Arc::new(AtomicBool::new(false));
        let _guard = StopOnDrop(Arc::clone(&stop));
        let (answer, _) = search_within(limit, &stop, &self.shutdown, move |flag| {
            let budget = Budget {
                nodes: job.nodes,
                stop: flag,
            };
            let mut rng = job.rng.clone();
            let node = job.node()?;
            let engine = job.engine.engine();
            if suggest {
                engine
                    .choose(&node, job.strength, &budget, &mut rng)
                    .map(Answer::Move)
            } else {
                engine
                    .analyze(&node, job.strength, &budget, &mut rng)
                    .map(Answer::Analysis)
            }
        })
        .await;
        answer.ok_or(RegistryError::AnalysisExhausted {
            ms: limit.as_millis() as u64,
        })
    }
}

/// What an analysis found.
#[derive(Debug, Clone)]
pub enum Answer {
    /// SuggestMove's move.
    Move(Choice),
    /// AnalyzePosition's scores.
    Analysis(Analysis),
}
