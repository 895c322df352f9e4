//! The Connect protocol (<https://connectrpc.com/docs/protocol>) on the
//! gRPC port: every unary RPC as `POST /plylog.v1.GameService/CreateGame`
//! with a JSON (`application/json`) or binary (`application/proto`) body,
//! and the server streams (StreamEvents, StreamAllEvents, Health/Watch) as
//! `application/connect+json` or `application/connect+proto` envelopes,
//! over HTTP/1.1 and HTTP/2. `curl` reaches the API with it, and so do
//! Connect's clients for the browser, Node, Go, Swift and Kotlin.
//!
//! A Connect call is transcoded into the gRPC call it stands for and
//! passed to the same routes, behind the same layers: authentication (the
//! `authorization` header), limits, metrics and traces see a gRPC call.
//! JSON is protobuf's canonical JSON mapping (proto3 JSON, as grpcurl
//! prints it), read and written by prost-reflect from the descriptors
//! compiled into the binary; fields the server does not know are ignored,
//! as Connect's own servers do. The reply is transcoded back: a unary
//! reply is the message, a stream a sequence of envelopes (a flags byte,
//! a big-endian 32-bit length, the message) ending with an end-of-stream
//! envelope holding the status. An error is Connect's JSON error
//! (`{"code": "failed_precondition", "message": ..., "details": [...]}`)
//! with the HTTP status Connect gives its code, and the same details as
//! the gRPC error: each detail's `value` is the encoded message in base64,
//! and its `debug` the same message as JSON, so that `curl` shows the
//! ErrorInfo reason.
//!
//! Not served: Connect's `GET` form (no plylog RPC is marked free of side
//! effects), and client or bidirectional streams (none in plylog.v1; the
//! reflection service, which is one, stays on gRPC).
//!
//! - [`ConnectLayer`]: the layer, outside grpc-web and inside CORS.

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::LazyLock;
use std::task::{Context, Poll};

use base64::Engine;
use base64::engine::general_purpose::STANDARD_NO_PAD;
use bytes::{Buf, BufMut, Bytes, BytesMut};
use futures_util::future::Either;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Request, Response, StatusCode, Version};
use http_body::Frame;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use prost::Message;
use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage, MessageDescriptor};
use serde::Serialize;
use tonic::body::Body;
use tonic::{Code, Status};
use tower::{Layer, Service};

use crate::api::{malformed_request, request_too_large};
use crate::compression::{Encoding, ReplyCompression};
use crate::proto::FILE_DESCRIPTOR_SET;

/// How a Connect request's messages are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Codec {
    /// Protobuf's canonical JSON mapping.
    Json,
    /// Protobuf's binary encoding.
    Proto,
}

impl Codec {
    fn name(self) -> &'static str {
        match self {
            Codec::Json => "json",
            Codec::Proto => "proto",
        }
    }
}

/// Which Connect call a request is, by its `content-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `application/json` or `application/proto`: one message each way.
    Unary(Codec),
    /// `application/connect+json` or `application/connect+proto`:
    /// enveloped messages.
    Stream(Codec),
}

impl Kind {
    /// The Connect call `headers` announce, if any (a gRPC, grpc-web or
    /// dashboard request is none).
    fn of(headers: &HeaderMap) -> Option<Kind> {
        let content_type = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
        let media = content_type.split(';').next()?.trim();
        let kind = match media.to_ascii_lowercase().as_str() {
            "application/json" => Kind::Unary(Codec::Json),
            "application/proto" => Kind::Unary(Codec::Proto),
            "application/connect+json" => Kind::Stream(Codec::Json),
            "application/connect+proto" => Kind::Stream(Codec::Proto),
            _ => return None,
        };
        Some(kind)
    }
}

/// A method the Connect protocol serves: its messages, and whether its
/// replies are a stream.
#[derive(Debug, Clone)]
struct Procedure {
    input: MessageDescriptor,
    output: MessageDescriptor,
    server_streaming: bool,
}

/// The descriptors of plylog.v1, gRPC's health service and google.rpc's
/// error details (for the `debug` JSON of error details).
static POOL: LazyLock<DescriptorPool> = LazyLock::new(|| {
    let mut pool = DescriptorPool::new();
    for set in [
        FILE_DESCRIPTOR_SET,
        tonic_health::pb::FILE_DESCRIPTOR_SET,
        tonic_types::pb::FILE_DESCRIPTOR_SET,
    ] {
        pool.decode_file_descriptor_set(set)
            .expect("the compiled-in descriptor sets decode");
    }
    pool
});

