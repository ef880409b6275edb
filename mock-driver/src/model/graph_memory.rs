//! Graph memory nodes (cuda.h: cuGraphAddMemAllocNode, cuGraphAddMemFreeNode; the CUDA
//! programming guide's "Graph Memory Nodes"), over the VMM model, as the H200 was seen to
//! run them (probe graph_memory).
//!
//! Addresses: each graph has address space of its own for its allocation nodes (a
//! region, a reservation of kind [`ReservationKind::Graph`]), in which the nodes take
//! their addresses one after another as they are added, [`ALIGNMENT`] apart (H200: a
//! 1 MiB node at a granularity boundary, the next one off it). An address is fixed for
//! the life of the node ("across instantiations and launches"); the region lives while
//! the graph, an executable graph made from it, or a live allocation of it does. A node
//! added after free nodes (its dependencies or their ancestors) that free every node
//! holding an address of the same graph and device, in a span large enough, takes that
//! address again (the programming guide: CUDA reuses virtual addresses within a graph
//! when the free is ordered before the allocation; cuda-samples graphMemoryFootprint
//! counts on it, one 64 MiB chunk for two 64 MiB nodes in a chain): the lowest such.
//!
//! Physical memory: the device's graph allocator holds chunks, each a physical allocation
//! of the model of a multiple of [`CHUNK`] (H200: 32 MiB behind a 1 MiB allocation). When
//! cuGraphLaunch is called, each region it allocates in gets a chunk mapped at its base
//! covering its allocations, with their access (mapped then, so that the stream work
//! issued after the launch finds the memory): the one mapped there already, else one that
//! may be shared, else a new one. A chunk may be mapped behind several regions at once
//! (the programming guide: CUDA aliases physical memory across graphs whose allocations'
//! lifetimes do not overlap): one whose regions have no live allocation, and whose
//! launches are done or queued before this one on the same stream (H200: two graphs
//! launched one after the other into a stream take one chunk between them). A chunk stays
//! where it is after the allocations are freed, so a relaunch finds it;
//! cuDeviceGraphMemTrim gives back the chunks whose regions have no live allocation.
//!
//! Lifetimes are kept in API order: cuGraphLaunch makes its allocations live and frees
//! what its free nodes free, which is when its errors are due (a launch while an
//! allocation of its graph is still live is CUDA_ERROR_INVALID_VALUE, cuda.h).
//!
//! Counting: the H200 reports USED equal to RESERVED at every step recorded (a chunk
//! counts as used while the allocator holds it, freed or not, until a trim): RESERVED is
//! every chunk held, and so is USED; the highs are their maxima since their last reset.

use super::error::*;
use super::graphs::GraphId;
use super::stream_queues::QueueKey;
use super::vmm::{AccessTable, AllocationProp, ReservationKind, Vmm};
use super::Driver;
use cumock_abi::consts::*;
use cumock_abi::{CUmemAccessDesc, CUmemLocation, CUmemPoolProps};
use std::collections::{BTreeMap, HashMap};

/// The physical memory behind a region is a multiple of this (H200: 32 MiB for a graph
/// allocating 1 MiB, 64 MiB for two live 4 MiB ones in two graphs).
pub const CHUNK: u64 = 32 << 20;

/// Allocation nodes of a graph take addresses this far apart at least (not recorded: the
/// stream-ordered pools' 512 bytes; the H200 puts a node right after a 1 MiB one off the
/// granularity).
pub const ALIGNMENT: u64 = 512;

/// The address space a graph takes at a time for its allocation nodes.
const REGION: u64 = 2 << 30;

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

/// A graph's address space for its allocation nodes on one device.
#[derive(Debug)]
struct Region {
    device: usize,
    size: u64,
    /// Where the next node's address is, from the base.
    next: u64,
    /// The graph and the executable graphs made from it that hold its nodes.
    holders: usize,
    /// The queues of the launches queued or running that allocate in it, one entry a
    /// launch.
    in_flight: Vec<QueueKey>,
    /// The chunk mapped at its base, by its physical handle.
    chunk: Option<u64>,
    /// Who may access it: the device, and what the nodes' descriptors grant.
    access: AccessTable,
}

