use ed25519_dalek::SigningKey;
use shared::solana::{Instruction, Message, associated_token, memo, system};

use super::*;

fn a(n: u8) -> Address {
    Address([n; 32])
}

fn key(n: u8) -> SigningKey {
    SigningKey::from_bytes(&[n; 32])
}

fn addr(k: &SigningKey) -> Address {
    Address(k.verifying_key().to_bytes())
}

struct Fixture {
    terms: ParsedTerms,
    session: SigningKey,
    pool: SigningKey,
}

fn fixture() -> Fixture {
    let payer = key(1);
    let terms = ParsedTerms {
        session_id: [7; 16],
        payer: addr(&payer),
        from_mint: a(20),
        to_mint: a(21),
        amount: 1_000_000,
        destination: a(30),
        min_out: 990,
        expires_at: 1_800_000_000,
    };
    Fixture { terms, session: key(2), pool: key(3) }
}

fn tx(payer: &Address, ixs: &[Instruction]) -> Transaction {
    Transaction::new_unsigned(Message::compile(payer, ixs, [9; 32]).unwrap())
}

fn funding(f: &Fixture, amount: u64, mint: Address, with_memo: bool) -> Transaction {
    let s = addr(&f.session);
    let mut ixs = vec![
        associated_token::create_idempotent(&f.terms.payer, &s, &mint, &TOKEN_PROGRAM),
        token::transfer_checked(&ata(&f.terms.payer, &mint), &mint, &ata(&s, &mint), &f.terms.payer, amount, 6),
        system::transfer(&f.terms.payer, &s, 5_000_000),
    ];
    if with_memo {
        ixs.push(memo::memo(shared::swap::funding::memo_text(&f.terms.session_id).as_bytes(), &[&f.terms.payer]));
    }
    tx(&f.terms.payer, &ixs)
}

#[test]
fn the_session_funding_is_accepted_and_every_wrong_one_named() {
    let f = fixture();
    let s = addr(&f.session);
    assert_eq!(check_funding(&f.terms, &s, &funding(&f, 1_000_000, a(20), true), false), Ok(()));
    assert_eq!(check_funding(&f.terms, &s, &funding(&f, 1_000_000, a(20), true), true), Err(CheckError::FundingFailed));
    assert_eq!(
        check_funding(&f.terms, &s, &funding(&f, 999_999, a(20), true), false),
        Err(CheckError::FundingWrongAmount { moved: 999_999, expected: 1_000_000 })
    );
    assert_eq!(
        check_funding(&f.terms, &s, &funding(&f, 1_000_000, a(22), true), false),
        Err(CheckError::FundingWrongMint)
    );
    assert_eq!(
        check_funding(&f.terms, &s, &funding(&f, 1_000_000, a(20), false), false),
        Err(CheckError::FundingNotForThisSession)
    );
    // Another session's memo: the same payer and amount do not fund this session.
    let mut other = fixture();
    other.terms.session_id = [8; 16];
    assert_eq!(
        check_funding(&other.terms, &s, &funding(&f, 1_000_000, a(20), true), false),
        Err(CheckError::FundingNotForThisSession)
    );
    // Signed by someone else.
    let stranger = key(9);
    let mut not_payer = fixture();
    not_payer.terms.payer = addr(&stranger);
    assert_eq!(
        check_funding(&not_payer.terms, &s, &funding(&f, 1_000_000, a(20), true), false),
        Err(CheckError::FundingWrongPayer)
    );
}

fn swap(f: &Fixture, spend: u64, pay: u64, extra: Vec<Instruction>) -> Transaction {
    let s = addr(&f.session);
    let pool = addr(&f.pool);
    let mut ixs = vec![
        associated_token::create_idempotent(&s, &s, &f.terms.to_mint, &TOKEN_PROGRAM),
        token::transfer_checked(
            &ata(&s, &f.terms.from_mint),
            &f.terms.from_mint,
            &ata(&pool, &f.terms.from_mint),
            &s,
            spend,
            6,
        ),
        token::transfer_checked(
            &ata(&pool, &f.terms.to_mint),
            &f.terms.to_mint,
            &ata(&s, &f.terms.to_mint),
            &pool,
            pay,
            9,
        ),
    ];
    ixs.extend(extra);
    let mut t = tx(&s, &ixs);
    t.sign(&[&f.pool]).unwrap();
    t
}

