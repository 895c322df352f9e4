//! Checks the pure rules ([`plylog::rules`]) and the game aggregate
//! ([`plylog::game`]) against published tic-tac-toe reference data, kept in
//! `tests/fixtures/tictactoe/` (its README names the sources and licence):
//!
//! - `uci-tic-tac-toe-endgame.data`: 639 rows of the UCI Machine Learning
//!   Repository "Tic-Tac-Toe Endgame" data set (D. W. Aha, 1991), terminal
//!   3x3 boards reachable when X moves first, labelled `positive` exactly when
//!   X has three in a row. The win detector ([`lines::k_in_a_row`]) must judge
//!   every board as labelled, and every board must be reachable by legal play
//!   through [`decide`] / [`evolve`], its last move ending the game as labelled.
//! - `reference-counts.json`: the published size of the game tree (255,168
//!   complete games: 131,184 X wins, 77,904 O wins, 46,080 draws; 5,478
//!   distinct reachable boards). A depth-first walk of the whole tree through
//!   [`decide`] / [`evolve`], playing every move [`RuleSet::legal_moves`]
//!   lists and taking each back with [`Command::Undo`], must reproduce them
//!   exactly.
//!
//! X is seat 0 and moves first; O is seat 1. Squares are row-major from the
//! top-left corner, as in the UCI file and in [`Coord`].

use crate::{T0, untimed};
use std::collections::HashSet;

use plylog::game::{Command, Event, GameConfig, GameError, GameState, SeatLimits, decide, evolve};
use plylog::rules::{Coord, MnkRules, Move, Outcome, Played, Position, RuleSet, Seat, lines};

/// The UCI endgame rows: nine squares (`x`, `o`, `b`) then `positive` or
/// `negative`, one board per line.
const UCI_ENDGAME: &str = include_str!("../fixtures/tictactoe/uci-tic-tac-toe-endgame.data");

/// The published game-tree counts.
const REFERENCE_COUNTS: &str = include_str!("../fixtures/tictactoe/reference-counts.json");

/// How many rows the UCI fixture holds (two thirds of the 958 boards).
const UCI_ROWS: usize = 639;

const X: Seat = Seat(0);
const O: Seat = Seat(1);

/// Squares on the board, and pieces in a row needed to win.
const CELLS: usize = 9;
const K: u32 = 3;

fn tic_tac_toe() -> RuleSet {
    RuleSet::Mnk(MnkRules::TIC_TAC_TOE)
}

fn config() -> GameConfig {
    use crate::seat;
    GameConfig::new(
        tic_tac_toe(),
        vec![seat("x", "X"), seat("o", "O")],
        SeatLimits::default(),
    )
    .expect("two seats with distinct symbols are a valid table")
}

/// The cell of the 0-based row-major square `index`.
fn cell(index: usize) -> Coord {
    Coord::new((index / 3) as u32, (index % 3) as u32)
}

/// One labelled board of the UCI file.
struct EndgameBoard {
    /// 1-based line in the fixture, for failure messages.
    line: usize,
    /// The squares in row-major order, `None` for blank.
    squares: [Option<Seat>; CELLS],
    /// The label: `positive` means X has three in a row.
    x_has_a_line: bool,
}

impl EndgameBoard {
    fn pieces(&self) -> impl Iterator<Item = (Coord, Seat)> + '_ {
        self.squares
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.map(|seat| (cell(i), seat)))
    }

    fn piece_count(&self) -> u64 {
        self.squares.iter().flatten().count() as u64
    }

    /// The board drawn as three `xob` rows, for failure messages.
    fn picture(&self) -> String {
        let symbol = |s: &Option<Seat>| match s {
            Some(X) => 'x',
            Some(_) => 'o',
            None => 'b',
        };
        let rows: Vec<String> = self
            .squares
            .chunks(3)
            .map(|row| row.iter().map(symbol).collect())
            .collect();
        rows.join("/")
    }
}

