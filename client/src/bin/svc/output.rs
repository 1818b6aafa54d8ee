//! What `svc` prints on stdout: with `--json`, one document per run (docs/cli-json.md).

use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a JSON document went to stdout.
static PRINTED_JSON: AtomicBool = AtomicBool::new(false);

/// Prints JSON to stdout; a reader that went away (`svc … | head`) is not an error.
pub fn print_json(value: &impl serde::Serialize) {
    use std::io::Write;
    PRINTED_JSON.store(true, Ordering::Relaxed);
    let _ = writeln!(std::io::stdout().lock(), "{}", serde_json::to_string_pretty(value).expect("serialisable"));
}

/// Whether this run already printed its document (a chat whose log check failed says so in
/// its own, and prints no second one for the failure).
pub fn printed_json() -> bool {
    PRINTED_JSON.load(Ordering::Relaxed)
}
