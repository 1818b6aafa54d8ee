//! The key holder's side of custody (DESIGN §10): verify an enclave exactly as `attest` does,
//! then sign a secrets bundle for that one enclave key, seal it to the verified key and send
//! it; and, as a daemon, do so for every new enclave key that appears (a reboot makes one).
//! Nothing is sent to an enclave that fails verification.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};

use ed25519_dalek::SigningKey;
use rand_core::OsRng;
use serde::{Deserialize, Serialize};
use shared::envelope::{self, Purpose};
use shared::provision::{Bundle, Secret};
use shared::wire::{ProvisionRequest, ProvisioningState};
use zeroize::Zeroizing;

use crate::api::Client;
use crate::attest::AttestationReport;
use crate::error::ClientError;
use crate::witness::Witness;

/// The key holder's secrets: what every bundle it releases carries (the plaintext of the
/// protected secrets file).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Secrets {
    /// The bundle version: raise it when anything here changes.
    pub version: u64,
    /// base64 of 32 bytes.
    pub kek: Secret,
    #[serde(default)]
    pub previous_keks: Vec<Secret>,
    #[serde(default)]
    pub credentials: BTreeMap<String, Secret>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secrets")
            .field("version", &self.version)
            .field("credentials", &self.credentials.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Secrets {
    pub fn from_json(bytes: &[u8]) -> Result<Self, ClientError> {
        let secrets: Secrets = serde_json::from_slice(bytes)
            .map_err(|_| ClientError::Secrets("the secrets are not the expected JSON".into()))?;
        let bundle = secrets.bundle_for([0; 32], Default::default());
        bundle.keks().map_err(|_| ClientError::Secrets("kek and previousKeks must be base64 of 32 bytes".into()))?;
        Ok(secrets)
    }

    fn bundle_for(&self, key_id: [u8; 32], heads: std::collections::BTreeMap<String, shared::witness::Head>) -> Bundle {
        Bundle {
            version: self.version,
            enclave_key_id: hex::encode(key_id),
            issued_at: shared::time::unix_now(),
            kek: self.kek.clone(),
            previous_keks: self.previous_keks.clone(),
            credentials: self.credentials.clone(),
            heads,
        }
    }
}

/// Reads the secrets file: the JSON of [`Secrets`], encrypted in the age v1 format
/// (age-encryption.org/v1) to an age X25519 identity (`identity`, as `age-keygen` writes it)
/// or with a passphrase (`age -p`). The plaintext never touches the disk.
pub fn read_secrets(
    path: &Path,
    identity: Option<&Path>,
    passphrase: Option<Zeroizing<String>>,
) -> Result<Secrets, ClientError> {
    use crate::age::{Identity, decrypt};
    let file = std::fs::read(path).map_err(|e| ClientError::Secrets(format!("{}: {e}", path.display())))?;
    let mut identities = Vec::new();
    if let Some(p) = identity {
        let text = Zeroizing::new(
            std::fs::read_to_string(p).map_err(|e| ClientError::Secrets(format!("{}: {e}", p.display())))?,
        );
        identities
            .extend(Identity::parse_file(&text).map_err(|e| ClientError::Secrets(format!("{}: {e}", p.display())))?);
    }
    if let Some(passphrase) = passphrase {
        identities.push(Identity::Passphrase(passphrase));
    }
    if identities.is_empty() {
        return Err(ClientError::Secrets("give an age identity file or a passphrase to open the secrets file".into()));
    }
    let plaintext =
        decrypt(&file, &identities).map_err(|e| ClientError::Secrets(format!("{}: {e}", path.display())))?;
    Secrets::from_json(&plaintext)
}

/// A provisioner key file: the 32-byte ed25519 seed as 64 hex characters, readable by its
/// owner only.
pub fn read_provisioner_key(path: &Path) -> Result<SigningKey, ClientError> {
    let shown = path.display();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode =
            std::fs::metadata(path).map_err(|e| ClientError::Secrets(format!("{shown}: {e}")))?.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(ClientError::Secrets(format!(
                "{shown} is readable by others (mode {:o}); chmod 600 it",
                mode & 0o777
            )));
        }
    }
    let text =
        Zeroizing::new(std::fs::read_to_string(path).map_err(|e| ClientError::Secrets(format!("{shown}: {e}")))?);
    let mut seed = Zeroizing::new([0u8; 32]);
    hex::decode_to_slice(text.trim(), seed.as_mut())
        .map_err(|_| ClientError::Secrets(format!("{shown} must hold 64 hex characters")))?;
    Ok(SigningKey::from_bytes(&seed))
}

/// Writes a new provisioner key file (mode 0600); returns the key, whose public half goes into
/// the enclave's measured configuration (`provisioners`).
pub fn new_provisioner_key(path: &Path) -> Result<SigningKey, ClientError> {
    use std::io::Write;
    let key = SigningKey::generate(&mut OsRng);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(|e| ClientError::Secrets(format!("{}: {e}", path.display())))?;
    let hex = Zeroizing::new(hex::encode(key.to_bytes()));
    file.write_all(hex.as_bytes()).map_err(|e| ClientError::Secrets(e.to_string()))?;
    Ok(key)
}

/// What provisioning one enclave came to.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Provisioned {
    pub key_id: String,
    pub report: AttestationReport,
    /// The enclave's answer; `None` when verification refused and nothing was sent.
    pub state: Option<ProvisioningState>,
}

