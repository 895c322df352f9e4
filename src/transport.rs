//! The connection layer under the gRPC services (and, HTTP/1.1 only, under
//! the metrics endpoint), with every resource it holds bounded: accepting TCP connections (at most `max_connections`, and
//! backing off when the process runs out of file descriptors), TLS, HTTP/2
//! with keepalive pings and bounded send buffers (and HTTP/1.1 on the same
//! port, told apart by the connection preface, for browsers: grpc-web and
//! the dashboard), closing connections left idle, and draining on shutdown.
//!
//! - [`TransportSettings`]: the limits and timings, each with a flag.
//! - [`serve`]: the accept loop, one task per connection.
//! - `Tracked`: a service wrapper that counts the calls open on each
//!   connection (a stream counts until its body ends), so an idle
//!   connection is told from a quiet one.
//! - `Coalesced`: the socket, whose writes wait one turn of the scheduler
//!   so that the frames many streams queue at once leave in one write.
//!
//! tonic's own `Server` does not expose HTTP/2's send buffer size, the
//! connection count or what to do on accept errors (it retries at once,
//! spinning when descriptors run out), so plylog runs hyper's HTTP/2 server
//! itself on tonic's routes.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;
use tokio_util::either::Either;
use tokio_util::task::TaskTracker;
use tower::Service;

/// Limits and timings of the connection layer.
#[derive(Debug, Clone)]
pub struct TransportSettings {
    /// Connections open at once (default 10,000). One more is accepted and
    /// closed at once, so its client fails fast and retries elsewhere.
    pub max_connections: usize,
    /// A connection with no call open for this long is closed (default 5
    /// minutes): GOAWAY, then the socket.
    pub idle_timeout: Duration,
    /// How often the server pings a connection's peer (default 60 s).
    pub keepalive_interval: Duration,
    /// How long a ping may go unanswered before the connection is closed
    /// (default 20 s): a half-open connection goes within interval +
    /// timeout.
    pub keepalive_timeout: Duration,
    /// Bytes HTTP/2 buffers per stream towards a client that is not
    /// reading, besides the message batch being written (default 1 KiB),
    /// whatever window the client advertises. Each buffered frame also
    /// costs HTTP/2 about 300 bytes of bookkeeping whatever its size: at 64
    /// KiB, a follower of a busy game held about 900 one-event frames,
    /// 470 KiB (issue 35). Kept small, the transport polls a stream again
    /// only once its last batch is written, and the events that came
    /// meanwhile go out as one batch.
    pub stream_send_buffer_bytes: usize,
    /// Streams one connection may have open at once (default 200).
    pub max_streams_per_connection: u32,
    /// How long a TLS handshake may take, and an HTTP/1.1 request's
    /// headers (default 10 s).
    pub tls_handshake_timeout: Duration,
    /// Whether HTTP/2 is served beside HTTP/1.1 (default true: the gRPC
    /// port). Without it (the metrics port) a connection is HTTP/1.1 from
    /// its first byte, so the header-read timeout also closes one that
    /// sends nothing, or stays silent between requests.
    pub http2: bool,
}

impl Default for TransportSettings {
    fn default() -> Self {
        TransportSettings {
            max_connections: 10_000,
            idle_timeout: Duration::from_secs(300),
            keepalive_interval: Duration::from_secs(60),
            keepalive_timeout: Duration::from_secs(20),
            stream_send_buffer_bytes: 1024,
            max_streams_per_connection: 200,
            tls_handshake_timeout: Duration::from_secs(10),
            http2: true,
        }
    }
}

/// What the connection layer holds now, for logs and shutdown.
#[derive(Debug, Default)]
pub struct Activity {
    connections: AtomicUsize,
    calls: AtomicUsize,
}

impl Activity {
    /// Connections open.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::Acquire)
    }

    /// Calls in flight on them (an open stream counts as one).
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::Acquire)
    }
}

/// The longest wait between accept attempts after an error.
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);
/// At most one log line per this interval about refused connections or
/// accept errors.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// Counts occurrences and says when to log them: at most once per
/// [`LOG_EVERY`], with how many happened since the last line.
struct Throttled {
    last: Option<Instant>,
    unlogged: u64,
}

impl Throttled {
    fn new() -> Self {
        Throttled {
            last: None,
            unlogged: 0,
        }
    }

    /// Counts one; `Some(count)` when it is time to log `count` of them.
    fn hit(&mut self) -> Option<u64> {
        self.unlogged += 1;
        let due = self.last.is_none_or(|at| at.elapsed() >= LOG_EVERY);
        due.then(|| {
            self.last = Some(Instant::now());
            std::mem::take(&mut self.unlogged)
        })
    }
}

