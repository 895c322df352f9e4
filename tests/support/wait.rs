//! Waiting for a condition with a deadline, never a bare sleep. Shared by
//! the test crates with `#[path]`.

use std::time::Duration;

/// Waits until `done` holds, checking every 10 ms; fails the test after
/// `timeout`, naming `what` it waited for.
pub(crate) async fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + timeout;
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
