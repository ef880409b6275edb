//! Page-locked host memory: what cuMemAllocHost / cuMemHostAlloc hand out (the mock's
//! own anonymous mappings) and the program's memory that cuMemHostRegister pins. On the
//! H200, with unified addressing, such memory has the same address on the device as on
//! the host: copies take it as a device address, and pointer attributes and
//! cuMemGetAddressRange answer for it. The mock keeps the ranges here and reads and
//! writes them as plain host memory.

use super::error::*;
use super::ids::ContextId;
use super::limits;
use super::{Driver, PointerInfo};
use crate::os;
use cumock_abi::result::*;
use std::collections::BTreeMap;

pub const PORTABLE: u32 = 0x1;
pub const DEVICEMAP: u32 = 0x2;
pub const WRITECOMBINED: u32 = 0x4;
const REGISTER_IOMEMORY: u32 = 0x4;
const REGISTER_READ_ONLY: u32 = 0x8;

/// The page-locked ranges, by start address.
#[derive(Default)]
pub struct HostMemory {
    ranges: BTreeMap<u64, HostRange>,
    next_id: u64,
    /// Bytes of the ranges, bounded by `limits::page_locked_limit`.
    page_locked: u64,
    /// Bytes of the managed allocations, bounded as `limits` says.
    pub managed_bytes: u64,
    /// The cuMemAllocManaged allocations (their starts): memory the host reaches at its
    /// device address (see `managed.rs`).
    pub managed: BTreeMap<u64, super::managed::Managed>,
}

pub struct HostRange {
    pub size: u64,
    /// What cuMemHostGetFlags reports.
    pub flags: u32,
    pub context: ContextId,
    pub device: usize,
    pub id: u64,
    /// The memory, for cuMemAllocHost / cuMemHostAlloc; None for a registration (the
    /// program owns that memory).
    mapping: Option<os::HostMapping>,
    /// The mock's own view of the same pages, with ordering-bug reports on: kernels
    /// reach the memory through it while the trap protects the program's view
    /// (`Driver::arm_launch_outputs`).
    own_view: Option<os::OwnView>,
}

impl HostRange {
    /// Where a kernel reaches the range's byte at `addr` (the range starts at `start`):
    /// through the mock's own view when there is one, else at its address.
    pub fn kernel_address(&self, start: u64, addr: u64) -> *mut u8 {
        match &self.own_view {
            Some(v) => v.ptr().offset((addr - start) as usize).as_ptr(),
            None => addr as *mut u8,
        }
    }
}

impl HostMemory {
    /// The range holding `addr`, with its start.
    pub fn range_at(&self, addr: u64) -> Option<(u64, &HostRange)> {
        let (start, r) = self.ranges.range(..=addr).next_back()?;
        (addr - start < r.size).then_some((*start, r))
    }

    /// The first range overlapping `[start, start+len)`.
    fn overlapping(&self, start: u64, len: u64) -> Option<&HostRange> {
        let end = start.saturating_add(len);
        if let Some(r) = self.range_at(start) {
            return Some(r.1);
        }
        self.ranges.range(start..end).next().map(|(_, r)| r)
    }

    /// Where a copy may treat `[addr, addr+len)` as host memory: None if `addr` is not
    /// page-locked memory, an error if the copy runs past its range.
    pub fn check_copy(&self, addr: u64, len: u64) -> Option<CuResult<()>> {
        let (start, r) = self.range_at(addr)?;
        Some(if addr - start + len <= r.size {
            Ok(())
        } else {
            Err(invalid(format!(
                "{len} bytes at {addr:#x} run past the end of its page-locked host range \
                 ({} bytes at {start:#x})",
                r.size
            )))
        })
    }

    pub fn pointer_info(&self, addr: u64) -> Option<PointerInfo> {
        let (start, r) = self.range_at(addr)?;
        Some(PointerInfo {
            on_host: true,
            reachable: true,
            context: Some(r.context),
            device: r.device,
            range: (start, r.size),
            mapping: (start, r.size),
            handle_types: 0,
            access: 3,
            buffer_id: r.id,
            rdma: 0,
            vmm: false,
            managed: false,
            pool: None,
        })
    }

    fn insert(&mut self, start: u64, mut r: HostRange) {
        self.next_id += 1;
        r.id = self.next_id;
        self.page_locked += r.size;
        self.ranges.insert(start, r);
    }

    fn remove(&mut self, start: u64) {
        if let Some(r) = self.ranges.remove(&start) {
            self.page_locked -= r.size;
        }
    }

