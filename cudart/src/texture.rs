//! CUDA arrays, texture objects and surface objects: the runtime's descriptions
//! (`cudaChannelFormatDesc`, `cudaResourceDesc`, `cudaTextureDesc`, `cudaMemcpy3DParms`)
//! turned into the driver's, over cuArray3DCreate, cuMipmappedArrayCreate, cuMemcpy2D/3D,
//! cuTexObjectCreate and cuSurfObjectCreate. A `cudaArray_t` is the driver's `CUarray`
//! and a `cudaMipmappedArray_t` its `CUmipmappedArray`, as in NVIDIA's runtime; the
//! array flags (cudaArrayLayered, cudaArrayCubemap...) are the driver's.

use crate::boundary::{cudart_fn, out_ref};
use crate::error::{self, RtError, RtResult};
use crate::memory::{on_per_thread_stream, stream_for};
use crate::runtime::with_context;
use cumock_abi::{CUarray, CUmipmappedArray, CUstream};
use cumock_abi::{
    CUDA_ARRAY3D_DESCRIPTOR, CUDA_MEMCPY2D, CUDA_MEMCPY3D, CUDA_RESOURCE_DESC,
    CUDA_RESOURCE_VIEW_DESC, CUDA_TEXTURE_DESC,
};
use std::ffi::{c_int, c_uint, c_void};

/// cudaErrorInvalidChannelDescriptor.
const INVALID_CHANNEL_DESCRIPTOR: error::CudaError = 20;
/// cudaErrorInvalidNormSetting: normalized reads of what cannot be normalized.
const INVALID_NORM_SETTING: error::CudaError = 27;

const CU_MEMORYTYPE_HOST: u32 = 1;
const CU_MEMORYTYPE_DEVICE: u32 = 2;
const CU_MEMORYTYPE_ARRAY: u32 = 3;
const CU_MEMORYTYPE_UNIFIED: u32 = 4;

/// `struct cudaChannelFormatDesc`: bits of each channel, and their kind
/// (cudaChannelFormatKindSigned 0, Unsigned 1, Float 2).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChannelFormatDesc {
    pub x: c_int,
    pub y: c_int,
    pub z: c_int,
    pub w: c_int,
    pub f: c_int,
}

/// `struct cudaExtent`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Extent {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
}

/// `struct cudaPos`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Pos {
    pub x: usize,
    pub y: usize,
    pub z: usize,
}

/// `struct cudaPitchedPtr`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PitchedPtr {
    pub ptr: *mut c_void,
    pub pitch: usize,
    pub xsize: usize,
    pub ysize: usize,
}

/// `struct cudaMemcpy3DParms`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Memcpy3DParms {
    pub src_array: u64,
    pub src_pos: Pos,
    pub src_ptr: PitchedPtr,
    pub dst_array: u64,
    pub dst_pos: Pos,
    pub dst_ptr: PitchedPtr,
    pub extent: Extent,
    pub kind: c_int,
}

/// `struct cudaResourceDesc`: the type, then its union as 8-byte words (an array's handle
/// in word 0; linear's `devPtr`, then the 20-byte channel description, `sizeInBytes` at
/// word 4; pitch-linear's `width`, `height`, `pitchInBytes` at words 4 to 6).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ResourceDesc {
    pub res_type: c_int,
    pub res: [u64; 16],
    pub flags: c_uint,
}

/// `struct cudaTextureDesc`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TextureDesc {
    pub address_mode: [c_int; 3],
    pub filter_mode: c_int,
    pub read_mode: c_int,
    pub srgb: c_int,
    pub border_color: [f32; 4],
    pub normalized_coords: c_int,
    pub max_anisotropy: c_uint,
    pub mipmap_filter_mode: c_int,
    pub mipmap_level_bias: f32,
    pub min_mipmap_level_clamp: f32,
    pub max_mipmap_level_clamp: f32,
    pub disable_trilinear_optimization: c_int,
    pub seamless_cubemap: c_int,
}

/// A channel description as the driver's CUarray_format and channel count.
fn driver_format(d: &ChannelFormatDesc) -> RtResult<(i32, u32)> {
    let bits = [d.x, d.y, d.z, d.w];
    let channels = bits.iter().take_while(|b| **b != 0).count();
    let bad = || {
        RtError::new(
            INVALID_CHANNEL_DESCRIPTOR,
            format!("{d:?}: channels of one size, 1, 2 or 4 of them, x first"),
        )
    };
    if !matches!(channels, 1 | 2 | 4)
        || bits[channels..].iter().any(|b| *b != 0)
        || bits[..channels].iter().any(|b| *b != d.x)
    {
        return Err(bad());
    }
    let format = match (d.f, d.x) {
        (0, 8) => 0x08,
        (0, 16) => 0x09,
        (0, 32) => 0x0a,
        (1, 8) => 0x01,
        (1, 16) => 0x02,
        (1, 32) => 0x03,
        (2, 16) => 0x10,
        (2, 32) => 0x20,
        (0..=2, _) => return Err(bad()),
        (f, _) => {
            return Err(error::not_supported(format!(
                "cudaChannelFormatKind {f} (NV12, the normalized packed and compressed \
                 kinds) is not supported"
            )))
        }
    };
    Ok((format, channels as u32))
}

/// The driver's format back as a channel description.
fn channel_desc(format: i32, channels: u32) -> ChannelFormatDesc {
    let (f, bits) = match format {
        0x01 => (1, 8),
        0x02 => (1, 16),
        0x03 => (1, 32),
        0x08 => (0, 8),
        0x09 => (0, 16),
        0x0a => (0, 32),
        0x10 => (2, 16),
        _ => (2, 32),
    };
    let b = |k: u32| if k < channels { bits } else { 0 };
    ChannelFormatDesc {
        x: b(0),
        y: b(1),
        z: b(2),
        w: b(3),
        f,
    }
}

/// cudaCreateChannelDesc: returns the description itself (not a cudaError_t).
#[no_mangle]
pub extern "C" fn cudaCreateChannelDesc(
    x: c_int,
    y: c_int,
    z: c_int,
    w: c_int,
    f: c_int,
) -> ChannelFormatDesc {
    ChannelFormatDesc { x, y, z, w, f }
}

