//! The clients: games created and played through random nodes, every call
//! with a request id and (for moves) the expected sequence, retried with the
//! same request id through another random node until it is answered. Every
//! acknowledged request is kept with its reply, and every failed attempt
//! with its time and its game's cell.

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use plylog::proto as pb;
use plylog::proto::game_service_client::GameServiceClient;
use plylog::registry::ownership::slot_of;
use prost::Message;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use tonic::Code;
use tonic::transport::Channel;
use tonic_types::StatusExt;

use plylog_testkit::{connect_four, create_request, mnk, move_request, per_move, place};

use crate::stack::node_addr;

/// The slot count of the migrations.
const SLOTS: u32 = 1024;

/// How long one request is retried before the test gives up on it.
const RETRY_FOR: Duration = Duration::from_secs(90);

/// The games the clients play.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// 3,3,3, both seats played by the client.
    TicTacToe,
    /// Connect Four, both seats played by the client.
    ConnectFour,
    /// 3,3,3 with 2 s a move and a random move on expiry, nobody playing:
    /// the server's timeouts play it out (and end it, abandoned).
    Timed,
    /// 3,3,3 against a random-engine bot in seat 1.
    Bot,
}

/// A request as sent (with its request id).
#[derive(Debug, Clone)]
pub(crate) enum Sent {
    Create(Box<pb::CreateGameRequest>),
    Move(pb::SubmitMoveRequest),
}

/// An acknowledged request, its reply (encoded) and when it came.
#[derive(Debug, Clone)]
pub(crate) struct Acked {
    pub(crate) sent: Sent,
    pub(crate) reply: Vec<u8>,
    pub(crate) at: Instant,
    pub(crate) game_id: String,
}

/// A failed attempt: when, the game's cell, the code and reason.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub(crate) at: Instant,
    pub(crate) cell: usize,
    pub(crate) code: Code,
    pub(crate) reason: String,
}

/// What the clients share.
pub(crate) struct Load {
    clients: Vec<GameServiceClient<Channel>>,
    pub(crate) acked: Mutex<Vec<Acked>>,
    pub(crate) failures: Mutex<Vec<Failure>>,
    pub(crate) games: Mutex<Vec<(String, Kind)>>,
    /// Requests given up on after [`RETRY_FOR`] (the test fails on any).
    pub(crate) abandoned: Mutex<Vec<String>>,
    /// Replies that were neither an answer nor a retryable refusal.
    pub(crate) unexpected: Mutex<Vec<String>>,
    pub(crate) stop: AtomicBool,
    next_id: AtomicU64,
    run: u64,
}

/// Sends `sent` once through `client`: the reply, encoded.
async fn call(
    client: &mut GameServiceClient<Channel>,
    sent: &Sent,
) -> Result<Vec<u8>, tonic::Status> {
    match sent {
        Sent::Create(request) => client
            .create_game((**request).clone())
            .await
            .map(|r| r.into_inner().encode_to_vec()),
        Sent::Move(request) => client
            .submit_move(request.clone())
            .await
            .map(|r| r.into_inner().encode_to_vec()),
    }
}

/// A game's cell (slot modulo the two cells).
pub(crate) fn cell_of(game_id: &str) -> usize {
    plylog::store::cell_of_slot(slot_of(game_id, SLOTS), 2)
}

/// Whether a refusal is one a client retries with the same request id.
fn retryable(status: &tonic::Status) -> bool {
    matches!(
        status.code(),
        Code::Unavailable | Code::DeadlineExceeded | Code::Unknown | Code::Cancelled
    ) || (status.code() == Code::Internal && status.get_details_error_info().is_none())
        || (status.code() == Code::ResourceExhausted)
}

fn reason(status: &tonic::Status) -> String {
    status
        .get_details_error_info()
        .map(|info| info.reason)
        .unwrap_or_default()
}

