//! Private chat by hand, as `client/src/chat.rs` does it: a prompt sealed to the enclave's
//! key, the body of the x402 chat route, and its reply opened with the receipt checked against
//! the ciphertext sent.

use rand_core::OsRng;
use serde_json::{Value, json};
use shared::envelope::{self, Envelope, PromptPlaintext};
use shared::reply::EncryptedResponse;
use shared::wire::ReplyPlaintext;

use crate::Stack;

/// A prompt sealed to the enclave, and what opens its reply.
pub struct Sealed {
    pub envelope: Envelope,
    pub context: shared::hpke::Context,
}

pub async fn seal(stack: &Stack, prompt: &str) -> Sealed {
    let key: Value = reqwest::get(format!("{}/tee/public-key", stack.relay_url)).await.unwrap().json().await.unwrap();
    let key: [u8; 32] = shared::b64::decode_array(key["publicKey"].as_str().unwrap()).unwrap();
    let now = shared::time::unix_now();
    let plaintext = serde_json::to_vec(&PromptPlaintext::from_prompt(prompt, now)).unwrap();
    let (envelope, context) = envelope::seal(&key, &plaintext, &mut OsRng).unwrap();
    Sealed { envelope, context }
}

pub fn chat_body(sealed: &Sealed, model: &str) -> Value {
    json!({"encryptedPrompt": sealed.envelope.to_json_string(), "model": model, "maxTokens": 8})
}

/// Opens `encryptedResponse` (the JSON text of our `EncryptedResponse`) and checks the receipt
/// inside is for the ciphertext sent.
pub fn open(sealed: &Sealed, body: &Value) -> ReplyPlaintext {
    let text = body["encryptedResponse"].as_str().expect("encryptedResponse is a string");
    let encrypted: EncryptedResponse = serde_json::from_str(text).unwrap();
    let opened = shared::reply::open(&sealed.context, &sealed.envelope.enc, &encrypted).unwrap();
    let reply: ReplyPlaintext = serde_json::from_slice(&opened).unwrap();
    assert_eq!(reply.receipt.encrypted_prompt_hash, hex::encode(sealed.envelope.ciphertext_hash()));
    reply
}
