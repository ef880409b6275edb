//! Memory: cudaMalloc/Free, pinned and registered host memory, managed memory, copies and
//! memsets (plain, async, 2D, peer), pointer attributes, cudaMemGetInfo.

use crate::boundary::{cudart_fn, out_ref};
use crate::driver::Driver;
use crate::error::{self, RtError, RtResult};
use crate::runtime::{with_context, Backing, DeviceAllocation, HostAllocation, HostKind, Runtime};
use cumock_abi::consts::*;
use cumock_abi::CUstream;
use cumock_abi::{CUmemAccessDesc, CUmemAllocationProp};
use std::ffi::{c_int, c_uint, c_void};

/// The stream the driver gets for a runtime stream: a `_ptsz` export's stream 0 is the
/// per-thread default stream (CU_STREAM_PER_THREAD); the other handles are the driver's.
pub fn stream_for(s: CUstream, per_thread: bool) -> CUstream {
    if s.is_null() && per_thread {
        0x2 as CUstream
    } else {
        s
    }
}

/// A `_ptds` export's synchronous operation (nvcc's `--default-stream per-thread`): issued
/// on the calling thread's default stream, not the legacy one, so that it follows only
/// that thread's work, and returning once done, as the synchronous call does.
pub fn on_per_thread_stream(op: impl FnOnce(Option<CUstream>) -> RtResult<()>) -> RtResult<()> {
    let s = stream_for(std::ptr::null_mut(), true);
    op(Some(s))?;
    let (d, _, _) = with_context()?;
    d.cuStreamSynchronize(s)?;
    Ok(())
}

// ---- cudaMalloc / cudaFree -------------------------------------------------------------

/// Whether cudaMalloc memory is made through VMM: on a driver without
/// cuIpcGetMemHandle (older cumock mocks), so that cudaIpcGetMemHandle can export it as a
/// POSIX fd. Asked once, of the first cuMemAlloc allocation (`first`): a driver that has
/// the function makes a handle of it, one that has not says CUDA_ERROR_NOT_SUPPORTED. A
/// valid pointer, so that the question is no misuse a checking driver would report.
fn malloc_over_vmm(d: &Driver, rt: &Runtime, first: u64) -> bool {
    if let Some(v) = rt.state.lock().malloc_over_vmm {
        return v;
    }
    let mut h = cumock_abi::CUipcMemHandle { reserved: [0; 64] };
    let v = matches!(d.cuIpcGetMemHandle(&mut h, first), Err(e) if e.code == error::NOT_SUPPORTED);
    *rt.state.lock().malloc_over_vmm.get_or_insert(v)
}

pub fn device_malloc(size: usize) -> RtResult<u64> {
    let (d, rt, device) = with_context()?;
    allocate(d, rt, device, size)
}

/// One allocation for the program (cudaMalloc) or for a runtime pool, recorded.
pub fn allocate(d: &Driver, rt: &Runtime, device: i32, size: usize) -> RtResult<u64> {
    let (ptr, backing) = if rt.state.lock().malloc_over_vmm == Some(true) {
        vmm_alloc(d, rt, device, size)?
    } else {
        let mut p = 0;
        d.cuMemAlloc(&mut p, size)?;
        if malloc_over_vmm(d, rt, p) {
            d.cuMemFree(p)?;
            vmm_alloc(d, rt, device, size)?
        } else {
            (p, Backing::Driver)
        }
    };
    rt.state.lock().allocations.insert(
        ptr,
        DeviceAllocation {
            size: size as u64,
            device,
            backing,
            exported: None,
            pooled: false,
        },
    );
    Ok(ptr)
}

/// The driver's allocation granularity for device memory (2 MiB on the H200).
pub fn granularity(d: &Driver, device: i32) -> RtResult<usize> {
    let prop = CUmemAllocationProp {
        type_: CU_MEM_ALLOCATION_TYPE_PINNED,
        location: cumock_abi::CUmemLocation {
            type_: CU_MEM_LOCATION_TYPE_DEVICE,
            id: device,
        },
        ..Default::default()
    };
    let mut g = 0;
    d.cuMemGetAllocationGranularity(&mut g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM)?;
    Ok(g.max(1))
}

