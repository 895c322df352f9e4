//! What a browser gets from the gRPC port, spoken as a browser speaks it:
//! HTTP/1.1, grpc-web frames (binary and base64 text), CORS preflights, and
//! the dashboard's files.

use std::time::Duration;

use base64::Engine as _;
use bytes::{Buf, Bytes};
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::rt::TokioExecutor;
use plylog::proto as pb;
use plylog::web::{WebSettings, parse_origin};
use prost::Message;

use plylog_testkit::{TestServer, create, mnk, place, play, reason};

type Http = HttpClient<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>;

/// An HTTP/1.1-only client, as a browser talking to a plaintext port is.
fn http() -> Http {
    HttpClient::builder(TokioExecutor::new()).build_http()
}

/// One grpc-web frame: flag byte, big-endian length, payload.
fn frame(message: &impl Message) -> Vec<u8> {
    let payload = message.encode_to_vec();
    let mut framed = vec![0];
    framed.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    framed.extend_from_slice(&payload);
    framed
}

/// Splits grpc-web response bytes into data frames and the trailer frame's
/// text (`None` while it has not come).
fn frames(mut bytes: &[u8]) -> (Vec<Vec<u8>>, Option<String>, usize) {
    let mut data = Vec::new();
    let mut used = 0;
    while bytes.len() >= 5 {
        let flag = bytes[0];
        let len = u32::from_be_bytes(bytes[1..5].try_into().unwrap()) as usize;
        if bytes.len() < 5 + len {
            break;
        }
        let payload = bytes[5..5 + len].to_vec();
        bytes = &bytes[5 + len..];
        used += 5 + len;
        if flag & 0x80 != 0 {
            return (data, Some(String::from_utf8(payload).unwrap()), used);
        }
        data.push(payload);
    }
    (data, None, used)
}

/// The `kind` of each StreamEventsResponse: `e<sequence>`, `caught_up`.
fn kinds(messages: &[Vec<u8>]) -> Vec<String> {
    messages
        .iter()
        .map(
            |m| match pb::StreamEventsResponse::decode(m.as_slice()).unwrap().kind {
                Some(pb::stream_events_response::Kind::Event(e)) => format!("e{}", e.sequence),
                Some(pb::stream_events_response::Kind::CaughtUp(_)) => "caught_up".into(),
                Some(pb::stream_events_response::Kind::Heartbeat(_)) => "heartbeat".into(),
                None => "none".into(),
            },
        )
        .collect()
}

fn grpc_web(
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
    .header(header::ACCEPT, content_type)
    .header("x-grpc-web", "1")
    .body(Full::new(Bytes::from(body)))
    .unwrap()
}

/// A game with two moves: three events.
async fn game_of_three_events(server: &mut TestServer, id: &str) {
    create(&mut server.client, id, mnk(3, 3, 3)).await;
    play(&mut server.client, id, 0, place(1, 1)).await.unwrap();
    play(&mut server.client, id, 1, place(0, 0)).await.unwrap();
}