fn create_array(
    array: *mut u64,
    desc: *const ChannelFormatDesc,
    extent: Extent,
    flags: c_uint,
) -> RtResult<()> {
    // Safety: the program's pointers: NULL (refused) or valid, as the header requires.
    let (array, desc) = unsafe { (out_ref(array)?, desc.as_ref()) };
    let desc = desc.ok_or_else(|| error::invalid("desc is NULL"))?;
    let (format, channels) = driver_format(desc)?;
    let (d, _, _) = with_context()?;
    let mut h = std::ptr::null_mut();
    d.cuArray3DCreate(
        &mut h,
        &CUDA_ARRAY3D_DESCRIPTOR {
            width: extent.width,
            height: extent.height,
            depth: extent.depth,
            format,
            num_channels: channels,
            flags,
        },
    )?;
    *array = h as u64;
    Ok(())
}

cudart_fn! {
    fn cudaMallocArray(array: *mut u64, desc: *const ChannelFormatDesc, width: usize, height: usize, flags: c_uint) {
        create_array(array, desc, Extent { width, height, depth: 0 }, flags)
    }
}

cudart_fn! {
    fn cudaMalloc3DArray(array: *mut u64, desc: *const ChannelFormatDesc, extent: Extent, flags: c_uint) {
        create_array(array, desc, extent, flags)
    }
}

cudart_fn! {
    fn cudaMallocMipmappedArray(mipmapped: *mut u64, desc: *const ChannelFormatDesc, extent: Extent, levels: c_uint, flags: c_uint) {
        // Safety: the program's pointers: NULL (refused) or valid, as the header requires.
        let (out, desc) = unsafe { (out_ref(mipmapped)?, desc.as_ref()) };
        let desc = desc.ok_or_else(|| error::invalid("desc is NULL"))?;
        let (format, channels) = driver_format(desc)?;
        let (d, _, _) = with_context()?;
        let mut h = std::ptr::null_mut();
        d.cuMipmappedArrayCreate(
            &mut h,
            &CUDA_ARRAY3D_DESCRIPTOR {
                width: extent.width,
                height: extent.height,
                depth: extent.depth,
                format,
                num_channels: channels,
                flags,
            },
            levels,
        )?;
        *out = h as u64;
        Ok(())
    }
}

cudart_fn! {
    fn cudaGetMipmappedArrayLevel(level_array: *mut u64, mipmapped: u64, level: c_uint) {
        // Safety: NULL (refused) or writable, as the header requires.
        let out = unsafe { out_ref(level_array)? };
        let (d, _, _) = with_context()?;
        let mut a = std::ptr::null_mut();
        d.cuMipmappedArrayGetLevel(&mut a, mipmapped as CUmipmappedArray, level)?;
        *out = a as u64;
        Ok(())
    }
}

cudart_fn! {
    fn cudaFreeMipmappedArray(mipmapped: u64) {
        let (d, _, _) = with_context()?;
        d.cuMipmappedArrayDestroy(mipmapped as CUmipmappedArray)
    }
}

cudart_fn! {
    fn cudaFreeArray(array: u64) {
        // The header: "If array is 0, no operation is performed".
        if array == 0 {
            return Ok(());
        }
        let (d, _, _) = with_context()?;
        d.cuArrayDestroy(cu_array(array))
    }
}

/// The driver's handle of a `cudaArray_t`, which the runtime keeps as its address (the
/// structs it shares with programs hold it as an 8-byte word).
fn cu_array(array: u64) -> CUarray {
    array as CUarray
}

fn array_descriptor(array: u64) -> RtResult<CUDA_ARRAY3D_DESCRIPTOR> {
    let (d, _, _) = with_context()?;
    let mut a = CUDA_ARRAY3D_DESCRIPTOR::default();
    d.cuArray3DGetDescriptor(&mut a, cu_array(array))?;
    Ok(a)
}

cudart_fn! {
    fn cudaArrayGetInfo(desc: *mut ChannelFormatDesc, extent: *mut Extent, flags: *mut c_uint, array: u64) {
        let a = array_descriptor(array)?;
        // Safety: each out-pointer is NULL (skipped) or writable, as the header requires.
        unsafe {
            if let Some(p) = desc.as_mut() {
                *p = channel_desc(a.format, a.num_channels);
            }
            if let Some(p) = extent.as_mut() {
                *p = Extent { width: a.width, height: a.height, depth: a.depth };
            }
            if let Some(p) = flags.as_mut() {
                *p = a.flags;
            }
        }
        Ok(())
    }
}

cudart_fn! {
    fn cudaGetChannelDesc(desc: *mut ChannelFormatDesc, array: u64) {
        // Safety: NULL (refused) or writable, as the header requires.
        let desc = unsafe { out_ref(desc)? };
        let a = array_descriptor(array)?;
        *desc = channel_desc(a.format, a.num_channels);
        Ok(())
    }
}

/// The driver's memory type of a linear side of a copy of this cudaMemcpyKind; `to_dst`
/// picks the destination's.
fn memory_type(kind: c_int, to_dst: bool) -> RtResult<u32> {
    Ok(match (kind, to_dst) {
        (0, _) | (1, false) | (2, true) => CU_MEMORYTYPE_HOST,
        (1, true) | (2, false) | (3, _) => CU_MEMORYTYPE_DEVICE,
        (4, _) => CU_MEMORYTYPE_UNIFIED,
        _ => {
            return Err(RtError::new(
                error::INVALID_MEMCPY_DIRECTION,
                format!("{kind} is not a cudaMemcpyKind"),
            ))
        }
    })
}

fn blank_2d() -> CUDA_MEMCPY2D {
    CUDA_MEMCPY2D {
        src_x_in_bytes: 0,
        src_y: 0,
        src_memory_type: 0,
        src_host: std::ptr::null(),
        src_device: 0,
        src_array: std::ptr::null_mut(),
        src_pitch: 0,
        dst_x_in_bytes: 0,
        dst_y: 0,
        dst_memory_type: 0,
        dst_host: std::ptr::null_mut(),
        dst_device: 0,
        dst_array: std::ptr::null_mut(),
        dst_pitch: 0,
        width_in_bytes: 0,
        height: 0,
    }
}

/// A 2D copy with the driver, synchronous when `stream` is None.
///
/// # Safety
/// The host sides of `c` are valid for their extent.
unsafe fn copy_2d(c: &CUDA_MEMCPY2D, stream: Option<CUstream>) -> RtResult<()> {
    let (d, _, _) = with_context()?;
    // Safety: the caller's contract.
    unsafe {
        match stream {
            None => d.cuMemcpy2D(c),
            Some(s) => d.cuMemcpy2DAsync(c, s),
        }
    }
}

