use shared::amount::Amount;

use super::*;

fn order(amount: u64, issued_at: u64) -> OpenOrder {
    OpenOrder {
        amount,
        destination: Address([4; 32]),
        lamports: 0,
        payout_signature: "p".into(),
        last_valid_block_height: 9,
        since_slot: 1,
        payout: "tx".into(),
        order: WithdrawalOrder {
            order_id: "o".into(),
            wallet_id: "w".into(),
            wallet: Address([0xa; 32]),
            mint: Address([0xb; 32]),
            amount: Amount(amount),
            destination: Address([0xd; 32]),
            book_version: 1,
            payout_signature: "p".into(),
            issued_at,
            enclave_pubkey: String::new(),
            signature: String::new(),
        },
    }
}

const A: Address = Address([1; 32]);
const B: Address = Address([2; 32]);

/// Each row: a step on a book holding 10 for `A` backed by 10 on chain, and what follows.
#[test]
fn credits_debits_and_solvency_as_a_table() {
    type Step = fn(&mut Book) -> Result<u64, BookError>;
    let rows: [(&str, Step, Result<u64, BookError>, u128); 8] = [
        ("credit a new transaction", |b| b.credit(&A, ("s2", 60), 5), Ok(15), 15),
        ("credit the same transaction again", |b| b.credit(&B, ("s1", 50), 5), Err(BookError::AlreadyCredited), 10),
        (
            "credit one that landed before the horizon",
            |b| b.credit(&A, ("s2", 39), 5),
            Err(BookError::BeforeHorizon(40)),
            10,
        ),
        ("credit one at the horizon", |b| b.credit(&A, ("s2", 40), 5), Ok(15), 15),
        ("debit part: the order stays owed", |b| b.debit(&A, 4, "o1", order(4, 0)), Ok(6), 10),
        ("debit all: the holder leaves", |b| b.debit(&A, 10, "o1", order(10, 0)), Ok(0), 10),
        ("debit more than held", |b| b.debit(&A, 11, "o1", order(11, 0)), Err(BookError::Insufficient), 10),
        ("credit past u64", |b| b.credit(&A, ("s3", 60), u64::MAX), Err(BookError::Overflow), 10),
    ];
    for (name, step, result, owed) in rows {
        let mut book = Book::genesis(&Address([1; 32]), &Address([2; 32]));
        book.credit(&A, ("s1", 50), 10).unwrap();
        book.horizon = 40;
        let before = book.clone();
        let got = step(&mut book);
        assert_eq!(got, result, "{name}");
        assert_eq!(book.liabilities(), owed, "{name}");
        if got.is_err() {
            assert_eq!(book, before, "{name}: a refused step changes nothing");
        }
    }
}

#[test]
fn credits_are_forgotten_below_the_horizon_and_then_refused() {
    let mut book = Book::genesis(&Address([1; 32]), &Address([2; 32]));
    book.credit(&A, ("old", 100), 1).unwrap();
    book.credit(&A, ("new", 100 + CREDIT_HORIZON_SLOTS), 1).unwrap();
    book.prune(100 + CREDIT_HORIZON_SLOTS);
    assert_eq!((book.horizon, book.credited.len()), (100, 2), "nothing is below slot 100 yet");
    book.prune(101 + CREDIT_HORIZON_SLOTS);
    assert_eq!((book.horizon, book.credited.len()), (101, 1));
    assert!(!book.was_credited("old") && book.was_credited("new"));
    assert_eq!(book.credit(&A, ("old", 100), 1), Err(BookError::BeforeHorizon(101)), "forgotten, not creditable");
    book.prune(5);
    assert_eq!(book.horizon, 101, "the horizon never moves back");
    assert_eq!(book.balance(&A), 2);
}

#[test]
fn an_order_is_owed_until_it_lands_and_then_remembered_for_its_time() {
    let mut book = Book::genesis(&Address([1; 32]), &Address([2; 32]));
    book.credit(&A, ("s1", 1), 10).unwrap();
    book.debit(&A, 10, "o1", order(10, 1_000)).unwrap();
    // The payout has not landed: the pool must still hold it.
    assert_eq!(book.solvent(9), Err(BookError::Short { held: 9, owed: 10 }));
    assert_eq!(book.solvent(10), Ok(()));
    book.landed(&["o1".into()], 2_000);
    assert_eq!((book.liabilities(), book.open_orders.len()), (0, 0));
    assert_eq!(book.done_orders.get("o1"), Some(&1_000));
    assert_eq!(book.solvent(0), Ok(()));
    book.landed(&[], 1_000 + DONE_ORDER_SECS + 1);
    assert!(book.done_orders.is_empty(), "forgotten after its time");
}

