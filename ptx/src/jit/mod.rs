//! Kernels compiled to host code: the decoded program (`decode::Program`) lowered per
//! kernel, at its first launch, into one host function with Cranelift.
//!
//! Why Cranelift: it is pure Rust (no LLVM to install or ship, so the pip wheel stays
//! self-contained), and it compiles in milliseconds, which lazily compiling each kernel
//! of a module with hundreds of them needs.
//!
//! The compiled code is a fast path inside the interpreter's own loop (`executor::run_group`),
//! never a second executor: it works on the same warp (the register file laid out as
//! `regs[reg * 32 + lane]`, predicates as one bit per lane), runs while the warp's group of
//! lanes goes on in straight lines or uniform branches, and returns the pc at which the
//! interpreter goes on. What it does not compile it hands back that way (control flow
//! that splits or ends the group, barriers, calls) or runs through the interpreter's own
//! code for that instruction (`BlockCtx::exec`, called per warp instruction: local
//! memory, shuffles, votes, atomics...; texture and surface instructions call the
//! sampling code itself, `helper_image`, counted apart in `JitInfo::texture`: the one
//! implementation both engines run, so the bits are the same). The step and time limits are
//! polled at the same instruction counts: the code stops where the interpreter would
//! check (`stop_at`).
//!
//! Memory: loads and stores of shared, global, constant and generic memory, and
//! parameters at constant addresses, are compiled (`lower::mem_kind`). The code reaches
//! only what the interpreter would: the block's shared buffer below its bound, the
//! launch's parameter buffer below its length, and spans `Memory::translate` handed out,
//! read from the block's own TLB (`BlockCtx::tlb`, laid out `repr(C)` for this). A run
//! of loads, or of one store, that can run again from its start (the registers it reads
//! then writes are kept aside until its last lane) checks each lane's access as the lane
//! runs, against the span the previous lane used (`helper_lookup` on a miss); a failing
//! lane sends the whole run back to the interpreter, which runs it again (loads change
//! nothing; the interpreter stores lane by lane too, so the lanes before store the same
//! again). Any other run checks every access for all lanes before any lane runs it:
//! alignment (as `locate`), the
//! shared bound (the highest address decides; an address that wraps around is above
//! it), or one TLB span covering the lowest to the highest address (writable for stores,
//! its host address aligned). A shared access checked lane by lane tests the bound
//! inline (one span for all lanes, read once per run), with no span cache. When any check fails (a fault, a TLB miss, lanes in two
//! spans, a generic address in the local window) the code returns to the interpreter at
//! the start of the run, before any lane has run any of it: the interpreter runs those
//! instructions itself and faults at the lane, address and message it always does, or
//! translates and fills the TLB, so the next warp's run hits. Faults and messages stay
//! the interpreter's by construction.
//!
//! Uniform values: a divergence analysis (`lower/uniform.rs`) finds the registers and
//! predicates that hold one value in every lane of any group that reads them (written
//! only from parameters, the grid's shape and index, immediates and each other, outside
//! what a divergent branch controls, and written before any read). A run computes what
//! depends only on those once for the group, reading them in its first lane; a
//! predicate so computed is set for the whole group at once, and a run computed wholly
//! so runs no lane.
//!
//! Lane functions: arithmetic `math` builds from a per-lane function (the approximate
//! and correctly rounded f32 and f64 functions, f64 arithmetic: `math::lane_of`) and
//! `cvt` (`math::cvt_lane`, the spec an immediate) are called lane by lane inside runs,
//! the very functions the interpreter's loops call, so the bits are the same; handing
//! each to the interpreter would end the run before and start one after it.
//!
//! Lanes: arithmetic the compiler knows exactly (`native`) and the loads and stores above
//! run in *runs*, straight-line sequences with no branch target inside (a forward branch
//! over a short body of them becomes a guard on the body: `lower::if_convert`; what every
//! lane computes alike is computed once before the lanes, and written to the registers
//! that need it after them, the whole warp with 16-byte stores when the group is the
//! whole warp: `lower::Gen::write_uniform`): a loop over the
//! group's lanes runs the whole sequence for one lane with its values in host registers.
//! Register arithmetic of one lane never reads another lane's, so the order (lane by lane
//! instead of instruction by instruction) changes nothing but speed; memory could, so a
//! run holds loads or one store, never both (`RunFit`), and a load's value never feeds
//! an address or guard of the same run (the first pass over the lanes, which checks the
//! accesses, computes addresses without loading). Predicates written in a run are merged
//! into their words after the loop. A run stores only registers live after it
//! (`lower::liveness`), when the kernel has no instruction reading other lanes'
//! registers. Everything else is one warp instruction at a time, in the interpreter's
//! order. (Shuffles stay with the interpreter's code: its loops over the 32 lanes are
//! vectorised; a compiled lane loop measured slower.)
//!
//! Within a lane, f32 arithmetic passes its results on as host F32 values whose NaNs are
//! not yet canonical (`lower::LaneState::f32s`): a NaN in gives a NaN out whatever its
//! bits, and comparisons ignore them, so only what leaves that arithmetic (a store, a
//! register live after the run, an integer or move reading the bits) is made canonical,
//! and a chain of multiply-adds waits on nothing else. An if-converted body writes the
//! registers nothing reads where it was skipped (dead after the run, read in it only
//! under the same guard) in every lane, with no old value read and selected
//! (`lower::unguarded_writes`).

