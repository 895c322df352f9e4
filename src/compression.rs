//! Reply compression that pays for itself: a reply message is compressed
//! only when it is at least [`ReplyCompression::min_bytes`] long, at the
//! fastest level, and only with an encoding the caller offered. Requests
//! are accepted compressed whatever their size (tonic decompresses gRPC's;
//! [`crate::connect`] the Connect protocol's).
//!
//! tonic compresses every reply when the caller offers an encoding
//! (grpcurl and grpcio always offer gzip), at gzip's default level 6: a
//! 30-byte SubmitMove reply then costs a compressor's setup, and a 200×200
//! game's GetGame spent 73% of the server's time in gzip (issue 41). So
//! tonic here compresses nothing, and [`GrpcCompressionLayer`] rewrites the
//! reply's messages instead: gRPC marks each message as compressed or not
//! (its Compressed-Flag), so small ones go out as they are, in the same
//! reply as large compressed ones.
//!
//! - [`ReplyCompression`]: the threshold (`--compress-replies-above`).
//! - [`Encoding`]: gzip or zstd, and which one a caller's header prefers.
//! - [`GrpcCompressionLayer`]: the layer for gRPC replies.

use std::future::Future;
use std::io::{Read, Write};
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{BufMut, Bytes, BytesMut};
use http::{HeaderMap, HeaderValue, Request, Response};
use http_body::{Body, Frame};
use tower::{Layer, Service};

/// When reply messages are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplyCompression {
    /// A reply message (one gRPC message, a Connect reply or stream
    /// message) of at least this many bytes, before compression, is
    /// compressed when its caller offers gzip or zstd; a shorter one never
    /// is. `None`: no reply is compressed (`--compress-replies-above off`).
    /// Default [`ReplyCompression::DEFAULT_MIN_BYTES`].
    pub min_bytes: Option<usize>,
}

impl ReplyCompression {
    /// The default threshold, 4 KiB: a game of a few hundred moves, a page
    /// of games or of a replay. Every move's reply and event is smaller,
    /// and is sent as it is. Above it, compressing at gzip's fastest level
    /// costs grpcio about 1.5 µs per 100 bytes on this project's 2-core
    /// test machine, server and client together (1.1 ms for a 73 KB
    /// GetGame, against 3.7 ms at tonic's level 6; the figures are in
    /// docs/guide/http.md, "Compression", and scripts/compression_figures.py
    /// measures them).
    pub const DEFAULT_MIN_BYTES: usize = 4096;

    /// Parses `--compress-replies-above`: a byte count, or `off`.
    ///
    /// # Errors
    /// A message naming the value when it is neither.
    pub fn parse(value: &str) -> Result<Self, String> {
        if value.eq_ignore_ascii_case("off") {
            return Ok(ReplyCompression { min_bytes: None });
        }
        value
            .parse()
            .map(|min| ReplyCompression {
                min_bytes: Some(min),
            })
            .map_err(|_| format!("{value:?} is neither a byte count nor \"off\""))
    }

    /// Whether a message of `len` bytes is to be compressed, as far as its
    /// size goes.
    pub fn wants(&self, len: usize) -> bool {
        self.min_bytes.is_some_and(|min| len >= min)
    }
}

impl Default for ReplyCompression {
    fn default() -> Self {
        ReplyCompression {
            min_bytes: Some(Self::DEFAULT_MIN_BYTES),
        }
    }
}

/// A compression the server speaks, in both directions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// gzip (RFC 1952); replies at level 1, the fastest.
    Gzip,
    /// Zstandard (RFC 8878); replies at level 1, the fastest of its
    /// default range.
    Zstd,
}

