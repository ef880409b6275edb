//! The video instructions' forms (`crate::video` has their arithmetic): types, `.sat`,
//! secondary operations, and the selectors written after operand names (`%r1.b0`,
//! `%r2.h10`, `%r3.b7654`), which the parser keeps in the name.

use super::{semantic, split_selector, unsupported, Dst, FuncDecoder, Mods, Op, Src};
use crate::math::Ty;
use crate::parse::{InstAst, Opnd};
use crate::video::{Mad, Part, Scalar, Second, Simd, VCmp, VOp, Video};
use crate::LoadError;

/// An operand of a video instruction: its value, selector and `-`.
struct VOperand<'a> {
    src: Src,
    sel: Option<&'a str>,
    neg: bool,
}

impl FuncDecoder<'_> {
    fn video_operand<'o>(&self, i: &InstAst, o: &'o Opnd) -> Result<VOperand<'o>, LoadError> {
        let (name, neg) = match o {
            Opnd::Name(n) => (n, false),
            Opnd::Neg(n) => (n, true),
            other => {
                return Ok(VOperand {
                    src: self.src(i, other)?,
                    sel: None,
                    neg: false,
                })
            }
        };
        let (base, sel) = split_selector(name);
        Ok(VOperand {
            src: self.src(i, &Opnd::Name(base.to_string()))?,
            sel,
            neg,
        })
    }

    fn video_dst<'o>(&self, i: &InstAst, o: &'o Opnd) -> Result<(Dst, Option<&'o str>), LoadError> {
        match o {
            Opnd::Name(n) => {
                let (base, sel) = split_selector(n);
                Ok((self.reg(i, &Opnd::Name(base.to_string()))?, sel))
            }
            other => Ok((self.reg(i, other)?, None)),
        }
    }

    pub(super) fn video(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let unsup = |m: &Mods, why: &str| {
            unsupported(i, format!("unsupported instruction `{}`: {why}", m.full))
        };
        let opc = i.opcode.as_str();
        let (name, lanes) = match opc.strip_suffix('2').or(opc.strip_suffix('4')) {
            Some(n) => (n, if opc.ends_with('2') { 2 } else { 4 }),
            None => (opc, 1),
        };
        let op = match name {
            "vadd" => VOp::Add,
            "vsub" => VOp::Sub,
            "vabsdiff" => VOp::Absdiff,
            "vmin" => VOp::Min,
            "vmax" => VOp::Max,
            "vavrg" => VOp::Avrg,
            "vshl" => VOp::Shl,
            "vshr" => VOp::Shr,
            "vmad" => VOp::Add, // replaced below
            "vset" => {
                let c = m
                    .take_any(&["eq", "ne", "lt", "le", "gt", "ge"])
                    .ok_or_else(|| unsup(m, "`vset` needs a comparison"))?;
                VOp::Set(VCmp::from_name(&c).expect("listed"))
            }
            _ => return Err(unsup(m, "not a video instruction")),
        };
        let is_set = matches!(op, VOp::Set(_));
        let sat = m.take("sat");
        let types = m.types();
        let signed = |t: &Ty| match t {
            Ty::S32 => Ok(true),
            Ty::U32 => Ok(false),
            _ => Err(unsup(m, "video operand types are .u32 or .s32")),
        };
        let (d_signed, a_signed, b_signed) = match (is_set, types.as_slice()) {
            (true, [a, b]) => (false, signed(a)?, signed(b)?),
            (false, [d, a, b]) => (signed(d)?, signed(a)?, signed(b)?),
            _ => return Err(semantic(i, format!("`{}`: wrong number of types", m.full))),
        };
        if is_set && sat {
            return Err(unsup(m, "`vset` has no `.sat`"));
        }

        if name == "vmad" {
            return self.vmad(i, m, sat, a_signed, b_signed);
        }
        if lanes > 1 {
            return self.video_simd(i, m, op, lanes, sat, d_signed, a_signed, b_signed);
        }
        if op == VOp::Avrg {
            return Err(unsup(m, "`vavrg` has SIMD forms only"));
        }

        // Scalar forms.
        let shift = matches!(op, VOp::Shl | VOp::Shr);
        let clamp = if shift {
            if b_signed {
                return Err(unsup(m, "a shift amount is .u32"));
            }
            match m.take_any(&["clamp", "wrap"]).as_deref() {
                Some("clamp") => true,
                Some(_) => false,
                None => return Err(unsup(m, "a shift needs `.clamp` or `.wrap`")),
            }
        } else {
            false
        };
        let op2 = m.take_any(&["add", "min", "max"]);
        let n = i.ops.len();
        if !(n == 3 || n == 4) {
            return Err(semantic(i, format!("`{}` takes 3 or 4 operands", m.full)));
        }
        let (d, dsel) = self.video_dst(i, &i.ops[0])?;
        let a = self.video_operand(i, &i.ops[1])?;
        let b = self.video_operand(i, &i.ops[2])?;
        let part = |o: Option<&str>| match o {
            None => Ok(Part::Word),
            Some(s) => Part::from_name(s).ok_or_else(|| {
                semantic(
                    i,
                    format!("`.{s}`: a scalar video selector is .b0-.b3, .h0 or .h1"),
                )
            }),
        };
        if a.neg || b.neg {
            return Err(semantic(i, "only `vmad` negates its operands"));
        }
        let second =
            match (dsel, op2.as_deref()) {
                (Some(_), Some(_)) => return Err(semantic(
                    i,
                    "a destination selector (merge) and a secondary operation exclude each other",
                )),
                (Some(s), None) => Second::Merge(part(Some(s))?),
                (None, Some("add")) => Second::Add,
                (None, Some("min")) => Second::Min,
                (None, Some("max")) => Second::Max,
                _ => Second::None,
            };
        let want = if second == Second::None { 3 } else { 4 };
        if n != want {
            return Err(semantic(
                i,
                format!(
                    "`{}` takes {want} operands here (c only with a secondary operation or merge)",
                    m.full
                ),
            ));
        }
        let c = if n == 4 {
            let c = self.video_operand(i, &i.ops[3])?;
            if c.sel.is_some() || c.neg {
                return Err(semantic(i, "operand c takes no selector"));
            }
            c.src
        } else {
            Src::Imm(0)
        };
        let v = Scalar {
            op,
            // ptxas (what the H200 runs) compares `vset`'s 0/1 with `c` in a's sign.
            d_signed: if is_set { a_signed } else { d_signed },
            a_signed,
            b_signed,
            a_part: part(a.sel)?,
            b_part: part(b.sel)?,
            sat,
            clamp,
            second,
        };
        Ok(Op::Video {
            v: Video::Scalar(v),
            d,
            s: [a.src, b.src, c],
        })
    }

    /// `vmad`: its result's sign is the ISA's `signedFinal` (from the operand types and
    /// negations), so the destination type is read but decides nothing (ptxas's code
    /// for the H200 ignores it too: `vmad.u32.s32.s32.sat` saturates as signed).
    fn vmad(
        &mut self,
        i: &InstAst,
        m: &mut Mods,
        sat: bool,
        a_signed: bool,
        b_signed: bool,
    ) -> Result<Op, LoadError> {
        let po = m.take("po");
        let shift = match m.take_any(&["shr7", "shr15"]).as_deref() {
            Some("shr7") => 7,
            Some(_) => 15,
            None => 0,
        };
        self.nops(i, 4)?;
        let (d, dsel) = self.video_dst(i, &i.ops[0])?;
        if dsel.is_some() {
            return Err(semantic(i, "`vmad` has no destination selector"));
        }
        let a = self.video_operand(i, &i.ops[1])?;
        let b = self.video_operand(i, &i.ops[2])?;
        let c = self.video_operand(i, &i.ops[3])?;
        let part = |o: Option<&str>| match o {
            None => Ok(Part::Word),
            Some(s) => Part::from_name(s).ok_or_else(|| {
                semantic(
                    i,
                    format!("`.{s}`: a scalar video selector is .b0-.b3, .h0 or .h1"),
                )
            }),
        };
        if c.sel.is_some() {
            return Err(semantic(i, "operand c takes no selector"));
        }
        let neg_product = a.neg ^ b.neg;
        if po && (a.neg || b.neg || c.neg) {
            return Err(semantic(i, "`vmad.po` negates no operand"));
        }
        // The ISA negates either the product or c ("PTX allows negation of either (a*b)
        // or c"), and its pseudocode does not define both.
        if neg_product && c.neg {
            return Err(unsupported(
                i,
                "`vmad` negating both the product and c is not defined by the PTX ISA",
            ));
        }
        let v = Mad {
            a_signed,
            b_signed,
            a_part: part(a.sel)?,
            b_part: part(b.sel)?,
            neg_product,
            neg_c: c.neg,
            po,
            sat,
            shift,
        };
        Ok(Op::Video {
            v: Video::Mad(v),
            d,
            s: [a.src, b.src, c.src],
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn video_simd(
        &mut self,
        i: &InstAst,
        m: &mut Mods,
        op: VOp,
        lanes: u32,
        sat: bool,
        d_signed: bool,
        a_signed: bool,
        b_signed: bool,
    ) -> Result<Op, LoadError> {
        if matches!(op, VOp::Shl | VOp::Shr) {
            return Err(unsupported(
                i,
                format!("`{}`: shifts have no SIMD forms", m.full),
            ));
        }
        let add = m.take("add");
        if add && sat {
            return Err(semantic(
                i,
                "saturation cannot be used with the secondary accumulate operation",
            ));
        }
        self.nops(i, 4)?;
        let (d, dmask) = self.video_dst(i, &i.ops[0])?;
        let a = self.video_operand(i, &i.ops[1])?;
        let b = self.video_operand(i, &i.ops[2])?;
        let c = self.video_operand(i, &i.ops[3])?;
        if a.neg || b.neg || c.neg {
            return Err(semantic(i, "only `vmad` negates its operands"));
        }
        if c.sel.is_some() {
            return Err(semantic(i, "operand c takes no selector"));
        }
        let letter = if lanes == 2 { 'h' } else { 'b' };
        // `.hxy` / `.bxyzw`: the first digit picks the highest element.
        let sel = |s: Option<&str>, default: &str| -> Result<[u8; 4], LoadError> {
            let s = s.unwrap_or(default);
            let digits = s.strip_prefix(letter).unwrap_or("");
            if digits.len() != lanes as usize {
                return Err(semantic(
                    i,
                    format!("`.{s}`: a {lanes}-way selector is .{letter} and {lanes} digits"),
                ));
            }
            let mut out = [0u8; 4];
            for (k, ch) in digits.bytes().rev().enumerate() {
                out[k] = ch - b'0';
            }
            Ok(out)
        };
        let (da, db) = if lanes == 2 {
            ("h10", "h32")
        } else {
            ("b3210", "b7654")
        };
        let a_sel = sel(a.sel, da)?;
        let b_sel = sel(b.sel, db)?;
        // The mask names the elements written, highest first, each once.
        let mask = match dmask {
            None => (1u8 << lanes) - 1,
            Some(s) => {
                let digits = s.strip_prefix(letter).unwrap_or("").as_bytes();
                let ok = !digits.is_empty()
                    && digits.windows(2).all(|w| w[0] > w[1])
                    && digits.iter().all(|c| u32::from(c - b'0') < lanes);
                if !ok {
                    return Err(semantic(
                        i,
                        format!("`.{s}`: not a {lanes}-way destination mask"),
                    ));
                }
                digits.iter().fold(0u8, |acc, c| acc | 1 << (c - b'0'))
            }
        };
        let v = Simd {
            op,
            lanes,
            d_signed,
            a_signed,
            b_signed,
            a_sel,
            b_sel,
            mask,
            sat,
            add,
        };
        Ok(Op::Video {
            v: Video::Simd(v),
            d,
            s: [a.src, b.src, c.src],
        })
    }
}
