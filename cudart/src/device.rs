//! Devices: count, selection, properties, attributes, reset and synchronisation, peers.

use crate::boundary::{cudart_fn, out, out_ref};
use crate::device_prop::{CudaDeviceProp, PROP_ATTRIBUTES};
use crate::driver::{driver, CUDART_VERSION};
use crate::error;
use crate::runtime::{runtime, thread_device, with_context};
use cumock_abi::CUuuid;
use std::ffi::{c_char, c_int, c_uint, c_void};

cudart_fn! {
    fn cudaGetDeviceCount(count: *mut c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let count = unsafe { out_ref(count)? };
        // Left as it was on failure, as NVIDIA's runtime leaves it (seen over the mock,
        // where NVIDIA's runtime fails its initialisation).
        *count = runtime()?.device_count;
        Ok(())
    }
}

cudart_fn! {
    fn cudaSetDevice(device: c_int) {
        runtime()?.set_device(device)
    }
}

cudart_fn! {
    fn cudaInitDevice(device: c_int, device_flags: c_uint, flags: c_uint) {
        if flags != 0 {
            return Err(error::invalid(format!("flags {flags:#x} must be 0")));
        }
        let rt = runtime()?;
        if device_flags != 0 {
            driver()?.cuDevicePrimaryCtxSetFlags(device, device_flags)?;
        }
        rt.primary(device).map(|_| ())
    }
}

cudart_fn! {
    fn cudaGetDevice(device: *mut c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let device = unsafe { out_ref(device)? };
        let d = driver()?;
        runtime()?;
        let mut cur = std::ptr::null_mut();
        d.cuCtxGetCurrent(&mut cur)?;
        *device = if cur.is_null() {
            thread_device()
        } else {
            let mut dev = 0;
            d.cuCtxGetDevice(&mut dev, std::ptr::null_mut())?;
            dev
        };
        Ok(())
    }
}

cudart_fn! {
    fn cudaSetDeviceFlags(flags: c_uint) {
        let rt = runtime()?;
        // cudaDeviceMapHost (8) is always on with unified addressing; the driver knows
        // only the schedule and local-memory bits.
        driver()?.cuDevicePrimaryCtxSetFlags(thread_device(), flags & !0x8)?;
        rt.primary(thread_device()).map(|_| ())
    }
}

cudart_fn! {
    fn cudaGetDeviceFlags(flags: *mut c_uint) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let flags = unsafe { out_ref(flags)? };
        let (d, _, device) = with_context()?;
        let (mut f, mut active) = (0u32, 0i32);
        d.cuDevicePrimaryCtxGetState(device, &mut f, &mut active)?;
        // As NVIDIA's runtime reports it: the context's flags with cudaDeviceMapHost.
        *flags = f | 0x8;
        Ok(())
    }
}

cudart_fn! {
    fn cudaDeviceReset() {
        let rt = runtime()?;
        crate::pool::forget_device(thread_device());
        crate::kernel::forget_device(thread_device());
        rt.reset_device(thread_device())
    }
}

cudart_fn! {
    fn cudaDeviceSynchronize() {
        let (d, _, _) = with_context()?;
        d.cuCtxSynchronize(std::ptr::null_mut())?;
        crate::pool::release_on_synchronize();
        Ok(())
    }
}

cudart_fn! {
    fn cudaDeviceGetAttribute(value: *mut c_int, attr: c_int, device: c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let value = unsafe { out_ref(value)? };
        let rt = runtime()?;
        rt.check_device(device)?;
        // cudaDeviceAttr's values are CUdevice_attribute's (the ABI test checks it).
        driver()?.cuDeviceGetAttribute(value, attr, device)
    }
}