fn vmm_alloc(d: &Driver, rt: &Runtime, device: i32, size: usize) -> RtResult<(u64, Backing)> {
    let prop = CUmemAllocationProp {
        type_: CU_MEM_ALLOCATION_TYPE_PINNED,
        requested_handle_types: CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
        location: cumock_abi::CUmemLocation {
            type_: CU_MEM_LOCATION_TYPE_DEVICE,
            id: device,
        },
        ..Default::default()
    };
    let rounded = size
        .checked_next_multiple_of(granularity(d, device)?)
        .ok_or_else(|| RtError::new(error::MEMORY_ALLOCATION, format!("{size} bytes overflow")))?;
    let mut handle = 0;
    d.cuMemCreate(&mut handle, rounded, &prop, 0)?;
    let mut va = 0;
    if let Err(e) = d.cuMemAddressReserve(&mut va, rounded, 0, 0, 0) {
        let _ = d.cuMemRelease(handle);
        return Err(e);
    }
    let mapped = d.cuMemMap(va, rounded, 0, handle, 0).and_then(|()| {
        // Every device may reach cudaMalloc memory, as unified addressing makes it for the
        // driver's own cuMemAlloc on cumock's mock.
        (0..rt.device_count).try_for_each(|dev| {
            let desc = CUmemAccessDesc {
                location: cumock_abi::CUmemLocation {
                    type_: CU_MEM_LOCATION_TYPE_DEVICE,
                    id: dev,
                },
                flags: CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            };
            d.cuMemSetAccess(va, rounded, &desc, 1)
        })
    });
    if let Err(e) = mapped {
        let _ = d.cuMemUnmap(va, rounded);
        let _ = d.cuMemAddressFree(va, rounded);
        let _ = d.cuMemRelease(handle);
        return Err(e);
    }
    Ok((
        va,
        Backing::Vmm {
            handle,
            reserved: rounded as u64,
        },
    ))
}

pub fn device_free(ptr: u64) -> RtResult<()> {
    let (d, rt, _) = with_context()?;
    if ptr == 0 {
        return Ok(());
    }
    if crate::pool::owns(ptr) {
        // cudaFree of stream-ordered memory: the work before it is waited for first.
        d.cuCtxSynchronize(std::ptr::null_mut())?;
        return crate::pool::free(ptr, std::ptr::null_mut());
    }
    release(d, rt, ptr)?;
    // The driver's stream-ordered memory, if it was (the driver frees it on cudaFree).
    crate::pool::forget_driver_allocation(ptr);
    Ok(())
}

/// Gives an allocation back to the driver; one the runtime did not make is the driver's
/// to judge (cuMemFree).
pub fn release(d: &Driver, rt: &Runtime, ptr: u64) -> RtResult<()> {
    // Out of the table before the driver sees the free: once the address is given back,
    // another thread's allocation may get it, and its entry must not be the one removed.
    // A free the driver refuses puts the entry back.
    let known = rt.state.lock().allocations.remove(&ptr);
    let freed = match known {
        Some(DeviceAllocation {
            backing: Backing::Vmm { handle, reserved },
            ..
        }) => (|| {
            // cudaFree waits for the device, as cuMemFree does.
            d.cuCtxSynchronize(std::ptr::null_mut())?;
            d.cuMemUnmap(ptr, reserved as usize)?;
            d.cuMemAddressFree(ptr, reserved as usize)?;
            d.cuMemRelease(handle)
        })(),
        _ => d.cuMemFree(ptr),
    };
    match (freed, known) {
        (
            Ok(()),
            Some(DeviceAllocation {
                exported: Some(crate::runtime::ExportedFd { fd, .. }),
                ..
            }),
        ) => {
            crate::os::close(fd);
            Ok(())
        }
        (Ok(()), _) => Ok(()),
        (Err(e), Some(a)) => {
            rt.state.lock().allocations.insert(ptr, a);
            Err(e)
        }
        (Err(e), None) => Err(e),
    }
}

cudart_fn! {
    fn cudaMalloc(dev_ptr: *mut *mut c_void, size: usize) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let dev_ptr = unsafe { out_ref(dev_ptr)? };
        *dev_ptr = std::ptr::null_mut();
        with_context()?;
        // cudaMalloc of 0 bytes succeeds with NULL (cuda_runtime_api.h).
        if size == 0 {
            return Ok(());
        }
        *dev_ptr = device_malloc(size)? as *mut c_void;
        Ok(())
    }
}

cudart_fn! {
    fn cudaFree(dev_ptr: *mut c_void) {
        device_free(dev_ptr as u64)
    }
}

cudart_fn! {
    fn cudaMemGetInfo(free: *mut usize, total: *mut usize) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let (free, total) = unsafe { (out_ref(free)?, out_ref(total)?) };
        let (d, _, _) = with_context()?;
        d.cuMemGetInfo(free, total)
    }
}

cudart_fn! {
    fn cudaMallocManaged(dev_ptr: *mut *mut c_void, size: usize, flags: c_uint) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let dev_ptr = unsafe { out_ref(dev_ptr)? };
        if flags != 1 && flags != 2 {
            return Err(error::invalid(format!("flags {flags:#x} are not cudaMemAttachGlobal or cudaMemAttachHost")));
        }
        let (d, _, _) = with_context()?;
        if size == 0 {
            *dev_ptr = std::ptr::null_mut();
            return Ok(());
        }
        let mut p = 0;
        // Managed memory is the driver's to honour; a driver without it says so.
        d.cuMemAllocManaged(&mut p, size, flags)?;
        *dev_ptr = p as *mut c_void;
        Ok(())
    }
}

