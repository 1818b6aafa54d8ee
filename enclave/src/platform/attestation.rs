//! Quotes made once at boot: the public one (`report_data` = sha256(X25519 key)) and the
//! binding one (`report_data` = sha256(X25519 key ‖ ed25519 key)). Both are constant per
//! boot, and a quote takes seconds, so neither is ever made per request.

use shared::quote::binding_report_data;
use shared::wire::{AttestationResponse, BindingAttestation, TDX_QUOTE_UNAVAILABLE, TdxQuote};
use shared::{b64, sha256};

use crate::keys::EnclaveKeys;
use crate::platform::tsm::{self, StdFs, TsmError};

/// Something that turns 64 bytes of `report_data` into a quote.
pub trait QuoteProvider: Send + Sync {
    /// Reported as `tdxQuote.provider`.
    fn name(&self) -> &'static str;
    fn quote(&self, report_data: &[u8; 64]) -> Result<Vec<u8>, TsmError>;
    /// Collateral for this provider's quotes, if it has any (real TDX: fetched by clients).
    fn collateral(&self) -> Option<String> {
        None
    }
}

/// The kernel's configfs-tsm interface.
pub struct ConfigfsTsm {
    pub fs: StdFs,
    pub retry: tsm::Retry,
}

impl QuoteProvider for ConfigfsTsm {
    fn name(&self) -> &'static str {
        tsm::TDX_PROVIDER
    }
    fn quote(&self, report_data: &[u8; 64]) -> Result<Vec<u8>, TsmError> {
        tsm::get_quote(&self.fs, report_data, self.retry)
    }
}

/// What the enclave publishes about itself for this boot.
#[derive(Debug, Clone)]
pub struct Attestation {
    pub public: AttestationResponse,
    pub binding: BindingAttestation,
    /// sha256 of the binding quote, recorded in every receipt.
    pub binding_quote_hash: Option<[u8; 32]>,
}

fn quote_fields(
    provider: &dyn QuoteProvider,
    report_data: &[u8; 64],
) -> (Option<TdxQuote>, Option<String>, Option<[u8; 32]>) {
    match provider.quote(report_data) {
        Ok(q) => {
            let hash = sha256(&q);
            (
                Some(TdxQuote {
                    quote: b64::encode(&q),
                    provider: provider.name().into(),
                    collateral: provider.collateral(),
                }),
                None,
                Some(hash),
            )
        }
        Err(TsmError::NoProvider) => (None, Some(TDX_QUOTE_UNAVAILABLE.into()), None),
        Err(e) => {
            tracing::error!(error = %e, "quote generation failed");
            (None, Some(format!("tdx_quote_failed: {e}")), None)
        }
    }
}

impl Attestation {
    pub fn at_boot(keys: &EnclaveKeys, provider: &dyn QuoteProvider, now: u64) -> Self {
        let tee = keys.tee_public();
        let enclave = keys.enclave_public();
        let public_rd = binding_report_data(&[&tee]);
        let binding_rd = binding_report_data(&[&tee, &enclave]);
        let (quote, error, _) = quote_fields(provider, &public_rd);
        let (b_quote, b_error, b_hash) = quote_fields(provider, &binding_rd);
        Attestation {
            public: AttestationResponse {
                tee_public_key: b64::encode(tee),
                tee_public_key_sha256: hex::encode(sha256(&tee)),
                report_data_hex: hex::encode(public_rd),
                tdx_quote: quote,
                tdx_quote_error: error,
                generated_at: shared::time::rfc3339(now),
                enclave_public_key: b64::encode(enclave),
                binding_report_data_hex: hex::encode(binding_rd),
                binding_tdx_quote: b_quote.clone(),
                nonce: None,
                nonce_signature: None,
                provisioning: Default::default(),
                gpu_nodes: Vec::new(),
            },
            binding: BindingAttestation {
                tee_public_key: b64::encode(tee),
                enclave_public_key: b64::encode(enclave),
                report_data_hex: hex::encode(binding_rd),
                tdx_quote: b_quote,
                tdx_quote_error: b_error,
                tdx_quote_hash: b_hash.map(hex::encode).unwrap_or_default(),
            },
            binding_quote_hash: b_hash,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    struct Echo;
    impl QuoteProvider for Echo {
        fn name(&self) -> &'static str {
            "tdx_guest"
        }
        fn quote(&self, rd: &[u8; 64]) -> Result<Vec<u8>, TsmError> {
            let mut q = vec![0u8; 48 + 584];
            q[0] = 4;
            q[4] = 0x81;
            q[48 + 520..].copy_from_slice(rd);
            Ok(q)
        }
    }

    #[test]
    fn without_provider_the_key_is_still_published() {
        let keys = EnclaveKeys::generate();
        let none =
            ConfigfsTsm { fs: StdFs { root: PathBuf::from("/nonexistent/tsm/report") }, retry: tsm::Retry::default() };
        let a = Attestation::at_boot(&keys, &none, 0);
        assert_eq!(a.public.tdx_quote, None);
        assert_eq!(a.public.tdx_quote_error.as_deref(), Some("tdx_quote_unavailable"));
        assert_eq!(a.binding.tdx_quote_error.as_deref(), Some("tdx_quote_unavailable"));
        assert_eq!(a.binding.tdx_quote_hash, "");
        assert_eq!(a.public.tee_public_key_sha256, hex::encode(sha256(&keys.tee_public())));
        assert_eq!(&a.public.report_data_hex[..64], a.public.tee_public_key_sha256);
        assert_eq!(&a.public.report_data_hex[64..], "0".repeat(64));
        let json = serde_json::to_value(&a.public).unwrap();
        assert!(json["tdxQuote"].is_null());
    }

    #[test]
    fn quotes_bind_the_contract_report_data() {
        let keys = EnclaveKeys::generate();
        let a = Attestation::at_boot(&keys, &Echo, 0);
        let public_q = b64::decode(&a.public.tdx_quote.as_ref().unwrap().quote).unwrap();
        let rd = shared::quote::report_data(&public_q).unwrap();
        assert_eq!(rd[..32], sha256(&keys.tee_public()));
        let binding_q = b64::decode(&a.binding.tdx_quote.as_ref().unwrap().quote).unwrap();
        let rd = shared::quote::report_data(&binding_q).unwrap();
        let both = [keys.tee_public(), keys.enclave_public()].concat();
        assert_eq!(rd[..32], sha256(&both));
        assert_eq!(a.binding.tdx_quote_hash, hex::encode(sha256(&binding_q)));
        assert_eq!(a.binding_quote_hash, Some(sha256(&binding_q)));
    }
}
