//! Tests that need something beyond `cargo` (PostgreSQL, a Python with
//! gRPC packages): without it they are listed as ignored with the reason
//! printed, and with `PLYLOG_REQUIRE_<WHAT>=1` (as in `.ci/run`) its
//! absence fails them instead. For the `harness = false` test binaries,
//! which run on libtest-mimic.

use std::future::Future;

use libtest_mimic::{Failed, Trial};

/// Whether the tests of a crate can run: `Ok(true)` to run them,
/// `Ok(false)` to list them as ignored (`why` is printed), `Err` when
/// `require_var=1` demands what is missing.
pub fn availability(
    crate_name: &str,
    available: bool,
    require_var: &str,
    why: &str,
) -> Result<bool, String> {
    let required = std::env::var(require_var).is_ok_and(|v| v == "1");
    match (available, required) {
        (true, _) => Ok(true),
        (false, true) => Err(format!("{require_var}=1, but {why}")),
        (false, false) => {
            println!("{crate_name}: skipped: {why}");
            Ok(false)
        }
    }
}

/// A test that runs `test` on its own two-thread runtime; ignored or failed
/// as `availability` says.
pub fn trial<F: Future<Output = ()> + 'static>(
    name: &str,
    availability: &Result<bool, String>,
    test: fn() -> F,
) -> Trial {
    let availability = availability.clone();
    let ignored = availability == Ok(false);
    Trial::test(name, move || {
        availability.map_err(Failed::from)?;
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| Failed::from(e.to_string()))?
            .block_on(test());
        Ok(())
    })
    .with_ignored_flag(ignored)
}