impl Client {
    /// Verifies the enclave holding `key_id` (any one without it) as `attest` does and, only
    /// when it is accepted, seals to its verified key a bundle signed by `provisioner` and
    /// naming that key, and sends it. With the freshness witness, the bundle carries its heads
    /// and the witness takes appends from the verified enclave.
    pub async fn provision(
        &self,
        secrets: &Secrets,
        provisioner: &SigningKey,
        key_id: Option<[u8; 32]>,
        witness: Option<&Witness>,
    ) -> Result<Provisioned, ClientError> {
        let (report, key) = self.attest_key(key_id).await?;
        let Some(key) = key else {
            return Ok(Provisioned { key_id: String::new(), report, state: None });
        };
        let key_id = shared::sha256(&key.tee_public_key);
        let heads = match witness {
            Some(witness) => {
                witness.trust(key.enclave_public_key);
                witness.heads()
            }
            None => Default::default(),
        };
        let signed = shared::provision::sign(&secrets.bundle_for(key_id, heads), provisioner);
        let plaintext = Zeroizing::new(serde_json::to_vec(&signed).map_err(|e| ClientError::Malformed(e.to_string()))?);
        let (sealed, _) = envelope::seal_for(Purpose::Provision, &key.tee_public_key, &plaintext, &mut OsRng)
            .map_err(|_| ClientError::BadKey("the enclave key is not a usable X25519 key"))?;
        let request = ProvisionRequest { encrypted_bundle: sealed.to_json_string() };
        let response = self
            .http
            .post(format!("{}/tee/provision", self.base))
            .json(&request)
            .send()
            .await
            .map_err(|_| ClientError::RelayUnreachable(self.base.clone()))?;
        let state: ProvisioningState = self.read(response).await?;
        Ok(Provisioned { key_id: hex::encode(key_id), report, state: Some(state) })
    }
}

/// One enclave in `GET /tee/keys`, as far as the key holder reads it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Listed {
    key_id: Option<String>,
    healthy: bool,
    #[serde(default)]
    attestation: Option<ListedAttestation>,
}

#[derive(Debug, Deserialize)]
struct ListedAttestation {
    #[serde(default)]
    provisioning: ProvisioningState,
}

#[derive(Debug, Deserialize)]
struct Listing {
    enclaves: Vec<Listed>,
}

/// Retry schedule per enclave key: 1 s doubling to 60 s.
struct Backoff {
    next: Instant,
    delay: Duration,
}

/// The key holder daemon: every `interval`, lists the enclaves behind the relay and provisions
/// each key that does not hold this version yet. A key that fails (verification refused, the
/// enclave refused) is retried with backoff. Beside it, the freshness witness answers the
/// pool's book appends (DESIGN §13). Runs until `stop` resolves.
pub async fn keyholder(
    client: &Client,
    secrets: &Secrets,
    provisioner: &SigningKey,
    witness: &Witness,
    interval: Duration,
    stop: impl std::future::Future<Output = ()>,
) {
    let (stopped, watch) = tokio::sync::watch::channel(false);
    let until_stopped = |mut watch: tokio::sync::watch::Receiver<bool>| async move {
        let _ = watch.wait_for(|s| *s).await;
    };
    tokio::join!(
        crate::witness::serve(client, witness, until_stopped(watch.clone())),
        async {
            tokio::select! {
                _ = until_stopped(watch) => {}
                _ = provision_loop(client, secrets, provisioner, witness, interval) => {}
            }
        },
        async {
            stop.await;
            let _ = stopped.send(true);
        }
    );
}

async fn provision_loop(
    client: &Client,
    secrets: &Secrets,
    provisioner: &SigningKey,
    witness: &Witness,
    interval: Duration,
) {
    let mut backoff: HashMap<String, Backoff> = HashMap::new();
    loop {
        match client.get::<Listing>("/tee/keys").await {
            Err(e) => tracing::warn!(error = %e, "cannot list the enclaves"),
            Ok(listing) => {
                for listed in listing.enclaves.iter().filter(|e| e.healthy) {
                    let Some(key_hex) = &listed.key_id else { continue };
                    let held = listed.attestation.as_ref().and_then(|a| a.provisioning.bundle_version);
                    if held.is_some_and(|v| v >= secrets.version) {
                        continue;
                    }
                    if backoff.get(key_hex).is_some_and(|b| Instant::now() < b.next) {
                        continue;
                    }
                    let Some(key_id) = shared::receipt::decode_hex32(key_hex) else { continue };
                    match client.provision(secrets, provisioner, Some(key_id), Some(witness)).await {
                        Ok(Provisioned { state: Some(state), report, .. }) => {
                            tracing::info!(
                                key_id = %key_hex,
                                version = secrets.version,
                                quote = %report.quote_provider,
                                unattested = report.unattested,
                                provisioned = state.provisioned,
                                "released the secrets bundle"
                            );
                            backoff.remove(key_hex);
                        }
                        outcome => {
                            let reason = match outcome {
                                Ok(p) => p.report.reason.unwrap_or_else(|| "verification refused".into()),
                                Err(e) => e.to_string(),
                            };
                            let delay = backoff
                                .get(key_hex)
                                .map_or(Duration::from_secs(1), |b| (b.delay * 2).min(Duration::from_secs(60)));
                            tracing::warn!(key_id = %key_hex, %reason, retry_in_s = delay.as_secs(), "not released");
                            backoff.insert(key_hex.clone(), Backoff { next: Instant::now() + delay, delay });
                        }
                    }
                }
            }
        }
        tokio::time::sleep(interval).await;
    }
}