#[test]
fn the_router_swap_is_accepted_within_the_rules() {
    let f = fixture();
    let s = addr(&f.session);
    let t = swap(&f, 1_000_000, 1_500, vec![]);
    assert_eq!(check_swap(&f.terms, &s, &t, &[]), Ok(1_500));
    assert!(other_signers_present(&t, &s));
}

#[test]
fn a_router_swap_that_breaks_a_rule_is_refused() {
    let f = fixture();
    let s = addr(&f.session);
    let check = |t: &Transaction| check_swap(&f.terms, &s, t, &[]);
    assert_eq!(
        check(&swap(&f, 1_000_000, 989, vec![])),
        Err(CheckError::OutputBelowMinimum { paid: 989, minimum: 990 })
    );
    assert!(matches!(check(&swap(&f, 1_000_001, 1_500, vec![])), Err(CheckError::RouterTransaction(_))));
    // A second transfer out of the session's input, to anyone.
    let drain = token::transfer(&ata(&s, &f.terms.from_mint), &ata(&a(40), &f.terms.from_mint), &s, 1);
    assert!(matches!(check(&swap(&f, 1_000_000, 1_500, vec![drain])), Err(CheckError::RouterTransaction(_))));
    // The session key closing its account, or paying lamports out.
    let close = token::close_account(&ata(&s, &f.terms.from_mint), &a(40), &s);
    assert!(matches!(check(&swap(&f, 1_000_000, 1_500, vec![close])), Err(CheckError::RouterTransaction(_))));
    let lamports = system::transfer(&s, &a(40), 1);
    assert!(matches!(check(&swap(&f, 1_000_000, 1_500, vec![lamports])), Err(CheckError::RouterTransaction(_))));
    // A priority fee above the session's fee budget, or an unknown compute budget call.
    use shared::solana::compute_budget::{set_compute_unit_limit, set_compute_unit_price};
    let fine = vec![set_compute_unit_limit(200_000), set_compute_unit_price(100_000)];
    assert_eq!(check(&swap(&f, 1_000_000, 1_500, fine)), Ok(1_500), "20,000 lamports: at the cap");
    let costly = vec![set_compute_unit_limit(200_000), set_compute_unit_price(100_001)];
    assert!(matches!(check(&swap(&f, 1_000_000, 1_500, costly)), Err(CheckError::RouterTransaction(_))));
    let unlimited = vec![set_compute_unit_price(20_000)];
    assert!(matches!(check(&swap(&f, 1_000_000, 1_500, unlimited)), Err(CheckError::RouterTransaction(_))));
    let heap = Instruction {
        program_id: shared::solana::programs::COMPUTE_BUDGET_PROGRAM,
        accounts: vec![],
        data: vec![1, 0, 0, 1, 0],
    };
    assert!(matches!(check(&swap(&f, 1_000_000, 1_500, vec![heap])), Err(CheckError::RouterTransaction(_))));
    // Funding someone else's account.
    let create = associated_token::create_idempotent(&s, &a(40), &f.terms.to_mint, &TOKEN_PROGRAM);
    assert!(matches!(check(&swap(&f, 1_000_000, 1_500, vec![create])), Err(CheckError::RouterTransaction(_))));
    // Someone else pays the fee (the session key would sign an arbitrary payer's transaction).
    let pool = addr(&f.pool);
    let mut other_payer = tx(
        &pool,
        &[token::transfer_checked(
            &ata(&s, &f.terms.from_mint),
            &f.terms.from_mint,
            &ata(&pool, &f.terms.from_mint),
            &s,
            1_000_000,
            6,
        )],
    );
    other_payer.sign(&[&f.pool]).unwrap();
    assert!(matches!(check(&other_payer), Err(CheckError::RouterTransaction(_))));
    // An unknown program, allowed only when listed and only if it does not name the key.
    let unknown = Instruction { program_id: a(50), accounts: vec![], data: vec![1] };
    let t = swap(&f, 1_000_000, 1_500, vec![unknown]);
    assert!(matches!(check(&t), Err(CheckError::RouterTransaction(_))));
    assert_eq!(check_swap(&f.terms, &s, &t, &[a(50)]), Ok(1_500));
}
