//! PTX in, a decoded program out, executed a warp at a time over a memory interface.
//!
//! API as agreed, extended (nothing removed or changed): `Module::parse_with_max_version`
//! (a profile's PTX version limit; `parse` uses [`MAX_PTX_VERSION`]),
//! `FatbinError::NoCompatiblePtx` (PTX only for architectures above the device),
//! `fatbin::entries`/`entry_text`/`Entry` (listing a fatbin), and the generic-address
//! window constants, and device printf: [`run_with_printf`] and [`PrintfBuffer`] (`run`
//! discards what the kernel prints). `Launch::step_limit` counts instructions issued per warp;
//! `Launch::time_limit` bounds a launch's wall-clock time (`FaultKind::TimeLimit`);
//! `Stats::instructions` counts thread-instructions.
//!
//! `Module::parse` reads PTX text once: tokens (`lex`), a syntax tree (`parse`), then
//! `decode` checks names and types and lowers each instruction into the executor's own
//! form (registers as indices, operands typed, labels as program counters, per-type lane
//! functions chosen). `run` executes a kernel of a module: blocks in parallel on host
//! threads, each block's warps in turn, each warp 32 lanes at once with an active mask.
//!
//! The executor knows nothing of a driver. Global and `.const` memory are reached only
//! through [`Memory::translate`], which the mock implements with its mappings and access
//! rights; shared, local and param memory belong to the executor.
//!
//! Generic addresses: shared, local and kernel-parameter memory appear in the generic
//! address space in windows above the canonical 64-bit user range, where no host (and so
//! no mock device) address can lie: [`SHARED_WINDOW`], [`LOCAL_WINDOW`], [`PARAM_WINDOW`],
//! each 4 GiB. `cvta.shared`/`cvta.local` add the window base; `cvta.to.*` subtract it.
//!
//! Modules: `lex`, `parse`, `decode` (text to the executor's form); `executor` (blocks,
//! warps, lanes; memory spaces, barriers, clusters, calls, async copies); `math` (the
//! lane functions); `mma` and `wgmma` (tensor-core fragments and arithmetic); `jit`
//! (kernels compiled to host code with Cranelift, inside the executor's loop); `printf`
//! (device printf and assert messages); `heap` (the device heap behind `malloc`);
//! `texture` (textures and surfaces as a kernel samples them); `tensormap` (tensor maps);
//! `fatbin` (the PTX a fatbin holds for a compute capability); `link` (the JIT linker's
//! PTX inputs combined).

mod cexpr;
mod decode;
pub mod devrt;
mod executor;
pub mod fatbin;
pub mod heap;
mod jit;
mod lex;
pub mod link;
mod math;
mod mma;
mod parse;
mod printf;
mod targets;
pub mod tensormap;
pub mod texture;
mod video;
mod wgmma;

use std::fmt;

pub use executor::{run, run_with_printf};
pub use heap::DeviceHeap;
pub use texture::{
    AddressMode, BlockFormat, ChannelKind, Format, Image, MipmapSampler, Sampler, Storage,
    SurfaceObject, Texels, TextureObject,
};

