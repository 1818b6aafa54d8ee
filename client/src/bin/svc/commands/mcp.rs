//! `svc mcp`: a local MCP tool server over stdio for an AI agent acting as a wallet's owner,
//! within the guardrails given here (docs/mcp.md).

use std::path::PathBuf;

use client::mcp::guardrails::{Confirm, Guardrails, Limit, ask_on_terminal};
use shared::address::Address;

use crate::Context;
use crate::exit::{Exit, Failure};
use crate::files::state_dir;

#[derive(clap::Args)]
pub struct Args {
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
}

pub async fn run(ctx: Context, args: Args) -> Result<Exit, Failure> {
    // stdout carries the protocol: everything else goes to stderr.
    let owner = client::swap::read_keypair(&args.owner_key)?;
    let allowed = args
        .allow_destination
        .iter()
        .map(|a| {
            Address::parse(a)
                .ok_or_else(|| Failure::bad_input(format!("--allow-destination `{a}` is not a base58 address")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let limit =
        |flag: &str, values: &[String]| Limit::parse(values).map_err(|e| Failure::bad_input(format!("{flag} {e}")));
    let owner_address = Address(owner.verifying_key().to_bytes());
    let guardrails = Guardrails::new(
        allowed,
        args.confirm.then(|| Box::new(ask_on_terminal) as Confirm),
        limit("--max-amount", &args.max_amount)?,
        limit("--max-daily", &args.max_daily)?,
        state_dir().join("mcp").join(format!("spent-{owner_address}.json")),
    );
    let tools = client::mcp::OwnerTools::new(ctx.client.with_attestation(ctx.trust.options()?), owner, guardrails);
    client::mcp::serve_stdio(tools).await.map_err(Failure::verifying)?;
    Ok(Exit::Ok)
}
