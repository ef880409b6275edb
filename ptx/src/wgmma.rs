//! Warpgroup matrix multiply-accumulate, `wgmma.mma_async` (sm_90a): D (64×N) = A (64×K)
//! · B (K×N) + D, over the 128 threads of a warpgroup (warps 4k..4k+3 of a block). Here:
//! the 64-bit shared-memory matrix descriptors, where each element of a matrix lies in
//! shared memory, the register fragments, and one warp's quarter of the arithmetic. The
//! executor's side (the four warps meeting at the instruction) is `executor/matrix.rs`.
//!
//! Descriptors: the PTX ISA's "Matrix Descriptor Format" (bits 0-13 the start address,
//! 16-29 the leading dimension byte offset, 32-45 the stride dimension byte offset, each
//! `(x & 0x3ffff) >> 4`; 49-51 the base offset; 62-63 the swizzle mode: 0 none, 1 128B,
//! 2 64B, 3 32B). Layouts: the ISA's "Shared Memory Matrix Layout", in the form CUTLASS
//! (cute's `make_gmma_desc`) writes them, in 16-byte chunks of T = 128/bits elements and
//! W chunks a swizzle row (1, 2, 4, 8 for none, 32B, 64B, 128B):
//!
//! ```text
//! K-major,  none:     ((8,m),(T,2)) : ((1 chunk, SBO), (1, LBO))
//! K-major,  swizzled: ((8,m),(T,2)) : ((W chunks, SBO), (1, 1 chunk))    LBO unused
//! MN-major, none:     ((T,m),(8,k)) : ((1, SBO), (1 chunk, LBO))
//! MN-major, swizzled: ((T,W,m),(8,k)) : ((1, 1 chunk, LBO), (W chunks, SBO))
//! ```
//!
//! then the swizzle, on the shared address's bits as CUTLASS's `Swizzle<B,4,3>` and TMA
//! write the data: bits 4.. (the chunk in a row) XOR bits 7.. (the row in the pattern)
//! less the base offset, B = 3, 2, 1 bits for 128B, 64B, 32B. So a matrix whose start
//! lies anywhere in a pattern (CUTLASS steps K inside its first row) is read by its
//! absolute addresses with base offset 0, and the base offset (the ISA: the pattern
//! start's bits 7-9) shifts the pattern's phase, for a pattern laid out from a start off the
//! repeat boundary. Recorded on the H200 (`clients/runtime/wgmma_swizzle_probe.cu`):
//! 128B-swizzled B 3 rows into its 1024-byte block reads as written when laid out by
//! absolute address with base offset 0, or from its own start with base offset 3, and
//! reads other bytes (the image's zeros) the other two ways. The row less the base
//! offset (not XOR: that reads the relative layout's rows 1-7 elsewhere) is what fits; 64B
//! and 32B are taken to do the same in their 2 and 1 row bits.
//!
//! Fragments: a warp holds rows 16w..16w+15 of D (w its place in the warpgroup), as
//! `mma`'s m16n8 accumulators side by side: element i of a thread (two to a register
//! for f16) is row g + 8·(i/2 mod 2), column 8·(i/4) + 2t + i mod 2 (g = lane/4, t =
//! lane mod 4; the ISA's "WGMMA .m64nNk16 register fragment layout for accumulator matrix
//! D"). An A in registers is the warp's 16 rows as `mma`'s m16n8kK A fragment.
//!
//! Arithmetic: each element of D is `mma::dot` of the instruction's whole K (products
//! exact, aligned and cut as the H200's `mma` does, one rounding; FP8 by the FP8 tensor
//! cores' shorter accumulator, `mma::Fp8Path::TensorCore`), with `imm-scale-a/b`
//! of -1 flipping the operands' signs and `scale-d` 0 adding +0 instead of D.

use crate::math::Lanes;
use crate::mma::{self, Arith, Elem, Form, Frag, Role, Shape};

/// The swizzle mode of a matrix descriptor (bits 62-63).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swizzle {
    None,
    B128,
    B64,
    B32,
}

impl Swizzle {
    /// 16-byte chunks in one row of the swizzle pattern.
    pub fn width(self) -> u32 {
        match self {
            Swizzle::None => 1,
            Swizzle::B32 => 2,
            Swizzle::B64 => 4,
            Swizzle::B128 => 8,
        }
    }

    /// A shared address as the pattern places it: the chunk bits 4.. XOR the row bits 7..
    /// less `base_offset` (the descriptor's: the pattern's phase).
    pub fn apply(self, addr: u64, base_offset: u32) -> u64 {
        let rows = (self.width() - 1) as u64;
        let row = (addr >> 7).wrapping_sub(base_offset as u64) & rows;
        addr ^ (row << 4)
    }
}

