//! The trace (`CUMOCK_TRACE=FILE`): every driver call as a JSON line, in the event form
//! the pass-through recorder also writes and `cumock trace2case` reads
//! (`cumock_trace::Event`): function, arguments typed by `cumock_trace::schema`,
//! out-parameters after a call that succeeded, result, thread, time.

use cumock_abi::{CUmemAccessDesc, CUmemAllocationProp, CUmemLocation};
use cumock_support::host::{read_program_memory, read_program_value};
use cumock_trace::schema::{self, Kind, Param};
use cumock_trace::{Event, Fields, HandleNames, Value};
use parking_lot::Mutex;
use std::fmt::Debug;
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
pub fn after_call(name: &str, code: u32, args: &[(&str, &dyn Debug)]) {
    let s = tracing();
    let Some(trace) = &s.trace else { return };
    let raw: Vec<(&str, Raw)> = args
        .iter()
        .map(|(k, v)| (*k, Raw::parse(&format!("{v:?}"))))
        .collect();
    let mut t = trace.lock();
    let (args, out) = traced_args(name, code == 0, &raw, &mut t.names);
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

/// An argument as the boundary passed it: an integer, or a pointer's address (raw
/// pointers print in hex, integers in decimal).
#[derive(Debug, Clone, PartialEq)]
enum Raw {
    Unsigned(u64),
    Signed(i64),
    Pointer(u64),
    Other(String),
}

impl Raw {
    fn parse(s: &str) -> Self {
        if let Some(h) = s.strip_prefix("0x") {
            if let Ok(p) = u64::from_str_radix(h, 16) {
                return Raw::Pointer(p);
            }
        }
        if let Ok(u) = s.parse() {
            return Raw::Unsigned(u);
        }
        if let Ok(i) = s.parse() {
            return Raw::Signed(i);
        }
        Raw::Other(s.to_owned())
    }

    fn bits(&self) -> u64 {
        match self {
            Raw::Unsigned(u) | Raw::Pointer(u) => *u,
            Raw::Signed(i) => *i as u64,
            Raw::Other(_) => 0,
        }
    }
}

/// The arguments typed by `cumock_trace::schema`, matched to the export's parameters by
/// position; an export the schema does not list (or lists with another arity) keeps its
/// own parameter names, integers as numbers and pointers as addresses.
fn traced_args(
    name: &str,
    ok: bool,
    raw: &[(&str, Raw)],
    names: &mut HandleNames,
) -> (Fields, Fields) {
    let (mut args, mut out) = (Fields::new(), Fields::new());
    let params = schema::params(name).filter(|p| p.len() == raw.len());
    let Some(params) = params else {
        for (k, r) in raw {
            args.push(
                k,
                match r {
                    Raw::Unsigned(u) => Value::from(*u),
                    Raw::Signed(i) => Value::from(*i),
                    Raw::Pointer(0) => Value::Null,
                    Raw::Pointer(p) => cumock_trace::address(*p),
                    Raw::Other(s) => Value::from(s.as_str()),
                },
            );
        }
        return (args, out);
    };
    let count = params
        .iter()
        .zip(raw)
        .find(|(p, _)| p.name == "count")
        .map(|(_, (_, r))| r.bits());
    for (p, (_, r)) in params.iter().zip(raw) {
        if p.out {
            // Only a call that succeeded has written through its out-pointers.
            if let (true, Raw::Pointer(at)) = (ok, r) {
                if let Some(v) = read_out(p, *at, names) {
                    out.push(p.name, v);
                }
            }
            continue;
        }
        let v = match (p.kind, r) {
            (Kind::Str | Kind::Prop | Kind::Location | Kind::AccessDescs, Raw::Pointer(at))
                if *at != 0 =>
            {
                read_in(p.kind, *at, count.unwrap_or(0))
                    .unwrap_or_else(|| cumock_trace::address(*at))
            }
            (kind, Raw::Signed(i)) => schema::signed(kind, *i, names),
            (kind, r) => schema::scalar(kind, r.bits(), names),
        };
        args.push(p.name, v);
    }
    (args, out)
}

/// A value the export wrote through an out-pointer.
fn read_out(p: &Param, at: u64, names: &mut HandleNames) -> Option<Value> {
    Some(match p.kind {
        Kind::Str | Kind::Prop => read_in(p.kind, at, 0)?,
        kind if p.bytes == 4 => schema::signed(kind, i64::from(peek_value::<i32>(at)?), names),
        kind => schema::scalar(kind, peek_value::<u64>(at)?, names),
    })
}

/// A string or struct the program passed (`count` of them for descriptors); `None`
/// where its memory cannot be read.
fn read_in(kind: Kind, at: u64, count: u64) -> Option<Value> {
    Some(match kind {
        Kind::Str => {
            let bytes = peek(at, 512)?;
            let end = bytes.iter().position(|b| *b == 0)?;
            Value::from(String::from_utf8_lossy(&bytes[..end]).into_owned())
        }
        Kind::Prop => {
            let p = peek_value::<CUmemAllocationProp>(at)?;
            schema::prop(
                p.type_,
                p.location.type_,
                p.location.id,
                p.requested_handle_types,
                p.alloc_flags.compression_type,
            )
        }
        Kind::Location => {
            let l = peek_value::<CUmemLocation>(at)?;
            schema::location(l.type_, l.id)
        }
        Kind::AccessDescs if count <= 64 => {
            let size = std::mem::size_of::<CUmemAccessDesc>() as u64;
            Value::Array(
                (0..count)
                    .map(|i| {
                        let d = peek_value::<CUmemAccessDesc>(at + i * size)?;
                        Some(schema::access_desc(
                            d.location.type_,
                            d.location.id,
                            d.flags,
                        ))
                    })
                    .collect::<Option<_>>()?,
            )
        }
        _ => return None,
    })
}

/// Up to `len` bytes of the program's memory at `at`, as many as are readable: a program
/// passing garbage gets a trace, not a crash (`cumock_support::host`).
fn peek(at: u64, len: usize) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; len];
    let n = read_program_memory(at, &mut buf);
    (n > 0).then(|| {
        buf.truncate(n);
        buf
    })
}

