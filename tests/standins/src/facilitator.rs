//! Stand-in for an x402 facilitator (the HTTP API of `x402-foundation/x402` `specs/`, the same in
//! v1 and v2): `GET /supported`, `POST /verify`, `POST /settle`, each body
//! `{x402Version, paymentPayload, paymentRequirements}`.
//!
//! It really reads the client's payment: the base64, partially signed Solana transaction
//! (legacy or v0) of the SVM `exact` scheme, and applies the scheme's checks that need no chain
//! (`specs/schemes/exact/scheme_exact_svm.md`, static path): 3 to 7 instructions in the order
//! SetComputeUnitLimit, SetComputeUnitPrice (at most 5 lamports per CU), TransferChecked under
//! SPL Token or Token-2022 (mint = `asset`, destination = the associated token account of
//! (`payTo`, `asset`) under that program, amount = the required amount exactly), then only
//! Lighthouse or Memo instructions; at least one Memo, exactly one equal to `extra.memo` when
//! that is set; the fee payer is account 0, is ours, appears in no instruction and is not the
//! transfer authority; no address lookup tables; every required signature but the fee payer's
//! verifies (ed25519 over the message). Refusals carry the reference reason codes.
//!
//! `/settle` verifies again, refuses a transaction already settled in the last 120 s
//! (`duplicate_settlement`, keyed by the message so the empty fee-payer slot cannot be varied),
//! signs as fee payer and answers the transaction signature (base58). Nothing is submitted
//! anywhere. [`Facilitator`] records every request and settlement; `fail_with` makes later
//! requests fail at the HTTP level and `refuse_settlement` makes `/settle` answer a failure.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use ed25519_dalek::SigningKey;
use serde_json::{Value, json};
use shared::address::Address;
pub use shared::solana::{AccountMeta, Instruction, Transaction};
use shared::solana::{MessageV0, compute_budget, memo, token};

pub use shared::x402::{
    COMPUTE_BUDGET_PROGRAM, LIGHTHOUSE_PROGRAM, MAX_COMPUTE_UNIT_LIMIT, MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS,
    MAX_MEMO_BYTES, MEMO_PROGRAM, TOKEN_2022_PROGRAM, TOKEN_PROGRAM, associated_token_account,
};
pub const ASSOCIATED_TOKEN_PROGRAM: &str = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL";
/// How long a settled transaction is remembered (`SETTLEMENT_TTL_MS`).
pub const SETTLEMENT_TTL: Duration = Duration::from_secs(120);

