//! The book of one mint's private balances: the pure core of the pool (DESIGN §13). No I/O:
//! what a step read from the chain is passed in, so every rule is a function of values and is
//! tested as a table.
//!
//! The rules:
//! - **Liabilities** are the private balances plus every debited order whose payout has not
//!   been seen landed: a payout in flight still leaves the pool's token account, whatever
//!   boot or enclave signed it, so it is owed until it lands.
//! - **Solvency**: after every credit and debit the book owes no more than the pool holds.
//! - **Lineage**: a book names its parent's digest; its version is its parent's plus one.
//! - **Idempotency**: a landed transaction is credited once; an order id (derived from the
//!   owner's nonce) is debited once: open until its payout lands, then kept among `doneOrders`
//!   for [`DONE_ORDER_SECS`].
//! - **Bounded**: credited transactions are remembered for [`CREDIT_HORIZON_SLOTS`]; the book
//!   records the horizon and refuses to credit anything that landed before it, so what it
//!   keeps grows with the traffic of a day, not of the pool's life. Balances grow only with
//!   holders of at least the mint's minimum amount (`mod.rs`).
//!
//! Encoding (sealed, so only this enclave reads it): the small fields as JSON, then the two
//! large tables as fixed-width records, which a step decodes and encodes in linear time (a
//! book of 100,000 wallets with a day of 100,000 credits is 8 MB; docs/benchmarks.md).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use shared::address::Address;
use shared::privacy::{PrivacyAnswer, SignedTx, WithdrawalOrder};
use shared::witness::Head;
use zeroize::Zeroizing;

/// How long a landed order's id is remembered: a client may re-sign a request with the same
/// nonce (after `request_predates_boot`) for a day (docs/wallets.md).
pub const DONE_ORDER_SECS: u64 = 2 * 24 * 3600;

/// How long a credited transaction is remembered: a day of 400 ms slots. The relay credits a
/// transaction as soon as it is finalized; one it held back for a day is refused (its tokens
/// stay in the pool, a residual risk docs/wallets.md states).
pub const CREDIT_HORIZON_SLOTS: u64 = 216_000;

/// The private balances of one mint: the plaintext of a `privacy-book` sealed object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Book {
    pub mint: Address,
    pub pool: Address,
    pub version: u64,
    /// The digest of the parent book's blob (all zeros for a mint's first book).
    pub parent: String,
    /// Transactions that landed before this slot are no longer credited.
    pub horizon: u64,
    /// Wallet address → base units (never 0).
    #[serde(skip)]
    pub balances: BTreeMap<Address, u64>,
    /// Pool transactions credited since the horizon: sha256 of the signature → its slot.
    #[serde(skip)]
    pub credited: BTreeMap<[u8; 32], u64>,
    /// Debited orders whose payout has not been seen landed: order id → its payout.
    pub open_orders: BTreeMap<String, OpenOrder>,
    /// Orders whose payout landed: order id → when the order was issued.
    pub done_orders: BTreeMap<String, u64>,
    /// What the step that sealed this version gives out once the witness acknowledged it.
    pub released: Option<PrivacyAnswer>,
}

/// A debited order and the payout last signed for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OpenOrder {
    pub amount: u64,
    pub destination: Address,
    /// Lamports the payout also gives the destination (a shield's intermediate key's fees).
    pub lamports: u64,
    pub payout_signature: String,
    pub last_valid_block_height: u64,
    /// A slot before the order's first payout was signed: none of its payouts is older.
    pub since_slot: u64,
    /// The signed payout (base64) and the signed order, given again to a retried request.
    pub payout: String,
    pub order: WithdrawalOrder,
}

