//! The C boundary's machinery: one macro (`export_all`, expanded from the declaration)
//! defines every exported function; `call` catches panics and turns the model's errors
//! into result codes and diagnostics. No export names its own fallback, so none can
//! forget it.

use crate::model::error::{CuError, CuResult, Severity};
use crate::model::ids::{
    ArrayId, ContextId, DevicePtr, EventId, ExecId, FunctionId, GraphId, GreenCtxId, KernelId,
    LibraryId, LinkId, MipmappedArrayId, ModuleId, NodeId, PoolId, ResourceDescId, StreamId,
    UserObjectId,
};
use crate::model::{driver, Driver};
use cumock_abi::result::*;
use cumock_abi::{
    CUcontext, CUevent, CUfunction, CUkernel, CUlibrary, CUmemoryPool, CUmodule, CUresult, CUstream,
};
use std::collections::HashSet;
use std::ffi::{c_char, CStr};
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
                    &[$(&$arg as &dyn cumock_trace::encode::TraceArg),*],
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
    args: &[&dyn cumock_trace::encode::TraceArg],
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
    // The driver's error log (cuLogs*) holds what the program did wrong or the device
    // refused; not the mock's own gaps, nor a query's "not yet" (nor, as on the H200, a
    // call before cuInit: `logs::refused`).
    if e.severity != Severity::NotEmulated && e.code != CUDA_ERROR_NOT_READY {
        crate::exports::logs::refused(name, e.code, &e.message);
    }
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

// ------------------------------------------------------------------ argument conversion
// What `exports::emulate!` makes of each parameter, by the role the declaration gives it
// (`cumock_abi::Role`, from cuda.h and abi/gen/roles.txt): a pointer the driver must be
// given is checked here, once, and the emulation receives Rust values.

/// An out-parameter the program passed, not NULL: the emulation writes its result here.
/// A failed call leaves it alone unless the emulation zeroes it, as the H200 does for
/// that call.
pub struct Out<T>(std::ptr::NonNull<T>);

impl<T> Out<T> {
    /// The out-parameter `p`; NULL is CUDA_ERROR_INVALID_VALUE with `message`.
    pub fn new(p: *mut T, message: &'static str) -> CuResult<Self> {
        Self::maybe(p).ok_or_else(|| crate::model::error::invalid(message))
    }

    /// An out-parameter the call may be passed NULL for (then skipped).
    pub fn maybe(p: *mut T) -> Option<Self> {
        std::ptr::NonNull::new(p).map(Self)
    }

    /// Writes the result.
    pub fn write(self, value: T) -> CuResult<()> {
        // Safety: not NULL, and cuda.h requires the program's out-parameters to be
        // writable for a `T`; unaligned, as a C program's buffer may be.
        unsafe { self.0.as_ptr().write_unaligned(value) };
        Ok(())
    }

    /// Writes the handle of a model key.
    pub fn write_key(self, key: T::Key) -> CuResult<()>
    where
        T: Handle,
    {
        self.write(T::of(key))
    }

    /// What the program put there, for an out-parameter the call also reads (cuda.h
    /// declares cuCoredumpGetAttribute's `size_t *size` as written; it is the room the
    /// program gives, then the size the driver writes).
    pub fn read(&self) -> T {
        // Safety: not NULL, and cuda.h requires the program to give the value the call
        // reads; unaligned, as a C program's buffer may be.
        unsafe { self.0.as_ptr().read_unaligned() }
    }

    /// The program's pointer, for a struct the mock reads or writes as bytes (an opaque
    /// cuda.h type), not NULL.
    pub fn as_ptr(&self) -> *mut T {
        self.0.as_ptr()
    }

    /// The same out-parameter as the mock's own layout of cuda.h's struct.
    ///
    /// # Safety
    /// `U` is cuda.h's layout of the struct the parameter points to (or a prefix of it).
    pub unsafe fn cast<U>(self) -> Out<U> {
        Out(self.0.cast())
    }

    /// Writes the result, or, when the call failed, zero (as the H200 does for this
    /// call: probe out-params-on-failure), then returns the call's error.
    pub fn zero_on_failure(self, r: CuResult<T>) -> CuResult<()>
    where
        T: Default,
    {
        match r {
            Ok(v) => self.write(v),
            Err(e) => {
                self.write(T::default())?;
                Err(e)
            }
        }
    }
}

