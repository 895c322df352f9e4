//! The gRPC surface: the `plylog.v1.GameService` handlers, the conversion of
//! requests into domain commands, and the one table that maps every error to
//! a status code and a stable `ErrorInfo` reason.
//!
//! Handlers are thin: pull and check fields ([`crate::proto::convert`]), ask
//! the [`Registry`], map its answer.

pub mod auth;
pub mod codec;
mod status;

use std::pin::Pin;
use std::sync::Arc;

use prost::Message;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status};

use crate::game::{Command, GameError, GameState, MIN_TIME_MS, decide, evolve};
use crate::proto::convert::{self, FieldError, View};
use crate::proto::{self as pb, game_service_server::GameService};
use crate::registry::{
    AnalysisReply, AnalysisRequest, Answer, CommandReply, Credential, Registry, ReplayPositions,
    RequestMeta, StreamRequest,
};
use crate::rules::Seat;
use crate::store::ListOrder;
pub use status::{DOMAIN, cause_chain, to_status, transport_refusals};

/// Longest request id, game id or page token accepted, in characters.
pub const MAX_ID_CHARS: usize = 128;

/// The `plylog.v1.GameService` implementation.
#[derive(Clone)]
pub struct GameApi {
    registry: Registry,
    access: auth::AccessSettings,
    /// One permit per call in progress (streams have their own limits).
    in_flight: Arc<Semaphore>,
    max_in_flight: usize,
}

impl GameApi {
    /// Runs an analysis (one move when `suggest`) of the position its
    /// target names, checked: a game's state (read through its actor) or
    /// one set up from rules and moves.
    async fn analyze(
        &self,
        target: Option<&pb::AnalysisTarget>,
        engine: i32,
        strength: u32,
        seed: Option<u64>,
        budget: Option<&pb::AnalysisBudget>,
        suggest: bool,
    ) -> Result<AnalysisReply, Status> {
        let engine = convert::engine_from_proto(engine, "engine")?;
        let strength =
            convert::strength_from_proto(strength, "strength", pb::ErrorReason::InvalidRequest)?;
        let target = target.ok_or_else(|| FieldError::invalid("target", "a target is required"))?;
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
        let request = AnalysisRequest {
            engine,
            strength,
            seed: seed.unwrap_or(0),
            nodes: budget.map_or(0, |b| b.nodes),
            time: budget
                .filter(|b| b.time_ms > 0)
                .map(|b| std::time::Duration::from_millis(b.time_ms)),
            suggest,
        };
        Ok(self.registry.analyze(state, request).await?)
    }

    /// The state of a game created with `setup`'s rules and seats (named
    /// "0", "1", ...) after its moves, each played by the seat to move.
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
            },
            settings.max_cells,
            settings.seat_limits,
            MIN_TIME_MS,
        )
        .map_err(|mut e| {
            e.field = format!("target.setup.{}", e.field);
            e
        })?;
        let mut state = GameState::new(config, 0);
        for (i, mv) in setup.moves.iter().enumerate() {
            let field = format!("target.setup.moves[{i}]");
            let mv = convert::move_from_proto(Some(mv), &field)?;
            let seat = state
                .to_move()
                .ok_or_else(|| status::setup_move_refused(&field, &GameError::GameOver))?;
            let events = decide(&state, &Command::Play { seat, mv }, 0)
                .map_err(|e| status::setup_move_refused(&field, &e))?;
            for event in &events {
                evolve(&mut state, event, 0);
            }
        }
        Ok(state)
    }
}

