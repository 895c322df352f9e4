//! Games written straight into a store, as an older server or an import
//! would have left them: what the API would refuse now, or more than a test
//! would care to play.

use plylog::proto as pb;
use plylog::store::{EventStore, NewEvent, NewGame};
use prost::Message;

/// Writes game `game_id` into `store`: its GameCreated of `rules` and
/// `seats` (LastMover undo, untimed), recorded at `recorded_at_ms`, in
/// play, without seat tokens. The encoded size of the event.
pub async fn write_created(
    store: &dyn EventStore,
    game_id: &str,
    rules: pb::rule_set::Kind,
    seats: Vec<pb::Seat>,
    recorded_at_ms: i64,
) -> usize {
    let created = pb::GameEvent {
        game_id: game_id.into(),
        sequence: 1,
        recorded_at: Some(prost_types::Timestamp {
            seconds: recorded_at_ms.div_euclid(1000),
            nanos: 0,
        }),
        round: 0,
        kind: Some(pb::game_event::Kind::GameCreated(pb::GameCreated {
            rules: Some(pb::RuleSet { kind: Some(rules) }),
            seats,
            undo_policy: pb::UndoPolicy::LastMover as i32,
            time_control: None,
            absence: None,
            matched_at: None,
            labels: Default::default(),
            clocks_start_at: None,
        })),
    };
    let payload = created.encode_to_vec();
    let tags = plylog::proto::event_format::created_tags(&payload).expect("a GameCreated");
    store
        .create(NewGame {
            game_id: game_id.into(),
            created: NewEvent::chained(
                &plylog::store::chain::GENESIS,
                game_id,
                1,
                "game_created",
                payload.into(),
                recorded_at_ms,
            ),
            request: None,
            status: pb::GameStatus::InProgress as i32,
            seat_token_hashes: Vec::new(),
            wake: Default::default(),
            tags,
        })
        .await
        .expect("game written");
    created.encoded_len()
}

/// Tic-tac-toe's rules.
pub fn tic_tac_toe() -> pb::rule_set::Kind {
    pb::rule_set::Kind::Mnk(pb::MnkRules {
        rows: 3,
        cols: 3,
        k: 3,
    })
}

/// Two seats whose names would act on a terminal or reorder text: seat 0,
/// `admin\u{202e}gnp.exe` (which shows as "adminexe.png"), displayed as an
/// escape sequence that sets a terminal's title, with a symbol behind a
/// bidirectional override; seat 1, `bob` then CR and a colour escape.
pub fn seats_that_attack_terminals() -> Vec<pb::Seat> {
    vec![
        pb::Seat {
            player_id: "admin\u{202e}gnp.exe".into(),
            display_name: "\u{1b}]0;pwned\u{7}".into(),
            symbol: "\u{202e}X".into(),
            bot: None,
        },
        pb::Seat {
            player_id: "bob\r\u{1b}[31mred".into(),
            display_name: String::new(),
            symbol: "O".into(),
            bot: None,
        },
    ]
}
