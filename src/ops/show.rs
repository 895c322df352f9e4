//! `plylog show GAME [--at N]`: a game's position after one of its events,
//! replayed from the log: its rules and seats, the event, whose turn it is
//! or how the game ended, then the board drawn as the API's `Board.text`
//! draws it (each cell its owner's symbol, `.` when empty; a race lists
//! each seat's square).

use std::io::Write;

use super::{DatabaseArgs, Finding, OpsError, end_reason_text, seat_name, status_text, time_text};
use crate::game::{GameState, escape_disruptive};
use crate::proto::convert;
use crate::registry::log;
use crate::store::StoreError;

/// `plylog show`: draw a game.
#[derive(Debug, Clone, clap::Args)]
pub struct ShowArgs {
    #[command(flatten)]
    database: DatabaseArgs,
    /// The game's id.
    game: String,
    /// Show the position right after the event at this sequence (1 is the
    /// game's creation); default: the latest.
    #[arg(long)]
    at: Option<u64>,
}

/// Writes the position `args` asks for on `out`.
///
/// # Errors
/// [`OpsError::NoGame`]; [`OpsError::Refused`] for a sequence the game does
/// not have, or a game whose events are stored without its row in the
/// games table; [`OpsError::Corrupt`] when the log does not replay that far;
/// store and output failures.
pub async fn run(args: &ShowArgs, out: &mut impl Write) -> Result<Finding, OpsError> {
    let store = args.database.open_to_read().await?;
    let loaded = store.load(&args.game, crate::store::LoadFrom::Start).await;
    store.close().await;
    let events = match loaded {
        Ok(Some(log)) => log.events,
        Ok(None) => return Err(OpsError::NoGame(args.game.clone())),
        // The log's events are there; the row its seat tokens are read
        // from is not.
        Err(StoreError::Database(sqlx::Error::RowNotFound)) => {
            return Err(OpsError::Refused(format!(
                "game {} is not in the games table, though events of it are stored \
                 (plylog games and verify do not list it)",
                args.game
            )));
        }
        Err(other) => return Err(other.into()),
    };
    let last = events.len() as u64;
    let at = args.at.unwrap_or(last);
    if !(1..=last).contains(&at) {
        return Err(OpsError::Refused(format!(
            "game {} has events 1 to {last}; --at {at} is not one of them",
            args.game
        )));
    }
    let shown = &events[..at as usize];
    let corrupt = |error| OpsError::Corrupt {
        game: args.game.clone(),
        error,
    };
    let (state, _) = log::rebuild(&args.game, shown).map_err(corrupt)?;
    let (wire, event) = log::decode(&args.game, &shown[shown.len() - 1]).map_err(corrupt)?;
    writeln!(out, "game    {}", escape_disruptive(&args.game))?;
    writeln!(out, "rules   {}", state.config().rules())?;
    writeln!(out, "seats   {}", seats_text(&state))?;
    writeln!(
        out,
        "event   {at} of {last}: {} at {}",
        convert::event_type(&event),
        time_text(log::recorded_at(&wire))
    )?;
    writeln!(
        out,
        "moves   {} (round {})",
        state.moves().len(),
        state.round()
    )?;
    let status = match (state.to_move(), end_reason_text(&state)) {
        (_, Some(reason)) => format!("{}: {reason}", status_text(&state)),
        (Some(seat), None) => format!("in play: {} to move", seat_name(&state, seat)),
        (None, None) => status_text(&state),
    };
    writeln!(out, "status  {status}")?;
    writeln!(out)?;
    for row in state.render() {
        writeln!(out, "{}", escape_disruptive(&row))?;
    }
    Ok(Finding::Clean)
}

/// The seats in turn order: `0 X alice, 1 O bob (bot)`, escaped
/// ([`escape_disruptive`]).
fn seats_text(state: &GameState) -> String {
    state
        .config()
        .seats()
        .iter()
        .enumerate()
        .map(|(index, seat)| {
            let bot = if seat.bot.is_some() { " (bot)" } else { "" };
            format!(
                "{index} {} {}{bot}",
                escape_disruptive(&seat.symbol),
                escape_disruptive(&seat.player_id)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}
