//! One owner per game: slots, their leases, and where a game's calls go.
//!
//! On a shared store every game belongs to one of a fixed number of slots
//! ([`slot_of`]: a hash of its id that never changes), and each slot is run
//! by exactly one node, the holder of its lease row in the database. The
//! database decides: a lease ends by its clock (`now()`), so no node's clock
//! can make two holders, and each new holder takes the next epoch. Where a
//! slot should be is rendezvous hashing over the live nodes (highest random
//! weight: Thaler and Ravishankar, 1998), computed by the lease statement
//! itself, so that every node agrees with the table rather than with its own
//! view of the cluster.
//!
//! A node stops serving a slot by its own monotonic clock before the lease
//! can end in the database (`Held::valid_until`), evicts the slot's games
//! when it stops, and releases the lease (so the next holder need not wait
//! for it to end). Every append carries the slot's epoch ([`Fence`]) and the
//! write statement refuses it when that is no longer the slot's: an owner
//! that lost its slot without knowing (paused, cut off) cannot write.
//!
//! With several databases (cells, `crate::store::Cells`), each slot is in
//! one cell and its lease is that cell's: a node keeps its leases with one
//! round per cell, each on its own, so a cell that cannot be reached costs
//! a node only that cell's slots.
//!
//! The store with no other writer (SQLite) has no slots: one node runs every
//! game, as before.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, Weak};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::{Inner, Registry, RegistryError};
use crate::store::{Fence, LeaseRound, SlotHolder, cell_of_slot};

/// How long a slot's lease lasts from its last renewal (database clock), by
/// default: a dead or cut-off node's slots move to a live node within this.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(6);

/// The slot of `game_id` among `slots`: the first four bytes of the SHA-256
/// of its UTF-8 bytes, read as an unsigned big-endian number, modulo
/// `slots`. The database computes the same (`plylog_slot` in the migration
/// `20261205000001_slot_leases.sql`), and neither may ever change.
pub fn slot_of(game_id: &str, slots: u32) -> u32 {
    let digest = Sha256::digest(game_id.as_bytes());
    let head = u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]]);
    head % slots.max(1)
}

/// A slot this node holds: the epoch of its lease, and until when (this
/// node's monotonic clock) it serves it: the lease's length from the moment
/// the renewal was sent, less a tenth for the two clocks' rates. The
/// database's lease ends no sooner, since its clock read `now()` after the
/// renewal was sent.
#[derive(Debug, Clone, Copy)]
struct Held {
    epoch: i64,
    valid_until: Instant,
}

/// Where a game's calls are served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Here; appends carry the fence (none on a store with no slots).
    Local(Option<Fence>),
    /// By the node at this address, which holds the game's slot.
    Remote(Arc<str>),
    /// Nowhere yet: the slot's lease is between holders.
    Unowned,
}

/// What this node knows of the slots: those it holds, and who holds the
/// others (as of its last lease round).
#[derive(Debug, Default)]
struct Table {
    held: HashMap<u32, Held>,
    /// Each slot's holder's address, when another node holds it.
    others: Vec<Option<Arc<str>>>,
}

/// This node's part in the cluster: its name and address, the slot count,
/// the lease length, and the slots table.
#[derive(Debug)]
pub struct Ownership {
    node: Arc<str>,
    address: Arc<str>,
    slots: u32,
    /// How many cells the slots are divided among (1: one database).
    cells: usize,
    lease: Duration,
    table: RwLock<Table>,
    /// One lease round at a time (the keeper's, the first one, the last
    /// release): two rounds sent with the same held slots would each take
    /// a new epoch.
    rounds: tokio::sync::Mutex<()>,
    /// Set once the slots were released for good (a graceful stop): the
    /// keeper takes none again.
    stopped: std::sync::atomic::AtomicBool,
    /// Asks the keeper for a round now: a call found its game's slot
    /// between owners.
    nudge: Arc<tokio::sync::Notify>,
}

impl Ownership {
    /// Ownership for node `node`, reachable at `address`, over `slots`
    /// slots in `cells` cells, with leases of `lease`.
    pub fn new(node: &str, address: &str, slots: u32, cells: usize, lease: Duration) -> Self {
        Ownership {
            node: node.into(),
            address: address.into(),
            slots,
            cells: cells.max(1),
            lease,
            table: RwLock::new(Table {
                held: HashMap::new(),
                others: vec![None; slots as usize],
            }),
            rounds: tokio::sync::Mutex::new(()),
            stopped: std::sync::atomic::AtomicBool::new(false),
            nudge: Arc::new(tokio::sync::Notify::new()),
        }
    }

    /// This node's name.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// The slot count.
    pub fn slots(&self) -> u32 {
        self.slots
    }

    /// The cell of `slot`.
    fn cell_of(&self, slot: u32) -> usize {
        cell_of_slot(slot, self.cells)
    }

