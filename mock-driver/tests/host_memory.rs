//! Page-locked host memory and 2D copies where the host_memory probe does not reach: page-
//! locked memory named by its device address in a 2D copy, copies that run past its
//! range, CUDA arrays (not emulated), and calls without a context or with a destroyed one.

use cuda::exports::*;
use cumock_abi::result::*;
use cumock_abi::CUDA_MEMCPY2D;
use std::ffi::c_void;

const HOST: u32 = 1;
const DEVICE: u32 = 2;
const ARRAY: u32 = 3;
const UNIFIED: u32 = 4;

/// Makes the primary context of device 0 current on this thread.
unsafe fn setup() {
    // Safety: out-pointers are live locals.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx: cumock_abi::CUcontext = std::ptr::null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
    }
}

fn copy2d(w: usize, h: usize) -> CUDA_MEMCPY2D {
    CUDA_MEMCPY2D {
        src_x_in_bytes: 0,
        src_y: 0,
        src_memory_type: HOST,
        src_host: std::ptr::null(),
        src_device: 0,
        src_array: std::ptr::null_mut(),
        src_pitch: w,
        dst_x_in_bytes: 0,
        dst_y: 0,
        dst_memory_type: HOST,
        dst_host: std::ptr::null_mut(),
        dst_device: 0,
        dst_array: std::ptr::null_mut(),
        dst_pitch: w,
        width_in_bytes: w,
        height: h,
    }
}

#[test]
fn page_locked_memory_is_a_device_address_in_2d_copies_and_bounded_by_its_range() {
    // Safety: every pointer is a live local, or memory the mock handed out and its size.
    unsafe {
        setup();
        let mut pin: *mut c_void = std::ptr::null_mut();
        assert_eq!(cuMemAllocHost_v2(&mut pin, 4096), 0);
        let bytes = std::slice::from_raw_parts_mut(pin.cast::<u8>(), 4096);
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i * 7) as u8;
        }
        let (mut d, mut pitch) = (0u64, 0usize);
        assert_eq!(cuMemAllocPitch_v2(&mut d, &mut pitch, 64, 4, 4), 0);
        assert_eq!(pitch, 512);

        // Page-locked memory as the DEVICE source, then as the UNIFIED destination.
        let mut c = copy2d(64, 4);
        c.src_memory_type = DEVICE;
        c.src_device = pin as u64;
        c.src_pitch = 100;
        c.dst_memory_type = DEVICE;
        c.dst_device = d;
        c.dst_pitch = pitch;
        assert_eq!(cuMemcpy2D_v2(&c), 0);
        let mut back = vec![0u8; 4096];
        let mut b = copy2d(64, 4);
        b.src_memory_type = DEVICE;
        b.src_device = d;
        b.src_pitch = pitch;
        b.dst_memory_type = UNIFIED;
        b.dst_device = back.as_mut_ptr() as u64;
        b.dst_pitch = 64;
        assert_eq!(cuMemcpy2D_v2(&b), 0);
        for y in 0..4 {
            assert_eq!(back[y * 64..y * 64 + 64], bytes[y * 100..y * 100 + 64]);
        }

        // Past the end of the page-locked range, by its device address.
        let mut out = vec![0u8; 64];
        assert_eq!(
            cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), pin as u64 + 4096 - 32, 64),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), pin as u64 + 4096 - 64, 64),
            0
        );
        assert_eq!(out[..], bytes[4096 - 64..]);
        c.src_pitch = 2000;
        assert_eq!(cuMemcpy2D_v2(&c), CUDA_ERROR_INVALID_VALUE);

        // A copy from an array handle that names no array is refused.
        let mut a = copy2d(64, 4);
        a.src_memory_type = ARRAY;
        assert_eq!(cuMemcpy2D_v2(&a), CUDA_ERROR_INVALID_VALUE);

        assert_eq!(cuMemFree_v2(d), 0);
        assert_eq!(cuMemFreeHost(pin), 0);
    }
}

#[test]
fn page_locked_memory_needs_a_context_and_peer_copies_a_live_one() {
    // Safety: as above.
    unsafe {
        assert_eq!(cuInit(0), 0);
        assert_eq!(cuCtxSetCurrent(std::ptr::null_mut()), 0);
        let mut pin: *mut c_void = std::ptr::null_mut();
        assert_eq!(
            cuMemAllocHost_v2(&mut pin, 4096),
            CUDA_ERROR_INVALID_CONTEXT
        );
        assert!(pin.is_null());
        let mut local = vec![0u8; 8192];
        assert_eq!(
            cuMemHostRegister_v2(local.as_mut_ptr().cast(), 4096, 0),
            CUDA_ERROR_INVALID_CONTEXT
        );

        setup();
        assert_eq!(cuMemHostRegister_v2(local.as_mut_ptr().cast(), 4096, 0), 0);
        let mut f = 0u32;
        assert_eq!(
            cuMemHostGetFlags(&mut f, local.as_mut_ptr().add(4095).cast()),
            0
        );
        assert_eq!(f, 2);
        assert_eq!(
            cuMemHostGetFlags(&mut f, local.as_mut_ptr().add(4096).cast()),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuMemHostUnregister(local.as_mut_ptr().cast()), 0);

        // cuMemAlloc memory of the primary context; a second context names both sides.
        let mut d = 0u64;
        assert_eq!(cuMemAlloc_v2(&mut d, 8192), 0);
        let mut other: cumock_abi::CUcontext = std::ptr::null_mut();
        assert_eq!(cuCtxCreate_v2(&mut other, 0, 0), 0);
        assert_eq!(cuMemcpyPeer(d + 4096, other, d, other, 4096), 0);
        assert_eq!(cuCtxDestroy_v2(other), 0);
        setup();
        assert_ne!(
            cuMemcpyPeer(d + 4096, other, d, std::ptr::null_mut(), 4096),
            0
        );
        assert_eq!(cuMemFree_v2(d), 0);
    }
}