/// Generic address of byte 0 of the block's shared memory.
pub const SHARED_WINDOW: u64 = 0x8000_0000_0000_0000;
/// Bytes at the start of every block's shared memory that sm_90 reserves for the system
/// (`CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK`, 1 KiB on the H200): the
/// region `%reserved_smem_offset_begin`..`%reserved_smem_offset_cap` names, offsets 0 to
/// 0x400 as the H200 reads them (corpus `special_registers_issue21`). Cooperative groups
/// keep their multi-warp tiles' barriers and exchange slots there
/// (`%reserved_smem_offset_1`), so it is real memory of the block; the kernel's own
/// variables and the launch's dynamic shared memory lie after it.
pub const RESERVED_SHARED: u64 = 0x400;
/// Generic address of byte 0 of the thread's local memory.
pub const LOCAL_WINDOW: u64 = 0x8001_0000_0000_0000;
/// Generic address of byte 0 of the kernel's parameter buffer.
pub const PARAM_WINDOW: u64 = 0x8002_0000_0000_0000;
/// Generic (and global) address of byte 0 of a cooperative launch's grid workspace, the
/// memory cooperative groups' grid sync counts arrivals in (`%envreg1:%envreg2` hold it).
/// The executor owns it, one per launch: a fault in one launch leaves no half-counted
/// barrier behind for the next, and the driver allocates nothing for it.
pub const GRID_WINDOW: u64 = 0x8003_0000_0000_0000;
/// Bytes of the grid workspace (cooperative groups' `grid_workspace`: a size word and the
/// barrier word, padded).
pub const GRID_WORKSPACE_BYTES: u64 = 16;
/// Generic address of the module's function 0: function `i` (in the order the module
/// defines functions with bodies) is at `FUNC_WINDOW + i * FUNC_STRIDE`. What
/// `mov.u64 %rd, func;` gives and indirect calls take: no memory lies in the window, so a
/// load or store through a function's address faults, and a call through anything else
/// is refused by address.
pub const FUNC_WINDOW: u64 = 0x8004_0000_0000_0000;
/// Bytes between two functions' addresses.
pub const FUNC_STRIDE: u64 = 16;
/// The handle of the module's texture or surface reference `i` (`.global .texref`,
/// `.global .surfref`, in declaration order, one sequence for both): what an instruction
/// naming the reference reads through (`tex.2d ... [tex_ref, {...}]`) and what `mov.u64
/// %rd, tex_ref;` gives. [`Memory::texture`] and [`Memory::surface`] resolve it to the
/// state the driver bound to the reference (the launch's snapshot); no memory lies here.
pub const REFERENCE_WINDOW: u64 = 0x8005_0000_0000_0000;

/// The module reference a handle names ([`REFERENCE_WINDOW`]), if it is one.
pub fn reference_index(handle: u64) -> Option<usize> {
    handle
        .checked_sub(REFERENCE_WINDOW)
        .filter(|i| *i < WINDOW_SIZE)
        .map(|i| i as usize)
}

/// A module-scope texture or surface reference: the driver finds it by name
/// (cuModuleGetTexRef, cuModuleGetSurfRef) and binds it; kernels name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub name: String,
    /// `.surfref` (else `.texref`).
    pub surface: bool,
}

impl Reference {
    /// The handle of the module's reference `index` (see [`REFERENCE_WINDOW`]).
    pub fn handle(index: usize) -> u64 {
        REFERENCE_WINDOW + index as u64
    }
}

/// Size of each window.
pub const WINDOW_SIZE: u64 = 1 << 32;

/// How a `.shared::cluster` address names a block: its offset in the block's shared
/// memory plus `(rank + 1) * CLUSTER_RANK_STRIDE`, what `mapa` gives; below the stride,
/// the running block's own (the `.shared::cta` window lies inside the `.shared::cluster`
/// one, as PTX requires). Generic addresses add [`SHARED_WINDOW`]. A block has at most
/// 227 KiB of shared memory, so 16 MiB between blocks leaves every other offset outside
/// any block: an address past a block's bytes faults rather than reaching the next.
pub const CLUSTER_RANK_STRIDE: u64 = 1 << 24;
/// The most blocks a cluster may have: 8 portably, 16 on the H200 with the kernel's
/// non-portable cluster size attribute (CUDA programming guide, "Thread Block Clusters").
pub const MAX_CLUSTER_BLOCKS: u32 = 16;

/// The `.shared::cluster` address of offset `a` (a block's own shared address, or any
/// cluster address: its block is replaced) in the shared memory of block `rank`.
pub(crate) fn cluster_address(rank: u32, a: u64) -> u64 {
    ((rank as u64 + 1) * CLUSTER_RANK_STRIDE) | (a & (CLUSTER_RANK_STRIDE - 1))
}

/// The newest PTX ISA version the parser accepts (nvcc 13.0 writes 9.0).
pub const MAX_PTX_VERSION: (u32, u32) = (9, 0);

/// A parsed and decoded PTX module: parse and check once, run many times.
#[derive(Debug)]
pub struct Module {
    pub version: (u32, u32),
    pub target: String,
    pub kernels: Vec<Kernel>,
    pub globals: Vec<Global>,
    /// The module's `.texref` and `.surfref` variables, in declaration order: reference
    /// `i`'s handle is [`Reference::handle`]`(i)`.
    pub references: Vec<Reference>,
    pub(crate) program: decode::Program,
    /// Each kernel's compiled code, made at its first launch under `Engine::Jit`.
    pub(crate) jit: jit::Cache,
}

