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

mod book;
mod keys;
mod lineage;
mod owner;
mod payout;
mod shield;
mod wallet_tx;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use chain::Chain;
use ed25519_dalek::Signer;
use rand_core::{OsRng, RngCore};
use serde_json::Value;
use shared::address::Address;
use shared::b64;
use shared::privacy::{
    self, BalanceStatement, PrivacyAnswer, PrivacyRequest, ReservesStatement, SealedBook, WalletRequest,
};
use shared::witness::{AppendRequest, Head, WitnessAnswer, WitnessError};

pub use book::{Book, BookError, OpenOrder};
pub use keys::{BOOK_KIND, POOL_KIND, WALLET_KIND, new_pool, new_wallet};

use crate::custody::Custody;
use crate::keys::EnclaveKeys;
use crate::swap::{SwapError, Swaps};
use crate::swap_check::ata;
use keys::{Pool, Wallet, open_pool, open_wallet};
use lineage::Lineage;
use owner::{Admission, Nonces};

/// Blocks a signed transaction stays valid (Solana's MAX_PROCESSING_AGE) and one more.
pub const DEFAULT_QUIET_BLOCKS: u64 = 151;

#[derive(Debug, thiserror::Error)]
pub enum FundsError {
    #[error("{0}")]
    Swap(#[from] SwapError),
    #[error("the request body is not what this step takes: {0}")]
    BadBody(&'static str),
    #[error("this wallet has an owner: the request must carry the owner's signature headers")]
    OwnerSignatureRequired,
    #[error("the owner's signature does not verify over this request")]
    OwnerSignatureInvalid,
    #[error("this request was carried out and its payout landed; the relay keeps its answer")]
    Done,
    #[error("the same request is being carried out; ask again for its answer")]
    InProgress,
    #[error("this owner nonce carried another request")]
    KeyReused,
    #[error("the owner's timestamp is outside the accepted window")]
    Stale,
    #[error("the owner signed this request before this enclave was provisioned; sign it again")]
    PredatesBoot,
    #[error("{0}")]
    Book(#[from] BookError),
    #[error("the wallet's public token account holds less than this amount")]
    InsufficientPublic,
    #[error("the witness moved on from this book; read the newest book and retry")]
    BookStale,
    #[error("this is not the book the freshness witness acknowledged last for its mint")]
    BookRollback,
    #[error("the witness answer does not verify: {0}")]
    Witness(#[from] WitnessError),
    #[error("the pool key {0} holds too little SOL for fees and token-account rent; the operator funds it")]
    PoolUnfunded(String),
    #[error("amount is below this mint's minimum of {0} base units")]
    BelowMinimum(u64),
    #[error("nothing is signed until {0} more blocks pass (what earlier boots signed must settle)")]
    WarmingUp(u64),
    #[error("internal error")]
    Internal,
}

impl FundsError {
    pub fn status_and_code(&self) -> Option<(u16, &'static str)> {
        use shared::wire::codes;
        Some(match self {
            FundsError::Swap(_) => return None,
            FundsError::Book(BookError::AlreadyCredited | BookError::BeforeHorizon(_)) => (409, codes::NOTHING_TO_DO),
            FundsError::BadBody(_) | FundsError::Book(BookError::Overflow) => (400, codes::INVALID_FIELD),
            FundsError::BelowMinimum(_) => (400, codes::INVALID_FIELD),
            FundsError::Witness(_) => (400, codes::INVALID_FIELD),
            FundsError::OwnerSignatureRequired => (401, codes::OWNER_SIGNATURE_REQUIRED),
            FundsError::OwnerSignatureInvalid => (403, codes::OWNER_SIGNATURE_INVALID),
            FundsError::Done => (409, codes::REPLAY_DETECTED),
            FundsError::InProgress => (409, codes::REQUEST_IN_PROGRESS),
            FundsError::KeyReused => (422, codes::IDEMPOTENCY_KEY_REUSED),
            FundsError::Stale => (400, codes::STALE_TIMESTAMP),
            FundsError::PredatesBoot => (400, codes::REQUEST_PREDATES_BOOT),
            FundsError::Book(BookError::Insufficient) => (409, codes::INSUFFICIENT_PRIVATE_BALANCE),
            FundsError::InsufficientPublic => (409, codes::INSUFFICIENT_PUBLIC_BALANCE),
            FundsError::Book(BookError::Short { .. }) => (409, codes::RESERVES_SHORT),
            FundsError::BookStale => (409, codes::BOOK_STALE),
            FundsError::BookRollback => (409, codes::BOOK_ROLLBACK),
            FundsError::WarmingUp(_) => (503, codes::POOL_WARMING_UP),
            FundsError::PoolUnfunded(_) => (503, codes::POOL_UNFUNDED),
            FundsError::Internal => (500, codes::INTERNAL),
        })
    }
}

fn sealed() -> FundsError {
    FundsError::Swap(SwapError::Sealed)
}

fn chain_error(e: chain::ChainError) -> FundsError {
    FundsError::Swap(SwapError::Chain(e.to_string()))
}

fn nothing(why: &'static str) -> FundsError {
    FundsError::Swap(SwapError::NothingToDo(why))
}

/// What a step works with. `now` is the enclave's clock, never behind the bundle's `issuedAt`
/// (the host sets the clock).
pub struct Env<'a> {
    pub swaps: &'a Swaps,
    pub custody: &'a Custody,
    pub keys: &'a EnclaveKeys,
    pub now: u64,
}

/// An owner request that passed its checks: the wallet, the body, the id derived from it.
struct Admitted {
    wallet: Wallet,
    body: Value,
    /// The order, session or shield id: derived from (wallet, owner, nonce) with an owner,
    /// random without one.
    request_id: String,
    /// The answer of the same request given earlier in this boot.
    earlier: Option<PrivacyAnswer>,
    /// The owner and nonce of an owner-signed request.
    nonce: Option<(ed25519_dalek::VerifyingKey, String)>,
}

/// The owner requests that sign a transaction from the wallet.
#[derive(Clone, Copy)]
enum Start {
    Encrypt,
    Swap,
    Shield,
}

impl Start {
    /// The last segment of the request's path.
    fn operation(self) -> &'static str {
        ["encrypt", "swap", "shield"][self as usize]
    }
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
    pub fn new(swaps: Option<&crate::swap::SwapsConfig>, witnesses: Vec<Address>) -> Self {
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
    pub fn provisioned(&self, bundle: &crate::custody::Provisioned) {
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
                Ok(PrivacyAnswer { certificate: Some(keys::certificate(&wallet, env.keys)), ..Default::default() })
            }
            R::Balance { wallet, book, mint } => {
                let wallet = open_wallet(env.custody, &wallet)?;
                let head = self.lineage.opens(&mint, book.as_deref()).ok_or(FundsError::BookRollback)?;
                let opened = match &book {
                    Some(blob) => keys::open_book(env.custody, blob)?,
                    None => Book::genesis(&mint, ""),
                };
                if opened.mint != mint {
                    return Err(sealed());
                }
                let held = opened.balance(&wallet.address).to_string();
                let mut statement = BalanceStatement {
                    wallet_id: wallet.id,
                    wallet: wallet.address.to_string(),
                    mint: opened.mint.clone(),
                    balance: held.clone(),
                    book_version: head.version,
                    book_digest: head.digest,
                    issued_at: env.now,
                    enclave_pubkey: b64::encode(env.keys.enclave_public()),
                    signature: String::new(),
                };
                statement.signature = privacy::signature_text(&env.keys.signer().sign(&statement.message()).to_bytes());
                Ok(PrivacyAnswer {
                    mint: Some(opened.mint),
                    balance: Some(held),
                    balance_statement: Some(statement),
                    ..Default::default()
                })
            }
            R::Reserves { pool, book, mint } => {
                let pool = open_pool(env.custody, &pool)?;
                let mint = Address::parse(&mint).ok_or(FundsError::BadBody("mint"))?;
                let _mint = self.lock(&mint).await;
                let (head, mut book) = self.open_head(env, book.as_deref(), &mint, &pool)?;
                let held = self.reconcile(env, &pool, &mut book).await?;
                Ok(PrivacyAnswer {
                    reserves: Some(statement(env, &pool, &book, &head, held).await?),
                    ..Default::default()
                })
            }
        }
    }

    /// An owner request that signs a transaction from the wallet (an encrypt, a managed swap's
    /// funding, a shield's deposit): the same request again in this boot gets the same answer.
    async fn start(
        &self,
        env: &Env<'_>,
        request: &WalletRequest,
        pool: &str,
        kind: Start,
    ) -> Result<PrivacyAnswer, FundsError> {
        let a = self.admit(env, request, kind.operation())?;
        let result = match a.earlier.clone() {
            Some(answer) => Ok(answer),
            None => {
                async {
                    let pool = open_pool(env.custody, pool)?;
                    match kind {
                        Start::Encrypt => wallet_tx::encrypt(self, env, &a, &pool).await,
                        Start::Swap => wallet_tx::swap_fund(self, env, &a, &pool).await,
                        Start::Shield => shield::start(self, env, &a, &pool).await,
                    }
                }
                .await
            }
        };
        self.finish(&a, result, true)
    }

    /// Opens the wallet and the caller's JSON body, after checking the owner's signature over
    /// that body when the wallet has an owner. An admitted owner request is then [`Funds::finish`]ed.
    fn admit(&self, env: &Env<'_>, request: &WalletRequest, op: &str) -> Result<Admitted, FundsError> {
        let wallet = open_wallet(env.custody, &request.wallet)?;
        let bytes = b64::decode(&request.body).map_err(|_| FundsError::BadBody("body"))?;
        let body: Value = serde_json::from_slice(&bytes).map_err(|_| FundsError::BadBody("not a JSON object"))?;
        let Some(owner) = wallet.owner else {
            let mut id = [0u8; 16];
            OsRng.fill_bytes(&mut id);
            return Ok(Admitted {
                wallet,
                body,
                request_id: shared::swap::format_uuid(&id),
                earlier: None,
                nonce: None,
            });
        };
        let auth = request.auth.as_ref().ok_or(FundsError::OwnerSignatureRequired)?;
        let path = format!("/agents/v1/wallets/{}/{op}", wallet.id);
        let floor = self.floor.load(Ordering::SeqCst);
        let earlier = match self.nonces.admit(&owner, auth, (&path, &bytes), env.now, floor)? {
            Admission::New => None,
            Admission::Retry(answer) => answer.map(|a| *a),
        };
        let request_id = privacy::request_id(&wallet.id, &Address(owner.to_bytes()).to_string(), &auth.nonce);
        Ok(Admitted { wallet, body, request_id, earlier, nonce: Some((owner, auth.nonce.clone())) })
    }

    /// Records what an owner request came to (`keep`: its answer is given again to a retry;
    /// a refusal is forgotten, so the same bytes can be sent again) and passes the result on.
    fn finish(
        &self,
        a: &Admitted,
        result: Result<PrivacyAnswer, FundsError>,
        keep: bool,
    ) -> Result<PrivacyAnswer, FundsError> {
        if let Some((owner, nonce)) = &a.nonce {
            let outcome = match &result {
                Ok(answer) => Ok(keep.then_some(answer)),
                Err(_) => Err(()),
            };
            self.nonces.finish(owner, nonce, outcome);
        }
        result
    }

    /// The mint's lock, held from opening its book to sealing the successor.
    async fn lock(&self, mint: &Address) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = {
            let mut locks = self.locks.lock().unwrap_or_else(|p| p.into_inner());
            locks.entry(mint.to_string()).or_default().clone()
        };
        lock.lock_owned().await
    }

