//! Kernel launches: a launch's function looked up once (`LaunchFunction`), the launch
//! checked as the H200 checks it (`prepare_launch`), queued on its stream and run by the
//! stream's worker over `KernelMemory`, the device's memory as a kernel sees it (every
//! access translated through the mappings, with the launching device's rights).
//!
//! What the H200 does, recorded by clients/probes/kernels.c, is the rule here: a launch
//! that faults returns CUDA_SUCCESS; the fault shows at the next call that needs the
//! device (cuCtxSynchronize, cuMemAlloc, copies, cuModuleLoadData, even cuCtxCreate on
//! that device) and stays, for the life of the process: a primary-context reset does not
//! clear it. VMM calls (reserve, create, map, set access) go on working.

use super::error::*;
use super::ids::{ContextId, DevicePtr, FunctionId, ModuleId, StreamId};
use super::module::{
    attr, FunctionRef, LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, LIMIT_MALLOC_HEAP_SIZE,
    LIMIT_PRINTF_FIFO_SIZE, LIMIT_STACK_SIZE, LOCAL_LIMIT_PER_THREAD,
};
use super::textures::BoundObjects;
use super::vmm::{Need, Segment};
use super::{Driver, State};
use cumock_abi::result::*;
use cumock_ptx as ptx;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How long a kernel's fault takes to reach the host (see `Driver::run_kernel`).
const FAULT_DELIVERY: std::time::Duration = std::time::Duration::from_millis(50);

/// The launch as the program asked for it.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchRequest {
    pub function: FunctionId,
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

/// A launch's function, looked up once (`Driver::launch_function`): what the parameter
/// buffer and the launch's checks read of it.
pub struct LaunchFunction {
    r: FunctionRef,
    /// The context of its module.
    context: ContextId,
    program: Arc<ptx::Module>,
    globals: Vec<u64>,
    /// The most dynamic shared memory a launch may ask for.
    shared_limit: u32,
}

impl LaunchFunction {
    /// Its parameters' layout.
    pub fn params(&self) -> &[ptx::Param] {
        &self.program.kernels[self.r.kernel].params
    }
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
    /// The SMs the blocks run on, where fewer than the device's (a green context's).
    sm_ids: Option<Arc<[u32]>>,
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
    /// What the device runtime answers from, when the module calls it (kernels
    /// launching kernels, device-side queries).
    device_runtime: Option<DeviceRuntimeState>,
    /// What the module's texture and surface references read, as the launch found them
    /// (later Sets do not reach a queued kernel).
    references: Arc<super::texture_references::BoundReferences>,
    /// The allocations the ordering-bug trap protects from the host's loads from the
    /// launch until the kernel ends (`Driver::arm_launch_outputs`), by start; None where
    /// the launch armed nothing (a graph's kernel node), which then arms when it starts
    /// to run, for the time it runs.
    armed: Option<Vec<u64>>,
}

/// A launch's device runtime: the context's reserve, and its settings at the launch.
struct DeviceRuntimeState {
    pool: Arc<ptx::DeviceHeap>,
    /// CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT.
    pending: u32,
    /// Every CUlimit as cuCtxGetLimit would answer it (None: unsupported).
    limits: [Option<u64>; 8],
    /// cuCtxGetCacheConfig.
    cache_config: i32,
    /// The module's handle: the function attributes of its kernels.
    module: ModuleId,
}

impl PreparedLaunch {
    pub fn kernel_name(&self) -> &str {
        &self.program.kernels[self.kernel].name
    }

    /// Runs the kernel (on a stream's worker: see `Driver::run_kernel`) with the texture
    /// and surface objects live when it was launched (`bound`).
    pub fn run(&self, driver: &Driver, bound: &BoundObjects) {
        self.run_in(driver, bound, None);
    }