mod lower;
mod native;

use std::any::Any;
use std::collections::HashMap;
use std::ffi::c_void;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use crate::executor::{BlockCtx, Fault, TlbEntry, Warp};
use crate::Module;

/// Per kernel of a module: its compiled code, or None when it did not compile (the
/// interpreter runs it).
#[derive(Default)]
pub(crate) struct Cache {
    kernels: Mutex<HashMap<usize, Option<Arc<Compiled>>>>,
    /// Per kernel not compiled yet: the thread instructions its interpreted launches ran
    /// (`Engine::Tiered`).
    interpreted: Mutex<HashMap<usize, u64>>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("jit::Cache")
    }
}

impl Cache {
    /// The compiled code of `kernel`, compiling it on first use. Concurrent first launches
    /// of one module wait for one compile (a few milliseconds).
    pub(crate) fn get(&self, module: &Module, kernel: usize) -> Option<Arc<Compiled>> {
        let mut map = self.kernels.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(kernel)
            .or_insert_with(|| {
                let entry = module.kernels.get(kernel)?.entry_pc;
                lower::compile(&module.program, entry).ok().map(Arc::new)
            })
            .clone()
    }

    /// Under `Engine::Tiered`: the compiled code of `kernel` if it has it, or compiles
    /// it now for a launch of `threads` threads when compiling pays (`Engine::Tiered`);
    /// None: the interpreter runs this launch.
    pub(crate) fn get_tiered(
        &self,
        module: &Module,
        kernel: usize,
        threads: u64,
    ) -> Option<Arc<Compiled>> {
        if let Some(done) = self
            .kernels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&kernel)
        {
            return done.clone();
        }
        let ran = self.interpreted.lock().unwrap_or_else(|e| e.into_inner());
        let ran = ran.get(&kernel).copied().unwrap_or(0);
        if threads >= crate::TIER_UP_THREADS || ran >= crate::TIER_UP_INSTRUCTIONS {
            self.get(module, kernel)
        } else {
            None
        }
    }

    /// Counts the thread instructions an interpreted launch of `kernel` ran.
    pub(crate) fn interpreted(&self, kernel: usize, instructions: u64) {
        let mut ran = self.interpreted.lock().unwrap_or_else(|e| e.into_inner());
        let n = ran.entry(kernel).or_insert(0);
        *n = n.saturating_add(instructions);
    }

    /// Whether `kernel` has been compiled (or tried to).
    pub(crate) fn compiled(&self, kernel: usize) -> bool {
        let map = self.kernels.lock().unwrap_or_else(|e| e.into_inner());
        map.contains_key(&kernel)
    }
}

