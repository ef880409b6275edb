//! Warp-level matrix multiply-accumulate: the fragment layouts of `mma.sync` and
//! `wmma.*` (which lane holds which element of A, B, C and D) and the arithmetic of one
//! D = A·B + C, over the registers of all 32 lanes at once.
//!
//! Layouts: `mma.sync`'s are the PTX ISA's ("Matrix Fragments for mma.mMnNkK": groupID =
//! lane >> 2, threadID_in_group = lane % 4; m8n8k4 f16's quad pairs: [`Quad`]; sparse
//! `mma.sp`'s packed A and metadata: [`sparse_k`]). `wmma`'s are left unspecified by PTX; here
//! they are taken to be what ptxas builds them from on sm_80 and later, `mma` tiles: a
//! 16x16 accumulator is two m16n8 accumulators side by side (m32n8: one above the
//! other), a 16x16x16 A is the m16n8k16 A (m32n8k16: two, stacked), a B is m16n8 Bs side
//! by side; m8n32k16 is m32n8k16 transposed (its A that B, its B that A, its
//! accumulator that accumulator, each transposed); f16 A and B keep PTX's eight
//! registers (16 halves, from sm_70), repeating their elements to fill them. Programs
//! that only load, multiply and store do not depend on this; the corpus
//! (`ptx/corpus/tensor_cores.cu`: `wmma_half`, `wmma_other`, `wmma_shapes`) records the
//! H200's registers, and they match.
//!
//! Arithmetic: integers exactly (wrapping, or clamped with `.satfinite`); f64 as a chain
//! of fused multiply-adds in k order, rounded to nearest each step (NaNs propagated as
//! [`fma_f64`] says); f16, bf16 and tf32 as
//! the H200's tensor cores do it, measured by the corpus (`mma_probe`, `mma_half`,
//! `mma_tf32`, bit for bit): products exact; each term aligned by its exponent, a
//! product's being the sum of its factors' exponents (a subnormal's the format's
//! smallest), not its own leading bit; every term (C and the k products) cut toward zero
//! at 2^(E - 25), E the largest of those exponents ([`ALIGN_BITS`]); the cut terms summed
//! exactly and the sum rounded once: toward zero to an f32 result (past f32's range: an
//! infinity), to nearest to an f16 result; a sum that rounds to zero is +0. NaN results
//! are the canonical NaN.
//!
//! FP8 (e4m3, e5m2) two ways, each measured bit for bit by the corpus (`wgmma_fp8`,
//! `mma_fp8`). `wgmma` runs on Hopper's FP8 tensor cores ([`Fp8Path::TensorCore`]): C and
//! the instruction's whole k of products aligned and cut as above but at 2^(E - 13)
//! ([`FP8_ALIGN_BITS`]: the limited accumulator the DeepSeek-V3 report describes), summed
//! exactly, then to an f32 result cut toward zero to 13 fraction bits, or to an f16
//! result rounded to nearest. sm_90 has no FP8 `mma.sync`: ptxas lowers it
//! ([`Fp8Path::ViaF16`]) to conversions to f16 and two f16 `mma`s (`HMMA.16816` for
//! k32, `HMMA.1688` for k16) from a zero accumulator, the first on the k with k mod 4 < 2
//! (the low halves of the fragment's registers), the second on the rest, each the f16
//! arithmetic above; then C added by an ordinary `add` (`FADD`, `HADD2`: rounded to
//! nearest).
//!
//! `mma.m8n8k4` of f16 (sm_70's quad pairs) has no tensor-core instruction on sm_90:
//! the GPU computes it with shuffles and ordinary f32 arithmetic (multiplies, fused
//! multiply-adds, adds, a final conversion to f16), each step an IEEE operation rounded
//! to nearest: [`quad_pair_dot`] is that arithmetic as a specification, written in Rust
//! and held to the corpus's `mma_m8n8k4` recording bit for bit (the executor runs PTX
//! semantics, never NVIDIA's compiled code). D's registers take D's type's layout,
//! whatever C's type ([`Quad`]).

use crate::math::{self, Lanes, Rnd};

/// Bits kept of each term, from the largest term's exponent down: 26 on the H200
/// (`mma_probe`: 2^15 + 14·2^-10 keeps the small terms, 14·2^-11 is cut; 3 + n·2^-24
/// keeps them). Published measurements by the leading bit say 24 on A100, 25 on H100.
pub const ALIGN_BITS: i32 = 26;

/// Products fused in one sum with the accumulator: an `mma` instruction's whole k (16 at
/// most for f16/bf16, 8 for tf32), with one final rounding, as the H200 measures
/// (`mma_tf32`'s m16n8k8 is one sum).
pub const BLOCK_TERMS: usize = 16;

/// Products fused in one sum by wmma's tf32 m16n16k8: 4, its k in two halves, the first
/// half's sum rounded to f32 before the second is added (measured on the H200: ptxas
/// builds it from m16n8k4 steps; f16 and bf16 wmma are single sums).
pub const WMMA_TF32_BLOCK_TERMS: usize = 4;

/// Bits kept of each term of an FP8 `wgmma`, from the largest term's exponent down: 14
/// on the H200 (`wgmma_fp8`: every word, 13 to 26 tried), and 13 fraction bits of an f32
/// result.
pub const FP8_ALIGN_BITS: i32 = 14;
const FP8_F32_FRACTION_BITS: u32 = 13;

/// How the H200 computes a product of FP8 matrices (module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fp8Path {
    /// `wgmma`: the FP8 tensor cores' own sum.
    TensorCore,
    /// `mma.sync`: ptxas's f16 `mma` pair and an `add` of C.
    ViaF16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    F16,
    BF16,
    TF32,
    F32,
    F64,
    S8,
    U8,
    S4,
    U4,
    B1,
    S32,
    /// FP8 (sm_89's `mma`, sm_90a's `wgmma`): decoded by `math::Fp8`.
    E4M3,
    E5M2,
}

impl Elem {
    pub fn from_name(s: &str) -> Option<Elem> {
        Some(match s {
            "f16" => Elem::F16,
            "bf16" => Elem::BF16,
            "tf32" => Elem::TF32,
            "f32" => Elem::F32,
            "f64" => Elem::F64,
            "s8" => Elem::S8,
            "u8" => Elem::U8,
            "s4" => Elem::S4,
            "u4" => Elem::U4,
            "b1" => Elem::B1,
            "s32" => Elem::S32,
            "e4m3" => Elem::E4M3,
            "e5m2" => Elem::E5M2,
            _ => return None,
        })
    }

    pub fn bits(self) -> u32 {
        match self {
            Elem::F16 | Elem::BF16 => 16,
            Elem::TF32 | Elem::F32 | Elem::S32 => 32,
            Elem::F64 => 64,
            Elem::S8 | Elem::U8 | Elem::E4M3 | Elem::E5M2 => 8,
            Elem::S4 | Elem::U4 => 4,
            Elem::B1 => 1,
        }
    }

    pub(crate) fn is_int(self) -> bool {
        matches!(
            self,
            Elem::S8 | Elem::U8 | Elem::S4 | Elem::U4 | Elem::B1 | Elem::S32
        )
    }

    /// An integer element's value from its raw bits.
    fn int(self, raw: u64) -> i64 {
        match self {
            Elem::S8 => raw as u8 as i8 as i64,
            Elem::S4 => ((raw as u8) << 4) as i8 as i64 >> 4,
            Elem::S32 => raw as u32 as i32 as i64,
            _ => raw as i64,
        }
    }

    /// A float element's exponent as the tensor cores align it: a subnormal's is the
    /// format's smallest (its significand is 0.xxx).
    fn exponent(self, raw: u64) -> i32 {
        let (field, bias) = match self {
            Elem::F16 => ((raw >> 10) & 0x1f, 15),
            Elem::BF16 => ((raw >> 7) & 0xff, 127),
            Elem::E4M3 => ((raw >> 3) & 0xf, 7),
            Elem::E5M2 => ((raw >> 2) & 0x1f, 15),
            _ => ((raw >> 23) & 0xff, 127),
        };
        field.max(1) as i32 - bias
    }

