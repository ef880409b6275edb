// What `sured.p` (sample-addressed surface reductions) does where the PTX ISA leaves it
// open: the ISA defines `.b32` data as u32 or s32 by the surface format (UINT or SINT),
// `.b64` (min and max only) as u64 or s64, and x as a "sample" index; it says nothing of
// formats that are neither, of texels narrower or wider than the data (u16x2, u8x4, u32x4;
// `.b64` on a 4-byte texel), of float formats, or of where `.clamp` puts and `.zero` drops
// an out-of-range access. Recorded on the H200 (goldens/NVIDIA_H200-580.159.04/sured_p.txt):
// x counts units of the data's size (4 or 8 bytes) whatever the texel, bounded by the row's
// bytes; signed for SINT formats, unsigned for the rest.
// Each case resets one surface array (1D 4, 2D 4 x 2 or 3D 4 x 2 x 2 texels) to a word
// pattern, runs one `sured.p` from one thread and prints the words the reduction changed
// (index in the array's bytes / 4, in hex), or the error. The `.trap` cases, out of range,
// come last. A case that leaves an error re-executes the program from the next case (a
// fresh context), so one fault does not hide the others; without faults it runs well under
// 2 s.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <string>
#include <unistd.h>
#include <vector>

enum { ADD, MIN, MAX, AND, OR };
enum { TRAP, CLAMP, ZERO };
static const char *const OPS[] = {"add", "min", "max", "and", "or"};
static const char *const MODES[] = {"trap", "clamp", "zero"};

#define KEY(geom, op, wide, mode) ((((geom) * 5 + (op)) * 2 + (wide)) * 3 + (mode))
// One `sured.p` per geometry for an operation, a data type and a mode (all are spelled in
// the instruction, so each is its own asm statement).
#define RED(OP, OPS, CT, WIDE, C, V, MODE, MODES)                                                                    \
    case KEY(1, OP, WIDE, MODE):                                                                           \
        asm volatile("sured.p." OPS ".1d." CT "." MODES " [%0, {%1}], %2;" ::"l"(s), "r"(x), C(V) : "memory"); \
        break;                                                                                                 \
    case KEY(2, OP, WIDE, MODE):                                                                           \
        asm volatile("sured.p." OPS ".2d." CT "." MODES " [%0, {%1, %2}], %3;" ::"l"(s), "r"(x), "r"(y), C(V)  \
                     : "memory");                                                                              \
        break;                                                                                                 \
    case KEY(3, OP, WIDE, MODE):                                                                           \
        asm volatile("sured.p." OPS ".3d." CT "." MODES " [%0, {%1, %2, %3, %3}], %4;" ::"l"(s), "r"(x),       \
                     "r"(y), "r"(z), C(V)                                                                      \
                     : "memory");                                                                              \
        break;
#define EACH_MODE(OP, OPS, CT, WIDE, C, V)                                                                     \
    RED(OP, OPS, CT, WIDE, C, V, TRAP, "trap")                                                                 \
    RED(OP, OPS, CT, WIDE, C, V, CLAMP, "clamp") RED(OP, OPS, CT, WIDE, C, V, ZERO, "zero")
#define B32(OP, OPS) EACH_MODE(OP, OPS, "b32", 0, "r", v32)
#define B64(OP, OPS) EACH_MODE(OP, OPS, "b64", 1, "l", v)

__global__ void reduce(cudaSurfaceObject_t s, int key, int x, int y, int z, unsigned long long v) {
    unsigned v32 = (unsigned)v;
    switch (key) {
        B32(ADD, "add") B32(MIN, "min") B32(MAX, "max") B32(AND, "and") B32(OR, "or")
        B64(MIN, "min") B64(MAX, "max")
    }
}

struct Format {
    const char *name;
    cudaChannelFormatDesc desc;
    int bytes;
};

static std::vector<Format> formats() {
    return {
        {"u32x1", cudaCreateChannelDesc<unsigned>(), 4},       {"s32x1", cudaCreateChannelDesc<int>(), 4},
        {"u32x2", cudaCreateChannelDesc<uint2>(), 8},          {"s32x2", cudaCreateChannelDesc<int2>(), 8},
        {"u16x2", cudaCreateChannelDesc<ushort2>(), 4},        {"u8x4", cudaCreateChannelDesc<uchar4>(), 4},
        {"s8x4", cudaCreateChannelDesc<char4>(), 4},           {"f32x1", cudaCreateChannelDesc<float>(), 4},
        {"f16x2", cudaCreateChannelDescHalf2(), 4},            {"u32x4", cudaCreateChannelDesc<uint4>(), 16},
    };
}

