// cudaFuncGetName: the name of a kernel given by its host stub, as the device code names
// it (mangled unless the kernel has C linkage); a NULL out-pointer is refused; the same
// kernel gives the same name again.
#include "common.h"

extern "C" __global__ void c_linkage(int *p) { *p = 1; }
__global__ void cpp_linkage(int *p, float f) { *p = (int)f; }
template <typename V> __global__ void templated(V *p) { *p = V(3); }
namespace outer {
__global__ void in_namespace(int *p) { *p = 4; }
}

static void name_of(const char *what, const void *func) {
    const char *name = NULL;
    if (T(cudaFuncGetName(&name, func)) == cudaSuccess) {
        OUT("%s: %s", what, name ? name : "(NULL)");
        CHECK(name != NULL);
    }
}

int main() {
    name_of("c_linkage", (const void *)c_linkage);
    name_of("cpp_linkage", (const void *)cpp_linkage);
    name_of("templated<float>", (const void *)templated<float>);
    name_of("templated<int>", (const void *)templated<int>);
    name_of("outer::in_namespace", (const void *)outer::in_namespace);

    // The same pointer again gives the same name.
    const char *first = NULL, *again = NULL;
    T(cudaFuncGetName(&first, (const void *)cpp_linkage));
    T(cudaFuncGetName(&again, (const void *)cpp_linkage));
    CHECK(first && again && strcmp(first, again) == 0);

    // The C++ API's template overload.
    const char *templ = NULL;
    T(cudaFuncGetName(&templ, c_linkage));
    CHECK(templ && strcmp(templ, "c_linkage") == 0);

    T(cudaFuncGetName(NULL, (const void *)c_linkage));
    T(cudaGetLastError());

    // The kernels still launch after being named.
    int *d = NULL;
    T(cudaMalloc(&d, sizeof(int)));
    NEED(d);
    c_linkage<<<1, 1>>>(d);
    T(cudaGetLastError());
    int h = 0;
    T(cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(h == 1);
    T(cudaFree(d));
    return finish();
}
