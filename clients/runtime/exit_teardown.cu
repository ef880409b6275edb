// Runtime calls made while the process exits. NVIDIA's runtime tears itself down in an
// exit handler it registers when it starts, so the destructor of an object built before
// main (registered before that handler, run after it) finds the runtime unloading: Thrust's
// examples/cuda/global_device_vector.cu frees a global device_vector's memory then and
// accepts cudaSuccess or cudaErrorCudartUnloading. An exit handler registered after the
// runtime's first use runs before the runtime's, with the thread's current context still
// there: its cudaFree succeeds. The transcript records what the runtime answers; any
// other answer ends the program with status 1.
#include "common.h"
#include <unistd.h>

static void *kept = NULL;
static void *freed_early = NULL;

static void free_before_teardown(void) {
    cudaError_t e = T(cudaFree(freed_early));
    if (e != cudaSuccess) {
        printf("    CHECK FAILED: not freed before the runtime's teardown\n");
        fflush(stdout);
        _exit(1);
    }
}

struct FreesAtExit {
    ~FreesAtExit() {
        cudaError_t e = T(cudaFree(kept));
        if (e != cudaSuccess && e != cudaErrorCudartUnloading) {
            printf("    CHECK FAILED: neither freed nor unloading\n");
            fflush(stdout);
            _exit(1);
        }
    }
};

// Built before main: its destructor runs after every exit handler registered later.
static FreesAtExit frees_at_exit;

int main(void) {
    T(cudaMalloc(&kept, 256));
    OUT("%s", alignment(kept));
    NEED(kept);
    T(cudaMalloc(&freed_early, 256));
    NEED(freed_early);
    // Registered after the runtime started: runs before its exit handler.
    atexit(free_before_teardown);
    // Still inside main: the runtime works.
    T(cudaMemset(kept, 0, 256));
    T(cudaDeviceSynchronize());
    return finish();
}
