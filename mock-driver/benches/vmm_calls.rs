//! The VMM calls' cost per call, in process, over the C exports: `cumock bench`'s batch
//! pattern (an allocator growing before it shrinks: `N` creates, maps, set-accesses,
//! unmaps, releases, then `N` reserve+free pairs), each phase timed as a whole and
//! divided by `N`, the median of `ROUNDS` rounds. Beside them, what an uncontended
//! `parking_lot` lock and unlock costs on the same machine in the same run: the floor of a
//! call that takes a lock.
//!
//! `cargo bench -p cumock-driver --bench vmm_calls` (the `bench` profile: optimised,
//! without the release profile's link-time optimisation, so that it builds in minutes).
//! Nanoseconds per call, one line each; machines are shared and noisy, so compare figures
//! of one run only.

use cuda::exports::*;
use cumock_abi::{CUmemAccessDesc, CUmemAllocationProp, CUmemLocation};
use std::hint::black_box;
use std::time::Instant;

const G: usize = 2 << 20;
const N: usize = 200;
const ROUNDS: usize = 31;

fn ok(r: cumock_abi::CUresult, what: &str) {
    assert_eq!(r, 0, "{what} failed");
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let prop = CUmemAllocationProp {
        type_: 1,
        location: CUmemLocation { type_: 1, id: 0 },
        ..Default::default()
    };
    let rw = CUmemAccessDesc {
        location: CUmemLocation { type_: 1, id: 0 },
        flags: 3,
    };
    // Safety: every pointer is a live local; sizes and addresses are the mock's own.
    unsafe {
        ok(cuInit(0), "cuInit");
        let mut ctx: cumock_abi::CUcontext = std::ptr::null_mut();
        ok(cuDevicePrimaryCtxRetain(&mut ctx, 0), "retain");
        ok(cuCtxSetCurrent(ctx), "set current");
    }
    let names = [
        "cuMemCreate",
        "cuMemMap",
        "cuMemSetAccess",
        "cuMemUnmap",
        "cuMemRelease",
        "cuMemAddressReserve+cuMemAddressFree",
    ];
    let mut rounds: Vec<[f64; 6]> = Vec::new();
    let per_call = |t: Instant| t.elapsed().as_secs_f64() * 1e9 / N as f64;
    for _ in 0..ROUNDS {
        let mut m = [0.0; 6];
        // Safety: as above.
        unsafe {
            let mut va = 0u64;
            ok(cuMemAddressReserve(&mut va, N * G, 0, 0, 0), "reserve");
            let mut handles = vec![0u64; N];
            let t = Instant::now();
            for h in handles.iter_mut() {
                ok(cuMemCreate(h, G, &prop, 0), "create");
            }
            m[0] = per_call(t);
            let t = Instant::now();
            for (i, h) in handles.iter().enumerate() {
                ok(cuMemMap(va + (i * G) as u64, G, 0, *h, 0), "map");
            }
            m[1] = per_call(t);
            let t = Instant::now();
            for i in 0..N {
                ok(cuMemSetAccess(va + (i * G) as u64, G, &rw, 1), "set access");
            }
            m[2] = per_call(t);
            let t = Instant::now();
            for i in 0..N {
                ok(cuMemUnmap(va + (i * G) as u64, G), "unmap");
            }
            m[3] = per_call(t);
            let t = Instant::now();
            for h in &handles {
                ok(cuMemRelease(*h), "release");
            }
            m[4] = per_call(t);
            ok(cuMemAddressFree(va, N * G), "free");
            let t = Instant::now();
            for _ in 0..N {
                let mut r = 0u64;
                ok(cuMemAddressReserve(&mut r, G, 0, 0, 0), "reserve");
                ok(cuMemAddressFree(black_box(r), G), "free");
            }
            m[5] = per_call(t);
        }
        rounds.push(m);
    }
    for (k, name) in names.iter().enumerate() {
        let ns = median(rounds.iter().map(|r| r[k]).collect());
        println!("{name:<40} {ns:8.1} ns");
    }
    // The floor: an uncontended lock and unlock of a parking_lot mutex.
    let m = parking_lot::Mutex::new(0u64);
    let floor = median(
        (0..ROUNDS)
            .map(|_| {
                let t = Instant::now();
                for _ in 0..N * 10 {
                    *black_box(&m).lock() += 1;
                }
                t.elapsed().as_secs_f64() * 1e9 / (N * 10) as f64
            })
            .collect(),
    );
    println!("{:<40} {floor:8.1} ns", "parking_lot lock+unlock (floor)");
    let state_lock = cumock_support::ForkSafeMutex::new(0u64);
    let floor = median(
        (0..ROUNDS)
            .map(|_| {
                let t = Instant::now();
                for _ in 0..N * 10 {
                    *black_box(&state_lock).lock() += 1;
                }
                t.elapsed().as_secs_f64() * 1e9 / (N * 10) as f64
            })
            .collect(),
    );
    println!("{:<40} {floor:8.1} ns", "state lock lock+unlock");
    // Contended: threads taking turns with a short hold, the whole run's time per hold
    // (a lock that hands over badly shows here, not above).
    const THREADS: usize = 4;
    const HOLDS: usize = 20_000;
    fn contended(lock: &(dyn Fn() + Sync)) -> f64 {
        let t = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..THREADS {
                s.spawn(|| (0..HOLDS).for_each(|_| lock()));
            }
        });
        t.elapsed().as_secs_f64() * 1e9 / (THREADS * HOLDS) as f64
    }
    let hold = |v: &mut u64| {
        for i in 0..20 {
            *v = black_box(v.wrapping_mul(31).wrapping_add(i));
        }
    };
    let pl = median((0..9).map(|_| contended(&|| hold(&mut m.lock()))).collect());
    let sl = median(
        (0..9)
            .map(|_| contended(&|| hold(&mut state_lock.lock())))
            .collect(),
    );
    println!("{:<40} {pl:8.1} ns", "parking_lot, 4 threads, per hold");
    println!("{:<40} {sl:8.1} ns", "state lock, 4 threads, per hold");
    // The driver's calls from 4 threads at once: reserve+free pairs.
    let pairs = median(
        (0..9)
            .map(|_| {
                contended(&|| {
                    let mut r = 0u64;
                    // Safety: a live local out-pointer; the range the mock just gave.
                    unsafe {
                        ok(cuMemAddressReserve(&mut r, G, 0, 0, 0), "reserve");
                        ok(cuMemAddressFree(r, G), "free");
                    }
                })
            })
            .collect(),
    );
    println!("{:<40} {pairs:8.1} ns", "reserve+free, 4 threads, per pair");
}
