//! TD attributes: DEBUG must be off. dcap-qvl refuses a debug TD too; this row is our own
//! policy, so the document shows the bit whatever dcap-qvl said.

use dcap_qvl::quote::TDReport10;

use crate::attest::document::Outcome;

const DEBUG_BIT: u8 = 0x01;

pub(crate) fn check(td: &TDReport10) -> Outcome {
    let mut out = Outcome::default();
    let debug = td.td_attributes[0] & DEBUG_BIT != 0;
    out.compare("debug_off", "debug_enabled", "DEBUG = 0".into(), format!("DEBUG = {}", u8::from(debug)));
    out
}
