//! Tensor maps (`TensorMapObjectApi`): `cuTensorMapEncodeTiled` checks what it is given as
//! cuda.h's requirements say and writes the 128 bytes kernels hand to
//! `cp.async.bulk.tensor` (`cumock_ptx::tensormap`: the layout is the mock's, opaque as
//! CUDA keeps it); `cuTensorMapEncodeIm2col` the same for im2col maps;
//! `cuTensorMapReplaceAddress` changes their address. `cuTensorMapEncodeIm2colWide` is
//! sm_100's (the trait's default says it is not emulated).

use super::Mock;
use crate::model::error::*;
use cumock_abi::*;
use cumock_ptx::tensormap::{self, Im2colArgs, Refusal, TensorMap, TiledArgs};
use std::ffi::c_void;

fn refused(r: Refusal) -> CuError {
    match r {
        Refusal::Invalid(why) => invalid(why),
        Refusal::NotSupported(why) => not_supported(why),
    }
}

/// `n` values at `p`, which the caller says holds them (NULL is an invalid value).
///
/// # Safety
/// `p` is NULL or valid for reads of `n` values.
unsafe fn array<T: Copy>(p: *const T, n: usize, what: &str) -> CuResult<Vec<T>> {
    // Safety: the caller's contract.
    Ok(unsafe { crate::boundary::slice(p, n, what) }?.to_vec())
}

// The map's 128 bytes are the program's `CUtensorMap` (an `Out`: NULL is refused first).
// cuda.h asks for 64-byte alignment, which the H200's driver does not check (probe
// tensor_map: a map 32 bytes off is encoded); kernels that use it are where alignment
// matters.
impl TensorMapObjectApi for Mock {
    emulate! {
        fn cuTensorMapEncodeTiled(
            d;
            tensor_map,
            data_type,
            rank,
            #[raw] address,
            #[raw] dims,
            #[raw] strides,
            #[raw] box_dim,
            #[raw] element_strides,
            interleave,
            swizzle,
            l2_promotion,
            oob_fill,
        ) {
            let p = tensor_map.as_ptr().cast::<u8>();
            d.ctx_device(None)?;
            // Safety: the caller's contract for every argument, as below.
            let r = unsafe {
                encode_tiled(
                    p,
                    data_type,
                    rank,
                    address,
                    [dims, strides],
                    [box_dim, element_strides],
                    [
                        interleave as u32,
                        swizzle as u32,
                        l2_promotion as u32,
                        oob_fill as u32,
                    ],
                )
            };
            r.map_err(|(e, written)| {
                if written {
                    // The H200 writes the map even when it refuses it, past its first
                    // checks (probe tensor_map); what it writes is not recorded: zeros here.
                    // Safety: `p` is the caller's non-null 128-byte CUtensorMap.
                    unsafe { std::ptr::write_bytes(p, 0, tensormap::BYTES) };
                }
                e
            })
        }

        fn cuTensorMapEncodeIm2col(
            d;
            tensor_map,
            data_type,
            rank,
            #[raw] address,
            #[raw] dims,
            #[raw] strides,
            #[raw] lower,
            #[raw] upper,
            channels,
            pixels,
            #[raw] element_strides,
            interleave,
            swizzle,
            l2_promotion,
            oob_fill,
        ) {
            let p = tensor_map.as_ptr().cast::<u8>();
            d.ctx_device(None)?;
            // The rank first: it sizes every array (3..=5 for im2col), and a refusal there
            // leaves the map as it was, as for tiled maps.
            if !(3..=5).contains(&rank) {
                return Err(invalid(format!(
                    "tensorRank {rank} is outside 3..=5 for an im2col map"
                )));
            }
            let r = rank as usize;
            // Safety: the caller passes arrays of `rank` values (strides: `rank - 1`,
            // corners `rank - 2`), as cuTensorMapEncodeIm2col's contract says; NULL is
            // refused.
            let (dims, strides, lower, upper, element_strides) = unsafe {
                (
                    array(dims, r, "globalDim")?,
                    array(strides, r - 1, "globalStrides")?,
                    array(lower, r - 2, "pixelBoxLowerCorner")?,
                    array(upper, r - 2, "pixelBoxUpperCorner")?,
                    array(element_strides, r, "elementStrides")?,
                )
            };
            let map = TensorMap::im2col(&Im2colArgs {
                tiled: TiledArgs {
                    data_type: data_type as u32,
                    rank,
                    address: address as u64,
                    dims: &dims,
                    global_strides: &strides,
                    box_dim: &[],
                    element_strides: &element_strides,
                    interleave: interleave as u32,
                    swizzle: swizzle as u32,
                    l2_promotion: l2_promotion as u32,
                    oob_fill: oob_fill as u32,
                },
                lower: &lower,
                upper: &upper,
                channels,
                pixels,
            })
            .map_err(refused)?;
            let bytes = map.encode();
            // Safety: `p` is the caller's CUtensorMap, 128 bytes, not NULL.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, tensormap::BYTES) };
            Ok(())
        }

        fn cuTensorMapReplaceAddress(_d; tensor_map, #[raw] address) {
            let p = tensor_map.as_ptr().cast::<u8>();
            let mut bytes = [0u8; tensormap::BYTES];
            // Safety: as in cuTensorMapEncodeTiled: the caller's 128-byte CUtensorMap.
            unsafe {
                std::ptr::copy_nonoverlapping(p as *const u8, bytes.as_mut_ptr(), tensormap::BYTES)
            };
            let map = TensorMap::decode(&bytes)
                .ok_or_else(|| invalid("tensorMap is no map cuTensorMapEncodeTiled wrote"))?;
            let bytes = map.with_address(address as u64).map_err(refused)?.encode();
            // Safety: as above.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, tensormap::BYTES) };
            Ok(())
        }
    }
}

