//! Calls at run time: direct and indirect (`call` through a function's address), the
//! frames a recursive call saves, and the device heap's `malloc` and `free`.
//!
//! A lane's call stack is on the heap (`Warp::stacks` for return addresses, `Frames` for
//! the rest), never the host's: a PTX call is no host call, so no depth of recursion can
//! overflow the host's stack. Recursion's depth is bounded as a GPU bounds it, by the
//! context's CU_LIMIT_STACK_SIZE (`Launch::stack_bytes`): each saved activation costs
//! what `FuncRt::stack_cost` says, and the call that would pass the limit faults.
//!
//! Where a GPU gives each activation its own stack frame, the executor keeps each
//! function's registers and parameters at one place and saves the caller's on a
//! recursive call (`decode/calls.rs` says which calls). A recursive function's `.local`
//! variables (its depot) are the exception: each activation has its own copy, in a
//! stack after the thread's static local memory, because their addresses escape (a
//! caller passes the address of its depot for the callee to write a result through, as
//! numba's calling convention does); `Op::FrameAddr` gives the running activation's.
//! A depot reached by name rather than through its address (`ld.local [var+8]`) is
//! the static copy.

use super::{for_lanes, in_window, write, write_le, BlockCtx, Fault, Warp};
use crate::decode::{Dst, FuncRt, Op, Program, Src};
use crate::{FaultKind, FUNC_STRIDE, FUNC_WINDOW, WINDOW_SIZE};

/// Host memory the saved frames of one warp may take (each saved activation copies its
/// function's registers, which a GPU would mostly not spill): past it the launch faults
/// rather than exhaust the host.
const SAVED_HOST_BYTES_PER_WARP: u64 = 256 << 20;

/// Most bytes of local memory a thread's stack of recursive depots gets, whatever
/// CU_LIMIT_STACK_SIZE says: every thread of a block has one, zeroed per block.
const DEPOT_STACK_MAX: u64 = 1 << 20;

/// Bytes of local memory a thread has in a launch of `prog`: its static local memory,
/// then (when a recursive function has a depot) the stack of depots, then (when a
/// function uses `alloca`) the alloca stack.
pub(super) fn local_bytes(prog: &Program, launch: &crate::Launch) -> usize {
    let stack = if prog.recursive_depots {
        launch.stack_bytes.min(DEPOT_STACK_MAX).next_multiple_of(16)
    } else {
        0
    };
    prog.local_bytes as usize + stack as usize + alloca_bytes(prog, launch) as usize
}

/// Bytes of the alloca stack at the end of each thread's local memory: the stack
/// CU_LIMIT_STACK_SIZE gives (bounded like the depots'). It grows down from the end;
/// what it holds counts against the limit together with recursive activations.
pub(super) fn alloca_bytes(prog: &Program, launch: &crate::Launch) -> u64 {
    if prog.uses_alloca {
        launch.stack_bytes.min(DEPOT_STACK_MAX).next_multiple_of(16)
    } else {
        0
    }
}

/// The call frames of a warp's lanes, beside their return addresses (`Warp::stacks`).
#[derive(Default)]
pub(crate) struct Frames {
    lanes: Vec<Vec<Frame>>,
    /// Stack bytes each lane's recursive activations take (against
    /// `Launch::stack_bytes`).
    used: [u64; 32],
    /// Bytes of each lane's depot stack in use.
    depot_top: [u32; 32],
    /// Bytes of each lane's alloca stack in use, from its end (alignment included).
    alloca_used: [u64; 32],
    /// Host bytes of all the saved frames.
    host_bytes: u64,
}

impl Frames {
    pub(super) fn clear(&mut self) {
        self.lanes.iter_mut().for_each(Vec::clear);
        self.used = [0; 32];
        self.depot_top = [0; 32];
        self.alloca_used = [0; 32];
        self.host_bytes = 0;
    }
}

struct Frame {
    /// The function called (its index in `Program::funcs`).
    callee: u32,
    /// The caller's state, when the callee may re-enter it.
    saved: Option<Box<Saved>>,
    /// Stack bytes the activation takes (0 unless the callee is recursive).
    cost: u64,
    /// Offset of the activation's depot in the depot stack, if it has its own.
    depot: Option<u32>,
    /// The caller's alloca stack use at the call: what the callee allocates is freed
    /// when it returns.
    alloca_mark: u64,
}

