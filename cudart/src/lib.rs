//! cumock's CUDA runtime, `libcudart.so.13`: written from NVIDIA's public runtime headers
//! (`cuda_runtime_api.h`, `driver_types.h`) over the public driver API, which it loads at
//! first use (`libcuda.so.1`, entry points from `cuGetProcAddress_v2`). The same library
//! runs over cumock's mock driver and over NVIDIA's driver.
//!
//! - `driver`: the loaded driver and the entry points the runtime uses, typed by
//!   `cumock_abi`'s declaration;
//! - `runtime`: the process's state: devices, primary contexts, what the program holds;
//! - `device`, `memory`, `pool`, `stream`, `graph`, `ipc`, `kernel`, `library`, `texture`, `misc`: the
//!   exports, by noun, each a few lines over `runtime` and `driver`; `device_prop`:
//!   `cudaDeviceProp`, and the cuda.h attribute each field comes from;
//! - `error`: cudaError_t, its names and strings, how a driver result becomes one, which
//!   errors are sticky; `generated`: the tables generated from driver_types.h; `not_implemented`: the exports not implemented;
//! - `boundary`: the export macro, panics, the last error; `diagnostics`: trace, faults,
//!   leaks, over the settings `cumock_support` reads once;
//! - `os`: the system calls under the runtime (the shared ones are `cumock_support`'s);
//! - `abi_check` (tests only): the exports checked against NVIDIA's headers.
#![allow(clippy::missing_safety_doc)]

#[cfg(test)]
mod abi_check;
mod batches;
mod boundary;
mod device;
mod device_prop;
mod diagnostics;
mod driver;
mod error;
mod generated;
mod graph;
mod ipc;
mod kernel;
mod library;
mod memory;
mod misc;
mod not_implemented;
mod os;
mod pool;
mod runtime;
mod stream;
mod texture;
