//! The game aggregate ([`plylog::game`]) over every game: given events /
//! when command / then events, and property tests. They live here, not
//! beside the aggregate, because they name the games the aggregate must not.

use crate::{T0, untimed};
use proptest::prelude::*;

use plylog::game::{
    Command, Event, GameConfig, GameError, GameState, GameStatus, SeatLimits, UndoPolicy, decide,
    evolve,
};
use plylog::rules::{
    ConnectFourRules, Coord, EndReason, GomokuRules, HexRules, IllegalMove, MnkRules, Move,
    OthelloRules, Outcome, Overline, Overshoot, Played, PopBothLines, Roll, RuleSet, Seat,
    SnakesLaddersOptions, SnakesLaddersRules, WildRules,
};

/// A game of `rules` for `seats` seats where any seat may undo.
fn config(rules: RuleSet, seats: usize) -> GameConfig {
    let seats = (0..seats)
        .map(|i| crate::seat(&format!("p{i}"), &format!("S{i}")))
        .collect();
    GameConfig::new(rules, seats, SeatLimits::default())
        .unwrap()
        .with_undo_policy(UndoPolicy::AnySeat)
}

fn tic_tac_toe() -> GameConfig {
    config(RuleSet::Mnk(MnkRules::TIC_TAC_TOE), 2)
}

fn place(seat: u8, row: u32, col: u32) -> Command {
    Command::Play {
        seat: Some(Seat(seat)),
        mv: Move::Place(Coord::new(row, col)),
    }
}

/// X (seat 0) takes the top row, O answering on the middle row; the fifth
/// move wins.
fn x_wins_top_row() -> [Command; 5] {
    [
        place(0, 0, 0),
        place(1, 1, 0),
        place(0, 0, 1),
        place(1, 1, 1),
        place(0, 0, 2),
    ]
}

/// Given the state after `commands`, each decided and evolved.
fn given(config: GameConfig, commands: &[Command]) -> (GameState, Vec<Event>) {
    let mut log = vec![Event::GameCreated(config.clone())];
    let mut state = GameState::new(config, T0);
    for command in commands {
        for event in decide(&state, command, T0).unwrap() {
            evolve(&mut state, &event, T0);
            log.push(event);
        }
    }
    (state, log)
}

#[test]
fn a_move_out_of_turn_is_refused() {
    let (state, _) = given(tic_tac_toe(), &[place(0, 0, 0)]);
    assert_eq!(
        decide(&state, &place(0, 1, 1), T0),
        Err(GameError::NotYourTurn {
            seat: 0,
            to_move: 1
        })
    );
}

#[test]
fn a_move_off_the_board_is_refused_as_such_even_out_of_turn_or_after_the_end() {
    let (state, _) = given(tic_tac_toe(), &[place(0, 0, 0)]);
    assert!(matches!(
        decide(&state, &place(0, 3, 0), T0),
        Err(GameError::Illegal(IllegalMove::CellOffBoard { .. }))
    ));
    let wrong_kind = Command::Play {
        seat: Some(Seat(0)),
        mv: Move::Drop { column: 0 },
    };
    assert!(matches!(
        decide(&state, &wrong_kind, T0),
        Err(GameError::Illegal(IllegalMove::WrongMoveKind { .. }))
    ));
    let moves = x_wins_top_row();
    let (won, _) = given(tic_tac_toe(), &moves);
    assert!(matches!(
        decide(&won, &place(1, 9, 9), T0),
        Err(GameError::Illegal(IllegalMove::CellOffBoard { .. }))
    ));
}

#[test]
fn a_seat_not_at_the_table_is_refused() {
    let (state, _) = given(tic_tac_toe(), &[]);
    assert_eq!(
        decide(&state, &place(2, 0, 0), T0),
        Err(GameError::NoSuchSeat { seat: 2, max: 1 })
    );
}