    /// Whether `size` bytes more may be page-locked: the real driver pins them, and a
    /// host pins no more than its physical memory (see `limits` for why not
    /// RLIMIT_MEMLOCK).
    fn check_room(&self, size: u64, what: &str) -> CuResult<()> {
        let limit = limits::page_locked_limit();
        if self.page_locked.saturating_add(size) <= limit {
            return Ok(());
        }
        Err(host_limit(format!(
            "{what} of {size} bytes: the process holds {} bytes of page-locked memory, and \
             the host may pin {limit} (its physical memory, {} bytes, less a reserve for \
             the rest of the host)",
            self.page_locked,
            os::physical_memory()
        )))
    }
}

impl HostMemory {
    /// Counts `size` bytes of a host memory pool's chunk as page-locked (the real driver
    /// pins a host pool's memory as it pins cuMemHostAlloc's), if the host may pin them.
    pub fn pin_pool_chunk(&mut self, size: u64) -> CuResult<()> {
        self.check_room(size, "a host memory pool's chunk")?;
        self.page_locked += size;
        Ok(())
    }

    /// A host pool's chunk given back.
    pub fn unpin_pool_chunk(&mut self, size: u64) {
        self.page_locked -= size;
    }
}

impl Driver {
    /// cuMemAllocHost / cuMemHostAlloc: `size` bytes of page-locked, page-aligned host
    /// memory; 0 for size 0, as the H200 answers.
    pub fn host_alloc(&self, size: u64, flags: u32) -> CuResult<u64> {
        if flags & !(PORTABLE | DEVICEMAP | WRITECOMBINED) != 0 {
            return Err(invalid(format!(
                "cuMemHostAlloc flags {flags:#x} are not valid"
            )));
        }
        let mut st = self.state.lock();
        let (ctx, c) = st.contexts.require_current()?;
        let device = c.device;
        self.check_sticky(&st, device)?;
        if size == 0 {
            return Ok(0);
        }
        st.host.check_room(size, "cuMemHostAlloc")?;
        // New host memory: also in the budget of what the mock takes from the host, with
        // the device memory it backs (one budget: both are the host's memory).
        st.vmm
            .backing
            .commit(size)
            .map_err(|why| host_limit(format!("cuMemHostAlloc of {size} bytes: {why}")))?;
        // With ordering-bug reports on, kernels reach the memory through a view of the
        // mock's own, so the program's may be protected while they run.
        let mapped = if super::ordering::enabled() {
            os::map_host_with_view(size as usize).map(|(m, v)| (m, Some(v)))
        } else {
            os::map_host(size as usize).map(|m| (m, None))
        };
        let (mapping, own_view) = match mapped {
            Ok(m) => m,
            Err(e) => {
                st.vmm.backing.uncommit(size);
                return Err(out_of_memory(format!(
                    "cannot map {size} bytes of host memory: {e}"
                )));
            }
        };
        let start = mapping.base() as u64;
        st.host.insert(
            start,
            HostRange {
                size,
                // Observed: the H200 maps all page-locked memory (unified addressing), and
                // reports DEVICEMAP whether or not it was asked for.
                flags: flags | DEVICEMAP,
                context: ctx,
                device,
                id: 0,
                mapping: Some(mapping),
                own_view,
            },
        );
        Ok(start)
    }

    /// cuMemFreeHost.
    pub fn host_free(&self, p: u64) -> CuResult<()> {
        // Observed: cuMemFreeHost(NULL) succeeds.
        if p == 0 {
            return Ok(());
        }
        // Async copies queued on streams may still move bytes through it: they run
        // first (as on a GPU, where freeing page-locked memory synchronises).
        super::stream_queues::drain_all();
        let mut st = self.state.lock();
        match st.host.ranges.get(&p) {
            Some(r) if r.mapping.is_some() => {
                let size = r.size;
                // Out of the load trap's table before the mapping goes.
                crate::host_trap::forget(p);
                st.host.remove(p);
                st.vmm.backing.uncommit(size);
                Ok(())
            }
            Some(_) => Err(invalid(format!(
                "{p:#x} is registered memory: cuMemHostUnregister it"
            ))),
            None => Err(invalid(format!(
                "{p:#x} is not the start of memory from cuMemAllocHost or cuMemHostAlloc"
            ))),
        }
    }