fn uci_endgame_boards() -> Vec<EndgameBoard> {
    UCI_ENDGAME
        .lines()
        .enumerate()
        .filter(|(_, text)| !text.trim().is_empty())
        .map(|(i, text)| {
            let line = i + 1;
            let fields: Vec<&str> = text.trim().split(',').collect();
            assert_eq!(
                fields.len(),
                CELLS + 1,
                "line {line}: expected 10 fields in {text:?}"
            );
            let mut squares = [None; CELLS];
            for (square, field) in squares.iter_mut().zip(&fields) {
                *square = match *field {
                    "x" => Some(X),
                    "o" => Some(O),
                    "b" => None,
                    other => panic!("line {line}: square {other:?} is not x, o or b"),
                };
            }
            let x_has_a_line = match fields[CELLS] {
                "positive" => true,
                "negative" => false,
                other => panic!("line {line}: class {other:?} is not positive or negative"),
            };
            EndgameBoard {
                line,
                squares,
                x_has_a_line,
            }
        })
        .collect()
}

/// Whether `seat` has K in a row anywhere on `position`, asking the rules'
/// own detector through each of its pieces.
fn has_a_line(position: &Position, seat: Seat) -> bool {
    let board = position.board().expect("a board");
    board
        .pieces()
        .filter(|&(_, owner)| owner == seat)
        .any(|(at, _)| lines::k_in_a_row(board, at, seat, K).is_some())
}

/// Decides `command` on `state` and applies the events, panicking when it is
/// refused. Returns the events.
fn submit(state: &mut GameState, command: Command) -> Vec<Event> {
    let events = decide(state, &command, T0)
        .unwrap_or_else(|e| panic!("{command:?} was refused after {:?}: {e}", state.moves()));
    for event in &events {
        evolve(state, event, T0);
    }
    events
}

/// Plays the pieces of `target` onto `state` (which holds a subset of them)
/// in some order the rules accept in which no move before the last ends the
/// game, trying orders depth-first and taking back dead ends with
/// [`Command::Undo`]. Returns whether such an order exists; when it does,
/// `state` is left on the full target board, and every event is pushed onto
/// `log`.
fn play_to(state: &mut GameState, target: &EndgameBoard, log: &mut Vec<Event>) -> bool {
    if state.position().board().expect("a board").filled() == target.piece_count() {
        return true;
    }
    let Some(seat) = state.to_move() else {
        // The game ended before the last piece of the target was placed.
        return false;
    };
    let candidates: Vec<Coord> = target
        .pieces()
        .filter(|&(at, owner)| {
            owner == seat && state.position().board().expect("a board").at(at).is_none()
        })
        .map(|(at, _)| at)
        .collect();
    for at in candidates {
        log.extend(submit(
            state,
            Command::Play {
                seat: Some(seat),
                mv: Move::Place(at),
            },
        ));
        if play_to(state, target, log) {
            return true;
        }
        log.extend(submit(
            state,
            Command::Undo {
                requested_by: Some(seat),
            },
        ));
    }
    false
}

/// Reads `"key": <number>` inside the JSON object named `section` of the
/// reference-counts fixture (a flat hand parse: the file is small and fixed).
fn reference_count(section: &str, key: &str) -> u64 {
    let json = REFERENCE_COUNTS;
    let start = json
        .find(&format!("\"{section}\""))
        .unwrap_or_else(|| panic!("reference-counts.json has no {section:?} section"));
    let object = &json[start..];
    let object = &object[..object.find('}').expect("the section's object is closed")];
    let name = format!("\"{key}\"");
    let after = object
        .find(&name)
        .map(|i| &object[i + name.len()..])
        .unwrap_or_else(|| panic!("section {section:?} has no {key:?}"));
    let value = after
        .trim_start()
        .strip_prefix(':')
        .expect("a colon after the key")
        .trim_start();
    let digits: String = value.chars().take_while(char::is_ascii_digit).collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("{section}.{key} is not a whole number: {value:?}"))
}