#[test]
fn three_in_a_row_wins_and_then_nothing_more_is_played() {
    let [moves @ .., last] = x_wins_top_row();
    let (state, _) = given(tic_tac_toe(), &moves);
    let events = decide(&state, &last, T0).unwrap();
    let [
        Event::MovePlayed {
            ply: 5,
            played:
                Played {
                    outcome: Some(Outcome::Win { seat, line }),
                    ..
                },
            ..
        },
    ] = events.as_slice()
    else {
        panic!("expected a winning move, got {events:?}");
    };
    assert_eq!(*seat, Seat(0));
    assert_eq!(
        line,
        &vec![Coord::new(0, 0), Coord::new(0, 1), Coord::new(0, 2)]
    );
    let (won, _) = given(tic_tac_toe(), &x_wins_top_row());
    assert_eq!(won.status(), GameStatus::Won);
    assert_eq!(won.to_move(), None);
    assert_eq!(decide(&won, &place(1, 2, 2), T0), Err(GameError::GameOver));
}

#[test]
fn undoing_a_winning_move_puts_the_game_back_in_play() {
    let moves = x_wins_top_row();
    let (won, _) = given(tic_tac_toe(), &moves);
    let (undone, log) = given(
        tic_tac_toe(),
        &[
            &moves[..],
            &[Command::Undo {
                requested_by: Some(Seat(1)),
            }],
        ]
        .concat(),
    );
    assert_eq!(
        log.last(),
        Some(&Event::MoveUndone {
            seat: Seat(0),
            undone_sequence: 6,
            placement: Some(Coord::new(0, 2)),
            requested_by: Some(Seat(1)),
        })
    );
    assert_eq!(undone.status(), GameStatus::InProgress);
    assert_eq!(undone.to_move(), Some(Seat(0)));
    assert_eq!(undone.sequence(), won.sequence() + 1);
    assert_eq!(
        undone.position(),
        given(tic_tac_toe(), &moves[..4]).0.position()
    );
}

#[test]
fn the_undo_policy_decides_who_may_undo() {
    let undo = |seat: Option<u8>| Command::Undo {
        requested_by: seat.map(Seat),
    };
    let game = |policy| given(tic_tac_toe().with_undo_policy(policy), &[place(0, 1, 1)]).0;
    let last_mover = game(UndoPolicy::LastMover);
    assert!(decide(&last_mover, &undo(Some(0)), T0).is_ok());
    assert_eq!(
        decide(&last_mover, &undo(Some(1)), T0),
        Err(GameError::NotLastMover {
            last_mover: 0,
            requested_by: Some(1)
        })
    );
    assert_eq!(
        decide(&last_mover, &undo(None), T0)
            .unwrap_err()
            .to_string(),
        "only the seat that played the last move (seat 0) may undo it; state the seat"
    );
    let any_seat = game(UndoPolicy::AnySeat);
    for seat in [Some(0), Some(1), None] {
        assert!(decide(&any_seat, &undo(seat), T0).is_ok());
    }
    let disabled = game(UndoPolicy::Disabled);
    assert_eq!(
        decide(&disabled, &undo(Some(0)), T0),
        Err(GameError::UndoDisabled)
    );
    assert_eq!(
        decide(&game(UndoPolicy::LastMover), &undo(Some(5)), T0),
        Err(GameError::NoSuchSeat { seat: 5, max: 1 })
    );
}

#[test]
fn undo_on_an_empty_board_is_refused() {
    let (state, _) = given(
        tic_tac_toe(),
        &[place(0, 1, 1), Command::Undo { requested_by: None }],
    );
    assert_eq!(
        decide(&state, &Command::Undo { requested_by: None }, T0),
        Err(GameError::NothingToUndo)
    );
}

#[test]
fn three_seats_take_turns_in_seat_order() {
    let cfg = config(RuleSet::Mnk(MnkRules::new(4, 4, 3, 100).unwrap()), 3);
    let (state, _) = given(cfg, &[place(0, 0, 0), place(1, 0, 1), place(2, 0, 2)]);
    assert_eq!(state.to_move(), Some(Seat(0)));
}

#[test]
fn replay_refuses_a_log_that_does_not_fit() {
    let (_, mut log) = given(tic_tac_toe(), &[place(0, 1, 1)]);
    let mv = Move::Place(Coord::new(1, 1));
    log.push(Event::MovePlayed {
        seat: Seat(1),
        ply: 2,
        played: Played::placed(mv, Coord::new(1, 1), None),
        chosen_by: None,
    });
    assert_eq!(GameState::replay(untimed(log)).unwrap_err().sequence, 3);
    assert_eq!(
        GameState::replay(untimed(Vec::new())).unwrap_err().sequence,
        1
    );
}