    /// The book `blob` if it is the mint's witnessed head (a new book before the first), bound
    /// to the mint and the pool.
    fn open_head(
        &self,
        env: &Env<'_>,
        blob: Option<&str>,
        mint: &Address,
        pool: &Pool,
    ) -> Result<(Head, Book), FundsError> {
        let head = self.lineage.opens(&mint.to_string(), blob).ok_or(FundsError::BookRollback)?;
        let book = match blob {
            Some(blob) => keys::open_book(env.custody, blob)?,
            None => Book::genesis(&mint.to_string(), &pool.address.to_string()),
        };
        if book.mint != mint.to_string() || book.pool != pool.address.to_string() || book.version != head.version {
            return Err(sealed());
        }
        Ok((head, book))
    }

    /// Seals the successor of `head` holding `released`, and the witness request for it.
    /// Nothing of `released` leaves until the witness acknowledged it ([`Funds::witnessed`]).
    fn propose(
        &self,
        env: &Env<'_>,
        head: &Head,
        book: Book,
        released: PrivacyAnswer,
    ) -> Result<PrivacyAnswer, FundsError> {
        let mut child = book.child(head);
        child.released = Some(released);
        let blob = keys::seal_book(env.custody, &child)?;
        let next = Head::of(child.version, &blob);
        let append = AppendRequest::signed(&child.mint, head.clone(), next, env.keys.signer());
        Ok(PrivacyAnswer {
            book: Some(SealedBook { blob, version: child.version }),
            append: Some(append),
            ..Default::default()
        })
    }

