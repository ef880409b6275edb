//! CUDA arrays, texture objects and surface objects.
//!
//! An array is host memory the mock owns (`ptx::Texels`), row-major and packed (rows
//! `width * texel` bytes apart, slices `height` rows apart): the GPU's layout is opaque
//! to programs, which reach an array only through copies and textures. Its bytes count
//! against the host memory the mock may back (`limits::Backing`), whole, when created.
//!
//! Texture and surface objects are descriptions over an array or device memory, shared
//! (`Arc`) with the kernels that use them: a kernel names one by the 64-bit handle the
//! driver returned, and `launch::KernelMemory` looks it up here, so a bogus handle is a
//! fault. A launch keeps the objects live when it was queued (`BoundObjects`): one
//! destroyed after the launch, even before its kernel starts to run, stays valid for that
//! kernel, as on a GPU (programs destroy a texture object right after the launches that
//! read it: NVIDIA's NV12toBGRandResize sample does), while a launch queued after the
//! destroy faults on the handle.
//!
//! A cubemap array holds its faces as layers (6, or 6 per cube of a layered cubemap);
//! a mipmapped array is one array per level, each half the one before (at least 1) in
//! every dimension but layers, reached by cuMipmappedArrayGetLevel and destroyed with
//! the mipmapped array.
//!
//! A texture object over an array or mipmapped array may have a resource view
//! (`check_view`): its format reinterpreted (block-compressed included), a subrange of its
//! levels and of its layers.
//!
//! Sparse and deferred-mapping arrays are made, answer their sparse properties and memory
//! requirements as the H200 did (`sparse_properties`), and are backed whole from the
//! start: no tile is ever unmapped (cuMemMapArrayAsync is not emulated).
//!
//! A texture over a UNORM/SNORM array reads normalized floats whatever its read mode, one
//! over an R10G10B10A2 array its channels normalized, one over a block-compressed array
//! the decoded texels; surfaces over the UNORM/SNORM and R10G10B10A2 arrays move their
//! bytes, and resource views over them read the bytes in the view's format
//! (`CudaArray::image`), as the H200 did (probe texel_formats). Not emulated
//! (CUDA_ERROR_NOT_SUPPORTED, saying so): resource views over block-compressed arrays
//! (not recorded; a surface over one cannot be made, the H200 refusing SURFACE_LDST on a
//! BC array).

use std::collections::HashMap;
use std::sync::Arc;

use cumock_abi::{
    ArrayMemoryRequirements, ArraySparseProperties, CUDA_ARRAY3D_DESCRIPTOR, CUDA_RESOURCE_DESC,
    CUDA_RESOURCE_VIEW_DESC, CUDA_TEXTURE_DESC,
};
use cumock_ptx as ptx;
use ptx::{
    AddressMode, BlockFormat, ChannelKind, Format, Image, MipmapSampler, Sampler, Storage, Texels,
};

use super::copies2d::PlaneStart;
use super::error::*;
use super::ids::{ArrayId, DevicePtr, MipmappedArrayId};
use super::vmm::Need;
use super::{Driver, HostBytes, HostOrDevice};

pub const LAYERED: u32 = 0x01;
pub const SURFACE_LDST: u32 = 0x02;
pub const CUBEMAP: u32 = 0x04;
pub const TEXTURE_GATHER: u32 = 0x08;
pub const DEPTH_TEXTURE: u32 = 0x10;
pub const COLOR_ATTACHMENT: u32 = 0x20;
pub const SPARSE: u32 = 0x40;
pub const DEFERRED_MAPPING: u32 = 0x80;

pub const RESOURCE_ARRAY: i32 = 0;
pub const RESOURCE_MIPMAPPED_ARRAY: i32 = 1;
pub const RESOURCE_LINEAR: i32 = 2;
pub const RESOURCE_PITCH2D: i32 = 3;

pub(super) const TRSF_READ_AS_INTEGER: u32 = 0x01;
pub(super) const TRSF_NORMALIZED_COORDINATES: u32 = 0x02;
pub(super) const TRSF_SRGB: u32 = 0x10;
pub(super) const TRSF_DISABLE_TRILINEAR_OPTIMIZATION: u32 = 0x20;
pub(super) const TRSF_SEAMLESS_CUBEMAP: u32 = 0x40;

/// cuda.h's `CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT` and `_TEXTURE_PITCH_ALIGNMENT`.
pub(super) const ATTR_TEXTURE_ALIGNMENT: i32 = 14;
pub(super) const ATTR_TEXTURE_PITCH_ALIGNMENT: i32 = 51;

/// A CUarray_format the mock reads, as the executor's channel layout.
pub fn channel_format(format: i32, channels: u32) -> CuResult<Format> {
    let (kind, bits) = match format {
        0x01 => (ChannelKind::Unsigned, 8),
        0x02 => (ChannelKind::Unsigned, 16),
        0x03 => (ChannelKind::Unsigned, 32),
        0x08 => (ChannelKind::Signed, 8),
        0x09 => (ChannelKind::Signed, 16),
        0x0a => (ChannelKind::Signed, 32),
        0x10 => (ChannelKind::Float, 16),
        0x20 => (ChannelKind::Float, 32),
        // The UNORM/SNORM and R10G10B10A2 formats: arrays of them are made
        // (`array_format`, what textures read of them `CudaArray::image`'s), what a
        // linear or pitch2D texture reads of them is not emulated.
        0x50 | 0xc0..=0xcb => {
            return Err(not_supported(format!(
                "CUarray_format {format:#x} (UNORM/SNORM, R10G10B10A2) is not emulated for \
                 linear memory's textures: 8/16/32-bit integers, half and float are"
            )))
        }
        // The block-compressed and YUV formats are no linear texture's elements (the
        // H200: probe arrays, tex-linear), nor an array's for YUV (formats-2d); a value
        // cuda.h does not name is invalid (cuDeviceGetTexture1DLinearMaxWidth of 0x77:
        // probe api_gaps, small-ones).
        f => return Err(invalid(format!("{f} is not a CUarray_format"))),
    };
    if !matches!(channels, 1 | 2 | 4) {
        return Err(invalid(format!(
            "NumChannels {channels}: an array element has 1, 2 or 4 channels"
        )));
    }
    Ok(Format {
        kind,
        bits,
        channels: channels as u8,
    })
}

/// One CUDA array.
#[derive(Debug)]
pub struct CudaArray {
    /// As created (a 1D array's height and a 2D array's depth are 0).
    pub desc: CUDA_ARRAY3D_DESCRIPTOR,
    pub format: Format,
    pub packing: Packing,
    pub texels: Arc<Texels>,
    pub device: usize,
    /// The mipmapped array this array is a level of: it goes with that one only.
    pub mipmapped: Option<MipmappedArrayId>,
}

/// One mipmapped array: its levels' arrays, level 0 first.
#[derive(Debug)]
pub struct MipmappedArray {
    pub desc: CUDA_ARRAY3D_DESCRIPTOR,
    pub levels: Vec<ArrayId>,
}

impl CudaArray {
    /// Elements (blocks where block-compressed) in width, rows, slices.
    fn extent(&self) -> [u64; 3] {
        storage_extent(&self.desc, self.packing)
    }

    pub fn row_bytes(&self) -> u64 {
        self.extent()[0] * self.format.texel_bytes()
    }

    pub fn bytes(&self) -> u64 {
        self.texels.len() as u64
    }

    /// What a texture, a resource view or a surface (`reader`) over the array reads.
    /// A texture reads the UNORM/SNORM formats' integers (`normalized_format`), and a block-compressed array's texels decoded
    /// (`BlockFormat`), its extent in texels as created; a surface the UNORM/SNORM and
    /// R10G10B10A2 arrays' bytes, a texture an R10G10B10A2 array's channels normalized,
    /// a resource view the bytes in its own format.
    fn image(&self, reader: Reader) -> CuResult<Image> {
        let blocks = match (self.packing, reader) {
            (Packing::Plain, _) => None,
            (Packing::Normalized, Reader::Texture) if normalized_format(self.desc.format) => None,
            // A surface moves bytes (suld.b, sust.b): the H200 made surfaces over
            // UNORM_INT8X4, SNORM_INT16X2 and R10G10B10A2 arrays and read and wrote their
            // words as stored (probe texel_formats, packed-and-surfaces). A resource view
            // reads the bytes in its own format, as over any array: the H200 took the
            // eight 4-byte view formats asked over UNORM_INT8X4, SNORM_INT8X4,
            // UNORM_INT16X2, SNORM_INT16X2 and R10G10B10A2 arrays and read the same
            // through each whatever the array's format (texel_formats, norm-views).
            (Packing::Normalized, Reader::Surface | Reader::View) => None,
            (Packing::Blocks, Reader::Texture) => block_format(self.desc.format),
            _ => {
                return Err(not_supported(format!(
                    "a {} over an array of CUarray_format {:#x} (UNORM/SNORM, R10G10B10A2, \
                     block-compressed) is not emulated",
                    match reader {
                        Reader::Texture => "texture",
                        Reader::View => "resource view",
                        Reader::Surface => "surface",
                    },
                    self.desc.format
                )))
            }
        };
        let [w, h, d] = self.extent();
        let row = self.row_bytes();
        let mut img = Image {
            format: self.format,
            width: w,
            height: h,
            depth: d,
            layered: self.desc.flags & LAYERED != 0,
            cubemap: self.desc.flags & CUBEMAP != 0,
            extent_as_made: [
                self.desc.width as u64,
                self.desc.height as u64,
                self.desc.depth as u64,
            ],
            row_pitch: row,
            slice_pitch: row * h,
            storage: Storage::Array(self.texels.clone()),
        };
        if self.desc.format == R10G10B10A2 && reader == Reader::Texture {
            // A texture reads its four channels apart (`ptx::texture::channels`: 10-bit
            // texels are R10G10B10A2 words), normalized as the H200 read them (probe
            // texel_formats, packed-and-surfaces); a surface moves the words.
            img.format = Format {
                kind: ChannelKind::Unsigned,
                bits: 10,
                channels: 4,
            };
        }
        if let Some(b) = blocks {
            // Decoded texels, as a block-compressed view reads them, over the extent the
            // array was made with (the H200 read a 4 x 4 array of one block: probe
            // texel_formats, bc-arrays; a partial block's texels are not recorded).
            img.format = Format {
                kind: ChannelKind::Float,
                bits: 32,
                channels: b.channels(),
            };
            img.width = self.desc.width as u64;
            img.height = (self.desc.height as u64).max(1);
            img.storage = Storage::View {
                texels: self.texels.clone(),
                origin: 0,
                blocks: Some(b),
                view_layers: None,
            };
        }
        Ok(img)
    }
}

/// Who reads an array's texels (`CudaArray::image`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reader {
    Texture,
    View,
    Surface,
}

/// Whether a CUarray_format is one of the UNORM/SNORM integers (CU_AD_FORMAT_UNORM_INT8X1
/// to CU_AD_FORMAT_SNORM_INT16X4), which a texture reads as normalized floats whatever
/// its read mode.
fn normalized_format(format: i32) -> bool {
    (0xc0..=0xcb).contains(&format) || format == R10G10B10A2
}

/// CU_AD_FORMAT_UNORM_INT_101010_2: four channels in one 32-bit word.
const R10G10B10A2: i32 = 0x50;

/// The blocks of a block-compressed CUarray_format (None for another format).
fn block_format(format: i32) -> Option<BlockFormat> {
    Some(match format {
        0x91 | 0x92 => BlockFormat::Bc1,
        0x93 | 0x94 => BlockFormat::Bc2,
        0x95 | 0x96 => BlockFormat::Bc3,
        0x97 | 0x98 => BlockFormat::Bc4 {
            signed: format == 0x98,
        },
        0x99 | 0x9a => BlockFormat::Bc5 {
            signed: format == 0x9a,
        },
        0x9b | 0x9c => BlockFormat::Bc6h {
            signed: format == 0x9c,
        },
        0x9d | 0x9e => BlockFormat::Bc7,
        _ => return None,
    })
}

/// Whether a CUarray_format holds sRGB-encoded colours (the _SRGB block formats): a
/// texture over such an array must read them with CU_TRSF_SRGB (the H200 refused flags 0
/// and CU_TRSF_READ_AS_INTEGER over BC1_UNORM_SRGB and BC7_UNORM_SRGB arrays with
/// CUDA_ERROR_INVALID_VALUE: probe texel_formats, bc-arrays).
fn srgb_format(format: i32) -> bool {
    matches!(format, 0x92 | 0x94 | 0x96 | 0x9e)
}

#[derive(Debug)]
pub struct TextureEntry {
    pub object: Arc<ptx::TextureObject>,
    pub resource: CUDA_RESOURCE_DESC,
    pub texture: CUDA_TEXTURE_DESC,
    /// The resource view as given, if the object was made with one.
    pub view: Option<CUDA_RESOURCE_VIEW_DESC>,
}

#[derive(Debug)]
pub struct SurfaceEntry {
    pub object: Arc<ptx::SurfaceObject>,
    pub resource: CUDA_RESOURCE_DESC,
}

/// The texture and surface objects live at one moment, as a launch queued then sees them
/// (`Driver::bound_objects`). Shared, copied only when an object is created or destroyed
/// while a launch still holds the previous set.
#[derive(Debug, Default, Clone)]
pub struct BoundObjects {
    textures: HashMap<u64, Arc<ptx::TextureObject>>,
    surfaces: HashMap<u64, Arc<ptx::SurfaceObject>>,
}

