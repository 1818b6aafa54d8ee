//! Verify the enclave before trusting its key: both boot quotes through dcap-qvl and our
//! policy, and a fresh nonce signed by the key the binding quote covers.

use rand_core::{OsRng, RngCore};
use serde::Serialize;
use shared::attest::verify::NonceProof;
use shared::attest::{
    Binding, Collateral, Evidence, Measurements, Policy, TrustRoot, Verdict, VerificationDocument, VerifiedPlatforms,
    verify_remembering,
};
use shared::b64;
use shared::keys::{EnclaveKey, TeeKey};
use shared::wire::{AttestationResponse, ProvisioningState, TDX_QUOTE_UNAVAILABLE, TdxQuote};

use crate::api::Client;
use crate::error::ClientError;
use crate::key_cache::CachedKey;

/// Enclave platforms this process has verified: a proxy or agent that checks the same enclaves
/// again pays one signature per quote, not the whole chain.
static PLATFORMS: std::sync::LazyLock<VerifiedPlatforms> = std::sync::LazyLock::new(VerifiedPlatforms::default);

/// How this client decides whether to trust an enclave.
#[derive(Debug, Clone)]
pub struct AttestOptions {
    pub root: TrustRoot,
    pub measurements: Measurements,
    pub allowed_tcb_statuses: Vec<String>,
    /// Accept an enclave that has no quote provider (development only; said on every call).
    pub allow_unattested: bool,
    /// Collateral to use when the enclave does not carry it (offline bundle, JSON).
    pub collateral: Option<String>,
    /// Else fetch it from this PCS / PCCS (cached until `nextUpdate`).
    pub pccs: Option<crate::pccs::PccsClient>,
    /// The lowest TCB evaluation accepted, and the highest seen per platform.
    pub tcb_floor: TcbFloor,
}

/// Refuses collateral older than what this client already saw for the platform (or than a
/// configured minimum): a relay could otherwise serve TCB info from before a TCB recovery that
/// has not expired yet, and a platform it rated `OutOfDate` would pass as `UpToDate`. Kept in
/// a file (`svc`: the state directory), the floor holds across runs, not only within one.
#[derive(Debug, Clone, Default)]
pub struct TcbFloor {
    pub minimum: Option<u32>,
    seen: std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<String, u32>>>,
    file: Option<std::path::PathBuf>,
}

impl TcbFloor {
    pub fn new(minimum: Option<u32>) -> Self {
        TcbFloor { minimum, seen: Default::default(), file: None }
    }

    /// The floor read from `file` (FMSPC → evaluation number, JSON; missing: none yet) and
    /// written back there whenever it rises.
    pub fn kept_in(mut self, file: std::path::PathBuf) -> Self {
        let kept: std::collections::BTreeMap<String, u32> =
            std::fs::read(&file).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
        self.seen = std::sync::Arc::new(std::sync::Mutex::new(kept));
        self.file = Some(file);
        self
    }

    /// Accepts `collateral` if its evaluation is not below the floor, and raises the floor.
    pub fn admit(&self, collateral: &Collateral) -> Result<(), &'static str> {
        let Some(e) = &collateral.tcb_evaluation else { return Err("malformed_collateral") };
        if self.minimum.is_some_and(|m| e.number < m) {
            return Err("collateral_rollback");
        }
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let highest = seen.entry(e.fmspc.clone()).or_insert(0);
        if e.number < *highest {
            return Err("collateral_rollback");
        }
        let rose = e.number > *highest;
        *highest = e.number;
        if let Some(file) = self.file.as_ref().filter(|_| rose) {
            let kept = serde_json::to_vec_pretty(&*seen).unwrap_or_default();
            if let Err(e) = crate::private_file::write(file, &kept) {
                tracing::warn!(file = %file.display(), error = %e, "the TCB floor was not kept");
            }
        }
        Ok(())
    }
}

impl AttestOptions {
    pub fn new(root: TrustRoot, measurements: Measurements) -> Self {
        AttestOptions {
            root,
            measurements,
            allowed_tcb_statuses: vec!["UpToDate".into()],
            allow_unattested: false,
            collateral: None,
            pccs: None,
            tcb_floor: TcbFloor::default(),
        }
    }

    fn policy(&self) -> Policy {
        Policy {
            root: self.root.clone(),
            allowed_tcb_statuses: self.allowed_tcb_statuses.clone(),
            measurements: self.measurements.clone(),
        }
    }
}

