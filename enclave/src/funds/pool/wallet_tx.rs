//! Transactions a managed wallet signs under its owner's request: an encrypt (the wallet's
//! tokens into the pool) and a managed swap's funding. The pool pays their fees.

use chain::Chain;
use shared::address::Address;
use shared::b64;
use shared::privacy::{PrivacyAnswer, SignedTx};
use shared::solana::programs::TOKEN_PROGRAM;
use shared::solana::{Instruction, Message, Transaction, associated_token, memo, system, token};
use shared::swap::SessionTerms;

use super::fields::{address_field, amount_field};
use super::keys::{Pool, Wallet};
use super::payout::{POOL_MIN_LAMPORTS, check_pool_funded};
use super::{Admitted, Env, Funds, FundsError, sealed};
use crate::funds::swap_check::ata;

/// A managed swap's session key's fees, on top of two token accounts' rent (as the relay gives
/// a one-shot session).
const SESSION_FEE_LAMPORTS: u64 = 50_000;
/// A managed swap's session terms expire after this; its funding is signed at once.
const MANAGED_SESSION_SECS: u64 = 600;

/// The encrypt transaction: the pool pays the fee and creates its token account when needed;
/// the wallet's whole `amount` moves into it. Signed by both keys.
pub async fn encrypt(funds: &Funds, env: &Env<'_>, a: &Admitted, pool: &Pool) -> Result<PrivacyAnswer, FundsError> {
    let fields = funds.fields(&a.body, false)?;
    let deposit = deposit(funds, env, &a.wallet, pool, &fields.mint, fields.amount).await?;
    Ok(PrivacyAnswer::Encrypt { request_id: a.request_id.clone(), deposit })
}

/// `amount` of `mint` from the wallet's token account into the pool's, signed.
pub async fn deposit(
    funds: &Funds,
    env: &Env<'_>,
    wallet: &Wallet,
    pool: &Pool,
    mint: &Address,
    amount: u64,
) -> Result<SignedTx, FundsError> {
    check_pool_funded(env, pool).await?;
    let source = ata(&wallet.address, mint);
    let held = env.swaps.chain().token_balance(&source).await?.unwrap_or(0);
    if held < amount {
        return Err(FundsError::InsufficientPublic);
    }
    let decimals = env.swaps.decimals(mint).await?;
    funds.warm(env).await?;
    let ixs = [
        associated_token::create_idempotent(&pool.address, &pool.address, mint, &TOKEN_PROGRAM),
        token::transfer_checked(&source, mint, &ata(&pool.address, mint), &wallet.address, amount, decimals),
    ];
    sign_from_wallet(env, wallet, pool, &ixs).await
}

/// A managed swap: a swap session (`crate::swap`) whose terms are the request's, with the
/// wallet as its payer (every refund returns to the wallet), its id the request's, and its
/// funding signed by the wallet (the tokens) and the pool (the fee, the session's input
/// account and its lamports, whose remainder the session's close returns to the pool). The least
/// output is the router's quote now less the request's `slippageBps`, so a relay cannot loosen
/// it.
pub async fn swap_fund(funds: &Funds, env: &Env<'_>, a: &Admitted, pool: &Pool) -> Result<PrivacyAnswer, FundsError> {
    let (body, wallet) = (&a.body, &a.wallet);
    let (from_mint, to_mint) = (address_field(body, "fromMint")?, address_field(body, "toMint")?);
    let (amount, destination) = (amount_field(body)?, address_field(body, "destinationPubkey")?);
    let slippage = match body.get("slippageBps").filter(|v| !v.is_null()) {
        None => crate::funds::swap::SLIPPAGE_BPS,
        Some(v) => v.as_u64().filter(|b| *b <= 10_000).ok_or(FundsError::BadBody("slippageBps"))? as u16,
    };
    if destination == wallet.address || from_mint == to_mint {
        return Err(FundsError::BadBody("destinationPubkey"));
    }
    let chain = env.swaps.chain();
    let source = ata(&wallet.address, &from_mint);
    if chain.token_balance(&source).await?.unwrap_or(0) < amount {
        return Err(FundsError::InsufficientPublic);
    }
    let rent = chain.minimum_balance_for_rent_exemption(token::ACCOUNT_LEN).await?;
    let lamports = 2 * rent + SESSION_FEE_LAMPORTS;
    if chain.balance(&pool.address).await? < lamports + POOL_MIN_LAMPORTS {
        return Err(FundsError::PoolUnfunded(pool.address.to_string()));
    }
    let min_out = env.swaps.least_out(&from_mint, &to_mint, amount, slippage).await?;
    if min_out == 0 {
        return Err(FundsError::BadBody("amount"));
    }
    funds.warm(env).await?;
    let id = shared::swap::parse_uuid(&a.request_id).ok_or_else(sealed)?;
    let terms = SessionTerms {
        session_id: a.request_id.clone(),
        payer: wallet.address.to_string(),
        from_mint: from_mint.to_string(),
        to_mint: to_mint.to_string(),
        amount: amount.to_string(),
        destination: destination.to_string(),
        min_out: min_out.to_string(),
        expires_at: env.now + MANAGED_SESSION_SECS,
    };
    let opened = env.swaps.open_session(env.custody, env.keys, terms, Some(pool.address))?;
    let session_key = Address::parse(&opened.commitment.ephemeral_pubkey).ok_or_else(sealed)?;
    let decimals = env.swaps.decimals(&from_mint).await?;
    let ixs = [
        associated_token::create_idempotent(&pool.address, &session_key, &from_mint, &TOKEN_PROGRAM),
        token::transfer_checked(&source, &from_mint, &ata(&session_key, &from_mint), &wallet.address, amount, decimals),
        system::transfer(&pool.address, &session_key, lamports),
        memo::memo(shared::swap::funding::memo_text(&id).as_bytes(), &[]),
    ];
    let funding = sign_from_wallet(env, wallet, pool, &ixs).await?;
    Ok(PrivacyAnswer::SwapFunded { session: opened, funding })
}

/// A transaction of the pool (fee payer) and the wallet, signed by both.
async fn sign_from_wallet(
    env: &Env<'_>,
    wallet: &Wallet,
    pool: &Pool,
    ixs: &[Instruction],
) -> Result<SignedTx, FundsError> {
    let blockhash = env.swaps.chain().latest_blockhash().await?;
    let message = Message::compile(&pool.address, ixs, blockhash.blockhash).map_err(|_| sealed())?;
    let mut tx = Transaction::new_unsigned(message);
    tx.sign(&[&pool.key, &wallet.key]).map_err(|_| sealed())?;
    Ok(SignedTx {
        transaction: b64::encode(tx.serialize()),
        signature: tx.id(),
        last_valid_block_height: blockhash.last_valid_block_height,
    })
}
