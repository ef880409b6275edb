//! Streams and events.

use super::{Args, Expr, Ptr, Spec};
use crate::case::Bad;
use crate::case_steps::{call, Exec, Kind, Out};
use anyhow::Result;

pub const SPECS: &[Spec] = &[
    Spec::new("stream-create", &[], &["flags"]),
    Spec::new("stream-destroy", &["stream"], &[]),
    Spec::new("stream-sync", &["stream"], &[]),
    Spec::new("event-create", &[], &["flags"]),
    Spec::new("event-record", &["event", "stream"], &[]),
    Spec::new("event-sync", &["event"], &[]),
    Spec::new("event-destroy", &["event"], &[]),
    Spec::new("ctx-record-event", &["ctx", "event"], &[]),
    Spec::new("ctx-wait-event", &["ctx", "event"], &[]),
];

#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    StreamCreate {
        flags: Option<Expr>,
    },
    StreamDestroy(Ptr),
    StreamSync(Ptr),
    EventCreate {
        flags: Option<Expr>,
    },
    EventRecord {
        event: Ptr,
        stream: Ptr,
    },
    EventSync(Ptr),
    EventDestroy(Ptr),
    /// cuCtxRecordEvent.
    CtxRecordEvent {
        ctx: Ptr,
        event: Ptr,
    },
    /// cuCtxWaitEvent.
    CtxWaitEvent {
        ctx: Ptr,
        event: Ptr,
    },
}

pub fn parse(name: &str, a: &Args<'_>) -> Result<Op, Bad> {
    Ok(match name {
        "stream-create" => Op::StreamCreate {
            flags: a.key_expr("flags")?,
        },
        "stream-destroy" => Op::StreamDestroy(a.ptr(0)?),
        "stream-sync" => Op::StreamSync(a.ptr(0)?),
        "event-create" => Op::EventCreate {
            flags: a.key_expr("flags")?,
        },
        "event-record" => Op::EventRecord {
            event: a.ptr(0)?,
            stream: a.ptr(1)?,
        },
        "event-sync" => Op::EventSync(a.ptr(0)?),
        "event-destroy" => Op::EventDestroy(a.ptr(0)?),
        "ctx-record-event" => Op::CtxRecordEvent {
            ctx: a.ptr(0)?,
            event: a.ptr(1)?,
        },
        "ctx-wait-event" => Op::CtxWaitEvent {
            ctx: a.ptr(0)?,
            event: a.ptr(1)?,
        },
        _ => unreachable!("{name} is in SPECS"),
    })
}

pub fn run(op: &Op, x: &mut Exec<'_>) -> Result<Out> {
    let api = x.api;
    Ok(match op {
        Op::StreamCreate { flags } => {
            let flags = x.eval_or(flags, 0)? as u32;
            let mut s = std::ptr::null_mut();
            let r = call!(api, cuStreamCreate(&mut s, flags));
            x.bind(s as u64, Kind::Stream);
            Out::code(r)
        }
        Op::StreamDestroy(s) => {
            let s = x.ptr(s)?;
            Out::code(call!(api, cuStreamDestroy_v2(s)))
        }
        Op::StreamSync(s) => {
            let s = x.ptr(s)?;
            Out::code(call!(api, cuStreamSynchronize(s)))
        }
        Op::EventCreate { flags } => {
            let flags = x.eval_or(flags, 0)? as u32;
            let mut e = std::ptr::null_mut();
            let r = call!(api, cuEventCreate(&mut e, flags));
            x.bind(e as u64, Kind::Event);
            Out::code(r)
        }
        Op::EventRecord { event, stream } => {
            let (e, s) = (x.ptr(event)?, x.ptr(stream)?);
            Out::code(call!(api, cuEventRecord(e, s)))
        }
        Op::EventSync(e) => {
            let e = x.ptr(e)?;
            Out::code(call!(api, cuEventSynchronize(e)))
        }
        Op::EventDestroy(e) => {
            let e = x.ptr(e)?;
            Out::code(call!(api, cuEventDestroy_v2(e)))
        }
        Op::CtxRecordEvent { ctx, event } => {
            let (c, e) = (x.ptr(ctx)?, x.ptr(event)?);
            Out::code(call!(api, cuCtxRecordEvent(c, e)))
        }
        Op::CtxWaitEvent { ctx, event } => {
            let (c, e) = (x.ptr(ctx)?, x.ptr(event)?);
            Out::code(call!(api, cuCtxWaitEvent(c, e)))
        }
    })
}
