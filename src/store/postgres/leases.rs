//! The slot leases (see `crate::registry::ownership`): the slot count, a
//! node's lease round in one statement ([`LEASE_ROUND`]), and releases.

use sqlx::PgPool;

use crate::store::{LeaseRound, SlotHolder, StoreError};

/// A node's lease round (`$1` its name, `$2` its address, `$3` the lease in
/// milliseconds, `$4`/`$5` the slots it holds and their epochs, `$6`/`$7`
/// the cell count and this database's cell: only the slots `s` with
/// `s % $6 = $7` are placed, kept and answered), in one
/// statement and so one transaction: forgets nodes gone for an hour;
/// records the node live until the lease's end; places every slot on the live node with the highest
/// weight, the first 8 bytes of SHA-256 of `node/slot` (rendezvous
/// hashing); renews the held leases of the slots still placed on it;
/// acquires, with the next epoch, the slots placed on it that nobody holds,
/// whose lease ended (database clock), or that an earlier run under its
/// name held; and answers every slot: whether it is the node's now, its
/// epoch, and another live holder's address.
///
/// The rows it changes are locked first, in slot order, as the write
/// statement's fence locks them (`FOR SHARE`) and [`release`] does: two
/// nodes' rounds, a round and a release, or a round and a write group then
/// never wait for each other in a cycle.
///
/// A held slot placed elsewhere now is neither renewed nor released here:
/// the node stops serving it first, then releases it
/// ([`release`]); a slot placed here but held by another live node is
/// taken once that node releases it or its lease ends.
const LEASE_ROUND: &str = include_str!("sql/lease_round.sql");

/// The slot count, checked against the slots table.
///
/// # Errors
/// Database errors; [`StoreError::Corrupt`] when the table does not have
/// one row per slot.
pub(super) async fn slot_count(pool: &PgPool) -> Result<u32, StoreError> {
    let (slots, rows): (i32, i64) = sqlx::query_as(
        "SELECT (SELECT slots FROM cluster_config), \
         (SELECT count(*) FROM slot_leases WHERE slot >= 0 \
          AND slot < (SELECT slots FROM cluster_config))",
    )
    .fetch_one(pool)
    .await?;
    match u32::try_from(slots) {
        Ok(count) if i64::from(slots) == rows && count > 0 => Ok(count),
        _ => Err(StoreError::Corrupt(format!(
            "cluster_config says {slots} slots, slot_leases has {rows} rows for them"
        ))),
    }
}

/// Runs [`LEASE_ROUND`] for `round`.
///
/// # Errors
/// Database errors.
pub(super) async fn lease_round(
    pool: &PgPool,
    round: &LeaseRound,
) -> Result<Vec<SlotHolder>, StoreError> {
    let (slots, epochs): (Vec<i32>, Vec<i64>) = round.held.iter().copied().unzip();
    let rows: Vec<(i32, bool, i64, Option<String>)> = sqlx::query_as(LEASE_ROUND)
        .bind(&round.node)
        .bind(&round.address)
        .bind(round.lease_ms as f64)
        .bind(slots)
        .bind(epochs)
        .bind(round.cells.max(1) as i32)
        .bind(round.cell as i32)
        .fetch_all(pool)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(slot, mine, epoch, address)| SlotHolder {
            slot,
            mine,
            epoch,
            address,
        })
        .collect())
}

/// Ends `node`'s leases on `slots`, each only while it still holds that
/// epoch; with `leaving`, removes the node's membership row first, in the
/// same statement.
///
/// # Errors
/// Database errors.
pub(super) async fn release(
    pool: &PgPool,
    node: &str,
    slots: &[(i32, i64)],
    leaving: bool,
) -> Result<(), StoreError> {
    let (slots, epochs): (Vec<i32>, Vec<i64>) = slots.iter().copied().unzip();
    sqlx::query(
        "WITH gone AS (DELETE FROM cluster_nodes WHERE node = $1 AND $4), \
         released AS (SELECT s.slot FROM slot_leases s \
           JOIN unnest($2::integer[], $3::bigint[]) AS r(slot, epoch) \
             ON s.slot = r.slot AND s.epoch = r.epoch AND s.node = $1 \
           ORDER BY s.slot FOR UPDATE OF s) \
         UPDATE slot_leases s SET node = NULL, address = NULL, expires_at = '-infinity' \
         FROM released WHERE s.slot = released.slot",
    )
    .bind(node)
    .bind(slots)
    .bind(epochs)
    .bind(leaving)
    .execute(pool)
    .await?;
    Ok(())
}