/// A function's registers, predicates and local memory of one lane, as they were at a
/// recursive call.
struct Saved {
    func: u32,
    regs: Vec<u64>,
    preds: Vec<bool>,
    local: Vec<u8>,
}

impl Saved {
    /// What it costs the host, with its frame and return address.
    fn host_bytes(&self) -> u64 {
        let fixed = std::mem::size_of::<Saved>() + std::mem::size_of::<Frame>() + 4;
        (fixed + self.regs.len() * 8 + self.preds.len() + self.local.len()) as u64
    }
}

/// The function at generic address `addr`, if it is one's.
pub(super) fn function_at(prog: &Program, addr: u64) -> Option<usize> {
    let off = addr.checked_sub(FUNC_WINDOW)?;
    if off >= WINDOW_SIZE || off % FUNC_STRIDE != 0 {
        return None;
    }
    let k = (off / FUNC_STRIDE) as usize;
    (k < prog.funcs.len()).then_some(k)
}

/// A description of a function address for messages, if `addr` is one.
pub(super) fn describe_function_address(prog: &Program, addr: u64) -> Option<String> {
    if !(FUNC_WINDOW..FUNC_WINDOW + WINDOW_SIZE).contains(&addr) {
        return None;
    }
    Some(match function_at(prog, addr) {
        Some(k) => format!(
            "the address of function `{}`: code, not data (only calls may use it)",
            prog.funcs[k].name
        ),
        None => "in the window of function addresses, but no function's".to_string(),
    })
}

impl<'a> BlockCtx<'a> {
    fn local_base(&self, warp: u32, lane: usize) -> usize {
        (warp as usize * 32 + lane) * self.local_bytes
    }

    /// Bytes `off..off + n` of a lane's local memory (zeros where outside it).
    fn local_bytes_at(&self, warp: u32, lane: usize, off: u32, n: u32) -> Vec<u8> {
        let base = self.local_base(warp, lane);
        if !in_window(u64::from(off), u64::from(n), self.local_bytes as u64) {
            return vec![0; n as usize];
        }
        let at = base + off as usize;
        self.local
            .get(at..at + n as usize)
            .map_or_else(|| vec![0; n as usize], <[u8]>::to_vec)
    }

    fn set_local_bytes(&mut self, warp: u32, lane: usize, off: u32, bytes: &[u8]) {
        let base = self.local_base(warp, lane);
        if !in_window(u64::from(off), bytes.len() as u64, self.local_bytes as u64) {
            return;
        }
        let at = base + off as usize;
        if let Some(dst) = self.local.get_mut(at..at + bytes.len()) {
            dst.copy_from_slice(bytes);
        }
    }

