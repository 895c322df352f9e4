//! `plylog feed`: a running server's event feed (StreamAllEvents) as JSON
//! lines, one message a line, in protobuf's canonical JSON mapping (as
//! `plylog export` writes events):
//! `{"event":{"position":"7","event":{"gameId":...}}}`, and with
//! `--checkpoints` the checkpoints too. It starts after `--after`, or
//! after the positions in `--checkpoint-file` when that file exists, and
//! writes that file again after every line it prints (written whole, then
//! renamed over the old one), so a feed stopped anywhere resumes where it
//! stopped: an event is printed again only when the command was killed
//! between printing it and writing the file.

use std::io::Write;
use std::path::{Path, PathBuf};

use tokio_stream::StreamExt;

use super::json::feed_line;
use super::{Finding, OpsError};
use crate::proto::{self as pb, game_service_client::GameServiceClient};

/// `plylog feed`: print the feed.
#[derive(Debug, Clone, clap::Args)]
pub struct FeedArgs {
    /// The server's gRPC address (plaintext HTTP/2).
    #[arg(long, env = "PLYLOG_URL", default_value = "http://127.0.0.1:50051")]
    url: String,
    /// Start after these positions, one per cell (cell 0 first); none:
    /// from the beginning. A checkpoint file that exists takes precedence.
    #[arg(long, value_delimiter = ',')]
    after: Vec<u64>,
    /// Read the starting positions from this file when it exists, and
    /// write the latest positions to it after every line printed.
    #[arg(long)]
    checkpoint_file: Option<PathBuf>,
    /// Keep following the feed once caught up (until interrupted).
    #[arg(long)]
    follow: bool,
    /// Only events of this type (a GameEvent case, e.g. game_ended);
    /// repeat for several. None: every event.
    #[arg(long = "event-type")]
    event_types: Vec<String>,
    /// Only the events that change a game's life (creation, a round
    /// started, a seat out, the end, a reopening undo), with the seats'
    /// player ids and the end's outcome.
    #[arg(long)]
    lifecycle: bool,
    /// Only the events of games that meet this filter (ListGames' filter
    /// language on kind, seats.player_id and labels.KEY), e.g.
    /// 'labels.tournament = "spring"'.
    #[arg(long)]
    filter: Option<String>,
    /// Print the checkpoints as well as the events.
    #[arg(long)]
    checkpoints: bool,
}

/// Reads the feed from the server and prints it on `out`.
///
/// # Errors
/// [`OpsError::Refused`] for a server that cannot be reached or a
/// checkpoint file that does not read as positions; [`OpsError::Server`]
/// for a refused call or a stream the server ended with an error;
/// [`OpsError::Io`] when the output or the checkpoint file cannot be
/// written.
pub async fn run(args: &FeedArgs, out: &mut impl Write) -> Result<Finding, OpsError> {
    let mut positions = match &args.checkpoint_file {
        Some(file) if file.exists() => read_checkpoint(file)?,
        _ => args.after.clone(),
    };
    let mut client = GameServiceClient::connect(args.url.clone())
        .await
        .map_err(|e| OpsError::Refused(format!("cannot reach {}: {e}", args.url)))?;
    let mut feed = client
        .stream_all_events(pb::StreamAllEventsRequest {
            after: positions.clone(),
            follow: args.follow,
            event_types: args.event_types.clone(),
            checkpoint_interval: 0,
            lifecycle_only: args.lifecycle,
            filter: args.filter.clone().unwrap_or_default(),
            from_end: false,
        })
        .await?
        .into_inner();
    while let Some(message) = feed.next().await {
        let message = message?;
        let print = match &message.kind {
            Some(pb::stream_all_events_response::Kind::Event(event)) => {
                let cell = event.cell as usize;
                if positions.len() <= cell {
                    positions.resize(cell + 1, 0);
                }
                positions[cell] = event.position;
                true
            }
            Some(pb::stream_all_events_response::Kind::Checkpoint(checkpoint)) => {
                positions.clone_from(&checkpoint.positions);
                args.checkpoints
            }
            None => false,
        };
        if print {
            let line = feed_line(&message).map_err(OpsError::Refused)?;
            writeln!(out, "{line}")?;
            out.flush()?;
        }
        if let Some(file) = &args.checkpoint_file {
            write_checkpoint(file, &positions)?;
        }
    }
    Ok(Finding::Clean)
}

/// The positions in a checkpoint file: numbers separated by commas or
/// white space.
///
/// # Errors
/// [`OpsError::Io`] when it cannot be read; [`OpsError::Refused`] when it
/// holds anything else.
fn read_checkpoint(file: &Path) -> Result<Vec<u64>, OpsError> {
    let text = std::fs::read_to_string(file)?;
    text.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|word| !word.is_empty())
        .map(|word| {
            word.parse().map_err(|_| {
                OpsError::Refused(format!(
                    "{}: {word:?} is not a feed position",
                    file.display()
                ))
            })
        })
        .collect()
}

/// Writes `positions` to `file` as one line, comma-separated: to a file
/// beside it first, then renamed over it, so the file always holds a
/// whole checkpoint.
///
/// # Errors
/// [`OpsError::Io`].
fn write_checkpoint(file: &Path, positions: &[u64]) -> Result<(), OpsError> {
    let line = positions
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let mut temporary = file.as_os_str().to_owned();
    temporary.push(".tmp");
    std::fs::write(&temporary, format!("{line}\n"))?;
    std::fs::rename(&temporary, file)?;
    Ok(())
}
