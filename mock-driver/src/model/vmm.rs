//! Virtual memory management: reservations of address space, physical allocations, the
//! mappings between them, and who may access what.
//!
//! The rules are the real driver's as observed on an H200 (driver 580.159.04): see
//! `cases/` for each, by the CUDA function's name.
//!
//! Where the bytes are: an allocation is a range of an arena (`arenas::DeviceMemory`)
//! until it is exported, when its pages move once to a file of its own that another
//! process can map (`os::MemFile`); imports are such files. Mapping is bookkeeping: the
//! reserved addresses stay PROT_NONE, so the host faults on a device address as it does
//! on a GPU, and copies, memsets and kernels reach the bytes through
//! [`Vmm::segments`] (host pointers into the arena or file), so aliases see the same bytes.

use super::arenas::{AddressPool, ArenaRange, DeviceMemory};
use super::error::*;
use super::ids::{AllocationId, ContextId, PoolId};
use super::limits::Backing;
use super::mappings::Mappings;
use super::reservations::Reservations;
use crate::os::{HostPtr, ImportError, MemFile};
use cumock_abi::consts::*;
use cumock_abi::result::*;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// Why a change under a copy in flight is a hazard, as seen on the H200.
const IN_FLIGHT: &str =
    "while a copy or memset to it may still be in flight (no synchronising call since): \
     on a GPU, cuMemcpyHtoD from pageable memory returns before the data lands, and the real \
     580.159.04 driver then fails with CUDA_ERROR_LAUNCH_FAILED, sticky for the context \
     (synchronise first, as PyTorch does before unmapping)";

/// Whether `x` is a multiple of `pow2`, a power of two (granularities are, the profile
/// checks; so are alignments, the calls check): a mask, where `is_multiple_of` divides,
/// which shows in calls that take tens of nanoseconds.
pub(crate) fn aligned(x: u64, pow2: u64) -> bool {
    debug_assert!(pow2.is_power_of_two());
    x & (pow2 - 1) == 0
}

/// x86-64 user space: 47 bits.
const USER_ADDRESS_SPACE: u64 = 1 << 47;

/// The lowest address hint cuMemAddressReserve takes. The H200 placed reservations
/// elsewhere at hints of 2, 10 and 16 MiB (cases reserve-low-hint and reserve-hint-floor;
/// the random cases, 6 calls at 2 to 10 MiB) and took 32 MiB, every power of two up to
/// 512 MiB, 768 MiB, 1 GiB, 64 GiB and 1 TiB: its floor lies above 16 MiB and at 32 MiB at
/// most, and the mock draws it at 32 MiB, the lowest hint recorded taken. A reservation
/// there can stop a non-PIE program's brk heap (its image loads at 4 MiB) from growing
/// past it, as the driver's would; malloc then takes memory with mmap.
const LOWEST_TAKEN_HINT: u64 = 32 << 20;

/// What a program asked for in `CUmemAllocationProp`, validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocationProp {
    pub location_type: i32,
    pub location_id: i32,
    pub handle_types: i32,
    pub compression: u8,
    pub gpu_direct_rdma: u8,
    pub usage: u16,
}

impl AllocationProp {
    pub fn device(&self) -> Option<usize> {
        (self.location_type == CU_MEM_LOCATION_TYPE_DEVICE).then_some(self.location_id as usize)
    }
}

/// Where an allocation's bytes are.
#[derive(Debug)]
pub enum Storage {
    /// A range of an arena: memory only this process can reach.
    Arena(ArenaRange),
    /// A file of its own: memory this process exported, or imported from another.
    File(MemFile),
}

/// One physical allocation (`cuMemCreate`, or an import).
#[derive(Debug)]
pub struct PhysicalAllocation {
    pub storage: Storage,
    pub size: u64,
    pub prop: AllocationProp,
    /// References the program holds: create or import gives one, each
    /// cuMemRetainAllocationHandle another, each cuMemRelease takes one.
    pub user_refs: u32,
    /// Mappings of it; the memory lives while any remains, even after the last release.
    pub map_count: u32,
    /// Imported memory was charged to the exporting process, not to this one.
    pub imported: bool,
    /// A copy or memset was issued to it and no synchronising call followed: on a GPU the
    /// work may still be in flight (cuMemcpyHtoD from pageable memory returns before the
    /// data lands), and changing access or unmapping then faults the context.
    pub in_flight: bool,
    /// Its bytes were handed out for a copy, memset or kernel: it may hold pages, which go
    /// back to the host when it goes (an untouched one has none to give back).
    touched: AtomicBool,
}

/// Per-device access flags of one mapping, two bits a device (profiles have at most 64).
/// Fresh mappings grant nothing, as on the real driver: access must be set after every
/// map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessTable {
    bits: u128,
}

impl AccessTable {
    pub fn none(_devices: usize) -> Self {
        Self { bits: 0 }
    }
    pub fn all(devices: usize) -> Self {
        let mut t = Self::none(devices);
        for d in 0..devices.min(64) {
            t.set(d, CU_MEM_ACCESS_FLAGS_PROT_READWRITE as u8);
        }
        t
    }
    pub fn get(&self, device: usize) -> u8 {
        if device >= 64 {
            return 0;
        }
        ((self.bits >> (2 * device)) & 3) as u8
    }
    pub fn set(&mut self, device: usize, flags: u8) {
        assert!(device < 64 && flags <= 3, "device {device}, flags {flags}");
        self.bits = (self.bits & !(3u128 << (2 * device))) | (u128::from(flags) << (2 * device));
    }
    pub fn allows(&self, device: usize, need: Need) -> bool {
        let have = i32::from(self.get(device));
        match need {
            Need::Read => have & CU_MEM_ACCESS_FLAGS_PROT_READ != 0,
            Need::Write => have == CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    Read,
    Write,
}

/// A physical allocation placed at an address of a reservation (`cuMemMap`).
#[derive(Debug)]
pub struct Mapping {
    pub start: u64,
    pub size: u64,
    pub handle: u64,
    pub access: AccessTable,
    pub reservation: u64,
    /// The host's access (CU_MEM_ACCESS_FLAGS_*), for allocations located on the host.
    pub host_access: u8,
    /// The host reaches the memory at `start` (a view placed there, see `os::alias_at`).
    pub host_view: bool,
}

/// What a reservation is for: the program's VMM range, or the mock's own range behind a
/// `cuMemAlloc` (which the program frees with cuMemFree, never cuMemAddressFree), or a
/// memory pool's address space (`pools`), which the program never frees itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReservationKind {
    Vmm,
    Alloc {
        context: ContextId,
        requested: u64,
    },
    Pool {
        pool: PoolId,
    },
    /// A graph's address space for its allocation nodes (graph_memory.rs).
    Graph,
}

#[derive(Debug)]
pub struct Reservation {
    pub size: u64,
    pub kind: ReservationKind,
}

/// A piece of device memory as the host reaches it: `len` bytes at `ptr`, which belong
/// to the allocation `allocation` (its handle's id). Valid while a [`BytesInUse`] taken
/// after it was made lives.
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    pub allocation: AllocationId,
    /// The start of the mapping it was reached through.
    pub mapping: u64,
    pub ptr: HostPtr,
    pub len: usize,
}

impl Segment {
    /// `len` bytes of it from `offset`.
    pub fn piece(self, offset: u64, len: u64) -> Segment {
        Segment {
            ptr: self.ptr.offset(offset as usize),
            len: len as usize,
            ..self
        }
    }
}

/// Held while bytes are moved outside the state's lock (a copy, a memset, a kernel): no
/// arena range or file view is given back or moved while one lives, so the host pointers
/// of segments stay valid and no new allocation receives bytes meant for an old one.
#[derive(Debug)]
pub struct BytesInUse(Arc<AtomicUsize>);

