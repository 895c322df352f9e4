//! `plylog migrate`: the database migrations this build has, applied, and
//! nothing else: a database is ready before the first server starts, or
//! before a read-only command reads it. A SQLite file is created if
//! missing. Prints each migration applied, or that none was needed.

use std::io::Write;

use super::{DatabaseArgs, Finding, OpsError};

/// `plylog migrate`: apply the migrations.
#[derive(Debug, Clone, clap::Args)]
pub struct MigrateArgs {
    #[command(flatten)]
    database: DatabaseArgs,
}

/// Applies the migrations and lists them on `out`.
///
/// # Errors
/// [`OpsError::Open`]: the database cannot be opened (or created), a
/// migration fails.
pub async fn run(args: &MigrateArgs, out: &mut impl Write) -> Result<Finding, OpsError> {
    for database in args.database.databases()? {
        let applied = database.migrate().await?;
        let name = database.redacted();
        if applied.is_empty() {
            writeln!(out, "{name}: up to date, no migration applied")?;
        }
        for migration in &applied {
            writeln!(
                out,
                "{name}: applied {} {}",
                migration.version, migration.description
            )?;
        }
    }
    Ok(Finding::Clean)
}
