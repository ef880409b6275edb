//! `cudaDeviceProp` written out from driver_types.h (CUDA 13.0), and the cuda.h attribute
//! each field comes from; the ABI test (tests/header.rs) checks both against the headers.
#![allow(clippy::all)]
use std::ffi::c_char;

/// `struct cudaDeviceProp` (driver_types.h, CUDA 13.0), field for field.
#[repr(C)]
#[allow(non_snake_case)]
#[derive(Clone, Copy)]
pub struct CudaDeviceProp {
    pub name: [c_char; 256],
    pub uuid: [u8; 16],
    pub luid: [c_char; 8],
    pub luidDeviceNodeMask: u32,
    pub totalGlobalMem: usize,
    pub sharedMemPerBlock: usize,
    pub regsPerBlock: i32,
    pub warpSize: i32,
    pub memPitch: usize,
    pub maxThreadsPerBlock: i32,
    pub maxThreadsDim: [i32; 3],
    pub maxGridSize: [i32; 3],
    pub totalConstMem: usize,
    pub major: i32,
    pub minor: i32,
    pub textureAlignment: usize,
    pub texturePitchAlignment: usize,
    pub multiProcessorCount: i32,
    pub integrated: i32,
    pub canMapHostMemory: i32,
    pub maxTexture1D: i32,
    pub maxTexture1DMipmap: i32,
    pub maxTexture2D: [i32; 2],
    pub maxTexture2DMipmap: [i32; 2],
    pub maxTexture2DLinear: [i32; 3],
    pub maxTexture2DGather: [i32; 2],
    pub maxTexture3D: [i32; 3],
    pub maxTexture3DAlt: [i32; 3],
    pub maxTextureCubemap: i32,
    pub maxTexture1DLayered: [i32; 2],
    pub maxTexture2DLayered: [i32; 3],
    pub maxTextureCubemapLayered: [i32; 2],
    pub maxSurface1D: i32,
    pub maxSurface2D: [i32; 2],
    pub maxSurface3D: [i32; 3],
    pub maxSurface1DLayered: [i32; 2],
    pub maxSurface2DLayered: [i32; 3],
    pub maxSurfaceCubemap: i32,
    pub maxSurfaceCubemapLayered: [i32; 2],
    pub surfaceAlignment: usize,
    pub concurrentKernels: i32,
    pub ECCEnabled: i32,
    pub pciBusID: i32,
    pub pciDeviceID: i32,
    pub pciDomainID: i32,
    pub tccDriver: i32,
    pub asyncEngineCount: i32,
    pub unifiedAddressing: i32,
    pub memoryBusWidth: i32,
    pub l2CacheSize: i32,
    pub persistingL2CacheMaxSize: i32,
    pub maxThreadsPerMultiProcessor: i32,
    pub streamPrioritiesSupported: i32,
    pub globalL1CacheSupported: i32,
    pub localL1CacheSupported: i32,
    pub sharedMemPerMultiprocessor: usize,
    pub regsPerMultiprocessor: i32,
    pub managedMemory: i32,
    pub isMultiGpuBoard: i32,
    pub multiGpuBoardGroupID: i32,
    pub hostNativeAtomicSupported: i32,
    pub pageableMemoryAccess: i32,
    pub concurrentManagedAccess: i32,
    pub computePreemptionSupported: i32,
    pub canUseHostPointerForRegisteredMem: i32,
    pub cooperativeLaunch: i32,
    pub sharedMemPerBlockOptin: usize,
    pub pageableMemoryAccessUsesHostPageTables: i32,
    pub directManagedMemAccessFromHost: i32,
    pub maxBlocksPerMultiProcessor: i32,
    pub accessPolicyMaxWindowSize: i32,
    pub reservedSharedMemPerBlock: usize,
    pub hostRegisterSupported: i32,
    pub sparseCudaArraySupported: i32,
    pub hostRegisterReadOnlySupported: i32,
    pub timelineSemaphoreInteropSupported: i32,
    pub memoryPoolsSupported: i32,
    pub gpuDirectRDMASupported: i32,
    pub gpuDirectRDMAFlushWritesOptions: u32,
    pub gpuDirectRDMAWritesOrdering: i32,
    pub memoryPoolSupportedHandleTypes: u32,
    pub deferredMappingCudaArraySupported: i32,
    pub ipcEventSupported: i32,
    pub clusterLaunch: i32,
    pub unifiedFunctionPointers: i32,
    pub deviceNumaConfig: i32,
    pub deviceNumaId: i32,
    pub mpsEnabled: i32,
    pub hostNumaId: i32,
    pub gpuPciDeviceID: u32,
    pub gpuPciSubsystemID: u32,
    pub hostNumaMultinodeIpcSupported: i32,
    pub reserved: [i32; 56],
}