impl Drop for BytesInUse {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

/// Allocation ids are sequential numbers: hashing them with a multiply is enough, and
/// much cheaper than the default SipHash on every call.
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

pub type Allocations = HashMap<AllocationId, PhysicalAllocation, BuildHasherDefault<IdHasher>>;

#[derive(Debug, Default)]
pub struct Vmm {
    reservations: Reservations,
    mappings: Mappings,
    allocations: Allocations,
    next_handle: u64,
    /// Bytes charged to each device by live allocations.
    used: Vec<u64>,
    memory: DeviceMemory,
    addresses: AddressPool,
    /// Allocations with work in flight, so that a synchronisation clears only those.
    busy: Vec<AllocationId>,
    /// The mappings (by start) that work in flight went through: unmapping one, or taking
    /// access from it, races that work. Another mapping of the same allocation does not:
    /// on the H200 such unmaps never faulted (the random cases: 0 of 40 cases whose only
    /// in-flight unmaps were of other mappings, where 42 of 143 with the work's own
    /// mapping did; 0 of 24 whose only in-flight access changes were grants).
    busy_mappings: HashSet<u64>,
    /// How many [`BytesInUse`] live.
    bytes_in_use: Arc<AtomicUsize>,
    /// Storage that went while bytes were in use, given back once none are.
    pending: Vec<(Storage, bool)>,
    /// Allocations running kernels hold host pointers into, and how many kernels: their
    /// bytes stay where they are (not given back, not moved to a file) until unpinned. A
    /// kernel pins only what it touches, so that an export or a release elsewhere never
    /// waits for it.
    pins: HashMap<AllocationId, u32, BuildHasherDefault<IdHasher>>,
    /// Storage of allocations that went while pinned, given back at their last unpin.
    pinned_gone: Vec<(AllocationId, Storage, bool)>,
    /// `CUMOCK_LENIENT=1`: let pass what the real driver lets pass although CUDA's
    /// documentation forbids it (a map running past the end of its reservation).
    pub lenient: bool,
    /// Device memory touched so far, against what the mock may back (`limits`).
    pub backing: Backing,
}

impl Vmm {
    /// `granularity`: the profile's minimum, to which every mapping is aligned. Not
    /// lenient, and backed up to the host's default limit (the driver sets both from
    /// the settings).
    pub fn new(devices: usize, granularity: u64) -> Self {
        Self {
            used: vec![0; devices],
            mappings: Mappings::new(granularity),
            next_handle: 1,
            lenient: false,
            backing: Backing::from_setting(None),
            ..Default::default()
        }
    }

    pub fn reservation_at(&self, addr: u64) -> Option<(u64, &Reservation)> {
        self.reservations.containing(addr)
    }

    pub fn mapping_at(&self, addr: u64) -> Option<&Mapping> {
        self.mappings.covering(addr)
    }

    /// Refuses to touch host address space the mock does not hold for a live reservation:
    /// checked before every view is placed, protected or taken away, so that no
    /// bookkeeping slip can ever map over, unmap or protect the program's own memory (a
    /// mock that corrupts its host program is worse than none).
    fn check_owned(&self, start: u64, len: u64) -> CuResult<()> {
        let owned = start.checked_add(len).is_some_and(|end| {
            self.reservations.cover(start, end) && self.addresses.holds(start, len)
        });
        if owned {
            Ok(())
        } else {
            Err(CuError::new(
                CUDA_ERROR_UNKNOWN,
                format!(
                    "internal: {start:#x}+{len:#x} is not wholly address space the mock \
                     reserved; it leaves it untouched (please report this)"
                ),
            ))
        }
    }

    pub fn is_device_address(&self, addr: u64) -> bool {
        self.reservation_at(addr).is_some()
    }

    // ---- cuMemAddressReserve / cuMemAddressFree ----

    pub fn address_reserve(
        &mut self,
        size: u64,
        alignment: u64,
        hint: u64,
        flags: u64,
        granularity: u64,
    ) -> CuResult<u64> {
        if flags != 0 {
            return Err(invalid(format!("flags must be 0, not {flags}")));
        }
        if size == 0 || !aligned(size, granularity) {
            return Err(invalid(format!(
                "size {size:#x} is not a non-zero multiple of the granularity {granularity:#x}"
            )));
        }
        if alignment != 0 && !alignment.is_power_of_two() {
            // The H200's words (its error log, probe api_gaps3 logs-callback).
            return Err(invalid("Parameter alignment must be a power of two"));
        }
        if !aligned(hint, granularity) {
            return Err(invalid(format!(
                "address hint {hint:#x} is not aligned to the granularity"
            )));
        }
        if alignment >= USER_ADDRESS_SPACE {
            return Err(invalid(format!(
                "alignment {alignment:#x} is larger than the address space"
            )));
        }
        if hint != 0
            && hint
                .checked_add(size)
                .is_none_or(|end| end > USER_ADDRESS_SPACE)
        {
            // Observed: a hint outside the user address space is out of memory, not ignored.
            return Err(out_of_memory(format!(
                "hint {hint:#x} + size lies outside the address space"
            )));
        }
        if size >= USER_ADDRESS_SPACE {
            return Err(out_of_memory(
                "the reservation does not fit the address space",
            ));
        }
        let align = alignment.max(granularity);
        let hint = if hint < LOWEST_TAKEN_HINT { 0 } else { hint };
        let base = self
            .addresses
            .reserve(size, align, hint)
            .map_err(|e| out_of_memory(format!("no {size:#x} bytes of address space left: {e}")))?;
        self.reservations.insert(
            base,
            Reservation {
                size,
                kind: ReservationKind::Vmm,
            },
        );
        Ok(base)
    }

    pub fn address_free(&mut self, ptr: u64, size: u64) -> CuResult<()> {
        let Some(r) = self.reservations.get(&ptr) else {
            return Err(match self.reservation_at(ptr) {
                Some((base, _)) => invalid(format!(
                    "{ptr:#x} is inside the reservation at {base:#x}; free the whole reservation"
                )),
                None => invalid(format!("{ptr:#x} is not a reservation (freed already?)")),
            });
        };
        if r.kind != ReservationKind::Vmm {
            return Err(invalid(format!(
                "{ptr:#x} came from cuMemAlloc (free it with cuMemFree) or is a memory pool's"
            )));
        }
        if r.size != size {
            return Err(invalid(format!(
                "size {size:#x} is not the reservation's size {:#x}",
                r.size
            )));
        }
        // Any mapping that reaches into the range, not only one that starts in it: a map
        // may run on from the reservation before (an allocator that grew with a hint at
        // the end of its last range), and the range's address space must stay the mock's
        // while it is mapped. The H200 refuses this free too, for DEVICE and HOST memory.
        if let Some(m) = self.mappings.overlapping(ptr, ptr + size).next() {
            return Err(invalid(format!(
                "the reservation {ptr:#x}+{size:#x} still has a mapping in it, at {:#x}+{:#x}; \
                 cuMemUnmap it first",
                m.start, m.size
            )));
        }
        self.remove_reservation(ptr);
        Ok(())
    }

    /// Forgets a reservation and gives its address space back to the pool (its mappings
    /// are gone already).
    pub fn remove_reservation(&mut self, base: u64) {
        if let Some(size) = self.reservations.remove(&base) {
            self.addresses.free(base, size);
        }
    }

    // ---- cuMemCreate / cuMemRelease ----

    pub fn create(
        &mut self,
        size: u64,
        prop: AllocationProp,
        flags: u64,
        granularity: u64,
        free: u64,
    ) -> CuResult<u64> {
        if flags != 0 {
            return Err(invalid(format!("flags must be 0, not {flags}")));
        }
        if size == 0 || !aligned(size, granularity) {
            return Err(invalid(format!(
                "size {size:#x} is not a non-zero multiple of the granularity {granularity:#x}"
            )));
        }
        if size > free {
            return Err(out_of_memory(format!(
                "{size:#x} bytes asked, {free:#x} free on the device"
            )));
        }
        self.give_back_pending();
        let range = self
            .memory
            .allocate(size)
            .map_err(|e| out_of_memory(format!("host memory for the allocation: {e}")))?;
        if let Some(d) = prop.device() {
            self.used[d] += size;
        }
        Ok(self.insert_allocation(PhysicalAllocation {
            storage: Storage::Arena(range),
            size,
            prop,
            user_refs: 1,
            map_count: 0,
            imported: false,
            in_flight: false,
            touched: AtomicBool::new(false),
        }))
    }

