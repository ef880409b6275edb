//! `cumock bench`: the VMM benchmark, against any driver library, so the same binary
//! measures the mock and the real driver in one run. Reports ratios measured in one run;
//! the machines are shared and noisy, so absolute numbers are only indications.

use crate::driver::{check, Api};
use anyhow::{bail, Result};
use cumock_abi::{CUmemAccessDesc, CUmemAllocationProp, CUmemLocation};
use serde_json::json;
use std::ffi::c_void;
use std::time::{Duration, Instant};

const G: usize = 2 << 20;

fn prop() -> CUmemAllocationProp {
    CUmemAllocationProp {
        type_: 1,
        location: CUmemLocation { type_: 1, id: 0 },
        ..Default::default()
    }
}

fn rw() -> CUmemAccessDesc {
    CUmemAccessDesc {
        location: CUmemLocation { type_: 1, id: 0 },
        flags: 3,
    }
}

fn median(v: &mut [Duration]) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e6
}

pub struct Options {
    pub cycles: usize,
    pub copy_mib: usize,
    pub many: usize,
    /// Allocations in the batch pattern.
    pub batch: usize,
}

pub fn run(api: &Api, o: &Options) -> Result<serde_json::Value> {
    check!(api, cuInit(0));
    let mut ctx = std::ptr::null_mut();
    check!(api, cuDevicePrimaryCtxRetain(&mut ctx, 0));
    check!(api, cuCtxSetCurrent(ctx));
    let p = prop();
    let d = rw();

    // 1. The allocator's cycle of 2 MiB: create, map, set access, unmap, release.
    let mut va = 0u64;
    check!(api, cuMemAddressReserve(&mut va, G, 0, 0, 0));
    let mut per = [Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    let mut cycle = Vec::with_capacity(o.cycles);
    for _ in 0..o.cycles {
        let mut h = 0u64;
        let t0 = Instant::now();
        check!(api, cuMemCreate(&mut h, G, &p, 0));
        let t1 = Instant::now();
        check!(api, cuMemMap(va, G, 0, h, 0));
        let t2 = Instant::now();
        check!(api, cuMemSetAccess(va, G, &d, 1));
        let t3 = Instant::now();
        check!(api, cuMemUnmap(va, G));
        let t4 = Instant::now();
        check!(api, cuMemRelease(h));
        let t5 = Instant::now();
        for (i, (a, b)) in [(t0, t1), (t1, t2), (t2, t3), (t3, t4), (t4, t5)]
            .into_iter()
            .enumerate()
        {
            per[i].push(b - a);
        }
        cycle.push(t5 - t0);
    }
    check!(api, cuMemAddressFree(va, G));
    let names = [
        "cuMemCreate",
        "cuMemMap",
        "cuMemSetAccess",
        "cuMemUnmap",
        "cuMemRelease",
    ];
    let per_call: serde_json::Map<_, _> = names
        .iter()
        .zip(per.iter_mut())
        .map(|(n, v)| ((*n).to_owned(), json!(median(v))))
        .collect();
    let cycle_us = median(&mut cycle);

    // 2. Copies of a large buffer, against a plain host memcpy of the same size.
    let size = o.copy_mib << 20;
    let rounded = size.div_ceil(G) * G;
    let (mut big, mut h) = (0u64, 0u64);
    check!(api, cuMemAddressReserve(&mut big, rounded, 0, 0, 0));
    check!(api, cuMemCreate(&mut h, rounded, &p, 0));
    check!(api, cuMemMap(big, rounded, 0, h, 0));
    check!(api, cuMemSetAccess(big, rounded, &d, 1));
    let src: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
    let mut dst = vec![0u8; size];
    let mut host = vec![0u8; size];
    let best = |f: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
        let mut b = f64::MAX;
        for _ in 0..5 {
            let t = Instant::now();
            f()?;
            b = b.min(t.elapsed().as_secs_f64());
        }
        Ok(b)
    };
    let memcpy_s = best(&mut || {
        host.copy_from_slice(&src);
        std::hint::black_box(&host);
        Ok(())
    })?;
    let htod_s = best(&mut || {
        check!(api, cuMemcpyHtoD_v2(big, src.as_ptr().cast(), size));
        Ok(())
    })?;
    let dtoh_s = best(&mut || {
        check!(api, cuMemcpyDtoH_v2(dst.as_mut_ptr().cast(), big, size));
        Ok(())
    })?;
    if dst != src {
        bail!("the data read back differs from the data written");
    }
    check!(api, cuMemUnmap(big, rounded));
    check!(api, cuMemRelease(h));
    check!(api, cuMemAddressFree(big, rounded));
    let gbs = |s: f64| size as f64 / s / 1e9;

    // 3. Map, unmap and copy with few and with many live mappings in the process (one
    // handle, aliased). The two set-ups take turns, three rounds each, so that drift in a
    // shared machine's speed falls on both alike; each figure is a median of medians.
    let buf = [7u8; 4096];
    let mut times: Vec<[Vec<Duration>; 3]> = vec![Default::default(), Default::default()];
    for _round in 0..3 {
        for (which, live) in [10usize, o.many].into_iter().enumerate() {
            let slots = live + 1;
            let (mut r, mut h) = (0u64, 0u64);
            check!(api, cuMemAddressReserve(&mut r, slots * G, 0, 0, 0));
            check!(api, cuMemCreate(&mut h, G, &p, 0));
            for i in 0..live {
                check!(api, cuMemMap(r + (i * G) as u64, G, 0, h, 0));
            }
            let probe = r + ((live / 2) * G) as u64;
            check!(api, cuMemSetAccess(probe, G, &d, 1));
            let free_slot = r + (live * G) as u64;
            let (mut map_t, mut unmap_t, mut copy_t) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..1000 {
                let t0 = Instant::now();
                check!(api, cuMemMap(free_slot, G, 0, h, 0));
                let t1 = Instant::now();
                check!(api, cuMemUnmap(free_slot, G));
                let t2 = Instant::now();
                check!(api, cuMemcpyHtoD_v2(probe, buf.as_ptr().cast(), buf.len()));
                let t3 = Instant::now();
                map_t.push(t1 - t0);
                unmap_t.push(t2 - t1);
                copy_t.push(t3 - t2);
            }
            for (k, mut v) in [map_t, unmap_t, copy_t].into_iter().enumerate() {
                times[which][k].push(Duration::from_secs_f64(median(&mut v) / 1e6));
            }
            check!(api, cuMemUnmap(r, live * G));
            check!(api, cuMemRelease(h));
            check!(api, cuMemAddressFree(r, slots * G));
        }
    }
    let mut scaling = serde_json::Map::new();
    for (which, live) in [10usize, o.many].into_iter().enumerate() {
        let t = &mut times[which];
        scaling.insert(
            live.to_string(),
            json!({"map_us": median(&mut t[0]), "unmap_us": median(&mut t[1]), "copy_4k_us": median(&mut t[2])}),
        );
    }

    // 4. The largest reservation: 64 TiB of address space.
    let mut huge = 0u64;
    check!(api, cuMemAddressReserve(&mut huge, 64 << 40, 0, 0, 0));
    check!(api, cuMemAddressFree(huge, 64 << 40));

    let ratio = |k: &str| -> f64 {
        let few = scaling["10"][k].as_f64().unwrap_or(f64::NAN);
        let many = scaling[&o.many.to_string()][k].as_f64().unwrap_or(f64::NAN);
        many / few
    };
    let batch = batch(api, o.batch)?;
    let launches = launches(api)?;
    let graph = graph_launches(api)?;
    Ok(json!({
        "driver": api.path,
        "batch": batch,
        "launch": launches,
        "graph_launch": graph,
        "cycle_2mib_us": cycle_us,
        "per_call_median_us": per_call,
        "copy": {
            "mib": o.copy_mib,
            "host_memcpy_gbs": gbs(memcpy_s),
            "htod_gbs": gbs(htod_s),
            "dtoh_gbs": gbs(dtoh_s),
            "htod_vs_memcpy": memcpy_s / htod_s,
            "dtoh_vs_memcpy": memcpy_s / dtoh_s,
        },
        "live_mappings": scaling,
        "many_vs_few": {"map": ratio("map_us"), "unmap": ratio("unmap_us"), "copy": ratio("copy_4k_us")},
        "reserve_64tib": "ok",
    }))
}

