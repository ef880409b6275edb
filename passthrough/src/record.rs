//! The trace: one JSON line a call, appended to `CUMOCK_PASSTHROUGH_TRACE`, in the event
//! form the mock's `CUMOCK_TRACE` also writes and `cumock trace2case` reads
//! (`cumock_trace::Event`). The recording wrappers hand over the arguments as they came;
//! each is written by its declared role (`cumock_trace::encode`, as the mock writes it):
//! handles by name, enums by name, addresses in hex. Outputs are kept only from calls
//! that succeeded.

use cumock_support::host::read_program_memory;
use cumock_trace::encode::{self, Arg, Memory};
use cumock_trace::{Event, Fields, HandleNames, Value};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

struct Sink {
    /// The file, and the names given to handles so far (under one lock, so that names
    /// follow the order of the lines).
    state: Mutex<(Option<std::fs::File>, HandleNames)>,
    start: Instant,
}

fn sink() -> &'static Sink {
    static S: OnceLock<Sink> = OnceLock::new();
    S.get_or_init(|| {
        let path = cumock_support::settings()
            .passthrough_trace
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| format!("cumock-trace-{}.jsonl", std::process::id()));
        // The unit tests' binary runs this library's initialiser too: it writes no trace.
        let file = (!cfg!(test))
            .then(|| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .map_err(|e| {
                        eprintln!("cumock passthrough: cannot write the trace {path}: {e}")
                    })
                    .ok()
            })
            .flatten();
        Sink {
            state: Mutex::new((file, HandleNames::default())),
            start: Instant::now(),
        }
    })
}

static SEQ: AtomicU64 = AtomicU64::new(0);

/// Records one call of a declared export, its arguments in declared order.
pub fn call(name: &str, args: &[Arg<'_>], result: u32) {
    write(name, result, |names| {
        encode::encode(name, args, result == 0, names, &Program)
    });
}

/// The trace's first line: which driver the calls went to.
pub fn driver(path: &str) {
    write("__driver", 0, |_| {
        let mut args = Fields::new();
        args.push("path", Value::from(path));
        (args, Fields::new())
    });
}

fn write(name: &str, result: u32, fields: impl FnOnce(&mut HandleNames) -> (Fields, Fields)) {
    let s = sink();
    // Safety: gettid takes no arguments.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) };
    let Ok(mut state) = s.state.lock() else {
        return;
    };
    let (file, names) = &mut *state;
    let (args, out) = fields(names);
    let event = Event {
        seq: SEQ.fetch_add(1, Ordering::Relaxed),
        function: name.to_owned(),
        args,
        out,
        result: cumock_trace::result_name(result),
        thread: tid,
        t_us: s.start.elapsed().as_micros() as u64,
    };
    if let Some(f) = file.as_mut() {
        let _ = writeln!(f, "{}", event.to_line());
    }
}

/// The program's memory: the pass-through runs in the program's process.
struct Program;

impl Memory for Program {
    /// What the program passed may be any value: read so that a garbage pointer gets a
    /// trace, not a crash.
    fn read(&self, at: u64, buf: &mut [u8]) -> usize {
        read_program_memory(at, buf)
    }

    /// The real driver returned success, having written the out-parameter's declared
    /// type there.
    fn read_written(&self, at: u64, buf: &mut [u8]) -> usize {
        // Safety: not NULL (the encoder reads no NULL out-parameter), and the driver
        // wrote `buf.len()` bytes there before returning success, as cuda.h says.
        unsafe { std::ptr::copy_nonoverlapping(at as *const u8, buf.as_mut_ptr(), buf.len()) };
        buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cumock_abi::{CUmemAllocationProp, CUmemLocation};
    use cumock_trace::encode::TraceArg;

    #[test]
    fn arguments_become_typed_values() {
        let mut n = HandleNames::default();
        let mut prop = CUmemAllocationProp {
            type_: 1,
            requested_handle_types: 1,
            location: CUmemLocation { type_: 1, id: 0 },
            ..Default::default()
        };
        prop.alloc_flags.compression_type = 0;
        let handle: u64 = 94000000000;
        let (size, flags) = (2097152usize, 0u64);
        let (h, p) = (&handle as *const u64, &prop as *const CUmemAllocationProp);
        let args = [h.arg(), size.arg(), p.arg(), flags.arg()];
        let (a, o) = encode::encode("cuMemCreate", &args, true, &mut n, &Program);
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"size":2097152,"prop":{"compression":"CU_MEM_ALLOCATION_COMP_NONE","handle_types":"CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR","location":{"id":0,"type":"CU_MEM_LOCATION_TYPE_DEVICE"},"type":"CU_MEM_ALLOCATION_TYPE_PINNED"},"flags":0}"#
        );
        assert_eq!(o.get("handle").unwrap(), "handle#1");
        let (ptr, offset) = (140000020971520u64, 0usize);
        let args = [
            ptr.arg(),
            size.arg(),
            offset.arg(),
            handle.arg(),
            flags.arg(),
        ];
        let (a, _) = encode::encode("cuMemMap", &args, true, &mut n, &Program);
        assert_eq!(a.get("ptr").unwrap(), "0x7f544b84c000");
        assert_eq!(a.get("handle").unwrap(), "handle#1");
    }

    #[test]
    fn a_failed_call_keeps_no_outputs() {
        let mut n = HandleNames::default();
        let ptr = 0u64;
        let (size, align, addr, flags) = (1usize, 0usize, 0u64, 0u64);
        let p = &ptr as *const u64;
        let args = [p.arg(), size.arg(), align.arg(), addr.arg(), flags.arg()];
        let (_, o) = encode::encode("cuMemAddressReserve", &args, false, &mut n, &Program);
        assert!(o.is_empty());
    }
}
