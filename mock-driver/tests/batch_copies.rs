//! CUDA 12.8 and 13.0's batched memory calls and the 3D copies between contexts (probe
//! batch_copies asks the H200 the same): cuMemcpyBatchAsync (12.8's form with failIdx,
//! 13.0's `_v2`), cuMemcpy3DBatchAsync (pointers and CUDA arrays), cuMemPrefetchBatchAsync,
//! cuMemDiscardBatchAsync, cuMemDiscardAndPrefetchBatchAsync, cuMemcpy3DPeer(Async):
//! the bytes they move, and their misuse (attribute indices, NULL arrays, the legacy
//! stream, bad extents and flags).

use cuda::exports::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

const STREAM_ORDER: u32 = 1;
const DURING_API_CALL: u32 = 2;
const ANY: u32 = 3;
const CU_STREAM_LEGACY: CUstream = 0x1 as CUstream;
const CU_STREAM_PER_THREAD: CUstream = 0x2 as CUstream;
/// The captures here are thread-local: a global-mode capture (0) makes the other tests'
/// cuMemAlloc, on libtest's other threads, STREAM_CAPTURE_UNSUPPORTED and invalidates
/// the capture, as CUDA's capture modes say (seen once, on a fresh CI run).
const CAPTURE_THREAD_LOCAL: CUstreamCaptureMode = 1;

fn setup() -> CUcontext {
    // Safety: pointers to live locals.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx: CUcontext = null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        ctx
    }
}

fn stream() -> CUstream {
    let mut s: CUstream = null_mut();
    // Safety: a live out-pointer.
    assert_eq!(unsafe { cuStreamCreate(&mut s, 1) }, 0);
    s
}

fn alloc(n: usize) -> CUdeviceptr {
    let mut p = 0;
    // Safety: a live out-pointer.
    assert_eq!(unsafe { cuMemAlloc_v2(&mut p, n) }, 0);
    p
}

fn sync(s: CUstream) {
    // Safety: a live stream.
    assert_eq!(unsafe { cuStreamSynchronize(s) }, 0);
}

fn download(p: CUdeviceptr, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    // Safety: a live buffer of n bytes.
    assert_eq!(unsafe { cuMemcpyDtoH_v2(v.as_mut_ptr().cast(), p, n) }, 0);
    v
}

fn upload(p: CUdeviceptr, bytes: &[u8]) {
    // Safety: a live buffer.
    assert_eq!(
        unsafe { cuMemcpyHtoD_v2(p, bytes.as_ptr().cast(), bytes.len()) },
        0
    );
}

fn attr(order: u32) -> CUmemcpyAttributes {
    CUmemcpyAttributes {
        src_access_order: order,
        ..Default::default()
    }
}

/// A batch through 12.8's form: the result and failIdx (sentinel 77 when not written).
fn batch_v1(
    dsts: &mut [CUdeviceptr],
    srcs: &mut [CUdeviceptr],
    sizes: &mut [usize],
    attrs: &mut [CUmemcpyAttributes],
    idxs: &mut [usize],
    s: CUstream,
) -> (CUresult, usize) {
    let mut fail = 77usize;
    // Safety: live arrays of the lengths passed.
    let r = unsafe {
        cuMemcpyBatchAsync(
            dsts.as_mut_ptr(),
            srcs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            dsts.len(),
            attrs.as_mut_ptr(),
            idxs.as_mut_ptr(),
            attrs.len(),
            &mut fail,
            s,
        )
    };
    (r, fail)
}

