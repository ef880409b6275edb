// Pinned and registered host memory, mapped pointers, managed memory.
#include "common.h"

int main(void) {
    void *h = NULL, *ha = NULL, *dp = NULL;
    T(cudaMallocHost(&h, 1 << 20));
    OUT("h is %s", alignment(h));
    NEED(h);
    memset(h, 0x11, 1 << 20);
    T(cudaHostAlloc(&ha, 8192, cudaHostAllocMapped | cudaHostAllocPortable));
    // A small allocation may land on a 2 MiB boundary by chance: its page alignment is
    // what the driver promises (the H200 gave a 4 KiB-aligned address; so may the mock).
    OUT("ha is %s", (uintptr_t)ha % 4096 == 0 ? "4KiB-aligned" : alignment(ha));
    T(cudaHostAlloc(&ha, 8192, 0x100));
    T(cudaGetLastError());
    unsigned flags = 0;
    T(cudaHostGetFlags(&flags, h));
    OUT("flags=%#x", flags);
    T(cudaHostGetDevicePointer(&dp, h, 0));
    OUT("device pointer == host pointer: %d", dp == h);

    cudaPointerAttributes a;
    T(cudaPointerGetAttributes(&a, h));
    OUT("type=%d device=%d devicePointer==h:%d hostPointer==h:%d", a.type, a.device, a.devicePointer == h,
        a.hostPointer == h);
    T(cudaPointerGetAttributes(&a, (char *)h + 4096));
    OUT("type=%d hostPointer==h+4096:%d", a.type, a.hostPointer == (char *)h + 4096);

    // Pinned memory in copies, with the data checked.
    void *d = NULL;
    T(cudaMalloc(&d, 1 << 20));
    NEED(d);
    T(cudaMemcpy(d, h, 1 << 20, cudaMemcpyHostToDevice));
    memset(h, 0, 1 << 20);
    T(cudaMemcpy(h, d, 1 << 20, cudaMemcpyDefault));
    CHECK(((unsigned char *)h)[12345] == 0x11);

    // Registering ordinary memory.
    size_t sz = 1 << 16;
    void *plain = aligned_alloc(4096, sz);
    memset(plain, 0x22, sz);
    T(cudaHostRegister(plain, sz, cudaHostRegisterDefault));
    T(cudaHostRegister(plain, sz, cudaHostRegisterDefault));
    T(cudaGetLastError());
    T(cudaPointerGetAttributes(&a, plain));
    OUT("registered: type=%d hostPointer==plain:%d", a.type, a.hostPointer == plain);
    T(cudaMemcpy(d, plain, sz, cudaMemcpyHostToDevice));
    T(cudaHostGetDevicePointer(&dp, plain, 0));
    OUT("registered device pointer == host pointer: %d", dp == plain);
    T(cudaHostUnregister(plain));
    T(cudaHostUnregister(plain));
    T(cudaGetLastError());
    T(cudaHostRegister(NULL, sz, 0));
    T(cudaHostRegister(plain, 0, 0));
    T(cudaGetLastError());
    free(plain);

    T(cudaFreeHost(h));
    T(cudaFreeHost(ha));
    T(cudaFreeHost(NULL));
    T(cudaFreeHost(d));
    T(cudaGetLastError());
    T(cudaFree(d));

    // Managed memory: the driver honours it, or the runtime says what it said.
    void *m = NULL;
    cudaError_t e = T(cudaMallocManaged(&m, 4096, cudaMemAttachGlobal));
    if (e == cudaSuccess) {
        memset(m, 0x33, 4096);
        void *dd = NULL;
        T(cudaMalloc(&dd, 4096));
        T(cudaMemcpy(dd, m, 4096, cudaMemcpyDefault));
        T(cudaPointerGetAttributes(&a, m));
        OUT("managed: type=%d", a.type);
        T(cudaFree(dd));
        T(cudaFree(m));
    }
    T(cudaGetLastError());
    T(cudaMallocManaged(&m, 4096, 0));
    T(cudaGetLastError());
    return finish();
}
