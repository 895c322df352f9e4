//! The stored event format: how a [`GameEvent`](pb::GameEvent) is written
//! to the log and read back.
//!
//! This is the storage schema, not a conversion like those in
//! [`super::convert`]: every row ever appended is decoded with it, on every
//! load and replay, by every version of the server that may read the log.
//! Changes must stay compatible with rows already stored: add fields with
//! defaults that mean what old rows meant, never renumber, reinterpret or
//! drop one, and keep [`event_type`]'s names (they are stored beside each
//! row). The round-trip test below covers every event kind.
//!
//! The same encoding is what StreamEvents and GetReplay send.

use super::convert::{
    FieldError, WireConfig, absence_to_proto, cell_from_proto, cell_to_proto,
    chess_played_from_proto, chess_played_to_proto, chooser_to_proto, config_from_proto,
    end_reason_from_proto, end_reason_to_proto, engine_from_proto, enum_field, move_from_proto,
    move_to_proto, outcome_from_proto, outcome_to_proto, roll_to_proto, rules_to_proto,
    seat_from_proto, seat_to_proto, strength_from_proto, time_control_to_proto, timestamp,
    undo_policy_to_proto,
};
use super::{self as pb, ErrorReason};
use crate::engine::Chooser;
use crate::game::{Event, GameConfig, SeatLimits};
use crate::rules::{Coord, Forfeit, Move, Played, Roll, RuleSet, Seat};
use crate::store::GameTag;

/// The tags a game of `config` is listed by (see [`GameTag`]): its kind
/// ([`crate::metrics::kind`]), each distinct player id, each label; in
/// order, without repeats.
pub fn game_tags(config: &GameConfig) -> Vec<GameTag> {
    let kind = GameTag::Kind(crate::metrics::kind(config.rules()).to_owned());
    let players = config
        .seats()
        .iter()
        .map(|seat| GameTag::Player(seat.player_id.clone()));
    let labels = config
        .labels()
        .iter()
        .map(|(key, value)| GameTag::Label(key.clone(), value.clone()));
    let mut tags: Vec<GameTag> = std::iter::once(kind).chain(players).chain(labels).collect();
    tags.sort();
    tags.dedup();
    tags
}

/// [`game_tags`] of a stored GameCreated event (sequence 1).
///
/// # Errors
/// Words saying why: bytes that do not decode, another event, or a
/// configuration that does not read back.
pub fn created_tags(payload: &[u8]) -> Result<Vec<GameTag>, String> {
    let wire = <pb::GameEvent as prost::Message>::decode(payload).map_err(|e| e.to_string())?;
    match event_from_proto(&wire) {
        Ok(Event::GameCreated(config)) => Ok(game_tags(&config)),
        Ok(_) => Err("its first event is not a GameCreated".to_owned()),
        Err(e) => Err(format!("{}: {}", e.field, e.why)),
    }
}

/// What `event` does to its game's life, given whether the game (its
/// round) was over before it, and whether it is over after it: a
/// GameCreated creates, a RoundStarted starts a round, a move with an
/// outcome or a GameEnded ends (the only events that end a game, as
/// `crate::game::decide` reads them), an undo while the game is over
/// reopens it, a SeatOut takes a seat out of play. Read off the stored
/// events in sequence order, from a game that is not over before its
/// GameCreated.
pub fn lifecycle(event: &pb::GameEvent, over_before: bool) -> (pb::Lifecycle, bool) {
    use pb::game_event::Kind;
    match &event.kind {
        Some(Kind::GameCreated(_)) => (pb::Lifecycle::Created, false),
        Some(Kind::RoundStarted(_)) => (pb::Lifecycle::RoundStarted, false),
        Some(Kind::MovePlayed(played) | Kind::MoveRedone(played)) if played.outcome.is_some() => {
            (pb::Lifecycle::Ended, true)
        }
        Some(Kind::GameEnded(_)) => (pb::Lifecycle::Ended, true),
        Some(Kind::MoveUndone(_)) if over_before => (pb::Lifecycle::Reopened, false),
        Some(Kind::MoveUndone(_)) => (pb::Lifecycle::Unspecified, false),
        Some(Kind::SeatOut(_)) => (pb::Lifecycle::SeatOut, over_before),
        _ => (pb::Lifecycle::Unspecified, over_before),
    }
}

