//! `svc`: the command-line client.

#[path = "svc/log_trust.rs"]
mod log_trust;
#[path = "svc/measure_json.rs"]
mod measure_json;
#[path = "svc/swap_cmd.rs"]
mod swap_cmd;
#[path = "svc/wallet_cmd.rs"]
mod wallet_cmd;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use client::Client;
use client::ClientError;
use client::attest::{AttestOptions, AttestationReport};
use client::chat::ChatOptions;
use client::key_cache::KeyCache;
use client::receipts::ReceiptQuery;
use shared::address::Address;
use shared::attest::{Collateral, Evidence, Measurements, Policy, TrustRoot, Verdict, VerificationDocument, verify};

#[derive(Parser)]
#[command(name = "svc", about = "Private inference client: verify the enclave, encrypt to it, verify receipts")]
struct Cli {
    /// Relay base URL.
    #[arg(long, env = "SVC_RELAY_URL", default_value = "http://127.0.0.1:8787", global = true)]
    relay: String,
    /// API key (sk_svc_…) for private routes.
    #[arg(long, env = "SVC_API_KEY", global = true, hide_env_values = true)]
    api_key: Option<String>,
    /// Attestation program id receipts are addressed under (base58).
    #[arg(long, env = "SVC_PROGRAM_ID", global = true)]
    program_id: Option<String>,
    /// The transparency log's key (hex ed25519, the relay's ledger key) to require on every
    /// tree head; default: the key the heads name, which must then agree with each other.
    #[arg(long, env = "SVC_LOG_KEY", global = true)]
    log_key: Option<String>,
    /// File caching the verified enclave key between runs (default: none).
    #[arg(long, env = "SVC_KEY_CACHE", global = true)]
    key_cache: Option<PathBuf>,
    /// Print the outcome as one JSON document on stdout, for every command (fields in
    /// docs/cli-json.md); a failure prints `{"error", "exitCode"}`. `keyholder` writes JSON log
    /// lines instead, `proxy` one JSON line once it listens.
    #[arg(long, global = true)]
    json: bool,
    #[command(flatten)]
    trust: TrustArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args)]
