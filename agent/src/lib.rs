//! The model side of the service: an OpenAI-compatible chat client for GPU nodes.
//!
//! The enclave uses it for private chat; later the tool loop and BRAID live here too, with
//! cargo features choosing the tool set each binary may contain.

#![forbid(unsafe_code)]

pub mod model;
pub mod pin;
