//! Development NVIDIA GPU device: a test PKI, derived from a 32-byte seed, that lets a stand-in
//! GPU node hand over confidential-computing evidence for a fresh nonce. Test infrastructure:
//! only tests, benches and stand-ins link it, never the image.
//!
//! A real H100 report is the template: the dev device keeps its measurements, driver, VBIOS and
//! board, puts in the requester's nonce and its own firmware id, and signs it with its leaf key.
//! The evidence passes `shared::gpu::verify` when the policy's device root is
//! `DeviceRoot::Dev(dev.root_spki_sha256())`, and fails under NVIDIA's root. Every certificate
//! subject carries "SVC DEV", so it cannot be mistaken for NVIDIA's.
//!
//! Everything is deterministic: the same seed gives byte-identical certificates, reports and
//! OCSP answers (keys derived from the seed, RFC 6979 signatures, fixed serials and dates).

mod der;
#[cfg(feature = "node")]
pub mod node;
mod ocsp;
mod pki;
mod report;

use sha2::{Digest, Sha256};

use pki::Pki;

/// One dev GPU: its device chain (root, ICA, BROM, leaf), the OCSP responders of the chain's
/// issuers, and the firmware id its leaf certifies, all derived from one seed.
pub struct DevGpu {
    pki: Pki,
    fwid: [u8; 48],
}

/// What a dev report shows differently from its template, to play a misbehaving GPU.
#[derive(Debug, Clone, Default)]
pub struct ReportChanges {
    /// Flip the last byte of the measurement block with this SPDM index (from 1), as a GPU in
    /// devtools mode shows.
    pub flip_measurement: Option<u8>,
}

impl DevGpu {
    /// Deterministic from the seed (same seed → byte-identical certificates and reports).
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        Self::device(seed, 0)
    }

    /// Device `index` of the seed: its own BROM and leaf (so its own key and serials) under the
    /// root and ICA every device of the seed shares, running the same firmware (same FWID), as
    /// the GPUs of one board do.
    pub fn device(seed: &[u8; 32], index: u8) -> Self {
        let fwid = pki::labelled_hash(seed, "fwid", 0);
        Self { pki: Pki::new(seed, index, &fwid), fwid }
    }

    /// SHA-256 of the dev root's DER SubjectPublicKeyInfo (what `shared::gpu::DeviceRoot::Dev`
    /// takes), so a verifier pins the dev root the way it pins NVIDIA's.
    pub fn root_spki_sha256(&self) -> [u8; 32] {
        // Hashed as it sits in the certificate, exactly the bytes the verifier hashes.
        let root = der::cert_fields(&self.pki.root.der).expect("the dev root parses");
        Sha256::digest(root.spki).into()
    }

    /// PEM chain leaf first, as NVML hands it out: leaf "SVC DEV GPU FMC LF" (with the DICE
    /// FWID extension) → "SVC DEV GPU BROM" → "SVC DEV GPU Provisioner ICA" → self-signed root
    /// "SVC DEV GPU Device Identity CA".
    /// Every subject says "SVC DEV" so it can never be mistaken for NVIDIA's.
    pub fn certificate_chain_pem(&self) -> String {
        let p = &self.pki;
        [&p.leaf, &p.brom, &p.ica, &p.root].iter().map(|c| dev_quote::x509::pem(&c.der)).collect()
    }

    /// The 48-byte firmware id the leaf certifies (derived from the seed), which every report
    /// of this device carries as opaque type 20.
    pub fn fwid(&self) -> [u8; 48] {
        self.fwid
    }

    /// A report for `nonce`: the real report `template` (a genuine NVIDIA H100 report,
    /// request ‖ response ‖ signature) re-issued by this dev device: requester nonce replaced
    /// by `nonce`, the opaque FWID (type 20) replaced by `self.fwid()`, every other byte
    /// (measurements, driver, VBIOS, board, responder nonce) kept, then signed with the dev
    /// leaf key. `changes` lets a test play a GPU in devtools mode (one measurement differs).
    /// The template is parsed by structure, not by offsets; one that does not parse (or has
    /// no firmware id to replace) is an `Err`.
    pub fn report(&self, template: &[u8], nonce: &[u8; 32], changes: &ReportChanges) -> Result<Vec<u8>, &'static str> {
        report::reissue(template, nonce, &self.fwid, changes.flip_measurement, |signed| {
            self.pki.leaf.key.sign_raw(signed)
        })
    }

    /// DER OCSPResponses (one per certificate between leaf and root: BROM and ICA), status
    /// good, producedAt = thisUpdate = `produced_at`, nextUpdate = produced_at + 24 h, each
    /// signed by a responder certificate (EKU OCSP signing, valid 2025-01-01..2100-01-01) that
    /// the certificate's issuer issued, included in the response's certs. What a node staples
    /// after fetching them from NVIDIA's responder.
    pub fn ocsp(&self, produced_at: u64) -> Vec<Vec<u8>> {
        let p = &self.pki;
        vec![
            ocsp::good(&p.brom, &p.ica, &p.ica_responder, produced_at),
            ocsp::good(&p.ica, &p.root, &p.root_responder, produced_at),
        ]
    }
}
