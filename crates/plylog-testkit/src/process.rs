//! The real `plylog` binary as a child process: started with its flags,
//! waited on until it logs that it serves, its log kept for the test to
//! read, and killed and reaped when the test ends however it ends.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// A running `plylog` child process.
pub struct Server {
    /// The child process.
    pub child: Child,
    /// The port it serves on.
    pub port: u16,
    log: Arc<Mutex<Vec<String>>>,
    /// The thread that copies its log into `log`, until the pipe closes.
    reader: Option<JoinHandle<()>>,
}

/// The binary under test: this build's `plylog`, or the one `PLYLOG_BIN`
/// names (to measure another build with the same tests).
///
/// This build's is the one beside the test binary's `deps/` folder, where
/// `cargo test` builds the package's binaries before running its tests.
///
/// # Panics
/// When neither is there.
pub fn binary() -> String {
    if let Ok(bin) = std::env::var("PLYLOG_BIN") {
        return bin;
    }
    let test_binary = std::env::current_exe().expect("the test binary's path");
    let built = test_binary
        .parent()
        .and_then(|deps| deps.parent())
        .map(|dir| dir.join(format!("plylog{}", std::env::consts::EXE_SUFFIX)))
        .filter(|bin| bin.exists())
        .expect("the plylog binary beside the test binary's deps/ (built by cargo test)");
    built.display().to_string()
}

/// The `plylog` binary with `RUST_LOG=info`, ready for more arguments.
pub fn plylog() -> Command {
    let mut command = Command::new(binary());
    command.env("RUST_LOG", "info");
    command
}

/// Runs `command` (no input) for up to `timeout` and returns its standard
/// output.
///
/// # Panics
/// When it cannot start, runs longer, or fails: with everything it
/// printed, naming it `what`.
pub fn run_ok(command: &mut Command, timeout: Duration, what: &str) -> String {
    let child = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let output = output_within(child, timeout, what);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{stdout}{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// Waits for `child` to exit and reads everything it printed (as
/// [`Child::wait_with_output`] does), for up to `timeout`.
///
/// # Panics
/// When it has not exited by then (it is killed first), naming it `what`.
pub fn output_within(child: Child, timeout: Duration, what: &str) -> Output {
    let pid = child.id();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    let Ok(output) = finished.recv_timeout(timeout) else {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        panic!("{what} did not exit within {timeout:?}");
    };
    output.expect("the child waited for")
}

impl Server {
    /// The real binary serving on a free loopback port, on SQLite in
    /// `dir/plylog.db`.
    pub fn sqlite_in(dir: &std::path::Path) -> Server {
        let url = format!("sqlite://{}", dir.join("plylog.db").display());
        Server::start(
            |port| {
                let mut command = plylog();
                command
                    .args(["--listen", &format!("127.0.0.1:{port}")])
                    .args(["--database-url", &url]);
                command
            },
            0,
        )
    }

    /// Starts `make(port)` (a `plylog` command listening on `port`, 0 for
    /// any free one) and waits until it logs that it serves; tries again
    /// while the port is still held by a process that just died.
    ///
    /// # Panics
    /// When it never serves.
    pub fn start(make: impl Fn(u16) -> Command, port: u16) -> Server {
        for _ in 0..50 {
            let mut child = make(port)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("the plylog binary starts");
            let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
            let log = Arc::new(Mutex::new(Vec::new()));
            let serving = lines.by_ref().map_while(Result::ok).find_map(|line| {
                // `addr=127.0.0.1:port` in text logs, `"addr":"127.0.0.1:port"` in JSON.
                let port = line
                    .contains("plylog serving")
                    .then(|| {
                        line.split_once("addr=")
                            .or_else(|| line.split_once("\"addr\":\""))
                    })
                    .flatten()
                    .and_then(|(_, addr)| {
                        addr.split(|c: char| c.is_whitespace() || c == '"')
                            .next()?
                            .rsplit(':')
                            .next()?
                            .parse()
                            .ok()
                    });
                log.lock().unwrap().push(line);
                port
            });
            if let Some(port) = serving {
                // Keep reading its log so the pipe never fills.
                let kept = Arc::clone(&log);
                let reader = std::thread::spawn(move || {
                    for line in lines.map_while(Result::ok) {
                        kept.lock().unwrap().push(line);
                    }
                });
                return Server {
                    child,
                    port,
                    log,
                    reader: Some(reader),
                };
            }
            // It exited before serving (the port still held): try again.
            let _ = child.wait();
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("plylog did not start");
    }

    /// Waits for it to exit and for the last of its log to be read: the
    /// process can exit before the reader thread has taken its final lines
    /// out of the pipe.
    ///
    /// # Panics
    /// When waiting fails.
    pub fn wait(&mut self) -> ExitStatus {
        let status = self.child.wait().expect("the server exits");
        if let Some(reader) = self.reader.take() {
            reader.join().expect("the log reader ends at end of file");
        }
        status
    }

    /// The log lines so far that contain `needle`.
    pub fn log_lines(&self, needle: &str) -> Vec<String> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|line| line.contains(needle))
            .cloned()
            .collect()
    }

    /// Stops it with SIGTERM (a graceful shutdown) and waits for it to exit
    /// and for the last of its log.
    ///
    /// # Panics
    /// When the signal cannot be sent.
    pub fn terminate(&mut self) -> ExitStatus {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "SIGTERM sent");
        self.wait()
    }

    /// Kills it with SIGKILL and reaps it.
    pub fn kill(mut self) {
        self.child.kill().expect("SIGKILL");
        self.wait();
    }
}

/// A server whose test ends without stopping it (a failed assertion
/// unwinds past its `kill`) is killed and reaped, not left running with
/// its database and port.
impl Drop for Server {
    fn drop(&mut self) {
        // Already stopped: both are no-ops then.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
