//! The runtime's diagnostics, off unless asked for, with the driver's variables:
//!
//! | variable | what it does |
//! |---|---|
//! | `CUMOCK_TRACE=FILE` | every runtime call as a JSON line (`"layer":"runtime"`), appended to the driver's file |
//! | `CUMOCK_FAULT=SPEC` | `cudaMalloc:3:cudaErrorMemoryAllocation` fails the 3rd cudaMalloc; `FUNC:every=K:ERR`; several specs separated by `,` |
//! | `CUMOCK_LEAKS=1` | at exit: cudaMalloc/MallocHost/MallocAsync memory, streams, events not freed |
//! | `CUMOCK_MISUSE=1` | a message for each failing call, saying why |
//!
//! Fault specs whose function is not a runtime one (`cu...`) are the driver's, ignored here.

use crate::error::{self, CudaError};
use parking_lot::Mutex;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

struct Settings {
    trace: Option<Mutex<std::fs::File>>,
    faults: Mutex<Vec<Fault>>,
    misuse: bool,
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
                .map_err(|e| {
                    eprintln!("cumock: CUMOCK_TRACE={path}: {e}; the runtime does not trace")
                })
                .ok()
                .map(Mutex::new)
        });
        let faults = std::env::var("CUMOCK_FAULT")
            .map(|spec| match parse_faults(&spec) {
                Ok(f) => f,
                Err(e) => {
                    eprintln!("cumock: CUMOCK_FAULT={spec}: {e}; no runtime faults injected");
                    Vec::new()
                }
            })
            .unwrap_or_default();
        if on("CUMOCK_LEAKS") || on("CUMOCK_STRICT") {
            // Safety: registering a plain extern "C" function with no captured state.
            unsafe { libc::atexit(at_exit) };
        }
        Settings {
            trace,
            faults: Mutex::new(faults),
            misuse: on("CUMOCK_MISUSE") || on("CUMOCK_STRICT"),
            start: Instant::now(),
        }
    })
}

/// Reads the variables now, so that the leak report is registered before the program's
/// own exit handlers.
pub fn init() {
    settings();
}

pub fn misuse_enabled() -> bool {
    settings().misuse
}

static SEQ: AtomicU64 = AtomicU64::new(0);

pub fn trace(name: &str, code: CudaError, args: &[(&str, &dyn std::fmt::Debug)]) {
    let s = settings();
    let Some(file) = &s.trace else { return };
    let args: serde_json::Map<String, serde_json::Value> = args
        .iter()
        .map(|(k, v)| ((*k).to_owned(), serde_json::Value::String(format!("{v:?}"))))
        .collect();
    let line = serde_json::json!({
        "layer": "runtime",
        "seq": SEQ.fetch_add(1, Ordering::Relaxed),
        "fn": name,
        "args": args,
        "result": error::name(code).unwrap_or("?"),
        "code": code,
        // Safety: gettid has no arguments and cannot fail.
        "thread": unsafe { libc::syscall(libc::SYS_gettid) },
        "t_us": s.start.elapsed().as_micros() as u64,
    });
    // One write per line: the driver appends to the same file, and O_APPEND keeps whole
    // writes apart.
    let _ = file.lock().write_all(format!("{line}\n").as_bytes());
}

/// One planned failure: the Nth call of a function, or every Kth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    function: String,
    nth: Option<u64>,
    every: Option<u64>,
    code: CudaError,
    calls: u64,
}

/// `FUNC:N:ERR` or `FUNC:every=K:ERR`, several separated by commas; specs for driver
/// functions (`cu...` but not `cuda...`) are skipped.
pub fn parse_faults(spec: &str) -> Result<Vec<Fault>, String> {
    let mut out = Vec::new();
    for one in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let parts: Vec<&str> = one.split(':').collect();
        let is_runtime = parts[0].starts_with("cuda") || parts[0].starts_with("__cuda");
        if !is_runtime {
            continue;
        }
        let [function, when, err] = parts[..] else {
            return Err(format!(
                "{one}: expected FUNC:N:ERROR or FUNC:every=K:ERROR"
            ));
        };
        let code = error::code(err).ok_or_else(|| format!("{err} is not a cudaError_t name"))?;
        let number = |v: &str| -> Result<u64, String> {
            match v.parse::<u64>() {
                Ok(0) | Err(_) => Err(format!("{v} is not a call number (counted from 1)")),
                Ok(n) => Ok(n),
            }
        };
        let (nth, every) = match when.strip_prefix("every=") {
            Some(k) => (None, Some(number(k)?)),
            None => (Some(number(when)?), None),
        };
        out.push(Fault {
            function: function.to_owned(),
            nth,
            every,
            code,
            calls: 0,
        });
    }
    Ok(out)
}

impl Fault {
    fn hit(&mut self, name: &str) -> Option<CudaError> {
        if self.function != name {
            return None;
        }
        self.calls += 1;
        let fail = self.nth == Some(self.calls)
            || self.every.is_some_and(|k| self.calls.is_multiple_of(k));
        fail.then_some(self.code)
    }
}

pub fn injected_fault(name: &str) -> Option<CudaError> {
    let mut faults = settings().faults.lock();
    faults.iter_mut().find_map(|f| f.hit(name))
}

extern "C" fn at_exit() {
    let leaks = crate::runtime::leak_report();
    if leaks.is_empty() {
        return;
    }
    eprintln!(
        "cumock: the CUDA runtime's leak report, {} at exit:",
        leaks.len()
    );
    for l in &leaks {
        eprintln!("cumock:   {l}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nth_call_fails_and_driver_specs_are_left_to_the_driver() {
        let mut f = parse_faults(
            "cuMemCreate:1:CUDA_ERROR_OUT_OF_MEMORY, cudaMalloc:3:cudaErrorMemoryAllocation",
        )
        .unwrap();
        assert_eq!(f.len(), 1);
        let hits: Vec<_> = (0..4).map(|_| f[0].hit("cudaMalloc")).collect();
        assert_eq!(hits, [None, None, Some(2), None]);
        assert_eq!(f[0].hit("cudaFree"), None);
    }

    #[test]
    fn every_kth_call_fails() {
        let mut f = parse_faults("cudaStreamCreate:every=2:cudaErrorNotReady").unwrap();
        let hits: Vec<_> = (0..4)
            .map(|_| f[0].hit("cudaStreamCreate").is_some())
            .collect();
        assert_eq!(hits, [false, true, false, true]);
    }

    #[test]
    fn bad_specs_say_why() {
        assert!(parse_faults("cudaMalloc:0:cudaErrorMemoryAllocation")
            .unwrap_err()
            .contains("counted from 1"));
        assert!(parse_faults("cudaMalloc:1:CUDA_ERROR_OUT_OF_MEMORY")
            .unwrap_err()
            .contains("not a cudaError_t"));
        assert!(parse_faults("cudaMalloc:1")
            .unwrap_err()
            .contains("expected"));
    }
}
