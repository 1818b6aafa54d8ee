//! Development quote provider: a test PKI, derived from a 32-byte seed, that signs real DCAP
//! quote structures (TDX, quote v4 and v5) and the matching collateral. Test infrastructure:
//! only tests, benches and an enclave built with `enclave/dev-quotes` link it.
//!
//! A quote made here goes through dcap-qvl's full verification path when the dev root is the
//! trust anchor (`QuoteVerifier::new(pki.root_cert_der())`), and fails under Intel's root.
//! Every certificate subject carries "SVC DEV", and the platform identifiers (FMSPC, QE
//! MRSIGNER) are made up, so a dev quote cannot be mistaken for a real one.
//!
//! Everything is deterministic: the same seed gives byte-identical certificates, CRLs,
//! collateral and quotes (P-256 keys derived from the seed, RFC 6979 signatures, fixed serial
//! numbers and dates). The attestation key is seed-derived too, one per PKI like a real QE's.

mod collateral;
#[cfg(feature = "corpus")]
pub mod corpus;
mod pki;
mod quote;
mod sgx_extension;
pub mod x509;

pub use collateral::{CollateralOptions, TcbStatus};
pub use quote::{QuoteVersion, TdReport};

use pki::Pki;

/// Validity of the dev certificates, in unix seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PkiOptions {
    /// notBefore of every certificate.
    pub not_before: u64,
    /// notAfter of the root, the PCK CA and the TCB signer.
    pub not_after: u64,
    /// notAfter of the PCK leaf (to test an expired PCK certificate).
    pub pck_not_after: u64,
    /// List the PCK leaf in the PCK CRL of the collateral.
    pub revoke_pck: bool,
}

/// 2025-01-01T00:00:00Z.
const Y2025: u64 = 1_735_689_600;
/// 2100-01-01T00:00:00Z.
const Y2100: u64 = 4_102_444_800;

impl Default for PkiOptions {
    fn default() -> Self {
        Self { not_before: Y2025, not_after: Y2100, pck_not_after: Y2100, revoke_pck: false }
    }
}

/// The dev PKI: root CA, PCK platform CA, PCK leaf, TCB/QE-identity signer and the QE's
/// attestation key, all derived from one seed.
pub struct DevPki {
    pki: Pki,
    options: PkiOptions,
}

impl DevPki {
    /// The PKI for `seed` with [`PkiOptions::default`].
    pub fn from_seed(seed: &[u8; 32]) -> Self {
        Self::with_options(seed, PkiOptions::default())
    }

    /// The PKI for `seed` with chosen validity dates and PCK revocation.
    pub fn with_options(seed: &[u8; 32], options: PkiOptions) -> Self {
        Self { pki: Pki::new(seed, &options), options }
    }

    /// The trust anchor to give `dcap_qvl::verify::QuoteVerifier::new`.
    pub fn root_cert_der(&self) -> Vec<u8> {
        self.pki.root.der.clone()
    }

    /// The root certificate, PEM.
    pub fn root_cert_pem(&self) -> String {
        x509::pem(&self.pki.root.der)
    }

    /// A DCAP quote for `report`, signed through the dev chain.
    pub fn quote(&self, report: &TdReport, version: QuoteVersion) -> Vec<u8> {
        quote::build(&self.pki, report, version)
    }

    /// Collateral JSON in the format of dcap-qvl's `QuoteCollateralV3` (as in its samples).
    pub fn collateral(&self, options: &CollateralOptions) -> Vec<u8> {
        collateral::build(&self.pki, &self.options, options)
    }
}

/// The made-up platform the dev PCK certificate describes; the TCB info matches it.
mod platform {
    /// Not an FMSPC Intel assigns ("DE7" for dev).
    pub const FMSPC: [u8; 6] = [0xDE, 0x70, 0, 0, 0, 0];
    pub const PCE_ID: [u8; 2] = [0, 0];
    pub const PCE_SVN: u16 = 13;
    pub const CPU_SVN: [u8; 16] = [3, 3, 2, 2, 4, 1, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0];
    /// TDX module ISVSVN, module version (TDX_01), late microcode SVN.
    pub const TEE_TCB_SVN: [u8; 16] = [5, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    /// The TD-QE: product ID 2 as Intel's, our own MRSIGNER ("SVC DEV" padded).
    pub const QE_MRSIGNER: [u8; 32] = *b"SVC DEV TD_QE MRSIGNER..........";
    pub const QE_MRENCLAVE: [u8; 32] = *b"SVC DEV TD_QE MRENCLAVE.........";
    pub const QE_PROD_ID: u16 = 2;
    pub const QE_SVN: u16 = 8;
    /// SGX attributes of the QE report: INIT | MODE64BIT | PROVISIONKEY, XFRM 0xE7.
    pub const QE_ATTRIBUTES: [u8; 16] = [0x15, 0, 0, 0, 0, 0, 0, 0, 0xE7, 0, 0, 0, 0, 0, 0, 0];
    pub const TCB_EVALUATION_DATA_NUMBER: u32 = 1;
}
