//! Asynchronous copies and mbarriers over a warp (`decode/asynccopy.rs` says what each
//! instruction is).
//!
//! Copies complete as they are issued: PTX lets an asynchronous copy complete at any
//! time before the wait that covers it, so `cp.async.wait_group`, `cp.async.bulk.
//! wait_group` and the groups' commits have nothing left to wait for. What a copy
//! touches is checked as `ld`/`st` check it (the same faults, at the lane and address
//! that fails), with the sizes and alignments the PTX ISA requires.
//!
//! An mbarrier is 8 bytes of the block's shared memory, read and written by each
//! operation, so any number of them live where the program puts them. PTX keeps its
//! layout opaque (programs only hand states back to `test_wait` and
//! `pending_count`); the executor's is [`Mbarrier`]'s, whose 64-bit value a program can
//! still read with `ld.shared`. The H200's word is not this layout (corpus kernel
//! `mbarrier_words`, recorded: declared in ptx/corpus/expected-differences.txt), while
//! every mbarrier operation's result matches it (`mbarrier_phases`, `mbarrier_block`).

use super::{for_lanes, write_lane, BlockCtx, Fault, Loc, Warp};
use crate::decode::{AddrOp, AsyncOp, AtomOp, BulkDir, MapField, MbarWait, Space, Src};
use crate::math::{Lanes, Ty};
use crate::tensormap::{self, TensorMap};
use crate::{Access, FaultKind, SHARED_WINDOW, WINDOW_SIZE};

/// What a tensor copy does with its box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TensorOp {
    Load,
    Store,
    Reduce(AtomOp),
}

/// The largest arrival count, and tx-count magnitude, PTX allows: 2^20 - 1.
const COUNT_MAX: u64 = (1 << 20) - 1;

/// An mbarrier's state as the executor keeps it in its 8 bytes: the expected arrival
/// count (bits 0-20), the pending arrival count (21-41), the tx-count (42-62, two's
/// complement: transactions may complete before they are expected) and the phase's
/// parity (63).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mbarrier {
    pub(crate) expected: u32,
    pub(crate) pending: u32,
    pub(crate) tx: i32,
    pub(crate) phase: bool,
}

const FIELD: u64 = (1 << 21) - 1;

impl Mbarrier {
    pub(crate) fn from_bits(v: u64) -> Mbarrier {
        let tx = ((v >> 42) & FIELD) as i32;
        Mbarrier {
            expected: (v & FIELD) as u32,
            pending: ((v >> 21) & FIELD) as u32,
            // Sign-extended from 21 bits.
            tx: (tx << 11) >> 11,
            phase: v >> 63 != 0,
        }
    }

    pub(crate) fn bits(self) -> u64 {
        u64::from(self.expected) & FIELD
            | (u64::from(self.pending) & FIELD) << 21
            | (self.tx as u32 as u64 & FIELD) << 42
            | u64::from(self.phase) << 63
    }

    /// The current phase completes when every arrival it expects has happened and its
    /// transactions balance; the next one then expects the expected count again.
    fn complete_if_due(&mut self) {
        if self.pending == 0 && self.tx == 0 {
            self.phase = !self.phase;
            self.pending = self.expected;
        }
    }

    /// `count` arrivals (and, for `arrive_drop`, as many fewer expected from the next
    /// phase on).
    fn arrive(&mut self, count: u32, drop: bool) -> Result<(), String> {
        if drop {
            if count > self.expected {
                return Err(format!(
                    "arrive_drop of {count} when {} arrivals are expected",
                    self.expected
                ));
            }
            self.expected -= count;
        }
        if count > self.pending {
            return Err(format!(
                "{count} arrivals when {} are pending in this phase (undefined in PTX)",
                self.pending
            ));
        }
        self.pending -= count;
        self.complete_if_due();
        Ok(())
    }

    /// Transaction bytes expected (`delta` > 0) or completed (< 0).
    fn transact(&mut self, delta: i64) -> Result<(), String> {
        let tx = i64::from(self.tx) + delta;
        if tx.unsigned_abs() > COUNT_MAX {
            return Err(format!(
                "the tx-count would be {tx}, outside PTX's range of ±(2^20-1)"
            ));
        }
        self.tx = tx as i32;
        self.complete_if_due();
        Ok(())
    }
}