    /// A float element's value (exact in f64), from its raw bits. tf32 is an f32 of
    /// which the tensor cores read the top 19 bits.
    fn float(self, raw: u64) -> f64 {
        match self {
            Elem::F16 => math::f16_to_f32(raw as u16) as f64,
            Elem::BF16 => f32::from_bits((raw as u32) << 16) as f64,
            Elem::TF32 => f32::from_bits(raw as u32 & 0xffff_e000) as f64,
            Elem::F32 => f32::from_bits(raw as u32) as f64,
            Elem::E4M3 => math::fp8_value(math::Fp8::E4M3, raw as u8),
            Elem::E5M2 => math::fp8_value(math::Fp8::E5M2, raw as u8),
            _ => f64::from_bits(raw),
        }
    }

    /// A float element's raw bits with its sign flipped (`wgmma`'s `imm-scale` of -1);
    /// tf32 is an f32's upper bits, its sign bit 31.
    pub(crate) fn negate(self, raw: u64) -> u64 {
        match self {
            Elem::TF32 | Elem::F32 => raw ^ 0x8000_0000,
            e if !e.is_int() => raw ^ (1 << (e.bits() - 1)),
            _ => raw,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

impl Shape {
    /// `m16n8k16` and friends.
    pub fn from_name(s: &str) -> Option<Shape> {
        let s = s.strip_prefix('m')?;
        let (m, s) = s.split_once('n')?;
        let (n, k) = s.split_once('k')?;
        Some(Shape {
            m: m.parse().ok()?,
            n: n.parse().ok()?,
            k: k.parse().ok()?,
        })
    }
}

/// Which instruction family's fragments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Mma,
    Wmma,
}

/// Which matrix: A (M×K), B (K×N), or the accumulator C or D (M×N).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    A,
    B,
    C,
}

/// One operand's fragment: which lane holds which element, and how they pack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frag {
    pub form: Form,
    pub shape: Shape,
    pub role: Role,
    pub elem: Elem,
    /// `mma.m8n8k4` with f16 A and B (sm_70's shape): the fragment's layout among the
    /// ISA's four ("Matrix Fragments for mma.m8n8k4 with .f16 floating point type");
    /// None for every other fragment.
    pub quad: Option<Quad>,
}

/// The layouts of `mma.m8n8k4`'s f16 fragments. The warp computes four independent
/// 8x8x4 products, product q on the quad pair of lanes 4q..4q+3 (the low group, A's and
/// C's rows 0-3, B's columns 0-3) and 4q+16..4q+19 (the high group: rows or columns
/// 4-7). A fragment's coordinates stack the four matrices: product q's A rows at 8q,
/// B rows at 4q, accumulator rows at 8q.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quad {
    /// A or B given `.row`.
    Row,
    /// A or B given `.col`.
    Col,
    /// An f16 accumulator (C or D): a lane holds one row of its product's.
    AccRows,
    /// An f32 accumulator (C or D). An f32 D from an f16 C has this layout too, by its
    /// own type, not C's (measured: the corpus's `mma_m8n8k4`).
    AccF32,
}

impl Frag {
    /// The fragment, if the combination exists (on sm_90).
    pub fn new(form: Form, shape: Shape, role: Role, elem: Elem) -> Option<Frag> {
        let f = Frag {
            form,
            shape,
            role,
            elem,
            quad: None,
        };
        let (m, n, k) = (shape.m, shape.n, shape.k);
        let ok = match (form, role) {
            (_, Role::C) => {
                matches!(elem, Elem::F16 | Elem::F32 | Elem::F64 | Elem::S32)
                    && match form {
                        Form::Mma => (m == 16 || m == 8) && n == 8,
                        Form::Wmma => {
                            matches!((m, n), (16, 16) | (32, 8) | (8, 32))
                                || (m, n) == (8, 8) && matches!(k, 4 | 32 | 128)
                        }
                    }
            }
            (Form::Mma, _) => match elem {
                Elem::F64 => {
                    (m, n, k) == (8, 8, 4) || (m == 16 && n == 8 && matches!(k, 4 | 8 | 16))
                }
                Elem::TF32 => m == 16 && n == 8 && matches!(k, 4 | 8),
                Elem::F16
                | Elem::BF16
                | Elem::S8
                | Elem::U8
                | Elem::S4
                | Elem::U4
                | Elem::B1
                | Elem::E4M3
                | Elem::E5M2 => {
                    let v = 32 / elem.bits();
                    (m == 16 && n == 8 && (k == 4 * v || k == 8 * v))
                        || (m == 8 && n == 8 && k == 4 * v && elem.is_int())
                }
                _ => false,
            },
            (Form::Wmma, _) => match elem {
                Elem::F16 | Elem::BF16 | Elem::S8 | Elem::U8 => {
                    k == 16 && matches!((m, n), (16, 16) | (32, 8) | (8, 32))
                }
                Elem::TF32 => (m, n, k) == (16, 16, 8),
                Elem::F64 => (m, n, k) == (8, 8, 4),
                // The sub-byte shapes (sm_75's): A row-major, B column-major only.
                Elem::S4 | Elem::U4 => (m, n, k) == (8, 8, 32),
                Elem::B1 => (m, n, k) == (8, 8, 128),
                _ => false,
            },
        };
        ok.then_some(f)
    }

    /// `mma.m8n8k4`'s f16 fragment of `role` in layout `quad` (see [`Quad`]).
    pub fn quad_pair(role: Role, elem: Elem, quad: Quad) -> Frag {
        Frag {
            form: Form::Mma,
            shape: Shape { m: 8, n: 8, k: 4 },
            role,
            elem,
            quad: Some(quad),
        }
    }

    /// Rows and columns of the matrix (`mma.m8n8k4` f16: its four matrices stacked).
    pub fn dims(&self) -> (u32, u32) {
        let s = self.shape;
        if self.quad.is_some() {
            return match self.role {
                Role::A => (32, 4),
                Role::B => (16, 8),
                Role::C => (32, 8),
            };
        }
        match self.role {
            Role::A => (s.m, s.k),
            Role::B => (s.k, s.n),
            Role::C => (s.m, s.n),
        }
    }

    /// Elements each lane holds: wmma's f16 A and B always take PTX's eight registers
    /// (sm_70's fragments), holding their elements twice or four times over.
    pub fn per_lane(&self) -> usize {
        if self.form == Form::Wmma && self.role != Role::C && self.elem == Elem::F16 {
            return 16;
        }
        self.unique()
    }

    /// Distinct elements each lane holds.
    fn unique(&self) -> usize {
        let (r, c) = self.dims();
        (r * c / 32) as usize
    }

    /// Bits of one register: 64 for f64 fragments, else 32.
    pub fn reg_bits(&self) -> u32 {
        if self.elem == Elem::F64 {
            64
        } else {
            32
        }
    }

    pub fn per_reg(&self) -> usize {
        (self.reg_bits() / self.elem.bits()) as usize
    }

    /// Registers the fragment takes in an instruction's vector operand.
    pub fn regs(&self) -> usize {
        self.per_lane() / self.per_reg()
    }

    /// (row, column) of element `i` of `lane`'s fragment.
    pub fn coord(&self, lane: usize, i: usize) -> (u32, u32) {
        let (g, t, i) = ((lane >> 2) as u32, (lane & 3) as u32, i as u32);
        let s = self.shape;
        if let Some(quad) = self.quad {
            // The ISA's formulas, in the product's own matrix, then stacked.
            let (q, hi, lane) = (g & 3, 4 * (g >> 2), lane as u32);
            return match (self.role, quad) {
                (Role::A, Quad::Col) => (8 * q + i % 4 + hi, t),
                (Role::A, _) => (8 * q + t + hi, i),
                (Role::B, Quad::Col) => (4 * q + i, t + hi),
                (Role::B, _) => (4 * q + t, i + hi),
                (_, Quad::AccF32) => (
                    8 * q + (lane & 1) + (i & 2) + hi,
                    (i & 4) + (lane & 2) + (i & 1),
                ),
                _ => (8 * q + t + hi, i),
            };
        }
        match (self.form, self.role) {
            (Form::Mma, Role::C) if s.m == 8 => (g, 2 * t + i),
            (Form::Mma, Role::C) => (g + 8 * (i >> 1), 2 * t + (i & 1)),
            (Form::Mma, role) => mma_coord(self.elem, s, role, g, t, i),
            (Form::Wmma, _) => self.wmma_coord(g, t, i % self.unique() as u32),
        }
    }