    /// The witness's answer to an append: an acknowledgement makes `book` the head and gives
    /// out what it holds; a refusal teaches this boot the witness's head (`book_stale`).
    async fn witnessed(
        &self,
        env: &Env<'_>,
        blob: Option<&str>,
        answer: &WitnessAnswer,
    ) -> Result<PrivacyAnswer, FundsError> {
        answer.verify(&self.witnesses)?;
        let mint = Address::parse(&answer.mint).ok_or(FundsError::BadBody("mint"))?;
        let _mint = self.lock(&mint).await;
        if !answer.appended() {
            self.lineage.learn_answer(answer);
            return Err(FundsError::BookStale);
        }
        let blob = blob.ok_or(FundsError::BadBody("book"))?;
        if Head::of(answer.next.version, blob) != answer.next {
            return Err(FundsError::BadBody("book"));
        }
        if !self.lineage.learn_answer(answer) {
            return Err(FundsError::BookRollback);
        }
        let book = keys::open_book(env.custody, blob)?;
        if book.mint != answer.mint || book.parent != answer.parent.digest || book.version != answer.next.version {
            return Err(sealed());
        }
        Ok(book.released.unwrap_or_default())
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
        let released = PrivacyAnswer {
            mint: Some(mint.to_string()),
            amount: Some(amount.to_string()),
            balance: Some(balance.to_string()),
            ..Default::default()
        };
        self.propose(env, &head, book, released)
    }