/// The address an allocation node took, and what became of it.
#[derive(Debug)]
struct Allocation {
    /// Its region's base.
    region: u64,
    /// The largest size a node at it asked for.
    requested: u64,
    /// The span it takes in its region (`requested` aligned up, as first reserved).
    span: u64,
    /// The allocation nodes of its graph at this address: more than one when a node
    /// took it again after the free of the one before.
    nodes: u32,
    /// The first graph holding a free node for it (its own, or another: then graphs
    /// other than its own may each hold one, `also_freed_in`).
    freed_in: Option<GraphId>,
    /// How many free nodes of that graph free it (up to `nodes`).
    frees: u32,
    /// Further graphs, neither its own nor `freed_in`, each holding a free node for it.
    also_freed_in: Vec<GraphId>,
    /// The live graphs other than its own holding a free node for it: while there is
    /// one, the allocation outlives its graph and keeps its address (random_graphs
    /// session 18: the H200 gave no new node such an address, seeds 13, 29, 39, and took
    /// a further free node for it, seed 13 line 458).
    freeing: Vec<GraphId>,
    /// The graph of its allocation node.
    graph: GraphId,
    /// That graph was instantiated: the allocation may outlive a launch, and the H200
    /// takes a free node for it only in another graph from then on (probe graph_memory,
    /// free-node-after-instantiate).
    instantiated: bool,
    /// Allocated by a launch and not freed since.
    live: bool,
}

#[derive(Debug)]
struct Chunk {
    size: u64,
    /// The regions it is mapped at (one physical chunk behind several graphs' addresses
    /// whose lifetimes do not overlap, as the programming guide says CUDA aliases them).
    mapped_at: Vec<u64>,
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
    regions: BTreeMap<u64, Region>,
    allocations: BTreeMap<u64, Allocation>,
    /// Each graph's regions, by device: the one its next node goes to.
    current: HashMap<(GraphId, usize), u64>,
    devices: Vec<DeviceMemory>,
}

impl GraphMemory {
    pub fn new(devices: usize) -> Self {
        Self {
            devices: (0..devices).map(|_| DeviceMemory::default()).collect(),
            ..Default::default()
        }
    }

    pub fn is_allocation(&self, ptr: u64) -> bool {
        self.allocations.contains_key(&ptr)
    }

    fn reserved(&self, device: usize) -> u64 {
        self.devices[device].chunks.values().map(|c| c.size).sum()
    }

    fn note_highs(&mut self, device: usize) {
        let reserved = self.reserved(device);
        let d = &mut self.devices[device];
        d.used_high = d.used_high.max(reserved);
        d.reserved_high = d.reserved_high.max(reserved);
    }

    fn region_has_live(&self, base: u64) -> bool {
        self.allocations
            .values()
            .any(|a| a.region == base && a.live)
    }

    /// A region stays while an allocation in it is live or another live graph frees one.
    fn region_in_use(&self, base: u64) -> bool {
        self.allocations
            .values()
            .any(|a| a.region == base && (a.live || !a.freeing.is_empty()))
    }

    /// A new allocation node's address, in its graph's region on the device: one that
    /// `freed` (the addresses the free nodes before it free, with how many free nodes
    /// free each: `GraphBody::frees_before`) frees of every node holding it, if its
    /// span is large enough; else the next in the region.
    pub fn reserve(
        &mut self,
        vmm: &mut Vmm,
        graph: GraphId,
        node: &AllocNode,
        granularity: u64,
        freed: &HashMap<u64, u32>,
    ) -> CuResult<u64> {
        let overflow = || out_of_memory(format!("{} bytes overflow", node.bytesize));
        let len = node
            .bytesize
            .checked_next_multiple_of(ALIGNMENT)
            .ok_or_else(overflow)?;
        let reusable = freed
            .iter()
            .filter(|(p, frees)| {
                self.allocations.get(p).is_some_and(|a| {
                    a.graph == graph
                        && a.freed_in == Some(graph)
                        && **frees == a.nodes
                        && a.span >= len
                        && self.regions[&a.region].device == node.device
                })
            })
            .map(|(p, _)| *p)
            .min();
        if let Some(p) = reusable {
            let a = self.allocations.get_mut(&p).expect("found above");
            a.nodes += 1;
            a.requested = a.requested.max(node.bytesize);
            let r = self.regions.get_mut(&a.region).expect("held");
            for d in &node.access {
                r.access.set(d.location.id as usize, d.flags as u8);
            }
            return Ok(p);
        }
        let fits = |r: &Region| r.next.checked_add(len).is_some_and(|end| end <= r.size);
        let base = match self.current.get(&(graph, node.device)) {
            Some(b) if fits(&self.regions[b]) => *b,
            _ => {
                let size = len
                    .checked_next_multiple_of(CHUNK)
                    .and_then(|n| n.checked_next_multiple_of(granularity))
                    .ok_or_else(overflow)?
                    .max(REGION);
                let base = vmm.address_reserve(size, 0, 0, 0, granularity)?;
                vmm.set_reservation_kind(base, ReservationKind::Graph);
                let mut access = AccessTable::none(0);
                access.set(node.device, CU_MEM_ACCESS_FLAGS_PROT_READWRITE as u8);
                self.regions.insert(
                    base,
                    Region {
                        device: node.device,
                        size,
                        next: 0,
                        holders: 1,
                        in_flight: Vec::new(),
                        chunk: None,
                        access,
                    },
                );
                self.current.insert((graph, node.device), base);
                base
            }
        };
        let r = self.regions.get_mut(&base).expect("found or made");
        for a in &node.access {
            r.access.set(a.location.id as usize, a.flags as u8);
        }
        let dptr = base + r.next;
        r.next += len;
        self.allocations.insert(
            dptr,
            Allocation {
                region: base,
                requested: node.bytesize,
                span: len,
                nodes: 1,
                freed_in: None,
                frees: 0,
                also_freed_in: Vec::new(),
                freeing: Vec::new(),
                graph,
                instantiated: false,
                live: false,
            },
        );
        Ok(dptr)
    }

