//! The prompt envelope (`encryptedPrompt`), version 1, DESIGN.md §4.1.
//!
//! `encryptedPrompt` is a JSON *string* holding an object with `publicKey` (HPKE `enc`),
//! `nonce` (16 client bytes), `ciphertext`, `algorithm`, `version` and an optional `keyId`.
//! Parsing is strict: unknown members, wrong types, bad base64, wrong lengths, an unknown
//! algorithm or version each give their own [`EnvelopeError`].

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use x25519_dalek::StaticSecret;
use zeroize::Zeroizing;

use crate::{b64, hpke};

pub const ALGORITHM: &str = "hpke-x25519-sha256-chacha20poly1305";
pub const VERSION: u64 = 1;
pub const NONCE_LEN: usize = 16;
/// Largest ciphertext accepted (1 MiB): bigger than any context window we serve.
pub const MAX_CIPHERTEXT: usize = 1 << 20;
/// Largest `encryptedPrompt` string accepted, base64 overhead included.
pub const MAX_ENVELOPE_JSON: usize = MAX_CIPHERTEXT / 3 * 4 + 1024;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EnvelopeError {
    #[error("encryptedPrompt is larger than {MAX_ENVELOPE_JSON} bytes")]
    TooLarge,
    #[error("encryptedPrompt is not a JSON object")]
    NotAnObject,
    #[error("encryptedPrompt is missing `{0}`")]
    MissingField(&'static str),
    #[error("encryptedPrompt has an unknown member `{0}`")]
    UnknownField(String),
    #[error("`{0}` has the wrong JSON type")]
    WrongType(&'static str),
    #[error("`{0}` is not valid standard base64")]
    BadBase64(&'static str),
    #[error("`{field}` must be {expected} bytes, got {got}")]
    BadLength { field: &'static str, expected: &'static str, got: usize },
    #[error("unsupported algorithm `{0}`; expected `{ALGORITHM}`")]
    UnsupportedAlgorithm(String),
    #[error("unsupported version {0}; expected 1")]
    UnsupportedVersion(String),
    #[error("`keyId` must be 64 lowercase hex characters")]
    BadKeyId,
}

/// A parsed, well-formed envelope. Holding one says nothing yet about whether it decrypts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    /// HPKE `enc`: the client's ephemeral X25519 public key; the receipt's `client_pubkey`.
    pub enc: [u8; 32],
    pub nonce: [u8; NONCE_LEN],
    pub ciphertext: Vec<u8>,
    /// sha256 of the enclave key this was sealed to, if the client said.
    pub key_id: Option<[u8; 32]>,
}

impl Envelope {
    /// Parses the `encryptedPrompt` string.
    pub fn parse(encrypted_prompt: &str) -> Result<Self, EnvelopeError> {
        if encrypted_prompt.len() > MAX_ENVELOPE_JSON {
            return Err(EnvelopeError::TooLarge);
        }
        let value: Value = serde_json::from_str(encrypted_prompt).map_err(|_| EnvelopeError::NotAnObject)?;
        let Value::Object(map) = value else {
            return Err(EnvelopeError::NotAnObject);
        };
        Self::from_map(&map)
    }

    fn from_map(map: &Map<String, Value>) -> Result<Self, EnvelopeError> {
        const KNOWN: [&str; 6] = ["publicKey", "nonce", "ciphertext", "algorithm", "version", "keyId"];
        if let Some(unknown) = map.keys().find(|k| !KNOWN.contains(&k.as_str())) {
            // Cut like the other echoed values: a member name can be a megabyte long.
            return Err(EnvelopeError::UnknownField(unknown.chars().take(64).collect()));
        }
        let string = |name: &'static str| -> Result<&str, EnvelopeError> {
            map.get(name).ok_or(EnvelopeError::MissingField(name))?.as_str().ok_or(EnvelopeError::WrongType(name))
        };

        let algorithm = string("algorithm")?;
        if algorithm != ALGORITHM {
            return Err(EnvelopeError::UnsupportedAlgorithm(algorithm.chars().take(64).collect()));
        }
        let version = map.get("version").ok_or(EnvelopeError::MissingField("version"))?;
        match version {
            Value::Number(n) if n.as_u64() == Some(VERSION) => {}
            Value::Number(n) => return Err(EnvelopeError::UnsupportedVersion(n.to_string())),
            _ => return Err(EnvelopeError::WrongType("version")),
        }

        let enc = decode_exact::<32>("publicKey", string("publicKey")?, "32")?;
        let nonce = decode_exact::<NONCE_LEN>("nonce", string("nonce")?, "16")?;
        let ciphertext = b64::decode(string("ciphertext")?).map_err(|_| EnvelopeError::BadBase64("ciphertext"))?;
        if ciphertext.len() < hpke::N_T || ciphertext.len() > MAX_CIPHERTEXT {
            return Err(EnvelopeError::BadLength {
                field: "ciphertext",
                expected: "16 to 1048576",
                got: ciphertext.len(),
            });
        }
        let key_id = match map.get("keyId") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(parse_key_id(s)?),
            Some(_) => return Err(EnvelopeError::WrongType("keyId")),
        };
        Ok(Envelope { enc, nonce, ciphertext, key_id })
    }

    /// Serialises to the `encryptedPrompt` string.
    pub fn to_json_string(&self) -> String {
        let mut map = Map::new();
        map.insert("publicKey".into(), b64::encode(self.enc).into());
        map.insert("nonce".into(), b64::encode(self.nonce).into());
        map.insert("ciphertext".into(), b64::encode(&self.ciphertext).into());
        map.insert("algorithm".into(), ALGORITHM.into());
        map.insert("version".into(), VERSION.into());
        if let Some(id) = self.key_id {
            map.insert("keyId".into(), hex::encode(id).into());
        }
        Value::Object(map).to_string()
    }

    /// sha256 of the decoded ciphertext: the receipt's `encryptedPromptHash` and address seed.
    pub fn ciphertext_hash(&self) -> crate::keys::PromptHash {
        crate::keys::PromptHash(crate::sha256(&self.ciphertext))
    }

    /// HPKE `enc`, as the receipt names it.
    pub fn client_key(&self) -> crate::keys::ClientKey {
        crate::keys::ClientKey(self.enc)
    }

    /// Opens a prompt envelope with the enclave's key pair. Returns the plaintext and the HPKE
    /// context, which the enclave keeps to seal the reply (DESIGN.md §4.2).
    pub fn open(
        &self,
        sk: &StaticSecret,
        pk: &[u8; 32],
    ) -> Result<(Zeroizing<Vec<u8>>, hpke::Context), hpke::HpkeError> {
        self.open_for(Purpose::Prompt, sk, pk)
    }

    /// Opens an envelope made for `purpose`; one made for another purpose does not open.
    pub fn open_for(
        &self,
        purpose: Purpose,
        sk: &StaticSecret,
        pk: &[u8; 32],
    ) -> Result<(Zeroizing<Vec<u8>>, hpke::Context), hpke::HpkeError> {
        let mut ctx = hpke::setup_receiver(&self.enc, sk, pk, &info(purpose, &self.nonce))?;
        let pt = ctx.open(b"", &self.ciphertext)?;
        Ok((pt, ctx))
    }
}

