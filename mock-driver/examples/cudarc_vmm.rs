//! cudarc (crates.io) calling the VMM functions through its `driver::sys`, with the
//! driver loaded dynamically, as a Rust program would on a GPU. Run with the mock in
//! LD_LIBRARY_PATH (mock-driver/tests/clients.rs does); prints "ok".

use cudarc::driver::sys::*;
use std::mem::MaybeUninit;

fn check(r: CUresult, what: &str) {
    assert_eq!(r, CUresult::CUDA_SUCCESS, "{what}");
}

fn main() {
    // Safety: the calls follow cuda.h; every pointer is to a live local.
    unsafe {
        check(cuInit(0), "cuInit");
        let mut ctx = MaybeUninit::uninit();
        check(cuDevicePrimaryCtxRetain(ctx.as_mut_ptr(), 0), "retain");
        check(cuCtxSetCurrent(ctx.assume_init()), "set current");
        let mut prop: CUmemAllocationProp = std::mem::zeroed();
        prop.type_ = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = 0;
        let mut gran = 0usize;
        check(
            cuMemGetAllocationGranularity(
                &mut gran,
                &prop,
                CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
            ),
            "granularity",
        );
        let mut va = 0u64;
        check(cuMemAddressReserve(&mut va, 4 * gran, 0, 0, 0), "reserve");
        let mut handles = [0u64; 2];
        for (i, h) in handles.iter_mut().enumerate() {
            check(cuMemCreate(h, gran, &prop, 0), "create");
            check(cuMemMap(va + (i * gran) as u64, gran, 0, *h, 0), "map");
        }
        let mut desc: CUmemAccessDesc = std::mem::zeroed();
        desc.location = prop.location;
        desc.flags = CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        check(cuMemSetAccess(va, 2 * gran, &desc, 1), "set access");
        let data: Vec<u8> = (0..gran).map(|i| (i * 7 % 256) as u8).collect();
        check(
            cuMemcpyHtoD_v2(va + gran as u64 / 2, data.as_ptr().cast(), data.len()),
            "htod across the chunks",
        );
        let mut back = vec![0u8; gran];
        check(
            cuMemcpyDtoH_v2(back.as_mut_ptr().cast(), va + gran as u64 / 2, back.len()),
            "dtoh",
        );
        assert_eq!(back, data);
        check(cuMemUnmap(va, 2 * gran), "unmap");
        for h in handles {
            check(cuMemRelease(h), "release");
        }
        check(cuMemAddressFree(va, 4 * gran), "free");
    }
    println!("ok");
}