/// The attributes each field is filled from (CUdevice_attribute values from cuda.h):
/// `(field, [attributes])`, in the struct's order. Kept as data so the ABI test can
/// check every field's offset and every value against the headers.
pub const PROP_ATTRIBUTES: &[(&str, &[i32])] = &[
    ("sharedMemPerBlock", &[8]),             // MAX_SHARED_MEMORY_PER_BLOCK
    ("regsPerBlock", &[12]),                 // MAX_REGISTERS_PER_BLOCK
    ("warpSize", &[10]),                     // WARP_SIZE
    ("memPitch", &[11]),                     // MAX_PITCH
    ("maxThreadsPerBlock", &[1]),            // MAX_THREADS_PER_BLOCK
    ("maxThreadsDim", &[2, 3, 4]),           // MAX_BLOCK_DIM_X, MAX_BLOCK_DIM_Y, MAX_BLOCK_DIM_Z
    ("maxGridSize", &[5, 6, 7]),             // MAX_GRID_DIM_X, MAX_GRID_DIM_Y, MAX_GRID_DIM_Z
    ("totalConstMem", &[9]),                 // TOTAL_CONSTANT_MEMORY
    ("major", &[75]),                        // COMPUTE_CAPABILITY_MAJOR
    ("minor", &[76]),                        // COMPUTE_CAPABILITY_MINOR
    ("textureAlignment", &[14]),             // TEXTURE_ALIGNMENT
    ("texturePitchAlignment", &[51]),        // TEXTURE_PITCH_ALIGNMENT
    ("multiProcessorCount", &[16]),          // MULTIPROCESSOR_COUNT
    ("integrated", &[18]),                   // INTEGRATED
    ("canMapHostMemory", &[19]),             // CAN_MAP_HOST_MEMORY
    ("maxTexture1D", &[21]),                 // MAXIMUM_TEXTURE1D_WIDTH
    ("maxTexture1DMipmap", &[77]),           // MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH
    ("maxTexture2D", &[22, 23]),             // MAXIMUM_TEXTURE2D_WIDTH, MAXIMUM_TEXTURE2D_HEIGHT
    ("maxTexture2DMipmap", &[73, 74]), // MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH, MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT
    ("maxTexture2DLinear", &[70, 71, 72]), // MAXIMUM_TEXTURE2D_LINEAR_WIDTH, MAXIMUM_TEXTURE2D_LINEAR_HEIGHT, MAXIMUM_TEXTURE2D_LINEAR_PITCH
    ("maxTexture2DGather", &[45, 46]), // MAXIMUM_TEXTURE2D_GATHER_WIDTH, MAXIMUM_TEXTURE2D_GATHER_HEIGHT
    ("maxTexture3D", &[24, 25, 26]), // MAXIMUM_TEXTURE3D_WIDTH, MAXIMUM_TEXTURE3D_HEIGHT, MAXIMUM_TEXTURE3D_DEPTH
    ("maxTexture3DAlt", &[47, 48, 49]), // MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE, MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE, MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE
    ("maxTextureCubemap", &[52]),       // MAXIMUM_TEXTURECUBEMAP_WIDTH
    ("maxTexture1DLayered", &[42, 43]), // MAXIMUM_TEXTURE1D_LAYERED_WIDTH, MAXIMUM_TEXTURE1D_LAYERED_LAYERS
    ("maxTexture2DLayered", &[27, 28, 29]), // MAXIMUM_TEXTURE2D_LAYERED_WIDTH, MAXIMUM_TEXTURE2D_LAYERED_HEIGHT, MAXIMUM_TEXTURE2D_LAYERED_LAYERS
    ("maxTextureCubemapLayered", &[53, 54]), // MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH, MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS
    ("maxSurface1D", &[55]),                 // MAXIMUM_SURFACE1D_WIDTH
    ("maxSurface2D", &[56, 57]),             // MAXIMUM_SURFACE2D_WIDTH, MAXIMUM_SURFACE2D_HEIGHT
    ("maxSurface3D", &[58, 59, 60]), // MAXIMUM_SURFACE3D_WIDTH, MAXIMUM_SURFACE3D_HEIGHT, MAXIMUM_SURFACE3D_DEPTH
    ("maxSurface1DLayered", &[61, 62]), // MAXIMUM_SURFACE1D_LAYERED_WIDTH, MAXIMUM_SURFACE1D_LAYERED_LAYERS
    ("maxSurface2DLayered", &[63, 64, 65]), // MAXIMUM_SURFACE2D_LAYERED_WIDTH, MAXIMUM_SURFACE2D_LAYERED_HEIGHT, MAXIMUM_SURFACE2D_LAYERED_LAYERS
    ("maxSurfaceCubemap", &[66]),           // MAXIMUM_SURFACECUBEMAP_WIDTH
    ("maxSurfaceCubemapLayered", &[67, 68]), // MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH, MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS
    ("surfaceAlignment", &[30]),             // SURFACE_ALIGNMENT
    ("concurrentKernels", &[31]),            // CONCURRENT_KERNELS
    ("ECCEnabled", &[32]),                   // ECC_ENABLED
    ("pciBusID", &[33]),                     // PCI_BUS_ID
    ("pciDeviceID", &[34]),                  // PCI_DEVICE_ID
    ("pciDomainID", &[50]),                  // PCI_DOMAIN_ID
    ("tccDriver", &[35]),                    // TCC_DRIVER
    ("asyncEngineCount", &[40]),             // ASYNC_ENGINE_COUNT
    ("unifiedAddressing", &[41]),            // UNIFIED_ADDRESSING
    ("memoryBusWidth", &[37]),               // GLOBAL_MEMORY_BUS_WIDTH
    ("l2CacheSize", &[38]),                  // L2_CACHE_SIZE
    ("persistingL2CacheMaxSize", &[108]),    // MAX_PERSISTING_L2_CACHE_SIZE
    ("maxThreadsPerMultiProcessor", &[39]),  // MAX_THREADS_PER_MULTIPROCESSOR
    ("streamPrioritiesSupported", &[78]),    // STREAM_PRIORITIES_SUPPORTED
    ("globalL1CacheSupported", &[79]),       // GLOBAL_L1_CACHE_SUPPORTED
    ("localL1CacheSupported", &[80]),        // LOCAL_L1_CACHE_SUPPORTED
    ("sharedMemPerMultiprocessor", &[81]),   // MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
    ("regsPerMultiprocessor", &[82]),        // MAX_REGISTERS_PER_MULTIPROCESSOR
    ("managedMemory", &[83]),                // MANAGED_MEMORY
    ("isMultiGpuBoard", &[84]),              // MULTI_GPU_BOARD
    ("multiGpuBoardGroupID", &[85]),         // MULTI_GPU_BOARD_GROUP_ID
    ("hostNativeAtomicSupported", &[86]),    // HOST_NATIVE_ATOMIC_SUPPORTED
    ("pageableMemoryAccess", &[88]),         // PAGEABLE_MEMORY_ACCESS
    ("concurrentManagedAccess", &[89]),      // CONCURRENT_MANAGED_ACCESS
    ("computePreemptionSupported", &[90]),   // COMPUTE_PREEMPTION_SUPPORTED
    ("canUseHostPointerForRegisteredMem", &[91]), // CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM
    ("cooperativeLaunch", &[95]),            // COOPERATIVE_LAUNCH
    ("sharedMemPerBlockOptin", &[97]),       // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    ("pageableMemoryAccessUsesHostPageTables", &[100]), // PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES
    ("directManagedMemAccessFromHost", &[101]),         // DIRECT_MANAGED_MEM_ACCESS_FROM_HOST
    ("maxBlocksPerMultiProcessor", &[106]),             // MAX_BLOCKS_PER_MULTIPROCESSOR
    ("accessPolicyMaxWindowSize", &[109]),              // MAX_ACCESS_POLICY_WINDOW_SIZE
    ("reservedSharedMemPerBlock", &[111]),              // RESERVED_SHARED_MEMORY_PER_BLOCK
    ("hostRegisterSupported", &[99]),                   // HOST_REGISTER_SUPPORTED
    ("sparseCudaArraySupported", &[112]),               // SPARSE_CUDA_ARRAY_SUPPORTED
    ("hostRegisterReadOnlySupported", &[113]),          // READ_ONLY_HOST_REGISTER_SUPPORTED
    ("timelineSemaphoreInteropSupported", &[114]),      // TIMELINE_SEMAPHORE_INTEROP_SUPPORTED
    ("memoryPoolsSupported", &[115]),                   // MEMORY_POOLS_SUPPORTED
    ("gpuDirectRDMASupported", &[116]),                 // GPU_DIRECT_RDMA_SUPPORTED
    ("gpuDirectRDMAFlushWritesOptions", &[117]),        // GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS
    ("gpuDirectRDMAWritesOrdering", &[118]),            // GPU_DIRECT_RDMA_WRITES_ORDERING
    ("memoryPoolSupportedHandleTypes", &[119]),         // MEMPOOL_SUPPORTED_HANDLE_TYPES
    ("deferredMappingCudaArraySupported", &[121]),      // DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED
    ("ipcEventSupported", &[125]),                      // IPC_EVENT_SUPPORTED
    ("clusterLaunch", &[120]),                          // CLUSTER_LAUNCH
    ("unifiedFunctionPointers", &[129]),                // UNIFIED_FUNCTION_POINTERS
    ("deviceNumaConfig", &[130]),                       // NUMA_CONFIG
    ("deviceNumaId", &[131]),                           // NUMA_ID
    ("mpsEnabled", &[133]),                             // MPS_ENABLED
    ("hostNumaId", &[134]),                             // HOST_NUMA_ID
    ("gpuPciDeviceID", &[139]),                         // GPU_PCI_DEVICE_ID
    ("gpuPciSubsystemID", &[140]),                      // GPU_PCI_SUBSYSTEM_ID
    ("hostNumaMultinodeIpcSupported", &[143]),          // HOST_NUMA_MULTINODE_IPC_SUPPORTED
];

