//! The syntax tree checked and lowered into the executor's instruction form: registers
//! as indices into one module-wide register file (each function has its own, so a call
//! saves nothing unless it may recurse: `decode/calls.rs`), labels as program counters,
//! variables as addresses, every arithmetic operation as a lane function chosen once here.

use std::collections::HashMap;

mod asynccopy;
mod calls;
mod host_memory;
mod texture;
mod video;
pub use asynccopy::{AddrOp, AsyncOp, BulkDir, MapField, MbarWait};
pub use calls::FuncRt;
pub use texture::{
    Bounds, Dest, Geom, ImageOp, ImageQuery, LodOperand, SamplerRef, SuredForm, SurfaceReduction,
};

use crate::math::{self, Cmp, CvtSpec, FMods, Rnd, Ty, WarpFn};
use crate::mma;
use crate::parse::{Ast, FuncAst, InstAst, Opnd, Stmt, VarDecl, VarSpace};
use crate::{Global, Kernel, LoadError, LoadErrorKind, Module, Param, StateSpace};
use crate::{LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sreg {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    Laneid,
    Warpid,
    Nwarpid,
    Smid,
    Nsmid,
    Clock,
    /// The upper 32 bits of %clock64 (`%clock_hi`).
    ClockHi,
    Clock64,
    Globaltimer,
    LanemaskEq,
    LanemaskLt,
    LanemaskLe,
    LanemaskGt,
    LanemaskGe,
    Gridid,
    DynamicSmemSize,
    TotalSmemSize,
    GlobaltimerLo,
    GlobaltimerHi,
    /// `%envreg0`..`%envreg31`: the driver's values for the launch.
    Envreg(u8),
    /// `%reserved_smem_offset_begin`, `_end`, `_cap`, `_0`, `_1` (0..=4).
    ReservedSmem(u8),
    /// `%clusterid`, `%nclusterid`, `%cluster_ctaid`, `%cluster_nctaid` (x, y, z).
    ClusterId(u8),
    Nclusterid(u8),
    ClusterCtaid(u8),
    ClusterNctaid(u8),
    /// `%cluster_ctarank`, `%cluster_nctarank`.
    ClusterCtarank,
    ClusterNctarank,
    /// `%is_explicit_cluster`: the launch gave a cluster shape.
    IsExplicitCluster,
    /// `%aggr_smem_size`: the block's shared memory with the reserved region.
    AggrSmemSize,
    /// `%current_graph_exec`: the device graph being run (64 bits).
    CurrentGraphExec,
    /// `%pm0`..`%pm7` (`false`) and `%pm0_64`..`%pm7_64` (`true`).
    Pm(u8, bool),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Src {
    Reg(u32),
    Imm(u64),
    Pred(u32),
    NotPred(u32),
    Sreg(Sreg),
    /// Device address of module global `i`, plus an offset.
    GlobalVar(u32, i64),
    /// Shared-space address of the dynamic shared memory (`.extern .shared x[]`), plus
    /// an offset: it follows the launched kernel's static shared memory, so it is only
    /// known at launch (a function may serve several kernels).
    DynShared(i64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dst {
    Reg(u32),
    Pred(u32),
    Sink,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    Global,
    Shared,
    Local,
    /// `.shared::cluster`: the shared memory of any block of the cluster
    /// (`crate::CLUSTER_RANK_STRIDE` says how its addresses name a block).
    SharedCluster,
    /// The kernel's parameter buffer.
    KParam,
    Const,
    Generic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
    Exch,
    Cas,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CarryOp {
    Add,
    Sub,
    MadLo,
    MadHi,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarKind {
    Sync,
    Arrive,
    Red(BoolOp),
    RedPopc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone)]
pub enum Op {
    Alu {
        f: WarpFn,
        d: Dst,
        s: [Src; 4],
        n: u8,
    },
    /// A video instruction (`crate::video`): d from a, b, c.
    Video {
        v: crate::video::Video,
        d: Dst,
        s: [Src; 3],
    },
    Cvt {
        spec: CvtSpec,
        d: Dst,
        a: Src,
    },
    Setp {
        f: WarpFn,
        p: Dst,
        q: Dst,
        a: Src,
        b: Src,
        comb: Option<(BoolOp, Src)>,
    },
    /// `set.cmp.dtype.stype`: 0xffffffff / 1.0f for true.
    Set {
        f: WarpFn,
        d: Dst,
        a: Src,
        b: Src,
        comb: Option<(BoolOp, Src)>,
        float_result: bool,
    },
    /// `setp.cmp.f16x2`/`.bf16x2 p|q, a, b`: p from the low halves, q from the high.
    SetpPair {
        lo: WarpFn,
        hi: WarpFn,
        p: Dst,
        q: Dst,
        a: Src,
        b: Src,
        comb: Option<(BoolOp, Src)>,
    },
    /// `set` with a 16-bit or half destination, or `.f16x2`/`.bf16x2` sources: `one`
    /// (1.0 in the destination's format, or all ones) where the comparison holds, per
    /// half when `hi` compares the upper halves too.
    SetHalf {
        lo: WarpFn,
        hi: Option<WarpFn>,
        d: Dst,
        a: Src,
        b: Src,
        comb: Option<(BoolOp, Src)>,
        one: u64,
    },
    /// `mov.b64 d, {a, b}` and friends: pack `n` parts of `bits` each.
    Pack {
        d: Dst,
        parts: [Src; 4],
        n: u8,
        bits: u8,
    },
    Unpack {
        d: [Dst; 4],
        a: Src,
        n: u8,
        bits: u8,
    },
    /// `lop3.{and,or}.b32 d|p, a, b, c, lut, q`: d as `lop3`'s, then p = (d != 0) op q.
    Lop3Pred {
        d: Dst,
        p: Dst,
        s: [Src; 4],
        op: BoolOp,
        q: Src,
    },
    /// Two 64-bit moves at once (both sources read first): `mov.b128` packing, unpacking
    /// or copying the halves of `.b128` registers.
    Mov2 {
        d: [Dst; 2],
        s: [Src; 2],
    },
    /// `atom.cas.b128`/`atom.exch.b128` (`elem` B128, one element of two halves) and the
    /// vector atomics of sm_90 (`atom`/`red.global.v2/.v4/.v8`): `n` elements of `elem`
    /// at consecutive addresses, each atomic on its own.
    AtomWide(Box<AtomWide>),
    Ld {
        space: Space,
        ty: Ty,
        n: u8,
        d: [Dst; 4],
        addr: Src,
        off: i64,
    },
    St {
        space: Space,
        ty: Ty,
        n: u8,
        v: [Src; 4],
        addr: Src,
        off: i64,
    },
    Atom {
        space: Space,
        op: AtomOp,
        ty: Ty,
        d: Dst,
        addr: Src,
        off: i64,
        b: Src,
        c: Src,
    },
    Bra {
        target: u32,
    },
    Call {
        entry: u32,
        /// (from, to, bytes) in local memory.
        args_in: Vec<(u32, u32, u32)>,
        rets_out: Vec<(u32, u32, u32)>,
        /// The callee's index in [`Program::funcs`].
        callee: u32,
        /// The caller's index when the callee may call it again before returning (both in
        /// one cycle of the call graph): its registers and local memory are saved for the
        /// call and restored at the return (`executor/calls.rs`).
        save: Option<u32>,
    },
    /// `call (rets), %rd, (args), prototype;`: a call through a function's address
    /// ([`crate::FUNC_WINDOW`]). Arguments and return values as (offset in the caller's
    /// local memory, bytes), matched to the callee's `.param`s when the call runs.
    CallIndirect {
        target: Src,
        args: Vec<(u32, u32)>,
        rets: Vec<(u32, u32)>,
        /// The calling function's index in [`Program::funcs`]; None for a kernel (never
        /// called again, so nothing of it to save).
        caller: Option<u32>,
    },
    /// `call (ret), malloc, (size);` (no body in the module): the device heap's malloc.
    /// Offsets in the caller's local memory of the 8-byte size and the 8-byte result,
    /// and for `__nv_aligned_device_malloc(size, align)` of the 8-byte alignment.
    Malloc {
        size: u32,
        ret: u32,
        align: Option<u32>,
    },
    /// `call free, (ptr);` (no body in the module). Offset of the 8-byte pointer.
    Free {
        ptr: u32,
    },
    /// `alloca.type ptr, size{, align}`: `size` bytes of the thread's alloca stack
    /// (`executor/calls.rs`), aligned to `align` (at least 8), their local address in d.
    Alloca {
        d: Dst,
        size: Src,
        align: u32,
    },
    /// `stacksave.type d`: the thread's stack pointer (a local address).
    StackSave {
        d: Dst,
    },
    /// `stackrestore.type a`: the stack pointer set back to `a`.
    StackRestore {
        a: Src,
    },
    /// `setmaxnreg.{inc,dec}.sync.aligned.u32 n`: checked (warp converged, its warpgroup
    /// whole in the block), nothing else: the host has no register file to divide.
    SetMaxNreg,
    /// `mov.u64 %r, local_var;` in function `func` (not a kernel): the variable's local
    /// address in the running activation, which a recursive activation has in a frame of
    /// its own (`executor/calls.rs`); else `off`, its place.
    FrameAddr {
        d: Dst,
        off: u32,
        func: u32,
    },
    Ret,
    Exit,
    Trap,
    /// `call __assertfail` (no body in the module): its arguments are in
    /// [`Program::assert_args`], kept apart so this stays a unit variant.
    AssertFail,
    /// `call vprintf` (no body in the module): device printf. Offsets in the caller's
    /// local memory of its format and argument-buffer pointers (8 bytes each) and of its
    /// 4-byte return value, if it takes one.
    Vprintf {
        fmt: u32,
        args: u32,
        ret: Option<u32>,
    },
    /// A call of the device runtime (CUDA dynamic parallelism: `crate::devrt`), no body
    /// in the module: offsets in the caller's local memory of its arguments (sizes as
    /// `devrt::FUNCTIONS` says) and of its result.
    DeviceRuntime {
        call: crate::devrt::DevRt,
        args: Vec<u32>,
        ret: u32,
    },
    /// `call cudaGraphSetConditional` (no body in the module): what nvcc makes of the
    /// runtime's device-side `cudaGraphSetConditional(handle, value)`. Offsets in the
    /// caller's local memory of the 8-byte handle and the 4-byte value.
    SetConditional {
        handle: u32,
        value: u32,
    },
    /// `add.cc`, `addc`, `sub.cc`, `subc`, `mad.cc`, `madc`: the carry flag per lane.
    Carry {
        op: CarryOp,
        carry_in: bool,
        carry_out: bool,
        wide: bool,
        d: Dst,
        a: Src,
        b: Src,
        c: Src,
    },
    /// `elect.sync d|p, membermask`.
    Elect {
        d: Dst,
        p: Dst,
        mask: Src,
    },
    Nop,
    Bar {
        kind: BarKind,
        id: Src,
        count: Option<Src>,
        pred: Option<Src>,
        d: Dst,
    },
    Shfl {
        mode: ShflMode,
        d: Dst,
        p: Dst,
        a: Src,
        b: Src,
        c: Src,
        /// The member mask: lanes at one pc already run together here.
        _mask: Src,
    },
    Vote {
        mode: VoteMode,
        d: Dst,
        a: Src,
        mask: Src,
    },
    Activemask {
        d: Dst,
    },
    Match {
        all: bool,
        wide: bool,
        d: Dst,
        p: Dst,
        a: Src,
        mask: Src,
    },
    Redux {
        op: ReduxOp,
        signed: bool,
        d: Dst,
        a: Src,
        mask: Src,
    },
    WarpSync {
        _mask: Src,
    },
    /// Texture and surface instructions (`decode/texture.rs`).
    Image(Box<ImageOp>),
    /// `mma.sync.aligned` and `wmma.mma.sync.aligned`: D = A·B + C over the warp.
    Mma(Box<MmaOp>),
    /// `wmma.load.{a,b,c}`: a fragment from memory, `stride` elements between rows
    /// (row-major) or columns.
    WmmaLoad(Box<WmmaMem<Dst>>),
    /// `wmma.store.d`.
    WmmaStore(Box<WmmaMem<Src>>),
    /// `ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].b16`: lanes 8j..8j+7 give the row
    /// addresses of matrix j, every lane receives its part of each.
    Ldmatrix {
        n: u8,
        trans: bool,
        space: Space,
        d: [Dst; 4],
        addr: Src,
        off: i64,
    },
    /// `stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].b16`: the store twin of `Ldmatrix`.
    Stmatrix {
        n: u8,
        trans: bool,
        space: Space,
        v: [Src; 4],
        addr: Src,
        off: i64,
    },
    /// `movmatrix.sync.aligned.m8n8.trans.b16`: the warp's 8x8 fragment transposed.
    Movmatrix {
        d: Dst,
        a: Src,
    },
    /// Asynchronous copies and mbarriers (`decode/asynccopy.rs`).
    Async(Box<AsyncOp>),
    /// `brx.idx index, tlist;`: each lane goes to the `index`th label of the
    /// `.branchtargets` list (an index past it faults: undefined in PTX).
    BrxIdx {
        index: Src,
        targets: Box<[u32]>,
    },
    /// `barrier.cluster.arrive`: the lanes arrive at their cluster's barrier.
    ClusterArrive,
    /// `barrier.cluster.wait`: the lanes wait until the phase they arrived in completes.
    ClusterWait,
    /// `getctarank{.shared::cluster}`: the cluster rank of the block whose shared memory
    /// `a` names.
    GetCtaRank {
        d: Dst,
        a: Src,
        generic: bool,
    },
    /// `mbarrier.test_wait`/`try_wait`: control, as a failed wait lets other warps run.
    MbarWait(Box<MbarWait>),
    /// `wgmma.mma_async`: control, as a warp waits there for the other three of its
    /// warpgroup (`executor/matrix.rs`).
    Wgmma(Box<WgmmaOp>),
}

#[derive(Debug, Clone)]
pub struct AtomWide {
    pub space: Space,
    pub op: AtomOp,
    pub elem: Ty,
    pub n: u8,
    /// Per element (a `.b128`: low and high halves); `d` empty for `red`.
    pub d: Vec<Dst>,
    pub b: Vec<Src>,
    /// `cas`'s new value (its halves).
    pub c: Vec<Src>,
    pub addr: Src,
    pub off: i64,
}

#[derive(Debug, Clone)]
pub struct MmaOp {
    pub spec: mma::MmaSpec,
    pub d: Vec<Dst>,
    pub a: Vec<Src>,
    pub b: Vec<Src>,
    pub c: Vec<Src>,
    /// `mma.sp`'s metadata register (`e`); the selector is `spec.sparse`.
    pub meta: Option<Src>,
}

/// `wgmma.mma_async`'s operands: D (read as the accumulator, then written), A (one
/// descriptor, or the warp's fragment registers), B's descriptor, `scale-d`.
#[derive(Debug, Clone)]
pub struct WgmmaOp {
    pub spec: crate::wgmma::WgmmaSpec,
    pub d: Vec<Dst>,
    pub c: Vec<Src>,
    pub a: Vec<Src>,
    pub b: Src,
    /// `.sp`'s metadata register (`sp-meta`).
    pub meta: Option<Src>,
    pub scale_d: Src,
}

#[derive(Debug, Clone)]
pub struct WmmaMem<R> {
    pub frag: mma::Frag,
    pub row_major: bool,
    pub space: Space,
    pub regs: Vec<R>,
    pub addr: Src,
    pub off: i64,
    /// None: the matrix's own width (row-major) or height.
    pub stride: Option<Src>,
}

impl Op {
    /// Instructions after which the warp's lanes may no longer share one program counter.
    pub fn is_control(&self) -> bool {
        matches!(
            self,
            Op::Bra { .. }
                | Op::Call { .. }
                | Op::CallIndirect { .. }
                | Op::Ret
                | Op::Exit
                | Op::Trap
                | Op::AssertFail
                | Op::Bar { .. }
                | Op::MbarWait(_)
                | Op::Wgmma(_)
                | Op::ClusterWait
                | Op::BrxIdx { .. }
        )
    }
}

#[derive(Debug, Clone)]
pub struct Inst {
    pub guard: Option<(u32, bool)>,
    pub op: Op,
}

#[derive(Debug, Clone)]
pub struct InstInfo {
    pub line: u32,
    pub text: String,
    /// Every register and predicate the instruction's operands and guard name, read or
    /// written: what an analysis that must not miss a write goes by, whatever the `Op`
    /// (`jit::uniform`).
    pub names: Vec<Named>,
}

/// A register or predicate an instruction names (`InstInfo::names`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    Reg(u32),
    Pred(u32),
}

#[derive(Debug, Default)]
pub struct Program {
    pub insts: Vec<Inst>,
    pub info: Vec<InstInfo>,
    pub nregs: u32,
    pub npreds: u32,
    /// Per-thread local memory: every function's frame, at a fixed place (a recursive
    /// call saves its caller's and restores it: `executor/calls.rs`).
    pub local_bytes: u32,
    /// Module-scope `.shared` variables, at the start of every block's shared memory.
    pub module_shared: u32,
    /// Each `Op::AssertFail`'s arguments by pc: offsets in the caller's local memory of
    /// the message, file, line and function (only read when the assert fails).
    pub assert_args: HashMap<u32, AssertArgs>,
    /// Every function with a body (kernels too), in the order the module defines them:
    /// what calls, indirect calls and function addresses need at run time.
    pub funcs: Vec<FuncRt>,
    /// Some function calls `malloc` or `free` (the device heap's).
    pub uses_heap: bool,
    /// Some function calls the device runtime (`crate::devrt`).
    pub uses_device_runtime: bool,
    /// Some recursive function has `.local` variables: each thread's local memory then
    /// holds a stack for their activations' copies (`executor/calls.rs`).
    pub recursive_depots: bool,
    /// Some function uses `alloca`: each thread's local memory ends with an alloca
    /// stack (`executor/calls.rs`).
    pub uses_alloca: bool,
    /// The largest alignment of the module's `.extern .shared` declarations (0 when it
    /// has none): `%aggr_smem_size` counts the static bytes rounded up to it.
    pub extern_shared_align: u32,
}

/// Where `__assertfail(message, file, line, function, charSize)`'s caller put its
/// arguments: offsets in its local memory.
#[derive(Debug, Clone, Copy)]
pub struct AssertArgs {
    pub message: u32,
    pub file: u32,
    pub line: u32,
    pub function: u32,
}

#[derive(Debug, Clone, Copy)]
enum Sym {
    Reg(u32),
    /// A `.b128` register: two consecutive 64-bit registers, the low half first. Only
    /// `mov`, `ld`, `st` and `atom` take it (`FuncDecoder::reg128`, `src128`).
    Wide(u32),
    Pred(u32),
    /// Offset in the block's shared memory.
    Shared(u32),
    /// Offset in the thread's local memory.
    Local(u32),
    /// Offset in the kernel's parameter buffer.
    KParam(u32),
    Global(u32),
    /// A module's `.texref`/`.surfref` (index in `Module::references`): an opaque handle,
    /// not an address.
    Reference(u32),
}

/// A list a function body declares for indirect control flow.
#[derive(Debug, Clone)]
enum TargetList {
    /// `.branchtargets`: the labels' pcs.
    Branches(Vec<u32>),
    /// `.calltargets`: the functions' names.
    Calls(Vec<String>),
}

struct FuncInfo {
    entry: u32,
    has_body: bool,
    /// Index in [`Program::funcs`] (functions with a body).
    index: Option<u32>,
    /// (local offset, size) of each `.param`, in order.
    params: Vec<(u32, u32)>,
    rets: Vec<(u32, u32)>,
    /// Bytes of each return value a body-less declaration of the function gives it (the
    /// first such declaration), for a definition that another input declared (see
    /// `FuncDecoder::call`).
    declared_rets: Option<Vec<u32>>,
}

struct Layout {
    next_reg: u32,
    next_pred: u32,
    local: u32,
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a.max(1)) * a.max(1)
}

fn var_size(v: &VarDecl) -> Result<(u64, u32), LoadError> {
    let ty = Ty::from_name(&v.ty).ok_or_else(|| {
        LoadError::at(
            v.line,
            v.column,
            LoadErrorKind::Syntax,
            format!("bad type `.{}`", v.ty),
        )
    })?;
    let elem = ty.bytes() as u64;
    let size = elem.saturating_mul(v.count.unwrap_or(0));
    if size > u32::MAX as u64 {
        return Err(LoadError::at(
            v.line,
            v.column,
            LoadErrorKind::Semantic,
            "variable too large",
        ));
    }
    let align = v.align.unwrap_or(elem as u32).max(1);
    if !align.is_power_of_two() {
        return Err(LoadError::at(
            v.line,
            v.column,
            LoadErrorKind::Semantic,
            "alignment not a power of two",
        ));
    }
    Ok((size, align))
}

/// The initialised prefix of a variable: its initialisers' bytes, and nothing for the
/// zeros after them, so that a huge variable with a short initialiser costs its
/// initialiser, not its size (the device memory it lands in is sparse).
/// `funcs`: the index in `Program::funcs` of each function with a body, whose address an
/// initialiser may name.
/// `vars`: the index in `Module::globals` of each `.global`/`.const` variable, whose
/// address an initialiser may hold (`generic(var)+off`, `var+off`, a masked byte of
/// either): those become relocations the loader writes once it has placed the variables
/// (zeros in the bytes meanwhile).
fn init_bytes(
    v: &VarDecl,
    funcs: &HashMap<&str, u32>,
    vars: &HashMap<&str, u32>,
) -> Result<(Vec<u8>, Vec<crate::Reloc>), LoadError> {
    let mut relocs = Vec::new();
    if v.init.is_empty() {
        return Ok((Vec::new(), relocs));
    }
    let ty = Ty::from_name(&v.ty).unwrap_or(Ty::B8);
    let elem = ty.bytes() as usize;
    if v.init.len() as u64 > v.count.unwrap_or(0) {
        return Err(LoadError::at(
            v.line,
            v.column,
            LoadErrorKind::Semantic,
            "too many initializers",
        ));
    }
    // ptxas (13.0) takes `.b128 x[n] = {...}`, each value zero-extended to 128 bits, and
    // refuses an initialised scalar `.b128` ("Initial value type mismatch").
    if ty == Ty::B128 && !v.is_array {
        return Err(LoadError::at(
            v.line,
            v.column,
            LoadErrorKind::Semantic,
            "initial value type mismatch: a `.b128` variable is initialised only as an array (`x[1] = {...}`)",
        ));
    }
    let mut out = Vec::with_capacity(v.init.len() * elem);
    for x in &v.init {
        // A variable's address, whole or masked: a relocation.
        let var_addr = match x {
            Opnd::AddrOf {
                name,
                off,
                mask,
                generic: _,
            } => Some((name.as_str(), *off, *mask)),
            Opnd::Name(n) if !funcs.contains_key(n.as_str()) => Some((n.as_str(), 0, None)),
            _ => None,
        };
        if let Some((name, addend, mask)) = var_addr {
            let Some(&target) = vars.get(name) else {
                return Err(LoadError::at(
                    v.line,
                    v.column,
                    if funcs.contains_key(name) {
                        LoadErrorKind::Unsupported
                    } else {
                        LoadErrorKind::Semantic
                    },
                    format!(
                        "initializer `{name}`: not a `.global` or `.const` variable of this \
                         module (nor, alone, a function with a body here)"
                    ),
                ));
            };
            // A whole address takes 8 bytes; a masked one any element.
            if mask.is_none() && elem != 8 {
                return Err(LoadError::at(
                    v.line,
                    v.column,
                    LoadErrorKind::Semantic,
                    format!(
                        "the address of `{name}` initialises a {elem}-byte element: addresses take 8"
                    ),
                ));
            }
            relocs.push(crate::Reloc {
                offset: out.len() as u64,
                bytes: elem.min(8) as u8,
                target,
                addend,
                mask: mask.unwrap_or(u64::MAX),
            });
            out.extend(std::iter::repeat_n(0u8, elem));
            continue;
        }
        if let Opnd::Name(n) = x {
            let k = funcs[n.as_str()];
            if elem != 8 {
                return Err(LoadError::at(
                    v.line,
                    v.column,
                    LoadErrorKind::Semantic,
                    format!(
                        "the address of `{n}` initialises a {elem}-byte element: addresses take 8"
                    ),
                ));
            }
            let a = crate::FUNC_WINDOW + u64::from(k) * crate::FUNC_STRIDE;
            out.extend_from_slice(&a.to_le_bytes());
            continue;
        }
        let bits: u128 = match (x, ty) {
            (Opnd::Int(v), Ty::F32) => (*v as i64 as f32).to_bits().into(),
            (Opnd::Int(v), Ty::F64) => (*v as i64 as f64).to_bits().into(),
            (Opnd::Int(v), _) => (*v).into(),
            (Opnd::F32(b), Ty::F64) => (f32::from_bits(*b) as f64).to_bits().into(),
            (Opnd::F32(b), _) => (*b).into(),
            (Opnd::F64(b), Ty::F32) => (f64::from_bits(*b) as f32).to_bits().into(),
            (Opnd::F64(b), _) => (*b).into(),
            _ => 0,
        };
        // Every type is at most 16 bytes wide, so its bytes are a prefix of a u128's.
        out.extend_from_slice(&bits.to_le_bytes()[..elem.min(16)]);
    }
    Ok((out, relocs))
}

/// Registers `lo..hi` (or predicates) of one function.
type IndexRange = (u32, u32);

pub fn decode(ast: Ast, src: &str) -> Result<Module, LoadError> {
    let lines: Vec<&str> = src.lines().collect();
    let mut prog = Program::default();
    let mut globals = Vec::new();
    let mut module_syms: HashMap<String, Sym> = HashMap::new();
    // The kernel's variables follow the region sm_90 reserves for the system.
    let mut module_shared: u64 = crate::RESERVED_SHARED;
    // Each function's index in `Program::funcs`, as pass 1 below gives them (the
    // functions with a body, in order): initialisers may hold their addresses.
    let mut func_index: HashMap<&str, u32> = HashMap::new();
    for f in ast.funcs.iter().filter(|f| f.body.is_some()) {
        let next = func_index.len() as u32;
        func_index.entry(f.name.as_str()).or_insert(next);
    }
    // Each `.global`/`.const` variable's index in `globals`, as the loop below pushes
    // them: initialisers may hold their addresses, declared before or after.
    let mut var_index: HashMap<&str, u32> = HashMap::new();
    for v in ast
        .vars
        .iter()
        .filter(|v| matches!(v.space, VarSpace::Global | VarSpace::Const))
    {
        let next = var_index.len() as u32;
        var_index.entry(v.name.as_str()).or_insert(next);
    }
    for v in &ast.vars {
        let (size, align) = var_size(v)?;
        match v.space {
            VarSpace::Global | VarSpace::Const => {
                if v.is_extern {
                    return Err(LoadError::at(
                        v.line,
                        v.column,
                        LoadErrorKind::Unsupported,
                        format!(
                            "`.extern` variable `{}` (linking modules) is not supported",
                            v.name
                        ),
                    ));
                }
                module_syms.insert(v.name.clone(), Sym::Global(globals.len() as u32));
                let (init, relocs) = init_bytes(v, &func_index, &var_index)?;
                globals.push(Global {
                    name: v.name.clone(),
                    space: if v.space == VarSpace::Global {
                        StateSpace::Global
                    } else {
                        StateSpace::Const
                    },
                    size,
                    align,
                    init,
                    relocs,
                    managed: v.managed && v.space == VarSpace::Global,
                });
            }
            VarSpace::Shared if v.count.is_none() => {
                // `.extern .shared x[]`: the launch's dynamic shared memory.
                module_syms.insert(v.name.clone(), Sym::Shared(u32::MAX));
                prog.extern_shared_align = prog.extern_shared_align.max(align);
            }
            VarSpace::Shared => {
                module_shared = align_up(module_shared, align as u64);
                module_syms.insert(v.name.clone(), Sym::Shared(module_shared as u32));
                module_shared += size;
            }
            _ => {
                return Err(LoadError::at(
                    v.line,
                    v.column,
                    LoadErrorKind::Unsupported,
                    "module-scope `.local`/`.param` variables are not supported",
                ))
            }
        }
    }

    let mut layout = Layout {
        next_reg: 0,
        next_pred: 0,
        local: 0,
    };
    // Pass 1: entry points, parameter frames and instruction counts of every function.
    let mut funcs: HashMap<String, FuncInfo> = HashMap::new();
    let mut pc = 0u32;
    for f in &ast.funcs {
        let mut info = FuncInfo {
            entry: pc,
            has_body: f.body.is_some(),
            index: None,
            params: Vec::new(),
            rets: Vec::new(),
            declared_rets: None,
        };
        if !f.entry {
            for (list, out) in [(&f.params, &mut info.params), (&f.rets, &mut info.rets)] {
                for p in list.iter() {
                    let (size, align) = var_size(p)?;
                    let off = align_up(layout.local as u64, align as u64);
                    layout.local = (off + size) as u32;
                    out.push((off as u32, size as u32));
                }
            }
        }
        if let Some(body) = &f.body {
            pc += body.iter().filter(|s| matches!(s, Stmt::Inst(_))).count() as u32;
            // Every function ends in an implicit `ret`/`exit` for code that falls off.
            pc += 1;
        }
        if let Some(prev) = funcs.get(&f.name) {
            if prev.has_body && f.body.is_some() {
                return Err(LoadError::at(
                    f.line,
                    f.column,
                    LoadErrorKind::Semantic,
                    format!("`{}` defined twice", f.name),
                ));
            }
            if f.body.is_none() {
                continue;
            }
        }
        if f.body.is_some() {
            info.index = Some(prog.funcs.len() as u32);
            prog.funcs
                .push(FuncRt::new(f, &info.params, &info.rets, info.entry, pc));
        }
        funcs.insert(f.name.clone(), info);
    }
    // `.alias a, b`: a, declared without a body, is b (its code and its address), with
    // b's prototype.
    for (alias, aliasee, line, column) in &ast.aliases {
        let err = |what: String| LoadError::at(*line, *column, LoadErrorKind::Semantic, what);
        let target = match funcs.get(aliasee) {
            Some(t) if t.has_body => t,
            _ => {
                return Err(err(format!(
                "`.alias {alias}, {aliasee}`: `{aliasee}` is not a function defined in the module"
            )))
            }
        };
        let Some(declared) = funcs.get(alias).filter(|a| !a.has_body) else {
            return Err(err(format!(
                "`.alias {alias}, {aliasee}`: `{alias}` is not a function declared without a body"
            )));
        };
        let sizes = |v: &[(u32, u32)]| v.iter().map(|p| p.1).collect::<Vec<_>>();
        if sizes(&declared.params) != sizes(&target.params)
            || sizes(&declared.rets) != sizes(&target.rets)
        {
            return Err(err(format!(
                "`.alias {alias}, {aliasee}`: the prototypes differ"
            )));
        }
        let info = FuncInfo {
            entry: target.entry,
            has_body: true,
            index: target.index,
            params: target.params.clone(),
            rets: target.rets.clone(),
            declared_rets: target.declared_rets.clone(),
        };
        funcs.insert(alias.clone(), info);
        if let Some(&k) = func_index.get(aliasee.as_str()) {
            func_index.insert(alias.as_str(), k);
        }
    }
    for f in ast.funcs.iter().filter(|f| f.body.is_none() && !f.entry) {
        if let Some(info) = funcs.get_mut(&f.name) {
            if info.declared_rets.is_none() {
                let sizes = f
                    .rets
                    .iter()
                    .map(|r| var_size(r).map(|(size, _)| size as u32));
                info.declared_rets = Some(sizes.collect::<Result<_, _>>()?);
            }
        }
    }

    let mut kernels = Vec::new();
    let mut ranges: HashMap<&str, (IndexRange, IndexRange)> = HashMap::new();
    // Shared variables a function declares in its body lie after the module's: a
    // kernel's after those of the functions before it, a function's after those of
    // every kernel and function before it, so that a kernel's and its callees' never
    // alias (kernels, which never call each other, may share offsets); a kernel holds
    // every one it reaches (below).
    let (mut funcs_end, mut kernels_end) = (module_shared, module_shared);
    let mut shared_end: HashMap<&str, u64> = HashMap::new();
    let mut jit_refusals: HashMap<&str, String> = HashMap::new();
    let mut references = Vec::new();
    for r in &ast.references {
        if module_syms.contains_key(&r.name)
            || references
                .iter()
                .any(|x: &crate::Reference| x.name == r.name)
        {
            return Err(LoadError::at(
                r.line,
                r.column,
                LoadErrorKind::Semantic,
                format!("`{}` is declared twice", r.name),
            ));
        }
        module_syms.insert(r.name.clone(), Sym::Reference(references.len() as u32));
        references.push(crate::Reference {
            name: r.name.clone(),
            surface: r.surface,
        });
    }
    let mut samplers = HashMap::new();
    for s in &ast.samplers {
        if !ast.texmode_independent {
            // As ptxas: "violates .target texmode_unified setting".
            return Err(LoadError::at(
                s.line,
                s.column,
                LoadErrorKind::Semantic,
                format!(
                    "`.samplerref {}` needs independent texturing mode (`.target ..., \
                     texmode_independent`)",
                    s.name
                ),
            ));
        }
        if samplers
            .insert(s.name.clone(), texture::sampler_ref(s)?)
            .is_some()
            || module_syms.contains_key(&s.name)
        {
            return Err(LoadError::at(
                s.line,
                s.column,
                LoadErrorKind::Semantic,
                format!("`{}` is declared twice", s.name),
            ));
        }
    }
    for f in &ast.funcs {
        let Some(body) = &f.body else { continue };
        let regs_before = layout.next_reg + layout.next_pred;
        let (reg_lo, pred_lo) = (layout.next_reg, layout.next_pred);
        let mut d = FuncDecoder {
            prog: &mut prog,
            layout: &mut layout,
            module_syms: &module_syms,
            samplers: &samplers,
            references: &references,
            texmode_independent: ast.texmode_independent,
            funcs: &funcs,
            scopes: vec![HashMap::new()],
            labels: HashMap::new(),
            scope_ids: vec![0],
            next_scope: 1,
            lines: &lines,
            shared: if f.entry {
                funcs_end
            } else {
                funcs_end.max(kernels_end)
            },
            own_local: 0,
            is_kernel: f.entry,
            protos: HashMap::new(),
            target_lists: HashMap::new(),
            func_index: funcs[&f.name].index,
            depot: (u32::MAX, 0),
            nvidia_jit_refuses: None,
        };
        let params = d.declare_params(f)?;
        let local_before = d.layout.local;
        d.body(f, body)?;
        let shared = d.shared;
        if f.entry {
            kernels_end = kernels_end.max(shared);
        } else {
            funcs_end = shared;
        }
        shared_end.insert(f.name.as_str(), shared);
        let own_local = d.own_local;
        let depot = d.depot;
        if let Some(why) = d.nvidia_jit_refuses.take() {
            jit_refusals.insert(f.name.as_str(), why);
        }
        if let Some(idx) = funcs[&f.name].index {
            prog.funcs[idx as usize].set_frame(
                (reg_lo, layout.next_reg),
                (pred_lo, layout.next_pred),
                (local_before, layout.local),
                depot,
            );
        }
        ranges.insert(
            f.name.as_str(),
            ((reg_lo, layout.next_reg), (pred_lo, layout.next_pred)),
        );
        if f.entry {
            let max_threads_per_block = f
                .maxntid
                .map(|[x, y, z]| x.saturating_mul(y).saturating_mul(z));
            kernels.push(Kernel {
                name: f.name.clone(),
                params,
                // The bytes the kernel declares (CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES):
                // its variables' offsets start after the reserved region.
                static_shared_bytes: (shared - crate::RESERVED_SHARED).min(u32::MAX as u64) as u32,
                // The kernel's own `.local` variables (its depot, where nvcc puts arrays
                // and spills), as CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES reports them; the
                // executor's frame (call parameters, callees) is larger and its own affair.
                local_bytes_per_thread: align_up(own_local, 16).min(u32::MAX as u64) as u32,
                max_threads_per_block,
                reqntid: f.reqntid,
                registers: layout.next_reg + layout.next_pred - regs_before,
                max_registers: f.maxnreg,
                required_cluster: f.reqnctapercluster,
                explicit_cluster: f.explicitcluster,
                blocks_are_clusters: f.blocksareclusters,
                max_cluster_rank: f.maxclusterrank,
                may_signal_host: false,
                params_stored_through: host_memory::params_stored_through(f),
                nvidia_jit_refuses: None,
                entry_pc: funcs[&f.name].entry,
            });
        }
    }
    let local = align_up(layout.local as u64, 16) as u32;
    calls::mark_recursion(&ast, &mut prog, |n| funcs.get(n).and_then(|f| f.index));
    let calls = call_graph(&ast);
    let signals = host_memory::functions_signalling_host(&ast);
    for k in &mut kernels {
        // Registers of the kernel and of every function it reaches, and the shared
        // memory up to the last variable any of them declares.
        let mut callee_regs = 0;
        let mut shared = u64::from(k.static_shared_bytes) + crate::RESERVED_SHARED;
        let mut todo = vec![k.name.as_str()];
        let mut seen = std::collections::HashSet::new();
        while let Some(f) = todo.pop() {
            if !seen.insert(f) {
                continue;
            }
            if let Some(&(r, p)) = ranges.get(f) {
                callee_regs += if f == k.name {
                    0
                } else {
                    (r.1 - r.0) + (p.1 - p.0)
                };
            }
            shared = shared.max(shared_end.get(f).copied().unwrap_or(0));
            k.may_signal_host |= signals.contains(f);
            // Only the kernel's own body: on the H200 a kernel calling a `.func` whose
            // txq the JIT compiles no code for was found and loaded
            // (ci/explore/txq_module.c, `calls_levels`; its result unused there, so the
            // call may have been optimised away: a used one is not recorded, and the
            // mock stays permissive).
            if f == k.name && k.nvidia_jit_refuses.is_none() {
                k.nvidia_jit_refuses = jit_refusals.get(f).cloned();
            }
            todo.extend(calls.get(f).into_iter().flatten().copied());
        }
        k.registers += callee_regs;
        k.static_shared_bytes = (shared - crate::RESERVED_SHARED).min(u64::from(u32::MAX)) as u32;
    }
    prog.nregs = layout.next_reg;
    prog.npreds = layout.next_pred;
    prog.local_bytes = local;
    prog.module_shared = module_shared as u32;
    Ok(Module {
        version: ast.version,
        target: ast.target,
        kernels,
        globals,
        references,
        program: prog,
        jit: Default::default(),
    })
}

/// Who calls whom, by name.
fn call_graph(ast: &Ast) -> HashMap<&str, Vec<&str>> {
    let mut calls: HashMap<&str, Vec<&str>> = HashMap::new();
    for f in &ast.funcs {
        let Some(body) = &f.body else { continue };
        let callees = calls.entry(f.name.as_str()).or_default();
        for s in body {
            if let Stmt::Inst(i) = s {
                if i.opcode == "call" {
                    if let Some(Opnd::Name(n)) = i.ops.iter().find(|o| matches!(o, Opnd::Name(_))) {
                        callees.push(n.as_str());
                    }
                }
            }
        }
    }
    calls
}

struct FuncDecoder<'a> {
    prog: &'a mut Program,
    layout: &'a mut Layout,
    module_syms: &'a HashMap<String, Sym>,
    /// The module's `.samplerref`s by name (explicit samplers of `tex` and `tld4`).
    samplers: &'a HashMap<String, SamplerRef>,
    /// The module's `.texref`s and `.surfref`s (`istypep` asks which a handle is).
    references: &'a [crate::Reference],
    /// Independent texturing mode: `tex` and `tld4` name a sampler.
    texmode_independent: bool,
    funcs: &'a HashMap<String, FuncInfo>,
    scopes: Vec<HashMap<String, Sym>>,
    /// Labels by the `{ }` block that defines them (0: the body) and name: inline
    /// assembly inlined twice defines its labels twice, each in its own block.
    labels: HashMap<(u32, String), u32>,
    /// The blocks open at the instruction being decoded, innermost last, numbered in
    /// the order they open.
    scope_ids: Vec<u32>,
    next_scope: u32,
    lines: &'a [&'a str],
    shared: u64,
    /// Bytes of `.local` variables this function declares.
    own_local: u64,
    is_kernel: bool,
    /// The `.callprototype`s in scope: bytes of each return value and parameter.
    protos: HashMap<String, (Vec<u32>, Vec<u32>)>,
    /// The `.branchtargets` (labels, as pcs) and `.calltargets` (function names) lists in
    /// scope, by name.
    target_lists: HashMap<String, TargetList>,
    /// The function's index in `Program::funcs`, and the range of local memory its
    /// `.local` variables take (its depot, which a recursive activation relocates).
    func_index: Option<u32>,
    depot: (u32, u32),
    /// Why NVIDIA's JIT makes no code for this function, if it does not (the first
    /// instruction that makes it so): see `Kernel::nvidia_jit_refuses`.
    nvidia_jit_refuses: Option<String>,
}

/// The modifiers of one instruction; each decoder takes those it understands and the
/// rest make the instruction unsupported.
struct Mods {
    list: Vec<String>,
    full: String,
}

impl Mods {
    fn take(&mut self, m: &str) -> bool {
        if let Some(i) = self.list.iter().position(|x| x == m) {
            self.list.remove(i);
            true
        } else {
            false
        }
    }
    fn take_any(&mut self, ms: &[&str]) -> Option<String> {
        let i = self.list.iter().position(|x| ms.contains(&x.as_str()))?;
        Some(self.list.remove(i))
    }
    fn types(&mut self) -> Vec<Ty> {
        let mut v = Vec::new();
        self.list.retain(|m| match Ty::from_name(m) {
            Some(t) => {
                v.push(t);
                false
            }
            None => true,
        });
        v
    }
    fn rnd(&mut self) -> Option<Rnd> {
        Some(match self.take_any(&["rn", "rz", "rm", "rp"])?.as_str() {
            "rn" => Rnd::N,
            "rz" => Rnd::Z,
            "rm" => Rnd::M,
            _ => Rnd::P,
        })
    }
    fn int_rnd(&mut self) -> Option<Rnd> {
        Some(
            match self.take_any(&["rni", "rzi", "rmi", "rpi"])?.as_str() {
                "rni" => Rnd::N,
                "rzi" => Rnd::Z,
                "rmi" => Rnd::M,
                _ => Rnd::P,
            },
        )
    }
    /// Modifiers that change nothing on the host: cache hints, memory ordering (our
    /// memory is sequentially consistent per access), scopes, `.uni`, `.aligned`.
    fn drop_hints(&mut self) {
        const HINTS: &[&str] = &[
            "ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc", "volatile", "relaxed", "acquire",
            "release", "acq_rel", "sc", "weak", "mmio", "cta", "gpu", "sys", "cluster", "uni",
            "aligned",
        ];
        // `.L1::evict_last`, `.L2::256B`...: cache policy, nothing to emulate; but
        // `.L2::cache_hint` takes an operand, so it stays (unsupported).
        self.list.retain(|m| {
            // Only cache levels' hints: another `::` (`.param::entry`) names a state
            // space, which must not pass silently as a generic access.
            let level = m.starts_with("L1::") || m.starts_with("L2::");
            let hint = HINTS.contains(&m.as_str()) || level && m != "L2::cache_hint";
            !hint
        });
    }
}

/// `%r1.b0` as (`%r1`, Some(`b0`)): a video instruction's selector split off a name
/// (`parse::is_video_selector`); any other name whole.
pub(crate) fn split_selector(n: &str) -> (&str, Option<&str>) {
    match n.rsplit_once('.') {
        Some((base, sel)) if crate::parse::is_video_selector(sel) => (base, Some(sel)),
        _ => (n, None),
    }
}

fn unsupported(i: &InstAst, what: impl Into<String>) -> LoadError {
    LoadError::at(i.line, i.column, LoadErrorKind::Unsupported, what)
}

/// A `.b128` register where the instruction takes no 128-bit operand.
fn not_wide(i: &InstAst, name: &str) -> LoadError {
    semantic(
        i,
        format!("`{name}` is a `.b128` register: only `mov`, `ld`, `st` and `atom.cas`/`atom.exch` take one"),
    )
}

fn semantic(i: &InstAst, what: impl Into<String>) -> LoadError {
    LoadError::at(i.line, i.column, LoadErrorKind::Semantic, what)
}

impl FuncDecoder<'_> {
    fn lookup(&self, name: &str) -> Option<Sym> {
        for s in self.scopes.iter().rev() {
            if let Some(v) = s.get(name) {
                return Some(*v);
            }
        }
        self.module_syms.get(name).copied()
    }

    fn declare(&mut self, name: &str, sym: Sym) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), sym);
        }
    }

    fn declare_params(&mut self, f: &FuncAst) -> Result<Vec<Param>, LoadError> {
        let mut params = Vec::new();
        if f.entry {
            let mut off = 0u64;
            for p in &f.params {
                let (size, align) = var_size(p)?;
                off = align_up(off, align as u64);
                self.declare(&p.name, Sym::KParam(off as u32));
                params.push(Param {
                    offset: off as u32,
                    size: size as u32,
                    align,
                });
                off += size;
            }
        } else {
            let info = &self.funcs[&f.name];
            for (p, &(off, _)) in f.params.iter().zip(&info.params) {
                self.declare(&p.name, Sym::Local(off));
            }
            for (p, &(off, _)) in f.rets.iter().zip(&info.rets) {
                self.declare(&p.name, Sym::Local(off));
            }
        }
        Ok(params)
    }

    fn body(&mut self, f: &FuncAst, body: &[Stmt]) -> Result<(), LoadError> {
        let base = self.funcs[&f.name].entry;
        let mut n = 0;
        let (mut open, mut next) = (vec![0u32], 1u32);
        for s in body {
            match s {
                Stmt::Inst(_) => n += 1,
                Stmt::Open => {
                    open.push(next);
                    next += 1;
                }
                Stmt::Close if open.len() > 1 => {
                    open.pop();
                }
                Stmt::Label(l, line, col) => {
                    let block = open.last().copied().unwrap_or(0);
                    if self.labels.insert((block, l.clone()), base + n).is_some() {
                        return Err(LoadError::at(
                            *line,
                            *col,
                            LoadErrorKind::Semantic,
                            format!("label `{l}` defined twice"),
                        ));
                    }
                }
                _ => {}
            }
        }
        for s in body {
            match s {
                Stmt::Open => {
                    self.scopes.push(HashMap::new());
                    self.scope_ids.push(self.next_scope);
                    self.next_scope += 1;
                }
                Stmt::Close => {
                    self.scopes.pop();
                    if self.scope_ids.len() > 1 {
                        self.scope_ids.pop();
                    }
                }
                Stmt::Label(..) => {}
                Stmt::Proto { name, rets, params } => {
                    let sizes = |v: &[VarDecl]| -> Result<Vec<u32>, LoadError> {
                        v.iter()
                            .map(|p| var_size(p).map(|(n, _)| n as u32))
                            .collect()
                    };
                    let sig = (sizes(rets)?, sizes(params)?);
                    self.protos.insert(name.clone(), sig);
                }
                Stmt::Targets {
                    name,
                    calls,
                    list,
                    line,
                    column,
                } => {
                    let at =
                        |what: String| LoadError::at(*line, *column, LoadErrorKind::Semantic, what);
                    let t = if *calls {
                        for f in list {
                            if !self.funcs.contains_key(f) {
                                return Err(at(format!("`{name}` lists `{f}`, not a function")));
                            }
                        }
                        TargetList::Calls(list.clone())
                    } else {
                        let pcs = list
                            .iter()
                            .map(|l| {
                                self.find_label(l)
                                    .ok_or_else(|| at(format!("`{name}` lists `{l}`, not a label")))
                            })
                            .collect::<Result<Vec<u32>, LoadError>>()?;
                        TargetList::Branches(pcs)
                    };
                    self.target_lists.insert(name.clone(), t);
                }
                Stmt::Reg {
                    ty,
                    names,
                    line,
                    column,
                } => {
                    let t = Ty::from_name(ty).ok_or_else(|| {
                        LoadError::at(*line, *column, LoadErrorKind::Syntax, "bad register type")
                    })?;
                    for (name, count) in names {
                        let one = |this: &mut Self, name: &str| {
                            let sym = if t == Ty::Pred {
                                this.layout.next_pred += 1;
                                Sym::Pred(this.layout.next_pred - 1)
                            } else if t == Ty::B128 {
                                this.layout.next_reg += 2;
                                Sym::Wide(this.layout.next_reg - 2)
                            } else {
                                this.layout.next_reg += 1;
                                Sym::Reg(this.layout.next_reg - 1)
                            };
                            this.declare(name, sym);
                            Ok(())
                        };
                        match count {
                            Some(c) => {
                                // Host memory per warp grows with the module's registers.
                                if *c > 1 << 16
                                    || self.layout.next_reg + self.layout.next_pred > 1 << 20
                                {
                                    return Err(LoadError::at(
                                        *line,
                                        *column,
                                        LoadErrorKind::Semantic,
                                        "too many registers",
                                    ));
                                }
                                for k in 0..*c {
                                    one(self, &format!("{name}{k}"))?;
                                }
                            }
                            None => one(self, name)?,
                        }
                    }
                }
                Stmt::Var(v) => {
                    let (size, align) = var_size(v)?;
                    match v.space {
                        VarSpace::Shared => {
                            let off = if v.count.is_none() {
                                // `.extern .shared x[]`: the dynamic shared memory, after
                                // the static; its offset is fixed at launch by the total
                                // static size, which is this kernel's final `shared`.
                                // We place it at a marker resolved below.
                                u64::MAX
                            } else {
                                let o = align_up(self.shared, align as u64);
                                self.shared = o + size;
                                o
                            };
                            self.declare(
                                &v.name,
                                if off == u64::MAX {
                                    Sym::Shared(u32::MAX)
                                } else {
                                    Sym::Shared(off as u32)
                                },
                            );
                        }
                        VarSpace::Local | VarSpace::Param => {
                            if v.space == VarSpace::Local {
                                self.own_local = align_up(self.own_local, align as u64) + size;
                            }
                            let off = align_up(self.layout.local as u64, align as u64);
                            self.layout.local = (off + size).min(u32::MAX as u64) as u32;
                            self.declare(&v.name, Sym::Local(off as u32));
                            if v.space == VarSpace::Local {
                                self.depot.0 = self.depot.0.min(off as u32);
                                self.depot.1 = self.depot.1.max(self.layout.local);
                            }
                        }
                        _ => {
                            return Err(LoadError::at(
                                v.line,
                                v.column,
                                LoadErrorKind::Unsupported,
                                "`.global`/`.const` variables inside functions are not supported",
                            ));
                        }
                    }
                }
                Stmt::Inst(i) => {
                    let inst = self.inst(i)?;
                    let names = self.names(i);
                    let text = self
                        .lines
                        .get(i.line as usize - 1)
                        .map(|l| l.trim().trim_end_matches(';').to_string())
                        .unwrap_or_default();
                    self.prog.insts.push(inst);
                    self.prog.info.push(InstInfo {
                        line: i.line,
                        text,
                        names,
                    });
                }
            }
        }
        // Falling off the end returns (a function) or exits (a kernel).
        self.prog.insts.push(Inst {
            guard: None,
            op: if self.is_kernel { Op::Exit } else { Op::Ret },
        });
        self.prog.info.push(InstInfo {
            line: f.line,
            text: "(end of function)".into(),
            names: Vec::new(),
        });
        Ok(())
    }

    /// The registers and predicates `i` names anywhere in its operands or guard.
    fn names(&self, i: &InstAst) -> Vec<Named> {
        fn walk(d: &FuncDecoder<'_>, o: &Opnd, out: &mut Vec<Named>) {
            let name = match o {
                Opnd::Name(n) | Opnd::Not(n) | Opnd::SymOff(n, _) | Opnd::Addr(Some(n), _) => {
                    split_selector(n).0
                }
                Opnd::Neg(n) => split_selector(n).0,
                Opnd::Image(n, s, inner) => {
                    walk(d, inner, out);
                    if let Some(s) = s {
                        walk(d, &Opnd::Name(s.clone()), out);
                    }
                    n
                }
                Opnd::Vector(v) | Opnd::List(v) => {
                    for x in v {
                        walk(d, x, out);
                    }
                    return;
                }
                Opnd::Pipe(a, b) => {
                    walk(d, a, out);
                    walk(d, b, out);
                    return;
                }
                Opnd::Int(_)
                | Opnd::F32(_)
                | Opnd::F64(_)
                | Opnd::Addr(None, _)
                | Opnd::Sink
                | Opnd::AddrOf { .. } => return,
            };
            let n = match d.lookup(name) {
                Some(Sym::Wide(r)) => {
                    for n in [Named::Reg(r), Named::Reg(r + 1)] {
                        if !out.contains(&n) {
                            out.push(n);
                        }
                    }
                    return;
                }
                Some(Sym::Reg(r)) => Named::Reg(r),
                Some(Sym::Pred(p)) => Named::Pred(p),
                _ => return,
            };
            if !out.contains(&n) {
                out.push(n);
            }
        }
        let mut out = Vec::new();
        if let Some((g, _)) = &i.guard {
            walk(self, &Opnd::Name(g.clone()), &mut out);
        }
        for o in &i.ops {
            walk(self, o, &mut out);
        }
        out
    }

    fn reg(&self, i: &InstAst, o: &Opnd) -> Result<Dst, LoadError> {
        match o {
            Opnd::Sink => Ok(Dst::Sink),
            Opnd::Name(n) => match self.lookup(n) {
                Some(Sym::Reg(r)) => Ok(Dst::Reg(r)),
                Some(Sym::Pred(p)) => Ok(Dst::Pred(p)),
                Some(Sym::Wide(_)) => Err(not_wide(i, n)),
                Some(_) => Err(semantic(i, format!("`{n}` is not a register"))),
                None => Err(semantic(i, format!("undeclared register `{n}`"))),
            },
            _ => Err(semantic(i, "expected a register as destination")),
        }
    }

    fn src(&self, i: &InstAst, o: &Opnd) -> Result<Src, LoadError> {
        Ok(match o {
            Opnd::Int(v) => Src::Imm(*v),
            Opnd::F32(b) => Src::Imm(*b as u64),
            Opnd::F64(b) => Src::Imm(*b),
            Opnd::Not(n) => match self.lookup(n) {
                Some(Sym::Pred(p)) => Src::NotPred(p),
                _ => return Err(semantic(i, format!("`!{n}`: not a predicate"))),
            },
            Opnd::Name(n) => {
                if let Some(s) = sreg(n) {
                    return Ok(Src::Sreg(s));
                }
                // PTX's one predefined constant.
                if n == "WARP_SZ" {
                    return Ok(Src::Imm(32));
                }
                match self.lookup(n) {
                    Some(Sym::Wide(_)) => return Err(not_wide(i, n)),
                    Some(s) => self.sym_src(s, 0),
                    None => match self.funcs.get(n) {
                        // A function's address (`mov.u64 %rd, func;`).
                        Some(f) => match f.index {
                            Some(k) => {
                                Src::Imm(crate::FUNC_WINDOW + u64::from(k) * crate::FUNC_STRIDE)
                            }
                            None => {
                                return Err(unsupported(
                                    i,
                                    format!("the address of `{n}`, which has no body here"),
                                ))
                            }
                        },
                        None => return Err(semantic(i, format!("undeclared name `{n}`"))),
                    },
                }
            }
            Opnd::SymOff(n, off) => match self.lookup(n) {
                Some(s)
                    if !matches!(
                        s,
                        Sym::Reg(_) | Sym::Wide(_) | Sym::Pred(_) | Sym::Reference(_)
                    ) =>
                {
                    self.sym_src(s, *off)
                }
                _ => return Err(semantic(i, format!("`{n}+{off}`: not a variable"))),
            },
            _ => return Err(semantic(i, "unexpected operand")),
        })
    }

    /// A `.b128` destination: its low and high 64-bit registers.
    fn reg128(&self, i: &InstAst, o: &Opnd) -> Result<[Dst; 2], LoadError> {
        match o {
            Opnd::Sink => Ok([Dst::Sink; 2]),
            Opnd::Name(n) => match self.lookup(n) {
                Some(Sym::Wide(r)) => Ok([Dst::Reg(r), Dst::Reg(r + 1)]),
                _ => Err(semantic(i, format!("`{n}` is not a `.b128` register"))),
            },
            _ => Err(semantic(i, "expected a `.b128` register")),
        }
    }

    /// A `.b128` source: a `.b128` register's halves, or an immediate (ptxas takes
    /// integers; one below 2^63 is the same zero- or sign-extended, others are refused).
    fn src128(&self, i: &InstAst, o: &Opnd) -> Result<[Src; 2], LoadError> {
        match o {
            Opnd::Name(n) => match self.lookup(n) {
                Some(Sym::Wide(r)) => Ok([Src::Reg(r), Src::Reg(r + 1)]),
                _ => Err(semantic(i, format!("`{n}` is not a `.b128` register"))),
            },
            Opnd::Int(v) if *v >> 63 == 0 => Ok([Src::Imm(*v), Src::Imm(0)]),
            Opnd::Int(_) => Err(unsupported(
                i,
                "a `.b128` immediate with bit 63 set (its extension to 128 bits is not documented)",
            )),
            _ => Err(semantic(i, "expected a `.b128` register")),
        }
    }

    /// A 64-bit operand that is only a hint (a cache policy): a register of 64 bits or an
    /// immediate.
    fn src64(&self, i: &InstAst, o: &Opnd) -> Result<Src, LoadError> {
        match self.src(i, o)? {
            s @ (Src::Reg(_) | Src::Imm(_)) => Ok(s),
            _ => Err(semantic(i, "a cache policy is a 64-bit register")),
        }
    }

    /// The value of a symbol as an operand: a register's content, a variable's address.
    fn sym_src(&self, s: Sym, off: i64) -> Src {
        match s {
            Sym::Reg(r) | Sym::Wide(r) => Src::Reg(r),
            Sym::Pred(p) => Src::Pred(p),
            Sym::Shared(o) if o == u32::MAX => Src::DynShared(off),
            Sym::Shared(o) => Src::Imm((o as u64).wrapping_add(off as u64)),
            Sym::Local(o) => Src::Imm((o as u64).wrapping_add(off as u64)),
            Sym::KParam(o) => Src::Imm(PARAM_WINDOW + (o as u64).wrapping_add(off as u64)),
            Sym::Global(g) => Src::GlobalVar(g, off),
            Sym::Reference(k) => Src::Imm(crate::Reference::handle(k as usize)),
        }
    }

    /// `[base+off]` as (address operand, offset, space when a variable names it).
    fn addr(&self, i: &InstAst, o: &Opnd) -> Result<(Src, i64, Option<Space>), LoadError> {
        let Opnd::Addr(base, off) = o else {
            return Err(semantic(i, "expected an address `[...]`"));
        };
        let Some(base) = base else {
            return Ok((Src::Imm(0), *off, None));
        };
        match self.lookup(base) {
            Some(Sym::Reg(r)) => Ok((Src::Reg(r), *off, None)),
            Some(Sym::Shared(s)) if s == u32::MAX => {
                Ok((Src::DynShared(0), *off, Some(Space::Shared)))
            }
            Some(Sym::Shared(s)) => Ok((Src::Imm(s as u64), *off, Some(Space::Shared))),
            Some(Sym::Local(s)) => Ok((Src::Imm(s as u64), *off, Some(Space::Local))),
            Some(Sym::KParam(s)) => Ok((Src::Imm(s as u64), *off, Some(Space::KParam))),
            Some(Sym::Global(g)) => Ok((Src::GlobalVar(g, 0), *off, Some(Space::Global))),
            Some(Sym::Pred(_)) => Err(semantic(
                i,
                format!("`{base}` is a predicate, not an address"),
            )),
            Some(Sym::Wide(_)) => Err(not_wide(i, base)),
            Some(Sym::Reference(_)) => Err(semantic(
                i,
                format!(
                    "`{base}` is a texture or surface reference, not an address (`tex`, \
                     `suld`, `sust`, `sured`, `txq` and `suq` name it)"
                ),
            )),
            None => Err(semantic(i, format!("undeclared name `{base}`"))),
        }
    }

    /// The label `name` as the block being decoded sees it: its own or an enclosing
    /// block's, innermost first; else the function's only label of that name.
    fn find_label(&self, name: &str) -> Option<u32> {
        for block in self.scope_ids.iter().rev() {
            if let Some(pc) = self.labels.get(&(*block, name.to_string())) {
                return Some(*pc);
            }
        }
        let mut any = self.labels.iter().filter(|((_, l), _)| l == name);
        match (any.next(), any.next()) {
            (Some((_, pc)), None) => Some(*pc),
            _ => None,
        }
    }

    fn label(&self, i: &InstAst, o: &Opnd) -> Result<u32, LoadError> {
        match o {
            Opnd::Name(n) => self
                .find_label(n)
                .ok_or_else(|| semantic(i, format!("unknown label `{n}`"))),
            _ => Err(semantic(i, "expected a label")),
        }
    }

    fn inst(&mut self, i: &InstAst) -> Result<Inst, LoadError> {
        let guard = match &i.guard {
            None => None,
            Some((p, neg)) => match self.lookup(p) {
                Some(Sym::Pred(idx)) => Some((idx, *neg)),
                _ => {
                    return Err(semantic(
                        i,
                        format!("guard `{p}` is not a predicate register"),
                    ))
                }
            },
        };
        let full = std::iter::once(i.opcode.clone())
            .chain(i.mods.iter().cloned())
            .collect::<Vec<_>>()
            .join(".");
        if let Some(why) = crate::targets::refusal(&i.opcode, &i.mods, i.ops.len()) {
            return Err(unsupported(i, format!("`{full}`: {why}")));
        }
        let mut m = Mods {
            list: i.mods.clone(),
            full: full.clone(),
        };
        let stripped;
        let i = if matches!(i.opcode.as_str(), "ld" | "st" | "atom" | "red")
            && m.take("L2::cache_hint")
        {
            // `.L2::cache_hint`: its cache-policy operand (64 bits, last) is a hint only,
            // which the ISA allows on global accesses (and generic ones reaching global
            // memory: there the policy is simply unused).
            if m.list.iter().any(|x| {
                x.starts_with("shared") || matches!(x.as_str(), "local" | "param" | "const")
            }) {
                return Err(semantic(
                    i,
                    format!("`{full}`: `.L2::cache_hint` is for global memory only"),
                ));
            }
            let Some((last, rest)) = i.ops.split_last() else {
                return Err(semantic(
                    i,
                    "`.L2::cache_hint` needs a cache-policy operand",
                ));
            };
            self.src64(i, last)?;
            stripped = InstAst {
                ops: rest.to_vec(),
                ..i.clone()
            };
            &stripped
        } else {
            i
        };
        let op = self.op(i, &mut m)?;
        if let Some(extra) = m.list.first() {
            return Err(unsupported(
                i,
                format!("unsupported instruction `{}` (modifier `.{extra}`)", m.full),
            ));
        }
        Ok(Inst { guard, op })
    }

    fn nops(&self, i: &InstAst, n: usize) -> Result<(), LoadError> {
        if i.ops.len() != n {
            return Err(semantic(
                i,
                format!("`{}` takes {n} operands, found {}", i.opcode, i.ops.len()),
            ));
        }
        Ok(())
    }

    fn one_type(&self, i: &InstAst, m: &mut Mods) -> Result<Ty, LoadError> {
        let t = m.types();
        match t.as_slice() {
            [t] => Ok(*t),
            _ => Err(semantic(i, format!("`{}` needs exactly one type", m.full))),
        }
    }

    fn alu(&self, i: &InstAst, f: WarpFn, nsrc: usize) -> Result<Op, LoadError> {
        self.nops(i, nsrc + 1)?;
        let d = self.reg(i, &i.ops[0])?;
        let mut s = [Src::Imm(0); 4];
        for (k, slot) in s.iter_mut().enumerate().take(nsrc) {
            *slot = self.src(i, &i.ops[k + 1])?;
        }
        Ok(Op::Alu {
            f,
            d,
            s,
            n: nsrc as u8,
        })
    }

    fn op(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let opc = i.opcode.as_str();
        let unsup = |m: &Mods| unsupported(i, format!("unsupported instruction `{}`", m.full));
        match opc {
            "mov" => {
                let ty = self.one_type(i, m)?;
                self.nops(i, 2)?;
                if ty == Ty::B128 {
                    // `mov.b128 q, {lo, hi}`, `mov.b128 {lo, hi}, q`, `mov.b128 q, r`.
                    let (d, s) = match (&i.ops[0], &i.ops[1]) {
                        (d, Opnd::Vector(p)) if p.len() == 2 => (
                            self.reg128(i, d)?,
                            [self.src(i, &p[0])?, self.src(i, &p[1])?],
                        ),
                        (Opnd::Vector(p), a) if p.len() == 2 => (
                            [self.reg(i, &p[0])?, self.reg(i, &p[1])?],
                            self.src128(i, a)?,
                        ),
                        (Opnd::Vector(_), _) | (_, Opnd::Vector(_)) => {
                            return Err(unsupported(
                                i,
                                "`mov.b128` packs and unpacks two 64-bit halves only",
                            ))
                        }
                        (d, a) => (self.reg128(i, d)?, self.src128(i, a)?),
                    };
                    return Ok(Op::Mov2 { d, s });
                }
                if let Opnd::Vector(parts) = &i.ops[1] {
                    let d = self.reg(i, &i.ops[0])?;
                    let (n, bits) = (parts.len(), ty.bytes() * 8 / parts.len().max(1) as u32);
                    if !(n == 2 || n == 4) || bits < 8 {
                        return Err(semantic(i, "bad vector `mov`"));
                    }
                    let mut ps = [Src::Imm(0); 4];
                    for (k, p) in parts.iter().enumerate() {
                        ps[k] = self.src(i, p)?;
                    }
                    return Ok(Op::Pack {
                        d,
                        parts: ps,
                        n: n as u8,
                        bits: bits as u8,
                    });
                }
                if let Opnd::Vector(parts) = &i.ops[0] {
                    let a = self.src(i, &i.ops[1])?;
                    let (n, bits) = (parts.len(), ty.bytes() * 8 / parts.len().max(1) as u32);
                    if !(n == 2 || n == 4) || bits < 8 {
                        return Err(semantic(i, "bad vector `mov`"));
                    }
                    let mut d = [Dst::Sink; 4];
                    for (k, p) in parts.iter().enumerate() {
                        d[k] = self.reg(i, p)?;
                    }
                    return Ok(Op::Unpack {
                        d,
                        a,
                        n: n as u8,
                        bits: bits as u8,
                    });
                }
                if ty == Ty::Pred {
                    return self.alu(i, math::pred_op("mov").ok_or_else(|| unsup(m))?, 1);
                }
                if let (Some(func), Opnd::Name(n)) = (self.func_index, &i.ops[1]) {
                    if let Some(Sym::Local(off)) = self.lookup(n) {
                        if !self.is_kernel && (self.depot.0..self.depot.1).contains(&off) {
                            return Ok(Op::FrameAddr {
                                d: self.reg(i, &i.ops[0])?,
                                off,
                                func,
                            });
                        }
                    }
                }
                // A label's address has no meaning on the host; a function's is in the
                // function window (`src`).
                if let Opnd::Name(n) = &i.ops[1] {
                    if self.find_label(n).is_some() {
                        return Err(unsupported(
                            i,
                            "taking the address of a label is not supported",
                        ));
                    }
                }
                self.alu(i, math::mov(), 1)
            }
            "add" | "sub" | "mul" | "mad" | "fma" | "div" | "rem" | "min" | "max" | "abs"
            | "neg" | "and" | "or" | "xor" | "not" | "cnot" | "shl" | "shr" | "popc" | "clz"
            | "brev" | "bfind" | "bfe" | "bfi" | "rcp" | "sqrt" | "rsqrt" | "ex2" | "lg2"
            | "sin" | "cos" | "tanh" | "copysign" | "mul24" | "mad24" | "sad" => self.arith(i, m),
            "prmt" => {
                let ty = self.one_type(i, m)?;
                if ty != Ty::B32 {
                    return Err(unsup(m));
                }
                let mode = m.take_any(&["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"]);
                let f = math::prmt(mode.as_deref()).ok_or_else(|| unsup(m))?;
                self.alu(i, f, 3)
            }
            "bmsk" => {
                let clamp = match m.take_any(&["clamp", "wrap"]).as_deref() {
                    Some("clamp") => true,
                    Some(_) => false,
                    None => return Err(unsup(m)),
                };
                if self.one_type(i, m)? != Ty::B32 {
                    return Err(unsup(m));
                }
                self.alu(i, math::bmsk(clamp), 2)
            }
            "szext" => {
                let clamp = match m.take_any(&["clamp", "wrap"]).as_deref() {
                    Some("clamp") => true,
                    Some(_) => false,
                    None => return Err(unsup(m)),
                };
                let signed = match self.one_type(i, m)? {
                    Ty::S32 => true,
                    Ty::U32 => false,
                    _ => return Err(unsup(m)),
                };
                self.alu(i, math::szext(clamp, signed), 2)
            }
            "lop3" => {
                let op = match m.take_any(&["and", "or"]).as_deref() {
                    Some("and") => Some(BoolOp::And),
                    Some(_) => Some(BoolOp::Or),
                    None => None,
                };
                let ty = self.one_type(i, m)?;
                if ty != Ty::B32 {
                    return Err(unsup(m));
                }
                let Some(op) = op else {
                    return self.alu(i, math::lop3(), 4);
                };
                self.nops(i, 6)?;
                let Opnd::Pipe(d, p) = &i.ops[0] else {
                    return Err(semantic(i, format!("`{}` writes `d|p`", m.full)));
                };
                let mut s = [Src::Imm(0); 4];
                for (k, slot) in s.iter_mut().enumerate() {
                    *slot = self.src(i, &i.ops[k + 1])?;
                }
                Ok(Op::Lop3Pred {
                    d: self.reg(i, d)?,
                    p: self.reg(i, p)?,
                    s,
                    op,
                    q: self.src(i, &i.ops[5])?,
                })
            }
            "shf" => {
                let left = match m.take_any(&["l", "r"]).as_deref() {
                    Some("l") => true,
                    Some(_) => false,
                    None => return Err(unsup(m)),
                };
                let clamp = match m.take_any(&["wrap", "clamp"]).as_deref() {
                    Some("clamp") => true,
                    Some(_) => false,
                    None => return Err(unsup(m)),
                };
                if self.one_type(i, m)? != Ty::B32 {
                    return Err(unsup(m));
                }
                self.alu(i, math::shf(left, clamp), 3)
            }
            "isspacep" => {
                let space = m
                    .take_any(&[
                        "shared",
                        "shared::cta",
                        "shared::cluster",
                        "global",
                        "local",
                        "param",
                        "param::entry",
                        "const",
                    ])
                    .map(|s| match s.as_str() {
                        "shared::cta" => "shared".into(),
                        // The kernel's parameters: the window `.param` tests.
                        "param::entry" => "param".into(),
                        _ => s,
                    })
                    .ok_or_else(|| unsup(m))?;
                self.alu(i, math::isspacep(&space).ok_or_else(|| unsup(m))?, 1)
            }
            "selp" => {
                self.one_type(i, m)?;
                self.alu(i, math::selp(), 3)
            }
            "setp" | "set" => self.setp(i, m),
            "testp" => {
                let what = m
                    .take_any(&[
                        "finite",
                        "infinite",
                        "number",
                        "notanumber",
                        "normal",
                        "subnormal",
                    ])
                    .ok_or_else(|| unsup(m))?;
                let ty = self.one_type(i, m)?;
                self.alu(i, math::testp(ty, &what).ok_or_else(|| unsup(m))?, 1)
            }
            "cvt" if m.list.iter().any(|x| x == "pack") => {
                // `cvt.pack.sat.{u16,s16}.s32 d, a, b`, `cvt.pack.sat.{u8,s8}.s32.b32 d,
                // a, b, c` (the ISA's only forms: sources are .s32).
                m.take("pack");
                if !m.take("sat") {
                    return Err(unsupported(i, format!("`{}` needs `.sat`", m.full)));
                }
                let t = m.types();
                let (bits, signed, nsrc) = match t.as_slice() {
                    [Ty::U16, Ty::S32] => (16, false, 2),
                    [Ty::S16, Ty::S32] => (16, true, 2),
                    [Ty::U8, Ty::S32, Ty::B32] => (8, false, 3),
                    [Ty::S8, Ty::S32, Ty::B32] => (8, true, 3),
                    _ => {
                        return Err(unsupported(
                            i,
                            format!(
                                "unsupported instruction `{}` (cvt.pack: .u16/.s16 from .s32, \
                                 or .u8/.s8 from .s32 with a .b32 c)",
                                m.full
                            ),
                        ))
                    }
                };
                self.alu(i, math::cvt_pack_sat(bits, signed), nsrc)
            }
            "cvt" if m.list.iter().any(|x| x == "tf32") => {
                // `cvt.{rna,rn,rz}[.relu][.satfinite].tf32.f32`: an f32 cut to tf32's 19 bits.
                let mode = m.take_any(&["rna", "rn", "rz"]).ok_or_else(|| unsup(m))?;
                let relu = m.take("relu");
                let satfinite = m.take("satfinite");
                // sm_90 has `.satfinite` only with `.rna` (ptxas: rn/rz need sm_100).
                if !m.take("tf32")
                    || !m.take("f32")
                    || (relu && mode == "rna")
                    || (satfinite && mode != "rna")
                {
                    return Err(unsup(m));
                }
                self.alu(i, math::cvt_tf32(&mode, relu, satfinite), 1)
            }
            "cvt" if m.list.iter().any(|x| x == "e4m3x2" || x == "e5m2x2") => {
                // sm_89/sm_90's FP8 pairs (cuda_fp8.h's intrinsics): `.satfinite` is
                // required toward FP8 and absent from it; the first type names d.
                let relu = m.take("relu");
                let satfinite = m.take("satfinite");
                let first = m.list.iter().position(|x| x == "e4m3x2" || x == "e5m2x2");
                let to_fp8 = first < m.list.iter().position(|x| x == "f32" || x == "f16x2");
                let f = match m.take_any(&["e4m3x2", "e5m2x2"]).as_deref() {
                    Some("e4m3x2") => math::Fp8::E4M3,
                    _ => math::Fp8::E5M2,
                };
                if !m.take("rn") || satfinite != to_fp8 {
                    return Err(unsup(m));
                }
                if m.take("f32") && to_fp8 {
                    self.alu(i, math::cvt_f32x2_to_fp8x2(f, relu), 2)
                } else if m.take("f16x2") {
                    if to_fp8 {
                        self.alu(i, math::cvt_f16x2_to_fp8x2(f, relu), 1)
                    } else {
                        self.alu(i, math::cvt_fp8x2_to_f16x2(f, relu), 1)
                    }
                } else {
                    Err(unsup(m))
                }
            }
            "cvt" => {
                let rnd = m.rnd();
                let int_rnd = m.int_rnd();
                let ftz = m.take("ftz");
                let sat = m.take("sat");
                let relu = m.take("relu");
                let satfinite = m.take("satfinite");
                let t = m.types();
                let [dst, src] = t.as_slice() else {
                    return Err(semantic(i, "`cvt` needs two types"));
                };
                if matches!(dst, Ty::F16 | Ty::BF16 | Ty::F16x2 | Ty::BF16x2)
                    && *src == Ty::F32
                    && (relu || satfinite)
                {
                    // `cvt.{rn,rz}{.relu}{.satfinite}.{f16,bf16}{x2}.f32`.
                    if !matches!(rnd, Some(Rnd::N | Rnd::Z)) || sat || ftz || int_rnd.is_some() {
                        return Err(unsup(m));
                    }
                    let x2 = matches!(dst, Ty::F16x2 | Ty::BF16x2);
                    let bf = matches!(dst, Ty::BF16 | Ty::BF16x2);
                    let f = math::cvt_half_from_f32(bf, rnd == Some(Rnd::Z), relu, satfinite, x2);
                    return self.alu(i, f, if x2 { 2 } else { 1 });
                }
                if relu || satfinite {
                    return Err(unsup(m));
                }
                if matches!(dst, Ty::F16x2 | Ty::BF16x2)
                    && *src == Ty::F32
                    && matches!(rnd, Some(Rnd::N | Rnd::Z))
                    && !sat
                    && int_rnd.is_none()
                {
                    if rnd == Some(Rnd::Z) {
                        let f =
                            math::cvt_half_from_f32(*dst == Ty::BF16x2, true, false, false, true);
                        return self.alu(i, f, 2);
                    }
                    // `cvt.rn.f16x2.f32 d, a, b`: a into the upper half, b the lower.
                    return self.alu(i, math::cvt_pack_x2(*dst == Ty::BF16x2), 2);
                }
                if matches!(dst, Ty::F16x2 | Ty::BF16x2 | Ty::Pred | Ty::B128)
                    || matches!(src, Ty::F16x2 | Ty::BF16x2 | Ty::Pred | Ty::B128)
                {
                    return Err(unsup(m));
                }
                let spec = CvtSpec {
                    dst: *dst,
                    src: *src,
                    rnd,
                    int_rnd,
                    ftz,
                    sat,
                };
                self.nops(i, 2)?;
                if let Some(f) = math::cvt_fast(&spec) {
                    return self.alu(i, f, 1);
                }
                let d = self.reg(i, &i.ops[0])?;
                let a = self.src(i, &i.ops[1])?;
                Ok(Op::Cvt { spec, d, a })
            }
            "cvta" => {
                let to = m.take("to");
                let space = m
                    .take_any(&[
                        "global",
                        "shared",
                        "shared::cta",
                        "shared::cluster",
                        "local",
                        "const",
                        "param",
                    ])
                    .ok_or_else(|| unsup(m))?;
                let ty = self.one_type(i, m)?;
                if ty.bytes() != 8 && ty.bytes() != 4 {
                    return Err(unsup(m));
                }
                let base = match space.as_str() {
                    "global" | "const" => 0,
                    // shared::cluster addresses are 32 bits too (the block's own window
                    // lies inside the cluster's: `CLUSTER_RANK_STRIDE`).
                    "shared" | "shared::cta" | "shared::cluster" => SHARED_WINDOW,
                    "local" => LOCAL_WINDOW,
                    _ => PARAM_WINDOW,
                };
                let f: WarpFn = match (base, to) {
                    (0, _) => math::mov(),
                    (SHARED_WINDOW, false) => |o, a, _, _, _| {
                        o.iter_mut()
                            .zip(a)
                            .for_each(|(o, a)| *o = (*a as u32 as u64) + SHARED_WINDOW)
                    },
                    (SHARED_WINDOW, true) => |o, a, _, _, _| {
                        o.iter_mut()
                            .zip(a)
                            .for_each(|(o, a)| *o = a.wrapping_sub(SHARED_WINDOW))
                    },
                    (LOCAL_WINDOW, false) => |o, a, _, _, _| {
                        o.iter_mut()
                            .zip(a)
                            .for_each(|(o, a)| *o = (*a as u32 as u64) + LOCAL_WINDOW)
                    },
                    (LOCAL_WINDOW, true) => |o, a, _, _, _| {
                        o.iter_mut()
                            .zip(a)
                            .for_each(|(o, a)| *o = a.wrapping_sub(LOCAL_WINDOW))
                    },
                    // Kernel parameter symbols already carry the window.
                    _ => math::mov(),
                };
                self.alu(i, f, 1)
            }
            "st" | "red" if m.take("async") => self.store_async(i, m),
            "ld" | "ldu" | "st" => self.ld_st(i, m),
            "tex" | "tld4" | "txq" | "suq" | "suld" | "sust" | "sured" | "istypep" => {
                self.image(i, m)
            }
            "atom" | "red" => self.atom(i, m),
            "brx" => {
                if !m.take("idx") {
                    return Err(unsup(m));
                }
                m.take("uni");
                self.nops(i, 2)?;
                let list = match &i.ops[1] {
                    Opnd::Name(n) => match self.target_lists.get(n) {
                        Some(TargetList::Branches(pcs)) => pcs.clone(),
                        _ => {
                            return Err(semantic(i, format!("`{n}` is not a .branchtargets list")))
                        }
                    },
                    _ => return Err(semantic(i, "`brx.idx` names a .branchtargets list")),
                };
                Ok(Op::BrxIdx {
                    index: self.src(i, &i.ops[0])?,
                    targets: list.into_boxed_slice(),
                })
            }
            "bra" => {
                m.take("uni");
                self.nops(i, 1)?;
                Ok(Op::Bra {
                    target: self.label(i, &i.ops[0])?,
                })
            }
            "ret" => {
                m.take("uni");
                Ok(if self.is_kernel { Op::Exit } else { Op::Ret })
            }
            "exit" => Ok(Op::Exit),
            "trap" => Ok(Op::Trap),
            // Hints and ordering with nothing to emulate: launches already run in order.
            "brkpt" | "nanosleep" | "pmevent" | "griddepcontrol" => {
                m.list.clear();
                Ok(Op::Nop)
            }
            "addc" | "subc" | "madc" => self.carry(i, m),
            "elect" => {
                if !m.take("sync") {
                    return Err(unsup(m));
                }
                self.nops(i, 2)?;
                let (d, p) = match &i.ops[0] {
                    Opnd::Pipe(a, b) => (self.reg(i, a)?, self.reg(i, b)?),
                    o => (self.reg(i, o)?, Dst::Sink),
                };
                Ok(Op::Elect {
                    d,
                    p,
                    mask: self.src(i, &i.ops[1])?,
                })
            }
            "dp4a" => {
                let t = m.types();
                let (sa, sb) = match t.as_slice() {
                    [a, b] if a.bytes() == 4 && b.bytes() == 4 => (a.is_signed(), b.is_signed()),
                    _ => return Err(unsup(m)),
                };
                self.alu(i, math::dp4a(sa, sb), 3)
            }
            "alloca" => {
                let ty = self.one_type(i, m)?;
                if !matches!(ty, Ty::U32 | Ty::U64) {
                    return Err(unsup(m));
                }
                if !(i.ops.len() == 2 || i.ops.len() == 3) {
                    return Err(semantic(
                        i,
                        "`alloca` takes ptr, size and an optional alignment",
                    ));
                }
                let align = match i.ops.get(2) {
                    None => 8,
                    Some(Opnd::Int(a)) if a.is_power_of_two() && *a <= 1 << 23 => *a as u32,
                    Some(_) => {
                        return Err(semantic(
                            i,
                            "`alloca`'s alignment is a constant power of 2, at most 2^23",
                        ))
                    }
                };
                self.prog.uses_alloca = true;
                Ok(Op::Alloca {
                    d: self.reg(i, &i.ops[0])?,
                    size: self.src(i, &i.ops[1])?,
                    // The stack's own alignment (8) is the least (`frame_align`).
                    align: align.max(8),
                })
            }
            "stacksave" | "stackrestore" => {
                let ty = self.one_type(i, m)?;
                if !matches!(ty, Ty::U32 | Ty::U64) {
                    return Err(unsup(m));
                }
                self.nops(i, 1)?;
                self.prog.uses_alloca = true;
                if opc == "stacksave" {
                    Ok(Op::StackSave {
                        d: self.reg(i, &i.ops[0])?,
                    })
                } else {
                    Ok(Op::StackRestore {
                        a: self.src(i, &i.ops[0])?,
                    })
                }
            }
            "setmaxnreg" => {
                if m.take_any(&["inc", "dec"]).is_none() || !m.take("sync") || !m.take("aligned") {
                    return Err(unsupported(
                        i,
                        format!("`{}`: setmaxnreg is .inc or .dec, .sync.aligned", m.full),
                    ));
                }
                if self.one_type(i, m)? != Ty::U32 {
                    return Err(unsup(m));
                }
                self.nops(i, 1)?;
                match &i.ops[0] {
                    Opnd::Int(n) if (24..=256).contains(n) && n % 8 == 0 => Ok(Op::SetMaxNreg),
                    _ => Err(semantic(
                        i,
                        "setmaxnreg's register count is a constant from 24 to 256, a multiple of 8",
                    )),
                }
            }
            "dp2a" => {
                let hi = match m.take_any(&["lo", "hi"]).as_deref() {
                    Some("hi") => true,
                    Some(_) => false,
                    None => return Err(unsup(m)),
                };
                let t = m.types();
                let (sa, sb) = match t.as_slice() {
                    [a @ (Ty::U32 | Ty::S32), b @ (Ty::U32 | Ty::S32)] => {
                        (a.is_signed(), b.is_signed())
                    }
                    _ => return Err(unsup(m)),
                };
                self.alu(i, math::dp2a(sa, sb, hi), 3)
            }
            "fns" => {
                if self.one_type(i, m)? != Ty::B32 {
                    return Err(unsup(m));
                }
                self.alu(i, math::fns(), 3)
            }
            "slct" => {
                let ftz = m.take("ftz");
                let t = m.types();
                let float_c = match t.as_slice() {
                    [d, Ty::S32] if !ftz && *d != Ty::Pred && d.bytes() >= 2 && d.bytes() <= 8 => {
                        false
                    }
                    [d, Ty::F32] if *d != Ty::Pred && d.bytes() >= 2 && d.bytes() <= 8 => true,
                    _ => return Err(unsup(m)),
                };
                if matches!(t[0], Ty::F16 | Ty::BF16 | Ty::F16x2 | Ty::BF16x2) {
                    return Err(unsup(m));
                }
                self.alu(i, math::slct(float_c, ftz), 3)
            }
            "vadd" | "vsub" | "vabsdiff" | "vmin" | "vmax" | "vshl" | "vshr" | "vmad" | "vset"
            | "vadd2" | "vsub2" | "vavrg2" | "vabsdiff2" | "vmin2" | "vmax2" | "vset2"
            | "vadd4" | "vsub4" | "vavrg4" | "vabsdiff4" | "vmin4" | "vmax4" | "vset4" => {
                self.video(i, m)
            }
            "call" => self.call(i, m),
            "membar" | "fence" => {
                m.list.clear();
                Ok(Op::Nop)
            }
            // Cache management: no cache here, and the data stay as they are.
            "prefetch" | "prefetchu" | "discard" | "applypriority" => {
                m.list.clear();
                Ok(Op::Nop)
            }
            "createpolicy" => self.createpolicy(i, m),
            "bar" | "barrier" => self.bar(i, m),
            "mapa" => {
                // `mapa{.shared::cluster}.type d, a, rank`: the address of `a` in the
                // shared memory of block `rank` of the cluster.
                let cluster = m.take("shared::cluster");
                let ty = self.one_type(i, m)?;
                if !matches!(ty, Ty::U32 | Ty::U64 | Ty::B32 | Ty::B64) {
                    return Err(unsup(m));
                }
                let f: WarpFn = if cluster {
                    |o, a, b, _, _| {
                        o.iter_mut().zip(a.iter().zip(b)).for_each(|(o, (a, b))| {
                            *o = crate::cluster_address(*b as u32, *a) & 0xffff_ffff
                        })
                    }
                } else {
                    |o, a, b, _, _| {
                        o.iter_mut().zip(a.iter().zip(b)).for_each(|(o, (a, b))| {
                            *o = SHARED_WINDOW
                                + crate::cluster_address(*b as u32, a.wrapping_sub(SHARED_WINDOW))
                        })
                    }
                };
                self.alu(i, f, 2)
            }
            "getctarank" => {
                let generic = !m.take("shared::cluster");
                let ty = self.one_type(i, m)?;
                if !matches!(ty, Ty::U32 | Ty::U64 | Ty::B32 | Ty::B64) {
                    return Err(unsup(m));
                }
                self.nops(i, 2)?;
                Ok(Op::GetCtaRank {
                    d: self.reg(i, &i.ops[0])?,
                    a: self.src(i, &i.ops[1])?,
                    generic,
                })
            }
            "shfl" => {
                m.take("sync");
                let mode = match m.take_any(&["up", "down", "bfly", "idx"]).as_deref() {
                    Some("up") => ShflMode::Up,
                    Some("down") => ShflMode::Down,
                    Some("bfly") => ShflMode::Bfly,
                    Some("idx") => ShflMode::Idx,
                    _ => return Err(unsup(m)),
                };
                if self.one_type(i, m)? != Ty::B32 {
                    return Err(unsup(m));
                }
                if !m.full.contains(".sync") {
                    return Err(unsupported(
                        i,
                        "`shfl` without `.sync` (pre-Volta) is not supported",
                    ));
                }
                self.nops(i, 5)?;
                let (d, p) = match &i.ops[0] {
                    Opnd::Pipe(a, b) => (self.reg(i, a)?, self.reg(i, b)?),
                    o => (self.reg(i, o)?, Dst::Sink),
                };
                Ok(Op::Shfl {
                    mode,
                    d,
                    p,
                    a: self.src(i, &i.ops[1])?,
                    b: self.src(i, &i.ops[2])?,
                    c: self.src(i, &i.ops[3])?,
                    _mask: self.src(i, &i.ops[4])?,
                })
            }
            "vote" => {
                if !m.take("sync") {
                    return Err(unsupported(i, "`vote` without `.sync` is not supported"));
                }
                let mode = match m.take_any(&["all", "any", "uni", "ballot"]).as_deref() {
                    Some("all") => VoteMode::All,
                    Some("any") => VoteMode::Any,
                    Some("uni") => VoteMode::Uni,
                    Some("ballot") => VoteMode::Ballot,
                    _ => return Err(unsup(m)),
                };
                self.one_type(i, m)?;
                self.nops(i, 3)?;
                Ok(Op::Vote {
                    mode,
                    d: self.reg(i, &i.ops[0])?,
                    a: self.src(i, &i.ops[1])?,
                    mask: self.src(i, &i.ops[2])?,
                })
            }
            "activemask" => {
                self.one_type(i, m)?;
                self.nops(i, 1)?;
                Ok(Op::Activemask {
                    d: self.reg(i, &i.ops[0])?,
                })
            }
            "match" => {
                m.take("sync");
                let all = match m.take_any(&["any", "all"]).as_deref() {
                    Some("all") => true,
                    Some("any") => false,
                    _ => return Err(unsup(m)),
                };
                let ty = self.one_type(i, m)?;
                self.nops(i, 3)?;
                let (d, p) = match &i.ops[0] {
                    Opnd::Pipe(a, b) => (self.reg(i, a)?, self.reg(i, b)?),
                    o => (self.reg(i, o)?, Dst::Sink),
                };
                Ok(Op::Match {
                    all,
                    wide: ty.bytes() == 8,
                    d,
                    p,
                    a: self.src(i, &i.ops[1])?,
                    mask: self.src(i, &i.ops[2])?,
                })
            }
            "redux" => {
                m.take("sync");
                let op = match m
                    .take_any(&["add", "min", "max", "and", "or", "xor"])
                    .as_deref()
                {
                    Some("add") => ReduxOp::Add,
                    Some("min") => ReduxOp::Min,
                    Some("max") => ReduxOp::Max,
                    Some("and") => ReduxOp::And,
                    Some("or") => ReduxOp::Or,
                    Some("xor") => ReduxOp::Xor,
                    _ => return Err(unsup(m)),
                };
                let ty = self.one_type(i, m)?;
                if ty.bytes() != 4 || ty.is_float() {
                    return Err(unsup(m));
                }
                self.nops(i, 3)?;
                Ok(Op::Redux {
                    op,
                    signed: ty.is_signed(),
                    d: self.reg(i, &i.ops[0])?,
                    a: self.src(i, &i.ops[1])?,
                    mask: self.src(i, &i.ops[2])?,
                })
            }
            "mma" => self.mma(i, m, mma::Form::Mma),
            "wmma" => match m.take_any(&["load", "store", "mma"]).as_deref() {
                Some("mma") => self.mma(i, m, mma::Form::Wmma),
                Some("load") => self.wmma_mem(i, m, false),
                Some("store") => self.wmma_mem(i, m, true),
                _ => Err(unsup(m)),
            },
            "wgmma" => self.wgmma(i, m),
            "ldmatrix" | "stmatrix" => self.ldst_matrix(i, m),
            "cp" => self.async_copy(i, m),
            "mbarrier" => self.mbarrier(i, m),
            "tensormap" => self.tensormap(i, m),
            "movmatrix" => {
                for x in ["sync", "aligned", "m8n8", "trans", "b16"] {
                    if !m.take(x) {
                        return Err(unsup(m));
                    }
                }
                self.nops(i, 2)?;
                Ok(Op::Movmatrix {
                    d: self.reg(i, &i.ops[0])?,
                    a: self.src(i, &i.ops[1])?,
                })
            }
            _ => Err(unsupported(
                i,
                format!("unsupported instruction `{}`", m.full),
            )),
        }
    }

    /// `{r0, r1, ...}` with exactly `n` registers.
    fn reg_vector(
        &self,
        i: &InstAst,
        o: &Opnd,
        n: usize,
        what: &str,
    ) -> Result<Vec<Dst>, LoadError> {
        let parts: Vec<&Opnd> = match o {
            Opnd::Vector(v) => v.iter().collect(),
            o => vec![o],
        };
        if parts.len() != n {
            return Err(semantic(
                i,
                format!("{what} takes {n} registers, found {}", parts.len()),
            ));
        }
        parts.iter().map(|p| self.reg(i, p)).collect()
    }

    fn src_vector(
        &self,
        i: &InstAst,
        o: &Opnd,
        n: usize,
        what: &str,
    ) -> Result<Vec<Src>, LoadError> {
        let parts: Vec<&Opnd> = match o {
            Opnd::Vector(v) => v.iter().collect(),
            o => vec![o],
        };
        if parts.len() != n {
            return Err(semantic(
                i,
                format!("{what} takes {n} registers, found {}", parts.len()),
            ));
        }
        parts.iter().map(|p| self.src(i, p)).collect()
    }

    /// The first modifier `parse` understands, taken.
    fn take_parsed<T>(m: &mut Mods, parse: impl Fn(&str) -> Option<T>) -> Option<T> {
        let k = m.list.iter().position(|x| parse(x).is_some())?;
        parse(&m.list.remove(k))
    }

    /// The `.sync.aligned` every warp-level matrix instruction needs.
    fn sync_aligned(m: &mut Mods) -> bool {
        m.take("sync") & m.take("aligned")
    }

    /// The state space of a matrix access: `.shared{::cta}`, `.global`, or generic.
    fn matrix_space(m: &mut Mods) -> Option<Space> {
        Some(
            match m
                .take_any(&["shared", "shared::cta", "global", "shared::cluster"])
                .as_deref()
            {
                Some("shared" | "shared::cta") => Space::Shared,
                Some("global") => Space::Global,
                Some(_) => return None,
                None => Space::Generic,
            },
        )
    }

    /// `mma.sync.aligned.SHAPE.row.col[.satfinite].D.A.B.C[.xor.popc]`,
    /// `mma.sp{::ordered_metadata}.sync.aligned.SHAPE.row.col[.satfinite].D.A.B.C d, a,
    /// b, c, e, f` (metadata `e`, selector `f`) and
    /// `wmma.mma.sync.aligned.LAYOUTS.SHAPE.D[.A.B].C[.rn][.satfinite]`.
    fn mma(&mut self, i: &InstAst, m: &mut Mods, form: mma::Form) -> Result<Op, LoadError> {
        let unsup = |m: &Mods| unsupported(i, format!("unsupported instruction `{}`", m.full));
        // `::ordered_metadata` asks that each chunk's two indices be in increasing
        // order; plain `.sp` does not, and places the elements by the same indices.
        let sparse = form == mma::Form::Mma && (m.take("sp") | m.take("sp::ordered_metadata"));
        if !Self::sync_aligned(m) {
            return Err(unsup(m));
        }
        let shape = Self::take_parsed(m, mma::Shape::from_name).ok_or_else(|| unsup(m))?;
        // mma: A row-major and B column-major, the only layouts of sm_80's shapes; wmma:
        // any, the fragments are the same (`mma`'s module comment), but for the sub-byte
        // shapes, which have row.col only.
        let (la, lb) = (
            m.take_any(&["row", "col"]).ok_or_else(|| unsup(m))?,
            m.take_any(&["row", "col"]).ok_or_else(|| unsup(m))?,
        );
        let sub_byte = form == mma::Form::Wmma && shape.k >= 32;
        // m8n8k4 of f16 (sm_70's quad pairs) takes either layout for A and B.
        let quad_pair = form == mma::Form::Mma
            && !sparse
            && shape == (mma::Shape { m: 8, n: 8, k: 4 })
            && m.list.iter().any(|x| x == "f16");
        if (form == mma::Form::Mma && !quad_pair || sub_byte) && (la != "row" || lb != "col") {
            return Err(unsup(m));
        }
        let satfinite = m.take("satfinite");
        let xor = m.take("xor");
        let and = m.take("and");
        let popc = m.take("popc");
        // f64 wmma names its rounding: only .rn exists.
        let _ = m.take("rn");
        let mut types = Vec::new();
        m.list.retain(|x| match mma::Elem::from_name(x) {
            Some(e) => {
                types.push(e);
                false
            }
            None => true,
        });
        let types = match types.as_slice() {
            [d, a, b, c] => [*d, *a, *b, *c],
            // wmma's f16: only D and C are named.
            [d, c] if form == mma::Form::Wmma => [*d, mma::Elem::F16, mma::Elem::F16, *c],
            _ => return Err(unsup(m)),
        };
        if (types[1] == mma::Elem::B1) != (popc && (xor ^ and)) {
            return Err(unsup(m));
        }
        let (spec, meta) = if sparse {
            self.nops(i, 6)?;
            let sel = match i.ops[5] {
                Opnd::Int(v) if (0..4).contains(&v) => v as u8,
                _ => {
                    return Err(semantic(
                        i,
                        "`mma.sp`'s sparsity selector must be an integer constant 0..=3",
                    ))
                }
            };
            let spec = mma::MmaSpec::sparse(shape, types, satfinite, sel)
                .map_err(|e| unsupported(i, format!("`{}`: {e}", m.full)))?;
            (spec, Some(self.src(i, &i.ops[4])?))
        } else if quad_pair {
            self.nops(i, 4)?;
            let spec = mma::MmaSpec::quad_pair(types, la == "col", lb == "col")
                .filter(|_| !satfinite)
                .ok_or_else(|| unsup(m))?;
            (spec, None)
        } else {
            self.nops(i, 4)?;
            let spec =
                mma::MmaSpec::new(form, shape, types, satfinite, xor).ok_or_else(|| unsup(m))?;
            (spec, None)
        };
        Ok(Op::Mma(Box::new(MmaOp {
            d: self.reg_vector(i, &i.ops[0], spec.d.regs(), "D")?,
            a: self.src_vector(i, &i.ops[1], spec.a.regs(), "A")?,
            b: self.src_vector(i, &i.ops[2], spec.b.regs(), "B")?,
            c: self.src_vector(i, &i.ops[3], spec.c.regs(), "C")?,
            meta,
            spec,
        })))
    }

    /// `wgmma.fence`, `wgmma.commit_group`, `wgmma.wait_group N` (all `.sync.aligned`), and
    /// `wgmma.mma_async{.sp}.sync.aligned.m64nNkK[.satfinite].D.A.B[.and.popc] d, a, b-desc,
    /// {sp-meta, sp-sel,} scale-d[, imm-scale-a, imm-scale-b[, imm-trans-a], imm-trans-b]`. The fence and the
    /// group instructions do nothing here: an `mma_async` completes when the fourth warp
    /// of its warpgroup issues it (`executor/matrix.rs`), so there is nothing to wait for.
    fn wgmma(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let unsup = |m: &Mods| unsupported(i, format!("unsupported instruction `{}`", m.full));
        let what = m.take_any(&["fence", "commit_group", "wait_group", "mma_async"]);
        let sparse = what.as_deref() == Some("mma_async") && m.take("sp");
        if !Self::sync_aligned(m) {
            return Err(unsup(m));
        }
        match what.as_deref() {
            Some("fence" | "commit_group") => {
                self.nops(i, 0)?;
                return Ok(Op::Nop);
            }
            Some("wait_group") => {
                self.nops(i, 1)?;
                if !matches!(i.ops[0], Opnd::Int(_)) {
                    return Err(semantic(i, "`wgmma.wait_group` takes an integer constant"));
                }
                return Ok(Op::Nop);
            }
            Some("mma_async") => {}
            _ => return Err(unsup(m)),
        }
        let shape = Self::take_parsed(m, mma::Shape::from_name).ok_or_else(|| unsup(m))?;
        let satfinite = m.take("satfinite");
        let popc = m.take("and") & m.take("popc");
        let mut types = Vec::new();
        m.list.retain(|x| match mma::Elem::from_name(x) {
            Some(e) => {
                types.push(e);
                false
            }
            None => true,
        });
        let [d, a, b] = types[..] else {
            return Err(unsup(m));
        };
        if (a == mma::Elem::B1) != popc {
            return Err(unsup(m));
        }
        let arith = if sparse {
            crate::wgmma::WgmmaSpec::sparse_arith(shape, [d, a, b], satfinite)
        } else {
            crate::wgmma::WgmmaSpec::arith(shape, [d, a, b], satfinite)
        }
        .ok_or_else(|| unsup(m))?;
        // `.sp` adds the metadata and the selector after B: the rest move two on.
        let sp = if sparse { 2 } else { 0 };
        // Immediates by type: f16 and bf16 scale and transpose; tf32 and FP8 scale;
        // integers and b1 neither. An A in registers has no imm-trans-a.
        let (scales, transposes) = match a {
            mma::Elem::F16 | mma::Elem::BF16 => (true, true),
            mma::Elem::TF32 | mma::Elem::E4M3 | mma::Elem::E5M2 => (true, false),
            _ => (false, false),
        };
        let a_in_regs = matches!(i.ops.get(1), Some(Opnd::Vector(_)));
        let n_ops = 4
            + sp
            + if scales { 2 } else { 0 }
            + match (transposes, a_in_regs) {
                (false, _) => 0,
                (true, true) => 1,
                (true, false) => 2,
            };
        self.nops(i, n_ops)?;
        let imm = |k: usize, what: &str, allowed: &[i64]| -> Result<i64, LoadError> {
            match i.ops[k] {
                Opnd::Int(v) if allowed.contains(&(v as i64)) => Ok(v as i64),
                _ => Err(semantic(
                    i,
                    format!("`wgmma.mma_async`'s {what} must be one of {allowed:?}"),
                )),
            }
        };
        let (mut negate_a, mut negate_b, mut trans_a, mut trans_b) = (false, false, false, false);
        if scales {
            negate_a = imm(4 + sp, "imm-scale-a", &[1, -1])? == -1;
            negate_b = imm(5 + sp, "imm-scale-b", &[1, -1])? == -1;
        }
        if transposes {
            if !a_in_regs {
                trans_a = imm(6 + sp, "imm-trans-a", &[0, 1])? == 1;
            }
            trans_b = imm(n_ops - 1, "imm-trans-b", &[0, 1])? == 1;
        }
        // The selector: 0 or 1 (a thread pair) for 16- and 32-bit A, 0 for 8-bit A (every
        // thread contributes); the PTX ISA leaves other values undefined.
        let selector = if sparse {
            let allowed: &[i64] = if a.bits() == 8 { &[0] } else { &[0, 1] };
            Some(imm(4, "sp-sel", allowed)? as u8)
        } else {
            None
        };
        let spec = crate::wgmma::WgmmaSpec {
            n: shape.n,
            k: shape.k,
            arith,
            a_in_regs,
            negate_a,
            negate_b,
            trans_a,
            trans_b,
            sparse: selector,
        };
        let a = if a_in_regs {
            self.src_vector(i, &i.ops[1], spec.a_frag().regs(), "A")?
        } else {
            vec![self.src(i, &i.ops[1])?]
        };
        Ok(Op::Wgmma(Box::new(WgmmaOp {
            d: self.reg_vector(i, &i.ops[0], spec.d_regs(), "D")?,
            c: self.src_vector(i, &i.ops[0], spec.d_regs(), "D")?,
            a,
            b: self.src(i, &i.ops[2])?,
            meta: if sparse {
                Some(self.src(i, &i.ops[3])?)
            } else {
                None
            },
            scale_d: self.src(i, &i.ops[3 + sp])?,
            spec,
        })))
    }

    /// `wmma.load.{a,b,c}.sync.aligned.LAYOUT.SHAPE[.SPACE].TYPE r, [p][, stride]` and
    /// `wmma.store.d.sync.aligned.LAYOUT.SHAPE[.SPACE].TYPE [p], r[, stride]`.
    fn wmma_mem(&mut self, i: &InstAst, m: &mut Mods, store: bool) -> Result<Op, LoadError> {
        let unsup = |m: &Mods| unsupported(i, format!("unsupported instruction `{}`", m.full));
        let role = match m.take_any(&["a", "b", "c", "d"]).as_deref() {
            Some("a") if !store => mma::Role::A,
            Some("b") if !store => mma::Role::B,
            Some("c") if !store => mma::Role::C,
            Some("d") if store => mma::Role::C,
            _ => return Err(unsup(m)),
        };
        if !Self::sync_aligned(m) {
            return Err(unsup(m));
        }
        let row_major = m.take_any(&["row", "col"]).ok_or_else(|| unsup(m))? == "row";
        let space = Self::matrix_space(m).ok_or_else(|| unsup(m))?;
        let shape = Self::take_parsed(m, mma::Shape::from_name).ok_or_else(|| unsup(m))?;
        let elem = Self::take_parsed(m, mma::Elem::from_name).ok_or_else(|| unsup(m))?;
        let frag = mma::Frag::new(mma::Form::Wmma, shape, role, elem).ok_or_else(|| unsup(m))?;
        // The sub-byte shapes load A row-major and B column-major only.
        let sub_byte = elem.bits() < 8;
        if sub_byte && (role == mma::Role::A) != row_major && role != mma::Role::C {
            return Err(unsup(m));
        }
        if !matches!(i.ops.len(), 2 | 3) {
            return Err(semantic(i, "`wmma` load/store takes 2 or 3 operands"));
        }
        let (addr_op, regs_op) = if store {
            (&i.ops[0], &i.ops[1])
        } else {
            (&i.ops[1], &i.ops[0])
        };
        let (addr, off, sym_space) = self.addr(i, addr_op)?;
        let space = match (space, sym_space) {
            (Space::Generic, Some(s)) => s,
            (s, _) => s,
        };
        if !matches!(space, Space::Global | Space::Shared | Space::Generic) {
            return Err(unsup(m));
        }
        let stride = match i.ops.get(2) {
            Some(o) => Some(self.src(i, o)?),
            None => None,
        };
        let n = frag.regs();
        Ok(if store {
            Op::WmmaStore(Box::new(WmmaMem {
                frag,
                row_major,
                space,
                regs: self.src_vector(i, regs_op, n, "the fragment")?,
                addr,
                off,
                stride,
            }))
        } else {
            Op::WmmaLoad(Box::new(WmmaMem {
                frag,
                row_major,
                space,
                regs: self.reg_vector(i, regs_op, n, "the fragment")?,
                addr,
                off,
                stride,
            }))
        })
    }

    /// `ldmatrix`/`stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans][.shared{::cta}].b16`.
    fn ldst_matrix(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let unsup = |m: &Mods| unsupported(i, format!("unsupported instruction `{}`", m.full));
        let store = i.opcode == "stmatrix";
        if !Self::sync_aligned(m) || !m.take("m8n8") || !m.take("b16") {
            return Err(unsup(m));
        }
        let n = match m.take_any(&["x1", "x2", "x4"]).as_deref() {
            Some("x1") => 1,
            Some("x2") => 2,
            Some("x4") => 4,
            _ => return Err(unsup(m)),
        };
        let trans = m.take("trans");
        let space = Self::matrix_space(m).ok_or_else(|| unsup(m))?;
        if space == Space::Global {
            return Err(unsup(m));
        }
        self.nops(i, 2)?;
        let (addr_op, regs_op) = if store {
            (&i.ops[0], &i.ops[1])
        } else {
            (&i.ops[1], &i.ops[0])
        };
        let (addr, off, sym_space) = self.addr(i, addr_op)?;
        let space = match (space, sym_space) {
            (Space::Generic, Some(s)) => s,
            (s, _) => s,
        };
        Ok(if store {
            let mut v = [Src::Imm(0); 4];
            for (k, s) in self
                .src_vector(i, regs_op, n, "`stmatrix`")?
                .into_iter()
                .enumerate()
            {
                v[k] = s;
            }
            Op::Stmatrix {
                n: n as u8,
                trans,
                space,
                v,
                addr,
                off,
            }
        } else {
            let mut d = [Dst::Sink; 4];
            for (k, r) in self
                .reg_vector(i, regs_op, n, "`ldmatrix`")?
                .into_iter()
                .enumerate()
            {
                d[k] = r;
            }
            Op::Ldmatrix {
                n: n as u8,
                trans,
                space,
                d,
                addr,
                off,
            }
        })
    }

    fn arith(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let opc = i.opcode.as_str();
        let unsup = |m: &Mods| unsupported(i, format!("unsupported instruction `{}`", m.full));
        // sm_90's packed 16-bit integers (`add`, `min`/`max{.relu}` of `.u16x2`/`.s16x2`)
        // and `min`/`max.relu.s32`; other modifiers stay and are refused.
        let packed = m.take_any(&["u16x2", "s16x2"]);
        if packed.is_some()
            || m.list.iter().any(|x| x == "relu") && m.list.iter().any(|x| x == "s32")
        {
            let relu = m.take("relu");
            let ty = match packed.as_deref() {
                Some("u16x2") => "u16x2",
                Some(_) => "s16x2",
                None => {
                    m.take("s32");
                    "s32"
                }
            };
            let f = math::packed_int_op(opc, ty, relu).ok_or_else(|| unsup(m))?;
            return self.alu(i, f, 2);
        }
        let rnd = m.rnd();
        let ftz = m.take("ftz");
        let sat = m.take("sat");
        let approx = m.take("approx");
        let full = m.take("full");
        let nan = m.take("NaN");
        let width = m.take_any(&["lo", "hi", "wide"]);
        let shiftamt = m.take("shiftamt");
        if m.list.iter().any(|x| x == "cc") {
            m.list.extend(width);
            return self.carry(i, m);
        }
        let relu = m.take("relu");
        // `fma.rn.oob{.relu}` of the half formats (sm_90): the ISA's syntax has no `.ftz`
        // or `.sat` with it, and `.rn` only.
        if m.take("oob") {
            let ty = self.one_type(i, m)?;
            if opc != "fma" || rnd != Some(Rnd::N) || ftz || sat || approx || full {
                return Err(unsup(m));
            }
            let f = math::fma_oob(ty, relu).ok_or_else(|| unsup(m))?;
            return self.alu(i, f, 3);
        }
        // `.xorsign.abs` (together, as the ISA requires) on min/max of halves and f32.
        let xorsign = m.take("xorsign");
        if xorsign || m.list.iter().any(|x| x == "abs") {
            let ty = self.one_type(i, m)?;
            let both = xorsign && m.take("abs");
            if !both || !matches!(opc, "min" | "max") || relu || sat {
                return Err(unsup(m));
            }
            if rnd.is_some() || approx || full || width.is_some() || shiftamt {
                return Err(unsup(m));
            }
            let f = math::xorsign_minmax(opc == "max", nan, ftz, ty).ok_or_else(|| unsup(m))?;
            return self.alu(i, f, 2);
        }
        let ty = self.one_type(i, m)?;
        // `.relu` is the half formats' fma (and min/max, not emulated yet).
        let half = matches!(ty, Ty::F16 | Ty::F16x2 | Ty::BF16 | Ty::BF16x2);
        if relu && !(opc == "fma" && half) {
            return Err(unsup(m));
        }
        let nsrc = match opc {
            "abs" | "neg" | "not" | "cnot" | "popc" | "clz" | "brev" | "bfind" | "rcp" | "sqrt"
            | "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh" => 1,
            "mad" | "fma" | "bfe" | "mad24" | "sad" => 3,
            "bfi" => 4,
            _ => 2,
        };
        let f = if ty == Ty::Pred {
            math::pred_op(opc)
        } else if ty.is_float() {
            if width.is_some() || shiftamt {
                return Err(unsup(m));
            }
            let fm = FMods { rnd, ftz, sat };
            let name = match opc {
                "div" if approx => "div.approx".to_string(),
                "div" if full => "div.full".to_string(),
                "min" | "max" if nan => format!("{opc}.NaN"),
                "fma" if relu => "fma.relu".to_string(),
                _ if approx => format!("{opc}.approx"),
                _ => opc.to_string(),
            };
            // Ops whose precise form needs a rounding mode in PTX.
            if matches!(opc, "rcp" | "sqrt") && !approx && rnd.is_none() {
                return Err(semantic(
                    i,
                    format!("`{}` needs `.approx` or a rounding mode", m.full),
                ));
            }
            match ty {
                Ty::F32 => math::f32_op(&name, fm),
                Ty::F64 => math::f64_op(&name, fm),
                Ty::F16 | Ty::F16x2 | Ty::BF16 | Ty::BF16x2 if matches!(opc, "min" | "max") => {
                    if rnd.is_some() || sat {
                        return Err(unsup(m));
                    }
                    math::half_minmax(opc == "max", nan, ftz, ty)
                }
                // `.sat` and `.ftz` of the f16 arithmetic (rounding to nearest).
                Ty::F16 | Ty::F16x2
                    if (sat || ftz)
                        && matches!(name.as_str(), "add" | "sub" | "mul" | "fma" | "fma.relu") =>
                {
                    if rnd.is_some_and(|r| r != Rnd::N) {
                        return Err(unsup(m));
                    }
                    math::half_ftz_sat_op(&name, ty, ftz, sat)
                }
                Ty::F16 | Ty::F16x2 | Ty::BF16 | Ty::BF16x2 if sat => None,
                Ty::F16 | Ty::F16x2 | Ty::BF16 | Ty::BF16x2 => math::half_op(&name, ty, fm),
                _ => None,
            }
        } else {
            if rnd.is_some() || ftz || approx || full {
                return Err(unsup(m));
            }
            if opc == "mul24" || opc == "mad24" {
                let w = width.as_deref().unwrap_or("lo");
                // `.sat` is only `mad24.hi.sat.s32`'s.
                let name = format!("{opc}.{w}{}", if sat { ".sat" } else { "" });
                return self.alu(i, math::mul24(&name, ty).ok_or_else(|| unsup(m))?, nsrc);
            }
            let name = match (opc, width.as_deref()) {
                ("mul" | "mad", Some(w)) => format!("{opc}.{w}"),
                ("mul" | "mad", None) => {
                    return Err(semantic(
                        i,
                        format!("`{}` needs `.lo`, `.hi` or `.wide`", m.full),
                    ))
                }
                ("bfind", None) if shiftamt => "bfind.shiftamt".to_string(),
                (_, None) => opc.to_string(),
                _ => return Err(unsup(m)),
            };
            if sat {
                if ty != Ty::S32 {
                    return Err(unsup(m));
                }
                math::int_sat_op(&name)
            } else if name.ends_with("wide") && ty.bytes() == 8
                || (ty.bytes() < 2 && !matches!(opc, "and" | "or" | "xor" | "not" | "cnot"))
            {
                None
            } else {
                math::int_op(&name, ty)
            }
        };
        let f = f.ok_or_else(|| unsup(m))?;
        self.alu(i, f, nsrc)
    }

    fn carry(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let unsup = |m: &Mods| unsupported(i, format!("unsupported instruction `{}`", m.full));
        let carry_out = m.take("cc");
        let (op, carry_in) = match (i.opcode.as_str(), m.take_any(&["lo", "hi"]).as_deref()) {
            ("add", None) => (CarryOp::Add, false),
            ("addc", None) => (CarryOp::Add, true),
            ("sub", None) => (CarryOp::Sub, false),
            ("subc", None) => (CarryOp::Sub, true),
            ("mad", Some("lo")) => (CarryOp::MadLo, false),
            ("mad", Some("hi")) => (CarryOp::MadHi, false),
            ("madc", Some("lo")) => (CarryOp::MadLo, true),
            ("madc", Some("hi")) => (CarryOp::MadHi, true),
            _ => return Err(unsup(m)),
        };
        let ty = self.one_type(i, m)?;
        if !matches!(ty, Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64)
            || matches!(op, CarryOp::MadHi) && ty.is_signed()
        {
            return Err(unsup(m));
        }
        let is_mad = matches!(op, CarryOp::MadLo | CarryOp::MadHi);
        self.nops(i, if is_mad { 4 } else { 3 })?;
        Ok(Op::Carry {
            op,
            carry_in,
            carry_out,
            wide: ty.bytes() == 8,
            d: self.reg(i, &i.ops[0])?,
            a: self.src(i, &i.ops[1])?,
            b: self.src(i, &i.ops[2])?,
            c: if is_mad {
                self.src(i, &i.ops[3])?
            } else {
                Src::Imm(0)
            },
        })
    }

    fn setp(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let unsup = |m: &Mods| unsupported(i, format!("unsupported instruction `{}`", m.full));
        let ftz = m.take("ftz");
        let cmp = m
            .list
            .iter()
            .position(|x| Cmp::from_name(x).is_some())
            .map(|k| m.list.remove(k))
            .and_then(|s| Cmp::from_name(&s))
            .ok_or_else(|| semantic(i, format!("`{}` needs a comparison", m.full)))?;
        let bop = match m.take_any(&["and", "or", "xor"]).as_deref() {
            Some("and") => Some(BoolOp::And),
            Some("or") => Some(BoolOp::Or),
            Some("xor") => Some(BoolOp::Xor),
            _ => None,
        };
        let types = m.types();
        let (dty, sty) = match (i.opcode.as_str(), types.as_slice()) {
            ("setp", [t]) => (Ty::Pred, *t),
            ("set", [d, s]) => (*d, *s),
            _ => return Err(semantic(i, format!("`{}`: wrong number of types", m.full))),
        };
        let half = matches!(sty, Ty::F16 | Ty::F16x2 | Ty::BF16 | Ty::BF16x2);
        let pair = matches!(sty, Ty::F16x2 | Ty::BF16x2);
        // Scalar halves with `.ftz` flush subnormal inputs, which `compare` does not.
        let f = if half {
            math::half_compare(sty, cmp, ftz, false)
        } else {
            math::compare(sty, cmp, ftz)
        }
        .ok_or_else(|| unsup(m))?;
        let nops = if bop.is_some() { 4 } else { 3 };
        self.nops(i, nops)?;
        let comb = match bop {
            Some(b) => Some((b, self.src(i, &i.ops[3])?)),
            None => None,
        };
        let a = self.src(i, &i.ops[1])?;
        let b = self.src(i, &i.ops[2])?;
        let hi = if pair {
            Some(math::half_compare(sty, cmp, ftz, true).ok_or_else(|| unsup(m))?)
        } else {
            None
        };
        if i.opcode == "set" && (pair || dty.bytes() == 2) {
            // 1.0 in a half destination's format, else all ones of its width (per half
            // for packed sources: `set.u32.f16x2` gives 0xffff in each half).
            let one = match dty {
                Ty::F16 | Ty::F16x2 => 0x3c00,
                Ty::BF16 | Ty::BF16x2 => 0x3f80,
                Ty::U16 | Ty::S16 | Ty::U32 | Ty::S32 if pair || dty.bytes() == 2 => 0xffff,
                _ => return Err(unsup(m)),
            };
            if pair != matches!(dty, Ty::F16x2 | Ty::BF16x2 | Ty::U32 | Ty::S32) {
                return Err(unsup(m));
            }
            return Ok(Op::SetHalf {
                lo: f,
                hi,
                d: self.reg(i, &i.ops[0])?,
                a,
                b,
                comb,
                one,
            });
        }
        if let Some(hi) = hi {
            let Opnd::Pipe(x, y) = &i.ops[0] else {
                return Err(semantic(i, format!("`{}` writes `p|q`", m.full)));
            };
            return Ok(Op::SetpPair {
                lo: f,
                hi,
                p: self.reg(i, x)?,
                q: self.reg(i, y)?,
                a,
                b,
                comb,
            });
        }
        if i.opcode == "set" {
            if !(dty == Ty::F32 || dty.is_int() && dty.bytes() == 4) {
                return Err(unsup(m));
            }
            return Ok(Op::Set {
                f,
                d: self.reg(i, &i.ops[0])?,
                a,
                b,
                comb,
                float_result: dty == Ty::F32,
            });
        }
        let (p, q) = match &i.ops[0] {
            Opnd::Pipe(x, y) => (self.reg(i, x)?, self.reg(i, y)?),
            o => (self.reg(i, o)?, Dst::Sink),
        };
        Ok(Op::Setp {
            f,
            p,
            q,
            a,
            b,
            comb,
        })
    }

    fn space(m: &mut Mods) -> Option<Space> {
        Some(
            match m
                .take_any(&[
                    "global",
                    "shared",
                    "shared::cta",
                    "shared::cluster",
                    "local",
                    "param",
                    "param::entry",
                    "param::func",
                    "const",
                ])
                .as_deref()
            {
                Some("global") => Space::Global,
                Some("shared" | "shared::cta") => Space::Shared,
                Some("shared::cluster") => Space::SharedCluster,
                Some("local") => Space::Local,
                // `.param::entry` and `.param::func` (PTX 8.3) name the kernel's and a
                // function's parameters, which `.param` reaches by its symbol.
                Some("param" | "param::entry" | "param::func") => Space::KParam,
                Some("const") => Space::Const,
                _ => Space::Generic,
            },
        )
    }

    fn ld_st(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let unsup = |m: &Mods| unsupported(i, format!("unsupported instruction `{}`", m.full));
        let is_st = i.opcode == "st";
        let mut space = Self::space(m).unwrap_or(Space::Generic);
        m.drop_hints();
        if m.list.iter().any(|x| x.contains("::")) {
            return Err(unsup(m));
        }
        let n = match m.take_any(&["v2", "v4"]).as_deref() {
            Some("v2") => 2,
            Some("v4") => 4,
            _ => 1,
        };
        let mut ty = self.one_type(i, m)?;
        if ty == Ty::Pred || ty == Ty::B128 && n != 1 {
            return Err(unsup(m));
        }
        self.nops(i, 2)?;
        let (addr_op, val_op) = if is_st {
            (&i.ops[0], &i.ops[1])
        } else {
            (&i.ops[1], &i.ops[0])
        };
        let (addr, off, sym_space) = self.addr(i, addr_op)?;
        // A `.param` symbol of a function (or a call's argument) lives in local memory.
        if space == Space::KParam {
            if sym_space == Some(Space::Local) {
                space = Space::Local;
            } else if sym_space.is_none() {
                if !self.is_kernel {
                    return Err(unsup(m));
                }
                space = Space::Generic;
            }
            if is_st && space == Space::KParam {
                return Err(semantic(i, "kernel parameters are read-only"));
            }
        }
        if let (Some(s), false) = (sym_space, space == Space::Generic) {
            // A block's own shared variable is a `.shared::cluster` address too.
            let own_shared = s == Space::Shared && space == Space::SharedCluster;
            if s != space && !(s == Space::Global && space == Space::Const) && !own_shared {
                return Err(semantic(i, "variable used with a different state space"));
            }
        }
        if ty == Ty::B128 {
            // `ld`/`st` `.b128`: the two halves as one 16-byte aligned `.v2.b64` access
            // (little-endian: the low half at the lower address).
            ty = Ty::B64;
            return Ok(if is_st {
                let [lo, hi] = self.src128(i, val_op)?;
                Op::St {
                    space,
                    ty,
                    n: 2,
                    v: [lo, hi, Src::Imm(0), Src::Imm(0)],
                    addr,
                    off,
                }
            } else {
                let [lo, hi] = self.reg128(i, val_op)?;
                Op::Ld {
                    space,
                    ty,
                    n: 2,
                    d: [lo, hi, Dst::Sink, Dst::Sink],
                    addr,
                    off,
                }
            });
        }
        let vals: Vec<&Opnd> = match val_op {
            Opnd::Vector(v) => v.iter().collect(),
            o => vec![o],
        };
        if vals.len() != n {
            return Err(semantic(i, format!("`{}` needs {n} values", m.full)));
        }
        if is_st {
            let mut v = [Src::Imm(0); 4];
            for (k, o) in vals.iter().enumerate() {
                v[k] = self.src(i, o)?;
            }
            Ok(Op::St {
                space,
                ty,
                n: n as u8,
                v,
                addr,
                off,
            })
        } else {
            let mut d = [Dst::Sink; 4];
            for (k, o) in vals.iter().enumerate() {
                d[k] = self.reg(i, o)?;
            }
            Ok(Op::Ld {
                space,
                ty,
                n: n as u8,
                d,
                addr,
                off,
            })
        }
    }

    fn atom(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let unsup = |m: &Mods| unsupported(i, format!("unsupported instruction `{}`", m.full));
        let is_red = i.opcode == "red";
        let space = Self::space(m).unwrap_or(Space::Generic);
        if matches!(space, Space::Local | Space::KParam | Space::Const) {
            return Err(unsup(m));
        }
        m.drop_hints();
        let noftz = m.take("noftz");
        let vec = match m.take_any(&["v2", "v4", "v8"]).as_deref() {
            Some("v2") => 2,
            Some("v4") => 4,
            Some("v8") => 8,
            _ => 1,
        };
        let op = match m
            .take_any(&[
                "add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas",
            ])
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
            Some("exch") => AtomOp::Exch,
            Some("cas") => AtomOp::Cas,
            _ => return Err(unsup(m)),
        };
        let ty = self.one_type(i, m)?;
        let half = matches!(ty, Ty::F16 | Ty::BF16 | Ty::F16x2 | Ty::BF16x2);
        // `.noftz` goes with the half types, which take nothing else (the ISA).
        if noftz != half {
            return Err(unsup(m));
        }
        if vec > 1 {
            return self.atom_vector(i, m, is_red, space, op, ty, vec);
        }
        if ty == Ty::B128 {
            return self.atom_b128(i, m, is_red, space, op);
        }
        let ok = match op {
            AtomOp::Add => {
                matches!(
                    ty,
                    Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64 | Ty::F32 | Ty::F64
                ) || half
            }
            AtomOp::Min | AtomOp::Max => matches!(ty, Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64),
            AtomOp::Inc | AtomOp::Dec => ty == Ty::U32,
            AtomOp::And | AtomOp::Or | AtomOp::Xor => matches!(ty, Ty::B32 | Ty::B64),
            AtomOp::Exch | AtomOp::Cas => {
                matches!(
                    ty,
                    Ty::B32 | Ty::B64 | Ty::U32 | Ty::U64 | Ty::S32 | Ty::S64
                ) || ty == Ty::B16 && op == AtomOp::Cas
            }
        };
        if !ok {
            return Err(unsup(m));
        }
        let nsrc = if op == AtomOp::Cas { 2 } else { 1 };
        let first = if is_red { 0 } else { 1 };
        self.nops(i, first + 1 + nsrc)?;
        let d = if is_red {
            Dst::Sink
        } else {
            self.reg(i, &i.ops[0])?
        };
        let (addr, off, _) = self.addr(i, &i.ops[first])?;
        let b = self.src(i, &i.ops[first + 1])?;
        let c = if nsrc == 2 {
            self.src(i, &i.ops[first + 2])?
        } else {
            Src::Imm(0)
        };
        Ok(Op::Atom {
            space,
            op,
            ty,
            d,
            addr,
            off,
            b,
            c,
        })
    }

    /// `createpolicy`: an L2 eviction policy, opaque 64 bits that only `.L2::cache_hint`
    /// operands read, and they are hints (the ISA: "may not always be respected"). The
    /// mock's encoding: the form and priorities in the top byte, a fractional policy's
    /// f32 fraction in the low word (a range policy keeps none of its range); `.cvt`
    /// passes the CUDA access property through.
    fn createpolicy(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let unsup = |m: &Mods| unsupported(i, format!("unsupported instruction `{}`", m.full));
        if self.one_type(i, m)? != Ty::B64 {
            return Err(unsup(m));
        }
        if m.take("cvt") {
            if !m.take("L2") {
                return Err(unsup(m));
            }
            return self.alu(i, math::mov(), 1);
        }
        let range = m.take("range");
        if !range && !m.take("fractional") {
            return Err(unsup(m));
        }
        if range {
            m.take("global");
        }
        const PRIMARY: [&str; 4] = [
            "L2::evict_last",
            "L2::evict_normal",
            "L2::evict_first",
            "L2::evict_unchanged",
        ];
        let primary = m.take_any(&PRIMARY).ok_or_else(|| unsup(m))?;
        let secondary = m.take_any(&["L2::evict_first", "L2::evict_unchanged"]);
        let p = PRIMARY.iter().position(|x| *x == primary).unwrap_or(0) as u64;
        let s = match secondary.as_deref() {
            None => 0,
            Some("L2::evict_first") => 1,
            _ => 2,
        };
        let tag = Src::Imm((0x80 | (range as u64) << 4 | p << 2 | s) << 56);
        let or: WarpFn = |o, a, b, _, _| {
            for ((o, a), b) in o.iter_mut().zip(a).zip(b) {
                *o = a | (b & 0xffff_ffff);
            }
        };
        if range {
            // `createpolicy.range d, [a], primary-size, total-size`.
            self.nops(i, 4)?;
            self.addr(i, &i.ops[1])?;
            self.src(i, &i.ops[2])?;
            self.src(i, &i.ops[3])?;
            let d = self.reg(i, &i.ops[0])?;
            return Ok(Op::Alu {
                f: or,
                d,
                s: [tag, Src::Imm(0), Src::Imm(0), Src::Imm(0)],
                n: 2,
            });
        }
        // `createpolicy.fractional d{, fraction}`: the fraction in (0, 1], 1 by default.
        let fraction = match i.ops.len() {
            1 => Src::Imm(1f32.to_bits() as u64),
            2 => match &i.ops[1] {
                Opnd::F32(b)
                    if {
                        let f = f32::from_bits(*b);
                        f > 0.0 && f <= 1.0
                    } =>
                {
                    Src::Imm(*b as u64)
                }
                Opnd::F64(b)
                    if {
                        let f = f64::from_bits(*b);
                        f > 0.0 && f <= 1.0
                    } =>
                {
                    Src::Imm((f64::from_bits(*b) as f32).to_bits() as u64)
                }
                Opnd::Int(1) => Src::Imm(1f32.to_bits() as u64),
                Opnd::Name(_) => self.src(i, &i.ops[1])?,
                _ => return Err(semantic(i, "a policy's fraction is in (0.0, 1.0]")),
            },
            n => {
                return Err(semantic(
                    i,
                    format!("`createpolicy.fractional` takes 1 or 2 operands, found {n}"),
                ))
            }
        };
        let d = self.reg(i, &i.ops[0])?;
        Ok(Op::Alu {
            f: or,
            d,
            s: [tag, fraction, Src::Imm(0), Src::Imm(0)],
            n: 2,
        })
    }

    /// sm_90's vector atomics: `atom`/`red{.global}.add.v2/.v4.f32`, and `.add/.min/.max
    /// .noftz` of `.v2/.v4/.v8.f16/.bf16` and `.v2/.v4.f16x2/.bf16x2`, in global memory.
    #[allow(clippy::too_many_arguments)]
    fn atom_vector(
        &mut self,
        i: &InstAst,
        m: &Mods,
        is_red: bool,
        space: Space,
        op: AtomOp,
        elem: Ty,
        n: usize,
    ) -> Result<Op, LoadError> {
        let unsup = |m: &Mods| unsupported(i, format!("unsupported instruction `{}`", m.full));
        let ok = match elem {
            Ty::F32 => op == AtomOp::Add && n <= 4,
            Ty::F16 | Ty::BF16 => matches!(op, AtomOp::Add | AtomOp::Min | AtomOp::Max),
            Ty::F16x2 | Ty::BF16x2 => {
                matches!(op, AtomOp::Add | AtomOp::Min | AtomOp::Max) && n <= 4
            }
            _ => false,
        };
        if !ok {
            return Err(unsup(m));
        }
        if !matches!(space, Space::Global | Space::Generic) {
            return Err(semantic(
                i,
                format!("`{}`: vector atomics are for global memory only", m.full),
            ));
        }
        let first = if is_red { 0 } else { 1 };
        self.nops(i, first + 2)?;
        let vector = |o: &Opnd| match o {
            Opnd::Vector(v) if v.len() == n => Ok(v.clone()),
            _ => Err(semantic(i, format!("`{}` needs vectors of {n}", m.full))),
        };
        let d = if is_red {
            Vec::new()
        } else {
            vector(&i.ops[0])?
                .iter()
                .map(|o| self.reg(i, o))
                .collect::<Result<_, _>>()?
        };
        let (addr, off, _) = self.addr(i, &i.ops[first])?;
        let b = vector(&i.ops[first + 1])?
            .iter()
            .map(|o| self.src(i, o))
            .collect::<Result<_, _>>()?;
        Ok(Op::AtomWide(Box::new(AtomWide {
            space,
            op,
            elem,
            n: n as u8,
            d,
            b,
            c: Vec::new(),
            addr,
            off,
        })))
    }

    /// `atom{.space}.cas.b128 d, [a], b, c` and `atom{.space}.exch.b128 d, [a], b`.
    fn atom_b128(
        &mut self,
        i: &InstAst,
        m: &Mods,
        is_red: bool,
        space: Space,
        op: AtomOp,
    ) -> Result<Op, LoadError> {
        if is_red || !matches!(op, AtomOp::Cas | AtomOp::Exch) {
            return Err(unsupported(
                i,
                format!("unsupported instruction `{}`", m.full),
            ));
        }
        let cas = op == AtomOp::Cas;
        self.nops(i, if cas { 4 } else { 3 })?;
        let d = self.reg128(i, &i.ops[0])?.to_vec();
        let (addr, off, _) = self.addr(i, &i.ops[1])?;
        let b = self.src128(i, &i.ops[2])?.to_vec();
        let c = if cas {
            self.src128(i, &i.ops[3])?.to_vec()
        } else {
            Vec::new()
        };
        Ok(Op::AtomWide(Box::new(AtomWide {
            space,
            op,
            elem: Ty::B128,
            n: 1,
            d,
            b,
            c,
            addr,
            off,
        })))
    }

    fn bar(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        let unsup = |m: &Mods| unsupported(i, format!("unsupported instruction `{}`", m.full));
        m.take("aligned");
        if i.opcode == "bar" && m.take("warp") {
            m.take("sync");
            self.nops(i, 1)?;
            return Ok(Op::WarpSync {
                _mask: self.src(i, &i.ops[0])?,
            });
        }
        if i.opcode == "barrier" && m.take("cluster") {
            // `barrier.cluster.arrive{.release,.relaxed}{.aligned}`,
            // `barrier.cluster.wait{.acquire}{.aligned}`: the orderings change nothing
            // here (every access is visible to the cluster once made).
            self.nops(i, 0)?;
            return if m.take("arrive") {
                m.take_any(&["release", "relaxed"]);
                Ok(Op::ClusterArrive)
            } else if m.take("wait") {
                m.take("acquire");
                Ok(Op::ClusterWait)
            } else {
                Err(unsup(m))
            };
        }
        let kind = match m.take_any(&["sync", "arrive", "red"]).as_deref() {
            Some("sync") => BarKind::Sync,
            Some("arrive") => BarKind::Arrive,
            Some("red") => match m.take_any(&["popc", "and", "or"]).as_deref() {
                Some("popc") => BarKind::RedPopc,
                Some("and") => BarKind::Red(BoolOp::And),
                Some("or") => BarKind::Red(BoolOp::Or),
                _ => return Err(unsup(m)),
            },
            _ => return Err(unsup(m)),
        };
        m.take("cta");
        let types = m.types();
        let ops = &i.ops;
        let (d, rest) = match kind {
            BarKind::Red(_) | BarKind::RedPopc => {
                if types.len() != 1 || ops.is_empty() {
                    return Err(semantic(i, "`bar.red` needs a type and a destination"));
                }
                (self.reg(i, &ops[0])?, &ops[1..])
            }
            _ => (Dst::Sink, &ops[..]),
        };
        let is_red = matches!(kind, BarKind::Red(_) | BarKind::RedPopc);
        let (id, count, pred) = match (rest.len(), is_red) {
            (1, false) => (self.src(i, &rest[0])?, None, None),
            (2, false) => (self.src(i, &rest[0])?, Some(self.src(i, &rest[1])?), None),
            (2, true) => (self.src(i, &rest[0])?, None, Some(self.src(i, &rest[1])?)),
            (3, true) => (
                self.src(i, &rest[0])?,
                Some(self.src(i, &rest[1])?),
                Some(self.src(i, &rest[2])?),
            ),
            _ => return Err(semantic(i, "wrong operands for a barrier")),
        };
        Ok(Op::Bar {
            kind,
            id,
            count,
            pred,
            d,
        })
    }

    fn call(&mut self, i: &InstAst, m: &mut Mods) -> Result<Op, LoadError> {
        m.take("uni");
        // call (rets), func, (args);  call func, (args);  call (rets), func;  call func;
        let mut ops = i.ops.iter();
        let mut rets: &[Opnd] = &[];
        let mut first = ops.next();
        if let Some(Opnd::List(r)) = first {
            rets = r;
            first = ops.next();
        }
        let Some(Opnd::Name(fname)) = first else {
            return Err(semantic(i, "a call names a function or a register"));
        };
        if !self.funcs.contains_key(fname) {
            if let Some(Sym::Reg(_)) = self.lookup(fname) {
                return self.call_indirect(i, rets, fname, ops.as_slice());
            }
        }
        let args: &[Opnd] = match ops.next() {
            Some(Opnd::List(a)) => a,
            None => &[],
            Some(_) => return Err(semantic(i, "bad call arguments")),
        };
        if ops.next().is_some() {
            return Err(semantic(
                i,
                format!("a prototype or target list after a direct call of `{fname}`"),
            ));
        }
        let Some(f) = self.funcs.get(fname) else {
            return Err(semantic(i, format!("unknown function `{fname}`")));
        };
        let copy = |this: &Self,
                    list: &[Opnd],
                    slots: &[(u32, u32)],
                    into_callee: bool|
         -> Result<Vec<(u32, u32, u32)>, LoadError> {
            if list.len() != slots.len() {
                return Err(semantic(
                    i,
                    format!(
                        "`{fname}` takes {} values here, given {}",
                        slots.len(),
                        list.len()
                    ),
                ));
            }
            let mut v = Vec::new();
            for (o, &(off, size)) in list.iter().zip(slots) {
                let Opnd::Name(n) = o else {
                    return Err(semantic(i, "call arguments must be `.param` variables"));
                };
                let Some(Sym::Local(mine)) = this.lookup(n) else {
                    return Err(semantic(i, format!("`{n}` is not a `.param` variable")));
                };
                v.push(if into_callee {
                    (mine, off, size)
                } else {
                    (off, mine, size)
                });
            }
            Ok(v)
        };
        let args_in = copy(self, args, &f.params, true)?;
        // A call that takes return values from a function defined without any, through a
        // declaration that gives it them: linked from two inputs (nvlink resolves names
        // and compares no prototypes; numba-cuda declares a C-ABI `void` function with a
        // return value). The callee writes no return value, so the caller's return
        // `.param`s keep what they held, as on the GPU, where the caller reads whatever
        // the return registers held.
        let unwritten = f.has_body
            && f.rets.is_empty()
            && !rets.is_empty()
            && f.declared_rets
                .as_ref()
                .is_some_and(|d| d.len() == rets.len());
        let rets_out = if unwritten {
            Vec::new()
        } else {
            copy(self, rets, &f.rets, false)?
        };
        if !f.has_body {
            // The device library's functions the executor implements itself, when the
            // module does not define them; their arguments are read where the caller put
            // them (`(mine, callee's, size)` in `args_in`).
            let sizes = |v: &[(u32, u32, u32)]| v.iter().map(|c| c.2).collect::<Vec<_>>();
            match fname.as_str() {
                "vprintf"
                    if sizes(&args_in) == [8, 8] && matches!(sizes(&rets_out)[..], [] | [4]) =>
                {
                    return Ok(Op::Vprintf {
                        fmt: args_in[0].0,
                        args: args_in[1].0,
                        ret: rets_out.first().map(|r| r.1),
                    });
                }
                "__assertfail" if sizes(&args_in) == [8, 8, 4, 8, 8] => {
                    let pc = self.prog.insts.len() as u32;
                    let a = |k: usize| args_in[k].0;
                    self.prog.assert_args.insert(
                        pc,
                        AssertArgs {
                            message: a(0),
                            file: a(1),
                            line: a(2),
                            function: a(3),
                        },
                    );
                    return Ok(Op::AssertFail);
                }
                "__assertfail" => return Ok(Op::AssertFail),
                "cudaGraphSetConditional" if sizes(&args_in) == [8, 4] && rets_out.is_empty() => {
                    return Ok(Op::SetConditional {
                        handle: args_in[0].0,
                        value: args_in[1].0,
                    });
                }
                "malloc" if sizes(&args_in) == [8] && sizes(&rets_out) == [8] => {
                    self.prog.uses_heap = true;
                    return Ok(Op::Malloc {
                        size: args_in[0].0,
                        ret: rets_out[0].1,
                        align: None,
                    });
                }
                "__nv_aligned_device_malloc" | "__cuda_syscall_aligned_malloc"
                    if sizes(&args_in) == [8, 8] && sizes(&rets_out) == [8] =>
                {
                    self.prog.uses_heap = true;
                    return Ok(Op::Malloc {
                        size: args_in[0].0,
                        ret: rets_out[0].1,
                        align: Some(args_in[1].0),
                    });
                }
                "free" if sizes(&args_in) == [8] && rets_out.is_empty() => {
                    self.prog.uses_heap = true;
                    return Ok(Op::Free { ptr: args_in[0].0 });
                }
                name => {
                    if let Some(&(_, call, arg_sizes, ret_size)) =
                        crate::devrt::FUNCTIONS.iter().find(|f| f.0 == name)
                    {
                        if sizes(&args_in) != arg_sizes || sizes(&rets_out) != [ret_size] {
                            return Err(semantic(
                                i,
                                format!(
                                    "`{fname}` is the device runtime's: it takes arguments of \
                                     {arg_sizes:?} bytes and returns {ret_size}, as \
                                     cuda_device_runtime_api.h declares it"
                                ),
                            ));
                        }
                        self.prog.uses_device_runtime = true;
                        if matches!(
                            call,
                            crate::devrt::DevRt::Malloc | crate::devrt::DevRt::Free
                        ) {
                            self.prog.uses_heap = true;
                        }
                        return Ok(Op::DeviceRuntime {
                            call,
                            args: args_in.iter().map(|a| a.0).collect(),
                            ret: rets_out[0].1,
                        });
                    }
                }
            }
            return Err(unsupported(
                i,
                format!("call to `{fname}`, which has no body here (device-library functions other than vprintf, malloc, __nv_aligned_device_malloc (__cuda_syscall_aligned_malloc), free, __assertfail, cudaGraphSetConditional and the device runtime's launches, streams, events, errors, cudaMalloc/cudaFree and device queries are supported)"),
            ));
        }
        Ok(Op::Call {
            entry: f.entry,
            args_in,
            rets_out,
            callee: f.index.unwrap_or(0),
            // Set once the whole call graph is known (`calls::mark_recursion`).
            save: None,
        })
    }
}

