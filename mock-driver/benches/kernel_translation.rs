//! What a kernel's translation of device addresses costs (`ptx::Memory::translate` of the
//! launch's `KernelMemory`): a launch of many one-thread blocks, each loading a word of
//! one buffer and storing it, plus one, into another. Every block starts with an empty
//! cache of translated spans, so every block translates twice; the time per block is
//! that and the block's own setup, which the change of a translation moves. Two sources:
//! device memory (cuMemAlloc) and page-locked host memory (cuMemAllocHost), which a
//! kernel reaches at its host address.
//!
//! `CUMOCK_KERNEL_THREADS=1 cargo bench -p cumock-driver --bench kernel_translation`:
//! nanoseconds per block, the median of `ROUNDS` launches; machines are shared and noisy,
//! so compare figures of one run only (alternate the builds compared).

use cuda::exports::*;
use std::ffi::c_void;
use std::time::Instant;

const BLOCKS: u32 = 1 << 15;
const ROUNDS: usize = 15;

const PTX: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry touch(.param .u64 src, .param .u64 dst)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [dst];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %ctaid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
    ld.global.u32 %r2, [%rd4];
    add.s32 %r3, %r2, 1;
    st.global.u32 [%rd5], %r3;
    ret;
}
"#;

fn ok(r: cumock_abi::CUresult, what: &str) {
    assert_eq!(r, 0, "{what} failed");
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let bytes = BLOCKS as usize * 4;
    let image = std::ffi::CString::new(PTX).expect("no NUL in the PTX");
    // Safety: every pointer is a live local or memory the mock just gave; the kernel
    // touches `bytes` bytes of each buffer, the size allocated.
    unsafe {
        ok(cuInit(0), "cuInit");
        let mut ctx: cumock_abi::CUcontext = std::ptr::null_mut();
        ok(cuDevicePrimaryCtxRetain(&mut ctx, 0), "retain");
        ok(cuCtxSetCurrent(ctx), "set current");
        let mut module: cumock_abi::CUmodule = std::ptr::null_mut();
        ok(
            cuModuleLoadData(&mut module, image.as_ptr().cast()),
            "load the module",
        );
        let mut f: cumock_abi::CUfunction = std::ptr::null_mut();
        ok(
            cuModuleGetFunction(&mut f, module, c"touch".as_ptr()),
            "get the function",
        );
        let mut device_src = 0u64;
        let mut dst = 0u64;
        ok(cuMemAlloc_v2(&mut device_src, bytes), "alloc src");
        ok(cuMemAlloc_v2(&mut dst, bytes), "alloc dst");
        let mut host_src: *mut c_void = std::ptr::null_mut();
        ok(cuMemAllocHost_v2(&mut host_src, bytes), "alloc host src");
        for (name, src) in [
            ("device memory -> device memory", device_src),
            ("page-locked host -> device memory", host_src as u64),
        ] {
            let mut args = [src, dst];
            let mut params = [
                (&mut args[0] as *mut u64).cast::<c_void>(),
                (&mut args[1] as *mut u64).cast::<c_void>(),
            ];
            let mut launch = || {
                ok(
                    cuLaunchKernel(
                        f,
                        BLOCKS,
                        1,
                        1,
                        1,
                        1,
                        1,
                        0,
                        std::ptr::null_mut(),
                        params.as_mut_ptr(),
                        std::ptr::null_mut(),
                    ),
                    "launch",
                );
                ok(cuCtxSynchronize(), "synchronize");
            };
            launch();
            let per_block = median(
                (0..ROUNDS)
                    .map(|_| {
                        let t = Instant::now();
                        launch();
                        t.elapsed().as_secs_f64() * 1e9 / f64::from(BLOCKS)
                    })
                    .collect(),
            );
            println!("{name:<40} {per_block:8.1} ns a block");
        }
    }
}
