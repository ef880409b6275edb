/* NVIDIA's vectorAddMMAP sample, in spirit: A, B and C each one reservation striped over
 * every device that can reach all the others, read-write access for all of them, VecAdd
 * launched from a fatbin nvcc built (clients/kernels/samples.cu), the result checked on the
 * host, then a sum over a striped buffer by a reduction kernel.
 * Usage: vector_add_mmap SAMPLES.fatbin */
#include "common.h"

static CUdeviceptr striped(int m, size_t stripe, int stripes, CUmemAccessDesc *access, int k) {
    CUdeviceptr va;
    CHECK(cuMemAddressReserve(&va, stripe * stripes, 0, 0, 0));
    for (int s = 0; s < stripes; s++) {
        CUmemGenericAllocationHandle h;
        CUmemAllocationProp p = prop_on(s % m, 0);
        CHECK(cuMemCreate(&h, stripe, &p, 0));
        CHECK(cuMemMap(va + s * stripe, stripe, 0, h, 0));
        CHECK(cuMemRelease(h));
    }
    CHECK(cuMemSetAccess(va, stripe * stripes, access, k));
    return va;
}

int main(int argc, char **argv) {
    EXPECT(argc == 2);
    CHECK(cuInit(0));
    int n = 0;
    CHECK(cuDeviceGetCount(&n));
    int m = n > 16 ? 16 : n;
    CUcontext ctx[16];
    for (int d = 0; d < m; d++) CHECK(cuDevicePrimaryCtxRetain(&ctx[d], d));
    CUmemAccessDesc access[16];
    int k = 0;
    for (int d = 0; d < m; d++) {
        int ok = 1;
        for (int p = 0; p < m; p++) {
            int can = 1;
            if (p != d) CHECK(cuDeviceCanAccessPeer(&can, d, p));
            ok &= can;
        }
        if (ok) access[k++] = rw_for(d);
    }
    EXPECT(k >= 1);
    CHECK(cuCtxSetCurrent(ctx[access[0].location.id]));
    CUmodule mod;
    CHECK(cuModuleLoad(&mod, argv[1]));
    CUfunction vecadd, sum;
    CHECK(cuModuleGetFunction(&vecadd, mod, "VecAdd_kernel"));
    CHECK(cuModuleGetFunction(&sum, mod, "sum_kernel"));

    size_t gran = 0, g;
    for (int d = 0; d < m; d++) {
        CUmemAllocationProp p = prop_on(d, 0);
        CHECK(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        if (g > gran) gran = g;
    }
    const int N = 1 << 20, stripes = 2 * m;
    size_t bytes = (size_t)N * sizeof(float);
    size_t stripe = ((bytes + stripes - 1) / stripes + gran - 1) / gran * gran;
    CUdeviceptr dA = striped(m, stripe, stripes, access, k), dB = striped(m, stripe, stripes, access, k),
                dC = striped(m, stripe, stripes, access, k);
    float *hA = malloc(bytes), *hB = malloc(bytes), *hC = malloc(bytes);
    for (int i = 0; i < N; i++) {
        hA[i] = (float)(i % 1000) * 0.5f;
        hB[i] = (float)(i % 777) * 0.25f;
    }
    CHECK(cuMemcpyHtoD(dA, hA, bytes));
    CHECK(cuMemcpyHtoD(dB, hB, bytes));
    int threads = 256, blocks = (N + threads - 1) / threads;
    void *args[] = {&dA, &dB, &dC, (void *)&N};
    CHECK(cuLaunchKernel(vecadd, blocks, 1, 1, threads, 1, 1, 0, 0, args, NULL));
    CHECK(cuCtxSynchronize());
    CHECK(cuMemcpyDtoH(hC, dC, bytes));
    for (int i = 0; i < N; i++) EXPECT(hC[i] == hA[i] + hB[i]);

    /* The sum of a striped buffer of integers, by every mapping device in turn. */
    unsigned *hI = malloc(bytes);
    unsigned long long want = 0;
    /* Small enough that no block's 32-bit partial sum wraps. */
    for (int i = 0; i < N; i++) want += hI[i] = (unsigned)(i * 2654435761u) >> 20;
    CHECK(cuMemcpyHtoD(dA, hI, bytes));
    CUdeviceptr dSum;
    CHECK(cuMemAlloc(&dSum, sizeof(unsigned long long)));
    for (int a = 0; a < k; a++) {
        /* The module lives in the first device's context; launches run there. */
        unsigned long long got = 0;
        CHECK(cuMemsetD32(dSum, 0, 2));
        void *sargs[] = {&dA, &dSum, (void *)&N};
        CHECK(cuLaunchKernel(sum, 132, 1, 1, 256, 1, 1, 0, 0, sargs, NULL));
        CHECK(cuMemcpyDtoH(&got, dSum, sizeof got));
        if (got != want) fprintf(stderr, "sum: got %llu, want %llu\n", got, want);
        EXPECT(got == want);
    }
    CHECK(cuMemFree(dSum));
    CHECK(cuMemUnmap(dA, stripe * stripes));
    CHECK(cuMemUnmap(dB, stripe * stripes));
    CHECK(cuMemUnmap(dC, stripe * stripes));
    CHECK(cuMemAddressFree(dA, stripe * stripes));
    CHECK(cuMemAddressFree(dB, stripe * stripes));
    CHECK(cuMemAddressFree(dC, stripe * stripes));
    CHECK(cuModuleUnload(mod));
    CHECK(cuCtxSetCurrent(NULL));
    for (int d = 0; d < m; d++) CHECK(cuDevicePrimaryCtxRelease(d));
    printf("ok %d device(s), %d stripes, VecAdd of %d floats and a sum checked\n", m, stripes, N);
    return 0;
}
