//! One-shot private swap sessions (DESIGN §11): the terms the enclave commits to before the
//! payer funds the session, and the receipt it signs when the session settles.
//!
//! The enclave signs the commitment with its attested ed25519 key: a client checks it against
//! the key it verified before it signs the funding, so a relay that alters the destination,
//! the amounts or the ephemeral key is caught before any money moves.

use serde::{Deserialize, Serialize};

use crate::address::Address;
use crate::amount::Amount;
#[cfg(feature = "swap-client")]
use crate::b64;

pub mod funding;

/// Domain separation of the session commitment signature.
pub const COMMITMENT_PREFIX: &[u8] = b"SVC-SESSION-v1";
/// Domain separation of the settled-session receipt signature.
pub const RECEIPT_PREFIX: &[u8] = b"SVC-SWAP-RECEIPT-v1";
/// Seed of a session receipt's ledger address (with the 16 session id bytes).
pub const RECEIPT_SEED: &[u8] = b"session_v1";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SwapError {
    #[error("`{0}` is malformed")]
    Malformed(&'static str),
    #[error("the signature does not verify against the enclave key")]
    BadSignature,
}

/// What a one-shot session is: who funds it, what it swaps, where the output goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionTerms {
    /// A uuid (8-4-4-4-12 hex).
    pub session_id: String,
    pub payer: String,
    pub from_mint: String,
    pub to_mint: String,
    /// Base units, as a string.
    pub amount: String,
    pub destination: String,
    /// The least output the enclave will accept from the router, base units.
    pub min_out: String,
    /// Unix seconds; funding seen later is refunded.
    pub expires_at: u64,
}

/// The terms as the enclave signs them (fixed layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParsedTerms {
    pub session_id: [u8; 16],
    pub payer: Address,
    pub from_mint: Address,
    pub to_mint: Address,
    pub amount: u64,
    pub destination: Address,
    pub min_out: u64,
    pub expires_at: u64,
}

/// A uuid string as its 16 bytes.
pub fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    let hex: String = text.chars().filter(|c| *c != '-').collect();
    let groups: Vec<usize> = text.split('-').map(str::len).collect();
    if groups != [8, 4, 4, 4, 12] || hex.bytes().any(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let mut out = [0u8; 16];
    hex::decode_to_slice(hex, &mut out).ok()?;
    Some(out)
}

/// 16 bytes as a uuid string (lower case).
pub fn format_uuid(id: &[u8; 16]) -> String {
    let h = hex::encode(id);
    format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
}

fn address(field: &'static str, text: &str) -> Result<Address, SwapError> {
    Address::parse(text).ok_or(SwapError::Malformed(field))
}

fn amount(field: &'static str, text: &str) -> Result<u64, SwapError> {
    Amount::parse(text).map(|a| a.0).ok_or(SwapError::Malformed(field))
}

impl SessionTerms {
    pub fn parse(&self) -> Result<ParsedTerms, SwapError> {
        Ok(ParsedTerms {
            session_id: parse_uuid(&self.session_id).ok_or(SwapError::Malformed("sessionId"))?,
            payer: address("payer", &self.payer)?,
            from_mint: address("fromMint", &self.from_mint)?,
            to_mint: address("toMint", &self.to_mint)?,
            amount: amount("amount", &self.amount)?,
            destination: address("destination", &self.destination)?,
            min_out: amount("minOut", &self.min_out)?,
            expires_at: self.expires_at,
        })
    }
}

/// The enclave's commitment to a session: the terms, the ephemeral key that will hold the
/// funds, and its signature by the attested enclave key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SessionCommitment {
    pub terms: SessionTerms,
    /// The ephemeral wallet the payer funds (base58).
    pub ephemeral_pubkey: String,
    /// The enclave's ed25519 key, base64 (the one the binding quote covers).
    pub enclave_pubkey: String,
    /// ed25519 over [`SessionCommitment::message`], base64.
    pub signature: String,
}

