//! The game around the moves, in the pure core: clocks and timeouts driven
//! by clock readings passed in (no sleeps), resignation, abort, draw
//! offers, takebacks by consent and redo; and a property test that any mix
//! of them replays to the live state.

use proptest::prelude::*;

use plylog::game::{
    AUTOMATIC_ROUNDS, AbsenceAction, AbsencePolicy, Action, Command, Event, ExpiryPolicy, Fischer,
    GameConfig, GameError, GameState, GameStatus, MAX_TIME_MS, MIN_TIME_MS, Millis, SeatLimits,
    TimeControl, UndoPolicy, decide, evolve,
};
use plylog::rules::{ConnectFourRules, Coord, EndReason, MnkRules, Move, Outcome, RuleSet, Seat};

/// Creation time of every game here.
const T: Millis = 1_700_000_000_000;

fn table(rules: RuleSet, seats: usize, policy: UndoPolicy) -> GameConfig {
    let seats = (0..seats)
        .map(|i| crate::seat(&format!("p{i}"), &format!("S{i}")))
        .collect();
    GameConfig::new(rules, seats, SeatLimits::default())
        .unwrap()
        .with_undo_policy(policy)
}

fn timed(
    config: GameConfig,
    per_move_ms: Option<u64>,
    clock: Option<(u64, u64)>,
    on_expiry: ExpiryPolicy,
) -> GameConfig {
    config
        .with_time_control(
            TimeControl {
                per_move_ms,
                clock: clock.map(|(initial_ms, increment_ms)| Fischer {
                    initial_ms,
                    increment_ms,
                }),
                on_expiry,
                seed: 42,
            },
            MIN_TIME_MS,
        )
        .unwrap()
}

fn tic_tac_toe(seats: usize) -> GameConfig {
    let rules = if seats == 2 {
        MnkRules::TIC_TAC_TOE
    } else {
        MnkRules::new(5, 5, 4, u64::MAX).unwrap()
    };
    table(RuleSet::Mnk(rules), seats, UndoPolicy::LastMover)
}

fn place(seat: u8, row: u32, col: u32) -> Command {
    Command::Play {
        seat: Some(Seat(seat)),
        mv: Move::Place(Coord::new(row, col)),
    }
}

fn act(seat: u8, action: Action) -> Command {
    Command::Act {
        seat: Some(Seat(seat)),
        action,
    }
}

/// A game and its log, driven by commands each given at a clock reading.
struct Table {
    state: GameState,
    log: Vec<(Event, Millis)>,
}

impl Table {
    fn new(config: GameConfig) -> Self {
        Table {
            state: GameState::new(config.clone(), T),
            log: vec![(Event::GameCreated(config), T)],
        }
    }

    /// Decides `command` at `at` and applies what it appends.
    fn run(&mut self, command: &Command, at: Millis) -> Result<Vec<Event>, GameError> {
        let events = decide(&self.state, command, at)?;
        for event in &events {
            evolve(&mut self.state, event, at);
            self.log.push((event.clone(), at));
        }
        Ok(events)
    }

    fn ok(&mut self, command: &Command, at: Millis) -> Vec<Event> {
        self.run(command, at).unwrap()
    }

    /// The replay of the log equals the live state.
    fn check_replay(&self) {
        assert_eq!(GameState::replay(self.log.clone()).unwrap(), self.state);
    }
}

#[test]
fn a_fischer_clock_charges_the_mover_and_adds_the_increment() {
    let config = timed(
        tic_tac_toe(2),
        None,
        Some((60_000, 5_000)),
        ExpiryPolicy::Forfeit,
    );
    let mut game = Table::new(config);
    assert_eq!(game.state.deadline(), Some(T + 60_000));
    game.ok(&place(0, 0, 0), T + 10_000);
    assert_eq!(game.state.clocks().remaining_ms, vec![55_000, 60_000]);
    assert_eq!(game.state.clocks().turn_started, T + 10_000);
    assert_eq!(game.state.deadline(), Some(T + 70_000));
    // Offers do not stop the clock nor restart the turn.
    game.ok(&act(1, Action::OfferDraw), T + 20_000);
    assert_eq!(game.state.deadline(), Some(T + 70_000));
    game.ok(&place(1, 1, 1), T + 40_000);
    assert_eq!(game.state.clocks().remaining_ms, vec![55_000, 35_000]);
    game.check_replay();
}