    /// What the pool's token account holds, and the book without the orders that balance
    /// already paid: the balance is read first, at a slot; an order is closed only when its
    /// payout is confirmed at or before that slot, so it left the balance read. A payout that
    /// lands after the read stays owed, and the balance read still holds it: the two always
    /// describe the same moment.
    async fn reconcile(&self, env: &Env<'_>, pool: &Pool, book: &mut Book) -> Result<u64, FundsError> {
        let mint = Address::parse(&book.mint).ok_or_else(sealed)?;
        let (held, slot) = env.swaps.chain().token_balance_at(&ata(&pool.address, &mint)).await.map_err(chain_error)?;
        let landed = payout::landed_orders(env, book, slot).await?;
        book.landed(&landed, env.now);
        book.prune(slot);
        Ok(held.unwrap_or(0))
    }

    /// `{mint, amount}` (and `destinationPubkey`) of an encrypt, a withdrawal or a shield, the
    /// amount at least the mint's minimum.
    fn fields(&self, body: &Value, with_destination: bool) -> Result<Fields, FundsError> {
        let fields = read_fields(body, with_destination)?;
        let (per_mint, default) = &self.minimums;
        let minimum = per_mint.get(&fields.mint.to_string()).copied().unwrap_or(*default);
        match fields.amount >= minimum {
            true => Ok(fields),
            false => Err(FundsError::BelowMinimum(minimum)),
        }
    }

    /// Nothing is signed until `quiet_blocks` after this boot first wanted to sign: by then
    /// whatever an earlier boot signed has landed or expired.
    async fn warm(&self, env: &Env<'_>) -> Result<(), FundsError> {
        let height = env.swaps.chain().block_height().await.map_err(chain_error)?;
        let first = *self.first_sign_height.lock().map_err(|_| FundsError::Internal)?.get_or_insert(height);
        if height < first + self.quiet_blocks {
            return Err(FundsError::WarmingUp(first + self.quiet_blocks - height));
        }
        Ok(())
    }
}

