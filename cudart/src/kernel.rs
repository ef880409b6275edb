//! Kernels: what nvcc's generated host code calls. `__cudaRegisterFatBinary` and
//! `__cudaRegisterFunction`/`__cudaRegisterVar` run before main and only record; the
//! fatbin is loaded into a device's context at the first launch or symbol use there
//! (cuModuleLoadData, which takes a fatbin), as NVIDIA's runtime loads lazily. On
//! NVIDIA's driver the fatbin's SASS runs; on cumock's mock its PTX, once the mock
//! executes kernels (until then the launch says the driver cannot load them).

use crate::boundary::{cudart_fn, out_ref};
use crate::driver::Driver;
use crate::error::{self, RtError, RtResult};
use crate::memory::stream_for;
use crate::runtime::with_context;
use cumock_abi::{CUfunction, CUkernel, CUlibrary, CUmodule, CUstream};
use parking_lot::Mutex;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};

/// `dim3`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dim3 {
    pub x: c_uint,
    pub y: c_uint,
    pub z: c_uint,
}

/// `__fatBinC_Wrapper_t` (fatbinary_section.h), what nvcc passes to
/// __cudaRegisterFatBinary: { int magic, int version, const void *data, void
/// *filename_or_fatbins }, read from the program's memory as bytes (`wrapper_data`).
const FATBIN_WRAPPER_MAGIC: u32 = 0x466243b1;
const FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// The version of the wrapper nvlink writes for a device-linked (`-rdc=true`) program
/// (FATBINC_LINK_VERSION): its `filename_or_fatbins` is the NULL-terminated array of the
/// objects' own fatbins before linking (crt/link.stub's `__cudaPrelinkedFatbins`).
const FATBIN_WRAPPER_LINK_VERSION: u32 = 2;
/// More objects than any program links; a longer array is not nvlink's.
const MAX_PRELINKED: usize = 1 << 16;
/// The mock's cap on a module image (README: 1 GiB), for a prelinked fatbin's size.
const MAX_FATBIN: u64 = 1 << 30;

/// The fatbin a wrapper points to, checked before it is recorded: the wrapper readable
/// and of the right magic, its data a readable fatbin (not the wrapper itself, nor
/// another wrapper: nvcc writes one level, and a cycle of wrappers has no fatbin in it).
fn wrapper_data(wrapper: *const c_void) -> Result<usize, String> {
    let at = wrapper as u64;
    let mut w = [0u8; 16];
    if crate::os::read_program_memory(at, &mut w) < 16 {
        return Err(format!("the fatbin wrapper at {at:#x} is not readable"));
    }
    let magic = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
    if magic != FATBIN_WRAPPER_MAGIC {
        return Err(format!(
            "wrapper magic {magic:#x} is not {FATBIN_WRAPPER_MAGIC:#x}"
        ));
    }
    let data = u64::from_le_bytes(w[8..16].try_into().expect("8 bytes"));
    let mut m = [0u8; 4];
    if data == 0 || crate::os::read_program_memory(data, &mut m) < 4 {
        return Err(format!(
            "the wrapper's fatbin pointer {data:#x} is not readable"
        ));
    }
    match u32::from_le_bytes(m) {
        FATBIN_MAGIC => Ok(data as usize),
        FATBIN_WRAPPER_MAGIC if data == at => {
            Err("the wrapper's fatbin pointer points to the wrapper itself".into())
        }
        other => Err(format!(
            "the wrapper's fatbin at {data:#x} has magic {other:#x}, not a fatbin's {FATBIN_MAGIC:#x}"
        )),
    }
}

/// A fatbin's whole size from its header: { u32 magic, u16 version, u16 header size,
/// u64 size of what follows }.
fn fatbin_size(at: u64) -> Result<usize, String> {
    let mut h = [0u8; 16];
    if crate::os::read_program_memory(at, &mut h) < 16 {
        return Err(format!("the fatbin at {at:#x} is not readable"));
    }
    if u32::from_le_bytes([h[0], h[1], h[2], h[3]]) != FATBIN_MAGIC {
        return Err(format!("{at:#x} is not a fatbin"));
    }
    let header = u64::from(u16::from_le_bytes([h[6], h[7]]));
    let body = u64::from_le_bytes(h[8..16].try_into().expect("8 bytes"));
    match header.checked_add(body) {
        Some(n) if n <= MAX_FATBIN => Ok(n as usize),
        _ => Err(format!(
            "the fatbin at {at:#x} declares {header} + {body} bytes, more than a module may have"
        )),
    }
}

/// The objects' fatbins (address, size) a device-linked program's wrapper carries, in
/// link order; none for a wrapper of another version. nvlink links the objects' cubins
/// into the wrapper's own fatbin, which holds SASS only; the objects' fatbins keep the
/// relocatable PTX each was compiled to (`code=compute_90`), which the driver's linker
/// can link instead (`module`).
fn prelinked_fatbins(wrapper: *const c_void) -> Result<Vec<(usize, usize)>, String> {
    let at = wrapper as u64;
    let mut w = [0u8; 24];
    if crate::os::read_program_memory(at, &mut w) < 24 {
        return Ok(Vec::new());
    }
    if u32::from_le_bytes([w[4], w[5], w[6], w[7]]) != FATBIN_WRAPPER_LINK_VERSION {
        return Ok(Vec::new());
    }
    let array = u64::from_le_bytes(w[16..24].try_into().expect("8 bytes"));
    let mut objects = Vec::new();
    for i in 0..MAX_PRELINKED as u64 {
        let mut p = [0u8; 8];
        let slot = array
            .checked_add(8 * i)
            .ok_or_else(|| format!("the prelinked fatbins' array at {array:#x} wraps"))?;
        if crate::os::read_program_memory(slot, &mut p) < 8 {
            return Err(format!(
                "the prelinked fatbins' array at {array:#x} is not readable at entry {i}"
            ));
        }
        match u64::from_le_bytes(p) {
            0 => return Ok(objects),
            fatbin => objects.push((fatbin as usize, fatbin_size(fatbin)?)),
        }
    }
    Err(format!(
        "the prelinked fatbins' array at {array:#x} has no end within {MAX_PRELINKED} entries"
    ))
}

