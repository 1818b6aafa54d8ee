//! The global options that say what `svc` trusts: reference values, the quote root, TCB
//! statuses and collateral. Every command that verifies the enclave reads them here.

use std::path::PathBuf;

use clap::Args;
use client::attest::{AttestOptions, TcbFloor};
use shared::attest::{Measurements, TrustRoot};

use crate::exit::Failure;
use crate::files::{collateral_cache_dir, state_dir, text};

#[derive(Args)]
pub struct TrustArgs {
    /// Published reference values (measurements JSON, schema in docs/attestation.md).
    #[arg(long, env = "SVC_MEASUREMENTS", global = true, default_value = "measurements/measurements.json")]
    pub measurements: PathBuf,
    /// Trust this development root CA (PEM) instead of Intel's. Dev quotes verify only with it.
    #[arg(long, env = "SVC_DEV_ROOT", global = true)]
    dev_root: Option<PathBuf>,
    /// Accepted TCB status (repeatable; default UpToDate).
    #[arg(long = "tcb-status", global = true)]
    tcb_status: Vec<String>,
    /// Collateral JSON to verify with (offline bundle); preferred over collateral the relay
    /// carries.
    #[arg(long, global = true)]
    collateral: Option<PathBuf>,
    /// Refuse collateral whose TCB info has a lower tcbEvaluationDataNumber (a rollback); the
    /// highest number seen per platform is also kept as a floor while svc runs.
    #[arg(long, env = "SVC_MIN_TCB_EVALUATION", global = true)]
    min_tcb_evaluation: Option<u32>,
    /// Else fetch collateral from this Intel PCS / PCCS base URL (cached until nextUpdate).
    #[arg(long, env = "SVC_PCCS_URL", global = true)]
    pccs: Option<String>,
    /// Accept an enclave without any TDX quote (development only; warned on every call).
    #[arg(long, global = true)]
    allow_unattested: bool,
    /// Whether `dev_root` came from `SVC_DEV_ROOT` rather than the command line.
    #[arg(skip)]
    pub dev_root_from_env: bool,
}

impl TrustArgs {
    pub fn options(&self) -> Result<AttestOptions, Failure> {
        let measurements = Measurements::from_json(&text(&self.measurements)?)
            .map_err(|e| Failure::bad_input(format!("{}: {e}", self.measurements.display())))?;
        let root = match &self.dev_root {
            None => TrustRoot::Intel,
            Some(p) => TrustRoot::Dev(
                pem_to_der(&text(p)?)
                    .ok_or_else(|| Failure::bad_input(format!("{}: not a PEM certificate", p.display())))?,
            ),
        };
        let mut options = AttestOptions::new(root, measurements);
        if !self.tcb_status.is_empty() {
            options.allowed_tcb_statuses = self.tcb_status.clone();
        }
        options.allow_unattested = self.allow_unattested;
        options.collateral = self.collateral.as_deref().map(text).transpose()?;
        options.pccs = self.pccs.as_deref().map(|url| client::pccs::PccsClient::new(url, collateral_cache_dir()));
        options.tcb_floor = TcbFloor::new(self.min_tcb_evaluation).kept_in(state_dir().join("tcb-floor.json"));
        Ok(options)
    }

    /// The trust options of the key holder (`svc provision`, `svc keyholder`), which releases
    /// the service's secrets: never to an unattested enclave, and a development root only when
    /// named on its own command line (an environment variable left set from development would
    /// otherwise make a production key holder trust quotes anyone can sign).
    pub fn key_holder_options(&self) -> Result<AttestOptions, Failure> {
        if self.allow_unattested {
            return Err(Failure::bad_input(
                "the key holder never releases secrets to an unattested enclave: --allow-unattested is refused",
            ));
        }
        if self.dev_root_from_env {
            return Err(Failure::bad_input(
                "the key holder takes a development root only as --dev-root on its command line, not from SVC_DEV_ROOT",
            ));
        }
        self.options()
    }

    /// What `svc proxy` offers the web app as its development trust: this svc's own
    /// `--dev-root` and measurements, never the relay's.
    pub fn page_dev_trust(&self) -> Result<Option<serde_json::Value>, Failure> {
        let Some(root) = &self.dev_root else { return Ok(None) };
        let pem = std::fs::read_to_string(root).map_err(|e| Failure::bad_input(format!("{}: {e}", root.display())))?;
        let measurements: serde_json::Value = std::fs::read(&self.measurements)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or_else(|| Failure::bad_input(format!("{} is not a measurements file", self.measurements.display())))?;
        Ok(Some(serde_json::json!({"rootPem": pem, "measurements": measurements})))
    }
}

fn pem_to_der(pem: &str) -> Option<Vec<u8>> {
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    shared::b64::decode(body.trim()).ok().filter(|d| !d.is_empty())
}
