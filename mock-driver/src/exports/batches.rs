//! CUDA 12.8 and 13.0's batched memory calls over `model::batches`: cuMemcpyBatchAsync
//! (12.8's, with `failIdx`, and 13.0's `_v2`), cuMemcpy3DBatchAsync (both forms),
//! cuMemPrefetchBatchAsync, cuMemDiscardBatchAsync, cuMemDiscardAndPrefetchBatchAsync;
//! and the 3D copies between contexts, cuMemcpy3DPeer and cuMemcpy3DPeerAsync. Each
//! operation of a batch is issued as the single call issues it (cuMemcpyAsync,
//! cuMemcpy3DAsync, cuMemPrefetchAsync), in the batch's order, after the whole batch's
//! arguments are checked, so that a batch the mock refuses issues nothing, except for a
//! copy of 0 bytes, which the H200 refuses when it reaches it (`memcpy_batch`). The `_ptsz`
//! and `_ptds` variants are the trait's defaults. cuda.h files the copies under
//! `MemoryApi` (exports/mod.rs lists them) and the prefetches and discards under
//! `UnifiedAddressingApi` (unified.rs calls these).

use super::{capturing, copies, stream, textures};
use crate::boundary::{device_ptr, drv, input, slice, Handle};
use crate::model::batches::{
    check_copy_flags, check_reserved_flags, check_runs, run_of, SrcAccessOrder,
};
use crate::model::error::*;
use crate::model::ids::ArrayId;
use crate::model::Driver;
use cumock_abi::consts::CU_MEM_LOCATION_TYPE_DEVICE;
use cumock_abi::*;
use std::ffi::c_void;

/// A batch's failure: the index of the operation it pertains to (none for the batch's own
/// arguments), and the error.
type BatchError = (Option<usize>, CuError);

/// An error of the batch as a whole.
fn whole(e: CuError) -> BatchError {
    (None, e)
}

/// 12.8's forms write the failing operation's index to `failIdx`, SIZE_MAX where the
/// error pertains to no single operation (cuda.h 12.8). Recorded on the H200 (probe
/// batch_copies): a batch refused for its stream (the legacy stream) leaves `failIdx`
/// untouched; past that check the driver writes SIZE_MAX first, so a batch that succeeds,
/// or fails for its attributes or flags, reads SIZE_MAX, and one that fails for one copy
/// reads that copy's index. NULL is left alone.
///
/// # Safety
/// `fail_idx` is NULL or writable.
unsafe fn report(
    fail_idx: *mut usize,
    s: CUstream,
    batch: impl FnOnce() -> Result<(), BatchError>,
) -> CuResult<()> {
    drv()?.batch_stream_check(s.key())?;
    let write = |at: usize| {
        if !fail_idx.is_null() {
            // Safety: this function's contract.
            unsafe { fail_idx.write_unaligned(at) };
        }
    };
    write(usize::MAX);
    batch().map_err(|(at, e)| {
        if let Some(at) = at {
            write(at);
        }
        e
    })
}

// ---------------------------------------------------------------- cuMemcpyBatchAsync

#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn cuMemcpyBatchAsync_v2(
    dsts: *mut CUdeviceptr,
    srcs: *mut CUdeviceptr,
    sizes: *mut usize,
    count: usize,
    attrs: *mut CUmemcpyAttributes,
    attr_idxs: *mut usize,
    num_attrs: usize,
    s: CUstream,
) -> CuResult<()> {
    // Safety: cuda.h's contract on the arrays.
    unsafe { memcpy_batch(dsts, srcs, sizes, count, attrs, attr_idxs, num_attrs, s) }
        .map_err(|(_, e)| e)
}

#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn cuMemcpyBatchAsync(
    dsts: *mut CUdeviceptr,
    srcs: *mut CUdeviceptr,
    sizes: *mut usize,
    count: usize,
    attrs: *mut CUmemcpyAttributes,
    attr_idxs: *mut usize,
    num_attrs: usize,
    fail_idx: *mut usize,
    s: CUstream,
) -> CuResult<()> {
    // Safety: cuda.h's contract on the arrays and on failIdx.
    unsafe {
        report(fail_idx, s, || {
            memcpy_batch(dsts, srcs, sizes, count, attrs, attr_idxs, num_attrs, s)
        })
    }
}

