//! The mock never touches host memory it does not own. An allocator grows its range by
//! reserving the next one at the end of the last (the hint), and maps one allocation
//! across both; freeing the second reservation while that mapping reaches into it used to
//! succeed and give its address space back to the host, where the program's own memory
//! then landed and later VMM calls and kernels unmapped, protected and overwrote it.
//!
//! Here host memory with known bytes (canaries) is placed wherever the host lets us around
//! the reservations (right after them, and in the freed range should the free wrongly
//! succeed), and checked after every VMM call, copy and kernel.

use cuda::exports::*;
use cumock_abi::consts::*;
use cumock_abi::result::*;
use cumock_abi::{CUmemAccessDesc, CUmemAllocationProp, CUmemLocation};
use std::ffi::c_void;

const G: u64 = 2 << 20;

/// Host memory the test owns, filled with a pattern that nothing of the mock may change.
struct Canary {
    base: *mut u8,
    len: usize,
    what: &'static str,
}

impl Canary {
    /// Anonymous host memory exactly at `at` if the host has that range free (as glibc's
    /// malloc would get it), filled with the pattern; `None` if the range is taken.
    fn place_at(at: u64, len: usize, what: &'static str) -> Option<Self> {
        // Safety: MAP_FIXED_NOREPLACE never replaces a mapping; the new one is ours.
        let p = unsafe {
            libc::mmap(
                at as *mut c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        if p as u64 != at {
            // Safety: the mapping just made elsewhere (a kernel without NOREPLACE).
            unsafe { libc::munmap(p, len) };
            return None;
        }
        let c = Self {
            base: p.cast(),
            len,
            what,
        };
        c.fill();
        Some(c)
    }

    fn pattern(i: usize) -> u8 {
        (i as u8).wrapping_mul(31) ^ 0xa5
    }

    fn fill(&self) {
        // Safety: base..base+len is this canary's own read-write mapping.
        let bytes = unsafe { std::slice::from_raw_parts_mut(self.base, self.len) };
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = Self::pattern(i);
        }
    }

    /// Panics, naming the step, if the mapping went or a byte changed. The mapping is
    /// looked up in /proc first: reading a canary the mock unmapped or protected would
    /// kill the test instead of failing it.
    fn check(&self, after: &str) {
        let start = self.base as u64;
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let intact = maps.lines().any(|l| {
            let mut f = l.split_whitespace();
            let range = f.next().unwrap_or("");
            let perms = f.next().unwrap_or("");
            let (s, e) = range.split_once('-').unwrap_or(("0", "0"));
            let (s, e) = (
                u64::from_str_radix(s, 16).unwrap(),
                u64::from_str_radix(e, 16).unwrap(),
            );
            s <= start && start + self.len as u64 <= e && perms.starts_with("rw")
        });
        assert!(
            intact,
            "{}: host memory at {start:#x} was unmapped or protected by the mock after {after}",
            self.what
        );
        // Safety: the mapping is ours and readable (checked just above).
        let bytes = unsafe { std::slice::from_raw_parts(self.base, self.len) };
        if let Some(i) = (0..self.len).find(|&i| bytes[i] != Self::pattern(i)) {
            panic!(
                "{}: host byte at {:#x} was changed by the mock after {after}",
                self.what,
                start + i as u64
            );
        }
    }
}

impl Drop for Canary {
    fn drop(&mut self) {
        // Safety: the mapping made by `place_at`, owned by self.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// Every canary placed so far, and heap blocks too, checked after each step.
struct Canaries {
    all: Vec<Canary>,
    heap: Vec<Vec<u8>>,
}

impl Canaries {
    fn check(&self, after: &str) {
        for c in &self.all {
            c.check(after);
        }
        for (n, h) in self.heap.iter().enumerate() {
            assert!(
                h.iter().all(|&b| b == n as u8),
                "a heap block of the program changed after {after}"
            );
        }
    }
}

/// A kernel that writes `value` to `n` 32-bit words from `p`, one a thread.
const WRITER: &str = r#"
.version 9.0
.target sm_90
.address_size 64
.visible .entry fill(.param .u64 p, .param .u32 n, .param .u32 value)
{
    .reg .pred %q;
    .reg .b32 %r<6>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r1, [n];
    ld.param.u32 %r2, [value];
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.s32 %r3, %r3, %r4, %r5;
    setp.ge.u32 %q, %r3, %r1;
    @%q bra DONE;
    mul.wide.u32 %rd2, %r3, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r2;
DONE:
    ret;
}
"#;

/// Device memory asks for a POSIX fd (memory behind an fd of the mock's); host-located
/// memory may not, as on the H200 (tests/random_findings.rs).
fn prop(location: i32) -> CUmemAllocationProp {
    CUmemAllocationProp {
        type_: 1,
        requested_handle_types: if location == CU_MEM_LOCATION_TYPE_HOST {
            0
        } else {
            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
        },
        location: CUmemLocation {
            type_: location,
            id: 0,
        },
        ..Default::default()
    }
}

fn grant(location: i32, id: i32, flags: i32) -> CUmemAccessDesc {
    CUmemAccessDesc {
        location: CUmemLocation {
            type_: location,
            id,
        },
        flags,
    }
}

/// Launches `fill` over `words` words at `p` and synchronises.
///
/// # Safety
/// `f` is the module's `fill` function.
unsafe fn fill(f: cumock_abi::CUfunction, p: u64, words: u32, value: u32) -> u32 {
    let (mut p, mut n, mut v) = (p, words, value);
    let mut params = [
        (&mut p as *mut u64).cast::<c_void>(),
        (&mut n as *mut u32).cast(),
        (&mut v as *mut u32).cast(),
    ];
    // Safety: params point to live locals of the kernel's parameter types.
    let r = unsafe {
        cuLaunchKernel(
            f,
            words.div_ceil(256),
            1,
            1,
            256,
            1,
            1,
            0,
            std::ptr::null_mut(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    if r != 0 {
        return r;
    }
    // Safety: no arguments.
    unsafe { cuCtxSynchronize() }
}

#[test]
fn vmm_calls_and_kernels_never_touch_host_memory_around_or_after_a_reservation() {
    // Safety (the whole body): every pointer passed is a live local of the type the
    // call takes; device addresses are the mock's.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx: cumock_abi::CUcontext = std::ptr::null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        let ptx = std::ffi::CString::new(WRITER).unwrap();
        let mut module: cumock_abi::CUmodule = std::ptr::null_mut();
        assert_eq!(cuModuleLoadData(&mut module, ptx.as_ptr().cast()), 0);
        let mut f: cumock_abi::CUfunction = std::ptr::null_mut();
        assert_eq!(cuModuleGetFunction(&mut f, module, c"fill".as_ptr()), 0);

        let mut canaries = Canaries {
            all: Vec::new(),
            heap: (0..64).map(|n| vec![n as u8; 4096 * (1 + n % 5)]).collect(),
        };
        for location in [CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_LOCATION_TYPE_HOST] {
            let what = if location == CU_MEM_LOCATION_TYPE_HOST {
                "HOST"
            } else {
                "DEVICE"
            };
            // A, and B at A's end: how allocators grow.
            let mut a = 0u64;
            assert_eq!(cuMemAddressReserve(&mut a, (2 * G) as usize, 0, 0, 0), 0);
            let mut b = 0u64;
            assert_eq!(
                cuMemAddressReserve(&mut b, (2 * G) as usize, 0, a + 2 * G, 0),
                0
            );
            assert_eq!(b, a + 2 * G, "the hint is free address space of the mock's");
            if let Some(c) = Canary::place_at(b + 2 * G, G as usize, "after B") {
                canaries.all.push(c);
            }
            canaries.check("reserving");
            let mut h = 0u64;
            assert_eq!(cuMemCreate(&mut h, (4 * G) as usize, &prop(location), 0), 0);
            assert_eq!(cuMemMap(a, (4 * G) as usize, 0, h, 0), 0, "{what}");
            canaries.check("cuMemMap across A and B");

            assert_eq!(
                cuMemAddressFree(b, (2 * G) as usize),
                CUDA_ERROR_INVALID_VALUE,
                "{what}: freeing B while the mapping from A reaches into it"
            );
            assert_eq!(
                cuMemAddressFree(a, (2 * G) as usize),
                CUDA_ERROR_INVALID_VALUE,
                "{what}: freeing A while mapped"
            );
            // Had B gone back to the host, this is where the program's memory lands.
            let stolen = Canary::place_at(b, (2 * G) as usize, "in B's range");
            assert!(
                stolen.is_none(),
                "{what}: B's address space went back to the host while mapped"
            );
            canaries.check("the refused frees");

            let device = grant(CU_MEM_LOCATION_TYPE_DEVICE, 0, 3);
            assert_eq!(cuMemSetAccess(a, (4 * G) as usize, &device, 1), 0);
            canaries.check("cuMemSetAccess(device 0, rw)");
            if location == CU_MEM_LOCATION_TYPE_HOST {
                for flags in [1, 3, 1] {
                    let host = grant(CU_MEM_LOCATION_TYPE_HOST, 0, flags);
                    assert_eq!(cuMemSetAccess(a, (4 * G) as usize, &host, 1), 0);
                    canaries.check(&format!("cuMemSetAccess(host, {flags})"));
                }
            }
            let bytes = vec![0x5au8; (4 * G) as usize];
            assert_eq!(
                cuMemcpyHtoD_v2(a, bytes.as_ptr().cast(), bytes.len()),
                0,
                "{what}"
            );
            canaries.check("cuMemcpyHtoD over the whole mapping");
            assert_eq!(cuMemsetD32_v2(a, 7, (4 * G / 4) as usize), 0);
            canaries.check("cuMemsetD32");
            assert_eq!(fill(f, a, (4 * G / 4) as u32, 0x1234_5678), 0, "{what}");
            canaries.check("a kernel writing the whole mapping");
            let mut back = vec![0u8; 8];
            assert_eq!(
                cuMemcpyDtoH_v2(back.as_mut_ptr().cast(), b + 2 * G - 8, 8),
                0
            );
            assert_eq!(back, 0x1234_5678u32.to_le_bytes().repeat(2), "{what}");

            assert_eq!(cuMemUnmap(a, (4 * G) as usize), 0);
            canaries.check("cuMemUnmap");
            assert_eq!(cuMemRelease(h), 0);
            assert_eq!(cuMemAddressFree(b, (2 * G) as usize), 0);
            canaries.check("freeing B, unmapped");
            assert_eq!(cuMemAddressFree(a, (2 * G) as usize), 0);
            canaries.check("freeing A");
        }

        // Last, since a fault is sticky: a kernel aimed at the program's own memory (a
        // canary) faults instead of writing it.
        let target = canaries
            .all
            .first()
            .map(|c| c.base as u64)
            .unwrap_or(canaries.heap[0].as_ptr() as u64);
        assert_eq!(
            fill(f, target, 1024, 0xdead_beef),
            CUDA_ERROR_ILLEGAL_ADDRESS
        );
        canaries.check("a kernel storing to host memory");
    }
}
