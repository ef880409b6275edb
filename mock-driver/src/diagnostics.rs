//! Diagnostics for allocator authors, all off unless an environment variable asks:
//!
//! | variable | what it does |
//! |---|---|
//! | `CUMOCK_TRACE=FILE` | every driver call as a JSON line: function, arguments, result, thread, time |
//! | `CUMOCK_LEAKS=1` | at exit, what leaked: reservations, handles, mappings, exported fds |
//! | `CUMOCK_MISUSE=1` | a message for each call that breaks a rule, naming the call and the rule |
//! | `CUMOCK_FAULT=SPEC` | make calls fail on purpose (see `FaultPlan::parse`) |
//! | `CUMOCK_STRICT=1` | misuse and leaks make the process exit with status 86 |

use crate::model::error::{CuError, Severity};
use parking_lot::Mutex;
use std::fmt::Debug;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// The exit status of a strict run that found misuse or leaks.
pub const STRICT_EXIT_STATUS: i32 = 86;

struct Settings {
    trace: Option<Mutex<std::fs::File>>,
    leaks: bool,
    misuse: bool,
    strict: bool,
    faults: Option<Mutex<FaultPlan>>,
    start: Instant,
}

fn settings() -> &'static Settings {
    static S: OnceLock<Settings> = OnceLock::new();
    S.get_or_init(|| {
        let on = |k: &str| std::env::var(k).is_ok_and(|v| !v.is_empty() && v != "0");
        let trace = std::env::var("CUMOCK_TRACE").ok().and_then(|path| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| eprintln!("cumock: CUMOCK_TRACE={path}: {e}; not tracing"))
                .ok()
                .map(Mutex::new)
        });
        let faults =
            std::env::var("CUMOCK_FAULT")
                .ok()
                .and_then(|spec| match FaultPlan::parse(&spec) {
                    Ok(p) => Some(Mutex::new(p)),
                    Err(e) => {
                        eprintln!("cumock: CUMOCK_FAULT={spec}: {e}; no faults injected");
                        None
                    }
                });
        let s = Settings {
            trace,
            leaks: on("CUMOCK_LEAKS") || on("CUMOCK_STRICT"),
            misuse: on("CUMOCK_MISUSE") || on("CUMOCK_STRICT"),
            strict: on("CUMOCK_STRICT"),
            faults,
            start: Instant::now(),
        };
        if s.leaks || s.strict {
            // Safety: registering a plain extern "C" function with no captured state.
            unsafe { libc::atexit(at_exit) };
        }
        s
    })
}

pub fn misuse_enabled() -> bool {
    settings().misuse
}

static MISUSES: AtomicU64 = AtomicU64::new(0);
static SEQ: AtomicU64 = AtomicU64::new(0);

pub fn note_misuse(_name: &str, e: &CuError) {
    if e.severity == Severity::WouldCrash || settings().misuse {
        MISUSES.fetch_add(1, Ordering::Relaxed);
    }
}

/// A hazard that is not an error on the mock but is on a real driver: printed and
/// counted as misuse when misuse messages are on.
pub fn warn(name: &str, message: &str) {
    if settings().misuse {
        eprintln!("cumock: {name}: warning: {message}");
        MISUSES.fetch_add(1, Ordering::Relaxed);
    }
}

/// One trace line for a finished call.
pub fn after_call(name: &str, code: u32, args: &[(&str, &dyn Debug)]) {
    let s = settings();
    let Some(trace) = &s.trace else { return };
    let args: serde_json::Map<String, serde_json::Value> = args
        .iter()
        .map(|(k, v)| ((*k).to_owned(), serde_json::Value::String(format!("{v:?}"))))
        .collect();
    let line = serde_json::json!({
        "seq": SEQ.fetch_add(1, Ordering::Relaxed),
        "fn": name,
        "args": args,
        "result": cumock_abi::result_name(code).unwrap_or("?"),
        "code": code,
        "thread": thread_id(),
        "t_us": s.start.elapsed().as_micros() as u64,
    });
    let mut f = trace.lock();
    let _ = writeln!(f, "{line}");
}