    fn insert_allocation(&mut self, a: PhysicalAllocation) -> u64 {
        let id = AllocationId::from_serial(self.next_handle);
        self.next_handle += 1;
        self.allocations.insert(id, a);
        id.handle()
    }

    /// The allocation behind a handle the program still holds.
    /// The allocation a handle names. A handle released while still mapped lives on: the
    /// H200 answers its properties, exports it and maps it again (probe
    /// released-while-mapped); it goes with its last mapping.
    pub fn allocation(&self, handle: u64) -> CuResult<&PhysicalAllocation> {
        let id = self.handle_id(handle)?;
        match self.allocations.get(&id) {
            Some(a) if a.user_refs > 0 || a.map_count > 0 => Ok(a),
            _ => Err(self.stale_handle(handle)),
        }
    }

    fn handle_id(&self, handle: u64) -> CuResult<AllocationId> {
        if handle == 0 {
            return Err(invalid("the handle is 0"));
        }
        if !AllocationId::is_handle(handle) {
            return Err(CuError::would_crash(format!(
                "{handle:#x} was never an allocation handle (the real driver crashes here)"
            )));
        }
        Ok(AllocationId::from_handle(handle))
    }

    fn stale_handle(&self, handle: u64) -> CuError {
        let id = AllocationId::from_handle(handle).serial();
        if id < self.next_handle && id != 0 {
            CuError::would_crash(format!(
                "handle {handle:#x} was released already (released twice, or used after \
                 its last cuMemRelease; the real driver may crash here)"
            ))
        } else {
            CuError::would_crash(format!(
                "{handle:#x} was never an allocation handle (the real driver crashes here)"
            ))
        }
    }

    pub fn release(&mut self, handle: u64) -> CuResult<()> {
        let id = self.handle_id(handle)?;
        let a = match self.allocations.get_mut(&id) {
            Some(a) if a.user_refs > 0 => a,
            _ => {
                let mut e = self.stale_handle(handle);
                // Releasing twice is an ordinary error on the real driver, not a crash.
                e.severity = Severity::Misuse;
                return Err(e);
            }
        };
        a.user_refs -= 1;
        self.drop_if_unused(id);
        Ok(())
    }

    fn drop_if_unused(&mut self, id: AllocationId) {
        let Some(a) = self.allocations.get(&id) else {
            return;
        };
        if a.user_refs != 0 || a.map_count != 0 {
            return;
        }
        if let (Some(d), false) = (a.prop.device(), a.imported) {
            self.used[d] -= a.size;
        }
        let a = self.allocations.remove(&id).expect("found above");
        let touched = a.touched.load(Ordering::Relaxed);
        if touched && Self::backed(&a) {
            self.backing.uncommit(a.size);
        }
        if self.pins.contains_key(&id) {
            self.pinned_gone.push((id, a.storage, touched));
        } else {
            self.give_back(a.storage, touched);
        }
    }

    /// A running kernel holds host pointers into the allocation `id` (see `pins`).
    pub fn pin(&mut self, id: AllocationId) {
        *self.pins.entry(id).or_default() += 1;
    }

    /// The kernel that pinned each of `ids` has ended.
    pub fn unpin(&mut self, ids: impl IntoIterator<Item = AllocationId>) {
        for id in ids {
            let Some(n) = self.pins.get_mut(&id) else {
                continue;
            };
            *n -= 1;
            if *n > 0 {
                continue;
            }
            self.pins.remove(&id);
            if let Some(i) = self.pinned_gone.iter().position(|(g, ..)| *g == id) {
                let (_, storage, touched) = self.pinned_gone.swap_remove(i);
                self.give_back(storage, touched);
            }
        }
    }

    /// Whether exporting `handle` must wait for a running kernel: its bytes would move to
    /// a file of their own while the kernel still writes the old place.
    pub fn export_waits_for_kernel(&self, handle: u64) -> bool {
        AllocationId::is_handle(handle) && {
            let id = AllocationId::from_handle(handle);
            self.pins.contains_key(&id)
                && self
                    .allocations
                    .get(&id)
                    .is_some_and(|a| matches!(a.storage, Storage::Arena(_)))
        }
    }

    /// Gives an allocation's memory back, at once if no bytes are in use, else once none
    /// are (a copy may still be moving bytes through its host pointer).
    fn give_back(&mut self, storage: Storage, touched: bool) {
        if self.bytes_in_use.load(Ordering::Acquire) == 0 {
            self.give_back_pending();
            self.give_back_now(storage, touched);
        } else {
            self.pending.push((storage, touched));
        }
    }

    fn give_back_pending(&mut self) {
        if self.pending.is_empty() || self.bytes_in_use.load(Ordering::Acquire) != 0 {
            return;
        }
        for (s, touched) in std::mem::take(&mut self.pending) {
            self.give_back_now(s, touched);
        }
    }

    fn give_back_now(&mut self, storage: Storage, touched: bool) {
        match storage {
            Storage::Arena(r) => self.memory.release(r, touched),
            // Its view goes; the file lives on while another process maps it or holds an
            // fd of it.
            Storage::File(f) => drop(f),
        }
    }

    pub fn properties(&self, handle: u64) -> CuResult<AllocationProp> {
        Ok(self.allocation(handle)?.prop)
    }

    // ---- cuMemMap / cuMemUnmap ----

    pub fn map(
        &mut self,
        ptr: u64,
        size: u64,
        offset: u64,
        handle: u64,
        flags: u64,
        granularity: u64,
    ) -> CuResult<()> {
        let devices = self.used.len();
        if flags != 0 {
            return Err(invalid(format!("flags must be 0, not {flags}")));
        }
        if size == 0 {
            return Err(invalid("size is 0"));
        }
        if ptr == 0 {
            return Err(invalid("address is NULL"));
        }
        // One lookup of the allocation for the whole call (this is the hottest path of an
        // allocator that grows), so the other tables are reached by field below.
        let id = self.handle_id(handle)?;
        let a = match self.allocations.get_mut(&id) {
            Some(a) if a.user_refs > 0 || a.map_count > 0 => a,
            _ => return Err(self.stale_handle(handle)),
        };
        if offset != 0 {
            return Err(not_supported(format!(
                "offset {offset:#x}: only whole allocations can be mapped (offset 0)"
            )));
        }
        if size != a.size {
            return Err(not_supported(format!(
                "size {size:#x} is not the allocation's {:#x}: partial maps are not supported",
                a.size
            )));
        }
        // The H200 refuses a partial map (NOT_SUPPORTED) before it looks at the address:
        // an unaligned address with a wrong size or offset is NOT_SUPPORTED, a NULL one
        // INVALID_VALUE (random cases, tests/random_findings.rs).
        if !aligned(ptr, granularity) {
            return Err(invalid(format!(
                "address {ptr:#x} is not aligned to the granularity"
            )));
        }
        let end = ptr
            .checked_add(size)
            .ok_or_else(|| invalid("address + size wraps"))?;
        let Some((rbase, r)) = self.reservations.containing(ptr) else {
            return Err(invalid(format!("{ptr:#x} is not inside any reservation")));
        };
        if r.kind != ReservationKind::Vmm {
            return Err(invalid(format!(
                "{ptr:#x} is cuMemAlloc or memory-pool memory, not a reservation"
            )));
        }
        // A map may run on into the next reservation when that one starts where this one
        // ends (the H200 maps across two adjacent reservations: probe
        // reservation-placement); past the last of such a run it is refused.
        let rsize = r.size;
        let mut covered = rbase + rsize;
        while covered < end {
            match self.reservations.get(&covered) {
                Some(next) if next.kind == ReservationKind::Vmm => covered += next.size,
                // The H200 maps past the end of a fresh reservation when its own address
                // allocator holds the space beyond (case map-past-end); leniently, the mock
                // does the same with free address space of its own, which then belongs to
                // the reservation (so a free of the size the program asked for fails, as
                // on the H200).
                None if self.lenient
                    && self.reservations.containing(covered).is_none()
                    && self.addresses.take_exactly(covered, end - covered) =>
                {
                    self.reservations.get_mut(&rbase).expect("found above").size += end - covered;
                    covered = end;
                }
                _ => {
                    return Err(invalid(format!(
                        "{ptr:#x}+{size:#x} runs past the end of its reservation {rbase:#x}+{:#x} \
                         (CUDA forbids it; the real driver may let it pass when its own \
                         allocator holds the space beyond: CUMOCK_LENIENT=1 behaves so)",
                        rsize
                    )))
                }
            }
        }
        // The table says which mapping covers each granule: the first one found in the
        // range is in the way.
        if let Some(m) = self.mappings.overlapping(ptr, end).next() {
            return Err(invalid(format!(
                "{ptr:#x}+{size:#x} overlaps the mapping at {:#x}+{:#x}",
                m.start, m.size
            )));
        }
        a.map_count += 1;
        self.mappings.insert(Mapping {
            start: ptr,
            size,
            handle,
            access: AccessTable::none(devices),
            reservation: rbase,
            host_access: 0,
            host_view: false,
        });
        Ok(())
    }

