//! The no-op baseline: a tonic server in this process whose only handler,
//! grpc.health.v1 Health/Check, answers SERVING at once without looking at
//! the request, and the closed loop that drives it exactly as
//! [`super::play`] drives a plylog server (same slots, same connections,
//! same window). Its calls/s and latency are what one gRPC unary call costs
//! on this machine right now: the ceiling a plylog figure is divided by.

use std::net::SocketAddr;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;
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

/// The no-op server, serving on a loopback port until [`NoOpServer::stop`].
pub struct NoOpServer {
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), tonic::transport::Error>>,
}

impl NoOpServer {
    /// Binds a free loopback port (Nagle off, as plylog's listener) and
    /// serves the no-op handler on it from this runtime.
    ///
    /// # Errors
    /// [`BenchError::NoOp`] when no port can be bound.
    pub fn start() -> Result<Self, BenchError> {
        let incoming = TcpIncoming::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .map_err(|error| BenchError::NoOp(format!("binding a loopback port: {error}")))?
            .with_nodelay(Some(true));
        let addr = incoming
            .local_addr()
            .map_err(|error| BenchError::NoOp(error.to_string()))?;
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(
            Server::builder()
                .add_service(HealthServer::new(NoOp))
                .serve_with_incoming_shutdown(incoming, async {
                    let _ = stopped.await;
                }),
        );
        Ok(NoOpServer { addr, stop, task })
    }

    /// Its URL, `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops serving and waits until it has.
    ///
    /// # Errors
    /// [`BenchError::NoOp`] when serving failed.
    pub async fn stop(self) -> Result<(), BenchError> {
        let _ = self.stop.send(());
        match self.task.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(BenchError::NoOp(error.to_string())),
            Err(error) => Err(BenchError::NoOp(error.to_string())),
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
