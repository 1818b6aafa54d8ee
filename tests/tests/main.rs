//! The end-to-end tests, one module per file beside this one, built as one test binary: the
//! files share the `e2e` crate and its dependencies, so one link instead of one per file (the
//! build's longest step, docs/benchmarks.md "CI time"). nextest still runs each test in a
//! process of its own; a file's tests are `<file>::<test>` (`-E 'test(/^wallets_shield::/)'`).

mod account;
mod agent;
mod attestation;
mod billing;
mod chain;
mod chain_reads;
mod cli_json;
mod custody;
mod deposits;
mod disconnect;
mod discovery;
mod enclave_surface;
mod enclave_tools;
mod enclaves;
mod faults_restart;
mod funds_crashes;
mod gpu_nodes;
mod hostile_host;
mod image_boot;
mod launch_td;
mod ledger_solana;
mod log;
mod make_run;
mod operations;
mod private_chat;
mod proxy;
mod relay_contract;
mod relay_limits;
mod route_program;
mod router;
mod swap_crashes;
mod swap_inputs;
mod swaps;
mod swaps_jupiter;
mod unsafe_code;
mod wallets;
mod wallets_mcp;
mod wallets_private;
mod wallets_shield;
mod wallets_swap;
mod web;
mod x402;
mod x402_chain;
