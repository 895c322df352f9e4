//! The timer queue: games that wait on a deadline need not stay in memory.
//!
//! A game's next deadline is data: its turn's time running out, an absent
//! seat's grace period ending, or a bot to move (due at once). The store
//! keeps it per game, indexed ([`crate::store::Wake`]): every append writes
//! the wake that follows it in the same transaction, and the actor holding
//! a game writes it again when it changes otherwise (a seat leaving). So a
//! game in memory times out by its own timer, and a game that left memory
//! (evicted under the limits, idle, or never loaded since a restart) is
//! brought back by the queue when its wake comes due: one task per server
//! claims the due games from the index (each claim postpones the game's
//! wake by [`LEASE_MS`], so no other node, and no later claim, takes it
//! meanwhile), loads each, and has its actor do what is due; the actor
//! then writes the wake that follows. A node that dies holding a claim
//! leaves the game due again once the lease ends. Startup only arms the
//! queue: nothing is loaded until it is due (Temporal's per-shard timer
//! queue is the model).

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::Notify;

use super::actor::Msg;
use super::{Inner, Registry, RegistryError};
use crate::game::{GameState, Millis};
use crate::store::{DueWake, Wake};

/// How long a claim keeps a due game from being claimed again, in
/// milliseconds: the time its node has to load it and write its next wake.
pub(super) const LEASE_MS: i64 = 30_000;

/// Most games one claim takes, and so most games the queue loads at once.
const BATCH: u32 = 64;

/// How often the queue looks at the index even with nothing due sooner:
/// for wakes written by another node, or after a store failure.
const POLL: Duration = Duration::from_secs(1);

/// The wake of `state` (see [`Wake`]): the earliest of its turn's deadline,
/// `grace_ends` (when the absent seat to move runs out of grace, as the
/// caller works it out from presence) and, with a bot to move, the start
/// of its turn (due at once), or `bot_leased_until` while the bot is
/// thinking on a node; with `absent_since`, the time the seat to move has
/// been absent from. O(1).
pub(super) fn of(
    state: &GameState,
    grace_ends: Option<Millis>,
    absent_since: Option<Millis>,
    bot_leased_until: Option<Millis>,
) -> Wake {
    let bot_to_move = state
        .to_move()
        .is_some_and(|seat| state.config().bot(seat).is_some());
    let bot_due = bot_to_move.then(|| bot_leased_until.unwrap_or(state.clocks().turn_started));
    let at_ms = [state.deadline(), grace_ends, bot_due]
        .into_iter()
        .flatten()
        .min();
    Wake {
        at_ms,
        absent_since_ms: absent_since,
    }
}

/// Runs the timer queue of `inner`'s registry until it is dropped or shut
/// down: when the earliest wake in the index is due, claims the due games
/// and has each one's actor do what is due (at most [`BATCH`] at a time);
/// otherwise sleeps until that wake, [`POLL`], or a `poke` (a game left
/// memory, or a new game was not kept in memory). Only a claim writes: an
/// idle server reads the index once per [`POLL`].
pub(super) async fn run(inner: Weak<Inner>, poke: Arc<Notify>) {
    // Games woken since the server started, until the first time nothing
    // is due: what the server found due at startup.
    let mut at_startup = Some(0);
    loop {
        let Some(strong) = inner.upgrade() else {
            return;
        };
        let registry = Registry { inner: strong };
        if registry.inner.shutdown.is_cancelled() {
            return;
        }
        let store = Arc::clone(&registry.inner.store);
        let clock = registry.settings().clock.clone();
        let now = clock.now_ms();
        // On a store with slots, only this node's slots' games.
        let slots = registry.served_slots();
        let claim_ms = registry.wake_claim_ms();
        let mut next = match store.next_wake(slots.as_deref()).await {
            Ok(next) => next,
            Err(error) => {
                tracing::warn!(error = %error, "the timer queue could not read the next wake; trying again");
                None
            }
        };
        if next.is_some_and(|at| at <= now) {
            match store
                .claim_wakes(now, claim_ms, BATCH, slots.as_deref())
                .await
            {
                // What is due, and maybe more: look again at once.
                Ok(due) if !due.is_empty() => {
                    tracing::debug!(games = due.len(), "due games woken");
                    if let Some(woken) = at_startup.as_mut() {
                        *woken += due.len();
                    }
                    wake(&registry, due, now.saturating_add(claim_ms)).await;
                    continue;
                }
                // Another node is claiming the due games right now.
                Ok(_) => next = Some(now.saturating_add(RECLAIM_MS)),
                Err(error) => {
                    tracing::warn!(error = %error, "the timer queue could not claim due games; trying again");
                    next = None;
                }
            }
        }
        if let Some(games) = at_startup.take().filter(|games| *games > 0) {
            // Their clocks ran out, their absent seats' grace ended, or
            // their bots are to move.
            tracing::info!(games, "games due at startup woken");
        }
        let shutdown = registry.inner.shutdown.clone();
        // Nothing of the registry is held while waiting.
        drop(registry);
        tokio::select! {
            () = async {
                match next {
                    Some(at) => clock.sleep_until(at).await,
                    None => std::future::pending().await,
                }
            } => {}
            () = tokio::time::sleep(POLL) => {}
            () = poke.notified() => {}
            () = shutdown.cancelled() => return,
        }
    }
}

