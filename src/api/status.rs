//! The one table from errors to gRPC statuses (DESIGN.md, error model).
//!
//! Every status carries a `google.rpc.ErrorInfo` whose reason is the name of
//! a [`pb::ErrorReason`] value, in domain [`DOMAIN`]; field errors also carry
//! a `google.rpc.BadRequest`. Internal errors are logged in full here and sent
//! to the client as a short message.

use std::collections::HashMap;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::game::GameError;
use crate::proto::{self as pb, convert::FieldError};
use crate::registry::{RegistryError, game_reason};
use crate::rules::IllegalMove;
use crate::rules::chess::{ChessMoveError, SanError};

/// The ErrorInfo domain of every plylog error.
pub const DOMAIN: &str = "plylog.v1";

fn status(
    code: Code,
    message: String,
    reason: pb::ErrorReason,
    metadata: HashMap<String, String>,
) -> Status {
    let mut details = ErrorDetails::with_error_info(reason.as_str_name(), DOMAIN, metadata);
    if let Some(delay) = retry_delay(reason) {
        details.set_retry_info(Some(delay));
    }
    Status::with_error_details(code, message, details)
}

/// An error with its sources, outermost first, joined by ": " (for logs:
/// clients get a fixed message instead).
pub fn cause_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    text
}

/// How long a client should wait before retrying a call refused with
/// UNAVAILABLE for this reason (sent as `google.rpc.RetryInfo`).
fn retry_delay(reason: pb::ErrorReason) -> Option<std::time::Duration> {
    match reason {
        pb::ErrorReason::Overloaded => Some(std::time::Duration::from_millis(100)),
        // Another node's appends won; a short wait usually lets them pass.
        pb::ErrorReason::AppendContended => Some(std::time::Duration::from_millis(20)),
        pb::ErrorReason::StoreUnavailable | pb::ErrorReason::ShuttingDown => {
            Some(std::time::Duration::from_secs(1))
        }
        // A slot changes hands within a lease round or two.
        pb::ErrorReason::NotOwner => Some(std::time::Duration::from_millis(250)),
        _ => None,
    }
}

/// A refusal with no metadata: `code`, `message` and the ErrorInfo `reason`.
pub(super) fn refusal(code: Code, message: &str, reason: pb::ErrorReason) -> Status {
    status(code, message.to_owned(), reason, HashMap::new())
}

impl From<FieldError> for Status {
    fn from(error: FieldError) -> Self {
        let mut details =
            ErrorDetails::with_error_info(error.reason.as_str_name(), DOMAIN, HashMap::new());
        details.add_bad_request_violation(error.field.clone(), error.why.clone());
        Status::with_error_details(Code::InvalidArgument, error.to_string(), details)
    }
}

impl From<RegistryError> for Status {
    fn from(error: RegistryError) -> Self {
        to_status(error)
    }
}

