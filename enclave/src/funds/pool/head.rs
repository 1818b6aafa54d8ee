//! The head book of a mint: one writer at a time, opened only at the head the freshness
//! witness acknowledged, and a successor whose releases leave only once the witness
//! acknowledged it (DESIGN §13).

use shared::address::Address;
use shared::privacy::{PrivacyAnswer, SealedBook};
use shared::witness::{AppendRequest, Head, WitnessAnswer};

use super::book::Book;
use super::keys::{self, Pool};
use super::{Env, Funds, FundsError, sealed};

impl Funds {
    /// The mint's lock, held from opening its book to sealing the successor.
    pub(super) async fn lock(&self, mint: &Address) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = {
            let mut locks = self.locks.lock().unwrap_or_else(|p| p.into_inner());
            locks.entry(mint.to_string()).or_default().clone()
        };
        lock.lock_owned().await
    }

    /// The book `blob` if it is the mint's witnessed head (a new book before the first), bound
    /// to the mint and the pool.
    pub(super) fn open_head(
        &self,
        env: &Env<'_>,
        blob: Option<&str>,
        mint: &Address,
        pool: &Pool,
    ) -> Result<(Head, Book), FundsError> {
        let head = self.lineage.opens(&mint.to_string(), blob).ok_or(FundsError::BookRollback)?;
        let book = match blob {
            Some(blob) => keys::open_book(env.custody, blob)?,
            None => Book::genesis(mint, &pool.address),
        };
        if book.mint != *mint || book.pool != pool.address || book.version != head.version {
            return Err(sealed());
        }
        Ok((head, book))
    }

    /// Seals the successor of `head` holding `released`, and the witness request for it.
    /// Nothing of `released` leaves until the witness acknowledged it ([`Funds::witnessed`]).
    pub(super) fn propose(
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
        let append = AppendRequest::signed(&child.mint.to_string(), head.clone(), next, env.keys.signer());
        Ok(PrivacyAnswer::Proposed { book: SealedBook { blob, version: child.version }, append })
    }

    /// The witness's answer to an append: an acknowledgement makes `book` the head and gives
    /// out what it holds; a refusal teaches this boot the witness's head (`book_stale`).
    pub(super) async fn witnessed(
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
        if book.mint != mint || book.parent != answer.parent.digest || book.version != answer.next.version {
            return Err(sealed());
        }
        book.released.ok_or_else(sealed)
    }
}
