//! Green contexts (cuda.h's group CUDA_GREEN_CONTEXTS): a device's SMs as a resource,
//! split into groups, a descriptor of some of them, and a green context made of one: a
//! context restricted to those SMs. The mock runs a green context's kernels as any
//! context's, with `%smid` taken from the green context's SMs; what a green context
//! changes otherwise is what the calls report: its resources, its streams and events, its
//! id.
//!
//! Fitted to the H200's recordings (clients/probes/green_contexts.c and green_contexts2.c,
//! goldens NVIDIA_H200-580.159.04/green_contexts.txt and green_contexts2.txt; "probe
//! <section>" and "probe2 <section>" below), where they differ from cuda.h's text:
//! descriptors take any resources of one device and report the sum of their SM counts, a
//! split's groups report no partition size or alignment, a green context of SMs that are
//! not whole co-scheduled units reports those of a split ignoring co-scheduling, and a
//! NULL descriptor makes a green context of the whole device. Which SMs a group holds is
//! not visible to the program beyond `%smid`; the mock hands them out in order of SM id,
//! the device's co-scheduled units first (unit k: SMs k * alignment to (k + 1) *
//! alignment - 1), the SMs outside every unit last.

use super::error::*;
use super::ids::{ContextId, GreenCtxId, ResourceDescId, StreamId};
use super::Driver;
use cumock_abi::result::{
    CUDA_ERROR_CONTEXT_IS_DESTROYED, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
    CUDA_ERROR_INVALID_RESOURCE_TYPE,
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

/// A set of SM ids (`%smid`), of a device of at most 256 SMs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SmSet([u64; 4]);

impl SmSet {
    pub const CAPACITY: u32 = 256;

    /// SMs 0 to `n` - 1.
    pub fn first(n: u32) -> Self {
        let mut s = Self::default();
        for i in 0..n.min(Self::CAPACITY) {
            s.0[i as usize / 64] |= 1 << (i % 64);
        }
        s
    }

    pub fn count(self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    pub fn union(self, other: Self) -> Self {
        Self(std::array::from_fn(|i| self.0[i] | other.0[i]))
    }

    /// The SM ids, ascending.
    pub fn ids(self) -> impl Iterator<Item = u32> {
        (0..Self::CAPACITY).filter(move |&i| self.0[i as usize / 64] & (1 << (i % 64)) != 0)
    }

    /// The `n` lowest SMs, and the rest.
    fn take(self, n: u32) -> (Self, Self) {
        let mut taken = Self::default();
        for i in self.ids().take(n as usize) {
            taken.0[i as usize / 64] |= 1 << (i % 64);
        }
        (
            taken,
            Self(std::array::from_fn(|i| self.0[i] & !taken.0[i])),
        )
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

/// An SM resource as the calls hand it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resource {
    pub device: usize,
    /// The SMs it holds: what a split divides and a green context's kernels run on.
    pub sms: SmSet,
    /// `smCount` as reported: the SMs held, except for a green context of a descriptor
    /// that named some twice (`ResourceDesc::count`).
    pub count: u32,
    /// `minSmPartitionSize` and `smCoscheduledAlignment`: the device's for a whole
    /// resource; 0 and 0 for a split's outputs (probe split: every group and remaining).
    pub min_partition: u32,
    pub alignment: u32,
    /// The most groups a co-scheduled split of it makes (`coscheduled_units`).
    pub units: u32,
    pub origin: Origin,
}

/// The internal bytes' first word: a resource this mock wrote.
const MARK: [u8; 4] = *b"cmk2";

impl Resource {
    pub fn sm_count(&self) -> u32 {
        self.count
    }

    /// The C struct: type SM, its numbers, and in the driver's internal bytes where it
    /// came from, its SMs, and the numbers as written (to tell a changed one).
    pub fn to_c(self) -> CUdevResource {
        let mut internal = [0u8; 92];
        let (kind, split) = match self.origin {
            Origin::Whole => (0u32, 0u32),
            Origin::Group { split } => (1, split),
            Origin::Remaining { split } => (2, split),
        };
        let sm = CUdevSmResource {
            sm_count: self.sm_count(),
            min_sm_partition_size: self.min_partition,
            sm_coscheduled_alignment: self.alignment,
        };
        internal[0..4].copy_from_slice(&MARK);
        let words = [
            self.device as u32,
            kind,
            split,
            self.units,
            sm.sm_count,
            sm.min_sm_partition_size,
            sm.sm_coscheduled_alignment,
        ];
        for (i, w) in words.iter().enumerate() {
            internal[4 + 4 * i..8 + 4 * i].copy_from_slice(&w.to_le_bytes());
        }
        for (i, w) in self.sms.0.iter().enumerate() {
            internal[32 + 8 * i..40 + 8 * i].copy_from_slice(&w.to_le_bytes());
        }
        CUdevResource {
            type_: RESOURCE_TYPE_SM,
            internal_padding: internal,
            sm,
            oversize: [0; 36],
        }
    }

    /// A resource the program passes back: of type SM, written by the driver, unchanged.
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
        let bytes = &c.internal_padding;
        let word = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
        // Probe split: a resource built by hand, and the device's with smCount changed to
        // 16, are both CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION.
        let written = (word(20), word(24), word(28));
        let public = (
            c.sm.sm_count,
            c.sm.min_sm_partition_size,
            c.sm.sm_coscheduled_alignment,
        );
        if bytes[0..4] != MARK || written != public {
            return Err(CuError::new(
                CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
                "the resource is not as cuDeviceGetDevResource, cuCtxGetDevResource, \
                 cuGreenCtxGetDevResource or a split wrote it (cuda.h: not to be modified \
                 outside them)",
            ));
        }
        let origin = match (word(8), word(12)) {
            (0, _) => Origin::Whole,
            (1, split) => Origin::Group { split },
            (_, split) => Origin::Remaining { split },
        };
        let sms = SmSet(std::array::from_fn(|i| {
            u64::from_le_bytes(bytes[32 + 8 * i..40 + 8 * i].try_into().expect("8 bytes"))
        }));
        Ok(Self {
            device: word(4) as usize,
            sms,
            count: c.sm.sm_count,
            min_partition: c.sm.min_sm_partition_size,
            alignment: c.sm.sm_coscheduled_alignment,
            units: word(16),
            origin,
        })
    }
}

/// A split's output in C: an empty remaining is a zeroed resource, of type INVALID
/// (probe split, "1 group of 132").
pub fn output_to_c(r: Option<Resource>) -> CUdevResource {
    r.map_or(
        CUdevResource {
            type_: 0,
            internal_padding: [0; 92],
            sm: CUdevSmResource {
                sm_count: 0,
                min_sm_partition_size: 0,
                sm_coscheduled_alignment: 0,
            },
            oversize: [0; 36],
        },
        Resource::to_c,
    )
}

/// The partition size and alignment of a device of compute capability `cc_major`. 9.x:
/// 8 and 8, the H200's (probe device-resource); the others are cuda.h's guideline
/// ("8.X: The minimum count is 4 SMs and must be a multiple of 2"; 6.x and 7.x: 2 and 2),
/// unrecorded.
pub fn partition_of(cc_major: i32) -> (u32, u32) {
    match cc_major {
        ..=7 => (2, 2),
        8 => (4, 2),
        _ => (8, 8),
    }
}

/// The partition size and alignment where co-scheduling does not hold SMs together: a
/// split with CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING (probe split: groups of at
/// least 2 SMs, a multiple of 2), and a green context whose SMs are not whole co-scheduled
/// units (probe2 descriptor-counts: the remaining of a split, alone or with a group,
/// reports 2 and 2). The H200's; the same on every device, unrecorded elsewhere.
pub const LOOSE_PARTITION: (u32, u32) = (2, 2);

/// The most groups a split that keeps SMs co-scheduled makes of `sms` SMs (a resource's
/// `alignment` SMs on one GPC each). The H200's 132 SMs give 15 (probe split: minCount 1
/// to 8 count 15 groups, "100 groups of 8" makes 15 and leaves 12; 16 SMs and more make
/// 132 / size, fewer than 15), as its GPCs hold 15 sets of 8 SMs; the number for any other
/// whole device is unrecorded, and taken as its SMs over the alignment. Part of a device
/// (a green context's SMs): `part_of_device`.
pub fn coscheduled_units(sms: u32, alignment: u32, whole_device: bool) -> u32 {
    if whole_device && sms == 132 && alignment == 8 {
        return 15;
    }
    sms.checked_div(alignment).unwrap_or(0)
}

/// A green context's SMs `sms` of the device `whole` as a resource: its partition size,
/// alignment and co-scheduled units.
/// - The whole device: the device's (probe2 descriptor-counts: the whole device, twice,
///   and with a group: 8, 8, 15 groups of 8).
/// - Whole units only: the device's partition, a unit each (probe create: a group of 16
///   splits into 2 groups of 8; probe2 descriptor-counts: a group of 8 given twice is 1
///   group, groups of 8 and 16 of two splits, the same first SMs, are 2).
/// - Else (SMs outside every unit, or part of one): `LOOSE_PARTITION`, and one group
///   fewer than the units it holds whole (probe2 descriptor-counts: the remaining of 3
///   groups of 8, 108 SMs holding 12 units, splits into 11 groups of 8; with a group
///   besides, 116 SMs holding 13 units, into 12). Why the H200 keeps one back is not
///   visible to the program; the rule fits both rows, other sizes are unrecorded.
pub fn part_of_device(sms: SmSet, whole: &Resource) -> (u32, u32, u32) {
    if sms == whole.sms {
        return (whole.min_partition, whole.alignment, whole.units);
    }
    let unit = whole.alignment.max(1);
    let units = (0..whole.units).map(|k| SmSet::first((k + 1) * unit).take(k * unit).1);
    let held = units
        .filter(|u| u.union(sms) == sms)
        .fold(SmSet::default(), SmSet::union);
    let whole_units = held.count() / unit;
    if held == sms {
        (whole.min_partition, whole.alignment, whole_units)
    } else {
        let (min_partition, alignment) = LOOSE_PARTITION;
        (min_partition, alignment, whole_units.saturating_sub(1))
    }
}

/// What cuDevSmResourceSplitByCount makes of a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// As many groups as fit, or as asked where fewer.
    pub groups: Vec<Resource>,
    /// The SMs left; None where none are (written as a zeroed resource).
    pub remaining: Option<Resource>,
    /// How many groups fit, whatever was asked (the count query's answer).
    pub fit: u32,
}

/// Splits `input` into groups of at least `min_count` SMs, `wanted` of them at most
/// (None: the count query). `split` numbers this split (the origin its outputs carry).
pub fn split_sm(
    input: &Resource,
    wanted: Option<u32>,
    flags: u32,
    min_count: u32,
    split: u32,
) -> CuResult<Split> {
    // Probe split: flags 0x4 and 0x80000000 split as 0 does (bits cuda.h does not name
    // are ignored); the two named flags together are CUDA_ERROR_INVALID_VALUE.
    let ignore = flags & SPLIT_IGNORE_SM_COSCHEDULING != 0;
    if ignore && flags & SPLIT_MAX_POTENTIAL_CLUSTER_SIZE != 0 {
        return Err(invalid(
            "CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING and \
             _MAX_POTENTIAL_CLUSTER_SIZE exclude each other",
        ));
    }
    // Probe split: a group and a remaining split again are refused, a green context's
    // resource is split (probe create), as cuda.h says.
    if input.origin != Origin::Whole {
        return Err(CuError::new(
            CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
            "a split's result is split again only through a green context made of it \
             (cuGreenCtxGetDevResource)",
        ));
    }
    // The SMs it holds, not its smCount: a green context of one group given twice reports
    // 16 SMs and splits into 1 group of 8 (probe2 descriptor-counts).
    let total = input.sms.count();
    // Probe split: minCount 133 of 132 SMs is CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION.
    if min_count > total {
        return Err(CuError::new(
            CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
            format!("minCount {min_count} is more than the resource's {total} SMs"),
        ));
    }
    // Probe split, ignoring co-scheduling: minCount 1 and 2 make 66 groups, 3 makes 33,
    // 8 makes 16, 9 makes 13 (of 2, 2, 4, 8, 10 SMs): groups of at least 2, a multiple
    // of 2, with no limit from the GPCs.
    let (min_partition, alignment) = if ignore {
        LOOSE_PARTITION
    } else {
        (input.min_partition, input.alignment)
    };
    // Rounded up to the partition and the alignment, but no more than the resource
    // (probe split: minCount 66 and 67 make a group of 72; 132, one of 132).
    let size = min_count
        .max(min_partition)
        .div_ceil(alignment.max(1))
        .saturating_mul(alignment.max(1))
        .min(total);
    let mut fit = total.checked_div(size).unwrap_or(0);
    // Probe split: with co-scheduling (flags 0, MAX_POTENTIAL_CLUSTER_SIZE, unnamed bits)
    // groups of 8 are 15, not 132 / 8.
    if !ignore {
        fit = fit.min(input.units);
    }
    let Some(wanted) = wanted else {
        return Ok(Split {
            groups: Vec::new(),
            remaining: None,
            fit,
        });
    };
    let part = |sms: SmSet| Resource {
        device: input.device,
        sms,
        count: sms.count(),
        min_partition: 0,
        alignment: 0,
        units: 0,
        origin: Origin::Group { split },
    };
    let mut rest = input.sms;
    let mut groups = Vec::new();
    for _ in 0..wanted.min(fit) {
        let (group, left) = rest.take(size);
        groups.push(part(group));
        rest = left;
    }
    let remaining = (rest.count() > 0).then(|| Resource {
        origin: Origin::Remaining { split },
        ..part(rest)
    });
    Ok(Split {
        groups,
        remaining,
        fit,
    })
}

/// A descriptor (cuDevResourceGenerateDesc): the SMs a green context is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceDesc {
    pub device: usize,
    pub sms: SmSet,
    /// The smCount its green context reports.
    pub count: u32,
}

