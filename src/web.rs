//! What browsers get from the gRPC port: grpc-web (binary and text, unary
//! and server streaming, by [`tonic_web`]), CORS for the origins an operator
//! allows (by [`tower_http::cors`]), and the dashboard, a page whose files
//! are built from `web/` (see its README) and embedded in the binary.
//!
//! - [`WebSettings`]: the dashboard switch and the allowed origins.
//! - [`layers`]: the layers that go around the gRPC routes, outermost
//!   first: the dashboard's files for `GET`/`HEAD`, CORS, grpc-web.

use std::convert::Infallible;
use std::future::Ready;
use std::sync::OnceLock;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{self, HeaderName, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use sha2::{Digest, Sha256};
use tokio_util::either::Either;
use tonic::body::Body;
use tower::{Layer, Service};
use tower_http::cors::{AllowOrigin, CorsLayer};

/// What the gRPC port serves to browsers besides gRPC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSettings {
    /// Serve the dashboard at `/` (default on; `--no-dashboard` turns it
    /// off, and `GET` requests then get gRPC's answer to a non-gRPC call).
    pub dashboard: bool,
    /// Origins whose pages may call the API (grpc-web or Connect) from another
    /// origin, e.g. `https://admin.example.com`; `*` allows any. Empty (the
    /// default): only the dashboard's own origin (same-origin requests need
    /// no CORS).
    pub cors_origins: Vec<HeaderValue>,
}

impl Default for WebSettings {
    fn default() -> Self {
        WebSettings {
            dashboard: true,
            cors_origins: Vec::new(),
        }
    }
}

/// Parses a `--cors-origin` value: `*`, or an origin as browsers send it
/// (`scheme://host[:port]`, no path).
///
/// # Errors
/// A message naming what is wrong with `value`.
pub fn parse_origin(value: &str) -> Result<HeaderValue, String> {
    if value == "*" {
        return Ok(HeaderValue::from_static("*"));
    }
    let uri: http::Uri = value
        .parse()
        .map_err(|e| format!("{value:?} is not an origin: {e}"))?;
    let is_origin = matches!(uri.scheme_str(), Some("http" | "https"))
        && uri.authority().is_some()
        && uri.path_and_query().is_none_or(|p| p.as_str() == "/")
        && !value.ends_with('/');
    if !is_origin {
        return Err(format!(
            "{value:?} is not an origin: expected scheme://host[:port] (http or https, no path), or *"
        ));
    }
    HeaderValue::from_str(value).map_err(|e| format!("{value:?}: {e}"))
}

/// The layers around the gRPC routes that serve browsers, outermost first:
/// the dashboard, CORS (only when origins are allowed), grpc-web.
pub fn layers(
    settings: &WebSettings,
) -> (
    DashboardLayer,
    tower::util::Either<CorsLayer, tower::layer::util::Identity>,
    tonic_web::GrpcWebLayer,
) {
    (
        DashboardLayer {
            enabled: settings.dashboard,
        },
        tower::util::option_layer(cors(&settings.cors_origins)),
        tonic_web::GrpcWebLayer::new(),
    )
}

/// CORS for grpc-web calls from `origins`; `None` when there are none.
fn cors(origins: &[HeaderValue]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let allow_origin = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(origins.iter().cloned())
    };
    let name = HeaderName::from_static;
    Some(
        CorsLayer::new()
            .allow_origin(allow_origin)
            .allow_methods([Method::POST, Method::OPTIONS])
            .allow_headers([
                header::CONTENT_TYPE,
                header::AUTHORIZATION,
                name("x-grpc-web"),
                name("x-user-agent"),
                name("grpc-timeout"),
                name("grpc-accept-encoding"),
                name("traceparent"),
                name("connect-protocol-version"),
                name("connect-timeout-ms"),
                name("connect-content-encoding"),
                name("connect-accept-encoding"),
                header::CONTENT_ENCODING,
                header::ACCEPT_ENCODING,
            ])
            .expose_headers([
                name("grpc-status"),
                name("grpc-message"),
                name("grpc-status-details-bin"),
                name("grpc-encoding"),
                name("connect-content-encoding"),
                header::CONTENT_ENCODING,
            ])
            .max_age(Duration::from_secs(24 * 60 * 60)),
    )
}