struct Fatbin {
    /// The fatbin image (magic 0xBA55ED50), in the program's data.
    image: usize,
    /// A device-linked program's objects' own fatbins (address, size), to link when the
    /// image cannot be loaded; empty for others.
    prelinked: Vec<(usize, usize)>,
    /// Loaded modules, by device.
    modules: HashMap<i32, usize>,
}

struct Symbol {
    fatbin: usize,
    name: CString,
}

#[derive(Default)]
struct Registry {
    fatbins: HashMap<usize, Fatbin>,
    /// Host stub address -> kernel.
    functions: HashMap<usize, Symbol>,
    /// Host shadow variable address -> device variable.
    variables: HashMap<usize, Symbol>,
    /// (host stub, device) -> CUfunction.
    loaded_functions: HashMap<(usize, i32), usize>,
    /// (host stub, device) of kernels the driver found no function for.
    missing_functions: std::collections::HashSet<(usize, i32)>,
    /// `__managed__` variables: where the program's pointer to each lives.
    managed: Vec<ManagedVar>,
    /// Fatbin -> the CUlibrary it is loaded as (context-independent); each device's
    /// module of the fatbin is the library's (cuLibraryGetModule).
    libraries: HashMap<usize, usize>,
    /// The cudaKernel_t handles this runtime gave out (cudaGetKernel, cudaLibraryGetKernel,
    /// cudaLibraryEnumerateKernels), with their library: accepted wherever a kernel's
    /// host stub is (the header's note on cudaKernel_t).
    kernels: HashMap<usize, usize>,
}

/// A kernel handle given out, from `library`.
pub fn remember_kernel(kernel: CUkernel, library: CUlibrary) {
    with_registry(|r| r.kernels.insert(kernel as usize, library as usize));
}

/// A library unloaded: its kernels are handles no longer.
pub fn forget_library(library: CUlibrary) {
    with_registry(|r| r.kernels.retain(|_, l| *l != library as usize));
}

/// A `__managed__` variable nvcc registered: the host reaches it through a pointer of the
/// program's (`*host_pointer`), which `__cudaInitModule` fills with its managed address.
struct ManagedVar {
    fatbin: usize,
    host_pointer: usize,
    name: CString,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn with_registry<T>(f: impl FnOnce(&mut Registry) -> T) -> T {
    f(REGISTRY.lock().get_or_insert_with(Registry::default))
}

/// Runs a registration function's body: these return no cudaError_t, so a panic is only
/// reported, never propagated into C.
fn guarded(name: &str, f: impl FnOnce()) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err() {
        eprintln!("cumock: internal error in {name} (please report this)");
    }
}

/// `fat_cubin` should be the `__fatBinC_Wrapper_t` nvcc emitted; anything else (NULL, a
/// wild pointer, a wrapper pointing to itself) is refused with a message, never followed.
#[no_mangle]
pub extern "C" fn __cudaRegisterFatBinary(fat_cubin: *mut c_void) -> *mut *mut c_void {
    let mut handle = std::ptr::null_mut();
    guarded("__cudaRegisterFatBinary", || {
        if fat_cubin.is_null() {
            eprintln!("cumock: __cudaRegisterFatBinary: NULL fatbin");
            return;
        }
        let image = match wrapper_data(fat_cubin) {
            Ok(image) => image,
            Err(why) => {
                eprintln!("cumock: __cudaRegisterFatBinary: {why}; its kernels will not launch");
                return;
            }
        };
        let prelinked = prelinked_fatbins(fat_cubin).unwrap_or_else(|why| {
            eprintln!(
                "cumock: __cudaRegisterFatBinary: {why}; only the linked image will be loaded"
            );
            Vec::new()
        });
        // The handle nvcc's code keeps and gives back: a cell of our own holding the image,
        // so that it is a real pointer, distinct per fatbin.
        let cell: *mut *mut c_void = Box::into_raw(Box::new(image as *mut c_void));
        with_registry(|r| {
            r.fatbins.insert(
                cell as usize,
                Fatbin {
                    image,
                    prelinked,
                    modules: HashMap::new(),
                },
            )
        });
        handle = cell;
    });
    handle
}

#[no_mangle]
pub extern "C" fn __cudaRegisterFatBinaryEnd(_handle: *mut *mut c_void) {}

#[no_mangle]
pub extern "C" fn __cudaUnregisterFatBinary(handle: *mut *mut c_void) {
    guarded("__cudaUnregisterFatBinary", || {
        let Some(fb) = with_registry(|r| {
            r.functions.retain(|_, s| s.fatbin != handle as usize);
            r.variables.retain(|_, s| s.fatbin != handle as usize);
            r.managed.retain(|v| v.fatbin != handle as usize);
            r.fatbins.remove(&(handle as usize))
        }) else {
            return;
        };
        // Modules are unloaded while the driver is still there; at exit after a
        // cudaDeviceReset their context may be gone, which the driver reports and we ignore.
        // Only a fatbin that was loaded asks for the driver: a program that never used
        // CUDA must not start it at exit.
        let library = with_registry(|r| r.libraries.remove(&(handle as usize)));
        let d = (!fb.modules.is_empty() || library.is_some()).then(crate::driver::driver);
        if let Some(Ok(d)) = d {
            match library {
                // The library's modules go with it.
                Some(l) => {
                    forget_library(l as CUlibrary);
                    let _ = d.cuLibraryUnload(l as CUlibrary);
                }
                None => {
                    for m in fb.modules.values() {
                        let _ = d.cuModuleUnload(*m as CUmodule);
                    }
                }
            }
        }
        with_registry(|r| {
            r.loaded_functions.clear();
            r.missing_functions.clear();
        });
        // Safety: made by Box::into_raw in __cudaRegisterFatBinary, given back once.
        drop(unsafe { Box::from_raw(handle) });
    });
}