/// Whether an accept error concerns only the connection being accepted
/// (the next accept may succeed at once), rather than the process (out of
/// descriptors or memory: accepting again at once would spin).
fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
    )
}

/// Serves `service` on `listener` until `shutdown` resolves: accepts
/// connections within [`TransportSettings::max_connections`], does the TLS
/// handshake when `tls` is set, and serves HTTP/2 or HTTP/1.1 on each
/// (whichever the client speaks: its first bytes tell; only HTTP/1.1
/// without [`TransportSettings::http2`]). On shutdown it
/// stops accepting, tells every connection to finish (GOAWAY: calls in
/// flight complete, new ones go elsewhere), and returns once all have
/// closed. `activity` tells what is open.
///
/// An accept error that concerns the process (out of file descriptors) is
/// logged at most every 10 s and retried after a back-off growing to 1 s,
/// so the server answers the connections it can instead of spinning.
pub async fn serve<S>(
    listener: TcpListener,
    service: S,
    tls: Option<TlsAcceptor>,
    settings: TransportSettings,
    activity: Arc<Activity>,
    shutdown: impl Future<Output = ()>,
) where
    S: Service<Request<Incoming>, Response = Response<tonic::body::Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let mut http = auto::Builder::new(TokioExecutor::new());
    if !settings.http2 {
        http = http.http1_only();
    }
    // HTTP/1.1 is for browsers: grpc-web and the dashboard's files.
    http.http1()
        .timer(TokioTimer::new())
        .header_read_timeout(settings.tls_handshake_timeout);
    http.http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(settings.keepalive_interval)
        .keep_alive_timeout(settings.keepalive_timeout)
        .max_send_buf_size(settings.stream_send_buffer_bytes)
        .max_concurrent_streams(settings.max_streams_per_connection);
    let slots = Arc::new(Semaphore::new(settings.max_connections));
    let (stop, stopping) = watch::channel(false);
    let connections = TaskTracker::new();
    let mut refused = Throttled::new();
    let mut failed = Throttled::new();
    let mut backoff = Duration::ZERO;
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let (tcp, peer) = match accepted {
            Ok(accepted) => {
                backoff = Duration::ZERO;
                accepted
            }
            Err(error) if is_connection_error(&error) => continue,
            Err(error) => {
                backoff = (backoff * 2).clamp(Duration::from_millis(10), MAX_ACCEPT_BACKOFF);
                if let Some(count) = failed.hit() {
                    tracing::warn!(error = %error, errors = count, retry_in_ms = backoff.as_millis() as u64,
                        "accepting connections failed (out of file descriptors? see docs/operations/limits.md); backing off");
                }
                tokio::select! {
                    () = &mut shutdown => break,
                    () = tokio::time::sleep(backoff) => continue,
                }
            }
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            if let Some(count) = refused.hit() {
                tracing::warn!(
                    max_connections = settings.max_connections,
                    refused = count,
                    "connection limit reached; closing new connections"
                );
            }
            drop(tcp);
            continue;
        };
        let _ = tcp.set_nodelay(true);
        let connection = Connection {
            http: http.clone(),
            service: service.clone(),
            tls: tls.clone(),
            settings: settings.clone(),
            activity: Arc::clone(&activity),
            stopping: stopping.clone(),
        };
        connections.spawn(async move {
            let _slot = slot;
            connection.run(tcp, peer).await;
        });
    }
    drop(listener);
    let _ = stop.send(true);
    connections.close();
    connections.wait().await;
}

/// One accepted connection and what it is served with.
struct Connection<S> {
    http: auto::Builder<TokioExecutor>,
    service: S,
    tls: Option<TlsAcceptor>,
    settings: TransportSettings,
    activity: Arc<Activity>,
    stopping: watch::Receiver<bool>,
}