impl SessionCommitment {
    /// `SVC-SESSION-v1` ‖ session id (16) ‖ ephemeral key ‖ payer ‖ from mint ‖ to mint ‖
    /// amount (8, big-endian) ‖ destination ‖ min out (8) ‖ expires at (8).
    pub fn message(terms: &ParsedTerms, ephemeral: &Address) -> Vec<u8> {
        let mut m = COMMITMENT_PREFIX.to_vec();
        m.extend_from_slice(&terms.session_id);
        m.extend_from_slice(&ephemeral.0);
        m.extend_from_slice(&terms.payer.0);
        m.extend_from_slice(&terms.from_mint.0);
        m.extend_from_slice(&terms.to_mint.0);
        m.extend_from_slice(&terms.amount.to_be_bytes());
        m.extend_from_slice(&terms.destination.0);
        m.extend_from_slice(&terms.min_out.to_be_bytes());
        m.extend_from_slice(&terms.expires_at.to_be_bytes());
        m
    }

    /// Checks the signature under the enclave key it names; the caller checks that key is the
    /// one it attested.
    #[cfg(feature = "swap-client")]
    pub fn verify(&self) -> Result<ParsedTerms, SwapError> {
        let terms = self.terms.parse()?;
        let ephemeral = address("ephemeralPubkey", &self.ephemeral_pubkey)?;
        verify_ed25519(&self.enclave_pubkey, &self.signature, &Self::message(&terms, &ephemeral))?;
        Ok(terms)
    }
}

/// What a settled session proves: the enclave's signed account of the swap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SwapReceipt {
    pub version: String,
    pub session_id: String,
    pub from_mint: String,
    pub to_mint: String,
    pub amount_in: String,
    pub actual_out: String,
    pub destination: String,
    pub ephemeral_pubkey: String,
    pub funding_tx_sig: String,
    pub final_tx_sig: String,
    pub timestamp: u64,
    /// The ledger address: the program-derived address of (`session_v1`, session id).
    pub address: String,
    pub enclave_pubkey: String,
    pub signature: String,
}

/// The receipt version.
pub const RECEIPT_VERSION: &str = "swap-v1";

impl SwapReceipt {
    /// `SVC-SWAP-RECEIPT-v1` ‖ session id ‖ from mint ‖ to mint ‖ amount in (8) ‖ actual out
    /// (8) ‖ destination ‖ ephemeral key ‖ funding signature (64) ‖ final signature (64) ‖
    /// timestamp (8).
    pub fn message(&self) -> Result<Vec<u8>, SwapError> {
        let id = parse_uuid(&self.session_id).ok_or(SwapError::Malformed("sessionId"))?;
        let sig = |field: &'static str, text: &str| -> Result<[u8; 64], SwapError> {
            let bytes = bs58::decode(text).into_vec().map_err(|_| SwapError::Malformed(field))?;
            bytes.try_into().map_err(|_| SwapError::Malformed(field))
        };
        let mut m = RECEIPT_PREFIX.to_vec();
        m.extend_from_slice(&id);
        m.extend_from_slice(&address("fromMint", &self.from_mint)?.0);
        m.extend_from_slice(&address("toMint", &self.to_mint)?.0);
        m.extend_from_slice(&amount("amountIn", &self.amount_in)?.to_be_bytes());
        m.extend_from_slice(&amount("actualOut", &self.actual_out)?.to_be_bytes());
        m.extend_from_slice(&address("destination", &self.destination)?.0);
        m.extend_from_slice(&address("ephemeralPubkey", &self.ephemeral_pubkey)?.0);
        m.extend_from_slice(&sig("fundingTxSig", &self.funding_tx_sig)?);
        m.extend_from_slice(&sig("finalTxSig", &self.final_tx_sig)?);
        m.extend_from_slice(&self.timestamp.to_be_bytes());
        Ok(m)
    }

    /// Checks the version, the address under `program_id`, and the signature under the enclave
    /// key it names (the caller checks that key is one it attested).
    #[cfg(feature = "swap-client")]
    pub fn verify(&self, program_id: &Address) -> Result<(), SwapError> {
        if self.version != RECEIPT_VERSION {
            return Err(SwapError::Malformed("version"));
        }
        let id = parse_uuid(&self.session_id).ok_or(SwapError::Malformed("sessionId"))?;
        if Address::parse(&self.address) != Some(receipt_address(&id, program_id)) {
            return Err(SwapError::Malformed("address"));
        }
        verify_ed25519(&self.enclave_pubkey, &self.signature, &self.message()?)
    }
}

