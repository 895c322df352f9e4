//! Creating a game, and finding the game an earlier identical CreateGame
//! created (idempotent by request id).

use std::collections::HashMap;

use prost::Message;

use super::actor::{Actor, Loaded};
use super::residency::make_room;
use super::wakes;
use super::{Created, Registry, RegistryError, RequestMeta, Route};
use crate::game::{GameConfig, GameState};
use crate::proto::convert::View;
use crate::proto::{self as pb, convert};
use crate::store::{NewEvent, NewGame, TokenHash};

/// How long before the creation the players may have been matched
/// (CreateGame's `matched_at`): 24 hours, in milliseconds.
pub(super) const MATCHED_AT_MAX_AGE_MS: i64 = 24 * 60 * 60 * 1000;

/// How far after the server's clock a `matched_at` is read as the creation
/// (another service's clock running ahead): 60 seconds, in milliseconds.
pub(super) const MATCHED_AT_MAX_AHEAD_MS: i64 = 60 * 1000;

/// `config` with its `matched_at` checked against the creation time
/// `created_ms`: one up to [`MATCHED_AT_MAX_AHEAD_MS`] after it is read as
/// `created_ms`.
///
/// # Errors
/// [`RegistryError::TimeOutOfRange`] for one more than
/// [`MATCHED_AT_MAX_AGE_MS`] before `created_ms` or more than
/// [`MATCHED_AT_MAX_AHEAD_MS`] after it.
fn bound_matched_at(config: GameConfig, created_ms: i64) -> Result<GameConfig, RegistryError> {
    let Some(matched_at) = config.matched_at() else {
        return Ok(config);
    };
    if matched_at < created_ms - MATCHED_AT_MAX_AGE_MS {
        return Err(RegistryError::TimeOutOfRange {
            field: "matched_at",
            why: format!(
                "matched_at is {} s before the server's clock: at most 24 hours",
                (created_ms - matched_at) / 1000
            ),
        });
    }
    if matched_at > created_ms + MATCHED_AT_MAX_AHEAD_MS {
        return Err(RegistryError::TimeOutOfRange {
            field: "matched_at",
            why: format!(
                "matched_at is {} s after the server's clock: it must be in the past",
                (matched_at - created_ms) / 1000
            ),
        });
    }
    Ok(if matched_at > created_ms {
        config.with_matched_at(created_ms)
    } else {
        config
    })
}

/// How far after the server's clock a game's clocks may be set to start
/// (CreateGame's `clocks_start_at`): one hour, in milliseconds.
pub(super) const CLOCKS_START_MAX_AHEAD_MS: i64 = 60 * 60 * 1000;

/// `config` with its `clocks_start_at` checked against the creation time
/// `created_ms`: one at or before it is dropped (the clocks start at the
/// creation, as without one).
///
/// # Errors
/// [`RegistryError::TimeOutOfRange`] for one more than
/// [`CLOCKS_START_MAX_AHEAD_MS`] after `created_ms`.
fn bound_clocks_start(config: GameConfig, created_ms: i64) -> Result<GameConfig, RegistryError> {
    match config.clocks_start_at() {
        Some(at) if at > created_ms + CLOCKS_START_MAX_AHEAD_MS => {
            Err(RegistryError::TimeOutOfRange {
                field: "clocks_start_at",
                why: format!(
                    "clocks_start_at is {} s after the server's clock: at most an hour",
                    (at - created_ms) / 1000
                ),
            })
        }
        Some(at) if at <= created_ms => Ok(config.with_clocks_start_at(None)),
        _ => Ok(config),
    }
}

/// A new game ready to be stored, and what the registry keeps of it once it
/// is (see [`Registry::keep_created`]).
struct Prepared {
    new_game: NewGame,
    state: GameState,
    recorded_at_ms: crate::game::Millis,
    tokens: Vec<String>,
    seat_token_hashes: Vec<TokenHash>,
    wake: crate::store::Wake,
    chain: crate::store::chain::Chain,
}

