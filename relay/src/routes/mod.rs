pub mod account;
pub mod receipts;
pub mod tee;
