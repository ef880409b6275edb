//! The executor: blocks in parallel on host threads; in a block, warps in turn until each
//! stalls at a barrier or exits; in a warp, the lanes at the lowest program counter run
//! together (32 lanes per instruction, an active mask), which reconverges structured
//! code where it joins, as a GPU's post-dominator reconvergence does.

mod asynccopy;
mod calls;
mod cluster;
mod devrt;
mod texture;

use std::collections::VecDeque;
use std::mem::MaybeUninit;
use std::sync::atomic::{
    AtomicBool, AtomicI32, AtomicI64, AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering,
};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use crate::decode::{
    AtomOp, AtomWide, BarKind, BoolOp, CarryOp, Dst, Op, Program, ReduxOp, ShflMode, Space, Src,
    Sreg, VoteMode,
};
use crate::math::{self, Lanes, Ty, WarpFn};
use crate::{
    Access, Engine, FaultKind, Kernel, KernelFault, Launch, Memory, Module, PrintfBuffer, Stats,
};
use crate::{
    CLUSTER_RANK_STRIDE, GRID_WINDOW, GRID_WORKSPACE_BYTES, LOCAL_WINDOW, PARAM_WINDOW,
    RESERVED_SHARED, SHARED_WINDOW, WINDOW_SIZE,
};

mod matrix;

const FULL: u32 = u32::MAX;
static ZERO_LANES: Lanes = [0; 32];
/// Spans a host thread keeps translated (`BlockCtx::tlb`), replaced round robin. A
/// kernel that reaches more allocations than this in one pass (Black-Scholes: three
/// inputs and two outputs) misses on every warp, and compiled code goes back to the
/// interpreter at each miss: 4 entries ran such kernels almost wholly in the interpreter.
pub(crate) const TLB_ENTRIES: usize = 8;
/// A warp polls the stop flag and the clock each time its instruction count is a multiple
/// of this (compiled code stops there too).
pub(crate) const CHECK_INTERVAL: u64 = 1 << 16;
/// A cooperative launch's block yields its host thread when a warp's count is a multiple
/// of this: short enough that a block spinning in a grid sync lets the blocks it waits
/// for run soon (its spin loop is four instructions), long enough that switching blocks
/// (a swap of a few vectors) costs little beside the slice.
const COOPERATIVE_SLICE: u64 = 1 << 10;
/// Reads of the grid workspace (a grid sync spinning) after which a block yields.
const GRID_POLLS_BEFORE_YIELD: u32 = 4;
/// The unit a block's shared memory is allocated in (bytes).
const SHARED_ALLOCATION_UNIT: u64 = 128;
/// Rounds of a block's warps in which every warp that ran only found an mbarrier's phase
/// incomplete, and no mbarrier changed, after which the block is deadlocked: nothing
/// left can complete the phases they wait for (a GPU hangs there).
const MBARRIER_IDLE_ROUNDS: u32 = 1 << 14;
/// The most host memory the blocks of one cooperative launch may hold at once.
const COOPERATIVE_HOST_BYTES: u64 = 16 << 30;

/// A span `Memory::translate` handed out, cached for the launch. `repr(C)` because
/// compiled code (`jit`) reads the same entries at fixed offsets; an empty entry has
/// `len` 0, so no access (at least one byte) falls inside it.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct TlbEntry {
    pub(crate) base: u64,
    pub(crate) len: u64,
    pub(crate) host: *mut u8,
    /// 1 when the span may be written, else 0.
    pub(crate) writable: u64,
}

const NO_SPAN: TlbEntry = TlbEntry {
    base: 0,
    len: 0,
    host: std::ptr::null_mut(),
    writable: 0,
};

/// Runs kernel `kernel` of `module` over `mem`. Returns when every block has finished, or
/// with the first fault (other blocks stop at their next instruction). What the kernel
/// prints (device printf, assert messages) is discarded: see [`run_with_printf`].
pub fn run(
    module: &Module,
    kernel: usize,
    launch: &Launch,
    mem: &dyn Memory,
) -> Result<Stats, KernelFault> {
    run_inner(module, kernel, launch, mem, None)
}

/// [`run`], appending what the kernel prints to `printf`: the text of each `vprintf`
/// call, and the message of each failed `assert` (which also ends the launch in
/// `FaultKind::Assert`). The buffer keeps what was printed before a fault.
pub fn run_with_printf(
    module: &Module,
    kernel: usize,
    launch: &Launch,
    mem: &dyn Memory,
    printf: &PrintfBuffer,
) -> Result<Stats, KernelFault> {
    run_inner(module, kernel, launch, mem, Some(printf))
}

fn run_inner(
    module: &Module,
    kernel: usize,
    launch: &Launch,
    mem: &dyn Memory,
    printf: Option<&PrintfBuffer>,
) -> Result<Stats, KernelFault> {
    match launch.device_runtime {
        // Its kernels may launch kernels: the grid, then the tree it launches.
        Some(rt) if module.program.uses_device_runtime => {
            devrt::run_tree(module, kernel, launch, mem, printf, rt)
        }
        _ => run_grid(module, kernel, launch, mem, printf, None),
    }
}

/// Runs one grid; `cdp` collects the grids it launches (the device runtime's calls
/// fault without it).
fn run_grid(
    module: &Module,
    kernel: usize,
    launch: &Launch,
    mem: &dyn Memory,
    printf: Option<&PrintfBuffer>,
    cdp: Option<&devrt::Grid>,
) -> Result<Stats, KernelFault> {
    let Some(k) = module.kernels.get(kernel) else {
        return Err(launch_fault(
            module,
            kernel,
            format!("the module has no kernel #{kernel}"),
        ));
    };
    if launch.globals.len() < module.globals.len() {
        return Err(launch_fault(
            module,
            kernel,
            format!(
                "the launch gives {} global addresses, the module has {} variables",
                launch.globals.len(),
                module.globals.len()
            ),
        ));
    }
    let [gx, gy, gz] = launch.grid;
    let [bx, by, bz] = launch.block;
    let nblocks = gx as u64 * gy as u64 * gz as u64;
    let nthreads = bx as u64 * by as u64 * bz as u64;
    if nblocks == 0 || nthreads == 0 {
        return Ok(Stats::default());
    }
    // Host memory the launch needs per block: refuse what no GPU would give either,
    // rather than let an allocation abort the process.
    let local_bytes = calls::local_bytes(&module.program, launch);
    let per_block = module.program.nregs as u64 * 8 * nthreads.div_ceil(32) * 32
        + local_bytes as u64 * nthreads
        + RESERVED_SHARED
        + k.static_shared_bytes as u64
        + launch.dynamic_shared_bytes as u64;
    if per_block > 1 << 31 {
        return Err(launch_fault(
            module,
            kernel,
            format!("a block would need {per_block} bytes of registers, local and shared memory"),
        ));
    }
    if nthreads > 1 << 16 {
        return Err(launch_fault(
            module,
            kernel,
            format!("{nthreads} threads in a block"),
        ));
    }
    // The block's shared memory: the region reserved for the system, the kernel's
    // variables (as decode placed them after it), then the dynamic shared memory,
    // 16-byte aligned after the static.
    let static_end = RESERVED_SHARED + k.static_shared_bytes as u64;
    let dyn_shared_base = RESERVED_SHARED + (k.static_shared_bytes as u64).div_ceil(16) * 16;
    let declared = if launch.dynamic_shared_bytes == 0 {
        static_end
    } else {
        dyn_shared_base + launch.dynamic_shared_bytes as u64
    };
    // A block reaches what the GPU allocates it, in whole units: the H200 lets a store land
    // past the declared bytes up to the unit's end and faults beyond it (runtime program
    // shared_bounds_probe, recorded), which programs that overrun a small array by a few
    // bytes rely on without knowing.
    let shared_limit = declared.next_multiple_of(SHARED_ALLOCATION_UNIT);
    let shared_bytes = shared_limit as usize + 16;
    let shape = match cluster::shape(launch, k) {
        Ok(shape) => shape,
        Err(detail) => return Err(launch_fault(module, kernel, detail)),
    };
    let nclusters = nblocks / cluster::blocks_in(shape) as u64;
    let in_clusters = cluster::blocks_in(shape) > 1;
    // A cluster's blocks take one host thread.
    let threads = launch.host_threads.max(1).min(nclusters.min(256) as usize);
    let cluster_bytes = per_block.saturating_mul(cluster::blocks_in(shape) as u64);
    if in_clusters && cluster_bytes > COOPERATIVE_HOST_BYTES {
        return Err(launch_fault(
            module,
            kernel,
            format!(
                "a cluster keeps its {} blocks in flight: {cluster_bytes} bytes of registers, \
                 local and shared memory, more than the host gives a launch \
                 ({COOPERATIVE_HOST_BYTES} bytes)",
                cluster::blocks_in(shape)
            ),
        ));
    }
    // Every block of a cooperative grid is in flight at once, clusters or not.
    if launch.cooperative && per_block.saturating_mul(nblocks) > COOPERATIVE_HOST_BYTES {
        return Err(launch_fault(
            module,
            kernel,
            format!(
                "a cooperative launch keeps all {nblocks} blocks in flight: {} bytes of \
                 registers, local and shared memory, more than the host gives a launch ({} \
                 bytes)",
                per_block.saturating_mul(nblocks),
                COOPERATIVE_HOST_BYTES
            ),
        ));
    }
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let fault: Mutex<Option<KernelFault>> = Mutex::new(None);
    let instructions = AtomicU64::new(0);
    // A cooperative launch's blocks (with clusters of several blocks: its clusters) that
    // have run and yielded, waiting for a host thread, and how many have not finished.
    let parked: Mutex<VecDeque<BlockState>> = Mutex::new(VecDeque::new());
    let parked_clusters: Mutex<VecDeque<cluster::ParkedCluster>> = Mutex::new(VecDeque::new());
    let unfinished = AtomicU64::new(if in_clusters { nclusters } else { nblocks });
    // The grid workspace (`GRID_WINDOW`): written only through atomic operations.
    let grid_ws = [AtomicU64::new(0), AtomicU64::new(0)];
    let start = Instant::now();
    let deadline = launch.time_limit.and_then(|d| start.checked_add(d));
    // Compiled once per kernel, at its first launch; None: the interpreter runs it all.
    let compiled = match launch.engine {
        Engine::Jit => module.jit.get(module, kernel),
        Engine::Tiered => module.jit.get_tiered(module, kernel, nblocks * nthreads),
        Engine::Interp => None,
    };
    // Under the tiered engine, a launch that starts interpreted compiles the kernel once
    // a host thread of it has interpreted TIER_UP_INSTRUCTIONS, and goes on in the
    // compiled code: one long launch (a block that loops 10^9 times) would otherwise be
    // interpreted to its end, as the decision at its start was taken on too little.
    let late: OnceLock<Option<Arc<crate::jit::Compiled>>> = OnceLock::new();
    let tier_up = (launch.engine == Engine::Tiered && compiled.is_none()).then_some(&late);
    let block_of = |b: u64| {
        [
            (b % gx as u64) as u32,
            ((b / gx as u64) % gy as u64) as u32,
            (b / (gx as u64 * gy as u64)) as u32,
        ]
    };
    let record = |f: Fault| {
        stop.store(true, Ordering::Relaxed);
        let mut slot = fault.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(*f);
        }
    };
    let worker = || {
        let mut ctx = BlockCtx {
            prog: &module.program,
            module,
            kernel,
            launch,
            mem,
            ctaid: [0; 3],
            nthreads: nthreads as u32,
            shared: vec![0u8; shared_bytes],
            shared_limit,
            dyn_shared_base,
            local: Vec::new(),
            local_bytes,
            bars: [BarState::default(); 16],
            exited_threads: 0,
            instructions: 0,
            start,
            deadline,
            tlb: [NO_SPAN; TLB_ENTRIES],
            tlb_next: 0,
            jit: compiled.as_deref(),
            tier_up,
            printf,
            grid_ws: if launch.cooperative {
                grid_ws.as_ptr() as *mut u8
            } else {
                std::ptr::null_mut()
            },
            check_mask: if launch.cooperative || in_clusters {
                COOPERATIVE_SLICE - 1
            } else {
                CHECK_INTERVAL - 1
            },
            yielding: false,
            yields: launch.cooperative || in_clusters,
            grid_polls: 0,
            mbar_changes: 0,
            last_wait: None,
            invalidated_mbars: Vec::new(),
            sliced: false,
            cluster_shape: shape,
            explicit_cluster: launch.cluster.is_some() || k.required_cluster.is_some(),
            cluster_blocks: Vec::new(),
            cluster_bar: cluster::ClusterBarrier::default(),
            idle: false,
            resumed_at: 0,
            cdp,
        };
        let mut warps: Vec<Warp> = Vec::new();
        if in_clusters && launch.cooperative {
            // Every cluster in flight: new clusters first (a grid sync needs all of them
            // to arrive), then the parked ones in turn (`executor/cluster.rs`).
            let mut idle = 0u32;
            while !stop.load(Ordering::Relaxed) && unfinished.load(Ordering::Acquire) != 0 {
                let c = next.fetch_add(1, Ordering::Relaxed);
                let (c, state) = if c < nclusters {
                    (c, None)
                } else {
                    let Some(p) = parked_clusters
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .pop_front()
                    else {
                        // Every cluster is on another host thread: let them run.
                        idle += 1;
                        if idle > 64 {
                            std::thread::sleep(std::time::Duration::from_micros(50));
                        } else {
                            std::thread::yield_now();
                        }
                        continue;
                    };
                    (0, Some(p))
                };
                idle = 0;
                match ctx.run_cluster_turn(c, state, &mut warps, k, shared_bytes, &stop) {
                    Ok(None) => {
                        unfinished.fetch_sub(1, Ordering::Release);
                    }
                    Ok(Some(p)) => parked_clusters
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push_back(p),
                    Err(f) => {
                        record(f);
                        break;
                    }
                }
            }
        } else if in_clusters {
            // A cluster at a time, its blocks taking turns on this host thread.
            loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let c = next.fetch_add(1, Ordering::Relaxed);
                if c >= nclusters {
                    break;
                }
                if let Err(f) = ctx.run_cluster(c, &mut warps, k, shared_bytes, &stop) {
                    record(f);
                    break;
                }
            }
        } else if launch.cooperative {
            // Every block in flight: new blocks first (a grid sync needs all of them to
            // arrive), then the parked ones in turn, each for a slice.
            let mut idle = 0u32;
            while !stop.load(Ordering::Relaxed) && unfinished.load(Ordering::Acquire) != 0 {
                let b = next.fetch_add(1, Ordering::Relaxed);
                let mut state = if b < nblocks {
                    BlockState::new(block_of(b), shared_bytes)
                } else {
                    let Some(st) = parked.lock().unwrap_or_else(|e| e.into_inner()).pop_front()
                    else {
                        // Every block is on another host thread: let them run.
                        idle += 1;
                        if idle > 64 {
                            std::thread::sleep(std::time::Duration::from_micros(50));
                        } else {
                            std::thread::yield_now();
                        }
                        continue;
                    };
                    st
                };
                idle = 0;
                ctx.swap_block(&mut state, &mut warps);
                let ran = if state.started {
                    Ok(())
                } else {
                    ctx.past_deadline()
                        .map_or(Ok(()), |f| Err(ctx.block_fault(f)))
                };
                let ran = ran.and_then(|()| {
                    if !state.started {
                        state.started = true;
                        ctx.begin_block(&mut warps, k);
                    }
                    ctx.resume_block(&mut warps, &stop)
                });
                ctx.swap_block(&mut state, &mut warps);
                match ran {
                    Ok(true) => {
                        unfinished.fetch_sub(1, Ordering::Release);
                    }
                    Ok(false) => parked
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push_back(state),
                    Err(f) => {
                        record(f);
                        break;
                    }
                }
            }
        } else {
            loop {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let b = next.fetch_add(1, Ordering::Relaxed);
                if b >= nblocks {
                    break;
                }
                ctx.ctaid = block_of(b);
                // A clock reading per block (tens of nanoseconds) bounds a huge grid of
                // short blocks; long blocks are bounded inside (`run_group`).
                let ran = ctx
                    .past_deadline()
                    .map_or(Ok(()), |f| Err(ctx.block_fault(f)));
                if let Err(f) = ran.and_then(|()| ctx.run_block(&mut warps, k, &stop)) {
                    record(f);
                    break;
                }
            }
        }
        instructions.fetch_add(ctx.instructions, Ordering::Relaxed);
    };
    if threads == 1 {
        worker();
    } else {
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(worker);
            }
        });
    }
    if let Some(f) = fault.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(f);
    }
    let instructions = instructions.load(Ordering::Relaxed);
    if launch.engine == Engine::Tiered && compiled.is_none() {
        module.jit.interpreted(kernel, instructions);
    }
    Ok(Stats {
        instructions,
        warps: nblocks * nthreads.div_ceil(32),
    })
}