    /// `run`, as a kernel node of a graph's launch (`env`): its device-side
    /// cudaGraphLaunch calls go to that launch (graphs/device.rs), and
    /// `cudaGetCurrentGraphExec` answers its device graph.
    pub(super) fn run_in(
        &self,
        driver: &Driver,
        bound: &BoundObjects,
        env: Option<&super::graphs::GraphEnv>,
    ) {
        let launch = ptx::Launch {
            grid: self.grid,
            block: self.block,
            dynamic_shared_bytes: self.shared,
            params: &self.params,
            globals: &self.globals,
            device_ordinal: self.device as u32,
            sm_count: self.sm_count,
            sm_ids: self.sm_ids.as_deref(),
            host_threads: self.host_threads,
            step_limit: self.step_limit,
            time_limit: self.time_limit,
            engine: self.engine,
            cooperative: self.cooperative,
            cluster: self.cluster,
            stack_bytes: self.stack_bytes,
            heap: self.heap.as_deref(),
            device_runtime: None,
            current_graph_exec: env.map_or(0, |e| e.current()),
        };
        let attribute = |a: i32| driver.profile.devices[self.device].attribute(a);
        let module = self.device_runtime.as_ref().map(|r| r.module);
        // Asked while the kernel runs, as the host's cuFuncGetAttribute and
        // cuOccupancyMaxActiveBlocksPerMultiprocessor would answer then.
        let function_attribute = |k: usize, a: i32| driver.kernel_attribute(module?, k, a).ok();
        let occupancy = |k: usize, threads: i32, shared: u64| {
            driver
                .kernel_occupancy(module?, k, threads, usize::try_from(shared).ok()?)
                .ok()
        };
        let graph_launch = env
            .map(|env| move |exec: u64, stream: u64| driver.device_graph_launch(env, exec, stream));
        let runtime = self.device_runtime.as_ref().map(|r| ptx::DeviceRuntime {
            pool: &r.pool,
            pending_launch_limit: r.pending,
            attribute: &attribute,
            limits: r.limits,
            cache_config: r.cache_config,
            device_count: driver.device_count() as i32,
            function_attribute: &function_attribute,
            occupancy: &occupancy,
            graph_launch: graph_launch.as_ref().map(|f| f as &ptx::GraphLaunch),
        });
        let launch = ptx::Launch {
            device_runtime: runtime.as_ref(),
            ..launch
        };
        let armed_now;
        let armed = match &self.armed {
            Some(a) => a,
            None if super::ordering::enabled() => {
                armed_now =
                    driver.arm_launch_outputs(&self.program.kernels[self.kernel], &self.params);
                &armed_now
            }
            None => &Vec::new(),
        };
        driver.run_kernel(self, &launch, armed, bound);
    }
}

/// The device's memory as a kernel sees it: every access translated through the
/// mappings, with the launching device's rights; the spans it handed out are recorded so
/// that the launch counts as work in flight on them.
struct KernelMemory<'a> {
    driver: &'a Driver,
    device: usize,
    /// The texture and surface objects live at the launch, which it keeps even when the
    /// program destroys them before the kernel runs.
    bound: &'a BoundObjects,
    /// The module's references as the launch found them (handles in
    /// `ptx::REFERENCE_WINDOW`).
    references: &'a super::texture_references::BoundReferences,
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
        if ptx::reference_index(handle).is_some() {
            return self.references.texture(handle);
        }
        // One created since the launch (its handle reached the kernel through memory).
        self.bound
            .texture(handle)
            .or_else(|| self.driver.texture_object(handle))
    }

    fn surface(&self, handle: u64) -> Option<std::sync::Arc<ptx::SurfaceObject>> {
        if ptx::reference_index(handle).is_some() {
            return self.references.surface(handle);
        }
        self.bound
            .surface(handle)
            .or_else(|| self.driver.surface_object(handle))
    }

    fn translate(
        &self,
        addr: u64,
        len: u64,
        access: ptx::Access,
    ) -> Result<ptx::HostSpan, ptx::Fault> {
        let need = match access {
            ptx::Access::Read => Need::Read,
            ptx::Access::Write | ptx::Access::Atomic => Need::Write,
        };
        let mut st = self.driver.state.lock();
        let span = st.device_span(addr, self.device, need).map_err(|e| {
            if e.code == CUDA_ERROR_OUT_OF_MEMORY {
                self.out_of_memory.store(true, Ordering::Relaxed);
            }
            ptx::Fault {
                message: e.message.into_owned(),
            }
        })?;
        if let Some(seg) = span.mapped {
            let mut touched = self.touched.lock();
            // The kernel keeps this pointer for the rest of the launch: the allocation's
            // bytes must stay where they are until it ends (`Vmm::pin`). One entry an
            // allocation: with ordering reports on, translations come per window, and a
            // list of every one would grow with the kernel's accesses. Page-locked host
            // memory stays mapped while queued work may use it: cuMemFreeHost and
            // cuMemHostUnregister wait for every stream's work first.
            if !touched.iter().any(|t| t.allocation == seg.allocation) {
                st.vmm.pin(seg.allocation);
                touched.push(seg);
            }
        }
        drop(st);
        if let Some(ranges) = &self.ranges {
            // Only the bytes accessed: the executor translates again for any others, or
            // for a write where these were handed out for reading, so the spans say
            // exactly what the kernel read, wrote and updated atomically (slower, a
            // translation per access: only while ordering bugs are looked for). Coarser
            // windows would make two streams' neighbouring words, which programs write
            // apart (simple_hyperq), look like a race.
            let lo = addr;
            let hi = addr.saturating_add(len.max(1)).min(span.start + span.size);
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
            return Ok(ptx::HostSpan {
                base: lo,
                len: hi - lo,
                host: span.host.wrapping_add((lo - span.start) as usize),
                writable: write && span.writable,
            });
        }
        Ok(ptx::HostSpan {
            base: span.start,
            len: span.size,
            host: span.host,
            writable: span.writable,
        })
    }
}