    fn overlapping(&self, start: u64, end: u64) -> impl Iterator<Item = &Mapping> {
        self.mappings.overlapping(start, end)
    }

    /// Unmaps; returns warnings about mappings with work that may be in flight.
    pub fn unmap(&mut self, ptr: u64, size: u64) -> CuResult<Vec<String>> {
        if size == 0 {
            return Err(invalid("size is 0"));
        }
        // No alignment rule: the H200 unmaps any range that starts in a reservation and
        // cuts no mapping, whatever its address's or size's alignment (random cases,
        // tests/random_findings.rs); the mappings wholly inside it go.
        let end = ptr
            .checked_add(size)
            .ok_or_else(|| invalid("address + size wraps"))?;
        let Some((_, r)) = self.reservation_at(ptr) else {
            return Err(invalid(format!("{ptr:#x} is not inside any reservation")));
        };
        if r.kind != ReservationKind::Vmm {
            return Err(invalid(format!(
                "{ptr:#x} is cuMemAlloc or memory-pool memory; use cuMemFree or cuMemFreeAsync"
            )));
        }
        // The common case, one whole mapping: mappings never overlap, so nothing else
        // lies in the range, and no list of them is needed.
        if let Some(m) = self.mappings.remove_if(ptr, |m| m.size == size) {
            let busy = self.busy_mappings.contains(&m.start);
            // forget_mapping also takes a host view away (HOST-location memory).
            self.forget_mapping(m);
            return Ok(if busy {
                vec![format!("unmapping the mapping at {ptr:#x} {IN_FLIGHT}")]
            } else {
                Vec::new()
            });
        }
        let mut starts = Vec::new();
        for m in self.overlapping(ptr, end) {
            if m.start < ptr || m.start + m.size > end {
                return Err(invalid(format!(
                    "{ptr:#x}+{size:#x} cuts the mapping at {:#x}+{:#x}: unmap whole mappings",
                    m.start, m.size
                )));
            }
            starts.push(m.start);
        }
        // Observed: a range with nothing mapped in it unmaps successfully (nothing).
        let mut warnings = Vec::new();
        for s in starts {
            if self.busy_mappings.contains(&s) {
                warnings.push(format!("unmapping the mapping at {s:#x} {IN_FLIGHT}"));
            }
            self.remove_mapping(s);
        }
        Ok(warnings)
    }

    pub fn remove_mapping(&mut self, start: u64) {
        if let Some(m) = self.mappings.remove(&start) {
            self.forget_mapping(m);
        }
    }

    /// What goes with a mapping removed from the table: its host view, and the
    /// allocation too if nothing else holds it.
    fn forget_mapping(&mut self, m: Mapping) {
        self.busy_mappings.remove(&m.start);
        if m.host_view {
            // The address space stays the reservation's: reserved, inaccessible. A
            // failure leaves the view, and the bytes with it, alive: said, not fatal.
            let unaliased = self
                .check_owned(m.start, m.size)
                .map_err(|e| std::io::Error::other(e.message))
                .and_then(|()| crate::os::unalias(m.start as usize, m.size as usize));
            if let Err(e) = unaliased {
                eprintln!(
                    "cumock: the host view at {:#x} could not be taken away: {e}",
                    m.start
                );
            }
        }
        let id = AllocationId::from_handle(m.handle);
        let unused = self.allocations.get_mut(&id).is_some_and(|a| {
            a.map_count -= 1;
            a.user_refs == 0 && a.map_count == 0
        });
        if unused {
            self.drop_if_unused(id);
        }
    }

    // ---- cuMemSetAccess / cuMemGetAccess ----

    /// cuMemSetAccess for the host (location HOST or HOST_NUMA): only allocations located
    /// on the host may be granted to it (the H200 says CUDA_ERROR_NOT_SUPPORTED for
    /// device memory); the host then reaches them at their device address, read-only or
    /// read-write, as the H200 lets it (probe host-location-*).
    pub fn set_host_access(&mut self, ptr: u64, size: u64, flags: u8) -> CuResult<()> {
        let (starts, _) = self.tiling_to_first_hole(ptr, size)?;
        for &s in &starts {
            let m = &self.mappings[&s];
            let a = &self.allocations[&AllocationId::from_handle(m.handle)];
            if a.prop.device().is_some() {
                return Err(not_supported(format!(
                    "the mapping at {s:#x} is device memory: the host cannot be granted access to it"
                )));
            }
        }
        for s in starts {
            let (size, view, handle) = {
                let m = &self.mappings[&s];
                (m.size, m.host_view, m.handle)
            };
            let prot = match i32::from(flags) {
                CU_MEM_ACCESS_FLAGS_PROT_READWRITE => crate::os::Prot::ReadWrite,
                CU_MEM_ACCESS_FLAGS_PROT_READ => crate::os::Prot::Read,
                _ => crate::os::Prot::None,
            };
            self.check_owned(s, size)?;
            let placed = if view {
                crate::os::protect(s as usize, size as usize, prot)
            } else if prot == crate::os::Prot::None {
                Ok(())
            } else {
                let a = &self.allocations[&AllocationId::from_handle(handle)];
                a.touched.store(true, Ordering::Relaxed);
                let src = self.host_ptr(a);
                // Safety: `src` is the start of the allocation's live shared view of
                // `size` bytes, and `[s, s+size)` is its mapping in a reservation of ours,
                // which holds no other view (`host_view` is false).
                unsafe {
                    crate::os::alias_at(
                        src,
                        size as usize,
                        s as usize,
                        prot == crate::os::Prot::ReadWrite,
                    )
                }
            };
            placed
                .map_err(|e| out_of_memory(format!("host view of the mapping at {s:#x}: {e}")))?;
            let m = self.mappings.get_mut(&s).expect("tiled");
            m.host_view |= prot != crate::os::Prot::None;
            m.host_access = flags;
        }
        Ok(())
    }

    /// The host's access to the mapping at `ptr`, if it holds memory located on the host.
    pub fn host_access(&self, ptr: u64) -> Option<u8> {
        let m = self.mapping_at(ptr)?;
        let a = self.allocations.get(&AllocationId::from_handle(m.handle))?;
        a.prop.device().is_none().then_some(m.host_access)
    }