/// The outcome an ending event carries: a move's outcome, or GameEnded's.
pub fn outcome_of(event: &pb::GameEvent) -> Option<pb::Outcome> {
    use pb::game_event::Kind;
    match &event.kind {
        Some(Kind::MovePlayed(played) | Kind::MoveRedone(played)) => played.outcome.clone(),
        Some(Kind::GameEnded(ended)) => ended.outcome.clone(),
        _ => None,
    }
}

/// Every name [`event_type`] gives: the GameEvent `kind` oneof's case
/// names, which a StreamAllEvents filter may name.
pub const EVENT_TYPES: &[&str] = &[
    "game_created",
    "move_played",
    "move_undone",
    "turn_passed",
    "seat_token_reissued",
    "move_redone",
    "time_expired",
    "seat_out",
    "game_ended",
    "draw_offered",
    "draw_accepted",
    "draw_declined",
    "takeback_requested",
    "takeback_accepted",
    "takeback_declined",
    "rematch_requested",
    "round_started",
    "seat_absent",
];

/// The GameEvent oneof case name of `event`, stored as the row's type.
pub fn event_type(event: &Event) -> &'static str {
    match event {
        Event::GameCreated(_) => "game_created",
        Event::MovePlayed { .. } => "move_played",
        Event::MoveUndone { .. } => "move_undone",
        Event::TurnPassed { .. } => "turn_passed",
        Event::SeatTokenReissued { .. } => "seat_token_reissued",
        Event::MoveRedone { .. } => "move_redone",
        Event::TimeExpired { .. } => "time_expired",
        Event::SeatOut { .. } => "seat_out",
        Event::GameEnded { .. } => "game_ended",
        Event::DrawOffered { .. } => "draw_offered",
        Event::DrawAccepted { .. } => "draw_accepted",
        Event::DrawDeclined { .. } => "draw_declined",
        Event::TakebackRequested { .. } => "takeback_requested",
        Event::TakebackAccepted { .. } => "takeback_accepted",
        Event::TakebackDeclined { .. } => "takeback_declined",
        Event::RematchRequested { .. } => "rematch_requested",
        Event::RoundStarted { .. } => "round_started",
        Event::SeatAbsent { .. } => "seat_absent",
    }
}

/// A move and what it did on the wire (a MovePlayed or a move_redone), with
/// the reason `rules` give for its outcome.
fn played_to_proto(
    seat: Seat,
    ply: u32,
    played: &Played,
    rules: &RuleSet,
    chosen_by: Option<&Chooser>,
) -> pb::MovePlayed {
    pb::MovePlayed {
        chosen_by: chosen_by.map(chooser_to_proto),
        seat: seat.0.into(),
        // A chess move's squares (castling as king takes rook, which reads
        // back alone); its UCI and SAN travel in `chess`.
        r#move: Some(move_to_proto(played.mv)),
        // The wire names a roll's square as the cell (0, square).
        placement: played
            .placement
            .or_else(|| played.roll.as_ref().map(|r| Coord::new(0, r.to)))
            .map(cell_to_proto),
        ply,
        outcome: played
            .outcome
            .as_ref()
            .map(|o| outcome_to_proto(Some(o), rules.end_reason(played))),
        flipped: played.flips.iter().copied().map(cell_to_proto).collect(),
        roll: played.roll.as_deref().map(roll_to_proto),
        chess: played.chess.as_deref().map(chess_played_to_proto),
    }
}

