//! Tensor maps (`CUtensorMap`): what `cuTensorMapEncodeTiled` describes, checked against
//! the requirements cuda.h lists for it, and its 128 bytes as the mock writes them (PTX
//! and CUDA keep them opaque; kernels only hand their address to
//! `cp.async.bulk.tensor`, which `executor/asynccopy.rs` runs).
//!
//! Emulated: tiled maps of the 13 sm_90 element types, ranks 1 to 5, any element strides,
//! no interleave, swizzles none, 32B, 64B and 128B, out-of-bound elements read as zeros
//! or, with `CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA`, as the H200's NaN.
//! Refused as not supported (each saying so): interleaved layouts, the packed 4- and
//! 6-bit types and the 128B atom swizzles (sm_100's).

/// The mock's tag in a tensor map's first bytes: a map it did not write is refused by the
/// copies that use it.
const MAGIC: u32 = 0x4d54_4d43; // "CMTM"

pub const BYTES: usize = 128;

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
    pub box_dim: [u32; 5],
    pub element_strides: [u32; 5],
    /// `CUtensorMapSwizzle`: 0 none, 1 32B, 2 64B, 3 128B.
    pub swizzle: u32,
    pub l2_promotion: u32,
    /// `CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA`: loads read elements outside
    /// the tensor as the H200 does, every 16 bits 0x7ff7 (a NaN of f16, bf16 and f32 alike;
    /// runtime program tensor_oob_fill); else as zeros.
    pub nan_fill: bool,
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

impl TensorMap {
    /// A tiled map, checked as cuda.h's requirements for cuTensorMapEncodeTiled say.
    pub fn tiled(a: &TiledArgs) -> Result<TensorMap, Refusal> {
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
            1 | 2 => return unsupported("interleaved tensor layouts are not emulated"),
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
        if a.address % 16 != 0 {
            return invalid(format!(
                "globalAddress {:#x} is not 16-byte aligned",
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
            swizzle: a.swizzle,
            l2_promotion: a.l2_promotion,
            nan_fill: a.oob_fill == 1,
        };
        m.strides[0] = esize;
        for i in 0..r {
            let d = a.dims[i];
            if d == 0 || d > 1 << 32 {
                return invalid(format!("globalDim[{i}] = {d} is outside 1..=2^32"));
            }
            m.dims[i] = d;
            let b = a.box_dim[i];
            if b == 0 || b > 256 {
                return invalid(format!("boxDim[{i}] = {b} is outside 1..=256"));
            }
            m.box_dim[i] = b;
            let e = a.element_strides[i];
            if e == 0 || e > 8 {
                return invalid(format!("elementStrides[{i}] = {e} is outside 1..=8"));
            }
            m.element_strides[i] = e;
        }
        for i in 0..r - 1 {
            let s = a.global_strides[i];
            if s % 16 != 0 || s >= 1 << 40 {
                return invalid(format!(
                    "globalStrides[{i}] = {s} is not a multiple of 16 below 2^40"
                ));
            }
            m.strides[i + 1] = s;
        }
        let inner = u64::from(m.box_dim[0]) * esize;
        if inner % 16 != 0 {
            return invalid(format!(
                "boxDim[0] * element size = {inner} bytes, not a multiple of 16"
            ));
        }
        let span = m.swizzle_span();
        if span != 0 && inner > span {
            return invalid(format!(
                "the box's inner dimension ({inner} bytes) is wider than the {span}-byte swizzle"
            ));
        }
        Ok(m)
    }

    pub fn element_bytes(&self) -> u64 {
        self.strides[0]
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

    /// Elements a box holds along each dimension: the box's size over its traversal
    /// stride, rounded up (dimension 0 has no stride without interleave).
    pub fn box_counts(&self) -> [u64; 5] {
        let mut c = [1u64; 5];
        for (i, n) in c.iter_mut().enumerate().take(self.rank as usize) {
            let e = if i == 0 { 1 } else { self.element_strides[i] };
            *n = u64::from(self.box_dim[i]).div_ceil(u64::from(e));
        }
        c
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
        b[112] = self.nan_fill as u8;
        b[8..16].copy_from_slice(&self.address.to_le_bytes());
        for i in 0..5 {
            b[16 + 8 * i..24 + 8 * i].copy_from_slice(&self.dims[i].to_le_bytes());
            b[56 + 8 * i..64 + 8 * i].copy_from_slice(&self.strides[i].to_le_bytes());
            b[96 + 2 * i..98 + 2 * i].copy_from_slice(&(self.box_dim[i] as u16).to_le_bytes());
            b[106 + i] = self.element_strides[i] as u8;
        }
        b
    }

    /// The map `encode` wrote, or None for bytes it did not write or fields a copy
    /// cannot use.
    pub fn decode(b: &[u8; BYTES]) -> Option<TensorMap> {
        let m = Self::fields(b)?;
        // What `tiled` guarantees, checked again: the bytes live in program memory, and
        // `tensormap.replace` changes fields one at a time.
        let ok = (1..=5).contains(&m.rank)
            && element_bytes(m.data_type) == Some(m.strides[0])
            && m.swizzle <= 3
            && (0..m.rank as usize).all(|i| {
                (1..=1 << 32).contains(&m.dims[i])
                    && (1..=256).contains(&m.box_dim[i])
                    && (1..=8).contains(&m.element_strides[i])
            });
        ok.then_some(m)
    }

    /// The fields of bytes `encode` wrote, as they are (a map being rewritten by
    /// `tensormap.replace` may be inconsistent between two of its instructions).
    pub fn fields(b: &[u8; BYTES]) -> Option<TensorMap> {
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or_default());
        if u32::from_le_bytes(b[0..4].try_into().ok()?) != MAGIC {
            return None;
        }
        let mut m = TensorMap {
            data_type: u32::from(b[5]),
            rank: u32::from(b[4]),
            address: u64_at(8),
            dims: [0; 5],
            strides: [0; 5],
            box_dim: [0; 5],
            element_strides: [0; 5],
            swizzle: u32::from(b[6]),
            l2_promotion: u32::from(b[7]),
            nan_fill: b[112] != 0,
        };
        for i in 0..5 {
            m.dims[i] = u64_at(16 + 8 * i);
            m.strides[i] = u64_at(56 + 8 * i);
            m.box_dim[i] = u32::from(u16::from_le_bytes([b[96 + 2 * i], b[97 + 2 * i]]));
            m.element_strides[i] = u32::from(b[106 + i]);
        }
        Some(m)
    }

    /// `cuTensorMapReplaceAddress`: the same map over another address.
    pub fn with_address(&self, address: u64) -> Result<TensorMap, Refusal> {
        if address % 16 != 0 {
            return Err(Refusal::Invalid(format!(
                "globalAddress {address:#x} is not 16-byte aligned"
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
        let mut a = args(&[100, 30, 4], &[400, 12000], &[32, 8, 2], &[1, 1, 1]);
        a.interleave = 1;
        assert!(matches!(
            TensorMap::tiled(&a),
            Err(Refusal::NotSupported(_))
        ));
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
