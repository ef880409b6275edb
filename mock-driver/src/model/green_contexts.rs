//! Green contexts (cuda.h's group CUDA_GREEN_CONTEXTS): a device's SMs as a resource,
//! split into partitions, a descriptor of partitions, and a green context made of one: a
//! context restricted to those SMs. The mock runs a green context's kernels as any
//! context's (its executor has no SMs to restrict); what a green context changes is what
//! the calls report: its resources, its streams and events, its id.
//!
//! The numbers and codes cuda.h leaves open follow its documentation and await the H200's
//! recording (probe green_contexts): the minimum partition and alignment (cuda.h's
//! guideline per architecture), how a split rounds, and the codes of the refusals.

use super::error::*;
use super::ids::{ContextId, GreenCtxId, ResourceDescId, StreamId};
use super::Driver;
use cumock_abi::result::{
    CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, CUDA_ERROR_INVALID_RESOURCE_TYPE,
};
use cumock_abi::{CUdevResource, CUdevSmResource};
use rustc_hash::FxHashMap as HashMap;
use std::collections::HashSet;

const GREEN_TAG: u64 = 0x0067_0000_0000_0000;
const DESC_TAG: u64 = 0x00de_0000_0000_0000;

/// cuda.h's CUdevResourceType: CU_DEV_RESOURCE_TYPE_SM, the only type of 13.0.
pub const RESOURCE_TYPE_SM: i32 = 1;
/// CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING and _MAX_POTENTIAL_CLUSTER_SIZE.
pub const SPLIT_IGNORE_SM_COSCHEDULING: u32 = 0x1;
pub const SPLIT_MAX_POTENTIAL_CLUSTER_SIZE: u32 = 0x2;
/// CU_GREEN_CTX_DEFAULT_STREAM: "Required" (cuda.h).
pub const GREEN_CTX_DEFAULT_STREAM: u32 = 0x1;
/// CU_STREAM_NON_BLOCKING: cuGreenCtxStreamCreate's flags "must" hold it (cuda.h).
const STREAM_NON_BLOCKING: u32 = 0x1;

/// An SM resource's numbers (`CUdevSmResource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmPartition {
    pub sm_count: u32,
    /// The fewest SMs a split of it gives a group.
    pub min_partition: u32,
    /// A group's SM count is a multiple of it.
    pub alignment: u32,
}

impl SmPartition {
    /// The whole device's SMs. cuda.h's guideline for the partitions' minimum and
    /// granularity by compute capability ("On Compute Architecture 9.0+: the minimum count
    /// is 8 SMs and must be a multiple of 8"; 8.x: 4 and 2; 6.x and 7.x: 2 and 2), awaiting
    /// the H200's own numbers (probe green_contexts, section device-resource).
    pub fn whole_device(sm_count: u32, cc_major: i32) -> Self {
        let (min_partition, alignment) = match cc_major {
            ..=7 => (2, 2),
            8 => (4, 2),
            _ => (8, 8),
        };
        Self {
            sm_count,
            min_partition,
            alignment,
        }
    }

    fn as_c(self) -> CUdevSmResource {
        CUdevSmResource {
            sm_count: self.sm_count,
            min_sm_partition_size: self.min_partition,
            sm_coscheduled_alignment: self.alignment,
        }
    }
}

/// Where a resource came from, kept in the resource's internal bytes (the driver's own,
/// which the program copies with the struct but does not read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A device's, a context's or a green context's whole SMs (cu*GetDevResource).
    Whole,
    /// A group of split number `split` (cuDevSmResourceSplitByCount's `result`).
    Group { split: u32 },
    /// What split number `split` left (its `remaining`).
    Remaining { split: u32 },
}

impl Origin {
    fn split(self) -> Option<u32> {
        match self {
            Origin::Whole => None,
            Origin::Group { split } | Origin::Remaining { split } => Some(split),
        }
    }
}

/// An SM resource as the calls hand it out: its device, numbers and origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resource {
    pub device: usize,
    pub sm: SmPartition,
    pub origin: Origin,
}

/// The internal bytes' first word: a resource this mock wrote.
const MARK: [u8; 4] = *b"cmk1";