/// An event of round `round` of a game played by `rules` on the wire and
/// in storage, recorded at `recorded_at_ms` (Unix epoch milliseconds).
pub fn event_to_proto(
    game_id: &str,
    sequence: u64,
    recorded_at_ms: i64,
    event: &Event,
    rules: &RuleSet,
    round: u32,
) -> pb::GameEvent {
    use pb::game_event::Kind;
    let action = |seat: &Seat| pb::SeatAction {
        seat: seat.0.into(),
    };
    let kind = match event {
        Event::GameCreated(config) => Kind::GameCreated(pb::GameCreated {
            rules: Some(rules_to_proto(config.rules())),
            seats: config.seats().iter().map(seat_to_proto).collect(),
            undo_policy: undo_policy_to_proto(config.undo_policy()) as i32,
            time_control: config.time_control().map(time_control_to_proto),
            absence: config.absence().map(absence_to_proto),
            matched_at: config.matched_at().map(timestamp),
            labels: config.labels().clone(),
            clocks_start_at: config.clocks_start_at().map(timestamp),
        }),
        Event::MovePlayed {
            seat,
            ply,
            played,
            chosen_by,
        } => Kind::MovePlayed(played_to_proto(
            *seat,
            *ply,
            played,
            rules,
            chosen_by.as_ref(),
        )),
        Event::MoveRedone { seat, ply, played } => {
            Kind::MoveRedone(played_to_proto(*seat, *ply, played, rules, None))
        }
        Event::TimeExpired { seat } => Kind::TimeExpired(pb::TimeExpired {
            seat: seat.0.into(),
        }),
        Event::SeatAbsent { seat } => Kind::SeatAbsent(pb::SeatAbsent {
            seat: seat.0.into(),
        }),
        Event::SeatOut { seat, reason } => Kind::SeatOut(pb::SeatOut {
            seat: seat.0.into(),
            reason: end_reason_to_proto(*reason) as i32,
        }),
        Event::GameEnded { outcome, reason } => Kind::GameEnded(pb::GameEnded {
            outcome: Some(outcome_to_proto(outcome.as_ref(), *reason)),
        }),
        Event::DrawOffered { seat } => Kind::DrawOffered(action(seat)),
        Event::DrawAccepted { seat } => Kind::DrawAccepted(action(seat)),
        Event::DrawDeclined { seat } => Kind::DrawDeclined(action(seat)),
        Event::TakebackRequested { seat } => Kind::TakebackRequested(action(seat)),
        Event::TakebackAccepted { seat } => Kind::TakebackAccepted(action(seat)),
        Event::TakebackDeclined { seat } => Kind::TakebackDeclined(action(seat)),
        Event::RematchRequested { seat, rotate } => Kind::RematchRequested(pb::RematchRequested {
            seat: seat.0.into(),
            rotate: *rotate,
        }),
        Event::RoundStarted { round, first } => Kind::RoundStarted(pb::RoundStarted {
            round: *round,
            first: first.0.into(),
        }),
        Event::TurnPassed { seat } => Kind::TurnPassed(pb::TurnPassed {
            seat: seat.0.into(),
        }),
        Event::SeatTokenReissued { seat } => Kind::SeatTokenReissued(pb::SeatTokenReissued {
            seat: seat.0.into(),
        }),
        Event::MoveUndone {
            seat,
            undone_sequence,
            placement,
            requested_by,
        } => Kind::MoveUndone(pb::MoveUndone {
            seat: seat.0.into(),
            undone_sequence: *undone_sequence,
            placement: placement.map(cell_to_proto),
            requested_by: requested_by.map(|s| s.0.into()),
        }),
    };
    pb::GameEvent {
        game_id: game_id.to_owned(),
        sequence,
        recorded_at: Some(timestamp(recorded_at_ms)),
        round,
        kind: Some(kind),
    }
}

