//! Traces and logs of the real binary: a SubmitMove's span reaches an OTLP
//! collector (an in-process one, speaking the real OTLP/gRPC protocol) with
//! its game_id, as a child of the caller's W3C traceparent, with the game
//! actor's work and the store's append as its children; and JSON logs carry
//! the call span's fields.

use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::Span;
use plylog::proto as pb;
use tokio::sync::mpsc;

use plylog_testkit::process;
use plylog_testkit::{connect, create_request, mnk, place, plain_move_request, two_unnamed_seats};
use process::{Server, plylog};

/// A collector that hands every span it receives to the test.
struct Collector(mpsc::UnboundedSender<Span>);

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        for resource in request.into_inner().resource_spans {
            for scope in resource.scope_spans {
                for span in scope.spans {
                    let _ = self.0.send(span);
                }
            }
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    let value = span
        .attributes
        .iter()
        .find(|a| a.key == key)?
        .value
        .as_ref()?;
    match value.value.as_ref()? {
        Value::StringValue(s) => Some(s.clone()),
        Value::IntValue(i) => Some(i.to_string()),
        other => Some(format!("{other:?}")),
    }
}

/// Tic-tac-toe for alice (X) and bob (O), without display names.
fn tic_tac_toe(game_id: &str) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        seats: two_unnamed_seats(),
        ..create_request(game_id, mnk(3, 3, 3))
    }
}

/// X in the top left corner, as request `move-1`.
fn corner(game_id: &str) -> pb::SubmitMoveRequest {
    pb::SubmitMoveRequest {
        request_id: "move-1".into(),
        ..plain_move_request(game_id, 0, place(0, 0))
    }
}

/// Stops the server with SIGTERM (it exports its last spans and logs its
/// last calls as it exits) and checks it exited cleanly.
fn terminate(server: &mut Server) {
    assert!(
        server.terminate().success(),
        "plylog exits cleanly on SIGTERM"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submit_move_span_reaches_the_collector_with_its_game_id_in_the_callers_trace() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let collector_port = listener.local_addr().unwrap().port();
    let (spans, mut received) = mpsc::unbounded_channel();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(Collector(spans)))
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("plylog.db").display());
    let endpoint = format!("http://127.0.0.1:{collector_port}");
    let server = tokio::task::spawn_blocking(move || {
        Server::start(
            |port| {
                let mut command = plylog();
                command
                    .args(["--listen", &format!("127.0.0.1:{port}"), "--no-seat-tokens"])
                    .args(["--database-url", &url])
                    .args(["--otlp-endpoint", &endpoint]);
                command
            },
            0,
        )
    })
    .await
    .unwrap();
    let mut client = connect(server.port).await;
    client.create_game(tic_tac_toe("traced")).await.unwrap();
    // The caller's trace (the W3C spec's example ids).
    let trace_id = "0af7651916cd43dd8448eb211c80319c";
    let caller_span = "b7ad6b7169203331";
    let mut request = tonic::Request::new(corner("traced"));
    request.metadata_mut().insert(
        "traceparent",
        format!("00-{trace_id}-{caller_span}-01").parse().unwrap(),
    );
    client.submit_move(request).await.unwrap();
    drop(client);
    tokio::task::spawn_blocking(move || terminate(&mut { server }))
        .await
        .unwrap();

    let mut all = Vec::new();
    while let Ok(Some(span)) =
        tokio::time::timeout(Duration::from_millis(500), received.recv()).await
    {
        all.push(span);
    }
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let call = all
        .iter()
        .find(|s| s.name == "SubmitMove")
        .unwrap_or_else(|| {
            panic!(
                "no SubmitMove span among {:?}",
                all.iter().map(|s| &s.name).collect::<Vec<_>>()
            )
        });
    assert_eq!(attribute(call, "game_id").as_deref(), Some("traced"));
    assert_eq!(attribute(call, "seat").as_deref(), Some("0"));
    assert_eq!(attribute(call, "request_id").as_deref(), Some("move-1"));
    assert_eq!(
        attribute(call, "rpc.grpc.status_code").as_deref(),
        Some("0")
    );
    assert_eq!(
        hex(&call.trace_id),
        trace_id,
        "the caller's trace continues"
    );
    assert_eq!(hex(&call.parent_span_id), caller_span);
    let actor = all
        .iter()
        .find(|s| s.name == "actor" && s.parent_span_id == call.span_id)
        .expect("the actor's work is a child of the call");
    assert_eq!(attribute(actor, "msg").as_deref(), Some("execute"));
    assert!(
        all.iter()
            .any(|s| s.name == "store.append" && s.parent_span_id == actor.span_id),
        "the append is a child of the actor's work"
    );
    // The CreateGame call, which named no trace, is a trace of its own
    // with the game id it created.
    let create = all
        .iter()
        .find(|s| s.name == "CreateGame")
        .unwrap_or_else(|| panic!("no CreateGame span among {all:#?}"));
    assert_eq!(attribute(create, "game_id").as_deref(), Some("traced"));
    assert_ne!(hex(&create.trace_id), trace_id);
}