/// One embedded file of the dashboard.
struct Asset {
    /// The request path that gets it.
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

/// The dashboard's files, as `web/`'s build left them in `web/dist/`.
const ASSETS: [Asset; 3] = [
    Asset {
        path: "/",
        content_type: "text/html; charset=utf-8",
        body: include_bytes!("../web/dist/index.html"),
    },
    Asset {
        path: "/app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../web/dist/app.js"),
    },
    Asset {
        path: "/app.css",
        content_type: "text/css; charset=utf-8",
        body: include_bytes!("../web/dist/app.css"),
    },
];

/// The page may only run its own script and style, and talk to any origin
/// (the API may be elsewhere during development: `?api=`).
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src *; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The ETags of [`ASSETS`], in the same order: a SHA-256 of each body.
fn etags() -> &'static [HeaderValue; 3] {
    static ETAGS: OnceLock<[HeaderValue; 3]> = OnceLock::new();
    ETAGS.get_or_init(|| {
        ASSETS.each_ref().map(|asset| {
            let digest = Sha256::digest(asset.body);
            let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
            HeaderValue::from_str(&format!("\"{hex}\"")).expect("hex is a valid header value")
        })
    })
}

/// The answer to a `GET` or `HEAD` of `path`: the file, 304 when the
/// caller's `If-None-Match` has it already, 404 for any other path.
fn asset_response(
    method: &Method,
    path: &str,
    if_none_match: Option<&HeaderValue>,
) -> Response<Body> {
    let path = if path == "/index.html" { "/" } else { path };
    let Some(index) = ASSETS.iter().position(|a| a.path == path) else {
        return Response::builder()
            .status(StatusCode::NOT_FOUND)
            .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
            .body(Body::new("not found: the dashboard is at /\n".to_string()))
            .expect("static response parts are valid");
    };
    let asset = &ASSETS[index];
    let etag = &etags()[index];
    let builder = Response::builder()
        .header(header::ETAG, etag)
        // Revalidated on every load, so a new binary's page is seen at once.
        .header(header::CACHE_CONTROL, "no-cache")
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY)
        .header(header::REFERRER_POLICY, "no-referrer");
    let response = if if_none_match == Some(etag) {
        builder.status(StatusCode::NOT_MODIFIED).body(Body::empty())
    } else {
        let builder = builder
            .header(header::CONTENT_TYPE, asset.content_type)
            .header(header::CONTENT_LENGTH, asset.body.len());
        if method == Method::HEAD {
            builder.body(Body::empty())
        } else {
            builder.body(Body::new(Full::new(Bytes::from_static(asset.body))))
        }
    };
    response.expect("static response parts are valid")
}

/// Serves the dashboard's files to `GET` and `HEAD` requests, and passes
/// every other request (gRPC and grpc-web are `POST`, CORS preflights
/// `OPTIONS`) to the inner service.
#[derive(Debug, Clone, Copy)]
pub struct DashboardLayer {
    enabled: bool,
}

impl<S> Layer<S> for DashboardLayer {
    type Service = Dashboard<S>;

    fn layer(&self, inner: S) -> Dashboard<S> {
        Dashboard {
            inner,
            enabled: self.enabled,
        }
    }
}

/// See [`DashboardLayer`].
#[derive(Debug, Clone)]
pub struct Dashboard<S> {
    inner: S,
    enabled: bool,
}

impl<S, B> Service<Request<B>> for Dashboard<S>
where
    S: Service<Request<B>, Response = Response<Body>, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response<Body>;
    type Error = Infallible;
    // No box: gRPC calls pass through this on every request.
    type Future = Either<Ready<Result<Response<Body>, Infallible>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let method = request.method();
        if self.enabled && (method == Method::GET || method == Method::HEAD) {
            let response = asset_response(
                method,
                request.uri().path(),
                request.headers().get(header::IF_NONE_MATCH),
            );
            return Either::Left(std::future::ready(Ok(response)));
        }
        Either::Right(self.inner.call(request))
    }
}