impl Encoding {
    /// Its name in `grpc-encoding`, `content-encoding` and their accept
    /// headers.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Gzip => "gzip",
            Encoding::Zstd => "zstd",
        }
    }

    /// The encoding called `name` (case-insensitive), if the server speaks
    /// it.
    pub fn from_name(name: &str) -> Option<Self> {
        let name = name.trim();
        if name.eq_ignore_ascii_case("gzip") {
            Some(Encoding::Gzip)
        } else if name.eq_ignore_ascii_case("zstd") {
            Some(Encoding::Zstd)
        } else {
            None
        }
    }

    /// The encoding to reply with: the first of those `header` offers (a
    /// comma-separated accept list, e.g. `identity, deflate, gzip`, read in
    /// order, as Connect asks) that the server speaks, leaving out any
    /// whose quality is zero (`gzip;q=0`, RFC 9110 12.5.3).
    pub fn preferred(headers: &HeaderMap, header: &str) -> Option<Self> {
        headers
            .get_all(header)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .find_map(|offer| {
                let mut parts = offer.split(';');
                let encoding = Self::from_name(parts.next().unwrap_or_default())?;
                let refused = parts.any(|param| {
                    let param = param.trim();
                    param
                        .strip_prefix("q=")
                        .is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0))
                });
                (!refused).then_some(encoding)
            })
    }

    /// `message` compressed at the fastest level.
    pub fn compress(self, message: &[u8]) -> Bytes {
        match self {
            Encoding::Gzip => {
                let mut encoder = flate2::write::GzEncoder::new(
                    Vec::with_capacity(message.len() / 4 + 64),
                    flate2::Compression::fast(),
                );
                encoder
                    .write_all(message)
                    .expect("writing to a Vec does not fail");
                encoder.finish().expect("writing to a Vec does not fail")
            }
            Encoding::Zstd => {
                zstd::bulk::compress(message, 1).expect("compressing to memory does not fail")
            }
        }
        .into()
    }

    /// `compressed` decompressed, refused once it would pass `limit` bytes.
    ///
    /// # Errors
    /// A message saying why: not valid in this encoding, or over `limit`
    /// (the text then starts with "over the limit").
    pub fn decompress(self, compressed: &[u8], limit: usize) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        // One byte more than allowed tells a message at the limit from one
        // over it.
        let cap = limit as u64 + 1;
        let read = match self {
            Encoding::Gzip => flate2::read::GzDecoder::new(compressed)
                .take(cap)
                .read_to_end(&mut out),
            Encoding::Zstd => zstd::stream::read::Decoder::new(compressed)
                .and_then(|decoder| decoder.take(cap).read_to_end(&mut out)),
        };
        read.map_err(|e| format!("not valid {}: {e}", self.name()))?;
        if out.len() > limit {
            return Err(format!("over the limit of {limit} bytes once decompressed"));
        }
        Ok(out)
    }
}

/// Compresses the messages of gRPC replies (see the module docs): a
/// message of at least [`ReplyCompression::min_bytes`] goes out with the
/// encoding its caller's `grpc-accept-encoding` prefers, any other as it
/// is.
#[derive(Debug, Clone, Copy)]
pub struct GrpcCompressionLayer {
    settings: ReplyCompression,
}

impl GrpcCompressionLayer {
    /// The layer for `settings`.
    pub fn new(settings: ReplyCompression) -> Self {
        GrpcCompressionLayer { settings }
    }
}

impl<S> Layer<S> for GrpcCompressionLayer {
    type Service = GrpcCompression<S>;

    fn layer(&self, inner: S) -> GrpcCompression<S> {
        GrpcCompression {
            inner,
            settings: self.settings,
        }
    }
}

/// See [`GrpcCompressionLayer`].
#[derive(Debug, Clone)]
pub struct GrpcCompression<S> {
    inner: S,
    settings: ReplyCompression,
}

impl<S, B> Service<Request<B>> for GrpcCompression<S>
where
    S: Service<Request<B>, Response = Response<tonic::body::Body>>,
    S::Future: Send + 'static,
{
    type Response = Response<tonic::body::Body>;
    type Error = S::Error;
    // Boxed only for callers that offer compression (grpcurl, grpcio, and
    // the other nodes' forwarding client do; the bench's does not).
    type Future = futures_util::future::Either<
        S::Future,
        Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>,
    >;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let encoding = self
            .settings
            .min_bytes
            .and_then(|_| Encoding::preferred(request.headers(), "grpc-accept-encoding"));
        let call = self.inner.call(request);
        let Some(encoding) = encoding else {
            return futures_util::future::Either::Left(call);
        };
        let settings = self.settings;
        futures_util::future::Either::Right(Box::pin(async move {
            let response = call.await?;
            Ok(compress_grpc_reply(response, encoding, settings))
        }))
    }
}

