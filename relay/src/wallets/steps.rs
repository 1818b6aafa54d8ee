//! A book step as the relay carries it (DESIGN §13, docs/wallets.md "Against the host").
//!
//! 1. The enclave opens the mint's head book, seals its successor with what the step gives
//!    out held back inside, and asks the freshness witness to append it.
//! 2. The relay stores the step (the sealed successor, the append request, and its intent:
//!    what it will do with the outputs) before the request leaves.
//! 3. The key holder, polling `/tee/witness/appends`, appends by compare and set and answers.
//! 4. The answer goes back to the enclave: an acknowledgement releases the outputs; a refusal
//!    teaches it the witness's head.
//! 5. The relay stores the successor as the mint's head and carries out the intent, in one
//!    database transaction.
//!
//! A relay that dies anywhere in between finishes the step when it comes back ([`recover`]).
//! Nothing the step gives out exists outside the enclave before the witness acknowledged it,
//! so a step the witness refused (another successor of the same book won) is simply dropped.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use shared::address::Address;
use shared::privacy::{PrivacyAnswer, PrivacyRequest, SealedBook};
use shared::wire::codes::{self, EnclaveCode};
use shared::witness::{AppendRequest, WitnessAnswer};
use sqlx::Row;

use super::backend::{EnclavePoolBackend, book};
use crate::http::error::RelayError;
use crate::store::StoreError;

/// What the relay does with a step's outputs once the witness acknowledged its book.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Intent {
    /// An encrypt's credit: its audit entry and event.
    Credit { wallet_id: String, details: Value },
    /// A shield's deposit credited to its intermediate key: nothing more.
    ShieldCredit,
    /// A withdrawal: its order and payout, its audit entry and event, and (owner-signed) the
    /// answer kept under its nonce.
    Withdraw { wallet_id: String, nonce: Option<String>, body_sha256: Option<String> },
    /// A shield's hop: the payout to its intermediate key.
    ShieldHop { wallet_id: String },
    /// A payout replaced (or its order found paid).
    Settle { order_id: String },
}

/// How often a step is begun again after the book moved on under it.
const BOOK_RETRIES: usize = 8;

/// One stored step.
struct Step {
    digest: String,
    mint: Address,
    version: u64,
    blob: String,
    answer: Option<WitnessAnswer>,
    intent: Intent,
}

/// How far a stored step got.
enum Progress {
    Waiting,
    Refused,
    Done(Box<PrivacyAnswer>),
}

