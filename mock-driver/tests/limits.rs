//! The mock stays within the host's means (issue 19): page-locked, managed and device
//! memory end in CUDA_ERROR_OUT_OF_MEMORY with a message before the host runs out, and a
//! kernel that never ends ends at `CUMOCK_KERNEL_TIMEOUT`.
//!
//! Each attempt runs in a child process (this binary, re-run on one test) under guards,
//! so that a regression fails the test instead of hanging CI or waking the OOM killer:
//! the parent kills the child past a deadline or once its resident memory passes a
//! bound, and children that only reserve address space also lower their RLIMIT_AS.

use cuda::exports::*;
use cumock_abi::result::*;
use std::ffi::c_void;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ROLE: &str = "CUMOCK_LIMITS_ROLE";
const GIB: usize = 1 << 30;
const MIB: usize = 1 << 20;

fn in_child() -> bool {
    std::env::var(ROLE).is_ok()
}

/// Resident memory of a process (VmRSS, which counts the shared memory of arenas that
/// its pages were touched in), in bytes.
fn resident(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kib| kib * 1024)
}

/// Runs this file's test `test` in a child with `env`, killed past `deadline` or once
/// its resident memory passes `max_resident`; fails unless the child succeeds. Returns
/// what it wrote (stdout and stderr).
fn guarded(test: &str, env: &[(&str, &str)], deadline: Duration, max_resident: u64) -> String {
    let log = std::env::temp_dir().join(format!("cumock-limits-{}-{test}", std::process::id()));
    let file = std::fs::File::create(&log).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(ROLE, "child")
        .envs(env.iter().copied())
        .stdout(Stdio::from(file.try_clone().unwrap()))
        .stderr(Stdio::from(file))
        .spawn()
        .unwrap();
    let start = Instant::now();
    let (status, why) = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break (Some(status), String::new());
        }
        let rss = resident(child.id());
        let why = if rss > max_resident {
            format!("its resident memory reached {rss} bytes, past the guard's {max_resident}")
        } else if start.elapsed() > deadline {
            format!("it ran past the guard's {deadline:?}")
        } else {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        let _ = child.kill();
        let _ = child.wait();
        break (None, why);
    };
    let out = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    match status {
        Some(s) if s.success() => out,
        Some(s) => panic!("{test} in a child failed ({s}):\n{out}"),
        None => panic!("{test} in a child was killed: {why}\n{out}"),
    }
}

/// Limits the child's address space: what it maps, touched or not, cannot pass it.
fn limit_address_space(bytes: u64) {
    let lim = libc::rlimit {
        rlim_cur: bytes,
        rlim_max: bytes,
    };
    // Safety: setrlimit reads a plain struct.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &lim) }, 0);
}

fn physical_memory() -> u64 {
    // Safety: sysconf reads system values.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    pages as u64 * size as u64
}

/// Makes the primary context of device 0 current on this thread.
unsafe fn setup() {
    // Safety: out-pointers are live locals.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx: cumock_abi::CUcontext = std::ptr::null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
    }
}

#[test]
fn page_locked_memory_stops_below_physical_memory() {
    let phys = physical_memory();
    if !in_child() {
        // Nothing is touched: a regression maps past physical memory (and is stopped by
        // the child's RLIMIT_AS), it does not fill it.
        // The device-memory budget (which page-locked allocations share) out of the way:
        // this is the page-locked limit's test.
        let out = guarded(
            "page_locked_memory_stops_below_physical_memory",
            &[("CUMOCK_DEVICE_MEMORY", "1T")],
            Duration::from_secs(120),
            1 << 30,
        );
        assert!(
            out.contains("cumock: cuMemAllocHost_v2: CUDA_ERROR_OUT_OF_MEMORY")
                && out.contains("cumock: cuMemHostRegister_v2: CUDA_ERROR_OUT_OF_MEMORY")
                && out.contains("page-locked"),
            "{out}"
        );
        return;
    }
    limit_address_space(2 * phys + 16 * GIB as u64);
    // Safety: pointers are live locals, or memory the mock handed out, with its size.
    unsafe {
        setup();
        let mut blocks = Vec::new();
        let refused = loop {
            let mut p: *mut c_void = std::ptr::null_mut();
            let r = cuMemAllocHost_v2(&mut p, GIB);
            if r != CUDA_SUCCESS {
                break r;
            }
            blocks.push(p);
            assert!(
                (blocks.len() * GIB) as u64 <= phys,
                "{} GiB page-locked on a host of {phys} bytes",
                blocks.len()
            );
        };
        assert_eq!(refused, CUDA_ERROR_OUT_OF_MEMORY);
        // Freeing gives the room back.
        assert_eq!(cuMemFreeHost(blocks.pop().unwrap()), 0);
        let mut p: *mut c_void = std::ptr::null_mut();
        assert_eq!(cuMemAllocHost_v2(&mut p, GIB), 0);
        blocks.push(p);
        // A registration pins too: past what is left, it is refused.
        let len = 2 * GIB;
        let own = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        );
        assert_ne!(own, libc::MAP_FAILED);
        assert_eq!(cuMemHostRegister_v2(own, len, 0), CUDA_ERROR_OUT_OF_MEMORY);
        for p in blocks {
            assert_eq!(cuMemFreeHost(p), 0);
        }
        assert_eq!(cuMemHostRegister_v2(own, len, 0), 0);
        assert_eq!(cuMemHostUnregister(own), 0);
        libc::munmap(own, len);
    }
}