    /// A direct `call` for the lanes of `emask`: arguments into the callee's parameters,
    /// the caller's state saved first when the callee may re-enter it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn call_direct(
        &mut self,
        w: &mut Warp,
        emask: u32,
        pc: u32,
        entry: u32,
        callee: u32,
        args_in: &[(u32, u32, u32)],
        save: Option<u32>,
    ) -> Result<(), Fault> {
        let mut m = emask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let saved = match save {
                Some(f) => Some(self.save_frame(w, l, f, pc)?),
                None => None,
            };
            self.local_copy(w.id, l, args_in);
            let frame = self.activation(w, l, pc, callee, saved)?;
            push_frame(w, l, pc, entry, frame);
        }
        Ok(())
    }

    /// `call (rets), %rd, (args), prototype;` for the lanes of `emask`: each lane calls
    /// the function its register holds the address of; anything else faults, naming the
    /// address, as a GPU's call to a bad address is an illegal instruction.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn call_indirect(
        &mut self,
        w: &mut Warp,
        emask: u32,
        pc: u32,
        target: Src,
        args: &[(u32, u32)],
        rets: &[(u32, u32)],
        caller: Option<u32>,
    ) -> Result<(), Fault> {
        let prog: &'a Program = self.prog;
        let mut t = [0u64; 32];
        self.fetch(w, target, &mut t);
        let mut m = emask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let addr = t[l];
            let bad = |this: &Self, detail: String| {
                this.fault(
                    w,
                    l as u32,
                    pc,
                    FaultKind::IllegalInstruction,
                    Some(addr),
                    detail,
                )
            };
            let Some(k) = function_at(prog, addr) else {
                let detail = format!(
                    "call through {addr:#x}, which is not the address of a function of this module"
                );
                return Err(bad(self, detail));
            };
            let f: &FuncRt = &prog.funcs[k];
            if f.kernel {
                let detail = format!("call through {addr:#x}, the kernel `{}`'s address: kernels are launched, not called", f.name);
                return Err(bad(self, detail));
            }
            if f.params.len() != args.len() || f.rets.len() != rets.len() {
                let detail = format!(
                    "call through {addr:#x} with a prototype of {} parameters and {} return \
                     values: `{}` has {} and {}",
                    args.len(),
                    rets.len(),
                    f.name,
                    f.params.len(),
                    f.rets.len()
                );
                return Err(bad(self, detail));
            }
            let saved = match caller {
                Some(c) if prog.funcs[c as usize].scc == f.scc => {
                    Some(self.save_frame(w, l, c, pc)?)
                }
                _ => None,
            };
            let copies: Vec<(u32, u32, u32)> = args
                .iter()
                .zip(&f.params)
                .map(|(&(from, n), &(to, m))| (from, to, n.min(m)))
                .collect();
            self.local_copy(w.id, l, &copies);
            let frame = self.activation(w, l, pc, k as u32, saved)?;
            push_frame(w, l, pc, f.entry, frame);
        }
        Ok(())
    }

    /// `ret` of lane `l` to the call at `call_pc`: return values into the caller's
    /// variables, and its saved state back.
    pub(super) fn return_lane(&mut self, w: &mut Warp, l: usize, call_pc: u32) {
        let prog: &'a Program = self.prog;
        let frame = w.frames.lanes.get_mut(l).and_then(Vec::pop);
        if let Some(f) = &frame {
            w.frames.used[l] -= f.cost;
            let freed = w.frames.alloca_used[l].saturating_sub(f.alloca_mark);
            w.frames.used[l] -= freed.min(w.frames.used[l]);
            w.frames.alloca_used[l] = f.alloca_mark.min(w.frames.alloca_used[l]);
            if f.depot.is_some() {
                w.frames.depot_top[l] -= prog.funcs[f.callee as usize].depot_bytes();
            }
        }
        let op = prog.insts.get(call_pc as usize).map(|i| &i.op);
        let saved = frame.as_ref().and_then(|f| f.saved.as_ref());
        // (callee's offset, caller's, bytes) of each return value.
        let copies: Vec<(u32, u32, u32)> = match (op, &frame) {
            (Some(Op::Call { rets_out, .. }), _) if saved.is_none() => {
                // The common case: no state to restore, the copies as decoded.
                self.local_copy(w.id, l, rets_out);
                return;
            }
            (Some(Op::Call { rets_out, .. }), _) => rets_out.clone(),
            (Some(Op::CallIndirect { rets, .. }), Some(f)) => prog
                .funcs
                .get(f.callee as usize)
                .map(|c| {
                    c.rets
                        .iter()
                        .zip(rets)
                        .map(|(&(from, n), &(to, m))| (from, to, n.min(m)))
                        .collect()
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        // Read before the caller's state comes back: a recursive callee's return values
        // lie where the caller's own saved ones go.
        let values: Vec<Vec<u8>> = copies
            .iter()
            .map(|&(from, _, n)| self.local_bytes_at(w.id, l, from, n))
            .collect();
        if let Some(s) = frame.and_then(|f| f.saved) {
            self.restore_frame(w, l, &s);
        }
        for (&(_, to, _), v) in copies.iter().zip(&values) {
            self.set_local_bytes(w.id, l, to, v);
        }
    }

    /// Saves function `func`'s registers, predicates and local memory of lane `l`, as a
    /// recursive call must; faults when the activation would pass the stack limit.
    fn save_frame(
        &mut self,
        w: &mut Warp,
        l: usize,
        func: u32,
        pc: u32,
    ) -> Result<Box<Saved>, Fault> {
        let prog: &'a Program = self.prog;
        let f = &prog.funcs[func as usize];
        let regs = (f.regs.0..f.regs.1)
            .map(|r| w.regs[r as usize * 32 + l])
            .collect();
        let preds = (f.preds.0..f.preds.1)
            .map(|p| w.preds[p as usize] >> l & 1 != 0)
            .collect();
        let mut local = Vec::new();
        for &(lo, hi) in &f.locals {
            local.extend(self.local_bytes_at(w.id, l, lo, hi.saturating_sub(lo)));
        }
        let saved = Box::new(Saved {
            func,
            regs,
            preds,
            local,
        });
        if w.frames.host_bytes + saved.host_bytes() > SAVED_HOST_BYTES_PER_WARP {
            let detail = format!(
                "recursion too deep for the host: the warp's saved call frames would take more \
                 than {SAVED_HOST_BYTES_PER_WARP} bytes of host memory (the call of `{}` at a \
                 depth of {})",
                f.name,
                w.stacks.get(l).map_or(0, Vec::len)
            );
            return Err(self.fault(w, l as u32, pc, FaultKind::IllegalAddress, None, detail));
        }
        w.frames.host_bytes += saved.host_bytes();
        Ok(saved)
    }

    fn restore_frame(&mut self, w: &mut Warp, l: usize, s: &Saved) {
        let prog: &'a Program = self.prog;
        let f = &prog.funcs[s.func as usize];
        for (r, v) in (f.regs.0..f.regs.1).zip(&s.regs) {
            w.regs[r as usize * 32 + l] = *v;
        }
        for (p, b) in (f.preds.0..f.preds.1).zip(&s.preds) {
            let word = &mut w.preds[p as usize];
            *word = (*word & !(1 << l)) | (u32::from(*b) << l);
        }
        let mut at = 0usize;
        for &(lo, hi) in &f.locals {
            let n = hi.saturating_sub(lo) as usize;
            if let Some(bytes) = s.local.get(at..at + n) {
                self.set_local_bytes(w.id, l, lo, bytes);
            }
            at += n;
        }
        w.frames.host_bytes -= s.host_bytes();
    }

    /// The frame of lane `l`'s new activation of `callee`: a recursive callee's takes
    /// stack (and its depot a copy of its own), past the limit a fault.
    fn activation(
        &mut self,
        w: &mut Warp,
        l: usize,
        pc: u32,
        callee: u32,
        saved: Option<Box<Saved>>,
    ) -> Result<Frame, Fault> {
        let prog: &'a Program = self.prog;
        let f = &prog.funcs[callee as usize];
        let alloca_mark = w.frames.alloca_used[l];
        if !f.recursive {
            return Ok(Frame {
                callee,
                saved,
                cost: 0,
                depot: None,
                alloca_mark,
            });
        }
        let cost = f.stack_cost();
        let used = w.frames.used[l] + cost;
        let room = (self.local_bytes
            - prog.local_bytes as usize
            - alloca_bytes(prog, self.launch) as usize) as u32;
        let top = w.frames.depot_top[l];
        let depot = f.depot_bytes();
        if used > self.launch.stack_bytes || (depot > 0 && top + depot > room) {
            let limit = if used > self.launch.stack_bytes {
                self.launch.stack_bytes
            } else {
                u64::from(room)
            };
            let detail = format!(
                "call stack overflow: this call of the recursive `{}` takes the thread's stack \
                 to {used} bytes, past its {limit} (CU_LIMIT_STACK_SIZE; each activation of `{}` \
                 takes {cost})",
                f.name, f.name
            );
            let lane = l as u32;
            return Err(self.fault(w, lane, pc, FaultKind::IllegalAddress, None, detail));
        }
        w.frames.used[l] = used;
        let at = (depot > 0).then(|| {
            w.frames.depot_top[l] = top + depot;
            top
        });
        Ok(Frame {
            callee,
            saved,
            cost,
            depot: at,
            alloca_mark,
        })
    }

    /// `alloca`: each lane's stack pointer moves down by `size`, then down to a multiple
    /// of `align`; past the alloca stack or CU_LIMIT_STACK_SIZE (with what recursive
    /// activations take) the lane faults, where a GPU would overflow its stack.
    pub(super) fn alloca(
        &mut self,
        w: &mut Warp,
        emask: u32,
        d: Dst,
        size: Src,
        align: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let prog: &'a Program = self.prog;
        let room = alloca_bytes(prog, self.launch);
        let end = self.local_bytes as u64;
        let mut sizes = [0u64; 32];
        self.fetch(w, size, &mut sizes);
        let mut out = [0u64; 32];
        let mut fault = None;
        for_lanes(emask, |l| {
            if fault.is_some() {
                return;
            }
            let used = w.frames.alloca_used[l];
            let sp = end - used;
            let ptr = sp
                .checked_sub(sizes[l])
                .map(|p| p & !(u64::from(align) - 1))
                .filter(|p| *p >= end - room);
            let grown = ptr.map_or(u64::MAX, |p| end - p - used);
            let total = w.frames.used[l].saturating_add(grown);
            match ptr {
                Some(p) if total <= self.launch.stack_bytes => {
                    w.frames.alloca_used[l] = end - p;
                    w.frames.used[l] = total;
                    out[l] = p;
                }
                _ => fault = Some((l, sizes[l], used)),
            }
        });
        if let Some((l, n, used)) = fault {
            let detail = format!(
                "stack overflow: alloca of {n} bytes (aligned to {align}) with {used} bytes \
                 of the thread's alloca stack in use and {} taken by calls: past its {} \
                 (CU_LIMIT_STACK_SIZE)",
                w.frames.used[l] - used.min(w.frames.used[l]),
                self.launch.stack_bytes.min(room)
            );
            return Err(self.fault(w, l as u32, pc, FaultKind::IllegalAddress, None, detail));
        }
        write(w, d, &out, emask);
        Ok(())
    }

    /// `setmaxnreg`: `.sync.aligned` over a warpgroup: every thread of the warp runs it
    /// together, and the block holds the warp's whole warpgroup (four warps). Anything
    /// else is undefined on a GPU; here it faults. The register count itself changes
    /// nothing on the host.
    pub(super) fn set_max_nreg(&mut self, w: &mut Warp, emask: u32, pc: u32) -> Result<(), Fault> {
        let group_end = (w.id / 4 + 1) * 128;
        let detail = if emask != w.valid {
            format!(
                "setmaxnreg.sync.aligned run by lanes {emask:#010x} of a warp whose threads are \
                 {:#010x}: every thread of the warpgroup must run it together",
                w.valid
            )
        } else if self.nthreads < group_end {
            format!(
                "setmaxnreg in warp {} of a block of {} threads: its warpgroup (threads {}..{}) \
                 is not whole",
                w.id,
                self.nthreads,
                group_end - 128,
                group_end
            )
        } else {
            return Ok(());
        };
        let lane = (!emask & w.valid)
            .trailing_zeros()
            .min(emask.trailing_zeros())
            % 32;
        Err(self.fault(w, lane, pc, FaultKind::IllegalInstruction, None, detail))
    }

    /// `stacksave`: each lane's stack pointer.
    pub(super) fn stack_save(&mut self, w: &mut Warp, emask: u32, d: Dst) {
        let end = self.local_bytes as u64;
        let mut out = [0u64; 32];
        for_lanes(emask, |l| out[l] = end - w.frames.alloca_used[l]);
        write(w, d, &out, emask);
    }

    /// `stackrestore`: the stack pointer set to a value `stacksave` (or `alloca`) gave;
    /// anything outside the alloca stack faults rather than corrupt the stack.
    pub(super) fn stack_restore(
        &mut self,
        w: &mut Warp,
        emask: u32,
        a: Src,
        pc: u32,
    ) -> Result<(), Fault> {
        let prog: &'a Program = self.prog;
        let room = alloca_bytes(prog, self.launch);
        let end = self.local_bytes as u64;
        let mut v = [0u64; 32];
        self.fetch(w, a, &mut v);
        let mut bad = None;
        for_lanes(emask, |l| {
            if bad.is_some() {
                return;
            }
            let sp = v[l];
            if sp > end || sp < end - room {
                bad = Some(l);
                return;
            }
            let (old, new) = (w.frames.alloca_used[l], end - sp);
            let others = w.frames.used[l] - old.min(w.frames.used[l]);
            if others + new > self.launch.stack_bytes {
                bad = Some(l);
                return;
            }
            w.frames.alloca_used[l] = new;
            w.frames.used[l] = others + new;
        });
        if let Some(l) = bad {
            let detail = format!(
                "stackrestore to {:#x}: not a stack pointer of this thread (its alloca stack \
                 is local addresses {:#x}..={end:#x})",
                v[l],
                end - room
            );
            return Err(self.fault(w, l as u32, pc, FaultKind::IllegalAddress, None, detail));
        }
        Ok(())
    }

    /// `Op::FrameAddr`: the local address of a `.local` variable of `func` in each lane's
    /// running activation.
    pub(super) fn frame_addr(&mut self, w: &mut Warp, emask: u32, d: Dst, off: u32, func: u32) {
        let prog: &'a Program = self.prog;
        let f = &prog.funcs[func as usize];
        let mut out = [0u64; 32];
        for_lanes(emask, |l| {
            let top = w.frames.lanes.get(l).and_then(|s| s.last());
            out[l] = match top {
                Some(Frame {
                    callee,
                    depot: Some(at),
                    ..
                }) if *callee == func => {
                    u64::from(prog.local_bytes) + u64::from(*at) + u64::from(off - f.depot.0)
                }
                _ => u64::from(off),
            };
        });
        write(w, d, &out, emask);
    }

    /// `malloc(size)` (or `__nv_aligned_device_malloc(size, align)`) of each lane of
    /// `emask`, in lane order, from the launch's heap.
    pub(super) fn device_malloc(
        &mut self,
        w: &mut Warp,
        emask: u32,
        size: u32,
        ret: u32,
        align: Option<u32>,
        pc: u32,
    ) -> Result<(), Fault> {
        let Some(heap) = self.launch.heap else {
            let lane = emask.trailing_zeros();
            let detail = "malloc: the launch has no device heap".to_string();
            return Err(self.fault(w, lane, pc, FaultKind::IllegalInstruction, None, detail));
        };
        let mut m = emask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let bytes = self.local_u64(w.id, l, size);
            let p = match align {
                Some(a) => heap.malloc_aligned(bytes, self.local_u64(w.id, l, a)),
                None => heap.malloc(bytes),
            };
            let base = self.local_base(w.id, l);
            if in_window(u64::from(ret), 8, self.local_bytes as u64) {
                write_le(&mut self.local, base + ret as usize, 8, p);
            }
        }
        Ok(())
    }

    /// `free(ptr)` of each lane of `emask`: a pointer malloc did not return (or returned
    /// and was freed) faults, naming it.
    pub(super) fn device_free(
        &mut self,
        w: &mut Warp,
        emask: u32,
        ptr: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let mut m = emask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let p = self.local_u64(w.id, l, ptr);
            let result = match self.launch.heap {
                Some(heap) => heap.free(p),
                None if p == 0 => Ok(()),
                None => Err(format!("free({p:#x}): the launch has no device heap")),
            };
            if let Err(detail) = result {
                return Err(self.fault(
                    w,
                    l as u32,
                    pc,
                    FaultKind::IllegalAddress,
                    Some(p),
                    detail,
                ));
            }
        }
        Ok(())
    }
}

fn push_frame(w: &mut Warp, l: usize, pc: u32, entry: u32, frame: Frame) {
    if w.stacks.len() < 32 {
        w.stacks.resize(32, Vec::new());
    }
    if w.frames.lanes.len() < 32 {
        w.frames.lanes.resize_with(32, Vec::new);
    }
    w.stacks[l].push(pc);
    w.frames.lanes[l].push(frame);
    w.pcs[l] = entry;
}