#[test]
fn a_child_names_its_parent_and_releases_nothing_yet() {
    let mut book = Book::genesis(&Address([1; 32]), &Address([2; 32]));
    book.released = Some(PrivacyAnswer::Paid);
    let parent = Head::of(7, "parent blob");
    let child = book.child(&parent);
    assert_eq!((child.version, child.parent.as_str(), child.released.is_none()), (8, &*parent.digest, true));
}

#[test]
fn the_encoding_reads_back_exactly_and_refuses_anything_else() {
    let mut book = Book::genesis(&Address([1; 32]), &Address([2; 32]));
    book.credit(&B, ("s1", 7), 3).unwrap();
    book.credit(&A, ("s2", 9), 5).unwrap();
    book.debit(&A, 2, "o1", order(2, 1)).unwrap();
    let text = book.to_plaintext();
    assert_eq!(text.len(), 4 + u32::from_le_bytes(text[..4].try_into().unwrap()) as usize + 8 + 4 * RECORD);
    assert_eq!(Book::from_plaintext(&text), Some(book.clone()));
    let fields = &text[4..4 + u32::from_le_bytes(text[..4].try_into().unwrap()) as usize];
    let at = 4 + fields.len() + 4;
    let mut swapped = text.to_vec();
    swapped[at..at + 2 * RECORD].rotate_left(RECORD);
    let mut zero = text.to_vec();
    zero[at + 32..at + RECORD].fill(0);
    let mut missing = text.to_vec();
    missing.extend_from_slice(&[0; 4]);
    for (name, bad) in [
        ("keys out of order", swapped),
        ("a zero balance", zero),
        ("bytes left over", missing),
        ("cut short", text[..text.len() - 1].to_vec()),
        ("JSON only", fields.to_vec()),
    ] {
        assert_eq!(Book::from_plaintext(&bad), None, "{name}");
    }
}

/// 20,000 encrypts of one mint (issue 24's freeze: the old JSON book passed the step's body
/// limit near 11,000) and 20,000 holders: the sealed book still fits a step with room for
/// five times more, still credits and debits, and forgets the credits a day later.
#[test]
fn twenty_thousand_encrypts_leave_the_mint_working() {
    let keks = crate::keys::sealed::Keks { current: Zeroizing::new([7; 32]), previous: Vec::new() };
    let header = crate::keys::sealed::Header {
        id: [1; 16],
        kind: super::super::BOOK_KIND.into(),
        version: super::super::keys::BOOK_FORMAT,
    };
    let mut book = Book::genesis(&Address([1; 32]), &Address([2; 32]));
    for i in 0..20_000u32 {
        let holder = Address(shared::sha256(&i.to_le_bytes()));
        book.credit(&holder, (&format!("encrypt {i}"), 1_000 + u64::from(i / 10)), 1_000).unwrap();
    }
    let sealed = shared::b64::encode(crate::keys::sealed::seal(&keks, &header, &book.to_plaintext()).unwrap());
    assert!(sealed.len() * 5 < crate::api::MAX_BOOK_STEP_BODY, "{} bytes", sealed.len());
    let opened = crate::keys::sealed::open(&keks, &shared::b64::decode(&sealed).unwrap()).unwrap();
    let mut book = Book::from_plaintext(&opened.plaintext).unwrap();
    assert_eq!((book.balances.len(), book.credited.len(), book.liabilities()), (20_000, 20_000, 20_000_000));
    book.credit(&Address([1; 32]), ("one more", 4_000), 1_000).unwrap();
    book.debit(&Address([1; 32]), 1_000, "o", order(1_000, 0)).unwrap();
    book.solvent(20_001_000).unwrap();
    book.prune(3_000 + CREDIT_HORIZON_SLOTS);
    assert_eq!(book.credited.len(), 1, "a day later only the newest credit is remembered");
}
