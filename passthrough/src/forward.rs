//! Forwarders: every export that is not traced jumps straight to the real driver's
//! function of the same name, whatever its signature, through a slot filled at load.

use std::sync::atomic::Ordering;

/// What a slot holds when the real driver lacks the function.
extern "C" fn missing() -> u32 {
    cumock_abi::result::CUDA_ERROR_NOT_FOUND
}

macro_rules! forward {
    ($($name:ident),* $(,)?) => {
        #[allow(non_upper_case_globals)]
        pub mod slots {
            use std::sync::atomic::AtomicUsize;
            $(pub static $name: AtomicUsize = AtomicUsize::new(0);)*
        }
        $(
            /// Jumps to the real driver's function: arguments and result pass untouched.
            #[unsafe(naked)]
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn $name() {
                core::arch::naked_asm!("jmp qword ptr [rip + {}]", sym slots::$name)
            }
        )*
        pub fn fill() {
            $(slots::$name.store(resolve(stringify!($name)), Ordering::Relaxed);)*
            crate::traced::fill();
        }
    };
}

pub fn resolve(name: &str) -> usize {
    let p = crate::real().symbol(name);
    if p.is_null() {
        missing as *const () as usize
    } else {
        p as usize
    }
}

include!("forwarded.rs");
