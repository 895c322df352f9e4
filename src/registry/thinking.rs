//! Engine work off the game actors: bot moves and analyses run on tokio's
//! blocking threads, each bounded by a semaphore, and stop through their
//! budget's flag.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rand_chacha::ChaCha8Rng;
use tokio::sync::Semaphore;

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
    /// same move on every machine, so a bot game replays move for move.
    pub bot_nodes: u64,
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
            max_analyses: 2,
            analysis_nodes: 100_000_000,
            analysis_time: Duration::from_secs(10),
        }
    }
}

/// The server's engine pools: permits for bot moves and for analyses.
#[derive(Debug)]
pub(super) struct Thinking {
    settings: EngineSettings,
    bots: Arc<Semaphore>,
    analyses: Arc<Semaphore>,
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

impl Thinking {
    pub(super) fn new(settings: EngineSettings) -> Self {
        Thinking {
            settings,
            bots: Arc::new(Semaphore::new(settings.bot_threads.max(1))),
            analyses: Arc::new(Semaphore::new(settings.max_analyses)),
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

    /// Decides a bot's move: waits for a bot permit, then runs the engine
    /// on a blocking thread until it answers or `stop` is set. `None` when
    /// stopped or when the engine found no move.
    ///
    /// # Cancellation safety
    /// Dropping the future stops the search.
    pub(super) async fn bot_move(&self, job: Job, stop: Arc<AtomicBool>) -> Option<Choice> {
        let _permit = Arc::clone(&self.bots).acquire_owned().await.ok()?;
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        let _guard = StopOnDrop(Arc::clone(&stop));
        let flag = Arc::clone(&stop);
        let choice = tokio::task::spawn_blocking(move || {
            let budget = Budget {
                nodes: job.nodes,
                stop: &flag,
            };
            let mut rng = job.rng.clone();
            let engine = job.engine.engine();
            engine.choose(&job.node()?, job.strength, &budget, &mut rng)
        })
        .await
        .ok()
        .flatten();
        choice.filter(|_| !stop.load(Ordering::Relaxed))
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
        let flag = Arc::clone(&stop);
        let mut work = tokio::task::spawn_blocking(move || {
            let budget = Budget {
                nodes: job.nodes,
                stop: &flag,
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
        });
        let answer = tokio::select! {
            done = &mut work => done,
            () = tokio::time::sleep(limit) => {
                stop.store(true, Ordering::Relaxed);
                work.await
            }
        };
        answer
            .ok()
            .flatten()
            .ok_or(RegistryError::AnalysisExhausted {
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
