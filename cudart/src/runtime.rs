//! The runtime's process state: the device each thread works on, the primary context of
//! each device (retained at first use, as NVIDIA's runtime does since CUDA 12), sticky
//! errors, and what the program holds (memory, streams, events) for frees and the leak
//! report.

use crate::driver::{driver, Driver};
use crate::error::{self, CudaError, RtError, RtResult};
use cumock_abi::CUcontext;
use parking_lot::Mutex;
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

pub struct Runtime {
    pub device_count: i32,
    pub state: Mutex<State>,
}

/// How a cudaMalloc allocation is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backing {
    /// cuMemAlloc: the driver's own.
    Driver,
    /// A VMM allocation the runtime made (cuMemCreate with a POSIX fd handle type,
    /// reserved, mapped, access for every device), so that IPC can export it as an fd
    /// on a driver without cuIpcGetMemHandle.
    Vmm { handle: u64, reserved: u64 },
}

/// An allocation's fd exported for IPC handles (see ipc.rs).
#[derive(Debug, Clone, Copy)]
pub struct ExportedFd {
    pub fd: i32,
    pub secret: cumock_fd_passing::Secret,
}

#[derive(Debug, Clone, Copy)]
pub struct DeviceAllocation {
    pub size: u64,
    pub device: i32,
    pub backing: Backing,
    /// The fd exported for IPC, kept open until the memory is freed, and the secret its
    /// handles carry.
    pub exported: Option<ExportedFd>,
    /// A block of a runtime memory pool, not the program's own cudaMalloc.
    pub pooled: bool,
}

/// Host memory the runtime handed out or registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostKind {
    /// cuMemHostAlloc's.
    Driver,
    /// The runtime's own anonymous mapping, on a driver without cuMemHostAlloc.
    Runtime,
    /// cudaHostRegister'ed by the program; `driver` says whether the driver knows it.
    Registered { driver: bool },
}

#[derive(Debug, Clone, Copy)]
pub struct HostAllocation {
    pub size: usize,
    pub flags: u32,
    pub kind: HostKind,
}

/// A mapping cudaIpcOpenMemHandle made of another process's VMM memory.
#[derive(Debug, Clone, Copy)]
pub struct IpcMapping {
    pub base: u64,
    pub size: u64,
    pub handle: u64,
}

#[derive(Default)]
pub struct State {
    pub ipc_opened: HashMap<u64, IpcMapping>,
    primary: HashMap<i32, usize>,
    sticky: HashMap<i32, CudaError>,
    pub allocations: BTreeMap<u64, DeviceAllocation>,
    pub host: BTreeMap<usize, HostAllocation>,
    pub streams: HashMap<usize, i32>,
    /// The flags each of those streams was created with.
    pub stream_flags: HashMap<usize, u32>,
    pub events: HashMap<usize, i32>,
    /// Events created with cudaEventDisableTiming.
    pub untimed_events: std::collections::HashSet<usize>,
    /// Whether cudaMalloc goes through VMM (decided at the first cudaMalloc).
    pub malloc_over_vmm: Option<bool>,
}

/// Set by the runtime's exit handler. NVIDIA's runtime tears itself down in an exit
/// handler it registers when it starts; exit handlers and static destructors registered
/// before that (a global object made before main) run after it, and their calls get
/// cudaErrorCudartUnloading. Thrust's global `device_vector` example frees its memory so
/// and ignores exactly that error.
static UNLOADING: AtomicBool = AtomicBool::new(false);

extern "C" fn tear_down_at_exit() {
    UNLOADING.store(true, Ordering::Release);
}

pub fn runtime() -> RtResult<&'static Runtime> {
    static RT: OnceLock<Result<Runtime, RtError>> = OnceLock::new();
    RT.get_or_init(|| {
        crate::diagnostics::init();
        // Safety: registering a plain extern "C" function with no captured state.
        unsafe { libc::atexit(tear_down_at_exit) };
        let d = driver()?;
        let mut n = 0;
        d.cuDeviceGetCount(&mut n)?;
        if n == 0 {
            return Err(RtError::new(
                error::NO_DEVICE,
                "the driver reports no device",
            ));
        }
        Ok(Runtime {
            device_count: n,
            state: Mutex::new(State::default()),
        })
    })
    .as_ref()
    .map_err(Clone::clone)
}

