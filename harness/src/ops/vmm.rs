//! Virtual memory management: granularity, reservations, physical allocations, mapping,
//! access rights, and sharing allocations through exported handles.

use super::{word_or_expr, Args, Expr, Ptr, Spec, WordOr};
use crate::case::Bad;
use crate::case_steps::{call, Exec, Kind, Out};
use crate::expr::show_size;
use crate::normalize;
use anyhow::{bail, Result};
use cumock_abi::consts::*;
use cumock_abi::{CUmemAccessDesc, CUmemAllocationProp, CUmemLocation};
use std::ffi::c_void;

pub const SPECS: &[Spec] = &[
    Spec::new(
        "granularity",
        &["option"],
        &[
            "device",
            "location",
            "handle-types",
            "prop",
            "type",
            "compression",
        ],
    ),
    Spec::new("reserve", &["size"], &["align", "hint", "flags", "out"]),
    Spec::new("address-free", &["addr", "size"], &[]),
    Spec::new(
        "create",
        &["size"],
        &[
            "device",
            "type",
            "location",
            "handle-types",
            "flags",
            "compression",
            "prop",
            "out",
        ],
    ),
    Spec::new("release", &["handle"], &[]),
    Spec::new("map", &["addr"], &["size", "offset", "handle", "flags"]),
    Spec::new("unmap", &["addr", "size"], &[]),
    Spec::new("set-access", &["addr", "size"], &["grant", "count", "desc"]),
    Spec::new("get-access", &["addr"], &["device", "location", "out"]),
    Spec::new("export", &["handle"], &["type", "flags", "out"]),
    Spec::new("import", &["fd"], &["type"]),
    Spec::new("retain", &["addr"], &[]),
    Spec::new("props", &["handle"], &["out"]),
];

/// CUmemAllocationProp as a case writes it: `device=0 location=host handle-types=fd`.
#[derive(Debug, Clone, PartialEq)]
pub struct Prop {
    pub type_: Option<Expr>,
    pub location: Location,
    /// `None` passes a NULL prop (`prop=null`).
    pub null: bool,
    pub handle_types: Vec<WordOr<i32>>,
    pub compression: Option<u8>,
}

/// A CUmemLocation: its type (`device`, `host`, `host-numa`, `invalid` or a number) and id.
#[derive(Debug, Clone, PartialEq)]
pub struct Location {
    pub type_: Option<WordOr<i32>>,
    pub id: Option<Expr>,
}

/// One CUmemAccessDesc: `DEVICE:FLAGS` (`0:rw`, `1:r`, `0:none`, `host:rw`, `0:7`).
#[derive(Debug, Clone, PartialEq)]
pub struct Grant {
    pub location: GrantTo,
    pub flags: WordOr<i32>,
    pub col: usize,
}

/// Whom a grant is for.
#[derive(Debug, Clone, PartialEq)]
pub enum GrantTo {
    Host,
    /// CU_MEM_LOCATION_TYPE_INVALID, to see it refused.
    Invalid,
    Device(Expr),
}

/// Which memory a granularity is asked for.
const OPTIONS: &[(&str, i32)] = &[("min", 0), ("minimum", 0), ("recommended", 1), ("rec", 1)];

const LOCATION_TYPES: &[(&str, i32)] = &[
    ("device", CU_MEM_LOCATION_TYPE_DEVICE),
    ("host", CU_MEM_LOCATION_TYPE_HOST),
    ("host-numa", CU_MEM_LOCATION_TYPE_HOST_NUMA),
    ("invalid", CU_MEM_LOCATION_TYPE_INVALID),
];

