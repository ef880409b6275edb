//! CUDA 12.8 and 13.0's batched memory calls (cudaMemcpyBatchAsync,
//! cudaMemcpy3DBatchAsync, cudaMemPrefetchBatchAsync, cudaMemDiscardBatchAsync,
//! cudaMemDiscardAndPrefetchBatchAsync, and their `_ptsz` forms): driver_types.h lays
//! out their structs as cuda.h does (cudaMemcpyAttributes, cudaMemcpy3DBatchOp with
//! cudaMemLocation, cudaOffset3D and cudaExtent; a runtime array is the driver's CUarray
//! here), and numbers their enums alike, so each forwards its arrays to the driver's
//! function as they are, on the driver's stream for the runtime's. And
//! cudaMemcpy3DPeer(Async): cudaMemcpy3D's copy once both devices are known.

use crate::boundary::cudart_fn;
use crate::error::RtResult;
use crate::memory::stream_for;
use crate::runtime::with_context;
use crate::texture::{Extent, Memcpy3DParms, PitchedPtr, Pos};
use cumock_abi::{CUmemLocation, CUmemcpyAttributes, CUstream, CUDA_MEMCPY3D_BATCH_OP};
use std::ffi::{c_int, c_void};

#[allow(clippy::too_many_arguments)]
fn memcpy_batch(
    dsts: *const *mut c_void,
    srcs: *const *const c_void,
    sizes: *const usize,
    count: usize,
    attrs: *mut CUmemcpyAttributes,
    attrs_idxs: *mut usize,
    num_attrs: usize,
    stream: CUstream,
) -> crate::error::RtResult<()> {
    let (d, _, _) = with_context()?;
    // Safety: the program's arrays, as the header requires them (the driver reads them
    // only; pointers and CUdeviceptr are the same 8 bytes).
    unsafe {
        d.cuMemcpyBatchAsync(
            dsts.cast_mut().cast(),
            srcs.cast_mut().cast(),
            sizes.cast_mut(),
            count,
            attrs,
            attrs_idxs,
            num_attrs,
            stream,
        )
    }
}

cudart_fn! {
    fn cudaMemcpyBatchAsync(
        dsts: *const *mut c_void,
        srcs: *const *const c_void,
        sizes: *const usize,
        count: usize,
        attrs: *mut CUmemcpyAttributes,
        attrs_idxs: *mut usize,
        num_attrs: usize,
        stream: CUstream,
    ) {
        memcpy_batch(dsts, srcs, sizes, count, attrs, attrs_idxs, num_attrs, stream_for(stream, false))
    }
}

cudart_fn! {
    fn cudaMemcpyBatchAsync_ptsz(
        dsts: *const *mut c_void,
        srcs: *const *const c_void,
        sizes: *const usize,
        count: usize,
        attrs: *mut CUmemcpyAttributes,
        attrs_idxs: *mut usize,
        num_attrs: usize,
        stream: CUstream,
    ) {
        memcpy_batch(dsts, srcs, sizes, count, attrs, attrs_idxs, num_attrs, stream_for(stream, true))
    }
}

fn memcpy_3d_batch(
    num_ops: usize,
    ops: *mut CUDA_MEMCPY3D_BATCH_OP,
    flags: u64,
    stream: CUstream,
) -> crate::error::RtResult<()> {
    let (d, _, _) = with_context()?;
    // Safety: the program's array of numOps operations, as the header requires.
    unsafe { d.cuMemcpy3DBatchAsync(num_ops, ops, flags, stream) }
}

cudart_fn! {
    fn cudaMemcpy3DBatchAsync(num_ops: usize, ops: *mut CUDA_MEMCPY3D_BATCH_OP, flags: u64, stream: CUstream) {
        memcpy_3d_batch(num_ops, ops, flags, stream_for(stream, false))
    }
}

cudart_fn! {
    fn cudaMemcpy3DBatchAsync_ptsz(num_ops: usize, ops: *mut CUDA_MEMCPY3D_BATCH_OP, flags: u64, stream: CUstream) {
        memcpy_3d_batch(num_ops, ops, flags, stream_for(stream, true))
    }
}

#[allow(clippy::too_many_arguments)]
fn prefetch_batch(
    discard: bool,
    dptrs: *mut *mut c_void,
    sizes: *mut usize,
    count: usize,
    locs: *mut CUmemLocation,
    loc_idxs: *mut usize,
    num_locs: usize,
    flags: u64,
    stream: CUstream,
) -> crate::error::RtResult<()> {
    let (d, _, _) = with_context()?;
    // Safety: the program's arrays, as the header requires them.
    unsafe {
        if discard {
            d.cuMemDiscardAndPrefetchBatchAsync(
                dptrs.cast(),
                sizes,
                count,
                locs,
                loc_idxs,
                num_locs,
                flags,
                stream,
            )
        } else {
            d.cuMemPrefetchBatchAsync(
                dptrs.cast(),
                sizes,
                count,
                locs,
                loc_idxs,
                num_locs,
                flags,
                stream,
            )
        }
    }
}