/// An out-parameter checked when written: NULL is CUDA_ERROR_INVALID_VALUE then, after the
/// call's other checks (`emulate!`'s `#[late]`).
pub struct Late<T> {
    p: *mut T,
    message: &'static str,
}

impl<T> Late<T> {
    pub fn new(p: *mut T, message: &'static str) -> Self {
        Self { p, message }
    }

    /// Writes the result; NULL is CUDA_ERROR_INVALID_VALUE.
    pub fn write(self, value: T) -> CuResult<()> {
        Out::new(self.p, self.message)?.write(value)
    }

    /// Writes the handle of a model key.
    pub fn write_key(self, key: T::Key) -> CuResult<()>
    where
        T: Handle,
    {
        self.write(T::of(key))
    }

    /// The out-parameter checked now, for a call that writes it after a change to the
    /// model that must not happen when it is NULL.
    pub fn check(self) -> CuResult<Out<T>> {
        Out::new(self.p, self.message)
    }

    /// As [`Out::cast`].
    ///
    /// # Safety
    /// As [`Out::cast`].
    pub unsafe fn cast<U>(self) -> Late<U> {
        Late {
            p: self.p.cast(),
            message: self.message,
        }
    }

    /// The pointer, for a call that hands it to another, which checks it.
    pub fn as_ptr(&self) -> *mut T {
        self.p
    }
}

/// An array the driver fills, up to the count the program gives in an in-out parameter,
/// which then says how many it wrote (`emulate!`'s `#[filled]`). The count is checked
/// when written, after the call's other checks (NULL: CUDA_ERROR_INVALID_VALUE).
pub struct Filled<T> {
    p: *mut T,
    count: *mut usize,
    message: &'static str,
}

impl<T: Copy> Filled<T> {
    /// The array `p` with its in-out count; `message` for a NULL count.
    pub fn new(p: *mut T, count: *mut usize, message: &'static str) -> Self {
        Self { p, count, message }
    }

    /// Refuses an array with room for none (a count of 0 with the array not NULL), as
    /// the H200 refused cuGraphGetNodes, cuGraphGetRootNodes and cuGraphGetEdges so
    /// (CUDA_ERROR_INVALID_VALUE, random_graphs: 130 of 130 calls, empty graphs too).
    pub fn refuse_no_room(&self) -> CuResult<()> {
        if self.p.is_null() || self.count.is_null() {
            return Ok(());
        }
        // Safety: not NULL; cuda.h's contract makes the in-out count readable.
        if unsafe { self.count.read_unaligned() } == 0 {
            return Err(crate::model::error::invalid(
                "the array is not NULL and its count says it has room for none",
            ));
        }
        Ok(())
    }

    /// Writes `items` as cuGraphGetNodes and its kin do: with the array NULL, how many
    /// there are; else up to the count the program gave (the rest `pad`), then how many
    /// were written.
    pub fn fill(self, items: &[T], pad: T) -> CuResult<()> {
        let count = Out::new(self.count, self.message)?;
        let Some(array) = std::ptr::NonNull::new(self.p) else {
            return count.write(items.len());
        };
        // Safety: not NULL; cuda.h's contract makes the in-out count readable.
        let room = unsafe { count.as_ptr().read_unaligned() };
        for i in 0..room {
            // Safety: cuda.h's contract: the array holds the count the program gave.
            unsafe {
                array
                    .as_ptr()
                    .add(i)
                    .write_unaligned(items.get(i).copied().unwrap_or(pad))
            };
        }
        count.write(room.min(items.len()))
    }
}

/// A by-value count of an array parameter, and how cuda.h's refusal of none reads for
/// its type: a signed count is refused when not positive, an unsigned one when 0.
pub trait Count: Copy {
    const NONE: &'static str;
    /// How many values it says; none when negative.
    fn len(self) -> usize;
}

impl Count for std::ffi::c_int {
    const NONE: &'static str = "is not positive";
    fn len(self) -> usize {
        usize::try_from(self).unwrap_or(0)
    }
}

impl Count for std::ffi::c_uint {
    const NONE: &'static str = "is 0";
    fn len(self) -> usize {
        self as usize
    }
}

impl Count for usize {
    const NONE: &'static str = "is 0";
    fn len(self) -> usize {
        self
    }
}

