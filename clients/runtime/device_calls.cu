// Calls the way C++ on the device makes them: device-side malloc/free (the heap's limit,
// blocks from many threads and blocks at once, memory kept across launches, exhaustion to
// NULL, the limit frozen once a kernel using malloc has run), calls through function
// pointers (a table filled on the device, a different function per thread; virtual
// functions), __nv_aligned_device_malloc, and
// recursion (direct and mutual, each thread to its own depth). Last, a recursion far
// past the stack limit: its error, sticky, is what the H200's recording is for.
#include "common.h"

// ---- the device heap ----

__global__ void heap_sums(unsigned long long *out, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int *p = (int *)malloc(n * sizeof(int));
    if (!p) {
        out[t] = 0;
        return;
    }
    for (int i = 0; i < n; i++) p[i] = t + i;
    unsigned long long s = 0;
    for (int i = 0; i < n; i++) s += p[i];
    // A misaligned block would be a wrong answer too.
    out[t] = ((uintptr_t)p % 16) ? 1 : s;
    free(p);
}

__global__ void heap_keep(int **slots, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int *p = (int *)malloc(n * sizeof(int));
    if (p)
        for (int i = 0; i < n; i++) p[i] = t * 1000 + i;
    slots[t] = p;
}

__global__ void heap_read_and_free(int **slots, int n, unsigned long long *out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int *p = slots[t];
    unsigned long long s = 0;
    if (p) {
        for (int i = 0; i < n; i++) s += p[i];
        free(p);
    }
    out[t] = s;
}

__global__ void heap_aligned(unsigned long long *out, size_t align) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    void *p = __nv_aligned_device_malloc(24, align);
    out[t] = p ? (unsigned long long)p % align : 1;
    free(p);
}

// ---- function pointers ----

typedef int (*binop)(int, int);
__device__ __noinline__ int op_add(int a, int b) { return a + b; }
__device__ __noinline__ int op_mul(int a, int b) { return a * b; }
__device__ __noinline__ int op_sub(int a, int b) { return a - b; }
__device__ binop table[3];

__global__ void fill_table(void) {
    table[0] = op_add;
    table[1] = op_mul;
    table[2] = op_sub;
}

__global__ void apply(int *out, int k) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = table[t % 3](t, k);
}

// Virtual functions: nvcc's virtual tables are `.global` variables holding functions'
// addresses.
struct Shape {
    __device__ virtual int area() const { return 0; }
};
struct Square : Shape {
    int s;
    __device__ Square(int s) : s(s) {}
    __device__ int area() const override { return s * s; }
};
struct Triangle : Shape {
    int b;
    __device__ Triangle(int b) : b(b) {}
    __device__ int area() const override { return b * b / 2; }
};

__global__ void areas(int *out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    Square q(t);
    Triangle r(t);
    const Shape *s = (t & 1) ? (const Shape *)&q : (const Shape *)&r;
    out[t] = s->area();
}

// ---- recursion ----

__device__ __noinline__ long long fib(int n) {
    if (n < 2) return n;
    long long a = fib(n - 1);
    long long b = fib(n - 2);
    return a + b;
}

__device__ int is_odd(int n);
__device__ __noinline__ int is_even(int n) { return n == 0 ? 1 : is_odd(n - 1) * 3 % 7; }
__device__ __noinline__ int is_odd(int n) { return n == 0 ? 0 : is_even(n - 1) * 5 % 11; }

__global__ void recurse(long long *fibs, int *parity) {
    int t = threadIdx.x;
    fibs[t] = fib(t % 20);
    parity[t] = is_even(t);
}

// Not associative: the compiler keeps the recursion.
__device__ __noinline__ unsigned depth(unsigned n) {
    if (n == 0) return 1;
    unsigned r = depth(n - 1);
    return (r ^ (r >> 3)) * 2654435761u + n;
}

__global__ void deep(unsigned *out, unsigned n) { out[threadIdx.x] = depth(n); }

static long long host_fib(int n) { return n < 2 ? n : host_fib(n - 1) + host_fib(n - 2); }

static int host_even(int n) {
    int v = n % 2 == 0 ? 1 : 0;
    for (int k = 1; k <= n; k++) v = (n - k) % 2 == 0 ? v * 3 % 7 : v * 5 % 11;
    return v;
}

static unsigned host_depth(unsigned n) {
    unsigned r = 1;
    for (unsigned k = 1; k <= n; k++) r = (r ^ (r >> 3)) * 2654435761u + k;
    return r;
}

