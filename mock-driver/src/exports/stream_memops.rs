//! Stream memory operations (cuda.h's group CUDA_MEMOP): cuStreamWaitValue32/64 and
//! cuStreamWriteValue32/64. cuda.h maps the names to the `_v2` exports (which refuse
//! CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER); the plain exports are the older v1 API, which
//! a device offers only where its CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 (and
//! _64_BIT_STREAM_MEM_OPS_V1, STREAM_WAIT_VALUE_NOR_V1) says so: the H200's profile says 0
//! (the v1 API needs the kernel module's NVreg_EnableStreamMemOPs=1), so they are refused
//! there with CUDA_ERROR_NOT_SUPPORTED, as the attributes announce. The model is
//! `model/stream_memops.rs`. cuStreamBatchMemOp_v2 enqueues its operations in order,
//! checked all before any is queued. On a capturing stream each call becomes a batch
//! memory-operation node of the capture's graph (as the driver captures them), which
//! cuGraphAddBatchMemOpNode also makes (`mem_op_node`, for exports/graphs.rs).

use super::Mock;
use crate::boundary::{device_ptr, input, Handle};
use crate::model::error::*;
use crate::model::graphs::{MemOpNode, NodeOp};
use crate::model::ids::{ContextId, StreamId};
use crate::model::stream_memops::{MemOp, WaitCondition, WRITE_VALUE_NO_MEMORY_BARRIER};
use crate::model::Driver;
use cumock_abi::*;
use std::ffi::c_uint;
use std::sync::Arc;

/// A wait's condition from its flags, by the device's (of context `ctx`, None: the
/// current one) CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES.
fn condition(d: &Driver, ctx: Option<ContextId>, flags: u32) -> CuResult<WaitCondition> {
    let device = d.ctx_device(ctx)?;
    let can_flush = d.profile.devices[device]
        .attributes
        .get("CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES")
        .is_some_and(|&v| v != 0);
    WaitCondition::of_flags(flags, can_flush)
}

/// A write's flags: CU_STREAM_WRITE_VALUE_DEFAULT, or NO_MEMORY_BARRIER where the export
/// takes it (the memory fence it drops orders nothing more in the mock, whose stream runs
/// its jobs one after another).
fn check_write_flags(flags: u32, barrier_optional: bool) -> CuResult<()> {
    match flags {
        0 => Ok(()),
        WRITE_VALUE_NO_MEMORY_BARRIER if barrier_optional => Ok(()),
        WRITE_VALUE_NO_MEMORY_BARRIER => Err(invalid(
            "CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER is not supported by the _v2 API (cuda.h)",
        )),
        other => Err(invalid(format!(
            "flags {other:#x} are not CUstreamWriteValue_flags"
        ))),
    }
}

/// The v1 API on the current device: refused unless its profile's attribute `name`
/// (a CU_DEVICE_ATTRIBUTE_..._V1) says it is there.
fn v1_offered(d: &Driver, name: &str) -> CuResult<()> {
    let device = d.ctx_device(None)?;
    let key = format!("CU_DEVICE_ATTRIBUTE_{name}");
    if d.profile.devices[device]
        .attributes
        .get(&key)
        .is_some_and(|&v| v != 0)
    {
        return Ok(());
    }
    Err(not_supported(format!(
        "the v1 stream memory operations: the device's {key} is 0 (use the _v2 exports, as cuda.h's names do)"
    )))
}

/// `CUstreamBatchMemOpParams` (a 48-byte union) as six words: the operation's tag, its
/// address, value and flags (a barrier's flags share the tag's word).
type Words = [u64; 6];

/// The words of a wait or write call (CU_STREAM_MEM_OP_WAIT_VALUE_32 1, _64 4,
/// WRITE_VALUE_32 2, _64 5), as cuStreamBatchMemOp would take it.
fn words(operation: u64, addr: CUdeviceptr, value: u64, flags: u32) -> Words {
    [operation, addr, value, u64::from(flags), 0, 0]
}

