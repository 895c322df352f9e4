//! The read side: the game as it stands or stood, legal-move pages, replay
//! pages, past states rebuilt from the store, and the list of games.

use prost::Message;

use super::actor::{self, Msg};
use super::{LegalMovesPage, PAGE_BYTES, Registry, RegistryError, ReplayPositions};
use super::{heavy, log, replay, snapshot};
use crate::game::GameState;
use crate::proto::convert::View;
use crate::proto::{self as pb, convert};
use crate::store::{ListFilter, ListOrder, LoadFrom};

impl Registry {
    /// The game at its latest position, or right after event `at`, as
    /// `view` shows it. A position before the last is rebuilt from the
    /// store, a heavy read (see [`HeavyReadSettings`](super::HeavyReadSettings)).
    ///
    /// # Errors
    /// [`RegistryError::NotFound`], [`RegistryError::SequenceOutOfRange`],
    /// [`RegistryError::HeavyReadsBusy`], store failures.
    pub async fn game(
        &self,
        game_id: &str,
        at: Option<u64>,
        view: View,
    ) -> Result<pb::Game, RegistryError> {
        match self.before_the_last(game_id, at).await? {
            Some((at, last)) => {
                let (state, created_at_ms) = self.state_after(game_id, at).await?;
                Ok(convert::game_in_view(
                    game_id,
                    &state,
                    created_at_ms,
                    last,
                    view,
                ))
            }
            None => {
                self.ask(game_id, |reply| Msg::View { at, view, reply })
                    .await
            }
        }
    }

    /// A game's state: the latest, or right after event `at`.
    ///
    /// # Errors
    /// As [`Registry::game`].
    pub async fn state(&self, game_id: &str, at: Option<u64>) -> Result<GameState, RegistryError> {
        match self.before_the_last(game_id, at).await? {
            Some((at, _)) => Ok(self.state_after(game_id, at).await?.0),
            None => self.ask(game_id, |reply| Msg::State { at, reply }).await,
        }
    }

    /// `Some((at, last))` when `at` asks for a position before the game's
    /// last event `last`: a heavy read, rebuilt outside the game's actor
    /// (which would otherwise wait for it, moves and all). `None` for the
    /// latest position or one past the log, which the actor answers.
    async fn before_the_last(
        &self,
        game_id: &str,
        at: Option<u64>,
    ) -> Result<Option<(u64, u64)>, RegistryError> {
        let Some(at) = at.filter(|at| *at > 0) else {
            return Ok(None);
        };
        let last = self
            .ask(game_id, |reply| Msg::View {
                at: None,
                view: View::Basic,
                reply,
            })
            .await?
            .last_sequence;
        Ok((at < last).then_some((at, last)))
    }

    /// A page of the legal moves of the seat to move, `offset` moves into
    /// the list of the position at sequence `at` (the current one if `None`).
    ///
    /// # Errors
    /// [`RegistryError::NotFound`]; [`RegistryError::SequenceMismatch`] when
    /// the game has moved on from `at`.
    pub async fn legal_moves(
        &self,
        game_id: &str,
        at: Option<u64>,
        offset: usize,
        limit: usize,
    ) -> Result<LegalMovesPage, RegistryError> {
        self.ask(game_id, |reply| Msg::LegalMoves {
            at,
            offset,
            limit,
            reply,
        })
        .await
    }

