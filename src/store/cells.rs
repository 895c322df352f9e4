//! Several PostgreSQL databases ("cells") as one store: [`Cells`].
//!
//! Every game belongs to one slot (`crate::registry::ownership::slot_of`)
//! and every slot to one cell, [`cell_of_slot`]: the slot modulo the cell
//! count. A cell is a whole plylog database of its own (its migrations, its
//! games, their logs, its slot leases and its writer); the cells share
//! nothing, so a cell's failover or loss touches only its own games. Each
//! cell remembers, from the first server that opened it, which cell it is
//! and of how many (`cluster_config`), and a server given the cells in
//! another order or another number refuses to start: the slot of a game,
//! and so its cell, may never change.
//!
//! A game's calls go to its cell. What spans games is merged: listing
//! (one cursor per cell, [`EventStore::list`]), the timer queue (each cell
//! claims its own slots' due games; a cell that does not answer is skipped
//! for that claim), the lease rounds (one per cell, [`LeaseRound::cell`]).
//!
//! A CreateGame whose id the server chooses is idempotent by request id
//! across cells because the request id picks the cell ([`cell_of_request`])
//! and the new id is drawn inside that cell's slots: a retry, through any
//! node, looks for the request id in the one cell that can hold it, and two
//! racing retries meet at that cell's unique index. A caller-chosen id puts
//! the game and its request id in the id's cell, where a retry looks too.

use std::sync::Arc;

use async_trait::async_trait;
use futures_util::future::join_all;
use sha2::{Digest, Sha256};

use super::{
    Append, CreationRecord, DueWake, EventStore, FeedEvent, FeedRange, GameLog, GameRecord,
    LeaseRound, ListFilter, ListOrder, LoadFrom, LogTail, NewGame, PresenceRecord, RestoredGame,
    SharedPresence, SlotHolder, Snapshot, StoreError, StoredEvent, Wake,
};

/// The cell of `slot` among `cells`: the slot modulo the cell count, fixed
/// for the life of the cells (see the module's documentation).
pub fn cell_of_slot(slot: u32, cells: usize) -> usize {
    slot as usize % cells.max(1)
}

/// The cell a CreateGame with request id `request_id` and a server-chosen
/// game id creates its game in: the first four bytes of the SHA-256 of the
/// request id (UTF-8), big-endian, modulo the cell count.
pub fn cell_of_request(request_id: &str, cells: usize) -> usize {
    let digest = Sha256::digest(request_id.as_bytes());
    u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]]) as usize % cells.max(1)
}

/// Several cells as one [`EventStore`]: each game's calls go to its cell.
pub struct Cells {
    cells: Vec<Arc<dyn EventStore>>,
    slots: u32,
}

impl std::fmt::Debug for Cells {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cells")
            .field("cells", &self.cells.len())
            .field("slots", &self.slots)
            .finish()
    }
}

impl Cells {
    /// The cells, in their order (cell 0 first), which all divide the games
    /// into the same number of slots.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] when a cell has no slots or another slot
    /// count than the first; database errors.
    pub async fn new(cells: Vec<Arc<dyn EventStore>>) -> Result<Self, StoreError> {
        let mut slots = None;
        for (index, cell) in cells.iter().enumerate() {
            let count = cell.slot_count().await?.ok_or_else(|| {
                StoreError::Corrupt(format!("cell {index} has no slots (cells need PostgreSQL)"))
            })?;
            match slots {
                Some(first) if first != count => {
                    return Err(StoreError::Corrupt(format!(
                        "cell {index} has {count} slots, cell 0 has {first}: every cell needs the same count"
                    )));
                }
                _ => slots = Some(count),
            }
        }
        let slots = slots.ok_or_else(|| StoreError::Corrupt("no cells".to_owned()))?;
        Ok(Cells { cells, slots })
    }

    /// The cell `game_id` lives in.
    fn cell(&self, game_id: &str) -> &dyn EventStore {
        self.cells[self.cell_index(game_id)].as_ref()
    }

    /// The index of the cell `game_id` lives in.
    fn cell_index(&self, game_id: &str) -> usize {
        let slot = crate::registry::ownership::slot_of(game_id, self.slots);
        cell_of_slot(slot, self.cells.len())
    }

