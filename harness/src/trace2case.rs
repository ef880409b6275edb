//! `cumock trace2case`: a trace recorded by the pass-through driver, as a case file.
//! Addresses become names of the reservations and allocations that hold them, handles
//! and contexts become names, and each step expects the result the real driver gave.

use crate::expr::show_size;
use anyhow::{Context as _, Result};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;

/// Copies larger than this replay with this many bytes: the data itself is not in the
/// trace, only that a copy of that range succeeded or failed.
const MAX_COPY: u64 = 64 << 20;

#[derive(Default)]
struct Names {
    regions: Vec<(String, u64, u64)>,
    handles: HashMap<u64, String>,
    contexts: HashMap<u64, String>,
    fds: HashMap<u64, String>,
    counts: HashMap<&'static str, usize>,
    granularity: Option<String>,
    /// Set when an address outside every known region was named.
    unknown: std::cell::Cell<bool>,
    /// Context values the trace retains later, with their device: a context made current
    /// before it is seen retained (the runtime gets it by other means) is retained first.
    ahead: HashMap<u64, u64>,
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

    fn handle(&self, v: u64) -> String {
        self.handles
            .get(&v)
            .cloned()
            .unwrap_or_else(|| format!("{v:#x}"))
    }

    fn ctx(&self, v: u64) -> String {
        if v == 0 {
            return "null".into();
        }
        self.contexts
            .get(&v)
            .cloned()
            .unwrap_or_else(|| format!("{v:#x}"))
    }
}

fn u(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_i64().map(|x| x as u64))
        .unwrap_or(0)
}

fn location(prop: &Value) -> String {
    let mut s = String::new();
    match u(&prop["loc_type"]) {
        1 => {
            let _ = write!(s, " device={}", u(&prop["loc_id"]));
        }
        2 => s.push_str(" location=host"),
        3 => {
            let _ = write!(s, " location=host-numa device={}", u(&prop["loc_id"]));
        }
        t => {
            let _ = write!(s, " location={t}");
        }
    }
    s
}