int main(void) {
    size_t heap = 0, stack = 0;
    T(cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
    OUT("heap limit %zu", heap);
    T(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
    OUT("stack limit %zu", stack);
    // Before any kernel using malloc: the size may still change.
    T(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 1 << 20));
    T(cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
    OUT("heap limit %zu", heap);

    enum { BLOCKS = 8, THREADS = 128, N = BLOCKS * THREADS, WORDS = 40 };
    unsigned long long *sums = NULL;
    int **slots = NULL;
    T(cudaMalloc(&sums, N * sizeof *sums));
    T(cudaMalloc(&slots, N * sizeof *slots));
    NEED(sums);
    NEED(slots);
    heap_sums<<<BLOCKS, THREADS>>>(sums, WORDS);
    cudaError_t e = T(cudaDeviceSynchronize());
    if (e == cudaErrorNotSupported) {
        printf("SKIP: the driver does not load modules, so kernels cannot run\n");
        return SKIP_EXIT;
    }
    static unsigned long long hs[N];
    T(cudaMemcpy(hs, sums, sizeof hs, cudaMemcpyDeviceToHost));
    int right = 0;
    for (int t = 0; t < N; t++) {
        unsigned long long want = 0;
        for (int i = 0; i < WORDS; i++) want += t + i;
        right += hs[t] == want;
    }
    OUT("%d of %d threads summed their own block", right, N);
    CHECK(right == N);

    // Kept across launches, read and freed by the next.
    heap_keep<<<BLOCKS, THREADS>>>(slots, WORDS);
    T(cudaGetLastError());
    heap_read_and_free<<<BLOCKS, THREADS>>>(slots, WORDS, sums);
    T(cudaDeviceSynchronize());
    T(cudaMemcpy(hs, sums, sizeof hs, cudaMemcpyDeviceToHost));
    right = 0;
    for (int t = 0; t < N; t++) {
        unsigned long long want = 0;
        for (int i = 0; i < WORDS; i++) want += t * 1000ull + i;
        right += hs[t] == want;
    }
    OUT("%d of %d blocks survived to the next launch", right, N);
    CHECK(right == N);

    // 1024 threads asking 64 KiB each of a 1 MiB heap: some get memory, the rest NULL.
    heap_keep<<<BLOCKS, THREADS>>>(slots, 16 << 10);
    T(cudaDeviceSynchronize());
    static int *hp[N];
    T(cudaMemcpy(hp, slots, sizeof hp, cudaMemcpyDeviceToHost));
    int got = 0;
    for (int t = 0; t < N; t++) got += hp[t] != NULL;
    OUT("some threads got memory: %s; some got NULL: %s", got > 0 ? "yes" : "no",
        got < N ? "yes" : "no");
    CHECK(got > 0 && got < N);
    heap_read_and_free<<<BLOCKS, THREADS>>>(slots, 0, sums);
    T(cudaDeviceSynchronize());

    // __nv_aligned_device_malloc: every block at the alignment asked.
    heap_aligned<<<BLOCKS, THREADS>>>(sums, 256);
    T(cudaDeviceSynchronize());
    T(cudaMemcpy(hs, sums, sizeof hs, cudaMemcpyDeviceToHost));
    right = 0;
    for (int t = 0; t < N; t++) right += hs[t] == 0;
    OUT("%d of %d aligned blocks at 256 bytes", right, N);
    CHECK(right == N);

    // A kernel using malloc has run: the heap's size is fixed (cuCtxSetLimit's
    // documentation: cudaErrorInvalidValue).
    T(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 2 << 20));
    T(cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
    OUT("heap limit %zu", heap);

    // Function pointers.
    int *vals = NULL;
    T(cudaMalloc(&vals, N * sizeof *vals));
    NEED(vals);
    fill_table<<<1, 1>>>();
    apply<<<BLOCKS, THREADS>>>(vals, 7);
    T(cudaDeviceSynchronize());
    static int hv[N];
    T(cudaMemcpy(hv, vals, sizeof hv, cudaMemcpyDeviceToHost));
    right = 0;
    for (int t = 0; t < N; t++) {
        int want = t % 3 == 0 ? t + 7 : t % 3 == 1 ? t * 7 : t - 7;
        right += hv[t] == want;
    }
    OUT("%d of %d calls through the table right", right, N);
    CHECK(right == N);
    areas<<<BLOCKS, THREADS>>>(vals);
    T(cudaDeviceSynchronize());
    T(cudaMemcpy(hv, vals, sizeof hv, cudaMemcpyDeviceToHost));
    right = 0;
    for (int t = 0; t < N; t++) right += hv[t] == ((t & 1) ? t * t : t * t / 2);
    OUT("%d of %d virtual calls right", right, N);
    CHECK(right == N);

    // Recursion, each lane to its own depth.
    long long *fibs = NULL;
    T(cudaMalloc(&fibs, 64 * sizeof *fibs));
    NEED(fibs);
    recurse<<<1, 64>>>(fibs, vals);
    T(cudaDeviceSynchronize());
    long long hf[64];
    int hpar[64];
    T(cudaMemcpy(hf, fibs, sizeof hf, cudaMemcpyDeviceToHost));
    T(cudaMemcpy(hpar, vals, sizeof hpar, cudaMemcpyDeviceToHost));
    right = 0;
    for (int t = 0; t < 64; t++) right += hf[t] == host_fib(t % 20) && hpar[t] == host_even(t);
    OUT("%d of 64 recursive results right", right);
    CHECK(right == 64);

    unsigned *d = NULL;
    T(cudaMalloc(&d, 32 * sizeof *d));
    NEED(d);
    deep<<<1, 32>>>(d, 20);
    T(cudaDeviceSynchronize());
    unsigned hd[32];
    T(cudaMemcpy(hd, d, sizeof hd, cudaMemcpyDeviceToHost));
    right = 0;
    for (int t = 0; t < 32; t++) right += hd[t] == host_depth(20);
    OUT("%d of 32 threads 20 calls deep right", right);
    CHECK(right == 32);

    // Last: a million calls deep on the default stack. The error is sticky.
    deep<<<1, 32>>>(d, 1000000);
    T(cudaDeviceSynchronize());
    T(cudaGetLastError());
    return finish();
}