impl BoundObjects {
    pub fn texture(&self, h: u64) -> Option<Arc<ptx::TextureObject>> {
        self.textures.get(&h).cloned()
    }

    pub fn surface(&self, h: u64) -> Option<Arc<ptx::SurfaceObject>> {
        self.surfaces.get(&h).cloned()
    }
}

/// The process's arrays and objects, by handle.
#[derive(Debug, Default)]
pub struct Textures {
    arrays: HashMap<ArrayId, CudaArray>,
    mipmapped: HashMap<MipmappedArrayId, MipmappedArray>,
    next_mipmapped: u64,
    textures: HashMap<u64, TextureEntry>,
    surfaces: HashMap<u64, SurfaceEntry>,
    /// The objects above, as launches take them.
    bound: Arc<BoundObjects>,
    next_array: u64,
    next_object: u64,
}

/// Array handles are addresses in a range no host pointer has (above the 47-bit user
/// space), so a pointer passed by mistake is never taken for one.
const ARRAY_HANDLE_BASE: u64 = 0xa7a7_0000_0000_0000;
/// Mipmapped arrays' handles, likewise, apart from arrays'.
const MIPMAPPED_HANDLE_BASE: u64 = 0xa7a8_0000_0000_0000;

impl Textures {
    pub fn array(&self, h: ArrayId) -> CuResult<&CudaArray> {
        if h.is_null() {
            return Err(invalid_handle("the CUarray is NULL"));
        }
        self.arrays
            .get(&h)
            .ok_or_else(|| invalid_handle(format!("{h:#x} is not a live CUDA array")))
    }

    pub fn mipmapped(&self, h: MipmappedArrayId) -> CuResult<&MipmappedArray> {
        if h.is_null() {
            return Err(invalid_handle("the CUmipmappedArray is NULL"));
        }
        self.mipmapped
            .get(&h)
            .ok_or_else(|| invalid_handle(format!("{h:#x} is not a live mipmapped array")))
    }

    /// A texture's or surface's array: a NULL one is CUDA_ERROR_INVALID_VALUE there, as
    /// on the H200 (probe arrays, tex-array, surfaces: hArray NULL).
    fn resource_array(&self, h: u64) -> CuResult<&CudaArray> {
        if h == 0 {
            return Err(invalid("the resource's hArray is NULL"));
        }
        self.array(ArrayId::from_handle(h))
    }

    /// A texture's mipmapped array: NULL is CUDA_ERROR_INVALID_VALUE (probe arrays,
    /// tex-mipmapped).
    fn resource_mipmapped(&self, h: u64) -> CuResult<&MipmappedArray> {
        if h == 0 {
            return Err(invalid("the resource's hMipmappedArray is NULL"));
        }
        self.mipmapped(MipmappedArrayId::from_handle(h))
    }

    pub fn texture(&self, h: u64) -> Option<&TextureEntry> {
        self.textures.get(&h)
    }

    pub fn surface(&self, h: u64) -> Option<&SurfaceEntry> {
        self.surfaces.get(&h)
    }

    /// Texture and surface handles: small integers from 1, one sequence for both, so
    /// that one kind's handle is never the other's (0 is never a handle).
    fn next_handle(&mut self) -> u64 {
        self.next_object += 1;
        self.next_object
    }
}

/// The handle of a CUDA array or of a mipmapped array, for the calls that have a twin of
/// each (cuArrayGetMemoryRequirements, cuMipmappedArrayGetMemoryRequirements).
#[derive(Clone, Copy, Debug)]
pub enum AnyArray {
    Array(ArrayId),
    Mipmapped(MipmappedArrayId),
}

/// A copy's side that is a CUDA array or linear memory, 3D: where (x in bytes, y, z) and
/// for linear memory its pitch and rows per slice.
pub enum Volume {
    Linear {
        start: PlaneStart,
        pitch: u64,
        /// Rows from one slice to the next.
        height: u64,
    },
    Array(ArrayId),
}

/// How an array's elements are stored beyond their `Format`: the formats cuda.h 13 added
/// for arrays (UNORM/SNORM, R10G10B10A2, block-compressed) are made (the H200 makes each
/// with the channel count its name says: probe arrays, formats-2d, formats-3d) and copied
/// as bytes (a block-compressed one in rows of blocks); what textures read of them is
/// `CudaArray::image`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    /// 8/16/32-bit integers, half and float: what textures read.
    Plain,
    /// UNORM/SNORM integers, or R10G10B10A2 (one 32-bit word an element).
    Normalized,
    /// Block-compressed: 4x4 texels a block of `Format`'s bytes; the extent in blocks.
    Blocks,
}

/// The element layout of an array of `format` with `channels` channels (cuArray3DCreate's
/// rules; a linear texture's are `channel_format`'s).
pub fn array_format(format: i32, channels: u32) -> CuResult<(Format, Packing)> {
    let want = |n: u32| {
        if channels == n {
            Ok(())
        } else {
            Err(invalid(format!(
                "CUarray_format {format:#x} has {n} channel{}, not {channels}",
                if n == 1 { "" } else { "s" }
            )))
        }
    };
    let fmt = |kind, bits, channels| Format {
        kind,
        bits,
        channels,
    };
    match format {
        0xc0..=0xcb => {
            let i = (format - 0xc0) as usize;
            let kind = if i < 6 {
                ChannelKind::Unsigned
            } else {
                ChannelKind::Signed
            };
            let bits = if i % 6 < 3 { 8 } else { 16 };
            let n = [1u8, 2, 4][i % 3];
            want(n as u32)?;
            Ok((fmt(kind, bits, n), Packing::Normalized))
        }
        0x50 => {
            want(4)?;
            Ok((fmt(ChannelKind::Unsigned, 32, 1), Packing::Normalized))
        }
        // BC1 and BC4 blocks are 8 bytes, the others 16.
        0x91..=0x9e => {
            let n = match format {
                0x91..=0x96 | 0x9d | 0x9e => 4,
                0x97 | 0x98 => 1,
                0x99 | 0x9a => 2,
                _ => 3,
            };
            want(n)?;
            let words = if matches!(format, 0x91 | 0x92 | 0x97 | 0x98) {
                2
            } else {
                4
            };
            Ok((fmt(ChannelKind::Unsigned, 32, words), Packing::Blocks))
        }
        _ => Ok((channel_format(format, channels)?, Packing::Plain)),
    }
}

/// cuda.h's device attributes that bound an array's extent.
mod maxima {
    pub const TEXTURE1D_WIDTH: i32 = 21;
    pub const TEXTURE2D_WIDTH: i32 = 22;
    pub const TEXTURE2D_HEIGHT: i32 = 23;
    pub const TEXTURE3D_WIDTH: i32 = 24;
    pub const TEXTURE3D_HEIGHT: i32 = 25;
    pub const TEXTURE3D_DEPTH: i32 = 26;
    pub const TEXTURE2D_LAYERED_WIDTH: i32 = 27;
    pub const TEXTURE2D_LAYERED_HEIGHT: i32 = 28;
    pub const TEXTURE2D_LAYERED_LAYERS: i32 = 29;
    pub const TEXTURE1D_LAYERED_WIDTH: i32 = 42;
    pub const TEXTURE1D_LAYERED_LAYERS: i32 = 43;
    pub const TEXTURE2D_GATHER_WIDTH: i32 = 45;
    pub const TEXTURE2D_GATHER_HEIGHT: i32 = 46;
    pub const TEXTURE3D_WIDTH_ALTERNATE: i32 = 47;
    pub const TEXTURE3D_HEIGHT_ALTERNATE: i32 = 48;
    pub const TEXTURE3D_DEPTH_ALTERNATE: i32 = 49;
    pub const TEXTURECUBEMAP_WIDTH: i32 = 52;
    pub const TEXTURECUBEMAP_LAYERED_WIDTH: i32 = 53;
    pub const TEXTURECUBEMAP_LAYERED_LAYERS: i32 = 54;
    pub const SURFACE1D_WIDTH: i32 = 55;
    pub const SURFACE2D_WIDTH: i32 = 56;
    pub const SURFACE2D_HEIGHT: i32 = 57;
    pub const SURFACE3D_WIDTH: i32 = 58;
    pub const SURFACE3D_HEIGHT: i32 = 59;
    pub const SURFACE3D_DEPTH: i32 = 60;
    pub const SURFACE1D_LAYERED_WIDTH: i32 = 61;
    pub const SURFACE1D_LAYERED_LAYERS: i32 = 62;
    pub const SURFACE2D_LAYERED_WIDTH: i32 = 63;
    pub const SURFACE2D_LAYERED_HEIGHT: i32 = 64;
    pub const SURFACE2D_LAYERED_LAYERS: i32 = 65;
    pub const SURFACECUBEMAP_WIDTH: i32 = 66;
    pub const SURFACECUBEMAP_LAYERED_WIDTH: i32 = 67;
    pub const SURFACECUBEMAP_LAYERED_LAYERS: i32 = 68;
    pub const TEXTURE2D_LINEAR_WIDTH: i32 = 70;
    pub const TEXTURE2D_LINEAR_HEIGHT: i32 = 71;
    pub const TEXTURE2D_LINEAR_PITCH: i32 = 72;
    pub const TEXTURE2D_MIPMAPPED_WIDTH: i32 = 73;
    pub const TEXTURE2D_MIPMAPPED_HEIGHT: i32 = 74;
    pub const TEXTURE1D_MIPMAPPED_WIDTH: i32 = 77;
}
pub(super) use maxima::*;

/// cuda.h's CUDA_ARRAY3D_VIDEO_ENCODE_DECODE.
pub const VIDEO_ENCODE_DECODE: u32 = 0x100;