/// The linear side of a copy: host memory's pointer or device memory's address.
fn set_linear(c: &mut CUDA_MEMCPY2D, dst: bool, ty: u32, p: *const c_void, pitch: usize) {
    if dst {
        c.dst_memory_type = ty;
        c.dst_host = p as *mut c_void;
        c.dst_device = p as u64;
        c.dst_pitch = pitch;
    } else {
        c.src_memory_type = ty;
        c.src_host = p;
        c.src_device = p as u64;
        c.src_pitch = pitch;
    }
}

#[allow(clippy::too_many_arguments)]
fn to_array_2d(
    dst: u64,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
    stream: Option<CUstream>,
) -> RtResult<()> {
    let mut c = blank_2d();
    c.dst_memory_type = CU_MEMORYTYPE_ARRAY;
    c.dst_array = dst as *mut c_void;
    c.dst_x_in_bytes = w_offset;
    c.dst_y = h_offset;
    set_linear(&mut c, false, memory_type(kind, false)?, src, spitch);
    c.width_in_bytes = width;
    c.height = height;
    // Safety: the program says `src` holds `height` rows of its pitch.
    unsafe { copy_2d(&c, stream) }
}

#[allow(clippy::too_many_arguments)]
fn from_array_2d(
    dst: *mut c_void,
    dpitch: usize,
    src: u64,
    w_offset: usize,
    h_offset: usize,
    width: usize,
    height: usize,
    kind: c_int,
    stream: Option<CUstream>,
) -> RtResult<()> {
    let mut c = blank_2d();
    c.src_memory_type = CU_MEMORYTYPE_ARRAY;
    c.src_array = src as *mut c_void;
    c.src_x_in_bytes = w_offset;
    c.src_y = h_offset;
    set_linear(&mut c, true, memory_type(kind, true)?, dst, dpitch);
    c.width_in_bytes = width;
    c.height = height;
    // Safety: the program says `dst` holds `height` rows of its pitch.
    unsafe { copy_2d(&c, stream) }
}

cudart_fn! {
    fn cudaMemcpy2DToArray(dst: u64, w_offset: usize, h_offset: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int) {
        to_array_2d(dst, w_offset, h_offset, src, spitch, width, height, kind, None)
    }
}

cudart_fn! {
    fn cudaMemcpy2DToArrayAsync(dst: u64, w_offset: usize, h_offset: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int, stream: CUstream) {
        to_array_2d(dst, w_offset, h_offset, src, spitch, width, height, kind, Some(stream_for(stream, false)))
    }
}

cudart_fn! {
    fn cudaMemcpy2DToArray_ptds(dst: u64, w_offset: usize, h_offset: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int) {
        on_per_thread_stream(|s| to_array_2d(dst, w_offset, h_offset, src, spitch, width, height, kind, s))
    }
}

cudart_fn! {
    fn cudaMemcpy2DToArrayAsync_ptsz(dst: u64, w_offset: usize, h_offset: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int, stream: CUstream) {
        to_array_2d(dst, w_offset, h_offset, src, spitch, width, height, kind, Some(stream_for(stream, true)))
    }
}

cudart_fn! {
    fn cudaMemcpy2DFromArray_ptds(dst: *mut c_void, dpitch: usize, src: u64, w_offset: usize, h_offset: usize, width: usize, height: usize, kind: c_int) {
        on_per_thread_stream(|s| from_array_2d(dst, dpitch, src, w_offset, h_offset, width, height, kind, s))
    }
}

cudart_fn! {
    fn cudaMemcpy2DFromArrayAsync_ptsz(dst: *mut c_void, dpitch: usize, src: u64, w_offset: usize, h_offset: usize, width: usize, height: usize, kind: c_int, stream: CUstream) {
        from_array_2d(dst, dpitch, src, w_offset, h_offset, width, height, kind, Some(stream_for(stream, true)))
    }
}

/// cudaMemcpy2DArrayToArray: offsets and width in bytes, as for the other 2D array copies.
#[allow(clippy::too_many_arguments)]
fn array_to_array_2d(
    dst: u64,
    w_offset_dst: usize,
    h_offset_dst: usize,
    src: u64,
    w_offset_src: usize,
    h_offset_src: usize,
    width: usize,
    height: usize,
    kind: c_int,
    stream: Option<CUstream>,
) -> RtResult<()> {
    // Arrays are device memory whatever the kind says; the kind must still be one.
    memory_type(kind, true)?;
    let mut c = blank_2d();
    c.src_memory_type = CU_MEMORYTYPE_ARRAY;
    c.src_array = src as *mut c_void;
    c.src_x_in_bytes = w_offset_src;
    c.src_y = h_offset_src;
    c.dst_memory_type = CU_MEMORYTYPE_ARRAY;
    c.dst_array = dst as *mut c_void;
    c.dst_x_in_bytes = w_offset_dst;
    c.dst_y = h_offset_dst;
    c.width_in_bytes = width;
    c.height = height;
    // Safety: no host side; the driver checks the arrays and the extent.
    unsafe { copy_2d(&c, stream) }
}

cudart_fn! {
    fn cudaMemcpy2DArrayToArray(dst: u64, w_offset_dst: usize, h_offset_dst: usize, src: u64, w_offset_src: usize, h_offset_src: usize, width: usize, height: usize, kind: c_int) {
        array_to_array_2d(dst, w_offset_dst, h_offset_dst, src, w_offset_src, h_offset_src, width, height, kind, None)
    }
}

cudart_fn! {
    fn cudaMemcpy2DArrayToArray_ptds(dst: u64, w_offset_dst: usize, h_offset_dst: usize, src: u64, w_offset_src: usize, h_offset_src: usize, width: usize, height: usize, kind: c_int) {
        on_per_thread_stream(|s| array_to_array_2d(dst, w_offset_dst, h_offset_dst, src, w_offset_src, h_offset_src, width, height, kind, s))
    }
}

cudart_fn! {
    fn cudaMemcpy2DFromArray(dst: *mut c_void, dpitch: usize, src: u64, w_offset: usize, h_offset: usize, width: usize, height: usize, kind: c_int) {
        from_array_2d(dst, dpitch, src, w_offset, h_offset, width, height, kind, None)
    }
}

cudart_fn! {
    fn cudaMemcpy2DFromArrayAsync(dst: *mut c_void, dpitch: usize, src: u64, w_offset: usize, h_offset: usize, width: usize, height: usize, kind: c_int, stream: CUstream) {
        from_array_2d(dst, dpitch, src, w_offset, h_offset, width, height, kind, Some(stream_for(stream, false)))
    }
}

