//! Logs, traces and per-call metrics.
//!
//! [`init`] installs the process's `tracing` subscriber: text or JSON logs
//! on stdout filtered by `RUST_LOG` (default `info`), and, with the `otlp`
//! feature and an endpoint, an OpenTelemetry OTLP/gRPC span exporter.
//! [`CallLayer`] wraps the gRPC routes: one span per call (DEBUG: the logs
//! show it only with `RUST_LOG=plylog=debug`, the OTLP export always), named
//! after its method, which the handlers' shared helpers fill with
//! `game_id`, `seat` and `request_id`, and which ends with the call's
//! status code (a stream's when it ends); with OTLP, a caller's W3C
//! `traceparent` metadata makes the span a child of the caller's. The game
//! actor's work and the store's appends are child spans of the call that
//! asked for them. The same layer counts calls by method and code and times
//! them ([`crate::metrics::Metrics`]).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};
use std::time::Instant;

use http_body::{Body, Frame};
use prost::Message;
use tonic::Code;
use tracing::Span;
use tracing::field::Empty;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::metrics::Metrics;

/// How logs are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// One human-readable line per event (ANSI colours on a terminal).
    #[default]
    Text,
    /// One JSON object per event, with the current span's fields and the
    /// list of spans it is in (for log shippers).
    Json,
}

/// Why telemetry could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// The OTLP exporter could not be built (a malformed endpoint).
    #[error("OTLP exporter for {endpoint}: {why}")]
    Otlp {
        /// The endpoint asked for.
        endpoint: String,
        /// What the exporter said.
        why: String,
    },
    /// An OTLP endpoint was given to a build without the `otlp` feature.
    #[error("--otlp-endpoint needs plylog built with the `otlp` cargo feature")]
    OtlpNotBuilt,
    /// A subscriber was installed already.
    #[error("a tracing subscriber is installed already: {0}")]
    Installed(String),
}

/// The installed telemetry; [`Telemetry::shutdown`] flushes spans not yet
/// exported.
#[derive(Debug, Default)]
pub struct Telemetry {
    #[cfg(feature = "otlp")]
    provider: Option<opentelemetry_sdk::trace::SdkTracerProvider>,
}

impl Telemetry {
    /// Exports the spans still buffered (with OTLP) and stops the exporter.
    pub fn shutdown(self) {
        #[cfg(feature = "otlp")]
        if let Some(provider) = self.provider
            && let Err(error) = provider.shutdown()
        {
            eprintln!("OTLP exporter shutdown: {error}");
        }
    }
}

/// Installs the global subscriber: logs in `format` filtered by `RUST_LOG`
/// (default `info`), and spans exported over OTLP/gRPC to `otlp_endpoint`
/// (e.g. `http://127.0.0.1:4317`) when given, with service name `plylog`,
/// filtered on their own (plylog's spans down to DEBUG, the rest at INFO
/// and above), so `RUST_LOG` does not decide what is exported.
/// Call inside the tokio runtime.
///
/// # Errors
/// [`TelemetryError`]: an endpoint the exporter refuses, an endpoint without
/// the `otlp` feature, or a subscriber already installed.
pub fn init(format: LogFormat, otlp_endpoint: Option<&str>) -> Result<Telemetry, TelemetryError> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    // Each output has its own filter: the logs RUST_LOG's, the export
    // `otlp::exported`, so a call's span (DEBUG) is made only when one of
    // them takes it.
    let registry =
        tracing_subscriber::registry().with(log_layer(format, Output::Stdout).with_filter(filter));
    #[cfg(feature = "otlp")]
    {
        let (layer, provider) = match otlp_endpoint {
            Some(endpoint) => {
                let (layer, provider) = otlp::layer(endpoint)?;
                let layer =
                    layer.with_filter(tracing_subscriber::filter::filter_fn(otlp::exported));
                (Some(layer), Some(provider))
            }
            None => (None, None),
        };
        registry
            .with(layer)
            .try_init()
            .map_err(|e| TelemetryError::Installed(e.to_string()))?;
        Ok(Telemetry { provider })
    }
    #[cfg(not(feature = "otlp"))]
    {
        if otlp_endpoint.is_some() {
            return Err(TelemetryError::OtlpNotBuilt);
        }
        registry
            .try_init()
            .map_err(|e| TelemetryError::Installed(e.to_string()))?;
        Ok(Telemetry {})
    }
}

