//! Quotes as a client reads them: the header facts the enclave uses (`report_data`), the PCS
//! query (FMSPC and PCK CA from the quote's own certificate chain), and the whole verifier
//! (`attest::verify`: dcap-qvl's DCAP chain under the dev root, then our policies) against the
//! development PKI's collateral, with the key binding and nonce proof of the fixture.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shared::attest::{Evidence, verify};
use svc_fuzz::attest::{NOW, binding, fixture, proof};

fuzz_target!(|data: &[u8]| {
    let f = fixture();
    let report_data = shared::quote::report_data(data);
    let _ = shared::attest::collateral::pcs_query(data);
    let evidence = Evidence { quote: data, collateral: &f.collateral, binding: Some(binding()), nonce: Some(proof()) };
    let document = verify(&evidence, &f.policy, NOW);
    if document.accepted() {
        // Accepted means the quote binds the fixture's keys.
        assert_eq!(report_data.ok(), Some(binding().report_data()));
        assert!(document.checks.iter().all(|c| c.ok));
    } else {
        assert!(document.reason.is_some());
    }
    serde_json::to_string(&document).expect("a verification document serialises");
});
