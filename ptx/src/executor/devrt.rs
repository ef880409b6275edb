//! The device runtime of CUDA dynamic parallelism (CDP2), the executor's own
//! (`crate::devrt` lists the functions): a thread's `kernel<<<...>>>` takes a parameter
//! buffer from the driver's reserve (`DeviceRuntime::pool`), fills it, and launches it
//! into a stream; the launch is recorded with its grid, and runs later.
//!
//! The schedule, one CDP2 allows: a grid's children run after all its blocks finished
//! (a CDP2 parent cannot wait for its children, so it never sees whether they ran
//! before), one at a time in launch order, each with its whole tree (its children, then
//! its tail launches) before the next; then the grid's tail launches
//! (`cudaStreamTailLaunch`, which the CUDA programming guide runs after the grid and all
//! its work). Every stream order (launches into one stream from a block are ordered, the
//! NULL stream is the block's) and every event dependency is so kept, fire-and-forget
//! launches (`cudaStreamFireAndForget`, independent of the rest) included; the tree
//! ends before the host's launch completes, so stream and event order on the host sees
//! all of it, and a child's fault is the host launch's fault.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use super::calls::function_at;
use super::{in_window, read_le, write_le, BlockCtx, Fault, Warp};
use crate::decode::Space;
use crate::devrt::{error, error_text, DevRt};
use crate::{
    Access, DeviceRuntime, FaultKind, KernelFault, Launch, Memory, Module, PrintfBuffer, Stats,
};

/// `cudaStreamTailLaunch` and `cudaStreamFireAndForget` (cuda_device_runtime_api.h).
const TAIL_LAUNCH: u64 = 0x3;
const FIRE_AND_FORGET: u64 = 0x4;
/// `cudaStreamNonBlocking`, the only flags a stream created on the device may have.
const STREAM_NON_BLOCKING: u64 = 0x1;
/// `cudaEventDisableTiming`, what an event created on the device must have.
const EVENT_DISABLE_TIMING: u64 = 0x2;
/// Where the handles of streams and events created on the device start: far from the
/// named streams (NULL, 0x1-0x4) and the device graphs' (`0x01..` to `0x03..` << 56).
const HANDLE_BASE: u64 = 0x0000_cd90_0000_0000;

/// What one host launch's tree of grids shares.
pub(crate) struct Tree<'a> {
    rt: &'a DeviceRuntime<'a>,
    /// Launches handed a parameter buffer and not yet begun.
    pending: AtomicU32,
    next_handle: AtomicU64,
    streams: Mutex<HashSet<u64>>,
    events: Mutex<HashSet<u64>>,
    /// Error names and strings written into the pool, by (code, name?).
    strings: Mutex<HashMap<(i32, bool), u64>>,
}

/// A parameter buffer handed out and not yet launched.
struct Request {
    /// The kernel and its configuration, given with the buffer (V2) or at the launch.
    config: Option<Config>,
}

#[derive(Clone, Copy)]
struct Config {
    kernel: usize,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
}

/// Work a grid put into a stream: what runs after it.
pub(crate) struct Child {
    work: Work,
    tail: bool,
    depth: u32,
}

enum Work {
    /// A kernel launch; its parameter buffer is given back when it begins.
    Grid {
        config: Config,
        params: Vec<u8>,
        buffer: u64,
    },
    /// `cudaMemcpyAsync`, `cudaMemcpy2DAsync` or `cudaMemcpy3DAsync` on the device
    /// (device to device): `extent` (bytes a row, rows, slices) from `src` to `dst`.
    Copy {
        dst: Region,
        src: Region,
        extent: [u64; 3],
    },
    /// `cudaMemsetAsync`, `cudaMemset2DAsync` or `cudaMemset3DAsync` on the device:
    /// `extent` bytes, checked and queued in stream order, then nothing written (as on
    /// the H200: `copy`).
    Set { extent: [u64; 3] },
}

/// Where a copy's or set's rows lie: row `y` of slice `z` at `base + y * pitch + z *
/// slice`.
#[derive(Clone, Copy)]
struct Region {
    base: u64,
    pitch: u64,
    slice: u64,
}

impl Region {
    /// Contiguous bytes: one row.
    fn linear(base: u64) -> Self {
        Region {
            base,
            pitch: 0,
            slice: 0,
        }
    }

    fn row(&self, y: u64, z: u64) -> u64 {
        self.base
            .wrapping_add(y.wrapping_mul(self.pitch))
            .wrapping_add(z.wrapping_mul(self.slice))
    }
}

/// What `cudaRuntimeGetVersion` answers on the device: 6000 on the H200 with CUDA 13.0's
/// libcudadevrt (runtime program device_runtime_calls, recorded), where the host's
/// runtime answers 13000: the device runtime's own version, not the toolkit's.
const RUNTIME_VERSION: u64 = 6000;

/// The attributes the device's cudaFuncGetAttributes answers 0 for whatever the host
/// set: CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES and
/// CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT (H200, recorded).
fn device_side_zero(attr: i32) -> bool {
    matches!(attr, 8 | 9)
}

