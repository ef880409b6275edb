//! The emulated driver, in safe Rust. The C boundary (`crate::exports`) converts
//! arguments and calls these methods; unit tests call them directly.

pub mod context;
pub mod error;
pub mod mappings;
pub mod memory;
pub mod module;
pub mod pools;
pub mod profile;
pub mod reservations;
pub mod vmm;

use context::Contexts;
use cumock_abi::consts::*;
use error::*;
use parking_lot::Mutex;
use profile::{DeviceProfile, Profile};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use vmm::{AllocationProp, Need, ReservationKind, Segment, Vmm};

pub struct State {
    pub vmm: Vmm,
    pub contexts: Contexts,
    pub modules: module::Modules,
    /// The stream-ordered allocator's memory pools.
    pub pools: pools::Pools,
    /// Per device: the fault of a kernel, returned by every later call that needs the
    /// device (as on a GPU, it stays for the life of the process).
    pub sticky: Vec<Option<CuError>>,
}

pub struct Driver {
    pub profile: Profile,
    initialized: AtomicBool,
    /// Set in a child forked after cuInit.
    forked_after_init: AtomicBool,
    pub state: Mutex<State>,
}

/// Where the bytes of a copy come from or go to.
pub enum HostOrDevice {
    Host(*mut u8),
    Device(u64),
}

/// What `cuMemsetD8/D16/D32` writes.
#[derive(Clone, Copy, Debug)]
pub enum Pattern {
    D8(u8),
    D16(u16),
    D32(u32),
}

impl Pattern {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Pattern::D8(v) => vec![*v],
            Pattern::D16(v) => v.to_ne_bytes().to_vec(),
            Pattern::D32(v) => v.to_ne_bytes().to_vec(),
        }
    }
}

impl Driver {
    pub fn new(profile: Profile) -> Self {
        let n = profile.devices.len();
        let granularity = profile.minimum_granularity();
        Self {
            profile,
            initialized: AtomicBool::new(false),
            forked_after_init: AtomicBool::new(false),
            state: Mutex::new(State {
                vmm: Vmm::new(n, granularity),
                contexts: Contexts::new(n),
                modules: module::Modules::default(),
                pools: pools::Pools::new(n),
                sticky: vec![None; n],
            }),
        }
    }

    pub fn device_count(&self) -> usize {
        self.profile.devices.len()
    }

    // ---- cuInit ----

    pub fn init(&self, flags: u32) -> CuResult<()> {
        self.refuse_forked_child()?;
        if flags != 0 {
            return Err(invalid(format!("cuInit flags must be 0, not {flags}")));
        }
        self.initialized.store(true, Ordering::Release);
        Ok(())
    }

    /// A process forked after cuInit gets CUDA_ERROR_NOT_INITIALIZED from every call, cuInit
    /// included, as on the H200 (probe fork-after-init): the child must exec to use CUDA.
    fn refuse_forked_child(&self) -> CuResult<()> {
        if self.forked_after_init.load(Ordering::Acquire) {
            return Err(CuError::new(
                cumock_abi::result::CUDA_ERROR_NOT_INITIALIZED,
                "this process was forked after cuInit: the driver serves only the process \
                 that initialised it (exec a new program in the child to use CUDA there)",
            ));
        }
        Ok(())
    }

    pub fn require_init(&self) -> CuResult<()> {
        self.refuse_forked_child()?;
        if self.initialized.load(Ordering::Acquire) {
            Ok(())
        } else {
            Err(CuError::new(
                cumock_abi::result::CUDA_ERROR_NOT_INITIALIZED,
                "cuInit has not been called",
            ))
        }
    }

    pub fn device(&self, ordinal: i32) -> CuResult<&DeviceProfile> {
        usize::try_from(ordinal)
            .ok()
            .and_then(|i| self.profile.devices.get(i))
            .ok_or_else(|| {
                invalid_device(format!(
                    "device {ordinal} does not exist ({} device(s))",
                    self.device_count()
                ))
            })
    }

    // ---- granularity ----

    pub fn granularity(&self, location_type: i32, location_id: i32, option: i32) -> CuResult<u64> {
        if option != CU_MEM_ALLOC_GRANULARITY_MINIMUM
            && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED
        {
            return Err(invalid(format!(
                "granularity option {option} is neither MINIMUM (0) nor RECOMMENDED (1)"
            )));
        }
        // Observed: the real driver answers for any location, valid or not (an invalid
        // type, a device that does not exist): host memory and every device have the
        // same granularity on the H200.
        let dev = match location_type {
            CU_MEM_LOCATION_TYPE_DEVICE => {
                self.device(location_id).unwrap_or(&self.profile.devices[0])
            }
            _ => &self.profile.devices[0],
        };
        Ok(if option == CU_MEM_ALLOC_GRANULARITY_MINIMUM {
            dev.granularity_minimum
        } else {
            dev.granularity_recommended
        })
    }

    /// Checks a `CUmemAllocationProp` as cuMemCreate reads it.
    pub fn check_prop(&self, prop: &cumock_abi::CUmemAllocationProp) -> CuResult<AllocationProp> {
        if prop.type_ != CU_MEM_ALLOCATION_TYPE_PINNED {
            return Err(invalid(format!(
                "allocation type {} is not CU_MEM_ALLOCATION_TYPE_PINNED (1)",
                prop.type_
            )));
        }
        match prop.location.type_ {
            CU_MEM_LOCATION_TYPE_DEVICE => {
                self.device(prop.location.id)?;
            }
            CU_MEM_LOCATION_TYPE_HOST
            | CU_MEM_LOCATION_TYPE_HOST_NUMA
            | CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT => {}
            other => {
                return Err(invalid(format!(
                    "location type {other} is not one an allocation can have"
                )))
            }
        }
        let types = prop.requested_handle_types;
        if types & (CU_MEM_HANDLE_TYPE_WIN32 | CU_MEM_HANDLE_TYPE_WIN32_KMT) != 0 {
            return Err(invalid("Win32 handle types cannot be requested on Linux"));
        }
        if types & CU_MEM_HANDLE_TYPE_FABRIC != 0 {
            // Observed on the H200 host: fabric handles need an IMEX channel, which the
            // machine did not have, although the attribute says they are supported.
            return Err(CuError::new(
                cumock_abi::result::CUDA_ERROR_NOT_PERMITTED,
                "fabric handles need an IMEX channel (CUDA_ERROR_NOT_PERMITTED, as on the captured H200)",
            ));
        }
        // Unknown bits are ignored, as the real driver ignores them (observed with 0x10).
        let dev = prop.location.type_ == CU_MEM_LOCATION_TYPE_DEVICE;
        // Looked up only when asked for: the attribute table is keyed by name.
        let compression_supported = dev
            && prop.alloc_flags.compression_type == CU_MEM_ALLOCATION_COMP_GENERIC
            && self
                .device(prop.location.id)?
                .attributes
                .get("CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED")
                .copied()
                .unwrap_or(0)
                != 0;
        Ok(AllocationProp {
            // Observed: host memory reports itself as HOST_NUMA node 0.
            location_type: if dev {
                CU_MEM_LOCATION_TYPE_DEVICE
            } else {
                CU_MEM_LOCATION_TYPE_HOST_NUMA
            },
            location_id: if dev { prop.location.id } else { 0 },
            handle_types: types,
            compression: if prop.alloc_flags.compression_type == CU_MEM_ALLOCATION_COMP_GENERIC
                && compression_supported
            {
                CU_MEM_ALLOCATION_COMP_GENERIC
            } else {
                CU_MEM_ALLOCATION_COMP_NONE
            },
            gpu_direct_rdma: prop.alloc_flags.gpu_direct_rdma_capable,
            usage: prop.alloc_flags.usage,
        })
    }