cudart_fn! {
    fn cudaMemPrefetchBatchAsync(dptrs: *mut *mut c_void, sizes: *mut usize, count: usize, locs: *mut CUmemLocation, loc_idxs: *mut usize, num_locs: usize, flags: u64, stream: CUstream) {
        prefetch_batch(false, dptrs, sizes, count, locs, loc_idxs, num_locs, flags, stream_for(stream, false))
    }
}

cudart_fn! {
    fn cudaMemPrefetchBatchAsync_ptsz(dptrs: *mut *mut c_void, sizes: *mut usize, count: usize, locs: *mut CUmemLocation, loc_idxs: *mut usize, num_locs: usize, flags: u64, stream: CUstream) {
        prefetch_batch(false, dptrs, sizes, count, locs, loc_idxs, num_locs, flags, stream_for(stream, true))
    }
}

cudart_fn! {
    fn cudaMemDiscardAndPrefetchBatchAsync(dptrs: *mut *mut c_void, sizes: *mut usize, count: usize, locs: *mut CUmemLocation, loc_idxs: *mut usize, num_locs: usize, flags: u64, stream: CUstream) {
        prefetch_batch(true, dptrs, sizes, count, locs, loc_idxs, num_locs, flags, stream_for(stream, false))
    }
}

cudart_fn! {
    fn cudaMemDiscardAndPrefetchBatchAsync_ptsz(dptrs: *mut *mut c_void, sizes: *mut usize, count: usize, locs: *mut CUmemLocation, loc_idxs: *mut usize, num_locs: usize, flags: u64, stream: CUstream) {
        prefetch_batch(true, dptrs, sizes, count, locs, loc_idxs, num_locs, flags, stream_for(stream, true))
    }
}

fn discard_batch(
    dptrs: *mut *mut c_void,
    sizes: *mut usize,
    count: usize,
    flags: u64,
    stream: CUstream,
) -> crate::error::RtResult<()> {
    let (d, _, _) = with_context()?;
    // Safety: the program's arrays, as the header requires them.
    unsafe { d.cuMemDiscardBatchAsync(dptrs.cast(), sizes, count, flags, stream) }
}

cudart_fn! {
    fn cudaMemDiscardBatchAsync(dptrs: *mut *mut c_void, sizes: *mut usize, count: usize, flags: u64, stream: CUstream) {
        discard_batch(dptrs, sizes, count, flags, stream_for(stream, false))
    }
}

cudart_fn! {
    fn cudaMemDiscardBatchAsync_ptsz(dptrs: *mut *mut c_void, sizes: *mut usize, count: usize, flags: u64, stream: CUstream) {
        discard_batch(dptrs, sizes, count, flags, stream_for(stream, true))
    }
}

/// `struct cudaMemcpy3DPeerParms`: cudaMemcpy3DParms' sides, each with its device, and no
/// kind.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Memcpy3DPeerParms {
    pub src_array: u64,
    pub src_pos: Pos,
    pub src_ptr: PitchedPtr,
    pub src_device: c_int,
    pub dst_array: u64,
    pub dst_pos: Pos,
    pub dst_ptr: PitchedPtr,
    pub dst_device: c_int,
    pub extent: Extent,
}

/// cudaMemcpy3DPeer: each device's primary context must exist (cudaErrorInvalidDevice
/// otherwise), then the copy is cudaMemcpy3D's between device memory
/// (cudaMemcpyDeviceToDevice): under unified addressing a device pointer names its
/// device's memory wherever the copy runs.
fn memcpy_3d_peer(p: *const Memcpy3DPeerParms, stream: Option<CUstream>) -> RtResult<()> {
    // Safety: NULL (refused) or readable, as the header requires.
    let p = *unsafe { p.as_ref() }.ok_or_else(|| crate::error::invalid("p is NULL"))?;
    let (_, rt, _) = with_context()?;
    rt.primary(p.src_device)?;
    rt.primary(p.dst_device)?;
    let c = Memcpy3DParms {
        src_array: p.src_array,
        src_pos: p.src_pos,
        src_ptr: p.src_ptr,
        dst_array: p.dst_array,
        dst_pos: p.dst_pos,
        dst_ptr: p.dst_ptr,
        extent: p.extent,
        // cudaMemcpyDeviceToDevice.
        kind: 3,
    };
    crate::texture::memcpy_3d(&c, stream)
}

cudart_fn! {
    fn cudaMemcpy3DPeer(p: *const Memcpy3DPeerParms) {
        memcpy_3d_peer(p, None)
    }
}

cudart_fn! {
    fn cudaMemcpy3DPeer_ptds(p: *const Memcpy3DPeerParms) {
        crate::memory::on_per_thread_stream(|s| memcpy_3d_peer(p, s))
    }
}

cudart_fn! {
    fn cudaMemcpy3DPeerAsync(p: *const Memcpy3DPeerParms, stream: CUstream) {
        memcpy_3d_peer(p, Some(stream_for(stream, false)))
    }
}

cudart_fn! {
    fn cudaMemcpy3DPeerAsync_ptsz(p: *const Memcpy3DPeerParms, stream: CUstream) {
        memcpy_3d_peer(p, Some(stream_for(stream, true)))
    }
}
