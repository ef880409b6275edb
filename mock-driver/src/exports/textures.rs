//! CUDA arrays (cuda.h files them under Memory management: `MemoryApi`'s methods in
//! `memory.rs` call the functions here), texture objects (`TextureObjectApi`) and
//! surface objects (`SurfaceObjectApi`), over `model::textures`.

use super::memory::plane;
use super::{legacy_order, per_thread_order, stream, Mock};
use crate::boundary::{drv, input, out};
use crate::model::copies2d::PlaneStart;
use crate::model::error::*;
use crate::model::textures::Volume;
use crate::model::Driver;
use cumock_abi::*;
use std::ffi::c_void;

const CU_MEMORYTYPE_ARRAY: u32 = 3;

fn array_key(h: CUarray) -> u64 {
    h as u64
}

/// cuArrayCreate_v2: a 1D (Height 0) or 2D array.
pub unsafe fn array_create(p: *mut CUarray, desc: *const CUDA_ARRAY_DESCRIPTOR) -> CuResult<()> {
    let d = drv()?;
    if p.is_null() {
        return Err(invalid("pHandle is NULL"));
    }
    let a = input(desc, "pAllocateArray")?;
    let h = d.array_create(CUDA_ARRAY3D_DESCRIPTOR {
        width: a.width,
        height: a.height,
        depth: 0,
        format: a.format,
        num_channels: a.num_channels,
        flags: 0,
    })?;
    out(p, h as CUarray)
}

/// cuArray3DCreate_v2.
pub unsafe fn array_3d_create(
    p: *mut CUarray,
    desc: *const CUDA_ARRAY3D_DESCRIPTOR,
) -> CuResult<()> {
    let d = drv()?;
    if p.is_null() {
        return Err(invalid("pHandle is NULL"));
    }
    let h = d.array_create(input(desc, "pAllocateArray")?)?;
    out(p, h as CUarray)
}

pub unsafe fn array_descriptor(p: *mut CUDA_ARRAY_DESCRIPTOR, h: CUarray) -> CuResult<()> {
    let a = drv()?.array_descriptor(array_key(h))?;
    out(
        p,
        CUDA_ARRAY_DESCRIPTOR {
            width: a.width,
            height: a.height,
            format: a.format,
            num_channels: a.num_channels,
        },
    )
}

pub unsafe fn array_3d_descriptor(p: *mut CUDA_ARRAY3D_DESCRIPTOR, h: CUarray) -> CuResult<()> {
    let a = drv()?.array_descriptor(array_key(h))?;
    out(p, a)
}

pub fn array_destroy(h: CUarray) -> CuResult<()> {
    drv()?.array_destroy(array_key(h))
}

/// A side of a byte copy to or from an array (cuMemcpyHtoA and friends).
pub fn host_side(p: *const c_void) -> CuResult<Volume> {
    if p.is_null() {
        return Err(invalid("the host pointer is NULL"));
    }
    Ok(Volume::Linear {
        start: PlaneStart::Host(p as *mut u8),
        pitch: 0,
        height: 1,
    })
}

pub fn device_side(p: CUdeviceptr) -> Volume {
    Volume::Linear {
        start: PlaneStart::Device(p),
        pitch: 0,
        height: 1,
    }
}

/// cuMemcpy{HtoA,AtoH,DtoA,AtoD,AtoA}_v2, synchronous: `count` bytes at byte offsets.
///
/// # Safety
/// A host side is valid for `count` bytes, as cuda.h requires.
pub unsafe fn copy_bytes(
    dst: Volume,
    dst_offset: usize,
    src: Volume,
    src_offset: usize,
    count: usize,
) -> CuResult<()> {
    legacy_order()?;
    let d = drv()?;
    // Safety: this function's contract.
    unsafe {
        d.copy_array_bytes(
            &dst,
            dst_offset as u64,
            &src,
            src_offset as u64,
            count as u64,
        )
    }
}