    /// The mappings cuMemSetAccess changes, and the first hole of the range if it has one.
    /// As the H200 does (probe access-across-holes): the range must start at a mapping
    /// and end at the end of one, cutting none; when it crosses unmapped holes, only the
    /// mappings before the first hole change, and the call succeeds.
    fn tiling_to_first_hole(&self, ptr: u64, size: u64) -> CuResult<(Vec<u64>, Option<u64>)> {
        if size == 0 {
            return Err(invalid("size is 0"));
        }
        let end = ptr
            .checked_add(size)
            .ok_or_else(|| invalid("address + size wraps"))?;
        let mut run = Vec::new();
        let mut hole = None;
        let mut at = ptr;
        for m in self.overlapping(ptr, end) {
            if m.start < ptr || m.start + m.size > end {
                return Err(invalid(format!(
                    "{ptr:#x}+{size:#x} covers only part of the mapping at {:#x}+{:#x}",
                    m.start, m.size
                )));
            }
            if m.start != at {
                if at == ptr {
                    return Err(invalid(format!("nothing is mapped at {ptr:#x}")));
                }
                hole.get_or_insert(at);
            }
            if hole.is_none() {
                run.push(m.start);
            }
            at = m.start + m.size;
        }
        if at != end {
            return Err(invalid(format!(
                "nothing is mapped at {at:#x}, before the end of {ptr:#x}+{size:#x}"
            )));
        }
        Ok((run, hole))
    }

    /// Sets access; returns warnings about changes the real driver handles badly.
    pub fn set_access(
        &mut self,
        ptr: u64,
        size: u64,
        grants: &[(usize, u8)],
    ) -> CuResult<Vec<String>> {
        let (starts, hole) = self.tiling_to_first_hole(ptr, size)?;
        let mut warnings = Vec::new();
        if let Some(hole) = hole {
            warnings.push(format!(
                "cuMemSetAccess({ptr:#x}, {size:#x}) crosses the unmapped hole at {hole:#x}: \
                 the driver succeeds but grants access only up to the hole, so the mappings \
                 after it keep their old access; set access per mapped range"
            ));
        }
        for s in starts {
            let m = self.mappings.get_mut(&s).expect("tiled");
            let busy = self.busy_mappings.contains(&s);
            for &(device, flags) in grants {
                // A grant adds to what the work may do: only a right taken away races it.
                let taken = m.access.get(device) & !flags != 0;
                if busy && taken {
                    warnings.push(format!(
                        "changing device {device}'s access to the mapping at {:#x} from {} to {flags} {IN_FLIGHT}",
                        m.start,
                        m.access.get(device)
                    ));
                }
                m.access.set(device, flags);
            }
        }
        Ok(warnings)
    }

    pub fn get_access(&self, device: usize, ptr: u64) -> CuResult<u8> {
        match self.mapping_at(ptr) {
            Some(m) => Ok(m.access.get(device)),
            None => Err(invalid(format!("nothing is mapped at {ptr:#x}"))),
        }
    }

    // ---- cuMemExportToShareableHandle / cuMemImportFromShareableHandle ----

    pub fn export(&mut self, handle: u64, handle_type: i32, flags: u64) -> CuResult<OwnedFd> {
        let a = self.allocation(handle)?;
        if flags != 0 {
            return Err(invalid(format!("flags must be 0, not {flags}")));
        }
        if handle_type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR {
            return Err(invalid(format!(
                "handle type {handle_type}: only POSIX file descriptors (1) are emulated"
            )));
        }
        if a.prop.handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR == 0 {
            return Err(invalid(
                "the allocation was created without CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR \
                 in requestedHandleTypes",
            ));
        }
        let id = AllocationId::from_handle(handle);
        if let Storage::Arena(range) = a.storage {
            self.move_to_file(id, range)?;
        }
        let a = self.allocations.get(&id).expect("checked above");
        match &a.storage {
            Storage::File(f) => f
                .export()
                .map_err(|e| CuError::new(CUDA_ERROR_OUT_OF_MEMORY, format!("no fd left: {e}"))),
            Storage::Arena(_) => unreachable!("moved above"),
        }
    }

    /// Moves an allocation out of its arena into a file of its own, once, when it is
    /// first exported: every mapping reaches its bytes through the allocation, so all of
    /// them follow, and aliasing stays exact. Only pages that exist are copied.
    pub(super) fn move_to_file(&mut self, id: AllocationId, range: ArenaRange) -> CuResult<()> {
        // No copy may be moving bytes of the old place meanwhile: wait for those in
        // progress (they need no lock to finish; new ones need the state's lock, which
        // the caller holds).
        while self.bytes_in_use.load(Ordering::Acquire) != 0 {
            std::thread::yield_now();
        }
        let a = self.allocations.get(&id).expect("the caller found it");
        let file = MemFile::create(range.len as usize, &memfd_tag(&a.prop))
            .map_err(|e| out_of_memory(format!("a file for the exported allocation: {e}")))?;
        let touched = a.touched.load(Ordering::Relaxed);
        if touched {
            let base = self.memory.ptr(range);
            for (off, len) in self.memory.data_extents(range) {
                // Safety: the extent lies inside the allocation's live arena range, and no
                // copy moves bytes meanwhile (waited for above).
                unsafe { file.fill_from(off, base.offset(off), len) };
            }
        }
        let new_base = file.ptr();
        self.allocations.get_mut(&id).expect("found above").storage = Storage::File(file);
        // Host views of the allocation placed at its device addresses (HOST-location
        // memory granted to the host) are second views of the arena's pages: they are
        // placed again over the file's, with the same protection, before the arena's
        // pages go.
        let views: Vec<(u64, u64, u8)> = self
            .mappings
            .iter()
            .filter(|m| m.host_view && AllocationId::from_handle(m.handle) == id)
            .map(|m| (m.start, m.size, m.host_access))
            .collect();
        for (start, size, flags) in views {
            // Safety: `new_base` is the start of the file's live shared view of the whole
            // allocation (`size` bytes: mappings are whole allocations), and
            // `[start, start+size)` is the allocation's mapping (address space of ours,
            // checked first), whose old view this replaces.
            let placed = self
                .check_owned(start, size)
                .map_err(|e| std::io::Error::other(e.message))
                .and_then(|()| unsafe {
                    crate::os::alias_at(new_base, size as usize, start as usize, false)
                })
                .and_then(|()| {
                    crate::os::protect(
                        start as usize,
                        size as usize,
                        match i32::from(flags) {
                            CU_MEM_ACCESS_FLAGS_PROT_READWRITE => crate::os::Prot::ReadWrite,
                            CU_MEM_ACCESS_FLAGS_PROT_READ => crate::os::Prot::Read,
                            _ => crate::os::Prot::None,
                        },
                    )
                });
            if let Err(e) = placed {
                // The old view stays (and so does its arena range, never given back):
                // the host then sees the bytes from before the export. Said, not fatal.
                eprintln!("cumock: the host view at {start:#x} could not follow the export: {e}");
                return Ok(());
            }
        }
        self.give_back_now(Storage::Arena(range), touched);
        Ok(())
    }

