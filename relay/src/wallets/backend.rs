//! The privacy back end of managed wallets behind one trait (DESIGN §11). The first back end is
//! the enclave pool: a pool key and per-mint books of private balances, all sealed by the
//! enclave; the relay stores them and cannot read them. A back end of another shape (an MPC or
//! ZK pool) would implement the same operations.

use serde_json::json;
use shared::address::Address;
use shared::privacy::{
    BalanceStatement, PrivacyAnswer, PrivacyRequest, ReservesStatement, SealedBook, SignedTx, WalletRequest,
    WithdrawalOrder,
};
use shared::swap::OpenedSession;
use shared::wire::SealedObject;
use shared::wire::codes::EnclaveCode;
use sqlx::Row;

use super::records::{self, Operation, Wallet};
use super::steps::Intent;
use crate::enclaves::EnclavePool;
use crate::enclaves::objects::{self, ask};
use crate::http::error::RelayError;
use crate::store::{Store, StoreError, is_unique_violation};

/// A withdrawal the back end debited, recorded with its payout before anything sends it.
#[derive(Debug, Clone)]
pub struct Withdrawal {
    pub order: WithdrawalOrder,
    pub payout: SignedTx,
}

/// The back end's operations. Each moves or reads one wallet's private balance of one mint;
/// the caller's exact body and owner signature go through untouched.
#[allow(async_fn_in_trait)] // Static dispatch only: one back end per relay.
pub trait PrivacyBackend {
    /// The transaction that moves `{mint, amount}` from the wallet's public token account into
    /// the back end, and the request's id; the balance is credited by
    /// [`PrivacyBackend::credit`] once it landed.
    async fn encrypt(&self, request: WalletRequest) -> Result<(String, SignedTx), RelayError>;
    /// A managed swap (`{fromMint, toMint, amount, destinationPubkey, slippageBps}`): the swap
    /// session the back end opened with the request's terms, the wallet as its payer, and its
    /// funding from the wallet, signed.
    async fn swap(&self, request: WalletRequest) -> Result<(OpenedSession, SignedTx), RelayError>;
    /// A shield (`{mint, amount, destinationPubkey}`): its id (a uuid, from the owner's nonce
    /// when signed), its intermediate key (a sealed object, its address public) and the deposit
    /// from the wallet, signed.
    async fn shield(&self, request: WalletRequest) -> Result<(String, SealedObject, SignedTx), RelayError>;
    /// Credits a shield's landed deposit to its intermediate key; false when it was already.
    async fn shield_credit(&self, hop: &SealedObject, mint: &Address, signature: &str) -> Result<bool, RelayError>;
    /// Debits the intermediate key and records the payout to it (the withdrawal row whose order
    /// id is the shield's) before anything sends it; false when it was recorded already.
    async fn shield_hop(&self, wallet: &Wallet, hop: &SealedObject, mint: &Address) -> Result<bool, RelayError>;
    /// The intermediate key's delivery to the destination, or (`close`) its close; None when
    /// it was done already.
    async fn shield_leg(&self, hop: &SealedObject, close: bool) -> Result<Option<SignedTx>, RelayError>;
    /// Credits a landed encrypt transaction, writing the operation's audit entry (`details`)
    /// with it; the wallet's new private balance, or None when it was credited already.
    async fn credit(
        &self,
        wallet: &Wallet,
        mint: &Address,
        signature: &str,
        details: serde_json::Value,
    ) -> Result<Option<u64>, RelayError>;
    /// Debits `{mint, amount, destinationPubkey}` and records the payout (and the operation's
    /// audit entry and event, and under `kept` = (nonce, body sha256) the answer) before
    /// returning it to be sent. The same owner request again gets the same order.
    async fn withdraw(
        &self,
        wallet: &Wallet,
        mint: &Address,
        request: WalletRequest,
        kept: Option<(String, String)>,
    ) -> Result<Withdrawal, RelayError>;
    /// A payout that can no longer land (failed on chain, or expired unseen): a new one for the
    /// same order, recorded on its row before it is sent; None when the order turned out paid
    /// (the row is then marked landed).
    async fn repay(&self, mint: &Address, order_id: &str) -> Result<Option<SignedTx>, RelayError>;
    /// The wallet's private balance of each mint (0 where it has none), signed by the enclave;
    /// None where the enclave did not answer.
    async fn private_balances(
        &self,
        wallet: &Wallet,
        mints: &[Address],
    ) -> Result<Vec<Option<BalanceStatement>>, RelayError>;
    /// A signed statement of what the back end holds and owes in `mint`.
    async fn reserves(&self, mint: &Address) -> Result<ReservesStatement, RelayError>;
}