    /// `slots` split by cell (each cell's part in the order given).
    fn split(&self, slots: &[i32]) -> Vec<Vec<i32>> {
        let mut parts = vec![Vec::new(); self.cells.len()];
        for &slot in slots {
            parts[cell_of_slot(slot as u32, self.cells.len())].push(slot);
        }
        parts
    }
}

/// The first error of `results`, or `()`.
fn all_ok(results: Vec<Result<(), StoreError>>) -> Result<(), StoreError> {
    results.into_iter().collect()
}

#[async_trait]
impl EventStore for Cells {
    async fn create(&self, game: NewGame) -> Result<(), StoreError> {
        self.cell(&game.game_id).create(game).await
    }

    /// Each cell's games in a transaction of that cell, cell after cell:
    /// when one cell refuses its games, the cells before it have written
    /// theirs, and the error says which ([`StoreError::GameExistsAt`]).
    async fn create_all(&self, games: Vec<NewGame>) -> Result<(), StoreError> {
        let mut parts: Vec<Vec<(usize, NewGame)>> = vec![Vec::new(); self.cells.len()];
        for (at, game) in games.into_iter().enumerate() {
            parts[self.cell_index(&game.game_id)].push((at, game));
        }
        let mut written = Vec::new();
        for (cell, part) in parts.into_iter().enumerate() {
            if part.is_empty() {
                continue;
            }
            let (indexes, games): (Vec<usize>, Vec<NewGame>) = part.into_iter().unzip();
            match self.cells[cell].create_all(games).await {
                Ok(()) => written.extend(indexes),
                Err(StoreError::GameExistsAt { at, .. }) => {
                    return Err(StoreError::GameExistsAt {
                        at: indexes[at],
                        written,
                    });
                }
                Err(other) => return Err(other),
            }
        }
        Ok(())
    }

    async fn restore(&self, game: RestoredGame) -> Result<(), StoreError> {
        self.cell(&game.game.game_id).restore(game).await
    }

    async fn append(&self, append: Append) -> Result<(), StoreError> {
        self.cell(&append.game_id).append(append).await
    }

    async fn load(&self, game_id: &str, from: LoadFrom) -> Result<Option<GameLog>, StoreError> {
        self.cell(game_id).load(game_id, from).await
    }

    async fn snapshot(&self, game_id: &str) -> Result<Option<Snapshot>, StoreError> {
        self.cell(game_id).snapshot(game_id).await
    }

    async fn save_snapshot(&self, snapshot: Snapshot) -> Result<(), StoreError> {
        self.cell(&snapshot.game_id).save_snapshot(snapshot).await
    }

    async fn set_wake(&self, game_id: &str, sequence: u64, wake: Wake) -> Result<(), StoreError> {
        self.cell(game_id).set_wake(game_id, sequence, wake).await
    }

    /// Each cell's claim for its part of `slots` (up to `limit` from each
    /// cell, earliest first over all); a cell that does not answer within
    /// two seconds is left out of this claim (its due games are claimed at
    /// a later one), so one cell's failover does not hold up the others'
    /// timers. Fails only when no cell answers.
    async fn claim_wakes(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: u32,
        slots: Option<&[i32]>,
    ) -> Result<Vec<DueWake>, StoreError> {
        let parts = slots.map(|slots| self.split(slots));
        let claims = self.cells.iter().enumerate().map(|(index, cell)| {
            let part = parts.as_ref().map(|parts| parts[index].as_slice());
            async move {
                if part.is_some_and(<[i32]>::is_empty) {
                    return Ok(Vec::new());
                }
                bounded(cell.claim_wakes(now_ms, lease_ms, limit, part), "the claim").await
            }
        });
        let mut due: Vec<DueWake> = partial(join_all(claims).await, "claim due games")?
            .into_iter()
            .flatten()
            .collect();
        due.sort_by_key(|wake| wake.at_ms);
        Ok(due)
    }

    /// The earliest wake over the cells that answer (see
    /// [`Cells::claim_wakes`]).
    async fn next_wake(&self, slots: Option<&[i32]>) -> Result<Option<i64>, StoreError> {
        let parts = slots.map(|slots| self.split(slots));
        let reads = self.cells.iter().enumerate().map(|(index, cell)| {
            let part = parts.as_ref().map(|parts| parts[index].as_slice());
            async move {
                if part.is_some_and(<[i32]>::is_empty) {
                    return Ok(None);
                }
                bounded(cell.next_wake(part), "the next wake").await
            }
        });
        Ok(partial(join_all(reads).await, "read the next wake")?
            .into_iter()
            .flatten()
            .min())
    }

