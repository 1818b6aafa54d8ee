//! Swap session storage on SQLite, and on PostgreSQL when `DATABASE_URL` is set: one funding
//! signature funds one session, a lease is held by one worker at a time (two relays claiming
//! at once never take the same session), a save with a lost lease writes nothing, and a
//! session's receipt is committed once.

use crate::common;

use relay::agents::sessions::{self, FundingRefused, Order, Pending, Session, state};
use relay::receipts::CommitLog;
use relay::store::Store;
use shared::address::Address;
use shared::amount::Amount;

fn session(id: &str, expires_at: i64) -> Session {
    let key = |n: u8| Address([n; 32]);
    let order = Order {
        payer: key(1),
        from_mint: key(2),
        to_mint: key(3),
        amount: Amount(10_000_000),
        destination: key(4),
        slippage_bps: 50,
        expected_out: Amount(100),
        min_out: Amount(99),
    };
    Session {
        expires_at,
        funding_valid_height: 1_000,
        object_id: format!("obj-{id}"),
        commitment_json: "{}".into(),
        bucketed: true,
        bucket_label: Some("10 USDC".into()),
        ..Session::new(id.into(), ("oneshot", state::AWAITING_FUNDING), order, key(5), 100)
    }
}

async fn lifecycle(store: &Store) {
    let now = 1_000;
    sessions::insert(store.pool(), &session("a", now + 600)).await.unwrap();
    sessions::insert(store.pool(), &session("b", now + 600)).await.unwrap();
    // Waiting for funding and not expired: no worker takes it.
    assert!(sessions::claim(store, now, 30).await.unwrap().is_none());

    // One signature funds one session; the same one again is the same answer.
    let funded = sessions::record_funding(store, "a", "sig-1", state::FUNDED, None, now).await.unwrap().unwrap();
    assert_eq!(
        (funded.state.as_str(), funded.funding_tx_sig.as_deref(), funded.funded_at),
        (state::FUNDED, Some("sig-1"), Some(now))
    );
    assert!(sessions::record_funding(store, "a", "sig-1", state::FUNDED, None, now).await.unwrap().is_ok());
    assert_eq!(
        sessions::record_funding(store, "b", "sig-1", state::FUNDED, None, now).await.unwrap().unwrap_err(),
        FundingRefused::AlreadyUsed
    );
    assert_eq!(
        sessions::record_funding(store, "a", "sig-2", state::FUNDED, None, now).await.unwrap().unwrap_err(),
        FundingRefused::WrongState(state::FUNDED.into())
    );
    assert_eq!(sessions::funded_by(store, "sig-1").await.unwrap().as_deref(), Some("a"));
    assert_eq!(sessions::fundings(store, &Address([2; 32]), Amount(10_000_000), now).await.unwrap(), 1);

    // A worker holds it; nobody else takes it until the lease runs out.
    let mut held = sessions::claim(store, now, 30).await.unwrap().expect("the funded session");
    assert_eq!(held.id, "a");
    assert!(sessions::claim(store, now + 29, 30).await.unwrap().is_none());
    // The lease ran out and another worker took it: the first one's save writes nothing.
    let taken = sessions::claim(store, now + 31, 30).await.unwrap().expect("taken over");
    held.state = state::SWAPPING.into();
    assert!(!sessions::save(store.pool(), &held, now + 32, 0).await.unwrap());
    assert_eq!(sessions::get(store, "a").await.unwrap().unwrap().state, state::FUNDED);
    // The holder's save lands and releases it; a retry time keeps it from workers until then.
    let mut taken = taken;
    taken.state = state::SWAPPED.into();
    assert!(sessions::save(store.pool(), &taken, now + 33, now + 40).await.unwrap());
    assert!(sessions::claim(store, now + 39, 30).await.unwrap().is_none());
    let mut worked = sessions::claim(store, now + 40, 30).await.unwrap().unwrap();
    assert_eq!(worked.state, state::SWAPPED);
    // Every column a step changes is written and read back as it was.
    worked.state = state::CLOSING.into();
    worked.swap_tx_sig = Some("swap".into());
    worked.final_tx_sig = Some("final".into());
    worked.refund_tx_sig = Some("refund".into());
    worked.close_tx_sig = Some("close".into());
    worked.actual_out = Some(Amount(98));
    worked.pending = Some(Pending {
        kind: "deliver".into(),
        transaction: "tx".into(),
        signature: "sig".into(),
        last_valid_block_height: 7,
    });
    worked.reason = Some("why".into());
    worked.attempts = 3;
    worked.receipt_json = Some("{}".into());
    worked.attestation_address = Some("att".into());
    worked.attestation_tx_sig = Some("att-sig".into());
    worked.funded_at = Some(now + 1);
    assert!(sessions::save(store.pool(), &worked, now + 41, 0).await.unwrap());
    let expected = Session { updated_at: now + 41, lease_owner: None, ..worked };
    assert_eq!(sessions::get(store, "a").await.unwrap().unwrap(), expected);

    // An expired session waiting for funding is taken (to close or refund it).
    sessions::insert(store.pool(), &session("c", now)).await.unwrap();
    let expired = sessions::claim(store, now + 100, 30).await.unwrap().expect("the expired session");
    assert_eq!(expired.id, "c");
}

