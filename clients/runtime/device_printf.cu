// Device printf and assert: conversions, flags, widths and precisions, 64-bit, float and
// string arguments, printf's return value; several blocks printing in a fixed order (each
// waits for its turn, so the transcript does not depend on the order a GPU runs blocks
// in); output reaching stdout at cudaDeviceSynchronize; a failed assert's message and
// cudaErrorAssert at the synchronisation, sticky after it. Device output lines are
// indented so that they stay under the call that printed them.
#include "common.h"
#include <assert.h>

// __FILE__ as the assert message shows it, whatever path the program was built from.
#line 12 "device_printf.cu"

__device__ const char greeting[] = "hello";

__global__ void formats(const char *word, const int *p, int *ret) {
    float f = 3.25f;
    double d = -1234.5678;
    long long big = -(1ll << 40);
    unsigned long long ubig = 0xfedcba9876543210ull;
    short s = -2;
    ret[0] = printf("    ints: %d %i %u %x %X %o %c|%5d|%-5d|%05d|%+d|% d|%.3d|%#x|%#o\n", -42, 7,
                    4000000000u, 255, 255, 8, 'Z', 42, 42, 42, 42, 42, 7, 255, 8);
    // (`%hhu` of an int past 255 is left out: the H200 prints neither its low byte nor
    // counts it as the others.)
    ret[1] = printf("    wide: %lld %llu %llx %ld %hd\n", big, ubig, ubig, -5l, s);
    ret[2] = printf("    floats: %f %.2f %10.3f|%-10.1f|%e %E %g %G %g %a\n", f, d, f, f, d, 1e-10,
                    0.0001, 1e20, 100000.0, 1.0);
    ret[3] = printf("    strings: [%s] [%8s] [%-8s] [%.3s] [%s] %%\n", word, word, greeting,
                    greeting, "literal");
    ret[4] = printf("    pointer: %s\n", p ? "non-null" : "NULL");
    ret[5] = printf("    no arguments\n");
}

// Block b prints when the blocks before it have: the records of a GPU's blocks reach the
// FIFO in no fixed order, these in block order.
__global__ void ordered(int *turn) {
    int b = blockIdx.x;
    if (threadIdx.x == 0) {
        while (atomicAdd(turn, 0) != b) {
        }
        printf("    block %d of %d, %d threads\n", b, gridDim.x, blockDim.x);
        if (b == gridDim.x - 1) printf("    last block: %s\n", "done");
        __threadfence();
        atomicAdd(turn, 1);
    }
}

__global__ void checked(int bad) {
    assert(threadIdx.x != bad);
}

int main(void) {
    char *word = NULL;
    int *turn = NULL, *ret = NULL;
    T(cudaMalloc(&word, 16));
    T(cudaMalloc(&turn, sizeof(int)));
    T(cudaMalloc(&ret, 8 * sizeof(int)));
    NEED(word);
    NEED(turn);
    NEED(ret);
    T(cudaMemcpy(word, "device", 7, cudaMemcpyHostToDevice));
    size_t fifo = 0;
    T(cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize));
    OUT("printf FIFO: %zu bytes", fifo);

    formats<<<1, 1>>>(word, turn, ret);
    cudaError_t e = T(cudaGetLastError());
    if (e == cudaErrorNotSupported) {
        printf("SKIP: the driver does not load modules (cuModuleLoadData is not supported), so kernels cannot run\n");
        return SKIP_EXIT;
    }
    T(cudaDeviceSynchronize());
    int hret[6] = {0};
    T(cudaMemcpy(hret, ret, sizeof hret, cudaMemcpyDeviceToHost));
    OUT("printf returned %d %d %d %d %d %d", hret[0], hret[1], hret[2], hret[3], hret[4], hret[5]);
    CHECK(hret[0] == 15 && hret[1] == 5 && hret[2] == 10 && hret[3] == 5 && hret[4] == 1 && hret[5] == 0);

    T(cudaMemset(turn, 0, sizeof(int)));
    ordered<<<4, 64>>>(turn);
    T(cudaGetLastError());
    T(cudaDeviceSynchronize());
    int done = 0;
    T(cudaMemcpy(&done, turn, sizeof done, cudaMemcpyDeviceToHost));
    CHECK(done == 4);

    // Thread 5 of 32 fails: its message, then cudaErrorAssert, which stays.
    checked<<<1, 32>>>(5);
    T(cudaGetLastError());
    CHECK(T(cudaDeviceSynchronize()) == cudaErrorAssert);
    CHECK(T(cudaGetLastError()) == cudaErrorAssert);
    CHECK(T(cudaMemcpy(&done, turn, sizeof done, cudaMemcpyDeviceToHost)) == cudaErrorAssert);
    return finish();
}
