//! The HA stack (`tests/ha/stack.sh`: etcd, two Patroni cells with HAProxy,
//! in network namespaces) and the four plylog nodes started in their
//! namespaces, as the test drives them.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The script beside this file.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ha/stack.sh")
}

/// Runs `stack.sh <args>`, returning its standard output.
///
/// # Panics
/// When the script fails (its output is shown).
pub(crate) fn stack(args: &[&str]) -> String {
    let output = Command::new("bash")
        .arg(script())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("stack.sh runs");
    assert!(
        output.status.success(),
        "stack.sh {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// The stack, up while this lives: `down` when dropped (also on a panic),
/// which stops every process in its namespaces, the nodes included.
pub(crate) struct Stack {
    pub(crate) dir: PathBuf,
}

impl Stack {
    /// Builds the stack under `dir` (made here; it must be reachable by the
    /// `postgres` user).
    pub(crate) fn up(dir: &Path) -> Stack {
        let stack = Stack {
            dir: dir.to_owned(),
        };
        // Left over from an earlier run that could not clean up.
        let _ = Command::new("bash")
            .arg(script())
            .args(["down", &dir.display().to_string()])
            .output();
        stack.run(&["up"]);
        stack
    }

    fn run(&self, args: &[&str]) -> String {
        let dir = self.dir.display().to_string();
        let mut all = vec![args[0], dir.as_str()];
        all.extend_from_slice(&args[1..]);
        stack(&all)
    }

    /// A cell's database URL (`cell` "a" or "b"), through its HAProxy.
    pub(crate) fn url(cell: &str) -> String {
        stack(&["addr", "url", cell])
    }

    /// SIGKILLs `cell`'s primary (its Patroni and PostgreSQL); returns the
    /// member's name.
    pub(crate) fn kill_primary(&self, cell: &str) -> String {
        self.run(&["kill-primary", cell])
    }

    /// Starts a killed member again; it rejoins as a standby.
    pub(crate) fn restart_member(&self, cell: &str, member: &str) {
        self.run(&["restart-member", cell, member]);
    }

    /// Cuts node `i` off from both cells (packets dropped, not refused).
    pub(crate) fn cut(&self, i: usize) {
        self.run(&["cut", &i.to_string()]);
    }

    /// Undoes [`Stack::cut`].
    pub(crate) fn heal(&self, i: usize) {
        self.run(&["heal", &i.to_string()]);
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        let output = Command::new("bash")
            .arg(script())
            .args(["down", &self.dir.display().to_string()])
            .output();
        if let Ok(output) = output
            && !output.status.success()
        {
            eprintln!(
                "stack.sh down failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
}

/// Node `i`'s gRPC address (10.88.0.3i:50051).
pub(crate) fn node_addr(i: usize) -> SocketAddr {
    format!("10.88.0.{}:50051", 30 + i).parse().unwrap()
}

/// Node `i`'s metrics address.
fn metrics_addr(i: usize) -> SocketAddr {
    format!("10.88.0.{}:9090", 30 + i).parse().unwrap()
}

/// A plylog node running in its namespace.
pub(crate) struct Node {
    pub(crate) index: usize,
    child: Option<Child>,
    /// The last metrics read from this run of the node.
    pub(crate) last_metrics: HashMap<String, f64>,
}

impl Node {
    /// Starts node `i` on the cells `urls`, named `node<i>`, logging to
    /// `dir`: this build's `plylog`, or the `before` build's (an earlier
    /// plylog, which has no slots, so no node name or address to give).
    pub(crate) fn start(i: usize, dir: &Path, urls: &[String], before: Option<&Path>) -> Node {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(format!("node{i}.log")))
            .expect("node log opens");
        let addr = node_addr(i).to_string();
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", &format!("plyha-node{i}")])
            .arg(before.unwrap_or(Path::new(env!("CARGO_BIN_EXE_plylog"))))
            .args(["serve", "--listen", &addr]);
        if before.is_none() {
            command
                .args(["--advertise-address", &addr])
                .args(["--node-name", &format!("node{i}")]);
        }
        command
            .args(["--metrics-listen", &metrics_addr(i).to_string()])
            .args(["--no-seat-tokens", "--postgres-connections", "8"])
            .args(["--shutdown-grace-secs", "5"]);
        for url in urls {
            command.args(["--database-url", url]);
        }
        command.env_remove("DATABASE_URL").env("RUST_LOG", "info");
        let child = command
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("node starts");
        let node = Node {
            index: i,
            child: Some(child),
            last_metrics: HashMap::new(),
        };
        let started = Instant::now();
        while TcpStream::connect_timeout(&node_addr(i), Duration::from_millis(200)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "node {i} does not listen within 60 s (see node{i}.log)"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        node
    }

    /// Node `i`, not running (in its place while it stops).
    pub(crate) fn placeholder(i: usize) -> Node {
        Node {
            index: i,
            child: None,
            last_metrics: HashMap::new(),
        }
    }

    fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    fn signal(&self, signal: &str) {
        if let Some(pid) = self.pid() {
            let _ = Command::new("kill")
                .args([signal, &pid.to_string()])
                .status();
        }
    }

    /// SIGKILL, and waits for the process.
    pub(crate) fn kill(&mut self) {
        self.signal("-KILL");
        if let Some(mut child) = self.child.take() {
            let _ = child.wait();
        }
    }

    /// Pauses the process (SIGSTOP).
    pub(crate) fn pause(&self) {
        self.signal("-STOP");
    }

    /// Resumes it (SIGCONT).
    pub(crate) fn resume(&self) {
        self.signal("-CONT");
    }

    /// SIGTERM (a graceful stop), and waits for the process (at most 30 s).
    pub(crate) fn stop(&mut self) {
        self.signal("-TERM");
        if let Some(mut child) = self.child.take() {
            let started = Instant::now();
            loop {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                if started.elapsed() > Duration::from_secs(30) {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("node {} did not stop within 30 s of SIGTERM", self.index);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    /// Whether the process runs.
    pub(crate) fn running(&self) -> bool {
        self.child.is_some()
    }

    /// The metric `name` (summed over its labels) as the node gives it now;
    /// 0 when the node does not answer or has no such metric.
    pub(crate) fn metric(&mut self, name: &str) -> f64 {
        self.scrape()
            .and_then(|m| m.get(name).copied())
            .unwrap_or(0.0)
    }

    /// Reads the node's metrics (sums over labels, by family name), and
    /// keeps them as its last; `None` when it does not answer in 2 s.
    pub(crate) fn scrape(&mut self) -> Option<HashMap<String, f64>> {
        if !self.running() {
            return None;
        }
        let metrics = scrape(metrics_addr(self.index))?;
        self.last_metrics = metrics.clone();
        Some(metrics)
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.resume();
        self.kill();
    }
}

/// `GET /metrics` at `addr`, parsed into a sum per metric name.
fn scrape(addr: SocketAddr) -> Option<HashMap<String, f64>> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: plylog\r\n\r\n")
        .ok()?;
    let mut body = String::new();
    stream.read_to_string(&mut body).ok()?;
    let mut metrics = HashMap::new();
    for line in body.lines().filter(|l| l.starts_with("plylog_")) {
        let name = line.split(['{', ' ']).next()?.to_owned();
        let value: f64 = line.rsplit(' ').next()?.parse().ok()?;
        *metrics.entry(name).or_insert(0.0) += value;
    }
    Some(metrics)
}
