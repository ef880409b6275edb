//! The trace: one JSON line a call, appended to `CUMOCK_PASSTHROUGH_TRACE`, in the event
//! form the mock's `CUMOCK_TRACE` also writes and `cumock trace2case` reads
//! (`cumock_trace::Event`). The recording wrappers hand over raw values; here each is
//! written by what it is (`cumock_trace::schema`): handles by name, enums by name,
//! addresses in hex. Outputs are kept only from calls that succeeded.

use cumock_trace::schema::{self, Kind};
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

/// Records one call: `args` and `out` hold the raw values the wrapper read, by name.
pub fn call(name: &str, args: Value, out: Value, result: u32) {
    let s = sink();
    // Safety: gettid takes no arguments.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) };
    let Ok(mut state) = s.state.lock() else {
        return;
    };
    let (file, names) = &mut *state;
    let (args, out) = typed(name, &args, &out, result == 0, names);
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

/// The wrapper's raw values, each written as its kind; a call the schema does not list
/// keeps its values as they are.
fn typed(
    name: &str,
    args: &Value,
    out: &Value,
    ok: bool,
    names: &mut HandleNames,
) -> (Fields, Fields) {
    let (mut a, mut o) = (Fields::new(), Fields::new());
    let Some(params) = schema::params(name) else {
        for (src, dst) in [(args, &mut a), (out, &mut o)] {
            for (k, v) in src.as_object().into_iter().flatten() {
                dst.push(k, v.clone());
            }
        }
        return (a, o);
    };
    for p in params {
        if p.out && !ok {
            continue;
        }
        let src = if p.out { out } else { args };
        // What the wrapper did not record is left out, so that a reader asking for it
        // is told it is missing.
        let Some(v) = src.get(p.name) else { continue };
        let v = value(p.kind, v, names);
        if p.out {
            o.push(p.name, v);
        } else {
            a.push(p.name, v);
        }
    }
    (a, o)
}

fn value(kind: Kind, v: &Value, names: &mut HandleNames) -> Value {
    let int = |v: &Value| v.as_i64().unwrap_or(0);
    match kind {
        Kind::Str => v.clone(),
        Kind::Prop if v.is_object() => schema::prop(
            int(&v["type"]) as i32,
            int(&v["loc_type"]) as i32,
            int(&v["loc_id"]) as i32,
            int(&v["handle_types"]) as i32,
            int(&v["compression"]) as u8,
        ),
        Kind::Location if v.is_array() => schema::location(int(&v[0]) as i32, int(&v[1]) as i32),
        Kind::AccessDescs if v.is_array() => Value::Array(
            v.as_array()
                .into_iter()
                .flatten()
                .map(|d| {
                    schema::access_desc(int(&d[0]) as i32, int(&d[1]) as i32, int(&d[2]) as i32)
                })
                .collect(),
        ),
        _ => match (v.as_u64(), v.as_i64()) {
            (Some(u), _) => schema::scalar(kind, u, names),
            (None, Some(i)) => schema::signed(kind, i, names),
            _ => v.clone(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn raw_values_become_typed_ones() {
        let mut n = HandleNames::default();
        let (a, o) = typed(
            "cuMemCreate",
            &json!({"size": 2097152, "prop": {"type": 1, "loc_type": 1, "loc_id": 0, "handle_types": 1, "compression": 0}, "flags": 0}),
            &json!({"handle": 94000000000u64}),
            true,
            &mut n,
        );
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"size":2097152,"prop":{"compression":"CU_MEM_ALLOCATION_COMP_NONE","handle_types":"CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR","location":{"id":0,"type":"CU_MEM_LOCATION_TYPE_DEVICE"},"type":"CU_MEM_ALLOCATION_TYPE_PINNED"},"flags":0}"#
        );
        assert_eq!(o.get("handle").unwrap(), "handle#1");
        let (a, _) = typed(
            "cuMemMap",
            &json!({"ptr": 140000020971520u64, "size": 2097152, "offset": 0, "handle": 94000000000u64, "flags": 0}),
            &Value::Null,
            true,
            &mut n,
        );
        assert_eq!(a.get("ptr").unwrap(), "0x7f544b84c000");
        assert_eq!(a.get("handle").unwrap(), "handle#1");
    }

    #[test]
    fn a_failed_call_keeps_no_outputs() {
        let mut n = HandleNames::default();
        let (_, o) = typed(
            "cuMemAddressReserve",
            &json!({"size": 1, "align": 0, "addr": 0, "flags": 0}),
            &json!({"ptr": 0}),
            false,
            &mut n,
        );
        assert!(o.is_empty());
    }
}
