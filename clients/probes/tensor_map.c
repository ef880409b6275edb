/* Tensor maps: what cuTensorMapEncodeTiled and cuTensorMapReplaceAddress answer for maps
 * cuda.h says are valid and for each requirement it lists broken one at a time, with and
 * without a current context, and whether a failed call writes the map. The map's bytes
 * are opaque (never printed): only whether a call changed them. Last, interleaved
 * layouts: each rule cuda.h gives for them (and some it leaves out) broken alone. */
#include "probe.h"

static CUtensorMap maps[4] __attribute__((aligned(128)));
static CUdeviceptr base;

/* The call's arguments, valid unless a case changes one. */
struct args {
    CUtensorMap *map;
    CUtensorMapDataType type;
    cuuint32_t rank;
    void *address;
    cuuint64_t dims[5], strides[4];
    cuuint32_t box[5], estrides[5];
    CUtensorMapInterleave interleave;
    CUtensorMapSwizzle swizzle;
    CUtensorMapL2promotion l2;
    CUtensorMapFloatOOBfill oob;
};

static struct args valid(void) {
    struct args a;
    memset(&a, 0, sizeof a);
    a.map = &maps[0];
    a.type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    a.rank = 2;
    a.address = (void *)base;
    a.dims[0] = 100; a.dims[1] = 37;
    a.strides[0] = 416;
    a.box[0] = 32; a.box[1] = 8;
    a.estrides[0] = 1; a.estrides[1] = 1;
    a.interleave = CU_TENSOR_MAP_INTERLEAVE_NONE;
    a.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    a.l2 = CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    a.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
    return a;
}

static void encode(const char *what, struct args a) {
    unsigned char before[128];
    int own = a.map >= &maps[0] && a.map < &maps[4];
    if (own) {
        memset(a.map, 0xA5, 64);
        memcpy(before, a.map, 64);
    }
    CALL(what, cuTensorMapEncodeTiled(a.map, a.type, a.rank, a.address, a.dims, a.strides, a.box, a.estrides,
                                      a.interleave, a.swizzle, a.l2, a.oob));
    if (own) SAY("map %s", memcmp(before, a.map, 64) ? "written" : "untouched");
}

static void setup(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    MUST(cuMemAlloc(&base, 1 << 20));
}

static void valid_maps(void) {
    setup();
    struct args a = valid();
    encode("2d float32, swizzle 128B", a);
    a = valid(); a.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE; a.box[0] = 256; encode("box of 256 without swizzle", a);
    a = valid(); a.rank = 5;
    for (int i = 2; i < 5; i++) { a.dims[i] = 3; a.strides[i - 1] = a.strides[i - 2] * 40; a.box[i] = 2; a.estrides[i] = 1; }
    encode("rank 5", a);
    a = valid(); a.estrides[0] = 8; a.estrides[1] = 8; encode("element strides 8", a);
    a = valid(); a.type = CU_TENSOR_MAP_DATA_TYPE_UINT8; a.box[0] = 16; a.swizzle = CU_TENSOR_MAP_SWIZZLE_32B; encode("uint8, 16-byte rows under swizzle 32B", a);
    a = valid(); a.dims[0] = 1ull << 32; encode("dimension of 2^32", a);
    a = valid(); a.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA; encode("NaN fill, float32", a);
    a = valid(); a.rank = 3; a.dims[2] = 4; a.strides[1] = 416 * 37 + 16 * 3; a.box[2] = 2; a.estrides[2] = 1;
    a.interleave = CU_TENSOR_MAP_INTERLEAVE_16B; a.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE; encode("interleave 16B, rank 3", a);
    a = valid(); a.swizzle = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B; encode("swizzle 128B atom 32B", a);
    a = valid(); a.address = (void *)(base + 16); encode("address 16 bytes in", a);
    CALL("replace address", cuTensorMapReplaceAddress(&maps[0], (void *)(base + 4096)));
    CALL("replace address, 8 bytes in", cuTensorMapReplaceAddress(&maps[0], (void *)(base + 8)));
    CALL("replace address, host pointer", cuTensorMapReplaceAddress(&maps[0], (void *)maps));
}