fn launch_fault(module: &Module, kernel: usize, detail: String) -> KernelFault {
    KernelFault {
        kind: FaultKind::IllegalInstruction,
        kernel: module
            .kernels
            .get(kernel)
            .map(|k| k.name.clone())
            .unwrap_or_default(),
        block: [0; 3],
        thread: [0; 3],
        line: 0,
        instruction: String::new(),
        address: None,
        detail,
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct BarState {
    arrived: u32,
    expected: Option<u32>,
    /// bar.red: popc count, or the and/or so far.
    acc: u32,
    any: bool,
}

pub(crate) struct Warp {
    pub(crate) id: u32,
    pub(crate) regs: Vec<u64>,
    pub(crate) preds: Vec<u32>,
    pcs: [u32; 32],
    /// Lanes that exist (the last warp of a block may be partial).
    valid: u32,
    exited: u32,
    /// Lanes stopped at a barrier, and which.
    waiting: u32,
    /// Lanes that found an mbarrier's phase incomplete: they sit out the rest of the
    /// warp's turn, so its other lanes and the block's other warps (who can complete it)
    /// run.
    polled: u32,
    /// Lanes parked at a warp-synchronous instruction (`shfl.sync`, `vote.sync`,
    /// `match.sync`, `redux.sync`, `bar.warp.sync`) until the rest of its member mask
    /// arrives there: the instruction runs once with all of them, as on a GPU, where
    /// the member mask names the lanes that execute it together.
    converging: u32,
    /// Parked lanes let go without the rest of their members (none of those could still
    /// arrive): they run the instruction with the lanes there are.
    released: u32,
    wait_bar: [u8; 32],
    /// Per-lane return stacks (call pc); empty unless the kernel calls functions.
    stacks: Vec<Vec<u32>>,
    /// The rest of each lane's call frames (`calls.rs`).
    frames: calls::Frames,
    has_calls: bool,
    /// The carry flag of each lane (`add.cc` and friends).
    cc: u32,
    /// Per lane, the count of completed cluster barrier phases its `barrier.cluster.wait`
    /// waits for (`executor/cluster.rs`).
    cluster_target: [u32; 32],
    pub(crate) steps: u64,
    /// `%tid.x`, `%tid.y`, `%tid.z` of each lane, for the block shape and warp index in
    /// `tid_for` (compiled code reads a lane's in one load: `jit::Frame::tids`). Kept
    /// across the blocks a host thread runs: the shape and the index do not change.
    pub(crate) tids: [[u32; 32]; 3],
    tid_for: Option<(u32, [u32; 3])>,
}

pub(crate) type Fault = Box<KernelFault>;

pub(crate) struct BlockCtx<'a> {
    /// The running grid's device-runtime state (CUDA dynamic parallelism), when the
    /// launch has a device runtime.
    cdp: Option<&'a devrt::Grid<'a>>,
    pub(crate) prog: &'a Program,
    module: &'a Module,
    kernel: usize,
    pub(crate) launch: &'a Launch<'a>,
    mem: &'a dyn Memory,
    pub(crate) ctaid: [u32; 3],
    nthreads: u32,
    /// Never reallocated while blocks run (compiled code holds its pointer for a call).
    pub(crate) shared: Vec<u8>,
    pub(crate) shared_limit: u64,
    pub(crate) dyn_shared_base: u64,
    local: Vec<u8>,
    local_bytes: usize,
    bars: [BarState; 16],
    exited_threads: u32,
    pub(crate) instructions: u64,
    start: Instant,
    /// When the launch must end (`Launch::time_limit`).
    deadline: Option<Instant>,
    /// Spans the memory translated, valid for the whole launch (the trait's contract):
    /// kept across the blocks this host thread runs.
    pub(crate) tlb: [TlbEntry; TLB_ENTRIES],
    tlb_next: usize,
    /// The kernel's compiled code, when the launch asked for it and it compiled.
    jit: Option<&'a crate::jit::Compiled>,
    /// Under the tiered engine, while this launch runs interpreted: where its code goes
    /// once compiled in the middle of the launch (one compile, whichever host thread
    /// asks first).
    tier_up: Option<&'a OnceLock<Option<Arc<crate::jit::Compiled>>>>,
    /// Where device printf goes; None: nowhere.
    printf: Option<&'a PrintfBuffer>,
    /// The launch's grid workspace (`GRID_WINDOW`), null unless the launch is cooperative.
    grid_ws: *mut u8,
    /// A warp polls (stop flag, clock, and in a cooperative launch whether to yield) when
    /// its instruction count has these bits clear.
    pub(crate) check_mask: u64,
    /// Set when the block is to give its host thread to another block (cooperative
    /// launches): the warp running stops at its next instruction, the block at its warp.
    yielding: bool,
    /// Reads of the grid workspace since the block last took its host thread.
    grid_polls: u32,
    /// Changes to any mbarrier of the block (`executor/asynccopy.rs`), and the last wait that
    /// found a phase incomplete (warp, lane, pc, the mbarrier's offset): a block whose
    /// warps only poll, with no mbarrier changing, is deadlocked.
    mbar_changes: u64,
    last_wait: Option<(u32, u32, u32, usize)>,
    /// The mbarriers invalidated since their last init (`mbarrier.inval`), with the state
    /// each had then (`executor/asynccopy.rs`, `mbar_wait`).
    invalidated_mbars: Vec<(usize, asynccopy::Mbarrier)>,
    /// Set when a warp's turn ended at a check (`run_group`) rather than at a barrier, an
    /// exit or a poll: it was running, which is progress, not a wait.
    sliced: bool,
    /// Whether blocks take turns on host threads (cooperative launches, clusters of
    /// several blocks): a warp sets `yielding` every `check_mask + 1` instructions.
    yields: bool,
    /// The launch's cluster shape ([1, 1, 1] without clusters) and whether it gave one.
    cluster_shape: [u32; 3],
    explicit_cluster: bool,
    /// While a cluster of several blocks runs: its blocks by rank (`executor/cluster.rs`);
    /// the running block's entry is a placeholder, its state being in this context.
    cluster_blocks: Vec<BlockState>,
    cluster_bar: cluster::ClusterBarrier,
    /// Set when the block yielded because its warps could only poll (a cluster's block
    /// waiting for the others).
    idle: bool,
    /// `instructions` when the running block of a cluster took its host thread.
    resumed_at: u64,
}

/// What a block of a cooperative launch is while another block has its host thread:
/// what `BlockCtx` holds of a block, swapped in and out (`BlockCtx::swap_block`).
#[derive(Default)]
struct BlockState {
    started: bool,
    ctaid: [u32; 3],
    shared: Vec<u8>,
    local: Vec<u8>,
    bars: [BarState; 16],
    exited_threads: u32,
    warps: Vec<Warp>,
    /// The block's cluster barrier while it is a cluster of one (a cooperative launch's
    /// blocks take turns; a cluster of several shares the context's).
    cluster_bar: cluster::ClusterBarrier,
}

impl BlockState {
    fn new(ctaid: [u32; 3], shared_bytes: usize) -> BlockState {
        BlockState {
            started: false,
            ctaid,
            shared: vec![0u8; shared_bytes],
            local: Vec::new(),
            bars: [BarState::default(); 16],
            exited_threads: 0,
            warps: Vec::new(),
            cluster_bar: cluster::ClusterBarrier::default(),
        }
    }
}

enum Loc {
    Host(*mut u8),
    Shared(usize),
    /// Another block of the cluster's shared memory: its rank and the offset.
    Remote(usize, usize),
    Local(usize),
    Param(usize),
}

impl<'a> BlockCtx<'a> {
    /// Runs a block (of an ordinary launch) to its end.
    fn run_block(
        &mut self,
        warps: &mut Vec<Warp>,
        k: &Kernel,
        stop: &AtomicBool,
    ) -> Result<(), Fault> {
        self.begin_block(warps, k);
        // Only cooperative launches yield.
        self.resume_block(warps, stop).map(|_| ())
    }

    /// Swaps the block this context runs with `state` (cooperative launches).
    fn swap_block(&mut self, state: &mut BlockState, warps: &mut Vec<Warp>) {
        self.grid_polls = 0;
        std::mem::swap(&mut self.ctaid, &mut state.ctaid);
        std::mem::swap(&mut self.shared, &mut state.shared);
        std::mem::swap(&mut self.local, &mut state.local);
        std::mem::swap(&mut self.bars, &mut state.bars);
        std::mem::swap(&mut self.exited_threads, &mut state.exited_threads);
        std::mem::swap(warps, &mut state.warps);
        if self.cluster_blocks.is_empty() {
            std::mem::swap(&mut self.cluster_bar, &mut state.cluster_bar);
        }
    }

    /// Sets up the block `self.ctaid`: its warps at the kernel's entry, its shared and
    /// local memory zeroed, no barrier pending.
    fn begin_block(&mut self, warps: &mut Vec<Warp>, k: &Kernel) {
        let entry = k.entry_pc;
        let nwarps = self.nthreads.div_ceil(32);
        let nregs = self.prog.nregs as usize * 32;
        let npreds = self.prog.npreds as usize;
        warps.truncate(nwarps as usize);
        while warps.len() < nwarps as usize {
            warps.push(Warp {
                id: 0,
                regs: Vec::new(),
                preds: Vec::new(),
                pcs: [0; 32],
                valid: 0,
                exited: 0,
                waiting: 0,
                polled: 0,
                converging: 0,
                released: 0,
                wait_bar: [0; 32],
                stacks: Vec::new(),
                frames: calls::Frames::default(),
                has_calls: false,
                cc: 0,
                cluster_target: [0; 32],
                steps: 0,
                tids: [[0; 32]; 3],
                tid_for: None,
            });
        }
        let block = self.launch.block;
        for (i, w) in warps.iter_mut().enumerate() {
            w.id = i as u32;
            if w.tid_for != Some((w.id, block)) {
                let [bx, by, _] = block.map(|x| x.max(1));
                for l in 0..32 {
                    let lin = 32 * w.id + l as u32;
                    w.tids[0][l] = lin % bx;
                    w.tids[1][l] = lin / bx % by;
                    w.tids[2][l] = lin / (bx * by);
                }
                w.tid_for = Some((w.id, block));
            }
            // Registers start undefined in PTX: a block finds what the previous one on
            // this host thread left (zeros for a new warp). Clearing them per block cost a
            // third of the time of small kernels.
            w.regs.resize(nregs, 0);
            w.preds.resize(npreds, 0);
            w.pcs = [entry; 32];
            let n = (self.nthreads - 32 * i as u32).min(32);
            w.valid = if n == 32 { FULL } else { (1u32 << n) - 1 };
            w.exited = 0;
            w.waiting = 0;
            w.polled = 0;
            w.converging = 0;
            w.released = 0;
            w.stacks.clear();
            w.frames.clear();
            w.has_calls = false;
            w.cc = 0;
            w.cluster_target = [0; 32];
            w.steps = 0;
        }
        self.shared.fill(0);
        // A fresh zeroed buffer rather than a refill: a large one comes from the system
        // as untouched zero pages, so a kernel declaring 512 KiB of `.local` a thread costs
        // what its threads really touch, not a memset of it for every block.
        self.local = vec![0u8; self.local_bytes * self.nthreads as usize];
        self.bars = [BarState::default(); 16];
        self.exited_threads = 0;
        if self.cluster_blocks.is_empty() {
            // A cluster of one block: its barrier is the block's.
            self.cluster_bar = cluster::ClusterBarrier::default();
        }
    }

    /// Runs the block's warps until every thread has exited (true), or until the block
    /// yields its host thread (false; cooperative launches only).
    fn resume_block(&mut self, warps: &mut [Warp], stop: &AtomicBool) -> Result<bool, Fault> {
        let mut idle_rounds = 0u32;
        loop {
            let changes = self.mbar_changes;
            // Whether every warp that ran stopped only because its lanes polled.
            let mut only_polled = true;
            for w in warps.iter_mut() {
                if w.valid & !w.exited & !w.waiting != 0 {
                    only_polled &= self.run_warp(w, stop)? && !self.sliced;
                    self.sliced = false;
                    if self.yielding {
                        self.yielding = false;
                        return Ok(false);
                    }
                }
            }
            if warps.iter().all(|w| w.exited == w.valid) {
                return Ok(true);
            }
            if stop.load(Ordering::Relaxed) {
                return Ok(true);
            }
            let released = self.release_barriers(warps) | self.release_warpgroups(warps)?;
            if warps.iter().any(|w| w.valid & !w.exited & !w.waiting != 0) {
                // Some lanes wait on mbarriers: they run again next round, unless no
                // round changes anything any more.
                idle_rounds = if released || !only_polled || self.mbar_changes != changes {
                    0
                } else {
                    idle_rounds + 1
                };
                if idle_rounds > 0 && !self.cluster_blocks.is_empty() {
                    // Only the cluster's other blocks can change what these lanes wait
                    // for: they run now (`run_cluster` finds deadlocks).
                    self.idle = true;
                    return Ok(false);
                }
                if idle_rounds < MBARRIER_IDLE_ROUNDS {
                    continue;
                }
                return Err(self.wait_deadlock(warps));
            }
            if !released {
                if let Some(wi) = warps.iter().position(|w| matrix::wgmma_pc(w).is_some()) {
                    let w = &warps[wi];
                    let detail = self.wgmma_stall(warps, wi / 4);
                    let pc = w.pcs[w.waiting.trailing_zeros() as usize];
                    return Err(self.fault(w, 0, pc, FaultKind::Deadlock, None, detail));
                }
                let w = warps.iter().find(|w| w.waiting != 0).unwrap_or(&warps[0]);
                let lane = w.waiting.trailing_zeros().min(31);
                let b = w.wait_bar[lane as usize];
                let st = self.bars[b as usize];
                let detail = format!(
                    "barrier {b}: {} of {} threads arrived and {} exited; the rest can never arrive",
                    st.arrived,
                    st.expected.unwrap_or(self.nthreads),
                    self.exited_threads
                );
                return Err(self.fault(
                    w,
                    lane,
                    w.pcs[lane as usize],
                    FaultKind::Deadlock,
                    None,
                    detail,
                ));
            }
        }
    }

    /// Releases every barrier whose threads have all arrived; false when none could be.
    fn release_barriers(&mut self, warps: &mut [Warp]) -> bool {
        let mut released = false;
        for b in 0..16usize {
            let st = self.bars[b];
            if st.arrived == 0 {
                continue;
            }
            let done = match st.expected {
                Some(n) => st.arrived >= n,
                // The whole block: exited threads count as arrived (PTX: exited threads
                // no longer take part in barriers).
                None => st.arrived + self.exited_threads >= self.nthreads,
            };
            if !done {
                continue;
            }
            released = true;
            for w in warps.iter_mut() {
                // The lanes waiting at this barrier.
                if w.waiting == 0 {
                    continue;
                }
                let mut m = lanes_at(&w.wait_bar, b as u8) & w.waiting;
                w.waiting &= !m;
                if m == 0 {
                    continue;
                }
                // Usually every lane waits at one pc: what it writes is looked up once
                // and all the lanes move on together, without a loop over the set bits
                // (that loop once took a tenth of a barrier-heavy kernel's time).
                let p0 = w.pcs[m.trailing_zeros() as usize];
                if m & !lanes_eq(&w.pcs, p0) == 0 {
                    if let Some((d, v)) = self.bar_result(p0, &st) {
                        write(w, d, &[v; 32], m);
                    }
                    set_pcs(w, m, p0 + 1);
                    continue;
                }
                // What the barrier instruction writes, looked up once per pc (all the
                // lanes of a warp usually wait at one).
                let mut last: Option<(u32, Option<(Dst, u64)>)> = None;
                while m != 0 {
                    let lane = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let pc = w.pcs[lane];
                    let out = match last {
                        Some((p, out)) if p == pc => out,
                        _ => {
                            let out = self.bar_result(pc, &st);
                            last = Some((pc, out));
                            out
                        }
                    };
                    if let Some((d, v)) = out {
                        write_lane(w, d, lane, v);
                    }
                    w.pcs[lane] = pc + 1;
                }
            }
            self.bars[b] = BarState::default();
        }
        released
    }

    /// What the barrier instruction at `pc` writes when barrier `st` releases (`bar.red`).
    fn bar_result(&self, pc: u32, st: &BarState) -> Option<(Dst, u64)> {
        match self.prog.insts[pc as usize].op {
            Op::Bar { kind, d, .. } => match kind {
                BarKind::RedPopc => Some((d, st.acc as u64)),
                BarKind::Red(BoolOp::And) => Some((d, (st.acc != 0) as u64)),
                BarKind::Red(_) => Some((d, st.any as u64)),
                _ => None,
            },
            _ => None,
        }
    }

    fn thread_of(&self, w: &Warp, lane: u32) -> [u32; 3] {
        let [bx, by, _] = self.launch.block;
        let lin = w.id * 32 + lane;
        [lin % bx, (lin / bx) % by, lin / (bx * by)]
    }

    /// Why the launch must end now, if it ran past its deadline.
    fn past_deadline(&self) -> Option<String> {
        let deadline = self.deadline?;
        let now = Instant::now();
        (now >= deadline).then(|| {
            format!(
                "the launch ran for {:.1} s, past its time limit of {:.1} s",
                (now - self.start).as_secs_f64(),
                (deadline - self.start).as_secs_f64()
            )
        })
    }

    /// A fault of the block about to run, before any of its threads ran.
    fn block_fault(&self, detail: String) -> Fault {
        Box::new(KernelFault {
            kind: FaultKind::TimeLimit,
            kernel: self.module.kernels[self.kernel].name.clone(),
            block: self.ctaid,
            thread: [0; 3],
            line: 0,
            instruction: String::new(),
            address: None,
            detail,
        })
    }

    pub(crate) fn fault(
        &self,
        w: &Warp,
        lane: u32,
        pc: u32,
        kind: FaultKind,
        address: Option<u64>,
        detail: String,
    ) -> Fault {
        let info = self.prog.info.get(pc as usize);
        Box::new(KernelFault {
            kind,
            kernel: self.module.kernels[self.kernel].name.clone(),
            block: self.ctaid,
            thread: self.thread_of(w, lane),
            line: info.map(|i| i.line).unwrap_or(0),
            instruction: info.map(|i| i.text.clone()).unwrap_or_default(),
            address,
            detail,
        })
    }

    /// The lanes to run next: those at the lowest program counter (with calls: the
    /// deepest frame first, then the lowest pc), and the lowest pc of any other lane.
    fn pick(w: &Warp, runnable: u32) -> (u32, u32, u32) {
        if w.has_calls {
            let stack = |l: usize| w.stacks.get(l).map(Vec::as_slice).unwrap_or(&[]);
            // Usually every runnable lane is at one pc, as deep in calls, returning to the
            // same place: they run together without comparing whole stacks (thousands of
            // return addresses deep in a recursion). Lanes at one pc may run together
            // whatever their stacks below hold: each returns by its own.
            let first = runnable.trailing_zeros() as usize;
            let key = |l: usize| (w.pcs[l], stack(l).len(), stack(l).last().copied());
            let k0 = key(first);
            let mut same = true;
            for_lanes(runnable, |l| same &= key(l) == k0);
            if same {
                return (k0.0, runnable, k0.0.wrapping_add(1));
            }
            // Key of a lane: its return addresses, then its pc; compared in place.
            let cmp = |a: usize, b: usize| -> std::cmp::Ordering {
                let (sa, sb) = (stack(a), stack(b));
                let ka = sa.iter().copied().chain(std::iter::once(w.pcs[a]));
                let kb = sb.iter().copied().chain(std::iter::once(w.pcs[b]));
                for (x, y) in ka.zip(kb) {
                    if x != y {
                        return x.cmp(&y);
                    }
                }
                // A deeper frame runs first: its caller waits at the return address.
                sb.len().cmp(&sa.len())
            };
            let mut best = runnable.trailing_zeros() as usize;
            for_lanes(runnable, |l| {
                if cmp(l, best).is_lt() {
                    best = l;
                }
            });
            let mut mask = 0u32;
            for_lanes(runnable, |l| {
                if cmp(l, best).is_eq() {
                    mask |= 1 << l;
                }
            });
            let pc = w.pcs[best];
            // Re-pick after every instruction: merging across frames is not tracked.
            return (pc, mask, pc.wrapping_add(1));
        }
        // Usually every runnable lane is at one pc: found with 32 independent compares
        // (vectorised), no loop over the set bits (pick once took a seventh of a
        // barrier-heavy kernel's time).
        let p0 = w.pcs[runnable.trailing_zeros() as usize & 31];
        if runnable & !lanes_eq(&w.pcs, p0) == 0 {
            return (p0, runnable, u32::MAX);
        }
        let mut pc = u32::MAX;
        let mut m = runnable;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            pc = pc.min(w.pcs[l]);
        }
        let (mut mask, mut other) = (0u32, u32::MAX);
        let mut m = runnable;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            if w.pcs[l] == pc {
                mask |= 1 << l;
            } else {
                other = other.min(w.pcs[l]);
            }
        }
        (pc, mask, other)
    }

    /// Runs the warp until every lane has exited, waits at a barrier or polled an
    /// mbarrier in vain; true when some lanes polled (they run again at its next turn).
    fn run_warp(&mut self, w: &mut Warp, stop: &AtomicBool) -> Result<bool, Fault> {
        loop {
            let runnable = w.valid & !w.exited & !w.waiting & !w.polled & !w.converging;
            if runnable == 0 {
                let polled = w.polled & w.valid & !w.exited != 0;
                let parked = w.converging & w.valid & !w.exited;
                if parked != 0 && !polled {
                    // Lanes wait at a warp-synchronous instruction for members that can
                    // no longer come (they wait at a block barrier or at another such
                    // instruction): a GPU hangs or leaves it undefined. The lowest group
                    // runs it with the lanes there are, rather than deadlock.
                    let (_, group, _) = Self::pick(w, parked);
                    w.converging &= !group;
                    w.released |= group;
                    continue;
                }
                w.polled = 0;
                return Ok(polled);
            }
            let (pc, mask, other) = Self::pick(w, runnable);
            // `Some(pc)`: the group's lanes continue at pc; None: their pcs are set.
            if let Some(pc) = self.run_group(w, pc, mask, other, stop)? {
                set_pcs(w, mask & !w.exited & !w.waiting, pc);
            }
            if self.yielding {
                w.polled = 0;
                return Ok(false);
            }
        }
    }

    /// Runs one group of lanes (one pc) through straight-line code until control flow
    /// splits it, or it reaches the pc where other lanes wait (they merge).
    fn run_group(
        &mut self,
        w: &mut Warp,
        mut pc: u32,
        mut mask: u32,
        other: u32,
        stop: &AtomicBool,
    ) -> Result<Option<u32>, Fault> {
        let insts = &self.prog.insts;
        let limit = self.launch.step_limit.unwrap_or(u64::MAX);
        let first_step = w.steps;
        loop {
            if pc == other || self.yielding {
                return Ok(Some(pc));
            }
            if w.steps >= limit {
                let lane = mask.trailing_zeros();
                let detail = format!(
                    "the warp issued {} instructions, the launch's step limit",
                    w.steps
                );
                return Err(self.fault(w, lane, pc, FaultKind::StepLimit, None, detail));
            }
            if w.steps & self.check_mask == 0 {
                // A cooperative launch's block gives its host thread to the others after
                // this instruction (at least one runs each turn, so every turn progresses).
                // A cluster's block that only polled since it took the host thread has
                // yielded already if it can: the slice is for blocks that work or spin.
                let spun = self.cluster_blocks.is_empty()
                    || self.instructions - self.resumed_at >= COOPERATIVE_SLICE;
                if self.yields && w.steps != 0 && spun {
                    self.yielding = true;
                }
                if stop.load(Ordering::Relaxed) {
                    // Another block faulted: this one ends where it is.
                    w.exited = w.valid;
                    return Ok(None);
                }
                if let Some(late) = self.tier_up {
                    if self.instructions >= crate::TIER_UP_INSTRUCTIONS || late.get().is_some() {
                        self.tier_up = None;
                        self.jit = late
                            .get_or_init(|| self.module.jit.get(self.module, self.kernel))
                            .as_deref();
                    }
                }
                if w.steps != 0 {
                    if let Some(detail) = self.past_deadline() {
                        let lane = mask.trailing_zeros();
                        return Err(self.fault(w, lane, pc, FaultKind::TimeLimit, None, detail));
                    }
                    if self.nthreads > 32 && w.steps != first_step {
                        // The warp's turn ends here and the block's other warps run: a
                        // warp may spin on memory another warp of its block writes
                        // (cooperative groups' tiles of several warps sync that way), and
                        // on a GPU the others run meanwhile. Its lanes go on at pc (not
                        // sliced again there before they run: the count has not moved).
                        w.polled |= mask;
                        self.sliced = true;
                        return Ok(Some(pc));
                    }
                }
            }
            if let Some(code) = self.jit {
                // Compiled code runs from here while it can (the checks above are done
                // for its first instruction; it stops at the next pc where they are due)
                // and says where the interpreter goes on: at the same pc, it runs that
                // instruction itself.
                let whole = mask | w.exited == w.valid;
                if !w.has_calls && code.works_at(pc) && (whole || !code.warp_sync) {
                    let before = w.steps;
                    let next = crate::jit::enter(code, self, w, pc, mask, other)?;
                    // Back at the same pc after a loop's trip is not "ran nothing": the
                    // checks are due again (every compiled unit that runs counts steps).
                    if next != pc || w.steps != before {
                        pc = next;
                        continue;
                    }
                }
            }
            w.steps += 1;
            let Some(inst) = insts.get(pc as usize) else {
                let lane = mask.trailing_zeros();
                return Err(self.fault(
                    w,
                    lane,
                    pc,
                    FaultKind::IllegalInstruction,
                    None,
                    "ran past the end of the program".into(),
                ));
            };
            let emask = match inst.guard {
                None => mask,
                Some((p, neg)) => {
                    let bits = w.preds[p as usize];
                    mask & if neg { !bits } else { bits }
                }
            };
            self.instructions += emask.count_ones() as u64;
            if let Op::Alu { f, d, s, n } = &inst.op {
                // The most common instruction, kept out of `exec`'s large frame.
                if emask != 0 {
                    self.alu(w, *f, *d, s, *n, emask);
                }
                pc += 1;
                if w.has_calls {
                    return Ok(Some(pc));
                }
                continue;
            }
            if let Op::Setp {
                f,
                p,
                q: Dst::Sink,
                a,
                b,
                comb: None,
            } = &inst.op
            {
                // Comparisons feed every branch: also kept out of `exec`.
                if emask != 0 {
                    let mut out = [0u64; 32];
                    let (mut ta, mut tb) = (MaybeUninit::uninit(), MaybeUninit::uninit());
                    let ra = self.operand(w, *a, &mut ta);
                    let rb = self.operand(w, *b, &mut tb);
                    f(&mut out, ra, rb, ra, ra);
                    write(w, *p, &out, emask);
                }
                pc += 1;
                if w.has_calls {
                    return Ok(Some(pc));
                }
                continue;
            }
            if let Some(members) = warp_sync_members(&inst.op) {
                // The lanes of the member mask meet here first (`Warp::converging`).
                let mut tmp = MaybeUninit::uninit();
                let member_mask =
                    self.operand(w, members, &mut tmp)[mask.trailing_zeros() as usize] as u32;
                let here = w.converging & lanes_eq(&w.pcs, pc);
                let group = mask | here;
                let missing = member_mask & w.valid & !w.exited & !group;
                if missing != 0 && mask & w.released == 0 {
                    w.converging |= mask;
                    set_pcs(w, mask, pc);
                    return Ok(None);
                }
                w.converging &= !group;
                w.released &= !group;
                if group != mask {
                    // The parked lanes join: the whole group runs it, then goes on
                    // together from the next instruction.
                    let emask = match inst.guard {
                        None => group,
                        Some((p, neg)) => {
                            let bits = w.preds[p as usize];
                            group & if neg { !bits } else { bits }
                        }
                    };
                    self.instructions += (emask & !mask).count_ones() as u64;
                    if emask != 0 {
                        self.exec(w, &inst.op, emask, pc)?;
                    }
                    set_pcs(w, group & !w.exited, pc + 1);
                    return Ok(None);
                }
            }
            if !inst.op.is_control() {
                if emask != 0 {
                    self.exec(w, &inst.op, emask, pc)?;
                }
                pc += 1;
                if w.has_calls {
                    return Ok(Some(pc));
                }
                continue;
            }
            match &inst.op {
                Op::Bra { target } => {
                    if emask == mask {
                        pc = *target;
                        if pc < other && !w.has_calls {
                            continue;
                        }
                        return Ok(Some(pc));
                    } else if emask == 0 {
                        pc += 1;
                        continue;
                    }
                    set_pcs(w, mask & !emask, pc + 1);
                    set_pcs(w, emask, *target);
                    return Ok(None);
                }
                Op::Exit => {
                    self.exit_lanes(w, emask);
                    mask &= !emask;
                    pc += 1;
                    if mask == 0 {
                        return Ok(None);
                    }
                }
                Op::Trap => {
                    if emask != 0 {
                        let lane = emask.trailing_zeros();
                        return Err(self.fault(
                            w,
                            lane,
                            pc,
                            FaultKind::Trap,
                            None,
                            "the kernel executed `trap`".into(),
                        ));
                    }
                    pc += 1;
                }
                Op::AssertFail => {
                    if emask != 0 {
                        // Every failing thread prints its message, as on a GPU.
                        self.assert_messages(w, emask, pc);
                        let lane = emask.trailing_zeros();
                        return Err(self.fault(
                            w,
                            lane,
                            pc,
                            FaultKind::Assert,
                            None,
                            "device-side assert (`__assertfail`)".into(),
                        ));
                    }
                    pc += 1;
                }
                Op::Call {
                    entry,
                    args_in,
                    callee,
                    save,
                    ..
                } => {
                    self.call_direct(w, emask, pc, *entry, *callee, args_in, *save)?;
                    if emask != 0 {
                        w.has_calls = true;
                    }
                    set_pcs(w, mask & !emask, pc + 1);
                    return Ok(None);
                }
                Op::CallIndirect {
                    target,
                    args,
                    rets,
                    caller,
                } => {
                    self.call_indirect(w, emask, pc, *target, args, rets, *caller)?;
                    if emask != 0 {
                        w.has_calls = true;
                    }
                    set_pcs(w, mask & !emask, pc + 1);
                    return Ok(None);
                }
                Op::Ret => {
                    let mut exits = 0u32;
                    // Without calls every lane's stack is empty: they all exit.
                    let mut m = if w.has_calls {
                        emask
                    } else {
                        exits = emask;
                        0
                    };
                    while m != 0 {
                        let l = m.trailing_zeros() as usize;
                        m &= m - 1;
                        match w.stacks.get_mut(l).and_then(|s| s.pop()) {
                            Some(call_pc) => {
                                self.return_lane(w, l, call_pc);
                                w.pcs[l] = call_pc + 1;
                            }
                            None => exits |= 1 << l,
                        }
                    }
                    self.exit_lanes(w, exits);
                    set_pcs(w, mask & !emask, pc + 1);
                    if w.stacks.iter().all(|s| s.is_empty()) {
                        w.has_calls = false;
                    }
                    return Ok(None);
                }
                Op::Bar {
                    kind,
                    id,
                    count,
                    pred,
                    ..
                } => {
                    if emask != 0 {
                        self.arrive(w, emask, *kind, *id, *count, *pred, pc)?;
                    }
                    if matches!(kind, BarKind::Arrive) {
                        set_pcs(w, mask, pc + 1);
                    } else {
                        set_pcs(w, emask, pc);
                        set_pcs(w, mask & !emask, pc + 1);
                    }
                    return Ok(None);
                }
                Op::Wgmma(_) => {
                    if emask == 0 {
                        pc += 1;
                        continue;
                    }
                    let nwarps = self.nthreads.div_ceil(32);
                    self.arrive_wgmma(w, nwarps, mask, emask, pc)?;
                    set_pcs(w, mask, pc);
                    return Ok(None);
                }
                Op::BrxIdx { index, targets } => {
                    let mut idx = [0u64; 32];
                    self.fetch(w, *index, &mut idx);
                    let mut m = emask;
                    while m != 0 {
                        let l = m.trailing_zeros();
                        m &= m - 1;
                        let k = idx[l as usize] as u32;
                        let Some(&t) = targets.get(k as usize) else {
                            // Undefined in PTX: the GPU jumps somewhere.
                            let detail = format!(
                                "brx.idx: index {k}, past the list's {} targets",
                                targets.len()
                            );
                            let kind = FaultKind::IllegalInstruction;
                            return Err(self.fault(w, l, pc, kind, None, detail));
                        };
                        w.pcs[l as usize] = t;
                    }
                    set_pcs(w, mask & !emask, pc + 1);
                    return Ok(None);
                }
                Op::ClusterWait => {
                    let incomplete = self.cluster_wait(w, emask, pc);
                    if incomplete != 0 {
                        // Those lanes stay at the wait and sit out the warp's turn.
                        w.polled |= incomplete;
                        set_pcs(w, mask & !incomplete, pc + 1);
                        set_pcs(w, incomplete, pc);
                        return Ok(None);
                    }
                    pc += 1;
                    if w.has_calls {
                        return Ok(Some(pc));
                    }
                }
                Op::MbarWait(op) => {
                    let incomplete = if emask != 0 {
                        self.mbar_wait(w, op, emask, pc)?
                    } else {
                        0
                    };
                    pc += 1;
                    if incomplete != 0 {
                        // Those lanes sit out the warp's turn (their loop runs again).
                        w.polled |= incomplete;
                        set_pcs(w, mask, pc);
                        return Ok(None);
                    }
                    if w.has_calls {
                        return Ok(Some(pc));
                    }
                }
                _ => return Ok(Some(pc)),
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn arrive(
        &mut self,
        w: &mut Warp,
        emask: u32,
        kind: BarKind,
        id: Src,
        count: Option<Src>,
        pred: Option<Src>,
        pc: u32,
    ) -> Result<(), Fault> {
        let lane = emask.trailing_zeros();
        let b = self.fetch_lane(w, id, lane);
        if b >= 16 {
            return Err(self.fault(
                w,
                lane,
                pc,
                FaultKind::IllegalInstruction,
                None,
                format!("barrier {b} (there are 16)"),
            ));
        }
        let mut cnt = None;
        if let Some(c) = count {
            let n = self.fetch_lane(w, c, lane) as u32;
            if n == 0 || n % 32 != 0 && n < self.nthreads {
                return Err(self.fault(
                    w,
                    lane,
                    pc,
                    FaultKind::IllegalInstruction,
                    None,
                    format!("barrier count {n} is not a multiple of 32"),
                ));
            }
            cnt = Some(n);
        }
        let st = &mut self.bars[b as usize];
        if st.arrived == 0 {
            st.expected = cnt;
            st.acc = if matches!(kind, BarKind::Red(BoolOp::And)) {
                1
            } else {
                0
            };
            st.any = false;
        }
        st.arrived += emask.count_ones();
        if let Some(p) = pred {
            let mut v = [0u64; 32];
            // Same fetch as operands, read here to keep the borrow of `st` short.
            let bits = {
                let _ = st;
                self.fetch(w, p, &mut v);
                let mut bits = 0u32;
                for_lanes(emask, |l| {
                    if v[l] != 0 {
                        bits |= 1 << l
                    }
                });
                bits
            };
            let st = &mut self.bars[b as usize];
            match kind {
                BarKind::RedPopc => st.acc += bits.count_ones(),
                BarKind::Red(BoolOp::And) => {
                    if bits != emask {
                        st.acc = 0
                    }
                }
                _ => st.any |= bits != 0,
            }
        }
        if !matches!(kind, BarKind::Arrive) {
            w.waiting |= emask;
            if emask == u32::MAX {
                w.wait_bar = [b as u8; 32];
            } else {
                // Over all 32 lanes without branches (vectorised).
                for (l, at) in w.wait_bar.iter_mut().enumerate() {
                    *at = if emask >> l & 1 != 0 { b as u8 } else { *at };
                }
            }
        }
        Ok(())
    }

    fn local_copy(&mut self, warp: u32, lane: usize, copies: &[(u32, u32, u32)]) {
        let base = (warp as usize * 32 + lane) * self.local_bytes;
        for &(from, to, n) in copies {
            // Offsets the decoder placed in the thread's own depot: a copy that would
            // reach another thread's is not made.
            let (lb, n64) = (self.local_bytes as u64, u64::from(n));
            if !in_window(u64::from(from), n64, lb) || !in_window(u64::from(to), n64, lb) {
                continue;
            }
            let (f, t, n) = (base + from as usize, base + to as usize, n as usize);
            if f + n <= self.local.len() && t + n <= self.local.len() {
                self.local.copy_within(f..f + n, t);
            }
        }
    }

    /// The byte at generic (or global) address `addr` as lane `lane` sees it, or None
    /// where nothing readable lies: device printf's reads end there instead of faulting.
    fn peek(&mut self, warp: u32, lane: u32, addr: u64) -> Option<u8> {
        let window = |base: u64| {
            (base..base + WINDOW_SIZE)
                .contains(&addr)
                .then(|| addr - base)
        };
        if let Some(a) = window(SHARED_WINDOW) {
            return (a < self.shared_limit).then(|| self.shared[a as usize]);
        }
        if let Some(a) = window(LOCAL_WINDOW) {
            if a >= self.local_bytes as u64 {
                return None;
            }
            let base = (warp as usize * 32 + lane as usize) * self.local_bytes;
            return self.local.get(base + a as usize).copied();
        }
        if let Some(a) = window(PARAM_WINDOW) {
            return self.launch.params.get(a as usize).copied();
        }
        let p = match tlb_lookup(&self.tlb, addr, 1, false) {
            Some(p) => p,
            None => {
                let s = self.mem.translate(addr, 1, Access::Read).ok()?;
                if addr < s.base || !in_window(addr - s.base, 1, s.len) || s.host.is_null() {
                    return None;
                }
                self.tlb[self.tlb_next] = TlbEntry {
                    base: s.base,
                    len: s.len,
                    host: s.host,
                    writable: s.writable as u64,
                };
                self.tlb_next = (self.tlb_next + 1) % TLB_ENTRIES;
                s.host.wrapping_add((addr - s.base) as usize)
            }
        };
        // Safety: `p` lies in a span `Memory::translate` gave for reading, valid for the
        // whole launch (the trait's contract); a byte needs no alignment.
        Some(unsafe { host_read(p, 1) } as u8)
    }

    /// 8 bytes of the lane's local memory at `offset` (a call's argument).
    fn local_u64(&self, warp: u32, lane: usize, offset: u32) -> u64 {
        let base = (warp as usize * 32 + lane) * self.local_bytes;
        if !in_window(u64::from(offset), 8, self.local_bytes as u64) {
            return 0;
        }
        read_le(&self.local, base + offset as usize, 8)
    }

    /// `call vprintf`: each active lane's record, in lane order, and its return value.
    fn vprintf(&mut self, w: &mut Warp, emask: u32, fmt: u32, args: u32, ret: Option<u32>) {
        let id = w.id;
        for_lanes(emask, |l| {
            let (f, a) = (self.local_u64(id, l, fmt), self.local_u64(id, l, args));
            let (text, n) = crate::printf::vprintf(f, a, &mut |addr| self.peek(id, l as u32, addr));
            if let (Some(t), Some(buf)) = (text, self.printf) {
                buf.push(&t);
            }
            if let Some(r) = ret {
                if in_window(u64::from(r), 4, self.local_bytes as u64) {
                    let base = (id as usize * 32 + l) * self.local_bytes;
                    write_le(&mut self.local, base + r as usize, 4, n as u32 as u64);
                }
            }
        });
    }

    /// `call cudaGraphSetConditional(handle, value)`: each active lane stores its value in
    /// the conditional's word. The driver makes a handle the device address of a 4-byte
    /// word it reads when the conditional node is reached, so the set is a global store
    /// (a handle that is no live word faults as a store to its address would).
    fn set_conditional(
        &mut self,
        w: &mut Warp,
        emask: u32,
        handle: u32,
        value: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let mut m = emask;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            let h = self.local_u64(w.id, l as usize, handle);
            let base = (w.id as usize * 32 + l as usize) * self.local_bytes;
            let v = if in_window(u64::from(value), 4, self.local_bytes as u64) {
                read_le(&self.local, base + value as usize, 4)
            } else {
                0
            };
            if h % 4 != 0 {
                let detail =
                    format!("cudaGraphSetConditional: handle {h:#x} is no conditional handle");
                return Err(self.fault(w, l, pc, FaultKind::MisalignedAddress, Some(h), detail));
            }
            let loc = self.locate(w, Space::Global, h, 4, Access::Write, l, pc)?;
            self.write_mem(&loc, 4, v);
        }
        Ok(())
    }

    /// The message a GPU prints for each lane of `emask` failing the assert at `pc`.
    fn assert_messages(&mut self, w: &Warp, emask: u32, pc: u32) {
        let Some(buf) = self.printf else { return };
        let args = self.prog.assert_args.get(&pc).copied();
        for_lanes(emask, |l| {
            let lane = l as u32;
            let thread = self.thread_of(w, lane);
            let text = |off: u32, ctx: &mut Self| {
                let p = ctx.local_u64(w.id, l, off);
                crate::printf::read_string(p, &mut |a| ctx.peek(w.id, lane, a))
            };
            let m = match args {
                Some(a) => {
                    let line = self.local_u64(w.id, l, a.line) as u32;
                    let message = text(a.message, self);
                    let file = text(a.file, self);
                    let function = text(a.function, self);
                    crate::printf::assert_message(
                        &message, &file, line, &function, self.ctaid, thread,
                    )
                }
                // An `__assertfail` declared otherwise than nvcc's: no strings to read.
                None => crate::printf::assert_message(b"?", b"?", 0, b"?", self.ctaid, thread),
            };
            buf.push_always(&m);
        });
    }

    fn sreg(&self, w: &Warp, s: Sreg, out: &mut Lanes) {
        let [bx, by, bz] = self.launch.block;
        match s {
            Sreg::Tid(0) if by == 1 && bz == 1 => {
                for (l, o) in out.iter_mut().enumerate() {
                    *o = (w.id * 32 + l as u32) as u64;
                }
            }
            Sreg::Tid(d) => {
                for (l, o) in out.iter_mut().enumerate() {
                    let lin = w.id * 32 + l as u32;
                    *o = match d {
                        0 => lin % bx,
                        1 => (lin / bx) % by,
                        _ => lin / (bx * by),
                    } as u64;
                }
            }
            Sreg::Ntid(d) => *out = [[bx, by, bz][d as usize] as u64; 32],
            Sreg::Ctaid(d) => *out = [self.ctaid[d as usize] as u64; 32],
            Sreg::Nctaid(d) => *out = [self.launch.grid[d as usize] as u64; 32],
            Sreg::Laneid => {
                for (l, o) in out.iter_mut().enumerate() {
                    *o = l as u64;
                }
            }
            Sreg::Warpid => *out = [w.id as u64; 32],
            Sreg::Nwarpid => *out = [64; 32],
            Sreg::Smid => {
                let [gx, gy, _] = self.launch.grid;
                let lin = self.ctaid[0] as u64
                    + gx as u64 * (self.ctaid[1] as u64 + gy as u64 * self.ctaid[2] as u64);
                let id = match self.launch.sm_ids {
                    Some(ids) if !ids.is_empty() => {
                        u64::from(ids[(lin % ids.len() as u64) as usize])
                    }
                    _ => lin % self.launch.sm_count.max(1) as u64,
                };
                *out = [id; 32]
            }
            Sreg::Nsmid => *out = [self.launch.sm_count as u64; 32],
            Sreg::Clock | Sreg::ClockHi | Sreg::Clock64 => {
                // A counter that only grows, at roughly a GPU's clock rate: of the
                // process's CPU time, not the wall's, so that the time a busy host gives
                // other processes does not count, as it would not on a GPU (a kernel's
                // spin bounded by clock64 times out by its own work, not by the host's).
                let t = process_cpu_ns() * 2 + w.steps;
                *out = [match s {
                    Sreg::Clock => t as u32 as u64,
                    Sreg::ClockHi => t >> 32,
                    _ => t,
                }; 32]
            }
            Sreg::Globaltimer | Sreg::GlobaltimerLo | Sreg::GlobaltimerHi => {
                // Nanoseconds, as the GPU's global timer counts them.
                let t = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(0);
                let t = match s {
                    Sreg::GlobaltimerLo => t & 0xffff_ffff,
                    Sreg::GlobaltimerHi => t >> 32,
                    _ => t,
                };
                *out = [t; 32]
            }
            // The H200's driver leaves %envreg1..31 zero for an ordinary launch; %envreg0
            // holds a value of its own (0x038432c8 in the corpus's recording, a declared
            // difference): zero here. A cooperative launch's %envreg1:%envreg2 is the
            // address of its grid workspace (cooperative groups read it; zero means not
            // cooperative, and their grid sync traps).
            Sreg::Envreg(n) => {
                let ws = if self.grid_ws.is_null() {
                    0
                } else {
                    GRID_WINDOW
                };
                *out = [match n {
                    1 => ws >> 32,
                    2 => ws & 0xffff_ffff,
                    _ => 0,
                }; 32]
            }
            // The region the H200 reserves for the system at the start of a block's shared
            // memory, as the corpus's `special_registers_issue21` recorded it: begin 0,
            // end 0x120, cap 0x400 (the 1 KiB sm_90 reserves a block, RESERVED_SHARED),
            // offsets 0 and 1 at 0. The block's shared memory holds it: cooperative
            // groups' multi-warp tiles keep their barriers at `%reserved_smem_offset_1`.
            Sreg::ReservedSmem(which) => {
                let v = match which {
                    1 => 0x120,
                    2 => 0x400,
                    _ => 0,
                };
                *out = [v; 32]
            }
            Sreg::LanemaskEq => lanemask(out, |l| 1u64 << l),
            Sreg::LanemaskLt => lanemask(out, |l| (1u64 << l) - 1),
            Sreg::LanemaskLe => lanemask(out, |l| ((1u64 << (l + 1)) - 1) & 0xffff_ffff),
            Sreg::LanemaskGt => lanemask(out, |l| !((1u64 << (l + 1)) - 1) & 0xffff_ffff),
            Sreg::LanemaskGe => lanemask(out, |l| !((1u64 << l) - 1) & 0xffff_ffff),
            Sreg::Gridid => *out = [1; 32],
            Sreg::DynamicSmemSize => *out = [self.launch.dynamic_shared_bytes as u64; 32],
            // Static and dynamic shared memory in sm_90's allocation unit, 128 bytes (the
            // ISA: "a multiple of the static memory allocation unit"; the H200: 100 static
            // and 256 dynamic bytes read 384, corpus special_registers_system).
            Sreg::TotalSmemSize => {
                *out = [(self.shared_limit - RESERVED_SHARED).div_ceil(128) * 128; 32]
            }
            // The static and dynamic bytes as declared, and the 1 KiB region sm_90
            // reserves for the system (`%reserved_smem_offset_cap` above).
            Sreg::AggrSmemSize => {
                // The dynamic bytes start at the module's `.extern .shared` alignment
                // after the static ones: the H200 answered 100 + 256 + 1 KiB for a module
                // without such a declaration and 112 + 256 + 1 KiB once one of `.align
                // 16` joined it (corpus special_registers_system, both recorded).
                let stat = self.module.kernels[self.kernel].static_shared_bytes as u64;
                let align = u64::from(self.prog.extern_shared_align.max(1));
                let declared =
                    stat.next_multiple_of(align) + self.launch.dynamic_shared_bytes as u64;
                *out = [declared + 0x400; 32]
            }
            // The device graph whose kernel node this is; zero outside one (the ISA).
            Sreg::CurrentGraphExec => *out = [self.launch.current_graph_exec; 32],
            // Performance monitor counters count the events a profiler programs them
            // for; nothing programs them here, so they read zero.
            Sreg::Pm(..) => *out = [0; 32],
            Sreg::ClusterId(_)
            | Sreg::Nclusterid(_)
            | Sreg::ClusterCtaid(_)
            | Sreg::ClusterNctaid(_)
            | Sreg::ClusterCtarank
            | Sreg::ClusterNctarank
            | Sreg::IsExplicitCluster => *out = [self.cluster_sreg(s); 32],
        }
    }

    #[inline(always)]
    /// One lane's value of an operand (`fetch` of that lane alone).
    fn fetch_lane(&self, w: &Warp, s: Src, lane: u32) -> u64 {
        let lane = lane as usize & 31;
        match s {
            Src::Reg(r) => w.regs.get(r as usize * 32 + lane).copied().unwrap_or(0),
            Src::Imm(v) => v,
            _ => {
                let mut v = [0u64; 32];
                self.fetch(w, s, &mut v);
                v[lane]
            }
        }
    }

    fn fetch(&self, w: &Warp, s: Src, out: &mut Lanes) {
        match s {
            Src::Reg(r) => {
                let r = r as usize * 32;
                out.copy_from_slice(&w.regs[r..r + 32]);
            }
            Src::Imm(v) => *out = [v; 32],
            Src::Pred(p) => {
                let bits = w.preds[p as usize];
                for (l, o) in out.iter_mut().enumerate() {
                    *o = (bits >> l & 1) as u64;
                }
            }
            Src::NotPred(p) => {
                let bits = !w.preds[p as usize];
                for (l, o) in out.iter_mut().enumerate() {
                    *o = (bits >> l & 1) as u64;
                }
            }
            Src::Sreg(s) => self.sreg(w, s, out),
            Src::DynShared(off) => *out = [self.dyn_shared_base.wrapping_add(off as u64); 32],
            Src::GlobalVar(g, off) => {
                *out = [self
                    .launch
                    .globals
                    .get(g as usize)
                    .copied()
                    .unwrap_or(0)
                    .wrapping_add(off as u64); 32]
            }
        }
    }

    /// An operand's lanes: a register's straight from the register file, anything else
    /// materialised in `tmp` (never zeroed first: the hot path copies nothing it need not).
    #[inline(always)]
    fn operand<'r>(&self, w: &'r Warp, s: Src, tmp: &'r mut MaybeUninit<Lanes>) -> &'r Lanes {
        match s {
            Src::Reg(r) => {
                let r = r as usize * 32;
                w.regs
                    .get(r..r + 32)
                    .and_then(|x| x.first_chunk::<32>())
                    .unwrap_or(&ZERO_LANES)
            }
            Src::Imm(v) => tmp.write([v; 32]),
            _ => {
                let mut v = [0u64; 32];
                self.fetch(w, s, &mut v);
                tmp.write(v)
            }
        }
    }

    /// An ALU instruction: sources read in place, the result computed into a temporary
    /// and copied into the destination's active lanes.
    #[inline(always)]
    fn alu(&self, w: &mut Warp, f: WarpFn, d: Dst, s: &[Src; 4], n: u8, emask: u32) {
        let mut out = MaybeUninit::<Lanes>::uninit();
        let (mut ta, mut tb, mut tc, mut te) = (
            MaybeUninit::uninit(),
            MaybeUninit::uninit(),
            MaybeUninit::uninit(),
            MaybeUninit::uninit(),
        );
        let out = {
            let a = self.operand(w, s[0], &mut ta);
            let b = if n > 1 {
                self.operand(w, s[1], &mut tb)
            } else {
                a
            };
            let c = if n > 2 {
                self.operand(w, s[2], &mut tc)
            } else {
                a
            };
            let e = if n > 3 {
                self.operand(w, s[3], &mut te)
            } else {
                a
            };
            let out = out.write([0u64; 32]);
            f(out, a, b, c, e);
            out
        };
        write(w, d, out, emask);
    }

    pub(crate) fn exec(&mut self, w: &mut Warp, op: &Op, emask: u32, pc: u32) -> Result<(), Fault> {
        match op {
            Op::Alu { f, d, s, n } => {
                self.alu(w, *f, *d, s, *n, emask);
                return Ok(());
            }
            Op::Ld {
                space,
                ty,
                n,
                d,
                addr,
                off,
            } => return self.load(w, *space, *ty, *n, d, *addr, *off, emask, pc),
            Op::St {
                space,
                ty,
                n,
                v,
                addr,
                off,
            } => return self.store(w, *space, *ty, *n, v, *addr, *off, emask, pc),
            _ => {}
        }
        let mut a = [0u64; 32];
        let mut out = [0u64; 32];
        match op {
            Op::Video { v, d, s } => {
                let (mut b, mut c) = ([0u64; 32], [0u64; 32]);
                self.fetch(w, s[0], &mut a);
                self.fetch(w, s[1], &mut b);
                self.fetch(w, s[2], &mut c);
                for l in 0..32 {
                    out[l] = u64::from(v.eval(a[l] as u32, b[l] as u32, c[l] as u32));
                }
                write(w, *d, &out, emask);
            }
            Op::Lop3Pred { d, p, s, op, q } => {
                let (mut b, mut c, mut lut, mut qs) =
                    ([0u64; 32], [0u64; 32], [0u64; 32], [0u64; 32]);
                self.fetch(w, s[0], &mut a);
                self.fetch(w, s[1], &mut b);
                self.fetch(w, s[2], &mut c);
                self.fetch(w, s[3], &mut lut);
                self.fetch(w, *q, &mut qs);
                (math::lop3())(&mut out, &a, &b, &c, &lut);
                write(w, *d, &out, emask);
                for o in out.iter_mut() {
                    *o = (*o != 0) as u64;
                }
                combine(&mut out, &qs, *op);
                write(w, *p, &out, emask);
            }
            Op::Cvt { spec, d, a: src } => {
                self.fetch(w, *src, &mut a);
                math::cvt_lanes(spec, &mut out, &a);
                write(w, *d, &out, emask);
            }
            Op::Setp {
                f,
                p,
                q,
                a: sa,
                b: sb,
                comb,
            } => {
                let mut b = [0u64; 32];
                self.fetch(w, *sa, &mut a);
                self.fetch(w, *sb, &mut b);
                f(&mut out, &a, &b, &a, &a);
                if let Some((op, cs)) = comb {
                    let mut c = [0u64; 32];
                    self.fetch(w, *cs, &mut c);
                    combine(&mut out, &c, *op);
                }
                write(w, *p, &out, emask);
                if *q != Dst::Sink {
                    for o in out.iter_mut() {
                        *o ^= 1;
                    }
                    // `p|q`: q = !(cmp) combined with c as well.
                    if let Some((op, cs)) = comb {
                        let mut c = [0u64; 32];
                        self.fetch(w, *cs, &mut c);
                        let mut raw = [0u64; 32];
                        f(&mut raw, &a, &b, &a, &a);
                        for o in raw.iter_mut() {
                            *o ^= 1;
                        }
                        combine(&mut raw, &c, *op);
                        out = raw;
                    }
                    write(w, *q, &out, emask);
                }
            }
            Op::Set {
                f,
                d,
                a: sa,
                b: sb,
                comb,
                float_result,
            } => {
                let mut b = [0u64; 32];
                self.fetch(w, *sa, &mut a);
                self.fetch(w, *sb, &mut b);
                f(&mut out, &a, &b, &a, &a);
                if let Some((op, cs)) = comb {
                    let mut c = [0u64; 32];
                    self.fetch(w, *cs, &mut c);
                    combine(&mut out, &c, *op);
                }
                for o in out.iter_mut() {
                    *o = match (*o != 0, float_result) {
                        (true, true) => 0x3f80_0000,
                        (true, false) => 0xffff_ffff,
                        (false, _) => 0,
                    };
                }
                write(w, *d, &out, emask);
            }
            Op::SetpPair {
                lo,
                hi,
                p,
                q,
                a: sa,
                b: sb,
                comb,
            } => {
                // `setp.cmp.f16x2 p|q`: p from the low halves, q from the high.
                let mut b = [0u64; 32];
                let mut c = [0u64; 32];
                self.fetch(w, *sa, &mut a);
                self.fetch(w, *sb, &mut b);
                if let Some((_, cs)) = comb {
                    self.fetch(w, *cs, &mut c);
                }
                for (f, dst) in [(lo, p), (hi, q)] {
                    f(&mut out, &a, &b, &a, &a);
                    if let Some((op, _)) = comb {
                        combine(&mut out, &c, *op);
                    }
                    write(w, *dst, &out, emask);
                }
            }
            Op::SetHalf {
                lo,
                hi,
                d,
                a: sa,
                b: sb,
                comb,
                one,
            } => {
                let mut b = [0u64; 32];
                let mut c = [0u64; 32];
                self.fetch(w, *sa, &mut a);
                self.fetch(w, *sb, &mut b);
                if let Some((_, cs)) = comb {
                    self.fetch(w, *cs, &mut c);
                }
                lo(&mut out, &a, &b, &a, &a);
                if let Some((op, _)) = comb {
                    combine(&mut out, &c, *op);
                }
                let mut res = [0u64; 32];
                for (r, o) in res.iter_mut().zip(out.iter()) {
                    *r = if *o != 0 { *one } else { 0 };
                }
                if let Some(hi) = hi {
                    hi(&mut out, &a, &b, &a, &a);
                    if let Some((op, _)) = comb {
                        combine(&mut out, &c, *op);
                    }
                    for (r, o) in res.iter_mut().zip(out.iter()) {
                        if *o != 0 {
                            *r |= *one << 16;
                        }
                    }
                }
                write(w, *d, &res, emask);
            }
            Op::Pack { d, parts, n, bits } => {
                let mut p = [0u64; 32];
                for (k, part) in parts.iter().enumerate().take(*n as usize) {
                    self.fetch(w, *part, &mut p);
                    let mask = if *bits == 64 {
                        u64::MAX
                    } else {
                        (1u64 << bits) - 1
                    };
                    for (o, v) in out.iter_mut().zip(p.iter()) {
                        *o |= (v & mask) << (k as u32 * *bits as u32);
                    }
                }
                write(w, *d, &out, emask);
            }
            Op::Mov2 { d, s } => {
                let mut hi = [0u64; 32];
                self.fetch(w, s[0], &mut a);
                self.fetch(w, s[1], &mut hi);
                write(w, d[0], &a, emask);
                write(w, d[1], &hi, emask);
            }
            Op::AtomWide(x) => self.atom_wide(w, x, emask, pc)?,
            Op::Unpack { d, a: src, n, bits } => {
                self.fetch(w, *src, &mut a);
                let mask = if *bits == 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                };
                for (k, dk) in d.iter().enumerate().take(*n as usize) {
                    for (o, v) in out.iter_mut().zip(a.iter()) {
                        *o = (v >> (k as u32 * *bits as u32)) & mask;
                    }
                    write(w, *dk, &out, emask);
                }
            }
            Op::Ld {
                space,
                ty,
                n,
                d,
                addr,
                off,
            } => self.load(w, *space, *ty, *n, d, *addr, *off, emask, pc)?,
            Op::St {
                space,
                ty,
                n,
                v,
                addr,
                off,
            } => self.store(w, *space, *ty, *n, v, *addr, *off, emask, pc)?,
            Op::Atom {
                space,
                op,
                ty,
                d,
                addr,
                off,
                b,
                c,
            } => self.atom(w, *space, *op, *ty, *d, *addr, *off, *b, *c, emask, pc)?,
            Op::Nop | Op::WarpSync { .. } => {}
            Op::Vprintf { fmt, args, ret } => self.vprintf(w, emask, *fmt, *args, *ret),
            Op::Malloc { size, ret, align } => {
                self.device_malloc(w, emask, *size, *ret, *align, pc)?
            }
            Op::Free { ptr } => self.device_free(w, emask, *ptr, pc)?,
            Op::DeviceRuntime { call, args, ret } => {
                self.device_runtime(w, emask, *call, args, *ret, pc)?
            }
            Op::Alloca { d, size, align } => self.alloca(w, emask, *d, *size, *align, pc)?,
            Op::StackSave { d } => self.stack_save(w, emask, *d),
            Op::StackRestore { a } => self.stack_restore(w, emask, *a, pc)?,
            Op::SetMaxNreg => self.set_max_nreg(w, emask, pc)?,
            Op::FrameAddr { d, off, func } => self.frame_addr(w, emask, *d, *off, *func),
            Op::SetConditional { handle, value } => {
                self.set_conditional(w, emask, *handle, *value, pc)?
            }
            Op::Shfl {
                mode,
                d,
                p,
                a: sa,
                b: sb,
                c: sc,
                _mask: _,
            } => {
                let (mut b, mut c) = ([0u64; 32], [0u64; 32]);
                self.fetch(w, *sa, &mut a);
                self.fetch(w, *sb, &mut b);
                self.fetch(w, *sc, &mut c);
                let mut pv = [0u64; 32];
                // The common form: one lane offset and the whole warp as one segment for
                // every lane (no segment mask; the clamp 0 for `up`, whose bound is the
                // lowest lane, 31 for the others): the shuffle is a shift, a permutation
                // or a broadcast of the 32 values (the general loop below, whose loads
                // depend on each lane's operands, does not vectorise).
                let s = (b[0] & 0x1f) as usize;
                let clamp = if matches!(mode, ShflMode::Up) {
                    0
                } else {
                    0x1f
                };
                let whole = b.iter().all(|x| *x & 0x1f == s as u64)
                    && c.iter().all(|x| *x & 0x1f1f == clamp);
                if whole {
                    // One copy per mode (a match inside the loop over the lanes kept it
                    // from vectorising): lanes with no source keep their own value and
                    // report false.
                    match mode {
                        ShflMode::Up => {
                            out[..s].copy_from_slice(&a[..s]);
                            out[s..].copy_from_slice(&a[..32 - s]);
                            pv[s..].fill(1);
                        }
                        ShflMode::Down => {
                            out[..32 - s].copy_from_slice(&a[s..]);
                            out[32 - s..].copy_from_slice(&a[32 - s..]);
                            pv[..32 - s].fill(1);
                        }
                        ShflMode::Bfly => {
                            for (lane, o) in out.iter_mut().enumerate() {
                                *o = a[lane ^ s];
                            }
                            pv.fill(1);
                        }
                        ShflMode::Idx => {
                            out.fill(a[s]);
                            pv.fill(1);
                        }
                    }
                    write(w, *d, &out, emask);
                    write(w, *p, &pv, emask);
                    return Ok(());
                }
                for lane in 0..32usize {
                    let bval = (b[lane] & 0x1f) as i32;
                    let cval = (c[lane] & 0x1f) as i32;
                    let seg = ((c[lane] >> 8) & 0x1f) as i32;
                    let l = lane as i32;
                    let max_lane = (l & seg) | (cval & !seg);
                    let min_lane = l & seg;
                    let (j, ok) = match mode {
                        ShflMode::Up => (l - bval, l - bval >= max_lane),
                        ShflMode::Down => (l + bval, l + bval <= max_lane),
                        ShflMode::Bfly => (l ^ bval, (l ^ bval) <= max_lane),
                        ShflMode::Idx => {
                            let j = min_lane | (bval & !seg);
                            (j, j <= max_lane)
                        }
                    };
                    let j = if ok { j } else { l };
                    out[lane] = a[(j & 31) as usize];
                    pv[lane] = ok as u64;
                }
                write(w, *d, &out, emask);
                write(w, *p, &pv, emask);
            }
            Op::Vote {
                mode,
                d,
                a: sa,
                mask,
            } => {
                let mut mk = [0u64; 32];
                self.fetch(w, *sa, &mut a);
                self.fetch(w, *mask, &mut mk);
                // Lanes may name different member masks (cooperative groups'
                // partitions): each group votes among its own members.
                for (members, lanes) in member_groups(emask, &mk) {
                    let mut bits = 0u32;
                    for_lanes(members, |l| {
                        if a[l] != 0 {
                            bits |= 1 << l
                        }
                    });
                    let v = match mode {
                        VoteMode::Ballot => bits as u64,
                        VoteMode::All => (bits == members) as u64,
                        VoteMode::Any => (bits != 0) as u64,
                        VoteMode::Uni => (bits == 0 || bits == members) as u64,
                    };
                    for_lanes(lanes, |l| out[l] = v);
                }
                write(w, *d, &out, emask);
            }
            Op::Activemask { d } => write(w, *d, &[emask as u64; 32], emask),
            Op::Elect { d, p, mask } => {
                let mut mk = [0u64; 32];
                self.fetch(w, *mask, &mut mk);
                let mut pv = [0u64; 32];
                for (members, lanes) in member_groups(emask, &mk) {
                    let leader = members.trailing_zeros();
                    if members != 0 {
                        pv[leader as usize] = 1;
                    }
                    for_lanes(lanes, |l| out[l] = leader as u64 & 31);
                }
                write(w, *d, &out, emask);
                write(w, *p, &pv, emask);
            }
            Op::Carry {
                op,
                carry_in,
                carry_out,
                wide,
                d,
                a: sa,
                b: sb,
                c: sc,
            } => {
                let (mut b, mut c) = ([0u64; 32], [0u64; 32]);
                self.fetch(w, *sa, &mut a);
                self.fetch(w, *sb, &mut b);
                self.fetch(w, *sc, &mut c);
                let (bits, mask) = if *wide {
                    (64, u64::MAX as u128)
                } else {
                    (32, u32::MAX as u128)
                };
                let mut flags = 0u32;
                for_lanes(emask, |l| {
                    let cin = (*carry_in && w.cc >> l & 1 != 0) as u128;
                    let (x, y, z) = (
                        a[l] as u128 & mask,
                        b[l] as u128 & mask,
                        c[l] as u128 & mask,
                    );
                    let (r, carry) = match op {
                        CarryOp::Add => {
                            let r = x + y + cin;
                            (r, r >> bits != 0)
                        }
                        // The flag of a subtraction is the borrow.
                        CarryOp::Sub => (x.wrapping_sub(y).wrapping_sub(cin), x < y + cin),
                        CarryOp::MadLo => {
                            let r = ((x * y) & mask) + z + cin;
                            (r, r >> bits != 0)
                        }
                        CarryOp::MadHi => {
                            let r = ((x * y) >> bits) + z + cin;
                            (r, r >> bits != 0)
                        }
                    };
                    out[l] = (r & mask) as u64;
                    flags |= (carry as u32) << l;
                });
                write(w, *d, &out, emask);
                if *carry_out {
                    w.cc = (w.cc & !emask) | (flags & emask);
                }
            }
            Op::Match {
                all,
                wide,
                d,
                p,
                a: sa,
                mask,
            } => {
                let mut mk = [0u64; 32];
                self.fetch(w, *sa, &mut a);
                self.fetch(w, *mask, &mut mk);
                let val = |l: usize| if *wide { a[l] } else { a[l] as u32 as u64 };
                let mut pv = [0u64; 32];
                for (members, lanes) in member_groups(emask, &mk) {
                    for_lanes(lanes, |l| {
                        let mut same = 0u32;
                        for_lanes(members, |k| {
                            if val(k) == val(l) {
                                same |= 1 << k
                            }
                        });
                        if *all {
                            let eq = same == members;
                            out[l] = if eq { members as u64 } else { 0 };
                            pv[l] = eq as u64;
                        } else {
                            out[l] = same as u64;
                        }
                    });
                }
                write(w, *d, &out, emask);
                write(w, *p, &pv, emask);
            }
            Op::Redux {
                op,
                signed,
                d,
                a: sa,
                mask,
            } => {
                let mut mk = [0u64; 32];
                self.fetch(w, *sa, &mut a);
                self.fetch(w, *mask, &mut mk);
                // Each lane's result is over the members its own mask names: lanes of
                // one warp in different groups (cooperative groups' labeled partitions)
                // reduce apart.
                for (members, lanes) in member_groups(emask, &mk) {
                    let mut acc: Option<u32> = None;
                    for_lanes(members, |l| {
                        let x = a[l] as u32;
                        acc = Some(match acc {
                            None => x,
                            Some(y) => match op {
                                ReduxOp::Add => y.wrapping_add(x),
                                ReduxOp::And => y & x,
                                ReduxOp::Or => y | x,
                                ReduxOp::Xor => y ^ x,
                                ReduxOp::Min if *signed => (y as i32).min(x as i32) as u32,
                                ReduxOp::Max if *signed => (y as i32).max(x as i32) as u32,
                                ReduxOp::Min => y.min(x),
                                ReduxOp::Max => y.max(x),
                            },
                        });
                    });
                    for_lanes(lanes, |l| out[l] = acc.unwrap_or(0) as u64);
                }
                write(w, *d, &out, emask);
            }
            Op::Mma(m) => self.mma(w, m, emask),
            Op::WmmaLoad(m) => self.wmma_load(w, m, emask, pc)?,
            Op::WmmaStore(m) => self.wmma_store(w, m, emask, pc)?,
            Op::Ldmatrix {
                n,
                trans,
                space,
                d,
                addr,
                off,
            } => self.ldmatrix(w, *n, *trans, *space, d, *addr, *off, emask, pc)?,
            Op::Stmatrix {
                n,
                trans,
                space,
                v,
                addr,
                off,
            } => self.stmatrix(w, *n, *trans, *space, v, *addr, *off, emask, pc)?,
            Op::Movmatrix { d, a: sa } => self.movmatrix(w, *d, *sa, emask),
            Op::Image(op) => return self.image(w, op, emask, pc),
            Op::Async(op) => return self.async_op(w, op, emask, pc),
            Op::ClusterArrive => {
                self.cluster_arrive(w, emask);
                return Ok(());
            }
            Op::GetCtaRank { d, a, generic } => {
                return self.get_cta_rank(w, *d, *a, *generic, emask, pc)
            }
            // Control instructions are handled in `run_group`.
            _ => {}
        }
        Ok(())
    }

    /// Where the bytes at `addr` live; global (and generic-global) addresses only through
    /// the memory's translation, cached per warp.
    #[allow(clippy::too_many_arguments)]
    fn locate(
        &mut self,
        w: &mut Warp,
        space: Space,
        addr: u64,
        size: u64,
        access: Access,
        lane: u32,
        pc: u32,
    ) -> Result<Loc, Fault> {
        if addr % size.min(16) != 0 {
            let detail = format!("a {size}-byte access must be {size}-byte aligned");
            return Err(self.fault(
                w,
                lane,
                pc,
                FaultKind::MisalignedAddress,
                Some(addr),
                detail,
            ));
        }
        let space = match space {
            Space::Generic => {
                if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&addr) {
                    // The block's own window, or another block's of the cluster.
                    return self.locate(
                        w,
                        Space::SharedCluster,
                        addr - SHARED_WINDOW,
                        size,
                        access,
                        lane,
                        pc,
                    );
                } else if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&addr) {
                    return self.locate(
                        w,
                        Space::Local,
                        addr - LOCAL_WINDOW,
                        size,
                        access,
                        lane,
                        pc,
                    );
                } else if (PARAM_WINDOW..PARAM_WINDOW + WINDOW_SIZE).contains(&addr) {
                    if access != Access::Read {
                        let detail = "kernel parameters are read-only".to_string();
                        return Err(self.fault(
                            w,
                            lane,
                            pc,
                            FaultKind::IllegalAddress,
                            Some(addr),
                            detail,
                        ));
                    }
                    return self.locate(
                        w,
                        Space::KParam,
                        addr - PARAM_WINDOW,
                        size,
                        access,
                        lane,
                        pc,
                    );
                }
                Space::Global
            }
            s => s,
        };
        match space {
            Space::Shared => {
                if !in_window(addr, size, self.shared_limit) {
                    let detail = format!(
                        "shared memory: the block has {} bytes ({} its own after the {} the system reserves)",
                        self.shared_limit,
                        self.shared_limit - RESERVED_SHARED,
                        RESERVED_SHARED
                    );
                    return Err(self.fault(
                        w,
                        lane,
                        pc,
                        FaultKind::IllegalAddress,
                        Some(addr),
                        detail,
                    ));
                }
                Ok(Loc::Shared(addr as usize))
            }
            Space::SharedCluster if addr < CLUSTER_RANK_STRIDE => {
                self.locate(w, Space::Shared, addr, size, access, lane, pc)
            }
            Space::SharedCluster => self.locate_remote(w, addr, size, lane, pc),
            Space::Local => {
                if !in_window(addr, size, self.local_bytes as u64) {
                    let detail = format!("local memory: the thread has {} bytes", self.local_bytes);
                    return Err(self.fault(
                        w,
                        lane,
                        pc,
                        FaultKind::IllegalAddress,
                        Some(addr),
                        detail,
                    ));
                }
                let base = (w.id as usize * 32 + lane as usize) * self.local_bytes;
                Ok(Loc::Local(base + addr as usize))
            }
            Space::KParam => {
                // `ld.param` takes the buffer's offset, or (as decode writes parameter
                // symbols) its address in the parameter window; anything else is outside.
                let a = if (PARAM_WINDOW..PARAM_WINDOW + WINDOW_SIZE).contains(&addr) {
                    addr - PARAM_WINDOW
                } else {
                    addr
                };
                if !in_window(a, size, self.launch.params.len() as u64) {
                    let detail = format!(
                        "kernel parameters: the launch passed {} bytes",
                        self.launch.params.len()
                    );
                    return Err(self.fault(
                        w,
                        lane,
                        pc,
                        FaultKind::IllegalAddress,
                        Some(addr),
                        detail,
                    ));
                }
                Ok(Loc::Param(a as usize))
            }
            _ => {
                let write = access != Access::Read;
                if let Some(p) = tlb_lookup(&self.tlb, addr, size, write) {
                    return Ok(Loc::Host(p));
                }
                if (GRID_WINDOW..GRID_WINDOW + WINDOW_SIZE).contains(&addr) {
                    return self.locate_grid_workspace(w, addr, size, access, lane, pc);
                }
                if let Some(detail) = calls::describe_function_address(self.prog, addr) {
                    return Err(self.fault(
                        w,
                        lane,
                        pc,
                        FaultKind::IllegalAddress,
                        Some(addr),
                        detail,
                    ));
                }
                match self.mem.translate(addr, size, access) {
                    Ok(s)
                        if addr >= s.base
                            && in_window(addr - s.base, size, s.len)
                            && !s.host.is_null()
                            && (!write || s.writable) =>
                    {
                        self.tlb[self.tlb_next] = TlbEntry {
                            base: s.base,
                            len: s.len,
                            host: s.host,
                            writable: s.writable as u64,
                        };
                        self.tlb_next = (self.tlb_next + 1) % TLB_ENTRIES;
                        Ok(Loc::Host(s.host.wrapping_add((addr - s.base) as usize)))
                    }
                    Ok(_) => {
                        let detail =
                            "the memory's translation did not cover the access".to_string();
                        Err(self.fault(w, lane, pc, FaultKind::IllegalAddress, Some(addr), detail))
                    }
                    Err(f) => Err(self.fault(
                        w,
                        lane,
                        pc,
                        FaultKind::IllegalAddress,
                        Some(addr),
                        f.message,
                    )),
                }
            }
        }
    }

    /// An access to the grid workspace: the executor's own, inside the window only in a
    /// cooperative launch; elsewhere an illegal address, as the null workspace pointer an
    /// ordinary launch has on a GPU.
    fn locate_grid_workspace(
        &mut self,
        w: &Warp,
        addr: u64,
        size: u64,
        access: Access,
        lane: u32,
        pc: u32,
    ) -> Result<Loc, Fault> {
        let offset = addr - GRID_WINDOW;
        if self.grid_ws.is_null() || !in_window(offset, size, GRID_WORKSPACE_BYTES) {
            let detail = if self.grid_ws.is_null() {
                "the grid workspace exists only in a cooperative launch".to_string()
            } else {
                format!("the grid workspace has {GRID_WORKSPACE_BYTES} bytes")
            };
            return Err(self.fault(w, lane, pc, FaultKind::IllegalAddress, Some(addr), detail));
        }
        // A read of the workspace is a grid sync's spin (its arrival is an atomic): after a
        // few, the block gives its host thread to the blocks it waits for, rather than spin
        // through its slice.
        if access == Access::Read {
            self.grid_polls += 1;
            if self.grid_polls >= GRID_POLLS_BEFORE_YIELD {
                self.yielding = true;
            }
        }
        // `grid_ws` points at the launch's GRID_WORKSPACE_BYTES, alive while its blocks run
        // and accessed only atomically (`host_read` and friends), like device memory.
        Ok(Loc::Host(self.grid_ws.wrapping_add(offset as usize)))
    }

    fn read(&self, loc: &Loc, size: u64) -> u64 {
        match *loc {
            Loc::Shared(i) => read_le(&self.shared, i, size),
            Loc::Remote(r, i) => read_le(&self.cluster_blocks[r].shared, i, size),
            Loc::Local(i) => read_le(&self.local, i, size),
            Loc::Param(i) => read_le(self.launch.params, i, size),
            // Safety: `locate` got this pointer from `Memory::translate`, valid for `size`
            // bytes (the trait's contract), aligned as checked there.
            Loc::Host(p) => unsafe { host_read(p, size) },
        }
    }

    /// The host address of a whole vector of global memory (`n` elements of `size` bytes,
    /// at most 16 bytes, aligned to the whole as checked before), for one host access:
    /// a GPU moves an aligned vector in one transaction, and programs rely on it. CUB's
    /// decoupled look-back stores a tile's status and value with one
    /// `st.relaxed.gpu.v2.u32` and reads them with one `ld.relaxed.gpu.v2.u32`; done
    /// element by element, a block running on another host thread could see a new status
    /// beside an old value and add a tile twice. None (the caller goes element by element,
    /// faulting as before) outside global memory or where one span does not hold it all.
    #[allow(clippy::too_many_arguments)]
    fn vector_host(
        &mut self,
        w: &mut Warp,
        space: Space,
        a0: u64,
        size: u64,
        n: u8,
        access: Access,
        lane: u32,
        pc: u32,
    ) -> Option<*mut u8> {
        let total = size * n as u64;
        if total > 16 || !matches!(space, Space::Global | Space::Generic) || a0 >= SHARED_WINDOW {
            return None;
        }
        let write = access != Access::Read;
        if let Some(p) = tlb_lookup(&self.tlb, a0, total, write) {
            return Some(p);
        }
        // The first element's translation fills the cache with its span.
        match self.locate(w, space, a0, size, access, lane, pc) {
            Ok(Loc::Host(_)) => tlb_lookup(&self.tlb, a0, total, write),
            _ => None,
        }
    }

    fn write_mem(&mut self, loc: &Loc, size: u64, v: u64) {
        match *loc {
            Loc::Shared(i) => write_le(&mut self.shared, i, size, v),
            Loc::Remote(r, i) => write_le(&mut self.cluster_blocks[r].shared, i, size, v),
            Loc::Local(i) => write_le(&mut self.local, i, size, v),
            Loc::Param(_) => {}
            // Safety: as in `read`, and `locate` asked for write access.
            Loc::Host(p) => unsafe { host_write(p, size, v) },
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn load(
        &mut self,
        w: &mut Warp,
        space: Space,
        ty: Ty,
        n: u8,
        d: &[Dst; 4],
        addr: Src,
        off: i64,
        emask: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let mut base = [0u64; 32];
        self.fetch(w, addr, &mut base);
        let size = ty.bytes() as u64;
        if n == 1 && space == Space::KParam {
            if let Src::Imm(a) = addr {
                // Every lane reads the same parameter: read it once.
                let a = a.wrapping_add(off as u64);
                let lane = emask.trailing_zeros();
                let loc = self.locate(w, space, a, size, Access::Read, lane, pc)?;
                let v = extend(self.read(&loc, size), ty);
                write(w, d[0], &[v; 32], emask);
                return Ok(());
            }
        }
        if n == 1 {
            if let Some(done) = self.load_block(w, space, ty, d[0], &base, off, emask) {
                return done;
            }
        }
        if n == 1 {
            // The common case, kept short: scalar loads hitting the warp's translation
            // cache or the block's shared memory; anything else takes `locate`.
            let mut out = [0u64; 32];
            let mut m = emask;
            while m != 0 {
                let l = m.trailing_zeros();
                m &= m - 1;
                let a = base[l as usize].wrapping_add(off as u64);
                let fast = if a % size != 0 {
                    None
                } else {
                    match space {
                        Space::Shared if in_window(a, size, self.shared_limit) => {
                            Some(read_le(&self.shared, a as usize, size))
                        }
                        Space::Global | Space::Generic if a < SHARED_WINDOW => {
                            // Safety: a pointer from `Memory::translate` for this range
                            // (the cache checks it), aligned as checked above.
                            tlb_lookup(&self.tlb, a, size, false)
                                .map(|p| unsafe { host_read(p, size) })
                        }
                        _ => None,
                    }
                };
                let raw = match fast {
                    Some(v) => v,
                    None => {
                        let loc = self.locate(w, space, a, size, Access::Read, l, pc)?;
                        self.read(&loc, size)
                    }
                };
                out[l as usize] = extend(raw, ty);
            }
            write(w, d[0], &out, emask);
            return Ok(());
        }
        let mut vals = [[0u64; 32]; 4];
        let mut m = emask;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            let a0 = base[l as usize].wrapping_add(off as u64);
            if n > 1 && a0 % (size * n as u64) != 0 {
                let detail = format!(
                    "a {}-byte vector access must be {}-byte aligned",
                    size * n as u64,
                    size * n as u64
                );
                return Err(self.fault(w, l, pc, FaultKind::MisalignedAddress, Some(a0), detail));
            }
            if n > 1 {
                if let Some(p) = self.vector_host(w, space, a0, size, n, Access::Read, l, pc) {
                    // Safety: `vector_host` found the whole vector readable at `p`.
                    let elems = unsafe { host_read_vector(p, size, n) };
                    for (k, val) in vals.iter_mut().enumerate().take(n as usize) {
                        val[l as usize] = extend(elems[k], ty);
                    }
                    continue;
                }
            }
            for (k, val) in vals.iter_mut().enumerate().take(n as usize) {
                let a = a0.wrapping_add(k as u64 * size);
                let loc = self.locate(w, space, a, size, Access::Read, l, pc)?;
                let raw = self.read(&loc, size);
                val[l as usize] = extend(raw, ty);
            }
        }
        for k in 0..n as usize {
            write(w, d[k], &vals[k], emask);
        }
        Ok(())
    }

    /// A scalar load whose active lanes all fall, aligned, in one cached span of global
    /// memory or in shared memory (coalesced accesses): one check, then a tight loop.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn load_block(
        &self,
        w: &mut Warp,
        space: Space,
        ty: Ty,
        d: Dst,
        base: &Lanes,
        off: i64,
        emask: u32,
    ) -> Option<Result<(), Fault>> {
        let size = ty.bytes() as u64;
        let (lo, hi) = lane_range(base, off, emask, size)?;
        let mut out = [0u64; 32];
        match space {
            Space::Global | Space::Generic if hi < SHARED_WINDOW => {
                let p = tlb_lookup(&self.tlb, lo, hi - lo + size, false)?;
                let at =
                    |l: usize| p.wrapping_add((base[l].wrapping_add(off as u64) - lo) as usize);
                match (size, (p as usize) % size as usize == 0) {
                    // Every lane's address is a multiple of the size and so is `p`: each
                    // lane's pointer is aligned, and the loops below need no checks.
                    (4, true) => for_lanes(emask, |l| {
                        // Safety: inside the span checked above (lo..=hi), aligned.
                        let v = unsafe { AtomicU32::from_ptr(at(l) as *mut u32) }
                            .load(Ordering::Relaxed);
                        out[l] = extend(v as u64, ty);
                    }),
                    (8, true) => for_lanes(emask, |l| {
                        // Safety: as above.
                        out[l] = unsafe { AtomicU64::from_ptr(at(l) as *mut u64) }
                            .load(Ordering::Relaxed);
                    }),
                    // Safety: as above.
                    _ => for_lanes(emask, |l| {
                        out[l] = extend(unsafe { host_read(at(l), size) }, ty)
                    }),
                }
            }
            Space::Shared if in_window(hi, size, self.shared_limit) => {
                for_lanes(emask, |l| {
                    let a = base[l].wrapping_add(off as u64);
                    out[l] = extend(read_le(&self.shared, a as usize, size), ty);
                });
            }
            _ => return None,
        }
        write(w, d, &out, emask);
        Some(Ok(()))
    }

    /// The store twin of `load_block`; false when the slow path must run.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn store_block(
        &mut self,
        space: Space,
        size: u64,
        v: &Lanes,
        base: &Lanes,
        off: i64,
        emask: u32,
    ) -> bool {
        let Some((lo, hi)) = lane_range(base, off, emask, size) else {
            return false;
        };
        match space {
            Space::Global | Space::Generic if hi < SHARED_WINDOW => {
                let Some(p) = tlb_lookup(&self.tlb, lo, hi - lo + size, true) else {
                    return false;
                };
                for_lanes(emask, |l| {
                    let a = base[l].wrapping_add(off as u64);
                    // Safety: inside the writable span checked above, aligned.
                    unsafe { host_write(p.wrapping_add((a - lo) as usize), size, v[l]) };
                });
            }
            Space::Shared if in_window(hi, size, self.shared_limit) => {
                for_lanes(emask, |l| {
                    let a = base[l].wrapping_add(off as u64);
                    write_le(&mut self.shared, a as usize, size, v[l]);
                });
            }
            _ => return false,
        }
        true
    }

    #[allow(clippy::too_many_arguments)]
    fn store(
        &mut self,
        w: &mut Warp,
        space: Space,
        ty: Ty,
        n: u8,
        v: &[Src; 4],
        addr: Src,
        off: i64,
        emask: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let mut base = [0u64; 32];
        self.fetch(w, addr, &mut base);
        let size = ty.bytes() as u64;
        let mut vals = [[0u64; 32]; 4];
        for k in 0..n as usize {
            self.fetch(w, v[k], &mut vals[k]);
        }
        if n == 1 && self.store_block(space, size, &vals[0], &base, off, emask) {
            return Ok(());
        }
        let mut m = emask;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            let a0 = base[l as usize].wrapping_add(off as u64);
            if n == 1 && a0 % size == 0 {
                // The common case, kept short: scalar stores hitting the warp's
                // translation cache or the block's shared memory.
                let v = vals[0][l as usize];
                match space {
                    Space::Shared if in_window(a0, size, self.shared_limit) => {
                        write_le(&mut self.shared, a0 as usize, size, v);
                        continue;
                    }
                    Space::Global | Space::Generic if a0 < SHARED_WINDOW => {
                        if let Some(p) = tlb_lookup(&self.tlb, a0, size, true) {
                            // Safety: a writable span from `Memory::translate` covering
                            // the access, aligned as checked.
                            unsafe { host_write(p, size, v) };
                            continue;
                        }
                    }
                    _ => {}
                }
            }
            if n > 1 && a0 % (size * n as u64) != 0 {
                let detail = format!(
                    "a {}-byte vector access must be {}-byte aligned",
                    size * n as u64,
                    size * n as u64
                );
                return Err(self.fault(w, l, pc, FaultKind::MisalignedAddress, Some(a0), detail));
            }
            if n > 1 {
                if let Some(p) = self.vector_host(w, space, a0, size, n, Access::Write, l, pc) {
                    let mut elems = [0u64; 4];
                    for (k, e) in elems.iter_mut().enumerate().take(n as usize) {
                        *e = vals[k][l as usize];
                    }
                    // Safety: `vector_host` found the whole vector writable at `p`.
                    unsafe { host_write_vector(p, size, n, &elems) };
                    continue;
                }
            }
            for (k, val) in vals.iter().enumerate().take(n as usize) {
                let a = a0.wrapping_add(k as u64 * size);
                let loc = self.locate(w, space, a, size, Access::Write, l, pc)?;
                if let Loc::Param(_) = loc {
                    let detail = "kernel parameters are read-only".to_string();
                    return Err(self.fault(w, l, pc, FaultKind::IllegalAddress, Some(a), detail));
                }
                self.write_mem(&loc, size, val[l as usize]);
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn atom(
        &mut self,
        w: &mut Warp,
        space: Space,
        op: AtomOp,
        ty: Ty,
        d: Dst,
        addr: Src,
        off: i64,
        b: Src,
        c: Src,
        emask: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let (mut base, mut bv, mut cv, mut out) = ([0u64; 32], [0u64; 32], [0u64; 32], [0u64; 32]);
        self.fetch(w, addr, &mut base);
        self.fetch(w, b, &mut bv);
        self.fetch(w, c, &mut cv);
        let size = ty.bytes() as u64;
        let mut m = emask;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            let a = base[l as usize].wrapping_add(off as u64);
            let loc = self.locate(w, space, a, size, Access::Atomic, l, pc)?;
            let (x, y) = (bv[l as usize], cv[l as usize]);
            out[l as usize] = match loc {
                Loc::Host(p) if (p as usize) % size as usize != 0 => {
                    let detail = "the memory's host span is not aligned for an atomic".to_string();
                    return Err(self.fault(
                        w,
                        l,
                        pc,
                        FaultKind::MisalignedAddress,
                        Some(a),
                        detail,
                    ));
                }
                // Global memory flushes f32 subnormals in `atom.add`, as the ISA says and
                // the H200 does (corpus f32_atomic_subnormals); shared memory's atomics
                // below do not, nor do bulk reductions (`host_atomic`).
                Loc::Host(p) if op == AtomOp::Add && ty == Ty::F32 => {
                    // Safety: from `Memory::translate` with atomic access, aligned to 4
                    // (checked above).
                    let a = unsafe { AtomicU32::from_ptr(p as *mut u32) };
                    let f = |v: u32| Some(add_f32_ftz(v, x as u32));
                    a.fetch_update(Ordering::SeqCst, Ordering::SeqCst, f)
                        .unwrap_or_else(|v| v) as u64
                }
                // Safety: from `Memory::translate` with atomic access, aligned (checked).
                Loc::Host(p) => unsafe { host_atomic(p, op, ty, x, y) },
                Loc::Param(_) => {
                    let detail = "kernel parameters are read-only".to_string();
                    return Err(self.fault(w, l, pc, FaultKind::IllegalAddress, Some(a), detail));
                }
                _ => {
                    // Shared and local memory belong to this host thread alone (a
                    // cluster's blocks all run on one).
                    let old = self.read(&loc, size);
                    let (new, ret) = atomic_result(op, ty, old, x, y);
                    self.write_mem(&loc, size, new);
                    ret
                }
            };
        }
        write(w, d, &out, emask);
        Ok(())
    }
}

