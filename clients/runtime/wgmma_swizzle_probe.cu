// nvcc-arch: sm_90a
// A probe of what the PTX ISA leaves open about wgmma's swizzled operands: a 128-byte
// swizzled matrix whose pattern does not start on a 1024-byte boundary, and the
// descriptor's base offset (bits 49-51; the ISA: (pattern start >> 7) & 7 in that case).
// B (8 columns of 16 halves, K-major) lies 3 rows (384 bytes) into a 1024-byte block,
// written two ways: swizzled by the row's place in the pattern that starts there
// ("relative"), or by the shared address's own bits, as TMA and CUTLASS write
// ("absolute"); each read with base offset 0 and 3. A control has B on the boundary. A is
// 1 on the diagonal of its first 16 rows, so D's row k is B's row k as the tensor cores
// read it: the program prints whether that is B as written, else what it read.
// Each case runs in its own process (this program with arguments): a case the GPU faults
// on would leave the others clean. Recorded on the H200 (goldens/): relative layout with
// base offset 3 and absolute layout with base offset 0 read B as written; the other two
// read zeros (other chunks of B's rows), "-" below.
#include <cuda_fp16.h>
#include "common.h"

enum { IMAGE = 4096, A_BYTES = 2048 };

__global__ void probe(const unsigned *image, float *out, unsigned b_start, unsigned base_offset) {
#if !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __trap();
#else
    __shared__ __align__(1024) unsigned smem[IMAGE / 4];
    for (unsigned i = threadIdx.x; i < IMAGE / 4; i += blockDim.x) smem[i] = image[i];
    __syncthreads();
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    unsigned long long s = (unsigned)__cvta_generic_to_shared(smem);
    // A: no swizzle, core matrices (LBO 128 along K, SBO 256 down M). B: 128-byte swizzle,
    // SBO 1024, the base offset as given.
    unsigned long long da = (s >> 4) | (128ull >> 4 << 16) | (256ull >> 4 << 32);
    unsigned long long db = ((s + b_start) >> 4) | (16ull >> 4 << 16) | (1024ull >> 4 << 32) |
                            ((unsigned long long)base_offset << 49) | (1ull << 62);
    float d[4] = {0, 0, 0, 0};
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0,%1,%2,%3}, %4, %5, 0, 1, 1, 0, 0;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "l"(da), "l"(db));
    asm volatile("wgmma.commit_group.sync.aligned;\n wgmma.wait_group.sync.aligned 0;" ::: "memory");
    unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int i = 0; i < 4; i++)
        out[(16 * warp + lane / 4 + 8 * (i / 2)) * 8 + 2 * (lane % 4) + i % 2] = d[i];
#endif
}

// B's element (k, n): distinct, exact in f16.
static float b_value(int k, int n) { return (float)(n * 16 + k + 1); }

// One case: B at byte `b_start` of the image, swizzled relative to its own start or by
// absolute address, read with `base_offset`.
static int run_case(unsigned b_start, bool absolute, unsigned base_offset) {
    static unsigned char image[IMAGE];
    memset(image, 0, sizeof image);
    half *h = (half *)image;
    // A: row m, column k at (m%8)*16 + (m/8)*256 + (k/8)*128 + (k%8)*2; 1 where m == k.
    for (int m = 0; m < 64; m++)
        for (int k = 0; k < 16; k++)
            h[((m % 8) * 16 + (m / 8) * 256 + (k / 8) * 128 + (k % 8) * 2) / 2] = __float2half(m == k ? 1.0f : 0.0f);
    // B: column n is a 128-byte row at b_start + 128n; its two 16-byte chunks of K swizzled.
    for (int n = 0; n < 8; n++)
        for (int k = 0; k < 16; k++) {
            unsigned row = b_start + 128 * n;
            unsigned phase = absolute ? (row >> 7) & 7 : (unsigned)n;
            unsigned at = row + (((k / 8) ^ phase) * 16) + (k % 8) * 2;
            h[at / 2] = __float2half(b_value(k, n));
        }
    void *dimage = NULL, *dout = NULL;
    T(cudaMalloc(&dimage, IMAGE));
    T(cudaMalloc(&dout, 64 * 8 * sizeof(float)));
    NEED(dimage && dout);
    T(cudaMemcpy(dimage, image, IMAGE, cudaMemcpyHostToDevice));
    probe<<<1, 128>>>((const unsigned *)dimage, (float *)dout, b_start, base_offset);
    T(cudaGetLastError());
    if (T(cudaDeviceSynchronize()) != cudaSuccess) return 0;
    static float d[64 * 8];
    T(cudaMemcpy(d, dout, sizeof d, cudaMemcpyDeviceToHost));
    int same = 1;
    for (int k = 0; k < 16; k++)
        for (int n = 0; n < 8; n++) same &= d[k * 8 + n] == b_value(k, n);
    if (same) {
        OUT("reads B as written");
    } else {
        // What was read, as (k,n) of B's values (0: a zero), for rows k = 0..15.
        for (int k = 0; k < 16; k++) {
            char line[256];
            int o = snprintf(line, sizeof line, "k=%2d:", k);
            for (int n = 0; n < 8; n++) {
                int v = (int)d[k * 8 + n] - 1;
                o += v < 0 ? snprintf(line + o, sizeof line - o, "   -   ")
                           : snprintf(line + o, sizeof line - o, " (%2d,%d)", v % 16, v / 16);
            }
            OUT("%s", line);
        }
    }
    T(cudaFree(dimage));
    T(cudaFree(dout));
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4) return run_case(atoi(argv[1]), argv[2][0] == 'a', atoi(argv[3]));
    const struct { unsigned start; const char *layout; unsigned base; } cases[] = {
        {A_BYTES, "relative", 0},          // the control: the pattern on a 1024-byte boundary
        {A_BYTES + 384, "relative", 0}, {A_BYTES + 384, "relative", 3},
        {A_BYTES + 384, "absolute", 0}, {A_BYTES + 384, "absolute", 3},
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        printf("case: B at byte %u, swizzled %s, base offset %u\n", cases[i].start, cases[i].layout, cases[i].base);
        fflush(stdout);
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "'%s' %u %s %u", argv[0], cases[i].start, cases[i].layout, cases[i].base);
        int rc = system(cmd);
        CHECK(rc == 0);
    }
    return finish();
}
