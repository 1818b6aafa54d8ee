//! The model side of encrypted mode, and the pieces the relay's plaintext path builds on: an
//! OpenAI-compatible chat client for GPU nodes, the tool trait, the tool loop, and the five
//! tools of encrypted mode. This is what the enclave compiles; the relay's thirteen other tools,
//! its SSRF-guarded fetcher and BRAID live in `relay/tools`, outside the enclave's build.

pub mod model;
pub mod pin;
pub mod tool;
pub mod tool_loop;
pub mod tools;
pub mod toolset;