/// The enclave pool.
pub struct EnclavePoolBackend<'a> {
    pub store: &'a Store,
    pub enclaves: &'a EnclavePool,
    /// Serializes this relay's book steps (other relays are kept out by compare and set, and
    /// every enclave by the witness).
    pub books_lock: &'a tokio::sync::Mutex<()>,
    /// Wakes the key holder's long poll and the steps waiting for its answers.
    pub witness: Option<&'a super::witness::WitnessQueue>,
    /// How long a step waits for the witness's answer.
    pub witness_wait: std::time::Duration,
}

impl EnclavePoolBackend<'_> {
    pub(super) async fn step(&self, request: &PrivacyRequest) -> Result<PrivacyAnswer, RelayError> {
        ask(self.enclaves, "/privacy/step", request).await
    }

    async fn blob(&self, object_id: &str) -> Result<String, RelayError> {
        Ok(objects::load_named(self.store, object_id).await?.blob)
    }

    /// The pool key's sealed object, made by the enclave the first time any relay asks.
    pub async fn pool(&self) -> Result<SealedObject, RelayError> {
        if let Some(id) = pool_object_id(self.store).await? {
            return objects::load_named(self.store, &id).await;
        }
        let object: SealedObject = ask(self.enclaves, "/privacy/pool", &json!({})).await?;
        let address = object.public_key.clone().ok_or(RelayError::EnclaveAnswer("a pool key without its address"))?;
        objects::insert(self.store, &object, crate::unix_now()).await?;
        let inserted =
            sqlx::query("INSERT INTO privacy_pool (id, object_id, address, created_at) VALUES (1, $1, $2, $3)")
                .bind(&object.id)
                .bind(&address)
                .bind(crate::unix_now())
                .execute(self.store.pool())
                .await;
        match inserted.map_err(StoreError::from) {
            Ok(_) => Ok(object),
            // Another relay made one first: use it (the object made here is never used).
            Err(e) if is_unique_violation(&e) => {
                let id = pool_object_id(self.store)
                    .await?
                    .ok_or(RelayError::Internal("the pool's sealed object is not recorded"))?;
                objects::load_named(self.store, &id).await
            }
            Err(e) => Err(e.into()),
        }
    }

    /// What the relay does with an acknowledged step's outputs, in the database transaction
    /// that stores its book as the head (`steps::finish`).
    pub(super) async fn carry_out(
        &self,
        tx: &mut sqlx::Transaction<'static, sqlx::Any>,
        intent: &Intent,
        released: &PrivacyAnswer,
    ) -> Result<(), RelayError> {
        match intent {
            Intent::ShieldCredit => {}
            Intent::Credit { wallet_id, details } => {
                let op = Operation { kind: "encrypt", event_type: "wallet.encrypt", data: details.clone() };
                records::write_operation(tx, wallet_id, &op, super::now_ms()).await?;
            }
            Intent::ShieldHop { wallet_id } => {
                let (order, payout) = released_order(released, wallet_id)?;
                insert_payout(tx, wallet_id, &order, &payout).await?;
            }
            Intent::Withdraw { wallet_id, nonce, body_sha256 } => {
                let (order, payout) = released_order(released, wallet_id)?;
                insert_payout(tx, wallet_id, &order, &payout).await?;
                let data = json!({"walletId": wallet_id, "orderId": order.order_id, "mint": order.mint,
                                  "amount": order.amount, "destinationPubkey": order.destination,
                                  "queueSignature": order.signature, "callbackSignature": order.payout_signature});
                let op = Operation { kind: "withdraw", event_type: "wallet.withdraw", data };
                records::write_operation(tx, wallet_id, &op, super::now_ms()).await?;
                if let (Some(nonce), Some(body_sha256)) = (nonce, body_sha256) {
                    let answer = json!({"queueSignature": order.signature, "callbackSignature": order.payout_signature,
                                        "order": order});
                    let request = super::requests::Kept {
                        wallet_id,
                        nonce,
                        operation: "withdraw",
                        body_sha256,
                        request_id: &order.order_id,
                        answer: &answer,
                    };
                    request.insert(tx).await?;
                }
            }
            Intent::Settle { order_id } => {
                let now = crate::unix_now();
                match repaid(released)? {
                    Some(p) => sqlx::query(
                        "UPDATE wallet_withdrawals SET payout_tx = $1, payout_sig = $2, last_valid_height = $3, \
                         state = 'pending', updated_at = $4 WHERE order_id = $5",
                    )
                    .bind(p.transaction)
                    .bind(p.signature)
                    .bind(p.last_valid_block_height as i64)
                    .bind(now)
                    .bind(order_id),
                    None => sqlx::query(
                        "UPDATE wallet_withdrawals SET state = 'landed', updated_at = $1 WHERE order_id = $2",
                    )
                    .bind(now)
                    .bind(order_id),
                }
                .execute(&mut **tx)
                .await
                .map_err(StoreError::from)?;
            }
        }
        Ok(())
    }
}

