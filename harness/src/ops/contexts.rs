//! Contexts: the primary context of each device, created contexts, the current-context
//! stack, synchronisation and peer access.

use super::{Args, Expr, Ptr, Spec};
use crate::case::Bad;
use crate::case_steps::{call, Exec, Kind, Out};
use anyhow::Result;
use std::ffi::c_void;

pub const SPECS: &[Spec] = &[
    Spec::new("primary-retain", &["device"], &[]),
    Spec::new("primary-release", &["device"], &[]),
    Spec::new("primary-reset", &["device"], &[]),
    Spec::new("primary-state", &["device"], &[]),
    Spec::new("primary-set-flags", &["device", "flags"], &[]),
    Spec::new("ctx-create", &["device"], &["flags", "version"]),
    Spec::new("ctx-destroy", &["ctx"], &[]),
    Spec::new("set-current", &["ctx"], &[]),
    Spec::new("get-current", &[], &[]),
    Spec::new("push", &["ctx"], &[]),
    Spec::new("pop", &[], &[]),
    Spec::new("ctx-device", &[], &[]),
    Spec::new("synchronize", &[], &[]),
    Spec::new("enable-peer", &["ctx"], &["flags"]),
    Spec::new("disable-peer", &["ctx"], &[]),
];

/// Which cuCtxCreate: `_v2` (no parameters) or `_v4` (with CUctxCreateParams, NULL here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateVersion {
    V2,
    V4,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    PrimaryRetain {
        device: Expr,
    },
    PrimaryRelease {
        device: Expr,
    },
    PrimaryReset {
        device: Expr,
    },
    PrimaryState {
        device: Expr,
    },
    PrimarySetFlags {
        device: Expr,
        flags: Expr,
    },
    Create {
        device: Expr,
        flags: Option<Expr>,
        version: CreateVersion,
    },
    Destroy(Ptr),
    SetCurrent(Ptr),
    GetCurrent,
    Push(Ptr),
    Pop,
    Device,
    Synchronize,
    EnablePeer {
        ctx: Ptr,
        flags: Option<Expr>,
    },
    DisablePeer(Ptr),
}

pub fn parse(name: &str, a: &Args<'_>) -> Result<Op, Bad> {
    Ok(match name {
        "primary-retain" => Op::PrimaryRetain { device: a.expr(0)? },
        "primary-release" => Op::PrimaryRelease { device: a.expr(0)? },
        "primary-reset" => Op::PrimaryReset { device: a.expr(0)? },
        "primary-state" => Op::PrimaryState { device: a.expr(0)? },
        "primary-set-flags" => Op::PrimarySetFlags {
            device: a.expr(0)?,
            flags: a.expr(1)?,
        },
        "ctx-create" => Op::Create {
            device: a.expr(0)?,
            flags: a.key_expr("flags")?,
            version: match a.key_choice("version", &[2, 4])? {
                Some(2) => CreateVersion::V2,
                _ => CreateVersion::V4,
            },
        },
        "ctx-destroy" => Op::Destroy(a.ptr(0)?),
        "set-current" => Op::SetCurrent(a.ptr(0)?),
        "get-current" => Op::GetCurrent,
        "push" => Op::Push(a.ptr(0)?),
        "pop" => Op::Pop,
        "ctx-device" => Op::Device,
        "synchronize" => Op::Synchronize,
        "enable-peer" => Op::EnablePeer {
            ctx: a.ptr(0)?,
            flags: a.key_expr("flags")?,
        },
        "disable-peer" => Op::DisablePeer(a.ptr(0)?),
        _ => unreachable!("{name} is in SPECS"),
    })
}

pub fn run(op: &Op, x: &mut Exec<'_>) -> Result<Out> {
    let api = x.api;
    let null = std::ptr::null_mut::<c_void>;
    Ok(match op {
        Op::PrimaryRetain { device } => {
            let device = x.eval(device)? as i32;
            let mut c = null();
            let r = call!(api, cuDevicePrimaryCtxRetain(&mut c, device));
            x.bind(c as u64, Kind::Context);
            Out::with(r, vec![("ctx", x.ctx_name(c as u64))])
        }
        Op::PrimaryRelease { device } => {
            let device = x.eval(device)? as i32;
            Out::code(call!(api, cuDevicePrimaryCtxRelease_v2(device)))
        }
        Op::PrimaryReset { device } => {
            let device = x.eval(device)? as i32;
            Out::code(call!(api, cuDevicePrimaryCtxReset_v2(device)))
        }
        Op::PrimaryState { device } => {
            let device = x.eval(device)? as i32;
            let (mut f, mut active) = (0u32, 0i32);
            let r = call!(api, cuDevicePrimaryCtxGetState(device, &mut f, &mut active));
            Out::with(
                r,
                vec![("flags", f.to_string()), ("active", active.to_string())],
            )
        }
        Op::PrimarySetFlags { device, flags } => {
            let (device, flags) = (x.eval(device)? as i32, x.eval(flags)? as u32);
            Out::code(call!(api, cuDevicePrimaryCtxSetFlags_v2(device, flags)))
        }
        Op::Create {
            device,
            flags,
            version,
        } => {
            let flags = x.eval_or(flags, 0)? as u32;
            let device = x.eval(device)? as i32;
            let mut c = null();
            let r = match version {
                CreateVersion::V2 => call!(api, cuCtxCreate_v2(&mut c, flags, device)),
                CreateVersion::V4 => call!(
                    api,
                    cuCtxCreate_v4(&mut c, std::ptr::null_mut(), flags, device)
                ),
            };
            // The value may be a destroyed context's, reused: it is named anew.
            x.bind_new(c as u64, Kind::Context);
            Out::with(r, vec![("ctx", x.ctx_name(c as u64))])
        }
        Op::Destroy(ctx) => {
            let ctx = x.ptr(ctx)?;
            Out::code(call!(api, cuCtxDestroy_v2(ctx)))
        }
        Op::SetCurrent(ctx) => {
            let ctx = x.ptr(ctx)?;
            Out::code(call!(api, cuCtxSetCurrent(ctx)))
        }
        Op::GetCurrent => {
            let mut c = null();
            let r = call!(api, cuCtxGetCurrent(&mut c));
            Out::with(r, vec![("ctx", x.ctx_name(c as u64))])
        }
        Op::Push(ctx) => {
            let ctx = x.ptr(ctx)?;
            Out::code(call!(api, cuCtxPushCurrent_v2(ctx)))
        }
        Op::Pop => {
            let mut c = null();
            let r = call!(api, cuCtxPopCurrent_v2(&mut c));
            Out::with(r, vec![("ctx", x.ctx_name(c as u64))])
        }
        Op::Device => {
            let mut d = -1;
            let r = call!(api, cuCtxGetDevice(&mut d));
            Out::with(r, vec![("device", d.to_string())])
        }
        Op::Synchronize => Out::code(call!(api, cuCtxSynchronize())),
        Op::EnablePeer { ctx, flags } => {
            let (ctx, flags) = (x.ptr(ctx)?, x.eval_or(flags, 0)? as u32);
            Out::code(call!(api, cuCtxEnablePeerAccess(ctx, flags)))
        }
        Op::DisablePeer(ctx) => {
            let ctx = x.ptr(ctx)?;
            Out::code(call!(api, cuCtxDisablePeerAccess(ctx)))
        }
    })
}
