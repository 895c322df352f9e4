//! Command execution: the recipe every command follows, from the seat token to
//! the reply.

use prost::Message;
use tracing::Instrument;

use super::super::{CommandReply, RegistryError, RequestMeta};
use super::load::decode;
use super::{Actor, record_bytes};
use std::collections::HashMap;

use super::seat_tokens::SeatTokens;
use crate::game::{self, Command, Event, GameError, GameState};
use crate::proto::convert::View;
use crate::proto::{self as pb, convert, event_format};
use crate::store::Wake;
use crate::store::chain::Chain;
use crate::store::{Append, NewEvent, RequestRecord, StoreError};

/// How often a command is decided again after its append lost a race to
/// another writer (another node on a shared database).
const CONFLICT_RETRIES: usize = 3;

/// A decided command's events, ready to append: encoded and chained, with
/// what the actor takes in once the append commits. The state already
/// holds them (see [`Actor::encode`]).
struct Batch {
    /// What the store appends.
    append: Append,
    /// The events as replies and subscribers get them.
    wire: Vec<pb::GameEvent>,
    /// The request's record, kept once the append commits.
    record: Option<RequestRecord>,
    /// A re-issued seat token, and the game's seat tokens with it.
    issued: Option<(String, SeatTokens)>,
    /// When the events were recorded (Unix epoch milliseconds).
    recorded_at_ms: i64,
    /// The integrity chain value of the last event.
    chain: Chain,
    /// The game's wake after the events.
    wake: Wake,
    /// Whether nobody had moved before the events.
    fresh: bool,
    /// Whether the game was over before the events.
    was_over: bool,
}

impl Actor {
    /// Runs `command` as the recipe says: authorize → recorded reply? →
    /// turn token → decide → encode → commit → reply. An append that loses
    /// a race to another node is decided again, after a catch-up, up to
    /// [`CONFLICT_RETRIES`] times.
    pub(super) async fn execute(
        &mut self,
        command: Command,
        request: &RequestMeta,
    ) -> Result<CommandReply, RegistryError> {
        // The actor's own commands (a timeout, a bot's move) come here
        // without a message.
        self.restored().await?;
        self.prefix_checked().await?;
        for _ in 0..CONFLICT_RETRIES {
            // Authorized afresh on every attempt, against the state this
            // attempt decides on: after a lost race the actor has caught up,
            // and a seat token another node re-issued meanwhile no longer
            // acts (issue 35).
            let command =
                self.seat_tokens
                    .authorize(&self.game_id, command, &request.credential)?;
            if let Some(record) = recorded(&self.requests, request)? {
                return self.recorded_reply(record, request.view).await;
            }
            turn_token(request.expected_sequence, self.state.sequence())?;
            let recorded_at_ms = self.record_time();
            let Some(events) = self.decide(&command, recorded_at_ms).await? else {
                return Ok(self.reply(Vec::new(), None, request.view));
            };
            let batch = self.encode(command, &events, recorded_at_ms, request)?;
            if let Some(reply) = self.commit(batch, request.view).await? {
                return Ok(reply);
            }
        }
        // Other nodes kept appending between this node's catch-up and its
        // append: contention, not a failure. Nothing was appended for this
        // command; the caller retries it as it is.
        Err(RegistryError::Contended {
            game_id: self.game_id.clone(),
            attempts: CONFLICT_RETRIES,
        })
    }

    /// When a command's events are recorded: now, but never before the
    /// game's last event. Time in a game never goes backwards, whichever
    /// node's clock recorded the event before.
    fn record_time(&self) -> i64 {
        self.registry
            .settings()
            .clock
            .now_ms()
            .max(self.last_recorded_at_ms)
    }

    /// Decides `command` on the game as it stands: its events, or `None`
    /// when it changes nothing.
    ///
    /// # Errors
    /// The game's refusal. A command that came after the turn's deadline
    /// is refused, once the timeout it found due is appended.
    async fn decide(
        &mut self,
        command: &Command,
        recorded_at_ms: i64,
    ) -> Result<Option<Vec<Event>>, RegistryError> {
        match game::decide(&self.state, command, recorded_at_ms) {
            Err(expired @ GameError::TimeExpired { .. }) => {
                // Too late: the timeout lands first, then the refusal.
                self.time_out().await;
                Err(expired.into())
            }
            Err(refused) => Err(refused.into()),
            Ok(events) if events.is_empty() => Ok(None),
            Ok(events) => Ok(Some(events)),
        }
    }

