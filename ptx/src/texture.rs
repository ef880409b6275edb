//! Textures and surfaces as a kernel sees them: the image (CUDA array or linear device
//! memory) and the sampler a texture or surface object names, and the sampling
//! arithmetic of `tex` and `tld4` (addressing, point and linear filtering, read modes).
//!
//! The driver owns the objects; the executor reaches them only through
//! [`crate::Memory::texture`] and [`crate::Memory::surface`], by the 64-bit handle a
//! kernel holds, so a bogus handle is a fault, never a dereference.
//!
//! The arithmetic is the H200's, as recorded by clients/runtime/texture_probe.cu and
//! simple_texture.cu (goldens in clients/runtime/goldens/NVIDIA_H200-580.159.04/): the
//! CUDA programming guide's "Texture Fetching" appendix gives linear filtering's weights
//! 8 fractional bits; the recordings show how the coordinate is rounded to them, how the
//! weights of 2 and 3 dimensions are formed (each corner's weight is itself a multiple of
//! 1/256), that the weighted sum is rounded once, that a 1D texture filters as a 2D one
//! of height 1 sampled at y = 0, and what absent channels, layers past the ends and
//! linear memory past its end read. What is not recorded is marked where it is chosen.

use std::cell::Cell;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use crate::math::f16_to_f32;
use crate::{Access, HostSpan, Memory};

mod bc;

/// The launch's memory as one warp instruction's texel reads and writes reach it: the
/// span translated last is kept, and an access inside it (writable, for a write) uses
/// it again. A span stays valid for the whole launch (`Memory`'s contract), so this
/// changes no result and no fault; a linear-memory texture's filtering reads up to
/// eight texels a lane, mostly in one allocation, and translating each would cost more
/// than the filtering itself.
pub(crate) struct Texmem<'m> {
    mem: &'m dyn Memory,
    last: Cell<Option<HostSpan>>,
}

impl<'m> Texmem<'m> {
    pub(crate) fn new(mem: &'m dyn Memory) -> Texmem<'m> {
        Texmem {
            mem,
            last: Cell::new(None),
        }
    }

    /// The span holding `len` bytes at `addr` for `access`, or the memory's message.
    fn span(&self, addr: u64, len: u64, access: Access) -> Result<HostSpan, String> {
        if let Some(s) = self.last.get() {
            let inside =
                addr >= s.base && (addr - s.base).checked_add(len).is_some_and(|e| e <= s.len);
            if inside && (access == Access::Read || s.writable) {
                return Ok(s);
            }
        }
        let s = self
            .mem
            .translate(addr, len, access)
            .map_err(|f| f.message)?;
        self.last.set(Some(s));
        Ok(s)
    }
}

/// The bytes of a CUDA array: host memory owned by the driver, read and written by
/// kernels (surfaces) on several host threads at once, so each byte is an atomic.
#[derive(Debug)]
pub struct Texels {
    bytes: Box<[AtomicU8]>,
}

impl Texels {
    /// `len` zero bytes, or None when the host cannot give them. Asked of the allocator
    /// as zeroed memory, so that a large array's pages are the kernel's fresh zero pages,
    /// touched only when written: an array at the device's maxima (a 32768^2 cubemap is
    /// 6 GiB) is made at once, as on a GPU, not written byte by byte.
    pub fn zeroed(len: usize) -> Option<Texels> {
        if len == 0 {
            return Some(Texels {
                bytes: Box::new([]),
            });
        }
        let layout = std::alloc::Layout::array::<AtomicU8>(len).ok()?;
        // Safety: the layout is not zero-sized (len > 0).
        let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<AtomicU8>();
        if p.is_null() {
            return None;
        }
        // Safety: `p` is `len` zeroed bytes allocated with the layout of `[AtomicU8; len]`
        // (a zero byte is a valid AtomicU8), owned by nothing else; the Box frees it with
        // that layout.
        let bytes = unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, len)) };
        Some(Texels { bytes })
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Copies `out.len()` bytes from `offset`; false (and nothing read) when they do not
    /// all lie in the array.
    pub fn read(&self, offset: u64, out: &mut [u8]) -> bool {
        let Some(src) = self.window(offset, out.len()) else {
            return false;
        };
        let mut k = 0;
        while k < out.len() {
            out[k] = src[k].load(Ordering::Relaxed);
            k += 1;
        }
        true
    }

    /// Copies `data` to `offset`; false (and nothing written) when it does not fit.
    pub fn write(&self, offset: u64, data: &[u8]) -> bool {
        let Some(dst) = self.window(offset, data.len()) else {
            return false;
        };
        for (b, v) in dst.iter().zip(data) {
            b.store(*v, Ordering::Relaxed);
        }
        true
    }

    fn window(&self, offset: u64, len: usize) -> Option<&[AtomicU8]> {
        let start = usize::try_from(offset).ok()?;
        self.bytes.get(start..start.checked_add(len)?)
    }
}

/// How a channel's bits are to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelKind {
    Unsigned,
    Signed,
    /// f16 for 16-bit channels, f32 for 32-bit ones.
    Float,
}

/// A texel's layout: 1, 2 or 4 channels of 8, 16 or 32 bits each, or R10G10B10A2's four
/// packed in 32 (`bits` 10, `channels` 4: `texel_bytes` is 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    pub kind: ChannelKind,
    pub bits: u8,
    pub channels: u8,
}

impl Format {
    pub fn texel_bytes(&self) -> u64 {
        self.bits as u64 / 8 * self.channels as u64
    }
}

/// Where an image's texels are.
#[derive(Debug, Clone)]
pub enum Storage {
    /// A CUDA array: bytes the driver owns, row-major, rows `row_pitch` apart.
    Array(Arc<Texels>),
    /// Linear or pitch-linear device memory from this address, read through
    /// [`Memory::translate`] like any global load.
    Device(u64),
    /// A texture's resource view of a CUDA array (`resource_view`), or a texture over a
    /// block-compressed array: its bytes from `origin` on (the view's first layer), read
    /// as `blocks` where block-compressed (the image's width and height then count
    /// texels, 4 a block, and its pitches the array's rows of blocks).
    View {
        texels: Arc<Texels>,
        origin: u64,
        blocks: Option<BlockFormat>,
        /// A resource view's layer count (lastLayer - firstLayer + 1), None for a texture
        /// over a block-compressed array. Through a view, layers past the image's depth
        /// read 0 rather than clamp to the last, and a cubemap array's cube index is
        /// clamped to this count less one (`TextureObject::cube_slice`). A view's BC4,
        /// BC5 and BC6H texels read alpha 0 as other absent channels, a texture's over a
        /// block-compressed array alpha 1 (the H200: clients/runtime/texture_views.cu and
        /// probe texel_formats, bc-arrays).
        view_layers: Option<u64>,
    },
}

/// A block-compressed format a resource view reads an array as (CU_RES_VIEW_FORMAT_*_BC*):
/// each array element (8 or 16 bytes) is a block of 4 x 4 texels, decoded as Direct3D's
/// BC formats describe them with the H200's blending (`bc`). A read gives floats whatever
/// the texture's read mode: BC1, BC2, BC3 and BC7 8-bit channels normalized, BC4 and BC5
/// 16-bit UNORM or SNORM ones, BC6H its half floats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockFormat {
    Bc1,
    Bc2,
    Bc3,
    Bc4 { signed: bool },
    Bc5 { signed: bool },
    Bc6h { signed: bool },
    Bc7,
}

impl BlockFormat {
    /// Bytes a block of 4 x 4 texels takes.
    pub fn block_bytes(self) -> u64 {
        match self {
            BlockFormat::Bc1 | BlockFormat::Bc4 { .. } => 8,
            _ => 16,
        }
    }

    /// Channels a texel has (absent ones read 0, as for any texture).
    pub fn channels(self) -> u8 {
        match self {
            BlockFormat::Bc4 { .. } => 1,
            BlockFormat::Bc5 { .. } => 2,
            BlockFormat::Bc6h { .. } => 3,
            _ => 4,
        }
    }

    /// Texel (`x`, `y`) of a block (each 0 to 3) as four f32 lanes' bits, as the H200
    /// decodes it (`bc`).
    pub fn decode(self, block: &[u8], x: usize, y: usize) -> [u32; 4] {
        bc::decode(self, block, x, y)
    }
}

/// The texels a texture or surface object reads: `width` x `height` x `depth` (1 where a
/// dimension is absent), or `depth` layers of `width` x `height` when `layered`. A
/// cubemap's faces are layers too: `depth` is 6 (`layered` false) or 6 per cube of a
/// cubemap array (`layered`), face `f` of cube `c` at layer `6c + f`.
#[derive(Debug, Clone)]
pub struct Image {
    pub format: Format,
    pub width: u64,
    pub height: u64,
    pub depth: u64,
    pub layered: bool,
    pub cubemap: bool,
    /// The extent the resource was made with, as `txq` and `suq` report it: a dimension
    /// it lacks is 0 (a 1D array's height, a 2D array's depth, linear memory's height), a
    /// layered array's depth its layers (`width`..`depth` are what sampling uses, at
    /// least 1 each).
    pub extent_as_made: [u64; 3],
    /// Bytes from one row to the next, and from one slice (or layer) to the next.
    pub row_pitch: u64,
    pub slice_pitch: u64,
    pub storage: Storage,
}

/// Out-of-range coordinates (CUaddress_mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressMode {
    Wrap,
    Clamp,
    Mirror,
    Border,
}

/// How a texture object samples its image (CUDA_TEXTURE_DESC).
#[derive(Debug, Clone)]
pub struct Sampler {
    pub address: [AddressMode; 3],
    pub linear: bool,
    pub normalized_coords: bool,
    /// 8- and 16-bit integer channels read as floats in [0, 1] (unsigned) or [-1, 1]
    /// (signed), as without CU_TRSF_READ_AS_INTEGER.
    pub read_normalized: bool,
    pub border: [f32; 4],
    pub mipmap: MipmapSampler,
    /// CU_TRSF_SEAMLESS_CUBEMAP: a cubemap's linear filtering (and its gathers) reads
    /// across face edges (`seamless_texel`) instead of clamping at them.
    pub seamless_cubemap: bool,
    /// CU_TRSF_SRGB: 8-bit unsigned channels read as normalized floats are sRGB-encoded
    /// colours, decoded to linear (red, green, blue; alpha as it is).
    pub srgb: bool,
}

/// How a texture object over a mipmapped array picks and blends levels
/// (CUDA_TEXTURE_DESC's mipmap fields).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MipmapSampler {
    /// Blend the two nearest levels (mipmapFilterMode linear), else read the nearest.
    pub linear: bool,
    /// Added to every level of detail (mipmapLevelBias).
    pub bias: f32,
    /// The level of detail is clamped to [min_clamp, max_clamp] after the bias.
    pub min_clamp: f32,
    pub max_clamp: f32,
    /// maxAnisotropy as given (`tex.grad` takes at most 16 samples: `footprint`).
    pub max_anisotropy: u32,
}

#[derive(Debug, Clone)]
pub struct TextureObject {
    pub image: Image,
    pub sampler: Sampler,
    /// A mipmapped array's levels past the first (`image` is level 0), each half the one
    /// before in every dimension but layers and faces (at least 1); empty otherwise.
    pub levels: Vec<Image>,
}

#[derive(Debug, Clone)]
pub struct SurfaceObject {
    pub image: Image,
}

impl Image {
    /// Bytes at `offset` from the image's first byte, or why they cannot be read.
    pub(crate) fn read(&self, mem: &Texmem<'_>, offset: u64, out: &mut [u8]) -> Result<(), String> {
        match &self.storage {
            Storage::Array(t) if t.read(offset, out) => Ok(()),
            Storage::View { texels, origin, .. }
                if texels.read(origin.saturating_add(offset), out) =>
            {
                Ok(())
            }
            Storage::Array(_) | Storage::View { .. } => {
                Err(format!("offset {offset:#x} lies outside the CUDA array"))
            }
            Storage::Device(base) => {
                let addr = base.wrapping_add(offset);
                let len = out.len() as u64;
                let span = mem.span(addr, len, Access::Read)?;
                let at = addr.wrapping_sub(span.base);
                if addr < span.base || at.saturating_add(len) > span.len {
                    return Err(format!("{addr:#x}+{len} runs past the texture's memory"));
                }
                for (k, o) in out.iter_mut().enumerate() {
                    // Safety: `Memory`'s contract: the span is valid for reads of its
                    // `len` bytes for the whole launch, and other threads touch it only
                    // atomically; `at + k < span.len` was checked above.
                    *o = unsafe { AtomicU8::from_ptr(span.host.add(at as usize + k)) }
                        .load(Ordering::Relaxed);
                }
                Ok(())
            }
        }
    }

    /// Writes bytes at `offset` (surfaces).
    pub(crate) fn write(&self, mem: &Texmem<'_>, offset: u64, data: &[u8]) -> Result<(), String> {
        match &self.storage {
            Storage::Array(t) => t
                .write(offset, data)
                .then_some(())
                .ok_or_else(|| format!("offset {offset:#x} lies outside the CUDA array")),
            Storage::View { .. } => Err("a texture's resource view is not written".into()),
            Storage::Device(base) => {
                let addr = base.wrapping_add(offset);
                let len = data.len() as u64;
                let span = mem.span(addr, len, Access::Write)?;
                let at = addr.wrapping_sub(span.base);
                if addr < span.base || at.saturating_add(len) > span.len || !span.writable {
                    return Err(format!("{addr:#x}+{len} is not writable surface memory"));
                }
                for (k, v) in data.iter().enumerate() {
                    // Safety: as in `read`, for writes (the span is writable).
                    unsafe { AtomicU8::from_ptr(span.host.add(at as usize + k)) }
                        .store(*v, Ordering::Relaxed);
                }
                Ok(())
            }
        }
    }

