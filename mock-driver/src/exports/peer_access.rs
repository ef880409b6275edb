//! Peer context memory access (cuda.h's group CUDA_PEER_ACCESS): whether one device can
//! reach another's memory, and enabling it between contexts.

use super::Mock;
use crate::boundary::{drv, Handle};
use crate::model::error::*;
use cumock_abi::*;
use std::ffi::{c_int, c_uint};

impl PeerContextMemoryAccessApi for Mock {
    emulate! {
        fn cuDeviceCanAccessPeer(d; can, dev, peer) {
            d.device(dev)?;
            d.device(peer)?;
            can.write(d.profile.can_access_peer(dev as usize, peer as usize) as c_int)
        }

        /// Observed on the 2-GPU H200 host (probe two_gpus peer-copies): between two devices
        /// that reach each other (NVLink), performance rank 0 and access, native atomics and
        /// array access all supported. Between devices that do not, everything is 0.
        fn cuDeviceGetP2PAttribute(d; value, attrib, src, dst) {
            d.device(src)?;
            d.device(dst)?;
            if src == dst {
                return Err(invalid_device(
                    "srcDevice and dstDevice are the same device (cuda.h: CUDA_ERROR_INVALID_DEVICE)",
                ));
            }
            let reach = d.profile.can_access_peer(src as usize, dst as usize);
            let v = match attrib {
                // CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK
                1 => 0,
                // ACCESS_SUPPORTED, NATIVE_ATOMIC_SUPPORTED, CUDA_ARRAY_ACCESS_SUPPORTED
                2..=4 => c_int::from(reach),
                // ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED: NVLink's atomics are whole.
                5 => 0,
                other => return Err(invalid(format!("{other} is not a CUdevice_P2PAttribute"))),
            };
            value.write(v)
        }

        /// As cuDeviceGetP2PAttribute: the same device twice is CUDA_ERROR_INVALID_DEVICE
        /// (an assumption: probe api_gaps asks it, but the H200 crashed earlier in that
        /// section, so it is not recorded); devices that do not reach each other
        /// have no native atomic (every capability 0). Between devices that do (NVLink),
        /// which operations of which widths are native is not known without a recording
        /// on a 2-GPU H200 host: not emulated until then.
        fn cuDeviceGetP2PAtomicCapabilities(d; #[late] capabilities, #[slice] operations, _count, src_device, dst_device) {
            d.device(src_device)?;
            d.device(dst_device)?;
            if src_device == dst_device {
                return Err(invalid_device("srcDevice and dstDevice are the same device"));
            }
            if d.profile.can_access_peer(src_device as usize, dst_device as usize) {
                return Err(not_supported(
                    "the native atomics between two peer devices are not emulated (not recorded yet)",
                ));
            }
            super::write_atomic_capabilities(capabilities, operations, |_| 0)
        }
    }

    // Written by hand: a NULL context is refused before the check for cuInit, and as
    // CUDA_ERROR_INVALID_CONTEXT.

    unsafe fn cuCtxEnablePeerAccess(peer: CUcontext, flags: c_uint) -> CuResult<()> {
        let key = peer
            .key()
            .ok_or_else(|| invalid_context("peerContext is NULL"))?;
        drv()?.ctx_enable_peer_access(key, flags)
    }

    unsafe fn cuCtxDisablePeerAccess(peer: CUcontext) -> CuResult<()> {
        let key = peer
            .key()
            .ok_or_else(|| invalid_context("peerContext is NULL"))?;
        drv()?.ctx_disable_peer_access(key)
    }
}