fn thread_id() -> i64 {
    // Safety: gettid has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) }
}

/// The code to fail this call with, if a planned fault hits it.
pub fn injected_fault(name: &str) -> Option<u32> {
    let plan = settings().faults.as_ref()?;
    plan.lock().hit(name)
}

/// A planned failure: `FUNC:N:ERROR` fails the Nth call of FUNC (1-based);
/// `FUNC:every=K:ERROR` every Kth; `FUNC:rate=P:seed=S:ERROR` at random with probability
/// P from seed S. `*` as FUNC means any function. ERROR is a CUresult name.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultPlan {
    function: String,
    when: When,
    code: u32,
    calls: u64,
    rng: u64,
}

#[derive(Debug, Clone, PartialEq)]
enum When {
    Nth(u64),
    Every(u64),
    Rate(f64),
}

impl FaultPlan {
    pub fn parse(spec: &str) -> Result<Self, String> {
        let parts: Vec<&str> = spec.split(':').collect();
        if parts.len() < 3 {
            return Err(
                "expected FUNC:N:ERROR, FUNC:every=K:ERROR or FUNC:rate=P:seed=S:ERROR".into(),
            );
        }
        let function = parts[0].to_owned();
        let code_name = parts[parts.len() - 1];
        let code = cumock_abi::result_code(code_name)
            .ok_or_else(|| format!("{code_name} is not a CUresult name"))?;
        let mut when = None;
        let mut seed = 1u64;
        for p in &parts[1..parts.len() - 1] {
            if let Some(v) = p.strip_prefix("every=") {
                when = Some(When::Every(
                    v.parse()
                        .map_err(|_| format!("every={v} is not a number"))?,
                ));
            } else if let Some(v) = p.strip_prefix("rate=") {
                let r: f64 = v.parse().map_err(|_| format!("rate={v} is not a number"))?;
                if !(0.0..=1.0).contains(&r) {
                    return Err(format!("rate={v} is not between 0 and 1"));
                }
                when = Some(When::Rate(r));
            } else if let Some(v) = p.strip_prefix("seed=") {
                seed = v.parse().map_err(|_| format!("seed={v} is not a number"))?;
            } else {
                when = Some(When::Nth(
                    p.parse().map_err(|_| format!("{p} is not a call number"))?,
                ));
            }
        }
        let when = when.ok_or("no call number, every= or rate= given")?;
        if matches!(when, When::Nth(0) | When::Every(0)) {
            return Err("calls are counted from 1".into());
        }
        Ok(Self {
            function,
            when,
            code,
            calls: 0,
            rng: seed.max(1),
        })
    }

    pub fn hit(&mut self, name: &str) -> Option<u32> {
        if self.function != "*" && self.function != name {
            return None;
        }
        self.calls += 1;
        let fail = match self.when {
            When::Nth(n) => self.calls == n,
            When::Every(k) => self.calls.is_multiple_of(k),
            When::Rate(p) => {
                // xorshift64: reproducible from the seed, no dependency needed for it.
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                ((self.rng >> 11) as f64 / (1u64 << 53) as f64) < p
            }
        };
        fail.then_some(self.code)
    }
}

/// Exported fds, to report the ones never closed: (fd, device, inode) at export.
static EXPORTED: Mutex<Vec<(i32, u64, u64)>> = Mutex::new(Vec::new());

pub fn note_exported_fd(fd: &OwnedFd) {
    if let Some((dev, ino)) = identity(fd.as_raw_fd()) {
        EXPORTED.lock().push((fd.as_raw_fd(), dev, ino));
    }
}

fn identity(fd: i32) -> Option<(u64, u64)> {
    // Safety: fstat fills a plain struct; a closed fd makes it fail, which we report.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some((st.st_dev, st.st_ino))
}

