//! The emulated driver. The C boundary (`crate::exports`) converts arguments and calls
//! these methods; unit tests call them directly. The model is Rust types and methods,
//! with `unsafe` where it touches what the program or the host owns, each block with its
//! reason: host memory the program named in a copy (`copies`, `copies2d`, `textures`,
//! through `crate::host_bytes`), the arenas' views and exported memory (`arenas`, `vmm`),
//! fds of memory pools (`pools`), the state's lock across fork (`process`).
//!
//! `Driver` and its `State` are defined here; their operations are filed by noun, each
//! file an `impl Driver` block beside the tables it works on:
//!
//! - `devices`: cuInit, the devices, granularity, an allocation's properties;
//! - `vmm_calls`: the virtual memory management calls, over the `vmm` table (itself
//!   over `reservations`, `mappings` and `arenas`);
//! - `alloc`: cuMemAlloc and cuMemFree, cuMemGetAddressRange, cuMemGetInfo;
//! - `limits`: what the mock may take from the host (device memory backed, page-locked);
//! - `host_memory`: page-locked and registered host memory; `managed`: managed memory;
//! - `pools`: the stream-ordered allocator's memory pools; `ipc`: legacy IPC handles;
//! - `copies`: copies, memsets, device memory as host pointers for a kernel; `copies2d`:
//!   pitched memory and the 2D copies and memsets;
//! - `context`: the contexts' tables and calls, peer access;
//! - `streams`: streams, events and limits (their tables are in `context`);
//!   `stream_queues`: device work in stream order, run by each stream's worker;
//!   `ordering`: ordering-bug reports over that work;
//! - `pointers`: cuPointerGetAttribute's view of an address;
//! - `green_contexts`: green contexts, their SM resources and descriptors;
//! - `graphs`: CUDA graphs and their launch; `capture`: stream capture into graphs;
//!   `conditional`: conditional nodes; `graph_memory`: memory nodes; `user_objects`:
//!   graph user objects;
//! - `module`: modules, libraries and functions; `launch`: kernel launches (the
//!   function looked up once, the checks, the kernel run over `KernelMemory`) and the
//!   sticky faults of kernels; `link`: the JIT linker; `textures`: CUDA arrays, texture and surface objects;
//! - `images`: module images read from the program's memory and from files, bounded;
//! - `process`: the process's driver, and fork;
//! - `profile`: the devices' description; `error`: the errors the calls return;
//! - `ids`: the handles (`ContextId`, `StreamId`, `EventId`, `AllocationId`) and device
//!   addresses (`DevicePtr`) the calls take and return, as types;
//! - `tests`: the model's unit tests that span several files.
//!
//! The bytes of copies and memsets move through `crate::host_bytes`, beside `crate::os`:
//! the model itself has no raw-pointer copies.
//!
//! The model reads no environment variable: `process::driver` gives it the process's
//! settings (`cumock_support::Settings`) when it makes the driver.

pub mod alloc;
pub mod arenas;
pub mod batches;
pub mod capture;
pub mod conditional;
pub mod context;
pub mod copies;
pub mod copies2d;
pub mod devices;
pub mod error;
pub mod graph_memory;
pub mod graphs;
pub mod green_contexts;
pub mod host_memory;
pub mod ids;
pub mod images;
pub mod ipc;
pub mod launch;
pub mod legacy_launch;
pub mod limits;
pub mod link;
pub mod logs;
pub mod managed;
pub mod mappings;
pub mod module;
pub mod ordering;
pub mod pointers;
pub mod pool_ipc;
pub mod pools;
pub mod process;
pub mod profile;
pub mod reservations;
pub mod stream_attrs;
pub mod stream_memops;
pub mod stream_queues;
pub mod streams;
pub mod texture_references;
pub mod textures;
pub mod user_objects;
pub mod vmm;
pub mod vmm_calls;

#[cfg(test)]
mod tests;

pub use crate::host_bytes::HostBytes;
pub use copies::{HostOrDevice, Pattern, Translation};
pub use pointers::PointerInfo;
pub use process::{driver, profile_from_settings};

use context::Contexts;
use cumock_support::Settings;
use error::*;
use profile::Profile;
use std::sync::atomic::AtomicBool;
use vmm::Vmm;

