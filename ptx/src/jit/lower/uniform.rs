//! Which registers and predicates hold one value in every lane of any group of a warp
//! that reads them: a divergence analysis, so that a run computes what depends only on
//! them once for the group instead of once per lane (`Gen::run`'s `pre`).
//!
//! A register is *uniform* when every instruction that writes it computes the same
//! value in every lane that runs it, and every group that reads it holds the value one
//! write left in all its lanes:
//! - each write is an instruction the compiler knows exactly (`Kind::Native`, a
//!   parameter load), unguarded or guarded by a uniform predicate, whose operands are
//!   immediates, the block's and grid's shape and index, and uniform registers; any
//!   other instruction naming the register (`InstInfo::names`, from the PTX text, so no
//!   write of any `Op` is missed) makes it non-uniform;
//! - no write lies in the region a divergent branch (one on a non-uniform predicate)
//!   controls: the pcs between the branch and its immediate post-dominator, where the
//!   lanes that split at the branch run apart. The interpreter runs the lanes at the
//!   lowest pc first (`BlockCtx::pick`), so when every pc of that region is below the
//!   post-dominator, no lane passes it before the others reach it, and the warp is one
//!   group again there. A region that is not laid out so counts as everything the
//!   branch reaches;
//! - every read is preceded, on every path from the kernel's entry, by a write: the
//!   register file is the previous block's on this host thread (`run_block`), whose
//!   lanes may have exited at different points.
//!
//! The analysis gives up (nothing uniform) where lanes may run apart without a branch
//! or go where it cannot follow: calls (the interpreter runs them, deepest frame first),
//! indexed branches (`brx.idx`), `mbarrier` waits (lanes whose phase is incomplete sit
//! out their warp's turn), and barriers (of the block or the cluster, or a `wgmma`,
//! where a warp waits for its warpgroup) inside a divergent region (lanes waiting there
//! let the others run ahead); and on kernels too large for its bit sets.

use super::{operands, Kind};
use crate::decode::{Dst, Named, Op, Program, Space, Src, Sreg};

/// The result: one flag per register and per predicate.
#[derive(Debug, Default, Clone)]
pub(super) struct Uniform {
    pub regs: Vec<bool>,
    pub preds: Vec<bool>,
}

impl Uniform {
    fn none(prog: &Program) -> Uniform {
        Uniform {
            regs: vec![false; prog.nregs as usize],
            preds: vec![false; prog.npreds as usize],
        }
    }

    pub fn reg(&self, r: u32) -> bool {
        self.regs.get(r as usize).copied().unwrap_or(false)
    }

    pub fn pred(&self, p: u32) -> bool {
        self.preds.get(p as usize).copied().unwrap_or(false)
    }

    /// Whether operand `s` has one value in every lane of a group.
    fn src(&self, s: Src) -> bool {
        match s {
            Src::Imm(_) | Src::DynShared(_) | Src::GlobalVar(..) => true,
            Src::Sreg(Sreg::Ntid(_) | Sreg::Ctaid(_) | Sreg::Nctaid(_)) => true,
            Src::Reg(r) => self.reg(r),
            Src::Pred(p) | Src::NotPred(p) => self.pred(p),
            _ => false,
        }
    }

    fn clear(&mut self, d: Dst) -> bool {
        let slot = match d {
            Dst::Reg(r) => self.regs.get_mut(r as usize),
            Dst::Pred(p) => self.preds.get_mut(p as usize),
            Dst::Sink => None,
        };
        match slot {
            Some(x) if *x => {
                *x = false;
                true
            }
            _ => false,
        }
    }
}

/// The most bits the analysis's per-pc sets and region walks may cost.
const BUDGET: usize = 1 << 24;

/// Where control goes after `pc` (`n`: the kernel ends).
fn successors(prog: &Program, pc: usize) -> Vec<usize> {
    let n = prog.insts.len();
    let inst = &prog.insts[pc];
    let next = (pc + 1).min(n);
    match inst.op {
        Op::Bra { target } => {
            let t = (target as usize).min(n);
            if inst.guard.is_some() {
                vec![t, next]
            } else {
                vec![t]
            }
        }
        Op::Exit | Op::Ret | Op::Trap | Op::AssertFail => {
            if inst.guard.is_some() {
                vec![next, n]
            } else {
                vec![n]
            }
        }
        _ => vec![next],
    }
}