/// Networks served: v1 names and their CAIP-2 ids.
pub const NETWORKS: [(&str, &str); 2] = [
    ("solana", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"),
    ("solana-devnet", "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"),
];

/// Seed of the fee payer key (a test key; it signs nothing real).
const FEE_PAYER_SEED: &[u8] = b"standins x402 facilitator fee payer";

fn key(text: &str) -> [u8; 32] {
    Address::parse(text).expect("a constant address").0
}

// ---------------------------------------------------------------------------------------------
// Solana transactions: `shared::solana` (the codec the enclave uses) reads and writes them.

/// Compiles a v0 message with `fee_payer` first, as Solana's `v0::Message::try_compile` (no
/// lookup tables).
pub fn compile_v0(fee_payer: [u8; 32], instructions: &[Instruction], blockhash: [u8; 32]) -> MessageV0 {
    MessageV0::compile(&Address(fee_payer), instructions, blockhash).expect("a test payment compiles")
}

/// A wire transaction of `message` with every signer's slot filled by `signers` where they hold
/// the key, and left empty (zeros) otherwise, as a client leaves the fee payer's.
pub fn partially_sign(message: &MessageV0, signers: &[&SigningKey]) -> Vec<u8> {
    let mut tx = Transaction::new_unsigned(message.clone());
    let required = tx.message.signer_keys().to_vec();
    let holding: Vec<&SigningKey> =
        signers.iter().copied().filter(|k| required.contains(&Address(k.verifying_key().to_bytes()))).collect();
    tx.sign(&holding).expect("only required signers sign");
    tx.serialize()
}

/// What an `exact` payment transaction is made of; [`ExactPayment::build`] gives the wire bytes
/// the reference client would send.
#[derive(Debug, Clone)]
pub struct ExactPayment {
    pub fee_payer: [u8; 32],
    pub owner: SigningKey,
    pub pay_to: [u8; 32],
    pub mint: [u8; 32],
    pub token_program: [u8; 32],
    pub amount: u64,
    pub decimals: u8,
    pub compute_unit_limit: u32,
    pub compute_unit_price: u64,
    pub memo: Vec<u8>,
    pub blockhash: [u8; 32],
}

impl ExactPayment {
    /// The reference client's defaults: USDC under SPL Token, 20 000 CU at 1 µlamport, a
    /// 32-hex-character memo.
    pub fn new(fee_payer: [u8; 32], owner: SigningKey, pay_to: [u8; 32], amount: u64) -> Self {
        ExactPayment {
            fee_payer,
            owner,
            pay_to,
            mint: key(crate::solana_rpc::USDC),
            token_program: key(TOKEN_PROGRAM),
            amount,
            decimals: 6,
            compute_unit_limit: 20_000,
            compute_unit_price: 1,
            memo: b"0123456789abcdef0123456789abcdef".to_vec(),
            blockhash: [7; 32],
        }
    }

    /// The three required instructions and the memo, in the scheme's order.
    pub fn instructions(&self) -> Vec<Instruction> {
        let owner = self.owner.verifying_key().to_bytes();
        let source = associated_token_account(&owner, &self.mint, &self.token_program);
        let destination = associated_token_account(&self.pay_to, &self.mint, &self.token_program);
        let mut transfer = token::transfer_checked(
            &Address(source),
            &Address(self.mint),
            &Address(destination),
            &Address(owner),
            self.amount,
            self.decimals,
        );
        // The same layout under SPL Token and Token-2022.
        transfer.program_id = Address(self.token_program);
        vec![
            compute_budget::set_compute_unit_limit(self.compute_unit_limit),
            compute_budget::set_compute_unit_price(self.compute_unit_price),
            transfer,
            memo::memo(&self.memo, &[]),
        ]
    }

    pub fn build(&self) -> Vec<u8> {
        self.build_with(&self.instructions())
    }

    /// Compiles and signs other instructions (for malformed payments).
    pub fn build_with(&self, instructions: &[Instruction]) -> Vec<u8> {
        partially_sign(&compile_v0(self.fee_payer, instructions, self.blockhash), &[&self.owner])
    }
}

// ---------------------------------------------------------------------------------------------
// Verification: the scheme's checks, shared with the relay's built-in facilitator.

pub use shared::x402::{Accepted, Refusal, check};

// ---------------------------------------------------------------------------------------------
// The server.

/// One request the stand-in answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    pub path: String,
    pub body: Value,
}

/// One settlement it made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settlement {
    /// base58 of the fee payer's signature: the transaction id.
    pub transaction: String,
    pub payer: String,
    pub network: String,
    pub amount: u64,
    /// The fully signed transaction (base64), as it would be submitted.
    pub signed_transaction: String,
}

#[derive(Default)]
struct Inner {
    seen: Mutex<Vec<Seen>>,
    settled: Mutex<HashMap<[u8; 32], Instant>>,
    settlements: Mutex<Vec<Settlement>>,
    failure: Mutex<Option<u16>>,
    refuse_settlement: Mutex<Option<&'static str>>,
}

/// The running stand-in's state.
#[derive(Clone)]
pub struct Facilitator {
    key: Arc<SigningKey>,
    inner: Arc<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Facilitator {
    /// The fee payer's address (base58), as `/supported` names it.
    pub fn fee_payer(&self) -> String {
        Address(self.fee_payer_bytes()).to_string()
    }
    pub fn fee_payer_bytes(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }
    /// Every request, in order.
    pub fn requests(&self) -> Vec<Seen> {
        lock(&self.inner.seen).clone()
    }
    /// Requests to `path` (`/verify`, `/settle`, `/supported`).
    pub fn requests_to(&self, path: &str) -> Vec<Seen> {
        self.requests().into_iter().filter(|s| s.path == path).collect()
    }
    pub fn settlements(&self) -> Vec<Settlement> {
        lock(&self.inner.settlements).clone()
    }
    /// Later requests answer this HTTP status with a body that is no facilitator answer.
    pub fn fail_with(&self, status: Option<u16>) {
        *lock(&self.inner.failure) = status;
    }
    /// Later settlements fail with this reason (e.g. `insufficient_funds`).
    pub fn refuse_settlement(&self, reason: Option<&'static str>) {
        *lock(&self.inner.refuse_settlement) = reason;
    }
}

pub async fn start() -> (crate::Running, Facilitator) {
    let seed: [u8; 32] = shared::sha256(FEE_PAYER_SEED);
    let facilitator = Facilitator { key: Arc::new(SigningKey::from_bytes(&seed)), inner: Arc::default() };
    let router = Router::new()
        .route("/supported", get(supported))
        .route("/verify", post(verify))
        .route("/settle", post(settle))
        .with_state(facilitator.clone());
    (crate::serve(router).await, facilitator)
}

/// The body of forced failures; tests check it never reaches a client.
pub const FAILURE_DETAIL: &str = "facilitator-internal-detail";

/// Records the request; `Err` with the forced failure's status when one is set.
fn record(f: &Facilitator, path: &str, body: &[u8]) -> Result<Value, StatusCode> {
    let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    lock(&f.inner.seen).push(Seen { path: path.to_string(), body: value.clone() });
    match *lock(&f.inner.failure) {
        Some(status) => Err(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)),
        None => Ok(value),
    }
}