/// What cuArray3DCreate and cuMipmappedArrayCreate (`mipmapped`) refuse in a descriptor,
/// with the device's attributes (`max`); the element layout. All CUDA_ERROR_INVALID_VALUE,
/// as the H200 answered (probe arrays: formats-*, dims-*, flags-alone, flag-combinations,
/// sparse-deferred, mipmapped):
/// - the extent of each shape within its texture maxima, and with SURFACE_LDST its surface
///   maxima too; a 3D array within the maxima or the alternate ones; a layered cubemap's
///   Depth (faces) within its layer maximum; a mipmapped 1D or 2D array within the
///   mipmapped maxima;
/// - TEXTURE_GATHER only for a 2D array; DEPTH_TEXTURE and COLOR_ATTACHMENT never (the
///   H200 made neither with any format or shape); SPARSE not for a 1D array nor with
///   DEFERRED_MAPPING; VIDEO_ENCODE_DECODE with any shape; 0x80000000, which cuda.h does
///   not name, only for a 2D array (the H200 took it there, refused it on 1D and 3D);
/// - a block-compressed format not for a 1D array.
fn check_descriptor(
    desc: &CUDA_ARRAY3D_DESCRIPTOR,
    max: impl Fn(i32) -> u64,
    mipmapped: bool,
) -> CuResult<(Format, Packing)> {
    let (format, packing) = array_format(desc.format, desc.num_channels)?;
    let flags = desc.flags;
    let known = LAYERED
        | SURFACE_LDST
        | CUBEMAP
        | TEXTURE_GATHER
        | DEPTH_TEXTURE
        | COLOR_ATTACHMENT
        | SPARSE
        | DEFERRED_MAPPING
        | VIDEO_ENCODE_DECODE;
    let (w, h, d) = (desc.width as u64, desc.height as u64, desc.depth as u64);
    let layered = flags & LAYERED != 0;
    let cubemap = flags & CUBEMAP != 0;
    let surface = flags & SURFACE_LDST != 0;
    let plain_2d = h != 0 && d == 0 && !layered && !cubemap;
    let unknown = flags & !known;
    if unknown != 0 && !(unknown == 0x8000_0000 && plain_2d) {
        return Err(invalid(format!("unknown CUDA array flags {flags:#x}")));
    }
    if w == 0 {
        return Err(invalid("Width is 0"));
    }
    for (flag, what) in [
        (DEPTH_TEXTURE, "CUDA_ARRAY3D_DEPTH_TEXTURE"),
        (COLOR_ATTACHMENT, "CUDA_ARRAY3D_COLOR_ATTACHMENT"),
    ] {
        if flags & flag != 0 {
            return Err(invalid(format!(
                "{what}: the H200 (driver 580.159.04) makes no such array"
            )));
        }
    }
    if flags & TEXTURE_GATHER != 0 && !plain_2d {
        return Err(invalid(
            "CUDA_ARRAY3D_TEXTURE_GATHER is for a 2D array only",
        ));
    }
    if flags & SPARSE != 0 && (flags & DEFERRED_MAPPING != 0 || h == 0) {
        return Err(invalid(
            "a sparse array is 2D or 3D, and not also CUDA_ARRAY3D_DEFERRED_MAPPING",
        ));
    }
    if packing == Packing::Blocks && h == 0 {
        return Err(invalid("a block-compressed array is not 1D"));
    }
    if packing == Packing::Blocks && surface {
        // The H200 refused a BC1 array of 8x4 with it (probe texel_formats,
        // packed-and-surfaces): CUDA_ERROR_NOT_SUPPORTED, not INVALID_VALUE.
        return Err(not_supported(
            "CUDA_ARRAY3D_SURFACE_LDST with a block-compressed format: the H200 makes no such \
             array",
        ));
    }
    if cubemap {
        // cuda.h: "Width must be equal to Height, and Depth must be six. If
        // CUDA_ARRAY3D_LAYERED flag is also set, then Depth must be a multiple of six."
        let faces_ok = if layered {
            d != 0 && d.is_multiple_of(6)
        } else {
            d == 6
        };
        if w != h || !faces_ok {
            return Err(invalid(format!(
                "a cubemap{} is Width == Height with Depth {}: {w}x{h}x{d}",
                if layered { " array" } else { "" },
                if layered { "a multiple of 6" } else { "6" },
            )));
        }
    }
    if h == 0 && d != 0 && !layered {
        return Err(invalid("a 3D array's Height is 0"));
    }
    if layered && d == 0 {
        return Err(invalid("a layered array's Depth (its layer count) is 0"));
    }
    // Each shape's limits: (extent, texture maxima, surface maxima), alternatives for 3D.
    let within = |ext: &[u64], limits: &[i32]| ext.iter().zip(limits).all(|(&e, &l)| e <= max(l));
    let fits = if cubemap {
        if layered {
            within(
                &[w, d],
                &[TEXTURECUBEMAP_LAYERED_WIDTH, TEXTURECUBEMAP_LAYERED_LAYERS],
            ) && (!surface
                || within(
                    &[w, d],
                    &[SURFACECUBEMAP_LAYERED_WIDTH, SURFACECUBEMAP_LAYERED_LAYERS],
                ))
        } else {
            within(&[w], &[TEXTURECUBEMAP_WIDTH])
                && (!surface || within(&[w], &[SURFACECUBEMAP_WIDTH]))
        }
    } else if layered && h == 0 {
        within(
            &[w, d],
            &[TEXTURE1D_LAYERED_WIDTH, TEXTURE1D_LAYERED_LAYERS],
        ) && (!surface
            || within(
                &[w, d],
                &[SURFACE1D_LAYERED_WIDTH, SURFACE1D_LAYERED_LAYERS],
            ))
    } else if layered {
        let t = [
            TEXTURE2D_LAYERED_WIDTH,
            TEXTURE2D_LAYERED_HEIGHT,
            TEXTURE2D_LAYERED_LAYERS,
        ];
        let s = [
            SURFACE2D_LAYERED_WIDTH,
            SURFACE2D_LAYERED_HEIGHT,
            SURFACE2D_LAYERED_LAYERS,
        ];
        within(&[w, h, d], &t) && (!surface || within(&[w, h, d], &s))
    } else if h == 0 {
        let t = if mipmapped {
            TEXTURE1D_MIPMAPPED_WIDTH
        } else {
            TEXTURE1D_WIDTH
        };
        within(&[w], &[t]) && (!surface || within(&[w], &[SURFACE1D_WIDTH]))
    } else if d == 0 {
        let t = if mipmapped {
            [TEXTURE2D_MIPMAPPED_WIDTH, TEXTURE2D_MIPMAPPED_HEIGHT]
        } else if flags & TEXTURE_GATHER != 0 {
            [TEXTURE2D_GATHER_WIDTH, TEXTURE2D_GATHER_HEIGHT]
        } else {
            [TEXTURE2D_WIDTH, TEXTURE2D_HEIGHT]
        };
        within(&[w, h], &t) && (!surface || within(&[w, h], &[SURFACE2D_WIDTH, SURFACE2D_HEIGHT]))
    } else {
        let e = [w, h, d];
        (within(&e, &[TEXTURE3D_WIDTH, TEXTURE3D_HEIGHT, TEXTURE3D_DEPTH])
            || within(
                &e,
                &[
                    TEXTURE3D_WIDTH_ALTERNATE,
                    TEXTURE3D_HEIGHT_ALTERNATE,
                    TEXTURE3D_DEPTH_ALTERNATE,
                ],
            ))
            && (!surface || within(&e, &[SURFACE3D_WIDTH, SURFACE3D_HEIGHT, SURFACE3D_DEPTH]))
    };
    if !fits {
        return Err(invalid(format!(
            "{w}x{h}x{d} (flags {flags:#x}) is past the device's maxima for its shape \
             (CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE*{})",
            if surface { " and _SURFACE*" } else { "" }
        )));
    }
    Ok((format, packing))
}

/// The resource a view is asked of: the array (a mipmapped array's level 0) as created,
/// its element layout, and how many levels it has (a plain array: 1, not mipmapped).
pub struct ViewedResource {
    pub desc: CUDA_ARRAY3D_DESCRIPTOR,
    pub format: Format,
    pub mipmapped: bool,
    pub levels: u32,
}

/// What a valid view selects: the texel layout it reads (a block-compressed view's
/// decoded texels: floats), its blocks if compressed, and its levels and layers
/// (inclusive ranges; layers `0..=0` where the array has none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewShape {
    pub format: Format,
    pub blocks: Option<BlockFormat>,
    pub levels: (u32, u32),
    pub layers: (u64, u64),
}

/// A CUresourceViewFormat other than NONE: an element layout, or a block-compressed
/// format with the channel count of CU_AD_FORMAT_UNSIGNED_INT32 elements it needs.
fn view_format(f: i32) -> CuResult<Result<Format, (BlockFormat, u32)>> {
    let kinds = [
        (ChannelKind::Unsigned, 8),
        (ChannelKind::Signed, 8),
        (ChannelKind::Unsigned, 16),
        (ChannelKind::Signed, 16),
        (ChannelKind::Unsigned, 32),
        (ChannelKind::Signed, 32),
        (ChannelKind::Float, 16),
        (ChannelKind::Float, 32),
    ];
    Ok(match f {
        0x01..=0x18 => {
            let i = (f - 1) as usize;
            let (kind, bits) = kinds[i / 3];
            Ok(Format {
                kind,
                bits,
                channels: [1, 2, 4][i % 3],
            })
        }
        0x19 => Err((BlockFormat::Bc1, 2)),
        0x1a => Err((BlockFormat::Bc2, 4)),
        0x1b => Err((BlockFormat::Bc3, 4)),
        0x1c | 0x1d => Err((BlockFormat::Bc4 { signed: f == 0x1d }, 2)),
        0x1e | 0x1f => Err((BlockFormat::Bc5 { signed: f == 0x1f }, 4)),
        0x20 | 0x21 => Err((BlockFormat::Bc6h { signed: f == 0x21 }, 4)),
        0x22 => Err((BlockFormat::Bc7, 4)),
        f => return Err(invalid(format!("{f} is not a CUresourceViewFormat"))),
    })
}

/// Whether a view fits its resource, and what it selects: every rule cuda.h gives for
/// CUDA_RESOURCE_VIEW_DESC (cuTexObjectCreate), in one place, fitted to the H200's answers
/// (probe arrays, tex-views: FLOAT_1X32 and UINT_2X16 over u32 taken, a wider or smaller
/// view and levels or layers the array lacks refused).
/// - The format: NONE is refused, after the other checks (the H200; cuda.h says it keeps
///   the array's); another names elements of the same size (the
///   extent must not change, so a reinterpretation keeps the element's bytes; cuda.h does
///   not say whether the channel count may change, this allows it); a block-compressed
///   one needs CU_AD_FORMAT_UNSIGNED_INT32 elements of 2 channels (BC1, BC4) or 4 (the
///   others).
/// - width and height: the array's (level 0's, as created: a 1D array's height is 0), or
///   4 times them for a block-compressed view; depth: the array's. A view from a later
///   level names the original resource's extent too, its first level's is refused (the
///   H200: probe views, mip-level-views, layer-views, cubemap-views).
/// - firstMipmapLevel..lastMipmapLevel: 0..0 unless mipmapped, else first <= last, both
///   free to lie past its levels (levels 2..100, 5..5, 7..7 and 6..100 of 5 taken).
/// - firstLayer..lastLayer: 0..0 unless layered, else first <= last, both free to lie
///   past its layers (layers 3..100, 4..4, 6..6 and 5..100 of 4 taken). A layered cubemap's
///   layers count faces (its depth does): the H200 took faces 1..1 and 1..6 of two cubes.
pub fn check_view(r: &ViewedResource, v: &CUDA_RESOURCE_VIEW_DESC) -> CuResult<ViewShape> {
    let shape = check_view_but_format_none(r, v)?;
    // The H200 refuses a view of format NONE (probe arrays, tex-views), where cuda.h says
    // the view keeps the resource's format; after the view's other faults (an all-zero
    // view is refused before: the object is not written then, `Driver::texture_create`).
    if v.format == 0 {
        return Err(invalid(
            "a resource view's format is CU_RES_VIEW_FORMAT_NONE: name the format read",
        ));
    }
    Ok(shape)
}

/// `check_view` but for its refusal of format NONE, which keeps the resource's format here.
fn check_view_but_format_none(
    r: &ViewedResource,
    v: &CUDA_RESOURCE_VIEW_DESC,
) -> CuResult<ViewShape> {
    let (format, blocks) = match v.format {
        0 => (r.format, None),
        f => match view_format(f)? {
            Ok(view) => {
                if view.texel_bytes() != r.format.texel_bytes() {
                    return Err(invalid(format!(
                        "view format {f:#x} has {}-byte elements, the array {}-byte ones",
                        view.texel_bytes(),
                        r.format.texel_bytes()
                    )));
                }
                (view, None)
            }
            Err((b, channels)) => {
                let u32s = Format {
                    kind: ChannelKind::Unsigned,
                    bits: 32,
                    channels: channels as u8,
                };
                if r.format != u32s {
                    return Err(invalid(format!(
                        "view format {f:#x} is block-compressed: the array's elements must be \
                         CU_AD_FORMAT_UNSIGNED_INT32 with {channels} channels"
                    )));
                }
                let decoded = Format {
                    kind: ChannelKind::Float,
                    bits: 32,
                    channels: b.channels().max(1),
                };
                (decoded, Some(b))
            }
        },
    };
    let scale = if blocks.is_some() { 4 } else { 1 };
    let d = &r.desc;
    let want = [d.width * scale, d.height * scale, d.depth];
    if [v.width, v.height, v.depth] != want {
        return Err(invalid(format!(
            "the view is {}x{}x{}: its resource's extent{} is {}x{}x{}",
            v.width,
            v.height,
            v.depth,
            if scale == 4 { " in texels" } else { "" },
            want[0],
            want[1],
            want[2]
        )));
    }
    // A mipmapped resource's view may end past its levels (the H200 took levels 2..5,
    // 2..31 and 2..100 of 5) and start past them too (5..5, 6..6, 7..7 and 6..100 of 5
    // taken: probe views, mip-level-views, view-bounds, views-two-past; no first level
    // refused is recorded, so none is here), and reads the levels it has; one that is
    // not mipmapped has level 0 only (probe arrays, tex-views: lastMipmapLevel 1 refused).
    let (first, last) = (v.first_mipmap_level, v.last_mipmap_level);
    let past_held = !r.mipmapped && last >= r.levels;
    if first > last || past_held {
        return Err(invalid(format!(
            "mipmap levels {first}..{last}: the resource has {} level{}{}",
            r.levels,
            if r.levels == 1 { "" } else { "s" },
            if r.mipmapped { "" } else { " (not mipmapped)" }
        )));
    }
    let layered = d.flags & LAYERED != 0;
    let layers = if layered { d.depth as u64 } else { 1 };
    // Likewise a layered resource's view may end past its layers (the H200 took layers
    // 3..4 and 3..100 of 4) and start past them (4..4, 5..5, 6..6, 5..6 and 5..100 of 4
    // taken: probe views, layer-views, view-bounds, views-two-past), reading 0 there; one
    // that is not layered has layer 0 only (probe arrays, tex-views: lastLayer 1 refused).
    let (fl, ll) = (v.first_layer as u64, v.last_layer as u64);
    let past_held = !layered && ll >= layers;
    if fl > ll || past_held {
        return Err(invalid(format!(
            "layers {fl}..{ll}: the resource has {layers}{}",
            if layered { "" } else { " (not layered)" }
        )));
    }
    Ok(ViewShape {
        format,
        blocks,
        levels: (first, last),
        layers: (fl, ll),
    })
}

/// An array's elements in width, rows and slices: 4x4 texels a block where
/// block-compressed (a partial block whole).
fn storage_extent(d: &CUDA_ARRAY3D_DESCRIPTOR, packing: Packing) -> [u64; 3] {
    let (w, h) = (d.width as u64, (d.height as u64).max(1));
    let (w, h) = match packing {
        Packing::Blocks => (w.div_ceil(4), h.div_ceil(4)),
        _ => (w, h),
    };
    [w, h, (d.depth as u64).max(1)]
}

/// The elements a linear texture of `element_bytes`-byte elements holds at most (what
/// cuDeviceGetTexture1DLinearMaxWidth answers): 4 GiB of them, and 2^30 at most (the
/// H200: 2^30 u32 elements, probe arrays, tex-linear).
pub fn linear_max_width(element_bytes: u64) -> u64 {
    ((1u64 << 32) / element_bytes.max(1)).min(1 << 30)
}

/// A sparse array's tiles, and a deferred-mapping array's pages: 64 KiB.
const SPARSE_PAGE: u64 = 1 << 16;