impl BlockCtx<'_> {
    /// `atom`/`red` of `.b128` and the vector atomics (`Op::AtomWide`): each lane's
    /// access aligned to its whole size, each element atomic on its own.
    fn atom_wide(&mut self, w: &mut Warp, x: &AtomWide, emask: u32, pc: u32) -> Result<(), Fault> {
        let wide = x.elem == Ty::B128;
        let esize = if wide { 8 } else { x.elem.bytes() as u64 };
        let total = if wide { 16 } else { esize * x.n as u64 };
        let fetch_all = |this: &Self, w: &Warp, v: &[Src]| {
            v.iter()
                .map(|s| {
                    let mut l = [0u64; 32];
                    this.fetch(w, *s, &mut l);
                    l
                })
                .collect::<Vec<Lanes>>()
        };
        let mut base = [0u64; 32];
        self.fetch(w, x.addr, &mut base);
        let (b, c) = (fetch_all(self, w, &x.b), fetch_all(self, w, &x.c));
        let mut out = vec![[0u64; 32]; x.d.len()];
        let mut m = emask;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            let li = l as usize;
            let a = base[li].wrapping_add(x.off as u64);
            if a % total != 0 {
                let detail = format!("a {total}-byte atomic must be {total}-byte aligned");
                return Err(self.fault(w, l, pc, FaultKind::MisalignedAddress, Some(a), detail));
            }
            let loc = self.locate(w, x.space, a, total, Access::Atomic, l, pc)?;
            match loc {
                Loc::Host(p) if (p as usize) % esize as usize != 0 => {
                    let detail = "the memory's host span is not aligned for an atomic".to_string();
                    return Err(self.fault(
                        w,
                        l,
                        pc,
                        FaultKind::MisalignedAddress,
                        Some(a),
                        detail,
                    ));
                }
                Loc::Param(_) => {
                    let detail = "kernel parameters are read-only".to_string();
                    return Err(self.fault(w, l, pc, FaultKind::IllegalAddress, Some(a), detail));
                }
                Loc::Host(p) if wide => {
                    let lock = &WIDE_LOCKS[(p as usize >> 4) % WIDE_LOCKS.len()];
                    let _held = lock.lock().unwrap_or_else(|e| e.into_inner());
                    // Safety: from `Memory::translate` for 16 bytes with atomic access,
                    // 8-byte aligned (checked); the lock orders it against other `.b128`
                    // atomics on these bytes.
                    let (lo, hi) = unsafe {
                        (
                            AtomicU64::from_ptr(p as *mut u64),
                            AtomicU64::from_ptr(p.add(8) as *mut u64),
                        )
                    };
                    let old = [lo.load(Ordering::SeqCst), hi.load(Ordering::SeqCst)];
                    if let Some(new) = wide_result(x.op, old, &b, &c, li) {
                        lo.store(new[0], Ordering::SeqCst);
                        hi.store(new[1], Ordering::SeqCst);
                    }
                    out[0][li] = old[0];
                    out[1][li] = old[1];
                }
                Loc::Host(p) => {
                    for (k, bk) in b.iter().enumerate() {
                        // Safety: inside the span `locate` gave for the whole vector
                        // (`b` has its `n` elements), aligned to the element (checked).
                        let e = unsafe { p.add(k * esize as usize) };
                        let old = if x.elem == Ty::F32 {
                            // Safety: as above.
                            let a = unsafe { AtomicU32::from_ptr(e as *mut u32) };
                            let f = |v: u32| Some(add_f32_ftz(v, bk[li] as u32));
                            a.fetch_update(Ordering::SeqCst, Ordering::SeqCst, f)
                                .unwrap_or_else(|v| v) as u64
                        } else {
                            // Safety: as above.
                            unsafe { host_atomic_narrow(e, x.op, x.elem, bk[li], 0) }
                        };
                        if let Some(o) = out.get_mut(k) {
                            o[li] = old;
                        }
                    }
                }
                _ => {
                    // Shared memory: this host thread's alone (see `atom`).
                    let at = |k: u64| match loc {
                        Loc::Shared(i) => Loc::Shared(i + k as usize),
                        Loc::Remote(r, i) => Loc::Remote(r, i + k as usize),
                        Loc::Local(i) => Loc::Local(i + k as usize),
                        Loc::Param(i) => Loc::Param(i + k as usize),
                        Loc::Host(p) => Loc::Host(p.wrapping_add(k as usize)),
                    };
                    if wide {
                        let old = [self.read(&at(0), 8), self.read(&at(8), 8)];
                        if let Some(new) = wide_result(x.op, old, &b, &c, li) {
                            self.write_mem(&at(0), 8, new[0]);
                            self.write_mem(&at(8), 8, new[1]);
                        }
                        out[0][li] = old[0];
                        out[1][li] = old[1];
                    } else {
                        for (k, bk) in b.iter().enumerate() {
                            let e = at(k as u64 * esize);
                            let old = self.read(&e, esize);
                            let new = if x.elem == Ty::F32 {
                                add_f32_ftz(old as u32, bk[li] as u32) as u64
                            } else {
                                atomic_result(x.op, x.elem, old, bk[li], 0).0
                            };
                            self.write_mem(&e, esize, new);
                            if let Some(o) = out.get_mut(k) {
                                o[li] = old;
                            }
                        }
                    }
                }
            }
        }
        for (d, o) in x.d.iter().zip(&out) {
            write(w, *d, o, emask);
        }
        Ok(())
    }
}

