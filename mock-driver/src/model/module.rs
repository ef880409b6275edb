//! Modules, libraries, functions and kernel launches: PTX (alone or in a fatbin) decoded
//! once by `cumock_ptx`, its `.global`/`.const` variables placed in device memory of the
//! loading context, and its kernels run on the host over the mock's own address
//! translation (a `Memory` whose every span comes from `Vmm::segments`, with the access
//! rights of the launching context's device).
//!
//! What the H200 does, recorded by clients/probes/kernels.c, is the rule here: a launch
//! that faults returns CUDA_SUCCESS; the fault shows at the next call that needs the
//! device (cuCtxSynchronize, cuMemAlloc, copies, cuModuleLoadData, even cuCtxCreate on
//! that device) and stays, for the life of the process: a primary-context reset does not
//! clear it. VMM calls (reserve, create, map, set access) go on working.

use super::error::*;
use super::ids::{ContextId, DevicePtr, StreamId};
use super::vmm::{Need, Segment};
use super::{Driver, State};
use crate::host_bytes::HostBytes;
use cumock_abi::result::*;
use cumock_ptx as ptx;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const MODULE_TAG: u64 = 0x00d0_0000_0000_0000;
const FUNCTION_TAG: u64 = 0x00f0_0000_0000_0000;
const LIBRARY_TAG: u64 = 0x001b_0000_0000_0000;
const KERNEL_TAG: u64 = 0x00ce_0000_0000_0000;

/// The values of cuda.h's `CUfunction_attribute` and the `CUdevice_attribute`s launches
/// check (the attribute tables of `cumock_abi` are by name; these are matched on).
mod attr {
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
const LOCAL_LIMIT_PER_THREAD: u64 = 523_712;

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
    /// Bytes of `.const` variables, for CONST_SIZE_BYTES.
    pub const_bytes: u32,
    /// The function handle of each kernel, once asked for.
    pub functions: Vec<Option<u64>>,
}

#[derive(Clone, Copy, Debug)]
pub struct FunctionRef {
    pub module: u64,
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
}

/// A library loaded with cuLibraryLoad*: here, a module of the context current at load
/// time (the real driver loads it lazily into each context that uses it).
pub struct Library {
    pub module: u64,
}

#[derive(Default)]
pub struct Modules {
    pub modules: HashMap<u64, LoadedModule>,
    pub functions: HashMap<u64, FunctionRef>,
    pub libraries: HashMap<u64, Library>,
    /// CUkernel handles: the library and its kernel's function.
    pub kernels: HashMap<u64, (u64, u64)>,
    /// Each context's device heap (kernels' malloc and free), made at the first launch
    /// of a kernel whose module calls them; its memory is cuMemAlloc memory of the
    /// context, freed with it.
    pub heaps: HashMap<ContextId, Arc<ptx::DeviceHeap>>,
    next_id: u64,
}

impl Modules {
    fn fresh(&mut self, tag: u64) -> u64 {
        self.next_id += 1;
        tag | self.next_id
    }

    pub fn module(&self, m: u64) -> CuResult<&LoadedModule> {
        self.modules.get(&m).ok_or_else(|| {
            invalid_handle(format!(
                "{m:#x} is not a loaded module (unloaded already, or never one)"
            ))
        })
    }

