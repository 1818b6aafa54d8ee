//! Our `find_program_address` against the Solana SDK's on many random inputs.

use shared::address::{Address, RECEIPT_SEED, find_program_address};
use solana_pubkey::Pubkey;

use crate::seeded::{bytes32, next};

#[test]
fn receipt_addresses_match_solana_sdk() {
    let mut state = 0x5eed_u64;
    let mut bumps_below_255 = 0;
    for _ in 0..2000 {
        let program = bytes32(&mut state);
        let hash = bytes32(&mut state);
        let (ours, our_bump) = find_program_address(&[RECEIPT_SEED, &hash], &Address(program)).unwrap();
        let (theirs, their_bump) =
            Pubkey::find_program_address(&[RECEIPT_SEED, &hash], &Pubkey::new_from_array(program));
        assert_eq!(ours.0, theirs.to_bytes());
        assert_eq!(our_bump, their_bump);
        assert_eq!(ours.to_string(), theirs.to_string());
        bumps_below_255 += usize::from(our_bump < 255);
    }
    // About half of all first candidates land on the curve; make sure the bump loop was exercised.
    assert!(bumps_below_255 > 500, "only {bumps_below_255} inputs needed a second bump");
}

#[test]
fn arbitrary_seed_shapes_match_solana_sdk() {
    let mut state = 42_u64;
    for n in 0..500 {
        let program = bytes32(&mut state);
        let len = (next(&mut state) % 33) as usize;
        let seed_a = bytes32(&mut state);
        let seeds: [&[u8]; 3] = [&seed_a[..len], b"", &seed_a[..n % 33]];
        let (ours, ob) = find_program_address(&seeds, &Address(program)).unwrap();
        let (theirs, tb) = Pubkey::find_program_address(&seeds, &Pubkey::new_from_array(program));
        assert_eq!((ours.0, ob), (theirs.to_bytes(), tb));
    }
}
