//! The gRPC surface: the `plylog.v1.GameService` handlers, the conversion of
//! requests into domain commands, and the one table that maps every error to
//! a status code and a stable `ErrorInfo` reason.
//!
//! Handlers are thin: pull and check fields ([`crate::proto::convert`]), ask
//! the [`Registry`], map its answer. Where a change goes:
//!
//! - `mod.rs`: [`GameApi`] and its handlers, one per RPC.
//! - `admission.rs`: whether a call is served at all: the in-flight limit
//!   (OVERLOADED) and the API key.
//! - `request.rs`: what is read off a request besides its fields: the
//!   idempotency key, turn token and fingerprint, the seat a seat's request
//!   names, what an analysis asks for.
//! - `checks.rs`: field checks the handlers share ([`check_game_id`],
//!   [`check_new_game`], seats, request ids, limits).
//! - `paging.rs`: page sizes and page tokens (AIP-158).
//! - `analysis.rs`: SuggestMove and AnalyzePosition up to their answer,
//!   including the position a setup describes ([`crate::game::setup`]).
//! - `status.rs`: every error's status code and `ErrorInfo` reason.
//! - [`forward`]: a call for a game another node runs, passed on to it.
//! - [`auth`]: credentials in the `authorization` metadata, and who may
//!   create games; [`codec`]: the protobuf codec (bad bytes are the
//!   caller's fault).

mod admission;
mod analysis;
pub mod auth;
mod checks;
pub mod codec;
mod filter;
pub mod forward;
mod paging;
mod request;
mod status;

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::game::Command;
use crate::proto::convert::{self, FieldError, View};
use crate::proto::{self as pb, game_service_server::GameService};
use crate::registry::{Answer, CommandReply, Registry, ReplayPositions, Route};
use crate::rules::Seat;
use crate::store::ListOrder;
pub use checks::{MAX_ID_CHARS, check_game_id, check_new_game};
use checks::{MAX_POSITION_AT, feed_request, requested_seat, required_seat};
use paging::{page_size, page_token};
use request::{SeatRequest, request_meta, with_credential};
pub use status::{
    DOMAIN, cause_chain, malformed_request, request_too_large, to_status, transport_refusals,
};

/// The `plylog.v1.GameService` implementation.
#[derive(Clone)]
pub struct GameApi {
    registry: Registry,
    access: auth::AccessSettings,
    /// One permit per call in progress (streams have their own limits).
    in_flight: Arc<Semaphore>,
    max_in_flight: usize,
    /// What is done with calls for games other nodes run.
    forwarding: Arc<forward::Forwarding>,
}

/// Serves `$request` here when this node runs the game `$game` routes to
/// (see [`Registry::route`]); otherwise returns the owner's answer to it,
/// got with `$call` (a closure from the owner's client and the request),
/// counted as `$method`.
macro_rules! serve_here_or_pass_on {
    ($api:expr, $request:ident, $route:expr, $method:literal, $call:expr) => {
        let route = $route;
        // A call passed on holds one of this node's max_in_flight permits
        // while the owner answers it.
        let _passing_on = match route {
            Route::Remote(_) => Some($api.admit()?),
            Route::Local(_) | Route::Unowned => None,
        };
        let $request = match $api
            .forwarding
            .route(route, $method, $api.registry.metrics(), $request, $call)
            .await?
        {
            forward::Routed::Answered(response) => return Ok(response),
            forward::Routed::Here(request) => request,
        };
    };
}

/// The reply to a CreateGame request for `created`: the game, and its seat
/// tokens but a bot seat's (the server plays it: nobody gets its token).
fn create_reply(created: crate::registry::Created) -> pb::CreateGameResponse {
    let mut seat_tokens = created.seat_tokens;
    for (token, seat) in seat_tokens.iter_mut().zip(&created.game.seats) {
        if seat.bot.is_some() {
            token.clear();
        }
    }
    pb::CreateGameResponse {
        game: Some(created.game),
        seat_tokens,
    }
}

/// Most games one CreateGames call creates.
pub const MAX_CREATE_GAMES: usize = 100;