    /// Encodes the decided `events` for the store and applies them to the
    /// state: the wire events, the request's record, a re-issued token, and
    /// the append, chained onto the game's last event and carrying the
    /// status and the wake that follow from them.
    ///
    /// # Errors
    /// [`RegistryError::NoTokenSecret`] for a re-issue on a server without
    /// a secret, [`RegistryError::NotOwner`] when this node no longer holds
    /// the game's slot (nothing is applied then).
    fn encode(
        &mut self,
        command: Command,
        events: &[Event],
        recorded_at_ms: i64,
        request: &RequestMeta,
    ) -> Result<Batch, RegistryError> {
        let current = self.state.sequence();
        // Decided under this node's lease of the game's slot, if it still
        // holds it (the store checks the lease again as it writes).
        let fence = self.registry.fence(&self.game_id)?;
        let issued = match command {
            Command::ReissueSeatToken { seat } => Some(self.seat_tokens.issue(
                self.registry.inner.keys.as_ref(),
                &self.game_id,
                seat,
                current + 1,
            )?),
            _ => None,
        };
        let wire = wire_events(&self.game_id, &self.state, events, recorded_at_ms);
        let record = record_of(request, current + 1, current + events.len() as u64);
        // The events are applied before they are durable, so the append
        // can carry what follows from them (the status, the next wake):
        // one source of truth, `evolve`. Nothing sees the state until
        // the append is answered (the actor handles one message at a
        // time); if it fails, the state is rebuilt from the store.
        let (fresh, was_over) = (
            !self.state.anyone_moved(),
            self.state.end_reason().is_some(),
        );
        events
            .iter()
            .for_each(|e| game::evolve(&mut self.state, e, recorded_at_ms));
        let wake = self.wake();
        let mut chain = self.chain;
        let mut over = was_over;
        let append = Append {
            game_id: self.game_id.clone(),
            expected: current,
            events: wire
                .iter()
                .zip(events)
                .map(|(w, e)| {
                    let lifecycle;
                    (lifecycle, over) = event_format::lifecycle(w, over);
                    let event = NewEvent::chained(
                        &chain,
                        &self.game_id,
                        w.sequence,
                        convert::event_type(e),
                        w.encode_to_vec().into(),
                        recorded_at_ms,
                    )
                    .with_lifecycle(lifecycle as i32);
                    chain = event.chain;
                    event
                })
                .collect(),
            request: record.clone(),
            status: convert::status_to_proto(self.state.status()) as i32,
            seat_token_hashes: issued.as_ref().map(|(_, tokens)| tokens.hashes().to_vec()),
            wake,
            fence,
        };
        Ok(Batch {
            append,
            wire,
            record,
            issued,
            recorded_at_ms,
            chain,
            wake,
            fresh,
            was_over,
        })
    }

    /// Appends the batch. Committed, the actor takes in what follows (the
    /// wake, the chain, the request's record, a re-issued token), the
    /// subscribers get the events, a snapshot is taken when due, and the
    /// reply is returned. `None` when the append lost a race to another
    /// node: the actor has caught up, and the command is decided again.
    ///
    /// # Errors
    /// Store failures: whether the append committed is unknown, so the
    /// state is rebuilt from the store and caught up.
    async fn commit(
        &mut self,
        batch: Batch,
        view: View,
    ) -> Result<Option<CommandReply>, RegistryError> {
        let Batch {
            append,
            wire,
            record,
            issued,
            recorded_at_ms,
            chain,
            wake,
            fresh,
            was_over,
        } = batch;
        let current = append.expected;
        let count = append.events.len();
        let last = current + count as u64;
        // The bytes go to the subscribers too, once appended: shared,
        // not copied. None are kept when nobody follows the game: the
        // actor handles one message at a time, so nobody subscribes
        // while the append is under way.
        let payloads: Vec<_> = if self.shared.subscribers() > 0 {
            append.events.iter().map(|e| e.payload.clone()).collect()
        } else {
            Vec::new()
        };
        let snapshot_due = self.snapshot_due(last);
        let appending = std::time::Instant::now();
        let appended = self
            .registry
            .inner
            .store
            .append(append)
            .instrument(tracing::debug_span!("store.append", events = count))
            .await;
        match appended {
            Ok(()) => {
                self.registry.metrics().appended(count, appending.elapsed());
                self.stored_wake = wake;
                self.last_recorded_at_ms = recorded_at_ms;
                self.chain = chain;
                self.observe(fresh, was_over, recorded_at_ms);
                if let Some(record) = record {
                    self.remember(record);
                }
                for (event, payload) in wire.iter().zip(payloads) {
                    self.shared.broadcast(event, payload);
                }
                tracing::debug!(sequence = last, "appended");
                if snapshot_due {
                    self.take_snapshot();
                }
                let seat_token = issued.map(|(token, tokens)| {
                    self.seat_tokens = tokens;
                    token
                });
                Ok(Some(self.reply(wire, seat_token, view)))
            }
            Err(StoreError::Fenced) => {
                tracing::warn!(game_id = %self.game_id, expected = current, "append fenced: this node no longer holds the game's slot");
                self.registry.metrics().append_fenced();
                self.restore(current).await?;
                Err(RegistryError::NotOwner { owner: None })
            }
            Err(StoreError::Conflict) => {
                tracing::info!(game_id = %self.game_id, expected = current, "append conflict; catching up");
                self.restore(current).await?;
                self.catch_up().await?;
                Ok(None)
            }
            Err(error) => {
                tracing::error!(game_id = %self.game_id, error = %error, "append failed; catching up");
                // Whether it committed is unknown: trust only the store.
                self.restore(current).await?;
                self.catch_up().await?;
                Err(error.into())
            }
        }
    }

