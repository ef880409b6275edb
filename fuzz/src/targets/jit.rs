//! JIT options: `cuModuleLoadDataEx` and `cuLibraryLoadData` called through the mock's C
//! exports with option arrays built from the bytes, as a program would pass them: option
//! numbers (in range or not) and values that are small numbers, or pointers to buffers
//! this target owns (log buffers with their sizes, arrays of symbol names and addresses
//! with their counts). Checked: no internal error (a panic the boundary caught), no
//! write past a buffer's declared size, every module loaded can be unloaded.
//!
//! Bytes: `[function, image, count, (option, value)*]`.

use cuda::exports::*;
use cumock_abi::result::*;
use cumock_abi::{CUjit_option, CUlibrary, CUlibraryOption, CUmodule};
use std::ffi::c_void;
use std::sync::Once;

const VALID: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\n.visible .entry k(\n\t.param .u64 p\n)\n{\n\t.reg .b64 %rd<3>;\n\t.reg .b32 %r<2>;\n\tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, %tid.x;\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n\0";
const SYNTAX_ERROR: &str = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tbogus.instruction %r1;\n\tret;\n}\n\0";
const TOO_NEW: &str =
    ".version 9.9\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n\0";
const GLOBALS: &str = ".version 8.0\n.target sm_90\n.address_size 64\n.global .align 4 .u32 g = 7;\n.extern .global .align 4 .u32 e;\n.visible .entry k()\n{\n\tret;\n}\n\0";

/// A buffer the program owns: `len` usable bytes, then a canary the mock must not touch.
const LOG: usize = 1024;
const CANARY: usize = 64;

fn images() -> [Vec<u8>; 6] {
    let mut elf = vec![0u8; 128];
    elf[..4].copy_from_slice(b"\x7fELF");
    [
        VALID.as_bytes().to_vec(),
        SYNTAX_ERROR.as_bytes().to_vec(),
        TOO_NEW.as_bytes().to_vec(),
        GLOBALS.as_bytes().to_vec(),
        b"\0".to_vec(),
        elf,
    ]
}

fn setup() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Safety: the documented calls with valid out-pointers.
        unsafe {
            assert_eq!(cuInit(0), CUDA_SUCCESS);
        }
    });
    // The context is current per thread: the worker's, once (kept retained).
    thread_local!(static CURRENT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    if !CURRENT.get() {
        let mut ctx: cumock_abi::CUcontext = std::ptr::null_mut();
        // Safety: as above.
        unsafe {
            assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), CUDA_SUCCESS);
            assert_eq!(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
        }
        CURRENT.set(true);
    }
}

pub fn mutate(data: &mut Vec<u8>, rng: &mut fastrand::Rng, pool: &[Vec<u8>]) {
    if data.len() < 3 {
        data.resize(3, 0);
    }
    match rng.u8(..4) {
        0 => {
            // Another option pair.
            let at = 3 + 2 * rng.usize(..=(data.len() - 3) / 2);
            let at = at.min(data.len());
            data.splice(at..at, [rng.u8(..40), rng.u8(..)]);
            data[2] = data[2].wrapping_add(1);
        }
        1 => {
            // An option number in range.
            let i = rng.usize(..data.len());
            data[i] = rng.u8(..36);
        }
        _ => crate::mutate::bytes(data, rng, pool, &[]),
    }
}

pub fn run(data: &[u8]) -> u64 {
    setup();
    let byte = |i: usize| data.get(i).copied().unwrap_or(0);
    let images = images();
    let image = &images[byte(1) as usize % images.len()];
    let count = (byte(2) % 24) as usize;

    // The program's buffers: two log buffers, symbol names and addresses.
    let mut logs = [vec![0xa5u8; LOG + CANARY], vec![0xa5u8; LOG + CANARY]];
    let name_strings = [
        c"g".as_ptr(),
        c"e".as_ptr(),
        c"k".as_ptr(),
        c"nothing".as_ptr(),
    ];
    let mut names: Vec<*const i8> = name_strings.to_vec();
    let mut addresses: Vec<*mut c_void> = vec![std::ptr::null_mut(); names.len()];
    let mut options: Vec<CUjit_option> = Vec::with_capacity(count);
    let mut values: Vec<*mut c_void> = Vec::with_capacity(count);
    for i in 0..count {
        let (o, v) = (byte(3 + 2 * i), byte(4 + 2 * i));
        let option = match o {
            0..=39 => i32::from(o),
            40..=200 => i32::from(o % 36),
            201..=250 => -1,
            _ => [i32::MAX, i32::MIN, 1000][o as usize % 3],
        };
        // Values as the option wants them (pointers to owned buffers, sizes within them,
        // counts within the arrays); other options get a small number.
        let value: usize = match option {
            3 => logs[0].as_mut_ptr() as usize,
            5 => logs[1].as_mut_ptr() as usize,
            4 | 6 => (v as usize * 8).min(LOG),
            17 | 25 | 27 => names.as_mut_ptr() as usize,
            18 => addresses.as_mut_ptr() as usize,
            19 | 26 | 28 => v as usize % (names.len() + 1),
            _ => v as usize,
        };
        options.push(option);
        values.push(value as *mut c_void);
    }
    let values_given = values.clone();
    let (opt_ptr, val_ptr) = if count == 0 && byte(0) & 4 != 0 {
        (std::ptr::null_mut(), std::ptr::null_mut())
    } else {
        (options.as_mut_ptr(), values.as_mut_ptr())
    };
    let code = if byte(0) & 1 == 0 {
        let mut m: CUmodule = std::ptr::null_mut();
        // Safety: the image is NUL-terminated or a complete header; the arrays hold
        // `count` entries whose pointers point to live buffers of the declared sizes.
        let code = unsafe {
            cuModuleLoadDataEx(
                &mut m,
                image.as_ptr().cast(),
                count as u32,
                opt_ptr,
                val_ptr,
            )
        };
        if code == CUDA_SUCCESS {
            // Safety: a module just loaded.
            assert_eq!(unsafe { cuModuleUnload(m) }, CUDA_SUCCESS);
        }
        code
    } else {
        let mut l: CUlibrary = std::ptr::null_mut();
        let mut lib_opts: [CUlibraryOption; 2] = [0, 1];
        let mut lib_vals: [*mut c_void; 2] = [std::ptr::null_mut(); 2];
        let nlib = u32::from(byte(0) >> 1 & 1) * 2;
        // Safety: as above; the library options are two valid entries or none.
        let code = unsafe {
            cuLibraryLoadData(
                &mut l,
                image.as_ptr().cast(),
                opt_ptr,
                val_ptr,
                count as u32,
                lib_opts.as_mut_ptr(),
                lib_vals.as_mut_ptr(),
                nlib,
            )
        };
        if code == CUDA_SUCCESS {
            // Safety: a library just loaded.
            assert_eq!(unsafe { cuLibraryUnload(l) }, CUDA_SUCCESS);
        }
        code
    };
    assert_ne!(code, CUDA_ERROR_UNKNOWN, "an internal error in the mock");
    // Each log's size is the last size option given for it (none: 0 bytes).
    for (i, log) in logs.iter().enumerate() {
        let size_option = [4, 6][i];
        let declared = options
            .iter()
            .rposition(|o| *o == size_option)
            .map_or(0, |k| (values_given[k] as usize).min(LOG));
        assert!(
            log[declared..].iter().all(|b| *b == 0xa5),
            "log buffer {i} written past its declared {declared} bytes"
        );
    }
    names.truncate(name_strings.len());
    (count as u64) << 16 | u64::from(code) << 8 | u64::from(byte(0) & 1)
}
