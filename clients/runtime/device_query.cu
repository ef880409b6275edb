// Device queries: count, selection, properties, attributes, versions, errors.
#include "common.h"

int main(void) {
    int n = -1, dev = -1, v = -1;
    T(cudaGetDeviceCount(&n));
    OUT("count=%d", n);
    T(cudaGetDevice(&dev));
    OUT("device=%d", dev);
    T(cudaSetDevice(0));
    T(cudaSetDevice(n));
    T(cudaGetLastError());
    T(cudaGetLastError());
    T(cudaSetDevice(-1));
    T(cudaPeekAtLastError());
    T(cudaGetLastError());
    T(cudaGetDevice(&dev));
    OUT("device=%d", dev);
    T(cudaRuntimeGetVersion(&v));
    OUT("runtime=%d", v);
    T(cudaDriverGetVersion(&v));
    OUT("driver=%d", v);

    cudaDeviceProp p;
    memset(&p, 0xab, sizeof p);
    T(cudaGetDeviceProperties(&p, 0));
    OUT("name=%s", p.name);
    OUT("totalGlobalMem=%zu", p.totalGlobalMem);
    OUT("major=%d minor=%d multiProcessorCount=%d", p.major, p.minor, p.multiProcessorCount);
    OUT("warpSize=%d maxThreadsPerBlock=%d maxThreadsDim=%d,%d,%d", p.warpSize, p.maxThreadsPerBlock,
        p.maxThreadsDim[0], p.maxThreadsDim[1], p.maxThreadsDim[2]);
    OUT("maxGridSize=%d,%d,%d", p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2]);
    OUT("sharedMemPerBlock=%zu sharedMemPerBlockOptin=%zu sharedMemPerMultiprocessor=%zu", p.sharedMemPerBlock,
        p.sharedMemPerBlockOptin, p.sharedMemPerMultiprocessor);
    OUT("regsPerBlock=%d regsPerMultiprocessor=%d l2CacheSize=%d memoryBusWidth=%d", p.regsPerBlock,
        p.regsPerMultiprocessor, p.l2CacheSize, p.memoryBusWidth);
    OUT("unifiedAddressing=%d managedMemory=%d concurrentManagedAccess=%d canMapHostMemory=%d", p.unifiedAddressing,
        p.managedMemory, p.concurrentManagedAccess, p.canMapHostMemory);
    OUT("memoryPoolsSupported=%d memoryPoolSupportedHandleTypes=%u ipcEventSupported=%d", p.memoryPoolsSupported,
        p.memoryPoolSupportedHandleTypes, p.ipcEventSupported);
    OUT("asyncEngineCount=%d concurrentKernels=%d streamPrioritiesSupported=%d", p.asyncEngineCount,
        p.concurrentKernels, p.streamPrioritiesSupported);
    OUT("textureAlignment=%zu texturePitchAlignment=%zu memPitch=%zu totalConstMem=%zu", p.textureAlignment,
        p.texturePitchAlignment, p.memPitch, p.totalConstMem);
    OUT("maxTexture2D=%d,%d maxSurface3D=%d,%d,%d", p.maxTexture2D[0], p.maxTexture2D[1], p.maxSurface3D[0],
        p.maxSurface3D[1], p.maxSurface3D[2]);
    OUT("integrated=%d tccDriver=%d ECCEnabled=%d cooperativeLaunch=%d clusterLaunch=%d", p.integrated, p.tccDriver,
        p.ECCEnabled, p.cooperativeLaunch, p.clusterLaunch);
    OUT("maxBlocksPerMultiProcessor=%d maxThreadsPerMultiProcessor=%d", p.maxBlocksPerMultiProcessor,
        p.maxThreadsPerMultiProcessor);
    int zero_reserved = 1;
    for (int i = 0; i < 56; i++) zero_reserved &= p.reserved[i] == 0;
    OUT("reserved all zero=%d luidDeviceNodeMask=%u", zero_reserved, p.luidDeviceNodeMask);
    T(cudaGetDeviceProperties(&p, n));
    T(cudaGetDeviceProperties(NULL, 0));

    int a = -1;
    T(cudaDeviceGetAttribute(&a, cudaDevAttrMultiProcessorCount, 0));
    OUT("multiProcessorCount=%d", a);
    T(cudaDeviceGetAttribute(&a, cudaDevAttrComputeCapabilityMajor, 0));
    OUT("major=%d", a);
    T(cudaDeviceGetAttribute(&a, cudaDevAttrMemoryPoolsSupported, 0));
    OUT("memoryPoolsSupported=%d", a);
    T(cudaDeviceGetAttribute(&a, cudaDevAttrUnifiedAddressing, 0));
    OUT("unifiedAddressing=%d", a);
    T(cudaDeviceGetAttribute(&a, (cudaDeviceAttr)100000, 0));
    T(cudaDeviceGetAttribute(&a, cudaDevAttrMultiProcessorCount, n));
    T(cudaDeviceGetAttribute(NULL, cudaDevAttrMultiProcessorCount, 0));
    T(cudaGetLastError());

    char bus[32] = {0};
    T(cudaDeviceGetPCIBusId(bus, sizeof bus, 0));
    OUT("pciBusId has %zu chars", strlen(bus));

    int can = -1;
    T(cudaDeviceCanAccessPeer(&can, 0, 0));
    OUT("canAccessPeer(0,0)=%d", can);

    unsigned flags = 0;
    T(cudaGetDeviceFlags(&flags));
    OUT("flags=%#x", flags);

    size_t free_b = 0, total_b = 0;
    T(cudaMemGetInfo(&free_b, &total_b));
    OUT("total=%zu free<=total=%d", total_b, free_b <= total_b);

    T(cudaDeviceSynchronize());
    T(cudaDeviceReset());
    T(cudaGetDeviceCount(&n));
    OUT("count=%d", n);
    T(cudaDeviceSynchronize());

    OUT("errorName(cudaErrorMemoryAllocation)=%s", cudaGetErrorName(cudaErrorMemoryAllocation));
    OUT("errorString(cudaErrorMemoryAllocation)=%s", cudaGetErrorString(cudaErrorMemoryAllocation));
    OUT("errorString(cudaErrorInvalidValue)=%s", cudaGetErrorString(cudaErrorInvalidValue));
    OUT("errorString(cudaErrorIllegalAddress)=%s", cudaGetErrorString(cudaErrorIllegalAddress));
    OUT("errorString(cudaSuccess)=%s", cudaGetErrorString(cudaSuccess));
    OUT("errorName(12345)=%s", cudaGetErrorName((cudaError_t)12345));
    OUT("errorString(12345)=%s", cudaGetErrorString((cudaError_t)12345));
    return finish();
}
