//! The C boundary's machinery: one macro (`export_all`, expanded from the declaration)
//! defines every exported function; `call` catches panics and turns the model's errors
//! into result codes and diagnostics. No export names its own fallback, so none can
//! forget it.

use crate::model::error::{CuError, CuResult, Severity};
use crate::model::ids::{ContextId, DevicePtr, EventId, StreamId};
use crate::model::{driver, Driver};
use cumock_abi::result::*;
use cumock_abi::{
    CUcontext, CUevent, CUfunction, CUkernel, CUlibrary, CUmemoryPool, CUmodule, CUresult, CUstream,
};
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

/// Expanded by `cumock_abi::for_each_export!`: the C export of every function of the
/// driver, each a call of `Mock`'s method of that name in its group's trait
/// (`VirtualMemoryApi::cuMemMap`: emulated in `exports/vmm.rs`, or the trait's
/// not-emulated default) through `call`. The exports the headers do not declare (the
/// debugger's cudbg* symbols) take no arguments: under the C calling convention a callee
/// may ignore what it is passed.
macro_rules! export_all {
    (
        declared { $( $name:ident ( $( $arg:ident : $ty:ty | $erased:ty ),* ) in $group:ident; )* }
        undeclared { $( $undeclared:ident, )* }
    ) => {
        $(
            #[no_mangle]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> cumock_abi::CUresult {
                $crate::boundary::call(
                    stringify!($name),
                    &[$((stringify!($arg), &$arg as &dyn std::fmt::Debug)),*],
                    // Safety: the program's arguments, as cuda.h declares them.
                    || unsafe { <$crate::exports::Mock as cumock_abi::$group>::$name($($arg),*) },
                )
            }
        )*
        $(
            #[no_mangle]
            pub extern "C" fn $undeclared() -> cumock_abi::CUresult {
                $crate::boundary::call(stringify!($undeclared), &[], || {
                    <$crate::exports::Mock as cumock_abi::ApiOutcome>::not_emulated(stringify!($undeclared))
                })
            }
        )*
    };
}
pub(crate) use export_all;

/// Runs an export's body: a panic becomes CUDA_ERROR_UNKNOWN and a message, never an
/// abort of the host program. Every export is one call here: exports that share work
/// (a `_ptsz` variant and its base) call each other's `DriverApi` methods in Rust, so each
/// C call the program makes is reported, traced and counted once, with its own name and
/// the inner error's message.
pub fn call(
    name: &'static str,
    args: &[(&str, &dyn std::fmt::Debug)],
    body: impl FnOnce() -> CuResult<()>,
) -> CUresult {
    // The calling thread is the mock's while it runs the call (its faults on the load
    // trap's pages are not the program's loads), and first hands the loads the trap
    // noted since its last call to the ordering-bug model.
    let _mine = crate::diagnostics::misuse_enabled()
        .then(|| {
            for (addr, pc) in crate::host_trap::drain() {
                crate::model::ordering::host_loaded(addr, pc);
            }
            crate::host_trap::mock_thread()
        })
        .flatten();
    let watching = crate::diagnostics::watching_calls();
    if watching {
        if let Some(code) = crate::diagnostics::injected_fault(name) {
            crate::diagnostics::after_call(name, code, args);
            return code;
        }
    }
    let code = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => CUDA_SUCCESS,
        Ok(Err(e)) => {
            report(name, &e);
            e.code
        }
        Err(panic) => {
            let what = cumock_support::panic::panic_message(&*panic);
            eprintln!("cumock: internal error in {name}: {what} (please report this)");
            CUDA_ERROR_UNKNOWN
        }
    };
    if watching {
        crate::diagnostics::after_call(name, code, args);
    }
    code
}

fn report(name: &'static str, e: &CuError) {
    let show = match e.severity {
        Severity::WouldCrash | Severity::HostLimit => true,
        Severity::Misuse => crate::diagnostics::misuse_enabled(),
        Severity::Said => false,
        // Not the program's mistake: said once per export.
        Severity::NotEmulated => {
            say_not_emulated(name);
            return;
        }
    };
    if show && !e.message.is_empty() {
        let code = cumock_abi::result_name(e.code).unwrap_or("?");
        eprintln!("cumock: {name}: {code}: {}", e.message);
    }
    if e.severity == Severity::WouldCrash || crate::diagnostics::misuse_enabled() {
        crate::diagnostics::note_misuse(name, e);
    }
}

