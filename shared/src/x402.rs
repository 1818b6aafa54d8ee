//! The `exact` scheme of x402 on Solana, the checks that need no chain
//! (`specs/schemes/exact/scheme_exact_svm.md` of `x402-foundation/x402`): 3 to 7 instructions
//! in the order SetComputeUnitLimit (at most 40,000 units), SetComputeUnitPrice (at most 5
//! lamports per CU),
//! TransferChecked under SPL Token or Token-2022 (mint = `asset`, destination = the associated
//! token account of (`payTo`, `asset`) under that program, amount = the required amount
//! exactly), then only Lighthouse or Memo instructions; at least one Memo, exactly one equal to
//! `extra.memo` when that is set; the fee payer is account 0, is the facilitator's, appears in
//! no instruction and is not the transfer authority; no address lookup tables; every required
//! signature but the fee payer's verifies. Refusals carry the reference reason codes.
//!
//! The relay's built-in facilitator runs these before it looks at the chain; the test suite's
//! stand-in facilitator runs the same ones.

use serde_json::Value;

use crate::address::Address;
use crate::solana::{CompiledInstruction, Transaction, associated_token};

pub const TOKEN_PROGRAM: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
pub const TOKEN_2022_PROGRAM: &str = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
pub const COMPUTE_BUDGET_PROGRAM: &str = "ComputeBudget111111111111111111111111111111";
pub const MEMO_PROGRAM: &str = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";
pub const LIGHTHOUSE_PROGRAM: &str = "L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95";
/// The reference cap on the compute unit price: 5 lamports per CU.
pub const MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS: u64 = 5_000_000;
/// The most compute units the scheme's instructions can need: TransferChecked (about 6,000
/// under SPL Token, more under Token-2022), four more Memo or Lighthouse instructions at most,
/// and the two budget instructions (150 each). The reference client asks for 20,000. Without
/// this bound the price cap alone lets a payer make the fee payer pay up to 1.4 M CU × 5
/// lamports per payment.
pub const MAX_COMPUTE_UNIT_LIMIT: u32 = 40_000;
pub const MAX_MEMO_BYTES: usize = 256;

/// v1 Solana network names and their CAIP-2 ids (x402 v2), as the reference SDKs map them.
pub const NETWORKS: [(&str, &str); 3] = [
    ("solana", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"),
    ("solana-devnet", "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1"),
    ("solana-testnet", "solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z"),
];

fn key(text: &str) -> [u8; 32] {
    Address::parse(text).expect("a constant address").0
}

/// The associated token account of (`owner`, `mint`) under `token_program`.
pub fn associated_token_account(owner: &[u8; 32], mint: &[u8; 32], token_program: &[u8; 32]) -> [u8; 32] {
    associated_token::address(&Address(*owner), &Address(*mint), &Address(*token_program)).0
}

/// A refusal: the reason code, and the payer when it is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub reason: &'static str,
    pub payer: String,
}

fn refuse(reason: &'static str) -> Refusal {
    Refusal { reason, payer: String::new() }
}

/// A payment that passed every check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    pub payer: String,
    pub network: String,
    pub amount: u64,
    /// What the transaction's compute budget makes the fee payer pay beyond the signature
    /// fees: compute unit limit × price, in lamports, rounded up.
    pub priority_fee_lamports: u64,
    pub transaction: Transaction,
    /// The source token account (the payer's) and the destination (`payTo`'s).
    pub source: Address,
    pub destination: Address,
}

