//! Texture resource views (cuTexObjectCreate's pResViewDesc): kernels read an array
//! through a view of another element format, of a subrange of a mipmapped array's levels
//! and of a layered array's layers, and of BC1 and BC4 blocks: which texels are endpoints,
//! blends or transparent from the block-compression rules (Direct3D's BC1 and BC4, which
//! cuda.h's CU_RES_VIEW_FORMAT_*_BC* name), the blends' values as the H200 read the same
//! blocks (clients/runtime/texture_views.cu's recording), not from the mock. The
//! validation cuda.h documents is
//! tested in the model (`model::textures`, `check_view`); here its answers at the C
//! boundary and the getter.

use cuda::exports::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::{c_void, CString};
use std::ptr::null_mut;
use std::sync::Mutex;

/// `fetch_2d`/`fetch_2d_u`: thread t reads texel (t % w, t / w) by integer coordinates
/// (floats, or 32-bit integers), four lanes to out[4t..]; `fetch_a2d_u` the same on
/// layer `layer`; `at_level`: texel (0, 0) of level `lod` (normalized coordinates at the
/// lower left texel of any level), and txq's width (NVIDIA's JIT compiles no txq of a
/// texture object's level count).
const PTX: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry fetch_2d(.param .u64 tex, .param .u64 out, .param .u32 w)
{
    .reg .b32 %r<6>;
    .reg .f32 %f<5>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [tex];
    ld.param.u64 %rd2, [out];
    ld.param.u32 %r1, [w];
    mov.u32 %r2, %tid.x;
    rem.u32 %r3, %r2, %r1;
    div.u32 %r4, %r2, %r1;
    tex.2d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd1, {%r3, %r4}];
    mul.wide.u32 %rd3, %r2, 16;
    add.s64 %rd4, %rd2, %rd3;
    st.global.v4.f32 [%rd4], {%f1, %f2, %f3, %f4};
    ret;
}
.visible .entry fetch_2d_u(.param .u64 tex, .param .u64 out, .param .u32 w)
{
    .reg .b32 %r<10>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [tex];
    ld.param.u64 %rd2, [out];
    ld.param.u32 %r1, [w];
    mov.u32 %r2, %tid.x;
    rem.u32 %r3, %r2, %r1;
    div.u32 %r4, %r2, %r1;
    tex.2d.v4.u32.s32 {%r5, %r6, %r7, %r8}, [%rd1, {%r3, %r4}];
    mul.wide.u32 %rd3, %r2, 16;
    add.s64 %rd4, %rd2, %rd3;
    st.global.v4.u32 [%rd4], {%r5, %r6, %r7, %r8};
    ret;
}
.visible .entry fetch_a2d_u(.param .u64 tex, .param .u64 out, .param .u32 w, .param .u32 layer)
{
    .reg .b32 %r<10>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [tex];
    ld.param.u64 %rd2, [out];
    ld.param.u32 %r1, [w];
    ld.param.u32 %r9, [layer];
    mov.u32 %r2, %tid.x;
    rem.u32 %r3, %r2, %r1;
    div.u32 %r4, %r2, %r1;
    tex.a2d.v4.u32.s32 {%r5, %r6, %r7, %r8}, [%rd1, {%r9, %r3, %r4, %r4}];
    mul.wide.u32 %rd3, %r2, 16;
    add.s64 %rd4, %rd2, %rd3;
    st.global.v4.u32 [%rd4], {%r5, %r6, %r7, %r8};
    ret;
}
.visible .entry cube_face(.param .u64 tex, .param .u64 out, .param .u32 cube, .param .f32 x)
{
    .reg .b32 %r<6>;
    .reg .f32 %f<3>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [tex];
    ld.param.u64 %rd2, [out];
    ld.param.u32 %r1, [cube];
    ld.param.f32 %f1, [x];
    mov.f32 %f2, 0f00000000;
    tex.acube.v4.u32.f32 {%r2, %r3, %r4, %r5}, [%rd1, {%r1, %f1, %f2, %f2}];
    st.global.u32 [%rd2], %r2;
    ret;
}
.visible .entry at_level(.param .u64 tex, .param .u64 out, .param .f32 lod)
{
    .reg .b32 %r<3>;
    .reg .f32 %f<6>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [tex];
    ld.param.u64 %rd2, [out];
    ld.param.f32 %f5, [lod];
    tex.level.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {0f3D000000, 0f3D000000}], %f5;
    txq.width.b32 %r1, [%rd1];
    st.global.f32 [%rd2], %f1;
    st.global.u32 [%rd2+4], %r1;
    ret;
}
"#;

static SERIAL: Mutex<()> = Mutex::new(());