impl Module {
    /// Parses PTX text. Versions newer than [`MAX_PTX_VERSION`] are refused
    /// (`LoadErrorKind::UnsupportedVersion`), as a driver refuses PTX from a newer toolkit.
    pub fn parse(src: &str) -> Result<Module, LoadError> {
        Self::parse_with_max_version(src, MAX_PTX_VERSION)
    }

    /// Parses PTX text, accepting ISA versions up to `max_version` (a driver profile's).
    pub fn parse_with_max_version(src: &str, max_version: (u32, u32)) -> Result<Module, LoadError> {
        let toks = lex::tokenize(src)?;
        let ast = parse::Parser::new(&toks).module()?;
        if ast.version == (0, 0) {
            return Err(LoadError::at(
                1,
                1,
                LoadErrorKind::Syntax,
                "missing `.version` directive",
            ));
        }
        if ast.version > max_version {
            return Err(LoadError::at(
                1,
                1,
                LoadErrorKind::UnsupportedVersion,
                format!(
                    "PTX ISA version {}.{} is newer than the {}.{} this driver takes",
                    ast.version.0, ast.version.1, max_version.0, max_version.1
                ),
            ));
        }
        decode::decode(ast, src)
    }

    /// Compiles kernel `kernel` for [`Engine::Jit`] now, if it was not yet (a launch
    /// does it at its first run): how many of its instructions became host code and how
    /// many run through the interpreter's code; None when it did not compile (the
    /// interpreter runs it all).
    pub fn jit_compile(&self, kernel: usize) -> Option<JitInfo> {
        self.jit.get(self, kernel).map(|c| JitInfo {
            native: c.native,
            via_interpreter: c.via_interp,
            texture: c.texture,
        })
    }

    /// Whether kernel `kernel` has been compiled (or tried to, and the interpreter runs
    /// it): under [`Engine::Tiered`], once compiling pays.
    pub fn jit_compiled(&self, kernel: usize) -> bool {
        self.jit.compiled(kernel)
    }

    /// Whether some function of the module calls the device heap's `malloc` or `free`
    /// (declared without a body: the driver provides them). A launch of such a module
    /// needs [`Launch::heap`].
    pub fn uses_device_heap(&self) -> bool {
        self.program.uses_heap
    }

    /// Whether some function of the module calls the device runtime (`__cudaCDP2*`:
    /// device-side launches, streams, events, cudaMalloc...). A launch of such a module
    /// needs [`Launch::device_runtime`].
    pub fn uses_device_runtime(&self) -> bool {
        self.program.uses_device_runtime
    }

    /// Whether kernel `kernel` launches kernels on the device (CUDA dynamic parallelism),
    /// itself or through a function it calls: a graph instantiated for device launch may
    /// not hold it.
    pub fn kernel_launches_on_device(&self, kernel: usize) -> bool {
        let name = &self.kernels[kernel].name;
        self.program
            .funcs
            .iter()
            .any(|f| f.kernel && f.name == *name && f.launches_on_device)
    }

    /// Whether kernel `kernel` launches device graphs (`cudaGraphLaunch`), itself or
    /// through a function it calls: the H200 refuses to launch it other than as a graph's
    /// kernel node.
    pub fn kernel_launches_graphs(&self, kernel: usize) -> bool {
        let name = &self.kernels[kernel].name;
        self.program
            .funcs
            .iter()
            .any(|f| f.kernel && f.name == *name && f.launches_graphs)
    }

    /// Index of the kernel (`.entry`) named `name`.
    pub fn kernel(&self, name: &str) -> Option<usize> {
        self.kernels.iter().position(|k| k.name == name)
    }
}

/// What [`Module::jit_compile`] made of a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JitInfo {
    /// Instructions compiled to host code.
    pub native: usize,
    /// Instructions the compiled code runs through the interpreter's code (memory,
    /// warp-wide operations, the rest).
    pub via_interpreter: usize,
    /// Texture and surface instructions (`tex`, `tld4`, `txq`, `suld`, `sust`, `sured`,
    /// `suq`): calls from the compiled code into the sampling code the interpreter runs
    /// too, a warp instruction at a time (not counted in `via_interpreter`).
    pub texture: usize,
}