pub fn convert(trace: &str, title: &str) -> Result<String> {
    let mut n = Names::default();
    let mut steps = Vec::new();
    let mut driver = String::new();
    let mut skipped = 0usize;
    let mut seed = 0u64;
    for line in trace.lines() {
        if let Ok(e) = serde_json::from_str::<Value>(line) {
            if e["fn"] == "cuDevicePrimaryCtxRetain" {
                n.ahead
                    .entry(u(&e["out"]["ctx"]))
                    .or_insert(u(&e["args"]["dev"]));
            }
        }
    }
    for (i, line) in trace.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let e: Value =
            serde_json::from_str(line).with_context(|| format!("trace line {}", i + 1))?;
        let f = e["fn"].as_str().unwrap_or("");
        let a = &e["args"];
        let o = &e["out"];
        let ok = e["result"] == "CUDA_SUCCESS";
        n.unknown.set(false);
        let step = match f {
            "__driver" => {
                driver = a["path"].as_str().unwrap_or("").to_owned();
                continue;
            }
            "cuInit" => format!("init {}", u(&a["flags"])),
            "cuDevicePrimaryCtxRetain" => {
                let c = u(&o["ctx"]);
                let name = n
                    .contexts
                    .get(&c)
                    .cloned()
                    .unwrap_or_else(|| n.fresh("ctx"));
                n.contexts.insert(c, name.clone());
                format!("{name} = primary-retain {}", u(&a["dev"]))
            }
            "cuDevicePrimaryCtxRelease_v2" => format!("primary-release {}", u(&a["dev"])),
            "cuDevicePrimaryCtxReset_v2" => format!("primary-reset {}", u(&a["dev"])),
            "cuCtxCreate_v2" | "cuCtxCreate_v4" => {
                let name = n.fresh("ctx");
                n.contexts.insert(u(&o["ctx"]), name.clone());
                format!(
                    "{name} = ctx-create {} flags={}",
                    u(&a["dev"]),
                    u(&a["flags"])
                )
            }
            "cuCtxDestroy_v2" => format!("ctx-destroy {}", n.ctx(u(&a["ctx"]))),
            "cuCtxSetCurrent" => {
                let c = u(&a["ctx"]);
                match (n.contexts.contains_key(&c), n.ahead.get(&c).copied()) {
                    (false, Some(dev)) if c != 0 => {
                        let name = n.fresh("ctx");
                        n.contexts.insert(c, name.clone());
                        steps.push(format!(
                            "{:<48} -> CUDA_SUCCESS",
                            format!("{name} = primary-retain {dev}")
                        ));
                        format!("set-current {name}")
                    }
                    _ => format!("set-current {}", n.ctx(c)),
                }
            }
            "cuCtxPushCurrent_v2" => format!("push {}", n.ctx(u(&a["ctx"]))),
            "cuCtxPopCurrent_v2" => "pop".into(),
            // Streams come from the runtime, untraced: a context-wide synchronise stands in.
            "cuCtxSynchronize" | "cuStreamSynchronize" => "synchronize".into(),
            "cuMemGetAllocationGranularity" => {
                let name = match &n.granularity {
                    Some(_) => n.fresh("gran"),
                    None => "g".to_string(),
                };
                n.granularity.get_or_insert(name.clone());
                let opt = if u(&a["option"]) == 1 {
                    "recommended"
                } else {
                    "min"
                };
                format!("{name} = granularity {opt}{}", location(&a["prop"]))
            }
            "cuMemAddressReserve" => {
                let name = n.fresh("va");
                let size = u(&a["size"]);
                let mut s = format!("{name} = reserve {}", show_size(size));
                if u(&a["align"]) != 0 {
                    let _ = write!(s, " align={}", show_size(u(&a["align"])));
                }
                if u(&a["addr"]) != 0 {
                    let _ = write!(s, " hint={}", n.addr(u(&a["addr"])));
                }
                if ok {
                    n.regions.push((name, u(&o["ptr"]), size));
                }
                s
            }
            "cuMemAddressFree" => format!(
                "address-free {} {}",
                n.addr(u(&a["ptr"])),
                show_size(u(&a["size"]))
            ),
            "cuMemCreate" => {
                let name = n.fresh("h");
                if ok {
                    n.handles.insert(u(&o["handle"]), name.clone());
                }
                let p = &a["prop"];
                let mut s = format!(
                    "{name} = create {}{}",
                    show_size(u(&a["size"])),
                    location(p)
                );
                if u(&p["handle_types"]) != 0 {
                    let _ = write!(s, " handle-types={}", u(&p["handle_types"]));
                }
                if u(&p["compression"]) != 0 {
                    let _ = write!(s, " compression={}", u(&p["compression"]));
                }
                s
            }
            "cuMemRelease" => format!("release {}", n.handle(u(&a["handle"]))),
            "cuMemMap" => {
                let mut s = format!(
                    "map {} size={} handle={}",
                    n.addr(u(&a["ptr"])),
                    show_size(u(&a["size"])),
                    n.handle(u(&a["handle"]))
                );
                if u(&a["offset"]) != 0 {
                    let _ = write!(s, " offset={}", show_size(u(&a["offset"])));
                }
                s
            }
            "cuMemUnmap" => format!(
                "unmap {} {}",
                n.addr(u(&a["ptr"])),
                show_size(u(&a["size"]))
            ),
            "cuMemSetAccess" => {
                let mut s = format!(
                    "set-access {} {}",
                    n.addr(u(&a["ptr"])),
                    show_size(u(&a["size"]))
                );
                for d in a["desc"].as_array().into_iter().flatten() {
                    let dev = if u(&d[0]) == 2 {
                        "host".to_string()
                    } else {
                        u(&d[1]).to_string()
                    };
                    let _ = write!(s, " grant={dev}:{}", u(&d[2]));
                }
                s
            }
            "cuMemGetAccess" => format!(
                "get-access {} device={}",
                n.addr(u(&a["ptr"])),
                u(&a["location"][1])
            ),
            "cuMemExportToShareableHandle" => {
                let name = n.fresh("fd");
                n.fds.insert(u(&o["fd"]), name.clone());
                format!(
                    "{name} = export {} type={}",
                    n.handle(u(&a["handle"])),
                    u(&a["type"])
                )
            }
            "cuMemRetainAllocationHandle" => {
                let h = u(&o["handle"]);
                let name = n.handles.get(&h).cloned().unwrap_or_else(|| n.fresh("h"));
                n.handles.insert(h, name.clone());
                format!("{name} = retain {}", n.addr(u(&a["addr"])))
            }
            "cuMemGetAllocationPropertiesFromHandle" => {
                format!("props {}", n.handle(u(&a["handle"])))
            }
            "cuMemGetInfo_v2" => "mem-info".into(),
            "cuMemAlloc_v2" => {
                let name = n.fresh("p");
                if ok {
                    n.regions.push((name.clone(), u(&o["ptr"]), u(&a["size"])));
                }
                format!("{name} = alloc {}", show_size(u(&a["size"])))
            }
            "cuMemFree_v2" => format!("mem-free {}", n.addr(u(&a["ptr"]))),
            "cuMemcpyHtoD_v2" | "cuMemcpyHtoDAsync_v2" => {
                seed += 1;
                let len = u(&a["n"]).min(MAX_COPY);
                format!(
                    "write {} len={} seed={seed}",
                    n.addr(u(&a["dst"])),
                    show_size(len)
                )
            }
            // What a kernel wrote is not in the trace: the read is replayed, its data not
            // compared.
            "cuMemcpyDtoH_v2" | "cuMemcpyDtoHAsync_v2" => format!(
                "read {} len={} data=skip",
                n.addr(u(&a["src"])),
                show_size(u(&a["n"]).min(MAX_COPY))
            ),
            "cuMemcpyDtoD_v2" | "cuMemcpyDtoDAsync_v2" | "cuMemcpyAsync" => {
                format!(
                    "copy {} {} {}",
                    n.addr(u(&a["dst"])),
                    n.addr(u(&a["src"])),
                    show_size(u(&a["n"]).min(MAX_COPY))
                )
            }
            "cuMemsetD8_v2" => format!(
                "memset {} {} {}",
                n.addr(u(&a["dst"])),
                show_size(u(&a["n"]).min(MAX_COPY)),
                u(&a["value"])
            ),
            "cuMemsetD32_v2" => format!(
                "memset {} {} {} width=32",
                n.addr(u(&a["dst"])),
                show_size(u(&a["n"]).min(MAX_COPY / 4)),
                u(&a["value"])
            ),
            _ => {
                skipped += 1;
                continue;
            }
        };
        // A copy to memory the trace never saw allocated (the runtime's own, or a
        // cudaMalloc) cannot be replayed: it is kept as a comment.
        let unknown = n.unknown.get()
            && matches!(
                f,
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
        let result = e["result"].as_str().unwrap_or("?");
        steps.push(if unknown {
            format!("# {step}   (memory outside the trace)")
        } else {
            format!("{step:<48} -> {result}")
        });
    }
    let mut out = String::new();
    let _ = writeln!(out, "# {title}");
    let _ = writeln!(out, "# Recorded with cumock's pass-through driver over {driver}; converted by cumock trace2case.");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grow_sequence_becomes_named_steps_with_expectations() {
        let trace = r#"{"fn":"__driver","args":{"path":"/usr/lib/libcuda.so.1"},"out":null,"result":"CUDA_SUCCESS"}
{"fn":"cuInit","args":{"flags":0},"out":null,"result":"CUDA_SUCCESS"}
{"fn":"cuMemGetAllocationGranularity","args":{"prop":{"type":1,"loc_type":1,"loc_id":0,"handle_types":0,"compression":0},"option":0},"out":{"granularity":2097152},"result":"CUDA_SUCCESS"}
{"fn":"cuMemAddressReserve","args":{"size":1073741824,"align":0,"addr":0,"flags":0},"out":{"ptr":140000000000000},"result":"CUDA_SUCCESS"}
{"fn":"cuMemCreate","args":{"size":20971520,"prop":{"type":1,"loc_type":1,"loc_id":0,"handle_types":1,"compression":0},"flags":0},"out":{"handle":94000000000},"result":"CUDA_SUCCESS"}
{"fn":"cuMemMap","args":{"ptr":140000020971520,"size":20971520,"offset":0,"handle":94000000000,"flags":0},"out":null,"result":"CUDA_SUCCESS"}
{"fn":"cuMemSetAccess","args":{"ptr":140000020971520,"size":20971520,"desc":[[1,0,3]],"count":1},"out":null,"result":"CUDA_SUCCESS"}
{"fn":"cuMemcpyHtoD_v2","args":{"dst":5555,"n":16,"src":1},"out":null,"result":"CUDA_SUCCESS"}
{"fn":"cuMemUnmap","args":{"ptr":140000020971520,"size":20971520},"out":null,"result":"CUDA_SUCCESS"}
{"fn":"cuMemRelease","args":{"handle":94000000000},"out":null,"result":"CUDA_SUCCESS"}
{"fn":"cuLaunchKernel","args":{},"out":null,"result":"CUDA_SUCCESS"}
"#;
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
        // And the result is a case the parser takes.
        crate::case::parse(std::path::Path::new("t.case"), &case).unwrap();
    }
}
