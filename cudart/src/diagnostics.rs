//! The runtime's diagnostics, off unless asked for, with the driver's variables:
//!
//! | variable | what it does |
//! |---|---|
//! | `CUMOCK_TRACE=FILE` | every runtime call as a JSON line (`"layer":"runtime"`), appended to the driver's file |
//! | `CUMOCK_FAULT=SPEC` | `cudaMalloc:3:cudaErrorMemoryAllocation` fails the 3rd cudaMalloc; `FUNC:every=K:ERR`; `FUNC:rate=P:seed=S:ERR`; several specs separated by `,` (the grammar: `cumock_support::faults`) |
//! | `CUMOCK_LEAKS=1` | at exit: cudaMalloc/MallocHost/MallocAsync memory, streams, events not freed |
//! | `CUMOCK_MISUSE=1` | a message for each failing call, saying why |
//!
//! Fault specs whose function is not a runtime one (`cu...`) are the driver's, ignored here.
//! The variables are read once, by `cumock_support::settings`, as the driver reads them.

use crate::error::{self, CudaError};
use crate::kernel::Dim3;
use crate::texture::{Extent, PitchedPtr};
use cumock_support::{FaultPlans, Layer};
use cumock_trace::encode::TraceArg;
use parking_lot::Mutex;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// The runtime's share of the settings (`cumock_support::settings`, read once): the
/// trace file, the planned failures of runtime functions, misuse messages.
struct Diagnostics {
    trace: Option<Mutex<std::fs::File>>,
    faults: Mutex<FaultPlans<CudaError>>,
    misuse: bool,
    start: Instant,
}

fn settings() -> &'static Diagnostics {
    static S: OnceLock<Diagnostics> = OnceLock::new();
    S.get_or_init(|| {
        let s = cumock_support::settings();
        let trace = s.open_trace().and_then(|file| {
            file.map_err(|e| eprintln!("cumock: {e}; the runtime does not trace"))
                .ok()
                .map(Mutex::new)
        });
        let faults = s
            .faults
            .plans(Layer::Runtime, error::code, "cudaError_t")
            .unwrap_or_else(|e| {
                eprintln!("cumock: CUMOCK_FAULT: {e}; no runtime faults injected");
                FaultPlans::default()
            });
        if s.leaks {
            // Safety: registering a plain extern "C" function with no captured state.
            unsafe { libc::atexit(at_exit) };
        }
        Diagnostics {
            trace,
            faults: Mutex::new(faults),
            misuse: s.misuse,
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

/// How a runtime export's argument is written in the trace: by its type, as the driver's
/// lines write theirs (numbers, addresses in hex, `null`), never as Debug text.
pub trait RuntimeArg {
    fn traced(&self) -> serde_json::Value;
}

impl<T: TraceArg> RuntimeArg for T {
    fn traced(&self) -> serde_json::Value {
        self.arg().plain()
    }
}

impl RuntimeArg for Dim3 {
    fn traced(&self) -> serde_json::Value {
        serde_json::json!([self.x, self.y, self.z])
    }
}

impl RuntimeArg for PitchedPtr {
    fn traced(&self) -> serde_json::Value {
        serde_json::json!({
            "ptr": format!("{:#x}", self.ptr as usize),
            "pitch": self.pitch,
            "xsize": self.xsize,
            "ysize": self.ysize,
        })
    }
}

impl RuntimeArg for Extent {
    fn traced(&self) -> serde_json::Value {
        serde_json::json!({"width": self.width, "height": self.height, "depth": self.depth})
    }
}

pub fn trace(name: &str, code: CudaError, args: &[(&str, &dyn RuntimeArg)]) {
    let s = settings();
    let Some(file) = &s.trace else { return };
    let args: serde_json::Map<String, serde_json::Value> = args
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.traced()))
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

pub fn injected_fault(name: &str) -> Option<CudaError> {
    settings().faults.lock().hit(name)
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
