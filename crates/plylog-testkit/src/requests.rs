//! Builders for the requests the tests send, and the moves and rules in
//! them: one place to change when a request gains a field.

use plylog::proto as pb;

/// A seat of player `id` shown as `symbol`, displayed as "player `id`".
pub fn seat(id: &str, symbol: &str) -> pb::Seat {
    pb::Seat {
        player_id: id.into(),
        display_name: format!("player {id}"),
        symbol: symbol.into(),
        bot: None,
    }
}

/// A seat of player `id` shown as `symbol`, without a display name.
pub fn unnamed_seat(id: &str, symbol: &str) -> pb::Seat {
    pb::Seat {
        display_name: String::new(),
        ..seat(id, symbol)
    }
}

/// Alice (X) against bob (O), with display names.
pub fn two_seats() -> Vec<pb::Seat> {
    vec![seat("alice", "X"), seat("bob", "O")]
}

/// Alice (X) against bob (O), without display names.
pub fn two_unnamed_seats() -> Vec<pb::Seat> {
    vec![unnamed_seat("alice", "X"), unnamed_seat("bob", "O")]
}

/// The rules of `kind`.
pub fn rules(kind: pb::rule_set::Kind) -> pb::RuleSet {
    pb::RuleSet { kind: Some(kind) }
}

/// An m,n,k game: `k` in a row on a `rows` x `cols` board.
pub fn mnk(rows: i32, cols: i32, k: i32) -> pb::RuleSet {
    pb::RuleSet {
        kind: Some(pb::rule_set::Kind::Mnk(pb::MnkRules { rows, cols, k })),
    }
}

/// Connect Four on its default board.
pub fn connect_four() -> pb::RuleSet {
    pb::RuleSet {
        kind: Some(pb::rule_set::Kind::ConnectFour(
            pb::ConnectFourRules::default(),
        )),
    }
}

/// CreateGame for `game_id` with `rules`, alice (X) against bob (O) with
/// display names, no request id, the default undo policy, untimed: change
/// a field with `..create_request(..)`.
pub fn create_request(game_id: &str, rules: pb::RuleSet) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        request_id: String::new(),
        game_id: game_id.into(),
        rules: Some(rules),
        seats: two_seats(),
        undo_policy: pb::UndoPolicy::Unspecified as i32,
        time_control: None,
        absence: None,
        matched_at: None,
        labels: Default::default(),
        clocks_start_at: None,
    }
}

/// Places the mover's symbol on (row, col).
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

/// Drops a disc into `column` (Connect Four).
pub fn drop_in(column: i32) -> pb::Move {
    pb::Move {
        kind: Some(pb::r#move::Kind::Drop(pb::Drop { column })),
    }
}

/// SubmitMove of `mv` for `seat` in `game_id`, no request id or turn
/// token, the full view of the game in the reply: change a field with
/// `..move_request(..)`.
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

/// SubmitMove as a client that sets only the game, the seat and the move
/// sends it: the view unset (the basic view), no request id or turn token.
pub fn plain_move_request(game_id: &str, seat: u32, mv: pb::Move) -> pb::SubmitMoveRequest {
    pb::SubmitMoveRequest {
        view: pb::GameView::Unspecified as i32,
        ..move_request(game_id, seat, mv)
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
/// display names, no request id and the default undo policy.
pub fn create_mnk(game_id: &str, rows: i32, cols: i32, k: i32) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        seats: vec![unnamed_seat("a", "A"), unnamed_seat("b", "B")],
        ..create_request(game_id, mnk(rows, cols, k))
    }
}

/// A time control of `seconds` a move and no game clock.
pub fn per_move(seconds: i64) -> pb::TimeControl {
    pb::TimeControl {
        per_move: Some(prost_types::Duration { seconds, nanos: 0 }),
        ..Default::default()
    }
}

/// CreateGame for a tic-tac-toe game `game_id` ([`create_mnk`] 3x3, k=3)
/// with `per_move_secs` seconds a move ([`per_move`]).
pub fn timed_tic_tac_toe(game_id: &str, per_move_secs: i64) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        time_control: Some(per_move(per_move_secs)),
        ..create_mnk(game_id, 3, 3, 3)
    }
}

/// SubmitAction of `action` for `seat` in `game_id`, no request id or turn
/// token, the full view of the game in the reply.
pub fn action_request(game_id: &str, seat: u32, action: pb::Action) -> pb::SubmitActionRequest {
    pb::SubmitActionRequest {
        game_id: game_id.into(),
        seat: Some(seat),
        action: action as i32,
        request_id: String::new(),
        expected_sequence: None,
        view: pb::GameView::Full as i32,
    }
}