/// The new value of a `.b128` atomic over `old` (lane `l`'s operands), None when `cas`
/// finds another value (nothing is written).
fn wide_result(op: AtomOp, old: [u64; 2], b: &[Lanes], c: &[Lanes], l: usize) -> Option<[u64; 2]> {
    match op {
        AtomOp::Cas if old == [b[0][l], b[1][l]] => Some([c[0][l], c[1][l]]),
        AtomOp::Cas => None,
        _ => Some([b[0][l], b[1][l]]),
    }
}

fn lanemask(out: &mut Lanes, f: impl Fn(u64) -> u64) {
    for (l, o) in out.iter_mut().enumerate() {
        *o = f(l as u64);
    }
}

fn combine(out: &mut Lanes, c: &Lanes, op: BoolOp) {
    for (o, c) in out.iter_mut().zip(c.iter()) {
        let c = (*c != 0) as u64;
        *o = match op {
            BoolOp::And => *o & c,
            BoolOp::Or => *o | c,
            BoolOp::Xor => *o ^ c,
        };
    }
}

/// Sign- or zero-extends a loaded value per its type.
/// A host pointer for `size` bytes at device address `addr` from the warp's cache of
/// translated spans, if one covers it with the right access.
#[inline(always)]
fn tlb_lookup(tlb: &[TlbEntry; TLB_ENTRIES], addr: u64, size: u64, write: bool) -> Option<*mut u8> {
    for s in tlb {
        if addr >= s.base && in_window(addr - s.base, size, s.len) && (!write || s.writable != 0) {
            return Some(s.host.wrapping_add((addr - s.base) as usize));
        }
    }
    None
}

