//! Device management (cuda.h's group CUDA_DEVICE, with its deprecated part): the
//! profile's devices, their names, attributes, memory and compute capability.

use super::{copy_c_string, Mock};
use crate::boundary::{Handle, drv, out};
use crate::model::error::*;
use cumock_abi::*;
use std::ffi::{c_char, c_int};

impl DeviceApi for Mock {
    unsafe fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int) -> CuResult<()> {
        let d = drv()?;
        d.device(ordinal)?;
        out(device, ordinal)
    }

    unsafe fn cuDeviceGetCount(count: *mut c_int) -> CuResult<()> {
        out(count, drv()?.device_count() as c_int)
    }

    unsafe fn cuDeviceGetName(name: *mut c_char, len: c_int, dev: CUdevice) -> CuResult<()> {
        let d = drv()?.device(dev)?;
        if name.is_null() || len <= 0 {
            return Err(invalid("name is NULL or len is not positive"));
        }
        copy_c_string(&d.name, name, len as usize);
        Ok(())
    }

    unsafe fn cuDeviceGetAttribute(pi: *mut c_int, attrib: c_int, dev: CUdevice) -> CuResult<()> {
        let d = drv()?;
        if pi.is_null() {
            return Err(invalid("pi is NULL"));
        }
        let p = d.device(dev)?;
        let v = p
            .attribute(attrib)
            .ok_or_else(|| invalid(format!("{attrib} is not a CUdevice_attribute")))?;
        out(pi, v)
    }

    unsafe fn cuDeviceTotalMem_v2(bytes: *mut usize, dev: CUdevice) -> CuResult<()> {
        let d = drv()?;
        if bytes.is_null() {
            return Err(invalid("bytes is NULL"));
        }
        out(bytes, d.device(dev)?.total_mem as usize)
    }

    unsafe fn cuDeviceGetUuid_v2(uuid: *mut CUuuid, dev: CUdevice) -> CuResult<()> {
        let d = drv()?;
        if uuid.is_null() {
            return Err(invalid("uuid is NULL"));
        }
        let p = d.device(dev)?;
        let bytes = crate::model::profile::uuid_bytes(&p.uuid).expect("validated profile");
        out(uuid, CUuuid { bytes })
    }

    unsafe fn cuDeviceComputeCapability(
        major: *mut c_int,
        minor: *mut c_int,
        dev: CUdevice,
    ) -> CuResult<()> {
        let d = drv()?.device(dev)?;
        out(
            major,
            d.attributes
                .get("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR")
                .copied()
                .unwrap_or(0),
        )?;
        out(
            minor,
            d.attributes
                .get("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR")
                .copied()
                .unwrap_or(0),
        )
    }

    // The device's memory pools (the model is `model::pools`, the pools' own calls are in
    // `malloc_async.rs`).

    unsafe fn cuDeviceGetDefaultMemPool(
        pool_out: *mut CUmemoryPool,
        dev: CUdevice,
    ) -> CuResult<()> {
        let d = drv()?;
        if pool_out.is_null() {
            return Err(invalid("pool_out is NULL"));
        }
        out(pool_out, CUmemoryPool::of(d.default_mem_pool(dev)?))
    }

    unsafe fn cuDeviceGetMemPool(pool: *mut CUmemoryPool, dev: CUdevice) -> CuResult<()> {
        let d = drv()?;
        if pool.is_null() {
            return Err(invalid("pool is NULL"));
        }
        out(pool, CUmemoryPool::of(d.current_mem_pool(dev)?))
    }

    unsafe fn cuDeviceSetMemPool(dev: CUdevice, pool: CUmemoryPool) -> CuResult<()> {
        drv()?.set_current_mem_pool(dev, Handle::key(pool))
    }
}
