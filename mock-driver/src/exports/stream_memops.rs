//! Stream memory operations (cuda.h's group CUDA_MEMOP): cuStreamWaitValue32/64 and
//! cuStreamWriteValue32/64. cuda.h maps the names to the `_v2` exports (which refuse
//! CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER); the plain exports are the older v1 API, which
//! a device offers only where its CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 (and
//! _64_BIT_STREAM_MEM_OPS_V1, STREAM_WAIT_VALUE_NOR_V1) says so: the H200's profile says 0
//! (the v1 API needs the kernel module's NVreg_EnableStreamMemOPs=1), so they are refused
//! there with CUDA_ERROR_NOT_SUPPORTED, as the attributes announce. The model is
//! `model/stream_memops.rs`. cuStreamBatchMemOp and the graph's memory-operation nodes are
//! not emulated.

use super::Mock;
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

impl StreamMemoryOperationsApi for Mock {
    emulate! {
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
