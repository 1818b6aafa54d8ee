//! HTTP access to the relay's public routes.

use std::time::Duration;

use serde::de::DeserializeOwned;
use shared::address::{Address, default_program_id};
use shared::wire::{PublicKeyResponse, codes};
use shared::{b64, sha256};

use crate::attest::AttestOptions;
use crate::error::ClientError;
use crate::key_cache::{CachedKey, KeyCache};

pub struct Client {
    pub(crate) base: String,
    pub(crate) api_key: Option<String>,
    pub(crate) http: reqwest::Client,
    pub program_id: Address,
    pub(crate) keys: KeyCache,
    pub(crate) attest_options: Option<AttestOptions>,
    /// What a cached verification must have been made under (see [`context`]).
    cache_context: [u8; 32],
}

/// What a cached verification holds for: this relay and these trust options.
fn context(base: &str, options: Option<&AttestOptions>) -> [u8; 32] {
    let trust =
        options.map(|o| (&o.root, &o.measurements, &o.allowed_tcb_statuses, o.allow_unattested, o.tcb_floor.minimum));
    sha256(format!("{base}\n{trust:?}").as_bytes())
}

impl Client {
    pub fn new(base: &str, api_key: Option<String>) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(600))
            .connect_timeout(Duration::from_secs(10))
            .build()
            .expect("static reqwest configuration is valid");
        let base = base.trim_end_matches('/').to_string();
        Client {
            cache_context: context(&base, None),
            base,
            api_key,
            http,
            program_id: default_program_id(),
            keys: KeyCache::default(),
            attest_options: None,
        }
    }

    /// How to verify the enclave. Without it, private calls refuse to run.
    pub fn with_attestation(mut self, options: AttestOptions) -> Self {
        self.cache_context = context(&self.base, Some(&options));
        self.attest_options = Some(options);
        self
    }

    pub fn with_program_id(mut self, program_id: Address) -> Self {
        self.program_id = program_id;
        self
    }

    pub fn with_key_cache(mut self, cache: KeyCache) -> Self {
        self.keys = cache;
        self
    }

    /// Turns a relay answer into `T`, or into the error the body names.
    pub(crate) async fn read<T: DeserializeOwned>(&self, response: reqwest::Response) -> Result<T, ClientError> {
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let bytes = response.bytes().await.map_err(|_| ClientError::RelayUnreachable(self.base.clone()))?;
        // 201: a route that creates (a wallet).
        if status == 200 || status == 201 {
            return serde_json::from_slice(&bytes).map_err(|e| ClientError::Malformed(e.to_string()));
        }
        let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
        let code = body["error"].as_str().unwrap_or("unknown").to_string();
        if code == codes::TEE_UNREACHABLE {
            let endpoint = body["teeEndpoint"].as_str().unwrap_or_default().to_string();
            return Err(ClientError::TeeUnreachable { endpoint });
        }
        let message = body["message"].as_str().unwrap_or_default().to_string();
        Err(ClientError::Refused { status, code, message, retry_after })
    }

    pub(crate) async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        let response = self
            .http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .map_err(|_| ClientError::RelayUnreachable(self.base.clone()))?;
        self.read(response).await
    }

    /// A GET with the API key (`Authorization: Bearer`), for the account's routes.
    pub(crate) async fn get_with_key<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        let mut request = self.http.get(format!("{}{path}", self.base));
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|_| ClientError::RelayUnreachable(self.base.clone()))?;
        self.read(response).await
    }

    /// `GET /tee/public-key`, with its self-consistency checked.
    pub async fn public_key(&self) -> Result<PublicKeyResponse, ClientError> {
        let key: PublicKeyResponse = self.get("/tee/public-key").await?;
        let raw: [u8; 32] =
            b64::decode_array(&key.public_key).ok_or(ClientError::BadKey("publicKey is not 32 bytes"))?;
        if key.public_key_sha256 != hex::encode(sha256(&raw)) {
            return Err(ClientError::BadKey("publicKeySha256 does not match publicKey"));
        }
        if key.algorithm != "x25519" {
            return Err(ClientError::BadKey("algorithm is not x25519"));
        }
        Ok(key)
    }

    /// The enclave key to encrypt to: from the cache while its verification holds, else
    /// attested now (refusing an enclave that fails verification) and cached.
    pub(crate) async fn enclave_key(&self) -> Result<CachedKey, ClientError> {
        let now = shared::time::unix_now();
        if let Some(cached) = self.keys.get(now, &self.cache_context) {
            return Ok(cached);
        }
        let (report, key) = self.attest().await?;
        let key = key.ok_or_else(|| ClientError::NotAttested(Box::new(report)))?;
        self.keys.set(self.cache_context, key);
        Ok(key)
    }

    pub(crate) fn drop_cached_key(&self) {
        self.keys.clear();
    }
}