#[test]
fn a_batch_copies_host_and_device_memory_in_stream_order() {
    setup();
    let s = stream();
    let (a, b, c) = (alloc(4096), alloc(4096), alloc(4096));
    let first: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
    upload(c, &[0xEE; 4096]);
    // Copy 0 from pageable memory in stream order, copy 1 from a buffer read in the
    // call (overwritten as soon as the call returns), copy 2 device to device.
    let mut ephemeral = [0x5Au8; 64];
    let mut dsts = [a, b, c];
    let mut srcs = [first.as_ptr() as u64, ephemeral.as_ptr() as u64, a];
    let mut sizes = [4096usize, 64, 0];
    let mut attrs = [attr(STREAM_ORDER), attr(DURING_API_CALL)];
    let mut idxs = [0usize, 1];
    // Safety: live arrays of 3 and 2 entries.
    let r = unsafe {
        cuMemcpyBatchAsync_v2(
            dsts.as_mut_ptr(),
            srcs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            3,
            attrs.as_mut_ptr(),
            idxs.as_mut_ptr(),
            2,
            s,
        )
    };
    // As on the H200 (probe batch_copies): the copy of 0 bytes is refused when the batch
    // reaches it, the two before it issued and done.
    assert_eq!(r, CUDA_ERROR_INVALID_VALUE);
    ephemeral.fill(0);
    std::hint::black_box(&ephemeral);
    sync(s);
    assert_eq!(download(a, 4096), first);
    assert_eq!(download(b, 64), vec![0x5A; 64]);
    // The refused copy of 0 bytes copied nothing.
    assert_eq!(download(c, 4096), vec![0xEE; 4096]);

    // 12.8's form, device to host, one attribute for both copies; failIdx SIZE_MAX, as
    // the H200 writes it on success.
    let (mut h1, mut h2) = (vec![0u8; 4096], vec![0u8; 64]);
    let (r, fail) = batch_v1(
        &mut [h1.as_mut_ptr() as u64, h2.as_mut_ptr() as u64],
        &mut [a, b],
        &mut [4096, 64],
        &mut [attr(ANY)],
        &mut [0],
        s,
    );
    assert_eq!((r, fail), (CUDA_SUCCESS, usize::MAX));
    sync(s);
    assert_eq!(h1, first);
    assert_eq!(h2, vec![0x5A; 64]);
}

#[test]
fn a_batch_follows_its_streams_earlier_work() {
    setup();
    let s = stream();
    let (a, b) = (alloc(1 << 20), alloc(1 << 20));
    // A memset queued before the batch: the batch's copy reads what it wrote.
    // Safety: live memory.
    assert_eq!(unsafe { cuMemsetD8Async(a, 0x3C, 1 << 20, s) }, 0);
    let (r, _) = batch_v1(
        &mut [b],
        &mut [a],
        &mut [1 << 20],
        &mut [attr(DURING_API_CALL)],
        &mut [0],
        s,
    );
    assert_eq!(r, CUDA_SUCCESS);
    sync(s);
    assert!(download(b, 1 << 20).iter().all(|&x| x == 0x3C));
}

