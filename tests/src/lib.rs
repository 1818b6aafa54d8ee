//! Harness for end-to-end tests: starts the real `enclave` and `relay` binaries on free
//! ports against the real model server (`LLM_BASE_URL`), and stops them on drop.
//!
//! The binaries must be built first (`cargo build --bins`; `make test` does it).

pub mod chain;
pub mod gpu_agent;
pub mod gpu_node;
pub mod host;
pub mod http;
pub mod keyholder;
pub mod postgres;
pub mod route_program;
pub mod sealed;
pub mod swaps;
pub mod wallets;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The model server the Makefile starts.
pub fn llm_base_url() -> String {
    std::env::var("LLM_BASE_URL").unwrap_or_else(|_| {
        panic!("LLM_BASE_URL is not set: run the end-to-end tests with `make test`, which starts the model server")
    })
}

pub fn binary(name: &str) -> PathBuf {
    // target/<profile>/deps/<test> → target/<profile>/<name>
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe.parent().and_then(Path::parent).expect("target directory");
    let path = dir.join(name);
    assert!(path.exists(), "{} is missing: run `cargo build --bins` first (make test does)", path.display());
    path
}

/// Runs `command` to its end: the exit code, stdout and stderr (as text).
pub fn run(command: &mut std::process::Command) -> (i32, String, String) {
    let out = command.output().expect("the command starts");
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (out.status.code().expect("the command exited, not killed"), text(&out.stdout), text(&out.stderr))
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A child process killed on drop, with its stderr in a log file.
pub struct Process {
    child: Option<Child>,
    pub log: PathBuf,
}

impl Process {
    fn spawn(bin: &str, config: &Path, log: PathBuf, env: &[(&str, &str)]) -> Self {
        let file = std::fs::File::create(&log).unwrap();
        let mut cmd = Command::new(binary(bin));
        cmd.arg("--config").arg(config).stdout(Stdio::null()).stderr(file).env_remove("DATABASE_URL");
        for (k, v) in env {
            cmd.env(k, v);
        }
        Process { child: Some(cmd.spawn().unwrap()), log }
    }

    /// Starts `cmd` (stdout discarded, stderr to `log`), killed on drop.
    pub fn spawn_command(cmd: &mut Command, log: PathBuf) -> Self {
        let file = std::fs::File::create(&log).unwrap();
        cmd.stdout(Stdio::null()).stderr(file);
        Process { child: Some(cmd.spawn().unwrap()), log }
    }

    /// Starts one of the workspace binaries with `--config`.
    pub fn spawn_binary(bin: &str, config: &Path, log: PathBuf) -> Self {
        Self::spawn(bin, config, log, &[])
    }

    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Waits up to `timeout` for the process to exit on its own; its status if it did.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + timeout;
        let child = self.child.as_mut()?;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stop();
    }
}

pub fn wait_http(url: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(r) = probe::get_ok(url)
            && r
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{url} did not come up within 30 s");
}

mod probe {
    // A tiny blocking GET over std so the harness does not need a runtime.
    pub fn get_ok(url: &str) -> std::io::Result<bool> {
        use std::io::{Read, Write};
        let rest = url.strip_prefix("http://").unwrap();
        let (host, path) = rest.split_once('/').map_or((rest, "/".to_string()), |(h, p)| (h, format!("/{p}")));
        let mut s = std::net::TcpStream::connect(host)?;
        s.set_read_timeout(Some(std::time::Duration::from_secs(2)))?;
        write!(s, "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")?;
        let mut buf = String::new();
        s.read_to_string(&mut buf)?;
        Ok(buf.starts_with("HTTP/1.1 200"))
    }
}

/// One enclave (or several) and one relay, in a temp folder, and the key holder: it
/// provisions each enclave and, as the freshness witness (DESIGN §13), answers the pool's book
/// appends from a thread of the test process.
pub struct Stack {
    /// Stopped first: its long poll would otherwise outlive the relay.
    witness_thread: Option<WitnessThread>,
    pub witness: std::sync::Arc<client::witness::Witness>,
    pub dir: tempfile::TempDir,
    pub enclave: Process,
    pub relay: Process,
    pub enclave_port: u16,
    /// More enclaves behind the same relay (`StackOptions::extra_enclaves`), with their ports.
    pub others: Vec<(Process, u16)>,
    pub relay_url: String,
    pub api_key: String,
    options: StackOptions,
}

