//! The shared crate's integration tests, one test binary (linking it is most of its build), a
//! module per concern; a module whose feature is off is empty (its `#![cfg]`).

#[cfg(feature = "gpu")]
mod common;
mod seeded;

mod address_crosscheck;
mod attest_corpus;
mod attest_platforms;
mod attest_samples;
mod dev_quote;
mod envelope_vectors;
mod gpu_node;
mod gpu_samples;
mod gpu_topology;
mod measure_pinned;
mod rtmr0;
mod solana_crosscheck;
