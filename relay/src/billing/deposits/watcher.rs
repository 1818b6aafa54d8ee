//! The deposit watcher: each scan reads, for every deposit owner, the new signatures of the
//! owner and of its token accounts of the accepted mints, records every transfer to the
//! owner's accounts once, then marks finalized what the chain finalized and credits it.
//!
//! A relay killed at any point loses nothing: a scan records before it moves the address's
//! cursor, so an interrupted scan is redone (records are idempotent), and a credit is one
//! database transaction with its row's state change. Several relays scanning at once record
//! and credit each transfer once for the same reasons.

use chain::{Chain, Commitment, RpcChain};
use shared::address::Address;
use shared::solana::Transaction;
use shared::solana::programs::TOKEN_PROGRAM;

use super::records::{self, DepositRecord, state};
use super::{DepositMint, addresses};
use crate::billing::balances;
use crate::error::RelayError;
use crate::state::App;

/// Signatures read per page, and pages per address per scan.
const PAGE: usize = 500;
const MAX_PAGES: usize = 20;

pub async fn run(app: App) {
    let Some(chain) = app.deposits.chain.as_ref() else { return };
    loop {
        if let Err(e) = scan(&app, chain).await {
            tracing::warn!(error = %e, "deposit scan failed; the next one retries");
        }
        tokio::time::sleep(app.deposits.config.poll()).await;
    }
}

/// One scan: record, finalize, credit.
pub async fn scan(app: &App, chain: &RpcChain) -> Result<(), RelayError> {
    let accepted = app.deposits.config.accepted();
    for (key_id, owner) in addresses::all(app).await? {
        let owner = Address::parse(&owner).ok_or(RelayError::Internal)?;
        let mut watched = vec![owner];
        watched.extend(accepted.iter().map(|(mint, _)| shared::swap::funding::token_account(&owner, mint)));
        for address in watched {
            scan_address(app, chain, &key_id, &owner, &address, &accepted).await?;
        }
    }
    finalize(app, chain).await?;
    for (signature, ix) in records::to_credit(&app.store).await? {
        if let Some(c) = balances::credit_deposit(&app.store, &signature, ix, crate::unix_now()).await? {
            tracing::info!(key_id = %c.key_id, currency = %c.currency, amount = c.amount, balance_after = c.balance_after, %signature, ix, "deposit credited");
            crate::failpoint::hit("deposit:credited");
        }
    }
    Ok(())
}

async fn scan_address(
    app: &App,
    chain: &RpcChain,
    key_id: &str,
    owner: &Address,
    address: &Address,
    accepted: &[(Address, &DepositMint)],
) -> Result<(), RelayError> {
    let cursor = records::cursor(&app.store, &address.to_string()).await?;
    // Newest first, back to the cursor.
    let mut new = Vec::new();
    let mut before: Option<String> = None;
    'pages: for _ in 0..MAX_PAGES {
        let page = chain.signatures_for_address(address, before.as_deref(), PAGE).await.map_err(RelayError::Chain)?;
        for info in &page {
            if Some(&info.signature) == cursor.as_ref() {
                break 'pages;
            }
            new.push(info.clone());
        }
        match page.last() {
            Some(last) if page.len() == PAGE => before = Some(last.signature.clone()),
            _ => break,
        }
    }
    let Some(newest) = new.first().map(|i| i.signature.clone()) else { return Ok(()) };
    for info in new.iter().rev().filter(|i| i.err.is_none()) {
        let Some(landed) = chain.transaction(&info.signature).await.map_err(RelayError::Chain)? else { continue };
        for d in deposits_in(&landed, &info.signature, key_id, owner, accepted) {
            if records::record(&app.store, &d, crate::unix_now()).await? {
                tracing::info!(key_id, signature = %d.signature, ix = d.ix, amount = d.amount, state = %d.state, "deposit seen");
            }
        }
    }
    crate::failpoint::hit("deposit:recorded");
    records::set_cursor(&app.store, &address.to_string(), &newest, crate::unix_now()).await?;
    Ok(())
}

/// Marks finalized the transactions the chain finalized.
async fn finalize(app: &App, chain: &RpcChain) -> Result<(), RelayError> {
    let waiting = records::waiting(&app.store).await?;
    for batch in waiting.chunks(100) {
        let statuses = chain.signature_statuses(batch).await.map_err(RelayError::Chain)?;
        for (signature, status) in batch.iter().zip(statuses) {
            if status.is_some_and(|s| s.err.is_none() && s.confirmation_status == Some(Commitment::Finalized)) {
                records::finalize(&app.store, signature, crate::unix_now()).await?;
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
