//! The no-op baseline: a tonic server in a process of its own whose only handler,
//! grpc.health.v1 Health/Check, answers SERVING at once without looking at
//! the request, and the closed loop that drives it exactly as
//! [`super::play`] drives a plylog server (same slots, same connections,
//! same window). Its calls/s and latency are what one gRPC unary call costs
//! on this machine right now: the ceiling a plylog figure is divided by.

use std::net::SocketAddr;

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse, health_check_response};

use super::{BenchError, Tally, Window, connect, connections_for};

/// A handler that does no work: Check is SERVING, whatever it is asked;
/// Watch is not offered.
struct NoOp;

#[tonic::async_trait]
impl Health for NoOp {
    async fn check(
        &self,
        _request: tonic::Request<HealthCheckRequest>,
    ) -> Result<tonic::Response<HealthCheckResponse>, tonic::Status> {
        Ok(tonic::Response::new(HealthCheckResponse {
            status: health_check_response::ServingStatus::Serving as i32,
        }))
    }

    type WatchStream = tokio_stream::Empty<Result<HealthCheckResponse, tonic::Status>>;

    async fn watch(
        &self,
        _request: tonic::Request<HealthCheckRequest>,
    ) -> Result<tonic::Response<Self::WatchStream>, tonic::Status> {
        Err(tonic::Status::unimplemented(
            "the no-op baseline has no Watch",
        ))
    }
}

/// Serves the no-op handler on a free loopback port (Nagle off, as
/// plylog's listener), writing `listening <address>` to `out` first, until
/// this process's standard input closes: the `noop-serve` command.
///
/// # Errors
/// [`BenchError::NoOp`] when no port can be bound or serving fails.
pub async fn serve(out: &mut impl std::io::Write) -> Result<(), BenchError> {
    let incoming = TcpIncoming::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .map_err(|error| BenchError::NoOp(format!("binding a loopback port: {error}")))?
        .with_nodelay(Some(true));
    let addr = incoming
        .local_addr()
        .map_err(|error| BenchError::NoOp(error.to_string()))?;
    writeln!(out, "listening {addr}")?;
    out.flush()?;
    let stdin_closed = tokio::task::spawn_blocking(|| {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
    });
    Server::builder()
        .add_service(HealthServer::new(NoOp))
        .serve_with_incoming_shutdown(incoming, async {
            let _ = stdin_closed.await;
        })
        .await
        .map_err(|error| BenchError::NoOp(error.to_string()))
}

/// The no-op server, in a process of its own (this binary's `noop-serve`)
/// as plylog is in its own: sharing the client's process and runtime, it
/// answered 16 to 35% more calls than the outside ceiling tool's server
/// (../shared/perf, two processes) in the same minutes, and plylog's
/// ratio read that much lower. It serves until [`NoOpServer::stop`].
pub struct NoOpServer {
    addr: SocketAddr,
    child: Child,
}

impl NoOpServer {
    /// Starts `noop-serve` and waits for the address it listens on.
    ///
    /// # Errors
    /// [`BenchError::NoOp`] when it cannot start or says no address.
    pub async fn start() -> Result<Self, BenchError> {
        let program = std::env::current_exe()
            .map_err(|error| BenchError::NoOp(format!("finding this program: {error}")))?;
        let mut child = Command::new(program)
            .arg("noop-serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| BenchError::NoOp(format!("starting noop-serve: {error}")))?;
        let stdout = child.stdout.take().expect("piped");
        let mut line = String::new();
        let read = tokio::time::timeout(
            Duration::from_secs(10),
            BufReader::new(stdout).read_line(&mut line),
        )
        .await;
        let addr = match read {
            Ok(Ok(_)) => line
                .trim()
                .strip_prefix("listening ")
                .and_then(|addr| addr.parse().ok()),
            _ => None,
        }
        .ok_or_else(|| BenchError::NoOp(format!("noop-serve said {line:?}, not its address")))?;
        Ok(NoOpServer { addr, child })
    }

    /// Its URL, `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Closes its standard input and waits up to 10 s for it to stop.
    ///
    /// # Errors
    /// [`BenchError::NoOp`] when it failed or did not stop (it is killed).
    pub async fn stop(mut self) -> Result<(), BenchError> {
        drop(self.child.stdin.take());
        match tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await {
            Ok(Ok(status)) if status.success() => Ok(()),
            Ok(Ok(status)) => Err(BenchError::NoOp(format!("noop-serve exited {status}"))),
            Ok(Err(error)) => Err(BenchError::NoOp(error.to_string())),
            Err(_) => {
                let _ = self.child.kill().await;
                Err(BenchError::NoOp(
                    "noop-serve did not stop within 10 s".into(),
                ))
            }
        }
    }
}

/// Drives the no-op server at `url` with `slots` closed-loop callers on
/// [`connections_for`]`(slots)` connections, each calling Check again as
/// soon as the last one is answered, until `window` ends; counts the calls
/// sent and answered inside it.
///
/// # Errors
/// [`BenchError::Connect`] when it cannot connect.
pub async fn measure(url: &str, slots: usize, window: Window) -> Result<Tally, BenchError> {
    let channels = connect(url, connections_for(slots)).await?;
    let callers: Vec<_> = (0..slots)
        .map(|slot| {
            let mut client = HealthClient::new(channels[slot % channels.len()].clone());
            tokio::spawn(async move {
                let mut tally = Tally::default();
                while !window.is_over() {
                    let sent = std::time::Instant::now();
                    let result = client.check(HealthCheckRequest::default()).await;
                    tally.add(&window, sent, result.as_ref().err(), "Health/Check");
                }
                tally
            })
        })
        .collect();
    let mut total = Tally::default();
    for caller in callers {
        if let Ok(tally) = caller.await {
            total.merge(tally);
        }
    }
    Ok(total)
}
