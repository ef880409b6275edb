//! Warp-level matrix instructions: `mma`, `wmma.*`, `ldmatrix`, `stmatrix`, `movmatrix`.
//! Each reads every lane's registers (a lane's fragment is part of the warp's matrix) and
//! writes the active lanes' results; memory is reached per element through `locate`, as
//! any access. The layouts and arithmetic are `crate::mma`'s.
//!
//! And the warpgroup's `wgmma.mma_async` (layouts and arithmetic: `crate::wgmma`): a
//! warp that issues it waits there, as at a barrier, until the four warps of its
//! warpgroup have all issued the same one (`arrive_wgmma`, `release_warpgroups`); then
//! each warp's quarter of D is computed and written, and they go on. So the instruction
//! completes at issue: `wgmma.commit_group` and `wgmma.wait_group` have nothing left to
//! wait for, and D read before `wait_group` (undefined on a GPU) already holds the
//! result. A warpgroup that cannot meet there (a warp exited, waits at a barrier, or
//! issued another `wgmma`) is an error naming its warps, not a hang.

use super::{set_pcs, write, BlockCtx, Fault, Warp, FULL};
use crate::decode::{Dst, MmaOp, Op, Space, Src, WgmmaOp, WmmaMem};
use crate::math::Lanes;
use crate::mma::{self, Role};
use crate::wgmma::{self as wg, MatrixDescriptor};
use crate::{Access, FaultKind};

/// `Warp::wait_bar`'s mark of a lane waiting at a `wgmma.mma_async` (barriers are 0-15).
pub(super) const WGMMA_WAIT: u8 = 16;

