//! `cumock bench`: the VMM benchmark, against any driver library, so the same binary
//! measures the mock and the real driver in one run. Reports ratios measured in one run;
//! the machines are shared and noisy, so absolute numbers are only indications.

use crate::driver::{check, Api};
use anyhow::{bail, Result};
use cumock_abi::{CUmemAccessDesc, CUmemAllocationProp, CUmemLocation};
use serde_json::json;
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
    Ok(json!({
        "driver": api.path,
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