/// A sparse array's properties, fitted to the H200's answers (probe arrays,
/// sparse-deferred, mipmapped, and sparse-tiles: elements of 1 to 16 bytes and BC1/BC7
/// blocks, in 2D 1024x1024 and 100x60, 3D 64^3 and layered 2D 1024x1024x4, each alone
/// and mipmapped to 1x1):
/// - a tile is 64 KiB of elements, 2^n of them, n = 16 - log2(element bytes): 2D (and
///   layered) tiles 2^ceil(n/2) wide, 2^floor(n/2) high (float: 128x128, u8: 256x256); 3D
///   tiles with n shared out width first (float: 32x32x16). A block-compressed array's
///   elements are its 4x4 blocks, and its tile is given in texels (BC1: 512x256,
///   BC7 3D: 64x64x16);
/// - the mip tail starts at the first level smaller than a tile in a dimension; without
///   one, first level 0 and size 0 (1024x1024 float, 64^3 float). Its size is its levels'
///   bytes laid out as the GPU's 64-byte x 8-row blocks (`miptail_bytes`), in whole 64 KiB
///   tiles: every recorded size fits, 196608 for float x4 100x60 mipmapped where the
///   bare bytes (127 696) would be 131072, and 131072 for u8 32^3 where they would be
///   65536;
/// - a layered array's tail is one layer's (the layered rows answer as the 2D ones), and
///   CU_ARRAY_SPARSE_PROPERTIES_SINGLE_MIPTAIL is set where the tail starts at level 0
///   (every 100x60 row, BC1 64^3, mipmapped 16x16 u8), not where it starts after whole
///   tiles (every recorded mipmapped 1024x1024 and 64^3 has flags 0, layered or not).
///   A layered array all of whose levels are in the tail is not recorded.
fn sparse_properties(
    levels: &[&CudaArray],
    desc: &CUDA_ARRAY3D_DESCRIPTOR,
) -> ArraySparseProperties {
    let element = levels.first().map_or(1, |a| a.format.texel_bytes()).max(1);
    let n = 16u32.saturating_sub(element.ilog2());
    let volume = desc.depth != 0 && desc.flags & (LAYERED | CUBEMAP) == 0;
    let tile = if volume {
        let w = n.div_ceil(3);
        let h = (n - w).div_ceil(2);
        [1u32 << w, 1 << h, 1 << (n - w - h)]
    } else {
        [1u32 << n.div_ceil(2), 1 << (n / 2), 1]
    };
    let smaller = |a: &CudaArray| {
        let [w, h, d] = a.extent();
        w < tile[0] as u64 || h < tile[1] as u64 || (volume && d < tile[2] as u64)
    };
    let blocks = levels.first().is_some_and(|a| a.packing == Packing::Blocks);
    let mut p = ArraySparseProperties {
        tile_extent: if blocks {
            [tile[0] * 4, tile[1] * 4, tile[2]]
        } else {
            tile
        },
        ..Default::default()
    };
    if let Some(first) = levels.iter().position(|a| smaller(a)) {
        let bytes: u64 = levels[first..]
            .iter()
            .map(|a| miptail_bytes(a, volume))
            .sum();
        p.miptail_first_level = first as u32;
        p.miptail_size = bytes.next_multiple_of(SPARSE_PAGE);
        p.flags = u32::from(first == 0);
    }
    p
}

/// The bytes one level takes in a sparse array's mip tail: rows of 64-byte multiples,
/// 8 rows at a time (the GOB of the GPU's block-linear layout), one slice a layer for a
/// 3D array and one layer's for a layered one (`sparse_properties`).
fn miptail_bytes(a: &CudaArray, volume: bool) -> u64 {
    let [_, rows, depth] = a.extent();
    let slices = if volume { depth } else { 1 };
    a.row_bytes().next_multiple_of(64) * rows.next_multiple_of(8) * slices
}

/// A texture or surface object's getter given a handle that is no live object: the H200
/// answers CUDA_ERROR_INVALID_VALUE (probe arrays, tex-get-*-crash, surf-get-*-crash).
fn no_object(kind: &str, h: u64) -> CuError {
    invalid(format!("{h:#x} is not a live {kind} object"))
}

/// A new array's texels, counted against the host budget, under a new handle.
fn new_array(
    st: &mut super::State,
    desc: CUDA_ARRAY3D_DESCRIPTOR,
    (format, packing): (Format, Packing),
    device: usize,
    mipmapped: Option<MipmappedArrayId>,
) -> CuResult<ArrayId> {
    let [w, h, d] = storage_extent(&desc, packing);
    let bytes = w
        .checked_mul(format.texel_bytes())
        .and_then(|r| r.checked_mul(h))
        .and_then(|r| r.checked_mul(d))
        .ok_or_else(|| out_of_memory("the array's size overflows"))?;
    st.vmm
        .backing
        .commit(bytes)
        .map_err(|why| host_limit(format!("a CUDA array of {bytes} bytes: {why}")))?;
    let Some(texels) = usize::try_from(bytes).ok().and_then(Texels::zeroed) else {
        st.vmm.backing.uncommit(bytes);
        return Err(out_of_memory(format!(
            "the host cannot give the {bytes} bytes of the CUDA array"
        )));
    };
    let t = &mut st.textures;
    t.next_array += 1;
    let h = ArrayId::from_handle(ARRAY_HANDLE_BASE + t.next_array * 0x100);
    t.arrays.insert(
        h,
        CudaArray {
            desc,
            format,
            packing,
            texels: Arc::new(texels),
            device,
            mipmapped,
        },
    );
    Ok(h)
}

/// A texture's images through a resource view (`check_view`): each level the view
/// selects (its first is the texture's level 0) as its format reads it, from its first
/// layer, 4 texels a block in width and height where block-compressed (a level's texel
/// extent is 4 times its blocks', also where the level is narrower than a block).
fn view_images(
    st: &super::State,
    r: &CUDA_RESOURCE_DESC,
    v: &CUDA_RESOURCE_VIEW_DESC,
) -> CuResult<(Image, Vec<Image>)> {
    view_images_checked(st, r, v, check_view)
}

/// `view_images` with the view checked by `check`.
fn view_images_checked(
    st: &super::State,
    r: &CUDA_RESOURCE_DESC,
    v: &CUDA_RESOURCE_VIEW_DESC,
    check: fn(&ViewedResource, &CUDA_RESOURCE_VIEW_DESC) -> CuResult<ViewShape>,
) -> CuResult<(Image, Vec<Image>)> {
    if r.flags != 0 {
        return Err(invalid("CUDA_RESOURCE_DESC's flags must be 0"));
    }
    let t = &st.textures;
    let (levels, mipmapped, desc) = match r.res_type {
        RESOURCE_ARRAY => {
            let a = t.resource_array(r.res[0])?;
            (vec![a], false, a.desc)
        }
        RESOURCE_MIPMAPPED_ARRAY => {
            let m = t.resource_mipmapped(r.res[0])?;
            let levels = m
                .levels
                .iter()
                .map(|a| t.array(*a))
                .collect::<CuResult<Vec<_>>>()?;
            (levels, true, m.desc)
        }
        RESOURCE_LINEAR | RESOURCE_PITCH2D => {
            return Err(invalid(
                "a resource view is for a CUDA array or mipmapped array, not linear memory",
            ))
        }
        t => return Err(invalid(format!("{t} is not a CUresourcetype"))),
    };
    let shape = check(
        &ViewedResource {
            desc,
            format: levels[0].format,
            mipmapped,
            levels: levels.len() as u32,
        },
        v,
    )?;
    // The levels the view names that the resource has; a first level past them reads
    // the last (the H200: levels 5..5 of 5 read level 4, probe views, view-bounds), a
    // later one is never reached.
    let held = (levels.len() as u32).saturating_sub(1);
    let (first, last) = shape.levels;
    let (first, last) = (first.min(held), last.min(held));
    let (fl, ll) = shape.layers;
    let scale = if shape.blocks.is_some() { 4 } else { 1 };
    let mut images = levels[first as usize..=last as usize]
        .iter()
        .map(|a| -> CuResult<Image> {
            let mut img = a.image(Reader::View)?;
            img.format = shape.format;
            img.width *= scale;
            img.height *= scale;
            // The layers a read reaches (`ptx::Image`'s views): a layered array's from
            // the first to the view's last that the array has, a cubemap array's to its
            // last (`TextureObject::cube_slice`); none where the first is past them (the
            // H200 took layers 4..4 of 4, reading 0: probe views, view-bounds).
            if img.layered {
                let end = if img.cubemap {
                    img.depth
                } else {
                    ll.saturating_add(1).min(img.depth)
                };
                img.depth = end.saturating_sub(fl);
            }
            img.storage = Storage::View {
                texels: a.texels.clone(),
                // Saturating: a first layer far past the array's (taken) reads nothing,
                // its depth being 0 then.
                origin: fl.saturating_mul(img.slice_pitch),
                blocks: shape.blocks,
                view_layers: Some(ll - fl + 1),
            };
            Ok(img)
        })
        .collect::<CuResult<Vec<_>>>()?;
    let first = images.remove(0);
    Ok((first, images))
}

impl Driver {
    /// A device attribute bounding an extent (0 where the profile lacks it: nothing fits).
    pub(super) fn device_maximum(&self, device: usize, attribute: i32) -> u64 {
        self.profile.devices[device]
            .attribute(attribute)
            .map_or(0, |v| v.max(0) as u64)
    }

    /// cuArray3DCreate (and cuArrayCreate, with depth 0 and no flags).
    pub fn array_create(&self, desc: CUDA_ARRAY3D_DESCRIPTOR) -> CuResult<ArrayId> {
        let mut st = self.state.lock();
        let device = st.contexts.require_current()?.1.device;
        let format = check_descriptor(&desc, |a| self.device_maximum(device, a), false)?;
        new_array(&mut st, desc, format, device, None)
    }

    /// cuMipmappedArrayCreate: `levels` clamped to [1, 1 + floor(log2(the largest
    /// dimension))] as cuda.h says (layers and faces not counted), each level an array
    /// of its own, all or none made.
    pub fn mipmapped_create(
        &self,
        desc: CUDA_ARRAY3D_DESCRIPTOR,
        levels: u32,
    ) -> CuResult<MipmappedArrayId> {
        let mut st = self.state.lock();
        let device = st.contexts.require_current()?.1.device;
        let format = check_descriptor(&desc, |a| self.device_maximum(device, a), true)?;
        let layers = desc.flags & (LAYERED | CUBEMAP) != 0;
        let largest = [desc.width, desc.height, if layers { 0 } else { desc.depth }]
            .into_iter()
            .max()
            .unwrap_or(1)
            .max(1);
        let most = usize::BITS - largest.leading_zeros();
        let levels = levels.clamp(1, most);
        let t = &mut st.textures;
        t.next_mipmapped += 1;
        let h = MipmappedArrayId::from_handle(MIPMAPPED_HANDLE_BASE + t.next_mipmapped * 0x100);
        let mut made = Vec::new();
        for l in 0..levels {
            // Halved (at least 1) where the dimension exists; layers and faces stay.
            let half = |n: usize| if n == 0 { 0 } else { (n >> l).max(1) };
            let level = CUDA_ARRAY3D_DESCRIPTOR {
                width: half(desc.width),
                height: half(desc.height),
                depth: if layers { desc.depth } else { half(desc.depth) },
                ..desc
            };
            match new_array(&mut st, level, format, device, Some(h)) {
                Ok(a) => made.push(a),
                Err(e) => {
                    for a in made {
                        let a = st.textures.arrays.remove(&a).expect("made above");
                        st.vmm.backing.uncommit(a.bytes());
                    }
                    return Err(e);
                }
            }
        }
        st.textures
            .mipmapped
            .insert(h, MipmappedArray { desc, levels: made });
        Ok(h)
    }

    /// cuMipmappedArrayGetLevel.
    pub fn mipmapped_level(&self, h: MipmappedArrayId, level: u32) -> CuResult<ArrayId> {
        let st = self.state.lock();
        let m = st.textures.mipmapped(h)?;
        m.levels.get(level as usize).copied().ok_or_else(|| {
            invalid(format!(
                "level {level}: the mipmapped array has {} levels",
                m.levels.len()
            ))
        })
    }

    /// cuMipmappedArrayDestroy: its levels' arrays with it.
    pub fn mipmapped_destroy(&self, h: MipmappedArrayId) -> CuResult<()> {
        let mut st = self.state.lock();
        st.textures.mipmapped(h)?;
        let m = st.textures.mipmapped.remove(&h).expect("checked above");
        // A level cuArrayDestroy destroyed already is gone.
        for a in m.levels {
            if let Some(level) = st.textures.arrays.remove(&a) {
                st.vmm.backing.uncommit(level.bytes());
                st.texture_references
                    .forget_binding(super::texture_references::Binding::Array(a));
            }
        }
        st.texture_references
            .forget_binding(super::texture_references::Binding::Mipmapped(h));
        Ok(())
    }

    /// The arrays an array handle or a mipmapped array's handle names (its levels), the
    /// descriptor it was made with.
    fn array_levels(
        t: &Textures,
        h: AnyArray,
    ) -> CuResult<(Vec<&CudaArray>, CUDA_ARRAY3D_DESCRIPTOR)> {
        Ok(match h {
            AnyArray::Array(a) => {
                let a = t.array(a)?;
                (vec![a], a.desc)
            }
            AnyArray::Mipmapped(m) => {
                let m = t.mipmapped(m)?;
                // A level cuArrayDestroy destroyed is left out.
                let levels = m.levels.iter().filter_map(|a| t.array(*a).ok()).collect();
                (levels, m.desc)
            }
        })
    }