/// Says once per export, on stderr, that the program called one the mock does not
/// emulate. Said here, with the name of the export the program called, rather than where
/// the error is made: an export the mock does not write may run another by default (an
/// older version its newest, a `_ptsz` one its plain one), and the program called this
/// one.
fn say_not_emulated(name: &'static str) {
    static SAID: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let first = SAID
        .lock()
        .map(|mut s| s.get_or_insert_with(HashSet::new).insert(name))
        .unwrap_or(true);
    if first {
        eprintln!("cumock: {name} is not emulated; it returns CUDA_ERROR_NOT_SUPPORTED");
    }
}

/// The error of a function the mock does not emulate: CUDA_ERROR_NOT_SUPPORTED, said
/// once per export by `report`.
pub fn not_emulated() -> CuError {
    CuError {
        code: CUDA_ERROR_NOT_SUPPORTED,
        message: "".into(),
        severity: Severity::NotEmulated,
    }
}

/// The driver, after cuInit.
pub fn drv() -> CuResult<&'static Driver> {
    let d = drv_any()?;
    d.require_init()?;
    Ok(d)
}

/// The driver, whether or not cuInit was called.
pub fn drv_any() -> CuResult<&'static Driver> {
    driver().map_err(|why| CuError::new(CUDA_ERROR_NO_DEVICE, format!("no usable profile: {why}")))
}

/// Writes an out-parameter; NULL is CUDA_ERROR_INVALID_VALUE.
///
/// # Safety
/// `p` is NULL or points to writable memory for a `T`, as cuda.h requires of callers.
pub unsafe fn out<T>(p: *mut T, value: T) -> CuResult<()> {
    if p.is_null() {
        return Err(crate::model::error::invalid("an output pointer is NULL"));
    }
    // Safety: non-null, and the caller's contract above.
    unsafe { p.write_unaligned(value) };
    Ok(())
}

/// Reads an in-parameter struct; NULL is CUDA_ERROR_INVALID_VALUE.
///
/// # Safety
/// `p` is NULL or points to a readable `T`, as cuda.h requires of callers.
pub unsafe fn input<T: Copy>(p: *const T, what: &str) -> CuResult<T> {
    if p.is_null() {
        return Err(crate::model::error::invalid(format!("{what} is NULL")));
    }
    // Safety: non-null, and the caller's contract above.
    Ok(unsafe { p.read_unaligned() })
}

// Handles the mock gives out are the model's keys, as pointers: the C types keep a
// context, a stream and an event apart (each points to its own struct of the driver's),
// and these are the only places that turn one into a key and back.

/// The model's view of a device address the program passes.
pub fn device_ptr(p: cumock_abi::CUdeviceptr) -> DevicePtr {
    DevicePtr::new(p)
}

/// The model's key of a context; NULL (the current context, where the call allows it)
/// is None.
pub fn ctx_key(ctx: CUcontext) -> Option<ContextId> {
    (!ctx.is_null()).then_some(ContextId::from_handle(ctx as u64))
}

/// The context handle a program receives for a model key.
pub fn ctx_handle(key: ContextId) -> CUcontext {
    key.handle() as CUcontext
}

/// The model's key of a stream: NULL, the legacy default stream, is 0.
pub fn stream_key(stream: CUstream) -> StreamId {
    StreamId::from_handle(stream as u64)
}

/// The stream handle a program receives for a model key.
pub fn stream_handle(key: StreamId) -> CUstream {
    key.handle() as CUstream
}

/// The model's key of a module, function, library or kernel (cuda.h's handle types).
pub fn module_key(m: CUmodule) -> u64 {
    m as u64
}

pub fn module_handle(key: u64) -> CUmodule {
    key as CUmodule
}

pub fn function_key(f: CUfunction) -> u64 {
    f as u64
}

pub fn function_handle(key: u64) -> CUfunction {
    key as CUfunction
}

pub fn library_key(l: CUlibrary) -> u64 {
    l as u64
}

pub fn library_handle(key: u64) -> CUlibrary {
    key as CUlibrary
}

pub fn kernel_key(k: CUkernel) -> u64 {
    k as u64
}

pub fn kernel_handle(key: u64) -> CUkernel {
    key as CUkernel
}

/// The model's key of an event.
pub fn event_key(event: CUevent) -> EventId {
    EventId::from_handle(event as u64)
}

/// The event handle a program receives for a model key.
pub fn event_handle(key: EventId) -> CUevent {
    key.handle() as CUevent
}

/// The model's key of a memory pool: NULL is 0.
pub fn pool_key(pool: CUmemoryPool) -> u64 {
    pool as u64
}

/// The pool handle a program receives for a model key.
pub fn pool_handle(key: u64) -> CUmemoryPool {
    key as CUmemoryPool
}