    // ---- VMM ----

    pub fn address_reserve(
        &self,
        size: u64,
        alignment: u64,
        hint: u64,
        flags: u64,
    ) -> CuResult<u64> {
        let g = self.profile.minimum_granularity();
        self.state
            .lock()
            .vmm
            .address_reserve(size, alignment, hint, flags, g)
    }

    pub fn address_free(&self, ptr: u64, size: u64) -> CuResult<()> {
        self.state.lock().vmm.address_free(ptr, size)
    }

    pub fn create(&self, size: u64, prop: AllocationProp, flags: u64) -> CuResult<u64> {
        // Free memory is read under the same lock as the insert, so two threads cannot
        // both take the last free bytes.
        let mut st = self.state.lock();
        let (g, free) = match prop.device() {
            Some(d) => {
                let dev = &self.profile.devices[d];
                (
                    dev.granularity_minimum,
                    dev.free_at_start.saturating_sub(st.vmm.used[d]),
                )
            }
            // Host memory is not the device's to count.
            None => (self.profile.minimum_granularity(), u64::MAX),
        };
        st.vmm.create(size, prop, flags, g, free)
    }

    pub fn release(&self, handle: u64) -> CuResult<()> {
        self.state.lock().vmm.release(handle)
    }

    pub fn map(&self, ptr: u64, size: u64, offset: u64, handle: u64, flags: u64) -> CuResult<()> {
        let g = self.profile.minimum_granularity();
        self.state
            .lock()
            .vmm
            .map(ptr, size, offset, handle, flags, g)
    }

    pub fn unmap(&self, ptr: u64, size: u64) -> CuResult<Vec<String>> {
        let g = self.profile.minimum_granularity();
        self.state.lock().vmm.unmap(ptr, size, g)
    }

    /// `grants`: (location type, location id, flags) as the program passed them.
    pub fn set_access(
        &self,
        ptr: u64,
        size: u64,
        grants: &[(i32, i32, i32)],
    ) -> CuResult<Vec<String>> {
        if grants.is_empty() {
            return Err(invalid("count is 0"));
        }
        let mut checked = Vec::with_capacity(grants.len());
        let mut host = None;
        for &(ty, id, flags) in grants {
            match ty {
                CU_MEM_LOCATION_TYPE_DEVICE => {}
                CU_MEM_LOCATION_TYPE_HOST
                | CU_MEM_LOCATION_TYPE_HOST_NUMA
                | CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT => {
                    if ![
                        CU_MEM_ACCESS_FLAGS_PROT_NONE,
                        CU_MEM_ACCESS_FLAGS_PROT_READ,
                        CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                    ]
                    .contains(&flags)
                    {
                        return Err(invalid(format!("access flags {flags} are not PROT_NONE (0), PROT_READ (1) or PROT_READWRITE (3)")));
                    }
                    host = Some(flags as u8);
                    continue;
                }
                other => {
                    return Err(invalid(format!(
                        "location type {other} is not valid for access"
                    )))
                }
            }
            let dev = self.device(id).map_err(|e| invalid(e.message))?;
            let _ = dev;
            if ![
                CU_MEM_ACCESS_FLAGS_PROT_NONE,
                CU_MEM_ACCESS_FLAGS_PROT_READ,
                CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            ]
            .contains(&flags)
            {
                return Err(invalid(format!("access flags {flags} are not PROT_NONE (0), PROT_READ (1) or PROT_READWRITE (3)")));
            }
            checked.push((id as usize, flags as u8));
        }
        let mut st = self.state.lock();
        // A device may only be granted memory it can reach: its own, or a peer's.
        for m in st.vmm.mappings.starting_in(ptr, ptr.saturating_add(size)) {
            let owner = st
                .vmm
                .allocations
                .get(&(m.handle & 0xffff_ffff))
                .and_then(|a| a.prop.device());
            for &(dev, _) in &checked {
                if let Some(o) = owner {
                    if o != dev && !self.profile.can_access_peer(dev, o) {
                        return Err(invalid(format!(
                            "device {dev} cannot access device {o}'s memory (no peer access)"
                        )));
                    }
                }
            }
        }
        if let Some(flags) = host {
            st.vmm.set_host_access(ptr, size, flags)?;
        }
        if checked.is_empty() {
            return Ok(Vec::new());
        }
        st.vmm.set_access(ptr, size, &checked)
    }

    pub fn get_access(&self, location_type: i32, location_id: i32, ptr: u64) -> CuResult<u64> {
        // Observed: the real driver reads the id as a device whatever the location type
        // (a HOST location with id 0 reports device 0's flags), and a bad id is
        // CUDA_ERROR_INVALID_DEVICE.
        // Memory located on the host has access flags of its own for the host location
        // (probe host-location-*).
        let host = matches!(
            location_type,
            CU_MEM_LOCATION_TYPE_HOST | CU_MEM_LOCATION_TYPE_HOST_NUMA
        );
        self.device(location_id)?;
        let st = self.state.lock();
        if let (true, Some(flags)) = (host, st.vmm.host_access(ptr)) {
            return Ok(u64::from(flags));
        }
        Ok(u64::from(st.vmm.get_access(location_id as usize, ptr)?))
    }

    pub fn export(&self, handle: u64, handle_type: i32, flags: u64) -> CuResult<OwnedFd> {
        self.state.lock().vmm.export(handle, handle_type, flags)
    }

    pub fn import(&self, fd: i32, handle_type: i32) -> CuResult<u64> {
        let n = self.device_count();
        self.state.lock().vmm.import(fd, handle_type, n)
    }

    pub fn retain_allocation_handle(&self, addr: u64) -> CuResult<u64> {
        self.state.lock().vmm.retain(addr)
    }

    pub fn allocation_properties(&self, handle: u64) -> CuResult<AllocationProp> {
        self.state.lock().vmm.properties(handle)
    }