    /// Whether this is a texture's resource view of a CUDA array.
    pub(crate) fn is_view(&self) -> bool {
        self.view_layers().is_some()
    }

    /// Whether this is a texture over a block-compressed array (not a view of one).
    fn is_block_compressed_array(&self) -> bool {
        matches!(
            self.storage,
            Storage::View {
                blocks: Some(_),
                view_layers: None,
                ..
            }
        )
    }

    /// A resource view's layer count (`Storage::View`).
    fn view_layers(&self) -> Option<u64> {
        match self.storage {
            Storage::View { view_layers, .. } => view_layers,
            _ => None,
        }
    }

    /// Size in elements of dimension `k` (0: x, 1: y, 2: z).
    pub(crate) fn size(&self, k: usize) -> u64 {
        [self.width, self.height, self.depth][k]
    }

    fn offset(&self, x: u64, y: u64, z: u64) -> u64 {
        z * self.slice_pitch + y * self.row_pitch + x * self.format.texel_bytes()
    }

    /// The channels of texel (x, y, z) as 32-bit values: floats' bits where the texture
    /// reads floats (float channels, or integers `normalize`d), integers otherwise.
    fn texel(&self, mem: &Texmem<'_>, at: [u64; 3], normalize: bool) -> Result<[u32; 4], String> {
        // A layer past a resource view's layers reads 0, whether the array has it or not:
        // on the H200 layer 1 of a view of layers 0..0, and of layers 3..4 of a 4-layer
        // array (probe views, layer-views; its border colour was 0 too, so whether this
        // is the border is not settled).
        if self.is_view() && (self.layered || self.cubemap) && at[2] >= self.depth {
            return Ok([0; 4]);
        }
        if let Storage::View {
            blocks: Some(b),
            view_layers,
            ..
        } = self.storage
        {
            // The block holding the texel: rows of blocks `row_pitch` apart.
            let mut block = [0u8; 16];
            let n = b.block_bytes();
            let off = at[2] * self.slice_pitch + at[1] / 4 * self.row_pitch + at[0] / 4 * n;
            self.read(mem, off, &mut block[..n as usize])?;
            let mut texel = b.decode(
                &block[..n as usize],
                (at[0] % 4) as usize,
                (at[1] % 4) as usize,
            );
            if view_layers.is_none() && b.channels() < 4 {
                texel[3] = 1f32.to_bits();
            }
            return Ok(texel);
        }
        let f = self.format;
        let mut buf = [0u8; 16];
        let n = f.texel_bytes() as usize;
        self.read(mem, self.offset(at[0], at[1], at[2]), &mut buf[..n])?;
        Ok(channels(f, &buf[..n], normalize))
    }
}

/// A texel's bytes as four 32-bit lanes. Absent channels read 0, w too: on the H200 a
/// one-channel float texture read as float4 gives (v, 0, 0, 0) and a two-channel
/// normalized ushort2 gives (x, y, 0, 0) (texture_probe, section 4).
pub(crate) fn channels(f: Format, bytes: &[u8], normalize: bool) -> [u32; 4] {
    let mut out = [0u32; 4];
    if f.bits == 10 {
        // R10G10B10A2, one little-endian word (R in bits 0-9, G 10-19, B 20-29, A 30-31):
        // each 10-bit channel over 1023 and the alpha over 3, as the H200 read them (probe
        // texel_formats, packed-and-surfaces); the integers where not normalized.
        let w = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let raw = [w & 0x3ff, (w >> 10) & 0x3ff, (w >> 20) & 0x3ff, w >> 30];
        let max = [1023.0f32, 1023.0, 1023.0, 3.0];
        for c in 0..4 {
            out[c] = if normalize {
                (raw[c] as f32 / max[c]).to_bits()
            } else {
                raw[c]
            };
        }
        return out;
    }
    if f.kind == ChannelKind::Float && f.bits == 32 {
        // The common float texture: each channel's bits as stored (a fast path of the
        // loop below, which gives the same).
        // (Indexing, not iterator adapters: this runs per texel, and unoptimised builds
        // pay for each adapter's calls.)
        let mut c = 0;
        while c < 4 && 4 * c + 4 <= bytes.len() {
            let b = 4 * c;
            out[c] = u32::from_le_bytes([bytes[b], bytes[b + 1], bytes[b + 2], bytes[b + 3]]);
            c += 1;
        }
        return out;
    }
    let w = f.bits as usize / 8;
    for (c, o) in out.iter_mut().enumerate().take(f.channels as usize) {
        // The channel's bits, little-endian: the widths CUDA's formats have read whole.
        let at = c * w;
        let raw = match w {
            1 => bytes[at] as u32,
            2 => u16::from_le_bytes([bytes[at], bytes[at + 1]]) as u32,
            4 => u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]),
            _ => {
                let mut raw = 0u32;
                for (k, b) in bytes[at..at + w].iter().enumerate() {
                    raw |= (*b as u32) << (8 * k);
                }
                raw
            }
        };
        *o = match (f.kind, f.bits) {
            (ChannelKind::Float, 16) => f16_to_f32(raw as u16).to_bits(),
            (ChannelKind::Float, _) => raw,
            (ChannelKind::Unsigned, b) if normalize && b < 32 => {
                (raw as f32 / ((1u64 << b) - 1) as f32).to_bits()
            }
            (ChannelKind::Signed, b) if normalize && b < 32 => {
                let v = sign_extend(raw, b);
                let max = ((1u64 << (b - 1)) - 1) as f32;
                (v as f32 / max).max(-1.0).to_bits()
            }
            (ChannelKind::Signed, b) => sign_extend(raw, b) as u32,
            (ChannelKind::Unsigned, _) => raw,
        };
    }
    out
}

fn sign_extend(raw: u32, bits: u8) -> i32 {
    let sh = 32 - bits as u32;
    ((raw << sh) as i32) >> sh
}

/// CU_TRSF_SRGB on an 8-bit colour channel (a u8 or UNORM_INT8 texel's, or a BC1, BC2,
/// BC3 or BC7 one's), `c` its value n / 255, as the H200 decodes it: a block floating
/// point table, the codes in groups of 8 (n & !7 to n | 7) sharing one exponent, that of
/// the group's largest decoded value but at least -7, each value the IEC 61966-2-1
/// decode (linear segment and power) rounded to nearest on the grid of 8 bits under that
/// exponent. All 256 values of probe texel_formats' srgb-u8 bit for bit (n up to 12 read
/// 20n / 65536: the linear segment on the grid 2^-14 of the exponent's floor; the codes
/// below a power of two in a group above it keep 7 bits); no value lies within 0.0038 of
/// a step from a tie (n = 100), so how the table was rounded at ties is not needed.
fn srgb_to_linear(c: f32) -> f32 {
    let n = (c * 255.0).round().clamp(0.0, 255.0) as u32;
    let iec = |n: u32| {
        let c = n as f64 / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let y = iec(n);
    if y == 0.0 {
        return 0.0;
    }
    // 8 bits under the power of two of the group's largest value (at least 2^-7).
    let step = leading_bit(iec(n | 7)).max(2f64.powi(-7)) / 128.0;
    ((y / step + 0.5).floor() * step) as f32
}

/// The index `i` of a dimension of `n` texels under `mode`; None: the border.
/// A dimension of no texels (a linear texture of sizeInBytes 0, a pitch2D one of width or
/// height 0, which the H200 makes) reads as the border: what the H200 reads there is not
/// recorded.
fn address(i: i64, n: u64, mode: AddressMode) -> Option<u64> {
    let n = n as i64;
    if n <= 0 {
        return None;
    }
    match mode {
        AddressMode::Border => (0..n).contains(&i).then_some(i as u64),
        AddressMode::Clamp => Some(i.clamp(0, n - 1) as u64),
        AddressMode::Wrap => Some(i.rem_euclid(n) as u64),
        AddressMode::Mirror => {
            let period = i.div_euclid(n);
            let r = i.rem_euclid(n);
            Some(if period % 2 == 0 { r } else { n - 1 - r } as u64)
        }
    }
}

/// Fraction bits a normalized coordinate keeps: the H200 floors it to a multiple of
/// 2^-21 before scaling by the texture's size. The recorded evidence is simple_texture's
/// rotated checksum (12288 samples over 128 x 96 texels), reproduced only with this rule
/// (the exact product leaves 40 samples off; 19, 20, 22, 23 or 24 bits leave 145, 49,
/// 22, 33 or 39). It was found with a scratch sweep on the H200 (65536 random
/// coordinates over 96 texels, all fitting 21 bits, 121 to 218 off with 22 or more).
/// Whether the count depends on the size (both sizes seen need 7 bits) is not recorded.
const NORMALIZED_FRACTION_BITS: i32 = 21;

/// A coordinate in texel space (unnormalized), from the instruction's, exactly (f64).
/// Normalized coordinates are floored to 2^-21 and, under wrap and mirror, folded into
/// [0, 1] first (the guide's appendix); unnormalized ones take wrap and mirror as clamp
/// (the guide: wrap and mirror exist only for normalized coordinates).
fn texel_space(u: f32, n: u64, s: &Sampler, k: usize) -> (f64, AddressMode) {
    let mode = s.address[k];
    if !s.normalized_coords {
        let mode = match mode {
            AddressMode::Wrap | AddressMode::Mirror => AddressMode::Clamp,
            m => m,
        };
        return (u as f64, mode);
    }
    let one = 1i64 << NORMALIZED_FRACTION_BITS;
    // NaN as 0; far-away coordinates saturate (they address like any far-away one).
    let u = if u.is_nan() {
        0.0
    } else {
        u.clamp(-1e9, 1e9) as f64
    };
    let q = (u * one as f64).floor() as i64;
    let folded = match mode {
        AddressMode::Wrap => q.rem_euclid(one),
        AddressMode::Mirror if q.div_euclid(one) % 2 != 0 => one - q.rem_euclid(one),
        AddressMode::Mirror => q.rem_euclid(one),
        _ => q,
    };
    (folded as f64 / one as f64 * n as f64, mode)
}

/// A texel-space coordinate less half a texel (so texel centres fall on integers), in
/// fixed point with 8 fractional bits: the lower texel of linear filtering (and of a
/// gather) is this >> 8 and the upper texel's weight this & 255, in 256ths. Rounded to
/// the nearest 1/256, halves up: on the H200, 0.5 + (k + 1/2)/256 weighs the upper texel
/// (k + 1)/256 and 0.5 + (k + 1/4)/256 weighs it k/256, for every k (texture_probe,
/// section 1), and 262144 corner weights of random unnormalized coordinates agree.
pub(crate) fn fixed_q8(x: f64) -> i64 {
    if x.is_nan() {
        return 0;
    }
    let limit = (1i64 << 48) as f64;
    ((x - 0.5) * 256.0 + 0.5).floor().clamp(-limit, limit) as i64
}

/// The nearest f32 to an exactly computed `x`, halves away from zero: the H200 rounds
/// its weighted sums so. In simple_texture's recorded rotation the 40 samples whose
/// exact sum lies halfway between two floats all read the one of larger magnitude (to
/// nearest even would change the recorded checksum), the others the nearest; negative
/// halves are not recorded.
fn round_half_away(x: f64) -> f32 {
    let r = x as f32; // to nearest, halves to even
    let next = if x.abs() > (r as f64).abs() {
        f32::from_bits(r.to_bits() + 1)
    } else {
        return r;
    };
    // A half lies exactly between r and the next float away from zero.
    if (x - r as f64) == (next as f64 - x) {
        next
    } else {
        r
    }
}

/// The weights, in 256ths, of the 2^dims corners of linear filtering (corner bit k set:
/// the upper texel in dimension k), from the upper texels' weights `f` of each dimension
/// and the level's `share` of the sample (256ths: 256 within one level, 256 - F and F for
/// the lower and upper of two levels blended by F/256). Each corner's weight is a
/// multiple of 1/256 and they sum to `share`. In 2D the share splits by x, its upper part
/// rounded to nearest, halves up; each part then splits by y, the upper x's upper y
/// rounded halves up and the lower x's halves down. Within one level that is: the corner
/// upper in both dimensions weighs A*B/256 rounded to nearest, halves up, and the others
/// are what is left of A, B and 1: on the H200, (A, B) = (240, 40) weigh (14, 202, 2,
/// 38), (77, 128) weigh (90, 38, 89, 39) and every other pair recorded the nearest 256ths
/// (texture_probe, sections 2 and 3, bits exact). Across two levels the H200's blends are
/// multiples of 1/256 (each texel's weight is one, not the product of a level's weight
/// and a corner's): texture_anisotropic's six isotropic samples between two levels match
/// this bit for bit, and no other order of the splits or placement of the rounding
/// (tried: each corner's product rounded, y before x, the 1-level formula scaled) does;
/// ci/explore/grad_lod2.cu's 7680 blends (ptx/tests/data/grad_lod2_h200.txt, section T)
/// match it too, ties included (either tie rule the other way fails there).
/// In 3D each of the 2D weights splits again by the third weight the same way (upper
/// part rounded, halves up): the 4096 trilinear samples of simple_texture (one level)
/// match it bit for bit; how 3D breaks ties, and a 3D texture's blend of two levels, are
/// not recorded.
fn corner_weights(dims: usize, f: [i64; 3], share: i64) -> [i64; 8] {
    let mut w = [0i64; 8];
    let (a, b) = (f[0], f[1]);
    let upper_x = (share * a + 128) >> 8;
    let lower_x = share - upper_x;
    match dims {
        1 => {
            w[0] = lower_x;
            w[1] = upper_x;
        }
        _ => {
            let upper_both = (upper_x * b + 128) >> 8;
            let upper_y = (lower_x * b + 127) >> 8;
            w[..4].copy_from_slice(&[lower_x - upper_y, upper_x - upper_both, upper_y, upper_both]);
            if dims == 3 {
                for k in 0..4 {
                    let hi = (w[k] * f[2] + 128) >> 8;
                    w[k + 4] = hi;
                    w[k] -= hi;
                }
            }
        }
    }
    w
}

/// Floor as an index, NaN as 0 and infinities saturated (they then address like any
/// far-away coordinate).
fn floor_index(u: f64) -> i64 {
    if u.is_nan() {
        0
    } else {
        u.floor().clamp(-(1i64 << 40) as f64, (1i64 << 40) as f64) as i64
    }
}

/// A texel offset as the instruction's `.s32` operand gives it, `bits` wide: `tex`'s range
/// is -8..=7 and a value outside it is taken as its low four bits, signed; `tld4`'s field
/// is six bits (-32..=31), so 8, 9, 15 and -9 move its footprint that far and 100 is -28
/// (recorded on the H200: runtime program texture_offsets, every address mode).
pub(crate) fn texel_offset(v: u64, bits: u32) -> i64 {
    let shift = 32 - bits;
    (((v as u32) << shift) as i32 >> shift) as i64
}

/// The width of `tex`'s and `tld4`'s texel-offset fields.
pub(crate) const TEX_OFFSET_BITS: u32 = 4;
pub(crate) const TLD4_OFFSET_BITS: u32 = 6;

/// Which level of detail a `tex` reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Lod {
    /// Plain `tex` (the ISA's `.base`): level 0, bias and clamps aside.
    Base,
    /// `tex.level`: this level of detail.
    Level(f32),
    /// `tex.grad`: from the coordinates' derivatives along the screen's x and y.
    Grad([f32; 3], [f32; 3]),
}