impl Load {
    /// Clients of the four nodes; `run` tells this run's request ids apart.
    pub(crate) fn new(run: u64) -> Load {
        let clients = (1..=4)
            .map(|i| {
                GameServiceClient::new(
                    Channel::from_shared(format!("http://{}", node_addr(i)))
                        .unwrap()
                        .connect_timeout(Duration::from_secs(1))
                        .timeout(Duration::from_secs(5))
                        .connect_lazy(),
                )
            })
            .collect();
        Load {
            clients,
            acked: Mutex::new(Vec::new()),
            failures: Mutex::new(Vec::new()),
            games: Mutex::new(Vec::new()),
            abandoned: Mutex::new(Vec::new()),
            unexpected: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            next_id: AtomicU64::new(0),
            run,
        }
    }

    /// A random node's client.
    pub(crate) fn client(&self, rng: &mut StdRng) -> GameServiceClient<Channel> {
        self.clients.choose(rng).unwrap().clone()
    }

    /// Node `i`'s client (1-based).
    pub(crate) fn client_of(&self, i: usize) -> GameServiceClient<Channel> {
        self.clients[i - 1].clone()
    }

    fn request_id(&self, what: &str) -> String {
        format!(
            "{}-{what}-{}",
            self.run,
            self.next_id.fetch_add(1, Ordering::Relaxed)
        )
    }

    fn failed(&self, game_id: &str, status: &tonic::Status) {
        self.failures.lock().unwrap().push(Failure {
            at: Instant::now(),
            cell: cell_of(game_id),
            code: status.code(),
            reason: reason(status),
        });
    }

    /// Sends `sent` through random nodes until it is answered (or refused
    /// for good); keeps the answer. `None` when refused for good.
    pub(crate) async fn send(
        &self,
        rng: &mut StdRng,
        game_id: &str,
        sent: Sent,
    ) -> Option<Result<Vec<u8>, tonic::Status>> {
        let started = Instant::now();
        loop {
            let answer = call(&mut self.client(rng), &sent).await;
            match answer {
                Ok(reply) => {
                    let game_id = match &sent {
                        Sent::Create(_) => pb::CreateGameResponse::decode(reply.as_slice())
                            .ok()
                            .and_then(|r| r.game)
                            .map(|g| g.game_id)
                            .unwrap_or_default(),
                        Sent::Move(request) => request.game_id.clone(),
                    };
                    self.acked.lock().unwrap().push(Acked {
                        sent,
                        reply: reply.clone(),
                        at: Instant::now(),
                        game_id,
                    });
                    return Some(Ok(reply));
                }
                Err(status) if retryable(&status) => {
                    self.failed(game_id, &status);
                    if started.elapsed() > RETRY_FOR {
                        self.abandoned.lock().unwrap().push(format!(
                            "{game_id}: {:?} {} after {:?}",
                            status.code(),
                            reason(&status),
                            started.elapsed()
                        ));
                        return None;
                    }
                    tokio::time::sleep(Duration::from_millis(rng.random_range(50..150))).await;
                }
                Err(status) => return Some(Err(status)),
            }
        }
    }

