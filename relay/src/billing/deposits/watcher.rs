//! The deposit watcher: each scan reads, for every deposit owner, the new signatures of the
//! owner and of its token accounts of the accepted mints, records every transfer to the
//! owner's accounts once, then marks finalized what the chain finalized and credits it.
//!
//! No signature is skipped, however many arrive between scans (an address flooded with dust
//! cannot hide a deposit): a scan walks back page by page to the address's cursor, and saves
//! after each page how far the walk has come, so a walk longer than one scan goes on at the
//! next; the cursor moves only when the walk reaches it.
//!
//! A relay killed at any point loses nothing: a scan records a page before it saves the walk
//! past it, so an interrupted scan is redone (records are idempotent), and a credit is one
//! database transaction with its row's state change. Several relays scanning at once record
//! and credit each transfer once for the same reasons; a walk one relay saved while another
//! moved the cursor above its lower end walks on to the address's first signature: slower,
//! never a skip.

use std::sync::Arc;

use chain::{Chain, Commitment, RpcChain, SignatureInfo};
use shared::address::Address;
use shared::solana::Transaction;
use shared::solana::programs::TOKEN_PROGRAM;

use super::records::{self, DepositRecord, state};
use super::{DepositMint, Deposits, addresses};
use crate::billing::balances;
use crate::http::error::RelayError;

/// Pages one scan reads per address; a walk longer than that goes on at the next scan.
const PAGES_PER_SCAN: usize = 20;

pub async fn run(deposits: Arc<Deposits>) {
    let Some(chain) = deposits.chain.as_ref() else { return };
    loop {
        if let Err(e) = scan(&deposits, chain).await {
            tracing::warn!(error = %e, "deposit scan failed; the next one retries");
        }
        tokio::time::sleep(deposits.config.poll()).await;
    }
}

/// One scan: record, finalize, credit.
pub async fn scan(deposits: &Deposits, chain: &RpcChain) -> Result<(), RelayError> {
    let accepted = deposits.config.accepted();
    for (key_id, owner) in addresses::all(deposits).await? {
        let mut watched = vec![owner];
        watched.extend(accepted.iter().map(|(mint, _)| shared::swap::funding::token_account(&owner, mint)));
        for address in watched {
            // One address the chain cannot answer for now is scanned again next time; the
            // others, and the crediting below, go on.
            if let Err(e) = scan_address(deposits, chain, &key_id, &owner, &address, &accepted).await {
                tracing::warn!(%key_id, %address, error = %e, "deposit scan of one address failed; the next scan retries it");
            }
        }
    }
    finalize(deposits, chain).await?;
    for (signature, ix) in records::to_credit(&deposits.store).await? {
        if let Some(c) = balances::credit_deposit(&deposits.store, &signature, ix, crate::unix_now()).await? {
            tracing::info!(key_id = %c.key_id, currency = %c.currency, amount = c.amount, balance_after = c.balance_after, %signature, ix, "deposit credited");
            crate::failpoint::hit("deposit:credited");
        }
    }
    Ok(())
}

async fn scan_address(
    deposits: &Deposits,
    chain: &RpcChain,
    key_id: &str,
    owner: &Address,
    address: &Address,
    accepted: &[(Address, &DepositMint)],
) -> Result<(), RelayError> {
    let page_size = deposits.config.page_size();
    let key = address.to_string();
    let records::ScanState { cursor, walk } = records::scan_state(&deposits.store, &key).await?;
    // Newest first, back to the cursor. A walk under way carries on below what it handled.
    let (mut top, mut before) = match walk {
        Some((top, below)) => (Some(top), Some(below)),
        None => (None, None),
    };
    for _ in 0..PAGES_PER_SCAN {
        let page =
            chain.signatures_for_address(address, before.as_deref(), page_size).await.map_err(RelayError::Chain)?;
        let reached = page.iter().position(|i| Some(&i.signature) == cursor.as_ref());
        let new = &page[..reached.unwrap_or(page.len())];
        if !new.is_empty() {
            record_page(deposits, chain, key_id, owner, new, accepted).await?;
            crate::failpoint::hit("deposit:recorded");
        }
        if top.is_none() {
            top = new.first().map(|i| i.signature.clone());
        }
        let Some(top) = top.as_deref() else { return Ok(()) }; // nothing since the cursor
        match new.last() {
            Some(last) if reached.is_none() && page.len() == page_size => {
                records::save_walk(&deposits.store, &key, top, &last.signature, crate::unix_now()).await?;
                before = Some(last.signature.clone());
            }
            // The old cursor, or the address's first signature: every signature is handled.
            _ => return Ok(records::finish_walk(&deposits.store, &key, top, crate::unix_now()).await?),
        }
    }
    Ok(())
}