/// Every unary and server-streaming method of [`POOL`]'s services, by
/// request path (`/plylog.v1.GameService/CreateGame`).
static PROCEDURES: LazyLock<HashMap<String, Procedure>> = LazyLock::new(|| {
    let mut procedures = HashMap::new();
    for service in POOL.services() {
        for method in service.methods() {
            if method.is_client_streaming() {
                continue;
            }
            procedures.insert(
                format!("/{}/{}", service.full_name(), method.name()),
                Procedure {
                    input: method.input(),
                    output: method.output(),
                    server_streaming: method.is_server_streaming(),
                },
            );
        }
    }
    procedures
});

/// Serves the Connect protocol in front of the gRPC routes (see the module
/// docs); any other request passes through.
#[derive(Debug, Clone, Copy)]
pub struct ConnectLayer {
    max_request_bytes: usize,
    compression: ReplyCompression,
}

impl ConnectLayer {
    /// The layer, taking request bodies of up to `max_request_bytes`
    /// (as sent, and again once decompressed: JSON counts its text) and
    /// compressing replies as `compression` says.
    pub fn new(max_request_bytes: usize, compression: ReplyCompression) -> Self {
        ConnectLayer {
            max_request_bytes,
            compression,
        }
    }
}

impl<S> Layer<S> for ConnectLayer {
    type Service = Connect<S>;

    fn layer(&self, inner: S) -> Connect<S> {
        Connect {
            inner,
            settings: *self,
        }
    }
}

/// See [`ConnectLayer`].
#[derive(Debug, Clone)]
pub struct Connect<S> {
    inner: S,
    settings: ConnectLayer,
}

/// What a Connect call's future is.
type Call = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

impl<S, B> Service<Request<B>> for Connect<S>
where
    S: Service<Request<Body>, Response = Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<tonic::codegen::StdError>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    // No box for gRPC calls, which only pass through.
    type Future = Either<S::Future, Call>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let Some(kind) = Kind::of(request.headers()) else {
            if request.method() == Method::POST && !is_grpc(request.headers()) {
                let failure = Failure::answered(
                    Status::invalid_argument(
                        "this content-type is not served: send application/json \
                         (or application/proto; application/connect+json for Connect's \
                         streams), or gRPC or grpc-web",
                    ),
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                );
                let mut response = unary_error(failure);
                response
                    .headers_mut()
                    .insert("accept-post", HeaderValue::from_static(ACCEPTED));
                return Either::Right(Box::pin(std::future::ready(Ok(response))));
            }
            return Either::Left(self.inner.call(request.map(Body::new)));
        };
        // The one made ready goes with the call; a clone stays for the next.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        Either::Right(Box::pin(serve(inner, request, kind, self.settings)))
    }
}

/// The content types the port serves a `POST` in, for `Accept-Post`.
const ACCEPTED: &str = "application/json, application/proto, application/connect+json, \
     application/connect+proto, application/grpc, application/grpc-web, application/grpc-web-text";

/// Whether `headers` announce gRPC or grpc-web (`application/grpc...`),
/// which pass through to the routes.
pub(crate) fn is_grpc(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|t| t.as_bytes().starts_with(b"application/grpc"))
}

/// The deadline `Connect-Timeout-Ms` sets, if any.
///
/// # Errors
/// INVALID_ARGUMENT when it is not a count of milliseconds of at most 10
/// digits (the protocol's form).
fn deadline(headers: &HeaderMap) -> Result<Option<tokio::time::Instant>, Status> {
    let Some(value) = headers.get("connect-timeout-ms") else {
        return Ok(None);
    };
    let text = value.to_str().unwrap_or_default();
    let ms = (!text.is_empty() && text.len() <= 10 && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse::<u64>().ok())
        .flatten()
        .ok_or_else(|| {
            Status::invalid_argument(format!(
                "connect-timeout-ms {text:?} is not a count of milliseconds (at most 10 digits)"
            ))
        })?;
    Ok(Some(
        tokio::time::Instant::now() + std::time::Duration::from_millis(ms),
    ))
}