cudart_fn! {
    fn cudaGetDeviceProperties(prop: *mut CudaDeviceProp, device: c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let prop = unsafe { out_ref(prop)? };
        let rt = runtime()?;
        rt.check_device(device)?;
        let d = driver()?;
        // Safety: every field is an integer or an array of them, for which zero is valid.
        let mut p: CudaDeviceProp = unsafe { std::mem::zeroed() };
        // Safety: the buffer holds 256 chars and the driver is told so.
        unsafe { d.cuDeviceGetName(p.name.as_mut_ptr(), 256, device)? };
        let mut uuid = CUuuid::default();
        d.cuDeviceGetUuid(&mut uuid, device)?;
        p.uuid = uuid.bytes;
        d.cuDeviceTotalMem(&mut p.totalGlobalMem, device)?;
        for (field, attrs, _) in PROP_ATTRIBUTES {
            let mut v = [0i32; 3];
            for (slot, attr) in v.iter_mut().zip(attrs.iter()) {
                d.cuDeviceGetAttribute(slot, *attr, device)?;
            }
            p.set(field, &v);
        }
        // Every field but `reserved`, which NVIDIA's runtime leaves as it found it (the
        // H200's transcript shows the program's fill there).
        let filled = std::mem::offset_of!(CudaDeviceProp, reserved);
        // Safety: both are CudaDeviceProps; only the bytes before `reserved` are copied.
        unsafe {
            std::ptr::copy_nonoverlapping((&p as *const CudaDeviceProp).cast::<u8>(), (prop as *mut CudaDeviceProp).cast::<u8>(), filled);
        }
        Ok(())
    }
}

cudart_fn! {
    fn cudaDeviceGetPCIBusId(pci_bus_id: *mut c_char, len: c_int, device: c_int) {
        if pci_bus_id.is_null() || len <= 0 {
            return Err(error::invalid("pciBusId is NULL or len is not positive"));
        }
        runtime()?.check_device(device)?;
        // Safety: the caller gives `len` writable chars.
        unsafe { driver()?.cuDeviceGetPCIBusId(pci_bus_id, len, device) }
    }
}

cudart_fn! {
    fn cudaDriverGetVersion(version: *mut c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let version = unsafe { out_ref(version)? };
        // NVIDIA's runtime says 0 when there is no driver, and succeeds.
        *version = 0;
        if let Ok(d) = driver() {
            d.cuDriverGetVersion(version)?;
        }
        Ok(())
    }
}

cudart_fn! {
    fn cudaRuntimeGetVersion(version: *mut c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        unsafe { out(version, CUDART_VERSION) }
    }
}

cudart_fn! {
    fn cudaDeviceCanAccessPeer(can: *mut c_int, device: c_int, peer: c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let can = unsafe { out_ref(can)? };
        let rt = runtime()?;
        rt.check_device(device)?;
        rt.check_device(peer)?;
        if device == peer {
            // A device is not its own peer, for the runtime as for the driver.
            *can = 0;
            return Ok(());
        }
        driver()?.cuDeviceCanAccessPeer(can, device, peer)
    }
}

cudart_fn! {
    fn cudaDeviceGetP2PAttribute(value: *mut c_int, attr: c_int, src: c_int, dst: c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let value = unsafe { out_ref(value)? };
        let rt = runtime()?;
        rt.check_device(src)?;
        rt.check_device(dst)?;
        // cudaDeviceP2PAttr numbers the attributes as CUdevice_P2PAttribute does; the
        // driver refuses one device as its own peer (cudaErrorInvalidDevice) and an unknown
        // attribute.
        driver()?.cuDeviceGetP2PAttribute(value, attr as _, src, dst)
    }
}

cudart_fn! {
    fn cudaDeviceEnablePeerAccess(peer: c_int, flags: c_uint) {
        if flags != 0 {
            return Err(error::invalid(format!("flags {flags:#x} must be 0")));
        }
        let (d, rt, _) = with_context()?;
        let ctx = rt.primary(peer)?;
        d.cuCtxEnablePeerAccess(ctx, 0)
    }
}

