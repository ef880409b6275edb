//! Memory as programs use it: free memory, cuMemAlloc, copies and memsets (synchronous
//! or on a stream), address ranges, pointer attributes, and a host touching device memory.

use super::{Args, Expr, Ptr, Spec};
use crate::case::Bad;
use crate::case_steps::{call, Exec, Kind, Out};
use crate::expr::show_size;
use crate::normalize;
use anyhow::{bail, Result};
use cumock_abi::consts::*;
use std::ffi::c_void;

pub const SPECS: &[Spec] = &[
    Spec::new("mem-info", &[], &[]),
    Spec::new("alloc", &["size"], &[]),
    Spec::new("mem-free", &["addr"], &[]),
    Spec::new(
        "write",
        &["addr"],
        &["len", "seed", "value", "stream", "width"],
    ),
    Spec::new(
        "read",
        &["addr"],
        &["len", "seed", "value", "stream", "width", "data"],
    ),
    Spec::new("copy", &["dst", "src", "len"], &["stream", "unified"]),
    Spec::new("memset", &["addr", "count", "value"], &["width", "stream"]),
    Spec::new("range", &["addr"], &[]),
    Spec::new("pointer-attribute", &["name", "addr"], &[]),
    Spec::new("pointer-attributes", &["names", "addr"], &[]),
    Spec::new("host-touch", &["addr"], &[]),
];

/// The bytes a write puts, or a read expects: `value=V width=W` (W bytes, little
/// endian, default 4, repeated to `len=`) or `len=L seed=S` (L pseudo-random bytes from
/// seed S).
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    Value {
        value: Expr,
        width: usize,
        len: Option<Expr>,
    },
    Pattern {
        len: Expr,
        seed: Option<Expr>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Info,
    Alloc(Expr),
    Free(Expr),
    Write {
        dst: Expr,
        data: Data,
        stream: Option<Ptr>,
    },
    Read {
        src: Expr,
        data: Data,
        stream: Option<Ptr>,
        /// `data=skip`: the bytes are read, not compared or shown.
        skip: bool,
    },
    Copy {
        dst: Expr,
        src: Expr,
        len: Expr,
        stream: Option<Ptr>,
        /// cuMemcpy (unified addressing) instead of cuMemcpyDtoD.
        unified: bool,
    },
    Memset {
        dst: Expr,
        count: Expr,
        value: Expr,
        width: u64,
        stream: Option<Ptr>,
    },
    Range(Expr),
    PointerAttribute {
        name: String,
        attribute: i32,
        addr: Expr,
    },
    PointerAttributes {
        names: Vec<String>,
        attributes: Vec<i32>,
        addr: Expr,
    },
    HostTouch(Expr),
}

fn data(a: &Args<'_>) -> Result<Data, Bad> {
    if let Some(value) = a.key_expr("value")? {
        return Ok(Data::Value {
            value,
            width: a.key_choice("width", &[1, 2, 4, 8])?.unwrap_or(4) as usize,
            len: a.key_expr("len")?,
        });
    }
    Ok(Data::Pattern {
        len: a
            .key_expr("len")?
            .ok_or_else(|| (a.word(0).col, "needs len=, or value=".to_string()))?,
        seed: a.key_expr("seed")?,
    })
}

fn pointer_attribute(name: &str) -> Option<i32> {
    let n = name.to_ascii_uppercase().replace('-', "_");
    cumock_abi::CU_POINTER_ATTRIBUTES
        .iter()
        .find(|(k, _)| *k == n || k.strip_prefix("CU_POINTER_ATTRIBUTE_") == Some(n.as_str()))
        .map(|(_, v)| *v as i32)
}

