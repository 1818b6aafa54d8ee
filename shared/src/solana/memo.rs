//! Memo program (v2): data is the memo itself (UTF-8; the program refuses anything else); any
//! accounts given must sign.

use super::programs::MEMO_PROGRAM;
use super::{AccountMeta, Instruction};
use crate::address::Address;

pub fn memo(data: &[u8], signers: &[&Address]) -> Instruction {
    Instruction {
        program_id: MEMO_PROGRAM,
        accounts: signers.iter().map(|k| AccountMeta::readonly(**k, true)).collect(),
        data: data.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signers_are_readonly_signers() {
        let ix = memo(b"order:42", &[&Address([1; 32])]);
        assert_eq!(ix.data, b"order:42");
        assert_eq!(ix.accounts, [AccountMeta::readonly(Address([1; 32]), true)]);
    }
}