/// What a `tex` fetch reads: the image's coordinates (`dims` of them) and layer; for a
/// cubemap (`cube`) the coordinates are a direction from the cube's centre and the layer
/// the cube of a cubemap array.
pub(crate) struct Lookup {
    pub dims: usize,
    pub coords: [f32; 3],
    /// Texel offsets (`tex`'s and `tld4`'s operand e), added to the texel indices the
    /// coordinates give, before the address mode (zeros for none; cubemaps take none).
    pub offset: [i64; 3],
    pub layer: Option<i64>,
    pub cube: bool,
    pub lod: Lod,
}

/// One level's sample: bits as read (point sampling, or any integer texture), or the
/// exact weighted sum of linear filtering, not yet rounded (so that blending two levels
/// rounds once).
/// A texel precision that linear filtering keeps (`TextureObject::stored_precision`).
#[derive(Debug, Clone, Copy)]
enum Stored {
    /// 16-bit UNORM or SNORM: the largest value's integer (65535 or 32767).
    Norm16(f64),
    /// Signed 8- or 16-bit channels, blended as their integers (`TextureObject::snorm_units`,
    /// -32768 and -128 too), then as 16-bit SNORM (`Stored::rounded`).
    Snorm {
        bits: u8,
    },
    Half,
    /// sRGB-decoded colour channels (`srgb_to_linear`: 8 bits under their group's exponent) with a
    /// footprint's exponent: each channel of the texels blended is cut toward zero to 7
    /// fraction bits of the largest one's power of two (`Stored::share_exponent`), and
    /// their weighted sum is exact; the alpha channel, not decoded, as 16-bit UNORM (an
    /// 8-bit value n as 257n). On the H200 every blend of probe texel_formats'
    /// srgb-linear reads so (u8 0, 255, 0, 128, 64, 192, 10, 250 by halves and by 3/4 and
    /// 1/4, BC1's four colours; alpha 0 and 255 by halves 32768/65535), where the exact
    /// blend of the decoded values misses 9 of 25 colours; no other alignment, rounding
    /// or precision tried fits them all. A texel of weight 0 takes no part, and each
    /// channel has its exponent (10 and 250 blended read as the H200 reads them beside
    /// 128 and 64: srgb-exponents-bc-float).
    Srgb,
}

impl Stored {
    /// Channel `k` of a texel in the units the weighted sum adds.
    fn units(self, k: usize, c: f64) -> f64 {
        match self {
            Stored::Norm16(max) => (c * max).round(),
            Stored::Srgb if k == 3 => Stored::Norm16(65535.0).units(k, c),
            // The border colour (a texel's integers are `snorm_units`).
            Stored::Snorm { bits: 8 } => (c * 127.0).round(),
            Stored::Snorm { .. } => (c * 32767.0).round(),
            Stored::Half | Stored::Srgb => c,
        }
    }

    /// Channel `k` of each of `texels` (those of one footprint, already in `units`) cut
    /// to the precision of the largest one of nonzero weight where this precision
    /// shares an exponent. A texel of weight 0 takes no part: on the H200, 64 and 128
    /// blended by halves read 0x3e088000 (a grid of 2^-10) with a row of 255 (decoded
    /// 1.0) at weight 0 below them as without it (probe texel_formats,
    /// srgb-exponents-bc-float).
    fn share_exponent(self, texels: &mut [[f64; 4]], weights: &[i64]) {
        if !matches!(self, Stored::Srgb) {
            return;
        }
        for k in 0..3 {
            let largest = texels
                .iter()
                .zip(weights)
                .filter(|(_, w)| **w != 0)
                .fold(0f64, |m, (t, _)| m.max(t[k].abs()));
            if largest == 0.0 || !largest.is_finite() {
                continue;
            }
            // 7 fraction bits of the largest's power of two: a grid of 2^(e - 7).
            let step = leading_bit(largest) / 128.0;
            for t in texels.iter_mut() {
                t[k] = (t[k] / step).trunc() * step;
            }
        }
    }

    /// A weighted sum (in `units`) of channel `k` as the value filtering reads: to the
    /// nearest 16-bit integer or half, halves up (the H200 read 32767.5 as 32768,
    /// -16407.5 as -16407, and a tie between halves as the greater); sRGB colours exact.
    fn rounded(self, k: usize, sum: f64) -> f64 {
        use crate::math::{f16_to_f32, f64_to_f16, Rnd};
        match self {
            Stored::Norm16(max) => (sum + 0.5).floor() / max,
            Stored::Snorm { bits: 8 } => {
                // The blend S of the values (weights in 256ths) rescaled to 16-bit SNORM
                // by 1 + 257/32768 (about 32767/32512), the correction from S cut to a
                // multiple of 16 and rounded at 2^-11: every one of the 1892 recorded s8
                // blends (norm-linear, s8-linear-sweep).
                // (A border colour far out of range saturates; the texels' sums lie
                // within 256 x 128.)
                let s = ((sum * 256.0).round() as i64).clamp(-(1 << 40), 1 << 40);
                let k = s + (((s >> 4) * 257 + 1024) >> 11);
                k.clamp(-32767, 32767) as f64 / 32767.0
            }
            Stored::Snorm { .. } => ((sum + 0.5).floor() / 32767.0).clamp(-1.0, 1.0),
            Stored::Srgb if k == 3 => Stored::Norm16(65535.0).rounded(k, sum),
            Stored::Srgb => sum,
            Stored::Half => {
                // Ties away from zero: BC6H's positive ties read the greater half, a
                // half texture's negative one the lesser (norm-linear).
                let below = f16_to_f32(f64_to_f16(sum, Rnd::M)) as f64;
                let above = f16_to_f32(f64_to_f16(sum, Rnd::P)) as f64;
                let (up, down) = (above - sum, sum - below);
                if up < down || (up == down && sum > 0.0) {
                    above
                } else {
                    below
                }
            }
        }
    }
}

enum Sampled {
    Bits([u32; 4]),
    Exact([f64; 4]),
}

impl Sampled {
    fn bits(self) -> [u32; 4] {
        match self {
            Sampled::Bits(b) => b,
            Sampled::Exact(a) => [
                round_half_away(a[0]).to_bits(),
                round_half_away(a[1]).to_bits(),
                round_half_away(a[2]).to_bits(),
                round_half_away(a[3]).to_bits(),
            ],
        }
    }

    /// As exact values: only for textures that read floats.
    fn exact(&self) -> [f64; 4] {
        match self {
            Sampled::Bits(b) => b.map(|x| f32::from_bits(x) as f64),
            Sampled::Exact(a) => *a,
        }
    }
}

/// The cube face a direction points at (0 to 5: +x, -x, +y, -y, +z, -z) and the face's
/// normalized coordinates, per the CUDA programming guide's cubemap table: the major
/// axis m (the largest magnitude), then ((s/m + 1)/2, (t/m + 1)/2) with s and t the
/// table's signed minor coordinates. The guide's conditions are strict (|x| > |y|...),
/// so which face a tie picks is not documented: here z before y before x, and a zero
/// component as positive, which the H200 matches (clients/runtime/cubemap_mipmap.cu,
/// "ties and edges"); a zero direction reads the centre of face +z there, as 0/0 taken
/// as 0 gives. Face coordinates are computed in f32, as the guide writes them.
pub(crate) fn cube_face(x: f32, y: f32, z: f32) -> (u64, f32, f32) {
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    let (face, m, s, t) = if az >= ax && az >= ay {
        if z >= 0.0 {
            (4, az, x, -y)
        } else {
            (5, az, -x, -y)
        }
    } else if ay >= ax {
        if y >= 0.0 {
            (2, ay, x, z)
        } else {
            (3, ay, x, -z)
        }
    } else if x >= 0.0 {
        (0, ax, -z, -y)
    } else {
        (1, ax, z, -y)
    };
    if m == 0.0 {
        return (face, 0.5, 0.5);
    }
    (face, (s / m + 1.0) * 0.5, (t / m + 1.0) * 0.5)
}

/// The table's face of a direction in integers (no ties arise where it is used), with
/// the major axis' magnitude and the face's signed s and t (`cube_face`'s table).
fn cube_axes(d: [i64; 3]) -> (u64, i64, i64, i64) {
    let [x, y, z] = d;
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    if az >= ax && az >= ay {
        if z >= 0 {
            (4, az, x, -y)
        } else {
            (5, az, -x, -y)
        }
    } else if ay >= ax {
        if y >= 0 {
            (2, ay, x, z)
        } else {
            (3, ay, x, -z)
        }
    } else if x >= 0 {
        (0, ax, -z, -y)
    } else {
        (1, ax, z, -y)
    }
}

/// Texel (i, j) of cube face `face` (n x n texels), where i or j may lie one past an
/// edge, as seamless filtering reads it: the texel itself, or the texel of the
/// neighbouring face that the direction through its centre points at (the edge texel
/// there); None for a texel past a corner, which no face holds. Exact: the centre is the
/// direction (2i + 1 - n, 2j + 1 - n) on the face's plane at n, in half-texels, turned
/// into the cube's axes by the face table and back into the other face's texels.
pub(crate) fn seamless_texel(face: u64, i: i64, j: i64, n: u64) -> Option<(u64, u64, u64)> {
    let n = n as i64;
    let inside = |v: i64| (0..n).contains(&v);
    match (inside(i), inside(j)) {
        (true, true) => return Some((face, i as u64, j as u64)),
        (false, false) => return None,
        _ => {}
    }
    if !(-1..=n).contains(&i) || !(-1..=n).contains(&j) {
        return None;
    }
    let (s, t, m) = (2 * i + 1 - n, 2 * j + 1 - n, n);
    let dir = match face {
        0 => [m, -t, -s],
        1 => [-m, -t, s],
        2 => [s, m, t],
        3 => [s, -m, -t],
        4 => [s, -t, m],
        _ => [-s, -t, -m],
    };
    let (f2, m2, s2, t2) = cube_axes(dir);
    // Face coordinate (c/m + 1)/2 in texels, floored: exact in integers.
    let idx = |c: i64| ((c + m2) * n).div_euclid(2 * m2).clamp(0, n - 1) as u64;
    Some((f2, idx(s2), idx(t2)))
}

/// What `tex.grad` samples (`TextureObject::footprint`): the level of detail, how many
/// samples, and the derivative vector they are spread along (coordinate units).
struct Footprint {
    lod: f32,
    samples: u32,
    major: [f32; 3],
}

/// `x` with all but the top `bits` bits of its significand cleared: truncation toward
/// zero to a float of `bits` fraction bits (zeros and non-finite values unchanged).
fn truncate_significand(x: f64, bits: u32) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let cleared = (1u64 << (52 - bits)) - 1;
    f64::from_bits(x.to_bits() & !cleared)
}

/// 2^floor(log2 |x|), the weight of `x`'s leading bit (0 for 0, infinity for infinity),
/// from its bits: log2 may round a value just below a power of two up to it.
fn leading_bit(x: f64) -> f64 {
    f64::from_bits(x.abs().to_bits() & 0x7ff0_0000_0000_0000)
}

/// `x` rounded half up on a grid of `step` (a power of two).
fn round_half_up(x: f64, step: f64) -> f64 {
    (x / step + 0.5).floor() * step
}

/// A derivative vector's length as the H200 approximates it: the longer component plus
/// 11/32 of the shorter (the components already cut to 9 fraction bits: `grad_lod`).
fn grad_length(x: f64, y: f64) -> f64 {
    let (a, b) = (x.abs(), y.abs());
    a.max(b) + a.min(b) * 11.0 / 32.0
}