#[test]
fn a_turn_ends_at_the_shorter_of_the_per_move_limit_and_the_clock() {
    let config = timed(
        tic_tac_toe(2),
        Some(30_000),
        Some((20_000, 0)),
        ExpiryPolicy::Forfeit,
    );
    let mut game = Table::new(config);
    assert_eq!(game.state.deadline(), Some(T + 20_000));
    let per_move = timed(tic_tac_toe(2), Some(30_000), None, ExpiryPolicy::Forfeit);
    let mut other = Table::new(per_move);
    other.ok(&place(0, 0, 0), T + 25_000);
    assert_eq!(
        other.state.deadline(),
        Some(T + 55_000),
        "a fresh 30 s per turn"
    );
    game.ok(&place(0, 0, 0), T + 5_000);
    assert_eq!(
        game.state.deadline(),
        Some(T + 25_000),
        "seat 1 still has 20 s"
    );
}

#[test]
fn the_timer_decides_nothing_before_the_deadline_and_a_forfeit_once_after() {
    let config = timed(tic_tac_toe(2), Some(10_000), None, ExpiryPolicy::Forfeit);
    let mut game = Table::new(config);
    assert_eq!(game.ok(&Command::Timeout, T + 9_999), vec![]);
    let events = game.ok(&Command::Timeout, T + 10_000);
    assert_eq!(
        events,
        vec![
            Event::TimeExpired { seat: Seat(0) },
            Event::GameEnded {
                outcome: Some(Outcome::Win {
                    seat: Seat(1),
                    line: Vec::new()
                }),
                reason: EndReason::Timeout,
            }
        ]
    );
    assert_eq!(game.state.status(), GameStatus::Won);
    assert_eq!(game.state.end_reason(), Some(EndReason::Timeout));
    assert_eq!(game.state.deadline(), None);
    // Fired again (another node, a late timer): nothing more.
    assert_eq!(game.ok(&Command::Timeout, T + 20_000), vec![]);
    // An undo does not take back a loss on time.
    assert_eq!(
        game.run(
            &Command::Undo {
                requested_by: Some(Seat(0))
            },
            T + 20_000
        ),
        Err(GameError::GameOver)
    );
    game.check_replay();
}

#[test]
fn a_move_after_the_deadline_is_refused_as_time_expired() {
    let config = timed(tic_tac_toe(2), Some(10_000), None, ExpiryPolicy::Forfeit);
    let mut game = Table::new(config);
    assert_eq!(
        game.run(&place(0, 0, 0), T + 10_000),
        Err(GameError::TimeExpired {
            seat: 0,
            deadline_ms: T + 10_000
        })
    );
    // Also another seat's request, and an undo or an action.
    assert!(matches!(
        game.run(&act(1, Action::OfferDraw), T + 10_001),
        Err(GameError::TimeExpired { seat: 0, .. })
    ));
    assert_eq!(game.state.sequence(), 1, "a refusal appends nothing");
    game.ok(&place(0, 0, 0), T + 9_999);
}

#[test]
fn with_more_than_two_seats_a_forfeit_puts_the_seat_out_and_play_goes_on() {
    let config = timed(tic_tac_toe(3), Some(1_000), None, ExpiryPolicy::Forfeit);
    let mut game = Table::new(config);
    game.ok(&place(0, 0, 0), T + 500);
    let events = game.ok(&Command::Timeout, T + 1_500);
    assert_eq!(
        events[1],
        Event::SeatOut {
            seat: Seat(1),
            reason: EndReason::Timeout
        }
    );
    assert_eq!(game.state.to_move(), Some(Seat(2)));
    assert!(game.state.is_out(Seat(1)));
    game.ok(&place(2, 1, 1), T + 2_000);
    assert_eq!(game.state.to_move(), Some(Seat(0)), "turns skip seat 1");
    assert_eq!(
        game.run(&act(1, Action::Resign), T + 2_100),
        Err(GameError::SeatOut { seat: 1 })
    );
    // Seat 0 resigns: seat 2 is the last in play and wins.
    let events = game.ok(&act(0, Action::Resign), T + 2_200);
    assert_eq!(
        events,
        vec![Event::GameEnded {
            outcome: Some(Outcome::Win {
                seat: Seat(2),
                line: Vec::new()
            }),
            reason: EndReason::Resignation,
        }]
    );
    game.check_replay();
}

#[test]
fn the_random_move_policy_plays_a_legal_move_chosen_by_the_seed() {
    let config = timed(
        table(
            RuleSet::ConnectFour(ConnectFourRules::STANDARD),
            2,
            UndoPolicy::AnySeat,
        ),
        Some(1_000),
        None,
        ExpiryPolicy::RandomMove,
    );
    let mut game = Table::new(config.clone());
    let mut again = Table::new(config);
    let mut columns = Vec::new();
    // As many as the server plays before a game nobody plays ends.
    for turn in 1..=Millis::from(AUTOMATIC_ROUNDS) * 2 {
        let at = T + turn * 1_000;
        let events = game.ok(&Command::Timeout, at);
        assert_eq!(
            events,
            again.ok(&Command::Timeout, at),
            "same seed, same move"
        );
        let [Event::TimeExpired { .. }, Event::MovePlayed { played, .. }] = events.as_slice()
        else {
            panic!("a timeout and a move: {events:?}")
        };
        let Move::Drop { column } = played.mv else {
            panic!("a drop")
        };
        columns.push(column);
        if game.state.status() != GameStatus::InProgress {
            break;
        }
    }
    columns.sort_unstable();
    columns.dedup();
    assert!(columns.len() > 2, "moves spread over columns: {columns:?}");
    game.check_replay();
}

