/* What host_trap.c and ordering_vmm.c share: the kernels `put` (*p = v) and `raise`
 * (++*p through volatile accesses: a kernel that reads the flag it raises, so the mock
 * traps no host load of it), and MUST, which ends the program on a failed call. */
#ifndef FLAG_KERNELS_H
#define FLAG_KERNELS_H
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

static const char *ptx =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .entry put(.param .u64 p, .param .u32 v)\n"
    "{\n"
    "  .reg .b32 %r<2>;\n"
    "  .reg .b64 %rd<2>;\n"
    "  ld.param.u64 %rd1, [p];\n"
    "  ld.param.u32 %r1, [v];\n"
    "  st.global.u32 [%rd1], %r1;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry raise(.param .u64 p)\n"
    "{\n"
    "  .reg .b32 %r<3>;\n"
    "  .reg .b64 %rd<2>;\n"
    "  ld.param.u64 %rd1, [p];\n"
    "  ld.volatile.global.u32 %r1, [%rd1];\n"
    "  add.u32 %r2, %r1, 1;\n"
    "  st.volatile.global.u32 [%rd1], %r2;\n"
    "  ret;\n"
    "}\n";

#define MUST(call)                                                 \
    do {                                                           \
        CUresult r_ = (call);                                      \
        if (r_ != CUDA_SUCCESS) {                                  \
            fprintf(stderr, "%s failed: %d\n", #call, (int)r_);    \
            exit(1);                                               \
        }                                                          \
    } while (0)

#endif