// ---- managed memory: advice, prefetches, range attributes, stream attachment ------------
//
// The driver's to honour, as the allocation is: `cudaMemLocation` is `CUmemLocation`, and
// the advice, range-attribute and attach-flag numbers are the driver's (driver_types.h and
// cuda.h number them alike), so each call forwards. A driver without the function says
// so (cudaErrorNotSupported, naming it).

fn mem_prefetch(
    dev_ptr: *const c_void,
    count: usize,
    location: cumock_abi::CUmemLocation,
    flags: c_uint,
    stream: CUstream,
) -> RtResult<()> {
    let (d, _, _) = with_context()?;
    d.cuMemPrefetchAsync(dev_ptr as u64, count, location, flags, stream)
}

cudart_fn! {
    fn cudaMemPrefetchAsync(
        dev_ptr: *const c_void,
        count: usize,
        location: cumock_abi::CUmemLocation,
        flags: c_uint,
        stream: CUstream,
    ) {
        mem_prefetch(dev_ptr, count, location, flags, stream_for(stream, false))
    }
}

cudart_fn! {
    fn cudaMemPrefetchAsync_ptsz(
        dev_ptr: *const c_void,
        count: usize,
        location: cumock_abi::CUmemLocation,
        flags: c_uint,
        stream: CUstream,
    ) {
        mem_prefetch(dev_ptr, count, location, flags, stream_for(stream, true))
    }
}

cudart_fn! {
    fn cudaMemAdvise(dev_ptr: *const c_void, count: usize, advice: c_int, location: cumock_abi::CUmemLocation) {
        let (d, _, _) = with_context()?;
        d.cuMemAdvise(dev_ptr as u64, count, advice as _, location)
    }
}

cudart_fn! {
    fn cudaMemRangeGetAttribute(
        data: *mut c_void,
        data_size: usize,
        attribute: c_int,
        dev_ptr: *const c_void,
        count: usize,
    ) {
        let (d, _, _) = with_context()?;
        // Safety: the program's buffer of dataSize bytes (the driver refuses NULL and a
        // size that does not fit the attribute before writing).
        unsafe { d.cuMemRangeGetAttribute(data, data_size, attribute as _, dev_ptr as u64, count) }
    }
}

cudart_fn! {
    fn cudaMemRangeGetAttributes(
        data: *mut *mut c_void,
        data_sizes: *mut usize,
        attributes: *mut c_int,
        num_attributes: usize,
        dev_ptr: *const c_void,
        count: usize,
    ) {
        let (d, _, _) = with_context()?;
        // Safety: the program's arrays of numAttributes entries (the driver refuses NULL
        // ones, and each size that does not fit its attribute, before writing).
        // cudaMemRangeAttribute's values are CUmem_range_attribute's.
        unsafe {
            d.cuMemRangeGetAttributes(data, data_sizes, attributes.cast(), num_attributes, dev_ptr as u64, count)
        }
    }
}

fn stream_attach(
    stream: CUstream,
    dev_ptr: *mut c_void,
    length: usize,
    flags: c_uint,
) -> RtResult<()> {
    let (d, _, _) = with_context()?;
    d.cuStreamAttachMemAsync(stream, dev_ptr as u64, length, flags)
}

cudart_fn! {
    fn cudaStreamAttachMemAsync(stream: CUstream, dev_ptr: *mut c_void, length: usize, flags: c_uint) {
        stream_attach(stream_for(stream, false), dev_ptr, length, flags)
    }
}

cudart_fn! {
    fn cudaStreamAttachMemAsync_ptsz(stream: CUstream, dev_ptr: *mut c_void, length: usize, flags: c_uint) {
        stream_attach(stream_for(stream, true), dev_ptr, length, flags)
    }
}

// ---- host memory ----------------------------------------------------------------------

const HOST_ALLOC_FLAGS: u32 = 0x7;
const HOST_REGISTER_FLAGS: u32 = 0xF;

fn host_alloc(size: usize, flags: u32) -> RtResult<*mut c_void> {
    if flags & !HOST_ALLOC_FLAGS != 0 {
        return Err(error::invalid(format!(
            "flags {flags:#x} are not cudaHostAlloc*"
        )));
    }
    let (d, rt, _) = with_context()?;
    if size == 0 {
        return Ok(std::ptr::null_mut());
    }
    let mut p = std::ptr::null_mut();
    // The program's flags as they are: with unified addressing the driver maps pinned
    // memory whatever was asked, and says so in cuMemHostGetFlags (the H200 reports
    // DEVICEMAP for cudaMallocHost's memory, not PORTABLE).
    let kind = match d.cuMemHostAlloc(&mut p, size, flags) {
        Ok(()) => HostKind::Driver,
        Err(e) if e.code == error::NOT_SUPPORTED => {
            // A driver without pinned host memory (cumock's mock, whose devices reach all
            // host memory): the runtime's own anonymous mapping.
            // The table keeps its address and size; cudaFreeHost takes it back.
            p = crate::os::HostMapping::create(size)
                .map_err(|e| {
                    RtError::new(
                        error::MEMORY_ALLOCATION,
                        format!("mmap of {size} bytes: {e}"),
                    )
                })?
                .into_raw();
            HostKind::Runtime
        }
        Err(e) => return Err(e),
    };
    rt.state
        .lock()
        .host
        .insert(p as usize, HostAllocation { size, flags, kind });
    Ok(p)
}