thread_local! {
    /// The device cudaSetDevice chose for this thread (0 until then).
    static DEVICE: Cell<i32> = const { Cell::new(0) };
}

thread_local! {
    /// Whether this thread chose its device (cudaSetDevice), which a list of valid
    /// devices does not override.
    static CHOSEN: Cell<bool> = const { Cell::new(false) };
    /// cudaSetValidDevices' list for this thread (empty: every device in order).
    static VALID_DEVICES: std::cell::RefCell<Vec<i32>> = const { std::cell::RefCell::new(Vec::new()) };
}

pub fn thread_device() -> i32 {
    DEVICE.try_with(Cell::get).unwrap_or(0)
}

/// The devices this thread may be given, in the order it tries them.
pub fn candidate_devices(count: i32) -> Vec<i32> {
    let list = VALID_DEVICES
        .try_with(|v| v.borrow().clone())
        .unwrap_or_default();
    if list.is_empty() {
        (0..count).collect()
    } else {
        list
    }
}

/// cudaSetValidDevices: keeps the list and, for a thread that has not chosen its device,
/// takes the first of it whose primary context can be made.
pub fn set_valid_devices(rt: &Runtime, list: Vec<i32>) -> RtResult<()> {
    let _ = VALID_DEVICES.try_with(|v| *v.borrow_mut() = list.clone());
    if CHOSEN.try_with(Cell::get).unwrap_or(false) {
        return Ok(());
    }
    let mut last = None;
    for dev in candidate_devices(rt.device_count) {
        match rt.primary(dev) {
            Ok(_) => {
                let _ = DEVICE.try_with(|d| d.set(dev));
                return Ok(());
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| RtError::new(error::NO_DEVICE, "no device in the list works")))
}

impl Runtime {
    pub fn check_device(&self, device: i32) -> RtResult<()> {
        if (0..self.device_count).contains(&device) {
            Ok(())
        } else {
            Err(RtError::new(
                error::INVALID_DEVICE,
                format!(
                    "device {device} is not one of the {} devices",
                    self.device_count
                ),
            ))
        }
    }

    /// The device's primary context, retained once for the process.
    pub fn primary(&self, device: i32) -> RtResult<CUcontext> {
        self.check_device(device)?;
        let mut st = self.state.lock();
        if let Some(&c) = st.primary.get(&device) {
            return Ok(c as CUcontext);
        }
        let mut ctx = std::ptr::null_mut();
        driver()?
            .cuDevicePrimaryCtxRetain(&mut ctx, device)
            .map_err(|e| {
                if error::is_sticky(e.code) {
                    // A device whose kernel faulted stays unusable in the process, even after
                    // cudaDeviceReset: the driver refuses a new primary context with the fault,
                    // and NVIDIA's runtime says cudaErrorDevicesUnavailable (H200, kernel_fault).
                    RtError::new(
                        error::DEVICES_UNAVAILABLE,
                        format!(
                            "device {device} is unusable after an earlier fault ({})",
                            e.message
                        ),
                    )
                } else {
                    e
                }
            })?;
        st.primary.insert(device, ctx as usize);
        Ok(ctx)
    }

    /// Makes `device`'s primary context current on this thread (cudaSetDevice).
    pub fn set_device(&self, device: i32) -> RtResult<()> {
        let ctx = self.primary(device)?;
        driver()?.cuCtxSetCurrent(ctx)?;
        let _ = DEVICE.try_with(|d| d.set(device));
        let _ = CHOSEN.try_with(|c| c.set(true));
        Ok(())
    }

    /// cudaDeviceReset: the device's primary context goes, and with it everything the
    /// program made on it; its sticky error is cleared.
    pub fn reset_device(&self, device: i32) -> RtResult<()> {
        self.check_device(device)?;
        let d = driver()?;
        let had = {
            let mut st = self.state.lock();
            st.sticky.remove(&device);
            st.allocations.retain(|_, a| a.device != device);
            st.streams.retain(|_, dev| *dev != device);
            let streams: Vec<usize> = st.streams.keys().copied().collect();
            st.stream_flags.retain(|s, _| streams.contains(s));
            st.events.retain(|_, dev| *dev != device);
            let events: Vec<usize> = st.events.keys().copied().collect();
            st.untimed_events.retain(|e| events.contains(e));
            st.primary.remove(&device)
        };
        if let Some(ctx) = had {
            let mut cur = std::ptr::null_mut();
            d.cuCtxGetCurrent(&mut cur)?;
            if cur as usize == ctx {
                d.cuCtxSetCurrent(std::ptr::null_mut())?;
            }
            // Our retain goes first, then the reset, which a context nobody retains takes.
            d.cuDevicePrimaryCtxRelease(device)?;
            d.cuDevicePrimaryCtxReset(device)?;
        }
        Ok(())
    }

    pub fn sticky(&self, device: i32) -> Option<CudaError> {
        self.state.lock().sticky.get(&device).copied()
    }
}

/// The driver, the runtime, and this thread's device with a current context: what every
/// call that works on a device starts with. A context the program made current through
/// the driver API is used as it is; otherwise the device's primary context is made
/// current. A sticky error of the device is returned instead.
pub fn with_context() -> RtResult<(&'static Driver, &'static Runtime, i32)> {
    let (d, rt, device) = current_context()?;
    if let Some(code) = rt.sticky(device) {
        return Err(RtError::new(
            code,
            format!(
                "an earlier {} on device {device} is sticky until cudaDeviceReset",
                error::name(code).unwrap_or("error")
            ),
        ));
    }
    Ok((d, rt, device))
}

/// `with_context` without the sticky error: for the calls NVIDIA's runtime answers after
/// one (cudaGraphCreate succeeded on the H200 with the context's illegal address sticky:
/// runtime program device_graphs' first recording).
pub fn current_context() -> RtResult<(&'static Driver, &'static Runtime, i32)> {
    let rt = runtime()?;
    if UNLOADING.load(Ordering::Acquire) {
        return Err(RtError::new(
            error::CUDART_UNLOADING,
            "the runtime was torn down at exit: this call comes from an exit handler or a \
             static destructor registered before the runtime started, which runs after the \
             runtime's own exit handler",
        ));
    }
    let d = driver()?;
    let mut cur = std::ptr::null_mut();
    d.cuCtxGetCurrent(&mut cur)?;
    let device = if cur.is_null() {
        let device = thread_device();
        d.cuCtxSetCurrent(rt.primary(device)?)?;
        device
    } else {
        let mut device = 0;
        d.cuCtxGetDevice(&mut device, std::ptr::null_mut())?;
        device
    };
    Ok((d, rt, device))
}

/// A sticky error just happened on this thread's device.
pub fn note_sticky(code: CudaError) {
    let Ok(rt) = runtime() else { return };
    let Ok(d) = driver() else { return };
    let mut device = thread_device();
    let mut cur = std::ptr::null_mut();
    if d.cuCtxGetCurrent(&mut cur).is_ok() && !cur.is_null() {
        let _ = d.cuCtxGetDevice(&mut device, std::ptr::null_mut());
    }
    rt.state.lock().sticky.entry(device).or_insert(code);
}

/// What the program never freed, one line each.
pub fn leak_report() -> Vec<String> {
    let Ok(rt) = runtime() else { return Vec::new() };
    let st = rt.state.lock();
    let mut out = Vec::new();
    for (p, a) in st.allocations.iter().filter(|(_, a)| !a.pooled) {
        out.push(format!(
            "device memory {p:#x} ({} bytes, device {}) never freed (cudaFree)",
            a.size, a.device
        ));
    }
    for (p, h) in &st.host {
        match h.kind {
            HostKind::Registered { .. } => out.push(format!(
                "host range {p:#x} ({} bytes) never unregistered (cudaHostUnregister)",
                h.size
            )),
            _ => out.push(format!(
                "pinned host memory {p:#x} ({} bytes) never freed (cudaFreeHost)",
                h.size
            )),
        }
    }
    for p in st.ipc_opened.keys() {
        out.push(format!(
            "IPC mapping {p:#x} never closed (cudaIpcCloseMemHandle)"
        ));
    }
    for (s, dev) in &st.streams {
        out.push(format!(
            "stream {s:#x} (device {dev}) never destroyed (cudaStreamDestroy)"
        ));
    }
    for (e, dev) in &st.events {
        out.push(format!(
            "event {e:#x} (device {dev}) never destroyed (cudaEventDestroy)"
        ));
    }
    drop(st);
    out.extend(crate::pool::leak_report());
    out
}
