//! The last test binary of a `cargo test` in this workspace (cargo runs
//! the packages in name order, and this is plylog-testkit's only test):
//! it prints, in one place at the end, which suites the other binaries
//! skipped for want of something beyond cargo (PostgreSQL, a Python with
//! gRPC packages, Chromium, grpcurl) and why. Only the doc tests print
//! after it. `PLYLOG_REQUIRE_*=1` turns a skip into a failure, as
//! `.ci/run` does.

fn main() {
    let skipped = plylog_testkit::optional::skipped_in_this_run();
    if skipped.is_empty() {
        println!("\nplylog: no suite was skipped in this run.\n");
        return;
    }
    println!(
        "\nplylog: {} suites were skipped in this run (their tests are listed as ignored above):",
        skipped.len()
    );
    for (suite, why) in &skipped {
        println!("  {suite}: {why}");
    }
    println!(
        "Set PLYLOG_REQUIRE_POSTGRES, _PYTHON, _BROWSER or _GRPCURL to 1 to make a missing one fail the run.\n"
    );
}