#[test]
fn misused_batches_are_refused_with_the_failing_copy_named() {
    setup();
    let s = stream();
    let (a, b) = (alloc(4096), alloc(4096));
    upload(b, &[1; 4096]);
    let host = [9u8; 16];
    let h = host.as_ptr() as u64;
    let none = usize::MAX;
    // Attribute indices: first not 0, not increasing, last past count, more than count.
    let cases: [(&[usize], CUresult, usize); 4] = [
        (&[1], CUDA_ERROR_INVALID_VALUE, none),
        (&[0, 0], CUDA_ERROR_INVALID_VALUE, none),
        (&[0, 2], CUDA_ERROR_INVALID_VALUE, none),
        (&[0, 1, 1], CUDA_ERROR_INVALID_VALUE, none),
    ];
    for (idxs, code, at) in cases {
        let mut attrs = vec![attr(STREAM_ORDER); idxs.len()];
        let (r, fail) = batch_v1(
            &mut [a, b],
            &mut [h, h],
            &mut [16, 16],
            &mut attrs,
            &mut idxs.to_vec(),
            s,
        );
        assert_eq!((r, fail), (code, at), "attrsIdxs {idxs:?}");
    }
    // An invalid srcAccessOrder is the batch's error, not its copies' (the H200's
    // failIdx: SIZE_MAX).
    let (r, fail) = batch_v1(
        &mut [a, b],
        &mut [h, h],
        &mut [16, 16],
        &mut [attr(STREAM_ORDER), attr(0)],
        &mut [0, 1],
        s,
    );
    assert_eq!((r, fail), (CUDA_ERROR_INVALID_VALUE, none));
    // Flags other than PREFER_OVERLAP_WITH_COMPUTE.
    let mut bad_flags = attr(STREAM_ORDER);
    bad_flags.flags = 2;
    let (r, fail) = batch_v1(&mut [a], &mut [h], &mut [16], &mut [bad_flags], &mut [0], s);
    assert_eq!((r, fail), (CUDA_ERROR_INVALID_VALUE, none));
    // The legacy stream, NULL or named (failIdx untouched, as on the H200); the per-thread
    // default stream is a stream.
    for legacy in [null_mut(), CU_STREAM_LEGACY] {
        let (r, fail) = batch_v1(
            &mut [a],
            &mut [h],
            &mut [16],
            &mut [attr(1)],
            &mut [0],
            legacy,
        );
        assert_eq!((r, fail), (CUDA_ERROR_INVALID_VALUE, 77));
    }
    let (r, _) = batch_v1(
        &mut [a],
        &mut [h],
        &mut [16],
        &mut [attr(1)],
        &mut [0],
        CU_STREAM_PER_THREAD,
    );
    assert_eq!(r, CUDA_SUCCESS);
    // A device range past its allocation in copy 1: nothing is issued, copy 0 included.
    let (r, fail) = batch_v1(
        &mut [b, a + 4000],
        &mut [h, h],
        &mut [16, 200],
        &mut [attr(1)],
        &mut [0],
        s,
    );
    assert_eq!((r, fail), (CUDA_ERROR_INVALID_VALUE, 1));
    // Page-locked memory read past its end in copy 1: nothing is issued either.
    let mut pinned: *mut c_void = null_mut();
    // Safety: a live out-pointer.
    assert_eq!(unsafe { cuMemAllocHost_v2(&mut pinned, 4096) }, 0);
    let (r, fail) = batch_v1(
        &mut [b, a],
        &mut [h, pinned as u64 + 4000],
        &mut [16, 200],
        &mut [attr(1)],
        &mut [0],
        s,
    );
    assert_eq!((r, fail), (CUDA_ERROR_INVALID_VALUE, 1));
    // A NULL destination.
    let (r, fail) = batch_v1(&mut [0], &mut [h], &mut [16], &mut [attr(1)], &mut [0], s);
    assert_eq!((r, fail), (CUDA_ERROR_INVALID_VALUE, 0));
    sync(s);
    assert_eq!(download(b, 16), vec![1; 16]);
    // NULL arrays with a count, and an empty batch.
    let mut attrs = [attr(1)];
    let mut idxs = [0usize];
    let mut sizes = [16usize];
    let mut dsts = [a];
    // Safety: the arrays passed are live; the NULL ones are what is tested.
    unsafe {
        let r = cuMemcpyBatchAsync_v2(
            null_mut(),
            dsts.as_mut_ptr(),
            sizes.as_mut_ptr(),
            1,
            attrs.as_mut_ptr(),
            idxs.as_mut_ptr(),
            1,
            s,
        );
        assert_eq!(r, CUDA_ERROR_INVALID_VALUE);
        let r = cuMemcpyBatchAsync_v2(
            dsts.as_mut_ptr(),
            dsts.as_mut_ptr(),
            sizes.as_mut_ptr(),
            1,
            null_mut(),
            null_mut(),
            1,
            s,
        );
        assert_eq!(r, CUDA_ERROR_INVALID_VALUE);
        let r = cuMemcpyBatchAsync_v2(
            dsts.as_mut_ptr(),
            dsts.as_mut_ptr(),
            sizes.as_mut_ptr(),
            0,
            attrs.as_mut_ptr(),
            idxs.as_mut_ptr(),
            0,
            s,
        );
        assert_eq!(r, CUDA_ERROR_INVALID_VALUE);
    }
}

