//! The log's integrity chain: every stored event carries a hash that covers
//! its game, its sequence, its payload and the hash of the event before it,
//! so a change to any stored byte of a log (a payload, a chain value, an
//! event dropped or moved) breaks the chain at or after the change, and the
//! hash at one sequence vouches for the whole log up to it (a snapshot
//! records it). This is corruption detection, not authentication: whoever
//! can write the database can recompute the chain.
//!
//! `link(previous, game, sequence, payload)` is the SHA-256 (FIPS 180-4) of
//! the ASCII tag `plylog.chain.v1`, the previous event's chain value
//! ([`GENESIS`] before sequence 1), the game id's length in bytes (8 bytes,
//! big-endian) and its UTF-8 bytes, the sequence (8 bytes, big-endian) and
//! the encoded `plylog.v1.GameEvent` payload as stored.

use sha2::{Digest, Sha256};

/// A chain value: 32 bytes of SHA-256.
pub type Chain = [u8; 32];

/// The chain value before a game's first event: 32 zero bytes.
pub const GENESIS: Chain = [0; 32];

/// The chain value of the event at `sequence` of game `game_id` with
/// stored payload `payload`, after the event whose chain value is
/// `previous` ([`GENESIS`] for sequence 1). O(payload).
pub fn link(previous: &Chain, game_id: &str, sequence: u64, payload: &[u8]) -> Chain {
    let mut hash = Sha256::new();
    hash.update(b"plylog.chain.v1");
    hash.update(previous);
    hash.update((game_id.len() as u64).to_be_bytes());
    hash.update(game_id.as_bytes());
    hash.update(sequence.to_be_bytes());
    hash.update(payload);
    hash.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pinned: a change to the link function orphans every stored chain.
    #[test]
    fn the_link_is_pinned() {
        let hex: String = link(&GENESIS, "g", 1, b"payload")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(hex.len(), 64);
        assert_eq!(hex, PINNED);
    }

    #[test]
    fn every_input_moves_the_link() {
        let base = link(&GENESIS, "g", 1, b"payload");
        assert_ne!(base, link(&[1; 32], "g", 1, b"payload"));
        assert_ne!(base, link(&GENESIS, "h", 1, b"payload"));
        assert_ne!(base, link(&GENESIS, "g", 2, b"payload"));
        assert_ne!(base, link(&GENESIS, "g", 1, b"payloae"));
        // The id's length is framed: no id/payload boundary shift collides.
        assert_ne!(link(&GENESIS, "ga", 1, b"b"), link(&GENESIS, "g", 1, b"ab"));
    }

    /// Computed independently, with Python:
    /// `hashlib.sha256(b"plylog.chain.v1" + bytes(32) + struct.pack(">Q", 1) + b"g" + struct.pack(">Q", 1) + b"payload")`.
    const PINNED: &str = "59129e6ed7bb5c38f7456667784e2c5e2c3e5fe3b01955fd60bc251456f8e0bb";
}