    async fn slot_count(&self) -> Result<Option<u32>, StoreError> {
        Ok(Some(self.slots))
    }

    fn cell_count(&self) -> usize {
        self.cells.len()
    }

    async fn lease_round(&self, round: LeaseRound) -> Result<Vec<SlotHolder>, StoreError> {
        let cell = self.cells.get(round.cell).ok_or_else(|| {
            StoreError::Corrupt(format!(
                "a lease round for cell {} of {}",
                round.cell,
                self.cells.len()
            ))
        })?;
        cell.lease_round(round).await
    }

    async fn release_leases(
        &self,
        node: &str,
        slots: &[(i32, i64)],
        leaving: bool,
    ) -> Result<(), StoreError> {
        let mut parts = vec![Vec::new(); self.cells.len()];
        for &(slot, epoch) in slots {
            parts[cell_of_slot(slot as u32, self.cells.len())].push((slot, epoch));
        }
        let releases = self
            .cells
            .iter()
            .zip(&parts)
            .filter(|(_, part)| leaving || !part.is_empty())
            .map(|(cell, part)| cell.release_leases(node, part, leaving));
        all_ok(join_all(releases).await)
    }

    async fn read(
        &self,
        game_id: &str,
        from: u64,
        to: u64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        self.cell(game_id).read(game_id, from, to, limit).await
    }

    async fn read_since(
        &self,
        game_id: &str,
        after: u64,
        limit: u32,
    ) -> Result<LogTail, StoreError> {
        self.cell(game_id).read_since(game_id, after, limit).await
    }

    /// The first cell's clock that answers, in cell order: the cells'
    /// clocks are each a PostgreSQL server's, kept by NTP like any other.
    async fn clock_ms(&self) -> Result<Option<i64>, StoreError> {
        let mut failed = None;
        for cell in &self.cells {
            match cell.clock_ms().await {
                Ok(ms) => return Ok(ms),
                Err(error) => failed = Some(error),
            }
        }
        Err(failed.unwrap_or(StoreError::Unsupported("no cells")))
    }

    fn shared(&self) -> bool {
        true
    }

    async fn record_presence(&self, record: PresenceRecord) -> Result<(), StoreError> {
        self.cell(&record.game_id).record_presence(record).await
    }

    async fn presence(
        &self,
        game_id: &str,
        seat: u8,
    ) -> Result<Option<SharedPresence>, StoreError> {
        self.cell(game_id).presence(game_id, seat).await
    }

    /// Up to `limit` games merged from every cell, each cell read after its
    /// own cursor (`after[cell]`, 0 when missing), the cells' pages merged
    /// by creation time, then cell, then cursor (newest first: the
    /// reverse). Each cell's games keep their own order, so paging on with
    /// each cell's last listed cursor neither skips nor repeats a game.
    async fn list(
        &self,
        after: &[i64],
        order: ListOrder,
        filter: &ListFilter,
        limit: u32,
    ) -> Result<Vec<GameRecord>, StoreError> {
        let pages = self.cells.iter().enumerate().map(|(index, cell)| {
            let cursor = after.get(index).copied().unwrap_or(0);
            async move { cell.list(&[cursor], order, filter, limit).await }
        });
        let mut heads = Vec::with_capacity(self.cells.len());
        for (index, page) in join_all(pages).await.into_iter().enumerate() {
            heads.push(
                page?
                    .into_iter()
                    .map(move |mut record| {
                        record.cell = index;
                        record
                    })
                    .peekable(),
            );
        }
        // A k-way merge that takes each cell's games in the cell's own
        // order: what is listed of a cell is always a prefix of its list.
        let key = |r: &GameRecord| (r.created_at_ms, r.cell, r.cursor);
        let mut merged = Vec::with_capacity(limit as usize);
        while merged.len() < limit as usize {
            let next = heads
                .iter_mut()
                .enumerate()
                .filter_map(|(index, head)| head.peek().map(|r| (key(r), index)))
                .reduce(|a, b| match order {
                    ListOrder::OldestFirst if b.0 < a.0 => b,
                    ListOrder::NewestFirst if b.0 > a.0 => b,
                    _ => a,
                });
            let Some((_, index)) = next else { break };
            merged.extend(heads[index].next());
        }
        Ok(merged)
    }

