//! Reply compression that pays for itself: a reply message is compressed
//! only from `--compress-replies-above` bytes (4 KiB by default), for a
//! caller that offers gzip or zstd, over gRPC and the Connect protocol;
//! requests of any size are read compressed.

use std::time::Duration;

use bytes::{Buf, Bytes};
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::rt::TokioExecutor;
use plylog::compression::{Encoding, ReplyCompression};
use plylog::proto as pb;
use prost::Message;
use tonic::codec::CompressionEncoding;

use plylog_testkit::{TestServer, create, mnk, place, play};

type Http = HttpClient<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>>;

fn http2() -> Http {
    HttpClient::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http()
}

/// A hundred games, so that a page of them (ListGames) is over 4 KiB, and a
/// move's reply about a hundred bytes; "big" has one move.
async fn big_page(server: &mut TestServer) {
    for i in 0..99 {
        create(&mut server.client, &format!("big-{i:02}"), mnk(3, 3, 3)).await;
    }
    create(&mut server.client, "big", mnk(3, 3, 3)).await;
    play(&mut server.client, "big", 0, place(1, 1))
        .await
        .unwrap();
}

/// The page of every game.
fn list_games() -> pb::ListGamesRequest {
    pb::ListGamesRequest {
        page_size: 100,
        ..Default::default()
    }
}

/// A raw gRPC call of `method` with `message`, offering `accept` as
/// grpc-accept-encoding: the reply's grpc-encoding and its messages, each
/// with its Compressed-Flag and bytes as sent.
async fn raw_grpc(
    server: &TestServer,
    method: &str,
    message: Vec<u8>,
    accept: &str,
) -> (Option<String>, Vec<(u8, Bytes)>) {
    let mut framed = vec![0];
    framed.extend_from_slice(&(message.len() as u32).to_be_bytes());
    framed.extend_from_slice(&message);
    let request = Request::post(format!(
        "http://{}/plylog.v1.GameService/{method}",
        server.addr
    ))
    .header(header::CONTENT_TYPE, "application/grpc")
    .header(header::TE, "trailers")
    .header("grpc-accept-encoding", accept)
    .body(Full::new(Bytes::from(framed)))
    .unwrap();
    let response = tokio::time::timeout(Duration::from_secs(10), http2().request(request))
        .await
        .expect("an answer in time")
        .unwrap();
    let encoding = response
        .headers()
        .get("grpc-encoding")
        .map(|e| e.to_str().unwrap().to_owned());
    let collected = response.into_body().collect().await.unwrap();
    assert_eq!(
        collected
            .trailers()
            .and_then(|t| t.get("grpc-status"))
            .map(|s| s.as_bytes()),
        Some(&b"0"[..])
    );
    let mut bytes = collected.to_bytes();
    let mut messages = Vec::new();
    while bytes.has_remaining() {
        let flag = bytes.get_u8();
        let len = bytes.get_u32() as usize;
        messages.push((flag, bytes.split_to(len)));
    }
    (encoding, messages)
}

fn get_game(id: &str) -> Vec<u8> {
    pb::GetGameRequest {
        game_id: id.into(),
        at_sequence: None,
    }
    .encode_to_vec()
}