    /// cuMemHostGetFlags: of any address inside a page-locked range.
    pub fn host_flags(&self, p: u64) -> CuResult<u32> {
        let st = self.state.lock();
        let (current, _) = st.contexts.require_current()?;
        st.host
            .range_at(p)
            .map(|(_, r)| {
                // Observed on the 2-GPU H200 (probe two_gpus pinned-on-both): memory
                // cuMemHostAlloc made PORTABLE reads back without PORTABLE from another
                // device's context; a PORTABLE registration keeps it everywhere.
                if r.mapping.is_some() && r.context != current {
                    r.flags & !PORTABLE
                } else {
                    r.flags
                }
            })
            .ok_or_else(|| invalid(format!("{p:#x} is not page-locked host memory")))
    }

    /// cuMemHostGetDevicePointer: the address itself (unified addressing).
    pub fn host_device_pointer(&self, p: u64, flags: u32) -> CuResult<u64> {
        let st = self.state.lock();
        st.contexts.require_current()?;
        if flags != 0 {
            return Err(invalid(format!(
                "cuMemHostGetDevicePointer flags must be 0, not {flags:#x}"
            )));
        }
        st.host
            .range_at(p)
            .map(|_| p)
            .ok_or_else(|| invalid(format!("{p:#x} is not page-locked host memory")))
    }

    /// cuMemHostRegister: pins `[p, p+size)` of the program's memory (exactly those bytes:
    /// the H200 does not round the range to pages).
    pub fn host_register(&self, p: u64, size: u64, flags: u32) -> CuResult<()> {
        if p == 0 || size == 0 {
            return Err(invalid("the pointer is NULL or the size is 0"));
        }
        if flags & !(PORTABLE | DEVICEMAP | REGISTER_IOMEMORY | REGISTER_READ_ONLY) != 0 {
            return Err(invalid(format!(
                "cuMemHostRegister flags {flags:#x} are not valid"
            )));
        }
        if flags & REGISTER_IOMEMORY != 0 {
            return Err(invalid(
                "IOMEMORY: the range is ordinary host memory, not I/O memory",
            ));
        }
        let mut st = self.state.lock();
        let (ctx, c) = st.contexts.require_current()?;
        let device = c.device;
        self.check_sticky(&st, device)?;
        match st.host.overlapping(p, size) {
            Some(r) if r.mapping.is_some() => {
                return Err(invalid(
                    "the range overlaps memory from cuMemAllocHost or cuMemHostAlloc",
                ))
            }
            Some(_) => {
                return Err(CuError::new(
                    CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                    format!("{size} bytes at {p:#x} overlap a registered range"),
                ))
            }
            None => {}
        }
        st.host.check_room(size, "cuMemHostRegister")?;
        match os::host_range_writable(p, size) {
            None => {
                return Err(invalid(format!(
                    "{size} bytes at {p:#x} are not all mapped readable in this process"
                )))
            }
            Some(false) if flags & REGISTER_READ_ONLY == 0 => {
                return Err(invalid(
                    "the memory is not writable: register it with CU_MEMHOSTREGISTER_READ_ONLY",
                ))
            }
            Some(_) => {}
        }
        st.host.insert(
            p,
            HostRange {
                size,
                // Observed: the H200 reports PORTABLE as given, DEVICEMAP always, and
                // neither READ_ONLY nor IOMEMORY.
                flags: (flags & PORTABLE) | DEVICEMAP,
                context: ctx,
                device,
                id: 0,
                mapping: None,
                own_view: None,
            },
        );
        Ok(())
    }

    /// cuMemHostUnregister: `p` must be the start of a registration.
    pub fn host_unregister(&self, p: u64) -> CuResult<()> {
        if p == 0 {
            return Err(invalid("the pointer is NULL"));
        }
        // Queued async copies may still use the registered range: they run first.
        super::stream_queues::drain_all();
        let mut st = self.state.lock();
        match st.host.range_at(p) {
            Some((start, r)) if start == p && r.mapping.is_none() => {
                st.host.remove(p);
                Ok(())
            }
            Some((_, r)) if r.mapping.is_some() => Err(invalid(format!(
                "{p:#x} is memory from cuMemAllocHost or cuMemHostAlloc: cuMemFreeHost it"
            ))),
            Some((start, _)) => Err(invalid(format!(
                "{p:#x} is inside the registration at {start:#x}: unregister its start"
            ))),
            None => Err(CuError::new(
                CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
                format!("{p:#x} is not the start of a registered range"),
            )),
        }
    }

