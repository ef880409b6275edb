//! Runs the steps of one case against a loaded driver, in this process. The runner
//! starts one process a case (`cumock __case`), so a driver that crashes or hangs takes
//! only that case down. Each step's record is written as a JSON line as soon as it is
//! known, so a crash is placed at the step that caused it.

use crate::case::{Case, Step};
use crate::driver::{symbol_name, Api};
use crate::expr::{eval, show_size};
use crate::transcript::{normalize, StepRecord};
use anyhow::{anyhow, bail, Context as _, Result};
use cumock_abi::consts::*;
use cumock_abi::{CUmemAccessDesc, CUmemAllocationProp, CUmemLocation};
use std::collections::HashMap;
use std::ffi::{c_void, CStr, CString};
use std::io::Write;

/// What a name in a case stands for; it decides how the value is normalised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int,
    Address,
    Handle,
    Fd,
    Context,
    Stream,
    Event,
}

pub struct Exec<'a> {
    api: &'a Api,
    vars: HashMap<String, u64>,
    kinds: HashMap<String, Kind>,
    regions: Vec<(String, u64, u64)>,
    handles: Vec<(u64, String)>,
    contexts: Vec<(u64, String)>,
    free_baseline: Option<u64>,
    case_path: std::path::PathBuf,
    process: Option<String>,
    sink: &'a mut dyn FnMut(&StepRecord),
}

/// The outcome of one step: a result name and outputs.
struct Out {
    result: String,
    outputs: Vec<(String, String)>,
}

fn code_name(code: u32) -> String {
    cumock_abi::result_name(code)
        .map(str::to_owned)
        .unwrap_or_else(|| format!("CUresult({code})"))
}

/// Calls an entry point; one the driver does not export makes the step's result
/// `not-exported: NAME` (a fact about that driver), and the case goes on.
macro_rules! call {
    ($api:expr, $name:ident($($arg:expr),* $(,)?)) => {{
        let Some(f) = $api.$name else {
            return Ok(Out { result: concat!("not-exported: ", stringify!($name)).to_owned(), outputs: Vec::new() });
        };
        // Safety: the arguments match the signature in cuda.h; pointers are to live locals.
        unsafe { f($($arg),*) }
    }};
}

impl<'a> Exec<'a> {
    pub fn new(api: &'a Api, case: &Case, sink: &'a mut dyn FnMut(&StepRecord)) -> Self {
        Self {
            api,
            vars: HashMap::new(),
            kinds: HashMap::new(),
            regions: Vec::new(),
            handles: Vec::new(),
            contexts: Vec::new(),
            free_baseline: None,
            case_path: case.path.clone(),
            process: None,
            sink,
        }
    }

    /// Runs steps in order. `Err` is a failure of the case or the harness, not of the
    /// driver: a driver's error code is data in the record.
    pub fn run(&mut self, steps: &[Step]) -> Result<()> {
        for step in steps {
            if let Some(child) = &step.child {
                self.run_child(step.line, child)?;
                continue;
            }
            let out = self.step(step).with_context(|| {
                format!(
                    "{}:{}: `{}`",
                    self.case_path.display(),
                    step.line,
                    step.source
                )
            })?;
            let rec = StepRecord {
                line: step.line,
                step: step.source.clone(),
                result: out.result,
                outputs: out.outputs,
                process: self.process.clone(),
            };
            (self.sink)(&rec);
        }
        Ok(())
    }

    fn bind(&mut self, step: &Step, value: u64, kind: Kind) {
        // A new object may reuse the value of one that is gone (the real driver's handles
        // and contexts are heap pointers): the value then takes the new object's name.
        if matches!(step.op.as_str(), "create" | "ctx-create") && step.bind.is_some() {
            self.handles.retain(|(v, _)| *v != value);
            self.contexts.retain(|(v, _)| *v != value);
        }
        if let Some(name) = &step.bind {
            self.vars.insert(name.clone(), value);
            self.kinds.insert(name.clone(), kind);
            match kind {
                Kind::Handle if value != 0 && !self.handles.iter().any(|(v, _)| *v == value) => {
                    self.handles.push((value, name.clone()))
                }
                Kind::Context if value != 0 && !self.contexts.iter().any(|(v, _)| *v == value) => {
                    self.contexts.push((value, name.clone()))
                }
                _ => {}
            }
        }
    }

    fn region(&mut self, step: &Step, base: u64, size: u64) {
        if let (Some(name), true) = (&step.bind, base != 0) {
            self.regions.push((name.clone(), base, size));
        }
    }

    fn val(&self, step: &Step, i: usize) -> Result<u64> {
        let a = step
            .positional(i)
            .ok_or_else(|| anyhow!("argument {} is missing", i + 1))?;
        eval(&a.value, &self.vars).map_err(|e| anyhow!("column {}: {e}", a.col))
    }

    fn key(&self, step: &Step, k: &str) -> Result<Option<u64>> {
        match step.key(k) {
            Some(a) => Ok(Some(
                eval(&a.value, &self.vars).map_err(|e| anyhow!("column {}: {e}", a.col))?,
            )),
            None => Ok(None),
        }
    }

    fn key_or(&self, step: &Step, k: &str, default: u64) -> Result<u64> {
        Ok(self.key(step, k)?.unwrap_or(default))
    }