cudart_fn! {
    fn cudaMallocHost(ptr: *mut *mut c_void, size: usize) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let ptr = unsafe { out_ref(ptr)? };
        *ptr = host_alloc(size, 0)?;
        Ok(())
    }
}

cudart_fn! {
    fn cudaHostAlloc(ptr: *mut *mut c_void, size: usize, flags: c_uint) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let ptr = unsafe { out_ref(ptr)? };
        *ptr = host_alloc(size, flags)?;
        Ok(())
    }
}

cudart_fn! {
    fn cudaFreeHost(ptr: *mut c_void) {
        let (d, rt, _) = with_context()?;
        if ptr.is_null() {
            return Ok(());
        }
        // Out of the table first: once freed, the address may be another thread's (see
        // `release`). Put back if the free is refused.
        let known = rt.state.lock().host.remove(&(ptr as usize));
        let freed = match known {
            // Safety: the driver gave this pointer.
            Some(HostAllocation { kind: HostKind::Driver, .. }) => unsafe { d.cuMemFreeHost(ptr) },
            Some(HostAllocation { kind: HostKind::Runtime, size, .. }) => {
                // Safety: the runtime's own mapping of this size (`host_alloc`), out of
                // the table now, so handed back once.
                drop(unsafe { crate::os::HostMapping::from_raw(ptr, size) });
                Ok(())
            }
            _ => Err(error::invalid(format!("{ptr:?} is not memory from cudaMallocHost or cudaHostAlloc"))),
        };
        if let (Err(_), Some(h)) = (&freed, known) {
            rt.state.lock().host.insert(ptr as usize, h);
        }
        freed
    }
}

cudart_fn! {
    fn cudaHostRegister(ptr: *mut c_void, size: usize, flags: c_uint) {
        if ptr.is_null() || size == 0 {
            return Err(error::invalid("ptr is NULL or size is 0"));
        }
        if flags & !HOST_REGISTER_FLAGS != 0 {
            return Err(error::invalid(format!("flags {flags:#x} are not cudaHostRegister*")));
        }
        let (d, rt, _) = with_context()?;
        let start = ptr as usize;
        let overlaps = rt.state.lock().host.iter().any(|(&p, h)| p < start + size && start < p + h.size);
        if overlaps {
            return Err(RtError::new(error::HOST_MEMORY_ALREADY_REGISTERED, "the range overlaps registered or pinned memory"));
        }
        // Safety: the program says [ptr, ptr+size) is its memory.
        let driver_knows = match unsafe { d.cuMemHostRegister(ptr, size, flags) } {
            Ok(()) => true,
            // cumock's mock has no page-locking, and its devices reach all host memory:
            // the runtime keeps the registration itself.
            Err(e) if e.code == error::NOT_SUPPORTED => false,
            Err(e) => return Err(e),
        };
        rt.state.lock().host.insert(start, HostAllocation { size, flags, kind: HostKind::Registered { driver: driver_knows } });
        Ok(())
    }
}

cudart_fn! {
    fn cudaHostUnregister(ptr: *mut c_void) {
        let (d, rt, _) = with_context()?;
        let known = rt.state.lock().host.remove(&(ptr as usize));
        let done = match known {
            Some(HostAllocation { kind: HostKind::Registered { driver: true }, .. }) => unsafe {
                // Safety: registered with the driver by cudaHostRegister.
                d.cuMemHostUnregister(ptr)
            },
            Some(HostAllocation { kind: HostKind::Registered { driver: false }, .. }) => Ok(()),
            _ => Err(RtError::new(error::HOST_MEMORY_NOT_REGISTERED, format!("{ptr:?} was not registered"))),
        };
        if let (Err(_), Some(h)) = (&done, known) {
            rt.state.lock().host.insert(ptr as usize, h);
        }
        done
    }
}

/// The runtime's own record of the host range holding `p`, if any.
fn host_range(rt: &Runtime, p: usize) -> Option<(usize, HostAllocation)> {
    let st = rt.state.lock();
    st.host
        .range(..=p)
        .next_back()
        .filter(|(&start, h)| p < start + h.size.max(1))
        .map(|(&s, h)| (s, *h))
}

