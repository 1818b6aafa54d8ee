//! `svc wallet create|fund|swap|encrypt|shield|withdraw|balance|audit|reserves`: managed wallets (Mode A, docs/wallets.md).

use std::path::PathBuf;

use clap::Subcommand;
use client::wallets::Payout;
use serde_json::json;
use shared::address::Address;

use crate::Context;
use crate::exit::{Exit, Failure};
use crate::files::state_dir;
use crate::output::print_json;

#[derive(Subcommand)]
pub enum WalletCommand {
    /// Create a managed wallet: its key is made and sealed by the enclave. Prints the wallet
    /// and its webhook secret (`whsec_…`), which is shown only this once.
    Create {
        /// Where the wallet's events are POSTed (Standard Webhooks); a public http(s) URL.
        #[arg(long)]
        webhook_url: String,
        /// The owner's ed25519 public key (base58): every fund-moving request must then be
        /// signed by it (`--owner-key`), which the enclave checks.
        #[arg(long)]
        owner_pubkey: Option<String>,
    },
    /// Swap from the wallet's public balance, the output paid to `--to`: a swap session the
    /// wallet funds. Prints the session to poll (`svc swap status`).
    Swap {
        wallet_id: String,
        #[arg(long)]
        from_mint: String,
        #[arg(long)]
        to_mint: String,
        /// Base units of the input.
        #[arg(long)]
        amount: u64,
        /// The address whose token account receives the output.
        #[arg(long)]
        to: String,
        #[arg(long)]
        slippage_bps: Option<u16>,
        #[arg(long)]
        owner_key: Option<PathBuf>,
    },
    /// Move tokens from the wallet's public balance into its private (encrypted) balance.
    /// Prints the session to poll (`svc swap status`).
    Encrypt(Moved),
    /// Shield tokens from the wallet's public balance to a fresh address through the privacy
    /// pool (four transactions, random delays); the amount is one of the mint's denominations.
    /// Prints the session to poll (`svc swap status`).
    Shield {
        #[command(flatten)]
        moved: Moved,
        /// A fresh address whose token account receives the tokens.
        #[arg(long)]
        to: String,
    },
    /// Pay out from the wallet's private balance to a public address. Checks the withdrawal
    /// order is signed by the attested enclave for exactly this request.
    Withdraw {
        #[command(flatten)]
        moved: Moved,
        /// The address whose token account receives the payout.
        #[arg(long)]
        to: String,
    },
    /// The enclave-signed statement of reserves of a mint; exit 1 if the pool owes more than
    /// it holds.
    Reserves {
        #[arg(long)]
        mint: String,
    },
    /// Fund the wallet from a payer: ask the relay for the transaction, check it is exactly
    /// this transfer, sign it with the payer's key and send it.
    Fund {
        #[command(flatten)]
        of: OfWallet,
        /// The payer's keypair file (Solana CLI format: a JSON array of 64 numbers).
        #[arg(long)]
        payer_key: PathBuf,
        /// Solana JSON-RPC the transaction is sent through.
        #[arg(long, env = "SVC_RPC_URL")]
        rpc_url: String,
        /// The wallet's address (`privAddress` from create): refuse a transaction paying any
        /// other (the relay names the address otherwise).
        #[arg(long)]
        to: Option<String>,
    },
    /// The wallet's balances of the given mints.
    Balance {
        wallet_id: String,
        /// Mint addresses (repeat, or comma-separated).
        #[arg(long, required = true, value_delimiter = ',')]
        mints: Vec<String>,
    },
    /// The wallet's operations, newest first.
    Audit {
        wallet_id: String,
        #[arg(long, default_value_t = 50)]
        limit: u32,
        #[arg(long, default_value_t = 0)]
        offset: u32,
    },
}

/// An amount of a mint, and the wallet it goes into or out of.
#[derive(clap::Args)]
pub struct OfWallet {
    wallet_id: String,
    #[arg(long)]
    mint: String,
    /// Base units.
    #[arg(long)]
    amount: u64,
}

/// What encrypt, shield and withdraw move, from which wallet, and the owner's key.
#[derive(clap::Args)]
pub struct Moved {
    #[command(flatten)]
    of: OfWallet,
    /// The owner's keypair file (Solana CLI format), for a wallet created with an owner.
    #[arg(long)]
    owner_key: Option<PathBuf>,
}

impl OfWallet {
    /// `amount` (this request's, as the API writes it) of the mint to `to`.
    fn payout<'a>(&'a self, amount: &'a str, to: &'a str) -> Payout<'a> {
        Payout { wallet_id: &self.wallet_id, mint: &self.mint, amount, destination: to }
    }
}

impl Moved {
    /// The owner's signing key, when one was given.
    fn owner(&self) -> Result<Option<ed25519_dalek::SigningKey>, client::ClientError> {
        self.owner_key.as_deref().map(client::swap::read_keypair).transpose()
    }
}

/// A started session: the whole answer, or its id to poll.
fn print_started(json: bool, started: &serde_json::Value) {
    match json {
        true => print_json(started),
        false => println!("{}", started["sessionId"].as_str().unwrap_or("?")),
    }
}

/// The wallet certificates `svc` verified, in its state directory.
fn certificates() -> client::wallets::Certificates {
    client::wallets::Certificates::new(state_dir().join("wallets"))
}