#[test]
fn every_uci_endgame_board_is_judged_as_its_label_says() {
    let rules = tic_tac_toe();
    let boards = uci_endgame_boards();
    assert_eq!(boards.len(), UCI_ROWS, "rows read from the UCI fixture");

    let mut failures = Vec::new();
    let (mut x_lines, mut o_lines, mut draws) = (0, 0, 0);
    for board in &boards {
        let mut position = rules.initial_position(2);
        for (at, seat) in board.pieces() {
            rules.apply(
                &mut position,
                seat,
                &Played::placed(Move::Place(at), at, None),
            );
        }
        let (x_line, o_line) = (has_a_line(&position, X), has_a_line(&position, O));
        let full = position.board().expect("a board").is_full();
        let (line, picture) = (board.line, board.picture());
        if x_line != board.x_has_a_line {
            failures.push(format!(
                "line {line} {picture}: labelled x_has_a_line={}, the rules say {x_line}",
                board.x_has_a_line
            ));
        }
        // Every board in the data set is a terminal board of legal play, which
        // stops at the first line: so never both lines, and a `negative` board
        // is an O line or a full-board draw.
        if x_line && o_line {
            failures.push(format!("line {line} {picture}: both X and O have a line"));
        }
        if !board.x_has_a_line && !o_line && !full {
            failures.push(format!(
                "line {line} {picture}: negative, yet no O line and not full"
            ));
        }
        match (x_line, o_line) {
            (true, _) => x_lines += 1,
            (false, true) => o_lines += 1,
            (false, false) => draws += 1,
        }
    }
    assert!(
        failures.is_empty(),
        "{} boards misjudged:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(
        (x_lines, o_lines + draws),
        (418, 221),
        "positive and negative rows"
    );
}

