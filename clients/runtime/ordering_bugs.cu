// Ordering bugs planted on purpose, one per argument, for the mock's reports under
// CUMOCK_MISUSE=1 (cudart/tests/ordering.rs); `fixed` does the same work correctly
// ordered, and must draw no report. No transcript: what matters is stderr.
//
//   race       two non-blocking streams write the same buffer, nothing between them
//   host-read  cudaMemcpy (the legacy stream) reads what a kernel on a non-blocking
//              stream writes, with no synchronisation between them
//   free       cudaFreeAsync on a stream that is not ordered after the kernel using it
//   stale      the host reads a buffer right after launching the kernel that fills it
//              (prints "stale" or "fresh": under CUMOCK_SCHEDULE=lazy always stale)
//   host-write the host stores into page-locked memory a kernel writes, having seen only
//              a later kernel's flag land (no synchronisation: the flag kernel reads
//              nothing, so it orders nothing the model knows)
//   managed-write  the same with managed memory (cudaMallocManaged)
//   copy-write the same with page-locked memory an async copy from the device writes
//   host-load  the host loads page-locked memory a kernel wrote, having seen only a later
//              kernel's flag land (as host-write, but a load: the mock's trap sees it)
//   managed-load  the same with managed memory
//   zero-copy-load  the same with a kernel that also reads page-locked memory (its input):
//              weak reads signal nothing to the host
//   running-load  the host loads page-locked memory while the kernel that writes it
//              still runs (300 ms of the device's timer)
//   graph-running-load  the same with the kernel a node of a graph
//   fixed      also has a kernel hand its words to the host through flags in page-locked
//              memory, which the host then stores to before synchronising (no bug);
//              and trims the pool right after a cudaFreeAsync ordered after a kernel
//              that may still run: the driver counts that memory as outstanding until the
//              free completes, so it is no bug (and the kernel must not fault); a trim
//              after a free nothing orders is the free's bug, reported at the free
//   fixed      all of the above, each correctly ordered
#include "common.h"
#include <unistd.h>

__global__ void fill(int *p, int n, int v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = v;
}

// Waits for the host's flag, writes its word, and says so through `done` after a
// system-wide fence: the host may store to the words once it sees `done`, with no call in
// between (CUDA's memory model orders it), which must draw no report.
__global__ void handshake(volatile int *flag, int *data, volatile int *done) {
    while (*flag == 0) {
    }
    data[threadIdx.x] = 1;
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) *done = 1;
}

// Sets a flag the host polls, once it reads it clear.
__global__ void raise_flag(volatile int *flag) {
    if (*flag == 0) *flag = 1;
}

// Doubles page-locked input into page-locked output (zero copy): weak accesses only, so
// nothing it does can tell the host anything before a synchronisation.
__global__ void twice(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2 * in[i];
}

// Writes its word after about `ns` nanoseconds of the device's global timer: a kernel
// still running when the host looks.
__global__ void late_fill(int *p, int v, unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
    *p = v;
}

