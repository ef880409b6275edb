//! CUDA arrays, texture objects (`TextureObjectApi`) and surface objects
//! (`SurfaceObjectApi`), over `model::textures`. cuda.h files the arrays under
//! `MemoryApi`, whose methods (exports/mod.rs) call the functions here: cuArrayCreate,
//! cuArray3DCreate, cuArrayGetDescriptor, cuArray3DGetDescriptor, cuArrayDestroy, the
//! mipmapped arrays' cuMipmappedArrayCreate, GetLevel and Destroy, the memory
//! requirements and sparse properties of arrays and mipmapped arrays,
//! cuMemcpyHtoA, cuMemcpyAtoH, cuMemcpyDtoA, cuMemcpyAtoD, cuMemcpyAtoA (and the Async
//! forms), cuMemcpy3D and cuMemcpy3DAsync; the 2D copies with an array side come here
//! from `copies2d.rs`.

use super::copies2d::plane;
use super::{legacy_order, stream, Mock};
use crate::boundary::{drv, input, Handle};
use crate::model::copies2d::PlaneStart;
use crate::model::error::*;
use crate::model::ids::ArrayId;
use crate::model::texture_references::Binding;
use crate::model::textures::{AnyArray, Volume};
use crate::model::Driver;
use cumock_abi::*;
use std::ffi::c_void;

const CU_MEMORYTYPE_ARRAY: u32 = 3;

/// A host side of a byte copy to or from an array (cuMemcpyHtoA and friends), not NULL.
pub fn host_side(p: *const c_void) -> Volume {
    Volume::Linear {
        start: PlaneStart::Host(p as *mut u8),
        pitch: 0,
        height: 1,
    }
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
    Volume::Array(h.key())
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
        // The H200 refuses a NULL array side as a value (probe arrays, copies-2d).
        if array.is_null() {
            return Err(invalid(format!("the {which} array is NULL")));
        }
        return Ok(Volume::Array(ArrayId::from_handle(array as u64)));
    }
    let p = plane(d, which, memory_type, host, device, 0, 0, pitch, extent)?;
    Ok(Volume::Linear {
        start: p.start,
        pitch: pitch as u64,
        height: height as u64,
    })
}

/// A copy between volumes as the program described it: each side, where the copy starts
/// in it and how many bytes from its origin the copy may touch (for host sides), and the
/// extent (bytes, rows, slices).
pub struct VolumeCopy {
    dst: Volume,
    dst_at: [u64; 3],
    dst_bytes: usize,
    src: Volume,
    src_at: [u64; 3],
    src_bytes: usize,
    extent: [u64; 3],
}

impl VolumeCopy {
    /// # Safety
    /// Host sides are valid for their extent, as cuda.h requires of the program.
    unsafe fn run(&self, d: &Driver) -> CuResult<()> {
        // Safety: this function's contract.
        unsafe { d.copy_volume(&self.dst, self.dst_at, &self.src, self.src_at, self.extent) }
    }
}

pub fn has_array(c: &CUDA_MEMCPY2D) -> bool {
    c.src_memory_type == CU_MEMORYTYPE_ARRAY || c.dst_memory_type == CU_MEMORYTYPE_ARRAY
}

/// The sides of a cuMemcpy2D with an array on either side.
fn volumes_2d(d: &Driver, c: &CUDA_MEMCPY2D) -> CuResult<VolumeCopy> {
    let extent = |x: usize, y: usize, pitch: usize| {
        (y + c.height)
            .saturating_sub(1)
            .saturating_mul(pitch)
            .saturating_add(x + c.width_in_bytes)
    };
    let src_bytes = extent(c.src_x_in_bytes, c.src_y, c.src_pitch);
    let src = volume(
        d,
        "source",
        c.src_memory_type,
        c.src_host,
        c.src_device,
        c.src_array,
        c.src_pitch,
        0,
        src_bytes,
    )?;
    let dst_bytes = extent(c.dst_x_in_bytes, c.dst_y, c.dst_pitch);
    let dst = volume(
        d,
        "destination",
        c.dst_memory_type,
        c.dst_host,
        c.dst_device,
        c.dst_array,
        c.dst_pitch,
        0,
        dst_bytes,
    )?;
    Ok(VolumeCopy {
        dst,
        dst_at: [c.dst_x_in_bytes as u64, c.dst_y as u64, 0],
        dst_bytes,
        src,
        src_at: [c.src_x_in_bytes as u64, c.src_y as u64, 0],
        src_bytes,
        extent: [c.width_in_bytes as u64, c.height as u64, 1],
    })
}

