//! What is read back from storage: [`GameState::replay`] folds a stored log,
//! checking each event fits the state it lands on before [`evolve`] applies
//! it, and [`GameState::check_invariants`] checks a snapshot.

use super::{GameState, Millis, Offer, ReplayError, evolve};
use crate::game::Event;
use crate::rules::{Coord, Outcome, Played, Position, Seat};

impl GameState {
    /// Rebuilds a game from its whole log: each event in sequence order from
    /// 1, with the time it was recorded at. Each event is checked to be
    /// well-formed for the state it lands on before [`evolve`] applies it.
    ///
    /// # Errors
    /// [`ReplayError`] when the log is empty, does not start with
    /// GameCreated, or holds an event that does not fit (a second
    /// GameCreated, a move by the wrong seat or onto an occupied or off-board
    /// cell, an undo with nothing to undo, anything but a token re-issue
    /// after the game ended).
    pub fn replay(events: impl IntoIterator<Item = (Event, Millis)>) -> Result<Self, ReplayError> {
        let mut events = events.into_iter();
        let Some((Event::GameCreated(config), created_at)) = events.next() else {
            return Err(ReplayError {
                sequence: 1,
                why: "the log does not start with GameCreated".into(),
            });
        };
        let mut state = GameState::new(config, created_at);
        for (event, at) in events {
            state.apply_stored(&event, at)?;
        }
        Ok(state)
    }

    /// Applies one stored event, recorded at `at`, after checking it fits
    /// this state: one step of [`GameState::replay`].
    ///
    /// # Errors
    /// [`ReplayError`] as for [`GameState::replay`]; the state is unchanged.
    pub fn apply_stored(&mut self, event: &Event, at: Millis) -> Result<(), ReplayError> {
        self.check(event).map_err(|why| ReplayError {
            sequence: self.sequence + 1,
            why,
        })?;
        evolve(self, event, at);
        Ok(())
    }

    fn check(&self, event: &Event) -> Result<(), String> {
        let agreeing = |offer: &Option<Offer>, seat: Seat| match offer {
            Some(offer) if !offer.agreed.get(seat.index()).copied().unwrap_or(true) => {
                self.check_in_play(seat)
            }
            _ => Err(format!("{seat} answers no pending offer")),
        };
        match event {
            Event::GameCreated(_) => Err("a second GameCreated".into()),
            Event::MovePlayed {
                seat, ply, played, ..
            }
            | Event::MoveRedone { seat, ply, played } => {
                self.check_turn(*seat)?;
                let rules = self.config.rules();
                rules.check_move(played.mv).map_err(|e| e.to_string())?;
                if matches!(event, Event::MoveRedone { .. })
                    && self.redo.last().is_none_or(|m| m.mv != played.mv)
                {
                    return Err("a redo of a move that was not undone last".into());
                }
                let expected_ply = self.moves.len() as u32 + 1;
                if *ply != expected_ply {
                    return Err(format!("ply {ply}, but the move is ply {expected_ply}"));
                }
                rules.check_played(&self.position, *seat, played)?;
                self.check_effects(*seat, played)
            }
            Event::TurnPassed { seat } | Event::TimeExpired { seat } => self.check_turn(*seat),
            Event::SeatAbsent { seat } => {
                self.check_turn(*seat)?;
                if self.absence_logged {
                    return Err(format!("{seat} reported absent twice in one turn"));
                }
                Ok(())
            }
            Event::SeatTokenReissued { seat } => {
                self.seat(*seat).map(|_| ()).map_err(|e| e.to_string())
            }
            Event::MoveUndone {
                undone_sequence,
                placement,
                ..
            } => match self.moves.last() {
                // Logs written before races had no cells record a roll's
                // square as its placement: the sequence names the move.
                Some(last)
                    if last.sequence == *undone_sequence
                        && (last.placement.is_none() || last.placement == *placement) =>
                {
                    Ok(())
                }
                _ => Err(format!(
                    "undo of sequence {undone_sequence}, which is not the last move"
                )),
            },
            Event::SeatOut { seat, .. } => {
                self.check_in_play(*seat)?;
                if self.in_play().count() <= 2 {
                    return Err(format!("{seat} left with fewer than three seats in play"));
                }
                Ok(())
            }
            Event::GameEnded { .. } => self.check_in_progress(),
            Event::DrawOffered { seat } | Event::TakebackRequested { seat } => {
                self.check_in_play(*seat)
            }
            Event::DrawAccepted { seat } | Event::DrawDeclined { seat } => {
                agreeing(&self.draw_offer, *seat)
            }
            Event::TakebackAccepted { seat } | Event::TakebackDeclined { seat } => {
                agreeing(&self.takeback, *seat)
            }
            // Any seat at the table may ask, also one out of play.
            Event::RematchRequested { seat, .. } => {
                self.check_in_progress()?;
                self.seat(*seat).map(|_| ()).map_err(|e| e.to_string())
            }
            Event::RoundStarted { round, first } => {
                self.seat(*first).map_err(|e| e.to_string())?;
                if self.ended.is_none() {
                    return Err("a round started before the last one ended".into());
                }
                if *round != self.round + 1 {
                    return Err(format!("round {round} after round {}", self.round));
                }
                Ok(())
            }
        }
    }

