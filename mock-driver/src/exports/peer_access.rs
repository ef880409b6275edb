//! Peer context memory access (cuda.h's group CUDA_PEER_ACCESS): whether one device can
//! reach another's memory, and enabling it between contexts.

use super::Mock;
use crate::boundary::{ctx_key, drv, out};
use crate::model::error::*;
use cumock_abi::*;
use std::ffi::{c_int, c_uint};

impl PeerContextMemoryAccessApi for Mock {
    unsafe fn cuDeviceCanAccessPeer(
        can: *mut c_int,
        dev: CUdevice,
        peer: CUdevice,
    ) -> CuResult<()> {
        let d = drv()?;
        if can.is_null() {
            return Err(invalid("canAccessPeer is NULL"));
        }
        d.device(dev)?;
        d.device(peer)?;
        out(
            can,
            d.profile.can_access_peer(dev as usize, peer as usize) as c_int,
        )
    }

    unsafe fn cuCtxEnablePeerAccess(peer: CUcontext, flags: c_uint) -> CuResult<()> {
        let key = ctx_key(peer).ok_or_else(|| invalid_context("peerContext is NULL"))?;
        drv()?.ctx_enable_peer_access(key, flags)
    }

    unsafe fn cuCtxDisablePeerAccess(peer: CUcontext) -> CuResult<()> {
        let key = ctx_key(peer).ok_or_else(|| invalid_context("peerContext is NULL"))?;
        drv()?.ctx_disable_peer_access(key)
    }
}