#[test]
fn the_draw_policy_draws_on_time() {
    let config = timed(tic_tac_toe(2), None, Some((5_000, 0)), ExpiryPolicy::Draw);
    let mut game = Table::new(config);
    game.ok(&Command::Timeout, T + 5_000);
    assert_eq!(game.state.status(), GameStatus::Drawn);
    assert_eq!(game.state.end_reason(), Some(EndReason::Timeout));
}

#[test]
fn a_game_can_be_aborted_only_before_every_seat_has_moved() {
    let mut game = Table::new(tic_tac_toe(2));
    game.ok(&place(0, 0, 0), T);
    let mut aborted = Table::new(tic_tac_toe(2));
    aborted.ok(&place(0, 0, 0), T);
    aborted.ok(&act(0, Action::Abort), T);
    assert_eq!(aborted.state.status(), GameStatus::NoResult);
    assert_eq!(aborted.state.outcome(), None);
    assert_eq!(aborted.state.end_reason(), Some(EndReason::Aborted));
    game.ok(&place(1, 1, 1), T);
    // Undoing seat 1's move does not make the game abortable again.
    game.ok(
        &Command::Undo {
            requested_by: Some(Seat(1)),
        },
        T,
    );
    assert_eq!(
        game.run(&act(0, Action::Abort), T),
        Err(GameError::AbortTooLate)
    );
    aborted.check_replay();
}

#[test]
fn a_draw_needs_every_other_seat_in_play_to_accept() {
    let mut game = Table::new(tic_tac_toe(3));
    assert_eq!(
        game.run(&act(1, Action::AcceptDraw), T),
        Err(GameError::NoPendingOffer { what: "draw offer" })
    );
    game.ok(&act(0, Action::OfferDraw), T);
    assert!(matches!(
        game.run(&act(0, Action::AcceptDraw), T),
        Err(GameError::AlreadyAgreed { seat: 0, .. })
    ));
    assert_eq!(
        game.ok(&act(1, Action::AcceptDraw), T),
        vec![Event::DrawAccepted { seat: Seat(1) }]
    );
    // Offering while another seat's offer stands accepts it.
    let events = game.ok(&act(2, Action::OfferDraw), T);
    assert_eq!(
        events,
        vec![
            Event::DrawAccepted { seat: Seat(2) },
            Event::GameEnded {
                outcome: Some(Outcome::Draw),
                reason: EndReason::Agreement
            }
        ]
    );
    assert_eq!(game.state.status(), GameStatus::Drawn);
    game.check_replay();
}

#[test]
fn a_draw_offer_lapses_when_declined_or_when_the_offering_seat_moves_again() {
    let mut game = Table::new(tic_tac_toe(2));
    game.ok(&act(0, Action::OfferDraw), T);
    game.ok(&act(1, Action::DeclineDraw), T);
    assert!(game.state.draw_offer().is_none());
    game.ok(&act(0, Action::OfferDraw), T);
    game.ok(&place(0, 0, 0), T);
    assert!(
        game.state.draw_offer().is_some(),
        "the offer stands over its own move"
    );
    game.ok(&place(1, 1, 1), T);
    assert!(game.state.draw_offer().is_some(), "and over the opponent's");
    game.ok(&place(0, 2, 2), T);
    assert!(
        game.state.draw_offer().is_none(),
        "lapsed: seat 0 moved again"
    );
    game.check_replay();
}

