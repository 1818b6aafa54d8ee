//! `svc gpu-reference`: the golden GPU measurements the enclave's configuration pins
//! (`shared::gpu::Firmware`), read from NVIDIA's RIMs (notes/gpu.md §2, steps 7 to 9). The
//! enclave never reads XML: this runs outside it, and an auditor who runs it on the same files
//! gets the same bytes.
//!
//! A RIM is read only if its SHA-256 is pinned (`measurements/gpu-rim-pins.json`): no maintained
//! Rust library checks RIM signatures (XML-DSig with C14N 1.1), so each file's signature is
//! checked once outside, and the file pinned by its digest.

use std::collections::BTreeMap;

use serde::Deserialize;
use sha2::{Digest, Sha256};
use shared::gpu::Firmware;

const SWID: &str = "http://standards.iso.org/iso/19770/-2/2015/schema.xsd";
const SHA384: &str = "http://www.w3.org/2001/04/xmlenc#sha384";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RimError {
    #[error("{file}: its SHA-256 {sha256} is not pinned")]
    NotPinned { file: String, sha256: String },
    #[error("{file}: not a RIM: {why}")]
    Malformed { file: String, why: String },
    #[error("{0}")]
    Mismatch(String),
}

/// `measurements/gpu-rim-pins.json`.
#[derive(Debug, Deserialize)]
pub struct Pins {
    pub pins: Vec<Pin>,
}

#[derive(Debug, Deserialize)]
pub struct Pin {
    pub file: String,
    pub sha256: String,
    pub checked: String,
}

/// What a RIM says: the firmware version it is for and its active golden measurements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rim {
    pub version: String,
    pub product: String,
    pub measurements: BTreeMap<u8, Vec<String>>,
}