/// Serves one Connect call of `kind` with `inner`.
async fn serve<S, B>(
    inner: S,
    request: Request<B>,
    kind: Kind,
    settings: ConnectLayer,
) -> Result<Response<Body>, Infallible>
where
    S: Service<Request<Body>, Response = Response<Body>, Error = Infallible>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<tonic::codegen::StdError>,
{
    if request.method() != Method::POST {
        let mut response = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "the Connect protocol is served for POST only\n",
        );
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        return Ok(response);
    }
    let procedure = match PROCEDURES.get(request.uri().path()) {
        Some(procedure) => procedure.clone(),
        None => {
            let failure = Failure::answered(
                Status::unimplemented(format!(
                    "no procedure at {}: the Connect protocol serves /plylog.v1.GameService/<Method> \
                     and /grpc.health.v1.Health/<Method> (server reflection is gRPC only)",
                    request.uri().path()
                )),
                StatusCode::NOT_FOUND,
            );
            return Ok(unary_error(failure));
        }
    };
    if matches!(kind, Kind::Stream(_)) && !procedure.server_streaming {
        let failure = Failure::answered(
            Status::invalid_argument(format!(
                "{} is unary: call it with content-type application/json or application/proto",
                request.uri().path()
            )),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
        );
        return Ok(unary_error(failure));
    }
    let deadline = match deadline(request.headers()) {
        Ok(deadline) => deadline,
        Err(status) => return Ok(unary_error(status.into())),
    };
    let compressing = settings.compression.min_bytes.is_some();
    let response = match kind {
        Kind::Unary(Codec::Json) if procedure.server_streaming => {
            stream(
                inner,
                request,
                procedure,
                Framing::Lines,
                None,
                deadline,
                settings,
            )
            .await
        }
        Kind::Unary(codec) => {
            let accept =
                Encoding::preferred(request.headers(), "accept-encoding").filter(|_| compressing);
            let call = unary(inner, request, &procedure, codec, settings);
            let answered = match deadline {
                Some(deadline) => tokio::time::timeout_at(deadline, call)
                    .await
                    .unwrap_or_else(|_| Err(deadline_exceeded().into())),
                None => call.await,
            };
            match answered {
                Ok((parts, message)) => unary_reply(parts, message, codec, accept, settings),
                Err(failure) => unary_error(failure),
            }
        }
        Kind::Stream(codec) => {
            let accept = Encoding::preferred(request.headers(), "connect-accept-encoding")
                .filter(|_| compressing);
            let framing = Framing::Envelopes(codec);
            stream(
                inner, request, procedure, framing, accept, deadline, settings,
            )
            .await
        }
    };
    Ok(response)
}

/// A failed Connect call: its status, and the headers and trailers the
/// server sent with it.
struct Failure {
    status: Status,
    status_code: Option<StatusCode>,
    metadata: HeaderMap,
}

impl Failure {
    /// A failure with `status`, answered with the HTTP status `http`
    /// rather than the one its code maps to.
    fn answered(status: Status, http: StatusCode) -> Self {
        Failure {
            status,
            status_code: Some(http),
            metadata: HeaderMap::new(),
        }
    }
}

impl From<Status> for Failure {
    fn from(status: Status) -> Self {
        Failure {
            status,
            status_code: None,
            metadata: HeaderMap::new(),
        }
    }
}

/// The call's one request message, as the gRPC routes take it: the body
/// read (within the limit), decompressed, and, for JSON, encoded.
async fn read_request<B>(
    request: Request<B>,
    procedure: &Procedure,
    kind: Kind,
    settings: ConnectLayer,
) -> Result<(http::request::Parts, Bytes), Status>
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<tonic::codegen::StdError>,
{
    let limit = settings.max_request_bytes;
    let (parts, body) = request.into_parts();
    // The envelope's five bytes are not the message's.
    let allowed = match kind {
        Kind::Unary(_) => limit,
        Kind::Stream(_) => limit + 5,
    };
    let bytes = match Limited::new(body, allowed).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => {
            return Err(request_too_large(limit));
        }
        Err(error) => return Err(Status::cancelled(format!("reading the request: {error}"))),
    };
    let (codec, encoding, compressed, message) = match kind {
        Kind::Unary(codec) => {
            let encoding = content_encoding(&parts.headers, header::CONTENT_ENCODING.as_str())?;
            (codec, encoding, encoding.is_some(), bytes)
        }
        Kind::Stream(codec) => {
            let encoding = content_encoding(&parts.headers, "connect-content-encoding")?;
            let (flags, message) = one_envelope(bytes)?;
            if flags & !COMPRESSED != 0 {
                return Err(malformed_request(&format!(
                    "a request envelope's flags are 0 or 1 (compressed), not {flags}"
                )));
            }
            if flags & 1 == 1 && encoding.is_none() {
                return Err(malformed_request(
                    "the envelope is flagged compressed, but connect-content-encoding names no encoding",
                ));
            }
            (codec, encoding, flags & 1 == 1, message)
        }
    };
    // Empty content is never decompressed (the protocol says so).
    let message = match encoding.filter(|_| compressed && !message.is_empty()) {
        Some(encoding) => Bytes::from(encoding.decompress(&message, limit).map_err(|why| {
            if why.starts_with("over the limit") {
                request_too_large(limit)
            } else {
                malformed_request(&why)
            }
        })?),
        None => message,
    };
    let binary = match codec {
        Codec::Proto => message,
        Codec::Json => {
            let mut deserializer = serde_json::Deserializer::from_slice(&message);
            let options = DeserializeOptions::new().deny_unknown_fields(false);
            let decoded = DynamicMessage::deserialize_with_options(
                procedure.input.clone(),
                &mut deserializer,
                &options,
            )
            .and_then(|decoded| deserializer.end().map(|()| decoded))
            .map_err(|e| {
                malformed_request(&format!(
                    "the body is not a {} in JSON: {e}",
                    procedure.input.full_name()
                ))
            })?;
            decoded.encode_to_vec().into()
        }
    };
    Ok((parts, binary))
}

