/* NVIDIA's memMapIPCDrv sample, in spirit: the parent creates one exportable allocation
 * per child, sends the fds over a Unix socket; each fork + exec'd child imports all of
 * them, maps them into one range, and launches memMapIpc_kernel (from the fatbin nvcc
 * built, clients/kernels/samples.cu) to fill its own slice with its value; the parent
 * checks every byte. Usage: ipc_kernels SAMPLES.fatbin */
#include "common.h"

enum { CHILDREN = 3 };

static int child(const char *fatbin, int sock, int index) {
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CHECK(cuCtxSetCurrent(ctx));
    CUmodule mod;
    CUfunction fill;
    CHECK(cuModuleLoad(&mod, fatbin));
    CHECK(cuModuleGetFunction(&fill, mod, "memMapIpc_kernel"));
    size_t g = 0;
    CUdeviceptr va = map_received(sock, CHILDREN, &g);
    CUdeviceptr slice = va + index * g;
    int sz = (int)g;
    char val = (char)(index + 1);
    void *args[] = {&slice, &sz, &val};
    CHECK(cuLaunchKernel(fill, 64, 1, 1, 256, 1, 1, 0, 0, args, NULL));
    CHECK(cuCtxSynchronize());
    char done = 'd';
    EXPECT(write(sock, &done, 1) == 1);
    CHECK(cuMemUnmap(va, CHILDREN * g));
    CHECK(cuMemAddressFree(va, CHILDREN * g));
    CHECK(cuModuleUnload(mod));
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[2], "child") == 0) return child(argv[1], atoi(argv[3]), atoi(argv[4]));
    EXPECT(argc == 2);
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CHECK(cuCtxSetCurrent(ctx));
    size_t g = 0;
    CUmemAllocationProp p = prop_on(0, 1);
    CHECK(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CUdeviceptr va;
    CHECK(cuMemAddressReserve(&va, CHILDREN * g, 0, 0, 0));
    CUmemGenericAllocationHandle h[CHILDREN];
    int fds[CHILDREN];
    CUmemAccessDesc d = rw_for(0);
    for (int i = 0; i < CHILDREN; i++) {
        CHECK(cuMemCreate(&h[i], g, &p, 0));
        CHECK(cuMemMap(va + i * g, g, 0, h[i], 0));
        CHECK(cuMemExportToShareableHandle(&fds[i], h[i], CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    }
    CHECK(cuMemSetAccess(va, CHILDREN * g, &d, 1));
    CHECK(cuMemsetD8(va, 0, CHILDREN * g));
    CHECK(cuCtxSynchronize());
    pid_t pids[CHILDREN];
    int socks[CHILDREN];
    const char *args[] = {argv[0], argv[1], "child", NULL};
    spawn_children(CHILDREN, args, fds, CHILDREN, pids, socks);
    wait_children(CHILDREN, pids, socks);
    char *back = malloc(g);
    for (int c = 0; c < CHILDREN; c++) {
        CHECK(cuMemcpyDtoH(back, va + c * g, g));
        for (size_t i = 0; i < g; i++) EXPECT(back[i] == (char)(c + 1));
        close(fds[c]);
    }
    CHECK(cuMemUnmap(va, CHILDREN * g));
    for (int i = 0; i < CHILDREN; i++) CHECK(cuMemRelease(h[i]));
    CHECK(cuMemAddressFree(va, CHILDREN * g));
    CHECK(cuDevicePrimaryCtxRelease(0));
    free(back);
    printf("ok %d children each filled its slice with a kernel\n", CHILDREN);
    return 0;
}