/// cudaMemcpyToArray/FromArray (deprecated): `count` bytes from row `h_offset`, byte
/// `w_offset`, running on into the next rows of the array.
fn array_bytes(array: u64, w_offset: usize, h_offset: usize) -> RtResult<usize> {
    let a = array_descriptor(array)?;
    let (_, channels) = (a.format, a.num_channels);
    let bits = channel_desc(a.format, channels).x as usize;
    let row = a.width * bits / 8 * channels as usize;
    Ok(h_offset * row + w_offset)
}

/// The pieces of `count` bytes from byte `offset` of an array taken as consecutive rows
/// of `row` bytes: (x in bytes, row, bytes per row, rows, bytes before the piece). A
/// partial first row, the whole rows, a partial last row: 2D copies the driver can queue
/// on a stream, which its 1D array copies (cuMemcpyHtoA...) cannot for device memory.
fn row_pieces(offset: usize, count: usize, row: usize) -> Vec<(usize, usize, usize, usize, usize)> {
    let mut v = Vec::new();
    if row == 0 {
        return v;
    }
    let (mut at, mut done) = (offset, 0);
    if at % row != 0 && count > 0 {
        let n = (row - at % row).min(count);
        v.push((at % row, at / row, n, 1, 0));
        at += n;
        done += n;
    }
    let whole = (count - done) / row;
    if whole > 0 {
        v.push((0, at / row, row, whole, done));
        at += whole * row;
        done += whole * row;
    }
    if done < count {
        v.push((0, at / row, count - done, 1, done));
    }
    v
}

/// The bytes of one row of `array`.
fn row_bytes(array: u64) -> RtResult<usize> {
    let a = array_descriptor(array)?;
    Ok(a.width * element_bytes(array)?)
}

/// cudaMemcpyToArray(Async) (deprecated): `count` bytes from the linear side into the
/// array from row `h_offset`, byte `w_offset`, running on into the next rows.
fn to_array_linear(
    dst: u64,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    count: usize,
    kind: c_int,
    stream: Option<CUstream>,
) -> RtResult<()> {
    let off = array_bytes(dst, w_offset, h_offset)?;
    let ty = memory_type(kind, false)?;
    with_context()?;
    match (stream, ty) {
        (None, CU_MEMORYTYPE_HOST | CU_MEMORYTYPE_DEVICE) | (Some(_), _) => {
            // Safety: the program says `src` holds `count` bytes.
            unsafe { copy_linear_rows(dst, off, ty, src, count, false, stream) }
        }
        (None, _) => Err(error::not_supported(
            "cudaMemcpyToArray with cudaMemcpyDefault: name the source's side",
        )),
    }
}

/// A linear copy between an array (from byte `off` of its rows) and `count` bytes at
/// `linear`, as the driver's 2D copies, on stream `s` or synchronous (None): the driver's
/// 1D array copies have no stream form and reach an array's first row only (the H200:
/// probe arrays, copies-linear). `from_array` says which way.
///
/// # Safety
/// `linear` holds `count` bytes of the side `ty` names.
unsafe fn copy_linear_rows(
    array: u64,
    off: usize,
    ty: u32,
    linear: *const c_void,
    count: usize,
    from_array: bool,
    s: Option<CUstream>,
) -> RtResult<()> {
    let row = row_bytes(array)?;
    let a = array_descriptor(array)?;
    let total = row * a.height.max(1);
    // Checked whole first, as one copy, so that no piece moves before a refusal.
    if count != 0 && off.checked_add(count).is_none_or(|end| end > total) {
        return Err(error::invalid(format!(
            "{count} bytes from byte {off} run past the array's {total}"
        )));
    }
    for (x, y, w, h, before) in row_pieces(off, count, row) {
        let mut c = blank_2d();
        if from_array {
            c.src_memory_type = CU_MEMORYTYPE_ARRAY;
            c.src_array = array as *mut c_void;
            c.src_x_in_bytes = x;
            c.src_y = y;
        } else {
            c.dst_memory_type = CU_MEMORYTYPE_ARRAY;
            c.dst_array = array as *mut c_void;
            c.dst_x_in_bytes = x;
            c.dst_y = y;
        }
        let piece = (linear as *const u8).wrapping_add(before).cast();
        set_linear(&mut c, from_array, ty, piece, row);
        c.width_in_bytes = w;
        c.height = h;
        // Safety: this piece is inside the `count` bytes the caller vouches for.
        unsafe { copy_2d(&c, s)? };
    }
    Ok(())
}

/// cudaMemcpyFromArray(Async) (deprecated), the other way.
fn from_array_linear(
    dst: *mut c_void,
    src: u64,
    w_offset: usize,
    h_offset: usize,
    count: usize,
    kind: c_int,
    stream: Option<CUstream>,
) -> RtResult<()> {
    let off = array_bytes(src, w_offset, h_offset)?;
    let ty = memory_type(kind, true)?;
    with_context()?;
    match (stream, ty) {
        (None, CU_MEMORYTYPE_HOST | CU_MEMORYTYPE_DEVICE) | (Some(_), _) => {
            // Safety: the program says `dst` holds `count` bytes.
            unsafe { copy_linear_rows(src, off, ty, dst, count, true, stream) }
        }
        (None, _) => Err(error::not_supported(
            "cudaMemcpyFromArray with cudaMemcpyDefault: name the destination's side",
        )),
    }
}

cudart_fn! {
    fn cudaMemcpyToArray(dst: u64, w_offset: usize, h_offset: usize, src: *const c_void, count: usize, kind: c_int) {
        to_array_linear(dst, w_offset, h_offset, src, count, kind, None)
    }
}

cudart_fn! {
    fn cudaMemcpyToArray_ptds(dst: u64, w_offset: usize, h_offset: usize, src: *const c_void, count: usize, kind: c_int) {
        on_per_thread_stream(|s| to_array_linear(dst, w_offset, h_offset, src, count, kind, s))
    }
}

cudart_fn! {
    fn cudaMemcpyToArrayAsync(dst: u64, w_offset: usize, h_offset: usize, src: *const c_void, count: usize, kind: c_int, stream: CUstream) {
        to_array_linear(dst, w_offset, h_offset, src, count, kind, Some(stream_for(stream, false)))
    }
}

cudart_fn! {
    fn cudaMemcpyToArrayAsync_ptsz(dst: u64, w_offset: usize, h_offset: usize, src: *const c_void, count: usize, kind: c_int, stream: CUstream) {
        to_array_linear(dst, w_offset, h_offset, src, count, kind, Some(stream_for(stream, true)))
    }
}

