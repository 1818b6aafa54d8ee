//! `svc chat`: one prompt sealed to the verified enclave; the reply, its verified receipt, and
//! the receipt's place in the transparency log.

use client::Client;
use client::chat::ChatOptions;
use client::log::AnchorChoice;

use crate::Context;
use crate::exit::{Exit, Failure};
use crate::log_trust::LogTrust;
use crate::output::print_json;

#[derive(clap::Args)]
pub struct Args {
    prompt: String,
    #[arg(long)]
    model: Option<String>,
    #[arg(long)]
    max_tokens: Option<u32>,
    /// A Solana RPC node of your choosing: check there that the log's newest anchor landed,
    /// signed by the log key.
    #[arg(long, env = "SVC_RPC_URL")]
    rpc: Option<String>,
}

pub async fn run(ctx: Context, args: Args) -> Result<Exit, Failure> {
    let Args { prompt, model, max_tokens, rpc } = args;
    let chain = rpc.as_deref().map(client::swap::rpc).transpose()?;
    let client = ctx.client.with_attestation(ctx.trust.options()?);
    let options = ChatOptions { model, max_tokens, temperature: None };
    let out = client.chat(&prompt, &options).await?;
    // The receipt is in the log as soon as it is committed (same database transaction).
    // The reply is shown either way; a failed log check is reported and fails the run.
    let logged = match shared::tlog::entry::chat(&out.receipt) {
        Some(entry) => check_log(&client, &ctx.log_trust, &entry, chain.as_ref()).await,
        None => Err("the receipt has no log entry".to_string()),
    };
    if ctx.json {
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
        eprintln!("WARNING: this enclave has NO TDX quote (--allow-unattested): nothing proves it runs our image");
    } else {
        eprintln!("enclave:  attested (quote verified against the trust root and measurements, nonce signed)");
    }
    match logged {
        Ok(_) => Ok(Exit::Ok),
        Err(e) => Err(Failure::failed(format!("transparency log check failed: {e}"))),
    }
}

/// The log check of `entry` against the trusted log key (pinned on first use), and with
/// `chain`, that the newest landed anchor is there, signed by that key.
async fn check_log(
    client: &Client,
    trust: &LogTrust,
    entry: &[u8],
    chain: Option<&chain::RpcChain>,
) -> Result<client::log::LogCheck, String> {
    // With a chain to check, the newest anchor that landed; the newest may still be pending.
    let choice = if chain.is_some() { AnchorChoice::NewestLanded } else { AnchorChoice::Newest };
    let evidence = client.log_evidence(entry, choice).await.map_err(|e| e.to_string())?;
    let mut check = evidence.check(entry, trust.key()).map_err(|e| trust.explain(e))?;
    trust.keep(&check);
    if chain.is_some() && evidence.anchored.is_none() {
        eprintln!("chain:    no anchor has landed yet: the log is not checked on the chain");
    }
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
