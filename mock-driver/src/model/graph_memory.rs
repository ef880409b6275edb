//! Graph memory nodes (cuda.h: cuGraphAddMemAllocNode, cuGraphAddMemFreeNode; the CUDA
//! programming guide's "Graph Memory Nodes"), over the VMM model.
//!
//! An allocation node takes its address when it is added: a reservation of its own,
//! rounded up to the device's granularity, of kind [`ReservationKind::Graph`], kept as
//! long as the graph or an executable graph made from it lives, or its allocation is
//! live ("the allocation's address remains fixed across instantiations and launches").
//! Physical memory is the device's graph allocator's: chunks of the granularity's
//! multiples, each a physical allocation of the model. When a launch reaches an
//! allocation node, a chunk is mapped at its address (the one mapped there already by an
//! earlier launch, else an idle unmapped one large enough, else a new one), with the
//! access the node asked for; a chunk stays mapped where it is after the allocation is
//! freed, so a relaunch finds it there (an address that keeps its memory across
//! launches, and a reserved footprint that does not grow). cuDeviceGraphMemTrim gives
//! back the chunks no live allocation holds.
//!
//! Lifetimes are kept in API order: a launch makes its allocations live and frees what
//! its free nodes free when cuGraphLaunch is called (the mock runs the graph's nodes in
//! that order, after it, on the stream's worker), which is when its errors are due (a
//! launch while an allocation of its graph is still live is CUDA_ERROR_INVALID_VALUE).
//!
//! Counting (awaiting the H200's recording: probe graph_memory): USED is the chunks that
//! live allocations hold, RESERVED every chunk the device's graph allocator holds; the
//! highs are their maxima since the last reset to 0.

use super::error::*;
use super::graphs::GraphId;
use super::vmm::{AccessTable, AllocationProp, ReservationKind, Vmm};
use super::Driver;
use cumock_abi::consts::*;
use cumock_abi::{CUmemAccessDesc, CUmemLocation, CUmemPoolProps};
use std::collections::BTreeMap;

/// `CUgraphMem_attribute`.
pub mod attribute {
    pub const USED_MEM_CURRENT: i32 = 0;
    pub const USED_MEM_HIGH: i32 = 1;
    pub const RESERVED_MEM_CURRENT: i32 = 2;
    pub const RESERVED_MEM_HIGH: i32 = 3;
}

/// An allocation node's parameters, as it was added (cuGraphMemAllocNodeGetParams hands
/// out its `access` array: the node owns it).
#[derive(Debug, PartialEq)]
pub struct AllocNode {
    pub dptr: u64,
    pub bytesize: u64,
    pub device: usize,
    /// `poolProps` as given, less the Windows security attributes (NULL on Linux).
    pub alloc_type: i32,
    pub location: CUmemLocation,
    pub max_size: usize,
    pub usage: u16,
    pub access: Vec<CUmemAccessDesc>,
}

impl AllocNode {
    pub fn pool_props(&self) -> CUmemPoolProps {
        CUmemPoolProps {
            alloc_type: self.alloc_type,
            handle_types: 0,
            location: self.location,
            max_size: self.max_size,
            usage: self.usage,
            ..Default::default()
        }
    }
}

/// The address an allocation node reserved, and what became of it.
#[derive(Debug)]
struct Allocation {
    device: usize,
    /// The reservation's size (bytesize rounded to the granularity).
    size: u64,
    requested: u64,
    access: AccessTable,
    /// The graph whose allocation node made it.
    graph: GraphId,
    /// The graph holding a free node for it (its own or another: cuda.h allows one).
    freed_in: Option<GraphId>,
    /// The graph and the executable graphs made from it that still hold the node.
    holders: usize,
    /// Allocated by a launch and not freed since.
    live: bool,
    /// The chunk mapped at its address, by the chunk's physical handle.
    chunk: Option<u64>,
}

#[derive(Debug)]
struct Chunk {
    size: u64,
    /// Where it is mapped: an allocation's address.
    mapped_at: Option<u64>,
}

#[derive(Debug, Default)]
struct DeviceMemory {
    /// Chunks by physical handle.
    chunks: BTreeMap<u64, Chunk>,
    used_high: u64,
    reserved_high: u64,
}

