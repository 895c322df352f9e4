//! Seeded randomness for the tests: one seed per test, from
//! `PLYLOG_TEST_SEED` when set, otherwise drawn fresh, and printed either way
//! so a failing run can be repeated.

use rand::SeedableRng;
use rand::rngs::StdRng;

/// The seed of the test `name`: `PLYLOG_TEST_SEED` or a fresh one, printed
/// (libtest shows it when the test fails).
pub fn seed(name: &str) -> u64 {
    let seed = std::env::var("PLYLOG_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    println!("{name}: seed {seed} (repeat with PLYLOG_TEST_SEED={seed})");
    seed
}

/// The generator of one task of a seeded test: `seed` mixed with `stream`,
/// so each task draws its own sequence.
pub fn rng(seed: u64, stream: u64) -> StdRng {
    StdRng::seed_from_u64(seed ^ stream.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}