    fn word<'s>(&self, step: &'s Step, i: usize) -> Result<&'s str> {
        Ok(&step
            .positional(i)
            .ok_or_else(|| anyhow!("argument {} is missing", i + 1))?
            .value)
    }

    fn ptr_arg(&self, step: &Step, i: usize) -> Result<*mut c_void> {
        let w = self.word(step, i)?;
        if w == "null" {
            return Ok(std::ptr::null_mut());
        }
        Ok(self.val(step, i)? as *mut c_void)
    }

    fn addr(&self, v: u64) -> String {
        normalize::address(v, &self.regions)
    }

    fn ctx_name(&self, v: u64) -> String {
        if v == 0 {
            return "null".into();
        }
        self.contexts
            .iter()
            .find(|(c, _)| *c == v)
            .map(|(_, n)| n.clone())
            .unwrap_or_else(|| "<unnamed context>".into())
    }

    fn step(&mut self, step: &Step) -> Result<Out> {
        let api = self.api;
        let ok = |code: u32| Out {
            result: code_name(code),
            outputs: Vec::new(),
        };
        let with = |code: u32, outputs: Vec<(&str, String)>| Out {
            result: code_name(code),
            outputs: if code == 0 {
                outputs
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect()
            } else {
                Vec::new()
            },
        };
        let harness = |outputs: Vec<(&str, String)>| Out {
            result: "ok".into(),
            outputs: outputs
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        };
        Ok(match step.op.as_str() {
            "init" => ok(call!(
                api,
                cuInit(self.key_or(step, "flags", 0).and_then(|f| {
                    if step.positional(0).is_some() {
                        self.val(step, 0)
                    } else {
                        Ok(f)
                    }
                })? as u32)
            )),
            "driver-version" => {
                let mut v = 0;
                let r = call!(api, cuDriverGetVersion(&mut v));
                with(r, vec![("version", v.to_string())])
            }
            "device-count" => {
                let mut n = 0;
                let r = call!(api, cuDeviceGetCount(&mut n));
                with(r, vec![("count", n.to_string())])
            }
            "device" => {
                let mut d = -1;
                let r = call!(api, cuDeviceGet(&mut d, self.val(step, 0)? as i32));
                self.bind(step, d as u64, Kind::Int);
                with(r, vec![("device", d.to_string())])
            }
            "device-name" => {
                let mut buf = [0 as std::ffi::c_char; 256];
                let r = call!(
                    api,
                    cuDeviceGetName(buf.as_mut_ptr(), 256, self.val(step, 0)? as i32)
                );
                // Safety: the driver NUL-terminates within the 256 bytes it was given.
                let name = unsafe { CStr::from_ptr(buf.as_ptr()) }
                    .to_string_lossy()
                    .into_owned();
                with(r, vec![("name", format!("{name:?}"))])
            }
            "attribute" => {
                let name = self.word(step, 0)?;
                let full = if name.starts_with("CU_DEVICE_ATTRIBUTE_") {
                    name.to_owned()
                } else {
                    format!("CU_DEVICE_ATTRIBUTE_{name}")
                };
                let code = match cumock_abi::device_attribute_code(&full) {
                    Some(c) => c,
                    None => eval(name, &self.vars)
                        .map_err(|_| anyhow!("`{name}` is not a device attribute"))?
                        as i32,
                };
                let mut v = 0;
                let r = call!(
                    api,
                    cuDeviceGetAttribute(&mut v, code, self.val(step, 1)? as i32)
                );
                with(r, vec![("value", v.to_string())])
            }
            "total-mem" => {
                let mut v = 0usize;
                let r = call!(api, cuDeviceTotalMem_v2(&mut v, self.val(step, 0)? as i32));
                with(r, vec![("bytes", v.to_string())])
            }
            "uuid" => {
                let mut u = [0u8; 16];
                let r = call!(
                    api,
                    cuDeviceGetUuid_v2(
                        std::ptr::from_mut(&mut u).cast(),
                        self.val(step, 0)? as i32
                    )
                );
                with(
                    r,
                    vec![(
                        "uuid",
                        if u.iter().any(|b| *b != 0) {
                            "<uuid>".into()
                        } else {
                            "0".into()
                        },
                    )],
                )
            }
            "pci-bus-id" => {
                let mut buf = [0 as std::ffi::c_char; 64];
                let r = call!(
                    api,
                    cuDeviceGetPCIBusId(buf.as_mut_ptr(), 64, self.val(step, 0)? as i32)
                );
                // Safety: NUL-terminated within the buffer, as above.
                let id = unsafe { CStr::from_ptr(buf.as_ptr()) }
                    .to_string_lossy()
                    .into_owned();
                let shape_ok = pci_bus_id_shape(&id);
                with(
                    r,
                    vec![(
                        "bus-id",
                        if shape_ok {
                            "<pci-bus-id>".into()
                        } else {
                            format!("{id:?}")
                        },
                    )],
                )
            }
            "can-access-peer" => {
                let mut v = -1;
                let r = call!(
                    api,
                    cuDeviceCanAccessPeer(
                        &mut v,
                        self.val(step, 0)? as i32,
                        self.val(step, 1)? as i32
                    )
                );
                with(r, vec![("value", v.to_string())])
            }
            "primary-retain" => {
                let mut c: *mut c_void = std::ptr::null_mut();
                let r = call!(
                    api,
                    cuDevicePrimaryCtxRetain(&mut c, self.val(step, 0)? as i32)
                );
                self.bind(step, c as u64, Kind::Context);
                with(r, vec![("ctx", self.ctx_name(c as u64))])
            }
            "primary-release" => ok(call!(
                api,
                cuDevicePrimaryCtxRelease_v2(self.val(step, 0)? as i32)
            )),
            "primary-reset" => ok(call!(
                api,
                cuDevicePrimaryCtxReset_v2(self.val(step, 0)? as i32)
            )),
            "primary-state" => {
                let (mut f, mut a) = (0u32, 0i32);
                let r = call!(
                    api,
                    cuDevicePrimaryCtxGetState(self.val(step, 0)? as i32, &mut f, &mut a)
                );
                with(r, vec![("flags", f.to_string()), ("active", a.to_string())])
            }
            "primary-set-flags" => ok(call!(
                api,
                cuDevicePrimaryCtxSetFlags_v2(self.val(step, 0)? as i32, self.val(step, 1)? as u32)
            )),
            "ctx-create" => {
                let mut c: *mut c_void = std::ptr::null_mut();
                // The value may be a destroyed context's, reused: it is named anew below.
                let flags = self.key_or(step, "flags", 0)? as u32;
                let dev = self.val(step, 0)? as i32;
                let r = match self.key_or(step, "version", 4)? {
                    2 => call!(api, cuCtxCreate_v2(&mut c, flags, dev)),
                    _ => call!(
                        api,
                        cuCtxCreate_v4(&mut c, std::ptr::null_mut(), flags, dev)
                    ),
                };
                self.bind(step, c as u64, Kind::Context);
                with(r, vec![("ctx", self.ctx_name(c as u64))])
            }
            "ctx-destroy" => ok(call!(api, cuCtxDestroy_v2(self.ptr_arg(step, 0)?))),
            "set-current" => ok(call!(api, cuCtxSetCurrent(self.ptr_arg(step, 0)?))),
            "get-current" => {
                let mut c: *mut c_void = std::ptr::null_mut();
                let r = call!(api, cuCtxGetCurrent(&mut c));
                with(r, vec![("ctx", self.ctx_name(c as u64))])
            }
            "push" => ok(call!(api, cuCtxPushCurrent_v2(self.ptr_arg(step, 0)?))),
            "pop" => {
                let mut c: *mut c_void = std::ptr::null_mut();
                let r = call!(api, cuCtxPopCurrent_v2(&mut c));
                with(r, vec![("ctx", self.ctx_name(c as u64))])
            }
            "ctx-device" => {
                let mut d = -1;
                let r = call!(api, cuCtxGetDevice(&mut d));
                with(r, vec![("device", d.to_string())])
            }
            "synchronize" => ok(call!(api, cuCtxSynchronize())),
            "enable-peer" => ok(call!(
                api,
                cuCtxEnablePeerAccess(
                    self.ptr_arg(step, 0)?,
                    self.key_or(step, "flags", 0)? as u32
                )
            )),
            "disable-peer" => ok(call!(api, cuCtxDisablePeerAccess(self.ptr_arg(step, 0)?))),
            "granularity" => {
                let option = match self.word(step, 0)? {
                    "min" | "minimum" => 0,
                    "recommended" | "rec" => 1,
                    _ => self.val(step, 0)? as i32,
                };
                let prop = self.prop(step)?;
                let mut g = 0usize;
                let pp = if step.key("prop").is_some_and(|a| a.value == "null") {
                    std::ptr::null()
                } else {
                    &prop as *const _
                };
                let r = call!(api, cuMemGetAllocationGranularity(&mut g, pp, option));
                self.bind(step, g as u64, Kind::Int);
                with(r, vec![("value", show_size(g as u64))])
            }
            "reserve" => {
                let size = self.val(step, 0)?;
                let align = self.key_or(step, "align", 0)?;
                let mut p = 0u64;
                let pp = if step.key("out").is_some_and(|a| a.value == "null") {
                    std::ptr::null_mut()
                } else {
                    &mut p as *mut u64
                };
                let r = call!(
                    api,
                    cuMemAddressReserve(
                        pp,
                        size as usize,
                        align as usize,
                        self.key_or(step, "hint", 0)?,
                        self.key_or(step, "flags", 0)?
                    )
                );
                self.bind(step, p, Kind::Address);
                self.region(step, p, size);
                let want = align.max(2 << 20);
                with(
                    r,
                    vec![(
                        "aligned",
                        if p.is_multiple_of(want) {
                            "yes".into()
                        } else {
                            format!("no ({})", show_size(p % want))
                        },
                    )],
                )
            }
            "address-free" => ok(call!(
                api,
                cuMemAddressFree(self.val(step, 0)?, self.val(step, 1)? as usize)
            )),
            "create" => {
                let prop = self.prop(step)?;
                let mut h = 0u64;
                let pp = if step.key("prop").is_some_and(|a| a.value == "null") {
                    std::ptr::null()
                } else {
                    &prop as *const _
                };
                let hp = if step.key("out").is_some_and(|a| a.value == "null") {
                    std::ptr::null_mut()
                } else {
                    &mut h as *mut u64
                };
                let r = call!(
                    api,
                    cuMemCreate(
                        hp,
                        self.val(step, 0)? as usize,
                        pp,
                        self.key_or(step, "flags", 0)?
                    )
                );
                self.bind(step, h, Kind::Handle);
                ok(r)
            }
            "release" => ok(call!(api, cuMemRelease(self.val(step, 0)?))),
            "map" => {
                let size = self
                    .key(step, "size")?
                    .ok_or_else(|| anyhow!("map needs size="))?;
                let handle = self
                    .key(step, "handle")?
                    .ok_or_else(|| anyhow!("map needs handle="))?;
                ok(call!(
                    api,
                    cuMemMap(
                        self.val(step, 0)?,
                        size as usize,
                        self.key_or(step, "offset", 0)? as usize,
                        handle,
                        self.key_or(step, "flags", 0)?
                    )
                ))
            }
            "unmap" => ok(call!(
                api,
                cuMemUnmap(self.val(step, 0)?, self.val(step, 1)? as usize)
            )),
            "set-access" => {
                let mut descs = Vec::new();
                for g in step.keys("grant") {
                    descs.push(
                        self.grant(&g.value)
                            .map_err(|e| anyhow!("column {}: {e}", g.col))?,
                    );
                }
                let count = self.key(step, "count")?.unwrap_or(descs.len() as u64) as usize;
                let dp = if step.key("desc").is_some_and(|a| a.value == "null") || descs.is_empty()
                {
                    std::ptr::null()
                } else {
                    descs.as_ptr()
                };
                if count > descs.len() && !dp.is_null() {
                    bail!(
                        "count={count} is more than the {} grant(s) given",
                        descs.len()
                    );
                }
                ok(call!(
                    api,
                    cuMemSetAccess(self.val(step, 0)?, self.val(step, 1)? as usize, dp, count)
                ))
            }
            "get-access" => {
                let loc = CUmemLocation {
                    type_: self.location_type(step)?,
                    id: self.key_or(step, "device", 0)? as i32,
                };
                let mut f = 0u64;
                let fp = if step.key("out").is_some_and(|a| a.value == "null") {
                    std::ptr::null_mut()
                } else {
                    &mut f as *mut u64
                };
                let r = call!(api, cuMemGetAccess(fp, &loc, self.val(step, 0)?));
                with(r, vec![("flags", f.to_string())])
            }
            "export" => {
                let mut fd: i32 = -1;
                let ty =
                    self.handle_type(step.key("type").map(|a| a.value.as_str()).unwrap_or("fd"))?;
                let fp = if step.key("out").is_some_and(|a| a.value == "null") {
                    std::ptr::null_mut()
                } else {
                    (&mut fd as *mut i32).cast()
                };
                let r = call!(
                    api,
                    cuMemExportToShareableHandle(
                        fp,
                        self.val(step, 0)?,
                        ty,
                        self.key_or(step, "flags", 0)?
                    )
                );
                self.bind(step, fd as i64 as u64, Kind::Fd);
                with(r, vec![("fd", normalize::fd(fd as i64))])
            }
            "import" => {
                let mut h = 0u64;
                let ty =
                    self.handle_type(step.key("type").map(|a| a.value.as_str()).unwrap_or("fd"))?;
                let fd = self.val(step, 0)? as i64 as i32;
                let r = call!(
                    api,
                    cuMemImportFromShareableHandle(&mut h, fd as isize as *mut c_void, ty)
                );
                let shown = normalize::handle(h, &mut self.handles.clone());
                self.bind(step, h, Kind::Handle);
                with(r, vec![("handle", shown)])
            }
            "retain" => {
                let mut h = 0u64;
                let r = call!(
                    api,
                    cuMemRetainAllocationHandle(&mut h, self.ptr_arg(step, 0)?)
                );
                let shown = normalize::handle(h, &mut self.handles.clone());
                self.bind(step, h, Kind::Handle);
                with(r, vec![("handle", shown)])
            }
            "props" => {
                let mut p = CUmemAllocationProp::default();
                let pp = if step.key("out").is_some_and(|a| a.value == "null") {
                    std::ptr::null_mut()
                } else {
                    &mut p as *mut _
                };
                let r = call!(
                    api,
                    cuMemGetAllocationPropertiesFromHandle(pp, self.val(step, 0)?)
                );
                with(
                    r,
                    vec![
                        ("type", p.type_.to_string()),
                        (
                            "location",
                            format!("{}:{}", p.location.type_, p.location.id),
                        ),
                        ("handle-types", p.requested_handle_types.to_string()),
                        ("compression", p.alloc_flags.compression_type.to_string()),
                        ("rdma", p.alloc_flags.gpu_direct_rdma_capable.to_string()),
                    ],
                )
            }
            "mem-info" => {
                let (mut f, mut t) = (0usize, 0usize);
                let r = call!(api, cuMemGetInfo_v2(&mut f, &mut t));
                let free = if r == 0 {
                    normalize::free_memory(f as u64, &mut self.free_baseline)
                } else {
                    String::new()
                };
                with(r, vec![("free", free), ("total", t.to_string())])
            }
            "alloc" => {
                let size = self.val(step, 0)?;
                let mut p = 0u64;
                let r = call!(api, cuMemAlloc_v2(&mut p, size as usize));
                self.bind(step, p, Kind::Address);
                self.region(step, p, size);
                ok(r)
            }
            "mem-free" => ok(call!(api, cuMemFree_v2(self.val(step, 0)?))),
            "write" => self.write(step)?,
            "read" => self.read(step)?,
            "copy" => {
                let (dst, src, n) = (
                    self.val(step, 0)?,
                    self.val(step, 1)?,
                    self.val(step, 2)? as usize,
                );
                let unified = self.key_or(step, "unified", 0)? == 1;
                if unified {
                    // cuMemcpy takes host addresses too: a case may only name its own
                    // regions, so that no case file makes a driver touch memory outside.
                    for (what, a) in [("destination", dst), ("source", src)] {
                        if !self.regions.iter().any(|(_, b, sz)| a >= *b && a - b < *sz) {
                            bail!("the {what} {a:#x} of a unified copy is not in a region of this case");
                        }
                    }
                }
                let r = match (self.stream(step)?, unified) {
                    (_, true) => call!(api, cuMemcpy(dst, src, n)),
                    (Some(s), false) => call!(api, cuMemcpyDtoDAsync_v2(dst, src, n, s)),
                    (None, false) => call!(api, cuMemcpyDtoD_v2(dst, src, n)),
                };
                ok(r)
            }
            "memset" => {
                let (dst, count, value) = (
                    self.val(step, 0)?,
                    self.val(step, 1)? as usize,
                    self.val(step, 2)?,
                );
                let stream = self.stream(step)?;
                let r = match (self.key_or(step, "width", 8)?, stream) {
                    (8, None) => call!(api, cuMemsetD8_v2(dst, value as u8, count)),
                    (16, None) => call!(api, cuMemsetD16_v2(dst, value as u16, count)),
                    (32, None) => call!(api, cuMemsetD32_v2(dst, value as u32, count)),
                    (8, Some(s)) => call!(api, cuMemsetD8Async(dst, value as u8, count, s)),
                    (16, Some(s)) => call!(api, cuMemsetD16Async(dst, value as u16, count, s)),
                    (32, Some(s)) => call!(api, cuMemsetD32Async(dst, value as u32, count, s)),
                    (w, _) => bail!("width={w} is not 8, 16 or 32"),
                };
                ok(r)
            }
            "range" => {
                let (mut b, mut s) = (0u64, 0usize);
                let r = call!(
                    api,
                    cuMemGetAddressRange_v2(&mut b, &mut s, self.val(step, 0)?)
                );
                with(
                    r,
                    vec![("base", self.addr(b)), ("size", show_size(s as u64))],
                )
            }
            "pointer-attribute" => {
                let name = self.word(step, 0)?;
                let attr = pointer_attribute(name)?;
                let mut v = [0u64; 2];
                let r = call!(
                    api,
                    cuPointerGetAttribute(v.as_mut_ptr().cast(), attr, self.val(step, 1)?)
                );
                let shown = self.show_attribute(attr, v[0]);
                with(r, vec![("value", shown)])
            }
            "pointer-attributes" => {
                let names: Vec<&str> = self.word(step, 0)?.split(',').collect();
                let attrs: Vec<i32> = names
                    .iter()
                    .map(|n| pointer_attribute(n))
                    .collect::<Result<_>>()?;
                let mut vals = vec![[0u64; 2]; attrs.len()];
                let mut ptrs: Vec<*mut c_void> =
                    vals.iter_mut().map(|v| v.as_mut_ptr().cast()).collect();
                let r = call!(
                    api,
                    cuPointerGetAttributes(
                        attrs.len() as u32,
                        attrs.as_ptr().cast_mut(),
                        ptrs.as_mut_ptr(),
                        self.val(step, 1)?
                    )
                );
                let outs: Vec<(String, String)> = names
                    .iter()
                    .zip(&attrs)
                    .zip(&vals)
                    .map(|((n, a), v)| (n.to_ascii_lowercase(), self.show_attribute(*a, v[0])))
                    .collect();
                Out {
                    result: code_name(r),
                    outputs: if r == 0 { outs } else { Vec::new() },
                }
            }
            "stream-create" => {
                let mut s: *mut c_void = std::ptr::null_mut();
                let r = call!(
                    api,
                    cuStreamCreate(&mut s, self.key_or(step, "flags", 0)? as u32)
                );
                self.bind(step, s as u64, Kind::Stream);
                ok(r)
            }
            "stream-destroy" => ok(call!(api, cuStreamDestroy_v2(self.ptr_arg(step, 0)?))),
            "stream-sync" => ok(call!(api, cuStreamSynchronize(self.ptr_arg(step, 0)?))),
            "event-create" => {
                let mut e: *mut c_void = std::ptr::null_mut();
                let r = call!(
                    api,
                    cuEventCreate(&mut e, self.key_or(step, "flags", 0)? as u32)
                );
                self.bind(step, e as u64, Kind::Event);
                ok(r)
            }
            "event-record" => ok(call!(
                api,
                cuEventRecord(self.ptr_arg(step, 0)?, self.ptr_arg(step, 1)?)
            )),
            "event-sync" => ok(call!(api, cuEventSynchronize(self.ptr_arg(step, 0)?))),
            "event-destroy" => ok(call!(api, cuEventDestroy_v2(self.ptr_arg(step, 0)?))),
            "proc" => {
                let name = CString::new(self.word(step, 0)?)?;
                let version = self.key_or(step, "version", 13000)? as i32;
                let flags = match step.key("flags").map(|a| a.value.as_str()) {
                    None | Some("default") => 0,
                    Some("legacy") => 1,
                    Some("ptds") | Some("per-thread") => 2,
                    Some(_) => self.key_or(step, "flags", 0)?,
                };
                let mut pfn: *mut c_void = std::ptr::null_mut();
                let mut status: i32 = -1;
                let sp = if step.key("status").is_some_and(|a| a.value == "null") {
                    std::ptr::null_mut()
                } else {
                    &mut status as *mut i32
                };
                let r = call!(
                    api,
                    cuGetProcAddress_v2(name.as_ptr(), &mut pfn, version, flags, sp)
                );
                let sym = symbol_name(pfn).unwrap_or_else(|| {
                    if pfn.is_null() {
                        "null".into()
                    } else {
                        "<unnamed>".into()
                    }
                });
                with(r, vec![("symbol", sym), ("status", status.to_string())])
            }
            "error-name" | "error-string" => {
                let code = match cumock_abi::result_code(self.word(step, 0)?) {
                    Some(c) => c,
                    None => self.val(step, 0)? as u32,
                };
                let mut s: *const std::ffi::c_char = std::ptr::null();
                let r = if step.op == "error-name" {
                    call!(api, cuGetErrorName(code, &mut s))
                } else {
                    call!(api, cuGetErrorString(code, &mut s))
                };
                let text = if s.is_null() {
                    "null".to_string()
                } else {
                    // Safety: the driver returns a static NUL-terminated string.
                    format!("{:?}", unsafe { CStr::from_ptr(s) }.to_string_lossy())
                };
                with(r, vec![("string", text)])
            }
            "host-touch" => {
                // The host reads one byte at a device address: on a GPU (and on the mock,
                // whose reservations are PROT_NONE) the process faults, and the
                // transcript ends in `crash: SIGSEGV`.
                let a = self.val(step, 0)? as *const u8;
                // Safety: not safe at all, on purpose: this step exists to show that a
                // device address faults on the host. It runs in the case's own process.
                let v = unsafe { std::ptr::read_volatile(a) };
                harness(vec![("byte", v.to_string())])
            }
            "devnull" => {
                let f = std::fs::File::open("/dev/null")?;
                let fd = std::os::fd::IntoRawFd::into_raw_fd(f);
                self.bind(step, fd as u64, Kind::Fd);
                harness(vec![])
            }
            "pipe" => {
                let mut fds = [0i32; 2];
                // Safety: pipe writes two fds into the array.
                if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
                    bail!("pipe failed");
                }
                self.bind(step, fds[0] as u64, Kind::Fd);
                harness(vec![])
            }
            "closed-fd" => {
                let f = std::fs::File::open("/dev/null")?;
                let fd = std::os::fd::IntoRawFd::into_raw_fd(f);
                // Safety: closing the fd we just opened; its number is then free.
                unsafe { libc::close(fd) };
                self.bind(step, fd as u64, Kind::Fd);
                harness(vec![])
            }
            "close" => {
                let fd = self.val(step, 0)? as i32;
                // Safety: closing an fd number the case owns (exported or opened by it).
                let r = unsafe { libc::close(fd) };
                harness(vec![(
                    "closed",
                    if r == 0 { "yes".into() } else { "no".into() },
                )])
            }
            "fd-cloexec" => {
                let fd = self.val(step, 0)? as i32;
                // Safety: F_GETFD reads the fd's flags.
                let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
                harness(vec![(
                    "cloexec",
                    if flags < 0 {
                        "not-an-fd".into()
                    } else if flags & libc::FD_CLOEXEC != 0 {
                        "yes".into()
                    } else {
                        "no".into()
                    },
                )])
            }
            other => bail!("operation `{other}` is parsed but not run (a harness bug)"),
        })
    }

    fn stream(&self, step: &Step) -> Result<Option<*mut c_void>> {
        Ok(match step.key("stream") {
            None => None,
            Some(a) if a.value == "null" || a.value == "0" => Some(std::ptr::null_mut()),
            Some(_) => Some(self.key(step, "stream")?.unwrap_or(0) as *mut c_void),
        })
    }

    fn write(&mut self, step: &Step) -> Result<Out> {
        let dst = self.val(step, 0)?;
        let data = self.data(step)?;
        let r = match self.stream(step)? {
            Some(s) => call!(
                self.api,
                cuMemcpyHtoDAsync_v2(dst, data.as_ptr().cast(), data.len(), s)
            ),
            None => call!(
                self.api,
                cuMemcpyHtoD_v2(dst, data.as_ptr().cast(), data.len())
            ),
        };
        Ok(Out {
            result: code_name(r),
            outputs: Vec::new(),
        })
    }

    fn read(&mut self, step: &Step) -> Result<Out> {
        let src = self.val(step, 0)?;
        let want = self.data(step)?;
        let mut got = vec![0u8; want.len()];
        let r = match self.stream(step)? {
            Some(s) => call!(
                self.api,
                cuMemcpyDtoHAsync_v2(got.as_mut_ptr().cast(), src, got.len(), s)
            ),
            None => call!(
                self.api,
                cuMemcpyDtoH_v2(got.as_mut_ptr().cast(), src, got.len())
            ),
        };
        let mut outputs = Vec::new();
        if r == 0 && step.key("data").is_none_or(|a| a.value != "skip") {
            let verdict = if step.key("seed").is_some() || step.key("value").is_some() {
                match got.iter().zip(&want).position(|(a, b)| a != b) {
                    None => "ok".to_string(),
                    Some(i) => format!("mismatch@{i}"),
                }
            } else {
                format!("{:016x}", fnv(&got))
            };
            outputs.push(("data".to_owned(), verdict));
        }
        Ok(Out {
            result: code_name(r),
            outputs,
        })
    }

    /// The bytes a write puts, or a read expects: `value=V width=W` (W bytes, little
    /// endian, default 4) or `len=L seed=S` (L pseudo-random bytes from seed S).
    fn data(&self, step: &Step) -> Result<Vec<u8>> {
        if let Some(v) = self.key(step, "value")? {
            let w = self.key_or(step, "width", 4)? as usize;
            if ![1, 2, 4, 8].contains(&w) {
                bail!("width={w} is not 1, 2, 4 or 8");
            }
            let n = self.key_or(step, "len", w as u64)? as usize;
            let unit = &v.to_le_bytes()[..w];
            return Ok(unit.iter().copied().cycle().take(n).collect());
        }
        let len = self
            .key(step, "len")?
            .ok_or_else(|| anyhow!("needs len=, or value="))?;
        if len > 1 << 31 {
            bail!("len={len} is more than a case may move (2 GiB)");
        }
        Ok(pattern(self.key_or(step, "seed", 1)?, len as usize))
    }

    fn prop(&self, step: &Step) -> Result<CUmemAllocationProp> {
        let mut p = CUmemAllocationProp {
            type_: self.key_or(step, "type", 1)? as i32,
            ..Default::default()
        };
        p.location = CUmemLocation {
            type_: self.location_type(step)?,
            id: self.key_or(step, "device", 0)? as i32,
        };
        p.requested_handle_types = match step.key("handle-types").map(|a| a.value.as_str()) {
            None | Some("none") => 0,
            Some(list) => {
                let mut bits = 0;
                for t in list.split(',') {
                    bits |= self.handle_type(t)?;
                }
                bits
            }
        };
        if let Some(c) = step.key("compression") {
            p.alloc_flags.compression_type = match c.value.as_str() {
                "generic" => 1,
                "none" => 0,
                v => v.parse()?,
            };
        }
        Ok(p)
    }

    fn location_type(&self, step: &Step) -> Result<i32> {
        Ok(match step.key("location").map(|a| a.value.as_str()) {
            None | Some("device") => CU_MEM_LOCATION_TYPE_DEVICE,
            Some("host") => CU_MEM_LOCATION_TYPE_HOST,
            Some("host-numa") => CU_MEM_LOCATION_TYPE_HOST_NUMA,
            Some("invalid") => CU_MEM_LOCATION_TYPE_INVALID,
            Some(_) => self.key_or(step, "location", 0)? as i32,
        })
    }

    fn handle_type(&self, t: &str) -> Result<i32> {
        Ok(match t {
            "none" => 0,
            "fd" | "posix-fd" => CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            "win32" => CU_MEM_HANDLE_TYPE_WIN32,
            "win32-kmt" => CU_MEM_HANDLE_TYPE_WIN32_KMT,
            "fabric" => CU_MEM_HANDLE_TYPE_FABRIC,
            other => {
                eval(other, &self.vars).map_err(|e| anyhow!("handle type `{other}`: {e}"))? as i32
            }
        })
    }

    /// `DEVICE:FLAGS` (`0:rw`, `1:r`, `0:none`, `host:rw`, `0:7`).
    fn grant(&self, g: &str) -> Result<CUmemAccessDesc> {
        let (loc, flags) = g
            .split_once(':')
            .ok_or_else(|| anyhow!("grant `{g}`: expected DEVICE:FLAGS"))?;
        let (type_, id) = match loc {
            "host" => (CU_MEM_LOCATION_TYPE_HOST, 0),
            "invalid" => (CU_MEM_LOCATION_TYPE_INVALID, 0),
            d => (
                CU_MEM_LOCATION_TYPE_DEVICE,
                eval(d, &self.vars).map_err(|e| anyhow!(e))? as i32,
            ),
        };
        let flags = match flags {
            "none" => 0,
            "r" | "read" => 1,
            "rw" | "readwrite" => 3,
            f => eval(f, &self.vars).map_err(|e| anyhow!(e))? as i32,
        };
        Ok(CUmemAccessDesc {
            location: CUmemLocation { type_, id },
            flags,
        })
    }

    fn show_attribute(&self, attr: i32, v: u64) -> String {
        match attr {
            CU_POINTER_ATTRIBUTE_CONTEXT => self.ctx_name(v),
            CU_POINTER_ATTRIBUTE_DEVICE_POINTER
            | CU_POINTER_ATTRIBUTE_RANGE_START_ADDR
            | CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR
            | CU_POINTER_ATTRIBUTE_HOST_POINTER => self.addr(v),
            CU_POINTER_ATTRIBUTE_RANGE_SIZE | CU_POINTER_ATTRIBUTE_MAPPING_SIZE => show_size(v),
            CU_POINTER_ATTRIBUTE_BUFFER_ID | CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID => {
                if v == 0 {
                    "0".into()
                } else {
                    "<id>".into()
                }
            }
            CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL => (v as u32 as i32).to_string(),
            CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES => v.to_string(),
            _ => (v as u32).to_string(),
        }
    }

    /// Runs a `child { }` block in a second process that inherits the case's fds.
    fn run_child(&mut self, line: usize, _steps: &[Step]) -> Result<()> {
        let mut fds = Vec::new();
        for (name, kind) in &self.kinds {
            if *kind == Kind::Fd {
                let fd = self.vars[name] as i32;
                // Safety: clearing FD_CLOEXEC on an fd the case owns so the child inherits it.
                unsafe {
                    let f = libc::fcntl(fd, libc::F_GETFD);
                    if f >= 0 {
                        libc::fcntl(fd, libc::F_SETFD, f & !libc::FD_CLOEXEC);
                    }
                }
                fds.push((name.clone(), fd));
            }
        }
        let ints: HashMap<String, u64> = self
            .kinds
            .iter()
            .filter(|(_, k)| matches!(k, Kind::Fd | Kind::Int))
            .map(|(n, _)| (n.clone(), self.vars[n]))
            .collect();
        let exe = std::env::current_exe()?;
        let output = std::process::Command::new(exe)
            .args([
                "__child",
                "--driver",
                &self.api.path,
                "--line",
                &line.to_string(),
            ])
            .arg(&self.case_path)
            .env("CUMOCK_CHILD_VARS", serde_json::to_string(&ints)?)
            .stderr(std::process::Stdio::inherit())
            .output()
            .context("starting the child process")?;
        for l in String::from_utf8_lossy(&output.stdout).lines() {
            match serde_json::from_str::<crate::runner::Line>(l) {
                Ok(crate::runner::Line::Step(rec)) => (self.sink)(&rec),
                Ok(crate::runner::Line::End(crate::transcript::Outcome::HarnessError {
                    message,
                })) => bail!("in the child process: {message}"),
                _ => {}
            }
        }
        if let Some(sig) = std::os::unix::process::ExitStatusExt::signal(&output.status) {
            let rec = StepRecord {
                line,
                step: "child".into(),
                result: format!("crash: {}", crate::runner::signal_name(sig)),
                outputs: vec![],
                process: Some("child".into()),
            };
            (self.sink)(&rec);
        } else if !output.status.success() {
            bail!("the child process failed ({})", output.status);
        }
        Ok(())
    }

    /// For the child process: the parent's fds and integers, and records marked `child`.
    pub fn adopt(&mut self, vars: HashMap<String, u64>) {
        for (k, v) in vars {
            self.vars.insert(k.clone(), v);
            self.kinds.insert(k, Kind::Int);
        }
        self.process = Some("child".into());
    }
}