    /// The reply to a command that appended `events` (none: it changed
    /// nothing): the events and the game after them, as `view` shows it.
    fn reply(
        &self,
        events: Vec<pb::GameEvent>,
        seat_token: Option<String>,
        view: View,
    ) -> CommandReply {
        CommandReply {
            events,
            game: self.game_view(view),
            seat_token,
        }
    }

    /// The reply a recorded request got, rebuilt from the log.
    async fn recorded_reply(
        &self,
        record: &RequestRecord,
        view: View,
    ) -> Result<CommandReply, RegistryError> {
        let store = &self.registry.inner.store;
        let stored = store
            .read(
                &self.game_id,
                record.first_sequence,
                record.last_sequence,
                u32::MAX,
            )
            .await?;
        let mut events = Vec::with_capacity(stored.len());
        let mut seat_token = None;
        for s in &stored {
            let (wire, event) = decode(&self.game_id, s)?;
            if let Event::SeatTokenReissued { seat } = event {
                seat_token = Some(self.seat_tokens.recover(
                    self.registry.inner.keys.as_ref(),
                    &self.game_id,
                    seat,
                    s.sequence,
                ));
            }
            events.push(wire);
        }
        let mut game = self.view(Some(record.last_sequence), view).await?;
        // The original reply, exactly: as the log stood right after it.
        game.last_sequence = record.last_sequence;
        Ok(CommandReply {
            events,
            game,
            seat_token,
        })
    }

    /// Records a request's id with what it appended.
    pub(super) fn remember(&mut self, record: RequestRecord) {
        self.request_bytes += record_bytes(&record);
        if let Some(old) = self.requests.insert(record.request_id.clone(), record) {
            self.request_bytes -= record_bytes(&old);
        }
    }

    /// Puts back the state as it stood at `sequence`, before events applied
    /// ahead of an append that failed: rebuilt from the store (its latest
    /// snapshot at or before `sequence` and the events after it). When that
    /// fails too, the state stays marked stale, and the next message
    /// rebuilds it first (see [`Actor::restored`]).
    ///
    /// # Errors
    /// Store failures and a corrupt log, as [`super::super::Registry::state_after`].
    async fn restore(&mut self, sequence: u64) -> Result<(), RegistryError> {
        self.stale_at = Some(sequence);
        self.restored().await
    }

    /// Rebuilds the state if an earlier failed append left it stale (see
    /// [`Actor::restore`]); nothing otherwise.
    ///
    /// # Errors
    /// Store failures and a corrupt log, as [`super::super::Registry::state_after`]: the
    /// state stays stale.
    pub(super) async fn restored(&mut self) -> Result<(), RegistryError> {
        let Some(sequence) = self.stale_at else {
            return Ok(());
        };
        match self.registry.state_after(&self.game_id, sequence).await {
            Ok((state, _)) => {
                self.state = state;
                self.stale_at = None;
                Ok(())
            }
            Err(error) => {
                tracing::warn!(game_id = %self.game_id, error = %error, "the state before a failed append could not be rebuilt yet; the next message tries again");
                Err(error)
            }
        }
    }

    /// Records the game-health metrics of an append made at `at`: the
    /// round's first move, when nobody had moved before it (`fresh`), and
    /// the game's end, when it was not over before it (`was_over`).
    fn observe(&self, fresh: bool, was_over: bool, at: i64) {
        let metrics = self.registry.metrics();
        let kind = crate::metrics::kind(self.state.config().rules());
        let elapsed = at - self.state.started_at();
        if fresh && self.state.anyone_moved() {
            metrics.first_move(kind, at - self.state.waiting_since());
        }
        if let (false, Some(reason)) = (was_over, self.state.end_reason()) {
            metrics.game_finished(
                kind,
                self.state.outcome(),
                reason,
                self.state.moves().len(),
                elapsed,
            );
        }
    }
}

/// The record of `request` when it was seen before (by its id), to be
/// answered as it was then; `None` for a request not seen before.
///
/// # Errors
/// [`RegistryError::RequestIdReused`] when the id was used for another
/// request.
fn recorded<'a>(
    requests: &'a HashMap<String, RequestRecord>,
    request: &RequestMeta,
) -> Result<Option<&'a RequestRecord>, RegistryError> {
    match requests.get(&request.request_id) {
        Some(record) if record.fingerprint != request.fingerprint => {
            Err(RegistryError::RequestIdReused {
                request_id: request.request_id.clone(),
            })
        }
        found => Ok(found),
    }
}

