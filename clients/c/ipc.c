/* Sharing between processes in the style of NVIDIA's memMapIPCDrv sample: the parent
 * creates several exportable allocations, sends their fds to child processes over a Unix
 * socket (SCM_RIGHTS), each child imports and maps all of them, writes its own slot, and
 * the parent checks every child's writes. Children are fork + exec'd, as the sample does. */
#include "common.h"

enum { ALLOCS = 3, CHILDREN = 2 };

static int child(int sock, int index) {
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CHECK(cuCtxSetCurrent(ctx));
    size_t g = 0;
    CUdeviceptr va = map_received(sock, ALLOCS, &g);
    /* Each child writes its slot in every allocation, and reads the parent's header. */
    for (int i = 0; i < ALLOCS; i++) {
        unsigned head = 0, mine = 0xC0DE0000u | (unsigned)(index << 8) | (unsigned)i;
        CHECK(cuMemcpyDtoH(&head, va + i * g, sizeof head));
        EXPECT(head == 0xAB000000u + (unsigned)i);
        CHECK(cuMemcpyHtoD(va + i * g + 4096 * (1 + index), &mine, sizeof mine));
    }
    CHECK(cuCtxSynchronize());
    char done = 'd';
    EXPECT(write(sock, &done, 1) == 1);
    CHECK(cuMemUnmap(va, ALLOCS * g));
    CHECK(cuMemAddressFree(va, ALLOCS * g));
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "child") == 0) return child(atoi(argv[2]), atoi(argv[3]));
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CHECK(cuCtxSetCurrent(ctx));
    size_t g = 0;
    CUmemAllocationProp p = prop_on(0, 1);
    CHECK(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CUdeviceptr va;
    CHECK(cuMemAddressReserve(&va, ALLOCS * g, 0, 0, 0));
    CUmemGenericAllocationHandle h[ALLOCS];
    int fds[ALLOCS];
    CUmemAccessDesc d = rw_for(0);
    for (int i = 0; i < ALLOCS; i++) {
        CHECK(cuMemCreate(&h[i], g, &p, 0));
        CHECK(cuMemMap(va + i * g, g, 0, h[i], 0));
        CHECK(cuMemSetAccess(va + i * g, g, &d, 1));
        unsigned head = 0xAB000000u + (unsigned)i;
        CHECK(cuMemcpyHtoD(va + i * g, &head, sizeof head));
        CHECK(cuMemExportToShareableHandle(&fds[i], h[i], CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    }
    pid_t pids[CHILDREN];
    int socks[CHILDREN];
    const char *args[] = {argv[0], "child", NULL};
    spawn_children(CHILDREN, args, fds, ALLOCS, pids, socks);
    wait_children(CHILDREN, pids, socks);
    for (int i = 0; i < ALLOCS; i++) {
        for (int c = 0; c < CHILDREN; c++) {
            unsigned got = 0;
            CHECK(cuMemcpyDtoH(&got, va + i * g + 4096 * (1 + c), sizeof got));
            EXPECT(got == (0xC0DE0000u | (unsigned)(c << 8) | (unsigned)i));
        }
        close(fds[i]);
    }
    CHECK(cuMemUnmap(va, ALLOCS * g));
    for (int i = 0; i < ALLOCS; i++) CHECK(cuMemRelease(h[i]));
    CHECK(cuMemAddressFree(va, ALLOCS * g));
    CHECK(cuDevicePrimaryCtxRelease(0));
    printf("ok %d children, %d allocations\n", CHILDREN, ALLOCS);
    return 0;
}
