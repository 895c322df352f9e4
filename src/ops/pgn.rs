//! PGN for `plylog export --format pgn` and `plylog import --format pgn`.
//!
//! # Export
//! A chess game's log as PGN, one PGN game per round (a rematch is a new
//! round of the same game).
//!
//! The tags: the seven-tag roster (`Event` is `plylog`, `Site` the game's
//! id, `Date` the day the round started (UTC), `Round` the round counted
//! from 1, `White` and `Black` the seats' display names or player ids,
//! `Result`), `SetUp` and `FEN` for a start that is not the standard one,
//! `Variant` for Chess960, and `Termination` (PGN's values: `normal`,
//! `time forfeit`, `abandoned`, `unterminated`) with `PlyLogEnd`, the
//! plylog end reason (`checkmate`, `threefold_repetition`, ...). The
//! movetext is each move's SAN as the log recorded it, undone moves left
//! out. In a game with a clock, each move is followed by the mover's
//! clock after it, as lichess writes it (`{ [%clk 0:04:58] }`: hours,
//! minutes, seconds, rounded down), read off the log replayed.
//!
//! # Import
//! Each PGN game becomes a game's log, played through the rules as
//! SubmitMove plays moves: its id is the last part of its `Site` tag when
//! that is an address (lichess's game id), or `pgn-N` for the file's N-th
//! game; a `Variant` other than standard chess or Chess960 is refused;
//! seat 0 is the side to move at the start (`White`, or `Black` after a
//! FEN with Black to move), each seat's player id the tag's name; the
//! start is the `FEN` tag's (Chess960 with `Variant "Chess960"`); events
//! are recorded at the `UTCDate` and `UTCTime` tags' time (or `Date`'s
//! day). A result the moves do not reach on the board is recorded as the
//! players would make it: the loser resigns, or a draw is offered and
//! accepted. The import then checks and replays each log as it does a
//! JSON one before it writes anything.

use crate::game::{
    Action, Command, Event, GameConfig, GameState, SeatInfo, SeatLimits, decide, evolve,
};
use crate::proto as pb;
use crate::proto::convert;
use crate::registry::log;
use crate::rules::chess::pgn::{self, PgnGame, PgnMove};
use crate::rules::chess::{ChessRules, ChessVariant, DrawRule, MoveText};
use crate::rules::{Move, RuleSet, Seat};

/// The PGN games of one chess game's log (`events`, in sequence order);
/// `None` when the game is not chess.
///
/// # Errors
/// A sentence saying why: the log does not start with its creation.
pub fn games_of(game_id: &str, events: &[pb::GameEvent]) -> Result<Option<Vec<PgnGame>>, String> {
    use pb::game_event::Kind;
    let Some(Kind::GameCreated(created)) = events.first().and_then(|e| e.kind.as_ref()) else {
        return Err(format!(
            "game {game_id}: the log does not start with its creation"
        ));
    };
    let Some(pb::rule_set::Kind::Chess(rules)) =
        created.rules.as_ref().and_then(|r| r.kind.as_ref())
    else {
        return Ok(None);
    };
    let names: Vec<String> = created
        .seats
        .iter()
        .map(|seat| match seat.display_name.as_str() {
            "" => seat.player_id.clone(),
            name => name.to_owned(),
        })
        .collect();
    // Seat 0 plays the side to move at the start.
    let black_starts = rules.fen.split_whitespace().nth(1) == Some("b");
    // A game with a clock is replayed beside, for each move's clock.
    let mut clocked = match convert::event_from_proto(&events[0]) {
        Ok(Event::GameCreated(config))
            if config.time_control().is_some_and(|tc| tc.clock.is_some()) =>
        {
            Some(GameState::new(config, log::recorded_at(&events[0])))
        }
        _ => None,
    };
    let mut round = Round::new(&events[0], 0, 0);
    let mut games = Vec::new();
    for event in &events[1..] {
        if let Some(state) = &mut clocked {
            let applied = convert::event_from_proto(event)
                .map_err(|e| e.to_string())
                .and_then(|e| {
                    state
                        .apply_stored(&e, log::recorded_at(event))
                        .map_err(|e| e.to_string())
                });
            if applied.is_err() {
                // `plylog verify` says what is wrong; the moves are still
                // written, without clocks.
                clocked = None;
            }
        }
        match &event.kind {
            Some(Kind::MovePlayed(played) | Kind::MoveRedone(played)) => {
                let san = played
                    .chess
                    .as_ref()
                    .map(|c| c.san.clone())
                    .unwrap_or_default();
                let comment = clocked.as_ref().and_then(|state| {
                    let left = *state.clocks().remaining_ms.get(played.seat as usize)?;
                    Some(format!("[%clk {}]", clock_text(left)))
                });
                round.moves.push(PgnMove {
                    san,
                    comment,
                    ..PgnMove::default()
                });
                if let Some(outcome) = &played.outcome {
                    round.end = Some(outcome.clone());
                }
            }
            Some(Kind::MoveUndone(_)) => {
                // A move taken back takes back the end it made.
                round.moves.pop();
                round.end = None;
            }
            Some(Kind::GameEnded(ended)) => round.end = ended.outcome.clone(),
            Some(Kind::RoundStarted(started)) => {
                let next = Round::new(event, started.round, started.first);
                games.push(std::mem::replace(&mut round, next));
            }
            _ => {}
        }
    }
    games.push(round);
    Ok(Some(
        games
            .into_iter()
            .map(|round| round.pgn(game_id, rules, &names, black_starts))
            .collect(),
    ))
}