    pub fn mem_info(&self) -> CuResult<(u64, u64)> {
        let st = self.state.lock();
        let (_, ctx) = st.contexts.require_current()?;
        self.check_sticky(&st, ctx.device)?;
        let dev = &self.profile.devices[ctx.device];
        Ok((
            dev.free_at_start.saturating_sub(st.vmm.used[ctx.device]),
            dev.total_mem,
        ))
    }

    // ---- cuMemAlloc / cuMemFree: the mock's own reservation + allocation + mapping ----

    pub fn mem_alloc(&self, size: u64) -> CuResult<u64> {
        let mut st = self.state.lock();
        let (ctx, c) = st.contexts.require_current()?;
        let device = c.device;
        self.check_sticky(&st, device)?;
        if size == 0 {
            return Err(invalid("size is 0"));
        }
        let dev = &self.profile.devices[device];
        let g = dev.granularity_minimum;
        let rounded = size
            .checked_next_multiple_of(g)
            .ok_or_else(|| out_of_memory("size overflows"))?;
        let free = dev.free_at_start.saturating_sub(st.vmm.used[device]);
        let prop = AllocationProp {
            location_type: CU_MEM_LOCATION_TYPE_DEVICE,
            location_id: device as i32,
            handle_types: 0,
            compression: 0,
            gpu_direct_rdma: 0,
            usage: 0,
        };
        let h = st.vmm.create(rounded, prop, 0, g, free)?;
        let base = match st.vmm.address_reserve(rounded, 0, 0, 0, g) {
            Ok(b) => b,
            Err(e) => {
                st.vmm.release(h).expect("just created");
                return Err(e);
            }
        };
        let n = self.device_count();
        st.vmm
            .map(base, rounded, 0, h, 0, g)
            .expect("a fresh range takes the mapping");
        st.vmm.release(h).expect("the mapping holds it");
        // cuMemAlloc memory is usable from every context, as unified addressing makes it.
        st.vmm.mappings.get_mut(&base).expect("mapped").access = vmm::AccessTable::all(n);
        st.vmm.reservations.get_mut(&base).expect("reserved").kind = ReservationKind::Alloc {
            context: ctx,
            requested: size,
        };
        Ok(base)
    }

    pub fn mem_free(&self, ptr: u64) -> CuResult<()> {
        // Observed: cuMemFree(0) succeeds, with or without a context.
        if ptr == 0 {
            return Ok(());
        }
        let mut st = self.state.lock();
        // Observed: cuMemFree frees stream-ordered (pool) memory too.
        if st.free_pool_allocation(ptr) {
            return Ok(());
        }
        Self::free_alloc(&mut st.vmm, ptr)
    }

    fn free_alloc(vmm: &mut Vmm, ptr: u64) -> CuResult<()> {
        match vmm.reservations.get(&ptr).map(|r| r.kind) {
            Some(ReservationKind::Alloc { .. }) => {
                vmm.remove_mapping(ptr);
                vmm.remove_reservation(ptr);
                Ok(())
            }
            Some(ReservationKind::Vmm) => Err(invalid(format!(
                "{ptr:#x} is a cuMemAddressReserve range; unmap it and cuMemAddressFree it"
            ))),
            Some(ReservationKind::Pool { .. }) => Err(invalid(format!(
                "{ptr:#x} lies in a memory pool but no live allocation starts there (freed already?)"
            ))),
            None => Err(invalid(format!(
                "{ptr:#x} is not the start of a cuMemAlloc allocation"
            ))),
        }
    }

    /// cuMemGetAddressRange: the allocation (cuMemAlloc) or mapping (VMM) holding `ptr`.
    pub fn address_range(&self, ptr: u64) -> CuResult<(u64, u64)> {
        let st = self.state.lock();
        // Observed: a pool allocation's range is its own, of the size asked for.
        if let Some((start, b)) = st.pools.block_containing(ptr) {
            if ptr - start < b.requested {
                return Ok((start, b.requested));
            }
        }
        if let Some((base, r)) = st.vmm.reservation_at(ptr) {
            if let ReservationKind::Alloc { requested, .. } = r.kind {
                if ptr - base < requested {
                    return Ok((base, requested));
                }
            }
        }
        // Observed (probe address-range-states): VMM memory is found once the current
        // context's device may read it, as its mapping (start and size); a reserved-only
        // range, or a mapping without access, is not.
        let vmm = st
            .vmm
            .reservation_at(ptr)
            .is_some_and(|(_, r)| r.kind == ReservationKind::Vmm);
        if let (true, Some(m), Ok((_, ctx))) =
            (vmm, st.vmm.mapping_at(ptr), st.contexts.require_current())
        {
            if m.access.allows(ctx.device, Need::Read) {
                return Ok((m.start, m.size));
            }
        }
        Err(CuError::new(
            cumock_abi::result::CUDA_ERROR_NOT_FOUND,
            format!(
                "{ptr:#x} is neither cuMemAlloc memory nor a mapping this context's device may \
                 access (as on the real driver, a VMM range is found only once access is granted)"
            ),
        ))
    }

    // ---- copies and memsets ----

    /// Is `addr` device memory of this process (inside a reservation)? A "host" pointer
    /// that is, is treated as device memory, as unified addressing does; reading it as
    /// host memory would fault.
    pub fn is_device_address(&self, addr: u64) -> bool {
        self.state.lock().vmm.is_device_address(addr)
    }

