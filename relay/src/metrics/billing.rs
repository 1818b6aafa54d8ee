//! Billing outcomes: what happened to the usage rows this relay settled (completed, refunded
//! after a failed call, refunded by the sweep after a stopped relay abandoned them) and to the
//! x402 payments it settled. Counted where the row or the payment actually changed, so two
//! relays sweeping one row count it once between them.

use std::sync::atomic::{AtomicU64, Ordering};

use super::exposition::{Exposition, Kind};

const USAGE: &str = "svc_usage_rows_total";
const X402: &str = "svc_x402_settlements_total";

#[derive(Debug, Default)]
pub struct Billing {
    completed: AtomicU64,
    refunded: AtomicU64,
    abandoned: AtomicU64,
    settled: AtomicU64,
    settle_failed: AtomicU64,
}

impl Billing {
    /// A call succeeded and its pending usage row was completed.
    pub fn usage_completed(&self) {
        self.completed.fetch_add(1, Ordering::Relaxed);
    }

    /// A call failed (or its answer could not be delivered) and its row was refunded.
    pub fn usage_refunded(&self) {
        self.refunded.fetch_add(1, Ordering::Relaxed);
    }

    /// The sweep refunded `n` rows a stopped relay left pending.
    pub fn usage_abandoned(&self, n: u64) {
        self.abandoned.fetch_add(n, Ordering::Relaxed);
    }

    /// An x402 payment settled (`true`) or its settlement was refused or went unanswered.
    pub fn x402_settlement(&self, succeeded: bool) {
        let counter = if succeeded { &self.settled } else { &self.settle_failed };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Both families; every outcome is shown from the start, at 0 until it happens.
    pub fn render(&self, out: &mut Exposition) {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        out.family(USAGE, "Usage rows of paid calls settled by this relay, by outcome.", Kind::Counter);
        out.sample(USAGE, &[("outcome", "completed")], load(&self.completed));
        out.sample(USAGE, &[("outcome", "refunded")], load(&self.refunded));
        out.sample(USAGE, &[("outcome", "abandoned_refunded")], load(&self.abandoned));
        out.family(X402, "x402 payments this relay settled, by outcome.", Kind::Counter);
        out.sample(X402, &[("outcome", "succeeded")], load(&self.settled));
        out.sample(X402, &[("outcome", "failed")], load(&self.settle_failed));
    }
}
