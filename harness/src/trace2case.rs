//! `cumock trace2case`: a trace recorded by the pass-through driver, as a case file.
//! Addresses become names of the reservations and allocations that hold them, handles
//! and contexts become names, and each step expects the result the real driver gave.

use crate::expr::show_size;
use anyhow::{Context as _, Result};
use cumock_trace::schema::{GRANULARITY, HANDLE_TYPE, LOCATION_TYPE};
use cumock_trace::{Event, FieldError, Reader};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Copies larger than this replay with this many bytes: the data itself is not in the
/// trace, only that a copy of that range succeeded or failed.
const MAX_COPY: u64 = 64 << 20;

/// The case's names for what the trace names: regions by address, handles and contexts
/// by their names in the trace (`handle#3`), fds by number.
#[derive(Default)]
struct Names {
    regions: Vec<(String, u64, u64)>,
    handles: HashMap<String, String>,
    contexts: HashMap<String, String>,
    fds: HashMap<u64, String>,
    counts: HashMap<&'static str, usize>,
    granularity: Option<String>,
    /// Set when an address outside every known region was named.
    unknown: std::cell::Cell<bool>,
    /// Set when a handle or context the trace never saw made was named.
    foreign: std::cell::Cell<bool>,
    /// Contexts the trace retains later, with their device: a context made current
    /// before it is seen retained (the runtime gets it by other means) is retained first.
    ahead: HashMap<String, u64>,
}

impl Names {
    fn fresh(&mut self, prefix: &'static str) -> String {
        let n = self.counts.entry(prefix).or_default();
        *n += 1;
        format!("{prefix}{n}")
    }

    fn addr(&self, v: u64) -> String {
        if v == 0 {
            return "0".into();
        }
        for (name, base, size) in self.regions.iter().rev() {
            if v >= *base && v - base <= *size {
                let off = v - base;
                return if off == 0 {
                    name.clone()
                } else {
                    format!("{name}+{}", show_size(off))
                };
            }
        }
        self.unknown.set(true);
        format!("{v:#x}")
    }

    /// A handle by the case's name for it; one the trace never saw made keeps the
    /// trace's name, and its step is kept as a comment (a case cannot replay it).
    fn handle(&self, h: Option<&str>) -> String {
        match h {
            None => "0".into(),
            Some(h) => self.handles.get(h).cloned().unwrap_or_else(|| {
                self.foreign.set(true);
                h.to_owned()
            }),
        }
    }

    fn ctx(&self, c: Option<&str>) -> String {
        match c {
            None => "null".into(),
            Some(c) => self.contexts.get(c).cloned().unwrap_or_else(|| {
                self.foreign.set(true);
                c.to_owned()
            }),
        }
    }
}

/// ` device=N`, ` location=host`...: a CUmemLocation as a case's keys.
fn location(l: &Reader<'_>) -> Result<String, FieldError> {
    let id = l.int("id")?;
    Ok(match l.enumerated("type", &LOCATION_TYPE)? as i32 {
        cumock_abi::consts::CU_MEM_LOCATION_TYPE_DEVICE => format!(" device={id}"),
        cumock_abi::consts::CU_MEM_LOCATION_TYPE_HOST => " location=host".into(),
        cumock_abi::consts::CU_MEM_LOCATION_TYPE_HOST_NUMA => {
            format!(" location=host-numa device={id}")
        }
        t => format!(" location={t}"),
    })
}

fn prop_location(e: &Event) -> Result<String, FieldError> {
    match e.args().structure("prop")? {
        Some(p) => location(
            &p.structure("location")?
                .ok_or_else(|| FieldError(format!("{}: args.prop.location is NULL", e.function)))?,
        ),
        None => Ok(" prop=null".into()),
    }
}

