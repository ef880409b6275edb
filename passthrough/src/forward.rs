//! Forwarders: every export of the real driver, expanded from the declaration in
//! `cumock_abi` (generated from NVIDIA's headers), calls the real driver's function of
//! the same name through a slot filled at load. A declared export is an ordinary typed
//! call, so it builds on any architecture; one `crate::traced` names is recorded after
//! it, its arguments as declared. The exports
//! no header declares (the debugger's cudbg* symbols) have no signature to call with, so
//! they jump to the real function with their arguments untouched: that takes assembly,
//! written here for x86-64 and aarch64.

use cumock_abi::CUresult;
use cumock_trace::encode::TraceArg;
use std::sync::atomic::Ordering;

/// Where an undeclared export's slot points when the real driver lacks the function.
extern "C" fn missing() -> CUresult {
    cumock_abi::result::CUDA_ERROR_NOT_FOUND
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!(
    "the pass-through driver forwards the driver's undeclared exports (cudbg*) with a \
     jump written in assembly for x86-64 and aarch64 only; add this architecture's jump \
     in passthrough/src/forward.rs"
);

/// Jumps to the function whose address is in `$slot`, leaving every argument register
/// and the stack as the caller left them.
#[cfg(target_arch = "x86_64")]
macro_rules! jump_through {
    ($slot:path) => {
        core::arch::naked_asm!("jmp qword ptr [rip + {}]", sym $slot)
    };
}

/// As above; x16 is the intra-procedure-call scratch register, free to clobber in a veneer.
#[cfg(target_arch = "aarch64")]
macro_rules! jump_through {
    ($slot:path) => {
        core::arch::naked_asm!(
            "adrp x16, {0}",
            "ldr x16, [x16, :lo12:{0}]",
            "br x16",
            sym $slot
        )
    };
}

macro_rules! forward_all {
    (
        declared { $( $name:ident ( $( $arg:ident : $ty:ty | $erased:ty ),* ) in $group:ident; )* }
        undeclared { $( $undeclared:ident, )* }
    ) => {
        #[allow(non_upper_case_globals)]
        pub mod slots {
            use std::sync::atomic::AtomicUsize;
            $(pub static $name: AtomicUsize = AtomicUsize::new(0);)*
            $(pub static $undeclared: AtomicUsize = AtomicUsize::new(0);)*
        }
        /// Whether each declared export is in the traced set, decided once at fill.
        #[allow(non_upper_case_globals)]
        pub mod recorded {
            use std::sync::atomic::AtomicBool;
            $(pub static $name: AtomicBool = AtomicBool::new(false);)*
        }
        $(
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> CUresult {
                let p = slots::$name.load(Ordering::Relaxed);
                if p == 0 {
                    return cumock_abi::result::CUDA_ERROR_NOT_FOUND;
                }
                // Safety: the slot holds the real driver's function of this name, whose
                // signature is the declaration's (cudaTypedefs.h).
                let real: unsafe extern "C" fn($($ty),*) -> CUresult =
                    unsafe { std::mem::transmute::<usize, _>(p) };
                // Safety: the program's arguments, passed on as they came.
                let after = unsafe {
                    <crate::traced::Traced as cumock_abi::$group>::$name($($arg),*)
                };
                // Safety: as above.
                let r = unsafe { real($($arg),*) };
                if recorded::$name.load(Ordering::Relaxed) {
                    crate::record::call(stringify!($name), &[$($arg.arg()),*], r);
                }
                if let Some(after) = after {
                    after(r);
                }
                r
            }
        )*
        $(
            /// Jumps to the real driver's function: arguments and result pass untouched.
            #[unsafe(naked)]
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn $undeclared() {
                jump_through!(slots::$undeclared)
            }
        )*
        /// Fills every slot from the real driver, before the program's first call.
        pub fn fill() {
            $(
                slots::$name.store(resolve(stringify!($name)), Ordering::Relaxed);
                recorded::$name.store(
                    crate::traced::TRACED.contains(&stringify!($name)),
                    Ordering::Relaxed,
                );
            )*
            $(
                let p = match resolve(stringify!($undeclared)) {
                    0 => missing as *const () as usize,
                    p => p,
                };
                slots::$undeclared.store(p, Ordering::Relaxed);
            )*
        }
    };
}

/// The real driver's function of that name, or 0.
pub fn resolve(name: &str) -> usize {
    crate::real().symbol(name) as usize
}

cumock_abi::for_each_export!(forward_all);