/// Page-locked memory the mock allocates is host memory too: it shares the budget of the
/// device memory the mock backs, so pinning and touching cannot take the host's memory
/// twice over.
#[test]
fn page_locked_and_touched_device_memory_share_one_budget() {
    const MB: usize = 1 << 20;
    if !in_child() {
        let out = guarded(
            "page_locked_and_touched_device_memory_share_one_budget",
            &[("CUMOCK_DEVICE_MEMORY", "512M")],
            Duration::from_secs(120),
            1 << 30,
        );
        assert!(
            out.contains("cumock: cuMemsetD8_v2: CUDA_ERROR_OUT_OF_MEMORY")
                && out.contains("cumock: cuMemAllocHost_v2: CUDA_ERROR_OUT_OF_MEMORY"),
            "{out}"
        );
        return;
    }
    // Safety: out-pointers are live locals; memory the mock handed out, with its size.
    unsafe {
        setup();
        let mut pinned = Vec::new();
        for _ in 0..3 {
            let mut p: *mut c_void = std::ptr::null_mut();
            assert_eq!(cuMemAllocHost_v2(&mut p, 128 * MB), 0);
            pinned.push(p);
        }
        let mut d = 0u64;
        assert_eq!(cuMemAlloc_v2(&mut d, 256 * MB), 0);
        // 384 MiB pinned + 256 MiB touched > 512 MiB.
        assert_eq!(cuMemsetD8_v2(d, 1, 256 * MB), CUDA_ERROR_OUT_OF_MEMORY);
        assert_eq!(cuMemFreeHost(pinned.pop().unwrap()), 0);
        assert_eq!(cuMemsetD8_v2(d, 1, 256 * MB), 0, "the room comes back");
        // And the other way: no room left to pin.
        let mut p: *mut c_void = std::ptr::null_mut();
        assert_eq!(
            cuMemAllocHost_v2(&mut p, 128 * MB),
            CUDA_ERROR_OUT_OF_MEMORY
        );
        assert_eq!(cuMemFree_v2(d), 0);
        assert_eq!(cuMemAllocHost_v2(&mut p, 128 * MB), 0);
        pinned.push(p);
        for p in pinned {
            assert_eq!(cuMemFreeHost(p), 0);
        }
    }
}

