//! The two writes of every paid call, committed in groups (`crate::group_commit`): the
//! charge before the call (the debit, its journal row and the call's `pending` usage row) and
//! the completion after it (the tokens, the final amount, and the part of a per-token charge
//! given back). The calls that wait while one transaction runs go together in the next, in a
//! few statements for the whole group, so the calls on one balance no longer queue one
//! transaction each behind its row lock.
//!
//! Nothing about durability changes: each caller gets its answer only after its group
//! committed, so a call is forwarded only once its charge is durable and delivered only once
//! its completion is. A group that fails is written again one call at a time, so one bad write
//! costs no other call its answer.

use std::collections::HashSet;

use sqlx::Row;
use tokio::sync::oneshot;

use super::balances::{self, BillingError, Change, NewUsage};
use crate::group_commit::GroupCommit;
use crate::ids::random_hex;
use crate::store::{Store, StoreError, placeholders};

pub struct UsageWriter {
    store: Store,
    groups: GroupCommit<Op>,
}

/// A charge to take: `amount` from the balance, and the usage row `usage_id`.
#[derive(Debug)]
struct NewCharge {
    usage_id: String,
    key_id: String,
    currency: String,
    amount: i64,
    route: String,
    model: String,
    now: i64,
}

/// A pending usage row to complete.
#[derive(Debug)]
struct Completion {
    usage_id: String,
    prompt_tokens: i64,
    completion_tokens: i64,
    /// The final amount (per-token prices); `None` keeps what was taken.
    final_amount: Option<i64>,
    now: i64,
}

#[derive(Debug)]
enum Write {
    Charge(NewCharge),
    Complete(Completion),
}

/// A write's answer: the balance after a charge, or the amount a completion kept.
type Answer = Result<i64, BillingError>;

struct Op {
    write: Write,
    done: oneshot::Sender<Answer>,
}

fn not_pending() -> BillingError {
    BillingError::Store(StoreError::Corrupt("usage row is not pending"))
}

impl UsageWriter {
    pub fn new(store: Store) -> Self {
        UsageWriter { store, groups: GroupCommit::default() }
    }

    /// Takes `amount` and writes the call's usage row (status `pending`); returns the new
    /// balance and the usage id once the group holding them committed.
    pub async fn charge(
        &self,
        key_id: &str,
        currency: &str,
        amount: i64,
        usage: NewUsage<'_>,
        now: i64,
    ) -> Result<(i64, String), BillingError> {
        balances::check(currency, amount)?;
        let usage_id = format!("use_{}", random_hex(16));
        let charge = NewCharge {
            usage_id: usage_id.clone(),
            key_id: key_id.into(),
            currency: currency.into(),
            amount,
            route: usage.route.into(),
            model: usage.model.into(),
            now,
        };
        let balance_after = self.submit(Write::Charge(charge)).await?;
        Ok((balance_after, usage_id))
    }

    /// Completes a pending usage row: records the tokens and the final charge, giving back what
    /// was taken beyond it (`final_amount` ≤ the amount taken). Returns the amount kept.
    pub async fn complete(
        &self,
        usage_id: &str,
        prompt_tokens: u64,
        completion_tokens: u64,
        final_amount: Option<i64>,
        now: i64,
    ) -> Result<i64, BillingError> {
        let completion = Completion {
            usage_id: usage_id.into(),
            prompt_tokens: i64::try_from(prompt_tokens).unwrap_or(i64::MAX),
            completion_tokens: i64::try_from(completion_tokens).unwrap_or(i64::MAX),
            final_amount,
            now,
        };
        self.submit(Write::Complete(completion)).await
    }

    async fn submit(&self, write: Write) -> Answer {
        let (done, answer) = oneshot::channel();
        self.groups.submit(Op { write, done }, |group| self.write_group(group)).await;
        answer.await.unwrap_or(Err(BillingError::Store(StoreError::Corrupt("the group write did not finish"))))
    }

    /// Writes `group` in one transaction, or, if that fails, each write on its own.
    async fn write_group(&self, group: Vec<Op>) {
        let (writes, replies): (Vec<Write>, Vec<_>) = group.into_iter().map(|op| (op.write, op.done)).unzip();
        if writes.len() > 1 {
            match self.write_all(&writes).await {
                Ok(answers) => {
                    for (reply, answer) in replies.into_iter().zip(answers) {
                        let _ = reply.send(answer);
                    }
                    return;
                }
                Err(e) => tracing::info!(error = %e, writes = writes.len(), "group write failed; writing one by one"),
            }
        }
        for (write, reply) in writes.iter().zip(replies) {
            let answer = match self.write_all(std::slice::from_ref(write)).await {
                Ok(mut answers) => answers.pop().unwrap_or_else(|| Err(not_pending())),
                Err(e) => Err(e),
            };
            let _ = reply.send(answer);
        }
    }