    /// wmma's fragments as `mma` tiles (module comment): A as m16n8kK As stacked down M,
    /// B as m16n8kK Bs side by side along N, the accumulator as m16n8 tiles along N, then
    /// down M; m8n32k16 as m32n8k16 transposed.
    fn wmma_coord(&self, g: u32, t: u32, j: u32) -> (u32, u32) {
        let (s, elem) = (self.shape, self.elem);
        let tile = Shape {
            m: 16,
            n: 8,
            k: s.k,
        };
        match self.role {
            Role::C if s.m == 8 && s.n == 8 => (g, 2 * t + j),
            // f64 and the sub-byte shapes: `mma`'s m8n8k4, m8n8k32 and m8n8k128.
            _ if elem == Elem::F64 || elem.bits() < 8 => mma_coord(elem, s, self.role, g, t, j),
            // m8n32k16 is m32n8k16 transposed (D' = B'A'): its A is that B transposed,
            // its B that A, its accumulator that accumulator (measured on the H200 for
            // bf16 with f32 accumulators).
            _ if s.m == 8 => {
                let role = match self.role {
                    Role::A => Role::B,
                    Role::B => Role::A,
                    Role::C => Role::C,
                };
                let shape = Shape {
                    m: s.n,
                    n: s.m,
                    k: s.k,
                };
                let (r, c) = Frag {
                    shape,
                    role,
                    ..*self
                }
                .wmma_coord(g, t, j);
                (c, r)
            }
            Role::C => {
                let (tm, tn) = ((j / 4) / (s.n / 8), (j / 4) % (s.n / 8));
                (g + 8 * ((j >> 1) & 1) + 16 * tm, 2 * t + (j & 1) + 8 * tn)
            }
            Role::A => {
                let per = s.k * 16 / 32;
                let (r, c) = mma_coord(elem, tile, Role::A, g, t, j % per);
                (r + 16 * (j / per), c)
            }
            Role::B => {
                let per = s.k * 8 / 32;
                let (r, c) = mma_coord(elem, tile, Role::B, g, t, j % per);
                (r, c + 8 * (j / per))
            }
        }
    }
}

/// The PTX ISA's layouts of A and B for `mma` (m16n8 or m8n8 shapes).
fn mma_coord(elem: Elem, s: Shape, role: Role, g: u32, t: u32, i: u32) -> (u32, u32) {
    match elem {
        Elem::TF32 | Elem::F64 if s.m == 8 => match role {
            Role::A => (g, t),
            _ => (t, g),
        },
        Elem::TF32 | Elem::F64 => match role {
            Role::A => (g + 8 * (i & 1), t + 4 * (i >> 1)),
            _ => (t + 4 * i, g),
        },
        _ => {
            // `v` elements to a 32-bit register; k is 4v (one block of columns) or 8v
            // (two, the second 4v further on; a sparse `mma`'s B of 16v rows: four).
            let v = 32 / elem.bits();
            let double = s.k >= 8 * v;
            match (role, s.m) {
                (Role::A, 8) => (g, v * t + i),
                (Role::A, _) if double => {
                    (g + 8 * ((i / v) & 1), v * t + i % v + 4 * v * (i / (2 * v)))
                }
                (Role::A, _) => (g + 8 * (i / v), v * t + i % v),
                (_, _) if double => (v * t + i % v + 4 * v * (i / v), g),
                _ => (v * t + i, g),
            }
        }
    }
}

/// The raw bits of element `i` of one lane's fragment.
pub fn element(f: &Frag, regs: &[Lanes], lane: usize, i: usize) -> u64 {
    let (per, bits) = (f.per_reg(), f.elem.bits());
    let word = regs[i / per][lane];
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    (word >> ((i % per) as u32 * bits)) & mask
}

/// Puts element `i` of one lane's fragment into its register.
pub fn set_element(f: &Frag, regs: &mut [Lanes], lane: usize, i: usize, v: u64) {
    let (per, bits) = (f.per_reg(), f.elem.bits());
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let sh = (i % per) as u32 * bits;
    let w = &mut regs[i / per][lane];
    *w = (*w & !(mask << sh)) | ((v & mask) << sh);
}

/// The whole matrix from the warp's fragments (row-major raw bits); where lanes hold an
/// element twice, the first copy counts.
fn gather(f: &Frag, regs: &[Lanes]) -> Vec<u64> {
    let (rows, cols) = f.dims();
    let mut out = vec![0u64; (rows * cols) as usize];
    let mut seen = vec![false; out.len()];
    for lane in 0..32 {
        for i in 0..f.per_lane() {
            let (r, c) = f.coord(lane, i);
            let at = (r * cols + c) as usize;
            if !seen[at] {
                seen[at] = true;
                out[at] = element(f, regs, lane, i);
            }
        }
    }
    out
}

/// One `mma`: what it multiplies and adds, in which types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MmaSpec {
    pub a: Frag,
    pub b: Frag,
    pub c: Frag,
    pub d: Frag,
    pub satfinite: bool,
    /// b1 only: `.xor.popc` (true) or `.and.popc`.
    pub xor: bool,
    /// `mma.sp`: the sparsity selector. A is then stored packed (M × K/2, `a`'s shape
    /// has K/2), its elements' places in K given by the metadata ([`sparse_k`]).
    pub sparse: Option<u8>,
}

impl MmaSpec {
    /// Checks the combination of types sm_90 has.
    pub fn new(
        form: Form,
        shape: Shape,
        [d, a, b, c]: [Elem; 4],
        satfinite: bool,
        xor: bool,
    ) -> Option<MmaSpec> {
        let ok = match a {
            Elem::F16 => {
                // wmma mixes f16 and f32 accumulators; mma has D in C's type.
                b == a
                    && matches!(c, Elem::F16 | Elem::F32)
                    && matches!(d, Elem::F16 | Elem::F32)
                    && (form == Form::Wmma || c == d)
            }
            Elem::BF16 | Elem::TF32 => b == a && c == Elem::F32 && d == Elem::F32,
            Elem::F64 => b == a && c == a && d == a,
            Elem::S8 | Elem::U8 => matches!(b, Elem::S8 | Elem::U8) && c == Elem::S32 && d == c,
            // wmma's sub-byte products take one type for both.
            Elem::S4 | Elem::U4 => {
                matches!(b, Elem::S4 | Elem::U4)
                    && (form == Form::Mma || b == a)
                    && c == Elem::S32
                    && d == c
            }
            Elem::B1 => b == a && c == Elem::S32 && d == c,
            // sm_89's FP8 `mma` (m16n8k16, m16n8k32): any mix of the two formats, f32 or
            // f16 accumulators.
            Elem::E4M3 | Elem::E5M2 => {
                form == Form::Mma
                    && matches!(b, Elem::E4M3 | Elem::E5M2)
                    && matches!(c, Elem::F16 | Elem::F32)
                    && d == c
            }
            _ => false,
        };
        if !ok || satfinite && !a.is_int() {
            return None;
        }
        Some(MmaSpec {
            a: Frag::new(form, shape, Role::A, a)?,
            b: Frag::new(form, shape, Role::B, b)?,
            c: Frag::new(form, shape, Role::C, c)?,
            d: Frag::new(form, shape, Role::C, d)?,
            satfinite,
            xor,
            sparse: None,
        })
    }

    /// `mma.sync.aligned.m8n8k4.ALAYOUT.BLAYOUT.D.f16.f16.C` (sm_70's shape; `col_a`,
    /// `col_b`: given `.col`): D and C f16, D f32 from C f16, or both f32.
    pub fn quad_pair([d, a, b, c]: [Elem; 4], col_a: bool, col_b: bool) -> Option<MmaSpec> {
        use Elem::{F16, F32};
        let ok = a == F16 && b == F16 && matches!((d, c), (F16, F16) | (F32, F16) | (F32, F32));
        if !ok {
            return None;
        }
        let layout = |col| if col { Quad::Col } else { Quad::Row };
        // Each accumulator's layout follows its own type ([`Quad::AccF32`]).
        let acc = |e| {
            if e == F16 {
                Quad::AccRows
            } else {
                Quad::AccF32
            }
        };
        Some(MmaSpec {
            a: Frag::quad_pair(Role::A, a, layout(col_a)),
            b: Frag::quad_pair(Role::B, b, layout(col_b)),
            c: Frag::quad_pair(Role::C, c, acc(c)),
            d: Frag::quad_pair(Role::C, d, acc(d)),
            satfinite: false,
            xor: false,
            sparse: None,
        })
    }