/// One kernel's host code.
pub(crate) struct Compiled {
    /// Owns the code's memory (freed on drop).
    module: Option<cranelift_jit::JITModule>,
    entry: EntryFn,
    /// Per pc: whether entering the code there runs anything (a run, a branch, an
    /// instruction through the interpreter's code); elsewhere (barriers, exits, calls)
    /// it would return at once, and the interpreter does not enter it.
    works_at: Vec<bool>,
    /// Instructions compiled natively, and run through the interpreter's code.
    pub(crate) native: usize,
    pub(crate) via_interp: usize,
    /// Texture and surface instructions, called straight into the sampling code.
    pub(crate) texture: usize,
    /// The program has warp-synchronous instructions (`shfl.sync`...), which wait for
    /// their member mask's lanes (`Warp::converging`): the interpreter runs groups that
    /// are not the whole warp's live lanes, so that it can park them there.
    pub(crate) warp_sync: bool,
}

// Safety: after `finalize_definitions` the code is immutable; threads only call `entry`
// (which keeps no state of its own: everything is in the `Frame` each call passes), and
// the JITModule is touched again only by `drop`, with `&mut self`.
unsafe impl Send for Compiled {}
// Safety: as for Send.
unsafe impl Sync for Compiled {}

impl Compiled {
    pub(crate) fn works_at(&self, pc: u32) -> bool {
        self.works_at.get(pc as usize).copied().unwrap_or(false)
    }
}

impl Drop for Compiled {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // Safety: a Compiled lives in its Module's cache (or an Arc of it held by a
            // launch); it drops when no launch holds it, so none of its code is running
            // and `entry` is never called again.
            unsafe { m.free_memory() };
        }
    }
}

/// The compiled function: `(frame, pc) -> status << 32 | pc`.
type EntryFn = unsafe extern "C" fn(*mut Frame, u32) -> u64;

/// The returns of compiled code (high half of its result).
pub(crate) const GO_ON: u64 = 0;
pub(crate) const FAULTED: u64 = 1;
pub(crate) const PANICKED: u64 = 2;

/// What compiled code reads and writes, at fixed offsets (`lower` knows them).
#[repr(C)]
pub(crate) struct Frame {
    regs: *mut u64,
    preds: *mut u32,
    steps: u64,
    instructions: u64,
    /// The step count at which the interpreter must check its limits: the code stops.
    stop_at: u64,
    mask: u32,
    other: u32,
    /// The block's cache of translated spans (`BlockCtx::tlb`, `TLB_ENTRIES` entries):
    /// compiled loads and stores of global memory look their addresses up in it and go
    /// back to the interpreter on a miss (which translates and fills it).
    tlb: *const TlbEntry,
    /// The block's shared memory (at least `shared_limit` bytes) and its bound.
    shared: *mut u8,
    shared_limit: u64,
    dyn_shared_base: u64,
    /// The launch's parameter buffer.
    params: *const u8,
    params_len: u64,
    /// What special registers read: the block's shape, its index and the grid's shape.
    ntid: [u32; 3],
    ctaid: [u32; 3],
    nctaid: [u32; 3],
    /// What `helper_lookup` found: the span's first address, the highest offset an
    /// access may start at, the host delta.
    lookup: [u64; 3],
    /// The warp's `%tid` of each lane (`Warp::tids`: x, then y, then z, 32 each).
    tids: *const u32,
    ctx: *mut c_void,
    warp: *mut Warp,
    fault: Option<Fault>,
    panic: Option<Box<dyn Any + Send>>,
}