pub const API_KEY: &str = "sk_svc_e2e_test_key";
/// Seed of the enclave's dev quote PKI in these tests.
pub const DEV_SEED: &str = "5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed";
/// Seed of the provisioner key the test enclaves' configuration lists.
pub const PROVISIONER_SEED: [u8; 32] = [0x70; 32];

/// The test provisioner (a key holder's signing key).
pub fn provisioner() -> ed25519_dalek::SigningKey {
    ed25519_dalek::SigningKey::from_bytes(&PROVISIONER_SEED)
}

/// The test provisioner's public key, as an enclave configuration lists it (and as
/// `image/build.sh` writes it into the image's unpublished test variant).
pub fn provisioner_public() -> String {
    shared::address::Address(provisioner().verifying_key().to_bytes()).to_string()
}

/// What `image/build.sh` lists in the test variant; a test checks it is [`provisioner_public`].
pub const IMAGE_TEST_PROVISIONER: &str = "2h5kxRtRLaQ99vMgcTmyZ914bUYBjB5fWifi95mi9v4Y";

/// The published placeholder measurements that dev quotes carry.
pub fn dev_measurements() -> shared::attest::Measurements {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/dev.json");
    shared::attest::Measurements::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// How a [`Stack`] is set up.
#[derive(Clone)]
pub struct StackOptions {
    pub dev_quotes: bool,
    /// The model server both the enclave and the relay's plaintext path call
    /// (default: the real one, `LLM_BASE_URL`).
    pub model_base_url: Option<String>,
    pub model_max_tokens: u32,
    /// `tools` section for both (upstreams of stand-ins).
    pub tools: serde_json::Value,
    /// Merged into the relay's configuration.
    pub relay: serde_json::Value,
    /// Merged into each enclave's configuration.
    pub enclave: serde_json::Value,
    /// Environment for both processes. Tool credentials the relay reads from it
    /// (`apiKeyEnv`) reach the enclave in its secrets bundle instead.
    pub env: Vec<(String, String)>,
    /// Provision the enclave at start (and after each restart), as a key holder would.
    pub provision: bool,
    /// Enclaves behind the relay besides the first.
    pub extra_enclaves: usize,
    /// Run the freshness witness (with `provision`); a test that plays it itself says no.
    pub witness: bool,
}

impl Default for StackOptions {
    fn default() -> Self {
        StackOptions {
            dev_quotes: true,
            model_base_url: None,
            model_max_tokens: 16,
            tools: serde_json::json!({}),
            relay: serde_json::json!({}),
            enclave: serde_json::json!({}),
            env: Vec::new(),
            provision: true,
            extra_enclaves: 0,
            witness: true,
        }
    }
}

impl StackOptions {
    /// The enclave's `tools` section: the upstreams without `apiKeyEnv` (the enclave takes
    /// credentials only from its bundle).
    fn enclave_tools(&self) -> serde_json::Value {
        let mut tools = self.tools.clone();
        if let Some(upstreams) = tools.get_mut("upstreams").and_then(|u| u.as_object_mut()) {
            for upstream in upstreams.values_mut().filter_map(|u| u.as_object_mut()) {
                upstream.remove("apiKeyEnv");
            }
        }
        tools
    }

    /// The bundle's credentials: each upstream's `apiKeyEnv` value from `env`.
    pub fn credentials(&self) -> std::collections::BTreeMap<String, shared::provision::Secret> {
        let upstreams = self.tools.get("upstreams").and_then(|u| u.as_object()).cloned().unwrap_or_default();
        upstreams
            .iter()
            .filter_map(|(id, u)| {
                let var = u.get("apiKeyEnv")?.as_str()?;
                let value = self.env.iter().find(|(k, _)| k == var)?.1.clone();
                Some((id.clone(), shared::provision::Secret::new(value)))
            })
            .collect()
    }

    fn models(&self) -> serde_json::Value {
        let endpoint = self.model_base_url.clone().unwrap_or_else(llm_base_url);
        serde_json::json!({
            "gpt-oss:20b": {"endpoint": endpoint, "upstreamModel": "smollm2-135m", "maxTokens": self.model_max_tokens}
        })
    }
}

impl Stack {
    /// Enclave with dev quotes (seeded test PKI), relay, in a temp folder.
    pub fn start() -> Self {
        Self::start_with(StackOptions::default())
    }

    /// Enclave with no quote provider at all (`tdx_quote_unavailable`).
    pub fn start_without_quotes() -> Self {
        Self::start_with(StackOptions { dev_quotes: false, ..StackOptions::default() })
    }

    pub fn start_with(options: StackOptions) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let enclave_port = free_port();
        let enclave = start_enclave(dir.path(), enclave_port, &options);
        let others: Vec<(Process, u16)> = (0..options.extra_enclaves)
            .map(|_| {
                let port = free_port();
                (start_enclave(dir.path(), port, &options), port)
            })
            .collect();
        let enclave_urls: Vec<String> = std::iter::once(enclave_port)
            .chain(others.iter().map(|(_, p)| *p))
            .map(|p| format!("http://127.0.0.1:{p}"))
            .collect();
        let relay_port = free_port();
        let relay_config = dir.path().join("relay.json");
        let mut config = serde_json::json!({
            "listen": format!("127.0.0.1:{relay_port}"),
            "enclaves": enclave_urls,
            "enclaveRefreshSecs": 1,
            "dataDir": dir.path().join("relay-data"),
            "apiKeys": [API_KEY],
            "models": options.models(),
            "modelTimeoutSecs": 240,
            "tools": options.tools,
            // Chat is free in tests unless a test sets a price (tests/tests/billing.rs does).
            "teeProcessPricePerCall": 0,
        });
        if let (Some(base), Some(extra)) = (config.as_object_mut(), options.relay.as_object()) {
            base.extend(extra.clone());
        }
        std::fs::write(&relay_config, config.to_string()).unwrap();
        let mut env: Vec<(&str, &str)> = options.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        env.push(("RUST_LOG", "debug"));
        let relay = Process::spawn("relay", &relay_config, dir.path().join("relay.log"), &env);
        let relay_url = format!("http://127.0.0.1:{relay_port}");
        wait_http(&format!("{relay_url}/health"));
        let witness = std::sync::Arc::new(
            client::witness::Witness::open(&dir.path().join("witness.json"), provisioner()).unwrap(),
        );
        let mut stack = Stack {
            witness_thread: None,
            witness,
            dir,
            enclave,
            relay,
            enclave_port,
            others,
            relay_url,
            api_key: API_KEY.into(),
            options,
        };
        stack.provision_if_asked();
        // Only a relay with the wallet pool has book appends to witness.
        let pool = stack.options.relay.get("agents").is_some();
        if stack.options.provision && stack.options.dev_quotes && stack.options.witness && pool {
            stack.witness_thread = Some(WitnessThread::start(stack.bare_client(), stack.witness.clone()));
        }
        stack
    }

    /// Kills the relay (SIGKILL, by its own handle) and starts it again on the same port, data
    /// and configuration, with `env` added to the stack's environment.
    pub fn restart_relay(&mut self, env: &[(&str, &str)]) {
        self.relay.stop();
        let mut all: Vec<(&str, &str)> = self.options.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        all.push(("RUST_LOG", "debug"));
        all.extend_from_slice(env);
        let log = self.dir.path().join(format!("relay-{}.log", unique()));
        self.relay = Process::spawn("relay", &self.dir.path().join("relay.json"), log, &all);
        wait_http(&format!("{}/health", self.relay_url));
    }

    /// Stops the enclave and starts a new one (new keys) on the same port.
    pub fn restart_enclave(&mut self) {
        self.enclave.stop();
        self.enclave = start_enclave(self.dir.path(), self.enclave_port, &self.options);
        self.provision_if_asked();
    }

    /// Stops the `i`th extra enclave and starts a new one (new keys) on its port.
    pub fn restart_other(&mut self, i: usize) {
        let (process, port) = &mut self.others[i];
        process.stop();
        *process = start_enclave(self.dir.path(), *port, &self.options);
        self.provision_if_asked();
    }

    /// Every enclave's port, the first one first.
    pub fn enclave_ports(&self) -> Vec<u16> {
        std::iter::once(self.enclave_port).chain(self.others.iter().map(|(_, p)| *p)).collect()
    }

    /// The secrets a key holder of these tests releases: a KEK fixed per stack and the tool
    /// credentials of the options.
    pub fn secrets(&self, version: u64) -> client::provision::Secrets {
        let kek = shared::sha256(self.dir.path().to_string_lossy().as_bytes());
        client::provision::Secrets {
            version,
            kek: shared::provision::Secret::new(shared::b64::encode(kek)),
            previous_keks: Vec::new(),
            credentials: self.options.credentials(),
        }
    }

    /// Verifies and provisions every enclave, as `svc provision --key-id` does for each.
    pub fn provision_now(&self) {
        let client = self.client();
        let secrets = self.secrets(1);
        let key_ids: Vec<[u8; 32]> = self.enclave_ports().iter().map(|p| enclave_key_id(*p)).collect();
        // A thread of its own: the caller may be inside a runtime, which must not block.
        std::thread::scope(|s| {
            s.spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                runtime.block_on(async {
                    for key_id in key_ids {
                        // The relay learns a new key within its refresh interval.
                        let mut tries = 0;
                        loop {
                            match client.provision(&secrets, &provisioner(), Some(key_id), Some(&self.witness)).await {
                                Err(client::ClientError::Refused { code, .. })
                                    if code == "decrypt_failed" && tries < 50 =>
                                {
                                    tries += 1;
                                    tokio::time::sleep(Duration::from_millis(100)).await;
                                }
                                // Already holds this version (an enclave that did not restart).
                                Err(client::ClientError::Refused { code, .. }) if code == "stale_bundle" => break,
                                other => {
                                    let out = other.expect("provisioning a test enclave");
                                    assert!(out.state.as_ref().is_some_and(|s| s.provisioned), "{out:?}");
                                    break;
                                }
                            }
                        }
                    }
                })
            })
            .join()
            .unwrap()
        });
    }

    fn provision_if_asked(&self) {
        // Without dev quotes nothing can be verified, so nothing is released.
        if self.options.provision && self.options.dev_quotes {
            self.provision_now();
            // At or after the bundles' `issuedAt`.
            let provisioned_at = shared::time::unix_now();
            // An owner request signed in the second of a boot's provisioning is refused
            // (`request_predates_boot`: the clocks tell seconds apart), so a test starts signing
            // in the next one.
            while shared::time::unix_now() <= provisioned_at {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }

    /// A client that verifies the enclave against the dev root and `measurements/dev.json`.
    pub fn client(&self) -> client::Client {
        self.bare_client().with_attestation(self.attest_options())
    }

    /// A client with no attestation policy (it can read keys and receipts, not chat).
    pub fn bare_client(&self) -> client::Client {
        client::Client::new(&self.relay_url, Some(self.api_key.clone()))
    }

    /// Dev root when the enclave has dev quotes; Intel's root otherwise (nothing to trust).
    pub fn attest_options(&self) -> client::attest::AttestOptions {
        let root = match self.options.dev_quotes {
            true => shared::attest::TrustRoot::Dev(self.dev_root_der()),
            false => shared::attest::TrustRoot::Intel,
        };
        client::attest::AttestOptions::new(root, dev_measurements())
    }

    pub fn dev_root_pem_path(&self) -> PathBuf {
        self.dir.path().join("dev-root.pem")
    }

    pub fn dev_root_der(&self) -> Vec<u8> {
        let pem = std::fs::read_to_string(self.dev_root_pem_path()).expect("enclave wrote its dev root");
        let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        shared::b64::decode(&body).unwrap()
    }

    /// `relay admin credit` of `amount` stablecoin base units to `key_id`, as an operator would.
    pub fn credit_usdc(&self, key_id: &str, amount: i64) {
        credit_usdc(&self.dir.path().join("relay.json"), key_id, amount);
    }

    pub fn relay_data_dir(&self) -> PathBuf {
        self.dir.path().join("relay-data")
    }
}

/// The freshness witness answering the relay's book appends, on a thread of its own until
/// dropped.
struct WitnessThread {
    stop: tokio::sync::watch::Sender<bool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl WitnessThread {
    fn start(client: client::Client, witness: std::sync::Arc<client::witness::Witness>) -> Self {
        let (stop, mut stopped) = tokio::sync::watch::channel(false);
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(client::witness::serve(&client, &witness, async move {
                let _ = stopped.wait_for(|s| *s).await;
            }));
        });
        WitnessThread { stop, thread: Some(thread) }
    }
}

