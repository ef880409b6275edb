//! Stream attributes (cuStreamGetAttribute, cuStreamSetAttribute, cuStreamCopyAttributes):
//! the `CUlaunchAttributeID`s cuda.h calls "valid for streams". The priority is the
//! stream's own (what cuStreamGetPriority reads back, and what later work on the stream
//! runs at); the others are hints for hardware a host executor does not have (an L2
//! persistence window, how the host waits, which fences cover which domain), kept as
//! data so a program reads back what it set. cuda.h: "the updated attribute will be
//! applied to subsequent work submitted to the stream"; a kernel on the mock sees none
//! of them, so none changes how it runs.

use super::context;
use super::error::*;
use super::ids::StreamId;
use super::Driver;

/// Stream attributes (`CUstreamAttrID`, the `CUlaunchAttributeID`s cuda.h marks "valid
/// for streams").
pub mod stream_attr {
    pub const ACCESS_POLICY_WINDOW: i32 = 1;
    pub const SYNCHRONIZATION_POLICY: i32 = 3;
    pub const PRIORITY: i32 = 8;
    pub const MEM_SYNC_DOMAIN_MAP: i32 = 9;
    pub const MEM_SYNC_DOMAIN: i32 = 10;
    pub const NVLINK_UTIL_CENTRIC_SCHEDULING: i32 = 16;
}

/// The synchronization policy of a stream nobody set one on: none of cuda.h's
/// CUsynchronizationPolicy values (AUTO is 1) but all bits set, as the H200 answers for a
/// fresh, the legacy and the per-thread stream (probe streams, stream-attributes).
pub const SYNC_POLICY_UNSET: u32 = u32::MAX;

/// cuda.h's CUsynchronizationPolicy values, AUTO (1) to BLOCKING_SYNC (4): the H200
/// refuses 9 (recorded); 0 and other values are refused alike (not recorded).
const SYNC_POLICIES: std::ops::RangeInclusive<u32> = 1..=4;

/// The memory sync domain map of a stream nobody set one on: default 0, remote 1 (two
/// bytes), as the H200 answers (recorded).
pub const MEM_SYNC_DOMAIN_MAP_DEFAULT: u32 = 0x100;

/// The attributes a stream keeps beside its flags (its priority is in `StreamProps`,
/// where cuStreamGetPriority reads it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamAttrs {
    /// `CUaccessPolicyWindow` as given (32 bytes).
    pub access_policy_window: [u32; 8],
    /// `CUsynchronizationPolicy`: how a host thread waits for the stream.
    pub sync_policy: u32,
    /// `CUlaunchMemSyncDomainMap` (two bytes: default, remote) and `CUlaunchMemSyncDomain`.
    pub mem_sync_domain_map: u32,
    pub mem_sync_domain: u32,
    /// A hint for NVLink-heavy kernels (0 or 1).
    pub nvlink_util_centric: u32,
}

impl Default for StreamAttrs {
    fn default() -> Self {
        Self {
            access_policy_window: [0; 8],
            sync_policy: SYNC_POLICY_UNSET,
            mem_sync_domain_map: MEM_SYNC_DOMAIN_MAP_DEFAULT,
            mem_sync_domain: 0,
            nvlink_util_centric: 0,
        }
    }
}

/// An attribute id cuda.h does not list as valid for streams: the stream calls answer
/// CUDA_ERROR_INVALID_VALUE (the only value error cuda.h lists for them).
fn not_a_stream_attribute(id: i32) -> CuError {
    let what = match id {
        2 | 4 | 5 | 6 | 7 | 11 | 12 | 13 | 14 => {
            "a launch or graph-node attribute (cuda.h: not valid for streams)"
        }
        _ => "not a CUstreamAttrID",
    };
    invalid(format!(
        "attribute {id} is {what}; streams take ACCESS_POLICY_WINDOW (1), \
         SYNCHRONIZATION_POLICY (3), PRIORITY (8), MEM_SYNC_DOMAIN_MAP (9), MEM_SYNC_DOMAIN \
         (10) and NVLINK_UTIL_CENTRIC_SCHEDULING (16)"
    ))
}

