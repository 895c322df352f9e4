//! The dashboard in a real browser: Debian's headless Chromium, driven over
//! WebDriver (ChromeDriver, with fantoccini), against the real server on a
//! loopback port, while a real tonic client creates games and plays moves.
//! The page talks grpc-web to the port that served it.
//!
//! Needs `/usr/bin/chromium` and `/usr/bin/chromedriver` (Debian's
//! `chromium` and `chromium-driver`; `.ci/run` installs them). Without them
//! the tests are listed as ignored with the reason printed; with
//! `PLYLOG_REQUIRE_BROWSER=1` (as in `.ci/run`) their absence fails them.
//! Screenshots of every game kind are written to
//! `target/dashboard-screenshots/` (or `PLYLOG_SCREENSHOT_DIR`).

use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client as WebDriver, ClientBuilder, Locator};
use libtest_mimic::Trial;
use plylog::api::auth::AccessSettings;
use plylog::app::Settings;
use plylog::proto::game_service_client::GameServiceClient;
use plylog::proto::{self as pb};
use serde_json::{Value, json};

use plylog_testkit::optional;
use plylog_testkit::seed;
use plylog_testkit::stored;
use plylog_testkit::{
    App, Client, channel, create_request, drop_in, place, plain_move_request, poll, rules, seat,
    spawn_app, wait_for, x_wins_top_row,
};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// How long the page may take to show a move after the server acknowledged
/// it (the bound: the event is pushed on the open stream).
const SHOWN_WITHIN: Duration = Duration::from_secs(1);
/// How long anything else may take: a page load, a reconnection.
const PATIENCE: Duration = Duration::from_secs(20);

/// The tests, named `browser::<test>`: ignored (or failed, as
/// `PLYLOG_REQUIRE_*` says) without what they need.
pub(crate) fn trials() -> Vec<Trial> {
    let available = Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists();
    let availability = optional::availability(
        "browser",
        available,
        "PLYLOG_REQUIRE_BROWSER",
        "Chromium and ChromeDriver are not installed (apt-get install chromium chromium-driver, then cargo test --test clients browser)",
    );
    vec![
        optional::trial(
            "browser::a_game_is_followed_live_and_replayed",
            &availability,
            a_game_is_followed_live_and_replayed,
        ),
        optional::trial(
            "browser::the_page_resumes_after_the_server_restarts",
            &availability,
            the_page_resumes_after_the_server_restarts,
        ),
        optional::trial(
            "browser::every_game_kind_is_drawn",
            &availability,
            every_game_kind_is_drawn,
        ),
        optional::trial(
            "browser::names_that_act_on_text_are_shown_escaped",
            &availability,
            names_that_act_on_text_are_shown_escaped,
        ),
        optional::trial(
            "browser::a_board_of_a_million_cells_stays_responsive",
            &availability,
            a_board_of_a_million_cells_stays_responsive,
        ),
        optional::trial(
            "browser::a_game_opened_after_its_moves_lists_its_history",
            &availability,
            a_game_opened_after_its_moves_lists_its_history,
        ),
        optional::trial(
            "browser::a_finished_game_shows_its_end_not_live",
            &availability,
            a_finished_game_shows_its_end_not_live,
        ),
        optional::trial(
            "browser::a_missing_game_shows_only_not_found",
            &availability,
            a_missing_game_shows_only_not_found,
        ),
        optional::trial(
            "browser::hex_edges_line_up_with_the_outer_cells",
            &availability,
            hex_edges_line_up_with_the_outer_cells,
        ),
        optional::trial(
            "browser::the_game_list_follows_the_feed_without_polling",
            &availability,
            the_game_list_follows_the_feed_without_polling,
        ),
        optional::trial(
            "browser::the_board_fills_a_phone_screen",
            &availability,
            the_board_fills_a_phone_screen,
        ),
    ]
}

/// A plylog server on `addr` (port 0: any) with its log in `db`, serving
/// the dashboard; seat tokens off, so the test speaks for any seat.
struct Server {
    addr: SocketAddr,
    app: App,
}

impl Server {
    async fn start(addr: SocketAddr, db: &Path) -> Server {
        let settings = Settings {
            access: AccessSettings::default(),
            shutdown_grace: Duration::from_secs(1),
            ..Settings::new(addr, format!("sqlite://{}", db.display()))
        };
        let app = spawn_app(settings).await;
        Server {
            addr: app.addr,
            app,
        }
    }

    /// Stops the server (open streams end with UNAVAILABLE) and waits.
    async fn stop(self) {
        tokio::time::timeout(PATIENCE, self.app.stop())
            .await
            .expect("server stops");
    }

    async fn client(&self) -> Client {
        GameServiceClient::new(channel(self.addr).await)
    }

    fn url(&self, fragment: &str) -> String {
        format!("http://{}/{fragment}", self.addr)
    }
}

/// Headless Chromium under ChromeDriver, in a process group of their
/// own; the whole group is killed when dropped.
struct Browser {
    driver: Child,
    page: WebDriver,
    _profile: tempfile::TempDir,
}