    /// A free node for `ptr` in `graph`: cuda.h: INVALID_VALUE for an address no
    /// allocation node returned, for a second free in the same graph, and for a free in
    /// one graph where another frees it already, when either is the allocation's own
    /// graph. Graphs other than its own may each free it (random_graphs on the H200: 84
    /// such free nodes taken, up to five for one address, e.g. seed 4 lines 82, 84, 154).
    pub fn add_free(&mut self, graph: GraphId, ptr: u64) -> CuResult<()> {
        let a = self.allocations.get_mut(&ptr).ok_or_else(|| {
            invalid(format!(
                "{ptr:#x} was not returned by a graph allocation node"
            ))
        })?;
        if a.graph == graph && a.instantiated && a.freed_in.is_none() {
            return Err(invalid(format!(
                "{ptr:#x}: its graph was instantiated without freeing it, so only another \
                 graph may free it now (as the H200 answers)"
            )));
        }
        match a.freed_in {
            // A node that took the address again is freed by a free node of its own,
            // unless another graph frees the address already (random_graphs session 18,
            // seed 30 line 202: a1 freed in its graph at line 55, taken again at line 132,
            // freed in another graph at line 156; a second free in its own graph refused).
            Some(g) if g == graph && a.frees < a.nodes && a.also_freed_in.is_empty() => {
                a.frees += 1;
                Ok(())
            }
            Some(g) if g == graph => {
                Err(invalid(format!("{ptr:#x} is freed in this graph already")))
            }
            // Its own graph's free keeps others out only while it frees every node
            // holding the address: one that took the address again after that free and
            // is not freed in its graph may be freed in another (random_graphs session
            // 18, seed 30 line 156: a1 freed at line 55, taken again at line 132).
            Some(g) if (g == a.graph && a.frees >= a.nodes) || graph == a.graph => {
                Err(invalid(format!(
                "{ptr:#x} is freed in graph {g:#x}: its own graph's free keeps others out, and \
                 another's keeps its own out"
            )))
            }
            Some(_) if a.also_freed_in.contains(&graph) => {
                Err(invalid(format!("{ptr:#x} is freed in this graph already")))
            }
            Some(_) => {
                a.also_freed_in.push(graph);
                a.freeing.push(graph);
                Ok(())
            }
            None => {
                a.freed_in = Some(graph);
                a.frees = 1;
                if graph != a.graph {
                    a.freeing.push(graph);
                }
                Ok(())
            }
        }
    }