/// How a refused command goes on the wire.
enum Rejection {
    /// INVALID_ARGUMENT naming the request field that is wrong whatever the
    /// position.
    Field(&'static str),
    /// A status with its code and metadata.
    Status(Code, HashMap<String, String>),
}

/// The table's rows for the game's refusals (their reasons:
/// [`game_reason`]).
fn rejection_of(rejection: &GameError) -> Rejection {
    let code = match rejection {
        GameError::Illegal(IllegalMove::CellOffBoard { .. }) => {
            return Rejection::Field("move.place");
        }
        GameError::Illegal(IllegalMove::ColumnOffBoard { .. }) => {
            return Rejection::Field("move.drop.column");
        }
        GameError::Illegal(IllegalMove::WrongMoveKind { .. }) => {
            return Rejection::Field("move");
        }
        GameError::Illegal(IllegalMove::NoSuchMark { .. } | IllegalMove::UnexpectedMark { .. }) => {
            return Rejection::Field("move.place.mark");
        }
        GameError::Illegal(IllegalMove::Chess(chess)) => return chess_rejection(chess),
        GameError::NoSuchSeat { .. } | GameError::SeatRequired => {
            return Rejection::Field("seat");
        }
        GameError::NotYourTurn { to_move, .. } => {
            let metadata = HashMap::from([("seat_to_move".to_owned(), to_move.to_string())]);
            return Rejection::Status(Code::FailedPrecondition, metadata);
        }
        GameError::NotLastMover { last_mover, .. } => {
            let metadata = HashMap::from([("last_mover".to_owned(), last_mover.to_string())]);
            return Rejection::Status(Code::FailedPrecondition, metadata);
        }
        GameError::NotRedoer { mover, .. } => {
            let metadata = HashMap::from([("last_mover".to_owned(), mover.to_string())]);
            return Rejection::Status(Code::FailedPrecondition, metadata);
        }
        GameError::TimeExpired { seat, deadline_ms } => {
            let deadline = crate::proto::convert::timestamp(*deadline_ms).to_string();
            let metadata = HashMap::from([
                ("seat".to_owned(), seat.to_string()),
                ("deadline".to_owned(), deadline),
            ]);
            return Rejection::Status(Code::FailedPrecondition, metadata);
        }
        GameError::Illegal(_)
        | GameError::GameOver
        | GameError::NothingToUndo
        | GameError::UndoDisabled
        | GameError::NothingToRedo
        | GameError::ConsentRequired
        | GameError::TakebackNotAllowed
        | GameError::NoPendingOffer { .. }
        | GameError::AlreadyAgreed { .. }
        | GameError::AbortTooLate
        | GameError::RematchPending
        | GameError::SeatOut { .. }
        | GameError::SeatIsBot { .. }
        | GameError::NoDrawClaim => Code::FailedPrecondition,
    };
    Rejection::Status(code, HashMap::new())
}

/// How a refused chess move goes on the wire: unreadable text names its
/// field; an illegal move says which and why, an ambiguous one its
/// candidates, in the ErrorInfo metadata.
fn chess_rejection(error: &ChessMoveError) -> Rejection {
    let metadata = |pairs: &[(&str, String)]| {
        pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), value.clone()))
            .collect()
    };
    match error {
        ChessMoveError::NotUci(_) | ChessMoveError::San(SanError::NotSan(_)) => {
            Rejection::Field("move.chess.text")
        }
        ChessMoveError::San(SanError::Ambiguous { candidates, .. }) => Rejection::Status(
            Code::InvalidArgument,
            metadata(&[("candidates", candidates.join(","))]),
        ),
        ChessMoveError::Illegal { uci, why } => Rejection::Status(
            Code::FailedPrecondition,
            metadata(&[("move", uci.clone()), ("why", (*why).to_owned())]),
        ),
        ChessMoveError::San(SanError::Illegal(san)) => Rejection::Status(
            Code::FailedPrecondition,
            metadata(&[
                ("move", san.clone()),
                ("why", "no legal move fits it".to_owned()),
            ]),
        ),
        ChessMoveError::Ended(_) => Rejection::Status(Code::FailedPrecondition, HashMap::new()),
    }
}

/// A move of an analysis' position setup that the rules or the game refuse:
/// INVALID_ARGUMENT (the request itself is wrong, whatever the server
/// holds) with the move's own reason (OUT_OF_BOUNDS, CELL_OCCUPIED,
/// COLUMN_FULL, GAME_OVER...) and `field`, the move's place in the request
/// (`target.setup.moves[i]`), as the BadRequest violation.
pub(super) fn setup_move_refused(field: &str, error: &GameError) -> Status {
    FieldError::new(field, error.to_string(), game_reason(error)).into()
}

