//! The router stack: the gRPC services (plylog.v1.GameService, health,
//! reflection v1 and v1alpha) and the tower layers every request passes
//! through, outermost first: the dashboard, CORS, the Connect protocol
//! ([`crate::connect`]), grpc-web, reply compression
//! ([`crate::compression`]), the call layer (metrics, traces, logs) and
//! the mapping of transport refusals to gRPC errors.

use std::convert::Infallible;

use tonic::codec::CompressionEncoding;
use tonic_health::pb::health_server::{Health, HealthServer};
use tower::Service;
use tower::util::MapResponseLayer;

use super::AppError;
use crate::api::{GameApi, transport_refusals};
use crate::compression::{GrpcCompressionLayer, ReplyCompression};
use crate::connect::ConnectLayer;
use crate::metrics::Metrics;
use crate::proto::{FILE_DESCRIPTOR_SET, game_service_server::GameServiceServer};
use crate::telemetry::CallLayer;
use crate::web::{self, WebSettings};

/// What the gRPC port serves ([`crate::transport::serve`]'s service):
/// hyper's requests in, tonic's bodies out, never an error of its own.
pub(super) trait GrpcPort:
    Service<
        http::Request<hyper::body::Incoming>,
        Response = http::Response<tonic::body::Body>,
        Error = Infallible,
        Future: Send + 'static,
    > + Clone
    + Send
    + 'static
{
}

impl<S> GrpcPort for S where
    S: Service<
            http::Request<hyper::body::Incoming>,
            Response = http::Response<tonic::body::Body>,
            Error = Infallible,
            Future: Send + 'static,
        > + Clone
        + Send
        + 'static
{
}

/// Every service the gRPC port serves, behind the layers, with requests
/// of up to `limit` bytes (decompressed).
///
/// # Errors
/// [`AppError::Reflection`] when the reflection service cannot be built.
pub(super) fn service(
    api: GameApi,
    health_service: HealthServer<impl Health>,
    limit: usize,
    web: &WebSettings,
    compression: ReplyCompression,
    metrics: Metrics,
) -> Result<impl GrpcPort, AppError> {
    let reflection = || {
        // Both reflection versions list both, whichever a client speaks.
        tonic_reflection::server::Builder::configure()
            .include_reflection_service(false)
            .register_encoded_file_descriptor_set(tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(
                tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET,
            )
            .register_encoded_file_descriptor_set(FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            // google.rpc's ErrorInfo, BadRequest, RetryInfo...: lets
            // grpcurl decode the error details we send.
            .register_encoded_file_descriptor_set(tonic_types::pb::FILE_DESCRIPTOR_SET)
    };
    // gzip and zstd requests are accepted, and the request limit applies
    // to the decompressed message. tonic compresses no reply: the
    // compression layer compresses large messages only.
    let game_service = GameServiceServer::new(api)
        .max_decoding_message_size(limit)
        .accept_compressed(CompressionEncoding::Gzip)
        .accept_compressed(CompressionEncoding::Zstd);
    let routes = tonic::service::Routes::new(health_service.max_decoding_message_size(limit))
        .add_service(reflection().build_v1()?.max_decoding_message_size(limit))
        .add_service(
            reflection()
                .build_v1alpha()?
                .max_decoding_message_size(limit),
        )
        .add_service(game_service)
        .prepare();
    let (dashboard, cors, grpc_web) = web::layers(web);
    Ok(tower::ServiceBuilder::new()
        .layer(dashboard)
        .layer(cors)
        .layer(ConnectLayer::new(limit, compression))
        .layer(grpc_web)
        .layer(GrpcCompressionLayer::new(compression))
        .layer(CallLayer::new(metrics))
        .layer(MapResponseLayer::new(transport_refusals(limit)))
        .service(routes))
}