    /// Copies `len` bytes; device sides are checked against the current context's device.
    ///
    /// # Safety
    /// Host sides are valid for `len` bytes (readable for a source, writable for a
    /// destination), as cuda.h requires of the program.
    pub unsafe fn copy(&self, dst: HostOrDevice, src: HostOrDevice, len: u64) -> CuResult<()> {
        let (dst_segs, src_segs, _bytes) = {
            let mut st = self.state.lock();
            let (_, ctx) = st.contexts.require_current()?;
            let device = ctx.device;
            self.check_sticky(&st, device)?;
            let d = match dst {
                HostOrDevice::Device(a) => Some(st.vmm.segments(a, len, device, Need::Write)?),
                HostOrDevice::Host(_) => None,
            };
            let s = match src {
                HostOrDevice::Device(a) => Some(st.vmm.segments(a, len, device, Need::Read)?),
                HostOrDevice::Host(_) => None,
            };
            match (&d, &s) {
                // A copy to the host returns when the data is there, after all earlier
                // work in the stream: nothing is in flight after it.
                (None, Some(_)) => st.vmm.synchronized(),
                (Some(d), s) => {
                    st.vmm.issued(d);
                    if let Some(s) = s {
                        st.vmm.issued(s);
                    }
                }
                (None, None) => {}
            }
            let bytes = st.vmm.hold_bytes();
            (d, s, bytes)
        };
        // The bytes move outside the lock: a 256 MiB copy must not stall other threads.
        // `_bytes` keeps the segments' memory where it is even if another thread unmaps
        // or releases it meanwhile.
        match (dst, src, dst_segs, src_segs) {
            (_, HostOrDevice::Host(h), Some(d), None) => {
                let mut p = h as *const u8;
                for s in d {
                    // Safety: p stays within the host source, per this function's contract;
                    // the segment is live device memory (held by `_bytes`). memmove, since
                    // a "host" pointer may be another view of the same memory.
                    unsafe { std::ptr::copy(p, s.ptr.as_ptr(), s.len) };
                    p = p.wrapping_add(s.len);
                }
            }
            (HostOrDevice::Host(h), _, None, Some(src)) => {
                let mut p = h;
                for s in src {
                    // Safety: p stays within the host destination, per the contract.
                    unsafe { std::ptr::copy(s.ptr.as_ptr(), p, s.len) };
                    p = p.wrapping_add(s.len);
                }
            }
            (_, _, Some(d), Some(s)) => copy_segments(&d, &s),
            (HostOrDevice::Host(d), HostOrDevice::Host(s), None, None) => {
                // Safety: both are host pointers the caller vouches for (cuMemcpy on two
                // host addresses is a plain memmove under unified addressing).
                unsafe { std::ptr::copy(s as *const u8, d, len as usize) };
            }
            _ => unreachable!("segments exist exactly for device sides"),
        }
        Ok(())
    }

    /// Device memory as host memory, for a kernel launch: `[addr, addr+len)` as host
    /// pointers (one piece per mapping it crosses), checked against `device`'s access
    /// (`need`: read for loads, write for stores and atomics; the same rules and errors
    /// as a copy's). The pointers stay valid, and the memory stays where it is, until the
    /// returned value is dropped: hold it for the duration of the launch, and do not call
    /// the driver's export from the same thread meanwhile (an export waits for it). The
    /// memory counts as having work in flight until the next synchronising call, as a
    /// copy's does.
    pub fn translate(
        &self,
        addr: u64,
        len: u64,
        device: usize,
        need: Need,
    ) -> CuResult<Translation> {
        let mut st = self.state.lock();
        let segments = st.vmm.segments(addr, len, device, need)?;
        st.vmm.issued(&segments);
        Ok(Translation {
            segments,
            _bytes: st.vmm.hold_bytes(),
        })
    }

    pub fn memset(&self, dst: u64, pattern: Pattern, count: u64) -> CuResult<()> {
        let width = pattern.bytes().len() as u64;
        if !dst.is_multiple_of(width) {
            return Err(invalid(format!(
                "{dst:#x} is not aligned to the {width}-byte element"
            )));
        }
        let len = count
            .checked_mul(width)
            .ok_or_else(|| invalid("count overflows"))?;
        let (segs, _bytes) = {
            let mut st = self.state.lock();
            let (_, ctx) = st.contexts.require_current()?;
            self.check_sticky(&st, ctx.device)?;
            let segs = st.vmm.segments(dst, len, ctx.device, Need::Write)?;
            st.vmm.issued(&segs);
            (segs, st.vmm.hold_bytes())
        };
        let bytes = pattern.bytes();
        for s in segs {
            // Safety: the segment is live device memory, held by `_bytes`, and nothing
            // borrows it as a Rust reference (all access is through raw copies).
            let dst = unsafe { std::slice::from_raw_parts_mut(s.ptr.as_ptr(), s.len) };
            if bytes.iter().all(|b| *b == bytes[0]) {
                dst.fill(bytes[0]);
            } else {
                // Segments start at element boundaries: dst and every mapping are aligned
                // to the element's width.
                for (i, b) in dst.iter_mut().enumerate() {
                    *b = bytes[i % bytes.len()];
                }
            }
        }
        Ok(())
    }

    // ---- contexts ----

    pub fn primary_retain(&self, device: i32) -> CuResult<u64> {
        self.device(device)?;
        let mut st = self.state.lock();
        let d = device as usize;
        self.check_sticky(&st, d)?;
        let pc = st.contexts.primary[d].clone();
        let ctx = match pc.context {
            Some(c) if st.contexts.contexts.contains_key(&c) => c,
            // Observed: the primary context keeps its handle across release and reset.
            Some(c) => st.contexts.revive(c, d, pc.flags),
            None => {
                let c = st.contexts.create(d, pc.flags, true);
                st.contexts.primary[d].context = Some(c);
                c
            }
        };
        st.contexts.primary[d].refcount += 1;
        Ok(ctx)
    }

    pub fn primary_release(&self, device: i32) -> CuResult<()> {
        self.device(device)?;
        let mut st = self.state.lock();
        let d = device as usize;
        if st.contexts.primary[d].refcount == 0 {
            return Err(invalid_context(format!(
                "device {device}'s primary context is not retained"
            )));
        }
        st.contexts.primary[d].refcount -= 1;
        if st.contexts.primary[d].refcount == 0 {
            if let Some(c) = st.contexts.primary[d].context {
                Self::destroy_context(&mut st, c)?;
            }
        }
        Ok(())
    }

    pub fn primary_reset(&self, device: i32) -> CuResult<()> {
        self.device(device)?;
        let mut st = self.state.lock();
        let d = device as usize;
        st.contexts.primary[d].refcount = 0;
        st.contexts.primary[d].flags = 0;
        if let Some(c) = st.contexts.primary[d].context {
            if st.contexts.contexts.contains_key(&c) {
                Self::destroy_context(&mut st, c)?;
            }
        }
        Ok(())
    }

    pub fn primary_state(&self, device: i32) -> CuResult<(u32, bool)> {
        self.device(device)?;
        let st = self.state.lock();
        let pc = &st.contexts.primary[device as usize];
        Ok((pc.flags, pc.refcount > 0))
    }

    pub fn primary_set_flags(&self, device: i32, flags: u32) -> CuResult<()> {
        self.device(device)?;
        check_ctx_flags(flags)?;
        let mut st = self.state.lock();
        let d = device as usize;
        st.contexts.primary[d].flags = flags;
        if let Some(c) = st.contexts.primary[d].context {
            if let Some(ctx) = st.contexts.contexts.get_mut(&c) {
                ctx.flags = flags;
            }
        }
        Ok(())
    }

    pub fn ctx_create(&self, flags: u32, device: i32) -> CuResult<u64> {
        self.device(device)?;
        check_ctx_flags(flags)?;
        let mut st = self.state.lock();
        self.check_sticky(&st, device as usize)?;
        let c = st.contexts.create(device as usize, flags, false);
        st.contexts.push(c)?;
        Ok(c)
    }

