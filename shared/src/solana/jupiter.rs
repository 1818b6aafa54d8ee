//! Jupiter aggregator v6 instructions (`notes/jupiter.md` §1): which route instruction a data
//! blob is, and the scalars of the exact-in v2 routes, which sit at fixed offsets before the
//! route plan. The route plan itself is never parsed: its `Swap` enum grows with every new AMM,
//! and a v2 check needs none of it.
//!
//! Anchor does not reject trailing bytes, so a v1 route's scalars (which follow the route plan)
//! cannot be read without parsing the whole plan; this module only names v1 routes, and the
//! enclave refuses them.

use super::programs;
use crate::address::Address;

pub use programs::JUPITER_PROGRAM as PROGRAM;

/// Anchor's event authority of the program: PDA(["__event_authority"]).
pub const EVENT_AUTHORITY: Address = programs::id("D8cy77BBepLMngZx6ZukaTff5hCt1HrWyKk3Hnd9oitf");

/// The program's instructions that swap, by Anchor discriminator (sha256("global:" + name)[..8]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteKind {
    Route,
    SharedAccountsRoute,
    ExactOutRoute,
    SharedAccountsExactOutRoute,
    RouteWithTokenLedger,
    SharedAccountsRouteWithTokenLedger,
    RouteV2,
    SharedAccountsRouteV2,
    ExactOutRouteV2,
    SharedAccountsExactOutRouteV2,
}

const DISCRIMINATORS: [(RouteKind, [u8; 8]); 10] = [
    (RouteKind::Route, [0xe5, 0x17, 0xcb, 0x97, 0x7a, 0xe3, 0xad, 0x2a]),
    (RouteKind::SharedAccountsRoute, [0xc1, 0x20, 0x9b, 0x33, 0x41, 0xd6, 0x9c, 0x81]),
    (RouteKind::ExactOutRoute, [0xd0, 0x33, 0xef, 0x97, 0x7b, 0x2b, 0xed, 0x5c]),
    (RouteKind::SharedAccountsExactOutRoute, [0xb0, 0xd1, 0x69, 0xa8, 0x9a, 0x7d, 0x45, 0x3e]),
    (RouteKind::RouteWithTokenLedger, [0x96, 0x56, 0x47, 0x74, 0xa7, 0x5d, 0x0e, 0x68]),
    (RouteKind::SharedAccountsRouteWithTokenLedger, [0xe6, 0x79, 0x8f, 0x50, 0x77, 0x9f, 0x6a, 0xaa]),
    (RouteKind::RouteV2, [0xbb, 0x64, 0xfa, 0xcc, 0x31, 0xc4, 0xaf, 0x14]),
    (RouteKind::SharedAccountsRouteV2, [0xd1, 0x98, 0x53, 0x93, 0x7c, 0xfe, 0xd8, 0xe9]),
    (RouteKind::ExactOutRouteV2, [0x9d, 0x8a, 0xb8, 0x52, 0x15, 0xf4, 0xf3, 0x24]),
    (RouteKind::SharedAccountsExactOutRouteV2, [0x35, 0x60, 0xe5, 0xca, 0xd8, 0xbb, 0xfa, 0x18]),
];

impl RouteKind {
    /// The route instruction `data` calls, if any.
    pub fn of(data: &[u8]) -> Option<Self> {
        let discriminator = data.get(..8)?;
        DISCRIMINATORS.iter().find(|(_, d)| d == discriminator).map(|(kind, _)| *kind)
    }

    pub fn discriminator(self) -> [u8; 8] {
        DISCRIMINATORS.iter().find(|(kind, _)| *kind == self).map_or([0; 8], |(_, d)| *d)
    }
}

/// The scalars of `shared_accounts_route_v2` (Borsh, after the discriminator): `id u8`,
/// `in_amount u64`, `quoted_out_amount u64`, `slippage_bps u16`, `platform_fee_bps u16`,
/// `positive_slippage_bps u16`, then the route plan (a Borsh `Vec`, at least its u32 length).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedRouteV2 {
    pub id: u8,
    pub in_amount: u64,
    pub quoted_out_amount: u64,
    pub slippage_bps: u16,
    pub platform_fee_bps: u16,
    pub positive_slippage_bps: u16,
}

/// Bytes before the route plan: discriminator, then the scalars.
const SHARED_V2_SCALARS_END: usize = 8 + 1 + 8 + 8 + 2 + 2 + 2;

