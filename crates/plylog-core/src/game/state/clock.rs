//! Time as data: the [`Clocks`], the turn's deadline and charging a seat for
//! its turn, and what happens when the time runs out
//! ([`Command::Timeout`](super::Command::Timeout)) or a seat stays away past
//! its grace period ([`Command::GraceExpired`](super::Command::GraceExpired)).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::decide::{leave, play};
use super::offers::act;
use super::{Action, GameError, GameState, Millis};
use crate::engine::random_move;
use crate::game::{AbsenceAction, Event, ExpiryPolicy};
use crate::rules::{EndReason, Outcome, Seat};

/// Where a game's clocks stand after its last event: each seat's time left
/// as of the start of the current turn, and when that turn started.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Clocks {
    /// Milliseconds each seat had left when the current turn started (its
    /// game clock; empty when the game has only a per-move limit).
    pub remaining_ms: Vec<Millis>,
    /// When the current turn started, Unix epoch milliseconds.
    pub turn_started: Millis,
}

impl GameState {
    /// The clocks as of the last event.
    pub fn clocks(&self) -> &Clocks {
        &self.clocks
    }

    /// When the current turn ends, Unix epoch milliseconds: the turn's start
    /// plus the shorter of the per-move limit and the seat's clock. `None`
    /// in an untimed game or one that is over.
    pub fn deadline(&self) -> Option<Millis> {
        let tc = self.config.time_control()?;
        self.ended.is_none().then_some(())?;
        let per_move = tc.per_move_ms.map(|ms| ms as Millis);
        let clock = self.clocks.remaining_ms.get(self.to_move.index()).copied();
        let limit = match (per_move, clock) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        Some(self.clocks.turn_started.saturating_add(limit))
    }

    pub(super) fn check_deadline(&self, now: Millis) -> Result<(), GameError> {
        match self.deadline() {
            Some(deadline) if now >= deadline => Err(GameError::TimeExpired {
                seat: self.to_move.0,
                deadline_ms: deadline,
            }),
            _ => Ok(()),
        }
    }

    /// Charges the seat to move for the time since its turn started (while
    /// the game is on), and starts the next turn at `at`.
    pub(super) fn charge(&mut self, at: Millis) {
        let elapsed = at.saturating_sub(self.clocks.turn_started).max(0);
        if self.ended.is_none()
            && let Some(left) = self.clocks.remaining_ms.get_mut(self.to_move.index())
        {
            *left = left.saturating_sub(elapsed).max(0);
        }
        self.clocks.turn_started = at;
        self.absence_logged = false;
    }
}

/// What the timer firing at `now` appends: nothing before the deadline;
/// after it, a TimeExpired and what the expiry policy does.
pub(super) fn timeout(state: &GameState, now: Millis) -> Result<Vec<Event>, GameError> {
    let (Some(deadline), Some(tc)) = (state.deadline(), state.config.time_control()) else {
        return Ok(Vec::new());
    };
    if now < deadline {
        return Ok(Vec::new());
    }
    let seat = state.to_move;
    let mut events = vec![Event::TimeExpired { seat }];
    events.extend(expire(
        state,
        seat,
        tc.on_expiry,
        tc.seed,
        EndReason::Timeout,
    )?);
    Ok(events)
}

/// What `policy` does to `seat`, the seat to move, whose time ran out or
/// who stayed away past the grace period (`reason`), once the event that
/// says so (sequence `state.sequence + 1`) is appended. A random move is
/// drawn from stream `state.sequence + 2` of ChaCha8 seeded with `seed`,
/// unless the game is unattended (see [`AUTOMATIC_ROUNDS`]): it then ends
/// with no result, [`EndReason::Abandoned`].
fn expire(
    state: &GameState,
    seat: Seat,
    policy: ExpiryPolicy,
    seed: u64,
    reason: EndReason,
) -> Result<Vec<Event>, GameError> {
    Ok(match policy {
        ExpiryPolicy::Draw => vec![Event::GameEnded {
            outcome: Some(Outcome::Draw),
            reason,
        }],
        // Nobody plays this game any more: it ends rather than playing
        // itself to the end of the board.
        ExpiryPolicy::RandomMove if state.config.bot(seat).is_none() && state.is_unattended() => {
            vec![Event::GameEnded {
                outcome: None,
                reason: EndReason::Abandoned,
            }]
        }
        ExpiryPolicy::RandomMove => {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(state.sequence + 2);
            match random_move(state.config.rules(), &state.position, seat, &mut rng) {
                Some(mv) => play(state, seat, mv, false)?,
                None => leave(state, seat, reason),
            }
        }
        ExpiryPolicy::Forfeit => leave(state, seat, reason),
    })
}

/// What the shell's report that `seat` stayed away past the grace period
/// on its turn appends: a SeatAbsent, then the absence policy's action.
/// Nothing when the game has no absence policy, is over, or `seat` is not
/// to move (a move came first).
pub(super) fn absent(state: &GameState, seat: Seat) -> Result<Vec<Event>, GameError> {
    let Some(policy) = state.config.absence() else {
        return Ok(Vec::new());
    };
    // A bot seat is never away.
    if state.ended.is_some()
        || seat != state.to_move
        || state.absence_logged
        || state.config.bot(seat).is_some()
    {
        return Ok(Vec::new());
    }
    let mut events = vec![Event::SeatAbsent { seat }];
    match policy.action {
        // Offering while another seat's offer stands accepts it; a seat
        // whose own offer stands has nothing more to offer.
        AbsenceAction::OfferDraw => {
            events.extend(act(state, seat, Action::OfferDraw).unwrap_or_default())
        }
        AbsenceAction::Expire => {
            let (on_expiry, seed) = state
                .config
                .time_control()
                .map_or((ExpiryPolicy::Forfeit, 0), |tc| (tc.on_expiry, tc.seed));
            events.extend(expire(state, seat, on_expiry, seed, EndReason::Abandoned)?);
        }
    }
    Ok(events)
}