pub fn parse(name: &str, a: &Args<'_>) -> Result<Op, Bad> {
    let attribute = |n: &str, col: usize| {
        pointer_attribute(n).ok_or_else(|| (col, format!("`{n}` is not a pointer attribute")))
    };
    Ok(match name {
        "mem-info" => Op::Info,
        "alloc" => Op::Alloc(a.expr(0)?),
        "mem-free" => Op::Free(a.expr(0)?),
        "write" => Op::Write {
            dst: a.expr(0)?,
            data: data(a)?,
            stream: a.key_ptr("stream")?,
        },
        "read" => Op::Read {
            src: a.expr(0)?,
            data: data(a)?,
            stream: a.key_ptr("stream")?,
            skip: match a.key("data") {
                None => false,
                Some(d) if d.value == "skip" => true,
                Some(d) => {
                    return Err((
                        d.col,
                        format!("`data=` is only `skip`, found `{}`", d.value),
                    ))
                }
            },
        },
        "copy" => Op::Copy {
            dst: a.expr(0)?,
            src: a.expr(1)?,
            len: a.expr(2)?,
            stream: a.key_ptr("stream")?,
            unified: a.key_choice("unified", &[0, 1])? == Some(1),
        },
        "memset" => Op::Memset {
            dst: a.expr(0)?,
            count: a.expr(1)?,
            value: a.expr(2)?,
            width: a.key_choice("width", &[8, 16, 32])?.unwrap_or(8),
            stream: a.key_ptr("stream")?,
        },
        "range" => Op::Range(a.expr(0)?),
        "pointer-attribute" => {
            let w = a.word(0);
            Op::PointerAttribute {
                name: w.value.clone(),
                attribute: attribute(&w.value, w.col)?,
                addr: a.expr(1)?,
            }
        }
        "pointer-attributes" => {
            let w = a.word(0);
            let names: Vec<String> = w.value.split(',').map(str::to_owned).collect();
            Op::PointerAttributes {
                attributes: names
                    .iter()
                    .map(|n| attribute(n, w.col))
                    .collect::<Result<_, _>>()?,
                names,
                addr: a.expr(1)?,
            }
        }
        "host-touch" => Op::HostTouch(a.expr(0)?),
        _ => unreachable!("{name} is in SPECS"),
    })
}

fn bytes(x: &Exec<'_>, d: &Data) -> Result<Vec<u8>> {
    match d {
        Data::Value { value, width, len } => {
            let v = x.eval(value)?;
            let n = x.eval_or(len, *width as u64)? as usize;
            let unit = &v.to_le_bytes()[..*width];
            Ok(unit.iter().copied().cycle().take(n).collect())
        }
        Data::Pattern { len, seed } => {
            let len = x.eval(len)?;
            if len > 1 << 31 {
                bail!("len={len} is more than a case may move (2 GiB)");
            }
            Ok(pattern(x.eval_or(seed, 1)?, len as usize))
        }
    }
}

fn stream(x: &Exec<'_>, s: &Option<Ptr>) -> Result<Option<*mut c_void>> {
    s.as_ref().map(|p| x.ptr(p)).transpose()
}

/// A pointer attribute's value, normalised by what it is.
fn show_attribute(x: &Exec<'_>, attr: i32, v: u64) -> String {
    match attr {
        CU_POINTER_ATTRIBUTE_CONTEXT => x.ctx_name(v),
        CU_POINTER_ATTRIBUTE_DEVICE_POINTER
        | CU_POINTER_ATTRIBUTE_RANGE_START_ADDR
        | CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR
        | CU_POINTER_ATTRIBUTE_HOST_POINTER => x.addr(v),
        CU_POINTER_ATTRIBUTE_RANGE_SIZE | CU_POINTER_ATTRIBUTE_MAPPING_SIZE => show_size(v),
        CU_POINTER_ATTRIBUTE_BUFFER_ID | CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID => normalize::id(v),
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL => (v as u32 as i32).to_string(),
        CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES => v.to_string(),
        _ => (v as u32).to_string(),
    }
}

