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

/// A relay asked for a crash point it cannot reach (built without `failpoints`) refuses to
/// start, so a kill test fails at once with the reason instead of waiting for a crash that
/// never comes (`cargo test -p relay` rebuilds the binary with the package's own features).
pub fn check_environment() -> Result<(), String> {
    match std::env::var_os("SVC_RELAY_EXIT_AT") {
        Some(_) if !cfg!(feature = "failpoints") => {
            Err("SVC_RELAY_EXIT_AT is set but this relay was built without the `failpoints` feature \
             (cargo build --workspace --all-features)"
                .into())
        }
        _ => Ok(()),
    }
}
