//! The video instructions (PTX ISA 9.0, "Video Instructions"): the scalar `vadd`,
//! `vsub`, `vabsdiff`, `vmin`, `vmax`, `vshl`, `vshr`, `vmad`, `vset` and the SIMD
//! `vop2`/`vop4` forms, as the H200 computes them.
//!
//! Scalar forms extract a byte, half or word of each source (`.b0`-`.b3`, `.h0`/`.h1`),
//! sign- or zero-extend it by its type, compute the primary operation (i128 here),
//! optionally saturate, then either apply the secondary operation with `c` or merge the
//! byte or half into `c`. SIMD forms pick two halves (four bytes) out of the 64-bit pair
//! `{b, a}`, operate on each, clamp each to 16 (8) bits, then merge with `c` under the
//! destination mask or add the masked results to `c`.
//!
//! The SIMD forms follow the ISA's pseudocode, and so does the H200 (the corpus's
//! `video_simd2`/`video_simd4`). The scalar forms and `vmad` do not: the hardware runs
//! the integer code ptxas expands them into, which differs from the pseudocode in
//! saturation, the width the secondary operation sees, the `.h1` merge and `vmad`'s
//! multiply; `Scalar::eval` and `Mad::eval` list how, fitted to every word the H200
//! recorded for `video_scalar` and `video_mad` and read off ptxas 13.0's SASS for the
//! forms the corpus does not hold.

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
    /// The destination's sign; `vset` has no destination type, and the H200 compares
    /// its result with `c` in a's sign, which the decoder puts here.
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
    /// What the H200 computes. Since Maxwell the video instructions have no hardware of
    /// their own: ptxas expands each into integer code, and where that code departs
    /// from the ISA's pseudocode (the corpus's `video_scalar` recorded it; the SASS of
    /// ptxas 13.0 shows why) the hardware is followed:
    /// - `vadd`/`vsub` pass on only the low 32 bits of their 33-bit result, sign-
    ///   extended, to a secondary `.min`/`.max` (the ISA compares the whole result);
    ///   `vabsdiff`, `vmin`, `vmax` and shifts pass on their whole (64-bit) result.
    /// - `.sat` to an unsigned word clamps below at 0 but not above: a sum past
    ///   U32_MAX keeps its low 32 bits. To a signed word it clamps both ways.
    /// - `.sat` with a byte or half merge clamps to [0, the subword's maximum]: a
    ///   negative result becomes the maximum (0x7f, 0xff, 0x7fff or 0xffff), not the
    ///   minimum.
    /// - Shifts: `vshl` shifts in 64 bits; `.sat` sees the result's low 34 bits, sign-
    ///   extended, and clamps to the 32-bit word (unsigned both ways) even when the
    ///   destination merges a subword, which then takes the clamped word's low part.
    /// - The `.h1` merge takes the result's bits 16-31 as they are (not its low half
    ///   moved up); `.b0`-`.b3` and `.h0` move the low byte or half into place.
    /// - `vset`'s 0 or 1 meets `c` in a's sign (the decoder puts it in `d_signed`).
    pub fn eval(&self, a: u32, b: u32, c: u32) -> u32 {
        let ta = self.a_part.extract(a, self.a_signed);
        let tb = self.b_part.extract(b, self.b_signed);
        let shift = matches!(self.op, VOp::Shl | VOp::Shr);
        let add_sub = matches!(self.op, VOp::Add | VOp::Sub);
        let r = match self.op {
            VOp::Add => ta + tb,
            VOp::Sub => ta - tb,
            VOp::Absdiff => (ta - tb).abs(),
            VOp::Min => ta.min(tb),
            VOp::Max => ta.max(tb),
            // `tb` is unsigned (`.u32`): at most 32 after `.clamp`, 31 after `.wrap`;
            // `ta` fits 33 bits, so the 64-bit shift is exact up to its top bits.
            VOp::Shl | VOp::Shr => {
                let s = if self.clamp { tb.min(32) } else { tb & 0x1f } as u32;
                if self.op == VOp::Shl {
                    (ta << s) as i64 as i128
                } else {
                    ta >> s
                }
            }
            VOp::Set(cmp) => cmp.holds(ta, tb) as i128,
            // SIMD only (the decoder refuses a scalar `vavrg`); the same rounding.
            VOp::Avrg => avrg(ta, tb),
        };
        let v = if !self.sat {
            r
        } else if shift {
            clamp(extend(r as u64, 34, true), 32, self.d_signed)
        } else if let Second::Merge(p) = self.second {
            let max = if self.d_signed {
                (1i128 << (p.bits() - 1)) - 1
            } else {
                (1i128 << p.bits()) - 1
            };
            if (0..=max).contains(&r) {
                r
            } else {
                max
            }
        } else if self.d_signed {
            clamp(r, 32, true)
        } else if r < 0 {
            0
        } else if add_sub {
            r & 0xffff_ffff
        } else {
            r
        };
        let v = if add_sub { v as u32 as i32 as i128 } else { v };
        match self.second {
            Second::None => v as u32,
            Second::Add => (v as u32).wrapping_add(c),
            Second::Min | Second::Max => {
                // A 64-bit comparison, signed or not by the destination; `c` extended
                // by its sign.
                let tc = extend(c as u64, 32, self.d_signed);
                let x = if self.d_signed { v } else { v as u64 as i128 };
                let take_v = if self.second == Second::Min {
                    x < tc
                } else {
                    x > tc
                };
                if take_v {
                    v as u32
                } else {
                    c
                }
            }
            Second::Merge(Part::Half(1)) => (c & 0xffff) | (v as u32 & 0xffff_0000),
            Second::Merge(p) => {
                let (mask, shift) = match p {
                    Part::Byte(k) => (0xffu32, 8 * k as u32),
                    Part::Half(k) => (0xffff, 16 * k as u32),
                    Part::Word => (u32::MAX, 0),
                };
                let part = ((v as u32) & mask) << shift;
                part | (c & !(mask << shift))
            }
        }
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
    /// neither with `.po` (ptxas refuses both as well).
    pub neg_product: bool,
    pub neg_c: bool,
    pub po: bool,
    pub sat: bool,
    /// `.shr7`, `.shr15`, or 0.
    pub shift: u32,
}

