//! grpc.health.v1: the reporter, SERVING once the server starts,
//! NOT_SERVING from the start of a shutdown, and in between in step with
//! the store ([`watch_store`]: NOT_SERVING while the database cannot be
//! reached).

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::server::HealthReporter;

use crate::api::GameApi;
use crate::proto::game_service_server::GameServiceServer;
use crate::store::EventStore;

/// The health reporter and its service, with "" and plylog.v1.GameService
/// SERVING.
pub(super) async fn serving() -> (HealthReporter, HealthServer<impl Health>) {
    let (health, health_service) = tonic_health::server::health_reporter();
    health.set_serving::<GameServiceServer<GameApi>>().await;
    health
        .set_service_status("", tonic_health::ServingStatus::Serving)
        .await;
    (health, health_service)
}

/// Marks "" and plylog.v1.GameService NOT_SERVING (the server is
/// draining).
pub(super) async fn not_serving(health: &HealthReporter) {
    health.set_not_serving::<GameServiceServer<GameApi>>().await;
    health
        .set_service_status("", tonic_health::ServingStatus::NotServing)
        .await;
}

/// Checks the store every `interval` until `stop`, and keeps the health
/// service in step: NOT_SERVING (for "" and plylog.v1.GameService) while the
/// store cannot be reached, SERVING again once it can.
pub(super) async fn watch_store(
    store: Arc<dyn EventStore>,
    health: HealthReporter,
    interval: Duration,
    stop: CancellationToken,
) {
    let mut serving = true;
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = ticker.tick() => {}
        }
        let reachable = match tokio::time::timeout(
            interval.max(Duration::from_secs(1)),
            store.ping(),
        )
        .await
        {
            Ok(Ok(())) => true,
            Ok(Err(error)) => {
                if serving {
                    tracing::warn!(error = %crate::api::cause_chain(&error), "the store cannot be reached; health is NOT_SERVING");
                }
                false
            }
            Err(_) => {
                if serving {
                    tracing::warn!("the store did not answer in time; health is NOT_SERVING");
                }
                false
            }
        };
        if reachable == serving || stop.is_cancelled() {
            continue;
        }
        serving = reachable;
        let status = if serving {
            tracing::info!("the store can be reached again; health is SERVING");
            tonic_health::ServingStatus::Serving
        } else {
            tonic_health::ServingStatus::NotServing
        };
        health.set_service_status("", status).await;
        health
            .set_service_status("plylog.v1.GameService", status)
            .await;
    }
}