/// Room for values the driver writes, as many as a by-value count says (`emulate!`'s
/// `room(count)` marked `#[late]`), checked when the emulation asks for it, after the
/// call's other checks.
pub struct Room<T> {
    p: *mut T,
    len: usize,
    /// How the refusal of none reads for the count's type, and the names of the two
    /// parameters ("name is NULL or len is not positive").
    none: &'static str,
    what: &'static str,
    count_name: &'static str,
}

impl<T> Room<T> {
    /// The array `p` of `count` values; `what` and `count_name` are their parameters'
    /// names, for the refusals.
    ///
    /// # Safety
    /// `p` is NULL or holds `count` writable values that outlive the call, as cuda.h
    /// requires.
    pub unsafe fn new<C: Count>(
        p: *mut T,
        count: C,
        what: &'static str,
        count_name: &'static str,
    ) -> Self {
        Self {
            p,
            len: count.len(),
            none: C::NONE,
            what,
            count_name,
        }
    }

    /// The room, for a call that refuses NULL or none (CUDA_ERROR_INVALID_VALUE).
    pub fn nonempty<'a>(self) -> CuResult<&'a mut [T]> {
        if self.p.is_null() || self.len == 0 {
            return Err(crate::model::error::invalid(format!(
                "{} is NULL or {} {}",
                self.what, self.count_name, self.none
            )));
        }
        self.slice()
    }

    /// The room, for a call that writes nothing into none (whatever the pointer) and
    /// refuses NULL with room (CUDA_ERROR_INVALID_VALUE).
    pub fn within<'a>(self) -> CuResult<&'a mut [T]> {
        if self.len == 0 {
            return Ok(&mut []);
        }
        if self.p.is_null() {
            return Err(crate::model::error::invalid(format!(
                "{} is NULL with {} of them",
                self.what, self.len
            )));
        }
        self.slice()
    }

    /// Not NULL, and room for at least one.
    fn slice<'a>(self) -> CuResult<&'a mut [T]> {
        if self
            .len
            .checked_mul(std::mem::size_of::<T>())
            .is_none_or(|bytes| bytes > isize::MAX as usize)
        {
            return Err(crate::model::error::invalid(format!(
                "{}: {} elements are more than an address space holds",
                self.what, self.len
            )));
        }
        // Safety: not NULL (the callers checked), within isize::MAX bytes (just checked),
        // and `new`'s contract.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.p, self.len) })
    }
}

/// Writes `s` into the program's room for a string, truncated to fit and always
/// NUL-terminated (cuDeviceGetName, cuDeviceGetPCIBusId). `room` is not empty.
pub fn write_c_string(room: &mut [c_char], s: &str) {
    let n = s.len().min(room.len() - 1);
    for (dst, &b) in room.iter_mut().zip(&s.as_bytes()[..n]) {
        *dst = b as c_char;
    }
    room[n] = 0;
}

/// An array parameter of `count` values for a call that refuses NULL or none
/// (CUDA_ERROR_INVALID_VALUE: "desc is NULL or count is 0").
///
/// # Safety
/// As [`slice`].
pub unsafe fn slice_nonempty<'a, T, C: Count>(
    p: *const T,
    count: C,
    what: &str,
    count_name: &str,
) -> CuResult<&'a [T]> {
    // Safety: the caller's contract.
    match unsafe { slice_opt(p, count.len(), what) }? {
        Some(items) if !items.is_empty() => Ok(items),
        _ => Err(crate::model::error::invalid(format!(
            "{what} is NULL or {count_name} {}",
            C::NONE
        ))),
    }
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

/// An array parameter of `count` values: none when `count` is 0 (whatever the pointer);
/// NULL with a count is CUDA_ERROR_INVALID_VALUE, naming the parameter.
///
/// # Safety
/// `p` is NULL or points to `count` readable values that outlive the call, as cuda.h
/// requires.
pub unsafe fn slice<'a, T>(p: *const T, count: usize, what: &str) -> CuResult<&'a [T]> {
    if count == 0 {
        return Ok(&[]);
    }
    // Safety: the caller's contract.
    unsafe { slice_opt(p, count, what) }?
        .ok_or_else(|| crate::model::error::invalid(format!("{what} is NULL with {count} of them")))
}

