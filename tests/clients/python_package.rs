//! The Python client package (clients/python, in docs/guide/clients.md)
//! as a user meets it: its wheel built with `python -m build` from a copy
//! of the folder, installed with pip into a clean venv, and
//! clients/python/example.py run with that venv's Python against the real
//! binary, importing only the installed package: a whole game of
//! tic-tac-toe over gRPC, and again over the Connect protocol (binary and
//! JSON). And the generated code committed under clients/python/src/ is
//! what the pinned generators write from proto/ now.
//!
//! Needs a Python with `build` (tests/requirements.txt): `PLYLOG_PYTHON`
//! names it, or `.venv/bin/python` in the repository is used when it has
//! it; and PyPI, where pip finds the wheel's dependencies and the
//! generators. Without such a Python the tests are listed as ignored with
//! the reason printed; with `PLYLOG_REQUIRE_PYTHON=1` (as in `.ci/run`)
//! that fails them instead.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use libtest_mimic::Trial;

use plylog_testkit::optional;
use plylog_testkit::process;
use process::Server;

use crate::python_client::python_with;

/// The Python that builds the wheel and makes the venvs, if it has `build`.
fn python() -> Option<PathBuf> {
    python_with("build, venv, ensurepip")
}

/// The tests, named `python_package::<test>`: ignored (or failed, as
/// `PLYLOG_REQUIRE_PYTHON` says) without a Python to build with.
pub(crate) fn trials() -> Vec<Trial> {
    let python = optional::availability(
        "python_package",
        python().is_some(),
        "PLYLOG_REQUIRE_PYTHON",
        "no Python with `build` for the Python client's wheel: `python3 -m venv .venv && .venv/bin/pip install -r tests/requirements.txt`, or set PLYLOG_PYTHON",
    );
    vec![
        optional::trial(
            "python_package::the_installed_wheel_plays_a_game_over_grpc",
            &python,
            the_installed_wheel_plays_a_game_over_grpc,
        ),
        optional::trial(
            "python_package::the_installed_wheel_plays_a_game_over_connect",
            &python,
            the_installed_wheel_plays_a_game_over_connect,
        ),
        optional::trial(
            "python_package::the_committed_code_is_what_the_protos_generate",
            &python,
            the_committed_code_is_what_the_protos_generate,
        ),
    ]
}

/// clients/python in the repository.
fn package_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("clients/python")
}

