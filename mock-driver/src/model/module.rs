//! Modules, libraries and functions: PTX (alone or in a fatbin) decoded once by
//! `cumock_ptx`, its `.global`/`.const` variables placed in device memory of the loading
//! context, its functions' attributes and occupancy. Its kernels are launched by
//! `launch.rs`.

use super::error::*;
use super::ids::{ContextId, DevicePtr, FunctionId, KernelId, LibraryId, ModuleId};
use super::{Driver, State};
// Launches are in launch.rs; the files that import them from here still may.
pub use super::launch::{LaunchRequest, PreparedLaunch};
use crate::host_bytes::HostBytes;
use cumock_abi::result::*;
use cumock_ptx as ptx;
// Ids the mock hands out as keys: Fx hashing, not SipHash (a launch looks up several).
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

const MODULE_TAG: u64 = 0x00d0_0000_0000_0000;
const FUNCTION_TAG: u64 = 0x00f0_0000_0000_0000;
const LIBRARY_TAG: u64 = 0x001b_0000_0000_0000;
const KERNEL_TAG: u64 = 0x00ce_0000_0000_0000;

/// The values of cuda.h's `CUfunction_attribute` and the `CUdevice_attribute`s launches
/// check (the attribute tables of `cumock_abi` are by name; these are matched on).
pub(super) mod attr {
    pub const MAX_THREADS_PER_BLOCK: i32 = 0;
    pub const SHARED_SIZE_BYTES: i32 = 1;
    pub const CONST_SIZE_BYTES: i32 = 2;
    pub const LOCAL_SIZE_BYTES: i32 = 3;
    pub const NUM_REGS: i32 = 4;
    pub const PTX_VERSION: i32 = 5;
    pub const BINARY_VERSION: i32 = 6;
    pub const CACHE_MODE_CA: i32 = 7;
    pub const MAX_DYNAMIC_SHARED_SIZE_BYTES: i32 = 8;
    pub const PREFERRED_SHARED_MEMORY_CARVEOUT: i32 = 9;
    pub const CLUSTER_SIZE_MUST_BE_SET: i32 = 10;
    pub const REQUIRED_CLUSTER_WIDTH: i32 = 11;
    pub const REQUIRED_CLUSTER_HEIGHT: i32 = 12;
    pub const REQUIRED_CLUSTER_DEPTH: i32 = 13;
    pub const NON_PORTABLE_CLUSTER_SIZE_ALLOWED: i32 = 14;
    pub const CLUSTER_SCHEDULING_POLICY_PREFERENCE: i32 = 15;

    pub const DEV_MAX_THREADS_PER_BLOCK: i32 = 1;
    pub const DEV_MAX_BLOCK_DIM: [i32; 3] = [2, 3, 4];
    pub const DEV_MAX_GRID_DIM: [i32; 3] = [5, 6, 7];
    pub const DEV_WARP_SIZE: i32 = 10;
    pub const DEV_MULTIPROCESSOR_COUNT: i32 = 16;
    pub const DEV_MAX_THREADS_PER_MULTIPROCESSOR: i32 = 39;
    pub const DEV_COMPUTE_CAPABILITY_MAJOR: i32 = 75;
    pub const DEV_COMPUTE_CAPABILITY_MINOR: i32 = 76;
    pub const DEV_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: i32 = 81;
    pub const DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: i32 = 97;
    pub const DEV_MAX_BLOCKS_PER_MULTIPROCESSOR: i32 = 106;
    pub const DEV_COOPERATIVE_LAUNCH: i32 = 95;
}

/// The static shared memory a block may use without opting in (48 KiB on every GPU since
/// Volta); more needs cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES).
const DEFAULT_SHARED_LIMIT: u32 = 48 << 10;

/// The `.local` frame a thread may have: 512 KiB (CUDA Programming Guide, "Technical
/// Specifications per Compute Capability") less the 576 bytes the H200's driver keeps for
/// itself: it launches a 523,712-byte frame and refuses 523,728 with
/// CUDA_ERROR_INVALID_VALUE, for 1 thread as for 1024 (probe sandbox_images,
/// local-largest). ptxas takes a larger frame; the launch is refused.
pub(super) const LOCAL_LIMIT_PER_THREAD: u64 = 523_712;

/// The smallest initialised variable the H200 refuses to load (see
/// `check_declared_sizes`).
const INITIALISED_GLOBAL_LIMIT: u64 = (1 << 31) - 1;

/// A loaded module: its decoded program, and where its variables live.
pub struct LoadedModule {
    pub context: ContextId,
    pub device: usize,
    pub program: Arc<ptx::Module>,
    /// Device address of each of `program.globals`, all in one cuMemAlloc-like block.
    pub globals: Vec<u64>,
    /// The block holding the variables (0 when the module has none).
    pub storage: u64,
    /// The managed allocation holding its `__managed__` variables (0 when none).
    pub managed_storage: u64,
    /// Bytes of `.const` variables, for CONST_SIZE_BYTES.
    pub const_bytes: u32,
    /// The function handle of each kernel, once asked for.
    pub functions: Vec<Option<FunctionId>>,
    /// Whether a kernel NVIDIA's JIT compiles no code for was asked for already, and
    /// stderr told why (`Modules::check_compiled`).
    pub refusal_said: bool,
}

#[derive(Clone, Copy, Debug)]
pub struct FunctionRef {
    pub module: ModuleId,
    pub kernel: usize,
    /// Set by cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES).
    pub max_dynamic_shared: Option<u32>,
    /// Set by cuFuncSetAttribute(PREFERRED_SHARED_MEMORY_CARVEOUT): read back as set, as
    /// the H200 does (probe kernels, kernel-attributes); -1 until then.
    pub carveout: Option<i32>,
    /// Set by cuFuncSetAttribute(REQUIRED_CLUSTER_WIDTH/HEIGHT/DEPTH): the cluster shape
    /// a launch without one gets (0s: none).
    pub required_cluster: [u32; 3],
    /// cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED): clusters of up to 16 blocks.
    pub non_portable_cluster: bool,
    /// cuFuncSetAttribute(CLUSTER_SCHEDULING_POLICY_PREFERENCE), read back as set.
    pub cluster_policy: i32,
    /// Whether the function counts as loaded under lazy loading (cuFuncIsLoaded): once
    /// found by name, launched or cuFuncLoad-ed; a handle from cuModuleEnumerateFunctions
    /// alone is not. The mock decodes every kernel when the module loads, so this is
    /// only what the query reports.
    pub loaded: bool,
}

/// A library loaded with cuLibraryLoad*: here, a module of the context current at load
/// time (the real driver loads it lazily into each context that uses it).
pub struct Library {
    pub module: ModuleId,
}

#[derive(Default)]
pub struct Modules {
    pub modules: HashMap<ModuleId, LoadedModule>,
    pub functions: HashMap<FunctionId, FunctionRef>,
    pub libraries: HashMap<LibraryId, Library>,
    /// CUkernel handles: the library and its kernel's function.
    pub kernels: HashMap<KernelId, (LibraryId, FunctionId)>,
    /// Each context's device heap (kernels' malloc and free), made at the first launch
    /// of a kernel whose module calls them; its memory is cuMemAlloc memory of the
    /// context, freed with it.
    pub heaps: HashMap<ContextId, Arc<ptx::DeviceHeap>>,
    /// Each context's device-runtime reserve (CUDA dynamic parallelism's parameter
    /// buffers), made at the first launch of a kernel whose module calls the device
    /// runtime, sized by CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT then; cuMemAlloc memory
    /// of the context, freed with it.
    pub devrt_pools: HashMap<ContextId, Arc<ptx::DeviceHeap>>,
    /// Each function's legacy launch settings (cuParamSet*, cuFuncSetBlockShape), once
    /// set or launched (model/legacy_launch.rs).
    pub legacy: HashMap<FunctionId, super::legacy_launch::LegacyLaunch>,
    next_id: u64,
}