impl SharedRouteV2 {
    /// The scalars of a `shared_accounts_route_v2` call; `None` for any other data, or one too
    /// short to hold the scalars and the route plan's length.
    pub fn decode(data: &[u8]) -> Option<Self> {
        if RouteKind::of(data) != Some(RouteKind::SharedAccountsRouteV2) || data.len() < SHARED_V2_SCALARS_END + 4 {
            return None;
        }
        let u64_at = |at: usize| data.get(at..at + 8).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes);
        let u16_at = |at: usize| data.get(at..at + 2).and_then(|b| b.try_into().ok()).map(u16::from_le_bytes);
        Some(SharedRouteV2 {
            id: data[8],
            in_amount: u64_at(9)?,
            quoted_out_amount: u64_at(17)?,
            slippage_bps: u16_at(25)?,
            platform_fee_bps: u16_at(27)?,
            positive_slippage_bps: u16_at(29)?,
        })
    }

    /// The instruction data with `route_plan` (its Borsh bytes, length included) after the scalars.
    pub fn encode(&self, route_plan: &[u8]) -> Vec<u8> {
        let mut data = RouteKind::SharedAccountsRouteV2.discriminator().to_vec();
        data.push(self.id);
        data.extend_from_slice(&self.in_amount.to_le_bytes());
        data.extend_from_slice(&self.quoted_out_amount.to_le_bytes());
        for v in [self.slippage_bps, self.platform_fee_bps, self.positive_slippage_bps] {
            data.extend_from_slice(&v.to_le_bytes());
        }
        data.extend_from_slice(route_plan);
        data
    }

    /// The least output the program lets the route deliver: the quote less the slippage,
    /// rounded down (if the program rounds up it is only stricter). `None` if the slippage is
    /// above 100%.
    pub fn least_out(&self) -> Option<u64> {
        let keep = 10_000u128.checked_sub(u128::from(self.slippage_bps))?;
        u64::try_from(u128::from(self.quoted_out_amount) * keep / 10_000).ok()
    }
}

/// Account slots of `shared_accounts_route_v2` (and its exact-out twin); the route's AMM
/// accounts follow from [`shared_v2::ACCOUNTS`]. Anchor passes the program id in an absent
/// optional slot, so positions never move.
pub mod shared_v2 {
    pub const PROGRAM_AUTHORITY: usize = 0;
    pub const USER_TRANSFER_AUTHORITY: usize = 1;
    pub const SOURCE_TOKEN_ACCOUNT: usize = 2;
    pub const PROGRAM_SOURCE_TOKEN_ACCOUNT: usize = 3;
    pub const PROGRAM_DESTINATION_TOKEN_ACCOUNT: usize = 4;
    pub const DESTINATION_TOKEN_ACCOUNT: usize = 5;
    pub const SOURCE_MINT: usize = 6;
    pub const DESTINATION_MINT: usize = 7;
    pub const SOURCE_TOKEN_PROGRAM: usize = 8;
    pub const DESTINATION_TOKEN_PROGRAM: usize = 9;
    pub const EVENT_AUTHORITY: usize = 10;
    pub const PROGRAM: usize = 11;
    /// The named accounts; AMM accounts come after.
    pub const ACCOUNTS: usize = 12;
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::*;

    #[test]
    fn discriminators_are_anchors_hash_of_the_snake_case_names() {
        let names = [
            (RouteKind::Route, "route"),
            (RouteKind::SharedAccountsRoute, "shared_accounts_route"),
            (RouteKind::ExactOutRoute, "exact_out_route"),
            (RouteKind::SharedAccountsExactOutRoute, "shared_accounts_exact_out_route"),
            (RouteKind::RouteWithTokenLedger, "route_with_token_ledger"),
            (RouteKind::SharedAccountsRouteWithTokenLedger, "shared_accounts_route_with_token_ledger"),
            (RouteKind::RouteV2, "route_v2"),
            (RouteKind::SharedAccountsRouteV2, "shared_accounts_route_v2"),
            (RouteKind::ExactOutRouteV2, "exact_out_route_v2"),
            (RouteKind::SharedAccountsExactOutRouteV2, "shared_accounts_exact_out_route_v2"),
        ];
        for (kind, name) in names {
            let digest = Sha256::digest(format!("global:{name}"));
            assert_eq!(kind.discriminator(), digest[..8], "{name}");
            assert_eq!(RouteKind::of(&digest[..8]), Some(kind));
        }
        assert_eq!(
            RouteKind::of(&Sha256::digest("global:sharedAccountsRoute")[..8]),
            None,
            "camelCase is not Anchor's"
        );
    }

    #[test]
    fn the_event_authority_is_the_programs_pda() {
        let (pda, _) = crate::address::find_program_address(&[b"__event_authority"], &PROGRAM).unwrap();
        assert_eq!(pda, EVENT_AUTHORITY);
    }

    #[test]
    fn a_real_shared_v2_route_decodes_at_its_fixed_offsets() {
        // The mainnet `shared_accounts_route_v2` of test-vectors/jupiter-mainnet/v2-shared-usdc-gasless.
        let data = hex::decode(
            "d19853937cfed8e90800ca9a3b00000000a858ef132801000064000c000000040000003d01f401000111011027\
             01041101542400041ac8000004",
        )
        .unwrap();
        let route = SharedRouteV2::decode(&data).unwrap();
        let expected = SharedRouteV2 {
            id: 8,
            in_amount: 1_000_000_000,
            quoted_out_amount: 1_271_644_772_520,
            slippage_bps: 100,
            platform_fee_bps: 12,
            positive_slippage_bps: 0,
        };
        assert_eq!(route, expected);
        assert_eq!(route.least_out(), Some(1_258_928_324_794));
        assert_eq!(route.encode(&data[SHARED_V2_SCALARS_END..]), data);
        // Too short for the route plan's length; another instruction.
        assert_eq!(SharedRouteV2::decode(&data[..SHARED_V2_SCALARS_END + 3]), None);
        assert_eq!(SharedRouteV2::decode(&RouteKind::RouteV2.discriminator()), None);
        let too_much = SharedRouteV2 { slippage_bps: 10_001, ..expected };
        assert_eq!(too_much.least_out(), None);
    }
}