/// Every graph allocation of the process, and each device's graph allocator.
#[derive(Debug, Default)]
pub struct GraphMemory {
    allocations: BTreeMap<u64, Allocation>,
    devices: Vec<DeviceMemory>,
}

impl GraphMemory {
    pub fn new(devices: usize) -> Self {
        Self {
            allocations: BTreeMap::new(),
            devices: (0..devices).map(|_| DeviceMemory::default()).collect(),
        }
    }

    pub fn is_allocation(&self, ptr: u64) -> bool {
        self.allocations.contains_key(&ptr)
    }

    fn used(&self, device: usize) -> u64 {
        let d = &self.devices[device];
        self.allocations
            .values()
            .filter(|a| a.device == device && a.live)
            .filter_map(|a| a.chunk.and_then(|c| d.chunks.get(&c)))
            .map(|c| c.size)
            .sum()
    }

    fn reserved(&self, device: usize) -> u64 {
        self.devices[device].chunks.values().map(|c| c.size).sum()
    }

    fn note_highs(&mut self, device: usize) {
        let (used, reserved) = (self.used(device), self.reserved(device));
        let d = &mut self.devices[device];
        d.used_high = d.used_high.max(used);
        d.reserved_high = d.reserved_high.max(reserved);
    }

    /// A new allocation node's address: a reservation of its own.
    pub fn reserve(
        &mut self,
        vmm: &mut Vmm,
        graph: GraphId,
        node: &AllocNode,
        granularity: u64,
    ) -> CuResult<u64> {
        let size = node
            .bytesize
            .checked_next_multiple_of(granularity)
            .ok_or_else(|| out_of_memory(format!("{} bytes overflow", node.bytesize)))?;
        let base = vmm.address_reserve(size, 0, 0, 0, granularity)?;
        vmm.set_reservation_kind(
            base,
            ReservationKind::Graph {
                requested: node.bytesize,
            },
        );
        let mut access = AccessTable::none(0);
        access.set(node.device, CU_MEM_ACCESS_FLAGS_PROT_READWRITE as u8);
        for a in &node.access {
            access.set(a.location.id as usize, a.flags as u8);
        }
        self.allocations.insert(
            base,
            Allocation {
                device: node.device,
                size,
                requested: node.bytesize,
                access,
                graph,
                freed_in: None,
                holders: 1,
                live: false,
                chunk: None,
            },
        );
        Ok(base)
    }

    /// A free node for `ptr` in `graph`: cuda.h: INVALID_VALUE for an address no
    /// allocation node returned, for a second free in the same graph, and for a free in
    /// a graph other than one that frees it already.
    pub fn add_free(&mut self, graph: GraphId, ptr: u64) -> CuResult<()> {
        let a = self.allocations.get_mut(&ptr).ok_or_else(|| {
            invalid(format!(
                "{ptr:#x} was not returned by a graph allocation node"
            ))
        })?;
        match a.freed_in {
            Some(g) if g == graph => {
                Err(invalid(format!("{ptr:#x} is freed in this graph already")))
            }
            Some(g) => Err(invalid(format!(
                "{ptr:#x} is freed in graph {g:#x}: no other graph may free it"
            ))),
            None => {
                a.freed_in = Some(graph);
                Ok(())
            }
        }
    }

    /// Whether `ptr` is freed by a free node of the graph that allocated it (then no
    /// call outside that graph may free it).
    fn freed_in_own_graph(&self, ptr: u64) -> bool {
        self.allocations
            .get(&ptr)
            .is_some_and(|a| a.freed_in == Some(a.graph))
    }

    /// An executable graph holds these allocation nodes too.
    pub fn hold(&mut self, ptrs: &[u64]) {
        for p in ptrs {
            if let Some(a) = self.allocations.get_mut(p) {
                a.holders += 1;
            }
        }
    }