    /// `mma.sp{::ordered_metadata}.sync.aligned.SHAPE.row.col[.satfinite].D.A.B.C` with
    /// sparsity selector `sel`, if sm_90 has it (as ptxas 13 accepts them): f16 (D in C's
    /// type) and bf16 m16n8k16/k32, tf32 m16n8k8/k16, s8/u8 m16n8k32/k64, s4/u4
    /// m16n8k64/k128. `Err` names what is wrong: the selector's range (0..=3 where a
    /// group's metadata fits one thread, 0..=1 where it takes two, 0 where four). FP8
    /// (`m16n8k64`, e4m3/e5m2 in any mix, f32 accumulators) is what ptxas 13 makes of it
    /// on sm_90, which has no FP8 `mma`: read off its SASS, the operands converted to
    /// f16, two sparse f16 `HMMA.SP.16832`s, the first from +0 on the stored elements in
    /// the low halves of A's registers (packed column mod 4 < 2), the second on the rest
    /// accumulating onto the first, then C added by an `FADD`: the dense FP8 path's
    /// arithmetic ([`Fp8Path::ViaF16`]) over the packed columns.
    pub fn sparse(
        shape: Shape,
        [d, a, b, c]: [Elem; 4],
        satfinite: bool,
        sel: u8,
    ) -> Result<MmaSpec, String> {
        let Shape { m, n, k } = shape;
        let dense_k = match a {
            Elem::F16 | Elem::BF16 => 16,
            Elem::TF32 => 8,
            Elem::S8 | Elem::U8 | Elem::E4M3 | Elem::E5M2 => 32,
            Elem::S4 | Elem::U4 => 64,
            _ => return Err(format!("sparse `mma` of {a:?} is not emulated")),
        };
        let fp8 = matches!(a, Elem::E4M3 | Elem::E5M2);
        let ok = (m, n) == (16, 8)
            && (k == dense_k && !fp8 || k == 2 * dense_k)
            && match a {
                // FP8: m16n8k64 with f32 accumulators only (ptxas 13 for sm_90).
                Elem::E4M3 | Elem::E5M2 => matches!(b, Elem::E4M3 | Elem::E5M2) && c == Elem::F32,
                Elem::F16 => b == a && c == d && matches!(c, Elem::F16 | Elem::F32),
                Elem::BF16 | Elem::TF32 => b == a && c == Elem::F32 && d == c,
                Elem::S8 | Elem::U8 => matches!(b, Elem::S8 | Elem::U8) && c == Elem::S32,
                _ => matches!(b, Elem::S4 | Elem::U4) && c == Elem::S32 && d == c,
            }
            && d == c
            && (!satfinite || a.is_int());
        if !ok {
            return Err("no such sparse `mma` on sm_90".into());
        }
        let max_sel = match sparse_chunks(a, k) {
            4 => 3,
            8 => 1,
            _ => 0,
        };
        if sel > max_sel {
            return Err(format!(
                "the sparsity selector of this shape and type must be 0..={max_sel}"
            ));
        }
        let half = Shape { k: k / 2, ..shape };
        let frag = |s, role, e| Frag::new(Form::Mma, s, role, e).ok_or("no such fragment");
        Ok(MmaSpec {
            a: frag(half, Role::A, a)?,
            // B has twice the rows of the largest dense shape's for f16, bf16, tf32 and
            // the 8- and 4-bit k64/k128: the ISA's sparse B figures extend the dense
            // formula (`mma_coord`) by further blocks of 4v rows.
            b: Frag {
                form: Form::Mma,
                shape,
                role: Role::B,
                elem: b,
                quad: None,
            },
            c: frag(shape, Role::C, c)?,
            d: frag(shape, Role::C, d)?,
            satfinite,
            xor: false,
            sparse: Some(sel),
        })
    }
}

/// Metadata chunks in a row of a sparse A of `k` columns: a chunk is four 16-bit units
/// (f16, bf16: 2:4; tf32: 1:2) or four bytes (8-bit: 2:4; 4-bit: pairs, 4:8) of the
/// dense row, and its 4 bits of metadata place the half it stores.
fn sparse_chunks(a: Elem, k: u32) -> u32 {
    let unit = if a.bits() >= 16 { 16 } else { 8 };
    k * a.bits() / (4 * unit)
}

/// Where in K each stored element of a sparse A lies (16 × K/2, row-major), from the
/// metadata registers `meta` of the warp's lanes: the PTX ISA's "Sparse matrix storage"
/// and its metadata figures for `mma.sp`, the same placement `wgmma`'s sparse A has
/// (`wgmma::sparse_k`):
///
/// - 16-bit units (f16, bf16, tf32), C chunks a row (4 or 8): row r's chunk c in lane
///   `4·(r mod 8) + (C/4)·sel + c/4`, bits `16·(r/8) + 4·(c mod 4)`: one thread of each
///   four (C = 4, `sel` 0..=3) or a pair (C = 8, `sel` 0 or 1) holds the group's.
/// - byte units (8- and 4-bit), C = 16 (every thread, `sel` 0): lane
///   `4·(r mod 8) + r/8 + 2·(c/8)`, bits `4·(c mod 8)`; C = 8 (a pair, `sel` 0 or 1):
///   lane `4·(r mod 8) + 2·sel + r/8`, bits `4·c` (the C = 16 placement's first half,
///   the pair the selector names; the corpus's `mma_sparse` records it on the H200).
///
/// In a chunk's 4 bits, bits 0-1 are the unit index of its first stored unit, bits 2-3
/// of its second: f16 and 8-bit elements are one unit each; tf32's one element a chunk
/// takes two units (0b0100: the first, 0b1110: the second element); a 4-bit pair is one
/// byte unit (so a chunk of 8 nibbles keeps two pairs).
pub fn sparse_k(s: &MmaSpec, meta: &Lanes) -> Vec<u32> {
    let sel = u32::from(s.sparse.unwrap_or(0));
    let a = s.a.elem;
    let k = s.b.shape.k;
    let cols = k / 2;
    let chunks = sparse_chunks(a, k);
    let bytes = a.bits() < 16;
    // Stored elements a chunk has.
    let per = cols / chunks;
    let mut at = vec![0u32; (16 * cols) as usize];
    for r in 0..16u32 {
        for j in 0..cols {
            let (c, w) = (j / per, j % per);
            let (lane, bit) = match (bytes, chunks) {
                (false, _) => (
                    4 * (r % 8) + (chunks / 4) * sel + c / 4,
                    16 * (r / 8) + 4 * (c % 4),
                ),
                (true, 16) => (4 * (r % 8) + r / 8 + 2 * (c / 8), 4 * (c % 8)),
                (true, _) => (4 * (r % 8) + 2 * sel + r / 8, 4 * c),
            };
            let nibble = (meta[lane as usize % 32] >> bit) as u32 & 0xf;
            let idx = |which: u32| (nibble >> (2 * which)) & 3;
            at[(r * cols + j) as usize] = match a.bits() {
                32 => 2 * c + idx(0) / 2,
                4 => 8 * c + 2 * idx(w / 2) + w % 2,
                _ => 4 * c + idx(w),
            };
        }
    }
    at
}

/// What one element of D is made of: the operands' types and the instruction's options,
/// shared by `mma`, `wmma` and `wgmma`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arith {
    pub a: Elem,
    pub b: Elem,
    pub c: Elem,
    pub d: Elem,
    pub satfinite: bool,
    /// b1 only: `.xor.popc` (true) or `.and.popc`.
    pub xor: bool,
    /// Products fused in one sum with the accumulator so far (floats but FP8).
    pub block: usize,
    /// FP8 operands only: which instruction's arithmetic.
    pub fp8: Fp8Path,
    /// `mma.m8n8k4` of f16: ptxas's f32 arithmetic on the CUDA cores ([`quad_pair_dot`]),
    /// not the tensor cores' fused sum.
    pub quad_pair: bool,
}

impl MmaSpec {
    pub fn arith(&self) -> Arith {
        let block = match self.a.elem {
            Elem::TF32 if self.a.form == Form::Wmma => WMMA_TF32_BLOCK_TERMS,
            _ => BLOCK_TERMS,
        };
        Arith {
            a: self.a.elem,
            b: self.b.elem,
            c: self.c.elem,
            d: self.d.elem,
            satfinite: self.satfinite,
            xor: self.xor,
            block,
            fp8: Fp8Path::ViaF16,
            quad_pair: self.a.quad.is_some(),
        }
    }
}