cudart_fn! {
    fn cudaHostGetDevicePointer(dev_ptr: *mut *mut c_void, host: *mut c_void, flags: c_uint) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let dev_ptr = unsafe { out_ref(dev_ptr)? };
        if flags != 0 {
            return Err(error::invalid(format!("flags {flags:#x} must be 0")));
        }
        let (d, rt, _) = with_context()?;
        match host_range(rt, host as usize) {
            // Memory the driver does not know: with unified addressing its device address
            // is its host address.
            Some((_, HostAllocation { kind: HostKind::Runtime | HostKind::Registered { driver: false }, .. })) => {
                *dev_ptr = host;
                Ok(())
            }
            _ => {
                let mut p = 0;
                // Safety: the driver only looks the address up.
                unsafe { d.cuMemHostGetDevicePointer(&mut p, host, 0)? };
                *dev_ptr = p as *mut c_void;
                Ok(())
            }
        }
    }
}

cudart_fn! {
    fn cudaHostGetFlags(flags: *mut c_uint, host: *mut c_void) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let flags = unsafe { out_ref(flags)? };
        let (d, rt, _) = with_context()?;
        match host_range(rt, host as usize) {
            // The runtime's own pinned memory: the flags it was asked for.
            Some((_, h)) if h.kind == HostKind::Runtime => {
                // With unified addressing pinned memory is mapped whatever was asked:
                // NVIDIA's runtime reports cudaHostAllocMapped for cudaMallocHost's (H200).
                *flags = h.flags | 0x2;
                Ok(())
            }
            Some((_, h)) if matches!(h.kind, HostKind::Registered { .. }) => Err(error::invalid(
                format!("{host:?} is registered memory, not memory from cudaHostAlloc"),
            )),
            // Safety: the driver only looks the address up.
            _ => unsafe { d.cuMemHostGetFlags(flags, host) },
        }
    }
}

// ---- copies ---------------------------------------------------------------------------

/// `cudaMemcpyKind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    HostToHost,
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    Default,
}

fn kind(k: c_int) -> RtResult<Kind> {
    Ok(match k {
        0 => Kind::HostToHost,
        1 => Kind::HostToDevice,
        2 => Kind::DeviceToHost,
        3 => Kind::DeviceToDevice,
        4 => Kind::Default,
        _ => {
            return Err(RtError::new(
                error::INVALID_MEMCPY_DIRECTION,
                format!("{k} is not a cudaMemcpyKind"),
            ))
        }
    })
}

/// One copy, synchronous when `stream` is None.
///
/// # Safety
/// `dst` and `src` are valid for `n` bytes on the sides `kind` says, as the runtime
/// header requires of the program (the driver checks device addresses).
unsafe fn copy(
    d: &Driver,
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
    kind: Kind,
    stream: Option<CUstream>,
) -> RtResult<()> {
    if n == 0 {
        return Ok(());
    }
    let (dd, sd) = (dst as u64, src as u64);
    // Safety (all arms): the caller's contract.
    unsafe {
        match (kind, stream) {
            (Kind::HostToHost, s) => {
                if let Some(s) = s {
                    d.cuStreamSynchronize(s)?;
                }
                std::ptr::copy(src as *const u8, dst as *mut u8, n);
                Ok(())
            }
            (Kind::HostToDevice, None) => d.cuMemcpyHtoD(dd, src, n),
            (Kind::DeviceToHost, None) => d.cuMemcpyDtoH(dst, sd, n),
            (Kind::DeviceToDevice, None) => d.cuMemcpyDtoD(dd, sd, n),
            (Kind::Default, None) => d.cuMemcpy(dd, sd, n),
            (Kind::HostToDevice, Some(s)) => d.cuMemcpyHtoDAsync(dd, src, n, s),
            (Kind::DeviceToHost, Some(s)) => d.cuMemcpyDtoHAsync(dst, sd, n, s),
            (Kind::DeviceToDevice, Some(s)) => d.cuMemcpyDtoDAsync(dd, sd, n, s),
            (Kind::Default, Some(s)) => d.cuMemcpyAsync(dd, sd, n, s),
        }
    }
}

pub fn memcpy(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
    k: c_int,
    stream: Option<CUstream>,
) -> RtResult<()> {
    let k = kind(k)?;
    let (d, _, _) = with_context()?;
    if n > 0 && (dst.is_null() || src.is_null()) {
        return Err(error::invalid("dst or src is NULL"));
    }
    // Safety: the program's pointers, valid for n bytes by the runtime's contract.
    unsafe { copy(d, dst, src, n, k, stream) }
}

cudart_fn! {
    fn cudaMemcpy(dst: *mut c_void, src: *const c_void, count: usize, kind: c_int) {
        memcpy(dst, src, count, kind, None)
    }
}

cudart_fn! {
    fn cudaMemcpy_ptds(dst: *mut c_void, src: *const c_void, count: usize, kind: c_int) {
        on_per_thread_stream(|s| memcpy(dst, src, count, kind, s))
    }
}

