//! The C boundary's machinery: one macro defines every exported runtime function, catches
//! panics, keeps the thread's last error, and traces. No call site names its own fallback.

use crate::error::{self, CudaError, RtError, RtResult};
use std::cell::Cell;
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

/// Defines an exported runtime function returning `cudaError_t`, whose body is an
/// `RtResult<()>`.
macro_rules! cudart_fn {
    ($(#[$meta:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$meta])*
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $crate::error::CudaError {
            $crate::boundary::call(
                stringify!($name),
                &[$((stringify!($arg), &$arg as &dyn $crate::diagnostics::RuntimeArg)),*],
                || -> $crate::error::RtResult<()> { $body },
            )
        }
    };
}
pub(crate) use cudart_fn;

/// Defines the exports this runtime does not implement: each returns
/// cudaErrorNotSupported and says once, on stderr, which function was called. Arguments
/// are not declared: under the C calling convention a callee may ignore them. (Every
/// export that returns something other than `cudaError_t` is implemented.)
macro_rules! not_implemented {
    ($($name:ident),* $(,)?) => {
        $(
            #[no_mangle]
            pub extern "C" fn $name() -> $crate::error::CudaError {
                $crate::boundary::report_not_implemented(stringify!($name))
            }
        )*
        /// Every name `not_implemented!` exports, for the tests.
        #[allow(dead_code)]
        pub const NOT_IMPLEMENTED: &[&str] = &[$(stringify!($name)),*];
    };
}
pub(crate) use not_implemented;

thread_local! {
    /// cudaGetLastError's value for this thread.
    static LAST_ERROR: Cell<CudaError> = const { Cell::new(0) };
    /// Nesting of exports (one calling another): only the outermost is traced.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Runs an export's body: a panic becomes cudaErrorUnknown and a message, never an abort
/// of the host program.
pub fn call(
    name: &'static str,
    args: &[(&str, &dyn crate::diagnostics::RuntimeArg)],
    body: impl FnOnce() -> RtResult<()>,
) -> CudaError {
    let depth = DEPTH
        .try_with(|d| {
            d.set(d.get() + 1);
            d.get()
        })
        .unwrap_or(1);
    let outer = depth == 1;
    let injected = if outer {
        crate::diagnostics::injected_fault(name)
    } else {
        None
    };
    let code = match injected {
        Some(code) => code,
        None => match catch_unwind(AssertUnwindSafe(body)) {
            Ok(Ok(())) => error::SUCCESS,
            Ok(Err(e)) => {
                if outer {
                    report(name, &e);
                }
                e.code
            }
            Err(panic) => {
                let what = cumock_support::panic::panic_message(&*panic);
                eprintln!("cumock: internal error in {name}: {what} (please report this)");
                error::UNKNOWN
            }
        },
    };
    let _ = DEPTH.try_with(|d| d.set(d.get().saturating_sub(1)));
    if outer {
        finish(name, code, args);
    }
    code
}

/// What every outermost call does with its result: the thread's last error (a call that
/// is only "not ready" does not set it), the sticky state, the trace line.
fn finish(name: &str, code: CudaError, args: &[(&str, &dyn crate::diagnostics::RuntimeArg)]) {
    if code != error::SUCCESS && code != error::NOT_READY {
        set_last_error(code);
    }
    if error::is_sticky(code) {
        crate::runtime::note_sticky(code);
    }
    crate::diagnostics::trace(name, code, args);
}

fn report(name: &str, e: &RtError) {
    if e.message.is_empty() {
        return;
    }
    // Not-supported answers are said once per function (a program may poll one); other
    // errors are the program's business unless it asked for misuse messages.
    let show = if e.code == error::NOT_SUPPORTED {
        first_time(name)
    } else {
        crate::diagnostics::misuse_enabled()
    };
    if show {
        let code = error::name(e.code).unwrap_or("?");
        eprintln!("cumock: {name}: {code}: {}", e.message);
    }
}

fn first_time(name: &str) -> bool {
    static SAID: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    SAID.lock()
        .map(|mut s| s.get_or_insert_with(HashSet::new).insert(name.to_owned()))
        .unwrap_or(true)
}

pub fn report_not_implemented(name: &'static str) -> CudaError {
    if first_time(name) {
        eprintln!("cumock: {name} is not implemented by cumock's runtime; it returns cudaErrorNotSupported");
    }
    finish(name, error::NOT_SUPPORTED, &[]);
    error::NOT_SUPPORTED
}

pub fn set_last_error(code: CudaError) {
    let _ = LAST_ERROR.try_with(|e| e.set(code));
}

pub fn peek_last_error() -> CudaError {
    LAST_ERROR.try_with(|e| e.get()).unwrap_or(error::SUCCESS)
}

pub fn take_last_error() -> CudaError {
    LAST_ERROR
        .try_with(|e| e.replace(error::SUCCESS))
        .unwrap_or(error::SUCCESS)
}

/// Writes an out-parameter; NULL is cudaErrorInvalidValue.
///
/// # Safety
/// `p` is NULL or points to writable memory for a `T`, as the runtime header requires.
pub unsafe fn out<T>(p: *mut T, value: T) -> RtResult<()> {
    if p.is_null() {
        return Err(error::invalid("an output pointer is NULL"));
    }
    // Safety: not NULL, and the caller's contract says it is writable.
    unsafe { p.write(value) };
    Ok(())
}

/// Turns a nullable out-pointer into a reference.
///
/// # Safety
/// As for `out`.
pub unsafe fn out_ref<'a, T>(p: *mut T) -> RtResult<&'a mut T> {
    // Safety: the caller's contract.
    unsafe { p.as_mut() }.ok_or_else(|| error::invalid("an output pointer is NULL"))
}
