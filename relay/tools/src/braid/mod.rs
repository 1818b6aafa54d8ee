//! BRAID guided reasoning: a fixed plan (a small graph of action nodes) chosen by the
//! prompt's intent, instead of letting the model pick tools turn by turn. Each action node
//! calls one tool or the model; the last node writes the answer from what the others found.
//!
//! Six plans exist (`plans.rs`); `intent.rs` picks one; `entities.rs` reads the addresses,
//! tokens and URLs a plan's tools need from the prompt; `run.rs` executes a plan and keeps
//! the trace. When a plan cannot run (a needed entity is missing, or the model fails) the
//! caller falls back to the tool loop (contract §7 rule 2).

mod entities;
mod intent;
mod plans;
mod run;

pub use entities::Entities;
pub use intent::detect;
pub use plans::{PLANS, Plan, plan};
pub use run::{BraidError, BraidOutcome, NodeTrace, run_plan};

/// Plan ids, in the order `braidOptions.forceGrdId` documents them.
pub fn plan_ids() -> impl Iterator<Item = &'static str> {
    PLANS.iter().map(|p| p.id)
}
