//! Collateral as a client takes it from a relay or a PCCS: the JSON form (`Collateral::
//! from_json`, round-tripped through `to_json` as the client's cache does), or, when the first
//! byte is `P`, PCS responses assembled by `Collateral::from_pcs` (the rest split at NUL bytes
//! into the seven headers and bodies). Whatever parses is then used to verify the fixture's
//! dev quote with `attest::verify`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shared::attest::collateral::PcsResponses;
use shared::attest::{Collateral, Evidence, verify};
use svc_fuzz::attest::{NOW, binding, fixture, proof};

fn pcs(rest: &[u8]) -> Option<Collateral> {
    let parts = svc_fuzz::split_nul(rest, 7);
    let text = |i: usize| String::from_utf8_lossy(parts.get(i).copied().unwrap_or_default()).into_owned();
    let bytes = |i: usize| parts.get(i).copied().unwrap_or_default().to_vec();
    let responses = PcsResponses {
        pck_crl_issuer_chain: text(0),
        pck_crl: bytes(1),
        root_ca_crl: bytes(2),
        tcb_info_issuer_chain: text(3),
        tcb_info_body: text(4),
        qe_identity_issuer_chain: text(5),
        qe_identity_body: text(6),
    };
    Collateral::from_pcs(responses).ok()
}

fuzz_target!(|data: &[u8]| {
    let collateral = match data.split_first() {
        Some((b'P', rest)) => pcs(rest),
        _ => std::str::from_utf8(data).ok().and_then(|text| Collateral::from_json(text).ok()),
    };
    let Some(collateral) = collateral else { return };
    // The client caches collateral as `to_json` writes it: that must read back the same.
    let cached = Collateral::from_json(&collateral.to_json()).expect("cached collateral parses");
    assert_eq!(cached.valid_until, collateral.valid_until);
    assert_eq!(cached.tcb_evaluation, collateral.tcb_evaluation);
    assert_eq!(cached.to_json(), collateral.to_json());
    let f = fixture();
    let evidence =
        Evidence { quote: &f.quote_v4, collateral: &collateral, binding: Some(binding()), nonce: Some(proof()) };
    let document = verify(&evidence, &f.policy, NOW);
    assert_eq!(document.accepted(), document.reason.is_none());
    serde_json::to_string(&document).expect("a verification document serialises");
});