fn peek_value<T: Copy>(at: u64) -> Option<T> {
    read_program_value(at)
}

fn thread_id() -> i64 {
    // Safety: gettid has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_arguments_by_kind_and_outputs_after_success() {
        let mut names = HandleNames::default();
        let handle: u64 = 0xabc;
        let raw = [
            ("handle", Raw::Pointer(&handle as *const u64 as u64)),
            ("size", Raw::Unsigned(2 << 20)),
            ("prop", Raw::Pointer(0)),
            ("flags", Raw::Unsigned(0)),
        ];
        let (a, o) = traced_args("cuMemCreate", true, &raw, &mut names);
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"size":2097152,"prop":null,"flags":0}"#
        );
        assert_eq!(o.get("handle").unwrap(), "handle#1");
        let (_, o) = traced_args("cuMemCreate", false, &raw, &mut names);
        assert!(o.is_empty(), "no outputs from a failed call");
        let raw = [
            ("ptr", Raw::parse("140737488355328")),
            ("size", Raw::parse("4096")),
            ("offset", Raw::parse("0")),
            ("handle", Raw::parse("2748")),
            ("flags", Raw::parse("0")),
        ];
        let (a, _) = traced_args("cuMemMap", true, &raw, &mut names);
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"ptr":"0x800000000000","size":4096,"offset":0,"handle":"handle#1","flags":0}"#
        );
        // A `const char *` symbol is a string; the status it wrote, a number.
        let symbol = c"cuMemMap";
        let status: i32 = 1;
        let raw = [
            ("symbol", Raw::Pointer(symbol.as_ptr() as u64)),
            ("pfn", Raw::Pointer(0)),
            ("cudaVersion", Raw::Unsigned(13000)),
            ("flags", Raw::Unsigned(0)),
            ("symbolStatus", Raw::Pointer(&status as *const i32 as u64)),
        ];
        let (a, o) = traced_args("cuGetProcAddress_v2", true, &raw, &mut names);
        assert_eq!(a.get("symbol").unwrap(), "cuMemMap");
        assert_eq!(o.get("status").unwrap(), 1);
        // An export the schema does not list keeps its own names; pointers as addresses.
        let raw = [("symbol", Raw::Pointer(symbol.as_ptr() as u64))];
        let (a, _) = traced_args("cuModuleGetFunction", true, &raw, &mut names);
        assert!(a.get("symbol").unwrap().as_str().unwrap().starts_with("0x"));
        assert_eq!(Raw::parse("-1"), Raw::Signed(-1));
        // A pointer that cannot be read is traced as its address, never followed blindly.
        let raw = [
            ("handle", Raw::Pointer(0)),
            ("size", Raw::Unsigned(1)),
            ("prop", Raw::Pointer(0x10)),
            ("flags", Raw::Unsigned(0)),
        ];
        let (a, _) = traced_args("cuMemCreate", false, &raw, &mut names);
        assert_eq!(a.get("prop").unwrap(), "0x10");
    }
}