struct TrustArgs {
    /// Published reference values (measurements JSON, schema in docs/attestation.md).
    #[arg(long, env = "SVC_MEASUREMENTS", global = true, default_value = "measurements/measurements.json")]
    measurements: PathBuf,
    /// Trust this development root CA (PEM) instead of Intel's. Dev quotes verify only with it.
    #[arg(long, env = "SVC_DEV_ROOT", global = true)]
    dev_root: Option<PathBuf>,
    /// Accepted TCB status (repeatable; default UpToDate).
    #[arg(long = "tcb-status", global = true)]
    tcb_status: Vec<String>,
    /// Collateral JSON to verify with (offline bundle); preferred over collateral the relay
    /// carries.
    #[arg(long, global = true)]
    collateral: Option<PathBuf>,
    /// Refuse collateral whose TCB info has a lower tcbEvaluationDataNumber (a rollback); the
    /// highest number seen per platform is also kept as a floor while svc runs.
    #[arg(long, env = "SVC_MIN_TCB_EVALUATION", global = true)]
    min_tcb_evaluation: Option<u32>,
    /// Else fetch collateral from this Intel PCS / PCCS base URL (cached until nextUpdate).
    #[arg(long, env = "SVC_PCCS_URL", global = true)]
    pccs: Option<String>,
    /// Accept an enclave without any TDX quote (development only; warned on every call).
    #[arg(long, global = true)]
    allow_unattested: bool,
    /// Whether `dev_root` came from `SVC_DEV_ROOT` rather than the command line.
    #[arg(skip)]
    dev_root_from_env: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Print the enclave's public key.
    Key,
    /// Verify the enclave (or, offline, a quote file) and print the verification document.
    /// Exit codes: 0 accept, 10 reject, 20 unsupported, 30 malformed input.
    Attest {
        /// Offline: a quote file (binary, or hex text).
        #[arg(long, requires = "collateral", requires = "now")]
        quote: Option<PathBuf>,
        /// Offline: verification time, unix seconds.
        #[arg(long)]
        now: Option<u64>,
    },
    /// Send a prompt privately and print the reply and its verified receipt.
    Chat {
        prompt: String,
        #[arg(long)]
        model: Option<String>,
        #[arg(long)]
        max_tokens: Option<u32>,
        /// A Solana RPC node of your choosing: check there that the log's newest anchor landed,
        /// signed by the log key.
        #[arg(long, env = "SVC_RPC_URL")]
        rpc: Option<String>,
    },
    /// Ask the agent. Plaintext by default (the relay runs the tool loop and sees the prompt);
    /// `--encrypted` seals the prompt to the verified enclave, which runs the loop with its
    /// five tools.
    Agent {
        prompt: String,
        #[arg(long)]
        encrypted: bool,
        #[arg(long)]
        model: Option<String>,
        /// One plain completion, no tools (plaintext only).
        #[arg(long)]
        no_tools: bool,
        /// Keep history under this chat id (plaintext only).
        #[arg(long)]
        chat_id: Option<String>,
        /// Guided reasoning (plaintext only).
        #[arg(long)]
        braid: bool,
        /// With --braid: run this plan instead of detecting one.
        #[arg(long)]
        plan: Option<String>,
    },
    /// Fetch and verify a receipt by address, ciphertext hash or commit transaction.
    Receipt {
        query: String,
        /// Also check the receipt is in the transparency log: its inclusion proof, the newest
        /// anchored head and the consistency between them (docs/log.md).
        #[arg(long)]
        proof: bool,
        /// A Solana RPC node of your choosing: check there that the receipt's commit (and, with
        /// `--proof`, the newest anchor) landed, signed by the relay's ledger key (solana mode).
        #[arg(long)]
        rpc: Option<String>,
    },
    /// Verify the enclave exactly as `attest` does, then release the secrets bundle to it:
    /// signed by the provisioner key, sealed to the verified key. Nothing is sent to an enclave
    /// that fails verification (exit 10).
    Provision {
        #[command(flatten)]
        keys: KeyHolderArgs,
        /// The enclave to provision, by key id (hex sha256 of its X25519 key); default any.
        #[arg(long)]
        key_id: Option<String>,
    },
    /// Run as the key holder: provision every enclave key the relay lists that does not hold
    /// this bundle version yet (a reboot makes a new key), with backoff; log each release.
    Keyholder {
        #[command(flatten)]
        keys: KeyHolderArgs,
        /// Seconds between looks at the relay's enclaves.
        #[arg(long, default_value_t = 2)]
        interval: u64,
    },
    /// Write a new provisioner key file (mode 0600) and print its public key for the
    /// enclave's measured configuration (`provisioners`).
    ProvisionerKey { file: PathBuf },
    /// Serve an OpenAI-compatible API on localhost (`/v1/chat/completions`, `/v1/models`) that
    /// verifies the enclave first (exit 10 if it fails), seals every request to it and checks
    /// every receipt; point any OpenAI SDK's base URL at it. It serves local programs only:
    /// web pages (another Origin, or a Host other than the address) get 403; with `--token`
    /// callers must show it as their API key.
    /// Compare the web app a deployment serves (its pages, scripts, manifest and CSP) with the
    /// published bundle: the one this svc carries, or `--published measurements/web.json`.
    /// Exit codes: 0 same bytes, 10 different, 30 malformed input.
    WebCheck {
        #[arg(long)]
        published: Option<PathBuf>,
    },
    /// Serve the OpenAI API on localhost (sealing every request), and the web app from this
    /// svc's own copy of the published bundle at `/` and `/account`.
    Proxy {
        #[arg(long, default_value = "127.0.0.1:8000")]
        listen: String,
        /// A secret every caller must send as `Authorization: Bearer <token>`.
        #[arg(long, env = "SVC_PROXY_TOKEN", hide_env_values = true)]
        token: Option<String>,
    },
    /// Print where to send tokens to fund the API key (a wallet whose key only the enclave
    /// holds, and its token account per accepted mint); `--list` prints the deposits seen;
    /// `--send AMOUNT --mint M --payer-key FILE --rpc-url URL` sends a deposit from a wallet.
    Deposit {
        #[arg(long)]
        list: bool,
        /// Base units to send.
        #[arg(long, requires_all = ["mint", "payer_key", "rpc_url"], conflicts_with = "list")]
        send: Option<u64>,
        #[arg(long)]
        mint: Option<String>,
        /// The sending wallet's keypair file (Solana CLI format).
        #[arg(long)]
        payer_key: Option<PathBuf>,
        #[arg(long)]
        rpc_url: Option<String>,
    },
    /// Private swaps: quote, one-shot swap end to end, session status.
    Swap {
        #[command(subcommand)]
        command: swap_cmd::SwapCommand,
    },
    /// Managed wallets (Mode A): create, fund, balance, audit.
    Wallet {
        #[command(subcommand)]
        command: wallet_cmd::WalletCommand,
    },
    /// A local MCP tool server over stdio for an AI agent acting as a wallet's owner: the
    /// managed-wallet tools, each fund-moving request signed with `--owner-key` and sent only to
    /// a verified enclave (docs/mcp.md). Start it from the agent's MCP configuration.
    Mcp {
        /// The owner's keypair file (Solana CLI format: a JSON array of 64 numbers).
        #[arg(long)]
        owner_key: PathBuf,
        /// An address swaps, shields and withdrawals may pay (repeatable); every other
        /// destination is refused here (`destination_not_allowed`).
        #[arg(long = "allow-destination", value_name = "ADDR")]
        allow_destination: Vec<String>,
        /// Ask on the terminal before paying a destination not allowed (a yes holds for the session).
        #[arg(long)]
        confirm: bool,
        /// The most one call may pay out, in base units: `N` (every mint) or `MINT=N` (repeatable).
        #[arg(long = "max-amount", value_name = "[MINT=]N")]
        max_amount: Vec<String>,
        /// The most paid out per UTC day and mint, in base units: `N` or `MINT=N` (repeatable);
        /// counted in the state directory across runs.
        #[arg(long = "max-daily", value_name = "[MINT=]N")]
        max_daily: Vec<String>,
    },
    /// Print the golden GPU measurements to pin in the enclave's configuration (`gpu.firmware`)
    /// for a GPU of BOARD (`PROJECT-SKU-CHIP`, e.g. `1010-0200-882`) running the driver and
    /// VBIOS of these NVIDIA RIM files. Only RIMs pinned by digest in PINS are read (docs/gpu.md).
    GpuReference {
        #[arg(long, value_name = "FILE")]
        driver_rim: PathBuf,
        #[arg(long, value_name = "FILE")]
        vbios_rim: PathBuf,
        #[arg(long)]
        board: String,
        #[arg(long, value_name = "FILE", default_value = "measurements/gpu-rim-pins.json")]
        pins: PathBuf,
    },
    /// Compute MRTD, RTMR1, RTMR2 and the image id of a built image folder
    /// (OVMF.fd, vmlinuz, initrd.cpio, cmdline), and RTMR0 for a host profile.
    Measure {
        dir: PathBuf,
        /// Print every TDVF section and every RTMR event with its digest.
        #[arg(long)]
        diagnose: bool,
        /// Print a measurements file (schema v1) for publishing instead of the summary (wins
        /// over `--json`, which prints the summary as JSON).
        #[arg(long)]
        measurements_json: bool,
        /// Also compute RTMR0 for the host profile in this folder: files `memory` (e.g. `2G`, or
        /// bytes), `table-loader`, `rsdp`, `tables` (QEMU fw_cfg etc/table-loader, etc/acpi/rsdp,
        /// etc/acpi/tables captured from a TD). See docs/auditing.md.
        #[arg(long, value_name = "DIR")]
        rtmr0_profile: Option<PathBuf>,
    },
}

#[derive(Args)]
struct KeyHolderArgs {
    /// The secrets file: age-encrypted JSON {version, kek, previousKeks, credentials}.
    #[arg(long)]
    secrets: PathBuf,
    /// The provisioner key file (64 hex characters, mode 0600).
    #[arg(long)]
    provisioner_key: PathBuf,
    /// The age identity that opens the secrets file (`age-keygen -o`); else the passphrase in
    /// SVC_SECRETS_PASSPHRASE.
    #[arg(long, env = "SVC_SECRETS_IDENTITY")]
    identity: Option<PathBuf>,
    /// The freshness witness's heads file (DESIGN §13; docs/custody.md): per mint the pool book
    /// it acknowledged last. Keep it as safe as the secrets: lost, the pool's books start over.
    /// Default: the secrets file's path with `.witness.json` added.
    #[arg(long)]
    witness: Option<PathBuf>,
}

