//! Bots: a bot seat to move thinks in the engine pool, and its move is appended
//! as the actor's own command.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::{OwnedSemaphorePermit, oneshot};
use tracing::Instrument;

use super::super::RequestMeta;
use super::{Actor, TIMEOUT_RETRY};
use crate::engine::{Bot, Choice, Score};
use crate::game::Command;
use crate::rules::Seat;

/// A bot's answer: the sequence of the position it searched, its seat,
/// and its move (`None`: stopped, or no move found).
type BotAnswer = (u64, Seat, Option<Choice>);

impl Actor {
    /// Starts deciding the move of the bot seat to move, unless it is
    /// already being decided on this position; stops a decision on an
    /// earlier position. The decision waits for its turn first (see
    /// [`super::super::thinking::Thinking::bot_turn`]); returns where the turn's
    /// permit will come, for [`Actor::search`] (one channel per decision: a
    /// game without bots holds none). While it waits, the game holds no
    /// copy of its state for it, and may leave memory (the timer queue
    /// brings it back).
    pub(super) fn think(&mut self) -> Option<oneshot::Receiver<OwnedSemaphorePermit>> {
        let sequence = self.state.sequence();
        let bot = self
            .state
            .to_move()
            .and_then(|seat| self.state.config().bot(seat).map(|_| seat));
        if let Some((at, stop)) = &self.thinking {
            if *at == sequence && bot.is_some() {
                return None;
            }
            stop.store(true, Ordering::Relaxed);
            self.thinking = None;
        }
        bot?;
        let stop = Arc::new(AtomicBool::new(false));
        self.thinking = Some((sequence, stop));
        let registry = self.registry.clone();
        let (turns, turn) = oneshot::channel();
        let pause = self.bot_failed.take() == Some(sequence);
        tokio::spawn(
            async move {
                if pause {
                    tokio::time::sleep(TIMEOUT_RETRY).await;
                }
                if let Some(permit) = registry.inner.thinking.bot_turn().await {
                    // Gone (the game left memory, or moved on): the permit
                    // goes back with the message.
                    let _ = turns.send(permit);
                }
            }
            .instrument(self.span()),
        );
        Some(turn)
    }

    /// Runs the decision [`Actor::think`] started, now that it has its
    /// turn's `permit`, on the state as it stands; returns where its answer
    /// will come. `None` (the permit given back) when the game moved on
    /// from the position meanwhile.
    pub(super) fn search(
        &mut self,
        permit: OwnedSemaphorePermit,
    ) -> Option<oneshot::Receiver<BotAnswer>> {
        let sequence = self.state.sequence();
        let (at, stop) = self.thinking.as_ref()?;
        if *at != sequence {
            return None;
        }
        let stop = Arc::clone(stop);
        let seat = self.state.to_move()?;
        let bot = *self.state.config().bot(seat)?;
        let thinking = &self.registry.inner.thinking;
        let job = thinking.job(
            Arc::new(self.state.clone()),
            &bot,
            thinking.settings().bot_nodes,
        );
        let registry = self.registry.clone();
        registry.metrics().bot_search_started();
        let (answers, answer) = oneshot::channel();
        tokio::spawn(
            async move {
                let engine = bot.engine.name();
                let started = std::time::Instant::now();
                let choice = registry.inner.thinking.bot_move(permit, job, stop).await;
                if choice.is_some() {
                    registry.metrics().bot_moved(engine, started.elapsed());
                }
                let _ = answers.send((sequence, seat, choice));
            }
            .instrument(self.span()),
        );
        Some(answer)
    }

    /// Appends the bot's move decided on the position after `sequence`,
    /// unless the game has moved on since. An engine that found no move
    /// (it should not) is replaced by a random legal move from the bot's
    /// generator, so a bot never stalls its game.
    pub(super) async fn play_bot(&mut self, sequence: u64, seat: Seat, choice: Option<Choice>) {
        if self.thinking.as_ref().is_none_or(|(at, _)| *at != sequence) {
            return;
        }
        self.thinking = None;
        if self.state.sequence() != sequence {
            return;
        }
        let proven = matches!(
            choice,
            Some(Choice {
                score: Score::Exact(_),
                ..
            })
        );
        let mv = match choice {
            Some(choice) => {
                tracing::debug!(%seat, nodes = choice.nodes, score = ?choice.score, "bot chose");
                Some(choice.mv)
            }
            None => self.state.config().bot(seat).and_then(|bot: &Bot| {
                tracing::warn!(%seat, engine = bot.engine.name(), "engine found no move; playing a random one");
                crate::engine::random_move(
                    self.state.config().rules(),
                    self.state.position(),
                    seat,
                    &mut bot.rng(sequence + 1),
                )
            }),
        };
        let Some(mv) = mv else {
            return;
        };
        let request = RequestMeta::default();
        let command = Command::BotPlay {
            seat,
            mv,
            sequence,
            proven,
        };
        let result = Box::pin(self.execute(command, &request)).await;
        if let Err(error) = result {
            tracing::warn!(error = %error, "bot move not appended; deciding again");
            self.bot_failed = Some(self.state.sequence());
        }
    }
}