/// `response` with each message of at least `settings.min_bytes`
/// compressed with `encoding`, and `grpc-encoding` saying so. A reply
/// that is not gRPC, or an error without a body (trailers only), is
/// left as it is.
fn compress_grpc_reply(
    mut response: Response<tonic::body::Body>,
    encoding: Encoding,
    settings: ReplyCompression,
) -> Response<tonic::body::Body> {
    let headers = response.headers();
    if !crate::connect::is_grpc(headers)
        || headers.contains_key("grpc-status")
        || headers.contains_key("grpc-encoding")
    {
        return response;
    }
    response
        .headers_mut()
        .insert("grpc-encoding", HeaderValue::from_static(encoding.name()));
    response.map(|body| {
        tonic::body::Body::new(Reframed {
            body,
            pending: BytesMut::new(),
            held: None,
            encoding,
            settings,
        })
    })
}

/// A gRPC reply body whose messages are rewritten as they pass: each is a
/// 5-byte prefix (Compressed-Flag, then the length, big-endian) and the
/// message; one of at least the threshold, not compressed yet, is
/// compressed and flagged. Data frames may hold several messages or part
/// of one: `pending` keeps what is not a whole message yet.
struct Reframed {
    body: tonic::body::Body,
    pending: BytesMut,
    /// Trailers that came after an unfinished message, sent next.
    held: Option<Frame<Bytes>>,
    encoding: Encoding,
    settings: ReplyCompression,
}

/// The length of gRPC's message prefix.
const PREFIX: usize = 5;

impl Reframed {
    /// The whole messages in `pending`, rewritten; `None` when there is
    /// none yet.
    fn drain(&mut self) -> Option<Bytes> {
        let mut out = BytesMut::new();
        while self.pending.len() >= PREFIX {
            let flag = self.pending[0];
            let len = u32::from_be_bytes(
                self.pending[1..PREFIX]
                    .try_into()
                    .expect("four bytes after the flag"),
            ) as usize;
            if self.pending.len() < PREFIX + len {
                break;
            }
            let mut message = self.pending.split_to(PREFIX + len);
            if flag == 0 && self.settings.wants(len) {
                let compressed = self.encoding.compress(&message[PREFIX..]);
                out.put_u8(1);
                out.put_u32(u32::try_from(compressed.len()).expect("smaller than its message"));
                out.put(compressed);
            } else if out.is_empty() && self.pending.len() < PREFIX {
                // Passed on as it is, without a second copy (the first
                // was into `pending`).
                return Some(message.freeze());
            } else {
                out.put(&mut message);
            }
        }
        (!out.is_empty()).then(|| out.freeze())
    }
}

impl Body for Reframed {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, tonic::Status>>> {
        let this = &mut *self;
        if let Some(trailers) = this.held.take() {
            return Poll::Ready(Some(Ok(trailers)));
        }
        loop {
            match Pin::new(&mut this.body).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(mut data) => {
                        this.pending.put(&mut data);
                        if let Some(ready) = this.drain() {
                            return Poll::Ready(Some(Ok(Frame::data(ready))));
                        }
                    }
                    Err(trailers) => {
                        // Whatever is left is not a whole message: passed on
                        // as it is, for the caller to refuse, and the
                        // trailers after it.
                        if !this.pending.is_empty() {
                            this.held = Some(trailers);
                            let rest = this.pending.split().freeze();
                            return Poll::Ready(Some(Ok(Frame::data(rest))));
                        }
                        return Poll::Ready(Some(Ok(trailers)));
                    }
                },
                other => return other,
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.pending.is_empty() && self.held.is_none() && self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::default()
    }
}
