//! Modules and kernel launches: a PTX or fatbin file of the case's folder loaded with
//! cuModuleLoad, a kernel looked up, launched with cuLaunchKernel.
//!
//! ```text
//! m = module-load ../clients/probes/kernels/probe_kernels.ptx
//! f = function m add_one
//! launch f grid=4 block=256 args=va,n [shared=] [stream=]
//! ```
//! `args=` lists the kernel's parameters as expressions; each is passed in an 8-byte
//! little-endian cell, from which the driver takes as many bytes as the parameter is wide.

use super::{Args, Expr, Ptr, Spec};
use crate::case::Bad;
use crate::case_steps::{call, Exec, Kind, Out};
use anyhow::{bail, Result};
use std::ffi::{c_void, CString};

pub const SPECS: &[Spec] = &[
    Spec::new("module-load", &["file"], &[]),
    Spec::new("module-unload", &["module"], &[]),
    Spec::new("function", &["module", "name"], &[]),
    Spec::new(
        "launch",
        &["function"],
        &["grid", "block", "shared", "stream", "args"],
    ),
];

#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Load(String),
    Unload(Ptr),
    Function {
        module: Ptr,
        name: String,
    },
    Launch {
        function: Ptr,
        grid: Expr,
        block: Expr,
        shared: Option<Expr>,
        stream: Option<Ptr>,
        args: Vec<Expr>,
    },
}

pub fn parse(name: &str, a: &Args<'_>) -> Result<Op, Bad> {
    Ok(match name {
        "module-load" => Op::Load(a.word(0).value.clone()),
        "module-unload" => Op::Unload(a.ptr(0)?),
        "function" => Op::Function {
            module: a.ptr(0)?,
            name: a.word(1).value.clone(),
        },
        "launch" => {
            let mut args = Vec::new();
            if let Some(raw) = a.key("args") {
                let mut col = raw.col + "args=".len();
                for text in raw.value.split(',') {
                    args.push(a.expr_of(text, col)?);
                    col += text.len() + 1;
                }
            }
            Op::Launch {
                function: a.ptr(0)?,
                grid: a.need_key_expr("grid")?,
                block: a.need_key_expr("block")?,
                shared: a.key_expr("shared")?,
                stream: a.key_ptr("stream")?,
                args,
            }
        }
        _ => unreachable!("{name} is in SPECS"),
    })
}

pub fn run(op: &Op, x: &mut Exec<'_>) -> Result<Out> {
    let api = x.api;
    Ok(match op {
        Op::Load(file) => {
            let path = x.case_dir().join(file);
            let Ok(c) = CString::new(path.to_string_lossy().into_owned()) else {
                bail!("{} has a NUL in its name", path.display());
            };
            let mut m = std::ptr::null_mut();
            let r = call!(api, cuModuleLoad(&mut m, c.as_ptr()));
            x.bind(m as u64, Kind::Int);
            Out::code(r)
        }
        Op::Unload(m) => {
            let m = x.ptr(m)?;
            Out::code(call!(api, cuModuleUnload(m)))
        }
        Op::Function { module, name } => {
            let m = x.ptr(module)?;
            let Ok(c) = CString::new(name.as_str()) else {
                bail!("the kernel name has a NUL");
            };
            let mut f = std::ptr::null_mut();
            let r = call!(api, cuModuleGetFunction(&mut f, m, c.as_ptr()));
            x.bind(f as u64, Kind::Int);
            Out::code(r)
        }
        Op::Launch {
            function,
            grid,
            block,
            shared,
            stream,
            args,
        } => {
            let f = x.ptr(function)?;
            let (grid, block) = (x.eval(grid)? as u32, x.eval(block)? as u32);
            let shared = x.eval_or(shared, 0)? as u32;
            let stream = match stream {
                Some(s) => x.ptr(s)?,
                None => std::ptr::null_mut(),
            };
            // One 8-byte cell per parameter, read from its start: the kernel takes as
            // many bytes as its parameter is wide (little-endian, as on the GPU's host).
            let mut cells: Vec<u64> = Vec::with_capacity(args.len());
            for e in args {
                cells.push(x.eval(e)?);
            }
            let mut ptrs: Vec<*mut c_void> = cells
                .iter_mut()
                .map(|c| std::ptr::from_mut(c).cast::<c_void>())
                .collect();
            let params = if ptrs.is_empty() {
                std::ptr::null_mut()
            } else {
                ptrs.as_mut_ptr()
            };
            Out::code(call!(
                api,
                cuLaunchKernel(
                    f,
                    grid,
                    1,
                    1,
                    block,
                    1,
                    1,
                    shared,
                    stream,
                    params,
                    std::ptr::null_mut()
                )
            ))
        }
    })
}