/// cuMemcpyBatchAsync: `count` copies, each as cuMemcpyAsync issues it; a copy whose
/// attributes say CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL runs in the call, after the
/// stream's earlier work (its destination "always accessed in stream order"), so that
/// its source is read before the call returns.
///
/// # Safety
/// cuda.h's contract: each array holds its count of entries, host sides as an async
/// copy's.
#[allow(clippy::too_many_arguments)]
unsafe fn memcpy_batch(
    dsts: *mut CUdeviceptr,
    srcs: *mut CUdeviceptr,
    sizes: *mut usize,
    count: usize,
    attrs: *mut CUmemcpyAttributes,
    attr_idxs: *mut usize,
    num_attrs: usize,
    s: CUstream,
) -> Result<(), BatchError> {
    let d = drv().map_err(whole)?;
    // An empty batch is refused (probe batch_copies, memcpy-batch: count 0 is
    // INVALID_VALUE on the H200).
    if count == 0 {
        return Err(whole(invalid(
            "count is 0: a batch holds at least one copy",
        )));
    }
    // Safety: cuda.h's contract on the arrays.
    let (dsts, srcs, sizes, attrs, idxs) = unsafe {
        (
            slice(dsts.cast_const(), count, "dsts").map_err(whole)?,
            slice(srcs.cast_const(), count, "srcs").map_err(whole)?,
            slice(sizes.cast_const(), count, "sizes").map_err(whole)?,
            slice(attrs.cast_const(), num_attrs, "attrs").map_err(whole)?,
            slice(attr_idxs.cast_const(), num_attrs, "attrsIdxs").map_err(whole)?,
        )
    };
    check_runs(idxs, count, "Attrs", false).map_err(whole)?;
    d.batch_stream_check(s.key()).map_err(whole)?;
    // An attribute's error is the batch's (failIdx SIZE_MAX on the H200), not its first
    // copy's.
    let mut orders = Vec::with_capacity(attrs.len());
    for a in attrs {
        let checked =
            check_copy_flags(a.flags).and_then(|()| SrcAccessOrder::of(a.src_access_order));
        orders.push(checked.map_err(whole)?);
    }
    for i in 0..count {
        check_copy(d, dsts[i], srcs[i], sizes[i]).map_err(|e| (Some(i), e))?;
    }
    if let Some(k) = orders
        .iter()
        .position(|&o| o == SrcAccessOrder::DuringApiCall)
    {
        check_read_in_call(s).map_err(|e| (Some(idxs[k]), e))?;
    }
    for i in 0..count {
        let (dst, src, n) = (dsts[i], srcs[i], sizes[i]);
        // Recorded on the H200 (probe batch_copies, "batch of 3, two attributes"): a batch
        // whose third copy had 0 bytes was refused (CUDA_ERROR_INVALID_VALUE) after its
        // first two copies were issued and done. That copy was also device to device and
        // read during the call; section memcpy-batch-zero asks which of the two the
        // driver refuses.
        if n == 0 {
            return Err((Some(i), invalid("a batch's copy of 0 bytes")));
        }
        let issued = match orders[run_of(idxs, i)] {
            // Safety: the caller's contract on host sides, read now.
            SrcAccessOrder::DuringApiCall => unsafe {
                copy_in_call(s, || copies::cuMemcpy(dst, src, n))
            },
            // Safety: as cuMemcpyAsync's.
            SrcAccessOrder::Stream | SrcAccessOrder::Any => unsafe {
                copies::cuMemcpyAsync(dst, src, n, s)
            },
        };
        issued.map_err(|e| (Some(i), e))?;
    }
    Ok(())
}

/// What the batch checks of one copy before it issues any: cuMemcpy's NULL sides, a
/// page-locked side's length, and the device sides' memory (mapped, accessible to the
/// current device, long enough), as cuMemcpyAsync checks them when it queues. A pageable
/// host side is checked when its copy is issued (read, or staged, then), so a batch whose
/// pageable pointer is bad has issued the copies before that one.
fn check_copy(d: &Driver, dst: CUdeviceptr, src: CUdeviceptr, n: usize) -> CuResult<()> {
    if dst == 0 || src == 0 {
        return Err(invalid("a copy's destination or source is NULL"));
    }
    if n == 0 {
        return Ok(());
    }
    for p in [dst, src] {
        if let Some(fits) = d.page_locked(p, n as u64) {
            fits?;
        }
    }
    let device_only = |p: u64| {
        (d.page_locked(p, n as u64).is_none() && d.is_device_address(device_ptr(p)))
            .then(|| device_ptr(p))
    };
    d.check_copy_on(
        d.ctx_device(None)?,
        device_only(dst),
        device_only(src),
        n as u64,
    )
}

