//! Managed memory (cuMemAllocManaged): one address that the host and every device reach.
//! The mock places it on the host, as a HOST-location allocation mapped at its device
//! address with a host view there (`os::alias_at`), granted to every device: the program
//! dereferences the pointer, copies and memsets take it as device memory, and pointer
//! attributes call it device memory that is managed, as the H200 does. Advice, prefetch
//! and range attributes are not emulated.

use super::error::*;
use super::vmm::{self, AllocationProp, ReservationKind};
use super::Driver;
use cumock_abi::consts::*;

pub const ATTACH_GLOBAL: u32 = 0x1;
pub const ATTACH_HOST: u32 = 0x2;

impl Driver {
    /// cuMemAllocManaged: `flags` is exactly one of ATTACH_GLOBAL and ATTACH_HOST (the
    /// H200 refuses 0, ATTACH_SINGLE and both).
    pub fn mem_alloc_managed(&self, size: u64, flags: u32) -> CuResult<u64> {
        if flags != ATTACH_GLOBAL && flags != ATTACH_HOST {
            return Err(invalid(format!(
                "cuMemAllocManaged flags {flags:#x} are not CU_MEM_ATTACH_GLOBAL or CU_MEM_ATTACH_HOST"
            )));
        }
        let mut st = self.state.lock();
        let (ctx, c) = st.contexts.require_current()?;
        let device = c.device;
        self.check_sticky(&st, device)?;
        if size == 0 {
            return Err(invalid("size is 0"));
        }
        let g = self.profile.devices[device].granularity_minimum;
        let rounded = size
            .checked_next_multiple_of(g)
            .ok_or_else(|| out_of_memory("size overflows"))?;
        if rounded > crate::os::physical_memory() {
            return Err(out_of_memory(format!(
                "{size} bytes of managed memory is more than the host has"
            )));
        }
        let prop = AllocationProp {
            location_type: CU_MEM_LOCATION_TYPE_HOST,
            location_id: 0,
            handle_types: 0,
            compression: 0,
            gpu_direct_rdma: 0,
            usage: 0,
        };
        let h = st.vmm.create(rounded, prop, 0, g, u64::MAX)?;
        let base = match st.vmm.address_reserve(rounded, 0, 0, 0, g) {
            Ok(b) => b,
            Err(e) => {
                st.vmm.release(h).expect("just created");
                return Err(e);
            }
        };
        st.vmm
            .map(base, rounded, 0, h, 0, g)
            .expect("a fresh range takes the mapping");
        st.vmm.release(h).expect("the mapping holds it");
        let n = self.device_count();
        st.vmm.mappings.get_mut(&base).expect("mapped").access = vmm::AccessTable::all(n);
        st.vmm.reservations.get_mut(&base).expect("reserved").kind = ReservationKind::Alloc {
            context: ctx,
            requested: size,
        };
        if let Err(e) = st
            .vmm
            .set_host_access(base, rounded, CU_MEM_ACCESS_FLAGS_PROT_READWRITE as u8)
        {
            Self::free_alloc(&mut st.vmm, base).expect("just allocated");
            return Err(e);
        }
        st.host.managed.insert(base);
        Ok(base)
    }
}