pub(crate) const OFF_REGS: i32 = 0;
pub(crate) const OFF_PREDS: i32 = 8;
pub(crate) const OFF_STEPS: i32 = 16;
pub(crate) const OFF_INSTRUCTIONS: i32 = 24;
pub(crate) const OFF_STOP_AT: i32 = 32;
pub(crate) const OFF_MASK: i32 = 40;
pub(crate) const OFF_OTHER: i32 = 44;
pub(crate) const OFF_TLB: i32 = 48;
pub(crate) const OFF_SHARED: i32 = 56;
pub(crate) const OFF_SHARED_LIMIT: i32 = 64;
pub(crate) const OFF_DYN_SHARED: i32 = 72;
pub(crate) const OFF_PARAMS: i32 = 80;
pub(crate) const OFF_PARAMS_LEN: i32 = 88;
pub(crate) const OFF_NTID: i32 = 96;
pub(crate) const OFF_CTAID: i32 = 108;
pub(crate) const OFF_NCTAID: i32 = 120;
pub(crate) const OFF_LOOKUP: i32 = 136;
pub(crate) const OFF_TIDS: i32 = 160;

// The offsets `lower` compiles in are the frame's (checked when this crate compiles).
const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(Frame, regs) == OFF_REGS as usize);
    assert!(offset_of!(Frame, preds) == OFF_PREDS as usize);
    assert!(offset_of!(Frame, steps) == OFF_STEPS as usize);
    assert!(offset_of!(Frame, instructions) == OFF_INSTRUCTIONS as usize);
    assert!(offset_of!(Frame, stop_at) == OFF_STOP_AT as usize);
    assert!(offset_of!(Frame, mask) == OFF_MASK as usize);
    assert!(offset_of!(Frame, other) == OFF_OTHER as usize);
    assert!(offset_of!(Frame, tlb) == OFF_TLB as usize);
    assert!(offset_of!(Frame, shared) == OFF_SHARED as usize);
    assert!(offset_of!(Frame, shared_limit) == OFF_SHARED_LIMIT as usize);
    assert!(offset_of!(Frame, dyn_shared_base) == OFF_DYN_SHARED as usize);
    assert!(offset_of!(Frame, params) == OFF_PARAMS as usize);
    assert!(offset_of!(Frame, params_len) == OFF_PARAMS_LEN as usize);
    assert!(offset_of!(Frame, ntid) == OFF_NTID as usize);
    assert!(offset_of!(Frame, ctaid) == OFF_CTAID as usize);
    assert!(offset_of!(Frame, nctaid) == OFF_NCTAID as usize);
    assert!(offset_of!(Frame, lookup) == OFF_LOOKUP as usize);
    assert!(offset_of!(Frame, tids) == OFF_TIDS as usize);
    assert!(offset_of!(TlbEntry, base) == TLB_BASE as usize);
    assert!(offset_of!(TlbEntry, len) == TLB_LEN as usize);
    assert!(offset_of!(TlbEntry, host) == TLB_HOST as usize);
    assert!(offset_of!(TlbEntry, writable) == TLB_WRITABLE as usize);
    assert!(std::mem::size_of::<TlbEntry>() == TLB_ENTRY_SIZE as usize);
};
pub(crate) const TLB_BASE: i32 = 0;
pub(crate) const TLB_LEN: i32 = 8;
pub(crate) const TLB_HOST: i32 = 16;
pub(crate) const TLB_WRITABLE: i32 = 24;
pub(crate) const TLB_ENTRY_SIZE: i32 = 32;

