//! Denomination buckets: an amount equal to a standard denomination hides among every other
//! funding of that denomination; any other amount is unique and links payer and destination.

use crate::agents::MintConfig;

/// Where an amount stands among its mint's buckets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bucketing {
    pub bucketed: bool,
    /// The closest standard denomination (base units).
    pub nearest: u64,
    /// E.g. `10 USDC`.
    pub label: String,
}

/// `amount` against `mint`'s buckets; `None` when the mint has none.
pub fn bucket(amount: u64, mint: &MintConfig) -> Option<Bucketing> {
    let nearest = *mint.buckets.iter().min_by_key(|b| b.abs_diff(amount))?;
    Some(Bucketing { bucketed: nearest == amount, nearest, label: label(nearest, mint) })
}

/// A bucket's label: the amount in whole units and the symbol, e.g. `0.5 SOL`.
pub fn label(amount: u64, mint: &MintConfig) -> String {
    let scale = 10u64.pow(u32::from(mint.decimals));
    let (whole, frac) = (amount / scale, amount % scale);
    if frac == 0 {
        return format!("{whole} {}", mint.symbol);
    }
    let digits = format!("{frac:0width$}", width = usize::from(mint.decimals));
    format!("{whole}.{} {}", digits.trim_end_matches('0'), mint.symbol)
}

/// What bucketing buys, for `privacyNotes`.
pub fn privacy_notes(b: &Bucketing, anonymity_window_hours: u64) -> String {
    match b.bucketed {
        true => format!(
            "{} is a standard denomination: on chain this funding looks like every other {} funding, so an \
             observer cannot single it out by amount. GET /agents/v1/anonymity-set shows how many shared it in the \
             last {anonymity_window_hours} h. Funds pass through a key only the attested enclave holds, which pays the \
             destination, so no transaction links the payer to the destination.",
            b.label, b.label
        ),
        false => format!(
            "This amount is not a standard denomination: its funding is unique on chain and can be matched to the \
             output by amount. Use {} (the nearest bucket) to hide among the other fundings of that size. Funds still \
             pass through a key only the attested enclave holds, so no transaction links the payer to the destination.",
            b.label
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usdc() -> MintConfig {
        MintConfig {
            symbol: "USDC".into(),
            decimals: 6,
            buckets: vec![1_000_000, 10_000_000, 100_000_000],
            min_amount: 100_000,
            max_amount: 1_000_000_000,
        }
    }

    #[test]
    fn exact_denominations_are_bucketed_and_others_point_to_the_nearest() {
        assert_eq!(
            bucket(10_000_000, &usdc()),
            Some(Bucketing { bucketed: true, nearest: 10_000_000, label: "10 USDC".into() })
        );
        let b = bucket(12_345_678, &usdc()).unwrap();
        assert_eq!((b.bucketed, b.nearest, b.label.as_str()), (false, 10_000_000, "10 USDC"));
        assert_eq!(bucket(60_000_000, &usdc()).unwrap().nearest, 100_000_000);
        let none = MintConfig { buckets: vec![], ..usdc() };
        assert_eq!(bucket(1, &none), None);
    }

    #[test]
    fn labels_show_whole_units() {
        let sol = MintConfig { symbol: "SOL".into(), decimals: 9, ..usdc() };
        assert_eq!(label(500_000_000, &sol), "0.5 SOL");
        assert_eq!(label(1_250_000_000, &sol), "1.25 SOL");
        assert_eq!(label(2_000_000_000, &sol), "2 SOL");
        assert_eq!(label(1, &usdc()), "0.000001 USDC");
    }
}
