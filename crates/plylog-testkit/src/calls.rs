//! Calls through a [`Client`], each expecting the server to answer, and
//! what the tests read out of the answers and refusals.

use std::net::SocketAddr;
use std::time::Duration;

use plylog::proto as pb;
use plylog::proto::game_service_client::GameServiceClient;
use tonic::transport::Channel;
use tonic_types::StatusExt;

use crate::requests::{create_request, move_request};

/// A client of the game service.
pub type Client = GameServiceClient<Channel>;

/// `message` with metadata `authorization: Bearer <token>`: a seat token.
pub fn bearer<T>(message: T, token: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("ASCII"),
    );
    request
}

/// A client connected to `127.0.0.1:port` (see [`channel`]).
pub async fn connect(port: u16) -> Client {
    GameServiceClient::new(channel(([127, 0, 0, 1], port).into()).await)
}

/// A client of `127.0.0.1:port` that connects on its first call (to a
/// server that may not be up yet, or may go away and come back): connecting
/// gives up after `connect_timeout`, a call after `timeout`.
pub fn lazy_client(port: u16, connect_timeout: Duration, timeout: Duration) -> Client {
    GameServiceClient::new(
        Channel::from_shared(format!("http://127.0.0.1:{port}"))
            .expect("a valid address")
            .connect_timeout(connect_timeout)
            .timeout(timeout)
            .connect_lazy(),
    )
}

/// A channel to `addr` (the listener is bound before the server task starts,
/// so connecting needs no wait).
pub async fn channel(addr: SocketAddr) -> Channel {
    Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        // No call waits for ever: one the server never answers fails the
        // test (DEADLINE_EXCEEDED) instead of hanging it. Streams' items
        // are bounded by `within`.
        .timeout(Duration::from_secs(30))
        .connect_timeout(Duration::from_secs(10))
        .connect()
        .await
        .expect("connects")
}

/// Creates a game and returns it.
pub async fn create(client: &mut Client, game_id: &str, rules: pb::RuleSet) -> pb::Game {
    create_from(client, create_request(game_id, rules)).await
}

/// Sends `request` and returns the created game.
pub async fn create_from(client: &mut Client, request: pb::CreateGameRequest) -> pb::Game {
    client
        .create_game(request)
        .await
        .expect("game created")
        .into_inner()
        .game
        .unwrap()
}

/// Plays a move and returns the reply.
pub async fn play(
    client: &mut Client,
    game_id: &str,
    seat: u32,
    mv: pb::Move,
) -> Result<pb::SubmitMoveResponse, tonic::Status> {
    client
        .submit_move(move_request(game_id, seat, mv))
        .await
        .map(tonic::Response::into_inner)
}

/// Plays `moves` alternately from seat 0, expecting each to be accepted.
pub async fn play_all(
    client: &mut Client,
    game_id: &str,
    moves: &[pb::Move],
) -> pb::SubmitMoveResponse {
    let mut last = None;
    for (i, mv) in moves.iter().enumerate() {
        last = Some(
            play(client, game_id, (i % 2) as u32, mv.clone())
                .await
                .expect("move accepted"),
        );
    }
    last.expect("at least one move")
}

/// GetGame of the latest position, expecting the game to be there.
pub async fn get_game(client: &mut Client, game_id: &str) -> pb::Game {
    client
        .get_game(pb::GetGameRequest {
            game_id: game_id.into(),
            at_sequence: None,
        })
        .await
        .expect("game found")
        .into_inner()
        .game
        .unwrap()
}

/// The ErrorInfo reason of a status.
pub fn reason(status: &tonic::Status) -> String {
    status
        .get_error_details()
        .error_info()
        .map(|i| i.reason.clone())
        .unwrap_or_default()
}

/// The ErrorInfo metadata value `key` of a status.
pub fn metadata(status: &tonic::Status, key: &str) -> Option<String> {
    status
        .get_error_details()
        .error_info()
        .and_then(|i| i.metadata.get(key).cloned())
}

/// The BadRequest field named by a status.
pub fn bad_field(status: &tonic::Status) -> Option<String> {
    status
        .get_error_details()
        .bad_request()
        .and_then(|b| b.field_violations.first().map(|v| v.field.clone()))
}

/// Asserts a status's code and reason.
#[track_caller]
pub fn assert_rejected(
    result: Result<impl std::fmt::Debug, tonic::Status>,
    code: tonic::Code,
    expected_reason: &str,
) -> tonic::Status {
    let status = result.expect_err("expected a rejection");
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (code, expected_reason),
        "status: {status:?}"
    );
    assert!(!status.message().is_empty());
    status
}

/// The position of a game from GetGame.
pub fn position(game: &pb::Game) -> &pb::Position {
    game.position.as_ref().unwrap()
}

/// The text picture of a game's board, a line per row.
pub fn board_text(game: &pb::Game) -> Vec<String> {
    position(game).board.as_ref().unwrap().text.clone()
}

/// Reads a whole stream (follow = false) into its items.
pub async fn read_stream(
    client: &mut Client,
    game_id: &str,
    from_sequence: u64,
) -> Vec<pb::stream_events_response::Kind> {
    let mut stream = client
        .stream_events(pb::StreamEventsRequest {
            game_id: game_id.into(),
            from_sequence,
            follow: false,
            round: None,
        })
        .await
        .expect("stream opens")
        .into_inner();
    let mut items = Vec::new();
    while let Some(item) = within(stream.message()).await.expect("stream item") {
        items.push(item.kind.unwrap());
    }
    items
}

/// Opens a followed event stream from `from_sequence`.
pub async fn follow(
    client: &mut Client,
    game_id: &str,
    from_sequence: u64,
) -> tonic::Streaming<pb::StreamEventsResponse> {
    client
        .stream_events(pb::StreamEventsRequest {
            game_id: game_id.into(),
            from_sequence,
            follow: true,
            round: None,
        })
        .await
        .expect("stream opens")
        .into_inner()
}

/// The first page of ListGames (up to 50 games, oldest first).
pub async fn list_games(client: &mut Client) -> Vec<pb::GameSummary> {
    client
        .list_games(pb::ListGamesRequest::default())
        .await
        .expect("games listed")
        .into_inner()
        .games
}

/// Awaits `answer` for at most 10 s: a reply that never comes fails the
/// test instead of hanging it.
pub async fn within<T>(answer: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), answer)
        .await
        .expect("an answer within 10 s")
}

/// Every stored event of game `game_id`, in sequence order, streamed
/// through `client` without following (each item within 10 s).
pub async fn stored_events(client: &Client, game_id: &str) -> Vec<pb::GameEvent> {
    let mut stream = client
        .clone()
        .stream_events(pb::StreamEventsRequest {
            game_id: game_id.into(),
            from_sequence: 1,
            follow: false,
            round: None,
        })
        .await
        .unwrap()
        .into_inner();
    let mut events = Vec::new();
    while let Some(item) = tokio::time::timeout(Duration::from_secs(10), stream.message())
        .await
        .expect("a stream item in 10 s")
        .unwrap()
    {
        if let Some(pb::stream_events_response::Kind::Event(e)) = item.kind {
            events.push(e);
        }
    }
    events
}
