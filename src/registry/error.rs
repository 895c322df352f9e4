//! The registry's error type.

use std::sync::Arc;

use crate::game::{GameError, ReplayError};
use crate::proto as pb;
use crate::rules::IllegalMove;
use crate::rules::chess::{ChessMoveError, SanError};
use crate::store::StoreError;

/// Why the registry refused or failed a request.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// No game has this id.
    #[error("game {game_id} not found")]
    NotFound {
        /// The id asked for.
        game_id: String,
    },
    /// The game refused the command (an illegal move, not this seat's turn,
    /// the game over, nothing to undo).
    #[error(transparent)]
    Rejected(#[from] GameError),
    /// The turn token is stale.
    #[error("expected sequence {expected}, but the game is at {current}")]
    SequenceMismatch {
        /// What the caller sent.
        expected: u64,
        /// The game's sequence.
        current: u64,
    },
    /// An earlier position beyond the log was asked for.
    #[error("sequence {at} is beyond the game's last sequence {last}")]
    SequenceOutOfRange {
        /// The sequence asked for.
        at: u64,
        /// The game's last sequence.
        last: u64,
    },
    /// A feed checkpoint past the end of its cell's feed (StreamAllEvents).
    #[error("position {at} is beyond cell {cell}'s last feed position {last}")]
    FeedPositionOutOfRange {
        /// The cell.
        cell: usize,
        /// The position asked to start after.
        at: u64,
        /// The cell's last position.
        last: u64,
    },
    /// A time CreateGame was given (`matched_at`, `clocks_start_at`) is too
    /// far from the server's clock.
    #[error("{why}")]
    TimeOutOfRange {
        /// The request field.
        field: &'static str,
        /// How far, in a sentence.
        why: String,
    },
    /// The game id is taken.
    #[error("game {game_id} already exists")]
    GameExists {
        /// The id asked for.
        game_id: String,
    },
    /// The request id was used for a different request.
    #[error("request id {request_id:?} was already used for a different request")]
    RequestIdReused {
        /// The reused id.
        request_id: String,
    },
    /// The game takes moves with seat tokens and the call presented none.
    #[error("this game needs a seat token: send metadata \"authorization: Bearer <seat token>\"")]
    Unauthenticated,
    /// The presented seat token is not the acting seat's.
    #[error("{why}")]
    PermissionDenied {
        /// What did not match, without saying whose the token is.
        why: String,
    },
    /// A seat token was to be re-issued in a game created without seat
    /// tokens.
    #[error("game {game_id} was created without seat tokens; there is no token to re-issue")]
    NoSeatTokens {
        /// The game.
        game_id: String,
    },
    /// A game with an absence policy on a server that cannot track
    /// presence.
    #[error("an absence policy needs {why}")]
    PresenceUnavailable {
        /// What is missing.
        why: &'static str,
    },
    /// Seat tokens were asked for but the server has no secret to derive
    /// them from.
    #[error("the server has no seat token secret: start it with --seat-token-secret-file")]
    NoTokenSecret,
    /// A configured limit is reached (open streams, live games).
    #[error("the {limit} limit ({max}) is reached; retry later")]
    LimitReached {
        /// The limit's setting name, e.g. `"max_streams"`.
        limit: &'static str,
        /// Its value.
        max: usize,
    },
    /// Every analysis permit is taken.
    #[error("all {max} analyses are busy; retry with backoff")]
    AnalysesBusy {
        /// The server's limit on analyses at once.
        max: usize,
    },
    /// Every heavy-read slot is taken (see
    /// [`super::HeavyReadSettings::max_heavy_reads`]).
    #[error(
        "all {max} heavy reads (replays with positions, past views) are busy; retry with backoff"
    )]
    HeavyReadsBusy {
        /// The server's limit on heavy reads admitted at once.
        max: usize,
    },
    /// An analysis found no answer within its time.
    #[error("the analysis found no answer within {ms} ms")]
    AnalysisExhausted {
        /// The time it had, in milliseconds.
        ms: u64,
    },
    /// The engine asked for cannot play this game.
    #[error("{why}")]
    EngineUnsupported {
        /// Why, in a short lowercase sentence.
        why: String,
    },
    /// Other nodes kept appending to the game while this node decided the
    /// command: each of `attempts` appends lost its race. Nothing was
    /// appended for it; retry the same request (with its request id).
    #[error(
        "game {game_id} is contended: other nodes appended first {attempts} times; retry with backoff"
    )]
    Contended {
        /// The game.
        game_id: String,
        /// How many appends lost their race.
        attempts: usize,
    },
    /// The game's mailbox is full.
    #[error("the game is overloaded; retry with backoff")]
    Overloaded,
    /// The database cannot be reached now; retry (with the request id).
    /// Shared, since one failed load answers every caller waiting on it.
    #[error("the event store is unavailable; retry with backoff")]
    StoreUnavailable(#[source] Arc<StoreError>),
    /// The store failed otherwise.
    #[error("the event store failed")]
    Store(#[source] StoreError),
    /// The server is shutting down.
    #[error("the server is shutting down")]
    ShuttingDown,
    /// This node does not hold the game's slot now: `owner` is the address
    /// of the node that does, when one does (a slot between holders has
    /// none). Also what an append refused for its fence becomes: nothing was
    /// written, and the same request may be retried through the owner.
    #[error("this node does not serve the game now; {}", match owner {
        Some(owner) => format!("its owner is {owner}"),
        None => "its slot is between owners: retry shortly".to_owned(),
    })]
    NotOwner {
        /// The owner's address.
        owner: Option<String>,
    },
    /// The game's stored log fails its checks (its integrity chain, its
    /// replay, its density): stored bytes changed or were lost. `plylog
    /// verify` tells the same.
    #[error("the stored log is corrupt: game {game_id}: {source}")]
    CorruptLog {
        /// The game.
        game_id: String,
        /// The first bad event and what is wrong with it.
        #[source]
        source: ReplayError,
    },
    /// Anything else: a store failure.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<StoreError> for RegistryError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Closed => RegistryError::ShuttingDown,
            StoreError::Fenced => RegistryError::NotOwner { owner: None },
            unavailable @ StoreError::Unavailable(_) => {
                RegistryError::StoreUnavailable(Arc::new(unavailable))
            }
            StoreError::Commit(cause) if matches!(*cause, StoreError::Unavailable(_)) => {
                RegistryError::StoreUnavailable(Arc::new(StoreError::Commit(cause)))
            }
            other => RegistryError::Store(other),
        }
    }
}

