//! The mock through its C ABI: the built libcuda.so.1 loaded with libloading, its
//! exports called as a C program would call them.
#![allow(non_snake_case)]

mod common;

use cumock_abi::result::*;
use cumock_abi::{CUmemAccessDesc, CUmemAllocationProp, CUmemLocation};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

const G: usize = 2 << 20;

struct Mock {
    lib: libloading::Library,
}

fn mock() -> &'static Mock {
    static M: OnceLock<Mock> = OnceLock::new();
    M.get_or_init(|| {
        // Safety: loading the mock runs no code of ours beyond its (empty) initialisers.
        let lib = unsafe { libloading::Library::new(common::mock_lib()) }.expect("load the mock");
        let m = Mock { lib };
        assert_eq!(m.init(), CUDA_SUCCESS);
        m
    })
}

macro_rules! f {
    ($m:expr, $name:literal: fn($($t:ty),*)) => {{
        // Safety: the type is the function's C signature in cuda.h.
        #[allow(unused_unsafe)]
        let f = *unsafe { $m.lib.get::<unsafe extern "C" fn($($t),*) -> u32>(concat!($name, "\0").as_bytes()) }.expect($name);
        f
    }};
}

impl Mock {
    fn init(&self) -> u32 {
        // Safety: cuInit(0).
        unsafe { f!(self, "cuInit": fn(u32))(0) }
    }
    fn ctx(&self) {
        let mut c: *mut c_void = std::ptr::null_mut();
        // Safety: out-pointer to a local.
        unsafe {
            assert_eq!(
                f!(self, "cuDevicePrimaryCtxRetain": fn(*mut *mut c_void, c_int))(&mut c, 0),
                0
            );
            assert_eq!(f!(self, "cuCtxSetCurrent": fn(*mut c_void))(c), 0);
        }
    }
    fn reserve(&self, size: usize) -> u64 {
        let mut p = 0u64;
        // Safety: out-pointer to a local.
        assert_eq!(
            unsafe {
                f!(self, "cuMemAddressReserve": fn(*mut u64, usize, usize, u64, u64))(
                    &mut p, size, 0, 0, 0,
                )
            },
            0
        );
        p
    }
    fn create(&self, size: usize, handle_types: i32) -> Result<u64, u32> {
        let prop = CUmemAllocationProp {
            type_: 1,
            requested_handle_types: handle_types,
            location: CUmemLocation { type_: 1, id: 0 },
            ..Default::default()
        };
        let mut h = 0u64;
        // Safety: pointers to locals.
        match unsafe {
            f!(self, "cuMemCreate": fn(*mut u64, usize, *const CUmemAllocationProp, u64))(
                &mut h, size, &prop, 0,
            )
        } {
            0 => Ok(h),
            e => Err(e),
        }
    }
    fn map(&self, va: u64, size: usize, h: u64) -> u32 {
        // Safety: plain values.
        unsafe { f!(self, "cuMemMap": fn(u64, usize, usize, u64, u64))(va, size, 0, h, 0) }
    }
    fn unmap(&self, va: u64, size: usize) -> u32 {
        // Safety: plain values.
        unsafe { f!(self, "cuMemUnmap": fn(u64, usize))(va, size) }
    }
    fn release(&self, h: u64) -> u32 {
        // Safety: a plain value.
        unsafe { f!(self, "cuMemRelease": fn(u64))(h) }
    }
    fn free(&self, va: u64, size: usize) -> u32 {
        // Safety: plain values.
        unsafe { f!(self, "cuMemAddressFree": fn(u64, usize))(va, size) }
    }
    fn grant(&self, va: u64, size: usize) -> u32 {
        let d = CUmemAccessDesc {
            location: CUmemLocation { type_: 1, id: 0 },
            flags: 3,
        };
        // Safety: one descriptor, as count says.
        unsafe {
            f!(self, "cuMemSetAccess": fn(u64, usize, *const CUmemAccessDesc, usize))(
                va, size, &d, 1,
            )
        }
    }
    fn htod(&self, dst: u64, src: &[u8]) -> u32 {
        // Safety: src is a live slice of the length given.
        unsafe {
            f!(self, "cuMemcpyHtoD_v2": fn(u64, *const c_void, usize))(
                dst,
                src.as_ptr().cast(),
                src.len(),
            )
        }
    }
    fn dtoh(&self, dst: &mut [u8], src: u64) -> u32 {
        // Safety: dst is a live slice of the length given.
        unsafe {
            f!(self, "cuMemcpyDtoH_v2": fn(*mut c_void, u64, usize))(
                dst.as_mut_ptr().cast(),
                src,
                dst.len(),
            )
        }
    }
}

