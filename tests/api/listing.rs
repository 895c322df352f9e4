use std::collections::{BTreeMap, BTreeSet};

use plylog::proto as pb;
use rand::Rng;
use rand::seq::IndexedRandom;
use tonic::Code;

use plylog_testkit::seed;
use plylog_testkit::*;

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn list_request(
    filter: &str,
    order_by: &str,
    page_size: i32,
    token: String,
) -> pb::ListGamesRequest {
    pb::ListGamesRequest {
        page_size,
        page_token: token,
        order_by: order_by.into(),
        filter: filter.into(),
    }
}

/// Every game the filter lists, paging `page_size` at a time.
async fn list_all(
    client: &mut Client,
    filter: &str,
    order_by: &str,
    page_size: i32,
) -> Vec<pb::GameSummary> {
    let mut games = Vec::new();
    let mut token = String::new();
    loop {
        let page = client
            .list_games(list_request(filter, order_by, page_size, token))
            .await
            .unwrap_or_else(|e| panic!("{filter:?}: {}", e.message()))
            .into_inner();
        assert!(page.games.len() <= page_size as usize);
        games.extend(page.games);
        if page.next_page_token.is_empty() {
            return games;
        }
        token = page.next_page_token;
    }
}

#[tokio::test]
async fn labels_are_kept_with_the_game_and_shown_wherever_it_is() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    let tagged = labels(&[("tournament", "spring cup"), ("round", "2")]);
    let game = create_from(
        c,
        pb::CreateGameRequest {
            labels: tagged.clone(),
            ..create_request("labelled", connect_four())
        },
    )
    .await;
    assert_eq!(game.labels, tagged);
    assert_eq!(get_game(c, "labelled").await.labels, tagged);
    let listed = list_games(c).await;
    assert_eq!(listed[0].labels, tagged);
    let events = stored_events(c, "labelled").await;
    let Some(pb::game_event::Kind::GameCreated(created)) = &events[0].kind else {
        panic!("the first event is GameCreated");
    };
    assert_eq!(created.labels, tagged);
    // A retry with the labels in another order is the same request.
    let request = pb::CreateGameRequest {
        request_id: "labels-retry".into(),
        labels: tagged.clone(),
        ..create_request("retried", connect_four())
    };
    let first = c.create_game(request.clone()).await.unwrap().into_inner();
    let again = c.create_game(request).await.unwrap().into_inner();
    assert_eq!(first.game, again.game);
}

#[tokio::test]
async fn bad_labels_are_refused_naming_labels() {
    let mut server = TestServer::start().await;
    let too_many: BTreeMap<String, String> =
        (0..17).map(|i| (format!("k{i}"), "v".to_owned())).collect();
    let cases = [
        too_many,
        labels(&[("Tournament", "x")]),
        labels(&[("1st", "x")]),
        labels(&[("", "x")]),
        labels(&[("a.b", "x")]),
        labels(&[(&"k".repeat(64), "x")]),
        labels(&[("team", "red\u{1b}[31m")]),
        labels(&[("team", &"v".repeat(129))]),
    ];
    for bad in cases {
        let answer = server
            .client
            .create_game(pb::CreateGameRequest {
                labels: bad.clone(),
                ..create_request("bad-labels", mnk(3, 3, 3))
            })
            .await;
        let status = assert_rejected(answer, Code::InvalidArgument, "INVALID_REQUEST");
        assert_eq!(bad_field(&status).as_deref(), Some("labels"), "{bad:?}");
    }
    // The most a game may have is taken.
    let most: BTreeMap<String, String> = (0..16)
        .map(|i| (format!("k{i}"), "v".repeat(128)))
        .collect();
    let game = create_from(
        &mut server.client,
        pb::CreateGameRequest {
            labels: most.clone(),
            ..create_request("most-labels", mnk(3, 3, 3))
        },
    )
    .await;
    assert_eq!(game.labels, most);
}

