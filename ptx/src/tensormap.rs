//! Tensor maps (`CUtensorMap`): what `cuTensorMapEncodeTiled` and `cuTensorMapEncodeIm2col`
//! describe, checked against the requirements cuda.h lists for them, and their 128 bytes as
//! the mock writes them (PTX and CUDA keep them opaque; kernels only hand their address to
//! `cp.async.bulk.tensor`, which `executor/asynccopy.rs` runs). Which element of the tensor
//! lands where in shared memory is [`TensorMap::for_each_element`]'s.
//!
//! Emulated: tiled maps of the 13 sm_90 element types, ranks 1 to 5, any element strides,
//! swizzles none, 32B, 64B and 128B, out-of-bound elements read as zeros or, with
//! `CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA`, as the H200's NaN; im2col
//! maps of ranks 3 to 5 (the PTX ISA's "im2col mode": pixels of the bounding box walked W
//! first, then H, D and N, each its channels), whose pixel is a multiple of 16 bytes.
//! Interleaved maps (`CU_TENSOR_MAP_INTERLEAVE_16B`/`32B`, cuda.h's NC/8HWC8 and
//! NC/16HWC16) are encoded as cuda.h and the H200 accept them; a copy moves one whose
//! box row is one interleave slice (16 or 32 bytes) and lies wholly inside the tensor,
//! each row packed as a tiled box's (`TensorMap::interleave_copyable`): what the H200
//! recorded for 32B rows inside the tensor. Boxes past the tensor's edges are not
//! emulated: the H200 neither filled them as a tiled box is filled nor completed its 16B
//! loads (runtime program tensor_interleave, recorded).
//! Refused as not supported (each saying so): im2col pixels that are not whole 16-byte
//! rows (their layout is not recorded; an interleaved map's pixel less than its slice is
//! invalid, as the H200 answers), the packed 4- and 6-bit types and the 128B atom
//! swizzles (sm_100's).

/// The mock's tag in a tensor map's first bytes: a map it did not write is refused by the
/// copies that use it.
const MAGIC: u32 = 0x4d54_4d43; // "CMTM"

pub const BYTES: usize = 128;

/// What an im2col map adds to a tiled one (`cuTensorMapEncodeIm2col`): the bounding box's
/// corners in the W, H, D dimensions (innermost first, as `pixelBoxLowerCorner` lists
/// them; rank - 2 of them), and the pixels and channels a copy takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Im2col {
    pub lower: [i32; 3],
    pub upper: [i32; 3],
    pub channels: u32,
    pub pixels: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TensorMap {
    /// `CUtensorMapDataType` (0..=12).
    pub data_type: u32,
    pub rank: u32,
    pub address: u64,
    /// Elements along each dimension, innermost first.
    pub dims: [u64; 5],
    /// Bytes between consecutive elements of each dimension: [0] is the element's size,
    /// [i] the caller's `globalStrides[i - 1]`.
    pub strides: [u64; 5],
    /// The box (tiled maps; all ones in an im2col map).
    pub box_dim: [u32; 5],
    pub element_strides: [u32; 5],
    /// `CUtensorMapInterleave`: 0 none, 1 16B, 2 32B.
    pub interleave: u32,
    /// `CUtensorMapSwizzle`: 0 none, 1 32B, 2 64B, 3 128B.
    pub swizzle: u32,
    pub l2_promotion: u32,
    /// `CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA`: loads read elements outside
    /// the tensor as the H200 does, every 16 bits 0x7ff7 (a NaN of f16, bf16 and f32 alike;
    /// runtime program tensor_oob_fill); else as zeros.
    pub nan_fill: bool,
    /// An im2col map's bounding box and sizes; None for a tiled map.
    pub im2col: Option<Im2col>,
}

/// The bytes a NaN-filling map's load gives an element outside the tensor, repeated
/// (recorded on the H200 for f32 and f16 boxes: 0x7ff77ff7 words).
pub const NAN_FILL: [u8; 2] = [0xf7, 0x7f];

/// Why a map is refused: an invalid value (CUDA_ERROR_INVALID_VALUE) or one the mock does
/// not emulate (CUDA_ERROR_NOT_SUPPORTED).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Invalid(String),
    NotSupported(String),
}

/// Bytes of an element of `CUtensorMapDataType` `t`, for the types emulated.
pub fn element_bytes(t: u32) -> Option<u64> {
    Some(match t {
        0 => 1,
        1 | 6 | 9 => 2,
        2 | 3 | 7 | 10..=12 => 4,
        4 | 5 | 8 => 8,
        _ => return None,
    })
}

/// What `cuTensorMapEncodeTiled` takes, its arrays already read (`global_strides` has
/// `rank - 1` entries, the others `rank`).
pub struct TiledArgs<'a> {
    pub data_type: u32,
    pub rank: u32,
    pub address: u64,
    pub dims: &'a [u64],
    pub global_strides: &'a [u64],
    pub box_dim: &'a [u32],
    pub element_strides: &'a [u32],
    pub interleave: u32,
    pub swizzle: u32,
    pub l2_promotion: u32,
    pub oob_fill: u32,
}