/// The encoding named by `headers`' `name` header, if any (`identity` is
/// none).
///
/// # Errors
/// UNIMPLEMENTED for an encoding the server does not speak.
fn content_encoding(headers: &HeaderMap, name: &str) -> Result<Option<Encoding>, Status> {
    let Some(value) = headers.get(name) else {
        return Ok(None);
    };
    let value = value.to_str().unwrap_or_default().trim();
    if value.is_empty() || value.eq_ignore_ascii_case("identity") {
        return Ok(None);
    }
    Encoding::from_name(value).map(Some).ok_or_else(|| {
        Status::unimplemented(format!(
            "{name} {value:?} is not supported: send gzip, zstd or identity"
        ))
    })
}

/// A stream request's one envelope: its flags and message.
fn one_envelope(mut bytes: Bytes) -> Result<(u8, Bytes), Status> {
    if bytes.len() < 5 {
        return Err(malformed_request(
            "a Connect stream request is one envelope: a flags byte, a 4-byte length and the message",
        ));
    }
    let flags = bytes.get_u8();
    let len = bytes.get_u32() as usize;
    if bytes.len() != len {
        return Err(malformed_request(&format!(
            "the envelope says {len} bytes, and {} follow it",
            bytes.len()
        )));
    }
    Ok((flags, bytes))
}

/// Request headers that describe the Connect request itself and are not
/// passed to the gRPC call.
fn is_connect_header(name: &HeaderName) -> bool {
    let name = name.as_str();
    matches!(
        name,
        "content-type"
            | "content-length"
            | "content-encoding"
            | "accept-encoding"
            | "connection"
            | "keep-alive"
            | "transfer-encoding"
            | "upgrade"
            | "te"
            | "host"
    ) || name.starts_with("connect-")
        || name.starts_with("grpc-")
}

/// The gRPC request standing for a Connect call: the same path and
/// metadata, the message in gRPC's framing, `Connect-Timeout-Ms` as
/// `grpc-timeout`.
fn grpc_request(mut parts: http::request::Parts, message: Bytes) -> Request<Body> {
    let timeout = parts
        .headers
        .get("connect-timeout-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let mut headers = HeaderMap::with_capacity(parts.headers.len() + 2);
    let mut last = None;
    for (name, value) in std::mem::take(&mut parts.headers) {
        // A name comes once, before all its values.
        if let Some(name) = name {
            last = Some(name);
        }
        let name = last.as_ref().expect("the first entry has a name");
        if !is_connect_header(name) {
            headers.append(name.clone(), value);
        }
    }
    parts.headers = headers;
    let headers = &mut parts.headers;
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/grpc"),
    );
    headers.insert(header::TE, HeaderValue::from_static("trailers"));
    if let Some(ms) = timeout {
        // gRPC allows at most eight digits per unit.
        let value = if ms < 100_000_000 {
            format!("{ms}m")
        } else {
            format!("{}S", (ms / 1000).min(99_999_999))
        };
        headers.insert(
            "grpc-timeout",
            HeaderValue::from_str(&value).expect("digits and a unit"),
        );
    }
    // The routes behind take every request as HTTP/2 (grpc-web's layer
    // refuses other HTTP/1.1 requests).
    parts.version = Version::HTTP_2;
    parts.method = Method::POST;
    let mut framed = BytesMut::with_capacity(5 + message.len());
    framed.put_u8(0);
    framed.put_u32(u32::try_from(message.len()).expect("within the request limit"));
    framed.put(message);
    Request::from_parts(parts, Body::new(Full::new(framed.freeze())))
}

