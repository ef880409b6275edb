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