/// |p + q| as the H200's derivative adder forms it (p and q cut to 9 fraction bits):
/// the smaller operand aligned to the larger's leading bit and cut toward zero at 10
/// fraction bits (one guard bit), the sum exact, then cut to 9 fraction bits.
fn grad_add(p: f64, q: f64) -> f64 {
    let (p, q) = if p.abs() < q.abs() { (q, p) } else { (p, q) };
    if p == 0.0 {
        return 0.0;
    }
    let step = leading_bit(p) / 1024.0;
    let q = ((q.abs() / step).floor() * step).copysign(q);
    truncate_significand(p + q, 9).abs()
}

/// The extent of a sum or difference of the two vectors (its components `u`, `v` from
/// `grad_add`): 11/16 of its length, that factor taken apart: 11/16 of the longer
/// component rounded half up at 10 fraction bits of its leading bit, then cut to 9, plus
/// 121/512 (11/16 of 11/32) of the shorter rounded half up at 12 fraction bits of its own.
fn grad_pair_extent(u: f64, v: f64) -> f64 {
    let (long, short) = (u.max(v), u.min(v));
    if long == 0.0 {
        return 0.0;
    }
    let long = truncate_significand(
        round_half_up(long * 11.0 / 16.0, leading_bit(long) / 1024.0),
        9,
    );
    let short = if short > 0.0 {
        round_half_up(short * 121.0 / 512.0, leading_bit(short) / 4096.0)
    } else {
        0.0
    };
    long + short
}

/// The H200's log2 of a significand 1 + j/256 (j its top 8 fraction bits), in 256ths:
/// ci/explore/grad_lod2.cu's section L (runs/2026-12-03-h200-session15/explore/
/// grad_lod2_h200_L.txt.gz; every 10-bit significand of lengths 1-2 and 4-8 along x, the
/// copy in ptx/tests/data/grad_lod2_h200.txt), where each 8-bit significand reads one
/// value at both exponents. It is not the exact log2 rounded up: 26 of the 256 differ by
/// 1/256 (2, 7, 12 and 30 read one higher; 21 whose exact log2 lies less than 0.11/256
/// past a step, and 255, read one lower, so the fraction never carries into the
/// exponent). No polynomial of degree 6 or less over the significand gives it, nor a
/// chord or tangent interpolation over 4 to 64 segments; 16 independently fitted linear
/// segments do, with 1.0 itself reading 0: what the hardware computes is a table of this
/// size or an interpolation not yet identified, so the record's values are the table.
const LOG2_SIGNIFICAND: [u8; 256] = [
    0, 2, 4, 5, 6, 8, 9, 11, 12, 13, 15, 16, 18, 19, 20, 22, 23, 24, 26, 27, 28, 30, 31, 32, 34,
    35, 36, 38, 39, 40, 42, 43, 44, 45, 47, 48, 49, 50, 52, 53, 54, 55, 57, 58, 59, 60, 62, 63, 64,
    65, 66, 68, 69, 70, 71, 72, 74, 75, 76, 77, 78, 79, 81, 82, 83, 84, 85, 86, 88, 89, 90, 91, 92,
    93, 94, 95, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 109, 110, 111, 112, 113, 114,
    115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133,
    135, 136, 137, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152,
    153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 162, 163, 164, 165, 166, 167, 168, 169, 170,
    171, 172, 173, 173, 174, 175, 176, 177, 178, 179, 180, 181, 181, 182, 183, 184, 185, 186, 187,
    188, 188, 189, 190, 191, 192, 193, 194, 195, 195, 196, 197, 198, 199, 200, 200, 201, 202, 203,
    204, 205, 205, 206, 207, 208, 209, 210, 210, 211, 212, 213, 214, 214, 215, 216, 217, 218, 218,
    219, 220, 221, 222, 222, 223, 224, 225, 226, 226, 227, 228, 229, 229, 230, 231, 232, 233, 233,
    234, 235, 236, 236, 237, 238, 239, 239, 240, 241, 242, 242, 243, 244, 245, 245, 246, 247, 248,
    248, 249, 250, 251, 251, 252, 253, 253, 254, 255, 255,
];

/// log2 of a positive `extent` cut to 8 fraction bits, as the H200 takes it: the
/// exponent plus `LOG2_SIGNIFICAND` of the significand's top 8 bits; 0 and infinity keep
/// their infinite logarithms (the sampler's clamps pick the first or last level), as do
/// subnormal extents (no level is that fine), NaN stays NaN.
fn grad_log2(extent: f64) -> f32 {
    if extent.is_nan() {
        return f32::NAN;
    }
    let bits = extent.abs().to_bits();
    let biased = (bits >> 52) as i32;
    if extent.is_infinite() {
        return f32::INFINITY;
    }
    if biased == 0 {
        return f32::NEG_INFINITY;
    }
    let j = ((bits >> 44) & 0xff) as usize;
    (biased - 1023) as f32 + LOG2_SIGNIFICAND[j] as f32 / 256.0
}

/// `tex.grad`'s isotropic level of detail from the derivative vectors `dx`, `dy` in
/// level 0's texels, as the H200 computes it, bit for bit on every sample of its records
/// (runs/2026-12-03-h200-session14/explore/grad_lod.txt, ci/explore/grad_lod.cu, copied
/// in ptx/tests/data/grad_lod_h200.txt: 3,328 samples; ci/explore/grad_lod2.cu's, copied
/// in ptx/tests/data/grad_lod2_h200.txt: 29,575 whole-texel pairs, 2,048 single vectors,
/// 11,712 angled and 3,705 equal-length pairs; fitted by a research helper in session
/// 19). Each component is cut toward zero to 9 fraction bits; the footprint's extent is
/// the longest of the two vectors (`grad_length`) and of the extents of their sum and
/// difference (`grad_add`, `grad_pair_extent`: 11/16 of the length, for parallel vectors
/// of lengths a >= b max(a, 11/16 (a + b)) and for perpendicular ones max(a, b)); its
/// log2 the H200's (`grad_log2`, the extent's top 8 fraction bits).
pub(crate) fn grad_lod(dx: [f64; 2], dy: [f64; 2]) -> f32 {
    let cut = |v: f64| truncate_significand(v as f32 as f64, 9);
    let (x1, y1, x2, y2) = (cut(dx[0]), cut(dx[1]), cut(dy[0]), cut(dy[1]));
    let extent = grad_length(x1, y1)
        .max(grad_length(x2, y2))
        .max(grad_pair_extent(grad_add(x1, x2), grad_add(y1, y2)))
        .max(grad_pair_extent(grad_add(x1, -x2), grad_add(y1, -y2)));
    grad_log2(extent)
}

/// `tex.grad.cube`'s derivatives of a direction `c` along x or y (`d`) as derivatives of
/// the face coordinates `cube_face` gives (normalized): with s = (sc/m + 1)/2 (sc the
/// table's signed minor coordinate, m the major axis' magnitude), ds = (dsc m - sc dm) /
/// (2 m^2), the quotient rule (as OpenGL's specification derives the cube map's rho,
/// section 8.13). On the face the direction picks; a zero direction has none.
pub(crate) fn cube_face_gradient(c: [f32; 3], d: [f32; 3]) -> [f32; 3] {
    let (face, _, _) = cube_face(c[0], c[1], c[2]);
    // Per face: the major axis and its sign, s's axis and sign, t's axis and sign.
    const TABLE: [(usize, f32, usize, f32, usize, f32); 6] = [
        (0, 1.0, 2, -1.0, 1, -1.0),
        (0, -1.0, 2, 1.0, 1, -1.0),
        (1, 1.0, 0, 1.0, 2, 1.0),
        (1, -1.0, 0, 1.0, 2, -1.0),
        (2, 1.0, 0, 1.0, 1, -1.0),
        (2, -1.0, 0, -1.0, 1, -1.0),
    ];
    let (ma, ms, sa, ss, ta, ts) = TABLE[face as usize];
    let m = (c[ma] * ms) as f64;
    if m == 0.0 || !m.is_finite() {
        return [0.0; 3];
    }
    let dm = (d[ma] * ms) as f64;
    let f = |a: usize, sign: f32| {
        let (sc, dsc) = ((c[a] * sign) as f64, (d[a] * sign) as f64);
        ((dsc * m - sc * dm) / (2.0 * m * m)) as f32
    };
    [f(sa, ss), f(ta, ts), 0.0]
}

impl TextureObject {
    /// This texture as an explicit sampler (`tex`/`tld4`'s operand b) has it sample: the
    /// sampler's filter and address modes in place of the texture's where it sets them,
    /// and unnormalized coordinates where it forces them (PTX ISA, "Sampler
    /// Properties"); border colour, read mode and mipmap state stay the texture's.
    pub(crate) fn with_sampler(&self, s: &crate::decode::SamplerRef) -> TextureObject {
        let mut t = self.clone();
        if let Some(linear) = s.linear {
            t.sampler.linear = linear;
        }
        for (m, a) in t.sampler.address.iter_mut().zip(s.address) {
            if let Some(a) = a {
                *m = a;
            }
        }
        if s.force_unnormalized {
            t.sampler.normalized_coords = false;
        }
        t
    }

    pub(crate) fn reads_float(&self) -> bool {
        let f = self.image.format;
        f.kind == ChannelKind::Float || (self.sampler.read_normalized && f.bits < 32)
    }

    /// Mipmap level `k` (at most `levels.len()`).
    fn level(&self, k: usize) -> &Image {
        match k {
            0 => &self.image,
            _ => &self.levels[k - 1],
        }
    }

    /// Levels a mipmapped texture has (1 otherwise).
    pub(crate) fn level_count(&self) -> usize {
        self.levels.len() + 1
    }

    /// Size of dimension `k` of level `lod` (level 0 past the last): what
    /// `txq.level` answers.
    pub(crate) fn level_size(&self, lod: i64, k: usize) -> u64 {
        let l = usize::try_from(lod)
            .ok()
            .filter(|l| *l < self.level_count())
            .unwrap_or(0);
        self.level(l).size(k)
    }

    fn layer_slice(&self, layer: Option<i64>) -> u64 {
        match layer {
            // Through a resource view the layer is clamped to the view's last, which
            // reads 0 where the array lacks it (`Image::texel`): on the H200 a view of
            // layers 0..3 of 4 reads layer 3 at float layers -1, 4 and 5, views of
            // layers 5..5, 6..6 and 5..100 read 0 at every layer (probe views,
            // layers-past-the-end, views-two-past). Integer coordinates past the
            // array's layers read 0 before this (`fetch`). A view's count stands for the
            // layer count here as it does for a cubemap array's cubes (`cube_slice`).
            Some(l) if self.image.layered && self.image.is_view() => {
                let last = self.image.view_layers().unwrap_or(1).max(1) - 1;
                (l as u32 as u64).min(last)
            }
            // The layer is unsigned and clamped to the last: on the H200 layer -1 reads
            // the last layer, as does one past the end (texture_probe, section 6).
            Some(l) if self.image.layered => (l as u32 as u64).min(self.image.depth - 1),
            _ => 0,
        }
    }

    /// The first face of cube `layer` of a cubemap array (clamped as layers are), or of
    /// the one cube. Through a resource view the cube is clamped to the view's layer
    /// count less one, as if it counted cubes, and its faces are the array's layers from
    /// the view's first on, past the view's last too (0 past the array's): on the H200
    /// a view of layers 1..1 of two cubes reads cube 0 for cube 1, and its face 5 is
    /// array layer 6; one of layers 1..6 reads layer 7 as cube 1's face 0, 0 as its face
    /// 5 (probe views, cubemap-view-reads).
    fn cube_slice(&self, layer: Option<i64>) -> u64 {
        let cubes = (self.image.depth / 6).max(1);
        match (layer, self.image.view_layers()) {
            (Some(l), Some(n)) if self.image.layered => (l as u32 as u64).min(n.max(1) - 1) * 6,
            (Some(l), None) if self.image.layered => (l as u32 as u64).min(cubes - 1) * 6,
            _ => 0,
        }
    }

    /// The precision a texture's texels are filtered in, as the H200 blends them: a
    /// channel of 8 or 16 bits in 16-bit integers, a half in halves, a float exactly (None).
    /// - Unsigned 8- and 16-bit channels read normalized (and BC1-3, BC4/BC5 unsigned, BC7
    ///   decoded) as 16-bit UNORM: 0 and 255 by halves read 32768/65535 (probe
    ///   texel_formats, bc-linear, srgb-exponents-bc-float, norm-linear: u8, u16,
    ///   UNORM_INT8X4, every one of their 128 blends).
    /// - Signed 16-bit channels read normalized as their integers, -32768 too, the blend
    ///   over 32767 then clamped to -1 (norm-linear: s16 and SNORM_INT16X4, all 128);
    ///   signed BC4 and BC5 as 16-bit SNORM; signed 8-bit channels blended as their
    ///   integers and rescaled to 16-bit SNORM (`Stored::rounded`: all 128 of
    ///   norm-linear's s8 blends and s8-linear-sweep's 1764).
    /// - Halves, and BC6H's texels, in halves (norm-linear: all 128; bc-linear).
    /// - sRGB-decoded texels as `Stored::Srgb`.
    fn stored_precision(&self, img: &Image) -> Option<Stored> {
        if self.decodes_srgb(img) {
            return Some(Stored::Srgb);
        }
        let Storage::View {
            blocks: Some(b), ..
        } = img.storage
        else {
            let f = img.format;
            let normalized = self.sampler.read_normalized;
            return match (f.kind, f.bits) {
                (ChannelKind::Unsigned, 8 | 16) if normalized => Some(Stored::Norm16(65535.0)),
                (ChannelKind::Signed, 8 | 16) if normalized => Some(Stored::Snorm { bits: f.bits }),
                (ChannelKind::Float, 16) => Some(Stored::Half),
                _ => None,
            };
        };
        Some(match b {
            BlockFormat::Bc4 { signed: true } | BlockFormat::Bc5 { signed: true } => {
                Stored::Norm16(32767.0)
            }
            BlockFormat::Bc6h { .. } => Stored::Half,
            _ => Stored::Norm16(65535.0),
        })
    }