impl Resource {
    /// The C struct: type SM, the numbers in `sm`, where it came from in the driver's
    /// internal bytes.
    pub fn to_c(self) -> CUdevResource {
        let mut internal = [0u8; 92];
        let (kind, split) = match self.origin {
            Origin::Whole => (0u32, 0u32),
            Origin::Group { split } => (1, split),
            Origin::Remaining { split } => (2, split),
        };
        internal[0..4].copy_from_slice(&MARK);
        internal[4..8].copy_from_slice(&(self.device as u32).to_le_bytes());
        internal[8..12].copy_from_slice(&kind.to_le_bytes());
        internal[12..16].copy_from_slice(&split.to_le_bytes());
        CUdevResource {
            type_: RESOURCE_TYPE_SM,
            internal_padding: internal,
            sm: self.sm.as_c(),
            oversize: [0; 36],
        }
    }

    /// A resource the program passes back: of type SM and written by the driver.
    pub fn from_c(c: &CUdevResource) -> CuResult<Self> {
        if c.type_ != RESOURCE_TYPE_SM {
            return Err(CuError::new(
                CUDA_ERROR_INVALID_RESOURCE_TYPE,
                format!(
                    "resource type {} is not CU_DEV_RESOURCE_TYPE_SM (1), the only type",
                    c.type_
                ),
            ));
        }
        let word = |i: usize| {
            u32::from_le_bytes(c.internal_padding[i..i + 4].try_into().expect("4 bytes"))
        };
        if c.internal_padding[0..4] != MARK {
            return Err(CuError::new(
                CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
                "the resource was not written by cuDeviceGetDevResource, cuCtxGetDevResource, \
                 cuGreenCtxGetDevResource or a split (cuda.h: not to be modified outside them)",
            ));
        }
        let origin = match (word(8), word(12)) {
            (0, _) => Origin::Whole,
            (1, split) => Origin::Group { split },
            (_, split) => Origin::Remaining { split },
        };
        Ok(Self {
            device: word(4) as usize,
            sm: SmPartition {
                sm_count: c.sm.sm_count,
                min_partition: c.sm.min_sm_partition_size,
                alignment: c.sm.sm_coscheduled_alignment,
            },
            origin,
        })
    }
}

/// What cuDevSmResourceSplitByCount makes of a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// As many groups as fit, or as asked where fewer: each of `group` SMs.
    pub groups: Vec<Resource>,
    /// The SMs left (none: an SM resource of 0).
    pub remaining: Resource,
    /// How many groups fit, whatever was asked (the count query's answer).
    pub fit: u32,
}

/// Splits `input` into groups of at least `min_count` SMs (cuda.h: rounded up to the
/// minimum partition and to the alignment), `wanted` of them at most (None: the count
/// query). `split` numbers this split, for the descriptor's check that several resources
/// come from one split.
pub fn split_sm(
    input: &Resource,
    wanted: Option<u32>,
    flags: u32,
    min_count: u32,
    split: u32,
) -> CuResult<Split> {
    if flags & !(SPLIT_IGNORE_SM_COSCHEDULING | SPLIT_MAX_POTENTIAL_CLUSTER_SIZE) != 0 {
        return Err(invalid(format!(
            "useFlags {flags:#x} are not CU_DEV_SM_RESOURCE_SPLIT_*"
        )));
    }
    // cuda.h: "the output results cannot be split again without first creating a
    // descriptor and a green context with that descriptor" (the code awaits the H200).
    if input.origin != Origin::Whole {
        return Err(CuError::new(
            CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
            "a split's result is split again only through a green context made of it \
             (cuGreenCtxGetDevResource)",
        ));
    }
    // cuda.h: "Value of minCount must be between 0 and the SM count specified in input".
    if min_count > input.sm.sm_count {
        return Err(invalid(format!(
            "minCount {min_count} is more than the resource's {} SMs",
            input.sm.sm_count
        )));
    }
    // cuda.h: ignoring co-scheduling "lowers the minimum SM count and alignment": to the
    // smallest of its guideline (2 and 2), awaiting the H200's.
    let (min_partition, alignment) = if flags & SPLIT_IGNORE_SM_COSCHEDULING != 0 {
        (2, 2)
    } else {
        (input.sm.min_partition, input.sm.alignment)
    };
    let size = min_count.max(min_partition).div_ceil(alignment) * alignment;
    let fit = input.sm.sm_count.checked_div(size).unwrap_or(0);
    // The count query (no `wanted`) simulates the split of as many as fit.
    let n = wanted.unwrap_or(fit).min(fit);
    let part = |sm_count, origin| Resource {
        device: input.device,
        sm: SmPartition {
            sm_count,
            min_partition,
            alignment,
        },
        origin,
    };
    Ok(Split {
        groups: match wanted {
            Some(_) => (0..n)
                .map(|_| part(size, Origin::Group { split }))
                .collect(),
            None => Vec::new(),
        },
        remaining: part(input.sm.sm_count - n * size, Origin::Remaining { split }),
        fit,
    })
}