const HANDLE_TYPES: &[(&str, i32)] = &[
    ("none", 0),
    ("fd", CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
    ("posix-fd", CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
    ("win32", CU_MEM_HANDLE_TYPE_WIN32),
    ("win32-kmt", CU_MEM_HANDLE_TYPE_WIN32_KMT),
    ("fabric", CU_MEM_HANDLE_TYPE_FABRIC),
];

#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Granularity {
        option: WordOr<i32>,
        prop: Prop,
    },
    Reserve {
        size: Expr,
        align: Option<Expr>,
        hint: Option<Expr>,
        flags: Option<Expr>,
        null_out: bool,
    },
    AddressFree {
        addr: Expr,
        size: Expr,
    },
    Create {
        size: Expr,
        prop: Prop,
        flags: Option<Expr>,
        null_out: bool,
    },
    Release(Expr),
    Map {
        addr: Expr,
        size: Expr,
        offset: Option<Expr>,
        handle: Expr,
        flags: Option<Expr>,
    },
    Unmap {
        addr: Expr,
        size: Expr,
    },
    SetAccess {
        addr: Expr,
        size: Expr,
        grants: Vec<Grant>,
        count: Option<Expr>,
        null_desc: bool,
    },
    GetAccess {
        addr: Expr,
        location: Location,
        null_out: bool,
    },
    Export {
        handle: Expr,
        type_: WordOr<i32>,
        flags: Option<Expr>,
        null_out: bool,
    },
    Import {
        fd: Expr,
        type_: WordOr<i32>,
    },
    Retain(Ptr),
    Props {
        handle: Expr,
        null_out: bool,
    },
}

fn location(a: &Args<'_>) -> Result<Location, Bad> {
    Ok(Location {
        type_: a.key_word_or_expr("location", LOCATION_TYPES)?,
        id: a.key_expr("device")?,
    })
}

fn handle_type(a: &Args<'_>, key: &str) -> Result<WordOr<i32>, Bad> {
    Ok(a.key_word_or_expr(key, HANDLE_TYPES)?
        .unwrap_or(WordOr::Word(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)))
}

fn prop(a: &Args<'_>) -> Result<Prop, Bad> {
    let mut handle_types = Vec::new();
    if let Some(list) = a.key("handle-types") {
        let mut col = list.col + "handle-types=".len();
        for t in list.value.split(',') {
            handle_types.push(word_or_expr(a, t, col, HANDLE_TYPES)?);
            col += t.len() + 1;
        }
    }
    let compression = match a.key("compression") {
        None => None,
        Some(c) => Some(match c.value.as_str() {
            "generic" => 1,
            "none" => 0,
            v => v.parse().map_err(|_| {
                (
                    c.col,
                    format!("`compression=` is generic, none or a number up to 255, found `{v}`"),
                )
            })?,
        }),
    };
    Ok(Prop {
        type_: a.key_expr("type")?,
        location: location(a)?,
        null: a.null_key("prop")?,
        handle_types,
        compression,
    })
}

fn grant(a: &Args<'_>, g: &crate::case::RawArg) -> Result<Grant, Bad> {
    let col = g.col + "grant=".len();
    let (loc, flags) = g
        .value
        .split_once(':')
        .ok_or_else(|| (col, format!("grant `{}`: expected DEVICE:FLAGS", g.value)))?;
    let location = match loc {
        "host" => GrantTo::Host,
        "invalid" => GrantTo::Invalid,
        d => GrantTo::Device(a.expr_of(d, col)?),
    };
    let flags = word_or_expr(
        a,
        flags,
        col + loc.len() + 1,
        &[
            ("none", 0),
            ("r", 1),
            ("read", 1),
            ("rw", 3),
            ("readwrite", 3),
        ],
    )?;
    Ok(Grant {
        location,
        flags,
        col: g.col,
    })
}

pub fn parse(name: &str, a: &Args<'_>) -> Result<Op, Bad> {
    Ok(match name {
        "granularity" => {
            let w = a.word(0);
            Op::Granularity {
                option: word_or_expr(a, &w.value, w.col, OPTIONS)?,
                prop: prop(a)?,
            }
        }
        "reserve" => Op::Reserve {
            size: a.expr(0)?,
            align: a.key_expr("align")?,
            hint: a.key_expr("hint")?,
            flags: a.key_expr("flags")?,
            null_out: a.null_key("out")?,
        },
        "address-free" => Op::AddressFree {
            addr: a.expr(0)?,
            size: a.expr(1)?,
        },
        "create" => Op::Create {
            size: a.expr(0)?,
            prop: prop(a)?,
            flags: a.key_expr("flags")?,
            null_out: a.null_key("out")?,
        },
        "release" => Op::Release(a.expr(0)?),
        "map" => Op::Map {
            addr: a.expr(0)?,
            size: a.need_key_expr("size")?,
            offset: a.key_expr("offset")?,
            handle: a.need_key_expr("handle")?,
            flags: a.key_expr("flags")?,
        },
        "unmap" => Op::Unmap {
            addr: a.expr(0)?,
            size: a.expr(1)?,
        },
        "set-access" => Op::SetAccess {
            addr: a.expr(0)?,
            size: a.expr(1)?,
            grants: a
                .keys("grant")
                .map(|g| grant(a, g))
                .collect::<Result<_, _>>()?,
            count: a.key_expr("count")?,
            null_desc: a.null_key("desc")?,
        },
        "get-access" => Op::GetAccess {
            addr: a.expr(0)?,
            location: location(a)?,
            null_out: a.null_key("out")?,
        },
        "export" => Op::Export {
            handle: a.expr(0)?,
            type_: handle_type(a, "type")?,
            flags: a.key_expr("flags")?,
            null_out: a.null_key("out")?,
        },
        "import" => Op::Import {
            fd: a.expr(0)?,
            type_: handle_type(a, "type")?,
        },
        "retain" => Op::Retain(a.ptr(0)?),
        "props" => Op::Props {
            handle: a.expr(0)?,
            null_out: a.null_key("out")?,
        },
        _ => unreachable!("{name} is in SPECS"),
    })
}