/// One element of D: the accumulator `c` plus the `k` products `ai(kk)·bi(kk)` (raw bits
/// in, raw bits out), as the module comment says. `prods` is scratch space.
pub(crate) fn dot(
    s: &Arith,
    k: u32,
    ai: impl Fn(u32) -> u64,
    bi: impl Fn(u32) -> u64,
    c: u64,
    prods: &mut Vec<Term>,
) -> u64 {
    let (ea, eb) = (s.a, s.b);
    if ea.is_int() {
        let mut acc = Elem::S32.int(c);
        for kk in 0..k {
            acc += if ea == Elem::B1 {
                let x = if s.xor {
                    ai(kk) ^ bi(kk)
                } else {
                    ai(kk) & bi(kk)
                };
                x as i64
            } else {
                ea.int(ai(kk)) * eb.int(bi(kk))
            };
        }
        return if s.satfinite {
            acc.clamp(i32::MIN as i64, i32::MAX as i64) as u32 as u64
        } else {
            acc as u32 as u64
        };
    }
    if ea == Elem::F64 {
        let mut acc = c;
        for kk in 0..k {
            acc = fma_f64(ai(kk), bi(kk), acc);
        }
        return acc;
    }
    if matches!(ea, Elem::E4M3 | Elem::E5M2) {
        return fp8_dot(s, k, ai, bi, c, prods);
    }
    if s.quad_pair {
        return quad_pair_dot(s, ai, bi, c);
    }
    prods.clear();
    let mut nan = false;
    for kk in 0..k {
        let (x, y) = (ea.float(ai(kk)), eb.float(bi(kk)));
        // inf·0 is NaN here as anywhere.
        nan |= x.is_nan() || y.is_nan();
        prods.push(Term {
            value: x * y,
            exp: ea.exponent(ai(kk)) + eb.exponent(bi(kk)),
        });
    }
    // Blocks of products, each fused with the accumulator so far (rounded to f32 between
    // blocks).
    let (mut acc, mut acc_elem) = (c, s.c);
    let nblocks = prods.len().div_ceil(s.block).max(1);
    let mut bits = 0;
    for n in 0..nblocks {
        let block = &prods[(n * s.block).min(prods.len())..((n + 1) * s.block).min(prods.len())];
        let last = n + 1 == nblocks;
        let c = Term {
            value: acc_elem.float(acc),
            exp: acc_elem.exponent(acc),
        };
        bits = fused_dot(c, block, nan, last && s.d == Elem::F16);
        (acc, acc_elem) = (bits, Elem::F32);
    }
    bits
}

/// [`dot`] of `mma.m8n8k4`'s f16 products (k = 4) as sm_90 computes it: ptxas lowers
/// the instruction to f32 arithmetic on the CUDA cores, every step rounded to nearest
/// (IEEE, subnormals kept), the f16 operands converted exactly. An f32 D is
/// `C + fma(a3, b3, fma(a2, b2, fma(a1, b1, fma(a0, b0, +0))))` (`FFMA` chain, then
/// `FADD`); an f16 D is `(C + fma(a1, b1, a0·b0)) + fma(a3, b3, a2·b2)` (`FMUL`, `FFMA`,
/// two `FADD`s) rounded once more to f16 (`F2FP`). A NaN result is the canonical NaN.
/// Worked out for every layout and type (reading what ptxas 13 generates for them) and
/// confirmed bit for bit by the corpus's `mma_m8n8k4` on the H200.
fn quad_pair_dot(s: &Arith, ai: impl Fn(u32) -> u64, bi: impl Fn(u32) -> u64, c: u64) -> u64 {
    let (a, b) = (|k| s.a.float(ai(k)) as f32, |k| s.b.float(bi(k)) as f32);
    let c = s.c.float(c) as f32;
    let d = if s.d == Elem::F16 {
        // The plain product keeps a -0 that fma(a0, b0, +0) would make +0.
        let low = a(1).mul_add(b(1), a(0) * b(0));
        let high = a(3).mul_add(b(3), a(2) * b(2));
        (c + low) + high
    } else {
        let sum = (0..4).fold(0.0f32, |acc, k| a(k).mul_add(b(k), acc));
        c + sum
    };
    match (d.is_nan(), s.d == Elem::F16) {
        (true, true) => 0x7fff,
        (true, false) => math::CANONICAL_NAN32 as u64,
        (false, true) => math::f64_to_f16(d as f64, Rnd::N) as u64,
        (false, false) => d.to_bits() as u64,
    }
}

/// [`dot`] of FP8 operands, by the instruction's path (module comment).
fn fp8_dot(
    s: &Arith,
    k: u32,
    ai: impl Fn(u32) -> u64,
    bi: impl Fn(u32) -> u64,
    c: u64,
    prods: &mut Vec<Term>,
) -> u64 {
    let (ea, eb) = (s.a, s.b);
    let to_f16 = s.d == Elem::F16;
    let c_term = Term {
        value: s.c.float(c),
        exp: s.c.exponent(c),
    };
    // An FP8 value as an f16 `mma` sees it after ptxas's exact conversion: the same
    // value, its exponent f16's (an e4m3 subnormal is a normal half).
    let via_f16 = |e: Elem, raw: u64| {
        let h = math::f64_to_f16(e.float(raw), Rnd::N) as u64;
        (Elem::F16.float(h), Elem::F16.exponent(h))
    };
    prods.clear();
    let mut nan = false;
    for kk in 0..k {
        let ((x, xe), (y, ye)) = match s.fp8 {
            Fp8Path::TensorCore => (
                (ea.float(ai(kk)), ea.exponent(ai(kk))),
                (eb.float(bi(kk)), eb.exponent(bi(kk))),
            ),
            Fp8Path::ViaF16 => (via_f16(ea, ai(kk)), via_f16(eb, bi(kk))),
        };
        nan |= x.is_nan() || y.is_nan();
        prods.push(Term {
            value: x * y,
            exp: xe + ye,
        });
    }
    match s.fp8 {
        Fp8Path::TensorCore => {
            let out = if to_f16 { Out::F16 } else { Out::F32Fp8 };
            fused_dot_cut(c_term, prods, nan, FP8_ALIGN_BITS, out)
        }
        Fp8Path::ViaF16 => {
            // The two f16 `mma`s, from +0: k mod 4 < 2, then the rest.
            let half = |low: bool| -> Vec<Term> {
                (0..k as usize)
                    .filter(|kk| (kk % 4 < 2) == low)
                    .map(|kk| prods[kk])
                    .collect()
            };
            let zero = Term { value: 0.0, exp: 0 };
            let first = fused_dot(zero, &half(true), nan, to_f16);
            let acc_elem = if to_f16 { Elem::F16 } else { Elem::F32 };
            let acc = Term {
                value: acc_elem.float(first),
                exp: acc_elem.exponent(first),
            };
            let sum = fused_dot(acc, &half(false), nan, to_f16);
            // C joins by an ordinary add, rounded to nearest; a NaN is the canonical one.
            if to_f16 {
                let x = Elem::F16.float(sum) + s.c.float(c);
                if x.is_nan() {
                    0x7fff
                } else {
                    math::f64_to_f16(x, Rnd::N) as u64
                }
            } else {
                let x = f32::from_bits(sum as u32) + f32::from_bits(c as u32);
                if x.is_nan() {
                    math::CANONICAL_NAN32 as u64
                } else {
                    x.to_bits() as u64
                }
            }
        }
    }
}

/// D = A·B + C over the warp: `a`, `b`, `c` are the operands' registers (all 32 lanes),
/// the result is D's.
#[cfg(test)]
pub fn mma(s: &MmaSpec, a: &[Lanes], b: &[Lanes], c: &[Lanes]) -> Vec<Lanes> {
    mma_sparse(s, a, b, c, None)
}

/// [`mma`], or `mma.sp` with the warp's metadata registers `meta`: each element of D
/// sums the K/2 products of A's stored elements with the rows of B the metadata places
/// them at (a zero's place is never multiplied), one fused sum as a dense `mma`'s K.
pub fn mma_sparse(
    s: &MmaSpec,
    a: &[Lanes],
    b: &[Lanes],
    c: &[Lanes],
    meta: Option<&Lanes>,
) -> Vec<Lanes> {
    let Shape { n, .. } = s.b.shape;
    // The products each element of D sums: A's stored columns.
    let k = s.a.shape.k;
    // D's rows: m.8n8k4's four products' stacked (each product's B its own 4 rows).
    let (m, quads) = if s.a.quad.is_some() {
        (32, true)
    } else {
        (s.b.shape.m, false)
    };
    let places = meta.map(|meta| sparse_k(s, meta));
    let (am, bm, cm) = (gather(&s.a, a), gather(&s.b, b), gather(&s.c, c));
    let arith = s.arith();
    let mut dm = vec![0u64; (m * n) as usize];
    let mut prods = Vec::with_capacity(k as usize);
    for r in 0..m {
        let b_row0 = if quads { 4 * (r / 8) } else { 0 };
        for col in 0..n {
            let at = (r * n + col) as usize;
            let ai = |kk: u32| am[(r * k + kk) as usize];
            let bi = |kk: u32| {
                let row = places.as_ref().map_or(kk, |p| p[(r * k + kk) as usize]);
                bm[((b_row0 + row) * n + col) as usize]
            };
            dm[at] = dot(&arith, k, ai, bi, cm[at], &mut prods);
        }
    }
    let mut out = vec![[0u64; 32]; s.d.regs()];
    for lane in 0..32 {
        for i in 0..s.d.per_lane() {
            let (r, col) = s.d.coord(lane, i);
            set_element(&s.d, &mut out, lane, i, dm[(r * n + col) as usize]);
        }
    }
    out
}

