//! sm_90's asynchronous copies and the barriers that track them, decoded into
//! [`AsyncOp`] and [`Op::MbarWait`]: `cp.async` (and its groups, and
//! `cp.async.mbarrier.arrive`), the 1-D bulk copies `cp.async.bulk` (and their groups),
//! and `mbarrier.*` on shared memory. What they do is `executor/asynccopy.rs`'s.
//!
//! Each operand keeps its form (register or immediate, address and offset); the
//! modifiers with nothing to emulate on the host (cache levels and policies, memory
//! ordering and scopes) are taken and dropped here. A `.shared::cluster` destination or
//! mbarrier may be another block's of the cluster (`executor/cluster.rs`); the block's own
//! `.shared::cta` window lies inside the `.shared::cluster` one. 1-D bulk copies from
//! global memory and tensor loads may multicast to the cluster's blocks.

use super::{semantic, unsupported, AtomOp, Dst, FuncDecoder, Mods, Op, Space, Src};
use crate::math::Ty;
use crate::parse::{InstAst, Opnd};
use crate::LoadError;

/// An address operand: `[base+off]` in a state space.
#[derive(Debug, Clone, Copy)]
pub struct AddrOp {
    pub space: Space,
    pub base: Src,
    pub off: i64,
}

/// Where a bulk copy goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BulkDir {
    /// `.shared::cluster.global`: completes its bytes on an mbarrier.
    GlobalToShared,
    /// `.shared::cluster.shared::cta`: completes its bytes on an mbarrier.
    SharedToShared,
    /// `.global.shared::cta.bulk_group`.
    SharedToGlobal,
}

#[derive(Debug, Clone)]
pub enum AsyncOp {
    /// `st.async.shared::cluster.mbarrier::complete_tx::bytes{.v2,.v4}.type [dst], v,
    /// [bar]` and `red.async...op.type [dst], v, [bar]`: a store (or a reduction, `red`)
    /// into a block of the cluster, completing its bytes on the mbarrier `bar` of that
    /// block.
    StoreAsync {
        dst: AddrOp,
        vals: [Src; 4],
        n: u8,
        ty: Ty,
        red: Option<AtomOp>,
        bar: AddrOp,
    },
    /// `cp.async.{ca,cg}.shared{::cta}.global [dst], [src], size{, src_size}{, ignore}`:
    /// `size` bytes written to shared memory, the first `src_size` of them (all by
    /// default, none when `ignore` holds) read from global memory, the rest zeros.
    Copy {
        dst: AddrOp,
        src: AddrOp,
        size: u8,
        src_size: Option<Src>,
        ignore: Option<Src>,
    },
    /// `cp.async.mbarrier.arrive{.noinc}`: an arrive-on the mbarrier once the thread's
    /// earlier `cp.async` have completed; without `.noinc` the pending count is raised
    /// by one first (so the arrival itself is not one of those the barrier counts).
    CopyArrive { bar: AddrOp, noinc: bool },
    /// `cp.async.bulk...`: `size` bytes (a multiple of 16, at 16-byte aligned addresses);
    /// into shared memory, completing `size` transaction bytes on `bar`.
    Bulk {
        dir: BulkDir,
        dst: AddrOp,
        src: AddrOp,
        size: Src,
        bar: Option<AddrOp>,
        /// `.multicast::cluster`'s ctaMask: the bytes land at the same offset in each
        /// block of the mask (a global source only), each block's mbarrier at the same
        /// offset completing them.
        multicast: Option<Src>,
    },
    /// `cp.async.bulk.tensor.Nd...tile`: a box of the tensor map at generic address
    /// `map`, at `coords` (signed, the first `dims`), into shared memory at `smem`
    /// completing its bytes on `bar` (`load`), or from `smem` into the tensor (reduced
    /// into it with `reduce`, for `cp.reduce.async.bulk.tensor`, in the map's type).
    Tensor {
        load: bool,
        reduce: Option<AtomOp>,
        dims: u8,
        smem: AddrOp,
        map: Src,
        coords: [Src; 5],
        bar: Option<AddrOp>,
        /// `.im2col`'s offsets (16-bit, W first; `dims - 2` of them).
        im2col: Option<[Src; 3]>,
        /// `.multicast::cluster`'s ctaMask: the box lands at the same offset in each block
        /// of the mask, each block's mbarrier at the same offset completing its bytes.
        multicast: Option<Src>,
    },
    /// `cp.reduce.async.bulk`: `size` bytes of shared memory at `src`, element by element
    /// (`ty`), reduced with `op` into `dst` (global memory, atomically per element as
    /// other blocks may reduce there too, or the block's shared memory, completing its
    /// bytes on `bar`).
    BulkReduce {
        op: AtomOp,
        ty: Ty,
        dst: AddrOp,
        src: AddrOp,
        size: Src,
        bar: Option<AddrOp>,
    },
    /// `tensormap.replace.tile.FIELD [map]{, ord}, value`: one field of the tensor map
    /// at `map` (global or shared memory) changed.
    TensormapReplace {
        map: AddrOp,
        field: MapField,
        ord: u8,
        value: Src,
    },
    /// `tensormap.cp_fenceproxy.global.shared::cta...`: a tensor map (`size` = 128
    /// bytes) copied from shared to global memory.
    TensormapCopy { dst: AddrOp, src: AddrOp, size: Src },
    /// `mbarrier.init [bar], count`.
    Init { bar: AddrOp, count: Src },
    /// `mbarrier.inval [bar]`.
    Inval { bar: AddrOp },
    /// `mbarrier.arrive{_drop}{.expect_tx} state, [bar]{, count | tx}`: the state before
    /// the arrival into `d`.
    Arrive {
        d: Dst,
        bar: AddrOp,
        count: Src,
        drop: bool,
        expect_tx: Option<Src>,
    },
    /// `mbarrier.expect_tx` (`complete` false) and `mbarrier.complete_tx`.
    Tx {
        bar: AddrOp,
        bytes: Src,
        complete: bool,
    },
    /// `mbarrier.pending_count.b64 d, state`.
    PendingCount { d: Dst, state: Src },
}