cudart_fn! {
    fn cudaMemcpyFromArray(dst: *mut c_void, src: u64, w_offset: usize, h_offset: usize, count: usize, kind: c_int) {
        from_array_linear(dst, src, w_offset, h_offset, count, kind, None)
    }
}

cudart_fn! {
    fn cudaMemcpyFromArray_ptds(dst: *mut c_void, src: u64, w_offset: usize, h_offset: usize, count: usize, kind: c_int) {
        on_per_thread_stream(|s| from_array_linear(dst, src, w_offset, h_offset, count, kind, s))
    }
}

cudart_fn! {
    fn cudaMemcpyFromArrayAsync(dst: *mut c_void, src: u64, w_offset: usize, h_offset: usize, count: usize, kind: c_int, stream: CUstream) {
        from_array_linear(dst, src, w_offset, h_offset, count, kind, Some(stream_for(stream, false)))
    }
}

cudart_fn! {
    fn cudaMemcpyFromArrayAsync_ptsz(dst: *mut c_void, src: u64, w_offset: usize, h_offset: usize, count: usize, kind: c_int, stream: CUstream) {
        from_array_linear(dst, src, w_offset, h_offset, count, kind, Some(stream_for(stream, true)))
    }
}

/// cudaMemcpyArrayToArray (deprecated): `count` bytes between the arrays taken as
/// consecutive rows, each offset a row and a byte in it. The driver's 1D array copy is
/// synchronous, so the per-thread form first waits for the thread's stream (the copy then
/// follows its work, as one issued on it would).
#[allow(clippy::too_many_arguments)]
fn array_to_array(
    dst: u64,
    w_offset_dst: usize,
    h_offset_dst: usize,
    src: u64,
    w_offset_src: usize,
    h_offset_src: usize,
    count: usize,
    kind: c_int,
    per_thread: bool,
) -> RtResult<()> {
    memory_type(kind, true)?;
    let doff = array_bytes(dst, w_offset_dst, h_offset_dst)?;
    let soff = array_bytes(src, w_offset_src, h_offset_src)?;
    let (d, _, _) = with_context()?;
    if per_thread {
        d.cuStreamSynchronize(stream_for(std::ptr::null_mut(), true))?;
    }
    let (drow, srow) = (row_bytes(dst)?, row_bytes(src)?);
    if count <= drow.saturating_sub(doff) && count <= srow.saturating_sub(soff) {
        return d.cuMemcpyAtoA(cu_array(dst), doff, cu_array(src), soff, count);
    }
    // Across rows: pieces within a row of both arrays, as 2D copies (the driver's 1D
    // copy reaches an array's first row only: the H200, probe arrays, copies-linear).
    for (array, off, row) in [(dst, doff, drow), (src, soff, srow)] {
        let total = row * array_descriptor(array)?.height.max(1);
        if off.checked_add(count).is_none_or(|end| end > total) {
            return Err(error::invalid(format!(
                "{count} bytes from byte {off} run past the array's {total}"
            )));
        }
    }
    let mut done = 0;
    while done < count {
        let (da, sa) = (doff + done, soff + done);
        let n = (drow - da % drow).min(srow - sa % srow).min(count - done);
        let mut c = blank_2d();
        c.src_memory_type = CU_MEMORYTYPE_ARRAY;
        c.src_array = src as *mut c_void;
        (c.src_x_in_bytes, c.src_y) = (sa % srow, sa / srow);
        c.dst_memory_type = CU_MEMORYTYPE_ARRAY;
        c.dst_array = dst as *mut c_void;
        (c.dst_x_in_bytes, c.dst_y) = (da % drow, da / drow);
        c.width_in_bytes = n;
        c.height = 1;
        // Safety: both sides are arrays.
        unsafe { copy_2d(&c, None)? };
        done += n;
    }
    Ok(())
}

cudart_fn! {
    fn cudaMemcpyArrayToArray(dst: u64, w_offset_dst: usize, h_offset_dst: usize, src: u64, w_offset_src: usize, h_offset_src: usize, count: usize, kind: c_int) {
        array_to_array(dst, w_offset_dst, h_offset_dst, src, w_offset_src, h_offset_src, count, kind, false)
    }
}

cudart_fn! {
    fn cudaMemcpyArrayToArray_ptds(dst: u64, w_offset_dst: usize, h_offset_dst: usize, src: u64, w_offset_src: usize, h_offset_src: usize, count: usize, kind: c_int) {
        array_to_array(dst, w_offset_dst, h_offset_dst, src, w_offset_src, h_offset_src, count, kind, true)
    }
}

/// The bytes of one element of `array`.
fn element_bytes(array: u64) -> RtResult<usize> {
    let a = array_descriptor(array)?;
    let bits = channel_desc(a.format, a.num_channels).x as usize;
    Ok(bits / 8 * a.num_channels as usize)
}

/// cudaMemcpy3D: where an array takes part, widths and the array's x are in its
/// elements (the header); a pitched pointer's x is in bytes.
pub(crate) fn memcpy_3d(p: *const Memcpy3DParms, stream: Option<CUstream>) -> RtResult<()> {
    // Safety: NULL (refused) or readable, as the header requires.
    let p = *unsafe { p.as_ref() }.ok_or_else(|| error::invalid("p is NULL"))?;
    let elem = match (p.src_array, p.dst_array) {
        (0, 0) => 1,
        (0, a) | (a, _) => element_bytes(a)?,
    };
    let side = |array: u64, pos: Pos, ptr: PitchedPtr, dst: bool| -> RtResult<_> {
        Ok(if array != 0 {
            (
                CU_MEMORYTYPE_ARRAY,
                array,
                pos.x * elem,
                std::ptr::null_mut(),
                0,
                0,
            )
        } else {
            let ty = memory_type(p.kind, dst)?;
            (ty, 0, pos.x, ptr.ptr, ptr.pitch, ptr.ysize)
        })
    };
    let (sty, sarr, sx, sptr, spitch, sh) = side(p.src_array, p.src_pos, p.src_ptr, false)?;
    let (dty, darr, dx, dptr, dpitch, dh) = side(p.dst_array, p.dst_pos, p.dst_ptr, true)?;
    let c = CUDA_MEMCPY3D {
        src_x_in_bytes: sx,
        src_y: p.src_pos.y,
        src_z: p.src_pos.z,
        src_lod: 0,
        src_memory_type: sty,
        src_host: sptr,
        src_device: sptr as u64,
        src_array: sarr as *mut c_void,
        reserved0: std::ptr::null_mut(),
        src_pitch: spitch,
        src_height: sh,
        dst_x_in_bytes: dx,
        dst_y: p.dst_pos.y,
        dst_z: p.dst_pos.z,
        dst_lod: 0,
        dst_memory_type: dty,
        dst_host: dptr,
        dst_device: dptr as u64,
        dst_array: darr as *mut c_void,
        reserved1: std::ptr::null_mut(),
        dst_pitch: dpitch,
        dst_height: dh,
        width_in_bytes: p.extent.width * elem,
        height: p.extent.height,
        depth: p.extent.depth,
    };
    let (d, _, _) = with_context()?;
    // Safety: the program says its pitched pointers hold the extent.
    unsafe {
        match stream {
            None => d.cuMemcpy3D(&c),
            Some(s) => d.cuMemcpy3DAsync(&c, s),
        }
    }
}