/// cuMemcpy2D with an array on either side.
///
/// # Safety
/// The host sides of `c` are valid for their extent, as cuda.h requires.
pub unsafe fn copy_2d_arrays(d: &Driver, c: &CUDA_MEMCPY2D) -> CuResult<()> {
    // Safety: this function's contract.
    unsafe { volumes_2d(d, c)?.run(d) }
}

/// cuMemcpy2DAsync with an array on either side, queued on `s` where `queue_volume_copy`
/// can: false where the caller must copy in place.
///
/// # Safety
/// As `copy_2d_arrays`'s.
pub unsafe fn queue_copy_2d_arrays(s: CUstream, c: &CUDA_MEMCPY2D) -> CuResult<bool> {
    let d = drv()?;
    // Safety: this function's contract.
    unsafe { queue_volume_copy(s, volumes_2d(d, c)?, "cuMemcpy2DAsync") }
}

/// A queued copy between volumes, as its stream's worker holds it.
struct QueuedVolumeCopy {
    copy: VolumeCopy,
    dst_texels: Option<std::sync::Arc<cumock_ptx::Texels>>,
    src_texels: Option<std::sync::Arc<cumock_ptx::Texels>>,
    /// The staged source's bytes, which `copy.src` points into.
    _staged: Option<Box<[u8]>>,
}

// Safety: a host side of a queued copy is page-locked memory, which stays mapped until
// cuMemFreeHost or cuMemHostUnregister, and those wait for every stream's queued work
// first; or the staged buffer the job itself owns. Nothing else holds these pointers.
unsafe impl Send for QueuedVolumeCopy {}

/// A copy between volumes queued on `s` as async copies are (see `copies.rs`,
/// `queue_copy`): arrays and device memory as they are, page-locked memory as it is
/// unless both sides are host memory, a pageable source to the device staged (read now,
/// up to `STAGING_LIMIT`); false where the caller must copy in place (a pageable
/// destination, host to host, a larger pageable source).
///
/// # Safety
/// Host sides are valid for their extent, as cuda.h requires of an async copy.
unsafe fn queue_volume_copy(s: CUstream, mut copy: VolumeCopy, what: &str) -> CuResult<bool> {
    #[derive(PartialEq)]
    enum Kind {
        Device,
        PageLocked,
        Pageable,
    }
    let d = drv()?;
    // None: a page-locked range the copy runs past, which the copy in place reports.
    let kind = |v: &Volume, bytes: usize| match v {
        Volume::Array(_)
        | Volume::Linear {
            start: PlaneStart::Device(_),
            ..
        } => Some(Kind::Device),
        Volume::Linear {
            start: PlaneStart::Host(p),
            ..
        } => match d.page_locked(*p as u64, bytes as u64) {
            Some(Ok(())) => Some(Kind::PageLocked),
            Some(Err(_)) => None,
            None => Some(Kind::Pageable),
        },
    };
    let (Some(to), Some(from)) = (
        kind(&copy.dst, copy.dst_bytes),
        kind(&copy.src, copy.src_bytes),
    ) else {
        return Ok(false);
    };
    // To pageable memory the call waits for the data; host to host is synchronous.
    if to == Kind::Pageable || (to == Kind::PageLocked && from != Kind::Device) {
        return Ok(false);
    }
    let device = d.ctx_device(None)?;
    // The device's sticky error, as any copy's.
    d.check_copy_on(device, None, None, 0)?;
    let [w, h, depth] = copy.extent;
    let mut staged = None;
    if from == Kind::Pageable {
        let bytes = w.saturating_mul(h).saturating_mul(depth);
        if bytes > super::copies::STAGING_LIMIT as u64 {
            return Ok(false);
        }
        // Checked before the source is read: a refused copy reads nothing.
        d.check_copy_volume(&copy.dst, copy.dst_at, &copy.src, copy.src_at, copy.extent)?;
        let mut buf = vec![0u8; bytes as usize].into_boxed_slice();
        let into = Volume::Linear {
            start: PlaneStart::Host(buf.as_mut_ptr()),
            pitch: w,
            height: h,
        };
        // Safety: the source as this function's contract has it; `buf` holds the extent.
        unsafe { d.copy_volume(&into, [0; 3], &copy.src, copy.src_at, copy.extent)? };
        copy.src = into;
        copy.src_at = [0; 3];
        staged = Some(buf);
    }
    let (dst_texels, src_texels) =
        d.check_copy_volume(&copy.dst, copy.dst_at, &copy.src, copy.src_at, copy.extent)?;
    let what = what.to_owned();
    let job = QueuedVolumeCopy {
        copy,
        dst_texels,
        src_texels,
        _staged: staged,
    };
    d.enqueue_work(
        s.key(),
        &what.clone(),
        Box::new(move || {
            let j = &job;
            let c = &j.copy;
            // Safety: see `QueuedVolumeCopy`; the extent was checked when it was issued.
            let r = unsafe {
                d.copy_volume_rows(
                    Some(device),
                    (&c.dst, j.dst_texels.as_deref(), c.dst_at),
                    (&c.src, j.src_texels.as_deref(), c.src_at),
                    c.extent,
                )
            };
            if let Err(e) = r {
                crate::diagnostics::warn(&what, &format!("a queued copy failed: {}", e.message));
            }
        }),
    )?;
    Ok(true)
}