#[test]
fn managed_memory_takes_the_legacy_advice_and_prefetch_forms() {
    // Safety: as above; the managed pointer is dereferenced within its size.
    unsafe {
        setup();
        let mut mp = 0u64;
        assert_eq!(cuMemAllocManaged(&mut mp, 3 * 4096, 1), 0);
        // The host reaches it at its device address.
        *(mp as *mut u32) = 0x1234_5678;
        let mut back = 0u32;
        assert_eq!(cuMemcpyDtoH_v2((&mut back as *mut u32).cast(), mp, 4), 0);
        assert_eq!(back, 0x1234_5678);
        // CU_DEVICE_CPU (-1) is the host in the legacy forms.
        assert_eq!(cuMemAdvise(mp, 4096, 3, -1), 0);
        let mut v = 7i32;
        let value = (&mut v as *mut i32).cast::<c_void>();
        assert_eq!(cuMemRangeGetAttribute(value, 4, 2, mp, 4096), 0);
        assert_eq!(v, -1);
        assert_eq!(cuMemRangeGetAttribute(value, 4, 2, mp, 8192), 0);
        assert_eq!(v, -2);
        assert_eq!(
            cuMemPrefetchAsync(mp + 4096, 8192, 0, std::ptr::null_mut()),
            0
        );
        assert_eq!(cuMemRangeGetAttribute(value, 4, 4, mp + 4096, 8192), 0);
        assert_eq!(v, 0);
        assert_eq!(
            cuMemPrefetchAsync(mp, 3 * 4096 + 1, 0, std::ptr::null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuMemFree_v2(mp), 0);
        assert_eq!(
            cuMemRangeGetAttribute(value, 4, 2, mp, 4096),
            CUDA_ERROR_INVALID_VALUE
        );
    }
}

#[test]
fn managed_memory_attaches_to_a_stream_only_as_a_whole() {
    // Safety: as above; out-pointers are live locals.
    unsafe {
        setup();
        let mut mp = 0u64;
        assert_eq!(cuMemAllocManaged(&mut mp, 3 * 4096, 1), 0);
        let mut s: cumock_abi::CUstream = std::ptr::null_mut();
        assert_eq!(cuStreamCreate(&mut s, 0), 0);
        // CU_MEM_ATTACH_GLOBAL, _HOST, _SINGLE; length 0 or the allocation's size.
        assert_eq!(cuStreamAttachMemAsync(s, mp, 0, 4), 0);
        assert_eq!(cuStreamAttachMemAsync(s, mp, 3 * 4096, 2), 0);
        assert_eq!(cuStreamAttachMemAsync(s, mp, 0, 1), 0);
        // Not one flag; singly to the NULL stream; part of the allocation; not managed.
        for (stream, ptr, len, flags) in [
            (s, mp, 0, 3),
            (std::ptr::null_mut(), mp, 0, 4),
            (s, mp, 4096, 1),
            (s, mp + 4096, 0, 1),
        ] {
            assert_eq!(
                cuStreamAttachMemAsync(stream, ptr, len, flags),
                CUDA_ERROR_INVALID_VALUE,
                "{ptr:#x} {len} {flags}"
            );
        }
        let mut plain = 0u64;
        assert_eq!(cuMemAlloc_v2(&mut plain, 4096), 0);
        assert_eq!(
            cuStreamAttachMemAsync(s, plain, 0, 1),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(cuStreamDestroy_v2(s), 0);
        assert_eq!(
            cuStreamAttachMemAsync(s, mp, 0, 1),
            CUDA_ERROR_INVALID_HANDLE
        );
        assert_eq!(cuMemFree_v2(plain), 0);
        assert_eq!(cuMemFree_v2(mp), 0);
    }
}

#[test]
fn memsets_set_page_locked_memory_named_by_its_device_address_and_stop_at_its_end() {
    // Safety: every pointer is a live local, or memory the mock handed out and its size.
    unsafe {
        setup();
        let mut pin: *mut c_void = std::ptr::null_mut();
        assert_eq!(cuMemHostAlloc(&mut pin, 4096, 0x2), 0); // CU_MEMHOSTALLOC_DEVICEMAP
        let mut d = 0u64;
        assert_eq!(cuMemHostGetDevicePointer_v2(&mut d, pin, 0), 0);
        assert_eq!(cuMemsetD8_v2(d + 1, 0xab, 10), 0);
        assert_eq!(cuMemsetD32_v2(d + 64, 0x0102_0304, 4), 0);
        assert_eq!(
            cuMemsetD16Async(d + 128, 0xbeef, 3, std::ptr::null_mut()),
            0
        );
        assert_eq!(cuCtxSynchronize(), 0);
        let bytes = std::slice::from_raw_parts(pin.cast::<u8>(), 4096);
        assert_eq!(
            &bytes[..12],
            &[0, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0]
        );
        assert_eq!(&bytes[64..72], &[4, 3, 2, 1, 4, 3, 2, 1]);
        assert_eq!(&bytes[128..134], &[0xef, 0xbe, 0xef, 0xbe, 0xef, 0xbe]);
        assert_eq!(bytes[134], 0);
        // Past the range's end: refused, nothing written.
        assert_eq!(cuMemsetD8_v2(d + 4090, 0xcd, 10), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(bytes[4090], 0);
        assert_eq!(cuMemFreeHost(pin), 0);
    }
}