cudart_fn! {
    fn cudaMemcpy3D(p: *const Memcpy3DParms) {
        memcpy_3d(p, None)
    }
}

cudart_fn! {
    fn cudaMemcpy3DAsync(p: *const Memcpy3DParms, stream: CUstream) {
        memcpy_3d(p, Some(stream_for(stream, false)))
    }
}

cudart_fn! {
    fn cudaMemcpy3D_ptds(p: *const Memcpy3DParms) {
        on_per_thread_stream(|s| memcpy_3d(p, s))
    }
}

cudart_fn! {
    fn cudaMemcpy3DAsync_ptsz(p: *const Memcpy3DParms, stream: CUstream) {
        memcpy_3d(p, Some(stream_for(stream, true)))
    }
}

/// CU_AD_FORMAT_UNSIGNED_INT32 or SIGNED_INT32: what reads as integers whatever the read
/// mode, and what no normalized read may name.
fn is_wide_integer(format: Option<i32>) -> bool {
    matches!(format, Some(0x03 | 0x0a))
}

/// The CUarray_format of what a texture reads: a linear or pitched resource's own, an
/// array's (a mipmapped array's level 0's) from the driver.
fn resource_format(d: &crate::driver::Driver, r: &CUDA_RESOURCE_DESC) -> RtResult<i32> {
    match r.res_type {
        0 => Ok(array_descriptor(r.res[0])?.format),
        1 => {
            let mut a = std::ptr::null_mut();
            d.cuMipmappedArrayGetLevel(&mut a, r.res[0] as CUmipmappedArray, 0)?;
            Ok(array_descriptor(a as u64)?.format)
        }
        _ => Ok(r.res[1] as u32 as i32),
    }
}

/// The runtime's resource description as the driver's (channel descriptions become
/// CUarray_format and channel counts).
fn driver_resource(r: &ResourceDesc) -> RtResult<CUDA_RESOURCE_DESC> {
    let mut out = CUDA_RESOURCE_DESC {
        res_type: r.res_type,
        res: [0; 16],
        flags: r.flags,
    };
    match r.res_type {
        // cudaResourceTypeArray, MipmappedArray: the handle.
        0 | 1 => out.res[0] = r.res[0],
        // cudaResourceTypeLinear, Pitch2D: devPtr, the 20-byte channel description
        // (words 1 and 2 and half of 3), then the sizes from word 4.
        2 | 3 => {
            let w = |i: usize| r.res[i];
            let desc = ChannelFormatDesc {
                x: w(1) as u32 as i32,
                y: (w(1) >> 32) as u32 as i32,
                z: w(2) as u32 as i32,
                w: (w(2) >> 32) as u32 as i32,
                f: w(3) as u32 as i32,
            };
            let (format, channels) = driver_format(&desc)?;
            out.res[0] = w(0);
            out.res[1] = format as u32 as u64 | (channels as u64) << 32;
            out.res[2] = w(4);
            out.res[3] = w(5);
            out.res[4] = w(6);
        }
        t => return Err(error::invalid(format!("{t} is not a cudaResourceType"))),
    }
    Ok(out)
}

cudart_fn! {
    /// A resource view (`struct cudaResourceViewDesc`, laid out as the driver's
    /// CUDA_RESOURCE_VIEW_DESC, its formats the driver's values) goes to the driver as it is.
    fn cudaCreateTextureObject(tex: *mut u64, res: *const ResourceDesc, desc: *const TextureDesc, view: *const CUDA_RESOURCE_VIEW_DESC) {
        // Safety: the program's pointers: NULL (refused) or valid, as the header requires.
        let (tex, res, desc) = unsafe { (out_ref(tex)?, res.as_ref(), desc.as_ref()) };
        let res = res.ok_or_else(|| error::invalid("pResDesc is NULL"))?;
        let t = desc.ok_or_else(|| error::invalid("pTexDesc is NULL"))?;
        let r = driver_resource(res)?;
        let (d, _, _) = with_context()?;
        // A resource the driver does not know is for cuTexObjectCreate to refuse.
        let format = resource_format(d, &r).ok();
        let wide_integers = is_wide_integer(format);
        // The resource's own format decides, not a view's: on the H200 NVIDIA's runtime
        // refuses normalized reads of a u32 array through a uchar4 or short2 view, and a
        // uchar4 view of one read in element type returns normalized floats
        // (clients/runtime/texture_views.cu's recording). So the runtime does not ask
        // for integer reads (CU_TRSF_READ_AS_INTEGER) of 32-bit integers, which the flag
        // does not change without a view.
        if t.read_mode != 0 && wide_integers {
            return Err(RtError::new(
                INVALID_NORM_SETTING,
                "cudaReadModeNormalizedFloat of 32-bit integers (the resource's format)",
            ));
        }
        let mut flags = 0;
        if t.read_mode == 0 && !wide_integers {
            flags |= 0x01;
        }
        if t.normalized_coords != 0 {
            flags |= 0x02;
        }
        if t.srgb != 0 {
            flags |= 0x10;
        }
        if t.disable_trilinear_optimization != 0 {
            flags |= 0x20;
        }
        if t.seamless_cubemap != 0 {
            flags |= 0x40;
        }
        let td = CUDA_TEXTURE_DESC {
            address_mode: t.address_mode,
            filter_mode: t.filter_mode,
            flags,
            max_anisotropy: t.max_anisotropy,
            mipmap_filter_mode: t.mipmap_filter_mode,
            mipmap_level_bias: t.mipmap_level_bias,
            min_mipmap_level_clamp: t.min_mipmap_level_clamp,
            max_mipmap_level_clamp: t.max_mipmap_level_clamp,
            border_color: t.border_color,
            reserved: [0; 12],
        };
        let mut h = 0;
        // Safety: the view is NULL (none) or the program's, readable as the header requires.
        unsafe { d.cuTexObjectCreate(&mut h, &r, &td, view)? };
        *tex = h;
        Ok(())
    }
}