/// What leaked, one line each; empty when nothing did.
pub fn leak_report() -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(d) = crate::model::driver() {
        let st = d.state.lock();
        for (base, r) in &st.vmm.reservations {
            match r.kind {
                crate::model::vmm::ReservationKind::Vmm => out.push(format!(
                    "reservation {base:#x}+{:#x} never freed (cuMemAddressFree)",
                    r.size
                )),
                crate::model::vmm::ReservationKind::Alloc { requested, .. } => out.push(format!(
                    "cuMemAlloc memory {base:#x} ({requested} bytes) never freed (cuMemFree)"
                )),
            }
        }
        for m in st.vmm.mappings.values() {
            let is_alloc = st
                .vmm
                .reservations
                .get(&m.reservation)
                .is_some_and(|r| r.kind != crate::model::vmm::ReservationKind::Vmm);
            if !is_alloc {
                out.push(format!(
                    "mapping {:#x}+{:#x} never unmapped (cuMemUnmap)",
                    m.start, m.size
                ));
            }
        }
        let mut handles: Vec<_> = st
            .vmm
            .allocations
            .iter()
            .filter(|(_, a)| a.user_refs > 0)
            .collect();
        handles.sort_by_key(|(id, _)| **id);
        for (id, a) in handles {
            out.push(format!(
                "allocation handle #{id} ({:#x} bytes) never released: {} reference(s) left (cuMemRelease)",
                a.size, a.user_refs
            ));
        }
    }
    for (fd, dev, ino) in EXPORTED.lock().iter() {
        if identity(*fd) == Some((*dev, *ino)) {
            out.push(format!("exported fd {fd} never closed"));
        }
    }
    out
}

extern "C" fn at_exit() {
    let s = settings();
    let leaks = if s.leaks { leak_report() } else { Vec::new() };
    if !leaks.is_empty() {
        eprintln!("cumock: leak report: {} leak(s)", leaks.len());
        for l in &leaks {
            eprintln!("cumock:   {l}");
        }
    } else if s.leaks {
        eprintln!("cumock: leak report: nothing leaked");
    }
    let misuses = MISUSES.load(Ordering::Relaxed);
    if s.strict && (misuses > 0 || !leaks.is_empty()) {
        eprintln!(
            "cumock: strict mode: {misuses} misuse(s), {} leak(s); exiting with status {STRICT_EXIT_STATUS}",
            leaks.len()
        );
        // Safety: _exit ends the process at once; we are in an atexit handler already.
        unsafe { libc::_exit(STRICT_EXIT_STATUS) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nth_call_fails() {
        let mut p = FaultPlan::parse("cuMemCreate:3:CUDA_ERROR_OUT_OF_MEMORY").unwrap();
        let hits: Vec<_> = (0..5).map(|_| p.hit("cuMemCreate")).collect();
        assert_eq!(hits, vec![None, None, Some(2), None, None]);
        assert_eq!(p.hit("cuMemMap"), None);
    }

    #[test]
    fn rate_is_reproducible_from_the_seed() {
        let run = || {
            let mut p = FaultPlan::parse("*:rate=0.25:seed=7:CUDA_ERROR_UNKNOWN").unwrap();
            (0..1000).filter(|_| p.hit("cuMemMap").is_some()).count()
        };
        let n = run();
        assert_eq!(n, run());
        assert!((150..350).contains(&n), "{n} of 1000 at rate 0.25");
    }

    #[test]
    fn bad_specs_say_why() {
        assert!(FaultPlan::parse("cuMemCreate")
            .unwrap_err()
            .contains("expected"));
        assert!(FaultPlan::parse("cuMemCreate:1:NOPE")
            .unwrap_err()
            .contains("NOPE"));
        assert!(FaultPlan::parse("cuMemCreate:0:CUDA_ERROR_UNKNOWN").is_err());
        assert!(FaultPlan::parse("x:rate=2:CUDA_ERROR_UNKNOWN").is_err());
    }
}