impl Modules {
    fn fresh(&mut self, tag: u64) -> u64 {
        self.next_id += 1;
        tag | self.next_id
    }

    pub fn module(&self, m: ModuleId) -> CuResult<&LoadedModule> {
        self.modules.get(&m).ok_or_else(|| {
            invalid_handle(format!(
                "{m:#x} is not a loaded module (unloaded already, or never one)"
            ))
        })
    }

    /// The function a CUfunction (or a CUkernel, which launches take too) names.
    pub fn function(&self, f: FunctionId) -> CuResult<(FunctionId, FunctionRef)> {
        if f.is_null() {
            return Err(invalid_handle("the function is NULL"));
        }
        let handle = match self.kernels.get(&f.as_kernel()) {
            Some(&(_, func)) => func,
            None => f,
        };
        let r = self.functions.get(&handle).copied().ok_or_else(|| {
            invalid_handle(format!("{f:#x} is not a function of a loaded module"))
        })?;
        if !self.modules.contains_key(&r.module) {
            return Err(invalid_handle(format!(
                "{f:#x} belongs to a module that was unloaded"
            )));
        }
        Ok((handle, r))
    }

    /// Marks a function (or a CUkernel's) loaded: cuFuncLoad, or a launch. A kernel
    /// NVIDIA's JIT compiles no code for cannot be: CUDA_ERROR_NOT_FOUND, as the H200
    /// answers when its function is asked for (cuFuncLoad of such a handle succeeds on
    /// the H200 and loads nothing: `Driver::function_load`; what a launch of a handle
    /// cuModuleEnumerateFunctions gave answers is not recorded).
    pub fn mark_loaded(&mut self, f: FunctionId) -> CuResult<()> {
        let (handle, r) = self.function(f)?;
        self.check_compiled(r.module, r.kernel)?;
        if let Some(r) = self.functions.get_mut(&handle) {
            r.loaded = true;
        }
        Ok(())
    }

    /// CUDA_ERROR_NOT_FOUND for a kernel NVIDIA's JIT makes no code for
    /// (`ptx::Kernel::nvidia_jit_refuses`), said on stderr once per module: a program
    /// that only sees "not found" (or the runtime's cudaErrorSymbolNotFound) for a kernel
    /// the module plainly has could not learn why otherwise.
    fn check_compiled(&mut self, module: ModuleId, kernel: usize) -> CuResult<()> {
        let Some(m) = self.modules.get_mut(&module) else {
            return Ok(());
        };
        let k = &m.program.kernels[kernel];
        let Some(why) = &k.nvidia_jit_refuses else {
            return Ok(());
        };
        let e = CuError::new(
            CUDA_ERROR_NOT_FOUND,
            format!(
                "kernel `{}` has no code: {why}; lazy loading compiles it when it is asked \
                 for, and the function is not found",
                k.name
            ),
        );
        if !std::mem::replace(&mut m.refusal_said, true) {
            eprintln!("cumock: a module's kernel is not found: {}", e.message);
        }
        Err(CuError {
            severity: Severity::Said,
            ..e
        })
    }

    /// The function handle of a module's kernel, made at the first request; `loaded`
    /// marks it loaded (see `FunctionRef::loaded`), which it stays.
    fn function_handle(&mut self, module: ModuleId, kernel: usize, loaded: bool) -> FunctionId {
        if let Some(Some(h)) = self.modules.get(&module).map(|m| m.functions[kernel]) {
            if let Some(r) = self.functions.get_mut(&h) {
                r.loaded |= loaded;
            }
            return h;
        }
        let h = FunctionId::from_handle(self.fresh(FUNCTION_TAG));
        self.functions.insert(
            h,
            FunctionRef {
                module,
                kernel,
                max_dynamic_shared: None,
                carveout: None,
                required_cluster: [0; 3],
                non_portable_cluster: false,
                cluster_policy: 0,
                loaded,
            },
        );
        if let Some(m) = self.modules.get_mut(&module) {
            m.functions[kernel] = Some(h);
        }
        h
    }
}

/// What an image turned out to be, before it is decoded.
pub enum Image {
    Ptx(String),
    Fatbin(Vec<u8>),
    Elf,
    Garbage,
}

impl Image {
    /// A hash of the image's contents: what "the same module" means for saying a load
    /// failure once.
    pub fn content_key(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        match self {
            Image::Ptx(t) => (0u8, t.as_bytes()).hash(&mut h),
            Image::Fatbin(b) => (1u8, b.as_slice()).hash(&mut h),
            Image::Elf => 2u8.hash(&mut h),
            Image::Garbage => 3u8.hash(&mut h),
        }
        h.finish()
    }

    /// Classifies an image's bytes (`bytes` ends where the image's own header says, or at
    /// the NUL of a text image; `images` reads them).
    pub fn classify(bytes: Vec<u8>) -> Image {
        if ptx::fatbin::is_fatbin(&bytes) {
            Image::Fatbin(bytes)
        } else if ptx::fatbin::is_elf(&bytes) {
            Image::Elf
        } else {
            match String::from_utf8(bytes) {
                // Text is taken as PTX when it has PTX's header directives; anything else is
                // no image at all (the H200 answers CUDA_ERROR_INVALID_IMAGE for "hello").
                Ok(t) if t.contains(".version") || t.contains(".target") => Image::Ptx(t),
                _ => Image::Garbage,
            }
        }
    }
}

/// `CU_LIMIT_PRINTF_FIFO_SIZE`, the index of its default in `context::DEFAULT_LIMITS`.
pub(super) const LIMIT_PRINTF_FIFO_SIZE: i32 = 1;
/// CUlimit's CU_LIMIT_STACK_SIZE and CU_LIMIT_MALLOC_HEAP_SIZE.
pub(super) const LIMIT_STACK_SIZE: i32 = 0;
pub(super) const LIMIT_MALLOC_HEAP_SIZE: i32 = 2;
/// CUlimit's CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT.
pub(super) const LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT: i32 = 4;

/// The registers a kernel is said to use (CU_FUNC_ATTRIBUTE_NUM_REGS, the verbose JIT
/// log): those it declares, held to its `.maxnreg` and to the 255 a thread can have.
pub(super) fn reported_registers(k: &ptx::Kernel) -> u32 {
    k.registers.min(k.max_registers.unwrap_or(255)).min(255)
}

/// Prints why a module did not load, once per image (`key`) and cause, and marks the
/// error as said so that the boundary does not repeat it under CUMOCK_MISUSE.
fn say_load_failure_once(key: u64, mut e: CuError) -> CuError {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static SAID: Mutex<Option<HashSet<(u64, i32, String)>>> = Mutex::new(None);
    let first = SAID
        .lock()
        .map(|mut s| {
            s.get_or_insert_with(HashSet::new)
                .insert((key, e.code as i32, e.message.to_string()))
        })
        .unwrap_or(true);
    if first {
        let code = cumock_abi::result_name(e.code).unwrap_or("?");
        eprintln!("cumock: a module failed to load: {code}: {}", e.message);
    }
    e.severity = Severity::Said;
    e
}

/// The result and message of a PTX load error (the linker's too).
pub(super) fn load_error_for(e: &ptx::LoadError) -> CuError {
    load_error(e)
}