/// An empty kernel: what a launch costs apart from the kernel's work.
const EMPTY_KERNEL: &str = ".version 9.0\n.target sm_90\n.address_size 64\n\
                            .visible .entry empty() { ret; }\n\0";

/// Launch latency on a non-blocking stream: how long cuLaunchKernel takes to return
/// (launches issued back to back, timed 1,000 at a time, so that the clock's cost does not
/// count), and a launch followed by cuStreamSynchronize (one at a time, the median of
/// 2,000). Beside them, the host baseline of the same machine in the same run: handing a
/// job to another thread and waiting for its answer (a channel round trip), which is what
/// an asynchronous launch and its synchronisation cost at least.
fn launches(api: &Api) -> Result<serde_json::Value> {
    let mut module = std::ptr::null_mut();
    check!(
        api,
        cuModuleLoadData(&mut module, EMPTY_KERNEL.as_ptr().cast())
    );
    let mut f = std::ptr::null_mut();
    check!(api, cuModuleGetFunction(&mut f, module, c"empty".as_ptr()));
    let mut stream = std::ptr::null_mut();
    check!(api, cuStreamCreate(&mut stream, 1));
    let launch = || -> Result<()> {
        check!(
            api,
            cuLaunchKernel(
                f,
                1,
                1,
                1,
                32,
                1,
                1,
                0,
                stream,
                std::ptr::null_mut(),
                std::ptr::null_mut()
            )
        );
        Ok(())
    };
    // Warm-up: the stream's worker, the kernel's first run.
    launch()?;
    check!(api, cuStreamSynchronize(stream));
    let mut issue = Vec::new();
    for _ in 0..9 {
        let t = Instant::now();
        for _ in 0..1000 {
            launch()?;
        }
        issue.push(t.elapsed() / 1000);
        check!(api, cuStreamSynchronize(stream));
    }
    let mut round = Vec::new();
    for _ in 0..2000 {
        let t = Instant::now();
        launch()?;
        check!(api, cuStreamSynchronize(stream));
        round.push(t.elapsed());
    }
    check!(api, cuStreamDestroy_v2(stream));
    check!(api, cuModuleUnload(module));
    // The host baseline: a round trip to a worker thread.
    let (to, from) = std::sync::mpsc::channel::<()>();
    let (back, answers) = std::sync::mpsc::channel::<()>();
    let worker = std::thread::spawn(move || {
        for () in from {
            if back.send(()).is_err() {
                break;
            }
        }
    });
    let mut host = Vec::new();
    for _ in 0..2000 {
        let t = Instant::now();
        to.send(()).map_err(|e| anyhow::anyhow!("{e}"))?;
        answers.recv()?;
        host.push(t.elapsed());
    }
    drop(to);
    let _ = worker.join();
    Ok(json!({
        "launch_returns_us": median(&mut issue),
        "launch_and_synchronize_us": median(&mut round),
        "host_thread_round_trip_us": median(&mut host),
    }))
}

