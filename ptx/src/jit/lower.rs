//! `decode::Program` to Cranelift IR, one function per kernel (see the module doc of
//! `jit`): a jump table on the entry pc, then one piece of code per *unit*: a run of
//! natively compiled instructions (a loop over the group's lanes), one instruction run
//! through the interpreter's code, a branch, or a return to the interpreter.

use std::collections::HashMap;

mod uniform;

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    types, AbiParam, Block, BlockArg, InstBuilder, JumpTableData, MemFlags, Signature,
    StackSlotData, StackSlotKind, Value,
};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module as _};

use super::native::{self, FOp, IntOp, PredOp, N};
use super::{Compiled, EntryFn};
use super::{
    OFF_CTAID, OFF_DYN_SHARED, OFF_NCTAID, OFF_NTID, OFF_PARAMS, OFF_PARAMS_LEN, OFF_SHARED,
    OFF_SHARED_LIMIT, OFF_TIDS, OFF_TLB, TLB_BASE, TLB_ENTRY_SIZE, TLB_HOST, TLB_LEN, TLB_WRITABLE,
};
use super::{OFF_INSTRUCTIONS, OFF_MASK, OFF_OTHER, OFF_PREDS, OFF_REGS, OFF_STEPS, OFF_STOP_AT};
use crate::decode::{BoolOp, Dst, Op, Program, Space, Src, Sreg};
use crate::executor::TLB_ENTRIES;
use crate::math::{Cmp, Ty};
use crate::{PARAM_WINDOW, SHARED_WINDOW, WINDOW_SIZE};

/// Runs of at most this many instructions run full warps four lanes an iteration
/// (`Gen::run`): longer bodies would cost more compile time than they save.
const UNROLL_MAX_LEN: usize = 4;

/// An instruction the compiler emits itself.
#[derive(Clone, Copy)]
struct Native {
    n: N,
    /// Destination; `q` the second of `setp p|q`.
    d: Dst,
    q: Dst,
    s: [Src; 4],
    nsrc: u8,
    comb: Option<(BoolOp, Src)>,
}

/// A load or store the compiler emits itself (`Gen::mem`).
#[derive(Clone, Copy)]
struct Mem {
    space: Space,
    /// Bytes of one element, and whether a load sign-extends it.
    size: u8,
    signed: bool,
    /// Elements (1, 2 or 4).
    n: u8,
    /// Loads: destinations; stores: `None`.
    d: Option<[Dst; 4]>,
    /// Stores: values.
    v: [Src; 4],
    addr: Src,
    off: i64,
}

enum Kind {
    Native(Native),
    Mem(Mem),
    /// Any other non-control instruction: the interpreter's code runs it.
    Helper,
    Bra(u32),
    /// Other control flow: the interpreter runs it.
    Stop,
}

fn plain(s: Src) -> bool {
    matches!(
        s,
        Src::Reg(_)
            | Src::Imm(_)
            | Src::Pred(_)
            | Src::NotPred(_)
            | Src::DynShared(_)
            | Src::Sreg(
                Sreg::Tid(0..=2)
                    | Sreg::Ntid(0..=2)
                    | Sreg::Ctaid(0..=2)
                    | Sreg::Nctaid(0..=2)
                    | Sreg::Laneid
            )
    )
}

/// Registers each instruction reads and (in every lane it runs for: unguarded) writes,
/// for `liveness`; None for an instruction whose reads it does not know exactly.
fn uses(inst: &crate::decode::Inst, kind: Option<&Kind>) -> Option<(Vec<u32>, Vec<u32>)> {
    let regs = |s: &[Src]| -> Vec<u32> {
        s.iter()
            .filter_map(|s| match s {
                Src::Reg(r) => Some(*r),
                _ => None,
            })
            .collect()
    };
    let dsts = |d: &[Dst]| -> Vec<u32> {
        if inst.guard.is_some() {
            // Lanes the guard skips keep the old value: nothing is overwritten for sure.
            return Vec::new();
        }
        d.iter()
            .filter_map(|d| match d {
                Dst::Reg(r) => Some(*r),
                _ => None,
            })
            .collect()
    };
    Some(match kind? {
        Kind::Native(x) => {
            // Operands past `nsrc` are the first (`Gen::native`).
            let mut r = regs(&x.s[..x.nsrc as usize]);
            r.extend(regs(&[x.s[0]]));
            if let Some((_, c)) = x.comb {
                r.extend(regs(&[c]));
            }
            (r, dsts(&[x.d, x.q]))
        }
        Kind::Mem(m) => match m.d {
            Some(d) => (regs(&[m.addr]), dsts(&d[..m.n as usize])),
            None => {
                let mut r = regs(&m.v[..m.n as usize]);
                r.extend(regs(&[m.addr]));
                (r, Vec::new())
            }
        },
        Kind::Bra(_) => (Vec::new(), Vec::new()),
        Kind::Stop => match &inst.op {
            Op::Exit | Op::Ret | Op::Trap => (Vec::new(), Vec::new()),
            Op::Bar {
                id, count, pred, ..
            } => {
                let mut r = regs(&[*id]);
                r.extend(count.iter().chain(pred.iter()).filter_map(|s| match s {
                    Src::Reg(r) => Some(*r),
                    _ => None,
                }));
                (r, Vec::new())
            }
            Op::ClusterWait => (Vec::new(), Vec::new()),
            Op::MbarWait(w) => {
                let mut r = regs(&[w.bar.base, w.token]);
                r.extend(regs(&w.hint.iter().copied().collect::<Vec<_>>()));
                (r, Vec::new())
            }
            _ => return None,
        },
        Kind::Helper => return helper_uses(&inst.op, regs),
    })
}

/// `uses` of an instruction run through the interpreter's code: the registers its
/// operands name; it kills none (whether the interpreter's code writes a destination in
/// every lane is not asserted here, so its old value stays live).
fn helper_uses(op: &Op, regs: impl Fn(&[Src]) -> Vec<u32>) -> Option<(Vec<u32>, Vec<u32>)> {
    let comb = |c: &Option<(BoolOp, Src)>| c.map(|(_, s)| s).unwrap_or(Src::Imm(0));
    let reads = match op {
        Op::Alu { s, n, .. } => {
            let mut r = regs(&s[..*n as usize]);
            r.extend(regs(&[s[0]]));
            r
        }
        Op::Cvt { a, .. } | Op::Unpack { a, .. } => regs(&[*a]),
        Op::Video { s, .. } => regs(s),
        Op::Lop3Pred { s, q, .. } => {
            let mut r = regs(s);
            r.extend(regs(&[*q]));
            r
        }
        Op::Alloca { size, .. } => regs(&[*size]),
        Op::StackRestore { a } => regs(&[*a]),
        Op::StackSave { .. } | Op::SetMaxNreg => Vec::new(),
        Op::Setp { a, b, comb: c, .. }
        | Op::SetpPair { a, b, comb: c, .. }
        | Op::Set { a, b, comb: c, .. }
        | Op::SetHalf { a, b, comb: c, .. } => regs(&[*a, *b, comb(c)]),
        Op::Pack { parts, n, .. } => regs(&parts[..*n as usize]),
        Op::Ld { addr, .. } => regs(&[*addr]),
        Op::St { v, addr, n, .. } => {
            let mut r = regs(&v[..*n as usize]);
            r.extend(regs(&[*addr]));
            r
        }
        Op::Atom { addr, b, c, .. } => regs(&[*addr, *b, *c]),
        Op::Mov2 { s, .. } => regs(s),
        Op::AtomWide(x) => {
            let mut r = regs(&[x.addr]);
            r.extend(regs(&x.b));
            r.extend(regs(&x.c));
            r
        }
        Op::Carry { a, b, c, .. } => regs(&[*a, *b, *c]),
        Op::Elect { mask, .. } => regs(&[*mask]),
        // Activemask reads no register; printf, malloc and free read local memory only.
        Op::Activemask { .. }
        | Op::Nop
        | Op::WarpSync { .. }
        | Op::Vprintf { .. }
        | Op::Malloc { .. }
        | Op::Free { .. }
        | Op::DeviceRuntime { .. }
        | Op::ClusterArrive => Vec::new(),
        Op::GetCtaRank { a, .. } => regs(&[*a]),
        Op::Async(a) => regs(&a.sources()),
        // Texture and surface instructions read only their own lane's operands.
        Op::Image(img) => regs(&img.sources()),
        Op::Shfl { a, b, c, _mask, .. } => regs(&[*a, *b, *c, *_mask]),
        Op::Vote { a, mask, .. } | Op::Match { a, mask, .. } | Op::Redux { a, mask, .. } => {
            regs(&[*a, *mask])
        }
        _ => return None,
    };
    Some((reads, Vec::new()))
}

/// Registers an instruction reads in other lanes than its own (shuffles and the other
/// warp-wide instructions): live everywhere, since those lanes may be anywhere.
fn cross_lane_reads(op: &Op) -> Vec<u32> {
    let src = match op {
        Op::Shfl { a, .. } | Op::Vote { a, .. } | Op::Match { a, .. } | Op::Redux { a, .. } => *a,
        _ => return Vec::new(),
    };
    match src {
        Src::Reg(r) => vec![r],
        _ => Vec::new(),
    }
}

/// Registers live at each pc (one bit per register): those some path from there reads
/// before overwriting. Runs store only registers live after them; the others' values
/// are never read. Exiting goes on at the entry, as the next block on this host thread
/// finds the registers this one left (`run_block`), so a register read before written
/// stays live to the end. None (every register live) when the kernel has an
/// instruction whose register reads are not known here: an instruction run through the
/// interpreter's code reads other lanes' registers (shuffles, votes), the registers it
/// reads are live everywhere: those lanes may be anywhere in the program.
fn liveness(
    prog: &Program,
    reach: &[bool],
    kinds: &[Option<Kind>],
    entry: usize,
) -> Option<Vec<Vec<u64>>> {
    let n = prog.insts.len();
    let words = (prog.nregs as usize).div_ceil(64).max(1);
    if n.saturating_mul(words) > 1 << 22 {
        return None;
    }
    let mut rw = Vec::with_capacity(n);
    for pc in 0..n {
        rw.push(if reach[pc] {
            uses(&prog.insts[pc], kinds[pc].as_ref())?
        } else {
            (Vec::new(), Vec::new())
        });
    }
    let mut everywhere = vec![0u64; words];
    for pc in (0..n).filter(|pc| reach[*pc]) {
        for r in cross_lane_reads(&prog.insts[pc].op) {
            everywhere[r as usize / 64] |= 1u64 << (r % 64);
        }
    }
    let mut live = vec![everywhere.clone(); n + 1];
    let mut changed = true;
    while changed {
        changed = false;
        for pc in (0..n).rev() {
            if !reach[pc] {
                continue;
            }
            let inst = &prog.insts[pc];
            let mut out = vec![0u64; words];
            let mut join = |pc: usize, live: &Vec<Vec<u64>>| {
                for (o, x) in out.iter_mut().zip(&live[pc.min(n)]) {
                    *o |= x;
                }
            };
            let ends = matches!(inst.op, Op::Exit | Op::Ret);
            match inst.op {
                Op::Bra { target } => {
                    join(target as usize, &live);
                    if inst.guard.is_some() {
                        join(pc + 1, &live);
                    }
                }
                _ if ends => {
                    join(entry, &live);
                    if inst.guard.is_some() {
                        join(pc + 1, &live);
                    }
                }
                _ => join(pc + 1, &live),
            }
            let (reads, writes) = &rw[pc];
            for r in writes {
                out[*r as usize / 64] &= !(1u64 << (r % 64));
            }
            for r in reads {
                out[*r as usize / 64] |= 1u64 << (r % 64);
            }
            for (o, e) in out.iter_mut().zip(&everywhere) {
                *o |= e;
            }
            if out != live[pc] {
                live[pc] = out;
                changed = true;
            }
        }
    }
    Some(live)
}

/// Predicates live at each pc (one bit per predicate), as `liveness` finds registers':
/// a run merges into the predicate words only what some path reads before overwriting.
/// An instruction reads every predicate it names (`InstInfo::names`, so nothing the
/// interpreter's code reads is missed), except what a compiled instruction only writes;
/// only a compiled, unguarded instruction kills what it writes. What an instruction
/// reading other lanes names (votes, shuffles) is live everywhere: those lanes may be
/// anywhere in the program.
fn pred_liveness(
    prog: &Program,
    reach: &[bool],
    kinds: &[Option<Kind>],
    entry: usize,
) -> Option<Vec<Vec<u64>>> {
    use crate::decode::Named;
    let n = prog.insts.len();
    let words = (prog.npreds as usize).div_ceil(64).max(1);
    if n.saturating_mul(words) > 1 << 22 {
        return None;
    }
    let bit = |v: &mut Vec<u64>, p: u32, on: bool| {
        let (w, b) = (p as usize / 64, 1u64 << (p % 64));
        if on {
            v[w] |= b
        } else {
            v[w] &= !b
        }
    };
    let mut reads = vec![Vec::new(); n];
    let mut kills = vec![Vec::new(); n];
    let mut everywhere = vec![0u64; words];
    for pc in (0..n).filter(|pc| reach[*pc]) {
        let inst = &prog.insts[pc];
        let named: Vec<u32> = prog.info[pc]
            .names
            .iter()
            .filter_map(|x| match x {
                Named::Pred(p) => Some(*p),
                Named::Reg(_) => None,
            })
            .collect();
        if !cross_lane_reads(&inst.op).is_empty()
            || matches!(
                inst.op,
                Op::Shfl { .. } | Op::Vote { .. } | Op::Match { .. } | Op::Redux { .. }
            )
        {
            for p in &named {
                bit(&mut everywhere, *p, true);
            }
        }
        match &kinds[pc] {
            Some(Kind::Native(x)) => {
                let mut r: Vec<u32> = inst.guard.iter().map(|g| g.0).collect();
                let srcs = x.s[..x.nsrc as usize]
                    .iter()
                    .chain([&x.s[0]])
                    .chain(x.comb.as_ref().map(|(_, c)| c));
                for s in srcs {
                    if let Src::Pred(p) | Src::NotPred(p) = s {
                        r.push(*p);
                    }
                }
                // Anything else it names (never expected) counts as read.
                let writes: Vec<u32> = [x.d, x.q]
                    .iter()
                    .filter_map(|d| match d {
                        Dst::Pred(p) => Some(*p),
                        _ => None,
                    })
                    .collect();
                r.extend(named.iter().filter(|p| !writes.contains(p)));
                if inst.guard.is_none() {
                    kills[pc] = writes;
                }
                reads[pc] = r;
            }
            _ => reads[pc] = named,
        }
    }
    let mut live = vec![everywhere.clone(); n + 1];
    let mut changed = true;
    while changed {
        changed = false;
        for pc in (0..n).rev() {
            if !reach[pc] {
                continue;
            }
            let inst = &prog.insts[pc];
            let mut out = vec![0u64; words];
            let mut join = |pc: usize, live: &Vec<Vec<u64>>| {
                for (o, x) in out.iter_mut().zip(&live[pc.min(n)]) {
                    *o |= x;
                }
            };
            match inst.op {
                Op::Bra { target } => {
                    join(target as usize, &live);
                    if inst.guard.is_some() {
                        join(pc + 1, &live);
                    }
                }
                Op::Exit | Op::Ret => {
                    join(entry, &live);
                    if inst.guard.is_some() {
                        join(pc + 1, &live);
                    }
                }
                _ => join(pc + 1, &live),
            }
            for p in &kills[pc] {
                bit(&mut out, *p, false);
            }
            for p in &reads[pc] {
                bit(&mut out, *p, true);
            }
            for (o, e) in out.iter_mut().zip(&everywhere) {
                *o |= e;
            }
            if out != live[pc] {
                live[pc] = out;
                changed = true;
            }
        }
    }
    Some(live)
}