    /// For a copy: None if `[addr, addr+len)` is not page-locked host memory (so it is a
    /// device address), else whether it fits its range.
    pub fn page_locked(&self, addr: u64, len: u64) -> Option<CuResult<()>> {
        self.state.lock().host.check_copy(addr, len)
    }
}

/// Whether `[start, start+len)` lies in one page-locked range the mock mapped itself
/// (cuMemAllocHost, cuMemHostAlloc: not the program's registered memory) or in one
/// managed allocation: memory the host loads and stores at that address directly, which
/// stays mapped while the state (whose lock frees take) lists it.
fn host_visible(st: &super::State, start: u64, len: u64) -> bool {
    allocation_of(st, start, len).is_some()
}

/// The allocation (start, bytes) of the mock's own that `[start, start+len)` lies in, as
/// `host_visible` says.
fn allocation_of(st: &super::State, start: u64, len: u64) -> Option<(u64, u64)> {
    let end = start.saturating_add(len);
    if let Some((base, r)) = st.host.range_at(start) {
        return (r.mapping.is_some() && end <= base + r.size).then_some((base, r.size));
    }
    st.host
        .managed
        .range(..=start)
        .next_back()
        .filter(|(base, m)| end <= *base + m.size())
        .map(|(base, m)| (*base, m.size()))
}

/// The bytes at `[start, start+len)`, which `host_visible` says are mapped.
fn read_host_visible(start: u64, len: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; len];
    // Safety: `host_visible` checked the range under the state's lock, which the caller
    // holds: the mock's own mapping (or managed memory's), alive until a free takes it.
    let src = unsafe { crate::host_bytes::HostBytes::readable(start as *const u8, len) };
    crate::host_bytes::host_to_host(
        crate::host_bytes::HostBytes::from_mut_slice(&mut bytes),
        src,
        len,
    );
    bytes
}

impl Driver {
    /// A kernel's writes (`ranges` as its memory recorded them), or a queued copy's, that
    /// landed in memory the host reaches directly, as it left them, for the ordering-bug
    /// reports (`ordering::kernel_wrote_host_visible`). Called on the stream's worker.
    ///
    /// Work that may signal the host through memory is left out: a kernel whose code
    /// has strong accesses or system-scope fences (`may_signal_host`, from
    /// `ptx::Kernel::may_signal_host`), or that updates host-reachable memory atomically.
    /// It may be synchronising with the host through that memory (a flag it polls or
    /// sets, a queue's head, as persistent kernels and communication libraries' proxies
    /// do), which orders the host's accesses without any call the mock sees. A kernel
    /// that only reads host memory weakly (zero-copy inputs) signals nothing: its writes
    /// are kept.
    pub fn note_host_visible_writes(
        &self,
        ranges: &[(u64, u64, super::ordering::Touch)],
        may_signal_host: bool,
    ) {
        if may_signal_host {
            return;
        }
        let writes: Vec<(u64, Vec<u8>)> = {
            let st = self.state.lock();
            let talks_to_host = ranges.iter().any(|(lo, hi, t)| {
                *t == super::ordering::Touch::Atomic && host_visible(&st, *lo, hi - lo)
            });
            if talks_to_host {
                return;
            }
            let writes: Vec<(u64, u64, (u64, u64))> = ranges
                .iter()
                .filter(|(_, _, t)| *t == super::ordering::Touch::Write)
                .filter_map(|(lo, hi, _)| Some((*lo, *hi, allocation_of(&st, *lo, hi - lo)?)))
                .collect();
            let bytes = writes
                .iter()
                .map(|(lo, hi, _)| (*lo, read_host_visible(*lo, (hi - lo) as usize)))
                .collect();
            // The host's loads of these bytes before it synchronises with this work are
            // trapped from now on (`host_trap`), under the state's lock, which a free of
            // the allocation takes.
            for (lo, hi, (base, size)) in writes {
                crate::host_trap::arm(base, size, lo, hi);
            }
            bytes
        };
        if !writes.is_empty() {
            super::ordering::kernel_wrote_host_visible(writes);
        }
    }