/// cuda.h's CUDA_KERNEL_NODE_PARAMS_v2.
#[repr(C)]
struct KernelNodeParams {
    func: *mut c_void,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    kern: *mut c_void,
    ctx: *mut c_void,
}

/// Kernels in a graph: a chain of `GRAPH_NODES` empty kernel nodes, instantiated once,
/// then cuGraphLaunch followed by cuStreamSynchronize (the median of 500), cuGraphLaunch
/// alone (launches back to back, 100 at a time), and cuGraphExecKernelNodeSetParams on
/// the last node before each launch (likewise).
const GRAPH_NODES: usize = 100;

fn graph_launches(api: &Api) -> Result<serde_json::Value> {
    let mut module = std::ptr::null_mut();
    check!(
        api,
        cuModuleLoadData(&mut module, EMPTY_KERNEL.as_ptr().cast())
    );
    let mut f = std::ptr::null_mut();
    check!(api, cuModuleGetFunction(&mut f, module, c"empty".as_ptr()));
    let mut graph = std::ptr::null_mut();
    check!(api, cuGraphCreate(&mut graph, 0));
    let params = KernelNodeParams {
        func: f,
        grid: [1, 1, 1],
        block: [32, 1, 1],
        shared: 0,
        params: std::ptr::null_mut(),
        extra: std::ptr::null_mut(),
        kern: std::ptr::null_mut(),
        ctx: std::ptr::null_mut(),
    };
    let mut prev: *mut c_void = std::ptr::null_mut();
    for i in 0..GRAPH_NODES {
        let mut node = std::ptr::null_mut();
        check!(
            api,
            cuGraphAddKernelNode_v2(
                &mut node,
                graph,
                &prev as *const *mut c_void,
                usize::from(i > 0),
                (&raw const params).cast()
            )
        );
        prev = node;
    }
    let mut exec = std::ptr::null_mut();
    check!(api, cuGraphInstantiateWithFlags(&mut exec, graph, 0));
    let mut stream = std::ptr::null_mut();
    check!(api, cuStreamCreate(&mut stream, 1));
    check!(api, cuGraphLaunch(exec, stream));
    check!(api, cuStreamSynchronize(stream));
    let mut round = Vec::new();
    for _ in 0..500 {
        let t = Instant::now();
        check!(api, cuGraphLaunch(exec, stream));
        check!(api, cuStreamSynchronize(stream));
        round.push(t.elapsed());
    }
    let mut issue = Vec::new();
    for _ in 0..9 {
        let t = Instant::now();
        for _ in 0..100 {
            check!(api, cuGraphLaunch(exec, stream));
        }
        issue.push(t.elapsed() / 100);
        check!(api, cuStreamSynchronize(stream));
    }
    // A solver's pattern: one node's parameters set before each launch.
    let mut set_issue = Vec::new();
    for _ in 0..9 {
        let t = Instant::now();
        for _ in 0..100 {
            check!(
                api,
                cuGraphExecKernelNodeSetParams_v2(exec, prev, (&raw const params).cast())
            );
            check!(api, cuGraphLaunch(exec, stream));
        }
        set_issue.push(t.elapsed() / 100);
        check!(api, cuStreamSynchronize(stream));
    }
    check!(api, cuStreamDestroy_v2(stream));
    check!(api, cuGraphExecDestroy(exec));
    check!(api, cuGraphDestroy(graph));
    check!(api, cuModuleUnload(module));
    Ok(json!({
        "nodes": GRAPH_NODES,
        "launch_and_synchronize_us": median(&mut round),
        "launch_returns_us": median(&mut issue),
        "set_node_and_launch_returns_us": median(&mut set_issue),
    }))
}

