//! The decrypted prompt (DESIGN §4.1) as the enclave reads it: `{prompt}` or `{messages}` and
//! the options, strictly; what parses serialises back to the same request.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shared::envelope::PromptPlaintext;

fuzz_target!(|data: &[u8]| {
    let Ok(prompt) = PromptPlaintext::parse(data) else { return };
    let bytes = serde_json::to_vec(&prompt).expect("a parsed prompt serialises");
    assert_eq!(PromptPlaintext::parse(&bytes).as_ref(), Ok(&prompt));
    assert!(!prompt.into_messages().is_empty());
});
