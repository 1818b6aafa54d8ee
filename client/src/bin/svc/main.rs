//! `svc`, the client's command line. This file reads the global options and hands each
//! command to its module under `commands/`, which renders its own text and JSON. Exit codes
//! are named in `exit.rs`.

mod commands;
mod exit;
mod files;
mod log_trust;
mod output;
mod render;
mod trust;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use client::Client;
use client::key_cache::KeyCache;
use shared::address::Address;

use crate::commands::{
    agent, attest, chat, deposit, gpu_reference, mcp, measure, provision, proxy, receipt, swap, wallet, web_check,
};
use crate::exit::{Exit, Failure};
use crate::log_trust::LogTrust;
use crate::output::{print_json, printed_json};
use crate::trust::TrustArgs;

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

#[derive(Subcommand)]
enum Command {
    /// Print the enclave's public key.
    Key,
    /// Verify the enclave (or, offline, a quote file) and print the verification document.
    /// Exit codes: 0 accept, 10 reject, 20 unsupported, 30 malformed input.
    Attest(attest::Args),
    /// Send a prompt privately and print the reply and its verified receipt.
    Chat(chat::Args),
    /// Ask the agent. Plaintext by default (the relay runs the tool loop and sees the prompt);
    /// `--encrypted` seals the prompt to the verified enclave, which runs the loop with its
    /// five tools.
    Agent(agent::Args),
    /// Fetch and verify a receipt by address, ciphertext hash or commit transaction.
    Receipt(receipt::Args),
    /// Verify the enclave exactly as `attest` does, then release the secrets bundle to it:
    /// signed by the provisioner key, sealed to the verified key. Nothing is sent to an enclave
    /// that fails verification (exit 10).
    Provision(provision::ProvisionArgs),
    /// Run as the key holder: provision every enclave key the relay lists that does not hold
    /// this bundle version yet (a reboot makes a new key), with backoff; log each release.
    Keyholder(provision::KeyholderArgs),
    /// Write a new provisioner key file (mode 0600) and print its public key for the
    /// enclave's measured configuration (`provisioners`).
    ProvisionerKey { file: PathBuf },
    /// Compare the web app a deployment serves (its pages, scripts, manifest and CSP) with the
    /// published bundle: the one this svc carries, or `--published measurements/web.json`.
    /// Exit codes: 0 same bytes, 10 different, 30 malformed input.
    WebCheck(web_check::Args),
    /// Serve an OpenAI-compatible API on localhost (`/v1/chat/completions`, `/v1/models`) that
    /// verifies the enclave first (exit 10 if it fails), seals every request to it and checks
    /// every receipt; point any OpenAI SDK's base URL at it. It also serves the web app from
    /// this svc's own copy of the published bundle at `/` and `/account`. It serves local
    /// programs only: web pages (another Origin, or a Host other than the address) get 403;
    /// with `--token` callers must show it as their API key.
    Proxy(proxy::Args),
    /// Print where to send tokens to fund the API key (a wallet whose key only the enclave
    /// holds, and its token account per accepted mint); `--list` prints the deposits seen;
    /// `--send AMOUNT --mint M --payer-key FILE --rpc-url URL` sends a deposit from a wallet.
    Deposit(deposit::Args),
    /// Private swaps: quote, one-shot swap end to end, session status.
    Swap {
        #[command(subcommand)]
        command: swap::SwapCommand,
    },
    /// Managed wallets (Mode A): create, fund, balance, audit.
    Wallet {
        #[command(subcommand)]
        command: wallet::WalletCommand,
    },
    /// A local MCP tool server over stdio for an AI agent acting as a wallet's owner: the
    /// managed-wallet tools, each fund-moving request signed with `--owner-key` and sent only to
    /// a verified enclave (docs/mcp.md). Start it from the agent's MCP configuration.
    Mcp(mcp::Args),
    /// Print the golden GPU measurements to pin in the enclave's configuration (`gpu.firmware`)
    /// for a GPU of BOARD (`PROJECT-SKU-CHIP`, e.g. `1010-0200-882`) running the driver and
    /// VBIOS of these NVIDIA RIM files. Only RIMs pinned by digest in PINS are read (docs/gpu.md).
    GpuReference(gpu_reference::Args),
    /// Compute MRTD, RTMR1, RTMR2 and the image id of a built image folder
    /// (OVMF.fd, vmlinuz, initrd.cpio, cmdline), and RTMR0 for a host profile.
    Measure(measure::Args),
}

/// What every command starts from: the global options, read once.
pub struct Context {
    /// The relay client, not yet verifying the enclave: a command that sends to the enclave
    /// adds `trust.options()` first.
    pub client: Client,
    pub trust: TrustArgs,
    pub relay: String,
    pub log_key: Option<String>,
    pub log_trust: LogTrust,
    pub json: bool,
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
        Ok(exit) => exit.into(),
        Err(Failure { exit, message }) => {
            eprintln!("svc: {message}");
            // One document on stdout: a command that printed its own before failing (a chat whose
            // log check failed says so in it) prints no second one.
            if json && !printed_json() {
                print_json(&serde_json::json!({"error": message, "exitCode": exit as u8}));
            }
            exit.into()
        }
    }
}

async fn run(cli: Cli) -> Result<Exit, Failure> {
    let mut client = Client::new(&cli.relay, cli.api_key).with_key_cache(KeyCache::new(cli.key_cache));
    if let Some(p) = &cli.program_id {
        client = client
            .with_program_id(Address::parse(p).ok_or(Failure::bad_input("--program-id is not a base58 address"))?);
    }
    let log_trust = LogTrust::new(cli.log_key.as_deref(), &cli.trust.measurements, &files::state_dir(), &cli.relay)?;
    let ctx = Context { client, trust: cli.trust, relay: cli.relay, log_key: cli.log_key, log_trust, json: cli.json };
    match cli.command {
        Command::Key => {
            print_json(&ctx.client.public_key().await?);
            Ok(Exit::Ok)
        }
        Command::Attest(args) => attest::run(ctx, args).await,
        Command::Chat(args) => chat::run(ctx, args).await,
        Command::Agent(args) => agent::run(ctx, args).await,
        Command::Receipt(args) => receipt::run(ctx, args).await,
        Command::Provision(args) => provision::provision(ctx, args).await,
        Command::Keyholder(args) => provision::keyholder(ctx, args).await,
        Command::ProvisionerKey { file } => provision::new_key(&file, ctx.json),
        Command::WebCheck(args) => web_check::run(ctx, args).await,
        Command::Proxy(args) => proxy::run(ctx, args).await,
        Command::Deposit(args) => deposit::run(ctx, args).await,
        Command::Swap { command } => swap::run(ctx, command).await,
        Command::Wallet { command } => wallet::run(ctx, command).await,
        Command::Mcp(args) => mcp::run(ctx, args).await,
        Command::GpuReference(args) => gpu_reference::run(args),
        Command::Measure(args) => measure::run(args, ctx.json),
    }
}