/// A `wgmma` matrix descriptor, decoded: byte addresses and offsets in the shared window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatrixDescriptor {
    pub start: u32,
    /// Leading dimension byte offset (LBO).
    pub leading: u32,
    /// Stride dimension byte offset (SBO).
    pub stride: u32,
    pub base_offset: u32,
    pub swizzle: Swizzle,
}

impl MatrixDescriptor {
    pub fn decode(raw: u64) -> MatrixDescriptor {
        let field = |lo: u32| ((raw >> lo) & 0x3fff) as u32 * 16;
        MatrixDescriptor {
            start: field(0),
            leading: field(16),
            stride: field(32),
            base_offset: ((raw >> 49) & 7) as u32,
            swizzle: match raw >> 62 {
                0 => Swizzle::None,
                1 => Swizzle::B128,
                2 => Swizzle::B64,
                _ => Swizzle::B32,
            },
        }
    }

    /// The shared address of the byte holding element (mn, k) of a matrix of `bits`-bit
    /// elements (mn: A's row or B's column), and the element's first bit in that byte.
    pub fn locate(&self, mn: u32, k: u32, bits: u32, k_major: bool) -> (u64, u32) {
        let per = 128 / bits;
        let (w, lbo, sbo) = (self.swizzle.width(), self.leading, self.stride);
        let swizzled = self.swizzle != Swizzle::None;
        let (chunk, within) = if k_major {
            let (row, kc) = (mn, k / per);
            let off = if swizzled {
                (row % 8) * 16 * w + (row / 8) * sbo + kc * 16
            } else {
                (row % 8) * 16 + (row / 8) * sbo + kc * lbo
            };
            (off, k % per)
        } else {
            let mc = mn / per;
            let off = if swizzled {
                (mc % w) * 16 + (mc / w) * lbo + (k % 8) * 16 * w + (k / 8) * sbo
            } else {
                mc * sbo + (k % 8) * 16 + (k / 8) * lbo
            };
            (off, mn % per)
        };
        let at = self
            .swizzle
            .apply(self.start as u64 + chunk as u64, self.base_offset);
        let bit = within * bits;
        (at + (bit / 8) as u64, bit % 8)
    }
}

/// One `wgmma.mma_async`: shape, types and immediates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WgmmaSpec {
    pub n: u32,
    pub k: u32,
    pub arith: Arith,
    /// A from registers (else from a descriptor).
    pub a_in_regs: bool,
    /// `imm-scale-a`, `imm-scale-b` of -1.
    pub negate_a: bool,
    pub negate_b: bool,
    /// `imm-trans-a`, `imm-trans-b` of 1: M-major A, N-major B (else K-major).
    pub trans_a: bool,
    pub trans_b: bool,
    /// `wgmma.mma_async.sp`: the sparsity selector (`sp-sel`); A is stored packed, 64 ×
    /// K/2, its elements' places in K given by the metadata (`sparse_k`).
    pub sparse: Option<u8>,
}

/// N of the integer and b1 shapes: 8 to 32 by 8, then to 256 by 16.
fn int_n(n: u32) -> bool {
    (n <= 32 && n % 8 == 0 || n % 16 == 0) && (8..=256).contains(&n)
}

impl WgmmaSpec {
    /// The arithmetic of `.m64nNkK.D.A.B[.satfinite]`, if sm_90a has the combination.
    pub fn arith(shape: Shape, [d, a, b]: [Elem; 3], satfinite: bool) -> Option<Arith> {
        let Shape { m, n, k } = shape;
        let float_n = n % 8 == 0 && (8..=256).contains(&n);
        let is_fp8 = |e: Elem| matches!(e, Elem::E4M3 | Elem::E5M2);
        let ok = m == 64
            && match a {
                Elem::F16 => b == a && matches!(d, Elem::F16 | Elem::F32) && k == 16 && float_n,
                Elem::BF16 => b == a && d == Elem::F32 && k == 16 && float_n,
                Elem::TF32 => b == a && d == Elem::F32 && k == 8 && float_n,
                Elem::E4M3 | Elem::E5M2 => {
                    is_fp8(b) && matches!(d, Elem::F16 | Elem::F32) && k == 32 && float_n
                }
                Elem::S8 | Elem::U8 => {
                    matches!(b, Elem::S8 | Elem::U8) && d == Elem::S32 && k == 32 && int_n(n)
                }
                Elem::B1 => b == a && d == Elem::S32 && k == 256 && int_n(n),
                _ => false,
            };
        if !ok || satfinite && !matches!(a, Elem::S8 | Elem::U8) {
            return None;
        }
        Some(Arith {
            a,
            b,
            c: d,
            d,
            satfinite,
            xor: false,
            block: k as usize,
            fp8: mma::Fp8Path::TensorCore,
            quad_pair: false,
        })
    }