#[tokio::test]
async fn only_replies_over_the_threshold_are_compressed_over_grpc() {
    let mut server = TestServer::start().await;
    big_page(&mut server).await;
    let plain = server
        .client
        .list_games(list_games())
        .await
        .unwrap()
        .into_inner();
    assert!(plain.encoded_len() > ReplyCompression::DEFAULT_MIN_BYTES);

    // grpcurl and grpcio offer gzip: the large reply is compressed at the
    // fast level, and reads back as the same message.
    let (encoding, messages) = raw_grpc(
        &server,
        "ListGames",
        list_games().encode_to_vec(),
        "identity, deflate, gzip",
    )
    .await;
    assert_eq!(encoding.as_deref(), Some("gzip"));
    let [(flag, compressed)] = &messages[..] else {
        panic!("one message")
    };
    assert_eq!(*flag, 1, "the large reply is compressed");
    assert!(
        compressed.len() * 4 < plain.encoded_len(),
        "{} of {}",
        compressed.len(),
        plain.encoded_len()
    );
    let mut decompressed = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(&compressed[..]),
        &mut decompressed,
    )
    .unwrap();
    assert_eq!(
        pb::ListGamesResponse::decode(&decompressed[..]).unwrap(),
        plain
    );

    // The first encoding offered is used, unless its quality is zero.
    for (offer, chosen) in [
        ("zstd, gzip", "zstd"),
        ("deflate,gzip,zstd", "gzip"),
        ("gzip;q=0, zstd", "zstd"),
    ] {
        let page = list_games().encode_to_vec();
        let (encoding, messages) = raw_grpc(&server, "ListGames", page, offer).await;
        assert_eq!(
            (encoding.as_deref(), messages[0].0),
            (Some(chosen), 1),
            "{offer}"
        );
    }

    // A small reply goes out as it is, even to a caller that offers gzip.
    let (_, messages) = raw_grpc(&server, "GetGame", get_game("big"), "gzip").await;
    assert_eq!(messages[0].0, 0, "a small reply is not compressed");

    // A caller that offers nothing gets nothing compressed.
    let (encoding, messages) = raw_grpc(
        &server,
        "ListGames",
        list_games().encode_to_vec(),
        "identity",
    )
    .await;
    assert_eq!((encoding, messages[0].0), (None, 0));
}

#[tokio::test]
async fn a_tonic_client_that_accepts_gzip_reads_large_and_small_replies() {
    let mut server = TestServer::start().await;
    big_page(&mut server).await;
    let mut client = server
        .client
        .clone()
        .accept_compressed(CompressionEncoding::Gzip)
        .send_compressed(CompressionEncoding::Gzip);
    let page = client.list_games(list_games()).await.unwrap().into_inner();
    assert_eq!(page.games.len(), 100);
    // Its compressed request, small as it is, is read too.
    let moved = client
        .submit_move(plylog_testkit::move_request("big", 1, place(0, 0)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(moved.game.unwrap().position.unwrap().sequence, 3);
}

#[tokio::test]
async fn compression_off_compresses_nothing() {
    let mut server = TestServer::start_tuned(|settings| {
        settings.reply_compression = ReplyCompression::parse("off").unwrap();
    })
    .await;
    big_page(&mut server).await;
    let (encoding, messages) = raw_grpc(
        &server,
        "ListGames",
        list_games().encode_to_vec(),
        "gzip, zstd",
    )
    .await;
    assert_eq!((encoding, messages[0].0), (None, 0));
}

#[tokio::test]
async fn connect_replies_over_the_threshold_are_compressed_when_accepted() {
    let mut server = TestServer::start().await;
    big_page(&mut server).await;
    let call = async |method: &str, body: &str, accept: &str| {
        let request = Request::post(format!(
            "http://{}/plylog.v1.GameService/{method}",
            server.addr
        ))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT_ENCODING, accept)
        .body(Full::new(Bytes::from(body.to_owned())))
        .unwrap();
        let response = HttpClient::builder(TokioExecutor::new())
            .build_http::<Full<Bytes>>()
            .request(request)
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let encoding = response
            .headers()
            .get(header::CONTENT_ENCODING)
            .map(|e| e.to_str().unwrap().to_owned());
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (encoding, body)
    };
    let page = r#"{"pageSize": 100}"#;
    let (encoding, plain) = call("ListGames", page, "identity").await;
    assert_eq!(encoding, None);
    let (encoding, gzipped) = call("ListGames", page, "gzip, deflate, br").await;
    assert_eq!(encoding.as_deref(), Some("gzip"));
    assert_eq!(
        Encoding::Gzip.decompress(&gzipped, 1 << 20).unwrap(),
        plain.to_vec()
    );
    let (encoding, _) = call("GetGame", r#"{"gameId": "big"}"#, "gzip").await;
    assert_eq!(encoding, None, "a small reply is not compressed");
}
