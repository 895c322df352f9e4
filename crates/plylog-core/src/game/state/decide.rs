//! [`decide`]: what a command does to a game, as events or a refusal: moves,
//! undos and redos, rematches, and a seat leaving play.

use super::clock::{absent, timeout};
use super::offers::{act, all_agree};
use super::{Command, GameError, GameState, Millis, Offer, PlayedMove, key};
use crate::game::{Event, UndoPolicy};
use crate::rules::{EndReason, Move, Outcome, Seat};

impl GameState {
    /// Refuses a command of `seat` once the game is over, the seat is out,
    /// or the turn's deadline has passed at `now`.
    fn check_can_act(&self, seat: Seat, now: Millis) -> Result<(), GameError> {
        self.seat(seat)?;
        if self.ended.is_some() {
            return Err(GameError::GameOver);
        }
        self.check_deadline(now)?;
        if self.is_out(seat) {
            return Err(GameError::SeatOut { seat: seat.0 });
        }
        Ok(())
    }

    /// Whether the game ended by something other than a move (resignation,
    /// time, agreement, abort, a claimed draw), which no undo takes back.
    fn ended_off_the_board(&self) -> bool {
        let claimed = || {
            self.moves
                .last()
                .is_none_or(|m| m.played().outcome.is_none())
        };
        match self.ended {
            Some(
                EndReason::Resignation
                | EndReason::Timeout
                | EndReason::Agreement
                | EndReason::Aborted
                | EndReason::Abandoned,
            ) => true,
            // Made by a move under the automatic rule, claimed otherwise.
            Some(EndReason::ThreefoldRepetition | EndReason::FiftyMoves) => claimed(),
            _ => false,
        }
    }
}

/// Decides what `command`, given at `now` (the server's clock), does to
/// `state`: the events to append, or why it is refused. Pure: `state` is
/// not changed, and `now` is the only time it knows.
///
/// # Errors
/// [`GameError`]: an unknown seat, not this seat's turn, the game over, an
/// illegal move, nothing to undo or redo, an offer that is not pending, the
/// turn's time run out, and the rest of [`GameError`].
pub fn decide(state: &GameState, command: &Command, now: Millis) -> Result<Vec<Event>, GameError> {
    let mut events = decide_round(state, command, now)?;
    // A rematch asked for during the round starts the next one right after
    // the event that ends this one.
    let ends = |e: &Event| match e {
        Event::MovePlayed { played, .. } | Event::MoveRedone { played, .. } => {
            played.outcome.is_some()
        }
        Event::GameEnded { .. } => true,
        _ => false,
    };
    if let Some((_, rotate)) = state.rematch
        && events.iter().any(ends)
        && !events
            .iter()
            .any(|e| matches!(e, Event::RoundStarted { .. }))
    {
        events.push(next_round(state, rotate));
    }
    Ok(events)
}

/// The RoundStarted of the round after `state`'s.
fn next_round(state: &GameState, rotate: bool) -> Event {
    let seats = state.config.seats().len();
    Event::RoundStarted {
        round: state.round + 1,
        first: if rotate {
            state.first.next(seats)
        } else {
            state.first
        },
    }
}

/// What `command` does within the current round.
fn decide_round(
    state: &GameState,
    command: &Command,
    now: Millis,
) -> Result<Vec<Event>, GameError> {
    match *command {
        Command::Play { seat, mv } => {
            // A request that is wrong whatever the position is refused as
            // such before the position's own refusals.
            let seat = state.human(seat.ok_or(GameError::SeatRequired)?)?;
            state.config.rules().check_move(mv)?;
            state.check_can_act(seat, now)?;
            if seat != state.to_move {
                return Err(GameError::NotYourTurn {
                    seat: seat.0,
                    to_move: state.to_move.0,
                });
            }
            play(state, seat, mv, false)
        }
        Command::BotPlay {
            seat,
            mv,
            sequence,
            proven,
        } => {
            let Some(bot) = state.config.bot(seat) else {
                return Err(GameError::NoSuchSeat {
                    seat: seat.0.into(),
                    max: state.config.seats().len() as u32 - 1,
                });
            };
            if sequence != state.sequence || state.ended.is_some() || seat != state.to_move {
                return Ok(Vec::new());
            }
            state.check_can_act(seat, now)?;
            let mut events = play(state, seat, mv, false)?;
            if let Some(Event::MovePlayed { chosen_by, .. }) = events.first_mut() {
                *chosen_by = Some(bot.chooser(proven));
            }
            Ok(events)
        }
        Command::Undo { requested_by } => {
            if let Some(seat) = requested_by {
                state.seat(seat)?;
                if state.is_out(seat) && state.ended.is_none() {
                    return Err(GameError::SeatOut { seat: seat.0 });
                }
            }
            let policy = state.config.undo_policy();
            match policy {
                UndoPolicy::Disabled => return Err(GameError::UndoDisabled),
                UndoPolicy::Consent => return Err(GameError::ConsentRequired),
                UndoPolicy::LastMover | UndoPolicy::AnySeat => {}
            }
            if state.ended_off_the_board() {
                return Err(GameError::GameOver);
            }
            // A player's undo also takes back the bots' replies to its
            // move: the moves on top played by bot seats, then the one
            // under them.
            let mut from = state
                .moves
                .len()
                .checked_sub(1)
                .ok_or(GameError::NothingToUndo)?;
            if requested_by.is_none_or(|s| state.config.bot(s).is_none()) {
                while from > 0 && state.config.bot(state.moves[from].seat).is_some() {
                    from -= 1;
                }
                if state.config.bot(state.moves[from].seat).is_some() {
                    from = state.moves.len() - 1;
                }
            }
            let last = &state.moves[from];
            if policy == UndoPolicy::LastMover && requested_by != Some(last.seat) {
                return Err(GameError::NotLastMover {
                    last_mover: last.seat.0,
                    requested_by: requested_by.map(|s| s.0),
                });
            }
            if state.ended.is_none() {
                state.check_deadline(now)?;
            }
            Ok(state.moves[from..]
                .iter()
                .rev()
                .map(|m| undo(m, requested_by))
                .collect())
        }
        Command::Redo { requested_by } => {
            if let Some(seat) = requested_by {
                state.seat(seat)?;
            }
            let policy = state.config.undo_policy();
            if policy == UndoPolicy::Disabled {
                return Err(GameError::UndoDisabled);
            }
            let next = state.redo.last().ok_or(GameError::NothingToRedo)?;
            if policy != UndoPolicy::AnySeat && requested_by != Some(next.seat) {
                return Err(GameError::NotRedoer {
                    mover: next.seat.0,
                    requested_by: requested_by.map(|s| s.0),
                });
            }
            state.check_can_act(next.seat, now)?;
            if next.seat != state.to_move {
                return Err(GameError::NothingToRedo);
            }
            play(state, next.seat, next.mv, true)
        }
        Command::Act { seat, action } => {
            let seat = state.human(seat.ok_or(GameError::SeatRequired)?)?;
            state.check_can_act(seat, now)?;
            act(state, seat, action)
        }
        Command::Rematch { seat, rotate } => {
            let seat = state.human(seat.ok_or(GameError::SeatRequired)?)?;
            if state.ended.is_some() {
                return Ok(vec![next_round(state, rotate)]);
            }
            if state.round > 0 && !state.anyone_moved() {
                // A round a rematch started, where nobody has moved yet:
                // this is the same request (both seats pressed Rematch).
                return Ok(Vec::new());
            }
            if state.rematch.is_some() {
                return Err(GameError::RematchPending);
            }
            state.check_deadline(now)?;
            Ok(vec![Event::RematchRequested { seat, rotate }])
        }
        Command::Timeout => timeout(state, now),
        Command::GraceExpired { seat } => absent(state, state.seat(seat)?),
        Command::ReissueSeatToken { seat } => Ok(vec![Event::SeatTokenReissued {
            seat: state.seat(seat)?,
        }]),
    }
}

