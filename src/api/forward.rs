//! A call for a game another node runs: passed on to that node (its slot's
//! lease holder, see [`crate::registry::ownership`]) with its metadata and
//! deadline, at most one hop, and its reply (or error) passed back with the
//! owner's address in the `plylog-owner` metadata, so that a client or a
//! proxy that wants to may call the owner directly next time. With
//! `--cluster-redirect` the call is not passed on: it is refused with
//! UNAVAILABLE / NOT_OWNER naming the owner.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_stream::StreamExt;
use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Request, Response, Status};
use tonic_types::StatusExt;

use super::{EventStream, GameApi, auth, to_status};
use crate::proto::{self as pb, game_service_client::GameServiceClient};
use crate::registry::{RegistryError, Route, StreamRequest};

/// The metadata a passed-on call carries (the passing node's name): a node
/// that gets such a call for a game it does not run refuses it rather than
/// pass it on again.
pub const FORWARDED_BY: &str = "plylog-forwarded-by";

/// The metadata of a passed-on call's reply: the address of the node that
/// runs the game.
pub const OWNER: &str = "plylog-owner";

/// A client to the game's owner.
pub(super) type OwnerClient = GameServiceClient<Channel>;

/// What a node does with calls for games other nodes run.
#[derive(Debug)]
pub(super) struct Forwarding {
    /// This node's name, sent as [`FORWARDED_BY`].
    node: String,
    /// Refuse instead of passing on.
    redirect: bool,
    /// One lazily connected channel per owner address.
    clients: Mutex<HashMap<Arc<str>, OwnerClient>>,
}

/// Where a call went: passed on and answered, or to be served here.
pub(super) enum Routed<Req, Resp> {
    /// The owner's answer.
    Answered(Response<Resp>),
    /// This node serves it.
    Here(Request<Req>),
}

