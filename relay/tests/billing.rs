//! Balances on SQLite and PostgreSQL: exact, atomic debits under concurrency, and a journal
//! row for every change.

use std::sync::Arc;

use relay::billing::balances::{BillingError, balances, credit, debit};
use relay::billing::usage_writer::UsageWriter;
use relay::store::Store;
use sqlx::Row;

use crate::common;

async fn concurrent_debits_never_overspend(store: Store) {
    credit(&store, "key_a", "usdc", 50, "admin", "test funding", 1).await.unwrap();
    let store = Arc::new(store);
    let mut tasks = Vec::new();
    for i in 0..200 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move { debit(&store, "key_a", "usdc", 1, &format!("req-{i}"), 2).await }));
    }
    let mut ok = 0;
    let mut short = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(_) => ok += 1,
            Err(BillingError::Insufficient) => short += 1,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }
    assert_eq!((ok, short), (50, 150));
    assert_eq!(balances(&store, "key_a").await.unwrap(), vec![("usdc".to_string(), 0), ("svc".to_string(), 0)]);

    // The journal accounts for every unit: one credit of 50 and exactly 50 debits of 1.
    let rows = sqlx::query("SELECT kind, delta, balance_after FROM balance_journal WHERE key_id = $1")
        .bind("key_a")
        .fetch_all(store.pool())
        .await
        .unwrap();
    let debits: Vec<(i64, i64)> = rows
        .iter()
        .filter(|r| r.get::<String, _>("kind") == "debit")
        .map(|r| (r.get("delta"), r.get("balance_after")))
        .collect();
    assert_eq!(debits.len(), 50);
    assert!(debits.iter().all(|(d, _)| *d == -1));
    let mut afters: Vec<i64> = debits.iter().map(|(_, a)| *a).collect();
    afters.sort();
    assert_eq!(afters, (0..50).collect::<Vec<_>>(), "each debit saw a distinct balance");
    let sum: i64 = rows.iter().map(|r| r.get::<i64, _>("delta")).sum();
    assert_eq!(sum, 0);
}

async fn rules(store: Store) {
    assert!(matches!(debit(&store, "nobody", "usdc", 1, "r", 1).await, Err(BillingError::Insufficient)));
    assert!(matches!(credit(&store, "k", "eur", 5, "admin", "r", 1).await, Err(BillingError::UnknownCurrency(_))));
    assert!(matches!(credit(&store, "k", "usdc", 0, "admin", "r", 1).await, Err(BillingError::NotPositive)));
    assert!(matches!(debit(&store, "k", "usdc", -5, "r", 1).await, Err(BillingError::NotPositive)));
    assert_eq!(credit(&store, "k", "usdc", 7, "admin", "r", 1).await.unwrap(), 7);
    assert_eq!(credit(&store, "k", "usdc", 3, "deposit", "tx1", 1).await.unwrap(), 10);
    // A debit larger than the balance changes nothing.
    assert!(matches!(debit(&store, "k", "usdc", 11, "r", 1).await, Err(BillingError::Insufficient)));
    assert_eq!(debit(&store, "k", "usdc", 10, "r", 1).await.unwrap(), 0);
    // Currencies are separate.
    assert!(matches!(debit(&store, "k", "svc", 1, "r", 1).await, Err(BillingError::Insufficient)));
}

common::on_both_stores!(
    #[tokio::test]
    sqlite_concurrent_debits,
    postgres_concurrent_debits,
    |db| concurrent_debits_never_overspend(db.store.clone()).await
);

common::on_both_stores!(
    #[tokio::test]
    sqlite_rules,
    postgres_rules,
    |db| rules(db.store.clone()).await
);

