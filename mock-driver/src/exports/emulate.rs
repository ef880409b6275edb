//! `emulate!`: an emulated function written over checked arguments. The declaration
//! (`cumock_abi::declaration!`, generated from cuda.h and abi/gen/roles.txt) gives each
//! parameter's role, and `convert!` turns it into what the emulation receives, by role:
//!
//! | role | the emulation receives |
//! |---|---|
//! | `value`, `flags`, `enumeration` | the value (an enum stays raw: the model rejects an unknown one) |
//! | `address` | `DevicePtr` |
//! | `handle` | the model's key (`boundary::Handle`: `CUstream` is a `StreamId`, `CUcontext` an `Option<ContextId>`) |
//! | `input` | a copy of the struct; NULL: CUDA_ERROR_INVALID_VALUE, naming the parameter |
//! | `input_opt` | `Option` of the copy |
//! | `output` | `Out<T>`; NULL: CUDA_ERROR_INVALID_VALUE, naming the parameter |
//! | `output_opt` | `Option<Out<T>>` |
//! | `string` | `&CStr`; NULL: CUDA_ERROR_INVALID_VALUE, naming the parameter |
//! | `string_opt` | `Option<&CStr>` |
//! | `array(count)` marked `#[slice]` | `&[T]` of `count` values (none: count 0, whatever the pointer); NULL with a count: CUDA_ERROR_INVALID_VALUE, naming the parameter |
//! | `array_opt(count)` marked `#[slice]` | `Option<&[T]>` (NULL: None) |
//! | `array(count)` marked `#[nonempty]` | `&[T]` of `count` values; NULL or none: CUDA_ERROR_INVALID_VALUE, naming both ("desc is NULL or count is 0") |
//! | `room(count)` marked `#[late]` | `Room<T>`: room for `count` values the driver writes, checked when the emulation takes it: `nonempty()` refuses NULL or none, `within()` NULL with room |
//! | `filled(count)` marked `#[filled]` | `Filled<T>`: the array with its in-out count, written by `fill` (the count checked then: NULL is CUDA_ERROR_INVALID_VALUE, naming it) |
//! | `either(second)`: the first of two optional out-parameters, one at least given (roles.txt's `either` line) | `Option<Out<T>>`; both NULL: CUDA_ERROR_INVALID_VALUE, naming both |
//! | `both(second)`: the first of two optional pointers given both or neither (roles.txt's `both` line) | the C value; one NULL without the other: CUDA_ERROR_INVALID_VALUE, naming both |
//! | `raw` (filled arrays not marked `#[filled]`, in-out values, untyped memory, callbacks; an array or room not marked) | the C value, which the emulation reads itself |
//!
//! ```ignore
//! emulate! {
//!     fn cuMemCreate(d; handle, size, prop, flags) {
//!         handle.write(d.create(size as u64, d.check_prop(&prop)?, flags)?)
//!     }
//! }
//! ```
//!
//! defines `cuMemCreate` with cuda.h's signature: it takes the driver after cuInit (`d`,
//! CUDA_ERROR_NOT_INITIALIZED before; a function that answers before cuInit names none:
//! `fn cuDriverGetVersion(; version)`), then converts the parameters in their order (the
//! first NULL that must not be is the error), then runs the body, which returns
//! `CuResult<()>`. The names are the emulation's own, one per declared parameter (the
//! build fails on a wrong count); a name may carry its type (`handle: Out<u64>`), which
//! the compiler holds to the conversion's. An out-parameter marked `#[late]` is checked
//! when written (`Late<T>`), for the calls whose other checks come first (a stream's
//! getters check the stream before the pointer). A parameter marked `#[raw]` is passed
//! as C gave it, for an emulation that reads it its own way (a struct the mock lays out
//! itself, a NULL refused with another code).
//!
//! What the header's types cannot say about NULL is said where the emulation is written,
//! each with the H200's observed behaviour beside it: `#[nonnull]` on a handle, on the
//! program's untyped memory (`void *`), on a callback or on any pointer the emulation
//! reads its own way (an opaque struct) refuses NULL with
//! CUDA_ERROR_INVALID_VALUE, naming the parameter, when the parameters are converted
//! (the handle becomes its key without NULL's meaning, `boundary::Required`: a context a
//! `ContextId`; a callback its function); `#[late]` on untyped memory the
//! call writes makes it a `Late<c_void>`, checked when written.
//!
//! A function may carry a visibility (`pub(super) fn cuMemAlloc_v2(d; dptr, bytesize)`):
//! written outside its group's trait, in the file of its noun, it is a free function that
//! the trait's method calls (`methods_in_files!`).