/// One descriptor of `resources`, of a device of `device_sms` SMs. Probe descriptors:
/// groups of two splits, the whole device twice, a group and the whole device are all
/// accepted (cuda.h says several must come from one split). Probe2 descriptor-counts: the
/// green context reports the sum of their smCounts, at most the device's (a group of 8
/// twice: 16; groups of 8 and 16 of two splits: 24; a group and the remaining: 116; the
/// whole device twice, and a group with it: 132), while its splits show it holds the
/// union of their SMs (a group twice: 1 group of 8). Resources of two devices stay refused
/// (cuda.h), unrecorded.
pub fn describe(resources: &[Resource], device_sms: u32) -> CuResult<ResourceDesc> {
    let Some(first) = resources.first() else {
        return Err(invalid("nbResources is 0"));
    };
    if resources.iter().any(|r| r.device != first.device) {
        return Err(CuError::new(
            CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
            "the resources are of two devices (cuda.h)",
        ));
    }
    Ok(ResourceDesc {
        device: first.device,
        sms: resources
            .iter()
            .fold(SmSet::default(), |all, r| all.union(r.sms)),
        count: resources
            .iter()
            .fold(0u32, |sum, r| sum.saturating_add(r.count))
            .min(device_sms),
    })
}

/// A green context: the primary context of its device retained, and a context of its own
/// (what cuCtxFromGreenCtx returns) limited to its SMs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GreenContext {
    pub device: usize,
    /// The CUcontext cuCtxFromGreenCtx gives: streams and events made while it is current
    /// are the green context's.
    pub context: ContextId,
    pub sms: SmSet,
    /// The smCount it reports (`ResourceDesc::count`).
    pub count: u32,
}

