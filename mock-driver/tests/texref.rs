//! Texture and surface references (cuda.h's deprecated reference API) end to end: PTX
//! kernels naming module-scope `.texref`/`.surfref` variables (assembled by ptxas too),
//! bound through cuModuleGetTexRef/cuTexRefSet*/cuSurfRefSetArray, read and written at
//! launch; the Get* twins; the errors cuda.h documents. Expected values come from cuda.h
//! and the CUDA programming guide's filtering rules (linear filtering halfway between two
//! texel centres is their mean), not from the mock. Where cuda.h is silent, the H200's
//! answers in probe texrefs (clients/probes/goldens/NVIDIA_H200-580.159.04/texrefs.txt).
//!
//! One test, in one thread, with one context throughout.

mod common;

use cuda::exports::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::{c_void, CStr, CString};
use std::ptr::null_mut;
use std::sync::mpsc;
use std::time::Duration;

const HEAD: &str = ".version 9.0\n.target sm_90\n.address_size 64\n";

/// `arr_tex` is read with float coordinates, `lin_tex` with integer ones (tex.1d over
/// linear memory), `surf` loaded from and stored to; `handle_of` takes `arr_tex`'s handle
/// by `mov` and reads through it; `wait_for_host` holds a stream back.
const KERNELS: &str = r#"
.global .texref arr_tex;
.global .texref lin_tex;
.global .surfref surf;
.global .texref unbound_tex;

.visible .entry read_array(.param .u64 out, .param .f32 x, .param .f32 y)
{
    .reg .f32 %f<7>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    ld.param.f32 %f5, [x];
    ld.param.f32 %f6, [y];
    tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [arr_tex, {%f5, %f6}];
    st.global.f32 [%rd1], %f1;
    ret;
}

.visible .entry read_linear(.param .u64 out, .param .u32 i)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r5, [i];
    tex.1d.v4.u32.s32 {%r1, %r2, %r3, %r4}, [lin_tex, {%r5}];
    st.global.u32 [%rd1], %r1;
    ret;
}

.visible .entry surface_step(.param .u32 from, .param .u32 to)
{
    .reg .b32 %r<5>;
    ld.param.u32 %r1, [from];
    ld.param.u32 %r2, [to];
    mov.u32 %r3, 0;
    suld.b.2d.b32.trap {%r4}, [surf, {%r1, %r3}];
    add.u32 %r4, %r4, 40;
    sust.b.2d.b32.trap [surf, {%r2, %r3}], {%r4};
    ret;
}

.visible .entry handle_of(.param .u64 out)
{
    .reg .pred %p<3>;
    .reg .f32 %f<7>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [out];
    mov.u64 %rd2, arr_tex;
    istypep.texref %p1, %rd2;
    istypep.surfref %p2, %rd2;
    selp.u32 %r1, 1, 0, %p1;
    selp.u32 %r2, 1, 0, %p2;
    st.global.u32 [%rd1], %r1;
    st.global.u32 [%rd1+4], %r2;
    mov.f32 %f5, 0f40200000;
    mov.f32 %f6, 0f3FC00000;
    tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd2, {%f5, %f6}];
    st.global.f32 [%rd1+8], %f1;
    ret;
}

.visible .entry read_unbound(.param .u64 out)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r5, 0;
    tex.1d.v4.u32.s32 {%r1, %r2, %r3, %r4}, [unbound_tex, {%r5}];
    st.global.u32 [%rd1], %r1;
    ret;
}

.visible .entry wait_for_host(.param .u64 flag)
{
    .reg .pred %p;
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [flag];
SPIN:
    ld.volatile.global.u32 %r1, [%rd1];
    setp.eq.u32 %p, %r1, 0;
    @%p bra SPIN;
    ret;
}
"#;

/// A second module with a reference of the same name.
const OTHER: &str = ".global .texref arr_tex;\n\
    .visible .entry k(.param .u64 out) { .reg .f32 %f<5>; .reg .b64 %rd<2>;\n\
    ld.param.u64 %rd1, [out];\n\
    tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [arr_tex, {%f1, %f1}];\n\
    st.global.f32 [%rd1], %f1; ret; }\n";

const CU_AD_FORMAT_UNSIGNED_INT8: i32 = 0x01;
const CU_AD_FORMAT_UNSIGNED_INT32: i32 = 0x03;
const CU_AD_FORMAT_FLOAT: i32 = 0x20;
const CU_TRSA_OVERRIDE_FORMAT: u32 = 0x01;
const CU_TRSF_READ_AS_INTEGER: u32 = 0x01;
const CU_TRSF_NORMALIZED_COORDINATES: u32 = 0x02;
const CU_TRSF_SRGB: u32 = 0x10;
const CUDA_ARRAY3D_SURFACE_LDST: u32 = 0x02;