pub fn run(op: &Op, x: &mut Exec<'_>) -> Result<Out> {
    let api = x.api;
    Ok(match op {
        Op::Info => {
            let (mut f, mut t) = (0usize, 0usize);
            let r = call!(api, cuMemGetInfo_v2(&mut f, &mut t));
            let free = if r == 0 {
                normalize::free_memory(f as u64, &mut x.free_baseline)
            } else {
                String::new()
            };
            Out::with(r, vec![("free", free), ("total", t.to_string())])
        }
        Op::Alloc(size) => {
            let size = x.eval(size)?;
            let mut p = 0u64;
            let r = call!(api, cuMemAlloc_v2(&mut p, size as usize));
            x.bind(p, Kind::Address);
            x.region(p, size);
            Out::code(r)
        }
        Op::Free(addr) => {
            let addr = x.eval(addr)?;
            Out::code(call!(api, cuMemFree_v2(addr)))
        }
        Op::Write {
            dst,
            data,
            stream: s,
        } => {
            let dst = x.eval(dst)?;
            let data = bytes(x, data)?;
            let (src, n) = (data.as_ptr().cast(), data.len());
            Out::code(match stream(x, s)? {
                Some(s) => call!(api, cuMemcpyHtoDAsync_v2(dst, src, n, s)),
                None => call!(api, cuMemcpyHtoD_v2(dst, src, n)),
            })
        }
        Op::Read {
            src,
            data,
            stream: s,
            skip,
        } => {
            let src = x.eval(src)?;
            let want = bytes(x, data)?;
            let mut got = vec![0u8; want.len()];
            let (dst, n) = (got.as_mut_ptr().cast(), got.len());
            let r = match stream(x, s)? {
                Some(s) => call!(api, cuMemcpyDtoHAsync_v2(dst, src, n, s)),
                None => call!(api, cuMemcpyDtoH_v2(dst, src, n)),
            };
            let mut out = Out::code(r);
            if r == 0 && !skip {
                // Bytes from a seed or a value are compared; others are shown by hash.
                let compared = match data {
                    Data::Value { .. } => true,
                    Data::Pattern { seed, .. } => seed.is_some(),
                };
                let verdict = normalize::data(&got, compared.then_some(&want[..]));
                out.outputs.push(("data".to_owned(), verdict));
            }
            out
        }
        Op::Copy {
            dst,
            src,
            len,
            stream: s,
            unified,
        } => {
            let (dst, src, n) = (x.eval(dst)?, x.eval(src)?, x.eval(len)? as usize);
            if *unified {
                // cuMemcpy takes host addresses too: a case may only name its own
                // regions, so that no case file makes a driver touch memory outside.
                for (what, a) in [("destination", dst), ("source", src)] {
                    if !x.regions.iter().any(|(_, b, sz)| a >= *b && a - b < *sz) {
                        bail!(
                            "the {what} {a:#x} of a unified copy is not in a region of this case"
                        );
                    }
                }
            }
            Out::code(match (stream(x, s)?, unified) {
                (_, true) => call!(api, cuMemcpy(dst, src, n)),
                (Some(s), false) => call!(api, cuMemcpyDtoDAsync_v2(dst, src, n, s)),
                (None, false) => call!(api, cuMemcpyDtoD_v2(dst, src, n)),
            })
        }
        Op::Memset {
            dst,
            count,
            value,
            width,
            stream: s,
        } => {
            let (dst, count, value) = (x.eval(dst)?, x.eval(count)? as usize, x.eval(value)?);
            Out::code(match (width, stream(x, s)?) {
                (16, None) => call!(api, cuMemsetD16_v2(dst, value as u16, count)),
                (32, None) => call!(api, cuMemsetD32_v2(dst, value as u32, count)),
                (_, None) => call!(api, cuMemsetD8_v2(dst, value as u8, count)),
                (16, Some(s)) => call!(api, cuMemsetD16Async(dst, value as u16, count, s)),
                (32, Some(s)) => call!(api, cuMemsetD32Async(dst, value as u32, count, s)),
                (_, Some(s)) => call!(api, cuMemsetD8Async(dst, value as u8, count, s)),
            })
        }
        Op::Range(addr) => {
            let addr = x.eval(addr)?;
            let (mut b, mut s) = (0u64, 0usize);
            let r = call!(api, cuMemGetAddressRange_v2(&mut b, &mut s, addr));
            Out::with(r, vec![("base", x.addr(b)), ("size", show_size(s as u64))])
        }
        Op::PointerAttribute {
            attribute, addr, ..
        } => {
            let addr = x.eval(addr)?;
            let mut v = [0u64; 2];
            let r = call!(
                api,
                cuPointerGetAttribute(v.as_mut_ptr().cast(), *attribute, addr)
            );
            Out::with(r, vec![("value", show_attribute(x, *attribute, v[0]))])
        }
        Op::PointerAttributes {
            names,
            attributes,
            addr,
        } => {
            let addr = x.eval(addr)?;
            let mut vals = vec![[0u64; 2]; attributes.len()];
            let mut ptrs: Vec<*mut c_void> =
                vals.iter_mut().map(|v| v.as_mut_ptr().cast()).collect();
            let r = call!(
                api,
                cuPointerGetAttributes(
                    attributes.len() as u32,
                    attributes.as_ptr().cast_mut(),
                    ptrs.as_mut_ptr(),
                    addr
                )
            );
            let mut out = Out::code(r);
            if r == 0 {
                out.outputs = names
                    .iter()
                    .zip(attributes)
                    .zip(&vals)
                    .map(|((n, a), v)| (n.to_ascii_lowercase(), show_attribute(x, *a, v[0])))
                    .collect();
            }
            out
        }
        Op::HostTouch(addr) => {
            // The host reads one byte at a device address: on a GPU (and on the mock,
            // whose reservations are PROT_NONE) the process faults, and the transcript
            // ends in `crash: SIGSEGV`.
            let a = x.eval(addr)? as *const u8;
            // Safety: not safe at all, on purpose: this step exists to show that a
            // device address faults on the host. It runs in the case's own process.
            let v = unsafe { std::ptr::read_volatile(a) };
            Out::harness(vec![("byte", v.to_string())])
        }
    })
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
    fn pointer_attribute_names() {
        assert_eq!(pointer_attribute("range-start-addr"), Some(11));
        assert_eq!(pointer_attribute("CU_POINTER_ATTRIBUTE_MAPPED"), Some(13));
        assert!(pointer_attribute("nope").is_none());
    }
}