cudart_fn! {
    /// The driver's answer. For an object made without a view the H200's driver leaves
    /// the descriptor as it was and succeeds, and NVIDIA's runtime answers zeros
    /// (clients/runtime/texture_views.cu's recording): the driver fills a cleared copy,
    /// the program's is written only on success.
    fn cudaGetTextureObjectResourceViewDesc(view: *mut CUDA_RESOURCE_VIEW_DESC, tex: u64) {
        // Safety: NULL (refused) or writable, as the header requires.
        let out = unsafe { out_ref(view)? };
        let (d, _, _) = with_context()?;
        let mut got = CUDA_RESOURCE_VIEW_DESC::default();
        // Safety: a local descriptor, writable.
        unsafe { d.cuTexObjectGetResourceViewDesc(&mut got, tex)? };
        *out = got;
        Ok(())
    }
}

cudart_fn! {
    fn cudaDestroyTextureObject(tex: u64) {
        let (d, _, _) = with_context()?;
        d.cuTexObjectDestroy(tex)
    }
}

cudart_fn! {
    fn cudaCreateSurfaceObject(surf: *mut u64, res: *const ResourceDesc) {
        // Safety: the program's pointers: NULL (refused) or valid, as the header requires.
        let (surf, res) = unsafe { (out_ref(surf)?, res.as_ref()) };
        let res = res.ok_or_else(|| error::invalid("pResDesc is NULL"))?;
        let r = driver_resource(res)?;
        let (d, _, _) = with_context()?;
        let mut h = 0;
        d.cuSurfObjectCreate(&mut h, &r)?;
        *surf = h;
        Ok(())
    }
}

cudart_fn! {
    fn cudaDestroySurfaceObject(surf: u64) {
        let (d, _, _) = with_context()?;
        d.cuSurfObjectDestroy(surf)
    }
}

/// The driver's resource description back as the runtime's (the inverse of
/// `driver_resource`).
fn runtime_resource(r: &CUDA_RESOURCE_DESC) -> RtResult<ResourceDesc> {
    let mut out = ResourceDesc {
        res_type: r.res_type,
        res: [0; 16],
        flags: r.flags,
    };
    match r.res_type {
        0 | 1 => out.res[0] = r.res[0],
        2 | 3 => {
            let c = channel_desc(r.res[1] as u32 as i32, (r.res[1] >> 32) as u32);
            out.res[0] = r.res[0];
            out.res[1] = c.x as u32 as u64 | (c.y as u32 as u64) << 32;
            out.res[2] = c.z as u32 as u64 | (c.w as u32 as u64) << 32;
            out.res[3] = c.f as u32 as u64;
            out.res[4] = r.res[2];
            out.res[5] = r.res[3];
            out.res[6] = r.res[4];
        }
        t => {
            return Err(error::not_supported(format!(
                "the driver describes the object as resource type {t}, which the runtime has no description of"
            )))
        }
    }
    Ok(out)
}

cudart_fn! {
    fn cudaGetTextureObjectResourceDesc(res: *mut ResourceDesc, tex: u64) {
        // Safety: NULL (refused) or writable, as the header requires.
        let res = unsafe { out_ref(res)? };
        let (d, _, _) = with_context()?;
        let mut r = CUDA_RESOURCE_DESC::default();
        d.cuTexObjectGetResourceDesc(&mut r, tex)?;
        *res = runtime_resource(&r)?;
        Ok(())
    }
}

cudart_fn! {
    fn cudaGetSurfaceObjectResourceDesc(res: *mut ResourceDesc, surf: u64) {
        // Safety: NULL (refused) or writable, as the header requires.
        let res = unsafe { out_ref(res)? };
        let (d, _, _) = with_context()?;
        let mut r = CUDA_RESOURCE_DESC::default();
        d.cuSurfObjectGetResourceDesc(&mut r, surf)?;
        *res = runtime_resource(&r)?;
        Ok(())
    }
}

cudart_fn! {
    /// The driver's description with its flags spread back into the runtime's fields
    /// (the inverse of what cudaCreateTextureObject makes of them).
    fn cudaGetTextureObjectTextureDesc(desc: *mut TextureDesc, tex: u64) {
        // Safety: NULL (refused) or writable, as the header requires.
        let desc = unsafe { out_ref(desc)? };
        let (d, _, _) = with_context()?;
        let mut t = CUDA_TEXTURE_DESC::default();
        d.cuTexObjectGetTextureDesc(&mut t, tex)?;
        let flag = |bit: u32| c_int::from(t.flags & bit != 0);
        // 32-bit integers are made in element type without the flag (creation above).
        let mut r = CUDA_RESOURCE_DESC::default();
        let wide_integers = d
            .cuTexObjectGetResourceDesc(&mut r, tex)
            .is_ok_and(|()| is_wide_integer(resource_format(d, &r).ok()));
        *desc = TextureDesc {
            address_mode: t.address_mode,
            filter_mode: t.filter_mode,
            // CU_TRSF_READ_AS_INTEGER is cudaReadModeElementType (0); without it the
            // texture reads normalized floats (cudaReadModeNormalizedFloat, 1).
            read_mode: if wide_integers { 0 } else { 1 - flag(0x01) },
            srgb: flag(0x10),
            // The driver leaves borderColor unwritten (probe views, border-readback): the
            // zeroed descriptor's 0 is what NVIDIA's runtime answered (per_thread_arrays).
            border_color: t.border_color,
            normalized_coords: flag(0x02),
            max_anisotropy: t.max_anisotropy,
            mipmap_filter_mode: t.mipmap_filter_mode,
            mipmap_level_bias: t.mipmap_level_bias,
            min_mipmap_level_clamp: t.min_mipmap_level_clamp,
            max_mipmap_level_clamp: t.max_mipmap_level_clamp,
            disable_trilinear_optimization: flag(0x20),
            seamless_cubemap: flag(0x40),
        };
        Ok(())
    }
}