    /// cuArrayGetMemoryRequirements and cuMipmappedArrayGetMemoryRequirements: for an
    /// array made with CUDA_ARRAY3D_DEFERRED_MAPPING, its bytes (all levels') in whole
    /// 64 KiB pages, aligned to 64 KiB, as the H200 answered (probe arrays,
    /// sparse-deferred: 1024x1024 float, 4 MiB; mipmapped: 3 levels from 16x16 u8, 64
    /// KiB); CUDA_ERROR_INVALID_VALUE for other arrays, as cuda.h says, and for a device
    /// past the count (requirements-planes).
    pub fn array_memory_requirements(
        &self,
        h: AnyArray,
        device: i32,
    ) -> CuResult<ArrayMemoryRequirements> {
        let st = self.state.lock();
        let (levels, desc) = Self::array_levels(&st.textures, h)?;
        if usize::try_from(device).map_or(true, |d| d >= self.profile.devices.len()) {
            return Err(invalid(format!("{device} is not a device ordinal")));
        }
        if desc.flags & DEFERRED_MAPPING == 0 {
            return Err(invalid(
                "the array was not created with CUDA_ARRAY3D_DEFERRED_MAPPING",
            ));
        }
        let bytes: u64 = levels.iter().map(|a| a.bytes()).sum();
        Ok(ArrayMemoryRequirements {
            size: bytes.next_multiple_of(SPARSE_PAGE) as usize,
            alignment: SPARSE_PAGE as usize,
            reserved: [0; 4],
        })
    }

    /// cuArrayGetSparseProperties and cuMipmappedArrayGetSparseProperties: for an array
    /// made with CUDA_ARRAY3D_SPARSE (`sparse_properties`); CUDA_ERROR_INVALID_VALUE for
    /// other arrays, as cuda.h says.
    pub fn array_sparse_properties(&self, h: AnyArray) -> CuResult<ArraySparseProperties> {
        let st = self.state.lock();
        let (levels, desc) = Self::array_levels(&st.textures, h)?;
        if desc.flags & SPARSE == 0 {
            return Err(invalid(
                "the array was not created with CUDA_ARRAY3D_SPARSE",
            ));
        }
        Ok(sparse_properties(&levels, &desc))
    }

    /// cuArrayGetPlane: only an array of a planar format has planes, and the H200 makes
    /// none (probe arrays, requirements-planes: NV12, P010, NV16, Y444_PLANAR8 and
    /// YUV444_8bit_SemiPlanar refused with every NumChannels), so every live array is
    /// refused, as the H200 refused planes 0 and 1 of a float array.
    pub fn array_plane(&self, h: ArrayId, plane: u32) -> CuResult<ArrayId> {
        let st = self.state.lock();
        let a = st.textures.array(h)?;
        Err(invalid(format!(
            "plane {plane}: the array (CUarray_format {:#x}) is not of a planar format",
            a.desc.format
        )))
    }

    pub fn array_descriptor(&self, h: ArrayId) -> CuResult<CUDA_ARRAY3D_DESCRIPTOR> {
        Ok(self.state.lock().textures.array(h)?.desc)
    }

    /// cuArrayDestroy: its bytes go back to the host once no texture or surface object
    /// (nor a kernel using one) holds them. A mipmapped array's level is destroyed too,
    /// as the H200 did (probe arrays, array-destroy-level-crash), and its mipmapped
    /// array's destroy then succeeds; the level is gone from it (a texture over it is
    /// refused, its handle from cuMipmappedArrayGetLevel is no array).
    pub fn array_destroy(&self, h: ArrayId) -> CuResult<()> {
        let mut st = self.state.lock();
        st.textures.array(h)?;
        let a = st.textures.arrays.remove(&h).expect("checked above");
        st.vmm.backing.uncommit(a.bytes());
        st.texture_references
            .forget_binding(super::texture_references::Binding::Array(h));
        Ok(())
    }

    /// cuTexObjectCreate.
    pub fn texture_create(
        &self,
        resource: CUDA_RESOURCE_DESC,
        texture: CUDA_TEXTURE_DESC,
        view: Option<CUDA_RESOURCE_VIEW_DESC>,
    ) -> CuResult<u64> {
        let mut st = self.state.lock();
        let device = st.contexts.require_current()?.1.device;
        let object = Arc::new(self.texture_from_descriptors(
            &st,
            device,
            &resource,
            &texture,
            view.as_ref(),
        )?);
        // The H200 refuses CU_TRSF_SEAMLESS_CUBEMAP over an array, linear and pitch2D
        // memory, taking it over a cubemap (probe arrays, tex-desc-fields).
        if texture.flags & TRSF_SEAMLESS_CUBEMAP != 0 && !object.image.cubemap {
            return Err(invalid(
                "CU_TRSF_SEAMLESS_CUBEMAP is for a cubemap resource: this one is none",
            ));
        }
        let h = st.textures.next_handle();
        Arc::make_mut(&mut st.textures.bound)
            .textures
            .insert(h, object.clone());
        st.textures.textures.insert(
            h,
            TextureEntry {
                object,
                resource,
                texture,
                view,
            },
        );
        Ok(h)
    }

    /// Whether a view's one fault is its format NONE: the H200 has written 0 to the
    /// object when it refuses that (probe arrays, tex-views), not for the view's other
    /// faults.
    pub fn view_faults_only_in_format(
        &self,
        resource: &CUDA_RESOURCE_DESC,
        view: &CUDA_RESOURCE_VIEW_DESC,
    ) -> bool {
        let st = self.state.lock();
        view.format == 0
            && view_images_checked(&st, resource, view, check_view_but_format_none).is_ok()
    }

    /// What a texture reads through the descriptors cuTexObjectCreate takes (a texture
    /// reference's state is put in the same terms: `texture_references`).
    pub(super) fn texture_from_descriptors(
        &self,
        st: &super::State,
        device: usize,
        resource: &CUDA_RESOURCE_DESC,
        texture: &CUDA_TEXTURE_DESC,
        view: Option<&CUDA_RESOURCE_VIEW_DESC>,
    ) -> CuResult<ptx::TextureObject> {
        // The H200 ignores a view of linear memory (probe arrays, tex-views).
        let view =
            view.filter(|_| !matches!(resource.res_type, RESOURCE_LINEAR | RESOURCE_PITCH2D));
        let (image, levels) = match view {
            None => self.resource_images(st, device, resource)?,
            Some(v) => view_images(st, resource, v)?,
        };
        // Only the address modes of the resource's dimensions are checked: the H200 takes
        // addressMode[2] 7 for a 2D array (probe arrays, tex-array).
        let t = &st.textures;
        let desc = match resource.res_type {
            RESOURCE_ARRAY => t
                .array(ArrayId::from_handle(resource.res[0]))
                .map(|a| a.desc),
            _ => t
                .mipmapped(MipmappedArrayId::from_handle(resource.res[0]))
                .map(|m| m.desc),
        };
        let dimensions = match (resource.res_type, &desc) {
            (RESOURCE_LINEAR, _) => 1,
            (RESOURCE_PITCH2D, _) => 2,
            (_, Ok(d)) if d.flags & CUBEMAP != 0 => 3,
            (_, Ok(d)) if d.height == 0 => 1,
            (_, Ok(d)) if d.depth == 0 || d.flags & LAYERED != 0 => 2,
            _ => 3,
        };
        // A mode past the resource's dimensions is kept where valid: a 1D texture filters
        // as 2D of height 1, and its second mode is what it reads above the row
        // (clients/runtime/texture_probe.cu, section 3, border).
        let mut address = [AddressMode::Wrap; 3];
        for (k, (slot, mode)) in address.iter_mut().zip(texture.address_mode).enumerate() {
            *slot = match mode {
                0 => AddressMode::Wrap,
                1 => AddressMode::Clamp,
                2 => AddressMode::Mirror,
                3 => AddressMode::Border,
                m if k < dimensions => return Err(invalid(format!("{m} is not a CUaddress_mode"))),
                _ => AddressMode::Wrap,
            };
        }
        let linear = match texture.filter_mode {
            0 => false,
            1 => true,
            m => return Err(invalid(format!("{m} is not a CUfilter_mode"))),
        };
        // cuda.h's CU_TRSF_* flags; the H200 refuses another (probe arrays, tex-array:
        // 0x80).
        let known = TRSF_READ_AS_INTEGER
            | TRSF_NORMALIZED_COORDINATES
            | TRSF_SRGB
            | TRSF_DISABLE_TRILINEAR_OPTIMIZATION
            | TRSF_SEAMLESS_CUBEMAP;
        if texture.flags & !known != 0 {
            return Err(invalid(format!(
                "texture flags {:#x}: cuda.h names no flag {:#x}",
                texture.flags,
                texture.flags & !known
            )));
        }
        let mipmap_linear = match texture.mipmap_filter_mode {
            0 => false,
            1 => true,
            m => {
                return Err(invalid(format!(
                    "{m} is not a CUfilter_mode (mipmapFilterMode)"
                )))
            }
        };
        let mut sampler = Sampler {
            address,
            linear,
            normalized_coords: texture.flags & TRSF_NORMALIZED_COORDINATES != 0,
            read_normalized: texture.flags & TRSF_READ_AS_INTEGER == 0,
            border: texture.border_color,
            mipmap: MipmapSampler {
                linear: mipmap_linear,
                bias: texture.mipmap_level_bias,
                min_clamp: texture.min_mipmap_level_clamp,
                max_clamp: texture.max_mipmap_level_clamp,
                max_anisotropy: texture.max_anisotropy,
            },
            seamless_cubemap: texture.flags & TRSF_SEAMLESS_CUBEMAP != 0,
            srgb: texture.flags & TRSF_SRGB != 0,
        };
        if let (None, Ok(d)) = (view, &desc) {
            if srgb_format(d.format) && !sampler.srgb {
                return Err(invalid(format!(
                    "CUarray_format {:#x} is sRGB-encoded: a texture reads it with CU_TRSF_SRGB",
                    d.format
                )));
            }
            // The H200 read the UNORM/SNORM formats' integers as normalized floats with
            // flags 0 and with CU_TRSF_READ_AS_INTEGER (probe texel_formats, norm-arrays);
            // a mipmapped array's levels have its format.
            if normalized_format(d.format) {
                sampler.read_normalized = true;
            }
        }
        Ok(ptx::TextureObject {
            image,
            sampler,
            levels,
        })
    }

    /// cuSurfObjectCreate over a CUDA array. cuda.h says the array "must have been
    /// created with CUDA_ARRAY3D_SURFACE_LDST", but the H200 (driver 580.159.04, through
    /// NVIDIA's runtime: clients/runtime/texture_probe.cu) creates the object over an
    /// array without that flag too, so the flag is not required here either.
    pub fn surface_create(&self, resource: CUDA_RESOURCE_DESC) -> CuResult<u64> {
        let mut st = self.state.lock();
        let device = st.contexts.require_current()?.1.device;
        if resource.res_type != RESOURCE_ARRAY {
            return Err(invalid(
                "a surface object's resource is a CUDA array (CU_RESOURCE_TYPE_ARRAY)",
            ));
        }
        let h = st.textures.next_handle();
        let object = Arc::new(self.surface_from_resource(&st, device, &resource)?);
        Arc::make_mut(&mut st.textures.bound)
            .surfaces
            .insert(h, object.clone());
        st.textures
            .surfaces
            .insert(h, SurfaceEntry { object, resource });
        Ok(h)
    }

    /// What a surface reads and writes through the resource cuSurfObjectCreate takes.
    pub(super) fn surface_from_resource(
        &self,
        st: &super::State,
        device: usize,
        resource: &CUDA_RESOURCE_DESC,
    ) -> CuResult<ptx::SurfaceObject> {
        Ok(ptx::SurfaceObject {
            image: self.resource_image(st, device, resource, Reader::Surface)?,
        })
    }

    /// cuTexObjectDestroy: the launches queued before keep the object (`BoundObjects`).
    /// A handle that is no live object (0, destroyed, never given out) is CUDA_SUCCESS
    /// with nothing done, as on the H200 (probe arrays, tex-destroy-*-crash).
    pub fn texture_destroy(&self, h: u64) -> CuResult<()> {
        let mut st = self.state.lock();
        if st.textures.textures.remove(&h).is_some() {
            Arc::make_mut(&mut st.textures.bound).textures.remove(&h);
        }
        Ok(())
    }

    /// cuSurfObjectDestroy: the launches queued before keep the object; a handle that is
    /// no live object is CUDA_SUCCESS, as on the H200 (probe arrays, surf-destroy-*-crash).
    pub fn surface_destroy(&self, h: u64) -> CuResult<()> {
        let mut st = self.state.lock();
        if st.textures.surfaces.remove(&h).is_some() {
            Arc::make_mut(&mut st.textures.bound).surfaces.remove(&h);
        }
        Ok(())
    }

    /// The texture and surface objects live now, for a launch being queued.
    pub fn bound_objects(&self) -> Arc<BoundObjects> {
        self.state.lock().textures.bound.clone()
    }

    /// What cuTexObjectGetResourceDesc and cuTexObjectGetTextureDesc return: the
    /// descriptors the object was created with.
    pub fn texture_descriptors(&self, h: u64) -> CuResult<(CUDA_RESOURCE_DESC, CUDA_TEXTURE_DESC)> {
        let st = self.state.lock();
        let t = st
            .textures
            .texture(h)
            .ok_or_else(|| no_object("texture", h))?;
        Ok((t.resource, t.texture))
    }