/// Decodes a stored event. Rule sets are rebuilt without a cell limit (the
/// limit applied when the game was created) and seats without the server's
/// current seat limits or the check for disruptive characters in names
/// (games created before it may hold them).
///
/// # Errors
/// [`FieldError`] naming what is missing or malformed.
pub fn event_from_proto(event: &pb::GameEvent) -> Result<Event, FieldError> {
    use pb::game_event::Kind;
    match event.kind.as_ref() {
        None => Err(FieldError::invalid("kind", "an event kind is required")),
        Some(Kind::GameCreated(created)) => {
            let limits = SeatLimits {
                max_seats: crate::rules::MAX_SEATS,
                max_id_chars: usize::MAX,
                plain_text: false,
            };
            config_from_proto(
                WireConfig {
                    rules: created.rules.as_ref(),
                    seats: &created.seats,
                    undo_policy: created.undo_policy,
                    time_control: created.time_control.as_ref(),
                    absence: created.absence.as_ref(),
                    matched_at: created.matched_at.as_ref(),
                    labels: &created.labels,
                    clocks_start_at: created.clocks_start_at.as_ref(),
                },
                u64::MAX,
                limits,
                1,
            )
            .map(Event::GameCreated)
        }
        Some(Kind::MovePlayed(m)) => {
            let (seat, ply, played) = played_from_proto(m, "move_played")?;
            let chosen_by = m
                .chosen_by
                .as_ref()
                .map(|c| {
                    let engine = engine_from_proto(c.engine, "move_played.chosen_by.engine")?
                        .ok_or_else(|| {
                            FieldError::invalid(
                                "move_played.chosen_by.engine",
                                "a bot's move names its engine",
                            )
                        })?;
                    let strength = strength_from_proto(
                        c.strength,
                        "move_played.chosen_by.strength",
                        ErrorReason::InvalidRequest,
                    )?;
                    Ok::<_, FieldError>(Chooser {
                        engine,
                        strength,
                        proven: c.proven,
                    })
                })
                .transpose()?;
            Ok(Event::MovePlayed {
                seat,
                ply,
                played,
                chosen_by,
            })
        }
        Some(Kind::MoveRedone(m)) => {
            let (seat, ply, played) = played_from_proto(m, "move_redone")?;
            Ok(Event::MoveRedone { seat, ply, played })
        }
        Some(Kind::TimeExpired(t)) => Ok(Event::TimeExpired {
            seat: seat_from_proto(t.seat, "time_expired.seat")?,
        }),
        Some(Kind::SeatAbsent(a)) => Ok(Event::SeatAbsent {
            seat: seat_from_proto(a.seat, "seat_absent.seat")?,
        }),
        Some(Kind::SeatOut(s)) => Ok(Event::SeatOut {
            seat: seat_from_proto(s.seat, "seat_out.seat")?,
            reason: end_reason_from_proto(s.reason, "seat_out.reason")?,
        }),
        Some(Kind::GameEnded(e)) => {
            let outcome = e.outcome.as_ref().ok_or_else(|| {
                FieldError::invalid("game_ended.outcome", "an outcome is required")
            })?;
            Ok(Event::GameEnded {
                outcome: outcome_from_proto(outcome)?,
                reason: end_reason_from_proto(outcome.reason, "game_ended.outcome.reason")?,
            })
        }
        Some(Kind::DrawOffered(a)) => Ok(Event::DrawOffered {
            seat: seat_from_proto(a.seat, "draw_offered.seat")?,
        }),
        Some(Kind::DrawAccepted(a)) => Ok(Event::DrawAccepted {
            seat: seat_from_proto(a.seat, "draw_accepted.seat")?,
        }),
        Some(Kind::DrawDeclined(a)) => Ok(Event::DrawDeclined {
            seat: seat_from_proto(a.seat, "draw_declined.seat")?,
        }),
        Some(Kind::TakebackRequested(a)) => Ok(Event::TakebackRequested {
            seat: seat_from_proto(a.seat, "takeback_requested.seat")?,
        }),
        Some(Kind::TakebackAccepted(a)) => Ok(Event::TakebackAccepted {
            seat: seat_from_proto(a.seat, "takeback_accepted.seat")?,
        }),
        Some(Kind::TakebackDeclined(a)) => Ok(Event::TakebackDeclined {
            seat: seat_from_proto(a.seat, "takeback_declined.seat")?,
        }),
        Some(Kind::RematchRequested(r)) => Ok(Event::RematchRequested {
            seat: seat_from_proto(r.seat, "rematch_requested.seat")?,
            rotate: r.rotate,
        }),
        Some(Kind::RoundStarted(r)) => Ok(Event::RoundStarted {
            round: r.round,
            first: seat_from_proto(r.first, "round_started.first")?,
        }),
        Some(Kind::TurnPassed(p)) => Ok(Event::TurnPassed {
            seat: seat_from_proto(p.seat, "turn_passed.seat")?,
        }),
        Some(Kind::SeatTokenReissued(r)) => Ok(Event::SeatTokenReissued {
            seat: seat_from_proto(r.seat, "seat_token_reissued.seat")?,
        }),
        Some(Kind::MoveUndone(u)) => Ok(Event::MoveUndone {
            seat: seat_from_proto(u.seat, "move_undone.seat")?,
            undone_sequence: u.undone_sequence,
            placement: u
                .placement
                .as_ref()
                .map(|c| cell_from_proto(Some(c), "move_undone.placement"))
                .transpose()?,
            requested_by: u
                .requested_by
                .map(|s| seat_from_proto(s, "move_undone.requested_by"))
                .transpose()?,
        }),
    }
}