    /// All of `writes` in one transaction: completions first (they can only give money back),
    /// then charges. A write refused on its own terms (an insufficient balance, a row not
    /// pending) is that write's result; a database error rolls all of it back.
    async fn write_all(&self, writes: &[Write]) -> Result<Vec<Answer>, BillingError> {
        let mut results: Vec<Option<Answer>> = writes.iter().map(|_| None).collect();
        let mut journal: Vec<Change<'_>> = Vec::new();
        let mut turn = self.store.write_turn().await;
        let mut tx = turn.begin().await?;

        // Each write with its place in the group, by kind.
        let mut completions: Vec<(usize, &Completion)> = Vec::new();
        let mut charges: Vec<(usize, &NewCharge)> = Vec::new();
        for (i, write) in writes.iter().enumerate() {
            match write {
                Write::Complete(c) => completions.push((i, c)),
                Write::Charge(c) => charges.push((i, c)),
            }
        }
        // SQLite: every statement below writes first, so a transaction never has to upgrade a
        // read lock (SQLITE_BUSY_SNAPSHOT); it waits for the writer instead.
        let taken = complete_rows(&mut tx, &completions).await?;
        let mut answered = HashSet::new();
        let mut backs: Vec<(usize, &Completion, i64)> = Vec::new();
        for (i, c) in &completions {
            let row = taken.iter().find(|r| r.usage_id == c.usage_id);
            let Some(row) = row.filter(|_| answered.insert(&c.usage_id)) else {
                results[*i] = Some(Err(not_pending()));
                continue;
            };
            let charged = c.final_amount.unwrap_or(row.taken).clamp(0, row.taken);
            results[*i] = Some(Ok(charged));
            if charged < row.taken {
                backs.push((*i, c, row.taken - charged));
            }
        }
        // Give back what per-token calls took beyond their price: one add per balance.
        let mut adjusted: Vec<(&str, i64)> = Vec::new();
        let balance_of = |c: &Completion| {
            taken.iter().find(|r| r.usage_id == c.usage_id).map(|r| (r.key_id.as_str(), r.currency.as_str()))
        };
        for bucket in buckets(&backs, |(_, c, _)| balance_of(c)) {
            let (key_id, currency) = bucket.key;
            let total = bucket.items.iter().try_fold(0i64, |sum, (_, _, back)| sum.checked_add(*back));
            let total = total.ok_or(BillingError::Store(StoreError::Corrupt("refunds overflow")))?;
            let mut after = balances::add_in_tx(&mut tx, key_id, currency, total).await? - total;
            for (i, c, back) in bucket.items {
                after += back;
                let reference = c.usage_id.as_str();
                journal.push(Change { key_id, currency, delta: back, after, kind: "adjust", reference, now: c.now });
                if let Some(Ok(charged)) = results[i] {
                    adjusted.push((reference, charged));
                }
            }
        }
        set_charged(&mut tx, &adjusted).await?;

        let mut charged: Vec<&NewCharge> = Vec::new();
        for bucket in buckets(&charges, |(_, c)| Some((c.key_id.as_str(), c.currency.as_str()))) {
            let (key_id, currency) = bucket.key;
            let afters = take_in_bucket(&mut tx, key_id, currency, &bucket.items).await?;
            for ((i, c), after) in bucket.items.iter().zip(afters) {
                results[*i] = Some(match after {
                    Some(after) => {
                        journal.push(Change {
                            key_id,
                            currency,
                            delta: -c.amount,
                            after,
                            kind: "debit",
                            reference: &c.usage_id,
                            now: c.now,
                        });
                        charged.push(c);
                        Ok(after)
                    }
                    None => Err(BillingError::Insufficient),
                });
            }
        }
        insert_usage_rows(&mut tx, &charged).await?;
        balances::journal_rows(&mut tx, &journal).await?;
        crate::failpoint::hit("billing:group:written");
        tx.commit().await?;
        crate::failpoint::hit("billing:group:committed");
        Ok(results.into_iter().map(|r| r.unwrap_or_else(|| Err(not_pending()))).collect())
    }
}

/// A usage row a completion found pending.
struct TakenRow {
    usage_id: String,
    key_id: String,
    currency: String,
    taken: i64,
}

/// Items that touch one balance, in their order.
struct Bucket<'k, T> {
    key: (&'k str, &'k str),
    items: Vec<T>,
}

/// `items` grouped by the balance `key_of` names (items it names none for are left out),
/// buckets in the order of their first item.
fn buckets<'k, T: Copy>(items: &[T], key_of: impl Fn(&T) -> Option<(&'k str, &'k str)>) -> Vec<Bucket<'k, T>> {
    let mut out: Vec<Bucket<'k, T>> = Vec::new();
    for item in items {
        let Some(key) = key_of(item) else { continue };
        match out.iter_mut().find(|b| b.key == key) {
            Some(bucket) => bucket.items.push(*item),
            None => out.push(Bucket { key, items: vec![*item] }),
        }
    }
    out
}