/// cuda.h's CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL, raw.
const DURING_API_CALL: u32 = 2;

/// Whether a copy whose source is read in the call can be issued on `s`: a capturing
/// stream would read the source when the graph runs, after the call: refused, before
/// the batch issues anything.
fn check_read_in_call(s: CUstream) -> CuResult<()> {
    if capturing(s)? {
        return Err(not_supported(
            "cumock does not capture a batch copy whose srcAccessOrder is \
             CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL (its source must be read in the call, \
             a graph reads it when launched)",
        ));
    }
    Ok(())
}

/// A copy whose source is read in the call (CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL):
/// after the stream's earlier work, in place.
///
/// # Safety
/// The host sides `body` copies are valid now.
unsafe fn copy_in_call(s: CUstream, body: impl FnOnce() -> CuResult<()>) -> CuResult<()> {
    check_read_in_call(s)?;
    let _order = stream(s)?;
    body()
}

// ---------------------------------------------------------------- cuMemcpy3DBatchAsync

pub(super) unsafe fn cuMemcpy3DBatchAsync_v2(
    num_ops: usize,
    ops: *mut CUDA_MEMCPY3D_BATCH_OP,
    flags: u64,
    s: CUstream,
) -> CuResult<()> {
    // Safety: cuda.h's contract on the array.
    unsafe { memcpy_3d_batch(num_ops, ops, flags, s) }.map_err(|(_, e)| e)
}

pub(super) unsafe fn cuMemcpy3DBatchAsync(
    num_ops: usize,
    ops: *mut CUDA_MEMCPY3D_BATCH_OP,
    fail_idx: *mut usize,
    flags: u64,
    s: CUstream,
) -> CuResult<()> {
    // Safety: cuda.h's contract on the array and on failIdx.
    unsafe { report(fail_idx, s, || memcpy_3d_batch(num_ops, ops, flags, s)) }
}

/// cuMemcpy3DBatchAsync: each operation as the CUDA_MEMCPY3D it describes (`as_memcpy_3d`),
/// issued as cuMemcpy3DAsync issues it, or in the call for a DURING_API_CALL source.
///
/// # Safety
/// cuda.h's contract: `ops` holds `num_ops` operations, host sides as an async copy's.
unsafe fn memcpy_3d_batch(
    num_ops: usize,
    ops: *mut CUDA_MEMCPY3D_BATCH_OP,
    flags: u64,
    s: CUstream,
) -> Result<(), BatchError> {
    let d = drv().map_err(whole)?;
    check_reserved_flags(flags).map_err(whole)?;
    // Probe batch_copies, memcpy3d-batch: numOps 0 is INVALID_VALUE on the H200.
    if num_ops == 0 {
        return Err(whole(invalid(
            "numOps is 0: a batch holds at least one copy",
        )));
    }
    // Safety: cuda.h's contract on the array.
    let ops = unsafe { slice(ops.cast_const(), num_ops, "opList") }.map_err(whole)?;
    d.batch_stream_check(s.key()).map_err(whole)?;
    let mut copies = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        let c = as_memcpy_3d(d, op).map_err(|e| (Some(i), e))?;
        textures::check_3d(d, &c).map_err(|e| (Some(i), e))?;
        if op.src_access_order == DURING_API_CALL {
            check_read_in_call(s).map_err(|e| (Some(i), e))?;
        }
        copies.push(c);
    }
    for (i, c) in copies.iter().enumerate() {
        let issued = match SrcAccessOrder::of(ops[i].src_access_order) {
            // Safety: the caller's contract on host sides, read now.
            Ok(SrcAccessOrder::DuringApiCall) => unsafe {
                copy_in_call(s, || textures::copy_3d(c))
            },
            // Safety: as cuMemcpy3DAsync's.
            _ => unsafe { textures::memcpy_3d_async(c, s) },
        };
        issued.map_err(|e| (Some(i), e))?;
    }
    Ok(())
}