    /// The regions holding these allocations.
    fn regions_of(&self, ptrs: &[u64]) -> Vec<u64> {
        let mut v: Vec<u64> = ptrs
            .iter()
            .filter_map(|p| self.allocations.get(p).map(|a| a.region))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// An executable graph holds these allocation nodes too.
    pub fn hold(&mut self, ptrs: &[u64]) {
        for p in ptrs {
            if let Some(a) = self.allocations.get_mut(p) {
                a.instantiated = true;
            }
        }
        for r in self.regions_of(ptrs) {
            self.regions.get_mut(&r).expect("found").holders += 1;
        }
    }

    /// A graph or an executable graph holding these allocation nodes is gone; `graph`:
    /// the graph destroyed, whose free nodes go with it. Address space nothing holds
    /// any more goes back (the caller made sure no queued work still uses it).
    pub fn release(&mut self, vmm: &mut Vmm, ptrs: &[u64], graph: Option<GraphId>) {
        let mut regions = self.regions_of(ptrs);
        if let Some(g) = graph {
            // Another graph's free outlives that graph: the H200 still refused the
            // allocation's own graph a free node after it was destroyed (random_graphs:
            // 5 of 5, e.g. seed 18 line 299).
            for a in self.allocations.values_mut() {
                if a.freed_in == Some(g) && a.graph == g {
                    a.freed_in = None;
                    a.frees = 0;
                }
            }
            // An allocation node no executable graph was ever made with goes with its
            // graph, though the region stays for the others: the H200 refused a free node
            // in another graph for 12 of 13 such addresses (random_graphs session 18, e.g.
            // seed 12 line 115, seed 5 line 123), where the mock had taken it.
            self.allocations
                .retain(|_, a| a.graph != g || a.instantiated || a.live || !a.freeing.is_empty());
            self.current.retain(|(cg, _), _| *cg != g);
            // Its free nodes of other graphs' allocations go with it.
            let mut unfreed = Vec::new();
            for a in self.allocations.values_mut() {
                if a.freeing.contains(&g) {
                    a.freeing.retain(|f| *f != g);
                    unfreed.push(a.region);
                }
            }
            for r in &regions {
                self.regions.get_mut(r).expect("found").holders -= 1;
            }
            regions.extend(unfreed);
            regions.sort_unstable();
            regions.dedup();
            for r in regions {
                self.forget_if_unused(vmm, r);
            }
            return;
        }
        for r in regions {
            self.regions.get_mut(&r).expect("found").holders -= 1;
            self.forget_if_unused(vmm, r);
        }
    }

    /// Would dropping these holders give address space back (so that queued work must be
    /// drained first)?
    pub fn release_frees_addresses(&self, ptrs: &[u64]) -> bool {
        self.regions_of(ptrs)
            .into_iter()
            .any(|r| self.regions[&r].holders == 1 && !self.region_in_use(r))
    }

    /// Gives a region's address space back once nothing holds its nodes and none of its
    /// allocations is live; its chunk stays with the device's allocator, unmapped.
    fn forget_if_unused(&mut self, vmm: &mut Vmm, base: u64) {
        let Some(r) = self.regions.get(&base) else {
            return;
        };
        if r.holders > 0 || self.region_in_use(base) {
            return;
        }
        let r = self.regions.remove(&base).expect("found");
        if let Some(c) = r.chunk {
            vmm.remove_mapping(base);
            if let Some(chunk) = self.devices[r.device].chunks.get_mut(&c) {
                chunk.mapped_at.retain(|at| *at != base);
            }
        }
        self.allocations.retain(|_, a| a.region != base);
        self.current.retain(|_, b| *b != base);
        vmm.remove_reservation(base);
    }

    /// Checks that a launch may allocate and free as `ops` say (in the graph's order),
    /// `auto_free`: the executable graph frees its unfreed allocations first.
    pub fn check_launch(&self, ops: &[(bool, u64)], auto_free: bool) -> CuResult<()> {
        let allocs: Vec<u64> = ops.iter().filter(|o| o.0).map(|o| o.1).collect();
        for p in &allocs {
            let a = self
                .allocations
                .get(p)
                .ok_or_else(|| invalid(format!("graph allocation {p:#x} is gone")))?;
            if a.live && !auto_free {
                // cuda.h (cuGraphLaunch), and the H200: CUDA_ERROR_INVALID_VALUE.
                return Err(invalid(format!(
                    "the graph's allocation {p:#x} from an earlier launch is still live: free \
                     it (cuMemFreeAsync, cuMemFree, a free node) or instantiate with \
                     CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH"
                )));
            }
        }
        for (alloc, p) in ops {
            let live = self.allocations.get(p).is_some_and(|a| a.live);
            if !alloc && !live && !allocs.contains(p) {
                // Observed: a graph freeing an allocation not allocated yet does not launch.
                return Err(invalid(format!(
                    "the graph frees {p:#x}, which is not allocated (freed already?)"
                )));
            }
        }
        Ok(())
    }

    /// A launch (checked by `check_launch`) on `queue` reaches its allocation and free
    /// nodes, in API order: chunks are mapped behind the regions it allocates in now, so
    /// that the stream work issued after it finds its memory; returns the regions, busy
    /// until its work ends ([`GraphMemory::landed`]).
    pub fn launch(
        &mut self,
        vmm: &mut Vmm,
        ops: &[(bool, u64)],
        queue: QueueKey,
        free_bytes: impl Fn(&Vmm, usize) -> u64,
        granularity: impl Fn(usize) -> u64,
    ) -> CuResult<Vec<u64>> {
        let allocs: Vec<u64> = ops.iter().filter(|o| o.0).map(|o| o.1).collect();
        let regions = self.regions_of(&allocs);
        for &r in &regions {
            self.bind(vmm, r, queue, &free_bytes, &granularity)?;
        }
        for &(alloc, p) in ops {
            if let Some(a) = self.allocations.get_mut(&p) {
                a.live = alloc;
            }
        }
        for r in &regions {
            self.regions
                .get_mut(r)
                .expect("found")
                .in_flight
                .push(queue);
        }
        Ok(regions)
    }

    /// A launch on `queue` is done with its regions.
    pub fn landed(&mut self, regions: &[u64], queue: QueueKey) {
        for r in regions {
            if let Some(r) = self.regions.get_mut(r) {
                if let Some(i) = r.in_flight.iter().position(|q| *q == queue) {
                    r.in_flight.remove(i);
                }
            }
        }
    }

    /// Whether a chunk mapped at `regions` may be mapped at another region for a launch
    /// on `queue` too: none of their allocations is live, and the work that uses them is
    /// done or runs before it on the same queue.
    fn shareable(&self, regions: &[u64], queue: QueueKey) -> bool {
        regions.iter().all(|r| {
            !self.region_has_live(*r)
                && self
                    .regions
                    .get(r)
                    .is_none_or(|o| o.in_flight.iter().all(|q| *q == queue))
        })
    }

    /// Maps a chunk at the region at `base` unless one large enough is there: one
    /// shareable (unmapped, or mapped only at regions it may alias), else a new one.
    fn bind(
        &mut self,
        vmm: &mut Vmm,
        base: u64,
        queue: QueueKey,
        free_bytes: &impl Fn(&Vmm, usize) -> u64,
        granularity: &impl Fn(usize) -> u64,
    ) -> CuResult<()> {
        let Some(r) = self.regions.get(&base) else {
            return Ok(());
        };
        let (device, g, access, region_size) = (r.device, granularity(r.device), r.access, r.size);
        let extent = r
            .next
            .checked_next_multiple_of(CHUNK)
            .and_then(|n| n.checked_next_multiple_of(g))
            .unwrap_or(region_size)
            .min(region_size);
        if let Some(c) = r.chunk {
            if self.devices[device].chunks[&c].size >= extent {
                vmm.set_mapping_access(base, access);
                return Ok(());
            }
            // Nodes were added since: a larger chunk replaces it here.
            vmm.remove_mapping(base);
            let chunk = self.devices[device].chunks.get_mut(&c).expect("held");
            chunk.mapped_at.retain(|at| *at != base);
            self.regions.get_mut(&base).expect("found").chunk = None;
        }
        let shared = self.devices[device]
            .chunks
            .iter()
            .filter(|(_, c)| c.size >= extent && c.size <= region_size)
            .filter(|(_, c)| self.shareable(&c.mapped_at, queue))
            .min_by_key(|(_, c)| (!c.mapped_at.is_empty(), c.size))
            .map(|(h, _)| *h);
        let handle = match shared {
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
                let h = vmm.create(extent, prop, 0, g, free_bytes(vmm, device))?;
                self.devices[device].chunks.insert(
                    h,
                    Chunk {
                        size: extent,
                        mapped_at: Vec::new(),
                    },
                );
                h
            }
        };
        let size = self.devices[device].chunks[&handle].size;
        // cuMemMap maps only into the program's own reservations: the region is one for
        // the length of the call, as a pool maps its chunks.
        vmm.set_reservation_kind(base, ReservationKind::Vmm);
        let mapped = vmm.map(base, size, 0, handle, 0, g);
        vmm.set_reservation_kind(base, ReservationKind::Graph);
        mapped?;
        vmm.set_mapping_access(base, access);
        let chunk = self.devices[device].chunks.get_mut(&handle).expect("held");
        chunk.mapped_at.push(base);
        self.regions.get_mut(&base).expect("found").chunk = Some(handle);
        self.note_highs(device);
        Ok(())
    }