/// What an instruction reads and writes, as far as uniformity goes: `Some((reads,
/// writes))` exactly for what the compiler knows; None for any other, all of whose
/// named registers and predicates then count as written (and read).
fn exact(kind: Option<&Kind>, op: &Op) -> Option<(Vec<Src>, Vec<Dst>)> {
    if matches!(op, Op::Exit | Op::Ret | Op::Trap) {
        return Some((Vec::new(), Vec::new()));
    }
    match kind? {
        Kind::Native(x) => {
            let (s, need) = operands(x);
            let mut reads = s[..need].to_vec();
            reads.extend(x.comb.map(|(_, c)| c));
            Some((reads, vec![x.d, x.q]))
        }
        Kind::Mem(m) => {
            let mut reads = vec![m.addr];
            match m.d {
                Some(d) => Some((reads, d[..m.n as usize].to_vec())),
                None => {
                    reads.extend_from_slice(&m.v[..m.n as usize]);
                    Some((reads, Vec::new()))
                }
            }
        }
        Kind::Bra(_) => Some((Vec::new(), Vec::new())),
        Kind::Stop | Kind::Helper => None,
    }
}

/// The uniform registers and predicates of the code reachable from `entry`.
pub(super) fn analyse(
    prog: &Program,
    reach: &[bool],
    kinds: &[Option<Kind>],
    entry: usize,
) -> Uniform {
    analyse_or_none(prog, reach, kinds, entry).unwrap_or_else(|| Uniform::none(prog))
}