/// One step of an f64 `mma`: a·b + c rounded once, on raw bits. A NaN result is the
/// first NaN of b, c, a (measured on the H200: B's NaN before the accumulator's, which
/// is before A's), quieted; made from no NaN (inf - inf, 0·inf), 0xfff8000000000000.
fn fma_f64(a: u64, b: u64, c: u64) -> u64 {
    let r = f64::from_bits(a).mul_add(f64::from_bits(b), f64::from_bits(c));
    if !r.is_nan() {
        return r.to_bits();
    }
    [b, c, a]
        .into_iter()
        .find(|&x| f64::from_bits(x).is_nan())
        .map_or(math::DEFAULT_NAN64, |x| x | 0x0008_0000_0000_0000)
}

/// One term of a fused sum: its exact value, and the exponent the tensor cores align it
/// by (a product's: the sum of its factors' exponents).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Term {
    value: f64,
    exp: i32,
}

/// The result of a fused sum: its type and rounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Out {
    /// f32, toward zero.
    F32,
    /// f32 toward zero to [`FP8_F32_FRACTION_BITS`] fraction bits (FP8 `wgmma`).
    F32Fp8,
    /// f16, to nearest.
    F16,
}

/// c + Σ products as the tensor cores add them (module comment): the result's raw bits,
/// f32, or f16 when `to_f16`.
fn fused_dot(c: Term, prods: &[Term], nan_in: bool, to_f16: bool) -> u64 {
    let out = if to_f16 { Out::F16 } else { Out::F32 };
    fused_dot_cut(c, prods, nan_in, ALIGN_BITS, out)
}

/// [`fused_dot`] with the terms cut at 2^(E - (align - 1)) and the result as `out` says.
fn fused_dot_cut(c: Term, prods: &[Term], nan_in: bool, align: i32, out: Out) -> u64 {
    let to_f16 = out == Out::F16;
    let nan = if to_f16 {
        0x7fff
    } else {
        math::CANONICAL_NAN32 as u64
    };
    let terms = || std::iter::once(c).chain(prods.iter().copied());
    let values = || terms().map(|t| t.value);
    if nan_in || values().any(f64::is_nan) {
        return nan;
    }
    let (pos_inf, neg_inf) = (
        values().any(|x| x == f64::INFINITY),
        values().any(|x| x == f64::NEG_INFINITY),
    );
    match (pos_inf, neg_inf) {
        (true, true) => return nan,
        (true, false) => return round(f64::INFINITY, to_f16),
        (false, true) => return round(f64::NEG_INFINITY, to_f16),
        _ => {}
    }
    // The largest exponent among the non-zero terms: the products' are their factors'
    // exponent sums, so a product of significands in [2, 4) has one bit above it.
    let top = terms().filter(|t| t.value != 0.0).map(|t| t.exp).max();
    let Some(top) = top else {
        // All zeros: -0 only when every one is -0.
        let neg = values().all(|x| x.is_sign_negative());
        return round(if neg { -0.0 } else { 0.0 }, to_f16);
    };
    let q = top - (align - 1);
    let (scale, unscale) = (pow2(-q), pow2(q));
    // Each term is below 2^(ALIGN_BITS + 1) units of 2^q: the sum of 17 fits an i64,
    // and its value (below 2^32 units) is exact in an f64.
    let sum: i64 = values().map(|x| (x * scale).trunc() as i64).sum();
    if sum == 0 {
        // Cancelled or cut to nothing: +0.
        return 0;
    }
    let mut r = round(sum as f64 * unscale, to_f16);
    if out == Out::F32Fp8 && r & 0x7f80_0000 != 0x7f80_0000 {
        r &= !((1 << (23 - FP8_F32_FRACTION_BITS)) - 1);
    }
    // A sum that rounds to zero is +0, negative or not (measured: f16 results, and f32
    // ones from bf16 products below f32's subnormals).
    if r == 0x8000 && to_f16 || r & 0x7fff_ffff == 0 && !to_f16 {
        0
    } else {
        r
    }
}

fn pow2(e: i32) -> f64 {
    f64::from_bits(((1023 + e) as u64) << 52)
}

