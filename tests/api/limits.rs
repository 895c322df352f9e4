use std::time::Duration;

use plylog::proto as pb;
use plylog::registry::RegistrySettings;
use tonic::Code;

use crate::helpers::*;

/// Asserts a RESOURCE_EXHAUSTED status naming `limit`.
#[track_caller]
fn assert_limit(status: &tonic::Status, reason_name: &str, limit: &str) {
    assert_eq!(
        (status.code(), reason(status).as_str()),
        (Code::ResourceExhausted, reason_name),
        "{status:?}"
    );
    assert_eq!(metadata(status, "limit").as_deref(), Some(limit));
    assert!(status.message().contains(limit), "{status:?}");
}

/// The first item of a stream: its error status, if it is one.
async fn first_error(client: &mut Client, game_id: &str) -> Option<tonic::Status> {
    let opened = client
        .stream_events(pb::StreamEventsRequest {
            game_id: game_id.into(),
            from_sequence: 1,
            follow: true,
        })
        .await;
    match opened {
        Err(status) => Some(status),
        Ok(stream) => stream.into_inner().message().await.err(),
    }
}

#[tokio::test]
async fn a_request_over_the_size_limit_is_resource_exhausted_naming_it() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    let mut request = create_request("huge", mnk(3, 3, 3));
    request.seats[0].display_name = "x".repeat(100 * 1024);
    let status = c.create_game(request).await.unwrap_err();
    assert_limit(&status, "REQUEST_TOO_LARGE", "max_request_bytes");
    assert_eq!(metadata(&status, "max").as_deref(), Some("65536"));
    // The server carries on.
    create(c, "small", mnk(3, 3, 3)).await;
}

#[tokio::test]
async fn open_streams_are_limited_per_server_and_per_game() {
    let registry = RegistrySettings {
        max_streams: 2,
        max_streams_per_game: 1,
        ..settings()
    };
    let mut server = TestServer::start_with(registry).await;
    let c = &mut server.client;
    for game in ["s1", "s2", "s3"] {
        create(c, game, mnk(3, 3, 3)).await;
    }
    let first = follow(c, "s1", 1).await;
    let status = first_error(c, "s1").await.expect("a second stream on s1");
    assert_limit(&status, "LIMIT_REACHED", "max_streams_per_game");
    let second = follow(c, "s2", 1).await;
    let status = first_error(c, "s3").await.expect("a third stream");
    assert_limit(&status, "LIMIT_REACHED", "max_streams");
    // Hanging up gives the slot back.
    drop((first, second));
    let mut reopened = false;
    for _ in 0..100 {
        if first_error(c, "s3").await.is_none() {
            reopened = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(reopened, "the stream slots were never given back");
}

#[tokio::test]
async fn games_in_memory_are_limited_and_idle_ones_make_room() {
    let registry = RegistrySettings {
        max_live_games: 2,
        idle_timeout: Duration::from_millis(300),
        ..settings()
    };
    let mut server = TestServer::start_with(registry).await;
    let c = &mut server.client;
    for game in ["m1", "m2", "m3"] {
        create(c, game, mnk(3, 3, 3)).await;
    }
    let status = c
        .get_game(pb::GetGameRequest {
            game_id: "m3".into(),
            at_sequence: None,
        })
        .await
        .unwrap_err();
    assert_limit(&status, "LIMIT_REACHED", "max_live_games");
    tokio::time::sleep(Duration::from_millis(700)).await;
    play(c, "m3", 0, place(1, 1)).await.unwrap();
}