/// A descriptor (cuDevResourceGenerateDesc): the SMs a green context is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceDesc {
    pub device: usize,
    pub sm: SmPartition,
}

/// Checks the resources of one descriptor (cuda.h: of one device; several only from one
/// split) and sums them.
pub fn describe(resources: &[Resource]) -> CuResult<ResourceDesc> {
    let Some(first) = resources.first() else {
        return Err(invalid("nbResources is 0"));
    };
    if resources.len() > 1 {
        let same_split = first.origin.split().is_some()
            && resources
                .iter()
                .all(|r| r.device == first.device && r.origin.split() == first.origin.split());
        if !same_split {
            return Err(CuError::new(
                CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
                "several resources must be outputs of the same split of the same device (cuda.h)",
            ));
        }
    }
    Ok(ResourceDesc {
        device: first.device,
        sm: SmPartition {
            sm_count: resources.iter().map(|r| r.sm.sm_count).sum(),
            ..first.sm
        },
    })
}

/// A green context: the primary context of its device retained, and a context of its own
/// (what cuCtxFromGreenCtx returns) limited to its SMs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GreenContext {
    pub device: usize,
    /// The CUcontext cuCtxFromGreenCtx gives: streams and memory made while it is current
    /// are the green context's.
    pub context: ContextId,
    pub sm: SmPartition,
}

/// The green contexts and descriptors of the process.
#[derive(Debug, Default)]
pub struct GreenContexts {
    green: HashMap<GreenCtxId, GreenContext>,
    /// Destroyed ones: their handles are never reused, so a use after destroy is told apart
    /// from a handle that never was (CUDA_ERROR_CONTEXT_IS_DESTROYED, cuda.h).
    destroyed: HashSet<GreenCtxId>,
    /// Descriptors live as long as the process: cuda.h has no call to destroy one.
    descs: HashMap<ResourceDescId, ResourceDesc>,
    next_id: u64,
    splits: u32,
}

impl GreenContexts {
    fn fresh(&mut self, tag: u64) -> u64 {
        self.next_id += 1;
        tag | self.next_id
    }

    /// Numbers a split (its results may be described together).
    pub fn next_split(&mut self) -> u32 {
        self.splits += 1;
        self.splits
    }

    pub fn add_desc(&mut self, desc: ResourceDesc) -> ResourceDescId {
        let id = ResourceDescId::from_handle(self.fresh(DESC_TAG));
        self.descs.insert(id, desc);
        id
    }

    pub fn desc(&self, id: ResourceDescId) -> CuResult<ResourceDesc> {
        self.descs.get(&id).copied().ok_or_else(|| {
            invalid(format!(
                "{:#x} is not a descriptor of cuDevResourceGenerateDesc",
                id.handle()
            ))
        })
    }

    pub fn add(&mut self, green: GreenContext) -> GreenCtxId {
        let id = GreenCtxId::from_handle(self.fresh(GREEN_TAG));
        self.green.insert(id, green);
        id
    }

    pub fn get(&self, id: GreenCtxId) -> CuResult<GreenContext> {
        if let Some(g) = self.green.get(&id) {
            return Ok(*g);
        }
        if self.destroyed.contains(&id) {
            return Err(CuError::new(
                cumock_abi::result::CUDA_ERROR_CONTEXT_IS_DESTROYED,
                format!("green context {:#x} was destroyed", id.handle()),
            ));
        }
        Err(invalid_context(format!(
            "{:#x} is not a green context",
            id.handle()
        )))
    }