impl FuncDecoder<'_> {
    /// `call (rets), %rd, (args), prototype;` (after `(rets)` and the register): the
    /// arguments' and return values' sizes come from the prototype; which function runs,
    /// and so where they go, from the register's value when the call runs.
    fn call_indirect(
        &mut self,
        i: &InstAst,
        rets: &[Opnd],
        reg: &str,
        rest: &[Opnd],
    ) -> Result<Op, LoadError> {
        let target = self.src(i, &Opnd::Name(reg.to_string()))?;
        let (args, proto): (&[Opnd], &Opnd) = match rest {
            [Opnd::List(a), p] => (a, p),
            [p] => (&[], p),
            _ => {
                return Err(semantic(
                    i,
                    "an indirect call is `call (rets), %rd, (args), prototype;`",
                ))
            }
        };
        let Opnd::Name(pname) = proto else {
            return Err(semantic(i, "an indirect call ends in its prototype's name"));
        };
        let sig = match self.target_lists.get(pname) {
            // A `.calltargets` list: its functions' shared signature stands for a
            // prototype (which of them runs is the register's value, as for a prototype).
            Some(TargetList::Calls(fs)) => {
                let sizes = |v: &[(u32, u32)]| v.iter().map(|p| p.1).collect::<Vec<u32>>();
                let sig_of = |f: &String| {
                    let info = &self.funcs[f];
                    (sizes(&info.rets), sizes(&info.params))
                };
                let first = sig_of(&fs[0]);
                if let Some(other) = fs.iter().find(|f| sig_of(f) != first) {
                    return Err(semantic(
                        i,
                        format!(
                            "`{pname}` lists `{}` and `{other}`, which take different parameters",
                            fs[0]
                        ),
                    ));
                }
                Some(first)
            }
            _ => self.protos.get(pname).cloned(),
        };
        let Some((ret_sizes, arg_sizes)) = sig else {
            return Err(semantic(i, format!("unknown call prototype `{pname}`")));
        };
        let slots =
            |list: &[Opnd], sizes: &[u32], what: &str| -> Result<Vec<(u32, u32)>, LoadError> {
                if list.len() != sizes.len() {
                    return Err(semantic(
                        i,
                        format!(
                            "prototype `{pname}` has {} {what}, the call gives {}",
                            sizes.len(),
                            list.len()
                        ),
                    ));
                }
                list.iter()
                    .zip(sizes)
                    .map(|(o, &size)| match o {
                        Opnd::Name(n) => match self.lookup(n) {
                            Some(Sym::Local(off)) => Ok((off, size)),
                            _ => Err(semantic(i, format!("`{n}` is not a `.param` variable"))),
                        },
                        _ => Err(semantic(i, "call arguments must be `.param` variables")),
                    })
                    .collect()
            };
        let args = slots(args, &arg_sizes, "parameters")?;
        let rets = slots(rets, &ret_sizes, "return values")?;
        Ok(Op::CallIndirect {
            target,
            args,
            rets,
            // Set once the whole call graph is known (`calls::mark_recursion`).
            caller: None,
        })
    }
}

