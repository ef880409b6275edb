// nvcc-arch: sm_90a
// A probe of how wgmma's swizzle phase follows the descriptor's base offset (bits 49-51)
// in each swizzle mode, past what wgmma_swizzle_probe recorded (128B, B 3 rows into its
// block, base offsets 0 and 3: the hardware XORs the chunk bits with the absolute
// address's row bits, the base offset shifting the phase; the mock takes the phase to be
// the row bits less the base offset, in every mode). Here B (8 columns of 16 halves,
// K-major) lies j rows (j = 0..7) into a 1024-byte block, in each of the 128B, 64B and
// 32B modes, read with every base offset 0..7. Every 16-byte chunk of B's 8 rows holds
// values naming its row, chunk and element; A is the identity, so D's row k is B's row k
// as read, and for each column n the program prints the phase it was read with: the
// physical chunk of k = 0..7 (k = 8..15 must be the next, XOR 1; else "?").
// Recorded on the H200: the mock's transcript is the H200's, every case.
#include "common.h"

enum { IMAGE = 4096, A_BYTES = 2048 };

__global__ void probe(const unsigned *image, float *out, unsigned b_start, unsigned mode, unsigned base_offset) {
#if !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __trap();
#else
    __shared__ __align__(1024) unsigned smem[IMAGE / 4];
    for (unsigned i = threadIdx.x; i < IMAGE / 4; i += blockDim.x) smem[i] = image[i];
    __syncthreads();
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    unsigned long long s = (unsigned)__cvta_generic_to_shared(smem);
    // A: no swizzle, core matrices (LBO 128 along K, SBO 256 down M). B: swizzled (mode 1
    // 128B, 2 64B, 3 32B), SBO 1024 (one 8-row group used), the base offset as given.
    unsigned long long da = (s >> 4) | (128ull >> 4 << 16) | (256ull >> 4 << 32);
    unsigned long long db = ((s + b_start) >> 4) | (16ull >> 4 << 16) | (1024ull >> 4 << 32) |
                            ((unsigned long long)base_offset << 49) | ((unsigned long long)mode << 62);
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

// f16 bits of a small non-negative integer (exact).
static unsigned short half_of(unsigned v) {
    if (v == 0) return 0;
    int e = 31 - __builtin_clz(v);
    return (unsigned short)(((e + 15) << 10) | ((v << (10 - e)) & 0x3ff));
}

// The value in element e of physical chunk c of B's row n: distinct, 1..512.
static unsigned b_value(unsigned n, unsigned c, unsigned e) { return 1 + n * 64 + c * 8 + e; }

int main(void) {
    static unsigned char image[IMAGE];
    void *dimage = NULL, *dout = NULL;
    T(cudaMalloc(&dimage, IMAGE));
    T(cudaMalloc(&dout, 64 * 8 * sizeof(float)));
    NEED(dimage && dout);
    const struct { unsigned mode, chunks; const char *name; } modes[] = {{1, 8, "128B"}, {2, 4, "64B"}, {3, 2, "32B"}};
    for (unsigned m = 0; m < 3; m++) {
        unsigned w = modes[m].chunks, row_bytes = 16 * w;
        for (unsigned j = 0; j < 8; j++) {
            unsigned b_start = A_BYTES + j * row_bytes;
            memset(image, 0, sizeof image);
            unsigned short *h = (unsigned short *)image;
            for (int r = 0; r < 64; r++)
                for (int k = 0; k < 16; k++)
                    h[((r % 8) * 16 + (r / 8) * 256 + (k / 8) * 128 + (k % 8) * 2) / 2] = half_of(r == k);
            for (unsigned n = 0; n < 8; n++)
                for (unsigned c = 0; c < w; c++)
                    for (unsigned e = 0; e < 8; e++)
                        h[(b_start + n * row_bytes + c * 16 + e * 2) / 2] = half_of(b_value(n, c, e));
            CHECK(cudaMemcpy(dimage, image, IMAGE, cudaMemcpyHostToDevice) == cudaSuccess);
            char line[512];
            int o = snprintf(line, sizeof line, "%s, B %u rows into its block:", modes[m].name, j);
            for (unsigned base = 0; base < 8; base++) {
                probe<<<1, 128>>>((const unsigned *)dimage, (float *)dout, b_start, modes[m].mode, base);
                if (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
                    o += snprintf(line + o, sizeof line - o, " %u: fault", base);
                    break;
                }
                static float d[64 * 8];
                CHECK(cudaMemcpy(d, dout, sizeof d, cudaMemcpyDeviceToHost) == cudaSuccess);
                o += snprintf(line + o, sizeof line - o, " %u:", base);
                for (unsigned n = 0; n < 8; n++) {
                    // Column n of D's rows 0..15: B's row n as read.
                    int phase = -1, regular = 1;
                    for (unsigned k = 0; k < 16; k++) {
                        int v = (int)d[k * 8 + n] - 1;
                        unsigned rn = v / 64, rc = (v / 8) % 8, re = v % 8;
                        if (v < 0 || rn != n || re != k % 8) { regular = 0; break; }
                        if (k == 0) phase = (int)rc;
                        if (rc != ((unsigned)phase ^ (k / 8))) regular = 0;
                    }
                    o += regular ? snprintf(line + o, sizeof line - o, "%d", phase)
                                 : snprintf(line + o, sizeof line - o, "?");
                }
            }
            OUT("%s", line);
        }
    }
    T(cudaFree(dimage));
    T(cudaFree(dout));
    return finish();
}
