//! Analyses: SuggestMove and AnalyzePosition, run in the engine pool.

use std::sync::Arc;

use super::{AnalysisReply, AnalysisRequest, Registry, RegistryError};
use crate::game::GameState;

impl Registry {
    /// Runs an analysis of `state` with `engine` (`None`: the strongest for
    /// the game): SuggestMove's one move when `suggest`, otherwise
    /// AnalyzePosition's scores. `nodes` and `time` are the call's budget,
    /// capped by the server's (0 / `None`: the server's). Runs on a blocking
    /// thread, at most [`EngineSettings::max_analyses`](super::EngineSettings::max_analyses) at once.
    ///
    /// # Errors
    /// [`RegistryError::EngineUnsupported`], [`RegistryError::AnalysesBusy`],
    /// [`RegistryError::AnalysisExhausted`], and
    /// [`RegistryError::Rejected`] with a game over.
    pub async fn analyze(
        &self,
        state: GameState,
        request: AnalysisRequest,
    ) -> Result<AnalysisReply, RegistryError> {
        let rules = state.config().rules();
        let seats = state.config().seats().len();
        let engine = request
            .engine
            .unwrap_or_else(|| crate::engine::EngineKind::best_for(rules, seats));
        engine
            .supports(rules, seats)
            .map_err(|why| RegistryError::EngineUnsupported { why })?;
        let thinking = &self.inner.thinking;
        let limit = thinking.settings().analysis_nodes;
        let nodes = match request.nodes {
            0 => limit,
            n => n.min(limit),
        };
        let sequence = state.sequence();
        let seat = state.to_move();
        let bot = crate::engine::Bot {
            engine,
            strength: request.strength,
            seed: request.seed,
        };
        let state = Arc::new(state);
        let job = thinking.job(Arc::clone(&state), &bot, nodes);
        let started = std::time::Instant::now();
        let answer = thinking.analyze(job, request.time, request.suggest).await;
        let outcome = match &answer {
            Ok(_) => "answered",
            Err(RegistryError::AnalysesBusy { .. }) => {
                self.inner.metrics.shed("max_analyses");
                "busy"
            }
            Err(RegistryError::AnalysisExhausted { .. }) => "exhausted",
            Err(_) => "refused",
        };
        self.inner
            .metrics
            .analyzed(engine.name(), outcome, started.elapsed());
        let answer = answer?;
        Ok(AnalysisReply {
            seat: seat.unwrap_or(crate::rules::Seat(0)),
            sequence,
            engine,
            answer,
            state,
        })
    }
}
