//! cumock's mock `libcuda.so.1`: the CUDA driver's virtual memory management, emulated
//! on the host.
//!
//! - `model`: the driver's state and rules as Rust types and methods (unit-tested without
//!   the C ABI); its few `unsafe` blocks (host memory the program reads directly, fds,
//!   fork) each say why they are sound;
//! - `os`: the system calls under it (mmap, memfd); with `host_bytes`, the copy engine's
//!   byte moves;
//! - `exports`: the emulated functions, filed by noun as cuda.h's documentation groups
//!   them (`exports/vmm.rs` implements `cumock_abi::VirtualMemoryApi`, `exports/streams.rs`
//!   `StreamApi`...), each a few lines over the model, and the C exports of all 707
//!   symbols of the real driver, expanded from the declaration in `cumock_abi`; those not
//!   emulated return CUDA_ERROR_NOT_SUPPORTED;
//! - `boundary`: what every export does around its method (panics, traces, diagnostics);
//! - `procaddress`: cuGetProcAddress's version table;
//! - `error_strings`: cuGetErrorName's and cuGetErrorString's answers, as the H200 gave
//!   them;
//! - `diagnostics`: traces, leak reports, misuse messages, fault injection (one module
//!   each, see its docs), over the settings `cumock_support` reads once;
//!   `python_frames`: the `.py` call sites of a Python program, for them.

mod boundary;
pub mod diagnostics;
mod error_strings;
pub mod exports;
pub mod host_bytes;
pub mod host_trap;
pub mod model;
pub mod os;
pub mod procaddress;
mod python_frames;
