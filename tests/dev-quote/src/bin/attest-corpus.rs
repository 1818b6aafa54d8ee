//! Prints the verifier corpus (`dev_quote::corpus`) as one JSON document: every case with its
//! inputs, the verdict the corpus requires, and the verdict `shared::attest::verify` gives it
//! right now. The web verifier's parity test (`relay/web/test/attest-corpus.test.mjs`) runs
//! the same inputs and requires the same verdict and reason.
//!
//! Sample files are named by path relative to the repository (`quoteFile`, `collateralFile`)
//! instead of being inlined; every other quote is base64 and every other collateral a string.

use base64::Engine;
use dev_quote::corpus::{self, Entry, NOW};
use serde_json::{Value, json};
use shared::attest::{Binding, TrustRoot, VerificationDocument};

fn main() {
    let cases: Vec<Value> = corpus::corpus().iter().map(case).collect();
    let document = json!({ "now": NOW, "cases": cases });
    println!("{document}");
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn case(e: &Entry) -> Value {
    let input = &e.input;
    let doc = input.verify();
    let mut case = json!({
        "group": e.group.name(),
        "name": e.name,
        "root": match &input.root {
            TrustRoot::Intel => json!({ "kind": "intel" }),
            TrustRoot::Dev(der) => json!({ "kind": "dev", "der": b64(der) }),
        },
        "measurements": input.measurements,
        "allowedTcbStatuses": input.allowed,
        // The client's TCB floor is not part of `shared::attest::verify`.
        "minTcbEvaluation": null,
        "binding": binding(input.binding),
        "nonce": nonce(e),
        "now": input.now,
        // A differential case must get what the Rust verifier gives it.
        "expected": if e.differential {
            json!({ "verdict": doc.verdict, "reason": doc.reason })
        } else {
            json!({ "verdict": e.verdict, "reason": e.reason })
        },
        "rust": rust(&doc),
    });
    match &e.quote_file {
        Some(path) => case["quoteFile"] = path.as_str().into(),
        None => case["quote"] = b64(&input.quote).into(),
    }
    match &e.collateral_file {
        Some(path) => case["collateralFile"] = path.as_str().into(),
        None => case["collateral"] = input.collateral.as_str().into(),
    }
    case
}

fn binding(binding: Option<Binding>) -> Value {
    match binding {
        None => Value::Null,
        Some(Binding::PublicKey(tee)) => json!({ "kind": "tee", "tee": hex::encode(tee.0) }),
        Some(Binding::Keys { tee, enclave }) => {
            json!({ "kind": "keys", "tee": hex::encode(tee.0), "enclave": hex::encode(enclave.0) })
        }
        Some(Binding::ReportData(data)) => json!({ "kind": "reportData", "reportData": hex::encode(data) }),
    }
}

/// The proof with the keys a page would check it against: the bound ones, or (when the binding
/// names no enclave key) the corpus's own.
fn nonce(e: &Entry) -> Value {
    let Some(proof) = e.input.nonce else { return Value::Null };
    let (tee, enclave) = match e.input.binding {
        Some(Binding::Keys { tee, enclave }) => (tee.0, enclave.0),
        _ => (corpus::TEE, corpus::enclave_key().verifying_key().to_bytes()),
    };
    json!({
        "nonce": hex::encode(proof.nonce),
        "signature": hex::encode(proof.signature),
        "tee": hex::encode(tee),
        "enclave": hex::encode(enclave),
    })
}

fn rust(doc: &VerificationDocument) -> Value {
    let checks: Vec<Value> = doc
        .checks
        .iter()
        .map(|c| json!({ "name": c.name, "ok": c.ok, "expected": c.expected, "actual": c.actual, "detail": c.detail }))
        .collect();
    json!({
        "verdict": doc.verdict,
        "reason": doc.reason,
        "tcbStatus": doc.tcb_status,
        "checks": checks,
    })
}