/// The primary context, current on this thread, and the kernels; one test at a time.
fn setup() -> (std::sync::MutexGuard<'static, ()>, CUmodule) {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let image = CString::new(PTX).unwrap();
    let mut module: CUmodule = null_mut();
    // Safety: pointers to live locals; a NUL-terminated image.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx: CUcontext = null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        assert_eq!(cuModuleLoadData(&mut module, image.as_ptr().cast()), 0);
    }
    (guard, module)
}

const U32: i32 = 0x03;
const FLOAT: i32 = 0x20;
const LAYERED: u32 = 0x01;
const CUBEMAP: u32 = 0x04;

fn array(w: usize, h: usize, depth: usize, format: i32, channels: u32, flags: u32) -> CUarray {
    let desc = CUDA_ARRAY3D_DESCRIPTOR {
        width: w,
        height: h,
        depth,
        format,
        num_channels: channels,
        flags,
    };
    let mut a: CUarray = null_mut();
    // Safety: live locals.
    assert_eq!(unsafe { cuArray3DCreate_v2(&mut a, &desc) }, 0);
    a
}

/// The array's bytes from `offset`, in its packed layout (whole rows), a row at a time
/// by cuMemcpy3D: the H200 refuses cuMemcpyHtoA past an array's first row (probe arrays,
/// copies-linear).
fn fill(a: CUarray, offset: usize, bytes: &[u8]) {
    let mut d = CUDA_ARRAY3D_DESCRIPTOR::default();
    // Safety: live locals.
    assert_eq!(unsafe { cuArray3DGetDescriptor_v2(&mut d, a) }, 0);
    let element = match d.format {
        0x01 | 0x08 => 1,
        0x02 | 0x09 | 0x10 => 2,
        _ => 4,
    } * d.num_channels as usize;
    let row = d.width * element;
    let rows = d.height.max(1);
    assert!(
        offset.is_multiple_of(row) && bytes.len().is_multiple_of(row),
        "whole rows"
    );
    for (i, chunk) in bytes.chunks(row).enumerate() {
        let at = offset / row + i;
        let copy = CUDA_MEMCPY3D {
            src_x_in_bytes: 0,
            src_y: 0,
            src_z: 0,
            src_lod: 0,
            src_memory_type: 1,
            src_host: chunk.as_ptr().cast(),
            src_device: 0,
            src_array: null_mut(),
            reserved0: null_mut(),
            src_pitch: row,
            src_height: 1,
            dst_x_in_bytes: 0,
            dst_y: at % rows,
            dst_z: at / rows,
            dst_lod: 0,
            dst_memory_type: 3,
            dst_host: null_mut(),
            dst_device: 0,
            dst_array: a.cast(),
            reserved1: null_mut(),
            dst_pitch: 0,
            dst_height: 0,
            width_in_bytes: row,
            height: 1,
            depth: 1,
        };
        // Safety: `chunk` is live for the copy.
        assert_eq!(unsafe { cuMemcpy3D_v2(&copy) }, 0);
    }
}