/// An array parameter the call may be passed NULL for: None then. A count of more
/// elements than an address space holds is refused before any slice is made (a C
/// program's wrong count must not become a Rust slice past `isize::MAX` bytes).
///
/// # Safety
/// As [`slice`].
pub unsafe fn slice_opt<'a, T>(p: *const T, count: usize, what: &str) -> CuResult<Option<&'a [T]>> {
    if p.is_null() {
        return Ok(None);
    }
    if count
        .checked_mul(std::mem::size_of::<T>())
        .is_none_or(|bytes| bytes > isize::MAX as usize)
    {
        return Err(crate::model::error::invalid(format!(
            "{what}: {count} elements are more than an address space holds"
        )));
    }
    // Safety: not NULL, within isize::MAX bytes (just checked), and the caller's contract;
    // a C array may be unaligned only where its type's alignment is 1 (cuda.h's arrays
    // are of naturally aligned types).
    Ok(Some(unsafe { std::slice::from_raw_parts(p, count) }))
}

/// A string parameter, not NULL; NULL is CUDA_ERROR_INVALID_VALUE with `message`.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string that outlives the call, as cuda.h requires.
pub unsafe fn c_str<'a>(p: *const c_char, message: &'static str) -> CuResult<&'a CStr> {
    // Safety: the caller's contract.
    unsafe { c_str_opt(p) }.ok_or_else(|| crate::model::error::invalid(message))
}

/// A string parameter the call may be passed NULL for.
///
/// # Safety
/// As [`c_str`].
pub unsafe fn c_str_opt<'a>(p: *const c_char) -> Option<&'a CStr> {
    // Safety: not NULL, and the caller's contract.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) })
}

/// A parameter NULL may not be given for although cuda.h's types cannot say so: a handle,
/// the program's untyped memory, a callback (`emulate!`'s `#[nonnull]`).
pub trait Nullable {
    /// What the emulation receives when it is not NULL.
    type Given;
    fn given(self) -> Option<Self::Given>;
}

impl<T> Nullable for *mut T {
    type Given = *mut T;
    fn given(self) -> Option<*mut T> {
        (!self.is_null()).then_some(self)
    }
}

impl<T> Nullable for *const T {
    type Given = *const T;
    fn given(self) -> Option<*const T> {
        (!self.is_null()).then_some(self)
    }
}

/// A callback: the function itself.
impl<F> Nullable for Option<F> {
    type Given = F;
    fn given(self) -> Option<F> {
        self
    }
}

/// A device address where a call needs one (cuMemcpy's unified sides): 0 is NULL.
impl Nullable for u64 {
    type Given = u64;
    fn given(self) -> Option<u64> {
        (self != 0).then_some(self)
    }
}

/// The parameter `p`, not NULL; NULL is CUDA_ERROR_INVALID_VALUE naming it (`what`),
/// for a helper that reads a parameter after the call's other checks.
pub fn given<T: Nullable>(p: T, what: impl std::fmt::Display) -> CuResult<T::Given> {
    p.given()
        .ok_or_else(|| crate::model::error::invalid(format!("{what} is NULL")))
}

/// The program's memory a copy reads or writes `len` bytes of (a host side: untyped
/// memory with its byte count): NULL with bytes to copy is CUDA_ERROR_INVALID_VALUE,
/// naming the parameter (`what`); NULL with none is nothing to copy.
pub fn host_bytes<T>(p: *const T, len: usize, what: impl std::fmt::Display) -> CuResult<*const T> {
    if p.is_null() && len > 0 {
        return Err(crate::model::error::invalid(format!(
            "{what} is NULL with {len} bytes to copy"
        )));
    }
    Ok(p)
}

/// The parameter `p`, not NULL; NULL is CUDA_ERROR_INVALID_VALUE with `message`.
pub fn nonnull<T: Nullable>(p: T, message: &'static str) -> CuResult<T::Given> {
    p.given()
        .ok_or_else(|| crate::model::error::invalid(message))
}

/// The first of two optional out-parameters of which the call needs one at least
/// (`emulate!`'s `either(second)`): both NULL is CUDA_ERROR_INVALID_VALUE with `message`.
pub fn either<T, U>(p: *mut T, second: *mut U, message: &'static str) -> CuResult<Option<Out<T>>> {
    match (Out::maybe(p), second.is_null()) {
        (None, true) => Err(crate::model::error::invalid(message)),
        (first, _) => Ok(first),
    }
}

