//! What the handlers read off a request besides its fields: the
//! idempotency key, turn token and fingerprint ([`Idempotent`]), the seat a
//! seat's request names ([`SeatRequest`]), and what to analyse
//! ([`AnalysisQuery`]).

use prost::Message;

use super::checks::check_request_id;
use super::pb;
use crate::proto::convert::{self, FieldError};
use crate::registry::{Credential, RequestMeta};

/// Adds the call's seat token (its hash) to a request's meta, and to its
/// fingerprint: a request id reused by another seat's token is then a
/// different request (REQUEST_ID_REUSED), not a retry to be answered with
/// the first seat's reply.
pub(super) fn with_credential(mut meta: RequestMeta, credential: Credential) -> RequestMeta {
    if let Credential::Token(hash) = &credential
        && !meta.request_id.is_empty()
    {
        meta.fingerprint.extend_from_slice(b"|seat-token:");
        meta.fingerprint.extend_from_slice(hash);
    }
    meta.credential = credential;
    meta
}

/// A request that changes a game: it carries an idempotency key and maybe a
/// turn token.
pub(super) trait Idempotent: Message + Clone {
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
pub(super) trait SeatRequest: Idempotent {
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

/// A request for an engine's view of a position: SuggestMove (one move)
/// and AnalyzePosition (every legal move scored).
pub(super) trait AnalysisQuery {
    /// Whether the request asks for one move rather than every move scored.
    const SUGGEST: bool;
    /// The position to analyse: a game's or one set up.
    fn target(&self) -> Option<&pb::AnalysisTarget>;
    /// The Engine value (unspecified: the strongest for the game).
    fn engine(&self) -> i32;
    /// The strength, 1 to 10 (0: 10).
    fn strength(&self) -> u32;
    /// The seed of the engine's generator (absent: 0).
    fn seed(&self) -> Option<u64>;
    /// The search budget (absent: the server's limits).
    fn budget(&self) -> Option<&pb::AnalysisBudget>;
}

/// Implements [`AnalysisQuery`] for requests with `target`, `engine`,
/// `strength`, `seed` and `budget`.
macro_rules! analysis_query {
    ($($request:ty => suggest: $suggest:literal),+ $(,)?) => {$(
        impl AnalysisQuery for $request {
            const SUGGEST: bool = $suggest;
            fn target(&self) -> Option<&pb::AnalysisTarget> {
                self.target.as_ref()
            }
            fn engine(&self) -> i32 {
                self.engine
            }
            fn strength(&self) -> u32 {
                self.strength
            }
            fn seed(&self) -> Option<u64> {
                self.seed
            }
            fn budget(&self) -> Option<&pb::AnalysisBudget> {
                self.budget.as_ref()
            }
        }
    )+};
}

analysis_query! {
    pb::SuggestMoveRequest => suggest: true,
    pb::AnalyzePositionRequest => suggest: false,
}

/// The idempotency fields of a request: its id, its turn token, and the rest
/// of it (tagged by RPC) as the fingerprint that tells a retry from a reuse.
pub(super) fn request_meta<M: Idempotent>(request: &M) -> Result<RequestMeta, FieldError> {
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