/// What `cuTensorMapEncodeIm2col` takes beyond a tiled map's common arguments (`lower`
/// and `upper` hold `rank - 2` corners); `tiled.box_dim` is unused.
pub struct Im2colArgs<'a> {
    pub tiled: TiledArgs<'a>,
    pub lower: &'a [i32],
    pub upper: &'a [i32],
    pub channels: u32,
    pub pixels: u32,
}

/// The range of an im2col corner at `rank` (cuda.h: 16-bit, 8-bit and 5-bit signed
/// offsets for ranks 3, 4 and 5).
fn corner_range(rank: u32) -> std::ops::RangeInclusive<i32> {
    match rank {
        3 => -32768..=32767,
        4 => -128..=127,
        _ => -16..=15,
    }
}

impl TensorMap {
    /// A tiled map, checked as cuda.h's requirements for cuTensorMapEncodeTiled say.
    pub fn tiled(a: &TiledArgs) -> Result<TensorMap, Refusal> {
        let invalid = |s: String| Err(Refusal::Invalid(s));
        let mut m = Self::common(a)?;
        let r = a.rank as usize;
        for i in 0..r {
            let b = a.box_dim[i];
            if b == 0 || b > 256 {
                return invalid(format!("boxDim[{i}] = {b} is outside 1..=256"));
            }
            m.box_dim[i] = b;
        }
        let esize = m.element_bytes();
        let inner = u64::from(m.box_dim[0]) * esize;
        if m.interleave == 0 {
            if inner % 16 != 0 {
                return invalid(format!(
                    "boxDim[0] * element size = {inner} bytes, not a multiple of 16"
                ));
            }
            m.check_swizzle_span(inner)?;
        } else if inner % 16 != 0 {
            // cuda.h asks this only without interleave, but the H200 refuses an
            // interleaved box whose row is 8 bytes and takes rows of 16 and 32 bytes
            // under either interleave (recorded: tensor_interleave). Which rows a copy
            // can move is the executor's (`interleave_copyable`).
            return invalid(format!(
                "boxDim[0] * element size = {inner} bytes, not a multiple of 16 (the H200 refuses it with interleave too)"
            ));
        }
        Ok(m)
    }

    /// An im2col map, checked as cuda.h's requirements for cuTensorMapEncodeIm2col say.
    pub fn im2col(a: &Im2colArgs) -> Result<TensorMap, Refusal> {
        let invalid = |s: String| Err(Refusal::Invalid(s));
        let rank = a.tiled.rank;
        if !(3..=5).contains(&rank) {
            return invalid(format!(
                "tensorRank {rank} is outside 3..=5 for an im2col map"
            ));
        }
        let mut m = Self::common(&TiledArgs {
            box_dim: &[],
            ..a.tiled
        })?;
        let n = rank as usize - 2;
        let range = corner_range(rank);
        let (mut lower, mut upper) = ([0i32; 3], [0i32; 3]);
        for i in 0..n {
            for (what, v, slot) in [
                ("pixelBoxLowerCorner", a.lower[i], &mut lower[i]),
                ("pixelBoxUpperCorner", a.upper[i], &mut upper[i]),
            ] {
                if !range.contains(&v) {
                    return invalid(format!(
                        "{what}[{i}] = {v} is outside {}..={} at rank {rank}",
                        range.start(),
                        range.end()
                    ));
                }
                *slot = v;
            }
            // The bounding box has its filter bases from lower to dim - 1 + upper.
            let hi = m.dims[i + 1] as i64 - 1 + i64::from(upper[i]);
            if hi < i64::from(lower[i]) {
                return invalid(format!(
                    "the bounding box is empty along dimension {} (corners {} and {}, size {})",
                    i + 1,
                    lower[i],
                    upper[i],
                    m.dims[i + 1]
                ));
            }
        }
        if !(1..=256).contains(&a.channels) {
            return invalid(format!(
                "channelsPerPixel {} is outside 1..=256",
                a.channels
            ));
        }
        if !(1..=1024).contains(&a.pixels) {
            return invalid(format!("pixelsPerColumn {} is outside 1..=1024", a.pixels));
        }
        let esize = m.element_bytes();
        let pixel = u64::from(a.channels) * esize;
        if m.interleave == 0 {
            m.check_swizzle_span(pixel)?;
        }
        let row = if m.interleave == 0 {
            16
        } else {
            m.interleave_bytes()
        };
        // Recorded on the H200 (probe tensor_map, interleave): an interleaved im2col map
        // whose pixel is less than the interleave's slice (4 f16 under 16B) is
        // CUDA_ERROR_INVALID_VALUE.
        if m.interleave != 0 && pixel < row {
            return invalid(format!(
                "an im2col pixel of {pixel} bytes is less than the interleave's {row}-byte slice"
            ));
        }
        if pixel % row != 0 || m.interleave != 0 && pixel != row {
            return Err(Refusal::NotSupported(format!(
                "an im2col pixel of {pixel} bytes (its shared-memory layout is not emulated: only whole 16-byte rows, or the interleave's slice)"
            )));
        }
        m.im2col = Some(Im2col {
            lower,
            upper,
            channels: a.channels,
            pixels: a.pixels,
        });
        Ok(m)
    }