/// The order an acknowledged payout step released, checked (the enclave's signature, this
/// wallet), and its current payout (a replacement's, once the first could not land).
fn released_order(released: &PrivacyAnswer, wallet_id: &str) -> Result<(WithdrawalOrder, SignedTx), RelayError> {
    let PrivacyAnswer::Payout { order, payout, .. } = released else {
        return Err(RelayError::EnclaveAnswer("a payout step without its order"));
    };
    if order.verify().is_err() || order.wallet_id != wallet_id {
        return Err(RelayError::EnclaveAnswer("the enclave's order is not this wallet's"));
    }
    Ok((order.clone(), payout.clone()))
}

/// What an acknowledged `settle` released: the order's new payout, or None when a payout of
/// it had landed.
fn repaid(released: &PrivacyAnswer) -> Result<Option<SignedTx>, RelayError> {
    match released {
        PrivacyAnswer::Repaid { payout } => Ok(Some(payout.clone())),
        PrivacyAnswer::Paid => Ok(None),
        _ => Err(RelayError::EnclaveAnswer("a settle step without its outcome")),
    }
}

/// Whether a refusal is the enclave's `nothing_to_do` with a message containing `what`.
fn nothing_to_do(e: &RelayError, what: &str) -> bool {
    matches!(e, RelayError::Enclave { code: Some(EnclaveCode::NothingToDo), message, .. } if message.contains(what))
}