    pub fn ctx_destroy(&self, ctx: u64) -> CuResult<()> {
        let mut st = self.state.lock();
        if st.contexts.get(ctx)?.primary {
            return Err(invalid_context(
                "a primary context is released with cuDevicePrimaryCtxRelease, not destroyed",
            ));
        }
        Self::destroy_context(&mut st, ctx)
    }

    fn destroy_context(st: &mut State, ctx: u64) -> CuResult<()> {
        st.contexts.destroy(ctx)?;
        // Its modules go with it (their variables are cuMemAlloc memory of it, freed below).
        st.modules.modules.retain(|_, m| m.context != ctx);
        let modules = &st.modules.modules;
        st.modules
            .functions
            .retain(|_, f| modules.contains_key(&f.module));
        // cuMemAlloc memory dies with its context; VMM mappings do not (observed).
        let owned: Vec<u64> = st
            .vmm
            .reservations
            .iter()
            .filter(
                |(_, r)| matches!(r.kind, ReservationKind::Alloc { context, .. } if context == ctx),
            )
            .map(|(b, _)| b)
            .collect();
        for b in owned {
            Self::free_alloc(&mut st.vmm, b)?;
        }
        Ok(())
    }

    pub fn ctx_set_current(&self, ctx: Option<u64>) -> CuResult<()> {
        self.state.lock().contexts.set_current(ctx)
    }

    pub fn ctx_current(&self) -> Option<u64> {
        self.state.lock().contexts.current()
    }

    pub fn ctx_push(&self, ctx: u64) -> CuResult<()> {
        self.state.lock().contexts.push(ctx)
    }

    pub fn ctx_pop(&self) -> CuResult<u64> {
        self.state.lock().contexts.pop()
    }

    pub fn ctx_device(&self, ctx: Option<u64>) -> CuResult<usize> {
        let st = self.state.lock();
        match ctx {
            Some(c) => Ok(st.contexts.get(c)?.device),
            None => Ok(st.contexts.require_current()?.1.device),
        }
    }

    pub fn ctx_flags(&self) -> CuResult<u32> {
        Ok(self.state.lock().contexts.require_current()?.1.flags)
    }

    pub fn ctx_synchronize(&self, ctx: Option<u64>) -> CuResult<()> {
        let mut st = self.state.lock();
        let device = match ctx {
            Some(c) => st.contexts.get(c)?.device,
            None => st.contexts.require_current()?.1.device,
        };
        self.check_sticky(&st, device)?;
        st.vmm.synchronized();
        st.release_pool_memory();
        Ok(())
    }

    /// cuStreamSynchronize, cuEventSynchronize: the mock runs everything at once, so a
    /// synchronisation only marks the work as done, and lets memory pools above their
    /// release threshold give memory back (as cuCtxSynchronize does).
    pub fn synchronized(&self) {
        let mut st = self.state.lock();
        st.vmm.synchronized();
        st.release_pool_memory();
    }

    pub fn ctx_enable_peer_access(&self, peer: u64, flags: u32) -> CuResult<()> {
        if flags != 0 {
            return Err(invalid("flags must be 0"));
        }
        let mut st = self.state.lock();
        let (cur, c) = st.contexts.require_current()?;
        let me = c.device;
        let other = st
            .contexts
            .get(peer)
            .map_err(|_| invalid_context(format!("{peer:#x} is not a live context")))?
            .device;
        if !self.profile.can_access_peer(me, other) {
            return Err(CuError::new(
                cumock_abi::result::CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
                format!("device {me} cannot access device {other}"),
            ));
        }
        let c = st.contexts.contexts.get_mut(&cur).expect("current");
        if c.peers.contains(&other) {
            return Err(CuError::new(
                cumock_abi::result::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED,
                "peer access is already enabled",
            ));
        }
        c.peers.push(other);
        Ok(())
    }

    pub fn ctx_disable_peer_access(&self, peer: u64) -> CuResult<()> {
        let mut st = self.state.lock();
        let (cur, _) = st.contexts.require_current()?;
        let other = st
            .contexts
            .get(peer)
            .map_err(|_| invalid_context(format!("{peer:#x} is not a live context")))?
            .device;
        let c = st.contexts.contexts.get_mut(&cur).expect("current");
        let before = c.peers.len();
        c.peers.retain(|p| *p != other);
        if c.peers.len() == before {
            return Err(CuError::new(
                cumock_abi::result::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED,
                "peer access was not enabled",
            ));
        }
        Ok(())
    }

    // ---- streams and events ----

    pub fn stream_create(&self, flags: u32) -> CuResult<u64> {
        self.stream_create_with_priority(flags, 0)
    }

    pub fn stream_create_with_priority(&self, flags: u32, priority: i32) -> CuResult<u64> {
        if flags > 1 {
            return Err(invalid(format!(
                "stream flags {flags} are not CU_STREAM_DEFAULT or CU_STREAM_NON_BLOCKING"
            )));
        }
        let mut st = self.state.lock();
        let (cur, c) = st.contexts.require_current()?;
        self.check_sticky(&st, c.device)?;
        let priority = priority.clamp(
            context::STREAM_PRIORITY_GREATEST,
            context::STREAM_PRIORITY_LEAST,
        );
        Ok(st
            .contexts
            .create_stream(cur, context::StreamProps { flags, priority }))
    }

    /// cuCtxGetLimit / cuCtxSetLimit on the current context.
    pub fn ctx_limit(&self, limit: i32, set: Option<u64>) -> CuResult<u64> {
        let mut st = self.state.lock();
        let (ctx, _) = st.contexts.require_current()?;
        let default = usize::try_from(limit)
            .ok()
            .and_then(|i| context::DEFAULT_LIMITS.get(i))
            .ok_or_else(|| invalid(format!("{limit} is not a CUlimit")))?
            .ok_or_else(|| {
                CuError::new(
                    cumock_abi::result::CUDA_ERROR_UNSUPPORTED_LIMIT,
                    format!("limit {limit} is not supported on this device"),
                )
            })?;
        if let Some(v) = set {
            st.contexts.limits.insert((ctx, limit), v);
        }
        Ok(st
            .contexts
            .limits
            .get(&(ctx, limit))
            .copied()
            .unwrap_or(default))
    }

    /// A stream's context, device and properties (cuStreamGetCtx, GetDevice, GetFlags,
    /// GetPriority).
    pub fn stream_info(&self, stream: u64) -> CuResult<(u64, usize, context::StreamProps)> {
        let st = self.state.lock();
        let (ctx, props) = st.contexts.stream(stream)?;
        Ok((ctx, st.contexts.get(ctx)?.device, props))
    }

    pub fn stream_check(&self, stream: u64) -> CuResult<()> {
        self.state.lock().contexts.check_stream(stream)
    }

    pub fn stream_destroy(&self, stream: u64) -> CuResult<()> {
        self.check_sticky_current()?;
        self.state.lock().contexts.destroy_stream(stream)
    }