#[tokio::test]
async fn grpc_web_binary_streams_history_then_live_events_over_http1() {
    let mut server = TestServer::start().await;
    game_of_three_events(&mut server, "web-stream").await;
    let request = pb::StreamEventsRequest {
        game_id: "web-stream".into(),
        follow: true,
        ..Default::default()
    };
    let response = http()
        .request(grpc_web(
            &server,
            "StreamEvents",
            "application/grpc-web+proto",
            frame(&request),
        ))
        .await
        .expect("an answer");
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.version(), http::Version::HTTP_11);
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "application/grpc-web+proto"
    );
    let mut body = response.into_body();
    let mut received = Vec::new();
    // Reads frames until `want` messages have come.
    let mut read_until = async |body: &mut hyper::body::Incoming, want: usize| {
        let reading = async {
            loop {
                let (messages, trailer, _) = frames(&received);
                assert!(trailer.is_none(), "a followed stream stays open");
                if messages.len() >= want {
                    return kinds(&messages);
                }
                let next = body
                    .frame()
                    .await
                    .expect("the stream goes on")
                    .expect("a frame");
                if let Ok(data) = next.into_data() {
                    received.extend_from_slice(data.chunk());
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(10), reading)
            .await
            .expect("the next frame in time")
    };
    assert_eq!(
        read_until(&mut body, 4).await,
        ["e1", "e2", "e3", "caught_up"]
    );
    play(&mut server.client, "web-stream", 0, place(2, 2))
        .await
        .unwrap();
    assert_eq!(
        read_until(&mut body, 5).await,
        ["e1", "e2", "e3", "caught_up", "e4"],
        "a live event arrives on the open grpc-web stream"
    );
}

#[tokio::test]
async fn grpc_web_text_streams_in_base64_and_reports_errors_in_trailers() {
    let mut server = TestServer::start().await;
    game_of_three_events(&mut server, "web-text").await;
    let text = base64::engine::general_purpose::STANDARD;
    let call = async |request: &pb::StreamEventsRequest| {
        let response = http()
            .request(grpc_web(
                &server,
                "StreamEvents",
                "application/grpc-web-text",
                text.encode(frame(request)).into_bytes(),
            ))
            .await
            .expect("an answer");
        assert_eq!(response.status(), StatusCode::OK);
        let content_type = &response.headers()[header::CONTENT_TYPE];
        assert!(
            content_type
                .to_str()
                .unwrap()
                .starts_with("application/grpc-web-text"),
            "{content_type:?}"
        );
        let body = tokio::time::timeout(Duration::from_secs(10), response.into_body().collect())
            .await
            .expect("the stream ends")
            .expect("a body")
            .to_bytes();
        // Each chunk is base64 on its own, padding included: decode them
        // four characters at a time.
        let decoded: Vec<u8> = body
            .chunks(4)
            .flat_map(|quad| text.decode(quad).expect("base64"))
            .collect();
        let (messages, trailer, used) = frames(&decoded);
        assert_eq!(used, decoded.len(), "nothing after the trailers");
        (kinds(&messages), trailer.expect("trailers"))
    };
    let (kinds, trailer) = call(&pb::StreamEventsRequest {
        game_id: "web-text".into(),
        from_sequence: 2,
        ..Default::default()
    })
    .await;
    assert_eq!(kinds, ["e2", "e3", "caught_up"]);
    assert!(trailer.contains("grpc-status:0"), "{trailer:?}");
    let (kinds, trailer) = call(&pb::StreamEventsRequest {
        game_id: "no-such-game".into(),
        ..Default::default()
    })
    .await;
    assert!(kinds.is_empty());
    assert!(
        trailer.contains(&format!("grpc-status:{}", tonic::Code::NotFound as i32)),
        "{trailer:?}"
    );
}

#[tokio::test]
async fn a_garbled_grpc_web_request_is_the_clients_fault_not_an_internal_error() {
    let server = TestServer::start().await;
    // A data frame flagged 0x80, which marks trailers in a response and
    // nothing in a request; and grpc-web-text that is not base64.
    let mut trailer_flagged = frame(&pb::ListGamesRequest::default());
    trailer_flagged[0] = 0x80;
    let requests = [
        ("application/grpc-web+proto", trailer_flagged),
        ("application/grpc-web-text", b"!!!!not base64".to_vec()),
    ];
    for (content_type, body) in requests {
        let response = http()
            .request(grpc_web(&server, "ListGames", content_type, body))
            .await
            .expect("an answer");
        assert_eq!(response.status(), StatusCode::OK);
        // A refusal before any message is trailers-only: the status is in
        // the headers.
        let status = tonic::Status::from_header_map(response.headers())
            .unwrap_or_else(|| panic!("{content_type}: no grpc-status header"));
        assert_eq!(
            status.code(),
            tonic::Code::InvalidArgument,
            "{content_type}: {status:?}"
        );
        assert_eq!(reason(&status), "INVALID_REQUEST", "{content_type}");
        assert!(
            status.message().starts_with("malformed request"),
            "{content_type}: {status:?}"
        );
    }
}

/// A preflight as Chromium sends it before a cross-origin grpc-web call.
async fn preflight(server: &TestServer, origin: &str) -> http::Response<hyper::body::Incoming> {
    http()
        .request(
            Request::builder()
                .method(Method::OPTIONS)
                .uri(format!(
                    "http://{}/plylog.v1.GameService/GetGame",
                    server.addr
                ))
                .header(header::ORIGIN, origin)
                .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST")
                .header(
                    header::ACCESS_CONTROL_REQUEST_HEADERS,
                    "content-type,x-grpc-web,x-user-agent",
                )
                .body(Full::default())
                .unwrap(),
        )
        .await
        .expect("an answer")
}

#[tokio::test]
async fn cors_admits_only_the_configured_origins() {
    let allowed = "http://dashboard.example:8080";
    let server = TestServer::start_web(WebSettings {
        cors_origins: vec![parse_origin(allowed).unwrap()],
        ..WebSettings::default()
    })
    .await;
    let response = preflight(&server, allowed).await;
    assert!(response.status().is_success(), "{response:?}");
    let headers = response.headers();
    assert_eq!(headers[header::ACCESS_CONTROL_ALLOW_ORIGIN], allowed);
    let allowed_headers = headers[header::ACCESS_CONTROL_ALLOW_HEADERS]
        .to_str()
        .unwrap();
    assert!(allowed_headers.contains("x-grpc-web"), "{allowed_headers}");
    let response = preflight(&server, "http://elsewhere.example").await;
    assert!(
        !response
            .headers()
            .contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN),
        "another origin is not admitted: {response:?}"
    );

    // The call itself carries the grant, and the grpc-status for the page
    // to read.
    let mut request = grpc_web(
        &server,
        "GetGame",
        "application/grpc-web+proto",
        frame(&pb::GetGameRequest {
            game_id: "absent".into(),
            at_sequence: None,
        }),
    );
    request
        .headers_mut()
        .insert(header::ORIGIN, allowed.parse().unwrap());
    let response = http().request(request).await.expect("an answer");
    let headers = response.headers();
    assert_eq!(headers[header::ACCESS_CONTROL_ALLOW_ORIGIN], allowed);
    let exposed = headers[header::ACCESS_CONTROL_EXPOSE_HEADERS]
        .to_str()
        .unwrap();
    assert!(exposed.contains("grpc-status"), "{exposed}");

    // Without --cors-origin, no origin is admitted.
    let closed = TestServer::start().await;
    let response = preflight(&closed, allowed).await;
    assert!(
        !response
            .headers()
            .contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN),
        "{response:?}"
    );
}

