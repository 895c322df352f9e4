//! The operator's commands (`plylog games`, `show`, `export`, `import`,
//! `verify`, `migrate`) run as the real binary against real databases that
//! the real server filled: each test starts `plylog serve` on a fresh
//! database, plays games through it with a tonic client, kills it, then runs
//! the commands and reads what they print and their exit codes.
//!
//! Every test runs on a SQLite file (`sqlite::...`) and on a fresh
//! PostgreSQL schema (`postgres::...`). The PostgreSQL runs need
//! `DATABASE_URL=postgres://...` (or `PLYLOG_TEST_BACKEND=postgres`);
//! without it they are listed as ignored, with the reason printed, and with
//! `PLYLOG_REQUIRE_POSTGRES=1` (as in `.ci/run`) they fail instead.
//!
//! The same binary runs the multi-node tests (`multinode::...`, in
//! `multinode.rs`): several servers in this process on one PostgreSQL
//! schema; and the cluster tests (`cluster::...`, in `cluster.rs`): slot
//! leases, fencing, forwarding and handoff. All of it runs on libtest-mimic (`harness = false`), which takes
//! at most one filter: `cargo test --test operator multinode`.

/// Several nodes, one truth: servers sharing one PostgreSQL schema.
mod multinode;

/// One owner per game: slot leases, fencing, forwarding, handoff.
mod cluster;

use std::io::Write;
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::time::Duration;

use libtest_mimic::Arguments;
use plylog::proto::{self as pb};
use prost::Message;

use optional::trial;
use plylog_testkit::postgres::{PgSchema, fresh_postgres_schema, postgres_configured};
use plylog_testkit::process;
use plylog_testkit::stored;
use plylog_testkit::{
    Client, bearer, connect, create_request, drop_in, move_request, place, play_all, rules,
    two_unnamed_seats,
};
use plylog_testkit::{logs, optional};
use process::{Server, output_within, plylog};

/// How long one command may take before the test fails.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// Which database a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Sqlite,
    Postgres,
}

macro_rules! on_both_backends {
    ($postgres:expr, $($test:ident),* $(,)?) => {
        vec![$(
            trial(concat!("sqlite::", stringify!($test)), &Ok(true), || $test(Backend::Sqlite)),
            trial(concat!("postgres::", stringify!($test)), $postgres, || $test(Backend::Postgres)),
        )*]
    };
}

fn main() -> ExitCode {
    let args = Arguments::from_args();
    logs::init();
    let postgres = optional::availability(
        "operator",
        postgres_configured(),
        "PLYLOG_REQUIRE_POSTGRES",
        "no PostgreSQL is configured: set DATABASE_URL=postgres://... (or PLYLOG_TEST_BACKEND=postgres) to run the postgres:: tests",
    );
    let mut tests = on_both_backends!(
        &postgres,
        games_lists_each_game_with_its_rules_status_moves_and_times,
        show_draws_the_board_after_the_latest_event_or_an_earlier_one,
        export_then_import_then_export_gives_the_same_lines,
        the_sample_pgn_imports_through_the_rules_and_exports_back_to_its_movetext,
        import_refuses_a_log_that_does_not_replay_and_writes_nothing_of_that_game,
        import_of_a_game_the_database_has_is_refused_unless_skipped,
        verify_names_the_game_and_sequence_of_a_move_stored_after_the_game_ended,
        verify_finds_every_changed_bit_of_the_stored_events,
        events_stored_before_the_chain_get_theirs_at_the_next_open,
        events_stored_before_the_feed_are_numbered_by_the_migration_in_each_games_order,
        games_stored_before_the_listing_tags_are_tagged_by_the_migration,
        events_stored_before_lifecycles_are_marked_as_the_server_marks_them,
        feed_prints_each_event_once_across_runs_that_resume_from_the_checkpoint_file,
        verify_finds_a_gap_in_the_feed_a_game_out_of_order_and_an_event_without_a_position,
        verify_checks_a_games_snapshot_against_its_log,
        read_only_commands_neither_create_nor_migrate_a_database,
        an_imported_game_keeps_its_players_seat_tokens_under_the_same_secret,
        usage_errors_exit_with_code_2,
        text_outputs_escape_what_stored_names_would_do_to_a_terminal,
        import_applies_the_checks_and_limits_of_create_game,
        games_names_the_rows_it_cannot_read_and_lists_the_others,
        show_of_a_game_without_its_games_row_says_so,
        a_start_refused_for_its_secret_leaves_the_database_untouched,
    );
    tests.extend(multinode::trials());
    tests.extend(cluster::trials());
    libtest_mimic::run(&args, tests).exit_code()
}

/// A fresh database: a SQLite file in a temporary directory, or a fresh
/// PostgreSQL schema (dropped with this value).
struct Db {
    url: String,
    backend: Backend,
    dir: tempfile::TempDir,
    _schema: Option<PgSchema>,
}

impl Db {
    async fn fresh(backend: Backend) -> Db {
        let dir = tempfile::tempdir().expect("a temporary directory");
        match backend {
            Backend::Sqlite => Db {
                url: format!("sqlite://{}", dir.path().join("plylog.db").display()),
                backend,
                dir,
                _schema: None,
            },
            Backend::Postgres => {
                let schema = fresh_postgres_schema().await;
                Db {
                    url: schema.url.clone(),
                    backend,
                    dir,
                    _schema: Some(schema),
                }
            }
        }
    }

    /// A seat token secret file beside the database (the same file for
    /// every server and import of the test that asks).
    fn secret_file(&self) -> PathBuf {
        let path = self.dir.path().join("secret");
        if !path.exists() {
            std::fs::write(
                &path,
                "a-test-secret-of-at-least-32-characters-0123456789\n",
            )
            .expect("secret file written");
        }
        path
    }

    /// Runs `plylog <args> --database-url <this database>`.
    fn plylog(&self, args: &[&str]) -> Run {
        run(&[args, &["--database-url", &self.url]].concat(), None)
    }
}

/// What a finished `plylog` command did.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    /// Asserts the exit code, showing everything printed when it differs.
    #[track_caller]
    fn expect_code(self, code: i32) -> Run {
        assert_eq!(self.code, code, "{self:#?}");
        self
    }
}