    /// A graph or an executable graph holding these allocation nodes is gone; `graph`:
    /// the graph destroyed, whose free nodes go with it. An address no longer held goes
    /// back (the caller made sure no queued work still uses it).
    pub fn release(&mut self, vmm: &mut Vmm, ptrs: &[u64], graph: Option<GraphId>) {
        if let Some(g) = graph {
            for a in self.allocations.values_mut() {
                if a.freed_in == Some(g) {
                    a.freed_in = None;
                }
            }
        }
        for p in ptrs {
            if let Some(a) = self.allocations.get_mut(p) {
                a.holders -= 1;
            }
            self.forget_if_unused(vmm, *p);
        }
    }

    /// Would dropping these holders give an address back (so that work must be drained
    /// first)?
    pub fn release_frees_addresses(&self, ptrs: &[u64]) -> bool {
        ptrs.iter().any(|p| {
            self.allocations
                .get(p)
                .is_some_and(|a| a.holders == 1 && !a.live)
        })
    }

    /// Gives an allocation's address back once nothing holds its node and it is not
    /// live; its chunk stays with the device's allocator, unmapped.
    fn forget_if_unused(&mut self, vmm: &mut Vmm, ptr: u64) {
        let Some(a) = self.allocations.get(&ptr) else {
            return;
        };
        if a.holders > 0 || a.live {
            return;
        }
        let a = self.allocations.remove(&ptr).expect("found");
        if let Some(c) = a.chunk {
            vmm.remove_mapping(ptr);
            if let Some(chunk) = self.devices[a.device].chunks.get_mut(&c) {
                chunk.mapped_at = None;
            }
        }
        vmm.remove_reservation(ptr);
    }

    /// Checks that a launch may allocate `allocs` and free `frees` (in this order, the
    /// graph's), `auto_free`: the executable graph frees its unfreed allocations first.
    pub fn check_launch(&self, allocs: &[u64], frees: &[u64], auto_free: bool) -> CuResult<()> {
        for p in allocs {
            let a = self
                .allocations
                .get(p)
                .ok_or_else(|| invalid(format!("graph allocation {p:#x} is gone")))?;
            if a.live && !auto_free {
                // cuda.h (cuGraphLaunch): CUDA_ERROR_INVALID_VALUE.
                return Err(invalid(format!(
                    "the graph's allocation {p:#x} from an earlier launch is still live: free \
                     it (cuMemFreeAsync, cuMemFree, a free node) or instantiate with \
                     CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH"
                )));
            }
        }
        for p in frees {
            let live = self.allocations.get(p).is_some_and(|a| a.live);
            if !live && !allocs.contains(p) {
                return Err(invalid(format!(
                    "the graph frees {p:#x}, which is not allocated (freed already?)"
                )));
            }
        }
        Ok(())
    }

    /// A launch reaches its allocation nodes and free nodes, in order (checked by
    /// `check_launch`).
    pub fn launch(
        &mut self,
        vmm: &mut Vmm,
        free_bytes: impl Fn(&Vmm, usize) -> u64,
        granularity: impl Fn(usize) -> u64,
        ops: &[(bool, u64)],
    ) -> CuResult<()> {
        for &(alloc, p) in ops {
            if alloc {
                if self.allocations[&p].live {
                    self.free(p);
                }
                let device = self.allocations[&p].device;
                self.bind(vmm, p, free_bytes(vmm, device), granularity(device))?;
                self.allocations.get_mut(&p).expect("checked").live = true;
                self.note_highs(device);
            } else {
                self.free(p);
            }
        }
        Ok(())
    }