    /// The arithmetic of `.sp.m64nNkK.D.A.B[.satfinite]` (sparse A: twice the dense K,
    /// the products of A's stored half only, fused as one block), if sm_90a has it.
    pub fn sparse_arith(shape: Shape, types: [Elem; 3], satfinite: bool) -> Option<Arith> {
        if types[1] == Elem::B1 || shape.k % 2 != 0 {
            return None;
        }
        let half = Shape {
            k: shape.k / 2,
            ..shape
        };
        let mut a = Self::arith(half, types, satfinite)?;
        a.block = half.k as usize;
        Some(a)
    }

    /// Elements of A's stored (packed) rows: K/2 when sparse.
    pub fn a_cols(&self) -> u32 {
        if self.sparse.is_some() {
            self.k / 2
        } else {
            self.k
        }
    }

    /// Registers of D: N/2 (f32, s32) or N/4 (f16 pairs).
    pub fn d_regs(&self) -> usize {
        self.n as usize / if self.arith.d == Elem::F16 { 4 } else { 2 }
    }

    /// The fragment of an A held in registers: `mma`'s m16n8kK A (sparse: of the packed
    /// 16 × K/2, as `mma.sp`'s A fragments are).
    pub fn a_frag(&self) -> Frag {
        let shape = Shape {
            m: 16,
            n: 8,
            k: self.a_cols(),
        };
        Frag::new(Form::Mma, shape, Role::A, self.arith.a).expect("every wgmma A type is mma's")
    }
}

/// Where in K each stored element of a warp's 16 packed rows of a sparse A lies (16 ×
/// K/2, row-major), from the metadata registers `meta` of the warp's lanes and the
/// selector. The PTX ISA's "Sparse matrix storage" and its metadata figures for wgmma, in
/// the form CUTLASS's `ELayout_64x{16,32,64}` give them:
///
/// - 16-bit A (k32, 2:4) and tf32 (k16, 1:2): a chunk's 4 bits for row r, chunk c (of 8)
///   in lane `4·(r mod 8) + 2·sel + c/4`, bits `16·(r/8) + 4·(c mod 4)`; the pair `sel`
///   picks (0: threads 0 and 1 of each four, 1: threads 2 and 3) contributes.
/// - 8-bit A (k64, 2:4): row r, chunk c (of 16) in lane `4·(r mod 8) + r/8 + 2·(c/8)`,
///   bits `4·(c mod 8)`; every thread contributes.
///
/// In a chunk's 4 bits, bits 0-1 place its first stored element, bits 2-3 its second, in
/// 16-bit (or 8-bit) units within the chunk's four: tf32's one element a chunk of two
/// takes the first index over two (0b0100: the first, 0b1110: the second).
pub fn sparse_k(s: &WgmmaSpec, meta: &Lanes) -> Vec<u32> {
    let sel = u32::from(s.sparse.unwrap_or(0));
    let cols = s.a_cols();
    let eight_bit = s.arith.a.bits() == 8;
    let tf32 = s.arith.a.bits() == 32;
    let mut at = vec![0u32; 16 * cols as usize];
    for r in 0..16u32 {
        for j in 0..cols {
            // The chunk the stored element j belongs to, and which of its stored ones.
            let (c, which) = if tf32 { (j, 0) } else { (j / 2, j % 2) };
            let (lane, bit) = if eight_bit {
                (4 * (r % 8) + r / 8 + 2 * (c / 8), 4 * (c % 8))
            } else {
                (4 * (r % 8) + 2 * sel + c / 4, 16 * (r / 8) + 4 * (c % 4))
            };
            let nibble = (meta[lane as usize % 32] >> bit) as u32 & 0xf;
            let idx = (nibble >> (2 * which)) & 3;
            at[(r * cols + j) as usize] = if tf32 { 2 * c + idx / 2 } else { 4 * c + idx };
        }
    }
    at
}

/// (row in the warp's 16, column) of element `i` of `lane`'s D.
pub fn d_coord(lane: usize, i: usize) -> (u32, u32) {
    let (g, t, i) = ((lane >> 2) as u32, (lane & 3) as u32, i as u32);
    let q = i % 4;
    (g + 8 * (q >> 1), 8 * (i / 4) + 2 * t + (q & 1))
}