/// Lowest and highest address of the active lanes, when every one is aligned to `size`
/// and none wraps around.
#[inline(always)]
fn lane_range(base: &Lanes, off: i64, emask: u32, size: u64) -> Option<(u64, u64)> {
    if emask == 0 {
        return None;
    }
    let (mut lo, mut hi, mut bits) = (u64::MAX, 0u64, 0u64);
    for (l, b) in base.iter().enumerate() {
        if emask >> l & 1 != 0 {
            let a = b.wrapping_add(off as u64);
            lo = lo.min(a);
            hi = hi.max(a);
            bits |= a;
        }
    }
    (bits % size == 0 && hi.checked_add(size).is_some()).then_some((lo, hi))
}

/// Whether `size` bytes at `offset` lie inside a window of `len` bytes (shared, local or
/// parameter memory, a translated span): the end is computed without wrapping, so a
/// 64-bit offset near 2^64 is outside, never a small one.
#[inline(always)]
fn in_window(offset: u64, size: u64, len: u64) -> bool {
    offset <= len && size <= len - offset
}

/// Little-endian value of `size` bytes at `i` (the caller checked the bounds).
#[inline(always)]
fn read_le(s: &[u8], i: usize, size: u64) -> u64 {
    let get = |n: usize| s.get(i..i + n).unwrap_or(&[0u8; 8][..n]);
    match size {
        1 => get(1)[0] as u64,
        2 => u16::from_le_bytes(get(2).try_into().unwrap_or_default()) as u64,
        4 => u32::from_le_bytes(get(4).try_into().unwrap_or_default()) as u64,
        _ => u64::from_le_bytes(get(8).try_into().unwrap_or_default()),
    }
}

