//! `svc receipt`: fetch a receipt, verify it, and with `--proof` and `--rpc` find it in the
//! transparency log and on the chain.

use client::log::AnchorChoice;
use client::receipts::ReceiptQuery;

use crate::Context;
use crate::exit::{Exit, Failure};
use crate::output::print_json;

#[derive(clap::Args)]
pub struct Args {
    query: String,
    /// Also check the receipt is in the transparency log: its inclusion proof, the newest
    /// anchored head and the consistency between them (docs/log.md).
    #[arg(long)]
    proof: bool,
    /// A Solana RPC node of your choosing: check there that the receipt's commit (and, with
    /// `--proof`, the newest anchor) landed, signed by the relay's ledger key (solana mode).
    #[arg(long)]
    rpc: Option<String>,
}

pub async fn run(ctx: Context, args: Args) -> Result<Exit, Failure> {
    let Context { client, log_trust, json, .. } = ctx;
    let q = ReceiptQuery::parse(&args.query)
        .ok_or(Failure::bad_input("expected an address, a 64-hex ciphertext hash or a transaction signature"))?;
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
    let chain = args.rpc.as_deref().map(client::swap::rpc).transpose()?;
    let onchain = |e: client::onchain::OnChainError| Failure::failed(format!("on the chain: {e}"));
    // The ledger key signs commits, anchors and heads alike (docs/log.md "Keys").
    let log_key = log_trust.key().copied();
    let mut ledger_key = log_key;
    // What `--json` prints besides the receipt and its ledger status.
    let (mut log_check, mut anchor_landed, mut commit_landed) = (None, None, None);
    if args.proof {
        let entry = shared::tlog::entry::chat(&receipt).ok_or(Failure::failed("the receipt has no log entry"))?;
        let choice = if chain.is_some() { AnchorChoice::NewestLanded } else { AnchorChoice::Newest };
        let evidence = client.log_evidence(&entry, choice).await?;
        let check = evidence
            .check(&entry, log_key.as_ref())
            .map_err(|e| Failure::failed(format!("transparency log check failed: {}", log_trust.explain(e))))?;
        log_trust.keep(&check);
        for line in client::log::describe(&check) {
            eprintln!("{line}");
        }
        ledger_key = shared::tlog::hash::parse_hex(&check.log_key);
        if chain.is_some() && evidence.anchored.is_none() {
            eprintln!("chain:    no anchor has landed yet: the log is not checked on the chain");
        }
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
                head.verify(None).map_err(|e| Failure::failed(e.to_string()))?;
                head.decode().map_err(|e| Failure::failed(e.to_string()))?.2
            }
        };
        let hash = verified.body.prompt_hash;
        let signature =
            client::onchain::check_commit(chain, &status, &hash, &client.program_id, &key).await.map_err(onchain)?;
        eprintln!("chain:    receipt commit landed in {signature}, signed by the ledger key");
        commit_landed = Some(signature);
    }
    if json {
        let chain = chain.is_some().then(|| serde_json::json!({"commit": commit_landed, "anchor": anchor_landed}));
        print_json(&serde_json::json!({"receipt": receipt, "ledger": status, "log": log_check, "chain": chain}));
    }
    Ok(Exit::Ok)
}