    /// A page of the game's events from sequence `from`, each with the
    /// position after it where `positions` asks for one; and the sequence
    /// the next page starts at, if any. A page holds at most `limit` steps
    /// and ends early once its positions hold [`REPLAY_PIECE_BUDGET`](super::REPLAY_PIECE_BUDGET) pieces
    /// or its steps [`PAGE_BYTES`] encoded bytes (always at least one step).
    /// The game itself comes from its actor; the page reads only its own
    /// events from the store (in chunks of `limit`, more when `round`
    /// skips some), and rebuilds a position only when the page asks for
    /// one, from the latest snapshot before `from`. O(page), not O(log).
    /// A page with positions is a heavy read (see [`HeavyReadSettings`](super::HeavyReadSettings)).
    ///
    /// # Errors
    /// [`RegistryError::NotFound`], [`RegistryError::HeavyReadsBusy`], a
    /// corrupt log, store failures.
    pub async fn replay(
        &self,
        game_id: &str,
        from: u64,
        limit: usize,
        round: Option<u32>,
        positions: &ReplayPositions,
        view: View,
    ) -> Result<(pb::GetReplayResponse, Option<u64>), RegistryError> {
        let game = self.game(game_id, None, view).await?;
        let last = game.last_sequence;
        // A page with positions rebuilds them: a heavy read, filled on the
        // heavy-read pool (the store is read here). It starts from the
        // state after the event before `from`.
        let admission = if positions.any() {
            Some(self.admit_heavy_read().await?)
        } else {
            None
        };
        let state = match (&admission, from) {
            (Some(admission), 2..) if from <= last => {
                Some(self.rebuild_after(admission, game_id, from - 1).await?.0)
            }
            _ => None,
        };
        let mut cursor = from.max(1);
        // Every event sent is checked against the integrity chain, from
        // the stored chain value of the event before it.
        let chain = match cursor {
            // Nothing is sent from the start, or past the end.
            1 => crate::store::chain::GENESIS,
            _ if cursor > last => crate::store::chain::GENESIS,
            _ => {
                let before = self
                    .inner
                    .store
                    .read(game_id, cursor - 1, cursor - 1, 1)
                    .await?;
                before
                    .first()
                    .and_then(crate::store::StoredEvent::chain_value)
                    .ok_or_else(|| {
                        RegistryError::corrupt_log(
                            game_id,
                            cursor - 1,
                            "missing, or has no whole chain value".into(),
                        )
                    })?
            }
        };
        let mut page =
            replay::ReplayPage::new(game_id, game, limit, round, positions, state, chain);
        let chunk = u32::try_from(limit.clamp(1, 10_000)).unwrap_or(10_000);
        while cursor <= last && !page.is_full() {
            let stored = self.inner.store.read(game_id, cursor, last, chunk).await?;
            let Some(end) = stored.last().map(|e| e.sequence) else {
                break;
            };
            page = match &admission {
                Some(admission) => {
                    admission
                        .run(move || {
                            let mut page = page;
                            page.take(&stored).map(|()| page)
                        })
                        .await??
                }
                None => {
                    page.take(&stored)?;
                    page
                }
            };
            cursor = end + 1;
        }
        Ok(page.finish())
    }

    /// The game's state right after event `at`, with its creation time
    /// (Unix epoch milliseconds): resumed from its latest snapshot when that
    /// is at or before `at` and usable, otherwise replayed from sequence 1.
    /// A heavy read: admitted to the heavy-read pool and rebuilt on its
    /// threads.
    ///
    /// # Errors
    /// [`RegistryError::NotFound`] (no event `at`),
    /// [`RegistryError::HeavyReadsBusy`], a corrupt log, store failures.
    pub(crate) async fn state_after(
        &self,
        game_id: &str,
        at: u64,
    ) -> Result<(GameState, i64), RegistryError> {
        let admission = self.admit_heavy_read().await?;
        self.rebuild_after(&admission, game_id, at).await
    }

    /// Admits a heavy read and waits for its turn to run (see
    /// [`HeavyReadSettings`](super::HeavyReadSettings)).
    ///
    /// # Errors
    /// [`RegistryError::HeavyReadsBusy`], counted as shed.
    async fn admit_heavy_read(&self) -> Result<heavy::Admission, RegistryError> {
        self.inner.heavy.admit().await.inspect_err(|_| {
            self.inner.metrics.shed("max_heavy_reads");
        })
    }