fn sreg(n: &str) -> Option<Sreg> {
    let dim = |c: &str| match c {
        "x" => Some(0),
        "y" => Some(1),
        "z" => Some(2),
        _ => None,
    };
    if let Some((base, c)) = n.split_once('.') {
        let d = dim(c)?;
        return Some(match base {
            "%tid" => Sreg::Tid(d),
            "%ntid" => Sreg::Ntid(d),
            "%ctaid" => Sreg::Ctaid(d),
            "%nctaid" => Sreg::Nctaid(d),
            "%clusterid" => Sreg::ClusterId(d),
            "%nclusterid" => Sreg::Nclusterid(d),
            "%cluster_ctaid" => Sreg::ClusterCtaid(d),
            "%cluster_nctaid" => Sreg::ClusterNctaid(d),
            _ => return None,
        });
    }
    Some(match n {
        "%laneid" => Sreg::Laneid,
        "%warpid" => Sreg::Warpid,
        "%nwarpid" => Sreg::Nwarpid,
        "%smid" => Sreg::Smid,
        "%nsmid" => Sreg::Nsmid,
        "%clock" => Sreg::Clock,
        "%clock_hi" => Sreg::ClockHi,
        "%clock64" => Sreg::Clock64,
        "%globaltimer" => Sreg::Globaltimer,
        "%lanemask_eq" => Sreg::LanemaskEq,
        "%lanemask_lt" => Sreg::LanemaskLt,
        "%lanemask_le" => Sreg::LanemaskLe,
        "%lanemask_gt" => Sreg::LanemaskGt,
        "%lanemask_ge" => Sreg::LanemaskGe,
        "%gridid" => Sreg::Gridid,
        "%dynamic_smem_size" => Sreg::DynamicSmemSize,
        "%total_smem_size" => Sreg::TotalSmemSize,
        "%globaltimer_lo" => Sreg::GlobaltimerLo,
        "%globaltimer_hi" => Sreg::GlobaltimerHi,
        "%reserved_smem_offset_begin" => Sreg::ReservedSmem(0),
        "%reserved_smem_offset_end" => Sreg::ReservedSmem(1),
        "%reserved_smem_offset_cap" => Sreg::ReservedSmem(2),
        "%reserved_smem_offset_0" => Sreg::ReservedSmem(3),
        "%reserved_smem_offset_1" => Sreg::ReservedSmem(4),
        "%cluster_ctarank" => Sreg::ClusterCtarank,
        "%cluster_nctarank" => Sreg::ClusterNctarank,
        "%is_explicit_cluster" => Sreg::IsExplicitCluster,
        "%aggr_smem_size" => Sreg::AggrSmemSize,
        "%current_graph_exec" => Sreg::CurrentGraphExec,
        _ if n.starts_with("%pm") => {
            let (k, wide) = match n[3..].strip_suffix("_64") {
                Some(k) => (k, true),
                None => (&n[3..], false),
            };
            match k {
                "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" => {
                    Sreg::Pm(k.as_bytes()[0] - b'0', wide)
                }
                _ => return None,
            }
        }
        _ => {
            let n: u8 = n.strip_prefix("%envreg")?.parse().ok()?;
            if n >= 32 {
                return None;
            }
            Sreg::Envreg(n)
        }
    })
}
