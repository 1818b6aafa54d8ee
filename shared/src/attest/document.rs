//! The verification document: every check, its result and the values compared.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Accept,
    Reject,
    Unsupported,
    Malformed,
}

impl Verdict {
    /// `svc attest` exit code.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Accept => 0,
            Verdict::Reject => 10,
            Verdict::Unsupported => 20,
            Verdict::Malformed => 30,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    pub name: &'static str,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerificationDocument {
    pub verdict: Verdict,
    /// Named reason of the first failed check (`None` on accept).
    pub reason: Option<String>,
    /// `intel` or `dev:<sha256 of the root certificate>`.
    pub trust_root: String,
    pub verified_at: u64,
    /// dcap-qvl's TCB status, when it got that far.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcb_status: Option<String>,
    /// Earliest `nextUpdate` of the collateral used: verification results expire then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_until: Option<u64>,
    pub checks: Vec<Check>,
}

impl VerificationDocument {
    /// A document for evidence refused before any check could run (e.g. unreadable collateral).
    pub fn refused(verdict: Verdict, reason: &str, detail: String, trust_root: String, now: u64) -> Self {
        VerificationDocument {
            verdict,
            reason: Some(reason.into()),
            trust_root,
            verified_at: now,
            tcb_status: None,
            valid_until: None,
            checks: vec![Check {
                name: "collateral_parse",
                ok: false,
                expected: None,
                actual: None,
                detail: Some(detail),
            }],
        }
    }

    pub fn accepted(&self) -> bool {
        self.verdict == Verdict::Accept
    }

    pub fn check(&self, name: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.name == name)
    }
}