fn name_of(p: *const c_char) -> Option<CString> {
    // Safety: nvcc passes the kernel's NUL-terminated mangled name.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_owned())
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn __cudaRegisterFunction(
    handle: *mut *mut c_void,
    host_fun: *const c_char,
    _device_fun: *mut c_char,
    device_name: *const c_char,
    _thread_limit: c_int,
    _tid: *mut c_void,
    _bid: *mut c_void,
    _b_dim: *mut Dim3,
    _g_dim: *mut Dim3,
    _w_size: *mut c_int,
) {
    guarded("__cudaRegisterFunction", || {
        let Some(name) = name_of(device_name) else {
            return;
        };
        with_registry(|r| {
            r.functions.insert(
                host_fun as usize,
                Symbol {
                    fatbin: handle as usize,
                    name,
                },
            )
        });
    });
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn __cudaRegisterVar(
    handle: *mut *mut c_void,
    host_var: *mut c_char,
    _device_address: *mut c_char,
    device_name: *const c_char,
    _ext: c_int,
    _size: usize,
    _constant: c_int,
    _global: c_int,
) {
    guarded("__cudaRegisterVar", || {
        let Some(name) = name_of(device_name) else {
            return;
        };
        with_registry(|r| {
            r.variables.insert(
                host_var as usize,
                Symbol {
                    fatbin: handle as usize,
                    name,
                },
            )
        });
    });
}

/// `__managed__ T x;`: nvcc's host code reaches `x` through a pointer of its own
/// (`host_pointer`, NULL until set), after calling `__cudaInitModule` once.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn __cudaRegisterManagedVar(
    handle: *mut *mut c_void,
    host_pointer: *mut *mut c_void,
    _device_address: *mut c_char,
    device_name: *const c_char,
    _ext: c_int,
    _size: usize,
    _constant: c_int,
    _global: c_int,
) {
    guarded("__cudaRegisterManagedVar", || {
        let Some(name) = name_of(device_name) else {
            return;
        };
        if host_pointer.is_null() {
            return;
        }
        with_registry(|r| {
            r.managed.push(ManagedVar {
                fatbin: handle as usize,
                host_pointer: host_pointer as usize,
                name,
            })
        });
    });
}

/// What nvcc's host code calls before its first access to a `__managed__` variable of
/// the fatbin: the fatbin is loaded in the current device's context (as a launch would
/// load it) and each of its managed variables' pointers set to the variable's address,
/// which the host reaches directly (managed memory). 1 when done; 0 (with the reason on
/// stderr) when the module cannot be loaded, as the program then has no variable to reach.
#[no_mangle]
pub extern "C" fn __cudaInitModule(handle: *mut *mut c_void) -> c_char {
    let mut done = 0;
    guarded("__cudaInitModule", || match init_module(handle as usize) {
        Ok(()) => done = 1,
        Err(e) => eprintln!(
            "cumock: __cudaInitModule: {}: {}",
            error::name(e.code).unwrap_or("an error"),
            e.message
        ),
    });
    done
}

fn init_module(fatbin: usize) -> RtResult<()> {
    let (d, _, device) = with_context()?;
    let m = module(d, fatbin, device)?;
    let vars: Vec<(usize, CString)> = with_registry(|r| {
        r.managed
            .iter()
            .filter(|v| v.fatbin == fatbin)
            .map(|v| (v.host_pointer, v.name.clone()))
            .collect()
    });
    for (at, name) in vars {
        let (mut p, mut size) = (0, 0);
        // Safety: a NUL-terminated name.
        unsafe { d.cuModuleGetGlobal(&mut p, &mut size, m, name.as_ptr())? };
        // Safety: `at` is the address of nvcc's pointer for the variable, as
        // `__cudaRegisterManagedVariable` passed it (checked not NULL there).
        *unsafe { out_ref(at as *mut u64) }? = p;
    }
    Ok(())
}

/// Loads a registered fatbin, asking the driver for its error log, so that a failure
/// says the driver's reason (the PTX line it refused, "SASS only") rather than a bare
/// code; a driver without cuModuleLoadDataEx is asked plainly.
fn load_module(d: &Driver, image: usize) -> RtResult<CUmodule> {
    const CU_JIT_ERROR_LOG_BUFFER: i32 = 5;
    const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: i32 = 6;
    let mut m = std::ptr::null_mut();
    let mut log = vec![0u8; 4096];
    let mut options = [CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
    let mut values = [log.as_mut_ptr().cast::<c_void>(), log.len() as *mut c_void];
    // Safety: the fatbin image nvcc embedded in the program; two options with their
    // values, the log buffer as large as its size option says.
    let r = unsafe {
        d.cuModuleLoadDataEx(
            &mut m,
            image as *const c_void,
            2,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    match r {
        Ok(()) => Ok(m),
        Err(e) if e.code == error::NOT_SUPPORTED && log[0] == 0 => {
            // No reason given: a driver that does not load modules at all.
            // Safety: as above, without options.
            unsafe { d.cuModuleLoadData(&mut m, image as *const c_void) }.map_err(|e| {
                if e.code == error::NOT_SUPPORTED {
                    error::not_supported("the driver cannot load modules (cuModuleLoadData is not supported): it does not run kernels")
                } else {
                    e
                }
            })?;
            Ok(m)
        }
        Err(mut e) => {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let reason = String::from_utf8_lossy(&log[..end]);
            if !reason.trim().is_empty() {
                e.message = format!("{}: {}", e.message, reason.trim());
            }
            Err(e)
        }
    }
}

/// Links a device-linked program's objects (their fatbins, in link order) with the
/// driver's linker, as nvlink linked their cubins, and loads the result with `load` (as a
/// module or a library) while the linker still holds it: what runs where the linked SASS
/// cannot. The linker's error log becomes the message.
fn link_prelinked<T>(
    d: &Driver,
    objects: &[(usize, usize)],
    load: impl FnOnce(usize) -> RtResult<T>,
) -> RtResult<T> {
    const CU_JIT_ERROR_LOG_BUFFER: i32 = 5;
    const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: i32 = 6;
    const CU_JIT_INPUT_FATBINARY: i32 = 2;
    let mut log = vec![0u8; 4096];
    let mut options = [CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
    let mut values = [log.as_mut_ptr().cast::<c_void>(), log.len() as *mut c_void];
    let mut state = std::ptr::null_mut();
    // Safety: two options with their values, the log buffer as large as its size option
    // says and alive until cuLinkDestroy below.
    unsafe { d.cuLinkCreate(2, options.as_mut_ptr(), values.as_mut_ptr(), &mut state)? };
    let linked = (|| {
        for (i, &(at, size)) in objects.iter().enumerate() {
            let name = CString::new(format!("object {i} of the device link")).expect("no NUL");
            // Safety: a fatbin nvcc embedded in the program, `size` bytes as its header
            // declares (`fatbin_size`); a NUL-terminated name; no options.
            unsafe {
                d.cuLinkAddData(
                    state,
                    CU_JIT_INPUT_FATBINARY,
                    at as *mut c_void,
                    size,
                    name.as_ptr(),
                    0,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )?
            };
        }
        let (mut image, mut size) = (std::ptr::null_mut(), 0usize);
        // Safety: out-pointers to our locals; the image stays the linker's until
        // cuLinkDestroy, after the module is loaded from it.
        unsafe { d.cuLinkComplete(state, &mut image, &mut size)? };
        load(image as usize)
    })();
    let _ = d.cuLinkDestroy(state);
    linked.map_err(|mut e| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        let reason = String::from_utf8_lossy(&log[..end]);
        if !reason.trim().is_empty() {
            e.message = format!("{}: {}", e.message, reason.trim());
        }
        e
    })
}

/// The module of `fatbin` in `device`'s context, loaded at first use.
fn module(d: &Driver, fatbin: usize, device: i32) -> RtResult<CUmodule> {
    let (image, prelinked, loaded) = with_registry(|r| {
        r.fatbins.get(&fatbin).map(|f| {
            (
                f.image,
                f.prelinked.clone(),
                f.modules.get(&device).copied(),
            )
        })
    })
    .ok_or_else(|| {
        RtError::new(
            error::INVALID_DEVICE_FUNCTION,
            "its fatbin is not registered",
        )
    })?;
    if let Some(m) = loaded {
        return Ok(m as CUmodule);
    }
    // As NVIDIA's runtime does since CUDA 12, a fatbin is a library (a device-linked
    // program's too: `fatbin_library` links its objects where the driver cannot load
    // the linked image), and each context's module is the library's: then a
    // cudaKernel_t of it (cudaGetKernel) launches the same code over the same variables
    // as `<<<>>>`. Only a driver without libraries (cudaErrorNotSupported: no
    // cuLibraryLoadData) gets modules; any other failure is the library's, whose message
    // already says the driver's reason (and why linking the objects failed, where it
    // tried), so the image is not loaded or linked a second time.
    let m = match fatbin_library(d, fatbin) {
        Ok(l) => {
            let mut m = std::ptr::null_mut();
            d.cuLibraryGetModule(&mut m, l)?;
            m
        }
        Err(e) if e.code == error::NOT_SUPPORTED => {
            load_or_link(d, image, &prelinked, |image| load_module(d, image))?
        }
        Err(e) => return Err(e),
    };
    with_registry(|r| {
        if let Some(f) = r.fatbins.get_mut(&fatbin) {
            f.modules.insert(device, m as usize);
        }
    });
    Ok(m)
}

/// The CUfunction of a registered kernel (by its host stub) in the current context.
/// The host stub nvcc made for the kernel whose CUfunction is `f` on `device`, as
/// `function` loaded it (cudaGraphKernelNodeGetParams hands the stub back); None for a
/// function the runtime did not load.
pub fn stub_of(f: CUfunction, device: i32) -> Option<*mut c_void> {
    with_registry(|r| {
        r.loaded_functions
            .iter()
            .find(|((_, d), func)| *d == device && **func == f as usize)
            .map(|((stub, _), _)| *stub as *mut c_void)
    })
}

pub fn function(host_fun: *const c_void) -> RtResult<(&'static Driver, CUfunction)> {
    let (d, _, device) = with_context()?;
    if let Some(f) = with_registry(|r| {
        r.loaded_functions
            .get(&(host_fun as usize, device))
            .copied()
    }) {
        return Ok((d, f as CUfunction));
    }
    if with_registry(|r| r.kernels.contains_key(&(host_fun as usize))) {
        // A cudaKernel_t: its function in the current context.
        let mut f = std::ptr::null_mut();
        d.cuKernelGetFunction(&mut f, host_fun as CUkernel)?;
        return Ok((d, f));
    }
    let (fatbin, name) = with_registry(|r| {
        r.functions
            .get(&(host_fun as usize))
            .map(|s| (s.fatbin, s.name.clone()))
    })
    .ok_or_else(|| {
        RtError::new(
            error::INVALID_DEVICE_FUNCTION,
            format!("{host_fun:?} is not a registered kernel"),
        )
    })?;
    let key = (host_fun as usize, device);
    if with_registry(|r| r.missing_functions.contains(&key)) {
        // NVIDIA's runtime answers cudaErrorSymbolNotFound for the first launch of a
        // kernel whose function the driver did not find, and cudaErrorUnknown for every
        // later one (H200, runtime program texture_queries).
        return Err(RtError::new(
            error::UNKNOWN,
            format!(
                "kernel `{}`: the driver found no function for it at an earlier launch",
                name.to_string_lossy()
            ),
        ));
    }
    let m = module(d, fatbin, device)?;
    let mut f = std::ptr::null_mut();
    // Safety: a NUL-terminated name.
    if let Err(e) = unsafe { d.cuModuleGetFunction(&mut f, m, name.as_ptr()) } {
        if e.code == error::SYMBOL_NOT_FOUND {
            with_registry(|r| r.missing_functions.insert(key));
        }
        return Err(e);
    }
    with_registry(|r| {
        r.loaded_functions
            .insert((host_fun as usize, device), f as usize)
    });
    Ok((d, f))
}

/// The device address and size of a registered `__device__` variable.
pub fn symbol(host_var: *const c_void) -> RtResult<(&'static Driver, u64, usize)> {
    let (d, _, device) = with_context()?;
    let (fatbin, name) = with_registry(|r| {
        r.variables
            .get(&(host_var as usize))
            .map(|s| (s.fatbin, s.name.clone()))
    })
    .ok_or_else(|| {
        RtError::new(
            error::INVALID_SYMBOL,
            format!("{host_var:?} is not a registered device variable"),
        )
    })?;
    let m = module(d, fatbin, device)?;
    let (mut p, mut size) = (0, 0);
    // Safety: a NUL-terminated name.
    unsafe { d.cuModuleGetGlobal(&mut p, &mut size, m, name.as_ptr())? };
    Ok((d, p, size))
}

fn launch(
    func: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: CUstream,
) -> RtResult<()> {
    // NVIDIA's runtime: launching what is not a registered kernel is an invalid resource
    // handle (H200, kernel_launch).
    let (d, f) = function(func).map_err(|e| {
        if e.code == error::INVALID_DEVICE_FUNCTION {
            RtError::new(error::INVALID_RESOURCE_HANDLE, e.message)
        } else {
            e
        }
    })?;
    let shared = u32::try_from(shared)
        .map_err(|_| error::invalid(format!("{shared} bytes of shared memory")))?;
    // Safety: `args` holds one pointer per kernel parameter, as nvcc's stub built it.
    unsafe {
        d.cuLaunchKernel(
            f,
            grid.x,
            grid.y,
            grid.z,
            block.x,
            block.y,
            block.z,
            shared,
            stream,
            args,
            std::ptr::null_mut(),
        )
    }
}

cudart_fn! {
    fn cudaLaunchKernel(func: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, shared: usize, stream: CUstream) {
        launch(func, grid, block, args, shared, stream_for(stream, false))
    }
}

cudart_fn! {
    fn cudaLaunchKernel_ptsz(func: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, shared: usize, stream: CUstream) {
        launch(func, grid, block, args, shared, stream_for(stream, true))
    }
}

cudart_fn! {
    /// CUDA 13's launch path: the kernel handle is the host stub (see __cudaGetKernel).
    fn __cudaLaunchKernel(kernel: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, shared: usize, stream: CUstream) {
        launch(kernel, grid, block, args, shared, stream_for(stream, false))
    }
}

cudart_fn! {
    fn __cudaLaunchKernel_ptsz(kernel: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, shared: usize, stream: CUstream) {
        launch(kernel, grid, block, args, shared, stream_for(stream, true))
    }
}

cudart_fn! {
    /// The handle nvcc's launch code asks for once per kernel: the host stub itself,
    /// which is how the kernel is registered.
    fn __cudaGetKernel(kernel: *mut *const c_void, host_fun: *const c_void) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let kernel = unsafe { out_ref(kernel)? };
        if !with_registry(|r| r.functions.contains_key(&(host_fun as usize))) {
            return Err(RtError::new(error::INVALID_DEVICE_FUNCTION, format!("{host_fun:?} is not a registered kernel")));
        }
        *kernel = host_fun;
        Ok(())
    }
}

/// The library a registered fatbin is loaded as, loaded at first use. A device-linked
/// image the driver cannot load (the mock runs PTX, the image is SASS) is its objects'
/// own PTX linked by the driver's linker (`link_prelinked`), loaded as the library.
fn fatbin_library(d: &Driver, fatbin: usize) -> RtResult<CUlibrary> {
    if let Some(l) = with_registry(|r| r.libraries.get(&fatbin).copied()) {
        return Ok(l as CUlibrary);
    }
    let (image, prelinked) = with_registry(|r| {
        r.fatbins
            .get(&fatbin)
            .map(|f| (f.image, f.prelinked.clone()))
    })
    .ok_or_else(|| {
        RtError::new(
            error::INVALID_DEVICE_FUNCTION,
            "its fatbin is not registered",
        )
    })?;
    let l = load_or_link(d, image, &prelinked, |image| library_load(d, image))?;
    with_registry(|r| r.libraries.insert(fatbin, l as usize));
    Ok(l)
}

/// `load` of a registered fatbin's image; where the driver cannot load it because it is a
/// device-linked image, which holds the linked SASS only (the mock runs PTX), `load` of
/// the objects' relocatable PTX linked by the driver's own linker, the error saying both
/// reasons if that fails too.
fn load_or_link<T>(
    d: &Driver,
    image: usize,
    prelinked: &[(usize, usize)],
    load: impl Fn(usize) -> RtResult<T>,
) -> RtResult<T> {
    match load(image) {
        Err(e) if e.code == error::NO_KERNEL_IMAGE_FOR_DEVICE && !prelinked.is_empty() => {
            link_prelinked(d, prelinked, &load).map_err(|le| {
                RtError::new(
                    le.code,
                    format!(
                        "{}; linking the objects' own fatbins instead failed: {}",
                        e.message, le.message
                    ),
                )
            })
        }
        r => r,
    }
}

/// cuLibraryLoadData of an image, without options.
fn library_load(d: &Driver, image: usize) -> RtResult<CUlibrary> {
    let mut l = std::ptr::null_mut();
    // Safety: an image nvcc embedded in the program or the driver's linker made, alive
    // for the call; no options.
    unsafe {
        d.cuLibraryLoadData(
            &mut l,
            image as *const c_void,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        )?
    };
    Ok(l)
}

cudart_fn! {
    /// The kernel of a host stub as a cudaKernel_t (a CUkernel, usable with the driver):
    /// the kernel of that name in the library its fatbin is loaded as, whose modules the
    /// runtime's own launches use (`module`).
    fn cudaGetKernel(kernel_ptr: *mut CUkernel, entry_func_addr: *const c_void) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let out = unsafe { out_ref(kernel_ptr)? };
        let (d, _, _) = with_context()?;
        let (fatbin, name) = with_registry(|r| {
            r.functions.get(&(entry_func_addr as usize)).map(|s| (s.fatbin, s.name.clone()))
        })
        .ok_or_else(|| RtError::new(error::INVALID_DEVICE_FUNCTION, format!("{entry_func_addr:?} is not a registered kernel")))?;
        let l = fatbin_library(d, fatbin)?;
        let mut k = std::ptr::null_mut();
        // Safety: a NUL-terminated name.
        unsafe { d.cuLibraryGetKernel(&mut k, l, name.as_ptr())? };
        remember_kernel(k, l);
        *out = k;
        Ok(())
    }
}

/// `cudaLaunchConfig_t`.
#[repr(C)]
#[derive(Debug)]
pub struct LaunchConfig {
    grid: Dim3,
    block: Dim3,
    pub dynamic_smem_bytes: usize,
    stream: CUstream,
    attrs: *mut c_void,
    pub num_attrs: c_uint,
}

/// The driver's CUlaunchConfig for a cudaLaunchConfig_t: cudaLaunchAttribute is laid out
/// as the driver's CUlaunchAttribute (ids and values alike), so the driver reads them.
fn driver_config(c: &LaunchConfig, per_thread: bool) -> RtResult<cumock_abi::LaunchConfig> {
    let shared = u32::try_from(c.dynamic_smem_bytes)
        .map_err(|_| error::invalid(format!("{} bytes of shared memory", c.dynamic_smem_bytes)))?;
    Ok(cumock_abi::LaunchConfig {
        grid: [c.grid.x, c.grid.y, c.grid.z],
        block: [c.block.x, c.block.y, c.block.z],
        shared,
        stream: stream_for(c.stream, per_thread).cast(),
        attrs: c.attrs.cast(),
        num_attrs: c.num_attrs,
    })
}

fn launch_ex(
    config: *const LaunchConfig,
    func: *const c_void,
    args: *mut *mut c_void,
    per_thread: bool,
) -> RtResult<()> {
    // Safety: NULL or the program's config.
    let c = unsafe { config.as_ref() }.ok_or_else(|| error::invalid("config is NULL"))?;
    if c.num_attrs != 0 {
        let (d, f) = function(func)?;
        let driver_config = driver_config(c, per_thread)?;
        // Safety: a CUlaunchConfig laid out as cuda.h's, alive for the call; `args` holds
        // one pointer per kernel parameter, as the program built it.
        return unsafe {
            d.cuLaunchKernelEx(
                (&raw const driver_config).cast(),
                f,
                args,
                std::ptr::null_mut(),
            )
        };
    }
    launch(
        func,
        c.grid,
        c.block,
        args,
        c.dynamic_smem_bytes,
        stream_for(c.stream, per_thread),
    )
}

cudart_fn! {
    fn cudaOccupancyMaxActiveClusters(num_clusters: *mut c_int, func: *const c_void, config: *const LaunchConfig) {
        // Safety: the program's out-pointer (NULL refused) and config (NULL refused).
        let out = unsafe { out_ref(num_clusters)? };
        let c = unsafe { config.as_ref() }.ok_or_else(|| error::invalid("config is NULL"))?;
        let (d, f) = function(func)?;
        let dc = driver_config(c, false)?;
        // Safety: a CUlaunchConfig laid out as cuda.h's, alive for the call.
        unsafe { d.cuOccupancyMaxActiveClusters(out, f, (&raw const dc).cast()) }
    }
}

cudart_fn! {
    fn cudaOccupancyMaxPotentialClusterSize(cluster_size: *mut c_int, func: *const c_void, config: *const LaunchConfig) {
        // Safety: as cudaOccupancyMaxActiveClusters.
        let out = unsafe { out_ref(cluster_size)? };
        let c = unsafe { config.as_ref() }.ok_or_else(|| error::invalid("config is NULL"))?;
        let (d, f) = function(func)?;
        let dc = driver_config(c, false)?;
        // Safety: as above.
        unsafe { d.cuOccupancyMaxPotentialClusterSize(out, f, (&raw const dc).cast()) }
    }
}

cudart_fn! {
    fn cudaLaunchKernelExC(config: *const LaunchConfig, func: *const c_void, args: *mut *mut c_void) {
        launch_ex(config, func, args, false)
    }
}

cudart_fn! {
    fn cudaLaunchKernelExC_ptsz(config: *const LaunchConfig, func: *const c_void, args: *mut *mut c_void) {
        launch_ex(config, func, args, true)
    }
}

// ---- the call configuration of <<<...>>> -----------------------------------------------

#[derive(Debug, Clone, Copy)]
struct CallConfiguration {
    grid: Dim3,
    block: Dim3,
    shared: usize,
    stream: CUstream,
}

thread_local! {
    static CONFIGURATIONS: RefCell<Vec<CallConfiguration>> = const { RefCell::new(Vec::new()) };
}

/// `<<<grid, block, shared, stream>>>` pushes; the kernel's host stub pops.
#[no_mangle]
pub extern "C" fn __cudaPushCallConfiguration(
    grid: Dim3,
    block: Dim3,
    shared: usize,
    stream: CUstream,
) -> c_uint {
    let pushed = CONFIGURATIONS.try_with(|c| {
        c.borrow_mut().push(CallConfiguration {
            grid,
            block,
            shared,
            stream,
        })
    });
    c_uint::from(pushed.is_err())
}

cudart_fn! {
    fn __cudaPopCallConfiguration(grid: *mut Dim3, block: *mut Dim3, shared: *mut usize, stream: *mut c_void) {
        let c = CONFIGURATIONS
            .try_with(|c| c.borrow_mut().pop())
            .ok()
            .flatten()
            .ok_or_else(|| error::invalid("no call configuration was pushed"))?;
        // Safety: nvcc's stub passes four locals of these types.
        unsafe {
            *out_ref(grid)? = c.grid;
            *out_ref(block)? = c.block;
            *out_ref(shared)? = c.shared;
            *out_ref(stream as *mut CUstream)? = c.stream;
        }
        Ok(())
    }
}

// ---- functions and symbols ------------------------------------------------------------

/// `struct cudaFuncAttributes`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct CudaFuncAttributes {
    pub shared_size_bytes: usize,
    pub const_size_bytes: usize,
    pub local_size_bytes: usize,
    pub max_threads_per_block: c_int,
    pub num_regs: c_int,
    pub ptx_version: c_int,
    pub binary_version: c_int,
    pub cache_mode_ca: c_int,
    pub max_dynamic_shared_size_bytes: c_int,
    pub preferred_shmem_carveout: c_int,
    pub cluster_dim_must_be_set: c_int,
    pub required_cluster_width: c_int,
    pub required_cluster_height: c_int,
    pub required_cluster_depth: c_int,
    pub cluster_scheduling_policy_preference: c_int,
    pub non_portable_cluster_size_allowed: c_int,
    pub reserved: [c_int; 16],
}

cudart_fn! {
    fn cudaFuncGetAttributes(attr: *mut CudaFuncAttributes, func: *const c_void) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let attr = unsafe { out_ref(attr)? };
        let (d, f) = function(func)?;
        // CUfunction_attribute values, in cudaFuncAttributes' order.
        let mut v = [0i32; 16];
        for (i, slot) in v.iter_mut().enumerate() {
            d.cuFuncGetAttribute(slot, i as i32, f)?;
        }
        *attr = CudaFuncAttributes {
            max_threads_per_block: v[0],
            shared_size_bytes: v[1] as usize,
            const_size_bytes: v[2] as usize,
            local_size_bytes: v[3] as usize,
            num_regs: v[4],
            ptx_version: v[5],
            binary_version: v[6],
            cache_mode_ca: v[7],
            max_dynamic_shared_size_bytes: v[8],
            preferred_shmem_carveout: v[9],
            cluster_dim_must_be_set: v[10],
            required_cluster_width: v[11],
            required_cluster_height: v[12],
            required_cluster_depth: v[13],
            non_portable_cluster_size_allowed: v[14],
            cluster_scheduling_policy_preference: v[15],
            reserved: [0; 16],
        };
        Ok(())
    }
}

