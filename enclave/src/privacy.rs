//! The first privacy back end of managed wallets (DESIGN §11): a pool key only this enclave
//! holds, and per mint a sealed book of private balances.
//!
//! Keys and books are sealed objects the relay stores and hands back. What keeps a relay from
//! abusing them:
//! - A wallet key is sealed with its wallet id and owner key; with an owner, every step that
//!   moves funds needs the owner's signature over the exact request (method, path, body hash,
//!   timestamp, single-use nonce), checked here against the body the relay forwarded. The
//!   fields come from that body, so a changed destination breaks the signature.
//! - The book is bound to its mint and pool; within a boot only the newest version this
//!   enclave sealed is accepted; every credit names the landed transaction it credits, once.
//! - Solvency is checked against the chain on every credit and payout: the book may owe no
//!   more than the pool's token account holds, less payouts signed this boot that have not
//!   landed. Payouts signed by an earlier boot are out of reach of that count, so none is
//!   signed until they can no longer land (`payoutQuietBlocks` after the first payout
//!   request of a boot). A relay replaying an old book across a reboot can shift balances
//!   between wallets, never make the pool owe more than it holds (docs/wallets.md).

mod shield;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;

use chain::Chain;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use rand_core::{OsRng, RngCore};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use shared::address::Address;
use shared::b64;
use shared::privacy::{
    self, NewWallet, OwnerAuth, PrivacyAnswer, PrivacyRequest, ReservesStatement, SealedBook, WalletRequest,
    WithdrawalOrder,
};
use shared::solana::programs::TOKEN_PROGRAM;
use shared::solana::{Message, Transaction, associated_token, memo, system, token};
use shared::swap::SessionTerms;
use shared::wire::SealedObject;
use zeroize::Zeroizing;

use crate::custody::Custody;
use crate::keys::{EnclaveKeys, SeedText};
use crate::swap::{SwapError, Swaps};
use crate::swap_check::ata;

pub const WALLET_KIND: &str = "managed-wallet";
pub const POOL_KIND: &str = "privacy-pool";
pub const BOOK_KIND: &str = "privacy-book";
/// Blocks a signed transaction stays valid (Solana's MAX_PROCESSING_AGE) and one more.
pub const DEFAULT_QUIET_BLOCKS: u64 = 151;
/// What the pool key must hold to pay a transaction's fee and, at most, one new token
/// account's rent (2,039,280 lamports).
const POOL_MIN_LAMPORTS: u64 = 2_100_000;
/// A managed swap's session key's fees, on top of two token accounts' rent (as the relay gives
/// a one-shot session).
const SESSION_FEE_LAMPORTS: u64 = 50_000;
/// A managed swap's session terms expire after this; its funding is signed at once.
const MANAGED_SESSION_SECS: u64 = 600;