/// The calls the batch pattern times, in its order.
pub const BATCH_CALLS: [&str; 6] = [
    "cuMemCreate",
    "cuMemMap",
    "cuMemSetAccess",
    "cuMemUnmap",
    "cuMemRelease",
    "cuMemAddressReserve+cuMemAddressFree",
];

/// An allocator growing before it shrinks: `n` times each of create all, map all, set
/// access on all, unmap all, release all; then `n` reserve+free pairs. The pool of
/// released memory cannot help here, unlike in the steady cycle.
///
/// Each phase is timed as a whole and divided by `n`: a mock call takes tens of
/// nanoseconds, about what reading the clock twice costs (`timer_pair_us` reports it), so
/// timing every call on its own would mostly time the clock. The pattern runs nine times
/// and each call's figure is the median of the nine rounds, so one slow round of a shared
/// machine does not decide it. Microseconds per call.
pub fn batch(api: &Api, n: usize) -> Result<serde_json::Value> {
    let p = prop();
    let d = rw();
    let per_call = |t0: Instant| t0.elapsed().as_secs_f64() * 1e6 / n as f64;
    let mut rounds: Vec<[f64; 6]> = Vec::new();
    for _ in 0..9 {
        let mut va = 0u64;
        check!(api, cuMemAddressReserve(&mut va, n * G, 0, 0, 0));
        let mut handles = vec![0u64; n];
        let mut m = [0.0; 6];
        let t0 = Instant::now();
        for h in handles.iter_mut() {
            check!(api, cuMemCreate(h, G, &p, 0));
        }
        m[0] = per_call(t0);
        let t0 = Instant::now();
        for (i, h) in handles.iter().enumerate() {
            check!(api, cuMemMap(va + (i * G) as u64, G, 0, *h, 0));
        }
        m[1] = per_call(t0);
        let t0 = Instant::now();
        for i in 0..n {
            check!(api, cuMemSetAccess(va + (i * G) as u64, G, &d, 1));
        }
        m[2] = per_call(t0);
        let t0 = Instant::now();
        for i in 0..n {
            check!(api, cuMemUnmap(va + (i * G) as u64, G));
        }
        m[3] = per_call(t0);
        let t0 = Instant::now();
        for h in &handles {
            check!(api, cuMemRelease(*h));
        }
        m[4] = per_call(t0);
        check!(api, cuMemAddressFree(va, n * G));
        let t0 = Instant::now();
        for _ in 0..n {
            let mut r = 0u64;
            check!(api, cuMemAddressReserve(&mut r, G, 0, 0, 0));
            check!(api, cuMemAddressFree(r, G));
        }
        m[5] = per_call(t0);
        rounds.push(m);
    }
    let mut out = serde_json::Map::new();
    for (k, name) in BATCH_CALLS.iter().enumerate() {
        let mut v: Vec<Duration> = rounds
            .iter()
            .map(|r| Duration::from_secs_f64(r[k] / 1e6))
            .collect();
        out.insert((*name).to_owned(), json!(median(&mut v)));
    }
    Ok(json!({
        "allocations": n,
        "per_call_median_us": out,
        "timer_pair_us": timer_pair_us(),
    }))
}