/// `POST /swaps/sessions` of the enclave: the session's key, sealed with its terms, and the
/// commitment the client checks before funding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenedSession {
    pub object: crate::wire::SealedObject,
    pub commitment: SessionCommitment,
}

#[cfg(feature = "swap-client")]
/// The answer of `POST /agents/v1/swaps/oneshot` (contract §2.8), with what a client checks
/// before it funds: the enclave's signed commitment, the quoted and least output, and the
/// lamports the funding gives the session key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct OneshotStart {
    pub session_id: String,
    pub ephemeral_pubkey: String,
    /// Unsigned, base64; the payer signs and broadcasts it.
    pub funding_tx: String,
    pub expected_seconds: u64,
    pub bucketed: bool,
    /// ISO 8601.
    pub expires_at: String,
    pub bucket_label: Option<String>,
    pub expected_out: String,
    pub min_out: String,
    pub funding_lamports: String,
    pub commitment: SessionCommitment,
}

/// `POST /swaps/step` of the enclave: one idempotent step of a session, on the sealed session
/// (its key and terms) and what the relay recorded. The enclave reads the chain itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case", rename_all_fields = "camelCase", deny_unknown_fields)]
pub enum StepRequest {
    /// Is this the transaction that funded this session, as the terms say?
    CheckFunding { blob: String, funding_tx_sig: String },
    /// A swap of the funded input through the router, signed by the session key.
    Swap { blob: String },
    /// Everything of the output token to the destination; the rest back to the payer.
    Deliver { blob: String },
    /// Everything of the input token, and the lamports, back to the payer.
    Refund { blob: String },
    /// The signed receipt of a settled session, after checking the delivery on chain.
    Attest { blob: String, funding_tx_sig: String, final_tx_sig: String },
}

/// What a step did, one shape per step. A step that signs a transaction returns it for the
/// relay to record, then broadcast; the enclave never sends it itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "camelCase")]
pub enum StepAnswer {
    /// `checkFunding`: the funding is the session's; `amount` is its input (base units), and
    /// `expired` says the funding came after the session expired (it is to be refunded).
    Funded { amount: Amount, expired: bool },
    /// `swap`, `deliver`, `refund`: a signed transaction.
    Signed(SignedStep),
    /// `attest`: the signed receipt of a settled session and its output (base units).
    Attested { amount: Amount, receipt: Box<SwapReceipt> },
}

/// A transaction a step signed, and the base units it moves (expected out, delivered or
/// refunded).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignedStep {
    /// The signed transaction, base64.
    pub transaction: String,
    pub signature: String,
    pub last_valid_block_height: u64,
    pub amount: Amount,
}

/// A settled session's ledger address.
pub fn receipt_address(session_id: &[u8; 16], program_id: &Address) -> Address {
    crate::address::find_program_address(&[RECEIPT_SEED, session_id], program_id)
        .expect("a PDA exists for all but a 2^-255 fraction of seeds")
        .0
}

#[cfg(feature = "swap-client")]
fn verify_ed25519(key_b64: &str, signature_b64: &str, message: &[u8]) -> Result<(), SwapError> {
    let key: [u8; 32] = b64::decode_array(key_b64).ok_or(SwapError::Malformed("enclavePubkey"))?;
    let key = ed25519_dalek::VerifyingKey::from_bytes(&key).map_err(|_| SwapError::Malformed("enclavePubkey"))?;
    let signature: [u8; 64] = b64::decode_array(signature_b64).ok_or(SwapError::Malformed("signature"))?;
    key.verify_strict(message, &ed25519_dalek::Signature::from_bytes(&signature)).map_err(|_| SwapError::BadSignature)
}

#[cfg(all(test, feature = "swap-client"))]
mod tests {
    use super::*;
    use ed25519_dalek::{Signer, SigningKey};