#[inline(always)]
fn write_le(s: &mut [u8], i: usize, size: u64, v: u64) {
    let n = size as usize;
    if let Some(d) = s.get_mut(i..i + n) {
        d.copy_from_slice(&v.to_le_bytes()[..n]);
    }
}

fn extend(raw: u64, ty: Ty) -> u64 {
    match ty {
        Ty::S8 => raw as i8 as i64 as u64,
        Ty::S16 => raw as i16 as i64 as u64,
        Ty::S32 => raw as i32 as i64 as u64,
        _ => raw,
    }
}

/// The active lanes grouped by the member mask each gave a warp-synchronous instruction
/// (`vote`, `match`, `redux`, `elect`): (its active members, the lanes that named it).
/// Lanes of one warp may name different masks at once, as cooperative groups' tiled
/// and labeled partitions do; each group computes over its own members.
fn member_groups(emask: u32, mk: &[u64; 32]) -> Vec<(u32, u32)> {
    let mut groups: Vec<(u32, u32)> = Vec::new();
    for_lanes(emask, |l| {
        let m = mk[l] as u32;
        match groups.iter_mut().find(|g| g.0 == m) {
            Some(g) => g.1 |= 1 << l,
            None => groups.push((m, 1 << l)),
        }
    });
    groups
        .into_iter()
        .map(|(m, lanes)| (emask & m, lanes))
        .collect()
}