    pub fn remove(&mut self, id: GreenCtxId) -> CuResult<GreenContext> {
        let g = self.get(id)?;
        self.green.remove(&id);
        self.destroyed.insert(id);
        Ok(g)
    }

    /// The green context whose context is `ctx`, if it is one.
    pub fn of_context(&self, ctx: ContextId) -> Option<GreenCtxId> {
        self.green
            .iter()
            .find(|(_, g)| g.context == ctx)
            .map(|(id, _)| *id)
    }
}

impl super::State {
    /// Whether two contexts are of one primary context: the same context, or a primary
    /// context and its green contexts' (cuda.h: a green context's event and the green
    /// context "must be from the same primary context").
    pub fn same_primary(&self, a: ContextId, b: ContextId) -> bool {
        let group = |c: ContextId| {
            self.green
                .of_context(c)
                .and_then(|g| self.green.get(g).ok())
                .and_then(|g| self.contexts.primary_context(g.device))
                .unwrap_or(c)
        };
        a == b || group(a) == group(b)
    }
}

// ---- the driver's green-context calls ----

impl Driver {
    /// The whole SMs of `device`: the profile's multiprocessor count.
    fn device_sm(&self, device: usize) -> SmPartition {
        SmPartition::whole_device(
            self.device_attribute(device, 16 /* MULTIPROCESSOR_COUNT */, 132) as u32,
            self.device_attribute(device, 75 /* COMPUTE_CAPABILITY_MAJOR */, 9),
        )
    }

    fn check_resource_type(kind: i32) -> CuResult<()> {
        if kind != RESOURCE_TYPE_SM {
            return Err(CuError::new(
                CUDA_ERROR_INVALID_RESOURCE_TYPE,
                format!("{kind} is not CU_DEV_RESOURCE_TYPE_SM (1), the only type"),
            ));
        }
        Ok(())
    }

    /// cuDeviceGetDevResource: the device's SMs.
    pub fn device_resource(&self, device: i32, kind: i32) -> CuResult<Resource> {
        self.device(device)?;
        Self::check_resource_type(kind)?;
        Ok(Resource {
            device: device as usize,
            sm: self.device_sm(device as usize),
            origin: Origin::Whole,
        })
    }

    /// cuCtxGetDevResource: a context's SMs, a green context's own where it is one
    /// (NULL: the current context, awaiting the H200's answer).
    pub fn ctx_resource(&self, ctx: Option<ContextId>, kind: i32) -> CuResult<Resource> {
        let st = self.state.lock();
        let ctx = match ctx {
            Some(c) => c,
            None => st.contexts.require_current()?.0,
        };
        let device = st.contexts.get(ctx)?.device;
        Self::check_resource_type(kind)?;
        let sm = match st.green.of_context(ctx) {
            Some(g) => st.green.get(g)?.sm,
            None => self.device_sm(device),
        };
        Ok(Resource {
            device,
            sm,
            origin: Origin::Whole,
        })
    }

    /// cuGreenCtxGetDevResource: the SMs the green context was made of.
    pub fn green_resource(&self, green: GreenCtxId, kind: i32) -> CuResult<Resource> {
        let g = self.state.lock().green.get(green)?;
        Self::check_resource_type(kind)?;
        Ok(Resource {
            device: g.device,
            sm: g.sm,
            origin: Origin::Whole,
        })
    }

    /// cuDevSmResourceSplitByCount over a resource the program passes back.
    pub fn split_sm_resource(
        &self,
        input: &CUdevResource,
        wanted: Option<u32>,
        flags: u32,
        min_count: u32,
    ) -> CuResult<Split> {
        let input = Resource::from_c(input)?;
        self.device(input.device as i32)?;
        let split = self.state.lock().green.next_split();
        split_sm(&input, wanted, flags, min_count, split)
    }

