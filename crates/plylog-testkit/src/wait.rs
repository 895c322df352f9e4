//! Waiting for a condition with a deadline, never a bare sleep or a
//! hand-written deadline loop.
//!
//! - [`poll`]: try until something turns up or the time is out, and say
//!   which (for a test that asserts that something does *not* happen).
//! - [`wait_for`]: the same, failing the test when the time is out.
//! - [`wait_until`]: [`wait_for`] of a plain condition, every 10 ms.
//! - [`wait_until_blocking`]: for a test without a runtime.

use std::time::{Duration, Instant};

/// Calls `attempt` until it gives `Some`, waiting `every` between calls;
/// `None` when `timeout` has passed without. The first call is at once, and
/// one more comes after the deadline has passed.
pub async fn poll<T>(
    timeout: Duration,
    every: Duration,
    mut attempt: impl AsyncFnMut() -> Option<T>,
) -> Option<T> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(found) = attempt().await {
            return Some(found);
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(every).await;
    }
}

/// Calls `attempt` until it gives `Some`, waiting `every` between calls,
/// and returns what it gave.
///
/// # Panics
/// After `timeout`, naming `what` it waited for.
#[track_caller]
pub fn wait_for<T>(
    what: &str,
    timeout: Duration,
    every: Duration,
    attempt: impl AsyncFnMut() -> Option<T>,
) -> impl Future<Output = T> {
    let caller = std::panic::Location::caller();
    async move {
        match poll(timeout, every, attempt).await {
            Some(found) => found,
            None => panic!("timed out after {timeout:?} waiting for {what} (at {caller})"),
        }
    }
}

/// Waits until `done` holds, checking every 10 ms.
///
/// # Panics
/// After `timeout`, naming `what` it waited for.
#[track_caller]
pub fn wait_until(
    what: &str,
    timeout: Duration,
    mut done: impl FnMut() -> bool,
) -> impl Future<Output = ()> {
    wait_for(what, timeout, Duration::from_millis(10), async move || {
        done().then_some(())
    })
}

/// Calls `attempt` until it gives `Some`, sleeping this thread `every`
/// between calls, and returns what it gave.
///
/// # Panics
/// After `timeout`, naming `what` it waited for.
#[track_caller]
pub fn wait_until_blocking<T>(
    what: &str,
    timeout: Duration,
    every: Duration,
    mut attempt: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(found) = attempt() {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(every);
    }
}
