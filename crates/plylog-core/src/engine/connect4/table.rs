//! The solver's transposition table (Pons parts 7, 11 and 12): 32 MiB of
//! upper and lower bounds, keyed exactly by the Chinese remainder theorem.

/// Entries of the transposition table: the largest prime with 5-byte
/// entries in 32 MiB.
pub(super) const TABLE_ENTRIES: usize = 6_710_863;
/// Entries per chunk of the table that [`Table::clear`] clears when dirty.
const CHUNK_ENTRIES: usize = 1 << 10;
/// The offset of a stored score, so that every score is stored above 0.
const SCORE_OFFSET: i32 = 32;
/// The flag of a stored lower bound (upper bounds are stored without it).
const LOWER_FLAG: u8 = 64;

/// A bound on a position's score, as the table holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bound {
    /// The score is at most this.
    Upper(i32),
    /// The score is at least this.
    Lower(i32),
}

/// The transposition table (Pons parts 7, 11 and 12): a fixed array of
/// [`TABLE_ENTRIES`] entries of 5 bytes, indexed by the key modulo the
/// (prime) size, each holding the low 32 bits of its key and one byte of
/// bound, 0 when empty; a new entry replaces the old. The prime size and
/// the 32 bits identify a 49-bit key exactly (Chinese remainder theorem:
/// 2^32 times the size exceeds 2^49), so a hit is never another position's.
pub(super) struct Table {
    pub(super) entries: Vec<[u8; 5]>,
    /// One bit per chunk of [`CHUNK_ENTRIES`] entries written since the
    /// last clear, so that clearing after a small search is cheap.
    dirty: Vec<u64>,
}

impl Table {
    pub(super) fn new() -> Self {
        let chunks = TABLE_ENTRIES.div_ceil(CHUNK_ENTRIES);
        Table {
            entries: vec![[0; 5]; TABLE_ENTRIES],
            dirty: vec![0; chunks.div_ceil(64)],
        }
    }

    fn index(key: u64) -> usize {
        (key % TABLE_ENTRIES as u64) as usize
    }

    pub(super) fn get(&self, key: u64) -> Option<Bound> {
        let [k0, k1, k2, k3, value] = self.entries[Self::index(key)];
        if value == 0 || u32::from_le_bytes([k0, k1, k2, k3]) != key as u32 {
            return None;
        }
        Some(if value & LOWER_FLAG != 0 {
            Bound::Lower(i32::from(value & !LOWER_FLAG) - SCORE_OFFSET)
        } else {
            Bound::Upper(i32::from(value) - SCORE_OFFSET)
        })
    }

    pub(super) fn put(&mut self, key: u64, bound: Bound) {
        let (score, flag) = match bound {
            Bound::Upper(score) => (score, 0),
            Bound::Lower(score) => (score, LOWER_FLAG),
        };
        debug_assert!(score.abs() < SCORE_OFFSET, "score {score} out of range");
        let index = Self::index(key);
        let [k0, k1, k2, k3] = (key as u32).to_le_bytes();
        self.entries[index] = [k0, k1, k2, k3, (score + SCORE_OFFSET) as u8 | flag];
        let chunk = index / CHUNK_ENTRIES;
        self.dirty[chunk / 64] |= 1 << (chunk % 64);
    }

    /// Empties every entry written since the last clear.
    pub(super) fn clear(&mut self) {
        for (word, bits) in self.dirty.iter_mut().enumerate() {
            while *bits != 0 {
                let chunk = word * 64 + bits.trailing_zeros() as usize;
                *bits &= *bits - 1;
                let start = chunk * CHUNK_ENTRIES;
                let end = (start + CHUNK_ENTRIES).min(TABLE_ENTRIES);
                self.entries[start..end].fill([0; 5]);
            }
        }
    }
}
