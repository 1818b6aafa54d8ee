//! Receipt storage and ledger commits on SQLite, and on PostgreSQL when `DATABASE_URL` is set
//! (a fresh database per run, dropped afterwards).

use std::sync::Arc;

use ed25519_dalek::SigningKey;
use relay::receipts::{CommitError, CommitLog};
use relay::store::Store;

use crate::common;
use shared::address::{Address, default_program_id};
use shared::receipt::Receipt;

async fn exercise(store: Store) {
    let ledger = Arc::new(CommitLog::new(SigningKey::from_bytes(&[4; 32]), default_program_id(), store.clone()));
    let (r1, h1) = common::receipt(1);
    let (r2, h2) = common::receipt(2);
    let tx1 = ledger.commit(&r1, &h1, 10).await.unwrap();
    let tx2 = ledger.commit(&r2, &h2, 11).await.unwrap();

    // Lookups return exactly what was stored.
    let by_address = store.receipt_by_address(&r1.address).await.unwrap().unwrap();
    assert_eq!(serde_json::from_str::<Receipt>(&by_address.receipt_json).unwrap(), r1);
    assert_eq!(by_address.tx_signature, tx1);
    let by_hash = store.receipt_by_hash(&r2.encrypted_prompt_hash).await.unwrap().unwrap();
    assert_eq!(by_hash.tx_signature, tx2);
    assert!(store.receipt_by_address(&Address([9; 32]).to_string()).await.unwrap().is_none());

    // Commits verify, carry the hash, and chain: the second's blockhash links the first.
    let c1_bytes = store.commit_by_signature(&tx1).await.unwrap().unwrap();
    let c2 = shared::ledger::parse_and_verify(&store.commit_by_signature(&tx2).await.unwrap().unwrap()).unwrap();
    let c1 = shared::ledger::parse_and_verify(&c1_bytes).unwrap();
    assert_eq!(c1.prompt_hash, h1);
    assert_eq!(c1.recent_blockhash, [0; 32]);
    assert_eq!(c2.recent_blockhash, shared::ledger::link_hash(&c1_bytes));
    assert_eq!(c1.payer, ledger.public_key());

    // One ciphertext, one receipt.
    assert!(matches!(ledger.commit(&r1, &h1, 12).await, Err(CommitError::Duplicate)));

    // Concurrent commits all land, each exactly once, with distinct sequence numbers.
    let mut tasks = Vec::new();
    for n in 10..40u8 {
        let ledger = ledger.clone();
        tasks.push(tokio::spawn(async move {
            let (r, h) = common::receipt(n.into());
            ledger.commit(&r, &h, 20).await.map(|_| r.address)
        }));
    }
    for t in tasks {
        let address = t.await.unwrap().unwrap();
        assert!(store.receipt_by_address(&address).await.unwrap().is_some());
    }
}

common::on_both_stores!(
    #[tokio::test]
    sqlite_store_and_ledger,
    postgres_store_and_ledger,
    |db| exercise(db.store.clone()).await
);

/// Sealed objects: stored and handed back as stored; a re-sealed blob replaces the stored one
/// only over the blob that was read, so two relays re-sealing one object write once.
async fn sealed_objects(store: Store) {
    use relay::enclaves::objects::{insert, load, replace_blob};
    use shared::wire::SealedObject;
    let object = SealedObject {
        id: "00112233445566778899aabbccddeeff".into(),
        kind: "signing-key".into(),
        version: 1,
        blob: "b2xk".into(),
        public_key: Some("11111111111111111111111111111111".into()),
    };
    insert(&store, &object, 10).await.unwrap();
    assert_eq!(load(&store, &object.id).await.unwrap(), Some(object.clone()));
    assert_eq!(load(&store, "ffff").await.unwrap(), None);
    assert!(insert(&store, &object, 11).await.is_err(), "one row per object id");
    assert!(replace_blob(&store, &object.id, "b2xk", "bmV3", 12).await.unwrap());
    assert!(!replace_blob(&store, &object.id, "b2xk", "b3RoZXI=", 13).await.unwrap(), "the blob moved on");
    assert_eq!(load(&store, &object.id).await.unwrap().unwrap().blob, "bmV3");
}

common::on_both_stores!(
    #[tokio::test]
    sqlite_sealed_objects,
    postgres_sealed_objects,
    |db| sealed_objects(db.store.clone()).await
);