    /// The sticky error of the current context's device, if a kernel faulted there (streams
    /// and events report it as the H200 does: probe fault-stream-sync).
    pub fn check_sticky_current(&self) -> CuResult<()> {
        let st = self.state.lock();
        match st.contexts.require_current() {
            Ok((_, c)) => self.check_sticky(&st, c.device),
            Err(_) => Ok(()),
        }
    }

    pub fn event_create(&self, flags: u32) -> CuResult<u64> {
        if flags & !0xF != 0 {
            return Err(invalid(format!("event flags {flags:#x} have unknown bits")));
        }
        let mut st = self.state.lock();
        let device = st.contexts.require_current()?.1.device;
        self.check_sticky(&st, device)?;
        // CU_EVENT_DISABLE_TIMING.
        Ok(st.contexts.create_event(flags & 0x2 == 0))
    }

    pub fn event_record(&self, event: u64, stream: u64) -> CuResult<()> {
        let mut st = self.state.lock();
        st.contexts.check_stream(stream)?;
        *st.contexts.event(event)? = Some(std::time::Instant::now());
        Ok(())
    }

    pub fn event_check(&self, event: u64) -> CuResult<()> {
        self.state.lock().contexts.event(event).map(|_| ())
    }

    pub fn event_destroy(&self, event: u64) -> CuResult<()> {
        let mut st = self.state.lock();
        st.contexts.event(event)?;
        st.contexts.events.remove(&event);
        st.contexts.untimed_events.remove(&event);
        Ok(())
    }

    pub fn event_elapsed_ms(&self, start: u64, end: u64) -> CuResult<f32> {
        let mut st = self.state.lock();
        for e in [start, end] {
            st.contexts.event(e)?;
            if st.contexts.untimed_events.contains(&e) {
                // As the H200 answers (seen by cumock's runtime's programs).
                return Err(invalid_handle(format!(
                    "event {e:#x} was created with CU_EVENT_DISABLE_TIMING"
                )));
            }
        }
        let a = (*st.contexts.event(start)?)
            .ok_or_else(|| invalid_handle("the start event was never recorded"))?;
        let b = (*st.contexts.event(end)?)
            .ok_or_else(|| invalid_handle("the end event was never recorded"))?;
        Ok(b.saturating_duration_since(a).as_secs_f32() * 1000.0)
    }

    /// What cuPointerGetAttribute reports of a device address.
    pub fn pointer_info(&self, ptr: u64) -> Option<PointerInfo> {
        let st = self.state.lock();
        let m = st.vmm.mapping_at(ptr)?;
        let a = st.vmm.allocations.get(&(m.handle & 0xffff_ffff))?;
        let r = st.vmm.reservations.get(&m.reservation)?;
        let current_device = st
            .contexts
            .current()
            .and_then(|c| st.contexts.get(c).ok())
            .map(|c| c.device);
        let (ctx, range, pool, buffer_id) = match r.kind {
            ReservationKind::Alloc { context, requested } => {
                (context, (m.start, requested), 0, m.handle & 0xffff_ffff)
            }
            // Observed: for VMM memory the range is the whole reservation.
            ReservationKind::Vmm => (0, (m.reservation, r.size), 0, m.handle & 0xffff_ffff),
            // Pool memory is known only while allocated; its range is the allocation.
            ReservationKind::Pool { pool } => {
                let (start, b) = st.pools.block_containing(ptr)?;
                (0, (start, b.requested), pool, b.id)
            }
        };
        let on_host = a.prop.device().is_none();
        Some(PointerInfo {
            on_host,
            // The H200 hands out the address as a host or device pointer of memory on the
            // host only once somebody may access it.
            reachable: m.host_access != 0 || m.access != vmm::AccessTable::none(0),
            context: ctx,
            device: a.prop.device().unwrap_or(0),
            range,
            mapping: (m.start, m.size),
            handle_types: a.prop.handle_types,
            access: current_device.map(|d| m.access.get(d)).unwrap_or(0),
            buffer_id,
            rdma: a.prop.gpu_direct_rdma,
            vmm: r.kind == ReservationKind::Vmm,
            pool,
        })
    }
}

/// Device memory a kernel may use, as host memory (see [`Driver::translate`]).
pub struct Translation {
    /// The pieces of the range, in order; their lengths add up to the range's.
    pub segments: Vec<Segment>,
    _bytes: vmm::BytesInUse,
}

pub struct PointerInfo {
    /// The allocation is located on the host (HOST or HOST_NUMA).
    pub on_host: bool,
    /// Some device, or the host, has been granted access to it.
    pub reachable: bool,
    pub context: u64,
    pub device: usize,
    pub range: (u64, u64),
    pub mapping: (u64, u64),
    pub handle_types: i32,
    pub access: u8,
    pub buffer_id: u64,
    pub rdma: u8,
    pub vmm: bool,
    /// The memory pool it was allocated from (cuMemAllocAsync); 0 if none.
    pub pool: u64,
}

fn check_ctx_flags(flags: u32) -> CuResult<()> {
    let sched = flags & CU_CTX_SCHED_MASK;
    if flags & !CU_CTX_FLAGS_MASK != 0 || !matches!(sched, 0 | 1 | 2 | 4) {
        return Err(invalid(format!("context flags {flags:#x} are not valid")));
    }
    Ok(())
}

/// Copies between device segments of equal total length.
fn copy_segments(dst: &[Segment], src: &[Segment]) {
    let (mut di, mut si, mut doff, mut soff) = (0, 0, 0, 0);
    while di < dst.len() && si < src.len() {
        let d = &dst[di];
        let s = &src[si];
        let n = (d.len - doff).min(s.len - soff);
        // Safety: both pointers lie inside live device memory (the caller holds the
        // bytes); n fits both segments. memmove, since a device-to-device copy may
        // overlap itself.
        unsafe { std::ptr::copy(s.ptr.offset(soff).as_ptr(), d.ptr.offset(doff).as_ptr(), n) };
        doff += n;
        soff += n;
        if doff == d.len {
            di += 1;
            doff = 0;
        }
        if soff == s.len {
            si += 1;
            soff = 0;
        }
    }
}

/// The process's driver, made on first use from the environment (`CUMOCK_PROFILE`, a
/// profile file; `CUMOCK_DEVICES`, a device count).
pub fn driver() -> Result<&'static Driver, &'static str> {
    static DRIVER: std::sync::OnceLock<Result<Driver, String>> = std::sync::OnceLock::new();
    DRIVER
        .get_or_init(|| {
            let d = profile_from_env().map(Driver::new);
            // Safety: registering plain extern "C" functions with no captured state.
            unsafe {
                libc::pthread_atfork(
                    Some(before_fork),
                    Some(after_fork_parent),
                    Some(after_fork_child),
                )
            };
            d
        })
        .as_ref()
        .map_err(|e| e.as_str())
}

