//! Issue 19, "a sandbox that holds", at the driver's API: the attacks of the review on
//! image readers, declared sizes and files, each a regression test run in a child process
//! with a memory limit and a deadline (`common::guarded`), so that a regression to a hang,
//! a fault or a runaway allocation fails here instead of hanging CI. The answers are the
//! H200's where the probe clients/probes/sandbox_images.c has them, CUDA's documentation's
//! otherwise (marked there).

mod common;

use common::guarded;
use cuda::exports::*;
use cumock_abi::result::*;
use cumock_abi::{CUfunction, CUmodule};
use std::ffi::{c_void, CString};
use std::time::Duration;

const MIB: u64 = 1 << 20;
const DEADLINE: Duration = Duration::from_secs(60);

fn init() {
    // Safety: out-pointers to live locals.
    unsafe {
        assert_eq!(cuInit(0), CUDA_SUCCESS);
        let mut ctx = std::ptr::null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), CUDA_SUCCESS);
        assert_eq!(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
    }
}

/// cuModuleLoadData of a pointer; the result, and the module on success.
fn load_at(image: *const c_void) -> (u32, CUmodule) {
    let mut m: CUmodule = std::ptr::null_mut();
    // Safety: an out-pointer to a live local; the image pointer is what the test is about.
    let r = unsafe { cuModuleLoadData(&mut m, image) };
    (r, m)
}

fn load_ptx(text: &str) -> (u32, CUmodule) {
    let c = CString::new(text).unwrap();
    load_at(c.as_ptr().cast())
}

fn function(m: CUmodule, name: &str) -> CUfunction {
    let mut f: CUfunction = std::ptr::null_mut();
    let n = CString::new(name).unwrap();
    // Safety: an out-pointer to a live local, a C string.
    assert_eq!(unsafe { cuModuleGetFunction(&mut f, m, n.as_ptr()) }, 0);
    f
}

fn launch(f: CUfunction, threads: u32) -> u32 {
    // Safety: the kernels launched here take no parameters.
    unsafe {
        cuLaunchKernel(
            f,
            1,
            1,
            1,
            threads,
            1,
            1,
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    }
}

/// Two pages: `bytes` placed at the very end of the first, readable one; the second is
/// PROT_NONE, so a reader that goes one byte past them faults (SIGSEGV).
struct AtGuardPage {
    base: *mut u8,
    start: *const c_void,
}

impl AtGuardPage {
    fn new(bytes: &[u8]) -> Self {
        assert!(bytes.len() <= 4096);
        // Safety: a fresh anonymous mapping of our own, the second page then made
        // inaccessible; the bytes are written inside the first page.
        unsafe {
            let base = libc::mmap(
                std::ptr::null_mut(),
                8192,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            ) as *mut u8;
            assert_ne!(base, libc::MAP_FAILED as *mut u8);
            assert_eq!(
                libc::mprotect(base.add(4096).cast(), 4096, libc::PROT_NONE),
                0
            );
            let start = base.add(4096 - bytes.len());
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), start, bytes.len());
            AtGuardPage {
                base,
                start: start.cast(),
            }
        }
    }
}

impl Drop for AtGuardPage {
    fn drop(&mut self) {
        // Safety: the mapping made in `new`, no longer used.
        unsafe { libc::munmap(self.base.cast(), 8192) };
    }
}

fn fatbin_header(header: u16, size: u64) -> Vec<u8> {
    let mut h = 0xBA55_ED50u32.to_le_bytes().to_vec();
    h.extend_from_slice(&1u16.to_le_bytes());
    h.extend_from_slice(&header.to_le_bytes());
    h.extend_from_slice(&size.to_le_bytes());
    h
}

/// `__fatBinC_Wrapper_t`: { magic, version, data, filename_or_fatbins }.
#[repr(C)]
struct Wrapper {
    magic: u32,
    version: u32,
    data: *const c_void,
    rest: *const c_void,
}

