// `__managed__` variables: one allocation the host and the kernels share at one address.
// Initialised in the module (a scalar, an array, a struct), read by the host before any
// kernel ran, updated by kernels and by the host in turn with synchronisations between,
// reached through cudaGetSymbolAddress-free pointers (the host takes `&x`), and checked.
#include "common.h"

struct Pair {
    int a;
    double b;
};

__managed__ int counter = 5;
__managed__ float table[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__managed__ Pair pair = {7, 0.5};
__managed__ unsigned long long zeroed[1024];

__global__ void bump(int by) {
    counter += by;
    for (int i = 0; i < 4; i++) table[i] *= 2.0f;
    pair.a += 1;
    pair.b *= 4.0;
}

__global__ void fill_zeroed() {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 1024) zeroed[i] = (unsigned long long)i * i;
}

int main(void) {
    OUT("before any kernel: counter %d, table %g %g %g %g, pair %d %g", counter, table[0], table[1],
        table[2], table[3], pair.a, pair.b);
    CHECK(counter == 5 && table[3] == 4.0f && pair.a == 7 && pair.b == 0.5);
    bump<<<1, 1>>>(10);
    T(cudaGetLastError());
    T(cudaDeviceSynchronize());
    OUT("after bump(10): counter %d, table %g %g %g %g, pair %d %g", counter, table[0], table[1],
        table[2], table[3], pair.a, pair.b);
    CHECK(counter == 15 && table[0] == 2.0f && pair.a == 8 && pair.b == 2.0);
    // The host writes; the next kernel sees it.
    counter = 100;
    table[2] = -1.0f;
    bump<<<1, 1>>>(1);
    T(cudaDeviceSynchronize());
    OUT("after the host's writes and bump(1): counter %d, table[2] %g", counter, table[2]);
    CHECK(counter == 101 && table[2] == -2.0f);
    // A pointer to a managed variable is a managed pointer.
    int *p = &counter;
    cudaPointerAttributes attr;
    T(cudaPointerGetAttributes(&attr, p));
    OUT("&counter: type %d", (int)attr.type);
    fill_zeroed<<<4, 256>>>();
    T(cudaDeviceSynchronize());
    unsigned long long sum = 0;
    for (int i = 0; i < 1024; i++) sum += zeroed[i];
    OUT("sum of squares below 1024: %llu", sum);
    CHECK(sum == 357389824ull);
    // cudaMemcpy from a managed variable works as from any managed memory.
    int copy = 0;
    T(cudaMemcpy(&copy, &counter, sizeof copy, cudaMemcpyDefault));
    OUT("copied counter %d", copy);
    CHECK(copy == 101);
    return finish();
}