/// The checks of `/verify` against the body `{x402Version, paymentPayload, paymentRequirements}`.
pub fn check(body: &Value, fee_payer: &[u8; 32]) -> Result<Accepted, Refusal> {
    let version = body.get("x402Version").and_then(Value::as_u64).ok_or_else(|| refuse("invalid_x402_version"))?;
    let payload = body.get("paymentPayload").filter(|p| p.is_object()).ok_or_else(|| refuse("invalid_payload"))?;
    let req = body
        .get("paymentRequirements")
        .filter(|r| r.is_object())
        .ok_or_else(|| refuse("invalid_payment_requirements"))?;
    if payload.get("x402Version").and_then(Value::as_u64) != Some(version) || !(1..=2).contains(&version) {
        return Err(refuse("invalid_x402_version"));
    }
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let (payload_scheme, payload_network) = match version {
        1 => (text(payload, "scheme"), text(payload, "network")),
        _ => {
            let accepted = payload.get("accepted").ok_or_else(|| refuse("invalid_payload"))?;
            (text(accepted, "scheme"), text(accepted, "network"))
        }
    };
    if payload_scheme.as_deref() != Some("exact") || text(req, "scheme").as_deref() != Some("exact") {
        return Err(refuse("unsupported_scheme"));
    }
    let network = text(req, "network").ok_or_else(|| refuse("invalid_network"))?;
    let served = NETWORKS.iter().any(|(v1, caip2)| if version == 1 { *v1 == network } else { *caip2 == network });
    if payload_network.as_deref() != Some(network.as_str()) || !served {
        return Err(refuse("invalid_network"));
    }
    let amount_field = if version == 1 { "maxAmountRequired" } else { "amount" };
    let amount: u64 =
        text(req, amount_field).and_then(|a| a.parse().ok()).ok_or_else(|| refuse("invalid_payment_requirements"))?;
    let asset =
        text(req, "asset").and_then(|a| Address::parse(&a)).ok_or_else(|| refuse("invalid_payment_requirements"))?;
    let pay_to =
        text(req, "payTo").and_then(|a| Address::parse(&a)).ok_or_else(|| refuse("invalid_payment_requirements"))?;
    let extra = req.get("extra");
    let required_fee_payer = extra
        .and_then(|e| e.get("feePayer"))
        .and_then(Value::as_str)
        .ok_or_else(|| refuse("invalid_exact_svm_payload_missing_fee_payer"))?;
    if Address::parse(required_fee_payer).map(|a| a.0) != Some(*fee_payer) {
        return Err(refuse("fee_payer_not_managed_by_facilitator"));
    }
    let memo = extra.and_then(|e| e.get("memo")).and_then(Value::as_str).filter(|m| !m.is_empty());

    let tx = payload
        .get("payload")
        .and_then(|p| p.get("transaction"))
        .and_then(Value::as_str)
        .and_then(|t| crate::b64::decode(t).ok())
        .and_then(|b| Transaction::parse(&b).ok())
        .ok_or_else(|| refuse("invalid_exact_svm_payload_transaction_could_not_be_decoded"))?;
    let message = &tx.message;
    if !message.address_table_lookups().is_empty() {
        return Err(refuse("invalid_exact_svm_smart_wallet_alt_resolution_not_available"));
    }
    if message.fee_payer().map(|a| a.0) != Some(*fee_payer) {
        return Err(refuse("invalid_exact_svm_fee_payer_mismatch"));
    }
    // Every required signature but the fee payer's (which the facilitator adds) must verify.
    let required = usize::from(message.header().num_required_signatures);
    if (1..required).any(|i| tx.verify_signature(i).is_err()) {
        return Err(refuse("invalid_exact_svm_payload_signature_invalid"));
    }
    // Without lookup tables every index names a static key (the parse checked the range).
    let keys = message.static_account_keys();
    let program = |ix: &CompiledInstruction| keys[usize::from(ix.program_id_index)].0;
    let ixs = message.instructions();
    if !(3..=7).contains(&ixs.len()) {
        return Err(refuse("invalid_exact_svm_payload_transaction_instructions_length"));
    }
    let budget = key(COMPUTE_BUDGET_PROGRAM);
    let (limit, price) = (&ixs[0], &ixs[1]);
    if program(limit) != budget || limit.data.len() != 5 || limit.data[0] != 2 || !limit.accounts.is_empty() {
        return Err(refuse("invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction"));
    }
    if program(price) != budget || price.data.len() != 9 || price.data[0] != 3 || !price.accounts.is_empty() {
        return Err(refuse("invalid_exact_svm_payload_transaction_instructions_compute_price_instruction"));
    }
    let units = u32::from_le_bytes(limit.data[1..5].try_into().expect("4 bytes"));
    if units > MAX_COMPUTE_UNIT_LIMIT {
        return Err(refuse("invalid_exact_svm_payload_transaction_instructions_compute_limit_too_high"));
    }
    let micro_lamports = u64::from_le_bytes(price.data[1..9].try_into().expect("8 bytes"));
    if micro_lamports > MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS {
        return Err(refuse("invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high"));
    }
    // At most 40,000 × 5,000,000: no overflow.
    let priority_fee_lamports = (u64::from(units) * micro_lamports).div_ceil(1_000_000);
    let transfer = &ixs[2];
    let token_program = program(transfer);
    if (token_program != key(TOKEN_PROGRAM) && token_program != key(TOKEN_2022_PROGRAM))
        || transfer.data.len() != 10
        || transfer.data[0] != 12
        || transfer.accounts.len() < 4
    {
        return Err(refuse("invalid_exact_svm_payload_no_transfer_instruction"));
    }
    let account = |i| message.instruction_account(transfer, i).expect("four accounts checked").0;
    let (mint, destination, authority) = (account(1), account(2), account(3));
    let payer = Address(authority).to_string();
    let refuse_for = |reason: &'static str| Refusal { reason, payer: payer.clone() };
    if authority == *fee_payer || account(0) == *fee_payer {
        return Err(refuse_for("invalid_exact_svm_payload_transaction_fee_payer_transferring_funds"));
    }
    let mentions_fee_payer = |ix: &CompiledInstruction| {
        program(ix) == *fee_payer || ix.accounts.iter().any(|a| keys[usize::from(*a)].0 == *fee_payer)
    };
    if ixs.iter().any(mentions_fee_payer) {
        return Err(refuse_for("invalid_exact_svm_payload_transaction_fee_payer_included_in_instruction_accounts"));
    }
    // Only the sponsor and the client sign (spec §2.1.4).
    if required != 2 || keys[1].0 != authority {
        return Err(refuse_for("invalid_exact_svm_payload_excessive_signers"));
    }
    if mint != asset.0 {
        return Err(refuse_for("invalid_exact_svm_payload_mint_mismatch"));
    }
    if destination != associated_token_account(&pay_to.0, &asset.0, &token_program) {
        return Err(refuse_for("invalid_exact_svm_payload_recipient_mismatch"));
    }
    let paid = u64::from_le_bytes(transfer.data[1..9].try_into().expect("8 bytes"));
    if paid != amount {
        return Err(refuse_for("invalid_exact_svm_payload_amount_mismatch"));
    }
    let unknown = [
        "invalid_exact_svm_payload_unknown_fourth_instruction",
        "invalid_exact_svm_payload_unknown_fifth_instruction",
        "invalid_exact_svm_payload_unknown_sixth_instruction",
        "invalid_exact_svm_payload_unknown_seventh_instruction",
    ];
    let mut memos = Vec::new();
    for (i, ix) in ixs[3..].iter().enumerate() {
        let id = program(ix);
        if id == key(MEMO_PROGRAM) {
            memos.push(&ix.data);
        } else if id != key(LIGHTHOUSE_PROGRAM) {
            return Err(refuse_for(unknown[i]));
        }
    }
    match memo {
        Some(m) => {
            if memos.len() != 1 {
                return Err(refuse_for("invalid_exact_svm_payload_memo_count"));
            }
            if memos[0].as_slice() != m.as_bytes() {
                return Err(refuse_for("invalid_exact_svm_payload_memo_mismatch"));
            }
        }
        // The client MUST add a memo (a random nonce of at least 16 bytes, hex) when none is set.
        None => {
            if memos.is_empty() {
                return Err(refuse_for("invalid_exact_svm_payload_memo_count"));
            }
        }
    }
    if memos.iter().any(|m| m.len() > MAX_MEMO_BYTES || std::str::from_utf8(m).is_err()) {
        return Err(refuse_for("invalid_exact_svm_payload_memo_mismatch"));
    }
    Ok(Accepted {
        payer,
        network,
        amount,
        priority_fee_lamports,
        source: Address(account(0)),
        destination: Address(destination),
        transaction: tx,
    })
}