/// One game of a [`Registry::create_many`] call: the id asked for, its
/// configuration, and its request (its id and fingerprint).
#[derive(Debug, Clone)]
pub struct NewGameRequest {
    /// The game id the request names; `None`: the server picks one.
    pub game_id: Option<String>,
    /// The game's configuration, checked.
    pub config: GameConfig,
    /// The request's id and fingerprint (idempotency).
    pub request: RequestMeta,
}

impl Registry {
    /// Creates a game, with a token for each seat when `seat_tokens` (see
    /// [`crate::tokens`]), or returns the game an earlier identical request
    /// (same request id) created, with the same tokens.
    ///
    /// # Errors
    /// [`RegistryError::GameExists`], [`RegistryError::RequestIdReused`],
    /// [`RegistryError::NoTokenSecret`] when tokens are asked for and the
    /// server has no secret, [`RegistryError::TimeOutOfRange`],
    /// [`RegistryError::PresenceUnavailable`], store failures.
    pub async fn create(
        &self,
        game_id: Option<String>,
        config: GameConfig,
        seat_tokens: bool,
        request: RequestMeta,
    ) -> Result<Created, RegistryError> {
        let given = game_id.clone();
        if let Some(created) = self.find_creation(&request, given.as_deref()).await? {
            return Ok(created);
        }
        let recorded_at_ms = self.settings().clock.now_ms();
        let prepared = self.prepare_game(game_id, config, seat_tokens, &request, recorded_at_ms)?;
        let game_id = prepared.new_game.game_id.clone();
        match self.inner.store.create(prepared.new_game.clone()).await {
            Ok(()) => Ok(self.keep_created(prepared)),
            Err(crate::store::StoreError::GameExists) => {
                match self.find_creation(&request, given.as_deref()).await? {
                    Some(created) => Ok(created),
                    None => Err(RegistryError::GameExists { game_id }),
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Creates `games` (CreateGames) as [`Registry::create`] creates each,
    /// but written in one transaction (one per cell): the replies in the
    /// order of `games`. A game an earlier request with its request id
    /// created is returned as it was created; the others are created
    /// together or not at all. A game whose request id another call uses at
    /// the same moment is looked up again and the rest written without it.
    ///
    /// # Errors
    /// As [`Registry::create`], for the first game that fails: nothing new
    /// was created (on several cells, the cells before its cell have
    /// written theirs; a retry with the same request ids returns them).
    pub async fn create_many(
        &self,
        games: Vec<NewGameRequest>,
        seat_tokens: bool,
    ) -> Result<Vec<Created>, RegistryError> {
        let mut replies: Vec<Option<Created>> = Vec::with_capacity(games.len());
        for game in &games {
            replies.push(
                self.find_creation(&game.request, game.game_id.as_deref())
                    .await?,
            );
        }
        let recorded_at_ms = self.settings().clock.now_ms();
        let mut prepared = Vec::new();
        for (at, game) in games.iter().enumerate() {
            if replies[at].is_none() {
                let ready = self.prepare_game(
                    game.game_id.clone(),
                    game.config.clone(),
                    seat_tokens,
                    &game.request,
                    recorded_at_ms,
                )?;
                prepared.push((at, ready));
            }
        }
        // Each round either writes every game left or takes at least one
        // out (found as another call of its request created it), or fails.
        while !prepared.is_empty() {
            let new_games = prepared.iter().map(|(_, p)| p.new_game.clone()).collect();
            match self.inner.store.create_all(new_games).await {
                Ok(()) => {
                    for (at, ready) in prepared.drain(..) {
                        replies[at] = Some(self.keep_created(ready));
                    }
                }
                Err(crate::store::StoreError::GameExistsAt { at: taken, written }) => {
                    // Games other cells wrote before the refusal are this
                    // call's: kept as created.
                    let mut refused = None;
                    let mut left = Vec::with_capacity(prepared.len());
                    for (index, (at, ready)) in prepared.drain(..).enumerate() {
                        if index == taken {
                            refused = Some((at, ready));
                        } else if written.contains(&index) {
                            replies[at] = Some(self.keep_created(ready));
                        } else {
                            left.push((at, ready));
                        }
                    }
                    prepared = left;
                    let Some((at, ready)) = refused else {
                        return Err(RegistryError::Internal(format!(
                            "the store refused game {taken} of {} it was given",
                            prepared.len()
                        )));
                    };
                    let game = &games[at];
                    let Some(created) = self
                        .find_creation(&game.request, game.game_id.as_deref())
                        .await?
                    else {
                        return Err(RegistryError::GameExists {
                            game_id: ready.new_game.game_id,
                        });
                    };
                    replies[at] = Some(created);
                    // Another call of the same requests, most likely: the
                    // games it created come back as it created them.
                    let mut left = Vec::with_capacity(prepared.len());
                    for (at, ready) in prepared.drain(..) {
                        let game = &games[at];
                        match self
                            .find_creation(&game.request, game.game_id.as_deref())
                            .await?
                        {
                            Some(created) => replies[at] = Some(created),
                            None => left.push((at, ready)),
                        }
                    }
                    prepared = left;
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(replies.into_iter().flatten().collect())
    }

    /// A new game (`game_id`, or one of the server's choosing) of `config`
    /// as created at `recorded_at_ms`, with its seat tokens when
    /// `seat_tokens`, ready to be stored.
    ///
    /// # Errors
    /// [`RegistryError::PresenceUnavailable`] for an absence policy without
    /// seat tokens, [`RegistryError::TimeOutOfRange`],
    /// [`RegistryError::NoTokenSecret`].
    fn prepare_game(
        &self,
        game_id: Option<String>,
        config: GameConfig,
        seat_tokens: bool,
        request: &RequestMeta,
        recorded_at_ms: crate::game::Millis,
    ) -> Result<Prepared, RegistryError> {
        if config.absence().is_some() && !seat_tokens {
            return Err(RegistryError::PresenceUnavailable {
                why: "seat tokens: a seat is present while it streams with its token",
            });
        }
        let config = bound_matched_at(config, recorded_at_ms)?;
        let config = bound_clocks_start(config, recorded_at_ms)?;
        let game_id = game_id.unwrap_or_else(|| self.new_game_id(recorded_at_ms, request));
        let tokens: Vec<String> = match (&self.inner.keys, seat_tokens) {
            (_, false) => Vec::new(),
            (None, true) => return Err(RegistryError::NoTokenSecret),
            (Some(keys), true) => (0..config.seats().len() as u32)
                .map(|seat| keys.issue(&game_id, seat, 1))
                .collect(),
        };
        let seat_token_hashes: Vec<TokenHash> =
            tokens.iter().map(|t| crate::tokens::hash(t)).collect();
        let state = GameState::new(config.clone(), recorded_at_ms);
        // Nobody follows a new game yet: a seat to move under an absence
        // policy is away from its first turn's start.
        let absent_since = state.config().absence().map(|_| recorded_at_ms);
        let grace_ends = state
            .config()
            .absence()
            .map(|policy| recorded_at_ms.saturating_add(policy.grace_ms as i64));
        let wake = wakes::of(&state, grace_ends, absent_since, None);
        let event = crate::game::Event::GameCreated(config.clone());
        let payload =
            convert::event_to_proto(&game_id, 1, recorded_at_ms, &event, config.rules(), 0)
                .encode_to_vec()
                .into();
        let created = NewEvent::chained(
            &crate::store::chain::GENESIS,
            &game_id,
            1,
            convert::event_type(&event),
            payload,
            recorded_at_ms,
        )
        .with_lifecycle(pb::Lifecycle::Created as i32);
        let chain = created.chain;
        let new_game = NewGame {
            game_id,
            created,
            request: (!request.request_id.is_empty())
                .then(|| (request.request_id.clone(), request.fingerprint.clone())),
            status: pb::GameStatus::InProgress as i32,
            seat_token_hashes: seat_token_hashes.clone(),
            wake,
            tags: crate::proto::event_format::game_tags(&config),
        };
        Ok(Prepared {
            new_game,
            state,
            recorded_at_ms,
            tokens,
            seat_token_hashes,
            wake,
            chain,
        })
    }

    /// A stored new game counted, kept warm when this node runs it and has
    /// room (its first move then needs no replay), or else left to the
    /// timer queue when it is due: the reply to its creation.
    fn keep_created(&self, prepared: Prepared) -> Created {
        let Prepared {
            state,
            recorded_at_ms,
            wake,
            ..
        } = prepared;
        let game_id = prepared.new_game.game_id;
        self.inner
            .metrics
            .game_created(crate::metrics::kind(state.config().rules()));
        let game = convert::game_to_proto(&game_id, &state, recorded_at_ms, 1);
        let mut actors = self.inner.actors.lock().expect("registry lock");
        // Only the node that runs the game keeps it.
        let room = !actors.contains_key(&game_id)
            && matches!(self.route(&game_id), Route::Local(_))
            && make_room(&mut actors, &self.inner.budget, self.limits(), 1, None);
        if let std::collections::hash_map::Entry::Vacant(slot) = actors.entry(game_id)
            && room
        {
            let loaded = Loaded {
                state,
                created_at_ms: recorded_at_ms,
                requests: HashMap::new(),
                seat_token_hashes: prepared.seat_token_hashes,
                snapshot_at: 0,
                wake,
                last_recorded_at_ms: recorded_at_ms,
                chain: prepared.chain,
                unchecked_prefix: None,
            };
            let handle = Actor::spawn(self.clone(), slot.key().clone(), Some(loaded));
            slot.insert(handle);
        } else if wake.at_ms.is_some() {
            // Not in memory here: the timer queue picks it up.
            self.inner.wakes.notify_one();
        }
        Created {
            game,
            seat_tokens: prepared.tokens,
            created: true,
        }
    }

    /// A new game id of the server's choosing: time-ordered (UUID v7); with
    /// several cells, always in the cell the request id picks (see
    /// [`crate::store::cell_of_request`]: that is where a retry looks for
    /// it); and in a slot this node holds when it holds any there (each
    /// draw of the id's random part lands in one of its slots with the
    /// share of the slots it holds; after 256 draws, any id of the cell:
    /// the game's owner loads it when it is called).
    fn new_game_id(&self, now_ms: crate::game::Millis, request: &RequestMeta) -> String {
        let Some(ownership) = &self.inner.ownership else {
            return time_ordered_id(now_ms);
        };
        let cells = self.inner.store.cell_count();
        let cell = (cells > 1 && !request.request_id.is_empty())
            .then(|| crate::store::cell_of_request(&request.request_id, cells));
        let in_cell = |id: &str| {
            cell.is_none_or(|cell| {
                crate::store::cell_of_slot(super::ownership::slot_of(id, ownership.slots()), cells)
                    == cell
            })
        };
        let mut fallback = None;
        for _ in 0..256 {
            let id = time_ordered_id(now_ms);
            if !in_cell(&id) {
                continue;
            }
            if matches!(self.route(&id), Route::Local(_)) {
                return id;
            }
            fallback.get_or_insert(id);
        }
        // The odds of no id of the cell in 256 draws are (1 - 1/cells)^256.
        fallback.unwrap_or_else(|| {
            loop {
                let id = time_ordered_id(now_ms);
                if in_cell(&id) {
                    break id;
                }
            }
        })
    }

    /// The game a CreateGame request id already created, as it was created,
    /// with its seat tokens derived again; `game_id` is the id the request
    /// named, if any.
    async fn find_creation(
        &self,
        request: &RequestMeta,
        game_id: Option<&str>,
    ) -> Result<Option<Created>, RegistryError> {
        if request.request_id.is_empty() {
            return Ok(None);
        }
        let Some(found) = self
            .inner
            .store
            .find_creation(&request.request_id, game_id)
            .await?
        else {
            return Ok(None);
        };
        if found.fingerprint != request.fingerprint {
            return Err(RegistryError::RequestIdReused {
                request_id: request.request_id.clone(),
            });
        }
        // The original reply, exactly: the game as its creation left it,
        // rebuilt from its first event read from the store (on any node,
        // whoever runs the game now).
        let first = self.inner.store.read(&found.game_id, 1, 1, 1).await?;
        if first.is_empty() {
            return Err(RegistryError::NotFound {
                game_id: found.game_id,
            });
        }
        let (state, created_at_ms) = super::log::rebuild(&found.game_id, &first)
            .map_err(|e| super::actor::corrupt(&found.game_id, &e))?;
        let game = convert::game_in_view(&found.game_id, &state, created_at_ms, 1, View::Full);
        let seat_tokens = self.recover_tokens(&found.game_id, 1, &found.seat_token_hashes);
        Ok(Some(Created {
            game,
            seat_tokens,
            created: false,
        }))
    }

    /// The tokens issued at `generation` whose hashes are `hashes` (one per
    /// seat, in seat order), derived again; an empty string for a seat none
    /// of the server's secrets gives.
    fn recover_tokens(&self, game_id: &str, generation: u64, hashes: &[TokenHash]) -> Vec<String> {
        let Some(keys) = &self.inner.keys else {
            return Vec::new();
        };
        hashes
            .iter()
            .zip(0..)
            .map(|(hash, seat)| {
                keys.recover(game_id, seat, generation, hash)
                    .unwrap_or_default()
            })
            .collect()
    }
}

/// A new game's id when the caller names none: a UUID version 7 (RFC 9562,
/// section 5.7), whose first 48 bits are `now_ms` (Unix epoch milliseconds,
/// the server's clock) and the other 74 random, in its hyphenated text
/// form.
///
/// Ids made later sort later, so the games being played now sit together at
/// the end of every index on `game_id` (the events' and requests' primary
/// keys, the games' unique id): a group commit of 64 moves in 64 games then
/// writes a few pages of each index, where random (version 4) ids wrote
/// about one page per move (issue 15's profile of the SQLite writer).
fn time_ordered_id(now_ms: crate::game::Millis) -> String {
    let ms = u64::try_from(now_ms).unwrap_or(0);
    let at =
        uuid::Timestamp::from_unix(uuid::NoContext, ms / 1_000, (ms % 1_000) as u32 * 1_000_000);
    uuid::Uuid::new_v7(at).to_string()
}

#[cfg(test)]
mod tests {
    use super::time_ordered_id;

    #[test]
    fn server_picked_game_ids_are_uuid_v7_in_the_order_they_were_made() {
        let seed = 15;
        println!("seed {seed} (ids draw from the OS, the clock readings from it)");
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed);
        let mut at: i64 = 1_764_547_200_000;
        let mut last = String::new();
        for _ in 0..1_000 {
            at += rand::Rng::random_range(&mut rng, 1..5_000);
            let id = time_ordered_id(at);
            let uuid = uuid::Uuid::parse_str(&id).expect("a UUID");
            assert_eq!(uuid.get_version_num(), 7, "{id}");
            assert_eq!(id, uuid.hyphenated().to_string());
            let (secs, nanos) = uuid.get_timestamp().expect("v7 has one").to_unix();
            assert_eq!(
                secs as i64 * 1_000 + i64::from(nanos / 1_000_000),
                at,
                "{id}"
            );
            assert!(id > last, "{id} sorts after {last}");
            last = id;
        }
    }
}