/// The green contexts and descriptors of the process.
#[derive(Debug, Default)]
pub struct GreenContexts {
    green: HashMap<GreenCtxId, GreenContext>,
    /// Destroyed ones: their handles are never reused, so a use after destroy is told apart
    /// from a handle that never was (CUDA_ERROR_CONTEXT_IS_DESTROYED, probe destroy).
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

    /// Numbers a split (the origin its outputs carry).
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
                CUDA_ERROR_CONTEXT_IS_DESTROYED,
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

    /// The SMs a context's work runs on, where it is a green context's.
    pub fn context_sms(&self, ctx: ContextId) -> Option<SmSet> {
        self.green
            .values()
            .find(|g| g.context == ctx)
            .map(|g| g.sms)
    }
}

impl super::State {
    /// The streams whose work cuCtxRecordEvent on `ctx` captures: its own, and for a
    /// primary context its green contexts' too (probe2 record-on-primary: recorded on the
    /// primary while a green context's stream runs a kernel, the event is not ready at once;
    /// recorded on the primary's NULL stream, it is). Whether a green context's record
    /// captures the primary's streams is unrecorded: it does not here.
    pub fn streams_recorded_by(&self, ctx: ContextId) -> HashSet<StreamId> {
        let mut streams = self.contexts.streams_of(ctx);
        if self.contexts.get(ctx).is_ok_and(|c| c.primary) {
            for g in self.green.green.values() {
                if self.contexts.primary_context(g.device) == Some(ctx) {
                    streams.extend(self.contexts.streams_of(g.context));
                }
            }
        }
        streams
    }

