//! Builders for the requests the tests send, and the moves and rules in
//! them: one place to change when a request gains a field.

use plylog::proto as pb;

pub fn seat(id: &str, symbol: &str) -> pb::Seat {
    pb::Seat {
        player_id: id.into(),
        display_name: format!("player {id}"),
        symbol: symbol.into(),
        bot: None,
    }
}

pub fn two_seats() -> Vec<pb::Seat> {
    vec![seat("alice", "X"), seat("bob", "O")]
}

pub fn mnk(rows: i32, cols: i32, k: i32) -> pb::RuleSet {
    pb::RuleSet {
        kind: Some(pb::rule_set::Kind::Mnk(pb::MnkRules { rows, cols, k })),
    }
}

pub fn connect_four() -> pb::RuleSet {
    pb::RuleSet {
        kind: Some(pb::rule_set::Kind::ConnectFour(
            pb::ConnectFourRules::default(),
        )),
    }
}

pub fn create_request(game_id: &str, rules: pb::RuleSet) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        request_id: String::new(),
        game_id: game_id.into(),
        rules: Some(rules),
        seats: two_seats(),
        undo_policy: pb::UndoPolicy::Unspecified as i32,
        time_control: None,
        absence: None,
    }
}

pub fn place(row: i32, col: i32) -> pb::Move {
    pb::Move {
        kind: Some(pb::r#move::Kind::Place(pb::Place {
            row,
            col,
            mark: None,
        })),
    }
}

/// Places seat `mark`'s symbol on (row, col), in a wild game.
pub fn place_mark(row: i32, col: i32, mark: u32) -> pb::Move {
    pb::Move {
        kind: Some(pb::r#move::Kind::Place(pb::Place {
            row,
            col,
            mark: Some(mark),
        })),
    }
}

pub fn drop_in(column: i32) -> pb::Move {
    pb::Move {
        kind: Some(pb::r#move::Kind::Drop(pb::Drop { column })),
    }
}

pub fn move_request(game_id: &str, seat: u32, mv: pb::Move) -> pb::SubmitMoveRequest {
    pb::SubmitMoveRequest {
        game_id: game_id.into(),
        seat: Some(seat),
        r#move: Some(mv),
        request_id: String::new(),
        expected_sequence: None,
        view: pb::GameView::Full as i32,
    }
}

/// X (seat 0) takes the top row; O plays (1,0) and (1,1) in between. The
/// fifth move wins.
pub fn x_wins_top_row() -> [pb::Move; 5] {
    [
        place(0, 0),
        place(1, 0),
        place(0, 1),
        place(1, 1),
        place(0, 2),
    ]
}

/// CreateGame for an m,n,k game `game_id` with two seats, A and B, no
/// request id and the default undo policy.
pub fn create_mnk(game_id: &str, rows: i32, cols: i32, k: i32) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        request_id: String::new(),
        game_id: game_id.into(),
        rules: Some(pb::RuleSet {
            kind: Some(pb::rule_set::Kind::Mnk(pb::MnkRules { rows, cols, k })),
        }),
        seats: ["a", "b"]
            .map(|s| pb::Seat {
                player_id: s.into(),
                display_name: String::new(),
                symbol: s.to_uppercase(),
                bot: None,
            })
            .to_vec(),
        undo_policy: 0,
        time_control: None,
        absence: None,
    }
}