/// Where in the PTX text loading failed, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct LoadError {
    pub line: u32,
    pub column: u32,
    pub kind: LoadErrorKind,
    pub message: String,
}

impl LoadError {
    pub(crate) fn at(
        line: u32,
        column: u32,
        kind: LoadErrorKind,
        message: impl Into<String>,
    ) -> Self {
        LoadError {
            line,
            column,
            kind,
            message: message.into(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadErrorKind {
    /// Not PTX: a token or statement out of place.
    Syntax,
    /// Valid PTX this executor does not implement (an instruction, modifier or directive).
    Unsupported,
    /// `.version` newer than the driver takes.
    UnsupportedVersion,
    /// Undeclared register, unknown label or function, operand of the wrong kind.
    Semantic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateSpace {
    Global,
    Const,
}

/// A module-scope `.global` or `.const` variable; the launcher allocates it in device
/// memory, fills it with `init`, and passes its address in [`Launch::globals`].
/// An address in a variable's initialiser (`generic(var)+off`, `var+off`, or the bits
/// of one a mask picks: `0xFF00(generic(var)+4)`), written by the loader once it has
/// placed the variables ([`Global::initial_bytes`]). A generic address of a `.global` or
/// `.const` variable is its address: the mock's device memory has one address space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reloc {
    /// Where in the initialiser, and how many bytes (the element's, at most 8).
    pub offset: u64,
    pub bytes: u8,
    /// The variable whose address it is (its index in `Module::globals`), plus `addend`.
    pub target: u32,
    pub addend: i64,
    /// The bits of the address kept, shifted down to the mask's lowest set bit
    /// (`u64::MAX`: the whole address).
    pub mask: u64,
}

#[derive(Debug, Clone)]
pub struct Global {
    pub name: String,
    pub space: StateSpace,
    pub size: u64,
    pub align: u32,
    /// The initialised prefix: the initialisers' bytes, at most `size` long; every byte
    /// after it is zero (a huge variable costs only what its initialiser says).
    pub init: Vec<u8>,
    /// `.attribute(.managed)` (`__managed__`): the driver places it in managed memory,
    /// which the host reaches at the same address.
    pub managed: bool,
    /// The variables' addresses `init` holds zeros for.
    pub relocs: Vec<Reloc>,
}

impl Global {
    /// The initialised prefix with the variables' addresses written in, `addresses[i]`
    /// being where variable `i` of the module lies (`Launch::globals`).
    pub fn initial_bytes(&self, addresses: &[u64]) -> Vec<u8> {
        let mut b = self.init.clone();
        for r in &self.relocs {
            let Some(&base) = addresses.get(r.target as usize) else {
                continue;
            };
            let a = base.wrapping_add(r.addend as u64);
            let v = (a & r.mask) >> r.mask.trailing_zeros().min(63);
            let at = r.offset as usize;
            let n = usize::from(r.bytes);
            if let Some(dst) = b.get_mut(at..at + n) {
                dst.copy_from_slice(&v.to_le_bytes()[..n]);
            }
        }
        b
    }
}

#[derive(Debug, Clone)]
pub struct Kernel {
    pub name: String,
    pub params: Vec<Param>,
    pub static_shared_bytes: u32,
    pub local_bytes_per_thread: u32,
    /// `.maxntid`: the product of its dimensions.
    pub max_threads_per_block: Option<u32>,
    pub reqntid: Option<[u32; 3]>,
    /// Registers declared by the kernel and the functions it calls.
    pub registers: u32,
    /// `.maxnreg` (or the linker's CU_JIT_MAX_REGISTERS, which the mock's linker writes
    /// as `.maxnreg`): what ptxas would hold the kernel's registers to.
    pub max_registers: Option<u32>,
    /// `.reqnctapercluster`: the cluster shape every launch must have (a launch without
    /// one gets it, as the CUDA programming guide says of `__cluster_dims__`).
    pub required_cluster: Option<[u32; 3]>,
    /// `.explicitcluster`: a launch must give a cluster shape.
    pub explicit_cluster: bool,
    /// `.blocksareclusters`: a launch's grid counts clusters of `required_cluster`, not
    /// blocks ([`Kernel::grid_of_launch`]).
    pub blocks_are_clusters: bool,
    /// `.maxclusterrank`: the most blocks a cluster may have.
    pub max_cluster_rank: Option<u32>,
    /// The kernel, or a function it may call, has a strong access to memory that may be
    /// the host's (a `.volatile`, `.relaxed`, `.acquire` or `.release` load or store
    /// outside shared, local, parameter and constant memory), a system-scope fence, or an
    /// indirect call: it may be signalling the host through memory (a flag the host
    /// polls, a handshake), which orders the host's accesses without any call a driver
    /// sees. Weak accesses cannot: the memory model orders nothing by them.
    pub may_signal_host: bool,
    /// The parameters (indices into `params`) the kernel's own code may store through:
    /// an address it writes to, or updates atomically, may derive from their values.
    /// What a callee, a tensor map or a texture writes is not counted: it may miss a
    /// parameter, never name one the kernel cannot store through.
    pub params_stored_through: Vec<usize>,
    /// Why NVIDIA's JIT compiles no code for the kernel, if it does not: the kernel, or a
    /// function it calls, queries a texture object with `txq` for other than its width,
    /// height or depth. The H200's driver (580.159.04) then answers CUDA_ERROR_NOT_FOUND
    /// for the kernel: at cuModuleGetFunction under lazy loading, at the module's load
    /// under eager loading (ci/explore/txq_jit.c, recorded in
    /// runs/2026-12-03-h200-session14/explore/). The executor runs such a kernel all the
    /// same; whether to is the driver's decision.
    pub nvidia_jit_refuses: Option<String>,
    pub(crate) entry_pc: u32,
}

impl Kernel {
    /// The grid of blocks a launch of `grid` runs: `grid` itself, or, for a kernel marked
    /// `.blocksareclusters`, that many clusters of `.reqnctapercluster` blocks (the H200:
    /// a grid of (3,1) with clusters of 2 runs 6 blocks, %nctaid (6,1) and %nclusterid
    /// (3,1); probe blocks_are_clusters). None when that overflows a dimension.
    pub fn grid_of_launch(&self, grid: [u32; 3]) -> Option<[u32; 3]> {
        match (self.blocks_are_clusters, self.required_cluster) {
            (true, Some(c)) => Some([
                grid[0].checked_mul(c[0])?,
                grid[1].checked_mul(c[1])?,
                grid[2].checked_mul(c[2])?,
            ]),
            _ => Some(grid),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    pub offset: u32,
    pub size: u32,
    pub align: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    Atomic,
}

/// Host memory standing for device memory at `base..base+len`.
#[derive(Debug, Clone, Copy)]
pub struct HostSpan {
    pub base: u64,
    pub len: u64,
    pub host: *mut u8,
    pub writable: bool,
}

/// Why the memory refused an access: what lies at the address, which rule it breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub message: String,
}

/// The memory a kernel sees: the mock's address translation.
///
/// # Safety
/// A returned span's `host` pointer must be valid for reads (and for writes when the
/// access was `Write` or `Atomic`, or `writable` is true) of `len` bytes for the whole
/// launch, and may be accessed concurrently by other host threads running other blocks
/// (the executor accesses it only through atomic operations, so concurrent kernels'
/// races are not undefined behaviour in the host process).
pub unsafe trait Memory: Sync {
    fn translate(&self, addr: u64, len: u64, access: Access) -> Result<HostSpan, Fault>;

    /// The texture object a kernel names by `handle` (`tex`, `tld4`, `txq`), if it is
    /// one: the executor reads its texels through [`Image`]'s bounds-checked storage.
    fn texture(&self, _handle: u64) -> Option<std::sync::Arc<TextureObject>> {
        None
    }

    /// The surface object a kernel names by `handle` (`suld`, `sust`, `suq`), if it is one.
    fn surface(&self, _handle: u64) -> Option<std::sync::Arc<SurfaceObject>> {
        None
    }
}

/// One launch's configuration.
#[derive(Debug, Clone)]
pub struct Launch<'a> {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
    /// The kernel's parameter buffer, laid out per [`Kernel::params`].
    pub params: &'a [u8],
    /// Device address of each of [`Module::globals`].
    pub globals: &'a [u64],
    pub device_ordinal: u32,
    pub sm_count: u32,
    /// The SMs the blocks run on (`%smid`), where fewer than `sm_count` (a green
    /// context's); None: every SM.
    pub sm_ids: Option<&'a [u32]>,
    pub host_threads: usize,
    /// The most instructions one warp may issue before the launch ends in `StepLimit`.
    pub step_limit: Option<u64>,
    /// The longest the launch may run, from when its first block starts, before it ends
    /// in `TimeLimit`: a watchdog for CI, where a kernel that never ends (or a grid of
    /// 2^31 blocks) would otherwise hold the job until it is killed. The executor polls
    /// the deadline before each block and every 65,536 instructions of a warp, so it
    /// holds whichever thread runs the launch.
    pub time_limit: Option<std::time::Duration>,
    /// What runs the kernel's instructions.
    pub engine: Engine,
    /// A cooperative launch (`cuLaunchCooperativeKernel`): every block of the grid is in
    /// flight at once, blocks take turns on the host threads (each runs a slice of
    /// instructions, then yields), and the kernel sees a grid workspace
    /// ([`GRID_WINDOW`]), so that a grid-wide sync, which spins until every block has
    /// arrived, completes however few host threads there are. The driver checks that the
    /// grid fits the device's occupancy, as a GPU must.
    pub cooperative: bool,
    /// The launch's cluster shape (`CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`), which the grid
    /// is a multiple of; None: the kernel's `.reqnctapercluster` if it has one, else each
    /// block is a cluster of one (as on a GPU), and `%is_explicit_cluster` is false. The
    /// blocks of a cluster of several run together, taking turns on one host thread, so
    /// that they can wait for each other (`barrier.cluster`) and reach each other's shared
    /// memory (`.shared::cluster`); different clusters run in parallel. In a cooperative
    /// launch the clusters take turns on the host threads as its blocks otherwise do.
    pub cluster: Option<[u32; 3]>,
    /// The context's `CU_LIMIT_STACK_SIZE`: bytes of call stack a thread has. Only
    /// recursive calls count against it (a GPU's stack for calls that cannot recurse is
    /// sized when the module loads): each activation of a function that may be active
    /// twice costs 16 bytes plus its own `.local` bytes; a call past the limit faults.
    pub stack_bytes: u64,
    /// The context's device heap, for modules that call `malloc`/`free`
    /// ([`Module::uses_device_heap`]); None: such a call faults.
    pub heap: Option<&'a DeviceHeap>,
    /// The device runtime (CUDA dynamic parallelism) for modules that call it
    /// ([`Module::uses_device_runtime`]); None: such a call faults.
    pub device_runtime: Option<&'a DeviceRuntime<'a>>,
    /// `%current_graph_exec` (`cudaGetCurrentGraphExec`): the handle of the device graph
    /// (one instantiated with `CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH`) whose kernel
    /// node this launch is; 0 outside one.
    pub current_graph_exec: u64,
}

/// The driver's side of a device-side `cudaGraphLaunch(exec, stream)`
/// ([`DeviceRuntime::graph_launch`]): the call's `cudaError_t`, or why the calling
/// thread faults with an illegal address.
pub type GraphLaunch<'a> = dyn Fn(u64, u64) -> Result<i32, String> + Sync + 'a;

/// What the driver gives a launch whose kernels launch kernels (CUDA dynamic
/// parallelism, CDP2): the device runtime's functions (`__cudaCDP2*`, libcudadevrt's
/// in NVIDIA's toolkit) are the executor's own (`executor/devrt.rs`).
pub struct DeviceRuntime<'a> {
    /// Device memory for the launches' parameter buffers and the error strings
    /// `cudaGetErrorString` returns: the device runtime's reserve, apart from the heap.
    pub pool: &'a DeviceHeap,
    /// `cudaLimitDevRuntimePendingLaunchCount`: the most launches handed a parameter
    /// buffer and not yet begun; one more fails with cudaErrorLaunchPendingCountExceeded.
    pub pending_launch_limit: u32,
    /// The launch's device's attributes (`cudaDeviceGetAttribute` on the device, whose
    /// `cudaDeviceAttr` numbers are the driver's `CUdevice_attribute`'s); None: invalid.
    pub attribute: &'a (dyn Fn(i32) -> Option<i32> + Sync),
    /// The context's limits at the launch, by `cudaLimit` (the driver's `CUlimit`
    /// numbers): `cudaDeviceGetLimit` on the device; None: not supported on the device
    /// (cudaErrorUnsupportedLimit, as the host's cuCtxGetLimit answers).
    pub limits: [Option<u64>; 8],
    /// The context's cache preference (`cudaDeviceGetCacheConfig`, a `cudaFuncCache`).
    pub cache_config: i32,
    /// How many devices the process sees (`cudaGetDeviceCount`).
    pub device_count: i32,
    /// A kernel of the module's attribute, by kernel index and `CUfunction_attribute`,
    /// as cuFuncGetAttribute answers for it (`cudaFuncGetAttributes` on the device);
    /// None: not known.
    pub function_attribute: &'a (dyn Fn(usize, i32) -> Option<i32> + Sync),
    /// cuOccupancyMaxActiveBlocksPerMultiprocessor's answer for a kernel of the module,
    /// by kernel index, block size and dynamic shared bytes.
    pub occupancy: &'a (dyn Fn(usize, i32, u64) -> Option<i32> + Sync),
    /// The device-side `cudaGraphLaunch(exec, stream)` of the launch's kernel (the root
    /// grid's, a graph's kernel node): the driver checks and queues it and answers its
    /// `cudaError_t`, or `Err(why)` where the launch faults the calling thread with an
    /// illegal address (as the H200 does for a graph not instantiated for device launch).
    /// None: the kernel is no graph's node, where a device graph cannot be launched (the
    /// CUDA programming guide: "from the device, a device graph must be launched from
    /// another graph").
    pub graph_launch: Option<&'a GraphLaunch<'a>>,
}

impl fmt::Debug for DeviceRuntime<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceRuntime")
            .field("pool", &self.pool)
            .field("pending_launch_limit", &self.pending_launch_limit)
            .field("limits", &self.limits)
            .field("cache_config", &self.cache_config)
            .field("device_count", &self.device_count)
            .finish_non_exhaustive()
    }
}

/// What runs a kernel: the interpreter (the reference), or host code compiled from the
/// same decoded program, which hands back to the interpreter at whatever it does not
/// compile (see `jit`). Both give the same memory, faults and messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Engine {
    Interp,
    /// Compiled at the kernel's first launch.
    #[default]
    Jit,
    /// Interpreted until compiling pays: a kernel compiles at a launch of at least
    /// [`TIER_UP_THREADS`] threads, once its interpreted launches have run
    /// [`TIER_UP_INSTRUCTIONS`], or in the middle of a launch once a host thread of it
    /// has interpreted that many (it goes on compiled). A debug build compiles a large kernel (a libdevice
    /// function inlined) in seconds, and test suites launch thousands of kernels once,
    /// on a thread or a few (numba-cuda's test_ufuncs: 2 to 4 s a kernel compiled, a few
    /// milliseconds interpreted).
    Tiered,
}

