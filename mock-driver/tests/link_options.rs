//! The driver linker's options that change the image: CU_JIT_MAX_REGISTERS holds each
//! kernel's registers, as cuFuncGetAttribute reports them (numba-cuda's max_registers).

use cuda::exports::*;
use std::ffi::{c_int, c_void};

const CU_JIT_MAX_REGISTERS: u32 = 0;
const CU_JIT_INPUT_PTX: u32 = 1;
const CU_FUNC_ATTRIBUTE_NUM_REGS: u32 = 4;

/// A kernel declaring 64 registers.
const PTX: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
    .visible .entry k() { .reg .b32 %r<64>; mov.u32 %r1, 1; ret; }\n\0";

/// Links PTX with the register cap given, loads the image and reads k's registers.
unsafe fn registers_after_link(cap: Option<u32>) -> c_int {
    // Safety: every pointer is a live local, or what the mock handed out.
    unsafe {
        let mut opts = [CU_JIT_MAX_REGISTERS as _];
        let mut vals = [cap.unwrap_or(0) as usize as *mut c_void];
        let n = u32::from(cap.is_some());
        let mut link = std::ptr::null_mut();
        assert_eq!(
            cuLinkCreate_v2(n, opts.as_mut_ptr(), vals.as_mut_ptr(), &mut link),
            0
        );
        let name = c"k.ptx";
        let r = cuLinkAddData_v2(
            link,
            CU_JIT_INPUT_PTX as _,
            PTX.as_ptr() as *mut c_void,
            PTX.len(),
            name.as_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        assert_eq!(r, 0);
        let (mut image, mut size) = (std::ptr::null_mut(), 0usize);
        assert_eq!(cuLinkComplete(link, &mut image, &mut size), 0);
        let mut module = std::ptr::null_mut();
        assert_eq!(cuModuleLoadData(&mut module, image), 0);
        assert_eq!(cuLinkDestroy(link), 0);
        let mut f = std::ptr::null_mut();
        assert_eq!(cuModuleGetFunction(&mut f, module, c"k".as_ptr()), 0);
        let mut regs: c_int = 0;
        assert_eq!(
            cuFuncGetAttribute(&mut regs, CU_FUNC_ATTRIBUTE_NUM_REGS as _, f),
            0
        );
        assert_eq!(cuModuleUnload(module), 0);
        regs
    }
}

#[test]
fn the_linkers_register_cap_holds_each_kernels_registers() {
    // Safety: out-pointers are live locals.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx = std::ptr::null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        let free = registers_after_link(None);
        assert!(free > 38, "uncapped: {free} registers");
        assert_eq!(registers_after_link(Some(38)), 38);
        assert_eq!(registers_after_link(Some(255)), free);
    }
}

/// Two kernels (the second with shared memory) and 40 bytes of `.global` variables.
const PTX_TWO: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
    .global .align 1 .b8 flag;\n.global .align 8 .u64 words[4];\n\
    .visible .entry first() { .reg .b32 %r<5>; mov.u32 %r1, 1; ret; }\n\
    .visible .entry second() { .shared .align 4 .b8 s[132]; .reg .b32 %r<9>; \
    mov.u32 %r1, 1; st.shared.u32 [s], %r1; ret; }\n\0";

/// Links PTX_TWO with an info log of `cap` bytes, CU_JIT_LOG_VERBOSE as given: the log's
/// text and the size written back.
unsafe fn link_info_log(verbose: bool, cap: usize) -> (String, usize) {
    const CU_JIT_INFO_LOG_BUFFER: u32 = 3;
    const CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: u32 = 4;
    const CU_JIT_LOG_VERBOSE: u32 = 12;
    let mut buf = vec![0x55u8; cap.max(1)];
    // Safety: every pointer is a live local, or what the mock handed out.
    unsafe {
        let mut opts = [
            CU_JIT_INFO_LOG_BUFFER as _,
            CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES as _,
            CU_JIT_LOG_VERBOSE as _,
        ];
        let mut vals = [
            buf.as_mut_ptr() as *mut c_void,
            cap as *mut c_void,
            usize::from(verbose) as *mut c_void,
        ];
        let mut link = std::ptr::null_mut();
        assert_eq!(
            cuLinkCreate_v2(3, opts.as_mut_ptr(), vals.as_mut_ptr(), &mut link),
            0
        );
        let r = cuLinkAddData_v2(
            link,
            CU_JIT_INPUT_PTX as _,
            PTX_TWO.as_ptr() as *mut c_void,
            PTX_TWO.len(),
            c"two.ptx".as_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        assert_eq!(r, 0);
        let (mut image, mut size) = (std::ptr::null_mut(), 0usize);
        assert_eq!(cuLinkComplete(link, &mut image, &mut size), 0);
        let written = vals[1] as usize;
        assert_eq!(cuLinkDestroy(link), 0);
        let end = buf.iter().position(|&b| b == 0).expect("NUL-terminated");
        (String::from_utf8(buf[..end].to_vec()).unwrap(), written)
    }
}

#[test]
fn a_verbose_link_writes_ptxas_info_lines() {
    // Safety: out-pointers are live locals.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx = std::ptr::null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        let (log, written) = link_info_log(true, 4096);
        // ptxas -v's shape: gmem (1 byte, then 32 at 8-byte alignment), then the entries
        // last first, their registers as cuFuncGetAttribute says, shared bytes when any.
        assert_eq!(
            log,
            "ptxas info    : 40 bytes gmem\n\
             ptxas info    : Compiling entry function 'second' for 'sm_90'\n\
             ptxas info    : Used 9 registers, 132 bytes smem\n\
             ptxas info    : Compiling entry function 'first' for 'sm_90'\n\
             ptxas info    : Used 5 registers\n"
        );
        assert_eq!(written, log.len());
        // Without CU_JIT_LOG_VERBOSE the info log stays empty, as ptxas without -v.
        assert_eq!(link_info_log(false, 4096).0, "");
        // A short buffer gets the log cut, NUL-terminated, its size written back.
        let (cut, written) = link_info_log(true, 16);
        assert_eq!(cut, "ptxas info    :"); // 15 bytes and the NUL
        assert_eq!(written, 16);
    }
}
