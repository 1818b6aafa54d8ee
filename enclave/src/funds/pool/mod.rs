//! Managed wallets' pool, the first privacy back end (DESIGN §11), built to hold against the
//! host that runs it (DESIGN §13). Trust line: `book.rs` and `lineage.rs` are pure rules; this
//! shell and the other files read the chain and sign.
//!
//! What keeps a relay (and the TDX host) from paying one balance twice or rolling books back:
//! - **One writer per mint**: a book step holds the mint's lock from opening its book to
//!   sealing the successor.
//! - **Lineage**: a step opens only the head the freshness witness acknowledged (`lineage.rs`)
//!   and seals a successor naming it; what the step gives out (a payout, an order, a credit's
//!   balance) is sealed inside that successor and released only against the witness's signed
//!   acknowledgement of it (`Witnessed`). The witness appends by compare and set, so of two
//!   successors of one book (two concurrent steps, two enclaves given one book) at most one is
//!   ever acknowledged, and only its payout leaves the enclave.
//! - **Everything owed is in the book**: balances and the orders not seen landed, so solvency
//!   against the chain holds across boots and enclaves without memory of what was signed.
//! - **Owner requests**: signed over the exact body, refused before the boot's provisioning,
//!   idempotent by their nonce (`owner.rs`); ids derive from the nonce.
//! - **A quiet period** after each boot before anything is signed, so whatever an earlier boot
//!   signed (a wallet's funding the relay held back) has landed or expired first.

mod admit;
mod book;
mod error;
mod fields;
mod head;
mod keys;
mod lineage;
mod owner;
mod payout;
mod shield;
mod statements;
mod wallet_tx;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use chain::Chain;
use shared::address::Address;
use shared::amount::Amount;
use shared::privacy::{PrivacyAnswer, PrivacyRequest};

pub use book::{Book, BookError, OpenOrder};
pub use error::FundsError;
use error::{nothing, sealed};
pub use keys::{BOOK_KIND, POOL_KIND, WALLET_KIND, new_pool, new_wallet};

use crate::funds::swap::Swaps;
use crate::funds::swap_check::ata;
use crate::keys::EnclaveKeys;
use crate::keys::custody::Custody;
use admit::{Admitted, Start};
use keys::{Pool, open_pool, open_wallet};
use lineage::Lineage;
use owner::Nonces;

/// Blocks a signed transaction stays valid (Solana's MAX_PROCESSING_AGE) and one more.
pub const DEFAULT_QUIET_BLOCKS: u64 = 151;

/// Reads of a book that looks short while payouts are open, and the pause between them.
const RECONCILE_READS: u32 = 4;
const RECONCILE_PAUSE: std::time::Duration = std::time::Duration::from_millis(250);

/// What a step works with. `now` is the enclave's clock, never behind the bundle's `issuedAt`
/// (the host sets the clock).
pub struct Env<'a> {
    pub swaps: &'a Swaps,
    pub custody: &'a Custody,
    pub keys: &'a EnclaveKeys,
    pub now: u64,
}

pub struct Funds {
    quiet_blocks: u64,
    /// Per mint, the smallest amount an encrypt, a withdrawal or a shield moves; and the rest's.
    minimums: (HashMap<String, u64>, u64),
    /// The freshness witness's keys (measured configuration).
    witnesses: Vec<Address>,
    lineage: Lineage,
    nonces: Nonces,
    /// Per mint, held from opening a book to sealing its successor.
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// The block height when this boot first wanted to sign.
    first_sign_height: Mutex<Option<u64>>,
    /// The bundle's `issuedAt` (0 before provisioning).
    floor: AtomicU64,
}

impl Funds {
    pub fn new(swaps: Option<&crate::funds::swap::SwapsConfig>, witnesses: Vec<Address>) -> Self {
        Funds {
            quiet_blocks: swaps.map_or(DEFAULT_QUIET_BLOCKS, |s| s.payout_quiet_blocks),
            minimums: swaps.map_or_else(Default::default, |s| (s.min_amounts.clone(), s.default_min_amount)),
            witnesses,
            lineage: Lineage::default(),
            nonces: Nonces::default(),
            locks: Mutex::new(HashMap::new()),
            first_sign_height: Mutex::new(None),
            floor: AtomicU64::new(0),
        }
    }

