//! Payouts from the pool and what the chain says of the pool's transactions: the debit and
//! its payout, the replacement of a payout that can no longer land, deposits credited.

use chain::Chain;
use ed25519_dalek::Signer;
use shared::address::Address;
use shared::amount::Amount;
use shared::b64;
use shared::privacy::{self, PrivacyAnswer, SignedTx, WithdrawalOrder};
use shared::solana::programs::TOKEN_PROGRAM;
use shared::solana::{Message, Transaction, associated_token, memo, system, token};
use shared::witness::Head;

use super::book::{Book, OpenOrder};
use super::keys::Pool;
use super::{Env, Funds, FundsError, nothing, sealed};
use crate::funds::swap::{SwapError, landed_transaction};
use crate::funds::swap_check::ata;

/// What the pool key must hold to pay a transaction's fee and, at most, one new token
/// account's rent (2,039,280 lamports).
pub const POOL_MIN_LAMPORTS: u64 = 2_100_000;

/// A debit of `amount` from `holder`'s private balance, paid from the pool to `destination`.
pub struct Payout {
    pub order_id: String,
    pub wallet_id: String,
    pub holder: Address,
    pub mint: Address,
    pub amount: u64,
    pub destination: Address,
    /// Lamports the payout also gives the destination (a shield's intermediate key's fees).
    pub lamports: u64,
}

/// The memo a payout carries: ties it to its order on chain, so a new payout is never signed
/// for an order one already paid.
fn order_memo(order_id: &str) -> String {
    format!("svc-withdrawal:{order_id}")
}

/// The pool pays every fee and rent of its transactions.
pub async fn check_pool_funded(env: &Env<'_>, pool: &Pool) -> Result<(), FundsError> {
    if env.swaps.chain().balance(&pool.address).await? < POOL_MIN_LAMPORTS {
        return Err(FundsError::PoolUnfunded(pool.address.to_string()));
    }
    Ok(())
}

/// Debits `p.holder`'s private balance into an open order and signs its payout and the order,
/// in the successor of `head`.
pub async fn pay_out(
    funds: &Funds,
    env: &Env<'_>,
    pool: &Pool,
    (head, mut book): (Head, Book),
    p: Payout,
) -> Result<PrivacyAnswer, FundsError> {
    let held = funds.reconcile(env, pool, &mut book).await?;
    if book.balance(&p.holder) < p.amount {
        return Err(super::BookError::Insufficient.into());
    }
    // A debit into an open order leaves what is owed unchanged: check before signing.
    book.solvent(held)?;
    funds.warm(env).await?;
    let since_slot = env.swaps.chain().slot().await?;
    let signed = sign_payout(env, pool, &p.mint, &p.order_id, &p.destination, p.amount, p.lamports).await?;
    let mut order = WithdrawalOrder {
        order_id: p.order_id.clone(),
        wallet_id: p.wallet_id,
        wallet: p.holder,
        mint: p.mint,
        amount: Amount(p.amount),
        destination: p.destination,
        book_version: head.version + 1,
        payout_signature: signed.signature.clone(),
        issued_at: env.now,
        enclave_pubkey: b64::encode(env.keys.enclave_public()),
        signature: String::new(),
    };
    order.signature = privacy::signature_text(&env.keys.signer().sign(&order.message()).to_bytes());
    let open = OpenOrder {
        amount: p.amount,
        destination: p.destination,
        lamports: p.lamports,
        payout_signature: signed.signature,
        last_valid_block_height: signed.last_valid_block_height,
        since_slot,
        payout: signed.transaction,
        order,
    };
    let (order, payout) = (open.order.clone(), open.payout());
    let left = book.debit(&p.holder, p.amount, &p.order_id, open)?;
    funds.propose(env, &head, book, PrivacyAnswer::Payout { order, payout, balance: Amount(left) })
}

/// The answer to a request whose order the head book holds already: the same order and its
/// current payout, nothing debited again.
pub fn answer_of(open: &OpenOrder, book: &Book, holder: &Address) -> PrivacyAnswer {
    PrivacyAnswer::Payout { order: open.order.clone(), payout: open.payout(), balance: Amount(book.balance(holder)) }
}