cudart_fn! {
    fn cudaFuncSetAttribute(func: *const c_void, attr: c_int, value: c_int) {
        let (d, f) = function(func)?;
        // cudaFuncAttribute's values are CUfunction_attribute's.
        d.cuFuncSetAttribute(f, attr, value)
    }
}

cudart_fn! {
    /// The kernel's name as its module names it (cuFuncGetName): mangled unless it has C
    /// linkage. A pointer that is no registered kernel is refused
    /// (cudaErrorInvalidDeviceFunction), as the other cudaFunc* calls refuse it: this
    /// runtime hands out no cudaKernel_t that it could be instead.
    fn cudaFuncGetName(name: *mut *const c_char, func: *const c_void) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let name = unsafe { out_ref(name)? };
        let (d, f) = function(func)?;
        d.cuFuncGetName(name, f)
    }
}

cudart_fn! {
    fn cudaGetFuncBySymbol(function_ptr: *mut CUfunction, symbol_ptr: *const c_void) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let out = unsafe { out_ref(function_ptr)? };
        *out = function(symbol_ptr)?.1;
        Ok(())
    }
}

fn occupancy(
    num_blocks: *mut c_int,
    func: *const c_void,
    block_size: c_int,
    dynamic_smem: usize,
    flags: c_uint,
) -> RtResult<()> {
    // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
    let num_blocks = unsafe { out_ref(num_blocks)? };
    let (d, f) = function(func)?;
    // cudaOccupancy flags are CU_OCCUPANCY flags (default 0, disable caching override 1).
    d.cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        num_blocks,
        f,
        block_size,
        dynamic_smem,
        flags,
    )
}