/// A pinned RIM file, named `file` (for messages), read.
pub fn read_rim(file: &str, bytes: &[u8], pins: &Pins) -> Result<Rim, RimError> {
    let sha256 = hex::encode(Sha256::digest(bytes));
    if !pins.pins.iter().any(|p| p.sha256 == sha256) {
        return Err(RimError::NotPinned { file: file.into(), sha256 });
    }
    let bad = |why: &str| RimError::Malformed { file: file.into(), why: why.into() };
    let text = std::str::from_utf8(bytes).map_err(|_| bad("not UTF-8"))?;
    let doc = roxmltree::Document::parse(text).map_err(|e| bad(&e.to_string()))?;
    let root = doc.root_element();
    if !root.has_tag_name((SWID, "SoftwareIdentity")) {
        return Err(bad("no SWID SoftwareIdentity"));
    }
    let child = |name: &str| root.children().find(|n| n.has_tag_name((SWID, name)));
    let meta = child("Meta").ok_or_else(|| bad("no Meta"))?;
    let version = meta.attribute("colloquialVersion").ok_or_else(|| bad("no colloquialVersion"))?.to_string();
    let product = meta.attribute("product").ok_or_else(|| bad("no product"))?.to_string();
    let mut measurements = BTreeMap::new();
    let resources = child("Payload").ok_or_else(|| bad("no Payload"))?.children();
    for r in resources.filter(|n| n.has_tag_name((SWID, "Resource")) && n.attribute("type") == Some("Measurement")) {
        if r.attribute("active") != Some("True") {
            continue;
        }
        let index: u8 = r.attribute("index").and_then(|i| i.parse().ok()).ok_or_else(|| bad("a bad index"))?;
        let alternatives: usize = r
            .attribute("alternatives")
            .and_then(|n| n.parse().ok())
            .filter(|n| (1..=16).contains(n))
            .ok_or_else(|| bad("a bad alternatives"))?;
        if r.attribute("size") != Some("48") {
            return Err(bad("a measurement that is not SHA-384"));
        }
        let hashes = (0..alternatives)
            .map(|i| {
                let hash = r.attribute((SHA384, format!("Hash{i}").as_str())).ok_or_else(|| bad("a missing hash"))?;
                match hash.len() == 96 && hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
                    true => Ok(hash.to_string()),
                    false => Err(bad("a hash that is not 96 lowercase hex digits")),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        if measurements.insert(index, hashes).is_some() {
            return Err(bad("an index twice"));
        }
    }
    Ok(Rim { version, product, measurements })
}

/// The pinned firmware entry for a GPU of `board` (`project-projectSku-chipSku`, e.g.
/// `1010-0200-882`) running the driver and VBIOS of these RIMs.
pub fn reference(driver: (&str, &[u8]), vbios: (&str, &[u8]), board: &str, pins: &Pins) -> Result<Firmware, RimError> {
    let (d, v) = (read_rim(driver.0, driver.1, pins)?, read_rim(vbios.0, vbios.1, pins)?);
    if d.product != v.product {
        return Err(RimError::Mismatch(format!(
            "the driver RIM is for {}, the VBIOS RIM for {}",
            d.product, v.product
        )));
    }
    let [project, project_sku, chip_sku] = board.split('-').collect::<Vec<_>>()[..] else {
        return Err(RimError::Mismatch(format!("board `{board}` is not PROJECT-SKU-CHIP")));
    };
    let mut measurements = d.measurements;
    for (index, values) in v.measurements {
        if measurements.insert(index, values).is_some() {
            return Err(RimError::Mismatch(format!("both RIMs measure index {index}")));
        }
    }
    Ok(Firmware {
        driver: d.version,
        vbios: v.version,
        project: project.into(),
        project_sku: project_sku.into(),
        chip_sku: chip_sku.into(),
        measurements,
        rims: [driver.1, vbios.1].map(|b| hex::encode(Sha256::digest(b))).to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/test-vectors/nvidia-gpu-samples");

    fn pins() -> Pins {
        let text = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/gpu-rim-pins.json")).unwrap();
        serde_json::from_slice(&text).unwrap()
    }

    fn sample(path: &str) -> Vec<u8> {
        std::fs::read(format!("{SAMPLES}/{path}")).unwrap()
    }

    #[test]
    fn the_h100_rims_give_the_pinned_reference() {
        let driver = sample("go-nvattest-tools/rim/NV_GPU_DRIVER_GH100_550.90.07.xml");
        let vbios = sample("go-nvattest-tools/rim/NV_GPU_VBIOS_1010_0200_882_96009F0001.xml");
        let f = reference(("driver", &driver), ("vbios", &vbios), "1010-0200-882", &pins()).unwrap();
        assert_eq!((f.driver.as_str(), f.vbios.as_str()), ("550.90.07", "96.00.9F.00.01"));
        assert_eq!((f.project.as_str(), f.project_sku.as_str(), f.chip_sku.as_str()), ("1010", "0200", "882"));
        assert_eq!(f.measurements.len(), 33);
        assert_eq!(f.measurements[&35].len(), 4, "NVDEC0's four alternatives");
        assert_eq!(f.rims[0], "fec809461feed9da9dd3ccfdb096fc1e513e0148013912b6e6b0e3e8f6d846d3");
        // The same bytes every run (an auditor's re-run compares them).
        let again = reference(("driver", &driver), ("vbios", &vbios), "1010-0200-882", &pins()).unwrap();
        assert_eq!(serde_json::to_vec_pretty(&f).unwrap(), serde_json::to_vec_pretty(&again).unwrap());
        // Given twice as the same kind, both RIMs measure the same indexes.
        let twice = reference(("driver", &driver), ("driver", &driver), "1010-0200-882", &pins());
        assert!(matches!(twice, Err(RimError::Mismatch(m)) if m.contains("index 7")));
    }

    #[test]
    fn unpinned_or_altered_rims_are_refused() {
        // NVIDIA's RIM with a broken signature is not pinned; nor is a pinned file changed by a byte.
        let broken = sample("attestation-sdk/incorrect_signature_driver_rim.xml");
        assert!(matches!(read_rim("broken", &broken, &pins()), Err(RimError::NotPinned { .. })));
        let mut driver = sample("go-nvattest-tools/rim/NV_GPU_DRIVER_GH100_550.90.07.xml");
        let at = driver.len() / 2;
        driver[at] ^= 1;
        assert!(matches!(read_rim("driver", &driver, &pins()), Err(RimError::NotPinned { .. })));
    }
}
