//! Lane functions: the arithmetic of every typed PTX operation, as functions over a
//! warp's 32 lanes (`WarpFn`), chosen once at decode time so the executor's inner loop
//! is a plain, monomorphic loop over lanes.
//!
//! Registers hold 64 bits per lane; every function reads its operands truncated to the
//! instruction's type, so what lies above a narrow value never matters.
//! Floating point follows what NVIDIA GPUs do where it differs from the host: f32
//! results that are NaN are the canonical 0x7fffffff (abs/neg included); f64 results
//! that are NaN are the first NaN operand, quieted, or 0xfff8000000000000; `.ftz`
//! flushes subnormal inputs and results to sign-preserving zero; `.sat` gives +0 for
//! anything <= 0; `min`/`max` return the non-NaN operand; integer division or
//! remainder by zero is all ones; float-to-integer `cvt` saturates and maps NaN to 0
//! (f32 into 32 bits) or the destination's sign bit (64-bit destinations, f64 sources).

pub type Lanes = [u64; 32];
pub type WarpFn = fn(&mut Lanes, &Lanes, &Lanes, &Lanes, &Lanes);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    B8,
    B16,
    B32,
    B64,
    B128,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F16x2,
    BF16,
    BF16x2,
    F32,
    F64,
    Pred,
}

impl Ty {
    pub fn from_name(s: &str) -> Option<Ty> {
        Some(match s {
            "b8" => Ty::B8,
            "b16" => Ty::B16,
            "b32" => Ty::B32,
            "b64" => Ty::B64,
            "b128" => Ty::B128,
            "u8" => Ty::U8,
            "u16" => Ty::U16,
            "u32" => Ty::U32,
            "u64" => Ty::U64,
            "s8" => Ty::S8,
            "s16" => Ty::S16,
            "s32" => Ty::S32,
            "s64" => Ty::S64,
            "f16" => Ty::F16,
            "f16x2" => Ty::F16x2,
            "bf16" => Ty::BF16,
            "bf16x2" => Ty::BF16x2,
            "f32" => Ty::F32,
            "f64" => Ty::F64,
            "pred" => Ty::Pred,
            _ => return None,
        })
    }

    pub fn bytes(self) -> u32 {
        match self {
            Ty::B8 | Ty::U8 | Ty::S8 | Ty::Pred => 1,
            Ty::B16 | Ty::U16 | Ty::S16 | Ty::F16 | Ty::BF16 => 2,
            Ty::B32 | Ty::U32 | Ty::S32 | Ty::F32 | Ty::F16x2 | Ty::BF16x2 => 4,
            Ty::B64 | Ty::U64 | Ty::S64 | Ty::F64 => 8,
            Ty::B128 => 16,
        }
    }

    pub fn is_signed(self) -> bool {
        matches!(self, Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64)
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            Ty::F16 | Ty::F16x2 | Ty::BF16 | Ty::BF16x2 | Ty::F32 | Ty::F64
        )
    }

    pub fn is_int(self) -> bool {
        !self.is_float() && self != Ty::Pred && self != Ty::B128
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rnd {
    /// Nearest even (also the integer-rounding `.rni`).
    N,
    Z,
    M,
    P,
}

/// Builds a `WarpFn` from a per-lane expression over `a, b, c, e` (u64 lanes).
macro_rules! wf {
    (|$a:ident, $b:ident, $c:ident, $e:ident| $body:expr) => {{
        #[allow(
            unused_variables,
            unused_comparisons,
            clippy::unnecessary_cast,
            clippy::absurd_extreme_comparisons,
            clippy::neg_cmp_op_on_partial_ord
        )]
        fn lanes(o: &mut Lanes, a: &Lanes, b: &Lanes, c: &Lanes, e: &Lanes) {
            for i in 0..32 {
                let ($a, $b, $c, $e) = (a[i], b[i], c[i], e[i]);
                o[i] = $body;
            }
        }
        lanes as WarpFn
    }};
}

/// A `WarpFn` whose lanes are one pure function of the lane's operands, built from a
/// per-lane expression as `wf!` is, which also registers that function (`lane_of`): the
/// compiled code calls it for one lane inside its lane loops (`jit::native`), where a
/// `WarpFn` would need the whole warp's operands in memory. The warp function calls the
/// same lane function, so both give the same bits by construction. Only for bodies that
/// cannot panic (floating-point arithmetic): the lane function is called from compiled
/// code, which no panic may unwind through.
macro_rules! lane_wf {
    (|$a:ident, $b:ident, $c:ident, $e:ident| $body:expr) => {{
        #[allow(
            unused_variables,
            unused_comparisons,
            clippy::unnecessary_cast,
            clippy::absurd_extreme_comparisons,
            clippy::neg_cmp_op_on_partial_ord
        )]
        #[inline(always)]
        extern "C" fn lane($a: u64, $b: u64, $c: u64, $e: u64) -> u64 {
            $body
        }
        fn lanes(o: &mut Lanes, a: &Lanes, b: &Lanes, c: &Lanes, e: &Lanes) {
            for i in 0..32 {
                o[i] = lane(a[i], b[i], c[i], e[i]);
            }
        }
        with_lane(lanes as WarpFn, lane)
    }};
}

/// One lane of a warp function built by `lane_wf!`: the lane's operands `a, b, c, e` in,
/// its result out.
pub type LaneFn = extern "C" fn(u64, u64, u64, u64) -> u64;

fn lane_fns() -> &'static std::sync::RwLock<std::collections::HashMap<usize, LaneFn>> {
    static FNS: std::sync::OnceLock<std::sync::RwLock<std::collections::HashMap<usize, LaneFn>>> =
        std::sync::OnceLock::new();
    FNS.get_or_init(Default::default)
}

/// Records that `f`'s lanes are `lane` (`lane_of`), and returns `f`.
fn with_lane(f: WarpFn, lane: LaneFn) -> WarpFn {
    let known = lane_fns()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .contains_key(&(f as usize));
    if !known {
        lane_fns()
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .entry(f as usize)
            .or_insert(lane);
    }
    f
}

/// The lane function of a warp function built by `lane_wf!` (and chosen at least once:
/// decode chose it), found by address as `jit::native` finds what it compiles itself.
pub(crate) fn lane_of(f: WarpFn) -> Option<LaneFn> {
    lane_fns()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(f as usize))
        .copied()
}

/// One `WarpFn` per integer type: `T` is the Rust type of the PTX type (`U` its unsigned
/// twin, `W` the double width for `.wide`/`.hi`).
macro_rules! by_int {
    ($ty:expr, |$a:ident, $b:ident, $c:ident, $e:ident| $body:expr) => {
        by_int!(@types $ty, |$a, $b, $c, $e| $body;
            Ty::U8 | Ty::B8 => u8, u8, u16;
            Ty::U16 | Ty::B16 => u16, u16, u32;
            Ty::U32 | Ty::B32 => u32, u32, u64;
            Ty::U64 | Ty::B64 => u64, u64, u128;
            Ty::S8 => i8, u8, i16;
            Ty::S16 => i16, u16, i32;
            Ty::S32 => i32, u32, i64;
            Ty::S64 => i64, u64, i128;
        )
    };
    (@types $ty:expr, |$a:ident, $b:ident, $c:ident, $e:ident| $body:expr;
     $($p:pat => $t:ty, $u:ty, $w:ty;)*) => {
        match $ty {
            $($p => {
                #[allow(dead_code)]
                type T = $t;
                #[allow(dead_code)]
                type U = $u;
                #[allow(dead_code)]
                type W = $w;
                Some(wf!(|$a, $b, $c, $e| $body))
            })*
            _ => None,
        }
    };
}

/// Integer ops whose result is the same type (`as T as U as u64`: zero-extended bits).
pub fn int_op(op: &str, ty: Ty) -> Option<WarpFn> {
    match op {
        "add" => by_int!(ty, |a, b, c, e| (a as T).wrapping_add(b as T) as U as u64),
        "sub" => by_int!(ty, |a, b, c, e| (a as T).wrapping_sub(b as T) as U as u64),
        "mul.lo" => by_int!(ty, |a, b, c, e| (a as T).wrapping_mul(b as T) as U as u64),
        "mul.hi" => by_int!(ty, |a, b, c, e| ((((a as T) as W) * ((b as T) as W))
            >> (8 * std::mem::size_of::<T>())) as T
            as U as u64),
        "mul.wide" => by_int!(
            ty,
            |a, b, c, e| (((a as T) as W).wrapping_mul((b as T) as W)) as u64
        ),
        "mad.lo" => by_int!(
            ty,
            |a, b, c, e| (a as T).wrapping_mul(b as T).wrapping_add(c as T) as U as u64
        ),
        "mad.hi" => by_int!(ty, |a, b, c, e| (((((a as T) as W) * ((b as T) as W))
            >> (8 * std::mem::size_of::<T>())) as T)
            .wrapping_add(c as T) as U
            as u64),
        "mad.wide" => by_int!(ty, |a, b, c, e| (((a as T) as W)
            .wrapping_mul((b as T) as W)
            .wrapping_add(c as W)) as u64),
        // Division by zero has no defined result in PTX; the H200 gives all ones for both
        // the quotient and the remainder, signed or not (corpus: int_div_ptx_edges).
        "div" => by_int!(ty, |a, b, c, e| match (a as T).checked_div(b as T) {
            Some(q) => q as U as u64,
            None =>
                if b as T == 0 {
                    U::MAX as u64
                } else {
                    a as T as U as u64
                },
        }),
        "rem" => by_int!(ty, |a, b, c, e| match (a as T).checked_rem(b as T) {
            Some(r) => r as U as u64,
            None =>
                if b as T == 0 {
                    U::MAX as u64
                } else {
                    0
                },
        }),
        "sad" => by_int!(ty, |a, b, c, e| {
            let (x, y) = (a as T, b as T);
            let d = if x > y {
                (x as U).wrapping_sub(y as U)
            } else {
                (y as U).wrapping_sub(x as U)
            };
            d.wrapping_add(c as U) as u64
        }),
        "min" => by_int!(ty, |a, b, c, e| std::cmp::min(a as T, b as T) as U as u64),
        "max" => by_int!(ty, |a, b, c, e| std::cmp::max(a as T, b as T) as U as u64),
        "abs" => by_int!(ty, |a, b, c, e| if (a as T) < (0 as T) {
            (0 as T).wrapping_sub(a as T) as U as u64
        } else {
            a as T as U as u64
        }),
        "neg" => by_int!(ty, |a, b, c, e| (0 as T).wrapping_sub(a as T) as U as u64),
        "and" => by_int!(ty, |a, b, c, e| (a & b) as T as U as u64),
        "or" => by_int!(ty, |a, b, c, e| (a | b) as T as U as u64),
        "xor" => by_int!(ty, |a, b, c, e| (a ^ b) as T as U as u64),
        "not" => by_int!(ty, |a, b, c, e| (!a) as T as U as u64),
        "cnot" => by_int!(ty, |a, b, c, e| ((a as T) == (0 as T)) as u64),
        // Shift amounts are unsigned 32-bit; at or beyond the width the result is 0 (or
        // the sign for `shr.s`), never the host's modulo.
        "shl" => by_int!(
            ty,
            |a, b, c, e| if (b as u32) >= 8 * std::mem::size_of::<T>() as u32 {
                0
            } else {
                ((a as T) << (b as u32)) as U as u64
            }
        ),
        "shr" => by_int!(ty, |a, b, c, e| {
            let s = std::cmp::min(b as u32, 8 * std::mem::size_of::<T>() as u32 - 1);
            let v = (a as T) >> s;
            if (b as u32) >= 8 * std::mem::size_of::<T>() as u32 {
                ((a as T) >> s >> 1) as U as u64
            } else {
                v as U as u64
            }
        }),
        "popc" => by_int!(ty, |a, b, c, e| (a as T).count_ones() as u64),
        "clz" => by_int!(ty, |a, b, c, e| (a as T).leading_zeros() as u64),
        "brev" => by_int!(ty, |a, b, c, e| (a as T).reverse_bits() as U as u64),
        "bfind" => by_int!(ty, |a, b, c, e| {
            let v = a as T;
            let bits = 8 * std::mem::size_of::<T>() as u32;
            let lz = if v < (0 as T) {
                (!v).leading_zeros()
            } else {
                v.leading_zeros()
            };
            if lz == bits {
                0xffff_ffff
            } else {
                (bits - 1 - lz) as u64
            }
        }),
        "bfind.shiftamt" => by_int!(ty, |a, b, c, e| {
            let v = a as T;
            let bits = 8 * std::mem::size_of::<T>() as u32;
            let lz = if v < (0 as T) {
                (!v).leading_zeros()
            } else {
                v.leading_zeros()
            };
            if lz == bits {
                0xffff_ffff
            } else {
                lz as u64
            }
        }),
        "bfe" => by_int!(ty, |a, b, c, e| {
            let bits = 8 * std::mem::size_of::<T>() as u32;
            let (pos, len) = ((b as u8) as u32, (c as u8) as u32);
            let v = a as T;
            // Sign of the field (`.s`): the bit at min(pos+len-1, msb); 0 when len == 0.
            let msb_pos = std::cmp::min(pos.saturating_add(len).saturating_sub(1), bits - 1);
            let neg = (0 as T) > (!(0 as T)) && len != 0 && ((v >> msb_pos) & (1 as T)) != (0 as T);
            let mut r: u128 = 0;
            for i in 0..std::cmp::min(len, bits) {
                let bit = if pos + i < bits {
                    ((v >> (pos + i)) & (1 as T)) != (0 as T)
                } else {
                    neg
                };
                if bit {
                    r |= 1 << i;
                }
            }
            if neg {
                for i in std::cmp::min(len, bits)..bits {
                    r |= 1 << i;
                }
            }
            (r as T) as U as u64
        }),
        "bfi" => by_int!(ty, |a, b, c, e| {
            let bits = 8 * std::mem::size_of::<T>() as u32;
            let (pos, len) = ((c as u8) as u32, (e as u8) as u32);
            let mut r = b as U;
            for i in 0..len {
                if pos + i >= bits {
                    break;
                }
                let bit = ((a as U) >> i) & 1;
                r = (r & !((1 as U) << (pos + i))) | (bit << (pos + i));
            }
            r as u64
        }),
        _ => None,
    }
}

/// `add.sat.s32`/`sub.sat.s32`/`mad.hi.sat.s32`: clamped to the s32 range.
pub fn int_sat_op(op: &str) -> Option<WarpFn> {
    Some(match op {
        "add" => wf!(|a, b, c, e| (a as i32).saturating_add(b as i32) as u32 as u64),
        "sub" => wf!(|a, b, c, e| (a as i32).saturating_sub(b as i32) as u32 as u64),
        "mad.hi" => wf!(
            |a, b, c, e| ((((a as i32 as i64) * (b as i32 as i64)) >> 32) + (c as i32 as i64))
                .clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32
                as u64
        ),
        _ => return None,
    })
}

