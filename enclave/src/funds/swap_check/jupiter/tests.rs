//! The Jupiter rule set on real mainnet transactions (known answers) and one mutation per rule
//! of a transaction in the shape the enclave asks for.

use ed25519_dalek::SigningKey;
use serde_json::Value;
use shared::solana::compute_budget::{set_compute_unit_limit, set_compute_unit_price};
use shared::solana::{AccountMeta, Instruction, MessageV0, associated_token, token};

use super::*;

const VECTORS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/test-vectors/jupiter-mainnet");

fn address(text: &str) -> Address {
    Address::parse(text).unwrap()
}

/// A vector's transaction and its JSON description (test-vectors/jupiter-mainnet/README.md).
fn vector(name: &str) -> (Transaction, Value) {
    let b64 = std::fs::read_to_string(format!("{VECTORS}/{name}.tx.b64")).unwrap();
    let tx = Transaction::parse(&shared::b64::decode(b64.trim()).unwrap()).unwrap();
    let json = std::fs::read_to_string(format!("{VECTORS}/{name}.json")).unwrap();
    (tx, serde_json::from_str(&json).unwrap())
}

/// Terms built from a vector's Jupiter route: the session key is its user, the amounts its own,
/// the minimum its quote less its slippage.
fn terms_of(json: &Value) -> (ParsedTerms, Address) {
    let route = json["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|ix| ix.get("jupiter").filter(|j| j["instruction"].as_str().unwrap().contains("route")))
        .unwrap();
    let named = |name: &str| route["named_accounts"][name]["pubkey"].as_str().map(address);
    let arg = |name: &str| route["args"][name].as_u64().unwrap();
    // A v1 `route` names no source mint: the source account's, from the balance changes.
    let source = named("source_token_account").or_else(|| named("user_source_token_account")).unwrap();
    let changed_mint = json["token_balance_changes"].as_array().unwrap().iter().find_map(|c| {
        (c["account"].as_str() == Some(&source.to_string())).then(|| address(c["mint"].as_str().unwrap()))
    });
    let least = u128::from(arg("quoted_out_amount")) * u128::from(10_000 - arg("slippage_bps")) / 10_000;
    let terms = ParsedTerms {
        session_id: [1; 16],
        payer: Address([2; 32]),
        from_mint: named("source_mint").or(changed_mint).unwrap_or(Address([4; 32])),
        to_mint: named("destination_mint").unwrap(),
        amount: arg("in_amount"),
        destination: Address([3; 32]),
        min_out: least as u64,
        expires_at: 0,
    };
    (terms, named("user_transfer_authority").unwrap())
}

#[test]
fn real_mainnet_swaps_get_the_verdicts_their_shapes_imply() {
    use Rule::*;
    let fee = FeeBudget("the priority fee is above the session's fee budget");
    // Every real transaction is a v1 route or gasless: each is refused, for its route and for
    // what surrounds it (wrapping SOL through System transfers, SyncNative and CloseAccount;
    // wallets' own instructions; mainnet priority fees above the session's budget).
    let expected: [(&str, Vec<Rule>); 10] = [
        ("mm-usdc-to-jup-route", vec![fee, V1Route]),
        ("mm-sol-to-usdc-route-wrap", vec![OtherProgram, OtherProgram, OtherProgram, OtherProgram, V1Route]),
        ("mm-usdc-to-sol-route-unwrap", vec![OtherProgram, OtherProgram, V1Route]),
        // Slippage 0, failed on chain with 6001: the program enforces its minimum.
        ("mm-route-slippage0-failed-6001", vec![V1Route]),
        // LI.FI's tracker, its fee accounts created for other wallets and paid on the side.
        (
            "mm-trump-to-jup-shared-lifi",
            vec![OtherProgram, ForeignAccount, OtherProgram, ForeignAccount, OtherProgram, fee, V1Route],
        ),
        ("mm-shared-failed-before-jupiter", vec![OtherProgram; 6].into_iter().chain([fee, V1Route]).collect()),
        ("gem-sol-to-usdt-shared", vec![OtherProgram, OtherProgram, OtherProgram, fee, V1Route]),
        // Jupiter's own create_token_account beside the route: two Jupiter instructions.
        ("gem-token-to-sol-route", vec![OtherProgram, fee, RouteCount]),
        // The Token-2022 source (its program_source is the user's own source account) is a v1
        // route; its shape in a v2 route is refused by rule 7 (the mutations below).
        ("gem-token2022-to-usdt-shared", vec![fee, V1Route]),
        // The one v2 route decodes and is refused: gasless (another key signs first and pays), a
        // System instruction after it, a high fee, a 12 bps platform fee, and its destination
        // mint loaded from a lookup table.
        ("v2-shared-usdc-gasless", vec![OnlySigner, OtherProgram, fee, PlatformFee, LookedUp("destination mint")]),
    ];
    let mut wrong = Vec::new();
    for (name, rules) in expected {
        let (tx, json) = vector(name);
        let (terms, session) = terms_of(&json);
        let (broken, _) = broken_rules(&terms, &session, &tx);
        if broken != rules {
            wrong.push(format!("{name}: {broken:?}"));
        }
        assert!(check_swap(&terms, &session, &tx).is_err(), "{name}");
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // The unsigned MetaMask transaction: LI.FI around a shared v1 route.
    let b64 = std::fs::read_to_string(format!("{VECTORS}/mm-unsigned-shared-lifi.tx.b64")).unwrap();
    let tx = Transaction::parse(&shared::b64::decode(b64.trim()).unwrap()).unwrap();
    let session = *tx.message.fee_payer().unwrap();
    let terms = ParsedTerms {
        from_mint: Address([4; 32]),
        to_mint: Address([5; 32]),
        ..terms_of(&vector("mm-usdc-to-jup-route").1).0
    };
    assert_eq!(broken_rules(&terms, &session, &tx).0.last(), Some(&V1Route));
}

/// The v2 vector with only the numbers the rule set reads: it decodes at the fixed offsets to
/// the README's values, and its least output is the quote less 1%.
#[test]
fn the_real_v2_route_decodes_to_the_readmes_numbers() {
    let (tx, json) = vector("v2-shared-usdc-gasless");
    let (terms, _) = terms_of(&json);
    let route =
        tx.message.instructions().iter().find(|ix| tx.message.program_id(ix) == Some(&JUPITER_PROGRAM)).unwrap();
    let args = SharedRouteV2::decode(&route.data).unwrap();
    assert_eq!((args.in_amount, args.quoted_out_amount, args.slippage_bps), (1_000_000_000, 1_271_644_772_520, 100));
    assert_eq!(args.least_out(), Some(terms.min_out));
}

/// The real `/swap-instructions` answers, compiled as the enclave compiles a router's answer:
/// v1 routes, refused as such.
#[test]
fn real_swap_instructions_answers_compile_and_are_refused_by_name() {
    const JUP: &str = "JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN";
    const USDC: &str = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
    // Shared v1 routes wrapping SOL (System transfer, SyncNative, CloseAccount: three other
    // programs' instructions); one with a Jito tip (a System transfer) on top.
    for (name, to_mint, others) in [
        ("ilkamo-swap-instructions-without-jito", JUP, 3),
        ("ilkamo-swap-instructions-with-jito", JUP, 4),
        ("jupiter-go-swap-instructions-sol-to-usdc", USDC, 3),
    ] {
        let text = std::fs::read_to_string(format!("{VECTORS}/api-responses/{name}.json")).unwrap();
        let answer: Value = serde_json::from_str(&text).unwrap();
        let instruction = |v: &Value| Instruction {
            program_id: address(v["programId"].as_str().unwrap()),
            accounts: v["accounts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| AccountMeta {
                    pubkey: address(m["pubkey"].as_str().unwrap()),
                    is_signer: m["isSigner"].as_bool().unwrap(),
                    is_writable: m["isWritable"].as_bool().unwrap(),
                })
                .collect(),
            data: shared::b64::decode(v["data"].as_str().unwrap()).unwrap(),
        };
        let mut ixs: Vec<Instruction> = Vec::new();
        for list in ["computeBudgetInstructions", "setupInstructions"] {
            ixs.extend(answer[list].as_array().unwrap().iter().map(instruction));
        }
        ixs.push(instruction(&answer["swapInstruction"]));
        ixs.extend(answer.get("cleanupInstruction").filter(|v| !v.is_null()).map(instruction));
        ixs.extend(answer.get("otherInstructions").and_then(Value::as_array).into_iter().flatten().map(instruction));
        let user = ixs.last().unwrap().accounts.iter().find(|m| m.is_signer).unwrap().pubkey;
        let message = MessageV0::compile(&user, &ixs, [7; 32]).unwrap();
        let tx = Transaction::new_unsigned(message);
        let (from_mint, to_mint) = (shared::solana::programs::NATIVE_MINT, address(to_mint));
        let terms = ParsedTerms {
            session_id: [1; 16],
            payer: user,
            from_mint,
            to_mint,
            amount: 1,
            destination: user,
            min_out: 1,
            expires_at: 0,
        };
        let expected: Vec<Rule> = vec![Rule::OtherProgram; others].into_iter().chain([Rule::V1Route]).collect();
        assert_eq!(broken_rules(&terms, &user, &tx).0, expected, "{name}");
    }
}

// ---- Mutations of a transaction in the requested shape ----

struct Swap {
    terms: ParsedTerms,
    session: Address,
    args: SharedRouteV2,
    /// The route's accounts after the named twelve (an AMM's).
    amm: Vec<AccountMeta>,
    extra: Vec<Instruction>,
    fee_price: u64,
    /// Keys in the lookup table beside the route's Jupiter-owned accounts.
    in_table: Vec<Address>,
}

fn a(n: u8) -> Address {
    Address([n; 32])
}

fn swap() -> Swap {
    let session = Address(SigningKey::from_bytes(&[9; 32]).verifying_key().to_bytes());
    let terms = ParsedTerms {
        session_id: [7; 16],
        payer: a(1),
        from_mint: a(20),
        to_mint: a(21),
        amount: 1_000_000,
        destination: a(30),
        min_out: 495_000,
        expires_at: 0,
    };
    let args = SharedRouteV2 {
        id: 8,
        in_amount: 1_000_000,
        quoted_out_amount: 500_000,
        slippage_bps: 100,
        platform_fee_bps: 0,
        positive_slippage_bps: 0,
    };
    let amm = vec![AccountMeta::writable(a(60), false), AccountMeta::readonly(a(61), false)];
    Swap { terms, session, args, amm, extra: vec![], fee_price: 50_000, in_table: vec![] }
}

impl Swap {
    fn route(&self) -> Instruction {
        let s = self.session;
        let mut accounts = vec![
            AccountMeta::readonly(a(40), false), // program authority
            AccountMeta::readonly(s, true),
            AccountMeta::writable(ata(&s, &self.terms.from_mint), false),
            AccountMeta::writable(a(41), false), // program source
            AccountMeta::writable(a(42), false), // program destination
            AccountMeta::writable(ata(&s, &self.terms.to_mint), false),
            AccountMeta::readonly(self.terms.from_mint, false),
            AccountMeta::readonly(self.terms.to_mint, false),
            AccountMeta::readonly(TOKEN_PROGRAM, false),
            AccountMeta::readonly(TOKEN_PROGRAM, false),
            AccountMeta::readonly(jupiter::EVENT_AUTHORITY, false),
            AccountMeta::readonly(JUPITER_PROGRAM, false),
        ];
        accounts.extend(self.amm.iter().cloned());
        Instruction { program_id: JUPITER_PROGRAM, accounts, data: self.args.encode(&[0, 0, 0, 0]) }
    }

    fn tx_with(&self, route: Instruction) -> Transaction {
        let s = self.session;
        let mut ixs = vec![
            set_compute_unit_limit(200_000),
            set_compute_unit_price(self.fee_price),
            associated_token::create_idempotent(&s, &s, &self.terms.to_mint, &TOKEN_PROGRAM),
            route,
        ];
        ixs.extend(self.extra.iter().cloned());
        // Jupiter's table holds its own accounts, the mints and the AMM's; the enclave keeps the
        // session's accounts and the destination mint static.
        let mut table = vec![a(40), a(41), a(42), a(60), a(61), self.terms.from_mint, self.terms.to_mint];
        table.extend(self.in_table.iter().copied());
        let keep = [ata(&s, &self.terms.from_mint), ata(&s, &self.terms.to_mint), self.terms.to_mint];
        let keep: Vec<Address> = keep.into_iter().filter(|k| !self.in_table.contains(k)).collect();
        let message = MessageV0::compile_with_lookups(&s, &ixs, [9; 32], &[(a(50), table)], &keep).unwrap();
        Transaction::new_unsigned(message)
    }

    fn tx(&self) -> Transaction {
        self.tx_with(self.route())
    }

    fn check(&self) -> Result<u64, CheckError> {
        check_swap(&self.terms, &self.session, &self.tx())
    }

    fn broken(&self) -> Vec<Rule> {
        broken_rules(&self.terms, &self.session, &self.tx()).0
    }
}

#[test]
fn the_requested_shape_is_accepted_with_lookup_tables() {
    let s = swap();
    let tx = s.tx();
    assert!(!tx.message.address_table_lookups().is_empty(), "the route's own accounts are loaded");
    assert_eq!(s.check(), Ok(495_000));
    // Legacy (no table) too.
    let ixs = [set_compute_unit_limit(200_000), s.route()];
    let legacy = Transaction::new_unsigned(shared::solana::Message::compile(&s.session, &ixs, [9; 32]).unwrap());
    assert_eq!(check_swap(&s.terms, &s.session, &legacy), Ok(495_000));
}

#[test]
fn each_rule_refuses_its_mutation() {
    use Rule::*;
    let mutate = |f: &dyn Fn(&mut Swap)| {
        let mut s = swap();
        f(&mut s);
        s
    };
    // 4: amounts.
    let s = mutate(&|s| s.args.in_amount += 1);
    assert_eq!(s.broken(), [InAmount(1_000_001)]);
    let s = mutate(&|s| s.args.quoted_out_amount = 499_999);
    assert_eq!(s.check(), Err(CheckError::OutputBelowMinimum { paid: 494_999, minimum: 495_000 }));
    let s = mutate(&|s| s.args.slippage_bps = 101);
    assert_eq!(s.broken(), [BelowMinimum { least_out: 494_950, minimum: 495_000 }]);
    let s = mutate(&|s| s.args.slippage_bps = 10_001);
    assert_eq!(s.broken(), [BelowMinimum { least_out: 0, minimum: 495_000 }]);
    let s = mutate(&|s| s.args.platform_fee_bps = 12);
    assert_eq!(s.broken(), [PlatformFee]);
    let s = mutate(&|s| s.args.positive_slippage_bps = 1);
    assert_eq!(s.broken(), [PositiveSlippage]);
    // 5: the destination swapped, or moved into the lookup table; the destination mint too.
    let s = swap();
    let mut route = s.route();
    route.accounts[5].pubkey = ata(&a(30), &s.terms.to_mint);
    assert_eq!(broken_rules(&s.terms, &s.session, &s.tx_with(route)).0, [WrongAccount("destination token account")]);
    // (The output account's creation then names a loaded account too.)
    let s = mutate(&|s| s.in_table.push(ata(&s.session, &s.terms.to_mint)));
    assert_eq!(s.broken(), [ForeignAccount, LookedUp("destination token account")]);
    let s = mutate(&|s| s.in_table.push(ata(&s.session, &s.terms.from_mint)));
    assert_eq!(s.broken(), [LookedUp("source token account")]);
    let s = mutate(&|s| s.in_table.push(s.terms.to_mint));
    assert_eq!(s.broken(), [LookedUp("destination mint")]);
    // The authority slot pointing at a loaded account (a signer cannot be loaded).
    let s = swap();
    let mut tx = s.tx();
    let shared::solana::VersionedMessage::V0(m) = &mut tx.message else { panic!("v0") };
    let static_len = m.account_keys.len() as u8;
    m.instructions[3].accounts[1] = static_len;
    assert_eq!(broken_rules(&s.terms, &s.session, &tx).0, [LookedUp("user transfer authority")]);
    // 6: a pinned slot that is static and wrong.
    let mut route = s.route();
    route.accounts[8].pubkey = shared::solana::programs::TOKEN_2022_PROGRAM;
    assert_eq!(broken_rules(&s.terms, &s.session, &s.tx_with(route)).0, [WrongAccount("source token program")]);
    // 7: the session key or its accounts elsewhere in the route.
    let s = mutate(&|s| s.amm.push(AccountMeta::readonly(s.session, false)));
    assert_eq!(s.broken(), [SessionElsewhere]);
    let s = swap();
    let mut route = s.route();
    route.accounts[3].pubkey = ata(&s.session, &s.terms.from_mint);
    assert_eq!(
        broken_rules(&s.terms, &s.session, &s.tx_with(route)).0,
        [SessionElsewhere],
        "the Token-2022-source shape"
    );
    // 2: an extra instruction naming the session key; a fee account paid on the side.
    let drain = token::transfer(&ata(&s.session, &s.terms.from_mint), &a(70), &s.session, 1);
    let s = mutate(&|s| s.extra.push(drain.clone()));
    assert_eq!(s.broken(), [OtherProgram]);
    let fee =
        token::transfer_checked(&ata(&s.session, &s.terms.from_mint), &s.terms.from_mint, &a(71), &s.session, 1, 6);
    let s = mutate(&|s| s.extra.push(fee.clone()));
    assert_eq!(s.broken(), [OtherProgram]);
    let foreign = associated_token::create_idempotent(&s.session, &a(30), &s.terms.to_mint, &TOKEN_PROGRAM);
    let s = mutate(&|s| s.extra.push(foreign.clone()));
    assert_eq!(s.broken(), [ForeignAccount]);
    let s = mutate(&|s| s.fee_price = 100_001);
    assert_eq!(s.broken(), [FeeBudget("the priority fee is above the session's fee budget")]);
    let s = swap();
    let second = s.route();
    let s = mutate(&|s| s.extra.push(second.clone()));
    assert_eq!(s.broken(), [RouteCount]);
    // 1: a second signer.
    let s = mutate(&|s| s.amm.push(AccountMeta::readonly(a(80), true)));
    assert_eq!(s.broken(), [OnlySigner]);
    // 3: other route instructions under the same accounts.
    for (kind, rule) in [
        (RouteKind::SharedAccountsExactOutRouteV2, ExactOut),
        (RouteKind::ExactOutRouteV2, ExactOut),
        (RouteKind::RouteV2, NotSharedAccounts),
        (RouteKind::SharedAccountsRoute, V1Route),
        (RouteKind::Route, V1Route),
        (RouteKind::SharedAccountsRouteWithTokenLedger, TokenLedger),
    ] {
        let s = swap();
        let mut route = s.route();
        route.data[..8].copy_from_slice(&kind.discriminator());
        assert_eq!(broken_rules(&s.terms, &s.session, &s.tx_with(route)).0, [rule], "{kind:?}");
    }
    let s = swap();
    let mut route = s.route();
    route.data = route.data[..30].to_vec();
    assert_eq!(broken_rules(&s.terms, &s.session, &s.tx_with(route)).0, [NotARoute], "too short");
    let mut route = s.route();
    route.accounts.truncate(11);
    assert_eq!(broken_rules(&s.terms, &s.session, &s.tx_with(route)).0, [NotARoute], "too few accounts");
}