impl AsyncOp {
    /// Every operand it reads (for the compiler's liveness).
    pub fn sources(&self) -> Vec<Src> {
        let a = |x: &AddrOp| x.base;
        match self {
            AsyncOp::StoreAsync {
                dst, vals, n, bar, ..
            } => {
                let mut v = vec![a(dst), a(bar)];
                v.extend(&vals[..*n as usize]);
                v
            }
            AsyncOp::Copy {
                dst,
                src,
                src_size,
                ignore,
                ..
            } => {
                let mut v = vec![a(dst), a(src)];
                v.extend(src_size.iter().chain(ignore.iter()));
                v
            }
            AsyncOp::CopyArrive { bar, .. } | AsyncOp::Inval { bar } => vec![a(bar)],
            AsyncOp::Bulk {
                dst,
                src,
                size,
                bar,
                multicast,
                ..
            } => {
                let mut v = vec![a(dst), a(src), *size];
                v.extend(bar.iter().map(a));
                v.extend(multicast.iter().copied());
                v
            }
            AsyncOp::Tensor {
                dims,
                smem,
                map,
                coords,
                bar,
                im2col,
                multicast,
                ..
            } => {
                let mut v = vec![a(smem), *map];
                v.extend(&coords[..*dims as usize]);
                v.extend(bar.iter().map(a));
                if let Some(o) = im2col {
                    v.extend(&o[..(*dims as usize).saturating_sub(2)]);
                }
                v.extend(multicast.iter().copied());
                v
            }
            AsyncOp::BulkReduce {
                dst,
                src,
                size,
                bar,
                ..
            } => {
                let mut v = vec![a(dst), a(src), *size];
                v.extend(bar.iter().map(a));
                v
            }
            AsyncOp::TensormapReplace { map, value, .. } => vec![a(map), *value],
            AsyncOp::TensormapCopy { dst, src, size } => vec![a(dst), a(src), *size],
            AsyncOp::Init { bar, count } => vec![a(bar), *count],
            AsyncOp::Arrive {
                bar,
                count,
                expect_tx,
                ..
            } => {
                let mut v = vec![a(bar), *count];
                v.extend(expect_tx.iter());
                v
            }
            AsyncOp::Tx { bar, bytes, .. } => vec![a(bar), *bytes],
            AsyncOp::PendingCount { state, .. } => vec![*state],
        }
    }
}

/// The fields `tensormap.replace` changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapField {
    GlobalAddress,
    Rank,
    BoxDim,
    GlobalDim,
    GlobalStride,
    ElementStride,
    ElemType,
    InterleaveLayout,
    SwizzleMode,
    FillMode,
}