    /// Maps a chunk at the allocation's address, if none is there yet.
    fn bind(&mut self, vmm: &mut Vmm, ptr: u64, free: u64, granularity: u64) -> CuResult<()> {
        let a = &self.allocations[&ptr];
        if a.chunk.is_some() {
            return Ok(());
        }
        let (device, size, access) = (a.device, a.size, a.access);
        let d = &mut self.devices[device];
        let idle = d
            .chunks
            .iter()
            .filter(|(_, c)| c.mapped_at.is_none() && c.size >= size)
            .min_by_key(|(_, c)| c.size)
            .map(|(h, _)| *h);
        let handle = match idle {
            Some(h) => h,
            None => {
                let prop = AllocationProp {
                    location_type: CU_MEM_LOCATION_TYPE_DEVICE,
                    location_id: device as i32,
                    handle_types: 0,
                    compression: CU_MEM_ALLOCATION_COMP_NONE,
                    gpu_direct_rdma: 0,
                    usage: 0,
                };
                let h = vmm.create(size, prop, 0, granularity, free)?;
                d.chunks.insert(
                    h,
                    Chunk {
                        size,
                        mapped_at: None,
                    },
                );
                h
            }
        };
        // cuMemMap maps only into the program's own reservations: the range is one for
        // the length of the call, as a pool maps its chunks.
        let kind = ReservationKind::Graph {
            requested: self.allocations[&ptr].requested,
        };
        vmm.set_reservation_kind(ptr, ReservationKind::Vmm);
        let mapped = vmm.map(ptr, size, 0, handle, 0, granularity);
        vmm.set_reservation_kind(ptr, kind);
        mapped?;
        vmm.set_mapping_access(ptr, access);
        self.devices[device]
            .chunks
            .get_mut(&handle)
            .expect("inserted")
            .mapped_at = Some(ptr);
        self.allocations.get_mut(&ptr).expect("checked").chunk = Some(handle);
        Ok(())
    }

    /// Ends a live allocation's lifetime; its chunk stays mapped for the next launch.
    fn free(&mut self, ptr: u64) {
        if let Some(a) = self.allocations.get_mut(&ptr) {
            a.live = false;
        }
    }

    /// cuMemFree or cuMemFreeAsync of a graph allocation.
    pub fn free_outside(&mut self, vmm: &mut Vmm, ptr: u64) -> CuResult<()> {
        if self.freed_in_own_graph(ptr) {
            return Err(invalid(format!(
                "{ptr:#x} is freed by a free node of its own graph: only that graph may free it"
            )));
        }
        let a = self
            .allocations
            .get(&ptr)
            .ok_or_else(|| invalid(format!("{ptr:#x} is no graph allocation")))?;
        if !a.live {
            return Err(invalid(format!(
                "graph allocation {ptr:#x} is not allocated (no launch since its last free)"
            )));
        }
        self.free(ptr);
        self.forget_if_unused(vmm, ptr);
        Ok(())
    }

    /// cuDeviceGraphMemTrim: chunks that no live allocation holds go back to the model.
    pub fn trim(&mut self, vmm: &mut Vmm, device: usize) {
        let d = &self.devices[device];
        let idle: Vec<u64> = d
            .chunks
            .iter()
            .filter(|(_, c)| {
                c.mapped_at
                    .is_none_or(|p| self.allocations.get(&p).is_none_or(|a| !a.live))
            })
            .map(|(h, _)| *h)
            .collect();
        for h in idle {
            let c = self.devices[device].chunks.remove(&h).expect("found");
            if let Some(p) = c.mapped_at {
                vmm.remove_mapping(p);
                if let Some(a) = self.allocations.get_mut(&p) {
                    a.chunk = None;
                }
            }
            let _ = vmm.release(h);
        }
    }

    pub fn attribute(&self, device: usize, attr: i32) -> CuResult<u64> {
        let d = &self.devices[device];
        match attr {
            attribute::USED_MEM_CURRENT => Ok(self.used(device)),
            attribute::USED_MEM_HIGH => Ok(d.used_high),
            attribute::RESERVED_MEM_CURRENT => Ok(self.reserved(device)),
            attribute::RESERVED_MEM_HIGH => Ok(d.reserved_high),
            _ => Err(invalid(format!("{attr} is not a CUgraphMem_attribute"))),
        }
    }

    /// cuDeviceSetGraphMemAttribute: cuda.h: only the highs, and only to 0.
    pub fn reset_high(&mut self, device: usize, attr: i32, value: u64) -> CuResult<()> {
        if value != 0 {
            return Err(invalid(format!(
                "a high watermark can only be reset to 0, not {value}"
            )));
        }
        let d = &mut self.devices[device];
        match attr {
            attribute::USED_MEM_HIGH => d.used_high = 0,
            attribute::RESERVED_MEM_HIGH => d.reserved_high = 0,
            attribute::USED_MEM_CURRENT | attribute::RESERVED_MEM_CURRENT => {
                return Err(invalid(format!("attribute {attr} cannot be set")))
            }
            _ => return Err(invalid(format!("{attr} is not a CUgraphMem_attribute"))),
        }
        Ok(())
    }