    /// Whether two contexts are of one primary context: the same context, or a primary
    /// context and its green contexts' (cuda.h: a green context's event and the green
    /// context "must be from the same primary context"; probe events).
    pub fn same_primary(&self, a: ContextId, b: ContextId) -> bool {
        let group = |c: ContextId| self.memory_context(c);
        a == b || group(a) == group(b)
    }

    /// The context that owns what is allocated while `ctx` is current: a green context's
    /// is its device's primary context (probe create: cuMemAlloc with a green context's
    /// context current gives memory whose CU_POINTER_ATTRIBUTE_CONTEXT is the primary).
    pub fn memory_context(&self, ctx: ContextId) -> ContextId {
        self.green
            .of_context(ctx)
            .and_then(|g| self.green.get(g).ok())
            .and_then(|g| self.contexts.primary_context(g.device))
            .unwrap_or(ctx)
    }
}

// ---- the driver's green-context calls ----

impl Driver {
    /// The whole SMs of `device`: the profile's multiprocessor count.
    fn device_sm(&self, device: usize) -> Resource {
        let count = self.device_attribute(device, 16 /* MULTIPROCESSOR_COUNT */, 132) as u32;
        let cc = self.device_attribute(device, 75 /* COMPUTE_CAPABILITY_MAJOR */, 9);
        let (min_partition, alignment) = partition_of(cc);
        Resource {
            device,
            sms: SmSet::first(count),
            count,
            min_partition,
            alignment,
            units: coscheduled_units(count, alignment, true),
            origin: Origin::Whole,
        }
    }