cudart_fn! {
    fn cudaMemcpyAsync(dst: *mut c_void, src: *const c_void, count: usize, kind: c_int, stream: CUstream) {
        memcpy(dst, src, count, kind, Some(stream_for(stream, false)))
    }
}

cudart_fn! {
    fn cudaMemcpyAsync_ptsz(dst: *mut c_void, src: *const c_void, count: usize, kind: c_int, stream: CUstream) {
        memcpy(dst, src, count, kind, Some(stream_for(stream, true)))
    }
}

/// cudaMemcpy2D: row by row, each row one copy of the same kind (the driver's 2D copy is
/// not needed for what allocators do, and rows give the same bytes everywhere).
#[allow(clippy::too_many_arguments)]
fn memcpy_2d(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    k: c_int,
    stream: Option<CUstream>,
) -> RtResult<()> {
    let k = kind(k)?;
    if width > dpitch || width > spitch {
        return Err(RtError::new(
            12,
            format!("width {width} is larger than a pitch ({dpitch}, {spitch})"),
        ));
    }
    let (d, _, _) = with_context()?;
    if width == 0 || height == 0 {
        return Ok(());
    }
    if dst.is_null() || src.is_null() {
        return Err(error::invalid("dst or src is NULL"));
    }
    for row in 0..height {
        // Safety: the program says both sides hold `height` rows of their pitch.
        unsafe {
            copy(
                d,
                (dst as *mut u8).add(row * dpitch).cast(),
                (src as *const u8).add(row * spitch).cast(),
                width,
                k,
                stream,
            )?;
        }
    }
    Ok(())
}

cudart_fn! {
    fn cudaMemcpy2D(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int) {
        memcpy_2d(dst, dpitch, src, spitch, width, height, kind, None)
    }
}

cudart_fn! {
    fn cudaMemcpy2D_ptds(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int) {
        on_per_thread_stream(|s| memcpy_2d(dst, dpitch, src, spitch, width, height, kind, s))
    }
}

cudart_fn! {
    fn cudaMemcpy2DAsync(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int, stream: CUstream) {
        memcpy_2d(dst, dpitch, src, spitch, width, height, kind, Some(stream_for(stream, false)))
    }
}

cudart_fn! {
    fn cudaMemcpy2DAsync_ptsz(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int, stream: CUstream) {
        memcpy_2d(dst, dpitch, src, spitch, width, height, kind, Some(stream_for(stream, true)))
    }
}

fn memcpy_peer(
    dst: *mut c_void,
    dst_device: c_int,
    src: *const c_void,
    src_device: c_int,
    n: usize,
    stream: Option<CUstream>,
) -> RtResult<()> {
    let (d, rt, _) = with_context()?;
    let (dc, sc) = (rt.primary(dst_device)?, rt.primary(src_device)?);
    if n == 0 {
        return Ok(());
    }
    let (dd, sd) = (dst as u64, src as u64);
    // Safety: device addresses, checked by the driver.
    let r = unsafe {
        match stream {
            None => d.cuMemcpyPeer(dd, dc, sd, sc, n),
            Some(s) => d.cuMemcpyPeerAsync(dd, dc, sd, sc, n, s),
        }
    };
    match r {
        // A driver without peer copies but with unified addressing (cumock's mock):
        // a device-to-device copy between the two addresses is the same copy.
        Err(e) if e.code == error::NOT_SUPPORTED => unsafe {
            // Safety: device addresses, checked by the driver.
            match stream {
                None => d.cuMemcpyDtoD(dd, sd, n),
                Some(s) => d.cuMemcpyDtoDAsync(dd, sd, n, s),
            }
        },
        r => r,
    }
}

cudart_fn! {
    fn cudaMemcpyPeer(dst: *mut c_void, dst_device: c_int, src: *const c_void, src_device: c_int, count: usize) {
        memcpy_peer(dst, dst_device, src, src_device, count, None)
    }
}

cudart_fn! {
    fn cudaMemcpyPeerAsync(dst: *mut c_void, dst_device: c_int, src: *const c_void, src_device: c_int, count: usize, stream: CUstream) {
        memcpy_peer(dst, dst_device, src, src_device, count, Some(stream_for(stream, false)))
    }
}

// ---- memsets --------------------------------------------------------------------------

fn memset(ptr: *mut c_void, value: c_int, n: usize, stream: Option<CUstream>) -> RtResult<()> {
    let (d, _, _) = with_context()?;
    if n == 0 {
        return Ok(());
    }
    // cudaMemset writes the low byte of value (cuda_runtime_api.h).
    let v = value as u8;
    // Safety: a device address, checked by the driver.
    unsafe {
        match stream {
            None => d.cuMemsetD8(ptr as u64, v, n),
            Some(s) => d.cuMemsetD8Async(ptr as u64, v, n, s),
        }
    }
}

cudart_fn! {
    fn cudaMemset(ptr: *mut c_void, value: c_int, count: usize) { memset(ptr, value, count, None) }
}