impl KeyHolderArgs {
    fn load(
        &self,
    ) -> Result<(client::provision::Secrets, ed25519_dalek::SigningKey, client::witness::Witness), Failure> {
        let passphrase = std::env::var("SVC_SECRETS_PASSPHRASE").ok().map(zeroize::Zeroizing::new);
        let secrets = client::provision::read_secrets(&self.secrets, self.identity.as_deref(), passphrase)?;
        let key = client::provision::read_provisioner_key(&self.provisioner_key)?;
        let path = self.witness.clone().unwrap_or_else(|| {
            let mut name = self.secrets.clone().into_os_string();
            name.push(".witness.json");
            name.into()
        });
        let witness = client::witness::Witness::open(&path, key.clone())?;
        Ok((secrets, key, witness))
    }
}

/// A failure with the exit code it maps to.
#[derive(Debug)]
struct Failure(u8, String);

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        if let ClientError::NotAttested(report) = &e {
            eprint!("{}", render_report(report));
        }
        Failure(1, e.to_string())
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let mut cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    cli.trust.dev_root_from_env = matches.value_source("dev_root") == Some(clap::parser::ValueSource::EnvVariable);
    let json = cli.json;
    match run(cli).await {
        Ok(code) => ExitCode::from(code),
        Err(Failure(code, message)) => {
            eprintln!("svc: {message}");
            // One document on stdout: a command that printed its own before failing (a chat whose
            // log check failed says so in it) prints no second one.
            if json && !PRINTED_JSON.load(std::sync::atomic::Ordering::Relaxed) {
                print_json(&serde_json::json!({"error": message, "exitCode": code}));
            }
            ExitCode::from(code)
        }
    }
}

fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| Failure(30, format!("{}: {e}", path.display())))
}

fn text(path: &Path) -> Result<String, Failure> {
    String::from_utf8(read(path)?).map_err(|_| Failure(30, format!("{}: not UTF-8", path.display())))
}

fn pem_to_der(pem: &str) -> Option<Vec<u8>> {
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    shared::b64::decode(body.trim()).ok().filter(|d| !d.is_empty())
}

impl TrustArgs {
    /// What `svc proxy` offers the web app as its development trust: this svc's own
    /// `--dev-root` and measurements, never the relay's.
    fn page_dev_trust(&self) -> Result<Option<serde_json::Value>, Failure> {
        let Some(root) = &self.dev_root else { return Ok(None) };
        let pem = std::fs::read_to_string(root).map_err(|e| Failure(30, format!("{}: {e}", root.display())))?;
        let measurements: serde_json::Value = std::fs::read(&self.measurements)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or_else(|| Failure(30, format!("{} is not a measurements file", self.measurements.display())))?;
        Ok(Some(serde_json::json!({"rootPem": pem, "measurements": measurements})))
    }

    fn options(&self) -> Result<AttestOptions, Failure> {
        let measurements = Measurements::from_json(&text(&self.measurements)?)
            .map_err(|e| Failure(30, format!("{}: {e}", self.measurements.display())))?;
        let root = match &self.dev_root {
            None => TrustRoot::Intel,
            Some(p) => TrustRoot::Dev(
                pem_to_der(&text(p)?).ok_or_else(|| Failure(30, format!("{}: not a PEM certificate", p.display())))?,
            ),
        };
        let mut options = AttestOptions::new(root, measurements);
        if !self.tcb_status.is_empty() {
            options.allowed_tcb_statuses = self.tcb_status.clone();
        }
        options.allow_unattested = self.allow_unattested;
        options.collateral = self.collateral.as_deref().map(text).transpose()?;
        options.pccs = self.pccs.as_deref().map(|url| client::pccs::PccsClient::new(url, collateral_cache_dir()));
        options.tcb_floor =
            client::attest::TcbFloor::new(self.min_tcb_evaluation).kept_in(state_dir().join("tcb-floor.json"));
        Ok(options)
    }
}

impl TrustArgs {
    /// The trust options of the key holder (`svc provision`, `svc keyholder`), which releases
    /// the service's secrets: never to an unattested enclave, and a development root only when
    /// named on its own command line (an environment variable left set from development would
    /// otherwise make a production key holder trust quotes anyone can sign).
    fn key_holder_options(&self) -> Result<AttestOptions, Failure> {
        if self.allow_unattested {
            return Err(Failure(
                30,
                "the key holder never releases secrets to an unattested enclave: --allow-unattested is refused".into(),
            ));
        }
        if self.dev_root_from_env {
            return Err(Failure(
                30,
                "the key holder takes a development root only as --dev-root on its command line, not from SVC_DEV_ROOT"
                    .into(),
            ));
        }
        self.options()
    }
}

/// What `svc` keeps across runs (verified wallet certificates): `$SVC_STATE_DIR`, else
/// `$XDG_STATE_HOME/svc`, else `~/.local/state/svc`.
fn state_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SVC_STATE_DIR") {
        return PathBuf::from(dir);
    }
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("state")));
    base.unwrap_or_else(|| PathBuf::from(".")).join("svc")
}

/// `$XDG_CACHE_HOME/svc/collateral`, or `~/.cache/svc/collateral`.
fn collateral_cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("svc").join("collateral"))
}