    /// A green context's SMs as a resource (`part_of_device`), splittable again.
    fn green_sm(&self, g: &GreenContext) -> Resource {
        let whole = self.device_sm(g.device);
        let (min_partition, alignment, units) = part_of_device(g.sms, &whole);
        Resource {
            sms: g.sms,
            count: g.count,
            min_partition,
            alignment,
            units,
            ..whole
        }
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
        Ok(self.device_sm(device as usize))
    }

    /// cuCtxGetDevResource: a context's SMs, a green context's own where it is one.
    pub fn ctx_resource(&self, ctx: Option<ContextId>, kind: i32) -> CuResult<Resource> {
        // Probe device-resource and create: NULL is refused, whether the primary context
        // or a green context's is current.
        let Some(ctx) = ctx else {
            return Err(invalid_context(
                "NULL: cuCtxGetDevResource takes no current context",
            ));
        };
        let st = self.state.lock();
        // Probe device-resource (a created context) and destroy (a green context's).
        if st.contexts.is_destroyed(ctx) {
            return Err(CuError::new(
                CUDA_ERROR_CONTEXT_IS_DESTROYED,
                format!("context {:#x} was destroyed", ctx.handle()),
            ));
        }
        let device = st.contexts.get(ctx)?.device;
        Self::check_resource_type(kind)?;
        match st.green.of_context(ctx) {
            Some(g) => Ok(self.green_sm(&st.green.get(g)?)),
            None => Ok(self.device_sm(device)),
        }
    }