#[inline(always)]
fn for_lanes(mask: u32, mut f: impl FnMut(usize)) {
    let mut m = mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        f(l);
    }
}

fn set_pcs(w: &mut Warp, mask: u32, pc: u32) {
    // Usually the whole warp.
    if mask == u32::MAX {
        w.pcs = [pc; 32];
        return;
    }
    // Otherwise usually no lane or a few (a barrier's lanes left behind): a loop over
    // the set bits (a select per lane by a variable shift does not vectorise on the
    // baseline x86-64 the library is built for).
    let mut m = mask;
    while m != 0 {
        w.pcs[m.trailing_zeros() as usize] = pc;
        m &= m - 1;
    }
}

/// The lanes whose pc is `pc`, as a mask. Usually every lane is there: an OR of the 32
/// differences (vectorised, no early exit) says so; a mask built bit by bit
/// from 32 compares does not vectorise on the baseline x86-64 (it took 3% of a
/// barrier-heavy kernel's time).
/// The member-mask operand of a warp-synchronous instruction: its lanes execute it
/// together (`Warp::converging`).
fn warp_sync_members(op: &Op) -> Option<Src> {
    match op {
        Op::Shfl { _mask, .. } | Op::WarpSync { _mask } => Some(*_mask),
        Op::Vote { mask, .. } | Op::Match { mask, .. } | Op::Redux { mask, .. } => Some(*mask),
        _ => None,
    }
}

fn lanes_eq(pcs: &[u32; 32], pc: u32) -> u32 {
    if pcs.iter().fold(0, |acc, p| acc | (p ^ pc)) == 0 {
        return u32::MAX;
    }
    pcs.iter()
        .enumerate()
        .fold(0, |m, (l, p)| m | ((*p == pc) as u32) << l)
}