#[tokio::test]
async fn a_bad_filter_or_a_token_of_another_filter_is_refused() {
    let mut server = TestServer::start().await;
    for i in 0..3 {
        create(&mut server.client, &format!("g{i}"), mnk(3, 3, 3)).await;
    }
    for (filter, why) in [
        ("status = PAUSED", "none of IN_PROGRESS"),
        (
            "status = WON OR status = DRAWN",
            "only restrictions joined by AND",
        ),
        ("game_id = \"g0\"", "cannot be filtered on"),
        ("kind = ", "invalid filter"),
    ] {
        let answer = server
            .client
            .list_games(list_request(filter, "", 1, String::new()))
            .await;
        let status = assert_rejected(answer, Code::InvalidArgument, "INVALID_REQUEST");
        assert_eq!(bad_field(&status).as_deref(), Some("filter"));
        assert!(
            status.message().contains(why),
            "{filter}: {}",
            status.message()
        );
    }
    let filtered = "kind = \"mnk\"";
    let page = server
        .client
        .list_games(list_request(filtered, "", 1, String::new()))
        .await
        .unwrap()
        .into_inner();
    assert!(!page.next_page_token.is_empty());
    let unfiltered = server
        .client
        .list_games(list_request("", "", 1, String::new()))
        .await
        .unwrap()
        .into_inner();
    // Each token is good only with the filter it was issued for.
    for (filter, token) in [
        ("", page.next_page_token.clone()),
        ("status = IN_PROGRESS", page.next_page_token.clone()),
        (filtered, unfiltered.next_page_token.clone()),
    ] {
        let answer = server
            .client
            .list_games(list_request(filter, "", 1, token))
            .await;
        assert_rejected(answer, Code::InvalidArgument, "INVALID_PAGE_TOKEN");
    }
    let next = server
        .client
        .list_games(list_request(filtered, "", 1, page.next_page_token))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(next.games[0].game_id, "g1");
}

/// What a random filter restricts, kept to judge the games by.
#[derive(Debug, Default)]
struct Model {
    status: Option<pb::GameStatus>,
    kind: Option<&'static str>,
    player: Option<String>,
    labels: Vec<(String, String)>,
    created_from_ms: Option<i64>,
    updated_from_ms: Option<i64>,
    text: Vec<String>,
}

fn ms(at: Option<prost_types::Timestamp>) -> i64 {
    let at = at.expect("a time");
    at.seconds * 1000 + i64::from(at.nanos) / 1_000_000
}

fn kind_of(game: &pb::GameSummary) -> &'static str {
    match game.rules.as_ref().and_then(|r| r.kind.as_ref()) {
        Some(pb::rule_set::Kind::Mnk(_)) => "mnk",
        Some(pb::rule_set::Kind::ConnectFour(_)) => "connect_four",
        Some(pb::rule_set::Kind::Hex(_)) => "hex",
        other => panic!("an unexpected kind {other:?}"),
    }
}

impl Model {
    fn keeps(&self, game: &pb::GameSummary) -> bool {
        self.status.is_none_or(|s| game.status() == s)
            && self.kind.is_none_or(|k| kind_of(game) == k)
            && self
                .player
                .as_ref()
                .is_none_or(|p| game.seats.iter().any(|s| &s.player_id == p))
            && self
                .labels
                .iter()
                .all(|(k, v)| game.labels.get(k) == Some(v))
            && self
                .created_from_ms
                .is_none_or(|from| ms(game.created_at) >= from)
            && self
                .updated_from_ms
                .is_none_or(|from| ms(game.updated_at) >= from)
    }
}

/// RFC 3339 for Unix epoch milliseconds `at`, plus `nanos` below a
/// millisecond.
fn rfc3339(at: i64, nanos: i32) -> String {
    prost_types::Timestamp {
        seconds: at.div_euclid(1000),
        nanos: (at.rem_euclid(1000) as i32) * 1_000_000 + nanos,
    }
    .to_string()
}

/// Hex on a 5x5 board.
fn hex_rules() -> pb::RuleSet {
    rules(pb::rule_set::Kind::Hex(pb::HexRules {
        size: Some(5),
        swap: false,
    }))
}

/// A tic-tac-toe game that fills the board with no line: a draw.
fn drawn_tic_tac_toe() -> [pb::Move; 9] {
    [
        place(0, 0),
        place(1, 1),
        place(2, 2),
        place(0, 1),
        place(2, 1),
        place(2, 0),
        place(0, 2),
        place(1, 2),
        place(1, 0),
    ]
}

const PLAYERS: [&str; 5] = ["ann", "bo", "cy", "di", "ed"];
const TIERS: [&str; 3] = ["gold", "silver", "bronze"];
const REGIONS: [&str; 2] = ["eu", "us"];