/// What a device address is for a kernel of `device` (`State::device_span`): the whole
/// mapping or page-locked range holding it, as host memory.
pub(super) struct DeviceSpan {
    pub start: u64,
    pub size: u64,
    /// Where the host reaches `start`.
    pub host: *mut u8,
    /// Whether `device` may write it.
    pub writable: bool,
    /// The mapping's bytes, whole; None for page-locked host memory, which is the
    /// program's or the host range's, not an allocation's.
    pub mapped: Option<Segment>,
}

impl State {
    /// The one translation of a device address for `device` needing `need`, which a
    /// kernel's accesses (`KernelMemory`) and the model's range form
    /// (`Driver::translate`) both take: the mapping there (with the same access rules
    /// and errors as a copy's, the mapping named), else page-locked host memory (unified
    /// addressing: its device pointer is its host address, as flags a kernel polls while
    /// the host sets them), else CUDA_ERROR_INVALID_VALUE saying what lies there.
    pub(super) fn device_span(&self, addr: u64, device: usize, need: Need) -> CuResult<DeviceSpan> {
        let Some(m) = self.vmm.mapping_at(addr) else {
            let Some((start, r)) = self.host.range_at(addr) else {
                return Err(invalid(describe_unmapped(self, addr)));
            };
            return Ok(DeviceSpan {
                start,
                size: r.size,
                host: r.kernel_address(start, start),
                writable: true,
                mapped: None,
            });
        };
        let (start, size) = (m.start, m.size);
        let seg = self.vmm.mapping_bytes(m, device, need).map_err(|mut e| {
            e.message = format!(
                "{} (the mapping {start:#x}+{size:#x} of reservation {:#x})",
                e.message, m.reservation
            )
            .into();
            e
        })?;
        Ok(DeviceSpan {
            start,
            size,
            host: seg.ptr.as_ptr(),
            writable: m.access.allows(device, Need::Write),
            mapped: Some(seg),
        })
    }
}

/// The cluster shape a launch runs with, checked as the CUDA programming guide states
/// ("Thread Block Clusters"): the launch's CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, else the
/// kernel's compile-time shape (`__cluster_dims__`: `.reqnctapercluster`), else one set by
/// cuFuncSetAttribute(REQUIRED_CLUSTER_*); None: no clusters. A misconfigured cluster is
/// CUDA_ERROR_INVALID_CLUSTER_SIZE, which cuda.h documents as "a kernel launch error due
/// to cluster misconfiguration", and the H200's code in each case the probe tries (probe
/// clusters, section launch-errors, recorded and matched).
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
    Ok(Some(shape))
}

/// What lies at an address no mapping covers: a reservation's hole, or nothing at all
/// (then the nearest mapping below, which is what an off-by-N bug usually ran past).
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