    /// Checks that a recorded move's effects are the ones the rules give
    /// it on this position: where its piece lands, the discs it flips (in
    /// any order) and the outcome. A roll's dice are not drawn again (its
    /// rules check the record, see `Game::check_played`).
    fn check_effects(&self, seat: Seat, played: &Played) -> Result<(), String> {
        if played.roll.is_some() {
            return Ok(());
        }
        let fresh = self
            .config
            .rules()
            .play(&self.position, seat, played.mv)
            .map_err(|e| e.to_string())?;
        if fresh.placement != played.placement {
            return Err(format!(
                "{:?} recorded at {:?}, but it lands at {:?}",
                played.mv, played.placement, fresh.placement
            ));
        }
        let sorted = |flips: &[Coord]| {
            let mut flips = flips.to_vec();
            flips.sort_unstable();
            flips
        };
        if sorted(&fresh.flips) != sorted(&played.flips) {
            return Err(format!("{:?} recorded with other flips", played.mv));
        }
        if fresh.outcome != played.outcome {
            return Err(format!(
                "{:?} recorded with outcome {:?}, but it gives {:?}",
                played.mv, played.outcome, fresh.outcome
            ));
        }
        Ok(())
    }

    /// Checks what a state read back from storage (a snapshot) must hold,
    /// so that using it cannot panic: every seat it names is one of the
    /// game's, its board is whole (see [`crate::rules::Board::check`]) and every move on
    /// it or undone lands on it, and the per-seat lists have one entry per
    /// seat. It does not prove the state is the one its log replays to:
    /// the snapshot's checksum and chain value vouch for that.
    ///
    /// # Errors
    /// What does not hold, in words.
    pub fn check_invariants(&self) -> Result<(), String> {
        let seats = self.config.seats().len();
        let seat = |seat: Seat, what: &str| {
            if seat.index() < seats {
                Ok(())
            } else {
                Err(format!("{what} is seat {} of {seats}", seat.0))
            }
        };
        seat(self.to_move, "the seat to move")?;
        seat(self.first, "the first seat")?;
        let tokens = self.position.squares().len();
        for (list, len) in [
            ("out", self.out.len()),
            ("moved", self.moved.len()),
            ("the race", if tokens == 0 { seats } else { tokens }),
        ] {
            if len != seats {
                return Err(format!("{list} lists {len} seats of {seats}"));
            }
        }
        if !self.clocks.remaining_ms.is_empty() && self.clocks.remaining_ms.len() != seats {
            return Err(format!(
                "{} clocks for {seats} seats",
                self.clocks.remaining_ms.len()
            ));
        }
        for offer in [&self.draw_offer, &self.takeback].into_iter().flatten() {
            seat(offer.by, "an offer's seat")?;
            if offer.agreed.len() != seats {
                return Err(format!("an offer lists {} seats", offer.agreed.len()));
            }
        }
        if let Some((asker, _)) = self.rematch {
            seat(asker, "the rematch's seat")?;
        }
        if let Some(Outcome::Win { seat: winner, .. }) = &self.outcome {
            seat(*winner, "the winner")?;
        }
        let board = self.position.board();
        if let Some(board) = board {
            board.check(seats)?;
        }
        // A chess position takes its moves back itself: one per move.
        if let Position::Chess(chess) = &self.position
            && chess.plies() != self.moves.len()
        {
            return Err(format!(
                "a chess position of {} moves under {} moves",
                chess.plies(),
                self.moves.len()
            ));
        }
        for played in self.moves.iter().chain(&self.redo) {
            seat(played.seat, "a move's seat")?;
            if let (Some(board), Some(at)) = (board, played.placement)
                && !board.contains(at.row.into(), at.col.into())
            {
                return Err(format!("a move at {at}, off the board"));
            }
            if played.sequence > self.sequence {
                return Err(format!(
                    "a move at sequence {} after {}",
                    played.sequence, self.sequence
                ));
            }
        }
        Ok(())
    }

    fn check_in_progress(&self) -> Result<(), String> {
        match self.ended {
            Some(_) => Err("an event after the game ended".into()),
            None => Ok(()),
        }
    }

    fn check_in_play(&self, seat: Seat) -> Result<(), String> {
        self.check_in_progress()?;
        self.seat(seat).map_err(|e| e.to_string())?;
        if self.is_out(seat) {
            return Err(format!("{seat} is out of play"));
        }
        Ok(())
    }

    /// Whether `seat` may act now: the game is on and it is `seat`'s turn.
    fn check_turn(&self, seat: Seat) -> Result<(), String> {
        if self.ended.is_some() {
            return Err("a move after the game ended".into());
        }
        if seat != self.to_move {
            return Err(format!("{seat} acted but {} was to move", self.to_move));
        }
        Ok(())
    }
}