pub struct State {
    pub vmm: Vmm,
    pub contexts: Contexts,
    pub modules: module::Modules,
    /// The stream-ordered allocator's memory pools.
    pub pools: pools::Pools,
    /// Per device: the fault of a kernel, returned by every later call that needs the
    /// device (as on a GPU, it stays for the life of the process).
    pub sticky: Vec<Option<CuError>>,
    /// Per device: a kernel or graph node stopped because the host could not back the
    /// device memory it touched (`limits`). That is the mock's limit, not a fault of the
    /// device, so the error is returned once, by the next call that checks the device's
    /// errors (`check_sticky`), then forgotten: the program can free memory and go on.
    /// (Sticky, it failed every later call of the process: CuPy's test_empty_huge_size
    /// took 107 later tests with it.) A `Cell`, so that the check that returns it, under
    /// the state's lock with a shared borrow, can take it.
    pub stopped: Vec<std::cell::Cell<Option<CuError>>>,
    /// Legacy IPC handles made and opened (ipc.rs).
    pub ipc: ipc::Ipc,
    /// Page-locked host memory (cuMemAllocHost, cuMemHostRegister).
    pub host: host_memory::HostMemory,
    /// CUDA graphs and executable graphs (graphs.rs).
    pub graphs: graphs::Graphs,
    /// Graph allocations and each device's graph allocator (graph_memory.rs).
    pub graph_memory: graph_memory::GraphMemory,
    /// Conditional nodes' handles (conditional.rs).
    pub conditionals: conditional::Conditionals,
    /// Graph user objects and the references graphs hold (user_objects.rs).
    pub user_objects: user_objects::UserObjects,
    /// Stream captures in progress (capture.rs).
    pub captures: capture::Captures,
    /// The JIT linker's states (link.rs).
    pub links: link::Links,
    /// Device printf output of the kernels that ended since the last synchronising call,
    /// in the order they ended (streams.rs, `flush_printf`).
    pub printf_out: Vec<u8>,
    /// Failed device asserts' messages, written to stderr at the same points.
    pub printf_err: Vec<u8>,
    /// CUDA arrays, texture and surface objects (textures.rs).
    pub textures: textures::Textures,
    /// Texture and surface references (texture_references.rs).
    pub texture_references: texture_references::TextureReferences,
    /// Counts the changes to what a launch's checks and its prepared form read besides
    /// its own arguments (a module unloaded or gone with its context, a function's
    /// attribute or a context's limit set): executable graphs keep their kernel nodes
    /// prepared while it stays.
    pub launch_epoch: u64,
    /// The allocations (by buffer id) cuPointerSetAttribute(SYNC_MEMOPS) marked, read
    /// back by cuPointerGetAttribute. The mock's synchronous copies finish before they
    /// return whatever the mark, so it changes nothing else.
    pub sync_memops: std::collections::HashSet<u64>,
    /// Green contexts and resource descriptors (green_contexts.rs).
    pub green: green_contexts::GreenContexts,
    /// cuDeviceRegisterAsyncNotification's registrations: handle to device (devices.rs).
    pub async_notifications: rustc_hash::FxHashMap<u64, i32>,
    next_async_notification: u64,
}

pub struct Driver {
    pub profile: Profile,
    /// The kernel executor's settings, given at creation.
    kernel: module::KernelSettings,
    initialized: AtomicBool,
    /// Set in a child forked after cuInit.
    forked_after_init: AtomicBool,
    /// Private, so that the state is read and changed only through `Driver`'s calls (and
    /// [`Driver::with_vmm`] for the leak report).
    state: cumock_support::ForkSafeMutex<State>,
}

impl Driver {
    /// A driver with every setting at its default (the model's tests).
    pub fn new(profile: Profile) -> Self {
        Self::with_settings(profile, &Settings::default())
    }

    /// A driver with the settings' values: `lenient`, the device memory it may back, the
    /// kernel executor's threads, limits and engine.
    pub fn with_settings(profile: Profile, settings: &Settings) -> Self {
        let n = profile.devices.len();
        let granularity = profile.minimum_granularity();
        let mut vmm = Vmm::new(n, granularity);
        vmm.lenient = settings.lenient;
        vmm.backing = limits::Backing::from_setting(settings.device_memory.clone());
        Self {
            profile,
            kernel: module::KernelSettings::from(settings),
            initialized: AtomicBool::new(false),
            forked_after_init: AtomicBool::new(false),
            state: cumock_support::ForkSafeMutex::new(State {
                vmm,
                contexts: Contexts::new(n),
                modules: module::Modules::default(),
                pools: pools::Pools::new(n),
                sticky: vec![None; n],
                stopped: (0..n).map(|_| Default::default()).collect(),
                ipc: ipc::Ipc::default(),
                host: Default::default(),
                graphs: Default::default(),
                graph_memory: graph_memory::GraphMemory::new(n),
                conditionals: Default::default(),
                user_objects: Default::default(),
                captures: Default::default(),
                links: Default::default(),
                printf_out: Vec::new(),
                printf_err: Vec::new(),
                textures: Default::default(),
                texture_references: Default::default(),
                launch_epoch: 0,
                sync_memops: Default::default(),
                green: Default::default(),
                async_notifications: Default::default(),
                next_async_notification: 0,
            }),
        }
    }

    pub fn device_count(&self) -> usize {
        self.profile.devices.len()
    }

    /// Reads the VMM tables under the state's lock: what the leak report lists. `f` must
    /// not call the driver (the lock is held).
    pub fn with_vmm<R>(&self, f: impl FnOnce(&Vmm) -> R) -> R {
        f(&self.state.lock().vmm)
    }

    /// Reads the VMM tables and the memory pools under the state's lock (the leak
    /// report); `f` must not call the driver.
    pub fn with_state<R>(&self, f: impl FnOnce(&Vmm, &pools::Pools) -> R) -> R {
        let st = self.state.lock();
        f(&st.vmm, &st.pools)
    }

    /// How many touched ranges of device memory go back to the host together (see
    /// `Vmm::set_release_batch`): for tests of reuse.
    pub fn set_release_batch(&self, ranges: usize) {
        self.state.lock().vmm.set_release_batch(ranges);
    }
}
