//! Crash points for the kill tests (cargo feature `failpoints`; a relay built without it has
//! none). `SVC_RELAY_EXIT_AT=<label>` aborts the process when it reaches that label, with no
//! cleanup, as a SIGKILL at that instant would: the tests then restart it and check that
//! nothing was lost or done twice.

/// Aborts here if the environment names this label.
#[cfg(feature = "failpoints")]
pub fn hit(label: &str) {
    if std::env::var("SVC_RELAY_EXIT_AT").is_ok_and(|wanted| wanted == label) {
        eprintln!("failpoint {label}: aborting");
        std::process::abort();
    }
}

#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub fn hit(_label: &str) {}