/// cuda.h's CUmemorytype values of a CUDA_MEMCPY3D's sides.
const CU_MEMORYTYPE_ARRAY: u32 = 3;
const CU_MEMORYTYPE_UNIFIED: u32 = 4;

/// cuda.h's CU_MEMCPY_OPERAND_TYPE_POINTER and _ARRAY.
const OPERAND_POINTER: u32 = 1;
const OPERAND_ARRAY: u32 = 2;

/// One side of a CUDA_MEMCPY3D: memory type, address or array, start (x in bytes, y,
/// z), pitch and height.
struct Side {
    memory_type: u32,
    address: u64,
    at: [usize; 3],
    pitch: usize,
    height: usize,
}

/// A batch operation as the CUDA_MEMCPY3D that copies the same bytes. cuda.h: extents in
/// elements, none 0; an element is a byte between pointers, the array's element with one
/// array, and two arrays' elements must be the same size; a pointer's rowLength and
/// layerHeight are 0 (packed by the extent) or at least the extent's width and height.
fn as_memcpy_3d(d: &Driver, op: &CUDA_MEMCPY3D_BATCH_OP) -> CuResult<CUDA_MEMCPY3D> {
    SrcAccessOrder::of(op.src_access_order)?;
    check_copy_flags(op.flags)?;
    let [width, height, depth] = op.extent;
    if width == 0 || height == 0 || depth == 0 {
        return Err(invalid(format!(
            "the extent {width}x{height}x{depth} has a 0: width, height and depth must not be 0"
        )));
    }
    let element = |o: &CUmemcpy3DOperand, which: &str| -> CuResult<Option<u64>> {
        match o.type_ {
            OPERAND_POINTER => Ok(None),
            OPERAND_ARRAY => d
                .array_element_bytes(ArrayId::from_handle(o.op[0]))
                .map(Some),
            other => Err(invalid(format!(
                "the {which}'s type {other} is not a CUmemcpy3DOperandType"
            ))),
        }
    };
    let element = match (
        element(&op.src, "source")?,
        element(&op.dst, "destination")?,
    ) {
        (Some(a), Some(b)) if a != b => {
            return Err(invalid(format!(
                "the arrays' elements differ in size ({a} and {b} bytes)"
            )))
        }
        (a, b) => a.or(b).unwrap_or(1) as usize,
    };
    let too_large = || invalid("the copy's extent in bytes does not fit in a size_t");
    let side = |o: &CUmemcpy3DOperand, which: &str| -> CuResult<Side> {
        if o.type_ == OPERAND_ARRAY {
            let x = (o.op[1] as usize)
                .checked_mul(element)
                .ok_or_else(too_large)?;
            return Ok(Side {
                memory_type: CU_MEMORYTYPE_ARRAY,
                address: o.op[0],
                at: [x, o.op[2] as usize, o.op[3] as usize],
                pitch: 0,
                height: 0,
            });
        }
        let (row_length, layer_height) = (o.op[1] as usize, o.op[2] as usize);
        if row_length != 0 && row_length < width {
            return Err(invalid(format!(
                "the {which}'s rowLength {row_length} is less than the width {width}"
            )));
        }
        if layer_height != 0 && layer_height < height {
            return Err(invalid(format!(
                "the {which}'s layerHeight {layer_height} is less than the height {height}"
            )));
        }
        let row = if row_length == 0 { width } else { row_length };
        Ok(Side {
            memory_type: CU_MEMORYTYPE_UNIFIED,
            address: o.op[0],
            at: [0, 0, 0],
            pitch: row.checked_mul(element).ok_or_else(too_large)?,
            height: if layer_height == 0 {
                height
            } else {
                layer_height
            },
        })
    };
    let (src, dst) = (side(&op.src, "source")?, side(&op.dst, "destination")?);
    Ok(CUDA_MEMCPY3D {
        src_x_in_bytes: src.at[0],
        src_y: src.at[1],
        src_z: src.at[2],
        src_lod: 0,
        src_memory_type: src.memory_type,
        src_host: src.address as *const c_void,
        src_device: src.address,
        src_array: src.address as *mut c_void,
        reserved0: std::ptr::null_mut(),
        src_pitch: src.pitch,
        src_height: src.height,
        dst_x_in_bytes: dst.at[0],
        dst_y: dst.at[1],
        dst_z: dst.at[2],
        dst_lod: 0,
        dst_memory_type: dst.memory_type,
        dst_host: dst.address as *mut c_void,
        dst_device: dst.address,
        dst_array: dst.address as *mut c_void,
        reserved1: std::ptr::null_mut(),
        dst_pitch: dst.pitch,
        dst_height: dst.height,
        width_in_bytes: width.checked_mul(element).ok_or_else(too_large)?,
        height,
        depth,
    })
}