impl Browser {
    async fn open() -> Browser {
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
            probe.local_addr().unwrap().port()
        };
        // Chromium and its helpers join ChromeDriver's group, so one kill
        // ends them all: killing ChromeDriver alone left them running.
        let mut driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let profile = tempfile::tempdir().expect("temp dir");
        let capabilities = json!({
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--disable-quic", "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--window-size=1280,900",
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            }
        });
        let capabilities = match capabilities {
            Value::Object(map) => map,
            _ => unreachable!("an object"),
        };
        let mut error = None;
        let connected = poll(PATIENCE, Duration::from_millis(50), async || {
            ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
                .capabilities(capabilities.clone())
                .connect(&format!("http://127.0.0.1:{port}"))
                .await
                .map_err(|e| error = Some(e))
                .ok()
        })
        .await;
        let Some(page) = connected else {
            let _ = driver.kill();
            panic!("ChromeDriver did not start a session: {error:?}");
        };
        Browser {
            driver,
            page,
            _profile: profile,
        }
    }

    /// Runs `script` (a function body) in the page and returns its value.
    async fn eval(&self, script: &str) -> Value {
        self.page
            .execute(script, Vec::new())
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// The `data-*` attributes and texts of `#game` as one object (null
    /// before the view exists).
    async fn game_view(&self) -> Value {
        self.eval(
            "const g = document.getElementById('game');
             if (!g) return null;
             const text = id => (document.getElementById(id) || {}).textContent || '';
             const shown = id => { const e = document.getElementById(id); return !!(e && e.offsetParent); };
             const older = document.querySelector('#moves-older a');
             return Object.assign({}, g.dataset, {
                 boardText: text('board-text'), outcome: text('outcome'), turn: text('turn'),
                 moves: Array.from(document.querySelectorAll('#moves li')).map(li => Number(li.dataset.sequence)),
                 badge: shown('connection') ? text('connection') : null,
                 older: shown('moves-older') && older ? older.getAttribute('href') : null,
             });",
        )
        .await
    }

    /// Polls `#game` until `done` holds; fails after `timeout`, showing what
    /// the page showed last.
    async fn wait_for_game(
        &self,
        what: &str,
        timeout: Duration,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let mut last = Value::Null;
        let shown = poll(timeout, Duration::from_millis(20), async || {
            let view = self.game_view().await;
            if done(&view) {
                return Some(view);
            }
            last = view;
            None
        })
        .await;
        shown.unwrap_or_else(|| {
            panic!("the page did not show {what} within {timeout:?}; it shows {last:#}")
        })
    }

    /// Waits until `#game` shows `sequence`.
    async fn wait_for_sequence(&self, sequence: u64, timeout: Duration) -> Value {
        self.wait_for_game(&format!("sequence {sequence}"), timeout, |v| {
            v["sequence"].as_str() == Some(sequence.to_string().as_str())
        })
        .await
    }

    /// Opens the live view of `game_id` and waits until it follows the
    /// game's stream at `sequence`.
    async fn open_game(&self, server: &Server, game_id: &str, sequence: u64) -> Value {
        self.page
            .goto(&server.url(&format!("#/games/{game_id}")))
            .await
            .expect("page loads");
        self.wait_for_game("the game, live", PATIENCE, |v| {
            v["gameId"] == game_id
                && v["connection"] == "live"
                && v["sequence"].as_str() == Some(sequence.to_string().as_str())
        })
        .await
    }

    /// Watches the API calls the page makes to `methods`, from the
    /// browser's own record (a stream is recorded once it ends), for
    /// [`NO_RETRY_WINDOW`]: `None` when they stayed `expected` all along,
    /// else what they became (which ends the watch).
    async fn calls_beyond(&self, methods: &[&str], expected: &Value) -> Option<Value> {
        let script = format!(
            "return performance.getEntriesByType('resource')
                 .map(e => e.name.split('/').pop())
                 .filter(m => {}.includes(m));",
            json!(methods)
        );
        poll(NO_RETRY_WINDOW, Duration::from_millis(100), async || {
            let calls = self.eval(&script).await;
            (&calls != expected).then_some(calls)
        })
        .await
    }

    /// Saves a screenshot as `<name>.png` in the screenshot directory.
    async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.page.screenshot().await.expect("screenshot");
        let dir = std::env::var_os("PLYLOG_SCREENSHOT_DIR").map_or_else(
            || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/dashboard-screenshots"),
            PathBuf::from,
        );
        std::fs::create_dir_all(&dir).expect("screenshot directory");
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).expect("screenshot written");
        println!("screenshot: {}", path.display());
        path
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let group = format!("-{}", self.driver.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

async fn create(client: &mut Client, game_id: &str, kind: pb::rule_set::Kind, seats: usize) {
    let symbols = ["X", "O", "A", "B"];
    client
        .create_game(pb::CreateGameRequest {
            seats: (0..seats)
                .map(|i| seat(&format!("p{i}"), symbols[i]))
                .collect(),
            ..create_request(game_id, rules(kind))
        })
        .await
        .expect("game created");
}

/// Plays `mv` for the seat to move; returns the game's new sequence.
async fn play(client: &mut Client, game_id: &str, mv: pb::Move) -> u64 {
    let seat = get(client, game_id, None)
        .await
        .position
        .and_then(|p| p.seat_to_move)
        .expect("a seat to move");
    let reply = client
        .submit_move(plain_move_request(game_id, seat, mv))
        .await
        .unwrap_or_else(|e| panic!("{game_id}: move refused: {e}"))
        .into_inner();
    reply.game.expect("game").last_sequence
}

/// Plays `count` moves, each one of the legal moves drawn by `rng`.
async fn play_legal(client: &mut Client, game_id: &str, count: usize, rng: &mut impl rand::Rng) {
    for _ in 0..count {
        let legal = client
            .list_legal_moves(pb::ListLegalMovesRequest {
                game_id: game_id.into(),
                ..Default::default()
            })
            .await
            .expect("legal moves")
            .into_inner();
        if legal.moves.is_empty() {
            return;
        }
        let mv = legal.moves[rng.random_range(0..legal.moves.len())].clone();
        play(client, game_id, mv).await;
    }
}

async fn get(client: &mut Client, game_id: &str, at: Option<u64>) -> pb::Game {
    client
        .get_game(pb::GetGameRequest {
            game_id: game_id.into(),
            at_sequence: at,
        })
        .await
        .expect("game")
        .into_inner()
        .game
        .expect("game")
}

/// The server's text picture of the board at `at` (the latest: `None`).
async fn board_text(client: &mut Client, game_id: &str, at: Option<u64>) -> String {
    get(client, game_id, at)
        .await
        .position
        .and_then(|p| p.board)
        .map(|b| b.text.join("\n"))
        .unwrap_or_default()
}

/// The rules of an m,n,k game (tic-tac-toe is 3, 3, 3).
fn mnk_kind(rows: i32, cols: i32, k: i32) -> pb::rule_set::Kind {
    pb::rule_set::Kind::Mnk(pb::MnkRules { rows, cols, k })
}

/// A temporary directory with the database file's path in it.
fn database() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("plylog.db");
    (dir, file)
}

