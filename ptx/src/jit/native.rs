//! Which lane functions the compiler knows exactly, recognised by address.
//!
//! Decode chose each arithmetic instruction's lane function (`WarpFn`) from `math`; the
//! compiler asks `math` for the same functions and compares addresses. Equal addresses
//! are the same machine code, so the same result (even where the linker folded two
//! identical functions into one, their results are identical); a function not found here
//! (another copy, a new instruction) simply runs through the interpreter. So this table
//! can only lose speed, never change a result, as long as each entry's semantics below
//! are the `math` function's, which `tests/jit_differential.rs` checks over the corpus.
//! Functions `math` builds from a lane function (`math::lane_of`) are called lane by
//! lane: the same code as the interpreter's loop runs, so the same bits.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::math::{self, Cmp, CvtSpec, FMods, Ty, WarpFn};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntOp {
    Add,
    Sub,
    MulLo,
    MadLo,
    And,
    Or,
    Xor,
    Not,
    Neg,
    Shl,
    Shr,
    Min,
    Max,
    /// 32-bit sources, 64-bit result.
    MulWide,
    MadWide,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PredOp {
    And,
    Or,
    Xor,
    Not,
    Mov,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FOp {
    Add,
    Sub,
    Mul,
    Fma,
    Abs,
    Neg,
    /// `div.approx.f32`: `a * (1 / b)`, with `math`'s scaling for huge divisors.
    DivApprox,
    /// Correctly rounded (`.rn`): the host's IEEE operations.
    Div,
    Sqrt,
    /// `1 / a`.
    Rcp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum N {
    /// An integer op of `bits` (16, 32, 64), the result zero-extended.
    Int {
        op: IntOp,
        bits: u8,
        signed: bool,
    },
    /// The 64 bits of `a`.
    Mov,
    /// `c != 0 ? a : b`, 64 bits.
    Selp,
    /// On 0/1 values.
    Pred(PredOp),
    /// Integer conversion: the low `from` bits, sign- or zero-extended, then cut to `to`.
    Cvt {
        from: u8,
        signed: bool,
        to: u8,
    },
    /// f32, round to nearest, no ftz or sat: NaN results are 0x7fffffff.
    F32(FOp),
    /// `cvt.rn.f32.{s32,u32}` (no ftz or sat): exact host conversions, never NaN.
    CvtToF32 {
        signed: bool,
    },
    /// 0 or 1.
    CmpInt {
        cmp: Cmp,
        bits: u8,
        signed: bool,
    },
    CmpF32(Cmp),
    /// A lane function called for each lane (`math::lane_of`: the approximate and
    /// correctly rounded f32 and f64 functions, f64 arithmetic), with the operands the
    /// interpreter passes (those past the instruction's count are the first): the
    /// `math::LaneFn`'s address.
    Call(usize),
}

const INT_TYPES: [(Ty, u8, bool); 12] = [
    (Ty::U16, 16, false),
    (Ty::B16, 16, false),
    (Ty::S16, 16, true),
    (Ty::U32, 32, false),
    (Ty::B32, 32, false),
    (Ty::S32, 32, true),
    (Ty::U64, 64, false),
    (Ty::B64, 64, false),
    (Ty::S64, 64, true),
    (Ty::U8, 8, false),
    (Ty::B8, 8, false),
    (Ty::S8, 8, true),
];

fn table() -> &'static HashMap<usize, N> {
    static TABLE: OnceLock<HashMap<usize, N>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t: HashMap<usize, N> = HashMap::new();
        let mut add = |f: Option<WarpFn>, n: N| {
            if let Some(f) = f {
                t.entry(f as usize).or_insert(n);
            }
        };
        let int_ops = [
            ("add", IntOp::Add),
            ("sub", IntOp::Sub),
            ("mul.lo", IntOp::MulLo),
            ("mad.lo", IntOp::MadLo),
            ("and", IntOp::And),
            ("or", IntOp::Or),
            ("xor", IntOp::Xor),
            ("not", IntOp::Not),
            ("neg", IntOp::Neg),
            ("shl", IntOp::Shl),
            ("shr", IntOp::Shr),
            ("min", IntOp::Min),
            ("max", IntOp::Max),
            ("mul.wide", IntOp::MulWide),
            ("mad.wide", IntOp::MadWide),
        ];
        for (ty, bits, signed) in INT_TYPES {
            // 8-bit arithmetic is decoded only for the bitwise ops; wide ops are
            // compiled for 32-bit sources only.
            for (name, op) in int_ops {
                let wide = matches!(op, IntOp::MulWide | IntOp::MadWide);
                if bits == 8 || wide && bits != 32 {
                    continue;
                }
                add(math::int_op(name, ty), N::Int { op, bits, signed });
            }
            for cmp in [Cmp::Eq, Cmp::Ne, Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge] {
                add(
                    math::compare(ty, cmp, false),
                    N::CmpInt { cmp, bits, signed },
                );
            }
            for cmp in [Cmp::Lo, Cmp::Ls, Cmp::Hi, Cmp::Hs] {
                // The unsigned spellings compare as the type says (math::cmp_int).
                let same = match cmp {
                    Cmp::Lo => Cmp::Lt,
                    Cmp::Ls => Cmp::Le,
                    Cmp::Hi => Cmp::Gt,
                    _ => Cmp::Ge,
                };
                add(
                    math::compare(ty, cmp, false),
                    N::CmpInt {
                        cmp: same,
                        bits,
                        signed,
                    },
                );
            }
        }
        add(Some(math::mov()), N::Mov);
        add(Some(math::selp()), N::Selp);
        for (name, op) in [
            ("and", PredOp::And),
            ("or", PredOp::Or),
            ("xor", PredOp::Xor),
            ("not", PredOp::Not),
            ("mov", PredOp::Mov),
        ] {
            add(math::pred_op(name), N::Pred(op));
        }
        let rn = FMods {
            rnd: None,
            ftz: false,
            sat: false,
        };
        for (name, op) in [
            ("add", FOp::Add),
            ("sub", FOp::Sub),
            ("mul", FOp::Mul),
            ("fma", FOp::Fma),
            ("mad", FOp::Fma),
            ("abs", FOp::Abs),
            ("neg", FOp::Neg),
            ("div.approx", FOp::DivApprox),
            ("div", FOp::Div),
            ("sqrt", FOp::Sqrt),
            ("rcp", FOp::Rcp),
        ] {
            add(math::f32_op(name, rn), N::F32(op));
        }
        for cmp in [
            Cmp::Eq,
            Cmp::Ne,
            Cmp::Lt,
            Cmp::Le,
            Cmp::Gt,
            Cmp::Ge,
            Cmp::Equ,
            Cmp::Neu,
            Cmp::Ltu,
            Cmp::Leu,
            Cmp::Gtu,
            Cmp::Geu,
            Cmp::Num,
            Cmp::Nan,
        ] {
            add(math::compare(Ty::F32, cmp, false), N::CmpF32(cmp));
        }
        // Integer conversions as `math::cvt_fast` does them.
        for dst in [Ty::U64, Ty::S64, Ty::B64, Ty::U32, Ty::S32, Ty::B32] {
            for (src, sbits, ssigned) in INT_TYPES {
                let spec = CvtSpec {
                    dst,
                    src,
                    rnd: None,
                    int_rnd: None,
                    ftz: false,
                    sat: false,
                };
                let to = if dst.bytes() == 8 { 64 } else { 32 };
                // cvt_fast: to 64 bits from 32 only; to 32 bits from anything, where a
                // 64-bit source is cut (its low 32 bits).
                let n = match (to, sbits) {
                    (64, 32) => N::Cvt {
                        from: 32,
                        signed: ssigned,
                        to,
                    },
                    (32, 64) => N::Cvt {
                        from: 32,
                        signed: false,
                        to,
                    },
                    (32, b) => N::Cvt {
                        from: b,
                        signed: ssigned && b < 32,
                        to,
                    },
                    _ => continue,
                };
                add(math::cvt_fast(&spec), n);
            }
        }
        t
    })
}

/// What the compiler emits for lane function `f`, if it knows it: its own code, or a call
/// of the lane function for each lane.
pub(crate) fn lookup(f: WarpFn) -> Option<N> {
    table()
        .get(&(f as usize))
        .copied()
        .or_else(|| math::lane_of(f).map(|l| N::Call(l as usize)))
}