/// The payout of `amount` from the pool to `destination`, carrying the order's memo; the
/// pool pays the fee and, when needed, the destination's token account rent.
async fn sign_payout(
    env: &Env<'_>,
    pool: &Pool,
    mint: &Address,
    order_id: &str,
    destination: &Address,
    amount: u64,
    lamports: u64,
) -> Result<SignedTx, FundsError> {
    check_pool_funded(env, pool).await?;
    let chain = env.swaps.chain();
    let decimals = env.swaps.decimals(mint).await?;
    let mut ixs = vec![
        associated_token::create_idempotent(&pool.address, destination, mint, &TOKEN_PROGRAM),
        token::transfer_checked(
            &ata(&pool.address, mint),
            mint,
            &ata(destination, mint),
            &pool.address,
            amount,
            decimals,
        ),
        memo::memo(order_memo(order_id).as_bytes(), &[]),
    ];
    if lamports > 0 {
        ixs.push(system::transfer(&pool.address, destination, lamports));
    }
    let blockhash = chain.latest_blockhash().await?;
    let message = Message::compile(&pool.address, &ixs, blockhash.blockhash).map_err(|_| sealed())?;
    let mut tx = Transaction::new_unsigned(message);
    tx.sign(&[&pool.key]).map_err(|_| sealed())?;
    Ok(SignedTx {
        signature: tx.id(),
        transaction: b64::encode(tx.serialize()),
        last_valid_block_height: blockhash.last_valid_block_height,
    })
}

/// A new payout for an open order whose last one can no longer land, unless one of its
/// payouts landed (its memo names the order), which closes the order instead.
pub async fn settle(
    funds: &Funds,
    env: &Env<'_>,
    pool: &Pool,
    mint: &Address,
    blob: &str,
    order_id: &str,
) -> Result<PrivacyAnswer, FundsError> {
    let _mint = funds.lock(mint).await;
    let (head, mut book) = funds.open_head(env, Some(blob), mint, pool)?;
    let open = book.open_orders.get(order_id).cloned().ok_or(nothing("no open order with this id"))?;
    let chain = env.swaps.chain();
    let status = chain.signature_statuses(std::slice::from_ref(&open.payout_signature)).await?;
    let height = chain.block_height().await?;
    let destination = open.destination;
    let confirmed =
        |s: &chain::SignatureStatus| s.confirmation_status.is_some_and(|c| c != chain::Commitment::Processed);
    let landed = match status.first().cloned().flatten() {
        Some(s) if s.err.is_none() && confirmed(&s) => true,
        Some(s) if s.err.is_none() => return Err(nothing("its payout can still land")),
        // Failed on chain; an earlier payout of the order may still have paid it.
        Some(_) => order_paid(env, pool, (&destination, mint), order_id, open.since_slot).await?,
        None if height <= open.last_valid_block_height => return Err(nothing("its payout can still land")),
        None => order_paid(env, pool, (&destination, mint), order_id, open.since_slot).await?,
    };
    if landed {
        book.landed(&[order_id.to_string()], env.now);
        return funds.propose(env, &head, book, PrivacyAnswer::Paid);
    }
    funds.warm(env).await?;
    let signed = sign_payout(env, pool, mint, order_id, &destination, open.amount, open.lamports).await?;
    let open = OpenOrder {
        payout_signature: signed.signature,
        last_valid_block_height: signed.last_valid_block_height,
        payout: signed.transaction,
        ..open
    };
    let released = PrivacyAnswer::Repaid { payout: open.payout() };
    book.open_orders.insert(order_id.to_string(), open);
    funds.propose(env, &head, book, released)
}

