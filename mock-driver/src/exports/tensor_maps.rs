//! Tensor maps (`TensorMapObjectApi`): `cuTensorMapEncodeTiled` checks what it is given as
//! cuda.h's requirements say and writes the 128 bytes kernels hand to
//! `cp.async.bulk.tensor` (`cumock_ptx::tensormap`: the layout is the mock's, opaque as
//! CUDA keeps it); `cuTensorMapReplaceAddress` changes their address. Im2col maps are
//! not emulated (the trait's default says so).

use super::Mock;
use crate::boundary::drv;
use crate::model::error::*;
use cumock_abi::*;
use cumock_ptx::tensormap::{self, Refusal, TensorMap, TiledArgs};
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
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        return Err(invalid(format!("{what} is NULL")));
    }
    // Safety: non-null, and valid for `n` reads per the caller's contract.
    Ok((0..n)
        .map(|i| unsafe { p.add(i).read_unaligned() })
        .collect())
}

/// The map's 128 bytes at `p`, which must be 64-byte aligned.
fn map_ptr(p: *mut CUtensorMap) -> CuResult<*mut u8> {
    if p.is_null() {
        return Err(invalid("tensorMap is NULL"));
    }
    if !(p as usize).is_multiple_of(64) {
        return Err(invalid("tensorMap is not 64-byte aligned"));
    }
    Ok(p as *mut u8)
}

impl TensorMapObjectApi for Mock {
    unsafe fn cuTensorMapEncodeTiled(
        tensor_map: *mut CUtensorMap,
        data_type: CUtensorMapDataType,
        rank: cuuint32_t,
        address: *mut c_void,
        dims: *const cuuint64_t,
        strides: *const cuuint64_t,
        box_dim: *const cuuint32_t,
        element_strides: *const cuuint32_t,
        interleave: CUtensorMapInterleave,
        swizzle: CUtensorMapSwizzle,
        l2_promotion: CUtensorMapL2promotion,
        oob_fill: CUtensorMapFloatOOBfill,
    ) -> CuResult<()> {
        drv()?;
        let p = map_ptr(tensor_map)?;
        if rank == 0 || rank > 5 {
            return Err(invalid(format!("tensorRank {rank} is outside 1..=5")));
        }
        let r = rank as usize;
        // Safety: the caller passes arrays of `rank` (strides: `rank - 1`) values, as
        // cuTensorMapEncodeTiled's contract says; NULL is refused.
        let (dims, strides, box_dim, element_strides) = unsafe {
            (
                array(dims, r, "globalDim")?,
                array(strides, r - 1, "globalStrides")?,
                array(box_dim, r, "boxDim")?,
                array(element_strides, r, "elementStrides")?,
            )
        };
        let map = TensorMap::tiled(&TiledArgs {
            data_type: data_type as u32,
            rank,
            address: address as u64,
            dims: &dims,
            global_strides: &strides,
            box_dim: &box_dim,
            element_strides: &element_strides,
            interleave: interleave as u32,
            swizzle: swizzle as u32,
            l2_promotion: l2_promotion as u32,
            oob_fill: oob_fill as u32,
        })
        .map_err(refused)?;
        let bytes = map.encode();
        // Safety: `p` is the caller's CUtensorMap, 128 bytes (CU_TENSOR_MAP_NUM_QWORDS
        // = 16), non-null and aligned as checked.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, tensormap::BYTES) };
        Ok(())
    }

    unsafe fn cuTensorMapReplaceAddress(
        tensor_map: *mut CUtensorMap,
        address: *mut c_void,
    ) -> CuResult<()> {
        drv()?;
        let p = map_ptr(tensor_map)?;
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
