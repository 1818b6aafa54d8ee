//! The currencies a balance can be held in. Their own module, so that the key check (which
//! reads `X-Currency`) and billing name them without importing each other.

/// Every currency a balance can be held in, the stablecoin first (a call without `X-Currency`
/// is paid from the first balance that covers it).
pub const CURRENCIES: &[&str] = &["usdc", "svc"];

/// `name` as one of [`CURRENCIES`].
pub fn named(name: &str) -> Option<&'static str> {
    CURRENCIES.iter().copied().find(|c| *c == name)
}
