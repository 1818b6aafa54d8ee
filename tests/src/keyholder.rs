//! The key holder as a real process (`svc keyholder`), with the secrets file the real `age` CLI
//! encrypts and a provisioner key file: it provisions every enclave behind the relay and, as
//! the freshness witness, answers the pool's book appends (docs/custody.md).

use std::path::{Path, PathBuf};
use std::process::Command;

use ed25519_dalek::SigningKey;
use serde_json::Value;

use crate::{Process, Stack};

/// Whether the `age` CLI is installed (tools/test.sh installs it).
pub fn has_age() -> bool {
    Command::new("age").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Writes `secrets` (JSON) encrypted with the real `age` CLI to a new identity (kept if it
/// exists); returns the secrets file and the identity file.
pub fn age_encrypt(dir: &Path, name: &str, secrets: &Value) -> (PathBuf, PathBuf) {
    let identity = dir.join(format!("{name}.identity"));
    if !identity.exists() {
        let out = Command::new("age-keygen").arg("-o").arg(&identity).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let recipient = Command::new("age-keygen").arg("-y").arg(&identity).output().unwrap();
    let recipient = String::from_utf8(recipient.stdout).unwrap().trim().to_string();
    let plain = dir.join(format!("{name}.json"));
    std::fs::write(&plain, secrets.to_string()).unwrap();
    let sealed = dir.join(format!("{name}.age"));
    let out = Command::new("age").args(["-r", &recipient, "-o"]).arg(&sealed).arg(&plain).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::remove_file(&plain).unwrap();
    (sealed, identity)
}

/// A provisioner key file (mode 0600) for `key`.
pub fn provisioner_file(dir: &Path, key: &SigningKey) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(format!("provisioner-{}.key", hex::encode(&key.verifying_key().to_bytes()[..4])));
    std::fs::write(&path, hex::encode(key.to_bytes())).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

pub fn dev_measurements_path() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/dev.json"))
}

/// `svc keyholder` against the stack (its heads file beside the secrets file), logging to
/// `log` in the stack's folder; killed on drop.
pub fn spawn(stack: &Stack, secrets: &Path, identity: &Path, key: &Path, log: &str) -> Process {
    Process::spawn_command(
        Command::new(crate::binary("svc"))
            .args(["--relay", &stack.relay_url, "--measurements"])
            .arg(dev_measurements_path())
            .arg("--dev-root")
            .arg(stack.dev_root_pem_path())
            .args(["keyholder", "--interval", "1", "--secrets"])
            .arg(secrets)
            .arg("--identity")
            .arg(identity)
            .arg("--provisioner-key")
            .arg(key),
        stack.dir.path().join(log),
    )
}
