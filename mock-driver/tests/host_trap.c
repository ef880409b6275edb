/* The trap on host loads (CUMOCK_MISUSE=1, mock-driver/src/host_trap.rs) next to the
 * program's own faults (mock-driver/tests/host_trap.rs). A kernel writes page-locked
 * memory; the host sees a flag that a second kernel raises (a kernel that reads the flag
 * too, so the mock traps no load of it), loads the first kernel's word before any
 * synchronisation (trapped, then proceeds: "loaded 7"), synchronises (the report), then
 * faults on an address of its own:
 *   chain    with a SIGSEGV handler of the program's installed before the mock's: that
 *            handler runs ("own handler", exit status 3)
 *   default  with none: the process ends by SIGSEGV, as it would without the mock
 *   host-function  instead of the host, a host function queued on another non-blocking
 *            stream loads the word (nothing orders it after the kernel: reported, naming
 *            the launch and the host function's load); no fault of the program's */
#include <cuda.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flag_kernels.h"

static void own_handler(int sig) {
    (void)sig;
    static const char said[] = "own handler\n";
    ssize_t w = write(2, said, sizeof said - 1);
    (void)w;
    _exit(3);
}

static unsigned seen_by_host_function;

static void CUDA_CB reader(void *word) {
    seen_by_host_function = *(volatile unsigned *)word;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "default";
    if (strcmp(mode, "chain") == 0) signal(SIGSEGV, own_handler);
    CUcontext ctx;
    CUmodule m;
    CUfunction put, raise_flag;
    CUstream s;
    MUST(cuInit(0));
    MUST(cuDevicePrimaryCtxRetain(&ctx, 0));
    MUST(cuCtxSetCurrent(ctx));
    MUST(cuModuleLoadData(&m, ptx));
    MUST(cuModuleGetFunction(&put, m, "put"));
    MUST(cuModuleGetFunction(&raise_flag, m, "raise"));
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    unsigned *word, *flag;
    MUST(cuMemAllocHost((void **)&word, 4096));
    MUST(cuMemAllocHost((void **)&flag, 4096));
    *word = 0;
    *flag = 0;
    CUdeviceptr w = (CUdeviceptr)(uintptr_t)word, f = (CUdeviceptr)(uintptr_t)flag;
    unsigned seven = 7;
    void *put_args[] = {&w, &seven};
    void *raise_args[] = {&f};
    MUST(cuLaunchKernel(put, 1, 1, 1, 1, 1, 1, 0, s, put_args, NULL));
    MUST(cuLaunchKernel(raise_flag, 1, 1, 1, 1, 1, 1, 0, s, raise_args, NULL));
    while (*(volatile unsigned *)flag == 0) {
    }
    if (strcmp(mode, "host-function") == 0) {
        CUstream other;
        MUST(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
        MUST(cuLaunchHostFunc(other, reader, word));
        MUST(cuStreamSynchronize(other));
        printf("loaded %u\n", seen_by_host_function);
        MUST(cuStreamSynchronize(s));
        return 0;
    }
    printf("loaded %u\n", *(volatile unsigned *)word);
    fflush(stdout);
    MUST(cuStreamSynchronize(s));
    *(volatile unsigned *)(uintptr_t)8 = 1;
    printf("not reached\n");
    return 0;
}
