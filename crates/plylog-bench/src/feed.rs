//! A feed reader for `plylog bench play --feed-reader`: one StreamAllEvents
//! follower in this process, from the feed's end when it starts, counting
//! what it receives, so the workload is measured with a consumer of every
//! game's events beside it, and whether that consumer kept up.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use plylog::proto::game_service_client::GameServiceClient;
use plylog::proto::{self as pb, stream_all_events_response::Kind};
use tokio_stream::StreamExt;
use tonic::transport::Channel;

use super::BenchError;

/// How long the reader may take to reach the feed's end once the workload
/// has stopped before the bench says it did not keep up.
pub const CATCH_UP_LIMIT: Duration = Duration::from_secs(30);

/// A feed reader following the feed in a task of its own.
pub struct FeedReader {
    client: GameServiceClient<Channel>,
    /// The last position received (cell 0), and how many events.
    last: Arc<AtomicU64>,
    events: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<Result<(), tonic::Status>>,
}

/// What a reader did: the events it received, how far behind the feed's
/// end it was when the workload stopped, and how long it then took to
/// reach that end (`None`: not within [`CATCH_UP_LIMIT`]; an upper bound,
/// since it includes reading where the end is).
#[derive(Debug, Clone, Copy)]
pub struct FeedRead {
    /// Events received.
    pub events: u64,
    /// Positions behind the feed's end when the workload stopped.
    pub behind: u64,
    /// Time from the workload's stop to the reader's reaching the end.
    pub caught_up_after: Option<Duration>,
}

impl FeedReader {
    /// Starts following the feed at `channel` from its end now.
    ///
    /// # Errors
    /// [`BenchError::Failed`] when the feed cannot be read.
    pub async fn start(channel: Channel) -> Result<Self, BenchError> {
        let mut client = GameServiceClient::new(channel);
        let end = feed_end(&mut client).await?;
        let mut stream = client
            .stream_all_events(pb::StreamAllEventsRequest {
                after: vec![end],
                follow: true,
                ..Default::default()
            })
            .await
            .map_err(|status| BenchError::Failed(format!("the feed reader: {status}")))?
            .into_inner();
        let last = Arc::new(AtomicU64::new(end));
        let events = Arc::new(AtomicU64::new(0));
        let (seen, counted) = (Arc::clone(&last), Arc::clone(&events));
        let task = tokio::spawn(async move {
            while let Some(message) = stream.next().await {
                match message?.kind {
                    Some(Kind::Event(event)) => {
                        seen.store(event.position, Ordering::Release);
                        counted.fetch_add(1, Ordering::Relaxed);
                    }
                    Some(Kind::Checkpoint(checkpoint)) => {
                        if let Some(&position) = checkpoint.positions.first() {
                            seen.fetch_max(position, Ordering::AcqRel);
                        }
                    }
                    None => {}
                }
            }
            Ok(())
        });
        Ok(FeedReader {
            client,
            last,
            events,
            task,
        })
    }

    /// Once the workload has stopped: how far behind the reader was, and
    /// how long it took to reach the feed's end; then stops it.
    ///
    /// # Errors
    /// [`BenchError::Failed`] when the feed's end cannot be read, or the
    /// reader's stream failed.
    pub async fn finish(mut self) -> Result<FeedRead, BenchError> {
        let stopped = Instant::now();
        let at_stop = self.last.load(Ordering::Acquire);
        let end = feed_end(&mut self.client).await?;
        let behind = end.saturating_sub(at_stop);
        let mut caught_up_after = None;
        while stopped.elapsed() < CATCH_UP_LIMIT && !self.task.is_finished() {
            if self.last.load(Ordering::Acquire) >= end {
                caught_up_after = Some(stopped.elapsed());
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        if self.task.is_finished() {
            if let Ok(Err(status)) = self.task.await {
                return Err(BenchError::Failed(format!("the feed reader: {status}")));
            }
        } else {
            self.task.abort();
        }
        Ok(FeedRead {
            events: self.events.load(Ordering::Relaxed),
            behind,
            caught_up_after,
        })
    }
}

/// The feed's last position (cell 0): a read from the feed's end that
/// does not follow, which the server answers with one checkpoint there.
async fn feed_end(client: &mut GameServiceClient<Channel>) -> Result<u64, BenchError> {
    let failed = |status: tonic::Status| BenchError::Failed(format!("the feed's end: {status}"));
    let mut stream = client
        .stream_all_events(pb::StreamAllEventsRequest {
            from_end: true,
            ..Default::default()
        })
        .await
        .map_err(failed)?
        .into_inner();
    let mut end = 0;
    while let Some(message) = stream.next().await {
        if let Some(Kind::Checkpoint(checkpoint)) = message.map_err(failed)?.kind {
            end = checkpoint.positions.first().copied().unwrap_or(0);
        }
    }
    Ok(end)
}
