//! The video instructions (PTX ISA 9.0, "Video Instructions"): the scalar `vadd`,
//! `vsub`, `vabsdiff`, `vmin`, `vmax`, `vshl`, `vshr`, `vmad`, `vset` and the SIMD
//! `vop2`/`vop4` forms, as the ISA's pseudocode defines them.
//!
//! Scalar forms extract a byte, half or word of each source (`.b0`-`.b3`, `.h0`/`.h1`),
//! sign- or zero-extend it by its type, compute the primary operation without
//! overflow (i128 here: the ISA's 33-bit inputs and 34-bit result lose nothing in it),
//! optionally clamp to the destination's range (the subword's, when the destination
//! merges), then either apply the secondary operation with `c` or merge the low byte or
//! half into `c`. SIMD forms pick two halves (four bytes) out of the 64-bit pair
//! `{b, a}`, operate on each, clamp each to 16 (8) bits, then merge with `c` under the
//! destination mask or add the masked results to `c`.

/// The primary operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VOp {
    Add,
    Sub,
    Absdiff,
    Min,
    Max,
    /// `vavrg2`/`vavrg4`: `(a + b + 1) >> 1` for a non-negative sum, `(a + b) >> 1`
    /// (arithmetic) for a negative one.
    Avrg,
    Shl,
    Shr,
    Set(VCmp),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VCmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl VCmp {
    pub fn from_name(s: &str) -> Option<VCmp> {
        Some(match s {
            "eq" => VCmp::Eq,
            "ne" => VCmp::Ne,
            "lt" => VCmp::Lt,
            "le" => VCmp::Le,
            "gt" => VCmp::Gt,
            "ge" => VCmp::Ge,
            _ => return None,
        })
    }

    fn holds(self, a: i128, b: i128) -> bool {
        match self {
            VCmp::Eq => a == b,
            VCmp::Ne => a != b,
            VCmp::Lt => a < b,
            VCmp::Le => a <= b,
            VCmp::Gt => a > b,
            VCmp::Ge => a >= b,
        }
    }
}

/// A scalar operand's (or destination's) part: the whole word, byte `k` or half `k`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Word,
    Byte(u8),
    Half(u8),
}

impl Part {
    /// `b0`..`b3`, `h0`, `h1`.
    pub fn from_name(s: &str) -> Option<Part> {
        Some(match s {
            "b0" => Part::Byte(0),
            "b1" => Part::Byte(1),
            "b2" => Part::Byte(2),
            "b3" => Part::Byte(3),
            "h0" => Part::Half(0),
            "h1" => Part::Half(1),
            _ => return None,
        })
    }

    /// `partSelectSignExtend`.
    fn extract(self, x: u32, signed: bool) -> i128 {
        let (v, bits) = match self {
            Part::Word => (x, 32),
            Part::Byte(k) => ((x >> (8 * k)) & 0xff, 8),
            Part::Half(k) => ((x >> (16 * k)) & 0xffff, 16),
        };
        extend(v as u64, bits, signed)
    }

    fn bits(self) -> u32 {
        match self {
            Part::Word => 32,
            Part::Byte(_) => 8,
            Part::Half(_) => 16,
        }
    }
}

fn extend(v: u64, bits: u32, signed: bool) -> i128 {
    let v = v & ((1u64 << bits) - 1);
    if signed && v >> (bits - 1) & 1 == 1 {
        v as i128 - (1i128 << bits)
    } else {
        v as i128
    }
}

/// `vavrg`: `(a + b + 1) >> 1` for a non-negative sum, `(a + b) >> 1` for a negative one.
fn avrg(a: i128, b: i128) -> i128 {
    let s = a + b;
    if s >= 0 {
        (s + 1) >> 1
    } else {
        s >> 1
    }
}

/// CLAMP to the range of a `bits`-wide signed or unsigned integer.
fn clamp(x: i128, bits: u32, signed: bool) -> i128 {
    let (lo, hi) = if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    x.clamp(lo, hi)
}

/// The secondary operation of a scalar form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Second {
    None,
    Add,
    Min,
    Max,
    /// `d.dsel`: the result's low byte or half replaces that part of `c`.
    Merge(Part),
}

/// `vadd`, `vsub`, `vabsdiff`, `vmin`, `vmax`, `vshl`, `vshr`, `vset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scalar {
    pub op: VOp,
    /// `vset` has no destination type: its result and `c` are unsigned.
    pub d_signed: bool,
    pub a_signed: bool,
    pub b_signed: bool,
    pub a_part: Part,
    pub b_part: Part,
    pub sat: bool,
    /// Shifts: `.clamp` (true) or `.wrap`.
    pub clamp: bool,
    pub second: Second,
}