async fn supported(State(f): State<Facilitator>) -> Response {
    if let Err(status) = record(&f, "/supported", b"null") {
        return (status, FAILURE_DETAIL).into_response();
    }
    let fee = f.fee_payer();
    let mut kinds = Vec::new();
    for (v1, caip2) in NETWORKS {
        kinds.push(json!({"x402Version": 2, "scheme": "exact", "network": caip2, "extra": {"feePayer": fee}}));
        kinds.push(json!({"x402Version": 1, "scheme": "exact", "network": v1, "extra": {"feePayer": fee}}));
    }
    Json(json!({"kinds": kinds, "extensions": [], "signers": {"solana:*": [fee]}})).into_response()
}

async fn verify(State(f): State<Facilitator>, body: Bytes) -> Response {
    let body = match record(&f, "/verify", &body) {
        Ok(b) => b,
        Err(status) => return (status, FAILURE_DETAIL).into_response(),
    };
    match check(&body, &f.fee_payer_bytes()) {
        Ok(ok) => Json(json!({"isValid": true, "payer": ok.payer})).into_response(),
        Err(no) => Json(json!({"isValid": false, "invalidReason": no.reason, "payer": no.payer})).into_response(),
    }
}

async fn settle(State(f): State<Facilitator>, body: Bytes) -> Response {
    let body = match record(&f, "/settle", &body) {
        Ok(b) => b,
        Err(status) => return (status, FAILURE_DETAIL).into_response(),
    };
    let requested_network =
        body.pointer("/paymentRequirements/network").and_then(Value::as_str).unwrap_or_default().to_string();
    let failure = |reason: &str, payer: &str| {
        Json(json!({"success": false, "errorReason": reason, "transaction": "", "network": requested_network,
                    "payer": payer}))
        .into_response()
    };
    let accepted = match check(&body, &f.fee_payer_bytes()) {
        Ok(a) => a,
        Err(no) => return failure(no.reason, &no.payer),
    };
    let message_key = shared::sha256(&accepted.transaction.message.serialize());
    {
        let mut settled = lock(&f.inner.settled);
        settled.retain(|_, at| at.elapsed() < SETTLEMENT_TTL);
        if settled.contains_key(&message_key) {
            return failure("duplicate_settlement", &accepted.payer);
        }
        if let Some(reason) = *lock(&f.inner.refuse_settlement) {
            return failure(reason, &accepted.payer);
        }
        settled.insert(message_key, Instant::now());
    }
    let mut tx = accepted.transaction;
    if tx.sign(&[&f.key]).is_err() {
        return failure("unexpected_settle_error", &accepted.payer);
    }
    let transaction = tx.id();
    lock(&f.inner.settlements).push(Settlement {
        transaction: transaction.clone(),
        payer: accepted.payer.clone(),
        network: accepted.network.clone(),
        amount: accepted.amount,
        signed_transaction: shared::b64::encode(tx.serialize()),
    });
    Json(json!({"success": true, "payer": accepted.payer, "transaction": transaction, "network": accepted.network}))
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAY_TO: &str = "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4";

    fn fee_key() -> SigningKey {
        SigningKey::from_bytes(&[9; 32])
    }

    fn payment(amount: u64) -> ExactPayment {
        ExactPayment::new(fee_key().verifying_key().to_bytes(), SigningKey::from_bytes(&[5; 32]), key(PAY_TO), amount)
    }

    fn body(version: u64, tx: &[u8], amount: u64, extra: Value) -> Value {
        let tx = shared::b64::encode(tx);
        let (v1, caip2) = NETWORKS[0];
        let mut extra = extra;
        if extra.get("feePayer").is_none() {
            extra["feePayer"] = json!(Address(fee_key().verifying_key().to_bytes()).to_string());
        }
        let common = json!({"scheme": "exact", "asset": crate::solana_rpc::USDC, "payTo": PAY_TO,
                            "maxTimeoutSeconds": 60, "extra": extra});
        let mut req = common.clone();
        if version == 1 {
            req["network"] = json!(v1);
            req["maxAmountRequired"] = json!(amount.to_string());
            json!({"x402Version": 1, "paymentRequirements": req,
                   "paymentPayload": {"x402Version": 1, "scheme": "exact", "network": v1, "payload": {"transaction": tx}}})
        } else {
            req["network"] = json!(caip2);
            req["amount"] = json!(amount.to_string());
            json!({"x402Version": 2, "paymentRequirements": req,
                   "paymentPayload": {"x402Version": 2, "accepted": req, "payload": {"transaction": tx}}})
        }
    }

    fn verdict(body: &Value) -> Result<String, &'static str> {
        check(body, &fee_key().verifying_key().to_bytes()).map(|a| a.payer).map_err(|r| r.reason)
    }

    fn refusal(tx: &[u8], amount: u64) -> &'static str {
        verdict(&body(1, tx, amount, json!({}))).unwrap_err()
    }

    #[test]
    fn wire_format_round_trips() {
        let bytes = payment(5000).build();
        let tx = Transaction::parse(&bytes).unwrap();
        assert_eq!(tx.serialize(), bytes);
        assert_eq!(tx.message.version(), Some(0));
        let header = tx.message.header();
        assert_eq!((header.num_required_signatures, header.num_readonly_signed_accounts), (2, 1));
        assert_eq!(tx.signatures[0], [0; 64], "the fee payer's slot is left empty");
        assert_eq!(tx.message.instructions().len(), 4);
        assert_eq!(tx.message.instructions()[2].data, [&[12u8][..], &5000u64.to_le_bytes(), &[6]].concat());
        assert!(Transaction::parse(&bytes[..bytes.len() - 1]).is_err());
        assert!(Transaction::parse(&[bytes.clone(), vec![0]].concat()).is_err());
        let mut out = Vec::new();
        shared::solana::shortvec::encode(300, &mut out);
        assert_eq!(out, [0xac, 0x02]);
    }

    #[test]
    fn a_good_payment_passes_in_both_versions() {
        let owner = Address(SigningKey::from_bytes(&[5; 32]).verifying_key().to_bytes()).to_string();
        let tx = payment(5000).build();
        assert_eq!(verdict(&body(1, &tx, 5000, json!({}))), Ok(owner.clone()));
        assert_eq!(verdict(&body(2, &tx, 5000, json!({}))), Ok(owner.clone()));
        let mut p = payment(5000);
        p.token_program = key(TOKEN_2022_PROGRAM);
        assert_eq!(verdict(&body(1, &p.build(), 5000, json!({}))), Ok(owner));
    }

    #[test]
    fn amount_recipient_and_mint_must_match() {
        assert_eq!(refusal(&payment(4999).build(), 5000), "invalid_exact_svm_payload_amount_mismatch");
        let mut p = payment(5000);
        p.pay_to = key(crate::solana_rpc::WALLET);
        assert_eq!(refusal(&p.build(), 5000), "invalid_exact_svm_payload_recipient_mismatch");
        let mut p = payment(5000);
        p.mint = key(crate::solana_rpc::JUP);
        assert_eq!(refusal(&p.build(), 5000), "invalid_exact_svm_payload_mint_mismatch");
    }

    #[test]
    fn layout_rules() {
        let p = payment(5000);
        let ixs = p.instructions();
        assert_eq!(
            refusal(&p.build_with(&ixs[..2]), 5000),
            "invalid_exact_svm_payload_transaction_instructions_length"
        );
        assert_eq!(refusal(&p.build_with(&ixs[..3]), 5000), "invalid_exact_svm_payload_memo_count");
        let swapped = [ixs[1].clone(), ixs[0].clone(), ixs[2].clone(), ixs[3].clone()];
        assert_eq!(
            refusal(&p.build_with(&swapped), 5000),
            "invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction"
        );
        let mut pricey = payment(5000);
        pricey.compute_unit_price = MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS + 1;
        assert_eq!(
            refusal(&pricey.build(), 5000),
            "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high"
        );
        let mut greedy = payment(5000);
        greedy.compute_unit_limit = MAX_COMPUTE_UNIT_LIMIT + 1;
        assert_eq!(
            refusal(&greedy.build(), 5000),
            "invalid_exact_svm_payload_transaction_instructions_compute_limit_too_high"
        );
        greedy.compute_unit_limit = MAX_COMPUTE_UNIT_LIMIT;
        greedy.compute_unit_price = 250_001;
        let accepted = check(&body(1, &greedy.build(), 5000, json!({})), &fee_key().verifying_key().to_bytes());
        assert_eq!(accepted.map(|a| a.priority_fee_lamports), Ok(10_001), "40,000 CU × 0.250001 lamports, rounded up");
        let system = Instruction { program_id: Address([0; 32]), accounts: vec![], data: vec![2, 0, 0, 0] };
        let mut extra = ixs.clone();
        extra.insert(3, system);
        assert_eq!(refusal(&p.build_with(&extra), 5000), "invalid_exact_svm_payload_unknown_fourth_instruction");
        let not_transfer = [ixs[0].clone(), ixs[1].clone(), ixs[3].clone(), ixs[3].clone()];
        assert_eq!(refusal(&p.build_with(&not_transfer), 5000), "invalid_exact_svm_payload_no_transfer_instruction");
    }

    #[test]
    fn memo_rules() {
        let p = payment(5000);
        let tx = p.build();
        let with_memo = |memo: &str| verdict(&body(1, &tx, 5000, json!({"memo": memo})));
        assert_eq!(with_memo("0123456789abcdef0123456789abcdef").map(|_| ()), Ok(()));
        assert_eq!(with_memo("pi_other"), Err("invalid_exact_svm_payload_memo_mismatch"));
        let mut ixs = p.instructions();
        ixs.push(ixs[3].clone());
        let two = p.build_with(&ixs);
        assert_eq!(
            verdict(&body(1, &two, 5000, json!({"memo": "0123456789abcdef0123456789abcdef"}))),
            Err("invalid_exact_svm_payload_memo_count")
        );
    }

    #[test]
    fn fee_payer_safety_and_signatures() {
        let fee = fee_key().verifying_key().to_bytes();
        // The fee payer as the transfer authority (a client trying to spend the sponsor's tokens).
        let mut p = payment(5000);
        p.owner = fee_key();
        let tx = partially_sign(&compile_v0(fee, &p.instructions(), p.blockhash), &[]);
        assert_eq!(refusal(&tx, 5000), "invalid_exact_svm_payload_transaction_fee_payer_transferring_funds");
        // The fee payer named by another instruction.
        let p = payment(5000);
        let mut ixs = p.instructions();
        ixs[3].accounts.push(AccountMeta::writable(Address(fee), false));
        assert_eq!(
            refusal(&p.build_with(&ixs), 5000),
            "invalid_exact_svm_payload_transaction_fee_payer_included_in_instruction_accounts"
        );
        // A broken client signature.
        let mut tx = Transaction::parse(&p.build()).unwrap();
        tx.signatures[1][0] ^= 1;
        assert_eq!(refusal(&tx.serialize(), 5000), "invalid_exact_svm_payload_signature_invalid");
        // Another fee payer in the transaction, or in the requirements.
        let other = ExactPayment { fee_payer: [4; 32], ..payment(5000) };
        assert_eq!(refusal(&other.build(), 5000), "invalid_exact_svm_fee_payer_mismatch");
        let b = body(1, &p.build(), 5000, json!({"feePayer": PAY_TO}));
        assert_eq!(verdict(&b), Err("fee_payer_not_managed_by_facilitator"));
        let b = body(1, &p.build(), 5000, json!({"feePayer": null}));
        assert_eq!(verdict(&b), Err("invalid_exact_svm_payload_missing_fee_payer"));
    }

    #[test]
    fn envelope_checks() {
        let tx = payment(5000).build();
        let mut b = body(1, &tx, 5000, json!({}));
        b["paymentPayload"]["network"] = json!("solana-devnet");
        assert_eq!(verdict(&b), Err("invalid_network"));
        let mut b = body(2, &tx, 5000, json!({}));
        b["paymentPayload"]["x402Version"] = json!(1);
        assert_eq!(verdict(&b), Err("invalid_x402_version"));
        let mut b = body(1, &tx, 5000, json!({}));
        b["paymentRequirements"]["scheme"] = json!("upto");
        assert_eq!(verdict(&b), Err("unsupported_scheme"));
        let mut b = body(1, &tx, 5000, json!({}));
        b["paymentPayload"]["payload"]["transaction"] = json!("AAAA");
        assert_eq!(verdict(&b), Err("invalid_exact_svm_payload_transaction_could_not_be_decoded"));
    }
}