#[test]
fn under_the_consent_policy_a_move_is_taken_back_once_the_others_accept() {
    let rules = RuleSet::Mnk(MnkRules::TIC_TAC_TOE);
    let mut game = Table::new(table(rules.clone(), 2, UndoPolicy::Consent));
    game.ok(&place(0, 0, 0), T);
    assert_eq!(
        game.run(
            &Command::Undo {
                requested_by: Some(Seat(0))
            },
            T
        ),
        Err(GameError::ConsentRequired)
    );
    game.ok(&act(0, Action::RequestTakeback), T);
    game.ok(&act(1, Action::DeclineTakeback), T);
    assert_eq!(game.state.moves().len(), 1);
    game.ok(&act(0, Action::RequestTakeback), T);
    let events = game.ok(&act(1, Action::AcceptTakeback), T);
    assert!(matches!(
        events.as_slice(),
        [
            Event::TakebackAccepted { .. },
            Event::MoveUndone {
                seat: Seat(0),
                requested_by: Some(Seat(0)),
                ..
            }
        ]
    ));
    assert!(game.state.moves().is_empty());
    // A move lets a pending request lapse.
    game.ok(&place(0, 0, 0), T);
    game.ok(&act(0, Action::RequestTakeback), T);
    game.ok(&place(1, 1, 1), T);
    assert_eq!(
        game.run(&act(0, Action::AcceptTakeback), T),
        Err(GameError::NoPendingOffer {
            what: "takeback request"
        })
    );
    let mut plain = Table::new(table(rules, 2, UndoPolicy::AnySeat));
    plain.ok(&place(0, 0, 0), T);
    assert_eq!(
        plain.run(&act(0, Action::RequestTakeback), T),
        Err(GameError::TakebackNotAllowed)
    );
    game.check_replay();
}

#[test]
fn redo_plays_the_undone_move_again_until_a_new_move_clears_it() {
    let mut game = Table::new(tic_tac_toe(2));
    game.ok(&place(0, 0, 0), T);
    game.ok(&place(1, 1, 1), T);
    let before = game.state.position().clone();
    game.ok(
        &Command::Undo {
            requested_by: Some(Seat(1)),
        },
        T,
    );
    game.ok(
        &Command::Undo {
            requested_by: Some(Seat(0)),
        },
        T,
    );
    assert_eq!(game.state.undone().len(), 2);
    assert_eq!(
        game.run(
            &Command::Redo {
                requested_by: Some(Seat(1))
            },
            T
        ),
        Err(GameError::NotRedoer {
            mover: 0,
            requested_by: Some(1)
        })
    );
    let events = game.ok(
        &Command::Redo {
            requested_by: Some(Seat(0)),
        },
        T,
    );
    assert!(matches!(
        events.as_slice(),
        [Event::MoveRedone {
            seat: Seat(0),
            ply: 1,
            ..
        }]
    ));
    game.ok(
        &Command::Redo {
            requested_by: Some(Seat(1)),
        },
        T,
    );
    assert_eq!(game.state.position(), &before);
    assert_eq!(
        game.run(
            &Command::Redo {
                requested_by: Some(Seat(0))
            },
            T
        ),
        Err(GameError::NothingToRedo)
    );
    game.ok(
        &Command::Undo {
            requested_by: Some(Seat(1)),
        },
        T,
    );
    game.ok(&place(1, 2, 2), T);
    assert_eq!(
        game.run(
            &Command::Redo {
                requested_by: Some(Seat(1))
            },
            T
        ),
        Err(GameError::NothingToRedo),
        "a new move clears the redo stack"
    );
    let mut disabled = Table::new(table(
        RuleSet::Mnk(MnkRules::TIC_TAC_TOE),
        2,
        UndoPolicy::Disabled,
    ));
    assert_eq!(
        disabled.run(
            &Command::Redo {
                requested_by: Some(Seat(0))
            },
            T
        ),
        Err(GameError::UndoDisabled)
    );
    game.check_replay();
}

#[test]
fn a_rematch_starts_a_fresh_round_at_once_or_when_the_round_ends() {
    let config = timed(
        tic_tac_toe(2),
        None,
        Some((60_000, 0)),
        ExpiryPolicy::Forfeit,
    );
    let mut game = Table::new(config);
    game.ok(&place(0, 0, 0), T + 1_000);
    // Asked for in play: recorded, and the round goes on.
    let rematch = |seat, rotate| Command::Rematch {
        seat: Some(Seat(seat)),
        rotate,
    };
    assert_eq!(
        game.ok(&rematch(1, true), T + 2_000),
        vec![Event::RematchRequested {
            seat: Seat(1),
            rotate: true
        }]
    );
    assert_eq!(
        game.run(&rematch(0, false), T + 2_000),
        Err(GameError::RematchPending)
    );
    // The resignation that ends the round starts the next one after it.
    let events = game.ok(&act(1, Action::Resign), T + 3_000);
    assert_eq!(
        events[1],
        Event::RoundStarted {
            round: 1,
            first: Seat(1)
        }
    );
    assert_eq!(game.state.round(), 1);
    assert_eq!(
        game.state.to_move(),
        Some(Seat(1)),
        "rotated: seat 1 moves first"
    );
    assert!(game.state.moves().is_empty());
    assert_eq!(game.state.status(), GameStatus::InProgress);
    assert_eq!(game.state.clocks().remaining_ms, vec![60_000, 60_000]);
    assert_eq!(game.state.deadline(), Some(T + 63_000));
    assert_eq!(
        game.run(
            &Command::Undo {
                requested_by: Some(Seat(0))
            },
            T + 3_000
        ),
        Err(GameError::NothingToUndo),
        "nothing of an earlier round can be undone"
    );
    game.ok(&place(1, 0, 0), T + 4_000);
    game.ok(&act(0, Action::Abort), T + 5_000);
    // After the round: at once, the same first mover without rotation.
    let events = game.ok(&rematch(0, false), T + 6_000);
    assert_eq!(
        events,
        vec![Event::RoundStarted {
            round: 2,
            first: Seat(1)
        }]
    );
    game.check_replay();
}