struct Case {
    int format, geom, op, wide, mode, x, y, z;
    unsigned long long v;
};

// Words of the array before each case: a negative that add wraps, a small positive, signed
// extremes, float 1.0, f16 1.0 and -1.0, bytes of both signs.
static const unsigned PATTERN[8] = {0xfffffff0, 0x00000005, 0x80000001, 0x7ffffff8,
                                    0x3f800000, 0x3c00bc00, 0x00ff80fe, 0x12345678};
static const int W = 4, H = 2, D = 2;

static std::vector<Case> cases() {
    std::vector<Case> c;
    auto at = [&](int f, int geom, int op, int wide, int mode, int x, int y, int z, unsigned long long v) {
        c.push_back({f, geom, op, wide, mode, x, y, z, v});
    };
    const int n = (int)formats().size();
    // In range: each operation with its operands at samples 0 and 1 of row 0, and one in
    // row 1; `.b64` min and max on every format too.
    for (int f = 0; f < n; f++) {
        for (int x = 0; x < 2; x++) {
            for (unsigned v : {0x10u, 0xffffffffu}) at(f, 2, ADD, 0, TRAP, x, 0, 0, v);
            for (int op : {MIN, MAX})
                for (unsigned v : {0xfffffffeu, 3u}) at(f, 2, op, 0, TRAP, x, 0, 0, v);
            at(f, 2, AND, 0, TRAP, x, 0, 0, 0x0ff00ff0);
            at(f, 2, OR, 0, TRAP, x, 0, 0, 0x0f0f0000);
        }
        at(f, 2, ADD, 0, TRAP, 2, 1, 0, 0x10);
    }
    for (int f = 0; f < n; f++)
        for (int x = 0; x < 2; x++)
            for (int op : {MIN, MAX})
                for (unsigned long long v : {0xfffffffe00000003ull, 0x0000000100000000ull})
                    at(f, 2, op, 1, TRAP, x, 0, 0, v);
    // 1D and 3D on the 32-bit integer formats.
    for (int f : {0, 1}) {
        at(f, 1, ADD, 0, TRAP, 3, 0, 0, 0x10);
        at(f, 1, MIN, 0, TRAP, 1, 0, 0, 0xfffffffe);
        at(f, 3, ADD, 0, TRAP, 3, 1, 1, 0x10);
        at(f, 3, MAX, 0, TRAP, 0, 0, 1, 0xfffffffe);
    }
    at(2, 1, MAX, 1, TRAP, 3, 0, 0, 0xfffffffe00000003ull);
    at(3, 3, MIN, 1, TRAP, 1, 1, 1, 0xfffffffe00000003ull);
    // Out of range, `.clamp` and `.zero`: add 0x10 (`.b64`: max of a value larger than any pattern pair).
    struct Oor {
        int geom, x, y, z;
    };
    const Oor oor[] = {{2, -1, 0, 0}, {2, 4, 0, 0},  {2, 1000, 1, 0}, {2, 1, -1, 0}, {2, 1, 2, 0},
                       {2, -5, -5, 0}, {1, -1, 0, 0}, {1, 4, 0, 0},    {1, 1000, 0, 0}, {3, 1, 1, -1},
                       {3, 1, 1, 2},  {3, 4, 2, 2}};
    for (int f : {0, 1, 2, 7, 9})
        for (const Oor &o : oor)
            for (int mode : {CLAMP, ZERO}) {
                if (f == 2)
                    at(f, o.geom, MAX, 1, mode, o.x, o.y, o.z, 0x7ffffffffffffff7ull);
                else
                    at(f, o.geom, ADD, 0, mode, o.x, o.y, o.z, 0x10);
            }
    // `.b64` on a 4-byte sample at the last sample of a row (the access would pass it).
    for (int mode : {CLAMP, ZERO}) at(0, 2, MAX, 1, mode, 3, 0, 0, 0x7ffffffffffffff7ull);
    // Last, `.trap` out of range: the error.
    at(0, 2, ADD, 0, TRAP, 4, 0, 0, 0x10);
    at(0, 2, ADD, 0, TRAP, -1, 0, 0, 0x10);
    at(2, 1, MAX, 1, TRAP, 4, 0, 0, 1);
    return c;
}