#[test]
fn replay_refuses_a_drop_or_pop_recorded_anywhere_but_where_it_lands() {
    let cfg = cfg_again();
    let drop = |seat, column| Command::Play {
        seat: Some(Seat(seat)),
        mv: Move::Drop { column },
    };
    let (_, log) = given(cfg, &[drop(0, 3), drop(1, 3)]);
    let recorded = |seat, mv, at| Event::MovePlayed {
        seat: Seat(seat),
        ply: 3,
        played: Played::placed(mv, at, None),
        chosen_by: None,
    };
    // Column 3 holds two discs: the next lands on row 3.
    let fits = [
        log.clone(),
        vec![recorded(0, Move::Drop { column: 3 }, Coord::new(3, 3))],
    ];
    assert!(GameState::replay(untimed(fits.concat())).is_ok());
    for (mv, at) in [
        (Move::Drop { column: 3 }, Coord::new(0, 3)),
        (Move::Drop { column: 3 }, Coord::new(5, 4)),
        (Move::Pop { column: 3 }, Coord::new(4, 3)),
    ] {
        let corrupt = [log.clone(), vec![recorded(0, mv, at)]].concat();
        assert_eq!(
            GameState::replay(untimed(corrupt)).unwrap_err().sequence,
            4,
            "{mv:?} recorded at {at}"
        );
    }
}

#[test]
fn replay_refuses_an_undo_of_a_move_that_is_not_the_last_one() {
    let (_, log) = given(tic_tac_toe(), &[place(0, 1, 1), place(1, 0, 0)]);
    // The last move is sequence 3 on (0, 0).
    for (undone_sequence, placement) in [(2, Coord::new(0, 0)), (3, Coord::new(1, 1))] {
        let mut corrupt = log.clone();
        corrupt.push(Event::MoveUndone {
            seat: Seat(1),
            undone_sequence,
            placement: Some(placement),
            requested_by: None,
        });
        assert_eq!(
            GameState::replay(untimed(corrupt)).unwrap_err().sequence,
            4,
            "undo of {undone_sequence} at {placement}"
        );
    }
    let mut fits = log;
    fits.push(Event::MoveUndone {
        seat: Seat(1),
        undone_sequence: 3,
        placement: Some(Coord::new(0, 0)),
        requested_by: None,
    });
    assert!(GameState::replay(untimed(fits)).is_ok());
}

#[test]
fn replay_refuses_a_roll_that_does_not_fit_the_position() {
    let rules = SnakesLaddersRules::new(
        SnakesLaddersOptions {
            seed: 7,
            ..SnakesLaddersOptions::default()
        },
        1_000_000,
    )
    .map(RuleSet::SnakesLadders)
    .unwrap();
    let (_, log) = given(
        config(rules, 2),
        &[Command::Play {
            seat: Some(Seat(0)),
            mv: Move::Roll,
        }],
    );
    let Some(Event::MovePlayed { played, .. }) = log.last().cloned() else {
        panic!("a roll")
    };
    let roll = *played.roll.clone().expect("a roll records its dice");
    let replayed = |roll: Option<Roll>| {
        let mut corrupt = log[..1].to_vec();
        corrupt.push(Event::MovePlayed {
            seat: Seat(0),
            ply: 1,
            played: Played {
                roll: roll.map(Box::new),
                ..played.clone()
            },
            chosen_by: None,
        });
        GameState::replay(untimed(corrupt))
    };
    assert!(replayed(Some(roll.clone())).is_ok());
    let elsewhere = Roll {
        from: roll.from + 1,
        ..roll.clone()
    };
    assert_eq!(replayed(Some(elsewhere)).unwrap_err().sequence, 2);
    let after_sixes = Roll {
        sixes_before: 1,
        ..roll.clone()
    };
    assert_eq!(replayed(Some(after_sixes)).unwrap_err().sequence, 2);
    let off_the_board = Roll { to: 101, ..roll };
    assert_eq!(replayed(Some(off_the_board)).unwrap_err().sequence, 2);
    assert_eq!(replayed(None).unwrap_err().sequence, 2);
}

