// The library API: PTX text loaded with cudaLibraryLoadData, its kernels counted,
// enumerated and found by name, a global found and written, a kernel launched through
// cudaLaunchKernel with its cudaKernel_t and its result checked; cudaGetKernel of a kernel
// of this program launched the same way, sharing its __device__ variable with <<<>>>;
// cudaKernelSetAttributeForDevice; CUDA 13's pools by location; cudaChooseDevice; the
// driver's log through cudaLogsCurrent.
#include "common.h"

static const char *ptx =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .global .align 4 .u32 offset;\n"
    ".visible .entry add_offset(.param .u64 out, .param .u32 n) {\n"
    "  .reg .u32 %r<6>; .reg .u64 %rd<4>; .reg .pred %p;\n"
    "  ld.param.u64 %rd1, [out]; ld.param.u32 %r1, [n];\n"
    "  mov.u32 %r2, %tid.x; setp.ge.u32 %p, %r2, %r1; @%p ret;\n"
    "  ld.global.u32 %r3, [offset]; add.u32 %r4, %r2, %r3;\n"
    "  cvta.to.global.u64 %rd2, %rd1; mul.wide.u32 %rd3, %r2, 4; add.u64 %rd2, %rd2, %rd3;\n"
    "  st.global.u32 [%rd2], %r4; ret;\n"
    "}\n"
    ".visible .entry nothing() { ret; }\n";

__device__ unsigned bias;

__global__ void add_bias(unsigned *out) { out[threadIdx.x] = threadIdx.x * 2 + bias; }

int main() {
    cudaLibrary_t lib = NULL;
    if (T(cudaLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0)) != cudaSuccess) return finish() | 1;
    unsigned count = 0;
    T(cudaLibraryGetKernelCount(&count, lib));
    OUT("kernels: %u", count);
    CHECK(count == 2);
    cudaKernel_t all[2] = {};
    T(cudaLibraryEnumerateKernels(all, 2, lib));
    cudaKernel_t k = NULL;
    T(cudaLibraryGetKernel(&k, lib, "add_offset"));
    OUT("found: %d, among the enumerated: %d", k != NULL, k == all[0] || k == all[1]);
    cudaKernel_t none = NULL;
    T(cudaLibraryGetKernel(&none, lib, "no_such_kernel"));
    T(cudaGetLastError());
    unsigned *offset = NULL;
    size_t bytes = 0;
    T(cudaLibraryGetGlobal((void **)&offset, &bytes, lib, "offset"));
    OUT("global: %zu bytes", bytes);
    NEED(offset);
    unsigned seven = 700;
    T(cudaMemcpy(offset, &seven, 4, cudaMemcpyHostToDevice));
    unsigned *out = NULL;
    T(cudaMalloc(&out, 64 * 4));
    NEED(out);
    unsigned n = 64;
    void *args[] = {&out, &n};
    T(cudaLaunchKernel((const void *)k, dim3(1), dim3(64), args, 0, 0));
    T(cudaDeviceSynchronize());
    unsigned host[64];
    T(cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost));
    int ok = 1;
    for (unsigned i = 0; i < 64; i++) ok &= host[i] == 700 + i;
    CHECK(ok);
    OUT("library kernel's result: %d (%u..%u)", ok, host[0], host[63]);
    cudaFuncAttributes fa = {};
    T(cudaFuncGetAttributes(&fa, (const void *)k));
    OUT("maxThreadsPerBlock %d", fa.maxThreadsPerBlock);
    T(cudaKernelSetAttributeForDevice(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024, 0));
    T(cudaFuncGetAttributes(&fa, (const void *)k));
    OUT("maxDynamicSharedSizeBytes after the set: %d", fa.maxDynamicSharedSizeBytes);

    // A kernel of this program as a cudaKernel_t: the same __device__ variable as <<<>>>.
    unsigned b = 5;
    T(cudaMemcpyToSymbol(bias, &b, 4));
    cudaKernel_t mine = NULL;
    T(cudaGetKernel(&mine, (const void *)add_bias));
    void *margs[] = {&out};
    T(cudaLaunchKernel((const void *)mine, dim3(1), dim3(32), margs, 0, 0));
    T(cudaMemcpy(host, out, 32 * 4, cudaMemcpyDeviceToHost));
    ok = 1;
    for (unsigned i = 0; i < 32; i++) ok &= host[i] == 2 * i + 5;
    CHECK(ok);
    OUT("cudaGetKernel's kernel result: %d (%u..%u)", ok, host[0], host[31]);
    add_bias<<<1, 32>>>(out);
    T(cudaGetLastError());
    T(cudaMemcpy(host, out, 32 * 4, cudaMemcpyDeviceToHost));
    CHECK(host[31] == 67);
    T(cudaGetKernel(&mine, (const void *)main));

    T(cudaLibraryUnload(lib));

    // CUDA 13's pools by location.
    cudaMemLocation loc = {};
    loc.type = cudaMemLocationTypeDevice;
    loc.id = 0;
    cudaMemPool_t def = NULL, cur = NULL, dev_def = NULL;
    T(cudaMemGetDefaultMemPool(&def, &loc, cudaMemAllocationTypePinned));
    T(cudaDeviceGetDefaultMemPool(&dev_def, 0));
    T(cudaMemGetMemPool(&cur, &loc, cudaMemAllocationTypePinned));
    OUT("default is the device's: %d, current is the default: %d", def == dev_def, cur == def);
    T(cudaMemSetMemPool(&loc, cudaMemAllocationTypePinned, def));

    int chosen = -1;
    cudaDeviceProp want = {};
    want.major = 9;
    T(cudaChooseDevice(&chosen, &want));
    OUT("chosen: %d", chosen);
    cudaLogIterator it = 0;
    T(cudaLogsCurrent(&it, 0));
    T(cudaFree(out));
    return finish();
}
