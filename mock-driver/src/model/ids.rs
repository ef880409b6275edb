//! The driver's handles as types, so that a context cannot be passed where a stream is
//! meant, and the layout of a handle (a tag naming its kind in the high bits, a serial
//! number in the low 32) is written once, here.

/// The low bits of a handle the mock gives out: its serial number. The high bits are a tag
/// naming the kind of handle.
const SERIAL_MASK: u64 = 0xffff_ffff;

macro_rules! handle_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(u64);

        impl $name {
            /// NULL, which names nothing (where a call gives it a meaning: the legacy
            /// default stream, no graph).
            pub const fn is_null(self) -> bool {
                self.0 == 0
            }

            /// The key of a handle the program holds (it may name nothing: lookups check).
            pub const fn from_handle(handle: u64) -> Self {
                Self(handle)
            }

            /// The handle the program receives.
            pub const fn handle(self) -> u64 {
                self.0
            }

            /// The handle's serial number, unique among the live handles of its kind (what
            /// cuCtxGetId and cuStreamGetId report).
            pub const fn serial(self) -> u64 {
                self.0 & SERIAL_MASK
            }
        }

        /// As the handle, for messages that name it.
        impl std::fmt::LowerHex for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::LowerHex::fmt(&self.0, f)
            }
        }
    };
}

handle_id!(
    /// A context (primary or created), by its handle.
    ContextId
);
handle_id!(
    /// A stream, by its handle; 0 and the special handles are the default streams.
    StreamId
);
handle_id!(
    /// An event, by its handle.
    EventId
);

handle_id!(
    /// A green context (cuGreenCtxCreate), by its handle.
    GreenCtxId
);
handle_id!(
    /// A resource descriptor (cuDevResourceGenerateDesc), by its handle.
    ResourceDescId
);

handle_id!(
    /// A graph (cuGraphCreate, a capture's, a conditional node's body), by its handle.
    GraphId
);
handle_id!(
    /// A node of a graph, by its handle.
    NodeId
);
handle_id!(
    /// An executable graph (cuGraphInstantiate), by its handle.
    ExecId
);

handle_id!(
    /// A user object (cuUserObjectCreate), by its handle.
    UserObjectId
);

handle_id!(
    /// A loaded module (cuModuleLoad*, or a library's), by its handle.
    ModuleId
);
handle_id!(
    /// A function of a loaded module (cuModuleGetFunction), by its handle. Launches take a
    /// library's kernel in its place (see [`FunctionId::as_kernel`]).
    FunctionId
);
handle_id!(
    /// A library (cuLibraryLoad*), by its handle.
    LibraryId
);
handle_id!(
    /// A library's kernel (cuLibraryGetKernel), by its handle.
    KernelId
);

handle_id!(
    /// A JIT link (cuLinkCreate), by its handle.
    LinkId
);

handle_id!(
    /// A memory pool (cuMemPoolCreate, a place's default pool, cuMemPoolImportFromShareableHandle),
    /// by its handle: what the pool's blocks, its reservations and the pointer attributes
    /// name it by.
    PoolId
);

handle_id!(
    /// A CUDA array (cuArrayCreate, cuArray3DCreate, a mipmapped array's level), by its
    /// handle.
    ArrayId
);
handle_id!(
    /// A mipmapped array (cuMipmappedArrayCreate), by its handle.
    MipmappedArrayId
);

impl FunctionId {
    /// The kernel this handle names where a call that takes a CUfunction is given a
    /// CUkernel cast to one (cuda.h allows it for launches and attributes).
    pub const fn as_kernel(self) -> KernelId {
        KernelId::from_handle(self.0)
    }
}

impl KernelId {
    /// The kernel, given where a call takes a CUfunction (a graph's kernel node, a launch):
    /// the model's function lookup resolves it (see [`FunctionId::as_kernel`]).
    pub const fn as_function(self) -> FunctionId {
        FunctionId::from_handle(self.0)
    }
}

impl StreamId {
    /// The legacy default stream, as NULL names it.
    pub const NULL: StreamId = StreamId(0);
    /// cuda.h's CU_STREAM_LEGACY.
    pub const LEGACY: StreamId = StreamId(0x1);
    /// cuda.h's CU_STREAM_PER_THREAD.
    pub const PER_THREAD: StreamId = StreamId(0x2);

    /// One of the default streams, which always exist and belong to the current context.
    pub fn is_default(self) -> bool {
        self == Self::NULL || self == Self::LEGACY || self == Self::PER_THREAD
    }
}

/// A physical allocation (cuMemCreate, cuMemImportFromShareableHandle), by its handle's
/// serial number: the key of the allocations' table. A handle is the serial under a tag;
/// only [`AllocationId::handle`] adds it, and only [`AllocationId::from_handle`] strips it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AllocationId(u64);

impl AllocationId {
    /// The high bits of every allocation handle, so that a handle of another kind (or a
    /// made-up number) is recognised as never having been one.
    const TAG: u64 = 0x00c0_da00_0000_0000;

    /// The allocation with serial number `serial`.
    pub const fn from_serial(serial: u64) -> Self {
        Self(serial & SERIAL_MASK)
    }

    /// The allocation a handle names, whether or not its tag is right (see
    /// [`AllocationId::is_handle`]).
    pub const fn from_handle(handle: u64) -> Self {
        Self(handle & SERIAL_MASK)
    }

    /// Whether `handle` carries the tag of allocation handles.
    pub const fn is_handle(handle: u64) -> bool {
        handle & !SERIAL_MASK == Self::TAG
    }

    /// The handle the program receives.
    pub const fn handle(self) -> u64 {
        Self::TAG | self.0
    }

    /// The serial number (cuPointerGetAttribute's buffer id, the leak report's key).
    pub const fn serial(self) -> u64 {
        self.0
    }
}

/// A device address (`CUdeviceptr`), in the process's unified address space. The driver's
/// calls take and return these; the tables under them (`vmm`, `reservations`, `mappings`,
/// `memory`) keep plain `u64`s, on which they do interval arithmetic.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DevicePtr(u64);

impl DevicePtr {
    pub const NULL: DevicePtr = DevicePtr(0);

    pub const fn new(addr: u64) -> Self {
        Self(addr)
    }

    /// The address as a number, for the tables and for the program.
    pub const fn get(self) -> u64 {
        self.0
    }
}

/// An address `n` bytes further on (wrapping, as a C pointer's arithmetic would not be
/// checked either; the tables refuse what lies outside every range).
impl std::ops::Add<u64> for DevicePtr {
    type Output = DevicePtr;
    fn add(self, n: u64) -> DevicePtr {
        DevicePtr(self.0.wrapping_add(n))
    }
}

impl std::ops::Sub<u64> for DevicePtr {
    type Output = DevicePtr;
    fn sub(self, n: u64) -> DevicePtr {
        DevicePtr(self.0.wrapping_sub(n))
    }
}

/// As the address, for messages.
impl std::fmt::LowerHex for DevicePtr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::LowerHex::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocation_handles_round_trip_and_carry_their_tag() {
        let a = AllocationId::from_serial(7);
        assert_eq!(AllocationId::from_handle(a.handle()), a);
        assert!(AllocationId::is_handle(a.handle()));
        assert!(!AllocationId::is_handle(7));
        assert_eq!(a.serial(), 7);
    }
}
