//! API sequences: a byte-coded sequence of memory calls (reserve, create, map, set access,
//! unmap, release, free, copies, memsets, cuMemAlloc, host and managed allocations,
//! export and import...) on the mock's model (`cuda::model::Driver`, as
//! `mock-driver/tests/model_based.rs` drives it), arguments from the bytes. After every
//! call: no panic, and host memory outside the mock's reservations is intact: heap
//! canaries, the guard bytes around the buffer copies read and write, and pages mapped
//! by this target right before and after each reservation.
//!
//! Bytes: one call per 4 bytes, `[op, a, b, c]`.

use cuda::model::copies::Pattern;
use cuda::model::ids::{ContextId, DevicePtr};
use cuda::model::profile::Profile;
use cuda::model::{Driver, HostBytes, HostOrDevice};
use std::os::fd::AsRawFd;
use std::sync::OnceLock;

const G: u64 = 2 << 20;
const PAGE: usize = 4096;
/// The host buffer copies use: `HOST` bytes between two guards of `PAGE` bytes.
const HOST: usize = 64 << 10;
const OPS: u8 = 26;

fn profile() -> Profile {
    static P: OnceLock<Profile> = OnceLock::new();
    P.get_or_init(|| Profile::builtin_with_devices(2).expect("the built-in profile"))
        .clone()
}

pub fn mutate(data: &mut Vec<u8>, rng: &mut fastrand::Rng, pool: &[Vec<u8>]) {
    match rng.u8(..4) {
        0 => {
            // A call inserted at a call boundary.
            let at = 4 * rng.usize(..=data.len() / 4);
            data.splice(at..at, [rng.u8(..OPS), rng.u8(..), rng.u8(..), rng.u8(..)]);
        }
        1 if data.len() >= 8 => {
            // A call repeated or moved.
            let from = 4 * rng.usize(..data.len() / 4);
            let call = data[from..from + 4].to_vec();
            let at = 4 * rng.usize(..=data.len() / 4);
            data.splice(at..at, call);
        }
        _ => crate::mutate::bytes(data, rng, pool, &[]),
    }
}

/// A page this target mapped next to a reservation, with its pattern.
struct Fence {
    addr: *mut u8,
    byte: u8,
}

struct Canaries {
    heap: Vec<(Vec<u8>, Vec<u8>)>,
    fences: Vec<Fence>,
}

impl Canaries {
    fn check(&self, host: &[u8], step: usize, what: &str) {
        for (i, (buf, want)) in self.heap.iter().enumerate() {
            assert!(buf == want, "step {step} ({what}): heap canary {i} changed");
        }
        assert!(
            host[..PAGE].iter().all(|b| *b == 0xc3)
                && host[PAGE + HOST..].iter().all(|b| *b == 0xc3),
            "step {step} ({what}): the guard bytes around the host buffer changed"
        );
        for f in &self.fences {
            // Safety: a page this target mapped read-write and has not unmapped.
            let page = unsafe { std::slice::from_raw_parts(f.addr, PAGE) };
            assert!(
                page.iter().all(|b| *b == f.byte),
                "step {step} ({what}): the page at {:p} next to a reservation changed",
                f.addr
            );
        }
    }