impl Drop for WitnessThread {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn start_enclave(dir: &Path, port: u16, options: &StackOptions) -> Process {
    let config_path = dir.join("enclave.json");
    let mut config = serde_json::json!({
        "listen": format!("127.0.0.1:{port}"),
        // No configfs-tsm here: without dev quotes the enclave reports tdx_quote_unavailable.
        "tsmRoot": dir.join("no-tsm"),
        "modelTimeoutSecs": 240,
        "models": options.models(),
        "tools": options.enclave_tools(),
        "provisioners": [provisioner_public()],
    });
    if let (Some(base), Some(extra)) = (config.as_object_mut(), options.enclave.as_object()) {
        base.extend(extra.clone());
    }
    if options.dev_quotes {
        // `enclave.devQuotes` adds to these (e.g. `"collateral": false`) rather than replacing them.
        let mut dev = serde_json::json!({"seed": DEV_SEED, "writeRootPem": dir.join("dev-root.pem")});
        if let (Some(dev), Some(extra)) = (dev.as_object_mut(), options.enclave["devQuotes"].as_object()) {
            dev.extend(extra.clone());
        }
        config["devQuotes"] = dev;
    }
    std::fs::write(&config_path, config.to_string()).unwrap();
    let env: Vec<(&str, &str)> = options.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut p = Process::spawn("enclave", &config_path, dir.join(format!("enclave-{port}-{}.log", unique())), &env);
    if p.wait_exit(Duration::from_millis(200)).is_some() {
        panic!("the enclave exited at start:\n{}", p.log_text());
    }
    wait_http(&format!("http://127.0.0.1:{port}/public-key"));
    p
}

/// The key id (sha256 of the X25519 key) of the enclave on `port`, asked directly.
pub fn enclave_key_id(port: u16) -> [u8; 32] {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "GET /public-key HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let body = text.split("\r\n\r\n").nth(1).unwrap();
    let key: shared::wire::PublicKeyResponse = serde_json::from_str(body).unwrap();
    shared::receipt::decode_hex32(&key.public_key_sha256).unwrap()
}

/// `relay --config <config> admin credit` (the configuration names the database).
pub fn credit_usdc(config: &Path, key_id: &str, amount: i64) {
    let out = Command::new(binary("relay"))
        .arg("--config")
        .arg(config)
        .args(["admin", "credit", "--key-id", key_id, "--currency", "usdc", "--amount", &amount.to_string()])
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn unique() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
}

/// Polls futures together until all are done; their outputs in order (no `futures` crate, and
/// no `'static` bound as spawning would need).
pub async fn join_all<F: std::future::Future>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let mut pinned: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = (0..pinned.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in pinned.iter_mut().enumerate() {
            if out[i].is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => out[i] = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending { std::task::Poll::Pending } else { std::task::Poll::Ready(()) }
    })
    .await;
    out.into_iter().map(|o| o.expect("every future finished")).collect()
}

/// A fresh PostgreSQL database named after `label`, when `DATABASE_URL` is set (CI sets it);
/// `None` (the caller runs on SQLite or skips) otherwise.
pub async fn fresh_postgres(label: &str) -> Option<String> {
    use sqlx::Connection;
    let admin_url = std::env::var("DATABASE_URL").ok()?;
    sqlx::any::install_default_drivers();
    let stamp = hex::encode(shared::sha256(format!("{label}{}", unique()).as_bytes()));
    let name = format!("svc_e2e_{}", &stamp[..12]);
    let mut admin = sqlx::AnyConnection::connect(&admin_url).await.unwrap();
    sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin).await.unwrap();
    let (base, _) = admin_url.rsplit_once('/').unwrap();
    Some(format!("{base}/{name}"))
}
