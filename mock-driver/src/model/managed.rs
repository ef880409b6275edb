//! Managed memory (cuMemAllocManaged): one address that the host and every device reach.
//! The mock places it on the host, as a HOST-location allocation mapped at its device
//! address with a host view there (`os::alias_at`), granted to every device: the program
//! dereferences the pointer, copies and memsets take it as device memory, and pointer
//! attributes call it device memory that is managed, as the H200 does. Advice
//! (cuMemAdvise) and prefetches (cuMemPrefetchAsync) move nothing (every processor reaches
//! the one copy), but are kept per range, page by page, for cuMemRangeGetAttribute.

use super::error::*;
use super::vmm::AllocationProp;
use super::Driver;
use cumock_abi::consts::*;
use std::collections::BTreeMap;

/// The granularity of advice and prefetches: the host's page.
const PAGE: u64 = 4096;

/// A processor, as advice and prefetches name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Processor {
    Device(i32),
    /// The host (the H200 reports a host NUMA node as the host: probe managed).
    Host,
}

/// What cuMemAdvise and cuMemPrefetchAsync left on a run of pages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Advice {
    read_mostly: bool,
    preferred: Option<Processor>,
    accessed_by: Vec<i32>,
    last_prefetch: Option<Processor>,
}

/// One cuMemAllocManaged allocation: its size as asked, and its advice as runs of pages
/// (each entry holds from its key to the next key, or to the end).
pub struct Managed {
    size: u64,
    advice: BTreeMap<u64, Advice>,
}

impl Managed {
    /// The size the program asked for.
    pub fn size(&self) -> u64 {
        self.size
    }

    fn new(size: u64) -> Self {
        Self {
            size,
            advice: BTreeMap::from([(0, Advice::default())]),
        }
    }

    /// Makes `at` (an offset) the start of a run.
    fn split(&mut self, at: u64) {
        if at >= self.size.next_multiple_of(PAGE) || self.advice.contains_key(&at) {
            return;
        }
        let (_, a) = self.advice.range(..at).next_back().expect("0 is a key");
        let a = a.clone();
        self.advice.insert(at, a);
    }

    /// Applies `f` to the pages of `[offset, offset+len)`.
    fn update(&mut self, offset: u64, len: u64, f: impl Fn(&mut Advice)) {
        let (start, end) = (offset / PAGE * PAGE, (offset + len).next_multiple_of(PAGE));
        self.split(start);
        self.split(end);
        for (_, a) in self.advice.range_mut(start..end) {
            f(a);
        }
    }

    /// The advice of every run the pages of `[offset, offset+len)` touch.
    fn runs(&self, offset: u64, len: u64) -> Vec<&Advice> {
        let (start, end) = (offset / PAGE * PAGE, (offset + len).next_multiple_of(PAGE));
        let first = self
            .advice
            .range(..=start)
            .next_back()
            .map(|(k, _)| *k)
            .unwrap_or(0);
        self.advice.range(first..end).map(|(_, a)| a).collect()
    }
}

/// What cuMemRangeGetAttribute asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeAttribute {
    ReadMostly,
    Preferred,
    PreferredType,
    PreferredId,
    AccessedBy,
    LastPrefetch,
    LastPrefetchType,
    LastPrefetchId,
}

/// cuda.h's CU_DEVICE_CPU and CU_DEVICE_INVALID.
const DEVICE_CPU: i32 = -1;
const DEVICE_INVALID: i32 = -2;

/// The one processor all the runs agree on, if they do.
fn common(runs: &[&Advice], f: impl Fn(&Advice) -> Option<Processor>) -> Option<Processor> {
    let first = f(runs.first()?)?;
    runs.iter().all(|a| f(a) == Some(first)).then_some(first)
}

fn as_id(p: Option<Processor>) -> i32 {
    match p {
        Some(Processor::Device(d)) => d,
        Some(Processor::Host) => DEVICE_CPU,
        None => DEVICE_INVALID,
    }
}

fn as_type(p: Option<Processor>) -> i32 {
    match p {
        Some(Processor::Device(_)) => CU_MEM_LOCATION_TYPE_DEVICE,
        Some(Processor::Host) => CU_MEM_LOCATION_TYPE_HOST,
        None => CU_MEM_LOCATION_TYPE_INVALID,
    }
}

