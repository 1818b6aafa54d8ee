//! Enclave configuration: one JSON file (in the image it is part of the measured initramfs).
//! Every field has a default, so an empty object is a valid configuration.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::Deserialize;
use shared::address::{Address, default_program_id};

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct EnclaveConfig {
    /// Internal API address (the relay connects here): one interface's address and a port,
    /// never a wildcard, so the API is reachable only where the image says.
    pub listen: String,
    /// Requests doing work (process, agent, completions, provisioning, objects, swaps) in
    /// flight at once; more are answered 503 `enclave_busy` at once, holding nothing.
    pub max_concurrent_requests: usize,
    /// Whole-request limit (504 `enclave_timeout`); must be above `modelTimeoutSecs`, default
    /// that plus 30.
    pub request_timeout_secs: Option<u64>,
    /// Attestation program id (base58) receipts are addressed under.
    pub program_id: String,
    /// configfs-tsm report directory.
    pub tsm_root: PathBuf,
    /// Envelopes whose timestamp differs from the enclave clock by more are refused.
    pub timestamp_window_secs: u64,
    /// Timestamp-less envelopes remembered per boot before such envelopes are refused. Default
    /// 0: every envelope must carry a timestamp, so none can be held and replayed later.
    pub max_untimed_envelopes: usize,
    /// Per-request limit on the whole model call, retries included.
    pub model_timeout_secs: u64,
    /// Attempts while the GPU node is warming up.
    pub warmup_attempts: u32,
    /// Catalog id → GPU-node endpoint. A model without an entry answers 501.
    pub models: HashMap<String, ModelEndpoint>,
    /// GPU nodes and what each must prove before it sees a prompt (docs/gpu.md): every model
    /// endpoint with a TLS pin needs its node here. Plain http to loopback (a development
    /// model server on this machine) has nothing to prove.
    pub gpu_nodes: Vec<crate::inference::gpu_node::GpuNodeConfig>,
    /// How long a node's verdict is reused before it attests again.
    pub gpu_reattest_secs: u64,
    /// Upstreams of the five encrypted-mode tools (measured: the image lists every host the
    /// enclave may call). Their credentials come only in a secrets bundle.
    pub tools: agent::tools::ToolsConfig,
    /// ed25519 keys (base58) whose signed secrets bundles this enclave accepts (DESIGN §10).
    /// Measured, so the relay and the host cannot add one.
    pub provisioners: Vec<String>,
    /// ed25519 keys (base58) of the freshness witness (DESIGN §13): its answers move the pool's
    /// book heads, and a bundle carries heads only when one of these signed it. Exactly one
    /// witness may run; empty: the provisioners (a single key holder is the witness).
    pub witnesses: Vec<String>,
    /// Resolvers written to `/etc/resolv.conf` at boot inside the image (measured).
    pub dns_servers: Vec<std::net::IpAddr>,
    /// One-shot private swaps (DESIGN §11): the chain and the router this enclave trusts.
    pub swaps: Option<crate::funds::swap::SwapsConfig>,
    /// Development quotes signed by a seeded test PKI instead of configfs-tsm. Only a binary
    /// built with the `dev-quotes` feature knows the field; the image's enclave refuses it.
    #[cfg(feature = "dev-quotes")]
    pub dev_quotes: Option<crate::platform::dev_quotes::DevQuotesConfig>,
}

/// A model's GPU-node endpoint (shared with the relay's plaintext path).
pub type ModelEndpoint = agent::model::EndpointConfig;

