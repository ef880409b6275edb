//! Device management (cuda.h's group CUDA_DEVICE, with its deprecated part): the
//! profile's devices, their names, attributes, memory and compute capability; and their
//! PCI bus ids (cuDeviceGetPCIBusId, cuDeviceGetByPCIBusId), which cuda.h files under
//! `MemoryApi`.

use super::Mock;
use crate::boundary::write_c_string;
use crate::model::error::*;
use cumock_abi::*;
use std::ffi::c_int;

impl DeviceApi for Mock {
    emulate! {
        fn cuDeviceGetCount(d; count) {
            count.write(d.device_count() as c_int)
        }

        // The device is looked for before the name's room is checked.
        fn cuDeviceGetName(d; #[late] name, _len, dev) {
            let p = d.device(dev)?;
            write_c_string(name.nonempty()?, &p.name);
            Ok(())
        }

        fn cuDeviceGetAttribute(d; pi, attrib, dev) {
            let p = d.device(dev)?;
            let v = p
                .attribute(attrib)
                .ok_or_else(|| invalid(format!("{attrib} is not a CUdevice_attribute")))?;
            pi.write(v)
        }

        fn cuDeviceTotalMem_v2(d; bytes, dev) {
            bytes.write(d.device(dev)?.total_mem as usize)
        }

        fn cuDeviceGetUuid_v2(d; uuid, dev) {
            let p = d.device(dev)?;
            let bytes = crate::model::profile::uuid_bytes(&p.uuid).expect("validated profile");
            uuid.write(CUuuid { bytes })
        }

        /// The mock makes no context with limited SMs (cuCtxCreate_v3 refuses affinity
        /// parameters), so it says none can be made: 0 for SM_COUNT, the only type.
        fn cuDeviceGetExecAffinitySupport(d; pi, _type_, dev) {
            // Observed: any type is answered (not supported), an unknown one too.
            d.device(dev)?;
            pi.write(0)
        }

        /// The H200's rule (ci/explore/tex1d_linear_width.c, every format and channel count
        /// cuda.h names, runs/2026-12-03-h200-session15/explore): 4 GiB of elements, at most
        /// 2^30 of them (1-, 2- and 4-byte elements 2^30, 8-byte 2^29, 16-byte 2^28); the
        /// device attribute CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH says 2^28
        /// whatever the element.
        /// Of cuda.h's other formats the H200 answers for one channel of BC4 (8-byte blocks)
        /// and Y410 (4 bytes) only; every other one, and more channels of those, is
        /// CUDA_ERROR_INVALID_VALUE here.
        fn cuDeviceGetTexture1DLinearMaxWidth(d; max_width_in_elements, format, num_channels, dev) {
            d.device(dev)?;
            let element_bytes = match (format, num_channels) {
                (0x97 | 0x98, 1) => 8,
                (0xa9, 1) => 4,
                _ => crate::model::textures::channel_format(format as i32, num_channels)
                    .map_err(|e| invalid(e.message))?
                    .texel_bytes(),
            };
            let width = crate::model::textures::linear_max_width(element_bytes);
            max_width_in_elements.write(width as usize)
        }

        /// Deprecated: CUdevprop's fields are device attributes.
        fn cuDeviceGetProperties(d; prop, dev) {
            let p = d.device(dev)?;
            let a = |name: &str| {
                p.attributes
                    .get(&format!("CU_DEVICE_ATTRIBUTE_{name}"))
                    .copied()
                    .unwrap_or(0)
            };
            // cuda.h's CUdevprop: 14 ints, in this order.
            let fields = [
                a("MAX_THREADS_PER_BLOCK"),
                a("MAX_BLOCK_DIM_X"),
                a("MAX_BLOCK_DIM_Y"),
                a("MAX_BLOCK_DIM_Z"),
                a("MAX_GRID_DIM_X"),
                a("MAX_GRID_DIM_Y"),
                a("MAX_GRID_DIM_Z"),
                a("MAX_SHARED_MEMORY_PER_BLOCK"),
                a("TOTAL_CONSTANT_MEMORY"),
                a("WARP_SIZE"),
                a("MAX_PITCH"),
                a("MAX_REGISTERS_PER_BLOCK"),
                a("CLOCK_RATE"),
                a("TEXTURE_ALIGNMENT"),
            ];
            // Safety: CUdevprop is those 14 ints (cuda.h), opaque in cumock_abi.
            unsafe { prop.cast::<[c_int; 14]>() }.write(fields)
        }

        /// No atomic operation is native over the H200's link to the host
        /// (CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED is 0 in its profile): every
        /// operation's capabilities are 0, once the operations are checked.
        fn cuDeviceGetHostAtomicCapabilities(d; #[late] capabilities, #[slice] operations, _count, dev) {
            let p = d.device(dev)?;
            let native = p
                .attributes
                .get("CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED")
                .copied()
                .unwrap_or(0);
            if native != 0 {
                return Err(not_supported("a device with native host atomics is not emulated"));
            }
            super::write_atomic_capabilities(capabilities, operations, |_| 0)
        }

        // The device's memory pools (the model is `model::pools`, the pools' own calls are
        // in `malloc_async.rs`).

        fn cuDeviceGetDefaultMemPool(d; pool_out, dev) {
            pool_out.write_key(d.default_mem_pool(dev)?)
        }

        fn cuDeviceGetMemPool(d; pool, dev) {
            pool.write_key(d.current_mem_pool(dev)?)
        }

        fn cuDeviceSetMemPool(d; dev, pool) {
            d.set_current_mem_pool(dev, pool)
        }
    }

    // The device is checked before the out-parameters (`#[late]`).
    emulate! {
        fn cuDeviceGet(d; #[late] device, ordinal) {
            d.device(ordinal)?;
            device.write(ordinal)
        }

        fn cuDeviceComputeCapability(d; #[late] major, #[late] minor, dev) {
            let p = d.device(dev)?;
            major.write(
                p.attributes
                    .get("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR")
                    .copied()
                    .unwrap_or(0),
            )?;
            minor.write(
                p.attributes
                    .get("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR")
                    .copied()
                    .unwrap_or(0),
            )
        }
    }
}

// ---- PCI bus ids: cuda.h files them under `MemoryApi`, whose methods (exports/mod.rs)
// call these.

emulate! {

    // The device is looked for before the id's room is checked.
    pub(super) fn cuDeviceGetPCIBusId(d; #[late] pci_bus_id, _len, dev) {
        let p = d.device(dev)?;
        write_c_string(pci_bus_id.nonempty()?, &p.pci_bus_id);
        Ok(())
    }

    // The device is looked for before the out-parameter is checked.
    pub(super) fn cuDeviceGetByPCIBusId(d; #[late] dev, pci_bus_id) {
        let want = pci_bus_id.to_string_lossy().to_ascii_uppercase();
        let found = d.profile.devices.iter().position(|p| {
            let id = p.pci_bus_id.to_ascii_uppercase();
            id == want
                || id.ends_with(&format!(":{want}"))
                || id.trim_start_matches('0') == want.trim_start_matches('0')
        });
        match found {
            Some(i) => dev.write(i as CUdevice),
            None => Err(invalid_device(format!("no device at PCI bus id {want}"))),
        }
    }
}