/// Emulated functions of one group's trait, over checked arguments (see the module).
macro_rules! emulate {
    ($(
        $(#[$attr:meta])*
        $vis:vis fn $name:ident($($d:ident)?; $($(#[$when:ident])? $arg:ident $(: $aty:ty)?),* $(,)?) $body:block
    )*) => {
        $(
            cumock_abi::declaration!($name, emulate_one!(
                ($(#[$attr])*) ($vis) ($($d)?) ($($(#[$when])? $arg $(: $aty)?),*) $body
            ));
        )*
    };
}

/// One function of `emulate!`, with its declaration appended by `declaration!`.
macro_rules! emulate_one {
    (
        ($(#[$attr:meta])*) ($vis:vis) ($($d:ident)?) ($($(#[$when:ident])? $arg:ident $(: $aty:ty)?),*) $body:block
        [$name:ident in $group:ident] ($($p:ident : $ty:ty => $role:ident $(($count:ident))?),*)
    ) => {
        $(#[$attr])*
        // cuda.h's parameters, however many (cuLaunchKernel takes 11).
        #[allow(clippy::too_many_arguments)]
        $vis unsafe fn $name($($p: $ty),*) -> crate::model::error::CuResult<()> {
            $(let $d = crate::boundary::drv()?;)?
            $( let $arg $(: $aty)? = convert!($role $(($count))? $($when)?, $p); )*
            $body
        }
    };
}

/// A group's trait whose methods live in the files of several nouns (see exports/mod.rs):
/// `methods_in_files! { MemoryApi { copies: cuMemcpy, cuMemcpyAsync; ipc: ... } }`
/// implements `MemoryApi` with a method per name that calls the function of that name in
/// that file (`copies::cuMemcpy`), written there with `pub(super)` by `emulate!` or by
/// hand. A trait is implemented once, and one `impl` block cannot span files: this is
/// that block, as a list. The declaration gives each method its parameters, so the list
/// names functions only; the call holds each function to the declared types.
macro_rules! methods_in_files {
    ($group:ident { $($file:ident: $($name:ident),+ $(,)?;)* }) => {
        impl $group for Mock {
            $($(cumock_abi::declaration!($name, method_in_file!($file));)+)*
        }
    };
}

/// One method of `methods_in_files!`, with its declaration appended by `declaration!`.
macro_rules! method_in_file {
    ($file:ident [$name:ident in $group:ident] ($($p:ident : $ty:ty => $role:ident $(($count:ident))?),*)) => {
        unsafe fn $name($($p: $ty),*) -> crate::model::error::CuResult<()> {
            // Safety: the export's contract, which the function it calls has too.
            unsafe { $file::$name($($p),*) }
        }
    };
}

/// One parameter, by its role (see the module); `?` returns a NULL's error.
macro_rules! convert {
    (value, $p:ident) => {
        $p
    };
    (flags, $p:ident) => {
        $p
    };
    (enumeration, $p:ident) => {
        $p
    };
    (raw, $p:ident) => {
        $p
    };
    (address, $p:ident) => {
        crate::boundary::device_ptr($p)
    };
    (handle, $p:ident) => {
        crate::boundary::Handle::key($p)
    };
    (input, $p:ident) => {
        // Safety: cuda.h's contract for an in-parameter.
        unsafe { crate::boundary::input($p, stringify!($p)) }?
    };
    (input_opt, $p:ident) => {
        // Safety: cuda.h's contract for an in-parameter, where not NULL.
        (!$p.is_null()).then(|| unsafe { $p.read_unaligned() })
    };
    (output, $p:ident) => {
        crate::boundary::Out::new($p, concat!(stringify!($p), " is NULL"))?
    };
    // A handle, the program's memory or a callback that may not be NULL, which cuda.h's
    // types cannot say (`#[nonnull]`: each use names the H200's observed refusal).
    (handle nonnull, $p:ident) => {
        crate::boundary::Required::required(crate::boundary::nonnull(
            $p,
            concat!(stringify!($p), " is NULL"),
        )?)
    };
    // Any other pointer the emulation reads its own way (untyped memory, an opaque struct),
    // not NULL.
    ($role:ident nonnull, $p:ident) => {
        crate::boundary::nonnull($p, concat!(stringify!($p), " is NULL"))?
    };
    // The program's untyped memory the call writes a result into, checked when written
    // (`#[late]`): `Late<c_void>`, cast to the result's type.
    (raw late, $p:ident) => {
        crate::boundary::Late::new($p, concat!(stringify!($p), " is NULL"))
    };
    ($role:ident raw, $p:ident) => {
        $p
    };
    // An array stays as C gave it unless the emulation asks for the slice (`#[slice]`):
    // the emulations written before the conversion read their arrays themselves.
    (array($count:ident) $(raw)?, $p:ident) => {
        $p
    };
    (array_opt($count:ident) $(raw)?, $p:ident) => {
        $p
    };
    (filled($count:ident) $(raw)?, $p:ident) => {
        $p
    };
    (filled($count:ident) filled, $p:ident) => {
        crate::boundary::Filled::new($p, $count, concat!(stringify!($count), " is NULL"))
    };
    // An array a call refuses when NULL or empty (`#[nonempty]`).
    (array($count:ident) nonempty, $p:ident) => {
        // Safety: cuda.h's contract for an array of `count` values.
        unsafe { crate::boundary::slice_nonempty($p, $count, stringify!($p), stringify!($count)) }?
    };
    // Room the driver writes into stays as C gave it unless the emulation asks for it
    // checked when written (`#[late]`).
    (room($count:ident) $(raw)?, $p:ident) => {
        $p
    };
    (room($count:ident) late, $p:ident) => {
        // Safety: cuda.h's contract for room for `count` values.
        unsafe { crate::boundary::Room::new($p, $count, stringify!($p), stringify!($count)) }
    };
    (array($count:ident) slice, $p:ident) => {
        // Safety: cuda.h's contract for an array of `count` values.
        unsafe { crate::boundary::slice($p, $count as usize, stringify!($p)) }?
    };
    (array_opt($count:ident) slice, $p:ident) => {
        // Safety: cuda.h's contract for an array of `count` values, where not NULL.
        unsafe { crate::boundary::slice_opt($p, $count as usize, stringify!($p)) }?
    };
    (output late, $p:ident) => {
        crate::boundary::Late::new($p, concat!(stringify!($p), " is NULL"))
    };
    // An out-parameter cuda.h calls optional that the mock needs, checked when written
    // (each use says why).
    (output_opt late, $p:ident) => {
        crate::boundary::Late::new($p, concat!(stringify!($p), " is NULL"))
    };
    // Two optional out-parameters of which one at least is given: checked together when
    // the first is converted; the second converts as `output_opt`.
    (either($second:ident), $p:ident) => {
        crate::boundary::either(
            $p,
            $second,
            concat!(
                stringify!($p),
                " and ",
                stringify!($second),
                " are both NULL"
            ),
        )?
    };
    // Two optional pointers given both or neither (arrays that share a count, which the
    // emulation reads itself).
    (both($second:ident), $p:ident) => {
        crate::boundary::both(
            $p,
            $second,
            concat!(
                stringify!($p),
                " and ",
                stringify!($second),
                " must both be NULL or both be given"
            ),
        )?
    };
    (output_opt, $p:ident) => {
        crate::boundary::Out::maybe($p)
    };
    (string, $p:ident) => {
        // Safety: cuda.h's contract for a string parameter.
        unsafe { crate::boundary::c_str($p, concat!(stringify!($p), " is NULL")) }?
    };
    (string_opt, $p:ident) => {
        // Safety: cuda.h's contract for a string parameter.
        unsafe { crate::boundary::c_str_opt($p) }
    };
}