/// `DDDD:BB:DD.F` or `DDDDDDDD:BB:DD.F`: the bus id's shape; its value differs by machine.
fn pci_bus_id_shape(id: &str) -> bool {
    let parts: Vec<&str> = id.split([':', '.']).collect();
    let hex =
        |s: &str, n: &[usize]| n.contains(&s.len()) && s.chars().all(|c| c.is_ascii_hexdigit());
    parts.len() == 4
        && hex(parts[0], &[4, 8])
        && hex(parts[1], &[2])
        && hex(parts[2], &[2])
        && hex(parts[3], &[1])
}

fn pointer_attribute(name: &str) -> Result<i32> {
    let n = name.to_ascii_uppercase().replace('-', "_");
    cumock_abi::CU_POINTER_ATTRIBUTES
        .iter()
        .find(|(k, _)| *k == n || k.strip_prefix("CU_POINTER_ATTRIBUTE_") == Some(n.as_str()))
        .map(|(_, v)| *v as i32)
        .ok_or_else(|| anyhow!("`{name}` is not a pointer attribute"))
}

/// Deterministic test bytes: the same seed gives the same bytes on every machine.
pub fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len);
    out
}

fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Writes each record as a JSON line on stdout, flushed, for the parent process.
pub fn stdout_sink() -> impl FnMut(&StepRecord) {
    |rec: &StepRecord| {
        let mut out = std::io::stdout().lock();
        let line = crate::runner::Line::Step(rec.clone());
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string(&line).expect("records serialise")
        );
        let _ = out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_deterministic_and_differ_by_seed() {
        assert_eq!(pattern(7, 100), pattern(7, 100));
        assert_ne!(pattern(7, 100), pattern(8, 100));
        assert_eq!(pattern(7, 13).len(), 13);
    }

    #[test]
    fn pci_bus_ids_of_either_width() {
        assert!(pci_bus_id_shape("0000:00:06.0"));
        assert!(pci_bus_id_shape("00000000:18:00.0"));
        assert!(!pci_bus_id_shape("garbage"));
    }

    #[test]
    fn pointer_attribute_names() {
        assert_eq!(pointer_attribute("range-start-addr").unwrap(), 11);
        assert_eq!(
            pointer_attribute("CU_POINTER_ATTRIBUTE_MAPPED").unwrap(),
            13
        );
        assert!(pointer_attribute("nope").is_err());
    }
}
