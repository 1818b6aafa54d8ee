//! Which GPU node served a request, signed by the enclave beside the receipt (docs/gpu.md): the
//! receipt's `v2` message stays as it is, and this statement names the receipt it belongs to,
//! the node's pinned TLS key, the node quote and the GPU evidence the enclave verified before it
//! sent the prompt. The enclave puts it in the sealed reply; anyone holding it and the receipt
//! can check it with the receipt's enclave key.

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};

use crate::address::Address;
use crate::receipt::Receipt;
use crate::wire::NodeVerdict;

const DOMAIN: &[u8] = b"svc-served-by-v1\0";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServedBy {
    /// The receipt's address (base58): the request this statement is about.
    pub receipt: String,
    /// SHA-256 of the node's TLS SubjectPublicKeyInfo (hex): the pinned key the prompt went to.
    pub node: String,
    /// SHA-256 of the node's TDX quote (hex).
    pub node_quote_sha256: String,
    /// The digest of the GPU reports and chains that quote binds (hex).
    pub gpu_evidence_sha256: String,
    /// Each verified GPU's firmware id (hex), in the node's order.
    pub gpu_fwids: Vec<String>,
    /// When the enclave verified that evidence (Unix seconds).
    pub verified_at: u64,
    /// ed25519 by the receipt's enclave key over the fields above, base64.
    pub signature: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ServedByError {
    #[error("the statement names another receipt")]
    OtherReceipt,
    #[error("the statement is malformed")]
    Malformed,
    #[error("the statement is not signed by the receipt's enclave key")]
    Signature,
}

impl ServedBy {
    /// The enclave's statement that `verdict`'s node served the request of `receipt`.
    pub fn issue(receipt: &Receipt, verdict: &NodeVerdict, key: &SigningKey) -> Result<Self, ServedByError> {
        let mut statement = ServedBy {
            receipt: receipt.address.clone(),
            node: verdict.tls_spki_sha256.clone(),
            node_quote_sha256: verdict.quote_sha256.clone(),
            gpu_evidence_sha256: verdict.evidence_digest.clone(),
            gpu_fwids: verdict.gpus.iter().map(|g| g.fwid.clone()).collect(),
            verified_at: verdict.verified_at,
            signature: String::new(),
        };
        statement.signature = crate::b64::encode(key.sign(&statement.message()?).to_bytes());
        Ok(statement)
    }

    /// Checks that the statement is about `receipt` and signed by its enclave key. The receipt
    /// itself is checked separately (`Receipt::verify`).
    pub fn verify(&self, receipt: &Receipt) -> Result<(), ServedByError> {
        if self.receipt != receipt.address {
            return Err(ServedByError::OtherReceipt);
        }
        let key: [u8; 32] = crate::b64::decode_array(&receipt.enclave_pubkey).ok_or(ServedByError::Signature)?;
        let key = VerifyingKey::from_bytes(&key).map_err(|_| ServedByError::Signature)?;
        let signature: [u8; 64] = crate::b64::decode_array(&self.signature).ok_or(ServedByError::Signature)?;
        key.verify_strict(&self.message()?, &Signature::from_bytes(&signature)).map_err(|_| ServedByError::Signature)
    }

    /// `DOMAIN ‖ receipt address (32) ‖ node (32) ‖ quote hash (32) ‖ evidence digest (32) ‖
    /// verified_at (u64 BE) ‖ GPU count (u8) ‖ each FWID (48)`: fixed widths, so no two
    /// statements sign the same bytes.
    fn message(&self) -> Result<Vec<u8>, ServedByError> {
        let hex32 = |h: &str| crate::receipt::decode_hex32(h).ok_or(ServedByError::Malformed);
        let address = Address::parse(&self.receipt).ok_or(ServedByError::Malformed)?;
        let count = u8::try_from(self.gpu_fwids.len()).map_err(|_| ServedByError::Malformed)?;
        let mut m = Vec::with_capacity(DOMAIN.len() + 137 + 48 * self.gpu_fwids.len());
        m.extend_from_slice(DOMAIN);
        m.extend_from_slice(&address.0);
        m.extend_from_slice(&hex32(&self.node)?);
        m.extend_from_slice(&hex32(&self.node_quote_sha256)?);
        m.extend_from_slice(&hex32(&self.gpu_evidence_sha256)?);
        m.extend_from_slice(&self.verified_at.to_be_bytes());
        m.push(count);
        for fwid in &self.gpu_fwids {
            let fwid = hex::decode(fwid).ok().filter(|f| f.len() == 48).ok_or(ServedByError::Malformed)?;
            m.extend_from_slice(&fwid);
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::GpuVerdict;

    fn receipt(key: &SigningKey) -> Receipt {
        let body = crate::receipt::ReceiptBody {
            prompt_hash: crate::keys::PromptHash([1; 32]),
            tee_pubkey: crate::keys::TeeKey([2; 32]),
            nonce: [3; 16],
            client_pubkey: crate::keys::ClientKey([4; 32]),
            model: "gpt-oss:20b".into(),
            provider: crate::catalog::PROVIDER.into(),
        };
        let ctx = crate::receipt::ReceiptContext {
            program_id: crate::address::default_program_id(),
            timestamp: 1_800_000_000,
            tdx_quote_hash: None,
        };
        Receipt::issue(&body, key, &ctx).unwrap()
    }

    fn verdict() -> NodeVerdict {
        let gpu = GpuVerdict {
            device: "ef".repeat(32),
            driver: "550.90.07".into(),
            vbios: "96.00.9F.00.01".into(),
            board: "1010-0200-882".into(),
            fwid: "ab".repeat(48),
            measurements_matched: 33,
            ocsp_produced_at: 1_799_999_000,
        };
        NodeVerdict {
            tls_spki_sha256: "11".repeat(32),
            quote_sha256: "22".repeat(32),
            evidence_digest: "33".repeat(32),
            trust_root: "intel".into(),
            tcb_status: Some("UpToDate".into()),
            device_root: "nvidia".into(),
            gpus: vec![gpu],
            verified_at: 1_799_999_900,
        }
    }

    #[test]
    fn a_statement_verifies_only_for_its_receipt_and_unchanged() {
        let key = SigningKey::from_bytes(&[9; 32]);
        let receipt = receipt(&key);
        let statement = ServedBy::issue(&receipt, &verdict(), &key).unwrap();
        assert_eq!(statement.verify(&receipt), Ok(()));

        let other_key = SigningKey::from_bytes(&[8; 32]);
        let forged = ServedBy::issue(&receipt, &verdict(), &other_key).unwrap();
        assert_eq!(forged.verify(&receipt), Err(ServedByError::Signature), "another key");
        let mut other = receipt.clone();
        other.address = crate::address::Address([5; 32]).to_string();
        assert_eq!(statement.verify(&other), Err(ServedByError::OtherReceipt));
        for change in [
            |s: &mut ServedBy| s.node = "12".repeat(32),
            |s: &mut ServedBy| s.gpu_evidence_sha256 = "34".repeat(32),
            |s: &mut ServedBy| s.gpu_fwids.push("cd".repeat(48)),
            |s: &mut ServedBy| s.verified_at += 1,
        ] {
            let mut changed = statement.clone();
            change(&mut changed);
            assert_eq!(changed.verify(&receipt), Err(ServedByError::Signature));
        }
        let mut bad = statement.clone();
        bad.node = "not hex".into();
        assert_eq!(bad.verify(&receipt), Err(ServedByError::Malformed));
    }
}
