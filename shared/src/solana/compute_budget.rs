//! Compute Budget program: the compute unit limit and the priority fee (micro-lamports per CU).

use super::Instruction;
use super::programs::COMPUTE_BUDGET_PROGRAM;

const SET_COMPUTE_UNIT_LIMIT: u8 = 2;
const SET_COMPUTE_UNIT_PRICE: u8 = 3;

pub fn set_compute_unit_limit(units: u32) -> Instruction {
    let mut data = vec![SET_COMPUTE_UNIT_LIMIT];
    data.extend_from_slice(&units.to_le_bytes());
    Instruction { program_id: COMPUTE_BUDGET_PROGRAM, accounts: vec![], data }
}

pub fn set_compute_unit_price(micro_lamports: u64) -> Instruction {
    let mut data = vec![SET_COMPUTE_UNIT_PRICE];
    data.extend_from_slice(&micro_lamports.to_le_bytes());
    Instruction { program_id: COMPUTE_BUDGET_PROGRAM, accounts: vec![], data }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_layouts() {
        assert_eq!(set_compute_unit_limit(20_000).data, [2, 0x20, 0x4e, 0, 0]);
        assert_eq!(set_compute_unit_price(1).data, [3, 1, 0, 0, 0, 0, 0, 0, 0]);
    }
}
