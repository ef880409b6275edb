//! Device management (cuda.h's group CUDA_DEVICE, with its deprecated part): the
//! profile's devices, their names, attributes, memory and compute capability; and their
//! PCI bus ids (cuDeviceGetPCIBusId, cuDeviceGetByPCIBusId) and asynchronous
//! notifications (cuDeviceRegisterAsyncNotification), which cuda.h files under
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

        /// The 32-bit first version: a size past 4 GiB saturates (the H200's 140 GiB is
        /// 0xFFFFFFFF, probe api_gaps3 device-deprecated).
        fn cuDeviceTotalMem(d; bytes, dev) {
            let total = d.device(dev)?.total_mem;
            bytes.write(u32::try_from(total).unwrap_or(u32::MAX))
        }

        /// Every write the mock's devices make is in the host's memory, seen by all at
        /// once: nothing is left to flush. What the H200 takes (probe api_gaps3,
        /// rdma-flush): the current context, to its owner or to all devices.
        fn cuFlushGPUDirectRDMAWrites(d; target, scope) {
            d.ctx_device(None)?;
            // CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX; _TO_OWNER, _TO_ALL_DEVICES.
            if target != 0 || !matches!(scope, 100 | 200) {
                return Err(invalid(format!(
                    "target {target}, scope {scope}: the current context (0), to its owner \
                     (100) or to all devices (200)"
                )));
            }
            Ok(())
        }

        /// A LUID is Windows' (WDDM) alone: on Linux the H200 answers CUDA_ERROR_NOT_SUPPORTED,
        /// after the device is checked (probe api_gaps3, device-identity).
        fn cuDeviceGetLuid(d; _luid, _mask, dev) {
            d.device(dev)?;
            Err(not_supported("cuDeviceGetLuid: a device has a LUID on Windows only"))
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

    /// Observed (probe api_gaps3, null-async-register-callback): a NULL callback is
    /// CUDA_ERROR_INVALID_VALUE.
    pub(super) fn cuDeviceRegisterAsyncNotification(d; device, callback_func, _user_data, callback) {
        if callback_func.is_none() {
            return Err(invalid("callbackFunc is NULL"));
        }
        let handle = d.async_notification_register(device)?;
        callback.write(std::ptr::without_provenance_mut(handle as usize))
    }

    /// Observed (probe api_gaps3, null-async-unregister): NULL is CUDA_ERROR_INVALID_VALUE.
    pub(super) fn cuDeviceUnregisterAsyncNotification(d; device, #[raw] callback) {
        d.async_notification_unregister(device, callback as usize as u64)
    }

    // The device is looked for before the id's room is checked. Room too short for the
    // id and its NUL gets what fits, and CUDA_ERROR_INVALID_VALUE (the H200, probe
    // api_gaps3 device-identity: room 12 for "0000:00:06.0" holds "0000:00:06.").
    pub(super) fn cuDeviceGetPCIBusId(d; #[late] pci_bus_id, _len, dev) {
        let p = d.device(dev)?;
        let room = pci_bus_id.nonempty()?;
        write_c_string(room, &p.pci_bus_id);
        if room.len() <= p.pci_bus_id.len() {
            return Err(invalid(format!(
                "{} bytes of room: the id {:?} and its NUL take {}",
                room.len(),
                p.pci_bus_id,
                p.pci_bus_id.len() + 1
            )));
        }
        Ok(())
    }

    // The device is looked for before the out-parameter is checked. What the H200 reads
    // as an id (probe api_gaps3, device-identity): `domain:bus:device[.function]` or
    // `bus:device.function`, hexadecimal, any case, the domain of any width; anything
    // else is CUDA_ERROR_INVALID_VALUE, an id of no device CUDA_ERROR_INVALID_DEVICE.
    pub(super) fn cuDeviceGetByPCIBusId(d; #[late] dev, pci_bus_id) {
        let text = pci_bus_id.to_string_lossy();
        let want = parse_pci_bus_id(&text)
            .ok_or_else(|| invalid(format!("{text:?} is not a PCI bus id (domain:bus:device.function)")))?;
        let found = d
            .profile
            .devices
            .iter()
            .position(|p| parse_pci_bus_id(&p.pci_bus_id) == Some(want));
        match found {
            Some(i) => dev.write(i as CUdevice),
            None => Err(invalid_device(format!("no device at PCI bus id {text}"))),
        }
    }
}

/// A PCI bus id's domain, bus, device and function, as cuDeviceGetByPCIBusId reads one
/// (see there); a missing function is 0.
fn parse_pci_bus_id(text: &str) -> Option<(u64, u64, u64, u64)> {
    let hex = |s: &str| {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| u64::from_str_radix(s, 16).ok())
            .flatten()
    };
    let parts: Vec<&str> = text.split(':').collect();
    let (domain, bus, rest, function_required) = match parts[..] {
        [domain, bus, rest] => (hex(domain)?, hex(bus)?, rest, false),
        [bus, rest] => (0, hex(bus)?, rest, true),
        _ => return None,
    };
    let (device, function) = match rest.split_once('.') {
        Some((device, function)) => (hex(device)?, hex(function)?),
        None if function_required => return None,
        None => (hex(rest)?, 0),
    };
    Some((domain, bus, device, function))
}

#[cfg(test)]
mod tests {
    use super::parse_pci_bus_id;

    /// The forms the H200 took and refused (probe api_gaps3, device-identity).
    #[test]
    fn pci_bus_ids_read_as_the_h200_reads_them() {
        let id = Some((0, 0, 6, 0));
        for ok in [
            "0000:00:06.0",
            "0000:00:06",
            "00:06.0",
            "00000000:00:06.0",
            "0000:00:06.0",
        ] {
            assert_eq!(parse_pci_bus_id(ok), id, "{ok}");
        }
        assert_eq!(parse_pci_bus_id("0000:ff:1f.7"), Some((0, 0xff, 0x1f, 7)));
        for bad in ["00:06", " 0000:00:06.0 ", "zz:zz", ""] {
            assert_eq!(parse_pci_bus_id(bad), None, "{bad:?}");
        }
    }
}