    /// What a secrets bundle tells the pool: the key holder's clock, and the witness's heads
    /// when the witness signed it (heads from another key holder could be stale; an enclave
    /// without them learns the head from the witness's first answer).
    pub fn provisioned(&self, bundle: &crate::keys::custody::Provisioned) {
        self.floor.fetch_max(bundle.issued_at, Ordering::SeqCst);
        if self.witnesses.contains(&bundle.provisioner) {
            self.lineage.install(&bundle.heads);
        }
    }

    /// The freshness witness's keys, base58.
    pub fn witness_keys(&self) -> Vec<String> {
        self.witnesses.iter().map(Address::to_string).collect()
    }

    /// The enclave's clock, never behind the bundle's `issuedAt`.
    pub fn clock(&self, now: u64) -> u64 {
        now.max(self.floor.load(Ordering::SeqCst))
    }

    pub async fn step(&self, env: &Env<'_>, request: PrivacyRequest) -> Result<PrivacyAnswer, FundsError> {
        use PrivacyRequest as R;
        match request {
            R::EncryptBuild { request, pool } => self.start(env, &request, &pool, Start::Encrypt).await,
            R::SwapFund { request, pool } => self.start(env, &request, &pool, Start::Swap).await,
            R::ShieldStart { request, pool } => self.start(env, &request, &pool, Start::Shield).await,
            R::Withdraw { request, pool, book } => {
                let a = self.admit(env, &request, "withdraw")?;
                let result = self.withdraw(env, &a, &pool, book.as_deref()).await;
                self.finish(&a, result, false)
            }
            R::EncryptCredit { wallet, pool, book, mint, signature } => {
                let wallet = open_wallet(env.custody, &wallet)?;
                let pool = open_pool(env.custody, &pool)?;
                let mint = Address::parse(&mint).ok_or(FundsError::BadBody("mint"))?;
                let holder = wallet.address;
                self.credit(env, (&wallet.address, &holder), &pool, &mint, book.as_deref(), &signature).await
            }
            R::ShieldCredit { hop, pool, book, signature } => {
                let (hop, pool) = (shield::open_hop(env.custody, &hop)?, open_pool(env.custody, &pool)?);
                if signature != hop.deposit {
                    return Err(FundsError::BadBody("signature"));
                }
                self.credit(env, (&hop.wallet, &hop.address), &pool, &hop.mint, book.as_deref(), &signature).await
            }
            R::ShieldHop { hop, pool, book } => {
                let (hop, pool) = (shield::open_hop(env.custody, &hop)?, open_pool(env.custody, &pool)?);
                shield::hop(self, env, &hop, &pool, Some(&book)).await
            }
            R::ShieldDeliver { hop } => {
                self.warm(env).await?;
                shield::deliver(env, &shield::open_hop(env.custody, &hop)?).await
            }
            R::ShieldClose { hop, pool } => {
                self.warm(env).await?;
                shield::close(env, &shield::open_hop(env.custody, &hop)?, &open_pool(env.custody, &pool)?).await
            }
            R::Settle { pool, book, mint, order_id } => {
                let pool = open_pool(env.custody, &pool)?;
                let mint = Address::parse(&mint).ok_or(FundsError::BadBody("mint"))?;
                payout::settle(self, env, &pool, &mint, &book, &order_id).await
            }
            R::Witnessed { book, answer } => self.witnessed(env, book.as_deref(), &answer).await,
            R::Certificate { wallet } => {
                let wallet = open_wallet(env.custody, &wallet)?;
                Ok(PrivacyAnswer::Certificate { certificate: keys::certificate(&wallet, env.keys) })
            }
            R::Balance { wallet, book, mint } => {
                let wallet = open_wallet(env.custody, &wallet)?;
                let head = self.lineage.opens(&mint, book.as_deref()).ok_or(FundsError::BookRollback)?;
                let mint = Address::parse(&mint).ok_or(FundsError::BadBody("mint"))?;
                statements::balance(env, wallet, head, book.as_deref(), &mint)
            }
            R::Reserves { pool, book, mint } => {
                let pool = open_pool(env.custody, &pool)?;
                let mint = Address::parse(&mint).ok_or(FundsError::BadBody("mint"))?;
                let _mint = self.lock(&mint).await;
                let (head, mut book) = self.open_head(env, book.as_deref(), &mint, &pool)?;
                let held = self.reconcile(env, &pool, &mut book).await?;
                Ok(PrivacyAnswer::Reserves { statement: statements::reserves(env, &pool, &book, &head, held).await? })
            }
        }
    }

