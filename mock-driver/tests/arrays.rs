//! CUDA arrays and texture objects at the C boundary, held to what the H200 (driver
//! 580.159.04) answered in probe arrays (clients/probes/goldens/NVIDIA_H200-580.159.04/
//! arrays.txt; each test names its section). The maxima are read from the device's
//! attributes, as the probe read them, not written here.

#[path = "common/context.rs"]
mod context;
use context::primary_context;
use cuda::exports::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ptr::null_mut;

const FLOAT: i32 = 0x20;
const U8: i32 = 0x01;
const U32: i32 = 0x03;
const LAYERED: u32 = 0x01;
const SURFACE_LDST: u32 = 0x02;
const CUBEMAP: u32 = 0x04;
const TEXTURE_GATHER: u32 = 0x08;
const DEPTH_TEXTURE: u32 = 0x10;
const SPARSE: u32 = 0x40;
const DEFERRED_MAPPING: u32 = 0x80;

fn attribute(code: i32) -> usize {
    let mut v = 0;
    // Safety: a live out-parameter.
    assert_eq!(unsafe { cuDeviceGetAttribute(&mut v, code, 0) }, 0);
    v as usize
}

fn desc(
    w: usize,
    h: usize,
    d: usize,
    format: i32,
    channels: u32,
    flags: u32,
) -> CUDA_ARRAY3D_DESCRIPTOR {
    CUDA_ARRAY3D_DESCRIPTOR {
        width: w,
        height: h,
        depth: d,
        format,
        num_channels: channels,
        flags,
    }
}

/// cuArray3DCreate's answer; the array destroyed again if made.
fn create(d: CUDA_ARRAY3D_DESCRIPTOR) -> CUresult {
    let mut a: CUarray = null_mut();
    // Safety: live descriptor and out-parameter.
    let r = unsafe { cuArray3DCreate_v2(&mut a, &d) };
    if r == 0 {
        // Safety: the array just made.
        assert_eq!(unsafe { cuArrayDestroy(a) }, 0);
    }
    r
}

fn make(d: CUDA_ARRAY3D_DESCRIPTOR) -> CUarray {
    let mut a: CUarray = null_mut();
    // Safety: live descriptor and out-parameter.
    assert_eq!(unsafe { cuArray3DCreate_v2(&mut a, &d) }, 0);
    a
}

/// Sections dims-1d, dims-2d, dims-3d, dims-cubemap: each shape within its texture
/// maxima, with SURFACE_LDST its surface maxima too; 3D within the maxima or the
/// alternate ones; a layered cubemap's Depth within its layer maximum.
#[test]
fn extents_are_bounded_by_the_device_maxima() {
    primary_context();
    let u8d = |w, h, d, f| desc(w, h, d, U8, 1, f);
    let (w1, s1) = (attribute(21), attribute(55));
    assert_eq!(create(u8d(w1, 0, 0, 0)), 0);
    assert_eq!(create(u8d(w1 + 1, 0, 0, 0)), CUDA_ERROR_INVALID_VALUE);
    assert_eq!(create(u8d(s1, 0, 0, SURFACE_LDST)), 0);
    assert_eq!(
        create(u8d(w1, 0, 0, SURFACE_LDST)),
        CUDA_ERROR_INVALID_VALUE
    );
    let (gw, gh) = (attribute(45), attribute(46));
    assert_eq!(create(u8d(gw, 1, 0, TEXTURE_GATHER)), 0);
    assert_eq!(
        create(u8d(1, gh + 1, 0, TEXTURE_GATHER)),
        CUDA_ERROR_INVALID_VALUE
    );
    let (ll, lw) = (attribute(29), attribute(27));
    assert_eq!(create(u8d(1, 1, ll, LAYERED)), 0);
    assert_eq!(create(u8d(1, 1, ll + 1, LAYERED)), CUDA_ERROR_INVALID_VALUE);
    assert_eq!(create(u8d(lw + 1, 1, 1, LAYERED)), CUDA_ERROR_INVALID_VALUE);
    // 3D: the alternate maxima allow a deeper, narrower array.
    let (d3, aw, ad) = (attribute(26), attribute(47), attribute(49));
    assert_eq!(create(u8d(1, 1, d3 + 1, 0)), 0);
    assert_eq!(create(u8d(1, 1, ad + 1, 0)), CUDA_ERROR_INVALID_VALUE);
    assert_eq!(create(u8d(aw + 1, 1, d3 + 1, 0)), CUDA_ERROR_INVALID_VALUE);
    // A layered cubemap's Depth counts faces, bounded by the layer maximum itself.
    let cl = attribute(54);
    assert_eq!(create(u8d(1, 1, cl, CUBEMAP | LAYERED)), 0);
    assert_eq!(
        create(u8d(1, 1, 6 * cl, CUBEMAP | LAYERED)),
        CUDA_ERROR_INVALID_VALUE
    );
}

