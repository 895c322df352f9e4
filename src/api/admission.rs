//! Admission: whether a call is served at all, before its fields are
//! read: the in-flight limit and the API key.

use std::sync::Arc;

use tokio::sync::OwnedSemaphorePermit;
use tonic::Status;

use super::{GameApi, auth, pb, status};

impl GameApi {
    /// Admits a call, or sheds it with UNAVAILABLE / OVERLOADED when
    /// `max_in_flight` calls are already being served: the server never
    /// queues work without bound. The permit is held until the reply.
    pub(super) fn admit(&self) -> Result<OwnedSemaphorePermit, Status> {
        Arc::clone(&self.in_flight).try_acquire_owned().map_err(|_| {
            self.registry.metrics().shed("max_in_flight");
            status::refusal(
                tonic::Code::Unavailable,
                &format!(
                    "the server is serving its limit of {} calls (max_in_flight); retry with backoff",
                    self.max_in_flight
                ),
                pb::ErrorReason::Overloaded,
            )
        })
    }

    /// Refuses `rpc` (CreateGame, CreateGames or ReissueSeatToken) without
    /// the server's API key. Without a key configured, CreateGame and
    /// CreateGames are open to all and ReissueSeatToken to none.
    pub(super) fn check_api_key(
        &self,
        metadata: &tonic::metadata::MetadataMap,
        rpc: &str,
    ) -> Result<(), Status> {
        let Some(key) = &self.access.api_key else {
            return match rpc {
                "CreateGame" | "CreateGames" => Ok(()),
                _ => Err(status::refusal(
                    tonic::Code::FailedPrecondition,
                    &format!(
                        "{rpc} needs the server's API key, and this server has none: start it with --api-key"
                    ),
                    pb::ErrorReason::ApiKeyNotConfigured,
                )),
            };
        };
        match auth::bearer(metadata, "API key") {
            Ok(None) => Err(status::refusal(
                tonic::Code::Unauthenticated,
                &format!(
                    "{rpc} needs the server's API key: send metadata \"authorization: Bearer <api key>\""
                ),
                pb::ErrorReason::ApiKeyRequired,
            )),
            // Compare hashes, so the comparison's time says nothing of the key.
            Ok(Some(sent)) if auth::hash(&sent) == auth::hash(key) => Ok(()),
            Ok(Some(_)) => Err(status::refusal(
                tonic::Code::PermissionDenied,
                "the API key is wrong",
                pb::ErrorReason::ApiKeyInvalid,
            )),
            Err(malformed) => Err(status::refusal(
                tonic::Code::PermissionDenied,
                &malformed.to_string(),
                pb::ErrorReason::ApiKeyInvalid,
            )),
        }
    }
}
