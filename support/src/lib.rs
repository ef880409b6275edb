//! What cumock's libraries share, written once: the mock driver (`libcuda.so.1`), the
//! CUDA runtime (`libcudart.so.13`), the pass-through recorder and the kernel engine each
//! link their own copy, so that each reads the same variables the same way.
//!
//! - [`settings`](mod@settings): every `CUMOCK_*` variable, read once into one typed [`Settings`],
//!   with a message for each value that does not parse;
//! - [`faults`]: the `CUMOCK_FAULT` grammar (`FUNC:N:ERROR`, `FUNC:every=K:ERROR`,
//!   `FUNC:rate=P:seed=S:ERROR`), and the plans that fail calls on purpose;
//! - [`fork_safe`]: a lock that a `fork()` from another thread cannot leave held in the
//!   child;
//! - [`panic`](mod@panic): the message of a panic caught at the C boundary;
//! - [`host`]: anonymous host mappings, and reading the program's memory without
//!   trusting its pointers.
//!
//! `unsafe` stands in `fork_safe` (resetting a lock in a forked child) and `host`
//! (mmap, process_vm_readv), each with its `// Safety:` reason.

pub mod faults;
pub mod fork_safe;
pub mod host;
pub mod panic;
pub mod settings;

pub use faults::{FaultPlan, FaultPlans, FaultSpec, Layer};
pub use fork_safe::{ForkSafeGuard, ForkSafeMutex};
pub use settings::{settings, KernelEngine, Schedule, Settings};