/// The list shows a new game, filters it, and the game view shows every
/// move within a second of its acknowledgement, the last move, the winner
/// and the winning line; the replay scrubber shows the position at a chosen
/// sequence, step by step.
async fn a_game_is_followed_live_and_replayed() {
    let (_dir, db) = database();
    let server = Server::start("127.0.0.1:0".parse().unwrap(), &db).await;
    let mut client = server.client().await;
    let browser = Browser::open().await;
    browser
        .page
        .goto(&server.url(""))
        .await
        .expect("page loads");
    browser
        .page
        .wait()
        .at_most(PATIENCE)
        .for_element(Locator::Css("table#games"))
        .await
        .expect("the game list");

    let id = "tic-tac-toe";
    create(&mut client, id, mnk_kind(3, 3, 3), 2).await;
    let row = format!("#games tr[data-game-id='{id}']");
    browser
        .page
        .wait()
        .at_most(PATIENCE)
        .for_element(Locator::Css(&row))
        .await
        .expect("the new game is listed");
    // Filtering by another kind hides it; by its own shows it again.
    for (kind, shown) in [("connect_four", false), ("mnk", true)] {
        let filter = browser
            .page
            .find(Locator::Css("#filter-kind"))
            .await
            .expect("kind filter");
        filter.select_by_value(kind).await.expect("kind selected");
        wait_for(
            &format!("filter {kind}: shown {shown}"),
            PATIENCE,
            Duration::from_millis(20),
            async || {
                let rows = browser.page.find_all(Locator::Css(&row)).await.unwrap();
                (rows.len() == usize::from(shown)).then_some(())
            },
        )
        .await;
    }

    browser.screenshot("games").await;

    browser.open_game(&server, id, 1).await;
    // X takes the top row.
    let moves = [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)];
    for (i, (row, col)) in moves.into_iter().enumerate() {
        let sequence = play(&mut client, id, place(row, col)).await;
        assert_eq!(sequence, i as u64 + 2);
        let view = browser.wait_for_sequence(sequence, SHOWN_WITHIN).await;
        assert_eq!(
            view["boardText"],
            board_text(&mut client, id, None).await,
            "the board at {sequence}"
        );
        assert_eq!(view["lastMove"], format!("{row},{col}"));
    }
    let view = browser
        .wait_for_game("the win", SHOWN_WITHIN, |v| v["status"] == "WON")
        .await;
    assert_eq!(view["winningLine"], "0,0;0,1;0,2", "{view:#}");
    assert_eq!(view["seatToMove"], "", "nobody moves after the end");
    let outcome = view["outcome"].as_str().unwrap_or_default();
    assert!(
        outcome.contains("player p0") || outcome.contains('X'),
        "the winner is named: {outcome:?}"
    );
    browser.screenshot("tic-tac-toe").await;

    // The replay: jump to sequence 4, then step back and forward.
    browser
        .page
        .goto(&server.url(&format!("#/games/{id}/replay")))
        .await
        .expect("replay loads");
    let jump = browser
        .page
        .wait()
        .at_most(PATIENCE)
        .for_element(Locator::Css("#replay-jump"))
        .await
        .expect("the jump box");
    // Typed once the replay has loaded (it shows some sequence).
    wait_for(
        "the replay to load",
        PATIENCE,
        Duration::from_millis(20),
        async || {
            let loaded = browser
                .eval("const r = document.getElementById('replay'); return !!(r && r.dataset.sequence && r.dataset.sequence !== '0');")
                .await;
            (loaded == json!(true)).then_some(())
        },
    )
    .await;
    jump.clear().await.expect("cleared");
    let enter = char::from(fantoccini::key::Key::Enter);
    jump.send_keys(&format!("4{enter}")).await.expect("typed");
    for (button, sequence) in [
        (None, 4),
        (Some("#replay-back"), 3),
        (Some("#replay-forward"), 4),
    ] {
        if let Some(button) = button {
            browser
                .page
                .find(Locator::Css(button))
                .await
                .expect("button")
                .click()
                .await
                .expect("clicked");
        }
        let expected = board_text(&mut client, id, Some(sequence)).await;
        let mut shown = Value::Null;
        let replayed = poll(PATIENCE, Duration::from_millis(20), async || {
            shown = browser
                .eval(
                    "const r = document.getElementById('replay');
                     return r && [r.dataset.sequence, document.getElementById('replay-board-text').textContent];",
                )
                .await;
            (shown == json!([sequence.to_string(), expected])).then_some(())
        })
        .await;
        assert!(
            replayed.is_some(),
            "replay at {sequence}: expected {expected:?}, shown {shown}"
        );
    }
    browser.screenshot("replay").await;
    server.stop().await;
}