/// Marks the pending rows of `completions` completed with their tokens, in one statement;
/// returns the rows it found pending (a row completed twice in one group counts once).
async fn complete_rows(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    completions: &[(usize, &Completion)],
) -> Result<Vec<TakenRow>, BillingError> {
    let mut seen = HashSet::new();
    let unique: Vec<&Completion> = completions.iter().map(|(_, c)| *c).filter(|c| seen.insert(&c.usage_id)).collect();
    if unique.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "UPDATE usage_records SET status = 'completed', prompt_tokens = v.column2, completion_tokens = v.column3 \
         FROM (VALUES {}) AS v WHERE usage_records.id = v.column1 AND usage_records.status = 'pending' \
         RETURNING id, key_id, currency, charged",
        placeholders(unique.len(), 3)
    );
    let mut query = sqlx::query(&sql);
    for c in &unique {
        query = query.bind(&c.usage_id).bind(c.prompt_tokens).bind(c.completion_tokens);
    }
    let rows = query.fetch_all(&mut **tx).await?;
    rows.iter()
        .map(|r| {
            Ok(TakenRow {
                usage_id: r.try_get("id")?,
                key_id: r.try_get("key_id")?,
                currency: r.try_get("currency")?,
                taken: r.try_get("charged")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(BillingError::from)
}

/// Sets the final `charged` of the rows that gave part of their charge back.
async fn set_charged(tx: &mut sqlx::Transaction<'_, sqlx::Any>, rows: &[(&str, i64)]) -> Result<(), BillingError> {
    if rows.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "UPDATE usage_records SET charged = v.column2 FROM (VALUES {}) AS v WHERE usage_records.id = v.column1",
        placeholders(rows.len(), 2)
    );
    let mut query = sqlx::query(&sql);
    for (usage_id, charged) in rows {
        query = query.bind(*usage_id).bind(*charged);
    }
    query.execute(&mut **tx).await?;
    Ok(())
}

/// Takes the charges of one balance: all of them in one conditional update when the balance
/// covers their sum, else one at a time in order, each if what is left covers it. Returns
/// each charge's balance after it, or `None` where the balance fell short.
async fn take_in_bucket(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    key_id: &str,
    currency: &str,
    charges: &[(usize, &NewCharge)],
) -> Result<Vec<Option<i64>>, BillingError> {
    let total = charges.iter().try_fold(0i64, |sum, (_, c)| sum.checked_add(c.amount));
    if let Some(total) = total.filter(|_| charges.len() > 1) {
        match balances::take_in_tx(tx, key_id, currency, total).await {
            Ok(after) => {
                let mut after = after + total;
                return Ok(charges
                    .iter()
                    .map(|(_, c)| {
                        after -= c.amount;
                        Some(after)
                    })
                    .collect());
            }
            Err(BillingError::Insufficient) => {}
            Err(e) => return Err(e),
        }
    }
    let mut afters = Vec::with_capacity(charges.len());
    for (_, c) in charges {
        afters.push(match balances::take_in_tx(tx, key_id, currency, c.amount).await {
            Ok(after) => Some(after),
            Err(BillingError::Insufficient) => None,
            Err(e) => return Err(e),
        });
    }
    Ok(afters)
}

/// The `pending` usage rows of the charges taken, in one statement.
async fn insert_usage_rows(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    charges: &[&NewCharge],
) -> Result<(), BillingError> {
    if charges.is_empty() {
        return Ok(());
    }
    let sql = format!(
        "INSERT INTO usage_records (id, key_id, route, model, charged, currency, created_at, status, prompt_tokens, \
         completion_tokens) SELECT v.column1, v.column2, v.column3, v.column4, v.column5, v.column6, v.column7, \
         'pending', 0, 0 FROM (VALUES {}) AS v",
        placeholders(charges.len(), 7)
    );
    let mut query = sqlx::query(&sql);
    for c in charges {
        query = query
            .bind(&c.usage_id)
            .bind(&c.key_id)
            .bind(&c.route)
            .bind(&c.model)
            .bind(c.amount)
            .bind(&c.currency)
            .bind(c.now);
    }
    query.execute(&mut **tx).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_keep_the_order_of_first_appearance() {
        let items = [("a", 1), ("b", 2), ("a", 3)];
        let got = buckets(&items, |(k, _)| Some((*k, "usdc")));
        let shape: Vec<(&str, Vec<i32>)> =
            got.iter().map(|b| (b.key.0, b.items.iter().map(|i| i.1).collect())).collect();
        assert_eq!(shape, [("a", vec![1, 3]), ("b", vec![2])]);
    }
}