    /// What cuTexObjectGetResourceViewDesc returns: the view the object was made with, as
    /// given, or None.
    pub fn texture_view(&self, h: u64) -> CuResult<Option<CUDA_RESOURCE_VIEW_DESC>> {
        let st = self.state.lock();
        let t = st
            .textures
            .texture(h)
            .ok_or_else(|| no_object("texture", h))?;
        Ok(t.view)
    }

    pub fn surface_resource(&self, h: u64) -> CuResult<CUDA_RESOURCE_DESC> {
        let st = self.state.lock();
        st.textures
            .surface(h)
            .map(|s| s.resource)
            .ok_or_else(|| no_object("surface", h))
    }

    /// The objects a kernel names that were not live at its launch (`launch::KernelMemory`).
    pub fn texture_object(&self, h: u64) -> Option<Arc<ptx::TextureObject>> {
        self.state
            .lock()
            .textures
            .texture(h)
            .map(|t| t.object.clone())
    }

    pub fn surface_object(&self, h: u64) -> Option<Arc<ptx::SurfaceObject>> {
        self.state
            .lock()
            .textures
            .surface(h)
            .map(|s| s.object.clone())
    }

    /// A texture's images: the resource's, and a mipmapped array's levels past the first.
    fn resource_images(
        &self,
        st: &super::State,
        device: usize,
        r: &CUDA_RESOURCE_DESC,
    ) -> CuResult<(Image, Vec<Image>)> {
        if r.res_type != RESOURCE_MIPMAPPED_ARRAY || r.flags != 0 {
            return Ok((
                self.resource_image(st, device, r, Reader::Texture)?,
                Vec::new(),
            ));
        }
        let m = st.textures.resource_mipmapped(r.res[0])?;
        let mut images = m
            .levels
            .iter()
            .map(|a| st.textures.array(*a)?.image(Reader::Texture))
            .collect::<CuResult<Vec<_>>>()?;
        let first = images.remove(0);
        Ok((first, images))
    }

    fn resource_image(
        &self,
        st: &super::State,
        device: usize,
        r: &CUDA_RESOURCE_DESC,
        reader: Reader,
    ) -> CuResult<Image> {
        if r.flags != 0 {
            return Err(invalid("CUDA_RESOURCE_DESC's flags must be 0"));
        }
        let attr = |code| {
            self.profile.devices[device]
                .attribute(code)
                .unwrap_or(0)
                .max(1) as u64
        };
        let word_halves = |w: u64| (w as u32 as i32, (w >> 32) as u32);
        match r.res_type {
            RESOURCE_ARRAY => st.textures.resource_array(r.res[0])?.image(reader),
            RESOURCE_MIPMAPPED_ARRAY => Err(invalid(
                "a surface's resource is a CUDA array, not a mipmapped array",
            )),
            RESOURCE_LINEAR | RESOURCE_PITCH2D => {
                let base = r.res[0];
                let (fmt, channels) = word_halves(r.res[1]);
                let format = channel_format(fmt, channels)?;
                // cuda.h: devPtr "must be ... aligned to CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT".
                let align = attr(ATTR_TEXTURE_ALIGNMENT);
                if base == 0 || !base.is_multiple_of(align) {
                    return Err(invalid(format!(
                        "devPtr {base:#x} is NULL or not aligned to the texture alignment \
                         ({align} bytes)"
                    )));
                }
                // The H200 (probe arrays, tex-linear, tex-pitch2d) checks the extent against
                // the maxima only: it makes textures of no element, pitches under a row,
                // and extents past the allocation (a read there faults as a load would).
                let tb = format.texel_bytes();
                let (width, height, pitch) = if r.res_type == RESOURCE_LINEAR {
                    let size = r.res[2];
                    let most = linear_max_width(tb);
                    if size / tb > most {
                        return Err(invalid(format!(
                            "sizeInBytes {size}: more than the {most} elements a linear texture \
                             of {tb}-byte elements holds"
                        )));
                    }
                    (size / tb, 1, size)
                } else {
                    let (w, h, p) = (r.res[2], r.res[3], r.res[4]);
                    let pa = attr(ATTR_TEXTURE_PITCH_ALIGNMENT);
                    if !p.is_multiple_of(pa) {
                        return Err(invalid(format!(
                            "pitchInBytes {p} is not a multiple of the texture pitch alignment \
                             ({pa} bytes)"
                        )));
                    }
                    let max = |a| self.device_maximum(device, a);
                    let (mw, mh, mp) = (
                        max(TEXTURE2D_LINEAR_WIDTH),
                        max(TEXTURE2D_LINEAR_HEIGHT),
                        max(TEXTURE2D_LINEAR_PITCH),
                    );
                    if w > mw || h > mh || p > mp {
                        return Err(invalid(format!(
                            "pitch2D {w}x{h}, pitch {p}: past the device's maxima ({mw}x{mh}, \
                             pitch {mp})"
                        )));
                    }
                    (w, h, p)
                };
                Ok(Image {
                    format,
                    width,
                    height,
                    depth: 1,
                    layered: false,
                    cubemap: false,
                    // Linear memory has no height to report (txq.height 0 on the H200).
                    extent_as_made: [
                        width,
                        if r.res_type == RESOURCE_LINEAR {
                            0
                        } else {
                            height
                        },
                        0,
                    ],
                    row_pitch: pitch,
                    slice_pitch: pitch * height,
                    storage: Storage::Device(base),
                })
            }
            t => Err(invalid(format!("{t} is not a CUresourcetype"))),
        }
    }