#[derive(Debug, thiserror::Error)]
pub enum PrivacyError {
    #[error("{0}")]
    Swap(#[from] SwapError),
    #[error("the request body is not what this step takes: {0}")]
    BadBody(&'static str),
    #[error("this wallet has an owner: the request must carry the owner's signature headers")]
    OwnerSignatureRequired,
    #[error("the owner's signature does not verify over this request")]
    OwnerSignatureInvalid,
    #[error("this owner nonce was already used")]
    Replayed,
    #[error("the owner's timestamp is outside the accepted window")]
    Stale,
    #[error("the wallet's private balance is too small for this amount")]
    InsufficientPrivate,
    #[error("the wallet's public token account holds less than this amount")]
    InsufficientPublic,
    #[error("the pool would hold {free} base units against {owed} owed")]
    ReservesShort { free: u64, owed: u128 },
    #[error("this book is not the newest this enclave sealed; read it again")]
    BookStale,
    #[error("the pool key {0} holds too little SOL for fees and token-account rent; the operator funds it")]
    PoolUnfunded(String),
    #[error("payouts start {0} blocks after the enclave's first payout request (earlier boots' payouts must settle)")]
    WarmingUp(u64),
}

impl PrivacyError {
    pub fn status_and_code(&self) -> Option<(u16, &'static str)> {
        use shared::wire::codes;
        Some(match self {
            PrivacyError::Swap(_) => return None,
            PrivacyError::BadBody(_) => (400, codes::INVALID_FIELD),
            PrivacyError::OwnerSignatureRequired => (401, codes::OWNER_SIGNATURE_REQUIRED),
            PrivacyError::OwnerSignatureInvalid => (403, codes::OWNER_SIGNATURE_INVALID),
            PrivacyError::Replayed => (409, codes::REPLAY_DETECTED),
            PrivacyError::Stale => (400, codes::STALE_TIMESTAMP),
            PrivacyError::InsufficientPrivate => (409, codes::INSUFFICIENT_PRIVATE_BALANCE),
            PrivacyError::InsufficientPublic => (409, codes::INSUFFICIENT_PUBLIC_BALANCE),
            PrivacyError::ReservesShort { .. } => (409, codes::RESERVES_SHORT),
            PrivacyError::BookStale => (409, codes::BOOK_STALE),
            PrivacyError::WarmingUp(_) => (503, codes::POOL_WARMING_UP),
            PrivacyError::PoolUnfunded(_) => (503, codes::POOL_UNFUNDED),
        })
    }
}

/// The pool pays every fee and rent of its transactions.
async fn check_pool_funded(swaps: &Swaps, pool: &Pool) -> Result<(), PrivacyError> {
    if swaps.chain().balance(&pool.address).await.map_err(chain_error)? < POOL_MIN_LAMPORTS {
        return Err(PrivacyError::PoolUnfunded(pool.address.to_string()));
    }
    Ok(())
}

fn sealed() -> PrivacyError {
    PrivacyError::Swap(SwapError::Sealed)
}

fn chain_error(e: chain::ChainError) -> PrivacyError {
    PrivacyError::Swap(SwapError::Chain(e.to_string()))
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct WalletSecret {
    seed: SeedText,
    wallet_id: String,
    owner_pubkey: Option<String>,
}

struct Wallet {
    key: SigningKey,
    address: Address,
    id: String,
    owner: Option<VerifyingKey>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PoolSecret {
    seed: SeedText,
}

struct Pool {
    key: SigningKey,
    address: Address,
}

/// The private balances of one mint: the plaintext of a `privacy-book` sealed object (only
/// this enclave reads it).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Book {
    pub mint: String,
    pub pool: String,
    pub version: u64,
    /// Wallet address → base units.
    pub balances: BTreeMap<String, u64>,
    /// Encrypt transactions already credited.
    pub credited: BTreeSet<String>,
    /// Withdrawals debited whose payout has not been seen landed: order id → its payout.
    #[serde(default)]
    pub open_orders: BTreeMap<String, OpenOrder>,
}

/// A debited withdrawal and the payout last signed for it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OpenOrder {
    pub amount: u64,
    pub destination: String,
    /// Lamports the payout also gives the destination (a shield's intermediate key's fees).
    #[serde(default)]
    pub lamports: u64,
    pub payout_signature: String,
    pub last_valid_block_height: u64,
}

/// The memo a payout carries: ties it to its order on chain, so a new payout is never signed
/// for an order one already paid.
fn order_memo(order_id: &str) -> String {
    format!("svc-withdrawal:{order_id}")
}

impl Book {
    fn owed(&self) -> u128 {
        self.balances.values().map(|v| u128::from(*v)).sum()
    }

    /// The bytes sealed (JSON).
    pub fn to_plaintext(&self) -> Result<Zeroizing<Vec<u8>>, PrivacyError> {
        Ok(Zeroizing::new(serde_json::to_vec(self).map_err(|_| sealed())?))
    }

    pub fn from_plaintext(plaintext: &[u8]) -> Result<Book, PrivacyError> {
        serde_json::from_slice(plaintext).map_err(|_| sealed())
    }
}

struct SignedPayout {
    transaction: String,
    signature: String,
    last_valid_block_height: u64,
}

/// A payout this boot signed that may not have landed yet.
struct InFlight {
    order_id: String,
    mint: Address,
    amount: u64,
    signature: String,
    last_valid_block_height: u64,
    /// The version of the book it was signed from (its debit is in later versions only).
    from_version: u64,
}

/// What one boot remembers: the newest book per mint, payouts in flight, owner nonces seen,
/// and the block height at the first payout request.
#[derive(Default)]
struct BootState {
    newest: HashMap<String, u64>,
    in_flight: Vec<InFlight>,
    /// Per mint, the newest book version a landed payout of this boot was signed from.
    landed_from: HashMap<Address, u64>,
    nonces: HashMap<(Address, String), u64>,
    first_payout_height: Option<u64>,
}

pub struct Privacy {
    quiet_blocks: u64,
    boot: Mutex<BootState>,
}

/// A debit of `amount` from `holder`'s private balance, paid from the pool to `destination`.
struct Payout {
    order_id: String,
    wallet_id: String,
    holder: Address,
    mint: Address,
    amount: u64,
    destination: Address,
    /// Lamports the payout also gives the destination (a shield's intermediate key's fees).
    lamports: u64,
}

/// The request fields a step reads from the body the caller sent.
struct Fields {
    mint: Address,
    amount: u64,
    destination: Option<Address>,
}

impl Privacy {
    pub fn new(quiet_blocks: u64) -> Self {
        Privacy { quiet_blocks, boot: Mutex::new(BootState::default()) }
    }

    fn boot(&self) -> Result<std::sync::MutexGuard<'_, BootState>, PrivacyError> {
        self.boot.lock().map_err(|_| sealed())
    }

    /// A new wallet key sealed with its id and owner.
    pub fn new_wallet(custody: &Custody, request: &NewWallet) -> Result<SealedObject, PrivacyError> {
        shared::swap::parse_uuid(&request.wallet_id).ok_or(PrivacyError::BadBody("walletId"))?;
        if let Some(owner) = &request.owner_pubkey {
            Address::parse(owner).ok_or(PrivacyError::BadBody("ownerPubkey"))?;
        }
        let key = SigningKey::generate(&mut OsRng);
        let secret = WalletSecret {
            seed: SeedText::of(&key),
            wallet_id: request.wallet_id.clone(),
            owner_pubkey: request.owner_pubkey.clone(),
        };
        seal_key(custody, WALLET_KIND, &secret, &key)
    }

    /// A new pool key.
    pub fn new_pool(custody: &Custody) -> Result<SealedObject, PrivacyError> {
        let key = SigningKey::generate(&mut OsRng);
        seal_key(custody, POOL_KIND, &PoolSecret { seed: SeedText::of(&key) }, &key)
    }

    pub async fn step(
        &self,
        swaps: &Swaps,
        custody: &Custody,
        keys: &EnclaveKeys,
        request: PrivacyRequest,
        now: u64,
    ) -> Result<PrivacyAnswer, PrivacyError> {
        match request {
            PrivacyRequest::EncryptBuild { request, pool } => {
                let (wallet, body) = self.authorized(custody, &request, "encrypt", now)?;
                encrypt_build(swaps, &wallet, &open_pool(custody, &pool)?, &read_fields(&body, false)?).await
            }
            PrivacyRequest::SwapFund { request, pool } => {
                let (wallet, body) = self.authorized(custody, &request, "swap", now)?;
                swap_fund(swaps, custody, keys, &wallet, &open_pool(custody, &pool)?, &body, now).await
            }
            PrivacyRequest::EncryptCredit { wallet, pool, book, mint, signature } => {
                let wallet = open_wallet(custody, &wallet)?;
                let pool = open_pool(custody, &pool)?;
                let mint = Address::parse(&mint).ok_or(PrivacyError::BadBody("mint"))?;
                let book = self.open_book(swaps, custody, book.as_deref(), &mint, &pool).await?;
                self.credit(swaps, custody, (&wallet.address, &wallet.address), &pool, book, &signature).await
            }
            PrivacyRequest::Withdraw { request, pool, book } => {
                let (wallet, body) = self.authorized(custody, &request, "withdraw", now)?;
                let fields = read_fields(&body, true)?;
                let pool = open_pool(custody, &pool)?;
                let book = self.open_book(swaps, custody, book.as_deref(), &fields.mint, &pool).await?;
                let mut id = [0u8; 16];
                OsRng.fill_bytes(&mut id);
                let payout = Payout {
                    order_id: shared::swap::format_uuid(&id),
                    wallet_id: wallet.id,
                    holder: wallet.address,
                    mint: fields.mint,
                    amount: fields.amount,
                    destination: fields.destination.ok_or(PrivacyError::BadBody("destinationPubkey"))?,
                    lamports: 0,
                };
                self.pay_out(swaps, custody, keys, (&pool, book), payout, now).await
            }
            PrivacyRequest::ShieldStart { request, pool, shield_id } => {
                let (wallet, body) = self.authorized(custody, &request, "shield", now)?;
                let pool = open_pool(custody, &pool)?;
                Privacy::shield_start(swaps, custody, (&wallet, &pool), &body, &shield_id).await
            }
            PrivacyRequest::ShieldCredit { hop, pool, book, signature } => {
                let (hop, pool) = (shield::open_hop(custody, &hop)?, open_pool(custody, &pool)?);
                let book = self.open_book(swaps, custody, book.as_deref(), &hop.mint, &pool).await?;
                self.shield_credit(swaps, custody, &hop, &pool, book, &signature).await
            }
            PrivacyRequest::ShieldHop { hop, pool, book } => {
                let (hop, pool) = (shield::open_hop(custody, &hop)?, open_pool(custody, &pool)?);
                let book = self.open_book(swaps, custody, Some(&book), &hop.mint, &pool).await?;
                self.shield_hop(swaps, custody, keys, (&hop, &pool), book, now).await
            }
            PrivacyRequest::ShieldDeliver { hop } => {
                shield::shield_deliver(swaps, &shield::open_hop(custody, &hop)?).await
            }
            PrivacyRequest::ShieldClose { hop, pool } => {
                shield::shield_close(swaps, &shield::open_hop(custody, &hop)?, &open_pool(custody, &pool)?).await
            }
            PrivacyRequest::Balance { wallet, book } => {
                let wallet = open_wallet(custody, &wallet)?;
                let book = open_book_blob(custody, &book)?;
                let held = book.balances.get(&wallet.address.to_string()).copied().unwrap_or(0);
                Ok(PrivacyAnswer { mint: Some(book.mint), balance: Some(held.to_string()), ..Default::default() })
            }
            PrivacyRequest::Settle { pool, book, mint, order_id } => {
                let pool = open_pool(custody, &pool)?;
                let mint = Address::parse(&mint).ok_or(PrivacyError::BadBody("mint"))?;
                let book = self.open_book(swaps, custody, Some(&book), &mint, &pool).await?;
                self.settle(swaps, custody, &pool, book, &order_id).await
            }
            PrivacyRequest::Reserves { pool, book, mint } => {
                let pool = open_pool(custody, &pool)?;
                let mint = Address::parse(&mint).ok_or(PrivacyError::BadBody("mint"))?;
                let book = self.open_book(swaps, custody, book.as_deref(), &mint, &pool).await?;
                self.reserves(swaps, keys, &pool, &book, &mint, now).await
            }
        }
    }

    /// Opens the wallet and the caller's JSON body, after checking the owner's signature over
    /// that body when the wallet has an owner.
    fn authorized(
        &self,
        custody: &Custody,
        request: &WalletRequest,
        op: &str,
        now: u64,
    ) -> Result<(Wallet, Value), PrivacyError> {
        let wallet = open_wallet(custody, &request.wallet)?;
        let body = b64::decode(&request.body).map_err(|_| PrivacyError::BadBody("body"))?;
        if let Some(owner) = &wallet.owner {
            let auth = request.auth.as_ref().ok_or(PrivacyError::OwnerSignatureRequired)?;
            let path = format!("/agents/v1/wallets/{}/{op}", wallet.id);
            self.check_owner(owner, auth, &path, &body, now)?;
        }
        let body = serde_json::from_slice(&body).map_err(|_| PrivacyError::BadBody("not a JSON object"))?;
        Ok((wallet, body))
    }

    fn check_owner(
        &self,
        owner: &VerifyingKey,
        auth: &OwnerAuth,
        path: &str,
        body: &[u8],
        now: u64,
    ) -> Result<(), PrivacyError> {
        if !privacy::nonce_ok(&auth.nonce) {
            return Err(PrivacyError::OwnerSignatureInvalid);
        }
        let signature = b64::decode_array::<64>(&auth.signature).ok_or(PrivacyError::OwnerSignatureInvalid)?;
        let message = privacy::owner_message("POST", path, body, auth.timestamp, &auth.nonce);
        owner
            .verify_strict(&message, &Signature::from_bytes(&signature))
            .map_err(|_| PrivacyError::OwnerSignatureInvalid)?;
        if auth.timestamp.abs_diff(now) > privacy::OWNER_WINDOW_SECS {
            return Err(PrivacyError::Stale);
        }
        let mut boot = self.boot()?;
        // Nonces are kept while their timestamp is inside the window; older ones are refused
        // as stale anyway.
        boot.nonces.retain(|_, at| at.abs_diff(now) <= privacy::OWNER_WINDOW_SECS);
        let owner_address = Address(owner.to_bytes());
        if boot.nonces.insert((owner_address, auth.nonce.clone()), auth.timestamp).is_some() {
            return Err(PrivacyError::Replayed);
        }
        Ok(())
    }

    /// The mint's book (a new empty one when there is none yet), bound to `mint` and `pool`,
    /// and not older than the newest this boot sealed, unless what was sealed since is safe to
    /// drop.
    async fn open_book(
        &self,
        swaps: &Swaps,
        custody: &Custody,
        blob: Option<&str>,
        mint: &Address,
        pool: &Pool,
    ) -> Result<Book, PrivacyError> {
        let newest = self.boot()?.newest.get(&mint.to_string()).copied();
        let book = match blob {
            Some(blob) => open_book_blob(custody, blob)?,
            None => Book {
                mint: mint.to_string(),
                pool: pool.address.to_string(),
                version: 0,
                balances: BTreeMap::new(),
                credited: BTreeSet::new(),
                open_orders: BTreeMap::new(),
            },
        };
        if book.mint != mint.to_string() || book.pool != pool.address.to_string() {
            return Err(sealed());
        }
        if newest.is_some_and(|n| book.version < n) {
            // A newer book was sealed and never stored (the relay failed or died before its
            // commit). Dropping it is safe once no payout signed from this book or a later one
            // landed or can still land: until then this one is refused. The next seal numbers
            // past every version sealed, so the dropped book is refused from then on.
            self.free_reserves(swaps, pool, mint).await?;
            let boot = self.boot()?;
            let blocked = boot.landed_from.get(mint).is_some_and(|v| *v >= book.version)
                || boot.in_flight.iter().any(|f| f.mint == *mint && f.from_version >= book.version);
            if blocked {
                return Err(PrivacyError::BookStale);
            }
        }
        Ok(book)
    }

    fn seal_book(&self, custody: &Custody, mut book: Book) -> Result<(SealedBook, Book), PrivacyError> {
        let mut boot = self.boot()?;
        let newest = boot.newest.get(&book.mint).copied().unwrap_or(0);
        book.version = book.version.max(newest) + 1;
        let (_, blob) = custody.seal_new(BOOK_KIND, &book.to_plaintext()?).map_err(|_| sealed())?;
        boot.newest.insert(book.mint.clone(), book.version);
        Ok((SealedBook { blob, version: book.version }, book))
    }

    /// What the pool's token account holds less payouts of this boot still in flight.
    async fn free_reserves(&self, swaps: &Swaps, pool: &Pool, mint: &Address) -> Result<u64, PrivacyError> {
        let chain = swaps.chain();
        let held = chain.token_balance(&ata(&pool.address, mint)).await.map_err(chain_error)?.unwrap_or(0);
        let flights: Vec<(String, u64, u64, u64)> = {
            let boot = self.boot()?;
            boot.in_flight
                .iter()
                .filter(|f| f.mint == *mint)
                .map(|f| (f.signature.clone(), f.amount, f.last_valid_block_height, f.from_version))
                .collect()
        };
        if flights.is_empty() {
            return Ok(held);
        }
        let signatures: Vec<String> = flights.iter().map(|f| f.0.clone()).collect();
        let statuses = chain.signature_statuses(&signatures).await.map_err(chain_error)?;
        let height = chain.block_height().await.map_err(chain_error)?;
        let mut pending = 0u64;
        let mut settled = Vec::new();
        let mut landed_from = None;
        for ((signature, amount, valid_until, from), status) in flights.into_iter().zip(statuses) {
            match status {
                // Landed (its amount already left the balance read above, or it failed).
                Some(s) => {
                    if s.err.is_none() {
                        landed_from = landed_from.max(Some(from));
                    }
                    settled.push(signature);
                }
                None if height > valid_until => settled.push(signature),
                None => pending = pending.saturating_add(amount),
            }
        }
        let mut boot = self.boot()?;
        boot.in_flight.retain(|f| !settled.contains(&f.signature));
        if let Some(from) = landed_from {
            let mark = boot.landed_from.entry(*mint).or_insert(from);
            *mark = (*mark).max(from);
        }
        Ok(held.saturating_sub(pending))
    }

    /// Credits to `holder` what a landed pool transaction moved from `from`'s token account into
    /// the pool's (an encrypt: both the wallet; a shield's deposit: the wallet to its
    /// intermediate key), once per transaction.
    async fn credit(
        &self,
        swaps: &Swaps,
        custody: &Custody,
        (from, holder): (&Address, &Address),
        pool: &Pool,
        mut book: Book,
        signature: &str,
    ) -> Result<PrivacyAnswer, PrivacyError> {
        let mint = Address::parse(&book.mint).ok_or_else(sealed)?;
        if book.credited.contains(signature) {
            return Err(PrivacyError::Swap(SwapError::NothingToDo("this transaction was already credited")));
        }
        let landed =
            swaps.chain().transaction(signature).await.map_err(chain_error)?.ok_or(SwapError::FundingNotFound)?;
        let meta = landed
            .meta
            .as_ref()
            .filter(|m| m.err.is_none())
            .ok_or(SwapError::NothingToDo("the encrypt transaction failed"))?;
        let tx =
            Transaction::parse(&landed.transaction).map_err(|_| SwapError::Chain("unparseable transaction".into()))?;
        if tx.message.fee_payer() != Some(&pool.address) {
            return Err(SwapError::NothingToDo("that transaction is not a pool transaction").into());
        }
        // What the wallet's token account lost and the pool's gained, as the chain recorded.
        let delta = |account: &Address| {
            let of = |list: &[chain::TokenBalance]| {
                list.iter()
                    .find(|b| landed.account_keys.get(b.account_index) == Some(account) && b.mint == mint)
                    .map_or(0i128, |b| i128::from(b.amount))
            };
            of(&meta.post_token_balances) - of(&meta.pre_token_balances)
        };
        let gained = delta(&ata(&pool.address, &mint));
        let lost = -delta(&ata(from, &mint));
        if gained <= 0 || lost != gained {
            return Err(
                SwapError::NothingToDo("that transaction did not move this wallet's tokens into the pool").into()
            );
        }
        let amount = u64::try_from(gained).map_err(|_| sealed())?;
        let entry = book.balances.entry(holder.to_string()).or_insert(0);
        *entry = entry.checked_add(amount).ok_or(PrivacyError::ReservesShort { free: 0, owed: u128::MAX })?;
        let balance = *entry;
        book.credited.insert(signature.to_string());
        self.prune_landed(swaps, &mut book).await?;
        let free = self.free_reserves(swaps, pool, &mint).await?;
        if book.owed() > u128::from(free) {
            return Err(PrivacyError::ReservesShort { free, owed: book.owed() });
        }
        let (sealed_book, _) = self.seal_book(custody, book)?;
        Ok(PrivacyAnswer {
            mint: Some(mint.to_string()),
            amount: Some(amount.to_string()),
            book: Some(sealed_book),
            balance: Some(balance.to_string()),
            ..Default::default()
        })
    }

    /// Debits `p.holder`'s private balance and signs the payout from the pool, with the order
    /// the enclave signs for it.
    async fn pay_out(
        &self,
        swaps: &Swaps,
        custody: &Custody,
        keys: &EnclaveKeys,
        (pool, mut book): (&Pool, Book),
        p: Payout,
        now: u64,
    ) -> Result<PrivacyAnswer, PrivacyError> {
        self.check_warm(swaps).await?;
        self.prune_landed(swaps, &mut book).await?;
        let key = p.holder.to_string();
        let held = book.balances.get(&key).copied().unwrap_or(0);
        let left = held.checked_sub(p.amount).ok_or(PrivacyError::InsufficientPrivate)?;
        if left == 0 {
            book.balances.remove(&key);
        } else {
            book.balances.insert(key, left);
        }
        let free = self.free_reserves(swaps, pool, &p.mint).await?;
        // After the payout the pool holds `free - amount`; the book must owe no more.
        if book.owed() + u128::from(p.amount) > u128::from(free) {
            return Err(PrivacyError::ReservesShort { free, owed: book.owed() + u128::from(p.amount) });
        }
        let mut open = OpenOrder {
            amount: p.amount,
            destination: p.destination.to_string(),
            lamports: p.lamports,
            payout_signature: String::new(),
            last_valid_block_height: 0,
        };
        let payout = self.sign_payout(swaps, pool, &book, &p.order_id, &open).await?;
        open.payout_signature = payout.signature.clone();
        open.last_valid_block_height = payout.last_valid_block_height;
        book.open_orders.insert(p.order_id.clone(), open);
        let (sealed_book, book) = self.seal_book(custody, book)?;
        let mut order = WithdrawalOrder {
            order_id: p.order_id,
            wallet_id: p.wallet_id,
            wallet: p.holder.to_string(),
            mint: p.mint.to_string(),
            amount: p.amount.to_string(),
            destination: p.destination.to_string(),
            book_version: book.version,
            payout_signature: payout.signature.clone(),
            issued_at: now,
            enclave_pubkey: b64::encode(keys.enclave_public()),
            signature: String::new(),
        };
        order.signature = privacy::signature_text(&keys.signer().sign(&order.message()).to_bytes());
        Ok(PrivacyAnswer {
            transaction: Some(payout.transaction),
            signature: Some(payout.signature),
            last_valid_block_height: Some(payout.last_valid_block_height),
            mint: Some(p.mint.to_string()),
            amount: Some(p.amount.to_string()),
            book: Some(sealed_book),
            balance: Some(left.to_string()),
            order: Some(order),
            ..Default::default()
        })
    }

    /// A new payout for an open order whose last one can no longer land, unless one of its
    /// payouts landed (its memo names the order), which closes the order instead.
    async fn settle(
        &self,
        swaps: &Swaps,
        custody: &Custody,
        pool: &Pool,
        mut book: Book,
        order_id: &str,
    ) -> Result<PrivacyAnswer, PrivacyError> {
        let mint = Address::parse(&book.mint).ok_or_else(sealed)?;
        let done = |why| PrivacyError::Swap(SwapError::NothingToDo(why));
        let order = book.open_orders.get(order_id).cloned().ok_or(done("no open order with this id"))?;
        self.check_warm(swaps).await?;
        let chain = swaps.chain();
        let status =
            chain.signature_statuses(std::slice::from_ref(&order.payout_signature)).await.map_err(chain_error)?;
        let height = chain.block_height().await.map_err(chain_error)?;
        let live_here =
            self.boot()?.in_flight.iter().any(|f| f.order_id == order_id && height <= f.last_valid_block_height);
        let destination = Address::parse(&order.destination).ok_or_else(sealed)?;
        let confirmed =
            |s: &chain::SignatureStatus| s.confirmation_status.is_some_and(|c| c != chain::Commitment::Processed);
        let landed = match status.first().cloned().flatten() {
            Some(s) if s.err.is_none() && confirmed(&s) => true,
            Some(s) if s.err.is_none() => return Err(done("its payout can still land")),
            // Failed on chain; an earlier payout of the order may still have paid it.
            Some(_) => self.order_paid(swaps, &destination, &mint, order_id).await?,
            None if height <= order.last_valid_block_height || live_here => {
                return Err(done("its payout can still land"));
            }
            None => self.order_paid(swaps, &destination, &mint, order_id).await?,
        };
        let answer = if landed {
            book.open_orders.remove(order_id);
            PrivacyAnswer::default()
        } else {
            let payout = self.sign_payout(swaps, pool, &book, order_id, &order).await?;
            book.open_orders.insert(
                order_id.to_string(),
                OpenOrder {
                    payout_signature: payout.signature.clone(),
                    last_valid_block_height: payout.last_valid_block_height,
                    ..order.clone()
                },
            );
            PrivacyAnswer {
                transaction: Some(payout.transaction),
                signature: Some(payout.signature),
                last_valid_block_height: Some(payout.last_valid_block_height),
                ..Default::default()
            }
        };
        let (sealed_book, _) = self.seal_book(custody, book)?;
        Ok(PrivacyAnswer {
            mint: Some(mint.to_string()),
            amount: Some(order.amount.to_string()),
            book: Some(sealed_book),
            ..answer
        })
    }

    /// Whether a landed transaction into the destination's token account carries the order's
    /// memo (the newest 100 are read: a destination is fresh, so its history is short).
    async fn order_paid(
        &self,
        swaps: &Swaps,
        destination: &Address,
        mint: &Address,
        order_id: &str,
    ) -> Result<bool, PrivacyError> {
        let chain = swaps.chain();
        let memo = order_memo(order_id);
        for info in chain.signatures_for_address(&ata(destination, mint), None, 100).await.map_err(chain_error)? {
            if info.err.is_some() {
                continue;
            }
            let Some(landed) = chain.transaction(&info.signature).await.map_err(chain_error)? else { continue };
            let Ok(tx) = Transaction::parse(&landed.transaction) else { continue };
            let has_memo = tx.message.instructions().iter().any(|ix| {
                tx.message.program_id(ix) == Some(&shared::solana::programs::MEMO_PROGRAM) && ix.data == memo.as_bytes()
            });
            if has_memo {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Drops open orders whose payout landed (one batched status read).
    async fn prune_landed(&self, swaps: &Swaps, book: &mut Book) -> Result<(), PrivacyError> {
        if book.open_orders.is_empty() {
            return Ok(());
        }
        let ids: Vec<String> = book.open_orders.keys().take(256).cloned().collect();
        let signatures: Vec<String> = ids.iter().map(|id| book.open_orders[id].payout_signature.clone()).collect();
        let statuses = swaps.chain().signature_statuses(&signatures).await.map_err(chain_error)?;
        for (id, status) in ids.iter().zip(statuses) {
            let landed = status.is_some_and(|s| {
                s.err.is_none() && s.confirmation_status.is_some_and(|c| c != chain::Commitment::Processed)
            });
            if landed {
                book.open_orders.remove(id);
            }
        }
        Ok(())
    }

    /// Payouts start `quiet_blocks` after this boot's first payout request (module docs).
    async fn check_warm(&self, swaps: &Swaps) -> Result<(), PrivacyError> {
        let height = swaps.chain().block_height().await.map_err(chain_error)?;
        let first = *self.boot()?.first_payout_height.get_or_insert(height);
        if height < first + self.quiet_blocks {
            return Err(PrivacyError::WarmingUp(first + self.quiet_blocks - height));
        }
        Ok(())
    }

    /// The payout of `amount` from the pool to `destination`, carrying the order's memo; the
    /// pool pays the fee and, when needed, the destination's token account rent. Counted in
    /// flight from here on.
    async fn sign_payout(
        &self,
        swaps: &Swaps,
        pool: &Pool,
        book: &Book,
        order_id: &str,
        order: &OpenOrder,
    ) -> Result<SignedPayout, PrivacyError> {
        check_pool_funded(swaps, pool).await?;
        let mint = &Address::parse(&book.mint).ok_or_else(sealed)?;
        let destination = &Address::parse(&order.destination).ok_or_else(sealed)?;
        let amount = order.amount;
        let chain = swaps.chain();
        let decimals = swaps.decimals(mint).await?;
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
        if order.lamports > 0 {
            ixs.push(system::transfer(&pool.address, destination, order.lamports));
        }
        let blockhash = chain.latest_blockhash().await.map_err(chain_error)?;
        let message = Message::compile(&pool.address, &ixs, blockhash.blockhash).map_err(|_| sealed())?;
        let mut tx = Transaction::new_unsigned(message);
        tx.sign(&[&pool.key]).map_err(|_| sealed())?;
        let signature = tx.id();
        self.boot()?.in_flight.push(InFlight {
            order_id: order_id.to_string(),
            from_version: book.version,
            mint: *mint,
            amount,
            signature: signature.clone(),
            last_valid_block_height: blockhash.last_valid_block_height,
        });
        Ok(SignedPayout {
            transaction: b64::encode(tx.serialize()),
            signature,
            last_valid_block_height: blockhash.last_valid_block_height,
        })
    }

    async fn reserves(
        &self,
        swaps: &Swaps,
        keys: &EnclaveKeys,
        pool: &Pool,
        book: &Book,
        mint: &Address,
        now: u64,
    ) -> Result<PrivacyAnswer, PrivacyError> {
        let chain = swaps.chain();
        let pool_account = ata(&pool.address, mint);
        let height = chain.block_height().await.map_err(chain_error)?;
        let held = chain.token_balance(&pool_account).await.map_err(chain_error)?.unwrap_or(0);
        let mut statement = ReservesStatement {
            mint: mint.to_string(),
            pool: pool.address.to_string(),
            pool_token_account: pool_account.to_string(),
            pool_balance: held.to_string(),
            liabilities: book.owed().to_string(),
            wallets: book.balances.values().filter(|v| **v > 0).count() as u64,
            book_version: book.version,
            block_height: height,
            issued_at: now,
            enclave_pubkey: b64::encode(keys.enclave_public()),
            signature: String::new(),
        };
        statement.signature = privacy::signature_text(&keys.signer().sign(&statement.message()).to_bytes());
        Ok(PrivacyAnswer { reserves: Some(statement), ..Default::default() })
    }
}

/// The encrypt transaction: the pool pays the fee and creates its token account when needed;
/// the wallet's whole `amount` moves into it. Signed by both keys.
async fn encrypt_build(
    swaps: &Swaps,
    wallet: &Wallet,
    pool: &Pool,
    fields: &Fields,
) -> Result<PrivacyAnswer, PrivacyError> {
    check_pool_funded(swaps, pool).await?;
    let chain = swaps.chain();
    let source = ata(&wallet.address, &fields.mint);
    let held = chain.token_balance(&source).await.map_err(chain_error)?.unwrap_or(0);
    if held < fields.amount {
        return Err(PrivacyError::InsufficientPublic);
    }
    let decimals = swaps.decimals(&fields.mint).await?;
    let ixs = [
        associated_token::create_idempotent(&pool.address, &pool.address, &fields.mint, &TOKEN_PROGRAM),
        token::transfer_checked(
            &source,
            &fields.mint,
            &ata(&pool.address, &fields.mint),
            &wallet.address,
            fields.amount,
            decimals,
        ),
    ];
    sign_from_wallet(swaps, wallet, pool, &ixs, &fields.mint, fields.amount).await
}

/// A managed swap: a swap session (`crate::swap`) whose terms are the request's, with the
/// wallet as its payer (every refund returns to the wallet), and its funding signed by the
/// wallet (the tokens) and the pool (the fee, the session's input account and its lamports,
/// whose remainder the session's close gives the wallet). The least output is the router's
/// quote now less the request's `slippageBps`, so a relay cannot loosen it.
async fn swap_fund(
    swaps: &Swaps,
    custody: &Custody,
    keys: &EnclaveKeys,
    wallet: &Wallet,
    pool: &Pool,
    body: &Value,
    now: u64,
) -> Result<PrivacyAnswer, PrivacyError> {
    let (from_mint, to_mint) = (address_field(body, "fromMint")?, address_field(body, "toMint")?);
    let (amount, destination) = (amount_field(body)?, address_field(body, "destinationPubkey")?);
    let slippage = match body.get("slippageBps").filter(|v| !v.is_null()) {
        None => crate::swap::SLIPPAGE_BPS,
        Some(v) => v.as_u64().filter(|b| *b <= 10_000).ok_or(PrivacyError::BadBody("slippageBps"))? as u16,
    };
    if destination == wallet.address || from_mint == to_mint {
        return Err(PrivacyError::BadBody("destinationPubkey"));
    }
    let chain = swaps.chain();
    let source = ata(&wallet.address, &from_mint);
    if chain.token_balance(&source).await.map_err(chain_error)?.unwrap_or(0) < amount {
        return Err(PrivacyError::InsufficientPublic);
    }
    let rent = chain.minimum_balance_for_rent_exemption(token::ACCOUNT_LEN).await.map_err(chain_error)?;
    let lamports = 2 * rent + SESSION_FEE_LAMPORTS;
    if chain.balance(&pool.address).await.map_err(chain_error)? < lamports + POOL_MIN_LAMPORTS {
        return Err(PrivacyError::PoolUnfunded(pool.address.to_string()));
    }
    let min_out = swaps.least_out(&from_mint, &to_mint, amount, slippage).await?;
    if min_out == 0 {
        return Err(PrivacyError::BadBody("amount"));
    }
    let mut id = [0u8; 16];
    OsRng.fill_bytes(&mut id);
    let terms = SessionTerms {
        session_id: shared::swap::format_uuid(&id),
        payer: wallet.address.to_string(),
        from_mint: from_mint.to_string(),
        to_mint: to_mint.to_string(),
        amount: amount.to_string(),
        destination: destination.to_string(),
        min_out: min_out.to_string(),
        expires_at: now + MANAGED_SESSION_SECS,
    };
    let opened = swaps.open_session(custody, keys, terms)?;
    let session_key = Address::parse(&opened.commitment.ephemeral_pubkey).ok_or_else(sealed)?;
    let decimals = swaps.decimals(&from_mint).await?;
    let ixs = [
        associated_token::create_idempotent(&pool.address, &session_key, &from_mint, &TOKEN_PROGRAM),
        token::transfer_checked(&source, &from_mint, &ata(&session_key, &from_mint), &wallet.address, amount, decimals),
        system::transfer(&pool.address, &session_key, lamports),
        memo::memo(shared::swap::funding::memo_text(&id).as_bytes(), &[]),
    ];
    let funding = sign_from_wallet(swaps, wallet, pool, &ixs, &from_mint, amount).await?;
    Ok(PrivacyAnswer { session: Some(opened), ..funding })
}

/// A transaction of the pool (fee payer) and the wallet, signed by both.
async fn sign_from_wallet(
    swaps: &Swaps,
    wallet: &Wallet,
    pool: &Pool,
    ixs: &[shared::solana::Instruction],
    mint: &Address,
    amount: u64,
) -> Result<PrivacyAnswer, PrivacyError> {
    let blockhash = swaps.chain().latest_blockhash().await.map_err(chain_error)?;
    let message = Message::compile(&pool.address, ixs, blockhash.blockhash).map_err(|_| sealed())?;
    let mut tx = Transaction::new_unsigned(message);
    tx.sign(&[&pool.key, &wallet.key]).map_err(|_| sealed())?;
    Ok(PrivacyAnswer {
        transaction: Some(b64::encode(tx.serialize())),
        signature: Some(tx.id()),
        last_valid_block_height: Some(blockhash.last_valid_block_height),
        mint: Some(mint.to_string()),
        amount: Some(amount.to_string()),
        ..Default::default()
    })
}

/// `{mint, amount}` (and `destinationPubkey` for a withdrawal) from the caller's JSON body;
/// `amount` is base units as a string.
fn read_fields(body: &Value, with_destination: bool) -> Result<Fields, PrivacyError> {
    let mint = address_field(body, "mint")?;
    let amount = amount_field(body)?;
    let destination = match with_destination {
        true => Some(address_field(body, "destinationPubkey")?),
        false => None,
    };
    Ok(Fields { mint, amount, destination })
}

fn address_field(body: &Value, name: &'static str) -> Result<Address, PrivacyError> {
    body.get(name).and_then(Value::as_str).and_then(Address::parse).ok_or(PrivacyError::BadBody(name))
}

fn amount_field(body: &Value) -> Result<u64, PrivacyError> {
    let text = body.get("amount").and_then(Value::as_str);
    text.and_then(shared::swap::parse_amount).filter(|a| *a > 0).ok_or(PrivacyError::BadBody("amount"))
}

fn seal_key<T: Serialize>(
    custody: &Custody,
    kind: &str,
    secret: &T,
    key: &SigningKey,
) -> Result<SealedObject, PrivacyError> {
    let plaintext = Zeroizing::new(serde_json::to_vec(secret).map_err(|_| sealed())?);
    let (id, blob) = custody.seal_new(kind, &plaintext).map_err(|_| sealed())?;
    Ok(SealedObject {
        id: hex::encode(id),
        kind: kind.into(),
        version: 1,
        blob,
        public_key: Some(Address(key.verifying_key().to_bytes()).to_string()),
    })
}

fn open_wallet(custody: &Custody, blob: &str) -> Result<Wallet, PrivacyError> {
    let (_, plaintext) = custody.open_kind(blob, WALLET_KIND).map_err(|_| sealed())?;
    let secret: WalletSecret = serde_json::from_slice(&plaintext).map_err(|_| sealed())?;
    let key = secret.seed.key().ok_or_else(sealed)?;
    let owner = match &secret.owner_pubkey {
        Some(text) => {
            let bytes = Address::parse(text).ok_or_else(sealed)?.0;
            Some(VerifyingKey::from_bytes(&bytes).map_err(|_| sealed())?)
        }
        None => None,
    };
    Ok(Wallet { address: Address(key.verifying_key().to_bytes()), key, id: secret.wallet_id, owner })
}

fn open_pool(custody: &Custody, blob: &str) -> Result<Pool, PrivacyError> {
    let (_, plaintext) = custody.open_kind(blob, POOL_KIND).map_err(|_| sealed())?;
    let secret: PoolSecret = serde_json::from_slice(&plaintext).map_err(|_| sealed())?;
    let key = secret.seed.key().ok_or_else(sealed)?;
    Ok(Pool { address: Address(key.verifying_key().to_bytes()), key })
}

fn open_book_blob(custody: &Custody, blob: &str) -> Result<Book, PrivacyError> {
    let (_, plaintext) = custody.open_kind(blob, BOOK_KIND).map_err(|_| sealed())?;
    Book::from_plaintext(&plaintext)
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
    fn owner_checks_refuse_wrong_replayed_and_stale() {
        let pool = Privacy::new(0);
        let owner = SigningKey::from_bytes(&[9; 32]);
        let path = "/agents/v1/wallets/w/withdraw";
        let body = br#"{"mint":"m"}"#;
        let now = 1_800_000_000;
        let auth = |ts: u64, nonce: &str, key: &SigningKey, body: &[u8]| OwnerAuth {
            timestamp: ts,
            nonce: nonce.into(),
            signature: b64::encode(key.sign(&shared::privacy::owner_message("POST", path, body, ts, nonce)).to_bytes()),
        };
        let vk = owner.verifying_key();
        assert!(pool.check_owner(&vk, &auth(now, "a", &owner, body), path, body, now).is_ok());
        assert!(matches!(
            pool.check_owner(&vk, &auth(now, "a", &owner, body), path, body, now),
            Err(PrivacyError::Replayed)
        ));
        let other = SigningKey::from_bytes(&[8; 32]);
        assert!(matches!(
            pool.check_owner(&vk, &auth(now, "b", &other, body), path, body, now),
            Err(PrivacyError::OwnerSignatureInvalid)
        ));
        // Signed over one body, presented with another (a relay changing a field).
        assert!(matches!(
            pool.check_owner(&vk, &auth(now, "c", &owner, body), path, br#"{"mint":"n"}"#, now),
            Err(PrivacyError::OwnerSignatureInvalid)
        ));
        let old = now - privacy::OWNER_WINDOW_SECS - 1;
        assert!(matches!(
            pool.check_owner(&vk, &auth(old, "d", &owner, body), path, body, now),
            Err(PrivacyError::Stale)
        ));
    }
}