    /// A signed texel's channels as integers, -32768 and -128 included (None for the
    /// border, whose colour is a float), which the H200 blends (`Stored::Snorm`; probe
    /// texel_formats, norm-linear, s8-linear-sweep).
    fn snorm_units(
        &self,
        mem: &Texmem<'_>,
        img: &Image,
        idx: [Option<u64>; 3],
        slice: u64,
    ) -> Result<Option<[f64; 4]>, String> {
        let raw = self.stored_texel(mem, img, idx, slice, false)?;
        Ok(raw.map(|raw| raw.map(|r| r as i32 as f64)))
    }

    /// The texel at `idx` (the layer `slice` where `img` has layers), as `Image::texel`
    /// reads it; None for the border.
    fn stored_texel(
        &self,
        mem: &Texmem<'_>,
        img: &Image,
        idx: [Option<u64>; 3],
        slice: u64,
        normalize: bool,
    ) -> Result<Option<[u32; 4]>, String> {
        let [Some(x), Some(y), Some(z)] = idx else {
            return Ok(None);
        };
        let z = if img.layered || img.cubemap { slice } else { z };
        img.texel(mem, [x, y, z], normalize).map(Some)
    }

    /// A texel by its indices, each already addressed (None: the border's colour).
    fn at(
        &self,
        mem: &Texmem<'_>,
        img: &Image,
        idx: [Option<u64>; 3],
        slice: u64,
    ) -> Result<[u32; 4], String> {
        let normalized = self.sampler.read_normalized && img.format.kind != ChannelKind::Float;
        let Some(mut texel) = self.stored_texel(mem, img, idx, slice, normalized)? else {
            return Ok(if self.reads_float() {
                self.sampler.border.map(f32::to_bits)
            } else {
                self.sampler.border.map(|b| b as u32)
            });
        };
        if self.decodes_srgb(img) {
            for c in texel.iter_mut().take(3) {
                *c = srgb_to_linear(f32::from_bits(*c)).to_bits();
            }
        }
        Ok(texel)
    }

    /// Whether the texture reads `img`'s colour channels sRGB-decoded (CU_TRSF_SRGB): the
    /// colour formats Direct3D has sRGB variants of, 8-bit channels read normalized and
    /// BC1, BC2, BC3 and BC7; the H200 decoded those, not BC4, BC5 nor BC6H channels
    /// (probe texel_formats, srgb-u8, bc-srgb).
    fn decodes_srgb(&self, img: &Image) -> bool {
        if !self.sampler.srgb {
            return false;
        }
        match img.storage {
            Storage::View {
                blocks: Some(b), ..
            } => matches!(
                b,
                BlockFormat::Bc1 | BlockFormat::Bc2 | BlockFormat::Bc3 | BlockFormat::Bc7
            ),
            _ => {
                self.sampler.read_normalized
                    && img.format.kind == ChannelKind::Unsigned
                    && img.format.bits == 8
            }
        }
    }

    /// A cubemap lookup as the face's 2D one: the face's layer, its normalized
    /// coordinates, and a sampler that clamps at the face's edges, unless the texture is
    /// seamless (CU_TRSF_SEAMLESS_CUBEMAP), whose linear filtering and gathers read the
    /// neighbouring faces there (`seamless_texel`).
    fn on_face(&self, q: &Lookup) -> (Sampler, [f32; 3], u64) {
        let (face, u, v) = cube_face(q.coords[0], q.coords[1], q.coords[2]);
        let s = Sampler {
            address: [AddressMode::Clamp; 3],
            normalized_coords: true,
            ..self.sampler.clone()
        };
        (s, [u, v, 0.0], self.cube_slice(q.layer) + face)
    }

    /// `tex` with floating-point coordinates.
    pub(crate) fn sample(&self, mem: &Texmem<'_>, q: &Lookup) -> Result<[u32; 4], String> {
        let face;
        let (sampler, dims, coords, slice) = if q.cube {
            let (s, c, slice) = self.on_face(q);
            face = s;
            (&face, 2, c, slice)
        } else {
            (&self.sampler, q.dims, q.coords, self.layer_slice(q.layer))
        };
        let (dx, dy) = match q.lod {
            Lod::Base => return self.sample_at(mem, sampler, dims, coords, q, slice, None),
            Lod::Level(l) => return self.sample_at(mem, sampler, dims, coords, q, slice, Some(l)),
            Lod::Grad(dx, dy) if q.cube => (
                cube_face_gradient(q.coords, dx),
                cube_face_gradient(q.coords, dy),
            ),
            Lod::Grad(dx, dy) => (dx, dy),
        };
        let fp = self.footprint(sampler, dims, dx, dy);
        if fp.samples <= 1 || !self.reads_float() {
            return self.sample_at(mem, sampler, dims, coords, q, slice, Some(fp.lod));
        }
        // Anisotropic filtering: the mean of `samples` isotropic samples spaced along the
        // footprint's major axis, at i/(N+1) - 1/2 of it (EXT_texture_filter_anisotropic),
        // each rounded as a sample is, their mean rounded once.
        let n = fp.samples;
        let mut acc = [0f64; 4];
        for i in 1..=n {
            let at = i as f32 / (n + 1) as f32 - 0.5;
            let c: [f32; 3] = std::array::from_fn(|k| coords[k] + fp.major[k] * at);
            let v = self.sample_at(mem, sampler, dims, c, q, slice, Some(fp.lod))?;
            for (a, b) in acc.iter_mut().zip(v) {
                *a += f32::from_bits(b) as f64;
            }
        }
        Ok(acc.map(|a| round_half_away(a / n as f64).to_bits()))
    }

    /// One sample at `coords` (on the layer or face `slice`) at level of detail `lod`
    /// (None: plain `tex`, level 0), before the bias and clamps.
    #[allow(clippy::too_many_arguments)]
    fn sample_at(
        &self,
        mem: &Texmem<'_>,
        sampler: &Sampler,
        dims: usize,
        coords: [f32; 3],
        q: &Lookup,
        slice: u64,
        lod: Option<f32>,
    ) -> Result<[u32; 4], String> {
        let Some(lod) = lod.filter(|_| !self.levels.is_empty()) else {
            let s = self.filter(
                mem,
                &self.image,
                sampler,
                dims,
                coords,
                q.offset,
                slice,
                256,
            )?;
            return Ok(s.bits());
        };
        let on_level = |k: usize, share: i64| {
            let img = self.level(k);
            let mut c = coords;
            if !sampler.normalized_coords {
                // Unnormalized coordinates count level 0's texels (not recorded).
                for (d, v) in c.iter_mut().enumerate().take(dims) {
                    *v *= img.size(d) as f32 / self.image.size(d) as f32;
                }
            }
            self.filter(mem, img, sampler, dims, c, q.offset, slice, share)
        };
        // The level of detail with its bias, clamped to the sampler's range and then to
        // the levels there are, in fixed point with 8 fractional bits, cut toward zero
        // (the H200: a sweep 1/1024 apart holds each step for four samples, and the
        // nearest level changes at exactly .5; clients/runtime/cubemap_mipmap.cu).
        let m = &self.sampler.mipmap;
        let last = self.levels.len() as f32;
        let lod = if lod.is_nan() { 0.0 } else { lod };
        let lod = (lod + m.bias).max(m.min_clamp).min(m.max_clamp);
        let lod = if lod.is_nan() {
            0.0
        } else {
            lod.clamp(0.0, last)
        };
        let q8 = (lod as f64 * 256.0).floor() as i64;
        if !m.linear || !self.reads_float() {
            // The nearest level, halves up.
            return Ok(on_level(((q8 + 128) >> 8) as usize, 256)?.bits());
        }
        let (lo, f) = ((q8 >> 8) as usize, q8 & 255);
        if f == 0 {
            return Ok(on_level(lo, 256)?.bits());
        }
        // Each level's texels weighed by its share (`corner_weights`), the sum rounded
        // once.
        let (a, b) = (on_level(lo, 256 - f)?.exact(), on_level(lo + 1, f)?.exact());
        Ok(std::array::from_fn(|c| {
            round_half_away(a[c] + b[c]).to_bits()
        }))
    }

    /// `tex.grad`'s footprint: the derivative vectors in level 0's texels (scaled by its
    /// size when the coordinates are normalized). Isotropic (maxAnisotropy 0 or 1): one
    /// sample at `grad_lod`'s level of detail for 1D and 2D footprints (cube faces
    /// included), fitted to the H200; a 3D footprint's is not recorded and keeps OpenGL's
    /// rho (log2 of the longer vector, section 8.14). Anisotropic: the footprint model of
    /// EXT_texture_filter_anisotropic, N = min(ceil(Pmax / Pmin), maxAnisotropy) samples
    /// along the longer vector at level log2(Pmax / N), maxAnisotropy capped at 16 (the
    /// largest ratio Direct3D and OpenGL implementations take); what the H200 does is
    /// not documented (clients/runtime/texture_anisotropic.cu, recorded, differs from this
    /// model; its differences and what they show are declared in
    /// clients/runtime/goldens/differences.txt).
    fn footprint(&self, sampler: &Sampler, dims: usize, dx: [f32; 3], dy: [f32; 3]) -> Footprint {
        let scale = |k: usize| {
            if sampler.normalized_coords {
                self.image.size(k) as f64
            } else {
                1.0
            }
        };
        let len = |g: [f32; 3]| {
            (0..dims)
                .map(|k| (g[k] as f64 * scale(k)).powi(2))
                .sum::<f64>()
                .sqrt()
        };
        let (px, py) = (len(dx), len(dy));
        let (pmax, pmin, major) = if py > px { (py, px, dy) } else { (px, py, dx) };
        let max_aniso = sampler.mipmap.max_anisotropy.min(16);
        let samples = if max_aniso <= 1 || !pmax.is_finite() || pmax == 0.0 {
            1
        } else if pmin > 0.0 {
            (pmax / pmin).ceil().min(max_aniso as f64) as u32
        } else {
            max_aniso
        };
        let mut major = major;
        for v in major.iter_mut().skip(dims) {
            *v = 0.0;
        }
        let lod = if max_aniso <= 1 && dims <= 2 {
            let texels = |g: [f32; 3]| [g[0] as f64 * scale(0), g[1] as f64 * scale(1)];
            let (mut x, mut y) = (texels(dx), texels(dy));
            if dims == 1 {
                (x[1], y[1]) = (0.0, 0.0);
            }
            grad_lod(x, y)
        } else {
            (pmax / samples as f64).log2() as f32
        };
        Footprint {
            lod,
            samples,
            major,
        }
    }

    /// One level's sample: point or linear filtering of `img` at `coords`, the texel
    /// indices moved by `offset` (in this level's texels, as OpenGL's textureOffset)
    /// before the address mode: a wrapping texture wraps the moved index. `share` is the
    /// level's weight in the sample, in 256ths (`corner_weights`): 256 unless two levels
    /// are blended, when the result is this level's part of the blend.
    #[allow(clippy::too_many_arguments)]
    fn filter(
        &self,
        mem: &Texmem<'_>,
        img: &Image,
        sampler: &Sampler,
        dims: usize,
        coords: [f32; 3],
        offset: [i64; 3],
        slice: u64,
        share: i64,
    ) -> Result<Sampled, String> {
        // Integer results cannot be interpolated: such textures sample the nearest texel.
        let linear = sampler.linear && self.reads_float();
        // A 1D texture filters as a 2D one of height 1 sampled at y = 0, half a texel
        // from the row's centre: under linear filtering with the border mode half of
        // each sample is the border colour (the H200's six "linear border" samples of
        // texture_probe, section 3, bit for bit); under the other modes both rows are
        // row 0, which changes nothing.
        let dims = if linear && dims == 1 { 2 } else { dims };
        let mut base = [0i64; 3];
        let mut frac = [0i64; 3];
        let mut modes = [AddressMode::Clamp; 3];
        for k in 0..dims {
            let n = img.size(k);
            let (u, mode) = texel_space(coords[k], n, sampler, k);
            modes[k] = mode;
            if linear {
                let x = fixed_q8(u);
                base[k] = x >> 8;
                frac[k] = x & 255;
            } else {
                base[k] = floor_index(u);
            }
            // A 1D texture filtered as 2D (above) has no offset for its made-up y.
            base[k] += offset.get(k).copied().unwrap_or(0);
        }
        let index = |k: usize, off: i64| -> Option<u64> {
            if k >= dims {
                return Some(0);
            }
            address(base[k] + off, img.size(k), modes[k])
        };
        if !linear {
            let idx = [index(0, 0), index(1, 0), index(2, 0)];
            let texel = self.at(mem, img, idx, slice)?;
            if share == 256 {
                return Ok(Sampled::Bits(texel));
            }
            return Ok(Sampled::Exact(
                texel.map(|t| share as f64 * f32::from_bits(t) as f64 / 256.0),
            ));
        }
        let weights = corner_weights(dims, frac, share);
        if img.cubemap && sampler.seamless_cubemap && dims == 2 {
            return self.seamless(mem, img, base, &weights, slice);
        }
        // The corners' products are exact in f64 (an integer of 9 bits times an f32), and
        // so is their sum while the texels lie within 2^20 of one another: the sum is
        // rounded once, to f32, halves away from zero (the H200's bits in texture_probe,
        // section 2, and simple_texture's checksums; texels of far-apart magnitudes are
        // not recorded).
        // Each dimension's lower and upper texel, addressed once (not per corner).
        // (Plain loops and indexing here: this runs per lane and corner.)
        let mut ends = [[Some(0u64); 2]; 3];
        for (k, e) in ends.iter_mut().enumerate().take(dims) {
            *e = [index(k, 0), index(k, 1)];
        }
        let stored = self.stored_precision(img);
        let corners = 1 << dims;
        let mut texels = [[0f64; 4]; 8];
        for (corner, t) in texels.iter_mut().enumerate().take(corners) {
            let idx = [
                ends[0][corner & 1],
                ends[1][corner >> 1 & 1],
                ends[2][corner >> 2 & 1],
            ];
            if let Some(Stored::Snorm { .. }) = stored {
                if let Some(units) = self.snorm_units(mem, img, idx, slice)? {
                    *t = units;
                    continue;
                }
            }
            let texel = self.at(mem, img, idx, slice)?;
            for k in 0..4 {
                let c = f32::from_bits(texel[k]) as f64;
                t[k] = stored.map_or(c, |p| p.units(k, c));
            }
        }
        if let Some(p) = stored {
            p.share_exponent(&mut texels[..corners], &weights[..corners]);
        }
        let mut acc = [0f64; 4];
        for (t, w) in texels.iter().zip(weights).take(corners) {
            let w = w as f64;
            acc[0] += w * t[0];
            acc[1] += w * t[1];
            acc[2] += w * t[2];
            acc[3] += w * t[3];
        }
        let sum = acc.map(|a| a / 256.0);
        Ok(Sampled::Exact(match stored {
            Some(p) => std::array::from_fn(|k| p.rounded(k, sum[k])),
            None => sum,
        }))
    }