pub fn array_side(h: CUarray) -> Volume {
    Volume::Array(array_key(h))
}

/// One side of a cuMemcpy2D/3D: an array, or linear memory (host, device, unified) as
/// `plane` reads it, from its origin (the offsets apply in `copy_volume`).
#[allow(clippy::too_many_arguments)]
fn volume(
    d: &Driver,
    which: &str,
    memory_type: u32,
    host: *const c_void,
    device: CUdeviceptr,
    array: *mut c_void,
    pitch: usize,
    height: usize,
    extent: usize,
) -> CuResult<Volume> {
    if memory_type == CU_MEMORYTYPE_ARRAY {
        return Ok(Volume::Array(array as u64));
    }
    let p = plane(d, which, memory_type, host, device, 0, 0, pitch, extent)?;
    Ok(Volume::Linear {
        start: p.start,
        pitch: pitch as u64,
        height: height as u64,
    })
}

/// cuMemcpy2D with an array on either side.
///
/// # Safety
/// The host sides of `c` are valid for their extent, as cuda.h requires.
pub unsafe fn copy_2d_arrays(d: &Driver, c: &CUDA_MEMCPY2D) -> CuResult<()> {
    let extent = |x: usize, y: usize, pitch: usize| {
        (y + c.height)
            .saturating_sub(1)
            .saturating_mul(pitch)
            .saturating_add(x + c.width_in_bytes)
    };
    let src = volume(
        d,
        "source",
        c.src_memory_type,
        c.src_host,
        c.src_device,
        c.src_array,
        c.src_pitch,
        0,
        extent(c.src_x_in_bytes, c.src_y, c.src_pitch),
    )?;
    let dst = volume(
        d,
        "destination",
        c.dst_memory_type,
        c.dst_host,
        c.dst_device,
        c.dst_array,
        c.dst_pitch,
        0,
        extent(c.dst_x_in_bytes, c.dst_y, c.dst_pitch),
    )?;
    // Safety: this function's contract.
    unsafe {
        d.copy_volume(
            &dst,
            [c.dst_x_in_bytes as u64, c.dst_y as u64, 0],
            &src,
            [c.src_x_in_bytes as u64, c.src_y as u64, 0],
            [c.width_in_bytes as u64, c.height as u64, 1],
        )
    }
}

pub fn has_array(c: &CUDA_MEMCPY2D) -> bool {
    c.src_memory_type == CU_MEMORYTYPE_ARRAY || c.dst_memory_type == CU_MEMORYTYPE_ARRAY
}

/// cuMemcpy3D_v2: any sides, arrays included.
///
/// # Safety
/// The host sides of `c` are valid for their extent, as cuda.h requires.
pub unsafe fn copy_3d(c: &CUDA_MEMCPY3D) -> CuResult<()> {
    let d = drv()?;
    if c.src_lod != 0 || c.dst_lod != 0 {
        return Err(not_supported(
            "copies to or from a mipmap level (srcLOD, dstLOD) are not emulated",
        ));
    }
    if !c.reserved0.is_null() || !c.reserved1.is_null() {
        return Err(invalid("reserved0 and reserved1 must be NULL"));
    }
    let extent = |x: usize, y: usize, z: usize, pitch: usize, height: usize| {
        let slice = pitch.saturating_mul(height.max(1));
        (z + c.depth)
            .saturating_sub(1)
            .saturating_mul(slice)
            .saturating_add((y + c.height).saturating_sub(1).saturating_mul(pitch))
            .saturating_add(x + c.width_in_bytes)
    };
    let src = volume(
        d,
        "source",
        c.src_memory_type,
        c.src_host,
        c.src_device,
        c.src_array,
        c.src_pitch,
        c.src_height,
        extent(
            c.src_x_in_bytes,
            c.src_y,
            c.src_z,
            c.src_pitch,
            c.src_height,
        ),
    )?;
    let dst = volume(
        d,
        "destination",
        c.dst_memory_type,
        c.dst_host,
        c.dst_device,
        c.dst_array,
        c.dst_pitch,
        c.dst_height,
        extent(
            c.dst_x_in_bytes,
            c.dst_y,
            c.dst_z,
            c.dst_pitch,
            c.dst_height,
        ),
    )?;
    // Safety: this function's contract.
    unsafe {
        d.copy_volume(
            &dst,
            [c.dst_x_in_bytes as u64, c.dst_y as u64, c.dst_z as u64],
            &src,
            [c.src_x_in_bytes as u64, c.src_y as u64, c.src_z as u64],
            [c.width_in_bytes as u64, c.height as u64, c.depth as u64],
        )
    }
}

