//! The rule set for a swap through Jupiter's aggregator (`notes/jupiter.md` §6, docs/swaps.md
//! "The router check, and Jupiter"). The enclave signs a router's transaction with a session
//! key only if it provably debits at most the committed input from the session key and the
//! route must pay at least the committed minimum into the session key's own output account,
//! which only the enclave's delivery step moves on. Pure functions over the parsed transaction:
//! nothing the host supplies beyond it (lookup tables' contents, quotes) enters the decision.
//!
//! | # | rule | refused as |
//! |---|---|---|
//! | 1 | the session key is the only signer (so it pays the fee) | [`Rule::OnlySigner`] |
//! | 2 | top-level programs: compute budget (limit and price only, fee capped), associated-token creation of the session key's own accounts, exactly one Jupiter route; nothing else | [`Rule::OtherProgram`], [`Rule::FeeBudget`], [`Rule::ForeignAccount`], [`Rule::RouteCount`] |
//! | 3 | the route is `shared_accounts_route_v2`: v1 routes (their amounts follow a route plan the enclave does not parse, and Anchor ignores trailing bytes), `route_v2` (it hands the session key's signature to the AMMs), exact-out and token-ledger routes are refused | [`Rule::V1Route`], [`Rule::NotSharedAccounts`], [`Rule::ExactOut`], [`Rule::TokenLedger`], [`Rule::NotARoute`] |
//! | 4 | `in_amount` ≤ the committed amount; `floor(quoted_out × (10000 − slippage) / 10000)` ≥ the committed minimum (Jupiter's program fails with 6001 below it); platform fee and positive-slippage share 0 | [`Rule::InAmount`], [`Rule::BelowMinimum`], [`Rule::PlatformFee`], [`Rule::PositiveSlippage`] |
//! | 5 | the user transfer authority (the session key), its source and destination token accounts (the session key's input and output accounts) and the destination mint are **static** keys at their slots, never loaded from a lookup table | [`Rule::LookedUp`], [`Rule::WrongAccount`] |
//! | 6 | where static, the source mint, both token programs (SPL Token), the event authority and the program slot are the expected ones; other slots may come from lookup tables (the program validates them) | [`Rule::WrongAccount`] |
//! | 7 | the session key and its two token accounts appear in the route nowhere but their slots | [`Rule::SessionElsewhere`] |
//!
//! What remains trusted: Jupiter's program (upgradeable, closed source) debits only
//! `in_amount` and enforces its minimum on the destination (the failed 6001 mainnet vector
//! shows it does).

use shared::address::Address;
use shared::solana::jupiter::{self, RouteKind, SharedRouteV2, shared_v2};
use shared::solana::programs::{ASSOCIATED_TOKEN_PROGRAM, COMPUTE_BUDGET_PROGRAM, JUPITER_PROGRAM, TOKEN_PROGRAM};
use shared::solana::{CompiledInstruction, Transaction, VersionedMessage};
use shared::swap::ParsedTerms;

use super::{CheckError, FeeBudget, ata};

