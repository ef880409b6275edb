//! Diagnostics for allocator authors, all off unless a variable asks
//! (`cumock_support::settings` reads them, once, for the mock and the runtime alike):
//!
//! | variable | what it does | module |
//! |---|---|---|
//! | `CUMOCK_TRACE=FILE` | every driver call as a JSON line: function, arguments, result, thread, time | `trace` |
//! | `CUMOCK_LEAKS=1` | at exit, what leaked: reservations, handles, mappings, exported fds, stream-ordered memory, memory pools | `leaks`, `exported_fds` |
//! | `CUMOCK_MISUSE=1` | a message for each call that breaks a rule, naming the call and the rule | `misuse` |
//! | `CUMOCK_FAULT=SPEC` | make calls fail on purpose (`cumock_support::faults`) | `faults` |
//! | `CUMOCK_STRICT=1` | misuse and leaks make the process exit with status 86 | here |
//!
//! - `call_sites`: where the program made a thing or broke a rule, symbolised when told;
//! - `trace`: the trace's encoding of a call's arguments and out-parameters;
//! - `faults`: the driver's planned failures;
//! - `leaks`: the leak report, and the call sites of what is live;
//! - `exported_fds`: exported fds still open at exit;
//! - `misuse`: misuse messages and their count.

mod call_sites;
mod exported_fds;
mod faults;
mod leaks;
mod misuse;
mod trace;

pub use call_sites::{caller_object, CallSite};
pub use exported_fds::note_exported_fd;
pub use faults::injected_fault;
pub use leaks::{created, driver_owned, leak_report, leaks, Leak, Made};
pub use misuse::{kernel_fault, misuse_enabled, note_misuse, ordering_bug, warn};
pub use trace::after_call;

use cumock_support::Settings;
use std::sync::OnceLock;

/// The exit status of a strict run that found misuse or leaks.
pub const STRICT_EXIT_STATUS: i32 = 86;

/// The process's settings, as the mock first reads them: what did not parse is said
/// once, and with leak checking or strict mode on, the report is registered for exit.
#[inline]
pub fn settings() -> &'static Settings {
    static SAID: OnceLock<()> = OnceLock::new();
    let s = cumock_support::settings();
    SAID.get_or_init(|| {
        for problem in &s.problems {
            eprintln!("cumock: {problem}");
        }
        if s.leaks || s.strict {
            // Safety: registering plain extern "C" functions with no captured state.
            unsafe {
                libc::atexit(at_exit);
                libc::pthread_atfork(
                    Some(leaks::before_fork),
                    Some(leaks::after_fork_parent),
                    Some(leaks::after_fork_child),
                );
            }
        }
    });
    s
}

/// Whether calls are traced or may be failed on purpose: when neither, the boundary
/// skips both hooks with this one test (most programs run with neither).
pub fn watching_calls() -> bool {
    trace::tracing_calls() || faults::injecting()
}

extern "C" fn at_exit() {
    let s = settings();
    let leaks = if s.leaks { leaks() } else { Vec::new() };
    if !leaks.is_empty() {
        eprintln!("cumock: leak report: {} leak(s)", leaks.len());
        for l in &leaks {
            let site = l.site.as_ref().map(CallSite::show).unwrap_or_default();
            eprint!("cumock:   {}\n{site}", l.what);
        }
    } else if s.leaks {
        eprintln!("cumock: leak report: nothing leaked");
    }
    let misuses = misuse::count();
    if s.strict && (misuses > 0 || !leaks.is_empty()) {
        eprintln!(
            "cumock: strict mode: {misuses} misuse(s), {} leak(s); exiting with status {STRICT_EXIT_STATUS}",
            leaks.len()
        );
        // Safety: _exit ends the process at once; we are in an atexit handler already.
        unsafe { libc::_exit(STRICT_EXIT_STATUS) };
    }
}