/// Runs the compiled code of the group `mask` of warp `w` from `pc` (where the
/// interpreter has done its checks) and returns the pc where the interpreter goes on
/// (`pc` itself: the interpreter runs that instruction).
pub(crate) fn enter(
    code: &Compiled,
    ctx: &mut BlockCtx<'_>,
    w: &mut Warp,
    pc: u32,
    mask: u32,
    other: u32,
) -> Result<u32, Fault> {
    let limit = ctx.launch.step_limit.unwrap_or(u64::MAX);
    // The interpreter polls the stop flag and the clock (and a cooperative launch's block
    // yields) when the step count has `check_mask`'s bits clear, and checks the limit
    // before every instruction.
    let stop_at = limit.min((w.steps | ctx.check_mask).saturating_add(1));
    let params = ctx.launch.params;
    let block = ctx.launch.block;
    let ctaid = ctx.ctaid;
    let ctxp: *mut BlockCtx<'_> = ctx;
    // Safety: `ctxp` is `ctx`, borrowed mutably for this call; these only take the
    // addresses of its fields (no reference outlives the statement).
    let (tlb, shared, shared_limit, dyn_shared_base) = unsafe {
        (
            std::ptr::addr_of!((*ctxp).tlb) as *const TlbEntry,
            (*ctxp).shared.as_mut_ptr(),
            (*ctxp).shared_limit.min((*ctxp).shared.len() as u64),
            (*ctxp).dyn_shared_base,
        )
    };
    let mut frame = Frame {
        regs: w.regs.as_mut_ptr(),
        preds: w.preds.as_mut_ptr(),
        steps: w.steps,
        instructions: 0,
        stop_at,
        mask,
        other,
        tlb,
        shared,
        shared_limit,
        dyn_shared_base,
        params: params.as_ptr(),
        params_len: params.len() as u64,
        // At least 1, so compiled code never divides by 0 (a launch has no empty side).
        ntid: block.map(|x| x.max(1)),
        ctaid,
        nctaid: ctx.launch.grid,
        lookup: [0; 3],
        tids: w.tids.as_ptr() as *const u32,
        ctx: ctxp as *mut c_void,
        warp: w as *mut Warp,
        fault: None,
        panic: None,
    };
    // Safety: `entry` was compiled for this program, whose register and predicate
    // counts sized `w.regs` and `w.preds` (run_block), so every register index it uses
    // is in bounds; it reaches the block and the warp only through `helper_exec`, which
    // runs while the compiled code waits, and the frame outlives the call. Memory it
    // reaches itself: the shared buffer below `shared_limit` (clamped to the buffer's
    // length above), the parameter buffer below `params_len`, and host spans of `tlb`
    // entries, each only after checking the whole access lies inside (`lower::mem`);
    // the helper may add TLB entries (the array does not move) but never frees or
    // reallocates the shared buffer, so the pointers stay valid for the call.
    let ret = unsafe { (code.entry)(&mut frame, pc) };
    w.steps = frame.steps;
    ctx.instructions += frame.instructions;
    match ret >> 32 {
        GO_ON => Ok(ret as u32),
        FAULTED => Err(frame.fault.take().unwrap_or_else(|| {
            // Unreachable by construction: FAULTED is returned only after the helper
            // stored a fault; say so rather than panic.
            internal(ctx, w, ret as u32, mask, "compiled code lost its fault")
        })),
        _ => match frame.panic.take() {
            Some(p) => std::panic::resume_unwind(p),
            None => Err(internal(ctx, w, ret as u32, mask, "compiled code failed")),
        },
    }
}

fn internal(ctx: &BlockCtx<'_>, w: &Warp, pc: u32, mask: u32, what: &str) -> Fault {
    let kind = crate::FaultKind::IllegalInstruction;
    ctx.fault(w, mask.trailing_zeros(), pc, kind, None, what.into())
}

/// How `helper_lookup` searches: the space, the element size, whether it stores.
pub(crate) fn lookup_code(space: crate::decode::Space, size: u8, store: bool) -> u32 {
    use crate::decode::Space;
    let s = match space {
        Space::Shared => 1,
        Space::Generic => 2,
        _ => 0,
    };
    s | (size as u32) << 8 | (store as u32) << 16
}

