//! A second `make run` on the same checkout keeps working with what the first one made: the
//! real `tools/run.sh`, run twice on one run folder and one data folder (its `RUN_DIR` and
//! `DATA_DIR`, on free ports, with the suite's model server), keeps the key holder's secrets and
//! provisioner key, so the second run opens the first run's managed wallet, deposit wallet and
//! pool. A run folder whose secrets are gone moves the data folder aside and says so.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use e2e::free_port;
use serde_json::Value;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
const READY: &str = "Private inference service running";

/// One `tools/run.sh`: its process and what it printed.
struct Run {
    child: Child,
    printed: Arc<Mutex<String>>,
    relay: String,
    run_dir: PathBuf,
}

impl Run {
    /// Starts the script and waits until it says the service runs.
    fn start(run_dir: &Path, data_dir: &Path) -> Run {
        let (relay_port, enclave_port) = (free_port(), free_port());
        let mut child = Command::new("bash")
            .arg(Path::new(ROOT).join("tools/run.sh"))
            .env("RUN_DIR", run_dir)
            .env("DATA_DIR", data_dir)
            .env("RELAY_PORT", relay_port.to_string())
            .env("ENCLAVE_PORT", enclave_port.to_string())
            .env("RUN_MODEL_URL", e2e::llm_base_url())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("bash runs tools/run.sh");
        let printed = Arc::new(Mutex::new(String::new()));
        let sink = printed.clone();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                sink.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let run = Run { child, printed, relay: format!("http://127.0.0.1:{relay_port}"), run_dir: run_dir.into() };
        let deadline = Instant::now() + Duration::from_secs(240);
        while !run.printed().contains(READY) {
            assert!(Instant::now() < deadline, "make run did not come up:\n{}", run.printed());
            std::thread::sleep(Duration::from_millis(200));
        }
        run
    }

    fn printed(&self) -> String {
        self.printed.lock().unwrap().clone()
    }

    /// `svc --json …` against this run, as its printed instructions say; the JSON it prints.
    fn svc(&self, args: &[&str]) -> Value {
        let api_key = std::fs::read_to_string(self.run_dir.join("api-key")).unwrap();
        let out = Command::new(e2e::binary("svc"))
            .args(["--json", "--relay", &self.relay, "--api-key", api_key.trim()])
            .arg("--measurements")
            .arg(Path::new(ROOT).join("measurements/dev.json"))
            .arg("--dev-root")
            .arg(self.run_dir.join("dev-root.pem"))
            .env("SVC_STATE_DIR", self.run_dir.join("svc-state"))
            .args(args)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "svc {args:?}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_str(stdout.trim()).unwrap_or_else(|_| panic!("svc {args:?} printed no JSON: {stdout}"))
    }

    /// The local chain's stablecoin mint this run made.
    fn usdc(&self) -> String {
        let sandbox: Value =
            serde_json::from_str(&std::fs::read_to_string(self.run_dir.join("sandbox.json")).unwrap()).unwrap();
        sandbox["usdc"].as_str().unwrap().to_string()
    }

    /// The managed wallets' pool, as the relay names it.
    fn pool(&self) -> String {
        let url = format!("{}/agents/v1/reserves?mint={}", self.relay, self.usdc());
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let out = Command::new("curl").args(["-sf", &url]).output().unwrap();
            let answer: Option<Value> = serde_json::from_slice(&out.stdout).ok();
            if let Some(pool) = answer.as_ref().and_then(|a| a["pool"].as_str()) {
                return pool.to_string();
            }
            assert!(Instant::now() < deadline, "no pool: {answer:?}");
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// Stops it as Ctrl-C would (the script's trap stops what it started).
    fn stop(self) {}
}

impl Drop for Run {
    /// Also when a check failed: a script left running would keep its enclave and relay up.
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_some() {
            return;
        }
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.child.try_wait().ok().flatten().is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                eprintln!("make run did not stop on SIGTERM");
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[test]
fn a_second_make_run_opens_what_the_first_sealed() {
    let dir = tempfile::tempdir().unwrap();
    let (run_dir, data_dir) = (dir.path().join("run"), dir.path().join("data"));

    let first = Run::start(&run_dir, &data_dir);
    let wallet = first.svc(&["wallet", "create", "--webhook-url", "http://127.0.0.1:9/hook"]);
    let wallet_id = wallet["walletId"].as_str().unwrap_or_else(|| panic!("{wallet}")).to_string();
    let deposit_owner = first.svc(&["deposit"])["owner"].clone();
    let pool = first.pool();
    first.svc(&["wallet", "balance", &wallet_id, "--mints", &first.usdc()]);
    first.stop();

    // The same folders: the wallet, the deposit wallet and the pool open (a run that made a
    // new KEK would answer sealed_object_invalid for each).
    let second = Run::start(&run_dir, &data_dir);
    assert!(!second.printed().contains("moved to"), "{}", second.printed());
    let balances = second.svc(&["wallet", "balance", &wallet_id, "--mints", &second.usdc()]);
    assert!(balances["balances"].as_array().is_some_and(|b| !b.is_empty()), "{balances}");
    assert_eq!(second.svc(&["deposit"])["owner"], deposit_owner);
    assert_eq!(second.pool(), pool);
    second.stop();

    // Secrets gone: the data sealed under them is moved aside, said, and a fresh one begins.
    std::fs::remove_file(run_dir.join("secrets.age")).unwrap();
    let third = Run::start(&run_dir, &data_dir);
    let printed = third.printed();
    assert!(
        printed.contains("was sealed under a key holder secret this checkout no longer has: moved to"),
        "{printed}"
    );
    let aside: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with("data.before-"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert_ne!(third.svc(&["deposit"])["owner"], deposit_owner, "a new key holder secret, a new deposit wallet");
    third.stop();
}