cudart_fn! {
    fn cudaOccupancyMaxActiveBlocksPerMultiprocessor(num_blocks: *mut c_int, func: *const c_void, block_size: c_int, dynamic_smem: usize) {
        occupancy(num_blocks, func, block_size, dynamic_smem, 0)
    }
}

cudart_fn! {
    /// What cuda_runtime.h's cudaOccupancyMaxActiveBlocksPerMultiprocessor template calls.
    fn cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(num_blocks: *mut c_int, func: *const c_void, block_size: c_int, dynamic_smem: usize, flags: c_uint) {
        occupancy(num_blocks, func, block_size, dynamic_smem, flags)
    }
}

cudart_fn! {
    fn cudaGetSymbolAddress(dev_ptr: *mut *mut c_void, symbol: *const c_void) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let dev_ptr = unsafe { out_ref(dev_ptr)? };
        *dev_ptr = self::symbol(symbol)?.1 as *mut c_void;
        Ok(())
    }
}

cudart_fn! {
    fn cudaGetSymbolSize(size: *mut usize, symbol: *const c_void) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let size = unsafe { out_ref(size)? };
        *size = self::symbol(symbol)?.2;
        Ok(())
    }
}

/// A copy to or from a device variable: checked against its size, then an ordinary copy.
fn symbol_copy(
    to_symbol: bool,
    sym: *const c_void,
    host: *mut c_void,
    count: usize,
    offset: usize,
    kind: c_int,
    stream: Option<CUstream>,
) -> RtResult<()> {
    let dev = symbol_bytes(to_symbol, sym, count, offset, kind)?;
    let (dst, src) = if to_symbol {
        (dev, host as *const c_void)
    } else {
        (host, dev as *const c_void)
    };
    crate::memory::memcpy(dst, src, count, kind, stream)
}

