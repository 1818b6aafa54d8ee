//! The models this enclave serves, each with its node's client and the gate the node passes
//! before it sees a prompt.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use agent::model::{Endpoint, ModelClient, RetryPolicy};
use shared::gpu::node::NodeVerdict;

use crate::config::{ConfigError, EnclaveConfig};
use crate::error::ApiError;
use crate::inference::gpu_node::NodeGate;

pub(crate) struct ServedModel {
    pub(crate) endpoint: Endpoint,
    /// Pinned TLS for this node (or plain http to loopback in development).
    pub(crate) client: ModelClient,
    pub(crate) max_tokens: u32,
    /// What the node must prove first; `None` only for a loopback development server.
    gate: Option<Arc<NodeGate>>,
}

impl ServedModel {
    /// The node's verdict before any plaintext goes to it (`None`: a loopback development
    /// server, which has nothing to prove).
    pub(crate) async fn attested(&self) -> Result<Option<NodeVerdict>, ApiError> {
        match &self.gate {
            Some(gate) => Ok(Some(gate.verdict(&self.client, &self.endpoint).await?)),
            None => Ok(None),
        }
    }

    /// After a failed model call the node attests again before the next prompt.
    pub(crate) fn after_failed_call(&self, error: &agent::model::ModelError) {
        use agent::model::ModelError::{Timeout, Unreachable};
        if let (Some(gate), Unreachable | Timeout) = (&self.gate, error) {
            gate.forget();
        }
    }
}

/// Every configured model with its client; models on one pinned node share its gate.
pub(crate) fn served(config: &EnclaveConfig) -> Result<HashMap<String, ServedModel>, ConfigError> {
    let retry = RetryPolicy { attempts: config.warmup_attempts.max(1), ..RetryPolicy::default() };
    let timeout = Duration::from_secs(config.model_timeout_secs);
    let reattest = Duration::from_secs(config.gpu_reattest_secs);
    let mut gates = HashMap::new();
    for node in &config.gpu_nodes {
        gates.insert(node.pin()?, Arc::new(NodeGate::new(node, reattest)?));
    }
    let mut models = HashMap::new();
    for (id, m) in &config.models {
        let endpoint = m.to_endpoint(id).map_err(|e| ConfigError::Invalid(format!("model `{id}`: {e}")))?;
        let client = ModelClient::for_endpoint(&endpoint, timeout, retry)
            .map_err(|e| ConfigError::Invalid(format!("model `{id}`: {e}")))?;
        let gate = endpoint.tls_pin.and_then(|pin| gates.get(&pin).cloned());
        models.insert(id.clone(), ServedModel { endpoint, client, max_tokens: m.max_tokens, gate });
    }
    Ok(models)
}

/// Every GPU node and the models it serves, for the attestation document.
pub(crate) fn gpu_nodes(models: &HashMap<String, ServedModel>) -> Vec<shared::wire::GpuNodeStatus> {
    let mut nodes: Vec<(&Arc<NodeGate>, Vec<String>)> = Vec::new();
    for (id, served) in models {
        let Some(gate) = &served.gate else { continue };
        match nodes.iter_mut().find(|(g, _)| Arc::ptr_eq(g, gate)) {
            Some((_, models)) => models.push(id.clone()),
            None => nodes.push((gate, vec![id.clone()])),
        }
    }
    nodes
        .into_iter()
        .map(|(gate, mut models)| {
            models.sort();
            gate.status(models)
        })
        .collect()
}
