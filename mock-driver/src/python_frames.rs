//! Python call sites: when the program is a Python interpreter, where in its `.py` files a
//! call into the mock came from (file, line, function), for leak and misuse reports; the
//! native stack of such a program shows only `_PyEval_EvalFrameDefault` and the bindings'
//! shared objects.
//!
//! The interpreter's C API is looked up in the process (`dlsym`, through libloading), never linked: a program
//! without Python pays one failed lookup, once. Bindings call the driver with the GIL
//! released (cuda-bindings' `with nogil`), so reading the frames takes it back
//! (`PyGILState_Ensure`), as a ctypes callback would. That is safe only where the mock
//! holds none of its own locks (a thread holding the GIL may be waiting for one of them):
//! leak origins and misuse messages are noted at the boundary, after the model's call;
//! ordering reports, noted under the tracker's lock, use [`frames_if_gil_held`].

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

type PyObject = c_void;

/// The functions of CPython's C API the frames need (all in the stable ABI since 3.9,
/// `PyEval_GetFrame` since long before).
struct Api {
    is_initialized: unsafe extern "C" fn() -> c_int,
    gil_check: unsafe extern "C" fn() -> c_int,
    gil_ensure: unsafe extern "C" fn() -> c_int,
    gil_release: unsafe extern "C" fn(c_int),
    get_frame: unsafe extern "C" fn() -> *mut PyObject,
    frame_code: unsafe extern "C" fn(*mut PyObject) -> *mut PyObject,
    frame_line: unsafe extern "C" fn(*mut PyObject) -> c_int,
    frame_back: unsafe extern "C" fn(*mut PyObject) -> *mut PyObject,
    getattr: unsafe extern "C" fn(*mut PyObject, *const c_char) -> *mut PyObject,
    as_utf8: unsafe extern "C" fn(*mut PyObject) -> *const c_char,
    decref: unsafe extern "C" fn(*mut PyObject),
    err_clear: unsafe extern "C" fn(),
    /// `Py_IsFinalizing` (3.13) or `_Py_IsFinalizing`: frames are not read while the
    /// interpreter shuts down (the leak report runs at exit).
    is_finalizing: Option<unsafe extern "C" fn() -> c_int>,
}

fn api() -> Option<&'static Api> {
    static API: OnceLock<Option<Api>> = OnceLock::new();
    API.get_or_init(|| {
        // The program and the libraries loaded with it: where a Python interpreter's
        // symbols are, if it runs this process. The handle needs no closing.
        let this = libloading::os::unix::Library::this();
        macro_rules! f {
            ($name:literal) => {
                // Safety: the symbol is CPython's function of that name, whose C
                // signature is the field's type (Python's headers).
                *unsafe { this.get($name) }.ok()?
            };
        }
        Some(Api {
            is_initialized: f!(b"Py_IsInitialized\0"),
            gil_check: f!(b"PyGILState_Check\0"),
            gil_ensure: f!(b"PyGILState_Ensure\0"),
            gil_release: f!(b"PyGILState_Release\0"),
            get_frame: f!(b"PyEval_GetFrame\0"),
            frame_code: f!(b"PyFrame_GetCode\0"),
            frame_line: f!(b"PyFrame_GetLineNumber\0"),
            frame_back: f!(b"PyFrame_GetBack\0"),
            getattr: f!(b"PyObject_GetAttrString\0"),
            as_utf8: f!(b"PyUnicode_AsUTF8\0"),
            decref: f!(b"Py_DecRef\0"),
            err_clear: f!(b"PyErr_Clear\0"),
            // Safety: as above: `int (void)`.
            is_finalizing: unsafe {
                this.get::<unsafe extern "C" fn() -> c_int>(b"Py_IsFinalizing\0")
                    .or_else(|_| this.get(b"_Py_IsFinalizing\0"))
            }
            .ok()
            .map(|s| *s),
        })
    })
    .as_ref()
}

/// The most Python frames kept for one call site.
const MAX_FRAMES: usize = 12;

/// The Python stack of the calling thread, innermost first, as `function (file:line)`;
/// empty when the process runs no Python. Takes the GIL if the thread released it: call
/// only where the mock holds no lock of its own.
pub fn frames() -> Vec<String> {
    read(true)
}

/// As [`frames`], but only if the thread holds the GIL already (nothing when it does
/// not): for call sites noted under a lock of the mock's.
pub fn frames_if_gil_held() -> Vec<String> {
    read(false)
}

fn read(may_take_gil: bool) -> Vec<String> {
    let Some(api) = api() else {
        return Vec::new();
    };
    // Safety: CPython's functions, called as its documentation allows: the status
    // queries at any time, the rest while this thread holds the GIL (held already, or
    // taken by PyGILState_Ensure and given back below); every new reference is released.
    unsafe {
        if (api.is_initialized)() == 0 || api.is_finalizing.is_some_and(|f| f() != 0) {
            return Vec::new();
        }
        let held = (api.gil_check)() != 0;
        if !held && !may_take_gil {
            return Vec::new();
        }
        let state = (!held).then(|| (api.gil_ensure)());
        let mut out = Vec::new();
        // Borrowed: not released.
        let mut frame = (api.get_frame)();
        let mut owned = false;
        while !frame.is_null() && out.len() < MAX_FRAMES {
            let code = (api.frame_code)(frame);
            if !code.is_null() {
                let text = |attr: &CStr| -> String {
                    let v = (api.getattr)(code, attr.as_ptr());
                    if v.is_null() {
                        (api.err_clear)();
                        return "?".into();
                    }
                    let s = (api.as_utf8)(v);
                    let t = if s.is_null() {
                        (api.err_clear)();
                        "?".into()
                    } else {
                        CStr::from_ptr(s).to_string_lossy().into_owned()
                    };
                    (api.decref)(v);
                    t
                };
                let name = text(c"co_name");
                let file = text(c"co_filename");
                let line = (api.frame_line)(frame);
                out.push(format!("{name} ({file}:{line})"));
                (api.decref)(code);
            }
            let back = (api.frame_back)(frame);
            if owned {
                (api.decref)(frame);
            }
            frame = back;
            owned = true;
        }
        if owned && !frame.is_null() {
            (api.decref)(frame);
        }
        if let Some(s) = state {
            (api.gil_release)(s);
        }
        out
    }
}