/// Installs the subscriber of an operator command (`plylog games`, ...):
/// logs in `format` on standard error, so that standard output carries the
/// command's report alone, filtered by `RUST_LOG` (default `warn`); no
/// spans are exported.
///
/// # Errors
/// [`TelemetryError::Installed`] when a subscriber is installed already.
pub fn init_for_command(format: LogFormat) -> Result<(), TelemetryError> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    tracing_subscriber::registry()
        .with(filter)
        .with(log_layer(format, Output::Stderr))
        .try_init()
        .map_err(|e| TelemetryError::Installed(e.to_string()))
}

/// Where logs are written.
#[derive(Debug, Clone, Copy)]
enum Output {
    Stdout,
    Stderr,
}

/// Logs in `format` on `output` (text in colour when it is a terminal).
fn log_layer<S>(format: LogFormat, output: Output) -> Box<dyn Layer<S> + Send + Sync>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    let writer = move || -> Box<dyn std::io::Write> {
        match output {
            Output::Stdout => Box::new(std::io::stdout()),
            Output::Stderr => Box::new(std::io::stderr()),
        }
    };
    let terminal = match output {
        Output::Stdout => std::io::IsTerminal::is_terminal(&std::io::stdout()),
        Output::Stderr => std::io::IsTerminal::is_terminal(&std::io::stderr()),
    };
    match format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_writer(writer)
            .with_ansi(terminal)
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .with_writer(writer)
            .json()
            .with_current_span(true)
            .with_span_list(true)
            .boxed(),
    }
}

#[cfg(feature = "otlp")]
mod otlp {
    //! The OTLP exporter and W3C trace context.

    use opentelemetry::propagation::Extractor;
    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_otlp::WithExportConfig;
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    use super::TelemetryError;

    /// A layer exporting spans to `endpoint` in batches, and its provider.
    pub(super) fn layer<S>(
        endpoint: &str,
    ) -> Result<
        (
            tracing_opentelemetry::OpenTelemetryLayer<S, opentelemetry_sdk::trace::SdkTracer>,
            SdkTracerProvider,
        ),
        TelemetryError,
    >
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(endpoint)
            .build()
            .map_err(|e| TelemetryError::Otlp {
                endpoint: endpoint.to_owned(),
                why: e.to_string(),
            })?;
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name("plylog")
            .build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        opentelemetry::global::set_text_map_propagator(
            opentelemetry_sdk::propagation::TraceContextPropagator::new(),
        );
        let tracer = provider.tracer("plylog");
        Ok((tracing_opentelemetry::layer().with_tracer(tracer), provider))
    }

    /// What the exporter takes, whatever `RUST_LOG` says: plylog's own
    /// spans down to DEBUG (a call's span and the store's append are DEBUG,
    /// so that the logs leave them out at the default `info`: making them
    /// cost about 15% of a move's CPU), and other spans and every event at
    /// INFO and above (more verbose levels are greater in `tracing`).
    pub(super) fn exported(meta: &tracing::Metadata<'_>) -> bool {
        *meta.level() <= tracing::Level::INFO
            || (meta.is_span() && meta.target().starts_with("plylog"))
    }

    /// Reads trace context from HTTP/2 headers (gRPC metadata).
    struct Headers<'a>(&'a http::HeaderMap);

    impl Extractor for Headers<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            self.0.get(key).and_then(|v| v.to_str().ok())
        }

        fn keys(&self) -> Vec<&str> {
            self.0.keys().map(http::HeaderName::as_str).collect()
        }
    }

    /// Makes `span` a child of the caller's span named by the W3C
    /// `traceparent` (and `tracestate`) in `headers`, when there is one.
    pub(super) fn continue_trace(span: &tracing::Span, headers: &http::HeaderMap) {
        if !headers.contains_key("traceparent") {
            return;
        }
        let parent = opentelemetry::global::get_text_map_propagator(|propagator| {
            propagator.extract(&Headers(headers))
        });
        let _ = span.set_parent(parent);
    }
}

/// The label of a gRPC path: the method name for `plylog.v1.GameService`
/// (`SubmitMove`), `Service/Method` for the health and reflection services,
/// `unknown` for any other path (so a caller cannot mint label values).
pub fn method_label(path: &str) -> &'static str {
    static METHODS: OnceLock<HashMap<String, &'static str>> = OnceLock::new();
    let methods = METHODS.get_or_init(|| {
        let mut methods = HashMap::new();
        let descriptors = prost_types::FileDescriptorSet::decode(crate::proto::FILE_DESCRIPTOR_SET)
            .expect("the build's own descriptor set decodes");
        for file in &descriptors.file {
            for service in &file.service {
                for method in &service.method {
                    let name = method.name().to_owned();
                    methods.insert(
                        format!("/{}.{}/{name}", file.package(), service.name()),
                        &*Box::leak(name.into_boxed_str()),
                    );
                }
            }
        }
        for (path, label) in [
            ("/grpc.health.v1.Health/Check", "Health/Check"),
            ("/grpc.health.v1.Health/Watch", "Health/Watch"),
            (
                "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
                "ServerReflection/ServerReflectionInfo",
            ),
            (
                "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                "ServerReflection/ServerReflectionInfo",
            ),
        ] {
            methods.insert(path.to_owned(), label);
        }
        methods
    });
    methods.get(path).copied().unwrap_or("unknown")
}

