//! `POST /agent` bodies as the relay reads them (`relay::plain_agent::request::parse`): every
//! field checked by name, and in encrypted mode the envelope checked as the private pipeline
//! does before anything is charged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use relay::plain_agent::request::{self, AgentRequest, Path};
use relay::private::SealedRequest;

fuzz_target!(|data: &[u8]| {
    let Ok(parsed) = request::parse(data) else { return };
    match parsed {
        AgentRequest::Plain { prompt, model, chat_id, path } => {
            assert!(!prompt.trim().is_empty());
            assert!(!model.is_empty());
            if let Some(id) = chat_id {
                assert!((1..=128).contains(&id.len()));
            }
            if let Path::Braid(options) = path
                && let Some(id) = options.force_grd_id
            {
                assert!(relay_tools::braid::plan(&id).is_some());
            }
        }
        AgentRequest::Encrypted { encrypted_prompt, model } => {
            if let Ok(sealed) = SealedRequest::new(&encrypted_prompt, Some(&model), None) {
                let forwarded = shared::envelope::Envelope::parse(&sealed.forward.encrypted_prompt)
                    .expect("the forwarded envelope parses");
                assert_eq!(forwarded.ciphertext_hash(), sealed.prompt_hash);
            }
        }
    }
});