/// The server stops while the page follows a game (its stream ends) and
/// comes back on the same port; moves played while the page was cut off
/// and after it came back all show, each once, in order.
async fn the_page_resumes_after_the_server_restarts() {
    let (_dir, db) = database();
    let server = Server::start("127.0.0.1:0".parse().unwrap(), &db).await;
    let addr = server.addr;
    let mut client = server.client().await;
    let id = "connect-four";
    create(
        &mut client,
        id,
        pb::rule_set::Kind::ConnectFour(pb::ConnectFourRules::default()),
        2,
    )
    .await;
    let browser = Browser::open().await;
    browser.open_game(&server, id, 1).await;
    for column in [3, 3] {
        let sequence = play(&mut client, id, drop_in(column)).await;
        browser.wait_for_sequence(sequence, SHOWN_WITHIN).await;
    }

    server.stop().await;
    browser
        .wait_for_game("the lost stream", PATIENCE, |v| v["connection"] != "live")
        .await;
    let server = Server::start(addr, &db).await;
    let mut client = server.client().await;
    // Played while the page is still reconnecting.
    for column in [4, 4] {
        play(&mut client, id, drop_in(column)).await;
    }
    browser
        .wait_for_game("the stream again", PATIENCE, |v| {
            v["connection"] == "live" && v["sequence"] == "5"
        })
        .await;
    let sequence = play(&mut client, id, drop_in(5)).await;
    let view = browser.wait_for_sequence(sequence, SHOWN_WITHIN).await;
    assert_eq!(view["boardText"], board_text(&mut client, id, None).await);
    assert_eq!(
        sequences(&view),
        (1..=sequence).collect::<Vec<_>>(),
        "every event once, in order: the history, then what the page saw live"
    );
    server.stop().await;
}

/// A game created before names were checked, its player ids, display
/// name and a symbol holding a bidirectional override, ESC, BEL and CR
/// (written straight into the store: the API refuses them now): the list,
/// the seats legend and the turn line show each as an escape, `\u{202e}`,
/// never the character itself.
async fn names_that_act_on_text_are_shown_escaped() {
    use plylog::store::{EventStore, SqliteOptions, SqliteStore};
    let (_dir, db) = database();
    let store = SqliteStore::open(&SqliteOptions::new(format!("sqlite://{}", db.display())))
        .await
        .expect("store");
    stored::write_created(
        &store,
        "names",
        stored::tic_tac_toe(),
        stored::seats_that_attack_terminals(),
        0,
    )
    .await;
    store.close().await;
    let server = Server::start("127.0.0.1:0".parse().unwrap(), &db).await;
    let browser = Browser::open().await;
    let raw = ['\u{202e}', '\u{1b}', '\u{7}', '\r'];
    let check = |what: &str, text: &str, expected: &[&str]| {
        assert!(
            !text.contains(raw),
            "the {what} shows a raw control or bidi character: {text:?}"
        );
        for part in expected {
            assert!(text.contains(part), "the {what} lacks {part:?}: {text:?}");
        }
    };
    let text_of = async |css: &str| {
        let script =
            format!("const e = document.querySelector({css:?}); return e ? e.textContent : null;");
        wait_for(
            &format!("{css} to be shown"),
            PATIENCE,
            Duration::from_millis(20),
            async || match browser.eval(&script).await {
                Value::String(text) => Some(text),
                _ => None,
            },
        )
        .await
    };
    browser
        .page
        .goto(&server.url(""))
        .await
        .expect("page loads");
    let players = text_of("#games tr[data-game-id='names'] td.players").await;
    // Seat 0 shows its display name, seat 1 (which has none) its id.
    let names = ["\\u{1b}]0;pwned\\u{7}", "bob\\u{d}\\u{1b}[31mred"];
    check("list", &players, &names);
    assert!(players.contains("\\u{202e}X"), "{players:?}");
    browser.open_game(&server, "names", 1).await;
    check("seats legend", &text_of("ul.seats").await, &names);
    check(
        "turn line",
        &text_of("#turn").await,
        &["\\u{202e}X (\\u{1b}]0;pwned\\u{7}) to move"],
    );
    browser.screenshot("names").await;
    server.stop().await;
}