    /// Where `game_id`'s calls are served, now.
    pub fn route(&self, game_id: &str) -> Route {
        let slot = slot_of(game_id, self.slots);
        let table = self.table.read().expect("slots lock");
        match table.held.get(&slot) {
            Some(held) if held.valid_until > Instant::now() => Route::Local(Some(Fence {
                node: Arc::clone(&self.node),
                slot: slot as i32,
                epoch: held.epoch,
            })),
            Some(_) => Route::Unowned,
            None => match &table.others[slot as usize] {
                Some(address) => Route::Remote(Arc::clone(address)),
                None => Route::Unowned,
            },
        }
    }

    /// The slots this node serves now.
    pub fn held_slots(&self) -> Vec<i32> {
        let now = Instant::now();
        let table = self.table.read().expect("slots lock");
        let mut slots: Vec<i32> = table
            .held
            .iter()
            .filter(|(_, held)| held.valid_until > now)
            .map(|(slot, _)| *slot as i32)
            .collect();
        slots.sort_unstable();
        slots
    }

    /// The slots held past their local validity: this node no longer serves
    /// them (its renewals failed), so they are dropped from the table.
    fn expire(&self) -> Vec<(i32, i64)> {
        let now = Instant::now();
        let mut table = self.table.write().expect("slots lock");
        let expired: Vec<(i32, i64)> = table
            .held
            .iter()
            .filter(|(_, held)| held.valid_until <= now)
            .map(|(slot, held)| (*slot as i32, held.epoch))
            .collect();
        for (slot, _) in &expired {
            table.held.remove(&(*slot as u32));
        }
        expired
    }

    /// The lease round to send now for `cell`: this node's held slots of
    /// that cell with their epochs.
    fn round(&self, cell: usize) -> LeaseRound {
        let table = self.table.read().expect("slots lock");
        LeaseRound {
            node: self.node.to_string(),
            address: self.address.to_string(),
            lease_ms: self.lease.as_millis() as i64,
            held: table
                .held
                .iter()
                .filter(|(slot, _)| self.cell_of(**slot) == cell)
                .map(|(slot, held)| (*slot as i32, held.epoch))
                .collect(),
            cell,
            cells: self.cells,
        }
    }

    /// Takes in `cell`'s lease round's answer (`sent` is when it was sent):
    /// the cell's slots held now, and every other slot's holder in it. The
    /// other cells' slots are left as they were. Returns the slots of the
    /// cell this node held before and does not now (with their old epochs),
    /// and how many it acquired.
    fn apply(
        &self,
        sent: Instant,
        cell: usize,
        holders: &[SlotHolder],
    ) -> (Vec<(i32, i64)>, usize) {
        let valid_until = sent + self.lease - self.lease / 10;
        let mut table = self.table.write().expect("slots lock");
        let mut held = HashMap::new();
        let mut acquired = 0;
        for holder in holders {
            let Ok(slot) = u32::try_from(holder.slot) else {
                continue;
            };
            if slot >= self.slots || self.cell_of(slot) != cell {
                continue;
            }
            if holder.mine {
                if table
                    .held
                    .get(&slot)
                    .is_none_or(|h| h.epoch != holder.epoch)
                {
                    acquired += 1;
                }
                held.insert(
                    slot,
                    Held {
                        epoch: holder.epoch,
                        valid_until,
                    },
                );
                table.others[slot as usize] = None;
            } else {
                table.others[slot as usize] = holder.address.as_deref().map(Arc::from);
            }
        }
        let lost = table
            .held
            .iter()
            .filter(|(slot, _)| self.cell_of(**slot) == cell)
            .filter(|(slot, old)| held.get(slot).is_none_or(|new| new.epoch != old.epoch))
            .map(|(slot, old)| (*slot as i32, old.epoch))
            .collect();
        table.held.retain(|slot, _| self.cell_of(*slot) != cell);
        table.held.extend(held);
        (lost, acquired)
    }

    /// Forgets every held slot (a graceful stop); returns them with their
    /// epochs, to release.
    fn drop_all(&self) -> Vec<(i32, i64)> {
        let mut table = self.table.write().expect("slots lock");
        table
            .held
            .drain()
            .map(|(slot, held)| (slot as i32, held.epoch))
            .collect()
    }
}

impl Registry {
    /// This node's name in the cluster, `None` on a store with no slots.
    pub fn node_name(&self) -> Option<&str> {
        self.inner.ownership.as_ref().map(|o| o.node())
    }

    /// Where `game_id`'s calls are served: here on a store with no slots.
    pub fn route(&self, game_id: &str) -> Route {
        match &self.inner.ownership {
            Some(ownership) => ownership.route(game_id),
            None => Route::Local(None),
        }
    }