/// What timing one call on its own would add to it: two readings of the clock.
fn timer_pair_us() -> f64 {
    const N: u32 = 100_000;
    let t0 = Instant::now();
    let mut sink = Duration::ZERO;
    for _ in 0..N {
        let t = Instant::now();
        sink += t.elapsed();
    }
    std::hint::black_box(sink);
    t0.elapsed().as_secs_f64() * 1e6 / f64::from(N)
}

/// The mock's and a driver's batch figures side by side: each call's time on both (the
/// median over the runs given, which the caller alternates between the two libraries so
/// that a slow spell of a shared machine falls on both), and how many times faster the
/// mock is (the bar is 5, the goal 10).
pub fn side_by_side(mock: &[serde_json::Value], driver: &[serde_json::Value]) -> serde_json::Value {
    let median_of = |runs: &[serde_json::Value], name: &str| -> Option<f64> {
        let mut v: Vec<f64> = runs
            .iter()
            .filter_map(|r| r["batch"]["per_call_median_us"][name].as_f64())
            .collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    };
    let mut out = serde_json::Map::new();
    for name in BATCH_CALLS {
        let m = median_of(mock, name);
        let d = median_of(driver, name);
        let speedup = match (m, d) {
            (Some(m), Some(d)) if m > 0.0 => json!(d / m),
            _ => serde_json::Value::Null,
        };
        out.insert(
            name.to_owned(),
            json!({"mock_us": m, "driver_us": d, "mock_faster_by": speedup, "runs": mock.len()}),
        );
    }
    serde_json::Value::Object(out)
}