/// One game of every kind, a few legal moves each (the seed is printed):
/// the page's picture of the board matches the server's, and a screenshot
/// of each is saved.
async fn every_game_kind_is_drawn() {
    let (_dir, db) = database();
    let server = Server::start("127.0.0.1:0".parse().unwrap(), &db).await;
    let mut client = server.client().await;
    let mut rng = seed::rng(seed::seed("browser::every_game_kind_is_drawn"), 0);
    use pb::rule_set::Kind;
    let games: Vec<(&str, Kind, usize, usize)> = vec![
        ("gomoku", Kind::Gomoku(pb::GomokuRules::default()), 2, 30),
        (
            "connect-four",
            Kind::ConnectFour(pb::ConnectFourRules::default()),
            2,
            15,
        ),
        (
            "pop-out",
            Kind::ConnectFour(pb::ConnectFourRules {
                pop_out: true,
                ..Default::default()
            }),
            2,
            20,
        ),
        ("wild", Kind::Wild(pb::WildRules::default()), 2, 5),
        ("othello", Kind::Othello(pb::OthelloRules::default()), 2, 20),
        ("hex", Kind::Hex(pb::HexRules::default()), 2, 20),
        ("chess", Kind::Chess(pb::ChessRules::default()), 2, 12),
        (
            "snakes-and-ladders",
            Kind::SnakesLadders(pb::SnakesLaddersRules {
                // Three ladders and three snakes.
                jumps: [(3, 51), (6, 27), (20, 70), (25, 5), (34, 1), (65, 52)]
                    .map(|(from, to)| pb::Jump { from, to })
                    .to_vec(),
                ..Default::default()
            }),
            3,
            12,
        ),
        (
            "mnk-four-seats",
            Kind::Mnk(pb::MnkRules {
                rows: 8,
                cols: 8,
                k: 4,
            }),
            4,
            16,
        ),
    ];
    let browser = Browser::open().await;
    for (id, kind, seats, moves) in games {
        create(&mut client, id, kind, seats).await;
        play_legal(&mut client, id, moves, &mut rng).await;
        let game = get(&mut client, id, None).await;
        let view = browser.open_game(&server, id, game.last_sequence).await;
        let position = game.position.expect("position");
        if let Some(chess) = &position.chess {
            // Rank 8 first, FEN's letters, as the server draws it.
            assert_eq!(view["boardText"], chess.text.join("\n"), "{id}");
            browser.screenshot(id).await;
            continue;
        }
        match position.board.filter(|b| !b.text.is_empty()) {
            Some(board) => assert_eq!(view["boardText"], board.text.join("\n"), "{id}"),
            None => {
                // The race: one line per seat, "SYMBOL: square".
                let lines: Vec<String> = game
                    .seats
                    .iter()
                    .zip(&position.squares)
                    .map(|(seat, square)| format!("{}: {square}", seat.symbol))
                    .collect();
                assert_eq!(view["boardText"], lines.join("\n"), "{id}");
            }
        }
        browser.screenshot(id).await;
    }

    // A timed game: each seat's clock, the running one marked, and the
    // move's own limit.
    let id = "timed";
    client
        .create_game(pb::CreateGameRequest {
            seats: vec![seat("p0", "X"), seat("p1", "O")],
            time_control: Some(pb::TimeControl {
                per_move: Some(prost_types::Duration {
                    seconds: 60,
                    nanos: 0,
                }),
                initial: Some(prost_types::Duration {
                    seconds: 300,
                    nanos: 0,
                }),
                increment: Some(prost_types::Duration {
                    seconds: 2,
                    nanos: 0,
                }),
                ..Default::default()
            }),
            ..create_request(id, rules(Kind::Gomoku(pb::GomokuRules::default())))
        })
        .await
        .expect("timed game created");
    let sequence = play(&mut client, id, place(7, 7)).await;
    browser.open_game(&server, id, sequence).await;
    let clocks = browser
        .eval("return document.getElementById('clocks').textContent;")
        .await;
    let clocks = clocks.as_str().unwrap_or_default();
    assert!(
        clocks.contains("▶ O") && clocks.contains("X 5:") && clocks.contains("move"),
        "O's clock runs, X has its 5 minutes (plus 2 s), the move limit shows: {clocks:?}"
    );
    browser.screenshot("timed-gomoku").await;
    server.stop().await;
}

/// A 1,000 × 1,000 board: drawn on a canvas (no node per cell), the page
/// answers at once after zooming and panning, and shows a move far out.
async fn a_board_of_a_million_cells_stays_responsive() {
    let (_dir, db) = database();
    let server = Server::start("127.0.0.1:0".parse().unwrap(), &db).await;
    let mut client = server.client().await;
    let id = "million";
    create(&mut client, id, mnk_kind(1000, 1000, 5), 2).await;
    for (row, col) in [(500, 500), (501, 501), (0, 0), (999, 999)] {
        play(&mut client, id, place(row, col)).await;
    }
    let browser = Browser::open().await;
    browser.open_game(&server, id, 5).await;
    let nodes = browser
        .eval("return document.getElementsByTagName('*').length;")
        .await;
    assert!(
        nodes.as_u64().is_some_and(|n| n < 3000),
        "{nodes} DOM nodes: the board must be a canvas"
    );
    // Zoom out and pan over the whole board, as a wheel and a drag would.
    browser
        .eval(
            "const c = document.getElementById('board');
             const r = c.getBoundingClientRect();
             const at = {clientX: r.left + r.width / 2, clientY: r.top + r.height / 2, bubbles: true, cancelable: true};
             for (let i = 0; i < 40; i++) c.dispatchEvent(new WheelEvent('wheel', Object.assign({deltaY: 100}, at)));
             c.dispatchEvent(new PointerEvent('pointerdown', Object.assign({pointerId: 1, buttons: 1}, at)));
             c.dispatchEvent(new PointerEvent('pointermove', Object.assign({pointerId: 1, buttons: 1}, at, {clientX: at.clientX + 300})));
             c.dispatchEvent(new PointerEvent('pointerup', Object.assign({pointerId: 1}, at)));
             return true;",
        )
        .await;
    let sequence = play(&mut client, id, place(999, 0)).await;
    let view = browser.wait_for_sequence(sequence, SHOWN_WITHIN).await;
    assert_eq!(view["lastMove"], "999,0");
    assert_eq!(view["boardText"], "", "no text picture above 1,024 cells");
    browser.screenshot("mnk-1000x1000").await;
    server.stop().await;
}

/// The sequences `#moves` lists, in order.
fn sequences(view: &Value) -> Vec<u64> {
    serde_json::from_value(view["moves"].clone()).expect("sequences")
}

/// Submits `mv` for `seat` without reading the game first; returns the
/// game's new sequence.
async fn play_as(client: &mut Client, game_id: &str, seat: u32, mv: pb::Move) -> u64 {
    client
        .submit_move(plain_move_request(game_id, seat, mv))
        .await
        .unwrap_or_else(|e| panic!("{game_id}: move refused: {e}"))
        .into_inner()
        .game
        .expect("game")
        .last_sequence
}