cudart_fn! {
    fn cudaMemset_ptds(ptr: *mut c_void, value: c_int, count: usize) {
        on_per_thread_stream(|s| memset(ptr, value, count, s))
    }
}

cudart_fn! {
    fn cudaMemsetAsync(ptr: *mut c_void, value: c_int, count: usize, stream: CUstream) {
        memset(ptr, value, count, Some(stream_for(stream, false)))
    }
}

cudart_fn! {
    fn cudaMemsetAsync_ptsz(ptr: *mut c_void, value: c_int, count: usize, stream: CUstream) {
        memset(ptr, value, count, Some(stream_for(stream, true)))
    }
}

fn memset_2d(
    ptr: *mut c_void,
    pitch: usize,
    value: c_int,
    width: usize,
    height: usize,
    stream: Option<CUstream>,
) -> RtResult<()> {
    if width > pitch && height > 1 {
        return Err(RtError::new(
            12,
            format!("width {width} is larger than the pitch {pitch}"),
        ));
    }
    with_context()?;
    for row in 0..height {
        memset(
            (ptr as *mut u8).wrapping_add(row * pitch).cast(),
            value,
            width,
            stream,
        )?;
    }
    Ok(())
}

cudart_fn! {
    fn cudaMemset2D(ptr: *mut c_void, pitch: usize, value: c_int, width: usize, height: usize) {
        memset_2d(ptr, pitch, value, width, height, None)
    }
}

cudart_fn! {
    fn cudaMemset2D_ptds(ptr: *mut c_void, pitch: usize, value: c_int, width: usize, height: usize) {
        on_per_thread_stream(|s| memset_2d(ptr, pitch, value, width, height, s))
    }
}

cudart_fn! {
    fn cudaMemset2DAsync(ptr: *mut c_void, pitch: usize, value: c_int, width: usize, height: usize, stream: CUstream) {
        memset_2d(ptr, pitch, value, width, height, Some(stream_for(stream, false)))
    }
}

cudart_fn! {
    fn cudaMemset2DAsync_ptsz(ptr: *mut c_void, pitch: usize, value: c_int, width: usize, height: usize, stream: CUstream) {
        memset_2d(ptr, pitch, value, width, height, Some(stream_for(stream, true)))
    }
}

/// cudaMemset3D: each of `extent.depth` slices (`pitch * ysize` bytes apart) is a 2D
/// memset of `extent.height` rows of `extent.width` bytes. The pitch is ignored for a
/// single row (the header).
fn memset_3d(
    p: crate::texture::PitchedPtr,
    value: c_int,
    extent: crate::texture::Extent,
    stream: Option<CUstream>,
) -> RtResult<()> {
    let (d, _, _) = with_context()?;
    let (w, h, depth) = (extent.width, extent.height, extent.depth);
    if w == 0 || h == 0 || depth == 0 {
        return Ok(());
    }
    if h == 1 && depth == 1 {
        return memset(p.ptr, value, w, stream);
    }
    // cudaErrorInvalidValue, not cudaMemcpy2D's cudaErrorInvalidPitchValue: the H200's
    // answer (clients/runtime/goldens/.../per_thread_arrays.txt).
    if w > p.pitch {
        return Err(error::invalid(format!(
            "width {w} is larger than the pitch {}",
            p.pitch
        )));
    }
    let slice = p
        .pitch
        .checked_mul(p.ysize)
        .ok_or_else(|| error::invalid("pitch * ysize overflows"))?;
    // Slices that follow on from one another (height is the allocation's ysize) are one
    // 2D memset of all their rows.
    let (slices, rows) = if h == p.ysize {
        (1, h * depth)
    } else {
        (depth, h)
    };
    let v = value as u8;
    for z in 0..slices {
        let at = (p.ptr as u64).wrapping_add((z * slice) as u64);
        // Safety: a device address, checked by the driver.
        unsafe {
            match stream {
                None => d.cuMemsetD2D8(at, p.pitch, v, w, rows)?,
                Some(s) => d.cuMemsetD2D8Async(at, p.pitch, v, w, rows, s)?,
            }
        }
    }
    Ok(())
}

cudart_fn! {
    fn cudaMemset3D(pitched: crate::texture::PitchedPtr, value: c_int, extent: crate::texture::Extent) {
        memset_3d(pitched, value, extent, None)
    }
}

cudart_fn! {
    fn cudaMemset3D_ptds(pitched: crate::texture::PitchedPtr, value: c_int, extent: crate::texture::Extent) {
        on_per_thread_stream(|s| memset_3d(pitched, value, extent, s))
    }
}

cudart_fn! {
    fn cudaMemset3DAsync(pitched: crate::texture::PitchedPtr, value: c_int, extent: crate::texture::Extent, stream: CUstream) {
        memset_3d(pitched, value, extent, Some(stream_for(stream, false)))
    }
}