fn pointer(ptr: u64, row_length: usize, layer_height: usize) -> CUmemcpy3DOperand {
    CUmemcpy3DOperand {
        type_: 1,
        op: [ptr, row_length as u64, layer_height as u64, 0],
    }
}

fn array_operand(array: CUarray, x: usize, y: usize, z: usize) -> CUmemcpy3DOperand {
    CUmemcpy3DOperand {
        type_: 2,
        op: [array as u64, x as u64, y as u64, z as u64],
    }
}

fn op3d(
    src: CUmemcpy3DOperand,
    dst: CUmemcpy3DOperand,
    extent: [usize; 3],
) -> CUDA_MEMCPY3D_BATCH_OP {
    CUDA_MEMCPY3D_BATCH_OP {
        src,
        dst,
        extent,
        src_access_order: STREAM_ORDER,
        flags: 0,
    }
}

fn batch3d(ops: &mut [CUDA_MEMCPY3D_BATCH_OP], flags: u64, s: CUstream) -> (CUresult, usize) {
    let mut fail = 77usize;
    // Safety: a live array of ops.len() operations.
    let r = unsafe { cuMemcpy3DBatchAsync(ops.len(), ops.as_mut_ptr(), &mut fail, flags, s) };
    (r, fail)
}

fn array3d(width: usize, height: usize, depth: usize, format: i32, channels: u32) -> CUarray {
    let mut h: CUarray = null_mut();
    let desc = CUDA_ARRAY3D_DESCRIPTOR {
        width,
        height,
        depth,
        format,
        num_channels: channels,
        flags: 0,
    };
    // Safety: live pointers.
    assert_eq!(unsafe { cuArray3DCreate_v2(&mut h, &desc) }, 0);
    h
}

#[test]
fn a_3d_batch_copies_boxes_between_pitched_memory_and_arrays() {
    setup();
    let s = stream();
    // A 4x3x2 box at the origin of an 8-byte-row, 5-row-layer volume, to packed memory.
    let volume: Vec<u8> = (0..8 * 5 * 2).map(|i| i as u8).collect();
    let packed = alloc(4 * 3 * 2);
    let mut ops = [op3d(
        pointer(volume.as_ptr() as u64, 8, 5),
        pointer(packed, 0, 0),
        [4, 3, 2],
    )];
    assert_eq!(batch3d(&mut ops, 0, s), (CUDA_SUCCESS, usize::MAX));
    sync(s);
    let expected: Vec<u8> = (0..2)
        .flat_map(|z| (0..3).flat_map(move |y| (0..4).map(move |x| (z * 40 + y * 8 + x) as u8)))
        .collect();
    assert_eq!(download(packed, 24), expected);

    // Host to a float array at an offset, and back: elements are the array's (4 bytes).
    let arr = array3d(4, 4, 2, 0x20, 1);
    let floats: Vec<f32> = (0..2 * 2 * 2).map(|i| i as f32 + 0.5).collect();
    let mut ops = [op3d(
        pointer(floats.as_ptr() as u64, 0, 0),
        array_operand(arr, 1, 2, 0),
        [2, 2, 2],
    )];
    assert_eq!(batch3d(&mut ops, 0, s).0, CUDA_SUCCESS);
    let mut back = vec![0f32; 8];
    let mut ops = [op3d(
        array_operand(arr, 1, 2, 0),
        pointer(back.as_mut_ptr() as u64, 0, 0),
        [2, 2, 2],
    )];
    ops[0].src_access_order = DURING_API_CALL;
    assert_eq!(batch3d(&mut ops, 0, s).0, CUDA_SUCCESS);
    sync(s);
    assert_eq!(back, floats);

    // 13.0's form: array to array of the same element size.
    let arr2 = array3d(4, 4, 2, 0x20, 1);
    let mut ops = [op3d(
        array_operand(arr, 0, 0, 0),
        array_operand(arr2, 0, 0, 0),
        [4, 4, 2],
    )];
    // Safety: a live array of one operation.
    assert_eq!(
        unsafe { cuMemcpy3DBatchAsync_v2(1, ops.as_mut_ptr(), 0, s) },
        CUDA_SUCCESS
    );
    let mut all = vec![0f32; 32];
    let mut ops = [op3d(
        array_operand(arr2, 0, 0, 0),
        pointer(all.as_mut_ptr() as u64, 0, 0),
        [4, 4, 2],
    )];
    assert_eq!(batch3d(&mut ops, 0, s).0, CUDA_SUCCESS);
    sync(s);
    for z in 0..2 {
        for y in 0..2 {
            for x in 0..2 {
                assert_eq!(all[z * 16 + (y + 2) * 4 + x + 1], floats[z * 4 + y * 2 + x]);
            }
        }
    }
}

