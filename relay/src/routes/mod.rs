pub mod account;
pub mod agent;
pub mod completions;
pub mod receipts;
pub mod tee;
pub mod x402;