impl RegistryError {
    /// Game `game_id`'s stored log is corrupt: `why`, at event `sequence`.
    pub(crate) fn corrupt_log(game_id: &str, sequence: u64, why: String) -> RegistryError {
        RegistryError::CorruptLog {
            game_id: game_id.to_owned(),
            source: ReplayError { sequence, why },
        }
    }

    /// This error again, for another caller of the work that failed with
    /// it (a game's load answers every call queued on it): the same error
    /// where the caller acts on which it is (a missing game; a store that
    /// is unavailable or closing, which the caller retries), otherwise
    /// [`RegistryError::Internal`] with its text.
    pub(crate) fn for_another_caller(&self) -> RegistryError {
        match self {
            RegistryError::NotFound { game_id } => RegistryError::NotFound {
                game_id: game_id.clone(),
            },
            RegistryError::StoreUnavailable(cause) => {
                RegistryError::StoreUnavailable(Arc::clone(cause))
            }
            RegistryError::ShuttingDown => RegistryError::ShuttingDown,
            RegistryError::NotOwner { owner } => RegistryError::NotOwner {
                owner: owner.clone(),
            },
            RegistryError::CorruptLog { game_id, source } => RegistryError::CorruptLog {
                game_id: game_id.clone(),
                source: source.clone(),
            },
            other => RegistryError::Internal(other.to_string()),
        }
    }
}