/// Which instructions of a run the first pass needs: those computing (within the run)
/// an address or a guard of a load or store. `RunFit` keeps loaded values out of them.
fn address_slice(list: &[Item], guards: &[Option<(u32, bool)>]) -> Vec<bool> {
    let (mut regs, mut preds): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    let mut out = vec![false; list.len()];
    fn need(s: Src, regs: &mut Vec<u32>, preds: &mut Vec<u32>) {
        match s {
            Src::Reg(r) if !regs.contains(&r) => regs.push(r),
            Src::Pred(p) | Src::NotPred(p) if !preds.contains(&p) => preds.push(p),
            _ => {}
        }
    }
    let needed = |d: Dst, regs: &Vec<u32>, preds: &Vec<u32>| match d {
        Dst::Reg(r) => regs.contains(&r),
        Dst::Pred(p) => preds.contains(&p),
        Dst::Sink => false,
    };
    for k in (0..list.len()).rev() {
        let take = match list[k] {
            Item::Skip { .. } => false,
            Item::Mem(m) if m.space != Space::KParam => {
                need(m.addr, &mut regs, &mut preds);
                true
            }
            Item::Mem(m) => m.d.is_some_and(|d| needed(d[0], &regs, &preds)),
            Item::Nat(x) => {
                let t = needed(x.d, &regs, &preds) || needed(x.q, &regs, &preds);
                if t {
                    for s in x.s[..x.nsrc as usize]
                        .iter()
                        .chain(x.comb.as_ref().map(|(_, c)| c))
                    {
                        need(*s, &mut regs, &mut preds);
                    }
                    // Operands past `nsrc` are the first (`Gen::native`).
                    need(x.s[0], &mut regs, &mut preds);
                }
                t
            }
        };
        if take {
            out[k] = true;
            if let Some((p, _)) = guards[k] {
                need(Src::Pred(p), &mut regs, &mut preds);
            }
        }
    }
    out
}

/// The operands `Gen::native_eval` reads, and how many: operands past `nsrc` are the
/// first, as the interpreter passes them.
fn operands(x: &Native) -> ([Src; 4], usize) {
    let need = match x.n {
        N::Int { op, .. } => match op {
            IntOp::Not | IntOp::Neg => 1,
            IntOp::MadLo | IntOp::MadWide => 3,
            _ => 2,
        },
        N::Mov | N::Cvt { .. } => 1,
        N::Selp => 3,
        N::Pred(PredOp::Not | PredOp::Mov) => 1,
        N::Pred(_) => 2,
        N::F32(FOp::Fma) => 3,
        N::F32(FOp::Abs | FOp::Neg | FOp::Sqrt | FOp::Rcp) => 1,
        N::CvtToF32 { .. } => 1,
        N::F32(_) | N::CmpInt { .. } | N::CmpF32(_) => 2,
        N::Call(_) => 4,
    };
    let mut s = [x.s[0]; 4];
    for (k, v) in s.iter_mut().enumerate().take(need) {
        if k < x.nsrc as usize {
            *v = x.s[k];
        }
    }
    (s, need)
}

/// Whether `s` has one value in every lane of a run, given the registers and predicates
/// computed uniformly so far in it (`Gen::run`), those uniform in the whole kernel
/// (`uni`) and those the run has written lane by lane so far (`clobbered`).
fn uniform(s: Src, st: &LaneState, uni: &uniform::Uniform, clobbered: &[Dst]) -> bool {
    match s {
        Src::Imm(_) | Src::DynShared(_) => true,
        Src::Sreg(Sreg::Ntid(_) | Sreg::Ctaid(_) | Sreg::Nctaid(_)) => true,
        Src::Reg(r) => {
            st.regs.contains_key(&r) || (uni.reg(r) && !clobbered.contains(&Dst::Reg(r)))
        }
        Src::Pred(p) | Src::NotPred(p) => {
            st.bits.contains_key(&p) || (uni.pred(p) && !clobbered.contains(&Dst::Pred(p)))
        }
        _ => false,
    }
}

fn classify(op: &Op) -> Kind {
    match op {
        Op::Alu { f, d, s, n } => match native::lookup(*f) {
            Some(nat)
                if !matches!(nat, N::CmpInt { .. } | N::CmpF32(_))
                    && s[..*n as usize].iter().all(|x| plain(*x)) =>
            {
                Kind::Native(Native {
                    n: nat,
                    d: *d,
                    q: Dst::Sink,
                    s: *s,
                    nsrc: *n,
                    comb: None,
                })
            }
            _ => Kind::Helper,
        },
        Op::Setp {
            f,
            p,
            q,
            a,
            b,
            comb,
        } => match native::lookup(*f) {
            Some(nat @ (N::CmpInt { .. } | N::CmpF32(_)))
                if plain(*a)
                    && plain(*b)
                    && comb.is_none_or(|(_, c)| plain(c) && *q == Dst::Sink) =>
            {
                Kind::Native(Native {
                    n: nat,
                    d: *p,
                    q: *q,
                    s: [*a, *b, *a, *a],
                    nsrc: 2,
                    comb: *comb,
                })
            }
            _ => Kind::Helper,
        },
        Op::Ld {
            space,
            ty,
            n,
            d,
            addr,
            off,
        } => match mem_kind(*space, *ty, *n, *addr, *off, false) {
            Some(mut m) if d[..*n as usize].iter().all(|x| !matches!(x, Dst::Pred(_))) => {
                m.d = Some(*d);
                Kind::Mem(m)
            }
            _ => Kind::Helper,
        },
        Op::St {
            space,
            ty,
            n,
            v,
            addr,
            off,
        } => match mem_kind(*space, *ty, *n, *addr, *off, true) {
            Some(mut m)
                if v[..*n as usize]
                    .iter()
                    .all(|x| matches!(x, Src::Reg(_) | Src::Imm(_))) =>
            {
                m.v = *v;
                Kind::Mem(m)
            }
            _ => Kind::Helper,
        },
        // Conversions the interpreter runs through `math::cvt_lanes`: 32-bit integers to
        // f32 to nearest (`cvt_one` gives the host's conversion there: exact in f64,
        // rounded once), else its lane function, called per lane with the spec as an
        // immediate.
        Op::Cvt { spec, d, a } if plain(*a) && !matches!(d, Dst::Pred(_)) => {
            let to_f32 = spec.dst == Ty::F32
                && matches!(spec.src, Ty::S32 | Ty::U32)
                && matches!(spec.rnd, None | Some(crate::math::Rnd::N))
                && spec.int_rnd.is_none()
                && !spec.ftz
                && !spec.sat;
            Kind::Native(Native {
                n: if to_f32 {
                    N::CvtToF32 {
                        signed: spec.src == Ty::S32,
                    }
                } else {
                    N::Call(crate::math::cvt_lane as crate::math::LaneFn as usize)
                },
                d: *d,
                q: Dst::Sink,
                s: [*a, Src::Imm(spec.code()), *a, *a],
                nsrc: 2,
                comb: None,
            })
        }
        Op::Bra { target } => Kind::Bra(*target),
        op if op.is_control() => Kind::Stop,
        _ => Kind::Helper,
    }
}

/// The loads and stores compiled: scalars and vectors of up to 8-byte elements in shared,
/// global, constant and generic memory (stores: not constant), and scalar loads of a
/// parameter at a constant address. Local memory, parameters at register addresses and
/// 16-byte elements stay with the interpreter.
fn mem_kind(space: Space, ty: Ty, n: u8, addr: Src, off: i64, store: bool) -> Option<Mem> {
    let size = ty.bytes();
    if size > 8 || !matches!(n, 1 | 2 | 4) {
        return None;
    }
    let ok = match space {
        Space::Global | Space::Shared | Space::Generic => true,
        Space::Const => !store,
        Space::KParam => {
            // Only the interpreter's own uniform case: one aligned parameter inside the
            // parameter window's first 4 GiB (its bound checked at run time).
            !store
                && n == 1
                && matches!(addr, Src::Imm(a) if a.wrapping_add(off as u64) % size as u64 == 0
                    && param_offset(a.wrapping_add(off as u64)) < u32::MAX as u64)
        }
        // Another block's shared memory: the interpreter's.
        Space::Local | Space::SharedCluster => false,
    };
    let addr_ok = matches!(addr, Src::Reg(_) | Src::Imm(_) | Src::DynShared(_));
    (ok && addr_ok).then_some(Mem {
        space,
        size: size as u8,
        signed: matches!(ty, Ty::S8 | Ty::S16 | Ty::S32),
        n,
        d: None,
        v: [Src::Imm(0); 4],
        addr,
        off,
    })
}

/// A parameter address's offset in the launch's buffer, as `BlockCtx::locate` takes it.
fn param_offset(a: u64) -> u64 {
    if (PARAM_WINDOW..PARAM_WINDOW + WINDOW_SIZE).contains(&a) {
        a - PARAM_WINDOW
    } else {
        a
    }
}

enum Unit {
    /// The instructions from `pc`, one item each, with the guard each runs under.
    Run {
        pc: u32,
        items: Vec<(Item, Option<(u32, bool)>)>,
    },
    Single(u32),
}

fn isa() -> Result<std::sync::Arc<dyn cranelift_codegen::isa::TargetIsa>, String> {
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| f.set(k, v).map_err(|e| e.to_string());
    set(&mut flags, "opt_level", "speed")?;
    // The verifier checks the compiler, not the kernel: debug builds only.
    let verify = if cfg!(debug_assertions) {
        "true"
    } else {
        "false"
    };
    set(&mut flags, "enable_verifier", verify)?;
    let builder = cranelift_native::builder().map_err(|e| e.to_string())?;
    builder
        .finish(settings::Flags::new(flags))
        .map_err(|e| e.to_string())
}

/// The pcs reachable from `entry` (calls are not followed), and those that start a
/// unit: the entry, branch targets, and the pcs after control instructions.
fn reachable(prog: &Program, entry: u32) -> (Vec<bool>, Vec<bool>) {
    let insts = &prog.insts;
    let n = insts.len();
    let mut reach = vec![false; n];
    let mut leader = vec![false; n];
    leader[entry as usize] = true;
    let mut stack = vec![entry as usize];
    while let Some(pc) = stack.pop() {
        if pc >= n || reach[pc] {
            continue;
        }
        reach[pc] = true;
        let inst = &insts[pc];
        let ends = inst.guard.is_none()
            && matches!(
                inst.op,
                Op::Bra { .. } | Op::Exit | Op::Ret | Op::Trap | Op::AssertFail
            );
        if let Op::Bra { target } = inst.op {
            if (target as usize) < n {
                leader[target as usize] = true;
            }
            stack.push(target as usize);
        }
        if inst.op.is_control() && pc + 1 < n {
            leader[pc + 1] = true;
        }
        if !ends {
            stack.push(pc + 1);
        }
    }
    (reach, leader)
}