    pub fn import(&mut self, fd: i32, handle_type: i32, devices: usize) -> CuResult<u64> {
        match handle_type {
            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR => {}
            CU_MEM_HANDLE_TYPE_WIN32 | CU_MEM_HANDLE_TYPE_WIN32_KMT => {
                return Err(not_supported("Win32 handles do not exist on Linux"))
            }
            CU_MEM_HANDLE_TYPE_FABRIC => {
                return Err(not_supported("fabric handles are not emulated"))
            }
            other => return Err(invalid(format!("handle type {other} is not one of CUDA's"))),
        }
        let file = MemFile::import(fd).map_err(|e| {
            CuError::new(
                CUDA_ERROR_UNKNOWN,
                match e {
                    ImportError::NotAnFd => format!("{fd} is not an open file descriptor"),
                    ImportError::Foreign(what) => {
                        format!("fd {fd} ({what}) is not memory exported by cuMemExportToShareableHandle")
                    }
                    ImportError::Map(e) => format!("fd {fd} could not be mapped: {e}"),
                },
            )
        })?;
        let prop = parse_memfd_tag(file.tag()).unwrap_or(AllocationProp {
            location_type: CU_MEM_LOCATION_TYPE_DEVICE,
            location_id: 0,
            handle_types: CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            compression: 0,
            gpu_direct_rdma: 0,
            usage: 0,
        });
        if let Some(d) = prop.device() {
            if d >= devices {
                return Err(invalid_device(format!(
                    "the memory lives on device {d}, which this process's profile lacks"
                )));
            }
        }
        // Observed: an imported allocation reports no requested handle types.
        let prop = AllocationProp {
            handle_types: 0,
            ..prop
        };
        Ok(self.insert_allocation(PhysicalAllocation {
            size: file.size() as u64,
            storage: Storage::File(file),
            prop,
            user_refs: 1,
            map_count: 0,
            imported: true,
            in_flight: false,
            // Another process may have written it: its view may hold pages.
            touched: AtomicBool::new(true),
        }))
    }

    // ---- cuMemRetainAllocationHandle ----

    pub fn retain(&mut self, addr: u64) -> CuResult<u64> {
        let Some(m) = self.mapping_at(addr) else {
            return Err(invalid(format!("nothing is mapped at {addr:#x}")));
        };
        let handle = m.handle;
        self.allocations
            .get_mut(&AllocationId::from_handle(handle))
            .expect("a mapped allocation lives")
            .user_refs += 1;
        Ok(handle)
    }

    // ---- copies, memsets, kernels ----

    /// Marks the allocations under these segments as having work in flight.
    pub fn issued(&mut self, segments: &[Segment]) {
        for s in segments {
            self.busy_mappings.insert(s.mapping);
            if let Some(a) = self.allocations.get_mut(&s.allocation) {
                if !a.in_flight {
                    a.in_flight = true;
                    self.busy.push(s.allocation);
                }
            }
        }
    }

    /// A synchronising call: all work issued so far has completed.
    pub fn synchronized(&mut self) {
        self.busy_mappings.clear();
        for id in std::mem::take(&mut self.busy) {
            if let Some(a) = self.allocations.get_mut(&id) {
                a.in_flight = false;
            }
        }
    }

    /// The pieces of `[addr, addr+len)` as host memory, checking that every byte is
    /// mapped and that `device` has the access `need` to it: what copies and memsets
    /// move bytes through. The pointers stay valid while a [`BytesInUse`] taken with
    /// [`Vmm::hold_bytes`] under the same lock lives.
    pub fn segments(
        &self,
        addr: u64,
        len: u64,
        device: usize,
        need: Need,
    ) -> CuResult<Vec<Segment>> {
        let end = addr
            .checked_add(len)
            .ok_or_else(|| invalid("address + size wraps"))?;
        let mut out = Vec::new();
        let mut at = addr;
        while at < end {
            let Some(m) = self.mapping_at(at) else {
                return Err(invalid(format!(
                    "{at:#x} is not mapped (the copy covers {addr:#x}+{len:#x})"
                )));
            };
            let whole = self.mapping_bytes(m, device, need)?;
            let take = (m.start + m.size).min(end) - at;
            out.push(whole.piece(at - m.start, take));
            at += take;
        }
        Ok(out)
    }

    /// Where a copy between the host and `[addr, addr+len)` would crash the real driver:
    /// the first piece it cannot move is a mapping of host-located memory that `device`
    /// may not access. Observed: cuMemcpyDtoH and cuMemcpyHtoD there end the process with
    /// SIGSEGV on the H200 (the random cases, 6 of 6: random-2-004 line 75, random-3-009
    /// line 14), where device memory without access is refused (INVALID_VALUE).
    pub fn host_copy_would_crash(
        &self,
        addr: u64,
        len: u64,
        device: usize,
        need: Need,
    ) -> Option<CuError> {
        let end = addr.checked_add(len)?;
        let mut at = addr;
        while at < end {
            let m = self.mapping_at(at)?;
            if !m.access.allows(device, need) {
                let host_located = self
                    .allocations
                    .get(&AllocationId::from_handle(m.handle))
                    .is_some_and(|a| a.prop.device().is_none());
                return host_located.then(|| {
                    CuError::would_crash(format!(
                        "device {device} has no access to the mapping of host-located memory \
                         at {:#x}: the real driver (580.159.04) crashes with SIGSEGV on a copy \
                         between it and the host (cuMemSetAccess grants it)",
                        m.start
                    ))
                });
            }
            at = m.start + m.size;
        }
        None
    }

    /// The mapping `m` as host memory, whole, checking that `device` has the access
    /// `need` to it: the one translation from a mapping to host pointers, which copies,
    /// memsets and kernels (`State::device_span`) share. The first touch of its
    /// allocation counts it as backed, or fails when the host cannot back it.
    pub fn mapping_bytes(&self, m: &Mapping, device: usize, need: Need) -> CuResult<Segment> {
        if !m.access.allows(device, need) {
            return Err(invalid(format!(
                "device {device} has no {} access to the mapping at {:#x} (cuMemSetAccess grants it)",
                if need == Need::Write { "read-write" } else { "read" },
                m.start
            )));
        }
        let id = AllocationId::from_handle(m.handle);
        let a = self
            .allocations
            .get(&id)
            .expect("a mapped allocation lives");
        self.first_touch(a, m.start)?;
        Ok(Segment {
            allocation: id,
            mapping: m.start,
            ptr: self.host_ptr(a),
            len: m.size as usize,
        })
    }

    /// Device memory of this process's own, whose pages the host gives when touched:
    /// what `backing` counts (imports were counted by their exporter; memory located on
    /// the host is the host's, as page-locked or managed memory).
    fn backed(a: &PhysicalAllocation) -> bool {
        a.prop.device().is_some() && !a.imported
    }

    /// Marks an allocation touched as its bytes are handed out, counting it whole as
    /// backed the first time, or refusing if the host cannot back it (see `limits`). The
    /// state's lock is held, so no two first touches race.
    fn first_touch(&self, a: &PhysicalAllocation, at: u64) -> CuResult<()> {
        if a.touched.load(Ordering::Relaxed) {
            return Ok(());
        }
        if Self::backed(a) {
            self.backing.commit(a.size).map_err(|why| {
                host_limit(format!(
                    "the allocation mapped at {at:#x} ({} bytes) cannot be touched: {why}",
                    a.size
                ))
            })?;
        }
        a.touched.store(true, Ordering::Relaxed);
        Ok(())
    }

    fn host_ptr(&self, a: &PhysicalAllocation) -> HostPtr {
        match &a.storage {
            Storage::Arena(r) => self.memory.ptr(*r),
            Storage::File(f) => f.ptr(),
        }
    }

    /// Keeps every host pointer handed out so far valid until the value is dropped (see
    /// [`BytesInUse`]). Take it under the same lock as the segments; do not call
    /// cuMemExportToShareableHandle's model on the same thread while holding it.
    pub fn hold_bytes(&self) -> BytesInUse {
        self.bytes_in_use.fetch_add(1, Ordering::Acquire);
        BytesInUse(self.bytes_in_use.clone())
    }

    /// In a child after fork: no other thread is moving bytes here, and the parent's
    /// arenas are the parent's (see `arenas::DeviceMemory::after_fork_child`).
    /// Allocates nothing: it runs in a fork handler.
    pub fn after_fork_child(&mut self) {
        self.bytes_in_use.store(0, Ordering::Release);
        self.memory.after_fork_child();
    }

    /// How many released allocations that may hold pages wait to be given back to the
    /// host together (64 by default): for tests of reuse.
    pub fn set_release_batch(&mut self, ranges: usize) {
        self.memory.set_dirty_ranges(ranges);
    }

