//! Tests that need something beyond `cargo` (PostgreSQL, a Python with
//! gRPC packages): without it they are listed as ignored with the reason
//! printed, and with `PLYLOG_REQUIRE_<WHAT>=1` (as in `.ci/run`) its
//! absence fails them instead. For the `harness = false` test binaries,
//! which run on libtest-mimic.

use std::future::Future;
use std::path::PathBuf;

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
            note_skip(crate_name, why);
            Ok(false)
        }
    }
}

/// Where skipped suites are noted for the summary at the end of a `cargo
/// test`: `target/<profile>/plylog-skipped/`, beside the test binaries'
/// `deps/`.
fn skip_notes() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.parent()?.join("plylog-skipped"))
}

/// Notes that `suite` was skipped, and why, for the summary printed by
/// crates/plylog-testkit/tests/skipped_suites.rs, the last test binary a
/// `cargo test` runs. The note names this process's parent (the `cargo`
/// running the tests), so a note left by an earlier run is not shown.
fn note_skip(suite: &str, why: &str) {
    let Some(dir) = skip_notes() else { return };
    let _ = std::fs::create_dir_all(&dir);
    let parent = std::os::unix::process::parent_id();
    let _ = std::fs::write(dir.join(suite), format!("{parent}\n{why}\n"));
}

/// The suites that the test binaries of this process's `cargo test` (its
/// parent) skipped, and why, sorted by suite.
pub fn skipped_in_this_run() -> Vec<(String, String)> {
    let parent = std::os::unix::process::parent_id().to_string();
    let mut skipped: Vec<(String, String)> = skip_notes()
        .and_then(|dir| std::fs::read_dir(dir).ok())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let text = std::fs::read_to_string(entry.path()).ok()?;
            let (noted_by, why) = text.split_once('\n')?;
            (noted_by == parent).then(|| {
                (
                    entry.file_name().to_string_lossy().into_owned(),
                    why.trim_end().to_owned(),
                )
            })
        })
        .collect();
    skipped.sort();
    skipped
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