/// A game played before the page opened: its events list shows them all,
/// and the moves after follow, each once, in order. A game longer than
/// the list (600 moves) shows its last 500 events and a link to the replay
/// at the one before, which opens there.
async fn a_game_opened_after_its_moves_lists_its_history() {
    let (_dir, db) = database();
    let server = Server::start("127.0.0.1:0".parse().unwrap(), &db).await;
    let mut client = server.client().await;
    let browser = Browser::open().await;

    let id = "played-before";
    create(
        &mut client,
        id,
        pb::rule_set::Kind::ConnectFour(pb::ConnectFourRules::default()),
        2,
    )
    .await;
    let mut sequence = 1;
    for (i, column) in [3, 3, 4, 2, 5, 6].into_iter().enumerate() {
        sequence = play_as(&mut client, id, i as u32 % 2, drop_in(column)).await;
    }
    browser.open_game(&server, id, sequence).await;
    let view = browser
        .wait_for_game("the history", PATIENCE, |v| {
            sequences(v) == (1..=sequence).collect::<Vec<_>>()
        })
        .await;
    assert_eq!(view["older"], Value::Null, "the whole game is listed");
    for (seat, column) in [(0, 0), (1, 1)] {
        sequence = play_as(&mut client, id, seat, drop_in(column)).await;
        browser.wait_for_sequence(sequence, SHOWN_WITHIN).await;
    }
    let view = browser.game_view().await;
    assert_eq!(
        sequences(&view),
        (1..=sequence).collect::<Vec<_>>(),
        "the history, then each live event once, in order"
    );
    browser.screenshot("history").await;

    // 600 moves on a board nobody can win: a 40x40 board, k = 40, filled
    // row by row (each column holds one seat's pieces, 15 of them).
    let id = "long";
    create(&mut client, id, mnk_kind(40, 40, 40), 2).await;
    for i in 0..600 {
        sequence = play_as(&mut client, id, i % 2, place(i as i32 / 40, i as i32 % 40)).await;
    }
    assert_eq!(sequence, 601);
    browser.open_game(&server, id, sequence).await;
    let view = browser
        .wait_for_game("the last 500 events", PATIENCE, |v| {
            sequences(v) == (102..=601).collect::<Vec<_>>()
        })
        .await;
    assert_eq!(view["older"], format!("#/games/{id}/replay?sequence=101"));
    let sequence = play_as(&mut client, id, 0, place(15, 0)).await;
    let view = browser.wait_for_sequence(sequence, SHOWN_WITHIN).await;
    assert_eq!(sequences(&view), (103..=602).collect::<Vec<_>>());
    assert_eq!(view["older"], format!("#/games/{id}/replay?sequence=102"));
    browser
        .page
        .find(Locator::Css("#moves-older a"))
        .await
        .expect("the link to the replay")
        .click()
        .await
        .expect("clicked");
    wait_for(
        "the replay at sequence 102",
        PATIENCE,
        Duration::from_millis(20),
        async || {
            let at = browser
                .eval("const r = document.getElementById('replay'); return r ? r.dataset.sequence : null;")
                .await;
            (at == "102").then_some(())
        },
    )
    .await;
    server.stop().await;
}

/// The badge beside a game's name says "live" only while the game is in
/// play: a game won before the page opened shows "won", one drawn or
/// called off while the page is open turns to "drawn" or "no result"
/// within a second, and a rematch of the won game makes it live again.
async fn a_finished_game_shows_its_end_not_live() {
    let (_dir, db) = database();
    let server = Server::start("127.0.0.1:0".parse().unwrap(), &db).await;
    let mut client = server.client().await;
    let browser = Browser::open().await;

    let id = "won-before";
    create(&mut client, id, mnk_kind(3, 3, 3), 2).await;
    let mut sequence = 1;
    for (i, mv) in x_wins_top_row().into_iter().enumerate() {
        sequence = play_as(&mut client, id, i as u32 % 2, mv).await;
    }
    let view = browser.open_game(&server, id, sequence).await;
    assert_eq!(view["status"], "WON");
    assert_eq!(view["badge"], "won", "{view:#}");
    browser.screenshot("won-before").await;
    // A rematch: a new round, in play again.
    client
        .rematch(pb::RematchRequest {
            game_id: id.into(),
            seat: Some(0),
            ..Default::default()
        })
        .await
        .expect("rematch");
    browser
        .wait_for_game("the new round, live", SHOWN_WITHIN, |v| {
            v["status"] == "IN_PROGRESS" && v["badge"] == "live"
        })
        .await;

    let id = "drawn-live";
    create(&mut client, id, mnk_kind(3, 3, 3), 2).await;
    let view = browser.open_game(&server, id, 1).await;
    assert_eq!(view["badge"], "live");
    // X: (0,0) (0,2) (1,0) (1,2) (2,1); O: (0,1) (1,1) (2,0) (2,2): no line.
    let draw = [
        (0, 0),
        (0, 1),
        (0, 2),
        (1, 1),
        (1, 0),
        (2, 0),
        (1, 2),
        (2, 2),
        (2, 1),
    ];
    for (i, (row, col)) in draw.into_iter().enumerate() {
        if get(&mut client, id, None)
            .await
            .position
            .and_then(|p| p.seat_to_move)
            .is_none()
        {
            break;
        }
        play_as(&mut client, id, i as u32 % 2, place(row, col)).await;
    }
    let view = browser
        .wait_for_game("the draw", SHOWN_WITHIN, |v| v["status"] == "DRAWN")
        .await;
    assert_eq!(view["badge"], "drawn", "{view:#}");

    let id = "aborted-live";
    create(&mut client, id, mnk_kind(3, 3, 3), 2).await;
    browser.open_game(&server, id, 1).await;
    client
        .submit_action(pb::SubmitActionRequest {
            game_id: id.into(),
            seat: Some(0),
            action: pb::Action::Abort as i32,
            ..Default::default()
        })
        .await
        .expect("abort");
    let view = browser
        .wait_for_game("no result", SHOWN_WITHIN, |v| v["status"] == "NO_RESULT")
        .await;
    assert_eq!(view["badge"], "no result", "{view:#}");
    server.stop().await;
}

/// How long a missing game's page is watched for another call. A page
/// that retries (as it once did: after 200 ms, doubling up to 2 s) calls
/// at least three more times in it.
const NO_RETRY_WINDOW: Duration = Duration::from_millis(3000);