/// A unary call: its reply's headers (trailers among them, as
/// `trailer-*`) and its message, or how it failed.
async fn unary<S, B>(
    mut inner: S,
    request: Request<B>,
    procedure: &Procedure,
    codec: Codec,
    settings: ConnectLayer,
) -> Result<(HeaderMap, Bytes), Failure>
where
    S: Service<Request<Body>, Response = Response<Body>, Error = Infallible>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<tonic::codegen::StdError>,
{
    if procedure.server_streaming {
        return Err(Status::unimplemented(format!(
            "{} is a server stream: call it with content-type application/connect+{} (or application/json for lines of JSON)",
            request.uri().path(),
            codec.name()
        ))
        .into());
    }
    let (parts, message) = read_request(request, procedure, Kind::Unary(codec), settings).await?;
    let Ok(response) = inner.call(grpc_request(parts, message)).await;
    let (parts, body) = response.into_parts();
    let mut metadata = parts.headers;
    if let Some(status) = Status::from_header_map(&metadata) {
        return Err(failure(status, metadata));
    }
    let collected = body
        .collect()
        .await
        .map_err(|e| Status::internal(format!("the reply failed: {e}")))?;
    let trailers = collected.trailers().cloned().unwrap_or_default();
    let mut messages = collected.to_bytes();
    let status = Status::from_header_map(&trailers)
        .unwrap_or_else(|| Status::internal("the reply ended without a status"));
    // Connect sends a unary call's trailers as headers named trailer-*.
    for (name, value) in passed_metadata(&trailers) {
        let name = HeaderName::from_bytes(format!("trailer-{name}").as_bytes())
            .expect("a header name with a prefix is one");
        metadata.append(name, value.clone());
    }
    if status.code() != Code::Ok {
        return Err(failure(status, metadata));
    }
    let message =
        next_message(&mut messages)?.ok_or_else(|| Status::internal("the reply has no message"))?;
    let message = match codec {
        Codec::Proto => message,
        Codec::Json => to_json(&procedure.output, &message)?,
    };
    Ok((metadata, message))
}

/// A failure with `status`, keeping the reply's `metadata`.
fn failure(status: Status, metadata: HeaderMap) -> Failure {
    Failure {
        status,
        status_code: None,
        metadata,
    }
}

/// Whether `pending` starts with a whole gRPC message (prefix and all).
fn whole_message(pending: &[u8]) -> bool {
    pending.len() >= 5
        && pending.len() - 5
            >= u32::from_be_bytes(pending[1..5].try_into().expect("four bytes")) as usize
}

/// The next whole gRPC message in `messages` (taken off it), if any.
///
/// # Errors
/// INTERNAL for a compressed or cut message: the routes behind were not
/// asked to compress, and end every message they start.
fn next_message(messages: &mut Bytes) -> Result<Option<Bytes>, Status> {
    if messages.is_empty() {
        return Ok(None);
    }
    if messages.len() < 5 || messages[0] != 0 {
        return Err(Status::internal(
            "a reply message is cut short or compressed",
        ));
    }
    let len = u32::from_be_bytes(messages[1..5].try_into().expect("four bytes")) as usize;
    if messages.len() < 5 + len {
        return Err(Status::internal("a reply message is cut short"));
    }
    messages.advance(5);
    Ok(Some(messages.split_to(len)))
}

/// `message`, an encoded `descriptor`, as canonical JSON.
fn to_json(descriptor: &MessageDescriptor, message: &[u8]) -> Result<Bytes, Status> {
    let decoded = DynamicMessage::decode(descriptor.clone(), message)
        .map_err(|e| Status::internal(format!("the reply does not decode: {e}")))?;
    serde_json::to_vec(&decoded)
        .map(Bytes::from)
        .map_err(|e| Status::internal(format!("the reply cannot be written as JSON: {e}")))
}

/// The gRPC metadata in `headers` as Connect passes it on: without the
/// protocol's own headers (`grpc-*`, content type and encoding).
fn passed_metadata(headers: &HeaderMap) -> impl Iterator<Item = (&HeaderName, &HeaderValue)> {
    headers.iter().filter(|(name, _)| {
        let name = name.as_str();
        !(name.starts_with("grpc-")
            || name == "content-type"
            || name == "content-length"
            || name == "content-encoding"
            || name == "te")
    })
}