// ---------------------------------------------------------------- cuMemcpy3DPeer

pub(super) unsafe fn cuMemcpy3DPeer(copy: *const CUDA_MEMCPY3D_PEER) -> CuResult<()> {
    // Safety: cuda.h's contract on pCopy.
    let c = peer_as_3d(unsafe { input(copy, "pCopy") }?)?;
    // Safety: cuda.h's contract on the host sides.
    unsafe { textures::memcpy_3d(&c) }
}

pub(super) unsafe fn cuMemcpy3DPeerAsync(
    copy: *const CUDA_MEMCPY3D_PEER,
    s: CUstream,
) -> CuResult<()> {
    // Safety: cuda.h's contract on pCopy.
    let c = peer_as_3d(unsafe { input(copy, "pCopy") }?)?;
    // Safety: cuda.h's contract on the host sides of an async copy.
    unsafe { textures::memcpy_3d_async(&c, s) }
}

/// A CUDA_MEMCPY3D_PEER as the CUDA_MEMCPY3D that copies the same bytes, once its
/// contexts are known to be live: every device's memory is in one address space, so the
/// contexts say nothing more of where the bytes are. As cuMemcpyPeer (observed there),
/// NULL stands for the current context; an array side's context is ignored (cuda.h).
/// cuda.h asks cuMemcpy3D's srcLOD and dstLOD to be 0 but says nothing of the peer
/// copy's: the H200 took a device-to-device peer copy with srcLOD 1 (probe batch_copies),
/// so the mock copies as its LODs were 0 (a pointer side has no levels).
fn peer_as_3d(p: CUDA_MEMCPY3D_PEER) -> CuResult<CUDA_MEMCPY3D> {
    let d = drv()?;
    for (memory_type, ctx) in [
        (p.src_memory_type, p.src_context),
        (p.dst_memory_type, p.dst_context),
    ] {
        if memory_type == CU_MEMORYTYPE_ARRAY {
            continue;
        }
        d.ctx_device(ctx.key())?;
    }
    Ok(CUDA_MEMCPY3D {
        src_x_in_bytes: p.src_x_in_bytes,
        src_y: p.src_y,
        src_z: p.src_z,
        src_lod: 0,
        src_memory_type: p.src_memory_type,
        src_host: p.src_host,
        src_device: p.src_device,
        src_array: p.src_array,
        reserved0: std::ptr::null_mut(),
        src_pitch: p.src_pitch,
        src_height: p.src_height,
        dst_x_in_bytes: p.dst_x_in_bytes,
        dst_y: p.dst_y,
        dst_z: p.dst_z,
        dst_lod: 0,
        dst_memory_type: p.dst_memory_type,
        dst_host: p.dst_host,
        dst_device: p.dst_device,
        dst_array: p.dst_array,
        reserved1: std::ptr::null_mut(),
        dst_pitch: p.dst_pitch,
        dst_height: p.dst_height,
        width_in_bytes: p.width_in_bytes,
        height: p.height,
        depth: p.depth,
    })
}

// ---------------------------------------------------------------- prefetches and discards