impl<S> Connection<S>
where
    S: Service<Request<Incoming>, Response = Response<tonic::body::Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    async fn run(mut self, tcp: TcpStream, peer: SocketAddr) {
        self.activity.connections.fetch_add(1, Ordering::AcqRel);
        let _open = Decrement(&self.activity.connections);
        let tcp = Coalesced::new(tcp);
        let io = match &self.tls {
            None => Either::Left(tcp),
            Some(acceptor) => {
                match tokio::time::timeout(
                    self.settings.tls_handshake_timeout,
                    acceptor.accept(tcp),
                )
                .await
                {
                    Ok(Ok(tls)) => Either::Right(tls),
                    Ok(Err(error)) => {
                        tracing::debug!(%peer, error = %error, "TLS handshake failed");
                        return;
                    }
                    Err(_) => {
                        tracing::debug!(%peer, "TLS handshake timed out");
                        return;
                    }
                }
            }
        };
        let idle = Arc::new(Idle::new());
        let service = TowerToHyperService::new(Tracked {
            inner: self.service.clone(),
            idle: Arc::clone(&idle),
            activity: Arc::clone(&self.activity),
        });
        let connection = self.http.serve_connection(TokioIo::new(io), service);
        tokio::pin!(connection);
        // After an idle GOAWAY, when the connection is dropped if it has not
        // closed (a client that never completed the HTTP/2 preface never
        // does). Shutdown's GOAWAY waits instead: the server's grace period
        // bounds it.
        let mut closing_by: Option<Instant> = None;
        let mut draining = false;
        let check = (self.settings.idle_timeout / 4).clamp(Duration::from_millis(50), LOG_EVERY);
        let mut ticker = tokio::time::interval(check);
        loop {
            tokio::select! {
                served = connection.as_mut() => {
                    if let Err(error) = served {
                        tracing::debug!(%peer, error = %error, "connection ended");
                    }
                    return;
                }
                changed = self.stopping.changed(), if !draining => {
                    if changed.is_err() || *self.stopping.borrow() {
                        connection.as_mut().graceful_shutdown();
                        draining = true;
                        closing_by = None;
                    }
                }
                _ = ticker.tick(), if !draining => match closing_by {
                    Some(deadline) if Instant::now() >= deadline => {
                        tracing::debug!(%peer, "idle connection did not close; dropping it");
                        return;
                    }
                    Some(_) => {}
                    None if idle.for_at_least(self.settings.idle_timeout) => {
                        tracing::debug!(%peer, "closing idle connection");
                        connection.as_mut().graceful_shutdown();
                        closing_by = Some(Instant::now() + self.settings.keepalive_timeout);
                    }
                    None => {}
                },
            }
        }
    }
}

/// Raises the soft limit on open file descriptors to the hard limit, and
/// warns when what the server may need (`needed`: connections, database
/// connections and a reserve for files and the runtime) is more than the
/// limit allows. Beyond the limit, accepting fails and [`serve`] backs off.
pub fn raise_descriptor_limit(needed: u64) {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) if limit < needed => tracing::warn!(
            limit,
            needed,
            "the open-file limit is below what --max-connections and the database pool may need: raise it (ulimit -n, LimitNOFILE=) or lower --max-connections"
        ),
        Ok(limit) => tracing::debug!(limit, "open-file limit"),
        Err(error) => tracing::warn!(error = %error, "could not read the open-file limit"),
    }
}

/// Decrements a counter when dropped.
struct Decrement<'a>(&'a AtomicUsize);

impl Drop for Decrement<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Calls open on one connection, and since when none has been.
struct Idle {
    since: Instant,
    open: AtomicUsize,
    /// Milliseconds after `since` when the last call ended (or the
    /// connection opened).
    last_ms: AtomicU64,
}

impl Idle {
    fn new() -> Self {
        Idle {
            since: Instant::now(),
            open: AtomicUsize::new(0),
            last_ms: AtomicU64::new(0),
        }
    }

    fn touch(&self) {
        let ms = self.since.elapsed().as_millis() as u64;
        self.last_ms.fetch_max(ms, Ordering::AcqRel);
    }

    /// Whether no call has been open for at least `timeout`.
    fn for_at_least(&self, timeout: Duration) -> bool {
        let last = self.since + Duration::from_millis(self.last_ms.load(Ordering::Acquire));
        self.open.load(Ordering::Acquire) == 0 && last.elapsed() >= timeout
    }
}

/// One open call: counted on its connection and the server until dropped
/// (with the response body, for a stream).
struct CallGuard {
    idle: Arc<Idle>,
    activity: Arc<Activity>,
}

impl CallGuard {
    fn new(idle: Arc<Idle>, activity: Arc<Activity>) -> Self {
        idle.open.fetch_add(1, Ordering::AcqRel);
        idle.touch();
        activity.calls.fetch_add(1, Ordering::AcqRel);
        CallGuard { idle, activity }
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.idle.touch();
        self.idle.open.fetch_sub(1, Ordering::AcqRel);
        self.activity.calls.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A service that counts its calls as open until their response bodies end.
#[derive(Clone)]
struct Tracked<S> {
    inner: S,
    idle: Arc<Idle>,
    activity: Arc<Activity>,
}

impl<S> Service<Request<Incoming>> for Tracked<S>
where
    S: Service<Request<Incoming>, Response = Response<tonic::body::Body>, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Incoming>) -> Self::Future {
        let guard = CallGuard::new(Arc::clone(&self.idle), Arc::clone(&self.activity));
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await?;
            Ok(response.map(|body| {
                tonic::body::Body::new(Guarded {
                    body,
                    _guard: guard,
                })
            }))
        })
    }
}