async fn receipts_commit_once(store: &Store) {
    sessions::insert(store.pool(), &session("0f8e4a2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b", 2_000)).await.unwrap();
    let key = ed25519_dalek::SigningKey::from_bytes(&[5; 32]);
    let program = shared::address::default_program_id();
    let log = CommitLog::new(key, program, store.clone());
    let sig = bs58::encode([3u8; 64]).into_string();
    let id = shared::swap::parse_uuid("0f8e4a2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b").unwrap();
    let receipt = shared::swap::SwapReceipt {
        version: shared::swap::RECEIPT_VERSION.into(),
        session_id: "0f8e4a2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b".into(),
        from_mint: shared::address::Address([1; 32]).to_string(),
        to_mint: shared::address::Address([2; 32]).to_string(),
        amount_in: "10".into(),
        actual_out: "20".into(),
        destination: shared::address::Address([3; 32]).to_string(),
        ephemeral_pubkey: shared::address::Address([4; 32]).to_string(),
        funding_tx_sig: sig.clone(),
        final_tx_sig: sig,
        timestamp: 1,
        address: shared::swap::receipt_address(&id, &program).to_string(),
        enclave_pubkey: String::new(),
        signature: String::new(),
    };
    // Signed as the enclave signs it: the log's entry binds the signature.
    let enclave = ed25519_dalek::SigningKey::from_bytes(&[6; 32]);
    let sign = |r: shared::swap::SwapReceipt| {
        use ed25519_dalek::Signer;
        let signature = enclave.sign(&r.message().unwrap()).to_bytes();
        shared::swap::SwapReceipt {
            enclave_pubkey: shared::b64::encode(enclave.verifying_key().as_bytes()),
            signature: shared::b64::encode(signature),
            ..r
        }
    };
    let receipt = sign(receipt);
    let first = log.commit_swap(&receipt, 10).await.unwrap();
    // The step redone later signs again, with a later timestamp.
    let later = sign(shared::swap::SwapReceipt { timestamp: 2, ..receipt.clone() });
    let again = log.commit_swap(&later, 11).await.unwrap();
    assert_eq!(first, again, "a session's receipt is committed once");
    let stored = sessions::get(store, &receipt.session_id).await.unwrap().unwrap();
    assert_eq!(stored.attestation_tx_sig.as_deref(), Some(first.as_str()));
    assert_eq!(stored.attestation_address.as_deref(), Some(receipt.address.as_str()));
    let kept: shared::swap::SwapReceipt = serde_json::from_str(&stored.receipt_json.unwrap()).unwrap();
    assert_eq!(kept.timestamp, 1, "the first receipt stays");
    // In the transparency log once, as the first receipt's entry.
    let entries = relay::receipts::log::read::entries(store.pool(), 0, 10).await.unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].entry, hex::encode(shared::tlog::entry::swap(&receipt).unwrap()));
}

/// The order's addresses and amounts are stored as their text and read back typed; a row whose
/// text is not one (a hostile or broken write to the database) is refused, not read as a
/// default.
async fn typed_columns(store: &Store) {
    sessions::insert(store.pool(), &session("t", 1_000_000)).await.unwrap();
    let row: (String, String, String) =
        sqlx::query_as("SELECT payer, amount, min_out FROM swap_sessions WHERE id = 't'")
            .fetch_one(store.pool())
            .await
            .unwrap();
    assert_eq!(row, (Address([1; 32]).to_string(), "10000000".to_string(), "99".to_string()));
    for (column, bad) in [("payer", "not base58"), ("amount", "010"), ("min_out", "-1"), ("destination", "")] {
        let id = format!("t-{column}");
        // Not expired (no worker claims it in the tests after this one).
        sessions::insert(store.pool(), &session(&id, 1_000_000)).await.unwrap();
        sqlx::query(&format!("UPDATE swap_sessions SET {column} = $1 WHERE id = $2"))
            .bind(bad)
            .bind(&id)
            .execute(store.pool())
            .await
            .unwrap();
        let read = sessions::get(store, &id).await;
        assert!(read.is_err(), "{column} = {bad:?} read as {read:?}");
    }
}

/// Two relays on one database claim 20 funded sessions at once: each is taken exactly once.
async fn concurrent_claims(a: Store, b: Store) {
    let now = 5_000;
    for i in 0..20 {
        let id = format!("p{i}");
        sessions::insert(a.pool(), &session(&id, now + 600)).await.unwrap();
        sessions::record_funding(&a, &id, &format!("psig-{i}"), state::FUNDED, None, now).await.unwrap().unwrap();
    }
    let take = |store: Store| async move {
        let mut got = Vec::new();
        while let Some(s) = sessions::claim(&store, now, 300).await.unwrap() {
            if s.id.starts_with('p') {
                got.push(s.id);
            }
        }
        got
    };
    let (x, y) = tokio::join!(tokio::spawn(take(a)), tokio::spawn(take(b)));
    let mut all: Vec<String> = x.unwrap().into_iter().chain(y.unwrap()).collect();
    all.sort();
    let mut unique = all.clone();
    unique.dedup();
    assert_eq!((all.len(), unique.len()), (20, 20), "{all:?}");
}

common::on_both_stores!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    sessions_on_sqlite,
    sessions_on_postgres,
    |db| {
        lifecycle(&db.store).await;
        receipts_commit_once(&db.store).await;
        typed_columns(&db.store).await;
        concurrent_claims(db.store.clone(), Store::open(&db.url).await.unwrap()).await;
    }
);