/// The lanes whose byte in `bytes` is `v`, as a mask: eight lanes at a time in a u64 (a
/// loop building the mask bit by bit does not vectorise and took 3% of a barrier-heavy
/// kernel's time).
fn lanes_at(bytes: &[u8; 32], v: u8) -> u32 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let mut m = 0u32;
    for (i, chunk) in bytes.chunks_exact(8).enumerate() {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let x = word ^ (u64::from(v) * 0x0101_0101_0101_0101);
        // The top bit of each byte of `t` is set exactly where that byte of `x` is zero
        // (no carry crosses bytes: each byte's low seven bits plus 0x7f stays below 256).
        let t = !(((x & LOW7) + LOW7) | x | LOW7);
        // Byte k's top bit (bit 8k+7) moves to bit 56+k of the product; nothing else
        // lands in the top byte.
        let bits = ((t >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u32;
        m |= bits << (8 * i);
    }
    m
}

#[inline(always)]
fn write(w: &mut Warp, d: Dst, v: &Lanes, mask: u32) {
    match d {
        Dst::Reg(r) => {
            let r = r as usize * 32;
            let regs = &mut w.regs[r..r + 32];
            if mask == FULL {
                regs.copy_from_slice(v);
            } else {
                for (l, (o, x)) in regs.iter_mut().zip(v.iter()).enumerate() {
                    if mask >> l & 1 != 0 {
                        *o = *x;
                    }
                }
            }
        }
        Dst::Pred(p) => {
            let bits = v
                .iter()
                .rev()
                .fold(0u32, |b, x| (b << 1) | (*x != 0) as u32);
            let old = &mut w.preds[p as usize];
            *old = (*old & !mask) | (bits & mask);
        }
        Dst::Sink => {}
    }
}

fn write_lane(w: &mut Warp, d: Dst, lane: usize, v: u64) {
    match d {
        Dst::Reg(r) => w.regs[r as usize * 32 + lane] = v,
        Dst::Pred(p) => {
            let old = &mut w.preds[p as usize];
            *old = (*old & !(1 << lane)) | (((v != 0) as u32) << lane);
        }
        Dst::Sink => {}
    }
}

/// Reads `size` bytes at `p` with a relaxed atomic load: other host threads run other
/// blocks over the same memory, and a kernel's data race must not be the host's UB.
///
/// # Safety
/// `p` valid for `size` bytes of reads.
unsafe fn host_read(p: *mut u8, size: u64) -> u64 {
    if (p as usize) % size as usize != 0 {
        // A foreign Memory whose host layout is not aligned like the device's (the mock's
        // spans are page-aligned): a plain copy of exactly `size` bytes.
        let mut b = [0u8; 8];
        // Safety: `p` is valid for `size` (<= 8) bytes per the caller.
        unsafe {
            std::ptr::copy_nonoverlapping(p as *const u8, b.as_mut_ptr(), size.min(8) as usize)
        };
        return u64::from_le_bytes(b);
    }
    // Safety: valid per the caller and aligned as just checked; atomics need no more.
    unsafe {
        match size {
            1 => AtomicU8::from_ptr(p).load(Ordering::Relaxed) as u64,
            2 => AtomicU16::from_ptr(p as *mut u16).load(Ordering::Relaxed) as u64,
            4 => AtomicU32::from_ptr(p as *mut u32).load(Ordering::Relaxed) as u64,
            _ => AtomicU64::from_ptr(p as *mut u64).load(Ordering::Relaxed),
        }
    }
}

/// # Safety
/// `p` valid for `size` bytes of writes.
unsafe fn host_write(p: *mut u8, size: u64, v: u64) {
    if (p as usize) % size as usize != 0 {
        let b = v.to_le_bytes();
        // Safety: valid per the caller (see host_read).
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), p, size as usize) };
        return;
    }
    // Safety: valid per the caller and aligned as just checked.
    unsafe {
        match size {
            1 => AtomicU8::from_ptr(p).store(v as u8, Ordering::Relaxed),
            2 => AtomicU16::from_ptr(p as *mut u16).store(v as u16, Ordering::Relaxed),
            4 => AtomicU32::from_ptr(p as *mut u32).store(v as u32, Ordering::Relaxed),
            _ => AtomicU64::from_ptr(p as *mut u64).store(v, Ordering::Relaxed),
        }
    }
}

/// `n` elements of `size` bytes (16 bytes at most) at `p`, read in one host access where
/// `p` is aligned to the whole (see `BlockCtx::vector_host`): an 8-byte or smaller vector
/// as one relaxed atomic load, a 16-byte one as one aligned SSE load (single-copy atomic
/// on x86-64 hosts with AVX, Intel SDM 9.1.1; two 8-byte loads elsewhere).
///
/// # Safety
/// `p` valid for `size * n` bytes of reads.
unsafe fn host_read_vector(p: *mut u8, size: u64, n: u8) -> [u64; 4] {
    let total = size * n as u64;
    let mut bytes = [0u8; 16];
    if total <= 8 {
        // Safety: valid for `total` bytes per the caller; host_read copies if misaligned.
        let v = unsafe { host_read(p, total) };
        bytes[..8].copy_from_slice(&v.to_le_bytes());
    } else {
        // Safety: valid for 16 bytes per the caller.
        let (lo, hi) = unsafe { host_read16(p) };
        bytes[..8].copy_from_slice(&lo.to_le_bytes());
        bytes[8..].copy_from_slice(&hi.to_le_bytes());
    }
    let mut out = [0u64; 4];
    for (k, o) in out.iter_mut().enumerate().take(n as usize) {
        let at = k * size as usize;
        *o = read_le(&bytes, at, size);
    }
    out
}

/// The store of `host_read_vector`.
///
/// # Safety
/// `p` valid for `size * n` bytes of writes.
unsafe fn host_write_vector(p: *mut u8, size: u64, n: u8, elems: &[u64; 4]) {
    let total = size * n as u64;
    let mut bytes = [0u8; 16];
    for (k, &e) in elems.iter().enumerate().take(n as usize) {
        write_le(&mut bytes, k * size as usize, size, e);
    }
    let word = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap_or([0; 8]));
    if total <= 8 {
        // Safety: valid per the caller; host_write copies if misaligned.
        unsafe { host_write(p, total, word(0)) };
    } else {
        // Safety: valid for 16 bytes per the caller.
        unsafe { host_write16(p, word(0), word(8)) };
    }
}

/// # Safety
/// `p` valid for 16 bytes of reads.
unsafe fn host_read16(p: *mut u8) -> (u64, u64) {
    #[cfg(target_arch = "x86_64")]
    if (p as usize) % 16 == 0 {
        let (lo, hi): (u64, u64);
        // Safety: `p` is valid and 16-byte aligned (movdqa's requirement); the asm reads
        // those 16 bytes only and is opaque to the compiler, as a relaxed atomic is.
        unsafe {
            std::arch::asm!(
                "movdqa {x}, [{p}]",
                "movq {lo}, {x}",
                "psrldq {x}, 8",
                "movq {hi}, {x}",
                p = in(reg) p,
                x = out(xmm_reg) _,
                lo = out(reg) lo,
                hi = out(reg) hi,
                options(nostack, readonly, preserves_flags),
            )
        };
        return (lo, hi);
    }
    // Safety: valid for 16 bytes per the caller.
    unsafe { (host_read(p, 8), host_read(p.wrapping_add(8), 8)) }
}

/// # Safety
/// `p` valid for 16 bytes of writes.
unsafe fn host_write16(p: *mut u8, lo: u64, hi: u64) {
    #[cfg(target_arch = "x86_64")]
    if (p as usize) % 16 == 0 {
        // Safety: as in host_read16, for writes.
        unsafe {
            std::arch::asm!(
                "movq {x}, {lo}",
                "movq {y}, {hi}",
                "punpcklqdq {x}, {y}",
                "movdqa [{p}], {x}",
                p = in(reg) p,
                x = out(xmm_reg) _,
                y = out(xmm_reg) _,
                lo = in(reg) lo,
                hi = in(reg) hi,
                options(nostack, preserves_flags),
            )
        };
        return;
    }
    // Safety: valid for 16 bytes per the caller.
    unsafe {
        host_write(p, 8, lo);
        host_write(p.wrapping_add(8), 8, hi);
    }
}

/// The new value and the value returned, for an atomic on plain memory.
fn atomic_result(op: AtomOp, ty: Ty, old: u64, x: u64, y: u64) -> (u64, u64) {
    let half = |f: fn(u16, u16) -> u16| {
        let lo = f(old as u16, x as u16) as u64;
        if ty.bytes() == 4 {
            lo | (f((old >> 16) as u16, (x >> 16) as u16) as u64) << 16
        } else {
            lo
        }
    };
    let m = match ty.bytes() {
        2 => 0xffff,
        4 => 0xffff_ffff,
        _ => u64::MAX,
    };
    let new = match (op, ty) {
        (AtomOp::Add, Ty::F16 | Ty::F16x2) => half(|a, b| math::half_add_noftz(a, b, false)),
        (AtomOp::Add, Ty::BF16 | Ty::BF16x2) => half(|a, b| math::half_add_noftz(a, b, true)),
        (AtomOp::Min, Ty::F16 | Ty::F16x2) => {
            half(|a, b| math::half_minmax_noftz(false, a, b, false))
        }
        (AtomOp::Min, Ty::BF16 | Ty::BF16x2) => {
            half(|a, b| math::half_minmax_noftz(false, a, b, true))
        }
        (AtomOp::Max, Ty::F16 | Ty::F16x2) => {
            half(|a, b| math::half_minmax_noftz(true, a, b, false))
        }
        (AtomOp::Max, Ty::BF16 | Ty::BF16x2) => {
            half(|a, b| math::half_minmax_noftz(true, a, b, true))
        }
        (AtomOp::Add, Ty::F32) => math::bits32(math::f32_of(old) + math::f32_of(x)),
        (AtomOp::Add, Ty::F64) => math::bits64(math::f64_of(old) + math::f64_of(x)),
        (AtomOp::Add, _) => old.wrapping_add(x),
        (AtomOp::Min, Ty::S32) => (old as i32).min(x as i32) as u32 as u64,
        (AtomOp::Max, Ty::S32) => (old as i32).max(x as i32) as u32 as u64,
        (AtomOp::Min, Ty::S64) => (old as i64).min(x as i64) as u64,
        (AtomOp::Max, Ty::S64) => (old as i64).max(x as i64) as u64,
        (AtomOp::Min, _) => old.min(if ty.bytes() == 4 { x as u32 as u64 } else { x }),
        (AtomOp::Max, _) => old.max(if ty.bytes() == 4 { x as u32 as u64 } else { x }),
        (AtomOp::Inc, _) => {
            if old as u32 >= x as u32 {
                0
            } else {
                old + 1
            }
        }
        (AtomOp::Dec, _) => {
            if old as u32 == 0 || old as u32 > x as u32 {
                x
            } else {
                old - 1
            }
        }
        (AtomOp::And, _) => old & x,
        (AtomOp::Or, _) => old | x,
        (AtomOp::Xor, _) => old ^ x,
        (AtomOp::Exch, _) => x,
        (AtomOp::Cas, _) => {
            if old & m == x & m {
                y
            } else {
                old
            }
        }
    };
    (new & m, old & m)
}

/// The f32 `add` of atomics in global memory (scalar and vector): as the ISA says of
/// `atom.add.f32` there, subnormal inputs (the old value too) and results flush to signed
/// zeros.
fn add_f32_ftz(old: u32, x: u32) -> u32 {
    let f = math::ftz32(math::ftz32(f32::from_bits(old)) + math::ftz32(f32::from_bits(x)));
    math::bits32(f) as u32
}

/// 128-bit atomics on host memory take one of these locks (by address), then access the
/// two halves with 64-bit atomics: atomic against each other, and no host data race with
/// anything else (a `.b128` atomic and a narrower access to the same bytes are not
/// morally strong in PTX, so their interleaving is the program's race).
static WIDE_LOCKS: [Mutex<()>; 64] = [const { Mutex::new(()) }; 64];

/// A 16-bit or half-float atomic (`cas.b16`, `add.noftz`, the vector atomics' `min`/`max`)
/// on the span, by compare-and-swap.
///
/// # Safety
/// `p` valid for reads and writes of `ty.bytes()` (2 or 4) and aligned to them.
unsafe fn host_atomic_narrow(p: *mut u8, op: AtomOp, ty: Ty, x: u64, y: u64) -> u64 {
    const O: Ordering = Ordering::SeqCst;
    if ty.bytes() == 2 {
        // Safety: per the caller.
        let a = unsafe { AtomicU16::from_ptr(p as *mut u16) };
        if op == AtomOp::Cas {
            return a
                .compare_exchange(x as u16, y as u16, O, O)
                .unwrap_or_else(|v| v) as u64;
        }
        let f = |v: u16| Some(atomic_result(op, ty, v as u64, x, y).0 as u16);
        a.fetch_update(O, O, f).unwrap_or_else(|v| v) as u64
    } else {
        // Safety: per the caller.
        let a = unsafe { AtomicU32::from_ptr(p as *mut u32) };
        let f = |v: u32| Some(atomic_result(op, ty, v as u64, x, y).0 as u32);
        a.fetch_update(O, O, f).unwrap_or_else(|v| v) as u64
    }
}

/// A real atomic on the span: other blocks run on other host threads.
///
/// # Safety
/// `p` valid for reads and writes of `ty.bytes()` and aligned to them.
unsafe fn host_atomic(p: *mut u8, op: AtomOp, ty: Ty, x: u64, y: u64) -> u64 {
    const O: Ordering = Ordering::SeqCst;
    if ty.bytes() == 2 || matches!(ty, Ty::F16x2 | Ty::BF16x2) {
        // Safety: per the caller.
        return unsafe { host_atomic_narrow(p, op, ty, x, y) };
    }
    // Safety (all blocks below): per the caller.
    if ty.bytes() == 4 {
        let a = unsafe { AtomicU32::from_ptr(p as *mut u32) };
        let (x32, y32) = (x as u32, y as u32);
        let old = match (op, ty) {
            // Bulk reductions (cp.reduce.async.bulk) keep subnormals, as the H200 does
            // (corpus bulk_reductions); `atom`/`red` in global memory flush them (`atom`).
            (AtomOp::Add, Ty::F32) => a.fetch_update(O, O, |v| {
                Some(math::bits32(f32::from_bits(v) + f32::from_bits(x32)) as u32)
            }),
            (AtomOp::Add, _) => Ok(a.fetch_add(x32, O)),
            (AtomOp::Min, Ty::S32) => {
                Ok(unsafe { AtomicI32::from_ptr(p as *mut i32) }.fetch_min(x32 as i32, O) as u32)
            }
            (AtomOp::Max, Ty::S32) => {
                Ok(unsafe { AtomicI32::from_ptr(p as *mut i32) }.fetch_max(x32 as i32, O) as u32)
            }
            (AtomOp::Min, _) => Ok(a.fetch_min(x32, O)),
            (AtomOp::Max, _) => Ok(a.fetch_max(x32, O)),
            (AtomOp::Inc, _) => a.fetch_update(O, O, |v| Some(if v >= x32 { 0 } else { v + 1 })),
            (AtomOp::Dec, _) => {
                a.fetch_update(O, O, |v| Some(if v == 0 || v > x32 { x32 } else { v - 1 }))
            }
            (AtomOp::And, _) => Ok(a.fetch_and(x32, O)),
            (AtomOp::Or, _) => Ok(a.fetch_or(x32, O)),
            (AtomOp::Xor, _) => Ok(a.fetch_xor(x32, O)),
            (AtomOp::Exch, _) => Ok(a.swap(x32, O)),
            (AtomOp::Cas, _) => Ok(a.compare_exchange(x32, y32, O, O).unwrap_or_else(|v| v)),
        };
        old.unwrap_or_else(|v| v) as u64
    } else {
        let a = unsafe { AtomicU64::from_ptr(p as *mut u64) };
        let old = match (op, ty) {
            (AtomOp::Add, Ty::F64) => a.fetch_update(O, O, |v| {
                Some(math::bits64(f64::from_bits(v) + f64::from_bits(x)))
            }),
            (AtomOp::Add, _) => Ok(a.fetch_add(x, O)),
            (AtomOp::Min, Ty::S64) => {
                Ok(unsafe { AtomicI64::from_ptr(p as *mut i64) }.fetch_min(x as i64, O) as u64)
            }
            (AtomOp::Max, Ty::S64) => {
                Ok(unsafe { AtomicI64::from_ptr(p as *mut i64) }.fetch_max(x as i64, O) as u64)
            }
            (AtomOp::Min, _) => Ok(a.fetch_min(x, O)),
            (AtomOp::Max, _) => Ok(a.fetch_max(x, O)),
            (AtomOp::And, _) => Ok(a.fetch_and(x, O)),
            (AtomOp::Or, _) => Ok(a.fetch_or(x, O)),
            (AtomOp::Xor, _) => Ok(a.fetch_xor(x, O)),
            (AtomOp::Exch, _) => Ok(a.swap(x, O)),
            (AtomOp::Cas, _) => Ok(a.compare_exchange(x, y, O, O).unwrap_or_else(|v| v)),
            (AtomOp::Inc | AtomOp::Dec, _) => Ok(a.load(O)),
        };
        old.unwrap_or_else(|v| v)
    }
}

/// The CPU time this process has had, in nanoseconds.
fn process_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // Safety: clock_gettime writes the timespec it is given, a live local.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if r != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod lane_mask_tests {
    use super::{lanes_at, lanes_eq};

    #[test]
    fn lanes_at_finds_exactly_the_lanes_holding_the_byte() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            let mut bytes = [0u8; 32];
            for b in bytes.iter_mut() {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                // Few distinct values, so that matches are common, and the edges.
                *b = [0, 1, 2, 0x7f, 0x80, 0xff, 0xfe, 17][(rng % 8) as usize];
            }
            for v in [0u8, 1, 2, 0x7f, 0x80, 0xff, 0xfe, 17, 99] {
                let want = (0..32).fold(0u32, |m, l| m | ((bytes[l] == v) as u32) << l);
                assert_eq!(lanes_at(&bytes, v), want, "{bytes:?} {v}");
                let pcs = bytes.map(|b| u32::from(b) << 24 | 5);
                let pc = u32::from(v) << 24 | 5;
                assert_eq!(lanes_eq(&pcs, pc), want, "{pcs:?} {pc}");
            }
        }
    }
}