    /// The checks tiled and im2col maps share, and the map without its box.
    fn common(a: &TiledArgs) -> Result<TensorMap, Refusal> {
        let invalid = |s: String| Err(Refusal::Invalid(s));
        let unsupported = |s: &str| Err(Refusal::NotSupported(s.to_string()));
        if (13..=15).contains(&a.data_type) {
            return unsupported("the packed 4- and 6-bit tensor types are not emulated");
        }
        let Some(esize) = element_bytes(a.data_type) else {
            return invalid(format!(
                "tensorDataType {} is no CUtensorMapDataType",
                a.data_type
            ));
        };
        if a.rank == 0 || a.rank > 5 {
            return invalid(format!("tensorRank {} is outside 1..=5", a.rank));
        }
        match a.interleave {
            0 => {}
            1 | 2 if a.rank < 3 => {
                return invalid(format!(
                    "an interleaved layout of rank {} (it needs 3 or more)",
                    a.rank
                ))
            }
            // cuda.h's NC/8HWC8 (16B) and NC/16HWC16 (32B) layouts: accepted with any
            // swizzle, as the H200 does even for 32B without the 32B swizzle cuda.h
            // asks for (recorded: tensor_interleave); a 32B map's address and strides
            // are 32-byte aligned (below).
            1 | 2 => {}
            i => return invalid(format!("interleave {i} is no CUtensorMapInterleave")),
        }
        match a.swizzle {
            0..=3 => {}
            // sm_100's: the H200 refuses them (probe tensor_map: 128B_ATOM_32B).
            4..=6 => return invalid("the 128B atom swizzles are sm_100's, not sm_90's".into()),
            s => return invalid(format!("swizzle {s} is no CUtensorMapSwizzle")),
        }
        if a.l2_promotion > 3 {
            return invalid(format!(
                "l2Promotion {} is no CUtensorMapL2promotion",
                a.l2_promotion
            ));
        }
        match a.oob_fill {
            0 => {}
            1 if matches!(a.data_type, 6..=12) => {}
            1 => return invalid("a NaN fill needs a floating-point tensorDataType".into()),
            f => return invalid(format!("oobFill {f} is no CUtensorMapFloatOOBfill")),
        }
        let align = if a.interleave == 2 { 32 } else { 16 };
        if a.address % align != 0 {
            return invalid(format!(
                "globalAddress {:#x} is not {align}-byte aligned",
                a.address
            ));
        }
        let r = a.rank as usize;
        let mut m = TensorMap {
            data_type: a.data_type,
            rank: a.rank,
            address: a.address,
            dims: [1; 5],
            strides: [0; 5],
            box_dim: [1; 5],
            element_strides: [1; 5],
            interleave: a.interleave,
            swizzle: a.swizzle,
            l2_promotion: a.l2_promotion,
            nan_fill: a.oob_fill == 1,
            im2col: None,
        };
        m.strides[0] = esize;
        for i in 0..r {
            let d = a.dims[i];
            if d == 0 || d > 1 << 32 {
                return invalid(format!("globalDim[{i}] = {d} is outside 1..=2^32"));
            }
            m.dims[i] = d;
            let e = a.element_strides[i];
            if e == 0 || e > 8 {
                return invalid(format!("elementStrides[{i}] = {e} is outside 1..=8"));
            }
            m.element_strides[i] = e;
        }
        for i in 0..r - 1 {
            let s = a.global_strides[i];
            if s % align != 0 || s >= 1 << 40 {
                return invalid(format!(
                    "globalStrides[{i}] = {s} is not a multiple of {align} below 2^40"
                ));
            }
            m.strides[i + 1] = s;
        }
        Ok(m)
    }

    /// cuda.h: without interleave, a swizzled box's inner dimension (`inner` bytes) fits
    /// in the swizzle's span.
    fn check_swizzle_span(&self, inner: u64) -> Result<(), Refusal> {
        let span = self.swizzle_span();
        if span != 0 && inner > span {
            return Err(Refusal::Invalid(format!(
                "the box's inner dimension ({inner} bytes) is wider than the {span}-byte swizzle"
            )));
        }
        Ok(())
    }

    pub fn element_bytes(&self) -> u64 {
        self.strides[0]
    }

    /// Bytes of an interleave's slice of C (0 without interleave).
    pub fn interleave_bytes(&self) -> u64 {
        match self.interleave {
            1 => 16,
            2 => 32,
            _ => 0,
        }
    }