/// Managed memory is host memory the program touches directly, so it counts whole when
/// allocated, in one budget with the device memory the mock backs: a program cannot take
/// the host's memory twice over (numba-cuda's managed-allocation test once filled a
/// 24 GiB host that way).
#[test]
fn managed_memory_and_touched_device_memory_share_one_budget() {
    if !in_child() {
        let out = guarded(
            "managed_memory_and_touched_device_memory_share_one_budget",
            &[("CUMOCK_DEVICE_MEMORY", "8G")],
            Duration::from_secs(120),
            1 << 30,
        );
        assert!(
            out.contains("cuMemAllocManaged: CUDA_ERROR_OUT_OF_MEMORY")
                && out.contains("CUMOCK_DEVICE_MEMORY=8G"),
            "{out}"
        );
        return;
    }
    // Safety: out-pointers are live locals.
    unsafe {
        setup();
        let bound = 8 * GIB as u64;
        let mut held = 0u64;
        let mut ptrs = Vec::new();
        let refused = loop {
            let mut d = 0u64;
            let r = cuMemAllocManaged(&mut d, GIB, 1);
            if r != CUDA_SUCCESS {
                break r;
            }
            ptrs.push(d);
            held += GIB as u64;
            assert!(held <= bound, "{held} bytes of managed memory granted");
        };
        assert_eq!(refused, CUDA_ERROR_OUT_OF_MEMORY);
        assert_eq!(held, bound, "the whole budget, no more");
        // Device memory touched now finds no room either.
        let mut dev = 0u64;
        assert_eq!(cuMemAlloc_v2(&mut dev, 64 * MIB), 0);
        assert_eq!(cuMemsetD8_v2(dev, 1, 64 * MIB), CUDA_ERROR_OUT_OF_MEMORY);
        let d = ptrs.pop().unwrap();
        assert_eq!(cuMemFree_v2(d), 0);
        assert_eq!(cuMemsetD8_v2(dev, 1, 64 * MIB), 0, "the room comes back");
        let mut d = 0u64;
        assert_eq!(
            cuMemAllocManaged(&mut d, GIB, 1),
            CUDA_ERROR_OUT_OF_MEMORY,
            "the touched device memory holds its part"
        );
        assert_eq!(cuMemFree_v2(dev), 0);
        assert_eq!(cuMemAllocManaged(&mut d, GIB, 1), 0);
    }
}

#[test]
fn filling_the_device_ends_at_cumock_device_memory() {
    const LIMIT: usize = 256 * MIB;
    if !in_child() {
        // The guard allows four times the limit: a regression fills far more than that
        // (the profile's 141 GB) and is killed, failing here.
        let out = guarded(
            "filling_the_device_ends_at_cumock_device_memory",
            &[("CUMOCK_DEVICE_MEMORY", "256M")],
            Duration::from_secs(120),
            4 * LIMIT as u64,
        );
        assert!(
            out.contains("cumock: cuMemsetD8_v2: CUDA_ERROR_OUT_OF_MEMORY")
                && out.contains("cumock: cuMemcpyHtoD_v2: CUDA_ERROR_OUT_OF_MEMORY")
                && out.contains("CUMOCK_DEVICE_MEMORY=256M"),
            "{out}"
        );
        return;
    }
    // Safety: out-pointers are live locals; the source of the copy is a live buffer.
    unsafe {
        setup();
        let (mut free, mut total) = (0usize, 0usize);
        assert_eq!(cuMemGetInfo_v2(&mut free, &mut total), 0);
        assert!(
            total > 16 * LIMIT,
            "the profile's device is larger than the limit"
        );
        // Allocate the whole device (untouched: free of host memory), then fill it.
        let chunk = 64 * MIB;
        let mut chunks = Vec::new();
        loop {
            let mut d = 0u64;
            if cuMemAlloc_v2(&mut d, chunk) != CUDA_SUCCESS {
                break;
            }
            chunks.push(d);
        }
        assert!(chunks.len() * chunk > 16 * LIMIT);
        let mut filled = 0;
        let refused = loop {
            let r = cuMemsetD8_v2(chunks[filled], 0x5a, chunk);
            if r != CUDA_SUCCESS {
                break r;
            }
            filled += 1;
            assert!(filled * chunk <= LIMIT, "{filled} chunks of 64 MiB filled");
        };
        assert_eq!(refused, CUDA_ERROR_OUT_OF_MEMORY);
        assert_eq!(
            filled * chunk,
            LIMIT,
            "everything up to the limit was backed"
        );
        let src = vec![1u8; 4096];
        assert_eq!(
            cuMemcpyHtoD_v2(chunks[filled], src.as_ptr().cast(), src.len()),
            CUDA_ERROR_OUT_OF_MEMORY
        );
        // Freeing a touched allocation gives its room back.
        assert_eq!(cuMemFree_v2(chunks[0]), 0);
        assert_eq!(cuMemsetD8_v2(chunks[filled], 0x5a, chunk), 0);
        for &d in &chunks[1..] {
            assert_eq!(cuMemFree_v2(d), 0);
        }
    }
}