struct Surface {
    cudaArray_t array = nullptr;
    cudaSurfaceObject_t object = 0;
};

static cudaExtent extent(int geom) {
    return make_cudaExtent(W, geom >= 2 ? H : 0, geom == 3 ? D : 0);
}

static size_t samples(int geom) { return (size_t)W * (geom >= 2 ? H : 1) * (geom == 3 ? D : 1); }

static cudaError_t copy(cudaArray_t a, int geom, int bytes, unsigned *host, bool to_array) {
    cudaMemcpy3DParms p = {};
    p.extent = make_cudaExtent(W, geom >= 2 ? H : 1, geom == 3 ? D : 1);
    cudaPitchedPtr h = make_cudaPitchedPtr(host, (size_t)W * bytes, W, p.extent.height);
    if (to_array) {
        p.srcPtr = h, p.dstArray = a, p.kind = cudaMemcpyHostToDevice;
    } else {
        p.srcArray = a, p.dstPtr = h, p.kind = cudaMemcpyDeviceToHost;
    }
    return cudaMemcpy3D(&p);
}

int main(int argc, char **argv) {
    const int first = argc > 1 ? atoi(argv[1]) : 0;
    const std::vector<Format> fs = formats();
    const std::vector<Case> cs = cases();
    if (first == 0)
        printf("# sured.p: format geom op ctype mode (x,y,z) value: changed words [index]=new (index: array "
               "bytes / 4; before: word i = %08x %08x %08x %08x %08x %08x %08x %08x [i %% 8])\n",
               PATTERN[0], PATTERN[1], PATTERN[2], PATTERN[3], PATTERN[4], PATTERN[5], PATTERN[6],
               PATTERN[7]);
    Surface surfaces[10][4];
    for (size_t i = first; i < cs.size(); i++) {
        const Case &c = cs[i];
        const Format &f = fs[c.format];
        printf("%3zu %s %dd %s %s %s (%d,%d,%d) %llx:", i, f.name, c.geom, OPS[c.op], c.wide ? "b64" : "b32",
               MODES[c.mode], c.x, c.y, c.z, c.v);
        Surface &s = surfaces[c.format][c.geom];
        cudaError_t err = cudaSuccess;
        if (!s.array) {
            err = cudaMalloc3DArray(&s.array, &f.desc, extent(c.geom), cudaArraySurfaceLoadStore);
            if (err == cudaSuccess) {
                cudaResourceDesc r = {};
                r.resType = cudaResourceTypeArray;
                r.res.array.array = s.array;
                err = cudaCreateSurfaceObject(&s.object, &r);
            }
        }
        const size_t words = samples(c.geom) * f.bytes / 4;
        std::vector<unsigned> before(words), after(words, 0xdeadbeef);
        for (size_t w = 0; w < words; w++) before[w] = PATTERN[w % 8];
        if (err == cudaSuccess) err = copy(s.array, c.geom, f.bytes, before.data(), true);
        if (err == cudaSuccess) {
            reduce<<<1, 1>>>(s.object, KEY(c.geom, c.op, c.wide, c.mode), c.x, c.y, c.z, c.v);
            err = cudaGetLastError();
        }
        if (err == cudaSuccess) err = cudaDeviceSynchronize();
        if (err == cudaSuccess) err = copy(s.array, c.geom, f.bytes, after.data(), false);
        if (err != cudaSuccess) {
            // A fault leaves the context unusable: go on from the next case in a new process.
            printf(" error %s\n", cudaGetErrorName(err));
            fflush(stdout);
            if (i + 1 < cs.size()) {
                std::string next = std::to_string(i + 1);
                char *args[] = {argv[0], (char *)next.c_str(), nullptr};
                execv("/proc/self/exe", args);
                printf("# execv failed\n");
                return 1;
            }
            return 0;
        }
        bool any = false;
        for (size_t w = 0; w < words; w++)
            if (after[w] != before[w]) {
                printf(" [%zu]=%08x", w, after[w]);
                any = true;
            }
        printf(any ? "\n" : " unchanged\n");
    }
    return 0;
}
