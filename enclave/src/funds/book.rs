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

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use shared::privacy::{PrivacyAnswer, WithdrawalOrder};
use shared::witness::Head;
use zeroize::Zeroizing;

/// How long a landed order's id is remembered: a client may re-sign a request with the same
/// nonce (after `request_predates_boot`) for a day (docs/wallets.md).
pub const DONE_ORDER_SECS: u64 = 2 * 24 * 3600;

/// The private balances of one mint: the plaintext of a `privacy-book` sealed object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Book {
    pub mint: String,
    pub pool: String,
    pub version: u64,
    /// The digest of the parent book's blob (all zeros for a mint's first book).
    pub parent: String,
    /// Wallet address → base units.
    pub balances: BTreeMap<String, u64>,
    /// Pool transactions already credited.
    pub credited: BTreeSet<String>,
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
    pub destination: String,
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
}

impl Book {
    /// A mint's first book.
    pub fn genesis(mint: &str, pool: &str) -> Book {
        Book {
            mint: mint.to_string(),
            pool: pool.to_string(),
            version: 0,
            parent: Head::genesis().digest,
            balances: BTreeMap::new(),
            credited: BTreeSet::new(),
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

    pub fn balance(&self, holder: &str) -> u64 {
        self.balances.get(holder).copied().unwrap_or(0)
    }

    /// Credits `amount` to `holder` for the landed transaction `signature`, once.
    pub fn credit(&mut self, holder: &str, signature: &str, amount: u64) -> Result<u64, BookError> {
        if self.credited.contains(signature) {
            return Err(BookError::AlreadyCredited);
        }
        let balance = self.balance(holder).checked_add(amount).ok_or(BookError::Overflow)?;
        self.balances.insert(holder.to_string(), balance);
        self.credited.insert(signature.to_string());
        Ok(balance)
    }

    /// Debits `amount` from `holder` into the open order `id`; the balance left.
    pub fn debit(&mut self, holder: &str, amount: u64, id: &str, order: OpenOrder) -> Result<u64, BookError> {
        let left = self.balance(holder).checked_sub(amount).ok_or(BookError::Insufficient)?;
        match left {
            0 => self.balances.remove(holder),
            _ => self.balances.insert(holder.to_string(), left),
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

    /// The bytes sealed (JSON).
    pub fn to_plaintext(&self) -> Zeroizing<Vec<u8>> {
        Zeroizing::new(serde_json::to_vec(self).unwrap_or_default())
    }

    pub fn from_plaintext(plaintext: &[u8]) -> Option<Book> {
        serde_json::from_slice(plaintext).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(amount: u64, issued_at: u64) -> OpenOrder {
        OpenOrder {
            amount,
            destination: "d".into(),
            lamports: 0,
            payout_signature: "p".into(),
            last_valid_block_height: 9,
            since_slot: 1,
            payout: "tx".into(),
            order: WithdrawalOrder {
                order_id: "o".into(),
                wallet_id: "w".into(),
                wallet: "a".into(),
                mint: "m".into(),
                amount: amount.to_string(),
                destination: "d".into(),
                book_version: 1,
                payout_signature: "p".into(),
                issued_at,
                enclave_pubkey: String::new(),
                signature: String::new(),
            },
        }
    }

    /// Each row: a step on a book holding 10 for `a` backed by 10 on chain, and what follows.
    #[test]
    fn credits_debits_and_solvency_as_a_table() {
        type Step = fn(&mut Book) -> Result<u64, BookError>;
        let rows: [(&str, Step, Result<u64, BookError>, u128); 6] = [
            ("credit a new transaction", |b| b.credit("a", "s2", 5), Ok(15), 15),
            ("credit the same transaction again", |b| b.credit("b", "s1", 5), Err(BookError::AlreadyCredited), 10),
            ("debit part: the order stays owed", |b| b.debit("a", 4, "o1", order(4, 0)), Ok(6), 10),
            ("debit all: the holder leaves", |b| b.debit("a", 10, "o1", order(10, 0)), Ok(0), 10),
            ("debit more than held", |b| b.debit("a", 11, "o1", order(11, 0)), Err(BookError::Insufficient), 10),
            ("credit past u64", |b| b.credit("a", "s3", u64::MAX), Err(BookError::Overflow), 10),
        ];
        for (name, step, result, owed) in rows {
            let mut book = Book::genesis("m", "p");
            book.credit("a", "s1", 10).unwrap();
            let before = book.clone();
            let got = step(&mut book);
            assert_eq!(got, result, "{name}");
            assert_eq!(book.liabilities(), owed, "{name}");
            if got.is_err() {
                assert_eq!(book, before, "{name}: a refused step changes nothing");
            }
        }
    }

    #[test]
    fn an_order_is_owed_until_it_lands_and_then_remembered_for_its_time() {
        let mut book = Book::genesis("m", "p");
        book.credit("a", "s1", 10).unwrap();
        book.debit("a", 10, "o1", order(10, 1_000)).unwrap();
        // The payout has not landed: the pool must still hold it.
        assert_eq!(book.solvent(9), Err(BookError::Short { held: 9, owed: 10 }));
        assert_eq!(book.solvent(10), Ok(()));
        book.landed(&["o1".into()], 2_000);
        assert_eq!((book.liabilities(), book.open_orders.len()), (0, 0));
        assert_eq!(book.done_orders.get("o1"), Some(&1_000));
        assert_eq!(book.solvent(0), Ok(()));
        book.landed(&[], 1_000 + DONE_ORDER_SECS + 1);
        assert!(book.done_orders.is_empty(), "forgotten after its time");
    }

    #[test]
    fn a_child_names_its_parent_and_releases_nothing_yet() {
        let mut book = Book::genesis("m", "p");
        book.released = Some(PrivacyAnswer::default());
        let parent = Head::of(7, "parent blob");
        let child = book.child(&parent);
        assert_eq!((child.version, child.parent.as_str(), child.released.is_none()), (8, &*parent.digest, true));
        let text = child.to_plaintext();
        assert_eq!(Book::from_plaintext(&text), Some(child));
        assert_eq!(Book::from_plaintext(b"{\"mint\":\"m\"}"), None, "every field is required");
    }
}