/// A unary call's successful reply: `message`, compressed with `accept`
/// when it is large enough, with the call's metadata as headers.
fn unary_reply(
    metadata: HeaderMap,
    message: Bytes,
    codec: Codec,
    accept: Option<Encoding>,
    settings: ConnectLayer,
) -> Response<Body> {
    let mut builder = Response::builder().status(StatusCode::OK).header(
        header::CONTENT_TYPE,
        match codec {
            Codec::Json => "application/json",
            Codec::Proto => "application/proto",
        },
    );
    for (name, value) in passed_metadata(&metadata) {
        builder = builder.header(name, value);
    }
    let body = match accept.filter(|_| settings.compression.wants(message.len())) {
        Some(encoding) => {
            builder = builder.header(header::CONTENT_ENCODING, encoding.name());
            encoding.compress(&message)
        }
        None => message,
    };
    builder
        .body(Body::new(Full::new(body)))
        .expect("headers from a valid reply")
}

/// A unary call's error reply: Connect's JSON error, with the HTTP status
/// its code maps to.
fn unary_error(failure: Failure) -> Response<Body> {
    let http_status = failure
        .status_code
        .unwrap_or_else(|| http_status(failure.status.code()));
    let mut builder = Response::builder()
        .status(http_status)
        .header(header::CONTENT_TYPE, "application/json");
    for (name, value) in passed_metadata(&failure.metadata) {
        builder = builder.header(name, value);
    }
    let body = serde_json::to_vec(&error_json(&failure.status)).expect("JSON values serialize");
    builder
        .body(Body::new(Full::new(Bytes::from(body))))
        .expect("headers from a valid reply")
}

/// The HTTP status the Connect protocol gives a unary error of `code`.
fn http_status(code: Code) -> StatusCode {
    match code {
        Code::Ok => StatusCode::OK,
        Code::Cancelled => StatusCode::from_u16(499).expect("a valid status"),
        Code::InvalidArgument | Code::FailedPrecondition | Code::OutOfRange => {
            StatusCode::BAD_REQUEST
        }
        Code::DeadlineExceeded => StatusCode::GATEWAY_TIMEOUT,
        Code::NotFound => StatusCode::NOT_FOUND,
        Code::AlreadyExists | Code::Aborted => StatusCode::CONFLICT,
        Code::PermissionDenied => StatusCode::FORBIDDEN,
        Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
        Code::Unimplemented => StatusCode::NOT_IMPLEMENTED,
        Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        Code::Unauthenticated => StatusCode::UNAUTHORIZED,
        Code::Unknown | Code::Internal | Code::DataLoss => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// The Connect protocol's name of `code`.
fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "ok",
        Code::Cancelled => "canceled",
        Code::Unknown => "unknown",
        Code::InvalidArgument => "invalid_argument",
        Code::DeadlineExceeded => "deadline_exceeded",
        Code::NotFound => "not_found",
        Code::AlreadyExists => "already_exists",
        Code::PermissionDenied => "permission_denied",
        Code::ResourceExhausted => "resource_exhausted",
        Code::FailedPrecondition => "failed_precondition",
        Code::Aborted => "aborted",
        Code::OutOfRange => "out_of_range",
        Code::Unimplemented => "unimplemented",
        Code::Internal => "internal",
        Code::Unavailable => "unavailable",
        Code::DataLoss => "data_loss",
        Code::Unauthenticated => "unauthenticated",
    }
}

/// Connect's JSON error.
#[derive(Serialize)]
struct ErrorJson<'a> {
    /// The code's name ([`code_name`]).
    code: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    message: &'a str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    details: Vec<DetailJson>,
}

/// One detail of a Connect error.
#[derive(Serialize)]
struct DetailJson {
    /// The message's full name, e.g. `google.rpc.ErrorInfo`.
    #[serde(rename = "type")]
    type_name: String,
    /// The encoded message, in base64 without padding.
    value: String,
    /// The message as JSON, when the server knows its type.
    #[serde(skip_serializing_if = "Option::is_none")]
    debug: Option<serde_json::Value>,
}

/// `status` as Connect's JSON error: `code`, `message` and `details`, each
/// detail with its `type`, its encoded `value` in unpadded base64 and,
/// where the server knows the type, its `debug` JSON.
fn error_json(status: &Status) -> ErrorJson<'_> {
    let details = tonic_types::pb::Status::decode(status.details())
        .map(|decoded| decoded.details)
        .unwrap_or_default()
        .into_iter()
        .map(|any| {
            let name = any.type_url.rsplit('/').next().unwrap_or_default();
            let debug = POOL
                .get_message_by_name(name)
                .and_then(|descriptor| DynamicMessage::decode(descriptor, &*any.value).ok())
                .and_then(|message| serde_json::to_value(&message).ok());
            DetailJson {
                type_name: name.to_owned(),
                value: STANDARD_NO_PAD.encode(&any.value),
                debug,
            }
        })
        .collect();
    ErrorJson {
        code: code_name(status.code()),
        message: status.message(),
        details,
    }
}