/// Under [`Engine::Tiered`], a launch of this many threads compiles its kernel.
pub const TIER_UP_THREADS: u64 = 1 << 14;
/// Under [`Engine::Tiered`], a kernel whose interpreted launches have run this many
/// thread instructions compiles at its next launch; a launch one host thread of which
/// has interpreted this many compiles it and goes on compiled.
pub const TIER_UP_INSTRUCTIONS: u64 = 1 << 24;

/// What a launch's device `printf` calls (nvcc's `vprintf`) and failed `assert`s print,
/// as a GPU's printf FIFO holds it until the host's next synchronisation: records in the
/// order the threads made them (blocks in no fixed order, as on a GPU; a warp's lanes in
/// lane order), each the formatted text of one call.
///
/// `limit` bounds the bytes kept (`CU_LIMIT_PRINTF_FIFO_SIZE`): a record that does not
/// fit is dropped, as a GPU drops what overflows its FIFO. The mock counts formatted
/// bytes, where a GPU's FIFO holds the arguments and a header per record: an
/// approximation. An assert's message is always kept, so that the reason for
/// CUDA_ERROR_ASSERT is never lost.
#[derive(Debug)]
pub struct PrintfBuffer {
    limit: u64,
    inner: std::sync::Mutex<PrintfInner>,
}