#[test]
fn a_seat_reported_absent_on_its_turn_meets_the_absence_policy() {
    let away = |action| {
        tic_tac_toe(2)
            .with_absence(
                AbsencePolicy {
                    grace_ms: 10_000,
                    action,
                },
                MIN_TIME_MS,
            )
            .unwrap()
    };
    let absent = |seat| Command::GraceExpired { seat: Seat(seat) };
    let mut game = Table::new(away(AbsenceAction::Expire));
    assert_eq!(game.ok(&absent(1), T), vec![], "not seat 1's turn: nothing");
    let events = game.ok(&absent(0), T + 10_000);
    assert_eq!(
        events,
        vec![
            Event::SeatAbsent { seat: Seat(0) },
            Event::GameEnded {
                outcome: Some(Outcome::Win {
                    seat: Seat(1),
                    line: Vec::new()
                }),
                reason: EndReason::Abandoned,
            }
        ]
    );
    assert_eq!(game.ok(&absent(0), T + 20_000), vec![], "the game is over");
    game.check_replay();
    let mut offered = Table::new(away(AbsenceAction::OfferDraw));
    offered.ok(&absent(0), T + 10_000);
    assert_eq!(offered.state.draw_offer().map(|o| o.by), Some(Seat(0)));
    offered.ok(&act(1, Action::AcceptDraw), T + 11_000);
    assert_eq!(offered.state.end_reason(), Some(EndReason::Agreement));
    let mut untracked = Table::new(tic_tac_toe(2));
    assert_eq!(
        untracked.ok(&absent(0), T + 10_000),
        vec![],
        "no policy: nothing"
    );
    offered.check_replay();
}

#[test]
fn undo_and_redo_leave_the_clocks_as_they_were_but_for_the_time_spent() {
    let config = timed(
        tic_tac_toe(2),
        None,
        Some((10_000, 5_000)),
        ExpiryPolicy::Forfeit,
    );
    let mut game = Table::new(config);
    game.ok(&place(0, 0, 0), T + 1_000);
    let after_move = game.state.clocks().remaining_ms.clone();
    assert_eq!(after_move, vec![14_000, 10_000]);
    for _ in 0..6 {
        game.ok(
            &Command::Undo {
                requested_by: Some(Seat(0)),
            },
            T + 1_000,
        );
        game.ok(
            &Command::Redo {
                requested_by: Some(Seat(0)),
            },
            T + 1_000,
        );
    }
    assert_eq!(
        game.state.clocks().remaining_ms,
        after_move,
        "no increment earned twice"
    );
    game.check_replay();
}

#[test]
fn a_seat_leaving_completes_an_agreement_it_alone_had_not_joined() {
    let mut game = Table::new(tic_tac_toe(3));
    game.ok(&act(0, Action::OfferDraw), T);
    game.ok(&act(1, Action::AcceptDraw), T);
    assert_eq!(
        game.ok(&act(2, Action::Resign), T),
        vec![
            Event::SeatOut {
                seat: Seat(2),
                reason: EndReason::Resignation
            },
            Event::GameEnded {
                outcome: Some(Outcome::Draw),
                reason: EndReason::Agreement
            }
        ]
    );
    game.check_replay();
    let rules = RuleSet::Mnk(MnkRules::new(5, 5, 4, u64::MAX).unwrap());
    let mut consent = Table::new(table(rules, 3, UndoPolicy::Consent));
    consent.ok(&place(0, 0, 0), T);
    consent.ok(&act(0, Action::RequestTakeback), T);
    // Asking while another seat's request stands accepts it.
    assert_eq!(
        consent.ok(&act(1, Action::RequestTakeback), T),
        vec![Event::TakebackAccepted { seat: Seat(1) }]
    );
    let events = consent.ok(&act(2, Action::Resign), T);
    assert!(
        matches!(
            events.as_slice(),
            [
                Event::SeatOut { .. },
                Event::MoveUndone {
                    seat: Seat(0),
                    requested_by: Some(Seat(0)),
                    ..
                }
            ]
        ),
        "{events:?}"
    );
    // A seat out of play undoes nothing.
    assert_eq!(
        consent.run(
            &Command::Undo {
                requested_by: Some(Seat(2))
            },
            T
        ),
        Err(GameError::SeatOut { seat: 2 })
    );
    consent.check_replay();
}