#[tokio::test]
async fn every_filter_pages_through_exactly_the_games_an_in_memory_filter_keeps() {
    let seed = seed::seed("listing property");
    let mut rng = seed::rng(seed, 0);
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    // Random games: three kinds, players from a small pool, labels from
    // small sets, some played to a win, some to a draw, some not at all.
    for g in 0..48 {
        let kind = [mnk(3, 3, 3), connect_four(), hex_rules()]
            .choose(&mut rng)
            .unwrap()
            .clone();
        let tic_tac_toe = matches!(kind.kind, Some(pb::rule_set::Kind::Mnk(_)));
        let mut who: Vec<&str> = PLAYERS.to_vec();
        who.sort_by_key(|_| rng.random::<u32>());
        let mut tags = BTreeMap::new();
        if rng.random_bool(0.6) {
            tags.insert(
                "tier".to_owned(),
                TIERS.choose(&mut rng).unwrap().to_string(),
            );
        }
        if rng.random_bool(0.5) {
            tags.insert(
                "region".to_owned(),
                REGIONS.choose(&mut rng).unwrap().to_string(),
            );
        }
        let id = format!("game-{g:02}");
        create_from(
            c,
            pb::CreateGameRequest {
                seats: vec![seat(who[0], "X"), seat(who[1], "O")],
                labels: tags,
                ..create_request(&id, kind)
            },
        )
        .await;
        if tic_tac_toe {
            match rng.random_range(0..3) {
                0 => drop(play_all(c, &id, &x_wins_top_row()).await),
                1 => drop(play_all(c, &id, &drawn_tic_tac_toe()).await),
                _ => drop(play(c, &id, 0, place(1, 1)).await.unwrap()),
            }
        }
    }
    let everything = list_all(c, "", "", 1000).await;
    assert_eq!(everything.len(), 48);
    let times: Vec<(i64, i64)> = everything
        .iter()
        .map(|g| (ms(g.created_at), ms(g.updated_at)))
        .collect();
    let statuses = [
        pb::GameStatus::InProgress,
        pb::GameStatus::Won,
        pb::GameStatus::Drawn,
    ];
    let mut listed_any = 0;
    for case in 0..150 {
        let mut model = Model::default();
        if rng.random_bool(0.3) {
            let status = *statuses.choose(&mut rng).unwrap();
            let name = status.as_str_name();
            // Both spellings of a status name.
            let name = if rng.random_bool(0.5) {
                name.to_owned()
            } else {
                name.trim_start_matches("GAME_STATUS_").to_owned()
            };
            model.text.push(format!("status = {name}"));
            model.status = Some(status);
        }
        if rng.random_bool(0.3) {
            let kind = *["mnk", "connect_four", "hex"].choose(&mut rng).unwrap();
            model.text.push(format!("kind = \"{kind}\""));
            model.kind = Some(kind);
        }
        if rng.random_bool(0.3) {
            let player = *PLAYERS.choose(&mut rng).unwrap();
            let op = if rng.random_bool(0.5) { "=" } else { ":" };
            model
                .text
                .push(format!("seats.player_id {op} \"{player}\""));
            model.player = Some(player.to_owned());
        }
        if rng.random_bool(0.3) {
            let tier = *TIERS.choose(&mut rng).unwrap();
            model.text.push(format!("labels.tier = \"{tier}\""));
            model.labels.push(("tier".into(), tier.into()));
        }
        if rng.random_bool(0.2) {
            let region = *REGIONS.choose(&mut rng).unwrap();
            model.text.push(format!("labels.region = \"{region}\""));
            model.labels.push(("region".into(), region.into()));
        }
        if rng.random_bool(0.25) {
            let (created, _) = *times.choose(&mut rng).unwrap();
            let (op, from) = if rng.random_bool(0.5) {
                (">=", created)
            } else {
                (">", created + 1)
            };
            model
                .text
                .push(format!("created_at {op} \"{}\"", rfc3339(created, 0)));
            model.created_from_ms = Some(from);
        }
        if rng.random_bool(0.25) {
            let (_, updated) = *times.choose(&mut rng).unwrap();
            // Half a millisecond past: > and >= both start at the next one.
            let op = if rng.random_bool(0.5) { ">=" } else { ">" };
            model
                .text
                .push(format!("updated_at {op} \"{}\"", rfc3339(updated, 500_000)));
            model.updated_from_ms = Some(updated + 1);
        }
        let filter = model.text.join(" AND ");
        let newest_first = rng.random_bool(0.5);
        let order_by = if newest_first { "created_at desc" } else { "" };
        let page_size = rng.random_range(1..8);
        let listed: Vec<String> = list_all(c, &filter, order_by, page_size)
            .await
            .into_iter()
            .map(|g| g.game_id)
            .collect();
        let mut expected: Vec<String> = everything
            .iter()
            .filter(|g| model.keeps(g))
            .map(|g| g.game_id.clone())
            .collect();
        if newest_first {
            expected.reverse();
        }
        assert_eq!(
            listed, expected,
            "case {case}: filter {filter:?}, {order_by:?}, pages of {page_size} (seed {seed})"
        );
        listed_any += usize::from(!listed.is_empty());
    }
    // The cases were not all empty lists.
    assert!(listed_any > 50, "only {listed_any} cases listed a game");
    let distinct: BTreeSet<_> = everything.iter().map(kind_of).collect();
    assert_eq!(distinct.len(), 3, "every kind was created (seed {seed})");
}