impl CudaDeviceProp {
    /// Sets one field from its attribute values.
    pub fn set(&mut self, field: &str, v: &[i32]) {
        match field {
            "sharedMemPerBlock" => self.sharedMemPerBlock = v[0] as usize,
            "regsPerBlock" => self.regsPerBlock = v[0],
            "warpSize" => self.warpSize = v[0],
            "memPitch" => self.memPitch = v[0] as usize,
            "maxThreadsPerBlock" => self.maxThreadsPerBlock = v[0],
            "maxThreadsDim" => self.maxThreadsDim.copy_from_slice(&v[..3]),
            "maxGridSize" => self.maxGridSize.copy_from_slice(&v[..3]),
            "totalConstMem" => self.totalConstMem = v[0] as usize,
            "major" => self.major = v[0],
            "minor" => self.minor = v[0],
            "textureAlignment" => self.textureAlignment = v[0] as usize,
            "texturePitchAlignment" => self.texturePitchAlignment = v[0] as usize,
            "multiProcessorCount" => self.multiProcessorCount = v[0],
            "integrated" => self.integrated = v[0],
            "canMapHostMemory" => self.canMapHostMemory = v[0],
            "maxTexture1D" => self.maxTexture1D = v[0],
            "maxTexture1DMipmap" => self.maxTexture1DMipmap = v[0],
            "maxTexture2D" => self.maxTexture2D.copy_from_slice(&v[..2]),
            "maxTexture2DMipmap" => self.maxTexture2DMipmap.copy_from_slice(&v[..2]),
            "maxTexture2DLinear" => self.maxTexture2DLinear.copy_from_slice(&v[..3]),
            "maxTexture2DGather" => self.maxTexture2DGather.copy_from_slice(&v[..2]),
            "maxTexture3D" => self.maxTexture3D.copy_from_slice(&v[..3]),
            "maxTexture3DAlt" => self.maxTexture3DAlt.copy_from_slice(&v[..3]),
            "maxTextureCubemap" => self.maxTextureCubemap = v[0],
            "maxTexture1DLayered" => self.maxTexture1DLayered.copy_from_slice(&v[..2]),
            "maxTexture2DLayered" => self.maxTexture2DLayered.copy_from_slice(&v[..3]),
            "maxTextureCubemapLayered" => self.maxTextureCubemapLayered.copy_from_slice(&v[..2]),
            "maxSurface1D" => self.maxSurface1D = v[0],
            "maxSurface2D" => self.maxSurface2D.copy_from_slice(&v[..2]),
            "maxSurface3D" => self.maxSurface3D.copy_from_slice(&v[..3]),
            "maxSurface1DLayered" => self.maxSurface1DLayered.copy_from_slice(&v[..2]),
            "maxSurface2DLayered" => self.maxSurface2DLayered.copy_from_slice(&v[..3]),
            "maxSurfaceCubemap" => self.maxSurfaceCubemap = v[0],
            "maxSurfaceCubemapLayered" => self.maxSurfaceCubemapLayered.copy_from_slice(&v[..2]),
            "surfaceAlignment" => self.surfaceAlignment = v[0] as usize,
            "concurrentKernels" => self.concurrentKernels = v[0],
            "ECCEnabled" => self.ECCEnabled = v[0],
            "pciBusID" => self.pciBusID = v[0],
            "pciDeviceID" => self.pciDeviceID = v[0],
            "pciDomainID" => self.pciDomainID = v[0],
            "tccDriver" => self.tccDriver = v[0],
            "asyncEngineCount" => self.asyncEngineCount = v[0],
            "unifiedAddressing" => self.unifiedAddressing = v[0],
            "memoryBusWidth" => self.memoryBusWidth = v[0],
            "l2CacheSize" => self.l2CacheSize = v[0],
            "persistingL2CacheMaxSize" => self.persistingL2CacheMaxSize = v[0],
            "maxThreadsPerMultiProcessor" => self.maxThreadsPerMultiProcessor = v[0],
            "streamPrioritiesSupported" => self.streamPrioritiesSupported = v[0],
            "globalL1CacheSupported" => self.globalL1CacheSupported = v[0],
            "localL1CacheSupported" => self.localL1CacheSupported = v[0],
            "sharedMemPerMultiprocessor" => self.sharedMemPerMultiprocessor = v[0] as usize,
            "regsPerMultiprocessor" => self.regsPerMultiprocessor = v[0],
            "managedMemory" => self.managedMemory = v[0],
            "isMultiGpuBoard" => self.isMultiGpuBoard = v[0],
            "multiGpuBoardGroupID" => self.multiGpuBoardGroupID = v[0],
            "hostNativeAtomicSupported" => self.hostNativeAtomicSupported = v[0],
            "pageableMemoryAccess" => self.pageableMemoryAccess = v[0],
            "concurrentManagedAccess" => self.concurrentManagedAccess = v[0],
            "computePreemptionSupported" => self.computePreemptionSupported = v[0],
            "canUseHostPointerForRegisteredMem" => self.canUseHostPointerForRegisteredMem = v[0],
            "cooperativeLaunch" => self.cooperativeLaunch = v[0],
            "sharedMemPerBlockOptin" => self.sharedMemPerBlockOptin = v[0] as usize,
            "pageableMemoryAccessUsesHostPageTables" => {
                self.pageableMemoryAccessUsesHostPageTables = v[0]
            }
            "directManagedMemAccessFromHost" => self.directManagedMemAccessFromHost = v[0],
            "maxBlocksPerMultiProcessor" => self.maxBlocksPerMultiProcessor = v[0],
            "accessPolicyMaxWindowSize" => self.accessPolicyMaxWindowSize = v[0],
            "reservedSharedMemPerBlock" => self.reservedSharedMemPerBlock = v[0] as usize,
            "hostRegisterSupported" => self.hostRegisterSupported = v[0],
            "sparseCudaArraySupported" => self.sparseCudaArraySupported = v[0],
            "hostRegisterReadOnlySupported" => self.hostRegisterReadOnlySupported = v[0],
            "timelineSemaphoreInteropSupported" => self.timelineSemaphoreInteropSupported = v[0],
            "memoryPoolsSupported" => self.memoryPoolsSupported = v[0],
            "gpuDirectRDMASupported" => self.gpuDirectRDMASupported = v[0],
            "gpuDirectRDMAFlushWritesOptions" => self.gpuDirectRDMAFlushWritesOptions = v[0] as u32,
            "gpuDirectRDMAWritesOrdering" => self.gpuDirectRDMAWritesOrdering = v[0],
            "memoryPoolSupportedHandleTypes" => self.memoryPoolSupportedHandleTypes = v[0] as u32,
            "deferredMappingCudaArraySupported" => self.deferredMappingCudaArraySupported = v[0],
            "ipcEventSupported" => self.ipcEventSupported = v[0],
            "clusterLaunch" => self.clusterLaunch = v[0],
            "unifiedFunctionPointers" => self.unifiedFunctionPointers = v[0],
            "deviceNumaConfig" => self.deviceNumaConfig = v[0],
            "deviceNumaId" => self.deviceNumaId = v[0],
            "mpsEnabled" => self.mpsEnabled = v[0],
            "hostNumaId" => self.hostNumaId = v[0],
            "gpuPciDeviceID" => self.gpuPciDeviceID = v[0] as u32,
            "gpuPciSubsystemID" => self.gpuPciSubsystemID = v[0] as u32,
            "hostNumaMultinodeIpcSupported" => self.hostNumaMultinodeIpcSupported = v[0],
            other => unreachable!("{other} is not in PROP_ATTRIBUTES"),
        }
    }
}