static void invalid_maps(void) {
    setup();
    struct args a;
    a = valid(); a.map = NULL; encode("NULL map", a);
    a = valid(); a.map = (CUtensorMap *)((char *)&maps[1] + 32); encode("map 32 bytes off 64", a);
    a = valid(); a.rank = 0; encode("rank 0", a);
    a = valid(); a.rank = 6; encode("rank 6", a);
    a = valid(); a.type = (CUtensorMapDataType)99; encode("data type 99", a);
    a = valid(); a.address = (void *)(base + 8); encode("address 8 bytes in", a);
    a = valid(); a.address = NULL; encode("address NULL", a);
    a = valid(); a.dims[1] = 0; encode("dimension 0", a);
    a = valid(); a.dims[0] = (1ull << 32) + 1; encode("dimension 2^32+1", a);
    a = valid(); a.strides[0] = 408; encode("stride 408", a);
    a = valid(); a.strides[0] = 1ull << 40; encode("stride 2^40", a);
    a = valid(); a.strides[0] = 16; encode("stride below the row", a);
    a = valid(); a.box[1] = 0; encode("box 0", a);
    a = valid(); a.box[1] = 257; encode("box 257", a);
    a = valid(); a.box[0] = 2; a.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE; encode("inner box of 8 bytes", a);
    a = valid(); a.box[0] = 64; encode("inner box of 256 bytes under swizzle 128B", a);
    a = valid(); a.swizzle = CU_TENSOR_MAP_SWIZZLE_64B; encode("inner box of 128 bytes under swizzle 64B", a);
    a = valid(); a.estrides[1] = 0; encode("element stride 0", a);
    a = valid(); a.estrides[1] = 9; encode("element stride 9", a);
    a = valid(); a.interleave = CU_TENSOR_MAP_INTERLEAVE_16B; encode("interleave 16B, rank 2", a);
    a = valid(); a.interleave = (CUtensorMapInterleave)7; encode("interleave 7", a);
    a = valid(); a.swizzle = (CUtensorMapSwizzle)9; encode("swizzle 9", a);
    a = valid(); a.l2 = (CUtensorMapL2promotion)9; encode("L2 promotion 9", a);
    a = valid(); a.type = CU_TENSOR_MAP_DATA_TYPE_INT32; a.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA; encode("NaN fill, int32", a);
    a = valid(); a.oob = (CUtensorMapFloatOOBfill)5; encode("fill 5", a);
    CALL("replace address of a zeroed map", (memset(&maps[2], 0, 128), cuTensorMapReplaceAddress(&maps[2], (void *)base)));
    CALL("replace address, NULL map", cuTensorMapReplaceAddress(NULL, (void *)base));
}

/* Interleaved layouts (cuda.h's NC/8HWC8 under 16B, NC/16HWC16 under 32B): a 4d tensor
 * of C8 x W x H x C/8, and each rule cuda.h gives (or leaves out) for them tried alone. */
static struct args interleaved(CUtensorMapInterleave il, CUtensorMapDataType type, int elem) {
    struct args a;
    memset(&a, 0, sizeof a);
    a.map = &maps[0];
    a.type = type;
    a.rank = 4;
    a.address = (void *)base;
    cuuint64_t dims[4] = {8, 12, 7, 3};
    cuuint32_t box[4] = {8, 8, 4, 1};
    for (int i = 0; i < 4; i++) { a.dims[i] = dims[i]; a.box[i] = box[i]; a.estrides[i] = 1; }
    a.strides[0] = 8 * elem; a.strides[1] = 96 * elem; a.strides[2] = 672 * elem;
    a.interleave = il;
    a.swizzle = il == CU_TENSOR_MAP_INTERLEAVE_32B ? CU_TENSOR_MAP_SWIZZLE_32B : CU_TENSOR_MAP_SWIZZLE_NONE;
    a.l2 = CU_TENSOR_MAP_L2_PROMOTION_NONE;
    a.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
    return a;
}

static void encode_im2col(const char *what, struct args a, cuuint32_t channels) {
    int lower[3] = {0, 0, 0}, upper[3] = {0, 0, 0};
    memset(a.map, 0xA5, 64);
    CALL(what, cuTensorMapEncodeIm2col(a.map, a.type, a.rank, a.address, a.dims, a.strides, lower, upper, channels,
                                       32, a.estrides, a.interleave, a.swizzle, a.l2, a.oob));
}