impl Forwarding {
    /// Forwarding as node `node`; with `redirect`, refusing instead.
    pub(super) fn new(node: String, redirect: bool) -> Self {
        Forwarding {
            node,
            redirect,
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// The client to `owner` (connected on first use, and again after a
    /// failure, by tonic's channel).
    fn client(&self, owner: &Arc<str>) -> Result<OwnerClient, Status> {
        let mut clients = self.clients.lock().expect("forwarding lock");
        if let Some(client) = clients.get(owner) {
            return Ok(client.clone());
        }
        let endpoint = Endpoint::from_shared(format!("http://{owner}"))
            .map_err(|_| to_status(not_owner(owner)))?
            .connect_timeout(Duration::from_secs(2))
            .tcp_nodelay(true);
        // The owner is a node of this cluster: its replies are as large as
        // any this node would send itself.
        // A reply the owner compressed (it compresses for a caller that
        // accepts it) is taken as it comes.
        let client = GameServiceClient::new(endpoint.connect_lazy())
            .accept_compressed(tonic::codec::CompressionEncoding::Gzip)
            .accept_compressed(tonic::codec::CompressionEncoding::Zstd)
            .max_decoding_message_size(usize::MAX)
            .max_encoding_message_size(usize::MAX);
        clients.insert(Arc::clone(owner), client.clone());
        Ok(client)
    }

    /// The metadata a call passed on carries: the caller's (its
    /// credentials, request ids, trace context), without what describes the
    /// caller's own HTTP/2 request to this node (the body's compression, the
    /// encodings and content type it accepts, its deadline, which the
    /// outgoing request sets again), and with [`FORWARDED_BY`].
    fn passed_on(&self, incoming: &MetadataMap) -> MetadataMap {
        let mut metadata = without_transport(incoming.clone());
        if let Ok(node) = MetadataValue::try_from(self.node.as_str()) {
            metadata.insert(FORWARDED_BY, node);
        }
        metadata
    }

    /// Serves `request` by `route`: here when this node runs the game;
    /// otherwise passed on to the owner with `call` (counted as `method`),
    /// or refused with NOT_OWNER (a call already passed on once, a slot
    /// between owners, or redirect mode).
    pub(super) async fn route<Req, Resp, F, Fut>(
        &self,
        route: Route,
        method: &'static str,
        metrics: &crate::metrics::Metrics,
        request: Request<Req>,
        call: F,
    ) -> Result<Routed<Req, Resp>, Status>
    where
        F: FnOnce(OwnerClient, Request<Req>) -> Fut,
        Fut: Future<Output = Result<Response<Resp>, Status>>,
    {
        let owner = match route {
            Route::Local(_) => return Ok(Routed::Here(request)),
            Route::Unowned => return Err(not_here(route)),
            Route::Remote(owner) => owner,
        };
        if self.redirect || request.metadata().contains_key(FORWARDED_BY) {
            return Err(to_status(not_owner(&owner)));
        }
        metrics.call_forwarded(method);
        let client = self.client(&owner)?;
        let (metadata, _, message) = request.into_parts();
        let deadline = metadata
            .get("grpc-timeout")
            .and_then(|value| value.to_str().ok())
            .and_then(grpc_timeout);
        let metadata = self.passed_on(&metadata);
        let mut outgoing = Request::from_parts(metadata, Default::default(), message);
        if let Some(deadline) = deadline {
            outgoing.set_timeout(deadline);
        }
        let response = call(client, outgoing)
            .await
            .map_err(|status| unreachable_owner(status, &owner))?;
        let (metadata, message, extensions) = response.into_parts();
        let mut response = Response::from_parts(without_transport(metadata), message, extensions);
        if let Ok(value) = MetadataValue::try_from(&*owner) {
            response.metadata_mut().insert(OWNER, value);
        }
        Ok(Routed::Answered(response))
    }
}

/// How long a stream waits between attempts to reach its game's new owner.
const STREAM_RETRY: Duration = Duration::from_millis(100);

/// How long a stream waits in all for its game to have an owner again
/// before it ends with NOT_OWNER: two leases (a dead owner's slot is taken
/// within one).
const STREAM_OWNERLESS_FOR: Duration = Duration::from_secs(12);

impl GameApi {
    /// StreamEvents for a caller: served here while this node runs the
    /// game, passed on to its owner while another node does, and carried
    /// on from the next sequence through the new owner whenever the owner
    /// changes (each event still exactly once, in order, and one caught-up
    /// marker per stream). `first` is the first part, already opened here
    /// (or `None` to open it by the game's route).
    pub(super) fn follow_owners(
        &self,
        metadata: MetadataMap,
        request: pb::StreamEventsRequest,
        first: Option<EventStream>,
    ) -> EventStream {
        let api = self.clone();
        Box::pin(async_stream::stream! {
            let mut next = request.from_sequence;
            let mut caught_up = false;
            let mut part = first;
            // Since when no part has answered anything (`None`: the last did).
            let mut ownerless: Option<tokio::time::Instant> = None;
            loop {
                let opened = match part.take() {
                    Some(items) => Ok(items),
                    None => api.stream_part(&metadata, &request, next).await,
                };
                let mut answered = false;
                let moved = match opened {
                    Err(status) if owner_moving(&status) => status,
                    Err(status) => {
                        yield Err(status);
                        return;
                    }
                    Ok(mut items) => loop {
                        let item = tokio::select! {
                            item = items.next() => item,
                            () = api.registry.stopping() => {
                                yield Err(to_status(RegistryError::ShuttingDown));
                                return;
                            }
                        };
                        match item {
                            // The part ended (a stream that does not follow).
                            None => return,
                            Some(Ok(response)) => {
                                answered = true;
                                ownerless = None;
                                if let Some(sequence) = response.event_sequence() {
                                    // Sent by an earlier part already.
                                    if sequence < next {
                                        continue;
                                    }
                                    next = sequence + 1;
                                    yield Ok(response);
                                } else if let Some(pb::stream_events_response::Kind::CaughtUp(
                                    marker,
                                )) = &response.kind
                                {
                                    next = next.max(marker.sequence + 1);
                                    if !std::mem::replace(&mut caught_up, true) {
                                        yield Ok(response);
                                    }
                                } else {
                                    yield Ok(response);
                                }
                            }
                            // The owner changed: on from `next` through the
                            // new one.
                            Some(Err(status)) if owner_moving(&status) => break status,
                            Some(Err(status)) => {
                                yield Err(status);
                                return;
                            }
                        }
                    },
                };
                // A part that answered nothing: the slot is between owners,
                // or its owner cannot be reached yet. Wait a little, and at
                // most STREAM_OWNERLESS_FOR in all.
                if !answered {
                    let since = *ownerless.get_or_insert_with(tokio::time::Instant::now);
                    if since.elapsed() >= STREAM_OWNERLESS_FOR {
                        yield Err(moved);
                        return;
                    }
                    tokio::select! {
                        () = tokio::time::sleep(STREAM_RETRY) => {}
                        () = api.registry.stopping() => {
                            yield Err(to_status(RegistryError::ShuttingDown));
                            return;
                        }
                    }
                }
            }
        })
    }

    /// One part of a stream from `from_sequence`: served here when this
    /// node runs the game, else by its owner (refused with NOT_OWNER while
    /// the slot is between owners). A remote owner that stops or cannot be
    /// reached ends the part with NOT_OWNER.
    ///
    /// # Errors
    /// NOT_OWNER; the local stream's refusal (`max_streams`).
    pub(super) async fn stream_part(
        &self,
        metadata: &MetadataMap,
        request: &pb::StreamEventsRequest,
        from_sequence: u64,
    ) -> Result<EventStream, Status> {
        let request = pb::StreamEventsRequest {
            from_sequence,
            ..request.clone()
        };
        match self.registry.settled_route(&request.game_id).await {
            Route::Local(_) => {
                let items = self.registry.stream(StreamRequest {
                    game_id: request.game_id,
                    from_sequence: request.from_sequence,
                    follow: request.follow,
                    round: request.round,
                    credential: auth::seat_credential(metadata),
                })?;
                Ok(Box::pin(items.map(|item| item.map_err(to_status))))
            }
            Route::Unowned => Err(not_here(Route::Unowned)),
            Route::Remote(owner) => {
                if self.forwarding.redirect {
                    return Err(to_status(not_owner(&owner)));
                }
                // Counted in this node's max_streams while it lasts.
                let permit = self.registry.stream_permit()?;
                self.registry.metrics().call_forwarded("StreamEvents");
                let mut client = self.forwarding.client(&owner)?;
                let metadata = self.forwarding.passed_on(metadata);
                let outgoing = Request::from_parts(metadata, Default::default(), request);
                Ok(Box::pin(async_stream::stream! {
                    let _permit = permit;
                    let mut items = match client.stream_events(outgoing).await {
                        Ok(response) => response.into_inner(),
                        Err(status) => {
                            yield Err(moving_owner(status, &owner));
                            return;
                        }
                    };
                    loop {
                        match items.message().await {
                            Ok(Some(item)) => yield Ok(item),
                            Ok(None) => return,
                            Err(status) => {
                                yield Err(moving_owner(status, &owner));
                                return;
                            }
                        }
                    }
                }))
            }
        }
    }
}

/// Whether a stream's part ended because its game's owner changed (or is
/// changing): UNAVAILABLE / NOT_OWNER.
fn owner_moving(status: &Status) -> bool {
    status.code() == Code::Unavailable
        && status
            .get_details_error_info()
            .is_some_and(|info| info.reason == pb::ErrorReason::NotOwner.as_str_name())
}

/// A remote owner's stream error, as the stream following it sees it: the
/// owner stopping (SHUTTING_DOWN) or unreachable is the owner changing
/// (NOT_OWNER); anything else as it was sent.
fn moving_owner(status: Status, owner: &str) -> Status {
    let status = unreachable_owner(status, owner);
    let stopping = status.code() == Code::Unavailable
        && status
            .get_details_error_info()
            .is_some_and(|info| info.reason == pb::ErrorReason::ShuttingDown.as_str_name());
    if stopping {
        return to_status(not_owner(owner));
    }
    status
}

/// `metadata` without what describes one HTTP/2 exchange rather than the
/// call (the body's compression, the encodings and content type accepted,
/// the deadline): what a node passes on to the owner, and passes back of
/// the owner's reply, each exchange setting its own.
fn without_transport(metadata: MetadataMap) -> MetadataMap {
    let mut headers = metadata.into_headers();
    let transport: Vec<_> = headers
        .keys()
        .filter(|name| {
            let name = name.as_str();
            name.starts_with("grpc-")
                || matches!(
                    name,
                    "te" | "content-type" | "content-length" | "user-agent" | "host" | "date"
                )
        })
        .cloned()
        .collect();
    for name in transport {
        headers.remove(name);
    }
    MetadataMap::from_headers(headers)
}

/// NOT_OWNER for a call this node does not serve by `route` (naming the
/// owner when there is one).
pub(super) fn not_here(route: Route) -> Status {
    to_status(RegistryError::NotOwner {
        owner: match route {
            Route::Remote(owner) => Some(owner.to_string()),
            Route::Local(_) | Route::Unowned => None,
        },
    })
}

/// NOT_OWNER naming `owner`.
fn not_owner(owner: &str) -> RegistryError {
    RegistryError::NotOwner {
        owner: Some(owner.to_owned()),
    }
}

/// The owner's error as it sent it (every plylog refusal carries an
/// `ErrorInfo`); a failure to reach it or to hear its answer (a status with
/// no `ErrorInfo` from the transport: UNAVAILABLE when it cannot be
/// reached, UNKNOWN, INTERNAL or CANCELLED when the connection broke or
/// closed mid-call) becomes NOT_OWNER naming it, which a client retries with
/// the same request id. The caller's own deadline passes through as it is
/// (a caller that cancels drops the call here, and sees nothing).
pub(super) fn unreachable_owner(status: Status, owner: &str) -> Status {
    let transport = matches!(
        status.code(),
        Code::Unavailable | Code::Unknown | Code::Internal | Code::Cancelled
    );
    if transport && status.get_details_error_info().is_none() {
        tracing::warn!(owner, error = %status.message(), "the game's owner could not be reached");
        return to_status(not_owner(owner));
    }
    let mut status = status;
    let metadata = std::mem::take(status.metadata_mut());
    *status.metadata_mut() = without_transport(metadata);
    status
}

/// A `grpc-timeout` header's value (gRPC over HTTP/2: 1 to 8 digits and a
/// unit, H M S m u n) as a duration.
fn grpc_timeout(value: &str) -> Option<Duration> {
    let (digits, unit) = value.split_at(value.len().checked_sub(1)?);
    if digits.is_empty() || digits.len() > 8 {
        return None;
    }
    let amount: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(amount * 3600),
        "M" => Duration::from_secs(amount * 60),
        "S" => Duration::from_secs(amount),
        "m" => Duration::from_millis(amount),
        "u" => Duration::from_micros(amount),
        "n" => Duration::from_nanos(amount),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::grpc_timeout;
    use std::time::Duration;

    #[test]
    fn a_grpc_timeout_is_read_in_each_of_its_units() {
        assert_eq!(grpc_timeout("3S"), Some(Duration::from_secs(3)));
        assert_eq!(grpc_timeout("250m"), Some(Duration::from_millis(250)));
        assert_eq!(grpc_timeout("2H"), Some(Duration::from_secs(7200)));
        assert_eq!(grpc_timeout("1M"), Some(Duration::from_secs(60)));
        assert_eq!(grpc_timeout("7u"), Some(Duration::from_micros(7)));
        assert_eq!(grpc_timeout("9n"), Some(Duration::from_nanos(9)));
        for bad in ["", "S", "123456789S", "5x", "-1S"] {
            assert_eq!(grpc_timeout(bad), None, "{bad:?}");
        }
    }
}