/// cuMemcpy3D_v2 and its variants, ordered as their base: see `memory.rs`.
pub unsafe fn memcpy_3d(copy: *const CUDA_MEMCPY3D) -> CuResult<()> {
    legacy_order()?;
    let c = input(copy, "pCopy")?;
    // Safety: cuda.h's contract on the host sides.
    unsafe { copy_3d(&c) }
}

pub unsafe fn memcpy_3d_async(copy: *const CUDA_MEMCPY3D, s: CUstream) -> CuResult<()> {
    let _order = stream(s)?;
    // Safety: as memcpy_3d's.
    unsafe { memcpy_3d(copy) }
}

pub unsafe fn memcpy_3d_ptds(copy: *const CUDA_MEMCPY3D) -> CuResult<()> {
    let _order = per_thread_order()?;
    // Safety: as memcpy_3d's.
    unsafe { memcpy_3d(copy) }
}

impl TextureObjectApi for Mock {
    unsafe fn cuTexObjectCreate(
        p: *mut CUtexObject,
        res: *const CUDA_RESOURCE_DESC,
        tex: *const CUDA_TEXTURE_DESC,
        view: *const CUDA_RESOURCE_VIEW_DESC,
    ) -> CuResult<()> {
        let d = drv()?;
        if p.is_null() {
            return Err(invalid("pTexObject is NULL"));
        }
        let r = input(res, "pResDesc")?;
        let t = input(tex, "pTexDesc")?;
        if !view.is_null() {
            return Err(not_supported(
                "resource views (pResViewDesc) are not emulated: pass NULL",
            ));
        }
        let h = d.texture_create(r, t)?;
        out(p, h)
    }

    unsafe fn cuTexObjectDestroy(t: CUtexObject) -> CuResult<()> {
        drv()?.texture_destroy(t)
    }

    unsafe fn cuTexObjectGetResourceDesc(
        p: *mut CUDA_RESOURCE_DESC,
        t: CUtexObject,
    ) -> CuResult<()> {
        let (r, _) = drv()?.texture_descriptors(t)?;
        out(p, r)
    }

    unsafe fn cuTexObjectGetTextureDesc(p: *mut CUDA_TEXTURE_DESC, t: CUtexObject) -> CuResult<()> {
        let (_, tex) = drv()?.texture_descriptors(t)?;
        out(p, tex)
    }
}

impl SurfaceObjectApi for Mock {
    unsafe fn cuSurfObjectCreate(
        p: *mut CUsurfObject,
        res: *const CUDA_RESOURCE_DESC,
    ) -> CuResult<()> {
        let d = drv()?;
        if p.is_null() {
            return Err(invalid("pSurfObject is NULL"));
        }
        let h = d.surface_create(input(res, "pResDesc")?)?;
        out(p, h)
    }

    unsafe fn cuSurfObjectDestroy(s: CUsurfObject) -> CuResult<()> {
        drv()?.surface_destroy(s)
    }

    unsafe fn cuSurfObjectGetResourceDesc(
        p: *mut CUDA_RESOURCE_DESC,
        s: CUsurfObject,
    ) -> CuResult<()> {
        let r = drv()?.surface_resource(s)?;
        out(p, r)
    }
}