/// A response body that keeps its call counted until it is dropped.
struct Guarded {
    body: tonic::body::Body,
    _guard: CallGuard,
}

impl http_body::Body for Guarded {
    type Data = bytes::Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A connection's socket whose writes wait one turn of the scheduler, so
/// that what several tasks queue for the connection meanwhile leaves in one
/// write.
///
/// HTTP/2 frames of one connection are written by the connection's task,
/// and a stream's task that queues a frame wakes it. tokio runs a task
/// woken by the running one next (its LIFO slot), so when one event woke
/// 10,000 followers' streams, the connection's task ran after each of them
/// and wrote each frame alone: one `writev` per follower per event, 28% of
/// the server's CPU in a big fan-out (issue 15). Here the first write after
/// a flush wakes the task and returns `Pending`: the task goes to the back
/// of the run queue (as `yield_now` does, and a stream's wake finds it
/// already queued), the streams already woken queue their frames, and the
/// next poll writes them together. A connection with nothing else to do is
/// polled again at once.
///
/// It also says it does not write vectored: HTTP/2 then copies a DATA
/// frame under 1 KiB into its 16 KiB write buffer (the threshold is 256
/// bytes for a vectored socket, and each frame above it went out in its
/// own `writev`), so a turn's events leave together.
struct Coalesced<T> {
    io: T,
    /// Set once the writes since the last flush have waited their turn.
    waited: bool,
}

impl<T> Coalesced<T> {
    fn new(io: T) -> Self {
        Coalesced { io, waited: false }
    }

    /// `Pending` (after waking the task) on the first write after a flush.
    fn wait_turn(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.waited {
            return Poll::Ready(());
        }
        self.waited = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Coalesced<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Coalesced<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        std::task::ready!(self.wait_turn(cx));
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn is_write_vectored(&self) -> bool {
        false
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let flushed = std::task::ready!(Pin::new(&mut self.io).poll_flush(cx));
        self.waited = false;
        Poll::Ready(flushed)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Poll, Wake, Waker};

    use tokio::io::{AsyncReadExt, AsyncWrite};

    use super::Coalesced;

    /// Counts its wakes.
    struct Counter(AtomicUsize);

    impl Wake for Counter {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[tokio::test]
    async fn a_write_waits_one_turn_after_each_flush_and_then_goes_out_whole() {
        let (near, mut far) = tokio::io::duplex(1024);
        let mut io = Coalesced::new(near);
        let counter = Arc::new(Counter(AtomicUsize::new(0)));
        let waker = Waker::from(Arc::clone(&counter));
        let mut cx = Context::from_waker(&waker);
        let write = |io: &mut Coalesced<_>, cx: &mut Context<'_>, bytes: &[u8]| {
            std::pin::Pin::new(io).poll_write(cx, bytes)
        };

        // The first write waits, and wakes the task so that it is polled again.
        assert!(write(&mut io, &mut cx, b"one").is_pending());
        assert_eq!(counter.0.load(Ordering::SeqCst), 1);
        // Polled again, it goes out, and so do the writes until the flush.
        assert!(matches!(
            write(&mut io, &mut cx, b"one"),
            Poll::Ready(Ok(3))
        ));
        assert!(matches!(
            write(&mut io, &mut cx, b"two"),
            Poll::Ready(Ok(3))
        ));
        let flushed = std::pin::Pin::new(&mut io).poll_flush(&mut cx);
        assert!(matches!(flushed, Poll::Ready(Ok(()))));
        // After the flush, the next write waits its turn again.
        assert!(write(&mut io, &mut cx, b"three").is_pending());
        assert_eq!(counter.0.load(Ordering::SeqCst), 2);
        assert!(matches!(
            write(&mut io, &mut cx, b"three"),
            Poll::Ready(Ok(5))
        ));

        let mut received = [0; 11];
        far.read_exact(&mut received).await.unwrap();
        assert_eq!(&received, b"onetwothree");
        // HTTP/2 copies small frames into one buffer only for a socket
        // that does not write vectored.
        assert!(!io.is_write_vectored());
    }
}