/// `mbarrier.test_wait` / `mbarrier.try_wait{.parity}`: whether the phase `token` names
/// (a state from an arrive, or a phase parity) has completed, into `d`. A control
/// instruction: a warp whose lanes find it incomplete gives the block's other warps
/// their turn (they are who can complete it).
#[derive(Debug, Clone)]
pub struct MbarWait {
    pub d: Dst,
    pub bar: AddrOp,
    pub token: Src,
    pub parity: bool,
    /// `try_wait`'s optional suspend-time hint: read, and otherwise ignored.
    pub hint: Option<Src>,
}

/// Memory ordering and scope qualifiers: the executor's shared memory is sequentially
/// consistent, and a cluster's blocks all run on one host thread.
const ORDERING: &[&str] = &["relaxed", "release", "acquire", "cta", "cluster"];

impl FuncDecoder<'_> {
    fn take_ordering(m: &mut Mods) {
        m.list.retain(|x| !ORDERING.contains(&x.as_str()));
    }

    /// An address operand in `space`, or (Generic) in the space its symbol names.
    fn addr_op(&self, i: &InstAst, o: &Opnd, space: Space) -> Result<AddrOp, LoadError> {
        let (base, off, sym) = self.addr(i, o)?;
        let space = match (space, sym) {
            (Space::Generic, Some(s)) => s,
            // A block's own shared variable is a `.shared::cluster` address too.
            (Space::SharedCluster, Some(Space::Shared)) => Space::SharedCluster,
            (s, Some(t)) if s != t => {
                return Err(semantic(i, "variable used with a different state space"))
            }
            (s, _) => s,
        };
        Ok(AddrOp { space, base, off })
    }

    /// The state space of an mbarrier operand: `.shared{::cta,::cluster}` or generic.
    fn mbar_space(m: &mut Mods) -> Space {
        match m
            .take_any(&["shared", "shared::cta", "shared::cluster"])
            .as_deref()
        {
            // Another block's mbarrier (`mapa`), or the block's own.
            Some("shared::cluster") => Space::SharedCluster,
            Some(_) => Space::Shared,
            None => Space::Generic,
        }
    }

    /// `cp.*`: the asynchronous copies.
    pub(super) fn async_copy(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let unsup = |m: &Mods, why: &str| {
            unsupported(i, format!("unsupported instruction `{}`{why}", m.full))
        };
        if !m.take("async") {
            return Err(unsup(m, ""));
        }
        if m.take("reduce") {
            return self.bulk_reduce(i, m);
        }
        if m.take("bulk") {
            return self.bulk(i, m);
        }
        if m.take("commit_group") || m.take("wait_all") {
            // Every copy completes as it is issued (PTX lets a copy complete any time
            // before the wait that covers it): nothing is ever pending.
            self.nops(i, 0)?;
            return Ok(Op::Nop);
        }
        if m.take("wait_group") {
            self.nops(i, 1)?;
            if !matches!(i.ops[0], Opnd::Int(_)) {
                return Err(semantic(
                    i,
                    "`cp.async.wait_group` takes an integer constant",
                ));
            }
            return Ok(Op::Nop);
        }
        if m.take("mbarrier") {
            if !m.take("arrive") || !m.take("b64") {
                return Err(unsup(m, ""));
            }
            let noinc = m.take("noinc");
            let space = Self::mbar_space(m);
            self.nops(i, 1)?;
            let bar = self.addr_op(i, &i.ops[0], space)?;
            return Ok(Op::Async(Box::new(AsyncOp::CopyArrive { bar, noinc })));
        }
        let cg = match m.take_any(&["ca", "cg"]).as_deref() {
            Some("cg") => true,
            Some(_) => false,
            None => return Err(unsup(m, "")),
        };
        if m.take_any(&["shared", "shared::cta"]).is_none() || !m.take("global") {
            return Err(unsup(m, ""));
        }
        let policy = m.take("L2::cache_hint");
        m.take_any(&["L2::64B", "L2::128B", "L2::256B"]);
        let mut ops: &[Opnd] = &i.ops;
        if policy {
            // The cache policy (a 64-bit register) is the last operand: a hint only.
            let Some((last, rest)) = ops.split_last() else {
                return Err(semantic(
                    i,
                    "`.L2::cache_hint` needs a cache-policy operand",
                ));
            };
            self.src(i, last)?;
            ops = rest;
        }
        if !matches!(ops.len(), 3 | 4) {
            return Err(semantic(
                i,
                format!("`{}` takes 3 or 4 operands (and a cache policy)", m.full),
            ));
        }
        let size = match ops[2] {
            Opnd::Int(n @ (4 | 8 | 16)) => n as u8,
            _ => {
                return Err(semantic(
                    i,
                    "`cp.async`'s copy size is the constant 4, 8 or 16",
                ))
            }
        };
        if cg && size != 16 {
            return Err(semantic(i, "`cp.async.cg` copies 16 bytes"));
        }
        let (mut src_size, mut ignore) = (None, None);
        if let Some(o) = ops.get(3) {
            let s = self.src(i, o)?;
            match s {
                Src::Pred(_) | Src::NotPred(_) => ignore = Some(s),
                _ => src_size = Some(s),
            }
        }
        Ok(Op::Async(Box::new(AsyncOp::Copy {
            dst: self.addr_op(i, &ops[0], Space::Shared)?,
            src: self.addr_op(i, &ops[1], Space::Global)?,
            size,
            src_size,
            ignore,
        })))
    }

    /// `cp.async.bulk...`, after `cp.async.bulk`.
    fn bulk(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let unsup = |m: &Mods, why: &str| {
            unsupported(i, format!("unsupported instruction `{}`{why}", m.full))
        };
        if m.take("prefetch") {
            // A hint to fill L2 (of a range or a tensor's box): no cache here, and a
            // prefetch never faults.
            m.list.clear();
            return Ok(Op::Nop);
        }
        if m.take("tensor") {
            return self.tensor(i, m);
        }
        if m.take("commit_group") {
            self.nops(i, 0)?;
            return Ok(Op::Nop);
        }
        if m.take("wait_group") {
            m.take("read");
            self.nops(i, 1)?;
            if !matches!(i.ops[0], Opnd::Int(_)) {
                return Err(semantic(
                    i,
                    "`cp.async.bulk.wait_group` takes an integer constant",
                ));
            }
            return Ok(Op::Nop);
        }
        let multicast = m.take("multicast::cluster");
        // The two state spaces in the order written: destination, then source.
        let spaces: Vec<String> = m
            .list
            .iter()
            .filter(|x| matches!(x.as_str(), "global" | "shared::cta" | "shared::cluster"))
            .cloned()
            .collect();
        let dir = match spaces.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            // `.shared::cta` destinations: PTX ISA 8.6's spelling for the block's own.
            ["shared::cluster" | "shared::cta", "global"] => BulkDir::GlobalToShared,
            ["shared::cluster", "shared::cta"] => BulkDir::SharedToShared,
            ["global", "shared::cta"] => BulkDir::SharedToGlobal,
            _ => return Err(unsup(m, "")),
        };
        // A `.shared::cluster` destination may be another block's (its mbarrier too).
        let to_cluster = spaces[0] == "shared::cluster";
        for s in &spaces {
            m.take(s);
        }
        let completes = dir != BulkDir::SharedToGlobal;
        if completes && !m.take("mbarrier::complete_tx::bytes")
            || !completes && !m.take("bulk_group")
        {
            return Err(unsup(m, ""));
        }
        let policy = m.take("L2::cache_hint");
        let mut ops: &[Opnd] = &i.ops;
        if policy {
            let Some((last, rest)) = ops.split_last() else {
                return Err(semantic(
                    i,
                    "`.L2::cache_hint` needs a cache-policy operand",
                ));
            };
            self.src(i, last)?;
            ops = rest;
        }
        if multicast && dir != BulkDir::GlobalToShared {
            return Err(unsup(m, ": multicast copies from global memory"));
        }
        let want = if completes { 4 } else { 3 } + multicast as usize;
        if ops.len() != want {
            return Err(semantic(
                i,
                format!("`{}` takes {want} operands (and a cache policy)", m.full),
            ));
        }
        let shared_dst = if to_cluster {
            Space::SharedCluster
        } else {
            Space::Shared
        };
        let (dst_space, src_space) = match dir {
            BulkDir::GlobalToShared => (shared_dst, Space::Global),
            BulkDir::SharedToShared => (shared_dst, Space::Shared),
            BulkDir::SharedToGlobal => (Space::Global, Space::Shared),
        };
        Ok(Op::Async(Box::new(AsyncOp::Bulk {
            dir,
            dst: self.addr_op(i, &ops[0], dst_space)?,
            src: self.addr_op(i, &ops[1], src_space)?,
            size: self.src(i, &ops[2])?,
            bar: match ops.get(3) {
                Some(o) => Some(self.addr_op(i, o, shared_dst)?),
                None => None,
            },
            multicast: match multicast {
                true => Some(self.src(i, &ops[4])?),
                false => None,
            },
        })))
    }

    /// `cp.reduce.async.bulk.{dst}.{src}.{completion}.{op}.{type}`, after `cp.reduce.async`.
    fn bulk_reduce(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let unsup = |m: &Mods, why: &str| {
            unsupported(i, format!("unsupported instruction `{}`{why}", m.full))
        };
        if !m.take("bulk") {
            return Err(unsup(m, ""));
        }
        if m.take("tensor") {
            // `cp.reduce.async.bulk.tensor.Nd.global.shared::cta.OP.tile.bulk_group`: a
            // tensor store that reduces, in the tensor map's element type.
            let op = match m
                .take_any(&["add", "min", "max", "inc", "dec", "and", "or", "xor"])
                .as_deref()
            {
                Some("add") => AtomOp::Add,
                Some("min") => AtomOp::Min,
                Some("max") => AtomOp::Max,
                Some("inc") => AtomOp::Inc,
                Some("dec") => AtomOp::Dec,
                Some("and") => AtomOp::And,
                Some("or") => AtomOp::Or,
                Some("xor") => AtomOp::Xor,
                _ => return Err(unsup(m, "")),
            };
            let mut op_ = self.tensor(i, m)?;
            if let Op::Async(a) = &mut op_ {
                if let AsyncOp::Tensor {
                    load: false,
                    reduce,
                    ..
                } = a.as_mut()
                {
                    *reduce = Some(op);
                    return Ok(op_);
                }
            }
            return Err(unsup(
                m,
                ": tensor reductions go from shared to global memory",
            ));
        }
        let to_global = if m.take("global") {
            if !m.take("shared::cta") || !m.take("bulk_group") {
                return Err(unsup(m, ""));
            }
            true
        } else if m.take("shared::cluster") {
            if !m.take("shared::cta") || !m.take("mbarrier::complete_tx::bytes") {
                return Err(unsup(m, ""));
            }
            false
        } else {
            return Err(unsup(m, ""));
        };
        let op = match m
            .take_any(&["add", "min", "max", "inc", "dec", "and", "or", "xor"])
            .as_deref()
        {
            Some("add") => AtomOp::Add,
            Some("min") => AtomOp::Min,
            Some("max") => AtomOp::Max,
            Some("inc") => AtomOp::Inc,
            Some("dec") => AtomOp::Dec,
            Some("and") => AtomOp::And,
            Some("or") => AtomOp::Or,
            Some("xor") => AtomOp::Xor,
            _ => return Err(unsup(m, "")),
        };
        let noftz = m.take("noftz");
        let ty = self.one_type(i, m)?;
        // Halves only into global memory, as ptxas takes them: `add` with `.noftz` (as
        // `atom`'s, rounded once, subnormals kept), `min`/`max` without.
        let half = matches!(ty, Ty::F16 | Ty::BF16);
        if half && !to_global || noftz != (half && op == AtomOp::Add) {
            return Err(unsup(m, ""));
        }
        let ok = match op {
            AtomOp::Add => matches!(
                ty,
                Ty::U32 | Ty::S32 | Ty::U64 | Ty::F32 | Ty::F64 | Ty::F16 | Ty::BF16
            ),
            AtomOp::Min | AtomOp::Max => matches!(
                ty,
                Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64 | Ty::F16 | Ty::BF16
            ),
            AtomOp::Inc | AtomOp::Dec => ty == Ty::U32,
            _ => matches!(ty, Ty::B32 | Ty::B64),
        };
        if !ok {
            return Err(unsup(m, ""));
        }
        let mut ops: &[Opnd] = &i.ops;
        if m.take("L2::cache_hint") {
            let Some((last, rest)) = ops.split_last() else {
                return Err(semantic(
                    i,
                    "`.L2::cache_hint` needs a cache-policy operand",
                ));
            };
            self.src(i, last)?;
            ops = rest;
        }
        let want = if to_global { 3 } else { 4 };
        if ops.len() != want {
            return Err(semantic(
                i,
                format!("`{}` takes {want} operands (and a cache policy)", m.full),
            ));
        }
        let dst_space = if to_global {
            Space::Global
        } else {
            Space::Shared
        };
        Ok(Op::Async(Box::new(AsyncOp::BulkReduce {
            op,
            ty,
            dst: self.addr_op(i, &ops[0], dst_space)?,
            src: self.addr_op(i, &ops[1], Space::Shared)?,
            size: self.src(i, &ops[2])?,
            bar: match ops.get(3) {
                Some(o) => Some(self.addr_op(i, o, Space::Shared)?),
                None => None,
            },
        })))
    }

    /// `cp.async.bulk.tensor.Nd...`, after `cp.async.bulk.tensor`: tiled and im2col
    /// loads into shared memory completing on an mbarrier (multicast to the cluster's
    /// blocks or not), and tiled stores in bulk groups.
    fn tensor(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let unsup = |m: &Mods, why: &str| {
            unsupported(i, format!("unsupported instruction `{}`{why}", m.full))
        };
        let dims = match m.take_any(&["1d", "2d", "3d", "4d", "5d"]).as_deref() {
            Some(d) => d.as_bytes()[0] - b'0',
            None => return Err(unsup(m, "")),
        };
        // `.im2col` loads take the map's im2col offsets after the mbarrier; the other
        // load modes (sm_100's `.im2col::w`, `.tile::gather4`) and im2col stores are not
        // emulated.
        let im2col = m.take("im2col");
        if m.list
            .iter()
            .any(|x| x.starts_with("im2col") || x.starts_with("tile::"))
        {
            return Err(unsup(m, ": this tensor copy mode is not emulated"));
        }
        let multicast = m.take("multicast::cluster");
        if m.list.iter().any(|x| x.starts_with("multicast")) {
            return Err(unsup(m, ""));
        }
        m.take("tile");
        // The destination is the first state space written; a `.shared::cta` one is PTX
        // ISA 8.6's spelling of the block's own.
        let first = m
            .list
            .iter()
            .find(|x| matches!(x.as_str(), "global" | "shared::cta" | "shared::cluster"))
            .cloned();
        let load = if first.as_deref() != Some("global")
            && m.take_any(&["shared::cluster", "shared::cta"]).is_some()
            && m.take("global")
        {
            if !m.take("mbarrier::complete_tx::bytes") {
                return Err(unsup(m, ""));
            }
            true
        } else if m.take("global") && m.take("shared::cta") {
            if !m.take("bulk_group") {
                return Err(unsup(m, ""));
            }
            false
        } else {
            return Err(unsup(m, ""));
        };
        let mut ops: &[Opnd] = &i.ops;
        if m.take("L2::cache_hint") {
            let Some((last, rest)) = ops.split_last() else {
                return Err(semantic(
                    i,
                    "`.L2::cache_hint` needs a cache-policy operand",
                ));
            };
            self.src(i, last)?;
            ops = rest;
        }
        if (im2col || multicast) && !load {
            return Err(unsup(
                m,
                ": im2col and multicast tensor copies go from global to shared memory",
            ));
        }
        let want = if load { 3 } else { 2 } + im2col as usize + multicast as usize;
        if ops.len() != want {
            return Err(semantic(
                i,
                format!("`{}` takes {want} operands (and a cache policy)", m.full),
            ));
        }
        let offsets = if im2col {
            let parts: Vec<&Opnd> = match &ops[3] {
                Opnd::Vector(v) => v.iter().collect(),
                o => vec![o],
            };
            if dims < 3 || parts.len() != dims as usize - 2 {
                return Err(semantic(
                    i,
                    format!(
                        "a {dims}d im2col copy takes {} im2col offsets, found {}",
                        dims.saturating_sub(2),
                        parts.len()
                    ),
                ));
            }
            let mut o = [Src::Imm(0); 3];
            for (slot, p) in o.iter_mut().zip(parts) {
                *slot = self.src(i, p)?;
            }
            Some(o)
        } else {
            None
        };
        let mask = if multicast {
            Some(self.src(i, &ops[want - 1])?)
        } else {
            None
        };
        let (map_op, smem_op) = if load {
            (&ops[1], &ops[0])
        } else {
            (&ops[0], &ops[1])
        };
        let Opnd::Image(name, None, coords) = map_op else {
            return Err(semantic(i, "expected `[tensorMap, {coordinates}]`"));
        };
        let map = self.src(i, &Opnd::Name(name.clone()))?;
        let parts: Vec<&Opnd> = match coords.as_ref() {
            Opnd::Vector(v) => v.iter().collect(),
            o => vec![o],
        };
        if parts.len() != dims as usize {
            return Err(semantic(
                i,
                format!(
                    "a {dims}d tensor copy takes {dims} coordinates, found {}",
                    parts.len()
                ),
            ));
        }
        let mut c = [Src::Imm(0); 5];
        for (slot, p) in c.iter_mut().zip(parts) {
            *slot = self.src(i, p)?;
        }
        Ok(Op::Async(Box::new(AsyncOp::Tensor {
            load,
            reduce: None,
            dims,
            smem: self.addr_op(i, smem_op, Space::Shared)?,
            map,
            coords: c,
            bar: if load {
                Some(self.addr_op(i, &ops[2], Space::Shared)?)
            } else {
                None
            },
            im2col: offsets,
            multicast: mask,
        })))
    }

    /// `tensormap.replace` and `tensormap.cp_fenceproxy` (sm_90a).
    pub(super) fn tensormap(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let unsup = |m: &Mods| unsupported(i, format!("unsupported instruction `{}`", m.full));
        if m.take("cp_fenceproxy") {
            // The copy of a map its writer made in shared memory to global memory, with
            // the proxy fence (nothing to order here: copies run in program order).
            if !m.take("global") || !m.take("shared::cta") || !m.take("tensormap::generic") {
                return Err(unsup(m));
            }
            Self::take_ordering(m);
            m.take_any(&["gpu", "sys"]);
            m.take("sync");
            m.take("aligned");
            self.nops(i, 3)?;
            return Ok(Op::Async(Box::new(AsyncOp::TensormapCopy {
                dst: self.addr_op(i, &i.ops[0], Space::Global)?,
                src: self.addr_op(i, &i.ops[1], Space::Shared)?,
                size: self.src(i, &i.ops[2])?,
            })));
        }
        if !m.take("replace") || !m.take("tile") || !m.take("b1024") {
            return Err(unsup(m));
        }
        let field = match m
            .take_any(&[
                "global_address",
                "rank",
                "box_dim",
                "global_dim",
                "global_stride",
                "element_stride",
                "elemtype",
                "interleave_layout",
                "swizzle_mode",
                "fill_mode",
            ])
            .as_deref()
        {
            Some("global_address") => MapField::GlobalAddress,
            Some("rank") => MapField::Rank,
            Some("box_dim") => MapField::BoxDim,
            Some("global_dim") => MapField::GlobalDim,
            Some("global_stride") => MapField::GlobalStride,
            Some("element_stride") => MapField::ElementStride,
            Some("elemtype") => MapField::ElemType,
            Some("interleave_layout") => MapField::InterleaveLayout,
            Some("swizzle_mode") => MapField::SwizzleMode,
            Some("fill_mode") => MapField::FillMode,
            _ => return Err(unsup(m)),
        };
        let space = match m.take_any(&["global", "shared::cta"]).as_deref() {
            Some("global") => Space::Global,
            Some(_) => Space::Shared,
            None => Space::Generic,
        };
        if m.take_any(&["b32", "b64"]).is_none() {
            return Err(unsup(m));
        }
        let with_ord = matches!(
            field,
            MapField::BoxDim
                | MapField::GlobalDim
                | MapField::GlobalStride
                | MapField::ElementStride
        );
        self.nops(i, if with_ord { 3 } else { 2 })?;
        let ord = if with_ord {
            match i.ops[1] {
                Opnd::Int(n) if n < 5 => n as u8,
                _ => return Err(semantic(i, "`ord` is an integer constant below 5")),
            }
        } else {
            0
        };
        Ok(Op::Async(Box::new(AsyncOp::TensormapReplace {
            map: self.addr_op(i, &i.ops[0], space)?,
            field,
            ord,
            value: self.src(i, i.ops.last().unwrap_or(&i.ops[0]))?,
        })))
    }

    /// `st.async` and `red.async` (after `.async` was taken): a store or reduction into a
    /// block of the cluster completing its bytes on that block's mbarrier.
    pub(super) fn store_async(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let unsup = |m: &Mods| unsupported(i, format!("unsupported instruction `{}`", m.full));
        Self::take_ordering(m);
        m.take("weak");
        if !m.take("shared::cluster") || !m.take("mbarrier::complete_tx::bytes") {
            return Err(unsup(m));
        }
        let red = if i.opcode == "red" {
            Some(
                match m
                    .take_any(&["add", "min", "max", "inc", "dec", "and", "or", "xor"])
                    .as_deref()
                {
                    Some("add") => AtomOp::Add,
                    Some("min") => AtomOp::Min,
                    Some("max") => AtomOp::Max,
                    Some("inc") => AtomOp::Inc,
                    Some("dec") => AtomOp::Dec,
                    Some("and") => AtomOp::And,
                    Some("or") => AtomOp::Or,
                    _ => AtomOp::Xor,
                },
            )
        } else {
            None
        };
        let n = match m.take_any(&["v2", "v4"]).as_deref() {
            Some("v2") => 2,
            Some("v4") => 4,
            _ => 1,
        };
        let t = m.types();
        let [ty] = t.as_slice() else {
            return Err(unsup(m));
        };
        let ty = *ty;
        if !matches!(ty.bytes(), 4 | 8) || red.is_some() && n != 1 {
            return Err(unsup(m));
        }
        self.nops(i, 3)?;
        let vals: Vec<&Opnd> = match &i.ops[1] {
            Opnd::Vector(v) => v.iter().collect(),
            o => vec![o],
        };
        if vals.len() != n {
            return Err(semantic(i, format!("`{}` needs {n} values", m.full)));
        }
        let mut v = [Src::Imm(0); 4];
        for (k, o) in vals.iter().enumerate() {
            v[k] = self.src(i, o)?;
        }
        Ok(Op::Async(Box::new(AsyncOp::StoreAsync {
            dst: self.addr_op(i, &i.ops[0], Space::SharedCluster)?,
            vals: v,
            n: n as u8,
            ty,
            red,
            bar: self.addr_op(i, &i.ops[2], Space::SharedCluster)?,
        })))
    }

    /// `mbarrier.*`.
    pub(super) fn mbarrier(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let unsup = |m: &Mods| unsupported(i, format!("unsupported instruction `{}`", m.full));
        Self::take_ordering(m);
        let verb = m
            .take_any(&[
                "init",
                "inval",
                "arrive",
                "arrive_drop",
                "expect_tx",
                "complete_tx",
                "test_wait",
                "try_wait",
                "pending_count",
            ])
            .ok_or_else(|| unsup(m))?;
        let space = Self::mbar_space(m);
        if !m.take("b64") {
            return Err(unsup(m));
        }
        let bar = |this: &Self, k: usize| this.addr_op(i, &i.ops[k], space);
        let op = match verb.as_str() {
            "init" => {
                self.nops(i, 2)?;
                AsyncOp::Init {
                    bar: bar(self, 0)?,
                    count: self.src(i, &i.ops[1])?,
                }
            }
            "inval" => {
                self.nops(i, 1)?;
                AsyncOp::Inval { bar: bar(self, 0)? }
            }
            "arrive" | "arrive_drop" => {
                // `.noComplete` (sm_80): the program promises this arrival completes no
                // phase; the executor completes what an arrival completes.
                m.take("noComplete");
                let expect = m.take("expect_tx");
                if !matches!(i.ops.len(), 2 | 3) {
                    return Err(semantic(i, format!("`{}` takes 2 or 3 operands", m.full)));
                }
                let third = match i.ops.get(2) {
                    Some(o) => Some(self.src(i, o)?),
                    None => None,
                };
                if expect && third.is_none() {
                    return Err(semantic(i, "`.expect_tx` needs a transaction count"));
                }
                AsyncOp::Arrive {
                    d: self.reg(i, &i.ops[0])?,
                    bar: bar(self, 1)?,
                    count: if expect {
                        Src::Imm(1)
                    } else {
                        third.unwrap_or(Src::Imm(1))
                    },
                    drop: verb == "arrive_drop",
                    expect_tx: if expect { third } else { None },
                }
            }
            "expect_tx" | "complete_tx" => {
                self.nops(i, 2)?;
                AsyncOp::Tx {
                    bar: bar(self, 0)?,
                    bytes: self.src(i, &i.ops[1])?,
                    complete: verb == "complete_tx",
                }
            }
            "pending_count" => {
                self.nops(i, 2)?;
                AsyncOp::PendingCount {
                    d: self.reg(i, &i.ops[0])?,
                    state: self.src(i, &i.ops[1])?,
                }
            }
            _ => {
                let parity = m.take("parity");
                let is_try = verb == "try_wait";
                if !(i.ops.len() == 3 || is_try && i.ops.len() == 4) {
                    return Err(semantic(
                        i,
                        format!("`{}`: wrong number of operands", m.full),
                    ));
                }
                return Ok(Op::MbarWait(Box::new(MbarWait {
                    d: self.reg(i, &i.ops[0])?,
                    bar: bar(self, 1)?,
                    token: self.src(i, &i.ops[2])?,
                    parity,
                    hint: match i.ops.get(3) {
                        Some(o) => Some(self.src(i, o)?),
                        None => None,
                    },
                })));
            }
        };
        Ok(Op::Async(Box::new(op)))
    }
}
