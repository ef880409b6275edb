//! Misuse messages (`CUMOCK_MISUSE=1`): the boundary says each call that breaks a rule;
//! here they are counted (for strict mode) and given the program's call site.

use super::call_sites::CallSite;
use crate::model::error::{CuError, Severity};
use std::sync::atomic::{AtomicU64, Ordering};

pub fn misuse_enabled() -> bool {
    super::settings().misuse
}

static MISUSES: AtomicU64 = AtomicU64::new(0);

/// How many misuses were counted so far.
pub(super) fn count() -> u64 {
    MISUSES.load(Ordering::Relaxed)
}

/// Counts a misuse the boundary has just printed, and says under it where the program
/// made the call.
pub fn note_misuse(_name: &str, e: &CuError) {
    if e.severity == Severity::WouldCrash || super::settings().misuse {
        MISUSES.fetch_add(1, Ordering::Relaxed);
        if !e.message.is_empty() {
            eprint!("{}", CallSite::capture().show());
        }
    }
}

/// A kernel's fault: always said, as compute-sanitizer would say it, since on a GPU the
/// program learns only an error code at its next synchronisation.
pub fn kernel_fault(message: &str) {
    eprintln!("cumock: {message}");
    if super::settings().misuse {
        MISUSES.fetch_add(1, Ordering::Relaxed);
    }
}

/// A hazard that is not an error on the mock but is on a real driver: printed and
/// counted as misuse when misuse messages are on.
pub fn warn(name: &str, message: &str) {
    if super::settings().misuse {
        eprint!(
            "cumock: {name}: warning: {message}\n{}",
            CallSite::capture().show()
        );
        MISUSES.fetch_add(1, Ordering::Relaxed);
    }
}

/// An ordering bug (model/ordering.rs), its message already naming both operations and
/// their call sites: printed and counted as misuse.
pub fn ordering_bug(message: &str) {
    eprint!("{message}");
    MISUSES.fetch_add(1, Ordering::Relaxed);
}
