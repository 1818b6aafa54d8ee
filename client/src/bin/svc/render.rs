//! The verification documents as text, for `attest`, `provision` and a refused enclave.

use client::attest::AttestationReport;
use shared::attest::{Verdict, VerificationDocument};

pub fn report(r: &AttestationReport) -> String {
    let mut out = format!(
        "verdict: {}{}\nenclave: teePublicKey {}  enclavePublicKey {}  quote provider {}\n",
        verdict_word(r.verdict),
        r.reason.as_deref().map(|x| format!(" ({x})")).unwrap_or_default(),
        r.tee_public_key,
        r.enclave_public_key,
        r.quote_provider
    );
    if r.unattested {
        out.push_str("WARNING: accepted WITHOUT a TDX quote (--allow-unattested)\n");
    }
    out.push_str(&match (&r.provisioning.bundle_version, &r.provisioning.provisioner_key) {
        (Some(v), Some(k)) => format!("provisioned: yes (bundle v{v}, provisioner {k})\n"),
        _ => "provisioned: no (no secrets bundle yet)\n".to_string(),
    });
    for node in &r.gpu_nodes {
        out.push_str(&gpu_node(node));
    }
    if let Some(d) = &r.public_quote {
        out.push_str(&document("public quote (report_data = sha256(teePublicKey))", d));
    }
    if let Some(d) = &r.binding_quote {
        out.push_str(&document("binding quote (report_data = sha256(teePublicKey ‖ enclavePublicKey)) + nonce", d));
    }
    out
}

/// One GPU node of the attestation document: the models it serves and its last verdict.
fn gpu_node(node: &shared::wire::GpuNodeStatus) -> String {
    let mut out =
        format!("gpu node {} ({}; {} GPU(s) required): ", node.tls_spki_sha256, node.models.join(", "), node.gpus);
    let Some(v) = &node.verdict else {
        out.push_str("not attested yet (it attests before its first prompt)\n");
        return out;
    };
    out.push_str(&format!(
        "attested at {} (node quote under {}, TCB {}; GPUs under {})\n",
        shared::time::rfc3339(v.verified_at),
        v.trust_root,
        v.tcb_status.as_deref().unwrap_or("?"),
        v.device_root
    ));
    for (i, g) in v.gpus.iter().enumerate() {
        out.push_str(&format!(
            "  GPU {i}: driver {}, VBIOS {}, board {}, {} measurements matched, OCSP from {}\n",
            g.driver,
            g.vbios,
            g.board,
            g.measurements_matched,
            shared::time::rfc3339(g.ocsp_produced_at)
        ));
    }
    out
}

pub fn document(title: &str, d: &VerificationDocument) -> String {
    let mut out = format!(
        "\n{title}: {}{}  [root {}, TCB {}]\n",
        verdict_word(d.verdict),
        d.reason.as_deref().map(|x| format!(" ({x})")).unwrap_or_default(),
        d.trust_root,
        d.tcb_status.as_deref().unwrap_or("-")
    );
    for c in &d.checks {
        out.push_str(&format!("  {} {:<16}", if c.ok { "ok  " } else { "FAIL" }, c.name));
        if let Some(e) = &c.expected {
            out.push_str(&format!(" expected {e}"));
        }
        if let Some(a) = &c.actual {
            out.push_str(&format!(" actual {a}"));
        }
        if let Some(x) = &c.detail {
            out.push_str(&format!(" ({x})"));
        }
        out.push('\n');
    }
    out
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Accept => "ACCEPT",
        Verdict::Reject => "REJECT",
        Verdict::Unsupported => "UNSUPPORTED",
        Verdict::Malformed => "MALFORMED",
    }
}