/// Observed on the 2-GPU H200 (probe two_gpus managed-on-two): no location, or a range
/// whose parts differ, reads back as id -2, as the plain attribute does.
fn as_location_id(p: Option<Processor>) -> i32 {
    match p {
        Some(Processor::Device(d)) => d,
        Some(Processor::Host) => 0,
        None => DEVICE_INVALID,
    }
}

impl super::host_memory::HostMemory {
    /// Forgets the managed allocation at `base` (cuMemFree), if it is one, and gives back
    /// what it counted.
    pub fn remove_managed(&mut self, base: u64, backing: &super::limits::Backing) {
        if let Some(m) = self.managed.remove(&base) {
            self.uncount_managed(m.size, backing);
        }
    }

    /// Counts `size` bytes of managed memory (an allocation, or a managed pool's chunk)
    /// against what the mock may take from the host. The program touches managed memory
    /// directly, where the mock cannot count pages, so it counts whole when allocated, in
    /// the same budget as the device memory the mock backs: both are the host's memory.
    pub fn count_managed(
        &mut self,
        size: u64,
        backing: &super::limits::Backing,
        what: &str,
    ) -> CuResult<()> {
        backing.commit(size).map_err(|why| {
            host_limit(format!(
                "{what}: managed memory counts whole when allocated (the program touches it \
                 directly): {why}"
            ))
        })?;
        self.managed_bytes += size;
        Ok(())
    }

    pub fn uncount_managed(&mut self, size: u64, backing: &super::limits::Backing) {
        self.managed_bytes -= size;
        backing.uncommit(size);
    }
}

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
        let st = &mut *st;
        let (ctx, c) = st.contexts.require_current()?;
        let device = c.device;
        self.check_sticky(st, device)?;
        if size == 0 {
            return Err(invalid("size is 0"));
        }
        let g = self.profile.devices[device].granularity_minimum;
        let rounded = size
            .checked_next_multiple_of(g)
            .ok_or_else(|| out_of_memory("size overflows"))?;
        st.host.count_managed(
            size,
            &st.vmm.backing,
            &format!("cuMemAllocManaged of {size} bytes"),
        )?;
        let prop = AllocationProp {
            location_type: CU_MEM_LOCATION_TYPE_HOST,
            location_id: 0,
            handle_types: 0,
            compression: 0,
            gpu_direct_rdma: 0,
            usage: 0,
        };
        let h = match st.vmm.create(rounded, prop, 0, g, u64::MAX) {
            Ok(h) => h,
            Err(e) => {
                st.host.uncount_managed(size, &st.vmm.backing);
                return Err(e);
            }
        };
        let base = match st.vmm.address_reserve(rounded, 0, 0, 0, g) {
            Ok(b) => b,
            Err(e) => {
                st.vmm.release(h).expect("just created");
                st.host.uncount_managed(size, &st.vmm.backing);
                return Err(e);
            }
        };
        st.vmm
            .map(base, rounded, 0, h, 0, g)
            .expect("a fresh range takes the mapping");
        st.vmm.release(h).expect("the mapping holds it");
        let n = self.device_count();
        st.vmm.make_alloc(base, ctx, size, n);
        if let Err(e) =
            st.vmm
                .set_host_access(base, rounded, CU_MEM_ACCESS_FLAGS_PROT_READWRITE as u8)
        {
            Self::free_alloc(&mut st.vmm, base).expect("just allocated");
            st.host.uncount_managed(size, &st.vmm.backing);
            return Err(e);
        }
        st.host.managed.insert(base, Managed::new(size));
        Ok(base)
    }
}

impl Driver {
    /// A location of cuMemAdvise / cuMemPrefetchAsync as a processor.
    fn processor(
        &self,
        location_type: i32,
        id: i32,
        bad_device: fn(String) -> CuError,
    ) -> CuResult<Processor> {
        match location_type {
            CU_MEM_LOCATION_TYPE_DEVICE => {
                if id < 0 || id as usize >= self.device_count() {
                    return Err(bad_device(format!("device {id} does not exist")));
                }
                Ok(Processor::Device(id))
            }
            CU_MEM_LOCATION_TYPE_HOST
            | CU_MEM_LOCATION_TYPE_HOST_NUMA
            | CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT => Ok(Processor::Host),
            other => Err(invalid(format!("location type {other} is not a processor"))),
        }
    }

