//! `svc swap quote|oneshot|status`: private swaps from the command line.

use std::path::PathBuf;
use std::time::Duration;

use clap::Subcommand;
use client::swap::{Limits, OneshotRequest};

use crate::Context;
use crate::exit::{Exit, Failure};
use crate::output::print_json;

#[derive(Subcommand)]
pub enum SwapCommand {
    /// Price a swap (paid per call with the API key).
    Quote {
        #[command(flatten)]
        pair: Pair,
        #[arg(long)]
        slippage_bps: Option<u16>,
    },
    /// One private swap, end to end: start a session, check the enclave's commitment (signed
    /// by an attested enclave, for exactly these terms) and the funding transaction, sign and
    /// send the funding, execute, follow the session, verify the receipt.
    Oneshot {
        /// The payer's keypair file (Solana CLI format: a JSON array of 64 numbers).
        #[arg(long)]
        payer_key: PathBuf,
        #[command(flatten)]
        pair: Pair,
        /// A fresh wallet that receives the output.
        #[arg(long)]
        destination: String,
        #[arg(long, default_value_t = 50)]
        slippage_bps: u16,
        /// Refuse a session whose committed minimum output is below this (base units).
        #[arg(long, default_value_t = 0)]
        min_out: u64,
        /// A router (Jupiter Swap API wire) to quote the swap from directly: a session whose
        /// committed minimum is below that quote less the slippage and 100 bps of spread is
        /// refused. Without it, the enclave's own floor bounds what the relay can commit.
        #[arg(long, env = "SVC_ROUTER_URL")]
        router_url: Option<String>,
        /// Refuse a funding that gives the session key more lamports than this.
        #[arg(long, default_value_t = Limits::default().max_lamports)]
        max_lamports: u64,
        /// Solana JSON-RPC the funding is sent through.
        #[arg(long, env = "SVC_RPC_URL")]
        rpc_url: String,
        /// Seconds to follow the session before giving up (it goes on without the client).
        #[arg(long, default_value_t = 300)]
        timeout: u64,
    },
    /// A session's state; a settled one's receipt, verified.
    Status { session_id: String },
}

/// What is swapped: the input and output mints, and the input's amount.
#[derive(clap::Args)]
pub struct Pair {
    #[arg(long)]
    from: String,
    #[arg(long)]
    to: String,
    /// Base units of the input.
    #[arg(long)]
    amount: String,
}

/// `json`: the global `--json` (the quote is JSON either way).
pub async fn run(ctx: Context, command: SwapCommand) -> Result<Exit, Failure> {
    let json = ctx.json;
    // Only the quote goes to the relay alone; the rest checks what an attested enclave signed.
    let client = match command {
        SwapCommand::Quote { .. } => ctx.client,
        _ => ctx.client.with_attestation(ctx.trust.options()?),
    };
    match command {
        SwapCommand::Quote { pair: Pair { from, to, amount }, slippage_bps } => {
            print_json(&client.swap_quote(&from, &to, &amount, slippage_bps).await?);
            Ok(Exit::Ok)
        }
        SwapCommand::Status { session_id } => {
            let session = client.session(&session_id).await?;
            // Swaps have a receipt; a wallet's encrypt or shield session has none.
            let swap = matches!(session["mode"].as_str(), Some("oneshot" | "managed"));
            let receipt = match session["state"].as_str() {
                Some("settled") if swap => Some(client.swap_receipt(&session_id, None).await?),
                _ => None,
            };
            report(&session, receipt.as_ref(), json);
            Ok(Exit::Ok)
        }
        SwapCommand::Oneshot {
            payer_key,
            pair: Pair { from, to, amount },
            destination,
            slippage_bps,
            min_out,
            router_url,
            max_lamports,
            rpc_url,
            timeout,
        } => {
            let payer = client::swap::read_keypair(&payer_key)?;
            let request = OneshotRequest {
                payer_pubkey: shared::address::Address(payer.verifying_key().to_bytes()).to_string(),
                from_mint: from,
                to_mint: to,
                amount,
                destination_pubkey: destination,
                slippage_bps,
            };
            let min_out = match &router_url {
                Some(url) => min_out.max(client::swap::own_floor(url, &request).await?),
                None => min_out,
            };
            let start = client.start_oneshot(&request).await?;
            let checked = client.check_start(start, &request, Limits { min_out, max_lamports }).await?;
            let id = checked.start.session_id.clone();
            eprintln!("session:  {id} (commitment signed by the attested enclave; funding checked)");
            let chain = client::swap::rpc(&rpc_url)?;
            let funding = client::swap::fund(&chain, &checked, &payer).await?;
            eprintln!("funded:   {funding}");
            client.execute_oneshot(&id, &funding).await?;
            let session = client.follow(&id, Duration::from_secs(timeout)).await?;
            let receipt = match session["state"].as_str() {
                Some("settled") => Some(client.swap_receipt(&id, Some((&checked.terms, &funding))).await?),
                _ => None,
            };
            report(&session, receipt.as_ref(), json);
            Ok(match session["state"].as_str() {
                Some("settled") => Exit::Ok,
                Some("failed") => Exit::Failed,
                _ => Exit::Unfinished,
            })
        }
    }
}

fn report(session: &serde_json::Value, verified: Option<&client::swap::VerifiedReceipt>, json: bool) {
    if json {
        print_json(&serde_json::json!({"session": session, "receipt": verified}));
        return;
    }
    let text = |k: &str| session[k].as_str().unwrap_or_default().to_string();
    println!(
        "state:    {}{}",
        text("state"),
        session["reason"].as_str().map(|r| format!(" ({r})")).unwrap_or_default()
    );
    println!(
        "{:<9} {} of {} -> {}",
        format!("{}:", text("mode")),
        text("amountBaseUnits"),
        text("fromMint"),
        text("toMint")
    );
    if session["mode"] == "shield" {
        for (label, field) in
            [("deposit", "fundingTxSig"), ("hop", "swapTxSig"), ("delivery", "finalTxSig"), ("close", "closeTxSig")]
        {
            if !text(field).is_empty() {
                println!("{:<9} {}", format!("{label}:"), text(field));
            }
        }
    }
    if let Some(v) = verified {
        let r = &v.receipt;
        println!("received: {} at {}", r.actual_out, r.destination);
        println!("final tx: {}", r.final_tx_sig);
        println!("receipt:  {} (signature verified, address re-derived)", r.address);
        match v.signer_attested {
            true => println!("signer:   an enclave that passes verification now"),
            false => println!("signer:   {} (not a live enclave now: it has rebooted since)", r.enclave_pubkey),
        }
    } else if !text("refundTxSig").is_empty() {
        println!("refunded: {}", text("refundTxSig"));
    }
}