/// A bulk operation's address operands with every lane's base value, and its sizes.
struct BulkOperands<'o> {
    dst: (&'o AddrOp, Lanes),
    src: (&'o AddrOp, Lanes),
    size: Lanes,
    bar: Option<(&'o AddrOp, Lanes)>,
}

impl BlockCtx<'_> {
    fn operand_lanes(&self, w: &Warp, s: Src) -> Lanes {
        let mut v = [0u64; 32];
        self.fetch(w, s, &mut v);
        v
    }

    /// `buf.len()` bytes at `addr`, each piece checked as a load of its size would be.
    /// `addr` is aligned to the copy's size, so pieces of descending powers of two stay
    /// aligned.
    #[allow(clippy::too_many_arguments)]
    fn read_span(
        &mut self,
        w: &mut Warp,
        space: Space,
        addr: u64,
        buf: &mut [u8],
        lane: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let mut k = 0;
        while k < buf.len() {
            let a = addr.wrapping_add(k as u64);
            let piece = piece(a, buf.len() - k);
            let loc = self.locate(w, space, a, piece as u64, Access::Read, lane, pc)?;
            let v = self.read(&loc, piece as u64);
            buf[k..k + piece].copy_from_slice(&v.to_le_bytes()[..piece]);
            k += piece;
        }
        Ok(())
    }

    /// The store twin of `read_span`.
    fn write_span(
        &mut self,
        w: &mut Warp,
        space: Space,
        addr: u64,
        buf: &[u8],
        lane: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let mut k = 0;
        while k < buf.len() {
            let a = addr.wrapping_add(k as u64);
            let piece = piece(a, buf.len() - k);
            let loc = self.locate(w, space, a, piece as u64, Access::Write, lane, pc)?;
            let mut b = [0u8; 8];
            b[..piece].copy_from_slice(&buf[k..k + piece]);
            self.write_mem(&loc, piece as u64, u64::from_le_bytes(b));
            k += piece;
        }
        Ok(())
    }

    /// Where the mbarrier `bar` names for `lane` is: its offset in the block's shared
    /// memory, or (an mbarrier of another block of the cluster) its `.shared::cluster`
    /// address, at or above `CLUSTER_RANK_STRIDE`.
    fn mbar_at(
        &mut self,
        w: &mut Warp,
        bar: &AddrOp,
        base: u64,
        lane: u32,
        pc: u32,
    ) -> Result<usize, Fault> {
        let addr = base.wrapping_add(bar.off as u64);
        let space = match bar.space {
            Space::Generic if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&addr) => {
                Space::Generic
            }
            Space::Shared => Space::Shared,
            Space::SharedCluster => Space::SharedCluster,
            _ => {
                let detail = "an mbarrier object lives in shared memory".to_string();
                return Err(self.fault(w, lane, pc, FaultKind::IllegalAddress, Some(addr), detail));
            }
        };
        match self.locate(w, space, addr, 8, Access::Atomic, lane, pc)? {
            Loc::Shared(i) => Ok(i),
            Loc::Remote(r, i) => Ok(crate::cluster_address(r as u32, i as u64) as usize),
            _ => {
                let detail = "an mbarrier object lives in shared memory".to_string();
                Err(self.fault(w, lane, pc, FaultKind::IllegalAddress, Some(addr), detail))
            }
        }
    }

    fn mbar_read(&self, at: usize) -> Mbarrier {
        Mbarrier::from_bits(super::read_le(
            self.mbar_memory(at).0,
            self.mbar_memory(at).1,
            8,
        ))
    }

    /// The shared memory an mbarrier's place (`mbar_at`) lies in, and its offset there.
    fn mbar_memory(&self, at: usize) -> (&[u8], usize) {
        let stride = crate::CLUSTER_RANK_STRIDE as usize;
        if at < stride {
            (&self.shared, at)
        } else {
            (&self.cluster_blocks[at / stride - 1].shared, at % stride)
        }
    }

    /// Applies `f` to the mbarrier at `at`; its value before, or the fault `f` reports
    /// (an operation PTX leaves undefined).
    fn mbar_update(
        &mut self,
        w: &Warp,
        at: usize,
        lane: u32,
        pc: u32,
        f: impl FnOnce(&mut Mbarrier) -> Result<(), String>,
    ) -> Result<u64, Fault> {
        let (memory, i) = self.mbar_memory(at);
        let old = super::read_le(memory, i, 8);
        let mut m = Mbarrier::from_bits(old);
        if let Err(why) = f(&mut m) {
            let detail = format!("mbarrier at shared offset {at:#x}: {why}");
            return Err(self.fault(w, lane, pc, FaultKind::IllegalInstruction, None, detail));
        }
        let new = m.bits();
        if new != old {
            let stride = crate::CLUSTER_RANK_STRIDE as usize;
            if at < stride {
                super::write_le(&mut self.shared, at, 8, new);
            } else {
                let remote = &mut self.cluster_blocks[at / stride - 1].shared;
                super::write_le(remote, at % stride, 8, new);
            }
            self.mbar_changes += 1;
        }
        Ok(old)
    }

    fn count_arg(&self, w: &Warp, v: u64, what: &str, lane: u32, pc: u32) -> Result<u32, Fault> {
        if v == 0 || v > COUNT_MAX {
            let detail = format!("{what} {v} is outside 1..=2^20-1");
            return Err(self.fault(w, lane, pc, FaultKind::IllegalInstruction, None, detail));
        }
        Ok(v as u32)
    }

    pub(super) fn async_op(
        &mut self,
        w: &mut Warp,
        op: &AsyncOp,
        emask: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        match op {
            AsyncOp::StoreAsync {
                dst,
                vals,
                n,
                ty,
                red,
                bar,
            } => {
                let (db, bb) = (
                    self.operand_lanes(w, dst.base),
                    self.operand_lanes(w, bar.base),
                );
                let vs: Vec<Lanes> = vals[..*n as usize]
                    .iter()
                    .map(|v| self.operand_lanes(w, *v))
                    .collect();
                let size = u64::from(ty.bytes());
                let bytes = size * u64::from(*n);
                for l in lanes(emask) {
                    let lane = l as u32;
                    let d = db[l].wrapping_add(dst.off as u64);
                    // The mbarrier is checked before the bytes land.
                    let at = self.mbar_at(w, bar, bb[l], lane, pc)?;
                    if d % bytes != 0 {
                        let detail =
                            format!("a {bytes}-byte st.async must be {bytes}-byte aligned");
                        let kind = FaultKind::MisalignedAddress;
                        return Err(self.fault(w, lane, pc, kind, Some(d), detail));
                    }
                    for (k, v) in vs.iter().enumerate() {
                        let a = d + k as u64 * size;
                        let loc = self.locate(w, dst.space, a, size, Access::Atomic, lane, pc)?;
                        let new = match red {
                            Some(op) => {
                                let old = self.read(&loc, size);
                                super::atomic_result(*op, *ty, old, v[l], 0).0
                            }
                            None => v[l],
                        };
                        self.write_mem(&loc, size, new);
                    }
                    self.mbar_update(w, at, lane, pc, |m| m.transact(-(bytes as i64)))?;
                }
            }
            AsyncOp::Copy {
                dst,
                src,
                size,
                src_size,
                ignore,
            } => {
                let (db, sb) = (
                    self.operand_lanes(w, dst.base),
                    self.operand_lanes(w, src.base),
                );
                let ss = src_size.map(|s| self.operand_lanes(w, s));
                let ig = ignore.map(|s| self.operand_lanes(w, s));
                let size = u64::from(*size);
                for l in lanes(emask) {
                    let d = db[l].wrapping_add(dst.off as u64);
                    let s = sb[l].wrapping_add(src.off as u64);
                    let lane = l as u32;
                    let n = match (&ig, &ss) {
                        (Some(ig), _) if ig[l] != 0 => 0,
                        (_, Some(ss)) => ss[l] as u32 as u64,
                        _ => size,
                    };
                    if n > size {
                        let detail = format!(
                            "cp.async: a source size of {n} bytes, more than the {size} copied (undefined in PTX)"
                        );
                        let kind = FaultKind::IllegalInstruction;
                        return Err(self.fault(w, lane, pc, kind, None, detail));
                    }
                    let mut buf = [0u8; 16];
                    if n > 0 {
                        if s % size != 0 {
                            let detail = format!(
                                "cp.async of {size} bytes: the source must be {size}-byte aligned"
                            );
                            let kind = FaultKind::MisalignedAddress;
                            return Err(self.fault(w, lane, pc, kind, Some(s), detail));
                        }
                        self.read_span(w, src.space, s, &mut buf[..n as usize], lane, pc)?;
                    }
                    // The destination whole, zeros past the source's bytes.
                    let loc = self.locate(w, dst.space, d, size, Access::Write, lane, pc)?;
                    match loc {
                        Loc::Shared(i) => {
                            self.shared[i..i + size as usize].copy_from_slice(&buf[..size as usize])
                        }
                        _ => {
                            let detail = "cp.async writes shared memory".to_string();
                            let kind = FaultKind::IllegalAddress;
                            return Err(self.fault(w, lane, pc, kind, Some(d), detail));
                        }
                    }
                }
            }
            AsyncOp::CopyArrive { bar, noinc } => {
                let b = self.operand_lanes(w, bar.base);
                for l in lanes(emask) {
                    let at = self.mbar_at(w, bar, b[l], l as u32, pc)?;
                    // The thread's copies are complete: the arrival happens now. Without
                    // `.noinc` it was counted in first, so the pending count is unchanged.
                    let noinc = *noinc;
                    self.mbar_update(w, at, l as u32, pc, |m| {
                        if !noinc {
                            m.pending += 1;
                        }
                        m.arrive(1, false)
                    })?;
                }
            }
            AsyncOp::Bulk {
                dir,
                dst,
                src,
                size,
                bar,
                multicast,
            } => {
                let ops = self.bulk_operands(w, dst, src, *size, bar.as_ref());
                let masks = multicast.map(|m| self.operand_lanes(w, m));
                for l in lanes(emask) {
                    let lane = l as u32;
                    if let Some(masks) = &masks {
                        self.bulk_multicast(w, &ops, masks[l] as u16, l, pc)?;
                        continue;
                    }
                    if *dir == BulkDir::SharedToShared && !self.explicit_cluster {
                        // Recorded: the H200 raises an illegal instruction for this copy
                        // to the block's own shared::cluster memory in a launch without
                        // clusters.
                        let detail = "a bulk copy from shared::cta to shared::cluster in a \
                            launch without clusters (the H200 raises an illegal instruction)"
                            .to_string();
                        let kind = FaultKind::IllegalInstruction;
                        return Err(self.fault(w, lane, pc, kind, None, detail));
                    }
                    // The mbarrier is checked before any byte moves.
                    let (d, s, n, at) = self.bulk_lane(w, &ops, l, pc)?;
                    // One side is the block's shared memory: checked whole before the
                    // bytes are buffered, which bounds the buffer by the block's memory.
                    let (shared_side, space, access) = match dir {
                        BulkDir::SharedToGlobal => (s, Space::Shared, Access::Read),
                        _ => (d, dst.space, Access::Write),
                    };
                    if n > 0 {
                        self.locate(w, space, shared_side, n, access, lane, pc)?;
                    }
                    let mut buf = vec![0u8; n as usize];
                    self.read_span(w, src.space, s, &mut buf, lane, pc)?;
                    self.write_span(w, dst.space, d, &buf, lane, pc)?;
                    if let Some(at) = at {
                        self.mbar_update(w, at, lane, pc, |m| m.transact(-(n as i64)))?;
                    }
                }
            }
            AsyncOp::Tensor {
                load,
                reduce,
                dims,
                smem,
                map,
                coords,
                bar,
                im2col,
                multicast,
            } => {
                let (sb, mb) = (
                    self.operand_lanes(w, smem.base),
                    self.operand_lanes(w, *map),
                );
                let cs: Vec<Lanes> = coords[..*dims as usize]
                    .iter()
                    .map(|c| self.operand_lanes(w, *c))
                    .collect();
                let bb = bar.map(|b| self.operand_lanes(w, b.base));
                let n_off = (*dims as usize).saturating_sub(2);
                let os: Option<Vec<Lanes>> = im2col.map(|o| {
                    o[..n_off]
                        .iter()
                        .map(|x| self.operand_lanes(w, *x))
                        .collect()
                });
                let masks = multicast.map(|m| self.operand_lanes(w, m));
                for l in lanes(emask) {
                    let lane = l as u32;
                    let at = sb[l].wrapping_add(smem.off as u64);
                    let c: Vec<i64> = cs.iter().map(|v| v[l] as u32 as i32 as i64).collect();
                    let off: Option<Vec<u16>> =
                        os.as_ref().map(|o| o.iter().map(|v| v[l] as u16).collect());
                    // The running block's mbarrier is checked before any byte moves; a
                    // multicast completes the one at its offset in each block of the mask.
                    let bar_at = match (bar, &bb) {
                        (Some(bar), Some(bb)) => Some(self.mbar_at(w, bar, bb[l], lane, pc)?),
                        _ => None,
                    };
                    let cast = masks.as_ref().map(|m| {
                        let raw = match (bar, &bb) {
                            (Some(bar), Some(bb)) => Some(bb[l].wrapping_add(bar.off as u64)),
                            _ => None,
                        };
                        (m[l] as u16, raw)
                    });
                    let how = match (load, reduce) {
                        (true, _) => TensorOp::Load,
                        (false, None) => TensorOp::Store,
                        (false, Some(op)) => TensorOp::Reduce(*op),
                    };
                    let bytes =
                        self.tensor_copy(w, how, mb[l], &c, off.as_deref(), cast, at, lane, pc)?;
                    if cast.is_some() {
                        continue;
                    }
                    if let Some(b) = bar_at {
                        self.mbar_update(w, b, lane, pc, |m| m.transact(-(bytes as i64)))?;
                    }
                }
            }
            AsyncOp::BulkReduce {
                op,
                ty,
                dst,
                src,
                size,
                bar,
            } => {
                let ops = self.bulk_operands(w, dst, src, *size, bar.as_ref());
                for l in lanes(emask) {
                    let lane = l as u32;
                    let (d, s, n, at) = self.bulk_lane(w, &ops, l, pc)?;
                    if n > 0 {
                        self.locate(w, Space::Shared, s, n, Access::Read, lane, pc)?;
                    }
                    let es = u64::from(ty.bytes());
                    for k in (0..n).step_by(es as usize) {
                        let x = super::read_le(&self.shared, (s + k) as usize, es);
                        let a = d.wrapping_add(k);
                        self.reduce_element(w, *op, *ty, dst.space, a, x, lane, pc)?;
                    }
                    if let Some(at) = at {
                        self.mbar_update(w, at, lane, pc, |m| m.transact(-(n as i64)))?;
                    }
                }
            }
            AsyncOp::TensormapReplace {
                map,
                field,
                ord,
                value,
            } => {
                let (mb, vb) = (
                    self.operand_lanes(w, map.base),
                    self.operand_lanes(w, *value),
                );
                for l in lanes(emask) {
                    let at = mb[l].wrapping_add(map.off as u64);
                    self.replace_field(w, map.space, at, *field, *ord, vb[l], l as u32, pc)?;
                }
            }
            AsyncOp::TensormapCopy { dst, src, size } => {
                let (db, sb) = (
                    self.operand_lanes(w, dst.base),
                    self.operand_lanes(w, src.base),
                );
                let sz = self.operand_lanes(w, *size);
                for l in lanes(emask) {
                    let lane = l as u32;
                    if sz[l] as u32 != tensormap::BYTES as u32 {
                        let detail = format!("a tensor map is 128 bytes, not {}", sz[l] as u32);
                        let kind = FaultKind::IllegalInstruction;
                        return Err(self.fault(w, lane, pc, kind, None, detail));
                    }
                    let (d, s) = (
                        db[l].wrapping_add(dst.off as u64),
                        sb[l].wrapping_add(src.off as u64),
                    );
                    let mut raw = [0u8; tensormap::BYTES];
                    self.read_span(w, src.space, s, &mut raw, lane, pc)?;
                    self.write_span(w, dst.space, d, &raw, lane, pc)?;
                }
            }
            AsyncOp::Init { bar, count } => {
                let (b, c) = (
                    self.operand_lanes(w, bar.base),
                    self.operand_lanes(w, *count),
                );
                for l in lanes(emask) {
                    let at = self.mbar_at(w, bar, b[l], l as u32, pc)?;
                    let n = self.count_arg(
                        w,
                        c[l] as u32 as u64,
                        "mbarrier.init: a count of",
                        l as u32,
                        pc,
                    )?;
                    self.mbar_update(w, at, l as u32, pc, |m| {
                        *m = Mbarrier {
                            expected: n,
                            pending: n,
                            tx: 0,
                            phase: false,
                        };
                        Ok(())
                    })?;
                    self.invalidated_mbars.retain(|(a, _)| *a != at);
                }
            }
            AsyncOp::Inval { bar } => {
                let b = self.operand_lanes(w, bar.base);
                for l in lanes(emask) {
                    let at = self.mbar_at(w, bar, b[l], l as u32, pc)?;
                    let before = self.mbar_read(at);
                    self.invalidated_mbars.retain(|(a, _)| *a != at);
                    self.invalidated_mbars.push((at, before));
                    self.mbar_update(w, at, l as u32, pc, |m| {
                        *m = Mbarrier::from_bits(0);
                        Ok(())
                    })?;
                }
            }
            AsyncOp::Arrive {
                d,
                bar,
                count,
                drop,
                expect_tx,
            } => {
                let (b, c) = (
                    self.operand_lanes(w, bar.base),
                    self.operand_lanes(w, *count),
                );
                let tx = expect_tx.map(|t| self.operand_lanes(w, t));
                for l in lanes(emask) {
                    let lane = l as u32;
                    let at = self.mbar_at(w, bar, b[l], lane, pc)?;
                    let n = self.count_arg(
                        w,
                        c[l] as u32 as u64,
                        "mbarrier.arrive: a count of",
                        lane,
                        pc,
                    )?;
                    let bytes = tx.as_ref().map(|t| t[l] as u32 as i64);
                    let drop = *drop;
                    let old = self.mbar_update(w, at, lane, pc, |m| {
                        if let Some(t) = bytes {
                            m.transact(t)?;
                        }
                        m.arrive(n, drop)
                    })?;
                    // The state: the mbarrier as it was before this arrival.
                    write_lane(w, *d, l, old);
                }
            }
            AsyncOp::Tx {
                bar,
                bytes,
                complete,
            } => {
                let (b, t) = (
                    self.operand_lanes(w, bar.base),
                    self.operand_lanes(w, *bytes),
                );
                for l in lanes(emask) {
                    let at = self.mbar_at(w, bar, b[l], l as u32, pc)?;
                    let n = t[l] as u32 as i64;
                    let delta = if *complete { -n } else { n };
                    self.mbar_update(w, at, l as u32, pc, |m| m.transact(delta))?;
                }
            }
            AsyncOp::PendingCount { d, state } => {
                let s = self.operand_lanes(w, *state);
                for_lanes(emask, |l| {
                    write_lane(w, *d, l, u64::from(Mbarrier::from_bits(s[l]).pending))
                });
            }
        }
        Ok(())
    }

    /// A multicast bulk copy of lane `l`: the global bytes read once (checked as any
    /// load), then written at the destination's offset in each block of `mask` and
    /// completed on the mbarrier at the same offset there. A rank past the cluster faults
    /// as an access to it does.
    fn bulk_multicast(
        &mut self,
        w: &mut Warp,
        ops: &BulkOperands<'_>,
        mask: u16,
        l: usize,
        pc: u32,
    ) -> Result<(), Fault> {
        let lane = l as u32;
        // The running block's own mbarrier is checked (`bulk_lane`) before any byte moves.
        let (d, s, n, _) = self.bulk_lane(w, ops, l, pc)?;
        let mut buf = vec![0u8; n as usize];
        self.read_span(w, ops.src.0.space, s, &mut buf, lane, pc)?;
        let bar = ops.bar.map(|(b, bb)| (b, bb[l].wrapping_add(b.off as u64)));
        for rank in (0..16u32).filter(|r| mask >> r & 1 != 0) {
            let dr = crate::cluster_address(rank, d);
            if n > 0 {
                self.locate(w, Space::SharedCluster, dr, n, Access::Write, lane, pc)?;
            }
            self.write_span(w, Space::SharedCluster, dr, &buf, lane, pc)?;
            if let Some((bar_op, b)) = bar {
                let remote = AddrOp {
                    space: Space::SharedCluster,
                    base: bar_op.base,
                    off: 0,
                };
                let at = self.mbar_at(w, &remote, crate::cluster_address(rank, b), lane, pc)?;
                self.mbar_update(w, at, lane, pc, |m| m.transact(-(n as i64)))?;
            }
        }
        Ok(())
    }

    /// One element of a bulk reduction into `addr` of `space`: atomically in global
    /// memory (other blocks may reduce there too), read-modify-write in the block's
    /// shared memory.
    #[allow(clippy::too_many_arguments)]
    fn reduce_element(
        &mut self,
        w: &mut Warp,
        op: AtomOp,
        ty: Ty,
        space: Space,
        addr: u64,
        x: u64,
        lane: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let es = u64::from(ty.bytes());
        let loc = self.locate(w, space, addr, es, Access::Atomic, lane, pc)?;
        match loc {
            Loc::Host(p) if (p as usize) % es as usize != 0 => {
                let detail = "the memory's host span is not aligned for an atomic".to_string();
                let kind = FaultKind::MisalignedAddress;
                return Err(self.fault(w, lane, pc, kind, Some(addr), detail));
            }
            // Safety: from `Memory::translate` for atomic access, aligned (checked).
            Loc::Host(p) => {
                unsafe { super::host_atomic(p, op, ty, x, 0) };
            }
            _ => {
                let old = self.read(&loc, es);
                let (new, _) = super::atomic_result(op, ty, old, x, 0);
                self.write_mem(&loc, es, new);
            }
        }
        Ok(())
    }

    /// What PTX requires of a bulk copy: a size that is a multiple of 16, 16-byte
    /// aligned addresses.
    /// A bulk copy's or reduction's operands, every lane's.
    fn bulk_operands<'o>(
        &self,
        w: &Warp,
        dst: &'o AddrOp,
        src: &'o AddrOp,
        size: Src,
        bar: Option<&'o AddrOp>,
    ) -> BulkOperands<'o> {
        BulkOperands {
            dst: (dst, self.operand_lanes(w, dst.base)),
            src: (src, self.operand_lanes(w, src.base)),
            size: self.operand_lanes(w, size),
            bar: bar.map(|b| (b, self.operand_lanes(w, b.base))),
        }
    }

    /// Lane `l`'s destination, source and size, checked (`bulk_checks`), and its
    /// mbarrier's offset, checked before any byte moves.
    fn bulk_lane(
        &mut self,
        w: &mut Warp,
        ops: &BulkOperands<'_>,
        l: usize,
        pc: u32,
    ) -> Result<(u64, u64, u64, Option<usize>), Fault> {
        let lane = l as u32;
        let d = ops.dst.1[l].wrapping_add(ops.dst.0.off as u64);
        let s = ops.src.1[l].wrapping_add(ops.src.0.off as u64);
        let n = ops.size[l] as u32 as u64;
        self.bulk_checks(w, n, s, d, lane, pc)?;
        let at = match ops.bar {
            Some((bar, bb)) => Some(self.mbar_at(w, bar, bb[l], lane, pc)?),
            None => None,
        };
        Ok((d, s, n, at))
    }

    fn bulk_checks(
        &self,
        w: &Warp,
        n: u64,
        s: u64,
        d: u64,
        lane: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        if n % 16 != 0 {
            let detail = format!("cp.async.bulk: a size of {n} bytes, not a multiple of 16");
            let kind = FaultKind::IllegalInstruction;
            return Err(self.fault(w, lane, pc, kind, None, detail));
        }
        for a in [s, d] {
            if a % 16 != 0 {
                let detail =
                    "cp.async.bulk: source and destination must be 16-byte aligned".to_string();
                let kind = FaultKind::MisalignedAddress;
                return Err(self.fault(w, lane, pc, kind, Some(a), detail));
            }
        }
        Ok(())
    }

    /// `tensormap.replace`: one field of the map at `at` (in `space`) set to `value`, in
    /// place; the map is checked whole only when a copy uses it. Bytes that hold no map
    /// (never written by cuTensorMapEncode*, nor copied from such) get the field's bytes
    /// where the mock's encoding keeps it and nothing else, as a GPU sets the field's bits
    /// in whatever the 128 bytes hold: a copy through them still finds no map.
    #[allow(clippy::too_many_arguments)]
    fn replace_field(
        &mut self,
        w: &mut Warp,
        space: Space,
        at: u64,
        field: MapField,
        ord: u8,
        value: u64,
        lane: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let mut raw = [0u8; tensormap::BYTES];
        self.read_span(w, space, at, &mut raw, lane, pc)?;
        let fail = |this: &Self, w: &Warp, detail: String| {
            this.fault(w, lane, pc, FaultKind::IllegalInstruction, Some(at), detail)
        };
        let known = TensorMap::fields(&raw).is_some();
        let mut m = TensorMap::fields_of_any(&raw);
        let before = m.encode();
        let k = ord as usize;
        let v32 = value as u32;
        match field {
            MapField::GlobalAddress => m.address = value,
            // Zero-based: the new rank less one.
            MapField::Rank => m.rank = v32.wrapping_add(1),
            // An im2col map has no box (its pixels and channels stay).
            MapField::BoxDim if m.im2col.is_none() => m.box_dim[k] = v32,
            MapField::GlobalDim => m.dims[k] = u64::from(v32),
            MapField::GlobalStride if k < 4 => m.strides[k + 1] = value,
            MapField::ElementStride => m.element_strides[k] = v32,
            MapField::ElemType => {
                // PTX numbers the types otherwise than CUtensorMapDataType.
                let t = match v32 {
                    8 => 10,
                    9 => 8,
                    10 => 9,
                    t @ 0..=12 => t,
                    t => return Err(fail(self, w, format!("element type {t} is not emulated"))),
                };
                m.data_type = t;
                m.strides[0] = tensormap::element_bytes(t).unwrap_or(0);
            }
            MapField::SwizzleMode if v32 <= 3 => m.swizzle = v32,
            // PTX: fill mode 0 zeros, 1 the NaN fill.
            MapField::FillMode if v32 <= 1 => m.nan_fill = v32 == 1,
            // PTX: 0 none, 1 16B, 2 32B, as CUtensorMapInterleave.
            MapField::InterleaveLayout if v32 <= 2 => m.interleave = v32,
            _ => {
                let detail = format!(
                    "tensormap.replace of {field:?} (ord {ord}) with {value:#x} is not emulated"
                );
                return Err(fail(self, w, detail));
            }
        }
        let mut after = m.encode();
        if !known {
            // Only the field's bytes change (never the mock's mark of a map).
            for (i, b) in after.iter_mut().enumerate() {
                if i < 4 || *b == before[i] {
                    *b = raw[i];
                }
            }
        }
        self.write_span(w, space, at, &after, lane, pc)
    }

    /// A box of the tensor map at generic address `map_addr`, at `coords`, into shared
    /// memory at `smem` (`load`) or out of it; the box's bytes. Elements outside the
    /// tensor read as zeros (or the map's NaN fill) and are not written.
    #[allow(clippy::too_many_arguments)]
    fn tensor_copy(
        &mut self,
        w: &mut Warp,
        how: TensorOp,
        map_addr: u64,
        coords: &[i64],
        offsets: Option<&[u16]>,
        multicast: Option<(u16, Option<u64>)>,
        smem: u64,
        lane: u32,
        pc: u32,
    ) -> Result<u64, Fault> {
        if map_addr % 64 != 0 {
            let detail = "a tensor map is 64-byte aligned".to_string();
            let kind = FaultKind::MisalignedAddress;
            return Err(self.fault(w, lane, pc, kind, Some(map_addr), detail));
        }
        let mut raw = [0u8; tensormap::BYTES];
        self.read_span(w, Space::Generic, map_addr, &mut raw, lane, pc)?;
        let Some(map) = TensorMap::decode(&raw) else {
            let detail = "no tensor map cuTensorMapEncodeTiled wrote lies there".to_string();
            let kind = FaultKind::IllegalInstruction;
            return Err(self.fault(w, lane, pc, kind, Some(map_addr), detail));
        };
        if coords.len() != map.rank as usize {
            let detail = format!(
                "a {}d copy through a tensor map of rank {}",
                coords.len(),
                map.rank
            );
            let kind = FaultKind::IllegalInstruction;
            return Err(self.fault(w, lane, pc, kind, Some(map_addr), detail));
        }
        // The instruction's mode is the map's: an im2col copy through a tiled map, or a
        // tiled one through an im2col map, has nothing defined to do.
        if offsets.is_some() != map.im2col.is_some() {
            let detail = if map.im2col.is_some() {
                "a tiled copy through an im2col tensor map"
            } else {
                "an im2col copy through a tiled tensor map"
            };
            let kind = FaultKind::IllegalInstruction;
            return Err(self.fault(w, lane, pc, kind, Some(map_addr), detail.to_string()));
        }
        // A tiled box starts at a 16-byte boundary of its innermost dimension: the H200
        // ends the kernel with an illegal instruction for an int32 box at x = 1 (NVIDIA's
        // globalToShmemTMACopy sample shows it; negative and past-the-end starts that are
        // multiples of 16 bytes load, with the fill).
        if map.im2col.is_none() {
            let start = coords[0].wrapping_mul(map.element_bytes() as i64);
            if start.rem_euclid(16) != 0 {
                let detail = format!(
                    "a tiled box must start at a multiple of 16 bytes in its innermost \
                     dimension: coordinate {} of {}-byte elements is {start} bytes",
                    coords[0],
                    map.element_bytes()
                );
                let kind = FaultKind::IllegalInstruction;
                return Err(self.fault(w, lane, pc, kind, Some(map_addr), detail));
            }
        }
        let offsets = offsets.unwrap_or(&[]);
        if let Err(why) = map.interleave_copyable(coords, offsets) {
            let kind = FaultKind::IllegalInstruction;
            return Err(self.fault(w, lane, pc, kind, Some(map_addr), why));
        }
        if smem % 128 != 0 {
            let detail = "a tensor copy's shared memory must be 128-byte aligned".to_string();
            let kind = FaultKind::MisalignedAddress;
            return Err(self.fault(w, lane, pc, kind, Some(smem), detail));
        }
        let load = how == TensorOp::Load;
        // A reduction's type is the map's: the ones `cp.reduce.async.bulk` has for `op`.
        let reduce_ty = match how {
            TensorOp::Reduce(op) => {
                let ty = match map.data_type {
                    2 => Ty::U32,
                    3 => Ty::S32,
                    4 => Ty::U64,
                    5 => Ty::S64,
                    7 => Ty::F32,
                    8 => Ty::F64,
                    _ => Ty::Pred,
                };
                let ok = match op {
                    AtomOp::Add => matches!(ty, Ty::U32 | Ty::S32 | Ty::U64 | Ty::F32 | Ty::F64),
                    AtomOp::Min | AtomOp::Max => {
                        matches!(ty, Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64)
                    }
                    AtomOp::Inc | AtomOp::Dec => ty == Ty::U32,
                    _ => matches!(ty, Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64),
                };
                if !ok {
                    let detail = format!(
                        "a tensor reduction ({op:?}) over elements of CUtensorMapDataType {} is not emulated",
                        map.data_type
                    );
                    let kind = FaultKind::IllegalInstruction;
                    return Err(self.fault(w, lane, pc, kind, Some(map_addr), detail));
                }
                Some(ty)
            }
            _ => None,
        };
        let esize = map.element_bytes();
        let bytes = map.box_bytes();
        // The box's shared memory, whole, before any element moves (a swizzle moves
        // chunks within 128-byte rows: the last row is checked whole).
        let access = if load { Access::Write } else { Access::Read };
        let span = if map.swizzle != 0 {
            bytes.next_multiple_of(128)
        } else {
            bytes
        };
        self.locate(w, Space::Shared, smem, span, access, lane, pc)?;
        // A store writes whole 16-byte units of the innermost dimension: the H200's wrote
        // a 90-float row's floats 90 and 91 too (runtime program async_copy, tma_tiles),
        // so its bound there is the dimension rounded up to 16 bytes; loads read zeros
        // from the dimension's end.
        let bound0 = if load {
            map.dims[0]
        } else {
            map.dims[0].saturating_mul(esize).next_multiple_of(16) / esize.max(1)
        };
        let fill = |v: &mut [u8; 8]| {
            if map.nan_fill {
                for (b, f) in v.iter_mut().zip(tensormap::NAN_FILL.iter().cycle()) {
                    *b = *f;
                }
            }
        };
        let es = esize as usize;
        // A multicast load reads the box once, then lands it in every block of the mask.
        let mut image: Option<Vec<(u64, [u8; 8])>> = multicast.map(|_| Vec::new());
        map.for_each_element(coords, offsets, bound0, |k, addr| {
            let at = map.swizzled(smem + k * esize);
            if load {
                let mut v = [0u8; 8];
                match addr {
                    Some(a) => self.read_span(w, Space::Global, a, &mut v[..es], lane, pc)?,
                    None => fill(&mut v),
                }
                match &mut image {
                    Some(img) => img.push((at, v)),
                    None => {
                        let at = at as usize;
                        if let Some(dst) = self.shared.get_mut(at..at + es) {
                            dst.copy_from_slice(&v[..es]);
                        }
                    }
                }
            } else if let Some(a) = addr {
                let at = at as usize;
                let v: Vec<u8> = self
                    .shared
                    .get(at..at + es)
                    .map(<[u8]>::to_vec)
                    .unwrap_or_default();
                match (how, reduce_ty) {
                    (TensorOp::Reduce(op), Some(ty)) => {
                        let mut b = [0u8; 8];
                        b[..v.len()].copy_from_slice(&v);
                        let x = u64::from_le_bytes(b);
                        self.reduce_element(w, op, ty, Space::Global, a, x, lane, pc)?;
                    }
                    _ => self.write_span(w, Space::Global, a, &v, lane, pc)?,
                }
            }
            Ok::<(), Fault>(())
        })?;
        if let (Some(img), Some(mask)) = (image, multicast) {
            for rank in (0..16u32).filter(|r| mask.0 >> r & 1 != 0) {
                let base = crate::cluster_address(rank, smem);
                self.locate(w, Space::SharedCluster, base, span, Access::Write, lane, pc)?;
                for (at, v) in &img {
                    let dr = crate::cluster_address(rank, *at);
                    self.write_span(w, Space::SharedCluster, dr, &v[..es], lane, pc)?;
                }
                if let Some(b) = mask.1 {
                    let remote = AddrOp {
                        space: Space::SharedCluster,
                        base: Src::Imm(0),
                        off: 0,
                    };
                    let at = self.mbar_at(w, &remote, crate::cluster_address(rank, b), lane, pc)?;
                    self.mbar_update(w, at, lane, pc, |m| m.transact(-(bytes as i64)))?;
                }
            }
        }
        Ok(bytes)
    }

    /// `mbarrier.test_wait`/`try_wait`: each active lane's answer into its destination;
    /// the lanes whose phase has not completed.
    pub(super) fn mbar_wait(
        &mut self,
        w: &mut Warp,
        op: &MbarWait,
        emask: u32,
        pc: u32,
    ) -> Result<u32, Fault> {
        let (b, t) = (
            self.operand_lanes(w, op.bar.base),
            self.operand_lanes(w, op.token),
        );
        if let Some(h) = op.hint {
            self.operand_lanes(w, h);
        }
        let mut incomplete = 0u32;
        for l in lanes(emask) {
            let at = self.mbar_at(w, &op.bar, b[l], l as u32, pc)?;
            // An mbarrier invalidated since: waiting on it is undefined in PTX, but a
            // thread that waited on a phase completed before the inval was released at
            // that completion on the GPU, however late its next poll comes here (NVIDIA's
            // globalToShmemTMACopy sample: thread 0 invalidates the mbarrier as soon as
            // its own wait succeeds). The phase it had then answers.
            let now = match self.invalidated_mbars.iter().find(|(a, _)| *a == at) {
                Some((_, before)) => before.phase,
                None => self.mbar_read(at).phase,
            };
            // The phase asked about: its parity, or the phase a state was taken in.
            let asked = if op.parity {
                t[l] & 1 != 0
            } else {
                Mbarrier::from_bits(t[l]).phase
            };
            let done = now != asked;
            if !done {
                incomplete |= 1 << l;
                self.last_wait = Some((w.id, l as u32, pc, at));
            }
            write_lane(w, op.d, l, done as u64);
        }
        Ok(incomplete)
    }

    /// What a deadlocked mbarrier wait says: the mbarrier and what it still waits for.
    pub(super) fn mbar_deadlock(&self, at: usize) -> String {
        let m = self.mbar_read(at);
        format!(
            "mbarrier at shared offset {at:#x}: its phase waits for {} more arrivals and {} transaction bytes, and no thread that could complete it can run (the others exited, wait at a barrier, or wait on mbarriers themselves)",
            m.pending, m.tx
        )
    }
}

/// The largest power of two up to 8 that `addr` is aligned to and `left` holds.
fn piece(addr: u64, left: usize) -> usize {
    [8usize, 4, 2, 1]
        .into_iter()
        .find(|&p| p <= left && addr % p as u64 == 0)
        .unwrap_or(1)
}

fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    (0..32).filter(move |l| mask >> l & 1 != 0)
}