fn decode_exact<const N: usize>(
    field: &'static str,
    text: &str,
    expected: &'static str,
) -> Result<[u8; N], EnvelopeError> {
    let bytes = b64::decode(text).map_err(|_| EnvelopeError::BadBase64(field))?;
    let got = bytes.len();
    bytes.try_into().map_err(|_| EnvelopeError::BadLength { field, expected, got })
}

fn parse_key_id(s: &str) -> Result<[u8; 32], EnvelopeError> {
    if s.len() != 64 || s.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err(EnvelopeError::BadKeyId);
    }
    let mut out = [0u8; 32];
    hex::decode_to_slice(s, &mut out).map_err(|_| EnvelopeError::BadKeyId)?;
    Ok(out)
}

/// What an envelope carries. Each purpose has its own HPKE `info` label, so an envelope sealed
/// for one never opens as another (a secrets bundle is not a prompt, and the reverse).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A prompt (DESIGN §4.1): `SVC-PROMPT-v1`.
    Prompt,
    /// A secrets bundle for the enclave (DESIGN §10): `SVC-PROVISION-v1`.
    Provision,
}

impl Purpose {
    fn label(self) -> &'static [u8] {
        match self {
            Purpose::Prompt => b"SVC-PROMPT-v1",
            Purpose::Provision => b"SVC-PROVISION-v1",
        }
    }
}