/// A long run of an allocator-like workload: the live set grows and shrinks in waves
/// (allocations of 2 to 32 MiB, each mapped, granted, a page of it written and read
/// back), and every second the process's host footprint and the calls' times are
/// sampled. What it shows: whether host memory, fds and mappings follow the live set
/// (and come back down) and whether call times stay flat over minutes.
pub fn soak(api: &Api, seconds: u64, max_live: usize) -> Result<serde_json::Value> {
    check!(api, cuInit(0));
    let mut ctx = std::ptr::null_mut();
    check!(api, cuDevicePrimaryCtxRetain(&mut ctx, 0));
    check!(api, cuCtxSetCurrent(ctx));
    let p = prop();
    let d = rw();
    // One reservation per allocation, as PyTorch's expandable segments and cuda-core do
    // per segment: the address space churns too.
    struct Live {
        va: u64,
        h: u64,
        size: usize,
        seed: u8,
    }
    let mut live: Vec<Live> = Vec::new();
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let start = Instant::now();
    let mut samples = Vec::new();
    let mut times: [Vec<Duration>; 4] = Default::default(); // grow, shrink, write, read
    let mut ops = 0u64;
    let mut peak_live_bytes = 0usize;
    let mut second = 1;
    let page = [0u8; 4096];
    let mut back = [0u8; 4096];
    while start.elapsed() < Duration::from_secs(seconds) {
        // The target follows a wave: 30 s from empty to full and back.
        let phase = start.elapsed().as_secs_f64() / 30.0 * std::f64::consts::PI;
        let target = ((phase.sin().abs()) * max_live as f64) as usize;
        let grow = live.len() < target || (live.len() == target && next() % 2 == 0);
        if grow || live.is_empty() {
            let size = G * (1 + (next() % 16) as usize);
            let t0 = Instant::now();
            let (mut va, mut h) = (0u64, 0u64);
            check!(api, cuMemAddressReserve(&mut va, size, 0, 0, 0));
            check!(api, cuMemCreate(&mut h, size, &p, 0));
            check!(api, cuMemMap(va, size, 0, h, 0));
            check!(api, cuMemSetAccess(va, size, &d, 1));
            times[0].push(t0.elapsed());
            let seed = next() as u8;
            let data: Vec<u8> = (0..page.len())
                .map(|i| seed.wrapping_add(i as u8))
                .collect();
            let t0 = Instant::now();
            check!(api, cuMemcpyHtoD_v2(va, data.as_ptr().cast(), data.len()));
            times[2].push(t0.elapsed());
            live.push(Live { va, h, size, seed });
        } else {
            let i = (next() % live.len() as u64) as usize;
            let l = live.swap_remove(i);
            let t0 = Instant::now();
            check!(
                api,
                cuMemcpyDtoH_v2(back.as_mut_ptr().cast(), l.va, back.len())
            );
            times[3].push(t0.elapsed());
            if back
                .iter()
                .enumerate()
                .any(|(i, b)| *b != l.seed.wrapping_add(i as u8))
            {
                bail!(
                    "the data read back from {:#x} differs from what was written",
                    l.va
                );
            }
            let t0 = Instant::now();
            check!(api, cuCtxSynchronize());
            check!(api, cuMemUnmap(l.va, l.size));
            check!(api, cuMemRelease(l.h));
            check!(api, cuMemAddressFree(l.va, l.size));
            times[1].push(t0.elapsed());
        }
        ops += 1;
        let live_bytes: usize = live.iter().map(|l| l.size).sum();
        peak_live_bytes = peak_live_bytes.max(live_bytes);
        if start.elapsed() >= Duration::from_secs(second) {
            let (rss, shmem) = host_memory();
            // The median and the 99th percentile of each kind of step in this second:
            // work the mock batches (giving touched memory back) shows in the tail.
            let stats = |v: &mut Vec<Duration>| {
                if v.is_empty() {
                    return json!({"median_us": 0.0, "p99_us": 0.0, "max_us": 0.0});
                }
                v.sort();
                let at = |q: f64| v[((v.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6;
                let s = json!({"median_us": at(0.5), "p99_us": at(0.99), "max_us": at(1.0)});
                v.clear();
                s
            };
            samples.push(json!({
                "second": second,
                "live_allocations": live.len(),
                "live_mib": live_bytes >> 20,
                "touched_mib": (live.len() * page.len()) as f64 / (1 << 20) as f64,
                "rss_mib": rss as f64 / (1 << 20) as f64,
                "rss_shmem_mib": shmem as f64 / (1 << 20) as f64,
                "fds": count_entries("/proc/self/fd"),
                "mappings": count_lines("/proc/self/maps"),
                "ops": ops,
                "grow": stats(&mut times[0]),
                "shrink": stats(&mut times[1]),
                "write_4k": stats(&mut times[2]),
                "read_4k": stats(&mut times[3]),
            }));
            second += 1;
        }
    }
    for l in live.drain(..) {
        check!(api, cuMemUnmap(l.va, l.size));
        check!(api, cuMemRelease(l.h));
        check!(api, cuMemAddressFree(l.va, l.size));
    }
    let (rss, shmem) = host_memory();
    let column = |k: &str| -> Vec<f64> { samples.iter().filter_map(|s| s[k].as_f64()).collect() };
    let step = |k: &str, q: &str| -> Vec<f64> {
        samples.iter().filter_map(|s| s[k][q].as_f64()).collect()
    };
    let max = |v: Vec<f64>| v.into_iter().fold(0.0, f64::max);
    Ok(json!({
        "driver": api.path,
        "seconds": seconds,
        "ops": ops,
        "peak_live_mib": peak_live_bytes >> 20,
        "peak": {
            "rss_mib": max(column("rss_mib")),
            "rss_shmem_mib": max(column("rss_shmem_mib")),
            "fds": max(column("fds")),
            "mappings": max(column("mappings")),
            "grow_median_us": max(step("grow", "median_us")),
            "grow_p99_us": max(step("grow", "p99_us")),
            "shrink_median_us": max(step("shrink", "median_us")),
            "shrink_p99_us": max(step("shrink", "p99_us")),
            "shrink_max_us": max(step("shrink", "max_us")),
        },
        "after_release_all": {
            "rss_mib": rss as f64 / (1 << 20) as f64,
            "rss_shmem_mib": shmem as f64 / (1 << 20) as f64,
            "fds": count_entries("/proc/self/fd"),
            "mappings": count_lines("/proc/self/maps"),
        },
        "samples": samples,
    }))
}

/// (VmRSS, RssShmem) of this process in bytes: resident memory, and the part of it that
/// is shared memory (the mock's device memory is memfd pages).
fn host_memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map(|kb| kb * 1024)
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("RssShmem:"))
}

fn count_entries(dir: &str) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

fn count_lines(file: &str) -> usize {
    std::fs::read_to_string(file)
        .map(|s| s.lines().count())
        .unwrap_or(0)
}