    /// The game as a random node sees it, retried like [`Load::send`].
    async fn game(&self, rng: &mut StdRng, game_id: &str) -> Option<pb::Game> {
        let started = Instant::now();
        loop {
            match self
                .client(rng)
                .get_game(pb::GetGameRequest {
                    game_id: game_id.to_owned(),
                    ..Default::default()
                })
                .await
            {
                Ok(reply) => return reply.into_inner().game,
                Err(status) if retryable(&status) && started.elapsed() < RETRY_FOR => {
                    self.failed(game_id, &status);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(status) => {
                    self.unexpected
                        .lock()
                        .unwrap()
                        .push(format!("GetGame {game_id}: {status:?}"));
                    return None;
                }
            }
        }
    }

    /// Creates a game of `kind` with id `game_id` (empty: the server picks
    /// one); its id.
    pub(crate) async fn create(
        &self,
        rng: &mut StdRng,
        kind: Kind,
        game_id: &str,
    ) -> Option<String> {
        let rules = match kind {
            Kind::ConnectFour => connect_four(),
            _ => mnk(3, 3, 3),
        };
        let mut request = create_request(game_id, rules);
        request.request_id = self.request_id("create");
        if kind == Kind::Timed {
            request.time_control = Some(pb::TimeControl {
                on_expiry: pb::ExpiryPolicy::RandomMove as i32,
                seed: Some(rng.random()),
                ..per_move(2)
            });
        }
        if kind == Kind::Bot {
            request.seats[1].bot = Some(pb::Bot {
                engine: pb::Engine::Random as i32,
                strength: 0,
                seed: Some(rng.random()),
            });
        }
        // What a failure is counted against: the game's cell, which a
        // server-chosen id takes from the request id.
        let key = if game_id.is_empty() {
            request.request_id.clone()
        } else {
            game_id.to_owned()
        };
        match self
            .send(rng, &key, Sent::Create(Box::new(request)))
            .await?
        {
            Ok(reply) => {
                let game = pb::CreateGameResponse::decode(reply.as_slice())
                    .ok()?
                    .game?;
                self.games
                    .lock()
                    .unwrap()
                    .push((game.game_id.clone(), kind));
                Some(game.game_id)
            }
            Err(status) => {
                self.unexpected
                    .lock()
                    .unwrap()
                    .push(format!("CreateGame {game_id}: {status:?}"));
                None
            }
        }
    }

    /// Plays tic-tac-toe games with ids in `slots`, with no time between
    /// moves, until `stop`.
    pub(crate) async fn hammer(&self, seed: u64, slots: &HashSet<i32>, stop: &AtomicBool) {
        let mut rng = StdRng::seed_from_u64(seed);
        while !stop.load(Ordering::Relaxed) {
            let game_id = loop {
                let id = format!("{}-hammer-{}", self.run, rng.random::<u64>());
                if slots.contains(&(slot_of(&id, SLOTS) as i32)) {
                    break id;
                }
            };
            let Some(game_id) = self.create(&mut rng, Kind::TicTacToe, &game_id).await else {
                return;
            };
            self.play(&mut rng, &game_id, Kind::TicTacToe, false).await;
        }
    }

    /// Plays `game_id` (of `kind`, not timed) to its end with random legal
    /// moves, a little time between moves when `think`; stops early when
    /// told to.
    pub(crate) async fn play(&self, rng: &mut StdRng, game_id: &str, kind: Kind, think: bool) {
        let Some(mut game) = self.game(rng, game_id).await else {
            return;
        };
        while !self.stop.load(Ordering::Relaxed) {
            let Some(position) = game.position.clone() else {
                return;
            };
            if position.status != pb::GameStatus::InProgress as i32 {
                return;
            }
            let Some(seat) = position.seat_to_move else {
                return;
            };
            if kind == Kind::Bot && seat == 1 {
                // The bot's turn: wait for its move.
                tokio::time::sleep(Duration::from_millis(100)).await;
                game = match self.game(rng, game_id).await {
                    Some(game) => game,
                    None => return,
                };
                continue;
            }
            let rows = position
                .board
                .as_ref()
                .map(|b| b.text.clone())
                .unwrap_or_default();
            let moves: Vec<pb::Move> = match kind {
                Kind::ConnectFour => rows
                    .first()
                    .map(|top| {
                        top.chars()
                            .enumerate()
                            .filter(|(_, c)| *c == '.')
                            .map(|(col, _)| plylog_testkit::drop_in(col as i32))
                            .collect()
                    })
                    .unwrap_or_default(),
                _ => rows
                    .iter()
                    .enumerate()
                    .flat_map(|(row, line)| {
                        line.chars()
                            .enumerate()
                            .filter(|(_, c)| *c == '.')
                            .map(move |(col, _)| place(row as i32, col as i32))
                    })
                    .collect(),
            };
            let Some(mv) = moves.choose(rng).cloned() else {
                return;
            };
            let request = pb::SubmitMoveRequest {
                request_id: self.request_id("move"),
                expected_sequence: Some(position.sequence),
                ..move_request(game_id, seat, mv)
            };
            match self.send(rng, game_id, Sent::Move(request)).await {
                None => return,
                Some(Ok(reply)) => {
                    game = match pb::SubmitMoveResponse::decode(reply.as_slice())
                        .ok()
                        .and_then(|r| r.game)
                    {
                        Some(game) => game,
                        None => return,
                    };
                }
                // The game moved on meanwhile (the bot played): look again.
                Some(Err(status)) if status.code() == Code::Aborted => {
                    game = match self.game(rng, game_id).await {
                        Some(game) => game,
                        None => return,
                    };
                }
                Some(Err(status)) => {
                    self.unexpected
                        .lock()
                        .unwrap()
                        .push(format!("SubmitMove {game_id}: {status:?}"));
                    return;
                }
            }
            if think {
                tokio::time::sleep(Duration::from_millis(rng.random_range(50..300))).await;
            }
        }
    }

    /// A client: plays games of the kinds in `mix`, one after the other,
    /// until told to stop.
    pub(crate) async fn player(&self, seed: u64, mix: &[Kind]) {
        let mut rng = StdRng::seed_from_u64(seed);
        while !self.stop.load(Ordering::Relaxed) {
            let kind = *mix.choose(&mut rng).unwrap();
            if let Some(game_id) = self.create(&mut rng, kind, "").await {
                self.play(&mut rng, &game_id, kind, true).await;
            }
        }
    }

    /// Creates timed games, `per_second` of them, until told to stop (or
    /// `limit` in all).
    pub(crate) async fn timed_games(&self, seed: u64, per_second: u32, limit: usize) {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut tick = tokio::time::interval(Duration::from_secs(1) / per_second);
        let mut made = 0;
        while !self.stop.load(Ordering::Relaxed) && made < limit {
            tick.tick().await;
            if self.create(&mut rng, Kind::Timed, "").await.is_some() {
                made += 1;
            }
        }
    }

    /// Every acknowledged request sent again through a random node of
    /// `nodes` (1-based; each attempt its own draw): the requests whose
    /// reply differs from the first (with both replies' sizes), and how
    /// many were sent again.
    pub(crate) async fn replay_acknowledged(
        &self,
        seed: u64,
        nodes: &[usize],
    ) -> (Vec<String>, usize) {
        let acked = self.acked.lock().unwrap().clone();
        let mut rng = StdRng::seed_from_u64(seed);
        let mut differing = Vec::new();
        let chunks: Vec<Vec<Acked>> = acked.chunks(64).map(<[Acked]>::to_vec).collect();
        for chunk in chunks {
            let mut calls = Vec::new();
            for item in chunk {
                let mut rng = StdRng::seed_from_u64(rng.random());
                calls.push(async move {
                    let started = Instant::now();
                    loop {
                        let mut client = self.client_of(*nodes.choose(&mut rng).unwrap());
                        match call(&mut client, &item.sent).await {
                            Ok(reply) if reply == item.reply => return None,
                            Ok(reply) => {
                                return Some(format!(
                                    "{}: reply of {} bytes, first {} bytes",
                                    item.game_id,
                                    reply.len(),
                                    item.reply.len()
                                ));
                            }
                            Err(status) if retryable(&status) && started.elapsed() < RETRY_FOR => {
                                tokio::time::sleep(Duration::from_millis(100)).await;
                            }
                            Err(status) => return Some(format!("{}: {status:?}", item.game_id)),
                        }
                    }
                });
            }
            for result in futures::future::join_all(calls).await.into_iter().flatten() {
                differing.push(result);
            }
        }
        (differing, acked.len())
    }
}
