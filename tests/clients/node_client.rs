//! The TypeScript client package (clients/typescript, `@plylog/client`, in
//! docs/guide/clients.md) as a user gets it, against the real binary: a
//! copy of the package is installed with `npm ci` and packed with `npm
//! pack`, a fresh npm project installs the tarball, and a program of it
//! (node_client.mjs, importing only `@plylog/client`) plays a tic-tac-toe
//! game to a win while following its events, over the Connect protocol
//! (JSON on HTTP/1.1, protobuf on HTTP/2), grpc-web (HTTP/1.1 and HTTP/2)
//! and gRPC, and reads the reason of a move refused after the end.
//!
//! Needs Node 20 or later with npm, and `npm ci` run in clients/typescript
//! (`npm ci --prefix clients/typescript`): its packages are then in npm's
//! cache, from which the test installs (`--prefer-offline`), so it needs
//! the npm registry only for what the cache lacks. Without them the test is
//! listed as ignored with the reason printed; with `PLYLOG_REQUIRE_NODE=1`
//! (as in `.ci/run`) that fails it instead.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use libtest_mimic::Trial;

use plylog_testkit::optional;
use plylog_testkit::process;
use process::Server;

/// The package, in the repository.
fn package() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("clients/typescript")
}

/// Whether Node 20 or later and npm run, and clients/typescript has its
/// packages; why not, if not.
fn node() -> Result<(), String> {
    let version = Command::new("node")
        .arg("--version")
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .ok_or("no `node` on the PATH (Node 20 or later, with npm)")?;
    let major: u32 = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|major| major.parse().ok())
        .unwrap_or(0);
    if major < 20 {
        return Err(format!(
            "node is {version}; the client needs Node 20 or later"
        ));
    }
    let npm = Command::new("npm").arg("--version").output();
    if !npm.is_ok_and(|out| out.status.success()) {
        return Err("no `npm` on the PATH".into());
    }
    if !package().join("node_modules/.bin/tsc").exists() {
        return Err(
            "clients/typescript has no node_modules: `npm ci --prefix clients/typescript`".into(),
        );
    }
    Ok(())
}

/// The tests, named `node_client::<test>`: ignored (or failed, as
/// `PLYLOG_REQUIRE_NODE` says) without what they need.
pub(crate) fn trials() -> Vec<Trial> {
    let ready = node();
    let node = optional::availability(
        "node_client",
        ready.is_ok(),
        "PLYLOG_REQUIRE_NODE",
        ready.as_ref().err().map_or("", String::as_str),
    );
    vec![optional::trial(
        "node_client::the_packed_typescript_client_plays_over_connect_grpc_web_and_grpc",
        &node,
        the_packed_typescript_client_plays_over_connect_grpc_web_and_grpc,
    )]
}

/// Runs `command` in `dir` for up to `timeout` and returns its standard
/// output; panics, with everything it printed, when it fails.
fn run(command: &mut Command, dir: &Path, timeout: Duration) -> String {
    let what = format!("{command:?} in {}", dir.display());
    process::run_ok(command.current_dir(dir), timeout, &what)
}

/// `npm` with `args`, quiet about audits, funding and its own updates, and
/// taking packages from its cache when it has them.
fn npm(args: &[&str]) -> Command {
    let mut command = Command::new("npm");
    command
        .args(["--prefer-offline", "--no-audit", "--no-fund"])
        .args(args)
        .env("npm_config_update_notifier", "false");
    command
}

/// Copies the package's sources from `from` into `to`: not what npm
/// installed or built there, nor a packed tarball.
fn copy_sources(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if ["node_modules", "dist", "build"].contains(&name.as_str()) || name.ends_with(".tgz") {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_sources(&entry.path(), &to.join(&name));
        } else {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}

/// A TypeScript program of the installed package, type-checked against its
/// `.d.ts`: what a user's editor and compiler see.
const TYPED_USE: &str = r#"import {
  type CallOptions,
  type PlylogClient,
  ErrorReason,
  GameService,
  createPlylogClient,
  errorReason,
  withToken,
} from "@plylog/client";