/// What `svc attest` prints: the two quote documents and the overall verdict.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttestationReport {
    pub verdict: Verdict,
    pub reason: Option<String>,
    pub tee_public_key: String,
    pub enclave_public_key: String,
    /// `tdx_guest`, `dev`, or `none`.
    pub quote_provider: String,
    /// True when accepted without any quote (`--allow-unattested`).
    pub unattested: bool,
    pub public_quote: Option<VerificationDocument>,
    pub binding_quote: Option<VerificationDocument>,
    /// What the enclave says of its secrets bundle (informational: no quote covers it).
    pub provisioning: ProvisioningState,
    /// The GPU nodes it sends prompts to and their last verdicts (informational: what each must
    /// prove is in the measured configuration; docs/gpu.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gpu_nodes: Vec<shared::wire::GpuNodeStatus>,
}

impl AttestationReport {
    pub fn accepted(&self) -> bool {
        self.verdict == Verdict::Accept
    }
}

impl Client {
    /// Fetches the attestation with a fresh nonce and verifies it; returns the report and,
    /// when accepted, the key entry to cache.
    pub async fn attest(&self) -> Result<(AttestationReport, Option<CachedKey>), ClientError> {
        self.attest_key(None).await
    }

    /// As [`attest`](Self::attest), for the enclave holding the key `key_id` names when the
    /// relay has several.
    pub async fn attest_key(
        &self,
        key_id: Option<[u8; 32]>,
    ) -> Result<(AttestationReport, Option<CachedKey>), ClientError> {
        let options = self.attest_options.as_ref().ok_or(ClientError::NoPolicy)?;
        let mut nonce = [0u8; 32];
        OsRng.fill_bytes(&mut nonce);
        let mut path = format!("/tee/attestation?nonce={}", hex::encode(nonce));
        if let Some(id) = key_id {
            path.push_str(&format!("&keyId={}", hex::encode(id)));
        }
        let a: AttestationResponse = self.get(&path).await?;
        let tee: [u8; 32] =
            b64::decode_array(&a.tee_public_key).ok_or(ClientError::BadKey("teePublicKey is not 32 bytes"))?;
        let enclave: [u8; 32] =
            b64::decode_array(&a.enclave_public_key).ok_or(ClientError::BadKey("enclavePublicKey is not 32 bytes"))?;
        if key_id.is_some_and(|id| shared::sha256(&tee) != id) {
            return Err(ClientError::BadKey("the relay answered for another enclave key"));
        }
        // The client's own source first: collateral the relay carries could be an older one
        // that has not expired yet. Fetch it (only FMSPC and CA type leave the client).
        if let (Some(q), None, Some(pccs)) = (&a.tdx_quote, &options.collateral, &options.pccs)
            && let Ok(bytes) = b64::decode(&q.quote)
        {
            let mut options = options.clone();
            options.collateral = Some(pccs.collateral_for(&bytes).await?);
            return Ok(evaluate(&a, tee, enclave, nonce, &options, shared::time::unix_now()));
        }
        Ok(evaluate(&a, tee, enclave, nonce, options, shared::time::unix_now()))
    }
}