/// `struct cudaFuncAttributes` (driver_types.h): each field's `CUfunction_attribute`,
/// offset and size. `reserved` is left as the caller had it.
const FUNC_ATTRIBUTES: &[(i32, u64, u64)] = &[
    (1, 0, 8),   // sharedSizeBytes: CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
    (2, 8, 8),   // constSizeBytes
    (3, 16, 8),  // localSizeBytes
    (0, 24, 4),  // maxThreadsPerBlock
    (4, 28, 4),  // numRegs
    (5, 32, 4),  // ptxVersion
    (6, 36, 4),  // binaryVersion
    (7, 40, 4),  // cacheModeCA
    (8, 44, 4),  // maxDynamicSharedSizeBytes
    (9, 48, 4),  // preferredShmemCarveout
    (10, 52, 4), // clusterDimMustBeSet
    (11, 56, 4), // requiredClusterWidth
    (12, 60, 4), // requiredClusterHeight
    (13, 64, 4), // requiredClusterDepth
    (15, 68, 4), // clusterSchedulingPolicyPreference
    (14, 72, 4), // nonPortableClusterSizeAllowed
];

/// `sizeof(struct cudaMemcpy3DParms)`: srcArray, srcPos, srcPtr, dstArray, dstPos,
/// dstPtr, extent, kind.
const MEMCPY3D_PARMS: u64 = 160;

/// The copy a `cudaMemcpy3DParms` asks for, or why it cannot be made on the device.
fn memcpy3d(b: &[u8]) -> Result<Work, i32> {
    let q = |off: usize| u64::from_le_bytes(b[off..off + 8].try_into().expect("8 bytes"));
    let kind = u32::from_le_bytes(b[152..156].try_into().expect("4 bytes"));
    if q(0) != 0 || q(64) != 0 {
        // CUDA arrays are the host's objects: a kernel cannot name one.
        return Err(error::NOT_SUPPORTED);
    }
    if kind != 3 && kind != 4 {
        return Err(error::INVALID_MEMCPY_DIRECTION);
    }
    let extent = [q(128), q(136), q(144)];
    // pos {x, y, z} at `pos`, pitched pointer {ptr, pitch, xsize, ysize} at `pos + 24`;
    // with no array, x and the width are in bytes.
    let region = |pos: usize| -> Result<Region, i32> {
        let [x, y, z] = [q(pos), q(pos + 8), q(pos + 16)];
        let (ptr, pitch, ysize) = (q(pos + 24), q(pos + 32), q(pos + 48));
        if x.checked_add(extent[0]).is_none_or(|end| end > pitch) {
            return Err(error::INVALID_VALUE);
        }
        let slice = pitch.wrapping_mul(ysize);
        let base = ptr
            .wrapping_add(x)
            .wrapping_add(y.wrapping_mul(pitch))
            .wrapping_add(z.wrapping_mul(slice));
        Ok(Region { base, pitch, slice })
    };
    Ok(Work::Copy {
        src: region(8)?,
        dst: region(72)?,
        extent,
    })
}

/// The most bytes a device-side copy or set takes: the device's memory.
const MAX_COPY: u64 = 1 << 40;

impl Child {
    /// Gives back what the work holds instead of running: its parameter buffer and its
    /// place among the pending launches.
    fn release(&self, tree: &Tree) {
        if self.free_buffer(tree) {
            tree.pending.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Gives back a grid's parameter buffer as it starts; whether the work is a grid
    /// (which stays a pending launch until it and every grid it launched are complete).
    fn free_buffer(&self, tree: &Tree) -> bool {
        if let Work::Grid { buffer, .. } = self.work {
            let _ = tree.rt.pool.free(buffer);
            true
        } else {
            false
        }
    }
}

/// The tree's work still to do, a stack: a launch to run, or the mark that a grid and
/// everything it launched have completed (its launch stops being pending: on the H200 a
/// chain of nested launches stops at the pending-launch limit, runtime program
/// dynamic_parallelism).
enum Todo {
    Run(Child),
    Complete,
}

/// A fault of the tree's work outside any kernel's code (a copy's bad address, the time
/// limit), reported against the kernel that asked for it.
fn tree_fault(kind: FaultKind, kernel: &str, address: Option<u64>, detail: String) -> KernelFault {
    KernelFault {
        kind,
        kernel: kernel.to_string(),
        block: [0; 3],
        thread: [0; 3],
        line: 0,
        instruction: String::new(),
        address,
        detail,
    }
}

/// Copies device memory for the device runtime, row by row and span by span as the memory
/// translates it; an address outside device memory is the fault a kernel's access would
/// be.
fn copy(mem: &dyn Memory, work: &Work) -> Result<(), (u64, String)> {
    let (dst, src, extent) = match *work {
        Work::Copy { dst, src, extent } => (dst, src, extent),
        // The H200 (driver 580.159.04, CUDA 13.0's libcudadevrt) answers a kernel's
        // cudaMemsetAsync, cudaMemset2DAsync and cudaMemset3DAsync with cudaSuccess and
        // writes nothing, anywhere: ci/explore/devmemset.cu saw no byte of a 64 KiB buffer
        // change for 1D, 2D and 3D memsets, in the parent's stream and a stream of the
        // device's, where copies queued the same way landed (runs/2026-12-03-h200-session15;
        // runtime program device_runtime_calls, twice). The mock does the same and says so
        // once, for a program that meant to set the memory.
        Work::Set { .. } => {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                eprintln!(
                    "cumock: a kernel's cudaMemsetAsync/cudaMemset2DAsync/cudaMemset3DAsync \
                     sets nothing, as on the H200 (driver 580.159.04: cudaSuccess and no byte \
                     written); a kernel storing the bytes, or a host-side memset, sets them"
                );
            });
            return Ok(());
        }
        Work::Grid { .. } => return Ok(()),
    };
    // Rows (then slices) that follow one another are one row: a 2D or 3D copy of packed
    // memory costs what a linear one does, not a row at a time.
    let mut extent = extent;
    // (The extent's product was checked against MAX_COPY: no overflow.)
    if extent[1] > 1 && dst.pitch == extent[0] && src.pitch == extent[0] {
        extent = [extent[0] * extent[1], 1, extent[2]];
        if extent[2] > 1 && dst.slice == extent[0] && src.slice == extent[0] {
            extent = [extent[0] * extent[2], 1, 1];
        }
    }
    for z in 0..extent[2] {
        for y in 0..extent[1] {
            copy_row(mem, dst.row(y, z), src.row(y, z), extent[0])?;
        }
    }
    Ok(())
}

