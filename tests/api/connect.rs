//! The Connect protocol on the gRPC port, spoken byte for byte as its
//! specification (connectrpc.com/docs/protocol) writes it: unary JSON and
//! binary calls over HTTP/1.1 and HTTP/2, server streams in envelopes and
//! as lines of JSON, errors with the gRPC call's code and details, the
//! same seat tokens, limits and metrics. Clients nobody here wrote (curl,
//! Connect's Node client) are in tests/clients.

use std::time::Duration;

use base64::Engine as _;
use bytes::{Buf, Bytes};
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::rt::TokioExecutor;
use plylog::api::auth::AccessSettings;
use plylog::proto as pb;
use prost::Message;
use serde_json::{Value, json};

use plylog_testkit::{TestServer, create, mnk, place, play, settings};

type Http = HttpClient<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>;

/// An HTTP/1.1 client, as curl is by default on a plaintext port.
fn http1() -> Http {
    HttpClient::builder(TokioExecutor::new()).build_http()
}

/// An HTTP/2 client (prior knowledge, as curl's --http2-prior-knowledge).
fn http2() -> Http {
    HttpClient::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http()
}

/// A Connect request to `method` of plylog.v1.GameService.
fn post(
    server: &TestServer,
    method: &str,
    content_type: &str,
    body: Vec<u8>,
) -> Request<Full<Bytes>> {
    Request::post(format!(
        "http://{}/plylog.v1.GameService/{method}",
        server.addr
    ))
    .header(header::CONTENT_TYPE, content_type)
    .header("connect-protocol-version", "1")
    .body(Full::new(Bytes::from(body)))
    .unwrap()
}

/// A unary JSON call: the HTTP status, the headers and the body as JSON.
async fn call_json(
    client: &Http,
    request: Request<Full<Bytes>>,
) -> (StatusCode, http::HeaderMap, Value) {
    let response = tokio::time::timeout(Duration::from_secs(10), client.request(request))
        .await
        .expect("an answer in time")
        .expect("an answer");
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await.expect("the body").to_bytes();
    let json = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)));
    (parts.status, parts.headers, json)
}

/// A JSON call to `method` over HTTP/1.1 with `body`.
async fn json_call(server: &TestServer, method: &str, body: Value) -> (StatusCode, Value) {
    let request = post(
        server,
        method,
        "application/json",
        body.to_string().into_bytes(),
    );
    let (status, _, json) = call_json(&http1(), request).await;
    (status, json)
}

/// The ErrorInfo reason in a Connect error's details, read from the
/// encoded `value` (what Connect clients decode), checked against its
/// `debug` JSON.
fn reason(error: &Value) -> String {
    let detail = error["details"]
        .as_array()
        .expect("details")
        .iter()
        .find(|d| d["type"] == "google.rpc.ErrorInfo")
        .expect("an ErrorInfo detail");
    let value = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(detail["value"].as_str().unwrap())
        .expect("unpadded base64");
    let info = tonic_types::pb::ErrorInfo::decode(value.as_slice()).expect("an ErrorInfo");
    assert_eq!(detail["debug"]["reason"], info.reason.as_str());
    info.reason
}

fn tic_tac_toe(id: &str) -> Value {
    json!({
        "gameId": id,
        "rules": {"mnk": {"rows": 3, "cols": 3, "k": 3}},
        "seats": [{"playerId": "alice", "symbol": "X"}, {"playerId": "bob", "symbol": "O"}],
    })
}

fn place_json(id: &str, seat: u32, row: u32, col: u32) -> Value {
    json!({"gameId": id, "seat": seat, "move": {"place": {"row": row, "col": col}}})
}