/// The attribute `id` of a stream with these attributes and priority, as the 64-byte
/// `CUstreamAttrValue` union.
pub fn get(attrs: &StreamAttrs, priority: i32, id: i32) -> CuResult<[u32; 16]> {
    let mut v = [0u32; 16];
    match id {
        stream_attr::ACCESS_POLICY_WINDOW => v[..8].copy_from_slice(&attrs.access_policy_window),
        stream_attr::SYNCHRONIZATION_POLICY => v[0] = attrs.sync_policy,
        stream_attr::PRIORITY => v[0] = priority as u32,
        stream_attr::MEM_SYNC_DOMAIN_MAP => v[0] = attrs.mem_sync_domain_map,
        stream_attr::MEM_SYNC_DOMAIN => v[0] = attrs.mem_sync_domain,
        stream_attr::NVLINK_UTIL_CENTRIC_SCHEDULING => v[0] = attrs.nvlink_util_centric,
        _ => return Err(not_a_stream_attribute(id)),
    }
    Ok(v)
}

/// Sets the attribute `id` from the union `v`; a priority outside the device's range is
/// clamped into it, as cuStreamCreateWithPriority clamps one.
pub fn set(attrs: &mut StreamAttrs, priority: &mut i32, id: i32, v: &[u32; 16]) -> CuResult<()> {
    match id {
        stream_attr::ACCESS_POLICY_WINDOW => attrs.access_policy_window.copy_from_slice(&v[..8]),
        stream_attr::SYNCHRONIZATION_POLICY if SYNC_POLICIES.contains(&v[0]) => {
            attrs.sync_policy = v[0]
        }
        stream_attr::SYNCHRONIZATION_POLICY => {
            return Err(invalid(format!(
                "synchronization policy {} is no CUsynchronizationPolicy",
                v[0]
            )))
        }
        stream_attr::PRIORITY => {
            *priority = (v[0] as i32).clamp(
                context::STREAM_PRIORITY_GREATEST,
                context::STREAM_PRIORITY_LEAST,
            )
        }
        // The map is two bytes (default, remote).
        stream_attr::MEM_SYNC_DOMAIN_MAP => attrs.mem_sync_domain_map = v[0] & 0xffff,
        stream_attr::MEM_SYNC_DOMAIN => attrs.mem_sync_domain = v[0],
        stream_attr::NVLINK_UTIL_CENTRIC_SCHEDULING => attrs.nvlink_util_centric = v[0],
        _ => return Err(not_a_stream_attribute(id)),
    }
    Ok(())
}

impl Driver {
    /// cuStreamGetAttribute: the stream must live (checked before the value pointer).
    pub fn stream_attribute(&self, stream: StreamId, id: i32) -> CuResult<[u32; 16]> {
        let st = self.state.lock();
        let (ctx, props) = st.contexts.stream(stream)?;
        let attrs = st.contexts.stream_attrs(ctx, stream);
        get(&attrs, props.priority, id)
    }

    /// cuStreamSetAttribute: applies to work submitted after it.
    pub fn stream_set_attribute(&self, stream: StreamId, id: i32, v: &[u32; 16]) -> CuResult<()> {
        let mut st = self.state.lock();
        let (ctx, props) = st.contexts.stream(stream)?;
        let mut attrs = st.contexts.stream_attrs(ctx, stream);
        let mut priority = props.priority;
        set(&mut attrs, &mut priority, id, v)?;
        st.contexts.set_stream_attrs(ctx, stream, attrs, priority);
        Ok(())
    }

    /// cuStreamCopyAttributes: every attribute of `src`, its priority included, onto
    /// `dst`; cuda.h: "both streams must have the same context".
    pub fn stream_copy_attributes(&self, dst: StreamId, src: StreamId) -> CuResult<()> {
        let mut st = self.state.lock();
        let (dctx, _) = st.contexts.stream(dst)?;
        let (sctx, sprops) = st.contexts.stream(src)?;
        if dctx != sctx {
            return Err(invalid(format!(
                "streams {:#x} and {:#x} belong to different contexts",
                dst.handle(),
                src.handle()
            )));
        }
        let attrs = st.contexts.stream_attrs(sctx, src);
        st.contexts
            .set_stream_attrs(dctx, dst, attrs, sprops.priority);
        Ok(())
    }
}
