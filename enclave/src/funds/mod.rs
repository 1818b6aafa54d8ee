//! What moves money: one-shot swap sessions (`swap/`), the checks before a session key signs
//! (`swap_check.rs`, pure) and the managed wallets' pool (`pool/`, DESIGN §13).

pub mod pool;
pub mod swap;
pub mod swap_check;