    /// At the launch of kernel `k` with `params` (ordering-bug reports on): the mock's
    /// page-locked and managed allocations its parameters point into, where its own code
    /// may store (`ptx::Kernel::params_stored_through`), are protected from the program
    /// until the kernel ends (`host_trap::arm`), so a load of its results while it is
    /// queued or running is seen, not only one after it ran. Kernels reach the memory
    /// through the mock's own views meanwhile (page-locked memory's `own_view`, managed
    /// memory's arena), so only the program's threads fault. Not for a kernel that may
    /// signal the host (its flags are polled while it runs): the starts armed.
    ///
    /// Only where a store may land: a system call on the program's input buffers (a
    /// `write(fd, in, n)` while the kernel reads them) would fail with EFAULT on a
    /// protected page, which a GPU never causes. A call on the kernel's outputs before it
    /// ends is the race itself.
    pub fn arm_launch_outputs(&self, k: &cumock_ptx::Kernel, params: &[u8]) -> Vec<u64> {
        if k.may_signal_host {
            return Vec::new();
        }
        let st = self.state.lock();
        let mut armed = Vec::new();
        for p in k
            .params_stored_through
            .iter()
            .filter_map(|&i| k.params.get(i))
        {
            let (lo, hi) = (p.offset as usize, (p.offset + p.size) as usize);
            // Every aligned 64-bit word of the parameter may be a pointer (a pointer, or a
            // struct holding some).
            for at in (lo.next_multiple_of(8)..hi.saturating_sub(7)).step_by(8) {
                let Some(word) = params.get(at..at + 8) else {
                    break;
                };
                let v = u64::from_le_bytes(word.try_into().expect("8 bytes"));
                // Page-locked memory only with a view of the mock's own for kernels.
                let target = allocation_of(&st, v, 1).filter(|(start, _)| {
                    st.host
                        .range_at(*start)
                        .is_none_or(|(_, r)| r.own_view.is_some())
                });
                if let Some((start, len)) = target {
                    if !armed.contains(&start) {
                        crate::host_trap::arm(start, len, start, start + len);
                        armed.push(start);
                    }
                }
            }
        }
        armed
    }

    /// After a synchronisation: host stores to what the kernels it covers wrote into
    /// host-reachable memory, made before it, are reported (`ordering::settle_host_visible`).
    pub fn settle_host_writes(&self) {
        if !super::ordering::enabled() {
            return;
        }
        let st = self.state.lock();
        super::ordering::settle_host_visible(|start, len| {
            host_visible(&st, start, len as u64).then(|| read_host_visible(start, len))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(size: u64, mapped: bool) -> HostRange {
        HostRange {
            size,
            flags: DEVICEMAP,
            context: ContextId::from_handle(1),
            device: 0,
            id: 0,
            mapping: mapped.then(|| os::map_host(4096).unwrap()),
            own_view: None,
        }
    }

    #[test]
    fn ranges_are_found_by_any_interior_address_and_only_there() {
        let mut h = HostMemory::default();
        h.insert(0x10000, range(100, false));
        h.insert(0x10064, range(50, false));
        assert_eq!(h.range_at(0x10000).unwrap().0, 0x10000);
        assert_eq!(h.range_at(0x10063).unwrap().0, 0x10000);
        assert_eq!(h.range_at(0x10064).unwrap().0, 0x10064);
        assert!(h.range_at(0x10096).is_none());
        assert!(h.range_at(0xffff).is_none());
        assert!(h.overlapping(0xff00, 0x100).is_none());
        assert!(h.overlapping(0xff00, 0x101).is_some());
        assert!(h.check_copy(0x10000, 100).unwrap().is_ok());
        assert!(h.check_copy(0x10001, 100).unwrap().is_err());
        assert!(h.check_copy(0x20000, 1).is_none());
        let a = h.pointer_info(0x10010).unwrap();
        let b = h.pointer_info(0x10070).unwrap();
        assert_eq!(a.range, (0x10000, 100));
        assert_ne!(a.buffer_id, b.buffer_id);
    }

    #[test]
    fn writability_follows_the_host_mapping() {
        // Three pages, the last made inaccessible: the byte after the first two is then
        // not readable whatever else the process (other tests' threads) maps meanwhile.
        let m = os::map_host(3 * 4096).unwrap();
        let base = m.base() as u64;
        // Safety: the last page of a mapping this test owns; nothing reads it.
        let r =
            unsafe { libc::mprotect((base + 8192) as *mut libc::c_void, 4096, libc::PROT_NONE) };
        assert_eq!(r, 0);
        assert_eq!(os::host_range_writable(base + 16, 8000), Some(true));
        assert_eq!(os::host_range_writable(base, 8193), None);
        // Page 0 is never mapped.
        assert_eq!(os::host_range_writable(0, 4096), None);
        assert!(range(1, true).mapping.is_some());
    }
}