/// The binary on a fresh SQLite file in `dir`, logging JSON lines with a
/// line per call (`plylog=debug`).
async fn json_logging_server(dir: &tempfile::TempDir) -> Server {
    let url = format!("sqlite://{}", dir.path().join("plylog.db").display());
    tokio::task::spawn_blocking(move || {
        Server::start(
            |port| {
                let mut command = plylog();
                command
                    .env("RUST_LOG", "info,plylog=debug")
                    .args(["--listen", &format!("127.0.0.1:{port}"), "--no-seat-tokens"])
                    .args(["--database-url", &url, "--log-format", "json"]);
                command
            },
            0,
        )
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_carry_the_call_spans_game_id_and_status() {
    let dir = tempfile::tempdir().unwrap();
    let server = json_logging_server(&dir).await;
    let mut client = connect(server.port).await;
    client.create_game(tic_tac_toe("logged")).await.unwrap();
    client.submit_move(corner("logged")).await.unwrap();
    drop(client);
    let lines = tokio::task::spawn_blocking(move || {
        let mut server = server;
        terminate(&mut server);
        server.log_lines("call ended")
    })
    .await
    .unwrap();
    let calls: Vec<serde_json::Value> = lines
        .iter()
        .map(|line| serde_json::from_str(line).expect("each log line is JSON"))
        .collect();
    let moved = calls
        .iter()
        .find(|c| c["span"]["rpc.method"] == "SubmitMove")
        .unwrap_or_else(|| panic!("no SubmitMove call line in {lines:#?}"));
    assert_eq!(moved["span"]["game_id"], "logged");
    assert_eq!(moved["span"]["request_id"], "move-1");
    assert_eq!(moved["fields"]["code"], "OK");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callers_request_id_reaches_the_log_with_its_control_and_bidi_characters_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let server = json_logging_server(&dir).await;
    let mut client = connect(server.port).await;
    // serde_json escapes ESC, CR and LF itself, but not DEL, the C1
    // controls or a bidirectional override.
    let request_id = "r\u{1b}[2J\r\n\u{7f}\u{9b}\u{202e}x";
    client
        .create_game(pb::CreateGameRequest {
            request_id: request_id.into(),
            ..tic_tac_toe("logged")
        })
        .await
        .unwrap();
    drop(client);
    let lines = tokio::task::spawn_blocking(move || {
        let mut server = server;
        terminate(&mut server);
        server.log_lines("")
    })
    .await
    .unwrap();
    for line in &lines {
        assert!(
            !line.chars().any(plylog::game::is_disruptive),
            "a raw control or bidi character in {line:?}"
        );
    }
    let created = lines
        .iter()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("JSON"))
        .find(|line| line["span"]["rpc.method"] == "CreateGame")
        .unwrap_or_else(|| panic!("no CreateGame line in {lines:#?}"));
    assert_eq!(
        created["span"]["request_id"],
        "r\\u{1b}[2J\\u{d}\\u{a}\\u{7f}\\u{9b}\\u{202e}x"
    );
}
