// In the spirit of NVIDIA's jacobiCudaGraphs sample: Jacobi iterations for A x = b (A
// tridiagonal, 4 on the diagonal and -1 beside it, so the iteration converges), one
// iteration being a pair of kernels (x -> y, y -> x, the second also measuring the largest
// change) with a clear and a copy of that measure around them. The iteration is captured
// once and replayed until the change is small; the same kernels launched one by one give
// the same iterates, bit for bit (every element's update is the same float operations in
// the same order, and the largest change is an atomicMax, whatever the order).
#include "common.h"

enum { N = 1024, THREADS = 128, MAX_ITERATIONS = 200 };

__global__ void jacobi_half(const float *x, float *y, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float left = i > 0 ? x[i - 1] : 0.0f, right = i + 1 < n ? x[i + 1] : 0.0f;
        y[i] = (b[i] + left + right) * 0.25f;
    }
}

// The second half also measures max |x_new - x_old| as the bits of a non-negative float,
// which order as unsigned integers do.
__global__ void jacobi_half_measure(const float *y, float *x, const float *b, unsigned *change, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float left = i > 0 ? y[i - 1] : 0.0f, right = i + 1 < n ? y[i + 1] : 0.0f;
        float v = (b[i] + left + right) * 0.25f;
        atomicMax(change, __float_as_uint(fabsf(v - x[i])));
        x[i] = v;
    }
}

static const float TOLERANCE = 1e-5f;

static float solution(int i) { return (float)(i % 5 + 1); }

static float as_float(unsigned u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

int main(void) {
    float *h_b = NULL, *h_x = NULL, *h_x2 = NULL;
    unsigned *h_change = NULL;
    float *d_x = NULL, *d_y = NULL, *d_b = NULL;
    unsigned *d_change = NULL;
    T(cudaMallocHost((void **)&h_b, N * sizeof(float)));
    T(cudaMallocHost((void **)&h_x, N * sizeof(float)));
    T(cudaMallocHost((void **)&h_x2, N * sizeof(float)));
    T(cudaMallocHost((void **)&h_change, sizeof(unsigned)));
    T(cudaMalloc((void **)&d_x, N * sizeof(float)));
    T(cudaMalloc((void **)&d_y, N * sizeof(float)));
    T(cudaMalloc((void **)&d_b, N * sizeof(float)));
    T(cudaMalloc((void **)&d_change, sizeof(unsigned)));
    NEED(h_b);
    NEED(h_x);
    NEED(h_x2);
    NEED(h_change);
    NEED(d_x);
    NEED(d_y);
    NEED(d_b);
    NEED(d_change);
    // b = A x* for the known solution x*.
    for (int i = 0; i < N; i++) {
        float left = i > 0 ? solution(i - 1) : 0, right = i + 1 < N ? solution(i + 1) : 0;
        h_b[i] = 4 * solution(i) - left - right;
    }
    cudaStream_t s;
    T(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    T(cudaMemcpyAsync(d_b, h_b, N * sizeof(float), cudaMemcpyHostToDevice, s));
    T(cudaMemsetAsync(d_x, 0, N * sizeof(float), s));
    T(cudaStreamSynchronize(s));

    int blocks = (N + THREADS - 1) / THREADS;
    // ---- one iteration, captured once ---------------------------------------------------
    cudaGraph_t g = NULL;
    T(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    T(cudaMemsetAsync(d_change, 0, sizeof(unsigned), s));
    jacobi_half<<<blocks, THREADS, 0, s>>>(d_x, d_y, d_b, N);
    jacobi_half_measure<<<blocks, THREADS, 0, s>>>(d_y, d_x, d_b, d_change, N);
    T(cudaMemcpyAsync(h_change, d_change, sizeof(unsigned), cudaMemcpyDeviceToHost, s));
    T(cudaStreamEndCapture(s, &g));
    size_t nodes = 0;
    T(cudaGraphGetNodes(g, NULL, &nodes));
    OUT("one iteration: %zu nodes", nodes);
    CHECK(nodes == 4);
    cudaGraphExec_t exec = NULL;
    T(cudaGraphInstantiate(&exec, g, 0));

    int iterations = 0, launch_errors = 0;
    float change = 0;
    for (iterations = 1; iterations <= MAX_ITERATIONS; iterations++) {
        launch_errors += cudaGraphLaunch(exec, s) != cudaSuccess;
        launch_errors += cudaStreamSynchronize(s) != cudaSuccess;
        change = as_float(*h_change);
        if (change < TOLERANCE) break;
    }
    T(cudaGetLastError());
    OUT("graph replays: converged: %s, iterations: %d, launch errors: %d", change < TOLERANCE ? "yes" : "no",
        iterations, launch_errors);
    CHECK(change < TOLERANCE && launch_errors == 0);
    T(cudaMemcpy(h_x, d_x, N * sizeof(float), cudaMemcpyDeviceToHost));
    float worst = 0;
    for (int i = 0; i < N; i++) worst = fmaxf(worst, fabsf(h_x[i] - solution(i)));
    OUT("largest error from the solution below 1e-4: %s", worst < 1e-4f ? "yes" : "no");
    CHECK(worst < 1e-4f);

    // ---- the same iterations, launched one by one ----------------------------------------
    T(cudaMemsetAsync(d_x, 0, N * sizeof(float), s));
    int direct = 0;
    for (direct = 1; direct <= MAX_ITERATIONS; direct++) {
        cudaMemsetAsync(d_change, 0, sizeof(unsigned), s);
        jacobi_half<<<blocks, THREADS, 0, s>>>(d_x, d_y, d_b, N);
        jacobi_half_measure<<<blocks, THREADS, 0, s>>>(d_y, d_x, d_b, d_change, N);
        cudaMemcpyAsync(h_change, d_change, sizeof(unsigned), cudaMemcpyDeviceToHost, s);
        cudaStreamSynchronize(s);
        if (as_float(*h_change) < TOLERANCE) break;
    }
    T(cudaGetLastError());
    T(cudaMemcpy(h_x2, d_x, N * sizeof(float), cudaMemcpyDeviceToHost));
    int same = direct == iterations && memcmp(h_x, h_x2, N * sizeof(float)) == 0;
    OUT("launched one by one: same iterations and same bits: %s", same ? "yes" : "no");
    CHECK(same);

    T(cudaGraphExecDestroy(exec));
    T(cudaGraphDestroy(g));
    T(cudaStreamDestroy(s));
    T(cudaFree(d_x));
    T(cudaFree(d_y));
    T(cudaFree(d_b));
    T(cudaFree(d_change));
    T(cudaFreeHost(h_b));
    T(cudaFreeHost(h_x));
    T(cudaFreeHost(h_x2));
    T(cudaFreeHost(h_change));
    return finish();
}
