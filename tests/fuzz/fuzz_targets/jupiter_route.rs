//! Jupiter route instructions (`shared::solana::jupiter`), the decoder the enclave reads a
//! router's swap with, and the enclave's Jupiter rule set over whatever parses as a
//! transaction: the decoder is exact (what decodes encodes back to the same bytes), the least
//! output never overflows, and the rule set never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shared::address::Address;
use shared::solana::Transaction;
use shared::solana::jupiter::{RouteKind, SharedRouteV2};
use shared::swap::ParsedTerms;

/// Bytes before the route plan: discriminator, id, two amounts, three u16s.
const SCALARS_END: usize = 31;

fuzz_target!(|data: &[u8]| {
    let kind = RouteKind::of(data);
    if let Some(route) = SharedRouteV2::decode(data) {
        assert_eq!(kind, Some(RouteKind::SharedAccountsRouteV2));
        assert_eq!(route.encode(&data[SCALARS_END..]), data);
        if let Some(least) = route.least_out() {
            assert!(least <= route.quoted_out_amount);
        }
    }
    if let Ok(tx) = Transaction::parse(data) {
        // The session key is the fee payer, so the signer rule passes where it can.
        let session = tx.message.fee_payer().copied().unwrap_or(Address([0; 32]));
        let terms = ParsedTerms {
            session_id: [1; 16],
            payer: Address([2; 32]),
            from_mint: Address([3; 32]),
            to_mint: Address([4; 32]),
            amount: 1_000_000,
            destination: Address([5; 32]),
            min_out: 1,
            expires_at: 0,
        };
        let (broken, least) = enclave::funds::swap_check::jupiter::broken_rules(&terms, &session, &tx);
        let verdict = enclave::funds::swap_check::jupiter::check_swap(&terms, &session, &tx);
        assert_eq!(verdict.is_ok(), broken.is_empty() && least.is_some());
    }
});
