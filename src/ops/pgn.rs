//! `plylog export --format pgn`: a chess game's log as PGN, one PGN game
//! per round (a rematch is a new round of the same game).
//!
//! The tags: the seven-tag roster (`Event` is `plylog`, `Site` the game's
//! id, `Date` the day the round started (UTC), `Round` the round counted
//! from 1, `White` and `Black` the seats' display names or player ids,
//! `Result`), `SetUp` and `FEN` for a start that is not the standard one,
//! `Variant` for Chess960, and `Termination` (PGN's values: `normal`,
//! `time forfeit`, `abandoned`, `unterminated`) with `PlyLogEnd`, the
//! plylog end reason (`checkmate`, `threefold_repetition`, ...). The
//! movetext is each move's SAN as the log recorded it, undone moves left
//! out. Clock comments are not written: the log records when each move
//! was made, not each clock.

use crate::proto as pb;
use crate::rules::chess::pgn::{PgnGame, PgnMove};

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
    let mut round = Round::new(&events[0], 0, 0);
    let mut games = Vec::new();
    for event in &events[1..] {
        match &event.kind {
            Some(Kind::MovePlayed(played) | Kind::MoveRedone(played)) => {
                let san = played
                    .chess
                    .as_ref()
                    .map(|c| c.san.clone())
                    .unwrap_or_default();
                round.moves.push(PgnMove {
                    san,
                    ..PgnMove::default()
                });
                if let Some(outcome) = &played.outcome {
                    round.end = Some(outcome.clone());
                }
            }
            Some(Kind::MoveUndone(_)) => {
                round.moves.pop();
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
