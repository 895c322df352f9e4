//! What callers ask of the registry and what it answers: request metadata,
//! command and creation replies, analysis, replay and stream requests.

use std::time::Duration;

use super::Answer;
use crate::proto::{self as pb, convert};
use crate::store::TokenHash;

/// What an analysis asks for (see [`super::Registry::analyze`]).
#[derive(Debug, Clone, Copy)]
pub struct AnalysisRequest {
    /// The engine; `None` for the strongest for the game.
    pub engine: Option<crate::engine::EngineKind>,
    /// 1 to [`crate::engine::MAX_STRENGTH`].
    pub strength: u8,
    /// Seeds the engine's generator (stream: the position's sequence + 1).
    pub seed: u64,
    /// The node budget; 0 for the server's.
    pub nodes: u64,
    /// The time budget; `None` for the server's.
    pub time: Option<Duration>,
    /// One move (SuggestMove) rather than every move's score.
    pub suggest: bool,
}

/// What an analysis found, for the seat to move after `sequence`.
#[derive(Debug, Clone)]
pub struct AnalysisReply {
    /// The seat to move.
    pub seat: crate::rules::Seat,
    /// The sequence of the position analysed.
    pub sequence: u64,
    /// The engine that answered.
    pub engine: crate::engine::EngineKind,
    /// The move, or every move's score.
    pub answer: Answer,
    /// The game analysed (its moves' text forms depend on it: chess).
    pub state: std::sync::Arc<crate::game::GameState>,
}

/// The seat credential a call presented.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Credential {
    /// No `authorization` metadata.
    #[default]
    None,
    /// A bearer token, by its SHA-256 hash.
    Token(TokenHash),
    /// An `authorization` value that is not a bearer token; says what is
    /// wrong with it. Refused by games that take seat tokens, ignored by
    /// the others.
    Malformed(String),
}

/// A request's idempotency key, fingerprint, turn token, credential and the
/// view its reply asks for.
#[derive(Debug, Clone, Default)]
pub struct RequestMeta {
    /// The caller's request id; empty means no deduplication.
    pub request_id: String,
    /// The request as received, with id and turn token cleared (and the
    /// seat token's hash); empty when `request_id` is, since nothing
    /// compares it then.
    pub fingerprint: Vec<u8>,
    /// The sequence the caller expects the game to be at.
    pub expected_sequence: Option<u64>,
    /// The seat credential the call presented.
    pub credential: Credential,
    /// How much of the game the reply carries (internal commands: basic).
    pub view: convert::View,
}

/// What a command appended and the game after it.
#[derive(Debug, Clone)]
pub struct CommandReply {
    /// The appended events, in order.
    pub events: Vec<pb::GameEvent>,
    /// The game after them.
    pub game: pb::Game,
    /// The new token of a ReissueSeatToken command; `None` for others.
    pub seat_token: Option<String>,
}

/// What CreateGame made (or, for a retry, had made).
#[derive(Debug, Clone)]
pub struct Created {
    /// The game as it stood right after creation.
    pub game: pb::Game,
    /// One token per seat, in seat order; empty when the game takes no seat
    /// tokens. For a retry, a seat whose token was re-issued since (or whose
    /// secret was retired) gets an empty string.
    pub seat_tokens: Vec<String>,
    /// Whether this call created the game (false: a retry).
    pub created: bool,
}

/// A page of legal moves.
#[derive(Debug, Clone)]
pub struct LegalMovesPage {
    /// The reply, without its page token.
    pub reply: pb::ListLegalMovesResponse,
    /// The offset of the next page, if there is one.
    pub next_offset: Option<usize>,
}

/// Which steps of a GetReplay page carry the position after them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayPositions {
    /// `None`: every step. `Some(0)`: none. `Some(n)`: the steps whose
    /// sequence is a multiple of `n`, and the game's last.
    pub every: Option<u32>,
    /// These sequences as well, sorted.
    pub at: Vec<u64>,
}

/// Most encoded bytes of the steps of one GetReplay page, or of the games
/// of one ListGames page (2 MiB, half a default client's 4 MiB limit); a
/// page always holds at least one.
pub const PAGE_BYTES: usize = 2 * 1024 * 1024;

/// Most pieces the positions of one GetReplay page hold in all (about 2 MB
/// on the wire), so a page of a game on a huge board stays small.
pub const REPLAY_PIECE_BUDGET: usize = 250_000;

/// What a StreamEvents call asks for.
#[derive(Debug, Clone)]
pub struct StreamRequest {
    /// The game.
    pub game_id: String,
    /// The first sequence to send (1-based; 0 reads as 1).
    pub from_sequence: u64,
    /// Whether to keep following after the history.
    pub follow: bool,
    /// Only the events of this round (from 0); `None`: every round.
    pub round: Option<u32>,
    /// The seat token the call presented: a followed stream with a seat's
    /// token keeps the seat present.
    pub credential: Credential,
}

impl ReplayPositions {
    /// Whether any step carries its position.
    pub fn any(&self) -> bool {
        self.every != Some(0) || !self.at.is_empty()
    }

    /// Whether the step of `sequence` carries its position, in a game whose
    /// log ends at `last`.
    pub fn wants(&self, sequence: u64, last: u64) -> bool {
        let every = match self.every {
            None => true,
            Some(0) => false,
            Some(n) => sequence.is_multiple_of(u64::from(n)) || sequence == last,
        };
        every || self.at.binary_search(&sequence).is_ok()
    }
}
