/* cuDeviceGetTexture1DLinearMaxWidth for every CUarray_format cuda.h names and 1, 2 and 4
 * channels: probe api_gaps saw 2^30 elements for 1- and 4-byte elements and 2^28 for
 * 16-byte ones; 2- and 8-byte elements (and the other formats) settle the rule.
 *   gcc -I$CUDA/include ci/explore/tex1d_linear_width.c -lcuda -o w && ./w */
#include <cuda.h>
#include <stdio.h>

int main(void) {
    if (cuInit(0)) return 1;
    for (unsigned f = 0; f <= 0xb0; f++) {
        for (unsigned ch = 1; ch <= 4; ch *= 2) {
            size_t w = 0;
            CUresult r = cuDeviceGetTexture1DLinearMaxWidth(&w, (CUarray_format)f, ch, 0);
            if (r == CUDA_ERROR_INVALID_VALUE && ch == 1) break;
            const char *n = "?";
            cuGetErrorName(r, &n);
            printf("format %#x x%u: %s", f, ch, n);
            if (r == CUDA_SUCCESS) printf(", %zu elements", w);
            printf("\n");
        }
    }
    return 0;
}