/// Whether a payout of the order landed: a transaction into the destination's token account
/// since `since_slot`, paid by the pool (only this enclave signs for it) and carrying the
/// order's memo. Every one since that slot is read, newest first; a history too long to read
/// (a destination flooded with transfers) fails closed: no new payout is signed.
async fn order_paid(
    env: &Env<'_>,
    pool: &Pool,
    (destination, mint): (&Address, &Address),
    order_id: &str,
    since_slot: u64,
) -> Result<bool, FundsError> {
    let chain = env.swaps.chain();
    let memo = order_memo(order_id);
    let account = ata(destination, mint);
    let mut before: Option<String> = None;
    for _ in 0..ORDER_HISTORY_PAGES {
        let page = chain.signatures_for_address(&account, before.as_deref(), 1000).await?;
        for info in &page {
            if info.slot < since_slot {
                return Ok(false);
            }
            // A node that reports memos lets most transfers be passed over unread.
            if info.err.is_some() || info.memo.as_deref().is_some_and(|m| !m.contains(&memo)) {
                continue;
            }
            let Some(landed) = chain.transaction(&info.signature).await? else { continue };
            let paid_by_pool = Transaction::parse(&landed.transaction).is_ok_and(|tx| {
                tx.message.fee_payer() == Some(&pool.address)
                    && tx.message.instructions().iter().any(|ix| {
                        tx.message.program_id(ix) == Some(&shared::solana::programs::MEMO_PROGRAM)
                            && ix.data == memo.as_bytes()
                    })
            });
            if paid_by_pool && landed.meta.as_ref().is_some_and(|m| m.err.is_none()) {
                return Ok(true);
            }
        }
        match page.last() {
            Some(last) if page.len() == 1000 => before = Some(last.signature.clone()),
            _ => return Ok(false),
        }
    }
    Err(nothing("the destination's history since the order is too long to read; its payout is not signed again"))
}

/// Pages of 1,000 signatures `order_paid` reads at most.
const ORDER_HISTORY_PAGES: usize = 20;

/// The open orders whose payout is confirmed, with the slot it landed in (one batched status
/// read).
pub async fn confirmed_payouts(env: &Env<'_>, book: &Book) -> Result<Vec<(String, u64)>, FundsError> {
    if book.open_orders.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<String> = book.open_orders.keys().take(256).cloned().collect();
    let signatures: Vec<String> = ids.iter().map(|id| book.open_orders[id].payout_signature.clone()).collect();
    let statuses = env.swaps.chain().signature_statuses(&signatures).await?;
    let landed = |s: &chain::SignatureStatus| {
        s.err.is_none() && s.confirmation_status.is_some_and(|c| c != chain::Commitment::Processed)
    };
    Ok(ids.into_iter().zip(statuses).filter_map(|(id, s)| s.filter(landed).map(|s| (id, s.slot))).collect())
}

/// What a finalized pool transaction moved from `from`'s token account into the pool's, as the
/// chain recorded it, and its slot. Only `finalized`: a credit is a promise to pay out, and a
/// `confirmed` block can still be dropped in a fork, taking the deposit with it.
pub async fn deposited(
    env: &Env<'_>,
    pool: &Pool,
    from: &Address,
    mint: &Address,
    signature: &str,
) -> Result<(u64, u64), FundsError> {
    let chain = env.swaps.chain().clone().with_commitment(chain::Commitment::Finalized);
    let landed = chain.transaction(signature).await?.ok_or(SwapError::FundingNotFound)?;
    let meta = landed
        .meta
        .as_ref()
        .filter(|m| m.err.is_none())
        .ok_or(SwapError::NothingToDo("the encrypt transaction failed"))?;
    let tx = landed_transaction(&landed.transaction)?;
    if tx.message.fee_payer() != Some(&pool.address) {
        return Err(nothing("that transaction is not a pool transaction"));
    }
    let delta = |account: &Address| {
        let of = |list: &[chain::TokenBalance]| {
            list.iter()
                .find(|b| landed.account_keys.get(b.account_index) == Some(account) && b.mint == *mint)
                .map_or(0i128, |b| i128::from(b.amount))
        };
        of(&meta.post_token_balances) - of(&meta.pre_token_balances)
    };
    let gained = delta(&ata(&pool.address, mint));
    let lost = -delta(&ata(from, mint));
    if gained <= 0 || lost != gained {
        return Err(nothing("that transaction did not move this wallet's tokens into the pool"));
    }
    Ok((u64::try_from(gained).map_err(|_| sealed())?, landed.slot))
}
