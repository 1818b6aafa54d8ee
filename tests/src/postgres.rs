//! A PostgreSQL server of a test's own (initdb in a temp folder, a free port), so a test can
//! stop and restart it without touching the machine's shared server. PostgreSQL refuses to run
//! as root, so when the tests run as root the server runs as the `postgres` user.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct PrivatePostgres {
    dir: tempfile::TempDir,
    pub port: u16,
    server: Option<Child>,
    /// The user the server runs as, when the tests run as root.
    user: Option<(u32, u32)>,
}

/// The folder holding `initdb` and `postgres`: on PATH, else Debian's newest version.
fn bin_dir() -> Option<PathBuf> {
    if let Ok(out) = Command::new("sh").args(["-c", "command -v initdb"]).output()
        && out.status.success()
    {
        let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        return path.parent().map(PathBuf::from);
    }
    let mut versions: Vec<PathBuf> =
        std::fs::read_dir("/usr/lib/postgresql").ok()?.flatten().map(|e| e.path()).collect();
    versions.sort();
    versions.pop().map(|v| v.join("bin")).filter(|b| b.join("initdb").exists())
}

fn id(flag: &str, user: &str) -> u32 {
    let out = Command::new("id").args([flag, user]).output().expect("id runs");
    String::from_utf8_lossy(&out.stdout).trim().parse().expect("a numeric id")
}

impl PrivatePostgres {
    /// `None` (with a note) when this machine has no PostgreSQL server binaries.
    pub fn start() -> Option<Self> {
        let Some(bin) = bin_dir() else {
            eprintln!("no PostgreSQL server binaries (initdb): test skipped");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let user = (effective_uid() == 0).then(|| (id("-u", "postgres"), id("-g", "postgres")));
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).unwrap();
        }
        let data = dir.path().join("data");
        let mut initdb = Command::new(bin.join("initdb"));
        initdb.args(["-A", "trust", "-U", "postgres", "--no-sync", "-D"]).arg(&data);
        let status = as_user(&mut initdb, user).stdout(Stdio::null()).stderr(Stdio::null()).status().unwrap();
        assert!(status.success(), "initdb failed");
        let mut pg = PrivatePostgres { dir, port: crate::free_port(), server: None, user };
        pg.restart();
        Some(pg)
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Spawns the server; true once it accepts connections, false if it exited first.
    fn start_server(&mut self, bin: &std::path::Path) -> bool {
        let mut cmd = Command::new(bin.join("postgres"));
        cmd.arg("-D").arg(self.dir.path().join("data"));
        cmd.args(["-p", &self.port.to_string(), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"]);
        cmd.arg("-k").arg(self.dir.path());
        let log = std::fs::File::create(self.dir.path().join(format!("pg-{}.log", self.port))).unwrap();
        let mut child = as_user(&mut cmd, self.user).stdout(Stdio::null()).stderr(log).spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if !matches!(child.try_wait(), Ok(None)) || Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.server = Some(child);
        true
    }

    /// Stops the server at once (SIGKILL of the postmaster, by its own handle), as a crash or a
    /// host restart would; its children notice the postmaster is gone and exit.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.server.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
            assert!(Instant::now() < deadline, "PostgreSQL did not stop");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Starts it (again) on the same data and port; crash recovery runs first. A killed
    /// server's backends may hold its shared memory for a moment: retried until they are gone.
    pub fn restart(&mut self) {
        let bin = bin_dir().expect("binaries found at start");
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.start_server(&bin) {
            assert!(Instant::now() < deadline, "PostgreSQL did not start: see {}", self.dir.path().display());
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        if let Some(mut child) = self.server.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn as_user(cmd: &mut Command, user: Option<(u32, u32)>) -> &mut Command {
    if let Some((uid, gid)) = user {
        cmd.uid(uid).gid(gid);
    }
    cmd
}

/// This process's effective user id, read from /proc.
fn effective_uid() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|u| u.parse().ok())
        .unwrap_or(u32::MAX)
}

/// Runs `test` against a PostgreSQL server of its own, stopped after; skipped (with the reason
/// printed by [`PrivatePostgres::start`]) where none can be started.
pub async fn on_own_server<F: std::future::Future<Output = ()>>(test: impl FnOnce(Option<String>) -> F) {
    let Some(pg) = tokio::task::spawn_blocking(PrivatePostgres::start).await.unwrap() else { return };
    test(Some(pg.url())).await;
    drop(pg);
}

/// Two tests of one body `async fn(database_url: Option<String>)`: on SQLite, and on a
/// PostgreSQL server of the test's own ([`on_own_server`]).
#[macro_export]
macro_rules! on_sqlite_and_postgres {
    ($body:ident: $on_sqlite:ident, $on_postgres:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $on_sqlite() {
            $body(None).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $on_postgres() {
            $crate::postgres::on_own_server($body).await;
        }
    };
}
