//! What the graph tests share: the kernel `add` (p[i] += v for i < n, two blocks of 32
//! threads over N words), reading N words back, launching it, a graph's nodes and
//! the node parameters as cuda.h lays them out. Included with `#[path]` by graphs.rs,
//! graph_rules.rs and capture_to_graph.rs (not every test binary uses it, so it is not in
//! common/mod.rs, which every one compiles); each uses only some of it.
#![allow(dead_code)]

use cuda::exports::*;
use cumock_abi::*;
use std::ffi::c_void;

/// p[i] += v for i < n.
pub const ADD: &str = r#"
.version 9.0
.target sm_90
.address_size 64
.visible .entry add(.param .u64 p, .param .u32 n, .param .u32 v)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r1, [n];
    ld.param.u32 %r2, [v];
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %ctaid.x;
    mov.u32 %r5, %ntid.x;
    mad.lo.u32 %r6, %r4, %r5, %r3;
    setp.ge.u32 %p1, %r6, %r1;
    @%p1 bra DONE;
    mul.wide.u32 %rd2, %r6, 4;
    add.u64 %rd3, %rd1, %rd2;
    ld.global.u32 %r7, [%rd3];
    add.u32 %r7, %r7, %r2;
    st.global.u32 [%rd3], %r7;
DONE:
    ret;
}
"#;

pub const N: usize = 64;

pub fn read(p: u64) -> Vec<u32> {
    let mut v = vec![0u32; N];
    // Safety: a live buffer of N words.
    assert_eq!(
        unsafe { cuMemcpyDtoH_v2(v.as_mut_ptr().cast(), p, 4 * N) },
        0
    );
    v
}

pub fn launch(f: CUfunction, s: CUstream, p: u64, v: u32) -> CUresult {
    let (mut p, mut n, mut v) = (p, N as u32, v);
    let mut args = [
        (&mut p as *mut u64).cast::<c_void>(),
        (&mut n as *mut u32).cast(),
        (&mut v as *mut u32).cast(),
    ];
    // Safety: the arguments point to live locals of the kernel's parameter types.
    unsafe {
        cuLaunchKernel(
            f,
            2,
            1,
            1,
            32,
            1,
            1,
            0,
            s,
            args.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
}

pub fn nodes(g: CUgraph) -> Vec<CUgraphNode> {
    let mut n = 0usize;
    // Safety: live locals.
    unsafe {
        assert_eq!(cuGraphGetNodes(g, std::ptr::null_mut(), &mut n), 0);
        let mut v = vec![std::ptr::null_mut(); n];
        assert_eq!(cuGraphGetNodes(g, v.as_mut_ptr(), &mut n), 0);
        v
    }
}

/// `CUDA_KERNEL_NODE_PARAMS_v1`.
#[repr(C)]
pub struct KernelParams {
    pub func: CUfunction,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: u32,
    pub kernel_params: *mut *mut c_void,
    pub extra: *mut *mut c_void,
}

/// `CUDA_MEMSET_NODE_PARAMS`.
#[repr(C)]
pub struct MemsetParams {
    pub dst: u64,
    pub pitch: usize,
    pub value: u32,
    pub element_size: u32,
    pub width: usize,
    pub height: usize,
}
