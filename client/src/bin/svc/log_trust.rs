//! Which key the transparency log's heads must be signed by (docs/log.md "Which log key svc
//! trusts"): `--log-key` (`SVC_LOG_KEY`), else the key the operator publishes beside the
//! measurements (a `log-key` file, 64 hex, in the measurements file's folder), else the key
//! svc pinned for this relay the first time it checked a head there. A relay whose heads are
//! later signed by another key fails the check: a changed key is an error, never a new trust.
//! A relay on a loopback address is a local development one (`make run`, tests), whose key is
//! new whenever its data folder is: it is not pinned.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use client::log::LogCheck;

use crate::exit::Failure;

pub struct LogTrust {
    key: Option<[u8; 32]>,
    /// Where `key` came from, for the messages.
    source: Source,
    /// relay URL → hex key (0600, `private_file`).
    pins: PathBuf,
    relay: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    Flag,
    Published,
    Pinned,
    /// No key yet: the first check pins the one the heads name.
    FirstUse,
    /// A local development relay: the heads' own key, not pinned.
    Local,
}

/// Whether `relay` names a loopback address (or `localhost`).
fn is_local(relay: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(relay) else { return false };
    let host = url.host_str().unwrap_or_default().trim_start_matches('[').trim_end_matches(']');
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn parse(text: &str, what: &str) -> Result<[u8; 32], Failure> {
    shared::tlog::hash::parse_hex(text.trim())
        .ok_or_else(|| Failure::bad_input(format!("{what} must be 64 hex characters")))
}

impl LogTrust {
    pub fn new(flag: Option<&str>, measurements: &Path, state_dir: &Path, relay: &str) -> Result<Self, Failure> {
        let pins = state_dir.join("log-keys.json");
        let relay = relay.trim_end_matches('/').to_string();
        let published = measurements.parent().map(|d| d.join("log-key")).filter(|f| f.exists());
        let (key, source) = match (flag, published) {
            (Some(k), _) => (Some(parse(k, "--log-key")?), Source::Flag),
            (None, Some(file)) => {
                let text = std::fs::read_to_string(&file)
                    .map_err(|e| Failure::bad_input(format!("{}: {e}", file.display())))?;
                (Some(parse(&text, &file.display().to_string())?), Source::Published)
            }
            (None, None) if is_local(&relay) => (None, Source::Local),
            (None, None) => match read_pins(&pins).get(&relay) {
                Some(hex) => (Some(parse(hex, &pins.display().to_string())?), Source::Pinned),
                None => (None, Source::FirstUse),
            },
        };
        Ok(LogTrust { key, source, pins, relay })
    }

    /// The key every head must be signed by, when one is known.
    pub fn key(&self) -> Option<&[u8; 32]> {
        self.key.as_ref()
    }

    /// After a check that passed: on first use, pin the key it verified.
    pub fn keep(&self, check: &LogCheck) {
        if self.source != Source::FirstUse {
            return;
        }
        let mut pins = read_pins(&self.pins);
        pins.insert(self.relay.clone(), check.log_key.clone());
        let text = serde_json::to_vec_pretty(&pins).unwrap_or_default();
        match client::private_file::write(&self.pins, &text) {
            Ok(()) => eprintln!("log key:  pinned {}… for {} (first use)", &check.log_key[..16], self.relay),
            Err(e) => eprintln!("log key:  not pinned ({}: {e})", self.pins.display()),
        }
    }

    /// A failed check, said with where the required key came from.
    pub fn explain(&self, error: impl std::fmt::Display) -> String {
        match self.source {
            Source::Pinned => format!(
                "{error} (the log key for {} was pinned on first use in {}; a changed key is an error, not a new trust: \
                 see docs/log.md)",
                self.relay,
                self.pins.display()
            ),
            Source::Published => format!("{error} (the log key published beside the measurements)"),
            Source::Flag | Source::FirstUse | Source::Local => error.to_string(),
        }
    }
}

fn read_pins(file: &Path) -> BTreeMap<String, String> {
    std::fs::read(file).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(key: &str) -> LogCheck {
        LogCheck { leaf_index: 0, tree_size: 1, root_hash: String::new(), log_key: key.into(), anchor: None }
    }

    #[test]
    fn the_first_key_is_pinned_and_a_later_run_requires_it() {
        let state = tempfile::tempdir().unwrap();
        let measurements = state.path().join("published").join("measurements.json");
        let relay = "https://relay.example/";
        let key = "ab".repeat(32);
        let first = LogTrust::new(None, &measurements, state.path(), relay).unwrap();
        assert_eq!(first.key(), None, "nothing to require yet");
        first.keep(&check(&key));
        let later = LogTrust::new(None, &measurements, state.path(), "https://relay.example").unwrap();
        assert_eq!(later.key(), Some(&[0xab; 32]), "pinned for this relay");
        assert!(later.explain("head signed by another key").contains("pinned on first use"));
        later.keep(&check(&"cd".repeat(32)));
        assert_eq!(
            LogTrust::new(None, &measurements, state.path(), relay).unwrap().key(),
            Some(&[0xab; 32]),
            "never re-pinned"
        );
        // Another relay has its own pin; a flag wins over the pin.
        assert_eq!(LogTrust::new(None, &measurements, state.path(), "https://other.example").unwrap().key(), None);
        let flag = "ef".repeat(32);
        assert_eq!(LogTrust::new(Some(&flag), &measurements, state.path(), relay).unwrap().key(), Some(&[0xef; 32]));
        // A key published beside the measurements wins over the pin.
        std::fs::create_dir_all(measurements.parent().unwrap()).unwrap();
        std::fs::write(measurements.parent().unwrap().join("log-key"), format!("{}\n", "12".repeat(32))).unwrap();
        let published = LogTrust::new(None, &measurements, state.path(), relay).unwrap();
        assert_eq!(published.key(), Some(&[0x12; 32]));
        assert!(published.explain("x").contains("published beside the measurements"));
        std::fs::write(measurements.parent().unwrap().join("log-key"), "not hex").unwrap();
        assert!(LogTrust::new(None, &measurements, state.path(), relay).is_err());
    }

    #[test]
    fn local_development_relays_are_not_pinned() {
        let state = tempfile::tempdir().unwrap();
        let measurements = state.path().join("measurements.json");
        for relay in ["http://127.0.0.1:8787", "http://localhost:8787", "http://[::1]:8787"] {
            let trust = LogTrust::new(None, &measurements, state.path(), relay).unwrap();
            trust.keep(&check(&"ab".repeat(32)));
            assert_eq!(LogTrust::new(None, &measurements, state.path(), relay).unwrap().key(), None, "{relay}");
        }
        assert!(!state.path().join("log-keys.json").exists());
    }
}
