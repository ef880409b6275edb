//! Stream memory operations (cuda.h's group CUDA_MEMOP): cuStreamWaitValue32/64 and
//! cuStreamWriteValue32/64. cuda.h maps the names to the `_v2` exports (which refuse
//! CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER); the plain exports are the older v1 API, which
//! a device offers only where its CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 (and
//! _64_BIT_STREAM_MEM_OPS_V1, STREAM_WAIT_VALUE_NOR_V1) says so: the H200's profile says 0
//! (the v1 API needs the kernel module's NVreg_EnableStreamMemOPs=1), so they are refused
//! there with CUDA_ERROR_NOT_SUPPORTED, as the attributes announce. The model is
//! `model/stream_memops.rs`. cuStreamBatchMemOp_v2 enqueues its operations in order,
//! checked all before any is queued; the graph's memory-operation nodes are not emulated.

use super::Mock;
use crate::boundary::Handle;
use crate::model::error::*;
use crate::model::stream_memops::{WaitCondition, WRITE_VALUE_NO_MEMORY_BARRIER};
use crate::model::Driver;
use cumock_abi::*;

/// A wait's condition from its flags, by the current device's
/// CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES.
fn condition(d: &Driver, flags: u32) -> CuResult<WaitCondition> {
    let device = d.ctx_device(None)?;
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

/// One operation of cuStreamBatchMemOp, as cuda.h's CUstreamBatchMemOpParams (a 48-byte
/// union) lays it out.
#[derive(Debug, Clone, Copy)]
enum BatchOp {
    Wait {
        addr: CUdeviceptr,
        value: u64,
        wide: bool,
        condition: WaitCondition,
    },
    Write {
        addr: CUdeviceptr,
        value: u64,
        wide: bool,
    },
    /// CU_STREAM_MEM_OP_BARRIER: the mock's stream runs its jobs one after another, each
    /// write done before the next job starts, so a barrier orders nothing more.
    Barrier,
}

/// Reads and checks operation `i` of a batch (`words`: the union as 6 u64s).
fn batch_op(d: &Driver, i: usize, words: [u64; 6]) -> CuResult<BatchOp> {
    let operation = words[0] as u32;
    let (addr, value32, value64, flags) = (words[1], words[2] as u32, words[2], words[3] as u32);
    let at = |e: CuError| CuError::new(e.code, format!("operation {i}: {}", e.message));
    Ok(match operation {
        // CU_STREAM_MEM_OP_WAIT_VALUE_32, _64
        1 | 4 => {
            let wide = operation == 4;
            let value = if wide { value64 } else { u64::from(value32) };
            let condition = condition(d, flags).map_err(at)?;
            BatchOp::Wait {
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
            check_write_flags(flags, false).map_err(at)?;
            BatchOp::Write { addr, value, wide }
        }
        // CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES
        3 => {
            return Err(not_supported(format!(
                "operation {i}: CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES: the device cannot flush \
                 remote writes (CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES is 0)"
            )))
        }
        // CU_STREAM_MEM_OP_BARRIER: flags at the second word's place (a u32 after the tag).
        6 => match (words[0] >> 32) as u32 {
            0 | 1 => BatchOp::Barrier,
            other => {
                return Err(invalid(format!(
                    "operation {i}: flags {other:#x} are not a CUstreamMemoryBarrier_flags"
                )))
            }
        },
        other => {
            return Err(invalid(format!(
                "operation {i}: {other} is not a CUstreamBatchMemOpType"
            )))
        }
    })
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
            if param_array.is_null() {
                return Err(invalid("paramArray is NULL"));
            }
            // Safety: cuda.h's contract: paramArray holds count 48-byte unions.
            let words = unsafe {
                std::slice::from_raw_parts(param_array.cast::<[u64; 6]>().cast_const(), count as usize)
            };
            let ops = words
                .iter()
                .enumerate()
                .map(|(i, w)| batch_op(d, i, *w))
                .collect::<CuResult<Vec<_>>>()?;
            d.stream_check(stream)?;
            for op in &ops {
                if let BatchOp::Wait { addr, wide, .. } | BatchOp::Write { addr, wide, .. } = *op {
                    d.check_mem_op(stream, crate::boundary::device_ptr(addr), wide)?;
                }
            }
            for op in ops {
                match op {
                    BatchOp::Wait { addr, value, wide, condition } => {
                        d.stream_wait_value(stream, crate::boundary::device_ptr(addr), value, wide, condition)?
                    }
                    BatchOp::Write { addr, value, wide } => {
                        d.stream_write_value(stream, crate::boundary::device_ptr(addr), value, wide)?
                    }
                    BatchOp::Barrier => {}
                }
            }
            Ok(())
        }

        fn cuStreamBatchMemOp(d; stream, count, #[raw] param_array, flags) {
            v1_offered(d, "CAN_USE_STREAM_MEM_OPS_V1")?;
            Self::cuStreamBatchMemOp_v2(CUstream::of(stream), count, param_array, flags)
        }

        fn cuStreamWaitValue32_v2(d; stream, addr, value, flags) {
            let c = condition(d, flags)?;
            d.stream_wait_value(stream, addr, u64::from(value), false, c)
        }

        fn cuStreamWaitValue64_v2(d; stream, addr, value, flags) {
            let c = condition(d, flags)?;
            d.stream_wait_value(stream, addr, value, true, c)
        }

        fn cuStreamWriteValue32_v2(d; stream, addr, value, flags) {
            check_write_flags(flags, false)?;
            d.stream_write_value(stream, addr, u64::from(value), false)
        }

        fn cuStreamWriteValue64_v2(d; stream, addr, value, flags) {
            check_write_flags(flags, false)?;
            d.stream_write_value(stream, addr, value, true)
        }

        fn cuStreamWaitValue32(d; stream, addr, value, flags) {
            v1_offered(d, "CAN_USE_STREAM_MEM_OPS_V1")?;
            let c = condition(d, flags)?;
            if c == WaitCondition::Nor {
                v1_offered(d, "CAN_USE_STREAM_WAIT_VALUE_NOR_V1")?;
            }
            d.stream_wait_value(stream, addr, u64::from(value), false, c)
        }

        fn cuStreamWaitValue64(d; stream, addr, value, flags) {
            v1_offered(d, "CAN_USE_64_BIT_STREAM_MEM_OPS_V1")?;
            let c = condition(d, flags)?;
            if c == WaitCondition::Nor {
                v1_offered(d, "CAN_USE_STREAM_WAIT_VALUE_NOR_V1")?;
            }
            d.stream_wait_value(stream, addr, value, true, c)
        }

        fn cuStreamWriteValue32(d; stream, addr, value, flags) {
            v1_offered(d, "CAN_USE_STREAM_MEM_OPS_V1")?;
            check_write_flags(flags, true)?;
            d.stream_write_value(stream, addr, u64::from(value), false)
        }

        fn cuStreamWriteValue64(d; stream, addr, value, flags) {
            v1_offered(d, "CAN_USE_64_BIT_STREAM_MEM_OPS_V1")?;
            check_write_flags(flags, true)?;
            d.stream_write_value(stream, addr, value, true)
        }
    }
}
