//! Real game records replayed through the game aggregate
//! ([`plylog::game::decide`] / [`plylog::game::evolve`]), kept in
//! `tests/fixtures/` with their sources noted in each folder's README:
//!
//! - `gomoku/playok-15x15-exact5.tsv`: 190 real PlayOK games played under the
//!   exact-five rule. Each must end exactly at the stone that makes its final
//!   five (never earlier), an overline must not end it, and the same game in
//!   freestyle must end at its overline.
//! - `gomoku/gomocup-1x0-16.psq`: a Gomocup 20x20 freestyle engine game whose
//!   second player completes five with the 16th stone.

use crate::T0;
use plylog::game::{Command, Event, GameConfig, GameState, decide, evolve};
use plylog::rules::{Coord, GomokuRules, Move, Outcome, Overline, Played, RuleSet, Seat};

const PLAYOK: &str = include_str!("../fixtures/gomoku/playok-15x15-exact5.tsv");
const GOMOCUP: &str = include_str!("../fixtures/gomoku/gomocup-1x0-16.psq");

fn gomoku(side: i64, overline: Overline) -> GameConfig {
    let rules = RuleSet::Gomoku(
        GomokuRules::new(Some(side), Some(side), None, overline, 1_000_000).unwrap(),
    );
    crate::table(rules, &["black", "white"])
}

/// Plays `stones` alternately from seat 0 and returns the 1-based number of
/// the stone that ended the game with its outcome, if one did. Every stone
/// must be accepted while the game is on; stones after the end are refused.
fn play(config: GameConfig, stones: &[Coord]) -> Option<(usize, Outcome)> {
    let mut state = GameState::new(config, T0);
    let mut ended = None;
    for (i, &at) in stones.iter().enumerate() {
        let command = Command::Play {
            seat: Some(Seat((i % 2) as u8)),
            mv: Move::Place(at),
        };
        match decide(&state, &command, T0) {
            Ok(events) => {
                for event in &events {
                    if let Event::MovePlayed {
                        played:
                            Played {
                                outcome: Some(outcome),
                                ..
                            },
                        ..
                    } = event
                    {
                        ended = Some((i + 1, outcome.clone()));
                    }
                    evolve(&mut state, event, T0);
                }
            }
            Err(error) => {
                assert!(
                    ended.is_some(),
                    "stone {} at {at} refused during play: {error}",
                    i + 1
                );
                break;
            }
        }
    }
    ended
}

struct Record {
    id: String,
    final_line: usize,
    overline_at: Option<usize>,
    stones: Vec<Coord>,
}

/// `a`..`o` is the column from the left, `1`..`15` the row from the bottom.
fn playok_cell(text: &str) -> Coord {
    let col = u32::from(text.as_bytes()[0] - b'a');
    let row: u32 = text[1..].parse().unwrap();
    Coord::new(15 - row, col)
}

fn playok_games() -> Vec<Record> {
    PLAYOK
        .lines()
        .skip(1)
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            Record {
                id: fields[0].to_owned(),
                final_line: fields[7].parse().unwrap(),
                overline_at: fields[8].split(',').next().and_then(|n| n.parse().ok()),
                stones: fields[9].split_whitespace().map(playok_cell).collect(),
            }
        })
        .collect()
}

#[test]
fn every_playok_game_ends_exactly_at_its_final_five_under_the_exact_five_rule() {
    let games = playok_games();
    assert_eq!(games.len(), 190);
    let mut fives = 0;
    for game in &games {
        let ended = play(gomoku(15, Overline::DoesNotWin), &game.stones);
        if game.final_line == 5 {
            fives += 1;
            let last = game.stones.len();
            let Some((at, Outcome::Win { seat, line })) = ended else {
                panic!(
                    "{}: the final five did not end the game ({ended:?})",
                    game.id
                );
            };
            assert_eq!(
                at, last,
                "{}: ended at stone {at}, not at the final five",
                game.id
            );
            assert_eq!(seat, Seat(((last - 1) % 2) as u8), "{}", game.id);
            assert_eq!(line.len(), 5, "{}", game.id);
            assert!(line.contains(&game.stones[last - 1]), "{}", game.id);
        } else {
            assert_eq!(ended, None, "{}: ended without a five", game.id);
        }
    }
    assert_eq!(fives, 172);
}

#[test]
fn an_overline_ends_a_record_only_under_freestyle() {
    let games = playok_games();
    let with_overline: Vec<&Record> = games.iter().filter(|g| g.overline_at.is_some()).collect();
    assert_eq!(
        with_overline
            .iter()
            .map(|g| g.id.as_str())
            .collect::<Vec<_>>(),
        ["pok-135"]
    );
    let game = with_overline[0];
    assert_eq!(play(gomoku(15, Overline::DoesNotWin), &game.stones), None);
    let Some((at, Outcome::Win { seat, line })) = play(gomoku(15, Overline::Wins), &game.stones)
    else {
        panic!("freestyle: the overline did not end the game");
    };
    assert_eq!((at, seat), (30, Seat(1)));
    assert!(line.len() >= 5);
}

#[test]
fn the_gomocup_game_ends_on_its_sixteenth_stone_with_the_second_player_winning() {
    let mut lines = GOMOCUP.lines();
    assert!(lines.next().unwrap().starts_with("Piskvorky 20x20"));
    let stones: Vec<Coord> = lines
        .map_while(|line| {
            let fields: Vec<u32> = line
                .trim()
                .split(',')
                .map(|f| f.parse().ok())
                .collect::<Option<_>>()?;
            (fields.len() == 3).then(|| Coord::new(fields[1] - 1, fields[0] - 1))
        })
        .collect();
    assert_eq!(stones.len(), 16);
    let Some((at, Outcome::Win { seat, line })) = play(gomoku(20, Overline::Wins), &stones) else {
        panic!("the game did not end");
    };
    assert_eq!((at, seat, line.len()), (16, Seat(1), 5));
    // Row y=12 (row index 11), x = 11..15 (columns 10..14).
    assert_eq!(
        line,
        (10..15).map(|c| Coord::new(11, c)).collect::<Vec<_>>()
    );
}