/// ptxas 13.0 assembles `src` for sm_90: the PTX is the ISA's, not only the mock's.
fn ptxas_accepts(src: &str, name: &str) {
    let dir = common::scratch("texref");
    let path = dir.join(format!("{name}.ptx"));
    std::fs::write(&path, src).unwrap();
    let out = std::process::Command::new(common::nvcc_root().join("bin/ptxas"))
        .args(["-arch=sm_90", "-o"])
        .arg(dir.join(format!("{name}.cubin")))
        .arg(&path)
        .output()
        .expect("run ptxas");
    assert!(
        out.status.success(),
        "ptxas refuses {name}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

unsafe fn load(src: &str) -> CUmodule {
    let image = CString::new(format!("{HEAD}{src}")).unwrap();
    let mut m: CUmodule = null_mut();
    // Safety: a NUL-terminated image and a live out-parameter.
    assert_eq!(
        unsafe { cuModuleLoadData(&mut m, image.as_ptr().cast()) },
        0
    );
    m
}

unsafe fn function(m: CUmodule, name: &CStr) -> CUfunction {
    let mut f: CUfunction = null_mut();
    // Safety: a live out-parameter and name.
    assert_eq!(unsafe { cuModuleGetFunction(&mut f, m, name.as_ptr()) }, 0);
    f
}

unsafe fn texref(m: CUmodule, name: &CStr) -> CUtexref {
    let mut t: CUtexref = null_mut();
    // Safety: a live out-parameter and name.
    assert_eq!(unsafe { cuModuleGetTexRef(&mut t, m, name.as_ptr()) }, 0);
    t
}

/// Launches `f` with one block of one thread; `args` are each 8 bytes or less, passed by
/// address as cuLaunchKernel takes them.
unsafe fn launch(f: CUfunction, stream: CUstream, args: &mut [&mut dyn std::any::Any]) {
    let mut params: Vec<*mut c_void> = args
        .iter_mut()
        .map(|a| (&mut **a as *mut dyn std::any::Any).cast::<c_void>())
        .collect();
    // Safety: params point to live values of the kernels' parameter types.
    let r = unsafe {
        cuLaunchKernel(
            f,
            1,
            1,
            1,
            1,
            1,
            1,
            0,
            stream,
            params.as_mut_ptr(),
            null_mut(),
        )
    };
    assert_eq!(r, 0);
}

fn read<T: Copy + Default>(at: u64) -> T {
    let mut v = T::default();
    // Safety: a live local of T's size.
    let r = unsafe { cuMemcpyDtoH_v2((&mut v as *mut T).cast(), at, std::mem::size_of::<T>()) };
    assert_eq!(r, 0);
    v
}

fn write_words(at: u64, words: &[u32]) {
    // Safety: a live slice.
    let r = unsafe { cuMemcpyHtoD_v2(at, words.as_ptr().cast(), 4 * words.len()) };
    assert_eq!(r, 0);
}

/// A 2D array of `width` x `height` elements of `format`, one channel, holding `texels`.
unsafe fn array_of(
    width: usize,
    height: usize,
    format: i32,
    flags: u32,
    texels: &[u32],
) -> CUarray {
    let desc = CUDA_ARRAY3D_DESCRIPTOR {
        width,
        height,
        depth: 0,
        format,
        num_channels: 1,
        flags,
    };
    let mut a: CUarray = null_mut();
    // Row by row (cuMemcpy2D): the H200 refuses cuMemcpyHtoA past an array's first row.
    // Safety: live descriptor and out-parameter; the texels fill the array.
    unsafe {
        assert_eq!(cuArray3DCreate_v2(&mut a, &desc), 0);
        let copy = CUDA_MEMCPY2D {
            src_x_in_bytes: 0,
            src_y: 0,
            src_memory_type: 1,
            src_host: texels.as_ptr().cast(),
            src_device: 0,
            src_array: null_mut(),
            src_pitch: 4 * width,
            dst_x_in_bytes: 0,
            dst_y: 0,
            dst_memory_type: 3,
            dst_host: null_mut(),
            dst_device: 0,
            dst_array: a.cast(),
            dst_pitch: 0,
            width_in_bytes: 4 * width,
            height: height.max(1),
        };
        assert_eq!(cuMemcpy2D_v2(&copy), 0);
    }
    a
}

#[test]
fn texture_and_surface_references_end_to_end() {
    for (name, src) in [("kernels", KERNELS), ("other", OTHER)] {
        ptxas_accepts(&format!("{HEAD}{src}"), name);
    }
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        // Safety: live out-parameters, handles made here, NUL-terminated names.
        unsafe { end_to_end() };
        let _ = tx.send(());
    });
    rx.recv_timeout(Duration::from_secs(120))
        .expect("still running after 120 s (a hang), or an assertion failed");
}