    /// Maps a page at `addr` (if nothing is there) and fills it.
    fn fence(&mut self, addr: u64) {
        if addr == 0 || addr % PAGE as u64 != 0 || self.fences.len() >= 64 {
            return;
        }
        // Safety: MAP_FIXED_NOREPLACE takes the address only if nothing is mapped there.
        let p = unsafe {
            libc::mmap(
                addr as *mut libc::c_void,
                PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED || p as u64 != addr {
            if p != libc::MAP_FAILED {
                // Safety: what mmap just gave.
                unsafe { libc::munmap(p, PAGE) };
            }
            return;
        }
        let byte = 0x40 | (self.fences.len() as u8 & 0x3f);
        // Safety: a fresh read-write page.
        unsafe { std::ptr::write_bytes(p.cast::<u8>(), byte, PAGE) };
        self.fences.push(Fence {
            addr: p.cast(),
            byte,
        });
    }
}

impl Drop for Canaries {
    fn drop(&mut self) {
        for f in &self.fences {
            // Safety: pages this target mapped.
            unsafe { libc::munmap(f.addr.cast(), PAGE) };
        }
    }
}

fn pick<T: Copy>(v: &[T], i: u8) -> Option<T> {
    (!v.is_empty()).then(|| v[i as usize % v.len()])
}

fn code<T>(r: &Result<T, cuda::model::error::CuError>) -> u32 {
    match r {
        Ok(_) => 0,
        Err(e) => e.code,
    }
}

pub fn run(data: &[u8]) -> u64 {
    let mut canaries = Canaries {
        heap: Vec::new(),
        fences: Vec::new(),
    };
    let heap = |canaries: &mut Canaries, n: usize, seed: u8| {
        let v: Vec<u8> = (0..n).map(|i| seed.wrapping_add(i as u8)).collect();
        canaries.heap.push((v.clone(), v));
    };
    heap(&mut canaries, 16 << 10, 1);
    let d = Driver::new(profile());
    heap(&mut canaries, 16 << 10, 2);
    d.init(0).expect("cuInit");
    let contexts: Vec<ContextId> = (0..2)
        .map(|i| d.primary_retain(i).expect("primary context"))
        .collect();
    d.ctx_set_current(Some(contexts[0])).expect("current");
    heap(&mut canaries, 4 << 10, 3);

    let mut host = vec![0xc3u8; PAGE + HOST + PAGE];
    for (i, b) in host[PAGE..PAGE + HOST].iter_mut().enumerate() {
        *b = i as u8;
    }
    let mut reservations: Vec<(u64, u64)> = Vec::new();
    let mut handles: Vec<u64> = Vec::new();
    let mut allocs: Vec<u64> = Vec::new();
    let mut hosts: Vec<u64> = Vec::new();
    let mut managed: Vec<u64> = Vec::new();
    let mut sig = 0u64;

    for (step, call) in data.chunks(4).enumerate().take(256) {
        let [op, a, b, c] = [0, 1, 2, 3].map(|i| call.get(i).copied().unwrap_or(0));
        let op = op % OPS;
        // A device address from what exists, an offset into it, or a wild one.
        let addr = |sel: u8, off: u8| -> u64 {
            let o = u64::from(off);
            match sel % 8 {
                0 | 1 => pick(&reservations, sel / 8).map_or(0, |(r, s)| {
                    r.wrapping_add(if off & 1 == 0 {
                        (o / 2) * G / 4 % (s + G)
                    } else {
                        o * 64
                    })
                }),
                2 => pick(&allocs, sel / 8).map_or(0, |p| p + o * 16),
                3 => pick(&managed, sel / 8).map_or(0, |p| p + o * 16),
                4 => pick(&hosts, sel / 8).map_or(0, |p| p + o),
                5 => pick(&reservations, sel / 8).map_or(0, |(r, s)| r + s - o),
                6 => [0, 1, u64::MAX - o, 1 << 47, 0x8000_0000_0000_0000][o as usize % 5],
                _ => pick(&reservations, sel / 8).map_or(0, |(r, _)| r.wrapping_sub(o + 1)),
            }
        };
        let len = |x: u8, y: u8| -> u64 {
            match x % 4 {
                0 => u64::from(y),
                1 => u64::from(y) * 256,
                2 => (u64::from(y) * 1024).min(HOST as u64),
                _ => [0, 1, 4, HOST as u64, G, u64::MAX][y as usize % 6],
            }
        };
        let what: &str;
        let result: u32 = match op {
            0 => {
                what = "reserve";
                let size = u64::from(a % 4 + 1) * G + if b == 0xff { 4096 } else { 0 };
                let align = [0, G, 4 * G, 3][b as usize % 4];
                let hint = match c % 4 {
                    0 => 0,
                    1 => pick(&reservations, c).map_or(0, |(r, s)| r + s),
                    2 => pick(&reservations, c).map_or(0, |(r, _)| r),
                    _ => canaries
                        .fences
                        .get(c as usize % 4)
                        .map_or(0, |f| f.addr as u64),
                };
                let r = d.address_reserve(size, align, DevicePtr::new(hint), 0);
                if let Ok(p) = &r {
                    let p = p.get();
                    reservations.push((p, size));
                    canaries.fence(p.wrapping_sub(PAGE as u64));
                    canaries.fence(p + size);
                }
                code(&r)
            }
            1 => {
                what = "free reservation";
                match pick(&reservations, a) {
                    Some((r, s)) => {
                        let size = if b % 8 == 0 { s + G } else { s };
                        let res = d.address_free(DevicePtr::new(r), size);
                        if res.is_ok() {
                            reservations.retain(|x| x.0 != r);
                        }
                        code(&res)
                    }
                    None => 0,
                }
            }
            2 => {
                what = "create";
                let prop = cumock_abi::CUmemAllocationProp {
                    type_: if c == 0xff { 2 } else { 1 },
                    requested_handle_types: i32::from(b & 1),
                    location: cumock_abi::CUmemLocation {
                        type_: 1,
                        id: i32::from(b >> 1) % 3,
                    },
                    ..Default::default()
                };
                match d.check_prop(&prop) {
                    Ok(p) => {
                        let size = u64::from(a % 3 + 1) * G + if c == 1 { 4096 } else { 0 };
                        let r = d.create(size, p, 0);
                        if let Ok(h) = r {
                            handles.push(h);
                        }
                        code(&r)
                    }
                    Err(e) => e.code,
                }
            }
            3 => {
                what = "release";
                let h = if c == 0 {
                    u64::from(a) | 0xdead_0000
                } else {
                    pick(&handles, a).unwrap_or(0)
                };
                let r = d.release(h);
                if r.is_ok() && b % 4 != 0 {
                    handles.retain(|x| *x != h);
                }
                code(&r)
            }
            4 => {
                what = "map";
                let va = addr(a, b);
                let h = pick(&handles, c).unwrap_or(0);
                let size = u64::from(c % 3 + 1) * G;
                let offset = [0, G, 4096][(b % 3) as usize];
                code(&d.map(DevicePtr::new(va), size, offset, h, 0))
            }
            5 => {
                what = "unmap";
                code(&d.unmap(DevicePtr::new(addr(a, b)), u64::from(c % 4 + 1) * G))
            }
            6 => {
                what = "set access";
                let flags = [0, 1, 3, 2][(c & 3) as usize];
                let grants = [(1, i32::from(c >> 2) % 3, flags)];
                let n = if c & 0x40 != 0 { 0 } else { 1 };
                code(&d.set_access(
                    DevicePtr::new(addr(a, b)),
                    u64::from(c >> 4 & 3) * G + G,
                    &grants[..n],
                ))
            }
            7 => {
                what = "copy host to device";
                let n = len(c, b);
                let at = (usize::from(c) * 64) % HOST;
                let n = n.min((HOST - at) as u64);
                let src = HostBytes::from_slice(&host[PAGE + at..PAGE + at + n as usize]);
                code(&d.copy(
                    HostOrDevice::Device(DevicePtr::new(addr(a, b))),
                    HostOrDevice::Host(src),
                    n,
                ))
            }
            8 => {
                what = "copy device to host";
                let n = len(c, b).min(HOST as u64);
                let dst = HostBytes::from_mut_slice(&mut host[PAGE..PAGE + n as usize]);
                code(&d.copy(
                    HostOrDevice::Host(dst),
                    HostOrDevice::Device(DevicePtr::new(addr(a, b))),
                    n,
                ))
            }
            9 => {
                what = "copy device to device";
                let n = len(c, c.rotate_left(3));
                code(&d.copy(
                    HostOrDevice::Device(DevicePtr::new(addr(a, b))),
                    HostOrDevice::Device(DevicePtr::new(addr(b, a))),
                    n,
                ))
            }
            10 => {
                what = "memset";
                let p = match c % 3 {
                    0 => Pattern::D8(b),
                    1 => Pattern::D16(u16::from(b) * 257),
                    _ => Pattern::D32(u32::from(b) * 0x0101_0101),
                };
                code(&d.memset(DevicePtr::new(addr(a, b)), p, len(c >> 2, b)))
            }
            11 => {
                what = "cuMemAlloc";
                let size = match a % 4 {
                    0 => u64::from(b) + 1,
                    1 => u64::from(b) * 4096,
                    2 => u64::from(b) * G,
                    _ => [0, u64::MAX, 1 << 40, 1 << 63][b as usize % 4],
                };
                let r = d.mem_alloc(size);
                if let Ok(p) = r {
                    allocs.push(p.get());
                }
                code(&r)
            }
            12 => {
                what = "cuMemFree";
                let p = if c % 4 == 0 {
                    addr(a, b)
                } else {
                    pick(&allocs, a).unwrap_or(0)
                };
                let r = d.mem_free(DevicePtr::new(p));
                if r.is_ok() {
                    allocs.retain(|x| *x != p);
                }
                code(&r)
            }
            13 => {
                what = "host alloc";
                let size = match a % 3 {
                    0 => u64::from(b) + 1,
                    1 => u64::from(b) * 4096,
                    _ => [0, u64::MAX, 1 << 40][b as usize % 3],
                };
                let r = d.host_alloc(size, u32::from(c % 16));
                if let Ok(p) = r {
                    // Host memory the program owns: the mock hands it out; writing it is
                    // the program's right.
                    hosts.push(p);
                }
                code(&r)
            }
            14 => {
                what = "host free";
                let p = if c % 4 == 0 {
                    addr(a, b)
                } else {
                    pick(&hosts, a).unwrap_or(0)
                };
                let r = d.host_free(p);
                if r.is_ok() {
                    hosts.retain(|x| *x != p);
                }
                code(&r)
            }
            15 => {
                what = "managed alloc";
                let size = match a % 3 {
                    0 => u64::from(b) + 1,
                    1 => u64::from(b) * 4096,
                    _ => [0, u64::MAX, 1 << 40][b as usize % 3],
                };
                let r = d.mem_alloc_managed(size, u32::from(c % 4));
                if let Ok(p) = r {
                    managed.push(p);
                }
                code(&r)
            }
            16 => {
                what = "set current";
                code(&d.ctx_set_current(Some(contexts[(a % 2) as usize])))
            }
            17 => {
                what = "pitch alloc";
                let r = d.mem_alloc_pitch(
                    u64::from(a) * 7 + 1,
                    u64::from(b) + 1,
                    [1, 2, 4, 8, 16, 3][c as usize % 6],
                );
                if let Ok((p, _)) = r {
                    allocs.push(p);
                }
                code(&r)
            }
            18 => {
                what = "memset 2D";
                code(&d.memset_2d(
                    addr(a, b),
                    u64::from(c) * 64,
                    Pattern::D8(c),
                    u64::from(b),
                    u64::from(a % 16),
                ))
            }
            19 => {
                what = "synchronize";
                code(&d.ctx_synchronize(None))
            }
            20 => {
                what = "export and import";
                match pick(&handles, a) {
                    Some(h) => match d.export(h, i32::from(b % 3), 0) {
                        Ok(fd) => {
                            let r = d.import(fd.as_raw_fd(), 1);
                            if let Ok(h) = r {
                                handles.push(h);
                            }
                            code(&r)
                        }
                        Err(e) => e.code,
                    },
                    None => 0,
                }
            }
            21 => {
                what = "retain allocation handle";
                let r = d.retain_allocation_handle(DevicePtr::new(addr(a, b)));
                if let Ok(h) = r {
                    handles.push(h);
                }
                code(&r)
            }
            22 => {
                what = "queries";
                let p = addr(a, b);
                let _ = d.pointer_info(DevicePtr::new(p));
                let _ = d.get_access(1, i32::from(c % 3), DevicePtr::new(p));
                let _ = d.host_flags(p);
                code(&d.address_range(DevicePtr::new(p)))
            }
            23 => {
                what = "advise and prefetch";
                let p = addr(a, b);
                let _ = d.mem_advise(p, len(c, b), i32::from(c % 8), i32::from(c >> 3) % 3, 0);
                code(&d.mem_prefetch(p, len(c, b), 1, i32::from(c >> 5) % 3, 0))
            }
            24 => {
                what = "mem info";
                code(&d.mem_info())
            }
            _ => {
                what = "cuMemAlloc and free";
                let r = d.mem_alloc(u64::from(a) * 4096 + u64::from(b) + 1);
                if let Ok(p) = r {
                    let _ = d.memset(p, Pattern::D8(c), u64::from(b));
                    let _ = d.mem_free(p);
                }
                code(&r)
            }
        };
        if crate::verbose() {
            eprintln!("{step}: {what} -> {result}");
        }
        canaries.check(&host, step, what);
        sig = sig.rotate_left(3) ^ (u64::from(op) << 16 | u64::from(result));
    }
    if crate::verbose() {
        eprintln!("{} fence pages", canaries.fences.len());
    }
    drop(d);
    canaries.check(&host, usize::MAX, "after the driver went");
    sig
}