fn word(x: &Exec<'_>, w: &WordOr<i32>) -> Result<i32> {
    Ok(match w {
        WordOr::Word(v) => *v,
        WordOr::Expr(e) => x.eval(e)? as i32,
    })
}

fn mem_location(x: &Exec<'_>, l: &Location) -> Result<CUmemLocation> {
    Ok(CUmemLocation {
        type_: match &l.type_ {
            None => CU_MEM_LOCATION_TYPE_DEVICE,
            Some(t) => word(x, t)?,
        },
        id: x.eval_or(&l.id, 0)? as i32,
    })
}

fn allocation_prop(x: &Exec<'_>, p: &Prop) -> Result<CUmemAllocationProp> {
    let mut prop = CUmemAllocationProp {
        type_: x.eval_or(&p.type_, 1)? as i32,
        location: mem_location(x, &p.location)?,
        ..Default::default()
    };
    for t in &p.handle_types {
        prop.requested_handle_types |= word(x, t)?;
    }
    if let Some(c) = p.compression {
        prop.alloc_flags.compression_type = c;
    }
    Ok(prop)
}

fn access_desc(x: &Exec<'_>, g: &Grant) -> Result<CUmemAccessDesc> {
    let (type_, id) = match &g.location {
        GrantTo::Host => (CU_MEM_LOCATION_TYPE_HOST, 0),
        GrantTo::Invalid => (CU_MEM_LOCATION_TYPE_INVALID, 0),
        GrantTo::Device(e) => (CU_MEM_LOCATION_TYPE_DEVICE, x.eval(e)? as i32),
    };
    Ok(CUmemAccessDesc {
        location: CUmemLocation { type_, id },
        flags: word(x, &g.flags)?,
    })
}

/// An out-pointer to `v`, or NULL where the case passes none (`out=null`).
fn out_ptr<T>(v: &mut T, null: bool) -> *mut T {
    if null {
        std::ptr::null_mut()
    } else {
        v
    }
}