fn words(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn array_resource(kind: i32, h: u64) -> CUDA_RESOURCE_DESC {
    let mut r = CUDA_RESOURCE_DESC {
        res_type: kind,
        ..Default::default()
    };
    r.res[0] = h;
    r
}

/// Point sampling, clamped; `flags` CU_TRSF_*.
fn texture_desc(flags: u32) -> CUDA_TEXTURE_DESC {
    CUDA_TEXTURE_DESC {
        address_mode: [1; 3],
        flags,
        max_mipmap_level_clamp: 100.0,
        ..Default::default()
    }
}

fn view(format: i32, w: usize, h: usize, depth: usize) -> CUDA_RESOURCE_VIEW_DESC {
    CUDA_RESOURCE_VIEW_DESC {
        format,
        width: w,
        height: h,
        depth,
        ..Default::default()
    }
}

fn create(
    r: &CUDA_RESOURCE_DESC,
    t: &CUDA_TEXTURE_DESC,
    v: Option<&CUDA_RESOURCE_VIEW_DESC>,
) -> Result<u64, CUresult> {
    let mut h = 0u64;
    let v = v.map_or(std::ptr::null(), |v| v as *const CUDA_RESOURCE_VIEW_DESC);
    // Safety: live descriptors laid out as cuda.h's.
    match unsafe { cuTexObjectCreate(&mut h, r, t, v) } {
        0 => Ok(h),
        e => Err(e),
    }
}

/// Runs kernel `name` with `threads` threads over `tex` (and the extra u32/f32 words
/// `more`), and returns `words` 32-bit words of its output.
fn run(
    module: CUmodule,
    name: &str,
    tex: u64,
    threads: u32,
    more: &[u32],
    words: usize,
) -> Vec<u32> {
    let n = CString::new(name).unwrap();
    let mut f: CUfunction = null_mut();
    let mut out: CUdeviceptr = 0;
    let mut back = vec![0u32; words];
    // Safety: live locals and buffers of the sizes given; parameters as the kernels
    // declare them (two u64, then 32-bit words).
    unsafe {
        assert_eq!(cuModuleGetFunction(&mut f, module, n.as_ptr()), 0);
        assert_eq!(cuMemAlloc_v2(&mut out, words * 4), 0);
        let (mut t, mut o) = (tex, out);
        let mut extra = more.to_vec();
        let mut params: Vec<*mut c_void> =
            vec![(&mut t as *mut u64).cast(), (&mut o as *mut u64).cast()];
        params.extend(extra.iter_mut().map(|w| (w as *mut u32).cast::<c_void>()));
        let r = cuLaunchKernel(
            f,
            1,
            1,
            1,
            threads,
            1,
            1,
            0,
            null_mut(),
            params.as_mut_ptr(),
            null_mut(),
        );
        assert_eq!(r, 0, "launching {name}");
        assert_eq!(cuCtxSynchronize(), 0, "{name}");
        let r = cuMemcpyDtoH_v2(back.as_mut_ptr().cast(), out, words * 4);
        assert_eq!(r, 0);
        assert_eq!(cuMemFree_v2(out), 0);
    }
    back
}

fn floats(bits: &[u32]) -> Vec<f32> {
    bits.iter().map(|b| f32::from_bits(*b)).collect()
}

#[test]
fn a_view_reads_the_arrays_elements_in_its_own_format() {
    let (_g, m) = setup();
    // A 1D array of 3 u32s (read as 2D of height 1): the bits of 1.5 and of -2.0, and
    // 0x04030201.
    let a = array(3, 0, 0, U32, 1, 0);
    fill(
        a,
        0,
        &words(&[1.5f32.to_bits(), (-2.0f32).to_bits(), 0x0403_0201]),
    );
    let r = array_resource(0, a as u64);
    // FLOAT_1X32: the same bits as floats.
    let t = create(&r, &texture_desc(0), Some(&view(0x16, 3, 0, 0))).unwrap();
    let got = floats(&run(m, "fetch_2d", t, 3, &[3], 12));
    assert_eq!(got[0], 1.5);
    assert_eq!(got[4], -2.0);
    // UINT_4X8 read as integers: the four bytes of the word, lowest first.
    let t8 = create(&r, &texture_desc(1), Some(&view(0x03, 3, 0, 0))).unwrap();
    assert_eq!(run(m, "fetch_2d_u", t8, 3, &[3], 12)[8..12], [1, 2, 3, 4]);
    // Normalized (without CU_TRSF_READ_AS_INTEGER): each byte / 255.
    let tn = create(&r, &texture_desc(0), Some(&view(0x03, 3, 0, 0))).unwrap();
    assert_eq!(
        floats(&run(m, "fetch_2d", tn, 3, &[3], 12))[8..12],
        [1.0 / 255.0, 2.0 / 255.0, 3.0 / 255.0, 4.0 / 255.0]
    );
    // The getter gives the view back as it was given.
    let mut back = CUDA_RESOURCE_VIEW_DESC::default();
    // Safety: a live local laid out as cuda.h's.
    assert_eq!(unsafe { cuTexObjectGetResourceViewDesc(&mut back, t8) }, 0);
    assert_eq!(back, view(0x03, 3, 0, 0));
    // Elements of another size, a wider view: refused.
    let e = create(&r, &texture_desc(0), Some(&view(0x17, 3, 0, 0)));
    assert_eq!(e, Err(CUDA_ERROR_INVALID_VALUE), "FLOAT_2X32 over u32");
    let e = create(&r, &texture_desc(0), Some(&view(0x16, 6, 0, 0)));
    assert_eq!(e, Err(CUDA_ERROR_INVALID_VALUE), "wider than the array");
    // A view of linear memory is ignored, as the H200 does (probe arrays, tex-views).
    let mut p: CUdeviceptr = 0;
    // Safety: a live local.
    assert_eq!(unsafe { cuMemAlloc_v2(&mut p, 4096) }, 0);
    let mut lin = array_resource(2, p);
    lin.res[1] = U32 as u64 | (1 << 32);
    lin.res[2] = 4096;
    let tl = create(&lin, &texture_desc(0), Some(&view(0x0d, 1024, 0, 0)));
    // Safety: the handle made here.
    assert_eq!(
        unsafe { cuTexObjectDestroy(tl.expect("over linear memory")) },
        0
    );
    // Safety: handles made here.
    unsafe {
        for h in [t, t8, tn] {
            assert_eq!(cuTexObjectDestroy(h), 0);
        }
        assert_eq!(cuMemFree_v2(p), 0);
        assert_eq!(cuArrayDestroy(a), 0);
    }
}

#[test]
fn a_view_of_levels_makes_its_first_level_zero() {
    let (_g, m) = setup();
    // 8 x 8 floats, 4 levels (8, 4, 2, 1), level L holding 10 + L everywhere.
    let desc = CUDA_ARRAY3D_DESCRIPTOR {
        width: 8,
        height: 8,
        depth: 0,
        format: FLOAT,
        num_channels: 1,
        flags: 0,
    };
    let mut mip: CUmipmappedArray = null_mut();
    // Safety: live locals; each level's bytes are the level's extent.
    unsafe {
        assert_eq!(cuMipmappedArrayCreate(&mut mip, &desc, 4), 0);
        for l in 0..4u32 {
            let mut a: CUarray = null_mut();
            assert_eq!(cuMipmappedArrayGetLevel(&mut a, mip, l), 0);
            let n = (8 >> l) * (8 >> l);
            fill(a, 0, &words(&vec![(10.0 + l as f32).to_bits(); n]));
        }
    }
    let r = array_resource(1, mip as u64);
    // FLOAT_1X32: the H200 refuses format NONE (probe arrays, tex-views).
    let mut v = view(0x16, 8, 8, 0);
    (v.first_mipmap_level, v.last_mipmap_level) = (1, 2);
    // Normalized coordinates (cuda.h: required over mipmapped arrays).
    let t = create(&r, &texture_desc(2), Some(&v)).unwrap();
    let at = |lod: f32, t: u64| run(m, "at_level", t, 1, &[lod.to_bits()], 2);
    let l0 = at(0.0, t);
    assert_eq!(
        f32::from_bits(l0[0]),
        11.0,
        "level 0 is the array's level 1"
    );
    assert_eq!(l0[1], 4, "its width");
    assert_eq!(f32::from_bits(at(1.0, t)[0]), 12.0);
    assert_eq!(
        f32::from_bits(at(3.0, t)[0]),
        12.0,
        "past the view's last level"
    );
    // The clamps count from the view's first level (cuda.h's example: first 2, min 1.2
    // is 3.2): min 1 reads the array's level 2 at level 0.
    let mut td = texture_desc(2);
    td.min_mipmap_level_clamp = 1.0;
    let tc = create(&r, &td, Some(&v)).unwrap();
    assert_eq!(f32::from_bits(at(0.0, tc)[0]), 12.0);
    // The last level may lie past the array's: the H200 took levels 2..5 of a 5-level
    // array and read levels 2 and 3 at lods 0 and 1 (probe views, mip-level-views); the
    // view reads the levels the array has.
    let mut past = v;
    (past.first_mipmap_level, past.last_mipmap_level) = (2, 4);
    let tp = create(&r, &texture_desc(2), Some(&past)).unwrap();
    assert_eq!(f32::from_bits(at(0.0, tp)[0]), 12.0);
    assert_eq!(f32::from_bits(at(1.0, tp)[0]), 13.0);
    assert_eq!(
        f32::from_bits(at(2.0, tp)[0]),
        13.0,
        "the array's last level"
    );
    let mut back = CUDA_RESOURCE_VIEW_DESC::default();
    // Safety: a live local.
    assert_eq!(unsafe { cuTexObjectGetResourceViewDesc(&mut back, tp) }, 0);
    assert_eq!(back, past, "the view as given");
    // A first level one past the array's is taken and reads its last (the H200: levels
    // 5..5 of 5 read level 4, probe views, view-bounds).
    let mut one_past = v;
    (one_past.first_mipmap_level, one_past.last_mipmap_level) = (4, 4);
    let to = create(&r, &texture_desc(2), Some(&one_past)).unwrap();
    assert_eq!(f32::from_bits(at(0.0, to)[0]), 13.0, "levels 4..4");
    // A first level further past is taken too and reads the array's last level at any
    // lod (the H200: levels 6..6, 7..7, 5..6 and 6..100 of 5 read level 4 at lods 0 and
    // 2, probe views, views-two-past), and the getter gives it back as given.
    for (first, last) in [(5, 5), (6, 6), (4, 5), (5, 100)] {
        let mut w = v;
        (w.first_mipmap_level, w.last_mipmap_level) = (first, last);
        let tf = create(&r, &texture_desc(2), Some(&w)).unwrap();
        for lod in [0.0, 2.0] {
            let got = f32::from_bits(at(lod, tf)[0]);
            assert_eq!(got, 13.0, "levels {first}..{last} at lod {lod}");
        }
        let mut back = CUDA_RESOURCE_VIEW_DESC::default();
        // Safety: a live local; the handle made here.
        unsafe {
            assert_eq!(cuTexObjectGetResourceViewDesc(&mut back, tf), 0);
            assert_eq!(cuTexObjectDestroy(tf), 0);
        }
        assert_eq!(back, w, "levels {first}..{last} as given");
    }
    // Backwards, or the first level's extent (the H200 refused it: the view names the
    // original resource's): refused.
    let mut w = v;
    (w.width, w.height) = (4, 4);
    let e = create(&r, &texture_desc(2), Some(&w));
    assert_eq!(e, Err(CUDA_ERROR_INVALID_VALUE), "level 1's extent");
    let mut w = v;
    (w.first_mipmap_level, w.last_mipmap_level) = (2, 1);
    let e = create(&r, &texture_desc(2), Some(&w));
    assert_eq!(e, Err(CUDA_ERROR_INVALID_VALUE), "levels 2..1");
    // Safety: handles made here.
    unsafe {
        assert_eq!(cuTexObjectDestroy(t), 0);
        assert_eq!(cuTexObjectDestroy(tc), 0);
        assert_eq!(cuTexObjectDestroy(tp), 0);
        assert_eq!(cuTexObjectDestroy(to), 0);
        assert_eq!(cuMipmappedArrayDestroy(mip), 0);
    }
}

#[test]
fn a_view_of_layers_makes_its_first_layer_zero() {
    let (_g, m) = setup();
    // 2 x 2 u32, 4 layers, layer k holding 100 + k.
    let a = array(2, 2, 4, U32, 1, LAYERED);
    for k in 0..4u32 {
        fill(a, 16 * k as usize, &words(&[100 + k; 4]));
    }
    let r = array_resource(0, a as u64);
    let mut v = view(0x0d, 2, 2, 4);
    (v.first_layer, v.last_layer) = (1, 2);
    let t = create(&r, &texture_desc(1), Some(&v)).unwrap();
    let layer = |k: u32| run(m, "fetch_a2d_u", t, 4, &[2, k], 16);
    assert_eq!(layer(0)[0], 101);
    assert_eq!(layer(1)[12], 102);
    // Past the view's last layer: 0, where a layered texture's layers clamp (the H200:
    // probe views, layer-views, layer 1 of a view of layers 0..0 read 0).
    assert_eq!(layer(2)[0], 0, "the array's layer 3, past the view");
    assert_eq!(layer(3)[0], 0);
    let plain = create(&r, &texture_desc(1), None).unwrap();
    let plain_layer = |k: u32| run(m, "fetch_a2d_u", plain, 4, &[2, k], 16);
    assert_eq!(plain_layer(3)[0], 103);
    // Without a view, an integer-coordinate fetch past the layers reads 0 too (the H200:
    // layer 5 of 4, probe views, view-bounds; floating-point coordinates clamp).
    assert_eq!(plain_layer(7)[0], 0, "without a view, past the layers");
    // The last layer may lie past the array's (the H200 took layers 3..4 of 4 and read
    // 0 past layer 3).
    let mut w = v;
    (w.first_layer, w.last_layer) = (3, 4);
    let tw = create(&r, &texture_desc(1), Some(&w)).unwrap();
    let layer_w = |k: u32| run(m, "fetch_a2d_u", tw, 4, &[2, k], 16);
    assert_eq!(layer_w(0)[0], 103);
    assert_eq!(
        layer_w(1)[0],
        0,
        "the view's layer 4, which the array lacks"
    );
    // A first layer past the array's is taken and reads 0 (the H200: layers 4..4 of 4,
    // probe views, view-bounds; 5..5, 6..6, 5..6 and 5..100, views-two-past); backwards
    // is refused.
    (w.first_layer, w.last_layer) = (4, 4);
    let t4 = create(&r, &texture_desc(1), Some(&w)).unwrap();
    assert_eq!(run(m, "fetch_a2d_u", t4, 4, &[2, 0], 16)[0], 0);
    for (first, last) in [(5, 5), (6, 6), (5, 6), (5, 100)] {
        (w.first_layer, w.last_layer) = (first, last);
        let tf = create(&r, &texture_desc(1), Some(&w)).unwrap();
        for k in [0, 1, 3] {
            let got = run(m, "fetch_a2d_u", tf, 4, &[2, k], 16);
            assert_eq!(got, [0; 16], "layers {first}..{last}, layer {k}");
        }
        // Safety: the handle made here.
        assert_eq!(unsafe { cuTexObjectDestroy(tf) }, 0);
    }
    (w.first_layer, w.last_layer) = (6, 5);
    assert_eq!(
        create(&r, &texture_desc(1), Some(&w)),
        Err(CUDA_ERROR_INVALID_VALUE),
        "layers 6..5"
    );
    // Safety: handles made here.
    unsafe {
        assert_eq!(cuTexObjectDestroy(t4), 0);
        assert_eq!(cuTexObjectDestroy(tw), 0);
        assert_eq!(cuTexObjectDestroy(plain), 0);
        assert_eq!(cuTexObjectDestroy(t), 0);
        assert_eq!(cuArrayDestroy(a), 0);
    }
}

/// Layer subranges of a cubemap array of two cubes (12 faces) are taken, counted in faces
/// with the array's depth, as the H200 took 0..5, 6..11, 1..1, 0..0 and 1..6, and refused
/// a depth of the subrange's (probe views, cubemap-views). Through a view of the second
/// cube, `tex.acube`'s cube 0 is the array's cube 1 (what the H200 reads through such a
/// view awaits probe views' cubemap-view-reads).
#[test]
fn a_cubemap_arrays_layer_subranges_are_taken() {
    let (_g, m) = setup();
    let a = array(2, 2, 12, U32, 1, LAYERED | CUBEMAP);
    for k in 0..12u32 {
        fill(a, 16 * k as usize, &words(&[100 + k; 4]));
    }
    let r = array_resource(0, a as u64);
    let mut made = Vec::new();
    for (first, last) in [(0, 11), (0, 5), (6, 11), (1, 1), (0, 0), (1, 6)] {
        let mut v = view(0x0d, 2, 2, 12);
        (v.first_layer, v.last_layer) = (first, last);
        let t = create(&r, &texture_desc(1), Some(&v));
        assert!(t.is_ok(), "layers {first}..{last}: {t:?}");
        made.push(t.unwrap());
        v.depth = (last - first + 1) as usize;
        if v.depth != 12 {
            let e = create(&r, &texture_desc(1), Some(&v));
            assert_eq!(e, Err(CUDA_ERROR_INVALID_VALUE), "depth {}", v.depth);
        }
    }
    // +x of cube 0 of the view of layers 6..11: the array's face 6.
    let face = run(m, "cube_face", made[2], 1, &[0, 1f32.to_bits()], 1);
    assert_eq!(face[0], 106);
    // Safety: handles made here.
    unsafe {
        for t in made {
            assert_eq!(cuTexObjectDestroy(t), 0);
        }
        assert_eq!(cuArrayDestroy(a), 0);
    }
}

/// cuTexObjectGetTextureDesc leaves borderColor as it was, whatever the address modes, a
/// border one included, and writes the rest (the H200: probe views, border-readback).
#[test]
fn the_texture_descriptor_read_back_leaves_the_border_colour() {
    let (_g, _m) = setup();
    let a = array(4, 4, 0, FLOAT, 1, 0);
    let r = array_resource(0, a as u64);
    for modes in [[1, 0, 1], [3, 1, 1], [1, 3, 1], [2, 2, 1]] {
        let mut t = texture_desc(0);
        t.address_mode = modes;
        t.border_color = [0.25, 0.0, 0.5, 0.0];
        t.max_anisotropy = 4;
        t.mipmap_level_bias = 1.5;
        let h = create(&r, &t, None).unwrap();
        let mut back = CUDA_TEXTURE_DESC {
            border_color: [f32::from_bits(0xa5a5_a5a5); 4],
            ..Default::default()
        };
        // Safety: a live local laid out as cuda.h's.
        assert_eq!(unsafe { cuTexObjectGetTextureDesc(&mut back, h) }, 0);
        assert_eq!(back.border_color.map(f32::to_bits), [0xa5a5_a5a5; 4]);
        assert_eq!(
            (
                back.address_mode,
                back.max_anisotropy,
                back.mipmap_level_bias
            ),
            (modes, 4, 1.5),
            "modes {modes:?}"
        );
        // Safety: a handle made here.
        assert_eq!(unsafe { cuTexObjectDestroy(h) }, 0);
    }
    // Safety: a handle made here.
    assert_eq!(unsafe { cuArrayDestroy(a) }, 0);
}

/// CU_TRSF_SEAMLESS_CUBEMAP is for a cubemap: the H200 refused it over an array, linear
/// and pitch2D memory alike, and took it over a cubemap (probe arrays, tex-desc-fields).
#[test]
fn seamless_cubemap_is_refused_over_what_is_no_cubemap() {
    let (_g, _m) = setup();
    let seamless = texture_desc(0x40);
    let plain = array(4, 4, 0, FLOAT, 1, 0);
    let r = array_resource(0, plain as u64);
    assert_eq!(create(&r, &seamless, None), Err(CUDA_ERROR_INVALID_VALUE));
    assert!(create(&r, &texture_desc(0), None).is_ok());
    let mut p: CUdeviceptr = 0;
    // Safety: a live local.
    assert_eq!(unsafe { cuMemAlloc_v2(&mut p, 4096) }, 0);
    let mut linear = array_resource(2, p);
    linear.res[1] = FLOAT as u32 as u64 | (1 << 32);
    linear.res[2] = 4096;
    assert!(create(&linear, &texture_desc(0), None).is_ok());
    assert_eq!(
        create(&linear, &seamless, None),
        Err(CUDA_ERROR_INVALID_VALUE)
    );
    let cube = array(4, 4, 6, FLOAT, 1, CUBEMAP);
    let t = create(&array_resource(0, cube as u64), &seamless, None);
    assert!(t.is_ok(), "over a cubemap: {t:?}");
    // Safety: handles made here.
    unsafe {
        assert_eq!(cuMemFree_v2(p), 0);
        assert_eq!(cuArrayDestroy(plain), 0);
        assert_eq!(cuArrayDestroy(cube), 0);
    }
}

/// A 5:6:5 colour of BC1's endpoints.
fn rgb565(r: u16, g: u16, b: u16) -> u16 {
    r << 11 | g << 5 | b
}

#[test]
fn bc1_blocks_decode_as_the_format_defines() {
    let (_g, m) = setup();
    // Two blocks (elements of 2 u32s): the view is 8 x 4 texels. In each row of both
    // blocks, texel x takes colour index `idx[x]` (2 bits a texel, row-major, lowest
    // first).
    // Block 0: colour0 white > colour1 black: four colours, colour2 = 2/3 c0 + 1/3 c1,
    // colour3 = 1/3 c0 + 2/3 c1, all opaque. Indices 0, 1, 2, 3. The H200 read the blends
    // as red and blue 170 and 85, green 175 and 80 (texture_views' "BC1 four colours":
    // its green blends otherwise).
    // Block 1: colour0 blue <= colour1 red: three colours and index 3 transparent black.
    // Indices 0, 1, 3, 3.
    let white = rgb565(31, 63, 31);
    let blue = rgb565(0, 0, 31);
    let red = rgb565(31, 0, 0);
    let row = |idx: [u32; 4]| {
        idx.iter()
            .enumerate()
            .map(|(x, i)| i << (2 * x))
            .sum::<u32>()
    };
    let rows = |idx| row(idx) * 0x0101_0101;
    let block0 = [white as u32, rows([0, 1, 2, 3])];
    let block1 = [blue as u32 | (red as u32) << 16, rows([0, 1, 3, 3])];
    let a = array(2, 1, 0, U32, 2, 0);
    fill(a, 0, &words(&[block0[0], block0[1], block1[0], block1[1]]));
    let r = array_resource(0, a as u64);
    // CU_RES_VIEW_FORMAT_UNSIGNED_BC1, 4 times the array's width and height.
    let t = create(&r, &texture_desc(0), Some(&view(0x19, 8, 4, 0))).unwrap();
    let got = floats(&run(m, "fetch_2d", t, 32, &[8], 128));
    let texel = |x: usize, y: usize| &got[4 * (8 * y + x)..4 * (8 * y + x) + 4];
    let unorm = |v: u8| v as f32 / 255.0;
    for y in 0..4 {
        assert_eq!(texel(0, y), [1.0, 1.0, 1.0, 1.0]);
        assert_eq!(texel(1, y), [0.0, 0.0, 0.0, 1.0]);
        assert_eq!(texel(2, y), [unorm(170), unorm(175), unorm(170), 1.0]);
        assert_eq!(texel(3, y), [unorm(85), unorm(80), unorm(85), 1.0]);
        assert_eq!(texel(4, y), [0.0, 0.0, 1.0, 1.0]);
        assert_eq!(texel(5, y), [1.0, 0.0, 0.0, 1.0]);
        assert_eq!(texel(6, y), [0.0; 4]);
    }
    // BC1 needs elements of two 32-bit unsigned channels, and 4 texels a block.
    let e = create(&r, &texture_desc(0), Some(&view(0x19, 2, 1, 0)));
    assert_eq!(e, Err(CUDA_ERROR_INVALID_VALUE), "the array's own extent");
    let e = create(&r, &texture_desc(0), Some(&view(0x1a, 8, 4, 0)));
    assert_eq!(e, Err(CUDA_ERROR_INVALID_VALUE), "BC2 over 2 channels");
    // Safety: handles made here.
    unsafe {
        assert_eq!(cuTexObjectDestroy(t), 0);
        assert_eq!(cuArrayDestroy(a), 0);
    }
}

/// A BC4 block: the two endpoints, then each texel's 3-bit index (row-major, lowest
/// first) in the 48 bits after them.
fn bc4_block(a0: u8, a1: u8, idx: impl Fn(usize) -> u64) -> [u32; 2] {
    let bits = (0..16).fold(0u64, |b, t| b | idx(t) << (3 * t));
    let v = a0 as u64 | (a1 as u64) << 8 | bits << 16;
    [v as u32, (v >> 32) as u32]
}

#[test]
fn bc4_blocks_decode_as_the_format_defines() {
    let (_g, m) = setup();
    // Block 0: a0 255 > a1 0: eight values, a0, a1, then 6/7 a0 + 1/7 a1 .. 1/7 a0 + 6/7
    // a1. Texel t takes index t % 8.
    // Block 1: a0 20 <= a1 50: six values, a0, a1, 4/5 a0 + 1/5 a1 .. 1/5 a0 + 4/5 a1,
    // then 0 and 1.
    // The blends as the H200 read them, 16-bit UNORM (texture_views' "BC4 unsigned", and
    // the green of its "BC5 unsigned" for block 1): each a multiple of 36 (a seventh) or
    // 48 (a fifth) of the endpoints' 8-bit difference from one endpoint.
    let b0 = bc4_block(255, 0, |t| (t % 8) as u64);
    let b1 = bc4_block(20, 50, |t| (t % 8) as u64);
    let a = array(2, 1, 0, U32, 2, 0);
    fill(a, 0, &words(&[b0[0], b0[1], b1[0], b1[1]]));
    let r = array_resource(0, a as u64);
    // CU_RES_VIEW_FORMAT_UNSIGNED_BC4: one channel.
    let t = create(&r, &texture_desc(0), Some(&view(0x1c, 8, 4, 0))).unwrap();
    let got = floats(&run(m, "fetch_2d", t, 32, &[8], 128));
    let first = [65535, 0, 56355, 47175, 36720, 28815, 18360, 9180];
    let second = [5140, 12850, 6580, 8020, 9970, 11410, 0, 65535];
    for t in 0..16 {
        let (x, y) = (t % 4, t / 4);
        for (block, values) in [(0, first), (1, second)] {
            let at = 4 * (8 * y + 4 * block + x);
            assert_eq!(
                got[at..at + 4],
                [values[t % 8] as f32 / 65535.0, 0.0, 0.0, 0.0],
                "block {block} texel {t}"
            );
        }
    }
    // Safety: handles made here.
    unsafe {
        assert_eq!(cuTexObjectDestroy(t), 0);
        assert_eq!(cuArrayDestroy(a), 0);
    }
}

/// A texture over a BC1 array of 6 x 5 texels (2 x 2 blocks, each one solid colour,
/// copied in as 2 rows of blocks) reads its texels, and 0 in every channel past them,
/// in its partial blocks too, under clamp with integer coordinates: the H200 read 8 x 8
/// texels so (probe texel_formats, bc-partial-blocks), where other arrays clamp.
#[test]
fn a_block_compressed_array_reads_zero_past_its_texels() {
    let (_g, m) = setup();
    const BC1_UNORM: i32 = 0x91;
    let a = array(6, 5, 0, BC1_UNORM, 4, 0);
    // Colour 0 of each block, colour 1 black, every index 0: the block is colour 0.
    let colours = [
        rgb565(31, 63, 31),
        rgb565(31, 0, 0),
        rgb565(0, 63, 0),
        rgb565(0, 0, 31),
    ];
    let blocks = words(
        &colours
            .iter()
            .flat_map(|c| [*c as u32, 0])
            .collect::<Vec<_>>(),
    );
    let copy = CUDA_MEMCPY3D {
        src_x_in_bytes: 0,
        src_y: 0,
        src_z: 0,
        src_lod: 0,
        src_memory_type: 1,
        src_host: blocks.as_ptr().cast(),
        src_device: 0,
        src_array: null_mut(),
        reserved0: null_mut(),
        src_pitch: 16,
        src_height: 2,
        dst_x_in_bytes: 0,
        dst_y: 0,
        dst_z: 0,
        dst_lod: 0,
        dst_memory_type: 3,
        dst_host: null_mut(),
        dst_device: 0,
        dst_array: a.cast(),
        reserved1: null_mut(),
        dst_pitch: 0,
        dst_height: 0,
        width_in_bytes: 16,
        height: 2,
        depth: 1,
    };
    // Safety: `blocks` is live for the copy.
    assert_eq!(unsafe { cuMemcpy3D_v2(&copy) }, 0, "2 rows of 2 blocks");
    let t = create(&array_resource(0, a as u64), &texture_desc(0), None).unwrap();
    let got = floats(&run(m, "fetch_2d", t, 64, &[8], 256));
    let rgba = [
        [1.0, 1.0, 1.0, 1.0],
        [1.0, 0.0, 0.0, 1.0],
        [0.0, 1.0, 0.0, 1.0],
        [0.0, 0.0, 1.0, 1.0],
    ];
    for y in 0..8 {
        for x in 0..8 {
            let texel = &got[4 * (8 * y + x)..4 * (8 * y + x) + 4];
            let want = if x < 6 && y < 5 {
                rgba[2 * (y / 4) + x / 4]
            } else {
                [0.0; 4]
            };
            assert_eq!(texel, want, "texel ({x}, {y})");
        }
    }
    // Safety: handles made here.
    unsafe {
        assert_eq!(cuTexObjectDestroy(t), 0);
        assert_eq!(cuArrayDestroy(a), 0);
    }
}