/// The exact sum's one rounding: toward zero to f32, to nearest to f16.
fn round(x: f64, to_f16: bool) -> u64 {
    if to_f16 {
        return math::f64_to_f16(x, Rnd::N) as u64;
    }
    // At or past 2^128 (f32's range): an infinity, as measured on the H200 (IEEE's
    // round-toward-zero would give the largest finite).
    if x.abs() >= pow2(128) {
        return (x as f32).to_bits() as u64;
    }
    let r = x as f32;
    // Rounded away from zero (to nearest, possibly up to an infinity): the next f32
    // toward zero.
    let r = if (r as f64).abs() > x.abs() {
        f32::from_bits(r.to_bits() - 1)
    } else {
        r
    };
    r.to_bits() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f16(x: f32) -> u64 {
        math::f64_to_f16(x as f64, Rnd::N) as u64
    }

    fn acc(e: Elem) -> Elem {
        match e {
            Elem::F64 => Elem::F64,
            Elem::S8 | Elem::U8 | Elem::S4 | Elem::U4 | Elem::B1 => Elem::S32,
            _ => Elem::F32,
        }
    }

    #[test]
    fn every_element_of_a_fragment_is_held_as_often_by_the_lanes() {
        let shapes = [
            (Form::Mma, "m16n8k16", Elem::F16),
            (Form::Mma, "m16n8k8", Elem::BF16),
            (Form::Mma, "m16n8k8", Elem::TF32),
            (Form::Mma, "m16n8k4", Elem::TF32),
            (Form::Mma, "m8n8k4", Elem::F64),
            (Form::Mma, "m16n8k16", Elem::F64),
            (Form::Mma, "m8n8k16", Elem::S8),
            (Form::Mma, "m16n8k32", Elem::U8),
            (Form::Mma, "m16n8k64", Elem::S4),
            (Form::Mma, "m16n8k256", Elem::B1),
            (Form::Mma, "m16n8k32", Elem::E4M3),
            (Form::Mma, "m16n8k16", Elem::E5M2),
            (Form::Wmma, "m16n16k16", Elem::F16),
            (Form::Wmma, "m16n16k16", Elem::BF16),
            (Form::Wmma, "m16n16k16", Elem::S8),
            (Form::Wmma, "m16n16k8", Elem::TF32),
            (Form::Wmma, "m8n8k4", Elem::F64),
            (Form::Wmma, "m32n8k16", Elem::F16),
            (Form::Wmma, "m8n32k16", Elem::F16),
            (Form::Wmma, "m8n32k16", Elem::BF16),
            (Form::Wmma, "m32n8k16", Elem::U8),
            (Form::Wmma, "m8n32k16", Elem::S8),
            (Form::Wmma, "m8n8k32", Elem::S4),
            (Form::Wmma, "m8n8k32", Elem::U4),
            (Form::Wmma, "m8n8k128", Elem::B1),
        ];
        for (form, shape, elem) in shapes {
            let s = Shape::from_name(shape).unwrap();
            for role in [Role::A, Role::B, Role::C] {
                let elem = if role == Role::C { acc(elem) } else { elem };
                let f = Frag::new(form, s, role, elem)
                    .unwrap_or_else(|| panic!("{shape} {elem:?} {role:?}"));
                let (r, c) = f.dims();
                let mut count = vec![0; (r * c) as usize];
                for lane in 0..32 {
                    for i in 0..f.per_lane() {
                        let (y, x) = f.coord(lane, i);
                        assert!(
                            y < r && x < c,
                            "{shape} {role:?} lane {lane} i {i}: ({y},{x})"
                        );
                        count[(y * c + x) as usize] += 1;
                    }
                }
                let times = f.per_lane() * 32 / count.len();
                assert!(
                    count.iter().all(|&n| n == times),
                    "{form:?} {shape} {elem:?} {role:?}"
                );
            }
        }
        // wmma's f16 A and B: eight registers whatever the shape.
        for shape in ["m16n16k16", "m32n8k16", "m8n32k16"] {
            for role in [Role::A, Role::B] {
                let f = Frag::new(
                    Form::Wmma,
                    Shape::from_name(shape).unwrap(),
                    role,
                    Elem::F16,
                )
                .unwrap();
                assert_eq!((f.per_lane(), f.regs()), (16, 8), "{shape} {role:?}");
            }
        }
    }

    #[test]
    fn m8n8k4_f16_fragments_hold_each_element_of_the_four_products_once() {
        for quad in [Quad::Row, Quad::Col, Quad::AccRows, Quad::AccF32] {
            for role in [Role::A, Role::B, Role::C] {
                let acc = matches!(quad, Quad::AccRows | Quad::AccF32);
                if acc != (role == Role::C) {
                    continue;
                }
                let elem = if quad == Quad::AccF32 {
                    Elem::F32
                } else {
                    Elem::F16
                };
                let f = Frag::quad_pair(role, elem, quad);
                let (r, c) = f.dims();
                let mut count = vec![0; (r * c) as usize];
                for lane in 0..32 {
                    for i in 0..f.per_lane() {
                        let (y, x) = f.coord(lane, i);
                        // Product q = (lane / 4) mod 4 is stacked at its own rows.
                        let q = ((lane / 4) % 4) as u32;
                        assert_eq!(y / (r / 4), q, "{quad:?} {role:?} lane {lane} i {i}");
                        count[(y * c + x) as usize] += 1;
                    }
                }
                assert!(count.iter().all(|&n| n == 1), "{quad:?} {role:?}");
            }
        }
        // The ISA's f32 accumulator: lane 18 (high group of product 0) holds rows 4-7's
        // (lane & 1) + (i & 2) + 4 and columns (i & 4) + (lane & 2) + (i & 1).
        let f = Frag::quad_pair(Role::C, Elem::F32, Quad::AccF32);
        assert_eq!(f.coord(18, 0), (4, 2));
        assert_eq!(f.coord(18, 7), (6, 7));
        assert_eq!(f.regs(), 8);
        let a = Frag::quad_pair(Role::A, Elem::F16, Quad::Col);
        // Lane 21: product 1, high group: A's rows 4-7 of column 1, at 8 + 4.
        assert_eq!(a.coord(21, 3), (15, 1));
    }

    #[test]
    fn the_ptx_isa_examples_of_m16n8k16_layouts() {
        let s = Shape::from_name("m16n8k16").unwrap();
        let a = Frag::new(Form::Mma, s, Role::A, Elem::F16).unwrap();
        // Lane 5: groupID 1, threadID_in_group 1.
        assert_eq!(a.coord(5, 0), (1, 2));
        assert_eq!(a.coord(5, 3), (9, 3));
        assert_eq!(a.coord(5, 6), (9, 10));
        let b = Frag::new(Form::Mma, s, Role::B, Elem::F16).unwrap();
        assert_eq!(b.coord(5, 2), (10, 1));
        let c = Frag::new(Form::Mma, s, Role::C, Elem::F32).unwrap();
        assert_eq!(c.coord(5, 3), (9, 3));
    }

    /// Fragments of the matrices given row-major as raw element bits.
    fn regs(f: &Frag, m: &[u64]) -> Vec<Lanes> {
        let (_, cols) = f.dims();
        let mut out = vec![[0u64; 32]; f.regs()];
        for lane in 0..32 {
            for i in 0..f.per_lane() {
                let (r, c) = f.coord(lane, i);
                set_element(f, &mut out, lane, i, m[(r * cols + c) as usize]);
            }
        }
        out
    }

    #[test]
    fn an_f16_product_is_the_exact_dot_product_when_nothing_is_cut() {
        let s = MmaSpec::new(
            Form::Mma,
            Shape::from_name("m16n8k16").unwrap(),
            [Elem::F32, Elem::F16, Elem::F16, Elem::F32],
            false,
            false,
        )
        .unwrap();
        let a: Vec<u64> = (0..256).map(|i| f16((i % 7) as f32 - 3.0)).collect();
        let b: Vec<u64> = (0..128).map(|i| f16((i % 5) as f32 * 0.5)).collect();
        let c: Vec<u64> = (0..128).map(|i| (i as f32).to_bits() as u64).collect();
        let d = mma(&s, &regs(&s.a, &a), &regs(&s.b, &b), &regs(&s.c, &c));
        let dm = gather(&s.d, &d);
        for r in 0..16 {
            for col in 0..8 {
                let mut want = (r * 8 + col) as f64;
                for k in 0..16 {
                    want += (((r * 16 + k) % 7) as f64 - 3.0) * (((k * 8 + col) % 5) as f64 * 0.5);
                }
                assert_eq!(
                    f32::from_bits(dm[r * 8 + col] as u32) as f64,
                    want,
                    "({r},{col})"
                );
            }
        }
    }

    /// A term aligned by its own leading bit (a C, or a product of a power of two).
    fn t(x: f64) -> Term {
        let exp = if x == 0.0 || !x.is_finite() {
            0
        } else {
            ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023
        };
        Term { value: x, exp }
    }

    #[test]
    fn terms_below_the_alignment_are_cut_and_the_sum_rounds_toward_zero() {
        let f32_bits = |x: f32| x.to_bits() as u64;
        // 1 + 2^-30: the small term lies below 26 bits of the large one: cut.
        assert_eq!(
            fused_dot(t(1.0), &[t(pow2(-30))], false, false),
            f32_bits(1.0)
        );
        // 3 + 4·2^-24: kept (26 bits below 3's leading bit), exact in f32.
        let quarter_ulps = [t(pow2(-24)); 4];
        let x = fused_dot(t(3.0), &quarter_ulps, false, false);
        assert_eq!(x, f32_bits(3.0 + pow2(-22) as f32));
        // 1 + 3·2^-24 rounds toward zero in f32, and so does its negation.
        let x = fused_dot(t(1.0), &[t(3.0 * pow2(-24))], false, false);
        assert_eq!(x, f32_bits(1.0 + pow2(-23) as f32));
        let x = fused_dot(t(-1.0), &[t(-3.0 * pow2(-24))], false, false);
        assert_eq!(x, f32_bits(-1.0 - pow2(-23) as f32));
        // A product aligns by its factors' exponent sum: 1.5·1.5 by 2^0, so 2^-25 is
        // kept though it lies 26 bits below the product's leading bit.
        let p = |value| Term { value, exp: 0 };
        let x = fused_dot(t(0.0), &[p(2.25), p(-2.25), t(pow2(-25))], false, false);
        assert_eq!(x, f32_bits(pow2(-25) as f32));
        // Cancellation is exact, but what was cut stays cut.
        let x = fused_dot(t(1024.0), &[t(-1024.0), t(0.75)], false, false);
        assert_eq!(x, f32_bits(0.75));
        assert_eq!(fused_dot(t(1e10), &[t(-1e10), t(0.75)], false, false), 0);
        // Past f32's range: an infinity, not the largest finite.
        let big = t(f32::MAX as f64);
        assert_eq!(
            fused_dot(big, &[big], false, false),
            f32_bits(f32::INFINITY)
        );
        // inf - inf, NaN, -0; a sum that rounds to zero is +0.
        let x = fused_dot(t(f64::INFINITY), &[t(f64::NEG_INFINITY)], false, false);
        assert_eq!(x, 0x7fff_ffff);
        assert_eq!(
            fused_dot(t(-0.0), &[t(-0.0), t(-0.0)], false, false),
            0x8000_0000
        );
        assert_eq!(fused_dot(t(-0.0), &[t(0.0)], false, false), 0);
        assert_eq!(fused_dot(t(0.0), &[t(-pow2(-30))], false, true), 0);
        assert_eq!(fused_dot(t(0.0), &[t(-pow2(-160))], false, false), 0);
        assert_eq!(fused_dot(t(1.0), &[t(1.0)], true, true), 0x7fff);
    }

    /// One FP8 dot product by `path`: e4m3 `a`, e5m2 `b`, an f32 accumulator.
    fn fp8(path: Fp8Path, a: &[u8], b: &[u8], c: f32) -> f32 {
        let s = Arith {
            a: Elem::E4M3,
            b: Elem::E5M2,
            c: Elem::F32,
            d: Elem::F32,
            satfinite: false,
            xor: false,
            block: a.len(),
            fp8: path,
            quad_pair: false,
        };
        let (ai, bi) = (|k: u32| a[k as usize] as u64, |k: u32| b[k as usize] as u64);
        let r = dot(
            &s,
            a.len() as u32,
            ai,
            bi,
            c.to_bits() as u64,
            &mut Vec::new(),
        );
        f32::from_bits(r as u32)
    }

    #[test]
    fn fp8_wgmma_keeps_13_bits_below_the_largest_term() {
        use Fp8Path::TensorCore as T;
        // e4m3 1.0 (0x38), 2^-6 (0x08); e5m2 1.0 (0x3c), 2^-8 (0x1c), 2^-7 (0x20).
        assert_eq!(fp8(T, &[0x38, 0x08], &[0x3c, 0x1c], 0.0), 1.0);
        assert_eq!(
            fp8(T, &[0x38, 0x08], &[0x3c, 0x20], 0.0),
            1.0 + pow2(-13) as f32
        );
        // C is a term like the products: 2^-13 kept, 2^-14 cut.
        assert_eq!(fp8(T, &[0x38], &[0x3c], pow2(-14) as f32), 1.0);
        // 1.75·1.75 = 3.0625 has its leading bit above the alignment exponent (0): the
        // f32 result keeps 13 fraction bits, so C's 2^-13 goes.
        assert_eq!(fp8(T, &[0x3e], &[0x3c + 3], pow2(-13) as f32), 3.0625);
        // mma.sync adds C afterwards, in full.
        let via = fp8(Fp8Path::ViaF16, &[0x3e], &[0x3c + 3], pow2(-13) as f32);
        assert_eq!(via, 3.0625 + pow2(-13) as f32);
    }

    #[test]
    fn fp8_mma_sync_is_two_f16_mmas_and_an_add() {
        use Fp8Path::ViaF16 as V;
        // 16·16 (e4m3 0x58, e5m2 0x4c) + 2^-9·2^-8 (0x01, 0x1c) in the first f16 mma
        // (k mod 4 < 2): 256 + 2^-17 needs 26 bits and rounds toward zero to 256; the
        // second (k = 2) takes -256 away: +0, not the 2^-17 of one sum.
        assert_eq!(
            fp8(V, &[0x58, 0x01, 0xd8], &[0x4c, 0x1c, 0x4c], 0.0).to_bits(),
            0
        );
        // With -256 at k = 1, the first mma cancels and the second keeps 2^-17.
        let x = fp8(V, &[0x58, 0xd8, 0x01], &[0x4c, 0x4c, 0x1c], 0.0);
        assert_eq!(x, pow2(-17) as f32);
        // C joins by an f32 add, to nearest: 1 + 3·2^-25 (e4m3 3·2^-9, e5m2 2^-16) is 1
        // and 3/4 of a unit in the last place, so 1 + 2^-23.
        assert_eq!(fp8(V, &[0x03], &[0x01], 1.0), 1.0 + pow2(-23) as f32);
        // A NaN (e4m3 0x7f) gives the canonical NaN.
        assert_eq!(
            fp8(V, &[0x7f], &[0x3c], 1.0).to_bits(),
            math::CANONICAL_NAN32
        );
    }

    /// One element of `mma.m8n8k4`'s f16 D: products a[k]·b[k] of f16 values, C in `c`'s
    /// type, D in `d`'s; raw bits out.
    fn quad(a: [f32; 4], b: [f32; 4], c: u64, c_elem: Elem, d: Elem) -> u64 {
        let s = MmaSpec::quad_pair([d, Elem::F16, Elem::F16, c_elem], false, true)
            .unwrap()
            .arith();
        assert!(s.quad_pair);
        let (ai, bi) = (|k: u32| f16(a[k as usize]), |k: u32| f16(b[k as usize]));
        dot(&s, 4, ai, bi, c, &mut Vec::new())
    }

    #[test]
    fn m8n8k4_rounds_each_f32_step_as_ptxas_lowers_it() {
        let tiny = pow2(-12) as f32;
        let f32_bits = |x: f32| x.to_bits() as u64;
        // 1 + 2^-24 + 2^-24 - 1: each fma rounds 1 + 2^-24 (a tie) back to 1, so C's -1
        // leaves +0 (one fused sum, as the tensor cores do, would keep 2^-23).
        let (a, b) = ([1.0, tiny, tiny, 0.0], [1.0, tiny, tiny, 0.0]);
        assert_eq!(quad(a, b, f32_bits(-1.0), Elem::F32, Elem::F32), 0);
        // From an f16 C, the same.
        assert_eq!(quad(a, b, f16(-1.0), Elem::F16, Elem::F32), 0);
        // An f16 D sums the pairs apart: (-1 + (1 + 2^-24)) + (2^-24 + 0) = 2^-24, the
        // smallest subnormal half.
        assert_eq!(quad(a, b, f16(-1.0), Elem::F16, Elem::F16), 1);
        // Rounded to nearest, not toward zero: 1 + 3·2^-24 is 1 + 2^-22 in f32.
        let (a, b) = ([1.0, 3.0 * tiny, 0.0, 0.0], [1.0, tiny, 0.0, 0.0]);
        assert_eq!(
            quad(a, b, f32_bits(0.0), Elem::F32, Elem::F32),
            f32_bits(1.0 + pow2(-22) as f32)
        );
        // Zeros: the f32 chain starts from +0, so -0 products and a -0 C give +0; the
        // f16 path multiplies its first products plainly and keeps -0.
        let (a, b) = ([-0.0, 1.0, -0.0, 1.0], [1.0, -0.0, 1.0, -0.0]);
        assert_eq!(quad(a, b, f32_bits(-0.0), Elem::F32, Elem::F32), 0);
        assert_eq!(quad(a, b, f16(-0.0), Elem::F16, Elem::F16), 0x8000);
        // A subnormal C is kept (no flush to zero); an f16 overflow is an infinity;
        // NaNs are canonical.
        let zeros = [0.0; 4];
        assert_eq!(quad(zeros, zeros, 1, Elem::F32, Elem::F32), 1);
        let big = [60000.0, 60000.0, 0.0, 0.0];
        assert_eq!(
            quad(big, [1.0, 1.0, 0.0, 0.0], 0, Elem::F16, Elem::F16),
            0x7c00
        );
        let inf = [f32::INFINITY, f32::NEG_INFINITY, 0.0, 0.0];
        let ones = [1.0, 1.0, 0.0, 0.0];
        assert_eq!(quad(inf, ones, 0, Elem::F16, Elem::F16), 0x7fff);
        assert_eq!(
            quad(inf, ones, 0, Elem::F32, Elem::F32),
            math::CANONICAL_NAN32 as u64
        );
    }

    #[test]
    fn m8n8k4_places_d_by_its_own_type() {
        // D f32 from C f16: C's registers in the f16 layout, D's in the f32 one.
        let s =
            MmaSpec::quad_pair([Elem::F32, Elem::F16, Elem::F16, Elem::F16], true, true).unwrap();
        assert_eq!(
            (s.c.quad, s.d.quad),
            (Some(Quad::AccRows), Some(Quad::AccF32))
        );
        assert_eq!((s.c.regs(), s.d.regs()), (4, 8));
    }

    #[test]
    fn integer_products_wrap_or_saturate() {
        let shape = Shape::from_name("m8n8k16").unwrap();
        for sat in [false, true] {
            let s = MmaSpec::new(
                Form::Mma,
                shape,
                [Elem::S32, Elem::S8, Elem::U8, Elem::S32],
                sat,
                false,
            )
            .unwrap();
            let a = vec![0x80u64; 128]; // -128
            let b = vec![0xffu64; 128]; // 255
            let c = vec![(i32::MIN as u32) as u64; 64];
            let d = gather(
                &s.d,
                &mma(&s, &regs(&s.a, &a), &regs(&s.b, &b), &regs(&s.c, &c)),
            );
            let want = i32::MIN as i64 - 128 * 255 * 16;
            let want = if sat { i32::MIN as u32 } else { want as u32 };
            assert!(d.iter().all(|&x| x == want as u64), "sat {sat}");
        }
    }
}