/// A random game: the rule set, the seat count, and a script of choices
/// (pick the n-th legal move, or undo).
fn any_game() -> impl Strategy<Value = (GameConfig, Vec<(bool, usize)>)> {
    let rules = prop_oneof![
        (1i64..7, 1i64..7, 1i64..5).prop_filter_map("k fits", |(r, c, k)| MnkRules::new(
            r, c, k, 100
        )
        .ok()
        .map(RuleSet::Mnk)),
        (1i64..7, 1i64..8, 1i64..5).prop_filter_map("k fits", |(r, c, k)| {
            ConnectFourRules::new(Some(r), Some(c), Some(k), 100)
                .ok()
                .map(RuleSet::ConnectFour)
        }),
        (5i64..9, 0usize..2).prop_map(|(side, overline)| {
            let overline = [Overline::Wins, Overline::DoesNotWin][overline];
            RuleSet::Gomoku(
                GomokuRules::new(Some(side), Some(side), Some(4), overline, 100).unwrap(),
            )
        }),
        (1i64..5, 1i64..5, 1i64..4).prop_filter_map("k fits", |(r, c, k)| {
            WildRules::new(Some(r), Some(c), Some(k), 100)
                .ok()
                .map(RuleSet::Wild)
        }),
        (2i64..5).prop_map(|half| RuleSet::Othello(OthelloRules::new(Some(2 * half)).unwrap())),
        (2i64..7, any::<bool>())
            .prop_map(|(size, swap)| RuleSet::Hex(HexRules::new(Some(size), swap, 100).unwrap())),
        (2i64..6, 2i64..6, 2i64..4, any::<bool>()).prop_filter_map("k fits", |(r, c, k, mover)| {
            let both_lines = if mover {
                PopBothLines::MoverWins
            } else {
                PopBothLines::OpponentWins
            };
            ConnectFourRules::new(Some(r), Some(c), Some(k), 100)
                .ok()
                .map(|rules| RuleSet::ConnectFour(rules.with_pop_out(both_lines)))
        }),
        (
            (1i64..3, 2i64..8, 1i64..20, 0usize..3),
            prop::collection::vec((1i64..40, 1i64..40), 0..5),
            (any::<bool>(), any::<bool>(), any::<bool>(), any::<u64>()),
        )
            .prop_filter_map(
                "a playable board",
                |((dice, sides, extra, overshoot), jumps, (chaining, six, forfeit, seed))| {
                    let options = SnakesLaddersOptions {
                        squares: Some(dice * sides + extra),
                        jumps,
                        chaining,
                        overshoot: Some(
                            [
                                Overshoot::ExactLanding,
                                Overshoot::BounceBack,
                                Overshoot::ReachOrPass,
                            ][overshoot],
                        ),
                        dice: Some(dice),
                        sides: Some(sides),
                        extra_turn_on_six: six && sides >= 6,
                        three_sixes_forfeit: six && forfeit && sides >= 6,
                        seed,
                    };
                    SnakesLaddersRules::new(options, 100)
                        .ok()
                        .map(RuleSet::SnakesLadders)
                },
            ),
    ];
    (
        rules,
        2usize..5,
        prop::collection::vec((prop::bool::weighted(0.15), any::<usize>()), 0..60),
    )
        .prop_map(|(rules, seats, script)| {
            // As many seats as the rules allow.
            let (fewest, most) = rules.seat_range();
            let seats = if fewest == 1 { seats - 1 } else { seats };
            (config(rules, seats.clamp(fewest, most)), script)
        })
}