/// The first of two optional pointers the call takes both or neither of (`emulate!`'s
/// `both(second)`): one NULL without the other is CUDA_ERROR_INVALID_VALUE with `message`.
pub fn both<T, U>(p: *mut T, second: *mut U, message: &'static str) -> CuResult<*mut T> {
    if p.is_null() != second.is_null() {
        return Err(crate::model::error::invalid(message));
    }
    Ok(p)
}

/// The model's view of a device address the program passes.
pub fn device_ptr(p: cumock_abi::CUdeviceptr) -> DevicePtr {
    DevicePtr::new(p)
}

/// A handle type of cuda.h and the model's key of what it names: the only place a handle
/// becomes a key and back. The C types keep a context, a stream and an event apart (each
/// points to its own struct of the driver's); the handles the mock gives out are the
/// model's keys, as pointers.
pub trait Handle: Sized {
    type Key;
    /// The key of a handle the program passes (it may name nothing: lookups check).
    fn key(self) -> Self::Key;
    /// The handle the program receives for a key.
    fn of(key: Self::Key) -> Self;
}

/// A context; NULL (the current context, where the call allows it) is None.
impl Handle for CUcontext {
    type Key = Option<ContextId>;
    fn key(self) -> Option<ContextId> {
        (!self.is_null()).then_some(ContextId::from_handle(self as u64))
    }
    fn of(key: Option<ContextId>) -> Self {
        key.map_or(std::ptr::null_mut(), |k| k.handle() as CUcontext)
    }
}

/// A handle NULL may not be given for (`emulate!`'s `#[nonnull]`): its key once NULL is
/// refused, without the meaning NULL has where a call allows it (a context's key is a
/// `ContextId`, not an `Option`).
pub trait Required: Handle {
    type Given;
    /// The key of a handle checked not NULL.
    fn required(self) -> Self::Given;
}

impl Required for CUcontext {
    type Given = ContextId;
    fn required(self) -> ContextId {
        ContextId::from_handle(self as u64)
    }
}

/// A stream; NULL, the legacy default stream, is [`StreamId::NULL`].
impl Handle for CUstream {
    type Key = StreamId;
    fn key(self) -> StreamId {
        StreamId::from_handle(self as u64)
    }
    fn of(key: StreamId) -> Self {
        key.handle() as CUstream
    }
}