impl BlockCtx<'_> {
    fn lanes_of(&self, w: &Warp, srcs: &[Src]) -> Vec<Lanes> {
        srcs.iter()
            .map(|s| {
                let mut v = [0u64; 32];
                self.fetch(w, *s, &mut v);
                v
            })
            .collect()
    }

    fn write_all(w: &mut Warp, dsts: &[Dst], vals: &[Lanes], emask: u32) {
        for (d, v) in dsts.iter().zip(vals) {
            write(w, *d, v, emask);
        }
    }

    /// `size` bytes at `addr` for `lane`.
    #[allow(clippy::too_many_arguments)]
    fn read_elem(
        &mut self,
        w: &mut Warp,
        space: Space,
        addr: u64,
        size: u64,
        lane: u32,
        pc: u32,
    ) -> Result<u64, Fault> {
        let loc = self.locate(w, space, addr, size, Access::Read, lane, pc)?;
        Ok(self.read(&loc, size))
    }

    #[allow(clippy::too_many_arguments)]
    fn write_elem(
        &mut self,
        w: &mut Warp,
        space: Space,
        addr: u64,
        size: u64,
        v: u64,
        lane: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let loc = self.locate(w, space, addr, size, Access::Write, lane, pc)?;
        if let super::Loc::Param(_) = loc {
            let detail = "kernel parameters are read-only".to_string();
            return Err(self.fault(
                w,
                lane,
                pc,
                crate::FaultKind::IllegalAddress,
                Some(addr),
                detail,
            ));
        }
        self.write_mem(&loc, size, v);
        Ok(())
    }

    pub(super) fn mma(&mut self, w: &mut Warp, op: &MmaOp, emask: u32) {
        let (a, b, c) = (
            self.lanes_of(w, &op.a),
            self.lanes_of(w, &op.b),
            self.lanes_of(w, &op.c),
        );
        let meta = op.meta.map(|m| {
            let mut v = [0u64; 32];
            self.fetch(w, m, &mut v);
            v
        });
        let d = mma::mma_sparse(&op.spec, &a, &b, &c, meta.as_ref());
        Self::write_all(w, &op.d, &d, emask);
    }

    /// The bit offset of element (r, c) of a wmma matrix in memory (sub-byte elements
    /// pack from a byte's low bits: element 2i of s4 in bits 0-3 of byte i).
    fn wmma_offset(m: &WmmaMem<impl Copy>, stride: u64, r: u32, c: u32) -> u64 {
        let (r, c) = (r as u64, c as u64);
        let at = if m.row_major {
            r * stride + c
        } else {
            c * stride + r
        };
        at.wrapping_mul(m.frag.elem.bits() as u64)
    }

    fn wmma_stride(&self, w: &Warp, m: &WmmaMem<impl Copy>) -> Lanes {
        match m.stride {
            Some(s) => {
                let mut v = [0u64; 32];
                self.fetch(w, s, &mut v);
                v.map(|x| x as u32 as u64)
            }
            None => {
                let (rows, cols) = m.frag.dims();
                [if m.row_major { cols } else { rows } as u64; 32]
            }
        }
    }

    pub(super) fn wmma_load(
        &mut self,
        w: &mut Warp,
        m: &WmmaMem<Dst>,
        emask: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let mut base = [0u64; 32];
        self.fetch(w, m.addr, &mut base);
        let stride = self.wmma_stride(w, m);
        let f = m.frag;
        let bits = f.elem.bits() as u64;
        // Sub-byte elements: the byte holding each, then its bits.
        let size = bits.div_ceil(8);
        let mut out = vec![[0u64; 32]; f.regs()];
        for lane in 0..32 {
            if emask >> lane & 1 == 0 {
                continue;
            }
            let at = base[lane].wrapping_add(m.off as u64);
            for i in 0..f.per_lane() {
                let (r, c) = f.coord(lane, i);
                let bit = Self::wmma_offset(m, stride[lane], r, c);
                let a = at.wrapping_add(bit / 8);
                let v = self.read_elem(w, m.space, a, size, lane as u32, pc)?;
                let v = if bits < 8 {
                    (v >> (bit % 8)) & ((1 << bits) - 1)
                } else {
                    v
                };
                mma::set_element(&f, &mut out, lane, i, v);
            }
        }
        Self::write_all(w, &m.regs, &out, emask);
        Ok(())
    }

    pub(super) fn wmma_store(
        &mut self,
        w: &mut Warp,
        m: &WmmaMem<Src>,
        emask: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let mut base = [0u64; 32];
        self.fetch(w, m.addr, &mut base);
        let stride = self.wmma_stride(w, m);
        let f = m.frag;
        debug_assert_eq!(f.role, Role::C);
        let size = f.elem.bits() as u64 / 8;
        let vals = self.lanes_of(w, &m.regs);
        for lane in 0..32 {
            if emask >> lane & 1 == 0 {
                continue;
            }
            let at = base[lane].wrapping_add(m.off as u64);
            for i in 0..f.per_lane() {
                let (r, c) = f.coord(lane, i);
                let a = at.wrapping_add(Self::wmma_offset(m, stride[lane], r, c) / 8);
                let v = mma::element(&f, &vals, lane, i);
                self.write_elem(w, m.space, a, size, v, lane as u32, pc)?;
            }
        }
        Ok(())
    }

    /// Where `lane`'s halves of matrix `j` lie: the rows' addresses come from lanes 8j..8j+7;
    /// a lane holds row lane/4, columns 2(lane%4) and the next (transposed: those rows of
    /// column lane/4).
    fn matrix_addrs(rows: &Lanes, off: i64, j: usize, lane: usize, trans: bool) -> [u64; 2] {
        let row = |r: usize| rows[8 * j + r].wrapping_add(off as u64);
        let (g, t) = (lane / 4, lane % 4);
        if trans {
            [row(2 * t) + 2 * g as u64, row(2 * t + 1) + 2 * g as u64]
        } else {
            [row(g) + 4 * t as u64, row(g) + 4 * t as u64 + 2]
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn ldmatrix(
        &mut self,
        w: &mut Warp,
        n: u8,
        trans: bool,
        space: Space,
        d: &[Dst; 4],
        addr: Src,
        off: i64,
        emask: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let mut rows = [0u64; 32];
        self.fetch(w, addr, &mut rows);
        let mut out = [[0u64; 32]; 4];
        for (j, o) in out.iter_mut().enumerate().take(n as usize) {
            for (lane, o) in o.iter_mut().enumerate() {
                if emask >> lane & 1 == 0 {
                    continue;
                }
                let [lo, hi] = Self::matrix_addrs(&rows, off, j, lane, trans);
                // The row's owner (its address) is the lane a fault names.
                let owner = (8 * j + if trans { 2 * (lane % 4) } else { lane / 4 }) as u32;
                let x = self.read_elem(w, space, lo, 2, owner, pc)?;
                let y = self.read_elem(w, space, hi, 2, owner, pc)?;
                *o = x | y << 16;
            }
        }
        for j in 0..n as usize {
            write(w, d[j], &out[j], emask);
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn stmatrix(
        &mut self,
        w: &mut Warp,
        n: u8,
        trans: bool,
        space: Space,
        v: &[Src; 4],
        addr: Src,
        off: i64,
        emask: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let mut rows = [0u64; 32];
        self.fetch(w, addr, &mut rows);
        let vals = self.lanes_of(w, &v[..n as usize]);
        for (j, val) in vals.iter().enumerate() {
            for lane in 0..32 {
                if emask >> lane & 1 == 0 {
                    continue;
                }
                let [lo, hi] = Self::matrix_addrs(&rows, off, j, lane, trans);
                let owner = (8 * j + if trans { 2 * (lane % 4) } else { lane / 4 }) as u32;
                self.write_elem(w, space, lo, 2, val[lane] & 0xffff, owner, pc)?;
                self.write_elem(w, space, hi, 2, val[lane] >> 16 & 0xffff, owner, pc)?;
            }
        }
        Ok(())
    }

    pub(super) fn movmatrix(&self, w: &mut Warp, d: Dst, a: Src, emask: u32) {
        let mut v = [0u64; 32];
        self.fetch(w, a, &mut v);
        // Element (r, c) is half c%2 of lane 4r + c/2's register.
        let at = |r: usize, c: usize| v[4 * r + c / 2] >> (16 * (c % 2)) & 0xffff;
        let mut out = [0u64; 32];
        for (lane, o) in out.iter_mut().enumerate() {
            let (g, t) = (lane / 4, lane % 4);
            // The transpose's (g, 2t) and (g, 2t+1): the original's (2t, g), (2t+1, g).
            *o = at(2 * t, g) | at(2 * t + 1, g) << 16;
        }
        write(w, d, &out, emask);
    }

    /// A warp issues `wgmma.mma_async` (`emask` of the `mask` that reached it): every
    /// thread of its warpgroup must (`.sync.aligned`); it waits for the other warps.
    pub(super) fn arrive_wgmma(
        &mut self,
        w: &mut Warp,
        nwarps: u32,
        mask: u32,
        emask: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let g = w.id / 4;
        let lane = emask.trailing_zeros();
        let fail = |ctx: &Self, w: &Warp, detail: String| {
            Err(ctx.fault(w, lane, pc, FaultKind::IllegalInstruction, None, detail))
        };
        if 4 * g + 3 >= nwarps || self.nthreads < 128 * (g + 1) {
            let detail = format!(
                "wgmma.mma_async needs the 128 threads of warpgroup {g} (warps {}-{}), the \
                 block has {} threads",
                4 * g,
                4 * g + 3,
                self.nthreads
            );
            return fail(self, w, detail);
        }
        if w.valid != FULL || w.exited != 0 || emask != mask || mask != w.valid {
            let detail = format!(
                "wgmma.mma_async is .aligned: every thread of the warpgroup issues it \
                 together, but in warp {} only lanes {:#010x} did",
                w.id, emask
            );
            return fail(self, w, detail);
        }
        w.waiting |= emask;
        w.wait_bar = [WGMMA_WAIT; 32];
        Ok(())
    }

    /// Completes every `wgmma.mma_async` whose warpgroup's four warps all wait at it;
    /// true when one did. A warpgroup that can no longer meet is an error.
    pub(super) fn release_warpgroups(&mut self, warps: &mut [Warp]) -> Result<bool, Fault> {
        // Most kernels have no wgmma: one pass over the warps, nothing allocated.
        if !warps.iter().any(|w| wgmma_pc(w).is_some()) {
            return Ok(false);
        }
        let prog = self.prog;
        let mut released = false;
        for g in 0..warps.len() / 4 {
            let group = &mut warps[4 * g..4 * g + 4];
            let at: [Option<u32>; 4] = std::array::from_fn(|k| wgmma_pc(&group[k]));
            let Some(first) = at.iter().flatten().next().copied() else {
                continue;
            };
            let line = |pc: u32| prog.info.get(pc as usize).map_or(0, |i| i.line);
            if let Some(k) = group.iter().position(|w| w.exited != 0) {
                let detail = format!(
                    "warp {} of warpgroup {g} exited while the others wait at \
                     wgmma.mma_async (line {}): every thread of the warpgroup must issue it",
                    4 * g + k,
                    line(first)
                );
                let w = &group[at.iter().position(Option::is_some).unwrap_or(0)];
                return Err(self.fault(w, 0, first, FaultKind::IllegalInstruction, None, detail));
            }
            if at.iter().any(Option::is_none) {
                continue;
            }
            if let Some(k) = at.iter().position(|p| *p != Some(first)) {
                let other = at[k].unwrap_or(first);
                let detail = format!(
                    "the warps of warpgroup {g} issued different wgmma.mma_async \
                     instructions (line {} in warp {}, line {} in warp {})",
                    line(first),
                    4 * g,
                    line(other),
                    4 * g + k
                );
                return Err(self.fault(
                    &group[k],
                    0,
                    other,
                    FaultKind::IllegalInstruction,
                    None,
                    detail,
                ));
            }
            let Op::Wgmma(op) = &prog.insts[first as usize].op else {
                continue;
            };
            for w in group.iter_mut() {
                self.wgmma(w, op, first)?;
                w.waiting = 0;
                set_pcs(w, w.valid, first + 1);
            }
            released = true;
        }
        Ok(released)
    }

    /// Why a block whose warps can no longer move holds a warpgroup at a `wgmma`: where
    /// each of its warps is.
    pub(super) fn wgmma_stall(&self, warps: &[Warp], g: usize) -> String {
        let line = |pc: u32| self.prog.info.get(pc as usize).map_or(0, |i| i.line);
        let mut parts = Vec::new();
        for (k, w) in warps.iter().enumerate().skip(4 * g).take(4) {
            let lane = w.waiting.trailing_zeros().min(31) as usize;
            let pc = w.pcs[lane];
            parts.push(match wgmma_pc(w) {
                Some(pc) => format!("warp {k} waits at wgmma.mma_async (line {})", line(pc)),
                None if w.waiting != 0 => format!(
                    "warp {k} waits at barrier {} (line {})",
                    w.wait_bar[lane],
                    line(pc)
                ),
                None => format!("warp {k} is at line {}", line(pc)),
            });
        }
        format!(
            "warpgroup {g} can never complete its wgmma.mma_async: {}",
            parts.join(", ")
        )
    }

    /// One warp's part of a `wgmma.mma_async` its warpgroup issued: its 16 rows of A
    /// (registers, or the descriptor's), B from its descriptor, D in and out of its
    /// registers.
    fn wgmma(&mut self, w: &mut Warp, op: &WgmmaOp, pc: u32) -> Result<(), Fault> {
        let s = &op.spec;
        let (n, k) = (s.n as usize, s.k as usize);
        // A's stored columns: K, or K/2 packed for `.sp` (its descriptor and fragment
        // describe the packed matrix).
        let ka = s.a_cols() as usize;
        let quarter = w.id % 4;
        let mut a = vec![0u64; 16 * ka];
        if s.a_in_regs {
            let regs = self.lanes_of(w, &op.a);
            let f = s.a_frag();
            for lane in 0..32 {
                for i in 0..f.per_lane() {
                    let (r, c) = f.coord(lane, i);
                    a[r as usize * ka + c as usize] = mma::element(&f, &regs, lane, i);
                }
            }
        } else {
            let desc = self.descriptor(w, op.a[0]);
            let bits = s.arith.a.bits();
            for r in 0..16 {
                for kk in 0..ka {
                    let mn = 16 * quarter + r as u32;
                    a[r * ka + kk] =
                        self.matrix_elem(w, &desc, mn, kk as u32, bits, !s.trans_a, pc)?;
                }
            }
        }
        // The warp's metadata registers place its rows' stored elements in K.
        let at = op.meta.map(|m| {
            let meta = self.lanes_of(w, std::slice::from_ref(&m));
            wg::sparse_k(s, &meta[0])
        });
        let desc = self.descriptor(w, op.b);
        let bits = s.arith.b.bits();
        let mut b = vec![0u64; k * n];
        for kk in 0..k {
            for col in 0..n {
                b[kk * n + col] =
                    self.matrix_elem(w, &desc, col as u32, kk as u32, bits, !s.trans_b, pc)?;
            }
        }
        let scale_d = self.fetch_lane(w, op.scale_d, 0) != 0;
        let mut d = self.lanes_of(w, &op.c);
        wg::multiply_sparse(s, &a, at.as_deref(), &b, &mut d, scale_d);
        Self::write_all(w, &op.d, &d, w.valid);
        Ok(())
    }

    /// A matrix descriptor operand (lane 0's: it is the warpgroup's). Every descriptor
    /// reads somewhere: a matrix past shared memory faults as any shared access.
    fn descriptor(&self, w: &Warp, src: Src) -> MatrixDescriptor {
        MatrixDescriptor::decode(self.fetch_lane(w, src, 0))
    }

    /// Element (mn, k) of a matrix in shared memory, read through `locate` (a fault names
    /// the warp's lane 0).
    #[allow(clippy::too_many_arguments)]
    fn matrix_elem(
        &mut self,
        w: &mut Warp,
        desc: &MatrixDescriptor,
        mn: u32,
        k: u32,
        bits: u32,
        k_major: bool,
        pc: u32,
    ) -> Result<u64, Fault> {
        let (addr, bit) = desc.locate(mn, k, bits, k_major);
        if bits == 1 {
            let byte = self.read_elem(w, Space::Shared, addr, 1, 0, pc)?;
            return Ok(byte >> bit & 1);
        }
        self.read_elem(w, Space::Shared, addr, bits as u64 / 8, 0, pc)
    }
}

/// The pc of the `wgmma.mma_async` a warp waits at, if it does.
pub(super) fn wgmma_pc(w: &Warp) -> Option<u32> {
    let lane = w.waiting.trailing_zeros() as usize;
    (w.waiting != 0 && w.wait_bar[lane] == WGMMA_WAIT).then(|| w.pcs[lane])
}