unsafe fn end_to_end() {
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx: CUcontext = null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        let m = load(KERNELS);
        let other = load(OTHER);
        let mut mem = 0u64;
        assert_eq!(cuMemAlloc_v2(&mut mem, 4096), 0);
        assert_eq!(cuMemsetD32_v2(mem, 0, 1024), 0);
        let out = mem + 2048;
        let null = null_mut();

        // ---- Lookup: by name and kind; the same handle each time.
        let arr = texref(m, c"arr_tex");
        assert_eq!(arr, texref(m, c"arr_tex"));
        let mut t: CUtexref = null_mut();
        assert_eq!(
            cuModuleGetTexRef(&mut t, m, c"no_such".as_ptr()),
            CUDA_ERROR_NOT_FOUND
        );
        assert_eq!(
            cuModuleGetTexRef(&mut t, m, c"surf".as_ptr()),
            CUDA_ERROR_NOT_FOUND,
            "a .surfref is not a texture reference"
        );
        let mut s: CUsurfref = null_mut();
        assert_eq!(
            cuModuleGetSurfRef(&mut s, m, c"arr_tex".as_ptr()),
            CUDA_ERROR_NOT_FOUND
        );
        assert_eq!(cuModuleGetSurfRef(&mut s, m, c"surf".as_ptr()), 0);
        let other_arr = texref(other, c"arr_tex");
        assert_ne!(other_arr, arr, "each module has its own reference");

        // ---- A reference never set: float, 1 channel, clamp in every dimension, point,
        // no flags, as on the H200 (probe texrefs, module-defaults).
        let (mut format, mut channels) = (0, 0);
        assert_eq!(cuTexRefGetFormat(&mut format, &mut channels, other_arr), 0);
        assert_eq!((format, channels), (CU_AD_FORMAT_FLOAT, 1));
        for dim in 0..3 {
            let mut am = -1;
            assert_eq!(cuTexRefGetAddressMode(&mut am, other_arr, dim), 0);
            assert_eq!(am, 1, "dimension {dim}");
        }
        let (mut fm, mut flags) = (-1, u32::MAX);
        assert_eq!(cuTexRefGetFilterMode(&mut fm, other_arr), 0);
        assert_eq!(cuTexRefGetFlags(&mut flags, other_arr), 0);
        assert_eq!((fm, flags), (0, 0));

        // ---- A 2D float array, texel (x, y) = 10 y + x, point and linear filtering.
        let texels: Vec<u32> = (0..8)
            .map(|i| (10.0 * (i / 4) as f32 + (i % 4) as f32).to_bits())
            .collect();
        let a = array_of(4, 2, CU_AD_FORMAT_FLOAT, 0, &texels);
        assert_eq!(cuTexRefSetArray(arr, a, CU_TRSA_OVERRIDE_FORMAT), 0);
        let read_array = function(m, c"read_array");
        let sample = |x: f32, y: f32| -> f32 {
            let (mut o, mut x, mut y) = (out, x, y);
            launch(read_array, null_mut(), &mut [&mut o, &mut x, &mut y]);
            assert_eq!(cuCtxSynchronize(), 0);
            read::<f32>(out)
        };
        // Unnormalized coordinates; texel (2, 1)'s centre is (2.5, 1.5).
        assert_eq!(sample(2.5, 1.5), 12.0);
        assert_eq!(sample(2.9, 1.2), 12.0, "point filtering takes the texel");
        assert_eq!(cuTexRefSetFilterMode(arr, 1), 0);
        // Halfway between the centres of texels 0 and 1 of row 0: their mean.
        assert_eq!(sample(1.0, 0.5), 0.5);
        // Halfway between rows 0 and 1 at texel 3's centre: (3 + 13) / 2.
        assert_eq!(sample(3.5, 1.0), 8.0);
        // Normalized coordinates: (0.625, 0.75) is texel (2, 1)'s centre.
        assert_eq!(cuTexRefSetFilterMode(arr, 0), 0);
        assert_eq!(cuTexRefSetFlags(arr, CU_TRSF_NORMALIZED_COORDINATES), 0);
        assert_eq!(sample(0.625, 0.75), 12.0);
        // Clamp on x: past the edge reads the last texel of the row.
        assert_eq!(cuTexRefSetAddressMode(arr, 0, 1), 0);
        assert_eq!(sample(1.5, 0.25), 3.0);
        // Wrap on x: 1.125 is 0.125, texel 0.
        assert_eq!(cuTexRefSetAddressMode(arr, 0, 0), 0);
        assert_eq!(sample(1.125, 0.25), 0.0);
        assert_eq!(cuTexRefSetFlags(arr, 0), 0);

        // ---- The handle `mov` gives: a texref by istypep, and readable through.
        let handle_of = function(m, c"handle_of");
        let mut o = out;
        launch(handle_of, null_mut(), &mut [&mut o]);
        assert_eq!(cuCtxSynchronize(), 0);
        assert_eq!(read::<u32>(out), 1, "istypep.texref of a .texref's handle");
        assert_eq!(
            read::<u32>(out + 4),
            0,
            "istypep.surfref of a .texref's handle"
        );
        assert_eq!(
            read::<f32>(out + 8),
            12.0,
            "texel (2, 1) through the handle"
        );

        // ---- Another module's reference of the same name is its own: binding it to
        // another array changes nothing for this module's kernels.
        let ones = array_of(4, 2, CU_AD_FORMAT_FLOAT, 0, &[1.0f32.to_bits(); 8]);
        assert_eq!(
            cuTexRefSetArray(other_arr, ones, CU_TRSA_OVERRIDE_FORMAT),
            0
        );
        assert_eq!(sample(2.5, 1.5), 12.0);

        // ---- A format set after the array's binding: the array's bytes read as its
        // elements, rows as far apart as the array's. Through u8 x1, texel (2, 1) is byte
        // 16 + 2, the third byte of float 10 (0x41200000): 0x20, normalized 32/255, which
        // the H200 read (probe texrefs, format-rules: 0.12549).
        let b = array_of(4, 2, CU_AD_FORMAT_FLOAT, 0, &texels);
        assert_eq!(cuTexRefSetArray(arr, b, CU_TRSA_OVERRIDE_FORMAT), 0);
        assert_eq!(cuTexRefSetFormat(arr, CU_AD_FORMAT_UNSIGNED_INT8, 1), 0);
        assert_eq!(sample(2.5, 1.5), 32.0 / 255.0);
        // ---- The bound array destroyed: the reference is bound to no array since, and
        // reads 0, as on the H200 (probe texrefs, destroyed-array-launch).
        assert_eq!(cuArrayDestroy(b), 0);
        let mut got = 0xa5 as CUarray;
        assert_eq!(cuTexRefGetArray(&mut got, arr), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(got, 0xa5 as CUarray, "untouched");
        assert_eq!(sample(2.5, 1.5), 0.0);
        assert_eq!(cuTexRefSetArray(arr, a, CU_TRSA_OVERRIDE_FORMAT), 0);
        assert_eq!(sample(2.5, 1.5), 12.0);

        // ---- Linear memory, tex.1d, u32 texels 100 + k; SetAddress at a pointer 4 bytes
        // past the texture-aligned allocation: ByteOffset 4 (one texel), which the kernel
        // adds to its index (cuda.h).
        let lin = texref(m, c"lin_tex");
        let words: Vec<u32> = (0..16).map(|k| 100 + k).collect();
        write_words(mem, &words);
        assert_eq!(cuTexRefSetFormat(lin, CU_AD_FORMAT_UNSIGNED_INT32, 1), 0);
        assert_eq!(cuTexRefSetFlags(lin, CU_TRSF_READ_AS_INTEGER), 0);
        let mut offset = usize::MAX;
        assert_eq!(cuTexRefSetAddress_v2(&mut offset, lin, mem, 64), 0);
        assert_eq!(offset, 0, "cuMemAlloc's pointer: offset 0 (cuda.h)");
        assert_eq!(cuTexRefSetAddress_v2(&mut offset, lin, mem + 4, 60), 0);
        assert_eq!(offset, 4);
        let mut at = 0u64;
        assert_eq!(cuTexRefGetAddress_v2(&mut at, lin), 0);
        assert_eq!(
            at, mem,
            "the aligned base, as on the H200 (probe texrefs, linear-offset)"
        );
        let read_linear = function(m, c"read_linear");
        let fetch = |stream: CUstream, i: u32, to: u64| {
            let (mut o, mut i) = (to, i);
            launch(read_linear, stream, &mut [&mut o, &mut i]);
        };
        fetch(null_mut(), 2 + (offset / 4) as u32, out);
        assert_eq!(cuCtxSynchronize(), 0);
        assert_eq!(read::<u32>(out), 103, "element 2 from the pointer");

        // ---- A launch keeps the state it was queued with: rebinding before the kernel
        // runs does not reach it; the next launch sees the new binding.
        let mut stream: CUstream = null_mut();
        assert_eq!(cuStreamCreate(&mut stream, 1), 0);
        let flag = mem + 1024;
        let mut f = flag;
        launch(function(m, c"wait_for_host"), stream, &mut [&mut f]);
        fetch(stream, 0, out);
        write_words(mem + 512, &[7, 8, 9, 10]);
        assert_eq!(cuTexRefSetAddress_v2(null_mut(), lin, mem + 512, 16), 0);
        fetch(stream, 0, out + 4);
        assert_eq!(cuStreamQuery(stream), CUDA_ERROR_NOT_READY);
        write_words(flag, &[1]);
        assert_eq!(cuStreamSynchronize(stream), 0);
        assert_eq!(read::<u32>(out), 100, "the launch before the rebinding");
        assert_eq!(read::<u32>(out + 4), 7, "the launch after it");

        // ---- A surface reference over a SURFACE_LDST array of u32 [1, 2, 3, 4]: element
        // 1 (byte 4) plus 40 stored at element 3 (byte 12).
        let sa = array_of(
            4,
            1,
            CU_AD_FORMAT_UNSIGNED_INT32,
            CUDA_ARRAY3D_SURFACE_LDST,
            &[1, 2, 3, 4],
        );
        let plain = array_of(4, 1, CU_AD_FORMAT_UNSIGNED_INT32, 0, &[0; 4]);
        assert_eq!(
            cuSurfRefSetArray(s, plain, 0),
            CUDA_ERROR_INVALID_VALUE,
            "cuda.h: the array must have CUDA_ARRAY3D_SURFACE_LDST"
        );
        assert_eq!(
            cuSurfRefSetArray(s, sa, 1),
            CUDA_ERROR_INVALID_VALUE,
            "Flags must be 0"
        );
        let mut got: CUarray = null_mut();
        assert_eq!(
            cuSurfRefGetArray(&mut got, s),
            CUDA_ERROR_INVALID_VALUE,
            "unbound"
        );
        assert_eq!(cuSurfRefSetArray(s, sa, 0), 0);
        assert_eq!(cuSurfRefGetArray(&mut got, s), 0);
        assert_eq!(got, sa);
        let (mut from, mut to) = (4u32, 12u32);
        launch(
            function(m, c"surface_step"),
            null_mut(),
            &mut [&mut from, &mut to],
        );
        assert_eq!(cuCtxSynchronize(), 0);
        let mut back = [0u32; 4];
        assert_eq!(cuMemcpyAtoH_v2(back.as_mut_ptr().cast(), sa, 0, 16), 0);
        assert_eq!(back, [1, 2, 3, 42]);

        get_set_round_trips(arr, a, null);
        errors(m, lin, s, mem);
        as_the_h200_answers(m, mem);

        // ---- A kernel reading a reference never bound reads zeros, as on the H200
        // (probe texrefs, unbound-launch).
        write_words(out, &[0xa5a5_a5a5]);
        let mut o = out;
        launch(function(m, c"read_unbound"), null_mut(), &mut [&mut o]);
        assert_eq!(cuCtxSynchronize(), 0);
        assert_eq!(read::<u32>(out), 0);

        as_texrefs_recorded(out);
    }
}