    /// The four texels of bilinear filtering on a cube face, lower corner `base`, read
    /// across the face's edges (CU_TRSF_SEAMLESS_CUBEMAP; `seamless_texel`); `slice` is
    /// the face's layer. A footprint over a corner has three texels: the fourth, which no
    /// face holds, blends them as the H200 does (what OpenGL's seamless cube maps leave to
    /// the implementation; Direct3D's averages): 85/256 of each edge neighbour and 86/256
    /// of the diagonal one (clients/runtime/cubemap_seamless.cu, recorded). The sum is
    /// rounded once, as in `filter`.
    fn seamless_texels(
        &self,
        mem: &Texmem<'_>,
        img: &Image,
        base: [i64; 3],
        slice: u64,
    ) -> Result<[[f64; 4]; 4], String> {
        let (cube, face) = (slice - slice % 6, slice % 6);
        let mut texels = [[0f64; 4]; 4];
        let mut missing = None;
        for (corner, t) in texels.iter_mut().enumerate() {
            let (i, j) = (
                base[0] + (corner & 1) as i64,
                base[1] + (corner >> 1) as i64,
            );
            match seamless_texel(face, i, j, img.width) {
                Some((f, x, y)) => {
                    let v = self.at(mem, img, [Some(x), Some(y), Some(0)], cube + f)?;
                    *t = v.map(|b| f32::from_bits(b) as f64);
                }
                None => missing = Some(corner),
            }
        }
        if let Some(m) = missing {
            // Recorded on the H200 (cubemap_seamless's tld4.r gathers at three corners,
            // each fitted exactly): not the mean but 85/256 of each texel sharing an edge
            // with the missing one (corners m^1, m^2) and 86/256 of the diagonal one (m^3).
            let mut blend = [0f64; 4];
            for (k, w) in [(m ^ 1, 85.0), (m ^ 2, 85.0), (m ^ 3, 86.0)] {
                for c in 0..4 {
                    blend[c] += w * texels[k][c];
                }
            }
            texels[m] = blend.map(|b| b / 256.0);
        }
        Ok(texels)
    }

    fn seamless(
        &self,
        mem: &Texmem<'_>,
        img: &Image,
        base: [i64; 3],
        weights: &[i64; 8],
        slice: u64,
    ) -> Result<Sampled, String> {
        let texels = self.seamless_texels(mem, img, base, slice)?;
        let mut acc = [0f64; 4];
        for (w, t) in weights.iter().zip(texels) {
            for c in 0..4 {
                acc[c] += *w as f64 * t[c];
            }
        }
        Ok(Sampled::Exact(acc.map(|a| a / 256.0)))
    }

    /// `tex` with integer coordinates: the texel at those indices (moved by the texel
    /// offsets `offset`), unfiltered.
    pub(crate) fn fetch(
        &self,
        mem: &Texmem<'_>,
        dims: usize,
        at: [i64; 3],
        offset: [i64; 3],
        layer: Option<i64>,
    ) -> Result<[u32; 4], String> {
        let at: [i64; 3] = std::array::from_fn(|k| at[k].saturating_add(offset[k]));
        let slice = self.layer_slice(layer);
        // Linear memory (tex1Dfetch) reads zero past either end whatever the address
        // mode: on the H200, under wrap with a zero border colour (texture_probe, section
        // 7); that other modes and colours read zero too is not recorded.
        let linear_memory = matches!(self.image.storage, Storage::Device(_)) && dims == 1;
        if linear_memory && !(0..self.image.width as i64).contains(&at[0]) {
            return Ok([0; 4]);
        }
        // A layer past a layered array's reads zero: on the H200 layer 5 of 4 through
        // tex.a2d with integer coordinates (probe views, view-bounds), where floating-point
        // coordinates clamp it to the last (`layer_slice`; texture_probe, section 6).
        // Which of the two reads' differences (coordinates, u32 or float texels, read
        // mode) decides is not recorded: the coordinates are taken.
        if let Some(l) = layer {
            if self.image.layered && !self.image.cubemap && l as u32 as u64 >= self.image.depth {
                return Ok([0; 4]);
            }
        }
        // A texture over a block-compressed array reads 0 past the array's texels, in its
        // last partial blocks too, where other arrays clamp: on the H200 BC1 and BC7
        // arrays of 6 x 5 texels read x 6..7 and y 5..7 as 0 under clamp (probe
        // texel_formats, bc-partial-blocks). What float coordinates read there is not
        // recorded: they clamp as other arrays' do.
        if self.image.is_block_compressed_array() {
            let outside = (0..dims).any(|k| !(0..self.image.size(k) as i64).contains(&at[k]));
            if outside {
                return Ok([0; 4]);
            }
        }
        let mut idx = [Some(0); 3];
        for k in 0..dims {
            let mode = match self.sampler.address[k] {
                AddressMode::Border => AddressMode::Border,
                _ => AddressMode::Clamp,
            };
            idx[k] = address(at[k], self.image.size(k), mode);
        }
        self.at(mem, &self.image, idx, slice)
    }