/// The statement of reserves of the head book, naming it.
async fn statement(
    env: &Env<'_>,
    pool: &Pool,
    book: &Book,
    head: &Head,
    held: u64,
) -> Result<ReservesStatement, FundsError> {
    let mint = Address::parse(&book.mint).ok_or_else(sealed)?;
    let height = env.swaps.chain().block_height().await.map_err(chain_error)?;
    let mut statement = ReservesStatement {
        mint: book.mint.clone(),
        pool: pool.address.to_string(),
        pool_token_account: ata(&pool.address, &mint).to_string(),
        pool_balance: held.to_string(),
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

/// The request fields a step reads from the body the caller sent.
struct Fields {
    mint: Address,
    amount: u64,
    destination: Option<Address>,
}

/// `{mint, amount}` (and `destinationPubkey` for a withdrawal) from the caller's JSON body;
/// `amount` is base units as a string.
fn read_fields(body: &Value, with_destination: bool) -> Result<Fields, FundsError> {
    let mint = address_field(body, "mint")?;
    let amount = amount_field(body)?;
    let destination = match with_destination {
        true => Some(address_field(body, "destinationPubkey")?),
        false => None,
    };
    Ok(Fields { mint, amount, destination })
}

fn address_field(body: &Value, name: &'static str) -> Result<Address, FundsError> {
    body.get(name).and_then(Value::as_str).and_then(Address::parse).ok_or(FundsError::BadBody(name))
}

fn amount_field(body: &Value) -> Result<u64, FundsError> {
    let text = body.get("amount").and_then(Value::as_str);
    text.and_then(shared::swap::parse_amount).filter(|a| *a > 0).ok_or(FundsError::BadBody("amount"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_come_from_the_body_and_are_strict() {
        let mint = Address([3; 32]).to_string();
        let body = format!(r#"{{"mint":"{mint}","amount":"25","destinationPubkey":"{mint}"}}"#);
        let json = |text: &str| serde_json::from_str::<Value>(text).unwrap();
        let f = read_fields(&json(&body), true).unwrap();
        assert_eq!(
            (f.mint.to_string(), f.amount, f.destination.map(|d| d.to_string())),
            (mint.clone(), 25, Some(mint.clone()))
        );
        for bad in [
            format!(r#"{{"mint":"{mint}","amount":25}}"#),
            format!(r#"{{"mint":"{mint}","amount":"025"}}"#),
            format!(r#"{{"mint":"{mint}","amount":"0"}}"#),
            r#"{"mint":"x","amount":"1"}"#.to_string(),
            "[]".to_string(),
        ] {
            assert!(read_fields(&json(&bad), false).is_err(), "{bad}");
        }
        let no_destination = format!(r#"{{"mint":"{mint}","amount":"1"}}"#);
        assert!(read_fields(&json(&no_destination), true).is_err());
    }

    #[test]
    fn amounts_below_the_mints_minimum_are_refused() {
        let (usdc, other) = (Address([3; 32]).to_string(), Address([4; 32]).to_string());
        let config = serde_json::json!({"rpcUrl": "http://127.0.0.1:1", "routerUrl": "http://127.0.0.1:2",
                                        "minAmounts": {usdc.clone(): 10_000}, "defaultMinAmount": 50});
        let funds = Funds::new(Some(&serde_json::from_value(config).unwrap()), Vec::new());
        let body = |mint: &str, amount: u64| serde_json::json!({"mint": mint, "amount": amount.to_string()});
        assert!(matches!(funds.fields(&body(&usdc, 9_999), false), Err(FundsError::BelowMinimum(10_000))));
        assert_eq!(funds.fields(&body(&usdc, 10_000), false).map(|f| f.amount).ok(), Some(10_000));
        assert!(matches!(funds.fields(&body(&other, 49), false), Err(FundsError::BelowMinimum(50))));
        assert!(funds.fields(&body(&other, 50), false).is_ok());
        assert!(Funds::new(None, Vec::new()).fields(&body(&other, 1), false).is_ok(), "no pool, no minimum");
    }
}
