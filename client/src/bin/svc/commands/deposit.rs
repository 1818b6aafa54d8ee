//! `svc deposit`: where to send tokens to fund the API key, the deposits seen (`--list`), or
//! a deposit sent from a wallet (`--send`).

use std::path::PathBuf;

use shared::address::Address;

use crate::Context;
use crate::exit::{Exit, Failure};
use crate::output::print_json;

#[derive(clap::Args)]
pub struct Args {
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
}

pub async fn run(ctx: Context, args: Args) -> Result<Exit, Failure> {
    match (args.send, args.list) {
        (Some(amount), _) => send(ctx, args, amount).await,
        (None, true) => list(ctx).await,
        (None, false) => address(ctx).await,
    }
}

async fn send(ctx: Context, args: Args, amount: u64) -> Result<Exit, Failure> {
    let bad = |what: &str| Failure::bad_input(format!("--{what} is required with --send"));
    let mint = args.mint.ok_or_else(|| bad("mint"))?;
    let mint = Address::parse(&mint).ok_or(Failure::bad_input("--mint is not an address"))?;
    let payer = client::swap::read_keypair(&args.payer_key.ok_or_else(|| bad("payer-key"))?)?;
    let chain = client::swap::rpc(&args.rpc_url.ok_or_else(|| bad("rpc-url"))?)?;
    let owner = ctx.client.deposit_address().await?.owner;
    let owner = Address::parse(&owner).ok_or(Failure::failed("the relay named no address"))?;
    let signature = client::deposits::send(&chain, &payer, &owner, &mint, amount).await?;
    match ctx.json {
        true => print_json(&serde_json::json!({"signature": signature, "amount": amount.to_string(),
                                               "mint": mint.to_string(), "owner": owner.to_string()})),
        false => println!("{signature}"),
    }
    eprintln!("sent {amount} base units to {owner}; svc deposit --list shows it credited once finalized");
    Ok(Exit::Ok)
}

async fn address(ctx: Context) -> Result<Exit, Failure> {
    let a = ctx.client.deposit_address().await?;
    if ctx.json {
        print_json(&a);
        return Ok(Exit::Ok);
    }
    println!("deposit wallet: {} ({}), key {}", a.owner, a.network, a.key_id);
    for t in &a.token_accounts {
        println!(
            "  {:<5} mint {}  token account {}  minimum {} base units",
            t.currency, t.mint, t.token_account, t.min_amount
        );
    }
    eprintln!("send a token transfer to the token account of its mint; it is credited once finalized");
    Ok(Exit::Ok)
}

async fn list(ctx: Context) -> Result<Exit, Failure> {
    let deposits = ctx.client.deposits(200).await?;
    if ctx.json {
        print_json(&serde_json::json!({"deposits": deposits}));
        return Ok(Exit::Ok);
    }
    for d in deposits {
        let why = d.reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default();
        let currency = d.currency.as_deref().unwrap_or("-");
        println!("{} #{}  {} {} of {}  {}{why}", d.signature, d.ix, d.amount, currency, d.mint, d.state);
    }
    Ok(Exit::Ok)
}
