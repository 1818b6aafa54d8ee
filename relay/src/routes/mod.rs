pub mod receipts;
pub mod tee;
