//! Requests the process-level tests share. Included with `#[path]`.

use plylog::proto as pb;

/// CreateGame for an m,n,k game `game_id` with two seats, A and B, no
/// request id and the default undo policy.
pub(crate) fn create_mnk(game_id: &str, rows: i32, cols: i32, k: i32) -> pb::CreateGameRequest {
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