    /// cuGreenCtxGetDevResource: the SMs the green context was made of.
    pub fn green_resource(&self, green: GreenCtxId, kind: i32) -> CuResult<Resource> {
        let g = self.state.lock().green.get(green)?;
        Self::check_resource_type(kind)?;
        Ok(self.green_sm(&g))
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
        let device = resources.first().map_or(0, |r| r.device);
        self.device(device as i32)?;
        let desc = describe(&resources, self.device_sm(device).count)?;
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
        // Probe create: flags 0, 2 and 3 are refused.
        if flags != GREEN_CTX_DEFAULT_STREAM {
            return Err(invalid(format!(
                "flags {flags:#x}: CU_GREEN_CTX_DEFAULT_STREAM is required (cuda.h), and the only flag"
            )));
        }
        // Probe create: a NULL descriptor is accepted. Which SMs that green context has
        // is unrecorded; the mock gives it the whole device, as the descriptor of the
        // device's resource would.
        let (sms, count) = if desc.handle() == 0 {
            let whole = self.device_sm(device as usize);
            (whole.sms, whole.count)
        } else {
            let d = self.state.lock().green.desc(desc)?;
            if d.device != device as usize {
                return Err(invalid(format!(
                    "the descriptor is of device {}, not {device}",
                    d.device
                )));
            }
            (d.sms, d.count)
        };
        self.primary_retain(device)?;
        let mut st = self.state.lock();
        let device = device as usize;
        let flags = st.contexts.primary_flags(device);
        let context = st.contexts.create(device, flags, false);
        st.contexts.deny_per_thread(context);
        Ok(st.green.add(GreenContext {
            device,
            context,
            sms,
            count,
        }))
    }

