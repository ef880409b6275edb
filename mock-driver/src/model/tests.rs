//! Tests of the driver across nouns: copies over VMM mappings, exports, memory reuse.

use super::ids::DevicePtr;
use super::profile::Profile;
use super::vmm::{AllocationProp, Need};
use super::*;
use cumock_abi::consts::*;
use cumock_abi::result::*;

fn driver_with(n: usize) -> Driver {
    let d = Driver::new(Profile::builtin_with_devices(n).unwrap());
    d.init(0).unwrap();
    d
}

fn dev_prop(d: &Driver, dev: i32) -> AllocationProp {
    let mut p = cumock_abi::CUmemAllocationProp {
        type_: 1,
        ..Default::default()
    };
    p.location = cumock_abi::CUmemLocation { type_: 1, id: dev };
    p.requested_handle_types = 1;
    d.check_prop(&p).unwrap()
}

#[test]
fn grow_without_copying_keeps_data_across_chunks() {
    let d = driver_with(1);
    let ctx = d.primary_retain(0).unwrap();
    d.ctx_set_current(Some(ctx)).unwrap();
    const G: u64 = 2 << 20;
    let va = d.address_reserve(64 * G, 0, DevicePtr::NULL, 0).unwrap();
    for i in 0..3 {
        let h = d.create(G, dev_prop(&d, 0), 0).unwrap();
        d.map(va + i * G, G, 0, h, 0).unwrap();
        d.release(h).unwrap();
        d.set_access(va + i * G, G, &[(1, 0, 3)]).unwrap();
    }
    let data: Vec<u8> = (0..3 * G).map(|i| (i % 251) as u8).collect();
    d.copy(
        HostOrDevice::Device(va),
        HostOrDevice::Host(HostBytes::from_slice(&data)),
        3 * G,
    )
    .unwrap();
    let mut back = vec![0u8; (3 * G) as usize];
    d.copy(
        HostOrDevice::Host(HostBytes::from_mut_slice(&mut back)),
        HostOrDevice::Device(va),
        3 * G,
    )
    .unwrap();
    assert_eq!(back, data);
    d.unmap(va, 3 * G).unwrap();
    d.address_free(va, 64 * G).unwrap();
}

#[test]
fn translation_sees_what_copies_see_before_and_after_an_export() {
    let d = driver_with(2);
    let ctx = d.primary_retain(0).unwrap();
    d.ctx_set_current(Some(ctx)).unwrap();
    const G: u64 = 2 << 20;
    let va = d.address_reserve(4 * G, 0, DevicePtr::NULL, 0).unwrap();
    let h = d.create(2 * G, dev_prop(&d, 0), 0).unwrap();
    d.map(va, 2 * G, 0, h, 0).unwrap();
    d.map(va + 2 * G, 2 * G, 0, h, 0).unwrap();
    assert_eq!(
        d.translate(va, 8, 0, Need::Read).err().map(|e| e.code),
        Some(CUDA_ERROR_INVALID_VALUE),
        "no access granted yet"
    );
    d.set_access(va, 4 * G, &[(1, 0, 3)]).unwrap();
    {
        // Crossing from one alias into the other: two pieces.
        let t = d.translate(va + 2 * G - 4, 8, 0, Need::Write).unwrap();
        assert_eq!(t.segments.iter().map(|s| s.len).collect::<Vec<_>>(), [4, 4]);
        for s in &t.segments {
            // Safety: each piece is live device memory of s.len bytes, held by t.
            unsafe { std::ptr::write_bytes(s.ptr.as_ptr(), 0xab, s.len) };
        }
    }
    let fd = d.export(h, 1, 0).unwrap();
    let mut back = [0u8; 8];
    // The alias at va+2G shows the bytes written at the end of the first mapping.
    d.copy(
        HostOrDevice::Host(HostBytes::from_mut_slice(&mut back)),
        HostOrDevice::Device(va + 4 * G - 4),
        4,
    )
    .unwrap();
    d.copy(
        HostOrDevice::Host(HostBytes::from_mut_slice(&mut back[4..])),
        HostOrDevice::Device(va + 2 * G),
        4,
    )
    .unwrap();
    assert_eq!(back, [0xab; 8]);
    let t = d.translate(va + 2 * G - 4, 8, 0, Need::Read).unwrap();
    // Safety: live device memory held by t.
    let first = unsafe { t.segments[1].ptr.as_ptr().read() };
    assert_eq!(
        first, 0xab,
        "the moved pages are where the translation points"
    );
    drop((t, fd));
    d.unmap(va, 4 * G).unwrap();
    d.release(h).unwrap();
    d.address_free(va, 4 * G).unwrap();
}

#[test]
fn released_memory_is_reused_and_reads_zeros() {
    let d = driver_with(1);
    let ctx = d.primary_retain(0).unwrap();
    d.ctx_set_current(Some(ctx)).unwrap();
    const G: u64 = 2 << 20;
    let va = d.address_reserve(G, 0, DevicePtr::NULL, 0).unwrap();
    let mut places = Vec::new();
    // Touched memory goes back to the host 64 ranges at a time (see
    // arenas::DeviceMemory::release); then its ranges are reused.
    for round in 0..150u8 {
        let h = d.create(G, dev_prop(&d, 0), 0).unwrap();
        d.map(va, G, 0, h, 0).unwrap();
        d.set_access(va, G, &[(1, 0, 3)]).unwrap();
        let t = d.translate(va, 1, 0, Need::Read).unwrap();
        places.push(t.segments[0].ptr);
        drop(t);
        let mut back = [9u8; 64];
        d.copy(
            HostOrDevice::Host(HostBytes::from_mut_slice(&mut back)),
            HostOrDevice::Device(va + 4096),
            64,
        )
        .unwrap();
        assert_eq!(back, [0; 64], "round {round}: fresh memory reads zeros");
        let x = [round + 1; 64];
        d.copy(
            HostOrDevice::Device(va + 4096),
            HostOrDevice::Host(HostBytes::from_slice(&x)),
            64,
        )
        .unwrap();
        d.unmap(va, G).unwrap();
        d.release(h).unwrap();
    }
    let distinct: std::collections::HashSet<_> =
        places.iter().map(|p| p.as_ptr() as usize).collect();
    assert!(
        distinct.len() <= 64 + 1,
        "{} ranges for 150 allocations one after another",
        distinct.len()
    );
    d.address_free(va, G).unwrap();
}