/// The device address of `count` bytes at `offset` in the symbol, checked as
/// cudaMemcpyToSymbol (`to_symbol`) or cudaMemcpyFromSymbol checks them and their
/// direction; graph copy nodes to and from symbols use it too.
pub(crate) fn symbol_bytes(
    to_symbol: bool,
    sym: *const c_void,
    count: usize,
    offset: usize,
    kind: c_int,
) -> RtResult<*mut c_void> {
    let (_, addr, size) = symbol(sym)?;
    if offset.checked_add(count).is_none_or(|end| end > size) {
        return Err(error::invalid(format!(
            "{count} bytes at offset {offset} do not fit the {size}-byte symbol"
        )));
    }
    // cudaMemcpyToSymbol takes HostToDevice (1), DeviceToDevice (3) or Default (4);
    // FromSymbol DeviceToHost (2), DeviceToDevice or Default.
    let allowed = if to_symbol { [1, 3, 4] } else { [2, 3, 4] };
    if !allowed.contains(&kind) {
        return Err(RtError::new(
            error::INVALID_MEMCPY_DIRECTION,
            format!("{kind} is not a direction for this symbol copy"),
        ));
    }
    Ok((addr + offset as u64) as *mut c_void)
}

cudart_fn! {
    fn cudaMemcpyToSymbol(symbol: *const c_void, src: *const c_void, count: usize, offset: usize, kind: c_int) {
        symbol_copy(true, symbol, src as *mut c_void, count, offset, kind, None)
    }
}