impl EnclavePoolBackend<'_> {
    /// Runs a book step of `mint` to its end: `request_for` builds the enclave request from the
    /// stored head book. Begun again when the book moved on (another step won the witness).
    /// Gives what the enclave released once the witness acknowledged the book, or its answer
    /// when it made no new book (the request's order was debited already).
    pub(super) async fn change_book(
        &self,
        mint: &Address,
        request_for: impl Fn(Option<String>) -> PrivacyRequest,
        intent: Intent,
    ) -> Result<PrivacyAnswer, RelayError> {
        let _serial = self.books_lock.lock().await;
        for _ in 0..BOOK_RETRIES {
            let held = book(self.store, mint).await?;
            let answer = match self.step(&request_for(held.as_ref().map(|b| b.blob.clone()))).await {
                Err(RelayError::Enclave { code: Some(EnclaveCode::BookRollback), .. }) => {
                    // This enclave's head is not the stored book: finish what is pending and
                    // show it the stored head's acknowledgement, then begin again.
                    self.catch_up(mint, held.as_ref()).await?;
                    continue;
                }
                Err(RelayError::Enclave { code: Some(EnclaveCode::BookStale), .. }) => continue,
                other => other?,
            };
            let PrivacyAnswer::Proposed { book: sealed, append } = answer else {
                return Ok(answer);
            };
            let step = self.store_step(mint, &sealed, &append, &intent).await?;
            crate::failpoint::hit("privacy:step:stored");
            match self.advance(&step, self.witness_wait).await? {
                Progress::Done(released) => return Ok(*released),
                Progress::Refused => continue,
                Progress::Waiting => return Err(RelayError::WitnessUnavailable),
            }
        }
        Err(RelayError::conflict(codes::BOOK_STALE, "the book kept changing; retry"))
    }

    /// A read of `mint`'s head book (a balance, the reserves). The enclave refuses it
    /// `book_rollback` while its head and the stored one differ: this relay's step between the
    /// witness's acknowledgement and storing its head, a step another relay (or a dead one)
    /// left acknowledged, an enclave restarted since. Then, as a step does, the read waits for
    /// this relay's step, finishes what is pending, shows the enclave the stored head's
    /// acknowledgement and asks once more; a stored head that really is behind stays refused.
    pub(super) async fn read_book(
        &self,
        mint: &Address,
        request_for: impl Fn(Option<String>) -> PrivacyRequest,
    ) -> Result<PrivacyAnswer, RelayError> {
        let held = book(self.store, mint).await?;
        match self.step(&request_for(held.map(|b| b.blob))).await {
            Err(RelayError::Enclave { code: Some(EnclaveCode::BookRollback), .. }) => {}
            other => return other,
        }
        let _serial = self.books_lock.lock().await;
        self.catch_up(mint, book(self.store, mint).await?.as_ref()).await?;
        let held = book(self.store, mint).await?;
        self.step(&request_for(held.map(|b| b.blob))).await
    }

    async fn store_step(
        &self,
        mint: &Address,
        sealed: &SealedBook,
        append: &AppendRequest,
        intent: &Intent,
    ) -> Result<Step, RelayError> {
        let now = crate::unix_now();
        sqlx::query(
            "INSERT INTO privacy_book_steps (digest, mint, version, blob, append_json, answer_json, intent_json, state, \
             created_at, updated_at) VALUES ($1, $2, $3, $4, $5, NULL, $6, 'witnessing', $7, $7)",
        )
        .bind(&append.next.digest)
        .bind(mint.to_string())
        .bind(sealed.version as i64)
        .bind(&sealed.blob)
        .bind(json(append)?)
        .bind(json(intent)?)
        .bind(now)
        .execute(self.store.pool())
        .await
        .map_err(StoreError::from)?;
        if let Some(witness) = self.witness {
            witness.appended.notify_waiters();
        }
        Ok(Step {
            digest: append.next.digest.clone(),
            mint: *mint,
            version: sealed.version,
            blob: sealed.blob.clone(),
            answer: None,
            intent: intent.clone(),
        })
    }

    /// Waits up to `wait` for the witness's answer to `step`, then carries it to the enclave
    /// and, for an acknowledgement, stores the book as the head with the step's intent.
    async fn advance(&self, step: &Step, wait: Duration) -> Result<Progress, RelayError> {
        let answer = match &step.answer {
            Some(answer) => answer.clone(),
            None => match self.wait_answer(&step.digest, wait).await? {
                Some(answer) => answer,
                None => return Ok(Progress::Waiting),
            },
        };
        if !answer.appended() {
            // Teaches the enclave the witness's head; its refusal (`book_stale`) is expected.
            let _ = self.step(&PrivacyRequest::Witnessed { book: None, answer }).await;
            self.mark(&step.digest, "refused").await?;
            return Ok(Progress::Refused);
        }
        let request = PrivacyRequest::Witnessed { book: Some(step.blob.clone()), answer };
        let released = self.step(&request).await?;
        crate::failpoint::hit("privacy:step:released");
        self.finish(step, &released).await?;
        Ok(Progress::Done(Box::new(released)))
    }

    async fn wait_answer(&self, digest: &str, wait: Duration) -> Result<Option<WitnessAnswer>, RelayError> {
        let deadline = Instant::now() + wait;
        loop {
            let notified = self.witness.map(|w| w.answered.notified());
            let row = sqlx::query("SELECT answer_json FROM privacy_book_steps WHERE digest = $1")
                .bind(digest)
                .fetch_optional(self.store.pool())
                .await
                .map_err(StoreError::from)?;
            let text: Option<String> = match &row {
                Some(r) => r.try_get("answer_json").map_err(StoreError::from)?,
                None => None,
            };
            if let Some(text) = text {
                return serde_json::from_str(&text)
                    .map(Some)
                    .map_err(|_| StoreError::Corrupt("a witness answer").into());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            let pause = left.min(Duration::from_millis(250));
            match notified {
                Some(n) => drop(tokio::time::timeout(pause, n).await),
                None => tokio::time::sleep(pause).await,
            }
        }
    }

    /// The step's book becomes the mint's head (compare and set on its parent) and its intent
    /// is carried out, in one database transaction; done once, whoever finishes it.
    async fn finish(&self, step: &Step, released: &PrivacyAnswer) -> Result<(), RelayError> {
        let now = crate::unix_now();
        let mut tx = self.store.begin().await?;
        let claimed = sqlx::query(
            "UPDATE privacy_book_steps SET state = 'done', updated_at = $1 WHERE digest = $2 AND state = 'witnessing'",
        )
        .bind(now)
        .bind(&step.digest)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::from)?
        .rows_affected()
            == 1;
        if !claimed {
            return Ok(());
        }
        let stored = match step.version {
            1 => sqlx::query("INSERT INTO privacy_books (mint, version, blob, updated_at) VALUES ($1, $2, $3, $4)")
                .bind(step.mint.to_string())
                .bind(step.version as i64)
                .bind(&step.blob)
                .bind(now),
            _ => sqlx::query(
                "UPDATE privacy_books SET version = $2, blob = $3, updated_at = $4 WHERE mint = $1 AND version = $5",
            )
            .bind(step.mint.to_string())
            .bind(step.version as i64)
            .bind(&step.blob)
            .bind(now)
            .bind(step.version as i64 - 1),
        }
        .execute(&mut *tx)
        .await
        .map_err(StoreError::from)?
        .rows_affected();
        if stored != 1 {
            // The witness acknowledged a book whose parent is not the stored head: only a
            // database changed behind this relay's back does that.
            tracing::error!(mint = %step.mint, version = step.version, "an acknowledged book does not follow the stored head");
            return Err(RelayError::Internal("an acknowledged book does not follow the stored head"));
        }
        self.carry_out(&mut tx, &step.intent, released).await?;
        tx.commit().await.map_err(StoreError::from)?;
        crate::failpoint::hit("privacy:step:finished");
        Ok(())
    }

    async fn mark(&self, digest: &str, state: &str) -> Result<(), RelayError> {
        sqlx::query(
            "UPDATE privacy_book_steps SET state = $1, updated_at = $2 WHERE digest = $3 AND state = 'witnessing'",
        )
        .bind(state)
        .bind(crate::unix_now())
        .bind(digest)
        .execute(self.store.pool())
        .await
        .map_err(StoreError::from)?;
        Ok(())
    }

    /// Brings this enclave and the store to the same head of `mint`: finishes steps the
    /// witness answered, then shows the enclave the acknowledgement of the stored head (an
    /// enclave that missed it: another enclave made it, or it booted before it).
    async fn catch_up(&self, mint: &Address, held: Option<&SealedBook>) -> Result<(), RelayError> {
        for step in self.open_steps(Some(mint)).await? {
            self.advance(&step, Duration::ZERO).await?;
        }
        let Some(held) = held else { return Ok(()) };
        let digest = shared::witness::digest(&held.blob);
        let row = sqlx::query("SELECT answer_json FROM privacy_book_steps WHERE digest = $1")
            .bind(&digest)
            .fetch_optional(self.store.pool())
            .await
            .map_err(StoreError::from)?;
        let answer: Option<String> = match row {
            Some(r) => r.try_get("answer_json").map_err(StoreError::from)?,
            None => None,
        };
        if let Some(answer) = answer.and_then(|a| serde_json::from_str::<WitnessAnswer>(&a).ok()) {
            let request = PrivacyRequest::Witnessed { book: Some(held.blob.clone()), answer };
            if let Err(e) = self.step(&request).await {
                tracing::warn!(%mint, error = %e, "the enclave did not take the stored head's acknowledgement");
            }
        }
        Ok(())
    }

    /// Steps still witnessing (of one mint, or all), oldest first.
    async fn open_steps(&self, mint: Option<&Address>) -> Result<Vec<Step>, RelayError> {
        let rows = sqlx::query(
            "SELECT digest, mint, version, blob, answer_json, intent_json FROM privacy_book_steps \
             WHERE state = 'witnessing' ORDER BY created_at, version LIMIT 64",
        )
        .fetch_all(self.store.pool())
        .await
        .map_err(StoreError::from)?;
        let mut steps = Vec::new();
        for r in rows {
            let read = || -> Result<Step, StoreError> {
                let answer: Option<String> = r.try_get("answer_json")?;
                let intent: String = r.try_get("intent_json")?;
                Ok(Step {
                    digest: r.try_get("digest")?,
                    mint: Address::parse(&r.try_get::<String, _>("mint")?)
                        .ok_or(StoreError::Corrupt("a book step's mint"))?,
                    version: r.try_get::<i64, _>("version")? as u64,
                    blob: r.try_get("blob")?,
                    answer: answer
                        .map(|a| serde_json::from_str(&a))
                        .transpose()
                        .map_err(|_| StoreError::Corrupt("a witness answer"))?,
                    intent: serde_json::from_str(&intent).map_err(|_| StoreError::Corrupt("a step intent"))?,
                })
            };
            let step = read()?;
            if mint.is_none_or(|m| *m == step.mint) {
                steps.push(step);
            }
        }
        Ok(steps)
    }

    /// Finishes every stored step the witness answered (a relay that died mid-step).
    pub async fn recover(&self) -> Result<(), RelayError> {
        let _serial = self.books_lock.lock().await;
        for step in self.open_steps(None).await?.into_iter().filter(|s| s.answer.is_some()) {
            match self.advance(&step, Duration::ZERO).await {
                Ok(_) => tracing::info!(mint = %step.mint, version = step.version, "finished a stored book step"),
                Err(e) => tracing::warn!(mint = %step.mint, version = step.version, error = %e, "a stored book step"),
            }
        }
        Ok(())
    }
}

fn json<T: Serialize>(value: &T) -> Result<String, RelayError> {
    serde_json::to_string(value).map_err(|_| RelayError::Internal("a value did not serialize"))
}
