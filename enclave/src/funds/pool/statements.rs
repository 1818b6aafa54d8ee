//! What the enclave signs about the books: a wallet's balance and the pool's reserves, each
//! naming the head book it was read from.

use chain::Chain;
use ed25519_dalek::Signer;
use shared::address::Address;
use shared::amount::Amount;
use shared::b64;
use shared::privacy::{self, BalanceStatement, PrivacyAnswer, ReservesStatement};
use shared::witness::Head;

use super::book::Book;
use super::keys::{self, Pool, Wallet};
use super::{Env, FundsError, sealed};
use crate::funds::swap_check::ata;

/// A wallet's private balance in the head book `blob` of `mint` (nothing before the first).
pub(super) fn balance(
    env: &Env<'_>,
    wallet: Wallet,
    head: Head,
    blob: Option<&str>,
    mint: &Address,
) -> Result<PrivacyAnswer, FundsError> {
    let held = match blob.map(|blob| keys::open_book(env.custody, blob)).transpose()? {
        Some(opened) if opened.mint != *mint => return Err(sealed()),
        Some(opened) => opened.balance(&wallet.address),
        None => 0,
    };
    let mut statement = BalanceStatement {
        wallet_id: wallet.id,
        wallet: wallet.address,
        mint: *mint,
        balance: Amount(held),
        book_version: head.version,
        book_digest: head.digest,
        issued_at: env.now,
        enclave_pubkey: b64::encode(env.keys.enclave_public()),
        signature: String::new(),
    };
    statement.signature = privacy::signature_text(&env.keys.signer().sign(&statement.message()).to_bytes());
    Ok(PrivacyAnswer::Balance { statement })
}

/// The statement of reserves of the head book, naming it.
pub(super) async fn reserves(
    env: &Env<'_>,
    pool: &Pool,
    book: &Book,
    head: &Head,
    held: u64,
) -> Result<ReservesStatement, FundsError> {
    let height = env.swaps.chain().block_height().await?;
    let mut statement = ReservesStatement {
        mint: book.mint,
        pool: pool.address,
        pool_token_account: ata(&pool.address, &book.mint),
        pool_balance: Amount(held),
        liabilities: book.liabilities().to_string(),
        wallets: book.balances.len() as u64,
        book_version: head.version,
        book_digest: head.digest.clone(),
        block_height: height,
        issued_at: env.now,
        enclave_pubkey: b64::encode(env.keys.enclave_public()),
        signature: String::new(),
    };
    statement.signature = privacy::signature_text(&env.keys.signer().sign(&statement.message()).to_bytes());
    Ok(statement)
}