    /// Why an interleaved map's copy at `coords` (`offsets`: an im2col copy's) is not
    /// emulated, if it is not: a box row other than one interleave slice, or an element
    /// outside the tensor (the H200's layout for either is not recorded; see the module's
    /// documentation). Non-interleaved maps: always copyable.
    pub fn interleave_copyable(&self, coords: &[i64], offsets: &[u16]) -> Result<(), String> {
        if self.interleave == 0 {
            return Ok(());
        }
        let slice = self.interleave_bytes();
        let row = match self.im2col {
            Some(ic) => u64::from(ic.channels) * self.element_bytes(),
            None => self.box_counts()[0] * self.element_bytes(),
        };
        if row != slice {
            return Err(format!(
                "an interleaved box whose row is {row} bytes, not the interleave's {slice}: its shared-memory layout is not emulated"
            ));
        }
        // Recorded on the H200 (runtime program tensor_interleave_inside): a box's rows
        // along W, stepped by 1, land as the mock packs them; but its next H row started
        // one W row on, not one H row (for 16B and 32B, any swizzle), and a W traversal
        // stride of 2 stepped W by 1. Until that layout is fitted, only one run of rows
        // along W, stepped by 1, is emulated.
        if self.im2col.is_none() {
            let counts = self.box_counts();
            let rank = self.rank as usize;
            if counts[2..rank].iter().any(|&n| n != 1) {
                return Err(format!(
                    "an interleaved box of more than one row of W ({:?} along the dimensions past W): the H200 does not step them as the PTX ISA's figure does (runtime program tensor_interleave_inside, recorded), not emulated",
                    &counts[2..rank]
                ));
            }
            if self.element_strides[1] != 1 {
                return Err(format!(
                    "an interleaved box with a traversal stride of {} on W: the H200 stepped W by 1 (runtime program tensor_interleave_inside, recorded), not emulated",
                    self.element_strides[1]
                ));
            }
        }
        self.for_each_element(coords, offsets, self.dims[0], |k, addr| match addr {
            Some(_) => Ok(()),
            None => Err(format!(
                "an interleaved box reaching past the tensor's edge (its element {k}): not emulated, the H200 neither fills such a box as a tiled one is filled nor completes its 16B loads (runtime program tensor_interleave, recorded)"
            )),
        })
    }

    /// Bytes the swizzle permutes 16-byte chunks within (0: no swizzle).
    pub fn swizzle_span(&self) -> u64 {
        match self.swizzle {
            1 => 32,
            2 => 64,
            3 => 128,
            _ => 0,
        }
    }

    /// Elements a tiled box holds along each dimension: the box's size over its traversal
    /// stride, rounded up (dimension 0 has no stride without interleave).
    pub fn box_counts(&self) -> [u64; 5] {
        let mut c = [1u64; 5];
        for (i, n) in c.iter_mut().enumerate().take(self.rank as usize) {
            let e = if i == 0 && self.interleave == 0 {
                1
            } else {
                self.element_strides[i]
            };
            *n = u64::from(self.box_dim[i]).div_ceil(u64::from(e));
        }
        c
    }

    /// Elements a copy moves: the box's, or an im2col map's pixels times channels.
    pub fn box_elements(&self) -> u64 {
        match self.im2col {
            Some(i) => u64::from(i.pixels) * u64::from(i.channels),
            None => self.box_counts().iter().product(),
        }
    }

    /// Bytes a copy moves (what it completes on its mbarrier).
    pub fn box_bytes(&self) -> u64 {
        self.box_elements() * self.element_bytes()
    }