/// Reads and checks one operation (`words`: the union as 6 u64s), on the device of
/// context `ctx` (None: the current one). `barrier_optional`: the v1 API, which takes
/// CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER.
fn mem_op(
    d: &Driver,
    ctx: Option<ContextId>,
    words: Words,
    barrier_optional: bool,
) -> CuResult<MemOp> {
    let operation = words[0] as u32;
    let (addr, value32, value64, flags) = (words[1], words[2] as u32, words[2], words[3] as u32);
    let addr = device_ptr(addr);
    Ok(match operation {
        // CU_STREAM_MEM_OP_WAIT_VALUE_32, _64
        1 | 4 => {
            let wide = operation == 4;
            let value = if wide { value64 } else { u64::from(value32) };
            let condition = condition(d, ctx, flags)?;
            MemOp::Wait {
                addr,
                value,
                wide,
                condition,
            }
        }
        // CU_STREAM_MEM_OP_WRITE_VALUE_32, _64
        2 | 5 => {
            let wide = operation == 5;
            let value = if wide { value64 } else { u64::from(value32) };
            check_write_flags(flags, barrier_optional)?;
            MemOp::Write { addr, value, wide }
        }
        // CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES
        3 => {
            return Err(not_supported(
                "CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES: the device cannot flush remote writes \
                 (CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES is 0)",
            ))
        }
        // CU_STREAM_MEM_OP_BARRIER: flags at the second word's place (a u32 after the tag).
        6 => match (words[0] >> 32) as u32 {
            0 | 1 => MemOp::Barrier,
            other => {
                return Err(invalid(format!(
                    "flags {other:#x} are not a CUstreamMemoryBarrier_flags"
                )))
            }
        },
        other => return Err(invalid(format!("{other} is not a CUstreamBatchMemOpType"))),
    })
}

/// The operations of an array, each checked (its flags, then its word on the device of
/// `ctx`), none used before all are.
fn mem_ops(
    d: &Driver,
    ctx: Option<ContextId>,
    all: &[Words],
    barrier_optional: bool,
) -> CuResult<Vec<MemOp>> {
    let at =
        |i: usize| move |e: CuError| CuError::new(e.code, format!("operation {i}: {}", e.message));
    let label = all.len() > 1;
    let ops = all
        .iter()
        .enumerate()
        .map(|(i, w)| {
            mem_op(d, ctx, *w, barrier_optional).map_err(|e| if label { at(i)(e) } else { e })
        })
        .collect::<CuResult<Vec<_>>>()?;
    Ok(ops)
}

/// Checks each operation's word on the device of `ctx` (None: the current one).
fn check_words(d: &Driver, ctx: Option<ContextId>, ops: &[MemOp]) -> CuResult<usize> {
    let mut device = d.ctx_device(ctx)?;
    for op in ops {
        if let MemOp::Wait { addr, wide, .. } | MemOp::Write { addr, wide, .. } = *op {
            device = d.check_mem_op_word(ctx, addr, wide)?;
        }
    }
    Ok(device)
}

/// Stream memory operations issued on `stream`: queued in their order, or, on a
/// capturing stream, one batch memory-operation node of the capture's graph.
fn issue(
    d: &'static Driver,
    stream: StreamId,
    all: Vec<Words>,
    barrier_optional: bool,
) -> CuResult<()> {
    let ops = mem_ops(d, None, &all, barrier_optional)?;
    d.stream_check(stream)?;
    if d.capture_of(stream)?.is_some() {
        let ctx = d
            .ctx_current()
            .ok_or_else(|| invalid_context("no current context"))?;
        let device = check_words(d, Some(ctx), &ops)?;
        let node = MemOpNode {
            ctx,
            device,
            ops,
            given: all,
            flags: 0,
        };
        return d.capture_node(stream, NodeOp::BatchMemOp(Arc::new(node)));
    }
    for op in &ops {
        if let MemOp::Wait { addr, wide, .. } | MemOp::Write { addr, wide, .. } = *op {
            d.check_mem_op(stream, addr, wide)?;
        }
    }
    for op in ops {
        match op {
            MemOp::Wait {
                addr,
                value,
                wide,
                condition,
            } => d.stream_wait_value(stream, addr, value, wide, condition)?,
            MemOp::Write { addr, value, wide } => {
                d.stream_write_value(stream, addr, value, wide)?
            }
            MemOp::Barrier => {}
        }
    }
    Ok(())
}

/// `CUDA_BATCH_MEM_OP_NODE_PARAMS` (v1 and v2 are laid out alike).
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct MemOpNodeParams {
    pub ctx: CUcontext,
    pub count: c_uint,
    pub param_array: *mut Words,
    pub flags: c_uint,
}

