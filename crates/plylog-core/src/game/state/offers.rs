//! What a seat does besides moving
//! ([`Command::Act`](super::Command::Act)): resign, abort, and the draw
//! offers and takeback requests that stand as an [`Offer`] until every seat
//! in play agrees.

use super::decide::{leave, undo};
use super::{Action, GameError, GameState};
use crate::game::{Event, UndoPolicy};
use crate::rules::{EndReason, Outcome, Seat};

/// A pending draw offer or takeback request: who made it and which seats
/// have agreed (the maker included).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Offer {
    /// The seat that made it.
    pub by: Seat,
    /// Agreement by seat index.
    pub agreed: Vec<bool>,
    /// Whether another seat has moved since the offer was made (a draw
    /// offer then lapses at the offering seat's next move).
    pub others_moved: bool,
}

impl GameState {
    /// The pending draw offer.
    pub fn draw_offer(&self) -> Option<&Offer> {
        self.draw_offer.as_ref()
    }

    /// The pending takeback request.
    pub fn takeback_request(&self) -> Option<&Offer> {
        self.takeback.as_ref()
    }
}

/// Whether every seat in play but those agreed in `offer` has now agreed,
/// with `seat` agreeing too.
pub(super) fn all_agree(state: &GameState, offer: &[bool], seat: Seat) -> bool {
    state
        .in_play()
        .all(|s| s == seat || offer.get(s.index()).copied().unwrap_or(false))
}

/// What `seat` doing `action` appends.
pub(super) fn act(state: &GameState, seat: Seat, action: Action) -> Result<Vec<Event>, GameError> {
    const DRAW: &str = "draw offer";
    const TAKEBACK: &str = "takeback request";
    // The pending offer `seat` may answer.
    let pending = |offer: &Option<Offer>, what: &'static str| match offer {
        Some(offer) if offer.agreed[seat.index()] => {
            Err(GameError::AlreadyAgreed { seat: seat.0, what })
        }
        Some(offer) => Ok(offer.agreed.clone()),
        None => Err(GameError::NoPendingOffer { what }),
    };
    let draw = || Event::GameEnded {
        outcome: Some(Outcome::Draw),
        reason: EndReason::Agreement,
    };
    let take_back = |by: Seat| -> Result<Event, GameError> {
        let last = state.moves.last().ok_or(GameError::NothingToUndo)?;
        Ok(undo(last, Some(by)))
    };
    let mut events = Vec::new();
    match action {
        Action::Resign => events.extend(leave(state, seat, EndReason::Resignation)),
        Action::Abort => {
            if state.in_play().all(|s| state.moved[s.index()]) {
                return Err(GameError::AbortTooLate);
            }
            events.push(Event::GameEnded {
                outcome: None,
                reason: EndReason::Aborted,
            });
        }
        Action::OfferDraw => match &state.draw_offer {
            Some(offer) if !offer.agreed[seat.index()] => {
                return act(state, seat, Action::AcceptDraw);
            }
            Some(_) => {
                return Err(GameError::AlreadyAgreed {
                    seat: seat.0,
                    what: DRAW,
                });
            }
            None => {
                events.push(Event::DrawOffered { seat });
                if all_agree(state, &[], seat) {
                    events.push(draw());
                }
            }
        },
        Action::AcceptDraw => {
            let agreed = pending(&state.draw_offer, DRAW)?;
            events.push(Event::DrawAccepted { seat });
            if all_agree(state, &agreed, seat) {
                events.push(draw());
            }
        }
        Action::DeclineDraw => {
            pending(&state.draw_offer, DRAW)?;
            events.push(Event::DrawDeclined { seat });
        }
        Action::RequestTakeback => {
            if state.config.undo_policy() != UndoPolicy::Consent {
                return Err(GameError::TakebackNotAllowed);
            }
            match &state.takeback {
                // Another seat's request stands: asking too accepts it.
                Some(offer) if !offer.agreed[seat.index()] => {
                    return act(state, seat, Action::AcceptTakeback);
                }
                Some(_) => {
                    return Err(GameError::AlreadyAgreed {
                        seat: seat.0,
                        what: TAKEBACK,
                    });
                }
                None => {}
            }
            let undone = take_back(seat)?;
            events.push(Event::TakebackRequested { seat });
            if all_agree(state, &[], seat) {
                events.push(undone);
            }
        }
        Action::AcceptTakeback => {
            let agreed = pending(&state.takeback, TAKEBACK)?;
            events.push(Event::TakebackAccepted { seat });
            if all_agree(state, &agreed, seat) {
                let by = state.takeback.as_ref().map_or(seat, |offer| offer.by);
                events.push(take_back(by)?);
            }
        }
        Action::DeclineTakeback => {
            pending(&state.takeback, TAKEBACK)?;
            events.push(Event::TakebackDeclined { seat });
        }
        Action::ClaimDraw => {
            // Either seat: the one to move claims on the position it faces
            // (FIDE 9.2.1.2), the one that just moved on the position its
            // move made (9.2.1.1: the move written, then the claim).
            let reason = state
                .config
                .rules()
                .claimable_draw(&state.position)
                .ok_or(GameError::NoDrawClaim)?;
            events.push(Event::GameEnded {
                outcome: Some(Outcome::Draw),
                reason,
            });
        }
    }
    Ok(events)
}