/// One row of `copy`: `bytes` from `src` to `dst`.
fn copy_row(mem: &dyn Memory, dst: u64, src: u64, bytes: u64) -> Result<(), (u64, String)> {
    let span = |addr: u64, access: Access, left: u64| -> Result<(*mut u8, u64), (u64, String)> {
        let s = mem
            .translate(addr, left, access)
            .map_err(|f| (addr, f.message))?;
        let off = addr.wrapping_sub(s.base);
        if addr < s.base
            || off >= s.len
            || s.host.is_null()
            || (access == Access::Write && !s.writable)
        {
            return Err((
                addr,
                "not device memory the device runtime may access".into(),
            ));
        }
        Ok((s.host.wrapping_add(off as usize), (s.len - off).min(left)))
    };
    // A bounce buffer keeps overlapping copies right (memmove's rule) across spans.
    let mut done = 0u64;
    let mut chunk = Vec::new();
    while done < bytes {
        let left = (bytes - done).min(1 << 20);
        let (from, n) = span(src + done, Access::Read, left)?;
        chunk.resize(n as usize, 0);
        // Safety: `from` lies in a span `Memory::translate` gave for reading, valid for `n`
        // bytes for the launch (the trait's contract); no kernel of the tree runs while its
        // stream's copy does.
        unsafe { std::ptr::copy(from, chunk.as_mut_ptr(), n as usize) };
        let mut put = 0u64;
        while put < n {
            let (to, m) = span(dst + done + put, Access::Write, n - put)?;
            // Safety: `to` lies in a writable span `Memory::translate` gave, valid for
            // `m` bytes; the source is our own buffer.
            unsafe { std::ptr::copy(chunk.as_ptr().add(put as usize), to, m as usize) };
            put += m;
        }
        done += n;
    }
    Ok(())
}

/// One running grid's device-runtime state.
pub(crate) struct Grid<'a> {
    tree: &'a Tree<'a>,
    depth: u32,
    /// The host's launch itself (a graph's kernel node, where it is one), not a grid the
    /// tree launched: only it may launch device graphs.
    root: bool,
    buffers: Mutex<HashMap<u64, Request>>,
    launched: Mutex<Vec<Child>>,
    /// Each thread's last error (`cudaGetLastError`), by block and thread.
    errors: Mutex<HashMap<(u64, u32), i32>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic elsewhere leaves the bookkeeping as valid as it was.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<'a> Grid<'a> {
    fn new(tree: &'a Tree<'a>, depth: u32, root: bool) -> Self {
        Grid {
            tree,
            depth,
            root,
            buffers: Mutex::new(HashMap::new()),
            launched: Mutex::new(Vec::new()),
            errors: Mutex::new(HashMap::new()),
        }
    }

    /// The grid ended: buffers never launched go back (the GPU reclaims them with the
    /// grid); its launches, in the order they run.
    fn finish(self) -> Vec<Child> {
        let pool = self.tree.rt.pool;
        for (buffer, _) in lock(&self.buffers).drain() {
            let _ = pool.free(buffer);
            self.tree.pending.fetch_sub(1, Ordering::Relaxed);
        }
        let launched = self
            .launched
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        let (tail, mut now): (Vec<Child>, Vec<Child>) = launched.into_iter().partition(|c| c.tail);
        now.extend(tail);
        now
    }
}

/// Gives back what launches that will not run hold.
fn drop_children(tree: &Tree, children: Vec<Child>) {
    for c in children {
        c.release(tree);
    }
}

/// As `drop_children`, for the work left on the stack.
fn drop_todo(tree: &Tree, todo: Vec<Todo>) {
    for t in todo {
        if let Todo::Run(c) = t {
            c.release(tree);
        }
    }
}