#[test]
fn two_seats_asking_for_a_rematch_at_the_end_start_one_round() {
    let mut game = Table::new(tic_tac_toe(2));
    game.ok(&act(0, Action::Resign), T);
    let rematch = |seat| Command::Rematch {
        seat: Some(Seat(seat)),
        rotate: false,
    };
    assert_eq!(game.ok(&rematch(0), T).len(), 1);
    assert_eq!(
        game.ok(&rematch(1), T),
        vec![],
        "the same request: nothing more"
    );
    assert_eq!(game.state.rematch(), None);
    game.check_replay();
}

#[test]
fn an_absent_seat_offering_a_draw_accepts_one_that_stands() {
    let config = tic_tac_toe(2)
        .with_absence(
            AbsencePolicy {
                grace_ms: 1_000,
                action: AbsenceAction::OfferDraw,
            },
            MIN_TIME_MS,
        )
        .unwrap();
    let mut game = Table::new(config);
    game.ok(&act(1, Action::OfferDraw), T);
    let events = game.ok(&Command::GraceExpired { seat: Seat(0) }, T + 1_000);
    assert_eq!(
        events,
        vec![
            Event::SeatAbsent { seat: Seat(0) },
            Event::DrawAccepted { seat: Seat(0) },
            Event::GameEnded {
                outcome: Some(Outcome::Draw),
                reason: EndReason::Agreement
            }
        ]
    );
    game.check_replay();
}

/// A 19x19 five-in-a-row game, 1 s a move, random moves on expiry, the
/// seats absent after `grace_ms` (forfeit on expiry otherwise), seat 1 a
/// bot when `bot` says so.
fn self_playing(grace_ms: Option<u64>, bot: bool) -> GameConfig {
    let seats = (0..2)
        .map(|i| plylog::game::SeatInfo {
            bot: (bot && i == 1).then_some(plylog::engine::Bot {
                engine: plylog::engine::EngineKind::Random,
                strength: 1,
                seed: 3,
            }),
            ..crate::seat(&format!("p{i}"), &format!("S{i}"))
        })
        .collect();
    let rules = RuleSet::Mnk(MnkRules::new(19, 19, 5, u64::MAX).unwrap());
    let config = GameConfig::new(rules, seats, SeatLimits::default()).unwrap();
    let config = timed(config, Some(MIN_TIME_MS), None, ExpiryPolicy::RandomMove);
    match grace_ms {
        None => config,
        Some(grace_ms) => config
            .with_absence(
                AbsencePolicy {
                    grace_ms,
                    action: AbsenceAction::Expire,
                },
                MIN_TIME_MS,
            )
            .unwrap(),
    }
}

/// Fires the timer at each deadline until a timeout appends something
/// other than a random move; how many random moves it played, and the
/// last timeout's events.
fn expire_until_not_a_move(game: &mut Table) -> (u32, Vec<Event>) {
    let mut moves = 0;
    loop {
        let deadline = game.state.deadline().expect("a game on time");
        let events = game.ok(&Command::Timeout, deadline);
        match events.as_slice() {
            [Event::TimeExpired { .. }, Event::MovePlayed { .. }] => moves += 1,
            _ => return (moves, events),
        }
    }
}

fn abandoned() -> Event {
    Event::GameEnded {
        outcome: None,
        reason: EndReason::Abandoned,
    }
}