/// fork() while another thread holds the state's lock would leave the child with a lock
/// no thread will ever release: the lock is taken across the fork and released on both
/// sides, so the child starts with a consistent, unlocked state.
extern "C" fn before_fork() {
    if let Ok(d) = driver() {
        std::mem::forget(d.state.lock());
    }
}

extern "C" fn after_fork_parent() {
    if let Ok(d) = driver() {
        // Safety: before_fork took the lock in this thread and forgot its guard.
        unsafe { d.state.force_unlock() };
    }
}

extern "C" fn after_fork_child() {
    if let Ok(d) = driver() {
        // An unlock could hand the lock to a thread parked on it in the parent, which
        // does not exist here: the child resets the lock to its initial state instead.
        // Safety: this thread is the only one in the child, and it holds the lock (taken
        // in before_fork), so nothing else reads the lock's state while it is written.
        unsafe {
            let raw = d.state.raw() as *const parking_lot::RawMutex as *mut parking_lot::RawMutex;
            raw.write(<parking_lot::RawMutex as parking_lot::lock_api::RawMutex>::INIT);
        }
        d.state.lock().vmm.after_fork_child();
        if d.initialized.load(Ordering::Acquire) {
            d.forked_after_init.store(true, Ordering::Release);
        }
    }
}

pub fn profile_from_env() -> Result<Profile, String> {
    if let Ok(path) = std::env::var("CUMOCK_PROFILE") {
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("CUMOCK_PROFILE={path}: {e}"))?;
        let mut p = Profile::parse(&text).map_err(|e| format!("CUMOCK_PROFILE={path}: {e}"))?;
        if let Ok(n) = std::env::var("CUMOCK_DEVICES") {
            let n: usize = n
                .parse()
                .map_err(|_| format!("CUMOCK_DEVICES={n} is not a number"))?;
            if n > p.devices.len() {
                return Err(format!(
                    "CUMOCK_DEVICES={n} but the profile has {} device(s)",
                    p.devices.len()
                ));
            }
            p.devices.truncate(n);
            if let Some(m) = &mut p.peer_access {
                m.truncate(n);
                m.iter_mut().for_each(|r| r.truncate(n));
            }
        }
        return Ok(p);
    }
    match std::env::var("CUMOCK_DEVICES") {
        Ok(n) => Profile::builtin_with_devices(
            n.parse()
                .map_err(|_| format!("CUMOCK_DEVICES={n} is not a number"))?,
        ),
        Err(_) => Ok(Profile::builtin()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cumock_abi::result::*;

    fn unsafe_copy(d: &Driver, dst: HostOrDevice, src: HostOrDevice, len: u64) -> CuResult<()> {
        // Safety: the tests pass host buffers at least `len` bytes long.
        unsafe { d.copy(dst, src, len) }
    }

    fn driver_with(n: usize) -> Driver {
        let d = Driver::new(Profile::builtin_with_devices(n).unwrap());
        d.init(0).unwrap();
        d
    }

    fn dev_prop(d: &Driver, dev: i32) -> AllocationProp {
        let mut p = cumock_abi::CUmemAllocationProp {
            type_: 1,
            ..Default::default()
        };
        p.location = cumock_abi::CUmemLocation { type_: 1, id: dev };
        p.requested_handle_types = 1;
        d.check_prop(&p).unwrap()
    }

    #[test]
    fn grow_without_copying_keeps_data_across_chunks() {
        let d = driver_with(1);
        let ctx = d.primary_retain(0).unwrap();
        d.ctx_set_current(Some(ctx)).unwrap();
        const G: u64 = 2 << 20;
        let va = d.address_reserve(64 * G, 0, 0, 0).unwrap();
        for i in 0..3 {
            let h = d.create(G, dev_prop(&d, 0), 0).unwrap();
            d.map(va + i * G, G, 0, h, 0).unwrap();
            d.release(h).unwrap();
            d.set_access(va + i * G, G, &[(1, 0, 3)]).unwrap();
        }
        let data: Vec<u8> = (0..3 * G).map(|i| (i % 251) as u8).collect();
        unsafe_copy(
            &d,
            HostOrDevice::Device(va),
            HostOrDevice::Host(data.as_ptr() as *mut u8),
            3 * G,
        )
        .unwrap();
        let mut back = vec![0u8; (3 * G) as usize];
        unsafe_copy(
            &d,
            HostOrDevice::Host(back.as_mut_ptr()),
            HostOrDevice::Device(va),
            3 * G,
        )
        .unwrap();
        assert_eq!(back, data);
        d.unmap(va, 3 * G).unwrap();
        d.address_free(va, 64 * G).unwrap();
    }

    #[test]
    fn translation_sees_what_copies_see_before_and_after_an_export() {
        let d = driver_with(2);
        let ctx = d.primary_retain(0).unwrap();
        d.ctx_set_current(Some(ctx)).unwrap();
        const G: u64 = 2 << 20;
        let va = d.address_reserve(4 * G, 0, 0, 0).unwrap();
        let h = d.create(2 * G, dev_prop(&d, 0), 0).unwrap();
        d.map(va, 2 * G, 0, h, 0).unwrap();
        d.map(va + 2 * G, 2 * G, 0, h, 0).unwrap();
        assert_eq!(
            d.translate(va, 8, 0, Need::Read).err().map(|e| e.code),
            Some(CUDA_ERROR_INVALID_VALUE),
            "no access granted yet"
        );
        d.set_access(va, 4 * G, &[(1, 0, 3)]).unwrap();
        {
            // Crossing from one alias into the other: two pieces.
            let t = d.translate(va + 2 * G - 4, 8, 0, Need::Write).unwrap();
            assert_eq!(t.segments.iter().map(|s| s.len).collect::<Vec<_>>(), [4, 4]);
            for s in &t.segments {
                // Safety: each piece is live device memory of s.len bytes, held by t.
                unsafe { std::ptr::write_bytes(s.ptr.as_ptr(), 0xab, s.len) };
            }
        }
        let fd = d.export(h, 1, 0).unwrap();
        let mut back = [0u8; 8];
        // The alias at va+2G shows the bytes written at the end of the first mapping.
        unsafe_copy(
            &d,
            HostOrDevice::Host(back.as_mut_ptr()),
            HostOrDevice::Device(va + 4 * G - 4),
            4,
        )
        .unwrap();
        unsafe_copy(
            &d,
            HostOrDevice::Host(back[4..].as_mut_ptr()),
            HostOrDevice::Device(va + 2 * G),
            4,
        )
        .unwrap();
        assert_eq!(back, [0xab; 8]);
        let t = d.translate(va + 2 * G - 4, 8, 0, Need::Read).unwrap();
        // Safety: live device memory held by t.
        let first = unsafe { t.segments[1].ptr.as_ptr().read() };
        assert_eq!(
            first, 0xab,
            "the moved pages are where the translation points"
        );
        drop((t, fd));
        d.unmap(va, 4 * G).unwrap();
        d.release(h).unwrap();
        d.address_free(va, 4 * G).unwrap();
    }

    #[test]
    fn released_memory_is_reused_and_reads_zeros() {
        let d = driver_with(1);
        let ctx = d.primary_retain(0).unwrap();
        d.ctx_set_current(Some(ctx)).unwrap();
        const G: u64 = 2 << 20;
        let va = d.address_reserve(G, 0, 0, 0).unwrap();
        let mut places = Vec::new();
        // Touched memory goes back to the host 64 ranges at a time (see
        // memory::DeviceMemory::release); then its ranges are reused.
        for round in 0..150u8 {
            let h = d.create(G, dev_prop(&d, 0), 0).unwrap();
            d.map(va, G, 0, h, 0).unwrap();
            d.set_access(va, G, &[(1, 0, 3)]).unwrap();
            let t = d.translate(va, 1, 0, Need::Read).unwrap();
            places.push(t.segments[0].ptr);
            drop(t);
            let mut back = [9u8; 64];
            unsafe_copy(
                &d,
                HostOrDevice::Host(back.as_mut_ptr()),
                HostOrDevice::Device(va + 4096),
                64,
            )
            .unwrap();
            assert_eq!(back, [0; 64], "round {round}: fresh memory reads zeros");
            let x = [round + 1; 64];
            unsafe_copy(
                &d,
                HostOrDevice::Device(va + 4096),
                HostOrDevice::Host(x.as_ptr() as *mut u8),
                64,
            )
            .unwrap();
            d.unmap(va, G).unwrap();
            d.release(h).unwrap();
        }
        let distinct: std::collections::HashSet<_> =
            places.iter().map(|p| p.as_ptr() as usize).collect();
        assert!(
            distinct.len() <= 64 + 1,
            "{} ranges for 150 allocations one after another",
            distinct.len()
        );
        d.address_free(va, G).unwrap();
    }

    #[test]
    fn host_views_follow_an_export() {
        let d = driver_with(1);
        let ctx = d.primary_retain(0).unwrap();
        d.ctx_set_current(Some(ctx)).unwrap();
        const G: u64 = 2 << 20;
        let mut p = cumock_abi::CUmemAllocationProp {
            type_: 1,
            ..Default::default()
        };
        p.location = cumock_abi::CUmemLocation {
            type_: CU_MEM_LOCATION_TYPE_HOST_NUMA,
            id: 0,
        };
        p.requested_handle_types = 1;
        let prop = d.check_prop(&p).unwrap();
        let va = d.address_reserve(G, 0, 0, 0).unwrap();
        let h = d.create(G, prop, 0).unwrap();
        d.map(va, G, 0, h, 0).unwrap();
        d.set_access(va, G, &[(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0, 3), (1, 0, 3)])
            .unwrap();
        let host = va as *mut u8;
        // Safety: the host was granted read-write access at va (a view placed there).
        unsafe { host.add(100).write(7) };
        let fd = d.export(h, 1, 0).unwrap();
        // Safety: as above; the view now shows the exported file's pages.
        unsafe {
            assert_eq!(host.add(100).read(), 7, "moved with the export");
            host.add(200).write(9);
        }
        let mut back = [0u8; 1];
        unsafe_copy(
            &d,
            HostOrDevice::Host(back.as_mut_ptr()),
            HostOrDevice::Device(va + 200),
            1,
        )
        .unwrap();
        assert_eq!(back, [9], "the host view and the device see the same bytes");
        let h2 = d.import(std::os::fd::AsRawFd::as_raw_fd(&fd), 1).unwrap();
        let vb = d.address_reserve(G, 0, 0, 0).unwrap();
        d.map(vb, G, 0, h2, 0).unwrap();
        d.set_access(vb, G, &[(1, 0, 3)]).unwrap();
        unsafe_copy(
            &d,
            HostOrDevice::Host(back.as_mut_ptr()),
            HostOrDevice::Device(vb + 200),
            1,
        )
        .unwrap();
        assert_eq!(back, [9], "an importer sees the host's write");
        d.unmap(vb, G).unwrap();
        d.unmap(va, G).unwrap();
        d.release(h).unwrap();
        d.release(h2).unwrap();
    }

    #[test]
    fn copies_need_a_current_context() {
        let d = driver_with(1);
        let mut b = [0u8; 4];
        let e = unsafe_copy(
            &d,
            HostOrDevice::Host(b.as_mut_ptr()),
            HostOrDevice::Device(0x1000),
            4,
        )
        .unwrap_err();
        assert_eq!(e.code, CUDA_ERROR_INVALID_CONTEXT);
    }

    #[test]
    fn mem_info_falls_and_comes_back() {
        let d = driver_with(1);
        let ctx = d.primary_retain(0).unwrap();
        d.ctx_set_current(Some(ctx)).unwrap();
        let (free0, total) = d.mem_info().unwrap();
        assert_eq!(total, 150_109_880_320);
        let h = d.create(128 << 20, dev_prop(&d, 0), 0).unwrap();
        assert_eq!(d.mem_info().unwrap().0, free0 - (128 << 20));
        d.release(h).unwrap();
        assert_eq!(d.mem_info().unwrap().0, free0);
    }

    #[test]
    fn peer_grant_gives_only_that_device_access() {
        let d = driver_with(2);
        let c0 = d.primary_retain(0).unwrap();
        let c1 = d.primary_retain(1).unwrap();
        const G: u64 = 2 << 20;
        let va = d.address_reserve(G, 0, 0, 0).unwrap();
        let h = d.create(G, dev_prop(&d, 0), 0).unwrap();
        d.map(va, G, 0, h, 0).unwrap();
        d.set_access(va, G, &[(1, 1, 3)]).unwrap();
        assert_eq!(d.get_access(1, 0, va).unwrap(), 0);
        assert_eq!(d.get_access(1, 1, va).unwrap(), 3);
        let x = [7u8; 8];
        d.ctx_set_current(Some(c0)).unwrap();
        assert_eq!(
            unsafe_copy(
                &d,
                HostOrDevice::Device(va),
                HostOrDevice::Host(x.as_ptr() as *mut u8),
                8
            )
            .unwrap_err()
            .code,
            CUDA_ERROR_INVALID_VALUE
        );
        d.ctx_set_current(Some(c1)).unwrap();
        unsafe_copy(
            &d,
            HostOrDevice::Device(va),
            HostOrDevice::Host(x.as_ptr() as *mut u8),
            8,
        )
        .unwrap();
    }
}