async fn run(cli: Cli) -> Result<u8, Failure> {
    let json = cli.json;
    let mut client = Client::new(&cli.relay, cli.api_key).with_key_cache(KeyCache::new(cli.key_cache));
    if let Some(p) = &cli.program_id {
        client = client
            .with_program_id(Address::parse(p).ok_or(Failure(30, "--program-id is not a base58 address".into()))?);
    }
    let log_trust =
        log_trust::LogTrust::new(cli.log_key.as_deref(), &cli.trust.measurements, &state_dir(), &cli.relay)?;
    let log_key = log_trust.key().copied();
    match cli.command {
        Command::Key => print_json(&client.public_key().await?),
        Command::WebCheck { published } => {
            let expected = match published {
                None => client::web_check::Published::embedded(),
                Some(path) => {
                    std::fs::read(&path).ok().and_then(|b| serde_json::from_slice(&b).ok()).ok_or_else(|| {
                        Failure(30, format!("{} is not a published web bundle (measurements/web.json)", path.display()))
                    })?
                }
            };
            let log_key = cli
                .log_key
                .as_deref()
                .map(|k| shared::tlog::hash::parse_hex(k).ok_or_else(|| Failure(30, "--log-key must be 64 hex".into())))
                .transpose()?;
            let report =
                client::web_check::check(&reqwest::Client::new(), &cli.relay, &expected, log_key.as_ref()).await;
            if json {
                print_json(&report);
            } else {
                print!("{}", report.render());
            }
            return Ok(if report.matches { 0 } else { 10 });
        }
        Command::Attest { quote: Some(quote), now } => {
            return offline(&cli.trust, &quote, now.unwrap_or(0), json);
        }
        Command::Attest { .. } => {
            let (report, _) = client.with_attestation(cli.trust.options()?).attest().await?;
            if json {
                print_json(&report);
            } else {
                print!("{}", render_report(&report));
            }
            return Ok(report.verdict.exit_code());
        }
        Command::Chat { prompt, model, max_tokens, rpc } => {
            let chain = rpc.as_deref().map(client::swap::rpc).transpose()?;
            let client = client.with_attestation(cli.trust.options()?);
            let options = ChatOptions { model, max_tokens, temperature: None };
            let out = client.chat(&prompt, &options).await?;
            // The receipt is in the log as soon as it is committed (same database transaction).
            // The reply is shown either way; a failed log check is reported and fails the run.
            let logged = match shared::tlog::entry::chat(&out.receipt) {
                Some(entry) => check_log(&client, &log_trust, &entry, chain.as_ref()).await,
                None => Err("the receipt has no log entry".to_string()),
            };
            if json {
                print_json(&serde_json::json!({
                    "reply": out.reply, "model": out.model, "provider": out.provider, "usage": out.usage,
                    "receipt": out.receipt, "onchainAttestation": out.onchain, "unattested": out.unattested,
                    "servedBy": out.served_by,
                    "log": match &logged {
                        Ok(check) => serde_json::json!(check),
                        Err(e) => serde_json::json!({"error": e}),
                    },
                }));
            } else {
                println!("{}", out.reply);
                eprintln!();
                eprintln!("model:    {} ({})", out.model, out.provider);
                eprintln!("tokens:   {} prompt + {} completion", out.usage.prompt_tokens, out.usage.completion_tokens);
                eprintln!("receipt:  {} (signature, address, hash, nonce and keys verified)", out.onchain.address);
                eprintln!("commit:   {}", out.onchain.explorer_url);
                if let Some(node) = &out.served_by {
                    eprintln!(
                        "gpu node: {} ({} GPU(s) verified at {}; statement signed by the enclave)",
                        node.node,
                        node.gpu_fwids.len(),
                        shared::time::rfc3339(node.verified_at)
                    );
                }
                if let Ok(check) = &logged {
                    for line in client::log::describe(check) {
                        eprintln!("{line}");
                    }
                }
            }
            if out.unattested {
                eprintln!(
                    "WARNING: this enclave has NO TDX quote (--allow-unattested): nothing proves it runs our image"
                );
            } else {
                eprintln!("enclave:  attested (quote verified against the trust root and measurements, nonce signed)");
            }
            if let Err(e) = logged {
                return Err(Failure(1, format!("transparency log check failed: {e}")));
            }
        }
        Command::Agent { prompt, encrypted: true, model, no_tools, chat_id, braid, plan } => {
            if no_tools || chat_id.is_some() || braid || plan.is_some() {
                return Err(Failure(30, "--no-tools, --chat-id, --braid and --plan need the plaintext path".into()));
            }
            let client = client.with_attestation(cli.trust.options()?);
            let out = client.agent_private(&prompt, model.as_deref()).await?;
            if json {
                print_json(&serde_json::json!({
                    "reply": out.reply, "toolCalls": out.tool_calls, "usage": out.usage, "iterations": out.iterations,
                    "model": out.model, "onchainAttestation": out.onchain,
                    "freeMessagesRemaining": out.free_messages_remaining,
                }));
            } else {
                println!("{}", out.reply);
                eprintln!();
                for call in &out.tool_calls {
                    eprintln!("tool:     {} {}", call.tool, call.args);
                }
                eprintln!(
                    "model:    {} ({} model calls, {} tokens)",
                    out.model, out.iterations, out.usage.total_tokens
                );
                eprintln!("receipt:  {} (verified; the relay saw only ciphertext)", out.onchain.address);
            }
        }
        Command::Agent { prompt, encrypted: false, model, no_tools, chat_id, braid, plan } => {
            let options = client::agent::AgentOptions {
                model,
                use_tools: no_tools.then_some(false),
                chat_id,
                braid: braid || plan.is_some(),
                include_trace: true,
                force_grd_id: plan,
            };
            let body = client.agent(&prompt, &options).await?;
            if json || body.get("success") != Some(&serde_json::Value::Bool(true)) {
                print_json(&body);
            } else {
                println!("{}", body["reply"].as_str().unwrap_or_default());
                eprintln!();
                for call in body["toolCalls"].as_array().into_iter().flatten() {
                    eprintln!("tool:     {} {}", call["tool"].as_str().unwrap_or("?"), call["args"]);
                }
                if let Some(trace) = body.get("braidTrace") {
                    let text = |v: &serde_json::Value| v.as_str().unwrap_or("?").to_string();
                    eprintln!("plan:     {} (intent {})", text(&trace["grdId"]), text(&trace["intent"]));
                }
                eprintln!("model:    {} ({} iterations)", body["model"].as_str().unwrap_or("?"), body["iterations"]);
                eprintln!("billing:  {}; free messages left today: {}", body["billing"], body["freeMessagesRemaining"]);
                eprintln!("note:     plaintext path: the relay saw this prompt (use --encrypted to avoid that)");
            }
        }
        Command::Proxy { listen, token } => {
            // An address, not a name: a name could resolve anywhere.
            let Some(address) = listen.parse::<std::net::SocketAddr>().ok().filter(|a| a.ip().is_loopback()) else {
                return Err(Failure(
                    30,
                    "--listen must be a loopback address and port (e.g. 127.0.0.1:8000): the proxy answers in plaintext"
                        .into(),
                ));
            };
            if token.as_deref().is_some_and(str::is_empty) {
                return Err(Failure(30, "--token must not be empty".into()));
            }
            let listener = tokio::net::TcpListener::bind(&listen)
                .await
                .map_err(|e| Failure(1, format!("cannot listen on {listen}: {e}")))?;
            let client = client.with_attestation(cli.trust.options()?);
            eprintln!("svc proxy: verifying the enclave, then serving http://{listen}/v1 (OpenAI-compatible)");
            if json {
                // One line, so a supervisor can read it before the proxy's first request.
                let line = serde_json::json!({"listen": listen, "baseUrl": format!("http://{listen}/v1")});
                println!("{line}");
            }
            let access = client::proxy::Access::new(address, token.as_deref());
            let page = client::proxy_page::PageRelay {
                base: cli.relay.clone(),
                // A relay that stalls must not hold the page's calls forever (the enclave's own
                // calls are bounded by the relay at 330 s).
                http: reqwest::Client::builder()
                    .timeout(std::time::Duration::from_secs(360))
                    .build()
                    .map_err(|e| Failure(1, format!("http client: {e}")))?,
                dev_trust: cli.trust.page_dev_trust()?,
            };
            return match client::proxy::serve(client, listener, access, page).await {
                Err(e @ ClientError::NotAttested(_)) => Err(Failure(10, Failure::from(e).1)),
                Err(e) => Err(e.into()),
                Ok(()) => Ok(0),
            };
        }
        Command::Swap { command } => {
            let needs_attestation = !matches!(command, swap_cmd::SwapCommand::Quote { .. });
            let client = match needs_attestation {
                true => client.with_attestation(cli.trust.options()?),
                false => client,
            };
            return swap_cmd::run(client, command, json).await;
        }
        Command::Wallet { command } => {
            // Fund-moving requests go only to an enclave that passes verification; withdrawal
            // orders, statements of reserves and wallet certificates are checked against its
            // attested key.
            let needs_attestation = matches!(
                command,
                wallet_cmd::WalletCommand::Create { .. }
                    | wallet_cmd::WalletCommand::Fund { .. }
                    | wallet_cmd::WalletCommand::Balance { .. }
                    | wallet_cmd::WalletCommand::Withdraw { .. }
                    | wallet_cmd::WalletCommand::Reserves { .. }
                    | wallet_cmd::WalletCommand::Encrypt { .. }
                    | wallet_cmd::WalletCommand::Swap { .. }
                    | wallet_cmd::WalletCommand::Shield { .. }
            );
            let client = match needs_attestation {
                true => client.with_attestation(cli.trust.options()?),
                false => client,
            };
            return wallet_cmd::run(client, command, json).await;
        }
        Command::Mcp { owner_key, allow_destination, confirm, max_amount, max_daily } => {
            use client::mcp::guardrails::{Guardrails, Limit, ask_on_terminal};
            // stdout carries the protocol: everything else goes to stderr.
            let owner = client::swap::read_keypair(&owner_key)?;
            let allowed = allow_destination
                .iter()
                .map(|a| {
                    Address::parse(a)
                        .ok_or_else(|| Failure(30, format!("--allow-destination `{a}` is not a base58 address")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let limit =
                |flag: &str, values: &[String]| Limit::parse(values).map_err(|e| Failure(30, format!("{flag} {e}")));
            let owner_address = Address(owner.verifying_key().to_bytes());
            let guardrails = Guardrails::new(
                allowed,
                confirm.then(|| Box::new(ask_on_terminal) as client::mcp::guardrails::Confirm),
                limit("--max-amount", &max_amount)?,
                limit("--max-daily", &max_daily)?,
                state_dir().join("mcp").join(format!("spent-{owner_address}.json")),
            );
            let tools = client::mcp::OwnerTools::new(client.with_attestation(cli.trust.options()?), owner, guardrails);
            return match client::mcp::serve_stdio(tools).await {
                Err(e @ ClientError::NotAttested(_)) => Err(Failure(10, Failure::from(e).1)),
                Err(e) => Err(e.into()),
                Ok(()) => Ok(0),
            };
        }
        Command::GpuReference { driver_rim, vbios_rim, board, pins } => {
            let read = |path: &Path| std::fs::read(path).map_err(|e| Failure(30, format!("{}: {e}", path.display())));
            let pins: client::gpu_reference::Pins =
                serde_json::from_slice(&read(&pins)?).map_err(|e| Failure(30, format!("{}: {e}", pins.display())))?;
            let (driver, vbios) = (read(&driver_rim)?, read(&vbios_rim)?);
            let name = |path: &Path| path.display().to_string();
            let firmware = client::gpu_reference::reference(
                (&name(&driver_rim), &driver),
                (&name(&vbios_rim), &vbios),
                &board,
                &pins,
            )
            .map_err(|e| Failure(10, e.to_string()))?;
            println!("{}", serde_json::to_string_pretty(&firmware).map_err(|e| Failure(30, e.to_string()))?);
            return Ok(0);
        }
        Command::Measure { dir, diagnose, measurements_json, rtmr0_profile } => {
            let shape = match (measurements_json, json) {
                (true, _) => MeasureOutput::MeasurementsFile,
                (false, true) => MeasureOutput::Json,
                (false, false) => MeasureOutput::Text,
            };
            return measure(&dir, diagnose, shape, rtmr0_profile.as_deref());
        }
        Command::Provision { keys, key_id } => {
            let options = cli.trust.key_holder_options()?;
            let (secrets, provisioner, witness) = keys.load()?;
            let key_id = key_id
                .map(|k| {
                    shared::receipt::decode_hex32(&k).ok_or(Failure(30, "--key-id must be 64 lowercase hex".into()))
                })
                .transpose()?;
            let out =
                client.with_attestation(options).provision(&secrets, &provisioner, key_id, Some(&witness)).await?;
            if json {
                print_json(&out);
            } else {
                eprint!("{}", render_report(&out.report));
                match &out.state {
                    Some(state) => println!(
                        "provisioned enclave {}: bundle v{} by provisioner {}",
                        out.key_id,
                        state.bundle_version.unwrap_or_default(),
                        state.provisioner_key.as_deref().unwrap_or("?")
                    ),
                    None => eprintln!("not provisioned: the enclave failed verification; nothing was sent"),
                }
            }
            return Ok(if out.state.is_some() { 0 } else { out.report.verdict.exit_code().max(10) });
        }
        Command::Keyholder { keys, interval } => {
            tracing_subscriber_init(json);
            let options = cli.trust.key_holder_options()?;
            let (secrets, provisioner, witness) = keys.load()?;
            let client = client.with_attestation(options);
            let stop = async {
                let _ = tokio::signal::ctrl_c().await;
            };
            client::provision::keyholder(
                &client,
                &secrets,
                &provisioner,
                &witness,
                std::time::Duration::from_secs(interval.max(1)),
                stop,
            )
            .await;
        }
        Command::ProvisionerKey { file } => {
            let key = client::provision::new_provisioner_key(&file)?;
            let public = Address(key.verifying_key().to_bytes()).to_string();
            match json {
                true => print_json(&serde_json::json!({"publicKey": public, "file": file})),
                false => println!("{public}"),
            }
            eprintln!("wrote {} (mode 0600); put the public key above in the enclave's `provisioners`", file.display());
        }
        Command::Deposit { send: Some(amount), mint, payer_key, rpc_url, .. } => {
            let bad = |what: &str| Failure(30, format!("--{what} is required with --send"));
            let mint = mint.ok_or_else(|| bad("mint"))?;
            let mint = shared::address::Address::parse(&mint).ok_or(Failure(30, "--mint is not an address".into()))?;
            let payer = client::swap::read_keypair(&payer_key.ok_or_else(|| bad("payer-key"))?)?;
            let chain = client::swap::rpc(&rpc_url.ok_or_else(|| bad("rpc-url"))?)?;
            let owner = client.deposit_address().await?.owner;
            let owner =
                shared::address::Address::parse(&owner).ok_or(Failure(1, "the relay named no address".into()))?;
            let signature = client::deposits::send(&chain, &payer, &owner, &mint, amount).await?;
            match json {
                true => print_json(&serde_json::json!({"signature": signature, "amount": amount.to_string(),
                                                       "mint": mint.to_string(), "owner": owner.to_string()})),
                false => println!("{signature}"),
            }
            eprintln!("sent {amount} base units to {owner}; svc deposit --list shows it credited once finalized");
        }
        Command::Deposit { list: false, .. } => {
            let a = client.deposit_address().await?;
            if json {
                print_json(&a);
                return Ok(0);
            }
            println!("deposit wallet: {} ({}), key {}", a.owner, a.network, a.key_id);
            for t in &a.token_accounts {
                println!(
                    "  {:<5} mint {}  token account {}  minimum {} base units",
                    t.currency, t.mint, t.token_account, t.min_amount
                );
            }
            eprintln!("send a token transfer to the token account of its mint; it is credited once finalized");
        }
        Command::Deposit { list: true, .. } => {
            let deposits = client.deposits(200).await?;
            if json {
                print_json(&serde_json::json!({"deposits": deposits}));
                return Ok(0);
            }
            for d in deposits {
                let why = d.reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default();
                let currency = d.currency.as_deref().unwrap_or("-");
                println!("{} #{}  {} {} of {}  {}{why}", d.signature, d.ix, d.amount, currency, d.mint, d.state);
            }
        }
        Command::Receipt { query, proof, rpc } => {
            let q = ReceiptQuery::parse(&query).ok_or(Failure(
                30,
                "expected an address, a 64-hex ciphertext hash or a transaction signature".into(),
            ))?;
            let (receipt, verified) = client.receipt(&q).await?;
            if !json {
                print_json(&receipt);
            }
            eprintln!("receipt verified: signature by enclavePubkey, address re-derived");
            let status = client.ledger_status(&receipt.address).await?;
            eprintln!(
                "ledger:   {} ({} ledger){}",
                status.status,
                status.ledger,
                status.ledger_signature.as_deref().map(|s| format!(" in {s}")).unwrap_or_default()
            );
            let chain = rpc.as_deref().map(client::swap::rpc).transpose()?;
            let onchain = |e: client::onchain::OnChainError| Failure(1, format!("on the chain: {e}"));
            // The ledger key signs commits, anchors and heads alike (docs/log.md "Keys").
            let mut ledger_key = log_key;
            // What `--json` prints besides the receipt and its ledger status.
            let (mut log_check, mut anchor_landed, mut commit_landed) = (None, None, None);
            if proof {
                let entry =
                    shared::tlog::entry::chat(&receipt).ok_or(Failure(1, "the receipt has no log entry".into()))?;
                let evidence = client.log_evidence(&entry).await?;
                let check = evidence
                    .check(&entry, log_key.as_ref())
                    .map_err(|e| Failure(1, format!("transparency log check failed: {}", log_trust.explain(e))))?;
                log_trust.keep(&check);
                for line in client::log::describe(&check) {
                    eprintln!("{line}");
                }
                ledger_key = shared::tlog::hash::parse_hex(&check.log_key);
                if let (Some(chain), Some(key), Some((anchor, _))) = (&chain, &ledger_key, &evidence.anchored) {
                    let signature = client::onchain::check_anchor(chain, anchor, key).await.map_err(onchain)?;
                    eprintln!("chain:    anchor memo landed in {signature}, signed by the log key");
                    anchor_landed = Some(signature);
                }
                log_check = Some(check);
            }
            if let Some(chain) = &chain {
                let key = match ledger_key {
                    Some(k) => k,
                    None => {
                        let head = client.log_head().await?;
                        head.verify(None).map_err(|e| Failure(1, e.to_string()))?;
                        head.decode().map_err(|e| Failure(1, e.to_string()))?.2
                    }
                };
                let hash = verified.body.prompt_hash;
                let signature = client::onchain::check_commit(chain, &status, &hash, &client.program_id, &key)
                    .await
                    .map_err(onchain)?;
                eprintln!("chain:    receipt commit landed in {signature}, signed by the ledger key");
                commit_landed = Some(signature);
            }
            if json {
                let chain =
                    chain.is_some().then(|| serde_json::json!({"commit": commit_landed, "anchor": anchor_landed}));
                print_json(
                    &serde_json::json!({"receipt": receipt, "ledger": status, "log": log_check, "chain": chain}),
                );
            }
        }
    }
    Ok(0)
}

/// The log check of `entry` against the trusted log key (pinned on first use), and with
/// `chain`, that the newest anchor landed there signed by that key.
async fn check_log(
    client: &Client,
    trust: &log_trust::LogTrust,
    entry: &[u8],
    chain: Option<&chain::RpcChain>,
) -> Result<client::log::LogCheck, String> {
    let evidence = client.log_evidence(entry).await.map_err(|e| e.to_string())?;
    let mut check = evidence.check(entry, trust.key()).map_err(|e| trust.explain(e))?;
    trust.keep(&check);
    if let (Some(chain), Some((anchor, _))) = (chain, &evidence.anchored) {
        let key = shared::tlog::hash::parse_hex(&check.log_key).ok_or("the log key is not hex")?;
        let landed =
            client::onchain::check_anchor(chain, anchor, &key).await.map_err(|e| format!("on the chain: {e}"))?;
        if let Some(a) = check.anchor.as_mut() {
            a.landed = Some(landed);
        }
    }
    Ok(check)
}

/// `svc attest --quote FILE --collateral FILE --now UNIX --measurements FILE`.
fn offline(trust: &TrustArgs, quote_path: &Path, now: u64, json: bool) -> Result<u8, Failure> {
    let options = trust.options()?;
    let raw = read(quote_path)?;
    // Accept binary quotes and hex text (optionally 0x-prefixed).
    let quote =
        std::str::from_utf8(&raw).ok().and_then(|t| hex::decode(t.trim().trim_start_matches("0x")).ok()).unwrap_or(raw);
    let collateral = options.collateral.clone().ok_or(Failure(30, "--collateral is required offline".into()))?;
    let policy = Policy {
        root: options.root,
        allowed_tcb_statuses: options.allowed_tcb_statuses,
        measurements: options.measurements,
    };
    let doc = match Collateral::from_json(&collateral) {
        Ok(c) => verify(&Evidence { quote: &quote, collateral: &c, binding: None, nonce: None }, &policy, now),
        Err(e) => {
            VerificationDocument::refused(Verdict::Malformed, e.reason(), e.to_string(), policy.root.label(), now)
        }
    };
    if json {
        print_json(&doc);
    } else {
        print!("{}", render_document("quote", &doc));
    }
    Ok(doc.verdict.exit_code())
}

/// Reads a host profile folder for RTMR0. Absent files are left out, so that the evidence
/// parser names the missing one.
fn read_rtmr0_profile(dir: &Path) -> Result<shared::measure::rtmr0::Rtmr0Evidence, Failure> {
    if !dir.is_dir() {
        return Err(Failure(30, format!("{}: not a directory", dir.display())));
    }
    let mut files = std::collections::BTreeMap::new();
    for name in shared::measure::rtmr0::evidence::PROFILE_FILES {
        let path = dir.join(name);
        match std::fs::read(&path) {
            Ok(bytes) => {
                files.insert(name.to_string(), bytes);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Failure(30, format!("{}: {e}", path.display()))),
        }
    }
    shared::measure::rtmr0::Rtmr0Evidence::from_profile(&files)
        .map_err(|e| Failure(30, format!("{}: {e}", dir.display())))
}

/// The name a profile folder is published under: its last path component.
fn profile_name(dir: &Path) -> String {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "profile".into())
}

/// `svc measure DIR`: the registers a TD booting this image will have (QEMU ≥ 10.2), and
/// RTMR0 for a host profile when one is given.
/// What `svc measure` prints.
enum MeasureOutput {
    Text,
    /// The summary as JSON (`--json`).
    Json,
    /// A measurements file for publishing (`--measurements-json`).
    MeasurementsFile,
}

fn measure(dir: &Path, diagnose: bool, output: MeasureOutput, rtmr0_profile: Option<&Path>) -> Result<u8, Failure> {
    let cmdline = text(&dir.join("cmdline"))?;
    let cmdline = cmdline.trim_end_matches('\n');
    let firmware = read(&dir.join("OVMF.fd"))?;
    let rtmr0 = match rtmr0_profile {
        Some(p) => {
            let evidence = read_rtmr0_profile(p)?;
            let m = shared::measure::measure_rtmr0(&firmware, &evidence).map_err(|e| Failure(30, e.to_string()))?;
            Some((profile_name(p), evidence.memory, m))
        }
        None => None,
    };
    let m = shared::measure::measure_image(
        &firmware,
        &read(&dir.join("vmlinuz"))?,
        &read(&dir.join("initrd.cpio"))?,
        cmdline,
    )
    .map_err(|e| Failure(30, e.to_string()))?;
    if let MeasureOutput::Json = output {
        let rtmr0 = rtmr0.as_ref().map(|(profile, memory, measurement)| measure_json::Rtmr0 {
            profile,
            memory: *memory,
            measurement,
        });
        print_json(&measure_json::summary(&m, rtmr0, cmdline, diagnose));
        return Ok(0);
    }
    if let MeasureOutput::MeasurementsFile = output {
        let image = |name: &str, mrtd| shared::attest::measurements::ImageMeasurement {
            name: name.into(),
            mrtd,
            rtmr1: m.rtmr1,
            rtmr2: m.rtmr2,
        };
        let doc = Measurements {
            schema_version: 1,
            images: vec![
                image("svc-enclave (MRTD single-pass: upstream KVM/QEMU)", m.mrtd_single_pass),
                image("svc-enclave (MRTD two-pass: QEMU 8.x TDX)", m.mrtd_two_pass),
            ],
            rtmr0: rtmr0
                .iter()
                .map(|(platform, _, r)| shared::attest::measurements::Rtmr0Entry {
                    platform: platform.clone(),
                    value: r.rtmr0,
                })
                .collect(),
            mr_config_id: None,
            mr_owner: None,
            mr_owner_config: None,
            min_tcb_evaluation_data_number: None,
        };
        print_json(&doc);
        return Ok(0);
    }
    if diagnose {
        println!("TDVF sections:");
        for s in &m.sections {
            println!(
                "  {:<13} gpa {:#012x} size {:#09x} raw {:#09x} @ {:#09x}  extend={} aug={}",
                format!("{:?}", s.kind),
                s.gpa,
                s.mem_size,
                s.raw_size,
                s.data_offset,
                s.extends(),
                s.page_aug()
            );
        }
        let rtmr0_events = rtmr0.as_ref().map(|(_, _, r)| &r.events);
        for (name, events) in
            [("RTMR0", rtmr0_events), ("RTMR1", Some(&m.rtmr1_events)), ("RTMR2", Some(&m.rtmr2_events))]
        {
            let Some(events) = events else { continue };
            println!("{name} events (extend order):");
            for e in events {
                println!("  {}  {}", hex::encode(e.digest), e.description);
            }
        }
    }
    println!("MRTD      {}  (single-pass page order: upstream KVM/QEMU)", hex::encode(m.mrtd_single_pass));
    println!("MRTD      {}  (two-pass page order: QEMU 8.x TDX)", hex::encode(m.mrtd_two_pass));
    if let Some((name, memory, r)) = &rtmr0 {
        println!(
            "RTMR0     {}  (host profile {name:?}: {} MiB, edk2-stable202502 event list; unvalidated on hardware)",
            hex::encode(r.rtmr0),
            memory >> 20
        );
    }
    println!("RTMR1     {}  (QEMU >= 10.2, kernel unpatched)", hex::encode(m.rtmr1));
    println!("RTMR2     {}  (cmdline {:?} + initrd)", hex::encode(m.rtmr2), shared::measure::load_options(cmdline));
    println!("image_id  {}  (sha256(MRTD single-pass || RTMR1 || RTMR2))", hex::encode(m.image_id));
    Ok(0)
}

/// Log lines of the key holder daemon go to stderr: text, or one JSON object per line
/// (`--json`; the relay's shape: timestamp, level, target and the event's fields, flat).
fn tracing_subscriber_init(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match json {
        true => builder.json().flatten_event(true).with_current_span(false).with_span_list(false).init(),
        false => builder.with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())).init(),
    }
}

fn render_report(r: &AttestationReport) -> String {
    let mut out = format!(
        "verdict: {}{}\nenclave: teePublicKey {}  enclavePublicKey {}  quote provider {}\n",
        verdict_word(r.verdict),
        r.reason.as_deref().map(|x| format!(" ({x})")).unwrap_or_default(),
        r.tee_public_key,
        r.enclave_public_key,
        r.quote_provider
    );
    if r.unattested {
        out.push_str("WARNING: accepted WITHOUT a TDX quote (--allow-unattested)\n");
    }
    out.push_str(&match (&r.provisioning.bundle_version, &r.provisioning.provisioner_key) {
        (Some(v), Some(k)) => format!("provisioned: yes (bundle v{v}, provisioner {k})\n"),
        _ => "provisioned: no (no secrets bundle yet)\n".to_string(),
    });
    for node in &r.gpu_nodes {
        out.push_str(&render_gpu_node(node));
    }
    if let Some(d) = &r.public_quote {
        out.push_str(&render_document("public quote (report_data = sha256(teePublicKey))", d));
    }
    if let Some(d) = &r.binding_quote {
        out.push_str(&render_document(
            "binding quote (report_data = sha256(teePublicKey ‖ enclavePublicKey)) + nonce",
            d,
        ));
    }
    out
}

/// One GPU node of the attestation document: the models it serves and its last verdict.
fn render_gpu_node(node: &shared::wire::GpuNodeStatus) -> String {
    let mut out =
        format!("gpu node {} ({}; {} GPU(s) required): ", node.tls_spki_sha256, node.models.join(", "), node.gpus);
    let Some(v) = &node.verdict else {
        out.push_str("not attested yet (it attests before its first prompt)\n");
        return out;
    };
    out.push_str(&format!(
        "attested at {} (node quote under {}, TCB {}; GPUs under {})\n",
        shared::time::rfc3339(v.verified_at),
        v.trust_root,
        v.tcb_status.as_deref().unwrap_or("?"),
        v.device_root
    ));
    for (i, g) in v.gpus.iter().enumerate() {
        out.push_str(&format!(
            "  GPU {i}: driver {}, VBIOS {}, board {}, {} measurements matched, OCSP from {}\n",
            g.driver,
            g.vbios,
            g.board,
            g.measurements_matched,
            shared::time::rfc3339(g.ocsp_produced_at)
        ));
    }
    out
}

fn render_document(title: &str, d: &VerificationDocument) -> String {
    let mut out = format!(
        "\n{title}: {}{}  [root {}, TCB {}]\n",
        verdict_word(d.verdict),
        d.reason.as_deref().map(|x| format!(" ({x})")).unwrap_or_default(),
        d.trust_root,
        d.tcb_status.as_deref().unwrap_or("-")
    );
    for c in &d.checks {
        out.push_str(&format!("  {} {:<16}", if c.ok { "ok  " } else { "FAIL" }, c.name));
        if let Some(e) = &c.expected {
            out.push_str(&format!(" expected {e}"));
        }
        if let Some(a) = &c.actual {
            out.push_str(&format!(" actual {a}"));
        }
        if let Some(x) = &c.detail {
            out.push_str(&format!(" ({x})"));
        }
        out.push('\n');
    }
    out
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Accept => "ACCEPT",
        Verdict::Reject => "REJECT",
        Verdict::Unsupported => "UNSUPPORTED",
        Verdict::Malformed => "MALFORMED",
    }
}