/// A mipmapped array of `levels` levels from `width` x `width` elements of `format`.
unsafe fn mipmapped_of(width: usize, format: i32, channels: u32, levels: u32) -> CUmipmappedArray {
    let desc = CUDA_ARRAY3D_DESCRIPTOR {
        width,
        height: width,
        depth: 0,
        format,
        num_channels: channels,
        flags: 0,
    };
    let mut mm: CUmipmappedArray = null_mut();
    // Safety: live descriptor and out-parameter.
    assert_eq!(unsafe { cuMipmappedArrayCreate(&mut mm, &desc, levels) }, 0);
    mm
}

/// What the H200 answered in probe texrefs' sections format-wider,
/// destroyed-other-bindings and mipmap-setters, each through a module of its own (its
/// references in their first state), as the probe's sections are.
unsafe fn as_texrefs_recorded(out: u64) {
    unsafe {
        let texels: Vec<u32> = (0..8)
            .map(|i| (10.0 * (i / 4) as f32 + (i % 4) as f32).to_bits())
            .collect();
        let sampler = |m: CUmodule| {
            let read_array = function(m, c"read_array");
            move |x: f32, y: f32| -> f32 {
                let (mut o, mut x, mut y) = (out, x, y);
                launch(read_array, null_mut(), &mut [&mut o, &mut x, &mut y]);
                assert_eq!(cuCtxSynchronize(), 0);
                read::<f32>(out)
            }
        };

        // ---- format-wider: the 4 x 2 float array (10 y + x) through float x2: texel (1,
        // 1) is floats 6 and 7 of the array, rows 16 bytes apart as the array's: 12.
        let m = load(KERNELS);
        let sample = sampler(m);
        let t = texref(m, c"arr_tex");
        let a = array_of(4, 2, CU_AD_FORMAT_FLOAT, 0, &texels);
        assert_eq!(cuTexRefSetArray(t, a, CU_TRSA_OVERRIDE_FORMAT), 0);
        assert_eq!(cuTexRefSetFormat(t, CU_AD_FORMAT_UNSIGNED_INT8, 4), 0);
        assert_eq!(sample(2.5, 1.5), 0.0, "u8 x4: byte 0 of float 12");
        assert_eq!(cuTexRefSetFormat(t, CU_AD_FORMAT_FLOAT, 2), 0);
        assert_eq!(sample(1.5, 1.5), 12.0, "`(1.5, 1.5) -> 12`");
        assert_eq!(cuArrayDestroy(a), 0);
        assert_eq!(cuModuleUnload(m), 0);

        // ---- destroyed-other-bindings: a surface reference's array and a texture
        // reference's mipmapped array destroyed: bound to nothing since (the getters
        // refuse, their out-parameter untouched), the texture read as zeros.
        let m = load(KERNELS);
        let sample = sampler(m);
        let mut s: CUsurfref = null_mut();
        assert_eq!(cuModuleGetSurfRef(&mut s, m, c"surf".as_ptr()), 0);
        let sa = array_of(
            4,
            1,
            CU_AD_FORMAT_UNSIGNED_INT32,
            CUDA_ARRAY3D_SURFACE_LDST,
            &[0; 4],
        );
        assert_eq!(cuSurfRefSetArray(s, sa, 0), 0);
        assert_eq!(cuArrayDestroy(sa), 0);
        let mut got = 0xa5 as CUarray;
        assert_eq!(cuSurfRefGetArray(&mut got, s), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(got, 0xa5 as CUarray, "`the destroyed array: untouched`");
        let t = texref(m, c"arr_tex");
        let mm = mipmapped_of(4, CU_AD_FORMAT_FLOAT, 1, 2);
        assert_eq!(cuTexRefSetMipmappedArray(t, mm, CU_TRSA_OVERRIDE_FORMAT), 0);
        assert_eq!(cuMipmappedArrayDestroy(mm), 0);
        let mut gm = 0xa5 as CUmipmappedArray;
        assert_eq!(
            cuTexRefGetMipmappedArray(&mut gm, t),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            gm, 0xa5 as CUmipmappedArray,
            "`the destroyed mipmapped array: untouched`"
        );
        assert_eq!(sample(0.5, 0.5), 0.0, "`(0.5, 0.5) -> 0`");
        // ---- mipmap-level-as-array: a mipmapped array's level given to cuTexRefSetArray
        // is taken (CUDA_SUCCESS) and the reference stays bound to the mipmapped array.
        let mm = mipmapped_of(4, CU_AD_FORMAT_FLOAT, 1, 2);
        assert_eq!(cuTexRefSetMipmappedArray(t, mm, CU_TRSA_OVERRIDE_FORMAT), 0);
        let mut level0: CUarray = null_mut();
        assert_eq!(cuMipmappedArrayGetLevel(&mut level0, mm, 0), 0);
        assert_eq!(cuTexRefSetArray(t, level0, CU_TRSA_OVERRIDE_FORMAT), 0);
        assert_eq!(cuTexRefGetArray(&mut got, t), CUDA_ERROR_INVALID_VALUE);
        let mut bound: CUmipmappedArray = null_mut();
        assert_eq!(cuTexRefGetMipmappedArray(&mut bound, t), 0);
        assert_eq!(bound, mm, "`the mipmapped array: yes`");
        // mipmap-level-reads: its level 1 is bound as an array, the mipmapped array let go.
        let mut level1: CUarray = null_mut();
        assert_eq!(cuMipmappedArrayGetLevel(&mut level1, mm, 1), 0);
        assert_eq!(cuTexRefSetArray(t, level1, CU_TRSA_OVERRIDE_FORMAT), 0);
        assert_eq!(cuTexRefGetArray(&mut got, t), 0);
        assert_eq!(got, level1, "`the level`");
        assert_eq!(
            cuTexRefGetMipmappedArray(&mut bound, t),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuMipmappedArrayDestroy(mm), 0);
        assert_eq!(cuTexRefGetArray(&mut got, t), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(sample(0.5, 0.5), 0.0);
        assert_eq!(cuModuleUnload(m), 0);

        // ---- mipmap-setters: CU_TRSF_SEAMLESS_CUBEMAP (0x40) refused, the flags kept;
        // cuTexRefSetMipmappedArray takes Flags 0 and keeps the reference's format (float
        // x1 over a u8 x4 mipmapped array), refuses 2, and OVERRIDE_FORMAT takes the array's.
        let m = load(KERNELS);
        let t = texref(m, c"arr_tex");
        let mut flags = 0u32;
        assert_eq!(cuTexRefSetFlags(t, 0x20), 0);
        for refused in [0x40, 0x100, 0x8000_0000] {
            assert_eq!(
                cuTexRefSetFlags(t, refused),
                CUDA_ERROR_INVALID_VALUE,
                "`set flags {refused:#x}`"
            );
            assert_eq!(cuTexRefGetFlags(&mut flags, t), 0);
            assert_eq!(flags, 0x20, "`reads back 0x20`");
        }
        assert_eq!(cuTexRefSetFlags(t, 0), 0);
        let mm = mipmapped_of(4, CU_AD_FORMAT_UNSIGNED_INT8, 4, 3);
        let (mut format, mut channels) = (0, 0);
        assert_eq!(
            cuTexRefSetMipmappedArray(t, mm, 0),
            0,
            "`flags 0 = CUDA_SUCCESS`"
        );
        assert_eq!(cuTexRefGetFormat(&mut format, &mut channels, t), 0);
        assert_eq!(
            (format, channels),
            (CU_AD_FORMAT_FLOAT, 1),
            "`format 0x20 channels 1`"
        );
        let mut gm: CUmipmappedArray = null_mut();
        assert_eq!(cuTexRefGetMipmappedArray(&mut gm, t), 0);
        assert_eq!(gm, mm);
        assert_eq!(
            cuTexRefSetMipmappedArray(t, mm, 2),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuTexRefSetMipmappedArray(t, mm, CU_TRSA_OVERRIDE_FORMAT), 0);
        assert_eq!(cuTexRefGetFormat(&mut format, &mut channels, t), 0);
        assert_eq!(
            (format, channels),
            (CU_AD_FORMAT_UNSIGNED_INT8, 4),
            "`format 0x1 channels 4`"
        );
        // A plain array's handle, on which the H200 crashes (probe texrefs,
        // mipmap-setters-plain-array-crash): refused, the binding kept.
        let a = array_of(4, 2, CU_AD_FORMAT_FLOAT, 0, &texels);
        assert_eq!(
            cuTexRefSetMipmappedArray(t, a.cast(), CU_TRSA_OVERRIDE_FORMAT),
            CUDA_ERROR_INVALID_HANDLE
        );
        assert_eq!(cuTexRefGetMipmappedArray(&mut gm, t), 0);
        assert_eq!(gm, mm);
        assert_eq!(cuArrayDestroy(a), 0);
        assert_eq!(cuMipmappedArrayDestroy(mm), 0);
        assert_eq!(cuModuleUnload(m), 0);
    }
}

/// Every Set read back by its Get twin.
unsafe fn get_set_round_trips(arr: CUtexref, a: CUarray, null: *mut c_void) {
    unsafe {
        let mut got: CUarray = null_mut();
        assert_eq!(cuTexRefGetArray(&mut got, arr), 0);
        assert_eq!(got, a);
        // Bound to an array, not to memory or a mipmapped array.
        let mut at = 0u64;
        assert_eq!(
            cuTexRefGetAddress_v2(&mut at, arr),
            CUDA_ERROR_INVALID_VALUE
        );
        let mut mm: CUmipmappedArray = null_mut();
        assert_eq!(
            cuTexRefGetMipmappedArray(&mut mm, arr),
            CUDA_ERROR_INVALID_VALUE
        );
        // SetArray with CU_TRSA_OVERRIDE_FORMAT: the reference has the array's format.
        let (mut format, mut channels) = (0, 0);
        assert_eq!(cuTexRefGetFormat(&mut format, &mut channels, arr), 0);
        assert_eq!((format, channels), (CU_AD_FORMAT_FLOAT, 1));
        // cuda.h: either pointer may be NULL.
        assert_eq!(cuTexRefGetFormat(null_mut(), &mut channels, arr), 0);
        assert_eq!(cuTexRefGetFormat(&mut format, null_mut(), arr), 0);

        for dim in 0..3 {
            assert_eq!(cuTexRefSetAddressMode(arr, dim, 3 - dim), 0);
        }
        for dim in 0..3 {
            let mut am = -1;
            assert_eq!(cuTexRefGetAddressMode(&mut am, arr, dim), 0);
            assert_eq!(am, 3 - dim);
        }
        let mut fm = -1;
        assert_eq!(cuTexRefSetFilterMode(arr, 1), 0);
        assert_eq!(cuTexRefGetFilterMode(&mut fm, arr), 0);
        assert_eq!(fm, 1);
        assert_eq!(cuTexRefSetMipmapFilterMode(arr, 1), 0);
        assert_eq!(cuTexRefGetMipmapFilterMode(&mut fm, arr), 0);
        assert_eq!(fm, 1);
        let mut bias = 0.0;
        assert_eq!(cuTexRefSetMipmapLevelBias(arr, 1.5), 0);
        assert_eq!(cuTexRefGetMipmapLevelBias(&mut bias, arr), 0);
        assert_eq!(bias, 1.5);
        let (mut lo, mut hi) = (0.0, 0.0);
        assert_eq!(cuTexRefSetMipmapLevelClamp(arr, 0.5, 3.0), 0);
        assert_eq!(cuTexRefGetMipmapLevelClamp(&mut lo, &mut hi, arr), 0);
        assert_eq!((lo, hi), (0.5, 3.0));
        let mut aniso = 0;
        assert_eq!(cuTexRefSetMaxAnisotropy(arr, 8), 0);
        assert_eq!(cuTexRefGetMaxAnisotropy(&mut aniso, arr), 0);
        assert_eq!(aniso, 8);
        let mut colour = [0.25f32, 0.5, 0.75, 1.0];
        assert_eq!(cuTexRefSetBorderColor(arr, colour.as_mut_ptr()), 0);
        let mut back = [0f32; 4];
        assert_eq!(cuTexRefGetBorderColor(back.as_mut_ptr(), arr), 0);
        assert_eq!(back, colour);
        let mut flags = 0;
        let all = CU_TRSF_READ_AS_INTEGER | CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_SRGB | 0x20;
        assert_eq!(cuTexRefSetFlags(arr, all), 0);
        assert_eq!(cuTexRefGetFlags(&mut flags, arr), 0);
        assert_eq!(flags, all);

        // cuTexRefCreate's reference: its own state, destroyed by cuTexRefDestroy; a
        // module's stays with its module (cuda.h), the call succeeding as on the H200
        // (probe texrefs, destroy-module-texref).
        let mut made: CUtexref = null_mut();
        assert_eq!(cuTexRefCreate(&mut made), 0);
        assert_ne!(made, arr);
        assert_eq!(cuTexRefSetFilterMode(made, 1), 0);
        assert_eq!(cuTexRefGetFilterMode(&mut fm, made), 0);
        assert_eq!(fm, 1);
        assert_eq!(cuTexRefDestroy(made), 0);
        assert_eq!(cuTexRefDestroy(arr), 0);
        assert_eq!(
            cuTexRefGetFilterMode(&mut fm, arr),
            0,
            "the module's lives on"
        );
        let _ = null;
    }
}

/// The refusals cuda.h documents (CUDA_ERROR_INVALID_VALUE for each) where the H200
/// makes them too.
unsafe fn errors(m: CUmodule, lin: CUtexref, s: CUsurfref, mem: u64) {
    unsafe {
        let (mut format, mut channels) = (0, 0);
        // A channel count an element cannot have.
        assert_eq!(
            cuTexRefSetFormat(lin, CU_AD_FORMAT_FLOAT, 3),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuTexRefGetFormat(&mut format, &mut channels, lin), 0);
        assert_eq!(
            (format, channels),
            (CU_AD_FORMAT_UNSIGNED_INT32, 1),
            "a refused format leaves the last one"
        );
        assert_eq!(cuTexRefSetAddressMode(lin, 3, 0), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(cuTexRefSetAddressMode(lin, 0, 4), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(
            cuTexRefSetMipmapFilterMode(lin, 2),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuTexRefSetFlags(lin, CU_TRSF_SRGB), 0);
        assert_eq!(cuTexRefSetFlags(lin, 0x100), CUDA_ERROR_INVALID_VALUE);
        // CU_TRSA_OVERRIDE_FORMAT is SetArray's only flag.
        let a = array_of(4, 1, CU_AD_FORMAT_FLOAT, 0, &[0; 4]);
        assert_eq!(cuTexRefSetArray(lin, a, 2), CUDA_ERROR_INVALID_VALUE);
        // SetAddress2D: dptr aligned to the texture alignment, the pitch to the pitch
        // alignment (cuda.h), read from the device's attributes.
        let (mut align, mut pitch_align) = (0, 0);
        assert_eq!(cuDeviceGetAttribute(&mut align, 14, 0), 0);
        assert_eq!(cuDeviceGetAttribute(&mut pitch_align, 51, 0), 0);
        let (align, pitch_align) = (align as u64, pitch_align as usize);
        let desc = CUDA_ARRAY_DESCRIPTOR {
            width: 4,
            height: 2,
            format: CU_AD_FORMAT_FLOAT,
            num_channels: 1,
        };
        assert_eq!(
            cuTexRefSetAddress2D_v3(lin, &desc, mem + align / 2, pitch_align),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuTexRefSetAddress2D_v3(lin, &desc, mem, pitch_align + 4),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuTexRefSetAddress2D_v3(lin, &desc, mem, pitch_align), 0);
        // The descriptor's format is the reference's; SetFormat may follow (cuda.h says
        // it cannot; the H200 takes it: probe texrefs, format-rules).
        assert_eq!(cuTexRefGetFormat(&mut format, &mut channels, lin), 0);
        assert_eq!((format, channels), (CU_AD_FORMAT_FLOAT, 1));
        assert_eq!(cuTexRefSetFormat(lin, CU_AD_FORMAT_UNSIGNED_INT32, 1), 0);
        assert_eq!(cuTexRefGetFormat(&mut format, &mut channels, lin), 0);
        assert_eq!((format, channels), (CU_AD_FORMAT_UNSIGNED_INT32, 1));
        // A surface reference's handle is not a texture reference's.
        assert_eq!(
            cuTexRefSetFilterMode(s as CUtexref, 0),
            CUDA_ERROR_INVALID_VALUE
        );
        let mut t: CUtexref = null_mut();
        assert_eq!(
            cuModuleGetTexRef(null_mut(), m, c"lin_tex".as_ptr()),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuModuleGetTexRef(&mut t, m, std::ptr::null()),
            CUDA_ERROR_INVALID_VALUE
        );
        // Address 0 is bound and read back, as on the H200 (probe texrefs, linear-offset).
        let mut offset = usize::MAX;
        assert_eq!(cuTexRefSetAddress_v2(&mut offset, lin, 0, 64), 0);
        let mut at = u64::MAX;
        assert_eq!(cuTexRefGetAddress_v2(&mut at, lin), 0);
        assert_eq!((offset, at), (0, 0));
    }
}

/// What the H200 answered where cuda.h says otherwise or nothing (probe api_gaps3, section
/// texture-references, clients/probes/goldens/NVIDIA_H200-580.159.04/api_gaps3.txt).
unsafe fn as_the_h200_answers(m: CUmodule, mem: u64) {
    unsafe {
        let mut t: CUtexref = null_mut();
        assert_eq!(cuTexRefCreate(&mut t), 0);
        // Bound to nothing: the address is written 0 with CUDA_ERROR_INVALID_VALUE; the
        // array is left as it was.
        let mut at = u64::MAX;
        assert_eq!(cuTexRefGetAddress_v2(&mut at, t), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(at, 0, "`created: get address`: a = zero");
        let mut got = 0xa5 as CUarray;
        assert_eq!(cuTexRefGetArray(&mut got, t), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(got, 0xa5 as CUarray, "`created: get array`: arr untouched");

        // A format cuda.h does not name and a filter mode past CUfilter_mode are taken
        // and read back; memory binds under that format.
        assert_eq!(cuTexRefSetFormat(t, 0x77, 1), 0, "`set format 0x77`");
        assert_eq!(cuTexRefSetFilterMode(t, 7), 0, "`set filter 7`");
        assert_eq!(cuTexRefSetAddress_v2(null_mut(), t, mem, 4096), 0);
        let (mut format, mut channels, mut fm) = (0, 0, 0);
        assert_eq!(cuTexRefGetFormat(&mut format, &mut channels, t), 0);
        assert_eq!(cuTexRefGetFilterMode(&mut fm, t), 0);
        assert_eq!((format, channels, fm), (0x77, 1, 7));
        assert_eq!(cuTexRefGetAddress_v2(&mut at, t), 0);
        assert_eq!(at, mem);

        // cuTexRefSetArray takes Flags 0 (cuda.h: "must be CU_TRSA_OVERRIDE_FORMAT") and
        // refuses 2; without the flag the reference keeps its own format (cuda.h's
        // definition of the flag).
        let a = array_of(4, 1, CU_AD_FORMAT_UNSIGNED_INT32, 0, &[0; 4]);
        assert_eq!(cuTexRefSetArray(t, a, 0), 0, "`set array, flags 0`");
        assert_eq!(cuTexRefGetArray(&mut got, t), 0);
        assert_eq!(got, a);
        assert_eq!(cuTexRefGetFormat(&mut format, &mut channels, t), 0);
        assert_eq!((format, channels), (0x77, 1));
        assert_eq!(cuTexRefSetArray(t, a, 2), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(cuTexRefSetArray(t, a, CU_TRSA_OVERRIDE_FORMAT), 0);
        assert_eq!(cuTexRefGetFormat(&mut format, &mut channels, t), 0);
        assert_eq!((format, channels), (CU_AD_FORMAT_UNSIGNED_INT32, 1));
        assert_eq!(cuTexRefDestroy(t), 0);

        // A NULL reference is an invalid handle.
        let mut flags = 0u32;
        assert_eq!(
            cuTexRefSetFormat(null_mut(), CU_AD_FORMAT_FLOAT, 1),
            CUDA_ERROR_INVALID_HANDLE
        );
        assert_eq!(
            cuTexRefGetFlags(&mut flags, null_mut()),
            CUDA_ERROR_INVALID_HANDLE
        );
        assert_eq!(cuTexRefDestroy(null_mut()), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(
            cuSurfRefGetArray(&mut got, null_mut()),
            CUDA_ERROR_INVALID_HANDLE
        );

        // cuParamSetTexRef is refused.
        let tr = texref(m, c"arr_tex");
        assert_eq!(
            cuParamSetTexRef(function(m, c"read_array"), -1, tr),
            CUDA_ERROR_INVALID_VALUE,
            "`param set texref`"
        );
    }
}