impl RegistryError {
    /// The `google.rpc.ErrorInfo` reason of this error: what a client
    /// acts on, and the label a refused move is counted under. The one
    /// column of reasons; the gRPC code and metadata of each are the API's
    /// (see `api::status`).
    pub fn reason(&self) -> pb::ErrorReason {
        use pb::ErrorReason as R;
        match self {
            RegistryError::NotFound { .. } => R::GameNotFound,
            RegistryError::Rejected(rejection) => game_reason(rejection),
            RegistryError::SequenceMismatch { .. } => R::SequenceMismatch,
            RegistryError::SequenceOutOfRange { .. }
            | RegistryError::FeedPositionOutOfRange { .. } => R::SequenceOutOfRange,
            RegistryError::TimeOutOfRange { .. } => R::InvalidRequest,
            RegistryError::GameExists { .. } => R::GameExists,
            RegistryError::RequestIdReused { .. } => R::RequestIdReused,
            RegistryError::LimitReached { .. } => R::LimitReached,
            RegistryError::Unauthenticated => R::SeatTokenRequired,
            RegistryError::PermissionDenied { .. } => R::SeatTokenInvalid,
            RegistryError::NoSeatTokens { .. } => R::NoSeatTokens,
            RegistryError::PresenceUnavailable { .. } => R::PresenceUnavailable,
            RegistryError::NoTokenSecret => R::SeatTokenSecretMissing,
            RegistryError::Overloaded
            | RegistryError::AnalysesBusy { .. }
            | RegistryError::HeavyReadsBusy { .. } => R::Overloaded,
            RegistryError::Contended { .. } => R::AppendContended,
            RegistryError::AnalysisExhausted { .. } => R::AnalysisBudgetExhausted,
            RegistryError::EngineUnsupported { .. } => R::EngineUnsupported,
            RegistryError::StoreUnavailable(_) => R::StoreUnavailable,
            RegistryError::Store(_) | RegistryError::Internal(_) => R::InternalError,
            RegistryError::ShuttingDown => R::ShuttingDown,
            RegistryError::NotOwner { .. } => R::NotOwner,
            RegistryError::CorruptLog { .. } => R::LogCorrupt,
        }
    }
}

/// The `google.rpc.ErrorInfo` reason of a game's refusal (see
/// [`RegistryError::reason`]).
pub fn game_reason(rejection: &GameError) -> pb::ErrorReason {
    use pb::ErrorReason as R;
    match rejection {
        GameError::Illegal(illegal) => match illegal {
            IllegalMove::CellOffBoard { .. } | IllegalMove::ColumnOffBoard { .. } => R::OutOfBounds,
            IllegalMove::WrongMoveKind { .. } => R::WrongMoveKind,
            IllegalMove::NoSuchMark { .. } | IllegalMove::UnexpectedMark { .. } => {
                R::InvalidRequest
            }
            IllegalMove::CellOccupied { .. } => R::CellOccupied,
            IllegalMove::ColumnFull { .. } => R::ColumnFull,
            IllegalMove::NoFlip { .. } => R::NoFlip,
            IllegalMove::SwapNotAllowed => R::SwapNotAllowed,
            IllegalMove::ColumnEmpty { .. } => R::ColumnEmpty,
            IllegalMove::NotYourDisc { .. } => R::NotYourDisc,
            IllegalMove::Chess(chess) => match chess {
                ChessMoveError::NotUci(_) | ChessMoveError::San(SanError::NotSan(_)) => {
                    R::InvalidMoveText
                }
                ChessMoveError::San(SanError::Ambiguous { .. }) => R::AmbiguousMove,
                ChessMoveError::Illegal { .. } | ChessMoveError::San(SanError::Illegal(_)) => {
                    R::IllegalMove
                }
                ChessMoveError::Ended(_) => R::GameOver,
            },
        },
        GameError::NoSuchSeat { .. } | GameError::SeatRequired => R::InvalidRequest,
        GameError::NotYourTurn { .. } => R::NotYourTurn,
        GameError::GameOver => R::GameOver,
        GameError::NothingToUndo => R::NothingToUndo,
        GameError::UndoDisabled => R::UndoDisabled,
        GameError::NotLastMover { .. } | GameError::NotRedoer { .. } => R::NotLastMover,
        GameError::NothingToRedo => R::NothingToRedo,
        GameError::ConsentRequired => R::ConsentRequired,
        GameError::TakebackNotAllowed => R::TakebackNotAllowed,
        GameError::NoPendingOffer { .. } => R::NoPendingOffer,
        GameError::AlreadyAgreed { .. } => R::AlreadyAgreed,
        GameError::AbortTooLate => R::AbortTooLate,
        GameError::RematchPending => R::RematchPending,
        GameError::SeatOut { .. } => R::SeatOut,
        GameError::SeatIsBot { .. } => R::SeatIsBot,
        GameError::TimeExpired { .. } => R::TimeExpired,
        GameError::NoDrawClaim => R::NoDrawClaim,
    }
}