    /// Every element a copy at `coords` (and, for an im2col map, `offsets`: the
    /// instruction's im2col offsets, W first) moves, in shared-memory order: `f(k, addr)`
    /// for the k-th element of the box (its bytes at `k * element size` before the
    /// swizzle), with its global address when it lies inside the tensor (`bound0`
    /// elements along dimension 0: a store's is wider, see `executor/asynccopy.rs`).
    ///
    /// Tiled: the box from `coords`, innermost dimension first, each outer dimension
    /// stepping by its traversal stride. Im2col (the PTX ISA's "im2col mode"): the filter
    /// base starts at the W, H, D coordinates and walks the bounding box (lower corner to
    /// size - 1 + upper corner, inclusive) W first by its traversal stride, wrapping to
    /// the lower corner and stepping H, then D, then N (by its stride too); each pixel read at the base
    /// plus the offsets is `channels` elements from C coordinate `coords[0]`.
    pub fn for_each_element<E>(
        &self,
        coords: &[i64],
        offsets: &[u16],
        bound0: u64,
        mut f: impl FnMut(u64, Option<u64>) -> Result<(), E>,
    ) -> Result<(), E> {
        let rank = self.rank as usize;
        let bound = |d: usize| if d == 0 { bound0 } else { self.dims[d] };
        // The global address of tensor coordinates `g`, if inside.
        let locate = |g: &[i64; 5]| -> Option<u64> {
            let mut addr = self.address;
            for (d, &x) in g.iter().enumerate().take(rank) {
                if x < 0 || x as u64 >= bound(d) {
                    return None;
                }
                addr = addr.wrapping_add((x as u64).wrapping_mul(self.strides[d]));
            }
            Some(addr)
        };
        let mut g = [0i64; 5];
        if let Some(ic) = self.im2col {
            let n = rank - 2;
            let mut base = [0i64; 5];
            base[..rank].copy_from_slice(&coords[..rank]);
            let mut k = 0u64;
            for _ in 0..ic.pixels {
                g[..rank].copy_from_slice(&base[..rank]);
                for s in 0..n {
                    g[s + 1] += i64::from(offsets.get(s).copied().unwrap_or(0));
                }
                for ch in 0..u64::from(ic.channels) {
                    g[0] = base[0] + ch as i64;
                    f(k, locate(&g))?;
                    k += 1;
                }
                // The next pixel: W first, wrapping inside the bounding box.
                let mut s = 0;
                loop {
                    if s == n {
                        // N steps by its traversal stride too: the ISA names only D, H
                        // and W, but the H200 strides N (recorded: tensor_im2col).
                        base[rank - 1] += i64::from(self.element_strides[rank - 1]);
                        break;
                    }
                    let hi = self.dims[s + 1] as i64 - 1 + i64::from(ic.upper[s]);
                    base[s + 1] += i64::from(self.element_strides[s + 1]);
                    if base[s + 1] <= hi {
                        break;
                    }
                    base[s + 1] = i64::from(ic.lower[s]);
                    s += 1;
                }
            }
            return Ok(());
        }
        let counts = self.box_counts();
        let steps = {
            let mut e = [1i64; 5];
            for (d, s) in e.iter_mut().enumerate().take(rank) {
                if d > 0 || self.interleave != 0 {
                    *s = i64::from(self.element_strides[d]);
                }
            }
            e
        };
        let total: u64 = counts.iter().product();
        let mut idx = [0u64; 5];
        for k in 0..total {
            for d in 0..rank {
                g[d] = coords[d] + idx[d] as i64 * steps[d];
            }
            f(k, locate(&g))?;
            // The next element: the innermost coordinate first.
            for d in 0..rank {
                idx[d] += 1;
                if idx[d] < counts[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        Ok(())
    }

    /// Where the byte at shared-memory address `a` of a box lands: the 16-byte chunk's
    /// index within its span XORed with the index of the 128-byte row it lies in, as
    /// address bits (CUDA's 32B, 64B and 128B patterns: bits 4.. with bits 7..).
    pub fn swizzled(&self, a: u64) -> u64 {
        let bits = match self.swizzle {
            1 => 1,
            2 => 2,
            3 => 3,
            _ => return a,
        };
        let mask = ((1u64 << bits) - 1) << 4;
        a ^ ((a >> 3) & mask)
    }

    pub fn encode(&self) -> [u8; BYTES] {
        let mut b = [0u8; BYTES];
        b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        b[4] = self.rank as u8;
        b[5] = self.data_type as u8;
        b[6] = self.swizzle as u8;
        b[7] = self.l2_promotion as u8;
        b[8..16].copy_from_slice(&self.address.to_le_bytes());
        for i in 0..5 {
            b[16 + 8 * i..24 + 8 * i].copy_from_slice(&self.dims[i].to_le_bytes());
            b[56 + 8 * i..64 + 8 * i].copy_from_slice(&self.strides[i].to_le_bytes());
            b[96 + 2 * i..98 + 2 * i].copy_from_slice(&(self.box_dim[i] as u16).to_le_bytes());
            b[106 + i] = self.element_strides[i] as u8;
        }
        // Byte 112: the NaN fill (bit 0), the interleave (bits 1-2), im2col (bit 3); then
        // an im2col map's corners (16-bit each), pixels (16-bit) and channels less one.
        b[112] = self.nan_fill as u8
            | ((self.interleave as u8 & 3) << 1)
            | (self.im2col.is_some() as u8) << 3;
        if let Some(ic) = self.im2col {
            for i in 0..3 {
                b[113 + 2 * i..115 + 2 * i].copy_from_slice(&(ic.lower[i] as i16).to_le_bytes());
                b[119 + 2 * i..121 + 2 * i].copy_from_slice(&(ic.upper[i] as i16).to_le_bytes());
            }
            b[125..127].copy_from_slice(&(ic.pixels as u16).to_le_bytes());
            b[127] = ic.channels.wrapping_sub(1) as u8;
        }
        b
    }

    /// The map `encode` wrote, or None for bytes it did not write or fields a copy
    /// cannot use.
    pub fn decode(b: &[u8; BYTES]) -> Option<TensorMap> {
        let m = Self::fields(b)?;
        // What `tiled` and `im2col` guarantee, checked again: the bytes live in program
        // memory, and `tensormap.replace` changes fields one at a time.
        let r = m.rank as usize;
        let ok = (1..=5).contains(&m.rank)
            && element_bytes(m.data_type) == Some(m.strides[0])
            && m.swizzle <= 3
            && m.interleave <= 2
            && (m.interleave == 0 || m.rank >= 3)
            && (0..r).all(|i| {
                (1..=1 << 32).contains(&m.dims[i])
                    && (1..=256).contains(&m.box_dim[i])
                    && (1..=8).contains(&m.element_strides[i])
            })
            && match m.im2col {
                None => true,
                Some(ic) => {
                    (3..=5).contains(&m.rank)
                        && (1..=1024).contains(&ic.pixels)
                        && (0..r - 2).all(|i| {
                            m.dims[i + 1] as i64 - 1 + i64::from(ic.upper[i])
                                >= i64::from(ic.lower[i])
                        })
                }
            };
        ok.then_some(m)
    }

    /// The fields of bytes `encode` wrote, as they are (a map being rewritten by
    /// `tensormap.replace` may be inconsistent between two of its instructions).
    pub fn fields(b: &[u8; BYTES]) -> Option<TensorMap> {
        if u32::from_le_bytes(b[0..4].try_into().ok()?) != MAGIC {
            return None;
        }
        Some(Self::fields_of_any(b))
    }

    /// What the fields would be if `encode` had written `b`, whoever did.
    pub fn fields_of_any(b: &[u8; BYTES]) -> TensorMap {
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or_default());
        let i16_at = |o: usize| i32::from(i16::from_le_bytes([b[o], b[o + 1]]));
        let mut m = TensorMap {
            data_type: u32::from(b[5]),
            rank: u32::from(b[4]),
            address: u64_at(8),
            dims: [0; 5],
            strides: [0; 5],
            box_dim: [0; 5],
            element_strides: [0; 5],
            interleave: u32::from(b[112] >> 1 & 3),
            swizzle: u32::from(b[6]),
            l2_promotion: u32::from(b[7]),
            nan_fill: b[112] & 1 != 0,
            im2col: (b[112] & 8 != 0).then(|| Im2col {
                lower: [i16_at(113), i16_at(115), i16_at(117)],
                upper: [i16_at(119), i16_at(121), i16_at(123)],
                pixels: u32::from(u16::from_le_bytes([b[125], b[126]])),
                channels: u32::from(b[127]) + 1,
            }),
        };
        for i in 0..5 {
            m.dims[i] = u64_at(16 + 8 * i);
            m.strides[i] = u64_at(56 + 8 * i);
            m.box_dim[i] = u32::from(u16::from_le_bytes([b[96 + 2 * i], b[97 + 2 * i]]));
            m.element_strides[i] = u32::from(b[106 + i]);
        }
        m
    }

    /// `cuTensorMapReplaceAddress`: the same map over another address.
    pub fn with_address(&self, address: u64) -> Result<TensorMap, Refusal> {
        let align = if self.interleave == 2 { 32 } else { 16 };
        if address % align != 0 {
            return Err(Refusal::Invalid(format!(
                "globalAddress {address:#x} is not {align}-byte aligned"
            )));
        }
        Ok(TensorMap { address, ..*self })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args<'a>(
        dims: &'a [u64],
        strides: &'a [u64],
        boxd: &'a [u32],
        es: &'a [u32],
    ) -> TiledArgs<'a> {
        TiledArgs {
            data_type: 7,
            rank: dims.len() as u32,
            address: 0x7000_0000,
            dims,
            global_strides: strides,
            box_dim: boxd,
            element_strides: es,
            interleave: 0,
            swizzle: 0,
            l2_promotion: 0,
            oob_fill: 0,
        }
    }

    #[test]
    fn a_map_round_trips_through_its_bytes() {
        let mut a = args(&[100, 30], &[400], &[32, 8], &[1, 2]);
        a.swizzle = 3;
        let m = TensorMap::tiled(&a).unwrap();
        assert_eq!(TensorMap::decode(&m.encode()), Some(m));
        assert_eq!(m.box_counts()[..2], [32, 4]);
        let mut other = m.encode();
        other[0] ^= 1;
        assert_eq!(TensorMap::decode(&other), None);
    }

    #[test]
    fn the_requirements_of_cuda_h_are_checked() {
        let bad = |a: TiledArgs| matches!(TensorMap::tiled(&a), Err(Refusal::Invalid(_)));
        assert!(
            bad(args(&[100, 30], &[404], &[32, 8], &[1, 1])),
            "stride not a multiple of 16"
        );
        assert!(
            bad(args(&[100, 30], &[400], &[2, 8], &[1, 1])),
            "inner box of 8 bytes"
        );
        assert!(
            bad(args(&[100, 30], &[400], &[32, 300], &[1, 1])),
            "box over 256"
        );
        assert!(
            bad(args(&[0, 30], &[400], &[32, 8], &[1, 1])),
            "an empty dimension"
        );
        assert!(
            bad(args(&[100, 30], &[400], &[32, 8], &[1, 9])),
            "element stride 9"
        );
        let mut a = args(&[100, 30], &[400], &[64, 8], &[1, 1]);
        a.swizzle = 3;
        assert!(bad(a), "256 inner bytes under a 128-byte swizzle");
        let mut a = args(&[100, 30], &[400], &[32, 8], &[1, 1]);
        a.interleave = 1;
        assert!(bad(a), "interleave at rank 2");
        let mut a = args(&[8, 30, 4], &[32, 960], &[2, 8, 2], &[1, 1, 1]);
        a.interleave = 1;
        assert!(
            bad(a),
            "an interleaved row of 8 bytes (the H200 refuses it)"
        );
        let mut a = args(&[8, 30, 4], &[48, 1440], &[8, 8, 2], &[1, 1, 1]);
        a.interleave = 2;
        a.swizzle = 1;
        assert!(bad(a), "32B interleave with a stride of 48");
        let mut a = args(&[8, 30, 4], &[32, 960], &[8, 8, 2], &[1, 1, 1]);
        a.interleave = 2;
        a.swizzle = 1;
        a.address += 16;
        assert!(bad(a), "32B interleave 16 bytes off 32");
    }

    #[test]
    fn interleaved_maps_encode_and_copy_whole_slices_inside_the_tensor() {
        for (interleave, swizzle) in [(1, 0), (1, 3), (2, 1), (2, 0)] {
            // NC/8HWC8 of f32: 8 channels (32 bytes) a pixel, 30 pixels a row, 6 rows.
            let mut a = args(&[8, 30, 6], &[32, 960], &[8, 8, 1], &[1, 1, 1]);
            a.interleave = interleave;
            a.swizzle = swizzle;
            let m = TensorMap::tiled(&a).unwrap();
            assert_eq!(TensorMap::decode(&m.encode()), Some(m));
            let copyable = m.interleave_copyable(&[0, 4, 2], &[]);
            // A 32-byte row is the 32B slice, two 16B slices.
            assert_eq!(
                copyable.is_ok(),
                interleave == 2,
                "{interleave}: {copyable:?}"
            );
        }
        // More than one row of W, or W stepped by 2: the H200 lays them out otherwise
        // (runtime program tensor_interleave_inside), not emulated.
        let mut a = args(&[8, 30, 6], &[32, 960], &[8, 8, 2], &[1, 1, 1]);
        a.interleave = 2;
        a.swizzle = 1;
        let e = TensorMap::tiled(&a)
            .unwrap()
            .interleave_copyable(&[0, 4, 2], &[])
            .unwrap_err();
        assert!(e.contains("more than one row of W"), "{e}");
        let mut a = args(&[8, 30, 6], &[32, 960], &[8, 8, 1], &[1, 2, 1]);
        a.interleave = 2;
        a.swizzle = 1;
        let m = TensorMap::tiled(&a).unwrap();
        assert_eq!(m.box_counts()[..3], [8, 4, 1]);
        let e = m.interleave_copyable(&[0, 4, 2], &[]).unwrap_err();
        assert!(e.contains("traversal stride of 2"), "{e}");
        let mut a = args(&[8, 30, 6], &[32, 960], &[8, 8, 1], &[1, 1, 1]);
        a.interleave = 2;
        a.swizzle = 1;
        let m = TensorMap::tiled(&a).unwrap();
        assert!(m.interleave_copyable(&[0, 22, 4], &[]).is_ok());
        let e = m.interleave_copyable(&[0, 23, 4], &[]).unwrap_err();
        assert!(e.contains("past the tensor's edge"), "{e}");
        assert!(m.interleave_copyable(&[0, 0, 6], &[]).is_err());
        assert!(m.interleave_copyable(&[0, -2, 0], &[]).is_err());
        // Rows in order, each one slice: element k of row (y, z) is channel k % 8 (the
        // walk of a box the copies do not take is the PTX ISA's figure's).
        let mut a = args(&[8, 30, 6], &[32, 960], &[8, 8, 2], &[1, 2, 1]);
        a.interleave = 2;
        a.swizzle = 1;
        let m = TensorMap::tiled(&a).unwrap();
        let mut seen = Vec::new();
        m.for_each_element(&[0, 2, 1], &[], m.dims[0], |k, addr| {
            seen.push((k, addr.unwrap() - m.address));
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(seen[9], (9, 960 + 32 * 4 + 4));
        assert_eq!(seen[63], (63, 960 * 2 + 32 * 8 + 28));
    }

    fn im2col<'a>(
        t: TiledArgs<'a>,
        lower: &'a [i32],
        upper: &'a [i32],
        channels: u32,
        pixels: u32,
    ) -> Result<TensorMap, Refusal> {
        TensorMap::im2col(&Im2colArgs {
            tiled: t,
            lower,
            upper,
            channels,
            pixels,
        })
    }

    #[test]
    fn im2col_maps_are_checked_as_cuda_h_says() {
        // NHWC f32: C 8, W 5, H 4, N 2.
        let (d, st, es) = ([8u64, 5, 4, 2], [32u64, 160, 640], [1u32, 1, 1, 1]);
        let t = || args(&d, &st, &[], &es);
        let m = im2col(t(), &[-1, -1], &[-1, -1], 8, 12).unwrap();
        assert_eq!(m.box_bytes(), 8 * 12 * 4);
        assert_eq!(TensorMap::decode(&m.encode()), Some(m));
        let bad = |r: Result<TensorMap, Refusal>| matches!(r, Err(Refusal::Invalid(_)));
        // Corners of a rank-4 map are 8-bit; a rank-3 map's 16-bit.
        assert!(bad(im2col(t(), &[-129, 0], &[0, 0], 8, 12)), "corner -129");
        assert!(bad(im2col(t(), &[0, 0], &[128, 0], 8, 12)), "corner 128");
        let t3 = || args(&d[..3], &st[..2], &[], &es[..3]);
        assert!(im2col(t3(), &[-300], &[200], 8, 12).is_ok());
        let t5 = || args(&[8, 5, 4, 3, 2], &[32, 160, 640, 1920], &[], &[1; 5]);
        assert!(
            bad(im2col(t5(), &[-17, 0, 0], &[0, 0, 0], 8, 12)),
            "5d corner"
        );
        assert!(im2col(t5(), &[-16, 0, 0], &[15, 0, 0], 8, 12).is_ok());
        // An empty bounding box: W from 3 to 5 - 1 - 2 = 2.
        assert!(bad(im2col(t(), &[3, 0], &[-2, 0], 8, 12)), "empty box");
        assert!(bad(im2col(t(), &[0, 0], &[0, 0], 0, 12)), "no channels");
        assert!(bad(im2col(t(), &[0, 0], &[0, 0], 257, 12)), "257 channels");
        assert!(bad(im2col(t(), &[0, 0], &[0, 0], 8, 1025)), "1025 pixels");
        assert!(im2col(t(), &[0, 0], &[0, 0], 8, 1024).is_ok());
        // Ranks 1 and 2 have no image.
        assert!(bad(im2col(
            args(&[8, 5], &[32], &[], &[1, 1]),
            &[],
            &[],
            8,
            4
        )));
        // 64 f32 channels (256 bytes) under the 128B swizzle.
        let mut s = t();
        s.swizzle = 3;
        assert!(
            bad(im2col(s, &[0, 0], &[0, 0], 64, 4)),
            "wider than the swizzle"
        );
        // A pixel of 8 bytes: its layout is not recorded.
        assert!(matches!(
            im2col(t(), &[0, 0], &[0, 0], 2, 4),
            Err(Refusal::NotSupported(_))
        ));
        // Interleaved 16B: a pixel of the slice is taken; one less than the slice is
        // invalid, as the H200 answers (probe tensor_map); one wider is not emulated.
        let mut i16 = t();
        i16.interleave = 1;
        assert!(im2col(i16, &[0, 0], &[0, 0], 4, 4).is_ok());
        let mut i16 = t();
        i16.interleave = 1;
        assert!(
            bad(im2col(i16, &[0, 0], &[0, 0], 2, 4)),
            "8 bytes under 16B"
        );
        let mut i16 = t();
        i16.interleave = 1;
        assert!(matches!(
            im2col(i16, &[0, 0], &[0, 0], 8, 4),
            Err(Refusal::NotSupported(_))
        ));
    }

    /// Every element's (box index, tensor coordinates or None) of a copy.
    fn walk(m: &TensorMap, coords: &[i64], offsets: &[u16]) -> Vec<(u64, Option<u64>)> {
        let mut v = Vec::new();
        m.for_each_element(coords, offsets, m.dims[0], |k, a| {
            v.push((k, a.map(|a| a - m.address)));
            Ok::<(), ()>(())
        })
        .unwrap();
        v
    }

    #[test]
    fn an_im2col_copy_walks_the_bounding_box_w_first() {
        // NHWC f32: C 4, W 3, H 2, N 2; corners -1 both ways: filter bases W -1..=1,
        // H -1..=0.
        let (d, st) = ([4u64, 3, 2, 2], [16u64, 48, 96]);
        let m = im2col(args(&d, &st, &[], &[1; 4]), &[-1, -1], &[-1, -1], 4, 5).unwrap();
        let at = |c: u64, w: u64, h: u64, n: u64| Some(4 * c + 16 * w + 48 * h + 96 * n);
        let got = walk(&m, &[0, 1, 0, 0], &[1, 1]);
        assert_eq!(got.len(), 20);
        // Bases (1,0,0), then W wraps to -1 and H past 0 wraps too: N 1, (-1,-1), (0,-1),
        // (1,-1), (-1,0); each read one further in W and H.
        let pixels = [(2, 1, 0), (0, 0, 1), (1, 0, 1), (2, 0, 1), (0, 1, 1)];
        for (p, (w, h, n)) in pixels.into_iter().enumerate() {
            for c in 0..4u64 {
                let k = p as u64 * 4 + c;
                assert_eq!(
                    got[k as usize],
                    (k, at(c, w, h, n)),
                    "pixel {p} channel {c}"
                );
            }
        }
        // Without offsets the first pixels of N 1 lie outside the tensor (W or H -1), and
        // channels from 2 pass C's end.
        let got = walk(&m, &[2, 1, 0, 1], &[0, 0]);
        assert_eq!(got[0], (0, at(2, 1, 0, 1)));
        assert_eq!(got[2], (2, None));
        assert!(
            got[4..8].iter().all(|e| e.1.is_none()),
            "N 2 is past the batch"
        );
    }

    #[test]
    fn im2col_traversal_strides_step_the_filter_base() {
        // NWC f32: C 4, W 10, N 2; corners 0 and -2: bases 0..=7 by 3 (0 3 6), then N.
        let m = im2col(
            args(&[4, 10, 2], &[16, 160], &[], &[1, 3, 1]),
            &[0],
            &[-2],
            4,
            4,
        )
        .unwrap();
        let got = walk(&m, &[0, 0, 0], &[2]);
        let w: Vec<Option<u64>> = got.iter().step_by(4).map(|e| e.1).collect();
        assert_eq!(
            w,
            [Some(2 * 16), Some(5 * 16), Some(8 * 16), Some(160 + 2 * 16)]
        );
    }

    #[test]
    fn swizzles_xor_chunks_with_the_row() {
        let mut m = TensorMap::tiled(&args(&[64], &[], &[32], &[1])).unwrap();
        m.swizzle = 3;
        // Row 0 stays; row 1's chunk 0 goes to chunk 1, row 5's chunk 2 to chunk 7.
        assert_eq!(m.swizzled(0x10), 0x10);
        assert_eq!(m.swizzled(0x80), 0x90);
        assert_eq!(m.swizzled(5 * 128 + 2 * 16 + 4), 5 * 128 + 7 * 16 + 4);
        m.swizzle = 1;
        assert_eq!(m.swizzled(0x80), 0x90);
        assert_eq!(m.swizzled(0x100), 0x100);
    }
}