/// Records the deposits in `infos` (failed transactions carry none).
async fn record_page(
    deposits: &Deposits,
    chain: &RpcChain,
    key_id: &str,
    owner: &Address,
    infos: &[SignatureInfo],
    accepted: &[(Address, &DepositMint)],
) -> Result<(), RelayError> {
    for info in infos.iter().filter(|i| i.err.is_none()) {
        let Some(landed) = chain.transaction(&info.signature).await.map_err(RelayError::Chain)? else {
            // Listed but not readable yet: stop here; the walk is not saved past it.
            let detail = format!("{} is listed but not found", info.signature);
            return Err(RelayError::Chain(chain::ChainError::Malformed { method: "getTransaction", detail }));
        };
        for d in deposits_in(&landed, &info.signature, key_id, owner, accepted) {
            if records::record(&deposits.store, &d, crate::unix_now()).await? {
                tracing::info!(key_id, signature = %d.signature, ix = d.ix, amount = d.amount, state = %d.state, "deposit seen");
            }
        }
    }
    Ok(())
}

/// Marks finalized the transactions the chain finalized.
async fn finalize(deposits: &Deposits, chain: &RpcChain) -> Result<(), RelayError> {
    let waiting = records::waiting(&deposits.store).await?;
    for batch in waiting.chunks(100) {
        let statuses = chain.signature_statuses(batch).await.map_err(RelayError::Chain)?;
        for (signature, status) in batch.iter().zip(statuses) {
            if status.is_some_and(|s| s.err.is_none() && s.confirmation_status == Some(Commitment::Finalized)) {
                records::finalize(&deposits.store, signature, crate::unix_now()).await?;
            }
        }
    }
    Ok(())
}

/// The transfers `landed` made to `owner`'s token accounts: one per top-level transfer
/// instruction into such an account, and what the account gained beyond them (a program's
/// transfer) under index -1.
pub fn deposits_in(
    landed: &chain::ChainTransaction,
    signature: &str,
    key_id: &str,
    owner: &Address,
    accepted: &[(Address, &DepositMint)],
) -> Vec<DepositRecord> {
    let Some(meta) = landed.meta.as_ref().filter(|m| m.err.is_none()) else { return Vec::new() };
    let tx = Transaction::parse(&landed.transaction).ok();
    let mut out = Vec::new();
    for post in meta.post_token_balances.iter().filter(|b| b.owner.as_ref() == Some(owner)) {
        let pre =
            meta.pre_token_balances.iter().find(|b| b.account_index == post.account_index).map_or(0, |b| b.amount);
        let Some(gained) = post.amount.checked_sub(pre).filter(|g| *g > 0) else { continue };
        let Some(account) = landed.account_keys.get(post.account_index) else { continue };
        let mut parts: Vec<(i64, u64)> = Vec::new();
        if let Some(tx) = &tx {
            let message = &tx.message;
            for (i, ix) in message.instructions().iter().enumerate() {
                if let Ok(t) = shared::solana::token::decode_transfer(message, ix)
                    && t.program_id == TOKEN_PROGRAM
                    && t.destination == *account
                {
                    parts.push((i as i64, t.amount));
                }
            }
        }
        let explained: u64 = parts.iter().map(|(_, a)| a).sum();
        if explained > gained {
            // The instructions say more than the balance shows (a transfer out in the same
            // transaction): trust the balance.
            parts = vec![(-1, gained)];
        } else if gained > explained {
            parts.push((-1, gained - explained));
        }
        let mint_config = accepted.iter().find(|(m, _)| *m == post.mint).map(|(_, c)| *c);
        for (ix, amount) in parts {
            let (currency, state, reason) = match mint_config {
                None => (None, state::IGNORED, Some("unknown_mint")),
                Some(c) if amount < c.min_amount => (Some(c.currency.clone()), state::IGNORED, Some("below_minimum")),
                Some(c) => (Some(c.currency.clone()), state::SEEN, None),
            };
            out.push(DepositRecord {
                signature: signature.to_string(),
                ix,
                key_id: key_id.to_string(),
                owner: owner.to_string(),
                mint: post.mint.to_string(),
                currency,
                amount: i64::try_from(amount).unwrap_or(i64::MAX),
                state: state.to_string(),
                reason: reason.map(String::from),
                slot: i64::try_from(landed.slot).unwrap_or(i64::MAX),
                created_at: 0,
            });
        }
    }
    out
}