/// cuMemPrefetchBatchAsync and cuMemDiscardAndPrefetchBatchAsync: each range as
/// cuMemPrefetchAsync prefetches it (the mock records the last prefetch's location, which
/// cuMemRangeGetAttribute reports), to the location `prefetchLocIdxs` gives it. Every
/// range is checked (managed memory, whole: a discard's check, which a prefetch shares)
/// before any is done. With `discard` (cuMemDiscardAndPrefetchBatchAsync) a range
/// prefetched to a device loses its contents, as on the H200.
///
/// # Safety
/// cuda.h's contract: each array holds its count of entries.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn prefetch_batch(
    dptrs: *mut CUdeviceptr,
    sizes: *mut usize,
    count: usize,
    locs: *mut CUmemLocation,
    loc_idxs: *mut usize,
    num_locs: usize,
    flags: u64,
    s: CUstream,
    discard: bool,
) -> CuResult<()> {
    let d = drv()?;
    check_reserved_flags(flags)?;
    // Safety: cuda.h's contract on the arrays.
    let (ptrs, sizes) = unsafe { ranges(dptrs, sizes, count) }?;
    // Safety: cuda.h's contract on the arrays.
    let (locs, idxs) = unsafe {
        (
            slice(locs.cast_const(), num_locs, "prefetchLocs")?,
            slice(loc_idxs.cast_const(), num_locs, "prefetchLocIdxs")?,
        )
    };
    check_runs(idxs, count, "PrefetchLocs", true)?;
    // Recorded on the H200 (probe batch_copies, "device 9"): a batch's location naming no
    // device is CUDA_ERROR_INVALID_VALUE, where cuMemPrefetchAsync's is
    // CUDA_ERROR_INVALID_DEVICE.
    for l in locs {
        if l.type_ == CU_MEM_LOCATION_TYPE_DEVICE && (l.id < 0 || l.id as usize >= d.device_count())
        {
            return Err(invalid(format!(
                "a prefetch location names device {}, which does not exist",
                l.id
            )));
        }
    }
    d.batch_stream_check(s.key())?;
    for (&p, &n) in ptrs.iter().zip(sizes) {
        d.mem_discard(p, n as u64)?;
    }
    for (i, (&p, &n)) in ptrs.iter().zip(sizes).enumerate() {
        let l = locs[run_of(idxs, i)];
        d.mem_prefetch(p, n as u64, l.type_, l.id, 0)?;
        // Recorded on the H200 (probe batch_copies, discard-batch): after a discard and a
        // prefetch to the device the host no longer reads the bytes it wrote (a discard
        // alone left them): the device got fresh pages for the range instead of its
        // contents. The recording says only "not the bytes written"; the mock gives the
        // range zeros, a fresh page's bytes, in stream order. A prefetch to the host
        // keeps them (the pages are where they were, as after the discard alone).
        if discard && l.type_ == CU_MEM_LOCATION_TYPE_DEVICE {
            // Safety: managed memory, checked above.
            unsafe { copies::cuMemsetD8Async(p, 0, n, s) }?;
        }
    }
    Ok(())
}

/// cuMemDiscardBatchAsync: each range checked as managed memory and discarded; the mock
/// keeps the bytes (`Driver::mem_discard`).
///
/// # Safety
/// cuda.h's contract: each array holds `count` entries.
pub(super) unsafe fn discard_batch(
    dptrs: *mut CUdeviceptr,
    sizes: *mut usize,
    count: usize,
    flags: u64,
    s: CUstream,
) -> CuResult<()> {
    let d = drv()?;
    check_reserved_flags(flags)?;
    // Safety: cuda.h's contract on the arrays.
    let (ptrs, sizes) = unsafe { ranges(dptrs, sizes, count) }?;
    d.batch_stream_check(s.key())?;
    for (&p, &n) in ptrs.iter().zip(sizes) {
        d.mem_discard(p, n as u64)?;
    }
    Ok(())
}

/// A prefetch or discard batch's ranges.
///
/// # Safety
/// cuda.h's contract: both arrays hold `count` entries.
unsafe fn ranges<'a>(
    dptrs: *mut CUdeviceptr,
    sizes: *mut usize,
    count: usize,
) -> CuResult<(&'a [CUdeviceptr], &'a [usize])> {
    // Probe batch_copies, prefetch-batch and discard-batch: count 0 is INVALID_VALUE on
    // the H200.
    if count == 0 {
        return Err(invalid("count is 0: a batch holds at least one range"));
    }
    // Safety: this function's contract.
    unsafe {
        Ok((
            slice(dptrs.cast_const(), count, "dptrs")?,
            slice(sizes.cast_const(), count, "sizes")?,
        ))
    }
}
