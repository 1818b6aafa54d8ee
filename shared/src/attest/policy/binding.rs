//! The key binding: `report_data` must equal what the expected keys hash to (contract §2.4b).

use dcap_qvl::quote::TDReport10;

use super::Binding;
use crate::attest::document::Outcome;

/// With no binding requested (offline inspection of a bare quote) the row passes and says so.
pub(crate) fn check(binding: Option<Binding>, td: &TDReport10) -> Outcome {
    let mut out = Outcome::default();
    match binding {
        Some(binding) => out.compare(
            "report_data",
            "binding_mismatch",
            hex::encode(binding.report_data()),
            hex::encode(td.report_data),
        ),
        None => out.record(
            "report_data",
            true,
            None,
            Some(hex::encode(td.report_data)),
            Some("binding not requested".into()),
        ),
    }
    out
}