/// A game id that does not exist: the page says "not found" and nothing
/// else (no connection badge, no board), and asks the server once: no
/// GetGame or StreamEvents follows while it is watched.
async fn a_missing_game_shows_only_not_found() {
    let (_dir, db) = database();
    let server = Server::start("127.0.0.1:0".parse().unwrap(), &db).await;
    let browser = Browser::open().await;
    browser
        .page
        .goto(&server.url("#/games/no-such-game"))
        .await
        .expect("page loads");
    let view = browser
        .wait_for_game("not found", PATIENCE, |v| v["connection"] == "not-found")
        .await;
    assert_eq!(view["badge"], Value::Null, "no connection badge: {view:#}");
    let shown = browser
        .eval("return document.getElementById('app').innerText;")
        .await;
    let shown = shown.as_str().unwrap_or_default();
    assert!(shown.contains("not found"), "{shown:?}");
    assert!(
        !shown.contains("connecting") && !shown.contains("events"),
        "only the not-found state shows: {shown:?}"
    );
    let board = browser
        .eval("return !!document.getElementById('board').offsetParent;")
        .await;
    assert_eq!(
        board,
        json!(false),
        "no board for a game that does not exist"
    );
    browser.screenshot("not-found").await;

    let retried = browser
        .calls_beyond(&["GetGame", "StreamEvents"], &json!(["GetGame"]))
        .await;
    assert!(
        retried.is_none(),
        "the page calls the server again for a missing game: {retried:?}"
    );
    server.stop().await;
}

/// The list is live: a game created while the page is open appears within
/// a second, its row follows its moves and shows its end within a second
/// of the winning move, a game created before the page opened is there
/// from the start, and the page read the list once and followed the feed
/// once (it does not poll).
async fn the_game_list_follows_the_feed_without_polling() {
    let (_dir, db) = database();
    let server = Server::start("127.0.0.1:0".parse().unwrap(), &db).await;
    let mut client = server.client().await;
    create(&mut client, "before", mnk_kind(3, 3, 3), 2).await;
    let browser = Browser::open().await;
    browser
        .page
        .goto(&server.url(""))
        .await
        .expect("page loads");
    // A row's id, status and sequence, in list order.
    let rows = "return Array.from(document.querySelectorAll('#games tbody tr'))
                    .map(r => [r.dataset.gameId, r.dataset.status,
                               r.querySelector('.sequence').textContent]);";
    let wait_rows = async |what: &str, within: Duration, want: Value| {
        let mut last = Value::Null;
        let shown = poll(within, Duration::from_millis(20), async || {
            last = browser.eval(rows).await;
            (last == want).then_some(())
        })
        .await;
        assert!(shown.is_some(), "{what}: the list shows {last}, not {want}");
    };
    wait_rows(
        "the game from before",
        PATIENCE,
        json!([["before", "IN_PROGRESS", "1"]]),
    )
    .await;
    create(&mut client, "after", mnk_kind(3, 3, 3), 2).await;
    wait_rows(
        "the new game, at the top",
        SHOWN_WITHIN,
        json!([
            ["after", "IN_PROGRESS", "1"],
            ["before", "IN_PROGRESS", "1"]
        ]),
    )
    .await;
    // X takes the top row.
    let moves = [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)];
    for (row, col) in moves {
        play(&mut client, "after", place(row, col)).await;
    }
    wait_rows(
        "the win",
        SHOWN_WITHIN,
        json!([["after", "WON", "6"], ["before", "IN_PROGRESS", "1"]]),
    )
    .await;
    browser.screenshot("games-live").await;
    // The feed is still open, so only the list's read is recorded; watched
    // for longer than the poll interval the page used to have (1 s).
    let polled = browser
        .calls_beyond(&["ListGames", "StreamAllEvents"], &json!(["ListGames"]))
        .await;
    assert!(polled.is_none(), "the list was read again: {polled:?}");
    server.stop().await;
}

/// Where the board canvas shows world (0, 0) and at what scale, as the
/// page says in `canvas#board[data-view]`: `[scale, x, y]`.
async fn board_view(browser: &Browser) -> [f64; 3] {
    let view = browser
        .eval("return document.getElementById('board').dataset.view || null;")
        .await;
    let numbers: Vec<f64> = view
        .as_str()
        .unwrap_or_else(|| panic!("no data-view on the board: {view}"))
        .split(',')
        .map(|n| n.parse().expect("a number"))
        .collect();
    numbers.try_into().expect("three numbers")
}

/// The canvas's colours at the CSS pixel points given, as `[r, g, b]`.
async fn canvas_colours(browser: &Browser, points: &[[f64; 2]]) -> Vec<[u8; 3]> {
    let colours = browser
        .page
        .execute(
            "const c = document.getElementById('board');
             const dpr = c.width / c.getBoundingClientRect().width;
             const ctx = c.getContext('2d');
             return arguments[0].map(([x, y]) =>
                 Array.from(ctx.getImageData(Math.round(x * dpr), Math.round(y * dpr), 1, 1).data.slice(0, 3)));",
            vec![json!(points)],
        )
        .await
        .expect("pixels read");
    serde_json::from_value(colours).expect("colours")
}

fn near(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 40)
}

