//! NVIDIA's device runtime (libcudadevrt.a, SASS only) linked through the driver's
//! linker gets cumock's own in its place: cooperative groups' grid sync
//! (cudaCGGetIntrinsicHandle, cudaCGSynchronize), as numba-cuda's cg.this_grid().sync()
//! links it. The toolkit's own libcudadevrt.a is the input.

mod common;

use cuda::exports::*;
use std::ffi::{c_void, CString};

const CU_JIT_INPUT_PTX: i32 = 1;
const CU_JIT_INPUT_LIBRARY: i32 = 4;
const BLOCKS: u32 = 24;

/// Each block's first thread writes its block's number plus one; after the grid sync,
/// every block reads its neighbour's (which only a grid-wide barrier guarantees is
/// there), twice over, with a second sync between, so the barrier works again.
const PTX: &str = "
.version 8.0
.target sm_90
.address_size 64
.extern .func (.param .b64 h) cudaCGGetIntrinsicHandle(.param .b32 scope);
.extern .func (.param .b32 s) cudaCGSynchronize(.param .b64 h, .param .b32 flags);
.visible .entry neighbours(.param .u64 out)
{
    .reg .pred %p;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %nctaid.x;
    mov.u32 %r3, %tid.x;
    setp.ne.u32 %p, %r3, 0;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    add.u32 %r4, %r1, 1;
    @!%p st.global.u32 [%rd3], %r4;
    {
        .param .b32 scope;
        .param .b64 h;
        st.param.b32 [scope], 1;
        call.uni (h), cudaCGGetIntrinsicHandle, (scope);
        ld.param.b64 %rd4, [h];
    }
    {
        .param .b64 h;
        .param .b32 f;
        .param .b32 s;
        st.param.b64 [h], %rd4;
        st.param.b32 [f], 0;
        call.uni (s), cudaCGSynchronize, (h, f);
    }
    rem.u32 %r5, %r4, %r2;
    mul.wide.u32 %rd5, %r5, 4;
    add.s64 %rd6, %rd1, %rd5;
    ld.global.u32 %r6, [%rd6];
    {
        .param .b64 h;
        .param .b32 f;
        .param .b32 s;
        st.param.b64 [h], %rd4;
        st.param.b32 [f], 0;
        call.uni (s), cudaCGSynchronize, (h, f);
    }
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd7, %rd3, %rd2;
    @!%p st.global.u32 [%rd7], %r6;
    ret;
}
";

/// Links the kernel with the toolkit's libcudadevrt.a and loads it.
unsafe fn link_with_devrt() -> cumock_abi::CUfunction {
    let devrt = common::nvcc_root().join("lib/libcudadevrt.a");
    assert!(devrt.exists(), "{} is missing", devrt.display());
    let devrt = CString::new(devrt.to_str().unwrap()).unwrap();
    let ptx = CString::new(PTX).unwrap();
    // Safety: every pointer is a live local, or what the mock handed out.
    unsafe {
        let mut link = std::ptr::null_mut();
        assert_eq!(
            cuLinkCreate_v2(0, std::ptr::null_mut(), std::ptr::null_mut(), &mut link),
            0
        );
        let r = cuLinkAddData_v2(
            link,
            CU_JIT_INPUT_PTX as _,
            ptx.as_ptr() as *mut c_void,
            PTX.len() + 1,
            c"neighbours.ptx".as_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        assert_eq!(r, 0);
        let r = cuLinkAddFile_v2(
            link,
            CU_JIT_INPUT_LIBRARY as _,
            devrt.as_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        assert_eq!(r, 0, "adding libcudadevrt.a");
        let (mut image, mut size) = (std::ptr::null_mut(), 0usize);
        assert_eq!(cuLinkComplete(link, &mut image, &mut size), 0);
        let mut module = std::ptr::null_mut();
        assert_eq!(cuModuleLoadData(&mut module, image), 0);
        assert_eq!(cuLinkDestroy(link), 0);
        let mut f = std::ptr::null_mut();
        assert_eq!(
            cuModuleGetFunction(&mut f, module, c"neighbours".as_ptr()),
            0
        );
        f
    }
}

#[test]
fn a_grid_sync_through_the_device_runtime_orders_every_block() {
    // Safety: out-pointers are live locals; the kernel's parameter is a live local
    // holding device memory the test allocated.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx = std::ptr::null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        let f = link_with_devrt();
        let bytes = 2 * BLOCKS as usize * 4;
        let mut out = 0u64;
        assert_eq!(cuMemAlloc_v2(&mut out, bytes), 0);
        assert_eq!(cuMemsetD8_v2(out, 0, bytes), 0);
        let mut params = [&mut out as *mut u64 as *mut c_void];
        let none = std::ptr::null_mut();
        let r = cuLaunchCooperativeKernel(f, BLOCKS, 1, 1, 64, 1, 1, 0, none, params.as_mut_ptr());
        assert_eq!(r, 0);
        assert_eq!(cuCtxSynchronize(), 0);
        let mut host = vec![0u32; 2 * BLOCKS as usize];
        assert_eq!(
            cuMemcpyDtoH_v2(host.as_mut_ptr() as *mut c_void, out, bytes),
            0
        );
        let want: Vec<u32> = (0..BLOCKS)
            .map(|b| b + 1)
            .chain((0..BLOCKS).map(|b| (b + 1) % BLOCKS + 1))
            .collect();
        assert_eq!(host, want);
        // An ordinary launch has no grid workspace: the sync traps, as it cannot work.
        let r = cuLaunchKernel(
            f,
            BLOCKS,
            1,
            1,
            64,
            1,
            1,
            0,
            none,
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        );
        assert_eq!(r, 0);
        assert_ne!(
            cuCtxSynchronize(),
            0,
            "a grid sync outside a cooperative launch"
        );
    }
}