/// cuTensorMapEncodeTiled's checks and encoding into the map at `p`.
///
/// # Safety
/// `p` is the caller's 128-byte CUtensorMap; the arrays hold `rank` values
/// (`globalStrides`: `rank - 1`), or are NULL (refused).
unsafe fn encode_tiled(
    p: *mut u8,
    data_type: CUtensorMapDataType,
    rank: cuuint32_t,
    address: *mut c_void,
    [dims, strides]: [*const cuuint64_t; 2],
    [box_dim, element_strides]: [*const cuuint32_t; 2],
    [interleave, swizzle, l2_promotion, oob_fill]: [u32; 4],
) -> Result<(), (CuError, bool)> {
    // The first checks, which leave the map untouched on the H200: the rank, and a zero
    // among the sizes; every later refusal has written it (the bool).
    let early = |e: CuError| (e, false);
    if rank == 0 || rank > 5 {
        return Err(early(invalid(format!(
            "tensorRank {rank} is outside 1..=5"
        ))));
    }
    let r = rank as usize;
    // Safety: the caller passes arrays of `rank` (strides: `rank - 1`) values, as
    // cuTensorMapEncodeTiled's contract says; NULL is refused.
    let (dims, strides, box_dim, element_strides) = unsafe {
        (
            array(dims, r, "globalDim").map_err(early)?,
            array(strides, r - 1, "globalStrides").map_err(early)?,
            array(box_dim, r, "boxDim").map_err(early)?,
            array(element_strides, r, "elementStrides").map_err(early)?,
        )
    };
    if dims.contains(&0) || box_dim.contains(&0) || element_strides.contains(&0) {
        return Err(early(invalid(
            "a globalDim, boxDim or elementStrides value is 0",
        )));
    }
    let map = TensorMap::tiled(&TiledArgs {
        data_type: data_type as u32,
        rank,
        address: address as u64,
        dims: &dims,
        global_strides: &strides,
        box_dim: &box_dim,
        element_strides: &element_strides,
        interleave,
        swizzle,
        l2_promotion,
        oob_fill,
    })
    .map_err(|r| (refused(r), true))?;
    let bytes = map.encode();
    // Safety: `p` is the caller's CUtensorMap, 128 bytes (CU_TENSOR_MAP_NUM_QWORDS
    // = 16), not NULL (`emulate!`'s `Out`).
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, tensormap::BYTES) };
    Ok(())
}
