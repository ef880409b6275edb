//! A texture object destroyed after the launch that reads it, before its kernel has run,
//! stays valid for that kernel, as on a GPU: programs destroy a texture object right
//! after the launches that use it (NVIDIA's NV12toBGRandResize sample does, its kernels
//! then read "0x1 is not a texture object" on the asynchronous mock). A launch queued
//! after the destroy still faults on the handle. Its own test binary: that fault is the
//! device's sticky error for the rest of the process.

use cuda::exports::*;
use cumock_abi::result::*;
use cumock_abi::{CUDA_RESOURCE_DESC, CUDA_TEXTURE_DESC};
use std::ffi::c_void;
use std::sync::mpsc;
use std::time::Duration;

/// `wait_for_host` spins until the host sets its flag (holding the stream's later work
/// back); `read_texel` stores texel 2 of a linear u32 texture.
const KERNELS: &str = r#"
.version 9.0
.target sm_90
.address_size 64
.visible .entry wait_for_host(.param .u64 flag)
{
    .reg .pred %p;
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [flag];
SPIN:
    ld.volatile.global.u32 %r1, [%rd1];
    setp.eq.u32 %p, %r1, 0;
    @%p bra SPIN;
    ret;
}
.visible .entry read_texel(.param .u64 tex, .param .u64 out)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [tex];
    ld.param.u64 %rd2, [out];
    mov.u32 %r5, 2;
    tex.1d.v4.u32.s32 {%r1, %r2, %r3, %r4}, [%rd1, {%r5}];
    st.global.u32 [%rd2], %r1;
    ret;
}
"#;

fn launch(f: cumock_abi::CUfunction, stream: cumock_abi::CUstream, args: &mut [u64]) {
    let mut params: Vec<*mut c_void> = args
        .iter_mut()
        .map(|a| (a as *mut u64).cast::<c_void>())
        .collect();
    // Safety: params point to live u64 locals, the kernels' parameter types.
    let r = unsafe {
        cuLaunchKernel(
            f,
            1,
            1,
            1,
            1,
            1,
            1,
            0,
            stream,
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(r, 0);
}

fn read_word(at: u64) -> u32 {
    let mut v = 0u32;
    // Safety: a live local of 4 bytes.
    assert_eq!(
        unsafe { cuMemcpyDtoH_v2((&mut v as *mut u32).cast(), at, 4) },
        0
    );
    v
}

fn write_word(at: u64, v: u32) {
    // Safety: a live local of 4 bytes.
    assert_eq!(
        unsafe { cuMemcpyHtoD_v2(at, (&v as *const u32).cast(), 4) },
        0
    );
}

/// A texture object over `texels` (linear memory of 4 u32 texels).
fn texture_over(texels: u64) -> u64 {
    let mut res = CUDA_RESOURCE_DESC {
        res_type: 2, // CU_RESOURCE_TYPE_LINEAR
        res: [0; 16],
        flags: 0,
    };
    res.res[0] = texels;
    res.res[1] = 0x03 | (1 << 32); // CU_AD_FORMAT_UNSIGNED_INT32, one channel
    res.res[2] = 16;
    let tex = CUDA_TEXTURE_DESC {
        address_mode: [1; 3],
        filter_mode: 0,
        flags: 1, // CU_TRSF_READ_AS_INTEGER
        max_anisotropy: 0,
        mipmap_filter_mode: 0,
        mipmap_level_bias: 0.0,
        min_mipmap_level_clamp: 0.0,
        max_mipmap_level_clamp: 0.0,
        border_color: [0.0; 4],
        reserved: [0; 12],
    };
    let mut h = 0u64;
    // Safety: live descriptors laid out as cuda.h's; no resource view.
    let r = unsafe {
        cuTexObjectCreate(
            &mut h,
            (&res as *const CUDA_RESOURCE_DESC).cast(),
            (&tex as *const CUDA_TEXTURE_DESC).cast(),
            std::ptr::null(),
        )
    };
    assert_eq!(r, 0);
    h
}

#[test]
fn a_texture_object_destroyed_after_its_launch_stays_valid_for_that_kernel() {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        // Safety: live out-parameters and handles made here; a NUL-terminated image.
        unsafe {
            assert_eq!(cuInit(0), 0);
            let mut ctx: cumock_abi::CUcontext = std::ptr::null_mut();
            assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
            assert_eq!(cuCtxSetCurrent(ctx), 0);
            let image = std::ffi::CString::new(KERNELS).unwrap();
            let mut module: cumock_abi::CUmodule = std::ptr::null_mut();
            assert_eq!(cuModuleLoadData(&mut module, image.as_ptr().cast()), 0);
            let (mut waiter, mut reader) = (std::ptr::null_mut(), std::ptr::null_mut());
            assert_eq!(
                cuModuleGetFunction(&mut waiter, module, c"wait_for_host".as_ptr()),
                0
            );
            assert_eq!(
                cuModuleGetFunction(&mut reader, module, c"read_texel".as_ptr()),
                0
            );
            // Four texels 10, 11, 12, 13; a flag; three result words.
            let mut mem = 0u64;
            assert_eq!(cuMemAlloc_v2(&mut mem, 256), 0);
            assert_eq!(cuMemsetD32_v2(mem, 0, 64), 0);
            let (texels, flag, out) = (mem, mem + 128, mem + 132);
            for i in 0..4 {
                write_word(texels + 4 * i, 10 + i as u32);
            }
            let mut stream: cumock_abi::CUstream = std::ptr::null_mut();
            assert_eq!(cuStreamCreate(&mut stream, 1), 0);

            // A launch held back behind the waiter; its texture destroyed meanwhile.
            launch(waiter, stream, &mut [flag]);
            let t = texture_over(texels);
            launch(reader, stream, &mut [t, out]);
            assert_eq!(cuTexObjectDestroy(t), 0);
            assert_eq!(cuStreamQuery(stream), CUDA_ERROR_NOT_READY);
            write_word(flag, 1);
            assert_eq!(cuStreamSynchronize(stream), 0);
            assert_eq!(read_word(out), 12, "the kernel read texel 2");

            // The same through a graph: captured, launched behind the waiter, the
            // texture destroyed after the graph's launch.
            write_word(flag, 0);
            let t = texture_over(texels);
            assert_eq!(cuStreamBeginCapture_v2(stream, 0), 0);
            launch(reader, stream, &mut [t, out + 4]);
            let mut graph: cumock_abi::CUgraph = std::ptr::null_mut();
            assert_eq!(cuStreamEndCapture(stream, &mut graph), 0);
            let mut exec: cumock_abi::CUgraphExec = std::ptr::null_mut();
            assert_eq!(cuGraphInstantiateWithFlags(&mut exec, graph, 0), 0);
            launch(waiter, stream, &mut [flag]);
            assert_eq!(cuGraphLaunch(exec, stream), 0);
            assert_eq!(cuTexObjectDestroy(t), 0);
            write_word(flag, 1);
            assert_eq!(cuStreamSynchronize(stream), 0);
            assert_eq!(read_word(out + 4), 12, "the graph's kernel read texel 2");

            // A launch queued after the destroy names a dead handle: a fault.
            launch(reader, stream, &mut [t, out + 8]);
            assert_eq!(cuStreamSynchronize(stream), CUDA_ERROR_ILLEGAL_ADDRESS);
        }
        let _ = tx.send(());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("still running after 60 s (a hang), or an assertion failed");
}