#[derive(Debug, Default)]
struct PrintfInner {
    bytes: Vec<u8>,
    /// Failed asserts' messages: the H200 prints them on stderr, apart from printf's
    /// stdout (recorded with clients/runtime/device_printf.cu).
    errors: Vec<u8>,
    dropped: u64,
}

impl PrintfBuffer {
    pub fn new(limit: u64) -> Self {
        PrintfBuffer {
            limit,
            inner: std::sync::Mutex::new(PrintfInner::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PrintfInner> {
        // A panic elsewhere does not make the text less valid.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends a record if it fits under the limit; false when it was dropped.
    pub(crate) fn push(&self, record: &[u8]) -> bool {
        let mut b = self.lock();
        if b.bytes.len() as u64 + record.len() as u64 > self.limit {
            b.dropped += 1;
            return false;
        }
        b.bytes.extend_from_slice(record);
        true
    }

    /// Appends an assert's message, whatever the limit.
    pub(crate) fn push_always(&self, record: &[u8]) {
        self.lock().errors.extend_from_slice(record);
    }

    /// The text printed so far, taken out of the buffer.
    pub fn take(&self) -> Vec<u8> {
        std::mem::take(&mut self.lock().bytes)
    }

    /// The failed asserts' messages so far, taken out of the buffer (a GPU's go to
    /// stderr).
    pub fn take_errors(&self) -> Vec<u8> {
        std::mem::take(&mut self.lock().errors)
    }

    /// How many records were dropped for want of room.
    pub fn dropped(&self) -> u64 {
        self.lock().dropped
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Thread instructions executed (each active lane of each issued instruction).
    pub instructions: u64,
    /// Warps run.
    pub warps: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// CUDA_ERROR_ILLEGAL_ADDRESS (700).
    IllegalAddress,
    /// CUDA_ERROR_MISALIGNED_ADDRESS (716).
    MisalignedAddress,
    /// CUDA_ERROR_ILLEGAL_INSTRUCTION (715).
    IllegalInstruction,
    /// `trap`: CUDA_ERROR_LAUNCH_FAILED (719).
    Trap,
    /// `__assertfail`: CUDA_ERROR_ASSERT (710).
    Assert,
    /// CUDA_ERROR_LAUNCH_TIMEOUT (702): the step limit was reached.
    StepLimit,
    /// CUDA_ERROR_LAUNCH_TIMEOUT (702): the launch ran past its time limit.
    TimeLimit,
    /// A barrier no thread can complete: a GPU hangs; we report it.
    Deadlock,
}

/// A kernel's fault, located as compute-sanitizer would: kernel, block, thread, PTX line
/// and instruction, address, and the memory's explanation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelFault {
    pub kind: FaultKind,
    pub kernel: String,
    pub block: [u32; 3],
    pub thread: [u32; 3],
    pub line: u32,
    pub instruction: String,
    pub address: Option<u64>,
    pub detail: String,
}

impl fmt::Display for KernelFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            FaultKind::IllegalAddress => "illegal address",
            FaultKind::MisalignedAddress => "misaligned address",
            FaultKind::IllegalInstruction => "illegal instruction",
            FaultKind::Trap => "trap",
            FaultKind::Assert => "assertion failed",
            FaultKind::StepLimit => "step limit reached",
            FaultKind::TimeLimit => "time limit reached",
            FaultKind::Deadlock => "barrier deadlock",
        };
        let [bx, by, bz] = self.block;
        let [tx, ty, tz] = self.thread;
        write!(
            f,
            "{what} in kernel `{}`, block ({bx},{by},{bz}), thread ({tx},{ty},{tz})",
            self.kernel
        )?;
        // A fault raised before any instruction ran (the launch's checks, a block the
        // watchdog stopped before it started) has no line to name.
        if !self.instruction.is_empty() {
            write!(f, ", PTX line {}: `{}`", self.line, self.instruction)?;
        }
        if let Some(a) = self.address {
            write!(f, ", address {a:#x}")?;
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

impl std::error::Error for KernelFault {}