/// A rule of the table above that a transaction breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Rule {
    #[error("the session key must be the only signer")]
    OnlySigner,
    #[error("an instruction of a program other than compute budget, associated token and Jupiter")]
    OtherProgram,
    #[error("{0}")]
    FeeBudget(&'static str),
    #[error("an associated token account the session key creates is not one of its own")]
    ForeignAccount,
    #[error("not exactly one Jupiter route")]
    RouteCount,
    #[error("a v1 route: its amounts follow a route plan the enclave does not parse")]
    V1Route,
    #[error("route_v2 hands the session key's signature to the route's AMMs; only shared_accounts_route_v2")]
    NotSharedAccounts,
    #[error("an exact-out route")]
    ExactOut,
    #[error("a token-ledger route: its input is whatever a balance shows")]
    TokenLedger,
    #[error("a Jupiter instruction that is not a route the enclave decodes")]
    NotARoute,
    #[error("the route spends {0} base units, more than the committed amount")]
    InAmount(u64),
    #[error("the route may deliver {least_out} base units, below the committed minimum {minimum}")]
    BelowMinimum { least_out: u64, minimum: u64 },
    #[error("a platform fee")]
    PlatformFee,
    #[error("a positive-slippage share")]
    PositiveSlippage,
    #[error("the route's {0} is loaded from a lookup table")]
    LookedUp(&'static str),
    #[error("the route's {0} is not the session's")]
    WrongAccount(&'static str),
    #[error("the session key or its token accounts appear outside their slots")]
    SessionElsewhere,
}

impl From<Rule> for CheckError {
    fn from(rule: Rule) -> Self {
        match rule {
            Rule::BelowMinimum { least_out, minimum } => CheckError::OutputBelowMinimum { paid: least_out, minimum },
            rule => CheckError::Jupiter(rule),
        }
    }
}

/// Checks a Jupiter swap before the session key signs it; returns the least the route may
/// deliver into the session's output account.
pub fn check_swap(terms: &ParsedTerms, session_key: &Address, tx: &Transaction) -> Result<u64, CheckError> {
    let (broken, least_out) = broken_rules(terms, session_key, tx);
    match broken.first() {
        Some(rule) => Err((*rule).into()),
        None => least_out.ok_or(CheckError::Jupiter(Rule::NotARoute)),
    }
}

/// Every rule `tx` breaks, in the table's order, and the route's least output if it decodes.
pub fn broken_rules(terms: &ParsedTerms, session_key: &Address, tx: &Transaction) -> (Vec<Rule>, Option<u64>) {
    let message = &tx.message;
    let mut broken = Vec::new();
    if message.signer_keys() != [*session_key] {
        broken.push(Rule::OnlySigner);
    }
    let mut fees = FeeBudget::default();
    let mut routes = Vec::new();
    for ix in message.instructions() {
        match message.program_id(ix) {
            Some(&COMPUTE_BUDGET_PROGRAM) if ix.accounts.is_empty() => {
                if let Err(why) = fees.read(&ix.data) {
                    broken.push(Rule::FeeBudget(why));
                }
            }
            Some(&ASSOCIATED_TOKEN_PROGRAM) if creates_own_account(terms, session_key, message, ix) => {}
            Some(&ASSOCIATED_TOKEN_PROGRAM) => broken.push(Rule::ForeignAccount),
            Some(&JUPITER_PROGRAM) => routes.push(ix),
            _ => broken.push(Rule::OtherProgram),
        }
    }
    if let Err(why) = fees.check() {
        broken.push(Rule::FeeBudget(why));
    }
    let [route] = routes[..] else {
        broken.push(Rule::RouteCount);
        return (broken, None);
    };
    let Some(args) = route_args(&route.data, &mut broken) else { return (broken, None) };
    let least_out = args.least_out().unwrap_or(0);
    if args.in_amount > terms.amount {
        broken.push(Rule::InAmount(args.in_amount));
    }
    if least_out < terms.min_out {
        broken.push(Rule::BelowMinimum { least_out, minimum: terms.min_out });
    }
    if args.platform_fee_bps != 0 {
        broken.push(Rule::PlatformFee);
    }
    if args.positive_slippage_bps != 0 {
        broken.push(Rule::PositiveSlippage);
    }
    check_slots(terms, session_key, message, route, &mut broken);
    (broken, Some(least_out))
}

/// The scalars of a `shared_accounts_route_v2`; any other Jupiter instruction is a named refusal.
fn route_args(data: &[u8], broken: &mut Vec<Rule>) -> Option<SharedRouteV2> {
    let refusal = match RouteKind::of(data) {
        Some(RouteKind::SharedAccountsRouteV2) => match SharedRouteV2::decode(data) {
            Some(args) => return Some(args),
            None => Rule::NotARoute,
        },
        Some(RouteKind::Route | RouteKind::SharedAccountsRoute) => Rule::V1Route,
        Some(RouteKind::RouteV2) => Rule::NotSharedAccounts,
        Some(
            RouteKind::ExactOutRoute
            | RouteKind::SharedAccountsExactOutRoute
            | RouteKind::ExactOutRouteV2
            | RouteKind::SharedAccountsExactOutRouteV2,
        ) => Rule::ExactOut,
        Some(RouteKind::RouteWithTokenLedger | RouteKind::SharedAccountsRouteWithTokenLedger) => Rule::TokenLedger,
        None => Rule::NotARoute,
    };
    broken.push(refusal);
    None
}

/// Rules 5 to 7 on the route's accounts.
fn check_slots(
    terms: &ParsedTerms,
    session_key: &Address,
    message: &VersionedMessage,
    route: &CompiledInstruction,
    broken: &mut Vec<Rule>,
) {
    use shared_v2::*;
    if route.accounts.len() < ACCOUNTS {
        broken.push(Rule::NotARoute);
        return;
    }
    let slot = |n: usize| message.instruction_account(route, n);
    let (input, output) = (ata(session_key, &terms.from_mint), ata(session_key, &terms.to_mint));
    let must_be_static = [
        (USER_TRANSFER_AUTHORITY, *session_key, "user transfer authority"),
        (SOURCE_TOKEN_ACCOUNT, input, "source token account"),
        (DESTINATION_TOKEN_ACCOUNT, output, "destination token account"),
        (DESTINATION_MINT, terms.to_mint, "destination mint"),
    ];
    for (n, expected, name) in must_be_static {
        match slot(n) {
            None => broken.push(Rule::LookedUp(name)),
            Some(key) if *key != expected => broken.push(Rule::WrongAccount(name)),
            Some(_) => {}
        }
    }
    let pinned_where_static = [
        (SOURCE_MINT, terms.from_mint, "source mint"),
        (SOURCE_TOKEN_PROGRAM, TOKEN_PROGRAM, "source token program"),
        (DESTINATION_TOKEN_PROGRAM, TOKEN_PROGRAM, "destination token program"),
        (EVENT_AUTHORITY, jupiter::EVENT_AUTHORITY, "event authority"),
        (PROGRAM, JUPITER_PROGRAM, "program slot"),
    ];
    for (n, expected, name) in pinned_where_static {
        if slot(n).is_some_and(|key| *key != expected) {
            broken.push(Rule::WrongAccount(name));
        }
    }
    let ours = [*session_key, input, output];
    let own_slots = [USER_TRANSFER_AUTHORITY, SOURCE_TOKEN_ACCOUNT, DESTINATION_TOKEN_ACCOUNT];
    let elsewhere = (0..route.accounts.len())
        .filter(|n| !own_slots.contains(n))
        .any(|n| slot(n).is_some_and(|key| ours.contains(key)));
    if elsewhere {
        broken.push(Rule::SessionElsewhere);
    }
}

/// An associated-token `Create` or `CreateIdempotent` that the session key funds for one of its
/// own two token accounts. The account, funder and wallet are static keys; the mint and token
/// program may be loaded: the program derives the account from them and fails on a mismatch.
fn creates_own_account(
    terms: &ParsedTerms,
    session_key: &Address,
    message: &VersionedMessage,
    ix: &CompiledInstruction,
) -> bool {
    let account = |n: usize| message.instruction_account(ix, n).copied();
    let own = [Some(ata(session_key, &terms.from_mint)), Some(ata(session_key, &terms.to_mint))];
    matches!(ix.data[..], [] | [0] | [1])
        && account(0) == Some(*session_key)
        && account(2) == Some(*session_key)
        && own.contains(&account(1))
}

#[cfg(test)]
mod tests;