/// HPKE `info`: the purpose's label ‖ nonce.
pub fn info(purpose: Purpose, nonce: &[u8; NONCE_LEN]) -> Vec<u8> {
    [purpose.label(), nonce.as_slice()].concat()
}

/// The client side: seals a prompt to the enclave key and keeps the context to read the reply.
#[cfg(feature = "sender")]
pub fn seal(
    enclave_key: &[u8; 32],
    plaintext: &[u8],
    rng: &mut (impl rand_core::RngCore + rand_core::CryptoRng),
) -> Result<(Envelope, hpke::Context), hpke::HpkeError> {
    seal_for(Purpose::Prompt, enclave_key, plaintext, rng)
}

/// Seals `plaintext` for `purpose` to the enclave key.
#[cfg(feature = "sender")]
pub fn seal_for(
    purpose: Purpose,
    enclave_key: &[u8; 32],
    plaintext: &[u8],
    rng: &mut (impl rand_core::RngCore + rand_core::CryptoRng),
) -> Result<(Envelope, hpke::Context), hpke::HpkeError> {
    let mut nonce = [0u8; NONCE_LEN];
    rng.fill_bytes(&mut nonce);
    let (enc, mut ctx) = hpke::setup_sender(enclave_key, &info(purpose, &nonce), rng)?;
    let ciphertext = ctx.seal(b"", plaintext)?;
    let key_id = Some(crate::sha256(enclave_key));
    Ok((Envelope { enc, nonce, ciphertext, key_id }, ctx))
}

/// One chat message inside the plaintext.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

/// The decrypted request (DESIGN.md §4.1): `prompt` or `messages`, and options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromptPlaintext {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<Message>>,
    /// The model asked for: when present the enclave refuses a request whose `model` outside
    /// the envelope names another (the relay routes and prices by that one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// When present the enclave uses it and ignores the `maxTokens` outside the envelope,
    /// which a relay could lower to cut answers short.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<u64>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PlaintextError {
    /// Deliberately carries no serde detail: serde messages can quote the input.
    #[error("decrypted prompt is not the expected JSON object")]
    NotJson,
    #[error("decrypted prompt must have exactly one of `prompt` and `messages`")]
    PromptOrMessages,
    #[error("`messages` must not be empty")]
    EmptyMessages,
    #[error("`temperature` must be between 0 and 2")]
    BadTemperature,
}

impl PromptPlaintext {
    #[cfg(feature = "sender")]
    pub fn from_prompt(prompt: impl Into<String>, timestamp: u64) -> Self {
        PromptPlaintext {
            prompt: Some(prompt.into()),
            messages: None,
            model: None,
            max_tokens: None,
            temperature: None,
            timestamp: Some(timestamp),
        }
    }

    pub fn parse(bytes: &[u8]) -> Result<Self, PlaintextError> {
        let p: PromptPlaintext = serde_json::from_slice(bytes).map_err(|_| PlaintextError::NotJson)?;
        match (&p.prompt, &p.messages) {
            (Some(_), None) => {}
            (None, Some(m)) if m.is_empty() => return Err(PlaintextError::EmptyMessages),
            (None, Some(_)) => {}
            _ => return Err(PlaintextError::PromptOrMessages),
        }
        if let Some(t) = p.temperature
            && !(0.0..=2.0).contains(&t)
        {
            return Err(PlaintextError::BadTemperature);
        }
        Ok(p)
    }

    /// The conversation to send to the model.
    pub fn into_messages(self) -> Vec<Message> {
        match (self.prompt, self.messages) {
            (Some(prompt), _) => vec![Message { role: Role::User, content: prompt }],
            (None, Some(messages)) => messages,
            (None, None) => Vec::new(),
        }
    }
}

// The tests seal as a client does.
#[cfg(all(test, feature = "sender"))]
mod tests;