cudart_fn! {
    fn cudaMemset3DAsync_ptsz(pitched: crate::texture::PitchedPtr, value: c_int, extent: crate::texture::Extent, stream: CUstream) {
        memset_3d(pitched, value, extent, Some(stream_for(stream, true)))
    }
}

/// A pitched allocation of `height` rows of `width` bytes, the pitch the driver's.
fn malloc_pitch(width: usize, height: usize) -> RtResult<(u64, usize)> {
    let (d, _, _) = with_context()?;
    let (mut p, mut pitch) = (0, 0);
    // The pitch is the driver's to choose; the runtime asks for rows of 4-byte
    // elements, the widest cuMemAllocPitch takes for a plain allocation.
    d.cuMemAllocPitch(&mut p, &mut pitch, width, height, 4)?;
    Ok((p, pitch))
}

cudart_fn! {
    /// `extent.depth` slices of `extent.height` rows, one pitched allocation.
    fn cudaMalloc3D(pitched: *mut crate::texture::PitchedPtr, extent: crate::texture::Extent) {
        // Safety: the program's out-pointer: NULL (refused) or writable, as the header requires.
        let pitched = unsafe { out_ref(pitched)? };
        let rows = extent
            .height
            .checked_mul(extent.depth)
            .ok_or_else(|| error::invalid("height * depth overflows"))?;
        let (p, pitch) = malloc_pitch(extent.width, rows)?;
        *pitched = crate::texture::PitchedPtr {
            ptr: p as *mut c_void,
            pitch,
            xsize: extent.width,
            ysize: extent.height,
        };
        Ok(())
    }
}

cudart_fn! {
    fn cudaMallocPitch(dev_ptr: *mut *mut c_void, pitch: *mut usize, width: usize, height: usize) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let (dev_ptr, pitch) = unsafe { (out_ref(dev_ptr)?, out_ref(pitch)?) };
        let (p, got) = malloc_pitch(width, height)?;
        *pitch = got;
        *dev_ptr = p as *mut c_void;
        Ok(())
    }
}

// ---- pointer attributes ---------------------------------------------------------------

/// `struct cudaPointerAttributes`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CudaPointerAttributes {
    /// `cudaMemoryType`: 0 unregistered, 1 host, 2 device, 3 managed.
    pub type_: c_int,
    pub device: c_int,
    pub device_pointer: *mut c_void,
    pub host_pointer: *mut c_void,
    pub reserved: [i64; 8],
}

cudart_fn! {
    fn cudaPointerGetAttributes(attributes: *mut CudaPointerAttributes, ptr: *const c_void) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let attributes = unsafe { out_ref(attributes)? };
        let (d, rt, device) = with_context()?;
        let mut a = CudaPointerAttributes {
            type_: 0,
            // cudaInvalidDeviceId for memory no device knows.
            device: -2,
            device_pointer: std::ptr::null_mut(),
            // Memory no device knows is the host's own: NVIDIA's runtime gives the pointer
            // back as hostPointer (H200, memory).
            host_pointer: ptr as *mut c_void,
            reserved: [0; 8],
        };
        if let Some((_, h)) = host_range(rt, ptr as usize) {
            if !matches!(h.kind, HostKind::Driver | HostKind::Registered { driver: true }) {
                // Host memory only the runtime knows: pinned or registered host memory,
                // its device address its host address.
                a.type_ = 1;
                a.device = device;
                a.device_pointer = ptr as *mut c_void;
                a.host_pointer = ptr as *mut c_void;
                *attributes = a;
                return Ok(());
            }
        }
        let (mut mem_type, mut ordinal, mut dptr, mut hptr, mut managed) = (0u32, 0i32, 0u64, 0u64, 0i32);
        let get = |attr: i32, out: *mut c_void| -> RtResult<bool> {
            // Safety: `out` points to a local of the attribute's type (cuda.h).
            match unsafe { d.cuPointerGetAttribute(out, attr, ptr as u64) } {
                Ok(()) => Ok(true),
                // An address the driver does not know is unregistered host memory.
                Err(e) if e.code == error::INVALID_VALUE => Ok(false),
                Err(e) => Err(e),
            }
        };
        if get(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (&mut mem_type as *mut u32).cast())? {
            get(9, (&mut ordinal as *mut i32).cast())?; // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
            get(CU_POINTER_ATTRIBUTE_IS_MANAGED, (&mut managed as *mut i32).cast())?;
            get(CU_POINTER_ATTRIBUTE_DEVICE_POINTER, (&mut dptr as *mut u64).cast())?;
            get(CU_POINTER_ATTRIBUTE_HOST_POINTER, (&mut hptr as *mut u64).cast())?;
            a.type_ = if managed != 0 { 3 } else if mem_type == CU_MEMORYTYPE_DEVICE { 2 } else { 1 };
            a.device = ordinal;
            a.device_pointer = dptr as *mut c_void;
            a.host_pointer = hptr as *mut c_void;
        }
        *attributes = a;
        Ok(())
    }
}