pub fn mul24(op: &str, ty: Ty) -> Option<WarpFn> {
    Some(match (op, ty) {
        ("mul24.lo", Ty::U32) => {
            wf!(|a, b, c, e| ((a & 0xff_ffff) * (b & 0xff_ffff)) as u32 as u64)
        }
        ("mul24.hi", Ty::U32) => {
            wf!(|a, b, c, e| (((a & 0xff_ffff) * (b & 0xff_ffff)) >> 16) as u32 as u64)
        }
        ("mad24.lo", Ty::U32) => {
            wf!(|a, b, c, e| ((a & 0xff_ffff) * (b & 0xff_ffff)).wrapping_add(c) as u32 as u64)
        }
        ("mul24.lo", Ty::S32) => wf!(|a, b, c, e| (sx24(a) * sx24(b)) as u32 as u64),
        ("mul24.hi", Ty::S32) => wf!(|a, b, c, e| ((sx24(a) * sx24(b)) >> 16) as u32 as u64),
        ("mad24.lo", Ty::S32) => {
            wf!(|a, b, c, e| (sx24(a) * sx24(b)).wrapping_add(c as i32 as i64) as u32 as u64)
        }
        // The high 32 of the 48-bit product (bits 47..16) plus c.
        ("mad24.hi", Ty::U32) => wf!(|a, b, c, e| {
            ((((a & 0xff_ffff) * (b & 0xff_ffff)) >> 16) as u32).wrapping_add(c as u32) as u64
        }),
        ("mad24.hi", Ty::S32) => wf!(|a, b, c, e| {
            (((sx24(a) * sx24(b)) >> 16) as i32).wrapping_add(c as i32) as u32 as u64
        }),
        // The sum clamped to the s32 range, as `mad.hi.sat.s32`'s.
        ("mad24.hi.sat", Ty::S32) => wf!(|a, b, c, e| {
            (((sx24(a) * sx24(b)) >> 16) + (c as i32 as i64))
                .clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32 as u64
        }),
        _ => return None,
    })
}

fn sx24(a: u64) -> i64 {
    (((a as u32) << 8) as i32 >> 8) as i64
}

pub fn pred_op(op: &str) -> Option<WarpFn> {
    Some(match op {
        "and" => wf!(|a, b, c, e| a & b & 1),
        "or" => wf!(|a, b, c, e| (a | b) & 1),
        "xor" => wf!(|a, b, c, e| (a ^ b) & 1),
        "not" => wf!(|a, b, c, e| (a & 1) ^ 1),
        "mov" => wf!(|a, b, c, e| a & 1),
        _ => return None,
    })
}

/// `isspacep.space`: 1 when a generic address lies in the space's window.
pub fn isspacep(space: &str) -> Option<WarpFn> {
    use crate::{LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOW_SIZE};
    Some(match space {
        // The block's own window; `shared::cluster`: any block's a cluster can have.
        "shared" => {
            wf!(|a, b, c, e| (a.wrapping_sub(SHARED_WINDOW) < crate::CLUSTER_RANK_STRIDE) as u64)
        }
        "shared::cluster" => wf!(|a, b, c, e| (a.wrapping_sub(SHARED_WINDOW)
            < (crate::MAX_CLUSTER_BLOCKS as u64 + 1) * crate::CLUSTER_RANK_STRIDE)
            as u64),
        "local" => wf!(|a, b, c, e| (a.wrapping_sub(LOCAL_WINDOW) < WINDOW_SIZE) as u64),
        "param" => wf!(|a, b, c, e| (a.wrapping_sub(PARAM_WINDOW) < WINDOW_SIZE) as u64),
        // Everything else in the generic space is global (const lives in device memory).
        "global" | "const" => wf!(|a, b, c, e| (a < SHARED_WINDOW) as u64),
        _ => return None,
    })
}

/// `shf.{l,r}.{wrap,clamp}.b32 d, a, b, c`: funnel shift of the 64 bits b:a.
pub fn shf(left: bool, clamp: bool) -> WarpFn {
    match (left, clamp) {
        (true, false) => wf!(|a, b, c, e| ((((b as u32 as u64) << 32 | a as u32 as u64)
            << (c & 31))
            >> 32) as u32 as u64),
        (true, true) => wf!(|a, b, c, e| ((((b as u32 as u64) << 32 | a as u32 as u64)
            << (c as u32).min(32))
            >> 32) as u32 as u64),
        (false, false) => wf!(
            |a, b, c, e| (((b as u32 as u64) << 32 | a as u32 as u64) >> (c & 31)) as u32 as u64
        ),
        (false, true) => wf!(|a, b, c, e| (((b as u32 as u64) << 32 | a as u32 as u64)
            >> (c as u32).min(32)) as u32 as u64),
    }
}

pub fn mov() -> WarpFn {
    wf!(|a, b, c, e| a)
}

/// `selp`: c is the predicate (0 or 1).
pub fn selp() -> WarpFn {
    wf!(|a, b, c, e| if c != 0 { a } else { b })
}

pub fn prmt(mode: Option<&str>) -> Option<WarpFn> {
    Some(match mode {
        None => wf!(|a, b, c, e| {
            let src = ((b as u32 as u64) << 32) | (a as u32 as u64);
            let mut r = 0u32;
            for i in 0..4 {
                let sel = ((c as u32) >> (4 * i)) & 0xf;
                let byte = ((src >> (8 * (sel & 7))) & 0xff) as u32;
                let byte = if sel & 8 != 0 {
                    if byte & 0x80 != 0 {
                        0xff
                    } else {
                        0
                    }
                } else {
                    byte
                };
                r |= byte << (8 * i);
            }
            r as u64
        }),
        Some(m) => {
            let f: WarpFn = match m {
                "f4e" => wf!(|a, b, c, e| prmt_mode(
                    a,
                    b,
                    c,
                    [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]]
                )),
                "b4e" => wf!(|a, b, c, e| prmt_mode(
                    a,
                    b,
                    c,
                    [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]]
                )),
                "rc8" => wf!(|a, b, c, e| prmt_mode(
                    a,
                    b,
                    c,
                    [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]]
                )),
                "ecl" => wf!(|a, b, c, e| prmt_mode(
                    a,
                    b,
                    c,
                    [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]]
                )),
                "ecr" => wf!(|a, b, c, e| prmt_mode(
                    a,
                    b,
                    c,
                    [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]]
                )),
                "rc16" => wf!(|a, b, c, e| prmt_mode(
                    a,
                    b,
                    c,
                    [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]]
                )),
                _ => return None,
            };
            f
        }
    })
}

fn prmt_mode(a: u64, b: u64, c: u64, table: [[u32; 4]; 4]) -> u64 {
    let src = ((b as u32 as u64) << 32) | (a as u32 as u64);
    let sel = (c as u32 & 3) as usize;
    let mut r = 0u32;
    for (i, s) in table[sel].iter().enumerate() {
        r |= (((src >> (8 * s)) & 0xff) as u32) << (8 * i);
    }
    r as u64
}

/// `lop3.b32 d, a, b, c, lut`: the LUT arrives as the fourth operand.
pub fn lop3() -> WarpFn {
    wf!(|a, b, c, e| {
        let (a, b, c, lut) = (a as u32, b as u32, c as u32, e as u8);
        let mut r = 0u32;
        for i in 0..8 {
            if lut >> i & 1 != 0 {
                let ma = if i & 4 != 0 { a } else { !a };
                let mb = if i & 2 != 0 { b } else { !b };
                let mc = if i & 1 != 0 { c } else { !c };
                r |= ma & mb & mc;
            }
        }
        r as u64
    })
}

// ---- floating point ------------------------------------------------------------

pub const CANONICAL_NAN32: u32 = 0x7fff_ffff;
pub const CANONICAL_NAN64: u64 = 0x7fff_ffff_ffff_ffff;
/// The NaN an f64 operation makes from no NaN operand (H200: sqrt of a negative, 0 * inf).
pub const DEFAULT_NAN64: u64 = 0xfff8_0000_0000_0000;

/// The bits of an f64 arithmetic result: a NaN result is the first NaN operand (a, b,
/// then c), quieted, as the H200 propagates it; made from no NaN, 0xfff8000000000000.
#[inline(always)]
fn bits64_of(f: f64, a: u64, b: u64, c: u64) -> u64 {
    if !f.is_nan() {
        return f.to_bits();
    }
    [a, b, c]
        .into_iter()
        .find(|&x| f64_of(x).is_nan())
        .map_or(DEFAULT_NAN64, |x| x | 0x0008_0000_0000_0000)
}

#[inline(always)]
pub fn f32_of(x: u64) -> f32 {
    f32::from_bits(x as u32)
}

#[inline(always)]
pub fn f64_of(x: u64) -> f64 {
    f64::from_bits(x)
}

#[inline(always)]
pub fn bits32(f: f32) -> u64 {
    if f.is_nan() {
        CANONICAL_NAN32 as u64
    } else {
        f.to_bits() as u64
    }
}

#[inline(always)]
pub fn bits64(f: f64) -> u64 {
    if f.is_nan() {
        CANONICAL_NAN64
    } else {
        f.to_bits()
    }
}

#[inline(always)]
pub fn ftz32(f: f32) -> f32 {
    if f.is_subnormal() {
        f32::copysign(0.0, f)
    } else {
        f
    }
}

#[inline(always)]
fn sat01_32(f: f32) -> f32 {
    // NaN and every value <= 0, -0 included, saturate to +0 (H200: mul.ftz.sat.f32).
    if f.is_nan() || f <= 0.0 {
        0.0
    } else {
        f.clamp(0.0, 1.0)
    }
}

#[inline(always)]
fn sat01_64(f: f64) -> f64 {
    if f.is_nan() || f <= 0.0 {
        0.0
    } else {
        f.clamp(0.0, 1.0)
    }
}

/// Moves a round-to-nearest result one step in the direction `mode` asks, given the sign
/// of (exact - rounded).
macro_rules! directed {
    ($name:ident, $f:ty, $bits:ty) => {
        pub fn $name(rn: $f, residual_sign: i32, mode: Rnd) -> $f {
            if residual_sign == 0 || rn.is_nan() {
                return rn;
            }
            let up = |x: $f| -> $f {
                if x == <$f>::INFINITY {
                    x
                } else if x == 0.0 {
                    <$f>::from_bits(1)
                } else if x > 0.0 {
                    <$f>::from_bits(x.to_bits() + 1)
                } else {
                    <$f>::from_bits(x.to_bits() - 1)
                }
            };
            let down = |x: $f| -> $f { -up(-x) };
            match mode {
                Rnd::N => rn,
                Rnd::P => {
                    if residual_sign > 0 {
                        up(rn)
                    } else {
                        rn
                    }
                }
                Rnd::M => {
                    if residual_sign < 0 {
                        down(rn)
                    } else {
                        rn
                    }
                }
                Rnd::Z => {
                    // Toward zero: step back when rounding went away from zero.
                    if rn > 0.0 && residual_sign < 0 {
                        down(rn)
                    } else if rn < 0.0 && residual_sign > 0 {
                        up(rn)
                    } else if rn.is_infinite() {
                        if rn > 0.0 {
                            <$f>::MAX
                        } else {
                            <$f>::MIN
                        }
                    } else {
                        rn
                    }
                }
            }
        }
    };
}
directed!(directed32, f32, u32);
directed!(directed64, f64, u64);

fn sign_of(x: f64) -> i32 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}

fn two_sum64(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    (s, err)
}

/// A rounded f32 operation: the exact result is known as an f64 pair (hi + lo).
fn round32_from(hi: f64, lo: f64, mode: Rnd) -> f32 {
    let rn = hi as f32;
    if mode == Rnd::N || !rn.is_finite() && hi.is_infinite() {
        return rn;
    }
    let diff = (hi - rn as f64) + lo;
    let r = directed32(rn, sign_of(diff), mode);
    // Overflow under directed modes: `hi as f32` is inf; step to MAX where the mode says.
    if rn.is_infinite() && hi.is_finite() {
        return match (mode, rn > 0.0) {
            (Rnd::Z, true) | (Rnd::M, true) => f32::MAX,
            (Rnd::Z, false) | (Rnd::P, false) => f32::MIN,
            _ => rn,
        };
    }
    r
}

pub fn f32_add(a: f32, b: f32, m: Rnd) -> f32 {
    if m == Rnd::N {
        return a + b;
    }
    let (s, e) = two_sum64(a as f64, b as f64);
    round32_from(s, e, m)
}

pub fn f32_mul(a: f32, b: f32, m: Rnd) -> f32 {
    if m == Rnd::N {
        return a * b;
    }
    round32_from(a as f64 * b as f64, 0.0, m)
}

pub fn f32_fma(a: f32, b: f32, c: f32, m: Rnd) -> f32 {
    if m == Rnd::N {
        return a.mul_add(b, c);
    }
    let (s, e) = two_sum64(a as f64 * b as f64, c as f64);
    round32_from(s, e, m)
}

pub fn f32_div(a: f32, b: f32, m: Rnd) -> f32 {
    let q = a / b;
    if m == Rnd::N || q.is_nan() || q == 0.0 && a == 0.0 {
        return q;
    }
    if q.is_infinite() {
        // Overflow of a finite quotient: directed modes stop at MAX on their side.
        if a.is_infinite() || b == 0.0 {
            return q;
        }
        return match (m, q > 0.0) {
            (Rnd::Z, true) | (Rnd::M, true) => f32::MAX,
            (Rnd::Z, false) | (Rnd::P, false) => f32::MIN,
            _ => q,
        };
    }
    // a - q*b is exact in f64 (48-bit product); its sign against b's is the residual's.
    let r = a as f64 - q as f64 * b as f64;
    directed32(q, sign_of(r) * sign_of(b as f64), m)
}

pub fn f32_sqrt(a: f32, m: Rnd) -> f32 {
    let s = a.sqrt();
    if m == Rnd::N || !s.is_finite() || s == 0.0 {
        return s;
    }
    let r = a as f64 - s as f64 * s as f64;
    directed32(s, sign_of(r), m)
}