impl GameApi {
    /// A CreateGame request checked: the game id asked for, the game's
    /// configuration, and the request as the server reads it (its
    /// fingerprint: the rules with their defaults spelled out).
    ///
    /// # Errors
    /// [`FieldError`]: what CreateGame refuses in a request itself.
    fn prepare_create(
        &self,
        req: &pb::CreateGameRequest,
    ) -> Result<
        (
            Option<String>,
            crate::game::GameConfig,
            pb::CreateGameRequest,
        ),
        FieldError,
    > {
        let settings = self.registry.settings();
        let game_id = (!req.game_id.is_empty()).then(|| req.game_id.clone());
        // Dice games without a seed get one drawn here, outside the pure
        // rules; the fingerprint keeps the seed as the caller sent it, so a
        // retry without one is still the same request.
        let mut rules = req.rules.clone();
        let sent_seed = rules
            .as_mut()
            .and_then(|r| convert::fill_seed(r, rand::random));
        let mut time_control = req.time_control;
        if let Some(tc) = time_control.as_mut() {
            convert::fill_time_control_seed(tc, rand::random);
        }
        let mut seats = req.seats.clone();
        convert::fill_bot_seeds(&mut seats, rand::random);
        let config = check_new_game(
            game_id.as_deref(),
            convert::WireConfig {
                rules: rules.as_ref(),
                seats: &seats,
                undo_policy: req.undo_policy,
                time_control: time_control.as_ref(),
                absence: req.absence.as_ref(),
                matched_at: req.matched_at.as_ref(),
                labels: &req.labels,
                clocks_start_at: req.clocks_start_at.as_ref(),
            },
            settings.max_cells,
            settings.seat_limits,
        )?;
        // Fingerprint the rules as the server reads them, so a retry that
        // spells out the defaults is still the same request.
        let mut rules = convert::rules_to_proto(config.rules());
        convert::restore_sent_seed(&mut rules, sent_seed);
        let normalized = pb::CreateGameRequest {
            rules: Some(rules),
            undo_policy: convert::undo_policy_to_proto(config.undo_policy()) as i32,
            ..req.clone()
        };
        Ok((game_id, config, normalized))
    }

    /// Handlers over `registry`, with `access` deciding who may create games
    /// and whether games get seat tokens, serving at most `max_in_flight`
    /// calls at once, and passing calls for games other nodes run on to
    /// them.
    pub fn new(registry: Registry, access: auth::AccessSettings, max_in_flight: usize) -> Self {
        let node = registry.node_name().unwrap_or_default().to_owned();
        GameApi {
            registry,
            access,
            in_flight: Arc::new(Semaphore::new(max_in_flight)),
            max_in_flight,
            forwarding: Arc::new(forward::Forwarding::new(node, false)),
        }
    }

    /// These handlers, refusing calls for games other nodes run with
    /// UNAVAILABLE / NOT_OWNER naming the owner instead of passing them on
    /// (`--cluster-redirect`).
    pub fn redirecting(mut self, redirect: bool) -> Self {
        let node = self.registry.node_name().unwrap_or_default().to_owned();
        self.forwarding = Arc::new(forward::Forwarding::new(node, redirect));
        self
    }

    /// Where a call about `game_id` is served (waiting briefly while its
    /// slot changes hands).
    async fn route_of(&self, game_id: &str) -> Route {
        self.registry.settled_route(game_id).await
    }

    /// Calls being served now (streams aside).
    pub fn in_flight(&self) -> usize {
        self.max_in_flight - self.in_flight.available_permits()
    }

    /// Serves a seat's request: admits it, reads the seat token, checks
    /// the game id and the seat named, makes the command with `command`
    /// (from the seat named and the request) and executes it.
    async fn execute_for_seat<M: SeatRequest>(
        &self,
        request: Request<M>,
        command: impl FnOnce(Option<Seat>, &M) -> Result<Command, FieldError>,
    ) -> Result<CommandReply, Status> {
        let _permit = self.admit()?;
        let credential = auth::seat_credential(request.metadata());
        let req = request.into_inner();
        check_game_id(req.game_id())?;
        let seat = req.seat().map(requested_seat).transpose()?;
        let command = command(seat, &req)?;
        let meta = with_credential(request_meta(&req)?, credential);
        Ok(self.registry.execute(req.game_id(), command, meta).await?)
    }

