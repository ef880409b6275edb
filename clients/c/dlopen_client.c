/* A program that is not linked with -lcuda: it dlopens libcuda.so.1 as the CUDA runtime,
 * PyTorch and NVIDIA's Python bindings do, takes cuGetProcAddress from it, and gets every
 * other entry point through cuGetProcAddress. Prints the library it got. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*init_t)(unsigned);
typedef int (*getproc_t)(const char *, void **, int, unsigned long long, int *);
typedef int (*reserve_t)(unsigned long long *, size_t, size_t, unsigned long long, unsigned long long);
typedef int (*free_t)(unsigned long long, size_t);

int main(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    init_t init = (init_t)dlsym(lib, "cuInit");
    getproc_t getproc = (getproc_t)dlsym(lib, "cuGetProcAddress_v2");
    if (!init || !getproc || init(0) != 0) return 2;
    void *p = NULL;
    int status = -1;
    if (getproc("cuMemAddressReserve", &p, 12000, 0, &status) != 0 || !p || status != 0) return 3;
    reserve_t reserve = (reserve_t)p;
    if (getproc("cuMemAddressFree", &p, 12000, 0, &status) != 0 || !p) return 4;
    free_t release = (free_t)p;
    unsigned long long va = 0;
    if (reserve(&va, 2 << 20, 0, 0, 0) != 0 || release(va, 2 << 20) != 0) return 5;
    Dl_info info;
    dladdr((void *)init, &info);
    printf("ok %s\n", info.dli_fname);
    return 0;
}
