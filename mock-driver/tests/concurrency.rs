//! 16 threads doing random reserve / create / map / setAccess / copy / unmap / release
//! for a bounded time, through the exported C functions: no deadlock, no crash, every
//! thread's data intact, and the state back where it started.

use cuda::exports::*;
use cumock_abi::{CUmemAccessDesc, CUmemAllocationProp, CUmemLocation};
use std::time::{Duration, Instant};

const G: usize = 2 << 20;

/// The tests here share the process's one driver and check its totals: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn ok(r: u32, what: &str) {
    assert_eq!(r, 0, "{what} failed with {r}");
}

/// A tiny per-thread generator: reproducible, no shared state.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn worker(seed: u64, until: Instant) -> u64 {
    let mut rng = Rng(seed | 1);
    let prop = CUmemAllocationProp {
        type_: 1,
        location: CUmemLocation { type_: 1, id: 0 },
        ..Default::default()
    };
    let desc = CUmemAccessDesc {
        location: CUmemLocation { type_: 1, id: 0 },
        flags: 3,
    };
    let mut ctx: cumock_abi::CUcontext = std::ptr::null_mut();
    // Safety (all calls below): out-pointers to locals, buffers of the lengths passed.
    unsafe {
        ok(cuDevicePrimaryCtxRetain(&mut ctx, 0), "retain");
        ok(cuCtxSetCurrent(ctx), "set current");
    }
    let mut ops = 0u64;
    while Instant::now() < until {
        let chunks = 1 + (rng.next() % 4) as usize;
        let mut va = 0u64;
        let mut handles = Vec::new();
        unsafe {
            ok(
                cuMemAddressReserve(&mut va, chunks * G * 2, 0, 0, 0),
                "reserve",
            );
            for i in 0..chunks {
                let mut h = 0u64;
                ok(cuMemCreate(&mut h, G, &prop, 0), "create");
                ok(cuMemMap(va + (i * G) as u64, G, 0, h, 0), "map");
                handles.push(h);
            }
            ok(cuMemSetAccess(va, chunks * G, &desc, 1), "set access");
            // Data that crosses the chunk boundaries, checked after a yield to the others.
            let len = chunks * G - 4096;
            let data: Vec<u8> = (0..len).map(|i| (i as u64 ^ seed) as u8).collect();
            ok(
                cuMemcpyHtoD_v2(va + 2048, data.as_ptr().cast(), len),
                "htod",
            );
            std::thread::yield_now();
            let mut back = vec![0u8; len];
            ok(
                cuMemcpyDtoH_v2(back.as_mut_ptr().cast(), va + 2048, len),
                "dtoh",
            );
            assert!(
                back == data,
                "thread {seed}: data changed under another thread"
            );
            if rng.next().is_multiple_of(2) {
                // Release before unmap: the memory must survive until the unmap.
                for h in &handles {
                    ok(cuMemRelease(*h), "release while mapped");
                }
                ok(cuMemUnmap(va, chunks * G), "unmap");
            } else {
                ok(cuMemUnmap(va, chunks * G), "unmap");
                for h in &handles {
                    ok(cuMemRelease(*h), "release");
                }
            }
            ok(cuMemAddressFree(va, chunks * G * 2), "free");
        }
        ops += 4 + 3 * chunks as u64;
    }
    ops
}

#[test]
fn sixteen_threads_of_random_vmm_work_keep_the_state_consistent() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Safety: cuInit(0).
    assert_eq!(unsafe { cuInit(0) }, 0);
    let mut ctx: cumock_abi::CUcontext = std::ptr::null_mut();
    let (mut free0, mut free1, mut total) = (0usize, 0usize, 0usize);
    // Safety: out-pointers to locals.
    unsafe {
        ok(cuDevicePrimaryCtxRetain(&mut ctx, 0), "retain");
        ok(cuCtxSetCurrent(ctx), "set current");
        ok(cuMemGetInfo_v2(&mut free0, &mut total), "mem info");
    }
    let until = Instant::now() + Duration::from_secs(3);
    let handles: Vec<_> = (0..16u64)
        .map(|t| std::thread::spawn(move || worker(0x9e37 + t * 7919, until)))
        .collect();
    let ops: u64 = handles
        .into_iter()
        .map(|h| h.join().expect("a worker panicked"))
        .sum();
    // Safety: out-pointers to locals.
    unsafe { ok(cuMemGetInfo_v2(&mut free1, &mut total), "mem info") };
    assert_eq!(
        free1, free0,
        "free memory did not come back: something leaked"
    );
    let leaks = cuda::diagnostics::leak_report();
    assert!(leaks.is_empty(), "{leaks:?}");
    eprintln!("concurrency: 16 threads, {ops} VMM calls in 3 s, state consistent");
    // A floor only, that the threads did run: the machine is shared and its speed varies.
    assert!(ops > 200, "only {ops} calls: the threads barely ran");
}

#[test]
fn fork_while_another_thread_works_leaves_the_child_an_answering_mock() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Safety: cuInit(0).
    assert_eq!(unsafe { cuInit(0) }, 0);
    let until = Instant::now() + Duration::from_millis(800);
    let busy = std::thread::spawn(move || worker(42, until));
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(20));
        // Safety: the child only calls the mock and _exits; no allocation happens in it
        // beyond what the mock does, which the atfork handlers keep consistent.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // As on the H200, a child forked after cuInit is refused
            // (CUDA_ERROR_NOT_INITIALIZED = 3), cuInit included; what matters here is that
            // it is answered at all: a lock held across the fork would hang it.
            let mut va = 0u64;
            let code = unsafe {
                if cuMemAddressReserve(&mut va, G, 0, 0, 0) == 3 && cuInit(0) == 3 {
                    0
                } else {
                    1
                }
            };
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // Safety: waiting for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "the forked child was not answered CUDA_ERROR_NOT_INITIALIZED"
        );
    }
    busy.join().unwrap();
}