impl PrivacyBackend for EnclavePoolBackend<'_> {
    async fn encrypt(&self, request: WalletRequest) -> Result<(String, SignedTx), RelayError> {
        let pool = self.pool().await?.blob;
        match self.step(&PrivacyRequest::EncryptBuild { request, pool }).await? {
            PrivacyAnswer::Encrypt { request_id, deposit } => Ok((request_id, deposit)),
            _ => Err(RelayError::EnclaveAnswer("an encrypt answer without its transaction")),
        }
    }

    async fn shield(&self, request: WalletRequest) -> Result<(String, SealedObject, SignedTx), RelayError> {
        let pool = self.pool().await?.blob;
        match self.step(&PrivacyRequest::ShieldStart { request, pool }).await? {
            PrivacyAnswer::ShieldStarted { request_id, hop, deposit } => Ok((request_id, hop, deposit)),
            _ => Err(RelayError::EnclaveAnswer("a shield answer without its intermediate key")),
        }
    }

    async fn shield_credit(&self, hop: &SealedObject, mint: &Address, signature: &str) -> Result<bool, RelayError> {
        let pool = self.pool().await?.blob;
        let request_for = |book| PrivacyRequest::ShieldCredit {
            hop: hop.blob.clone(),
            pool: pool.clone(),
            book,
            signature: signature.to_string(),
        };
        match self.change_book(mint, request_for, Intent::ShieldCredit).await {
            Ok(_) => Ok(true),
            Err(e) if nothing_to_do(&e, "already credited") => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn shield_hop(&self, wallet: &Wallet, hop: &SealedObject, mint: &Address) -> Result<bool, RelayError> {
        let pool = self.pool().await?.blob;
        let request_for = |book: Option<String>| PrivacyRequest::ShieldHop {
            hop: hop.blob.clone(),
            pool: pool.clone(),
            book: book.unwrap_or_default(),
        };
        match self.change_book(mint, request_for, Intent::ShieldHop { wallet_id: wallet.id.clone() }).await {
            Ok(_) => {
                crate::failpoint::hit("privacy:hop:recorded");
                Ok(true)
            }
            Err(e) if nothing_to_do(&e, "already signed") => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn shield_leg(&self, hop: &SealedObject, close: bool) -> Result<Option<SignedTx>, RelayError> {
        let blob = hop.blob.clone();
        let request = match close {
            true => PrivacyRequest::ShieldClose { hop: blob, pool: self.pool().await?.blob },
            false => PrivacyRequest::ShieldDeliver { hop: blob },
        };
        match self.step(&request).await {
            Ok(PrivacyAnswer::HopSigned { tx }) => Ok(Some(tx)),
            Ok(_) => Err(RelayError::EnclaveAnswer("a shield leg without its transaction")),
            Err(RelayError::Enclave { code: Some(EnclaveCode::NothingToDo), .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn swap(&self, request: WalletRequest) -> Result<(OpenedSession, SignedTx), RelayError> {
        let pool = self.pool().await?.blob;
        match self.step(&PrivacyRequest::SwapFund { request, pool }).await? {
            PrivacyAnswer::SwapFunded { session, funding } => Ok((session, funding)),
            _ => Err(RelayError::EnclaveAnswer("a managed swap answer without its session")),
        }
    }

    async fn credit(
        &self,
        wallet: &Wallet,
        mint: &Address,
        signature: &str,
        details: serde_json::Value,
    ) -> Result<Option<u64>, RelayError> {
        let pool = self.pool().await?.blob;
        let wallet_blob = self.blob(&wallet.object_id).await?;
        let request_for = |book| PrivacyRequest::EncryptCredit {
            wallet: wallet_blob.clone(),
            pool: pool.clone(),
            book,
            mint: mint.to_string(),
            signature: signature.to_string(),
        };
        let intent = Intent::Credit { wallet_id: wallet.id.clone(), details };
        match self.change_book(mint, request_for, intent).await {
            Ok(answer) => {
                crate::failpoint::hit("privacy:credit:stored");
                match answer {
                    PrivacyAnswer::Credited { balance, .. } => Ok(Some(balance.0)),
                    _ => Err(RelayError::EnclaveAnswer("a credit answer without its balance")),
                }
            }
            // Credited by an earlier attempt whose answer this relay did not see through.
            Err(e) if nothing_to_do(&e, "already credited") => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn withdraw(
        &self,
        wallet: &Wallet,
        mint: &Address,
        request: WalletRequest,
        kept: Option<(String, String)>,
    ) -> Result<Withdrawal, RelayError> {
        let pool = self.pool().await?.blob;
        let request_for = |book| PrivacyRequest::Withdraw { request: request.clone(), pool: pool.clone(), book };
        let (nonce, body_sha256) = kept.unzip();
        let intent = Intent::Withdraw { wallet_id: wallet.id.clone(), nonce, body_sha256 };
        let answer = self.change_book(mint, request_for, intent).await?;
        let (order, payout) = released_order(&answer, &wallet.id)?;
        Ok(Withdrawal { order, payout })
    }

    async fn repay(&self, mint: &Address, order_id: &str) -> Result<Option<SignedTx>, RelayError> {
        let pool = self.pool().await?.blob;
        let request_for = |book: Option<String>| PrivacyRequest::Settle {
            pool: pool.clone(),
            book: book.unwrap_or_default(),
            mint: mint.to_string(),
            order_id: order_id.to_string(),
        };
        let answer = self.change_book(mint, request_for, Intent::Settle { order_id: order_id.to_string() }).await?;
        repaid(&answer)
    }

    async fn private_balances(
        &self,
        wallet: &Wallet,
        mints: &[Address],
    ) -> Result<Vec<Option<BalanceStatement>>, RelayError> {
        let wallet_blob = self.blob(&wallet.object_id).await?;
        let mut balances = Vec::with_capacity(mints.len());
        for mint in mints {
            let request = |book| PrivacyRequest::Balance { wallet: wallet_blob.clone(), book, mint: mint.to_string() };
            let statement = match self.read_book(mint, request).await {
                Ok(PrivacyAnswer::Balance { statement }) => Some(statement),
                _ => None,
            };
            let ours = |s: &BalanceStatement| s.verify().is_ok() && s.wallet == wallet.address && s.mint == *mint;
            balances.push(statement.filter(ours));
        }
        Ok(balances)
    }

    async fn reserves(&self, mint: &Address) -> Result<ReservesStatement, RelayError> {
        let pool = self.pool().await?.blob;
        let request = |book| PrivacyRequest::Reserves { pool: pool.clone(), book, mint: mint.to_string() };
        let PrivacyAnswer::Reserves { statement } = self.read_book(mint, request).await? else {
            return Err(RelayError::EnclaveAnswer("a reserves answer without its statement"));
        };
        if statement.verify().is_err() || statement.mint != *mint {
            return Err(RelayError::EnclaveAnswer("the enclave's statement of reserves does not verify"));
        }
        Ok(statement)
    }
}

/// A debit's order and its payout, pending, in the caller's transaction (the one that stores
/// the book with the debit).
async fn insert_payout(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    wallet_id: &str,
    order: &WithdrawalOrder,
    payout: &SignedTx,
) -> Result<(), RelayError> {
    sqlx::query(
        "INSERT INTO wallet_withdrawals (order_id, wallet_id, mint, amount, destination, order_json, payout_tx, \
         payout_sig, last_valid_height, state, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, $10)",
    )
    .bind(&order.order_id)
    .bind(wallet_id)
    .bind(order.mint.to_string())
    .bind(order.amount.to_string())
    .bind(order.destination.to_string())
    .bind(serde_json::to_string(order).map_err(|_| RelayError::Internal("a value did not serialize"))?)
    .bind(&payout.transaction)
    .bind(&payout.signature)
    .bind(payout.last_valid_block_height as i64)
    .bind(crate::unix_now())
    .execute(&mut **tx)
    .await
    .map_err(StoreError::from)?;
    Ok(())
}

async fn pool_object_id(store: &Store) -> Result<Option<String>, RelayError> {
    let row = sqlx::query("SELECT object_id FROM privacy_pool WHERE id = 1")
        .fetch_optional(store.pool())
        .await
        .map_err(StoreError::from)?;
    Ok(row.map(|r| r.try_get::<String, _>("object_id")).transpose().map_err(StoreError::from)?)
}

/// The pool's address, once made.
pub async fn pool_address(store: &Store) -> Result<Option<String>, RelayError> {
    let row = sqlx::query("SELECT address FROM privacy_pool WHERE id = 1")
        .fetch_optional(store.pool())
        .await
        .map_err(StoreError::from)?;
    Ok(row.map(|r| r.try_get::<String, _>("address")).transpose().map_err(StoreError::from)?)
}

/// The mint's stored book, if any.
pub async fn book(store: &Store, mint: &Address) -> Result<Option<SealedBook>, RelayError> {
    let row = sqlx::query("SELECT version, blob FROM privacy_books WHERE mint = $1")
        .bind(mint.to_string())
        .fetch_optional(store.pool())
        .await
        .map_err(StoreError::from)?;
    let Some(row) = row else { return Ok(None) };
    let version: i64 = row.try_get("version").map_err(StoreError::from)?;
    let blob: String = row.try_get("blob").map_err(StoreError::from)?;
    Ok(Some(SealedBook { blob, version: version as u64 }))
}