#[tokio::test]
async fn json_over_http1_creates_plays_and_refuses_with_the_grpc_code_and_reason() {
    let mut server = TestServer::start().await;
    let (status, created) = json_call(&server, "CreateGame", tic_tac_toe("cj")).await;
    assert_eq!(status, StatusCode::OK, "{created}");
    assert_eq!(created["game"]["gameId"], "cj");
    // Canonical proto3 JSON: 64-bit integers as strings, enums by name.
    assert_eq!(created["game"]["position"]["sequence"], "1");
    assert_eq!(
        created["game"]["position"]["status"],
        "GAME_STATUS_IN_PROGRESS"
    );

    let (status, moved) = json_call(&server, "SubmitMove", place_json("cj", 0, 1, 1)).await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    assert_eq!(
        moved["events"][0]["movePlayed"]["placement"],
        json!({"row": 1, "col": 1})
    );

    // The same refusal as over gRPC: Connect's code name, the HTTP status
    // Connect gives it, the same message and ErrorInfo.
    let grpc = play(&mut server.client, "cj", 0, place(0, 0))
        .await
        .expect_err("not seat 0's turn");
    let (status, error) = json_call(&server, "SubmitMove", place_json("cj", 0, 0, 0)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(error["code"], "failed_precondition");
    assert_eq!(error["message"], grpc.message());
    assert_eq!(reason(&error), plylog_testkit::reason(&grpc));
    assert_eq!(reason(&error), "NOT_YOUR_TURN");

    // Not found is 404, with its reason.
    let (status, error) = json_call(&server, "GetGame", json!({"gameId": "nope"})).await;
    assert_eq!(
        (status, error["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
    assert_eq!(reason(&error), "GAME_NOT_FOUND");
}

#[tokio::test]
async fn binary_bodies_over_http2_carry_the_same_messages_as_grpc() {
    let mut server = TestServer::start().await;
    create(&mut server.client, "cb", mnk(3, 3, 3)).await;
    play(&mut server.client, "cb", 0, place(2, 2))
        .await
        .unwrap();
    let request = pb::GetGameRequest {
        game_id: "cb".into(),
        at_sequence: None,
    };
    let response = http2()
        .request(post(
            &server,
            "GetGame",
            "application/proto",
            request.encode_to_vec(),
        ))
        .await
        .unwrap();
    assert_eq!(response.version(), http::Version::HTTP_2);
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "application/proto"
    );
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let over_connect = pb::GetGameResponse::decode(bytes).unwrap();
    let over_grpc = server.client.get_game(request).await.unwrap().into_inner();
    assert_eq!(over_connect, over_grpc);
}

/// StreamEvents called over HTTP/1.1 with `body`, Connect's JSON envelopes.
async fn stream_events(
    server: &TestServer,
    body: Vec<u8>,
) -> http::Response<hyper::body::Incoming> {
    let request = post(server, "StreamEvents", "application/connect+json", body);
    tokio::time::timeout(Duration::from_secs(10), http1().request(request))
        .await
        .expect("an answer in time")
        .expect("an answer")
}

/// Reads envelopes off `body` until `want` have come (or the end-of-stream
/// one), within 10 s: each message's flags and bytes.
async fn read_envelopes(
    body: &mut hyper::body::Incoming,
    received: &mut Vec<u8>,
    want: usize,
) -> Vec<(u8, Vec<u8>)> {
    let reading = async {
        loop {
            let mut envelopes = Vec::new();
            let mut rest = &received[..];
            while rest.len() >= 5 {
                let len = u32::from_be_bytes(rest[1..5].try_into().unwrap()) as usize;
                if rest.len() < 5 + len {
                    break;
                }
                envelopes.push((rest[0], rest[5..5 + len].to_vec()));
                rest = &rest[5 + len..];
            }
            if envelopes.len() >= want || envelopes.last().is_some_and(|(f, _)| f & 2 != 0) {
                return envelopes;
            }
            let frame = body.frame().await.expect("the stream goes on").unwrap();
            if let Ok(data) = frame.into_data() {
                received.extend_from_slice(data.chunk());
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), reading)
        .await
        .expect("the envelopes in time")
}

/// What a StreamEvents message in JSON is: `e<sequence>` or `caught_up`.
fn kind(message: &Value) -> String {
    if let Some(event) = message.get("event") {
        format!("e{}", event["sequence"].as_str().unwrap())
    } else if message.get("caughtUp").is_some() {
        "caught_up".into()
    } else {
        message.to_string()
    }
}

#[tokio::test]
async fn a_connect_stream_sends_history_then_live_events_in_envelopes() {
    let mut server = TestServer::start().await;
    create(&mut server.client, "cs", mnk(3, 3, 3)).await;
    play(&mut server.client, "cs", 0, place(1, 1))
        .await
        .unwrap();
    let message = json!({"gameId": "cs", "follow": true}).to_string();
    let body = enveloped(0, message.as_bytes());
    let response = stream_events(&server, body).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "application/connect+json"
    );
    let mut body = response.into_body();
    let mut received = Vec::new();
    let kinds = |envelopes: &[(u8, Vec<u8>)]| -> Vec<String> {
        envelopes
            .iter()
            .map(|(flags, m)| {
                assert_eq!(*flags, 0, "a message, uncompressed");
                kind(&serde_json::from_slice(m).unwrap())
            })
            .collect()
    };
    let first = read_envelopes(&mut body, &mut received, 3).await;
    assert_eq!(kinds(&first), ["e1", "e2", "caught_up"]);
    play(&mut server.client, "cs", 1, place(0, 0))
        .await
        .unwrap();
    let then = read_envelopes(&mut body, &mut received, 4).await;
    assert_eq!(
        kinds(&then),
        ["e1", "e2", "caught_up", "e3"],
        "a live event"
    );
}

#[tokio::test]
async fn a_failed_stream_ends_with_its_error_in_the_end_of_stream_envelope() {
    let server = TestServer::start().await;
    let message = pb::StreamEventsRequest {
        game_id: "missing".into(),
        follow: true,
        ..Default::default()
    }
    .encode_to_vec();
    let body = enveloped(0, &message);
    let response = http2()
        .request(post(
            &server,
            "StreamEvents",
            "application/connect+proto",
            body,
        ))
        .await
        .unwrap();
    // A stream's error is in its end, never in the HTTP status.
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let envelopes = read_envelopes(&mut body, &mut Vec::new(), 1).await;
    let [(flags, end)] = &envelopes[..] else {
        panic!("one envelope: {envelopes:?}")
    };
    assert_eq!(*flags, 2, "the end-of-stream flag");
    let end: Value = serde_json::from_slice(end).unwrap();
    assert_eq!(end["error"]["code"], "not_found");
    assert_eq!(reason(&end["error"]), "GAME_NOT_FOUND");
}

#[tokio::test]
async fn a_stream_called_with_plain_json_answers_lines_of_json() {
    let mut server = TestServer::start().await;
    create(&mut server.client, "cl", mnk(3, 3, 3)).await;
    play(&mut server.client, "cl", 0, place(1, 1))
        .await
        .unwrap();
    let request = post(
        &server,
        "StreamEvents",
        "application/json",
        json!({"gameId": "cl"}).to_string().into_bytes(),
    );
    let response = http1().request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "application/x-ndjson"
    );
    let text = tokio::time::timeout(Duration::from_secs(10), response.into_body().collect())
        .await
        .expect("a stream without follow ends")
        .unwrap()
        .to_bytes();
    let text = String::from_utf8(text.to_vec()).unwrap();
    let kinds: Vec<String> = text
        .lines()
        .map(|line| kind(&serde_json::from_str(line).unwrap()))
        .collect();
    assert_eq!(kinds, ["e1", "e2", "caught_up"], "{text}");
    assert!(text.ends_with('\n'));
}

#[tokio::test]
async fn seat_tokens_limits_and_bad_bodies_are_refused_as_over_grpc() {
    let access = AccessSettings {
        seat_tokens: true,
        ..AccessSettings::default()
    };
    let server = TestServer::start_secured(settings(), access).await;
    let (status, created) = json_call(&server, "CreateGame", tic_tac_toe("ct")).await;
    assert_eq!(status, StatusCode::OK, "{created}");
    let token = created["seatTokens"][0].as_str().unwrap().to_owned();

    // No token: 401 unauthenticated; the seat's own token: played.
    let (status, error) = json_call(&server, "SubmitMove", place_json("ct", 0, 1, 1)).await;
    assert_eq!(
        (status, error["code"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("unauthenticated"))
    );
    let mut request = post(
        &server,
        "SubmitMove",
        "application/json",
        place_json("ct", 0, 1, 1).to_string().into_bytes(),
    );
    request.headers_mut().insert(
        header::AUTHORIZATION,
        format!("Bearer {token}").parse().unwrap(),
    );
    let (status, _, moved) = call_json(&http1(), request).await;
    assert_eq!(status, StatusCode::OK, "{moved}");

    // JSON that is not the method's message.
    let request = post(
        &server,
        "GetGame",
        "application/json",
        b"{\"gameId\": 7".to_vec(),
    );
    let (status, _, error) = call_json(&http1(), request).await;
    assert_eq!(
        (status, error["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_argument"))
    );
    assert_eq!(reason(&error), "INVALID_REQUEST");

    // Over the request limit (64 KiB by default), as sent or once
    // decompressed: 429 resource_exhausted, naming the limit.
    let huge = json!({"gameId": "x".repeat(70 * 1024)}).to_string();
    let (status, _, error) = call_json(
        &http1(),
        post(
            &server,
            "GetGame",
            "application/json",
            huge.clone().into_bytes(),
        ),
    )
    .await;
    assert_eq!(
        (status, error["code"].as_str()),
        (StatusCode::TOO_MANY_REQUESTS, Some("resource_exhausted"))
    );
    assert_eq!(reason(&error), "REQUEST_TOO_LARGE");
    let gzipped = plylog::compression::Encoding::Gzip.compress(huge.as_bytes());
    assert!(gzipped.len() < 64 * 1024);
    let mut request = post(&server, "GetGame", "application/json", gzipped.to_vec());
    request
        .headers_mut()
        .insert(header::CONTENT_ENCODING, "gzip".parse().unwrap());
    let (status, _, error) = call_json(&http1(), request).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{error}");
    assert_eq!(reason(&error), "REQUEST_TOO_LARGE");

    // A compressed request under the limit is read; an encoding the server
    // does not speak is unimplemented.
    let body = plylog::compression::Encoding::Gzip.compress(br#"{"gameId": "ct"}"#);
    let mut request = post(&server, "GetGame", "application/json", body.to_vec());
    request
        .headers_mut()
        .insert(header::CONTENT_ENCODING, "gzip".parse().unwrap());
    let (status, _, game) = call_json(&http1(), request).await;
    assert_eq!(
        (status, game["game"]["gameId"].as_str()),
        (StatusCode::OK, Some("ct"))
    );
    let mut request = post(&server, "GetGame", "application/json", b"{}".to_vec());
    request
        .headers_mut()
        .insert(header::CONTENT_ENCODING, "br".parse().unwrap());
    let (status, _, error) = call_json(&http1(), request).await;
    assert_eq!(
        (status, error["code"].as_str()),
        (StatusCode::NOT_IMPLEMENTED, Some("unimplemented"))
    );

    // No such procedure: 404.
    let request = Request::post(format!("http://{}/plylog.v1.GameService/Nope", server.addr))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from_static(b"{}")))
        .unwrap();
    let (status, _, error) = call_json(&http1(), request).await;
    assert_eq!(
        (status, error["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("unimplemented"))
    );
}

#[tokio::test]
async fn connect_calls_are_counted_and_health_answers_in_json() {
    let server = TestServer::start().await;
    let (status, _) = json_call(&server, "CreateGame", tic_tac_toe("cm")).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = json_call(&server, "GetGame", json!({"gameId": "nope"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let metrics = server.scrape().await;
    let count = |method: &str, code: &str| {
        metrics
            .iter()
            .filter(|(name, _)| {
                name.starts_with("plylog_grpc_calls_total{")
                    && name.contains(&format!("method=\"{method}\""))
                    && name.contains(&format!("code=\"{code}\""))
            })
            .map(|(_, v)| *v)
            .sum::<f64>()
    };
    assert_eq!(count("CreateGame", "OK"), 1.0, "{metrics:?}");
    assert_eq!(count("GetGame", "NOT_FOUND"), 1.0);

    let request = Request::post(format!(
        "http://{}/grpc.health.v1.Health/Check",
        server.addr
    ))
    .header(header::CONTENT_TYPE, "application/json")
    .body(Full::new(Bytes::from_static(b"{}")))
    .unwrap();
    let (status, _, health) = call_json(&http1(), request).await;
    assert_eq!(
        (status, health),
        (StatusCode::OK, json!({"status": "SERVING"}))
    );
}

/// `message` in one Connect envelope with `flags`.
fn enveloped(flags: u8, message: &[u8]) -> Vec<u8> {
    let mut body = vec![flags];
    body.extend_from_slice(&(message.len() as u32).to_be_bytes());
    body.extend_from_slice(message);
    body
}

#[tokio::test]
async fn what_the_protocol_refuses_is_refused_with_its_status() {
    let mut server = TestServer::start().await;
    create(&mut server.client, "cr", mnk(3, 3, 3)).await;

    // curl -d without a content type sends a form: 415, naming what is served.
    let request = post(
        &server,
        "GetGame",
        "application/x-www-form-urlencoded",
        b"{}".to_vec(),
    );
    let (status, headers, error) = call_json(&http1(), request).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{error}");
    assert!(
        headers["accept-post"]
            .to_str()
            .unwrap()
            .contains("application/json")
    );
    // A unary method called as a stream: 415.
    let body = enveloped(0, br#"{"gameId": "cr"}"#);
    let request = post(&server, "GetGame", "application/connect+json", body);
    let (status, _, _) = call_json(&http1(), request).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);

    // An empty body is an empty message, compressed or not.
    let mut request = post(&server, "GetGame", "application/proto", Vec::new());
    request
        .headers_mut()
        .insert(header::CONTENT_ENCODING, "gzip".parse().unwrap());
    let (status, _, error) = call_json(&http1(), request).await;
    assert_eq!(
        (status, reason(&error)),
        (StatusCode::BAD_REQUEST, "INVALID_REQUEST".to_owned()),
        "{error}"
    );

    // A request envelope flagged anything but compressed.
    let body = enveloped(2, br#"{"gameId": "cr"}"#);
    let response = stream_events(&server, body).await;
    let mut body = response.into_body();
    let envelopes = read_envelopes(&mut body, &mut Vec::new(), 1).await;
    let end: Value = serde_json::from_slice(&envelopes[0].1).unwrap();
    assert_eq!(end["error"]["code"], "invalid_argument", "{end}");

    // A timeout that is not milliseconds.
    let mut request = post(
        &server,
        "GetGame",
        "application/json",
        br#"{"gameId": "cr"}"#.to_vec(),
    );
    request
        .headers_mut()
        .insert("connect-timeout-ms", "-1".parse().unwrap());
    let (status, _, error) = call_json(&http1(), request).await;
    assert_eq!(
        (status, error["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_argument"))
    );
}

#[tokio::test]
async fn a_followed_stream_ends_at_its_connect_timeout() {
    let mut server = TestServer::start().await;
    create(&mut server.client, "cd", mnk(3, 3, 3)).await;
    let body = enveloped(
        0,
        json!({"gameId": "cd", "follow": true})
            .to_string()
            .as_bytes(),
    );
    let mut request = post(&server, "StreamEvents", "application/connect+json", body);
    request
        .headers_mut()
        .insert("connect-timeout-ms", "300".parse().unwrap());
    let response = http1().request(request).await.unwrap();
    let mut body = response.into_body();
    // The history, the caught-up marker and heartbeats, then the end: the
    // deadline.
    let envelopes = read_envelopes(&mut body, &mut Vec::new(), usize::MAX).await;
    let (flags, end) = envelopes.last().unwrap();
    assert_eq!(*flags, 2, "{envelopes:?}");
    let end: Value = serde_json::from_slice(end).unwrap();
    assert_eq!(end["error"]["code"], "deadline_exceeded");
}

#[tokio::test]
async fn lines_give_an_error_before_the_first_message_its_http_status() {
    let server = TestServer::start().await;
    let (status, error) = json_call(&server, "StreamEvents", json!({"gameId": "missing"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(reason(&error), "GAME_NOT_FOUND");
}