enum { N = 4096 };

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "fixed";
    int fixed = strcmp(what, "fixed") == 0;
    cudaStream_t a, b;
    cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
    cudaEvent_t done;
    cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
    int *d = NULL, h[N];
    cudaMalloc((void **)&d, N * sizeof(int));
    NEED(d);

    if (fixed || strcmp(what, "race") == 0) {
        fill<<<N / 256, 256, 0, a>>>(d, N, 1);
        if (fixed) {
            cudaEventRecord(done, a);
            cudaStreamWaitEvent(b, done, 0);
        }
        fill<<<N / 256, 256, 0, b>>>(d, N, 2);
        cudaDeviceSynchronize();
    }
    if (fixed || strcmp(what, "host-read") == 0) {
        fill<<<N / 256, 256, 0, a>>>(d, N, 3);
        if (fixed) cudaStreamSynchronize(a);
        cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
        cudaDeviceSynchronize();
    }
    if (fixed || strcmp(what, "free") == 0) {
        int *p = NULL;
        cudaMallocAsync((void **)&p, N * sizeof(int), a);
        fill<<<N / 256, 256, 0, a>>>(p, N, 4);
        if (fixed) {
            cudaEventRecord(done, a);
            cudaStreamWaitEvent(b, done, 0);
        }
        cudaFreeAsync(p, b);
        cudaDeviceSynchronize();
    }
    if (fixed || strcmp(what, "stale") == 0) {
        int *pinned = NULL;
        cudaMallocHost((void **)&pinned, sizeof(int));
        NEED(pinned);
        *pinned = 0;
        // The kernel writes the page-locked int; the host looks before synchronising.
        fill<<<1, 1, 0, a>>>(pinned, 1, 5);
        if (fixed) cudaStreamSynchronize(a);
        int seen = *(volatile int *)pinned;
        printf("%s\n", seen == 5 ? "fresh" : "stale");
        cudaDeviceSynchronize();
        if (fixed) CHECK(seen == 5);
        cudaFreeHost(pinned);
    }
    for (int managed = 0; managed < 2; managed++) {
        if (!fixed && strcmp(what, managed ? "managed-write" : "host-write") != 0) continue;
        int *pinned = NULL;
        if (managed)
            cudaMallocManaged((void **)&pinned, 65 * sizeof(int));
        else
            cudaMallocHost((void **)&pinned, 65 * sizeof(int));
        NEED(pinned);
        pinned[64] = 0;
        fill<<<1, 64, 0, a>>>(pinned, 64, 6);
        if (fixed) {
            cudaStreamSynchronize(a);
        } else {
            // A flag set by the next kernel on the stream: seen by polling, not by a call.
            fill<<<1, 1, 0, a>>>(pinned + 64, 1, 1);
            while (*(volatile int *)&pinned[64] != 1) {
            }
        }
        pinned[3] = 9;
        cudaStreamSynchronize(a);
        CHECK(pinned[3] == 9);
        if (managed)
            cudaFree(pinned);
        else
            cudaFreeHost(pinned);
    }
    for (int managed = 0; managed < 2; managed++) {
        if (!fixed && strcmp(what, managed ? "managed-load" : "host-load") != 0) continue;
        int *result = NULL, *flag = NULL;
        if (managed)
            cudaMallocManaged((void **)&result, N * sizeof(int));
        else
            cudaMallocHost((void **)&result, N * sizeof(int));
        cudaMallocHost((void **)&flag, sizeof(int));
        NEED(result && flag);
        *flag = 0;
        fill<<<N / 256, 256, 0, a>>>(result, N, 10);
        if (fixed) {
            cudaStreamSynchronize(a);
        } else {
            // The flag's kernel reads it too: it talks to the host through it, so the
            // mock traps no load of the flag; only the result's is the bug.
            raise_flag<<<1, 1, 0, a>>>(flag);
            while (*(volatile int *)flag != 1) {
            }
        }
        int seen = *(volatile int *)&result[N / 2];
        cudaStreamSynchronize(a);
        CHECK(seen == 10);
        if (managed)
            cudaFree(result);
        else
            cudaFreeHost(result);
        cudaFreeHost(flag);
    }
    if (fixed || strcmp(what, "zero-copy-load") == 0) {
        int *in = NULL, *out = NULL, *flag = NULL;
        cudaMallocHost((void **)&in, N * sizeof(int));
        cudaMallocHost((void **)&out, N * sizeof(int));
        cudaMallocHost((void **)&flag, sizeof(int));
        NEED(in && out && flag);
        for (int i = 0; i < N; i++) in[i] = i;
        *flag = 0;
        twice<<<N / 256, 256, 0, a>>>(in, out, N);
        if (fixed) {
            cudaStreamSynchronize(a);
        } else {
            raise_flag<<<1, 1, 0, a>>>(flag);
            while (*(volatile int *)flag != 1) {
            }
        }
        int seen = *(volatile int *)&out[N - 1];
        cudaStreamSynchronize(a);
        CHECK(seen == 2 * (N - 1));
        cudaFreeHost(in);
        cudaFreeHost(out);
        cudaFreeHost(flag);
    }
    if (fixed || strcmp(what, "running-load") == 0) {
        int *pinned = NULL;
        cudaMallocHost((void **)&pinned, sizeof(int));
        NEED(pinned);
        *pinned = 0;
        late_fill<<<1, 1, 0, a>>>(pinned, 11, 300000000ull);
        if (fixed) cudaStreamSynchronize(a);
        else usleep(50000);
        int seen = *(volatile int *)pinned;
        cudaStreamSynchronize(a);
        CHECK(!fixed || seen == 11);
        cudaFreeHost(pinned);
    }
    if (fixed || strcmp(what, "graph-running-load") == 0) {
        int *pinned = NULL;
        cudaMallocHost((void **)&pinned, sizeof(int));
        NEED(pinned);
        *pinned = 0;
        cudaGraph_t g;
        cudaGraphExec_t x;
        cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal);
        late_fill<<<1, 1, 0, a>>>(pinned, 12, 300000000ull);
        cudaStreamEndCapture(a, &g);
        cudaGraphInstantiate(&x, g, 0);
        cudaGraphLaunch(x, a);
        if (fixed) cudaStreamSynchronize(a);
        else usleep(50000);
        int seen = *(volatile int *)pinned;
        cudaStreamSynchronize(a);
        CHECK(!fixed || seen == 12);
        cudaGraphExecDestroy(x);
        cudaGraphDestroy(g);
        cudaFreeHost(pinned);
    }
    if (fixed || strcmp(what, "copy-write") == 0) {
        int *pinned = NULL;
        cudaMallocHost((void **)&pinned, N * sizeof(int));
        NEED(pinned);
        int *flag = NULL;
        cudaMallocHost((void **)&flag, sizeof(int));
        NEED(flag);
        *flag = 0;
        fill<<<N / 256, 256, 0, a>>>(d, N, 8);
        cudaMemcpyAsync(pinned, d, N * sizeof(int), cudaMemcpyDeviceToHost, a);
        if (fixed) {
            cudaStreamSynchronize(a);
        } else {
            fill<<<1, 1, 0, a>>>(flag, 1, 1);
            while (*(volatile int *)flag != 1) {
            }
        }
        pinned[3] = 9;
        cudaStreamSynchronize(a);
        CHECK(pinned[3] == 9);
        cudaFreeHost(pinned);
        cudaFreeHost(flag);
    }
    if (fixed) {
        int *shared = NULL;
        cudaMallocHost((void **)&shared, 64 * sizeof(int));
        NEED(shared);
        memset(shared, 0, 64 * sizeof(int));
        volatile int *flag = shared, *done = shared + 1;
        handshake<<<1, 32, 0, a>>>(flag, shared + 32, done);
        *flag = 1;
        while (*done == 0) {
        }
        shared[32] = 2;
        cudaStreamSynchronize(a);
        CHECK(shared[32] == 2 && shared[63] == 1);
        cudaFreeHost(shared);
    }
    if (fixed) {
        cudaMemPool_t pool;
        cudaDeviceGetDefaultMemPool(&pool, 0);
        int *p = NULL;
        cudaMallocAsync((void **)&p, N * sizeof(int), a);
        cudaStreamSynchronize(a);
        fill<<<N / 256, 256, 0, b>>>(p, N, 7);
        cudaEventRecord(done, b);
        cudaStreamWaitEvent(a, done, 0);
        cudaFreeAsync(p, a);
        cudaMemPoolTrimTo(pool, 0);
        CHECK(cudaDeviceSynchronize() == cudaSuccess);
    }
    cudaFree(d);
    cudaEventDestroy(done);
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    return finish();
}
