// nvcc-options: --default-stream=per-thread
// Built with `--default-stream per-thread`, so nvcc's headers route the synchronous and
// stream-0 calls to their _ptds/_ptsz exports: 3D copies between pitched memory and a 3D
// array, 2D and linear (deprecated) copies in and out of arrays, array-to-array copies (2D
// and linear), 3D memsets of cudaMalloc3D memory, and symbol copies on stream 0; the
// texture and surface descriptor getters after creating objects. Every value is checked.
#include "common.h"

__device__ int symbol_words[8];

static int words_equal(const unsigned *a, const unsigned *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

int main() {
    const size_t W = 8, H = 4, D = 3;  // a volume of u32
    unsigned host[W * H * D], back[W * H * D];
    for (size_t i = 0; i < W * H * D; i++) host[i] = 0x1000 + (unsigned)i;

    // cudaMalloc3D and cudaMemset3D(Async).
    cudaPitchedPtr p = {};
    T(cudaMalloc3D(&p, make_cudaExtent(W * 4, H, D)));
    NEED(p.ptr);
    OUT("pitch >= row: %d, xsize %zu, ysize %zu", p.pitch >= W * 4, p.xsize, p.ysize);
    T(cudaMemset3D(p, 0xab, make_cudaExtent(W * 4, H, D)));
    T(cudaMemset3DAsync(p, 0x11, make_cudaExtent(8, 2, 2), 0));
    cudaMemcpy3DParms c = {};
    c.srcPtr = p;
    c.dstPtr = make_cudaPitchedPtr(back, W * 4, W * 4, H);
    c.extent = make_cudaExtent(W * 4, H, D);
    c.kind = cudaMemcpyDeviceToHost;
    T(cudaMemcpy3D(&c));
    {
        int ok = 1;
        for (size_t z = 0; z < D; z++)
            for (size_t y = 0; y < H; y++)
                for (size_t x = 0; x < W; x++) {
                    unsigned want = (z < 2 && y < 2 && x < 2) ? 0x11111111u : 0xababababu;
                    if (back[(z * H + y) * W + x] != want) ok = 0;
                }
        CHECK(ok);
        OUT("memset volume as expected: %d", ok);
    }
    T(cudaMemset3D(p, 0, make_cudaExtent(p.pitch + 1, H, D)));

    // The volume through a 3D array: host -> array (cudaMemcpy3D), array -> pitched
    // memory (cudaMemcpy3DAsync on stream 0), pitched -> host.
    cudaChannelFormatDesc u32 = cudaCreateChannelDesc<unsigned>();
    cudaArray_t vol = NULL;
    T(cudaMalloc3DArray(&vol, &u32, make_cudaExtent(W, H, D)));
    NEED(vol);
    cudaMemcpy3DParms in = {};
    in.srcPtr = make_cudaPitchedPtr(host, W * 4, W, H);
    in.dstArray = vol;
    in.extent = make_cudaExtent(W, H, D);
    in.kind = cudaMemcpyHostToDevice;
    T(cudaMemcpy3D(&in));
    cudaMemcpy3DParms out = {};
    out.srcArray = vol;
    out.dstPtr = p;
    out.extent = make_cudaExtent(W, H, D);
    out.kind = cudaMemcpyDeviceToDevice;
    T(cudaMemcpy3DAsync(&out, 0));
    memset(back, 0, sizeof back);
    c.srcPtr = p;
    T(cudaMemcpy3D(&c));
    CHECK(words_equal(host, back, W * H * D));
    OUT("volume through the array: %d", words_equal(host, back, W * H * D));

    // 2D arrays: 2D and linear copies in and out, array to array.
    cudaArray_t a = NULL, b = NULL;
    T(cudaMallocArray(&a, &u32, W, H));
    T(cudaMallocArray(&b, &u32, W, H));
    NEED(a);
    NEED(b);
    T(cudaMemcpy2DToArray(a, 0, 0, host, W * 4, W * 4, H, cudaMemcpyHostToDevice));
    T(cudaMemcpy2DArrayToArray(b, 0, 0, a, 0, 0, W * 4, H, cudaMemcpyDeviceToDevice));
    memset(back, 0, sizeof back);
    T(cudaMemcpy2DFromArray(back, W * 4, b, 0, 0, W * 4, H, cudaMemcpyDeviceToHost));
    CHECK(words_equal(host, back, W * H));
    OUT("2D array to array: %d", words_equal(host, back, W * H));
    // A window: 3 columns of rows 1..2 moved to column 4 of rows 0..1.
    T(cudaMemcpy2DArrayToArray(b, 16, 0, a, 4, 1, 12, 2, cudaMemcpyDeviceToDevice));
    T(cudaMemcpy2DFromArrayAsync(back, W * 4, b, 0, 0, W * 4, H, cudaMemcpyDeviceToHost, 0));
    T(cudaStreamSynchronize(0));
    {
        int ok = 1;
        for (size_t y = 0; y < H; y++)
            for (size_t x = 0; x < W; x++) {
                unsigned want = host[y * W + x];
                if (y < 2 && x >= 4 && x < 7) want = host[(y + 1) * W + (x - 3)];
                if (back[y * W + x] != want) ok = 0;
            }
        CHECK(ok);
        OUT("2D window: %d", ok);
    }
    T(cudaMemcpy2DArrayToArray(b, 0, 0, a, 0, 0, W * 4 + 4, 1, cudaMemcpyDeviceToDevice));

    // Linear (deprecated) copies: 40 bytes from row 1, byte 8, running into row 2.
    unsigned ten[10], got[10];
    for (int i = 0; i < 10; i++) ten[i] = 0xc000 + i;
    T(cudaMemcpyToArray(a, 8, 1, ten, sizeof ten, cudaMemcpyHostToDevice));
    memset(got, 0, sizeof got);
    T(cudaMemcpyFromArray(got, a, 8, 1, sizeof got, cudaMemcpyDeviceToHost));
    CHECK(words_equal(ten, got, 10));
    OUT("linear round trip: %d", words_equal(ten, got, 10));
    T(cudaMemcpy2DFromArray(back, W * 4, a, 0, 0, W * 4, H, cudaMemcpyDeviceToHost));
    CHECK(back[1 * W + 2] == 0xc000 && back[2 * W + 3] == 0xc009 && back[2 * W + 4] == host[2 * W + 4] &&
          back[1 * W + 1] == host[1 * W + 1]);
    OUT("rows 1..2 after the linear copy: %x %x %x %x", back[1 * W + 1], back[1 * W + 2], back[2 * W + 3],
        back[2 * W + 4]);
    // The same through device memory and stream 0.
    unsigned *dev = NULL;
    T(cudaMalloc(&dev, sizeof ten));
    NEED(dev);
    for (int i = 0; i < 10; i++) ten[i] = 0xd000 + i;
    T(cudaMemcpy(dev, ten, sizeof ten, cudaMemcpyHostToDevice));
    T(cudaMemcpyToArrayAsync(b, 20, 0, dev, sizeof ten, cudaMemcpyDeviceToDevice, 0));
    T(cudaMemcpyArrayToArray(a, 0, 2, b, 20, 0, sizeof ten, cudaMemcpyDeviceToDevice));
    T(cudaMemcpyArrayToArray(a, 0, 3, b, 20, 0, sizeof ten, cudaMemcpyDeviceToDevice));
    memset(got, 0, sizeof got);
    T(cudaMemcpyFromArrayAsync(got, a, 0, 2, 32, cudaMemcpyDeviceToHost, 0));
    T(cudaMemcpyFromArray(got + 8, a, 0, 0, 8, cudaMemcpyDeviceToHost));
    T(cudaStreamSynchronize(0));
    CHECK(words_equal(ten, got, 8));
    CHECK(got[8] == host[0] && got[9] == host[1]);
    OUT("array to array, async: %x..%x then %x %x", got[0], got[7], got[8], got[9]);
    T(cudaMemcpyToArray(a, 0, H, ten, 4, cudaMemcpyHostToDevice));

    // Symbol copies on stream 0.
    unsigned eight[8] = {1, 2, 3, 4, 5, 6, 7, 8}, eight_back[8] = {};
    T(cudaMemcpyToSymbolAsync(symbol_words, eight, sizeof eight, 0, cudaMemcpyHostToDevice, 0));
    T(cudaMemcpyFromSymbolAsync(eight_back, symbol_words, 16, 16, cudaMemcpyDeviceToHost, 0));
    T(cudaStreamSynchronize(0));
    CHECK(eight_back[0] == 5 && eight_back[3] == 8);
    OUT("symbol words 4..7: %u %u %u %u", eight_back[0], eight_back[1], eight_back[2], eight_back[3]);
    int device = -1;
    T(cudaStreamGetDevice(0, &device));
    OUT("stream 0's device %d", device);

    // Texture and surface objects' descriptions, as the getters give them back.
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a;
    cudaTextureDesc td = {};
    td.addressMode[0] = cudaAddressModeClamp;
    td.addressMode[1] = cudaAddressModeWrap;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 1;
    td.borderColor[2] = 0.5f;
    td.maxAnisotropy = 4;
    cudaTextureObject_t tex = 0;
    T(cudaCreateTextureObject(&tex, &res, &td, NULL));
    cudaResourceDesc res_back;
    memset(&res_back, 0x5a, sizeof res_back);
    T(cudaGetTextureObjectResourceDesc(&res_back, tex));
    OUT("resType %d, same array %d", res_back.resType, res_back.res.array.array == a);
    cudaTextureDesc td_back;
    memset(&td_back, 0x5a, sizeof td_back);
    T(cudaGetTextureObjectTextureDesc(&td_back, tex));
    OUT("addressMode %d %d, filterMode %d, readMode %d, normalizedCoords %d, maxAnisotropy %u, borderColor[2] %g",
        td_back.addressMode[0], td_back.addressMode[1], td_back.filterMode, td_back.readMode,
        td_back.normalizedCoords, td_back.maxAnisotropy, td_back.borderColor[2]);
    OUT("sRGB %d, disableTrilinear %d, seamless %d", td_back.sRGB, td_back.disableTrilinearOptimization,
        td_back.seamlessCubemap);
    T(cudaDestroyTextureObject(tex));
    // A pitch-2D texture over device memory.
    float *plane = NULL;
    size_t pitch = 0;
    T(cudaMallocPitch((void **)&plane, &pitch, 16 * sizeof(float), 8));
    NEED(plane);
    cudaResourceDesc pr = {};
    pr.resType = cudaResourceTypePitch2D;
    pr.res.pitch2D.devPtr = plane;
    pr.res.pitch2D.desc = cudaCreateChannelDesc<float2>();
    pr.res.pitch2D.width = 8;
    pr.res.pitch2D.height = 8;
    pr.res.pitch2D.pitchInBytes = pitch;
    cudaTextureDesc ptd = {};
    ptd.readMode = cudaReadModeElementType;
    T(cudaCreateTextureObject(&tex, &pr, &ptd, NULL));
    memset(&res_back, 0, sizeof res_back);
    T(cudaGetTextureObjectResourceDesc(&res_back, tex));
    cudaChannelFormatDesc f2 = res_back.res.pitch2D.desc;
    OUT("pitch2D: same ptr %d, desc %d %d %d %d kind %d, %zux%zu, same pitch %d", res_back.res.pitch2D.devPtr == plane,
        f2.x, f2.y, f2.z, f2.w, (int)f2.f, res_back.res.pitch2D.width, res_back.res.pitch2D.height,
        res_back.res.pitch2D.pitchInBytes == pitch);
    T(cudaDestroyTextureObject(tex));
    cudaSurfaceObject_t surf = 0;
    cudaArray_t sa = NULL;
    T(cudaMallocArray(&sa, &u32, W, H, cudaArraySurfaceLoadStore));
    res.res.array.array = sa;
    T(cudaCreateSurfaceObject(&surf, &res));
    memset(&res_back, 0, sizeof res_back);
    T(cudaGetSurfaceObjectResourceDesc(&res_back, surf));
    OUT("surface: resType %d, same array %d", res_back.resType, res_back.res.array.array == sa);
    T(cudaDestroySurfaceObject(surf));
    size_t max_width = 0;
    T(cudaDeviceGetTexture1DLinearMaxWidth(&max_width, &u32, 0));
    OUT("1D linear max width (u32): %zu", max_width);

    T(cudaFree(plane));
    T(cudaFree(dev));
    T(cudaFreeArray(sa));
    T(cudaFreeArray(a));
    T(cudaFreeArray(b));
    T(cudaFreeArray(vol));
    T(cudaFree(p.ptr));
    return finish();
}