#[test]
fn null_out_pointers_are_errors_not_crashes() {
    let m = mock();
    // Safety: NULL is what is under test; the mock must check it.
    unsafe {
        assert_eq!(
            f!(m, "cuMemAddressReserve": fn(*mut u64, usize, usize, u64, u64))(
                std::ptr::null_mut(),
                G,
                0,
                0,
                0
            ),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            f!(m, "cuMemCreate": fn(*mut u64, usize, *const CUmemAllocationProp, u64))(
                std::ptr::null_mut(),
                G,
                std::ptr::null(),
                0
            ),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            f!(m, "cuMemGetAllocationGranularity": fn(*mut usize, *const CUmemAllocationProp, c_int))(
                std::ptr::null_mut(),
                std::ptr::null(),
                0
            ),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            f!(m, "cuDeviceGetName": fn(*mut c_char, c_int, c_int))(std::ptr::null_mut(), 10, 0),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            f!(m, "cuMemSetAccess": fn(u64, usize, *const CUmemAccessDesc, usize))(
                0x1000,
                G,
                std::ptr::null(),
                1
            ),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            f!(m, "cuGetErrorName": fn(u32, *mut *const c_char))(0, std::ptr::null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
    }
}

#[test]
fn grow_alias_and_copy_through_the_c_abi() {
    let m = mock();
    m.ctx();
    let va = m.reserve(16 * G);
    let a = m.create(G, 0).unwrap();
    let b = m.create(G, 0).unwrap();
    assert_eq!(m.map(va, G, a), 0);
    assert_eq!(m.map(va + G as u64, G, b), 0);
    assert_eq!(m.map(va + 4 * G as u64, G, a), 0, "an alias of a");
    assert_eq!(m.htod(va, &[1]), CUDA_ERROR_INVALID_VALUE, "no access yet");
    assert_eq!(m.grant(va, 2 * G), 0);
    assert_eq!(m.grant(va + 4 * G as u64, G), 0);
    let data: Vec<u8> = (0..G + 8192).map(|i| (i % 253) as u8).collect();
    assert_eq!(m.htod(va + 4096, &data), 0);
    let mut back = vec![0u8; data.len()];
    assert_eq!(m.dtoh(&mut back, va + 4096), 0);
    assert_eq!(back, data);
    let mut alias = vec![0u8; 100];
    assert_eq!(m.dtoh(&mut alias, va + 4 * G as u64 + 4096), 0);
    assert_eq!(alias, data[..100]);
    assert_eq!(m.unmap(va, 2 * G), 0);
    assert_eq!(m.unmap(va + 4 * G as u64, G), 0);
    assert_eq!(m.release(a), 0);
    assert_eq!(m.release(b), 0);
    assert_eq!(m.free(va, 16 * G), 0);
}

#[test]
fn get_proc_address_hands_out_working_functions() {
    let m = mock();
    let mut pfn: *mut c_void = std::ptr::null_mut();
    let mut status = -1;
    // Safety: a NUL-terminated name and out-pointers to locals.
    let r = unsafe {
        f!(m, "cuGetProcAddress_v2": fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_int))(
            c"cuMemAddressReserve".as_ptr(),
            &mut pfn,
            12000,
            0,
            &mut status,
        )
    };
    assert_eq!((r, status), (0, 0));
    assert!(!pfn.is_null());
    // Safety: the pointer is cuMemAddressReserve's, with that signature.
    let reserve: unsafe extern "C" fn(*mut u64, usize, usize, u64, u64) -> u32 =
        unsafe { std::mem::transmute(pfn) };
    let mut va = 0u64;
    // Safety: out-pointer to a local.
    assert_eq!(unsafe { reserve(&mut va, G, 0, 0, 0) }, 0);
    assert_eq!(m.free(va, G), 0);
}

#[test]
fn error_names_and_strings_are_the_real_drivers() {
    let m = mock();
    let mut s: *const c_char = std::ptr::null();
    // Safety: out-pointer to a local; the string is static.
    unsafe {
        assert_eq!(
            f!(m, "cuGetErrorString": fn(u32, *mut *const c_char))(
                CUDA_ERROR_INVALID_VALUE,
                &mut s
            ),
            0
        );
        assert_eq!(CStr::from_ptr(s).to_str().unwrap(), "invalid argument");
        assert_eq!(
            f!(m, "cuGetErrorName": fn(u32, *mut *const c_char))(CUDA_ERROR_NOT_SUPPORTED, &mut s),
            0
        );
        assert_eq!(
            CStr::from_ptr(s).to_str().unwrap(),
            "CUDA_ERROR_NOT_SUPPORTED"
        );
    }
}

#[test]
fn functions_not_emulated_say_not_supported() {
    let m = mock();
    // Safety: a function that is not emulated (graphics interop) ignores its arguments.
    let r = unsafe { f!(m, "cuGraphicsUnregisterResource": fn())() };
    assert_eq!(r, CUDA_ERROR_NOT_SUPPORTED);
}

/// Open fds that are the mock's memory (other tests run in parallel and open files).
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|l| l.to_string_lossy().starts_with("/memfd:cumock-allocation"))
        .count()
}