#[test]
fn every_uci_endgame_board_is_reached_by_legal_play_and_ends_as_labelled() {
    let boards = uci_endgame_boards();
    assert_eq!(boards.len(), UCI_ROWS, "rows read from the UCI fixture");

    let mut failures = Vec::new();
    for board in &boards {
        let (line, picture) = (board.line, board.picture());
        let config = config();
        let mut state = GameState::new(config.clone(), T0);
        let mut log = vec![Event::GameCreated(config)];
        if !play_to(&mut state, board, &mut log) {
            failures.push(format!(
                "line {line} {picture}: no legal order of moves reaches it"
            ));
            continue;
        }
        let last = state
            .moves()
            .last()
            .cloned()
            .expect("a terminal board has pieces");
        let ended_as_labelled = match state.outcome() {
            Some(Outcome::Win { seat, line: run }) => {
                let run_is_the_winners = run.len() >= K as usize
                    && last.placement.is_some_and(|at| run.contains(&at))
                    && run.iter().all(|&at| {
                        state.position().board().expect("a board").at(at) == Some(*seat)
                    });
                run_is_the_winners && (*seat == X) == board.x_has_a_line && *seat == last.seat
            }
            Some(Outcome::Draw) => !board.x_has_a_line && board.piece_count() == CELLS as u64,
            None => false,
        };
        if !ended_as_labelled {
            failures.push(format!(
                "line {line} {picture}: labelled x_has_a_line={}, the last move gave {:?}",
                board.x_has_a_line,
                state.outcome()
            ));
        }
        // The live state must equal the replay of its own log, undos included.
        match GameState::replay(untimed(log)) {
            Ok(replayed) if replayed == state => {}
            other => failures.push(format!("line {line} {picture}: replay gave {other:?}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} boards failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// What the walk of the game tree counts.
#[derive(Default)]
struct Tree {
    games: u64,
    x_wins: u64,
    o_wins: u64,
    draws: u64,
    plays: u64,
    /// Every board seen, as a base-3 number of its squares (0 empty, 1 X, 2 O).
    boards: HashSet<u32>,
}

fn board_key(position: &Position) -> u32 {
    let board = position.board().expect("a board");
    (0..CELLS).fold(0, |key, i| {
        let square = match board.at(cell(i)) {
            None => 0,
            Some(X) => 1,
            Some(_) => 2,
        };
        key * 3 + square
    })
}

/// Plays every legal move from `state`, recurses, and takes the move back
/// with [`Command::Undo`], checking the undo restores the position exactly.
fn walk(state: &mut GameState, tree: &mut Tree) {
    tree.boards.insert(board_key(state.position()));
    let Some(seat) = state.to_move() else {
        tree.games += 1;
        match state.outcome() {
            Some(Outcome::Win { seat: X, .. }) => tree.x_wins += 1,
            Some(Outcome::Win { seat: O, .. }) => tree.o_wins += 1,
            Some(Outcome::Draw) => tree.draws += 1,
            other => panic!("the game is over with outcome {other:?}"),
        }
        let another = Command::Play {
            seat: Some(X),
            mv: Move::Place(Coord::new(0, 0)),
        };
        assert_eq!(
            decide(state, &another, T0),
            Err(GameError::GameOver),
            "a move after the end"
        );
        return;
    };
    let rules = state.config().rules();
    let moves: Vec<Move> = rules.legal_moves(state.position(), seat).collect();
    assert_eq!(
        moves.len(),
        rules.legal_move_count(state.position(), seat),
        "legal move count"
    );
    assert!(
        !moves.is_empty(),
        "no legal move, yet the game is not over: {:?}",
        state.moves()
    );

    for mv in moves {
        let (position, played) = (state.position().clone(), state.moves().to_vec());
        let events = submit(
            state,
            Command::Play {
                seat: Some(seat),
                mv,
            },
        );
        assert!(
            matches!(
                events.as_slice(),
                [Event::MovePlayed { seat: s, played: p, ply, .. }]
                    if *s == seat && p.placement.map(Move::Place) == Some(mv) && *ply as usize == played.len() + 1
            ),
            "playing {mv:?} for {seat} gave {events:?}"
        );
        tree.plays += 1;
        walk(state, tree);

        submit(
            state,
            Command::Undo {
                requested_by: Some(seat),
            },
        );
        assert_eq!(
            state.position(),
            &position,
            "undo of {mv:?} restores the board"
        );
        assert_eq!(
            state.moves(),
            played.as_slice(),
            "undo of {mv:?} restores the moves"
        );
        assert_eq!(
            state.to_move(),
            Some(seat),
            "undo of {mv:?} gives the turn back"
        );
        assert_eq!(state.outcome(), None, "undo of {mv:?} reopens the game");
    }
}

#[test]
fn walking_the_whole_game_tree_gives_the_published_numbers_of_games_and_boards() {
    let mut state = GameState::new(config(), T0);
    let mut tree = Tree::default();
    walk(&mut state, &mut tree);

    let games = |key| reference_count("complete_games", key);
    assert_eq!(tree.games, games("total"), "complete games");
    assert_eq!(tree.x_wins, games("x_wins"), "games won by X (seat 0)");
    assert_eq!(tree.o_wins, games("o_wins"), "games won by O (seat 1)");
    assert_eq!(tree.draws, games("draws"), "drawn games");
    assert_eq!(
        tree.boards.len() as u64,
        reference_count("reachable_positions", "total"),
        "distinct reachable boards, the empty and terminal ones included"
    );

    // Every play was undone: back to the empty board, one event per play and
    // per undo after GameCreated.
    assert_eq!(state.position(), &tic_tac_toe().initial_position(2));
    assert!(state.moves().is_empty());
    assert_eq!(state.to_move(), Some(X));
    assert_eq!(state.sequence(), 1 + 2 * tree.plays);
}
