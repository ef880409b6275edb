//! The trace: one JSON line a call, appended to `CUMOCK_PASSTHROUGH_TRACE`.

use serde_json::{json, Value};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

struct Sink {
    file: Mutex<Option<std::fs::File>>,
    start: Instant,
}

fn sink() -> &'static Sink {
    static S: OnceLock<Sink> = OnceLock::new();
    S.get_or_init(|| {
        let path = std::env::var("CUMOCK_PASSTHROUGH_TRACE")
            .unwrap_or_else(|_| format!("cumock-trace-{}.jsonl", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| eprintln!("cumock passthrough: cannot write the trace {path}: {e}"))
            .ok();
        Sink {
            file: Mutex::new(file),
            start: Instant::now(),
        }
    })
}

static SEQ: AtomicU64 = AtomicU64::new(0);

pub fn call(name: &str, args: Value, out: Value, result: u32) {
    let s = sink();
    // Safety: gettid takes no arguments.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) };
    let line = json!({
        "seq": SEQ.fetch_add(1, Ordering::Relaxed),
        "fn": name,
        "args": args,
        "out": out,
        "result": cumock_abi::result_name(result).unwrap_or("?"),
        "thread": tid,
        "t_us": s.start.elapsed().as_micros() as u64,
    });
    if let Ok(mut f) = s.file.lock() {
        if let Some(f) = f.as_mut() {
            let _ = writeln!(f, "{line}");
        }
    }
}