/// A tower layer giving each gRPC call a span and counting it in
/// [`Metrics`] (see the module docs).
#[derive(Clone)]
pub struct CallLayer {
    metrics: Metrics,
}

impl CallLayer {
    /// Calls traced, and counted in `metrics`.
    pub fn new(metrics: Metrics) -> Self {
        CallLayer { metrics }
    }
}

impl<S> tower::Layer<S> for CallLayer {
    type Service = CallService<S>;

    fn layer(&self, inner: S) -> CallService<S> {
        CallService {
            inner,
            metrics: self.metrics.clone(),
        }
    }
}

/// The service [`CallLayer`] makes.
#[derive(Clone)]
pub struct CallService<S> {
    inner: S,
    metrics: Metrics,
}

impl<S, B> tower::Service<http::Request<B>> for CallService<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<tonic::body::Body>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let method = method_label(request.uri().path());
        // OpenTelemetry's conventions for RPC spans; `otel.*` fields name
        // the span and set its kind and status in the export.
        // DEBUG: made only for an OTLP export or `RUST_LOG=plylog=debug`
        // (see `otlp::exported`). Made and formatted for the logs on every
        // call, the per-call spans cost about 15% of a move's CPU (server
        // CPU per move with RUST_LOG=off against info, issue 15).
        let span = tracing::debug_span!(
            "grpc",
            otel.name = method,
            otel.kind = "server",
            otel.status_code = Empty,
            rpc.system = "grpc",
            rpc.method = method,
            rpc.grpc.status_code = Empty,
            game_id = Empty,
            seat = Empty,
            request_id = Empty,
        );
        #[cfg(feature = "otlp")]
        otlp::continue_trace(&span, request.headers());
        let started = Instant::now();
        let call = {
            let _entered = span.enter();
            self.inner.call(request)
        };
        let metrics = self.metrics.clone();
        Box::pin(async move {
            let response = tracing::Instrument::instrument(call, span.clone()).await?;
            metrics.call_latency(method, started.elapsed());
            let mut end = CallEnd {
                metrics,
                method,
                span,
                started,
                code: None,
            };
            // A trailers-only response (an error) has its status in the
            // headers; any other ends with it in the trailers.
            if let Some(code) = grpc_status(response.headers()) {
                end.code = Some(code);
                return Ok(response);
            }
            Ok(response.map(|body| tonic::body::Body::new(Watched { body, end })))
        })
    }
}

/// The `grpc-status` in `headers`, if any.
fn grpc_status(headers: &http::HeaderMap) -> Option<Code> {
    let value = headers.get("grpc-status")?.to_str().ok()?;
    Some(Code::from_i32(value.parse().ok()?))
}

/// Records a call's end when dropped: its code (CANCELLED when the body
/// was dropped before its trailers: the caller went away), on its span and
/// in the metrics, and a debug log line in the span.
struct CallEnd {
    metrics: Metrics,
    method: &'static str,
    span: Span,
    started: Instant,
    code: Option<Code>,
}

impl Drop for CallEnd {
    fn drop(&mut self) {
        let code = self.code.unwrap_or(Code::Cancelled);
        self.metrics.call_answered(self.method, code);
        self.span.record("rpc.grpc.status_code", code as i32);
        if code != Code::Ok {
            self.span.record("otel.status_code", "ERROR");
        }
        let _entered = self.span.enter();
        tracing::debug!(
            code = crate::metrics::code_name(code),
            elapsed_ms = self.started.elapsed().as_secs_f64() * 1000.0,
            "call ended"
        );
    }
}

/// A response body that notes the `grpc-status` of its trailers, polled
/// inside the call's span.
struct Watched {
    body: tonic::body::Body,
    end: CallEnd,
}

impl Body for Watched {
    type Data = bytes::Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<bytes::Bytes>, tonic::Status>>> {
        let this = &mut *self;
        let _entered = this.end.span.enter();
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(trailers) = frame.trailers_ref()
        {
            this.end.code = grpc_status(trailers);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