pub fn convert(trace: &str, title: &str) -> Result<String> {
    let mut events = Vec::new();
    for (i, line) in trace.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let e = Event::from_line(line).with_context(|| format!("trace line {}", i + 1))?;
        // Each step expects the traced result: it must be one a case can name.
        if cumock_abi::result_code(&e.result).is_none() {
            anyhow::bail!(
                "trace line {}: {}: result `{}` is not a CUresult name",
                i + 1,
                e.function,
                e.result
            );
        }
        events.push((i + 1, e));
    }
    let mut n = Names::default();
    for (_, e) in &events {
        if e.function == "cuDevicePrimaryCtxRetain" && e.succeeded() {
            if let Some(c) = e.out().handle("ctx")? {
                n.ahead.entry(c.to_owned()).or_insert(e.args().int("dev")?);
            }
        }
    }
    let mut steps = Vec::new();
    let mut driver = String::new();
    let mut skipped = 0usize;
    let mut seed = 0u64;
    for (lineno, e) in &events {
        let step = match step(e, &mut n, &mut steps, &mut driver, &mut seed)
            .with_context(|| format!("trace line {lineno}"))?
        {
            Some(s) => s,
            None => {
                if e.function != "__driver" {
                    skipped += 1;
                }
                continue;
            }
        };
        // A copy to memory the trace never saw allocated (the runtime's own, or a
        // cudaMalloc) cannot be replayed: it is kept as a comment.
        let unknown = n.unknown.get()
            && matches!(
                e.function.as_str(),
                "cuMemcpyHtoD_v2"
                    | "cuMemcpyDtoH_v2"
                    | "cuMemcpyHtoDAsync_v2"
                    | "cuMemcpyDtoHAsync_v2"
                    | "cuMemcpyDtoD_v2"
                    | "cuMemcpyDtoDAsync_v2"
                    | "cuMemcpyAsync"
                    | "cuMemsetD8_v2"
                    | "cuMemsetD32_v2"
            );
        steps.push(if unknown {
            format!("# {}   (memory outside the trace)", one_line(&step))
        } else if n.foreign.get() {
            format!("# {}   (a handle made outside the trace)", one_line(&step))
        } else {
            format!("{step:<48} -> {}", e.result)
        });
    }
    if !steps.iter().any(|s| !s.starts_with('#')) {
        anyhow::bail!("the trace holds no call a case can replay");
    }
    let mut out = String::new();
    let _ = writeln!(out, "# {}", one_line(title));
    if driver.is_empty() {
        // The mock's CUMOCK_TRACE has no `__driver` line: it is the driver.
        let _ = writeln!(
            out,
            "# Traced on cumock's mock (CUMOCK_TRACE); converted by cumock trace2case."
        );
    } else {
        let _ = writeln!(out, "# Recorded with cumock's pass-through driver over {driver}; converted by cumock trace2case.");
    }
    if skipped > 0 {
        let _ = writeln!(
            out,
            "# {skipped} traced call(s) of kinds a case cannot replay were left out."
        );
    }
    for s in steps {
        out.push_str(&s);
        out.push('\n');
    }
    Ok(out)
}