proptest! {
    /// Replay of the log equals the live state; every listed legal move is
    /// accepted; an outcome is recorded exactly once and ends the game; an
    /// undo gives back exactly the position before the move it takes back.
    #[test]
    fn replay_equals_live_state_and_listed_moves_are_accepted((cfg, script) in any_game()) {
        let mut state = GameState::new(cfg.clone(), T0);
        let mut log = vec![Event::GameCreated(cfg)];
        let mut before_each_move = Vec::new();
        for (undo, pick) in script {
            let seat = state.to_move().unwrap_or(Seat(0));
            let rules = state.config().rules();
            let legal: Vec<Move> = if state.outcome().is_some() {
                Vec::new()
            } else {
                let legal: Vec<Move> = rules.legal_moves(state.position(), seat).collect();
                prop_assert_eq!(legal.len(), rules.legal_move_count(state.position(), seat));
                legal
            };
            for mv in &legal {
                prop_assert!(decide(&state, &Command::Play { seat: Some(seat), mv: *mv }, T0).is_ok(), "listed move {:?} refused", mv);
            }
            let command = if undo || legal.is_empty() {
                Command::Undo { requested_by: None }
            } else {
                Command::Play { seat: Some(seat), mv: legal[pick % legal.len()] }
            };
            let Ok(events) = decide(&state, &command, T0) else { continue };
            match command {
                Command::Play { .. } => before_each_move.push(state.position().clone()),
                _ => {
                    let before = before_each_move.pop();
                    let mut undone = state.clone();
                    events.iter().for_each(|e| evolve(&mut undone, e, T0));
                    prop_assert_eq!(Some(undone.position()), before.as_ref(), "undo restores");
                }
            }
            let was_over = state.outcome().is_some();
            for event in events {
                if let Event::MovePlayed { played: Played { outcome: Some(_), .. }, .. } = &event {
                    prop_assert!(!was_over, "a second outcome");
                }
                evolve(&mut state, &event, T0);
                log.push(event);
            }
            prop_assert_eq!(state.sequence(), log.len() as u64);
        }
        prop_assert_eq!(GameState::replay(untimed(log)).unwrap(), state);
    }
}

#[test]
fn undoing_an_othello_move_turns_its_flipped_discs_back() {
    let cfg = config(RuleSet::Othello(OthelloRules::new(None).unwrap()), 2);
    let start = GameState::new(cfg.clone(), T0);
    let (state, log) = given(cfg, &[place(0, 2, 3), Command::Undo { requested_by: None }]);
    let Event::MovePlayed { played, .. } = &log[1] else {
        panic!("a move")
    };
    assert_eq!(played.flips, vec![Coord::new(3, 3)]);
    assert_eq!(state.position(), start.position());
    assert_eq!(state.to_move(), Some(Seat(0)));
}

#[test]
fn in_pop_out_the_third_occurrence_of_a_position_is_a_draw() {
    let rules = ConnectFourRules::STANDARD.with_pop_out(PopBothLines::MoverWins);
    let cfg = config(RuleSet::ConnectFour(rules), 2);
    let drop = |seat, column| Command::Play {
        seat: Some(Seat(seat)),
        mv: Move::Drop { column },
    };
    let pop = |seat, column| Command::Play {
        seat: Some(Seat(seat)),
        mv: Move::Pop { column },
    };
    // Each round drops two discs and pops them again: the empty board with
    // seat 0 to move comes back after every round (first seen at the start).
    let round = [drop(0, 0), drop(1, 1), pop(0, 0), pop(1, 1)];
    let (state, _) = given(cfg.clone(), &[&round[..], &round[..3]].concat());
    assert_eq!(state.outcome(), None);
    let events = decide(&state, &round[3], T0).unwrap();
    let repetition = Event::GameEnded {
        outcome: Some(Outcome::Draw),
        reason: EndReason::Repetition,
    };
    assert!(matches!(
        events.as_slice(),
        [Event::MovePlayed {
            played: Played { outcome: None, .. },
            ..
        }, ended] if *ended == repetition
    ));
    // Undo steps the count back: the same pop after an undo draws again.
    let (mut state, _) = given(cfg, &[&round[..], &round[..]].concat());
    assert_eq!(state.status(), GameStatus::Drawn);
    for event in decide(&state, &Command::Undo { requested_by: None }, T0).unwrap() {
        evolve(&mut state, &event, T0);
    }
    assert_eq!(state.status(), GameStatus::InProgress);
    assert!(decide(&state, &round[3], T0).unwrap().contains(&repetition));
    // An undone occurrence no longer counts: after one round (the empty
    // board seen twice), undoing its last pop and playing it again is the
    // second occurrence again, not the third.
    let (mut state, _) = given(cfg_again(), &round);
    for event in decide(&state, &Command::Undo { requested_by: None }, T0).unwrap() {
        evolve(&mut state, &event, T0);
    }
    for event in decide(&state, &round[3], T0).unwrap() {
        evolve(&mut state, &event, T0);
    }
    assert_eq!(state.status(), GameStatus::InProgress);
}