    fn terms() -> SessionTerms {
        SessionTerms {
            session_id: "0f8e4a2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b".into(),
            payer: Address([1; 32]).to_string(),
            from_mint: Address([2; 32]).to_string(),
            to_mint: Address([3; 32]).to_string(),
            amount: "1000000".into(),
            destination: Address([4; 32]).to_string(),
            min_out: "990".into(),
            expires_at: 1_800_000_000,
        }
    }

    fn commitment(key: &SigningKey) -> SessionCommitment {
        let t = terms();
        let ephemeral = Address([5; 32]);
        let signature = key.sign(&SessionCommitment::message(&t.parse().unwrap(), &ephemeral)).to_bytes();
        SessionCommitment {
            terms: t,
            ephemeral_pubkey: ephemeral.to_string(),
            enclave_pubkey: b64::encode(key.verifying_key().to_bytes()),
            signature: b64::encode(signature),
        }
    }

    /// A step's answer on the enclave's internal API: tagged by `step`, fields in camelCase,
    /// and a signed step without its transaction is no answer rather than half of one.
    #[test]
    fn step_answers_are_tagged_by_step() {
        let signed = StepAnswer::Signed(SignedStep {
            transaction: "dHg=".into(),
            signature: "s".into(),
            last_valid_block_height: 7,
            amount: Amount(5),
        });
        let wire = serde_json::json!({"step": "signed", "transaction": "dHg=", "signature": "s",
                                      "lastValidBlockHeight": 7, "amount": "5"});
        assert_eq!(serde_json::to_value(&signed).unwrap(), wire);
        let funded: StepAnswer = serde_json::from_value(serde_json::json!({"step": "funded", "amount": "10",
                                                                           "expired": true}))
        .unwrap();
        assert_eq!(funded, StepAnswer::Funded { amount: Amount(10), expired: true });
        let mut partial = wire;
        partial.as_object_mut().unwrap().remove("transaction");
        assert!(serde_json::from_value::<StepAnswer>(partial).is_err());
    }

    #[test]
    fn the_commitment_layout_is_fixed() {
        let m = SessionCommitment::message(&terms().parse().unwrap(), &Address([5; 32]));
        assert_eq!(m.len(), COMMITMENT_PREFIX.len() + 16 + 32 * 5 + 8 * 3);
        assert_eq!(&m[COMMITMENT_PREFIX.len()..][..16], hex::decode("0f8e4a2c1b3d4e5f8a9b0c1d2e3f4a5b").unwrap());
        assert_eq!(&m[m.len() - 8..], 1_800_000_000u64.to_be_bytes());
    }

    #[test]
    fn an_altered_commitment_does_not_verify() {
        let key = SigningKey::from_bytes(&[9; 32]);
        let good = commitment(&key);
        assert!(good.verify().is_ok());
        let mut other_destination = good.clone();
        other_destination.terms.destination = Address([6; 32]).to_string();
        assert_eq!(other_destination.verify().err(), Some(SwapError::BadSignature));
        let mut other_ephemeral = good.clone();
        other_ephemeral.ephemeral_pubkey = Address([7; 32]).to_string();
        assert_eq!(other_ephemeral.verify().err(), Some(SwapError::BadSignature));
        let mut more = good.clone();
        more.terms.amount = "1000001".into();
        assert_eq!(more.verify().err(), Some(SwapError::BadSignature));
        let mut bad = good;
        bad.terms.amount = "01".into();
        assert_eq!(bad.verify().err(), Some(SwapError::Malformed("amount")));
    }

    #[test]
    fn uuids_are_strict() {
        let id = parse_uuid("0f8e4a2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b").unwrap();
        assert_eq!(format_uuid(&id), "0f8e4a2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b");
        for bad in ["0F8E4A2C-1b3d-4e5f-8a9b-0c1d2e3f4a5b", "0f8e4a2c1b3d4e5f8a9b0c1d2e3f4a5b", "x", ""] {
            assert_eq!(parse_uuid(bad), None, "{bad}");
        }
    }
}