/// One round of the game, as the log tells it so far.
struct Round {
    number: u32,
    first: u32,
    started: Option<prost_types::Timestamp>,
    moves: Vec<PgnMove>,
    end: Option<pb::Outcome>,
}

impl Round {
    fn new(event: &pb::GameEvent, number: u32, first: u32) -> Self {
        Round {
            number,
            first,
            started: event.recorded_at,
            moves: Vec::new(),
            end: None,
        }
    }

    fn pgn(
        self,
        game_id: &str,
        rules: &pb::ChessRules,
        names: &[String],
        black_starts: bool,
    ) -> PgnGame {
        // The seat playing White: seat 0 plays the start's side to move,
        // or the other side when this round's first mover is seat 1.
        let white_seat = usize::from(black_starts) ^ (self.first as usize % 2);
        let name = |seat: usize| names.get(seat).cloned().unwrap_or_else(|| "?".into());
        let (result, termination, end) = match &self.end {
            None => ("*", "unterminated", None),
            Some(outcome) => {
                let reason = outcome.reason();
                let result = match &outcome.kind {
                    Some(pb::outcome::Kind::Win(win)) if win.seat as usize == white_seat => "1-0",
                    Some(pb::outcome::Kind::Win(_)) => "0-1",
                    Some(pb::outcome::Kind::Draw(_)) => "1/2-1/2",
                    _ => "*",
                };
                let termination = match reason {
                    pb::EndReason::Timeout => "time forfeit",
                    pb::EndReason::Abandoned => "abandoned",
                    pb::EndReason::Aborted => "unterminated",
                    _ => "normal",
                };
                (result, termination, Some(reason))
            }
        };
        // RFC 3339's day (prost's Display of a Timestamp) in PGN's form.
        let date = self.started.map_or_else(
            || "????.??.??".to_owned(),
            |at| {
                at.to_string()
                    .get(..10)
                    .unwrap_or("????-??-??")
                    .replace('-', ".")
            },
        );
        let mut tags: Vec<(String, String)> = [
            ("Event", "plylog".to_owned()),
            ("Site", game_id.to_owned()),
            ("Date", date),
            ("Round", (self.number + 1).to_string()),
            ("White", name(white_seat)),
            ("Black", name(1 - white_seat)),
            ("Result", result.to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        if rules.variant() == pb::ChessVariant::Chess960 {
            tags.push(("Variant".into(), "Chess960".into()));
        }
        if !rules.fen.is_empty() {
            tags.push(("SetUp".into(), "1".into()));
            tags.push(("FEN".into(), rules.fen.clone()));
        }
        tags.push(("Termination".into(), termination.into()));
        if let Some(reason) = end {
            let name = reason.as_str_name().trim_start_matches("END_REASON_");
            tags.push(("PlyLogEnd".into(), name.to_ascii_lowercase()));
        }
        PgnGame {
            tags,
            moves: self.moves,
            result: result.to_owned(),
        }
    }
}

/// The logs of the games of a PGN text, each as its game id and events,
/// recorded at `now_ms` where the game's tags give no time.
///
/// # Errors
/// A sentence naming the game (its number in the text, from 1) and why:
/// the text does not read as PGN, a start or a move is refused by the
/// rules.
pub(super) fn logs_of(
    text: &str,
    now_ms: i64,
) -> Result<Vec<(String, Vec<pb::GameEvent>)>, String> {
    let games = pgn::parse(text).map_err(|e| format!("the PGN does not read: {e}"))?;
    games
        .iter()
        .enumerate()
        .map(|(at, game)| {
            log_of(at + 1, game, now_ms).map_err(|why| format!("game {}: {why}", at + 1))
        })
        .collect()
}

/// One PGN game (the `number`-th of its text) as a game's log.
fn log_of(
    number: usize,
    game: &PgnGame,
    now_ms: i64,
) -> Result<(String, Vec<pb::GameEvent>), String> {
    // A site that is a game's address (lichess's) names it; a place does
    // not.
    let game_id = game
        .tag("Site")
        .filter(|site| site.contains("://"))
        .and_then(|site| site.rsplit('/').next())
        .filter(|id| crate::api::check_game_id(id).is_ok())
        .map_or_else(|| format!("pgn-{number}"), str::to_owned);
    let variant = match game.tag("Variant").map(str::to_ascii_lowercase).as_deref() {
        None | Some("standard" | "from position") => ChessVariant::Standard,
        Some("chess960" | "fischerandom") => ChessVariant::Chess960,
        Some(_) => {
            return Err(format!(
                "variant {:?}: only standard chess and Chess960 are played here",
                game.tag("Variant").unwrap_or_default()
            ));
        }
    };
    let rules = ChessRules::new(variant, game.tag("FEN"), None, DrawRule::Claimed)
        .map_err(|e| format!("the start: {e}"))?;
    let black_starts = rules.start().side_to_move() == crate::rules::chess::Side::Black;
    let seat = |tag: &str, symbol: &str| SeatInfo {
        player_id: game
            .tag(tag)
            .filter(|name| !name.is_empty())
            .unwrap_or(tag)
            .to_owned(),
        display_name: String::new(),
        symbol: symbol.to_owned(),
        bot: None,
    };
    let mut seats = vec![seat("White", "W"), seat("Black", "B")];
    if black_starts {
        seats.reverse();
    }
    let rule_set = RuleSet::Chess(rules);
    let config = GameConfig::new(rule_set.clone(), seats, SeatLimits::default())
        .map_err(|e| e.to_string())?;
    let at = recorded_at(game).unwrap_or(now_ms);
    let mut state = GameState::new(config.clone(), at);
    let mut events = vec![Event::GameCreated(config)];
    let mut play = |state: &mut GameState, command: Command| -> Result<(), String> {
        for event in decide(state, &command, at).map_err(|e| e.to_string())? {
            evolve(state, &event, at);
            events.push(event);
        }
        Ok(())
    };
    for (ply, mv) in game.moves.iter().enumerate() {
        let text = MoveText::new(&mv.san)
            .ok_or_else(|| format!("move {} ({}) is not a move", ply + 1, mv.san))?;
        let seat = state.to_move();
        play(
            &mut state,
            Command::Play {
                seat,
                mv: Move::ChessText(text),
            },
        )
        .map_err(|why| format!("move {} ({}): {why}", ply + 1, mv.san))?;
    }
    if state.to_move().is_some() {
        // The result was reached off the board.
        let white = Seat(u8::from(black_starts));
        let black = Seat(1 - white.0);
        let to_move = state.to_move();
        let steps: Vec<(Seat, Action)> = match game.result.as_str() {
            "1-0" => vec![(black, Action::Resign)],
            "0-1" => vec![(white, Action::Resign)],
            "1/2-1/2" => {
                let offering = to_move.unwrap_or(white);
                vec![
                    (offering, Action::OfferDraw),
                    (Seat(1 - offering.0), Action::AcceptDraw),
                ]
            }
            _ => Vec::new(),
        };
        for (seat, action) in steps {
            play(
                &mut state,
                Command::Act {
                    seat: Some(seat),
                    action,
                },
            )
            .map_err(|why| format!("the result {}: {why}", game.result))?;
        }
    }
    let wire = events
        .iter()
        .zip(1..)
        .map(|(event, sequence)| {
            convert::event_to_proto(&game_id, sequence, at, event, &rule_set, 0)
        })
        .collect();
    Ok((game_id, wire))
}

/// When a PGN game was played, Unix epoch milliseconds: its `UTCDate` and
/// `UTCTime` (lichess's tags), or its `Date` at midnight UTC; `None` when
/// neither reads.
fn recorded_at(game: &PgnGame) -> Option<i64> {
    let date = game
        .tag("UTCDate")
        .or_else(|| game.tag("Date"))?
        .replace('.', "-");
    let time = match game.tag("UTCDate") {
        Some(_) => game.tag("UTCTime").unwrap_or("00:00:00"),
        None => "00:00:00",
    };
    let at: prost_types::Timestamp = format!("{date}T{time}Z").parse().ok()?;
    Some(convert::timestamp_ms(Some(&at)))
}

/// Milliseconds as a PGN clock: `H:MM:SS`, rounded down.
fn clock_text(ms: i64) -> String {
    let seconds = ms.max(0) / 1000;
    format!(
        "{}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{ExpiryPolicy, Fischer, TimeControl};

    #[test]
    fn a_timed_game_writes_each_movers_clock_after_its_move() {
        let seats = ["white", "black"].map(|id| SeatInfo {
            player_id: id.into(),
            display_name: String::new(),
            symbol: id[..1].to_ascii_uppercase(),
            bot: None,
        });
        let rules = RuleSet::Chess(ChessRules::standard());
        let config = GameConfig::new(rules.clone(), seats.to_vec(), SeatLimits::default())
            .unwrap()
            .with_time_control(
                TimeControl {
                    per_move_ms: None,
                    clock: Some(Fischer {
                        initial_ms: 180_000,
                        increment_ms: 2_000,
                    }),
                    on_expiry: ExpiryPolicy::Forfeit,
                    seed: 0,
                },
                1_000,
            )
            .unwrap();
        // White thinks 5.5 s, Black 61 s, White 0.2 s.
        let start = 1_764_547_200_000;
        let mut state = GameState::new(config.clone(), start);
        let mut events = vec![(Event::GameCreated(config), start)];
        for (san, at) in [("e4", 5_500), ("e5", 66_500), ("Nf3", 66_700)] {
            let text = MoveText::new(san).unwrap();
            let command = Command::Play {
                seat: Some(state.to_move().unwrap()),
                mv: Move::ChessText(text),
            };
            for event in decide(&state, &command, start + at).unwrap() {
                evolve(&mut state, &event, start + at);
                events.push((event, start + at));
            }
        }
        let wire: Vec<pb::GameEvent> = events
            .iter()
            .zip(1..)
            .map(|((event, at), sequence)| {
                convert::event_to_proto("g", sequence, *at, event, &rules, 0)
            })
            .collect();
        let games = games_of("g", &wire).unwrap().unwrap();
        let comments: Vec<_> = games[0].moves.iter().map(|m| m.comment.clone()).collect();
        assert_eq!(
            comments,
            [
                Some("[%clk 0:02:56]".to_owned()),
                Some("[%clk 0:02:01]".to_owned()),
                Some("[%clk 0:02:58]".to_owned())
            ]
        );
        assert_eq!(clock_text(3_725_999), "1:02:05");
    }
}