#[test]
fn ten_thousand_export_import_cycles_leave_no_fd_open() {
    let m = mock();
    let before = open_fds();
    let h = m.create(G, 1).unwrap();
    let export = f!(m, "cuMemExportToShareableHandle": fn(*mut c_void, u64, c_int, u64));
    let import = f!(m, "cuMemImportFromShareableHandle": fn(*mut u64, *mut c_void, c_int));
    for _ in 0..10_000 {
        let mut fd: c_int = -1;
        let mut h2 = 0u64;
        // Safety: out-pointers to locals; the fd value travels in the pointer, as cuda.h says.
        unsafe {
            assert_eq!(export((&mut fd as *mut c_int).cast(), h, 1, 0), 0);
            assert_eq!(import(&mut h2, fd as isize as *mut c_void, 1), 0);
            libc::close(fd);
        }
        assert_eq!(m.release(h2), 0);
    }
    assert_eq!(m.release(h), 0);
    assert_eq!(open_fds(), before, "fds leaked by export/import");
}

#[test]
fn foreign_fds_are_refused_and_nothing_is_mapped() {
    let m = mock();
    let import = f!(m, "cuMemImportFromShareableHandle": fn(*mut u64, *mut c_void, c_int));
    let file = std::env::temp_dir().join(format!("cumock-import-{}", std::process::id()));
    std::fs::write(&file, vec![0u8; G]).unwrap();
    let regular = std::fs::File::open(&file).unwrap();
    let devnull = std::fs::File::open("/dev/null").unwrap();
    let mut pipe = [0; 2];
    // Safety: pipe fills two fds.
    assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);
    for fd in [
        std::os::fd::AsRawFd::as_raw_fd(&regular),
        std::os::fd::AsRawFd::as_raw_fd(&devnull),
        pipe[0],
        -1,
        1_000_000,
    ] {
        let mut h = 0u64;
        // Safety: out-pointer to a local.
        let r = unsafe { import(&mut h, fd as isize as *mut c_void, 1) };
        assert_eq!(r, CUDA_ERROR_UNKNOWN, "fd {fd}");
        assert_eq!(h, 0);
    }
    // What an import would map is the fd's file: no mapping of it may exist. (Counting
    // the process's mappings is not a test: other tests' threads add stacks meanwhile.)
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        !maps
            .lines()
            .any(|l| l.contains(&name) || l.ends_with("/dev/null")),
        "imports of foreign fds mapped memory:\n{maps}"
    );
    let _ = std::fs::remove_file(file);
}
