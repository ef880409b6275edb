// A probe, for the H200's record: where a block's shared memory ends for its own
// accesses. A kernel declaring 4 bytes of static shared memory (or 200 bytes of dynamic)
// stores a byte at an offset past them and reads it back; each offset runs in a child
// process of its own (forked before any CUDA call), since a fault is sticky for the
// context. Prints, for each offset, the error the synchronisation returns and the byte
// read back. The mock's answer decides whether an overrun within the GPU's allocation
// granularity (numba's tensormap test writes a 128-byte map into a 4-byte array) faults.
#include "common.h"
#include <sys/wait.h>
#include <unistd.h>

__global__ void poke_static(int offset, int *out) {
    __shared__ int word;
    word = 1;
    volatile char *p = (volatile char *)&word;
    p[offset] = 7;
    out[0] = p[offset];
}

__global__ void poke_dynamic(int offset, int *out) {
    extern __shared__ char bytes[];
    bytes[0] = 1;
    volatile char *p = bytes;
    p[offset] = 7;
    out[0] = p[offset];
}

static void one(int dynamic, int offset) {
    int *out = NULL;
    if (cudaMalloc((void **)&out, sizeof(int)) != cudaSuccess) {
        printf("%s %d: no memory\n", dynamic ? "dynamic200" : "static4", offset);
        return;
    }
    cudaMemset(out, 0, sizeof(int));
    if (dynamic)
        poke_dynamic<<<1, 1, 200>>>(offset, out);
    else
        poke_static<<<1, 1>>>(offset, out);
    cudaError_t launch = cudaGetLastError();
    cudaError_t sync = cudaDeviceSynchronize();
    int seen = -1;
    if (sync == cudaSuccess) cudaMemcpy(&seen, out, sizeof seen, cudaMemcpyDeviceToHost);
    printf("%s offset %d: launch %s, sync %s, read %d\n", dynamic ? "dynamic200" : "static4",
           offset, cudaGetErrorName(launch), cudaGetErrorName(sync), seen);
    fflush(stdout);
}

int main(void) {
    static const int statics[] = {4, 64, 124, 127, 128, 255, 256, 1023, 1024, 4096, 65536};
    static const int dynamics[] = {200, 255, 256, 383, 384, 1024, 4096};
    for (int dynamic = 0; dynamic < 2; dynamic++) {
        const int *list = dynamic ? dynamics : statics;
        int n = dynamic ? (int)(sizeof dynamics / sizeof *dynamics)
                        : (int)(sizeof statics / sizeof *statics);
        for (int i = 0; i < n; i++) {
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0) {
                one(dynamic, list[i]);
                _exit(0);
            }
            int status = 0;
            waitpid(pid, &status, 0);
            if (!WIFEXITED(status))
                printf("%s offset %d: the child died\n", dynamic ? "dynamic200" : "static4",
                       list[i]);
        }
    }
    return 0;
}