    /// cuGreenCtxDestroy: its context goes (its streams' handles with it) and the primary
    /// context is released (cuda.h). Its context's handle lingers (probe destroy): it
    /// stays current where it was, may be pushed again, and calls in it fail with
    /// CUDA_ERROR_CONTEXT_IS_DESTROYED.
    pub fn green_destroy(&self, green: GreenCtxId) -> CuResult<()> {
        let g = {
            let mut st = self.state.lock();
            let g = st.green.remove(green)?;
            st.contexts.linger(g.context);
            st.contexts.strand_streams(g.context);
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
    /// Refused, it may still name a handle for phStream: see below.
    pub fn green_stream_create(
        &self,
        green: GreenCtxId,
        flags: u32,
        priority: i32,
    ) -> Result<StreamId, (CuError, Option<StreamId>)> {
        let mut st = self.state.lock();
        let g = st.green.get(green).map_err(|e| (e, None))?;
        // Probe streams: flags 0 is CUDA_ERROR_INVALID_VALUE, and phStream is written all
        // the same, with a handle cuStreamDestroy then refuses (CUDA_ERROR_INVALID_HANDLE):
        // the mock writes one that names no stream.
        if flags != STREAM_NON_BLOCKING {
            return Err((
                invalid(format!(
                    "flags {flags:#x}: CU_STREAM_NON_BLOCKING must be specified (cuda.h)"
                )),
                Some(st.contexts.unused_stream_handle()),
            ));
        }
        self.check_sticky(&st, g.device).map_err(|e| (e, None))?;
        // The priorities beyond 0 to -5 are clamped (cuda.h), unrecorded here.
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

    /// The SMs of the current context, where it is a green context's (occupancy).
    pub fn current_green_sms(&self) -> Option<SmSet> {
        let st = self.state.lock();
        st.contexts.current().and_then(|c| st.green.context_sms(c))
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
    use cumock_abi::result::CUDA_ERROR_INVALID_VALUE;

    /// The H200's whole device as cuDeviceGetDevResource gives it.
    fn h200() -> Resource {
        Resource {
            device: 0,
            sms: SmSet::first(132),
            count: 132,
            min_partition: 8,
            alignment: 8,
            units: coscheduled_units(132, 8, true),
            origin: Origin::Whole,
        }
    }

    fn count(flags: u32, min_count: u32) -> u32 {
        split_sm(&h200(), None, flags, min_count, 1).unwrap().fit
    }

    #[test]
    fn the_count_query_gives_the_h200_s_numbers() {
        // Probe split, flags 0 (and MAX_POTENTIAL_CLUSTER_SIZE, and bits cuda.h does not
        // name): minCount to the group count.
        for flags in [0, SPLIT_MAX_POTENTIAL_CLUSTER_SIZE, 0x4, 0x8000_0000] {
            for (min, groups) in [
                (0, 15),
                (1, 15),
                (7, 15),
                (8, 15),
                (9, 8),
                (16, 8),
                (24, 5),
                (33, 3),
                (66, 1),
                (67, 1),
                (132, 1),
            ] {
                assert_eq!(
                    count(flags, min),
                    groups,
                    "flags {flags:#x}, minCount {min}"
                );
            }
        }
        // Ignoring co-scheduling.
        for (min, groups) in [(1, 66), (2, 66), (3, 33), (8, 16), (9, 13)] {
            assert_eq!(
                count(SPLIT_IGNORE_SM_COSCHEDULING, min),
                groups,
                "minCount {min}"
            );
        }
    }

    #[test]
    fn groups_and_the_remaining_are_as_the_h200_makes_them() {
        let sizes = |s: &Split| {
            (
                s.groups.len(),
                s.groups
                    .iter()
                    .map(Resource::sm_count)
                    .collect::<HashSet<_>>(),
                s.remaining.map(|r| r.sm_count()),
            )
        };
        // Probe split: asked, made, their size, what is left.
        for (asked, min, flags, made, size, left) in [
            (3, 8, 0, 3, 8, Some(108)),
            (3, 2, 0, 3, 8, Some(108)),
            (3, 20, 0, 3, 24, Some(60)),
            (100, 8, 0, 15, 8, Some(12)),
            (2, 66, 0, 1, 72, Some(60)),
            (1, 132, 0, 1, 132, None),
            (4, 3, SPLIT_IGNORE_SM_COSCHEDULING, 4, 4, Some(116)),
            (4, 16, SPLIT_MAX_POTENTIAL_CLUSTER_SIZE, 4, 16, Some(68)),
        ] {
            let s = split_sm(&h200(), Some(asked), flags, min, 1).unwrap();
            assert_eq!(
                sizes(&s),
                (made, HashSet::from([size]), left),
                "{asked} of {min}"
            );
            // Outputs report no partition size nor alignment.
            assert!(s
                .groups
                .iter()
                .chain(&s.remaining)
                .all(|r| (r.min_partition, r.alignment) == (0, 0)));
            // Disjoint, and together the input.
            let all = s
                .groups
                .iter()
                .chain(&s.remaining)
                .fold(SmSet::default(), |a, r| a.union(r.sms));
            assert_eq!(all, h200().sms);
        }
        // An empty remaining is written zeroed, of type INVALID.
        assert_eq!(output_to_c(None).type_, 0);
    }

    #[test]
    fn a_split_refuses_what_the_h200_refuses() {
        let code = |r: CuResult<Split>| r.unwrap_err().code;
        assert_eq!(
            code(split_sm(&h200(), None, 0, 133, 1)),
            CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION
        );
        for min in [1, 8, 9] {
            assert_eq!(
                code(split_sm(&h200(), None, 0x3, min, 1)),
                CUDA_ERROR_INVALID_VALUE
            );
        }
        let s = split_sm(&h200(), Some(1), 0, 16, 1).unwrap();
        let (group, rest) = (s.groups[0], s.remaining.unwrap());
        for r in [group, rest] {
            assert_eq!(
                code(split_sm(&r, None, 0, 8, 2)),
                CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION
            );
        }
    }

    #[test]
    fn a_resource_survives_its_c_form_and_a_changed_one_is_refused() {
        let group = split_sm(&h200(), Some(2), 0, 16, 7).unwrap().groups[1];
        assert_eq!(Resource::from_c(&group.to_c()).unwrap(), group);
        assert_eq!(Resource::from_c(&h200().to_c()).unwrap(), h200());
        let mut c = group.to_c();
        c.type_ = 0;
        assert_eq!(
            Resource::from_c(&c).unwrap_err().code,
            CUDA_ERROR_INVALID_RESOURCE_TYPE
        );
        // Probe split: built by hand, or the device's with smCount changed.
        let mut c = group.to_c();
        c.internal_padding = [0; 92];
        assert_eq!(
            Resource::from_c(&c).unwrap_err().code,
            CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION
        );
        let mut c = h200().to_c();
        c.sm.sm_count = 16;
        assert_eq!(
            Resource::from_c(&c).unwrap_err().code,
            CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION
        );
    }

    /// The resource of a green context made of `resources` (cuGreenCtxGetDevResource).
    fn green_of(resources: &[Resource]) -> Resource {
        let d = describe(resources, 132).unwrap();
        let (min_partition, alignment, units) = part_of_device(d.sms, &h200());
        Resource {
            sms: d.sms,
            count: d.count,
            min_partition,
            alignment,
            units,
            ..h200()
        }
    }

    #[test]
    fn a_green_context_reports_the_h200_s_counts_of_mixed_descriptors() {
        // Probe2 descriptor-counts: the resources as the probe splits them, and per
        // descriptor smCount, partition size, alignment and groups of at least 8.
        let a = split_sm(&h200(), Some(3), 0, 8, 1).unwrap();
        let b = split_sm(&h200(), Some(2), 0, 16, 2).unwrap();
        let rem = a.remaining.unwrap();
        for (what, resources, reported) in [
            ("the whole device", vec![h200()], (132, 8, 8, 15)),
            (
                "the whole device twice",
                vec![h200(), h200()],
                (132, 8, 8, 15),
            ),
            (
                "one group twice",
                vec![a.groups[0], a.groups[0]],
                (16, 8, 8, 1),
            ),
            (
                "groups of two splits",
                vec![a.groups[0], b.groups[0]],
                (24, 8, 8, 2),
            ),
            (
                "a group and the whole device",
                vec![a.groups[0], h200()],
                (132, 8, 8, 15),
            ),
            (
                "a group and the remaining",
                vec![a.groups[0], rem],
                (116, 2, 2, 12),
            ),
            ("the remaining alone", vec![rem], (108, 2, 2, 11)),
        ] {
            let g = green_of(&resources);
            let groups = split_sm(&g, None, 0, 8, 3).unwrap().fit;
            assert_eq!(
                (g.sm_count(), g.min_partition, g.alignment, groups),
                reported,
                "{what}"
            );
        }
        // Probe create: a green context of one group of 16.
        let g = green_of(&[b.groups[0]]);
        let s = split_sm(&g, Some(4), 0, 8, 4).unwrap();
        assert_eq!(
            (g.sm_count(), g.alignment, s.groups.len(), s.remaining),
            (16, 8, 2, None)
        );
    }

    #[test]
    fn a_descriptor_holds_the_union_and_reports_the_sum() {
        let a = split_sm(&h200(), Some(3), 0, 8, 1).unwrap();
        let b = split_sm(&h200(), Some(2), 0, 16, 2).unwrap();
        // The SMs held, and the smCount reported.
        let n = |rs: &[Resource]| {
            let d = describe(rs, 132).unwrap();
            (d.sms.count(), d.count)
        };
        assert_eq!(
            n(&[a.groups[0], a.remaining.unwrap(), a.groups[1]]),
            (132 - 8, 132 - 8)
        );
        assert_eq!(n(&[a.groups[0], b.groups[0]]), (16, 24));
        assert_eq!(n(&[h200(), h200()]), (132, 132));
        assert_eq!(n(&[a.groups[0], a.groups[0]]), (8, 16));
        assert_eq!(n(&[a.groups[0], h200()]), (132, 132));
        let other = Resource {
            device: 1,
            ..h200()
        };
        assert_eq!(
            describe(&[h200(), other], 132).unwrap_err().code,
            CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION
        );
        assert_eq!(
            describe(&[], 132).unwrap_err().code,
            CUDA_ERROR_INVALID_VALUE
        );
    }
}