cudart_fn! {
    fn cudaMemcpyToSymbol_ptds(symbol: *const c_void, src: *const c_void, count: usize, offset: usize, kind: c_int) {
        crate::memory::on_per_thread_stream(|s| symbol_copy(true, symbol, src as *mut c_void, count, offset, kind, s))
    }
}

cudart_fn! {
    fn cudaMemcpyFromSymbol(dst: *mut c_void, symbol: *const c_void, count: usize, offset: usize, kind: c_int) {
        symbol_copy(false, symbol, dst, count, offset, kind, None)
    }
}

cudart_fn! {
    fn cudaMemcpyFromSymbol_ptds(dst: *mut c_void, symbol: *const c_void, count: usize, offset: usize, kind: c_int) {
        crate::memory::on_per_thread_stream(|s| symbol_copy(false, symbol, dst, count, offset, kind, s))
    }
}

cudart_fn! {
    fn cudaMemcpyToSymbolAsync(symbol: *const c_void, src: *const c_void, count: usize, offset: usize, kind: c_int, stream: CUstream) {
        symbol_copy(true, symbol, src as *mut c_void, count, offset, kind, Some(stream_for(stream, false)))
    }
}

cudart_fn! {
    fn cudaMemcpyFromSymbolAsync(dst: *mut c_void, symbol: *const c_void, count: usize, offset: usize, kind: c_int, stream: CUstream) {
        symbol_copy(false, symbol, dst, count, offset, kind, Some(stream_for(stream, false)))
    }
}