impl OpenOrder {
    /// The order's current payout, to send.
    pub fn payout(&self) -> SignedTx {
        SignedTx {
            transaction: self.payout.clone(),
            signature: self.payout_signature.clone(),
            last_valid_block_height: self.last_valid_block_height,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BookError {
    #[error("this transaction was already credited")]
    AlreadyCredited,
    #[error("the wallet's private balance is too small for this amount")]
    Insufficient,
    #[error("the pool would hold {held} base units against {owed} owed")]
    Short { held: u64, owed: u128 },
    #[error("a balance would overflow")]
    Overflow,
    #[error("this transaction landed before slot {0}, the oldest this book still credits")]
    BeforeHorizon(u64),
}

impl Book {
    /// A mint's first book.
    pub fn genesis(mint: &Address, pool: &Address) -> Book {
        Book {
            mint: *mint,
            pool: *pool,
            version: 0,
            parent: Head::genesis().digest,
            horizon: 0,
            balances: BTreeMap::new(),
            credited: BTreeMap::new(),
            open_orders: BTreeMap::new(),
            done_orders: BTreeMap::new(),
            released: None,
        }
    }

    /// The successor of this book, whose blob is named by `head`: one version on, naming it as
    /// parent, with nothing released yet.
    pub fn child(mut self, head: &Head) -> Book {
        self.version = head.version + 1;
        self.parent = head.digest.clone();
        self.released = None;
        self
    }

    /// What the pool owes: the private balances and the orders not seen landed.
    pub fn liabilities(&self) -> u128 {
        let balances: u128 = self.balances.values().map(|v| u128::from(*v)).sum();
        balances + self.open_orders.values().map(|o| u128::from(o.amount)).sum::<u128>()
    }

    pub fn balance(&self, holder: &Address) -> u64 {
        self.balances.get(holder).copied().unwrap_or(0)
    }

    /// Whether the transaction `signature` was credited since the horizon.
    pub fn was_credited(&self, signature: &str) -> bool {
        self.credited.contains_key(&shared::sha256(signature.as_bytes()))
    }

    /// Credits `amount` to `holder` for the transaction `signature` that landed at `slot`, once.
    pub fn credit(&mut self, holder: &Address, (signature, slot): (&str, u64), amount: u64) -> Result<u64, BookError> {
        if slot < self.horizon {
            return Err(BookError::BeforeHorizon(self.horizon));
        }
        if self.was_credited(signature) {
            return Err(BookError::AlreadyCredited);
        }
        let balance = self.balance(holder).checked_add(amount).ok_or(BookError::Overflow)?;
        if balance > 0 {
            self.balances.insert(*holder, balance);
        }
        self.credited.insert(shared::sha256(signature.as_bytes()), slot);
        Ok(balance)
    }

    /// Moves the horizon up to [`CREDIT_HORIZON_SLOTS`] before `slot` (never back) and forgets
    /// the credits below it.
    pub fn prune(&mut self, slot: u64) {
        self.horizon = self.horizon.max(slot.saturating_sub(CREDIT_HORIZON_SLOTS));
        let horizon = self.horizon;
        self.credited.retain(|_, landed| *landed >= horizon);
    }

    /// Debits `amount` from `holder` into the open order `id`; the balance left.
    pub fn debit(&mut self, holder: &Address, amount: u64, id: &str, order: OpenOrder) -> Result<u64, BookError> {
        let left = self.balance(holder).checked_sub(amount).ok_or(BookError::Insufficient)?;
        match left {
            0 => self.balances.remove(holder),
            _ => self.balances.insert(*holder, left),
        };
        self.open_orders.insert(id.to_string(), order);
        Ok(left)
    }

    /// Closes the open orders whose payout landed; forgets done orders past their time.
    pub fn landed(&mut self, ids: &[String], now: u64) {
        for id in ids {
            if let Some(open) = self.open_orders.remove(id) {
                self.done_orders.insert(id.clone(), open.order.issued_at);
            }
        }
        self.done_orders.retain(|_, at| at.saturating_add(DONE_ORDER_SECS) >= now);
    }

    /// The book owes no more than `held`, what the pool's token account holds.
    pub fn solvent(&self, held: u64) -> Result<(), BookError> {
        let owed = self.liabilities();
        match owed <= u128::from(held) {
            true => Ok(()),
            false => Err(BookError::Short { held, owed }),
        }
    }

    /// The bytes sealed: `u32` length and the JSON of the small fields, then each table as a
    /// `u32` count of 40-byte records (a 32-byte key, a little-endian `u64`), keys ascending.
    pub fn to_plaintext(&self) -> Zeroizing<Vec<u8>> {
        let fields = Zeroizing::new(serde_json::to_vec(self).unwrap_or_default());
        let records = self.balances.len() + self.credited.len();
        let mut out = Zeroizing::new(Vec::with_capacity(12 + fields.len() + records * RECORD));
        out.extend_from_slice(&(fields.len() as u32).to_le_bytes());
        out.extend_from_slice(&fields);
        write_table(&mut out, self.balances.iter().map(|(a, v)| (&a.0, *v)), self.balances.len());
        write_table(&mut out, self.credited.iter().map(|(k, s)| (k, *s)), self.credited.len());
        out
    }

    pub fn from_plaintext(plaintext: &[u8]) -> Option<Book> {
        let mut rest = plaintext;
        let length = read_u32(&mut rest)? as usize;
        let fields = take(&mut rest, length)?;
        let mut book: Book = serde_json::from_slice(fields).ok()?;
        book.balances = read_table(&mut rest)?.map(|(k, v)| (Address(k), v)).collect();
        book.credited = read_table(&mut rest)?.collect();
        (rest.is_empty() && !book.balances.values().any(|v| *v == 0)).then_some(book)
    }
}

const RECORD: usize = 40;

fn write_table<'a>(out: &mut Vec<u8>, records: impl Iterator<Item = (&'a [u8; 32], u64)>, count: usize) {
    out.extend_from_slice(&(count as u32).to_le_bytes());
    for (key, value) in records {
        out.extend_from_slice(key);
        out.extend_from_slice(&value.to_le_bytes());
    }
}

/// A table's records, if its keys ascend strictly (so each key is there once).
fn read_table(rest: &mut &[u8]) -> Option<impl Iterator<Item = ([u8; 32], u64)>> {
    let count = read_u32(rest)? as usize;
    let table = take(rest, count.checked_mul(RECORD)?)?;
    let records = table.chunks_exact(RECORD).map(|r| (r[..32].try_into().unwrap_or([0; 32]), u64_at(&r[32..])));
    let ascending = table.chunks_exact(RECORD).zip(table.chunks_exact(RECORD).skip(1)).all(|(a, b)| a[..32] < b[..32]);
    ascending.then_some(records)
}

fn take<'a>(rest: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    let (head, tail) = (rest.get(..n)?, rest.get(n..)?);
    *rest = tail;
    Some(head)
}

fn read_u32(rest: &mut &[u8]) -> Option<u32> {
    Some(u32::from_le_bytes(take(rest, 4)?.try_into().ok()?))
}

fn u64_at(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes.try_into().unwrap_or_default())
}

#[cfg(test)]
mod tests;