/// The MoveUndone that takes back `last`.
pub(super) fn undo(last: &PlayedMove, requested_by: Option<Seat>) -> Event {
    Event::MoveUndone {
        seat: last.seat,
        undone_sequence: last.sequence,
        placement: last.placement,
        requested_by,
    }
}

/// The events of `seat` playing `mv` (a redo of the last undone move when
/// `redo`): the move, any passes it forces, and a draw when it repeats a
/// position a third time where the rules say so.
pub(super) fn play(
    state: &GameState,
    seat: Seat,
    mv: Move,
    redo: bool,
) -> Result<Vec<Event>, GameError> {
    let rules = state.config.rules();
    let mut played = rules.play(&state.position, seat, mv)?;
    let mut repeated = false;
    if played.outcome.is_none() && rules.draws_on_repetition() {
        // The third occurrence of a position is a draw.
        let mut after = state.position.clone();
        rules.apply(&mut after, seat, &played);
        let next = state.next_after(seat, &played);
        repeated = state
            .repetitions
            .get(&key(&after, next))
            .is_some_and(|n| *n >= 2);
    }
    let passes = std::mem::take(&mut played.passes)
        .into_iter()
        .map(|seat| Event::TurnPassed { seat });
    let ply = state.moves.len() as u32 + 1;
    let event = if redo {
        Event::MoveRedone { seat, ply, played }
    } else {
        Event::MovePlayed {
            seat,
            ply,
            played,
            chosen_by: None,
        }
    };
    let mut events: Vec<Event> = std::iter::once(event).chain(passes).collect();
    if repeated {
        events.push(Event::GameEnded {
            outcome: Some(Outcome::Draw),
            reason: EndReason::Repetition,
        });
    }
    Ok(events)
}

/// `seat` leaves play for `reason`: the last seat left in play wins (no
/// result when none is left), otherwise play goes on without it.
///
/// A pending draw offer or takeback request that `seat` alone had not
/// agreed to is agreed by everyone left: the draw, or the takeback,
/// follows.
pub(super) fn leave(state: &GameState, seat: Seat, reason: EndReason) -> Vec<Event> {
    let mut others = state.in_play().filter(|s| *s != seat);
    let (Some(_), Some(_)) = (others.next(), others.next()) else {
        let mut others = state.in_play().filter(|s| *s != seat);
        return vec![Event::GameEnded {
            outcome: others.next().map(|seat| Outcome::Win {
                seat,
                line: Vec::new(),
            }),
            reason,
        }];
    };
    let mut events = vec![Event::SeatOut { seat, reason }];
    // Agreed by every seat still in play once `seat` is out (an offer of
    // `seat`'s own lapses with it).
    let agreed = |offer: &Option<Offer>| {
        offer
            .as_ref()
            .is_some_and(|o| o.by != seat && all_agree(state, &o.agreed, seat))
    };
    if agreed(&state.draw_offer) {
        events.push(Event::GameEnded {
            outcome: Some(Outcome::Draw),
            reason: EndReason::Agreement,
        });
    } else if agreed(&state.takeback)
        && let (Some(last), Some(offer)) = (state.moves.last(), &state.takeback)
    {
        events.push(undo(last, Some(offer.by)));
    }
    events
}