fn load_error(e: &ptx::LoadError) -> CuError {
    match e.kind {
        ptx::LoadErrorKind::UnsupportedVersion => CuError::new(
            CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
            format!("PTX {e} (build with the toolkit of this driver's CUDA version or older)"),
        ),
        // A PTX instruction the executor lacks would load on a GPU: not supported here. A
        // name PTX does not have (a typo, a truncated image) is invalid PTX, as the H200
        // says (probe module-loading).
        ptx::LoadErrorKind::Unsupported if names_a_ptx_instruction(&e.message) => not_supported(
            format!("cumock's PTX executor does not implement this: PTX {e}"),
        ),
        ptx::LoadErrorKind::Unsupported => CuError::new(
            CUDA_ERROR_INVALID_PTX,
            format!("invalid PTX (or PTX cumock does not know): {e}"),
        ),
        ptx::LoadErrorKind::Syntax | ptx::LoadErrorKind::Semantic => {
            CuError::new(CUDA_ERROR_INVALID_PTX, format!("invalid PTX: {e}"))
        }
    }
}

/// The opcodes of the PTX ISA (9.0), to tell an instruction the executor lacks from a
/// word that is no PTX at all.
const PTX_OPCODES: &[&str] = &[
    "abs",
    "activemask",
    "add",
    "addc",
    "alloca",
    "and",
    "applypriority",
    "atom",
    "bar",
    "barrier",
    "bfe",
    "bfi",
    "bfind",
    "bmsk",
    "bra",
    "brev",
    "brkpt",
    "brx",
    "call",
    "clz",
    "clusterlaunchcontrol",
    "cnot",
    "copysign",
    "cos",
    "cp",
    "createpolicy",
    "cvt",
    "cvta",
    "discard",
    "div",
    "dp2a",
    "dp4a",
    "elect",
    "ex2",
    "exit",
    "fence",
    "fma",
    "fns",
    "getctarank",
    "griddepcontrol",
    "isspacep",
    "istypep",
    "ld",
    "ldmatrix",
    "ldu",
    "lg2",
    "lop3",
    "mad",
    "mad24",
    "madc",
    "mapa",
    "match",
    "max",
    "mbarrier",
    "membar",
    "min",
    "mma",
    "mov",
    "movmatrix",
    "mul",
    "mul24",
    "multimem",
    "nanosleep",
    "neg",
    "not",
    "or",
    "pmevent",
    "popc",
    "prefetch",
    "prefetchu",
    "prmt",
    "rcp",
    "red",
    "redux",
    "rem",
    "ret",
    "rsqrt",
    "sad",
    "selp",
    "set",
    "setmaxnreg",
    "setp",
    "shf",
    "shfl",
    "shl",
    "shr",
    "sin",
    "slct",
    "sqrt",
    "st",
    "stackrestore",
    "stacksave",
    "stmatrix",
    "sub",
    "subc",
    "suld",
    "suq",
    "sured",
    "sust",
    "szext",
    "tanh",
    "tcgen05",
    "tensormap",
    "testp",
    "tex",
    "tld4",
    "trap",
    "txq",
    "vabsdiff",
    "vabsdiff2",
    "vabsdiff4",
    "vadd",
    "vadd2",
    "vadd4",
    "vavrg2",
    "vavrg4",
    "vmad",
    "vmax",
    "vmax2",
    "vmax4",
    "vmin",
    "vmin2",
    "vmin4",
    "vote",
    "vset",
    "vset2",
    "vset4",
    "vshl",
    "vshr",
    "vsub",
    "vsub2",
    "vsub4",
    "wgmma",
    "wmma",
    "xor",
];

/// Whether a load error names an instruction of the PTX ISA (`unsupported instruction
/// `tex.2d...``), as opposed to a modifier or state space that PTX does not have.
fn names_a_ptx_instruction(message: &str) -> bool {
    let Some(rest) = message.split("unsupported instruction `").nth(1) else {
        return false;
    };
    if message.contains("(modifier") {
        return false;
    }
    let opcode = rest.split(['.', '`', ' ']).next().unwrap_or("");
    PTX_OPCODES.contains(&opcode)
}

impl Driver {
    /// The compute capability of a device as one number (9.0 is 90).
    pub(super) fn compute_capability(&self, device: usize) -> u32 {
        let d = &self.profile.devices[device];
        let major = d.attribute(attr::DEV_COMPUTE_CAPABILITY_MAJOR).unwrap_or(9);
        let minor = d.attribute(attr::DEV_COMPUTE_CAPABILITY_MINOR).unwrap_or(0);
        (major * 10 + minor) as u32
    }

    pub(super) fn device_attribute(&self, device: usize, attr: i32, default: i32) -> i32 {
        self.profile.devices[device]
            .attribute(attr)
            .unwrap_or(default)
    }

    /// Fails with the device's sticky error, if a kernel faulted on it.
    pub fn check_sticky(&self, st: &State, device: usize) -> CuResult<()> {
        match &st.sticky[device] {
            Some(e) => Err(e.clone()),
            // Said once (see `State::stopped`).
            None => st.stopped[device].take().map_or(Ok(()), Err),
        }
    }

    /// The current context and its device, checked for a sticky error.
    pub(super) fn current_device(&self, st: &State) -> CuResult<(ContextId, usize)> {
        let (ctx, c) = st.contexts.require_current()?;
        let device = c.device;
        self.check_sticky(st, device)?;
        Ok((ctx, device))
    }

    /// cuModuleLoadData and friends: decodes the image and loads it into the current
    /// context. A failure is said on stderr once per image and cause, whatever the
    /// settings: a program that only checks the result code (or a runtime that turns it
    /// into "invalid device function") leaves its user no other way to learn why.
    pub fn module_load(&self, image: Image) -> CuResult<ModuleId> {
        let key = image.content_key();
        self.module_load_unsaid(image)
            .map_err(|e| say_load_failure_once(key, e))
    }

    fn module_load_unsaid(&self, image: Image) -> CuResult<ModuleId> {
        let device = {
            let st = self.state.lock();
            self.current_device(&st)?.1
        };
        let cc = self.compute_capability(device);
        let text = match image {
            Image::Ptx(t) => t,
            Image::Fatbin(bytes) => ptx::fatbin::select_ptx(&bytes, cc).map_err(|e| match e {
                ptx::fatbin::FatbinError::SassOnly { .. } => CuError::new(
                    CUDA_ERROR_NO_BINARY_FOR_GPU,
                    format!("{e} (cumock runs PTX only: SASS cannot run on the host)"),
                ),
                e @ ptx::fatbin::FatbinError::Decompression(_) => {
                    CuError::new(CUDA_ERROR_UNKNOWN, e.to_string())
                }
                other => CuError::new(CUDA_ERROR_INVALID_IMAGE, format!("fatbin: {other}")),
            })?,
            Image::Elf => {
                return Err(CuError::new(
                    CUDA_ERROR_NO_BINARY_FOR_GPU,
                    "the image is an ELF cubin (SASS): cumock executes PTX on the host and \
                     cannot run SASS; build the kernel with PTX, e.g. nvcc -fatbin \
                     -gencode arch=compute_90,code=compute_90 (or -ptx); from NVRTC, \
                     load nvrtcGetPTX's output, not nvrtcGetCUBIN's (CuPy: set \
                     CUPY_COMPILE_WITH_PTX=1)",
                ))
            }
            Image::Garbage => {
                return Err(CuError::new(
                    CUDA_ERROR_INVALID_IMAGE,
                    "the image is neither PTX text, a fatbin nor an ELF cubin",
                ))
            }
        };
        let program = ptx::Module::parse(&text).map_err(|e| load_error(&e))?;
        if let Some(sm) = program.target.strip_prefix("sm_") {
            let n: u32 = sm
                .trim_end_matches(|c: char| c.is_ascii_alphabetic())
                .parse()
                .unwrap_or(0);
            if n > cc {
                return Err(CuError::new(
                    CUDA_ERROR_INVALID_PTX,
                    format!(
                        "PTX for .target {} cannot be compiled for this device (compute capability {}.{})",
                        program.target,
                        cc / 10,
                        cc % 10
                    ),
                ));
            }
        }
        self.check_declared_sizes(device, &program)?;
        if module_loading_mode() == CU_MODULE_EAGER_LOADING {
            // Eager loading compiles every kernel at load, and the H200 fails the whole
            // load with the function's CUDA_ERROR_NOT_FOUND (a one-kernel module was
            // recorded: ci/explore/txq_jit.c, txq-eager.txt).
            if let Some(k) = program
                .kernels
                .iter()
                .find(|k| k.nvidia_jit_refuses.is_some())
            {
                return Err(CuError::new(
                    CUDA_ERROR_NOT_FOUND,
                    format!(
                        "kernel `{}` has no code: {}; eager loading (CUDA_MODULE_LOADING=EAGER) \
                         compiles every kernel at load",
                        k.name,
                        k.nvidia_jit_refuses.as_deref().unwrap_or("")
                    ),
                ));
            }
        }
        self.place_module(Arc::new(program))
    }