/// How long to wait before claiming again when the due games were all
/// being claimed by another node, in milliseconds of the server's clock.
const RECLAIM_MS: i64 = 50;

/// Has the actor of each `due` game (loaded if it is not in memory) do what
/// is due, all at once, and waits for every one. `claimed_until` is the
/// time the claim postponed their wakes to.
async fn wake(registry: &Registry, due: Vec<DueWake>, claimed_until: i64) {
    let mut woken = tokio::task::JoinSet::new();
    for due in due {
        let registry = registry.clone();
        woken.spawn(async move {
            let woke = registry
                .ask(&due.game_id, |reply| Msg::Wake {
                    claimed_until,
                    reply,
                })
                .await;
            match woke {
                Ok(()) | Err(RegistryError::ShuttingDown) => {}
                Err(error) => tracing::warn!(
                    game_id = %due.game_id,
                    due_ms = due.at_ms,
                    error = %error,
                    "a due game did not wake; it is due again when its claim ends"
                ),
            }
        });
    }
    while woken.join_next().await.is_some() {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Bot, EngineKind};
    use crate::game::{
        AbsenceAction, AbsencePolicy, Command, GameConfig, MIN_TIME_MS, SeatInfo, SeatLimits,
        TimeControl, decide, evolve,
    };
    use crate::rules::{Coord, MnkRules, Move, RuleSet, Seat};

    fn config(bot: bool, per_move_ms: Option<u64>, grace_ms: Option<u64>) -> GameConfig {
        let seat = |id: &str, symbol: &str, bot: Option<Bot>| SeatInfo {
            player_id: id.into(),
            display_name: String::new(),
            symbol: symbol.into(),
            bot,
        };
        let bot = bot.then_some(Bot {
            engine: EngineKind::Random,
            strength: 1,
            seed: 3,
        });
        let rules = RuleSet::Mnk(MnkRules::new(3, 3, 3, 100).unwrap());
        let mut config = GameConfig::new(
            rules,
            vec![seat("ann", "X", None), seat("bob", "O", bot)],
            SeatLimits::default(),
        )
        .unwrap();
        if let Some(ms) = per_move_ms {
            let timed = TimeControl {
                per_move_ms: Some(ms),
                clock: None,
                on_expiry: Default::default(),
                seed: 1,
            };
            config = config.with_time_control(timed, MIN_TIME_MS).unwrap();
        }
        if let Some(grace_ms) = grace_ms {
            let policy = AbsencePolicy {
                grace_ms,
                action: AbsenceAction::Expire,
            };
            config = config.with_absence(policy, MIN_TIME_MS).unwrap();
        }
        config
    }

    fn after_one_move(config: GameConfig) -> GameState {
        let mut state = GameState::new(config, 1_000);
        let play = Command::Play {
            seat: Some(Seat(0)),
            mv: Move::Place(Coord { row: 1, col: 1 }),
        };
        for event in decide(&state, &play, 4_000).unwrap() {
            evolve(&mut state, &event, 4_000);
        }
        state
    }

    #[test]
    fn an_untimed_game_without_bots_never_wakes() {
        let state = after_one_move(config(false, None, None));
        assert_eq!(of(&state, None, None, None), Wake::default());
    }

    #[test]
    fn a_timed_game_wakes_at_its_turns_deadline() {
        let state = GameState::new(config(false, Some(5_000), None), 1_000);
        assert_eq!(of(&state, None, None, None).at_ms, Some(6_000));
        let state = after_one_move(config(false, Some(5_000), None));
        assert_eq!(of(&state, None, None, None).at_ms, Some(9_000));
    }

    #[test]
    fn a_bot_to_move_is_due_at_once_and_an_earlier_grace_end_wins_over_a_deadline() {
        let state = after_one_move(config(true, Some(5_000), None));
        assert_eq!(state.to_move(), Some(Seat(1)));
        assert_eq!(of(&state, None, None, None).at_ms, Some(4_000));
        assert_eq!(of(&state, None, None, Some(34_000)).at_ms, Some(9_000));
        let state = after_one_move(config(false, Some(5_000), Some(60_000)));
        let wake = of(&state, Some(7_000), Some(4_000), None);
        assert_eq!(
            wake,
            Wake {
                at_ms: Some(7_000),
                absent_since_ms: Some(4_000)
            }
        );
        assert_eq!(of(&state, Some(70_000), None, None).at_ms, Some(9_000));
    }
}
