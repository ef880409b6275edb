/* An ordering bug of the virtual memory API planted for CUMOCK_MISUSE=1
 * (mock-driver/tests/ordering_vmm.rs): a kernel on a non-blocking stream writes a VMM
 * mapping; the host sees a flag a later kernel raises (a kernel that reads the flag too:
 * it talks to the host, so no load of it is trapped) and then, with no synchronisation,
 *   unmap        cuMemUnmap's the mapping the kernel wrote: reported, naming both
 *   unmap-fixed  synchronises with the stream first: no report */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flag_kernels.h"

int main(int argc, char **argv) {
    int fixed = argc > 1 && strcmp(argv[1], "unmap-fixed") == 0;
    CUcontext ctx;
    CUmodule m;
    CUfunction put, raise_flag;
    CUstream s;
    MUST(cuInit(0));
    MUST(cuDevicePrimaryCtxRetain(&ctx, 0));
    MUST(cuCtxSetCurrent(ctx));
    MUST(cuModuleLoadData(&m, ptx));
    MUST(cuModuleGetFunction(&put, m, "put"));
    MUST(cuModuleGetFunction(&raise_flag, m, "raise"));
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t g = 0;
    MUST(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CUmemGenericAllocationHandle h;
    MUST(cuMemCreate(&h, g, &prop, 0));
    CUdeviceptr va;
    MUST(cuMemAddressReserve(&va, g, 0, 0, 0));
    MUST(cuMemMap(va, g, 0, h, 0));
    CUmemAccessDesc access;
    memset(&access, 0, sizeof access);
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    MUST(cuMemSetAccess(va, g, &access, 1));

    unsigned *flag;
    MUST(cuMemAllocHost((void **)&flag, 4096));
    *flag = 0;
    CUdeviceptr f = (CUdeviceptr)(uintptr_t)flag;
    unsigned seven = 7;
    void *put_args[] = {&va, &seven};
    void *raise_args[] = {&f};
    MUST(cuLaunchKernel(put, 1, 1, 1, 1, 1, 1, 0, s, put_args, NULL));
    MUST(cuLaunchKernel(raise_flag, 1, 1, 1, 1, 1, 1, 0, s, raise_args, NULL));
    while (*(volatile unsigned *)flag == 0) {
    }
    if (fixed) MUST(cuStreamSynchronize(s));
    MUST(cuMemUnmap(va, g));
    MUST(cuMemRelease(h));
    MUST(cuMemAddressFree(va, g));
    MUST(cuStreamSynchronize(s));
    MUST(cuMemFreeHost(flag));
    printf("done\n");
    return 0;
}