/// The envelope flag of a compressed message.
const COMPRESSED: u8 = 0b01;
/// The envelope flag of the end-of-stream message.
const END_STREAM: u8 = 0b10;

/// One envelope: `flags`, the length, `message`.
fn envelope(flags: u8, message: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(5 + message.len());
    out.put_u8(flags);
    out.put_u32(u32::try_from(message.len()).expect("a message under 4 GiB"));
    out.put_slice(message);
    out.freeze()
}

/// What ends a stream: its error, if it failed, and its trailers.
#[derive(Serialize)]
struct EndJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorJson<'a>>,
    /// Each trailer with its values, as text (`-bin` values stay base64,
    /// as gRPC sent them).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    metadata: BTreeMap<&'a str, Vec<&'a str>>,
}

/// How a stream's messages are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// Connect's envelopes, in `application/connect+json` or `+proto`,
    /// ending with the end-of-stream envelope.
    Envelopes(Codec),
    /// One JSON message per line (`application/x-ndjson`), for `curl -N`
    /// and line-reading clients; a failure is a last line
    /// `{"error": {...}}`. plylog's own form, not Connect's: asked for by
    /// calling a stream with `content-type: application/json`.
    Lines,
}

impl Framing {
    fn content_type(self) -> &'static str {
        match self {
            Framing::Envelopes(Codec::Json) => "application/connect+json",
            Framing::Envelopes(Codec::Proto) => "application/connect+proto",
            Framing::Lines => "application/x-ndjson",
        }
    }

    /// The codec of its messages.
    fn codec(self) -> Codec {
        match self {
            Framing::Envelopes(codec) => codec,
            Framing::Lines => Codec::Json,
        }
    }

    /// One message, already in [`Framing::codec`], compressed with
    /// `accept` when it is long enough (envelopes only).
    fn message(
        self,
        message: &[u8],
        accept: Option<Encoding>,
        compression: ReplyCompression,
        out: &mut BytesMut,
    ) {
        match self {
            Framing::Envelopes(_) => match accept.filter(|_| compression.wants(message.len())) {
                Some(encoding) => out.put(envelope(COMPRESSED, &encoding.compress(message))),
                None => out.put(envelope(0, message)),
            },
            Framing::Lines => {
                out.put_slice(message);
                out.put_u8(b'\n');
            }
        }
    }

    /// The stream's end: the end-of-stream envelope with the error (if
    /// the call failed) and the trailers; for lines, a line with the
    /// error, or nothing.
    fn end(self, status: &Status, trailers: &HeaderMap) -> Bytes {
        let error = (status.code() != Code::Ok).then(|| error_json(status));
        match self {
            Framing::Envelopes(_) => {
                let mut metadata = BTreeMap::<&str, Vec<&str>>::new();
                for (name, value) in passed_metadata(trailers) {
                    if let Ok(value) = value.to_str() {
                        metadata.entry(name.as_str()).or_default().push(value);
                    }
                }
                let json = serde_json::to_vec(&EndJson { error, metadata })
                    .expect("JSON values serialize");
                envelope(END_STREAM, &json)
            }
            Framing::Lines => match error {
                Some(error) => {
                    let mut line = serde_json::to_vec(&EndJson {
                        error: Some(error),
                        metadata: BTreeMap::new(),
                    })
                    .expect("JSON values serialize");
                    line.push(b'\n');
                    line.into()
                }
                None => Bytes::new(),
            },
        }
    }
}