cudart_fn! {
    fn cudaDeviceGetTexture1DLinearMaxWidth(max_width: *mut usize, desc: *const ChannelFormatDesc, device: c_int) {
        // Safety: the program's pointers: NULL (refused) or valid, as the header requires.
        let (max_width, desc) = unsafe { (out_ref(max_width)?, desc.as_ref()) };
        let desc = desc.ok_or_else(|| error::invalid("fmtDesc is NULL"))?;
        let (format, channels) = driver_format(desc)?;
        let rt = crate::runtime::runtime()?;
        rt.check_device(device)?;
        crate::driver::driver()?.cuDeviceGetTexture1DLinearMaxWidth(max_width, format, channels, device)
    }
}

/// `struct cudaArrayMemoryRequirements`, laid out as CUDA_ARRAY_MEMORY_REQUIREMENTS.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ArrayMemoryRequirements {
    pub size: usize,
    pub alignment: usize,
    pub reserved: [c_uint; 4],
}

/// `struct cudaArraySparseProperties`, laid out as CUDA_ARRAY_SPARSE_PROPERTIES.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ArraySparseProperties {
    pub tile_extent: [c_uint; 3],
    pub miptail_first_level: c_uint,
    pub miptail_size: u64,
    pub flags: c_uint,
    pub reserved: [c_uint; 4],
}

cudart_fn! {
    fn cudaArrayGetMemoryRequirements(req: *mut ArrayMemoryRequirements, array: u64, device: c_int) {
        // Safety: NULL (refused) or writable, as the header requires.
        let req = unsafe { out_ref(req)? };
        let (d, _, _) = with_context()?;
        // Safety: the runtime's struct is the driver's (same fields, abi_check).
        unsafe { d.cuArrayGetMemoryRequirements((req as *mut ArrayMemoryRequirements).cast(), cu_array(array), device) }
    }
}

cudart_fn! {
    fn cudaMipmappedArrayGetMemoryRequirements(req: *mut ArrayMemoryRequirements, mipmap: u64, device: c_int) {
        // Safety: NULL (refused) or writable, as the header requires.
        let req = unsafe { out_ref(req)? };
        let (d, _, _) = with_context()?;
        // Safety: the runtime's struct is the driver's (same fields, abi_check).
        unsafe { d.cuMipmappedArrayGetMemoryRequirements((req as *mut ArrayMemoryRequirements).cast(), mipmap as CUmipmappedArray, device) }
    }
}

cudart_fn! {
    fn cudaArrayGetSparseProperties(props: *mut ArraySparseProperties, array: u64) {
        // Safety: NULL (refused) or writable, as the header requires.
        let props = unsafe { out_ref(props)? };
        let (d, _, _) = with_context()?;
        // Safety: the runtime's struct is the driver's (same fields, abi_check).
        unsafe { d.cuArrayGetSparseProperties((props as *mut ArraySparseProperties).cast(), cu_array(array)) }
    }
}

cudart_fn! {
    fn cudaMipmappedArrayGetSparseProperties(props: *mut ArraySparseProperties, mipmap: u64) {
        // Safety: NULL (refused) or writable, as the header requires.
        let props = unsafe { out_ref(props)? };
        let (d, _, _) = with_context()?;
        // Safety: the runtime's struct is the driver's (same fields, abi_check).
        unsafe { d.cuMipmappedArrayGetSparseProperties((props as *mut ArraySparseProperties).cast(), mipmap as CUmipmappedArray) }
    }
}

cudart_fn! {
    fn cudaArrayGetPlane(plane: *mut u64, array: u64, plane_idx: c_uint) {
        // Safety: NULL (refused) or writable, as the header requires.
        let plane = unsafe { out_ref(plane)? };
        let (d, _, _) = with_context()?;
        let mut p = std::ptr::null_mut();
        d.cuArrayGetPlane(&mut p, cu_array(array), plane_idx)?;
        *plane = p as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_array_copies_split_into_a_partial_row_whole_rows_and_a_partial_row() {
        // Rows of 16 bytes; 40 bytes from byte 4 of row 1 (offset 20).
        assert_eq!(
            row_pieces(20, 40, 16),
            vec![(4, 1, 12, 1, 0), (0, 2, 16, 1, 12), (0, 3, 12, 1, 28)]
        );
        assert_eq!(row_pieces(32, 32, 16), vec![(0, 2, 16, 2, 0)]);
        assert_eq!(row_pieces(3, 5, 16), vec![(3, 0, 5, 1, 0)]);
        assert!(row_pieces(0, 0, 16).is_empty());
    }

    #[test]
    fn resource_descriptions_round_trip_through_the_drivers() {
        let desc = cudaCreateChannelDesc(16, 16, 0, 0, 2);
        let mut r = ResourceDesc {
            res_type: 3,
            res: [0; 16],
            flags: 0,
        };
        r.res[0] = 0x7000_0000;
        r.res[1] = desc.x as u32 as u64 | (desc.y as u32 as u64) << 32;
        r.res[2] = 0;
        r.res[3] = desc.f as u32 as u64;
        r.res[4] = 64;
        r.res[5] = 32;
        r.res[6] = 512;
        let back = runtime_resource(&driver_resource(&r).unwrap()).unwrap();
        assert_eq!(back.res, r.res);
        let array = ResourceDesc {
            res_type: 0,
            res: [0xabc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            flags: 0,
        };
        assert_eq!(
            runtime_resource(&driver_resource(&array).unwrap())
                .unwrap()
                .res,
            array.res
        );
    }

    #[test]
    fn channel_descriptions_map_to_driver_formats_and_back() {
        for (desc, want) in [
            (cudaCreateChannelDesc(32, 0, 0, 0, 2), (0x20, 1)),
            (cudaCreateChannelDesc(8, 8, 8, 8, 1), (0x01, 4)),
            (cudaCreateChannelDesc(16, 16, 0, 0, 0), (0x09, 2)),
            (cudaCreateChannelDesc(16, 0, 0, 0, 2), (0x10, 1)),
        ] {
            let got = driver_format(&desc).unwrap();
            assert_eq!(got, want, "{desc:?}");
            assert_eq!(channel_desc(got.0, got.1), desc);
        }
        assert_eq!(channel_desc(0x20, 1), cudaCreateChannelDesc(32, 0, 0, 0, 2));
        for bad in [
            cudaCreateChannelDesc(8, 8, 8, 0, 1),
            cudaCreateChannelDesc(8, 16, 0, 0, 1),
            cudaCreateChannelDesc(0, 8, 0, 0, 1),
            cudaCreateChannelDesc(64, 0, 0, 0, 2),
        ] {
            assert_eq!(
                driver_format(&bad).unwrap_err().code,
                INVALID_CHANNEL_DESCRIPTOR,
                "{bad:?}"
            );
        }
    }
}