/// A batch memory-operation node's work from `CUDA_BATCH_MEM_OP_NODE_PARAMS`
/// (cuGraphAddBatchMemOpNode, its setters, cuGraphAddNode): the operations copied (the
/// program may free its array), each checked as cuStreamBatchMemOp_v2 checks it, on the
/// device of the node's context (NULL: the current one). Not observed on the H200 yet
/// (probe api_gaps2): a count of 0 is refused, as a node with nothing to do.
///
/// # Safety
/// `p` is NULL or the program's struct, whose `paramArray` holds `count` unions.
pub(super) unsafe fn mem_op_node(p: *const MemOpNodeParams) -> CuResult<NodeOp> {
    let d = crate::boundary::drv()?;
    // Safety: the caller's contract.
    let p = unsafe { input(p, "nodeParams")? };
    // Recorded on the H200 (probe api_gaps2): a node's context is named, NULL is
    // CUDA_ERROR_INVALID_VALUE (not the current context).
    let Some(ctx) = p.ctx.key() else {
        return Err(invalid(
            "nodeParams->ctx is NULL: a batch memory-operation node names its context",
        ));
    };
    d.ctx_device(Some(ctx))?;
    if p.flags != 0 {
        return Err(invalid(format!(
            "nodeParams->flags {:#x} must be 0",
            p.flags
        )));
    }
    // Recorded on the H200 (probe api_gaps2, "add, count 0"): a node of no operations is
    // taken; it does nothing when it runs.
    if p.count >= 256 {
        return Err(invalid(format!(
            "nodeParams->count {}: 0 to 255 operations",
            p.count
        )));
    }
    // Safety: the caller's contract: paramArray holds count 48-byte unions.
    let all = unsafe {
        crate::boundary::slice(
            p.param_array.cast_const(),
            p.count as usize,
            "nodeParams->paramArray",
        )
    }?
    .to_vec();
    let ops = mem_ops(d, Some(ctx), &all, false)?;
    let device = check_words(d, Some(ctx), &ops)?;
    Ok(NodeOp::BatchMemOp(Arc::new(MemOpNode {
        ctx,
        device,
        ops,
        given: all,
        flags: p.flags,
    })))
}

impl StreamMemoryOperationsApi for Mock {
    emulate! {
        /// cuda.h: fewer than 256 operations, flags 0; all are checked (their words'
        /// alignment and memory too) before the first is queued.
        fn cuStreamBatchMemOp_v2(d; stream, count, #[raw] param_array, flags) {
            if flags != 0 {
                return Err(invalid(format!("flags {flags:#x} must be 0")));
            }
            if count >= 256 {
                return Err(invalid(format!("count {count}: at most 255 operations")));
            }
            // Observed: an empty batch succeeds, doing nothing (probe api_gaps).
            if count == 0 {
                return d.stream_check(stream);
            }
            // Safety: cuda.h's contract: paramArray holds count 48-byte unions.
            let all = unsafe {
                crate::boundary::slice(
                    param_array.cast::<Words>().cast_const(),
                    count as usize,
                    "paramArray",
                )
            }?;
            issue(d, stream, all.to_vec(), false)
        }

        fn cuStreamBatchMemOp(d; stream, count, #[raw] param_array, flags) {
            v1_offered(d, "CAN_USE_STREAM_MEM_OPS_V1")?;
            Self::cuStreamBatchMemOp_v2(CUstream::of(stream), count, param_array, flags)
        }

        fn cuStreamWaitValue32_v2(d; stream, #[raw] addr, value, flags) {
            issue(d, stream, vec![words(1, addr, u64::from(value), flags)], false)
        }

        fn cuStreamWaitValue64_v2(d; stream, #[raw] addr, value, flags) {
            issue(d, stream, vec![words(4, addr, value, flags)], false)
        }

        fn cuStreamWriteValue32_v2(d; stream, #[raw] addr, value, flags) {
            issue(d, stream, vec![words(2, addr, u64::from(value), flags)], false)
        }

        fn cuStreamWriteValue64_v2(d; stream, #[raw] addr, value, flags) {
            issue(d, stream, vec![words(5, addr, value, flags)], false)
        }

        fn cuStreamWaitValue32(d; stream, #[raw] addr, value, flags) {
            v1_offered(d, "CAN_USE_STREAM_MEM_OPS_V1")?;
            if condition(d, None, flags)? == WaitCondition::Nor {
                v1_offered(d, "CAN_USE_STREAM_WAIT_VALUE_NOR_V1")?;
            }
            issue(d, stream, vec![words(1, addr, u64::from(value), flags)], true)
        }

        fn cuStreamWaitValue64(d; stream, #[raw] addr, value, flags) {
            v1_offered(d, "CAN_USE_64_BIT_STREAM_MEM_OPS_V1")?;
            if condition(d, None, flags)? == WaitCondition::Nor {
                v1_offered(d, "CAN_USE_STREAM_WAIT_VALUE_NOR_V1")?;
            }
            issue(d, stream, vec![words(4, addr, value, flags)], true)
        }

        fn cuStreamWriteValue32(d; stream, #[raw] addr, value, flags) {
            v1_offered(d, "CAN_USE_STREAM_MEM_OPS_V1")?;
            issue(d, stream, vec![words(2, addr, u64::from(value), flags)], true)
        }

        fn cuStreamWriteValue64(d; stream, #[raw] addr, value, flags) {
            v1_offered(d, "CAN_USE_64_BIT_STREAM_MEM_OPS_V1")?;
            issue(d, stream, vec![words(5, addr, value, flags)], true)
        }
    }
}