/// Runs a host launch of a module that uses the device runtime: the grid, then the
/// tree of grids it launches (the module's doc says in which order).
pub(super) fn run_tree(
    module: &Module,
    kernel: usize,
    launch: &Launch,
    mem: &dyn Memory,
    printf: Option<&PrintfBuffer>,
    rt: &DeviceRuntime,
) -> Result<Stats, KernelFault> {
    let tree = Tree {
        rt,
        pending: AtomicU32::new(0),
        next_handle: AtomicU64::new(0),
        streams: Mutex::new(HashSet::new()),
        events: Mutex::new(HashSet::new()),
        strings: Mutex::new(HashMap::new()),
    };
    let start = Instant::now();
    let root = Grid::new(&tree, 0, true);
    let ran = super::run_grid(module, kernel, launch, mem, printf, Some(&root));
    let launched = root.finish();
    let mut total = match ran {
        Ok(s) => s,
        Err(f) => {
            drop_children(&tree, launched);
            return Err(f);
        }
    };
    // A stack: the first launch on top, so that its whole tree runs before the next.
    let mut todo: Vec<Todo> = launched.into_iter().rev().map(Todo::Run).collect();
    while let Some(t) = todo.pop() {
        let c = match t {
            Todo::Run(c) => c,
            Todo::Complete => {
                tree.pending.fetch_sub(1, Ordering::Relaxed);
                continue;
            }
        };
        c.free_buffer(&tree);
        let Work::Grid { config, params, .. } = &c.work else {
            // A copy or set in its stream's order: done here, between the grids.
            if let Err((addr, why)) = copy(mem, &c.work) {
                drop_todo(&tree, todo);
                let what = if matches!(c.work, Work::Copy { .. }) {
                    "cudaMemcpyAsync"
                } else {
                    "cudaMemsetAsync"
                };
                return Err(tree_fault(
                    FaultKind::IllegalAddress,
                    &module.kernels[kernel].name,
                    Some(addr),
                    format!("{what} made on the device: {why}"),
                ));
            }
            continue;
        };
        // The host launch's time limit bounds the whole tree (a chain of tail launches
        // that never ends is a kernel that never ends).
        let time_limit = match launch.time_limit {
            Some(t) => match t.checked_sub(start.elapsed()) {
                Some(left) => Some(left),
                None => {
                    drop_todo(&tree, todo);
                    return Err(tree_fault(
                        FaultKind::TimeLimit,
                        &module.kernels[config.kernel].name,
                        None,
                        "the launch's tree of device-launched grids ran past the time limit \
                         before this grid started"
                            .into(),
                    ));
                }
            },
            None => None,
        };
        let child_launch = Launch {
            grid: config.grid,
            block: config.block,
            dynamic_shared_bytes: config.shared,
            params,
            time_limit,
            cooperative: false,
            cluster: None,
            // A grid launched on the device is no graph's node.
            current_graph_exec: 0,
            ..launch.clone()
        };
        let grid = Grid::new(&tree, c.depth, false);
        let ran = super::run_grid(
            module,
            config.kernel,
            &child_launch,
            mem,
            printf,
            Some(&grid),
        );
        let mut children = grid.finish();
        match ran {
            Ok(s) => {
                total.instructions += s.instructions;
                total.warps += s.warps;
            }
            Err(f) => {
                drop_children(&tree, children);
                drop_todo(&tree, todo);
                return Err(f);
            }
        }
        // Below its children: the grid completes once they all have.
        todo.push(Todo::Complete);
        children.reverse();
        todo.extend(children.into_iter().map(Todo::Run));
    }
    Ok(total)
}