fn two_prod64(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

/// A directed mode's answer when a finite operation overflowed to infinity.
fn overflow64(r: f64, m: Rnd) -> f64 {
    match (m, r > 0.0) {
        (Rnd::Z, true) | (Rnd::M, true) => f64::MAX,
        (Rnd::Z, false) | (Rnd::P, false) => f64::MIN,
        _ => r,
    }
}

pub fn f64_add(a: f64, b: f64, m: Rnd) -> f64 {
    let (s, e) = two_sum64(a, b);
    if m != Rnd::N && s.is_infinite() && a.is_finite() && b.is_finite() {
        return overflow64(s, m);
    }
    if m == Rnd::N || !s.is_finite() {
        return s;
    }
    directed64(s, sign_of(e), m)
}

/// A finite nonzero f64 as an integer significand, normalised to bit 52, and the
/// exponent of its last bit.
fn parts64(x: f64) -> (u64, i32) {
    let bits = x.to_bits();
    let (e, f) = ((bits >> 52) as i32 & 0x7ff, bits & ((1 << 52) - 1));
    let (mut m, mut e) = if e == 0 {
        (f, -1074)
    } else {
        (f | 1 << 52, e - 1075)
    };
    while m & 1 << 52 == 0 {
        m <<= 1;
        e -= 1;
    }
    (m, e)
}

/// Rounds the exact value +-(`mant` + `sticky` * tiny) * 2^`exp` (mant nonzero) to f64
/// in mode `m`, subnormal results included, where error-free transformations fail.
fn round_exact64(neg: bool, mant: u128, exp: i32, sticky: bool, m: Rnd) -> f64 {
    let top = exp + 127 - mant.leading_zeros() as i32;
    let target = (top - 52).max(-1074);
    let shift = target - exp;
    let (kept, rem, half) = if shift <= 0 {
        (mant << -shift, 0, 1)
    } else if shift >= 128 {
        (0, 1, u128::MAX)
    } else {
        (
            mant >> shift,
            mant & ((1 << shift) - 1),
            1u128 << (shift - 1),
        )
    };
    let inexact = rem != 0 || sticky;
    let up = match m {
        Rnd::N => rem > half || rem == half && (sticky || kept & 1 == 1),
        Rnd::Z => false,
        Rnd::P => inexact && !neg,
        Rnd::M => inexact && neg,
    };
    let kept = kept + up as u128;
    let pow2 = |k: i32| f64::from_bits(((k + 1023) as u64) << 52);
    let mag = if target < -1000 {
        kept as f64 * pow2(target + 200) * pow2(-200)
    } else {
        kept as f64 * pow2(target)
    };
    if neg {
        -mag
    } else {
        mag
    }
}

pub fn f64_mul(a: f64, b: f64, m: Rnd) -> f64 {
    let (p, e) = two_prod64(a, b);
    if m != Rnd::N && p.is_infinite() && a.is_finite() && b.is_finite() {
        return overflow64(p, m);
    }
    if m == Rnd::N || !p.is_finite() {
        return p;
    }
    if a != 0.0 && b != 0.0 && p.abs() < 2.0 * f64::MIN_POSITIVE {
        // Tiny products: the residual `e` is not exact there.
        let ((ma, ea), (mb, eb)) = (parts64(a), parts64(b));
        let neg = (a < 0.0) != (b < 0.0);
        return round_exact64(neg, ma as u128 * mb as u128, ea + eb, false, m);
    }
    directed64(p, sign_of(e), m)
}

pub fn f64_div(a: f64, b: f64, m: Rnd) -> f64 {
    let q = a / b;
    if m == Rnd::N || q.is_nan() || q == 0.0 && (a == 0.0 || b.is_infinite()) {
        return q;
    }
    if q.is_infinite() {
        if a.is_infinite() || b == 0.0 {
            return q;
        }
        return overflow64(q, m);
    }
    if a.is_finite() && b.is_finite() {
        // Exactly, in integers: the residual is not exact for subnormal operands or
        // quotients.
        let ((ma, ea), (mb, eb)) = (parts64(a), parts64(b));
        let n = (ma as u128) << 74;
        let neg = (a < 0.0) != (b < 0.0);
        return round_exact64(neg, n / mb as u128, ea - eb - 74, n % mb as u128 != 0, m);
    }
    let r = (-q).mul_add(b, a);
    directed64(q, sign_of(r) * sign_of(b), m)
}

pub fn f64_sqrt(a: f64, m: Rnd) -> f64 {
    let s = a.sqrt();
    if m == Rnd::N || !s.is_finite() || s == 0.0 {
        return s;
    }
    let r = (-s).mul_add(s, a);
    directed64(s, sign_of(r), m)
}

/// `fma.{rz,rm,rp}.f64`: a * b + c rounded once in mode `m`. The exact sum in integers
/// (the product's 106 bits and c aligned in 128; what lies further below only as a
/// sticky bit), since no error-free transformation of an f64 fma is exact near
/// subnormals and overflow.
pub fn f64_fma(a: f64, b: f64, c: f64, m: Rnd) -> f64 {
    let rn = a.mul_add(b, c);
    if m == Rnd::N || !a.is_finite() || !b.is_finite() || !c.is_finite() {
        return rn;
    }
    if rn.is_infinite() {
        return overflow64(rn, m);
    }
    let pneg = a.is_sign_negative() != b.is_sign_negative();
    // An exact zero sum of opposite signs is +0, -0 rounding down (IEEE 754 6.3).
    let cancelled = if m == Rnd::M { -0.0 } else { 0.0 };
    if a == 0.0 || b == 0.0 {
        return match (c == 0.0, pneg == c.is_sign_negative()) {
            (false, _) => c,
            (true, true) => c,
            (true, false) => cancelled,
        };
    }
    let ((ma, ea), (mb, eb)) = (parts64(a), parts64(b));
    let (p, ep) = (ma as u128 * mb as u128, ea + eb);
    if c == 0.0 {
        return round_exact64(pneg, p, ep, false, m);
    }
    let (mc, ec) = parts64(c);
    let cneg = c < 0.0;
    // The operand of the higher last-bit exponent shifted up onto the other's, as far as
    // 126 bits allow; beyond that the lower one is shifted down, its lost bits sticky.
    let ((hi, ehi), (lo, elo, lo_neg), hi_neg) = if ep >= ec {
        ((p, ep), (mc as u128, ec, cneg), pneg)
    } else {
        ((mc as u128, ec), (p, ep, pneg), cneg)
    };
    let diff = (ehi - elo) as u64;
    let room = (hi.leading_zeros() as u64).saturating_sub(2);
    let up = diff.min(room);
    let down = diff - up;
    let hi = hi << up;
    let (lo, sticky) = if down >= 128 {
        (0, true)
    } else {
        (lo >> down, lo & ((1u128 << down) - 1) != 0)
    };
    let exp = elo + down as i32;
    if hi_neg == lo_neg {
        return round_exact64(hi_neg, hi + lo, exp, sticky, m);
    }
    // Opposite signs. With a sticky remainder, hi is far larger than lo (its top bit at
    // 125 or more, lo's 106 bits shifted below it): hi - lo - frac = (hi - lo - 1) +
    // (1 - frac).
    if sticky {
        return round_exact64(hi_neg, hi - lo - 1, exp, true, m);
    }
    match hi.cmp(&lo) {
        std::cmp::Ordering::Equal => cancelled,
        std::cmp::Ordering::Greater => round_exact64(hi_neg, hi - lo, exp, false, m),
        std::cmp::Ordering::Less => round_exact64(lo_neg, lo - hi, exp, false, m),
    }
}

/// GPU `min`/`max`: a NaN operand yields the other operand; both NaN yield NaN.
#[inline(always)]
pub fn fmin32(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == 0.0 && b == 0.0 {
        if a.is_sign_negative() {
            a
        } else {
            b
        }
    } else {
        a.min(b)
    }
}

#[inline(always)]
pub fn fmax32(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        b
    } else if b.is_nan() {
        a
    } else if a == 0.0 && b == 0.0 {
        if a.is_sign_positive() {
            a
        } else {
            b
        }
    } else {
        a.max(b)
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub struct FMods {
    pub rnd: Option<Rnd>,
    pub ftz: bool,
    pub sat: bool,
}

/// `tanh.approx.f32` as the H200's MUFU.TANH computes it, bit for bit on all 163,858
/// inputs `ci/explore/tanh_table.c` recorded (2^-16 to 16 in steps of 1/4096 of each
/// binade, both signs, and 16 to 128: runs/2026-12-03-h200-session19/call2). It is odd;
/// below 2^-8 it is x, from 8 on 1. Between, each binade 2^e (e = -8 to 2) is cut into
/// 2^m equal segments by its top m mantissa bits (`TANH_SEGMENTS`); the other 23 - m
/// bits are r in [0, 1), and the result is C0 + C1 r + C2 sq(r) in units of
/// 2^(min(e, -1) - 23), where sq(r) is r squared by a folded squarer that keeps only
/// partial products of weight 2^-15 and up (`truncated_square`), the exact sum cut toward
/// zero to 24 significant bits. The recorded inputs have 12-bit mantissas: that the
/// linear term takes all of r's bits, and the products' internal widths, are what a
/// table of 12-bit inputs cannot settle (the model takes them exact).
fn tanh_approx_f32(x: f32) -> f32 {
    let bits = x.to_bits();
    let sign = bits & 0x8000_0000;
    let a = bits & 0x7fff_ffff;
    if a > 0x7f80_0000 {
        return f32::NAN;
    }
    let e = (a >> 23) as i32 - 127;
    if e < -8 {
        return x;
    }
    if e >= 3 {
        return f32::from_bits(sign | 0x3f80_0000);
    }
    let segments = TANH_SEGMENTS[(e + 8) as usize];
    let m = segments.len().trailing_zeros();
    let l = 23 - m;
    let mantissa = a & 0x7f_ffff;
    let (c0, c1, c2) = segments[(mantissa >> l) as usize];
    let r = mantissa & ((1 << l) - 1);
    let sq = truncated_square(r, l);
    // The exact sum in units of 2^(min(e, -1) - 23 - l - TANH_SQUARE_BITS).
    let fraction_bits = l + TANH_SQUARE_BITS;
    let sum = ((c0 as i128) << fraction_bits)
        + ((c1 as i128 * r as i128) << TANH_SQUARE_BITS)
        + ((c2 as i128 * sq as i128) << l);
    debug_assert!(sum > 0);
    let width = 128 - sum.leading_zeros() as i32;
    let exponent = e.min(-1) - 23 - fraction_bits as i32 + width - 1;
    let significand = if width >= 24 {
        sum >> (width - 24)
    } else {
        sum << (24 - width)
    } as u32;
    f32::from_bits(sign | (((exponent + 127) as u32) << 23) | (significand & 0x7f_ffff))
}

/// The weight of the smallest partial product `truncated_square` keeps: 2^-15.
const TANH_SQUARE_BITS: u32 = 15;

/// r = `bits` / 2^`len` squared, in units of 2^-15, as a folded squarer that drops the
/// partial products below 2^-15 gives it: r's bit a (of weight 2^-a) contributes its
/// square 2^-2a where 2a <= 15, and with bit b > a the cross term 2^(1-a-b) where
/// a + b <= 16.
fn truncated_square(bits: u32, len: u32) -> u64 {
    let w = TANH_SQUARE_BITS;
    let bit = |k: u32| bits >> (len - k) & 1 == 1;
    let mut out = 0u64;
    for a in 1..=len.min(w) {
        if !bit(a) {
            continue;
        }
        if 2 * a <= w {
            out += 1 << (w - 2 * a);
        }
        for b in a + 1..=len.min(w + 1 - a) {
            if bit(b) {
                out += 1 << (w + 1 - a - b);
            }
        }
    }
    out
}

/// MUFU.TANH's segments, binade 2^-8 first: (C0, C1, C2) in units of
/// 2^(min(e, -1) - 23), fitted to the H200's recording (`tanh_approx_f32`).
#[rustfmt::skip]
const TANH_SEGMENTS: [&[(i64, i64, i64)]; 11] = [
    // 2^-8: 1 segment
    &[(8388608, 8388608, -256)],
    // 2^-7: 1 segment
    &[(8388480, 8388096, -768)],
    // 2^-6: 1 segment
    &[(8387968, 8387072, -3328)],
    // 2^-5: 2 segments
    &[(8385888, 4190464, -2624), (12573728, 4185216, -3520)],
    // 2^-4: 2 segments
    &[(8377696, 4178688, -10176), (12546144, 4158464, -14208)],
    // 2^-3: 4 segments
    &[(8345192, 2065024, -8944), (10401240, 2047104, -10816), (12437488, 2025472, -12640), (14450304, 2000192, -14256)],
    // 2^-2: 4 segments
    &[(8218080, 1972352, -33104), (10157208, 1905920, -38592), (12024448, 1828576, -42976), (13809984, 1742432, -46304)],
    // 2^-1: 4 segments
    &[(7753000, 1650272, -98592), (9304656, 1451968, -100608), (10656104, 1250016, -96608), (11809672, 1056352, -88688)],
    // 2^0: 8 segments
    &[(12777544, 878752, -78584), (13577912, 721632, -67824), (14231944, 586144, -57152), (14761140, 472016, -47384), (15185952, 377440, -38736), (15524804, 300160, -31376), (15793720, 237600, -25152), (16006268, 187456, -20072)],
    // 2^1: 16 segments
    &[(16173728, 147496, -15946), (16305345, 115768, -12590), (16408581, 90696, -9898), (16489421, 70984, -7784), (16552657, 55480, -6094), (16602069, 43340, -4776), (16640655, 33828, -3734), (16670765, 26396, -2920), (16694254, 20584, -2278), (16712570, 16048, -1778), (16726848, 12508, -1386), (16737977, 9748, -1082), (16746648, 7596, -842), (16753405, 5916, -654), (16758669, 4608, -508), (16762770, 3588, -394)],
    // 2^2: 8 segments
    &[(16766000, 10544, -3504), (16773088, 3888, -1296), (16775696, 1424, -464), (16776656, 528, -176), (16777012, 192, -64), (16777140, 80, -32), (16777188, 32, -16), (16777204, 16, -8)],
];

macro_rules! f32fn {
    ($ftz:expr, $sat:expr, |$a:ident, $b:ident, $c:ident| $body:expr) => {
        match ($ftz, $sat) {
            (false, false) => lane_wf!(|a, b, c, e| {
                let ($a, $b, $c) = (f32_of(a), f32_of(b), f32_of(c));
                bits32($body)
            }),
            (true, false) => lane_wf!(|a, b, c, e| {
                let ($a, $b, $c) = (ftz32(f32_of(a)), ftz32(f32_of(b)), ftz32(f32_of(c)));
                bits32(ftz32($body))
            }),
            (false, true) => lane_wf!(|a, b, c, e| {
                let ($a, $b, $c) = (f32_of(a), f32_of(b), f32_of(c));
                bits32(sat01_32($body))
            }),
            (true, true) => lane_wf!(|a, b, c, e| {
                let ($a, $b, $c) = (ftz32(f32_of(a)), ftz32(f32_of(b)), ftz32(f32_of(c)));
                bits32(sat01_32(ftz32($body)))
            }),
        }
    };
}

macro_rules! f64fn {
    ($sat:expr, |$a:ident, $b:ident, $c:ident| $body:expr) => {
        if $sat {
            lane_wf!(|a, b, c, e| {
                let ($a, $b, $c) = (f64_of(a), f64_of(b), f64_of(c));
                bits64(sat01_64($body))
            })
        } else {
            lane_wf!(|a, b, c, e| {
                let ($a, $b, $c) = (f64_of(a), f64_of(b), f64_of(c));
                bits64_of($body, a, b, c)
            })
        }
    };
}

/// One warp function per rounding mode (`.rn` without one), `$r` naming the mode as a
/// constant in `$each`.
macro_rules! by_rnd {
    ($m:expr, $r:ident, $each:expr) => {
        match $m.rnd.unwrap_or(Rnd::N) {
            Rnd::N => {
                const $r: Rnd = Rnd::N;
                $each
            }
            Rnd::Z => {
                const $r: Rnd = Rnd::Z;
                $each
            }
            Rnd::M => {
                const $r: Rnd = Rnd::M;
                $each
            }
            Rnd::P => {
                const $r: Rnd = Rnd::P;
                $each
            }
        }
    };
}

macro_rules! by_rnd32 {
    ($m:expr, |$a:ident, $b:ident, $c:ident, $r:ident| $body:expr) => {
        by_rnd!($m, $r, f32fn!($m.ftz, $m.sat, |$a, $b, $c| $body))
    };
}

macro_rules! by_rnd64 {
    ($m:expr, |$a:ident, $b:ident, $c:ident, $r:ident| $body:expr) => {
        by_rnd!($m, $r, f64fn!($m.sat, |$a, $b, $c| $body))
    };
}

/// `sin.approx`/`cos.approx` as the hardware reduces the argument: a * f32(1/(2 pi)),
/// rounded toward zero to f32, is the angle in periods; its function is then accurate.
/// Against the H200 (corpus f32_approx, |a| < 16) this is within 2^-21.5; the exact
/// sin(a) is up to 2^-18.9 away.
fn sin_cos_approx(a: f32, cos: bool) -> f32 {
    let p = a as f64 * (1.0 / std::f64::consts::TAU) as f32 as f64;
    let mut r = p as f32;
    if r.is_finite() && (r as f64).abs() > p.abs() {
        r = f32::from_bits(r.to_bits() - 1);
    }
    let x = std::f64::consts::TAU * r as f64;
    (if cos { x.cos() } else { x.sin() }) as f32
}

/// f32 operations. `op` includes the variant for the approximate functions.
pub fn f32_op(op: &str, m: FMods) -> Option<WarpFn> {
    Some(match op {
        "add" => by_rnd32!(m, |a, b, c, R| f32_add(a, b, R)),
        "sub" => by_rnd32!(m, |a, b, c, R| f32_add(a, -b, R)),
        "mul" => by_rnd32!(m, |a, b, c, R| f32_mul(a, b, R)),
        "fma" | "mad" => by_rnd32!(m, |a, b, c, R| f32_fma(a, b, c, R)),
        "div" | "div.full" => by_rnd32!(m, |a, b, c, R| f32_div(a, b, R)),
        // div.approx: a * (1/b) as the hardware does, with its flush of huge divisors.
        "div.approx" => f32fn!(
            m.ftz,
            m.sat,
            |a, b, c| if b.abs() > 8.507059e37 && b.is_finite() {
                a * (0.25 / b) * 0.25
            } else {
                a * (1.0 / b)
            }
        ),
        "rcp" => by_rnd32!(m, |a, b, c, R| f32_div(1.0, a, R)),
        "rcp.approx" => f32fn!(m.ftz, m.sat, |a, b, c| 1.0 / a),
        "sqrt" => by_rnd32!(m, |a, b, c, R| f32_sqrt(a, R)),
        "sqrt.approx" => f32fn!(m.ftz, m.sat, |a, b, c| a.sqrt()),
        "rsqrt.approx" => f32fn!(m.ftz, m.sat, |a, b, c| 1.0 / a.sqrt()),
        "ex2.approx" => f32fn!(m.ftz, m.sat, |a, b, c| a.exp2()),
        "lg2.approx" => f32fn!(m.ftz, m.sat, |a, b, c| a.log2()),
        "sin.approx" => f32fn!(m.ftz, m.sat, |a, b, c| sin_cos_approx(a, false)),
        "cos.approx" => f32fn!(m.ftz, m.sat, |a, b, c| sin_cos_approx(a, true)),
        "tanh.approx" => f32fn!(m.ftz, m.sat, |a, b, c| tanh_approx_f32(a)),
        "min" => f32fn!(m.ftz, false, |a, b, c| fmin32(a, b)),
        "max" => f32fn!(m.ftz, false, |a, b, c| fmax32(a, b)),
        "min.NaN" => f32fn!(m.ftz, false, |a, b, c| if a.is_nan() || b.is_nan() {
            f32::NAN
        } else {
            fmin32(a, b)
        }),
        "max.NaN" => f32fn!(m.ftz, false, |a, b, c| if a.is_nan() || b.is_nan() {
            f32::NAN
        } else {
            fmax32(a, b)
        }),
        // abs/neg touch only the sign bit, except that a NaN becomes the canonical NaN
        // (H200: abs.f32/neg.f32 of 0x7fa00001 and 0xffc00000 are 0x7fffffff).
        "abs" if m.ftz => {
            lane_wf!(|a, b, c, e| bits32(f32::from_bits(ftz32(f32_of(a)).to_bits() & 0x7fff_ffff)))
        }
        "abs" => lane_wf!(|a, b, c, e| bits32(f32::from_bits(a as u32 & 0x7fff_ffff))),
        "neg" if m.ftz => {
            lane_wf!(|a, b, c, e| bits32(f32::from_bits(ftz32(f32_of(a)).to_bits() ^ 0x8000_0000)))
        }
        "neg" => lane_wf!(|a, b, c, e| bits32(f32::from_bits(a as u32 ^ 0x8000_0000))),
        "copysign" => {
            lane_wf!(|a, b, c, e| ((b as u32 & 0x7fff_ffff) | (a as u32 & 0x8000_0000)) as u64)
        }
        _ => return None,
    })
}

pub fn f64_op(op: &str, m: FMods) -> Option<WarpFn> {
    Some(match op {
        "add" => by_rnd64!(m, |a, b, c, R| f64_add(a, b, R)),
        "sub" => by_rnd64!(m, |a, b, c, R| f64_add(a, -b, R)),
        "mul" => by_rnd64!(m, |a, b, c, R| f64_mul(a, b, R)),
        "fma" | "mad" if m.rnd.unwrap_or(Rnd::N) == Rnd::N => {
            f64fn!(m.sat, |a, b, c| a.mul_add(b, c))
        }
        "fma" => by_rnd64!(m, |a, b, c, R| f64_fma(a, b, c, R)),
        "div" => by_rnd64!(m, |a, b, c, R| f64_div(a, b, R)),
        "rcp" => by_rnd64!(m, |a, b, c, R| f64_div(1.0, a, R)),
        // rcp.approx.ftz.f64: nvcc uses it as a starting point for Newton steps; the
        // exact reciprocal is within its error.
        "rcp.approx" => f64fn!(false, |a, b, c| 1.0 / a),
        "sqrt" => by_rnd64!(m, |a, b, c, R| f64_sqrt(a, R)),
        "rsqrt.approx" => f64fn!(false, |a, b, c| 1.0 / a.sqrt()),
        "min" => f64fn!(false, |a, b, c| if a.is_nan() {
            b
        } else if b.is_nan() {
            a
        } else if a == 0.0 && b == 0.0 {
            if a.is_sign_negative() {
                a
            } else {
                b
            }
        } else {
            a.min(b)
        }),
        "max" => f64fn!(false, |a, b, c| if a.is_nan() {
            b
        } else if b.is_nan() {
            a
        } else if a == 0.0 && b == 0.0 {
            if a.is_sign_positive() {
                a
            } else {
                b
            }
        } else {
            a.max(b)
        }),
        "abs" => lane_wf!(|a, b, c, e| a & 0x7fff_ffff_ffff_ffff),
        "neg" => lane_wf!(|a, b, c, e| a ^ 0x8000_0000_0000_0000),
        "copysign" => {
            lane_wf!(|a, b, c, e| (b & 0x7fff_ffff_ffff_ffff) | (a & 0x8000_0000_0000_0000))
        }
        _ => return None,
    })
}

/// The PTX ISA's "OOB NaN" in 16 bits: what a tensor map's NaN-request-zero-FMA fill
/// writes for an element outside the tensor (every 16 bits 0x7ff7, as recorded on the
/// H200), and what `fma.oob` tests its operands for.
pub const OOB_NAN: u16 = u16::from_le_bytes(crate::tensormap::NAN_FILL);

/// `fma.rn.oob{.relu}` of one half: +0 when a multiplicand is the OOB NaN of either sign
/// (the ISA: "clamps the result to 0 if either of the operands is OOB NaN"; recorded on
/// the H200, corpus fma_oob: `a` or `b` at 0x7ff7 or 0xfff7 gives +0, while `c` at 0x7ff7
/// is an ordinary NaN and gives NaN), else `fma.rn{.relu}`'s result, as `half_op` computes
/// it.
fn fma_oob_half(a: u16, b: u16, c: u16, bf: bool, relu: bool) -> u16 {
    let oob = |x: u16| x & 0x7fff == OOB_NAN;
    if oob(a) || oob(b) {
        return 0;
    }
    if bf {
        let of = |x: u16| f32::from_bits((x as u32) << 16) as f64;
        let (v, lo) = two_sum64(of(a) * of(b), of(c));
        let r = f32_to_bf16(f32_odd2(v, lo), Rnd::N);
        if relu {
            relu_half(r, 0x7f80)
        } else {
            r
        }
    } else {
        let of = |x: u16| f16_to_f32(x) as f64;
        let r = f64_to_f16(of(a) * of(b) + of(c), Rnd::N);
        if relu {
            relu_half(r, 0x7c00)
        } else {
            r
        }
    }
}

fn fma_oob_lanes<const BF: bool, const RELU: bool, const X2: bool>(
    o: &mut Lanes,
    a: &Lanes,
    b: &Lanes,
    c: &Lanes,
    _e: &Lanes,
) {
    for i in 0..32 {
        let mut r = 0u64;
        // Each half is tested on its own, as the ISA says of the SIMD forms.
        for half in 0..if X2 { 2 } else { 1 } {
            let sh = 16 * half;
            let h = |x: u64| (x >> sh) as u16;
            r |= (fma_oob_half(h(a[i]), h(b[i]), h(c[i]), BF, RELU) as u64) << sh;
        }
        o[i] = r;
    }
}

/// `fma.rn.oob{.relu}.{f16,f16x2,bf16,bf16x2}`.
pub fn fma_oob(ty: Ty, relu: bool) -> Option<WarpFn> {
    Some(match (ty, relu) {
        (Ty::F16, false) => fma_oob_lanes::<false, false, false>,
        (Ty::F16, true) => fma_oob_lanes::<false, true, false>,
        (Ty::F16x2, false) => fma_oob_lanes::<false, false, true>,
        (Ty::F16x2, true) => fma_oob_lanes::<false, true, true>,
        (Ty::BF16, false) => fma_oob_lanes::<true, false, false>,
        (Ty::BF16, true) => fma_oob_lanes::<true, true, false>,
        (Ty::BF16x2, false) => fma_oob_lanes::<true, false, true>,
        (Ty::BF16x2, true) => fma_oob_lanes::<true, true, true>,
        _ => return None,
    })
}

/// Half precision (`.f16`, `.bf16`, and their `x2` pairs): computed exactly in f64
/// (products and sums of two halves fit), rounded once to the half format.
pub fn half_op(op: &str, ty: Ty, m: FMods) -> Option<WarpFn> {
    if m.rnd.is_some_and(|r| r != Rnd::N) || m.sat {
        return None;
    }
    macro_rules! h {
        ($to:expr, $from:expr, |$a:ident, $b:ident, $c:ident| $body:expr) => {{
            match ty {
                Ty::F16 | Ty::BF16 => wf!(|a, b, c, e| {
                    let ($a, $b, $c) = (($from)(a as u16), ($from)(b as u16), ($from)(c as u16));
                    ($to)($body) as u64
                }),
                _ => wf!(|a, b, c, e| {
                    let mut r = 0u64;
                    for half in 0..2 {
                        let sh = 16 * half;
                        let ($a, $b, $c) = (
                            ($from)((a >> sh) as u16),
                            ($from)((b >> sh) as u16),
                            ($from)((c >> sh) as u16),
                        );
                        r |= (($to)($body) as u64) << sh;
                    }
                    r
                }),
            }
        }};
    }
    let bf = matches!(ty, Ty::BF16 | Ty::BF16x2);
    Some(match (op, bf) {
        ("add", false) => h!(
            |v: f64| f64_to_f16(v, Rnd::N),
            |x: u16| f16_to_f32(x) as f64,
            |a, b, c| a + b
        ),
        ("sub", false) => h!(
            |v: f64| f64_to_f16(v, Rnd::N),
            |x: u16| f16_to_f32(x) as f64,
            |a, b, c| a - b
        ),
        ("mul", false) => h!(
            |v: f64| f64_to_f16(v, Rnd::N),
            |x: u16| f16_to_f32(x) as f64,
            |a, b, c| a * b
        ),
        ("fma", false) => h!(
            |v: f64| f64_to_f16(v, Rnd::N),
            |x: u16| f16_to_f32(x) as f64,
            |a, b, c| a * b + c
        ),
        ("add", true) => h!(
            |v: f64| f32_to_bf16(f32_odd(v), Rnd::N),
            |x: u16| f32::from_bits((x as u32) << 16) as f64,
            |a, b, c| a + b
        ),
        ("sub", true) => h!(
            |v: f64| f32_to_bf16(f32_odd(v), Rnd::N),
            |x: u16| f32::from_bits((x as u32) << 16) as f64,
            |a, b, c| a - b
        ),
        ("mul", true) => h!(
            |v: f64| f32_to_bf16(f32_odd(v), Rnd::N),
            |x: u16| f32::from_bits((x as u32) << 16) as f64,
            |a, b, c| a * b
        ),
        // The product is exact in f64, the sum may not be: its residual too.
        ("fma", true) => h!(
            |v: (f64, f64)| f32_to_bf16(f32_odd2(v.0, v.1), Rnd::N),
            |x: u16| f32::from_bits((x as u32) << 16) as f64,
            |a, b, c| two_sum64(a * b, c)
        ),
        // `.relu`: a negative result is 0, a NaN the canonical NaN (the ISA's words; a
        // -0 result made +0 is the clamp read literally, not yet seen on the H200).
        ("fma.relu", false) => h!(
            |v: f64| relu_half(f64_to_f16(v, Rnd::N), 0x7c00),
            |x: u16| f16_to_f32(x) as f64,
            |a, b, c| a * b + c
        ),
        ("fma.relu", true) => h!(
            |v: (f64, f64)| relu_half(f32_to_bf16(f32_odd2(v.0, v.1), Rnd::N), 0x7f80),
            |x: u16| f32::from_bits((x as u32) << 16) as f64,
            |a, b, c| two_sum64(a * b, c)
        ),
        // The approximations: the value (exact, as f32) cut toward zero to the half
        // format, which is what the H200 gives (corpus `half_approx`: every ex2 and all
        // but one tanh of 1024 each, that one its MUFU's approximation's own).
        ("tanh.approx", false) => h!(
            |v: f64| f64_to_f16(v as f32 as f64, Rnd::Z),
            |x: u16| f16_to_f32(x) as f64,
            |a, b, c| tanh_approx_f32(a as f32) as f64
        ),
        ("tanh.approx", true) => h!(
            |v: f64| f32_to_bf16(v as f32, Rnd::Z),
            |x: u16| f32::from_bits((x as u32) << 16) as f64,
            |a, b, c| tanh_approx_f32(a as f32) as f64
        ),
        ("ex2.approx", false) => h!(
            |v: f64| f64_to_f16(v as f32 as f64, Rnd::Z),
            |x: u16| f16_to_f32(x) as f64,
            |a, b, c| a.exp2()
        ),
        ("ex2.approx", true) => h!(
            |v: f64| f32_to_bf16(v as f32, Rnd::Z),
            |x: u16| f32::from_bits((x as u32) << 16) as f64,
            |a, b, c| a.exp2()
        ),
        // The sign bit alone, in f16 and bf16 alike (the ISA: "NaN inputs yield an
        // unspecified NaN"; a NaN with its sign changed is one).
        ("neg", _) if matches!(ty, Ty::F16 | Ty::BF16) => {
            wf!(|a, b, c, e| (a as u16 ^ 0x8000) as u64)
        }
        ("abs", _) if matches!(ty, Ty::F16 | Ty::BF16) => {
            wf!(|a, b, c, e| (a as u16 & 0x7fff) as u64)
        }
        ("neg", _) => wf!(|a, b, c, e| (a as u32 ^ 0x8000_8000) as u64),
        ("abs", _) => wf!(|a, b, c, e| (a as u32 & 0x7fff_7fff) as u64),
        _ => return None,
    })
}

pub fn cvt_pack_x2(bf16: bool) -> WarpFn {
    if bf16 {
        wf!(|a, b, c, e| ((f32_to_bf16(f32_of(a), Rnd::N) as u64) << 16)
            | f32_to_bf16(f32_of(b), Rnd::N) as u64)
    } else {
        wf!(
            |a, b, c, e| ((f64_to_f16(f32_of(a) as f64, Rnd::N) as u64) << 16)
                | f64_to_f16(f32_of(b) as f64, Rnd::N) as u64
        )
    }
}

/// `dp4a.atype.btype d, a, b, c`: c plus the four byte products.
pub fn dp4a(sa: bool, sb: bool) -> WarpFn {
    fn byte(x: u64, i: u32, signed: bool) -> i64 {
        let v = (x >> (8 * i)) as u8;
        if signed {
            v as i8 as i64
        } else {
            v as i64
        }
    }
    match (sa, sb) {
        (false, false) => wf!(|a, b, c, e| (0..4).fold(c as u32 as i64, |s, i| s + byte(
            a, i, false
        ) * byte(
            b, i, false
        )) as u32 as u64),
        (true, false) => wf!(
            |a, b, c, e| (0..4).fold(c as i32 as i64, |s, i| s + byte(a, i, true)
                * byte(b, i, false)) as u32 as u64
        ),
        (false, true) => wf!(
            |a, b, c, e| (0..4).fold(c as i32 as i64, |s, i| s + byte(a, i, false)
                * byte(b, i, true)) as u32 as u64
        ),
        (true, true) => wf!(
            |a, b, c, e| (0..4).fold(c as i32 as i64, |s, i| s + byte(a, i, true)
                * byte(b, i, true)) as u32 as u64
        ),
    }
}

/// `dp2a.mode.atype.btype d, a, b, c`: c plus the products of a's two halves with two
/// bytes of b (bytes 0 and 1 for `.lo`, 2 and 3 for `.hi`).
pub fn dp2a(sa: bool, sb: bool, hi: bool) -> WarpFn {
    fn dot(a: u64, b: u64, c: u64, sa: bool, sb: bool, hi: bool) -> u64 {
        let half = |i: u32| {
            let v = (a >> (16 * i)) as u16;
            if sa {
                v as i16 as i64
            } else {
                v as i64
            }
        };
        let byte = |i: u32| {
            let v = (b >> (8 * i)) as u8;
            if sb {
                v as i8 as i64
            } else {
                v as i64
            }
        };
        let first = if hi { 2 } else { 0 };
        // c is .u32 when both are, else .s32: only the low 32 bits of the sum remain.
        let c = if sa || sb {
            c as i32 as i64
        } else {
            c as u32 as i64
        };
        (c + half(0) * byte(first) + half(1) * byte(first + 1)) as u32 as u64
    }
    match (sa, sb, hi) {
        (false, false, false) => wf!(|a, b, c, e| dot(a, b, c, false, false, false)),
        (false, false, true) => wf!(|a, b, c, e| dot(a, b, c, false, false, true)),
        (false, true, false) => wf!(|a, b, c, e| dot(a, b, c, false, true, false)),
        (false, true, true) => wf!(|a, b, c, e| dot(a, b, c, false, true, true)),
        (true, false, false) => wf!(|a, b, c, e| dot(a, b, c, true, false, false)),
        (true, false, true) => wf!(|a, b, c, e| dot(a, b, c, true, false, true)),
        (true, true, false) => wf!(|a, b, c, e| dot(a, b, c, true, true, false)),
        (true, true, true) => wf!(|a, b, c, e| dot(a, b, c, true, true, true)),
    }
}

/// `fns.b32 d, mask, base, offset`: the position of the offset-th set bit of mask
/// counting from bit base (up for a positive offset, down for a negative one; offset 0:
/// base itself if set), 0xffffffff when there is none. A base above 31 (undefined in
/// the ISA) finds nothing. An offset of i32::MIN gives 0 on the H200 (the corpus's
/// `int_forms_issue21`): ptxas's code negates it into a count of 2^31 that its final
/// signed `popc < count` test takes as negative, so it reports the last position of its
/// downward search, bit 0, as found.
pub fn fns() -> WarpFn {
    fn find(mask: u32, base: u32, offset: i32) -> u32 {
        if offset == i32::MIN {
            return 0;
        }
        let set = |pos: i64| (0..32).contains(&pos) && mask >> pos & 1 == 1;
        if offset == 0 {
            return if set(base as i64) { base } else { u32::MAX };
        }
        let inc: i64 = if offset > 0 { 1 } else { -1 };
        let mut count = (offset as i64).abs() - 1;
        let mut pos = base as i64;
        while (0..32).contains(&pos) {
            if set(pos) {
                if count == 0 {
                    return pos as u32;
                }
                count -= 1;
            }
            pos += inc;
        }
        u32::MAX
    }
    wf!(|a, b, c, e| find(a as u32, b as u32, c as i32) as u64)
}

/// `slct.dtype.s32 d, a, b, c` and `slct{.ftz}.dtype.f32`: a where c >= 0, else b. An
/// f32 c compares as a float: -0 selects a, NaN selects b; `.ftz` makes a negative
/// subnormal -0 (so a).
pub fn slct(float_c: bool, ftz: bool) -> WarpFn {
    match (float_c, ftz) {
        (false, _) => wf!(|a, b, c, e| if c as u32 as i32 >= 0 { a } else { b }),
        (true, false) => wf!(|a, b, c, e| if f32_of(c) >= 0.0 { a } else { b }),
        (true, true) => wf!(|a, b, c, e| if ftz32(f32_of(c)) >= 0.0 { a } else { b }),
    }
}

/// `cvt.pack.sat.{u16,s16}.s32 d, a, b` (`c` None) and `cvt.pack.sat.{u8,s8}.s32.b32 d,
/// a, b, c`: b saturated into the low `bits`, a above it, then c's low bits above both.
pub fn cvt_pack_sat(bits: u32, signed: bool) -> WarpFn {
    fn pack(a: u64, b: u64, c: u64, bits: u32, signed: bool) -> u64 {
        let sat = |x: u64| {
            let x = x as u32 as i32 as i64;
            let (lo, hi) = if signed {
                (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
            } else {
                (0, (1i64 << bits) - 1)
            };
            (x.clamp(lo, hi) as u64) & ((1u64 << bits) - 1)
        };
        ((sat(b) | sat(a) << bits | c << (2 * bits)) as u32) as u64
    }
    match (bits, signed) {
        (8, false) => wf!(|a, b, c, e| pack(a, b, c, 8, false)),
        (8, true) => wf!(|a, b, c, e| pack(a, b, c, 8, true)),
        (16, false) => wf!(|a, b, c, e| pack(a, b, 0, 16, false)),
        _ => wf!(|a, b, c, e| pack(a, b, 0, 16, true)),
    }
}

// ---- comparisons ---------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

impl Cmp {
    pub fn from_name(s: &str) -> Option<Cmp> {
        Some(match s {
            "eq" => Cmp::Eq,
            "ne" => Cmp::Ne,
            "lt" => Cmp::Lt,
            "le" => Cmp::Le,
            "gt" => Cmp::Gt,
            "ge" => Cmp::Ge,
            "lo" => Cmp::Lo,
            "ls" => Cmp::Ls,
            "hi" => Cmp::Hi,
            "hs" => Cmp::Hs,
            "equ" => Cmp::Equ,
            "neu" => Cmp::Neu,
            "ltu" => Cmp::Ltu,
            "leu" => Cmp::Leu,
            "gtu" => Cmp::Gtu,
            "geu" => Cmp::Geu,
            "num" => Cmp::Num,
            "nan" => Cmp::Nan,
            _ => return None,
        })
    }
}

macro_rules! cmp_int {
    ($ty:expr, $cmp:expr) => {{
        // lo/ls/hi/hs are the unsigned spellings.
        match $cmp {
            Cmp::Eq => by_int!($ty, |a, b, c, e| ((a as T) == (b as T)) as u64),
            Cmp::Ne => by_int!($ty, |a, b, c, e| ((a as T) != (b as T)) as u64),
            Cmp::Lt | Cmp::Lo => by_int!($ty, |a, b, c, e| ((a as T) < (b as T)) as u64),
            Cmp::Le | Cmp::Ls => by_int!($ty, |a, b, c, e| ((a as T) <= (b as T)) as u64),
            Cmp::Gt | Cmp::Hi => by_int!($ty, |a, b, c, e| ((a as T) > (b as T)) as u64),
            Cmp::Ge | Cmp::Hs => by_int!($ty, |a, b, c, e| ((a as T) >= (b as T)) as u64),
            _ => None,
        }
    }};
}

macro_rules! cmp_float {
    ($conv:expr, $cmp:expr) => {{
        let conv = $conv;
        let _ = conv;
        Some(match $cmp {
            Cmp::Eq => wf!(|a, b, c, e| {
                let (x, y) = (($conv)(a), ($conv)(b));
                (x == y) as u64
            }),
            Cmp::Ne => wf!(|a, b, c, e| {
                let (x, y) = (($conv)(a), ($conv)(b));
                (x != y && !x.is_nan() && !y.is_nan()) as u64
            }),
            Cmp::Lt => wf!(|a, b, c, e| {
                let (x, y) = (($conv)(a), ($conv)(b));
                (x < y) as u64
            }),
            Cmp::Le => wf!(|a, b, c, e| {
                let (x, y) = (($conv)(a), ($conv)(b));
                (x <= y) as u64
            }),
            Cmp::Gt => wf!(|a, b, c, e| {
                let (x, y) = (($conv)(a), ($conv)(b));
                (x > y) as u64
            }),
            Cmp::Ge => wf!(|a, b, c, e| {
                let (x, y) = (($conv)(a), ($conv)(b));
                (x >= y) as u64
            }),
            Cmp::Equ => wf!(|a, b, c, e| {
                let (x, y) = (($conv)(a), ($conv)(b));
                (x == y || x.is_nan() || y.is_nan()) as u64
            }),
            Cmp::Neu => wf!(|a, b, c, e| {
                let (x, y) = (($conv)(a), ($conv)(b));
                (x != y) as u64
            }),
            Cmp::Ltu => wf!(|a, b, c, e| {
                let (x, y) = (($conv)(a), ($conv)(b));
                !(x >= y) as u64
            }),
            Cmp::Leu => wf!(|a, b, c, e| {
                let (x, y) = (($conv)(a), ($conv)(b));
                !(x > y) as u64
            }),
            Cmp::Gtu => wf!(|a, b, c, e| {
                let (x, y) = (($conv)(a), ($conv)(b));
                !(x <= y) as u64
            }),
            Cmp::Geu => wf!(|a, b, c, e| {
                let (x, y) = (($conv)(a), ($conv)(b));
                !(x < y) as u64
            }),
            Cmp::Num => wf!(|a, b, c, e| {
                let (x, y) = (($conv)(a), ($conv)(b));
                (!x.is_nan() && !y.is_nan()) as u64
            }),
            Cmp::Nan => wf!(|a, b, c, e| {
                let (x, y) = (($conv)(a), ($conv)(b));
                (x.is_nan() || y.is_nan()) as u64
            }),
            _ => return None,
        })
    }};
}

/// A comparison giving 0 or 1 per lane.
pub fn compare(ty: Ty, cmp: Cmp, ftz: bool) -> Option<WarpFn> {
    match ty {
        Ty::F32 if ftz => cmp_float!(|x: u64| ftz32(f32_of(x)), cmp),
        Ty::F32 => cmp_float!(f32_of, cmp),
        Ty::F64 => cmp_float!(f64_of, cmp),
        Ty::F16 => cmp_float!(|x: u64| f16_to_f32(x as u16), cmp),
        Ty::BF16 => cmp_float!(|x: u64| f32::from_bits((x as u32 & 0xffff) << 16), cmp),
        _ => cmp_int!(ty, cmp),
    }
}

/// `testp.op.type`.
pub fn testp(ty: Ty, what: &str) -> Option<WarpFn> {
    macro_rules! t {
        ($conv:expr) => {
            Some(match what {
                "finite" => wf!(|a, b, c, e| ($conv)(a).is_finite() as u64),
                "infinite" => wf!(|a, b, c, e| ($conv)(a).is_infinite() as u64),
                "number" => wf!(|a, b, c, e| !($conv)(a).is_nan() as u64),
                "notanumber" => wf!(|a, b, c, e| ($conv)(a).is_nan() as u64),
                "normal" => wf!(|a, b, c, e| ($conv)(a).is_normal() as u64),
                "subnormal" => wf!(|a, b, c, e| ($conv)(a).is_subnormal() as u64),
                _ => return None,
            })
        };
    }
    match ty {
        Ty::F32 => t!(f32_of),
        Ty::F64 => t!(f64_of),
        _ => None,
    }
}

// ---- conversions ---------------------------------------------------------------

pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = if exp == 0 {
        if man == 0 {
            sign
        } else {
            // Subnormal: normalise.
            let mut e = 127 - 15 + 1;
            let mut m = man;
            while m & 0x400 == 0 {
                m <<= 1;
                e -= 1;
            }
            sign | ((e as u32) << 23) | ((m & 0x3ff) << 13)
        }
    } else if exp == 0x1f {
        sign | 0x7f80_0000 | (man << 13)
    } else {
        sign | ((exp + 127 - 15) << 23) | (man << 13)
    };
    f32::from_bits(bits)
}

/// f64 to f16 with a rounding mode (f64 holds every f32 exactly, so one rounding).
pub fn f64_to_f16(f: f64, mode: Rnd) -> u16 {
    if f.is_nan() {
        return 0x7fff;
    }
    let sign: u16 = if f.is_sign_negative() { 0x8000 } else { 0 };
    let a = f.abs();
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    // Scale so that the f16 quantum is 1, round as an integer, rebuild.
    let exp = if a == 0.0 {
        -15
    } else {
        a.log2().floor() as i32
    };
    let e = exp.clamp(-14, 15);
    let quantum = (2.0f64).powi(e - 10);
    let q = a / quantum;
    let neg = sign != 0;
    let r = match mode {
        Rnd::N => q.round_ties_even(),
        Rnd::Z => q.trunc(),
        Rnd::P => {
            if neg {
                q.floor()
            } else {
                q.ceil()
            }
        }
        Rnd::M => {
            if neg {
                q.ceil()
            } else {
                q.floor()
            }
        }
    };
    let v = r * quantum;
    if v >= 65520.0 || v > 65504.0 {
        // Overflow: infinity unless the mode rounds toward zero on this side.
        let to_max = matches!(mode, Rnd::Z) || (mode == Rnd::P && neg) || (mode == Rnd::M && !neg);
        return sign | if to_max { 0x7bff } else { 0x7c00 };
    }
    if v == 0.0 {
        return sign;
    }
    let ve = v.log2().floor() as i32;
    if ve < -14 {
        sign | (v / (2.0f64).powi(-24)).round() as u16
    } else {
        let man = (v / (2.0f64).powi(ve - 10)).round() as u32 - 1024;
        sign | (((ve + 15) as u16) << 10) | man as u16
    }
}

/// f64 to f32 rounded to odd: a last bit of 1 marks an inexact result, so a second
/// rounding to a narrower format (bf16) rounds as if from the exact value. Rounding f64
/// sums to f32 first and then to bf16 rounded a tie broken only by the low bits the
/// wrong way (H200: fma.rn.bf16x2 -1.5 * 0x2f4e + 0x95e7 is 0xaf9b).
pub fn f32_odd(v: f64) -> f32 {
    f32_odd2(v, 0.0)
}

/// `f32_odd` of the exact sum `v + lo`, `lo` being below `v`'s last bit (a two_sum).
pub fn f32_odd2(v: f64, lo: f64) -> f32 {
    let r = v as f32;
    if !v.is_finite() || r as f64 == v && lo == 0.0 {
        return r;
    }
    let mut bits = r.to_bits();
    let above = if r as f64 == v {
        (lo < 0.0) == (v > 0.0)
    } else {
        (r as f64).abs() > v.abs()
    };
    if above && r != 0.0 {
        bits -= 1;
    }
    f32::from_bits(bits | 1)
}

pub fn f32_to_bf16(f: f32, mode: Rnd) -> u16 {
    if f.is_nan() {
        return 0x7fff;
    }
    let b = f.to_bits();
    let low = b & 0xffff;
    let hi = (b >> 16) as u16;
    if low == 0 {
        return hi;
    }
    let neg = b >> 31 != 0;
    let up = match mode {
        Rnd::N => low > 0x8000 || (low == 0x8000 && hi & 1 == 1),
        Rnd::Z => false,
        Rnd::P => !neg,
        Rnd::M => neg,
    };
    if up {
        hi.wrapping_add(1)
    } else {
        hi
    }
}

/// Rounds f64 to an integral value per `.rni/.rzi/.rmi/.rpi`.
pub fn round_int(x: f64, m: Rnd) -> f64 {
    match m {
        Rnd::N => x.round_ties_even(),
        Rnd::Z => x.trunc(),
        Rnd::M => x.floor(),
        Rnd::P => x.ceil(),
    }
}

/// An integer source read as an exact value.
pub fn int_value(x: u64, ty: Ty) -> i128 {
    match ty {
        Ty::S8 => x as i8 as i128,
        Ty::S16 => x as i16 as i128,
        Ty::S32 => x as i32 as i128,
        Ty::S64 => x as i64 as i128,
        Ty::U8 | Ty::B8 => x as u8 as i128,
        Ty::U16 | Ty::B16 => x as u16 as i128,
        Ty::U32 | Ty::B32 => x as u32 as i128,
        _ => x as i128,
    }
}

/// Clamps an integer to a destination type's range (`.sat`, and float-to-int).
pub fn clamp_int(v: i128, ty: Ty) -> u64 {
    let (lo, hi): (i128, i128) = match ty {
        Ty::S8 => (i8::MIN as i128, i8::MAX as i128),
        Ty::S16 => (i16::MIN as i128, i16::MAX as i128),
        Ty::S32 => (i32::MIN as i128, i32::MAX as i128),
        Ty::S64 => (i64::MIN as i128, i64::MAX as i128),
        Ty::U8 | Ty::B8 => (0, u8::MAX as i128),
        Ty::U16 | Ty::B16 => (0, u16::MAX as i128),
        Ty::U32 | Ty::B32 => (0, u32::MAX as i128),
        _ => (0, u64::MAX as i128),
    };
    wrap_int(v.clamp(lo, hi), ty)
}

/// Truncates an integer to a destination type's bits (zero-extended to 64).
pub fn wrap_int(v: i128, ty: Ty) -> u64 {
    match ty.bytes() {
        1 => v as u8 as u64,
        2 => v as u16 as u64,
        4 => v as u32 as u64,
        _ => v as u64,
    }
}

/// Float source as f64 (exact for f16, bf16, f32).
pub fn float_value(x: u64, ty: Ty, ftz: bool) -> f64 {
    match ty {
        Ty::F16 => f16_to_f32(x as u16) as f64,
        Ty::BF16 => f32::from_bits((x as u32 & 0xffff) << 16) as f64,
        Ty::F32 if ftz => ftz32(f32_of(x)) as f64,
        Ty::F32 => f32_of(x) as f64,
        _ => f64_of(x),
    }
}

/// f64 (exact value) to a float type with rounding; `lo` is a residual below `v`'s
/// precision (for i64 sources), whose sign decides directed rounding ties.
pub fn to_float(v: f64, lo: f64, ty: Ty, m: Rnd, ftz: bool, sat: bool) -> u64 {
    let v = if sat { sat01_64(v) } else { v };
    match ty {
        Ty::F64 => {
            if m == Rnd::N || v.is_nan() {
                return bits64(v);
            }
            bits64(directed64(v, sign_of(lo), m))
        }
        Ty::F32 => {
            let r = round32_from(v, lo, m);
            if v.is_nan() {
                return CANONICAL_NAN32 as u64;
            }
            if ftz {
                bits32(ftz32(r))
            } else {
                bits32(r)
            }
        }
        Ty::F16 => f64_to_f16(v, m) as u64,
        Ty::BF16 => {
            // f32 first can double-round; exact enough for f32 sources, which is what
            // nvcc converts from.
            f32_to_bf16(f32_odd(v), m) as u64
        }
        _ => 0,
    }
}

/// A `cvt`'s types and modes; `cvt_lanes` runs it (too many combinations to give each
/// its own monomorphic function).
#[derive(Debug, Clone, Copy)]
pub struct CvtSpec {
    pub dst: Ty,
    pub src: Ty,
    pub rnd: Option<Rnd>,
    pub int_rnd: Option<Rnd>,
    pub ftz: bool,
    pub sat: bool,
}

/// Integer-to-integer conversions without `.sat`, the common case, as lane functions.
pub fn cvt_fast(s: &CvtSpec) -> Option<WarpFn> {
    if s.sat || s.dst.is_float() || s.src.is_float() {
        return None;
    }
    Some(match (s.dst.bytes(), s.src) {
        (8, Ty::S32) => wf!(|a, b, c, e| a as i32 as i64 as u64),
        (8, Ty::U32 | Ty::B32) => wf!(|a, b, c, e| a as u32 as u64),
        (4, Ty::S64 | Ty::U64 | Ty::B64 | Ty::U32 | Ty::S32 | Ty::B32) => {
            wf!(|a, b, c, e| a as u32 as u64)
        }
        (4, Ty::S16) => wf!(|a, b, c, e| a as i16 as i32 as u32 as u64),
        (4, Ty::U16 | Ty::B16) => wf!(|a, b, c, e| a as u16 as u64),
        (4, Ty::S8) => wf!(|a, b, c, e| a as i8 as i32 as u32 as u64),
        (4, Ty::U8 | Ty::B8) => wf!(|a, b, c, e| a as u8 as u64),
        _ => return None,
    })
}

/// The types a `cvt` spec's code names (`CvtSpec::code`), by index.
const CVT_TYPES: [Ty; 20] = [
    Ty::B8,
    Ty::B16,
    Ty::B32,
    Ty::B64,
    Ty::B128,
    Ty::U8,
    Ty::U16,
    Ty::U32,
    Ty::U64,
    Ty::S8,
    Ty::S16,
    Ty::S32,
    Ty::S64,
    Ty::F16,
    Ty::F16x2,
    Ty::BF16,
    Ty::BF16x2,
    Ty::F32,
    Ty::F64,
    Ty::Pred,
];

const RNDS: [Option<Rnd>; 5] = [None, Some(Rnd::N), Some(Rnd::Z), Some(Rnd::M), Some(Rnd::P)];

impl CvtSpec {
    /// The spec as one integer, `cvt_lane`'s second operand: compiled code passes it as
    /// an immediate.
    pub(crate) fn code(&self) -> u64 {
        let ty = |t: Ty| CVT_TYPES.iter().position(|x| *x == t).unwrap_or(0) as u64;
        let rnd = |r: Option<Rnd>| RNDS.iter().position(|x| *x == r).unwrap_or(0) as u64;
        ty(self.dst)
            | ty(self.src) << 8
            | rnd(self.rnd) << 16
            | rnd(self.int_rnd) << 24
            | (self.ftz as u64) << 32
            | (self.sat as u64) << 33
    }

    fn from_code(c: u64) -> CvtSpec {
        let ty = |k: u64| CVT_TYPES[(k & 0xff) as usize % CVT_TYPES.len()];
        let rnd = |k: u64| RNDS[(k & 0xff) as usize % RNDS.len()];
        CvtSpec {
            dst: ty(c),
            src: ty(c >> 8),
            rnd: rnd(c >> 16),
            int_rnd: rnd(c >> 24),
            ftz: c >> 32 & 1 != 0,
            sat: c >> 33 & 1 != 0,
        }
    }
}

/// One lane of `cvt_lanes`, the spec coded (`CvtSpec::code`): compiled code calls it
/// lane by lane (`jit::native`'s `N::Call`), the same conversion as the interpreter's.
/// It cannot panic (no unwinding through compiled code).
pub(crate) extern "C" fn cvt_lane(x: u64, code: u64, _: u64, _: u64) -> u64 {
    let s = CvtSpec::from_code(code);
    cvt_one(x, s.dst, s.src, s.rnd, s.int_rnd, s.ftz, s.sat)
}

pub fn cvt_lanes(s: &CvtSpec, out: &mut Lanes, a: &Lanes) {
    for (o, &x) in out.iter_mut().zip(a.iter()) {
        *o = cvt_one(x, s.dst, s.src, s.rnd, s.int_rnd, s.ftz, s.sat);
    }
}

#[inline(always)]
fn cvt_one(
    x: u64,
    dst: Ty,
    src: Ty,
    rnd: Option<Rnd>,
    int_rnd: Option<Rnd>,
    ftz: bool,
    sat: bool,
) -> u64 {
    match (dst.is_float(), src.is_float()) {
        (false, false) => {
            let v = int_value(x, src);
            if sat {
                clamp_int(v, dst)
            } else {
                wrap_int(v, dst)
            }
        }
        (false, true) => {
            // Float to integer: round per `.rni/.rzi/.rmi/.rpi` (nvcc always names one),
            // then saturate. NaN (H200): 0 from a narrow float into 32 bits or less; the
            // destination's sign bit (0x80000000, 0x8000000000000000, signed or not)
            // into 64 bits, or from f64.
            let f = float_value(x, src, ftz);
            if f.is_nan() {
                return if dst.bytes() == 8 {
                    1 << 63
                } else if src == Ty::F64 && dst.bytes() == 4 {
                    1 << 31
                } else {
                    0
                };
            }
            let r = round_int(f, int_rnd.unwrap_or(Rnd::Z));
            // 2^63 as f64, exactly.
            let i64_end = (1u64 << 63) as f64;
            let v = if (-i64_end..i64_end).contains(&r) {
                // Integral and inside i64: the same integer as `r as i128` below, without
                // the software f64-to-i128 routine (x86 has no such instruction).
                r as i64 as i128
            } else if r >= 1.8e38 {
                i128::MAX
            } else if r <= -1.8e38 {
                i128::MIN
            } else {
                r as i128
            };
            clamp_int(v, dst)
        }
        (true, false) => {
            let v = int_value(x, src);
            // i128 to f64 then the remainder: exact pair for every 64-bit integer. An
            // integer of at most 53 bits is exact in f64 and leaves +0: the same pair
            // without i128 arithmetic (software routines on x86), for the common case.
            let (hi, lo) = match i64::try_from(v) {
                Ok(small) if small.unsigned_abs() <= 1 << 53 => (small as f64, 0.0),
                _ => {
                    let hi = v as f64;
                    (hi, (v - hi as i128) as f64)
                }
            };
            let m = rnd.unwrap_or(Rnd::N);
            if dst == Ty::F64 && m != Rnd::N {
                return bits64(directed64(hi, sign_of(lo), m));
            }
            let (hi, lo) = if dst != Ty::F64 && lo != 0.0 {
                (hi + lo, (v - (hi + lo) as i128) as f64)
            } else {
                // lo is 0: hi + lo is hi, and nothing is left over.
                (hi, if dst != Ty::F64 { 0.0 } else { lo })
            };
            to_float(hi, lo, dst, m, ftz, sat)
        }
        (true, true) => {
            // bf16 to f32 is the bits moved up, NaN payload and all (H200: 0x7fff gives
            // 0x7fff0000).
            if src == Ty::BF16 && dst == Ty::F32 && !sat && !ftz && int_rnd.is_none() {
                return ((x as u32 & 0xffff) << 16) as u64;
            }
            let f = float_value(x, src, ftz);
            // f64 to f32 keeps a NaN's sign and its payload's top 22 bits, quieted
            // (H200: 0x7fffffff3b497db4 gives 0x7ffffff9).
            if src == Ty::F64 && dst == Ty::F32 && f.is_nan() && !sat {
                let sign = (x >> 32) as u32 & 0x8000_0000;
                return (sign | 0x7fc0_0000 | ((x >> 29) as u32 & 0x003f_ffff)) as u64;
            }
            if let Some(ir) = int_rnd {
                // Same-size `cvt.rni.f32.f32`: round to an integral value.
                return to_float(round_int(f, ir), 0.0, dst, Rnd::N, ftz, sat);
            }
            if dst == src && !sat && !ftz {
                return if dst == Ty::F32 && f32_of(x).is_nan() {
                    CANONICAL_NAN32 as u64
                } else {
                    x
                };
            }
            to_float(f, 0.0, dst, rnd.unwrap_or(Rnd::N), ftz, sat)
        }
    }
}

// ---- half-precision min/max and comparisons, bmsk, szext (issue 21) -------------

/// The canonical NaN of f16 and bf16 results.
const HALF_NAN: u16 = 0x7fff;

/// `.relu` on a half result whose exponent field is `exponent` (0x7c00 in f16, 0x7f80
/// in bf16): NaN (exponent all ones, mantissa not 0) to the canonical NaN, a set sign
/// bit to +0.
fn relu_half(h: u16, exponent: u16) -> u16 {
    let mantissa = !exponent & 0x7fff;
    if h & exponent == exponent && h & mantissa != 0 {
        HALF_NAN
    } else if h & 0x8000 != 0 {
        0
    } else {
        h
    }
}

/// A half's value as f32 (exact), flushed to a signed zero when `ftz` and subnormal.
fn half_value<const BF: bool, const FTZ: bool>(h: u16) -> f32 {
    if BF {
        f32::from_bits((h as u32) << 16)
    } else if FTZ && h & 0x7c00 == 0 {
        if h & 0x8000 != 0 {
            -0.0
        } else {
            0.0
        }
    } else {
        f16_to_f32(h)
    }
}

/// `min`/`max` of two halves: the operand's own bits (no rounding happens); with one
/// NaN the other operand, with two (or with `.NaN` and any) the canonical NaN; -0 is
/// less than +0, as for f32. A flushed subnormal is returned as its signed zero.
fn half_minmax1<const MAX: bool, const NAN: bool, const FTZ: bool, const BF: bool>(
    a: u16,
    b: u16,
) -> u16 {
    let (x, y) = (half_value::<BF, FTZ>(a), half_value::<BF, FTZ>(b));
    let bits = |h: u16, v: f32| {
        if !BF && FTZ && h & 0x7c00 == 0 {
            h & 0x8000
        } else {
            let _ = v;
            h
        }
    };
    match (x.is_nan(), y.is_nan()) {
        (true, true) => HALF_NAN,
        (true, false) | (false, true) if NAN => HALF_NAN,
        (true, false) => bits(b, y),
        (false, true) => bits(a, x),
        _ => {
            let r = if MAX { fmax32(x, y) } else { fmin32(x, y) };
            // Equal values (other than the signed zeros fmin/fmax order) keep `a`.
            if r.to_bits() == x.to_bits() {
                bits(a, x)
            } else {
                bits(b, y)
            }
        }
    }
}

fn half_minmax_lanes<
    const MAX: bool,
    const NAN: bool,
    const FTZ: bool,
    const BF: bool,
    const X2: bool,
>(
    o: &mut Lanes,
    a: &Lanes,
    b: &Lanes,
    _c: &Lanes,
    _e: &Lanes,
) {
    for i in 0..32 {
        let lo = half_minmax1::<MAX, NAN, FTZ, BF>(a[i] as u16, b[i] as u16) as u64;
        o[i] = if X2 {
            let hi = half_minmax1::<MAX, NAN, FTZ, BF>((a[i] >> 16) as u16, (b[i] >> 16) as u16);
            lo | (hi as u64) << 16
        } else {
            lo
        };
    }
}

/// `min`/`max` `{.ftz}{.NaN}` of `.f16`, `.f16x2`, `.bf16`, `.bf16x2`.
pub fn half_minmax(max: bool, nan: bool, ftz: bool, ty: Ty) -> Option<WarpFn> {
    macro_rules! pick {
        ($($m:literal $n:literal $f:literal $b:literal $x:literal),* $(,)?) => {
            match (max, nan, ftz, matches!(ty, Ty::BF16 | Ty::BF16x2), matches!(ty, Ty::F16x2 | Ty::BF16x2)) {
                $(($m, $n, $f, $b, $x) => Some(half_minmax_lanes::<$m, $n, $f, $b, $x> as WarpFn),)*
            }
        };
    }
    if !matches!(ty, Ty::F16 | Ty::F16x2 | Ty::BF16 | Ty::BF16x2)
        || ftz && matches!(ty, Ty::BF16 | Ty::BF16x2)
    {
        return None;
    }
    pick!(
        false false false false false, false false false false true, false false false true false, false false false true true,
        false false true false false, false false true false true, false false true true false, false false true true true,
        false true false false false, false true false false true, false true false true false, false true false true true,
        false true true false false, false true true false true, false true true true false, false true true true true,
        true false false false false, true false false false true, true false false true false, true false false true true,
        true false true false false, true false true false true, true false true true false, true false true true true,
        true true false false false, true true false false true, true true false true false, true true false true true,
        true true true false false, true true true false true, true true true true false, true true true true true,
    )
}

/// The comparisons of one half of `.f16x2`/`.bf16x2` operands (`HI` the upper half), or
/// of scalar halves with `.ftz` (which `compare` does not flush): 1 or 0 per lane.
pub fn half_compare(ty: Ty, cmp: Cmp, ftz: bool, hi: bool) -> Option<WarpFn> {
    let bf = matches!(ty, Ty::BF16 | Ty::BF16x2);
    if !matches!(ty, Ty::F16 | Ty::F16x2 | Ty::BF16 | Ty::BF16x2) || bf && ftz {
        return None;
    }
    match (bf, ftz, hi) {
        (false, false, false) => cmp_float!(|x: u64| half_value::<false, false>(x as u16), cmp),
        (false, false, true) => {
            cmp_float!(|x: u64| half_value::<false, false>((x >> 16) as u16), cmp)
        }
        (false, true, false) => cmp_float!(|x: u64| half_value::<false, true>(x as u16), cmp),
        (false, true, true) => {
            cmp_float!(|x: u64| half_value::<false, true>((x >> 16) as u16), cmp)
        }
        (true, _, false) => cmp_float!(|x: u64| half_value::<true, false>(x as u16), cmp),
        (true, _, true) => cmp_float!(|x: u64| half_value::<true, false>((x >> 16) as u16), cmp),
    }
}

/// `bmsk.mode.b32 d, a, b`: a mask of `b` ones from bit `a`, as the PTX ISA's
/// semantics say: the operands modulo 32, and under `.clamp` a position or width of 32
/// or more ends the mask at bit 31 (a position that large gives 0).
pub fn bmsk(clamp: bool) -> WarpFn {
    fn mask(a: u64, b: u64, clamp: bool) -> u64 {
        let (a, b) = (a as u32, b as u32);
        let a1 = a & 0x1f;
        let mut mask0 = u32::MAX << a1;
        let b1 = b & 0x1f;
        let sum = a1 + b1;
        let mut overflow = sum >= 32;
        if clamp {
            if a >= 32 {
                overflow = true;
                mask0 = 0;
            }
            if b >= 32 {
                overflow = true;
            }
        }
        let mask1 = if overflow {
            0
        } else if b1 == 0 {
            u32::MAX
        } else {
            u32::MAX << sum
        };
        (mask0 & !mask1) as u64
    }
    if clamp {
        wf!(|a, b, c, e| mask(a, b, true))
    } else {
        wf!(|a, b, c, e| mask(a, b, false))
    }
}

/// `szext.mode.type d, a, b`: the low `b` bits of `a`, sign- (`.s32`) or zero-
/// (`.u32`) extended, as the PTX ISA's semantics say: `b` modulo 32, a width of 0 gives
/// 0, and under `.clamp` a width of 32 or more gives `a`.
pub fn szext(clamp: bool, signed: bool) -> WarpFn {
    fn ext(a: u64, b: u64, clamp: bool, signed: bool) -> u64 {
        let (a, b) = (a as u32, b as u32);
        let b1 = b & 0x1f;
        let too_large = b >= 32 && clamp;
        let mask = if too_large { 0 } else { u32::MAX << b1 };
        let sign_pos = b1.wrapping_sub(1) & 0x1f;
        let sign = !(b1 == 0 || too_large || !signed) && (a >> sign_pos) & 1 != 0;
        ((a & !mask) | if sign { mask } else { 0 }) as u64
    }
    match (clamp, signed) {
        (true, true) => wf!(|a, b, c, e| ext(a, b, true, true)),
        (true, false) => wf!(|a, b, c, e| ext(a, b, true, false)),
        (false, true) => wf!(|a, b, c, e| ext(a, b, false, true)),
        (false, false) => wf!(|a, b, c, e| ext(a, b, false, false)),
    }
}

/// `cvt.{rna,rn,rz}[.relu][.satfinite].tf32.f32`: the f32 rounded to 10 mantissa bits
/// (ties away from zero, to even, or toward zero), the 13 bits below cleared; `.relu`
/// clamps negatives to +0; `.satfinite` turns infinities into the largest finite tf32 of
/// their sign. NaNs as the H200 converts them (corpus `mma_tf32`): `rna` keeps the NaN's
/// sign and payload, the low 13 bits cleared (a signaling NaN stays signaling);
/// `rna.satfinite` takes one tf32 unit off that (the same operation as turns an infinity
/// into the largest finite: 0x7fc00000 gives 0x7fbfe000); `rn` and `rz` give
/// 0x7fffe000.
pub fn cvt_tf32(mode: &str, relu: bool, satfinite: bool) -> WarpFn {
    fn one(x: u32, mode: u8, relu: bool, satfinite: bool) -> u32 {
        if f32::from_bits(x).is_nan() {
            return match (mode, satfinite) {
                (0, false) => x & !0x1fff,
                (0, true) => (x & !0x1fff) - 0x2000,
                _ => 0x7fff_e000,
            };
        }
        let r = match mode {
            0 => x.wrapping_add(0x1000),
            1 => x.wrapping_add(0xfff + ((x >> 13) & 1)),
            _ => x,
        } & !0x1fff;
        // An infinity keeps its (zero) low bits through every mode.
        let r = if f32::from_bits(x).is_infinite() {
            x
        } else {
            r
        };
        let r = if satfinite && r & 0x7fff_ffff == 0x7f80_0000 {
            (r & 0x8000_0000) | 0x7f7f_e000
        } else {
            r
        };
        if relu && r & 0x8000_0000 != 0 {
            0
        } else {
            r
        }
    }
    macro_rules! f {
        ($mode:expr, $relu:expr, $sat:expr) => {
            |o: &mut Lanes, a: &Lanes, _: &Lanes, _: &Lanes, _: &Lanes| {
                for (o, a) in o.iter_mut().zip(a) {
                    *o = one(*a as u32, $mode, $relu, $sat) as u64;
                }
            }
        };
    }
    match (mode, relu, satfinite) {
        ("rna", _, false) => f!(0, false, false),
        ("rna", _, true) => f!(0, false, true),
        ("rn", false, false) => f!(1, false, false),
        ("rn", false, true) => f!(1, false, true),
        ("rn", true, false) => f!(1, true, false),
        ("rn", true, true) => f!(1, true, true),
        (_, false, false) => f!(2, false, false),
        (_, false, true) => f!(2, false, true),
        (_, true, false) => f!(2, true, false),
        (_, true, true) => f!(2, true, true),
    }
}

/// The FP8 formats of sm_89 and sm_90's `cvt` (`.e4m3x2`, `.e5m2x2`): E4M3 as OCP's
/// "FN" variant (no infinities; S.1111.111 the one NaN), E5M2 as IEEE's layout (f16's
/// upper byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fp8 {
    E4M3,
    E5M2,
}

impl Fp8 {
    fn mantissa_bits(self) -> i32 {
        match self {
            Fp8::E4M3 => 3,
            Fp8::E5M2 => 2,
        }
    }
    fn bias(self) -> i32 {
        match self {
            Fp8::E4M3 => 7,
            Fp8::E5M2 => 15,
        }
    }
    fn max_finite(self) -> u8 {
        match self {
            Fp8::E4M3 => 0x7e,
            Fp8::E5M2 => 0x7b,
        }
    }

    /// `x` rounded to nearest even, saturating to the largest finite (`.satfinite`,
    /// which sm_90 requires: infinities too); `.relu` takes negatives (and -0) to +0.
    fn encode(self, x: f64, relu: bool) -> u8 {
        if x.is_nan() {
            return 0x7f;
        }
        let sign = if x.is_sign_negative() { 0x80 } else { 0 };
        if relu && sign != 0 {
            return 0;
        }
        let a = x.abs();
        if a == 0.0 {
            return sign;
        }
        if a.is_infinite() {
            return sign | self.max_finite();
        }
        let (m, emin) = (self.mantissa_bits(), 1 - self.bias());
        // The value's binary exponent (f64's own field: every f32 and f16 is normal in
        // f64), no lower than the format's least normal one, below which the quantum
        // stays that of the subnormals.
        let e = (((a.to_bits() >> 52) & 0x7ff) as i32 - 1023).max(emin);
        let r = (a * 2f64.powi(m - e)).round_ties_even();
        // Mantissa and exponent in one: r's implicit leading bit adds one to the
        // exponent field, and a carry out of the mantissa lands there as rounding up
        // should.
        let encoded = (((e - emin) as f64) * 2f64.powi(m) + r).min(255.0) as u32;
        if encoded > self.max_finite() as u32 {
            sign | self.max_finite()
        } else {
            sign | encoded as u8
        }
    }

    /// The f16 holding `x` exactly (every FP8 value is one); every NaN, of either sign
    /// and any payload, as f16's canonical 0x7fff (as the H200 converts them: corpus
    /// `cvt_fp8`), E5M2's infinities as f16's.
    fn to_f16(self, x: u8, relu: bool) -> u16 {
        let h = match self {
            Fp8::E5M2 if x & 0x7f > 0x7c => 0x7fff,
            Fp8::E5M2 => (x as u16) << 8,
            Fp8::E4M3 if x & 0x7f == 0x7f => 0x7fff,
            Fp8::E4M3 => {
                let (e, man) = (((x >> 3) & 0xf) as i32, (x & 7) as f64);
                let v = if e == 0 {
                    man * 2f64.powi(-9)
                } else {
                    (8.0 + man) * 2f64.powi(e - 10)
                };
                f64_to_f16(v, Rnd::N) | (((x & 0x80) as u16) << 8)
            }
        };
        if relu && h & 0x8000 != 0 && h & 0x7fff <= 0x7c00 {
            0
        } else if relu && h & 0x7fff > 0x7c00 {
            0x7fff
        } else {
            h
        }
    }
}

/// An FP8 value, exactly (the tensor cores' operands: `mma`, `wgmma`); NaN for its NaNs,
/// E5M2's infinities as infinities.
pub fn fp8_value(f: Fp8, x: u8) -> f64 {
    f16_to_f32(f.to_f16(x, false)) as f64
}

/// `cvt.rn.satfinite[.relu].{e4m3x2,e5m2x2}.f32 d, a, b`: a into the upper byte.
pub fn cvt_f32x2_to_fp8x2(f: Fp8, relu: bool) -> WarpFn {
    macro_rules! w {
        ($f:expr, $relu:expr) => {
            wf!(
                |a, b, c, e| (($f.encode(f32_of(a) as f64, $relu) as u64) << 8)
                    | $f.encode(f32_of(b) as f64, $relu) as u64
            )
        };
    }
    match (f, relu) {
        (Fp8::E4M3, false) => w!(Fp8::E4M3, false),
        (Fp8::E4M3, true) => w!(Fp8::E4M3, true),
        (Fp8::E5M2, false) => w!(Fp8::E5M2, false),
        (Fp8::E5M2, true) => w!(Fp8::E5M2, true),
    }
}

/// `cvt.rn.satfinite[.relu].{e4m3x2,e5m2x2}.f16x2 d, a`: each half to a byte, in place.
pub fn cvt_f16x2_to_fp8x2(f: Fp8, relu: bool) -> WarpFn {
    macro_rules! w {
        ($f:expr, $relu:expr) => {
            wf!(
                |a, b, c, e| (($f.encode(f16_to_f32((a >> 16) as u16) as f64, $relu) as u64) << 8)
                    | $f.encode(f16_to_f32(a as u16) as f64, $relu) as u64
            )
        };
    }
    match (f, relu) {
        (Fp8::E4M3, false) => w!(Fp8::E4M3, false),
        (Fp8::E4M3, true) => w!(Fp8::E4M3, true),
        (Fp8::E5M2, false) => w!(Fp8::E5M2, false),
        (Fp8::E5M2, true) => w!(Fp8::E5M2, true),
    }
}

/// `cvt.rn[.relu].f16x2.{e4m3x2,e5m2x2} d, a`: each byte to a half, in place.
pub fn cvt_fp8x2_to_f16x2(f: Fp8, relu: bool) -> WarpFn {
    macro_rules! w {
        ($f:expr, $relu:expr) => {
            wf!(
                |a, b, c, e| (($f.to_f16((a >> 8) as u8, $relu) as u64) << 16)
                    | $f.to_f16(a as u8, $relu) as u64
            )
        };
    }
    match (f, relu) {
        (Fp8::E4M3, false) => w!(Fp8::E4M3, false),
        (Fp8::E4M3, true) => w!(Fp8::E4M3, true),
        (Fp8::E5M2, false) => w!(Fp8::E5M2, false),
        (Fp8::E5M2, true) => w!(Fp8::E5M2, true),
    }
}

// ---- sm_90 forms (issue 21): xorsign.abs, saturated halves, relu conversions, half atomics

/// `min`/`max` `{.ftz}{.NaN}.xorsign.abs` of `.f32` (sm_86+), `.f16`, `.f16x2`, `.bf16` and
/// `.bf16x2`: the ISA's semantics: the sign is the XOR of the operands' signs (taken
/// before `.abs`), the magnitude the min/max of the absolute values, a NaN result stays the
/// (canonical) NaN without the sign.
pub fn xorsign_minmax(max: bool, nan: bool, ftz: bool, ty: Ty) -> Option<WarpFn> {
    if ty == Ty::F32 {
        return Some(match (max, nan, ftz) {
            (false, false, false) => xorsign_f32_lanes::<false, false, false>,
            (false, false, true) => xorsign_f32_lanes::<false, false, true>,
            (false, true, false) => xorsign_f32_lanes::<false, true, false>,
            (false, true, true) => xorsign_f32_lanes::<false, true, true>,
            (true, false, false) => xorsign_f32_lanes::<true, false, false>,
            (true, false, true) => xorsign_f32_lanes::<true, false, true>,
            (true, true, false) => xorsign_f32_lanes::<true, true, false>,
            (true, true, true) => xorsign_f32_lanes::<true, true, true>,
        });
    }
    macro_rules! pick {
        ($($m:literal $n:literal $f:literal $b:literal $x:literal),* $(,)?) => {
            match (max, nan, ftz, matches!(ty, Ty::BF16 | Ty::BF16x2), matches!(ty, Ty::F16x2 | Ty::BF16x2)) {
                $(($m, $n, $f, $b, $x) => Some(xorsign_half_lanes::<$m, $n, $f, $b, $x> as WarpFn),)*
                _ => None,
            }
        };
    }
    if !matches!(ty, Ty::F16 | Ty::F16x2 | Ty::BF16 | Ty::BF16x2) {
        return None;
    }
    // bf16 has no `.ftz` (the pick leaves those out).
    pick!(
        false false false false false, false false false false true, false false false true false, false false false true true,
        false false true false false, false false true false true,
        false true false false false, false true false false true, false true false true false, false true false true true,
        false true true false false, false true true false true,
        true false false false false, true false false false true, true false false true false, true false false true true,
        true false true false false, true false true false true,
        true true false false false, true true false false true, true true false true false, true true false true true,
        true true true false false, true true true false true,
    )
}

fn xorsign_f32_lanes<const MAX: bool, const NAN: bool, const FTZ: bool>(
    o: &mut Lanes,
    a: &Lanes,
    b: &Lanes,
    _c: &Lanes,
    _e: &Lanes,
) {
    for i in 0..32 {
        let sign = (a[i] ^ b[i]) as u32 & 0x8000_0000;
        let (mut x, mut y) = (f32_of(a[i]), f32_of(b[i]));
        if FTZ {
            (x, y) = (ftz32(x), ftz32(y));
        }
        let (x, y) = (x.abs(), y.abs());
        let r = if NAN && (x.is_nan() || y.is_nan()) {
            f32::NAN
        } else if MAX {
            fmax32(x, y)
        } else {
            fmin32(x, y)
        };
        o[i] = if r.is_nan() {
            bits32(r)
        } else {
            (r.to_bits() | sign) as u64
        };
    }
}

fn xorsign_half_lanes<
    const MAX: bool,
    const NAN: bool,
    const FTZ: bool,
    const BF: bool,
    const X2: bool,
>(
    o: &mut Lanes,
    a: &Lanes,
    b: &Lanes,
    _c: &Lanes,
    _e: &Lanes,
) {
    let one = |x: u16, y: u16| {
        let r = half_minmax1::<MAX, NAN, FTZ, BF>(x & 0x7fff, y & 0x7fff);
        if r == HALF_NAN {
            r
        } else {
            r | (x ^ y) & 0x8000
        }
    };
    for i in 0..32 {
        let lo = one(a[i] as u16, b[i] as u16) as u64;
        o[i] = if X2 {
            lo | (one((a[i] >> 16) as u16, (b[i] >> 16) as u16) as u64) << 16
        } else {
            lo
        };
    }
}

/// `.sat` of an f16 result: NaN and everything not above +0 (-0 included, as f32's
/// `.sat` on the H200) to +0, above 1.0 to 1.0.
fn sat_f16(h: u16) -> u16 {
    if h & 0x7fff > 0x7c00 || h & 0x8000 != 0 {
        0
    } else {
        h.min(0x3c00)
    }
}

/// A subnormal f16 as a zero of its sign (`.ftz`).
fn ftz_f16(h: u16) -> u16 {
    if h & 0x7c00 == 0 {
        h & 0x8000
    } else {
        h
    }
}

fn half_ftz_sat_lanes<const OP: u8, const FTZ: bool, const SAT: bool, const X2: bool>(
    o: &mut Lanes,
    a: &Lanes,
    b: &Lanes,
    c: &Lanes,
    _e: &Lanes,
) {
    let one = |a: u16, b: u16, c: u16| {
        let v = |h: u16| f16_to_f32(if FTZ { ftz_f16(h) } else { h }) as f64;
        let (x, y, z) = (v(a), v(b), v(c));
        // Products and sums of f16s are exact in f64: one rounding.
        let r = f64_to_f16(
            match OP {
                0 => x + y,
                1 => x - y,
                2 => x * y,
                _ => x * y + z,
            },
            Rnd::N,
        );
        let r = if FTZ { ftz_f16(r) } else { r };
        match (SAT, OP) {
            (true, _) => sat_f16(r),
            (false, 4) => relu_half(r, 0x7c00),
            _ => r,
        }
    };
    for i in 0..32 {
        let lo = one(a[i] as u16, b[i] as u16, c[i] as u16) as u64;
        o[i] = if X2 {
            let hi = one(
                (a[i] >> 16) as u16,
                (b[i] >> 16) as u16,
                (c[i] >> 16) as u16,
            );
            lo | (hi as u64) << 16
        } else {
            lo
        };
    }
}

/// `{add,sub,mul,fma}.rn{.ftz}{.sat}.{f16,f16x2}` and `fma.rn{.ftz}.relu` (bf16 has
/// neither `.ftz` nor `.sat`): `.ftz` flushes subnormal inputs and results to zeros of
/// their sign; `.sat` clamps to [0, 1] (NaN to +0).
pub fn half_ftz_sat_op(op: &str, ty: Ty, ftz: bool, sat: bool) -> Option<WarpFn> {
    macro_rules! pick {
        ($($o:literal $f:literal $s:literal $x:literal),* $(,)?) => {
            match (op, ftz, sat, ty == Ty::F16x2) {
                $((name, $f, $s, $x) if OPS[$o] == name => {
                    Some(half_ftz_sat_lanes::<$o, $f, $s, $x> as WarpFn)
                })*
                _ => None,
            }
        };
    }
    const OPS: [&str; 5] = ["add", "sub", "mul", "fma", "fma.relu"];
    if !matches!(ty, Ty::F16 | Ty::F16x2) || op == "fma.relu" && sat {
        return None;
    }
    pick!(
        0 false true false, 0 false true true, 0 true false false, 0 true false true, 0 true true false, 0 true true true,
        1 false true false, 1 false true true, 1 true false false, 1 true false true, 1 true true false, 1 true true true,
        2 false true false, 2 false true true, 2 true false false, 2 true false true, 2 true true false, 2 true true true,
        3 false true false, 3 false true true, 3 true false false, 3 true false true, 3 true true false, 3 true true true,
        4 true false false, 4 true false true,
    )
}

/// sm_90's `add.{u16x2,s16x2}` (each half wrapping), `min`/`max.{u16x2,s16x2}` per half,
/// and `min`/`max.relu` of `.s16x2` and `.s32` (the result, if negative, is 0).
pub fn packed_int_op(op: &str, ty: &str, relu: bool) -> Option<WarpFn> {
    Some(match (op, ty, relu) {
        ("add", "u16x2" | "s16x2", false) => wf!(|a, b, c, e| ((a as u16).wrapping_add(b as u16)
            as u64)
            | ((((a >> 16) as u16).wrapping_add((b >> 16) as u16) as u64) << 16)),
        ("min", "u16x2", false) => {
            wf!(|a, b, c, e| ((a as u16).min(b as u16) as u64)
                | (((a >> 16) as u16).min((b >> 16) as u16) as u64) << 16)
        }
        ("max", "u16x2", false) => {
            wf!(|a, b, c, e| ((a as u16).max(b as u16) as u64)
                | (((a >> 16) as u16).max((b >> 16) as u16) as u64) << 16)
        }
        ("min", "s16x2", false) => {
            wf!(|a, b, c, e| ((a as i16).min(b as i16) as u16 as u64)
                | (((a >> 16) as i16).min((b >> 16) as i16) as u16 as u64) << 16)
        }
        ("max", "s16x2", false) => {
            wf!(|a, b, c, e| ((a as i16).max(b as i16) as u16 as u64)
                | (((a >> 16) as i16).max((b >> 16) as i16) as u16 as u64) << 16)
        }
        ("min", "s16x2", true) => {
            wf!(|a, b, c, e| ((a as i16).min(b as i16).max(0) as u16 as u64)
                | (((a >> 16) as i16).min((b >> 16) as i16).max(0) as u16 as u64) << 16)
        }
        ("max", "s16x2", true) => {
            wf!(|a, b, c, e| ((a as i16).max(b as i16).max(0) as u16 as u64)
                | (((a >> 16) as i16).max((b >> 16) as i16).max(0) as u16 as u64) << 16)
        }
        ("min", "s32", true) => wf!(|a, b, c, e| (a as i32).min(b as i32).max(0) as u32 as u64),
        ("max", "s32", true) => wf!(|a, b, c, e| (a as i32).max(b as i32).max(0) as u32 as u64),
        _ => return None,
    })
}

/// One f32 to f16 or bf16 rounded to nearest (`RZ`: toward zero); `.satfinite` makes
/// infinities (and what rounds to them) the largest finite value of their sign, a NaN
/// stays NaN; `.relu` makes negatives +0 and NaN the canonical NaN.
fn half_of_f32<const BF: bool, const RZ: bool, const RELU: bool, const SATF: bool>(x: u64) -> u16 {
    let f = f32_of(x);
    let mode = if RZ { Rnd::Z } else { Rnd::N };
    let exponent = if BF { 0x7f80 } else { 0x7c00 };
    let mut h = if BF {
        f32_to_bf16(f, mode)
    } else {
        f64_to_f16(f as f64, mode)
    };
    if SATF && h & 0x7fff == exponent {
        h = (h & 0x8000) | (exponent - 1);
    }
    if RELU {
        h = relu_half(h, exponent);
    }
    h
}

fn cvt_half_lanes<
    const BF: bool,
    const RZ: bool,
    const RELU: bool,
    const SATF: bool,
    const X2: bool,
>(
    o: &mut Lanes,
    a: &Lanes,
    b: &Lanes,
    _c: &Lanes,
    _e: &Lanes,
) {
    for i in 0..32 {
        o[i] = if X2 {
            // `cvt.f16x2.f32 d, a, b`: a into the upper half.
            (half_of_f32::<BF, RZ, RELU, SATF>(a[i]) as u64) << 16
                | half_of_f32::<BF, RZ, RELU, SATF>(b[i]) as u64
        } else {
            half_of_f32::<BF, RZ, RELU, SATF>(a[i]) as u64
        };
    }
}

/// `cvt.{rn,rz}{.relu}{.satfinite}.{f16,bf16,f16x2,bf16x2}.f32`.
pub fn cvt_half_from_f32(bf: bool, rz: bool, relu: bool, satfinite: bool, x2: bool) -> WarpFn {
    macro_rules! pick {
        ($($b:literal $z:literal $r:literal $s:literal $x:literal),* $(,)?) => {
            match (bf, rz, relu, satfinite, x2) {
                $(($b, $z, $r, $s, $x) => cvt_half_lanes::<$b, $z, $r, $s, $x> as WarpFn,)*
            }
        };
    }
    pick!(
        false false false false false, false false false false true, false false false true false, false false false true true,
        false false true false false, false false true false true, false false true true false, false false true true true,
        false true false false false, false true false false true, false true false true false, false true false true true,
        false true true false false, false true true false true, false true true true false, false true true true true,
        true false false false false, true false false false true, true false false true false, true false false true true,
        true false true false false, true false true false true, true false true true false, true false true true true,
        true true false false false, true true false false true, true true false true false, true true false true true,
        true true true false false, true true true false true, true true true true false, true true true true true,
    )
}

/// `atom`/`red` `.add.noftz` of one f16 or bf16: rounded to nearest, subnormals kept; a
/// NaN result is the canonical NaN.
pub fn half_add_noftz(a: u16, b: u16, bf: bool) -> u16 {
    if bf {
        let v = |h: u16| f32::from_bits((h as u32) << 16) as f64;
        // Rounded to odd first, so the rounding to bf16 is the exact sum's.
        let (s, lo) = two_sum64(v(a), v(b));
        f32_to_bf16(f32_odd2(s, lo), Rnd::N)
    } else {
        // Two f16s sum exactly in f64.
        f64_to_f16(f16_to_f32(a) as f64 + f16_to_f32(b) as f64, Rnd::N)
    }
}

/// `atom`/`red` `.min`/`.max` `.noftz` of one f16 or bf16 (vector atomics): `min`/`max`'s
/// own rule (a NaN operand gives the other operand).
pub fn half_minmax_noftz(max: bool, a: u16, b: u16, bf: bool) -> u16 {
    match (max, bf) {
        (false, false) => half_minmax1::<false, false, false, false>(a, b),
        (false, true) => half_minmax1::<false, false, false, true>(a, b),
        (true, false) => half_minmax1::<true, false, false, false>(a, b),
        (true, true) => half_minmax1::<true, false, false, true>(a, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every 16th of the 163,858 (input, result) pairs of `tanh.approx.f32` that
    /// ci/explore/tanh_table.c recorded on the H200, and the last 17 (0, -0, the smallest
    /// normal, 16 to 128), bit for bit (runs/2026-12-03-h200-session19/call2 holds them
    /// all; the model matched every one).
    #[test]
    fn tanh_approx_is_the_h200s() {
        let pairs = include_bytes!("../tests/data/tanh_approx_h200.bin");
        let mut wrong = Vec::new();
        for p in pairs.chunks_exact(8) {
            let x = u32::from_le_bytes([p[0], p[1], p[2], p[3]]);
            let y = u32::from_le_bytes([p[4], p[5], p[6], p[7]]);
            let got = super::tanh_approx_f32(f32::from_bits(x)).to_bits();
            if got != y {
                wrong.push((x, y, got));
            }
        }
        assert_eq!(pairs.len() / 8, 10258);
        assert!(
            wrong.is_empty(),
            "{} of {}: {:x?}",
            wrong.len(),
            pairs.len() / 8,
            &wrong[..wrong.len().min(5)]
        );
    }

    /// Values the OCP 8-bit floating point specification tabulates: the largest finite,
    /// the least subnormal and normal, and rounding at their edges.
    #[test]
    fn fp8_encodings_at_the_formats_edges() {
        let e4 = |x: f64| Fp8::E4M3.encode(x, false);
        let e5 = |x: f64| Fp8::E5M2.encode(x, false);
        assert_eq!((e4(1.0), e5(1.0)), (0x38, 0x3c));
        assert_eq!((e4(448.0), e5(57344.0)), (0x7e, 0x7b));
        // Past the largest finite (and infinities) saturate, with the sign.
        assert_eq!(
            (e4(464.0), e4(1e9), e4(f64::NEG_INFINITY)),
            (0x7e, 0x7e, 0xfe)
        );
        assert_eq!((e5(61440.0), e5(f64::INFINITY)), (0x7b, 0x7b));
        // Least subnormal 2^-9 (E4M3) and 2^-16 (E5M2); half of it ties to even (0).
        assert_eq!((e4(2f64.powi(-9)), e4(2f64.powi(-10))), (0x01, 0x00));
        assert_eq!((e4(3.0 * 2f64.powi(-10)), e5(2f64.powi(-16))), (0x02, 0x01));
        // The least normal (2^-6, 2^-14) from the largest subnormal rounding up.
        assert_eq!((e4(2f64.powi(-6)), e4(7.75 * 2f64.powi(-9))), (0x08, 0x08));
        assert_eq!((e4(-0.0), Fp8::E4M3.encode(-2.0, true)), (0x80, 0x00));
        assert_eq!((e4(f64::NAN), e5(f64::NAN)), (0x7f, 0x7f));
        assert_eq!(
            (Fp8::E5M2.to_f16(0xfe, false), Fp8::E5M2.to_f16(0xfc, false)),
            (0x7fff, 0xfc00)
        );
        // Back to f16, exactly.
        for x in 0..=255u8 {
            for f in [Fp8::E4M3, Fp8::E5M2] {
                let h = f.to_f16(x, false);
                if f16_to_f32(h).is_finite() && !(f == Fp8::E4M3 && x & 0x7f == 0x7f) {
                    assert_eq!(f.encode(f16_to_f32(h) as f64, false), x, "{f:?} {x:#x}");
                }
            }
        }
    }
}