#[test]
fn wrapper_cycles_truncated_headers_and_overstated_sizes_are_invalid_images() {
    guarded(
        "wrapper_cycles_truncated_headers_and_overstated_sizes_are_invalid_images",
        &[],
        512 * MIB,
        DEADLINE,
        || {
            init();
            // A wrapper pointing to itself, and two pointing at each other.
            let mut own = Box::new(Wrapper {
                magic: 0x4662_43B1,
                version: 1,
                data: std::ptr::null(),
                rest: std::ptr::null(),
            });
            own.data = (&*own as *const Wrapper).cast();
            assert_eq!(load_at(own.data).0, CUDA_ERROR_INVALID_IMAGE);
            let mut a = Box::new(Wrapper {
                magic: 0x4662_43B1,
                version: 1,
                data: std::ptr::null(),
                rest: std::ptr::null(),
            });
            let b = Box::new(Wrapper {
                magic: 0x4662_43B1,
                version: 1,
                data: (&*a as *const Wrapper).cast(),
                rest: std::ptr::null(),
            });
            a.data = (&*b as *const Wrapper).cast();
            assert_eq!(load_at(a.data).0, CUDA_ERROR_INVALID_IMAGE);
            let mut m = std::ptr::null_mut();
            // Safety: an out-pointer to a live local; cuModuleLoadFatBinary takes a wrapper.
            let r = unsafe { cuModuleLoadFatBinary(&mut m, (&*own as *const Wrapper).cast()) };
            assert_eq!(r, CUDA_ERROR_INVALID_IMAGE);
            // A fatbin header cut after 8 bytes, right before unreadable memory.
            let cut = AtGuardPage::new(&fatbin_header(16, 64)[..8]);
            assert_eq!(load_at(cut.start).0, CUDA_ERROR_INVALID_IMAGE);
            // A header declaring 1 MiB of entries where 48 bytes are readable.
            let mut over = fatbin_header(16, MIB);
            over.resize(64, 0);
            let over = AtGuardPage::new(&over);
            assert_eq!(load_at(over.start).0, CUDA_ERROR_INVALID_IMAGE);
            // A header declaring sizes whose end lies past the address space: no binary,
            // as the H200 answers (probe sandbox_images, fatbin-truncated-2-64-declared).
            let wrap = AtGuardPage::new(&fatbin_header(0xffff, u64::MAX));
            assert_eq!(load_at(wrap.start).0, CUDA_ERROR_NO_BINARY_FOR_GPU);
            // Text with no NUL before unreadable memory, through every load call.
            let text = AtGuardPage::new(b".version 8.0\n.target sm_90\n");
            assert_eq!(load_at(text.start).0, CUDA_ERROR_INVALID_IMAGE);
            let mut lib = std::ptr::null_mut();
            // Safety: an out-pointer to a live local, no options.
            let r = unsafe {
                cuLibraryLoadData(
                    &mut lib,
                    text.start,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    0,
                )
            };
            assert_eq!(r, CUDA_ERROR_INVALID_IMAGE);
            // A pointer into nothing at all.
            assert_eq!(
                load_at(0xffff_0000_0000usize as *const c_void).0,
                CUDA_ERROR_INVALID_IMAGE
            );
            // And the mock still loads a good image after all of them.
            let (r, _) = load_ptx(
                ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n",
            );
            assert_eq!(r, CUDA_SUCCESS);
        },
    );
}

const HEAD_80: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";
const HEAD_81: &str = ".version 8.1\n.target sm_90\n.address_size 64\n";

fn kernel_with_param(head: &str, bytes: u64) -> String {
    format!("{head}.visible .entry k(.param .align 4 .b8 p[{bytes}]) {{ ret; }}\n")
}

