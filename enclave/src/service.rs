//! The enclave as one value: everything a request needs, built once at boot. Each area's work
//! lives in its folder; this ties them and holds what they share (the keys, the custody).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use agent::tools::ToolsConfig;
use agent::toolset::ToolSet;
use shared::address::Address;
use shared::swap::{OpenedSession, SessionTerms, StepAnswer, StepRequest};
use shared::wire::{ProvisionRequest, ProvisioningState};

use crate::config::{ConfigError, EnclaveConfig};
use crate::error::ApiError;
use crate::funds::pool::{Env, Funds};
use crate::funds::swap::{SwapError, Swaps, SwapsConfig};
use crate::inference::models::{self, ServedModel};
use crate::inference::replay::ReplayGuard;
use crate::keys::EnclaveKeys;
use crate::keys::custody::{Custody, CustodyError};
use crate::platform::attestation::Attestation;

pub struct Enclave {
    pub keys: EnclaveKeys,
    pub attestation: Attestation,
    pub custody: Custody,
    pub(crate) program_id: Address,
    pub(crate) models: HashMap<String, ServedModel>,
    pub(crate) replay: ReplayGuard,
    /// Exactly the five tools of encrypted mode, rebuilt when a bundle brings credentials.
    tools: RwLock<Arc<ToolSet>>,
    tools_config: ToolsConfig,
    /// Swaps, once a bundle (the KEK, the router's key) arrived and if configured.
    swaps: RwLock<Option<Arc<Swaps>>>,
    swaps_config: Option<SwapsConfig>,
    /// Managed wallets' pool (the privacy back end); needs swaps (its chain).
    funds: Funds,
}

impl Enclave {
    pub fn new(config: &EnclaveConfig, keys: EnclaveKeys, attestation: Attestation) -> Result<Self, ConfigError> {
        Ok(Enclave {
            keys,
            attestation,
            custody: Custody::new(config.provisioners()?),
            program_id: config.program_id()?,
            models: models::served(config)?,
            replay: ReplayGuard::new(config.timestamp_window_secs, config.max_untimed_envelopes),
            tools: RwLock::new(Arc::new(ToolSet::private(&config.tools, None))),
            tools_config: config.tools.clone(),
            swaps: RwLock::new(None),
            swaps_config: config.swaps.clone(),
            funds: Funds::new(config.swaps.as_ref(), config.witnesses()?),
        })
    }

    /// Installs a secrets bundle (DESIGN §10) and gives the tools its credentials.
    pub fn provision(&self, request: &ProvisionRequest) -> Result<ProvisioningState, ApiError> {
        let held = self.custody.provision(&request.encrypted_bundle, &self.keys)?;
        self.funds.provisioned(&held);
        let tools = Arc::new(ToolSet::private(&self.tools_config, Some(&held.credentials)));
        *self.tools.write().map_err(|_| ApiError::Internal)? = tools;
        if let Some(config) = &self.swaps_config {
            let router_key = held.credentials.get("jupiter").map(|k| k.to_string());
            let rpc_key = held.credentials.get("solanaRpc").map(|k| k.as_str());
            let swaps = Swaps::new(config, router_key, rpc_key, self.program_id).map_err(|e| {
                tracing::error!(error = %e, "swaps not started");
                ApiError::Internal
            })?;
            *self.swaps.write().map_err(|_| ApiError::Internal)? = Some(Arc::new(swaps));
        }
        tracing::info!(version = held.version, provisioner = %held.provisioner, "provisioned");
        Ok(self.provisioning_state())
    }

    /// What the enclave says of its custody: the bundle it holds and the witness it heeds.
    pub fn provisioning_state(&self) -> ProvisioningState {
        ProvisioningState { witness_keys: self.funds.witness_keys(), ..self.custody.state() }
    }

    pub(crate) fn tools(&self) -> Result<Arc<ToolSet>, ApiError> {
        Ok(self.tools.read().map_err(|_| ApiError::Internal)?.clone())
    }

    /// The swap service: 501 when not configured, 503 until provisioned.
    fn swaps(&self) -> Result<Arc<Swaps>, ApiError> {
        if self.swaps_config.is_none() {
            return Err(SwapError::NotConfigured.into());
        }
        let held = self.swaps.read().map_err(|_| ApiError::Internal)?.clone();
        held.ok_or(ApiError::Custody(CustodyError::NotProvisioned))
    }

    /// A new one-shot session (DESIGN §11).
    pub async fn open_session(&self, terms: SessionTerms) -> Result<OpenedSession, ApiError> {
        Ok(self.swaps()?.open_oneshot(&self.custody, &self.keys, terms).await?)
    }

    /// One step of a session.
    pub async fn swap_step(&self, request: StepRequest) -> Result<StepAnswer, ApiError> {
        Ok(self.swaps()?.step(&self.custody, &self.keys, request, shared::time::unix_now()).await?)
    }

    /// A new managed-wallet key, sealed with its id and owner.
    pub fn new_wallet(&self, request: &shared::privacy::NewWallet) -> Result<shared::privacy::CreatedWallet, ApiError> {
        self.swaps()?;
        Ok(crate::funds::pool::new_wallet(&self.custody, &self.keys, request)?)
    }

    /// The pool's key (the relay asks once and keeps the sealed object).
    pub fn new_pool(&self) -> Result<shared::wire::SealedObject, ApiError> {
        self.swaps()?;
        Ok(crate::funds::pool::new_pool(&self.custody)?)
    }

    /// One step of the pool: encrypt, credit, withdraw, balance, reserves.
    pub async fn privacy_step(
        &self,
        request: shared::privacy::PrivacyRequest,
    ) -> Result<shared::privacy::PrivacyAnswer, ApiError> {
        let swaps = self.swaps()?;
        let env = Env {
            swaps: &swaps,
            custody: &self.custody,
            keys: &self.keys,
            now: self.funds.clock(shared::time::unix_now()),
        };
        Ok(self.funds.step(&env, request).await?)
    }

    /// Every GPU node and the models it serves, for the attestation document.
    pub fn gpu_nodes(&self) -> Vec<shared::wire::GpuNodeStatus> {
        models::gpu_nodes(&self.models)
    }
}