/// Runs the binary with `args` (and `input` on its standard input) until it
/// exits; fails the test when that takes longer than [`COMMAND_TIMEOUT`].
fn run(args: &[&str], input: Option<Vec<u8>>) -> Run {
    // The operator's default: warnings only (a PostgreSQL notice would
    // otherwise join the one line of an error).
    let mut child = plylog()
        .env("RUST_LOG", "warn")
        .args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("plylog starts");
    if let Some(input) = input {
        let mut stdin = child.stdin.take().expect("a piped stdin");
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    let output = output_within(child, COMMAND_TIMEOUT, &format!("plylog {args:?}"));
    Run {
        code: output.status.code().expect("an exit code, not a signal"),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// `plylog serve` on `db` (seat tokens from `secret`, or none) and a client
/// connected to it.
async fn serve(db: &Db, secret: Option<PathBuf>) -> (Server, Client) {
    serve_with(db, secret, &[]).await
}

/// [`serve`] with more of the server's arguments.
async fn serve_with(db: &Db, secret: Option<PathBuf>, more: &[&str]) -> (Server, Client) {
    let server = Server::start(
        |port| {
            let mut command = plylog();
            // One name for every server of a test, as a node restarted by
            // its supervisor keeps its name: a server started after one was
            // killed takes its slot leases back at once, whatever its port.
            command
                .args(["--listen", &format!("127.0.0.1:{port}")])
                .args(["--database-url", &db.url, "--node-name", "operator-test"])
                .args(more);
            match &secret {
                Some(file) => command.arg("--seat-token-secret-file").arg(file),
                None => command.arg("--no-seat-tokens"),
            };
            command
        },
        0,
    );
    let client = connect(server.port).await;
    (server, client)
}

/// Stops the server, asserting it logged no error.
fn stop(server: Server) {
    assert_eq!(server.log_lines("ERROR"), Vec::<String>::new());
    server.kill();
}

/// Creates `game_id` with rules `kind`, alice (X) against bob (O); the seat
/// tokens, when the server issues them.
async fn create(client: &mut Client, game_id: &str, kind: pb::rule_set::Kind) -> Vec<String> {
    client
        .create_game(pb::CreateGameRequest {
            seats: two_unnamed_seats(),
            ..create_request(game_id, rules(kind))
        })
        .await
        .expect("game created")
        .into_inner()
        .seat_tokens
}

/// Plays `mv` for `seat`, with its token when given.
async fn play(
    client: &mut Client,
    game_id: &str,
    seat: u32,
    mv: pb::Move,
    token: Option<&str>,
) -> Result<pb::SubmitMoveResponse, tonic::Status> {
    let request = move_request(game_id, seat, mv);
    let request = match token {
        Some(token) => bearer(request, token),
        None => tonic::Request::new(request),
    };
    client.submit_move(request).await.map(|r| r.into_inner())
}

/// A database holding four games, oldest first:
/// - `ttt`: tic-tac-toe, X takes the top row on move 5 (events 1 to 6);
/// - `c4`: Connect Four, three discs dropped, O to move;
/// - `gmk`: gomoku 15x15, no move yet;
/// - `undo`: m,n,k 4x4 k=3, a move then its undo (O's move taken back).
async fn four_games(backend: Backend) -> Db {
    let db = Db::fresh(backend).await;
    let (server, mut client) = serve(&db, None).await;
    let mnk = |rows, cols, k| pb::rule_set::Kind::Mnk(pb::MnkRules { rows, cols, k });
    create(&mut client, "ttt", mnk(3, 3, 3)).await;
    play_all(
        &mut client,
        "ttt",
        &[
            place(0, 0),
            place(1, 0),
            place(0, 1),
            place(1, 1),
            place(0, 2),
        ],
    )
    .await;
    let c4 = pb::rule_set::Kind::ConnectFour(pb::ConnectFourRules::default());
    create(&mut client, "c4", c4).await;
    play_all(&mut client, "c4", &[drop_in(3), drop_in(3), drop_in(4)]).await;
    let gomoku = pb::rule_set::Kind::Gomoku(pb::GomokuRules::default());
    create(&mut client, "gmk", gomoku).await;
    create(&mut client, "undo", mnk(4, 4, 3)).await;
    play_all(&mut client, "undo", &[place(1, 1), place(2, 2)]).await;
    client
        .undo(pb::UndoRequest {
            game_id: "undo".into(),
            seat: Some(1),
            request_id: String::new(),
            expected_sequence: None,
            view: pb::GameView::Full as i32,
        })
        .await
        .expect("undo accepted");
    stop(server);
    db
}

/// The text table's data lines, split on runs of two or more spaces.
fn table(stdout: &str) -> Vec<Vec<String>> {
    stdout
        .lines()
        .skip(1)
        .map(|line| {
            line.split("  ")
                .map(str::trim)
                .filter(|cell| !cell.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

async fn games_lists_each_game_with_its_rules_status_moves_and_times(backend: Backend) {
    let db = four_games(backend).await;
    let listed = db.plylog(&["games"]).expect_code(0);
    assert_eq!(
        listed.stdout.lines().next(),
        Some("GAME  KIND          STATUS             MOVES  CREATED               LAST ACTIVITY"),
        "{}",
        listed.stdout
    );
    let rows = table(&listed.stdout);
    let summary: Vec<[&str; 4]> = rows
        .iter()
        .map(|row| [&*row[0], &*row[1], &*row[2], &*row[3]])
        .collect();
    assert_eq!(
        summary,
        [
            ["ttt", "tic-tac-toe", "won by seat 0 (X)", "5"],
            ["c4", "connect-four", "in play", "3"],
            ["gmk", "gomoku 15x15", "in play", "0"],
            ["undo", "mnk 4x4 k=3", "in play", "1"],
        ],
        "{}",
        listed.stdout
    );
    for row in &rows {
        assert_eq!(row.len(), 6, "{row:?}");
        for time in &row[4..] {
            let parsed: Result<prost_types::Timestamp, _> = time.parse();
            assert!(
                parsed.is_ok() && time.ends_with('Z'),
                "{time} is no RFC 3339 time"
            );
        }
        assert!(row[4] <= row[5], "created after its last activity: {row:?}");
    }

    let ids = |run: Run| -> Vec<String> {
        table(&run.expect_code(0).stdout)
            .into_iter()
            .map(|row| row[0].clone())
            .collect()
    };
    assert_eq!(ids(db.plylog(&["games", "--kind", "gomoku"])), ["gmk"]);
    assert_eq!(
        ids(db.plylog(&["games", "--kind", "gomoku 15x15"])),
        ["gmk"]
    );
    assert_eq!(
        ids(db.plylog(&["games", "--kind", "gomoku 15"])),
        Vec::<String>::new()
    );
    assert_eq!(ids(db.plylog(&["games", "--status", "finished"])), ["ttt"]);
    assert_eq!(
        ids(db.plylog(&["games", "--status", "in-play", "--limit", "2"])),
        ["c4", "gmk"]
    );
    assert_eq!(
        ids(db.plylog(&["games", "--since", "2000-01-01T00:00:00Z"])).len(),
        4
    );
    assert_eq!(
        ids(db.plylog(&["games", "--since", "2100-01-01T00:00:00Z"])),
        Vec::<String>::new()
    );

    let json = db.plylog(&["games", "--format", "json"]).expect_code(0);
    let games: Vec<serde_json::Value> = json
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object a line"))
        .collect();
    assert_eq!(games.len(), 4, "{}", json.stdout);
    assert_eq!(games[0]["gameId"], "ttt");
    assert_eq!(games[0]["kind"], "tic-tac-toe");
    assert_eq!(games[0]["status"], "won");
    assert_eq!(games[0]["winner"], 0);
    assert_eq!(games[0]["moves"], 5);
    assert_eq!(games[0]["sequence"], 6);
    assert_eq!(games[1]["status"], "in-play");
    assert_eq!(games[1]["winner"], serde_json::Value::Null);
}

async fn show_draws_the_board_after_the_latest_event_or_an_earlier_one(backend: Backend) {
    let db = four_games(backend).await;
    let latest = db.plylog(&["show", "ttt"]).expect_code(0).stdout;
    let lines: Vec<&str> = latest.lines().collect();
    assert_eq!(
        lines[..3],
        [
            "game    ttt",
            "rules   tic-tac-toe",
            "seats   0 X alice, 1 O bob"
        ],
        "{latest}"
    );
    assert!(
        lines[3].starts_with("event   6 of 6: move_played at "),
        "{latest}"
    );
    assert_eq!(
        lines[4..],
        [
            "moves   5 (round 0)",
            "status  won by seat 0 (X): line completed",
            "",
            "XXX",
            "OO.",
            "...",
        ],
        "{latest}"
    );

    let earlier = db
        .plylog(&["show", "ttt", "--at", "3"])
        .expect_code(0)
        .stdout;
    assert!(earlier.contains("event   3 of 6: move_played"), "{earlier}");
    assert!(
        earlier.contains("status  in play: seat 0 (X) to move"),
        "{earlier}"
    );
    assert!(earlier.ends_with("\nX..\nO..\n...\n"), "{earlier}");

    let connect_four = db.plylog(&["show", "c4"]).expect_code(0).stdout;
    assert!(
        connect_four.ends_with("\n...O...\n...XX..\n"),
        "{connect_four}"
    );
    assert!(connect_four.contains("status  in play: seat 1 (O) to move"));

    let past = db.plylog(&["show", "ttt", "--at", "7"]).expect_code(3);
    assert_eq!(
        past.stderr.trim(),
        "plylog: game ttt has events 1 to 6; --at 7 is not one of them"
    );
    let missing = db.plylog(&["show", "nope"]).expect_code(3);
    assert_eq!(
        missing.stderr.trim(),
        "plylog: no game nope in the database"
    );
}

/// Every game of `db` exported.
fn export_all(db: &Db) -> String {
    let run = db.plylog(&["export", "--all"]).expect_code(0);
    assert!(run.stderr.contains("exported"), "{}", run.stderr);
    run.stdout
}

async fn export_then_import_then_export_gives_the_same_lines(backend: Backend) {
    let source = four_games(backend).await;
    let exported = export_all(&source);
    let lines: Vec<serde_json::Value> = exported
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object a line"))
        .collect();
    // 6 events of tic-tac-toe, 4 of Connect Four, 1 of gomoku, 4 of undo.
    assert_eq!(lines.len(), 15, "{exported}");
    let first = &lines[0];
    assert_eq!(first["gameId"], "ttt");
    assert_eq!(first["sequence"], "1", "64-bit integers are strings");
    assert_eq!(first["gameCreated"]["rules"]["mnk"]["rows"], 3);
    assert_eq!(
        first["gameCreated"]["undoPolicy"], "UNDO_POLICY_LAST_MOVER",
        "enums by name"
    );
    assert!(
        first["recordedAt"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    assert_eq!(
        lines[5]["movePlayed"]["outcome"]["reason"],
        "END_REASON_LINE_COMPLETED"
    );
    assert_eq!(lines[14]["moveUndone"]["undoneSequence"], "3");

    // One game alone: its lines, in sequence order.
    let one = source.plylog(&["export", "c4"]).expect_code(0).stdout;
    assert_eq!(
        one,
        exported
            .lines()
            .skip(6)
            .take(4)
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    );

    // Into a fresh database of the same backend, from a file; and into a
    // fresh SQLite file from standard input.
    let file = source.dir.path().join("games.jsonl");
    std::fs::write(&file, &exported).expect("export written");
    let same = Db::fresh(backend).await;
    let imported = same
        .plylog(&["import", &file.display().to_string(), "--no-seat-tokens"])
        .expect_code(0);
    assert_eq!(imported.stdout.trim(), "imported 4 games (15 events)");
    assert_eq!(export_all(&same), exported);
    let sqlite = Db::fresh(Backend::Sqlite).await;
    let url = sqlite.url.clone();
    run(
        &["import", "-", "--no-seat-tokens", "--database-url", &url],
        Some(exported.clone().into_bytes()),
    )
    .expect_code(0);
    assert_eq!(export_all(&sqlite), exported);
    // The imported games are what the server would have: they verify, and
    // list as the originals do.
    same.plylog(&["verify"]).expect_code(0);
    assert_eq!(
        table(&same.plylog(&["games"]).expect_code(0).stdout),
        table(&source.plylog(&["games"]).expect_code(0).stdout)
    );
}

/// The 438 lichess games of the fixture, imported from PGN: each is
/// played through the rules, and exported as PGN gives back its moves and
/// result (lichess's clock comments aside). A game with an illegal move
/// writes nothing.
async fn the_sample_pgn_imports_through_the_rules_and_exports_back_to_its_movetext(
    backend: Backend,
) {
    use plylog::rules::chess::pgn;
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/chess/lichess_db_sample.pgn"
    );
    let db = Db::fresh(backend).await;
    let imported = db
        .plylog(&["import", sample, "--format", "pgn", "--no-seat-tokens"])
        .expect_code(0);
    assert!(
        imported.stdout.starts_with("imported 438 games ("),
        "{}",
        imported.stdout
    );
    db.plylog(&["verify"]).expect_code(0);
    let exported = db
        .plylog(&["export", "--all", "--format", "pgn"])
        .expect_code(0)
        .stdout;
    let exported = pgn::parse(&exported).expect("the export reads");
    let source = pgn::parse(&std::fs::read_to_string(sample).expect("the sample")).expect("reads");
    assert_eq!(exported.len(), source.len());
    for game in &source {
        let site = game.tag("Site").expect("a site");
        let id = site.rsplit('/').next().expect("an id");
        let back = exported
            .iter()
            .find(|g| g.tag("Site") == Some(id))
            .unwrap_or_else(|| panic!("{site} exported"));
        let sans = |g: &pgn::PgnGame| g.moves.iter().map(|m| m.san.clone()).collect::<Vec<_>>();
        assert_eq!(sans(back), sans(game), "{site}");
        assert_eq!(back.result, game.result, "{site}");
        assert_eq!(back.tag("White"), game.tag("White"), "{site}");
        assert_eq!(back.tag("Date"), game.tag("UTCDate"), "{site}");
    }

    // PGN text imported into `db` from a file beside it.
    let import_pgn = |db: &Db, text: &str| {
        let file = db.dir.path().join("games.pgn");
        std::fs::write(&file, text).expect("file written");
        db.plylog(&[
            "import",
            &file.display().to_string(),
            "--format",
            "pgn",
            "--no-seat-tokens",
        ])
    };
    // A site that is a place names no game; a variant other than chess
    // and Chess960 is refused.
    let fresh = Db::fresh(backend).await;
    let places = "[Site \"London ENG\"]\n\n1. e4 *\n\n[Site \"London ENG\"]\n\n1. d4 *\n";
    import_pgn(&fresh, places).expect_code(0);
    let listed = fresh.plylog(&["games"]).expect_code(0).stdout;
    assert!(
        listed.contains("pgn-1") && listed.contains("pgn-2"),
        "{listed}"
    );
    let refused = import_pgn(&fresh, "[Variant \"Atomic\"]\n\n1. e4 *\n").expect_code(3);
    assert!(
        refused.stderr.contains("variant \"Atomic\""),
        "{}",
        refused.stderr
    );

    // An illegal third move: refused, naming the game and the move, and
    // nothing written.
    let fresh = Db::fresh(backend).await;
    let bad = "[Site \"x/ok\"]\n\n1. e4 e5 *\n\n[Site \"x/bad\"]\n\n1. e4 e5 2. Ke3 *\n";
    let refused = import_pgn(&fresh, bad).expect_code(3);
    assert_eq!(
        refused.stderr.trim(),
        "plylog: game 2: move 3 (Ke3): Ke3 is not a legal move here"
    );
    let listed = fresh.plylog(&["games"]).expect_code(0).stdout;
    assert_eq!(listed.lines().count(), 1, "only the header: {listed}");
}

/// `lines` with the JSON of line `number` (1-based) changed by `edit`.
fn edit_line(lines: &str, number: usize, edit: impl Fn(&mut serde_json::Value)) -> String {
    lines
        .lines()
        .enumerate()
        .map(|(index, line)| {
            if index + 1 != number {
                return format!("{line}\n");
            }
            let mut value: serde_json::Value = serde_json::from_str(line).expect("JSON");
            edit(&mut value);
            format!("{value}\n")
        })
        .collect()
}

async fn import_refuses_a_log_that_does_not_replay_and_writes_nothing_of_that_game(
    backend: Backend,
) {
    let source = four_games(backend).await;
    let exported = export_all(&source);
    // Line 9 is c4's event 3, O's drop into column 3; make it claim row 5,
    // where X's disc lies.
    let bad = edit_line(&exported, 9, |event| {
        event["movePlayed"]["placement"]["row"] = 5.into();
    });
    let target = Db::fresh(backend).await;
    let file = source.dir.path().join("bad.jsonl");
    std::fs::write(&file, &bad).expect("file written");
    let refused = target
        .plylog(&["import", &file.display().to_string(), "--no-seat-tokens"])
        .expect_code(3);
    assert_eq!(
        refused.stderr.trim(),
        "plylog: line 9: game c4 does not replay: event 3: Drop { column: 3 } recorded at \
         Some(Coord { row: 5, col: 3 }), not where it lands",
    );
    // Nothing was written, not even the game before it.
    assert_eq!(refused.stdout, "");
    let listed = target.plylog(&["games"]).expect_code(0).stdout;
    assert_eq!(listed.lines().count(), 1, "only the header: {listed}");
    let missing = target.plylog(&["export", "c4"]).expect_code(3);
    assert_eq!(missing.stderr.trim(), "plylog: no game c4 in the database");

    // A line that is not a GameEvent, and a game split across the file.
    let garbled = exported.replacen("\"gameCreated\"", "\"gameCreatd\"", 1);
    std::fs::write(&file, garbled).expect("file written");
    let refused = Db::fresh(backend)
        .await
        .plylog(&["import", &file.display().to_string(), "--no-seat-tokens"])
        .expect_code(3);
    assert!(
        refused.stderr.starts_with("plylog: line 1: "),
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains("gameCreatd"), "{}", refused.stderr);
    let mut split: Vec<&str> = exported.lines().collect();
    split.swap(1, 6);
    std::fs::write(&file, split.join("\n")).expect("file written");
    let refused = Db::fresh(backend)
        .await
        .plylog(&["import", &file.display().to_string(), "--no-seat-tokens"])
        .expect_code(3);
    assert!(
        refused
            .stderr
            .starts_with("plylog: line 3: game ttt again, after other games' events"),
        "{}",
        refused.stderr
    );
}

async fn import_of_a_game_the_database_has_is_refused_unless_skipped(backend: Backend) {
    let db = four_games(backend).await;
    let exported = export_all(&db);
    let file = db.dir.path().join("games.jsonl");
    std::fs::write(&file, &exported).expect("file written");
    let file = file.display().to_string();
    let refused = db
        .plylog(&["import", &file, "--no-seat-tokens"])
        .expect_code(3);
    assert_eq!(
        refused.stderr.trim(),
        "plylog: line 1: game ttt exists already in the database (--skip-existing skips it)"
    );
    let skipped = db
        .plylog(&["import", &file, "--no-seat-tokens", "--skip-existing"])
        .expect_code(0);
    assert_eq!(
        skipped.stdout.trim(),
        "imported 0 games (0 events), skipped 4 that exist already"
    );
    assert_eq!(export_all(&db), exported);
}

/// Stores `event` as a row of the events table of `db`, directly: the
/// games table is left as it was.
async fn insert_behind_the_servers_back(db: &Db, event: &pb::GameEvent) {
    use sqlx::Connection;
    // The event takes the feed's next position as a server's write would
    // (see the migrations `*_feed_positions.sql`).
    macro_rules! insert {
        ($connection:ty, $take_position:expr) => {{
            let mut conn = <$connection>::connect(&db.url).await.expect("connects");
            // Linked onto the event before, as a server would: what is
            // wrong with it is its place in the game, not its bytes.
            let (previous,): (Vec<u8>,) = sqlx::query_as(
                "SELECT chain FROM events WHERE game_id = $1 AND sequence = $2",
            )
            .bind(&event.game_id)
            .bind(event.sequence as i64 - 1)
            .fetch_one(&mut conn)
            .await
            .expect("the event before");
            let payload = event.encode_to_vec();
            let chain = plylog::store::chain::link(
                &previous.try_into().expect("a chain value"),
                &event.game_id,
                event.sequence,
                &payload,
            );
            let (position,): (i64,) = sqlx::query_as($take_position)
                .fetch_one(&mut conn)
                .await
                .expect("a feed position");
            sqlx::query(
                "INSERT INTO events \
                 (game_id, sequence, event_type, event_version, payload, recorded_at_ms, chain, \
                  position) \
                 VALUES ($1, $2, 'move_played', 1, $3, 1800000000000, $4, $5)",
            )
            .bind(&event.game_id)
            .bind(event.sequence as i64)
            .bind(payload)
            .bind(chain.to_vec())
            .bind(position)
            .execute(&mut conn)
            .await
            .expect("row inserted");
            conn.close().await.expect("closes");
        }};
    }
    match db.backend {
        Backend::Sqlite => insert!(
            sqlx::SqliteConnection,
            "SELECT coalesce(max(position), 0) + 1 FROM events"
        ),
        Backend::Postgres => insert!(
            sqlx::PgConnection,
            "UPDATE feed_head SET position = position + 1 RETURNING position"
        ),
    }
}

/// Issue 35, item 11: `plylog verify` finds every one-bit change of a
/// stored event, payload or chain value (it missed 137 of 300 payload
/// flips, 73 of them in fields replay could check), and names the event.
async fn verify_finds_every_changed_bit_of_the_stored_events(backend: Backend) {
    use rand::{Rng, SeedableRng};
    use sqlx::Connection;
    let db = four_games(backend).await;
    db.plylog(&["verify"]).expect_code(0);
    macro_rules! rows {
        ($connection:ty) => {{
            let mut conn = <$connection>::connect(&db.url).await.expect("connects");
            let rows: Vec<(String, i64, Vec<u8>, Vec<u8>)> = sqlx::query_as(
                "SELECT game_id, sequence, payload, chain FROM events ORDER BY game_id, sequence",
            )
            .fetch_all(&mut conn)
            .await
            .expect("the events");
            conn.close().await.expect("closes");
            rows
        }};
    }
    macro_rules! write {
        ($connection:ty, $game:expr, $sequence:expr, $payload:expr, $chain:expr) => {{
            let mut conn = <$connection>::connect(&db.url).await.expect("connects");
            sqlx::query(
                "UPDATE events SET payload = $1, chain = $2 WHERE game_id = $3 AND sequence = $4",
            )
            .bind($payload)
            .bind($chain)
            .bind($game)
            .bind($sequence)
            .execute(&mut conn)
            .await
            .expect("row written");
            conn.close().await.expect("closes");
        }};
    }
    let events = match db.backend {
        Backend::Sqlite => rows!(sqlx::SqliteConnection),
        Backend::Postgres => rows!(sqlx::PgConnection),
    };
    let seed = 35;
    println!("seed {seed}");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let (flips, in_chain) = (300, 30);
    let mut found = 0;
    for flip in 0..flips + in_chain {
        let (game, sequence, payload, chain) = &events[rng.random_range(0..events.len())];
        let (mut bad_payload, mut bad_chain) = (payload.clone(), chain.clone());
        let column = if flip < flips {
            &mut bad_payload
        } else {
            &mut bad_chain
        };
        let at = rng.random_range(0..column.len());
        column[at] ^= 1 << rng.random_range(0..8);
        match db.backend {
            Backend::Sqlite => write!(
                sqlx::SqliteConnection,
                game,
                sequence,
                bad_payload,
                bad_chain
            ),
            Backend::Postgres => write!(sqlx::PgConnection, game, sequence, bad_payload, bad_chain),
        }
        let verified = db.plylog(&["verify", game]).expect_code(1);
        let named = format!("game {game}: event {sequence} ");
        assert!(
            verified.stdout.starts_with(&named),
            "flip {flip} (byte {at} of event {sequence} of {game}): {}",
            verified.stdout
        );
        found += 1;
        match db.backend {
            Backend::Sqlite => write!(sqlx::SqliteConnection, game, sequence, payload, chain),
            Backend::Postgres => write!(sqlx::PgConnection, game, sequence, payload, chain),
        }
    }
    println!(
        "verify found {found} of {} one-bit changes",
        flips + in_chain
    );
    db.plylog(&["verify"]).expect_code(0);
}

/// Events stored before the integrity chain came have an empty chain value
/// after the migration that adds it: the next open (`plylog migrate`, or a
/// server starting) computes them, and the games verify and are served.
async fn events_stored_before_the_chain_get_theirs_at_the_next_open(backend: Backend) {
    use sqlx::Connection;
    let db = four_games(backend).await;
    macro_rules! forget_chains {
        ($connection:ty) => {{
            let mut conn = <$connection>::connect(&db.url).await.expect("connects");
            sqlx::query("UPDATE events SET chain = $1")
                .bind(Vec::<u8>::new())
                .execute(&mut conn)
                .await
                .expect("chains emptied");
            conn.close().await.expect("closes");
        }};
    }
    let forget = || async {
        match db.backend {
            Backend::Sqlite => forget_chains!(sqlx::SqliteConnection),
            Backend::Postgres => forget_chains!(sqlx::PgConnection),
        }
    };
    forget().await;
    // Read-only, verify computes nothing: every game's chain is missing.
    let unfilled = db.plylog(&["verify"]).expect_code(1).stdout;
    assert!(unfilled.ends_with("checked 4 games: 4 bad\n"), "{unfilled}");
    db.plylog(&["migrate"]).expect_code(0);
    assert_eq!(
        db.plylog(&["verify"]).expect_code(0).stdout,
        "checked 4 games: 0 bad\n"
    );
    forget().await;
    let (server, mut client) = serve(&db, None).await;
    let game = client
        .get_game(pb::GetGameRequest {
            game_id: "c4".into(),
            at_sequence: None,
        })
        .await
        .expect("served")
        .into_inner();
    assert_eq!(game.game.expect("a game").last_sequence, 4);
    stop(server);
    assert_eq!(
        db.plylog(&["verify"]).expect_code(0).stdout,
        "checked 4 games: 0 bad\n"
    );
}

/// A database from before the feed (its events have no positions) is
/// numbered by `plylog migrate`: dense from 1, in the order the events were
/// recorded, each game's in sequence order even where its clock stepped
/// back, and the next write takes the next position.
async fn events_stored_before_the_feed_are_numbered_by_the_migration_in_each_games_order(
    backend: Backend,
) {
    use sqlx::Connection;
    let db = four_games(backend).await;
    // Back to the schema before the feed: no positions, the migration not
    // applied; and game c4's third event recorded before its second (a
    // clock that stepped back).
    let before_the_feed = [
        // The lifecycle came after the feed: its index is on positions.
        BEFORE_LIFECYCLES,
        "DROP INDEX events_position",
        "ALTER TABLE events DROP COLUMN position",
        "DELETE FROM _sqlx_migrations WHERE version = 20261207000001",
        "UPDATE events SET recorded_at_ms = 1000 * sequence",
        "UPDATE events SET recorded_at_ms = 1500 WHERE game_id = 'c4' AND sequence = 3",
    ];
    // The rows as (position, game, sequence), in position order.
    let query = "SELECT position, game_id, sequence FROM events ORDER BY position";
    macro_rules! rows {
        ($connection:ty) => {{
            let mut conn = <$connection>::connect(&db.url).await.expect("connects");
            let rows: Vec<(i64, String, i64)> = sqlx::query_as(query)
                .fetch_all(&mut conn)
                .await
                .expect("positions");
            conn.close().await.expect("closes");
            rows
        }};
    }
    execute_behind_the_servers_back(&db, &before_the_feed.join(";\n")).await;
    if db.backend == Backend::Postgres {
        execute_behind_the_servers_back(&db, "DROP TABLE feed_head").await;
    }
    db.plylog(&["migrate"]).expect_code(0);
    let rows = match db.backend {
        Backend::Sqlite => rows!(sqlx::SqliteConnection),
        Backend::Postgres => rows!(sqlx::PgConnection),
    };
    let positions: Vec<i64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(positions, (1..=rows.len() as i64).collect::<Vec<_>>());
    // By time (1 s per sequence), then game id; c4's third event comes
    // with its second, never before it.
    let order: Vec<String> = rows.iter().map(|(_, g, s)| format!("{g} {s}")).collect();
    assert_eq!(
        order,
        [
            "c4 1", "gmk 1", "ttt 1", "undo 1", "c4 2", "c4 3", "ttt 2", "undo 2", "ttt 3",
            "undo 3", "c4 4", "ttt 4", "undo 4", "ttt 5", "ttt 6"
        ]
    );
    let (server, mut client) = serve(&db, None).await;
    play_all(&mut client, "gmk", &[place(7, 7)]).await;
    stop(server);
    let rows = match db.backend {
        Backend::Sqlite => rows!(sqlx::SqliteConnection),
        Backend::Postgres => rows!(sqlx::PgConnection),
    };
    assert_eq!(rows.last(), Some(&(16, "gmk".to_owned(), 2)));
}

/// A database from before ListGames' filter (no tags, no last activity
/// column) is brought up by `plylog migrate`: each game's kind and players
/// are read off its GameCreated event, its last activity off its last
/// event, and every filter finds them.
async fn games_stored_before_the_listing_tags_are_tagged_by_the_migration(backend: Backend) {
    let db = four_games(backend).await;
    let before_the_listing = [
        "DROP TABLE game_tags",
        "DROP INDEX games_status",
        "DROP INDEX games_created",
        "DROP INDEX games_updated",
        "DROP INDEX games_untagged",
        "ALTER TABLE games DROP COLUMN tagged",
        "ALTER TABLE games DROP COLUMN updated_at_ms",
        "DELETE FROM _sqlx_migrations WHERE version = 20261208000001",
    ];
    execute_behind_the_servers_back(&db, &before_the_listing.join(";\n")).await;
    db.plylog(&["migrate"]).expect_code(0);
    let (server, mut client) = serve(&db, None).await;
    create(
        &mut client,
        "new",
        pb::rule_set::Kind::ConnectFour(Default::default()),
    )
    .await;
    let listed = |filter: &str| {
        let mut client = client.clone();
        let filter = filter.to_owned();
        async move {
            let games = client
                .list_games(pb::ListGamesRequest {
                    filter,
                    ..Default::default()
                })
                .await
                .expect("listed")
                .into_inner()
                .games;
            games
                .into_iter()
                .map(|g| (g.game_id, g.updated_at))
                .collect::<Vec<_>>()
        }
    };
    let ids = |games: Vec<(String, Option<prost_types::Timestamp>)>| {
        games.into_iter().map(|g| g.0).collect::<Vec<_>>()
    };
    assert_eq!(ids(listed("kind = \"connect_four\"").await), ["c4", "new"]);
    assert_eq!(ids(listed("kind = \"gomoku\"").await), ["gmk"]);
    assert_eq!(ids(listed("status = WON").await), ["ttt"]);
    assert_eq!(
        ids(listed("seats.player_id = \"alice\" AND kind = \"mnk\"").await),
        ["ttt", "undo"]
    );
    // The last activity was filled from each game's last event: only the
    // new game is at or after its own creation.
    let all = listed("").await;
    assert!(all.iter().all(|(_, updated)| updated.is_some()), "{all:?}");
    let (_, new_at) = all.last().expect("the new game").clone();
    let after = format!("updated_at >= \"{}\"", new_at.expect("a time"));
    assert_eq!(ids(listed(&after).await), ["new"]);
    stop(server);
}

/// Events stored before lifecycles were get the lifecycle the server
/// would have written, from `plylog migrate`: the marks after a rollback
/// of the migration equal those written live, a game ended (won) among
/// them.
async fn events_stored_before_lifecycles_are_marked_as_the_server_marks_them(backend: Backend) {
    use sqlx::Connection;
    let db = four_games(backend).await;
    let query = "SELECT game_id, sequence, lifecycle FROM events ORDER BY position";
    macro_rules! marks {
        ($connection:ty) => {{
            let mut conn = <$connection>::connect(&db.url).await.expect("connects");
            let rows: Vec<(String, i64, Option<i32>)> = sqlx::query_as(query)
                .fetch_all(&mut conn)
                .await
                .expect("marks");
            conn.close().await.expect("closes");
            rows
        }};
    }
    let marks = async || match db.backend {
        Backend::Sqlite => marks!(sqlx::SqliteConnection),
        Backend::Postgres => marks!(sqlx::PgConnection),
    };
    let live = marks().await;
    let ended: Vec<_> = live.iter().filter(|r| r.2 == Some(4)).collect();
    assert_eq!(ended, [&("ttt".to_owned(), 6, Some(4))], "{live:?}");
    execute_behind_the_servers_back(&db, BEFORE_LIFECYCLES).await;
    db.plylog(&["migrate"]).expect_code(0);
    assert_eq!(marks().await, live);
}

/// `plylog feed` prints the server's feed as JSON lines and keeps its
/// place in a checkpoint file: a second run prints only what came after
/// the first, and a filtered run only what matches.
async fn feed_prints_each_event_once_across_runs_that_resume_from_the_checkpoint_file(
    backend: Backend,
) {
    let db = four_games(backend).await;
    let (server, mut client) = serve(&db, None).await;
    let url = format!("http://127.0.0.1:{}", server.port);
    let checkpoint = db.dir.path().join("feed.checkpoint");
    let checkpoint_arg = checkpoint.display().to_string();
    let feed = |more: &[&str]| {
        let args = [&["feed", "--url", url.as_str()][..], more].concat();
        run(&args, None).expect_code(0).stdout
    };
    // Each line's position and (game, sequence).
    let lines = |stdout: &str| -> Vec<String> {
        stdout
            .lines()
            .map(|line| {
                let message: serde_json::Value = serde_json::from_str(line).expect("JSON");
                let event = &message["event"];
                format!(
                    "{} {} {}",
                    event["position"].as_str().expect("a position"),
                    event["event"]["gameId"].as_str().expect("a game"),
                    event["event"]["sequence"].as_str().expect("a sequence")
                )
            })
            .collect()
    };
    let first = lines(&feed(&["--checkpoint-file", &checkpoint_arg]));
    assert_eq!(first.len(), 15);
    assert_eq!(first[0], "1 ttt 1");
    assert_eq!(std::fs::read_to_string(&checkpoint).unwrap(), "15\n");
    play_all(&mut client, "gmk", &[place(7, 7)]).await;
    let second = lines(&feed(&["--checkpoint-file", &checkpoint_arg]));
    assert_eq!(second, ["16 gmk 2"]);
    assert_eq!(std::fs::read_to_string(&checkpoint).unwrap(), "16\n");
    let created = lines(&feed(&["--event-type", "game_created"]));
    assert_eq!(created, ["1 ttt 1", "7 c4 1", "11 gmk 1", "12 undo 1"]);
    let refused = run(&["feed", "--url", &url, "--after", "17"], None).expect_code(3);
    assert!(
        refused
            .stderr
            .starts_with("plylog: the server answered OutOfRange: position 17"),
        "{refused:?}"
    );
    stop(server);
}

/// `plylog verify` reads the event feed too: a missing position, a game's
/// events out of sequence order, and (SQLite, whose column may be NULL) an
/// event without a position, which no feed reader would ever get.
async fn verify_finds_a_gap_in_the_feed_a_game_out_of_order_and_an_event_without_a_position(
    backend: Backend,
) {
    use sqlx::Connection;
    let db = four_games(backend).await;
    async fn change(db: &Db, statements: &[&str]) {
        macro_rules! run_sql {
            ($connection:ty) => {{
                let mut conn = <$connection>::connect(&db.url).await.expect("connects");
                for sql in statements {
                    sqlx::query(sql).execute(&mut conn).await.expect(sql);
                }
                conn.close().await.expect("closes");
            }};
        }
        match db.backend {
            Backend::Sqlite => run_sql!(sqlx::SqliteConnection),
            Backend::Postgres => run_sql!(sqlx::PgConnection),
        }
    }
    assert_eq!(
        db.plylog(&["verify"]).expect_code(0).stdout,
        "checked 4 games: 0 bad\n"
    );
    // The last event moved 100 positions on: a gap.
    change(
        &db,
        &["UPDATE events SET position = 115 WHERE position = 15"],
    )
    .await;
    assert_eq!(
        db.plylog(&["verify"]).expect_code(1).stdout,
        "feed of cell 0: positions 15 to 114 are missing\n\
         checked 4 games: 0 bad\n\
         the event feed: 1 problem\n"
    );
    // Back, and ttt's events 2 and 3 (positions 2 and 3) swapped.
    change(
        &db,
        &[
            "UPDATE events SET position = 15 WHERE position = 115",
            "UPDATE events SET position = -2 WHERE position = 2",
            "UPDATE events SET position = 2 WHERE position = 3",
            "UPDATE events SET position = 3 WHERE position = -2",
        ],
    )
    .await;
    assert_eq!(
        db.plylog(&["verify"]).expect_code(1).stdout,
        "feed of cell 0: game ttt: sequence 2 at position 3 comes after sequence 3\n\
         checked 4 games: 0 bad\n\
         the event feed: 1 problem\n"
    );
    if backend == Backend::Sqlite {
        change(
            &db,
            &[
                "UPDATE events SET position = -2 WHERE position = 2",
                "UPDATE events SET position = 2 WHERE position = 3",
                "UPDATE events SET position = 3 WHERE position = -2",
                "UPDATE events SET position = NULL WHERE position = 15",
            ],
        )
        .await;
        assert_eq!(
            db.plylog(&["verify"]).expect_code(1).stdout,
            "feed of cell 0: the games' logs hold 15 events, the feed 14 (an event without a position is never sent)\n\
             checked 4 games: 0 bad\n\
             the event feed: 1 problem\n"
        );
    }
}

/// `plylog verify` reads a game with a snapshot from its first event, and
/// checks the snapshot whole against the log's replay: a changed byte of
/// it is named (the server would skip it and replay).
async fn verify_checks_a_games_snapshot_against_its_log(backend: Backend) {
    use sqlx::Connection;
    let db = Db::fresh(backend).await;
    let (server, mut client) = serve_with(&db, None, &["--snapshot-every", "2"]).await;
    let c4 = pb::rule_set::Kind::ConnectFour(pb::ConnectFourRules::default());
    create(&mut client, "c4", c4).await;
    play_all(
        &mut client,
        "c4",
        &[drop_in(3), drop_in(3), drop_in(4), drop_in(4)],
    )
    .await;
    stop(server);
    assert_eq!(
        db.plylog(&["verify"]).expect_code(0).stdout,
        "checked 1 game: 0 bad\n"
    );
    macro_rules! change_snapshot {
        ($connection:ty) => {{
            let mut conn = <$connection>::connect(&db.url).await.expect("connects");
            let (sequence, mut payload): (i64, Vec<u8>) =
                sqlx::query_as("SELECT sequence, payload FROM snapshots WHERE game_id = 'c4'")
                    .fetch_one(&mut conn)
                    .await
                    .expect("a snapshot");
            let last = payload.len() - 1;
            payload[last] ^= 1;
            sqlx::query("UPDATE snapshots SET payload = $1")
                .bind(payload)
                .execute(&mut conn)
                .await
                .expect("changed");
            conn.close().await.expect("closes");
            sequence
        }};
    }
    let sequence = match db.backend {
        Backend::Sqlite => change_snapshot!(sqlx::SqliteConnection),
        Backend::Postgres => change_snapshot!(sqlx::PgConnection),
    };
    assert_eq!(
        db.plylog(&["verify"]).expect_code(1).stdout,
        format!(
            "game c4: the snapshot at sequence {sequence} is unusable: its checksum does not \
             match its bytes\nchecked 1 game: 1 bad\n"
        )
    );
}

async fn verify_names_the_game_and_sequence_of_a_move_stored_after_the_game_ended(
    backend: Backend,
) {
    let db = four_games(backend).await;
    let clean = db.plylog(&["verify"]).expect_code(0);
    assert_eq!(clean.stdout, "checked 4 games: 0 bad\n");

    // O answers after X has won: a well-formed move, on an empty cell, by
    // the seat that would be next; stored as sequence 7 behind the
    // server's back, the games table left as it was.
    let late = pb::GameEvent {
        game_id: "ttt".into(),
        sequence: 7,
        recorded_at: Some(prost_types::Timestamp {
            seconds: 1_800_000_000,
            nanos: 0,
        }),
        round: 0,
        kind: Some(pb::game_event::Kind::MovePlayed(pb::MovePlayed {
            seat: 1,
            r#move: Some(place(2, 2)),
            placement: Some(pb::Cell { row: 2, col: 2 }),
            ply: 6,
            ..Default::default()
        })),
    };
    insert_behind_the_servers_back(&db, &late).await;

    let found = db.plylog(&["verify"]).expect_code(1);
    assert_eq!(
        found.stdout,
        "game ttt: event 7 does not replay: a move after the game ended\n\
         game ttt: the games table says the last event is 6, the log ends at 7\n\
         checked 4 games: 1 bad\n"
    );
    // Named games only; the others are not read.
    db.plylog(&["verify", "c4", "gmk"])
        .expect_code(0)
        .stdout
        .contains("checked 2 games: 0 bad")
        .then_some(())
        .expect("two good games");
    db.plylog(&["verify", "ttt"]).expect_code(1);
    let missing = db.plylog(&["verify", "nope"]).expect_code(3);
    assert_eq!(
        missing.stderr.trim(),
        "plylog: no game nope in the database"
    );
    // The listing says so too, and showing the game says why.
    let listed = table(&db.plylog(&["games"]).expect_code(0).stdout);
    assert_eq!(listed[0][..4], ["ttt", "tic-tac-toe", "corrupt log", "?"]);
    let shown = db.plylog(&["show", "ttt"]).expect_code(3);
    assert_eq!(
        shown.stderr.trim(),
        "plylog: game ttt: event 7: a move after the game ended"
    );
}

/// A server that cannot have its seat-token secret stops before it opens
/// the database (on PostgreSQL, none given; on SQLite, a file that is not
/// there), says why in one line with the OS's words once, and leaves the
/// database as it was: `plylog games` still finds nothing migrated.
async fn a_start_refused_for_its_secret_leaves_the_database_untouched(backend: Backend) {
    let db = Db::fresh(backend).await;
    let missing = db.dir.path().join("no-such-secret");
    let missing = missing.display().to_string();
    let args: Vec<&str> = match backend {
        Backend::Postgres => vec!["serve", "--listen", "127.0.0.1:0"],
        Backend::Sqlite => vec![
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--seat-token-secret-file",
            &missing,
        ],
    };
    let refused = db.plylog(&args).expect_code(1);
    let why = match backend {
        Backend::Postgres => "pass --seat-token-secret-file <path>",
        Backend::Sqlite => "No such file or directory",
    };
    let printed = format!("{}{}", refused.stdout, refused.stderr);
    assert_eq!(printed.matches(why).count(), 1, "{refused:#?}");
    let expected = match backend {
        Backend::Sqlite => "plylog: no SQLite database at",
        Backend::Postgres => "run plylog migrate",
    };
    let games = db.plylog(&["games"]).expect_code(3);
    assert!(games.stderr.contains(expected), "{games:?}");
}

async fn read_only_commands_neither_create_nor_migrate_a_database(backend: Backend) {
    let db = Db::fresh(backend).await;
    let file = db.dir.path().join("plylog.db");
    for command in [
        &["games"][..],
        &["show", "g"],
        &["export", "--all"],
        &["verify"],
    ] {
        let refused = db.plylog(command).expect_code(3);
        let expected = match backend {
            Backend::Sqlite => format!("plylog: no SQLite database at {}", file.display()),
            Backend::Postgres => "run plylog migrate".to_owned(),
        };
        assert!(
            refused.stderr.contains(&expected),
            "{command:?}: {refused:?}"
        );
        assert_eq!(refused.stderr.lines().count(), 1, "{refused:?}");
    }
    assert!(
        !file.exists(),
        "a read-only command created {}",
        file.display()
    );

    let migrated = db.plylog(&["migrate"]).expect_code(0).stdout;
    let applied: Vec<&str> = migrated.lines().collect();
    // Every migration of the backend's folder, one line each.
    let folder = match backend {
        Backend::Sqlite => "sqlite",
        Backend::Postgres => "postgres",
    };
    let migrations = std::fs::read_dir(format!("migrations/{folder}"))
        .expect("the migrations folder")
        .count();
    assert_eq!(applied.len(), migrations, "{migrated}");
    assert!(
        applied[0].ends_with(": applied 20261129000001 event log"),
        "{migrated}"
    );
    let again = db.plylog(&["migrate"]).expect_code(0).stdout;
    assert!(
        again.ends_with(": up to date, no migration applied\n"),
        "{again}"
    );
    let empty = db.plylog(&["games"]).expect_code(0).stdout;
    assert_eq!(empty.lines().count(), 1, "only the header: {empty}");
    assert_eq!(
        db.plylog(&["verify"]).expect_code(0).stdout,
        "checked 0 games: 0 bad\n"
    );
    // Reading leaves no WAL files behind (a connection opened read-only
    // would).
    for leftover in ["plylog.db-wal", "plylog.db-shm"] {
        assert!(
            !db.dir.path().join(leftover).exists(),
            "{leftover} left behind"
        );
    }
}

async fn an_imported_game_keeps_its_players_seat_tokens_under_the_same_secret(backend: Backend) {
    let source = Db::fresh(backend).await;
    let secret = source.secret_file();
    let (server, mut client) = serve(&source, Some(secret.clone())).await;
    let mnk = pb::rule_set::Kind::Mnk(pb::MnkRules {
        rows: 3,
        cols: 3,
        k: 3,
    });
    let tokens = create(&mut client, "tokens", mnk).await;
    play(&mut client, "tokens", 0, place(1, 1), Some(&tokens[0]))
        .await
        .expect("X plays with its token");
    stop(server);
    let exported = export_all(&source);

    let target = Db::fresh(backend).await;
    let file = source.dir.path().join("games.jsonl");
    std::fs::write(&file, &exported).expect("file written");
    target
        .plylog(&[
            "import",
            &file.display().to_string(),
            "--seat-token-secret-file",
            &secret.display().to_string(),
        ])
        .expect_code(0);
    let (server, mut client) = serve(&target, Some(secret)).await;
    let refused = play(&mut client, "tokens", 1, place(0, 0), None)
        .await
        .expect_err("a move without its seat's token");
    assert!(
        matches!(
            refused.code(),
            tonic::Code::Unauthenticated | tonic::Code::PermissionDenied
        ),
        "{refused:?}"
    );
    play(&mut client, "tokens", 1, place(0, 0), Some(&tokens[1]))
        .await
        .expect("O plays with the token it had before the import");
    stop(server);
}

async fn usage_errors_exit_with_code_2(backend: Backend) {
    let db = Db::fresh(backend).await;
    for usage in [
        &["export"][..],
        &["export", "g", "--all"],
        &["games", "--status", "won"],
        &["games", "--since", "yesterday"],
        &["show"],
        &["import"],
    ] {
        let run = db.plylog(usage).expect_code(2);
        assert!(run.stderr.starts_with("error: "), "{usage:?}: {run:?}");
    }
    let help = run(&["--help"], None).expect_code(0).stdout;
    for command in ["games", "show", "export", "import", "verify", "migrate"] {
        assert!(
            help.contains(&format!("\n  {command} ")),
            "{command}: {help}"
        );
    }
}

/// The statements that take a database back to before the migration
/// `20261208000002_event_lifecycle` (one text, for
/// [`execute_behind_the_servers_back`]).
const BEFORE_LIFECYCLES: &str = "DROP INDEX events_lifecycle;
    DROP INDEX events_unmarked;
    ALTER TABLE events DROP COLUMN lifecycle;
    DELETE FROM _sqlx_migrations WHERE version = 20261208000002";

/// Runs `sql` (one or more statements) on `db` directly, behind any
/// server's back.
async fn execute_behind_the_servers_back(db: &Db, sql: &str) {
    use sqlx::Connection;
    macro_rules! execute {
        ($connection:ty) => {{
            let mut conn = <$connection>::connect(&db.url).await.expect("connects");
            sqlx::raw_sql(sql)
                .execute(&mut conn)
                .await
                .expect("executed");
            conn.close().await.expect("closes");
        }};
    }
    match db.backend {
        Backend::Sqlite => execute!(sqlx::SqliteConnection),
        Backend::Postgres => execute!(sqlx::PgConnection),
    }
}

/// The characters that act on a terminal or reorder text, as
/// `plylog::game::is_disruptive` judges them, found in `text`.
fn disruptive(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| *c != '\n' && plylog::game::is_disruptive(*c))
        .collect()
}

/// A tic-tac-toe game created before names were checked
/// ([`stored::seats_that_attack_terminals`]), its id holding ESC too,
/// written through the store as an older server or import would have; the
/// API refuses them now. Its id.
async fn a_game_with_names_that_attack_terminals(db: &Db) -> String {
    use plylog::store::{Database, StoreOptions};
    let game_id = "old\u{1b}[2Jgame".to_owned();
    let store = Database::parse(&db.url)
        .expect("a database URL")
        .open(StoreOptions {
            postgres_connections: 1,
            sqlite_synchronous_normal: false,
            read_only: false,
        })
        .await
        .expect("the store opens");
    stored::write_created(
        store.as_ref(),
        &game_id,
        stored::tic_tac_toe(),
        stored::seats_that_attack_terminals(),
        1_800_000_000_000,
    )
    .await;
    store.close().await;
    game_id
}

async fn text_outputs_escape_what_stored_names_would_do_to_a_terminal(backend: Backend) {
    let db = Db::fresh(backend).await;
    let game_id = a_game_with_names_that_attack_terminals(&db).await;
    let shown = db.plylog(&["show", &game_id]).expect_code(0);
    assert_eq!(disruptive(&shown.stdout), Vec::<char>::new(), "{shown:?}");
    let lines: Vec<&str> = shown.stdout.lines().collect();
    assert_eq!(lines[0], "game    old\\u{1b}[2Jgame");
    assert_eq!(
        lines[2],
        "seats   0 \\u{202e}X admin\\u{202e}gnp.exe, 1 O bob\\u{d}\\u{1b}[31mred"
    );
    assert_eq!(lines[5], "status  in play: seat 0 (\\u{202e}X) to move");
    let listed = db.plylog(&["games"]).expect_code(0);
    assert_eq!(disruptive(&listed.stdout), Vec::<char>::new(), "{listed:?}");
    assert!(
        listed.stdout.contains("old\\u{1b}[2Jgame"),
        "{}",
        listed.stdout
    );
    // JSON escapes them as JSON does, and reads back as the same text.
    let json = db.plylog(&["games", "--format", "json"]).expect_code(0);
    assert_eq!(disruptive(&json.stdout), Vec::<char>::new(), "{json:?}");
    let value: serde_json::Value = serde_json::from_str(json.stdout.trim()).expect("JSON");
    assert_eq!(value["gameId"], game_id.as_str());
    let exported = db.plylog(&["export", &game_id]).expect_code(0);
    assert_eq!(
        disruptive(&exported.stdout),
        Vec::<char>::new(),
        "{exported:?}"
    );
    assert!(
        exported
            .stdout
            .contains(r#""playerId":"admin\u202egnp.exe""#),
        "{}",
        exported.stdout
    );
    let event: serde_json::Value = serde_json::from_str(exported.stdout.trim()).expect("JSON");
    assert_eq!(
        event["gameCreated"]["seats"][0]["displayName"],
        "\u{1b}]0;pwned\u{7}"
    );
    let verified = db.plylog(&["verify"]).expect_code(0);
    assert_eq!(
        disruptive(&verified.stdout),
        Vec::<char>::new(),
        "{verified:?}"
    );
    // An error that quotes the game id.
    let refused = db.plylog(&["show", &game_id, "--at", "9"]).expect_code(3);
    assert_eq!(
        refused.stderr.trim(),
        "plylog: game old\\u{1b}[2Jgame has events 1 to 1; --at 9 is not one of them"
    );
    // Such a game is refused on the way back in, as CreateGame refuses it.
    let file = db.dir.path().join("old.jsonl");
    std::fs::write(&file, &exported.stdout).expect("file written");
    let target = Db::fresh(backend).await;
    let refused = target
        .plylog(&["import", &file.display().to_string(), "--no-seat-tokens"])
        .expect_code(3);
    assert_eq!(
        disruptive(&refused.stderr),
        Vec::<char>::new(),
        "{refused:?}"
    );
    assert!(
        refused
            .stderr
            .starts_with("plylog: line 1: game old\\u{1b}[2Jgame: game_id: "),
        "{}",
        refused.stderr
    );
}

/// One line of export: a tic-tac-toe GameCreated of `game_id`, recorded at
/// `recorded_at`, with `rules` and player `player_id` against bob.
fn creation_line(
    game_id: &str,
    recorded_at: &str,
    rules: serde_json::Value,
    player_id: &str,
) -> String {
    let line = serde_json::json!({
        "gameId": game_id,
        "sequence": "1",
        "recordedAt": recorded_at,
        "gameCreated": {
            "rules": rules,
            "seats": [{"playerId": player_id, "symbol": "X"}, {"playerId": "bob", "symbol": "O"}],
            "undoPolicy": "UNDO_POLICY_LAST_MOVER",
        },
    });
    format!("{line}\n")
}

async fn import_applies_the_checks_and_limits_of_create_game(backend: Backend) {
    let db = Db::fresh(backend).await;
    let now = "2026-01-01T00:00:00Z";
    let ttt = serde_json::json!({"mnk": {"rows": 3, "cols": 3, "k": 3}});
    let bad_id = format!("bad id <script>{}", "x".repeat(114));
    let long_player = "p".repeat(10_000);
    let file = db.dir.path().join("games.jsonl");
    let import = |lines: &str, flags: &[&str]| {
        std::fs::write(&file, lines).expect("file written");
        let path = file.display().to_string();
        db.plylog(&[&["import", &path, "--no-seat-tokens"][..], flags].concat())
    };
    // The issue's four, and more CreateGame refuses: a good game first, so
    // that nothing of a file with a bad game is written.
    let good = creation_line("good", now, ttt.clone(), "alice");
    let cases = [
        (
            creation_line(&bad_id, now, ttt.clone(), "alice"),
            format!(
                "line 2: game {bad_id}: game_id: game_id must be 1 to 128 characters of [A-Za-z0-9._~-]"
            ),
        ),
        (
            creation_line("huge", now, serde_json::json!({"mnk": {"rows": 40000, "cols": 40000, "k": 5}}), "alice"),
            "line 2: game huge: rules.mnk.rows: a 40000x40000 board has 1600000000 cells, over the limit of 1000000".to_owned(),
        ),
        (
            creation_line("long", now, ttt.clone(), &long_player),
            "line 2: game long: seats[0].player_id: player id must be 1 to 128 characters".to_owned(),
        ),
        (
            creation_line("far", "9999-12-31T23:59:59Z", ttt.clone(), "alice"),
            "line 2: game far: event 1 was recorded at 9999-12-31T23:59:59Z, over 60 minutes after this import's clock reading".to_owned(),
        ),
        (
            creation_line("early", "1969-12-31T23:59:59Z", ttt.clone(), "alice"),
            "line 2: game early: event 1 was recorded at 1969-12-31T23:59:59Z, before 1970".to_owned(),
        ),
        (
            creation_line("rlo", now, ttt.clone(), "admin\u{202e}gnp.exe"),
            "line 2: game rlo: seats[0].player_id: player id holds \\u{202e}: control and \
             bidirectional formatting characters are refused"
                .to_owned(),
        ),
    ];
    for (bad, why) in cases {
        let refused = import(&format!("{good}{bad}"), &[]).expect_code(3);
        assert_eq!(refused.stderr.trim(), format!("plylog: {why}"));
        let listed = db.plylog(&["games"]).expect_code(0).stdout;
        assert_eq!(listed.lines().count(), 1, "only the header: {listed}");
    }
    // The limits are the flags `plylog serve` takes, with its defaults.
    let wide = creation_line(
        "wide",
        now,
        serde_json::json!({"mnk": {"rows": 2000, "cols": 1000, "k": 5}}),
        "alice",
    );
    let refused = import(&wide, &[]).expect_code(3);
    assert!(
        refused.stderr.contains("over the limit of 1000000"),
        "{refused:?}"
    );
    import(&wide, &["--max-cells", "2000000"]).expect_code(0);
    let listed = table(&db.plylog(&["games"]).expect_code(0).stdout);
    assert_eq!(listed[0][..2], ["wide", "mnk 2000x1000 k=5"]);
}

async fn games_names_the_rows_it_cannot_read_and_lists_the_others(backend: Backend) {
    let db = four_games(backend).await;
    // c4's games row holds a negative last sequence; gmk's seat token
    // hashes are not whole hashes.
    execute_behind_the_servers_back(
        &db,
        "UPDATE games SET last_sequence = -3 WHERE game_id = 'c4'",
    )
    .await;
    let hashes = match backend {
        Backend::Sqlite => "x'0102'",
        Backend::Postgres => "'\\x0102'::bytea",
    };
    execute_behind_the_servers_back(
        &db,
        &format!("UPDATE games SET seat_token_hashes = {hashes} WHERE game_id = 'gmk'"),
    )
    .await;
    let listed = db.plylog(&["games"]).expect_code(1);
    let rows = table(&listed.stdout);
    let ids: Vec<&str> = rows.iter().map(|row| row[0].as_str()).collect();
    assert_eq!(ids, ["ttt", "gmk", "undo"], "{listed:?}");
    assert_eq!(rows[1][2..4], ["unreadable", "?"]);
    assert_eq!(
        listed.stderr.trim(),
        "plylog: the games table's row at position 2 does not read back: corrupt row: \
         games.last_sequence is -3, not a sequence"
    );
    let json = db.plylog(&["games", "--format", "json"]).expect_code(1);
    assert_eq!(json.stdout.lines().count(), 3, "{json:?}");
    assert!(json.stdout.contains(r#""status":"unreadable""#), "{json:?}");
}

async fn show_of_a_game_without_its_games_row_says_so(backend: Backend) {
    let db = four_games(backend).await;
    // As a hand-run DELETE with the foreign keys off leaves it.
    let keys_off = match backend {
        Backend::Sqlite => "PRAGMA foreign_keys = OFF",
        Backend::Postgres => "SET session_replication_role = replica",
    };
    execute_behind_the_servers_back(
        &db,
        &format!("{keys_off}; DELETE FROM games WHERE game_id = 'ttt'"),
    )
    .await;
    let refused = db.plylog(&["show", "ttt"]).expect_code(3);
    assert_eq!(
        refused.stderr.trim(),
        "plylog: game ttt is not in the games table, though events of it are stored \
         (plylog games and verify do not list it)"
    );
    let missing = db.plylog(&["show", "nope"]).expect_code(3);
    assert_eq!(
        missing.stderr.trim(),
        "plylog: no game nope in the database"
    );
}