/// Hex's coloured edges touch the board: just outside the outermost corner
/// of every outer cell is its side's colour (seat 0's red above the top row
/// and below the bottom one, seat 1's blue beside the first and last
/// columns, as in OpenSpiel), and just inside it the empty board, on an
/// 11x11 board. The page's geometry: hexes one world unit wide, pointy
/// side up, cell (r, c) centred at (c + r/2 + 1/2, (1.5 r + 1)/sqrt(3)).
async fn hex_edges_line_up_with_the_outer_cells() {
    const RED: [u8; 3] = [0xd0, 0x34, 0x2c];
    const BLUE: [u8; 3] = [0x1f, 0x5f, 0xbf];
    const BOARD: [u8; 3] = [0xf3, 0xea, 0xd7];
    /// How far from a cell's corner each probe is, in CSS pixels.
    const PROBE: f64 = 4.0;
    let (_dir, db) = database();
    let server = Server::start("127.0.0.1:0".parse().unwrap(), &db).await;
    let mut client = server.client().await;
    let id = "hex-empty";
    create(
        &mut client,
        id,
        pb::rule_set::Kind::Hex(pb::HexRules::default()),
        2,
    )
    .await;
    let browser = Browser::open().await;
    browser.open_game(&server, id, 1).await;
    let [scale, ox, oy] = board_view(&browser).await;
    let radius = 1.0 / 3f64.sqrt();
    let n = 11;
    // Each side, the outward direction (a unit vector: an outer cell's
    // outermost corner is `radius` along it from its centre) and the
    // side's colour.
    let (up, down) = ([0.0, -1.0], [0.0, 1.0]);
    let (left, right) = ([-(3f64.sqrt()) / 2.0, 0.5], [3f64.sqrt() / 2.0, -0.5]);
    let sides = [
        ("top", up, RED),
        ("bottom", down, RED),
        ("left", left, BLUE),
        ("right", right, BLUE),
    ];
    let mut probes = Vec::new();
    let mut expected = Vec::new();
    for (side, [dx, dy], colour) in sides {
        for i in 0..n {
            let (r, c) = match side {
                "top" => (0, i),
                "bottom" => (n - 1, i),
                "left" => (i, 0),
                _ => (i, n - 1),
            };
            let x = f64::from(c) + f64::from(r) / 2.0 + 0.5;
            let y = (1.5 * f64::from(r) + 1.0) * radius;
            let corner = [
                ox + (x + dx * radius) * scale,
                oy + (y + dy * radius) * scale,
            ];
            probes.push([corner[0] + dx * PROBE, corner[1] + dy * PROBE]);
            expected.push((format!("{side} edge beside cell ({r},{c})"), colour));
            probes.push([corner[0] - dx * PROBE, corner[1] - dy * PROBE]);
            expected.push((format!("cell ({r},{c}) inside its {side} corner"), BOARD));
        }
    }
    let colours = canvas_colours(&browser, &probes).await;
    let wrong: Vec<String> = expected
        .iter()
        .zip(&probes)
        .zip(&colours)
        .filter(|&(((_, want), _), got)| !near(*got, *want))
        .map(|(((what, want), at), got)| {
            format!(
                "{what} at ({:.0},{:.0}): {got:?}, not {want:?}",
                at[0], at[1]
            )
        })
        .collect();
    browser.screenshot("hex-edges").await;
    assert!(
        wrong.is_empty(),
        "{} of {} probes off (scale {scale:.1}):\n{}",
        wrong.len(),
        probes.len(),
        wrong.join("\n")
    );
    server.stop().await;
}

/// At a phone's width (390 CSS px) the board fills most of the screen
/// (at least 300 px wide) and the page does not scroll sideways.
async fn the_board_fills_a_phone_screen() {
    let (_dir, db) = database();
    let server = Server::start("127.0.0.1:0".parse().unwrap(), &db).await;
    let mut client = server.client().await;
    let mut rng = seed::rng(seed::seed("browser::the_board_fills_a_phone_screen"), 0);
    let id = "phone";
    create(
        &mut client,
        id,
        pb::rule_set::Kind::Gomoku(pb::GomokuRules::default()),
        2,
    )
    .await;
    play_legal(&mut client, id, 20, &mut rng).await;
    let sequence = get(&mut client, id, None).await.last_sequence;
    let browser = Browser::open().await;
    browser
        .page
        .set_window_size(390, 844)
        .await
        .expect("window resized");
    browser.open_game(&server, id, sequence).await;
    phone_sizes(&browser, "board", "phone-gomoku").await;
    // The replay, once it shows the last step.
    browser
        .page
        .goto(&server.url(&format!("#/games/{id}/replay?sequence={sequence}")))
        .await
        .expect("replay loads");
    wait_for(
        "the replay at the last step",
        PATIENCE,
        Duration::from_millis(20),
        async || {
            let at = browser
                .eval("const r = document.getElementById('replay'); return r ? r.dataset.sequence : null;")
                .await;
            (at == sequence.to_string().as_str()).then_some(())
        },
    )
    .await;
    phone_sizes(&browser, "replay-board", "phone-replay").await;
    server.stop().await;
}

/// Checks the phone-width page showing `canvas#<canvas>`: the window is 390
/// px wide, the canvas at least 300 px, nothing scrolls sideways; saves a
/// screenshot as `<name>.png` first.
async fn phone_sizes(browser: &Browser, canvas: &str, name: &str) {
    let sizes = browser
        .page
        .execute(
            "return [window.innerWidth, document.getElementById(arguments[0]).getBoundingClientRect().width,
                     document.documentElement.scrollWidth];",
            vec![json!(canvas)],
        )
        .await
        .expect("sizes read");
    let [viewport, board, page]: [f64; 3] =
        serde_json::from_value(sizes.clone()).expect("three numbers");
    println!("{name}: at {viewport} px wide, the board is {board} px wide, the page {page} px");
    browser.screenshot(name).await;
    assert_eq!(viewport, 390.0, "the window is a phone's width: {sizes}");
    assert!(
        board >= 300.0,
        "{name}: the board is {board} px wide at {viewport} px"
    );
    assert!(
        page <= viewport,
        "{name}: the page scrolls sideways, {page} px wide"
    );
}
