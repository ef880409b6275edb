/* An allocator's life on the VMM API, compiled against NVIDIA's cuda.h and linked with
 * -lcuda: reserve a large range, grow it chunk by chunk, grant access, copy across chunk
 * boundaries, alias a chunk at a second address, share one allocation with a second
 * process through an fd sent over a Unix socket (SCM_RIGHTS), both sides writing and
 * reading, then free everything. Prints "ok" and exits 0 when every check holds; runs
 * unchanged on the mock and on a real driver. */
#include "common.h"
#include <sys/wait.h>
#include <unistd.h>

static void fill(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 31 + seed);
}

static int check(const unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(i * 31 + seed)) return 0;
    return 1;
}

static void grant(CUdeviceptr p, size_t size) {
    CUmemAccessDesc d = rw_for(0);
    CHECK(cuMemSetAccess(p, size, &d, 1));
}

/* The second process: receives the fd, imports, maps, reads the first side's data and
 * writes its own after it. */
static int importer(int sock, size_t size) {
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CHECK(cuCtxSetCurrent(ctx));
    int fd;
    EXPECT(recv_fds(sock, &fd) == 1);
    CUmemGenericAllocationHandle h;
    CHECK(cuMemImportFromShareableHandle(&h, (void *)(long)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd);
    CUdeviceptr va;
    CHECK(cuMemAddressReserve(&va, size, 0, 0, 0));
    CHECK(cuMemMap(va, size, 0, h, 0));
    unsigned char probe[16];
    EXPECT(cuMemcpyDtoH(probe, va, sizeof probe) == CUDA_ERROR_INVALID_VALUE); /* no access yet */
    grant(va, size);
    unsigned char *buf = malloc(4096);
    CHECK(cuMemcpyDtoH(buf, va, 4096));
    EXPECT(check(buf, 4096, 7));
    fill(buf, 4096, 9);
    CHECK(cuMemcpyHtoD(va + 4096, buf, 4096));
    CHECK(cuCtxSynchronize());
    char done = 'd';
    EXPECT(write(sock, &done, 1) == 1);
    CHECK(cuMemUnmap(va, size));
    CHECK(cuMemRelease(h));
    CHECK(cuMemAddressFree(va, size));
    CHECK(cuDevicePrimaryCtxRelease(0));
    free(buf);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "importer") == 0) {
        CHECK(cuInit(0));
        size_t g = 0;
        CUmemAllocationProp prop = prop_on(0, 1);
        CHECK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        return importer(atoi(argv[2]), g);
    }

    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CHECK(cuCtxSetCurrent(ctx));

    CUmemAllocationProp prop = prop_on(0, 0);
    size_t g = 0;
    CHECK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    EXPECT(g >= 4096 && (g & (g - 1)) == 0);

    /* A large reservation, grown chunk by chunk without copying. */
    enum { CHUNKS = 4 };
    size_t reserved = (size_t)1 << 36; /* 64 GiB of address space */
    CUdeviceptr base;
    CHECK(cuMemAddressReserve(&base, reserved, 0, 0, 0));
    CUmemGenericAllocationHandle chunk[CHUNKS];
    size_t free0, free1, total;
    CHECK(cuMemGetInfo(&free0, &total));
    for (int i = 0; i < CHUNKS; i++) {
        CHECK(cuMemCreate(&chunk[i], g, &prop, 0));
        CHECK(cuMemMap(base + i * g, g, 0, chunk[i], 0));
        grant(base + i * g, g); /* one setAccess per growth, as PyTorch does */
    }
    CHECK(cuMemGetInfo(&free1, &total));
    EXPECT(free0 - free1 == CHUNKS * g);

    /* A copy that crosses every chunk boundary. */
    size_t span = CHUNKS * g - 2 * 4096;
    unsigned char *src = malloc(span), *dst = malloc(span);
    fill(src, span, 3);
    CHECK(cuMemcpyHtoD(base + 4096, src, span));
    memset(dst, 0, span);
    CHECK(cuMemcpyDtoH(dst, base + 4096, span));
    EXPECT(check(dst, span, 3));
    CHECK(cuMemsetD32(base + g - 8, 0xdeadbeef, 4)); /* 16 bytes across chunks 0 and 1 */
    unsigned int words[4];
    CHECK(cuMemcpyDtoH(words, base + g - 8, sizeof words));
    EXPECT(words[0] == 0xdeadbeef && words[3] == 0xdeadbeef);

    /* A partial map is refused: CUDA cannot split an allocation. */
    EXPECT(cuMemMap(base + CHUNKS * g, g / 2, 0, chunk[0], 0) != CUDA_SUCCESS);

    /* Alias chunk 1 at a second address: a write through one is read through the other. */
    CUdeviceptr alias = base + 8 * g;
    CHECK(cuMemMap(alias, g, 0, chunk[1], 0));
    grant(alias, g);
    unsigned int v = 0x5eed, back = 0;
    CHECK(cuMemcpyHtoD(alias + 100, &v, sizeof v));
    CHECK(cuMemcpyDtoH(&back, base + g + 100, sizeof back));
    EXPECT(back == 0x5eed);

    /* Share one allocation with a second process: fork + exec, fd over SCM_RIGHTS. */
    CUmemAllocationProp eprop = prop_on(0, 1);
    CUmemGenericAllocationHandle shared;
    CHECK(cuMemCreate(&shared, g, &eprop, 0));
    CUdeviceptr sva;
    CHECK(cuMemAddressReserve(&sva, g, 0, 0, 0));
    CHECK(cuMemMap(sva, g, 0, shared, 0));
    grant(sva, g);
    unsigned char *page = malloc(4096);
    fill(page, 4096, 7);
    CHECK(cuMemcpyHtoD(sva, page, 4096));
    int fd = -1;
    CHECK(cuMemExportToShareableHandle(&fd, shared, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    int sv[2];
    EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    pid_t pid = fork();
    EXPECT(pid >= 0);
    if (pid == 0) {
        close(sv[0]);
        char arg[16];
        snprintf(arg, sizeof arg, "%d", sv[1]);
        execl("/proc/self/exe", argv[0], "importer", arg, (char *)NULL);
        _exit(127);
    }
    close(sv[1]);
    send_fds(sv[0], &fd, 1);
    close(fd);
    char done = 0;
    EXPECT(read(sv[0], &done, 1) == 1 && done == 'd');
    int status = 0;
    EXPECT(waitpid(pid, &status, 0) == pid);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(cuMemcpyDtoH(page, sva + 4096, 4096));
    EXPECT(check(page, 4096, 9));
    close(sv[0]);

    /* Free everything, in order: unmap, release, free the range. */
    CHECK(cuMemUnmap(sva, g));
    CHECK(cuMemRelease(shared));
    CHECK(cuMemAddressFree(sva, g));
    CHECK(cuMemUnmap(alias, g));
    CHECK(cuMemUnmap(base, CHUNKS * g));
    for (int i = 0; i < CHUNKS; i++) CHECK(cuMemRelease(chunk[i]));
    CHECK(cuMemAddressFree(base, reserved));
    size_t free2;
    CHECK(cuMemGetInfo(&free2, &total));
    EXPECT(free2 == free0);
    CHECK(cuDevicePrimaryCtxRelease(0));
    free(src);
    free(dst);
    free(page);
    printf("ok\n");
    return 0;
}