    async fn list_cell(
        &self,
        cell: usize,
        cursor: i64,
        order: ListOrder,
        filter: &ListFilter,
        limit: u32,
    ) -> Result<Vec<GameRecord>, StoreError> {
        let Some(store) = self.cells.get(cell) else {
            return Ok(Vec::new());
        };
        let mut records = store.list(&[cursor], order, filter, limit).await?;
        for record in &mut records {
            record.cell = cell;
        }
        Ok(records)
    }

    async fn feed_head(&self, cell: usize) -> Result<u64, StoreError> {
        match self.cells.get(cell) {
            Some(store) => store.feed_head(0).await,
            None => Ok(0),
        }
    }

    async fn read_feed(
        &self,
        cell: usize,
        range: FeedRange<'_>,
    ) -> Result<Vec<FeedEvent>, StoreError> {
        match self.cells.get(cell) {
            Some(store) => store.read_feed(0, range).await,
            None => Ok(Vec::new()),
        }
    }

    fn feed_signal(&self, cell: usize) -> tokio::sync::watch::Receiver<u64> {
        match self.cells.get(cell) {
            Some(store) => store.feed_signal(0),
            // No cell: a signal that never changes.
            None => tokio::sync::watch::Sender::new(0).subscribe(),
        }
    }

    async fn find_creation(
        &self,
        request_id: &str,
        game_id: Option<&str>,
    ) -> Result<Option<CreationRecord>, StoreError> {
        let cell = match game_id {
            Some(game_id) => self.cell(game_id),
            None => self.cells[cell_of_request(request_id, self.cells.len())].as_ref(),
        };
        cell.find_creation(request_id, game_id).await
    }

    /// Answers while any cell does: a node that reaches some cells serves
    /// their games (the others' calls fail on their own), and one cell's
    /// failover must not take every node out of its load balancer.
    async fn ping(&self) -> Result<(), StoreError> {
        let pings = self.cells.iter().map(|cell| cell.ping());
        partial(join_all(pings).await, "ping").map(|_| ())
    }

    async fn durability(&self) -> Result<Vec<(String, String)>, StoreError> {
        let mut settings = Vec::new();
        for (index, cell) in self.cells.iter().enumerate() {
            for (name, value) in cell.durability().await? {
                settings.push((format!("cell{index}.{name}"), value));
            }
        }
        Ok(settings)
    }

    async fn close(&self) {
        join_all(self.cells.iter().map(|cell| cell.close())).await;
    }
}

/// How long a cell's part of the timer queue's reads may take before the
/// other cells' answers are used without it.
const CELL_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// `work` on one cell, given up on (as [`StoreError::TimedOut`]) after
/// [`CELL_PATIENCE`]: a claim given up on may still commit, and its games
/// come due again when the claim's lease ends.
async fn bounded<T>(
    work: impl std::future::Future<Output = Result<T, StoreError>>,
    what: &'static str,
) -> Result<T, StoreError> {
    tokio::time::timeout(CELL_PATIENCE, work)
        .await
        .unwrap_or(Err(StoreError::TimedOut(what)))
}

/// The answers of the cells that answered; the error of the first cell
/// when none did. The cells that failed are logged (`what` says doing
/// what).
fn partial<T>(results: Vec<Result<T, StoreError>>, what: &str) -> Result<Vec<T>, StoreError> {
    let mut answers = Vec::with_capacity(results.len());
    let mut first_error = None;
    for (index, result) in results.into_iter().enumerate() {
        match result {
            Ok(answer) => answers.push(answer),
            Err(error) => {
                tracing::warn!(cell = index, error = %error, "a cell did not answer: {what}");
                first_error.get_or_insert(error);
            }
        }
    }
    match first_error {
        Some(error) if answers.is_empty() => Err(error),
        _ => Ok(answers),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_and_request_ids_map_to_cells_by_fixed_rules() {
        assert_eq!(cell_of_slot(7, 2), 1);
        assert_eq!(cell_of_slot(7, 1), 0);
        let digest = Sha256::digest(b"r1");
        let head = u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]]);
        assert_eq!(cell_of_request("r1", 3), head as usize % 3);
    }
}