    /// SubmitMove, checked and executed. A move the game refuses is counted
    /// in `moves_rejected` by the registry, which knows the game's kind and
    /// the typed error; one refused before it reaches the game (admission,
    /// a malformed request) is counted here, of kind "unknown".
    async fn play(
        &self,
        request: Request<pb::SubmitMoveRequest>,
    ) -> Result<Response<pb::SubmitMoveResponse>, Status> {
        let refused = |reason: pb::ErrorReason| {
            let metrics = self.registry.metrics();
            metrics.move_rejected("unknown", reason.as_str_name());
        };
        let _permit = self
            .admit()
            .inspect_err(|_| refused(pb::ErrorReason::Overloaded))?;
        let credential = auth::seat_credential(request.metadata());
        let req = request.into_inner();
        let checked = || -> Result<_, FieldError> {
            check_game_id(&req.game_id)?;
            let seat = req.seat.map(requested_seat).transpose()?;
            let mv = convert::move_from_proto(req.r#move.as_ref(), "move")?;
            Ok((seat, mv, request_meta(&req)?))
        };
        let (seat, mv, meta) = checked().inspect_err(|e| refused(e.reason))?;
        let meta = with_credential(meta, credential);
        let reply = self
            .registry
            .execute(&req.game_id, Command::Play { seat, mv }, meta)
            .await?;
        Ok(Response::new(pb::SubmitMoveResponse {
            events: reply.events,
            game: Some(reply.game),
        }))
    }
}

type EventStream = Pin<Box<dyn Stream<Item = Result<pb::StreamEventsResponse, Status>> + Send>>;

/// A StreamAllEvents reply as tonic sends it.
type FeedStream = Pin<Box<dyn Stream<Item = Result<pb::StreamAllEventsResponse, Status>> + Send>>;

#[tonic::async_trait]
impl GameService for GameApi {
    async fn create_game(
        &self,
        request: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::CreateGameResponse>, Status> {
        serve_here_or_pass_on!(
            self,
            request,
            // A new game needs no owner to be created: with its slot
            // between owners it is created here, and its owner loads it.
            match request.get_ref().game_id.as_str() {
                "" => Route::Local(None),
                game_id => match self.route_of(game_id).await {
                    Route::Remote(owner) => Route::Remote(owner),
                    Route::Local(_) | Route::Unowned => Route::Local(None),
                },
            },
            "CreateGame",
            |mut owner, r| async move { owner.create_game(r).await }
        );
        let _permit = self.admit()?;
        self.check_api_key(request.metadata(), "CreateGame")?;
        let req = request.into_inner();
        let (game_id, config, normalized) = self.prepare_create(&req)?;
        let meta = request_meta(&normalized)?;
        let created = self
            .registry
            .create(game_id, config, self.access.seat_tokens, meta)
            .await?;
        tracing::Span::current().record("game_id", &created.game.game_id);
        Ok(Response::new(create_reply(created)))
    }

    async fn create_games(
        &self,
        request: Request<pb::CreateGamesRequest>,
    ) -> Result<Response<pb::CreateGamesResponse>, Status> {
        self.check_api_key(request.metadata(), "CreateGames")?;
        let req = request.into_inner();
        if req.requests.is_empty() || req.requests.len() > MAX_CREATE_GAMES {
            return Err(FieldError::invalid(
                "requests",
                format!(
                    "{} requests: 1 to {MAX_CREATE_GAMES} games a call",
                    req.requests.len()
                ),
            )
            .into());
        }
        let mut items = req.requests;
        if let Some(at) = req.clocks_start_at {
            for item in &mut items {
                item.clocks_start_at = Some(at);
            }
        }
        let _permit = self.admit()?;
        // Every request checked before any game is created; a request id or
        // game id names one game of the call.
        let mut games = Vec::with_capacity(items.len());
        let mut request_ids = HashMap::new();
        let mut game_ids = HashMap::new();
        for (i, item) in items.iter().enumerate() {
            let in_item = |e: FieldError| {
                FieldError::new(format!("requests[{i}].{}", e.field), e.why, e.reason)
            };
            let (game_id, config, normalized) = self.prepare_create(item).map_err(in_item)?;
            let request = request_meta(&normalized).map_err(in_item)?;
            for (key, seen, field) in [
                (&item.request_id, &mut request_ids, "request_id"),
                (&item.game_id, &mut game_ids, "game_id"),
            ] {
                if key.is_empty() {
                    continue;
                }
                if let Some(first) = seen.insert(key.as_str(), i) {
                    return Err(FieldError::invalid(
                        format!("requests[{i}].{field}"),
                        format!("{key:?} is requests[{first}]'s too: one game per {field}"),
                    )
                    .into());
                }
            }
            games.push(crate::registry::NewGameRequest {
                game_id,
                config,
                request,
            });
        }
        // Written together, here: a game whose slot another node holds is
        // loaded by that node when it is first called.
        let created = self
            .registry
            .create_many(games, self.access.seat_tokens)
            .await?;
        let responses = created.into_iter().map(create_reply).collect();
        Ok(Response::new(pb::CreateGamesResponse { responses }))
    }

    async fn get_game(
        &self,
        request: Request<pb::GetGameRequest>,
    ) -> Result<Response<pb::GetGameResponse>, Status> {
        serve_here_or_pass_on!(
            self,
            request,
            self.route_of(&request.get_ref().game_id).await,
            "GetGame",
            |mut owner, r| async move { owner.get_game(r).await }
        );
        let _permit = self.admit()?;
        let req = request.into_inner();
        check_game_id(&req.game_id)?;
        let game = self
            .registry
            .game(&req.game_id, req.at_sequence, View::Full)
            .await?;
        Ok(Response::new(pb::GetGameResponse { game: Some(game) }))
    }

    async fn list_games(
        &self,
        request: Request<pb::ListGamesRequest>,
    ) -> Result<Response<pb::ListGamesResponse>, Status> {
        let _permit = self.admit()?;
        let req = request.into_inner();
        let limit = page_size(req.page_size, 50, 1000)?;
        // Newest-first tokens carry a second number, so a token cannot be
        // used with the other order.
        // Spaces are insignificant (AIP-132).
        let order_by = req
            .order_by
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let cells = self.registry.cell_count();
        let list_filter = filter::list_filter(&req.filter)?;
        let (order, after) = match order_by.as_str() {
            "" | "created_at" | "created_at asc" => (
                ListOrder::OldestFirst,
                paging::cell_cursors(&req.page_token, cells, false, &list_filter)?,
            ),
            "created_at desc" => (
                ListOrder::NewestFirst,
                paging::cell_cursors(&req.page_token, cells, true, &list_filter)?,
            ),
            _ => {
                return Err(FieldError::new(
                    "order_by",
                    "order_by must be \"created_at\" or \"created_at desc\"",
                    pb::ErrorReason::InvalidRequest,
                )
                .into());
            }
        };
        let (games, next) = self
            .registry
            .list(&after, order, &list_filter, limit as u32)
            .await?;
        let next_page_token = next
            .map(|cursors| {
                let newest_first = matches!(order, ListOrder::NewestFirst);
                paging::cell_cursors_token(&cursors, newest_first, &list_filter)
            })
            .unwrap_or_default();
        Ok(Response::new(pb::ListGamesResponse {
            games,
            next_page_token,
        }))
    }

    async fn submit_move(
        &self,
        request: Request<pb::SubmitMoveRequest>,
    ) -> Result<Response<pb::SubmitMoveResponse>, Status> {
        serve_here_or_pass_on!(
            self,
            request,
            self.route_of(&request.get_ref().game_id).await,
            "SubmitMove",
            |mut owner, r| async move { owner.submit_move(r).await }
        );
        self.play(request).await
    }

    async fn undo(
        &self,
        request: Request<pb::UndoRequest>,
    ) -> Result<Response<pb::UndoResponse>, Status> {
        serve_here_or_pass_on!(
            self,
            request,
            self.route_of(&request.get_ref().game_id).await,
            "Undo",
            |mut owner, r| async move { owner.undo(r).await }
        );
        let reply = self
            .execute_for_seat(request, |requested_by, _| {
                Ok(Command::Undo { requested_by })
            })
            .await?;
        Ok(Response::new(pb::UndoResponse {
            events: reply.events,
            game: Some(reply.game),
        }))
    }

    async fn redo(
        &self,
        request: Request<pb::RedoRequest>,
    ) -> Result<Response<pb::RedoResponse>, Status> {
        serve_here_or_pass_on!(
            self,
            request,
            self.route_of(&request.get_ref().game_id).await,
            "Redo",
            |mut owner, r| async move { owner.redo(r).await }
        );
        let reply = self
            .execute_for_seat(request, |requested_by, _| {
                Ok(Command::Redo { requested_by })
            })
            .await?;
        Ok(Response::new(pb::RedoResponse {
            events: reply.events,
            game: Some(reply.game),
        }))
    }

    async fn submit_action(
        &self,
        request: Request<pb::SubmitActionRequest>,
    ) -> Result<Response<pb::SubmitActionResponse>, Status> {
        serve_here_or_pass_on!(
            self,
            request,
            self.route_of(&request.get_ref().game_id).await,
            "SubmitAction",
            |mut owner, r| async move { owner.submit_action(r).await }
        );
        let reply = self
            .execute_for_seat(request, |seat, req| {
                let action = convert::action_from_proto(req.action)?;
                Ok(Command::Act { seat, action })
            })
            .await?;
        Ok(Response::new(pb::SubmitActionResponse {
            events: reply.events,
            game: Some(reply.game),
        }))
    }

    async fn rematch(
        &self,
        request: Request<pb::RematchRequest>,
    ) -> Result<Response<pb::RematchResponse>, Status> {
        serve_here_or_pass_on!(
            self,
            request,
            self.route_of(&request.get_ref().game_id).await,
            "Rematch",
            |mut owner, r| async move { owner.rematch(r).await }
        );
        let reply = self
            .execute_for_seat(request, |seat, req| {
                Ok(Command::Rematch {
                    seat,
                    rotate: req.rotate,
                })
            })
            .await?;
        Ok(Response::new(pb::RematchResponse {
            events: reply.events,
            game: Some(reply.game),
        }))
    }

    async fn reissue_seat_token(
        &self,
        request: Request<pb::ReissueSeatTokenRequest>,
    ) -> Result<Response<pb::ReissueSeatTokenResponse>, Status> {
        serve_here_or_pass_on!(
            self,
            request,
            self.route_of(&request.get_ref().game_id).await,
            "ReissueSeatToken",
            |mut owner, r| async move { owner.reissue_seat_token(r).await }
        );
        let _permit = self.admit()?;
        self.check_api_key(request.metadata(), "ReissueSeatToken")?;
        let req = request.into_inner();
        check_game_id(&req.game_id)?;
        let seat = required_seat(req.seat)?;
        let reply = self
            .registry
            .execute(
                &req.game_id,
                Command::ReissueSeatToken { seat },
                request_meta(&req)?,
            )
            .await?;
        Ok(Response::new(pb::ReissueSeatTokenResponse {
            events: reply.events,
            game: Some(reply.game),
            seat_token: reply.seat_token.unwrap_or_default(),
        }))
    }

    type StreamEventsStream = EventStream;

    async fn stream_events(
        &self,
        request: Request<pb::StreamEventsRequest>,
    ) -> Result<Response<EventStream>, Status> {
        check_game_id(&request.get_ref().game_id)?;
        let (metadata, _, req) = request.into_parts();
        // A call passed on by another node is served here or refused: that
        // node follows the owner.
        if metadata.contains_key(forward::FORWARDED_BY) {
            let route = self.route_of(&req.game_id).await;
            if !matches!(route, Route::Local(_)) {
                return Err(forward::not_here(route));
            }
            return Ok(Response::new(
                self.stream_part(&metadata, &req, req.from_sequence).await?,
            ));
        }
        // The first part opens now, so a refusal (max_streams) is the call's.
        let first = match self.route_of(&req.game_id).await {
            Route::Local(_) => Some(self.stream_part(&metadata, &req, req.from_sequence).await?),
            _ => None,
        };
        match (self.registry.node_name(), first) {
            // A store with no slots: the game never changes hands, and the
            // stream is the game's own, with nothing in between.
            (None, Some(local)) => Ok(Response::new(local)),
            (_, first) => Ok(Response::new(self.follow_owners(metadata, req, first))),
        }
    }

    type StreamAllEventsStream = FeedStream;

    async fn stream_all_events(
        &self,
        request: Request<pb::StreamAllEventsRequest>,
    ) -> Result<Response<FeedStream>, Status> {
        let req = request.into_inner();
        let feed = feed_request(req, self.registry.cell_count())?;
        let items = self.registry.feed(feed).await?;
        Ok(Response::new(Box::pin(tokio_stream::StreamExt::map(
            items,
            |item| item.map_err(to_status),
        ))))
    }

    async fn get_replay(
        &self,
        request: Request<pb::GetReplayRequest>,
    ) -> Result<Response<pb::GetReplayResponse>, Status> {
        serve_here_or_pass_on!(
            self,
            request,
            self.route_of(&request.get_ref().game_id).await,
            "GetReplay",
            |mut owner, r| async move { owner.get_replay(r).await }
        );
        let _permit = self.admit()?;
        let req = request.into_inner();
        check_game_id(&req.game_id)?;
        let limit = page_size(req.page_size, 1000, 10_000)?;
        let from = page_token::<1>(&req.page_token)?.map_or(1, |[sequence]| sequence);
        if req.position_at.len() > MAX_POSITION_AT {
            return Err(FieldError::invalid(
                "position_at",
                format!("at most {MAX_POSITION_AT} sequences"),
            )
            .into());
        }
        // Unspecified is the full view on the first page, as GetReplay
        // always answered, and the basic view on later pages: a client has
        // the configuration and the board once per replay, not once per
        // page (a page of events then costs nothing per piece).
        let view = match req.view {
            0 if req.page_token.is_empty() => View::Full,
            0 => View::Basic,
            view => convert::view_from_proto(view, "view")?,
        };
        let mut at = req.position_at;
        at.sort_unstable();
        let positions = ReplayPositions {
            every: req.position_every,
            at,
        };
        let (mut reply, next) = self
            .registry
            .replay(&req.game_id, from, limit, req.round, &positions, view)
            .await?;
        reply.next_page_token = next.map(|s| s.to_string()).unwrap_or_default();
        Ok(Response::new(reply))
    }

    async fn suggest_move(
        &self,
        request: Request<pb::SuggestMoveRequest>,
    ) -> Result<Response<pb::SuggestMoveResponse>, Status> {
        serve_here_or_pass_on!(
            self,
            request,
            self.analysis_route(request.get_ref().target.as_ref()).await,
            "SuggestMove",
            |mut owner, r| async move { owner.suggest_move(r).await }
        );
        let reply = self.analyze(request).await?;
        let Answer::Move(choice) = reply.answer else {
            return Err(Status::internal("an analysis answered a suggestion"));
        };
        Ok(Response::new(pb::SuggestMoveResponse {
            seat: reply.seat.0.into(),
            r#move: Some(convert::move_on_position_to_proto(
                reply.state.position(),
                choice.mv,
            )),
            score: Some(convert::score_to_proto(choice.score)),
            engine: convert::engine_to_proto(reply.engine) as i32,
            nodes: choice.nodes,
            sequence: reply.sequence,
        }))
    }