/// A paid call's usage row is written with its debit, completed with its tokens (giving back
/// what a per-token charge took beyond the final amount), or refunded in full, each change one
/// transaction; the journal and the balance always agree.
async fn usage_rows_follow_their_debits(store: Store) {
    use relay::billing::balances::{NewUsage, refund_usage, usage_page};
    let writer = UsageWriter::new(store.clone());
    credit(&store, "key_u", "usdc", 10_000, "admin", "funding", 1).await.unwrap();
    let usage = |route| NewUsage { route, model: "gpt-oss:20b" };
    let (after, done) = writer.charge("key_u", "usdc", 3_000, usage("/api/v1/chat/completions"), 2).await.unwrap();
    assert_eq!(after, 7_000);
    let (_, failed) = writer.charge("key_u", "usdc", 1_000, usage("/agent"), 3).await.unwrap();
    let (_, flat) = writer.charge("key_u", "usdc", 1_000, usage("/agent"), 4).await.unwrap();
    assert!(matches!(writer.charge("key_u", "usdc", 6_000, usage("/agent"), 5).await, Err(BillingError::Insufficient)));
    // Per-token: 3000 reserved, 1234 is the final price: 1766 come back.
    assert_eq!(writer.complete(&done, 120, 30, Some(1_234), 6).await.unwrap(), 1_234);
    refund_usage(&store, &failed, 7).await.unwrap();
    refund_usage(&store, &failed, 8).await.unwrap(); // a second refund changes nothing
    assert_eq!(writer.complete(&flat, 0, 0, None, 9).await.unwrap(), 1_000);
    assert!(writer.complete(&flat, 0, 0, None, 10).await.is_err(), "completed once");
    assert_eq!(balances(&store, "key_u").await.unwrap()[0], ("usdc".to_string(), 10_000 - 1_234 - 1_000));

    let page = usage_page(&store, "key_u", 10, None).await.unwrap();
    let summary: Vec<(&str, &str, &str, i64)> =
        page.iter().map(|r| (r.route.as_str(), r.status.as_str(), r.charged.as_str(), r.prompt_tokens)).collect();
    assert_eq!(
        summary,
        [
            ("/agent", "completed", "1000", 0),
            ("/agent", "refunded", "1000", 0),
            ("/api/v1/chat/completions", "completed", "1234", 120)
        ],
        "newest first"
    );
    let first = usage_page(&store, "key_u", 2, None).await.unwrap();
    let last = first.last().unwrap();
    let rest = usage_page(&store, "key_u", 2, Some((last.created_at, &last.id))).await.unwrap();
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].id, page[2].id);

    // Every unit is in the journal.
    let sum: i64 = sqlx::query("SELECT delta FROM balance_journal WHERE key_id = $1")
        .bind("key_u")
        .fetch_all(store.pool())
        .await
        .unwrap()
        .iter()
        .map(|r| r.get::<i64, _>("delta"))
        .sum();
    assert_eq!(sum, 10_000 - 1_234 - 1_000);
}

/// A deposit recorded twice and credited by eight workers at once (a restart, two relays) is
/// recorded once and credited once; one not yet finalized is not credited at all.
async fn deposits_are_credited_once(store: Store) {
    use relay::billing::balances::credit_deposit;
    use relay::billing::deposits::records::{self, DepositRecord, state};
    let deposit = DepositRecord {
        signature: "5sigDeposit".into(),
        ix: 2,
        key_id: "key_d".into(),
        owner: "owner".into(),
        mint: "mint".into(),
        currency: Some("svc".into()),
        amount: 777,
        state: state::SEEN.into(),
        reason: None,
        slot: 9,
        created_at: 0,
    };
    assert!(records::record(&store, &deposit, 1).await.unwrap());
    assert!(!records::record(&store, &deposit, 1).await.unwrap(), "recorded once");
    assert_eq!(credit_deposit(&store, "5sigDeposit", 2, 1).await.unwrap(), None, "not finalized yet");
    records::finalize(&store, "5sigDeposit", 2).await.unwrap();
    let store = Arc::new(store);
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { credit_deposit(&store, "5sigDeposit", 2, 3).await.unwrap() })
        })
        .collect();
    let mut credited = Vec::new();
    for t in tasks {
        credited.extend(t.await.unwrap().map(|c| c.amount));
    }
    assert_eq!(credited, [777]);
    assert_eq!(balances(&store, "key_d").await.unwrap()[1], ("svc".to_string(), 777));
    assert_eq!(records::of_key(&store, "key_d", 10).await.unwrap()[0].state, state::CREDITED);
}

common::on_both_stores!(
    #[tokio::test]
    sqlite_usage_rows,
    postgres_usage_rows,
    |db| {
        usage_rows_follow_their_debits(db.store.clone()).await;
        deposits_are_credited_once(db.store.clone()).await;
    }
);

/// Rows a killed relay left `pending` are refunded once they are older than any call can run,
/// by several sweepers at once, each once; a row still in flight is left alone.
async fn abandoned_usage_is_refunded_once(store: Store) {
    use relay::billing::balances::{NewUsage, refund_abandoned_usage, usage_page};
    credit(&store, "key_a", "usdc", 5_000, "admin", "funding", 1).await.unwrap();
    let usage = NewUsage { route: "/agent", model: "gpt-oss:20b" };
    let writer = UsageWriter::new(store.clone());
    for _ in 0..3 {
        writer.charge("key_a", "usdc", 1_000, usage, 100).await.unwrap();
    }
    let (in_flight, _) = writer.charge("key_a", "usdc", 1_000, usage, 900).await.unwrap();
    assert_eq!(in_flight, 1_000);
    let store = Arc::new(store);
    let sweeps: Vec<_> = (0..4)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { refund_abandoned_usage(&store, 500, 1_000).await.unwrap() })
        })
        .collect();
    for sweep in sweeps {
        sweep.await.unwrap();
    }
    assert_eq!(balances(&store, "key_a").await.unwrap()[0], ("usdc".to_string(), 4_000), "three refunds, once each");
    let rows = usage_page(&store, "key_a", 10, None).await.unwrap();
    let statuses: Vec<&str> = rows.iter().map(|r| r.status.as_str()).collect();
    assert_eq!(statuses, ["pending", "refunded", "refunded", "refunded"]);
    let refunds: i64 = sqlx::query("SELECT COUNT(*) AS n FROM balance_journal WHERE kind = 'refund'")
        .fetch_one(store.pool())
        .await
        .unwrap()
        .try_get("n")
        .unwrap();
    assert_eq!(refunds, 3);
}