fn analyse_or_none(
    prog: &Program,
    reach: &[bool],
    kinds: &[Option<Kind>],
    entry: usize,
) -> Option<Uniform> {
    let n = prog.insts.len();
    let (nregs, npreds) = (prog.nregs as usize, prog.npreds as usize);
    let words = (nregs + npreds).div_ceil(64).max(1);
    if n.saturating_mul(words) > BUDGET / 64 || prog.info.len() != n {
        return None;
    }
    let pcs: Vec<usize> = (0..n).filter(|pc| reach[*pc]).collect();
    if pcs.iter().any(|&pc| {
        matches!(
            prog.insts[pc].op,
            Op::Call { .. } | Op::CallIndirect { .. } | Op::MbarWait(_) | Op::BrxIdx { .. }
        )
    }) {
        return None;
    }
    let bit = |x: Named| match x {
        Named::Reg(r) => r as usize,
        Named::Pred(p) => nregs + p as usize,
    };
    let src_bit = |s: Src| match s {
        Src::Reg(r) => Some(r as usize),
        Src::Pred(p) | Src::NotPred(p) => Some(nregs + p as usize),
        _ => None,
    };
    let dst_bit = |d: Dst| match d {
        Dst::Reg(r) => Some(r as usize),
        Dst::Pred(p) => Some(nregs + p as usize),
        Dst::Sink => None,
    };
    // Per pc: what it reads (bits) and what it surely writes in every lane it runs for.
    let mut reads: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut defs: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &pc in &pcs {
        let guard = prog.insts[pc].guard.map(|(p, _)| nregs + p as usize);
        match exact(kinds[pc].as_ref(), &prog.insts[pc].op) {
            Some((r, d)) => {
                reads[pc] = r.into_iter().filter_map(src_bit).chain(guard).collect();
                if guard.is_none() {
                    defs[pc] = d.into_iter().filter_map(dst_bit).collect();
                }
            }
            None => reads[pc] = prog.info[pc].names.iter().map(|x| bit(*x)).collect(),
        }
    }
    // Written on every path to each pc (forward, intersecting): `defined[pc]`.
    let succ: Vec<Vec<usize>> = (0..n)
        .map(|pc| {
            if reach[pc] {
                successors(prog, pc)
            } else {
                Vec::new()
            }
        })
        .collect();
    let mut defined = vec![vec![u64::MAX; words]; n];
    defined[entry] = vec![0; words];
    let mut changed = true;
    while changed {
        changed = false;
        for &pc in &pcs {
            let mut out = defined[pc].clone();
            for &b in &defs[pc] {
                out[b / 64] |= 1 << (b % 64);
            }
            for &s in &succ[pc] {
                if s < n && s != entry {
                    let mut new = defined[s].clone();
                    for (x, o) in new.iter_mut().zip(&out) {
                        *x &= o;
                    }
                    if new != defined[s] {
                        defined[s] = new;
                        changed = true;
                    }
                }
            }
        }
    }
    let mut u = Uniform {
        regs: vec![true; nregs],
        preds: vec![true; npreds],
    };
    let set_false = |u: &mut Uniform, b: usize| {
        if b < nregs {
            u.regs[b] = false;
        } else {
            u.preds[b - nregs] = false;
        }
    };
    for &pc in &pcs {
        for &b in &reads[pc] {
            if defined[pc][b / 64] >> (b % 64) & 1 == 0 {
                set_false(&mut u, b);
            }
        }
    }
    let ipdom = post_dominators(&succ, &pcs, n);
    loop {
        // The regions of the branches divergent so far.
        let mut region = vec![false; n];
        let mut cost = 0usize;
        for &b in &pcs {
            let inst = &prog.insts[b];
            let Op::Bra { .. } = inst.op else { continue };
            let Some((p, _)) = inst.guard else { continue };
            if u.pred(p) {
                continue;
            }
            cost += n;
            if cost > BUDGET {
                return None;
            }
            let stop = ipdom[b].filter(|&d| d < n);
            let mut seen = walk(&succ, b, stop, n);
            if let Some(d) = stop {
                if seen.iter().any(|&pc| pc >= d) {
                    seen = walk(&succ, b, None, n);
                }
            }
            for pc in seen {
                region[pc] = true;
            }
        }
        if pcs.iter().any(|&pc| {
            region[pc]
                && matches!(
                    prog.insts[pc].op,
                    Op::Bar { .. } | Op::Wgmma(_) | Op::ClusterWait
                )
        }) {
            return None;
        }
        let mut changed = false;
        for &pc in &pcs {
            let inst = &prog.insts[pc];
            match exact(kinds[pc].as_ref(), &prog.insts[pc].op) {
                Some((r, d)) => {
                    let ok = !region[pc]
                        && inst.guard.is_none_or(|(p, _)| u.pred(p))
                        && r.iter().all(|s| u.src(*s))
                        && !matches!(kinds[pc], Some(Kind::Mem(m)) if m.space != Space::KParam);
                    if !ok {
                        for x in d {
                            changed |= u.clear(x);
                        }
                    }
                }
                None => {
                    for x in &prog.info[pc].names {
                        let d = match *x {
                            Named::Reg(r) => Dst::Reg(r),
                            Named::Pred(p) => Dst::Pred(p),
                        };
                        changed |= u.clear(d);
                    }
                }
            }
        }
        if !changed {
            return Some(u);
        }
    }
}

/// The pcs reachable from `from`'s successors without passing `stop` (nor the end).
fn walk(succ: &[Vec<usize>], from: usize, stop: Option<usize>, n: usize) -> Vec<usize> {
    let mut seen = vec![false; n];
    let mut out = Vec::new();
    let mut stack: Vec<usize> = succ[from].clone();
    while let Some(pc) = stack.pop() {
        if pc >= n || Some(pc) == stop || seen[pc] {
            continue;
        }
        seen[pc] = true;
        out.push(pc);
        stack.extend_from_slice(&succ[pc]);
    }
    out
}