    /// What the mock holds of the host for device memory: (arenas, address-space chunks,
    /// allocations with a file of their own). Each arena and file is one fd or mapping
    /// or both; each chunk one mapping.
    pub fn host_footprint(&self) -> (usize, usize, usize) {
        let files = self
            .allocations
            .values()
            .filter(|a| matches!(a.storage, Storage::File(_)))
            .count();
        (self.memory.arenas(), self.addresses.chunks(), files)
    }
}

/// What the driver's calls and the leak report read of the tables. The tables are private
/// so that every change goes through `Vmm`'s operations, which keep them in step (a
/// mapping's allocation, the bytes charged to a device).
impl Vmm {
    /// The reservation starting at `base`.
    pub fn reservation(&self, base: u64) -> Option<&Reservation> {
        self.reservations.get(&base)
    }

    /// The reservations, by base address.
    pub fn reservations(&self) -> impl Iterator<Item = (u64, &Reservation)> + '_ {
        self.reservations.iter()
    }

    /// The mappings, in address order.
    pub fn mappings(&self) -> impl Iterator<Item = &Mapping> + '_ {
        self.mappings.iter()
    }

    /// The mappings that start in `[start, end)`, in address order.
    pub fn mappings_starting_in(&self, start: u64, end: u64) -> impl Iterator<Item = &Mapping> {
        self.mappings.starting_in(start, end)
    }

    /// The last mapping starting at or before `addr` (it may end before `addr`).
    pub fn last_mapping_at_or_before(&self, addr: u64) -> Option<&Mapping> {
        self.mappings.last_at_or_before(addr)
    }

    /// The live allocations, by id.
    pub fn allocations(&self) -> impl Iterator<Item = (AllocationId, &PhysicalAllocation)> {
        self.allocations.iter().map(|(id, a)| (*id, a))
    }

    /// The live allocation `id`.
    pub fn allocation_by_id(&self, id: AllocationId) -> Option<&PhysicalAllocation> {
        self.allocations.get(&id)
    }

    /// Makes the mapping at `base` usable from every one of `devices` devices (memory
    /// that unified addressing shares with all of them: cuMemAlloc's, IPC-opened).
    pub fn grant_all_devices(&mut self, base: u64, devices: usize) {
        if let Some(m) = self.mappings.get_mut(&base) {
            m.access = AccessTable::all(devices);
        }
    }

    /// Says what the reservation at `base` is for (a memory pool takes its regions
    /// as its own, and lends one to cuMemMap while it maps a chunk there).
    pub fn set_reservation_kind(&mut self, base: u64, kind: ReservationKind) {
        if let Some(r) = self.reservations.get_mut(&base) {
            r.kind = kind;
        }
    }

    /// Sets the access of the mapping at `start` as a whole (a pool's chunks follow the
    /// pool's access).
    pub fn set_mapping_access(&mut self, start: u64, access: AccessTable) {
        if let Some(m) = self.mappings.get_mut(&start) {
            m.access = access;
        }
    }

    /// The mapping starting at `start`.
    pub fn mapping_starting_at(&self, start: u64) -> Option<&Mapping> {
        self.mappings.get(&start)
    }

    /// The allocation a mapping maps.
    pub fn mapped_allocation(&self, m: &Mapping) -> Option<&PhysicalAllocation> {
        self.allocations.get(&AllocationId::from_handle(m.handle))
    }

    /// Bytes charged to `device` by live allocations.
    pub fn used(&self, device: usize) -> u64 {
        self.used[device]
    }

    /// Makes the range just reserved and mapped at `base` cuMemAlloc memory of `context`:
    /// freed with cuMemFree, and usable from every one of `devices` devices, as unified
    /// addressing makes it.
    pub fn make_alloc(&mut self, base: u64, context: ContextId, requested: u64, devices: usize) {
        self.grant_all_devices(base, devices);
        self.reservations.get_mut(&base).expect("reserved").kind =
            ReservationKind::Alloc { context, requested };
    }
}

/// What an importer needs to know of an exported allocation, carried in the memfd's name.
fn memfd_tag(p: &AllocationProp) -> String {
    format!(
        "loc={},{} types={} comp={} rdma={}",
        p.location_type, p.location_id, p.handle_types, p.compression, p.gpu_direct_rdma
    )
}

fn parse_memfd_tag(tag: &str) -> Option<AllocationProp> {
    let mut prop = AllocationProp {
        location_type: 0,
        location_id: 0,
        handle_types: 0,
        compression: 0,
        gpu_direct_rdma: 0,
        usage: 0,
    };
    for field in tag.split_whitespace() {
        let (k, v) = field.split_once('=')?;
        match k {
            "loc" => {
                let (t, i) = v.split_once(',')?;
                prop.location_type = t.parse().ok()?;
                prop.location_id = i.parse().ok()?;
            }
            "types" => prop.handle_types = v.parse().ok()?,
            "comp" => prop.compression = v.parse().ok()?,
            "rdma" => prop.gpu_direct_rdma = v.parse().ok()?,
            _ => {}
        }
    }
    (prop.location_id >= 0 && prop.location_id < 64).then_some(prop)
}

#[cfg(test)]
mod tests {
    use super::*;
    const G: u64 = 2 << 20;

    fn prop() -> AllocationProp {
        AllocationProp {
            location_type: CU_MEM_LOCATION_TYPE_DEVICE,
            location_id: 0,
            handle_types: CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            compression: 0,
            gpu_direct_rdma: 0,
            usage: 0,
        }
    }

    fn code<T: std::fmt::Debug>(r: CuResult<T>) -> u32 {
        r.map(|_| 0).unwrap_or_else(|e| e.code)
    }

    #[test]
    fn partial_maps_are_not_supported_and_whole_ones_work() {
        let mut v = Vmm::new(1, G);
        let va = v.address_reserve(4 * G, 0, 0, 0, G).unwrap();
        let h = v.create(2 * G, prop(), 0, G, u64::MAX).unwrap();
        assert_eq!(code(v.map(va, G, 0, h, 0, G)), CUDA_ERROR_NOT_SUPPORTED);
        assert_eq!(code(v.map(va, 2 * G, G, h, 0, G)), CUDA_ERROR_NOT_SUPPORTED);
        assert_eq!(code(v.map(va, 2 * G, 0, h, 0, G)), CUDA_SUCCESS);
        assert_eq!(
            code(v.map(va + G, 2 * G, 0, h, 0, G)),
            CUDA_ERROR_INVALID_VALUE
        );
    }

    #[test]
    fn only_the_mapping_work_went_through_races_it() {
        let mut v = Vmm::new(1, G);
        let va = v.address_reserve(8 * G, 0, 0, 0, G).unwrap();
        let h = v.create(G, prop(), 0, G, u64::MAX).unwrap();
        let (a, b, c) = (va, va + 2 * G, va + 4 * G);
        for at in [a, b, c] {
            v.map(at, G, 0, h, 0, G).unwrap();
        }
        v.set_access(a, G, &[(0, 3)]).unwrap();
        v.set_access(c, G, &[(0, 3)]).unwrap();
        let segs = v.segments(a + 64, 64, 0, Need::Write).unwrap();
        v.issued(&segs);
        assert!(
            v.unmap(c, G).unwrap().is_empty(),
            "an alias of the allocation"
        );
        let grant = v.set_access(b, G, &[(0, 3)]).unwrap();
        assert!(grant.is_empty(), "granting the alias: {grant:?}");
        let grant = v.set_access(a, G, &[(0, 3)]).unwrap();
        assert!(grant.is_empty(), "the same access again: {grant:?}");
        let lowered = v.set_access(a, G, &[(0, 1)]).unwrap();
        assert!(lowered[0].contains("in flight"), "{lowered:?}");
        let unmapped = v.unmap(a, G).unwrap();
        assert!(unmapped[0].contains("in flight"), "{unmapped:?}");
        v.map(a, G, 0, h, 0, G).unwrap();
        assert!(
            v.unmap(a, G).unwrap().is_empty(),
            "a new mapping at the same start"
        );
        v.set_access(b, G, &[(0, 3)]).unwrap();
        let segs = v.segments(b, 64, 0, Need::Write).unwrap();
        v.issued(&segs);
        v.synchronized();
        assert!(v.unmap(b, G).unwrap().is_empty(), "after a synchronisation");
    }