/// The verification proper, without I/O (tests call it directly).
pub fn evaluate(
    a: &AttestationResponse,
    tee: [u8; 32],
    enclave: [u8; 32],
    nonce: [u8; 32],
    options: &AttestOptions,
    now: u64,
) -> (AttestationReport, Option<CachedKey>) {
    let mut report = AttestationReport {
        verdict: Verdict::Reject,
        reason: None,
        tee_public_key: a.tee_public_key.clone(),
        enclave_public_key: a.enclave_public_key.clone(),
        quote_provider: a.tdx_quote.as_ref().map_or("none".into(), |q| q.provider.clone()),
        unattested: false,
        public_quote: None,
        binding_quote: None,
        provisioning: a.provisioning.clone(),
        gpu_nodes: a.gpu_nodes.clone(),
    };
    let (Some(public), Some(binding)) = (&a.tdx_quote, &a.binding_tdx_quote) else {
        let reason = a.tdx_quote_error.clone().unwrap_or_else(|| "no_quote".into());
        if options.allow_unattested && reason == TDX_QUOTE_UNAVAILABLE {
            report.verdict = Verdict::Accept;
            report.unattested = true;
            report.reason = Some(reason);
            let key = CachedKey {
                tee_public_key: tee,
                enclave_public_key: enclave,
                binding_quote_hash: None,
                verified_until: now + 3600,
                unattested: true,
            };
            return (report, Some(key));
        }
        report.reason = Some(reason);
        return (report, None);
    };
    let policy = options.policy();
    let signature: Option<[u8; 64]> = a.nonce_signature.as_deref().and_then(b64::decode_array);
    let nonce_echo_ok = a.nonce.as_deref() == Some(hex::encode(nonce).as_str());
    let run = |q: &TdxQuote,
               binding: Binding,
               proof: Option<NonceProof>|
     -> Result<(VerificationDocument, Vec<u8>), &'static str> {
        let bytes = b64::decode(&q.quote).map_err(|_| "quote_not_base64")?;
        let text = options.collateral.as_ref().or(q.collateral.as_ref()).ok_or("no_collateral")?;
        let collateral = Collateral::from_json(text).map_err(|e| e.reason())?;
        options.tcb_floor.admit(&collateral)?;
        let doc = verify_remembering(
            &Evidence { quote: &bytes, collateral: &collateral, binding: Some(binding), nonce: proof },
            &policy,
            &PLATFORMS,
            now,
        );
        Ok((doc, bytes))
    };
    let public_doc = run(public, Binding::PublicKey(TeeKey(tee)), None);
    // A missing or wrong nonce signature still runs the check, so the document shows it failed.
    let proof = NonceProof { nonce, signature: signature.filter(|_| nonce_echo_ok).unwrap_or([0; 64]) };
    let binding_doc = run(binding, Binding::Keys { tee: TeeKey(tee), enclave: EnclaveKey(enclave) }, Some(proof));
    let (public_doc, binding_doc) = match (public_doc, binding_doc) {
        (Ok(p), Ok(b)) => (p, b),
        (Err(reason), _) | (_, Err(reason)) => {
            report.verdict = match reason {
                "no_collateral" => Verdict::Unsupported,
                "collateral_rollback" => Verdict::Reject,
                _ => Verdict::Malformed,
            };
            report.reason = Some(reason.into());
            return (report, None);
        }
    };
    let worst = [&public_doc.0, &binding_doc.0].into_iter().find(|d| !d.accepted());
    report.verdict = worst.map_or(Verdict::Accept, |d| d.verdict);
    report.reason = worst.and_then(|d| d.reason.clone());
    let valid_until = [public_doc.0.valid_until, binding_doc.0.valid_until].into_iter().flatten().min();
    let cached = (report.verdict == Verdict::Accept).then(|| CachedKey {
        tee_public_key: tee,
        enclave_public_key: enclave,
        binding_quote_hash: Some(shared::sha256(&binding_doc.1)),
        verified_until: valid_until.unwrap_or(now).min(now + 24 * 3600),
        unattested: false,
    });
    report.public_quote = Some(public_doc.0);
    report.binding_quote = Some(binding_doc.0);
    (report, cached)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/test-vectors/dcap-qvl-samples");

    fn sample(name: &str) -> Collateral {
        Collateral::from_json(&std::fs::read_to_string(format!("{SAMPLES}/{name}")).unwrap()).unwrap()
    }

    /// Real collateral: one platform evaluated 17 and later 20, another 18.
    #[test]
    fn the_floor_rises_per_platform_and_refuses_rollback() {
        let (first, later, other) = (
            sample("tdx_quote_collateral.json"),
            sample("tdx_quote_td15ex_collateral.json"),
            sample("tdx_quote_outdated_collateral.json"),
        );
        let floor = TcbFloor::default();
        assert_eq!(floor.admit(&first), Ok(()));
        assert_eq!(floor.admit(&later), Ok(()));
        assert_eq!(floor.admit(&later), Ok(()), "the same evaluation again");
        assert_eq!(floor.admit(&first), Err("collateral_rollback"), "17 after 20 on one platform");
        assert_eq!(floor.admit(&other), Ok(()), "another platform has its own floor");
        // Clones share what was seen (the options are cloned per call).
        assert_eq!(floor.clone().admit(&first), Err("collateral_rollback"));
        // Kept in a file, the floor holds for the next run.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tcb-floor.json");
        assert_eq!(TcbFloor::new(None).kept_in(file.clone()).admit(&later), Ok(()));
        let next_run = TcbFloor::new(None).kept_in(file.clone());
        assert_eq!(next_run.admit(&first), Err("collateral_rollback"), "20 was seen by an earlier run");
        assert_eq!(next_run.admit(&other), Ok(()));
        let kept: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(kept.as_object().unwrap().len(), 2, "{kept}");
        let minimum = TcbFloor::new(Some(19));
        assert_eq!(minimum.admit(&other), Err("collateral_rollback"), "18 below the minimum 19");
        assert_eq!(minimum.admit(&later), Ok(()));
    }
}