impl Default for EnclaveConfig {
    fn default() -> Self {
        EnclaveConfig {
            listen: "127.0.0.1:7070".into(),
            max_concurrent_requests: 64,
            request_timeout_secs: None,
            program_id: default_program_id().to_string(),
            tsm_root: PathBuf::from(crate::platform::tsm::DEFAULT_ROOT),
            timestamp_window_secs: 300,
            max_untimed_envelopes: 0,
            model_timeout_secs: 300,
            warmup_attempts: 6,
            models: HashMap::new(),
            gpu_nodes: Vec::new(),
            gpu_reattest_secs: 300,
            tools: Default::default(),
            provisioners: Vec::new(),
            witnesses: Vec::new(),
            dns_servers: Vec::new(),
            swaps: None,
            #[cfg(feature = "dev-quotes")]
            dev_quotes: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {0}: {1}")]
    Read(PathBuf, std::io::Error),
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

impl EnclaveConfig {
    pub fn load(path: Option<&std::path::Path>) -> Result<Self, ConfigError> {
        let config: EnclaveConfig = match path {
            None => EnclaveConfig::default(),
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|e| ConfigError::Read(p.into(), e))?;
                serde_json::from_str(&text).map_err(|e| ConfigError::Invalid(e.to_string()))?
            }
        };
        config.program_id()?;
        config.provisioners()?;
        config.witnesses()?;
        config.listen_address()?;
        if config.max_concurrent_requests == 0 {
            return Err(ConfigError::Invalid("maxConcurrentRequests must be at least 1".into()));
        }
        if config.request_timeout_secs.is_some_and(|t| t <= config.model_timeout_secs) {
            return Err(ConfigError::Invalid("requestTimeoutSecs must be above modelTimeoutSecs".into()));
        }
        if let Some((id, _)) = config.tools.upstreams.iter().find(|(_, u)| u.api_key_env.is_some()) {
            return Err(ConfigError::Invalid(format!(
                "tools.upstreams.{id}.apiKeyEnv: the enclave takes credentials only from a secrets bundle"
            )));
        }
        for (id, m) in &config.models {
            if shared::catalog::resolve(id) != *id {
                return Err(ConfigError::Invalid(format!("model key `{id}` is not a catalog id")));
            }
            let endpoint = m.to_endpoint(id).map_err(|e| ConfigError::Invalid(format!("model `{id}`: {e}")))?;
            if let Some(pin) = endpoint.tls_pin
                && !config.gpu_nodes.iter().any(|n| n.pin().is_ok_and(|p| p == pin))
            {
                return Err(ConfigError::Invalid(format!(
                    "model `{id}`: its node (tlsPinSha256) has no gpuNodes entry saying what it must prove"
                )));
            }
        }
        for node in &config.gpu_nodes {
            node.pin()?;
            node.policy()?;
        }
        Ok(config)
    }

    pub fn provisioners(&self) -> Result<Vec<Address>, ConfigError> {
        self.provisioners
            .iter()
            .map(|k| {
                Address::parse(k)
                    .ok_or_else(|| ConfigError::Invalid(format!("provisioner `{k}` is not base58 of 32 bytes")))
            })
            .collect()
    }

    /// The freshness witness's keys: `witnesses`, else the provisioners.
    pub fn witnesses(&self) -> Result<Vec<Address>, ConfigError> {
        if self.witnesses.is_empty() {
            return self.provisioners();
        }
        self.witnesses
            .iter()
            .map(|k| {
                Address::parse(k)
                    .ok_or_else(|| ConfigError::Invalid(format!("witness `{k}` is not base58 of 32 bytes")))
            })
            .collect()
    }

    /// The whole-request time limit.
    pub fn request_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.request_timeout_secs.unwrap_or(self.model_timeout_secs + 30))
    }

    /// `listen` as a socket address of one interface.
    pub fn listen_address(&self) -> Result<std::net::SocketAddr, ConfigError> {
        let address: std::net::SocketAddr = self
            .listen
            .parse()
            .map_err(|_| ConfigError::Invalid(format!("listen `{}` is not an IP address and port", self.listen)))?;
        if address.ip().is_unspecified() {
            return Err(ConfigError::Invalid(format!(
                "listen `{}` is a wildcard: name the internal interface's address",
                self.listen
            )));
        }
        Ok(address)
    }

    pub fn program_id(&self) -> Result<Address, ConfigError> {
        Address::parse(&self.program_id).ok_or_else(|| ConfigError::Invalid("programId is not a base58 address".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dev quotes carry these values; clients check them against the published placeholder file.
    #[cfg(feature = "dev-quotes")]
    #[test]
    fn dev_defaults_equal_measurements_dev_json() {
        use crate::platform::dev_quotes::dev_mr;
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/dev.json");
        let m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert_eq!(m["images"][0]["mrtd"], dev_mr::mrtd());
        assert_eq!(m["images"][0]["rtmr1"], dev_mr::rtmr1());
        assert_eq!(m["images"][0]["rtmr2"], dev_mr::rtmr2());
        assert_eq!(m["rtmr0"][0]["value"], dev_mr::rtmr0());
    }

    #[test]
    fn empty_config_is_valid_and_unknown_fields_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.json");
        std::fs::write(&p, "{}").unwrap();
        let c = EnclaveConfig::load(Some(&p)).unwrap();
        assert!(c.models.is_empty());
        std::fs::write(&p, r#"{"devQuote": {}}"#).unwrap();
        assert!(EnclaveConfig::load(Some(&p)).is_err());
        std::fs::write(&p, r#"{"models": {"gpt-oss-20b": {"endpoint": "http://127.0.0.1/v1"}}}"#).unwrap();
        assert!(EnclaveConfig::load(Some(&p)).is_err(), "aliases are not catalog ids");
    }

    #[test]
    fn the_api_binds_one_interface_with_bounded_work_and_timed_envelopes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.json");
        let load = |text: &str| {
            std::fs::write(&p, text).unwrap();
            EnclaveConfig::load(Some(&p))
        };
        let c = load("{}").unwrap();
        assert_eq!(c.max_untimed_envelopes, 0, "untimed envelopes are refused by default");
        assert_eq!(c.request_timeout(), std::time::Duration::from_secs(330));
        assert_eq!(load(r#"{"listen": "10.0.2.15:7070"}"#).unwrap().listen_address().unwrap().port(), 7070);
        for wildcard in ["0.0.0.0:7070", "[::]:7070"] {
            let e = load(&format!(r#"{{"listen": "{wildcard}"}}"#)).unwrap_err().to_string();
            assert!(e.contains("wildcard"), "{e}");
        }
        assert!(load(r#"{"listen": "enclave.internal:7070"}"#).is_err(), "an address, not a name");
        assert!(load(r#"{"maxConcurrentRequests": 0}"#).is_err());
        assert!(load(r#"{"modelTimeoutSecs": 60, "requestTimeoutSecs": 60}"#).is_err());
        assert!(load(r#"{"modelTimeoutSecs": 60, "requestTimeoutSecs": 61}"#).is_ok());
    }

    #[test]
    fn gpu_node_transport_is_pinned_or_local() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.json");
        let pin = "ab".repeat(32);
        let load = |endpoint: &str, pin: Option<&str>| {
            let m = match pin {
                Some(pin) => format!(r#"{{"endpoint": "{endpoint}", "tlsPinSha256": "{pin}"}}"#),
                None => format!(r#"{{"endpoint": "{endpoint}"}}"#),
            };
            std::fs::write(&p, format!(r#"{{"models": {{"gpt-oss:20b": {m}}}}}"#)).unwrap();
            EnclaveConfig::load(Some(&p))
        };
        assert!(load("https://gpu.example/v1", Some(&pin)).is_err(), "a pinned node with nothing to prove");
        let measurements =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../measurements/dev.json")).unwrap();
        let with_node = |pin: &str, gpus: usize, extra: &str| {
            let model = r#""gpt-oss:20b": {"endpoint": "https://gpu.example/v1", "tlsPinSha256": "PIN"}"#
                .replace("PIN", &"ab".repeat(32));
            let node = format!(
                r#"{{"tlsPinSha256": "{pin}", "measurements": {measurements}, "gpus": {gpus}, "gpu": {{"firmware": []}}{extra}}}"#
            );
            std::fs::write(&p, format!(r#"{{"models": {{{model}}}, "gpuNodes": [{node}]}}"#)).unwrap();
            EnclaveConfig::load(Some(&p))
        };
        assert!(with_node(&pin, 8, "").is_ok(), "a pinned node that must prove its image and eight GPUs");
        assert!(with_node(&"cd".repeat(32), 8, "").is_err(), "the node entry is for another key");
        assert!(with_node(&pin, 0, "").is_err(), "a node with no GPU to prove");
        assert!(with_node(&pin, 17, "").is_err(), "more GPUs than a node holds");
        let root_in_file = r#"{"firmware": [], "deviceRoot": "x"}"#;
        assert!(serde_json::from_str::<shared::gpu::GpuPolicy>(root_in_file).is_err(), "no GPU root from a file");
        let dev_roots = format!(r#", "devRoots": {{"tdxRootDer": "00", "gpuRootSpkiSha256": "{}"}}"#, "ef".repeat(32));
        assert_eq!(
            with_node(&pin, 1, &dev_roots).is_ok(),
            cfg!(feature = "dev-quotes"),
            "development roots only in a dev build"
        );
        assert!(load("https://gpu.example/v1", None).is_err(), "https without a pin");
        assert!(load("http://gpu.example/v1", None).is_err(), "plain http to a remote node");
        assert!(load("http://127.0.0.1:8080/v1", None).is_ok());
        assert!(load("https://gpu.example/v1", Some("AB")).is_err(), "malformed pin");
    }
}
