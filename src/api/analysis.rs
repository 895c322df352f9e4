//! What SuggestMove and AnalyzePosition share: admitting the call, checking
//! the engine, strength and target, setting up the position, and asking the
//! registry for the analysis. The handlers only shape the answer.

use tonic::{Request, Status};

use super::checks::check_game_id;
use super::request::AnalysisQuery;
use super::{GameApi, pb, status};
use crate::game::{self, GameState, MIN_TIME_MS};
use crate::proto::convert::{self, FieldError};
use crate::registry::{AnalysisReply, AnalysisRequest, Route};

impl GameApi {
    /// Where an analysis of `target` is served: a game's by the node that
    /// runs it, a setup's here.
    pub(super) async fn analysis_route(&self, target: Option<&pb::AnalysisTarget>) -> Route {
        match target.and_then(|t| t.source.as_ref()) {
            Some(pb::analysis_target::Source::GameId(game_id)) => {
                self.registry.settled_route(game_id).await
            }
            _ => Route::Local(None),
        }
    }

    /// Admits an analysis call and runs it (one move when `Q` asks for a
    /// suggestion) on the position its target names, checked: a game's
    /// state (read through its actor) or one set up from rules and moves.
    pub(super) async fn analyze<Q: AnalysisQuery>(
        &self,
        request: Request<Q>,
    ) -> Result<AnalysisReply, Status> {
        let _permit = self.admit()?;
        let req = request.into_inner();
        let engine = convert::engine_from_proto(req.engine(), "engine")?;
        let strength = convert::strength_from_proto(
            req.strength(),
            "strength",
            pb::ErrorReason::InvalidRequest,
        )?;
        let target = req
            .target()
            .ok_or_else(|| FieldError::invalid("target", "a target is required"))?;
        let at = target.at_sequence.filter(|at| *at > 0);
        let state = match &target.source {
            None => {
                return Err(FieldError::invalid(
                    "target.source",
                    "a game_id or a setup is required",
                )
                .into());
            }
            Some(pb::analysis_target::Source::GameId(game_id)) => {
                check_game_id(game_id)?;
                self.registry.state(game_id, at).await?
            }
            Some(pb::analysis_target::Source::Setup(setup)) => self.setup(setup)?,
        };
        let budget = req.budget();
        let request = AnalysisRequest {
            engine,
            strength,
            seed: req.seed().unwrap_or(0),
            nodes: budget.map_or(0, |b| b.nodes),
            time: budget
                .filter(|b| b.time_ms > 0)
                .map(|b| std::time::Duration::from_millis(b.time_ms)),
            suggest: Q::SUGGEST,
        };
        Ok(self.registry.analyze(state, request).await?)
    }

    /// The state of a game created with `setup`'s rules and seats (named
    /// "0", "1", ...) after its moves, each played by the seat to move
    /// ([`game::setup`]); what is at fault is named under `target.setup`.
    fn setup(&self, setup: &pb::PositionSetup) -> Result<GameState, Status> {
        const MAX_SETUP_MOVES: usize = 10_000;
        let settings = self.registry.settings();
        if setup.moves.len() > MAX_SETUP_MOVES {
            return Err(FieldError::invalid(
                "target.setup.moves",
                format!(
                    "{} moves is over the limit of {MAX_SETUP_MOVES}",
                    setup.moves.len()
                ),
            )
            .into());
        }
        let mut rules = setup.rules.clone();
        if let Some(rules) = rules.as_mut() {
            convert::fill_seed(rules, || 0);
        }
        let seats: Vec<pb::Seat> = (0..setup.seats.max(2))
            .map(|i| pb::Seat {
                player_id: i.to_string(),
                symbol: i.to_string(),
                ..pb::Seat::default()
            })
            .collect();
        let config = convert::config_from_proto(
            convert::WireConfig {
                rules: rules.as_ref(),
                seats: &seats,
                undo_policy: 0,
                time_control: None,
                absence: None,
                matched_at: None,
                labels: &std::collections::BTreeMap::new(),
                clocks_start_at: None,
            },
            settings.max_cells,
            settings.seat_limits,
            MIN_TIME_MS,
        )
        .map_err(|mut e| {
            e.field = format!("target.setup.{}", e.field);
            e
        })?;
        // Each move is read just before it is played: a malformed move
        // after a refused one is never reached, and the refusal is the
        // answer.
        let field = |i: usize| format!("target.setup.moves[{i}]");
        let mut malformed = None;
        let moves = setup.moves.iter().enumerate().map_while(|(i, mv)| {
            convert::move_from_proto(Some(mv), &field(i))
                .map_err(|e| malformed = Some(e))
                .ok()
        });
        let state = game::setup(config, moves)
            .map_err(|refused| status::setup_move_refused(&field(refused.index), &refused.error))?;
        match malformed {
            Some(e) => Err(e.into()),
            None => Ok(state),
        }
    }
}