/// Compiles the code reachable from `entry` (calls are not followed: a warp in a call
/// runs in the interpreter).
pub(crate) fn compile(prog: &Program, entry: u32) -> Result<Compiled, String> {
    let insts = &prog.insts;
    let n = insts.len();
    if entry as usize >= n {
        return Err("no code".into());
    }
    if (prog.nregs as u64) * 256 > i32::MAX as u64 {
        return Err("too many registers".into());
    }
    let (reach, leader) = reachable(prog, entry);
    let kinds: Vec<Option<Kind>> = (0..n)
        .map(|pc| reach[pc].then(|| classify(&insts[pc].op)))
        .collect();
    // Why each pc is a leader: the entry, each branch to it, following control flow.
    let mut refs = vec![0u32; n + 1];
    refs[entry as usize] += 1;
    for pc in (0..n).filter(|pc| reach[*pc]) {
        if let Op::Bra { target } = insts[pc].op {
            refs[(target as usize).min(n)] += 1;
        }
        if insts[pc].op.is_control() {
            refs[pc + 1] += 1;
        }
    }
    let mut units = Vec::new();
    let mut pc = 0;
    while pc < n {
        match &kinds[pc] {
            None => pc += 1,
            Some(Kind::Native(_) | Kind::Mem(_)) => {
                let start = pc;
                let mut fit = RunFit::default();
                let mut items = Vec::new();
                // Where the run may go on past a leader: the end of a branch it took in.
                let mut absorbed = None;
                while pc < n && (pc == start || !leader[pc] || absorbed == Some(pc)) {
                    let guard = insts[pc].guard;
                    match &kinds[pc] {
                        Some(k @ (Kind::Native(_) | Kind::Mem(_))) => {
                            if !fit.admits(guard, Some(k)) {
                                break;
                            }
                            items.push((item(k), guard));
                            pc += 1;
                        }
                        Some(Kind::Bra(t)) => {
                            let Some(body) = if_convert(insts, &kinds, &refs, &fit, pc, *t) else {
                                break;
                            };
                            let (p, neg) = guard.unwrap_or((0, false));
                            for k in &body {
                                fit.admits(Some((p, !neg)), Some(k));
                            }
                            items.push((
                                Item::Skip {
                                    body: body.len() as u32,
                                },
                                guard,
                            ));
                            items.extend(body.iter().map(|k| (item(k), Some((p, !neg)))));
                            pc = *t as usize;
                            absorbed = Some(pc);
                        }
                        _ => break,
                    }
                }
                units.push(Unit::Run {
                    pc: start as u32,
                    items,
                });
            }
            Some(_) => {
                units.push(Unit::Single(pc as u32));
                pc += 1;
            }
        }
    }
    let uni = uniform::analyse(prog, &reach, &kinds, entry as usize);
    if cumock_support::settings().jit_units {
        let names = |flags: &[bool]| {
            flags
                .iter()
                .enumerate()
                .filter(|x| *x.1)
                .map(|x| x.0.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        eprintln!(
            "uniform registers: {}; predicates: {}",
            names(&uni.regs),
            names(&uni.preds)
        );
        for u in &units {
            match u {
                Unit::Run { pc, items } => eprintln!(
                    "run {pc}..{}: {}",
                    *pc as usize + items.len(),
                    items
                        .iter()
                        .enumerate()
                        .map(|(k, _)| prog.info[*pc as usize + k].text.clone())
                        .collect::<Vec<_>>()
                        .join(" | ")
                ),
                Unit::Single(pc) => eprintln!("single {pc}: {}", prog.info[*pc as usize].text),
            }
        }
    }
    let live = liveness(prog, &reach, &kinds, entry as usize);
    let plive = pred_liveness(prog, &reach, &kinds, entry as usize);
    let lo = reach.iter().position(|r| *r).unwrap_or(0);
    let hi = reach.iter().rposition(|r| *r).unwrap_or(0);

    let isa = isa()?;
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let ptr = types::I64;
    let mut sig = module.make_signature();
    sig.params.push(AbiParam::new(ptr));
    sig.params.push(AbiParam::new(types::I32));
    sig.returns.push(AbiParam::new(types::I64));
    let mut helper_sig = Signature::new(module.isa().default_call_conv());
    helper_sig.params.push(AbiParam::new(ptr));
    helper_sig.params.push(AbiParam::new(types::I32));
    helper_sig.params.push(AbiParam::new(types::I32));
    helper_sig.returns.push(AbiParam::new(types::I32));
    let mut lookup_sig = Signature::new(module.isa().default_call_conv());
    for t in [ptr, types::I64, types::I64, types::I32] {
        lookup_sig.params.push(AbiParam::new(t));
    }
    lookup_sig.returns.push(AbiParam::new(types::I32));
    let mut lane_sig = Signature::new(module.isa().default_call_conv());
    for _ in 0..4 {
        lane_sig.params.push(AbiParam::new(types::I64));
    }
    lane_sig.returns.push(AbiParam::new(types::I64));
    let id = module
        .declare_function("kernel", Linkage::Local, &sig)
        .map_err(|e| e.to_string())?;
    let mut ctx = module.make_context();
    ctx.func.signature = sig;
    let mut fctx = FunctionBuilderContext::new();
    let mut native_count = 0;
    let mut via_interp = 0;
    let mut texture_count = 0;
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let helper_sig = b.import_signature(helper_sig);
        let lookup_sig = b.import_signature(lookup_sig);
        let lane_sig = b.import_signature(lane_sig);
        let start = b.create_block();
        b.append_block_params_for_function_params(start);
        b.switch_to_block(start);
        let frame = b.block_params(start)[0];
        let entry_pc = b.block_params(start)[1];
        let flags = MemFlags::trusted();
        let (steps, icount, status) = (
            Variable::from_u32(0),
            Variable::from_u32(1),
            Variable::from_u32(2),
        );
        for v in [steps, icount, status] {
            b.declare_var(v, types::I64);
        }
        let regs = b.ins().load(ptr, flags, frame, OFF_REGS);
        let preds = b.ins().load(ptr, flags, frame, OFF_PREDS);
        let s0 = b.ins().load(types::I64, flags, frame, OFF_STEPS);
        let stop_at = b.ins().load(types::I64, flags, frame, OFF_STOP_AT);
        let mask = b.ins().load(types::I32, flags, frame, OFF_MASK);
        let other = b.ins().load(types::I32, flags, frame, OFF_OTHER);
        let zero = b.ins().iconst(types::I64, 0);
        b.def_var(steps, s0);
        b.def_var(icount, zero);
        b.def_var(status, zero);

        let exit = b.create_block();
        let bail_entry = b.create_block();
        let mut blocks: HashMap<u32, Block> = HashMap::new();
        for u in &units {
            let pc = match u {
                Unit::Run { pc, .. } | Unit::Single(pc) => *pc,
            };
            blocks.insert(pc, b.create_block());
        }
        // Dispatch on the entry pc.
        let idx = b.ins().iadd_imm(entry_pc, -(lo as i64));
        let table: Vec<_> = (lo..=hi)
            .map(|pc| {
                let blk = blocks.get(&(pc as u32)).copied().unwrap_or(bail_entry);
                b.func.dfg.block_call(blk, &[])
            })
            .collect();
        let def = b.func.dfg.block_call(bail_entry, &[]);
        let jt = b.create_jump_table(JumpTableData::new(def, &table));
        b.ins().br_table(idx, jt);

        b.switch_to_block(bail_entry);
        let v = b.ins().uextend(types::I64, entry_pc);
        b.def_var(status, v);
        b.ins().jump(exit, &[]);

        b.switch_to_block(exit);
        let s = b.use_var(steps);
        b.ins().store(flags, s, frame, OFF_STEPS);
        let c = b.use_var(icount);
        b.ins().store(flags, c, frame, OFF_INSTRUCTIONS);
        let st = b.use_var(status);
        b.ins().return_(&[st]);

        let mut g = Gen {
            b,
            regs,
            preds,
            mask,
            other,
            stop_at,
            frame,
            steps,
            icount,
            status,
            exit,
            blocks: &blocks,
            helper_sig,
            lookup_sig,
            lane_sig,
            next_var: 3,
            live: live.as_deref(),
            plive: plive.as_deref(),
            uni: &uni,
            tid_consts: None,
            group_delta: None,
            raw_f32: None,
            no_old: false,
            shared_span: None,
            shared_tops: HashMap::new(),
        };
        for u in &units {
            match *u {
                Unit::Run { pc, ref items } => {
                    let list: Vec<Item> = items.iter().map(|x| x.0).collect();
                    let guards: Vec<_> = items.iter().map(|x| x.1).collect();
                    native_count += list.len();
                    g.run(pc, &list, &guards);
                }
                Unit::Single(pc) => {
                    let inst = &insts[pc as usize];
                    match &kinds[pc as usize] {
                        Some(Kind::Helper) => {
                            let image = matches!(inst.op, Op::Image(_));
                            if image {
                                texture_count += 1;
                            } else {
                                via_interp += 1;
                            }
                            g.helper(pc, inst.guard, image);
                        }
                        Some(Kind::Bra(t)) => g.bra(pc, *t, inst.guard),
                        _ => {
                            let blk = blocks[&pc];
                            g.b.switch_to_block(blk);
                            g.leave(pc);
                        }
                    }
                }
            }
        }
        g.b.seal_all_blocks();
        g.b.finalize();
    }
    // CUMOCK_JIT_DISASM=1: the host code of each kernel on stderr (for tuning).
    let disasm = cumock_support::settings().jit_disasm;
    ctx.set_disasm(disasm);
    module
        .define_function(id, &mut ctx)
        .map_err(|e| format!("{e:?}"))?;
    if let Some(vcode) = ctx.compiled_code().and_then(|c| c.vcode.as_ref()) {
        eprintln!("{vcode}");
    }
    // CUMOCK_JIT_DUMP=DIR: each kernel's machine code in DIR/jit-ADDR.bin, ADDR where it
    // lies (for profiling: `objdump -D -b binary -mi386:x86-64 --adjust-vma=0xADDR` lines
    // up with `perf script`'s addresses; perf finds the function by cranelift's map).
    let dump = cumock_support::settings()
        .jit_dump
        .as_ref()
        .and_then(|d| Some((d, ctx.compiled_code()?.code_buffer().to_vec())));
    module.clear_context(&mut ctx);
    module.finalize_definitions().map_err(|e| e.to_string())?;
    let code = module.get_finalized_function(id);
    if let Some((dir, bytes)) = dump {
        let path = dir.join(format!("jit-{:x}.bin", code as usize));
        let _ = std::fs::write(&path, bytes);
        eprintln!("jit code at {:x}: {}", code as usize, path.display());
    }
    // Safety: `code` is the function just defined with the signature `EntryFn` spells
    // (pointer, u32) -> u64 in the ISA's default (C) calling convention.
    let entry: EntryFn = unsafe { std::mem::transmute::<*const u8, EntryFn>(code) };
    // Where entering the code does something: elsewhere it would return at once.
    let mut works_at = vec![false; n];
    for u in &units {
        match *u {
            Unit::Run { pc, .. } => works_at[pc as usize] = true,
            Unit::Single(pc) => {
                works_at[pc as usize] =
                    matches!(kinds[pc as usize], Some(Kind::Helper | Kind::Bra(_)))
            }
        }
    }
    // Warp-synchronous instructions wait for their member mask's lanes
    // (`Warp::converging`): compiled code runs them only for a whole warp.
    let warp_sync = prog.insts.iter().any(|i| {
        matches!(
            i.op,
            Op::Shfl { .. }
                | Op::Vote { .. }
                | Op::Match { .. }
                | Op::Redux { .. }
                | Op::WarpSync { .. }
        )
    });
    Ok(Compiled {
        module: Some(module),
        entry,
        works_at,
        native: native_count,
        via_interp,
        texture: texture_count,
        warp_sync,
    })
}

/// One instruction of a run.
#[derive(Clone, Copy)]
enum Item {
    Nat(Native),
    Mem(Mem),
    /// A forward branch over the next `body` instructions, which run under the branch's
    /// guard negated (`if_convert`).
    Skip {
        body: u32,
    },
}

fn item(k: &Kind) -> Item {
    match k {
        Kind::Mem(m) => Item::Mem(*m),
        Kind::Native(x) => Item::Nat(*x),
        _ => Item::Nat(unreachable_native()),
    }
}

/// The instructions a guarded forward branch at `pc` to `target` jumps over, when a run
/// can take them in as instructions guarded by the branch's guard negated: each native
/// or a load or store the run admits, unguarded, none writing the guard, no other way
/// into them or to `target` (no other leader). The result is the interpreter's: the
/// lanes not taking the branch run the body, in order, then all go on at `target`
/// (where the interpreter merges them); the step count adds the body only when some
/// lane runs it, as the interpreter's does (`Gen::run`).
fn if_convert<'k>(
    insts: &[crate::decode::Inst],
    kinds: &'k [Option<Kind>],
    refs: &[u32],
    fit: &RunFit,
    pc: usize,
    target: u32,
) -> Option<Vec<&'k Kind>> {
    let (p, neg) = insts[pc].guard?;
    let t = target as usize;
    if t <= pc + 1 || t >= kinds.len() || t - pc > 64 || refs[t] != 1 || refs[pc + 1] != 1 {
        return None;
    }
    let mut fit = fit.clone();
    let mut body = Vec::new();
    for q in pc + 1..t {
        if q > pc + 1 && refs[q] != 0 || insts[q].guard.is_some() {
            return None;
        }
        let k = kinds[q].as_ref()?;
        let writes_guard = match k {
            Kind::Native(x) => x.d == Dst::Pred(p) || x.q == Dst::Pred(p),
            Kind::Mem(_) => false,
            _ => return None,
        };
        if writes_guard || !fit.admits(Some((p, !neg)), Some(k)) {
            return None;
        }
        body.push(k);
    }
    Some(body)
}

/// Which instructions a run may take, in order. A run executes lane by lane (each lane
/// runs the whole run before the next starts), which the interpreter's instruction by
/// instruction order only equals while lanes cannot see each other's memory accesses
/// within the run: so a run that stores takes no other load or store, before or after
/// (lane 0's store would come before lane 1's load of an earlier instruction, or its
/// store; `compiled_loads_and_stores_fault_as_the_interpreter_does` has such a kernel).
/// Loads and stores are checked for every lane before any runs (a first pass over the
/// lanes computing only addresses and guards), so an address or guard must not depend
/// on a value loaded in the same run: such an instruction starts a new run.
#[derive(Default, Clone)]
struct RunFit {
    stored: bool,
    loaded: bool,
    /// Registers and predicates holding values loaded in this run (or computed from one).
    tainted_regs: Vec<u32>,
    tainted_preds: Vec<u32>,
}

impl RunFit {
    fn tainted(&self, s: Src) -> bool {
        match s {
            Src::Reg(r) => self.tainted_regs.contains(&r),
            Src::Pred(p) | Src::NotPred(p) => self.tainted_preds.contains(&p),
            _ => false,
        }
    }

    fn set(&mut self, d: Dst, taint: bool, guarded: bool) {
        let (list, x) = match d {
            Dst::Reg(r) => (&mut self.tainted_regs, r),
            Dst::Pred(p) => (&mut self.tainted_preds, p),
            Dst::Sink => return,
        };
        if taint {
            if !list.contains(&x) {
                list.push(x);
            }
        } else if !guarded {
            // Overwritten in every lane: no longer a loaded value. (Guarded, lanes the
            // guard skips keep the old one: it stays tainted.)
            list.retain(|y| *y != x);
        }
    }

    fn admits(&mut self, guard: Option<(u32, bool)>, kind: Option<&Kind>) -> bool {
        let g = guard.map(|(p, _)| Src::Pred(p));
        let gt = g.is_some_and(|g| self.tainted(g));
        match kind {
            Some(Kind::Native(x)) => {
                let t = gt
                    || x.s[..x.nsrc as usize].iter().any(|s| self.tainted(*s))
                    || x.comb.is_some_and(|(_, c)| self.tainted(c));
                self.set(x.d, t, guard.is_some());
                self.set(x.q, t, guard.is_some());
                true
            }
            Some(Kind::Mem(m)) => {
                if m.space == Space::KParam {
                    // Uniform, read-only: read once before the lanes run.
                    if let Some(d) = m.d {
                        self.set(d[0], gt, guard.is_some());
                    }
                    return true;
                }
                if self.stored || gt || self.tainted(m.addr) || (m.d.is_none() && self.loaded) {
                    return false;
                }
                match m.d {
                    Some(d) => {
                        self.loaded = true;
                        for x in &d[..m.n as usize] {
                            self.set(*x, true, guard.is_some());
                        }
                    }
                    None => self.stored = true,
                }
                true
            }
            _ => false,
        }
    }
}

/// Where a compiled access finds its host address: a delta checked for every lane before
/// the run (`Gen::mem_check`), or checked lane by lane (`Gen::lane_check`).
#[derive(Clone, Copy)]
enum At {
    Delta(Value),
    Lane(LaneCache, Block),
    /// The first of a group: checks the whole group's bytes at once.
    Group(LaneCache, Block, Group),
}

/// Accesses of one space through one base register (not rewritten between them) at
/// constant offsets, unguarded, each aligned as its offset allows: one check of every
/// byte they touch, aligned to the largest, at the first of them covers them all.
#[derive(Clone, Copy)]
struct Group {
    lo_off: i64,
    bytes: i64,
    align: i64,
    /// The largest element: the host address's alignment.
    elem: u8,
}

/// The groups of a run's accesses (`Group`): for each access in one, the first access
/// of its group; for each first, its group.
fn access_groups(
    list: &[Item],
    guards: &[Option<(u32, bool)>],
    accesses: &[usize],
) -> (HashMap<usize, usize>, HashMap<usize, Group>) {
    // Each register's version: how many writes of it came before.
    let mut version: HashMap<u32, u32> = HashMap::new();
    let mut keys: HashMap<(u8, u32, u32), Vec<usize>> = HashMap::new();
    for (k, it) in list.iter().enumerate() {
        // Loads only: a group's check is its first load's (no write access).
        if let (true, Item::Mem(m @ Mem { d: Some(_), .. })) = (accesses.contains(&k), it) {
            let total = m.size as i64 * m.n as i64;
            if let (Src::Reg(r), None, 0) = (m.addr, guards[k], m.off.rem_euclid(total)) {
                let space = m.space as u8;
                let v = version.get(&r).copied().unwrap_or(0);
                keys.entry((space, r, v)).or_default().push(k);
            }
        }
        let dsts: Vec<Dst> = match it {
            Item::Nat(x) => vec![x.d, x.q],
            Item::Mem(m) => m.d.map(|d| d[..m.n as usize].to_vec()).unwrap_or_default(),
            Item::Skip { .. } => Vec::new(),
        };
        for d in dsts {
            if let Dst::Reg(r) = d {
                *version.entry(r).or_default() += 1;
            }
        }
    }
    let (mut lead, mut groups) = (HashMap::new(), HashMap::new());
    for members in keys.into_values().filter(|m| m.len() > 1) {
        let mem = |k: usize| match list[k] {
            Item::Mem(m) => m,
            _ => unreachable!("accesses are loads and stores"),
        };
        let lo = members.iter().map(|&k| mem(k).off).min().unwrap_or(0);
        let hi = members
            .iter()
            .map(|&k| mem(k).off + mem(k).size as i64 * mem(k).n as i64)
            .max()
            .unwrap_or(0);
        if hi - lo > 1 << 16 {
            continue;
        }
        let align = members
            .iter()
            .map(|&k| mem(k).size as i64 * mem(k).n as i64)
            .max()
            .unwrap_or(1);
        let elem = members.iter().map(|&k| mem(k).size).max().unwrap_or(1);
        // The group's first byte must be as aligned as its largest access.
        if lo.rem_euclid(align) != 0 {
            continue;
        }
        let first = members[0];
        for &k in &members {
            lead.insert(k, first);
        }
        groups.insert(
            first,
            Group {
                lo_off: lo,
                bytes: hi - lo,
                align,
                elem,
            },
        );
    }
    (lead, groups)
}

/// The span an access's last lane hit: device addresses `lo..=lo + lim` (for the whole
/// access) at `+ delta` on the host; `valid` 0 until a lane found one.
#[derive(Clone, Copy)]
struct LaneCache {
    lo: Variable,
    /// How many start addresses from `lo` on the span admits (0: nothing cached yet, so
    /// one unsigned compare says both "cached" and "inside").
    lim: Variable,
    delta: Variable,
}

