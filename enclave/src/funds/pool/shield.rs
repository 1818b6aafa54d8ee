//! Shield (DESIGN §11, docs/wallets.md "Shield"): a round trip through the pool to a fresh
//! destination through an intermediate key only this enclave holds, in four transactions:
//! 1. deposit: the wallet's tokens into the pool (the owner-signed request; as an encrypt);
//! 2. hop: the deposit, credited to the intermediate key's private balance, paid out to it by
//!    the pool with the SOL it needs (a payout like a withdrawal: replaced, never doubled);
//! 3. deliver: the intermediate key, alone, pays the destination;
//! 4. close: it closes its token account and returns its SOL to the pool, and ends empty.
//!
//! No transaction names both the wallet and the destination. The intermediate key is sealed
//! with the request and its deposit's signature, so a relay can neither redirect it nor
//! credit another transaction to it. The relay spaces the hop and the delivery by random
//! delays and keeps amounts to the mint's denominations.

use chain::Chain;
use ed25519_dalek::SigningKey;
use rand_core::OsRng;
use serde::{Deserialize, Serialize};
use shared::address::Address;
use shared::privacy::{PrivacyAnswer, SignedTx};
use shared::solana::programs::TOKEN_PROGRAM;
use shared::solana::{Instruction, Message, Transaction, associated_token, system, token};

use super::keys::{KEY_FORMAT, Pool, seal_key};
use super::payout::Payout;
use super::{Admitted, Env, Funds, FundsError, nothing, sealed};
use crate::funds::swap_check::ata;
use crate::keys::SeedText;
use crate::keys::custody::Custody;

pub const HOP_KIND: &str = "shield-hop";
/// A transaction fee per signature (lamports).
const FEE: u64 = 5_000;

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct HopSecret {
    seed: SeedText,
    shield_id: String,
    wallet_id: String,
    wallet: String,
    mint: String,
    amount: u64,
    destination: String,
    /// The deposit's transaction signature: the only one credited to this key.
    deposit: String,
}

/// An opened intermediate key and the shield it serves.
pub(super) struct Hop {
    key: SigningKey,
    pub(super) address: Address,
    shield_id: String,
    wallet_id: String,
    pub(super) wallet: Address,
    pub(super) mint: Address,
    amount: u64,
    destination: Address,
    pub(super) deposit: String,
}

pub(super) fn open_hop(custody: &Custody, blob: &str) -> Result<Hop, FundsError> {
    let plaintext = custody.open_kind(blob, HOP_KIND, KEY_FORMAT).map_err(|_| sealed())?;
    let s: HopSecret = serde_json::from_slice(&plaintext).map_err(|_| sealed())?;
    let key = s.seed.key().ok_or_else(sealed)?;
    let address = |text: &str| Address::parse(text).ok_or_else(sealed);
    Ok(Hop {
        address: Address(key.verifying_key().to_bytes()),
        key,
        wallet: address(&s.wallet)?,
        mint: address(&s.mint)?,
        destination: address(&s.destination)?,
        shield_id: s.shield_id,
        wallet_id: s.wallet_id,
        amount: s.amount,
        deposit: s.deposit,
    })
}

/// The deposit (as an encrypt's transaction) and the intermediate key sealed with the request,
/// its id and the deposit's signature.
pub(super) async fn start(
    funds: &Funds,
    env: &Env<'_>,
    a: &Admitted,
    pool: &Pool,
) -> Result<PrivacyAnswer, FundsError> {
    let (wallet, fields) = (&a.wallet, funds.fields(&a.body, true)?);
    let destination = fields.destination.ok_or(FundsError::BadBody("destinationPubkey"))?;
    if destination == wallet.address || destination == pool.address {
        return Err(FundsError::BadBody("destinationPubkey"));
    }
    let deposit = super::wallet_tx::deposit(funds, env, wallet, pool, &fields.mint, fields.amount).await?;
    let key = SigningKey::generate(&mut OsRng);
    let secret = HopSecret {
        seed: SeedText::of(&key),
        shield_id: a.request_id.clone(),
        wallet_id: wallet.id.clone(),
        wallet: wallet.address.to_string(),
        mint: fields.mint.to_string(),
        amount: fields.amount,
        destination: destination.to_string(),
        deposit: deposit.signature.clone(),
    };
    let hop = seal_key(env.custody, HOP_KIND, &secret, &key)?;
    Ok(PrivacyAnswer::ShieldStarted { request_id: a.request_id.clone(), hop, deposit })
}