cudart_fn! {
    fn cudaMemcpyToSymbolAsync_ptsz(symbol: *const c_void, src: *const c_void, count: usize, offset: usize, kind: c_int, stream: CUstream) {
        symbol_copy(true, symbol, src as *mut c_void, count, offset, kind, Some(stream_for(stream, true)))
    }
}

cudart_fn! {
    fn cudaMemcpyFromSymbolAsync_ptsz(dst: *mut c_void, symbol: *const c_void, count: usize, offset: usize, kind: c_int, stream: CUstream) {
        symbol_copy(false, symbol, dst, count, offset, kind, Some(stream_for(stream, true)))
    }
}

/// cudaDeviceReset: the device's modules went with its context; they are loaded again at
/// the next use.
pub fn forget_device(device: i32) {
    with_registry(|r| {
        for f in r.fatbins.values_mut() {
            f.modules.remove(&device);
        }
        r.loaded_functions.retain(|(_, d), _| *d != device);
        r.missing_functions.retain(|(_, d)| *d != device);
    });
}

cudart_fn! {
    fn cudaFuncSetCacheConfig(func: *const c_void, config: c_int) {
        let (d, f) = function(func)?;
        d.cuFuncSetCacheConfig(f, config)
    }
}

cudart_fn! {
    fn cudaFuncGetParamInfo(func: *const c_void, param_index: usize, param_offset: *mut usize, param_size: *mut usize) {
        let (d, f) = function(func)?;
        // Safety: the program's out-pointers, which the driver checks (the offset NULL:
        // refused; the size NULL: not written).
        unsafe { d.cuFuncGetParamInfo(f, param_index, param_offset, param_size) }
    }
}

cudart_fn! {
    fn cudaOccupancyAvailableDynamicSMemPerBlock(dynamic_smem: *mut usize, func: *const c_void, num_blocks: c_int, block_size: c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let dynamic_smem = unsafe { out_ref(dynamic_smem)? };
        let (d, f) = function(func)?;
        d.cuOccupancyAvailableDynamicSMemPerBlock(dynamic_smem, f, num_blocks, block_size)
    }
}

cudart_fn! {
    /// Deprecated; cudaSharedMemConfig's values are CUsharedconfig's.
    fn cudaFuncSetSharedMemConfig(func: *const c_void, config: c_int) {
        let (d, f) = function(func)?;
        d.cuFuncSetSharedMemConfig(f, config)
    }
}

fn launch_cooperative(
    func: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: CUstream,
) -> RtResult<()> {
    let (d, f) = function(func)?;
    let shared = u32::try_from(shared)
        .map_err(|_| error::invalid(format!("{shared} bytes of shared memory")))?;
    // Safety: `args` holds one pointer per kernel parameter, as the program built it.
    unsafe {
        d.cuLaunchCooperativeKernel(
            f, grid.x, grid.y, grid.z, block.x, block.y, block.z, shared, stream, args,
        )
    }
}

cudart_fn! {
    fn cudaLaunchCooperativeKernel(func: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, shared: usize, stream: CUstream) {
        launch_cooperative(func, grid, block, args, shared, stream_for(stream, false))
    }
}

cudart_fn! {
    fn cudaLaunchCooperativeKernel_ptsz(func: *const c_void, grid: Dim3, block: Dim3, args: *mut *mut c_void, shared: usize, stream: CUstream) {
        launch_cooperative(func, grid, block, args, shared, stream_for(stream, true))
    }
}