/// Whether a run of loads (or of one store) may be checked lane by lane and, when a lane's
/// access fails, left for the interpreter to run again from its start after earlier
/// lanes ran it: its memory is as before, and so are the registers it reads, when the
/// registers it reads before writing and also writes (an accumulator) are kept aside
/// for each lane and written only after the last lane (the returned list). Its
/// predicate writes and counts are committed only after the last lane too.
fn loads_rerunnable(list: &[Item], guards: &[Option<(u32, bool)>]) -> Option<Vec<u32>> {
    let (mut reads, mut writes, mut written) = (Vec::new(), Vec::new(), Vec::new());
    // Registers written under a guard, with it: a read under the same guard (the predicate
    // not written since) reads what the run wrote in every lane that uses what it reads
    // (an if-converted body's temporaries).
    let mut written_under: Vec<(u32, (u32, bool))> = Vec::new();
    let (mut accesses, mut stores) = (0, 0);
    for (k, it) in list.iter().enumerate() {
        let g = guards[k];
        let mut read = |s: Src| {
            if let Src::Reg(r) = s {
                let mine = g.is_some_and(|g| written_under.contains(&(r, g)));
                if !written.contains(&r) && !mine && !reads.contains(&r) {
                    reads.push(r);
                }
            }
        };
        let (dsts, preds): (Vec<Dst>, Vec<Dst>) = match it {
            Item::Nat(x) => {
                let (srcs, need) = operands(x);
                for s in &srcs[..need] {
                    read(*s);
                }
                if let Some((_, c)) = x.comb {
                    read(c);
                }
                (vec![x.d, x.q], vec![x.d, x.q])
            }
            Item::Mem(m) => {
                read(m.addr);
                if m.space != Space::KParam {
                    accesses += 1;
                }
                match m.d {
                    Some(d) => (d[..m.n as usize].to_vec(), Vec::new()),
                    None => {
                        for v in &m.v[..m.n as usize] {
                            read(*v);
                        }
                        stores += 1;
                        (Vec::new(), Vec::new())
                    }
                }
            }
            Item::Skip { .. } => (Vec::new(), Vec::new()),
        };
        for d in preds {
            if let Dst::Pred(p) = d {
                // The guard changed: what was written under it no longer says who wrote.
                written_under.retain(|(_, (q, _))| *q != p);
            }
        }
        for d in dsts {
            if let Dst::Reg(r) = d {
                // A guarded write leaves the old value in some lanes: a later read
                // may still read what the run found (unless under the same guard).
                match g {
                    None if !written.contains(&r) => written.push(r),
                    Some(g) if !written_under.contains(&(r, g)) => written_under.push((r, g)),
                    _ => {}
                }
                if !writes.contains(&r) {
                    writes.push(r);
                }
            }
        }
    }
    // A store goes lane by lane only alone: the interpreter stores lane by lane too, so
    // lanes that stored before a failing one store the same again when it runs the run
    // (and the lanes before a faulting one have stored, as in the interpreter).
    if stores > 0 && accesses > 1 {
        return None;
    }
    Some(reads.into_iter().filter(|r| writes.contains(r)).collect())
}

/// Registers an item of a run reads and writes.
fn item_regs(it: &Item) -> (Vec<u32>, Vec<Dst>) {
    let reg = |s: &Src| match s {
        Src::Reg(r) => Some(*r),
        _ => None,
    };
    match it {
        Item::Nat(x) => {
            let (srcs, need) = operands(x);
            let mut r: Vec<u32> = srcs[..need].iter().filter_map(reg).collect();
            r.extend(x.comb.iter().filter_map(|(_, c)| reg(c)));
            (r, vec![x.d, x.q])
        }
        Item::Mem(m) => {
            let mut r: Vec<u32> = reg(&m.addr).into_iter().collect();
            match m.d {
                Some(d) => (r, d[..m.n as usize].to_vec()),
                None => {
                    r.extend(m.v[..m.n as usize].iter().filter_map(reg));
                    (r, Vec::new())
                }
            }
        }
        Item::Skip { .. } => (Vec::new(), Vec::new()),
    }
}

/// For each item of a run: whether its guard may be ignored for the registers it writes,
/// writing them in every lane: each is dead after the run (`live_after`, when known) and
/// read later in the run only under the same guard, its predicate unchanged, until it
/// is written unguarded. Lanes the guard skips never read what they got. An if-converted
/// body's temporaries (`if_convert`) so need no old value read and selected.
fn unguarded_writes(
    list: &[Item],
    guards: &[Option<(u32, bool)>],
    live_after: Option<&[u64]>,
) -> Vec<bool> {
    let regs: Vec<(Vec<u32>, Vec<Dst>)> = list.iter().map(item_regs).collect();
    (0..list.len())
        .map(|k| {
            let (Some(g), Some(live)) = (guards[k], live_after) else {
                return false;
            };
            regs[k].1.iter().all(|d| {
                let r = match d {
                    Dst::Reg(r) => *r,
                    Dst::Pred(_) => return false,
                    Dst::Sink => return true,
                };
                if live[r as usize / 64] >> (r % 64) & 1 != 0 {
                    return false;
                }
                let mut pred_changed = false;
                for j in k + 1..list.len() {
                    if regs[j].0.contains(&r) && (guards[j] != Some(g) || pred_changed) {
                        return false;
                    }
                    if regs[j].1.contains(&Dst::Pred(g.0)) {
                        pred_changed = true;
                    }
                    if guards[j].is_none() && regs[j].1.contains(&Dst::Reg(r)) {
                        return true;
                    }
                }
                true
            })
        })
        .collect()
}

/// A run holds only native instructions (built so above).
fn unreachable_native() -> Native {
    Native {
        n: N::Mov,
        d: Dst::Sink,
        q: Dst::Sink,
        s: [Src::Imm(0); 4],
        nsrc: 1,
        comb: None,
    }
}

struct Gen<'a, 'f> {
    b: FunctionBuilder<'f>,
    regs: Value,
    preds: Value,
    mask: Value,
    other: Value,
    stop_at: Value,
    frame: Value,
    steps: Variable,
    icount: Variable,
    status: Variable,
    exit: Block,
    blocks: &'a HashMap<u32, Block>,
    helper_sig: cranelift_codegen::ir::SigRef,
    lookup_sig: cranelift_codegen::ir::SigRef,
    /// A lane function's (`N::Call`): four u64 operands, a u64 result.
    lane_sig: cranelift_codegen::ir::SigRef,
    next_var: u32,
    /// Registers live at each pc (`liveness`), when known.
    live: Option<&'a [Vec<u64>]>,
    /// Predicates live at each pc (`pred_liveness`), when known.
    plive: Option<&'a [Vec<u64>]>,
    /// Registers and predicates with one value in every lane of a group (`uniform`).
    uni: &'a uniform::Uniform,
    /// Inside a run that reads `%tid`: what computing it needs, read once before the
    /// loops over the lanes (`tid_setup`).
    tid_consts: Option<TidConsts>,
    /// The delta the first access of a group found (`At::Group`), for the others.
    group_delta: Option<Value>,
    /// The F32 result of the last `native_eval` of f32 arithmetic (`LaneState::f32s`).
    raw_f32: Option<Value>,
    /// The instruction being compiled writes its registers in every lane, guarded or not
    /// (`unguarded_writes`).
    no_old: bool,
    /// Inside a run with shared accesses: the block's shared bound and buffer.
    shared_span: Option<(Value, Value)>,
    /// Inside a run: per size of its shared accesses checked lane by lane, the bound
    /// one compare checks (`shared_top`).
    shared_tops: HashMap<i64, Value>,
}

/// Where the warp's lanes' `%tid` values are (`Warp::tids`).
#[derive(Clone, Copy)]
struct TidConsts {
    table: Value,
}

/// Per lane of a run: values of registers and predicate bits so far.
#[derive(Default)]
struct LaneState {
    regs: HashMap<u32, Value>,
    /// Registers last written by f32 arithmetic, as the host's F32 result before NaNs are
    /// made canonical (`regs` holds the canonical bits): f32 arithmetic and comparisons
    /// read these, as a NaN in gives a NaN out whatever its bits and a comparison ignores
    /// them, so a chain of them (a dot product's multiply-adds) waits on no canonicalising
    /// and no moves between register kinds; what is never read canonical is never computed.
    f32s: HashMap<u32, Value>,
    dirty: Vec<u32>,
    bits: HashMap<u32, Value>,
    dirty_preds: Vec<u32>,
}

impl Gen<'_, '_> {
    fn var(&mut self, ty: types::Type) -> Variable {
        let v = Variable::from_u32(self.next_var);
        self.next_var += 1;
        self.b.declare_var(v, ty);
        v
    }

    /// Back to the interpreter at `pc` (which it runs itself).
    fn leave(&mut self, pc: u32) {
        let v = self.b.ins().iconst(types::I64, pc as i64);
        self.b.def_var(self.status, v);
        self.b.ins().jump(self.exit, &[]);
    }

    fn goto(&mut self, pc: u32) {
        match self.blocks.get(&pc) {
            Some(&blk) => {
                self.b.ins().jump(blk, &[]);
            }
            None => self.leave(pc),
        }
    }