    /// The function a CUfunction (or a CUkernel, which launches take too) names.
    pub fn function(&self, f: u64) -> CuResult<(u64, FunctionRef)> {
        if f == 0 {
            return Err(invalid_handle("the function is NULL"));
        }
        let handle = match self.kernels.get(&f) {
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

    fn function_handle(&mut self, module: u64, kernel: usize) -> u64 {
        if let Some(Some(h)) = self.modules.get(&module).map(|m| m.functions[kernel]) {
            return h;
        }
        let h = self.fresh(FUNCTION_TAG);
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

/// How long a kernel's fault takes to reach the host (see `Driver::run_kernel`).
const FAULT_DELIVERY: std::time::Duration = std::time::Duration::from_millis(50);

/// The launch as the program asked for it.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchRequest {
    pub function: u64,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: u32,
    pub stream: StreamId,
    pub params: Vec<u8>,
    /// cuLaunchCooperativeKernel (or the cooperative launch attribute): every block in
    /// flight at once, with a grid workspace for grid-wide syncs.
    pub cooperative: bool,
    /// CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, when given.
    pub cluster: Option<[u32; 3]>,
}

/// A launch that passed its checks: what a stream's worker needs to run it.
pub struct PreparedLaunch {
    program: Arc<ptx::Module>,
    kernel: usize,
    globals: Vec<u64>,
    device: usize,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    params: Vec<u8>,
    sm_count: u32,
    host_threads: usize,
    step_limit: Option<u64>,
    time_limit: Option<std::time::Duration>,
    engine: ptx::Engine,
    /// The context's CU_LIMIT_PRINTF_FIFO_SIZE at the launch: the most bytes of device
    /// printf output kept.
    printf_fifo: u64,
    cooperative: bool,
    /// The cluster shape the launch runs with (`Driver::launch_cluster`).
    cluster: Option<[u32; 3]>,
    /// The context's CU_LIMIT_STACK_SIZE at the launch.
    stack_bytes: u64,
    /// The context's device heap, when the module calls malloc or free.
    heap: Option<Arc<ptx::DeviceHeap>>,
}

impl PreparedLaunch {
    pub fn kernel_name(&self) -> &str {
        &self.program.kernels[self.kernel].name
    }

    /// Runs the kernel (on a stream's worker: see `Driver::run_kernel`).
    pub fn run(&self, driver: &Driver) {
        let launch = ptx::Launch {
            grid: self.grid,
            block: self.block,
            dynamic_shared_bytes: self.shared,
            params: &self.params,
            globals: &self.globals,
            device_ordinal: self.device as u32,
            sm_count: self.sm_count,
            host_threads: self.host_threads,
            step_limit: self.step_limit,
            time_limit: self.time_limit,
            engine: self.engine,
            cooperative: self.cooperative,
            cluster: self.cluster,
            stack_bytes: self.stack_bytes,
            heap: self.heap.as_deref(),
        };
        driver.run_kernel(
            &self.program,
            self.kernel,
            &launch,
            self.device,
            self.printf_fifo,
        );
    }
}

/// The device's memory as a kernel sees it: every access translated through the
/// mappings, with the launching device's rights; the spans it handed out are recorded so
/// that the launch counts as work in flight on them.
struct KernelMemory<'a> {
    driver: &'a Driver,
    device: usize,
    touched: parking_lot::Mutex<Vec<Segment>>,
    /// With ordering-bug reports on: the windows of device memory handed out, and whether
    /// for writing (`ordering::WINDOW`).
    ranges: Option<parking_lot::Mutex<Vec<(u64, u64, super::ordering::Touch)>>>,
    /// Set when a translation failed because the host cannot back the memory (see
    /// `limits`): the launch then ends in CUDA_ERROR_OUT_OF_MEMORY, not in a fault.
    out_of_memory: AtomicBool,
}

// Safety: every span comes from `Vmm::segments` for a whole mapping, and its allocation is
// pinned (`Vmm::pin`) from then until the kernel ends, so that its arena range or file
// view is neither given back nor moved meanwhile: the pointers stay valid for the whole
// launch. Concurrent blocks access them only through the executor's atomics.
unsafe impl ptx::Memory for KernelMemory<'_> {
    fn texture(&self, handle: u64) -> Option<std::sync::Arc<ptx::TextureObject>> {
        self.driver.texture_object(handle)
    }

    fn surface(&self, handle: u64) -> Option<std::sync::Arc<ptx::SurfaceObject>> {
        self.driver.surface_object(handle)
    }

    fn translate(
        &self,
        addr: u64,
        _len: u64,
        access: ptx::Access,
    ) -> Result<ptx::HostSpan, ptx::Fault> {
        let mut st = self.driver.state.lock();
        let need = match access {
            ptx::Access::Read => Need::Read,
            ptx::Access::Write | ptx::Access::Atomic => Need::Write,
        };
        let Some(m) = st.vmm.mapping_at(addr) else {
            // Page-locked host memory is the device's too (unified addressing: its device
            // pointer is its host address), as flags a kernel polls while the host sets
            // them. It stays mapped while queued work may use it: cuMemFreeHost and
            // cuMemHostUnregister wait for every stream's work first.
            if let Some((start, r)) = st.host.range_at(addr) {
                if let Some(ranges) = &self.ranges {
                    // Only the bytes accessed, as for device memory below (what the
                    // ordering-bug reports compare with the host's stores).
                    let hi = addr.saturating_add(_len.max(1)).min(start + r.size);
                    let touch = match access {
                        ptx::Access::Read => super::ordering::Touch::Read,
                        ptx::Access::Write => super::ordering::Touch::Write,
                        ptx::Access::Atomic => super::ordering::Touch::Atomic,
                    };
                    let mut ranges = ranges.lock();
                    match ranges.last_mut() {
                        Some(last) if last.2 == touch && last.0 <= hi && addr <= last.1 => {
                            last.0 = last.0.min(addr);
                            last.1 = last.1.max(hi);
                        }
                        _ => ranges.push((addr, hi, touch)),
                    }
                    return Ok(ptx::HostSpan {
                        base: addr,
                        len: hi - addr,
                        host: addr as *mut u8,
                        writable: access != ptx::Access::Read,
                    });
                }
                return Ok(ptx::HostSpan {
                    base: start,
                    len: r.size,
                    host: start as *mut u8,
                    writable: true,
                });
            }
            return Err(ptx::Fault {
                message: describe_unmapped(&st, addr),
            });
        };
        let (start, size) = (m.start, m.size);
        let writable = m.access.allows(self.device, Need::Write);
        let segs = st
            .vmm
            .segments(start, size, self.device, need)
            .inspect_err(|e| {
                if e.code == CUDA_ERROR_OUT_OF_MEMORY {
                    self.out_of_memory.store(true, Ordering::Relaxed);
                }
            })
            .map_err(|e| ptx::Fault {
                message: format!(
                    "{} (the mapping {start:#x}+{size:#x} of reservation {:#x})",
                    e.message, m.reservation
                ),
            })?;
        let seg = segs[0];
        debug_assert_eq!(
            segs.len(),
            1,
            "a mapping is one allocation, contiguous on the host"
        );
        let mut touched = self.touched.lock();
        // The kernel keeps this pointer for the rest of the launch: the allocation's
        // bytes must stay where they are until it ends (`Vmm::pin`). One entry an
        // allocation: with ordering reports on, translations come per window, and a list
        // of every one would grow with the kernel's accesses.
        if !touched.iter().any(|t| t.allocation == seg.allocation) {
            st.vmm.pin(seg.allocation);
            touched.push(seg);
        }
        if let Some(ranges) = &self.ranges {
            // Only the bytes accessed: the executor translates again for any others, or
            // for a write where these were handed out for reading, so the spans say
            // exactly what the kernel read, wrote and updated atomically (slower, a
            // translation per access: only while ordering bugs are looked for). Coarser
            // windows would make two streams' neighbouring words, which programs write
            // apart (simple_hyperq), look like a race.
            let lo = addr;
            let hi = addr.saturating_add(_len.max(1)).min(start + size);
            let touch = match access {
                ptx::Access::Read => super::ordering::Touch::Read,
                ptx::Access::Write => super::ordering::Touch::Write,
                ptx::Access::Atomic => super::ordering::Touch::Atomic,
            };
            let write = touch != super::ordering::Touch::Read;
            let mut ranges = ranges.lock();
            match ranges.last_mut() {
                // Consecutive accesses (a warp walking an array) make one range.
                Some(last) if last.2 == touch && last.0 <= hi && lo <= last.1 => {
                    last.0 = last.0.min(lo);
                    last.1 = last.1.max(hi);
                }
                _ => ranges.push((lo, hi, touch)),
            }
            drop(ranges);
            return Ok(ptx::HostSpan {
                base: lo,
                len: hi - lo,
                host: seg.ptr.as_ptr().wrapping_add((lo - start) as usize),
                writable: write && writable,
            });
        }
        Ok(ptx::HostSpan {
            base: start,
            len: size,
            host: seg.ptr.as_ptr(),
            writable,
        })
    }
}

/// What lies at an address no mapping covers: a reservation's hole, or nothing at all
/// (then the nearest mapping below, which is what an off-by-N bug usually ran past).
/// The cluster shape a launch runs with, checked as the CUDA programming guide states
/// ("Thread Block Clusters"): the launch's CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, else the
/// kernel's compile-time shape (`__cluster_dims__`: `.reqnctapercluster`), else one set by
/// cuFuncSetAttribute(REQUIRED_CLUSTER_*); None: no clusters. A misconfigured cluster is
/// CUDA_ERROR_INVALID_CLUSTER_SIZE, which cuda.h documents as "a kernel launch error due
/// to cluster misconfiguration"; the H200's code for each case awaits a recording (probe
/// clusters, launch-errors).
fn launch_cluster(
    req: &LaunchRequest,
    k: &ptx::Kernel,
    r: &FunctionRef,
) -> CuResult<Option<[u32; 3]>> {
    let bad = |why: String| Err(CuError::new(CUDA_ERROR_INVALID_CLUSTER_SIZE, why));
    let set_at_run_time = (r.required_cluster != [0; 3]).then_some(r.required_cluster);
    let shape = match (req.cluster, k.required_cluster) {
        (Some(c), Some(want)) if c != want => {
            return bad(format!(
                "a cluster of {c:?}: the kernel was compiled for clusters of {want:?}"
            ))
        }
        (Some(c), _) => c,
        (None, Some(want)) => want,
        (None, None) => match set_at_run_time {
            Some(c) => c,
            None if k.explicit_cluster => {
                return bad(
                    "the kernel must be launched with a cluster shape (.explicitcluster): \
                     give CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION"
                        .to_string(),
                )
            }
            None => return Ok(None),
        },
    };
    if shape.contains(&0) {
        return bad(format!("a cluster of {shape:?}: no dimension may be 0"));
    }
    if (0..3).any(|d| !req.grid[d].is_multiple_of(shape[d])) {
        return bad(format!(
            "the grid {:?} is not a whole number of clusters of {shape:?}",
            req.grid
        ));
    }
    let blocks = shape.iter().map(|&d| u64::from(d)).product::<u64>();
    // 8 blocks is the portable size on sm_90; the H200 runs 16 with the kernel's
    // NON_PORTABLE_CLUSTER_SIZE_ALLOWED set (cuda.h, CU_FUNC_ATTRIBUTE_NON_PORTABLE_...).
    let limit = if r.non_portable_cluster { 16 } else { 8 };
    if blocks > limit {
        return bad(format!(
            "a cluster of {blocks} blocks: at most {limit}{}",
            if limit == 8 {
                " (a portable cluster; cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED) allows 16)"
            } else {
                ""
            }
        ));
    }
    if let Some(max) = k.max_cluster_rank {
        if blocks > u64::from(max) {
            return bad(format!(
                "a cluster of {blocks} blocks: the kernel allows at most {max} (.maxclusterrank)"
            ));
        }
    }
    if req.cooperative && blocks > 1 {
        return Err(CuError::new(
            CUDA_ERROR_NOT_SUPPORTED,
            "a cooperative launch with clusters is not emulated: the mock runs either",
        ));
    }
    Ok(Some(shape))
}

fn describe_unmapped(st: &State, addr: u64) -> String {
    if let Some((base, r)) = st.vmm.reservation_at(addr) {
        return format!(
            "{addr:#x} is reserved (reservation {base:#x}+{:#x}) but nothing is mapped there",
            r.size
        );
    }
    match st.vmm.last_mapping_at_or_before(addr) {
        Some(m) => format!(
            "{addr:#x} is not device memory: nothing is mapped or reserved there; the nearest \
             mapping below ends at {:#x} ({} bytes before it)",
            m.start + m.size,
            addr - (m.start + m.size)
        ),
        None => format!("{addr:#x} is not device memory: nothing is mapped or reserved there"),
    }
}

/// `CU_LIMIT_PRINTF_FIFO_SIZE`, the index of its default in `context::DEFAULT_LIMITS`.
const LIMIT_PRINTF_FIFO_SIZE: i32 = 1;
/// CUlimit's CU_LIMIT_STACK_SIZE and CU_LIMIT_MALLOC_HEAP_SIZE.
const LIMIT_STACK_SIZE: i32 = 0;
pub(super) const LIMIT_MALLOC_HEAP_SIZE: i32 = 2;

fn fault_code(kind: ptx::FaultKind) -> cumock_abi::CUresult {
    match kind {
        ptx::FaultKind::IllegalAddress => CUDA_ERROR_ILLEGAL_ADDRESS,
        ptx::FaultKind::MisalignedAddress => CUDA_ERROR_MISALIGNED_ADDRESS,
        ptx::FaultKind::IllegalInstruction => CUDA_ERROR_ILLEGAL_INSTRUCTION,
        ptx::FaultKind::Trap => CUDA_ERROR_LAUNCH_FAILED,
        ptx::FaultKind::Assert => CUDA_ERROR_ASSERT,
        ptx::FaultKind::StepLimit | ptx::FaultKind::TimeLimit => CUDA_ERROR_LAUNCH_TIMEOUT,
        // A GPU hangs on a barrier nobody completes; the mock ends the launch instead.
        ptx::FaultKind::Deadlock => CUDA_ERROR_LAUNCH_FAILED,
    }
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

    fn device_attribute(&self, device: usize, attr: i32, default: i32) -> i32 {
        self.profile.devices[device]
            .attribute(attr)
            .unwrap_or(default)
    }

    /// Fails with the device's sticky error, if a kernel faulted on it.
    pub fn check_sticky(&self, st: &State, device: usize) -> CuResult<()> {
        match &st.sticky[device] {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// The current context and its device, checked for a sticky error.
    fn current_device(&self, st: &State) -> CuResult<(ContextId, usize)> {
        let (ctx, c) = st.contexts.require_current()?;
        let device = c.device;
        self.check_sticky(st, device)?;
        Ok((ctx, device))
    }

    /// cuModuleLoadData and friends: decodes the image and loads it into the current
    /// context. A failure is said on stderr once per image and cause, whatever the
    /// settings: a program that only checks the result code (or a runtime that turns it
    /// into "invalid device function") leaves its user no other way to learn why.
    pub fn module_load(&self, image: Image) -> CuResult<u64> {
        let key = image.content_key();
        self.module_load_unsaid(image)
            .map_err(|e| say_load_failure_once(key, e))
    }

    fn module_load_unsaid(&self, image: Image) -> CuResult<u64> {
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
                     -gencode arch=compute_90,code=compute_90 (or -ptx)",
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
    fn place_module(&self, program: Arc<ptx::Module>) -> CuResult<u64> {
        // One block for all variables, each at its alignment.
        let mut offsets = Vec::with_capacity(program.globals.len());
        let mut total = 0u64;
        for g in &program.globals {
            let at = total.next_multiple_of(u64::from(g.align.max(1)));
            offsets.push(at);
            total = at + g.size;
        }
        let storage = if total > 0 {
            self.mem_alloc(total)?.get()
        } else {
            0
        };
        let globals: Vec<u64> = offsets.iter().map(|o| storage + o).collect();
        for (g, &at) in program.globals.iter().zip(&globals) {
            // `init` is the initialised prefix; the rest of the fresh allocation is zero
            // already and stays untouched (sparse), however large the variable.
            if g.init.iter().any(|b| *b != 0) {
                self.copy(
                    super::HostOrDevice::Device(DevicePtr::new(at)),
                    super::HostOrDevice::Host(HostBytes::from_slice(&g.init)),
                    g.init.len() as u64,
                )?;
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
        let id = st.modules.fresh(MODULE_TAG);
        let kernels = program.kernels.len();
        st.modules.modules.insert(
            id,
            LoadedModule {
                context: ctx,
                device,
                program,
                globals,
                storage,
                const_bytes,
                functions: vec![None; kernels],
            },
        );
        Ok(id)
    }

    pub fn module_unload(&self, module: u64) -> CuResult<()> {
        let m = {
            let mut st = self.state.lock();
            st.modules.module(module)?;
            let m = st.modules.modules.remove(&module).expect("checked");
            st.modules.functions.retain(|_, f| f.module != module);
            st.launch_epoch += 1;
            m
        };
        if m.storage != 0 {
            self.mem_free(DevicePtr::new(m.storage))?;
        }
        Ok(())
    }

    pub fn module_get_function(&self, module: u64, name: &str) -> CuResult<u64> {
        let mut st = self.state.lock();
        self.current_device(&st)?;
        let m = st.modules.module(module)?;
        let k = m.program.kernel(name).ok_or_else(|| {
            CuError::new(
                CUDA_ERROR_NOT_FOUND,
                format!("the module has no kernel named `{name}`"),
            )
        })?;
        Ok(st.modules.function_handle(module, k))
    }

    /// cuModuleGetGlobal: the address and size of a `.global` or `.const` variable.
    pub fn module_get_global(&self, module: u64, name: &str) -> CuResult<(DevicePtr, u64)> {
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

    pub fn function_name(&self, f: u64) -> CuResult<String> {
        let st = self.state.lock();
        let (_, r) = st.modules.function(f)?;
        let m = st.modules.module(r.module)?;
        Ok(m.program.kernels[r.kernel].name.clone())
    }

    /// The most dynamic shared memory a launch of `f` may ask for.
    fn dynamic_shared_limit(&self, m: &LoadedModule, r: &FunctionRef) -> u32 {
        let k = &m.program.kernels[r.kernel];
        r.max_dynamic_shared
            .unwrap_or(DEFAULT_SHARED_LIMIT.saturating_sub(k.static_shared_bytes))
    }

    pub fn function_attribute(&self, f: u64, attr: i32) -> CuResult<i32> {
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
            NUM_REGS => k.registers.min(k.max_registers.unwrap_or(255)).min(255) as i32,
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
    pub fn function_set_cache_config(&self, f: u64, config: i32) -> CuResult<()> {
        self.state.lock().modules.function(f)?;
        if !(0..=3).contains(&config) {
            return Err(invalid(format!(
                "{config} is not a CUfunc_cache (CU_FUNC_CACHE_PREFER_NONE 0 to PREFER_EQUAL 3)"
            )));
        }
        Ok(())
    }

    pub fn function_set_attribute(&self, f: u64, attr: i32, value: i32) -> CuResult<()> {
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

    /// Blocks of `block_size` threads (and `dynamic_shared` bytes) resident on one SM at
    /// once, from the profile's per-SM limits.
    pub fn occupancy_blocks_per_sm(
        &self,
        f: u64,
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

    /// cuOccupancyMaxPotentialClusterSize: the largest cluster a launch may have, 8
    /// blocks (portable) or 16 with NON_PORTABLE_CLUSTER_SIZE_ALLOWED, as the H200 answers
    /// even for a kernel whose shape is compiled in; 0 when no block of the configuration
    /// fits an SM.
    pub fn occupancy_cluster_size(&self, f: u64, threads: i32, shared: usize) -> CuResult<i32> {
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
        f: u64,
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
        let sms = i64::from(self.device_attribute(device, attr::DEV_MULTIPROCESSOR_COUNT, 132));
        if sms == 132 {
            if let Some(n) = h200_active_clusters(per_sm, blocks) {
                return Ok(n);
            }
        }
        let clusters = if blocks <= 2 || sms != 132 {
            per_sm * sms / blocks
        } else {
            H200_GPCS.iter().map(|g| g * per_sm / blocks).sum()
        };
        Ok(clusters as i32)
    }

    /// cuOccupancyMaxPotentialBlockSize: the block size with the most resident threads
    /// per SM (the largest such), and the grid that fills every SM with it.
    pub fn occupancy_potential_block_size(
        &self,
        f: u64,
        dynamic_shared: usize,
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
            let blocks = self.occupancy_blocks_per_sm(f, size, dynamic_shared)?;
            if blocks * size > best.0 * best.1 {
                best = (blocks, size);
            }
            size -= warp;
        }
        Ok((best.0 * sms, best.1))
    }

    /// The parameter layout of a function, for the boundary to build the buffer.
    pub fn function_params(&self, f: u64) -> CuResult<Vec<ptx::Param>> {
        let st = self.state.lock();
        let (_, r) = st.modules.function(f)?;
        let m = st.modules.module(r.module)?;
        Ok(m.program.kernels[r.kernel].params.clone())
    }

    /// The size of a function's parameter buffer.
    pub fn params_size(params: &[ptx::Param]) -> usize {
        params
            .iter()
            .map(|p| (p.offset + p.size) as usize)
            .max()
            .unwrap_or(0)
    }

    /// cuLaunchKernel: checks the launch as the H200 does (its errors are the launch's),
    /// then queues the kernel on its stream and returns: the stream's worker runs it
    /// (model/stream_queues.rs). A fault does not fail the launch: it becomes the device's
    /// sticky error, reported by the synchronising calls that follow, as on a GPU.
    pub fn launch(&'static self, req: LaunchRequest) -> CuResult<()> {
        if self.capture_of(req.stream)?.is_some() {
            // A capturing stream records the launch as a graph node instead.
            let stream = req.stream;
            return self.capture_kernel(stream, req);
        }
        let prepared = self.prepare_launch(&req)?;
        let what = format!("the launch of kernel {}", prepared.kernel_name());
        self.enqueue_work(req.stream, &what, Box::new(move || prepared.run(self)))
    }

    /// The checks of a launch (its errors are the launch's), and what running it needs:
    /// shared by cuLaunchKernel and a graph's kernel nodes.
    pub fn prepare_launch(&self, req: &LaunchRequest) -> CuResult<PreparedLaunch> {
        use attr::*;
        let (program, kernel, globals, device, printf_fifo) = {
            let st = self.state.lock();
            let (ctx, device) = self.current_device(&st)?;
            let (_, r) = st.modules.function(req.function)?;
            let m = st.modules.module(r.module)?;
            if m.context != ctx {
                return Err(invalid_handle(format!(
                    "the function belongs to a module of context {:#x}, not the current {ctx:#x}",
                    m.context
                )));
            }
            let dim_limit = |a: i32, d: u32| self.device_attribute(device, a, d as i32) as u32;
            let max_block = [
                dim_limit(DEV_MAX_BLOCK_DIM[0], 1024),
                dim_limit(DEV_MAX_BLOCK_DIM[1], 1024),
                dim_limit(DEV_MAX_BLOCK_DIM[2], 64),
            ];
            let max_grid = [
                dim_limit(DEV_MAX_GRID_DIM[0], 0x7fff_ffff),
                dim_limit(DEV_MAX_GRID_DIM[1], 65535),
                dim_limit(DEV_MAX_GRID_DIM[2], 65535),
            ];
            for i in 0..3 {
                if req.grid[i] == 0 || req.block[i] == 0 {
                    return Err(invalid(format!(
                        "grid {:?} and block {:?}: no dimension may be 0",
                        req.grid, req.block
                    )));
                }
                if req.block[i] > max_block[i] || req.grid[i] > max_grid[i] {
                    return Err(invalid(format!(
                        "grid {:?} or block {:?} exceeds the device's limits (grid {max_grid:?}, block {max_block:?})",
                        req.grid, req.block
                    )));
                }
            }
            let k = &m.program.kernels[r.kernel];
            let threads =
                u64::from(req.block[0]) * u64::from(req.block[1]) * u64::from(req.block[2]);
            let limit = k
                .max_threads_per_block
                .unwrap_or(max_block[0])
                .min(dim_limit(DEV_MAX_THREADS_PER_BLOCK, 1024));
            if threads > u64::from(limit) {
                return Err(invalid(format!(
                    "{threads} threads per block: the kernel takes at most {limit}"
                )));
            }
            if u64::from(k.local_bytes_per_thread) > LOCAL_LIMIT_PER_THREAD {
                return Err(invalid(format!(
                    "the kernel declares {} bytes of local memory a thread: the device gives at \
                     most {LOCAL_LIMIT_PER_THREAD}",
                    k.local_bytes_per_thread
                )));
            }
            if req.shared > self.dynamic_shared_limit(m, &r) {
                return Err(invalid(format!(
                    "{} bytes of dynamic shared memory: the kernel may use {} (cuFuncSetAttribute \
                     MAX_DYNAMIC_SHARED_SIZE_BYTES raises it)",
                    req.shared,
                    self.dynamic_shared_limit(m, &r)
                )));
            }
            let cluster = launch_cluster(req, k, &r)?;
            st.contexts.check_stream(req.stream)?;
            let (program, kernel, globals) = (m.program.clone(), r.kernel, m.globals.clone());
            let fifo = st
                .contexts
                .limit(ctx, LIMIT_PRINTF_FIFO_SIZE)
                .or(super::context::DEFAULT_LIMITS[LIMIT_PRINTF_FIFO_SIZE as usize])
                .unwrap_or(0);
            let stack = st
                .contexts
                .limit(ctx, LIMIT_STACK_SIZE)
                .or(super::context::DEFAULT_LIMITS[LIMIT_STACK_SIZE as usize])
                .unwrap_or(0);
            (
                program,
                kernel,
                globals,
                device,
                (fifo, stack, ctx, cluster),
            )
        };
        let (printf_fifo, stack_bytes, ctx, cluster) = printf_fifo;
        if req.cooperative {
            self.check_cooperative(req, device)?;
        }
        let heap = if program.uses_device_heap() {
            Some(self.device_heap(ctx)?)
        } else {
            None
        };
        Ok(PreparedLaunch {
            program,
            kernel,
            globals,
            device,
            grid: req.grid,
            block: req.block,
            shared: req.shared,
            params: req.params.clone(),
            sm_count: self.device_attribute(device, DEV_MULTIPROCESSOR_COUNT, 132) as u32,
            host_threads: self.kernel.host_threads,
            step_limit: self.kernel.step_limit,
            time_limit: self.kernel.time_limit,
            engine: self.kernel.engine,
            printf_fifo,
            cooperative: req.cooperative,
            cluster,
            stack_bytes,
            heap,
        })
    }

    /// Context `ctx`'s device heap (the current context's), allocated at the first launch
    /// that needs it with the context's CU_LIMIT_MALLOC_HEAP_SIZE, as a GPU's driver
    /// sizes its heap when the first kernel using malloc is launched (cuCtxSetLimit
    /// refuses to change the size after that).
    fn device_heap(&self, ctx: ContextId) -> CuResult<Arc<ptx::DeviceHeap>> {
        let size = {
            let st = self.state.lock();
            if let Some(h) = st.modules.heaps.get(&ctx) {
                return Ok(h.clone());
            }
            st.contexts
                .limit(ctx, LIMIT_MALLOC_HEAP_SIZE)
                .or(super::context::DEFAULT_LIMITS[LIMIT_MALLOC_HEAP_SIZE as usize])
                .unwrap_or(0)
        };
        // A heap of 0 bytes: every malloc gives NULL, with nothing allocated.
        let base = if size > 0 {
            self.mem_alloc(size)?.get()
        } else {
            0
        };
        let mut st = self.state.lock();
        if let Some(h) = st.modules.heaps.get(&ctx) {
            // Another thread's launch made it meanwhile: that one stays.
            let h = h.clone();
            drop(st);
            if base != 0 {
                self.mem_free(DevicePtr::new(base))?;
            }
            return Ok(h);
        }
        let heap = Arc::new(ptx::DeviceHeap::new(base, size));
        st.modules.heaps.insert(ctx, heap.clone());
        if base != 0 {
            crate::diagnostics::driver_owned(base, true);
        }
        Ok(heap)
    }

    /// A cooperative launch needs every block resident at once: the grid may not exceed
    /// what the occupancy calculator says fits on the device's SMs.
    fn check_cooperative(&self, req: &LaunchRequest, device: usize) -> CuResult<()> {
        use attr::*;
        if self.device_attribute(device, DEV_COOPERATIVE_LAUNCH, 1) == 0 {
            return Err(CuError::new(
                CUDA_ERROR_NOT_SUPPORTED,
                "the device does not support cooperative launches \
                 (CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0)",
            ));
        }
        let threads = req.block.iter().map(|&d| d as i32).product::<i32>();
        let per_sm = self.occupancy_blocks_per_sm(req.function, threads, req.shared as usize)?;
        let sms = self.device_attribute(device, DEV_MULTIPROCESSOR_COUNT, 132);
        let fits = i64::from(per_sm) * i64::from(sms);
        let blocks = req.grid.iter().map(|&d| i64::from(d)).product::<i64>();
        if blocks > fits {
            return Err(CuError::new(
                CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
                format!(
                    "a cooperative launch of {blocks} blocks: at most {fits} fit at once \
                     ({per_sm} blocks of {threads} threads and {} bytes of dynamic shared \
                     memory per SM, {sms} SMs; cuOccupancyMaxActiveBlocksPerMultiprocessor)",
                    req.shared
                ),
            ));
        }
        Ok(())
    }

    /// Runs a queued kernel on its stream's worker, without the state's lock (a kernel
    /// takes it only to translate an address it has not used yet), and makes its fault
    /// the device's sticky error. A device already poisoned runs nothing more, as a GPU
    /// whose context faulted.
    fn run_kernel(
        &self,
        program: &ptx::Module,
        kernel: usize,
        launch: &ptx::Launch,
        device: usize,
        printf_fifo: u64,
    ) {
        if self.state.lock().sticky[device].is_some() {
            return;
        }
        let printf = ptx::PrintfBuffer::new(printf_fifo);
        let memory = KernelMemory {
            driver: self,
            device,
            touched: parking_lot::Mutex::new(Vec::new()),
            ranges: super::ordering::enabled().then(|| parking_lot::Mutex::new(Vec::new())),
            out_of_memory: AtomicBool::new(false),
        };
        let result = ptx::run_with_printf(program, kernel, launch, &memory, &printf);
        if let Some(ranges) = &memory.ranges {
            let ranges = ranges.lock();
            super::ordering::kernel_touched(&ranges);
            self.note_host_visible_writes(&ranges);
        }
        let mut st = self.state.lock();
        // A GPU's printf FIFO reaches the host at its next synchronisation: kept till then,
        // what was printed before a fault too.
        st.printf_out.extend_from_slice(&printf.take());
        st.printf_err.extend_from_slice(&printf.take_errors());
        // What a kernel touched is work in flight until the next synchronisation.
        let touched = memory.touched.into_inner();
        st.vmm.issued(&touched);
        let mut pinned: Vec<_> = touched.iter().map(|t| t.allocation).collect();
        pinned.sort_unstable();
        pinned.dedup();
        st.vmm.unpin(pinned);
        if let Err(fault) = result {
            // Memory the host could not back ends the kernel as a GPU's memory never
            // would: the program is told so, and how to give the mock more.
            let code = if memory.out_of_memory.load(Ordering::Relaxed) {
                CUDA_ERROR_OUT_OF_MEMORY
            } else {
                fault_code(fault.kind)
            };
            let mut message = if code == CUDA_ERROR_OUT_OF_MEMORY {
                format!("kernel stopped, out of host memory to back the device's: {fault}")
            } else {
                format!("kernel fault: {fault}")
            };
            if fault.kind == ptx::FaultKind::TimeLimit {
                message.push_str(&format!(
                    " (CUMOCK_KERNEL_TIMEOUT=SECONDS sets the limit, 0 for none; the default \
                     is {} s)",
                    cumock_support::settings::DEFAULT_KERNEL_TIMEOUT_S
                ));
            }
            crate::diagnostics::kernel_fault(&message);
            st.sticky[device] = Some(CuError::new(
                code,
                format!("{message} (an earlier kernel's fault is sticky: the device stays unusable in this process)"),
            ));
            drop(st);
            // A GPU's fault reaches the host only after the hardware has stopped the
            // context, milliseconds later: until then cuStreamQuery still says
            // CUDA_ERROR_NOT_READY (probe kernels, fault-stream-sync). The stream's work
            // stays unfinished as long.
            std::thread::sleep(FAULT_DELIVERY);
        }
    }

    // ---- libraries ----

    pub fn library_load(&self, image: Image) -> CuResult<u64> {
        let module = self.module_load(image)?;
        let mut st = self.state.lock();
        let id = st.modules.fresh(LIBRARY_TAG);
        st.modules.libraries.insert(id, Library { module });
        Ok(id)
    }

    fn library(&self, st: &State, lib: u64) -> CuResult<u64> {
        st.modules
            .libraries
            .get(&lib)
            .map(|l| l.module)
            .ok_or_else(|| invalid_handle(format!("{lib:#x} is not a loaded library")))
    }

    pub fn library_unload(&self, lib: u64) -> CuResult<()> {
        let module = {
            let mut st = self.state.lock();
            let module = self.library(&st, lib)?;
            st.modules.libraries.remove(&lib);
            st.modules.kernels.retain(|_, (l, _)| *l != lib);
            module
        };
        self.module_unload(module)
    }

    pub fn library_get_module(&self, lib: u64) -> CuResult<u64> {
        let st = self.state.lock();
        self.library(&st, lib)
    }

    pub fn library_get_kernel(&self, lib: u64, name: &str) -> CuResult<u64> {
        let module = {
            let st = self.state.lock();
            self.library(&st, lib)?
        };
        let func = self.module_get_function(module, name)?;
        let mut st = self.state.lock();
        if let Some((&k, _)) = st.modules.kernels.iter().find(|(_, (_, f))| *f == func) {
            return Ok(k);
        }
        let k = st.modules.fresh(KERNEL_TAG);
        st.modules.kernels.insert(k, (lib, func));
        Ok(k)
    }

    pub fn kernel_get_function(&self, kernel: u64) -> CuResult<u64> {
        let st = self.state.lock();
        st.modules
            .kernels
            .get(&kernel)
            .map(|&(_, f)| f)
            .ok_or_else(|| {
                invalid_handle(format!("{kernel:#x} is not a kernel of a loaded library"))
            })
    }
}

/// The executor's settings, given once when the driver is made: they do not change under
/// a running program, and finding the host's CPUs (available_parallelism reads the
/// cgroup's files) on every launch cost more than the rest of an empty kernel's launch.
#[derive(Debug, Clone, Copy)]
pub(super) struct KernelSettings {
    /// Host threads that run a launch's blocks: all the cores, or
    /// `CUMOCK_KERNEL_THREADS`.
    host_threads: usize,
    /// A GPU has no watchdog for compute kernels, so an endless loop hangs it; the mock
    /// does the same unless `CUMOCK_KERNEL_STEP_LIMIT` caps the instructions a warp may
    /// issue (then the launch ends in CUDA_ERROR_LAUNCH_TIMEOUT).
    step_limit: Option<u64>,
    /// A GPU with a display has a watchdog that ends a long kernel in
    /// CUDA_ERROR_LAUNCH_TIMEOUT; a compute GPU has none and hangs. The mock bounds every
    /// launch by default (`CUMOCK_KERNEL_TIMEOUT=SECONDS`, fractions allowed; 0: no
    /// limit), so that a runaway kernel ends a CI job with a message rather than hanging
    /// it. The executor polls the deadline, so it holds whichever thread runs the launch.
    time_limit: Option<std::time::Duration>,
    /// `CUMOCK_KERNEL_ENGINE=interp|jit`: the interpreter stays the reference.
    engine: ptx::Engine,
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
                None => ptx::Engine::default(),
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
