//! The driver as a whole: cuInit, its version, entry points by name
//! (cuGetProcAddress_v2) and error strings.

use super::{Args, Expr, Spec, WordOr};
use crate::case::Bad;
use crate::case_steps::{call, Exec, Out};
use crate::normalize;
use anyhow::Result;
use std::ffi::{CStr, CString};

pub const SPECS: &[Spec] = &[
    Spec::new("init", &["flags?"], &[]),
    Spec::new("driver-version", &[], &[]),
    Spec::new("proc", &["name"], &["version", "flags", "status"]),
    Spec::new("error-name", &["code"], &[]),
    Spec::new("error-string", &["code"], &[]),
];

#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Init {
        flags: Option<Expr>,
    },
    DriverVersion,
    /// cuGetProcAddress_v2 of a symbol, with the CUDA version and flags asked for.
    Proc {
        symbol: CString,
        version: Option<Expr>,
        flags: Option<WordOr<u64>>,
        null_status: bool,
    },
    ErrorName(WordOr<u32>),
    ErrorString(WordOr<u32>),
}

pub fn parse(name: &str, a: &Args<'_>) -> Result<Op, Bad> {
    Ok(match name {
        "init" => Op::Init {
            flags: a.opt_expr(0)?,
        },
        "driver-version" => Op::DriverVersion,
        "proc" => {
            let s = a.word(0);
            Op::Proc {
                symbol: CString::new(s.value.as_str())
                    .map_err(|_| (s.col, "a symbol name holds no NUL".to_string()))?,
                version: a.key_expr("version")?,
                flags: a.key_word_or_expr(
                    "flags",
                    &[
                        ("default", 0),
                        ("legacy", 1),
                        ("ptds", 2),
                        ("per-thread", 2),
                    ],
                )?,
                null_status: a.null_key("status")?,
            }
        }
        "error-name" => Op::ErrorName(result_code(a)?),
        "error-string" => Op::ErrorString(result_code(a)?),
        _ => unreachable!("{name} is in SPECS"),
    })
}

/// A CUresult by name (`CUDA_ERROR_INVALID_VALUE`) or number.
fn result_code(a: &Args<'_>) -> Result<WordOr<u32>, Bad> {
    let w = a.word(0);
    match cumock_abi::result_code(&w.value) {
        Some(c) => Ok(WordOr::Word(c)),
        None => Ok(WordOr::Expr(a.expr(0)?)),
    }
}

pub fn run(op: &Op, x: &mut Exec<'_>) -> Result<Out> {
    let api = x.api;
    Ok(match op {
        Op::Init { flags } => {
            let flags = x.eval_or(flags, 0)? as u32;
            Out::code(call!(api, cuInit(flags)))
        }
        Op::DriverVersion => {
            let mut v = 0;
            let r = call!(api, cuDriverGetVersion(&mut v));
            Out::with(r, vec![("version", v.to_string())])
        }
        Op::Proc {
            symbol,
            version,
            flags,
            null_status,
        } => {
            let version = x.eval_or(version, 13000)? as i32;
            let flags = match flags {
                None => 0,
                Some(WordOr::Word(f)) => *f,
                Some(WordOr::Expr(e)) => x.eval(e)?,
            };
            let mut pfn: *mut std::ffi::c_void = std::ptr::null_mut();
            let mut status: i32 = -1;
            let sp = if *null_status {
                std::ptr::null_mut()
            } else {
                &mut status as *mut i32
            };
            let r = call!(
                api,
                cuGetProcAddress_v2(symbol.as_ptr(), &mut pfn, version, flags, sp)
            );
            let sym = crate::driver::symbol_name(pfn).unwrap_or_else(|| {
                if pfn.is_null() {
                    "null".into()
                } else {
                    "<unnamed>".into()
                }
            });
            Out::with(r, vec![("symbol", sym), ("status", status.to_string())])
        }
        Op::ErrorName(code) | Op::ErrorString(code) => {
            let code = match code {
                WordOr::Word(c) => *c,
                WordOr::Expr(e) => x.eval(e)? as u32,
            };
            let mut s: *const std::ffi::c_char = std::ptr::null();
            let r = if matches!(op, Op::ErrorName(_)) {
                call!(api, cuGetErrorName(code, &mut s))
            } else {
                call!(api, cuGetErrorString(code, &mut s))
            };
            let text = if s.is_null() {
                None
            } else {
                // Safety: the driver returns a static NUL-terminated string.
                Some(unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned())
            };
            Out::with(r, vec![("string", normalize::c_string(text.as_deref()))])
        }
    })
}