/// Each reachable pc's immediate post-dominator (`n`: the end), None where no path
/// ends: Cooper, Harvey and Kennedy's iteration over the reversed graph.
fn post_dominators(succ: &[Vec<usize>], pcs: &[usize], n: usize) -> Vec<Option<usize>> {
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
    for &pc in pcs {
        for &s in &succ[pc] {
            preds[s.min(n)].push(pc);
        }
    }
    // Post-order of the reversed graph from the end.
    let mut order = vec![usize::MAX; n + 1];
    let mut post = Vec::new();
    let mut visited = vec![false; n + 1];
    let mut stack = vec![(n, 0usize)];
    visited[n] = true;
    while let Some(&mut (v, ref mut i)) = stack.last_mut() {
        if *i < preds[v].len() {
            let w = preds[v][*i];
            *i += 1;
            if !visited[w] {
                visited[w] = true;
                stack.push((w, 0));
            }
        } else {
            order[v] = post.len();
            post.push(v);
            stack.pop();
        }
    }
    let mut idom: Vec<Option<usize>> = vec![None; n + 1];
    idom[n] = Some(n);
    let mut changed = true;
    while changed {
        changed = false;
        for &v in post.iter().rev() {
            if v == n {
                continue;
            }
            let mut new: Option<usize> = None;
            for &s in &succ[v] {
                let s = s.min(n);
                if idom[s].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => s,
                    Some(mut a) => {
                        let mut b = s;
                        while a != b {
                            while order[a] < order[b] {
                                a = idom[a].expect("processed");
                            }
                            while order[b] < order[a] {
                                b = idom[b].expect("processed");
                            }
                        }
                        a
                    }
                });
            }
            if new.is_some() && idom[v] != new {
                idom[v] = new;
                changed = true;
            }
        }
    }
    idom.truncate(n);
    idom
}

#[cfg(test)]
mod tests {
    use super::super::{classify, reachable};
    use super::*;
    use crate::Module;