    /// A withdrawal: debits the owner's request from the head book and signs its payout.
    async fn withdraw(
        &self,
        env: &Env<'_>,
        a: &Admitted,
        pool: &str,
        blob: Option<&str>,
    ) -> Result<PrivacyAnswer, FundsError> {
        let fields = self.fields(&a.body, true)?;
        let pool = open_pool(env.custody, pool)?;
        let _mint = self.lock(&fields.mint).await;
        let (head, book) = self.open_head(env, blob, &fields.mint, &pool)?;
        // The same request again (a lost answer, a restart): its order was debited already.
        if let Some(open) = book.open_orders.get(&a.request_id) {
            return Ok(payout::answer_of(open, &book, &a.wallet.address));
        }
        if book.done_orders.contains_key(&a.request_id) {
            return Err(FundsError::Done);
        }
        let payout = payout::Payout {
            order_id: a.request_id.clone(),
            wallet_id: a.wallet.id.clone(),
            holder: a.wallet.address,
            mint: fields.mint,
            amount: fields.amount,
            destination: fields.destination.ok_or(FundsError::BadBody("destinationPubkey"))?,
            lamports: 0,
        };
        payout::pay_out(self, env, &pool, (head, book), payout).await
    }

    /// Credits to `holder` what a landed pool transaction moved from `from`'s token account
    /// into the pool's (an encrypt: both the wallet; a shield's deposit: the wallet to its
    /// intermediate key), once per transaction.
    async fn credit(
        &self,
        env: &Env<'_>,
        (from, holder): (&Address, &Address),
        pool: &Pool,
        mint: &Address,
        blob: Option<&str>,
        signature: &str,
    ) -> Result<PrivacyAnswer, FundsError> {
        let _mint = self.lock(mint).await;
        let (head, mut book) = self.open_head(env, blob, mint, pool)?;
        if book.was_credited(signature) {
            return Err(FundsError::Book(BookError::AlreadyCredited));
        }
        let (amount, slot) = payout::deposited(env, pool, from, mint, signature).await?;
        let held = self.reconcile(env, pool, &mut book).await?;
        let balance = book.credit(holder, (signature, slot), amount)?;
        book.solvent(held)?;
        let released = PrivacyAnswer::Credited { mint: *mint, amount: Amount(amount), balance: Amount(balance) };
        self.propose(env, &head, book, released)
    }

    /// What the pool's token account holds, and the book without the orders that balance
    /// already paid. The payouts' statuses are read first, then the balance at a slot; an order
    /// is closed only when its payout was confirmed by the first read, at or before that slot.
    /// So a closed order's tokens have left the balance read, both on a node that answers in
    /// order and on one whose balance lags (its slot is older); a payout that lands between
    /// the reads stays owed. Closing an order whose tokens are still counted would let the
    /// book owe less than the pool must pay.
    ///
    /// The other way, a payout landing between the reads leaves the book short by it while it
    /// is still open, a shortfall that is not there: a book that reads short while orders are
    /// open is read again, a few times. Every read alone is sound, so reading again is too.
    async fn reconcile(&self, env: &Env<'_>, pool: &Pool, book: &mut Book) -> Result<u64, FundsError> {
        let mint = book.mint;
        let mut read = 1;
        loop {
            let confirmed = payout::confirmed_payouts(env, book).await?;
            let (held, slot) = env.swaps.chain().token_balance_at(&ata(&pool.address, &mint)).await?;
            let landed: Vec<String> = confirmed.into_iter().filter(|(_, at)| *at <= slot).map(|(id, _)| id).collect();
            book.landed(&landed, env.now);
            book.prune(slot);
            let held = held.unwrap_or(0);
            if book.solvent(held).is_ok() || book.open_orders.is_empty() || read == RECONCILE_READS {
                return Ok(held);
            }
            read += 1;
            tokio::time::sleep(RECONCILE_PAUSE).await;
        }
    }

    /// Nothing is signed until `quiet_blocks` after this boot first wanted to sign: by then
    /// whatever an earlier boot signed has landed or expired.
    async fn warm(&self, env: &Env<'_>) -> Result<(), FundsError> {
        let height = env.swaps.chain().block_height().await?;
        let first = *self.first_sign_height.lock().map_err(|_| FundsError::Internal)?.get_or_insert(height);
        if height < first + self.quiet_blocks {
            return Err(FundsError::WarmingUp(first + self.quiet_blocks - height));
        }
        Ok(())
    }
}