    /// cuDevResourceGenerateDesc.
    pub fn resource_desc(&self, resources: &[CUdevResource]) -> CuResult<ResourceDescId> {
        let resources = resources
            .iter()
            .map(Resource::from_c)
            .collect::<CuResult<Vec<_>>>()?;
        let desc = describe(&resources)?;
        self.device(desc.device as i32)?;
        Ok(self.state.lock().green.add_desc(desc))
    }

    /// cuGreenCtxCreate: retains the device's primary context (cuda.h) and makes the
    /// green context's own context, with the primary's flags.
    pub fn green_create(
        &self,
        desc: ResourceDescId,
        device: i32,
        flags: u32,
    ) -> CuResult<GreenCtxId> {
        self.device(device)?;
        if flags != GREEN_CTX_DEFAULT_STREAM {
            return Err(invalid(format!(
                "flags {flags:#x}: CU_GREEN_CTX_DEFAULT_STREAM is required (cuda.h), and the only flag"
            )));
        }
        let d = self.state.lock().green.desc(desc)?;
        if d.device != device as usize {
            return Err(invalid(format!(
                "the descriptor is of device {}, not {device}",
                d.device
            )));
        }
        self.primary_retain(device)?;
        let mut st = self.state.lock();
        let flags = st.contexts.primary_flags(d.device);
        let context = st.contexts.create(d.device, flags, false);
        Ok(st.green.add(GreenContext {
            device: d.device,
            context,
            sm: d.sm,
        }))
    }

    /// cuGreenCtxDestroy: its context goes (its streams' handles with it) and the primary
    /// context is released (cuda.h).
    pub fn green_destroy(&self, green: GreenCtxId) -> CuResult<()> {
        let g = {
            let mut st = self.state.lock();
            let g = st.green.remove(green)?;
            Self::destroy_context(&mut st, g.context)?;
            g
        };
        self.primary_release(g.device as i32)
    }

    /// cuCtxFromGreenCtx.
    pub fn green_context(&self, green: GreenCtxId) -> CuResult<GreenContext> {
        self.state.lock().green.get(green)
    }

    /// The green context `ctx` is the context of, if it is one.
    pub fn green_of_context(&self, ctx: ContextId) -> Option<GreenCtxId> {
        self.state.lock().green.of_context(ctx)
    }

    /// The green context of the calling thread's current context, if it is one.
    pub fn green_current(&self) -> Option<GreenCtxId> {
        let st = self.state.lock();
        st.contexts.current().and_then(|c| st.green.of_context(c))
    }

    /// cuGreenCtxStreamCreate: a stream of the green context, whatever is current (cuda.h).
    pub fn green_stream_create(
        &self,
        green: GreenCtxId,
        flags: u32,
        priority: i32,
    ) -> CuResult<StreamId> {
        let mut st = self.state.lock();
        let g = st.green.get(green)?;
        if flags != STREAM_NON_BLOCKING {
            return Err(invalid(format!(
                "flags {flags:#x}: CU_STREAM_NON_BLOCKING must be specified (cuda.h)"
            )));
        }
        self.check_sticky(&st, g.device)?;
        let priority = priority.clamp(
            super::context::STREAM_PRIORITY_GREATEST,
            super::context::STREAM_PRIORITY_LEAST,
        );
        Ok(st
            .contexts
            .create_stream(g.context, super::context::StreamProps { flags, priority }))
    }

    /// The green context of a stream (a default stream's: the current context's), and the
    /// primary context of its device (cuStreamGetCtx_v2 answers both for a green one).
    pub fn stream_green(&self, stream: StreamId) -> CuResult<Option<(GreenCtxId, ContextId)>> {
        let st = self.state.lock();
        let (ctx, _) = st.contexts.stream(stream)?;
        let Some(g) = st.green.of_context(ctx) else {
            return Ok(None);
        };
        let primary = st
            .contexts
            .primary_context(st.green.get(g)?.device)
            .ok_or_else(|| invalid_context("the green context's primary context is gone"))?;
        Ok(Some((g, primary)))
    }

    /// cuGreenCtxRecordEvent: cuCtxRecordEvent on the green context's context, whose
    /// streams are the green context's activities.
    pub fn green_record_event(
        &'static self,
        green: GreenCtxId,
        event: super::ids::EventId,
    ) -> CuResult<()> {
        let g = self.green_context(green)?;
        self.ctx_record_event(g.context, event)
    }

