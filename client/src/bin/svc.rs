//! `svc`: the command-line client.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use client::Client;
use client::chat::ChatOptions;
use client::key_cache::KeyCache;
use client::receipts::ReceiptQuery;
use shared::address::Address;

#[derive(Parser)]
#[command(
    name = "svc",
    about = "Private inference client: encrypt to the enclave, verify receipts"
)]
struct Cli {
    /// Relay base URL.
    #[arg(
        long,
        env = "SVC_RELAY_URL",
        default_value = "http://127.0.0.1:8787",
        global = true
    )]
    relay: String,
    /// API key (sk_svc_…) for private routes.
    #[arg(long, env = "SVC_API_KEY", global = true, hide_env_values = true)]
    api_key: Option<String>,
    /// Attestation program id receipts are addressed under (base58).
    #[arg(long, env = "SVC_PROGRAM_ID", global = true)]
    program_id: Option<String>,
    /// File caching the enclave key between runs (default: none, fetch every run).
    #[arg(long, env = "SVC_KEY_CACHE", global = true)]
    key_cache: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the enclave's public key.
    Key,
    /// Print what the enclave publishes about itself (quote verification: coming).
    Attest,
    /// Send a prompt privately and print the reply and its verified receipt.
    Chat {
        prompt: String,
        #[arg(long)]
        model: Option<String>,
        #[arg(long)]
        max_tokens: Option<u32>,
        /// Print the whole outcome as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Fetch and verify a receipt by address, ciphertext hash or commit transaction.
    Receipt { query: String },
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("svc: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<(), String> {
    let mut client =
        Client::new(&cli.relay, cli.api_key).with_key_cache(KeyCache::new(cli.key_cache));
    if let Some(p) = cli.program_id {
        client = client
            .with_program_id(Address::parse(&p).ok_or("--program-id is not a base58 address")?);
    }
    match cli.command {
        Command::Key => print_json(&client.public_key().await.map_err(|e| e.to_string())?),
        Command::Attest => {
            let a = client.attestation().await.map_err(|e| e.to_string())?;
            print_json(&a);
            match &a.tdx_quote_error {
                Some(e) => eprintln!(
                    "no TDX quote: {e} (this enclave is not attested; do not send it secrets)"
                ),
                None => eprintln!(
                    "TDX quote present; full DCAP verification is not implemented in this version"
                ),
            }
        }
        Command::Chat {
            prompt,
            model,
            max_tokens,
            json,
        } => {
            let options = ChatOptions {
                model,
                max_tokens,
                temperature: None,
            };
            let out = client
                .chat(&prompt, &options)
                .await
                .map_err(|e| e.to_string())?;
            if json {
                print_json(&serde_json::json!({
                    "reply": out.reply, "model": out.model, "provider": out.provider, "usage": out.usage,
                    "receipt": out.receipt, "onchainAttestation": out.onchain, "quotePresent": out.quote_present,
                }));
            } else {
                println!("{}", out.reply);
                eprintln!();
                eprintln!("model:    {} ({})", out.model, out.provider);
                eprintln!(
                    "tokens:   {} prompt + {} completion",
                    out.usage.prompt_tokens, out.usage.completion_tokens
                );
                eprintln!(
                    "receipt:  {} (signature, address, hash, nonce and keys verified)",
                    out.onchain.address
                );
                eprintln!("commit:   {}", out.onchain.explorer_url);
                if !out.quote_present {
                    eprintln!(
                        "warning:  the enclave has no TDX quote (development mode): its key is not hardware-attested"
                    );
                }
            }
        }
        Command::Receipt { query } => {
            let q = ReceiptQuery::parse(&query).ok_or(
                "expected an address, a 64-hex ciphertext hash or a transaction signature",
            )?;
            let (receipt, _) = client.receipt(&q).await.map_err(|e| e.to_string())?;
            print_json(&receipt);
            eprintln!("receipt verified: signature by enclavePubkey, address re-derived");
        }
    }
    Ok(())
}

fn print_json(value: &impl serde::Serialize) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).expect("serialisable")
    );
}