    async fn analyze_position(
        &self,
        request: Request<pb::AnalyzePositionRequest>,
    ) -> Result<Response<pb::AnalyzePositionResponse>, Status> {
        serve_here_or_pass_on!(
            self,
            request,
            self.analysis_route(request.get_ref().target.as_ref()).await,
            "AnalyzePosition",
            |mut owner, r| async move { owner.analyze_position(r).await }
        );
        let reply = self.analyze(request).await?;
        let Answer::Analysis(analysis) = reply.answer else {
            return Err(Status::internal("a suggestion answered an analysis"));
        };
        Ok(Response::new(pb::AnalyzePositionResponse {
            seat: reply.seat.0.into(),
            score: Some(convert::score_to_proto(analysis.score)),
            moves: analysis
                .moves
                .into_iter()
                .map(|(mv, score)| pb::MoveScore {
                    r#move: Some(convert::move_on_position_to_proto(
                        reply.state.position(),
                        mv,
                    )),
                    score: Some(convert::score_to_proto(score)),
                })
                .collect(),
            engine: convert::engine_to_proto(reply.engine) as i32,
            nodes: analysis.nodes,
            sequence: reply.sequence,
        }))
    }

    async fn list_legal_moves(
        &self,
        request: Request<pb::ListLegalMovesRequest>,
    ) -> Result<Response<pb::ListLegalMovesResponse>, Status> {
        serve_here_or_pass_on!(
            self,
            request,
            self.route_of(&request.get_ref().game_id).await,
            "ListLegalMoves",
            |mut owner, r| async move { owner.list_legal_moves(r).await }
        );
        let _permit = self.admit()?;
        let req = request.into_inner();
        check_game_id(&req.game_id)?;
        let limit = page_size(req.page_size, 1000, 10_000)?;
        // A page belongs to one position: a token from before a move is
        // ABORTED (list again from the first page), never silently shifted.
        let (at, offset) = match page_token::<2>(&req.page_token)? {
            None => (None, 0),
            Some([sequence, offset]) => (Some(sequence), offset as usize),
        };
        let page = self
            .registry
            .legal_moves(&req.game_id, at, offset, limit)
            .await?;
        let mut reply = page.reply;
        reply.next_page_token = page
            .next_offset
            .map(|o| format!("{}.{o}", reply.sequence))
            .unwrap_or_default();
        Ok(Response::new(reply))
    }
}
