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
use serde_json::Value;
use shared::address::Address;
use shared::privacy::PrivacyAnswer;
use shared::solana::programs::TOKEN_PROGRAM;
use shared::solana::{Instruction, Message, Transaction, associated_token, system, token};

use super::{
    Book, Payout, Pool, Privacy, PrivacyError, Wallet, chain_error, encrypt_build, read_fields, seal_key, sealed,
};
use crate::custody::Custody;
use crate::keys::{EnclaveKeys, SeedText};
use crate::swap::{SwapError, Swaps};
use crate::swap_check::ata;

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
    address: Address,
    shield_id: String,
    wallet_id: String,
    wallet: Address,
    pub(super) mint: Address,
    amount: u64,
    destination: Address,
    deposit: String,
}

pub(super) fn open_hop(custody: &Custody, blob: &str) -> Result<Hop, PrivacyError> {
    let (_, plaintext) = custody.open_kind(blob, HOP_KIND).map_err(|_| sealed())?;
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

fn nothing(why: &'static str) -> PrivacyError {
    PrivacyError::Swap(SwapError::NothingToDo(why))
}

impl Privacy {
    /// The deposit (as an encrypt's transaction) and the intermediate key sealed with the
    /// request and the deposit's signature.
    pub(super) async fn shield_start(
        swaps: &Swaps,
        custody: &Custody,
        (wallet, pool): (&Wallet, &Pool),
        body: &Value,
        shield_id: &str,
    ) -> Result<PrivacyAnswer, PrivacyError> {
        let shield_id = shared::swap::parse_uuid(shield_id).ok_or(PrivacyError::BadBody("shieldId"))?;
        let fields = read_fields(body, true)?;
        let destination = fields.destination.ok_or(PrivacyError::BadBody("destinationPubkey"))?;
        if destination == wallet.address || destination == pool.address {
            return Err(PrivacyError::BadBody("destinationPubkey"));
        }
        let deposit = encrypt_build(swaps, wallet, pool, &fields).await?;
        let key = SigningKey::generate(&mut OsRng);
        let secret = HopSecret {
            seed: SeedText::of(&key),
            shield_id: shared::swap::format_uuid(&shield_id),
            wallet_id: wallet.id.clone(),
            wallet: wallet.address.to_string(),
            mint: fields.mint.to_string(),
            amount: fields.amount,
            destination: destination.to_string(),
            deposit: deposit.signature.clone().ok_or_else(sealed)?,
        };
        let hop = seal_key(custody, HOP_KIND, &secret, &key)?;
        Ok(PrivacyAnswer { hop: Some(hop), ..deposit })
    }

    /// Credits the landed deposit to the intermediate key.
    pub(super) async fn shield_credit(
        &self,
        swaps: &Swaps,
        custody: &Custody,
        hop: &Hop,
        pool: &Pool,
        book: Book,
        signature: &str,
    ) -> Result<PrivacyAnswer, PrivacyError> {
        if signature != hop.deposit {
            return Err(PrivacyError::BadBody("signature"));
        }
        self.credit(swaps, custody, (&hop.wallet, &hop.address), pool, book, signature).await
    }

    /// The payout of the deposit to the intermediate key, with the SOL for its two
    /// transactions: the destination's token account rent, its fees, and a margin that keeps
    /// it rent exempt until it closes.
    pub(super) async fn shield_hop(
        &self,
        swaps: &Swaps,
        custody: &Custody,
        keys: &EnclaveKeys,
        (hop, pool): (&Hop, &Pool),
        book: Book,
        now: u64,
    ) -> Result<PrivacyAnswer, PrivacyError> {
        if book.open_orders.contains_key(&hop.shield_id) {
            return Err(nothing("the hop is already signed"));
        }
        if !book.balances.contains_key(&hop.address.to_string()) {
            return Err(nothing("the intermediate key holds no private balance"));
        }
        let chain = swaps.chain();
        let rent = |len| chain.minimum_balance_for_rent_exemption(len);
        let lamports =
            rent(token::ACCOUNT_LEN).await.map_err(chain_error)? + rent(0).await.map_err(chain_error)? + 4 * FEE;
        let payout = Payout {
            order_id: hop.shield_id.clone(),
            wallet_id: hop.wallet_id.clone(),
            holder: hop.address,
            mint: hop.mint,
            amount: hop.amount,
            destination: hop.address,
            lamports,
        };
        self.pay_out(swaps, custody, keys, (pool, book), payout, now).await
    }
}

/// The intermediate key's payment of everything it holds to the destination.
pub(super) async fn shield_deliver(swaps: &Swaps, hop: &Hop) -> Result<PrivacyAnswer, PrivacyError> {
    let source = ata(&hop.address, &hop.mint);
    let held = swaps.chain().token_balance(&source).await.map_err(chain_error)?.unwrap_or(0);
    if held == 0 {
        return Err(nothing("the intermediate key holds nothing to deliver"));
    }
    let decimals = swaps.decimals(&hop.mint).await?;
    let to = ata(&hop.destination, &hop.mint);
    let ixs = [
        associated_token::create_idempotent(&hop.address, &hop.destination, &hop.mint, &TOKEN_PROGRAM),
        token::transfer_checked(&source, &hop.mint, &to, &hop.address, held, decimals),
    ];
    sign_as_hop(swaps, hop, &ixs, held).await
}

/// The intermediate key closes its (empty) token account, its rent to the pool, and sends the
/// pool all its SOL but the fee.
pub(super) async fn shield_close(swaps: &Swaps, hop: &Hop, pool: &Pool) -> Result<PrivacyAnswer, PrivacyError> {
    let chain = swaps.chain();
    let account = ata(&hop.address, &hop.mint);
    let mut ixs = Vec::new();
    match chain.token_balance(&account).await.map_err(chain_error)? {
        Some(0) => ixs.push(token::close_account(&account, &pool.address, &hop.address)),
        Some(_) => return Err(nothing("the intermediate key still holds tokens: deliver first")),
        None => {}
    }
    let lamports = chain.balance(&hop.address).await.map_err(chain_error)?.saturating_sub(FEE);
    if lamports > 0 {
        ixs.push(system::transfer(&hop.address, &pool.address, lamports));
    }
    if ixs.is_empty() {
        return Err(nothing("the intermediate key is empty"));
    }
    sign_as_hop(swaps, hop, &ixs, lamports).await
}

async fn sign_as_hop(
    swaps: &Swaps,
    hop: &Hop,
    ixs: &[Instruction],
    amount: u64,
) -> Result<PrivacyAnswer, PrivacyError> {
    let blockhash = swaps.chain().latest_blockhash().await.map_err(chain_error)?;
    let message = Message::compile(&hop.address, ixs, blockhash.blockhash).map_err(|_| sealed())?;
    let mut tx = Transaction::new_unsigned(message);
    tx.sign(&[&hop.key]).map_err(|_| sealed())?;
    Ok(PrivacyAnswer {
        transaction: Some(shared::b64::encode(tx.serialize())),
        signature: Some(tx.id()),
        last_valid_block_height: Some(blockhash.last_valid_block_height),
        mint: Some(hop.mint.to_string()),
        amount: Some(amount.to_string()),
        ..Default::default()
    })
}
