//! [`evolve`]: applies one event to a game. No rule is checked here.

use std::sync::Arc;

use super::{GameState, Millis, Offer, PlayedMove};
use crate::game::{Event, MAX_TIME_MS};
use crate::rules::Seat;

/// Applies one well-formed event, recorded at `at`, to `state` and advances
/// its sequence by one. No rule is checked here: every rule lives in
/// [`decide`](super::decide), and [`GameState::replay`] checks stored
/// events before applying them.
///
/// # Panics
/// On an event that [`decide`](super::decide) could not have produced for
/// `state` (a placement off the board, a GameCreated after the start).
pub fn evolve(state: &mut GameState, event: &Event, at: Millis) {
    state.sequence += 1;
    let config = Arc::clone(&state.config);
    let rules = config.rules();
    // Whether the server appended this event for a seat whose time ran out
    // or that stayed away (the event right after that news).
    let on_behalf = std::mem::take(&mut state.on_behalf);
    // A person's own move or action starts the count of automatic moves
    // again (a bot's changes nothing).
    let reset_by = |state: &mut GameState, seat: Option<Seat>| {
        if !on_behalf && seat.is_none_or(|s| config.bot(s).is_none()) {
            state.automatic_moves = 0;
        }
    };
    let set_offer = |offer: &mut Option<Offer>, seat: Seat| {
        let offer = offer.get_or_insert_with(|| Offer {
            by: seat,
            agreed: vec![false; config.seats().len()],
            others_moved: false,
        });
        offer.agreed[seat.index()] = true;
    };
    match event {
        Event::GameCreated(_) => panic!("GameCreated is only ever the first event"),
        Event::MovePlayed { seat, played, .. } | Event::MoveRedone { seat, played, .. } => {
            state.charge(at);
            if on_behalf && config.bot(*seat).is_none() {
                state.automatic_moves = state.automatic_moves.saturating_add(1);
            }
            reset_by(state, Some(*seat));
            // An increment stops at the longest a clock may hold.
            if let (Some(left), Some(clock)) = (
                state.clocks.remaining_ms.get_mut(seat.index()),
                config.time_control().and_then(|tc| tc.clock),
            ) {
                *left = left
                    .saturating_add(clock.increment_ms as Millis)
                    .min(MAX_TIME_MS as Millis);
            }
            rules.apply(&mut state.position, *seat, played);
            if played.outcome.is_some() {
                state.ended = Some(rules.end_reason(played));
            }
            state.outcome = played.outcome.clone();
            state.to_move = state.next_after(*seat, played);
            state
                .moves
                .push(PlayedMove::new(*seat, state.sequence, played.clone()));
            if matches!(event, Event::MoveRedone { .. }) {
                state.redo.pop();
            } else {
                state.redo.clear();
            }
            state.moved[seat.index()] = true;
            // A draw offer stands over the offering seat's own move (offer,
            // then move) and lapses at its next one.
            match &mut state.draw_offer {
                Some(offer) if offer.by == *seat && offer.others_moved => state.draw_offer = None,
                Some(offer) if offer.by != *seat => offer.others_moved = true,
                _ => {}
            }
            state.takeback = None;
            state.count_position(1);
        }
        Event::TurnPassed { seat } => {
            state.charge(at);
            state.to_move = seat.next(config.seats().len());
        }
        Event::SeatTokenReissued { .. } => {}
        Event::MoveUndone {
            seat, requested_by, ..
        } => {
            reset_by(state, *requested_by);
            state.charge(at);
            state.count_position(-1);
            if let Some(undone) = state.moves.pop() {
                rules.undo(&mut state.position, undone.seat, &undone.played());
                // The increment the move earned goes with it (a redo earns
                // it again).
                if let (Some(left), Some(clock)) = (
                    state.clocks.remaining_ms.get_mut(undone.seat.index()),
                    config.time_control().and_then(|tc| tc.clock),
                ) {
                    *left = left.saturating_sub(clock.increment_ms as Millis).max(0);
                }
                state.redo.push(undone);
            }
            state.outcome = None;
            state.ended = None;
            // The turn goes back to the undone move's seat, or past it
            // while that seat is out of play.
            state.to_move = state.skip_out(*seat);
            state.takeback = None;
        }
        Event::TimeExpired { .. } => {
            state.charge(at);
            state.on_behalf = true;
        }
        Event::SeatAbsent { .. } => {
            state.absence_logged = true;
            state.on_behalf = true;
        }
        Event::SeatOut { seat, .. } => {
            state.out[seat.index()] = true;
            for offer in [&mut state.draw_offer, &mut state.takeback] {
                if offer.as_ref().is_some_and(|o| o.by == *seat) {
                    *offer = None;
                }
            }
            if state.to_move == *seat {
                state.charge(at);
                state.to_move = state.skip_out(*seat);
            }
        }
        Event::GameEnded { outcome, reason } => {
            state.charge(at);
            state.outcome = outcome.clone();
            state.ended = Some(*reason);
            state.draw_offer = None;
            state.takeback = None;
        }
        Event::DrawOffered { seat } | Event::DrawAccepted { seat } => {
            reset_by(state, Some(*seat));
            set_offer(&mut state.draw_offer, *seat);
        }
        Event::DrawDeclined { seat } => {
            reset_by(state, Some(*seat));
            state.draw_offer = None;
        }
        Event::TakebackRequested { seat } | Event::TakebackAccepted { seat } => {
            reset_by(state, Some(*seat));
            set_offer(&mut state.takeback, *seat);
        }
        Event::TakebackDeclined { seat } => {
            reset_by(state, Some(*seat));
            state.takeback = None;
        }
        Event::RematchRequested { seat, rotate } => {
            reset_by(state, Some(*seat));
            state.rematch = Some((*seat, *rotate));
        }
        Event::RoundStarted { round, first } => state.start_round(*round, *first, at),
    }
    // A finished game stays in memory for a while and seldom grows again:
    // its undo stack keeps no spare room (up to half its size otherwise,
    // at 48 bytes a move). Once shrunk this costs a comparison per event.
    if state.ended.is_some() && state.moves.capacity() > state.moves.len() {
        state.moves.shrink_to_fit();
    }
}