/// Sections flags-alone and flag-combinations.
#[test]
fn flags_are_taken_for_the_shapes_the_h200_takes_them() {
    primary_context();
    let f = |w, h, d, flags| create(desc(w, h, d, FLOAT, 1, flags));
    assert_eq!(f(16, 16, 0, TEXTURE_GATHER), 0);
    assert_eq!(f(16, 0, 0, TEXTURE_GATHER), CUDA_ERROR_INVALID_VALUE);
    assert_eq!(f(16, 16, 4, TEXTURE_GATHER), CUDA_ERROR_INVALID_VALUE);
    assert_eq!(f(16, 16, 0, DEPTH_TEXTURE), CUDA_ERROR_INVALID_VALUE);
    assert_eq!(
        f(16, 16, 0, 0x20),
        CUDA_ERROR_INVALID_VALUE,
        "COLOR_ATTACHMENT"
    );
    assert_eq!(f(16, 16, 0, 0x100), 0, "VIDEO_ENCODE_DECODE");
    assert_eq!(f(16, 16, 0, 0x8000_0000), 0);
    assert_eq!(f(16, 0, 0, 0x8000_0000), CUDA_ERROR_INVALID_VALUE);
    assert_eq!(f(16, 16, 6, 0x8000_0000), CUDA_ERROR_INVALID_VALUE);
    assert_eq!(f(16, 0, 0, SPARSE), CUDA_ERROR_INVALID_VALUE);
    assert_eq!(
        f(16, 16, 0, SPARSE | DEFERRED_MAPPING),
        CUDA_ERROR_INVALID_VALUE
    );
}

/// Sections formats-2d, formats-3d, format-extents, tex-linear: the formats cuda.h 13
/// added are made with the channel count their names say, block-compressed ones at any
/// 2D extent; YUV formats are no array's nor linear texture's.
#[test]
fn array_formats_as_the_h200_makes_them() {
    primary_context();
    for (format, channels) in [(0xc0, 1), (0xc1, 2), (0xc2, 4), (0xcb, 4), (0x50, 4)] {
        for c in [1, 2, 3, 4] {
            let want = if c == channels {
                0
            } else {
                CUDA_ERROR_INVALID_VALUE
            };
            assert_eq!(
                create(desc(16, 16, 0, format, c, 0)),
                want,
                "{format:#x} x{c}"
            );
        }
    }
    for (w, h) in [(16, 16), (3, 3), (1, 1), (15, 16)] {
        assert_eq!(create(desc(w, h, 0, 0x91, 4, 0)), 0, "BC1 {w}x{h}");
    }
    assert_eq!(create(desc(16, 0, 0, 0x91, 4, 0)), CUDA_ERROR_INVALID_VALUE);
    assert_eq!(
        create(desc(16, 16, 0, 0x9b, 3, 0)),
        0,
        "BC6H has 3 channels"
    );
    for yuv in [0xb0, 0x9f, 0xa5] {
        for c in 1..=4 {
            assert_eq!(create(desc(64, 32, 0, yuv, c, 0)), CUDA_ERROR_INVALID_VALUE);
        }
    }
    // Such an array reads back as made; a texture over it reads its decoded texels (probe
    // texel_formats, bc-arrays), a surface over it is not emulated; a texture over
    // R10G10B10A2 is made (texel_formats, packed-and-surfaces).
    let bc1 = make(desc(6, 6, 0, 0x91, 4, 0));
    let rgb10 = make(desc(6, 6, 0, 0x50, 4, 0));
    let mut back = desc(0, 0, 0, 0, 0, 0);
    // Safety: live out-parameters and arrays.
    unsafe {
        assert_eq!(cuArray3DGetDescriptor_v2(&mut back, bc1), 0);
        assert_eq!((back.width, back.format, back.num_channels), (6, 0x91, 4));
        let mut o = 0u64;
        let r = cuTexObjectCreate(&mut o, &array_resource(bc1), &point(), null_mut());
        assert_eq!(r, 0);
        assert_eq!(cuTexObjectDestroy(o), 0);
        let r = cuSurfObjectCreate(&mut o, &array_resource(bc1));
        assert_eq!(r, CUDA_ERROR_NOT_SUPPORTED);
        let r = cuTexObjectCreate(&mut o, &array_resource(rgb10), &point(), null_mut());
        assert_eq!(r, 0);
        assert_eq!(cuTexObjectDestroy(o), 0);
        assert_eq!(cuArrayDestroy(bc1), 0);
        assert_eq!(cuArrayDestroy(rgb10), 0);
    }
}