#[test]
fn misused_3d_batches_are_refused_naming_the_operation() {
    setup();
    let s = stream();
    let d = alloc(4096);
    let host = [0u8; 256];
    let h = host.as_ptr() as u64;
    let good = op3d(pointer(h, 0, 0), pointer(d, 0, 0), [16, 1, 1]);
    let none = usize::MAX;
    // A zero in the extent; rowLength and layerHeight below the extent; an unknown
    // operand type; an invalid source access order; bad op flags.
    let mut zero = good;
    zero.extent = [16, 0, 1];
    let mut short_row = good;
    short_row.src = pointer(h, 8, 0);
    let mut short_layer = good;
    short_layer.extent = [16, 4, 2];
    short_layer.dst = pointer(d, 0, 2);
    let mut bad_type = good;
    bad_type.dst.type_ = 3;
    let mut bad_order = good;
    bad_order.src_access_order = 4;
    let mut bad_flags = good;
    bad_flags.flags = 0x10;
    for bad in [zero, short_row, short_layer, bad_type, bad_order, bad_flags] {
        assert_eq!(
            batch3d(&mut [good, bad], 0, s),
            (CUDA_ERROR_INVALID_VALUE, 1),
            "{bad:?}"
        );
    }
    // Arrays whose elements differ in size (4 bytes, 2 bytes).
    let (f, u) = (array3d(4, 4, 0, 0x20, 1), array3d(4, 4, 0, 0x01, 2));
    let mut ops = [op3d(
        array_operand(f, 0, 0, 0),
        array_operand(u, 0, 0, 0),
        [2, 2, 1],
    )];
    assert_eq!(batch3d(&mut ops, 0, s), (CUDA_ERROR_INVALID_VALUE, 0));
    // The call's flags, the legacy stream, an empty batch, a NULL list.
    assert_eq!(batch3d(&mut [good], 1, s), (CUDA_ERROR_INVALID_VALUE, none));
    assert_eq!(
        batch3d(&mut [good], 0, null_mut()),
        (CUDA_ERROR_INVALID_VALUE, 77)
    );
    assert_eq!(batch3d(&mut [], 0, s), (CUDA_ERROR_INVALID_VALUE, none));
    // Safety: NULL with a count is what is tested.
    assert_eq!(
        unsafe { cuMemcpy3DBatchAsync_v2(2, null_mut(), 0, s) },
        CUDA_ERROR_INVALID_VALUE
    );
    // A box past the end of its device allocation.
    let mut past = good;
    past.dst = pointer(d, 0, 0);
    past.extent = [256, 17, 1];
    assert_eq!(batch3d(&mut [past], 0, s), (CUDA_ERROR_INVALID_VALUE, 0));
    sync(s);
}

fn managed(n: usize) -> CUdeviceptr {
    let mut p = 0;
    // Safety: a live out-pointer; CU_MEM_ATTACH_GLOBAL.
    assert_eq!(unsafe { cuMemAllocManaged(&mut p, n, 1) }, 0);
    p
}

/// CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION of a range.
fn last_prefetch(p: CUdeviceptr, n: usize) -> i32 {
    let mut v = -7i32;
    // Safety: a live 4-byte out-value.
    assert_eq!(
        unsafe { cuMemRangeGetAttribute((&mut v as *mut i32).cast(), 4, 4, p, n) },
        0
    );
    v
}

fn device_loc(id: i32) -> CUmemLocation {
    CUmemLocation { type_: 1, id }
}

fn host_loc() -> CUmemLocation {
    CUmemLocation { type_: 2, id: 0 }
}

#[test]
fn batched_prefetches_and_discards_act_on_managed_ranges() {
    setup();
    let s = stream();
    let (m1, m2) = (managed(1 << 16), managed(1 << 16));
    let mut ptrs = [m1, m2];
    let mut sizes = [1usize << 16, 4096];
    // m1 to the host, m2 to device 0.
    let mut locs = [host_loc(), device_loc(0)];
    let mut idxs = [0usize, 1];
    // Safety: live arrays of the counts passed.
    unsafe {
        let r = cuMemPrefetchBatchAsync(
            ptrs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            2,
            locs.as_mut_ptr(),
            idxs.as_mut_ptr(),
            2,
            0,
            s,
        );
        assert_eq!(r, CUDA_SUCCESS);
    }
    sync(s);
    assert_eq!(last_prefetch(m2, 4096), 0);
    assert_ne!(last_prefetch(m1, 1 << 16), 0);
    // Discarding keeps the mock's bytes (the values are indeterminate per cuda.h).
    // Safety: managed memory the host may write.
    unsafe { (m1 as *mut u8).write(42) };
    // Safety: live arrays.
    unsafe {
        assert_eq!(
            cuMemDiscardBatchAsync(ptrs.as_mut_ptr(), sizes.as_mut_ptr(), 2, 0, s),
            0
        );
        sync(s);
        // A discard alone leaves the bytes where the host wrote them (as on the H200).
        assert_eq!((m1 as *const u8).read(), 42);
        let mut one_loc = [device_loc(0)];
        let mut zero = [0usize];
        let r = cuMemDiscardAndPrefetchBatchAsync(
            ptrs.as_mut_ptr(),
            sizes.as_mut_ptr(),
            2,
            one_loc.as_mut_ptr(),
            zero.as_mut_ptr(),
            1,
            0,
            s,
        );
        assert_eq!(r, CUDA_SUCCESS);
    }
    sync(s);
    assert_eq!(last_prefetch(m1, 1 << 16), 0);

    // Misuse: device memory, past the end, the legacy stream, flags, bad location
    // indices, NULL arrays, an empty batch, a device that does not exist.
    let plain = alloc(4096);
    // Safety: live arrays (or NULL where that is what is tested).
    unsafe {
        let mut loc = [device_loc(0)];
        let mut idx = [0usize];
        let prefetch = |ptrs: &mut [CUdeviceptr],
                        sizes: &mut [usize],
                        loc: &mut [CUmemLocation],
                        idx: &mut [usize],
                        flags: u64,
                        s: CUstream| {
            cuMemPrefetchBatchAsync(
                ptrs.as_mut_ptr(),
                sizes.as_mut_ptr(),
                ptrs.len(),
                loc.as_mut_ptr(),
                idx.as_mut_ptr(),
                loc.len(),
                flags,
                s,
            )
        };
        assert_eq!(
            prefetch(&mut [plain], &mut [4096], &mut loc, &mut idx, 0, s),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            prefetch(&mut [m1], &mut [1 << 17], &mut loc, &mut idx, 0, s),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            prefetch(&mut [m1], &mut [16], &mut loc, &mut idx, 0, null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            prefetch(&mut [m1], &mut [16], &mut loc, &mut idx, 1, s),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            prefetch(&mut [m1], &mut [16], &mut loc, &mut [1], 0, s),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            prefetch(
                &mut [m1, m2],
                &mut [16, 16],
                &mut [device_loc(0), host_loc()],
                &mut [0, 0],
                0,
                s
            ),
            CUDA_SUCCESS,
            "the H200 takes a repeated first index (probe batch_copies)"
        );
        assert_eq!(
            prefetch(&mut [m1], &mut [16], &mut [device_loc(9)], &mut idx, 0, s),
            CUDA_ERROR_INVALID_VALUE,
            "as on the H200, where cuMemPrefetchAsync answers CUDA_ERROR_INVALID_DEVICE"
        );
        assert_eq!(
            prefetch(&mut [], &mut [], &mut [], &mut [], 0, s),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuMemPrefetchBatchAsync(
                null_mut(),
                null_mut(),
                1,
                loc.as_mut_ptr(),
                idx.as_mut_ptr(),
                1,
                0,
                s
            ),
            CUDA_ERROR_INVALID_VALUE
        );
        let mut p = [plain];
        let mut n = [16usize];
        assert_eq!(
            cuMemDiscardBatchAsync(p.as_mut_ptr(), n.as_mut_ptr(), 1, 0, s),
            CUDA_ERROR_INVALID_VALUE
        );
        let mut p = [m1];
        assert_eq!(
            cuMemDiscardBatchAsync(p.as_mut_ptr(), n.as_mut_ptr(), 1, 0, CU_STREAM_LEGACY),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuMemDiscardBatchAsync(p.as_mut_ptr(), n.as_mut_ptr(), 1, 4, s),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuMemDiscardBatchAsync(p.as_mut_ptr(), null_mut(), 1, 0, s),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuMemDiscardBatchAsync(p.as_mut_ptr(), n.as_mut_ptr(), 1, 0, CU_STREAM_PER_THREAD),
            0
        );
    }
    // Discarded and prefetched to the device, the range no longer holds what the host
    // wrote (the H200, probe batch_copies): the mock gives it a fresh page's zeros.
    // Safety: managed memory the host may read, the stream idle.
    assert_eq!(unsafe { (m1 as *const u8).read() }, 0);
}

fn peer_copy(
    src: CUdeviceptr,
    src_ctx: CUcontext,
    dst: CUdeviceptr,
    dst_ctx: CUcontext,
    width: usize,
    height: usize,
) -> CUDA_MEMCPY3D_PEER {
    CUDA_MEMCPY3D_PEER {
        src_x_in_bytes: 0,
        src_y: 0,
        src_z: 0,
        src_lod: 0,
        src_memory_type: 2,
        src_host: null(),
        src_device: src,
        src_array: null_mut(),
        src_context: src_ctx,
        src_pitch: 64,
        src_height: height,
        dst_x_in_bytes: 8,
        dst_y: 1,
        dst_z: 0,
        dst_lod: 0,
        dst_memory_type: 2,
        dst_host: null_mut(),
        dst_device: dst,
        dst_array: null_mut(),
        dst_context: dst_ctx,
        dst_pitch: 32,
        dst_height: height + 1,
        width_in_bytes: width,
        height,
        depth: 1,
    }
}

#[test]
fn a_3d_peer_copy_moves_a_box_between_contexts() {
    let ctx = setup();
    let s = stream();
    let (src, dst) = (alloc(64 * 4), alloc(32 * 5));
    let bytes: Vec<u8> = (0..64 * 4).map(|i| i as u8).collect();
    upload(src, &bytes);
    upload(dst, &[0; 32 * 5]);
    let c = peer_copy(src, ctx, dst, null_mut(), 16, 3);
    // Safety: a live description.
    assert_eq!(unsafe { cuMemcpy3DPeer(&c) }, CUDA_SUCCESS);
    let got = download(dst, 32 * 5);
    for y in 0..3 {
        assert_eq!(
            &got[(y + 1) * 32 + 8..(y + 1) * 32 + 24],
            &bytes[y * 64..y * 64 + 16]
        );
    }
    assert_eq!(&got[..32], &[0; 32]);
    // Async, on a stream, then past the source's end: refused.
    upload(dst, &[0; 32 * 5]);
    // Safety: a live description.
    assert_eq!(unsafe { cuMemcpy3DPeerAsync(&c, s) }, CUDA_SUCCESS);
    sync(s);
    assert_eq!(download(dst, 32 * 5), got);
    // srcLOD 1 between pointers: the H200 copies (probe batch_copies), where cuMemcpy3D
    // asks for 0.
    upload(dst, &[0; 32 * 5]);
    let mut lod = c;
    lod.src_lod = 1;
    // Safety: a live description.
    assert_eq!(unsafe { cuMemcpy3DPeer(&lod) }, CUDA_SUCCESS);
    assert_eq!(download(dst, 32 * 5), got);
    let mut past = c;
    past.height = 5;
    // Safety: live descriptions; NULL is what is tested.
    unsafe {
        assert_eq!(cuMemcpy3DPeer(&past), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(cuMemcpy3DPeer(null()), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(cuMemcpy3DPeerAsync(null(), s), CUDA_ERROR_INVALID_VALUE);
    }
    // A context that is not one.
    let mut bad = c;
    bad.dst_context = 0xdead0 as CUcontext;
    // Safety: a live description naming a bogus context.
    assert_ne!(unsafe { cuMemcpy3DPeer(&bad) }, CUDA_SUCCESS);
}

#[test]
fn a_captured_batch_becomes_copy_nodes_and_a_source_read_in_the_call_is_refused() {
    setup();
    let s = stream();
    let (a, b) = (alloc(4096), alloc(4096));
    upload(a, &[7; 4096]);
    upload(b, &[0; 4096]);
    let mut g: CUgraph = null_mut();
    // Safety: a live stream and out-pointer.
    unsafe {
        assert_eq!(cuStreamBeginCapture_v2(s, CAPTURE_THREAD_LOCAL), 0);
        let (r, _) = batch_v1(
            &mut [b],
            &mut [a],
            &mut [4096],
            &mut [attr(STREAM_ORDER)],
            &mut [0],
            s,
        );
        assert_eq!(r, CUDA_SUCCESS);
        assert_eq!(cuStreamEndCapture(s, &mut g), 0);
    }
    // Captured, not run.
    assert_eq!(download(b, 4096), vec![0; 4096]);
    let mut e: CUgraphExec = null_mut();
    // Safety: live handles.
    unsafe {
        assert_eq!(cuGraphInstantiateWithFlags(&mut e, g, 0), 0);
        assert_eq!(cuGraphLaunch(e, s), 0);
    }
    sync(s);
    assert_eq!(download(b, 4096), vec![7; 4096]);

    // A source to read in the call cannot be captured (the graph reads it when launched).
    let during = [1u8; 16];
    // Safety: a live stream and out-pointer.
    unsafe {
        assert_eq!(cuStreamBeginCapture_v2(s, CAPTURE_THREAD_LOCAL), 0);
        // Copy 0 in stream order, copy 1 read in the call: nothing is captured.
        let (r, fail) = batch_v1(
            &mut [a, b],
            &mut [during.as_ptr() as u64, during.as_ptr() as u64],
            &mut [16, 16],
            &mut [attr(STREAM_ORDER), attr(DURING_API_CALL)],
            &mut [0, 1],
            s,
        );
        assert_eq!((r, fail), (CUDA_ERROR_NOT_SUPPORTED, 1));
        let mut g2: CUgraph = null_mut();
        assert_eq!(cuStreamEndCapture(s, &mut g2), 0);
        let mut n = 99usize;
        assert_eq!(cuGraphGetNodes(g2, null_mut(), &mut n), 0);
        assert_eq!(n, 0);
    }
}