#[test]
fn declared_parameter_and_shared_sizes_are_checked_at_load_as_ptxas_does() {
    guarded(
        "declared_parameter_and_shared_sizes_are_checked_at_load_as_ptxas_does",
        &[],
        512 * MIB,
        DEADLINE,
        || {
            init();
            // The review's 1 GB `.param`: refused at load, never copied at launch.
            assert_eq!(
                load_ptx(&kernel_with_param(HEAD_81, 1 << 30)).0,
                CUDA_ERROR_INVALID_PTX
            );
            // The limits ptxas 13.0 states: 32764 bytes from PTX ISA 8.1, 4352 before.
            assert_eq!(load_ptx(&kernel_with_param(HEAD_81, 32764)).0, CUDA_SUCCESS);
            assert_eq!(
                load_ptx(&kernel_with_param(HEAD_81, 32768)).0,
                CUDA_ERROR_INVALID_PTX
            );
            assert_eq!(load_ptx(&kernel_with_param(HEAD_80, 4352)).0, CUDA_SUCCESS);
            assert_eq!(
                load_ptx(&kernel_with_param(HEAD_80, 4356)).0,
                CUDA_ERROR_INVALID_PTX
            );
            // Static shared memory: the opt-in limit, 232,448 bytes, and not a byte more
            // (the H200: probe sandbox_images, static-shared-largest).
            let shared = |n: u64| {
                format!(
                    "{HEAD_80}.visible .entry k() {{ .reg .b32 %r<2>; .shared .align 4 .b8 s[{n}];\n\
                     mov.u32 %r1, s; st.shared.u32 [%r1], 1; ret; }}\n"
                )
            };
            assert_eq!(load_ptx(&shared(232_448)).0, CUDA_SUCCESS);
            assert_eq!(load_ptx(&shared(232_452)).0, CUDA_ERROR_INVALID_PTX);
        },
    );
}

#[test]
fn a_local_frame_past_the_device_limit_loads_and_its_launch_is_refused() {
    guarded(
        "a_local_frame_past_the_device_limit_loads_and_its_launch_is_refused",
        &[],
        // 512 KiB a thread for 32 threads is 16 MiB; 1.9 MB x 1024 would be 1.9 GB.
        512 * MIB,
        DEADLINE,
        || {
            init();
            let local = |n: u64| {
                format!(
                    "{HEAD_80}.visible .entry k() {{ .reg .b64 %rd<2>; .local .align 8 .b8 d[{n}];\n\
                     mov.u64 %rd1, d; st.local.u32 [%rd1+16], 1; ret; }}\n"
                )
            };
            let (r, big) = load_ptx(&local(1_900_000));
            assert_eq!(r, CUDA_SUCCESS, "ptxas takes any frame");
            assert_eq!(launch(function(big, "k"), 1024), CUDA_ERROR_INVALID_VALUE);
            assert_eq!(launch(function(big, "k"), 1), CUDA_ERROR_INVALID_VALUE);
            // The H200's limit: 523,712 bytes launch, 523,728 do not (probe
            // sandbox_images, local-largest).
            let (r, most) = load_ptx(&local(523_712));
            assert_eq!(r, CUDA_SUCCESS);
            assert_eq!(launch(function(most, "k"), 32), CUDA_SUCCESS);
            // Safety: no arguments.
            assert_eq!(unsafe { cuCtxSynchronize() }, CUDA_SUCCESS);
            let (_, over) = load_ptx(&local(523_728));
            assert_eq!(launch(function(over, "k"), 1), CUDA_ERROR_INVALID_VALUE);
        },
    );
}

/// Reads `n` bytes of a module's global `name` at `offset`.
fn read_global(m: CUmodule, name: &str, offset: u64, n: usize) -> Vec<u8> {
    let (mut at, mut size) = (0u64, 0usize);
    let c = CString::new(name).unwrap();
    let mut out = vec![0u8; n];
    // Safety: out-pointers to live locals, a host buffer of n bytes.
    unsafe {
        assert_eq!(cuModuleGetGlobal_v2(&mut at, &mut size, m, c.as_ptr()), 0);
        assert_eq!(cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), at + offset, n), 0);
    }
    out
}