    /// Copies `width` bytes x `height` rows x `depth` slices between arrays and linear
    /// memory (cuMemcpy2D/3D with an array side, cuMemcpyHtoA and friends as one row):
    /// every side checked whole first, then row by row through a buffer.
    ///
    /// # Safety
    /// Host sides are valid for their extent, as cuda.h requires of the program.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn copy_volume(
        &self,
        dst: &Volume,
        dst_at: [u64; 3],
        src: &Volume,
        src_at: [u64; 3],
        extent: [u64; 3],
    ) -> CuResult<()> {
        let (dst_texels, src_texels) = self.check_copy_volume(dst, dst_at, src, src_at, extent)?;
        // Safety: this function's contract; the extent was checked.
        unsafe {
            self.copy_volume_rows(
                None,
                (dst, dst_texels.as_deref(), dst_at),
                (src, src_texels.as_deref(), src_at),
                extent,
            )
        }
    }

    /// What a copy between volumes would be refused for (checked whole before any row
    /// moves, and when an async copy is issued); the arrays' texels.
    #[allow(clippy::type_complexity)]
    pub fn check_copy_volume(
        &self,
        dst: &Volume,
        dst_at: [u64; 3],
        src: &Volume,
        src_at: [u64; 3],
        extent: [u64; 3],
    ) -> CuResult<(Option<Arc<Texels>>, Option<Arc<Texels>>)> {
        let [w, h, d] = extent;
        if w == 0 || h == 0 || d == 0 {
            return Ok((None, None));
        }
        let dst_texels = self.check_volume(dst, dst_at, extent, Need::Write, "destination")?;
        let src_texels = self.check_volume(src, src_at, extent, Need::Read, "source")?;
        Ok((dst_texels, src_texels))
    }

    /// Moves a checked copy's rows: with the current context's device's rights (`on`
    /// None: a synchronous copy), or `on` a device's (a copy queued on a stream, run by
    /// its worker). Each side: the volume, its texels if an array, where the copy starts.
    ///
    /// # Safety
    /// As `copy_volume`'s; the extent was checked (`check_copy_volume`).
    pub unsafe fn copy_volume_rows(
        &self,
        on: Option<usize>,
        dst: (&Volume, Option<&Texels>, [u64; 3]),
        src: (&Volume, Option<&Texels>, [u64; 3]),
        extent: [u64; 3],
    ) -> CuResult<()> {
        let [w, h, d] = extent;
        if w == 0 || h == 0 || d == 0 {
            return Ok(());
        }
        let mut row = vec![0u8; w as usize];
        for z in 0..d {
            for y in 0..h {
                let at = |o: [u64; 3]| [o[0], o[1] + y, o[2] + z];
                // Safety: this function's contract, for the rows of the checked extent.
                unsafe {
                    self.volume_row(on, src.0, src.1, at(src.2), &mut row, false)?;
                    self.volume_row(on, dst.0, dst.1, at(dst.2), &mut row, true)?;
                }
            }
        }
        Ok(())
    }

    /// Checks that a side holds the copy's extent; an array's texels.
    fn check_volume(
        &self,
        v: &Volume,
        at: [u64; 3],
        extent: [u64; 3],
        need: Need,
        which: &str,
    ) -> CuResult<Option<Arc<Texels>>> {
        match v {
            Volume::Array(h) => {
                let st = self.state.lock();
                let a = st.textures.array(*h)?;
                let [_, ah, ad] = a.extent();
                let fits = |o: u64, n: u64, lim: u64| o.checked_add(n).is_some_and(|e| e <= lim);
                if !fits(at[0], extent[0], a.row_bytes())
                    || !fits(at[1], extent[1], ah)
                    || !fits(at[2], extent[2], ad)
                {
                    return Err(invalid(format!(
                        "the {which} region ({}+{} bytes, row {}+{}, slice {}+{}) runs past the \
                         CUDA array ({} bytes x {ah} rows x {ad} slices)",
                        at[0],
                        extent[0],
                        at[1],
                        extent[1],
                        at[2],
                        extent[2],
                        a.row_bytes()
                    )));
                }
                Ok(Some(a.texels.clone()))
            }
            Volume::Linear {
                start,
                pitch,
                height,
            } => {
                let [w, h, d] = extent;
                let rows_pitch = (*height).max(1) * pitch;
                if (h > 1 || d > 1) && *pitch < w + at[0] {
                    return Err(invalid(format!(
                        "the {which} pitch {pitch} is less than the row's end ({} bytes)",
                        w + at[0]
                    )));
                }
                if d > 1 && *height < h + at[1] {
                    return Err(invalid(format!(
                        "the {which} height {height} is less than the rows copied"
                    )));
                }
                if let PlaneStart::Device(a) = start {
                    let first = at[2] * rows_pitch + at[1] * pitch + at[0];
                    let span = (d - 1) * rows_pitch + (h - 1) * pitch + w;
                    self.check_device_span(a + first, span, need)?;
                }
                Ok(None)
            }
        }
    }

    /// One row of a side, read into `row` or written from it.
    ///
    /// # Safety
    /// As `copy_volume`'s.
    unsafe fn volume_row(
        &self,
        on: Option<usize>,
        v: &Volume,
        texels: Option<&Texels>,
        at: [u64; 3],
        row: &mut [u8],
        write: bool,
    ) -> CuResult<()> {
        match (v, texels) {
            (Volume::Array(h), Some(t)) => {
                let st = self.state.lock();
                let a = st.textures.array(*h)?;
                let off = at[2] * a.row_bytes() * a.extent()[1] + at[1] * a.row_bytes() + at[0];
                drop(st);
                let ok = if write {
                    t.write(off, row)
                } else {
                    t.read(off, row)
                };
                ok.then_some(())
                    .ok_or_else(|| invalid("the copy runs past the CUDA array"))
            }
            (
                Volume::Linear {
                    start,
                    pitch,
                    height,
                },
                _,
            ) => {
                let off = at[2] * (*height).max(1) * pitch + at[1] * pitch + at[0];
                let len = row.len() as u64;
                let side = match start {
                    PlaneStart::Host(p) => {
                        let p = p.wrapping_add(off as usize);
                        // Safety: the row lies in the host side's extent (the contract).
                        HostOrDevice::Host(unsafe {
                            if write {
                                HostBytes::writable(p, row.len())
                            } else {
                                HostBytes::readable(p, row.len())
                            }
                        })
                    }
                    PlaneStart::Device(a) => HostOrDevice::Device(DevicePtr::new(a + off)),
                };
                let (to, from) = if write {
                    (side, HostOrDevice::Host(HostBytes::from_slice(row)))
                } else {
                    (HostOrDevice::Host(HostBytes::from_mut_slice(row)), side)
                };
                match on {
                    None => self.copy(to, from, len),
                    Some(device) => self.copy_on(device, to, from, len, false),
                }
            }
            (Volume::Array(_), None) => Err(invalid("the CUDA array is gone")),
        }
    }

    /// cuMemcpyHtoA/AtoH/DtoA/AtoD/AtoA: `count` bytes at a byte offset of the array's
    /// first row. The H200 (probe arrays, copies-linear) refuses a range past the first
    /// row of a 2D array (CUDA_ERROR_INVALID_VALUE: 256 bytes of a 16x4 u32 array, 64
    /// bytes at offset 64), and takes 0 bytes at any offset, past the end too.
    ///
    /// # Safety
    /// A host side is valid for `count` bytes.
    pub unsafe fn copy_array_bytes(
        &self,
        dst: &Volume,
        dst_offset: u64,
        src: &Volume,
        src_offset: u64,
        count: u64,
    ) -> CuResult<()> {
        for (v, off) in [(dst, dst_offset), (src, src_offset)] {
            if let Volume::Array(h) = v {
                let st = self.state.lock();
                let a = st.textures.array(*h)?;
                if count != 0 && off.checked_add(count).is_none_or(|e| e > a.row_bytes()) {
                    return Err(invalid(format!(
                        "{count} bytes at offset {off} run past the CUDA array's first row \
                         ({} bytes)",
                        a.row_bytes()
                    )));
                }
            }
        }
        if count == 0 {
            return Ok(());
        }
        // Safety: this function's contract.
        unsafe { self.copy_flat(dst, dst_offset, src, src_offset, count) }
    }

    /// A flat copy: arrays addressed by byte offset in their packed layout.
    ///
    /// # Safety
    /// As `copy_array_bytes`'s.
    unsafe fn copy_flat(
        &self,
        dst: &Volume,
        d_off: u64,
        src: &Volume,
        s_off: u64,
        count: u64,
    ) -> CuResult<()> {
        let mut buf = vec![0u8; count as usize];
        let texels = |v: &Volume| -> CuResult<Option<Arc<Texels>>> {
            match v {
                Volume::Array(h) => Ok(Some(self.state.lock().textures.array(*h)?.texels.clone())),
                _ => Ok(None),
            }
        };
        let (dt, stx) = (texels(dst)?, texels(src)?);
        if let Volume::Linear {
            start: PlaneStart::Device(a),
            ..
        } = dst
        {
            self.check_device_span(a + d_off, count, Need::Write)?;
        }
        if let Volume::Linear {
            start: PlaneStart::Device(a),
            ..
        } = src
        {
            self.check_device_span(a + s_off, count, Need::Read)?;
        }
        match &stx {
            Some(t) => {
                if !t.read(s_off, &mut buf) {
                    return Err(invalid("the copy runs past the CUDA array"));
                }
            }
            // Safety: this function's contract.
            None => unsafe { self.volume_row(None, src, None, [s_off, 0, 0], &mut buf, false)? },
        }
        match &dt {
            Some(t) => t
                .write(d_off, &buf)
                .then_some(())
                .ok_or_else(|| invalid("the copy runs past the CUDA array")),
            // Safety: this function's contract.
            None => unsafe { self.volume_row(None, dst, None, [d_off, 0, 0], &mut buf, true) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::profile::Profile;
    use cumock_abi::result::*;

    fn driver() -> Driver {
        let d = Driver::new(Profile::builtin_with_devices(1).unwrap());
        d.init(0).unwrap();
        let ctx = d.primary_retain(0).unwrap();
        d.ctx_set_current(Some(ctx)).unwrap();
        d
    }

    fn desc(w: usize, h: usize, depth: usize, flags: u32) -> CUDA_ARRAY3D_DESCRIPTOR {
        CUDA_ARRAY3D_DESCRIPTOR {
            width: w,
            height: h,
            depth,
            format: 0x20,
            num_channels: 1,
            flags,
        }
    }

    fn array_resource(h: u64) -> CUDA_RESOURCE_DESC {
        let mut r = CUDA_RESOURCE_DESC {
            res_type: RESOURCE_ARRAY,
            ..Default::default()
        };
        r.res[0] = h;
        r
    }

    fn texture_desc() -> CUDA_TEXTURE_DESC {
        CUDA_TEXTURE_DESC {
            address_mode: [1; 3],
            ..Default::default()
        }
    }

    #[test]
    fn arrays_count_against_the_host_budget_until_destroyed() {
        let d = driver();
        let before = d.state.lock().vmm.backing.committed();
        let h = d.array_create(desc(64, 32, 0, 0)).unwrap();
        assert_eq!(d.state.lock().vmm.backing.committed(), before + 64 * 32 * 4);
        assert_eq!(d.array_descriptor(h).unwrap().width, 64);
        d.array_destroy(h).unwrap();
        assert_eq!(d.state.lock().vmm.backing.committed(), before);
        assert_eq!(
            d.array_destroy(h).unwrap_err().code,
            CUDA_ERROR_INVALID_HANDLE
        );
        assert_eq!(
            d.array_destroy(ArrayId::default()).unwrap_err().code,
            CUDA_ERROR_INVALID_HANDLE
        );
        assert_eq!(
            d.array_descriptor(ArrayId::from_handle(0x1234))
                .unwrap_err()
                .code,
            CUDA_ERROR_INVALID_HANDLE
        );
    }

    #[test]
    fn unsupported_and_invalid_descriptors_are_refused() {
        let d = driver();
        let code = |r: CuResult<ArrayId>| r.unwrap_err().code;
        for (w, h, depth, flags) in [
            // cuda.h: a cubemap is Width == Height, Depth 6 (a multiple of 6 when layered).
            (4, 5, 6, CUBEMAP),
            (4, 4, 12, CUBEMAP),
            (4, 4, 9, CUBEMAP | LAYERED),
            (4, 4, 0, CUBEMAP | LAYERED),
            // The H200 (probe arrays): no sparse 1D array, no depth texture, gather 2D only.
            (4, 0, 0, SPARSE),
            (4, 4, 0, DEPTH_TEXTURE),
            (4, 4, 4, TEXTURE_GATHER),
            (0, 4, 0, 0),
            (4, 4, 0, LAYERED),
        ] {
            assert_eq!(
                code(d.array_create(desc(w, h, depth, flags))),
                CUDA_ERROR_INVALID_VALUE,
                "{w}x{h}x{depth} flags {flags:#x}"
            );
        }
        let mut three = desc(4, 4, 0, 0);
        three.num_channels = 3;
        assert_eq!(code(d.array_create(three)), CUDA_ERROR_INVALID_VALUE);
        let mut nv12 = desc(4, 4, 0, 0);
        nv12.format = 0xb0;
        assert_eq!(code(d.array_create(nv12)), CUDA_ERROR_INVALID_VALUE);
        // Within the maxima (16384^3) but past what the host backs.
        let huge = desc(16384, 16384, 16384, 0);
        assert_eq!(code(d.array_create(huge)), CUDA_ERROR_OUT_OF_MEMORY);
    }

    #[test]
    fn objects_check_their_resources_and_handles() {
        let d = driver();
        let plain = d.array_create(desc(8, 8, 0, 0)).unwrap();
        let ldst = d.array_create(desc(8, 8, 0, SURFACE_LDST)).unwrap();
        let t = d
            .texture_create(array_resource(plain.handle()), texture_desc(), None)
            .unwrap();
        assert!(d.texture_object(t).is_some());
        assert!(
            d.surface_object(t).is_none(),
            "a texture handle is no surface"
        );
        // As on the H200: the array needs no CUDA_ARRAY3D_SURFACE_LDST.
        let s_plain = d.surface_create(array_resource(plain.handle())).unwrap();
        d.surface_destroy(s_plain).unwrap();
        let s = d.surface_create(array_resource(ldst.handle())).unwrap();
        assert_ne!(s, t);
        let mut bad_mode = texture_desc();
        bad_mode.address_mode[1] = 9;
        assert_eq!(
            d.texture_create(array_resource(plain.handle()), bad_mode, None)
                .unwrap_err()
                .code,
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            d.texture_create(array_resource(0xdead), texture_desc(), None)
                .unwrap_err()
                .code,
            CUDA_ERROR_INVALID_HANDLE
        );
        let mut mip = array_resource(plain.handle());
        mip.res_type = RESOURCE_MIPMAPPED_ARRAY;
        assert_eq!(
            d.texture_create(mip, texture_desc(), None)
                .unwrap_err()
                .code,
            CUDA_ERROR_INVALID_HANDLE,
            "an array is no mipmapped array"
        );
        // An object keeps its texels after its array is gone.
        let obj = d.texture_object(t).unwrap();
        d.array_destroy(plain).unwrap();
        assert!(matches!(obj.image.storage, Storage::Array(ref x) if x.len() == 256));
        // A second destroy does nothing and succeeds, as on the H200.
        d.texture_destroy(t).unwrap();
        d.texture_destroy(t).unwrap();
        assert!(d.texture_object(t).is_none());
        d.surface_destroy(s).unwrap();
        d.surface_destroy(s).unwrap();
        assert!(d.surface_object(s).is_none());
    }

    #[test]
    fn copies_stay_inside_the_array() {
        let d = driver();
        let a = d.array_create(desc(4, 3, 0, 0)).unwrap();
        let src: Vec<u8> = (0..48).collect();
        let host = |p: &[u8]| Volume::Linear {
            start: PlaneStart::Host(p.as_ptr() as *mut u8),
            pitch: 16,
            height: 3,
        };
        // Safety: the host buffers hold the extents copied.
        unsafe {
            d.copy_volume(&Volume::Array(a), [0; 3], &host(&src), [0; 3], [16, 3, 1])
                .unwrap();
            let e = d
                .copy_volume(
                    &Volume::Array(a),
                    [4, 0, 0],
                    &host(&src),
                    [0; 3],
                    [16, 1, 1],
                )
                .unwrap_err();
            assert_eq!(e.code, CUDA_ERROR_INVALID_VALUE);
            // The byte copies reach the first row only (16 bytes here).
            let e = d
                .copy_array_bytes(&Volume::Array(a), 8, &host(&src), 0, 16)
                .unwrap_err();
            assert_eq!(e.code, CUDA_ERROR_INVALID_VALUE);
            let mut back = vec![0u8; 8];
            let into = Volume::Linear {
                start: PlaneStart::Host(back.as_mut_ptr()),
                pitch: 8,
                height: 1,
            };
            d.copy_array_bytes(&into, 0, &Volume::Array(a), 4, 8)
                .unwrap();
            assert_eq!(back, (4..12).collect::<Vec<u8>>());
        }
    }

    #[test]
    fn cubemaps_hold_their_faces_as_layers() {
        let d = driver();
        let one = d.array_create(desc(4, 4, 6, CUBEMAP)).unwrap();
        let two = d.array_create(desc(4, 4, 12, CUBEMAP | LAYERED)).unwrap();
        let t = d
            .texture_create(array_resource(one.handle()), texture_desc(), None)
            .unwrap();
        let obj = d.texture_object(t).unwrap();
        assert!(obj.image.cubemap && !obj.image.layered);
        assert_eq!((obj.image.width, obj.image.depth), (4, 6));
        let t2 = d
            .texture_create(array_resource(two.handle()), texture_desc(), None)
            .unwrap();
        let obj2 = d.texture_object(t2).unwrap();
        assert!(obj2.image.cubemap && obj2.image.layered);
        assert_eq!(obj2.image.depth, 12);
        // Faces are slices to copies: face 5 of cube 1 is slice 11.
        let face: Vec<u8> = (0..64).collect();
        let host = Volume::Linear {
            start: PlaneStart::Host(face.as_ptr() as *mut u8),
            pitch: 16,
            height: 4,
        };
        // Safety: the host buffer holds the extent copied.
        unsafe {
            d.copy_volume(&Volume::Array(two), [0, 0, 11], &host, [0; 3], [16, 4, 1])
                .unwrap();
            assert!(d
                .copy_volume(&Volume::Array(two), [0, 0, 12], &host, [0; 3], [16, 4, 1])
                .is_err());
        }
        let Storage::Array(texels) = &obj2.image.storage else {
            panic!("an array's texels")
        };
        let mut back = [0u8; 64];
        assert!(texels.read(11 * 64, &mut back));
        assert_eq!(back.to_vec(), face);
    }

    #[test]
    fn mipmapped_arrays_halve_each_level_and_go_whole() {
        let d = driver();
        let before = d.state.lock().vmm.backing.committed();
        // 10 x 6: levels 10x6, 5x3, 2x1, 1x1 (1 + floor(log2 10) = 4); 9 asked, 4 made.
        let m = d.mipmapped_create(desc(10, 6, 0, 0), 9).unwrap();
        let sizes: Vec<(usize, usize)> = (0..4)
            .map(|l| {
                let a = d.mipmapped_level(m, l).unwrap();
                let x = d.array_descriptor(a).unwrap();
                (x.width, x.height)
            })
            .collect();
        assert_eq!(sizes, [(10, 6), (5, 3), (2, 1), (1, 1)]);
        let bytes = 4 * (60 + 15 + 2 + 1);
        assert_eq!(d.state.lock().vmm.backing.committed(), before + bytes);
        assert_eq!(
            d.mipmapped_level(m, 4).unwrap_err().code,
            CUDA_ERROR_INVALID_VALUE
        );
        // A level may be destroyed alone, as on the H200; its bytes go back then, and
        // its mipmapped array's destroy still succeeds.
        let other = d.mipmapped_create(desc(10, 6, 0, 0), 2).unwrap();
        let l1 = d.mipmapped_level(other, 1).unwrap();
        d.array_destroy(l1).unwrap();
        assert_eq!(
            d.state.lock().vmm.backing.committed(),
            before + bytes + 4 * 60
        );
        d.mipmapped_destroy(other).unwrap();
        assert_eq!(d.state.lock().vmm.backing.committed(), before + bytes);
        // Zero levels is one; a cubemap keeps its faces on every level.
        let z = d.mipmapped_create(desc(8, 8, 0, 0), 0).unwrap();
        assert!(d.mipmapped_level(z, 0).is_ok() && d.mipmapped_level(z, 1).is_err());
        let c = d.mipmapped_create(desc(8, 8, 6, CUBEMAP), 4).unwrap();
        let c3 = d
            .array_descriptor(d.mipmapped_level(c, 3).unwrap())
            .unwrap();
        assert_eq!((c3.width, c3.height, c3.depth), (1, 1, 6));
        // A texture over it has every level, and its mipmap sampler.
        let mut r = array_resource(m.handle());
        r.res_type = RESOURCE_MIPMAPPED_ARRAY;
        let mut td = texture_desc();
        td.mipmap_filter_mode = 1;
        td.max_mipmap_level_clamp = 3.0;
        td.mipmap_level_bias = 0.25;
        td.max_anisotropy = 2;
        let t = d.texture_create(r, td, None).unwrap();
        let obj = d.texture_object(t).unwrap();
        assert_eq!(obj.levels.len(), 3);
        assert_eq!((obj.levels[0].width, obj.levels[0].height), (5, 3));
        assert!(obj.sampler.mipmap.linear);
        assert_eq!(obj.sampler.mipmap.max_clamp, 3.0);
        assert_eq!(obj.sampler.mipmap.bias, 0.25);
        assert_eq!(obj.sampler.mipmap.max_anisotropy, 2);
        td.mipmap_filter_mode = 7;
        assert_eq!(
            d.texture_create(r, td, None).unwrap_err().code,
            CUDA_ERROR_INVALID_VALUE
        );
        // Requirements and sparse properties: only for deferred-mapping and sparse
        // arrays (tests/arrays.rs has those).
        let l1 = d.mipmapped_level(m, 1).unwrap();
        assert_eq!(
            d.array_memory_requirements(AnyArray::Mipmapped(m), 0)
                .unwrap_err()
                .code,
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            d.array_memory_requirements(AnyArray::Array(ArrayId::from_handle(m.handle())), 0)
                .unwrap_err()
                .code,
            CUDA_ERROR_INVALID_HANDLE
        );
        assert_eq!(
            d.array_memory_requirements(AnyArray::Array(l1), 7)
                .unwrap_err()
                .code,
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            d.array_sparse_properties(AnyArray::Array(l1))
                .unwrap_err()
                .code,
            CUDA_ERROR_INVALID_VALUE
        );
        // Destroyed whole: its levels are gone, their bytes back, the object keeps its
        // texels.
        d.mipmapped_destroy(m).unwrap();
        assert_eq!(
            d.array_descriptor(l1).unwrap_err().code,
            CUDA_ERROR_INVALID_HANDLE
        );
        assert_eq!(
            d.mipmapped_destroy(m).unwrap_err().code,
            CUDA_ERROR_INVALID_HANDLE
        );
        d.mipmapped_destroy(z).unwrap();
        d.mipmapped_destroy(c).unwrap();
        assert_eq!(d.state.lock().vmm.backing.committed(), before);
        assert_eq!(obj.levels[2].width, 1);
    }

    #[test]
    fn views_are_checked_against_their_resource_as_cuda_h_says() {
        let u32x = |channels: u8, desc: CUDA_ARRAY3D_DESCRIPTOR, levels: u32| ViewedResource {
            desc: CUDA_ARRAY3D_DESCRIPTOR {
                format: 0x03,
                num_channels: channels as u32,
                ..desc
            },
            format: Format {
                kind: ChannelKind::Unsigned,
                bits: 32,
                channels,
            },
            mipmapped: levels > 1,
            levels,
        };
        let view = |format: i32, w: usize, h: usize, depth: usize| CUDA_RESOURCE_VIEW_DESC {
            format,
            width: w,
            height: h,
            depth,
            ..Default::default()
        };
        let code = |r: &ViewedResource, v: CUDA_RESOURCE_VIEW_DESC| {
            check_view(r, &v).map(|_| ()).map_err(|e| e.code)
        };
        let plain = u32x(2, desc(16, 8, 0, 0), 1);
        // NONE is refused, as on the H200; same-size formats reinterpret the array.
        assert_eq!(
            code(&plain, view(0, 16, 8, 0)),
            Err(CUDA_ERROR_INVALID_VALUE)
        );
        let halves = check_view(&plain, &view(0x15, 16, 8, 0)).unwrap();
        assert_eq!(halves.format.kind, ChannelKind::Float);
        assert_eq!(
            code(&plain, view(0x18, 16, 8, 0)),
            Err(CUDA_ERROR_INVALID_VALUE)
        );
        assert_eq!(
            code(&plain, view(0x23, 16, 8, 0)),
            Err(CUDA_ERROR_INVALID_VALUE)
        );
        // Block-compressed: 4 texels a block; BC1/BC4 over 2 channels, the others 4.
        let bc1 = check_view(&plain, &view(0x19, 64, 32, 0)).unwrap();
        assert_eq!(bc1.blocks, Some(BlockFormat::Bc1));
        assert_eq!(
            code(&plain, view(0x19, 16, 8, 0)),
            Err(CUDA_ERROR_INVALID_VALUE)
        );
        assert_eq!(
            code(&plain, view(0x1b, 64, 32, 0)),
            Err(CUDA_ERROR_INVALID_VALUE)
        );
        let four = u32x(4, desc(16, 8, 0, 0), 1);
        assert_eq!(code(&four, view(0x22, 64, 32, 0)), Ok(()));
        assert_eq!(
            code(&four, view(0x1c, 64, 32, 0)),
            Err(CUDA_ERROR_INVALID_VALUE)
        );
        // Levels and layers of a resource without them: 0 only.
        let mut v = view(0x0e, 16, 8, 0);
        v.last_mipmap_level = 1;
        assert_eq!(code(&plain, v), Err(CUDA_ERROR_INVALID_VALUE));
        let mut v = view(0x0e, 16, 8, 0);
        v.last_layer = 1;
        assert_eq!(code(&plain, v), Err(CUDA_ERROR_INVALID_VALUE));
        // A layered array's layers, first to last; its depth is its layer count.
        let layered = u32x(2, desc(16, 8, 5, LAYERED), 1);
        let mut v = view(0x0e, 16, 8, 5);
        (v.first_layer, v.last_layer) = (2, 4);
        assert_eq!(check_view(&layered, &v).unwrap().layers, (2, 4));
        (v.first_layer, v.last_layer) = (3, 2);
        assert_eq!(code(&layered, v), Err(CUDA_ERROR_INVALID_VALUE));
        v.depth = 4;
        (v.first_layer, v.last_layer) = (0, 0);
        assert_eq!(code(&layered, v), Err(CUDA_ERROR_INVALID_VALUE), "depth");
        // The last layer may lie past the array's (the H200: probe views, layer-views,
        // layers 3..4 of 4), and the first (view-bounds, 4..4 of 4; views-two-past, 5..5,
        // 6..6, 5..6 and 5..100 of 4); first after last stays refused.
        let mut v = view(0x0e, 16, 8, 5);
        for (first, last) in [(4, 5), (5, 5), (6, 6), (7, 7), (6, 7), (6, 100)] {
            (v.first_layer, v.last_layer) = (first, last);
            assert_eq!(
                check_view(&layered, &v).unwrap().layers,
                (first as u64, last as u64)
            );
        }
        (v.first_layer, v.last_layer) = (7, 6);
        assert_eq!(code(&layered, v), Err(CUDA_ERROR_INVALID_VALUE));
        // A layered cubemap's layers are faces, any subrange of them (the H200: probe
        // views, cubemap-views: 0..5, 6..11, 1..1, 0..0, 1..6 of 12).
        let cubes = u32x(2, desc(8, 8, 12, LAYERED | CUBEMAP), 1);
        let mut v = view(0x0e, 8, 8, 12);
        for (first, last) in [(0, 11), (0, 5), (6, 11), (1, 1), (0, 0), (1, 6)] {
            (v.first_layer, v.last_layer) = (first, last);
            assert_eq!(
                check_view(&cubes, &v).unwrap().layers,
                (first as u64, last as u64)
            );
        }
        v.depth = 6;
        (v.first_layer, v.last_layer) = (0, 5);
        assert_eq!(code(&cubes, v), Err(CUDA_ERROR_INVALID_VALUE), "depth");
        // Levels of a mipmapped array: the last may lie past them (the H200: probe
        // views, mip-level-views, 2..5 of 5), and the first (view-bounds, 5..5 of 5;
        // views-two-past, 6..6, 7..7, 5..6 and 6..100 of 5); first after last stays
        // refused.
        let mip = u32x(2, desc(16, 8, 0, 0), 5);
        let mut v = view(0x0e, 16, 8, 0);
        (v.first_mipmap_level, v.last_mipmap_level) = (1, 4);
        assert_eq!(check_view(&mip, &v).unwrap().levels, (1, 4));
        (v.first_mipmap_level, v.last_mipmap_level) = (2, 5);
        assert_eq!(check_view(&mip, &v).unwrap().levels, (2, 5));
        (v.first_mipmap_level, v.last_mipmap_level) = (5, 5);
        assert_eq!(check_view(&mip, &v).unwrap().levels, (5, 5));
        for (first, last) in [(6, 6), (7, 7), (5, 6), (6, 100)] {
            (v.first_mipmap_level, v.last_mipmap_level) = (first, last);
            assert_eq!(check_view(&mip, &v).unwrap().levels, (first, last));
        }
        (v.first_mipmap_level, v.last_mipmap_level) = (7, 6);
        assert_eq!(code(&mip, v), Err(CUDA_ERROR_INVALID_VALUE));
        // The first level's extent is refused: the view names the original resource's.
        let mut v = view(0x0e, 8, 4, 0);
        (v.first_mipmap_level, v.last_mipmap_level) = (1, 1);
        assert_eq!(code(&mip, v), Err(CUDA_ERROR_INVALID_VALUE));
    }

    /// The H200's probe texel_formats (norm-arrays, bc-arrays): textures over UNORM/SNORM
    /// arrays read normalized floats whatever the read mode, over BC arrays the decoded
    /// texels (alpha 1 where the format has none), which copy in as rows of blocks; an
    /// _SRGB BC format needs CU_TRSF_SRGB; surfaces over either are not emulated.
    #[test]
    fn textures_over_normalized_and_block_compressed_arrays() {
        let d = driver();
        let array = |w, h, format, channels| {
            d.array_create(CUDA_ARRAY3D_DESCRIPTOR {
                format,
                num_channels: channels,
                ..desc(w, h, 0, 0)
            })
            .unwrap()
        };
        let object = |h: ArrayId, flags: u32| {
            let t = CUDA_TEXTURE_DESC {
                flags,
                ..texture_desc()
            };
            let tex = d.texture_create(array_resource(h.handle()), t, None)?;
            Ok::<_, CuError>(d.texture_object(tex).unwrap())
        };
        let copy_in = |h: ArrayId, bytes: &mut [u8]| {
            let n = bytes.len() as u64;
            // Safety: the host side is `bytes`, one row of `n` bytes, as the copy says.
            unsafe {
                d.copy_volume(
                    &Volume::Array(h),
                    [0; 3],
                    &Volume::Linear {
                        start: PlaneStart::Host(bytes.as_mut_ptr()),
                        pitch: n,
                        height: 1,
                    },
                    [0; 3],
                    [n, 1, 1],
                )
            }
        };
        // SNORM_INT8X1: read normalized with flags 0 and with READ_AS_INTEGER.
        let snorm = array(2, 1, 0xc6, 1);
        copy_in(snorm, &mut [0x80, 0x7f]).unwrap();
        for flags in [0, TRSF_READ_AS_INTEGER] {
            let o = object(snorm, flags).unwrap();
            assert!(o.sampler.read_normalized, "flags {flags:#x}");
            assert_eq!(o.image.format.kind, ChannelKind::Signed);
        }
        // A surface over it moves its bytes, as the H200 made one over SNORM_INT16X2
        // (probe texel_formats, packed-and-surfaces).
        assert!(d.surface_create(array_resource(snorm.handle())).is_ok());
        // BC4_UNORM, 4 x 4: one 8-byte block, copied as a row of one block.
        let bc4 = array(4, 4, 0x97, 1);
        let mut block = [0xff, 0, 0, 0, 0, 0, 0, 0];
        copy_in(bc4, &mut block).unwrap();
        let o = object(bc4, TRSF_READ_AS_INTEGER).unwrap();
        assert_eq!((o.image.width, o.image.height), (4, 4));
        assert_eq!(o.image.format.kind, ChannelKind::Float);
        let Storage::View {
            texels,
            blocks: Some(b),
            view_layers: None,
            ..
        } = &o.image.storage
        else {
            panic!("{:?}", o.image.storage)
        };
        let mut stored = [0u8; 8];
        assert!(texels.read(0, &mut stored));
        assert_eq!(stored, block);
        assert_eq!(b.decode(&stored, 3, 3)[0], 1f32.to_bits());
        // A row of two blocks runs past the array's one.
        assert_eq!(
            copy_in(bc4, &mut [0; 16]).unwrap_err().code,
            CUDA_ERROR_INVALID_VALUE
        );
        let srgb = array(4, 4, 0x92, 4);
        assert_eq!(object(srgb, 0).unwrap_err().code, CUDA_ERROR_INVALID_VALUE);
        assert!(object(srgb, TRSF_SRGB).is_ok());
    }

    #[test]
    fn a_texture_keeps_its_view_and_reads_through_it() {
        let d = driver();
        let a = d.array_create(desc(4, 4, 3, LAYERED)).unwrap();
        let v = CUDA_RESOURCE_VIEW_DESC {
            format: 0x0d,
            width: 4,
            height: 4,
            depth: 3,
            first_layer: 1,
            last_layer: 2,
            ..Default::default()
        };
        let t = d
            .texture_create(array_resource(a.handle()), texture_desc(), Some(v))
            .unwrap();
        assert_eq!(d.texture_view(t).unwrap(), Some(v));
        let obj = d.texture_object(t).unwrap();
        assert_eq!(obj.image.depth, 2);
        assert_eq!(obj.image.format.kind, ChannelKind::Unsigned);
        assert!(matches!(
            obj.image.storage,
            Storage::View { origin: 64, .. }
        ));
        let plain = d
            .texture_create(array_resource(a.handle()), texture_desc(), None)
            .unwrap();
        assert_eq!(d.texture_view(plain).unwrap(), None);
    }
}
