//! cumock's mock `libcuda.so.1`: the CUDA driver's virtual memory management, emulated
//! on the host.
//!
//! - `model`: the driver's state and rules, in safe Rust (unit-tested without the C ABI);
//! - `os`: the system calls under it (mmap, memfd), the model's only `unsafe`;
//! - `exports`: the emulated C functions, each a few lines over the model;
//! - `not_emulated`: every other symbol of the real driver, returning
//!   CUDA_ERROR_NOT_SUPPORTED;
//! - `procaddress`: cuGetProcAddress's version table;
//! - `diagnostics`: traces, leak reports, misuse messages, fault injection.

mod boundary;
pub mod diagnostics;
mod errors;
pub mod exports;
pub mod model;
pub mod not_emulated;
pub mod os;
pub mod procaddress;