impl Scalar {
    pub fn eval(&self, a: u32, b: u32, c: u32) -> u32 {
        let ta = self.a_part.extract(a, self.a_signed);
        let tb = self.b_part.extract(b, self.b_signed);
        let tmp = match self.op {
            VOp::Add => ta + tb,
            VOp::Sub => ta - tb,
            VOp::Absdiff => (ta - tb).abs(),
            VOp::Min => ta.min(tb),
            VOp::Max => ta.max(tb),
            // `tb` is unsigned (`.u32`): at most 32 after `.clamp`, 31 after `.wrap`.
            VOp::Shl | VOp::Shr => {
                let s = if self.clamp { tb.min(32) } else { tb & 0x1f } as u32;
                if self.op == VOp::Shl {
                    ta << s
                } else {
                    ta >> s
                }
            }
            VOp::Set(cmp) => cmp.holds(ta, tb) as i128,
            // SIMD only (the decoder refuses a scalar `vavrg`); the same rounding.
            VOp::Avrg => avrg(ta, tb),
        };
        // `optSaturate`: the destination's range, its subword's when it merges.
        let tmp = if self.sat {
            let bits = match self.second {
                Second::Merge(p) => p.bits(),
                _ => 32,
            };
            clamp(tmp, bits, self.d_signed)
        } else {
            tmp
        };
        // `c` has the destination's sign.
        let tc = extend(c as u64, 32, self.d_signed);
        let d = match self.second {
            Second::None => tmp,
            Second::Add => tmp + tc,
            Second::Min => tmp.min(tc),
            Second::Max => tmp.max(tc),
            Second::Merge(p) => {
                let (mask, shift) = match p {
                    Part::Byte(k) => (0xffu32, 8 * k as u32),
                    Part::Half(k) => (0xffff, 16 * k as u32),
                    Part::Word => (u32::MAX, 0),
                };
                let part = ((tmp as u32) & mask) << shift;
                return part | (c & !(mask << shift));
            }
        };
        d as u32
    }
}

/// `vmad.dtype.atype.btype{.po}{.sat}{.scale} d, {-}a{.asel}, {-}b{.bsel}, {-}c`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mad {
    pub a_signed: bool,
    pub b_signed: bool,
    pub a_part: Part,
    pub b_part: Part,
    /// The product negated (`-a` xor `-b`), `c` negated: at most one of them, and
    /// neither with `.po`.
    pub neg_product: bool,
    pub neg_c: bool,
    pub po: bool,
    pub sat: bool,
    /// `.shr7`, `.shr15`, or 0.
    pub shift: u32,
}

impl Mad {
    pub fn eval(&self, a: u32, b: u32, c: u32) -> u32 {
        let ta = self.a_part.extract(a, self.a_signed);
        let tb = self.b_part.extract(b, self.b_signed);
        let signed = self.a_signed || self.b_signed || self.neg_product || self.neg_c;
        let mut tmp = ta * tb;
        let mut c = c;
        let mut lsb = 0;
        if self.po {
            lsb = 1;
        } else if self.neg_product {
            tmp = !tmp;
            lsb = 1;
        } else if self.neg_c {
            c = !c;
            lsb = 1;
        }
        let c = extend(c as u64, 32, signed);
        let tmp = tmp + c + lsb;
        // The shift is arithmetic: an unsigned result is never negative here.
        let result = tmp >> self.shift;
        let result = if self.shift != 0 {
            // `& 0xffffffffffffffff`: the low 64 bits, signed when the result is.
            if signed {
                result as i64 as i128
            } else {
                result as u64 as i128
            }
        } else {
            result
        };
        if self.sat {
            clamp(result, 32, signed) as u32
        } else {
            result as u32
        }
    }
}

/// `vop2` (`lanes` 2) and `vop4` (4), `vset2`/`vset4` included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Simd {
    pub op: VOp,
    pub lanes: u32,
    pub d_signed: bool,
    pub a_signed: bool,
    pub b_signed: bool,
    /// Element `i` of `a` is part `a_sel[i]` of the pair `{b, a}` (0..lanes*2).
    pub a_sel: [u8; 4],
    pub b_sel: [u8; 4],
    /// Destination mask: bit `i` set writes element `i`.
    pub mask: u8,
    pub sat: bool,
    /// `.add`: `c` plus the masked elements; otherwise the masked elements merge
    /// into `c`'s.
    pub add: bool,
}

impl Simd {
    pub fn eval(&self, a: u32, b: u32, c: u32) -> u32 {
        let bits = 32 / self.lanes;
        let pair = (b as u64) << 32 | a as u64;
        let part = |sel: u8, signed: bool| extend(pair >> (bits * sel as u32), bits, signed);
        let mut d = if self.add { c } else { 0 };
        for i in 0..self.lanes as usize {
            let va = part(self.a_sel[i], self.a_signed);
            let vb = part(self.b_sel[i], self.b_signed);
            let t = match self.op {
                VOp::Add => va + vb,
                VOp::Sub => va - vb,
                VOp::Avrg => avrg(va, vb),
                VOp::Absdiff => (va - vb).abs(),
                VOp::Min => va.min(vb),
                VOp::Max => va.max(vb),
                VOp::Set(cmp) => cmp.holds(va, vb) as i128,
                // Scalar only (the decoder refuses SIMD shifts): by the low 5 bits.
                VOp::Shl => va << (vb & 31),
                VOp::Shr => va >> (vb & 31),
            };
            let t = if self.sat {
                clamp(t, bits, self.d_signed)
            } else {
                t
            };
            let on = self.mask >> i & 1 == 1;
            let field = ((1u64 << bits) - 1) as u32;
            let shift = bits * i as u32;
            if self.add {
                // The whole element, sign included, accumulates into the word.
                if on {
                    d = d.wrapping_add(t as u32);
                }
            } else {
                let v = if on { t as u32 } else { c >> shift };
                d |= (v & field) << shift;
            }
        }
        d
    }
}

/// One decoded video instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Video {
    Scalar(Scalar),
    Mad(Mad),
    Simd(Simd),
}

impl Video {
    pub fn eval(&self, a: u32, b: u32, c: u32) -> u32 {
        match self {
            Video::Scalar(s) => s.eval(a, b, c),
            Video::Mad(m) => m.eval(a, b, c),
            Video::Simd(s) => s.eval(a, b, c),
        }
    }
}
