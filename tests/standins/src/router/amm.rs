//! Constant-product pricing of one pair of the pool: what an exact input buys, the fee taken
//! from it, the price impact, and the least output a slippage tolerance accepts.
//!
//! Integer math in u128, so no u64 amounts can overflow and nothing is rounded through floats.
//! Every rounding favours the pool, as AMMs do: the fee rounds up, the output rounds down.

/// Basis points in one.
pub const BPS: u16 = 10_000;

/// Fractions are carried as multiples of 10^-18 (enough digits for any u64 ratio here).
const FRACTION_ONE: u128 = 1_000_000_000_000_000_000;
const FRACTION_DIGITS: usize = 18;

/// What the pool gives for an exact input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fill {
    pub in_amount: u64,
    /// `ceil(in_amount * fee_bps / 10_000)`, in the input mint; stays in the pool.
    pub fee: u64,
    /// `reserve_out * after_fee / (reserve_in + after_fee)`, rounded down.
    pub out_amount: u64,
    /// Price impact in units of 10^-18: `1 - execution / spot` with the fee left out (it is
    /// reported on its own), which for a constant product is `after_fee / (reserve_in + after_fee)`.
    pub price_impact: u128,
}

/// Why the pool cannot fill an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoFill {
    /// A side of the pair holds nothing, or the output rounds to zero.
    NoRoute,
    /// The input after the fee is more than the pool holds of the input mint (a price impact
    /// above 50 %): the stand-in's stand-in for liquidity that runs out.
    TooLarge,
}

/// Prices `in_amount` against the reserves, with `fee_bps` (at most 10 000) taken from the input.
pub fn fill(reserve_in: u64, reserve_out: u64, in_amount: u64, fee_bps: u16) -> Result<Fill, NoFill> {
    let fee_bps = u128::from(fee_bps.min(BPS));
    let amount = u128::from(in_amount);
    let fee = (amount * fee_bps).div_ceil(u128::from(BPS));
    let after_fee = amount - fee;
    let (reserve_in, reserve_out) = (u128::from(reserve_in), u128::from(reserve_out));
    if reserve_in == 0 || reserve_out == 0 || after_fee == 0 {
        return Err(NoFill::NoRoute);
    }
    if after_fee > reserve_in {
        return Err(NoFill::TooLarge);
    }
    // Below reserve_out, so it fits a u64.
    let out = reserve_out * after_fee / (reserve_in + after_fee);
    if out == 0 {
        return Err(NoFill::NoRoute);
    }
    Ok(Fill {
        in_amount,
        fee: u64::try_from(fee).map_err(|_| NoFill::NoRoute)?,
        out_amount: u64::try_from(out).map_err(|_| NoFill::NoRoute)?,
        price_impact: after_fee * FRACTION_ONE / (reserve_in + after_fee),
    })
}

/// `otherAmountThreshold` of an exact-input quote: the output less `slippage_bps`, rounded down.
pub fn threshold(out_amount: u64, slippage_bps: u16) -> u64 {
    let kept = u128::from(BPS - slippage_bps.min(BPS));
    // At most out_amount, so it fits.
    u64::try_from(u128::from(out_amount) * kept / u128::from(BPS)).unwrap_or(out_amount)
}

/// A fraction in units of 10^-18 as a decimal string without trailing zeros ("0", "0.0123").
pub fn decimal(fraction: u128) -> String {
    let whole = fraction / FRACTION_ONE;
    let part = fraction % FRACTION_ONE;
    if part == 0 {
        return whole.to_string();
    }
    let digits = format!("{part:0FRACTION_DIGITS$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_product_with_the_fee_rounded_up() {
        // 1 000 in, 30 bps: fee ceil(3.0) = 3; 997 priced: 2_000_000 * 997 / 1_000_997.
        let f = fill(1_000_000, 2_000_000, 1_000, 30).unwrap();
        assert_eq!((f.fee, f.out_amount), (3, 1992));
        assert_eq!(f.price_impact, 997 * FRACTION_ONE / 1_000_997);
        // 1 001 in: fee ceil(3.003) = 4.
        assert_eq!(fill(1_000_000, 2_000_000, 1_001, 30).unwrap().fee, 4);
        // No fee: the plain formula.
        let f = fill(500, 500, 500, 0).unwrap();
        assert_eq!((f.fee, f.out_amount), (0, 250));
        assert_eq!(decimal(f.price_impact), "0.5");
    }

    #[test]
    fn what_cannot_fill() {
        assert_eq!(fill(0, 10, 5, 30), Err(NoFill::NoRoute));
        assert_eq!(fill(10, 0, 5, 30), Err(NoFill::NoRoute));
        assert_eq!(fill(10, 10, 0, 30), Err(NoFill::NoRoute));
        // The fee eats a one-unit input.
        assert_eq!(fill(10, 10, 1, 30), Err(NoFill::NoRoute));
        // The output rounds to zero.
        assert_eq!(fill(1_000_000, 10, 1_000, 0), Err(NoFill::NoRoute));
        // Exactly the reserve fills; one more does not.
        assert!(fill(1_000, 1_000, 1_000, 0).is_ok());
        assert_eq!(fill(1_000, 1_000, 1_001, 0), Err(NoFill::TooLarge));
        // A full fee leaves nothing to price.
        assert_eq!(fill(1_000, 1_000, 100, BPS), Err(NoFill::NoRoute));
    }

    #[test]
    fn no_overflow_at_the_extremes() {
        let f = fill(u64::MAX, u64::MAX, u64::MAX, 0).unwrap();
        assert_eq!(f.out_amount, u64::MAX / 2);
        assert_eq!(decimal(f.price_impact), "0.5");
        assert_eq!(fill(u64::MAX, 1, 1, 0), Err(NoFill::NoRoute));
        assert_eq!(threshold(u64::MAX, 0), u64::MAX);
        assert_eq!(threshold(u64::MAX, BPS), 0);
    }

    #[test]
    fn impact_grows_with_size() {
        let impacts: Vec<u128> = [10u64, 1_000, 100_000, 10_000_000]
            .iter()
            .map(|a| fill(1 << 40, 1 << 40, *a, 30).unwrap().price_impact)
            .collect();
        assert!(impacts.windows(2).all(|w| w[0] < w[1]), "{impacts:?}");
    }

    #[test]
    fn thresholds_and_decimals() {
        assert_eq!(threshold(10_000, 50), 9_950);
        assert_eq!(threshold(999, 50), 994); // 994.005 rounds down
        assert_eq!(threshold(5, 0), 5);
        assert_eq!(decimal(0), "0");
        assert_eq!(decimal(FRACTION_ONE), "1");
        assert_eq!(decimal(1), "0.000000000000000001");
        assert_eq!(decimal(123_400_000_000_000_000), "0.1234");
        assert_eq!(decimal(FRACTION_ONE + FRACTION_ONE / 4), "1.25");
    }
}