/// The payout of the deposit to the intermediate key, with the SOL for its two transactions:
/// the destination's token account rent, its fees, and a margin that keeps it rent exempt
/// until it closes. A payout of the book like a withdrawal, its order id the shield's.
pub(super) async fn hop(
    funds: &Funds,
    env: &Env<'_>,
    hop: &Hop,
    pool: &Pool,
    blob: Option<&str>,
) -> Result<PrivacyAnswer, FundsError> {
    let _mint = funds.lock(&hop.mint).await;
    let (head, book) = funds.open_head(env, blob, &hop.mint, pool)?;
    if book.open_orders.contains_key(&hop.shield_id) || book.done_orders.contains_key(&hop.shield_id) {
        return Err(nothing("the hop is already signed"));
    }
    if !book.balances.contains_key(&hop.address) {
        return Err(nothing("the intermediate key holds no private balance"));
    }
    let chain = env.swaps.chain();
    let rent = |len| chain.minimum_balance_for_rent_exemption(len);
    let lamports = rent(token::ACCOUNT_LEN).await? + rent(0).await? + 4 * FEE;
    let payout = Payout {
        order_id: hop.shield_id.clone(),
        wallet_id: hop.wallet_id.clone(),
        holder: hop.address,
        mint: hop.mint,
        amount: hop.amount,
        destination: hop.address,
        lamports,
    };
    super::payout::pay_out(funds, env, pool, (head, book), payout).await
}

/// The intermediate key's payment of everything it holds to the destination.
pub(super) async fn deliver(env: &Env<'_>, hop: &Hop) -> Result<PrivacyAnswer, FundsError> {
    let swaps = env.swaps;
    let source = ata(&hop.address, &hop.mint);
    let held = swaps.chain().token_balance(&source).await?.unwrap_or(0);
    if held == 0 {
        return Err(nothing("the intermediate key holds nothing to deliver"));
    }
    let decimals = swaps.decimals(&hop.mint).await?;
    let to = ata(&hop.destination, &hop.mint);
    let ixs = [
        associated_token::create_idempotent(&hop.address, &hop.destination, &hop.mint, &TOKEN_PROGRAM),
        token::transfer_checked(&source, &hop.mint, &to, &hop.address, held, decimals),
    ];
    sign_as_hop(env, hop, &ixs).await
}

/// The intermediate key closes its (empty) token account, its rent to the pool, and sends the
/// pool all its SOL but the fee.
pub(super) async fn close(env: &Env<'_>, hop: &Hop, pool: &Pool) -> Result<PrivacyAnswer, FundsError> {
    let chain = env.swaps.chain();
    let account = ata(&hop.address, &hop.mint);
    let mut ixs = Vec::new();
    match chain.token_balance(&account).await? {
        Some(0) => ixs.push(token::close_account(&account, &pool.address, &hop.address)),
        Some(_) => return Err(nothing("the intermediate key still holds tokens: deliver first")),
        None => {}
    }
    let lamports = chain.balance(&hop.address).await?.saturating_sub(FEE);
    if lamports > 0 {
        ixs.push(system::transfer(&hop.address, &pool.address, lamports));
    }
    if ixs.is_empty() {
        return Err(nothing("the intermediate key is empty"));
    }
    sign_as_hop(env, hop, &ixs).await
}

async fn sign_as_hop(env: &Env<'_>, hop: &Hop, ixs: &[Instruction]) -> Result<PrivacyAnswer, FundsError> {
    let blockhash = env.swaps.chain().latest_blockhash().await?;
    let message = Message::compile(&hop.address, ixs, blockhash.blockhash).map_err(|_| sealed())?;
    let mut tx = Transaction::new_unsigned(message);
    tx.sign(&[&hop.key]).map_err(|_| sealed())?;
    let tx = SignedTx {
        transaction: shared::b64::encode(tx.serialize()),
        signature: tx.id(),
        last_valid_block_height: blockhash.last_valid_block_height,
    };
    Ok(PrivacyAnswer::HopSigned { tx })
}