const KERNELS: &str = r#"
.version 9.0
.target sm_90
.address_size 64
.visible .entry spin()
{
    .reg .b32 %r<3>;
    .reg .pred %p<2>;
    mov.u32 %r1, 0;
LOOP:
    add.u32 %r1, %r1, 1;
    setp.ne.u32 %p1, %r1, 0;
    bra LOOP;
}
.visible .entry store(.param .u64 p)
{
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    st.global.u64 [%rd1], %rd1;
    ret;
}
"#;

/// Loads `KERNELS` and returns the function `name`.
unsafe fn kernel(name: &str) -> cumock_abi::CUfunction {
    let image = std::ffi::CString::new(KERNELS).unwrap();
    let name = std::ffi::CString::new(name).unwrap();
    // Safety: out-pointers are live locals, the image and name live C strings.
    unsafe {
        let mut m: cumock_abi::CUmodule = std::ptr::null_mut();
        assert_eq!(cuModuleLoadData(&mut m, image.as_ptr().cast()), 0);
        let mut f: cumock_abi::CUfunction = std::ptr::null_mut();
        assert_eq!(cuModuleGetFunction(&mut f, m, name.as_ptr()), 0);
        f
    }
}

#[test]
fn a_runaway_kernel_ends_at_cumock_kernel_timeout() {
    if !in_child() {
        // Without the watchdog the kernel spins for ever: the guard's deadline fails it.
        let out = guarded(
            "a_runaway_kernel_ends_at_cumock_kernel_timeout",
            &[("CUMOCK_KERNEL_TIMEOUT", "0.5")],
            Duration::from_secs(60),
            1 << 30,
        );
        assert!(
            out.contains("kernel `spin`")
                && out.contains("time limit of 0.5 s")
                && out.contains("CUMOCK_KERNEL_TIMEOUT=SECONDS"),
            "{out}"
        );
        return;
    }
    // Safety: out-pointers are live locals; the kernels take no parameters.
    unsafe {
        setup();
        let f = kernel("spin");
        let t = Instant::now();
        let launch = |grid: u32| {
            cuLaunchKernel(
                f,
                grid,
                1,
                1,
                32,
                1,
                1,
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        assert_eq!(launch(1), 0);
        assert_eq!(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_TIMEOUT);
        assert!(t.elapsed() >= Duration::from_millis(500));
        // Sticky, as a step limit's timeout is.
        assert_eq!(launch(1), CUDA_ERROR_LAUNCH_TIMEOUT);
    }
}

/// A kernel touching memory past CUMOCK_DEVICE_MEMORY ends with CUDA_ERROR_OUT_OF_MEMORY,
/// its message naming the kernel and the setting. Stopped because the host could not back
/// the memory it touched, it met the mock's limit, not a fault of the device: the program is told once (CUDA_ERROR_OUT_OF_MEMORY),
/// and after it frees memory the device works on. Sticky, it took every later call of the
/// process with it (CuPy's test_empty_huge_size failed 107 later tests).
#[test]
fn a_kernel_stopped_by_cumock_device_memory_leaves_the_device_usable() {
    if !in_child() {
        let out = guarded(
            "a_kernel_stopped_by_cumock_device_memory_leaves_the_device_usable",
            &[("CUMOCK_DEVICE_MEMORY", "64M")],
            Duration::from_secs(120),
            1 << 30,
        );
        assert!(
            out.contains("kernel `store`") && out.contains("CUMOCK_DEVICE_MEMORY=64M"),
            "{out}"
        );
        return;
    }
    // Safety: out-pointers and parameters are live locals.
    unsafe {
        setup();
        let f = kernel("store");
        let launch = |d: u64| {
            let mut p = d;
            let mut params = [(&mut p as *mut u64).cast::<c_void>()];
            cuLaunchKernel(
                f,
                1,
                1,
                1,
                1,
                1,
                1,
                0,
                std::ptr::null_mut(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        let (mut a, mut b) = (0u64, 0u64);
        assert_eq!(cuMemAlloc_v2(&mut a, 48 * MIB), 0);
        assert_eq!(cuMemAlloc_v2(&mut b, 48 * MIB), 0);
        assert_eq!(launch(a), 0);
        assert_eq!(cuCtxSynchronize(), 0);
        assert_eq!(launch(b), 0);
        assert_eq!(cuCtxSynchronize(), CUDA_ERROR_OUT_OF_MEMORY);
        // Said once: the device itself is fine.
        assert_eq!(cuCtxSynchronize(), 0, "the stop is not sticky");
        let mut small = 0u64;
        assert_eq!(cuMemAlloc_v2(&mut small, MIB), 0, "allocations go on");
        assert_eq!(cuMemsetD8_v2(small, 7, MIB), 0);
        assert_eq!(cuMemFree_v2(small), 0);
        // With the room given back, the same kernel runs.
        assert_eq!(cuMemFree_v2(a), 0);
        assert_eq!(launch(b), 0);
        assert_eq!(cuCtxSynchronize(), 0);
        let mut back = 0u64;
        assert_eq!(cuMemcpyDtoH_v2((&mut back as *mut u64).cast(), b, 8), 0);
        assert_eq!(back, b, "the kernel's store landed");
        assert_eq!(cuMemFree_v2(b), 0);
    }
}

/// Every way to ask for memory refuses a request past the device or the host with
/// CUDA_ERROR_OUT_OF_MEMORY (the H200's answer for cuMemAlloc, cuMemCreate and
/// cuMemAllocAsync of too much: cases create-oom, probes vmm_fidelity and pools_ipc),
/// counts nothing for it, and leaves the next small request to succeed: cuMemGetInfo's
/// free memory is as before, and the whole CUMOCK_DEVICE_MEMORY budget is still there.
#[test]
fn refused_huge_allocations_leave_every_budget_as_it_was() {
    const TIB: usize = 1 << 40;
    if !in_child() {
        guarded(
            "refused_huge_allocations_leave_every_budget_as_it_was",
            &[("CUMOCK_DEVICE_MEMORY", "64M")],
            Duration::from_secs(120),
            1 << 30,
        );
        return;
    }
    // Safety: out-pointers are live locals; memory the mock handed out, with its size.
    unsafe {
        setup();
        let info = || {
            let (mut free, mut total) = (0usize, 0usize);
            assert_eq!(cuMemGetInfo_v2(&mut free, &mut total), 0);
            (free, total)
        };
        let before = info();
        let mut total_mem = 0usize;
        assert_eq!(cuDeviceTotalMem_v2(&mut total_mem, 0), 0);
        assert_eq!(
            total_mem, before.1,
            "cuDeviceTotalMem is cuMemGetInfo's total"
        );
        assert!(before.0 <= before.1, "free {} of {}", before.0, before.1);
        let prop = cumock_abi::CUmemAllocationProp {
            type_: 1,
            location: cumock_abi::CUmemLocation { type_: 1, id: 0 },
            ..Default::default()
        };
        let mut d = 0u64;
        let mut h = 0u64;
        let mut p: *mut c_void = std::ptr::null_mut();
        let mut pitch = 0usize;
        for round in 0..2 {
            let refused = [
                ("cuMemAlloc", cuMemAlloc_v2(&mut d, TIB)),
                ("cuMemCreate", cuMemCreate(&mut h, TIB, &prop, 0)),
                (
                    "cuMemAllocAsync",
                    cuMemAllocAsync(&mut d, TIB, std::ptr::null_mut()),
                ),
                ("cuMemAllocManaged", cuMemAllocManaged(&mut d, TIB, 1)),
                ("cuMemHostAlloc", cuMemHostAlloc(&mut p, TIB, 0)),
                ("cuMemAllocHost", cuMemAllocHost_v2(&mut p, TIB)),
                (
                    "cuMemAllocPitch",
                    cuMemAllocPitch_v2(&mut d, &mut pitch, 1 << 20, 1 << 20, 4),
                ),
                // Past CUMOCK_DEVICE_MEMORY only: what counts at allocation.
                (
                    "cuMemAllocManaged 128M",
                    cuMemAllocManaged(&mut d, 128 * MIB, 1),
                ),
                ("cuMemHostAlloc 128M", cuMemHostAlloc(&mut p, 128 * MIB, 0)),
            ];
            for (what, r) in refused {
                assert_eq!(r, CUDA_ERROR_OUT_OF_MEMORY, "{what}, round {round}");
            }
            assert_eq!(info(), before, "nothing counted, round {round}");
            // The next small request of each kind succeeds, and the whole budget is there.
            assert_eq!(cuMemAlloc_v2(&mut d, MIB), 0);
            assert_eq!(cuMemsetD8_v2(d, 1, MIB), 0);
            assert_eq!(cuMemFree_v2(d), 0);
            assert_eq!(cuMemAllocAsync(&mut d, MIB, std::ptr::null_mut()), 0);
            assert_eq!(cuMemsetD8_v2(d, 1, MIB), 0);
            assert_eq!(cuMemFreeAsync(d, std::ptr::null_mut()), 0);
            assert_eq!(cuCtxSynchronize(), 0);
            assert_eq!(cuMemCreate(&mut h, 2 * MIB, &prop, 0), 0);
            assert_eq!(cuMemRelease(h), 0);
            assert_eq!(
                cuMemAllocManaged(&mut d, 64 * MIB, 1),
                0,
                "the whole budget"
            );
            assert_eq!(cuMemFree_v2(d), 0);
            assert_eq!(cuMemHostAlloc(&mut p, 64 * MIB, 0), 0, "the whole budget");
            assert_eq!(cuMemFreeHost(p), 0);
            assert_eq!(cuMemAlloc_v2(&mut d, 64 * MIB), 0);
            assert_eq!(cuMemsetD8_v2(d, 1, 64 * MIB), 0, "the whole budget");
            assert_eq!(cuMemFree_v2(d), 0);
            assert_eq!(info(), before, "everything given back, round {round}");
        }
    }
}

/// cuda.h's CUDA_MEMSET_NODE_PARAMS.
#[repr(C)]
struct MemsetParams {
    dst: u64,
    pitch: usize,
    value: u32,
    element_size: u32,
    width: usize,
    height: usize,
}

/// A graph's memset node stopped past CUMOCK_DEVICE_MEMORY is said once too, as a
/// kernel's stop is: the device works on, and the same graph runs once there is room.
#[test]
fn a_graph_node_stopped_by_cumock_device_memory_leaves_the_device_usable() {
    if !in_child() {
        let out = guarded(
            "a_graph_node_stopped_by_cumock_device_memory_leaves_the_device_usable",
            &[("CUMOCK_DEVICE_MEMORY", "64M")],
            Duration::from_secs(120),
            1 << 30,
        );
        assert!(
            out.contains("a graph node failed") && out.contains("CUMOCK_DEVICE_MEMORY=64M"),
            "{out}"
        );
        return;
    }
    // Safety: out-pointers and parameters are live locals; handles the mock made.
    unsafe {
        setup();
        let (mut a, mut b) = (0u64, 0u64);
        assert_eq!(cuMemAlloc_v2(&mut a, 48 * MIB), 0);
        assert_eq!(cuMemAlloc_v2(&mut b, 48 * MIB), 0);
        assert_eq!(cuMemsetD8_v2(a, 1, 48 * MIB), 0);
        let mut g: cumock_abi::CUgraph = std::ptr::null_mut();
        assert_eq!(cuGraphCreate(&mut g, 0), 0);
        let mp = MemsetParams {
            dst: b,
            pitch: 0,
            value: 9,
            element_size: 1,
            width: 48 * MIB,
            height: 1,
        };
        let mut node: cumock_abi::CUgraphNode = std::ptr::null_mut();
        assert_eq!(
            cuGraphAddMemsetNode(
                &mut node,
                g,
                std::ptr::null(),
                0,
                (&mp as *const MemsetParams).cast(),
                std::ptr::null_mut()
            ),
            0
        );
        let mut exec: cumock_abi::CUgraphExec = std::ptr::null_mut();
        assert_eq!(cuGraphInstantiateWithFlags(&mut exec, g, 0), 0);
        assert_eq!(cuGraphLaunch(exec, std::ptr::null_mut()), 0);
        assert_eq!(cuCtxSynchronize(), CUDA_ERROR_OUT_OF_MEMORY);
        assert_eq!(cuCtxSynchronize(), 0, "the stop is not sticky");
        assert_eq!(cuMemFree_v2(a), 0);
        assert_eq!(cuGraphLaunch(exec, std::ptr::null_mut()), 0);
        assert_eq!(cuCtxSynchronize(), 0);
        let mut last = 0u8;
        assert_eq!(
            cuMemcpyDtoH_v2((&mut last as *mut u8).cast(), b + 48 * MIB as u64 - 1, 1),
            0
        );
        assert_eq!(last, 9, "the memset ran whole");
        assert_eq!(cuGraphExecDestroy(exec), 0);
        assert_eq!(cuGraphDestroy(g), 0);
        assert_eq!(cuMemFree_v2(b), 0);
    }
}
