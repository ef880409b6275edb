// Where the H200's device-side cudaMemset2DAsync and cudaMemset3DAsync write: runtime
// program device_runtime_calls saw cudaSuccess and none of the bytes set. Each case
// memsets a region in the middle of a zeroed 64 KiB buffer from a kernel, and the host
// prints every run of non-zero bytes in the whole buffer after cudaDeviceSynchronize,
// beside the call's result; 1D cudaMemsetAsync and a 2D copy are the control.
//   nvcc -arch=sm_90 -rdc=true ci/explore/devmemset.cu -lcudadevrt -o devmemset && ./devmemset
#include <cstdio>
#include <cuda_runtime.h>

constexpr size_t N = 64 << 10;
constexpr size_t AT = 16 << 10;

__global__ void memsets(unsigned char *buf, int which, int *err, cudaStream_t named) {
    if (threadIdx.x != 0) return;
    cudaStream_t s = 0;
    if (which >= 8) {
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    }
    switch (which % 8) {
    case 0: *err = cudaMemsetAsync(buf + AT, 0x11, 40, s); break;
    case 1: *err = cudaMemset2DAsync(buf + AT, 64, 0x22, 16, 4, s); break;
    case 2: *err = cudaMemset2DAsync(buf + AT, 16, 0x33, 16, 4, s); break;
    case 3: *err = cudaMemset2DAsync(buf + AT, 512, 0x44, 256, 2, s); break;
    case 4: {
        cudaPitchedPtr p;
        p.ptr = buf + AT, p.pitch = 64, p.xsize = 16, p.ysize = 4;
        cudaExtent e;
        e.width = 16, e.height = 4, e.depth = 2;
        *err = cudaMemset3DAsync(p, 0x55, e, s);
        break;
    }
    case 5: *err = cudaMemcpy2DAsync(buf + AT, 64, buf + 100, 8, 8, 3, cudaMemcpyDeviceToDevice, s); break;
    case 6: *err = cudaMemset2DAsync(buf + AT, 64, 0x66, 64, 4, s); break;
    case 7: *err = cudaMemset2DAsync(buf + AT, 128, 0x77, 100, 1, s); break;
    }
    if (which >= 8) cudaStreamDestroy(s);
    err[1] = cudaGetLastError();
}

int main() {
    unsigned char *buf, *host = new unsigned char[N];
    int *err, herr[2];
    cudaMalloc(&buf, N);
    cudaMalloc(&err, 8);
    for (int which = 0; which < 16; which++) {
        cudaMemset(buf, 0, N);
        // The copy case's source: bytes 100.. hold 1, 2, 3...
        for (int i = 0; i < 24; i++) host[i] = (unsigned char)(i + 1);
        cudaMemcpy(buf + 100, host, 24, cudaMemcpyHostToDevice);
        cudaMemset(err, 0xff, 8);
        memsets<<<1, 32>>>(buf, which, err, 0);
        cudaError_t l = cudaGetLastError(), s = cudaDeviceSynchronize();
        cudaMemcpy(herr, err, 8, cudaMemcpyDeviceToHost);
        cudaMemcpy(host, buf, N, cudaMemcpyDeviceToHost);
        printf("case %d%s: launch %s, sync %s, call %s, last %s\n", which % 8,
               which >= 8 ? " (device-created stream)" : "", cudaGetErrorName(l), cudaGetErrorName(s),
               cudaGetErrorName((cudaError_t)herr[0]), cudaGetErrorName((cudaError_t)herr[1]));
        int runs = 0;
        for (size_t i = 0; i < N && runs < 12; runs++) {
            if (!host[i] || (i >= 100 && i < 124)) {
                i++;
                runs--;
                continue;
            }
            size_t j = i;
            while (j < N && host[j] == host[i]) j++;
            printf("  bytes %zu..%zu (offset %+ld from the target) = 0x%02x\n", i, j, (long)i - (long)AT, host[i]);
            i = j;
        }
    }
    return 0;
}