    /// The managed allocation holding all of `[ptr, ptr+len)`, and `ptr`'s offset in it.
    fn managed_range(
        host: &mut super::host_memory::HostMemory,
        ptr: u64,
        len: u64,
    ) -> CuResult<(u64, &mut Managed)> {
        if len == 0 {
            return Err(invalid("count is 0"));
        }
        let (base, m) = host
            .managed
            .range_mut(..=ptr)
            .next_back()
            .ok_or_else(|| invalid(format!("{ptr:#x} is not managed memory")))?;
        let offset = ptr - *base;
        if offset >= m.size {
            return Err(invalid(format!("{ptr:#x} is not managed memory")));
        }
        if offset.checked_add(len).is_none_or(|end| end > m.size) {
            return Err(invalid(format!(
                "{len} bytes at {ptr:#x} run past the end of the managed allocation ({} bytes at {base:#x})",
                m.size
            )));
        }
        Ok((offset, m))
    }

    /// cuMemAdvise.
    pub fn mem_advise(
        &self,
        ptr: u64,
        len: u64,
        advice: i32,
        location_type: i32,
        id: i32,
    ) -> CuResult<()> {
        if !(1..=6).contains(&advice) {
            return Err(invalid(format!("{advice} is not a CUmem_advise")));
        }
        let mut st = self.state.lock();
        st.contexts.require_current()?;
        let (offset, m) = Self::managed_range(&mut st.host, ptr, len)?;
        // Observed: READ_MOSTLY takes any location; the others name a processor.
        let p = match advice {
            1 | 2 => None,
            _ => Some(self.processor(location_type, id, invalid)?),
        };
        match (advice, p) {
            (1, _) => m.update(offset, len, |a| a.read_mostly = true),
            (2, _) => m.update(offset, len, |a| a.read_mostly = false),
            (3, p) => m.update(offset, len, |a| a.preferred = p),
            (4, _) => m.update(offset, len, |a| a.preferred = None),
            // The host is listed too, as CU_DEVICE_CPU (cuda-python's test_cuda_mem_range_attr
            // reads it back from NVIDIA's GPUs), though it reaches managed memory anyway.
            (5, Some(p)) => {
                let d = as_id(Some(p));
                m.update(offset, len, |a| {
                    if !a.accessed_by.contains(&d) {
                        a.accessed_by.push(d);
                    }
                })
            }
            (6, Some(p)) => {
                let d = as_id(Some(p));
                m.update(offset, len, |a| a.accessed_by.retain(|x| *x != d))
            }
            _ => {}
        }
        Ok(())
    }

    /// cuMemPrefetchAsync: nothing moves (the host and every device reach the one copy);
    /// the range remembers where it was sent.
    pub fn mem_prefetch(
        &self,
        ptr: u64,
        len: u64,
        location_type: i32,
        id: i32,
        flags: u32,
    ) -> CuResult<()> {
        // Observed: a device that does not exist is CUDA_ERROR_INVALID_DEVICE here.
        let p = self.processor(location_type, id, invalid_device)?;
        if flags != 0 {
            return Err(invalid(format!(
                "cuMemPrefetchAsync flags must be 0, not {flags:#x}"
            )));
        }
        let mut st = self.state.lock();
        st.contexts.require_current()?;
        let (offset, m) = Self::managed_range(&mut st.host, ptr, len)?;
        m.update(offset, len, |a| a.last_prefetch = Some(p));
        Ok(())
    }

    /// cuMemDiscardBatchAsync's one range: managed memory whose contents the program no
    /// longer needs. cuda.h: reading it before a write or a prefetch "will return an
    /// indeterminate value"; the mock keeps the bytes (one indeterminate value as good as
    /// any), so a program that reads discarded memory reads what it held, as a GPU that
    /// has not migrated the pages yet would. The range must be managed memory, as for a
    /// prefetch.
    pub fn mem_discard(&self, ptr: u64, len: u64) -> CuResult<()> {
        let mut st = self.state.lock();
        st.contexts.require_current()?;
        Self::managed_range(&mut st.host, ptr, len)?;
        Ok(())
    }