/// The handles whose model key is a typed id of `model::ids` (NULL is the id of 0, which
/// names nothing but where a call gives NULL a meaning).
macro_rules! typed_handle {
    ($($(#[$doc:meta])* $ty:ty => $id:ty),* $(,)?) => {
        $(
            $(#[$doc])*
            impl Handle for $ty {
                type Key = $id;
                fn key(self) -> $id {
                    <$id>::from_handle(self as u64)
                }
                fn of(key: $id) -> Self {
                    key.handle() as $ty
                }
            }

            impl Required for $ty {
                type Given = $id;
                fn required(self) -> $id {
                    self.key()
                }
            }
        )*
    };
}
typed_handle!(
    CUevent => EventId,
    /// A graph (cuGraphCreate).
    cumock_abi::CUgraph => GraphId,
    /// A node of a graph.
    cumock_abi::CUgraphNode => NodeId,
    /// An executable graph (cuGraphInstantiate).
    cumock_abi::CUgraphExec => ExecId,
    /// A user object (cuUserObjectCreate).
    cumock_abi::CUuserObject => UserObjectId,
    /// A module (cuModuleLoad*, cuLibraryGetModule).
    CUmodule => ModuleId,
    /// A module's function; a launch may be given a library's kernel in its place.
    CUfunction => FunctionId,
    /// A library (cuLibraryLoad*).
    CUlibrary => LibraryId,
    /// A library's kernel (cuLibraryGetKernel).
    CUkernel => KernelId,
    /// A JIT link (cuLinkCreate).
    cumock_abi::CUlinkState => LinkId,
    /// A memory pool; NULL is the id of 0, which the pools refuse where a call needs one.
    CUmemoryPool => PoolId,
    /// A CUDA array (cuArrayCreate).
    cumock_abi::CUarray => ArrayId,
    /// A mipmapped array (cuMipmappedArrayCreate).
    cumock_abi::CUmipmappedArray => MipmappedArrayId,
    /// A green context (cuGreenCtxCreate).
    cumock_abi::CUgreenCtx => GreenCtxId,
    /// A resource descriptor (cuDevResourceGenerateDesc).
    cumock_abi::CUdevResourceDesc => ResourceDescId,
);

/// A texture or surface reference (cuModuleGetTexRef, cuTexRefCreate, cuModuleGetSurfRef):
/// the model's number, which it checks.
impl Handle for cumock_abi::CUtexref {
    type Key = u64;
    fn key(self) -> u64 {
        self as u64
    }
    fn of(key: u64) -> Self {
        key as Self
    }
}

impl Handle for cumock_abi::CUsurfref {
    type Key = u64;
    fn key(self) -> u64 {
        self as u64
    }
    fn of(key: u64) -> Self {
        key as Self
    }
}

/// An allocation's handle (cuMemCreate's) is a number in C already; the model checks it.
impl Handle for cumock_abi::CUmemGenericAllocationHandle {
    type Key = u64;
    fn key(self) -> u64 {
        self
    }
    fn of(key: u64) -> Self {
        key
    }
}

/// A device is its ordinal in C; the model checks it.
impl Handle for cumock_abi::CUdevice {
    type Key = cumock_abi::CUdevice;
    fn key(self) -> Self {
        self
    }
    fn of(key: Self) -> Self {
        key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_array_count_past_the_address_space_is_refused_before_any_slice_is_made() {
        let one = [7u64];
        for count in [usize::MAX, usize::MAX / 8 + 1] {
            // Safety: the count is refused before `one` would be read past its end.
            let e = unsafe { slice(one.as_ptr(), count, "items") }
                .err()
                .unwrap();
            assert_eq!(e.code, cumock_abi::result::CUDA_ERROR_INVALID_VALUE);
            assert!(
                e.message.contains("more than an address space holds"),
                "{e:?}"
            );
        }
        // Safety: one element, as given.
        assert_eq!(unsafe { slice(one.as_ptr(), 1, "items") }.unwrap(), &[7]);
        // Safety: NULL is read as absent whatever the count.
        assert!(
            unsafe { slice_opt::<u64>(std::ptr::null(), usize::MAX, "items") }
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn room_refuses_null_or_none_naming_both_parameters_as_the_count_type_reads() {
        let mut name = [7 as c_char; 4];
        // Safety: NULL, or the four bytes above.
        let room =
            |p: *mut c_char, len: std::ffi::c_int| unsafe { Room::new(p, len, "name", "len") };
        for (p, len) in [
            (std::ptr::null_mut(), 4),
            (name.as_mut_ptr(), 0),
            (name.as_mut_ptr(), -1),
        ] {
            let e = room(p, len).nonempty().err().unwrap();
            assert_eq!(e.code, CUDA_ERROR_INVALID_VALUE);
            assert_eq!(e.message, "name is NULL or len is not positive");
        }
        write_c_string(room(name.as_mut_ptr(), 3).nonempty().unwrap(), "H200");
        assert_eq!(name, [b'H' as c_char, b'2' as c_char, 0, 7]);
        // An unsigned count's refusal reads "is 0"; `within` takes none, whatever the pointer.
        // Safety: NULL with no room.
        let none = unsafe { Room::<u64>::new(std::ptr::null_mut(), 0u32, "functions", "n") };
        assert!(none.within().unwrap().is_empty());
        // Safety: NULL with room is refused before it is used.
        let missing = unsafe { Room::<u64>::new(std::ptr::null_mut(), 3u32, "functions", "n") };
        assert_eq!(
            missing.within().err().unwrap().message,
            "functions is NULL with 3 of them"
        );
        let descs = [1u64, 2];
        // Safety: the two values above, or none.
        let e = unsafe { slice_nonempty(descs.as_ptr(), 0usize, "desc", "count") }
            .err()
            .unwrap();
        assert_eq!(e.message, "desc is NULL or count is 0");
        // Safety: as above.
        assert_eq!(
            unsafe { slice_nonempty(descs.as_ptr(), 2usize, "desc", "count") }.unwrap(),
            &[1, 2]
        );
    }

    #[test]
    fn a_null_out_parameter_is_invalid_value_naming_it_and_a_given_one_is_written() {
        let e = Out::<u64>::new(std::ptr::null_mut(), "handle is NULL")
            .err()
            .unwrap();
        assert_eq!(
            (e.code, &*e.message),
            (CUDA_ERROR_INVALID_VALUE, "handle is NULL")
        );
        let mut v = 7u64;
        Out::new(&raw mut v, "handle is NULL")
            .unwrap()
            .write(42)
            .unwrap();
        assert_eq!(v, 42);
        // Zeroed on failure, and the call's error kept.
        let failed: CuResult<u64> = Err(crate::model::error::invalid_device("no device"));
        let e = Out::new(&raw mut v, "")
            .unwrap()
            .zero_on_failure(failed)
            .err()
            .unwrap();
        assert_eq!((v, e.code), (0, CUDA_ERROR_INVALID_DEVICE));
        assert!(Out::<u64>::maybe(std::ptr::null_mut()).is_none());
    }

    #[test]
    fn paired_pointers_refuse_both_null_or_one_without_the_other() {
        let (mut a, mut b) = (1u64, 2u32);
        let (pa, pb) = (&raw mut a, &raw mut b);
        let none = (std::ptr::null_mut::<u64>(), std::ptr::null_mut::<u32>());
        let e = either(none.0, none.1, "x and y are both NULL")
            .err()
            .unwrap();
        assert_eq!(
            (e.code, &*e.message),
            (CUDA_ERROR_INVALID_VALUE, "x and y are both NULL")
        );
        assert!(either(none.0, pb, "").unwrap().is_none());
        either(pa, none.1, "").unwrap().unwrap().write(5).unwrap();
        assert_eq!(a, 5);
        assert_eq!(both(pa, pb, "").unwrap(), pa);
        assert!(both(none.0, none.1, "").unwrap().is_null());
        assert!(both(pa, none.1, "m").is_err());
        assert!(both(none.0, pb, "m").is_err());
    }

    #[test]
    fn host_bytes_refuse_null_only_with_bytes_to_copy() {
        let e = host_bytes(std::ptr::null::<u8>(), 16, "srcHost")
            .err()
            .unwrap();
        assert_eq!(
            (e.code, &*e.message),
            (
                CUDA_ERROR_INVALID_VALUE,
                "srcHost is NULL with 16 bytes to copy"
            )
        );
        assert!(host_bytes(std::ptr::null::<u8>(), 0, "srcHost")
            .unwrap()
            .is_null());
        let b = [1u8; 4];
        assert_eq!(host_bytes(b.as_ptr(), 4, "").unwrap(), b.as_ptr());
        // A device address: 0 is NULL.
        let e = given(0u64, "dst").err().unwrap();
        assert_eq!(
            (e.code, &*e.message),
            (CUDA_ERROR_INVALID_VALUE, "dst is NULL")
        );
        assert_eq!(given(0x1000u64, "").unwrap(), 0x1000);
    }

    #[test]
    fn a_late_out_parameter_is_checked_only_when_written() {
        let late = Late::<i32>::new(std::ptr::null_mut(), "priority is NULL");
        let e = late.write(1).err().unwrap();
        assert_eq!(
            (e.code, &*e.message),
            (CUDA_ERROR_INVALID_VALUE, "priority is NULL")
        );
    }

    #[test]
    fn an_array_is_a_slice_of_its_count_and_null_with_a_count_is_invalid_value() {
        let nodes = [3u64, 4, 5];
        // Safety: `nodes` holds 3 values; NULL is only read with a count of 0.
        unsafe {
            assert_eq!(slice(nodes.as_ptr(), 2, "dependencies").unwrap(), &[3, 4]);
            assert!(slice::<u64>(std::ptr::null(), 0, "dependencies")
                .unwrap()
                .is_empty());
            let e = slice::<u64>(std::ptr::null(), 2, "dependencies")
                .err()
                .unwrap();
            assert_eq!(
                (e.code, &*e.message),
                (
                    CUDA_ERROR_INVALID_VALUE,
                    "dependencies is NULL with 2 of them"
                )
            );
            assert!(slice_opt::<u64>(std::ptr::null(), 2, "x")
                .unwrap()
                .is_none());
        }
    }

    #[test]
    fn a_filled_array_takes_up_to_its_count_and_says_how_many() {
        let items = [7u64, 8, 9];
        // The array NULL: the count alone.
        let mut n = 0usize;
        Filled::new(std::ptr::null_mut(), &raw mut n, "numNodes is NULL")
            .fill(&items, 0)
            .unwrap();
        assert_eq!(n, 3);
        // Room for two: two written, the third slot untouched.
        let (mut out, mut n) = ([1u64; 3], 2usize);
        Filled::new(out.as_mut_ptr(), &raw mut n, "numNodes is NULL")
            .fill(&items, 0)
            .unwrap();
        assert_eq!((out, n), ([7, 8, 1], 2));
        // Room for more: padded, and the count is how many there are.
        let (mut out, mut n) = ([1u64; 5], 5usize);
        Filled::new(out.as_mut_ptr(), &raw mut n, "numNodes is NULL")
            .fill(&items, 0)
            .unwrap();
        assert_eq!((out, n), ([7, 8, 9, 0, 0], 3));
        // A NULL count is refused, naming it.
        let e = Filled::new(out.as_mut_ptr(), std::ptr::null_mut(), "numNodes is NULL")
            .fill(&items, 0)
            .err()
            .unwrap();
        assert_eq!(
            (e.code, &*e.message),
            (CUDA_ERROR_INVALID_VALUE, "numNodes is NULL")
        );
    }

    #[test]
    fn handles_and_keys_go_both_ways_and_null_keeps_its_meaning() {
        assert_eq!(CUcontext::key(std::ptr::null_mut()), None);
        assert!(CUcontext::of(None).is_null());
        let ctx = ContextId::from_handle(0x1234_0000_0001);
        assert_eq!(CUcontext::of(Some(ctx)).key(), Some(ctx));
        assert_eq!(CUstream::key(std::ptr::null_mut()), StreamId::NULL);
        let ev = EventId::from_handle(0x77);
        assert_eq!(CUevent::of(ev).key(), ev);
        let module = ModuleId::from_handle(0xabc);
        assert_eq!(cumock_abi::CUmodule::of(module).key(), module);
        // Pools and arrays: typed ids too, NULL the id of 0 (which the model refuses).
        assert!(CUmemoryPool::key(std::ptr::null_mut()).is_null());
        let pool = PoolId::from_handle(0x0090_0000_0000_0001);
        assert_eq!(CUmemoryPool::of(pool).key(), pool);
        let array = ArrayId::from_handle(0xa7a7_0000_0000_0100);
        assert_eq!(cumock_abi::CUarray::of(array).key(), array);
        let mipmapped = MipmappedArrayId::from_handle(0xa7a8_0000_0000_0100);
        assert_eq!(cumock_abi::CUmipmappedArray::of(mipmapped).key(), mipmapped);
        // A required context is its id, without NULL's Option.
        assert_eq!(CUcontext::of(Some(ctx)).required(), ctx);
    }

    #[test]
    fn a_nonnull_parameter_refuses_null_naming_it_and_passes_what_is_given() {
        let e = nonnull(std::ptr::null_mut::<u8>(), "hGraph is NULL")
            .err()
            .unwrap();
        assert_eq!(
            (e.code, &*e.message),
            (CUDA_ERROR_INVALID_VALUE, "hGraph is NULL")
        );
        let mut v = 3u8;
        assert_eq!(nonnull(&raw mut v, "").unwrap(), &raw mut v);
        // A callback: NULL refused, a given one is the function itself.
        extern "C" fn f(_: *mut std::ffi::c_void) {}
        type Callback = Option<extern "C" fn(*mut std::ffi::c_void)>;
        assert!(nonnull(None as Callback, "fn is NULL").is_err());
        let f: extern "C" fn(*mut std::ffi::c_void) = f;
        let given = nonnull(Some(f), "").unwrap();
        assert!(std::ptr::fn_addr_eq(given, f));
    }

    #[test]
    fn a_null_string_is_invalid_value_and_a_given_one_is_read() {
        // Safety: NULL, and a NUL-terminated literal.
        let e = unsafe { c_str(std::ptr::null(), "name is NULL") }
            .err()
            .unwrap();
        assert_eq!(e.code, CUDA_ERROR_INVALID_VALUE);
        // Safety: as above.
        let s = unsafe { c_str(c"kernel".as_ptr(), "name is NULL") }.unwrap();
        assert_eq!(s.to_str(), Ok("kernel"));
        // Safety: NULL.
        assert!(unsafe { c_str_opt(std::ptr::null()) }.is_none());
    }
}