    /// cuGreenCtxWaitEvent: cuCtxWaitEvent on the green context's context.
    pub fn green_wait_event(&self, green: GreenCtxId, event: super::ids::EventId) -> CuResult<()> {
        let g = self.green_context(green)?;
        self.ctx_wait_event(g.context, event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200() -> Resource {
        Resource {
            device: 0,
            sm: SmPartition::whole_device(132, 9),
            origin: Origin::Whole,
        }
    }

    #[test]
    fn a_split_rounds_the_minimum_up_to_the_partition_and_the_alignment() {
        // 2 SMs asked: 8, the minimum partition; 132 / 8 = 16 groups fit, 4 SMs left.
        let s = split_sm(&h200(), None, 0, 2, 1).unwrap();
        assert_eq!((s.fit, s.groups.len(), s.remaining.sm.sm_count), (16, 0, 4));
        let s = split_sm(&h200(), Some(3), 0, 2, 1).unwrap();
        assert_eq!(s.groups.len(), 3);
        assert!(s.groups.iter().all(|g| g.sm.sm_count == 8));
        assert_eq!(s.remaining.sm.sm_count, 132 - 24);
        // 9 SMs: 16, the next multiple of 8; as many as fit when more are asked.
        let s = split_sm(&h200(), Some(100), 0, 9, 1).unwrap();
        assert_eq!((s.fit, s.groups.len(), s.remaining.sm.sm_count), (8, 8, 4));
        // Ignoring co-scheduling: finer groups.
        let s = split_sm(&h200(), Some(100), SPLIT_IGNORE_SM_COSCHEDULING, 3, 1).unwrap();
        assert_eq!((s.groups.len(), s.groups[0].sm.sm_count), (33, 4));
    }

    #[test]
    fn a_split_refuses_bad_flags_too_many_sms_and_a_result_split_again() {
        let e = split_sm(&h200(), None, 0x4, 8, 1).unwrap_err();
        assert_eq!(e.code, cumock_abi::result::CUDA_ERROR_INVALID_VALUE);
        let e = split_sm(&h200(), None, 0, 133, 1).unwrap_err();
        assert_eq!(e.code, cumock_abi::result::CUDA_ERROR_INVALID_VALUE);
        let group = split_sm(&h200(), Some(1), 0, 8, 1).unwrap().groups[0];
        let e = split_sm(&group, None, 0, 8, 2).unwrap_err();
        assert_eq!(e.code, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION);
    }

    #[test]
    fn a_resource_survives_its_c_form_and_a_foreign_one_is_refused() {
        let group = split_sm(&h200(), Some(2), 0, 16, 7).unwrap().groups[1];
        assert_eq!(Resource::from_c(&group.to_c()).unwrap(), group);
        let mut c = group.to_c();
        c.type_ = 0;
        assert_eq!(
            Resource::from_c(&c).unwrap_err().code,
            CUDA_ERROR_INVALID_RESOURCE_TYPE
        );
        let mut c = group.to_c();
        c.internal_padding = [0; 92];
        assert_eq!(
            Resource::from_c(&c).unwrap_err().code,
            CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION
        );
    }

    #[test]
    fn a_descriptor_sums_one_split_s_outputs_and_refuses_mixed_origins() {
        let a = split_sm(&h200(), Some(2), 0, 8, 1).unwrap();
        let b = split_sm(&h200(), Some(1), 0, 8, 2).unwrap();
        let d = describe(&[a.groups[0], a.groups[1], a.remaining]).unwrap();
        assert_eq!(d.sm.sm_count, 132);
        assert_eq!(describe(&[b.groups[0]]).unwrap().sm.sm_count, 8);
        assert_eq!(describe(&[h200()]).unwrap().sm.sm_count, 132);
        for mixed in [[a.groups[0], b.groups[0]], [h200(), h200()]] {
            assert_eq!(
                describe(&mixed).unwrap_err().code,
                CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION
            );
        }
        assert_eq!(
            describe(&[]).unwrap_err().code,
            cumock_abi::result::CUDA_ERROR_INVALID_VALUE
        );
    }
}