    /// `tld4.comp.{2d,a2d,cube,acube}`: component `comp` of the four texels bilinear
    /// filtering would weigh, counter-clockwise from the lower left (PTX ISA):
    /// (i, j+1), (i+1, j+1), (i+1, j), (i, j); of level 0, on the layer or the cube's
    /// face the lookup names.
    pub(crate) fn gather(
        &self,
        mem: &Texmem<'_>,
        q: &Lookup,
        comp: usize,
    ) -> Result<[u32; 4], String> {
        let face;
        let (sampler, coords, slice) = if q.cube {
            let (s, c, slice) = self.on_face(q);
            face = s;
            (&face, c, slice)
        } else {
            (&self.sampler, q.coords, self.layer_slice(q.layer))
        };
        let mut base = [0i64; 2];
        let mut modes = [AddressMode::Clamp; 2];
        for k in 0..2 {
            let (u, mode) = texel_space(coords[k], self.image.size(k), sampler, k);
            // The footprint linear filtering would weigh: the coordinate rounded to 1/256
            // first, as for filtering (a gather's texels and a filter's agree).
            base[k] = (fixed_q8(u) >> 8) + q.offset[k];
            modes[k] = mode;
        }
        let ix = |dx: i64, dy: i64| {
            [
                address(base[0] + dx, self.image.width, modes[0]),
                address(base[1] + dy, self.image.height, modes[1]),
                Some(0),
            ]
        };
        let mut out = [0u32; 4];
        if q.cube && sampler.seamless_cubemap {
            // Across the face's edges, as seamless filtering reads them; a corner's
            // missing texel blends the other three (`seamless_texels`), which integers
            // have no recorded rule for.
            if !self.reads_float() {
                return Err(
                    "tld4 over a seamless cubemap that reads integers: the texel past \
                            a corner has no documented value, not emulated"
                        .into(),
                );
            }
            let t = self.seamless_texels(mem, &self.image, [base[0], base[1], 0], slice)?;
            // Corner bits: x + 2y; the ISA's order is (0, 1), (1, 1), (1, 0), (0, 0).
            for (o, corner) in out.iter_mut().zip([2, 3, 1, 0]) {
                *o = round_half_away(t[corner][comp]).to_bits();
            }
            return Ok(out);
        }
        for (o, (dx, dy)) in out.iter_mut().zip([(0, 1), (1, 1), (1, 0), (0, 0)]) {
            *o = self.at(mem, &self.image, ix(dx, dy), slice)?[comp];
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoMemory;
    // Safety: it hands out no span.
    unsafe impl Memory for NoMemory {
        fn translate(&self, _: u64, _: u64, _: Access) -> Result<crate::HostSpan, crate::Fault> {
            Err(crate::Fault {
                message: "no memory".into(),
            })
        }
    }

    fn float_texture(
        values: &[f32],
        width: u64,
        height: u64,
        linear: bool,
        mode: AddressMode,
    ) -> TextureObject {
        let t = Texels::zeroed(values.len() * 4).unwrap();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert!(t.write(0, &bytes));
        TextureObject {
            image: Image {
                format: Format {
                    kind: ChannelKind::Float,
                    bits: 32,
                    channels: 1,
                },
                width,
                height,
                depth: 1,
                layered: false,
                cubemap: false,
                extent_as_made: [width, height, 0],
                row_pitch: width * 4,
                slice_pitch: width * height * 4,
                storage: Storage::Array(Arc::new(t)),
            },
            sampler: Sampler {
                address: [mode; 3],
                linear,
                normalized_coords: false,
                read_normalized: false,
                border: [0.0; 4],
                mipmap: MipmapSampler::default(),
                seamless_cubemap: false,
                srgb: false,
            },
            levels: Vec::new(),
        }
    }

    fn lookup2(c: [f32; 2]) -> Lookup {
        Lookup {
            offset: [0; 3],
            dims: 2,
            coords: [c[0], c[1], 0.0],
            layer: None,
            cube: false,
            lod: Lod::Base,
        }
    }

    fn tex1(t: &TextureObject, x: f32) -> f32 {
        let q = Lookup {
            offset: [0; 3],
            dims: 1,
            coords: [x, 0.0, 0.0],
            layer: None,
            cube: false,
            lod: Lod::Base,
        };
        f32::from_bits(t.sample(&Texmem::new(&NoMemory), &q).unwrap()[0])
    }

    #[test]
    fn linear_filtering_weighs_in_steps_of_one_256th() {
        let t = float_texture(&[0.0, 1.0], 2, 1, true, AddressMode::Clamp);
        // Texel centres at 0.5 and 1.5: halfway between is 0.5 exactly.
        assert_eq!(tex1(&t, 1.0), 0.5);
        assert_eq!(tex1(&t, 0.5), 0.0);
        assert_eq!(tex1(&t, 1.5), 1.0);
        // 0.5 + 1/1000 is not a multiple of 1/256: the weight is quantised.
        assert_eq!(tex1(&t, 0.501), 0.0);
        assert_eq!(tex1(&t, 0.5 + 5.0 / 1024.0), 1.0 / 256.0);
    }

    #[test]
    fn corner_weights_are_the_h200s() {
        // texture_probe, section 2: (A, B) = (240, 40), a tie in every corner.
        assert_eq!(corner_weights(2, [240, 40, 0], 256)[..4], [14, 202, 2, 38]);
        // Section 3's 1D border samples at x = -0.05: (77, 128), ties again.
        assert_eq!(corner_weights(2, [77, 128, 0], 256)[..4], [90, 38, 89, 39]);
        assert_eq!(corner_weights(2, [37, 201, 0], 256)[..4], [47, 8, 172, 29]);
        for (a, b, c) in [(0, 0, 0), (256, 17, 3), (205, 205, 205), (1, 255, 128)] {
            let w = corner_weights(3, [a, b, c], 256);
            assert_eq!(w.iter().sum::<i64>(), 256, "{a} {b} {c}: {w:?}");
        }
        // A level's share of a blend of two is split whole among its corners.
        for (a, b, share) in [(0, 0, 1), (255, 255, 255), (189, 67, 173), (128, 128, 128)] {
            for dims in 1..=3 {
                let w = corner_weights(dims, [a, b, a], share);
                let sum: i64 = w[..1 << dims].iter().sum();
                assert_eq!(sum, share, "{dims}D {a} {b} of {share}: {w:?}");
                assert!(
                    w.iter().all(|&x| x >= 0),
                    "{dims}D {a} {b} of {share}: {w:?}"
                );
            }
        }
    }

    /// clients/runtime/texture_anisotropic.cu's `ramp`: 16 x 16 texels, 5 levels, level
    /// L's texel (x, y) holding 100 L + 4 x + y, linear filtering inside and between
    /// levels, clamped, normalized coordinates.
    fn ramp_texture() -> TextureObject {
        let level = |l: u64| {
            let n = 16u64 >> l;
            let v: Vec<f32> = (0..n * n)
                .map(|i| (100 * l + 4 * (i % n) + i / n) as f32)
                .collect();
            float_texture(&v, n, n, true, AddressMode::Clamp)
        };
        let mut t = level(0);
        t.levels = (1..5).map(|l| level(l).image).collect();
        t.sampler.normalized_coords = true;
        t.sampler.mipmap = MipmapSampler {
            linear: true,
            bias: 0.0,
            min_clamp: 0.0,
            max_clamp: 4.0,
            max_anisotropy: 0,
        };
        t
    }

    #[test]
    fn blends_of_two_levels_weigh_each_texel_in_256ths() {
        // texture_anisotropic on the H200 (clients/runtime/goldens/NVIDIA_H200-580.159.04):
        // tex2DGrad, maxAnisotropy 0, at (0.53, 0.47), gradients in level 0's texels.
        // Six of the twelve blend two levels (fractions 83, 83, 237, 150, 161, 181 256ths).
        let h200: [(f32, f32, f32, f32, u32); 12] = [
            (4.0, 0.0, 0.0, 1.0, 0x434fdd00),
            (8.0, 0.0, 0.0, 1.0, 0x43975680),
            (0.0, 1.0, 5.0, 0.0, 0x436e9700),
            (2.5, 0.0, 0.0, 1.0, 0x43134c00),
            (16.0, 0.0, 0.0, 1.0, 0x43c80000),
            (2.83, 2.83, -0.5, 0.5, 0x43493500),
            (2.0, 0.0, 0.0, 2.0, 0x42ec6e00),
            (0.0, 0.0, 0.0, 0.0, 0x421bc400),
            (6.0, 0.0, 0.0, 0.0, 0x4383b600),
            (1.0, 0.5, 0.25, 3.0, 0x432e9800),
            (12.0, 3.0, -1.0, 4.0, 0x43b9bf00),
            (0.5, 0.0, 0.0, 0.125, 0x421bc400),
        ];
        let t = ramp_texture();
        for (x1, y1, x2, y2, bits) in h200 {
            let q = Lookup {
                lod: Lod::Grad([x1 / 16.0, y1 / 16.0, 0.0], [x2 / 16.0, y2 / 16.0, 0.0]),
                ..lookup2([0.53, 0.47])
            };
            let got = t.sample(&Texmem::new(&NoMemory), &q).unwrap()[0];
            assert_eq!(
                got,
                bits,
                "({x1}, {y1}), ({x2}, {y2}): mock {} H200 {}",
                f32::from_bits(got),
                f32::from_bits(bits)
            );
        }
    }

    #[test]
    fn one_d_linear_border_weighs_half_the_border_colour() {
        // texture_probe, section 3: "linear border" on the H200, bit for bit.
        let mut t = float_texture(&[10.0, 11.0, 12.0, 13.0], 4, 1, true, AddressMode::Border);
        t.sampler.normalized_coords = true;
        t.sampler.border = [-1.0; 4];
        let got: Vec<u32> = [-0.05f32, 0.01, 0.5, 0.97, 1.02, 1.3]
            .iter()
            .map(|x| tex1(&t, *x).to_bits())
            .collect();
        let h200 = [
            0x3f2d0000, 0x3ffb8000, 0x40a80000, 0x40548000, 0x3ffa0000, 0xbf800000,
        ];
        assert_eq!(got, h200);
    }

    #[test]
    fn layers_clamp_as_unsigned_and_linear_memory_reads_zero_past_its_ends() {
        let mut t = float_texture(&[1.0, 2.0, 3.0], 1, 1, false, AddressMode::Clamp);
        t.image.layered = true;
        t.image.depth = 3;
        t.image.slice_pitch = 4;
        let layer = |l: i64| {
            let q = Lookup {
                offset: [0; 3],
                dims: 1,
                coords: [0.5, 0.0, 0.0],
                layer: Some(l),
                cube: false,
                lod: Lod::Base,
            };
            f32::from_bits(t.sample(&Texmem::new(&NoMemory), &q).unwrap()[0])
        };
        assert_eq!(
            [layer(-1), layer(0), layer(2), layer(3)],
            [3.0, 1.0, 3.0, 3.0]
        );
        // Through a view, float layers clamp to the view's last layer, which reads 0
        // where the array lacks it (the H200: probe views, layers-past-the-end, a view of
        // layers 0..3 of 4 reads layer 3 at -1, 4 and 5; views-two-past, one of layers
        // 5..5 of 4 reads 0 at -1..5); integer coordinates read 0 past the array's.
        let through = |first: u64, count: u64, l: i64| {
            let mut v = t.clone();
            let Storage::Array(texels) = &t.image.storage else {
                unreachable!()
            };
            v.image.storage = Storage::View {
                texels: texels.clone(),
                origin: first * 4,
                blocks: None,
                view_layers: Some(count),
            };
            v.image.depth = 3u64.saturating_sub(first).min(count);
            let q = Lookup {
                offset: [0; 3],
                dims: 1,
                coords: [0.5, 0.0, 0.0],
                layer: Some(l),
                cube: false,
                lod: Lod::Base,
            };
            let mem = Texmem::new(&NoMemory);
            let float = f32::from_bits(v.sample(&mem, &q).unwrap()[0]);
            let int = f32::from_bits(v.fetch(&mem, 1, [0; 3], [0; 3], Some(l)).unwrap()[0]);
            (float, int)
        };
        let all = |first, count| [-1, 0, 1, 2, 3, 4].map(|l| through(first, count, l));
        assert_eq!(
            all(0, 3),
            [
                (3.0, 0.0),
                (1.0, 1.0),
                (2.0, 2.0),
                (3.0, 3.0),
                (3.0, 0.0),
                (3.0, 0.0)
            ]
        );
        assert_eq!(all(4, 1), [(0.0, 0.0); 6]);
        assert_eq!(all(4, 97), [(0.0, 0.0); 6]);
        let mut lin = float_texture(&[1.0], 8, 1, false, AddressMode::Clamp);
        lin.image.storage = Storage::Device(0x1000);
        // Past the ends nothing is read (NoMemory would fault): zero.
        assert_eq!(
            lin.fetch(&Texmem::new(&NoMemory), 1, [-1, 0, 0], [0; 3], None)
                .unwrap(),
            [0; 4]
        );
        assert_eq!(
            lin.fetch(&Texmem::new(&NoMemory), 1, [8, 0, 0], [0; 3], None)
                .unwrap(),
            [0; 4]
        );
        assert!(lin
            .fetch(&Texmem::new(&NoMemory), 1, [7, 0, 0], [0; 3], None)
            .is_err());
    }

    #[test]
    fn normalized_coordinates_keep_21_fraction_bits() {
        // Recorded on the H200 (a 96-texel ramp of texel indices, linear, clamp): the
        // exact u * 96 lies past the half of its 1/256 step, yet the weight rounds down.
        let ramp: Vec<f32> = (0..96).map(|k| k as f32).collect();
        let mut t = float_texture(&ramp, 96, 1, true, AddressMode::Clamp);
        t.sampler.normalized_coords = true;
        for (u, h200) in [
            (0x3e21_3abc, 14.613_281f32),
            (0x3f51_9eab, 78.105_47),
            (0x3f02_7157, 48.414_063),
        ] {
            let u = f32::from_bits(u);
            assert_eq!(tex1(&t, u), h200, "u = {u}");
        }
    }

    /// CU_TRSF_SRGB with linear filtering of an 8 x 1 u8x4 texture (each texel one value
    /// in all four channels) between texels by halves and by 3/4 and 1/4, as the H200 read
    /// it (probe texel_formats, srgb-linear): the decoded colours cut to the larger
    /// texel's precision before the blend, the alpha blended as 16-bit UNORM.
    #[test]
    fn srgb_blends_share_the_larger_texels_exponent() {
        let tex = u8_texture(&[&[0, 255, 0, 128, 64, 192, 10, 250]], true);
        let read = |x: f32| {
            let q = lookup2([x, 0.5]);
            let got = tex.sample(&Texmem::new(&NoMemory), &q).unwrap();
            (got[0], got[3])
        };
        // (colour, alpha) at texel i + 1 (halves) and i + 0.75 (3/4 of texel i).
        let halves = [
            (0x3f000000, 0x3f000080),
            (0x3f000000, 0x3f000080),
            (0x3ddd0000, 0x3e808081),
            (0x3e088000, 0x3ec0c0c1),
            (0x3e940000, 0x3f008081),
            (0x3e870000, 0x3ecacacb),
            (0x3ef40000, 0x3f028283),
        ];
        let quarters = [
            (0x3e800000, 0x3e800080),
            (0x3f400000, 0x3f3fffc0),
            (0x3d5d0000, 0x3e008081),
            (0x3e32c000, 0x3ee0e0e1),
            (0x3e2e0000, 0x3ec0c0c1),
            (0x3eca8000, 0x3f131393),
            (0x3e740000, 0x3e8c8c8d),
        ];
        for i in 0..7 {
            assert_eq!(read(i as f32 + 1.0), halves[i], "halfway past texel {i}");
            assert_eq!(
                read(i as f32 + 0.75),
                quarters[i],
                "a quarter past texel {i}"
            );
        }
    }

    /// The sRGB decode at the codes a per-value rounding of the IEC formula gets one step
    /// wrong, as the H200 read them (probe texel_formats, srgb-u8): each group of 8 codes
    /// shares its largest value's exponent (`srgb_to_linear`).
    #[test]
    fn srgb_codes_share_their_groups_exponent() {
        for (n, h200) in [
            (15u32, 0x3b9c0000u32),
            (19, 0x3bd60000),
            (66, 0x3d600000),
            (70, 0x3d7a0000),
            (186, 0x3efc0000),
            (250, 0x3f740000),
            (252, 0x3f7a0000),
            (253, 0x3f7c0000),
        ] {
            let got = srgb_to_linear(n as f32 / 255.0).to_bits();
            assert_eq!(got, h200, "code {n}: {got:#x}");
        }
        // The first codes: the linear segment on the grid 2^-14 (20n / 65536).
        for n in 0..=12u32 {
            assert_eq!(srgb_to_linear(n as f32 / 255.0), n as f32 * 20.0 / 65536.0);
        }
    }

    /// A u8x4 texture over `rows` (texel values, each in all four channels), read as
    /// normalized floats with linear filtering, sRGB-decoded or not.
    fn u8_texture(rows: &[&[u8]], srgb: bool) -> TextureObject {
        let (w, h) = (rows[0].len(), rows.len());
        let bytes: Vec<u8> = rows
            .iter()
            .flat_map(|r| r.iter())
            .flat_map(|v| [*v; 4])
            .collect();
        let mut tex = byte_texture(&bytes, w, h, ChannelKind::Unsigned, AddressMode::Clamp);
        tex.sampler.srgb = srgb;
        tex
    }

    /// A `w` x `h` texture of 4-channel 8-bit texels of `kind` holding `bytes`, read as
    /// normalized floats with linear filtering, addressed by `mode`.
    fn byte_texture(
        bytes: &[u8],
        w: usize,
        h: usize,
        kind: ChannelKind,
        mode: AddressMode,
    ) -> TextureObject {
        let t = Texels::zeroed(bytes.len()).unwrap();
        assert!(t.write(0, bytes));
        let mut tex = float_texture(&vec![0.0; w * h], w as u64, h as u64, true, mode);
        tex.image.format = Format {
            kind,
            bits: 8,
            channels: 4,
        };
        tex.image.storage = Storage::Array(Arc::new(t));
        tex.sampler.read_normalized = true;
        tex
    }

    #[test]
    fn s8_linear_filtering_takes_any_border_colour() {
        // A signed 8-bit texture blends its integers (`Stored::Snorm`); a border colour far
        // out of range saturates rather than overflowing the rescaling.
        let texels = [0x80, 0x7f, 0x01, 0xff, 0x7f, 0x80, 0xff, 0x01];
        let mut tex = byte_texture(&texels, 2, 1, ChannelKind::Signed, AddressMode::Border);
        tex.sampler.border = [1e30, -1e30, f32::NAN, 0.5];
        let got = tex
            .sample(&Texmem::new(&NoMemory), &lookup2([0.25, 0.5]))
            .unwrap();
        assert_eq!(f32::from_bits(got[0]), 1.0, "{got:x?}");
        assert_eq!(f32::from_bits(got[1]), -1.0, "{got:x?}");
        // Between the two texels, -128 and 127 by halves: S = 128 (-128 + 127) = -128,
        // k = S + (((S >> 4) 257 + 1024) >> 11) = -129.
        let got = tex
            .sample(&Texmem::new(&NoMemory), &lookup2([1.0, 0.5]))
            .unwrap();
        assert_eq!(got[0], ((-129.0f64 / 32767.0) as f32).to_bits());
    }

    #[test]
    fn u8_linear_filtering_blends_in_16_bits() {
        // Probe texel_formats, srgb-exponents-bc-float, flags 0: the H200's reads.
        let tex = u8_texture(&[&[0, 255]], false);
        let got = tex
            .sample(&Texmem::new(&NoMemory), &lookup2([1.0, 0.5]))
            .unwrap();
        assert_eq!(got[0], 0x3f000080, "0 and 255 by halves: 32768/65535");
        let tex = u8_texture(&[&[128, 64]], false);
        let got = tex
            .sample(&Texmem::new(&NoMemory), &lookup2([0.75, 0.5]))
            .unwrap();
        assert_eq!(got[0], 0x3ee0e0e1, "3/4 of 128 and 1/4 of 64: 112/255");
    }

    #[test]
    fn srgb_blends_leave_out_texels_of_weight_0() {
        // Probe texel_formats, srgb-exponents-bc-float: 64 and 128 by halves, a row of
        // 255 (decoded 1.0) below at weight 0, read 0x3e088000 on the H200, as without
        // the row (a grid of 2^-10, not the 1/128 that 1.0's exponent would give).
        let tex = u8_texture(&[&[64, 128], &[255, 255]], true);
        let got = tex
            .sample(&Texmem::new(&NoMemory), &lookup2([1.0, 0.5]))
            .unwrap();
        assert_eq!((got[0], got[3]), (0x3e088000, 0x3ec0c0c1));
    }

    #[test]
    fn weighted_sums_round_halves_away_from_zero() {
        // simple_texture's rotated pixel (96, 0) on the H200: weights (29, 43, 75, 109)
        // over these texels sum to exactly half way between two floats.
        let texels = [54.0f32, 61.0, 67.0, 74.0].map(|k| k / 251.0);
        let w = [29.0, 43.0, 75.0, 109.0];
        let exact: f64 = texels
            .iter()
            .zip(w)
            .map(|(t, w)| *t as f64 * w)
            .sum::<f64>()
            / 256.0;
        assert_ne!(
            exact as f32, 0.268_924_33,
            "to nearest even goes the other way"
        );
        assert_eq!(round_half_away(exact), 0.268_924_33);
        assert_eq!(round_half_away(-exact), -0.268_924_33);
        assert_eq!(round_half_away(0.1), 0.1);
    }

    #[test]
    fn point_sampling_addresses_by_mode() {
        let vals = [10.0, 11.0, 12.0, 13.0];
        let clamp = float_texture(&vals, 4, 1, false, AddressMode::Clamp);
        assert_eq!(tex1(&clamp, -3.0), 10.0);
        assert_eq!(tex1(&clamp, 9.0), 13.0);
        let border = float_texture(&vals, 4, 1, false, AddressMode::Border);
        assert_eq!(tex1(&border, -0.5), 0.0);
        assert_eq!(tex1(&border, 3.9), 13.0);
        let mut wrap = float_texture(&vals, 4, 1, false, AddressMode::Wrap);
        wrap.sampler.normalized_coords = true;
        assert_eq!(tex1(&wrap, 1.0 + 0.3), 11.0);
        assert_eq!(tex1(&wrap, -0.1), 13.0);
        let mut mirror = float_texture(&vals, 4, 1, false, AddressMode::Mirror);
        mirror.sampler.normalized_coords = true;
        assert_eq!(tex1(&mirror, 1.1), 13.0);
        assert_eq!(tex1(&mirror, 1.9), 10.0);
    }

    #[test]
    fn gather_returns_the_footprint_counter_clockwise_from_lower_left() {
        let t = float_texture(&[1.0, 2.0, 3.0, 4.0], 2, 2, false, AddressMode::Clamp);
        let g = t
            .gather(&Texmem::new(&NoMemory), &lookup2([1.0, 1.0]), 0)
            .unwrap()
            .map(f32::from_bits);
        assert_eq!(g, [3.0, 4.0, 2.0, 1.0]);
    }

    #[test]
    fn normalized_reads_map_integers_to_unit_range() {
        let u8f = Format {
            kind: ChannelKind::Unsigned,
            bits: 8,
            channels: 2,
        };
        let c = channels(u8f, &[255, 51], true).map(f32::from_bits);
        assert_eq!(c, [1.0, 0.2, 0.0, 0.0]);
        let s16 = Format {
            kind: ChannelKind::Signed,
            bits: 16,
            channels: 1,
        };
        let c = channels(s16, &(-32768i16).to_le_bytes(), true);
        assert_eq!(f32::from_bits(c[0]), -1.0);
        let c = channels(s16, &(-5i16).to_le_bytes(), false);
        assert_eq!(c[0] as i32, -5);
    }

    #[test]
    fn seamless_texels_continue_into_the_neighbouring_face() {
        // +z (4), n = 4: one past its left edge (x = -1 side) lies on -x (1), whose s is
        // z/|x|: its right column; the row keeps its place along the edge.
        assert_eq!(seamless_texel(4, -1, 0, 4), Some((1, 3, 0)));
        assert_eq!(seamless_texel(4, -1, 3, 4), Some((1, 3, 3)));
        // One past +z's top edge (t = -y, so y > 0): +y (2), whose t is z/|y|: its
        // bottom row.
        assert_eq!(seamless_texel(4, 2, -1, 4), Some((2, 2, 3)));
        // Inside: itself; past a corner or further out: none.
        assert_eq!(seamless_texel(0, 1, 2, 4), Some((0, 1, 2)));
        assert_eq!(seamless_texel(0, -1, -1, 4), None);
        assert_eq!(seamless_texel(0, -2, 0, 4), None);
        // Every texel one past every edge of every face lands on an edge texel of
        // another face.
        for f in 0..6u64 {
            for k in 0..4i64 {
                for (i, j) in [(-1, k), (4, k), (k, -1), (k, 4)] {
                    let (g, x, y) = seamless_texel(f, i, j, 4).unwrap();
                    assert_ne!(g, f);
                    assert!(x == 0 || x == 3 || y == 0 || y == 3, "{f} {i} {j}");
                }
            }
        }
        // A zero direction's derivatives on a face: none.
        assert_eq!(cube_face_gradient([0.0; 3], [1.0; 3]), [0.0; 3]);
    }

    #[test]
    fn texels_refuse_out_of_range_access() {
        let t = Texels::zeroed(8).unwrap();
        assert!(!t.write(6, &[1, 2, 3]));
        assert!(t.write(5, &[1, 2, 3]));
        let mut b = [0u8; 4];
        assert!(!t.read(u64::MAX, &mut b));
        assert!(t.read(4, &mut b));
        assert_eq!(b, [0, 1, 2, 3]);
    }

    #[test]
    fn odd_directions_and_levels_of_detail_never_panic() {
        let mut t = float_texture(&[1.0; 16], 4, 4, true, AddressMode::Wrap);
        t.levels = vec![float_texture(&[2.0; 4], 2, 2, true, AddressMode::Wrap).image];
        let specials = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            3e38,
        ];
        for (bias, lo, hi) in [
            (0.0, 0.0, 1.0),
            (f32::NAN, 2.0, -1.0),
            (1e30, f32::NAN, f32::NAN),
        ] {
            t.sampler.mipmap = MipmapSampler {
                linear: true,
                bias,
                min_clamp: lo,
                max_clamp: hi,
                max_anisotropy: 0,
            };
            for x in specials {
                for lod in specials {
                    for cube in [false, true] {
                        let q = Lookup {
                            offset: [0; 3],
                            dims: 2,
                            coords: [x, -x, 0.5],
                            layer: Some(-1),
                            cube,
                            lod: Lod::Level(lod),
                        };
                        // A plain 2D image read as a cube: every face reads its one
                        // layer; nothing panics.
                        let _ = t.sample(&Texmem::new(&NoMemory), &q);
                        let g = Lookup {
                            lod: Lod::Grad([x, lod, 0.0], [lod, x, 0.0]),
                            cube: false,
                            ..q
                        };
                        let _ = t.sample(&Texmem::new(&NoMemory), &g);
                        let _ = t.gather(&Texmem::new(&NoMemory), &q, 3);
                    }
                }
            }
        }
        assert_eq!(cube_face(0.0, 0.0, 0.0).0, 4);
        assert_eq!(cube_face(f32::NAN, 1.0, 0.0).0, 1);
        assert_eq!(t.level_size(-3, 0), 4);
        assert_eq!(t.level_size(1, 0), 2);
        assert_eq!(t.level_size(9, 1), 4);
    }

    /// ci/explore/grad_lod.cu's texture: 256 x 256 texels, 9 levels, level L holding L,
    /// point filtering inside a level and linear between levels, so that a sample reads
    /// the level of detail it was taken at (clamped to [0, 8]).
    fn level_texture() -> TextureObject {
        let level = |l: u32| {
            let n = 256u64 >> l;
            float_texture(
                &vec![l as f32; (n * n) as usize],
                n,
                n,
                false,
                AddressMode::Clamp,
            )
        };
        let mut t = level(0);
        t.levels = (1..9).map(|l| level(l).image).collect();
        t.sampler.normalized_coords = true;
        t.sampler.mipmap = MipmapSampler {
            linear: true,
            bias: 0.0,
            min_clamp: 0.0,
            max_clamp: 8.0,
            max_anisotropy: 0,
        };
        t
    }

    /// ci/explore/grad_lod2.cu's texture for its trilinear blends: 64 x 64 texels, 7
    /// levels, level L's texel (x, y) holding (73 x + 151 y + 199 L) % 256, normalized
    /// clamped coordinates, linear filtering between levels and, with `linear`, inside.
    fn blend_texture(linear: bool) -> TextureObject {
        let level = |l: u64| {
            let n = 64u64 >> l;
            let v: Vec<f32> = (0..n * n)
                .map(|i| ((73 * (i % n) + 151 * (i / n) + 199 * l) % 256) as f32)
                .collect();
            float_texture(&v, n, n, linear, AddressMode::Clamp)
        };
        let mut t = level(0);
        t.levels = (1..7).map(|l| level(l).image).collect();
        t.sampler.normalized_coords = true;
        t.sampler.mipmap = MipmapSampler {
            linear: true,
            bias: 0.0,
            min_clamp: 0.0,
            max_clamp: 6.0,
            max_anisotropy: 0,
        };
        t
    }

    /// ci/explore/grad_lod2.cu's record on the H200 (ptx/tests/data/grad_lod2_h200.txt),
    /// every sample bit for bit: the trilinear blends (section T, 7680 samples, linear and
    /// point filtering inside the levels), the single vectors along x (section L, 2048),
    /// the gradient pairs (G: whole texels, A: angles, E: equal lengths).
    #[test]
    fn denser_record_blends_exactly_and_bounds_the_level_of_detail() {
        let flat = level_texture();
        let blends = [blend_texture(false), blend_texture(true)];
        let mem = Texmem::new(&NoMemory);
        let read = |t: &TextureObject, q: &Lookup| f32::from_bits(t.sample(&mem, q).unwrap()[0]);
        let grad = |dx: [f32; 2], dy: [f32; 2]| Lookup {
            lod: Lod::Grad([dx[0], dx[1], 0.0], [dy[0], dy[1], 0.0]),
            ..lookup2([0.5, 0.5])
        };
        // As grad_lod2.cu builds them: lengths (floats) at angles in degrees, in double,
        // then to float, over the width 256.
        let polar = |a: f32, b: f32, phi: f64, rot: f64| {
            let (tr, pr) = (rot.to_radians(), (rot + phi).to_radians());
            let g = |len: f32, angle: f64| {
                [
                    (len as f64 * angle.cos() / 256.0) as f32,
                    (len as f64 * angle.sin() / 256.0) as f32,
                ]
            };
            grad(g(a, tr), g(b, pr))
        };
        let mut tally = std::collections::BTreeMap::<(char, i64), u32>::new();
        for line in include_str!("../tests/data/grad_lod2_h200.txt").lines() {
            if line.starts_with('#') {
                continue;
            }
            let mut words = line.split(' ');
            let section = words.next().unwrap().chars().next().unwrap();
            let f: Vec<f32> = words.map(|w| w.parse().unwrap()).collect();
            let (got, h200) = match (section, &f[..]) {
                ('T', &[linear, u, v, lod, h200]) => {
                    let q = Lookup {
                        lod: Lod::Level(lod),
                        ..lookup2([u, v])
                    };
                    (read(&blends[linear as usize], &q), h200)
                }
                ('L', &[x, h200]) => (read(&flat, &grad([x / 256.0, 0.0], [0.0; 2])), h200),
                ('G', &[x1, y1, x2, y2, h200]) => {
                    let q = grad([x1 / 256.0, y1 / 256.0], [x2 / 256.0, y2 / 256.0]);
                    (read(&flat, &q), h200)
                }
                ('A', &[a, b, phi, rot, h200]) => {
                    (read(&flat, &polar(a, b, phi as f64, rot as f64)), h200)
                }
                ('E', &[a, phi, rot, h200]) => {
                    (read(&flat, &polar(a, a, phi as f64, rot as f64)), h200)
                }
                _ => panic!("{line}"),
            };
            let diff = ((got as f64 - h200 as f64) * 256.0).round() as i64;
            *tally.entry((section, diff)).or_default() += 1;
        }
        let count = |s: char, d: i64| tally.get(&(s, d)).copied().unwrap_or(0);
        let matched = ['T', 'L', 'G', 'A', 'E'].map(|s| count(s, 0));
        assert_eq!(matched, [7680, 2048, 29575, 11712, 3705], "{tally:?}");
    }

    #[test]
    fn grad_level_of_detail_fits_the_h200s_record() {
        let t = level_texture();
        let (mut rows, mut matched, mut singles) = (0, 0, 0);
        for line in include_str!("../tests/data/grad_lod_h200.txt").lines() {
            if line.starts_with('#') {
                continue;
            }
            let f: Vec<f64> = line.split(' ').map(|w| w.parse().unwrap()).collect();
            let [a, b, phi, rot, h200] = f[..] else {
                panic!("{line}")
            };
            // As grad_lod.cu builds them: dx of length a at angle rot, dy of length b
            // at rot + phi, in texels over the width 256, in double, then to float.
            let (tr, pr) = (rot.to_radians(), (rot + phi).to_radians());
            let g = |len: f64, angle: f64| {
                [
                    (len * angle.cos() / 256.0) as f32,
                    (len * angle.sin() / 256.0) as f32,
                    0.0,
                ]
            };
            let q = Lookup {
                lod: Lod::Grad(g(a, tr), g(b, pr)),
                ..lookup2([0.5, 0.5])
            };
            let got = f32::from_bits(t.sample(&Texmem::new(&NoMemory), &q).unwrap()[0]);
            rows += 1;
            if got as f64 == h200 {
                matched += 1;
                singles += (b == 0.0) as u32;
            }
        }
        assert_eq!(rows, 3328);
        // Every sample, the 416 single vectors (b = 0) among them.
        assert_eq!((matched, singles), (3328, 416));
    }
}
