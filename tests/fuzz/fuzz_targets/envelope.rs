//! The enclave's first look at a request: the `encryptedPrompt` string parsed strictly,
//! re-serialised as the relay forwards it, opened with the enclave key (for a prompt and for a
//! secrets bundle), and what opens parsed as the prompt plaintext.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shared::envelope::{Envelope, PromptPlaintext, Purpose};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(envelope) = Envelope::parse(text) else { return };
    // The relay forwards the envelope re-serialised from its fields: it must parse back to the
    // same envelope, or the enclave would hash and answer another ciphertext.
    let forwarded = envelope.to_json_string();
    assert_eq!(Envelope::parse(&forwarded).as_ref(), Ok(&envelope));
    let _ = envelope.ciphertext_hash();
    let (sk, pk) = svc_fuzz::enclave_keys();
    if let Ok((plaintext, _context)) = envelope.open(sk, pk)
        && let Ok(prompt) = PromptPlaintext::parse(&plaintext)
    {
        assert!(!prompt.into_messages().is_empty());
    }
    assert!(envelope.open_for(Purpose::Provision, sk, pk).is_err() || envelope.open(sk, pk).is_err());
});
