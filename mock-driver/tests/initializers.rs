//! A module whose variables' initialisers hold other variables' addresses: the loader
//! writes them once the variables are placed (`.u64 p = generic(x)+4`, a pointer to a
//! pointer, one byte of an address).

use cuda::exports::*;
use cumock_abi::CUmodule;
use std::ffi::c_void;

const PTX: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
    .global .align 4 .b8 x[16] = {1, 0, 0, 0, 2};\n\
    .global .align 8 .u64 p = generic(x)+4;\n\
    .global .align 8 .u64 pp = generic(p);\n\
    .global .align 1 .u8 b[2] = {0xFF(x+1), 9};\n\
    .visible .entry k() { ret; }\n\0";

/// A variable's address and its first eight bytes.
unsafe fn global(module: CUmodule, name: &std::ffi::CStr) -> (u64, [u8; 8]) {
    // Safety: out-pointers are live locals; the mock's addresses.
    unsafe {
        let (mut addr, mut size) = (0u64, 0usize);
        assert_eq!(
            cuModuleGetGlobal_v2(&mut addr, &mut size, module, name.as_ptr()),
            0
        );
        let mut bytes = [0u8; 8];
        let n = size.min(8);
        assert_eq!(
            cuMemcpyDtoH_v2(bytes.as_mut_ptr() as *mut c_void, addr, n),
            0
        );
        (addr, bytes)
    }
}

#[test]
fn variables_addresses_in_initialisers_are_written_at_load() {
    // Safety: out-pointers are live locals, or what the mock handed out.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx = std::ptr::null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        let mut module = std::ptr::null_mut();
        assert_eq!(
            cuModuleLoadData(&mut module, PTX.as_ptr() as *const c_void),
            0
        );
        let (x, xb) = global(module, c"x");
        assert_eq!(xb[..8], [1, 0, 0, 0, 2, 0, 0, 0]);
        let (p, pb) = global(module, c"p");
        assert_eq!(u64::from_le_bytes(pb), x + 4);
        let (_, ppb) = global(module, c"pp");
        assert_eq!(u64::from_le_bytes(ppb), p);
        let (_, bb) = global(module, c"b");
        assert_eq!(bb[..2], [(x + 1) as u8, 9]);
        assert_eq!(cuModuleUnload(module), 0);
    }
}