    /// cuMemFree or cuMemFreeAsync of a graph allocation.
    pub fn free_outside(&mut self, vmm: &mut Vmm, ptr: u64) -> CuResult<()> {
        let a = self
            .allocations
            .get_mut(&ptr)
            .ok_or_else(|| invalid(format!("{ptr:#x} is no graph allocation")))?;
        if !a.live {
            // Observed: a second free, or a free before any launch, is INVALID_VALUE.
            return Err(invalid(format!(
                "graph allocation {ptr:#x} is not allocated (no launch since its last free)"
            )));
        }
        a.live = false;
        let region = a.region;
        self.forget_if_unused(vmm, region);
        Ok(())
    }

    /// cuDeviceGraphMemTrim: chunks of regions without a live allocation, and those no
    /// region holds, go back to the model.
    pub fn trim(&mut self, vmm: &mut Vmm, device: usize) {
        let idle: Vec<(u64, Vec<u64>)> = self.devices[device]
            .chunks
            .iter()
            .filter(|(_, c)| c.mapped_at.iter().all(|r| !self.region_has_live(*r)))
            .map(|(h, c)| (*h, c.mapped_at.clone()))
            .collect();
        for (h, at) in idle {
            self.devices[device].chunks.remove(&h);
            for base in at {
                vmm.remove_mapping(base);
                if let Some(r) = self.regions.get_mut(&base) {
                    r.chunk = None;
                }
            }
            let _ = vmm.release(h);
        }
    }

