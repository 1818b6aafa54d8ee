//! The TD's measurements against the reference values (`attest::measurements`): MRTD, RTMR1
//! and RTMR2 equal one published image, RTMR0 is in the platform allowlist, and the three
//! host-chosen registers are zero or equal their pinned value.

use dcap_qvl::quote::TDReport10;

use crate::attest::document::{Outcome, Verdict};
use crate::attest::measurements::{Measurements, Mr};

pub(crate) fn check(m: &Measurements, td: &TDReport10) -> Outcome {
    let mut out = Outcome::default();
    match m.images.iter().find(|i| i.mrtd == td.mr_td) {
        None => {
            out.record("mrtd", false, Some(list(m.images.iter().map(|i| &i.mrtd))), Some(hex::encode(td.mr_td)), None);
            out.fail(Verdict::Reject, "mrtd_unknown");
        }
        Some(img) => {
            out.record(
                "mrtd",
                true,
                Some(hex::encode(img.mrtd)),
                Some(hex::encode(td.mr_td)),
                Some(format!("image {}", img.name)),
            );
            out.compare("rtmr1", "rtmr1_mismatch", hex::encode(img.rtmr1), hex::encode(td.rt_mr1));
            out.compare("rtmr2", "rtmr2_mismatch", hex::encode(img.rtmr2), hex::encode(td.rt_mr2));
        }
    }
    let rtmr0_ok = m.rtmr0.iter().any(|r| r.value == td.rt_mr0);
    out.record("rtmr0", rtmr0_ok, Some(list(m.rtmr0.iter().map(|r| &r.value))), Some(hex::encode(td.rt_mr0)), None);
    if !rtmr0_ok {
        out.fail(Verdict::Reject, "rtmr0_unknown");
    }
    for (name, reason, pinned, actual) in [
        ("mr_config_id", "mrconfigid_not_allowed", &m.mr_config_id, &td.mr_config_id),
        ("mr_owner", "mrowner_not_allowed", &m.mr_owner, &td.mr_owner),
        ("mr_owner_config", "mrownerconfig_not_allowed", &m.mr_owner_config, &td.mr_owner_config),
    ] {
        out.compare(name, reason, hex::encode(pinned.unwrap_or([0; 48])), hex::encode(actual));
    }
    out
}

fn list<'a>(values: impl Iterator<Item = &'a Mr>) -> String {
    let all: Vec<String> = values.map(hex::encode).collect();
    if all.is_empty() { "(none published)".into() } else { all.join(" | ") }
}
