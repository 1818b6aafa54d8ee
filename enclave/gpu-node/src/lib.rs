//! The GPU node's agent (docs/gpu.md "A node proves itself"). It runs beside the model server
//! on the GPU node's own TDX VM, terminates TLS on the key the enclave pins, answers
//! `GET /attest?nonce=` with the node's quote and every GPU's evidence (`attest.rs`), stapling
//! NVIDIA's OCSP answers (`ocsp.rs`), and forwards `/v1/*` to the model server (`serve.rs`).
//!
//! Where evidence comes from is a seam: NVML on a real node (`nvml.rs`) and configfs-tsm for the
//! quote (`quotes.rs`), or development GPUs and quotes (`dev.rs`, feature `dev`) for tests.

pub mod attest;
pub mod config;
#[cfg(feature = "dev")]
pub mod dev;
#[cfg(feature = "nvml")]
pub mod nvml;
pub mod ocsp;
pub mod quotes;
pub mod serve;