pub async fn run(ctx: Context, command: WalletCommand) -> Result<Exit, Failure> {
    let json = ctx.json;
    // Fund-moving requests go only to an enclave that passes verification; withdrawal orders,
    // statements of reserves and wallet certificates are checked against its attested key.
    let client = match command {
        WalletCommand::Audit { .. } => ctx.client,
        _ => ctx.client.with_attestation(ctx.trust.options()?),
    };
    match command {
        WalletCommand::Create { webhook_url, owner_pubkey } => {
            let created = client.create_wallet(&webhook_url, owner_pubkey.as_deref()).await?;
            certificates().save(&created.certificate)?;
            if json {
                print_json(&created);
            } else {
                println!("wallet   {}", created.wallet_id);
                println!("address  {} ({})", created.priv_address, created.network);
                println!("secret   {}", created.webhook_secret);
                eprintln!("keep the webhook secret: it is not shown again. {}", created.funding_hint);
            }
        }
        WalletCommand::Fund { of: OfWallet { wallet_id, mint, amount }, payer_key, rpc_url, to } => {
            let mint_address = Address::parse(&mint).ok_or(Failure::bad_input("--mint is not an address"))?;
            let payer = client::swap::read_keypair(&payer_key)?;
            let payer_address = Address(payer.verifying_key().to_bytes());
            let chain = client::swap::rpc(&rpc_url)?;
            let decimals = client::wallets::mint_decimals(&chain, &mint_address).await?;
            let intent = client.fund_intent(&wallet_id, &mint, &amount.to_string(), &payer_address.to_string()).await?;
            if let Some(expected) = &to
                && *expected != intent.to.to_string()
            {
                return Err(Failure::failed(format!("the relay named {} as the wallet, not {expected}", intent.to)));
            }
            // The address the enclave certified for this wallet (kept at create, else asked of
            // the attested enclave now): the relay's word alone could name its own.
            let certificate = match certificates().load(&wallet_id) {
                Some(kept) => kept,
                None => client.wallet_certificate(&wallet_id).await?,
            };
            if certificate.address != intent.to {
                return Err(Failure::failed(format!(
                    "the relay named {} as the wallet; the enclave certified {}",
                    intent.to, certificate.address
                )));
            }
            let tx = client::wallets::check_intent(&intent, &payer_address, &mint_address, amount, decimals)?;
            let signature = client::wallets::sign_and_send(&chain, tx, &payer, intent.last_valid_block_height).await?;
            match json {
                true => print_json(&json!({"signature": signature, "walletId": wallet_id, "mint": mint,
                                           "amount": amount.to_string(), "to": intent.to})),
                false => println!("{signature}"),
            }
            eprintln!("sent {amount} base units of {mint} to {}", intent.to);
        }
        WalletCommand::Swap { wallet_id, from_mint, to_mint, amount, to, slippage_bps, owner_key } => {
            let owner = owner_key.as_deref().map(client::swap::read_keypair).transpose()?;
            let amount = amount.to_string();
            let started = client
                .wallet_swap(&wallet_id, &from_mint, &to_mint, &amount, &to, slippage_bps, owner.as_ref())
                .await?;
            print_started(json, &started);
        }
        WalletCommand::Encrypt(moved) => {
            let OfWallet { wallet_id, mint, amount } = &moved.of;
            let started = client.wallet_encrypt(wallet_id, mint, &amount.to_string(), moved.owner()?.as_ref()).await?;
            print_started(json, &started);
        }
        WalletCommand::Shield { moved, to } => {
            let amount = moved.of.amount.to_string();
            let started = client.wallet_shield(moved.of.payout(&amount, &to), moved.owner()?.as_ref()).await?;
            print_started(json, &started);
        }
        WalletCommand::Withdraw { moved, to } => {
            let amount = moved.of.amount.to_string();
            // A freshly started enclave signs nothing for a few blocks (docs/wallets.md): the
            // client waits that out with the same signed request (one nonce, one withdrawal).
            let done = client.wallet_withdraw(moved.of.payout(&amount, &to), moved.owner()?.as_ref()).await?;
            if json {
                print_json(&done);
            } else {
                println!("queue     {}", done.queue_signature);
                println!("callback  {} ({})", done.callback_signature, done.status);
            }
        }
        WalletCommand::Reserves { mint } => {
            let statement = client.reserves(&mint).await?;
            let solvent = statement.solvent();
            if json {
                print_json(&statement);
            } else {
                println!(
                    "pool {} holds {} of {}",
                    statement.pool_token_account, statement.pool_balance, statement.mint
                );
                println!(
                    "owes {} to {} wallets (book version {})",
                    statement.liabilities, statement.wallets, statement.book_version
                );
            }
            if !solvent {
                eprintln!("the pool owes more than it holds");
                return Ok(Exit::Failed);
            }
        }
        WalletCommand::Balance { wallet_id, mints } => {
            let balances = client.wallet_balance(&wallet_id, &mints).await?;
            if json {
                print_json(&balances);
            } else {
                for b in balances["balances"].as_array().into_iter().flatten() {
                    let raw = b["raw"].as_str().unwrap_or("?");
                    println!("{}  {}  {raw}", b["mint"].as_str().unwrap_or("?"), b["state"].as_str().unwrap_or("?"));
                }
            }
        }
        WalletCommand::Audit { wallet_id, limit, offset } => {
            let page = client.wallet_audit(&wallet_id, limit, offset).await?;
            if json {
                print_json(&page);
            } else {
                for e in page["entries"].as_array().into_iter().flatten() {
                    println!(
                        "{}  {}  {}",
                        e["at"].as_str().unwrap_or("?"),
                        e["kind"].as_str().unwrap_or("?"),
                        e["details"]
                    );
                }
            }
        }
    }
    Ok(Exit::Ok)
}
