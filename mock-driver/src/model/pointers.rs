//! cuPointerGetAttribute(s): what the driver knows of a device address, gathered from
//! its mapping, allocation, reservation and the current context.

use super::error::*;
use super::ids::{AllocationId, ContextId, DevicePtr, PoolId};
use super::vmm::{self, ReservationKind};
use super::Driver;

impl Driver {
    /// Whether cuPointerSetAttribute(SYNC_MEMOPS) marked the allocation of `buffer_id`.
    pub fn pointer_sync_memops(&self, buffer_id: u64) -> bool {
        self.state.lock().sync_memops.contains(&buffer_id)
    }

    /// cuPointerSetAttribute(SYNC_MEMOPS): marks (or unmarks) the allocation holding
    /// `ptr`, which must be memory the driver knows.
    pub fn pointer_set_sync_memops(&self, ptr: DevicePtr, on: bool) -> CuResult<()> {
        let info = self
            .pointer_info(ptr)
            .ok_or_else(|| invalid(format!("{:#x} is not memory the driver knows", ptr.get())))?;
        let mut st = self.state.lock();
        if on {
            st.sync_memops.insert(info.buffer_id);
        } else {
            st.sync_memops.remove(&info.buffer_id);
        }
        Ok(())
    }

    /// `[ptr, ptr + size)` is page-aligned, not empty, and all device memory a kernel may
    /// use: mapped, on a device, not managed, and within its cuMemAlloc allocation (what
    /// the H200 exports as a dma-buf, probe api_gaps3 dma-buf).
    pub fn check_device_memory_range(&self, ptr: DevicePtr, size: u64) -> CuResult<()> {
        const PAGE: u64 = 4096;
        let start = ptr.get();
        if size == 0 || !start.is_multiple_of(PAGE) || !size.is_multiple_of(PAGE) {
            return Err(invalid(format!(
                "{size} bytes at {start:#x}: a range of whole 4 KiB pages"
            )));
        }
        let end = start
            .checked_add(size)
            .ok_or_else(|| invalid("the range wraps the address space"))?;
        let mut at = start;
        while at < end {
            let piece_end = self
                .pointer_info(DevicePtr::new(at))
                .filter(|i| !i.on_host && !i.managed)
                .map(|i| {
                    let mapping_end = i.mapping.0 + i.mapping.1;
                    let range_end = i.range.0 + i.range.1;
                    mapping_end.min(range_end)
                })
                .filter(|&e| e > at)
                .ok_or_else(|| {
                    invalid(format!(
                        "{at:#x} (of {size} bytes at {start:#x}) is not mapped device memory"
                    ))
                })?;
            at = piece_end;
        }
        Ok(())
    }

    /// What cuPointerGetAttribute reports of a device address.
    pub fn pointer_info(&self, ptr: DevicePtr) -> Option<PointerInfo> {
        let ptr = ptr.get();
        let st = self.state.lock();
        if let Some(info) = st.host.pointer_info(ptr) {
            return Some(info);
        }
        let m = st.vmm.mapping_at(ptr)?;
        let id = AllocationId::from_handle(m.handle);
        let a = st.vmm.mapped_allocation(m)?;
        let r = st.vmm.reservation(m.reservation)?;
        let current_device = st
            .contexts
            .current()
            .and_then(|c| st.contexts.get(c).ok())
            .map(|c| c.device);
        let (ctx, range, pool, buffer_id) = match r.kind {
            ReservationKind::Alloc { context, requested } => {
                (Some(context), (m.start, requested), None, id.serial())
            }
            // Observed: for VMM memory the range is the whole reservation.
            ReservationKind::Vmm => (None, (m.reservation, r.size), None, id.serial()),
            // Pool memory is known only while allocated; its range is the allocation.
            // A graph allocation's range is the size its node asked for (as a pool's).
            ReservationKind::Graph => {
                let range = st.graph_memory.range_at(ptr)?;
                (None, range, None, id.serial())
            }
            ReservationKind::Pool { pool } => {
                let (start, b) = st.pools.block_containing(ptr)?;
                (None, (start, b.requested), Some(pool), b.id)
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
            managed: st.host.managed.contains_key(&m.reservation)
                || pool.is_some_and(|p| st.pools.is_managed(p)),
            pool,
        })
    }
}

pub struct PointerInfo {
    /// The allocation is located on the host (HOST or HOST_NUMA).
    pub on_host: bool,
    /// Some device, or the host, has been granted access to it.
    pub reachable: bool,
    /// The context of cuMemAlloc memory; VMM memory has none.
    pub context: Option<ContextId>,
    pub device: usize,
    pub range: (u64, u64),
    pub mapping: (u64, u64),
    pub handle_types: i32,
    pub access: u8,
    pub buffer_id: u64,
    pub rdma: u8,
    pub vmm: bool,
    /// cuMemAllocManaged memory.
    pub managed: bool,
    /// The memory pool it was allocated from (cuMemAllocAsync), if any.
    pub pool: Option<PoolId>,
}