/// Pop Out where the mover wins a double line, any seat may undo.
fn cfg_again() -> GameConfig {
    let rules = ConnectFourRules::STANDARD.with_pop_out(PopBothLines::MoverWins);
    config(RuleSet::ConnectFour(rules), 2)
}

#[test]
fn replay_refuses_a_move_by_the_wrong_seat_or_after_the_end() {
    let (_, log) = given(tic_tac_toe(), &[place(0, 1, 1)]);
    let mut wrong_seat = log.clone();
    wrong_seat.push(Event::MovePlayed {
        seat: Seat(0),
        ply: 2,
        played: Played::placed(Move::Place(Coord::new(0, 0)), Coord::new(0, 0), None),
        chosen_by: None,
    });
    assert_eq!(
        GameState::replay(untimed(wrong_seat)).unwrap_err().sequence,
        3
    );
    let (_, mut won) = given(tic_tac_toe(), &x_wins_top_row());
    won.push(Event::MovePlayed {
        seat: Seat(1),
        ply: 6,
        played: Played::placed(Move::Place(Coord::new(2, 2)), Coord::new(2, 2), None),
        chosen_by: None,
    });
    assert_eq!(GameState::replay(untimed(won)).unwrap_err().sequence, 7);
}

/// Issue 35, item 11: replay checks every field of a recorded move that the
/// position before it determines, so a changed byte in any of them is found.
#[test]
fn replay_refuses_a_move_whose_record_is_not_what_the_move_does() {
    // m,n,k: the placement must be the move's own cell, the ply its place
    // among the moves, and the outcome the one the move gives.
    let (_, log) = given(tic_tac_toe(), &x_wins_top_row()[..4]);
    let Event::MovePlayed {
        played: winning, ..
    } = given(tic_tac_toe(), &x_wins_top_row()).1[5].clone()
    else {
        panic!("a move")
    };
    let recorded = |ply, played: Played| {
        let mut log = log.clone();
        log.push(Event::MovePlayed {
            seat: Seat(0),
            ply,
            played,
            chosen_by: None,
        });
        GameState::replay(untimed(log))
    };
    assert!(recorded(5, winning.clone()).is_ok());
    let elsewhere = Played {
        placement: Some(Coord::new(2, 2)),
        ..winning.clone()
    };
    let no_win = Played {
        outcome: None,
        ..winning.clone()
    };
    let other_line = Played {
        outcome: Some(Outcome::Win {
            seat: Seat(0),
            line: vec![Coord::new(0, 0), Coord::new(1, 1), Coord::new(2, 2)],
        }),
        ..winning.clone()
    };
    for (what, ply, played) in [
        ("a placement elsewhere", 5, elsewhere),
        ("another ply", 4, winning.clone()),
        ("another ply", 6, winning.clone()),
        ("no outcome", 5, no_win),
        ("another winning line", 5, other_line),
    ] {
        let error = recorded(ply, played).unwrap_err();
        assert_eq!(error.sequence, 6, "{what}: {error}");
    }
    // Othello: the flips must be the ones the move makes (in any order).
    let cfg = config(RuleSet::Othello(OthelloRules::new(None).unwrap()), 2);
    let (_, log) = given(cfg.clone(), &[place(0, 2, 3)]);
    let Event::MovePlayed { played, .. } = log[1].clone() else {
        panic!("a move")
    };
    let with_flips = |flips: Vec<Coord>| {
        GameState::replay(untimed(vec![
            log[0].clone(),
            Event::MovePlayed {
                seat: Seat(0),
                ply: 1,
                played: Played {
                    flips,
                    ..played.clone()
                },
                chosen_by: None,
            },
        ]))
    };
    assert!(with_flips(vec![Coord::new(3, 3)]).is_ok());
    assert_eq!(with_flips(Vec::new()).unwrap_err().sequence, 2);
    assert_eq!(
        with_flips(vec![Coord::new(3, 3), Coord::new(4, 4)])
            .unwrap_err()
            .sequence,
        2
    );
}