static void interleave(void) {
    setup();
    const CUtensorMapInterleave B16 = CU_TENSOR_MAP_INTERLEAVE_16B, B32 = CU_TENSOR_MAP_INTERLEAVE_32B;
    const CUtensorMapDataType F16 = CU_TENSOR_MAP_DATA_TYPE_FLOAT16, F32 = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    struct args a;
    a = interleaved(B16, F16, 2); encode("16B f16, rank 4", a);
    for (int sw = 1; sw <= 3; sw++) {
        char what[64];
        snprintf(what, sizeof what, "16B f16, swizzle %d", sw);
        a = interleaved(B16, F16, 2); a.swizzle = (CUtensorMapSwizzle)sw; encode(what, a);
    }
    a = interleaved(B16, F16, 2); a.rank = 3; encode("16B f16, rank 3", a);
    a = interleaved(B16, F16, 2); a.rank = 5; a.dims[4] = 2; a.strides[3] = a.strides[2] * 3; a.box[4] = 1; a.estrides[4] = 1;
    encode("16B f16, rank 5", a);
    a = interleaved(B16, F16, 2); a.rank = 2; encode("16B f16, rank 2", a);
    a = interleaved(B16, F16, 2); a.rank = 1; encode("16B f16, rank 1", a);
    a = interleaved(B16, F16, 2); a.box[0] = 4; encode("16B, a row of 8 bytes", a);
    a = interleaved(B16, F16, 2); a.box[0] = 16; encode("16B, a row of 32 bytes", a);
    a = interleaved(B16, F16, 2); a.box[0] = 24; encode("16B, a row of 48 bytes", a);
    a = interleaved(B16, F16, 2); a.box[0] = 128; a.swizzle = CU_TENSOR_MAP_SWIZZLE_32B; encode("16B, a row of 256 bytes under swizzle 32B", a);
    a = interleaved(B16, F16, 2); a.estrides[0] = 2; encode("16B, element stride 2 on C", a);
    a = interleaved(B16, F16, 2); a.address = (void *)(base + 16); encode("16B, address 16 bytes in", a);
    a = interleaved(B16, F16, 2); a.address = (void *)(base + 8); encode("16B, address 8 bytes in", a);
    a = interleaved(B16, F16, 2); a.strides[0] = 24; encode("16B, stride 24", a);
    a = interleaved(B16, F16, 2); a.dims[0] = 16; a.strides[0] = 32; a.strides[1] = 384; a.strides[2] = 2688; encode("16B, 16 channels a pixel", a);
    a = interleaved(B32, F32, 4); encode("32B f32, swizzle 32B", a);
    a = interleaved(B32, F32, 4); a.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE; encode("32B f32, no swizzle", a);
    a = interleaved(B32, F32, 4); a.swizzle = CU_TENSOR_MAP_SWIZZLE_64B; encode("32B f32, swizzle 64B", a);
    a = interleaved(B32, F32, 4); a.swizzle = CU_TENSOR_MAP_SWIZZLE_128B; encode("32B f32, swizzle 128B", a);
    a = interleaved(B32, F32, 4); a.address = (void *)(base + 16); encode("32B, address 16 bytes in", a);
    a = interleaved(B32, F32, 4); a.strides[0] = 48; a.strides[1] = 576; a.strides[2] = 4032; encode("32B, strides multiples of 16, not 32", a);
    a = interleaved(B32, F32, 4); a.box[0] = 4; encode("32B, a row of 16 bytes", a);
    a = interleaved(B32, F32, 4); a.box[0] = 2; encode("32B, a row of 8 bytes", a);
    a = interleaved(B32, F16, 2); a.box[0] = 16; a.strides[0] = 32; a.dims[0] = 16; a.strides[1] = 384; a.strides[2] = 2688;
    encode("32B f16, NC/16HWC16", a);
    a = interleaved(B16, F16, 2); a.interleave = (CUtensorMapInterleave)3; encode("interleave 3", a);
    a = interleaved(B16, F16, 2); encode_im2col("im2col 16B, 8 f16 a pixel", a, 8);
    a = interleaved(B16, F16, 2); encode_im2col("im2col 16B, 4 f16 a pixel", a, 4);
    a = interleaved(B32, F32, 4); encode_im2col("im2col 32B, 8 f32 a pixel", a, 8);
    a = interleaved(B32, F32, 4); a.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE; encode_im2col("im2col 32B without swizzle", a, 8);
}

/* Encoding needs no context: the map is only bytes. */
static void without_context(void) {
    MUST(cuInit(0));
    base = 0x7f0000000000ull;
    encode("no context", valid());
}

int main(void) {
    section("valid", valid_maps);
    section("invalid", invalid_maps);
    section("without-context", without_context);
    section("interleave", interleave);
    return 0;
}
