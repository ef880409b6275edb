//! The trace (`CUMOCK_TRACE=FILE`): every driver call as a JSON line, in the event form
//! the pass-through recorder also writes and `cumock trace2case` reads
//! (`cumock_trace::Event`): function, arguments typed by their declared roles
//! (`cumock_trace::encode`, shared with the pass-through), out-parameters after a call
//! that succeeded, result, thread, time.

use cumock_support::host::read_program_memory;
use cumock_trace::encode::{self, Arg, Memory, TraceArg};
use cumock_trace::{Event, HandleNames};
use parking_lot::Mutex;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

static SEQ: AtomicU64 = AtomicU64::new(0);

/// The trace file, when tracing, and when the process started tracing (`t_us`).
struct Tracing {
    trace: Option<Mutex<Trace>>,
    start: Instant,
}

fn tracing() -> &'static Tracing {
    static T: OnceLock<Tracing> = OnceLock::new();
    T.get_or_init(|| {
        let trace = super::settings().open_trace().and_then(|file| match file {
            Ok(file) => Some(Mutex::new(Trace {
                file,
                names: HandleNames::default(),
            })),
            Err(e) => {
                eprintln!("cumock: {e}; not tracing");
                None
            }
        });
        Tracing {
            trace,
            start: Instant::now(),
        }
    })
}

/// Whether calls are traced.
pub fn tracing_calls() -> bool {
    tracing().trace.is_some()
}

/// The trace file, and the names given to handles so far (under one lock, so that
/// names follow the order of the lines).
struct Trace {
    file: std::fs::File,
    names: HandleNames,
}

/// One trace line for a finished call, in the event form the pass-through recorder
/// also writes and `cumock trace2case` reads (`cumock_trace::Event`).
pub fn after_call(name: &str, code: u32, args: &[&dyn TraceArg]) {
    let s = tracing();
    let Some(trace) = &s.trace else { return };
    // As many as the widest export has (cuTensorMapEncodeIm2colWide, 16): no allocation.
    let mut raw = [Arg::Unsigned(0); 16];
    let n = args.len().min(raw.len());
    for (r, a) in raw.iter_mut().zip(args) {
        *r = a.arg();
    }
    let mut t = trace.lock();
    let (args, out) = encode::encode(name, &raw[..n], code == 0, &mut t.names, &Program);
    let event = Event {
        seq: SEQ.fetch_add(1, Ordering::Relaxed),
        function: name.to_owned(),
        args,
        out,
        result: cumock_trace::result_name(code),
        thread: thread_id(),
        t_us: s.start.elapsed().as_micros() as u64,
    };
    let _ = writeln!(t.file, "{}", event.to_line());
}

/// The program's memory, as the mock sees it (it is the program's process).
struct Program;

impl Memory for Program {
    /// What the program passed may be any value: read so that a garbage pointer gets a
    /// trace, not a crash (`cumock_support::host`).
    fn read(&self, at: u64, buf: &mut [u8]) -> usize {
        read_program_memory(at, buf)
    }

    /// The call succeeded, so the mock has just written these bytes there itself, through
    /// the out-parameter its conversion checked: an ordinary read.
    fn read_written(&self, at: u64, buf: &mut [u8]) -> usize {
        // Safety: `at` is not NULL (the encoder reads no NULL out-parameter), and the
        // export wrote `buf.len()` bytes of its declared type there before returning
        // success; unaligned, as a C program's buffer may be.
        unsafe { std::ptr::copy_nonoverlapping(at as *const u8, buf.as_mut_ptr(), buf.len()) };
        buf.len()
    }
}

fn thread_id() -> i64 {
    // Safety: gettid has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) }
}