    #[test]
    fn a_host_copy_at_host_memory_without_access_would_crash() {
        let mut v = Vmm::new(1, G);
        let va = v.address_reserve(4 * G, 0, 0, 0, G).unwrap();
        let host = AllocationProp {
            location_type: CU_MEM_LOCATION_TYPE_HOST_NUMA,
            handle_types: 0,
            ..prop()
        };
        let h = v.create(G, host, 0, G, u64::MAX).unwrap();
        let d = v.create(G, prop(), 0, G, u64::MAX).unwrap();
        v.map(va, G, 0, h, 0, G).unwrap();
        v.map(va + G, G, 0, d, 0, G).unwrap();
        let e = v.host_copy_would_crash(va + 64, 64, 0, Need::Read);
        let e = e.expect("host-located memory without access");
        assert_eq!(e.code, CUDA_ERROR_INVALID_VALUE);
        assert_eq!(e.severity, Severity::WouldCrash);
        assert!(
            v.host_copy_would_crash(va + G, 64, 0, Need::Write)
                .is_none(),
            "device memory without access is refused, not crashed on"
        );
        v.set_access(va + G, G, &[(0, 3)]).unwrap();
        assert!(
            v.host_copy_would_crash(va + G - 32, 64, 0, Need::Write)
                .is_some(),
            "the first piece decides"
        );
        v.set_access(va, G, &[(0, 3)]).unwrap();
        assert!(v.host_copy_would_crash(va, 2 * G, 0, Need::Write).is_none());
    }

    #[test]
    fn only_live_reservations_of_ours_count_as_owned_address_space() {
        let mut v = Vmm::new(1, G);
        let a = v.address_reserve(2 * G, 0, 0, 0, G).unwrap();
        let b = v.address_reserve(2 * G, 0, a + 2 * G, 0, G).unwrap();
        assert_eq!(b, a + 2 * G);
        assert!(
            v.check_owned(a, 4 * G).is_ok(),
            "two reservations side by side"
        );
        assert!(v.check_owned(a + G, 2 * G).is_ok());
        assert!(v.check_owned(a, 4 * G + G).is_err(), "past the last one");
        assert!(v.check_owned(a - G, G).is_err(), "before the first");
        assert!(v.check_owned(u64::MAX - G, 2 * G).is_err(), "wraps");
        let host = Box::new([0u8; 64]);
        assert!(v.check_owned(host.as_ptr() as u64, 64).is_err(), "the heap");
        v.address_free(b, 2 * G).unwrap();
        assert!(v.check_owned(a, 4 * G).is_err(), "B is no longer reserved");
        assert!(v.check_owned(a, 2 * G).is_ok());
    }

    #[test]
    fn a_reservation_another_mapping_reaches_into_is_not_freed() {
        let mut v = Vmm::new(1, G);
        let a = v.address_reserve(2 * G, 0, 0, 0, G).unwrap();
        let b = v.address_reserve(2 * G, 0, a + 2 * G, 0, G).unwrap();
        let h = v.create(2 * G, prop(), 0, G, u64::MAX).unwrap();
        v.map(a + G, 2 * G, 0, h, 0, G).unwrap();
        assert_eq!(code(v.address_free(b, 2 * G)), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(code(v.address_free(a, 2 * G)), CUDA_ERROR_INVALID_VALUE);
        v.unmap(a + G, 2 * G).unwrap();
        assert_eq!(code(v.address_free(b, 2 * G)), CUDA_SUCCESS);
        assert_eq!(code(v.address_free(a, 2 * G)), CUDA_SUCCESS);
    }

    #[test]
    fn access_starts_empty_and_is_checked_by_copies() {
        let mut v = Vmm::new(2, G);
        let va = v.address_reserve(4 * G, 0, 0, 0, G).unwrap();
        let h = v.create(2 * G, prop(), 0, G, u64::MAX).unwrap();
        v.map(va, 2 * G, 0, h, 0, G).unwrap();
        assert_eq!(v.get_access(0, va).unwrap(), 0);
        assert!(v.segments(va, 16, 0, Need::Read).is_err());
        v.set_access(va, 2 * G, &[(1, 3)]).unwrap();
        assert!(v.segments(va, 16, 0, Need::Read).is_err());
        assert_eq!(v.segments(va + G - 8, 16, 1, Need::Write).unwrap().len(), 1);
        v.set_access(va, 2 * G, &[(0, 1)]).unwrap();
        assert!(v.segments(va, 16, 0, Need::Read).is_ok());
        assert!(v.segments(va, 16, 0, Need::Write).is_err());
    }

    #[test]
    fn release_while_mapped_keeps_the_memory_until_unmap() {
        let mut v = Vmm::new(1, G);
        let va = v.address_reserve(2 * G, 0, 0, 0, G).unwrap();
        let h = v.create(2 * G, prop(), 0, G, u64::MAX).unwrap();
        v.map(va, 2 * G, 0, h, 0, G).unwrap();
        v.release(h).unwrap();
        assert_eq!(v.used[0], 2 * G);
        assert_eq!(code(v.release(h)), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(code(v.address_free(va, 2 * G)), CUDA_ERROR_INVALID_VALUE);
        v.unmap(va, 2 * G).unwrap();
        assert_eq!(v.used[0], 0);
        v.address_free(va, 2 * G).unwrap();
    }

    #[test]
    fn bogus_handles_are_errors_that_say_the_real_driver_crashes() {
        let mut v = Vmm::new(1, G);
        let e = v.release(0xdead_beef).unwrap_err();
        assert_eq!(e.severity, Severity::WouldCrash);
        assert_eq!(e.code, CUDA_ERROR_INVALID_VALUE);
    }

    #[test]
    fn unmap_takes_whole_mappings_only() {
        let mut v = Vmm::new(1, G);
        let va = v.address_reserve(8 * G, 0, 0, 0, G).unwrap();
        let a = v.create(2 * G, prop(), 0, G, u64::MAX).unwrap();
        let b = v.create(2 * G, prop(), 0, G, u64::MAX).unwrap();
        v.map(va, 2 * G, 0, a, 0, G).unwrap();
        v.map(va + 2 * G, 2 * G, 0, b, 0, G).unwrap();
        assert_eq!(code(v.unmap(va, G)), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(code(v.unmap(va + G, 2 * G)), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(code(v.unmap(va, 4 * G)), CUDA_SUCCESS);
        assert!(v.mappings.is_empty());
    }

    /// Case reserve-low-hint: hints of 2 and 10 MiB go elsewhere; a hint at the end of a
    /// reservation (an allocator growing its range) is taken.
    #[test]
    fn low_hints_are_not_taken() {
        let mut v = Vmm::new(1, G);
        for hint in [G, 5 * G] {
            let at = v.address_reserve(2 * G, 0, hint, 0, G).unwrap();
            assert_ne!(at, hint);
            assert!(at >= LOWEST_TAKEN_HINT);
        }
        let va = v.address_reserve(2 * G, 0, 0, 0, G).unwrap();
        assert_eq!(
            v.address_reserve(2 * G, 0, va + 2 * G, 0, G),
            Ok(va + 2 * G)
        );
    }

    #[test]
    fn memfd_tags_round_trip() {
        let p = prop();
        assert_eq!(parse_memfd_tag(&memfd_tag(&p)), Some(p));
        assert_eq!(parse_memfd_tag("loc=1,99999"), None);
    }
}