cudart_fn! {
    fn cudaDeviceDisablePeerAccess(peer: c_int) {
        let (d, rt, _) = with_context()?;
        let ctx = rt.primary(peer)?;
        d.cuCtxDisablePeerAccess(ctx)
    }
}

cudart_fn! {
    fn cudaDeviceGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) {
        let (d, _, _) = with_context()?;
        let (mut l, mut g) = (0, 0);
        match d.cuCtxGetStreamPriorityRange(&mut l, &mut g) {
            // A driver without stream priorities (cumock's mock runs every stream alike):
            // cuda_runtime_api.h says both are 0 where priorities are not supported.
            Err(e) if e.code == error::NOT_SUPPORTED => (l, g) = (0, 0),
            r => r?,
        }
        // Either pointer may be NULL (cuda_runtime_api.h).
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        if !least.is_null() { unsafe { out(least, l)? }; }
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        if !greatest.is_null() { unsafe { out(greatest, g)? }; }
        Ok(())
    }
}

cudart_fn! {
    fn cudaDeviceGetLimit(value: *mut usize, limit: c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let value = unsafe { out_ref(value)? };
        let (d, _, _) = with_context()?;
        // cudaLimit's values are CUlimit's.
        d.cuCtxGetLimit(value, limit)
    }
}

cudart_fn! {
    fn cudaDeviceSetLimit(limit: c_int, value: usize) {
        let (d, _, _) = with_context()?;
        d.cuCtxSetLimit(limit, value)
    }
}

cudart_fn! {
    /// The driver's, in the current device's context.
    fn cudaCtxResetPersistingL2Cache() {
        let (d, _, _) = with_context()?;
        d.cuCtxResetPersistingL2Cache()
    }
}

cudart_fn! {
    fn cudaDeviceGetByPCIBusId(device: *mut c_int, pci_bus_id: *const c_char) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let device = unsafe { out_ref(device)? };
        if pci_bus_id.is_null() {
            return Err(error::invalid("pciBusId is NULL"));
        }
        runtime()?;
        // Safety: a NUL-terminated string, as the header requires.
        unsafe { driver()?.cuDeviceGetByPCIBusId(device, pci_bus_id) }
    }
}

cudart_fn! {
    fn cudaDeviceGetCacheConfig(config: *mut c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let config = unsafe { out_ref(config)? };
        let (d, _, _) = with_context()?;
        // cudaFuncCache's values are CUfunc_cache's.
        d.cuCtxGetCacheConfig(config)
    }
}

cudart_fn! {
    fn cudaDeviceSetCacheConfig(config: c_int) {
        let (d, _, _) = with_context()?;
        d.cuCtxSetCacheConfig(config)
    }
}

cudart_fn! {
    /// Deprecated; cudaSharedMemConfig's values are CUsharedconfig's.
    fn cudaDeviceGetSharedMemConfig(config: *mut c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let config = unsafe { out_ref(config)? };
        let (d, _, _) = with_context()?;
        d.cuCtxGetSharedMemConfig(config)
    }
}

cudart_fn! {
    /// Deprecated, as cudaDeviceGetSharedMemConfig.
    fn cudaDeviceSetSharedMemConfig(config: c_int) {
        let (d, _, _) = with_context()?;
        d.cuCtxSetSharedMemConfig(config)
    }
}

cudart_fn! {
    /// cudaAtomicOperation's values are CUatomicOperation's, and the capability bits
    /// the same (driver_types.h).
    fn cudaDeviceGetHostAtomicCapabilities(capabilities: *mut c_uint, operations: *const c_int, count: c_uint, device: c_int) {
        let rt = runtime()?;
        rt.check_device(device)?;
        // Safety: the program's arrays of `count` entries, which the driver checks for
        // NULL.
        unsafe { driver()?.cuDeviceGetHostAtomicCapabilities(capabilities, operations, count, device) }
    }
}