/// The package's version, as its pyproject.toml says.
fn package_version() -> String {
    let pyproject = std::fs::read_to_string(package_dir().join("pyproject.toml")).unwrap();
    pyproject
        .lines()
        .find_map(|line| line.strip_prefix("version = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .expect("pyproject.toml's version = \"...\"")
        .to_owned()
}

/// `command`, with no Python settings of the caller's: nothing but what it
/// installed itself is found.
fn python_command(program: &Path) -> Command {
    let mut command = Command::new(program);
    for var in ["PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"] {
        command.env_remove(var);
    }
    command
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .env("PIP_NO_INPUT", "1");
    command
}

/// Copies the folder `from` to `to`, leaving out what a build in it may
/// have left behind.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        let name_str = name.to_string_lossy();
        if ["build", "dist", "__pycache__"].contains(&&*name_str) || name_str.ends_with(".egg-info")
        {
            continue;
        }
        let target = to.join(&name);
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Builds the wheel from a copy of clients/python (so no build/ or
/// *.egg-info lands in the tree) into `dir`/dist, and returns its path.
fn build_wheel(dir: &Path) -> PathBuf {
    let source = dir.join("source");
    copy_tree(&package_dir(), &source);
    let dist = dir.join("dist");
    process::run_ok(
        python_command(&python().expect("checked by the harness"))
            .args(["-m", "build", "--wheel", "--outdir"])
            .arg(&dist)
            .arg(&source)
            .current_dir(dir),
        Duration::from_secs(300),
        "python -m build --wheel",
    );
    let wheels: Vec<PathBuf> = std::fs::read_dir(&dist)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    let expected = format!("plylog_client-{}-py3-none-any.whl", package_version());
    assert_eq!(
        wheels
            .iter()
            .map(|w| w.file_name().unwrap().to_string_lossy().into_owned())
            .collect::<Vec<_>>(),
        vec![expected],
        "what python -m build wrote"
    );
    wheels.into_iter().next().unwrap()
}

/// A new venv in `dir` with `requirements` pip-installed (from PyPI):
/// its Python.
fn venv(dir: &Path, requirements: &[&std::ffi::OsStr]) -> PathBuf {
    process::run_ok(
        python_command(&python().expect("checked by the harness"))
            .args(["-m", "venv"])
            .arg(dir),
        Duration::from_secs(120),
        "python -m venv",
    );
    let python = dir.join("bin/python");
    process::run_ok(
        python_command(&python)
            .args(["-m", "pip", "install", "--quiet"])
            .args(requirements),
        Duration::from_secs(600),
        "pip install",
    );
    python
}

/// What example.py prints after its first two lines (where the package is,
/// and the transport): the same game whatever the transport.
const GAME: &str = "\
created: sequence 1, 2 seat tokens
X (0, 0): sequence 2
O (1, 1): sequence 3
X (0, 1): sequence 4
O (0, 1): refused: FAILED_PRECONDITION CELL_OCCUPIED
O (2, 2): sequence 5
X (0, 2): sequence 6
followed: 1:game_created 2:move_played 3:move_played 4:move_played 5:move_played 6:move_played
history: 6 events, caught up at 6
outcome: GAME_STATUS_WON, seat 0 (X) on (0, 0) (0, 1) (0, 2)
board: XXX
board: .O.
board: ..O
";

/// Runs clients/python/example.py with `python` (a venv's) against
/// `server`, in isolated mode (`-I`: neither the script's folder nor the
/// working directory is on its path, no PYTHON* variables), and checks
/// what it prints: the installed package, `transport`, and the game.
fn play(python: &Path, venv: &Path, server: &Server, args: &[&str], transport: &str) {
    let script = package_dir().join("example.py");
    let stdout = process::run_ok(
        python_command(python)
            .arg("-I")
            .arg(&script)
            .args(args)
            .arg(format!("127.0.0.1:{}", server.port))
            .current_dir(venv),
        Duration::from_secs(120),
        &format!("example.py {}", args.join(" ")),
    );
    let mut lines = stdout.lines();
    let package = lines.next().unwrap_or_default();
    let prefix = format!("package: plylog-client {} at ", package_version());
    let location = package
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("`{prefix}...` expected, got:\n{stdout}"));
    assert!(
        Path::new(location).starts_with(venv) && location.ends_with("site-packages"),
        "plylog was imported from {location}, not the venv's site-packages under {}",
        venv.display()
    );
    assert_eq!(
        lines.next().unwrap_or_default(),
        format!("transport: {transport}"),
        "{stdout}"
    );
    let rest: String = lines.map(|line| format!("{line}\n")).collect();
    assert_eq!(
        rest,
        GAME,
        "example.py {} printed:\n{stdout}",
        args.join(" ")
    );
}

async fn the_installed_wheel_plays_a_game_over_grpc() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = build_wheel(dir.path());
    let venv_dir = dir.path().join("venv");
    let python = venv(&venv_dir, &[wheel.as_os_str()]);
    // The base package leaves the Connect runtime out: it is an extra.
    process::run_ok(
        python_command(&python).args([
            "-I",
            "-c",
            "import importlib.util as u; assert u.find_spec('connectrpc') is None, 'connectrpc installed'",
        ]),
        Duration::from_secs(60),
        "the base install without connectrpc",
    );
    let server = Server::sqlite_in(dir.path());
    play(&python, &venv_dir, &server, &[], "gRPC");
    // A refused move is the client's business, not an error of the server.
    assert_eq!(server.log_lines("ERROR"), Vec::<String>::new());
    server.kill();
}

async fn the_installed_wheel_plays_a_game_over_connect() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = build_wheel(dir.path());
    let venv_dir = dir.path().join("venv");
    let with_connect = format!("{}[connect]", wheel.display());
    let python = venv(&venv_dir, &[std::ffi::OsStr::new(&with_connect)]);
    let server = Server::sqlite_in(dir.path());
    play(
        &python,
        &venv_dir,
        &server,
        &["--connect"],
        "Connect (binary)",
    );
    play(
        &python,
        &venv_dir,
        &server,
        &["--connect", "--json"],
        "Connect (JSON)",
    );
    assert_eq!(server.log_lines("ERROR"), Vec::<String>::new());
    server.kill();
}

async fn the_committed_code_is_what_the_protos_generate() {
    let dir = tempfile::tempdir().unwrap();
    let requirements = package_dir().join("requirements-generate.txt");
    let python = venv(
        &dir.path().join("venv"),
        &[std::ffi::OsStr::new("-r"), requirements.as_os_str()],
    );
    // --check writes only to a temporary directory, and fails, saying how
    // to regenerate, when src/plylog/v1/ or pyproject.toml's floors are stale.
    let stdout = process::run_ok(
        python_command(&python)
            .arg("-I")
            .arg(package_dir().join("generate.py"))
            .arg("--check")
            .current_dir(dir.path()),
        Duration::from_secs(120),
        "clients/python/generate.py --check",
    );
    assert!(stdout.contains("src/plylog/v1/ is current"), "{stdout}");
}