/// Maps a registry error to its status: the table of DESIGN.md.
pub fn to_status(error: RegistryError) -> Status {
    let message = error.to_string();
    let reason = error.reason();
    let none = HashMap::new;
    match error {
        RegistryError::NotFound { .. } => status(Code::NotFound, message, reason, none()),
        RegistryError::Rejected(rejection) => match rejection_of(&rejection) {
            // Wrong whatever the position: INVALID_ARGUMENT with the field.
            Rejection::Field(field) => FieldError::new(field, message, reason).into(),
            Rejection::Status(code, metadata) => status(code, message, reason, metadata),
        },
        RegistryError::SequenceMismatch { current, .. } => {
            let metadata = HashMap::from([("current_sequence".to_owned(), current.to_string())]);
            status(Code::Aborted, message, reason, metadata)
        }
        RegistryError::SequenceOutOfRange { last, .. } => {
            let metadata = HashMap::from([("last_sequence".to_owned(), last.to_string())]);
            status(Code::OutOfRange, message, reason, metadata)
        }
        RegistryError::FeedPositionOutOfRange { cell, last, .. } => {
            let metadata = HashMap::from([
                ("cell".to_owned(), cell.to_string()),
                ("last_position".to_owned(), last.to_string()),
            ]);
            status(Code::OutOfRange, message, reason, metadata)
        }
        RegistryError::TimeOutOfRange { field, .. } => {
            FieldError::new(field, message, reason).into()
        }
        RegistryError::GameExists { .. } => status(Code::AlreadyExists, message, reason, none()),
        RegistryError::RequestIdReused { .. } => {
            status(Code::AlreadyExists, message, reason, none())
        }
        RegistryError::LimitReached { limit, max } => {
            let metadata = HashMap::from([
                ("limit".to_owned(), limit.to_owned()),
                ("max".to_owned(), max.to_string()),
            ]);
            status(Code::ResourceExhausted, message, reason, metadata)
        }
        RegistryError::Unauthenticated => status(Code::Unauthenticated, message, reason, none()),
        RegistryError::PermissionDenied { .. } => {
            status(Code::PermissionDenied, message, reason, none())
        }
        RegistryError::NoSeatTokens { .. } => {
            status(Code::FailedPrecondition, message, reason, none())
        }
        RegistryError::PresenceUnavailable { .. } => {
            status(Code::FailedPrecondition, message, reason, none())
        }
        RegistryError::NoTokenSecret => status(Code::FailedPrecondition, message, reason, none()),
        RegistryError::Overloaded
        | RegistryError::AnalysesBusy { .. }
        | RegistryError::HeavyReadsBusy { .. } => {
            status(Code::Unavailable, message, reason, none())
        }
        RegistryError::Contended { .. } => status(Code::Unavailable, message, reason, none()),
        RegistryError::AnalysisExhausted { .. } => {
            status(Code::DeadlineExceeded, message, reason, none())
        }
        RegistryError::EngineUnsupported { why } => FieldError::new("engine", why, reason).into(),
        RegistryError::StoreUnavailable(ref cause) => {
            tracing::warn!(error = %cause_chain(cause), "the store is unavailable");
            status(Code::Unavailable, message, reason, none())
        }
        RegistryError::Store(ref cause) => {
            tracing::error!(error = %cause_chain(cause), "store failure");
            status(
                Code::Internal,
                "internal error; see the server log".into(),
                reason,
                none(),
            )
        }
        RegistryError::ShuttingDown => status(Code::Unavailable, message, reason, none()),
        RegistryError::NotOwner { ref owner } => {
            let metadata = owner
                .iter()
                .map(|owner| ("owner".to_owned(), owner.clone()))
                .collect();
            status(Code::Unavailable, message, reason, metadata)
        }
        RegistryError::CorruptLog { .. } => {
            tracing::error!(error = %message, "corrupt log");
            status(
                Code::DataLoss,
                "the game's stored log is corrupt; the server refuses it (plylog verify tells why)"
                    .into(),
                reason,
                none(),
            )
        }
        RegistryError::Internal(cause) => {
            tracing::error!(error = %cause, "internal error");
            status(
                Code::Internal,
                "internal error; see the server log".into(),
                reason,
                none(),
            )
        }
    }
}