    /// Where `game_id`'s calls are served, waiting (up to two rounds of
    /// the lease keeper, which is asked for one at once) while its slot is
    /// between owners: a slot handed over is released by one node and
    /// taken by the other at their next rounds, and this node learns of the
    /// new holder at its own.
    pub async fn settled_route(&self, game_id: &str) -> Route {
        let route = self.route(game_id);
        let Some(ownership) = self.inner.ownership.as_ref() else {
            return route;
        };
        if route != Route::Unowned {
            return route;
        }
        let patience = 2 * round_interval(ownership.lease);
        let deadline = tokio::time::Instant::now() + patience;
        while tokio::time::Instant::now() < deadline {
            ownership.nudge.notify_one();
            tokio::time::sleep(NUDGED_POLL).await;
            let route = self.route(game_id);
            if route != Route::Unowned {
                return route;
            }
        }
        Route::Unowned
    }

    /// The fence an append to `game_id` carries, `None` on a store with no
    /// slots.
    ///
    /// # Errors
    /// [`RegistryError::NotOwner`] when this node does not serve the game's
    /// slot now.
    pub(super) fn fence(
        &self,
        game_id: &str,
    ) -> Result<Option<crate::store::Fence>, RegistryError> {
        match self.route(game_id) {
            Route::Local(fence) => Ok(fence),
            Route::Remote(owner) => Err(RegistryError::NotOwner {
                owner: Some(owner.to_string()),
            }),
            Route::Unowned => Err(RegistryError::NotOwner { owner: None }),
        }
    }

    /// How many cells (databases) the store spans (see
    /// [`crate::store::Cells`]).
    pub fn cell_count(&self) -> usize {
        self.inner.store.cell_count()
    }

    /// How many slots this node serves now (0 on a store with no slots).
    pub fn served_slot_count(&self) -> usize {
        self.inner
            .ownership
            .as_ref()
            .map_or(0, |o| o.held_slots().len())
    }

    /// How long a timer-queue claim postpones a due game, in milliseconds:
    /// [`super::wakes::LEASE_MS`], or a slot lease when slots decide who
    /// claims (only the slot's holder claims its games, so the claim need
    /// only outlast the holder: a holder that dies holding a claim leaves
    /// the game due again as its slot moves, not 30 s later).
    pub(super) fn wake_claim_ms(&self) -> i64 {
        let lease_ms = super::wakes::LEASE_MS;
        match &self.inner.ownership {
            Some(ownership) => (ownership.lease.as_millis() as i64).min(lease_ms),
            None => lease_ms,
        }
    }

    /// The slots this node serves now (`None`: every game, a store with no
    /// slots), for the timer queue's claims.
    pub(super) fn served_slots(&self) -> Option<Vec<i32>> {
        self.inner.ownership.as_ref().map(|o| o.held_slots())
    }

    /// One lease round: renews this node's leases, acquires the slots placed
    /// on it that are free, drops (evicting their games) and releases those
    /// it no longer holds or should not, and learns every other slot's
    /// holder. Does nothing on a store with no slots.
    ///
    /// # Errors
    /// Store failures (the held slots stay served until their local
    /// validity ends).
    pub async fn keep_leases(&self) -> Result<(), RegistryError> {
        let Some(ownership) = &self.inner.ownership else {
            return Ok(());
        };
        let _round = ownership.rounds.lock().await;
        if ownership.stopped.load(std::sync::atomic::Ordering::Acquire) {
            return Ok(());
        }
        let expired = ownership.expire();
        if !expired.is_empty() {
            self.lost_slots(&expired);
        }
        // One round per cell, each on its own and each given a third of a
        // lease: a cell that does not answer (failing over, cut off) keeps
        // neither the others' renewals nor the next round waiting. A round
        // given up on may still commit; its epochs are then unknown here,
        // and the next round takes the slots again with new ones.
        let patience = ownership.lease / 3;
        let rounds = (0..ownership.cells).map(|cell| {
            let round = ownership.round(cell);
            async move {
                let sent = Instant::now();
                let answer =
                    match tokio::time::timeout(patience, self.inner.store.lease_round(round)).await
                    {
                        Ok(answer) => answer,
                        Err(_) => Err(crate::store::StoreError::TimedOut("the lease round")),
                    };
                (cell, sent, answer)
            }
        });
        let mut acquired = 0;
        let mut lost = Vec::new();
        let mut failed = None;
        for (cell, sent, answer) in futures_util::future::join_all(rounds).await {
            match answer {
                Ok(holders) => {
                    let (cell_lost, cell_acquired) = ownership.apply(sent, cell, &holders);
                    tracing::debug!(
                        node = ownership.node(),
                        cell,
                        acquired = cell_acquired,
                        lost = cell_lost.len(),
                        elapsed_ms = sent.elapsed().as_millis() as u64,
                        "lease round"
                    );
                    acquired += cell_acquired;
                    lost.extend(cell_lost);
                }
                Err(error) => {
                    if ownership.cells > 1 {
                        tracing::warn!(cell, error = %error, "the lease round of a cell failed");
                    }
                    failed.get_or_insert(error);
                }
            }
        }
        let metrics = &self.inner.metrics;
        if acquired > 0 {
            metrics.leases_acquired(acquired as u64);
            tracing::info!(
                acquired,
                held = ownership.held_slots().len(),
                "slots acquired; their timers armed"
            );
            // Their due games are this node's to wake now.
            self.inner.wakes.notify_one();
        }
        if !lost.is_empty() {
            self.lost_slots(&lost);
            self.inner
                .store
                .release_leases(ownership.node(), &lost, false)
                .await?;
        }
        metrics.slots_owned(ownership.held_slots().len());
        match failed {
            Some(error) => Err(error.into()),
            None => Ok(()),
        }
    }