/// Called by compiled code when a lane's access (`total` bytes at `addr`, `how` from
/// `lookup_code`) is not in the span the previous lane used: finds the span that holds
/// it, as `lower::Gen::tlb_check` and `shared_check` do for a whole run: the block's
/// shared memory below its bound, or a TLB entry covering it whose host address is
/// aligned like the device address (writable, for a store). 1 and the span in
/// `frame.lookup`, or 0 (the run goes back to the interpreter).
pub(crate) extern "C" fn helper_lookup(frame: *mut Frame, addr: u64, total: u64, how: u32) -> u32 {
    // Safety: compiled code passes the frame `enter` gave it, alive for the call; its
    // TLB pointer is the block's `TLB_ENTRIES` entries, which nothing changes meanwhile.
    let f = unsafe { &mut *frame };
    let (space, size, store) = (how & 0xff, (how >> 8) & 0xff, how >> 16 != 0);
    let shared = space == 1 || space == 2 && addr >= crate::SHARED_WINDOW;
    if shared {
        let window = if space == 2 { crate::SHARED_WINDOW } else { 0 };
        let limit = f.shared_limit;
        if limit >= total && addr.wrapping_sub(window) <= limit - total {
            f.lookup = [
                window,
                limit - total,
                (f.shared as u64).wrapping_sub(window),
            ];
            return 1;
        }
        return 0;
    }
    // Safety: as above.
    let tlb = unsafe { std::slice::from_raw_parts(f.tlb, crate::executor::TLB_ENTRIES) };
    for e in tlb {
        let delta = (e.host as u64).wrapping_sub(e.base);
        if e.len >= total
            && addr.wrapping_sub(e.base) <= e.len - total
            && delta & (u64::from(size.max(1)) - 1) == 0
            && (!store || e.writable != 0)
        {
            f.lookup = [e.base, e.len - total, delta];
            return 1;
        }
    }
    0
}

/// Called by compiled code for an instruction it runs through the interpreter's code:
/// 0, or FAULTED / PANICKED with the fault or panic in the frame (a panic must not
/// unwind through compiled code).
pub(crate) extern "C" fn helper_exec(frame: *mut Frame, pc: u32, emask: u32) -> u32 {
    helper_call(frame, pc, |ctx, w, op| ctx.exec(w, op, emask, pc))
}

/// Called by compiled code for a texture or surface instruction (`tex`, `tld4`, `txq`,
/// `suld`, `sust`, `sured`, `suq`): the sampling code itself (`BlockCtx::image`, the one
/// the interpreter runs, so the bits are the same), for the warp's lanes in `emask`,
/// without the interpreter's dispatch. Returns as `helper_exec`.
pub(crate) extern "C" fn helper_image(frame: *mut Frame, pc: u32, emask: u32) -> u32 {
    helper_call(frame, pc, |ctx, w, op| match op {
        crate::decode::Op::Image(img) => ctx.image(w, img, emask, pc),
        // `lower` calls this only for `Op::Image`; anything else the interpreter's way.
        op => ctx.exec(w, op, emask, pc),
    })
}

/// What `helper_exec` and `helper_image` share: the block and warp from the frame, the
/// instruction at `pc` run by `run`, its fault or panic kept in the frame.
fn helper_call(
    frame: *mut Frame,
    pc: u32,
    run: impl FnOnce(&mut BlockCtx<'_>, &mut Warp, &crate::decode::Op) -> Result<(), Fault>,
) -> u32 {
    // Safety: compiled code passes the frame `enter` gave it, alive for the call, and
    // `ctx`/`warp` point at the block and warp `enter` borrowed mutably; compiled code
    // does not touch them while this runs, so these are the only references.
    let (frame, ctx, w) = unsafe {
        let f = &mut *frame;
        (
            f as *mut Frame,
            &mut *(f.ctx as *mut BlockCtx<'_>),
            &mut *f.warp,
        )
    };
    // Safety: as above; the frame is not otherwise borrowed here.
    let frame = unsafe { &mut *frame };
    // The clock special register reads the warp's step count.
    w.steps = frame.steps;
    let prog = ctx.prog;
    let r = std::panic::catch_unwind(AssertUnwindSafe(|| match prog.insts.get(pc as usize) {
        Some(inst) => run(ctx, w, &inst.op),
        None => Ok(()),
    }));
    match r {
        Ok(Ok(())) => 0,
        Ok(Err(f)) => {
            frame.fault = Some(f);
            FAULTED as u32
        }
        Err(p) => {
            frame.panic = Some(p);
            PANICKED as u32
        }
    }
}
