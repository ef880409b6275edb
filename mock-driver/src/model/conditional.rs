//! Conditional graph nodes (cuda.h: cuGraphConditionalHandleCreate, cuGraphAddNode with
//! CU_GRAPH_NODE_TYPE_CONDITIONAL): IF (and its ELSE), WHILE and SWITCH over body graphs
//! the driver makes when the node is added and the program fills.
//!
//! A handle is the device address of a 4-byte word, the conditional's value: kernels set
//! it with the runtime's device-side `cudaGraphSetConditional`, which nvcc compiles to a
//! call the kernel executor makes a store to that address (ptx `Op::SetConditional`),
//! and the graph's worker reads it when the node is reached. The words live in pages of
//! device memory of the handle's device (one granule at a time, every device may write
//! them), kept for the life of the process. A handle created with
//! CU_GRAPH_COND_ASSIGN_DEFAULT gets its default written at the start of each execution
//! of the graph it was created for (its body, for a handle of a body graph).

use super::error::*;
use super::graphs::GraphId;
use super::vmm::{AccessTable, AllocationProp, ReservationKind, Vmm};
use super::Driver;
use cumock_abi::consts::*;
use std::collections::HashMap;

/// `CU_GRAPH_COND_ASSIGN_DEFAULT`.
pub const ASSIGN_DEFAULT: u32 = 1;

/// `CUgraphConditionalNodeType`.
pub mod kind {
    pub const IF: i32 = 0;
    pub const WHILE: i32 = 1;
    pub const SWITCH: i32 = 2;
}

#[derive(Clone, Copy, Debug)]
pub struct Handle {
    /// The graph the handle was created for.
    pub graph: GraphId,
    pub default: u32,
    pub assign_default: bool,
    /// A conditional node uses it (observed: a second node may not).
    pub used: bool,
}

/// A conditional node: its handle (a word's address), its type, its body graphs.
#[derive(Clone, Debug, PartialEq)]
pub struct CondNode {
    pub handle: u64,
    pub kind: i32,
    pub bodies: Vec<GraphId>,
}

#[derive(Debug, Default)]
pub struct Conditionals {
    handles: HashMap<u64, Handle>,
    /// Per device: the next free word and the end of its page.
    pages: HashMap<usize, (u64, u64)>,
}

impl Conditionals {
    pub fn handle(&self, h: u64) -> Option<Handle> {
        self.handles.get(&h).copied()
    }

    /// A handle created for one of `graphs` that no conditional node uses.
    pub fn unused_handle(&self, graphs: &[GraphId]) -> Option<u64> {
        let mut v: Vec<u64> = self
            .handles
            .iter()
            .filter(|(_, h)| !h.used && graphs.contains(&h.graph))
            .map(|(w, _)| *w)
            .collect();
        v.sort_unstable();
        v.first().copied()
    }

    /// The handles created for `graph` that assign a default: (word, value).
    pub fn defaults_of(&self, graph: GraphId) -> Vec<(u64, u32)> {
        let mut v: Vec<(u64, u32)> = self
            .handles
            .iter()
            .filter(|(_, h)| h.graph == graph && h.assign_default)
            .map(|(w, h)| (*w, h.default))
            .collect();
        v.sort_unstable();
        v
    }

    /// A new handle's word on `device`, on a new page when the last one is full.
    fn word(
        &mut self,
        vmm: &mut Vmm,
        (device, devices): (usize, usize),
        granularity: u64,
        free: u64,
    ) -> CuResult<u64> {
        let (next, end) = self.pages.get(&device).copied().unwrap_or((0, 0));
        if next + 4 <= end {
            self.pages.insert(device, (next + 4, end));
            return Ok(next);
        }
        let base = vmm.address_reserve(granularity, 0, 0, 0, granularity)?;
        let prop = AllocationProp {
            location_type: CU_MEM_LOCATION_TYPE_DEVICE,
            location_id: device as i32,
            handle_types: 0,
            compression: CU_MEM_ALLOCATION_COMP_NONE,
            gpu_direct_rdma: 0,
            usage: 0,
        };
        let mapped = vmm
            .create(granularity, prop, 0, granularity, free)
            .and_then(|h| {
                let r = vmm.map(base, granularity, 0, h, 0, granularity);
                vmm.release(h).expect("a handle just made");
                r
            });
        if let Err(e) = mapped {
            vmm.remove_reservation(base);
            return Err(e);
        }
        // The words are the driver's: not the program's to unmap or free.
        vmm.set_reservation_kind(base, ReservationKind::Graph);
        vmm.set_mapping_access(base, AccessTable::all(devices));
        self.pages.insert(device, (base + 4, base + granularity));
        Ok(base)
    }
}

