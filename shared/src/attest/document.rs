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

/// What one policy (or the evidence parse) found: its rows in order, and its first failure.
/// The document's verdict is the first failure over all of them, in the order they ran.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub checks: Vec<Check>,
    pub failure: Option<(Verdict, &'static str)>,
}

impl Outcome {
    pub fn record(
        &mut self,
        name: &'static str,
        ok: bool,
        expected: Option<String>,
        actual: Option<String>,
        detail: Option<String>,
    ) {
        self.checks.push(Check { name, ok, expected, actual, detail });
    }

    pub fn fail(&mut self, verdict: Verdict, reason: &'static str) {
        if self.failure.is_none() {
            self.failure = Some((verdict, reason));
        }
    }

    /// Records an equality check; on mismatch the verdict is Reject with `reason`.
    pub fn compare(&mut self, name: &'static str, reason: &'static str, expected: String, actual: String) {
        let ok = expected == actual;
        self.record(name, ok, Some(expected), Some(actual), None);
        if !ok {
            self.fail(Verdict::Reject, reason);
        }
    }

    /// Appends `next` after this one's rows; an earlier failure wins.
    pub fn extend(&mut self, next: Outcome) {
        self.checks.extend(next.checks);
        if let Some((verdict, reason)) = next.failure {
            self.fail(verdict, reason);
        }
    }
}