pub fn run(op: &Op, x: &mut Exec<'_>) -> Result<Out> {
    let api = x.api;
    Ok(match op {
        Op::Granularity { option, prop } => {
            let option = word(x, option)?;
            let p = allocation_prop(x, prop)?;
            let pp = if prop.null {
                std::ptr::null()
            } else {
                &p as *const _
            };
            let mut g = 0usize;
            let r = call!(api, cuMemGetAllocationGranularity(&mut g, pp, option));
            x.bind(g as u64, Kind::Int);
            Out::with(r, vec![("value", show_size(g as u64))])
        }
        Op::Reserve {
            size,
            align,
            hint,
            flags,
            null_out,
        } => {
            let size = x.eval(size)?;
            let align = x.eval_or(align, 0)?;
            let (hint, flags) = (x.eval_or(hint, 0)?, x.eval_or(flags, 0)?);
            let mut p = 0u64;
            let pp = out_ptr(&mut p, *null_out);
            let r = call!(
                api,
                cuMemAddressReserve(pp, size as usize, align as usize, hint, flags)
            );
            x.bind(p, Kind::Address);
            x.region(p, size);
            Out::with(r, vec![("aligned", normalize::alignment(p, align))])
        }
        Op::AddressFree { addr, size } => {
            let (addr, size) = (x.eval(addr)?, x.eval(size)? as usize);
            Out::code(call!(api, cuMemAddressFree(addr, size)))
        }
        Op::Create {
            size,
            prop,
            flags,
            null_out,
        } => {
            let p = allocation_prop(x, prop)?;
            let pp = if prop.null {
                std::ptr::null()
            } else {
                &p as *const _
            };
            let (size, flags) = (x.eval(size)? as usize, x.eval_or(flags, 0)?);
            let mut h = 0u64;
            let hp = out_ptr(&mut h, *null_out);
            let r = call!(api, cuMemCreate(hp, size, pp, flags));
            x.bind_new(h, Kind::Handle);
            Out::code(r)
        }
        Op::Release(handle) => {
            let handle = x.eval(handle)?;
            Out::code(call!(api, cuMemRelease(handle)))
        }
        Op::Map {
            addr,
            size,
            offset,
            handle,
            flags,
        } => {
            let (addr, size) = (x.eval(addr)?, x.eval(size)? as usize);
            let (offset, handle) = (x.eval_or(offset, 0)? as usize, x.eval(handle)?);
            let flags = x.eval_or(flags, 0)?;
            Out::code(call!(api, cuMemMap(addr, size, offset, handle, flags)))
        }
        Op::Unmap { addr, size } => {
            let (addr, size) = (x.eval(addr)?, x.eval(size)? as usize);
            Out::code(call!(api, cuMemUnmap(addr, size)))
        }
        Op::SetAccess {
            addr,
            size,
            grants,
            count,
            null_desc,
        } => {
            let descs = grants
                .iter()
                .map(|g| access_desc(x, g).map_err(|e| anyhow::anyhow!("column {}: {e}", g.col)))
                .collect::<Result<Vec<_>>>()?;
            let count = x.eval_or(count, descs.len() as u64)? as usize;
            let dp = if *null_desc || descs.is_empty() {
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
            let (addr, size) = (x.eval(addr)?, x.eval(size)? as usize);
            Out::code(call!(api, cuMemSetAccess(addr, size, dp, count)))
        }
        Op::GetAccess {
            addr,
            location,
            null_out,
        } => {
            let loc = mem_location(x, location)?;
            let addr = x.eval(addr)?;
            let mut f = 0u64;
            let fp = out_ptr(&mut f, *null_out);
            let r = call!(api, cuMemGetAccess(fp, &loc, addr));
            Out::with(r, vec![("flags", f.to_string())])
        }
        Op::Export {
            handle,
            type_,
            flags,
            null_out,
        } => {
            let ty = word(x, type_)?;
            let (handle, flags) = (x.eval(handle)?, x.eval_or(flags, 0)?);
            let mut fd: i32 = -1;
            let fp = out_ptr(&mut fd, *null_out).cast::<c_void>();
            let r = call!(api, cuMemExportToShareableHandle(fp, handle, ty, flags));
            x.bind(fd as i64 as u64, Kind::Fd);
            Out::with(r, vec![("fd", normalize::fd(fd as i64))])
        }
        Op::Import { fd, type_ } => {
            let ty = word(x, type_)?;
            let fd = x.eval(fd)? as i64 as i32;
            let mut h = 0u64;
            let r = call!(
                api,
                cuMemImportFromShareableHandle(&mut h, fd as isize as *mut c_void, ty)
            );
            let shown = normalize::handle(h, &mut x.handles.clone());
            x.bind(h, Kind::Handle);
            Out::with(r, vec![("handle", shown)])
        }
        Op::Retain(addr) => {
            let addr = x.ptr(addr)?;
            let mut h = 0u64;
            let r = call!(api, cuMemRetainAllocationHandle(&mut h, addr));
            let shown = normalize::handle(h, &mut x.handles.clone());
            x.bind(h, Kind::Handle);
            Out::with(r, vec![("handle", shown)])
        }
        Op::Props { handle, null_out } => {
            let handle = x.eval(handle)?;
            let mut p = CUmemAllocationProp::default();
            let pp = out_ptr(&mut p, *null_out);
            let r = call!(api, cuMemGetAllocationPropertiesFromHandle(pp, handle));
            Out::with(
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
    })
}
