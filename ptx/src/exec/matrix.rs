//! Warp-level matrix instructions: `mma`, `wmma.*`, `ldmatrix`, `stmatrix`, `movmatrix`.
//! Each reads every lane's registers (a lane's fragment is part of the warp's matrix) and
//! writes the active lanes' results; memory is reached per element through `locate`, as
//! any access. The layouts and arithmetic are `crate::mma`'s.

use super::{write, BlockCtx, Fault, Warp};
use crate::decode::{Dst, MmaOp, Space, Src, WmmaMem};
use crate::math::Lanes;
use crate::mma::{self, Role};
use crate::Access;

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
        let d = mma::mma(&op.spec, &a, &b, &c);
        Self::write_all(w, &op.d, &d, emask);
    }

    /// The byte offset of element (r, c) of a wmma matrix in memory.
    fn wmma_offset(m: &WmmaMem<impl Copy>, stride: u64, r: u32, c: u32) -> u64 {
        let (r, c) = (r as u64, c as u64);
        let at = if m.row_major {
            r * stride + c
        } else {
            c * stride + r
        };
        at * (m.frag.elem.bits() as u64 / 8)
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
        let size = f.elem.bits() as u64 / 8;
        let mut out = vec![[0u64; 32]; f.regs()];
        for lane in 0..32 {
            if emask >> lane & 1 == 0 {
                continue;
            }
            let at = base[lane].wrapping_add(m.off as u64);
            for i in 0..f.per_lane() {
                let (r, c) = f.coord(lane, i);
                let a = at.wrapping_add(Self::wmma_offset(m, stride[lane], r, c));
                let v = self.read_elem(w, m.space, a, size, lane as u32, pc)?;
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
                let a = at.wrapping_add(Self::wmma_offset(m, stride[lane], r, c));
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
}