    /// The range of the graph allocation holding `addr`: its address and the size asked.
    pub fn range_at(&self, addr: u64) -> Option<(u64, u64)> {
        self.allocations
            .range(..=addr)
            .next_back()
            .filter(|(p, a)| addr - **p < a.requested)
            .map(|(p, a)| (*p, a.requested))
    }
}

impl Driver {
    /// The device whose graph memory a call names: CUDA_ERROR_INVALID_DEVICE otherwise.
    fn graph_memory_device(&self, device: i32) -> CuResult<usize> {
        if device < 0 || device as usize >= self.device_count() {
            return Err(invalid_device(format!("device {device} does not exist")));
        }
        Ok(device as usize)
    }

    pub fn graph_mem_attribute(&self, device: i32, attr: i32) -> CuResult<u64> {
        let d = self.graph_memory_device(device)?;
        self.state.lock().graph_memory.attribute(d, attr)
    }

    pub fn graph_mem_reset_high(&self, device: i32, attr: i32, value: u64) -> CuResult<()> {
        let d = self.graph_memory_device(device)?;
        self.state.lock().graph_memory.reset_high(d, attr, value)
    }

    /// cuDeviceGraphMemTrim. cuda.h: memory of graphs "currently executing or scheduled
    /// to execute" stays: the mock waits for the device's queued work first, so that no
    /// queued graph loses a chunk it will use.
    pub fn graph_mem_trim(&self, device: i32) -> CuResult<()> {
        let d = self.graph_memory_device(device)?;
        super::stream_queues::drain_all();
        let mut st = self.state.lock();
        let st = &mut *st;
        st.graph_memory.trim(&mut st.vmm, d);
        Ok(())
    }

    /// cuGraphAddMemAllocNode's checks: device memory of an existing device, no IPC
    /// handle types, access descriptors naming devices.
    pub fn check_alloc_node(&self, node: &AllocNode) -> CuResult<()> {
        let devices = self.device_count();
        if node.bytesize == 0 {
            return Err(invalid("bytesize is 0"));
        }
        if node.alloc_type != CU_MEM_ALLOCATION_TYPE_PINNED {
            return Err(invalid(format!(
                "poolProps.allocType {} is not CU_MEM_ALLOCATION_TYPE_PINNED",
                node.alloc_type
            )));
        }
        match node.location.type_ {
            CU_MEM_LOCATION_TYPE_DEVICE => {}
            CU_MEM_LOCATION_TYPE_HOST | CU_MEM_LOCATION_TYPE_HOST_NUMA => {
                return Err(not_supported(
                    "graph allocations of host memory are not emulated by cumock",
                ))
            }
            t => return Err(invalid(format!("poolProps.location.type {t} is no device"))),
        }
        if node.device >= devices {
            return Err(invalid(format!("device {} does not exist", node.device)));
        }
        if node.access.len() > devices {
            return Err(invalid(format!(
                "{} access descriptors for {devices} devices",
                node.access.len()
            )));
        }
        for a in &node.access {
            if a.location.type_ != CU_MEM_LOCATION_TYPE_DEVICE
                || a.location.id < 0
                || a.location.id as usize >= devices
            {
                return Err(invalid(format!(
                    "access descriptor for location ({}, {}): not a device",
                    a.location.type_, a.location.id
                )));
            }
            if ![
                CU_MEM_ACCESS_FLAGS_PROT_NONE,
                CU_MEM_ACCESS_FLAGS_PROT_READ,
                CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            ]
            .contains(&a.flags)
            {
                return Err(invalid(format!("access flags {} are unknown", a.flags)));
            }
        }
        Ok(())
    }
}

/// What a launch of an executable graph allocates and frees, in order.
pub fn memory_ops(ops: &[(bool, u64)]) -> (Vec<u64>, Vec<u64>) {
    let allocs = ops.iter().filter(|o| o.0).map(|o| o.1).collect();
    let frees = ops.iter().filter(|o| !o.0).map(|o| o.1).collect();
    (allocs, frees)
}