    pub fn attribute(&self, device: usize, attr: i32) -> CuResult<u64> {
        let d = &self.devices[device];
        match attr {
            attribute::USED_MEM_CURRENT | attribute::RESERVED_MEM_CURRENT => {
                Ok(self.reserved(device))
            }
            attribute::USED_MEM_HIGH => Ok(d.used_high),
            attribute::RESERVED_MEM_HIGH => Ok(d.reserved_high),
            _ => Err(invalid(format!("{attr} is not a CUgraphMem_attribute"))),
        }
    }

    /// cuDeviceSetGraphMemAttribute: cuda.h (and the H200): only the highs, only to 0.
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

    /// The graph allocation holding `addr`, while memory is mapped behind it (observed:
    /// cuMemGetAddressRange finds it after a launch, not before): its address and size.
    pub fn range_at(&self, addr: u64) -> Option<(u64, u64)> {
        let (p, a) = self.allocations.range(..=addr).next_back()?;
        let mapped = self
            .regions
            .get(&a.region)
            .is_some_and(|r| r.chunk.is_some());
        (addr - p < a.requested && mapped).then_some((*p, a.requested))
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
        // CU_MEM_ALLOCATION_TYPE_MANAGED at a device is taken and gives device graph
        // memory, as on the H200 (probe graph_memory, host-and-managed: memory type
        // DEVICE, not managed, counted in the attributes); host locations are refused as
        // the H200 refuses them (cuda.core's GraphMemoryType HOST and MANAGED without a
        // device meet the same answers).
        let managed = node.alloc_type == CU_MEM_ALLOCATION_TYPE_MANAGED;
        if node.alloc_type != CU_MEM_ALLOCATION_TYPE_PINNED && !managed {
            return Err(invalid(format!(
                "poolProps.allocType {} is neither CU_MEM_ALLOCATION_TYPE_PINNED nor MANAGED",
                node.alloc_type
            )));
        }
        match node.location.type_ {
            CU_MEM_LOCATION_TYPE_DEVICE => {}
            CU_MEM_LOCATION_TYPE_HOST | CU_MEM_LOCATION_TYPE_HOST_NUMA => {
                return Err(not_supported(
                    "graph allocations of host memory: the H200 (driver 580) refuses them too",
                ))
            }
            CU_MEM_LOCATION_TYPE_NONE if managed => {
                return Err(not_supported(
                    "a managed graph allocation without a device location: the H200 \
                     (driver 580) refuses it too",
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