#[test]
fn cors_origins_are_checked_when_given() {
    assert!(parse_origin("*").is_ok());
    assert!(parse_origin("https://admin.example.com").is_ok());
    assert!(parse_origin("http://127.0.0.1:5173").is_ok());
    for bad in [
        "admin.example.com",
        "https://admin.example.com/",
        "https://admin.example.com/path",
        "ftp://admin.example.com",
        "",
    ] {
        let error = parse_origin(bad).expect_err(bad);
        assert!(error.contains("not an origin"), "{bad}: {error}");
    }
}

async fn get(
    server: &TestServer,
    path: &str,
    etag: Option<&str>,
) -> (StatusCode, http::HeaderMap, Bytes) {
    let mut request = Request::get(format!("http://{}{path}", server.addr));
    if let Some(etag) = etag {
        request = request.header(header::IF_NONE_MATCH, etag);
    }
    let response = http()
        .request(request.body(Full::default()).unwrap())
        .await
        .expect("an answer");
    let (parts, body) = response.into_parts();
    let body = body.collect().await.expect("a body").to_bytes();
    (parts.status, parts.headers, body)
}

#[tokio::test]
async fn the_dashboard_is_served_from_the_binary_unless_turned_off() {
    let server = TestServer::start().await;
    let (status, headers, page) = get(&server, "/", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CONTENT_TYPE], "text/html; charset=utf-8");
    let page = String::from_utf8(page.to_vec()).unwrap();
    assert!(page.contains("app.js"), "the page loads its script");
    assert!(
        headers[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap()
            .contains("script-src 'self'")
    );
    for (path, content_type) in [
        ("/app.js", "text/javascript; charset=utf-8"),
        ("/app.css", "text/css; charset=utf-8"),
    ] {
        let (status, headers, body) = get(&server, path, None).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(headers[header::CONTENT_TYPE], content_type, "{path}");
        assert!(!body.is_empty(), "{path}");
        // A reload revalidates and gets 304 for what it has.
        let etag = headers[header::ETAG].to_str().unwrap().to_owned();
        let (status, _, body) = get(&server, path, Some(&etag)).await;
        assert_eq!(status, StatusCode::NOT_MODIFIED, "{path}");
        assert!(body.is_empty());
    }
    let (status, _, _) = get(&server, "/secrets", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let dark = TestServer::start_web(WebSettings {
        dashboard: false,
        ..WebSettings::default()
    })
    .await;
    let (status, _, _) = get(&dark, "/", None).await;
    assert_ne!(status, StatusCode::OK, "--no-dashboard serves no page");
}