    /// [`Registry::state_after`] for a heavy read already admitted and
    /// running: the store is read here, the state rebuilt on a blocking
    /// thread.
    async fn rebuild_after(
        &self,
        admission: &heavy::Admission,
        game_id: &str,
        at: u64,
    ) -> Result<(GameState, i64), RegistryError> {
        let store = &self.inner.store;
        let mut resumed = None;
        if let Some(snapshot) = store.snapshot(game_id).await?.filter(|s| s.sequence <= at) {
            let events = store.read(game_id, snapshot.sequence, at, u32::MAX).await?;
            let id = game_id.to_owned();
            resumed = admission
                .run(move || snapshot::usable(&id, &snapshot, &events))
                .await?;
        }
        let (state, created_at_ms) = match resumed {
            Some(resumed) => resumed,
            None => {
                let stored = store.read(game_id, 1, at, u32::MAX).await?;
                if stored.is_empty() {
                    return Err(RegistryError::NotFound {
                        game_id: game_id.to_owned(),
                    });
                }
                let id = game_id.to_owned();
                admission
                    .run(move || log::rebuild(&id, &stored))
                    .await?
                    .map_err(|e| actor::corrupt(game_id, &e))?
            }
        };
        // A log missing its last events rebuilds short: never a wrong answer.
        if state.sequence() != at {
            return Err(RegistryError::corrupt_log(
                game_id,
                state.sequence() + 1,
                format!("missing: the log ends before {at}"),
            ));
        }
        Ok((state, created_at_ms))
    }

    /// The game's whole stored log, from where `from` says.
    ///
    /// # Errors
    /// [`RegistryError::NotFound`], store failures.
    pub(super) async fn load_log(
        &self,
        game_id: &str,
        from: LoadFrom,
    ) -> Result<crate::store::GameLog, RegistryError> {
        self.inner
            .store
            .load(game_id, from)
            .await?
            .ok_or_else(|| RegistryError::NotFound {
                game_id: game_id.to_owned(),
            })
    }

    /// Up to `limit` games that meet `filter`, in `order`, in each cell
    /// after the game at its cursor in `after` (one per cell,
    /// [`EventStore::cell_count`]; 0: from the first), and the cursors to
    /// page on from (`None`: the last page).
    ///
    /// # Errors
    /// A corrupt creation event, store failures.
    ///
    /// [`EventStore::cell_count`]: crate::store::EventStore::cell_count
    pub async fn list(
        &self,
        after: &[i64],
        order: ListOrder,
        filter: &ListFilter,
        limit: u32,
    ) -> Result<(Vec<pb::GameSummary>, Option<Vec<i64>>), RegistryError> {
        let records = self.inner.store.list(after, order, filter, limit).await?;
        let full = records.len() == limit as usize;
        let mut cursors = after.to_vec();
        cursors.resize(self.inner.store.cell_count().max(after.len()), 0);
        let mut bytes = 0;
        let mut cut = false;
        let mut games = Vec::with_capacity(records.len());
        for record in records {
            let (cell, cursor) = (record.cell, record.cursor);
            let summary = summary_of(record)?;
            // A page stays under PAGE_BYTES however big each game's rules.
            let size = summary.encoded_len();
            if bytes + size > PAGE_BYTES && !games.is_empty() {
                cut = true;
                break;
            }
            bytes += size;
            cursors[cell] = cursor;
            games.push(summary);
        }
        Ok((games, (full || cut).then_some(cursors)))
    }
}

/// The ListGames line of a stored game.
fn summary_of(record: crate::store::GameRecord) -> Result<pb::GameSummary, RegistryError> {
    let wire = pb::GameEvent::decode(record.created_payload.as_slice())
        .map_err(|e| RegistryError::corrupt_log(&record.game_id, 1, e.to_string()))?;
    let Some(pb::game_event::Kind::GameCreated(created)) = wire.kind else {
        return Err(RegistryError::corrupt_log(
            &record.game_id,
            1,
            "not GameCreated".into(),
        ));
    };
    Ok(pb::GameSummary {
        game_id: record.game_id,
        rules: created.rules,
        seats: created.seats,
        status: record.status,
        last_sequence: record.last_sequence,
        created_at: Some(convert::timestamp(record.created_at_ms)),
        updated_at: record.last_event_at_ms.map(convert::timestamp),
        labels: created.labels,
    })
}
