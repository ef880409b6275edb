// In the spirit of NVIDIA's simpleCallback sample: several host threads, each with a
// stream (two of them the per-thread default stream, cudaStreamPerThread), issue kernels,
// copies and host callbacks (cudaStreamAddCallback, cudaLaunchHostFunc). Each callback
// runs after the work before it in its stream (it sees that work's results) and before
// the work after it, in the order issued.
#include "common.h"
#include <pthread.h>

enum { NTHREADS = 4, ROUNDS = 6, N = 1 << 14 };

__global__ void add(int *v, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] += k;
}

struct Worker {
    int id;
    cudaStream_t stream;
    int *h, *d;
    int log[2 * ROUNDS], logged;
    int saw_results;  // callbacks that saw the copy before them complete
    cudaError_t first_error;
};

struct Note {
    Worker *w;
    int seq;
};

static void note(Worker *w, int seq) {
    // Round r's copy brought the sum of 1..r+1 to every element.
    int r = seq / 2, want = (r + 1) * (r + 2) / 2, ok = 1;
    for (int i = 0; i < N; i++)
        if (w->h[i] != want) ok = 0;
    w->saw_results += ok;
    w->log[w->logged++] = seq;
}

static void CUDART_CB stream_callback(cudaStream_t, cudaError_t status, void *p) {
    Note *n = (Note *)p;
    if (status == cudaSuccess) note(n->w, n->seq);
}

static void CUDART_CB host_fn(void *p) {
    Note *n = (Note *)p;
    note(n->w, n->seq);
}

static void keep(Worker *w, cudaError_t e) {
    if (e != cudaSuccess && w->first_error == cudaSuccess) w->first_error = e;
}

static void *work(void *p) {
    Worker *w = (Worker *)p;
    // Threads 0 and 1 use their own default stream; the others a stream they create.
    if (w->id < 2)
        w->stream = cudaStreamPerThread;
    else
        keep(w, cudaStreamCreate(&w->stream));
    keep(w, cudaMallocHost((void **)&w->h, N * sizeof(int)));
    keep(w, cudaMalloc((void **)&w->d, N * sizeof(int)));
    if (!w->h || !w->d) return NULL;
    keep(w, cudaMemsetAsync(w->d, 0, N * sizeof(int), w->stream));
    Note notes[2 * ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        add<<<N / 256, 256, 0, w->stream>>>(w->d, N, r + 1);
        keep(w, cudaGetLastError());
        keep(w, cudaMemcpyAsync(w->h, w->d, N * sizeof(int), cudaMemcpyDeviceToHost, w->stream));
        notes[2 * r] = Note{w, 2 * r};
        notes[2 * r + 1] = Note{w, 2 * r + 1};
        keep(w, cudaStreamAddCallback(w->stream, stream_callback, &notes[2 * r], 0));
        keep(w, cudaLaunchHostFunc(w->stream, host_fn, &notes[2 * r + 1]));
    }
    keep(w, cudaStreamSynchronize(w->stream));
    if (w->id >= 2) keep(w, cudaStreamDestroy(w->stream));
    keep(w, cudaFree(w->d));
    keep(w, cudaFreeHost(w->h));
    return NULL;
}

int main(void) {
    T(cudaSetDevice(0));
    Worker w[NTHREADS];
    pthread_t t[NTHREADS];
    memset(w, 0, sizeof w);
    for (int k = 0; k < NTHREADS; k++) {
        w[k].id = k;
        pthread_create(&t[k], NULL, work, &w[k]);
    }
    for (int k = 0; k < NTHREADS; k++) pthread_join(t[k], NULL);
    for (int k = 0; k < NTHREADS; k++) {
        int in_order = w[k].logged == 2 * ROUNDS;
        for (int i = 0; i < w[k].logged; i++) in_order &= w[k].log[i] == i;
        printf("thread %d (%s) -> %s\n", k, k < 2 ? "cudaStreamPerThread" : "its own stream",
               cudaGetErrorName(w[k].first_error));
        OUT("%d callbacks ran, in order: %s, each after the work before it: %s", w[k].logged,
            in_order ? "yes" : "no", w[k].saw_results == 2 * ROUNDS ? "yes" : "no");
        CHECK(w[k].first_error == cudaSuccess && in_order && w[k].saw_results == 2 * ROUNDS);
    }
    T(cudaDeviceSynchronize());
    return finish();
}