/// Checks the caller's turn token, the sequence it `expected` the game at
/// (`None`: any), against the game's `current` one.
///
/// # Errors
/// [`RegistryError::SequenceMismatch`].
fn turn_token(expected: Option<u64>, current: u64) -> Result<(), RegistryError> {
    match expected.filter(|e| *e != current) {
        Some(expected) => Err(RegistryError::SequenceMismatch { expected, current }),
        None => Ok(()),
    }
}

/// The events decided on `state`, as the wire and the store carry them,
/// numbered from the one after its sequence. Each event belongs to the
/// round in play when it lands; a RoundStarted to the round it starts.
fn wire_events(
    game_id: &str,
    state: &GameState,
    events: &[Event],
    recorded_at_ms: i64,
) -> Vec<pb::GameEvent> {
    let rules = state.config().rules();
    let first = state.sequence() + 1;
    let mut round = state.round();
    events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            if let Event::RoundStarted { round: next, .. } = e {
                round = *next;
            }
            convert::event_to_proto(game_id, first + i as u64, recorded_at_ms, e, rules, round)
        })
        .collect()
}

/// What is recorded of `request`, which appended the events `first` to
/// `last`: `None` when it has no id (nothing to deduplicate).
fn record_of(request: &RequestMeta, first: u64, last: u64) -> Option<RequestRecord> {
    (!request.request_id.is_empty()).then(|| RequestRecord {
        request_id: request.request_id.clone(),
        fingerprint: request.fingerprint.clone(),
        first_sequence: first,
        last_sequence: last,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{GameConfig, SeatInfo, SeatLimits};
    use crate::rules::{Coord, MnkRules, Move, RuleSet, Seat};

    fn request(id: &str, fingerprint: &[u8]) -> RequestMeta {
        RequestMeta {
            request_id: id.into(),
            fingerprint: fingerprint.to_vec(),
            ..RequestMeta::default()
        }
    }

    fn tic_tac_toe() -> GameState {
        let seat = |id: &str, symbol: &str| SeatInfo {
            player_id: id.into(),
            display_name: String::new(),
            symbol: symbol.into(),
            bot: None,
        };
        let rules = RuleSet::Mnk(MnkRules::new(3, 3, 3, 100).unwrap());
        let seats = vec![seat("ann", "X"), seat("bob", "O")];
        GameState::new(
            GameConfig::new(rules, seats, SeatLimits::default()).unwrap(),
            1_000,
        )
    }

    #[test]
    fn a_request_id_seen_before_is_answered_as_recorded_unless_the_request_changed() {
        let record = record_of(&request("r1", b"move a1"), 3, 4).expect("an id");
        assert_eq!((record.first_sequence, record.last_sequence), (3, 4));
        let requests = HashMap::from([("r1".to_owned(), record.clone())]);
        let again = recorded(&requests, &request("r1", b"move a1")).unwrap();
        assert_eq!(again, Some(&record));
        assert!(matches!(
            recorded(&requests, &request("r1", b"move b2")),
            Err(RegistryError::RequestIdReused { request_id }) if request_id == "r1"
        ));
        assert_eq!(
            recorded(&requests, &request("r2", b"move a1")).unwrap(),
            None
        );
        // A request without an id is never recorded, so never found.
        assert_eq!(record_of(&request("", b""), 3, 4), None);
        assert_eq!(recorded(&requests, &request("", b"")).unwrap(), None);
    }

    #[test]
    fn a_turn_token_must_name_the_games_sequence() {
        assert!(turn_token(None, 7).is_ok());
        assert!(turn_token(Some(7), 7).is_ok());
        assert!(matches!(
            turn_token(Some(6), 7),
            Err(RegistryError::SequenceMismatch {
                expected: 6,
                current: 7
            })
        ));
    }

    #[test]
    fn decided_events_are_numbered_after_the_games_sequence() {
        let state = tic_tac_toe();
        let play = Command::Play {
            seat: Some(Seat(0)),
            mv: Move::Place(Coord { row: 1, col: 1 }),
        };
        let events = game::decide(&state, &play, 2_000).unwrap();
        let wire = wire_events("g", &state, &events, 2_000);
        assert_eq!(wire.len(), events.len());
        for (i, w) in wire.iter().enumerate() {
            assert_eq!(w.game_id, "g");
            assert_eq!(w.sequence, state.sequence() + 1 + i as u64);
            assert_eq!(w.round, state.round());
            assert_eq!(convert::timestamp_ms(w.recorded_at.as_ref()), 2_000);
        }
    }
}
