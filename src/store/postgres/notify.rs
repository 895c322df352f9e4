//! LISTEN/NOTIFY: nodes wake each other on channel [`CHANNEL`] when they
//! write a game ([`notice_changes`] reads a notification), and
//! [`PostgresStore::listen`] turns the notifications into the store's
//! feed of [`Change`]s. A notification is a wake-up call, not the data.

use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::PgListener;
use sqlx::{Postgres, Transaction};
use tokio::sync::mpsc;

use super::PostgresStore;
use crate::store::Change;

/// The notification channel nodes wake each other on.
pub(super) const CHANNEL: &str = "plylog_events";
/// Most games one notification names: with ids of up to
/// [`crate::api::MAX_ID_CHARS`] characters and 20-digit sequences, 50 stay
/// under PostgreSQL's 8,000-byte payload.
pub(super) const GAMES_PER_NOTICE: i64 = 50;

impl PostgresStore {
    /// Tells the other nodes, when `tx` commits, that game `game_id` was
    /// created (its log reaches sequence 1).
    pub(super) async fn notify_created(
        &self,
        tx: &mut Transaction<'_, Postgres>,
        game_id: &str,
    ) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT pg_notify($1, $2 || ';' || $3 || ':1')")
            .bind(CHANNEL)
            .bind(&*self.node)
            .bind(game_id)
            .execute(&mut **tx)
            .await?;
        Ok(())
    }

    /// The feed behind [`crate::store::EventStore::changes`]: a task that
    /// listens on [`CHANNEL`] (reconnecting when the connection drops, and
    /// then reporting [`Change::Missed`]) until the receiver is dropped or
    /// the pool closes.
    pub(super) fn listen(&self) -> mpsc::Receiver<Change> {
        let (tx, rx) = mpsc::channel(4096);
        let pool = self.pool.clone();
        let node = Arc::clone(&self.node);
        tokio::spawn(async move {
            let mut listener = loop {
                match PgListener::connect_with(&pool).await {
                    Ok(mut listener) => match listener.listen(CHANNEL).await {
                        Ok(()) => break listener,
                        // The store is closing: let go of the connection.
                        Err(sqlx::Error::PoolClosed) => return,
                        Err(error) => tracing::warn!(error = %error, "LISTEN failed; retrying"),
                    },
                    Err(sqlx::Error::PoolClosed) => return,
                    Err(error) if tx.is_closed() => {
                        tracing::debug!(error = %error, "listener no longer needed");
                        return;
                    }
                    Err(error) => {
                        tracing::warn!(error = %error, "listener connect failed; retrying")
                    }
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            };
            loop {
                let changes = match listener.try_recv().await {
                    Ok(Some(notification)) => notice_changes(notification.payload(), &node),
                    // The connection dropped: it reconnects on the next call,
                    // and what was sent meanwhile is lost.
                    Ok(None) => vec![Change::Missed],
                    // The store is closing, and Pool::close waits for every
                    // connection: the listener's goes back now, or never.
                    Err(sqlx::Error::PoolClosed) => return,
                    Err(error) => {
                        tracing::warn!(error = %error, "notification listener failed; retrying");
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        vec![Change::Missed]
                    }
                };
                for change in changes {
                    if tx.send(change).await.is_err() {
                        return;
                    }
                }
            }
        });
        rx
    }
}

/// The changes a notification on [`CHANNEL`] tells of, unless node `own`
/// sent it (none then: this node's games are current already).
///
/// A payload is `<node>;<game_id>:<sequence>,<game_id>:<sequence>...`: the
/// sending store's tag, then each game it wrote with its last sequence
/// (game ids hold no `;`, `,` or `:`; see [`crate::api::MAX_ID_CHARS`]). A
/// payload without a tag (`<game_id>:<sequence>`, as nodes before the tag
/// sent) comes from another node. An entry that does not parse is skipped.
fn notice_changes(payload: &str, own: &str) -> Vec<Change> {
    let entries = match payload.split_once(';') {
        Some((node, _)) if node == own => return Vec::new(),
        Some((_, entries)) => entries,
        None => payload,
    };
    entries
        .split(',')
        .filter_map(|entry| {
            let (game_id, last) = entry.rsplit_once(':')?;
            Some(Change::Appended {
                game_id: game_id.to_owned(),
                sequence: last.parse().ok()?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn appended(game_id: &str, sequence: u64) -> Change {
        Change::Appended {
            game_id: game_id.to_owned(),
            sequence,
        }
    }

    /// A notice names every game it lists, with its last sequence; a
    /// node's own notices name none; an untagged payload (as nodes sent
    /// before the tag) is another node's; a bad entry is skipped alone.
    #[test]
    fn notices_name_their_games_unless_this_node_sent_them() {
        assert_eq!(
            notice_changes("n2;g-1:7,g.2:1", "n1"),
            vec![appended("g-1", 7), appended("g.2", 1)]
        );
        assert_eq!(notice_changes("n1;g-1:7,g.2:1", "n1"), vec![]);
        assert_eq!(notice_changes("g-1:7", "n1"), vec![appended("g-1", 7)]);
        assert_eq!(
            notice_changes("n2;g-1:x,g2,g3:4", "n1"),
            vec![appended("g3", 4)]
        );
    }

    /// The longest notice a group sends fits PostgreSQL's payload limit
    /// (under 8,000 bytes).
    #[test]
    fn a_full_notice_fits_the_payload_limit() {
        let node = uuid::Uuid::new_v4().simple().to_string();
        let entry = format!("{}:{}", "g".repeat(crate::api::MAX_ID_CHARS), u64::MAX);
        let entries = vec![entry; GAMES_PER_NOTICE as usize];
        let payload = format!("{node};{}", entries.join(","));
        assert!(payload.len() < 8_000, "{} bytes", payload.len());
    }
}
