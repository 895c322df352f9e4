//! `plylog-bench`, the load generator's binary: `plylog bench ARGS` runs
//! it (it sits next to `plylog`) with the same arguments; it can be run on
//! its own as well.

use std::process::ExitCode;

use clap::Parser;
use plylog::telemetry::{self, LogFormat};

/// The allocator `plylog` runs with (see its src/main.rs), so that `bench
/// cold`'s in-process server and the client measure as they did inside
/// `plylog`.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Measure a server under load (play, follow, cold, replay, forward), beside a no-op
/// gRPC handler measured the same way.
#[derive(Debug, Parser)]
#[command(
    name = "plylog bench",
    bin_name = "plylog bench",
    version,
    after_help = "Exit codes: 0 done; 2 a usage error; 3 any other failure (one line on \
                  standard error)."
)]
struct Cli {
    /// How logs are written to standard error: text lines, or one JSON
    /// object per event. RUST_LOG filters them (default warn).
    #[arg(long, env = "PLYLOG_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text, global = true)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: plylog_bench::Command,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(error) = telemetry::init_for_command(cli.log_format) {
        eprintln!("plylog: {error}");
        return ExitCode::from(3);
    }
    plylog_bench::run(cli.command).await
}