fn d_element(f16: bool, d: &[Lanes], lane: usize, i: usize) -> u64 {
    if f16 {
        (d[i / 2][lane] >> (16 * (i % 2))) & 0xffff
    } else {
        d[i][lane] & 0xffff_ffff
    }
}

fn set_d_element(f16: bool, d: &mut [Lanes], lane: usize, i: usize, v: u64) {
    if f16 {
        let (w, sh) = (&mut d[i / 2][lane], 16 * (i % 2));
        *w = (*w & !(0xffff << sh)) | ((v & 0xffff) << sh);
    } else {
        d[i][lane] = v & 0xffff_ffff;
    }
}

/// One warp's quarter of D = A·B + D: `a` the warp's 16 rows of A (16×K), `b` all of B
/// (K×N), raw element bits row-major; `d` the warp's D registers, read as C when
/// `scale_d`, then written with the result.
#[cfg(test)]
pub fn multiply(s: &WgmmaSpec, a: &[u64], b: &[u64], d: &mut [Lanes], scale_d: bool) {
    multiply_sparse(s, a, None, b, d, scale_d)
}

/// `multiply` with a sparse A: `a` the warp's 16 packed rows (16 × K/2) and `places` where in
/// K each of their elements lies (`sparse_k`); each element of D sums the K/2 products of
/// the stored elements only (the zeros are never multiplied: an infinite B there gives
/// no NaN).
pub fn multiply_sparse(
    s: &WgmmaSpec,
    a: &[u64],
    places: Option<&[u32]>,
    b: &[u64],
    d: &mut [Lanes],
    scale_d: bool,
) {
    let n = s.n;
    let k = if places.is_some() { s.a_cols() } else { s.k };
    let f16 = s.arith.d == Elem::F16;
    let per_lane = n as usize / 2;
    let mut c = vec![0u64; 16 * n as usize];
    if scale_d {
        for lane in 0..32 {
            for i in 0..per_lane {
                let (r, col) = d_coord(lane, i);
                c[(r * n + col) as usize] = d_element(f16, d, lane, i);
            }
        }
    }
    let (ea, eb) = (s.arith.a, s.arith.b);
    let a: Vec<u64> = if s.negate_a {
        a.iter().map(|&x| ea.negate(x)).collect()
    } else {
        a.to_vec()
    };
    let b: Vec<u64> = if s.negate_b {
        b.iter().map(|&x| eb.negate(x)).collect()
    } else {
        b.to_vec()
    };
    let mut prods = Vec::with_capacity(k as usize);
    let mut out = vec![0u64; c.len()];
    for r in 0..16 {
        for col in 0..n {
            let at = (r * n + col) as usize;
            let ai = |kk: u32| a[(r * k + kk) as usize];
            let bk = |kk: u32| match places {
                Some(p) => p[(r * k + kk) as usize],
                None => kk,
            };
            let bi = |kk: u32| b[(bk(kk) * n + col) as usize];
            out[at] = mma::dot(&s.arith, k, ai, bi, c[at], &mut prods);
        }
    }
    for lane in 0..32 {
        for i in 0..per_lane {
            let (r, col) = d_coord(lane, i);
            set_d_element(f16, d, lane, i, out[(r * n + col) as usize]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(start: u32, lbo: u32, sbo: u32, base: u64, swizzle: u64) -> u64 {
        ((start as u64 & 0x3ffff) >> 4)
            | (((lbo as u64 & 0x3ffff) >> 4) << 16)
            | (((sbo as u64 & 0x3ffff) >> 4) << 32)
            | (base << 49)
            | (swizzle << 62)
    }

    #[test]
    fn a_descriptor_decodes_field_by_field() {
        let d = MatrixDescriptor::decode(desc(0x1230, 0x40, 0x400, 5, 2));
        assert_eq!(
            d,
            MatrixDescriptor {
                start: 0x1230,
                leading: 0x40,
                stride: 0x400,
                base_offset: 5,
                swizzle: Swizzle::B64,
            }
        );
        // Only bits 0-17 of an address are encoded: the shared window's.
        assert_eq!(
            MatrixDescriptor::decode(desc(0x4_0010, 0, 0, 0, 0)).start,
            0x10
        );
        // Every field at its maximum, and the modes by their number.
        let all = MatrixDescriptor::decode(u64::MAX);
        assert_eq!(
            (all.start, all.leading, all.stride),
            (0x3fff0, 0x3fff0, 0x3fff0)
        );
        assert_eq!(all.base_offset, 7);
        let modes = [0, 1, 2, 3].map(|m| MatrixDescriptor::decode(m << 62).swizzle);
        assert_eq!(
            modes,
            [Swizzle::None, Swizzle::B128, Swizzle::B64, Swizzle::B32]
        );
    }

    /// Where CUTLASS's `Swizzle<B,4,3>` puts byte offset `x` of a tile whose pattern starts
    /// at `base` (a multiple of its repeat): the reference the layouts are checked against.
    fn cute_swizzle(bits: u32, base: u64, x: u64) -> u64 {
        let mask = ((1u64 << bits) - 1) << 7;
        base + (x ^ ((x & mask) >> 3))
    }

    #[test]
    fn k_major_layouts_of_each_swizzle_mode() {
        // A 64×16 f16 A, K-major: row r's 32 bytes of K.
        let base = 0x2000u64;
        for (mode, bits, width) in [(1u64, 3, 128u32), (2, 2, 64), (3, 1, 32)] {
            // Rows `width` bytes apart, 8-row groups 8·width apart (SBO); LBO unused.
            let sbo = 8 * width;
            let d = MatrixDescriptor::decode(desc(base as u32, 16, sbo, 0, mode));
            for r in 0..64u32 {
                for k in 0..16u32 {
                    let plain = (r % 8) * width + (r / 8) * sbo + 2 * k;
                    let want = cute_swizzle(bits, base, plain as u64);
                    assert_eq!(d.locate(r, k, 16, true), (want, 0), "mode {mode} ({r},{k})");
                }
            }
            // The second K step inside a 128-byte row: the start moves 32 bytes on and the
            // pattern still counts from the aligned base.
            if width >= 64 {
                let d = MatrixDescriptor::decode(desc(base as u32 + 32, 16, sbo, 0, mode));
                let plain = 3 * width + 32 + 2 * 5;
                assert_eq!(
                    d.locate(3, 5, 16, true).0,
                    cute_swizzle(bits, base, plain as u64)
                );
            }
        }
        // No swizzle: 8×16-byte core matrices; LBO between the two K halves, SBO between
        // 8-row groups.
        let d = MatrixDescriptor::decode(desc(0x100, 0x80, 0x100, 0, 0));
        assert_eq!(d.locate(0, 0, 16, true), (0x100, 0));
        assert_eq!(d.locate(1, 7, 16, true), (0x100 + 16 + 14, 0));
        assert_eq!(d.locate(0, 8, 16, true), (0x180, 0));
        assert_eq!(d.locate(9, 9, 16, true), (0x100 + 0x100 + 16 + 0x80 + 2, 0));
        // tf32: 4 to a chunk; 8-bit: 16; b1: 128, a bit each.
        assert_eq!(d.locate(0, 5, 32, true), (0x184, 0));
        assert_eq!(d.locate(0, 17, 8, true), (0x181, 0));
        assert_eq!(d.locate(2, 131, 1, true), (0x100 + 32 + 0x80, 3));
    }

    #[test]
    fn mn_major_layouts_of_each_swizzle_mode() {
        // A 16×64 f16 B, N-major (imm-trans-b 1): k row k's columns contiguous.
        let base = 0x4000u64;
        for (mode, bits, width) in [(1u64, 3, 128u32), (2, 2, 64), (3, 1, 32)] {
            // `width` bytes of N a row; the next `width` bytes of N at LBO; the next 8 K
            // rows at SBO.
            let (cols, lbo, sbo) = (width / 2, 8 * width, 8 * width * (64 * 2 / width));
            let d = MatrixDescriptor::decode(desc(base as u32, lbo, sbo, 0, mode));
            for k in 0..16u32 {
                for n in 0..64u32 {
                    let plain = (n % cols) * 2 + (n / cols) * lbo + (k % 8) * width + (k / 8) * sbo;
                    let want = cute_swizzle(bits, base, plain as u64);
                    assert_eq!(
                        d.locate(n, k, 16, false),
                        (want, 0),
                        "mode {mode} ({n},{k})"
                    );
                }
            }
        }
        // No swizzle: 8 columns (16 bytes) by 8 K rows a core matrix; SBO to the next 8
        // columns, LBO to the next 8 K rows.
        let d = MatrixDescriptor::decode(desc(0, 0x400, 0x80, 0, 0));
        assert_eq!(d.locate(3, 2, 16, false), (2 * 16 + 6, 0));
        assert_eq!(d.locate(11, 9, 16, false), (0x80 + 0x400 + 16 + 6, 0));
    }

    #[test]
    fn a_swizzled_start_off_its_pattern_reads_by_address_and_the_base_offset_shifts_the_phase() {
        // The probe's B: 8 rows of 128 bytes (K-major, 128B swizzle) 3 rows into a
        // 1024-byte block at 0x800: row n at 0x980 + 128n.
        let start = 0x980u32;
        // Element (n, k) as laid out by absolute address (TMA, CUTLASS), and from the
        // pattern's own start (row n's chunks XOR n).
        let absolute = |n: u32, k: u32| {
            let row = start + 128 * n;
            (row + ((k / 8) ^ ((row >> 7) & 7)) * 16 + (k % 8) * 2) as u64
        };
        let relative = |n: u32, k: u32| (start + 128 * n + ((k / 8) ^ n) * 16 + (k % 8) * 2) as u64;
        let read = |base: u64| MatrixDescriptor::decode(desc(start, 16, 1024, base, 1));
        let (abs0, rel3) = (read(0), read(3));
        for n in 0..8 {
            for k in 0..16 {
                assert_eq!(
                    abs0.locate(n, k, 16, true),
                    (absolute(n, k), 0),
                    "({n},{k})"
                );
                assert_eq!(
                    rel3.locate(n, k, 16, true),
                    (relative(n, k), 0),
                    "({n},{k})"
                );
                // The other two ways read other chunks of the row (the H200 read zeros).
                assert_ne!(rel3.locate(n, k, 16, true).0, absolute(n, k), "({n},{k})");
                assert_ne!(abs0.locate(n, k, 16, true).0, relative(n, k), "({n},{k})");
            }
        }
        // On the pattern's boundary base offset 0 is both layouts (the control); CUTLASS's
        // K step 32 bytes into the first row keeps the aligned pattern.
        let on = MatrixDescriptor::decode(desc(0x800, 16, 1024, 0, 1));
        assert_eq!(on.locate(2, 9, 16, true).0, 0x800 + 256 + (1 ^ 2) * 16 + 2);
        let step = MatrixDescriptor::decode(desc(0x820, 16, 1024, 0, 1));
        assert_eq!(
            step.locate(2, 1, 16, true).0,
            (0x800 + 256 + 32 + 2) ^ (2 << 4)
        );
        // 64B: two row bits (7, 8: two 64-byte rows a phase), less the base offset.
        let d = MatrixDescriptor::decode(desc(0x480, 16, 512, 1, 2));
        assert_eq!(d.locate(0, 0, 16, true).0, 0x480);
        assert_eq!(d.locate(1, 8, 16, true).0, 0x4c0 + 16);
        assert_eq!(d.locate(2, 0, 16, true).0, 0x500 ^ (1 << 4));
        let d = MatrixDescriptor::decode(desc(0x480, 16, 512, 0, 2));
        assert_eq!(d.locate(2, 0, 16, true).0, 0x500 ^ (2 << 4));
        // Without swizzle the base offset does not apply.
        let d = MatrixDescriptor::decode(desc(0x490, 16, 128, 3, 0));
        assert_eq!(d.locate(1, 0, 16, true).0, 0x490 + 16);
    }

    #[test]
    fn the_accumulator_fragment_is_the_isas_figure() {
        // m64nNk16 D, f32: lane 0 holds (0,0) (0,1) (8,0) (8,1) (0,8)...; lane 5 is
        // groupID 1, threadID_in_group 1.
        assert_eq!(d_coord(0, 0), (0, 0));
        assert_eq!(d_coord(0, 1), (0, 1));
        assert_eq!(d_coord(0, 2), (8, 0));
        assert_eq!(d_coord(0, 3), (8, 1));
        assert_eq!(d_coord(0, 4), (0, 8));
        assert_eq!(d_coord(5, 6), (9, 10));
        assert_eq!(d_coord(31, 127), (15, 255));
        // Every element of a warp's 16×N exactly once, for every N.
        for n in (8..=256).step_by(8) {
            let mut seen = vec![0u8; 16 * n];
            for lane in 0..32 {
                for i in 0..n / 2 {
                    let (r, c) = d_coord(lane, i);
                    seen[r as usize * n + c as usize] += 1;
                }
            }
            assert!(seen.iter().all(|&x| x == 1), "n {n}");
        }
    }

    #[test]
    fn shapes_and_types_are_those_of_sm_90a() {
        let ok = |s: &str, t: [Elem; 3], sat| {
            WgmmaSpec::arith(Shape::from_name(s).unwrap(), t, sat).is_some()
        };
        use Elem::*;
        for n in (8..=256).step_by(8) {
            let s = format!("m64n{n}k16");
            assert!(ok(&s, [F32, F16, F16], false) && ok(&s, [F16, F16, F16], false));
            assert!(ok(&s, [F32, BF16, BF16], false) && !ok(&s, [F16, BF16, BF16], false));
            assert!(ok(&format!("m64n{n}k8"), [F32, TF32, TF32], false));
            assert!(ok(&format!("m64n{n}k32"), [F16, E4M3, E5M2], false));
            let int = n <= 32 || n % 16 == 0;
            assert_eq!(ok(&format!("m64n{n}k32"), [S32, S8, U8], true), int, "{n}");
            assert_eq!(
                ok(&format!("m64n{n}k256"), [S32, B1, B1], false),
                int,
                "{n}"
            );
        }
        assert!(!ok("m64n264k16", [F32, F16, F16], false));
        assert!(!ok("m64n12k16", [F32, F16, F16], false));
        assert!(!ok("m32n8k16", [F32, F16, F16], false));
        assert!(!ok("m64n8k32", [F32, F16, F16], false));
        assert!(!ok("m64n8k16", [F32, F16, F16], true));
        assert!(!ok("m64n8k32", [S32, S8, E4M3], false));
    }

    #[test]
    #[allow(clippy::needless_range_loop)]
    fn a_warps_quarter_is_its_rows_of_the_product() {
        // m64n16k16 f16 → f32, scale-d 1 then 0, A negated: small integers, exact.
        let arith = WgmmaSpec::arith(
            Shape::from_name("m64n16k16").unwrap(),
            [Elem::F32, Elem::F16, Elem::F16],
            false,
        )
        .unwrap();
        let spec = WgmmaSpec {
            n: 16,
            k: 16,
            arith,
            a_in_regs: false,
            negate_a: true,
            negate_b: false,
            trans_a: false,
            trans_b: false,
            sparse: None,
        };
        let h = |x: f32| crate::math::f64_to_f16(x as f64, crate::math::Rnd::N) as u64;
        let a: Vec<u64> = (0..256).map(|i| h((i % 5) as f32 - 2.0)).collect();
        let b: Vec<u64> = (0..256).map(|i| h((i % 3) as f32)).collect();
        for scale_d in [true, false] {
            let mut d = vec![[0u64; 32]; spec.d_regs()];
            for lane in 0..32 {
                for i in 0..8 {
                    let (r, c) = d_coord(lane, i);
                    d[i][lane] = ((r * 16 + c) as f32).to_bits() as u64;
                }
            }
            multiply(&spec, &a, &b, &mut d, scale_d);
            for lane in 0..32 {
                for i in 0..8 {
                    let (r, c) = d_coord(lane, i);
                    let mut want = if scale_d { (r * 16 + c) as f64 } else { 0.0 };
                    for k in 0..16u32 {
                        let x = ((r * 16 + k) % 5) as f64 - 2.0;
                        let y = ((k * 16 + c) % 3) as f64;
                        want -= x * y;
                    }
                    let got = f32::from_bits(d[i][lane] as u32) as f64;
                    assert_eq!(got, want, "scale_d {scale_d} ({r},{c})");
                }
            }
        }
    }

    fn sparse_spec(shape: &str, t: [Elem; 3], sel: u8) -> WgmmaSpec {
        let sh = Shape::from_name(shape).unwrap();
        WgmmaSpec {
            n: sh.n,
            k: sh.k,
            arith: WgmmaSpec::sparse_arith(sh, t, false).unwrap(),
            a_in_regs: false,
            negate_a: false,
            negate_b: false,
            trans_a: false,
            trans_b: false,
            sparse: Some(sel),
        }
    }

    #[test]
    fn sparse_shapes_double_the_dense_k() {
        use Elem::*;
        let ok = |s: &str, t: [Elem; 3]| {
            WgmmaSpec::sparse_arith(Shape::from_name(s).unwrap(), t, false).is_some()
        };
        assert!(ok("m64n32k32", [F32, F16, F16]) && ok("m64n8k32", [F16, F16, F16]));
        assert!(ok("m64n256k32", [F32, BF16, BF16]) && ok("m64n16k16", [F32, TF32, TF32]));
        assert!(ok("m64n8k64", [F16, E4M3, E5M2]) && ok("m64n24k64", [S32, S8, U8]));
        assert!(!ok("m64n32k16", [F32, F16, F16]), "dense K");
        assert!(!ok("m64n8k512", [S32, B1, B1]), "no sparse b1");
        assert!(!ok("m64n40k64", [S32, S8, S8]), "integer N");
        // A's packed rows: K/2 stored, in mma's m16n8k(K/2) fragment when in registers.
        let s = sparse_spec("m64n16k32", [F32, F16, F16], 0);
        assert_eq!((s.a_cols(), s.a_frag().regs()), (16, 4));
        assert_eq!(s.arith.block, 16);
    }

    #[test]
    fn sparse_metadata_is_read_from_the_selected_threads_bits() {
        // Every lane's metadata different: lane l's nibble q holds (l + q) mod 6 of the
        // six ordered pairs.
        const PAIRS: [u64; 6] = [0x4, 0x8, 0xc, 0x9, 0xd, 0xe];
        let mut meta = [0u64; 32];
        for (l, m) in meta.iter_mut().enumerate() {
            for q in 0..8 {
                *m |= PAIRS[(l + q) % 6] << (4 * q);
            }
        }
        let pair = |l: usize, q: usize| {
            let n = PAIRS[(l + q) % 6] as u32;
            (n & 3, n >> 2)
        };
        for sel in [0u8, 1] {
            let s = sparse_spec("m64n8k32", [Elem::F32, Elem::F16, Elem::F16], sel);
            let at = sparse_k(&s, &meta);
            for r in 0..16usize {
                for c in 0..8usize {
                    // Row r's chunk c: lane 4(r mod 8) + 2 sel + c/4, nibble 4(r/8) + c mod 4.
                    let l = 4 * (r % 8) + 2 * sel as usize + c / 4;
                    let (i0, i1) = pair(l, 4 * (r / 8) + c % 4);
                    let got = (at[r * 16 + 2 * c], at[r * 16 + 2 * c + 1]);
                    assert_eq!(
                        got,
                        (4 * c as u32 + i0, 4 * c as u32 + i1),
                        "sel {sel} r {r} c {c}"
                    );
                }
            }
        }
        // tf32 (1:2): 0b0100 the first of two, 0b1110 the second.
        let s = sparse_spec("m64n8k16", [Elem::F32, Elem::TF32, Elem::TF32], 1);
        let mut meta = [0u64; 32];
        meta[2] = 0x0000_e4e4; // lane 2 (sel 1): row 0's chunks 0-3, then row 8's (zero)
        let at = sparse_k(&s, &meta);
        assert_eq!(&at[..4], &[0, 3, 4, 7]);
        // 8-bit (k64): every lane; row r's chunk c in lane 4(r mod 8) + r/8 + 2(c/8).
        let s = sparse_spec("m64n8k64", [Elem::S32, Elem::S8, Elem::S8], 0);
        let mut meta = [0u64; 32];
        meta[4 + 1 + 2] = 0xe << 4; // row 9, chunk 9: elements (2, 3)
        meta[1] = 0x9; // row 8, chunk 0: (1, 2)
        let at = sparse_k(&s, &meta);
        assert_eq!((at[9 * 32 + 18], at[9 * 32 + 19]), (38, 39));
        assert_eq!((at[8 * 32], at[8 * 32 + 1]), (1, 2));
    }

    #[test]
    #[allow(clippy::needless_range_loop)]
    fn a_sparse_product_multiplies_the_stored_elements_only() {
        // m64n8k32 f16 → f32: row r's stored elements at K 4c + (0, 2); B infinite at
        // every K the metadata skips, so a dense product would be NaN.
        let s = sparse_spec("m64n8k32", [Elem::F32, Elem::F16, Elem::F16], 0);
        let h = |x: f64| crate::math::f64_to_f16(x, crate::math::Rnd::N) as u64;
        let meta = [0x8888_8888u64; 32];
        let at = sparse_k(&s, &meta);
        let a: Vec<u64> = (0..16 * 16).map(|i| h((i % 7) as f64 - 3.0)).collect();
        let b: Vec<u64> = (0..32 * 8)
            .map(|i| {
                let kk = i / 8;
                if kk % 4 == 0 || kk % 4 == 2 {
                    h((i % 5) as f64)
                } else {
                    0x7c00 // +inf
                }
            })
            .collect();
        let mut d = vec![[0u64; 32]; s.d_regs()];
        multiply_sparse(&s, &a, Some(&at), &b, &mut d, false);
        for lane in 0..32 {
            for i in 0..4 {
                let (r, c) = d_coord(lane, i);
                let mut want = 0.0;
                for j in 0..16u32 {
                    let x = ((r * 16 + j) % 7) as f64 - 3.0;
                    let kk = 4 * (j / 2) + 2 * (j % 2);
                    want += x * ((kk * 8 + c) % 5) as f64;
                }
                let got = f32::from_bits(d[i][lane] as u32) as f64;
                assert_eq!(got, want, "({r},{c})");
            }
        }
    }
}