/// A server-streaming call: HTTP 200 and the stream's messages as
/// `framing` writes them, ending with its end (which carries any error,
/// even one before the first message). For lines, an error before the
/// first message is a unary error instead, with its HTTP status.
async fn stream<S, B>(
    mut inner: S,
    request: Request<B>,
    procedure: Procedure,
    framing: Framing,
    accept: Option<Encoding>,
    deadline: Option<tokio::time::Instant>,
    settings: ConnectLayer,
) -> Response<Body>
where
    S: Service<Request<Body>, Response = Response<Body>, Error = Infallible>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<tonic::codegen::StdError>,
{
    let builder = Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, framing.content_type());
    let ended = |builder: http::response::Builder, status: Status, metadata: HeaderMap| {
        if framing == Framing::Lines {
            return unary_error(failure(status, metadata));
        }
        builder
            .body(Body::new(Full::new(framing.end(&status, &metadata))))
            .expect("headers from a valid reply")
    };
    let kind = match framing {
        Framing::Envelopes(codec) => Kind::Stream(codec),
        Framing::Lines => Kind::Unary(Codec::Json),
    };
    let (parts, message) = match read_request(request, &procedure, kind, settings).await {
        Ok(read) => read,
        Err(status) => return ended(builder, status, HeaderMap::new()),
    };
    // The next frame of the reply, or DEADLINE_EXCEEDED once `deadline`
    // has passed (dropping the reply then ends the call behind).
    let next_frame = async move |body: &mut Body| match deadline {
        Some(deadline) => tokio::time::timeout_at(deadline, body.frame())
            .await
            .unwrap_or_else(|_| Some(Err(deadline_exceeded()))),
        None => body.frame().await,
    };
    let call = inner.call(grpc_request(parts, message));
    let response = match deadline {
        Some(deadline) => match tokio::time::timeout_at(deadline, call).await {
            Ok(Ok(response)) => response,
            Err(_) => return ended(builder, deadline_exceeded(), HeaderMap::new()),
        },
        None => {
            let Ok(response) = call.await;
            response
        }
    };
    let (parts, mut body) = response.into_parts();
    if let Some(status) = Status::from_header_map(&parts.headers) {
        return ended(builder, status, parts.headers);
    }
    // Lines give an error found before the first message its HTTP status:
    // the first frame is awaited before the reply's head is sent.
    let mut first = None;
    if framing == Framing::Lines {
        let frame = next_frame(&mut body).await;
        let early = match &frame {
            Some(Ok(frame)) => frame.trailers_ref().and_then(Status::from_header_map),
            Some(Err(status)) => Some(status.clone()),
            None => None,
        };
        if let Some(status) = early.filter(|s| s.code() != Code::Ok) {
            return ended(builder, status, parts.headers);
        }
        first = Some(frame);
    }
    let mut builder = builder;
    for (name, value) in passed_metadata(&parts.headers) {
        builder = builder.header(name, value);
    }
    let accept = accept.filter(|_| matches!(framing, Framing::Envelopes(_)));
    if let Some(encoding) = accept {
        builder = builder.header("connect-content-encoding", encoding.name());
    }
    let output = procedure.output;
    let compression = settings.compression;
    let codec = framing.codec();
    let messages = async_stream::stream! {
        let mut pending = Bytes::new();
        loop {
            let frame = match first.take() {
                Some(frame) => frame,
                None => next_frame(&mut body).await,
            };
            let trailers = match frame {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => {
                        pending = if pending.is_empty() {
                            data
                        } else {
                            let mut joined = BytesMut::from(&pending[..]);
                            joined.put(data);
                            joined.freeze()
                        };
                        let mut out = BytesMut::new();
                        let mut failed = None;
                        while whole_message(&pending) {
                            let written = next_message(&mut pending).and_then(|message| {
                                let message = message.expect("a whole message is there");
                                match codec {
                                    Codec::Proto => Ok(message),
                                    Codec::Json => to_json(&output, &message),
                                }
                            });
                            match written {
                                Ok(message) => framing.message(&message, accept, compression, &mut out),
                                Err(status) => {
                                    failed = Some(status);
                                    break;
                                }
                            }
                        }
                        if let Some(status) = failed {
                            out.put(framing.end(&status, &HeaderMap::new()));
                            yield Ok::<_, Status>(Frame::data(out.freeze()));
                            return;
                        }
                        if !out.is_empty() {
                            yield Ok(Frame::data(out.freeze()));
                        }
                        continue;
                    }
                    Err(frame) => Ok(frame.into_trailers().unwrap_or_default()),
                },
                Some(Err(status)) if status.code() == Code::DeadlineExceeded => Err(status),
                Some(Err(error)) => Err(Status::internal(format!("the stream failed: {error}"))),
                None => Err(Status::internal("the stream ended without a status")),
            };
            let (status, trailers) = match trailers {
                Ok(trailers) => (
                    Status::from_header_map(&trailers)
                        .unwrap_or_else(|| Status::internal("the stream ended without a status")),
                    trailers,
                ),
                Err(status) => (status, HeaderMap::new()),
            };
            let end = framing.end(&status, &trailers);
            if !end.is_empty() {
                yield Ok(Frame::data(end));
            }
            return;
        }
    };
    builder
        .body(Body::new(StreamBody::new(messages)))
        .expect("headers from a valid reply")
}

/// The status of a call past its `Connect-Timeout-Ms`.
fn deadline_exceeded() -> Status {
    Status::deadline_exceeded("the call's connect-timeout-ms passed")
}

/// A plain-text reply with `status`.
fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .body(Body::new(text.to_owned()))
        .expect("static response parts are valid")
}