    /// Starts unit `pc` of `len` instructions: it runs only if the step count stays
    /// below where the interpreter checks its limits and no other lanes wait inside it.
    fn enter_unit(&mut self, pc: u32, len: u32) {
        let blk = self.blocks[&pc];
        self.b.switch_to_block(blk);
        let s = self.b.use_var(self.steps);
        let end = self.b.ins().iadd_imm(s, len as i64);
        let over = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThan, end, self.stop_at);
        let d = self.b.ins().iadd_imm(self.other, -(pc as i64));
        let inside = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedLessThan, d, len as i64);
        let bad = self.b.ins().bor(over, inside);
        let go = self.b.create_block();
        let out = self.b.create_block();
        self.b.ins().brif(bad, out, &[], go, &[]);
        self.b.switch_to_block(out);
        self.leave(pc);
        self.b.switch_to_block(go);
    }

    fn add_steps(&mut self, n: i64) {
        let s = self.b.use_var(self.steps);
        let s = self.b.ins().iadd_imm(s, n);
        self.b.def_var(self.steps, s);
    }

    fn add_count(&mut self, n: Value) {
        let c = self.b.use_var(self.icount);
        let c = self.b.ins().iadd(c, n);
        self.b.def_var(self.icount, c);
    }

    fn popcnt64(&mut self, m: Value) -> Value {
        let p = self.b.ins().popcnt(m);
        self.b.ins().uextend(types::I64, p)
    }

    /// The group's lanes the guard lets run.
    fn emask(&mut self, guard: Option<(u32, bool)>) -> Value {
        match guard {
            None => self.mask,
            Some((p, neg)) => {
                let bits =
                    self.b
                        .ins()
                        .load(types::I32, MemFlags::trusted(), self.preds, p as i32 * 4);
                let bits = if neg { self.b.ins().bnot(bits) } else { bits };
                self.b.ins().band(self.mask, bits)
            }
        }
    }

    /// An instruction run by the interpreter's code, for the lanes its guard leaves:
    /// `image` says it is a texture or surface instruction, called straight into the
    /// sampling code (`helper_image`).
    fn helper(&mut self, pc: u32, guard: Option<(u32, bool)>, image: bool) {
        self.enter_unit(pc, 1);
        let em = self.emask(guard);
        self.add_steps(1);
        let cnt = self.popcnt64(em);
        self.add_count(cnt);
        let call = self.b.create_block();
        let next = self.b.create_block();
        let failed = self.b.create_block();
        self.b.ins().brif(em, call, &[], next, &[]);
        self.b.switch_to_block(call);
        let s = self.b.use_var(self.steps);
        self.b
            .ins()
            .store(MemFlags::trusted(), s, self.frame, OFF_STEPS);
        let callee = if image {
            super::helper_image as *const ()
        } else {
            super::helper_exec as *const ()
        };
        let f = self.b.ins().iconst(types::I64, callee as usize as i64);
        let pcv = self.b.ins().iconst(types::I32, pc as i64);
        let call_inst = self
            .b
            .ins()
            .call_indirect(self.helper_sig, f, &[self.frame, pcv, em]);
        let r = self.b.inst_results(call_inst)[0];
        self.b.ins().brif(r, failed, &[], next, &[]);
        self.b.switch_to_block(failed);
        let r64 = self.b.ins().uextend(types::I64, r);
        let hi = self.b.ins().ishl_imm(r64, 32);
        let st = self.b.ins().bor_imm(hi, pc as i64);
        self.b.def_var(self.status, st);
        self.b.ins().jump(self.exit, &[]);
        self.b.switch_to_block(next);
        self.goto(pc + 1);
    }

    /// The lowest lane of the mask `m` (not empty), taken out of `left`, and where its
    /// registers start.
    fn next_lane(&mut self, left: Variable, m: Value) -> (Value, Value) {
        let lane = self.b.ins().ctz(m);
        let m1 = self.b.ins().iadd_imm(m, -1);
        let rest = self.b.ins().band(m, m1);
        self.b.def_var(left, rest);
        (lane, self.lane_base(lane))
    }

    /// Where lane `lane`'s registers start (`regs[reg * 32 + lane]`, 8 bytes each).
    fn lane_base(&mut self, lane: Value) -> Value {
        let lane64 = self.b.ins().uextend(types::I64, lane);
        let off = self.b.ins().imul_imm(lane64, 8);
        self.b.ins().iadd(self.regs, off)
    }

    /// A loop over the lanes of `m`, lowest first: `body(self, lane, the lane's register
    /// base)`; the builder ends after the loop.
    fn lanes(&mut self, m: Value, mut body: impl FnMut(&mut Self, Value, Value)) {
        let left = self.var(types::I32);
        self.b.def_var(left, m);
        let header = self.b.create_block();
        let each = self.b.create_block();
        let after = self.b.create_block();
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(header);
        let mm = self.b.use_var(left);
        self.b.ins().brif(mm, each, &[], after, &[]);
        self.b.switch_to_block(each);
        let (lane, base) = self.next_lane(left, mm);
        body(self, lane, base);
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(after);
    }

    /// `size` bytes at `p + off`, extended as the interpreter's `extend` does.
    fn load_sized(&mut self, p: Value, off: i32, size: u8, signed: bool) -> Value {
        let f = MemFlags::new();
        let ins = self.b.ins();
        match (size, signed) {
            (1, false) => ins.uload8(types::I64, f, p, off),
            (1, true) => ins.sload8(types::I64, f, p, off),
            (2, false) => ins.uload16(types::I64, f, p, off),
            (2, true) => ins.sload16(types::I64, f, p, off),
            (4, false) => ins.uload32(f, p, off),
            (4, true) => ins.sload32(f, p, off),
            _ => ins.load(types::I64, f, p, off),
        }
    }

    fn store_sized(&mut self, v: Value, p: Value, off: i32, size: u8) {
        let f = MemFlags::new();
        let ins = self.b.ins();
        match size {
            1 => ins.istore8(f, v, p, off),
            2 => ins.istore16(f, v, p, off),
            4 => ins.istore32(f, v, p, off),
            _ => ins.store(f, v, p, off),
        };
    }

    /// `n` elements of `size` bytes at `p`, extended as `load_sized` does. A vector of 16
    /// bytes or less is read in one host access, as the interpreter's `host_read_vector`
    /// (why: there): one integer load, or one 16-byte SSE load of an `i64x2`.
    fn load_vector(&mut self, p: Value, size: u8, n: usize, signed: bool) -> Vec<Value> {
        let total = size as usize * n;
        if n == 1 || total > 16 {
            return (0..n)
                .map(|k| self.load_sized(p, k as i32 * size as i32, size, signed))
                .collect();
        }
        let words = if total <= 8 {
            vec![self.load_sized(p, 0, total as u8, false)]
        } else {
            let v = self.b.ins().load(types::I64X2, MemFlags::new(), p, 0);
            vec![
                self.b.ins().extractlane(v, 0),
                self.b.ins().extractlane(v, 1),
            ]
        };
        (0..n)
            .map(|k| {
                let bit = k * size as usize * 8;
                let word = words[bit / 64];
                let x = match bit % 64 {
                    0 => word,
                    sh => self.b.ins().ushr_imm(word, sh as i64),
                };
                self.extend_sized(x, size, signed)
            })
            .collect()
    }

    /// The low `size` bytes of `x`, extended to 64 bits.
    fn extend_sized(&mut self, x: Value, size: u8, signed: bool) -> Value {
        let narrow = match size {
            1 => types::I8,
            2 => types::I16,
            4 => types::I32,
            _ => return x,
        };
        if signed {
            let r = self.b.ins().ireduce(narrow, x);
            self.b.ins().sextend(types::I64, r)
        } else {
            let mask = (1u64 << (size as u32 * 8)) - 1;
            self.b.ins().band_imm(x, mask as i64)
        }
    }

    /// The store of `load_vector`: the elements packed, then one host access.
    fn store_vector(&mut self, vals: &[Value], p: Value, size: u8) {
        let n = vals.len();
        let total = size as usize * n;
        if n == 1 || total > 16 {
            for (k, &v) in vals.iter().enumerate() {
                self.store_sized(v, p, k as i32 * size as i32, size);
            }
            return;
        }
        let mut words: Vec<Option<Value>> = vec![None; total.div_ceil(8)];
        for (k, &v) in vals.iter().enumerate() {
            let bit = k * size as usize * 8;
            let x = match size {
                8 => v,
                _ => self
                    .b
                    .ins()
                    .band_imm(v, ((1u64 << (size as u32 * 8)) - 1) as i64),
            };
            let x = match bit % 64 {
                0 => x,
                sh => self.b.ins().ishl_imm(x, sh as i64),
            };
            let w = &mut words[bit / 64];
            *w = Some(match *w {
                Some(acc) => self.b.ins().bor(acc, x),
                None => x,
            });
        }
        let zero = |g: &mut Self| g.b.ins().iconst(types::I64, 0);
        let lo = words[0].unwrap_or_else(|| zero(self));
        if total <= 8 {
            self.store_sized(lo, p, 0, total as u8);
        } else {
            let hi = words[1].unwrap_or_else(|| zero(self));
            let v = self.b.ins().scalar_to_vector(types::I64X2, lo);
            let v = self.b.ins().insertlane(v, hi, 1);
            self.b.ins().store(MemFlags::new(), v, p, 0);
        }
    }

    /// To `access` with the shared buffer's delta when `total` bytes at every address in
    /// `lo..=hi` (less `window`, the generic shared window's start, or 0) lie inside the
    /// block's shared memory (`in_window` of the interpreter: the highest access decides,
    /// as the window starts at 0); else to `bail`.
    fn shared_check(
        &mut self,
        lo: Value,
        hi: Value,
        window: u64,
        total: i64,
        access: Block,
        bail: Block,
    ) {
        let flags = MemFlags::trusted();
        let limit = self
            .b
            .ins()
            .load(types::I64, flags, self.frame, OFF_SHARED_LIMIT);
        let shared = self.b.ins().load(types::I64, flags, self.frame, OFF_SHARED);
        let h = self.b.ins().iadd_imm(hi, (window as i64).wrapping_neg());
        let above = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedGreaterThanOrEqual, lo, window as i64);
        let le = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, h, limit);
        let room = self.b.ins().isub(limit, h);
        let fits = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedGreaterThanOrEqual, room, total);
        let ok = self.b.ins().band(above, le);
        let ok = self.b.ins().band(ok, fits);
        let delta = self
            .b
            .ins()
            .iadd_imm(shared, (window as i64).wrapping_neg());
        self.b
            .ins()
            .brif(ok, access, &[BlockArg::Value(delta)], bail, &[]);
    }

    /// To `access` with the span's delta (host - base) when one TLB entry covers `total`
    /// bytes at every address in `lo..=hi` (writable for a store), with its host address
    /// aligned to the element size as the device address is; else to `bail`. The entries
    /// are read afresh: the interpreter adds to them.
    #[allow(clippy::too_many_arguments)]
    fn tlb_check(
        &mut self,
        lo: Value,
        hi: Value,
        total: i64,
        size: u8,
        store: bool,
        access: Block,
        bail: Block,
    ) {
        let flags = MemFlags::trusted();
        let tlb = self.b.ins().load(types::I64, flags, self.frame, OFF_TLB);
        for e in 0..TLB_ENTRIES as i32 {
            let at = e * TLB_ENTRY_SIZE;
            let base = self.b.ins().load(types::I64, flags, tlb, at + TLB_BASE);
            let len = self.b.ins().load(types::I64, flags, tlb, at + TLB_LEN);
            let host = self.b.ins().load(types::I64, flags, tlb, at + TLB_HOST);
            // lo >= base, then (hi - base) + total <= len without overflow.
            let c1 = self
                .b
                .ins()
                .icmp(IntCC::UnsignedGreaterThanOrEqual, lo, base);
            let rel = self.b.ins().isub(hi, base);
            let c2 = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, rel, len);
            let room = self.b.ins().isub(len, rel);
            let c3 = self
                .b
                .ins()
                .icmp_imm(IntCC::UnsignedGreaterThanOrEqual, room, total);
            let delta = self.b.ins().isub(host, base);
            let hp = self.b.ins().iadd(delta, lo);
            let mis = self.b.ins().band_imm(hp, size as i64 - 1);
            let c4 = self.b.ins().icmp_imm(IntCC::Equal, mis, 0);
            let mut ok = self.b.ins().band(c1, c2);
            ok = self.b.ins().band(ok, c3);
            ok = self.b.ins().band(ok, c4);
            if store {
                let wr = self.b.ins().load(types::I64, flags, tlb, at + TLB_WRITABLE);
                let c5 = self.b.ins().icmp_imm(IntCC::NotEqual, wr, 0);
                ok = self.b.ins().band(ok, c5);
            }
            let next = self.b.create_block();
            self.b
                .ins()
                .brif(ok, access, &[BlockArg::Value(delta)], next, &[]);
            self.b.switch_to_block(next);
        }
        self.b.ins().jump(bail, &[]);
    }

    /// `ld.param` at a constant address: one read of the launch's buffer after the bound
    /// check `locate` makes (alignment was checked when compiling), or to `bail`.
    fn param_value(&mut self, m: Mem, bail: Block) -> Value {
        let a = match m.addr {
            Src::Imm(a) => param_offset(a.wrapping_add(m.off as u64)),
            _ => 0,
        };
        let flags = MemFlags::trusted();
        let len = self
            .b
            .ins()
            .load(types::I64, flags, self.frame, OFF_PARAMS_LEN);
        // a + size <= len (a < 2^32: no overflow).
        let ok = self.b.ins().icmp_imm(
            IntCC::UnsignedGreaterThanOrEqual,
            len,
            (a + m.size as u64) as i64,
        );
        let go = self.b.create_block();
        self.b.ins().brif(ok, go, &[], bail, &[]);
        self.b.switch_to_block(go);
        let params = self.b.ins().load(types::I64, flags, self.frame, OFF_PARAMS);
        let p = self.b.ins().iadd_imm(params, a as i64);
        self.load_sized(p, 0, m.size, m.signed)
    }

    /// A special register's value in lane `lane` (the kinds `plain` lets through), as
    /// `BlockCtx::sreg` computes it.
    fn sreg(&mut self, s: Sreg, lane: Value) -> Value {
        let f = MemFlags::trusted();
        let frame = self.frame;
        let ld = |g: &mut Self, off: i32| g.b.ins().load(types::I32, f, frame, off);
        let v = match s {
            Sreg::Tid(d) => {
                let t = match self.tid_consts {
                    Some(t) => t,
                    None => self.tid_load(),
                };
                let lane64 = self.b.ins().uextend(types::I64, lane);
                let off = self.b.ins().imul_imm(lane64, 4);
                let at = self.b.ins().iadd(t.table, off);
                self.b.ins().load(types::I32, f, at, 128 * d as i32)
            }
            Sreg::Ntid(d) => ld(self, OFF_NTID + 4 * d as i32),
            Sreg::Ctaid(d) => ld(self, OFF_CTAID + 4 * d as i32),
            Sreg::Nctaid(d) => ld(self, OFF_NCTAID + 4 * d as i32),
            _ => lane,
        };
        self.b.ins().uextend(types::I64, v)
    }

    /// What `%tid` needs, read from the frame: the warp's table of lanes' indices.
    fn tid_load(&mut self) -> TidConsts {
        let f = MemFlags::trusted();
        TidConsts {
            table: self.b.ins().load(types::I64, f, self.frame, OFF_TIDS),
        }
    }

    /// `tid_load` once before a run's loops, when an instruction of it reads `%tid`.
    fn tid_setup(&mut self, list: &[Item]) -> Option<TidConsts> {
        let tid = |s: &Src| matches!(s, Src::Sreg(Sreg::Tid(_)));
        let reads = list.iter().any(|it| match it {
            Item::Nat(x) => x.s.iter().any(tid) || x.comb.is_some_and(|(_, c)| tid(&c)),
            Item::Mem(m) => tid(&m.addr) || m.v.iter().any(tid),
            Item::Skip { .. } => false,
        });
        reads.then(|| self.tid_load())
    }

    fn bra(&mut self, pc: u32, target: u32, guard: Option<(u32, bool)>) {
        self.enter_unit(pc, 1);
        // Uniform: taken by the whole group; the interpreter's rule is to go on only
        // below the pc where other lanes wait.
        let take = self.b.create_block();
        let out = self.b.create_block();
        let uniform = self.b.create_block();
        match guard {
            None => {
                self.b.ins().jump(uniform, &[]);
            }
            Some(_) => {
                let em = self.emask(guard);
                let all = self.b.ins().icmp(IntCC::Equal, em, self.mask);
                let not_all = self.b.create_block();
                self.b.ins().brif(all, uniform, &[], not_all, &[]);
                self.b.switch_to_block(not_all);
                let skip = self.b.create_block();
                self.b.ins().brif(em, out, &[], skip, &[]);
                self.b.switch_to_block(skip);
                self.add_steps(1);
                self.goto(pc + 1);
            }
        }
        self.b.switch_to_block(uniform);
        let below = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedGreaterThan, self.other, target as i64);
        self.b.ins().brif(below, take, &[], out, &[]);
        self.b.switch_to_block(take);
        self.add_steps(1);
        let cnt = self.popcnt64(self.mask);
        self.add_count(cnt);
        self.goto(target);
        // Divergent, or a merge point: the interpreter runs the branch.
        self.b.switch_to_block(out);
        self.leave(pc);
    }

    /// A run: for each lane of the group, every instruction of the run (see `RunFit`).
    /// With loads and stores, first every parameter the run loads (uniform: read once,
    /// after the bound check), then a pass over the lanes computing only what addresses
    /// and guards need, gathering each access's lowest and highest address; then each
    /// access's region is checked once for all lanes (`mem_check`). Anything that fails
    /// leaves to the interpreter at the run's first instruction, before any lane has
    /// run any of it: it runs them one by one and faults exactly where it always does,
    /// or translates what the TLB missed (the next run hits). Then the lanes run.
    fn run(&mut self, pc: u32, list: &[Item], guards: &[Option<(u32, bool)>]) {
        let len = list.len() as u32;
        self.enter_unit(pc, len);
        let flags = MemFlags::trusted();
        // Predicate words the run reads or writes, as they were before it.
        let mut used: Vec<u32> = Vec::new();
        fn note(p: u32, used: &mut Vec<u32>) {
            if !used.contains(&p) {
                used.push(p);
            }
        }
        for (k, it) in list.iter().enumerate() {
            if let Some((p, _)) = guards[k] {
                note(p, &mut used);
            }
            let Item::Nat(x) = it else { continue };
            for s in x.s[..x.nsrc as usize]
                .iter()
                .chain(x.comb.as_ref().map(|(_, c)| c))
            {
                if let Src::Pred(p) | Src::NotPred(p) = s {
                    note(*p, &mut used);
                }
            }
            for d in [x.d, x.q] {
                if let Dst::Pred(p) = d {
                    note(p, &mut used);
                }
            }
        }
        let words: HashMap<u32, Value> = used
            .iter()
            .map(|&p| {
                (
                    p,
                    self.b
                        .ins()
                        .load(types::I32, flags, self.preds, p as i32 * 4),
                )
            })
            .collect();
        // Predicates no path reads after the run before overwriting them are not merged
        // into their words (their bits live only in the lanes' code).
        let plive_after = self.plive.map(|l| &l[(pc + len) as usize]);
        let written: Vec<u32> = used
            .iter()
            .copied()
            .filter(|p| plive_after.is_none_or(|l| l[*p as usize / 64] >> (p % 64) & 1 != 0))
            .filter(|p| {
                list.iter().any(|it| match it {
                    Item::Nat(x) => x.d == Dst::Pred(*p) || x.q == Dst::Pred(*p),
                    Item::Mem(_) | Item::Skip { .. } => false,
                })
            })
            .collect();
        let bail = self.b.create_block();
        // Parameters: one read each.
        let mut params: HashMap<usize, Value> = HashMap::new();
        for (k, it) in list.iter().enumerate() {
            if let Item::Mem(m) = it {
                if m.space == Space::KParam {
                    let v = self.param_value(*m, bail);
                    params.insert(k, v);
                }
            }
        }
        // What every lane computes alike (from parameters, immediates, the block's and
        // grid's shape, and values computed so from them earlier in the run, unguarded)
        // is computed once here, before the loops over the lanes, which only write it.
        let mut pre: Vec<Option<(Value, Option<Value>)>> = vec![None; list.len()];
        {
            let mut ust = LaneState::default();
            // Registers uniform in the kernel are read in the group's first lane (all
            // its lanes hold the same value), until the run writes them lane by lane.
            // (A group is never empty; the mask keeps the address inside the registers
            // whatever it holds.)
            let lane0 = self.b.ins().ctz(self.mask);
            let lane0 = self.b.ins().band_imm(lane0, 31);
            let lane64 = self.b.ins().uextend(types::I64, lane0);
            let off = self.b.ins().imul_imm(lane64, 8);
            let base0 = self.b.ins().iadd(self.regs, off);
            let mut clobbered: Vec<Dst> = Vec::new();
            for (k, it) in list.iter().enumerate() {
                let guarded = guards[k].is_some();
                let forget = |ust: &mut LaneState, clobbered: &mut Vec<Dst>, d: Dst| {
                    match d {
                        Dst::Reg(r) => {
                            ust.regs.remove(&r);
                        }
                        Dst::Pred(p) => {
                            ust.bits.remove(&p);
                        }
                        Dst::Sink => return,
                    }
                    clobbered.push(d);
                };
                let uni = self.uni;
                match it {
                    Item::Nat(x) => {
                        let (srcs, need) = operands(x);
                        let all = srcs[..need]
                            .iter()
                            .all(|s| uniform(*s, &ust, uni, &clobbered))
                            && x.comb
                                .is_none_or(|(_, c)| uniform(c, &ust, uni, &clobbered));
                        if all && !guarded {
                            let v = self.native_eval(&mut ust, &words, base0, lane0, x);
                            self.native_write(&mut ust, &words, base0, lane0, x, v, None);
                            pre[k] = Some(v);
                        } else {
                            forget(&mut ust, &mut clobbered, x.d);
                            forget(&mut ust, &mut clobbered, x.q);
                        }
                    }
                    Item::Skip { .. } => {}
                    Item::Mem(m) => {
                        if let Some(d) = m.d {
                            for (i, x) in d[..m.n as usize].iter().enumerate() {
                                match (m.space, x, guarded, i) {
                                    (Space::KParam, Dst::Reg(r), false, 0) => {
                                        ust.regs.insert(*r, params[&k]);
                                    }
                                    _ => forget(&mut ust, &mut clobbered, *x),
                                }
                            }
                        }
                    }
                }
            }
        }
        self.pin_once(&mut pre, &mut params);
        // Predicates every write of the run computes once for the group: their words are
        // set after the lanes, without a bit per lane.
        let mut once_preds: HashMap<u32, Value> = HashMap::new();
        let mut lane_preds: Vec<u32> = Vec::new();
        for (k, it) in list.iter().enumerate() {
            let Item::Nat(x) = it else { continue };
            for (d, v) in [(x.d, pre[k].map(|p| p.0)), (x.q, pre[k].and_then(|p| p.1))] {
                let Dst::Pred(p) = d else { continue };
                match v {
                    Some(v) if !lane_preds.contains(&p) => {
                        once_preds.insert(p, v);
                    }
                    _ => {
                        once_preds.remove(&p);
                        lane_preds.push(p);
                    }
                }
            }
        }
        self.tid_consts = self.tid_setup(list);
        // The block's shared memory, for accesses checked lane by lane (`lane_check`).
        self.shared_span = list
            .iter()
            .any(|it| matches!(it, Item::Mem(m) if m.space == Space::Shared))
            .then(|| {
                let f = MemFlags::trusted();
                (
                    self.b
                        .ins()
                        .load(types::I64, f, self.frame, OFF_SHARED_LIMIT),
                    self.b.ins().load(types::I64, f, self.frame, OFF_SHARED),
                )
            });
        let accesses: Vec<usize> = (0..list.len())
            .filter(|k| matches!(list[*k], Item::Mem(m) if m.space != Space::KParam))
            .collect();
        let mut deltas: HashMap<usize, Value> = HashMap::new();
        // Loads only, in a run that may run again from its start: each lane's access is
        // checked as it runs, against the span the previous lane used (`Gen::lane_check`).
        let deferred = if accesses.is_empty() {
            None
        } else {
            loads_rerunnable(list, guards)
        };
        let per_lane = deferred.is_some();
        // Each deferred register's lanes, kept aside until the last lane has run.
        let aside: HashMap<u32, Value> = deferred
            .iter()
            .flatten()
            .map(|&r| {
                let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                    StackSlotKind::ExplicitSlot,
                    32 * 8,
                    3,
                ));
                (r, self.b.ins().stack_addr(types::I64, slot, 0))
            })
            .collect();
        let mut caches: HashMap<usize, LaneCache> = HashMap::new();
        if per_lane {
            for &k in &accesses {
                let c = LaneCache {
                    lo: self.var(types::I64),
                    lim: self.var(types::I64),
                    delta: self.var(types::I64),
                };
                let z = self.b.ins().iconst(types::I64, 0);
                for v in [c.lo, c.lim, c.delta] {
                    self.b.def_var(v, z);
                }
                caches.insert(k, c);
            }
        }
        let (lead, groups) = if per_lane {
            access_groups(list, guards, &accesses)
        } else {
            Default::default()
        };
        if !accesses.is_empty() && !per_lane {
            let slice = address_slice(list, guards);
            // Per access: lowest and highest address, their bits or-ed, any lane at all.
            let acc: Vec<[Variable; 4]> = accesses
                .iter()
                .map(|_| {
                    let v = [
                        self.var(types::I64),
                        self.var(types::I64),
                        self.var(types::I64),
                        self.var(types::I64),
                    ];
                    for (x, init) in v.iter().zip([u64::MAX as i64, 0, 0, 0]) {
                        let c = self.b.ins().iconst(types::I64, init);
                        self.b.def_var(*x, c);
                    }
                    v
                })
                .collect();
            self.lanes(self.mask, |g, lane, base| {
                let mut st = LaneState::default();
                let mut j = 0;
                for (k, it) in list.iter().enumerate() {
                    let active = guards[k].map(|(p, neg)| {
                        let bit = g.pbit(&mut st, &words, p, lane);
                        if neg {
                            g.b.ins().bxor_imm(bit, 1)
                        } else {
                            bit
                        }
                    });
                    match it {
                        Item::Nat(x) if slice[k] => match pre[k] {
                            Some(v) => g.native_write(&mut st, &words, base, lane, x, v, None),
                            None => g.native(&mut st, &words, base, lane, x, active),
                        },
                        Item::Mem(m) if m.space == Space::KParam => {
                            if let (true, Some(d)) = (slice[k], m.d) {
                                g.write(&mut st, &words, base, lane, d[0], params[&k], active);
                            }
                        }
                        Item::Mem(m) => {
                            let a = g.src(&mut st, &words, base, lane, m.addr);
                            let a = g.b.ins().iadd_imm(a, m.off);
                            let [lo, hi, bits, any] = acc[j];
                            j += 1;
                            let on = active.unwrap_or_else(|| g.b.ins().iconst(types::I64, 1));
                            let old = [lo, hi, bits, any].map(|v| g.b.use_var(v));
                            let new = [
                                g.b.ins().umin(old[0], a),
                                g.b.ins().umax(old[1], a),
                                g.b.ins().bor(old[2], a),
                                on,
                            ];
                            for (i, v) in [lo, hi, bits].into_iter().enumerate() {
                                let x = g.b.ins().select(on, new[i], old[i]);
                                g.b.def_var(v, x);
                            }
                            let x = g.b.ins().bor(old[3], on);
                            g.b.def_var(any, x);
                        }
                        _ => {}
                    }
                }
            });
            for (j, &k) in accesses.iter().enumerate() {
                let Item::Mem(m) = list[k] else { continue };
                let [lo, hi, bits, any] = acc[j].map(|v| self.b.use_var(v));
                let delta = self.mem_check(m, lo, hi, bits, any, bail);
                deltas.insert(k, delta);
            }
        }
        let left = self.var(types::I32);
        let guarded_count = self.var(types::I64);
        let skips: Vec<(usize, u32)> = list
            .iter()
            .enumerate()
            .filter_map(|(k, it)| match it {
                Item::Skip { body } => Some((k, *body)),
                _ => None,
            })
            .collect();
        let skip_any: HashMap<usize, Variable> = skips
            .iter()
            .map(|&(k, _)| (k, self.var(types::I64)))
            .collect();
        let accs: HashMap<u32, Variable> =
            written.iter().map(|&p| (p, self.var(types::I32))).collect();
        let zero32 = self.b.ins().iconst(types::I32, 0);
        let zero64 = self.b.ins().iconst(types::I64, 0);
        // A run whose every instruction is computed once for the group has nothing to do
        // lane by lane: its loop runs no lane (what it writes is written after it).
        let all_once = list.iter().enumerate().all(|(k, it)| match it {
            Item::Nat(_) => pre[k].is_some(),
            Item::Mem(m) => m.space == Space::KParam && guards[k].is_none(),
            Item::Skip { .. } => false,
        });
        if all_once {
            self.b.def_var(left, zero32);
        } else {
            self.b.def_var(left, self.mask);
        }
        self.b.def_var(guarded_count, zero64);
        for v in skip_any.values() {
            self.b.def_var(*v, zero64);
        }
        for v in accs.values() {
            self.b.def_var(*v, zero32);
        }
        // Shared accesses checked lane by lane: each size's bound computed once here.
        if let Some((limit, _)) = self.shared_span {
            let mut totals: Vec<i64> = Vec::new();
            for &k in &accesses {
                let Item::Mem(m) = list[k] else { continue };
                if m.space == Space::Shared && caches.contains_key(&k) {
                    totals.push(m.size as i64 * m.n as i64);
                    if let Some(g) = groups.get(&k) {
                        totals.push(g.bytes);
                    }
                }
            }
            totals.sort_unstable();
            totals.dedup();
            self.shared_tops = totals
                .into_iter()
                .map(|t| (t, self.shared_top(limit, t)))
                .collect();
        }
        let no_old = unguarded_writes(
            list,
            guards,
            self.live.map(|l| l[(pc + len) as usize].as_slice()),
        );
        let live_after = self.live.map(|l| &l[(pc + len) as usize]);
        // Values computed once before the loop (`pre`, parameters): written after it, to
        // every lane at once, not carried round the loop.
        let invariant: Vec<Value> = pre
            .iter()
            .flatten()
            .map(|(v, _)| *v)
            .chain(params.values().copied())
            .collect();
        // One lane's code, emitted once for the loop over the group's lanes (and four
        // more times for full warps, below): what every copy writes after the lanes (the
        // same in each) and how many unguarded instructions it issued.
        let lane_body = |g: &mut Self, lane: Value, base: Value| -> (Vec<(u32, Value)>, i64) {
            let mut st = LaneState::default();
            let mut unguarded = 0i64;
            let mut group_delta: HashMap<usize, Value> = HashMap::new();
            // Instructions issued under a guard: counted once for each stretch under one
            // guard whose predicate the stretch does not write (an if-converted body), the
            // lane's bit times the stretch's length.
            let mut stretch: Option<((u32, bool), Value, i64)> = None;
            let count = |g: &mut Self, stretch: &mut Option<((u32, bool), Value, i64)>| {
                if let Some((_, bit, n)) = stretch.take() {
                    let add = if n == 1 {
                        bit
                    } else {
                        g.b.ins().imul_imm(bit, n)
                    };
                    let c = g.b.use_var(guarded_count);
                    let c = g.b.ins().iadd(c, add);
                    g.b.def_var(guarded_count, c);
                }
            };
            for (k, it) in list.iter().enumerate() {
                g.no_old = no_old[k];
                let active = match guards[k] {
                    None => {
                        unguarded += 1;
                        None
                    }
                    Some(key) => match &mut stretch {
                        Some((at, bit, n)) if *at == key => {
                            *n += 1;
                            Some(*bit)
                        }
                        _ => {
                            count(g, &mut stretch);
                            let (p, neg) = key;
                            let bit = g.pbit(&mut st, &words, p, lane);
                            let bit = if neg { g.b.ins().bxor_imm(bit, 1) } else { bit };
                            stretch = Some((key, bit, 1));
                            Some(bit)
                        }
                    },
                };
                if let (Item::Nat(x), Some(((p, _), _, _))) = (it, stretch) {
                    if x.d == Dst::Pred(p) || x.q == Dst::Pred(p) {
                        // Later instructions under this guard see the new value.
                        count(g, &mut stretch);
                    }
                }
                match it {
                    Item::Nat(x) => match pre[k] {
                        Some(v) => g.native_write(&mut st, &words, base, lane, x, v, None),
                        None => g.native(&mut st, &words, base, lane, x, active),
                    },
                    Item::Mem(m) if m.space == Space::KParam => {
                        if let Some(d) = m.d {
                            g.write(&mut st, &words, base, lane, d[0], params[&k], active);
                        }
                    }
                    Item::Mem(m) => {
                        let at = match (caches.get(&k), lead.get(&k)) {
                            (Some(c), Some(&first)) if first == k => {
                                At::Group(*c, bail, groups[&k])
                            }
                            (Some(_), Some(first)) => At::Delta(group_delta[first]),
                            (Some(c), None) => At::Lane(*c, bail),
                            (None, _) => At::Delta(deltas[&k]),
                        };
                        g.access(&mut st, &words, base, lane, *m, at, active);
                        if let Some(d) = g.group_delta.take() {
                            group_delta.insert(k, d);
                        }
                    }
                    Item::Skip { .. } => {
                        // `active`: the lane takes the branch; the body runs when one does not.
                        let v = skip_any[&k];
                        let not = g.b.ins().bxor_imm(active.unwrap_or(zero64), 1);
                        let any = g.b.use_var(v);
                        let any = g.b.ins().bor(any, not);
                        g.b.def_var(v, any);
                    }
                }
            }
            count(g, &mut stretch);
            g.no_old = false;
            let mut uniform_out: Vec<(u32, Value)> = Vec::new();
            for r in std::mem::take(&mut st.dirty) {
                // A register no path reads again before overwriting it need not be stored.
                if live_after.is_some_and(|l| l[r as usize / 64] >> (r % 64) & 1 == 0) {
                    continue;
                }
                let v = st.regs[&r];
                if invariant.contains(&v) && !aside.contains_key(&r) {
                    uniform_out.push((r, v));
                    continue;
                }
                match aside.get(&r) {
                    Some(&slot) => {
                        let lane64 = g.b.ins().uextend(types::I64, lane);
                        let off = g.b.ins().imul_imm(lane64, 8);
                        let at = g.b.ins().iadd(slot, off);
                        g.b.ins().store(flags, v, at, 0);
                    }
                    None => {
                        g.b.ins().store(flags, v, base, r as i32 * 256);
                    }
                }
            }
            for p in std::mem::take(&mut st.dirty_preds) {
                if once_preds.contains_key(&p) || !accs.contains_key(&p) {
                    continue;
                }
                let bit = st.bits[&p];
                let bit = g.b.ins().ireduce(types::I32, bit);
                let sh = g.b.ins().ishl(bit, lane);
                let acc = g.b.use_var(accs[&p]);
                let acc = g.b.ins().bor(acc, sh);
                g.b.def_var(accs[&p], acc);
            }
            (uniform_out, unguarded)
        };
        let header = self.b.create_block();
        let body = self.b.create_block();
        let after = self.b.create_block();
        // Full warps running a short run: four lanes an iteration at known offsets, with
        // no search for the next lane (a loop of a few instructions a lane spent half of
        // them finding the next one).
        let unroll = !all_once
            && aside.is_empty()
            && list.len() <= UNROLL_MAX_LEN
            // A lane cache's compare and refill measured no faster unrolled.
            && (0..list.len()).all(|k| !caches.contains_key(&k));
        let mut first: Option<(Vec<(u32, Value)>, i64)> = None;
        if unroll {
            let wide = self.b.create_block();
            let i = self.b.append_block_param(wide, types::I32);
            let full = self.b.ins().icmp_imm(IntCC::Equal, self.mask, 0xffff_ffff);
            let i0 = self.b.ins().iconst(types::I32, 0);
            self.b
                .ins()
                .brif(full, wide, &[BlockArg::Value(i0)], header, &[]);
            self.b.switch_to_block(wide);
            for k in 0..4 {
                let lane = self.b.ins().iadd_imm(i, k);
                let base = self.lane_base(lane);
                let out = lane_body(self, lane, base);
                first.get_or_insert(out);
            }
            let next = self.b.ins().iadd_imm(i, 4);
            let more = self.b.ins().icmp_imm(IntCC::UnsignedLessThan, next, 32);
            self.b
                .ins()
                .brif(more, wide, &[BlockArg::Value(next)], after, &[]);
        } else {
            self.b.ins().jump(header, &[]);
        }
        self.b.switch_to_block(header);
        let m = self.b.use_var(left);
        self.b.ins().brif(m, body, &[], after, &[]);
        self.b.switch_to_block(body);
        let (lane, base) = self.next_lane(left, m);
        let out = lane_body(self, lane, base);
        let (uniform_out, unguarded) = first.unwrap_or(out);
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(after);
        if !uniform_out.is_empty() {
            self.write_uniform(&uniform_out);
        }
        if !aside.is_empty() {
            // Every lane ran: the values kept aside go to the register file.
            let mut regs: Vec<(u32, Value)> = aside.iter().map(|(r, v)| (*r, *v)).collect();
            regs.sort_by_key(|x| x.0);
            self.lanes(self.mask, |g, lane, base| {
                let lane64 = g.b.ins().uextend(types::I64, lane);
                let off = g.b.ins().imul_imm(lane64, 8);
                for (r, slot) in &regs {
                    let at = g.b.ins().iadd(*slot, off);
                    let v = g.b.ins().load(types::I64, flags, at, 0);
                    g.b.ins().store(flags, v, base, *r as i32 * 256);
                }
            });
        }
        for p in &written {
            let keep = self.b.ins().bnot(self.mask);
            let old = self.b.ins().band(words[p], keep);
            let acc = match once_preds.get(p) {
                Some(&bit) => {
                    let zero = self.b.ins().iconst(types::I32, 0);
                    self.b.ins().select(bit, self.mask, zero)
                }
                None => self.b.use_var(accs[p]),
            };
            let new = self.b.ins().bor(old, acc);
            self.b.ins().store(flags, new, self.preds, *p as i32 * 4);
        }
        self.tid_consts = None;
        self.shared_span = None;
        self.shared_tops.clear();
        // A branch's body counts as issued when a lane ran it (`if_convert`).
        let skipped: u32 = skips.iter().map(|s| s.1).sum();
        self.add_steps((len - skipped) as i64);
        for &(k, body) in &skips {
            let any = self.b.use_var(skip_any[&k]);
            let n = self.b.ins().imul_imm(any, body as i64);
            let s = self.b.use_var(self.steps);
            let s = self.b.ins().iadd(s, n);
            self.b.def_var(self.steps, s);
        }
        let pop = self.popcnt64(self.mask);
        let base_count = self.b.ins().imul_imm(pop, unguarded);
        let g = self.b.use_var(guarded_count);
        let total = self.b.ins().iadd(base_count, g);
        self.add_count(total);
        self.goto(pc + len);
        self.b.switch_to_block(bail);
        self.leave(pc);
    }

    /// How many start addresses of a `total`-byte shared access lie below `limit`
    /// (`limit - total + 1`, 0 when `total` exceeds it): one unsigned compare checks a
    /// lane's address. Computed before the loops over the lanes and kept there
    /// (`opaque`).
    fn shared_top(&mut self, limit: Value, total: i64) -> Value {
        let room = self
            .b
            .ins()
            .icmp_imm(IntCC::UnsignedGreaterThanOrEqual, limit, total);
        let top = self.b.ins().iadd_imm(limit, 1 - total);
        let zero = self.b.ins().iconst(types::I64, 0);
        let top = self.b.ins().select(room, top, zero);
        self.opaque(top)
    }

    /// `v` as a value Cranelift neither moves nor recomputes: an add with an overflow
    /// flag has two results, and such an instruction stays where it is placed.
    fn opaque(&mut self, v: Value) -> Value {
        let t = self.b.func.dfg.value_type(v);
        let zero = self.b.ins().iconst(t, 0);
        self.b.ins().uadd_overflow(v, zero).0
    }

    /// Makes what a run computes once for the group (`pre`, parameters) opaque before
    /// the loops over its lanes: Cranelift places a pure value where it is used and
    /// rematerialises its constants there, so the loops would compute it again for every
    /// lane. An add with overflow flag has two results, which Cranelift never moves nor
    /// merges: its sum stays computed here.
    fn pin_once(
        &mut self,
        pre: &mut [Option<(Value, Option<Value>)>],
        params: &mut HashMap<usize, Value>,
    ) {
        let mut once: Vec<Value> = pre
            .iter()
            .flatten()
            .flat_map(|(v, r)| std::iter::once(*v).chain(*r))
            .chain(params.values().copied())
            .collect();
        once.sort();
        once.dedup();
        let mut map = HashMap::new();
        for &v in &once {
            let t = self.b.func.dfg.value_type(v);
            let pinned = match t {
                types::I8 | types::I16 | types::I32 | types::I64 => self.opaque(v),
                types::F32 | types::F64 => {
                    let it = if t == types::F32 {
                        types::I32
                    } else {
                        types::I64
                    };
                    let bits = self.b.ins().bitcast(it, MemFlags::new(), v);
                    let bits = self.opaque(bits);
                    self.b.ins().bitcast(t, MemFlags::new(), bits)
                }
                _ => v,
            };
            map.insert(v, pinned);
        }
        for (v, r) in pre.iter_mut().flatten() {
            *v = map[v];
            if let Some(r) = r {
                *r = map[r];
            }
        }
        for v in params.values_mut() {
            *v = map[v];
        }
    }

    /// Registers with one value for the whole group: every lane of the mask written, with
    /// 16-byte stores when the group is the whole warp.
    fn write_uniform(&mut self, regs: &[(u32, Value)]) {
        let flags = MemFlags::trusted();
        let full = self.b.ins().icmp_imm(IntCC::Equal, self.mask, -1);
        let whole = self.b.create_block();
        let some = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(full, whole, &[], some, &[]);
        self.b.switch_to_block(whole);
        for &(r, v) in regs {
            let pair = self.b.ins().splat(types::I64X2, v);
            for i in 0..16 {
                self.b
                    .ins()
                    .store(flags, pair, self.regs, r as i32 * 256 + i * 16);
            }
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(some);
        self.lanes(self.mask, |g, _, base| {
            for &(r, v) in regs {
                g.b.ins().store(flags, v, base, r as i32 * 256);
            }
        });
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    /// One lane's load or store at `address + delta` (its host address: `mem_check`
    /// found the whole access inside the region for every lane); under a guard only
    /// when the lane's guard holds.
    #[allow(clippy::too_many_arguments)]
    fn access(
        &mut self,
        st: &mut LaneState,
        words: &HashMap<u32, Value>,
        base: Value,
        lane: Value,
        m: Mem,
        at: At,
        active: Option<Value>,
    ) {
        let a = self.src(st, words, base, lane, m.addr);
        let a = self.b.ins().iadd_imm(a, m.off);
        let n = m.n as usize;
        let size = m.size;
        // Values to store, read before the guard's branch (so they dominate what follows).
        let vals: Vec<Value> = match m.d {
            None => (0..n)
                .map(|k| self.src(st, words, base, lane, m.v[k]))
                .collect(),
            Some(_) => Vec::new(),
        };
        let (go, join) = match active {
            Some(bit) => {
                let go = self.b.create_block();
                let join = self.b.create_block();
                if m.d.is_some() {
                    for _ in 0..n {
                        self.b.append_block_param(join, types::I64);
                    }
                }
                let zeros: Vec<BlockArg> = (0..if m.d.is_some() { n } else { 0 })
                    .map(|_| BlockArg::Value(self.b.ins().iconst(types::I64, 0)))
                    .collect();
                self.b.ins().brif(bit, go, &[], join, &zeros);
                self.b.switch_to_block(go);
                (Some(go), Some(join))
            }
            None => (None, None),
        };
        let _ = go;
        let delta = match at {
            At::Delta(d) => d,
            At::Lane(c, bail) => {
                let total = m.size as i64 * m.n as i64;
                self.lane_check(m, a, (total, total), c, bail)
            }
            At::Group(c, bail, g) => {
                // The whole group's bytes, from the same base register.
                let lo = self.b.ins().iadd_imm(a, g.lo_off - m.off);
                let d = self.lane_check(Mem { size: g.elem, ..m }, lo, (g.bytes, g.align), c, bail);
                self.group_delta = Some(d);
                d
            }
        };
        let p = self.b.ins().iadd(a, delta);
        match m.d {
            Some(d) => {
                let loaded = self.load_vector(p, size, n, m.signed);
                let loaded = match join {
                    Some(join) => {
                        let args: Vec<BlockArg> =
                            loaded.iter().map(|v| BlockArg::Value(*v)).collect();
                        self.b.ins().jump(join, &args);
                        self.b.switch_to_block(join);
                        self.b.block_params(join).to_vec()
                    }
                    None => loaded,
                };
                for (k, v) in loaded.into_iter().enumerate() {
                    self.write(st, words, base, lane, d[k], v, active);
                }
            }
            None => {
                self.store_vector(&vals, p, size);
                if let Some(join) = join {
                    self.b.ins().jump(join, &[]);
                    self.b.switch_to_block(join);
                }
            }
        }
    }

    /// The host delta of one lane's access at `a`: the span the last lane used when it
    /// covers the whole access, else the TLB's or shared memory's (`lane_lookup`), else
    /// to `bail`. Misaligned: to `bail`.
    /// `total` bytes from `a`, aligned to `align` (for a group of accesses: `Group`).
    fn lane_check(
        &mut self,
        m: Mem,
        a: Value,
        (total, align): (i64, i64),
        c: LaneCache,
        bail: Block,
    ) -> Value {
        let hit = self.b.create_block();
        let miss = self.b.create_block();
        if m.space == Space::Shared && self.shared_span.is_some() {
            let aligned = self.b.create_block();
            let mis = self.b.ins().band_imm(a, align - 1);
            self.b.ins().brif(mis, bail, &[], aligned, &[]);
            self.b.switch_to_block(aligned);
        }
        if let (Space::Shared, Some((_, shared)), Some(&top)) =
            (m.space, self.shared_span, self.shared_tops.get(&total))
        {
            // One span, the same for every lane: `total` bytes at `a` below the bound,
            // as `helper_lookup` checks, in one compare (`shared_top`).
            let below = self.b.ins().icmp(IntCC::UnsignedLessThan, a, top);
            self.b.ins().brif(below, hit, &[], bail, &[]);
            self.b.switch_to_block(miss);
            self.b.ins().jump(bail, &[]);
            self.b.switch_to_block(hit);
            return shared;
        }
        // Alignment and span in one compare: the cached span starts aligned (else its
        // bound is 0, `lane_lookup`), so an offset from it is aligned exactly when the
        // address is; rotated right by the alignment's bits, a misaligned offset turns
        // into a huge number, an aligned one into its count of `align` steps, which the
        // bound counts too.
        let (lo, lim) = (self.b.use_var(c.lo), self.b.use_var(c.lim));
        let off = self.b.ins().isub(a, lo);
        let steps = self.b.ins().rotr_imm(off, align.trailing_zeros() as i64);
        let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, steps, lim);
        self.b.ins().brif(inside, hit, &[], miss, &[]);
        self.b.switch_to_block(miss);
        let aligned = self.b.create_block();
        let mis = self.b.ins().band_imm(a, align - 1);
        self.b.ins().brif(mis, bail, &[], aligned, &[]);
        self.b.switch_to_block(aligned);
        self.lane_lookup(m, a, (total, align), c, hit, bail);
        self.b.switch_to_block(hit);
        self.b.use_var(c.delta)
    }

    /// Finds the span holding `total` bytes at `a` for `lane_check` (`super::helper_lookup`,
    /// called: a miss is rare, and the code of a search is large for the register
    /// allocator): sets the cache and goes to `hit`, or to `bail`.
    fn lane_lookup(
        &mut self,
        m: Mem,
        a: Value,
        (total, align): (i64, i64),
        c: LaneCache,
        hit: Block,
        bail: Block,
    ) {
        let flags = MemFlags::trusted();
        let how = super::lookup_code(m.space, m.size, m.d.is_none());
        let f = self.b.ins().iconst(
            types::I64,
            super::helper_lookup as *const () as usize as i64,
        );
        let t = self.b.ins().iconst(types::I64, total);
        let h = self.b.ins().iconst(types::I32, how as i64);
        let call = self
            .b
            .ins()
            .call_indirect(self.lookup_sig, f, &[self.frame, a, t, h]);
        let found = self.b.inst_results(call)[0];
        let go = self.b.create_block();
        self.b.ins().brif(found, go, &[], bail, &[]);
        self.b.switch_to_block(go);
        let [lo, lim, delta] = [0, 8, 16].map(|o| {
            self.b
                .ins()
                .load(types::I64, flags, self.frame, super::OFF_LOOKUP + o)
        });
        // The aligned start offsets: (highest + 1) / align rounded up, as `lane_check`
        // counts them (a span's length is far below 2^64); none when the span's start
        // is not aligned (registered host memory may start anywhere), so every lane takes
        // this slower path, which checks the address's own alignment.
        let k = align.trailing_zeros() as i64;
        let lim = self.b.ins().iadd_imm(lim, align);
        let lim = self.b.ins().ushr_imm(lim, k);
        let odd = self.b.ins().band_imm(lo, align - 1);
        let zero = self.b.ins().iconst(types::I64, 0);
        let lim = self.b.ins().select(odd, zero, lim);
        self.b.def_var(c.lo, lo);
        self.b.def_var(c.lim, lim);
        self.b.def_var(c.delta, delta);
        self.b.ins().jump(hit, &[]);
    }

    /// The host delta (host address - device address) of an access whose lanes' lowest
    /// and highest addresses are `lo` and `hi` (`bits` or-ed, `any` whether a lane runs
    /// it at all: none, nothing to check), or to `bail`.
    fn mem_check(
        &mut self,
        m: Mem,
        lo: Value,
        hi: Value,
        bits: Value,
        any: Value,
        bail: Block,
    ) -> Value {
        let done = self.b.create_block();
        let delta = self.b.append_block_param(done, types::I64);
        let check = self.b.create_block();
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b
            .ins()
            .brif(any, check, &[], done, &[BlockArg::Value(zero)]);
        self.b.switch_to_block(check);
        let total = m.size as i64 * m.n as i64;
        // A vector's first address aligned to the whole vector, a scalar's to its size:
        // `locate` and the vector check of `load`/`store`.
        let mis = self.b.ins().band_imm(bits, total - 1);
        let aligned = self.b.create_block();
        self.b.ins().brif(mis, bail, &[], aligned, &[]);
        self.b.switch_to_block(aligned);
        let store = m.d.is_none();
        match m.space {
            Space::Shared => self.shared_check(lo, hi, 0, total, done, bail),
            Space::Generic => {
                let global = self.b.create_block();
                let shared = self.b.create_block();
                let below =
                    self.b
                        .ins()
                        .icmp_imm(IntCC::UnsignedLessThan, hi, SHARED_WINDOW as i64);
                self.b.ins().brif(below, global, &[], shared, &[]);
                self.b.switch_to_block(global);
                self.tlb_check(lo, hi, total, m.size, store, done, bail);
                self.b.switch_to_block(shared);
                self.shared_check(lo, hi, SHARED_WINDOW, total, done, bail);
            }
            _ => self.tlb_check(lo, hi, total, m.size, store, done, bail),
        }
        self.b.switch_to_block(done);
        delta
    }

    /// Predicate `p`'s bit of this lane, 0 or 1 (i64).
    fn pbit(
        &mut self,
        st: &mut LaneState,
        words: &HashMap<u32, Value>,
        p: u32,
        lane: Value,
    ) -> Value {
        if let Some(v) = st.bits.get(&p) {
            return *v;
        }
        let w = self.b.ins().ushr(words[&p], lane);
        let w = self.b.ins().band_imm(w, 1);
        let v = self.b.ins().uextend(types::I64, w);
        st.bits.insert(p, v);
        v
    }

    fn reg(&mut self, st: &mut LaneState, base: Value, r: u32) -> Value {
        if let Some(v) = st.regs.get(&r) {
            return *v;
        }
        let v = self
            .b
            .ins()
            .load(types::I64, MemFlags::trusted(), base, r as i32 * 256);
        st.regs.insert(r, v);
        v
    }

    fn src(
        &mut self,
        st: &mut LaneState,
        words: &HashMap<u32, Value>,
        base: Value,
        lane: Value,
        s: Src,
    ) -> Value {
        match s {
            Src::Reg(r) => self.reg(st, base, r),
            Src::Imm(v) => self.b.ins().iconst(types::I64, v as i64),
            Src::Pred(p) => self.pbit(st, words, p, lane),
            Src::NotPred(p) => {
                let v = self.pbit(st, words, p, lane);
                self.b.ins().bxor_imm(v, 1)
            }
            Src::Sreg(sr) => self.sreg(sr, lane),
            Src::DynShared(off) => {
                let v =
                    self.b
                        .ins()
                        .load(types::I64, MemFlags::trusted(), self.frame, OFF_DYN_SHARED);
                self.b.ins().iadd_imm(v, off)
            }
            // Not classified native (`plain`).
            _ => self.b.ins().iconst(types::I64, 0),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        st: &mut LaneState,
        words: &HashMap<u32, Value>,
        base: Value,
        lane: Value,
        d: Dst,
        v: Value,
        active: Option<Value>,
    ) {
        match d {
            Dst::Reg(r) => {
                let v = match active {
                    Some(a) if !self.no_old => {
                        let old = self.reg(st, base, r);
                        self.b.ins().select(a, v, old)
                    }
                    _ => v,
                };
                st.regs.insert(r, v);
                st.f32s.remove(&r);
                if !st.dirty.contains(&r) {
                    st.dirty.push(r);
                }
            }
            Dst::Pred(p) => {
                let bit = self.b.ins().icmp_imm(IntCC::NotEqual, v, 0);
                let bit = self.b.ins().uextend(types::I64, bit);
                let bit = match active {
                    Some(a) => {
                        let old = self.pbit(st, words, p, lane);
                        self.b.ins().select(a, bit, old)
                    }
                    None => bit,
                };
                st.bits.insert(p, bit);
                if !st.dirty_preds.contains(&p) {
                    st.dirty_preds.push(p);
                }
            }
            Dst::Sink => {}
        }
    }

    fn native(
        &mut self,
        st: &mut LaneState,
        words: &HashMap<u32, Value>,
        base: Value,
        lane: Value,
        x: &Native,
        active: Option<Value>,
    ) {
        let (v, q) = self.native_eval(st, words, base, lane, x);
        let raw = self.raw_f32.take();
        self.native_write(st, words, base, lane, x, (v, q), active);
        if let (Some(raw), Dst::Reg(r)) = (raw, x.d) {
            if active.is_none() || self.no_old {
                st.f32s.insert(r, raw);
            }
        }
    }

    /// An f32 operand: the F32 a run computed (NaNs not yet canonical) (`LaneState::f32s`), or the
    /// register's bits.
    fn f32_operand(
        &mut self,
        st: &mut LaneState,
        words: &HashMap<u32, Value>,
        base: Value,
        lane: Value,
        s: Src,
    ) -> Value {
        if let Src::Reg(r) = s {
            if let Some(v) = st.f32s.get(&r) {
                return *v;
            }
        }
        let v = self.src(st, words, base, lane, s);
        let v = self.b.ins().ireduce(types::I32, v);
        self.b.ins().bitcast(types::F32, MemFlags::new(), v)
    }

    /// Writes what `native_eval` computed (`Gen::run` computes uniform ones once).
    #[allow(clippy::too_many_arguments)]
    fn native_write(
        &mut self,
        st: &mut LaneState,
        words: &HashMap<u32, Value>,
        base: Value,
        lane: Value,
        x: &Native,
        (v, q): (Value, Option<Value>),
        active: Option<Value>,
    ) {
        self.write(st, words, base, lane, x.d, v, active);
        if let Some(q) = q {
            self.write(st, words, base, lane, x.q, q, active);
        }
    }

    /// The value of `x`'s destination, and of its second (`setp p|q`).
    fn native_eval(
        &mut self,
        st: &mut LaneState,
        words: &HashMap<u32, Value>,
        base: Value,
        lane: Value,
        x: &Native,
    ) -> (Value, Option<Value>) {
        self.raw_f32 = None;
        let (srcs, need) = operands(x);
        if let (N::F32(op), None) = (x.n, x.comb) {
            let mut f = [None; 3];
            for (k, o) in f.iter_mut().enumerate().take(need) {
                *o = Some(self.f32_operand(st, words, base, lane, srcs[k]));
            }
            let [a, b, c] = f;
            let r = self.f32_arith(op, a.expect("an operand"), b, c);
            self.raw_f32 = Some(r);
            return (self.canonical32(r), None);
        }
        let mut ops = [None; 4];
        let v = match x.n {
            N::CmpF32(cmp) => {
                let a = self.f32_operand(st, words, base, lane, srcs[0]);
                let b = self.f32_operand(st, words, base, lane, srcs[1]);
                self.fcmp32(cmp, a, b)
            }
            _ => {
                for (k, o) in ops.iter_mut().enumerate().take(need) {
                    *o = Some(self.src(st, words, base, lane, srcs[k]));
                }
                let z = self.b.ins().iconst(types::I64, 0);
                let [a, bb, c, e] = ops.map(|o| o.unwrap_or(z));
                self.op(x.n, a, bb, c, e)
            }
        };
        match (x.n, x.comb) {
            (N::CmpInt { .. } | N::CmpF32(_), comb) => {
                let p = match comb {
                    Some((op, cs)) => {
                        let cv = self.src(st, words, base, lane, cs);
                        let cb = self.b.ins().icmp_imm(IntCC::NotEqual, cv, 0);
                        let cb = self.b.ins().uextend(types::I64, cb);
                        match op {
                            BoolOp::And => self.b.ins().band(v, cb),
                            BoolOp::Or => self.b.ins().bor(v, cb),
                            BoolOp::Xor => self.b.ins().bxor(v, cb),
                        }
                    }
                    None => v,
                };
                let q = (x.q != Dst::Sink).then(|| self.b.ins().bxor_imm(v, 1));
                (p, q)
            }
            _ => (v, None),
        }
    }

    /// The host F32 result of f32 arithmetic (NaN bits not yet canonical: `canonical32`).
    fn f32_arith(&mut self, op: FOp, a: Value, b: Option<Value>, c: Option<Value>) -> Value {
        let two = |b: Option<Value>| b.expect("two operands");
        match op {
            FOp::Add => self.b.ins().fadd(a, two(b)),
            FOp::Sub => self.b.ins().fsub(a, two(b)),
            FOp::Mul => self.b.ins().fmul(a, two(b)),
            FOp::Fma => self.b.ins().fma(a, two(b), c.expect("three operands")),
            // Only the sign bit changes; a NaN is made canonical after, as `math` does.
            FOp::Abs => self.b.ins().fabs(a),
            FOp::Neg => self.b.ins().fneg(a),
            FOp::Div => self.b.ins().fdiv(a, two(b)),
            FOp::Sqrt => self.b.ins().sqrt(a),
            FOp::Rcp => {
                let one = self.b.ins().f32const(1.0);
                self.b.ins().fdiv(one, a)
            }
            FOp::DivApprox => {
                // `math`'s div.approx: a * (1/b), or a * (0.25/b) * 0.25 for a finite b
                // past 2^126 (the hardware's flush of huge divisors), in those steps.
                let b = two(b);
                let mag = self.b.ins().fabs(b);
                let limit = self.b.ins().f32const(8.507059e37);
                let inf = self.b.ins().f32const(f32::INFINITY);
                let big = self.b.ins().fcmp(FloatCC::GreaterThan, mag, limit);
                let finite = self.b.ins().fcmp(FloatCC::LessThan, mag, inf);
                let huge = self.b.ins().band(big, finite);
                let (one, quarter) = (self.b.ins().f32const(1.0), self.b.ins().f32const(0.25));
                let num = self.b.ins().select(huge, quarter, one);
                let q = self.b.ins().fdiv(num, b);
                let r = self.b.ins().fmul(a, q);
                let scaled = self.b.ins().fmul(r, quarter);
                self.b.ins().select(huge, scaled, r)
            }
        }
    }

    /// An F32 result's bits as the interpreter keeps them: any NaN canonical.
    fn canonical32(&mut self, r: Value) -> Value {
        let nan = self.b.ins().fcmp(FloatCC::Unordered, r, r);
        let bits = self.b.ins().bitcast(types::I32, MemFlags::new(), r);
        let canon = self
            .b
            .ins()
            .iconst(types::I32, crate::math::CANONICAL_NAN32 as i64);
        let bits = self.b.ins().select(nan, canon, bits);
        self.b.ins().uextend(types::I64, bits)
    }

    fn low(&mut self, v: Value, bits: u8) -> Value {
        if bits >= 64 {
            v
        } else if bits == 32 {
            // A 32-bit move (`mov %eax, %eax`) rather than an and with a 64-bit mask,
            // which x86 reads from the constant pool.
            let w = self.b.ins().ireduce(types::I32, v);
            self.b.ins().uextend(types::I64, w)
        } else {
            self.b.ins().band_imm(v, ((1u64 << bits) - 1) as i64)
        }
    }

    fn sext(&mut self, v: Value, bits: u8) -> Value {
        if bits >= 64 {
            return v;
        }
        let sh = 64 - bits as i64;
        let t = self.b.ins().ishl_imm(v, sh);
        self.b.ins().sshr_imm(t, sh)
    }

    fn ext(&mut self, v: Value, bits: u8, signed: bool) -> Value {
        if signed {
            self.sext(v, bits)
        } else {
            self.low(v, bits)
        }
    }

    fn op(&mut self, n: N, a: Value, b: Value, c: Value, e: Value) -> Value {
        match n {
            N::Mov => a,
            N::CvtToF32 { signed } => {
                let v = self.b.ins().ireduce(types::I32, a);
                let f = if signed {
                    self.b.ins().fcvt_from_sint(types::F32, v)
                } else {
                    self.b.ins().fcvt_from_uint(types::F32, v)
                };
                let bits = self.b.ins().bitcast(types::I32, MemFlags::new(), f);
                self.b.ins().uextend(types::I64, bits)
            }
            N::Call(f) => {
                // A safe `extern "C"` function of four u64s (`math::LaneFn`), which
                // cannot panic (`math::lane_wf!`): nothing unwinds through this code.
                let f = self.b.ins().iconst(types::I64, f as i64);
                let call = self.b.ins().call_indirect(self.lane_sig, f, &[a, b, c, e]);
                self.b.inst_results(call)[0]
            }
            N::Selp => {
                let cond = self.b.ins().icmp_imm(IntCC::NotEqual, c, 0);
                self.b.ins().select(cond, a, b)
            }
            N::Pred(op) => match op {
                PredOp::And => {
                    let v = self.b.ins().band(a, b);
                    self.b.ins().band_imm(v, 1)
                }
                PredOp::Or => {
                    let v = self.b.ins().bor(a, b);
                    self.b.ins().band_imm(v, 1)
                }
                PredOp::Xor => {
                    let v = self.b.ins().bxor(a, b);
                    self.b.ins().band_imm(v, 1)
                }
                PredOp::Not => {
                    let v = self.b.ins().band_imm(a, 1);
                    self.b.ins().bxor_imm(v, 1)
                }
                PredOp::Mov => self.b.ins().band_imm(a, 1),
            },
            N::Cvt { from, signed, to } => {
                let v = self.ext(a, from, signed);
                self.low(v, to)
            }
            N::Int { op, bits, signed } => self.int(op, bits, signed, a, b, c),
            N::F32(op) => {
                let f = |g: &mut Self, v: Value| {
                    let v = g.b.ins().ireduce(types::I32, v);
                    g.b.ins().bitcast(types::F32, MemFlags::new(), v)
                };
                let (x, y, z) = (f(self, a), f(self, b), f(self, c));
                let r = self.f32_arith(op, x, Some(y), Some(z));
                self.canonical32(r)
            }
            N::CmpInt { cmp, bits, signed } => {
                let (x, y) = (self.ext(a, bits, signed), self.ext(b, bits, signed));
                let cc = match (cmp, signed) {
                    (Cmp::Eq, _) => IntCC::Equal,
                    (Cmp::Ne, _) => IntCC::NotEqual,
                    (Cmp::Lt, true) => IntCC::SignedLessThan,
                    (Cmp::Le, true) => IntCC::SignedLessThanOrEqual,
                    (Cmp::Gt, true) => IntCC::SignedGreaterThan,
                    (Cmp::Ge, true) => IntCC::SignedGreaterThanOrEqual,
                    (Cmp::Lt, false) => IntCC::UnsignedLessThan,
                    (Cmp::Le, false) => IntCC::UnsignedLessThanOrEqual,
                    (Cmp::Gt, false) => IntCC::UnsignedGreaterThan,
                    _ => IntCC::UnsignedGreaterThanOrEqual,
                };
                let r = self.b.ins().icmp(cc, x, y);
                self.b.ins().uextend(types::I64, r)
            }
            N::CmpF32(cmp) => {
                let f = |g: &mut Self, v: Value| {
                    let v = g.b.ins().ireduce(types::I32, v);
                    g.b.ins().bitcast(types::F32, MemFlags::new(), v)
                };
                let (x, y) = (f(self, a), f(self, b));
                self.fcmp32(cmp, x, y)
            }
        }
    }

    /// An f32 comparison, 0 or 1 (i64), as the interpreter's (NaN bits play no part).
    fn fcmp32(&mut self, cmp: Cmp, x: Value, y: Value) -> Value {
        let cc = match cmp {
            Cmp::Eq => FloatCC::Equal,
            Cmp::Ne => FloatCC::OrderedNotEqual,
            Cmp::Lt => FloatCC::LessThan,
            Cmp::Le => FloatCC::LessThanOrEqual,
            Cmp::Gt => FloatCC::GreaterThan,
            Cmp::Ge => FloatCC::GreaterThanOrEqual,
            Cmp::Equ => FloatCC::UnorderedOrEqual,
            Cmp::Neu => FloatCC::NotEqual,
            Cmp::Ltu => FloatCC::UnorderedOrLessThan,
            Cmp::Leu => FloatCC::UnorderedOrLessThanOrEqual,
            Cmp::Gtu => FloatCC::UnorderedOrGreaterThan,
            Cmp::Geu => FloatCC::UnorderedOrGreaterThanOrEqual,
            Cmp::Num => FloatCC::Ordered,
            _ => FloatCC::Unordered,
        };
        let r = self.b.ins().fcmp(cc, x, y);
        self.b.ins().uextend(types::I64, r)
    }

    fn int(&mut self, op: IntOp, bits: u8, signed: bool, a: Value, b: Value, c: Value) -> Value {
        let w = bits;
        match op {
            IntOp::Add => {
                let v = self.b.ins().iadd(a, b);
                self.low(v, w)
            }
            IntOp::Sub => {
                let v = self.b.ins().isub(a, b);
                self.low(v, w)
            }
            IntOp::MulLo => {
                let v = self.b.ins().imul(a, b);
                self.low(v, w)
            }
            IntOp::MadLo => {
                let v = self.b.ins().imul(a, b);
                let v = self.b.ins().iadd(v, c);
                self.low(v, w)
            }
            IntOp::And => {
                let v = self.b.ins().band(a, b);
                self.low(v, w)
            }
            IntOp::Or => {
                let v = self.b.ins().bor(a, b);
                self.low(v, w)
            }
            IntOp::Xor => {
                let v = self.b.ins().bxor(a, b);
                self.low(v, w)
            }
            IntOp::Not => {
                let v = self.b.ins().bnot(a);
                self.low(v, w)
            }
            IntOp::Neg => {
                let v = self.b.ins().ineg(a);
                self.low(v, w)
            }
            IntOp::Min | IntOp::Max => {
                let (x, y) = (self.ext(a, w, signed), self.ext(b, w, signed));
                let v = match (op, signed) {
                    (IntOp::Min, true) => self.b.ins().smin(x, y),
                    (IntOp::Min, false) => self.b.ins().umin(x, y),
                    (_, true) => self.b.ins().smax(x, y),
                    _ => self.b.ins().umax(x, y),
                };
                self.low(v, w)
            }
            IntOp::Shl => {
                // Amounts are u32; at or past the width the result is 0.
                let amt = self.low(b, 32);
                let big = self
                    .b
                    .ins()
                    .icmp_imm(IntCC::UnsignedGreaterThanOrEqual, amt, w as i64);
                let v = self.b.ins().ishl(a, amt);
                let v = self.low(v, w);
                let z = self.b.ins().iconst(types::I64, 0);
                self.b.ins().select(big, z, v)
            }
            IntOp::Shr => {
                let amt = self.low(b, 32);
                let big = self
                    .b
                    .ins()
                    .icmp_imm(IntCC::UnsignedGreaterThanOrEqual, amt, w as i64);
                let top = self.b.ins().iconst(types::I64, w as i64 - 1);
                let s = self.b.ins().umin(amt, top);
                let x = self.ext(a, w, signed);
                let v = if signed {
                    // Past the width: every bit is the sign.
                    let v = self.b.ins().sshr(x, s);
                    let v1 = self.b.ins().sshr_imm(v, 1);
                    self.b.ins().select(big, v1, v)
                } else {
                    let v = self.b.ins().ushr(x, s);
                    let z = self.b.ins().iconst(types::I64, 0);
                    self.b.ins().select(big, z, v)
                };
                self.low(v, w)
            }
            IntOp::MulWide | IntOp::MadWide => {
                let (x, y) = (self.ext(a, 32, signed), self.ext(b, 32, signed));
                let v = self.b.ins().imul(x, y);
                if op == IntOp::MadWide {
                    self.b.ins().iadd(v, c)
                } else {
                    v
                }
            }
        }
    }
}