#[test]
fn a_game_nobody_plays_ends_after_three_rounds_of_random_moves_and_a_move_starts_the_count_again() {
    let mut game = Table::new(self_playing(None, false));
    // Five random moves, then seat 1 plays one itself: the count restarts.
    for _ in 0..5 {
        let deadline = game.state.deadline().unwrap();
        game.ok(&Command::Timeout, deadline);
    }
    assert_eq!(game.state.to_move(), Some(Seat(1)));
    let now = game.state.clocks().turn_started + 500;
    let mv = first_legal_move(&game, Seat(1));
    game.ok(
        &Command::Play {
            seat: Some(Seat(1)),
            mv,
        },
        now,
    );
    let (moves, events) = expire_until_not_a_move(&mut game);
    assert_eq!(moves, AUTOMATIC_ROUNDS * 2, "three rounds of two seats");
    assert_eq!(
        events,
        vec![Event::TimeExpired { seat: Seat(0) }, abandoned()]
    );
    assert_eq!(game.state.status(), GameStatus::NoResult);
    assert_eq!(game.state.end_reason(), Some(EndReason::Abandoned));
    assert_eq!(game.state.deadline(), None, "nothing more to time");
    // The count is part of the state: the log replays to it, also from
    // half way (where it is mid-count).
    game.check_replay();
    let half = GameState::replay(game.log[..game.log.len() / 2].to_vec()).unwrap();
    let mut resumed = half.clone();
    for (event, at) in &game.log[game.log.len() / 2..] {
        evolve(&mut resumed, event, *at);
    }
    assert_eq!(resumed, game.state);
    // An offer answered by a seat is an action too: it restarts the count.
    let mut offered = Table::new(self_playing(None, false));
    for _ in 0..5 {
        let deadline = offered.state.deadline().unwrap();
        offered.ok(&Command::Timeout, deadline);
    }
    let now = offered.state.clocks().turn_started;
    offered.ok(&act(0, Action::OfferDraw), now);
    offered.ok(&act(1, Action::DeclineDraw), now);
    let (moves, _) = expire_until_not_a_move(&mut offered);
    assert_eq!(moves, AUTOMATIC_ROUNDS * 2);
    offered.check_replay();
}

#[test]
fn random_moves_for_an_absent_seat_count_too_and_bot_moves_do_not_hide_them() {
    // Seat 1 is a bot: only seat 0's random moves count, three of them.
    let mut game = Table::new(self_playing(None, true));
    let mut random = 0;
    let events = loop {
        let deadline = game.state.deadline().unwrap();
        let events = game.ok(&Command::Timeout, deadline);
        if !matches!(
            events.as_slice(),
            [Event::TimeExpired { .. }, Event::MovePlayed { .. }]
        ) {
            break events;
        }
        random += 1;
        // The bot answers at once with a move of its own.
        let bot = Seat(1);
        let mv = first_legal_move(&game, bot);
        let sequence = game.state.sequence();
        let now = game.state.clocks().turn_started;
        game.ok(
            &Command::BotPlay {
                seat: bot,
                mv,
                sequence,
                proven: false,
            },
            now,
        );
    };
    assert_eq!(random, AUTOMATIC_ROUNDS);
    assert_eq!(
        events,
        vec![Event::TimeExpired { seat: Seat(0) }, abandoned()]
    );
    game.check_replay();

    // A seat away past its grace period gets random moves too (the
    // absence policy applies the expiry policy): they count as well.
    let mut away = Table::new(self_playing(Some(MIN_TIME_MS), false));
    let mut moves = 0;
    let last = loop {
        let seat = game_to_move(&away);
        let now = away.state.clocks().turn_started + 500;
        let events = away.ok(&Command::GraceExpired { seat }, now);
        match events.as_slice() {
            [Event::SeatAbsent { .. }, Event::MovePlayed { .. }] => moves += 1,
            _ => break events,
        }
    };
    assert_eq!(moves, AUTOMATIC_ROUNDS * 2);
    assert_eq!(last, vec![Event::SeatAbsent { seat: Seat(0) }, abandoned()]);
    away.check_replay();
}

fn game_to_move(game: &Table) -> Seat {
    game.state.to_move().expect("a game in play")
}

fn first_legal_move(game: &Table, seat: Seat) -> Move {
    let rules = game.state.config().rules();
    rules
        .legal_moves(game.state.position(), seat)
        .next()
        .unwrap()
}

#[test]
fn a_fischer_clock_never_holds_more_than_thirty_days() {
    // The attack: a 30-day increment gave 6,030 days after 400 moves.
    let config = timed(
        table(
            RuleSet::Mnk(MnkRules::new(21, 21, 21, u64::MAX).unwrap()),
            2,
            UndoPolicy::AnySeat,
        ),
        None,
        Some((MAX_TIME_MS, MAX_TIME_MS)),
        ExpiryPolicy::Forfeit,
    );
    let mut game = Table::new(config);
    let mut now = T;
    for ply in 0..400u32 {
        now += 1_000;
        let seat = (ply % 2) as u8;
        game.ok(&place(seat, ply / 21, ply % 21), now);
        for left in &game.state.clocks().remaining_ms {
            assert!(
                *left <= MAX_TIME_MS as Millis,
                "{left} ms after {ply} plies"
            );
        }
        assert!(game.state.deadline().unwrap() <= now + MAX_TIME_MS as Millis);
    }
    assert_eq!(
        game.state.clocks().remaining_ms,
        vec![MAX_TIME_MS as Millis; 2],
        "both clocks full, not 6,030 days"
    );
    game.check_replay();
}