    /// What ptxas refuses when the driver JITs the module (CUDA_ERROR_INVALID_PTX at
    /// load, as the H200 answers for a 1 GB `.param`): a kernel's parameter space over
    /// 32764 bytes (PTX ISA 8.1 and later, CUDA 12.1's large kernel parameters) or 4352
    /// (before; ptxas 13.0's limits, both in its messages), and static shared memory over
    /// the device's opt-in per-block limit: the H200 loads 232,448 bytes (227 KiB) and
    /// refuses 232,452, and launches a kernel with 64 KiB of it (probe sandbox_images,
    /// static-shared-largest). `.local` is not limited here: ptxas takes any frame, and
    /// the launch refuses what the device cannot give (`launch`).
    fn check_declared_sizes(&self, device: usize, program: &ptx::Module) -> CuResult<()> {
        let param_limit: usize = if program.version >= (8, 1) {
            32764
        } else {
            4352
        };
        let shared_limit =
            self.device_attribute(device, attr::DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 232_448)
                as u64;
        // An initialised variable's image is built whole at load: the H200 loads a 1 GiB
        // one and refuses one of 2 GiB - 1 bytes (CUDA_ERROR_INVALID_PTX), while it loads
        // 4 GiB - 1 bytes without an initialiser (probe sandbox_images,
        // huge-global-largest). Where between 1 GiB and 2 GiB - 1 its limit lies is not
        // recorded; the mock refuses from 2 GiB - 1 on.
        if let Some(g) = program
            .globals
            .iter()
            .find(|g| !g.init.is_empty() && g.size >= INITIALISED_GLOBAL_LIMIT)
        {
            return Err(CuError::new(
                CUDA_ERROR_INVALID_PTX,
                format!(
                    "invalid PTX: the initialised variable `{}` is {} bytes, more than a \
                     module's initialised data may hold (the H200 refuses {} bytes and more)",
                    g.name, g.size, INITIALISED_GLOBAL_LIMIT
                ),
            ));
        }
        for k in &program.kernels {
            let params = Self::params_size(&k.params);
            if params > param_limit {
                return Err(CuError::new(
                    CUDA_ERROR_INVALID_PTX,
                    format!(
                        "invalid PTX: entry function `{}` uses too much parameter space ({params} \
                         bytes, {param_limit} max for PTX ISA {}.{})",
                        k.name, program.version.0, program.version.1
                    ),
                ));
            }
            if u64::from(k.static_shared_bytes) > shared_limit {
                return Err(CuError::new(
                    CUDA_ERROR_INVALID_PTX,
                    format!(
                        "invalid PTX: entry function `{}` uses too much shared data ({} bytes, \
                         {shared_limit} max; more needs dynamic shared memory and \
                         cuFuncSetAttribute)",
                        k.name, k.static_shared_bytes
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Puts a decoded module's variables in device memory and registers it.
    fn place_module(&self, program: Arc<ptx::Module>) -> CuResult<ModuleId> {
        // One block for all variables, each at its alignment; `__managed__` ones in a
        // managed allocation of their own, which the host reaches at the same address
        // (the runtime hands it to the program's pointer: `__cudaRegisterManagedVar`).
        let mut offsets = Vec::with_capacity(program.globals.len());
        let (mut total, mut managed_total) = (0u64, 0u64);
        for g in &program.globals {
            let end = if g.managed {
                &mut managed_total
            } else {
                &mut total
            };
            let at = end.next_multiple_of(u64::from(g.align.max(1)));
            offsets.push(at);
            *end = at + g.size;
        }
        let storage = if total > 0 {
            self.mem_alloc(total)?.get()
        } else {
            0
        };
        let managed_storage = if managed_total > 0 {
            match self.mem_alloc_managed(managed_total, super::managed::ATTACH_GLOBAL) {
                Ok(p) => p,
                Err(e) => {
                    let _ = self.mem_free(DevicePtr::new(storage));
                    return Err(e);
                }
            }
        } else {
            0
        };
        let globals: Vec<u64> = program
            .globals
            .iter()
            .zip(&offsets)
            .map(|(g, o)| if g.managed { managed_storage } else { storage } + o)
            .collect();
        for (g, &at) in program.globals.iter().zip(&globals) {
            // `init` is the initialised prefix; the rest of the fresh allocation is zero
            // already and stays untouched (sparse), however large the variable. The
            // addresses of variables it holds are written in now they are placed.
            let init = g.initial_bytes(&globals);
            if init.iter().any(|b| *b != 0) {
                let copied = self.copy(
                    super::HostOrDevice::Device(DevicePtr::new(at)),
                    super::HostOrDevice::Host(HostBytes::from_slice(&init)),
                    init.len() as u64,
                );
                if let Err(e) = copied {
                    let _ = self.mem_free(DevicePtr::new(storage));
                    let _ = self.mem_free(DevicePtr::new(managed_storage));
                    return Err(e);
                }
            }
        }
        let const_bytes = program
            .globals
            .iter()
            .filter(|g| g.space == ptx::StateSpace::Const)
            .map(|g| g.size)
            .sum::<u64>() as u32;
        let mut st = self.state.lock();
        let (ctx, device) = self.current_device(&st)?;
        let id = ModuleId::from_handle(st.modules.fresh(MODULE_TAG));
        let kernels = program.kernels.len();
        st.modules.modules.insert(
            id,
            LoadedModule {
                context: ctx,
                device,
                program,
                globals,
                storage,
                managed_storage,
                const_bytes,
                functions: vec![None; kernels],
                refusal_said: false,
            },
        );
        Ok(id)
    }

    pub fn module_unload(&self, module: ModuleId) -> CuResult<()> {
        let m = {
            let mut st = self.state.lock();
            st.modules.module(module)?;
            let m = st.modules.modules.remove(&module).expect("checked");
            st.modules.functions.retain(|_, f| f.module != module);
            let modules = &mut st.modules;
            modules
                .legacy
                .retain(|f, _| modules.functions.contains_key(f));
            st.texture_references.forget_module(module);
            st.launch_epoch += 1;
            m
        };
        // (cuMemFree of 0 does nothing.)
        self.mem_free(DevicePtr::new(m.storage))?;
        self.mem_free(DevicePtr::new(m.managed_storage))?;
        Ok(())
    }

    pub fn module_get_function(&self, module: ModuleId, name: &str) -> CuResult<FunctionId> {
        let mut st = self.state.lock();
        self.current_device(&st)?;
        let m = st.modules.module(module)?;
        let k = m.program.kernel(name).ok_or_else(|| {
            CuError::new(
                CUDA_ERROR_NOT_FOUND,
                format!("the module has no kernel named `{name}`"),
            )
        })?;
        st.modules.check_compiled(module, k)?;
        Ok(st.modules.function_handle(module, k, true))
    }

    /// cuModuleGetGlobal: the address and size of a `.global` or `.const` variable.
    pub fn module_get_global(&self, module: ModuleId, name: &str) -> CuResult<(DevicePtr, u64)> {
        let st = self.state.lock();
        let m = st.modules.module(module)?;
        let i = m
            .program
            .globals
            .iter()
            .position(|g| g.name == name)
            .ok_or_else(|| {
                CuError::new(
                    CUDA_ERROR_NOT_FOUND,
                    format!("the module has no variable named `{name}`"),
                )
            })?;
        Ok((DevicePtr::new(m.globals[i]), m.program.globals[i].size))
    }

    pub fn function_name(&self, f: FunctionId) -> CuResult<String> {
        let st = self.state.lock();
        let (_, r) = st.modules.function(f)?;
        let m = st.modules.module(r.module)?;
        Ok(m.program.kernels[r.kernel].name.clone())
    }

    /// The most dynamic shared memory a launch of `f` may ask for.
    pub(super) fn dynamic_shared_limit(&self, m: &LoadedModule, r: &FunctionRef) -> u32 {
        let k = &m.program.kernels[r.kernel];
        r.max_dynamic_shared
            .unwrap_or(DEFAULT_SHARED_LIMIT.saturating_sub(k.static_shared_bytes))
    }

    pub fn function_attribute(&self, f: FunctionId, attr: i32) -> CuResult<i32> {
        use attr::*;
        let st = self.state.lock();
        let (_, r) = st.modules.function(f)?;
        let m = st.modules.module(r.module)?;
        let k = &m.program.kernels[r.kernel];
        let max_threads = self.device_attribute(m.device, DEV_MAX_THREADS_PER_BLOCK, 1024) as u32;
        Ok(match attr {
            MAX_THREADS_PER_BLOCK => k
                .max_threads_per_block
                .unwrap_or(max_threads)
                .min(max_threads) as i32,
            SHARED_SIZE_BYTES => k.static_shared_bytes as i32,
            CONST_SIZE_BYTES => m.const_bytes as i32,
            LOCAL_SIZE_BYTES => k.local_bytes_per_thread as i32,
            // The registers ptxas would allocate are unknown without ptxas: the PTX's own
            // declarations stand in (an upper bound of what a kernel uses), held to
            // `.maxnreg` as ptxas holds its allocation to it.
            NUM_REGS => reported_registers(k) as i32,
            PTX_VERSION => (m.program.version.0 * 10 + m.program.version.1) as i32,
            BINARY_VERSION => self.compute_capability(m.device) as i32,
            CACHE_MODE_CA => 0,
            MAX_DYNAMIC_SHARED_SIZE_BYTES => self.dynamic_shared_limit(m, &r) as i32,
            PREFERRED_SHARED_MEMORY_CARVEOUT => r.carveout.unwrap_or(-1),
            // `.explicitcluster` (what nvcc writes for `__cluster_dims__`); the shape from
            // `.reqnctapercluster`, else as cuFuncSetAttribute set it.
            CLUSTER_SIZE_MUST_BE_SET => k.explicit_cluster as i32,
            REQUIRED_CLUSTER_WIDTH | REQUIRED_CLUSTER_HEIGHT | REQUIRED_CLUSTER_DEPTH => {
                let d = (attr - REQUIRED_CLUSTER_WIDTH) as usize;
                k.required_cluster.map_or(r.required_cluster[d], |c| c[d]) as i32
            }
            NON_PORTABLE_CLUSTER_SIZE_ALLOWED => r.non_portable_cluster as i32,
            CLUSTER_SCHEDULING_POLICY_PREFERENCE => r.cluster_policy,
            _ => return Err(invalid(format!("{attr} is not a CUfunction_attribute"))),
        })
    }

    /// cuFuncSetCacheConfig / cuKernelSetCacheConfig: a preference between L1 and shared
    /// memory, which changes nothing the program can see (cuda.h: ignored where the
    /// split is fixed), so only its value is checked: a CUfunc_cache, PREFER_NONE (0)
    /// to PREFER_EQUAL (3).
    pub fn function_set_cache_config(&self, f: FunctionId, config: i32) -> CuResult<()> {
        self.state.lock().modules.function(f)?;
        if !(0..=3).contains(&config) {
            return Err(invalid(format!(
                "{config} is not a CUfunc_cache (CU_FUNC_CACHE_PREFER_NONE 0 to PREFER_EQUAL 3)"
            )));
        }
        Ok(())
    }

    /// cuFuncSetSharedMemConfig: a valid setting does nothing, the H200's bank size being
    /// fixed (`Driver::ctx_shared_mem_config`).
    pub fn function_set_attribute(&self, f: FunctionId, attr: i32, value: i32) -> CuResult<()> {
        use attr::*;
        let mut st = self.state.lock();
        st.launch_epoch += 1;
        let (handle, r) = st.modules.function(f)?;
        let m = st.modules.module(r.module)?;
        let k = &m.program.kernels[r.kernel];
        match attr {
            MAX_DYNAMIC_SHARED_SIZE_BYTES => {
                let optin = self.device_attribute(
                    m.device,
                    DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                    227 << 10,
                ) as i64;
                if value < 0 || i64::from(value) + i64::from(k.static_shared_bytes) > optin {
                    return Err(invalid(format!(
                        "{value} bytes of dynamic shared memory and {} static exceed the device's {optin}",
                        k.static_shared_bytes
                    )));
                }
                st.modules
                    .functions
                    .get_mut(&handle)
                    .expect("found")
                    .max_dynamic_shared = Some(value as u32);
                Ok(())
            }
            PREFERRED_SHARED_MEMORY_CARVEOUT => {
                // A percentage of the shared/L1 split, or -1 (the default).
                if !(-1..=100).contains(&value) {
                    return Err(invalid(format!(
                        "a shared memory carveout of {value}: -1 or a percentage"
                    )));
                }
                st.modules
                    .functions
                    .get_mut(&handle)
                    .expect("found")
                    .carveout = Some(value);
                Ok(())
            }
            REQUIRED_CLUSTER_WIDTH | REQUIRED_CLUSTER_HEIGHT | REQUIRED_CLUSTER_DEPTH => {
                // Set at compile time (`__cluster_dims__`), it cannot be set at run time:
                // the H200 answers CUDA_ERROR_INVALID_VALUE (cuda.h says NOT_PERMITTED;
                // probe clusters, set-attributes). Its validity is checked at launch.
                if k.required_cluster.is_some() {
                    return Err(invalid(
                        "the kernel's cluster shape is set at compile time (.reqnctapercluster)",
                    ));
                }
                if value < 0 {
                    return Err(invalid(format!("a cluster dimension of {value}")));
                }
                let f = st.modules.functions.get_mut(&handle).expect("found");
                f.required_cluster[(attr - REQUIRED_CLUSTER_WIDTH) as usize] = value as u32;
                Ok(())
            }
            NON_PORTABLE_CLUSTER_SIZE_ALLOWED => {
                // Any value but 0 allows (the H200 takes 2 and reads back 1).
                let f = st.modules.functions.get_mut(&handle).expect("found");
                f.non_portable_cluster = value != 0;
                Ok(())
            }
            CLUSTER_SCHEDULING_POLICY_PREFERENCE => {
                // CUclusterSchedulingPolicy: DEFAULT 0, SPREAD 1, LOAD_BALANCING 2. Where
                // blocks go changes nothing the program sees.
                if !(0..=2).contains(&value) {
                    return Err(invalid(format!(
                        "{value} is not a CUclusterSchedulingPolicy (0 to 2)"
                    )));
                }
                let f = st.modules.functions.get_mut(&handle).expect("found");
                f.cluster_policy = value;
                Ok(())
            }
            _ => Err(invalid(format!(
                "attribute {attr} cannot be set (or is not a CUfunction_attribute)"
            ))),
        }
    }

    /// cuFuncGetAttribute of kernel `kernel` of module `module` (what the device runtime's
    /// cudaFuncGetAttributes answers): its function handle, made as cuModuleGetFunction
    /// would make it where the program has none yet.
    pub fn kernel_attribute(&self, module: ModuleId, kernel: usize, attr: i32) -> CuResult<i32> {
        let f = self.kernel_function(module, kernel)?;
        self.function_attribute(f, attr)
    }

    /// cuOccupancyMaxActiveBlocksPerMultiprocessor of a module's kernel, as
    /// `kernel_attribute`.
    pub fn kernel_occupancy(
        &self,
        module: ModuleId,
        kernel: usize,
        block_size: i32,
        dynamic_shared: usize,
    ) -> CuResult<i32> {
        let f = self.kernel_function(module, kernel)?;
        self.occupancy_blocks_per_sm(f, block_size, dynamic_shared)
    }

    fn kernel_function(&self, module: ModuleId, kernel: usize) -> CuResult<FunctionId> {
        let mut st = self.state.lock();
        let kernels = st.modules.module(module)?.program.kernels.len();
        if kernel >= kernels {
            return Err(invalid(format!("the module has no kernel {kernel}")));
        }
        Ok(st.modules.function_handle(module, kernel, false))
    }

    /// Blocks of `block_size` threads (and `dynamic_shared` bytes) resident on one SM at
    /// once, from the profile's per-SM limits.
    pub fn occupancy_blocks_per_sm(
        &self,
        f: FunctionId,
        block_size: i32,
        dynamic_shared: usize,
    ) -> CuResult<i32> {
        use attr::*;
        let st = self.state.lock();
        let (_, r) = st.modules.function(f)?;
        let m = st.modules.module(r.module)?;
        let k = &m.program.kernels[r.kernel];
        if block_size <= 0 {
            return Ok(0);
        }
        let dev = m.device;
        let threads_per_sm = self.device_attribute(dev, DEV_MAX_THREADS_PER_MULTIPROCESSOR, 2048);
        let blocks_per_sm = self.device_attribute(dev, DEV_MAX_BLOCKS_PER_MULTIPROCESSOR, 32);
        let shared_per_sm =
            self.device_attribute(dev, DEV_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 228 << 10) as i64;
        let warp = self.device_attribute(dev, DEV_WARP_SIZE, 32);
        let warps = (block_size + warp - 1) / warp;
        let by_threads = threads_per_sm / (warps * warp);
        // Each resident block also reserves 1 KiB of shared memory for the system.
        let shared = i64::from(k.static_shared_bytes) + dynamic_shared as i64 + 1024;
        let by_shared = (shared_per_sm / shared) as i32;
        Ok(by_threads.min(blocks_per_sm).min(by_shared).max(0))
    }

    /// cuOccupancyAvailableDynamicSMemPerBlock: the most dynamic shared memory a block of
    /// `block_size` threads may ask for with `num_blocks` such blocks resident on one SM,
    /// by the same limits as `occupancy_blocks_per_sm` (so that
    /// `occupancy_blocks_per_sm(f, block_size, answer)` is at least `num_blocks`), and at
    /// most what a launch of `f` may ask for; 0 when that many blocks do not fit at all.
    pub fn occupancy_available_dynamic_shared(
        &self,
        f: FunctionId,
        num_blocks: i32,
        block_size: i32,
    ) -> CuResult<usize> {
        use attr::*;
        if num_blocks <= 0 || block_size <= 0 {
            return Err(invalid(format!(
                "numBlocks {num_blocks} and blockSize {block_size} must be positive"
            )));
        }
        // Observed (probe api_gaps, small-ones): more blocks than fit an SM by their
        // threads, or a block over 1024 threads, is CUDA_ERROR_INVALID_VALUE, not 0 bytes.
        if block_size > 1024 || self.occupancy_blocks_per_sm(f, block_size, 0)? < num_blocks {
            return Err(invalid(format!(
                "{num_blocks} blocks of {block_size} threads do not fit a multiprocessor"
            )));
        }
        let st = self.state.lock();
        let (_, r) = st.modules.function(f)?;
        let m = st.modules.module(r.module)?;
        let k = &m.program.kernels[r.kernel];
        let shared_per_sm = self.device_attribute(
            m.device,
            DEV_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
            228 << 10,
        ) as i64;
        // The SM's share per block less the kernel's static shared memory; the 1 KiB each
        // block reserves is not taken off (as the H200 answers: probe api_gaps).
        let per_block = shared_per_sm / i64::from(num_blocks) - i64::from(k.static_shared_bytes);
        let limit = i64::from(self.dynamic_shared_limit(m, &r));
        Ok(per_block.min(limit).max(0) as usize)
    }

    /// cuOccupancyMaxPotentialClusterSize: the largest cluster a launch may have, 8
    /// blocks (portable) or 16 with NON_PORTABLE_CLUSTER_SIZE_ALLOWED, as the H200 answers
    /// even for a kernel whose shape is compiled in; 0 when no block of the configuration
    /// fits an SM.
    pub fn occupancy_cluster_size(
        &self,
        f: FunctionId,
        threads: i32,
        shared: usize,
    ) -> CuResult<i32> {
        let non_portable = {
            let st = self.state.lock();
            let (_, r) = st.modules.function(f)?;
            r.non_portable_cluster
        };
        if self.occupancy_blocks_per_sm(f, threads, shared)? == 0 {
            return Ok(0);
        }
        Ok(if non_portable { 16 } else { 8 })
    }

    /// cuOccupancyMaxActiveClusters: clusters of the launch's shape (or the kernel's
    /// required one; neither: 0, as on the H200) resident at once.
    pub fn occupancy_active_clusters(
        &self,
        f: FunctionId,
        threads: i32,
        shared: usize,
        cluster: Option<[u32; 3]>,
        grid: [u32; 3],
    ) -> CuResult<i32> {
        let (required, device) = {
            let st = self.state.lock();
            let (_, r) = st.modules.function(f)?;
            let m = st.modules.module(r.module)?;
            let k = &m.program.kernels[r.kernel];
            let set = (r.required_cluster != [0; 3]).then_some(r.required_cluster);
            (k.required_cluster.or(set), m.device)
        };
        let shape = match (cluster, required) {
            (Some(c), Some(r)) if c != r => {
                return Err(CuError::new(
                    CUDA_ERROR_INVALID_CLUSTER_SIZE,
                    format!("a cluster of {c:?}: the kernel requires {r:?}"),
                ))
            }
            (Some(c), _) | (None, Some(c)) => c,
            // No shape given nor required: no clusters, none resident (as the H200).
            (None, None) => return Ok(0),
        };
        // Recorded: a grid the cluster does not divide is refused here too.
        if shape.iter().zip(grid).any(|(&c, g)| c != 0 && g % c != 0) {
            return Err(CuError::new(
                CUDA_ERROR_INVALID_CLUSTER_SIZE,
                format!("a cluster of {shape:?} does not divide the grid {grid:?}"),
            ));
        }
        let blocks = shape.iter().map(|&d| i64::from(d)).product::<i64>();
        let limit = self.occupancy_cluster_size(f, threads, shared)?.max(8);
        if blocks == 0 || blocks > i64::from(limit) {
            return Err(CuError::new(
                CUDA_ERROR_INVALID_CLUSTER_SIZE,
                format!("a cluster of {shape:?}: between 1 and {limit} blocks"),
            ));
        }
        // Recorded on the H200 (clients/probes/clusters.c, occupancy): at most 8 blocks of
        // clusters per SM whatever the block size (1056 clusters of one 32-thread block on
        // 132 SMs); clusters of 1 or 2 blocks fill every SM; larger ones fill GPCs, which
        // a cluster may not span. The GPC sizes below are the one layout that gives all
        // three recorded answers for clusters of 4 and 8 (248, 124 with 8 blocks an SM;
        // 30 of 8 with 2): 124 SMs' worth in GPCs of 16 and 14. Sizes 3, 5-7 and 16 follow
        // the same rule unrecorded.
        const H200_GPCS: [i64; 8] = [16, 16, 16, 16, 16, 16, 14, 14];
        let per_sm = i64::from(self.occupancy_blocks_per_sm(f, threads, shared)?.min(8));
        // A green context's context current: its SMs (probe green_contexts, create: 64
        // clusters of 2 on 16 SMs); larger clusters there follow the same rule unrecorded.
        let green = self.current_green_sms().map(|s| i64::from(s.count()));
        let sms = green.unwrap_or_else(|| {
            i64::from(self.device_attribute(device, attr::DEV_MULTIPROCESSOR_COUNT, 132))
        });
        if green.is_none() && sms == 132 {
            if let Some(n) = h200_active_clusters(per_sm, blocks) {
                return Ok(n);
            }
        }
        let clusters = if blocks <= 2 || sms != 132 || green.is_some() {
            per_sm * sms / blocks
        } else {
            H200_GPCS.iter().map(|g| g * per_sm / blocks).sum()
        };
        Ok(clusters as i32)
    }

    /// cuOccupancyMaxPotentialBlockSize: the block size with the most resident threads
    /// per SM (the largest such), and the grid that fills every SM with it.
    /// cuOccupancyMaxPotentialBlockSize: `dynamic_shared` gives a block size's dynamic
    /// shared memory (the program's blockSizeToDynamicSMemSize, or its fixed size); it is
    /// called without the state's lock, so it may call the driver.
    pub fn occupancy_potential_block_size(
        &self,
        f: FunctionId,
        dynamic_shared: &dyn Fn(i32) -> usize,
        limit: i32,
    ) -> CuResult<(i32, i32)> {
        use attr::*;
        let (dev, max_threads) = {
            let st = self.state.lock();
            let (_, r) = st.modules.function(f)?;
            let m = st.modules.module(r.module)?;
            let k = &m.program.kernels[r.kernel];
            let dev_max = self.device_attribute(m.device, DEV_MAX_THREADS_PER_BLOCK, 1024);
            (
                m.device,
                k.max_threads_per_block
                    .map_or(dev_max, |n| (n as i32).min(dev_max)),
            )
        };
        let sms = self.device_attribute(dev, DEV_MULTIPROCESSOR_COUNT, 132);
        let warp = self.device_attribute(dev, DEV_WARP_SIZE, 32);
        let top = if limit > 0 {
            limit.min(max_threads)
        } else {
            max_threads
        };
        let mut best = (0, 0);
        let mut size = top - top % warp;
        while size > 0 {
            let blocks = self.occupancy_blocks_per_sm(f, size, dynamic_shared(size))?;
            if blocks * size > best.0 * best.1 {
                best = (blocks, size);
            }
            size -= warp;
        }
        Ok((best.0 * sms, best.1))
    }

    // ---- libraries ----

    pub fn library_load(&self, image: Image) -> CuResult<LibraryId> {
        let module = self.module_load(image)?;
        let mut st = self.state.lock();
        let id = LibraryId::from_handle(st.modules.fresh(LIBRARY_TAG));
        st.modules.libraries.insert(id, Library { module });
        Ok(id)
    }

    fn library(&self, st: &State, lib: LibraryId) -> CuResult<ModuleId> {
        st.modules
            .libraries
            .get(&lib)
            .map(|l| l.module)
            .ok_or_else(|| invalid_handle(format!("{lib:#x} is not a loaded library")))
    }

    pub fn library_unload(&self, lib: LibraryId) -> CuResult<()> {
        let module = {
            let mut st = self.state.lock();
            let module = self.library(&st, lib)?;
            st.modules.libraries.remove(&lib);
            st.modules.kernels.retain(|_, (l, _)| *l != lib);
            module
        };
        self.module_unload(module)
    }

    pub fn library_get_module(&self, lib: LibraryId) -> CuResult<ModuleId> {
        let st = self.state.lock();
        self.library(&st, lib)
    }

    pub fn library_get_kernel(&self, lib: LibraryId, name: &str) -> CuResult<KernelId> {
        let module = {
            let st = self.state.lock();
            self.library(&st, lib)?
        };
        // The kernel is found even where NVIDIA's JIT compiles no code for it; its
        // function is not (the H200: cuLibraryGetKernel CUDA_SUCCESS, cuKernelGetFunction
        // CUDA_ERROR_NOT_FOUND, ci/explore/txq_module.c).
        let mut st = self.state.lock();
        self.current_device(&st)?;
        let index = st
            .modules
            .module(module)?
            .program
            .kernel(name)
            .ok_or_else(|| {
                CuError::new(
                    CUDA_ERROR_NOT_FOUND,
                    format!("the library has no kernel named `{name}`"),
                )
            })?;
        let func = st.modules.function_handle(module, index, false);
        if let Some((&k, _)) = st.modules.kernels.iter().find(|(_, (_, f))| *f == func) {
            return Ok(k);
        }
        let k = KernelId::from_handle(st.modules.fresh(KERNEL_TAG));
        st.modules.kernels.insert(k, (lib, func));
        Ok(k)
    }

    pub fn kernel_get_function(&self, kernel: KernelId) -> CuResult<FunctionId> {
        let mut st = self.state.lock();
        let f = st
            .modules
            .kernels
            .get(&kernel)
            .map(|&(_, f)| f)
            .ok_or_else(|| {
                invalid_handle(format!("{kernel:#x} is not a kernel of a loaded library"))
            })?;
        let (_, r) = st.modules.function(f)?;
        st.modules.check_compiled(r.module, r.kernel)?;
        Ok(f)
    }

    // ---- enumeration and queries (cuModuleEnumerateFunctions, cuFuncGetParamInfo...) ----

    /// The kernels of a module, in the order of the PTX (the order the H200 enumerates in
    /// is for the probe api_gaps to record): each one's function handle, the same handle
    /// cuModuleGetFunction gives. Under lazy loading a handle made here is not loaded.
    pub fn module_functions(&self, module: ModuleId) -> CuResult<Vec<FunctionId>> {
        let mut st = self.state.lock();
        let kernels = st.modules.module(module)?.program.kernels.len();
        let eager = module_loading_mode() == CU_MODULE_EAGER_LOADING;
        Ok((0..kernels)
            .map(|k| st.modules.function_handle(module, k, eager))
            .collect())
    }

    /// The kernels of a library, as CUkernel handles (those cuLibraryGetKernel gives).
    pub fn library_kernels(&self, lib: LibraryId) -> CuResult<Vec<KernelId>> {
        let module = {
            let st = self.state.lock();
            self.library(&st, lib)?
        };
        let functions = self.module_functions(module)?;
        let mut st = self.state.lock();
        Ok(functions
            .into_iter()
            .map(|func| {
                if let Some((&k, _)) = st.modules.kernels.iter().find(|(_, (_, f))| *f == func) {
                    return k;
                }
                let k = KernelId::from_handle(st.modules.fresh(KERNEL_TAG));
                st.modules.kernels.insert(k, (lib, func));
                k
            })
            .collect())
    }

    /// The library a CUkernel belongs to.
    pub fn kernel_library(&self, kernel: KernelId) -> CuResult<LibraryId> {
        let st = self.state.lock();
        st.modules
            .kernels
            .get(&kernel)
            .map(|&(l, _)| l)
            .ok_or_else(|| {
                invalid_handle(format!("{kernel:#x} is not a kernel of a loaded library"))
            })
    }

    /// The module a function (or a CUkernel's function) is in.
    pub fn function_module(&self, f: FunctionId) -> CuResult<ModuleId> {
        Ok(self.state.lock().modules.function(f)?.1.module)
    }

    /// The offset and size of parameter `index` in the function's parameter buffer, as
    /// the PTX lays it out (each `.param` at its alignment, in order).
    pub fn function_param_info(&self, f: FunctionId, index: usize) -> CuResult<(usize, usize)> {
        let params = self.function_params(f)?;
        let p = params.get(index).ok_or_else(|| {
            invalid(format!(
                "parameter {index} is out of range: the function takes {}",
                params.len()
            ))
        })?;
        Ok((p.offset as usize, p.size as usize))
    }

    /// cuFuncIsLoaded: see `FunctionRef::loaded`; under eager loading, every function.
    pub fn function_is_loaded(&self, f: FunctionId) -> CuResult<bool> {
        let (_, r) = self.state.lock().modules.function(f)?;
        Ok(r.loaded || module_loading_mode() == CU_MODULE_EAGER_LOADING)
    }

    /// cuFuncLoad: marks the function loaded (its code was decoded with its module). A
    /// kernel NVIDIA's JIT compiles no code for stays unloaded, and the call succeeds, as
    /// on the H200 (ci/explore/txq_module.c: cuFuncLoad CUDA_SUCCESS, cuFuncIsLoaded 0).
    pub fn function_load(&self, f: FunctionId) -> CuResult<()> {
        match self.state.lock().modules.mark_loaded(f) {
            Err(e) if e.code == CUDA_ERROR_NOT_FOUND => Ok(()),
            other => other,
        }
    }

    /// cuLibraryGetManaged: the address and size of a `__managed__` variable.
    pub fn library_get_managed(&self, lib: LibraryId, name: &str) -> CuResult<(DevicePtr, u64)> {
        let st = self.state.lock();
        let m = st.modules.module(self.library(&st, lib)?)?;
        let i = m
            .program
            .globals
            .iter()
            .position(|g| g.managed && g.name == name)
            .ok_or_else(|| {
                CuError::new(
                    CUDA_ERROR_NOT_FOUND,
                    format!("the library has no managed variable named `{name}`"),
                )
            })?;
        Ok((DevicePtr::new(m.globals[i]), m.program.globals[i].size))
    }

    /// cuLibraryGetUnifiedFunction: a unified function is a `.func` with
    /// `.attribute(.unified(...))`, which the mock's PTX reader refuses at load, so a
    /// library it loaded has none: every symbol is not found (cuda.h's
    /// CUDA_ERROR_NOT_FOUND), after the library is checked.
    pub fn library_get_unified_function(&self, lib: LibraryId, symbol: &str) -> CuResult<()> {
        let st = self.state.lock();
        self.library(&st, lib)?;
        // Observed: CUDA_ERROR_INVALID_VALUE for a name that is no unified function, a
        // kernel's or none (probe api_gaps, library-queries).
        Err(invalid(format!(
            "the library has no unified function `{symbol}` (the mock loads none)"
        )))
    }
}

/// CUmoduleLoadingMode values (cuda.h).
pub const CU_MODULE_EAGER_LOADING: i32 = 1;
pub const CU_MODULE_LAZY_LOADING: i32 = 2;

/// cuModuleGetLoadingMode: as the real driver, the environment's CUDA_MODULE_LOADING
/// (`EAGER` or `LAZY`), read once; lazy by default since CUDA 12.2.
pub fn module_loading_mode() -> i32 {
    static MODE: std::sync::OnceLock<i32> = std::sync::OnceLock::new();
    *MODE.get_or_init(|| match std::env::var("CUDA_MODULE_LOADING").as_deref() {
        Ok("EAGER") => CU_MODULE_EAGER_LOADING,
        _ => CU_MODULE_LAZY_LOADING,
    })
}

/// The executor's settings, given once when the driver is made: they do not change under
/// a running program, and finding the host's CPUs (available_parallelism reads the
/// cgroup's files) on every launch cost more than the rest of an empty kernel's launch.
#[derive(Debug, Clone, Copy)]
pub(super) struct KernelSettings {
    /// Host threads that run a launch's blocks: all the cores, or
    /// `CUMOCK_KERNEL_THREADS`.
    pub(super) host_threads: usize,
    /// A GPU has no watchdog for compute kernels, so an endless loop hangs it; the mock
    /// does the same unless `CUMOCK_KERNEL_STEP_LIMIT` caps the instructions a warp may
    /// issue (then the launch ends in CUDA_ERROR_LAUNCH_TIMEOUT).
    pub(super) step_limit: Option<u64>,
    /// A GPU with a display has a watchdog that ends a long kernel in
    /// CUDA_ERROR_LAUNCH_TIMEOUT; a compute GPU has none and hangs. The mock bounds every
    /// launch by default (`CUMOCK_KERNEL_TIMEOUT=SECONDS`, fractions allowed; 0: no
    /// limit), so that a runaway kernel ends a CI job with a message rather than hanging
    /// it. The executor polls the deadline, so it holds whichever thread runs the launch.
    pub(super) time_limit: Option<std::time::Duration>,
    /// `CUMOCK_KERNEL_ENGINE=interp|jit|tiered` (tiered by default): the interpreter stays
    /// the reference.
    pub(super) engine: ptx::Engine,
}

impl From<&cumock_support::Settings> for KernelSettings {
    fn from(s: &cumock_support::Settings) -> Self {
        Self {
            host_threads: s
                .kernel_threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
            step_limit: s.kernel_step_limit,
            time_limit: s.kernel_timeout,
            engine: match s.kernel_engine {
                Some(cumock_support::KernelEngine::Interp) => ptx::Engine::Interp,
                Some(cumock_support::KernelEngine::Jit) => ptx::Engine::Jit,
                Some(cumock_support::KernelEngine::Tiered) | None => ptx::Engine::Tiered,
            },
        }
    }
}

/// cuOccupancyMaxActiveClusters as the H200 (driver 580.159.04) answered it, by blocks of
/// clusters per SM (the block's occupancy, at most 8) and cluster size 1-16 (probe
/// clusters, section occupancy-sizes; 0: size 9, whose grid there was refused, not
/// recorded). No formula over its GPCs found so far gives all of these (clusters of 3:
/// 327 where even GPCs give 326), so the recording is the model where it has an answer.
fn h200_active_clusters(per_sm: i64, size: i64) -> Option<i32> {
    const BY_SIZE: [(i64, [i32; 16]); 4] = [
        (
            8,
            [
                1056, 528, 327, 248, 193, 163, 139, 124, 0, 88, 81, 74, 67, 65, 58, 58,
            ],
        ),
        (
            5,
            [
                660, 330, 203, 154, 124, 101, 84, 77, 0, 58, 51, 44, 42, 37, 37, 35,
            ],
        ),
        (
            4,
            [
                528, 264, 163, 124, 94, 79, 69, 62, 0, 44, 37, 37, 30, 30, 28, 28,
            ],
        ),
        (
            2,
            [
                264, 132, 79, 62, 47, 39, 32, 30, 0, 21, 16, 16, 14, 14, 14, 14,
            ],
        ),
    ];
    let (_, row) = BY_SIZE.iter().find(|(p, _)| *p == per_sm)?;
    let n = *row.get(usize::try_from(size - 1).ok()?)?;
    (n != 0).then_some(n)
}