impl Mad {
    /// What the H200 computes (the corpus's `video_mad`; ptxas 13.0's SASS shows
    /// how), where the ISA's pseudocode differs:
    /// - the operands, extracted and extended by their types, multiply as signed
    ///   32-bit integers: a `.u32` word at or above 2^31 counts as negative;
    /// - `c` is sign-extended whatever the types;
    /// - the sum is 64 bits; the scale shifts it arithmetically when the result is
    ///   signed (the ISA's `signedFinal`), logically when not;
    /// - `.sat` clamps that 64-bit value to the signed or unsigned word.
    pub fn eval(&self, a: u32, b: u32, c: u32) -> u32 {
        let ta = self.a_part.extract(a, self.a_signed) as u32 as i32 as i64;
        let tb = self.b_part.extract(b, self.b_signed) as u32 as i32 as i64;
        let signed = self.a_signed || self.b_signed || self.neg_product || self.neg_c;
        // At most 2^62 in magnitude: no overflow below.
        let p = ta * tb;
        let tc = c as i32 as i64;
        let r = if self.po {
            p + tc + 1
        } else if self.neg_product {
            tc - p
        } else if self.neg_c {
            // `~c + 1`, the ISA's negation, in 64 bits.
            p - tc
        } else {
            p + tc
        };
        let r = if signed {
            r >> self.shift
        } else {
            ((r as u64) >> self.shift) as i64
        };
        if !self.sat {
            r as u32
        } else if signed {
            r.clamp(i32::MIN as i64, i32::MAX as i64) as u32
        } else {
            r.clamp(0, u32::MAX as i64) as u32
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