#[test]
fn host_views_follow_an_export() {
    let d = driver_with(1);
    let ctx = d.primary_retain(0).unwrap();
    d.ctx_set_current(Some(ctx)).unwrap();
    const G: u64 = 2 << 20;
    let mut p = cumock_abi::CUmemAllocationProp {
        type_: 1,
        ..Default::default()
    };
    p.location = cumock_abi::CUmemLocation {
        type_: CU_MEM_LOCATION_TYPE_HOST_NUMA,
        id: 0,
    };
    p.requested_handle_types = 1;
    let prop = d.check_prop(&p).unwrap();
    let va = d.address_reserve(G, 0, DevicePtr::NULL, 0).unwrap();
    let h = d.create(G, prop, 0).unwrap();
    d.map(va, G, 0, h, 0).unwrap();
    d.set_access(va, G, &[(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0, 3), (1, 0, 3)])
        .unwrap();
    let host = va.get() as *mut u8;
    // Safety: the host was granted read-write access at va (a view placed there).
    unsafe { host.add(100).write(7) };
    let fd = d.export(h, 1, 0).unwrap();
    // Safety: as above; the view now shows the exported file's pages.
    unsafe {
        assert_eq!(host.add(100).read(), 7, "moved with the export");
        host.add(200).write(9);
    }
    let mut back = [0u8; 1];
    d.copy(
        HostOrDevice::Host(HostBytes::from_mut_slice(&mut back)),
        HostOrDevice::Device(va + 200),
        1,
    )
    .unwrap();
    assert_eq!(back, [9], "the host view and the device see the same bytes");
    let h2 = d.import(std::os::fd::AsRawFd::as_raw_fd(&fd), 1).unwrap();
    let vb = d.address_reserve(G, 0, DevicePtr::NULL, 0).unwrap();
    d.map(vb, G, 0, h2, 0).unwrap();
    d.set_access(vb, G, &[(1, 0, 3)]).unwrap();
    d.copy(
        HostOrDevice::Host(HostBytes::from_mut_slice(&mut back)),
        HostOrDevice::Device(vb + 200),
        1,
    )
    .unwrap();
    assert_eq!(back, [9], "an importer sees the host's write");
    d.unmap(vb, G).unwrap();
    d.unmap(va, G).unwrap();
    d.release(h).unwrap();
    d.release(h2).unwrap();
}

#[test]
fn copies_need_a_current_context() {
    let d = driver_with(1);
    let mut b = [0u8; 4];
    let e = d
        .copy(
            HostOrDevice::Host(HostBytes::from_mut_slice(&mut b)),
            HostOrDevice::Device(DevicePtr::new(0x1000)),
            4,
        )
        .unwrap_err();
    assert_eq!(e.code, CUDA_ERROR_INVALID_CONTEXT);
}

#[test]
fn mem_info_falls_and_comes_back() {
    let d = driver_with(1);
    let ctx = d.primary_retain(0).unwrap();
    d.ctx_set_current(Some(ctx)).unwrap();
    let (free0, total) = d.mem_info().unwrap();
    assert_eq!(total, 150_109_880_320);
    let h = d.create(128 << 20, dev_prop(&d, 0), 0).unwrap();
    assert_eq!(d.mem_info().unwrap().0, free0 - (128 << 20));
    d.release(h).unwrap();
    assert_eq!(d.mem_info().unwrap().0, free0);
}

#[test]
fn peer_grant_gives_only_that_device_access() {
    let d = driver_with(2);
    let c0 = d.primary_retain(0).unwrap();
    let c1 = d.primary_retain(1).unwrap();
    const G: u64 = 2 << 20;
    let va = d.address_reserve(G, 0, DevicePtr::NULL, 0).unwrap();
    let h = d.create(G, dev_prop(&d, 0), 0).unwrap();
    d.map(va, G, 0, h, 0).unwrap();
    d.set_access(va, G, &[(1, 1, 3)]).unwrap();
    assert_eq!(d.get_access(1, 0, va).unwrap(), 0);
    assert_eq!(d.get_access(1, 1, va).unwrap(), 3);
    let x = [7u8; 8];
    d.ctx_set_current(Some(c0)).unwrap();
    assert_eq!(
        d.copy(
            HostOrDevice::Device(va),
            HostOrDevice::Host(HostBytes::from_slice(&x)),
            8
        )
        .unwrap_err()
        .code,
        CUDA_ERROR_INVALID_VALUE
    );
    d.ctx_set_current(Some(c1)).unwrap();
    d.copy(
        HostOrDevice::Device(va),
        HostOrDevice::Host(HostBytes::from_slice(&x)),
        8,
    )
    .unwrap();
}
