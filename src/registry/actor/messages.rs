//! What an actor is asked: the messages of its mailbox, and how one is refused.

use tokio::sync::{broadcast, oneshot};

use super::super::residency::{LiveEvent, PresenceGuard};
use super::super::{CommandReply, Credential, LegalMovesPage, RegistryError, RequestMeta};
use crate::game::{Command, GameState};
use crate::metrics::Metrics;
use crate::proto as pb;
use crate::proto::convert::View;

type Reply<T> = oneshot::Sender<Result<T, RegistryError>>;

/// A stream's subscription: the live events, the sequence it starts after,
/// and the seat it keeps present, if any.
pub(in crate::registry) type Subscription =
    (broadcast::Receiver<LiveEvent>, u64, Option<PresenceGuard>);

/// What an actor is asked to do.
pub(in crate::registry) enum Msg {
    Execute {
        command: Command,
        request: RequestMeta,
        reply: Reply<CommandReply>,
    },
    View {
        at: Option<u64>,
        view: View,
        reply: Reply<pb::Game>,
    },
    /// The game's state, the latest or right after event `at`.
    State {
        at: Option<u64>,
        reply: Reply<GameState>,
    },
    LegalMoves {
        at: Option<u64>,
        offset: usize,
        limit: usize,
        reply: Reply<LegalMovesPage>,
    },
    /// A stream subscribes; when it follows with a seat's token, the seat
    /// is present while the subscription's guard lives.
    Subscribe {
        credential: Credential,
        follow: bool,
        reply: Reply<Subscription>,
    },
    /// The timer queue claimed the game's wake (postponing it to
    /// `claimed_until`): do what is due (a timeout, an absence), then
    /// answer; the game's next wake is written after.
    Wake {
        claimed_until: i64,
        reply: Reply<()>,
    },
}

impl Msg {
    /// What the message asks, for spans: `execute`, `view`, ...
    pub(super) fn name(&self) -> &'static str {
        match self {
            Msg::Execute { .. } => "execute",
            Msg::View { .. } => "view",
            Msg::State { .. } => "state",
            Msg::LegalMoves { .. } => "legal_moves",
            Msg::Subscribe { .. } => "subscribe",
            Msg::Wake { .. } => "wake",
        }
    }

    /// Answers the message with `error`. A refused move is counted under
    /// the game's `kind` (`None`: the game did not load).
    pub(in crate::registry) fn fail(
        self,
        error: RegistryError,
        kind: Option<&'static str>,
        metrics: &Metrics,
    ) {
        let text = error.to_string();
        self.count_refusal(&error, kind, metrics);
        match self {
            Msg::Execute { reply, .. } => drop(reply.send(Err(error))),
            Msg::View { reply, .. } => drop(reply.send(Err(error))),
            Msg::State { reply, .. } => drop(reply.send(Err(error))),
            Msg::LegalMoves { reply, .. } => drop(reply.send(Err(error))),
            Msg::Subscribe { reply, .. } => drop(reply.send(Err(error))),
            Msg::Wake { reply, .. } => drop(reply.send(Err(error))),
        }
        tracing::trace!(error = %text, "request failed");
    }

    /// Counts a refused move in `moves_rejected` (see
    /// [`Metrics::move_rejected`]): a seat's move answered with `error`, on
    /// a game of `kind` (`None`: not loaded, `"unknown"`), under the
    /// error's reason. Other messages and commands are not counted.
    pub(in crate::registry) fn count_refusal(
        &self,
        error: &RegistryError,
        kind: Option<&'static str>,
        metrics: &Metrics,
    ) {
        if let Msg::Execute {
            command: Command::Play { .. },
            ..
        } = self
        {
            metrics.move_rejected(kind.unwrap_or("unknown"), error.reason().as_str_name());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameError;
    use crate::metrics::Sample;
    use crate::rules::{Coord, Move, Seat};

    fn execute(command: Command) -> Msg {
        let (reply, _) = oneshot::channel();
        Msg::Execute {
            command,
            request: RequestMeta::default(),
            reply,
        }
    }

    fn rejected(metrics: &Metrics) -> Vec<String> {
        let text = metrics.encode(Sample::default());
        text.lines()
            .filter(|l| l.starts_with("plylog_moves_rejected_total{"))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn a_refused_move_counts_under_its_games_kind_and_its_reason_and_nothing_else_does() {
        let metrics = Metrics::new();
        let play = Command::Play {
            seat: Some(Seat(0)),
            mv: Move::Place(Coord { row: 0, col: 0 }),
        };
        let occupied =
            GameError::Illegal(crate::rules::IllegalMove::CellOccupied { row: 0, col: 0 });
        execute(play).fail(occupied.into(), Some("mnk"), &metrics);
        let missing = RegistryError::NotFound {
            game_id: "g".into(),
        };
        execute(play).fail(missing, None, &metrics);
        // Not a seat's move: not counted.
        execute(Command::Timeout).fail(RegistryError::Overloaded, Some("mnk"), &metrics);
        let (reply, _) = tokio::sync::oneshot::channel();
        Msg::View {
            at: None,
            view: crate::proto::convert::View::Full,
            reply,
        }
        .fail(RegistryError::Overloaded, Some("mnk"), &metrics);
        let mut lines = rejected(&metrics);
        lines.sort();
        assert_eq!(
            lines,
            [
                "plylog_moves_rejected_total{kind=\"mnk\",reason=\"CELL_OCCUPIED\"} 1",
                "plylog_moves_rejected_total{kind=\"unknown\",reason=\"GAME_NOT_FOUND\"} 1",
            ]
        );
    }
}