#[test]
fn a_new_game_gives_every_time_limit_at_least_a_second_and_a_stored_one_keeps_its_own() {
    let limit = |per_move_ms, initial_ms: Option<u64>| TimeControl {
        per_move_ms,
        clock: initial_ms.map(|initial_ms| Fischer {
            initial_ms,
            increment_ms: 0,
        }),
        on_expiry: ExpiryPolicy::RandomMove,
        seed: 1,
    };
    let field = |tc: TimeControl, shortest| {
        tic_tac_toe(2)
            .with_time_control(tc, shortest)
            .map(|_| ())
            .map_err(|e| e.field)
    };
    assert_eq!(
        field(limit(Some(1), None), MIN_TIME_MS),
        Err("time_control.per_move".into())
    );
    assert_eq!(
        field(limit(Some(999), None), MIN_TIME_MS),
        Err("time_control.per_move".into())
    );
    assert_eq!(
        field(limit(None, Some(999)), MIN_TIME_MS),
        Err("time_control.initial".into())
    );
    assert_eq!(field(limit(Some(1_000), Some(1_000)), MIN_TIME_MS), Ok(()));
    // A game created before the limit is read with its 1 ms.
    assert_eq!(field(limit(Some(1), Some(1)), 1), Ok(()));
    let grace = |grace_ms| {
        tic_tac_toe(2)
            .with_absence(
                AbsencePolicy {
                    grace_ms,
                    action: AbsenceAction::Expire,
                },
                MIN_TIME_MS,
            )
            .map(|_| ())
            .map_err(|e| e.field)
    };
    assert_eq!(grace(999), Err("absence.grace".into()));
    assert_eq!(grace(1_000), Ok(()));
}

/// Any command of the game around the moves, for the property test.
fn any_command() -> impl Strategy<Value = (u8, u8, u16)> {
    (0u8..13, 0u8..3, any::<u16>())
}

proptest! {
    /// For random sequences of moves, undos, redos, takebacks, offers,
    /// resignations, aborts, rematches and timeouts at random clock
    /// readings, the live
    /// state equals the replay of the log, every listed legal move is
    /// accepted, and a refused command changes nothing.
    #[test]
    fn any_mix_replays_to_the_live_state(
        script in proptest::collection::vec(any_command(), 1..60),
        seats in 2usize..4,
        consent in any::<bool>(),
    ) {
        let policy = if consent { UndoPolicy::Consent } else { UndoPolicy::AnySeat };
        let rules = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
        let config = timed(table(rules, seats, policy), Some(10_000), Some((30_000, 1_000)), ExpiryPolicy::RandomMove)
            .with_absence(AbsencePolicy { grace_ms: 5_000, action: AbsenceAction::Expire }, MIN_TIME_MS)
            .unwrap();
        let mut game = Table::new(config);
        let mut now = T;
        for (kind, seat, pick) in script {
            now += Millis::from(pick % 4_000);
            let seat = Seat(seat % seats as u8);
            if let Some(to_move) = game.state.to_move()
                && game.state.deadline().is_some_and(|d| now < d)
            {
                let rules = game.state.config().rules();
                let legal: Vec<Move> = rules.legal_moves(game.state.position(), to_move).collect();
                for mv in &legal {
                    let play = Command::Play { seat: Some(to_move), mv: *mv };
                    let decided = decide(&game.state, &play, now);
                    prop_assert!(decided.is_ok(), "listed move {:?} refused: {:?}", mv, decided);
                }
            }
            let command = match kind {
                0..=3 => Command::Play { seat: Some(game.state.to_move().unwrap_or(seat)), mv: Move::Drop { column: u32::from(pick % 7) } },
                4 => Command::Undo { requested_by: Some(seat) },
                11 => Command::Rematch { seat: Some(seat), rotate: pick % 2 == 0 },
                5 => Command::Redo { requested_by: Some(seat) },
                6 if pick % 3 == 0 => Command::GraceExpired { seat },
                6 => Command::Timeout,
                7..=10 | 12 => {
                    const ACTIONS: [Action; 8] = [
                        Action::Resign, Action::Abort, Action::OfferDraw, Action::AcceptDraw,
                        Action::DeclineDraw, Action::RequestTakeback, Action::AcceptTakeback,
                        Action::DeclineTakeback,
                    ];
                    Command::Act { seat: Some(seat), action: ACTIONS[usize::from(pick) % ACTIONS.len()] }
                }
                _ => unreachable!("kinds are 0 to 12"),
            };
            let before = game.state.clone();
            if game.run(&command, now).is_err() {
                prop_assert_eq!(&game.state, &before, "a refusal changes nothing");
            }
            prop_assert_eq!(game.state.sequence(), game.log.len() as u64);
        }
        prop_assert_eq!(GameState::replay(game.log.clone()).unwrap(), game.state);
    }
}