    /// The analysis of the module's only kernel, its registers named by declaration
    /// order: `%r0..` as the kernel declares them in one `.reg .b32 %r<N>;`, then
    /// predicates likewise.
    fn analyse_ptx(body: &str) -> (Uniform, String) {
        let src = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 out, .param .u32 n)\n{{\n\
             .reg .b32 %r<12>;\n.reg .pred %p<4>;\n.reg .b64 %rd<4>;\n{body}\n}}\n"
        );
        let m = Module::parse(&src).unwrap_or_else(|e| panic!("{e:?}\n{src}"));
        let entry = m.kernels[0].entry_pc;
        let (reach, _) = reachable(&m.program, entry);
        let kinds: Vec<Option<Kind>> = (0..m.program.insts.len())
            .map(|pc| reach[pc].then(|| classify(&m.program.insts[pc].op)))
            .collect();
        (
            analyse(&m.program, &reach, &kinds, entry as usize),
            body.to_string(),
        )
    }

    /// The `%rN` the body names that came out uniform (registers it never names hold
    /// nothing anyone reads: uniform or not, nothing depends on them).
    fn uniform_regs((u, body): &(Uniform, String)) -> Vec<usize> {
        (0..12)
            .filter(|r| u.regs[*r])
            .filter(|r| {
                body.split(|c: char| !c.is_ascii_alphanumeric() && c != '%')
                    .any(|w| w == format!("%r{r}"))
            })
            .collect()
    }

    #[test]
    fn values_from_parameters_and_the_shape_are_uniform_and_tid_is_not() {
        let u = analyse_ptx(
            "ld.param.u32 %r1, [n];\nmov.u32 %r2, %ctaid.x;\nmad.lo.s32 %r3, %r2, %r1, 4;\n\
             mov.u32 %r4, %tid.x;\nadd.s32 %r5, %r4, %r3;\nsetp.lt.u32 %p1, %r3, %r1;\nret;",
        );
        assert_eq!(uniform_regs(&u), vec![1, 2, 3]);
        assert!(u.0.preds[1]);
    }

    #[test]
    fn a_uniform_loop_keeps_its_counter_uniform() {
        let u = analyse_ptx(
            "ld.param.u32 %r1, [n];\nmov.u32 %r2, 0;\nmov.u32 %r3, %tid.x;\n\
             L: add.s32 %r3, %r3, %r2;\nadd.s32 %r2, %r2, 1;\nsetp.lt.u32 %p1, %r2, %r1;\n\
             @%p1 bra L;\nret;",
        );
        assert_eq!(uniform_regs(&u), vec![1, 2]);
    }

    #[test]
    fn what_a_loop_each_lane_leaves_at_its_own_count_writes_is_not_uniform() {
        // %r2 counts to %tid.x: the loop's exit branch is divergent, so %r2 and %r5
        // (written in the loop from uniform operands) differ between lanes after it.
        // %r6, written before the loop, stays uniform.
        let u = analyse_ptx(
            "ld.param.u32 %r1, [n];\nmov.u32 %r2, 0;\nmov.u32 %r3, %tid.x;\nmov.u32 %r5, 0;\n\
             add.s32 %r6, %r1, 3;\n\
             L: add.s32 %r5, %r5, 7;\nadd.s32 %r2, %r2, 1;\nsetp.lt.u32 %p1, %r2, %r3;\n\
             @%p1 bra L;\nadd.s32 %r7, %r5, %r1;\nret;",
        );
        assert_eq!(uniform_regs(&u), vec![1, 6]);
        assert!(!u.0.preds[1]);
    }

    #[test]
    fn what_a_divergent_branch_skips_is_not_uniform_and_a_uniform_one_changes_nothing() {
        let u = analyse_ptx(
            "ld.param.u32 %r1, [n];\nmov.u32 %r3, %tid.x;\nmov.u32 %r2, 5;\nmov.u32 %r4, 6;\n\
             setp.lt.u32 %p1, %r3, 4;\n@%p1 bra A;\nmov.u32 %r2, 9;\n\
             A: setp.lt.u32 %p2, %r1, 4;\n@%p2 bra B;\nmov.u32 %r4, 8;\n\
             B: add.s32 %r5, %r2, %r4;\nadd.s32 %r6, %r4, %r1;\nret;",
        );
        assert_eq!(uniform_regs(&u), vec![1, 4, 6]);
        assert!(!u.0.preds[1] && u.0.preds[2]);
    }

    #[test]
    fn a_register_read_before_any_write_is_not_uniform() {
        // %r2 is written on one path only: on the other it holds what the previous block
        // on this host thread left, lane by lane.
        let u = analyse_ptx(
            "ld.param.u32 %r1, [n];\nsetp.lt.u32 %p1, %r1, 4;\n@%p1 bra A;\nmov.u32 %r2, 9;\n\
             A: add.s32 %r3, %r2, %r1;\nret;",
        );
        assert_eq!(uniform_regs(&u), vec![1]);
    }

    #[test]
    fn a_region_laid_out_past_its_join_counts_as_everything_its_branch_reaches() {
        // The branch's taken side lies after the join (pc-wise): lanes at the join may
        // run on before the others arrive, so everything written after the branch counts.
        let u = analyse_ptx(
            "ld.param.u32 %r1, [n];\nmov.u32 %r3, %tid.x;\nadd.s32 %r8, %r1, 1;\n\
             setp.lt.u32 %p1, %r3, 4;\n@%p1 bra FAR;\nmov.u32 %r2, 7;\n\
             J: add.s32 %r4, %r1, 2;\nret;\nFAR: mov.u32 %r2, 7;\nbra J;",
        );
        assert_eq!(uniform_regs(&u), vec![1, 8]);
    }

    #[test]
    fn what_the_compiler_does_not_know_exactly_writes_lane_by_lane() {
        // A shuffle's result and a global load's are per lane, and a shuffle names its
        // operands too: %r1 (read by it) no longer counts as uniform either.
        let u = analyse_ptx(
            "ld.param.u32 %r1, [n];\nld.param.u64 %rd1, [out];\nmov.u32 %r5, 3;\n\
             shfl.sync.down.b32 %r2|%p1, %r1, 1, 31, -1;\nld.global.u32 %r3, [%rd1];\n\
             add.s32 %r4, %r5, 1;\nret;",
        );
        assert_eq!(uniform_regs(&u), vec![4, 5]);
        assert!(u.0.regs[12], "%rd1: a parameter");
    }

    #[test]
    fn a_barrier_where_lanes_may_have_parted_gives_up() {
        let u = analyse_ptx(
            "ld.param.u32 %r1, [n];\nmov.u32 %r3, %tid.x;\nsetp.lt.u32 %p1, %r3, 4;\n\
             @%p1 bra A;\nbar.sync 0;\nA: add.s32 %r4, %r1, 2;\nret;",
        );
        assert!(u.0.regs.iter().chain(&u.0.preds).all(|x| !x));
    }
}
