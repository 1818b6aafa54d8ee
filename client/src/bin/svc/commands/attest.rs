//! `svc attest`: verify the enclave through the relay, or a quote file offline, and print the
//! verification document. Exits with the verdict.

use std::path::{Path, PathBuf};

use shared::attest::{Collateral, Evidence, Policy, Verdict, VerificationDocument, verify};

use crate::Context;
use crate::exit::{Exit, Failure};
use crate::files::read;
use crate::output::print_json;
use crate::render;
use crate::trust::TrustArgs;

#[derive(clap::Args)]
pub struct Args {
    /// Offline: a quote file (binary, or hex text).
    #[arg(long, requires = "collateral", requires = "now")]
    quote: Option<PathBuf>,
    /// Offline: verification time, unix seconds.
    #[arg(long)]
    now: Option<u64>,
}

pub async fn run(ctx: Context, args: Args) -> Result<Exit, Failure> {
    if let Some(quote) = &args.quote {
        return offline(&ctx.trust, quote, args.now.unwrap_or(0), ctx.json);
    }
    let (report, _) = ctx.client.with_attestation(ctx.trust.options()?).attest().await?;
    match ctx.json {
        true => print_json(&report),
        false => print!("{}", render::report(&report)),
    }
    Ok(report.verdict.into())
}

/// `svc attest --quote FILE --collateral FILE --now UNIX --measurements FILE`.
fn offline(trust: &TrustArgs, quote_path: &Path, now: u64, json: bool) -> Result<Exit, Failure> {
    let options = trust.options()?;
    let raw = read(quote_path)?;
    // Accept binary quotes and hex text (optionally 0x-prefixed).
    let quote =
        std::str::from_utf8(&raw).ok().and_then(|t| hex::decode(t.trim().trim_start_matches("0x")).ok()).unwrap_or(raw);
    let collateral = options.collateral.clone().ok_or(Failure::bad_input("--collateral is required offline"))?;
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
    match json {
        true => print_json(&doc),
        false => print!("{}", render::document("quote", &doc)),
    }
    Ok(doc.verdict.into())
}