/// `text` fit for a comment line: a trace's names are the program's and may hold line
/// breaks or other control characters, which would end the comment.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// One event as a step, or `None` for a call a case cannot replay.
fn step(
    e: &Event,
    n: &mut Names,
    steps: &mut Vec<String>,
    driver: &mut String,
    seed: &mut u64,
) -> Result<Option<String>, FieldError> {
    let a = e.args();
    let o = e.out();
    let ok = e.succeeded();
    n.unknown.set(false);
    n.foreign.set(false);
    Ok(Some(match e.function.as_str() {
        "__driver" => {
            *driver = a.string("path")?.to_owned();
            return Ok(None);
        }
        "cuInit" => format!("init {}", a.int("flags")?),
        "cuDevicePrimaryCtxRetain" => {
            let dev = a.int("dev")?;
            let name = match (ok, if ok { o.handle("ctx")? } else { None }) {
                (true, Some(c)) => {
                    let name = n.contexts.get(c).cloned().unwrap_or_else(|| n.fresh("ctx"));
                    n.contexts.insert(c.to_owned(), name.clone());
                    name
                }
                _ => n.fresh("ctx"),
            };
            format!("{name} = primary-retain {dev}")
        }
        "cuDevicePrimaryCtxRelease_v2" => format!("primary-release {}", a.int("dev")?),
        "cuDevicePrimaryCtxReset_v2" => format!("primary-reset {}", a.int("dev")?),
        "cuCtxCreate_v2" | "cuCtxCreate_v4" => {
            let name = n.fresh("ctx");
            if ok {
                if let Some(c) = o.handle("ctx")? {
                    n.contexts.insert(c.to_owned(), name.clone());
                }
            }
            format!(
                "{name} = ctx-create {} flags={}",
                a.int("dev")?,
                // By name since the trace follows the declaration; a number before.
                a.flags("flags", &cumock_trace::schema::CTX_FLAGS)?
            )
        }
        "cuCtxDestroy_v2" => format!("ctx-destroy {}", n.ctx(a.handle("ctx")?)),
        "cuCtxSetCurrent" => {
            let c = a.handle("ctx")?;
            match c.map(|c| (c, n.contexts.contains_key(c), n.ahead.get(c).copied())) {
                Some((c, false, Some(dev))) => {
                    let name = n.fresh("ctx");
                    n.contexts.insert(c.to_owned(), name.clone());
                    steps.push(format!(
                        "{:<48} -> CUDA_SUCCESS",
                        format!("{name} = primary-retain {dev}")
                    ));
                    format!("set-current {name}")
                }
                _ => format!("set-current {}", n.ctx(c)),
            }
        }
        "cuCtxPushCurrent_v2" => format!("push {}", n.ctx(a.handle("ctx")?)),
        "cuCtxPopCurrent_v2" => "pop".into(),
        // Streams come from the runtime, untraced: a context-wide synchronise stands in.
        "cuCtxSynchronize" | "cuStreamSynchronize" => "synchronize".into(),
        "cuMemGetAllocationGranularity" => {
            let name = match &n.granularity {
                Some(_) => n.fresh("gran"),
                None => "g".to_string(),
            };
            n.granularity.get_or_insert(name.clone());
            let opt = if a.enumerated("option", &GRANULARITY)? == 1 {
                "recommended"
            } else {
                "min"
            };
            format!("{name} = granularity {opt}{}", prop_location(e)?)
        }
        "cuMemAddressReserve" => {
            let name = n.fresh("va");
            let size = a.int("size")?;
            let mut s = format!("{name} = reserve {}", show_size(size));
            if a.int("align")? != 0 {
                let _ = write!(s, " align={}", show_size(a.int("align")?));
            }
            if a.addr("addr")? != 0 {
                let _ = write!(s, " hint={}", n.addr(a.addr("addr")?));
            }
            if ok {
                n.regions.push((name, o.addr("ptr")?, size));
            }
            s
        }
        "cuMemAddressFree" => format!(
            "address-free {} {}",
            n.addr(a.addr("ptr")?),
            show_size(a.int("size")?)
        ),
        "cuMemCreate" => {
            let name = n.fresh("h");
            if ok {
                if let Some(h) = o.handle("handle")? {
                    n.handles.insert(h.to_owned(), name.clone());
                }
            }
            let mut s = format!(
                "{name} = create {}{}",
                show_size(a.int("size")?),
                prop_location(e)?
            );
            if let Some(p) = a.structure("prop")? {
                let types = p.flags("handle_types", &HANDLE_TYPE)?;
                if types != 0 {
                    let _ = write!(s, " handle-types={types}");
                }
                let compression =
                    p.enumerated("compression", &cumock_trace::schema::COMPRESSION)?;
                if compression != 0 {
                    let _ = write!(s, " compression={compression}");
                }
            }
            s
        }
        "cuMemRelease" => format!("release {}", n.handle(a.handle("handle")?)),
        "cuMemMap" => {
            let mut s = format!(
                "map {} size={} handle={}",
                n.addr(a.addr("ptr")?),
                show_size(a.int("size")?),
                n.handle(a.handle("handle")?)
            );
            if a.int("offset")? != 0 {
                let _ = write!(s, " offset={}", show_size(a.int("offset")?));
            }
            s
        }
        "cuMemUnmap" => format!(
            "unmap {} {}",
            n.addr(a.addr("ptr")?),
            show_size(a.int("size")?)
        ),
        "cuMemSetAccess" => {
            let mut s = format!(
                "set-access {} {}",
                n.addr(a.addr("ptr")?),
                show_size(a.int("size")?)
            );
            for d in a.structures("desc")? {
                let l = d.structure("location")?.ok_or_else(|| {
                    FieldError(format!("{}: a descriptor without a location", e.function))
                })?;
                let dev = if l.enumerated("type", &LOCATION_TYPE)? as i32
                    == cumock_abi::consts::CU_MEM_LOCATION_TYPE_HOST
                {
                    "host".to_string()
                } else {
                    l.int("id")?.to_string()
                };
                let flags = d.enumerated("flags", &cumock_trace::schema::ACCESS_FLAGS)?;
                let _ = write!(s, " grant={dev}:{flags}");
            }
            s
        }
        "cuMemGetAccess" => {
            let l = a.structure("location")?;
            let dev = match &l {
                Some(l) => l.int("id")?,
                None => 0,
            };
            format!("get-access {} device={dev}", n.addr(a.addr("ptr")?))
        }
        "cuMemExportToShareableHandle" => {
            let name = n.fresh("fd");
            if ok {
                n.fds.insert(o.int("fd")?, name.clone());
            }
            format!(
                "{name} = export {} type={}",
                n.handle(a.handle("handle")?),
                a.enumerated("type", &HANDLE_TYPE)?
            )
        }
        "cuMemRetainAllocationHandle" => {
            let name = match (ok, if ok { o.handle("handle")? } else { None }) {
                (true, Some(h)) => {
                    let name = n.handles.get(h).cloned().unwrap_or_else(|| n.fresh("h"));
                    n.handles.insert(h.to_owned(), name.clone());
                    name
                }
                _ => n.fresh("h"),
            };
            format!("{name} = retain {}", n.addr(a.addr("addr")?))
        }
        "cuMemGetAllocationPropertiesFromHandle" => {
            format!("props {}", n.handle(a.handle("handle")?))
        }
        "cuMemGetInfo_v2" => "mem-info".into(),
        "cuMemAlloc_v2" => {
            let name = n.fresh("p");
            if ok {
                n.regions
                    .push((name.clone(), o.addr("ptr")?, a.int("size")?));
            }
            format!("{name} = alloc {}", show_size(a.int("size")?))
        }
        "cuMemFree_v2" => format!("mem-free {}", n.addr(a.addr("ptr")?)),
        "cuMemcpyHtoD_v2" | "cuMemcpyHtoDAsync_v2" => {
            *seed += 1;
            let len = a.int("n")?.min(MAX_COPY);
            format!(
                "write {} len={} seed={seed}",
                n.addr(a.addr("dst")?),
                show_size(len)
            )
        }
        // What a kernel wrote is not in the trace: the read is replayed, its data not
        // compared.
        "cuMemcpyDtoH_v2" | "cuMemcpyDtoHAsync_v2" => format!(
            "read {} len={} data=skip",
            n.addr(a.addr("src")?),
            show_size(a.int("n")?.min(MAX_COPY))
        ),
        "cuMemcpyDtoD_v2" | "cuMemcpyDtoDAsync_v2" | "cuMemcpyAsync" => {
            format!(
                "copy {} {} {}",
                n.addr(a.addr("dst")?),
                n.addr(a.addr("src")?),
                show_size(a.int("n")?.min(MAX_COPY))
            )
        }
        "cuMemsetD8_v2" => format!(
            "memset {} {} {}",
            n.addr(a.addr("dst")?),
            show_size(a.int("n")?.min(MAX_COPY)),
            a.int("value")?
        ),
        "cuMemsetD32_v2" => format!(
            "memset {} {} {} width=32",
            n.addr(a.addr("dst")?),
            show_size(a.int("n")?.min(MAX_COPY / 4)),
            a.int("value")?
        ),
        _ => return Ok(None),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GROW: &str = r#"{"seq":0,"fn":"__driver","args":{"path":"/usr/lib/libcuda.so.1"},"out":{},"result":"CUDA_SUCCESS","thread":1,"t_us":0}
{"seq":1,"fn":"cuInit","args":{"flags":0},"out":{},"result":"CUDA_SUCCESS","thread":1,"t_us":1}
{"seq":2,"fn":"cuMemGetAllocationGranularity","args":{"prop":{"type":"CU_MEM_ALLOCATION_TYPE_PINNED","location":{"type":"CU_MEM_LOCATION_TYPE_DEVICE","id":0},"handle_types":"CU_MEM_HANDLE_TYPE_NONE","compression":"CU_MEM_ALLOCATION_COMP_NONE"},"option":"CU_MEM_ALLOC_GRANULARITY_MINIMUM"},"out":{"granularity":2097152},"result":"CUDA_SUCCESS","thread":1,"t_us":2}
{"seq":3,"fn":"cuMemAddressReserve","args":{"size":1073741824,"align":0,"addr":"0x0","flags":0},"out":{"ptr":"0x7f54f2a00000"},"result":"CUDA_SUCCESS","thread":1,"t_us":3}
{"seq":4,"fn":"cuMemCreate","args":{"size":20971520,"prop":{"type":"CU_MEM_ALLOCATION_TYPE_PINNED","location":{"type":"CU_MEM_LOCATION_TYPE_DEVICE","id":0},"handle_types":"CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR","compression":"CU_MEM_ALLOCATION_COMP_NONE"},"flags":0},"out":{"handle":"handle#1"},"result":"CUDA_SUCCESS","thread":1,"t_us":4}
{"seq":5,"fn":"cuMemMap","args":{"ptr":"0x7f54f3e00000","size":20971520,"offset":0,"handle":"handle#1","flags":0},"out":{},"result":"CUDA_SUCCESS","thread":1,"t_us":5}
{"seq":6,"fn":"cuMemSetAccess","args":{"ptr":"0x7f54f3e00000","size":20971520,"desc":[{"location":{"type":"CU_MEM_LOCATION_TYPE_DEVICE","id":0},"flags":"CU_MEM_ACCESS_FLAGS_PROT_READWRITE"}],"count":1},"out":{},"result":"CUDA_SUCCESS","thread":1,"t_us":6}
{"seq":7,"fn":"cuMemcpyHtoD_v2","args":{"dst":"0x15b3","src":"0x1","n":16},"out":{},"result":"CUDA_SUCCESS","thread":1,"t_us":7}
{"seq":8,"fn":"cuMemUnmap","args":{"ptr":"0x7f54f3e00000","size":20971520},"out":{},"result":"CUDA_SUCCESS","thread":1,"t_us":8}
{"seq":9,"fn":"cuMemRelease","args":{"handle":"handle#1"},"out":{},"result":"CUDA_SUCCESS","thread":1,"t_us":9}
{"seq":10,"fn":"cuLaunchKernel","args":{},"out":{},"result":"CUDA_SUCCESS","thread":1,"t_us":10}
{"seq":11,"fn":"cuCtxSetCurrent","args":{"ctx":"ctx#7"},"out":{},"result":"CUDA_SUCCESS","thread":1,"t_us":11}
"#;

    #[test]
    fn a_grow_sequence_becomes_named_steps_with_expectations() {
        let trace = GROW;
        let case = convert(trace, "test").unwrap();
        assert!(case.contains("over /usr/lib/libcuda.so.1"), "{case}");
        assert!(case.contains("g = granularity min device=0"), "{case}");
        assert!(case.contains("va1 = reserve 1GiB"), "{case}");
        assert!(
            case.contains("h1 = create 20MiB device=0 handle-types=1"),
            "{case}"
        );
        assert!(
            case.contains("map va1+20MiB size=20MiB handle=h1"),
            "{case}"
        );
        assert!(
            case.contains("set-access va1+20MiB 20MiB grant=0:3"),
            "{case}"
        );
        assert!(
            case.contains("# write 0x15b3 len=16 seed=1   (memory outside the trace)"),
            "{case}"
        );
        assert!(
            case.contains("release h1") && case.contains("-> CUDA_SUCCESS"),
            "{case}"
        );
        assert!(case.contains("1 traced call(s)"), "{case}");
        assert!(
            case.contains("# set-current ctx#7   (a handle made outside the trace)"),
            "{case}"
        );
        // And the result is a case the parser takes.
        crate::case::parse(std::path::Path::new("t.case"), &case).unwrap();
    }

    /// A context's flags by name (the trace since it follows the declaration) or as a
    /// number (traces written before) make the same step.
    #[test]
    fn context_flags_by_name_or_number_make_the_same_step() {
        for flags in [r#""CU_CTX_SCHED_BLOCKING_SYNC|CU_CTX_MAP_HOST""#, "12"] {
            let trace = format!(
                r#"{{"seq":0,"fn":"cuCtxCreate_v2","args":{{"flags":{flags},"dev":0}},"out":{{"ctx":"ctx#1"}},"result":"CUDA_SUCCESS","thread":1,"t_us":0}}"#
            );
            let case = convert(&trace, "t").unwrap();
            assert!(case.contains("ctx1 = ctx-create 0 flags=12"), "{case}");
        }
    }

    #[test]
    fn a_field_the_trace_lacks_is_an_error_naming_the_call_and_line() {
        let trace = r#"{"seq":0,"fn":"cuMemMap","args":{"ptr":"0x1000","size":4096,"handle":"handle#1","flags":0},"out":{},"result":"CUDA_SUCCESS","thread":1,"t_us":0}"#;
        let e = format!("{:#}", convert(trace, "t").unwrap_err());
        assert!(e.contains("trace line 1"), "{e}");
        assert!(e.contains("cuMemMap: args.offset is missing"), "{e}");
        let e = format!("{:#}", convert("{\"fn\":\"cuInit\"}", "t").unwrap_err());
        assert!(
            e.contains("trace line 1") && e.contains("missing field"),
            "{e}"
        );
    }

    /// A handle name holding a line break (a damaged trace: `"h\ndle#1"`) stays within its
    /// comment line (found by the fuzz test below).
    #[test]
    fn a_foreign_name_with_a_line_break_stays_in_its_comment() {
        let trace = GROW.replacen(
            "\"offset\":0,\"handle\":\"handle#1\"",
            "\"offset\":0,\"handle\":\"h\\ndle#1\"",
            1,
        );
        assert_ne!(trace, GROW, "the edit applies");
        let case = convert(&trace, "t\nitle").unwrap();
        let parsed = crate::case::parse(std::path::Path::new("t.case"), &case);
        assert!(parsed.is_ok(), "{case}\n{parsed:?}");
        assert!(case.contains("(a handle made outside the trace)"), "{case}");
    }

    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
            /// A trace changed anywhere converts or is refused with a reason; never a panic.
            #[test]
            fn a_damaged_trace_is_refused_not_a_crash(
                edits in prop::collection::vec((any::<usize>(), any::<u8>()), 1..8)
            ) {
                let mut b = GROW.as_bytes().to_vec();
                for (at, byte) in edits {
                    let at = at % b.len();
                    b[at] = byte;
                }
                let text = String::from_utf8_lossy(&b);
                match convert(&text, "fuzz") {
                    // Refused with the line at fault, or as a whole.
                    Err(e) => {
                        let e = format!("{e:#}");
                        prop_assert!(e.contains("trace line ") || e.contains("no call a case can replay"), "{e}");
                    }
                    // What converts is a case the parser takes.
                    Ok(case) => {
                        let parsed = crate::case::parse(std::path::Path::new("t.case"), &case);
                        prop_assert!(parsed.is_ok(), "{case}\n{parsed:?}");
                    }
                }
            }
        }
    }
}
