//! HTTP plumbing every subsystem shares: the accept loop (`serve`), bodies read once with a cap
//! (`body`), the caller's address (`peer`), the errors and their contract codes (`error`), and
//! where log lines go (`logging`).

pub mod body;
pub mod error;
pub mod logging;
pub mod peer;
pub mod serve;
