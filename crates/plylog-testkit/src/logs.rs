//! The server's logs in a test run, on request.

use std::sync::Once;

/// With `TEST_LOG` set, writes the servers' logs (`plylog=debug,info`)
/// through the test harness's output; otherwise nothing. Safe to call
/// more than once.
pub fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("TEST_LOG").is_some() {
            tracing_subscriber::fmt()
                .with_env_filter("plylog=debug,info")
                .with_test_writer()
                .init();
        }
    });
}