    /// Stops serving `lost` slots: evicts their games from memory (their
    /// actors end once what they hold is answered).
    fn lost_slots(&self, lost: &[(i32, i64)]) {
        let Some(ownership) = &self.inner.ownership else {
            return;
        };
        self.inner.metrics.leases_lost(lost.len() as u64);
        let slots: std::collections::HashSet<u32> =
            lost.iter().map(|(slot, _)| *slot as u32).collect();
        let mut actors = self.inner.actors.lock().expect("registry lock");
        let evicted: Vec<String> = actors
            .keys()
            .filter(|id| slots.contains(&slot_of(id, ownership.slots())))
            .cloned()
            .collect();
        for game_id in &evicted {
            if let Some(handle) = actors.remove(game_id) {
                self.inner.budget.release(&handle.shared);
            }
        }
        tracing::info!(
            slots = lost.len(),
            games = evicted.len(),
            "slots no longer held here; their games left memory"
        );
    }

    /// Releases every slot this node holds (a graceful stop), so that the
    /// other nodes take them at their next round rather than when the
    /// leases end.
    ///
    /// # Errors
    /// Store failures (the leases then end by themselves).
    pub async fn release_slots(&self) -> Result<(), RegistryError> {
        let Some(ownership) = &self.inner.ownership else {
            return Ok(());
        };
        let _round = ownership.rounds.lock().await;
        ownership
            .stopped
            .store(true, std::sync::atomic::Ordering::Release);
        let held = ownership.drop_all();
        if !held.is_empty() {
            self.lost_slots(&held);
        }
        self.inner
            .store
            .release_leases(ownership.node(), &held, true)
            .await?;
        tracing::info!(slots = held.len(), "slots released");
        Ok(())
    }
}

/// How often a node renews its leases: six times a lease, so that a round
/// or two may fail before a slot's local validity ends.
fn round_interval(lease: Duration) -> Duration {
    lease / 6
}

/// How often a call waiting for its slot's new holder looks again, and the
/// least time between two rounds a call asked for.
const NUDGED_POLL: Duration = Duration::from_millis(25);

/// Keeps `inner`'s leases, a round every sixth of a lease from one round
/// from now (the server runs the first before it serves) and one when a
/// call finds its game's slot between owners, until the
/// registry is dropped or its slots are released (see
/// [`Registry::release_slots`]): also while the server drains its calls, so
/// that they finish under their leases.
pub(super) async fn keep_leases(inner: Weak<Inner>) {
    let Some((lease, nudge)) = inner.upgrade().and_then(|i| {
        let ownership = i.ownership.as_ref()?;
        Some((ownership.lease, Arc::clone(&ownership.nudge)))
    }) else {
        return;
    };
    let period = round_interval(lease);
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = nudge.notified() => {
                // Asked for by a call: at most one such round per poll.
                tokio::time::sleep(NUDGED_POLL).await;
            }
        }
        let Some(inner) = inner.upgrade() else { return };
        let registry = Registry { inner };
        let stopped = registry
            .inner
            .ownership
            .as_ref()
            .is_none_or(|o| o.stopped.load(std::sync::atomic::Ordering::Acquire));
        if stopped {
            return;
        }
        if let Err(error) = registry.keep_leases().await {
            tracing::warn!(error = %crate::api::cause_chain(&error), "the slot leases could not be renewed; trying again");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_games_slot_is_the_first_four_bytes_of_its_ids_sha256() {
        // 246 is what PostgreSQL's `plylog_slot('g1', 1024)` answers (the
        // two are compared on many ids against a real database in
        // tests/operator/cluster.rs).
        let digest = Sha256::digest(b"g1");
        let head = u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]]);
        assert_eq!(slot_of("g1", 1024), head % 1024);
        assert_eq!(slot_of("g1", 1024), 246);
        assert!(slot_of("anything", 7) < 7);
    }
}