/// A move and what it did, from a MovePlayed or move_redone at `field`.
fn played_from_proto(m: &pb::MovePlayed, field: &str) -> Result<(Seat, u32, Played), FieldError> {
    let mv = move_from_proto(m.r#move.as_ref(), &format!("{field}.move"))?;
    let roll = m
        .roll
        .as_ref()
        .map(roll_from_proto)
        .transpose()?
        .map(Box::new);
    let outcome = match m.outcome.as_ref().map(outcome_from_proto).transpose()? {
        Some(None) => {
            return Err(FieldError::invalid(
                format!("{field}.outcome"),
                "a move does not end a game with no result",
            ));
        }
        Some(outcome) => outcome,
        None => None,
    };
    if matches!(mv, Move::ChessText(_)) {
        // A chess move: its squares and facts, no cells.
        let end = m
            .outcome
            .as_ref()
            .map(|o| end_reason_from_proto(o.reason, &format!("{field}.outcome.reason")))
            .transpose()?;
        let (mv, chess) = chess_played_from_proto(mv, m.chess.as_ref(), end, field)?;
        let played = Played {
            mv,
            placement: None,
            flips: Vec::new(),
            roll: None,
            passes: Vec::new(),
            outcome,
            chess: Some(chess),
        };
        return Ok((
            seat_from_proto(m.seat, &format!("{field}.seat"))?,
            m.ply,
            played,
        ));
    }
    let placement = cell_from_proto(m.placement.as_ref(), &format!("{field}.placement"))?;
    // A roll's placement on the wire is its square: see above.
    let placement = match (mv, &roll) {
        (Move::Roll, Some(roll)) if placement == Coord::new(0, roll.to) => None,
        (Move::Roll, Some(_)) => {
            return Err(FieldError::invalid(
                format!("{field}.placement"),
                "a roll's placement is (0, the square it rests on)",
            ));
        }
        _ => Some(placement),
    };
    let played = Played {
        mv,
        placement,
        flips: m
            .flipped
            .iter()
            .map(|c| cell_from_proto(Some(c), &format!("{field}.flipped")))
            .collect::<Result<_, _>>()?,
        roll,
        passes: Vec::new(),
        outcome,
        chess: None,
    };
    Ok((
        seat_from_proto(m.seat, &format!("{field}.seat"))?,
        m.ply,
        played,
    ))
}

/// A stored roll (replay checks it against the position).
fn roll_from_proto(roll: &pb::RollResult) -> Result<Roll, FieldError> {
    let square = |n: i32| {
        u32::try_from(n)
            .map_err(|_| FieldError::invalid("move_played.roll.jumps", "a negative square"))
    };
    Ok(Roll {
        dice: roll.dice.clone(),
        from: roll.from,
        passed: roll.passed.clone(),
        jumps: roll
            .jumps
            .iter()
            .map(|j| Ok((square(j.from)?, square(j.to)?)))
            .collect::<Result<_, FieldError>>()?,
        to: roll.to,
        sixes_before: roll.sixes_before,
        extra_turn: roll.extra_turn,
        forfeit: match enum_field(
            roll.forfeit,
            "move_played.roll.forfeit",
            ErrorReason::InvalidRequest,
        )? {
            pb::Forfeit::Unspecified => None,
            pb::Forfeit::Overshoot => Some(Forfeit::Overshoot),
            pb::Forfeit::ThirdSix => Some(Forfeit::ThirdSix),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Bot, EngineKind};
    use crate::game::{Command, GameConfig, GameState, SeatInfo, UndoPolicy, decide, evolve};
    use crate::proto::convert::timestamp_ms;
    use crate::rules::{
        ConnectFourRules, EndReason, Outcome, SnakesLaddersOptions, SnakesLaddersRules,
    };

    #[test]
    fn the_event_types_are_the_game_events_kind_cases() {
        use prost::Message;
        let files =
            prost_types::FileDescriptorSet::decode(crate::proto::FILE_DESCRIPTOR_SET).unwrap();
        let event = files
            .file
            .iter()
            .flat_map(|f| &f.message_type)
            .find(|m| m.name() == "GameEvent")
            .expect("GameEvent in the descriptor");
        let kind = event
            .oneof_decl
            .iter()
            .position(|o| o.name() == "kind")
            .expect("its kind oneof") as i32;
        let cases: Vec<&str> = event
            .field
            .iter()
            .filter(|f| f.oneof_index == Some(kind))
            .map(|f| f.name())
            .collect();
        assert_eq!(cases, EVENT_TYPES);
    }

    #[test]
    fn every_event_kind_survives_the_round_trip_through_the_wire() {
        let seats = ["X", "O"]
            .map(|s| SeatInfo {
                player_id: s.into(),
                display_name: "n".into(),
                symbol: s.into(),
                bot: None,
            })
            .to_vec();
        let mut with_bot = seats.clone();
        with_bot[1].bot = Some(Bot {
            engine: EngineKind::ConnectFour,
            strength: 7,
            seed: u64::MAX,
        });
        let bot_config = GameConfig::new(
            RuleSet::ConnectFour(ConnectFourRules::STANDARD),
            with_bot,
            SeatLimits::default(),
        )
        .unwrap();
        let config = GameConfig::new(
            RuleSet::ConnectFour(ConnectFourRules::STANDARD),
            seats,
            SeatLimits::default(),
        )
        .unwrap()
        .with_undo_policy(UndoPolicy::AnySeat)
        .with_matched_at(-1_500)
        .with_labels([("tournament".to_owned(), "spring cup".to_owned())].into())
        .with_clocks_start_at(Some(2_500));
        let mut state = GameState::new(config.clone(), 0);
        let mut events = vec![Event::GameCreated(config)];
        for (seat, column) in [(0, 0), (1, 1), (0, 0), (1, 1), (0, 0), (1, 1), (0, 0)] {
            let cmd = Command::Play {
                seat: Some(Seat(seat)),
                mv: Move::Drop { column },
            };
            events.extend(decide(&state, &cmd, 0).unwrap());
            evolve(&mut state, events.last().unwrap(), 0);
        }
        events.extend(
            decide(
                &state,
                &Command::Undo {
                    requested_by: Some(Seat(1)),
                },
                0,
            )
            .unwrap(),
        );
        // The events around the moves, each in a shape decide gives.
        let seat = Seat(1);
        events.extend([
            Event::TimeExpired { seat },
            Event::SeatOut {
                seat,
                reason: EndReason::Timeout,
            },
            Event::GameEnded {
                outcome: None,
                reason: EndReason::Aborted,
            },
            Event::GameEnded {
                outcome: Some(Outcome::Win {
                    seat,
                    line: Vec::new(),
                }),
                reason: EndReason::Resignation,
            },
            Event::DrawOffered { seat },
            Event::DrawAccepted { seat },
            Event::DrawDeclined { seat },
            Event::TakebackRequested { seat },
            Event::TakebackAccepted { seat },
            Event::TakebackDeclined { seat },
            Event::RematchRequested { seat, rotate: true },
            Event::RoundStarted {
                round: 1,
                first: seat,
            },
        ]);
        if let Some(Event::MovePlayed {
            seat, ply, played, ..
        }) = events.get(1).cloned()
        {
            events.push(Event::MoveRedone {
                seat,
                ply,
                played: played.clone(),
            });
            events.push(Event::MovePlayed {
                seat,
                ply,
                played,
                chosen_by: Some(Chooser {
                    engine: EngineKind::Mcts,
                    strength: 3,
                    proven: false,
                }),
            });
        }
        events.push(Event::GameCreated(bot_config));
        let rules = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
        for (i, event) in events.iter().enumerate() {
            let wire = event_to_proto("g", i as u64 + 1, 1_700_000_000_123, event, &rules, 0);
            assert_eq!(timestamp_ms(wire.recorded_at.as_ref()), 1_700_000_000_123);
            assert_eq!(&event_from_proto(&wire).unwrap(), event);
        }
    }

    #[test]
    fn a_stored_roll_whose_placement_is_not_its_square_is_refused() {
        let roll = Roll {
            dice: vec![3],
            from: 0,
            passed: vec![1, 2, 3],
            jumps: Vec::new(),
            to: 3,
            sixes_before: 0,
            extra_turn: false,
            forfeit: None,
        };
        let event = Event::MovePlayed {
            seat: Seat(0),
            ply: 1,
            played: Played {
                mv: Move::Roll,
                placement: None,
                flips: Vec::new(),
                roll: Some(Box::new(roll)),
                passes: Vec::new(),
                outcome: None,
                chess: None,
            },
            chosen_by: None,
        };
        let rules = RuleSet::SnakesLadders(
            SnakesLaddersRules::new(SnakesLaddersOptions::default(), u64::MAX).unwrap(),
        );
        let mut wire = event_to_proto("g", 2, 0, &event, &rules, 0);
        let Some(pb::game_event::Kind::MovePlayed(played)) = wire.kind.as_mut() else {
            panic!("a move")
        };
        assert_eq!(played.placement, Some(pb::Cell { row: 0, col: 3 }));
        assert_eq!(event_from_proto(&wire).unwrap(), event);
        let Some(pb::game_event::Kind::MovePlayed(played)) = wire.kind.as_mut() else {
            panic!("a move")
        };
        played.placement = Some(pb::Cell { row: 0, col: 4 });
        assert_eq!(
            event_from_proto(&wire).unwrap_err().field,
            "move_played.placement"
        );
    }
}