    /// cuStreamAttachMemAsync: a managed allocation's stream association. The devices
    /// report concurrent managed access, where the association promises nothing the mock
    /// must keep (every processor reaches the one copy at any time), so the call checks
    /// what cuda.h asks of its arguments and records nothing.
    pub fn stream_attach_mem(
        &self,
        stream: super::ids::StreamId,
        ptr: u64,
        len: u64,
        flags: u32,
    ) -> CuResult<()> {
        self.stream_check(stream)?;
        // CU_MEM_ATTACH_GLOBAL, _HOST, _SINGLE.
        const SINGLE: u32 = 4;
        if !matches!(flags, 1 | 2 | SINGLE) {
            return Err(invalid(format!(
                "flags {flags:#x} are not one CUmemAttach_flags value"
            )));
        }
        // cuda.h: attaching singly to the NULL stream (a virtual global stream) is an error.
        if flags == SINGLE && stream.is_default() {
            return Err(invalid(
                "CU_MEM_ATTACH_SINGLE names no single stream on a default stream",
            ));
        }
        let mut st = self.state.lock();
        st.contexts.require_current()?;
        // The devices report no pageable memory access: only managed memory attaches, and
        // (cuda.h) only as a whole, its length 0 or its size.
        let (offset, m) = Self::managed_range(&mut st.host, ptr, len.max(1))?;
        if offset != 0 || (len != 0 && len != m.size) {
            return Err(invalid(format!(
                "{len} bytes at {ptr:#x} are not a whole managed allocation (length 0 or {} at its start)",
                m.size
            )));
        }
        Ok(())
    }

    /// cuMemRangeGetAttribute: one value (an int) or, for ACCESSED_BY, `slots` of them
    /// (the devices, the host as CU_DEVICE_CPU, then CU_DEVICE_INVALID).
    pub fn mem_range_attribute(
        &self,
        ptr: u64,
        len: u64,
        attribute: RangeAttribute,
        slots: usize,
    ) -> CuResult<Vec<i32>> {
        let mut st = self.state.lock();
        st.contexts.require_current()?;
        let (offset, m) = Self::managed_range(&mut st.host, ptr, len)?;
        let runs = m.runs(offset, len);
        Ok(match attribute {
            RangeAttribute::ReadMostly => vec![i32::from(runs.iter().all(|a| a.read_mostly))],
            RangeAttribute::Preferred => vec![as_id(common(&runs, |a| a.preferred))],
            RangeAttribute::PreferredType => vec![as_type(common(&runs, |a| a.preferred))],
            RangeAttribute::PreferredId => vec![as_location_id(common(&runs, |a| a.preferred))],
            RangeAttribute::LastPrefetch => vec![as_id(common(&runs, |a| a.last_prefetch))],
            RangeAttribute::LastPrefetchType => vec![as_type(common(&runs, |a| a.last_prefetch))],
            RangeAttribute::LastPrefetchId => {
                vec![as_location_id(common(&runs, |a| a.last_prefetch))]
            }
            RangeAttribute::AccessedBy => {
                // The processors every run was advised to be accessed by: the devices in
                // order, then the host (cuda-python's test_cuda_mem_range_attr, on NVIDIA's
                // GPUs: [0, CU_DEVICE_CPU, CU_DEVICE_INVALID] whichever was advised first).
                let mut all: Vec<i32> = runs[0].accessed_by.clone();
                all.retain(|d| runs.iter().all(|a| a.accessed_by.contains(d)));
                all.sort_unstable_by_key(|&d| (d == DEVICE_CPU, d));
                all.resize(slots.max(all.len()), DEVICE_INVALID);
                all.truncate(slots);
                all
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advice_splits_runs_at_pages_and_mixed_ranges_report_no_common_value() {
        let mut m = Managed::new(8 * PAGE);
        m.update(4 * PAGE, 4 * PAGE, |a| a.read_mostly = true);
        m.update(100, 1000, |a| a.last_prefetch = Some(Processor::Host));
        assert_eq!(m.advice.len(), 3);
        assert!(m.runs(4 * PAGE, 4 * PAGE).iter().all(|a| a.read_mostly));
        assert!(!m.runs(0, 8 * PAGE).iter().all(|a| a.read_mostly));
        assert_eq!(m.runs(4 * PAGE + 1, 1).len(), 1);
        assert_eq!(
            as_id(common(&m.runs(0, PAGE), |a| a.last_prefetch)),
            DEVICE_CPU
        );
        assert_eq!(
            as_id(common(&m.runs(0, 2 * PAGE), |a| a.last_prefetch)),
            DEVICE_INVALID
        );
        // A run's end past the allocation's last page is no new run.
        m.update(7 * PAGE, PAGE, |a| a.read_mostly = false);
        assert_eq!(m.advice.len(), 4);
    }
}
