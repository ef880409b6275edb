//! The virtual memory management calls (cuMemAddressReserve, cuMemCreate, cuMemMap,
//! cuMemSetAccess...): each takes the state's lock and calls the `Vmm` table, adding what
//! the table does not know (the profile's granularity and free memory, peer access).
//! Kept apart from `vmm.rs` so that the table's code stays about the table.

use super::error::*;
use super::ids::DevicePtr;
use super::vmm::AllocationProp;
use super::Driver;
use cumock_abi::consts::*;
use std::os::fd::OwnedFd;

impl Driver {
    pub fn address_reserve(
        &self,
        size: u64,
        alignment: u64,
        hint: DevicePtr,
        flags: u64,
    ) -> CuResult<DevicePtr> {
        let g = self.profile.minimum_granularity();
        self.state
            .lock()
            .vmm
            .address_reserve(size, alignment, hint.get(), flags, g)
            .map(DevicePtr::new)
    }

    pub fn address_free(&self, ptr: DevicePtr, size: u64) -> CuResult<()> {
        self.state.lock().vmm.address_free(ptr.get(), size)
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
                    dev.free_at_start.saturating_sub(st.vmm.used(d)),
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

    pub fn map(
        &self,
        ptr: DevicePtr,
        size: u64,
        offset: u64,
        handle: u64,
        flags: u64,
    ) -> CuResult<()> {
        let ptr = ptr.get();
        let g = self.profile.minimum_granularity();
        let mut st = self.state.lock();
        st.vmm.map(ptr, size, offset, handle, flags, g)?;
        super::ordering::allocated(ptr, size);
        Ok(())
    }

    pub fn unmap(&self, ptr: DevicePtr, size: u64) -> CuResult<Vec<String>> {
        let mut st = self.state.lock();
        let warnings = st.vmm.unmap(ptr.get(), size)?;
        // Under the state's lock: see `free_in_order`.
        super::ordering::freed_by_host("cuMemUnmap", ptr.get(), size);
        Ok(warnings)
    }

    /// `grants`: (location type, location id, flags) as the program passed them.
    pub fn set_access(
        &self,
        ptr: DevicePtr,
        size: u64,
        grants: &[(i32, i32, i32)],
    ) -> CuResult<Vec<String>> {
        let ptr = ptr.get();
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
                    host = Some(access_flags(flags)?);
                    continue;
                }
                other => {
                    return Err(invalid(format!(
                        "location type {other} is not valid for access"
                    )))
                }
            }
            self.device(id).map_err(|e| invalid(e.message))?;
            checked.push((id as usize, access_flags(flags)?));
        }
        let mut st = self.state.lock();
        // A device may only be granted memory it can reach: its own, or a peer's.
        for m in st.vmm.mappings_starting_in(ptr, ptr.saturating_add(size)) {
            let owner = st.vmm.mapped_allocation(m).and_then(|a| a.prop.device());
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

    pub fn get_access(
        &self,
        location_type: i32,
        location_id: i32,
        ptr: DevicePtr,
    ) -> CuResult<u64> {
        let ptr = ptr.get();
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

    /// cuMemExportToShareableHandle. An allocation a running kernel uses cannot move to a
    /// file of its own until the kernel ends: the call waits for that without the
    /// state's lock, which the kernel may need (no other work waits meanwhile).
    pub fn export(&self, handle: u64, handle_type: i32, flags: u64) -> CuResult<OwnedFd> {
        self.lock_unpinned(|_| Some(handle))
            .vmm
            .export(handle, handle_type, flags)
    }

    /// The state's lock, taken at a moment when no running kernel pins the allocation
    /// `handle_of` names (its bytes are about to move to a file of their own). The wait
    /// happens without the lock, which the kernel may need to go on.
    pub(super) fn lock_unpinned(
        &self,
        handle_of: impl Fn(&super::State) -> Option<u64>,
    ) -> cumock_support::ForkSafeGuard<'_, super::State> {
        loop {
            let st = self.state.lock();
            if !handle_of(&st).is_some_and(|h| st.vmm.export_waits_for_kernel(h)) {
                return st;
            }
            drop(st);
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    }

    pub fn import(&self, fd: i32, handle_type: i32) -> CuResult<u64> {
        let n = self.device_count();
        self.state.lock().vmm.import(fd, handle_type, n)
    }

    pub fn retain_allocation_handle(&self, addr: DevicePtr) -> CuResult<u64> {
        self.state.lock().vmm.retain(addr.get())
    }

    pub fn allocation_properties(&self, handle: u64) -> CuResult<AllocationProp> {
        self.state.lock().vmm.properties(handle)
    }
}

/// A CUmemAccess_flags value as cuMemSetAccess takes it, for a device or the host alike.
fn access_flags(flags: i32) -> CuResult<u8> {
    match flags {
        CU_MEM_ACCESS_FLAGS_PROT_NONE
        | CU_MEM_ACCESS_FLAGS_PROT_READ
        | CU_MEM_ACCESS_FLAGS_PROT_READWRITE => Ok(flags as u8),
        _ => Err(invalid(format!(
            "access flags {flags} are not PROT_NONE (0), PROT_READ (1) or PROT_READWRITE (3)"
        ))),
    }
}