/// Section copies-linear: the 1D copy calls reach the array's first row only; 0 bytes
/// are taken at any offset.
#[test]
fn byte_copies_reach_the_first_row() {
    primary_context();
    let two = make(desc(16, 4, 0, U32, 1, 0));
    let src = [7u8; 256];
    let mut dst = [0u8; 256];
    // Safety: live buffers of the sizes copied.
    unsafe {
        assert_eq!(cuMemcpyHtoA_v2(two, 0, src.as_ptr().cast(), 64), 0);
        assert_eq!(
            cuMemcpyHtoA_v2(two, 0, src.as_ptr().cast(), 256),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuMemcpyAtoH_v2(dst.as_mut_ptr().cast(), two, 64, 64),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuMemcpyAtoH_v2(dst.as_mut_ptr().cast(), two, 4, 60), 0);
        assert_eq!(dst[..60], [7u8; 60]);
        assert_eq!(cuMemcpyHtoA_v2(two, 1000, src.as_ptr().cast(), 0), 0);
        assert_eq!(cuArrayDestroy(two), 0);
    }
}

/// Section copies-3d and copies-2d: an array side's LOD must be 0, a linear side's is
/// ignored; a NULL array side is a value refused.
#[test]
fn copy_lods_and_null_arrays() {
    primary_context();
    let a = make(desc(4, 4, 2, U32, 1, 0));
    let src = [1u32; 32];
    let copy = |src_lod: usize, dst_lod: usize, dst: CUarray| CUDA_MEMCPY3D {
        src_x_in_bytes: 0,
        src_y: 0,
        src_z: 0,
        src_lod,
        src_memory_type: 1,
        src_host: src.as_ptr().cast(),
        src_device: 0,
        src_array: null_mut(),
        reserved0: null_mut(),
        src_pitch: 16,
        src_height: 4,
        dst_x_in_bytes: 0,
        dst_y: 0,
        dst_z: 0,
        dst_lod,
        dst_memory_type: 3,
        dst_host: null_mut(),
        dst_device: 0,
        dst_array: dst.cast(),
        reserved1: null_mut(),
        dst_pitch: 0,
        dst_height: 0,
        width_in_bytes: 16,
        height: 4,
        depth: 2,
    };
    // Safety: the host side holds the extent copied.
    unsafe {
        assert_eq!(cuMemcpy3D_v2(&copy(1, 0, a)), 0);
        assert_eq!(cuMemcpy3D_v2(&copy(0, 1, a)), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(
            cuMemcpy3D_v2(&copy(0, 0, null_mut())),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuArrayDestroy(a), 0);
    }
}

/// Sections sparse-deferred and requirements-planes.
#[test]
fn sparse_and_deferred_arrays_answer_as_the_h200() {
    primary_context();
    let sparse = make(desc(1024, 1024, 0, FLOAT, 1, SPARSE));
    let volume = make(desc(64, 64, 64, FLOAT, 1, SPARSE));
    let deferred = make(desc(1024, 1024, 0, FLOAT, 1, DEFERRED_MAPPING));
    // Safety: live out-parameters laid out as cuda.h's structs, live arrays.
    unsafe {
        let props = |a: CUarray| {
            let mut p = ArraySparseProperties::default();
            let r = cuArrayGetSparseProperties((&mut p as *mut ArraySparseProperties).cast(), a);
            (r, p)
        };
        let (r, p) = props(sparse);
        assert_eq!((r, p.tile_extent, p.miptail_size), (0, [128, 128, 1], 0));
        assert_eq!(props(volume).1.tile_extent, [32, 32, 16]);
        assert_eq!(props(deferred).0, CUDA_ERROR_INVALID_VALUE);
        let needs = |a: CUarray, device: i32| {
            let mut m = ArrayMemoryRequirements::default();
            let r = cuArrayGetMemoryRequirements(
                (&mut m as *mut ArrayMemoryRequirements).cast(),
                a,
                device,
            );
            (r, m.size, m.alignment)
        };
        assert_eq!(needs(deferred, 0), (0, 4 << 20, 64 << 10));
        assert_eq!(needs(sparse, 0).0, CUDA_ERROR_INVALID_VALUE);
        assert_eq!(needs(deferred, 99).0, CUDA_ERROR_INVALID_VALUE);
        // No array has planes: the H200 makes no planar one.
        let mut plane: CUarray = null_mut();
        assert_eq!(
            cuArrayGetPlane(&mut plane, sparse, 0),
            CUDA_ERROR_INVALID_VALUE
        );
        for a in [sparse, volume, deferred] {
            assert_eq!(cuArrayDestroy(a), 0);
        }
    }
}

/// cuArrayGetSparseProperties of a sparse array made of `d`, or
/// cuMipmappedArrayGetSparseProperties of one with `levels` levels: (tile extent, mip
/// tail's first level, its size, flags).
fn sparse_properties(d: CUDA_ARRAY3D_DESCRIPTOR, levels: u32) -> ([u32; 3], u32, u64, u32) {
    let mut p = ArraySparseProperties::default();
    let out = (&mut p as *mut ArraySparseProperties).cast();
    // Safety: live descriptor, out-parameters laid out as cuda.h's, the array just made.
    unsafe {
        if levels == 0 {
            let a = make(d);
            assert_eq!(cuArrayGetSparseProperties(out, a), 0);
            assert_eq!(cuArrayDestroy(a), 0);
        } else {
            let mut m: CUmipmappedArray = null_mut();
            assert_eq!(cuMipmappedArrayCreate(&mut m, &d, levels), 0);
            assert_eq!(cuMipmappedArrayGetSparseProperties(out, m), 0);
            assert_eq!(cuMipmappedArrayDestroy(m), 0);
        }
    }
    (
        p.tile_extent,
        p.miptail_first_level,
        p.miptail_size,
        p.flags,
    )
}

/// Section sparse-tiles: the mip tail in whole 64 KiB tiles of its levels laid out in
/// 64-byte x 8-row blocks (u8 32^3 takes two tiles, float x4 100x60 mipmapped three),
/// one layer's for a layered array, SINGLE_MIPTAIL (0x1) only where the tail starts at
/// level 0; a block-compressed array's tile in texels.
#[test]
fn sparse_tiles_and_mip_tails_as_the_h200() {
    primary_context();
    const FLOAT4: (i32, u32) = (FLOAT, 4);
    const BC1: (i32, u32) = (0x91, 4);
    let rows = [
        ((U8, 1), [64, 64, 64], 0, 7, ([64, 32, 32], 1, 131072, 0)),
        (
            (U8, 1),
            [1024, 1024, 4],
            LAYERED,
            11,
            ([256, 256, 1], 3, 65536, 0),
        ),
        ((U8, 1), [100, 60, 0], 0, 0, ([256, 256, 1], 0, 65536, 1)),
        (FLOAT4, [100, 60, 0], 0, 0, ([64, 64, 1], 0, 131072, 1)),
        (FLOAT4, [100, 60, 0], 0, 7, ([64, 64, 1], 0, 196608, 1)),
        (FLOAT4, [1024, 1024, 0], 0, 11, ([64, 64, 1], 5, 65536, 0)),
        (BC1, [1024, 1024, 0], 0, 0, ([512, 256, 1], 0, 0, 0)),
        (BC1, [64, 64, 64], 0, 0, ([128, 64, 16], 0, 131072, 1)),
        (BC1, [64, 64, 64], 0, 7, ([128, 64, 16], 0, 196608, 1)),
    ];
    for ((format, channels), [w, h, d], flags, levels, want) in rows {
        let got = sparse_properties(desc(w, h, d, format, channels, flags | SPARSE), levels);
        assert_eq!(
            got, want,
            "format {format:#x} x{channels} {w}x{h}x{d} flags {flags:#x}, {levels} levels"
        );
    }
}

fn array_resource(a: CUarray) -> CUDA_RESOURCE_DESC {
    let mut r = CUDA_RESOURCE_DESC::default();
    r.res[0] = a as u64;
    r
}

fn linear_resource(p: u64, format: i32, bytes: u64) -> CUDA_RESOURCE_DESC {
    let mut r = CUDA_RESOURCE_DESC {
        res_type: 2,
        ..Default::default()
    };
    r.res[0] = p;
    r.res[1] = format as u32 as u64 | (1 << 32);
    r.res[2] = bytes;
    r
}

fn point() -> CUDA_TEXTURE_DESC {
    CUDA_TEXTURE_DESC {
        address_mode: [1; 3],
        ..Default::default()
    }
}

/// Sections tex-array, tex-linear, tex-views, tex-destroy-*-crash, tex-get-*-crash.
#[test]
fn texture_objects_as_the_h200_answers() {
    primary_context();
    let a = make(desc(16, 16, 0, U32, 1, 0));
    // Safety: live descriptors and out-parameters; handles made here.
    unsafe {
        let create =
            |r: CUDA_RESOURCE_DESC, t: CUDA_TEXTURE_DESC, v: Option<CUDA_RESOURCE_VIEW_DESC>| {
                let mut o = u64::MAX;
                let view = v.as_ref().map_or(std::ptr::null(), |v| v as *const _);
                let code = cuTexObjectCreate(&mut o, &r, &t, view);
                if code == 0 {
                    assert_eq!(cuTexObjectDestroy(o), 0);
                }
                (code, o)
            };
        assert_eq!(
            create(array_resource(null_mut()), point(), None).0,
            CUDA_ERROR_INVALID_VALUE
        );
        let mut t = point();
        t.address_mode[2] = 7;
        assert_eq!(
            create(array_resource(a), t, None).0,
            0,
            "a 2D array's third mode"
        );
        t.address_mode[1] = 7;
        assert_eq!(
            create(array_resource(a), t, None).0,
            CUDA_ERROR_INVALID_VALUE
        );
        let mut t = point();
        t.flags = 0x10;
        assert_eq!(create(array_resource(a), t, None).0, 0, "sRGB");
        t.flags = 0x80;
        assert_eq!(
            create(array_resource(a), t, None).0,
            CUDA_ERROR_INVALID_VALUE
        );
        // A view of format NONE is refused with the object zeroed; one of the wrong
        // extent is refused with the object left.
        let view = |format: i32, w: usize| CUDA_RESOURCE_VIEW_DESC {
            format,
            width: w,
            height: 16,
            ..Default::default()
        };
        assert_eq!(
            create(array_resource(a), point(), Some(view(0, 16))),
            (CUDA_ERROR_INVALID_VALUE, 0)
        );
        assert_eq!(
            create(array_resource(a), point(), Some(view(0, 32))),
            (CUDA_ERROR_INVALID_VALUE, u64::MAX)
        );
        assert_eq!(create(array_resource(a), point(), Some(view(13, 16))).0, 0);
        // Linear memory: checked against the maxima only, a view ignored.
        let mut p = 0u64;
        assert_eq!(cuMemAlloc_v2(&mut p, 1 << 20), 0);
        assert_eq!(create(linear_resource(p, U32, 0), point(), None).0, 0);
        assert_eq!(
            create(
                linear_resource(p, U32, 2 << 20),
                point(),
                Some(view(13, 16))
            )
            .0,
            0
        );
        assert_eq!(
            create(linear_resource(p, U32, (4 << 30) + 4), point(), None).0,
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            create(linear_resource(p, 0xb0, 4096), point(), None).0,
            CUDA_ERROR_INVALID_VALUE
        );
        // Destroying what is no live object succeeds; its getters refuse it as a value.
        let mut o = 0u64;
        assert_eq!(
            cuTexObjectCreate(&mut o, &array_resource(a), &point(), null_mut()),
            0
        );
        assert_eq!(cuTexObjectDestroy(o), 0);
        assert_eq!(cuTexObjectDestroy(o), 0);
        assert_eq!(cuTexObjectDestroy(0), 0);
        let mut r = array_resource(null_mut());
        assert_eq!(
            cuTexObjectGetResourceDesc(&mut r, o),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuMemFree_v2(p), 0);
        assert_eq!(cuArrayDestroy(a), 0);
    }
}

/// Section array-destroy-level-crash: a mipmapped array's level may be destroyed alone,
/// and the mipmapped array's destroy still succeeds.
#[test]
fn a_level_is_destroyed_alone() {
    primary_context();
    let d = desc(16, 16, 0, FLOAT, 1, 0);
    // Safety: live out-parameters, handles made here.
    unsafe {
        let mut m: CUmipmappedArray = null_mut();
        assert_eq!(cuMipmappedArrayCreate(&mut m, &d, 2), 0);
        let mut level: CUarray = null_mut();
        assert_eq!(cuMipmappedArrayGetLevel(&mut level, m, 1), 0);
        assert_eq!(cuArrayDestroy(level), 0);
        assert_eq!(cuMipmappedArrayDestroy(m), 0);
    }
}