cudart_fn! {
    /// The device whose compute capability is nearest the one asked for (at or above it
    /// before below it), the lowest ordinal among equals; the header promises only "the
    /// best match", and the other fields do not rank here. A `major` of 0 or less asks for
    /// no capability: device 0 (or the first of cudaSetValidDevices' list).
    fn cudaChooseDevice(device: *mut c_int, prop: *const CudaDeviceProp) {
        // Safety: the program's pointers: NULL (refused) or valid, as the header requires.
        let (device, prop) = unsafe { (out_ref(device)?, prop.as_ref()) };
        let prop = prop.ok_or_else(|| error::invalid("prop is NULL"))?;
        let rt = runtime()?;
        let d = driver()?;
        let asked = prop.major * 10 + prop.minor;
        let mut best: Option<((bool, i32), i32)> = None;
        for dev in crate::runtime::candidate_devices(rt.device_count) {
            let key = if prop.major <= 0 {
                (false, 0)
            } else {
                let (mut major, mut minor) = (0, 0);
                d.cuDeviceGetAttribute(&mut major, 75, dev)?; // COMPUTE_CAPABILITY_MAJOR
                d.cuDeviceGetAttribute(&mut minor, 76, dev)?; // COMPUTE_CAPABILITY_MINOR
                let cc = major * 10 + minor;
                (cc < asked, (cc - asked).abs())
            };
            if best.is_none_or(|(k, _)| key < k) {
                best = Some((key, dev));
            }
        }
        *device = best.map(|(_, dev)| dev).ok_or_else(|| error::invalid("no device to choose from"))?;
        Ok(())
    }
}

cudart_fn! {
    /// The devices this thread tries, in order, when it has not chosen one
    /// (cudaSetDevice): the first whose context can be made becomes its device. A length
    /// of 0 goes back to every device in ordinal order.
    fn cudaSetValidDevices(device_arr: *mut c_int, len: c_int) {
        let rt = runtime()?;
        let len = usize::try_from(len).map_err(|_| error::invalid(format!("len {len} is negative")))?;
        if len > rt.device_count as usize {
            return Err(error::invalid(format!("len {len} is more than the {} devices", rt.device_count)));
        }
        let list: Vec<i32> = if len == 0 {
            Vec::new()
        } else {
            if device_arr.is_null() {
                return Err(error::invalid("device_arr is NULL"));
            }
            // Safety: the program says the array holds `len` ints.
            unsafe { std::slice::from_raw_parts(device_arr, len) }.to_vec()
        };
        for &dev in &list {
            rt.check_device(dev)?;
        }
        crate::runtime::set_valid_devices(rt, list)
    }
}

cudart_fn! {
    /// cudaFlushGPUDirectRDMAWritesTarget and Scope are the driver's numbers.
    fn cudaDeviceFlushGPUDirectRDMAWrites(target: c_int, scope: c_int) {
        let (d, _, _) = with_context()?;
        d.cuFlushGPUDirectRDMAWrites(target, scope)
    }
}

cudart_fn! {
    /// cudaAsyncCallback and cudaAsyncNotificationInfo_t are laid out as the driver's
    /// CUasyncCallback and CUasyncNotificationInfo, so the program's callback is the
    /// driver's.
    fn cudaDeviceRegisterAsyncNotification(device: c_int, callback_func: cumock_abi::CUasyncCallback, user_data: *mut c_void, callback: *mut cumock_abi::CUasyncCallbackHandle) {
        let rt = runtime()?;
        rt.check_device(device)?;
        // Safety: the program's user data goes to its callback untouched; `callback` is
        // the program's out-pointer (the driver refuses NULL).
        unsafe { driver()?.cuDeviceRegisterAsyncNotification(device, callback_func, user_data, callback) }
    }
}

cudart_fn! {
    fn cudaDeviceUnregisterAsyncNotification(device: c_int, callback: cumock_abi::CUasyncCallbackHandle) {
        let rt = runtime()?;
        rt.check_device(device)?;
        driver()?.cuDeviceUnregisterAsyncNotification(device, callback)
    }
}