impl BlockCtx<'_> {
    /// The 4-byte argument at `offset` of lane `l`'s local memory.
    fn local_u32(&self, warp: u32, l: usize, offset: u32) -> u32 {
        let base = (warp as usize * 32 + l) * self.local_bytes;
        if !in_window(u64::from(offset), 4, self.local_bytes as u64) {
            return 0;
        }
        read_le(&self.local, base + offset as usize, 4) as u32
    }

    /// A `dim3` argument (12 bytes) of lane `l`.
    fn local_dim3(&self, warp: u32, l: usize, offset: u32) -> [u32; 3] {
        [0, 4, 8].map(|k| self.local_u32(warp, l, offset + k))
    }

    /// A new device stream's or event's handle, written to the thread's out-pointer.
    fn new_handle(
        &mut self,
        tree: &Tree,
        w: &mut Warp,
        l: usize,
        pc: u32,
        out: u64,
    ) -> Result<u64, Fault> {
        let h = HANDLE_BASE + 16 * tree.next_handle.fetch_add(1, Ordering::Relaxed);
        self.runtime_store(w, l, pc, out, 8, h)?;
        Ok(h)
    }

    /// A generic store of `size` bytes the runtime makes for the thread (an out-pointer
    /// it was given): checked as the thread's own store would be.
    fn runtime_store(
        &mut self,
        w: &mut Warp,
        l: usize,
        pc: u32,
        addr: u64,
        size: u64,
        v: u64,
    ) -> Result<(), Fault> {
        let loc = self.locate(w, Space::Generic, addr, size, Access::Write, l as u32, pc)?;
        self.write_mem(&loc, size, v);
        Ok(())
    }

    /// The kernel at function address `f`, if it is a kernel's.
    fn kernel_at(&self, f: u64) -> Option<usize> {
        let k = function_at(self.prog, f)?;
        self.module.kernel(&self.prog.funcs[k].name)
    }

    /// Why a launch of `kernel` with this configuration cannot be made, as the host's
    /// launch checks it (the device's limits, the kernel's `.maxntid`).
    fn check_config(&self, c: &Config) -> Result<(), i32> {
        let k = &self.module.kernels[c.kernel];
        let threads = c.block.iter().map(|&d| u64::from(d)).product::<u64>();
        let max_threads = k.max_threads_per_block.unwrap_or(1024).min(1024);
        let fits = c.grid.iter().chain(&c.block).all(|&d| d > 0)
            && c.block[0] <= 1024
            && c.block[1] <= 1024
            && c.block[2] <= 64
            && c.grid[1] <= 65535
            && c.grid[2] <= 65535
            && c.grid[0] <= 0x7fff_ffff
            && threads <= u64::from(max_threads);
        if fits {
            Ok(())
        } else {
            Err(error::INVALID_CONFIGURATION)
        }
    }

    /// A parameter buffer of `bytes` for a launch; the pending-launch limit and the
    /// reserve checked.
    fn parameter_buffer(
        &self,
        grid: &Grid,
        bytes: u64,
        config: Option<Config>,
    ) -> Result<u64, i32> {
        let tree = grid.tree;
        let limit = tree.rt.pending_launch_limit;
        if tree
            .pending
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < limit).then_some(n + 1)
            })
            .is_err()
        {
            return Err(error::LAUNCH_PENDING_COUNT_EXCEEDED);
        }
        let b = tree.rt.pool.malloc_aligned(bytes.max(1), 64);
        if b == 0 {
            tree.pending.fetch_sub(1, Ordering::Relaxed);
            return Err(error::LAUNCH_PENDING_COUNT_EXCEEDED);
        }
        lock(&grid.buffers).insert(b, Request { config });
        Ok(b)
    }

    /// Launches the filled buffer `buffer` into `stream`.
    fn launch_buffer(
        &mut self,
        grid: &Grid,
        w: &Warp,
        l: usize,
        buffer: u64,
        stream: u64,
        config: Option<Config>,
    ) -> i32 {
        let Some(req) = lock(&grid.buffers).remove(&buffer) else {
            // Not a buffer this grid was handed, or one launched already.
            return error::INVALID_VALUE;
        };
        let tree = grid.tree;
        let give_back = |code: i32| {
            let _ = tree.rt.pool.free(buffer);
            tree.pending.fetch_sub(1, Ordering::Relaxed);
            code
        };
        let Some(config) = config.or(req.config) else {
            return give_back(error::INVALID_VALUE);
        };
        if let Err(e) = self.check_config(&config) {
            return give_back(e);
        }
        let tail = match stream {
            0 | FIRE_AND_FORGET => false,
            TAIL_LAUNCH => true,
            s if lock(&tree.streams).contains(&s) => false,
            // Device graphs' named streams (cudaStreamGraphTailLaunch...) take graphs
            // (cudaGraphLaunch), not kernels: what the H200 answers awaits a recording.
            s if s >> 56 != 0 && s & ((1 << 56) - 1) == 0 => {
                return give_back(error::NOT_SUPPORTED)
            }
            _ => return give_back(error::INVALID_RESOURCE_HANDLE),
        };
        // A tail launch runs after its parent, not inside it: no deeper nesting. No depth
        // limit applies: the H200 nests until the pending-launch limit (recorded).
        let depth = if tail { grid.depth } else { grid.depth + 1 };
        let k = &self.module.kernels[config.kernel];
        let bytes = k
            .params
            .iter()
            .map(|p| p.offset + p.size)
            .max()
            .unwrap_or(0);
        let mut params = Vec::with_capacity(bytes as usize);
        for i in 0..u64::from(bytes) {
            match self.peek(w.id, l as u32, buffer + i) {
                Some(b) => params.push(b),
                None => return give_back(error::INVALID_VALUE),
            }
        }
        lock(&grid.launched).push(Child {
            work: Work::Grid {
                config,
                params,
                buffer,
            },
            tail,
            depth,
        });
        error::SUCCESS
    }

    /// `cudaMemcpyAsync`/`cudaMemsetAsync` made on the device: queued into `stream`
    /// after what the grid launched into it before.
    fn queue_memory_work(&self, grid: &Grid, work: Work, stream: u64) -> i32 {
        let tail = match stream {
            0 | FIRE_AND_FORGET => false,
            TAIL_LAUNCH => true,
            s if lock(&grid.tree.streams).contains(&s) => false,
            _ => return error::INVALID_RESOURCE_HANDLE,
        };
        lock(&grid.launched).push(Child {
            work,
            tail,
            depth: grid.depth,
        });
        error::SUCCESS
    }

    /// A 2D or 3D copy or set: its extent checked against the device's memory first;
    /// nothing to do is success.
    fn queue_region_work(&self, grid: &Grid, work: Work, stream: u64) -> i32 {
        let extent = match &work {
            Work::Copy { extent, .. } | Work::Set { extent, .. } => *extent,
            Work::Grid { .. } => return error::INVALID_VALUE,
        };
        match extent.iter().try_fold(1u64, |a, &d| a.checked_mul(d)) {
            Some(bytes) if bytes <= MAX_COPY => {
                if bytes == 0 {
                    // Still a stream the thread may use.
                    return if Self::stream_ok(grid.tree, stream) {
                        error::SUCCESS
                    } else {
                        error::INVALID_RESOURCE_HANDLE
                    };
                }
                self.queue_memory_work(grid, work, stream)
            }
            _ => error::INVALID_VALUE,
        }
    }

    /// `n` bytes at generic address `addr` as lane `l` reads them; None where one is not
    /// memory it may read.
    fn read_bytes(&mut self, warp: u32, l: usize, addr: u64, n: u64) -> Option<Vec<u8>> {
        (0..n)
            .map(|i| self.peek(warp, l as u32, addr.checked_add(i)?))
            .collect()
    }

    /// Whether `s` names a stream a launch or record may use here.
    fn stream_ok(tree: &Tree, s: u64) -> bool {
        matches!(s, 0 | TAIL_LAUNCH | FIRE_AND_FORGET) || lock(&tree.streams).contains(&s)
    }

    /// The device address of `code`'s name or text, written into the pool at first use.
    fn error_string(
        &mut self,
        tree: &Tree,
        w: &mut Warp,
        l: usize,
        pc: u32,
        code: i32,
        name: bool,
    ) -> Result<u64, Fault> {
        if let Some(&a) = lock(&tree.strings).get(&(code, name)) {
            return Ok(a);
        }
        let text = error_text(code, name);
        let a = tree.rt.pool.malloc(text.len() as u64 + 1);
        if a == 0 {
            return Ok(0);
        }
        for (i, b) in text.bytes().chain([0]).enumerate() {
            let loc = self.locate(
                w,
                Space::Global,
                a + i as u64,
                1,
                Access::Write,
                l as u32,
                pc,
            )?;
            self.write_mem(&loc, 1, u64::from(b));
        }
        lock(&tree.strings).insert((code, name), a);
        Ok(a)
    }

    /// `call (ret), __cudaCDP2...` for each lane of `emask`, in lane order.
    pub(super) fn device_runtime(
        &mut self,
        w: &mut Warp,
        emask: u32,
        call: DevRt,
        args: &[u32],
        ret: u32,
        pc: u32,
    ) -> Result<(), Fault> {
        let Some(grid) = self.cdp else {
            let lane = emask.trailing_zeros();
            let detail = "the device runtime (CUDA dynamic parallelism): the launch has none \
                          (the driver gives it to modules that call it)"
                .to_string();
            return Err(self.fault(w, lane, pc, FaultKind::IllegalInstruction, None, detail));
        };
        let tree = grid.tree;
        let [gx, gy, _] = self.launch.grid;
        let block = u64::from(self.ctaid[0])
            + u64::from(gx) * (u64::from(self.ctaid[1]) + u64::from(gy) * u64::from(self.ctaid[2]));
        let mut m = emask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let thread = w.id * 32 + l as u32;
            let a64 = |ctx: &Self, k: usize| ctx.local_u64(w.id, l, args[k]);
            let a32 = |ctx: &Self, k: usize| ctx.local_u32(w.id, l, args[k]);
            // (result, its size): a cudaError_t, or a pointer.
            let (value, size): (u64, u64) = match call {
                DevRt::GetParameterBufferV2 => {
                    let f = a64(self, 0);
                    let r = match self.kernel_at(f) {
                        None => Err(error::INVALID_DEVICE_FUNCTION),
                        Some(kernel) => {
                            let config = Config {
                                kernel,
                                grid: self.local_dim3(w.id, l, args[1]),
                                block: self.local_dim3(w.id, l, args[2]),
                                shared: a32(self, 3),
                            };
                            let k = &self.module.kernels[kernel];
                            let bytes = k.params.iter().map(|p| p.offset + p.size).max();
                            self.check_config(&config).and_then(|()| {
                                self.parameter_buffer(
                                    grid,
                                    u64::from(bytes.unwrap_or(0)),
                                    Some(config),
                                )
                            })
                        }
                    };
                    (self.pointer_or_error(grid, block, thread, r), 8)
                }
                DevRt::GetParameterBuffer => {
                    let (align, bytes) = (a64(self, 0), a64(self, 1));
                    let r = if !align.is_power_of_two() || align > 4096 || bytes > 1 << 16 {
                        Err(error::INVALID_VALUE)
                    } else {
                        self.parameter_buffer(grid, bytes, None)
                    };
                    (self.pointer_or_error(grid, block, thread, r), 8)
                }
                DevRt::LaunchDeviceV2 => {
                    let (buffer, stream) = (a64(self, 0), a64(self, 1));
                    let e = self.launch_buffer(grid, w, l, buffer, stream, None);
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::LaunchDevice => {
                    let (f, buffer, stream) = (a64(self, 0), a64(self, 1), a64(self, 5));
                    let e = match self.kernel_at(f) {
                        None => {
                            // The buffer stays the grid's, given back when it ends.
                            error::INVALID_DEVICE_FUNCTION
                        }
                        Some(kernel) => {
                            let config = Config {
                                kernel,
                                grid: self.local_dim3(w.id, l, args[2]),
                                block: self.local_dim3(w.id, l, args[3]),
                                shared: a32(self, 4),
                            };
                            self.launch_buffer(grid, w, l, buffer, stream, Some(config))
                        }
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::StreamCreateWithFlags => {
                    let (out, flags) = (a64(self, 0), u64::from(a32(self, 1)));
                    // The CUDA programming guide asks for cudaStreamNonBlocking, but the
                    // H200 accepts cudaStreamDefault too (runtime program
                    // dynamic_parallelism, recorded); other flags are refused.
                    let e = if flags != STREAM_NON_BLOCKING && flags != 0 {
                        error::INVALID_VALUE
                    } else {
                        let h = self.new_handle(tree, w, l, pc, out)?;
                        lock(&tree.streams).insert(h);
                        error::SUCCESS
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::StreamDestroy => {
                    // Its launches still run (the stream goes when its work is done).
                    let e = if lock(&tree.streams).remove(&a64(self, 0)) {
                        error::SUCCESS
                    } else {
                        error::INVALID_RESOURCE_HANDLE
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::StreamWaitEvent => {
                    let (s, ev) = (a64(self, 0), a64(self, 1));
                    // The schedule runs launches in the order they were made, so what
                    // was recorded before the wait has run before what follows it. The
                    // flags are not looked at: the H200's device runtime answered
                    // cudaSuccess for flags 7 (runtime program device_runtime_calls).
                    let e = if !Self::stream_ok(tree, s) || !lock(&tree.events).contains(&ev) {
                        error::INVALID_RESOURCE_HANDLE
                    } else {
                        error::SUCCESS
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::EventCreateWithFlags => {
                    let (out, flags) = (a64(self, 0), u64::from(a32(self, 1)));
                    let e = if flags != EVENT_DISABLE_TIMING {
                        // Events on the device take no timing (the guide: only
                        // cudaEventDisableTiming).
                        error::INVALID_VALUE
                    } else {
                        let h = self.new_handle(tree, w, l, pc, out)?;
                        lock(&tree.events).insert(h);
                        error::SUCCESS
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::EventRecord | DevRt::EventRecordWithFlags => {
                    let (ev, s) = (a64(self, 0), a64(self, 1));
                    let flags = if call == DevRt::EventRecordWithFlags {
                        a32(self, 2)
                    } else {
                        0
                    };
                    let e = if flags != 0 {
                        error::INVALID_VALUE
                    } else if !Self::stream_ok(tree, s) || !lock(&tree.events).contains(&ev) {
                        error::INVALID_RESOURCE_HANDLE
                    } else {
                        error::SUCCESS
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::EventDestroy => {
                    let e = if lock(&tree.events).remove(&a64(self, 0)) {
                        error::SUCCESS
                    } else {
                        error::INVALID_RESOURCE_HANDLE
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::GetLastError => {
                    let e = lock(&grid.errors).remove(&(block, thread)).unwrap_or(0);
                    (e as u32 as u64, 4)
                }
                DevRt::PeekAtLastError => {
                    let e = lock(&grid.errors)
                        .get(&(block, thread))
                        .copied()
                        .unwrap_or(0);
                    (e as u32 as u64, 4)
                }
                DevRt::GetErrorString | DevRt::GetErrorName => {
                    let code = a32(self, 0) as i32;
                    let name = call == DevRt::GetErrorName;
                    (self.error_string(tree, w, l, pc, code, name)?, 8)
                }
                DevRt::Malloc => {
                    let (out, bytes) = (a64(self, 0), a64(self, 1));
                    // The device heap, which device-side malloc shares (the guide).
                    let e = match self.launch.heap.map(|h| h.malloc(bytes)) {
                        Some(p) if p != 0 => {
                            self.runtime_store(w, l, pc, out, 8, p)?;
                            error::SUCCESS
                        }
                        _ => error::MEMORY_ALLOCATION,
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::Free => {
                    let p = a64(self, 0);
                    let e = match self.launch.heap {
                        _ if p == 0 => error::SUCCESS,
                        Some(h) if h.free(p).is_ok() => error::SUCCESS,
                        _ => error::INVALID_VALUE,
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::DeviceGetAttribute => {
                    let (out, attr, dev) = (a64(self, 0), a32(self, 1) as i32, a32(self, 2));
                    let e = if dev != self.launch.device_ordinal {
                        error::INVALID_DEVICE
                    } else {
                        match (tree.rt.attribute)(attr) {
                            Some(v) => {
                                self.runtime_store(w, l, pc, out, 4, v as u32 as u64)?;
                                error::SUCCESS
                            }
                            None => error::INVALID_VALUE,
                        }
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::MemcpyAsync => {
                    let (dst, src, bytes) = (a64(self, 0), a64(self, 1), a64(self, 2));
                    let (kind, stream) = (a32(self, 3), a64(self, 4));
                    // cudaMemcpyDeviceToDevice or cudaMemcpyDefault: a kernel reaches
                    // device memory only.
                    let e = if kind != 3 && kind != 4 {
                        error::INVALID_MEMCPY_DIRECTION
                    } else if bytes > MAX_COPY {
                        error::INVALID_VALUE
                    } else if bytes == 0 {
                        error::SUCCESS
                    } else {
                        let (dst, src) = (Region::linear(dst), Region::linear(src));
                        let extent = [bytes, 1, 1];
                        self.queue_memory_work(grid, Work::Copy { dst, src, extent }, stream)
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::MemsetAsync => {
                    // Arguments 0 and 1 (address and value) are the H200's to ignore.
                    let (bytes, stream) = (a64(self, 2), a64(self, 3));
                    let e = if bytes > MAX_COPY {
                        error::INVALID_VALUE
                    } else if bytes == 0 {
                        error::SUCCESS
                    } else {
                        let extent = [bytes, 1, 1];
                        self.queue_memory_work(grid, Work::Set { extent }, stream)
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::Memcpy2DAsync => {
                    let (dst, dpitch, src, spitch) =
                        (a64(self, 0), a64(self, 1), a64(self, 2), a64(self, 3));
                    let (width, height) = (a64(self, 4), a64(self, 5));
                    let (kind, stream) = (a32(self, 6), a64(self, 7));
                    let e = if kind != 3 && kind != 4 {
                        error::INVALID_MEMCPY_DIRECTION
                    } else if width > dpitch || width > spitch {
                        // cudaMemcpy2DAsync: neither pitch may be less than the width.
                        error::INVALID_PITCH_VALUE
                    } else {
                        let dst = Region {
                            base: dst,
                            pitch: dpitch,
                            slice: 0,
                        };
                        let src = Region {
                            base: src,
                            pitch: spitch,
                            slice: 0,
                        };
                        self.queue_region_work(
                            grid,
                            Work::Copy {
                                dst,
                                src,
                                extent: [width, height, 1],
                            },
                            stream,
                        )
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::Memcpy3DAsync => {
                    let (p, stream) = (a64(self, 0), a64(self, 1));
                    let e = match self.read_bytes(w.id, l, p, MEMCPY3D_PARMS) {
                        None => error::INVALID_VALUE,
                        Some(b) => match memcpy3d(&b) {
                            Err(e) => e,
                            Ok(work) => self.queue_region_work(grid, work, stream),
                        },
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::Memset2DAsync => {
                    // The address and value (arguments 0 and 2) are the H200's to ignore.
                    let (pitch, width, height) = (a64(self, 1), a64(self, 3), a64(self, 4));
                    let stream = a64(self, 5);
                    let e = if width > pitch {
                        error::INVALID_VALUE
                    } else {
                        let extent = [width, height, 1];
                        self.queue_region_work(grid, Work::Set { extent }, stream)
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::Memset3DAsync => {
                    // cudaPitchedPtr {ptr, pitch, xsize, ysize} and cudaExtent {width in
                    // bytes, height, depth}, passed by value; the pointer and value are the
                    // H200's to ignore.
                    let at = |k: usize, field: u32| self.local_u64(w.id, l, args[k] + 8 * field);
                    let pitch = at(0, 1);
                    let extent = [at(2, 0), at(2, 1), at(2, 2)];
                    let stream = a64(self, 3);
                    let e = if extent[0] > pitch {
                        error::INVALID_VALUE
                    } else {
                        self.queue_region_work(grid, Work::Set { extent }, stream)
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::DeviceGetLimit => {
                    let (out, limit) = (a64(self, 0), a32(self, 1) as i32);
                    let e = match usize::try_from(limit)
                        .ok()
                        .and_then(|i| tree.rt.limits.get(i))
                    {
                        None => error::INVALID_VALUE,
                        Some(None) => error::UNSUPPORTED_LIMIT,
                        Some(Some(v)) => {
                            self.runtime_store(w, l, pc, out, 8, *v)?;
                            error::SUCCESS
                        }
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::DeviceGetCacheConfig => {
                    let out = a64(self, 0);
                    self.runtime_store(w, l, pc, out, 4, tree.rt.cache_config as u32 as u64)?;
                    (0, 4)
                }
                DevRt::DeviceGetSharedMemConfig => {
                    // cudaSharedMemBankSizeFourByte: the bank size of every device since
                    // compute capability 5.0, what the host's call answers.
                    self.runtime_store(w, l, pc, a64(self, 0), 4, 1)?;
                    (0, 4)
                }
                DevRt::GetDeviceCount => {
                    let n = tree.rt.device_count as u32 as u64;
                    self.runtime_store(w, l, pc, a64(self, 0), 4, n)?;
                    (0, 4)
                }
                DevRt::RuntimeGetVersion => {
                    self.runtime_store(w, l, pc, a64(self, 0), 4, RUNTIME_VERSION)?;
                    (0, 4)
                }
                DevRt::FuncGetAttributes => {
                    let (out, f) = (a64(self, 0), a64(self, 1));
                    let e = match self.kernel_at(f) {
                        None => error::INVALID_DEVICE_FUNCTION,
                        Some(k) => {
                            let values: Option<Vec<i32>> = FUNC_ATTRIBUTES
                                .iter()
                                .map(|&(attr, ..)| (tree.rt.function_attribute)(k, attr))
                                .collect();
                            match values {
                                None => error::INVALID_DEVICE_FUNCTION,
                                Some(values) => {
                                    for (&(attr, offset, size), v) in
                                        FUNC_ATTRIBUTES.iter().zip(values)
                                    {
                                        // Recorded on the H200 (device_runtime_calls): the
                                        // device answers 0 for the two attributes the host
                                        // sets (cudaFuncSetAttribute's 65536 and 50 were
                                        // not seen there).
                                        let v = if device_side_zero(attr) { 0 } else { v };
                                        // Every size_t is a count of bytes (never
                                        // negative); the carveout's -1 is an int's.
                                        let v = u64::from(v as u32);
                                        self.runtime_store(w, l, pc, out + offset, size, v)?;
                                    }
                                    error::SUCCESS
                                }
                            }
                        }
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::OccupancyMaxActiveBlocksPerMultiprocessor
                | DevRt::OccupancyMaxActiveBlocksPerMultiprocessorWithFlags => {
                    let (out, f) = (a64(self, 0), a64(self, 1));
                    let (threads, shared) = (a32(self, 2) as i32, a64(self, 3));
                    // The flags (cudaOccupancyDisableCachingOverride) change nothing the
                    // mock models, as on the host (cuOccupancy...WithFlags).
                    let e = match self.kernel_at(f) {
                        None => error::INVALID_DEVICE_FUNCTION,
                        Some(k) => match (tree.rt.occupancy)(k, threads, shared) {
                            Some(n) => {
                                self.runtime_store(w, l, pc, out, 4, n as u32 as u64)?;
                                error::SUCCESS
                            }
                            None => error::INVALID_VALUE,
                        },
                    };
                    (self.status(grid, block, thread, e), 4)
                }
                DevRt::GraphLaunch => {
                    let (exec, stream) = (a64(self, 0), a64(self, 1));
                    // Only a graph's kernel node reaches the driver's graphs; elsewhere
                    // (a kernel launched into a stream, a grid launched on the device)
                    // the guide forbids the launch. Its code awaits the H200's record.
                    let e = match tree.rt.graph_launch.filter(|_| grid.root) {
                        Some(launch) => launch(exec, stream).map_err(|why| {
                            self.fault(w, l as u32, pc, FaultKind::IllegalAddress, None, why)
                        })?,
                        None => error::INVALID_VALUE,
                    };
                    // Recorded on the H200 (device_graphs): the refusals leave the
                    // thread's last error as it was (cudaGetLastError: cudaSuccess after
                    // a cudaErrorInvalidValue).
                    (e as u32 as u64, 4)
                }
                DevRt::GetDevice => {
                    let out = a64(self, 0);
                    self.runtime_store(w, l, pc, out, 4, u64::from(self.launch.device_ordinal))?;
                    (0, 4)
                }
            };
            let base = (w.id as usize * 32 + l) * self.local_bytes;
            if in_window(u64::from(ret), size, self.local_bytes as u64) {
                write_le(&mut self.local, base + ret as usize, size, value);
            }
        }
        Ok(())
    }

    /// A call's cudaError_t, kept as the thread's last error when it is one.
    fn status(&self, grid: &Grid, block: u64, thread: u32, e: i32) -> u64 {
        if e != error::SUCCESS {
            lock(&grid.errors).insert((block, thread), e);
        }
        e as u32 as u64
    }

    /// A returned pointer: NULL with the thread's last error set on failure.
    fn pointer_or_error(&self, grid: &Grid, block: u64, thread: u32, r: Result<u64, i32>) -> u64 {
        match r {
            Ok(p) => p,
            Err(e) => {
                self.status(grid, block, thread, e);
                0
            }
        }
    }
}