impl Driver {
    /// The parameter layout of a function, for the boundary to build the buffer.
    pub fn function_params(&self, f: FunctionId) -> CuResult<Vec<ptx::Param>> {
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

    /// The function a launch names (a CUfunction, or a CUkernel), looked up once: its
    /// parameters' layout (for the boundary to build the buffer) and the launch's checks
    /// both read it.
    /// A launch loads a function that lazy loading had not (cuFuncIsLoaded).
    pub fn launch_function(&self, f: FunctionId) -> CuResult<LaunchFunction> {
        let mut st = self.state.lock();
        let function = self.function_in(&st, f)?;
        st.modules.mark_loaded(f)?;
        Ok(function)
    }

    fn function_in(&self, st: &State, f: FunctionId) -> CuResult<LaunchFunction> {
        let (_, r) = st.modules.function(f)?;
        let m = st.modules.module(r.module)?;
        Ok(LaunchFunction {
            r,
            context: m.context,
            program: m.program.clone(),
            globals: m.globals.clone(),
            shared_limit: self.dynamic_shared_limit(m, &r),
        })
    }

    /// cuLaunchKernel of `function` (`launch_function(req.function)`): checks the launch
    /// as the H200 does (its errors are the launch's), then queues the kernel on its
    /// stream and returns: the stream's worker runs it (model/stream_queues.rs). A fault
    /// does not fail the launch: it becomes the device's sticky error, reported by the
    /// synchronising calls that follow, as on a GPU.
    /// A launch that succeeds leaves its block and parameters as the function's legacy
    /// settings (model/legacy_launch.rs).
    pub fn launch(&'static self, function: &LaunchFunction, req: LaunchRequest) -> CuResult<()> {
        let settings = LaunchRequest {
            params: req.params.clone(),
            ..req
        };
        self.launch_or_capture(function, req)?;
        self.remember_launch(&settings);
        Ok(())
    }

    fn launch_or_capture(
        &'static self,
        function: &LaunchFunction,
        req: LaunchRequest,
    ) -> CuResult<()> {
        if self.capture_of(req.stream)?.is_some() {
            // A capturing stream records the launch as a graph node instead.
            let stream = req.stream;
            return self.capture_kernel(stream, function, req);
        }
        let mut prepared = self.prepare_launch_of(function, &req)?;
        // Recorded on the H200 (device_graphs): a kernel calling cudaGraphLaunch is refused
        // into a stream (the kernel does not run; a graph's kernel node runs it). Whether
        // the configuration's errors come first is not recorded.
        if function.program.kernel_launches_graphs(function.r.kernel) {
            return Err(CuError::new(
                cumock_abi::result::CUDA_ERROR_NOT_SUPPORTED,
                format!(
                    "kernel {} launches device graphs (cudaGraphLaunch): it runs only as a \
                     graph's kernel node, not launched into a stream",
                    prepared.kernel_name()
                ),
            ));
        }
        // For ordering-bug reports only: the trap armed from the launch on, and the name
        // (formatting it costs a tenth of a launch).
        let what = if super::ordering::enabled() {
            prepared.armed =
                Some(self.arm_launch_outputs(
                    &prepared.program.kernels[prepared.kernel],
                    &prepared.params,
                ));
            format!("the launch of kernel {}", prepared.kernel_name())
        } else {
            String::new()
        };
        let bound = self.bound_objects();
        self.enqueue_work(
            req.stream,
            &what,
            Box::new(move || prepared.run(self, &bound)),
        )
    }

    /// Whether function `f` launches kernels on the device (CUDA dynamic parallelism),
    /// which a device graph's kernel node may not.
    pub fn function_launches_on_device(&self, f: FunctionId) -> CuResult<bool> {
        let f = self.launch_function(f)?;
        Ok(f.program.kernel_launches_on_device(f.r.kernel))
    }

    /// The checks of a launch (its errors are the launch's), and what running it needs,
    /// for a graph's kernel node, which holds its function's handle: the current context
    /// checked, then the function looked up, then `prepare_launch_of`.
    pub fn prepare_launch(&self, req: &LaunchRequest) -> CuResult<PreparedLaunch> {
        let function = {
            let st = self.state.lock();
            self.current_device(&st)?;
            self.function_in(&st, req.function)?
        };
        self.prepare_launch_of(&function, req)
    }

    /// A launch's block against `f`'s and `device`'s limits: each dimension, the threads,
    /// the dynamic shared memory.
    fn check_block(&self, device: usize, f: &LaunchFunction, req: &LaunchRequest) -> CuResult<()> {
        use attr::*;
        let dim_limit = |a: i32, d: u32| self.device_attribute(device, a, d as i32) as u32;
        let max_block = [
            dim_limit(DEV_MAX_BLOCK_DIM[0], 1024),
            dim_limit(DEV_MAX_BLOCK_DIM[1], 1024),
            dim_limit(DEV_MAX_BLOCK_DIM[2], 64),
        ];
        if req.block.iter().zip(max_block).any(|(b, m)| *b > m) {
            return Err(invalid(format!(
                "block {:?} exceeds the device's limits ({max_block:?})",
                req.block
            )));
        }
        let k = &f.program.kernels[f.r.kernel];
        let threads = req.block.iter().map(|b| u64::from(*b)).product::<u64>();
        let limit = k
            .max_threads_per_block
            .unwrap_or(max_block[0])
            .min(dim_limit(DEV_MAX_THREADS_PER_BLOCK, 1024));
        if threads > u64::from(limit) {
            return Err(invalid(format!(
                "{threads} threads per block: the kernel takes at most {limit}"
            )));
        }
        if req.shared > f.shared_limit {
            return Err(invalid(format!(
                "{} bytes of dynamic shared memory: the kernel may use {} (cuFuncSetAttribute \
                 MAX_DYNAMIC_SHARED_SIZE_BYTES raises it)",
                req.shared, f.shared_limit
            )));
        }
        Ok(())
    }

    /// A kernel node's block against its function's limits, as the H200 checks them when
    /// the node is added or its parameters set (random_graphs: 2048 threads or 1 GiB of
    /// dynamic shared memory INVALID_VALUE, all 20 such calls, e.g. seed 9 line 10).
    pub fn check_node_block(&self, req: &LaunchRequest) -> CuResult<()> {
        let st = self.state.lock();
        let f = self.function_in(&st, req.function)?;
        let device = st.contexts.get(f.context)?.device;
        self.check_block(device, &f, req)
    }

    /// The checks of a launch of `f` (its errors are the launch's), and what running it
    /// needs: shared by cuLaunchKernel, a capture and a graph's kernel nodes.
    pub fn prepare_launch_of(
        &self,
        f: &LaunchFunction,
        req: &LaunchRequest,
    ) -> CuResult<PreparedLaunch> {
        use attr::*;
        // A `.blocksareclusters` kernel's grid counts clusters: every check below, and the
        // run, see the blocks it stands for (as the H200 runs it).
        let in_blocks;
        let req = match f.program.kernels[f.r.kernel].grid_of_launch(req.grid) {
            Some(grid) if grid == req.grid => req,
            Some(grid) => {
                in_blocks = LaunchRequest {
                    grid,
                    ..req.clone()
                };
                &in_blocks
            }
            None => {
                return Err(invalid(format!(
                    "a grid of {:?} clusters is more blocks than a dimension holds",
                    req.grid
                )))
            }
        };
        let (program, kernel, globals, device, printf_fifo) = {
            let st = self.state.lock();
            let (ctx, device) = self.current_device(&st)?;
            if f.context != ctx {
                return Err(invalid_handle(format!(
                    "the function belongs to a module of context {:#x}, not the current {ctx:#x}",
                    f.context
                )));
            }
            let dim_limit = |a: i32, d: u32| self.device_attribute(device, a, d as i32) as u32;
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
                if req.grid[i] > max_grid[i] {
                    return Err(invalid(format!(
                        "grid {:?} exceeds the device's limits ({max_grid:?})",
                        req.grid
                    )));
                }
            }
            self.check_block(device, f, req)?;
            let k = &f.program.kernels[f.r.kernel];
            if u64::from(k.local_bytes_per_thread) > LOCAL_LIMIT_PER_THREAD {
                return Err(invalid(format!(
                    "the kernel declares {} bytes of local memory a thread: the device gives at \
                     most {LOCAL_LIMIT_PER_THREAD}",
                    k.local_bytes_per_thread
                )));
            }
            let cluster = launch_cluster(req, k, &f.r)?;
            st.contexts.check_stream(req.stream)?;
            let (program, kernel, globals) = (f.program.clone(), f.r.kernel, f.globals.clone());
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
            // A green context's stream, or its context's default stream: its SMs (probe
            // green_contexts, create: 1024 blocks on a green context of 16 SMs ran on 16).
            let stream_ctx = st.contexts.stream(req.stream).map_or(ctx, |(c, _)| c);
            let sm_ids = st
                .green
                .context_sms(stream_ctx)
                .map(|s| s.ids().collect::<Arc<[u32]>>());
            (
                program,
                kernel,
                globals,
                device,
                (fifo, stack, ctx, cluster, sm_ids),
            )
        };
        let (printf_fifo, stack_bytes, ctx, cluster, sm_ids) = printf_fifo;
        let module = f.r.module;
        if req.cooperative {
            self.check_cooperative(req, device, cluster)?;
        }
        let heap = if program.uses_device_heap() {
            Some(self.device_heap(ctx)?)
        } else {
            None
        };
        let device_runtime = if program.uses_device_runtime() {
            let (pool, pending) = self.device_runtime_pool(ctx)?;
            let st = self.state.lock();
            let limits = std::array::from_fn(|i| {
                st.contexts
                    .limit(ctx, i as i32)
                    .or(super::context::DEFAULT_LIMITS[i])
            });
            let cache_config = st.contexts.get(ctx)?.cache_config;
            Some(DeviceRuntimeState {
                pool,
                pending,
                limits,
                cache_config,
                module,
            })
        } else {
            None
        };
        Ok(PreparedLaunch {
            references: self.bound_references(f.r.module, device),
            program,
            kernel,
            globals,
            device,
            grid: req.grid,
            block: req.block,
            shared: req.shared,
            params: req.params.clone(),
            sm_count: self.device_attribute(device, DEV_MULTIPROCESSOR_COUNT, 132) as u32,
            sm_ids,
            host_threads: self.kernel.host_threads,
            step_limit: self.kernel.step_limit,
            time_limit: self.kernel.time_limit,
            engine: self.kernel.engine,
            printf_fifo,
            cooperative: req.cooperative,
            cluster,
            stack_bytes,
            heap,
            device_runtime,
            armed: None,
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

    /// Context `ctx`'s device-runtime reserve (the parameter buffers of launches made
    /// on the device, the error strings) and its pending-launch limit: the reserve is
    /// allocated at the first launch that needs it, 4 KiB (the most parameters a device
    /// launch takes) per pending launch the limit allows then, as a GPU's driver
    /// reserves memory for the limit; the limit is read at each launch.
    fn device_runtime_pool(&self, ctx: ContextId) -> CuResult<(Arc<ptx::DeviceHeap>, u32)> {
        const BUFFER: u64 = 4096;
        const STRINGS: u64 = 64 << 10;
        let (existing, pending) = {
            let st = self.state.lock();
            let pending = st
                .contexts
                .limit(ctx, LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT)
                .or(super::context::DEFAULT_LIMITS[LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT as usize])
                .unwrap_or(0)
                .min(u64::from(u32::MAX));
            (st.modules.devrt_pools.get(&ctx).cloned(), pending as u32)
        };
        if let Some(p) = existing {
            return Ok((p, pending));
        }
        let size = u64::from(pending) * BUFFER + STRINGS;
        let base = self.mem_alloc(size)?.get();
        let mut st = self.state.lock();
        if let Some(p) = st.modules.devrt_pools.get(&ctx) {
            // Another thread's launch made it meanwhile: that one stays.
            let p = p.clone();
            drop(st);
            self.mem_free(DevicePtr::new(base))?;
            return Ok((p, pending));
        }
        let pool = Arc::new(ptx::DeviceHeap::new(base, size));
        st.modules.devrt_pools.insert(ctx, pool.clone());
        crate::diagnostics::driver_owned(base, true);
        Ok((pool, pending))
    }

    /// A cooperative launch needs every block resident at once: the grid may not exceed
    /// what the occupancy calculator says fits on the device's SMs. With clusters of
    /// several blocks (`cluster`, the shape the launch runs with), every cluster must be
    /// resident: the grid's clusters may not exceed cuOccupancyMaxActiveClusters for the
    /// shape (its blocks, the cluster size times that, are then the most that fit), as the
    /// H200 answers (probe clusters, section cooperative-occupancy, recorded and matched).
    fn check_cooperative(
        &self,
        req: &LaunchRequest,
        device: usize,
        cluster: Option<[u32; 3]>,
    ) -> CuResult<()> {
        use attr::*;
        if self.device_attribute(device, DEV_COOPERATIVE_LAUNCH, 1) == 0 {
            return Err(CuError::new(
                CUDA_ERROR_NOT_SUPPORTED,
                "the device does not support cooperative launches \
                 (CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0)",
            ));
        }
        let threads = req.block.iter().map(|&d| d as i32).product::<i32>();
        if let Some(shape) = cluster.filter(|s| s.iter().product::<u32>() > 1) {
            let size = shape.iter().map(|&d| i64::from(d)).product::<i64>();
            let active = self.occupancy_active_clusters(
                req.function,
                threads,
                req.shared as usize,
                Some(shape),
                req.grid,
            )?;
            let clusters = req.grid.iter().map(|&d| i64::from(d)).product::<i64>() / size;
            if clusters > i64::from(active) {
                return Err(CuError::new(
                    CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
                    format!(
                        "a cooperative launch of {clusters} clusters of {shape:?}: at most \
                         {active} fit at once ({} blocks of {threads} threads and {} bytes of \
                         dynamic shared memory; cuOccupancyMaxActiveClusters)",
                        i64::from(active) * size,
                        req.shared
                    ),
                ));
            }
            return Ok(());
        }
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
        prepared: &PreparedLaunch,
        launch: &ptx::Launch,
        armed: &[u64],
        bound: &BoundObjects,
    ) {
        let (program, kernel) = (&*prepared.program, prepared.kernel);
        let (device, printf_fifo) = (prepared.device, prepared.printf_fifo);
        // The kernel has ended (or never runs): the host's loads of what it wrote are
        // trapped from here on only where it did write (`note_host_visible_writes`).
        let disarm = || armed.iter().for_each(|a| crate::host_trap::disarm_at(*a));
        if self.state.lock().sticky[device].is_some() {
            disarm();
            return;
        }
        let printf = ptx::PrintfBuffer::new(printf_fifo);
        let memory = KernelMemory {
            driver: self,
            device,
            bound,
            references: &prepared.references,
            touched: parking_lot::Mutex::new(Vec::new()),
            ranges: super::ordering::enabled().then(|| parking_lot::Mutex::new(Vec::new())),
            out_of_memory: AtomicBool::new(false),
        };
        let result = ptx::run_with_printf(program, kernel, launch, &memory, &printf);
        disarm();
        if let Some(ranges) = &memory.ranges {
            let ranges = ranges.lock();
            super::ordering::kernel_touched(&ranges);
            self.note_host_visible_writes(&ranges, program.kernels[kernel].may_signal_host);
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
            if code == CUDA_ERROR_OUT_OF_MEMORY {
                // The mock's limit, not the device's fault: said once (`State::stopped`).
                st.stopped[device].set(Some(CuError::new(
                    code,
                    format!(
                        "{message} (an earlier kernel was stopped; said once: free device \
                         memory or raise CUMOCK_DEVICE_MEMORY)"
                    ),
                )));
            } else {
                st.sticky[device] = Some(CuError::new(
                    code,
                    format!("{message} (an earlier kernel's fault is sticky: the device stays unusable in this process)"),
                ));
            }
            drop(st);
            // A GPU's fault reaches the host only after the hardware has stopped the
            // context, milliseconds later: until then cuStreamQuery still says
            // CUDA_ERROR_NOT_READY (probe kernels, fault-stream-sync). The stream's work
            // stays unfinished as long.
            std::thread::sleep(FAULT_DELIVERY);
        }
    }
}