/// cuMemcpy3D_v2: any sides, arrays included.
///
/// # Safety
/// The host sides of `c` are valid for their extent, as cuda.h requires.
pub unsafe fn copy_3d(c: &CUDA_MEMCPY3D) -> CuResult<()> {
    let d = drv()?;
    // Safety: this function's contract.
    unsafe { volumes_3d(d, c)?.run(d) }
}

/// Checks a cuMemcpy3D's description without copying (cuMemcpy3DBatchAsync checks its
/// whole batch before it issues any copy).
pub fn check_3d(d: &Driver, c: &CUDA_MEMCPY3D) -> CuResult<()> {
    volumes_3d(d, c).map(|_| ())
}

/// The sides of a cuMemcpy3D.
fn volumes_3d(d: &Driver, c: &CUDA_MEMCPY3D) -> CuResult<VolumeCopy> {
    // cuda.h: "The srcLOD and dstLOD members of the CUDA_MEMCPY3D structure must be set
    // to 0"; a mipmap level is copied through its own array (cuMipmappedArrayGetLevel).
    // The H200 holds an array side to it and ignores a linear side's (probe arrays,
    // copies-3d: srcLOD 1 of a host source copied, dstLOD 1 of an array refused).
    for (lod, memory_type, which) in [
        (c.src_lod, c.src_memory_type, "srcLOD"),
        (c.dst_lod, c.dst_memory_type, "dstLOD"),
    ] {
        if lod != 0 && memory_type == CU_MEMORYTYPE_ARRAY {
            return Err(invalid(format!(
                "{which} {lod}: an array side's must be 0: copy a mipmap level through the \
                 array cuMipmappedArrayGetLevel gives"
            )));
        }
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
    let src_bytes = extent(
        c.src_x_in_bytes,
        c.src_y,
        c.src_z,
        c.src_pitch,
        c.src_height,
    );
    let src = volume(
        d,
        "source",
        c.src_memory_type,
        c.src_host,
        c.src_device,
        c.src_array,
        c.src_pitch,
        c.src_height,
        src_bytes,
    )?;
    let dst_bytes = extent(
        c.dst_x_in_bytes,
        c.dst_y,
        c.dst_z,
        c.dst_pitch,
        c.dst_height,
    );
    let dst = volume(
        d,
        "destination",
        c.dst_memory_type,
        c.dst_host,
        c.dst_device,
        c.dst_array,
        c.dst_pitch,
        c.dst_height,
        dst_bytes,
    )?;
    Ok(VolumeCopy {
        dst,
        dst_at: [c.dst_x_in_bytes as u64, c.dst_y as u64, c.dst_z as u64],
        dst_bytes,
        src,
        src_at: [c.src_x_in_bytes as u64, c.src_y as u64, c.src_z as u64],
        src_bytes,
        extent: [c.width_in_bytes as u64, c.height as u64, c.depth as u64],
    })
}

/// cuMemcpy3D_v2 and its variants, ordered as their base: see `copies.rs`.
pub unsafe fn memcpy_3d(copy: *const CUDA_MEMCPY3D) -> CuResult<()> {
    legacy_order()?;
    let c = input(copy, "pCopy")?;
    // Safety: cuda.h's contract on the host sides.
    unsafe { copy_3d(&c) }
}

/// cuMemcpy3DAsync: queued on `s` where its sides allow (`queue_volume_copy`), else
/// copied in place in the stream's order.
pub unsafe fn memcpy_3d_async(copy: *const CUDA_MEMCPY3D, s: CUstream) -> CuResult<()> {
    let c = input(copy, "pCopy")?;
    super::check_stream(s)?;
    if !super::capturing(s)? {
        let d = drv()?;
        // Safety: cuda.h's contract on the host sides of an async copy.
        if unsafe { queue_volume_copy(s, volumes_3d(d, &c)?, "cuMemcpy3DAsync") }? {
            return Ok(());
        }
    }
    let _order = stream(s)?;
    // Safety: as memcpy_3d's.
    unsafe { memcpy_3d(copy) }
}

// ---------------------------------------------------------------- CUDA arrays

emulate! {
    /// A 1D (Height 0) or 2D array.
    pub(super) fn cuArrayCreate_v2(d; p, desc) {
        let h = d.array_create(CUDA_ARRAY3D_DESCRIPTOR {
            width: desc.width,
            height: desc.height,
            depth: 0,
            format: desc.format,
            num_channels: desc.num_channels,
            flags: 0,
        })?;
        p.write_key(h)
    }

    pub(super) fn cuArray3DCreate_v2(d; p, desc) {
        p.write_key(d.array_create(desc)?)
    }

    // The getters look the array up before they check the out-parameter.

    pub(super) fn cuArrayGetDescriptor_v2(d; #[late] p, h) {
        let a = d.array_descriptor(h)?;
        p.write(CUDA_ARRAY_DESCRIPTOR {
            width: a.width,
            height: a.height,
            format: a.format,
            num_channels: a.num_channels,
        })
    }

    pub(super) fn cuArray3DGetDescriptor_v2(d; #[late] p, h) {
        p.write(d.array_descriptor(h)?)
    }

    pub(super) fn cuArrayDestroy(d; h) {
        d.array_destroy(h)
    }

    pub(super) fn cuMipmappedArrayCreate(d; p, desc, levels) {
        p.write_key(d.mipmapped_create(desc, levels)?)
    }

    pub(super) fn cuMipmappedArrayGetLevel(d; #[late] p, h, level) {
        p.write_key(d.mipmapped_level(h, level)?)
    }

    pub(super) fn cuMipmappedArrayDestroy(d; h) {
        d.mipmapped_destroy(h)
    }

    // The requirements and sparse properties exist only for deferred-mapping and sparse
    // arrays; each call checks its handles first.

    pub(super) fn cuArrayGetMemoryRequirements(d; #[late] p, h, device) {
        let r = d.array_memory_requirements(AnyArray::Array(h), device)?;
        // Safety: cuda.h's CUDA_ARRAY_MEMORY_REQUIREMENTS is laid out as ArrayMemoryRequirements.
        unsafe { p.cast::<ArrayMemoryRequirements>() }.write(r)
    }

    pub(super) fn cuMipmappedArrayGetMemoryRequirements(d; #[late] p, h, device) {
        let r = d.array_memory_requirements(AnyArray::Mipmapped(h), device)?;
        // Safety: as cuArrayGetMemoryRequirements'.
        unsafe { p.cast::<ArrayMemoryRequirements>() }.write(r)
    }

    pub(super) fn cuArrayGetSparseProperties(d; #[late] p, h) {
        let r = d.array_sparse_properties(AnyArray::Array(h))?;
        // Safety: cuda.h's CUDA_ARRAY_SPARSE_PROPERTIES is laid out as ArraySparseProperties.
        unsafe { p.cast::<ArraySparseProperties>() }.write(r)
    }

    pub(super) fn cuMipmappedArrayGetSparseProperties(d; #[late] p, h) {
        let r = d.array_sparse_properties(AnyArray::Mipmapped(h))?;
        // Safety: as cuArrayGetSparseProperties'.
        unsafe { p.cast::<ArraySparseProperties>() }.write(r)
    }

    pub(super) fn cuArrayGetPlane(d; #[late] p, h, plane) {
        p.write_key(d.array_plane(h, plane)?)
    }
}

emulate! {
    /// The host pointer is refused when NULL whatever the count, before the check for
    /// cuInit (`#[nonnull]`); the array after.
    pub(super) fn cuMemcpyHtoA_v2(; #[raw] dst, dst_offset, #[nonnull] src, count) {
        // Safety: cuda.h's contract: `src` holds `count` readable bytes.
        unsafe { copy_bytes(array_side(dst), dst_offset, host_side(src), 0, count) }
    }

    /// As cuMemcpyHtoA_v2, the other way.
    pub(super) fn cuMemcpyAtoH_v2(; #[nonnull] dst, #[raw] src, src_offset, count) {
        // Safety: cuda.h's contract: `dst` holds `count` writable bytes.
        unsafe { copy_bytes(host_side(dst), 0, array_side(src), src_offset, count) }
    }
}

pub(super) unsafe fn cuMemcpyHtoAAsync_v2(
    dst: CUarray,
    dst_offset: usize,
    src: *const c_void,
    count: usize,
    s: CUstream,
) -> CuResult<()> {
    let _order = stream(s)?;
    cuMemcpyHtoA_v2(dst, dst_offset, src, count)
}

pub(super) unsafe fn cuMemcpyAtoHAsync_v2(
    dst: *mut c_void,
    src: CUarray,
    src_offset: usize,
    count: usize,
    s: CUstream,
) -> CuResult<()> {
    let _order = stream(s)?;
    cuMemcpyAtoH_v2(dst, src, src_offset, count)
}

pub(super) unsafe fn cuMemcpyDtoA_v2(
    dst: CUarray,
    dst_offset: usize,
    src: CUdeviceptr,
    count: usize,
) -> CuResult<()> {
    let s = device_side(src);
    copy_bytes(array_side(dst), dst_offset, s, 0, count)
}

pub(super) unsafe fn cuMemcpyAtoD_v2(
    dst: CUdeviceptr,
    src: CUarray,
    src_offset: usize,
    count: usize,
) -> CuResult<()> {
    let d = device_side(dst);
    copy_bytes(d, 0, array_side(src), src_offset, count)
}

pub(super) unsafe fn cuMemcpyAtoA_v2(
    dst: CUarray,
    dst_offset: usize,
    src: CUarray,
    src_offset: usize,
    count: usize,
) -> CuResult<()> {
    copy_bytes(
        array_side(dst),
        dst_offset,
        array_side(src),
        src_offset,
        count,
    )
}

pub(super) unsafe fn cuMemcpy3D_v2(copy: *const CUDA_MEMCPY3D) -> CuResult<()> {
    memcpy_3d(copy)
}

pub(super) unsafe fn cuMemcpy3DAsync_v2(copy: *const CUDA_MEMCPY3D, s: CUstream) -> CuResult<()> {
    memcpy_3d_async(copy, s)
}

impl TextureObjectApi for Mock {
    emulate! {
        /// pResViewDesc may be NULL: no view.
        fn cuTexObjectCreate(d; p, res, tex, #[raw] view) {
            // Safety: cuda.h's contract: NULL or a readable CUDA_RESOURCE_VIEW_DESC.
            let view = (!view.is_null()).then(|| unsafe { view.read_unaligned() });
            let made = d.texture_create(res, tex, view);
            // The H200 writes 0 to the object when it refuses a view of format NONE only,
            // and leaves it for the view's other faults (probe arrays, tex-views).
            match made {
                Err(e) if view.is_some_and(|v| d.view_faults_only_in_format(&res, &v)) => {
                    p.write(0).and(Err(e))
                }
                made => p.write(made?),
            }
        }

        fn cuTexObjectDestroy(d; t) {
            d.texture_destroy(t)
        }

        // The getters look the object up before they check the out-parameter.

        fn cuTexObjectGetResourceDesc(d; #[late] p, t) {
            let (r, _) = d.texture_descriptors(t)?;
            p.write(r)
        }

        /// The view as given. Observed (probe api_gaps, small-ones): for an object made
        /// without one, the H200 answers CUDA_SUCCESS and leaves the descriptor as it was
        /// (cuda.h says CUDA_ERROR_INVALID_VALUE).
        fn cuTexObjectGetResourceViewDesc(d; #[late] p, t) {
            match d.texture_view(t)? {
                Some(v) => p.write(v),
                None => p.check().map(|_| ()),
            }
        }

        /// Writes every field but borderColor, which the H200 leaves as it was under each
        /// address mode, a border one included (probe views, border-readback).
        fn cuTexObjectGetTextureDesc(d; #[late] p, t) {
            let (_, tex) = d.texture_descriptors(t)?;
            let p = p.check()?;
            let border_color = p.read().border_color;
            p.write(CUDA_TEXTURE_DESC { border_color, ..tex })
        }
    }
}

impl SurfaceObjectApi for Mock {
    emulate! {
        fn cuSurfObjectCreate(d; p, res) {
            p.write(d.surface_create(res)?)
        }

        fn cuSurfObjectDestroy(d; s) {
            d.surface_destroy(s)
        }

        /// Writes the type, flags and array only: the rest of the descriptor's union is
        /// left as it was, which is how the H200's answer differed from the descriptor
        /// given (probe arrays, surfaces: "same as given no").
        fn cuSurfObjectGetResourceDesc(d; #[late] p, s) {
            let r = d.surface_resource(s)?;
            let p = p.check()?;
            let mut back = p.read();
            back.res_type = r.res_type;
            back.flags = r.flags;
            back.res[0] = r.res[0];
            p.write(back)
        }
    }
}

// ---------------------------------------------------------------- references

/// Writes `n` floats to `p` (cuTexRefGetBorderColor's four), refusing NULL.
///
/// # Safety
/// `p`, where not NULL, is valid for `n` floats, as cuda.h requires of the program.
unsafe fn write_floats(p: *mut f32, v: &[f32]) -> CuResult<()> {
    if p.is_null() {
        return Err(invalid("the colour pointer is NULL"));
    }
    for (i, x) in v.iter().enumerate() {
        // Safety: this function's contract.
        unsafe { p.add(i).write_unaligned(*x) };
    }
    Ok(())
}

impl TextureReferenceApi for Mock {
    emulate! {
        fn cuTexRefCreate(d; p) {
            p.write(d.texture_reference_create()? as CUtexref)
        }

        fn cuTexRefDestroy(d; t) {
            d.texture_reference_destroy(t)
        }

        fn cuTexRefSetArray(d; t, a, flags) {
            d.texture_reference_bind_array(t, Ok(a), flags)
        }

        fn cuTexRefSetMipmappedArray(d; t, m, flags) {
            d.texture_reference_bind_array(t, Err(m), flags)
        }

        /// ByteOffset may be NULL (cuda.h, for cuMemAlloc's pointers).
        fn cuTexRefSetAddress_v2(d; #[raw] offset, t, dptr, bytes) {
            let o = d.texture_reference_bind_linear(t, dptr.get(), bytes as u64)?;
            if let Some(out) = crate::boundary::Out::maybe(offset) {
                out.write(o as usize)?;
            }
            Ok(())
        }

        fn cuTexRefSetAddress2D_v3(d; t, desc, dptr, pitch) {
            d.texture_reference_bind_pitch2d(t, desc, dptr.get(), pitch as u64)
        }

        fn cuTexRefSetFormat(d; t, format, channels) {
            d.texture_reference_set_format(t, format, channels)
        }

        fn cuTexRefSetAddressMode(d; t, dim, am) {
            d.texture_reference_set_address_mode(t, dim, am)
        }

        fn cuTexRefSetFilterMode(d; t, fm) {
            d.texture_reference_set_filter(t, fm, false)
        }

        fn cuTexRefSetMipmapFilterMode(d; t, fm) {
            d.texture_reference_set_filter(t, fm, true)
        }

        fn cuTexRefSetMipmapLevelBias(d; t, bias) {
            d.set_texture_reference(t, |r| {
                r.mipmap_bias = bias;
                Ok(())
            })
        }

        fn cuTexRefSetMipmapLevelClamp(d; t, min, max) {
            d.set_texture_reference(t, |r| {
                r.mipmap_clamp = [min, max];
                Ok(())
            })
        }

        fn cuTexRefSetMaxAnisotropy(d; t, n) {
            d.set_texture_reference(t, |r| {
                r.max_anisotropy = n;
                Ok(())
            })
        }

        fn cuTexRefSetBorderColor(d; t, #[raw] color) {
            if color.is_null() {
                return Err(invalid("pBorderColor is NULL"));
            }
            // Safety: cuda.h's contract: an RGBA colour, four floats.
            let c: [f32; 4] =
                std::array::from_fn(|i| unsafe { color.add(i).read_unaligned() });
            d.set_texture_reference(t, |r| {
                r.border = c;
                Ok(())
            })
        }

        fn cuTexRefSetFlags(d; t, flags) {
            d.texture_reference_set_flags(t, flags)
        }

        // The getters look the reference up before they check the out-parameter.

        /// The program's pointer of cuTexRefSetAddress (or SetAddress2D's); CUDA_ERROR_
        /// INVALID_VALUE when bound to no memory (cuda.h), the address written 0 as the
        /// H200 writes it for a reference bound to nothing (probe api_gaps3,
        /// texture-references; bound to an array, the line `get address, bound to an
        /// array` awaits its recording).
        fn cuTexRefGetAddress_v2(d; #[late] p, t) {
            let r = d.texture_reference(t, false)?;
            match r.binding {
                // The texture-aligned base the reference reads from, not the pointer
                // given (the H200: probe texrefs, linear-offset).
                Binding::Linear { base, .. } => p.write(base),
                Binding::Pitch2D { base, .. } => p.write(base),
                _ => {
                    p.write(0)?;
                    Err(invalid("the texture reference is bound to no device memory"))
                }
            }
        }

        fn cuTexRefGetArray(d; #[late] p, t) {
            match d.texture_reference(t, false)?.binding {
                Binding::Array(a) => p.write_key(a),
                _ => Err(invalid("the texture reference is bound to no CUDA array")),
            }
        }

        fn cuTexRefGetMipmappedArray(d; #[late] p, t) {
            match d.texture_reference(t, false)?.binding {
                Binding::Mipmapped(m) => p.write_key(m),
                _ => Err(invalid("the texture reference is bound to no mipmapped array")),
            }
        }

        /// Dimensions 0 to 2 (cuda.h: "the only valid value for dim are 0 and 1", written
        /// before 3D textures; SetAddressMode takes 2).
        fn cuTexRefGetAddressMode(d; #[late] p, t, dim) {
            let r = d.texture_reference(t, false)?;
            let m = usize::try_from(dim)
                .ok()
                .and_then(|i| r.address.get(i))
                .ok_or_else(|| invalid(format!("dimension {dim}: a texture has 0 to 2")))?;
            p.write(*m)
        }

        fn cuTexRefGetFilterMode(d; #[late] p, t) {
            p.write(d.texture_reference(t, false)?.filter)
        }

        fn cuTexRefGetMipmapFilterMode(d; #[late] p, t) {
            p.write(d.texture_reference(t, false)?.mipmap_filter)
        }

        /// Either pointer may be NULL (cuda.h: "it will be ignored").
        fn cuTexRefGetFormat(d; #[raw] format, #[raw] channels, t) {
            let r = d.texture_reference(t, false)?;
            if let Some(out) = crate::boundary::Out::maybe(format) {
                out.write(r.format)?;
            }
            if let Some(out) = crate::boundary::Out::maybe(channels) {
                out.write(r.channels as i32)?;
            }
            Ok(())
        }

        fn cuTexRefGetMipmapLevelBias(d; #[late] p, t) {
            p.write(d.texture_reference(t, false)?.mipmap_bias)
        }

        fn cuTexRefGetMipmapLevelClamp(d; #[late] min, #[late] max, t) {
            let r = d.texture_reference(t, false)?;
            let (min, max) = (min.check()?, max.check()?);
            min.write(r.mipmap_clamp[0])?;
            max.write(r.mipmap_clamp[1])
        }

        fn cuTexRefGetMaxAnisotropy(d; #[late] p, t) {
            p.write(d.texture_reference(t, false)?.max_anisotropy as i32)
        }

        fn cuTexRefGetBorderColor(d; #[raw] color, t) {
            let r = d.texture_reference(t, false)?;
            // Safety: cuda.h's contract: room for an RGBA colour, four floats.
            unsafe { write_floats(color, &r.border) }
        }

        fn cuTexRefGetFlags(d; #[late] p, t) {
            p.write(d.texture_reference(t, false)?.flags)
        }
    }
}

impl SurfaceReferenceApi for Mock {
    emulate! {
        fn cuSurfRefSetArray(d; s, a, flags) {
            d.surface_reference_bind(s, a, flags)
        }

        fn cuSurfRefGetArray(d; #[late] p, s) {
            match d.texture_reference(s, true)?.binding {
                Binding::Array(a) => p.write_key(a),
                _ => Err(invalid("the surface reference is bound to no CUDA array")),
            }
        }
    }
}
