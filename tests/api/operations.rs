use plylog::proto::FILE_DESCRIPTOR_SET;
use prost::Message as _;
use tonic_health::pb::{
    HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
};
use tonic_reflection::pb::v1::{
    ServerReflectionRequest, server_reflection_client::ServerReflectionClient,
    server_reflection_request::MessageRequest, server_reflection_response::MessageResponse,
};

use plylog_testkit::*;

#[tokio::test]
async fn health_reports_serving_for_the_server_and_the_game_service() {
    let server = TestServer::start().await;
    let mut health = HealthClient::new(channel(server.addr).await);
    for service in ["", "plylog.v1.GameService"] {
        let reply = health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            reply.status(),
            ServingStatus::Serving,
            "service {service:?}"
        );
    }
}

#[tokio::test]
async fn reflection_lists_the_game_service_as_grpcurl_asks_for_it() {
    let server = TestServer::start().await;
    let mut reflection = ServerReflectionClient::new(channel(server.addr).await);
    let ask = |message_request| ServerReflectionRequest {
        host: String::new(),
        message_request: Some(message_request),
    };
    // The list, then the files that define the error details we send, as
    // grpcurl asks for them to decode a status's details.
    let details = [
        "google.rpc.ErrorInfo",
        "google.rpc.BadRequest",
        "google.rpc.RetryInfo",
    ];
    let requests = std::iter::once(ask(MessageRequest::ListServices(String::new()))).chain(
        details
            .iter()
            .map(|symbol| ask(MessageRequest::FileContainingSymbol((*symbol).into()))),
    );
    let mut replies = reflection
        .server_reflection_info(tokio_stream::iter(requests.collect::<Vec<_>>()))
        .await
        .unwrap()
        .into_inner();
    let reply = within(replies.message()).await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = reply.message_response else {
        panic!("a service list")
    };
    let names: Vec<_> = list.service.iter().map(|s| s.name.as_str()).collect();
    for expected in [
        "plylog.v1.GameService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
    ] {
        assert!(names.contains(&expected), "{names:?}");
    }
    assert!(!FILE_DESCRIPTOR_SET.is_empty());
    for symbol in details {
        let reply = within(replies.message()).await.unwrap().unwrap();
        let Some(MessageResponse::FileDescriptorResponse(files)) = reply.message_response else {
            panic!("the file defining {symbol}: {:?}", reply.message_response)
        };
        let name = symbol.rsplit('.').next().unwrap();
        let defines = files.file_descriptor_proto.iter().any(|bytes| {
            prost_types::FileDescriptorProto::decode(bytes.as_slice())
                .unwrap()
                .message_type
                .iter()
                .any(|m| m.name() == name)
        });
        assert!(defines, "no file sent defines {symbol}");
    }
}

#[tokio::test]
async fn bytes_that_do_not_decode_are_an_invalid_argument_not_an_internal_error() {
    let server = TestServer::start().await;
    let mut grpc = tonic::client::Grpc::new(channel(server.addr).await);
    for body in [
        vec![0xff, 0xff, 0xff, 0xff],
        vec![0x0a, 0x05, 0xc3, 0x28],
        vec![0x08],
    ] {
        grpc.ready().await.unwrap();
        let path = tonic::codegen::http::uri::PathAndQuery::from_static(
            "/plylog.v1.GameService/SubmitMove",
        );
        let result = grpc.unary(tonic::Request::new(body), path, RawCodec).await;
        assert_rejected(result, tonic::Code::InvalidArgument, "INVALID_REQUEST");
    }
}

#[tokio::test]
async fn a_call_without_a_request_or_a_health_check_of_garbage_is_an_invalid_argument() {
    let server = TestServer::start().await;
    let mut grpc = tonic::client::Grpc::new(channel(server.addr).await);
    let path =
        || tonic::codegen::http::uri::PathAndQuery::from_static("/plylog.v1.GameService/GetGame");
    // No request message at all.
    grpc.ready().await.unwrap();
    let empty = tokio_stream::iter(Vec::<Vec<u8>>::new());
    let result = grpc
        .client_streaming(tonic::Request::new(empty), path(), RawCodec)
        .await;
    assert_rejected(result, tonic::Code::InvalidArgument, "INVALID_REQUEST");
    // The health service's own decoder, on bytes that are not a request.
    grpc.ready().await.unwrap();
    let health =
        tonic::codegen::http::uri::PathAndQuery::from_static("/grpc.health.v1.Health/Check");
    let result = grpc
        .unary(tonic::Request::new(vec![0xff]), health, RawCodec)
        .await;
    assert_rejected(result, tonic::Code::InvalidArgument, "INVALID_REQUEST");
}

#[tokio::test]
async fn gzip_and_zstd_requests_are_accepted_and_replies_come_compressed_when_offered() {
    use plylog::proto::game_service_client::GameServiceClient;
    use tonic::codec::CompressionEncoding;
    let server = TestServer::start().await;
    for (i, encoding) in [CompressionEncoding::Gzip, CompressionEncoding::Zstd]
        .into_iter()
        .enumerate()
    {
        let mut client = GameServiceClient::new(channel(server.addr).await)
            .send_compressed(encoding)
            .accept_compressed(encoding);
        let game_id = format!("squeezed-{i}");
        client
            .create_game(create_request(&game_id, mnk(3, 3, 3)))
            .await
            .expect("a compressed CreateGame is served");
        let reply = client
            .submit_move(move_request(&game_id, 0, place(1, 1)))
            .await
            .expect("a compressed SubmitMove is served");
        let name = if i == 0 { "gzip" } else { "zstd" };
        assert_eq!(
            reply
                .metadata()
                .get("grpc-encoding")
                .and_then(|v| v.to_str().ok()),
            Some(name),
            "the reply is compressed as offered"
        );
        assert_eq!(reply.into_inner().game.unwrap().last_sequence, 2);
    }
    // The request limit applies to the decompressed message: 100 KiB of
    // one letter compresses to a few hundred bytes and is still refused.
    let mut client = GameServiceClient::new(channel(server.addr).await)
        .send_compressed(CompressionEncoding::Gzip);
    let mut request = create_request("bomb", mnk(3, 3, 3));
    request.seats[0].display_name = "x".repeat(100 * 1024);
    let status = client.create_game(request).await.unwrap_err();
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (tonic::Code::ResourceExhausted, "REQUEST_TOO_LARGE"),
        "{status:?}"
    );
}