const client: PlylogClient = createPlylogClient({
  baseUrl: "http://127.0.0.1:50051",
  protocol: "grpc-web",
  httpVersion: "2",
});
const options: CallOptions = withToken("token", { timeoutMs: 1000 });
export async function centre(gameId: string): Promise<string | undefined> {
  try {
    const reply = await client.submitMove(
      { gameId, seat: 0, move: { kind: { case: "place", value: { row: 1, col: 1 } } } },
      options,
    );
    return reply.game?.lastSequence.toString();
  } catch (error) {
    return errorReason(error) ?? ErrorReason[ErrorReason.GAME_OVER];
  }
}
export const name: string = GameService.typeName;
"#;

async fn the_packed_typescript_client_plays_over_connect_grpc_web_and_grpc() {
    let work = tempfile::tempdir().unwrap();
    let minutes = |n: u64| Duration::from_secs(60 * n);

    // The package as `npm pack` makes it, from a copy: nothing is written
    // into the repository.
    let copy = work.path().join("package");
    copy_sources(&package(), &copy);
    run(&mut npm(&["ci"]), &copy, minutes(5));
    let packed = run(
        npm(&["pack", "--pack-destination"]).arg(work.path()),
        &copy,
        minutes(3),
    );
    let tarball = packed.lines().last().unwrap_or_default().trim().to_owned();
    assert!(
        tarball.starts_with("plylog-client-") && tarball.ends_with(".tgz"),
        "npm pack printed:\n{packed}"
    );
    let tarball = work.path().join(tarball);
    // It ships the compiled code, its types, the README and package.json.
    let listing = run(
        Command::new("tar").arg("-tzf").arg(&tarball),
        work.path(),
        minutes(1),
    );
    let mut files: Vec<&str> = listing.lines().collect();
    files.sort_unstable();
    assert_eq!(
        files,
        [
            "package/README.md",
            "package/dist/gen/plylog/v1/game_pb.d.ts",
            "package/dist/gen/plylog/v1/game_pb.js",
            "package/dist/gen/plylog/v1/game_service_pb.d.ts",
            "package/dist/gen/plylog/v1/game_service_pb.js",
            "package/dist/src/index.d.ts",
            "package/dist/src/index.js",
            "package/package.json",
        ]
    );

    // A user's project: the tarball installed, its dependencies from npm.
    let app = work.path().join("app");
    std::fs::create_dir(&app).unwrap();
    std::fs::write(
        app.join("package.json"),
        r#"{ "name": "plylog-client-user", "private": true, "type": "module" }"#,
    )
    .unwrap();
    run(npm(&["install"]).arg(&tarball), &app, minutes(5));
    std::fs::write(app.join("node_client.mjs"), include_str!("node_client.mjs")).unwrap();

    // Its types, with the TypeScript the package builds with.
    std::fs::write(app.join("typed.ts"), TYPED_USE).unwrap();
    let types = copy.join("node_modules/@types");
    std::fs::write(
        app.join("tsconfig.json"),
        format!(
            r#"{{ "compilerOptions": {{ "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext", "strict": true, "noEmit": true, "typeRoots": [{types:?}], "types": ["node"] }}, "files": ["typed.ts"] }}"#,
            types = types.display().to_string(),
        ),
    )
    .unwrap();
    run(
        Command::new(copy.join("node_modules/.bin/tsc")).args(["-p", "tsconfig.json"]),
        &app,
        minutes(2),
    );

    let dir = tempfile::tempdir().unwrap();
    let server = Server::sqlite_in(dir.path());
    let variants = [
        "connect-json",
        "connect-binary-h2",
        "grpc-web",
        "grpc-web-h2",
        "grpc",
    ];
    let child = Command::new("node")
        .arg("node_client.mjs")
        .arg(format!("127.0.0.1:{}", server.port))
        .args(variants)
        .current_dir(&app)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs");
    let output = process::output_within(child, minutes(2), "node node_client.mjs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    // A refused move is the client's business, not an error of the server.
    assert_eq!(server.log_lines("ERROR"), Vec::<String>::new());
    server.kill();
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut expected = Vec::new();
    for variant in variants {
        expected.extend([
            format!("{variant}: created, 2 seat tokens"),
            format!("{variant}: following, caught up at 1"),
            format!("{variant}: played 5 moves, seat 0 won at sequence 6"),
            format!("{variant}: refused: FailedPrecondition GAME_OVER plylog.v1"),
            format!("{variant}: streamed 6 events, 5 moves, the last a win for seat 0"),
        ]);
    }
    expected.push("all variants played".into());
    assert_eq!(stdout.lines().collect::<Vec<_>>(), expected);
}