common::on_both_stores!(
    #[tokio::test]
    sqlite_abandoned_usage,
    postgres_abandoned_usage,
    |db| abandoned_usage_is_refunded_once(db.store.clone()).await
);

/// Paid calls' charges and completions are written in groups (`UsageWriter`): 300 calls on
/// one balance and 50 on another at once, half of the first priced per token (giving part
/// back on completion), each completed twice at once. The balance never goes below zero,
/// each completion counts once, and the journal, the usage rows and the balances agree to
/// the base unit.
async fn grouped_charges_keep_the_books(store: Store) {
    use relay::billing::balances::{NewUsage, usage_page};
    credit(&store, "key_g", "usdc", 10_000, "admin", "funding", 1).await.unwrap();
    credit(&store, "key_h", "svc", 500, "admin", "funding", 1).await.unwrap();
    let writer = Arc::new(UsageWriter::new(store.clone()));
    let usage = NewUsage { route: "/agent", model: "m" };
    let calls: Vec<_> = (0..350)
        .map(|i| {
            let writer = writer.clone();
            tokio::spawn(async move {
                let (key, currency, amount) = if i < 300 { ("key_g", "usdc", 100) } else { ("key_h", "svc", 10) };
                let (after, id) = match writer.charge(key, currency, amount, usage, 2).await {
                    Ok(charged) => charged,
                    Err(BillingError::Insufficient) => return None,
                    Err(e) => panic!("{e}"),
                };
                assert!(after >= 0);
                let final_amount = (i % 2 == 0).then_some(37);
                let twice = (writer.complete(&id, 5, 7, final_amount, 3), writer.complete(&id, 5, 7, final_amount, 3));
                let (a, b) = tokio::join!(twice.0, twice.1);
                let kept: Vec<i64> = [a, b].into_iter().filter_map(Result::ok).collect();
                assert_eq!(kept.len(), 1, "completed once");
                Some((key, kept[0]))
            })
        })
        .collect();
    let mut kept = std::collections::BTreeMap::<&str, (i64, i64)>::new();
    for call in calls {
        if let Some((key, amount)) = call.await.unwrap() {
            let entry = kept.entry(key).or_default();
            *entry = (entry.0 + 1, entry.1 + amount);
        }
    }
    let (g_calls, g_kept) = kept["key_g"];
    assert!(g_calls >= 100, "at least the balance's worth of calls were charged: {g_calls}");
    assert_eq!(kept["key_h"], (50, 500), "every svc call was charged");
    let g_balance = balances(&store, "key_g").await.unwrap()[0].1;
    assert_eq!(g_balance, 10_000 - g_kept);
    assert_eq!(balances(&store, "key_h").await.unwrap()[1].1, 0);
    let afters = sqlx::query("SELECT balance_after FROM balance_journal WHERE key_id = $1 AND kind = 'debit'")
        .bind("key_h")
        .fetch_all(store.pool())
        .await
        .unwrap();
    let mut afters: Vec<i64> = afters.iter().map(|r| r.get("balance_after")).collect();
    afters.sort_unstable();
    assert_eq!(afters, (0..50).map(|i| i * 10).collect::<Vec<_>>(), "each debit saw a distinct balance");
    for (key, balance) in [("key_g", g_balance), ("key_h", 0)] {
        let rows = sqlx::query("SELECT delta FROM balance_journal WHERE key_id = $1")
            .bind(key)
            .fetch_all(store.pool())
            .await
            .unwrap();
        assert_eq!(rows.iter().map(|r| r.get::<i64, _>("delta")).sum::<i64>(), balance, "{key}: journal = balance");
        let page = usage_page(&store, key, 1_000, None).await.unwrap();
        assert!(page.iter().all(|r| r.status == "completed" && r.prompt_tokens == 5 && r.completion_tokens == 7));
        let charged: i64 = page.iter().map(|r| r.charged.parse::<i64>().unwrap()).sum();
        let credited = if key == "key_g" { 10_000 } else { 500 };
        assert_eq!(charged, credited - balance, "{key}: usage rows = what was taken");
    }
}

common::on_both_stores!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    sqlite_grouped_charges,
    postgres_grouped_charges,
    |db| grouped_charges_keep_the_books(db.store.clone()).await
);
