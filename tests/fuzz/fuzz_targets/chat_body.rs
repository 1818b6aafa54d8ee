//! Chat-completion bodies: the relay's `POST /api/v1/chat/completions`, `POST /tee/process`
//! and the x402 route's `POST /api/v1/x402/chat/completions` (each parsed, its envelope checked
//! and re-serialised for the enclave), and the OpenAI request `svc proxy` reads from an SDK.
//! Every input goes through all four.
#![no_main]

use libfuzzer_sys::fuzz_target;
use relay::private::{SealedRequest, chat_completions, tee_process, x402_chat};
use shared::envelope::Envelope;

fn forwarded(request: SealedRequest) {
    // What the enclave receives must parse, and hash to what the receipt is checked against.
    let envelope = Envelope::parse(&request.forward.encrypted_prompt).expect("the forwarded envelope parses");
    assert_eq!(envelope.ciphertext_hash(), request.prompt_hash);
    assert_eq!(envelope.key_id, request.key_id);
    assert!(!request.model().is_empty());
}

fuzz_target!(|data: &[u8]| {
    if let Ok(r) = chat_completions::parse(data) {
        forwarded(r);
    }
    if let Ok(r) = tee_process::parse(data) {
        forwarded(r);
    }
    if let Ok(r) = x402_chat::parse(data) {
        assert!(r.forward.max_tokens.is_some_and(|n| n > 0));
        forwarded(r);
    }
    if let Ok((completion, _stream)) = client::proxy::parse(data) {
        assert!(!completion.messages.is_empty());
    }
});