/// Rewrites tonic's own refusals of a request it could not read into this
/// service's error model; every other response passes unchanged:
/// - a message over the decoding limit (tonic: OUT_OF_RANGE), or a
///   compressed one that decompresses past it (tonic: RESOURCE_EXHAUSTED
///   without details), becomes RESOURCE_EXHAUSTED with ErrorInfo
///   REQUEST_TOO_LARGE naming the `max_request_bytes` limit;
/// - a call with no request message, a frame cut short, bytes the health
///   service cannot decode, a frame whose flag byte is neither 0 nor 1
///   (grpc-web's trailer flag 0x80 in a request), or a grpc-web body tonic-web
///   cannot read (grpc-web-text that is not base64) (tonic: INTERNAL) become
///   INVALID_ARGUMENT / INVALID_REQUEST, since the request is at fault, not
///   the server.
///
/// A compressed-flag without `grpc-encoding` stays INTERNAL, as the gRPC
/// compression spec requires.
pub fn transport_refusals(
    max_request_bytes: usize,
) -> impl Fn(http::Response<tonic::body::Body>) -> http::Response<tonic::body::Body> + Clone {
    move |response| {
        let headers = response.headers();
        let code = headers.get("grpc-status").map(|c| c.as_bytes().to_vec());
        let message = headers
            .get("grpc-message")
            .and_then(|m| m.to_str().ok())
            .map(|m| {
                percent_encoding::percent_decode_str(m)
                    .decode_utf8_lossy()
                    .into_owned()
            })
            .unwrap_or_default();
        match code.as_deref() {
            // Too long on the wire (OUT_OF_RANGE), or too long once
            // decompressed (RESOURCE_EXHAUSTED without our details).
            Some(b"11") if message.contains("message length too large") => {
                too_large(max_request_bytes)
            }
            Some(b"8") if message.contains("exceeded while decompressing") => {
                too_large(max_request_bytes)
            }
            Some(b"13")
                if message.starts_with("Missing request message")
                    || message.starts_with("Unexpected EOF decoding stream")
                    || message.starts_with("failed to decode Protobuf message")
                    || message.starts_with(
                        "protocol error: received message with invalid compression flag",
                    )
                    || message.starts_with("tonic-web: ") =>
            {
                malformed_request(&message).into_http()
            }
            _ => response,
        }
    }
}

/// RESOURCE_EXHAUSTED / REQUEST_TOO_LARGE naming the `max_request_bytes`
/// limit, as an HTTP response.
fn too_large(max_request_bytes: usize) -> http::Response<tonic::body::Body> {
    request_too_large(max_request_bytes).into_http()
}

/// INVALID_ARGUMENT / INVALID_REQUEST for a request whose message cannot be
/// read (`what` says why): undecodable bytes, bad framing, JSON that is
/// not the method's message.
pub fn malformed_request(what: &str) -> Status {
    refusal(
        Code::InvalidArgument,
        &format!("malformed request: {what}"),
        pb::ErrorReason::InvalidRequest,
    )
}

/// RESOURCE_EXHAUSTED / REQUEST_TOO_LARGE for a request over
/// `max_request_bytes`, naming the limit in the ErrorInfo metadata (`limit`,
/// `max`).
pub fn request_too_large(max_request_bytes: usize) -> Status {
    let metadata = HashMap::from([
        ("limit".to_owned(), "max_request_bytes".to_owned()),
        ("max".to_owned(), max_request_bytes.to_string()),
    ]);
    status(
        Code::ResourceExhausted,
        format!(
            "the request is larger than the max_request_bytes limit ({max_request_bytes} bytes)"
        ),
        pb::ErrorReason::RequestTooLarge,
        metadata,
    )
}