#[test]
fn b128_and_huge_initialised_globals_load_costing_only_their_initialisers() {
    guarded(
        "b128_and_huge_initialised_globals_load_costing_only_their_initialisers",
        &[],
        // The review's module took 4 GB of host memory; 512 MiB is all it may use now.
        512 * MIB,
        DEADLINE,
        || {
            init();
            // The H200 loads a 1 GiB initialised variable and refuses 2 GiB - 1 bytes;
            // 4 GiB - 1 bytes load without an initialiser (probe sandbox_images,
            // huge-global-largest). Either costs only its initialiser here.
            let (r, _) = load_ptx(&format!(
                "{HEAD_81}.visible .global .align 4 .b8 big[4294967295] = {{7, 8}};\n\
                 .visible .entry k() {{ ret; }}\n"
            ));
            assert_eq!(r, CUDA_ERROR_INVALID_PTX);
            let (r, m) = load_ptx(&format!(
                "{HEAD_81}.visible .global .align 16 .b128 wide[2] = {{1, -1}};\n\
                 .visible .global .align 4 .b8 big[1073741824] = {{7, 8}};\n\
                 .visible .global .align 4 .b8 bare[4294967295];\n\
                 .visible .entry k() {{ ret; }}\n"
            ));
            assert_eq!(r, CUDA_SUCCESS);
            let mut want = vec![0u8; 32];
            want[0] = 1;
            want[16..24].fill(0xff);
            assert_eq!(read_global(m, "wide", 0, 32), want);
            assert_eq!(read_global(m, "big", 0, 4), [7, 8, 0, 0]);
            assert_eq!(read_global(m, "big", 1073741824 - 4, 4), [0; 4]);
            assert_eq!(read_global(m, "bare", 4294967295 - 4, 4), [0; 4]);
            // The module's memory goes back whole at unload.
            // Safety: the module loaded above.
            assert_eq!(unsafe { cuModuleUnload(m) }, CUDA_SUCCESS);
        },
    );
}

#[test]
fn special_files_are_refused_naming_them_and_never_read() {
    let stderr = guarded(
        "special_files_are_refused_naming_them_and_never_read",
        &[("CUMOCK_MISUSE", "1")],
        256 * MIB,
        DEADLINE,
        || {
            init();
            let dir = common::scratch(&format!("sandbox-images-{}", std::process::id()));
            let fifo = dir.join("fifo");
            let _ = std::fs::remove_file(&fifo);
            let c = CString::new(fifo.to_str().unwrap()).unwrap();
            // Safety: a NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            for path in ["/dev/zero", "/dev/urandom", "/", fifo.to_str().unwrap()] {
                let p = CString::new(path).unwrap();
                let mut m = std::ptr::null_mut();
                // Safety: an out-pointer to a live local, a C string.
                let r = unsafe { cuModuleLoad(&mut m, p.as_ptr()) };
                // As the H200 answers: a directory is out of memory, the others are no
                // image (probe sandbox_images, files).
                let want = if path == "/" {
                    CUDA_ERROR_OUT_OF_MEMORY
                } else {
                    CUDA_ERROR_INVALID_IMAGE
                };
                assert_eq!(r, want, "{path}");
            }
        },
    );
    assert!(
        stderr.contains("/dev/zero is a character device, not a regular file"),
        "{stderr}"
    );
    assert!(stderr.contains("is a FIFO"), "{stderr}");
}

#[test]
fn a_profile_that_is_a_device_is_refused_at_init_naming_it() {
    let stderr = guarded(
        "a_profile_that_is_a_device_is_refused_at_init_naming_it",
        &[("CUMOCK_PROFILE", "/dev/zero"), ("CUMOCK_MISUSE", "1")],
        256 * MIB,
        DEADLINE,
        || {
            // Safety: no pointers.
            assert_ne!(unsafe { cuInit(0) }, CUDA_SUCCESS);
        },
    );
    assert!(
        stderr.contains("CUMOCK_PROFILE=/dev/zero is a character device"),
        "{stderr}"
    );
}

#[test]
fn an_elf_cubin_is_refused_naming_the_ptx_way_out_for_nvrtc_and_cupy() {
    let stderr = guarded(
        "an_elf_cubin_is_refused_naming_the_ptx_way_out_for_nvrtc_and_cupy",
        &[("CUMOCK_MISUSE", "1")],
        256 * MIB,
        DEADLINE,
        || {
            init();
            // What nvrtcGetCUBIN hands out starts so: an ELF64 header (CuPy loads it with
            // cuModuleLoadData unless CUPY_COMPILE_WITH_PTX is set).
            let mut cubin = [0u8; 64];
            cubin[..4].copy_from_slice(b"\x7fELF");
            cubin[4] = 2; // ELFCLASS64
            cubin[5] = 1; // little-endian
            let (r, _) = load_at(cubin.as_ptr().cast());
            assert_eq!(r, CUDA_ERROR_NO_BINARY_FOR_GPU);
        },
    );
    assert!(stderr.contains("ELF cubin (SASS)"), "{stderr}");
    assert!(stderr.contains("nvrtcGetPTX"), "{stderr}");
    assert!(stderr.contains("CUPY_COMPILE_WITH_PTX=1"), "{stderr}");
}