/// Set once a JSON document went to stdout.
static PRINTED_JSON: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Prints JSON to stdout; a reader that went away (`svc … | head`) is not an error.
fn print_json(value: &impl serde::Serialize) {
    use std::io::Write;
    PRINTED_JSON.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = writeln!(std::io::stdout().lock(), "{}", serde_json::to_string_pretty(value).expect("serialisable"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_profile(dir: &Path) {
        std::fs::write(dir.join("memory"), "2G\n").unwrap();
        std::fs::write(dir.join("table-loader"), [0u8; 128]).unwrap();
        let mut rsdp = b"RSD PTR ".to_vec();
        rsdp.resize(36, 0);
        std::fs::write(dir.join("rsdp"), rsdp).unwrap();
        std::fs::write(dir.join("tables"), b"DSDT").unwrap();
    }

    #[test]
    fn rtmr0_profile_folder() {
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path().join("qemu-q35-2G");
        std::fs::create_dir(&profile).unwrap();
        write_profile(&profile);
        let evidence = read_rtmr0_profile(&profile).ok().unwrap();
        assert_eq!(evidence.memory, 2 << 30);
        assert_eq!(profile_name(&profile), "qemu-q35-2G");

        std::fs::remove_file(profile.join("tables")).unwrap();
        let Err(Failure(code, message)) = read_rtmr0_profile(&profile) else { panic!("a missing blob is refused") };
        assert_eq!(code, 30);
        assert!(message.contains("`tables` is missing"), "{message}");

        write_profile(&profile);
        std::fs::write(profile.join("memory"), "2048").unwrap(); // bytes, not MiB: too small
        let evidence = read_rtmr0_profile(&profile).ok().unwrap();
        assert_eq!(evidence.memory, 2048);
        std::fs::write(profile.join("memory"), "two gigs").unwrap();
        assert!(read_rtmr0_profile(&profile).is_err());
        assert!(read_rtmr0_profile(&dir.path().join("absent")).is_err());
    }
}
