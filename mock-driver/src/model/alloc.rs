//! cuMemAlloc and cuMemFree: the mock's own reservation, allocation and mapping in one,
//! owned by a context; cuMemGetAddressRange and cuMemGetInfo, which report on it.

use super::error::*;
use super::ids::{DevicePtr, StreamId};
use super::vmm::{AllocationProp, Need, ReservationKind, Vmm};
use super::Driver;
use cumock_abi::consts::*;

impl Driver {
    pub fn mem_info(&self) -> CuResult<(u64, u64)> {
        let st = self.state.lock();
        let (_, ctx) = st.contexts.require_current()?;
        self.check_sticky(&st, ctx.device)?;
        let dev = &self.profile.devices[ctx.device];
        Ok((
            dev.free_at_start.saturating_sub(st.vmm.used(ctx.device)),
            dev.total_mem,
        ))
    }

    pub fn mem_alloc(&self, size: u64) -> CuResult<DevicePtr> {
        let mut st = self.state.lock();
        let (ctx, c) = st.contexts.require_current()?;
        let device = c.device;
        self.check_sticky(&st, device)?;
        if size == 0 {
            // The H200's words (its error log, probe api_gaps3 logs-callback).
            return Err(invalid("Requested 0 byte allocation"));
        }
        let dev = &self.profile.devices[device];
        let g = dev.granularity_minimum;
        let rounded = size
            .checked_next_multiple_of(g)
            .ok_or_else(|| out_of_memory("size overflows"))?;
        let free = dev.free_at_start.saturating_sub(st.vmm.used(device));
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
        // cuMemAlloc memory is usable from every context, as unified addressing makes it;
        // a green context's belongs to its primary context.
        let owner = st.memory_context(ctx);
        st.vmm.make_alloc(base, owner, size, n);
        super::ordering::allocated(base, rounded);
        Ok(DevicePtr::new(base))
    }

    pub fn mem_free(&self, ptr: DevicePtr) -> CuResult<()> {
        let ptr = ptr.get();
        // Observed: cuMemFree(0) succeeds, with or without a context.
        if ptr == 0 {
            return Ok(());
        }
        self.state.lock().contexts.check_current_alive()?;
        // As the driver's, cuMemFree waits for the device's work first (cumock's runtime
        // relies on it for cudaFree's implicit synchronisation), so no work still running
        // uses what it frees.
        super::stream_queues::drain_all();
        // Observed (random cases: 8 of 8 cuMemFree calls after a copy's fault): the
        // context's sticky error, and nothing freed.
        self.check_sticky_current()?;
        self.free_in_order(ptr, None)
    }

    /// Frees cuMemAlloc or pool memory: by the calling thread (cuMemFree), or in a
    /// stream's order (`on`: cuMemFreeAsync), for the ordering-bug reports.
    pub(super) fn free_in_order(
        &self,
        ptr: u64,
        on: Option<(StreamId, super::stream_queues::Order)>,
    ) -> CuResult<()> {
        // Where a cuMemFreeAsync completes, taken before the state's lock (the queues'
        // lock is never taken under it here).
        let pending = match on {
            Some((s, order)) => super::stream_queues::marks_before(s, order),
            None => Vec::new(),
        };
        let mut st = self.state.lock();
        let len = if super::ordering::enabled() {
            let block = st
                .pools
                .blocks()
                .find(|(a, _)| *a == ptr)
                .map(|(_, b)| b.len);
            block.or_else(|| match st.vmm.reservation(ptr).map(|r| r.kind) {
                Some(ReservationKind::Alloc { requested, .. }) => Some(requested),
                _ => None,
            })
        } else {
            None
        };
        // Observed: cuMemFree frees stream-ordered (pool) memory too. The free is noted
        // under the state's lock, before another thread can be given the addresses (and
        // forget their history: `ordering::allocated`).
        if st.free_pool_allocation(ptr, pending) {
            Self::note_free(ptr, len, on);
            return Ok(());
        }
        // cuda.h (cuGraphAddMemAllocNode): cuMemFree and cuMemFreeAsync free graph
        // allocations not freed in their own graph.
        if st.graph_memory.is_allocation(ptr) {
            let st = &mut *st;
            return st.graph_memory.free_outside(&mut st.vmm, ptr);
        }
        Self::free_alloc(&mut st.vmm, ptr)?;
        let st = &mut *st;
        st.host.remove_managed(ptr, &st.vmm.backing);
        Self::note_free(ptr, len, on);
        Ok(())
    }

    fn note_free(ptr: u64, len: Option<u64>, on: Option<(StreamId, super::stream_queues::Order)>) {
        let Some(len) = len else { return };
        match on {
            Some((s, order)) => {
                super::ordering::freed_on_stream(super::stream_queues::key_of(s), order, ptr, len)
            }
            None => super::ordering::freed_by_host("cuMemFree", ptr, len),
        }
    }

    pub(super) fn free_alloc(vmm: &mut Vmm, ptr: u64) -> CuResult<()> {
        match vmm.reservation(ptr).map(|r| r.kind) {
            Some(ReservationKind::Alloc { .. }) => {
                // Managed memory leaves the load trap's table before its view goes.
                crate::host_trap::forget(ptr);
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
            Some(ReservationKind::Graph) => Err(invalid(format!(
                "{ptr:#x} lies in a graph allocation but is not its start"
            ))),
            None => Err(invalid(format!(
                "{ptr:#x} is not the start of a cuMemAlloc allocation"
            ))),
        }
    }

    /// cuMemGetAddressRange: the allocation (cuMemAlloc) or mapping (VMM) holding `ptr`.
    pub fn address_range(&self, ptr: DevicePtr) -> CuResult<(DevicePtr, u64)> {
        let ptr = ptr.get();
        let st = self.state.lock();
        st.contexts.check_current_alive()?;
        // Observed (random cases: 55 of 55 calls after a copy's fault, found or not): the
        // context's sticky error comes first.
        if let Ok((_, c)) = st.contexts.require_current() {
            self.check_sticky(&st, c.device)?;
        }
        if let Some((base, r)) = st.host.range_at(ptr) {
            return Ok((DevicePtr::new(base), r.size));
        }
        if let Some((start, size)) = st.graph_memory.range_at(ptr) {
            return Ok((DevicePtr::new(start), size));
        }
        // Observed: a pool allocation's range is its own, of the size asked for.
        if let Some((start, b)) = st.pools.block_containing(ptr) {
            if ptr - start < b.requested {
                return Ok((DevicePtr::new(start), b.requested));
            }
        }
        if let Some((base, r)) = st.vmm.reservation_at(ptr) {
            if let ReservationKind::Alloc { requested, .. } = r.kind {
                if ptr - base < requested {
                    return Ok((DevicePtr::new(base), requested));
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
                // Observed (random cases, 26 of 26 calls; tests/random_findings.rs): in a
                // mapping of host-located memory (cuMemCreate with location HOST, which the
                // H200 keeps as HOST_NUMA 0) the H200 answers the mapping's size with a
                // NULL base.
                let host_located = st
                    .vmm
                    .allocation(m.handle)
                    .is_ok_and(|a| a.prop.device().is_none());
                let base = if host_located { 0 } else { m.start };
                return Ok((DevicePtr::new(base), m.size));
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
}