impl Driver {
    /// cuGraphConditionalHandleCreate: `device`, the context's.
    pub fn conditional_handle_create(
        &self,
        graph: GraphId,
        device: usize,
        default: u32,
        flags: u32,
    ) -> CuResult<u64> {
        if flags & !ASSIGN_DEFAULT != 0 {
            return Err(invalid(format!(
                "flags {flags:#x}: only CU_GRAPH_COND_ASSIGN_DEFAULT is defined"
            )));
        }
        let g = self.profile.devices[device].granularity_minimum;
        let free = self.profile.devices[device]
            .free_at_start
            .saturating_sub(self.state.lock().vmm.used(device));
        let mut st = self.state.lock();
        let st = &mut *st;
        st.graphs.graph(graph)?;
        let devices = self.device_count();
        let word = st
            .conditionals
            .word(&mut st.vmm, (device, devices), g, free)?;
        st.conditionals.handles.insert(
            word,
            Handle {
                graph,
                default,
                assign_default: flags & ASSIGN_DEFAULT != 0,
                used: false,
            },
        );
        Ok(word)
    }
}

impl Driver {
    /// A conditional node (cuGraphAddNode): its body graphs are made here, empty, for
    /// the program to fill; returns the node and its parameters, whose `bodies` is the
    /// array cuda.h's `phGraph_out` points to (the node owns it: it lives in the graph).
    pub fn graph_add_conditional(
        &self,
        g: GraphId,
        deps: &[super::graphs::NodeId],
        handle: u64,
        kind: i32,
        size: u32,
    ) -> CuResult<(super::graphs::NodeId, std::sync::Arc<CondNode>)> {
        // cuda.h (CUDA_CONDITIONAL_NODE_PARAMS::size): 1 for WHILE, 1 or 2 for IF, any
        // number above 0 for SWITCH.
        let sizes_ok = match kind {
            kind::IF => (1..=2).contains(&size),
            kind::WHILE => size == 1,
            kind::SWITCH => size >= 1,
            _ => {
                return Err(invalid(format!(
                    "{kind} is not a CUgraphConditionalNodeType"
                )))
            }
        };
        if !sizes_ok {
            return Err(invalid(format!(
                "size {size} does not fit a conditional node of type {kind}"
            )));
        }
        let bodies = {
            let mut st = self.state.lock();
            match st.conditionals.handle(handle) {
                None => {
                    return Err(invalid(format!(
                        "{handle:#x} is not a conditional handle (cuGraphConditionalHandleCreate)"
                    )))
                }
                // Observed: CUDA_ERROR_INVALID_VALUE.
                Some(h) if h.used => {
                    return Err(invalid(format!(
                        "conditional handle {handle:#x} belongs to another conditional node"
                    )))
                }
                Some(_) => {}
            }
            st.graphs.graph(g)?;
            let bodies: Vec<GraphId> = (0..size).map(|_| st.graphs.create()).collect();
            st.graphs.bodies.extend(bodies.iter().copied());
            bodies
        };
        let node = std::sync::Arc::new(CondNode {
            handle,
            kind,
            bodies: bodies.clone(),
        });
        match self.graph_add_node(g, deps, super::graphs::NodeOp::Conditional(node.clone())) {
            Ok(n) => {
                if let Some(h) = self.state.lock().conditionals.handles.get_mut(&handle) {
                    h.used = true;
                }
                Ok((n, node))
            }
            Err(e) => {
                let mut st = self.state.lock();
                for b in bodies {
                    st.graphs.bodies.remove(&b);
                    let _ = st.graphs.destroy(b);
                }
                Err(e)
            }
        }
    }
}