impl GameApi {
    /// Handlers over `registry`, with `access` deciding who may create games
    /// and whether games get seat tokens, serving at most `max_in_flight`
    /// calls at once.
    pub fn new(registry: Registry, access: auth::AccessSettings, max_in_flight: usize) -> Self {
        GameApi {
            registry,
            access,
            in_flight: Arc::new(Semaphore::new(max_in_flight)),
            max_in_flight,
        }
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
            let seat = required_seat(req.seat)?;
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

    /// Admits a call, or sheds it with UNAVAILABLE / OVERLOADED when
    /// `max_in_flight` calls are already being served: the server never
    /// queues work without bound. The permit is held until the reply.
    fn admit(&self) -> Result<OwnedSemaphorePermit, Status> {
        Arc::clone(&self.in_flight).try_acquire_owned().map_err(|_| {
            self.registry.metrics().shed("max_in_flight");
            status::refusal(
                tonic::Code::Unavailable,
                &format!(
                    "the server is serving its limit of {} calls (max_in_flight); retry with backoff",
                    self.max_in_flight
                ),
                pb::ErrorReason::Overloaded,
            )
        })
    }

    /// Refuses `rpc` (CreateGame or ReissueSeatToken) without the server's
    /// API key. Without a key configured, CreateGame is open to all and
    /// ReissueSeatToken to none.
    fn check_api_key(
        &self,
        metadata: &tonic::metadata::MetadataMap,
        rpc: &str,
    ) -> Result<(), Status> {
        let Some(key) = &self.access.api_key else {
            return match rpc {
                "CreateGame" => Ok(()),
                _ => Err(status::refusal(
                    tonic::Code::FailedPrecondition,
                    &format!(
                        "{rpc} needs the server's API key, and this server has none: start it with --api-key"
                    ),
                    pb::ErrorReason::ApiKeyNotConfigured,
                )),
            };
        };
        match auth::bearer(metadata, "API key") {
            Ok(None) => Err(status::refusal(
                tonic::Code::Unauthenticated,
                &format!(
                    "{rpc} needs the server's API key: send metadata \"authorization: Bearer <api key>\""
                ),
                pb::ErrorReason::ApiKeyRequired,
            )),
            // Compare hashes, so the comparison's time says nothing of the key.
            Ok(Some(sent)) if auth::hash(&sent) == auth::hash(key) => Ok(()),
            Ok(Some(_)) => Err(status::refusal(
                tonic::Code::PermissionDenied,
                "the API key is wrong",
                pb::ErrorReason::ApiKeyInvalid,
            )),
            Err(malformed) => Err(status::refusal(
                tonic::Code::PermissionDenied,
                &malformed.to_string(),
                pb::ErrorReason::ApiKeyInvalid,
            )),
        }
    }
}

/// Adds the call's seat token (its hash) to a request's meta, and to its
/// fingerprint: a request id reused by another seat's token is then a
/// different request (REQUEST_ID_REUSED), not a retry to be answered with
/// the first seat's reply.
fn with_credential(mut meta: RequestMeta, credential: Credential) -> RequestMeta {
    if let Credential::Token(hash) = &credential
        && !meta.request_id.is_empty()
    {
        meta.fingerprint.extend_from_slice(b"|seat-token:");
        meta.fingerprint.extend_from_slice(hash);
    }
    meta.credential = credential;
    meta
}

/// Checks a new game as CreateGame does, and `plylog import` for each game
/// it reads: the game id (`None`: the server picks one) and the rules,
/// seats, undo policy, time control and disconnect policy, against the
/// server's `max_cells` and `seat_limits`, every time limit at least
/// [`MIN_TIME_MS`].
///
/// # Errors
/// [`FieldError`] naming the first field at fault (see [`check_game_id`]
/// and [`convert::config_from_proto`]).
pub fn check_new_game(
    game_id: Option<&str>,
    wire: convert::WireConfig<'_>,
    max_cells: u64,
    seat_limits: crate::game::SeatLimits,
) -> Result<crate::game::GameConfig, FieldError> {
    if let Some(game_id) = game_id {
        check_game_id(game_id)?;
    }
    convert::config_from_proto(wire, max_cells, seat_limits, MIN_TIME_MS)
}

/// Checks a game id (1 to [`MAX_ID_CHARS`] characters of
/// `[A-Za-z0-9._~-]`), and records it on the call's span.
///
/// # Errors
/// [`FieldError`] naming `game_id` (INVALID_REQUEST).
pub fn check_game_id(game_id: &str) -> Result<(), FieldError> {
    if game_id.is_empty() {
        return Err(FieldError::invalid("game_id", "game_id is required"));
    }
    if game_id.chars().count() > MAX_ID_CHARS
        || !game_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._~-".contains(c))
    {
        return Err(FieldError::invalid(
            "game_id",
            format!("game_id must be 1 to {MAX_ID_CHARS} characters of [A-Za-z0-9._~-]"),
        ));
    }
    tracing::Span::current().record("game_id", game_id);
    Ok(())
}

/// The seat a request names, checked, and recorded on the call's span.
fn requested_seat(seat: u32) -> Result<Seat, FieldError> {
    let seat = convert::seat_from_proto(seat, "seat")?;
    tracing::Span::current().record("seat", seat.0);
    Ok(seat)
}

/// The seat a request must name, checked, and recorded on the call's span.
fn required_seat(seat: Option<u32>) -> Result<Seat, FieldError> {
    requested_seat(seat.ok_or_else(|| FieldError::invalid("seat", "seat is required"))?)
}

fn check_request_id(request_id: &str) -> Result<(), FieldError> {
    if request_id.chars().count() > MAX_ID_CHARS {
        return Err(FieldError::invalid(
            "request_id",
            format!("request_id must be at most {MAX_ID_CHARS} characters"),
        ));
    }
    // Stored as text, which PostgreSQL's cannot hold with a NUL in it.
    // Other characters are kept as sent (and escaped in the logs).
    if request_id.contains('\0') {
        return Err(FieldError::invalid(
            "request_id",
            "request_id must not contain NUL".to_owned(),
        ));
    }
    Ok(())
}

/// A request that changes a game: it carries an idempotency key and maybe a
/// turn token.
trait Idempotent: Message + Clone {
    /// Tags the fingerprint, so equal bytes of two RPCs never match.
    const RPC: &'static [u8];
    /// The caller's idempotency key (empty: none).
    fn request_id(&self) -> &str;
    /// The turn token, if any.
    fn expected_sequence(&self) -> Option<u64>;
    /// The `plylog.v1.GameView` the reply should have (0 for requests
    /// without a view).
    fn view(&self) -> i32;
    /// Clears the key, the token and the view, leaving what the request
    /// asks for.
    fn clear_keys(&mut self);
}

/// Implements [`Idempotent`] for requests keyed by `request_id`, with
/// (`yes`) or without (`no`) an `expected_sequence` and a `view`.
macro_rules! idempotent {
    ($($request:ty => $rpc:literal, turn_token_and_view: $has:tt),+ $(,)?) => {$(
        impl Idempotent for $request {
            const RPC: &'static [u8] = $rpc;
            fn request_id(&self) -> &str {
                &self.request_id
            }
            fn expected_sequence(&self) -> Option<u64> {
                idempotent!(@get self $has expected_sequence None)
            }
            fn view(&self) -> i32 {
                idempotent!(@get self $has view 0)
            }
            fn clear_keys(&mut self) {
                self.request_id.clear();
                idempotent!(@clear self $has);
            }
        }
    )+};
    (@get $self:ident yes $field:ident $none:expr) => { $self.$field };
    (@get $self:ident no $field:ident $none:expr) => { $none };
    (@clear $self:ident yes) => {{
        $self.expected_sequence = None;
        $self.view = 0;
    }};
    (@clear $self:ident no) => { () };
}

idempotent! {
    pb::CreateGameRequest => b"create:", turn_token_and_view: no,
    pb::ReissueSeatTokenRequest => b"reissue:", turn_token_and_view: no,
    pb::SubmitMoveRequest => b"move:", turn_token_and_view: yes,
    pb::UndoRequest => b"undo:", turn_token_and_view: yes,
    pb::RedoRequest => b"redo:", turn_token_and_view: yes,
    pb::SubmitActionRequest => b"action:", turn_token_and_view: yes,
    pb::RematchRequest => b"rematch:", turn_token_and_view: yes,
}

/// A request a seat makes of a game, naming the seat or leaving it to the
/// seat token: Undo, Redo, SubmitAction, Rematch.
trait SeatRequest: Idempotent {
    /// The game's id.
    fn game_id(&self) -> &str;
    /// The seat named, if any.
    fn seat(&self) -> Option<u32>;
}

/// Implements [`SeatRequest`] for requests with `game_id` and an optional
/// `seat`.
macro_rules! seat_request {
    ($($request:ty),+ $(,)?) => {$(
        impl SeatRequest for $request {
            fn game_id(&self) -> &str {
                &self.game_id
            }
            fn seat(&self) -> Option<u32> {
                self.seat
            }
        }
    )+};
}

seat_request!(
    pb::UndoRequest,
    pb::RedoRequest,
    pb::SubmitActionRequest,
    pb::RematchRequest,
);

/// The idempotency fields of a request: its id, its turn token, and the rest
/// of it (tagged by RPC) as the fingerprint that tells a retry from a reuse.
fn request_meta<M: Idempotent>(request: &M) -> Result<RequestMeta, FieldError> {
    check_request_id(request.request_id())?;
    if !request.request_id().is_empty() {
        // A caller's id: escaped, so a log line cannot carry its control
        // or bidirectional formatting characters.
        let logged = crate::game::escape_disruptive(request.request_id());
        tracing::Span::current().record("request_id", logged.as_ref());
    }
    // Only a request id is ever checked against a fingerprint: without one
    // the call makes none (a copy and an encoding of the request saved).
    let fingerprint = if request.request_id().is_empty() {
        Vec::new()
    } else {
        let mut rest = request.clone();
        rest.clear_keys();
        let mut fingerprint = M::RPC.to_vec();
        rest.encode(&mut fingerprint)
            .expect("a Vec grows as needed");
        fingerprint
    };
    Ok(RequestMeta {
        request_id: request.request_id().to_owned(),
        fingerprint,
        expected_sequence: request.expected_sequence(),
        credential: Credential::None,
        view: convert::view_from_proto(request.view(), "view")?,
    })
}

/// Most sequences a GetReplay may list in `position_at`.
const MAX_POSITION_AT: usize = 1000;

/// A page size as AIP-158 reads it: 0 is `default`, a size over `max` is
/// clamped to `max`, a negative one is INVALID_ARGUMENT.
fn page_size(requested: i32, default: usize, max: usize) -> Result<usize, FieldError> {
    match usize::try_from(requested) {
        Ok(0) => Ok(default),
        Ok(n) => Ok(n.min(max)),
        Err(_) => Err(FieldError::invalid(
            "page_size",
            format!("page_size must not be negative (0 means {default}; at most {max})"),
        )),
    }
}

/// INVALID_ARGUMENT / INVALID_PAGE_TOKEN.
fn invalid_page_token() -> FieldError {
    FieldError::new(
        "page_token",
        "page_token was not issued by this server",
        pb::ErrorReason::InvalidPageToken,
    )
}

/// Page tokens are the server's own decimal numbers, separated by dots:
/// `<cursor>` for ListGames (`<cursor>.1` newest first), `<sequence>` for
/// GetReplay, `<sequence>.<offset>` for ListLegalMoves. Parses a token of `N` numbers; an empty token is the
/// first page (`None`).
fn page_token<const N: usize>(token: &str) -> Result<Option<[u64; N]>, FieldError> {
    if token.is_empty() {
        return Ok(None);
    }
    let bad = invalid_page_token;
    let mut numbers = [0; N];
    let mut parts = token.split('.');
    for slot in &mut numbers {
        let part = parts.next().ok_or_else(bad)?;
        let n: u64 = part.parse().map_err(|_| bad())?;
        // Only the canonical spelling the server writes ("3", never "+3" or "03").
        if n.to_string() != part || n > i64::MAX as u64 {
            return Err(bad());
        }
        *slot = n;
    }
    if parts.next().is_some() {
        return Err(bad());
    }
    Ok(Some(numbers))
}

type EventStream = Pin<Box<dyn Stream<Item = Result<pb::StreamEventsResponse, Status>> + Send>>;

#[tonic::async_trait]
impl GameService for GameApi {
    async fn create_game(
        &self,
        request: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::CreateGameResponse>, Status> {
        let _permit = self.admit()?;
        self.check_api_key(request.metadata(), "CreateGame")?;
        let req = request.into_inner();
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
        let meta = request_meta(&normalized)?;
        let created = self
            .registry
            .create(game_id, config, self.access.seat_tokens, meta)
            .await?;
        tracing::Span::current().record("game_id", &created.game.game_id);
        // The server plays a bot seat: nobody gets its token.
        let mut seat_tokens = created.seat_tokens;
        for (token, seat) in seat_tokens.iter_mut().zip(&created.game.seats) {
            if seat.bot.is_some() {
                token.clear();
            }
        }
        Ok(Response::new(pb::CreateGameResponse {
            game: Some(created.game),
            seat_tokens,
        }))
    }

    async fn get_game(
        &self,
        request: Request<pb::GetGameRequest>,
    ) -> Result<Response<pb::GetGameResponse>, Status> {
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
        let (order, cursor) = match order_by.as_str() {
            "" | "created_at" | "created_at asc" => (
                ListOrder::OldestFirst,
                page_token::<1>(&req.page_token)?.map_or(0, |[c]| c),
            ),
            "created_at desc" => (
                ListOrder::NewestFirst,
                match page_token::<2>(&req.page_token)? {
                    None => 0,
                    Some([c, 1]) => c,
                    Some(_) => return Err(invalid_page_token().into()),
                },
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
            .list(cursor as i64, order, limit as u32)
            .await?;
        let next_page_token = next
            .map(|c| match order {
                ListOrder::OldestFirst => c.to_string(),
                ListOrder::NewestFirst => format!("{c}.1"),
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
        self.play(request).await
    }

    async fn undo(
        &self,
        request: Request<pb::UndoRequest>,
    ) -> Result<Response<pb::UndoResponse>, Status> {
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
        let credential = auth::seat_credential(request.metadata());
        let req = request.into_inner();
        check_game_id(&req.game_id)?;
        let items = self.registry.stream(StreamRequest {
            game_id: req.game_id,
            from_sequence: req.from_sequence,
            follow: req.follow,
            round: req.round,
            credential,
        })?;
        let stream = items.map(|item| item.map_err(to_status));
        Ok(Response::new(Box::pin(stream)))
    }

    async fn get_replay(
        &self,
        request: Request<pb::GetReplayRequest>,
    ) -> Result<Response<pb::GetReplayResponse>, Status> {
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
        let _permit = self.admit()?;
        let req = request.into_inner();
        let reply = self
            .analyze(
                req.target.as_ref(),
                req.engine,
                req.strength,
                req.seed,
                req.budget.as_ref(),
                true,
            )
            .await?;
        let Answer::Move(choice) = reply.answer else {
            return Err(Status::internal("an analysis answered a suggestion"));
        };
        Ok(Response::new(pb::SuggestMoveResponse {
            seat: reply.seat.0.into(),
            r#move: Some(convert::move_to_proto(choice.mv)),
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
        let _permit = self.admit()?;
        let req = request.into_inner();
        let reply = self
            .analyze(
                req.target.as_ref(),
                req.engine,
                req.strength,
                req.seed,
                req.budget.as_ref(),
                false,
            )
            .await?;
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
                    r#move: Some(convert::move_to_proto(mv)),
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
