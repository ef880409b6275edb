//! `tex` and `tld4` with an explicit sampler (independent texturing mode: `.target ...,
//! texmode_independent`, module-scope `.samplerref`s with initialisers) and `tex`'s f16
//! destinations (`.v4.f16`, `.v2.f16x2`). nvcc writes neither form from C++, so the
//! kernels are PTX written here; ptxas 13.0 (-arch=sm_90) assembles each of them, and
//! refuses what the load-error cases below refuse (a `.samplerref` in unified mode, a
//! `tex` without a sampler in independent mode). Expectations follow the PTX ISA's
//! sampler properties: the sampler's filter and address modes replace the texture's,
//! `force_unnormalized_coords` makes normalized coordinates unnormalized.

mod common;
use common::images::ImageMemory;
use common::*;
use cumock_ptx::{
    run, AddressMode, ChannelKind, Engine, FaultKind, Format, Image, LoadErrorKind, Module,
    Sampler, Storage, Texels, TextureObject,
};
use std::sync::Arc;

fn image(format: Format, w: u64, h: u64, bytes: &[u8]) -> Image {
    let t = Texels::zeroed(bytes.len()).unwrap();
    assert!(t.write(0, bytes));
    let row = w * format.texel_bytes();
    Image {
        format,
        width: w,
        height: h,
        depth: 1,
        layered: false,
        cubemap: false,
        extent_as_made: [w, h, 0],
        row_pitch: row,
        slice_pitch: row * h,
        storage: Storage::Array(Arc::new(t)),
    }
}

fn texture(img: Image, normalized: bool, mode: AddressMode) -> Arc<TextureObject> {
    Arc::new(TextureObject {
        levels: Vec::new(),
        image: img,
        sampler: Sampler {
            address: [mode; 3],
            linear: false,
            normalized_coords: normalized,
            read_normalized: false,
            border: [0.0; 4],
            mipmap: Default::default(),
            seamless_cubemap: false,
            srgb: false,
        },
    })
}

const F32X1: Format = Format {
    kind: ChannelKind::Float,
    bits: 32,
    channels: 1,
};

const INDEPENDENT: &str = r#"
.version 8.0
.target sm_90, texmode_independent
.address_size 64
.global .samplerref lin = { filter_mode = linear, addr_mode_0 = clamp_to_edge, addr_mode_1 = clamp_to_edge };
.global .samplerref bord = { addr_mode_0 = clamp_to_border, addr_mode_1 = clamp_to_border, filter_mode = nearest };
.global .samplerref unnorm = { force_unnormalized_coords = 1 };
.visible .entry indep(.param .u64 t, .param .u64 t2, .param .u64 out)
{
  .reg .f32 %f<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [t];
  ld.param.u64 %rd2, [t2];
  ld.param.u64 %rd3, [out];
  tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, lin, {0f3F800000, 0f3F000000}];
  st.global.f32 [%rd3], %f1;
  tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, bord, {0f40900000, 0f3F000000}];
  st.global.f32 [%rd3+4], %f1;
  tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd2, unnorm, {0f40200000, 0f3FC00000}];
  st.global.f32 [%rd3+8], %f1;
  tld4.r.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, bord, {0f3E800000, 0f3F000000}];
  st.global.v4.f32 [%rd3+16], {%f1, %f2, %f3, %f4};
  ret;
}
"#;

#[test]
fn an_explicit_sampler_replaces_the_textures_filter_address_and_normalization() {
    let m = Module::parse(INDEPENDENT).unwrap();
    // A 4 x 4 ramp, texel (x, y) = 4y + x + 1; the texture itself samples points and
    // clamps, so each line below reads differently without its sampler.
    let ramp: Vec<f32> = (0..16).map(|i| (i + 1) as f32).collect();
    let img = image(F32X1, 4, 4, &f32s(&ramp));
    for engine in [Engine::Interp, Engine::Jit] {
        let mut mem = ImageMemory {
            mem: TestMemory::new(),
            textures: vec![
                (0x11, texture(img.clone(), false, AddressMode::Clamp)),
                (0x22, texture(img.clone(), true, AddressMode::Wrap)),
            ],
            surfaces: vec![],
        };
        let out = mem.mem.map(&[0u8; 32], true);
        let p = params(&m.kernels[0], &[0x11, 0x22, out]);
        let mut l = launch(1, 1, &p);
        l.engine = engine;
        run(&m, 0, &l, &mem).unwrap();
        let got = to_f32s(&mem.mem.read(out));
        // lin at (1, 0.5): halfway between texels (0, 0) and (1, 0), linearly (the
        // texture's point sampling would read 2).
        assert_eq!(got[0], 1.5, "{engine:?}");
        // bord at (4.5, 0.5): past the right edge, the border's zero (clamping: 4).
        assert_eq!(got[1], 0.0, "{engine:?}");
        // unnorm on a normalized, wrapping texture at (2.5, 1.5): texel (2, 1), as
        // unnormalized coordinates address (wrapped normalized ones would read (2, 2)).
        assert_eq!(got[2], 7.0, "{engine:?}");
        // tld4 with bord at (0.25, 0.5): the footprint's left column lies past the edge,
        // the border's (clamping would repeat column 0: 5, 5, 1, 1).
        assert_eq!(got[4..8], [0.0, 5.0, 1.0, 0.0], "{engine:?}");
    }
}

const HALVES: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry halves(.param .u64 t, .param .u64 out)
{
  .reg .b16 %h<4>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  .reg .pred %p;
  ld.param.u64 %rd1, [t];
  ld.param.u64 %rd3, [out];
  tex.2d.v4.f16.f32 {%h0, %h1, %h2, %h3}, [%rd1, {0f3F000000, 0f3F000000}];
  st.global.v4.b16 [%rd3], {%h0, %h1, %h2, %h3};
  tex.2d.v2.f16x2.f32 {%r1, %r2}|%p, [%rd1, {0f3F000000, 0f3F000000}];
  st.global.v2.b32 [%rd3+8], {%r1, %r2};
  ret;
}
"#;

#[test]
fn f16_destinations_round_each_channel_to_nearest() {
    let m = Module::parse(HALVES).unwrap();
    let f32x4 = Format {
        kind: ChannelKind::Float,
        bits: 32,
        channels: 4,
    };
    // 1/3 rounds down to 0x3555; 70000 overflows to infinity; 1e-5 is subnormal in f16
    // (167.77 units of 2^-24: 168).
    let texel = [1.0f32 / 3.0, 70000.0, -2.5, 1e-5];
    let want = [0x3555u16, 0x7c00, 0xc100, 0x00a8];
    for engine in [Engine::Interp, Engine::Jit] {
        let mut mem = ImageMemory {
            mem: TestMemory::new(),
            textures: vec![(
                7,
                texture(image(f32x4, 1, 1, &f32s(&texel)), false, AddressMode::Clamp),
            )],
            surfaces: vec![],
        };
        let out = mem.mem.map(&[0u8; 16], true);
        let p = params(&m.kernels[0], &[7, out]);
        let mut l = launch(1, 1, &p);
        l.engine = engine;
        run(&m, 0, &l, &mem).unwrap();
        let b = mem.mem.read(out);
        let h: Vec<u16> = (0..4)
            .map(|k| u16::from_le_bytes([b[2 * k], b[2 * k + 1]]))
            .collect();
        assert_eq!(h, want, "{engine:?}");
        // .f16x2: x and z in the low halves.
        let pairs = to_u32s(&b[8..16]);
        assert_eq!(
            pairs,
            [
                want[0] as u32 | (want[1] as u32) << 16,
                want[2] as u32 | (want[3] as u32) << 16
            ],
            "{engine:?}"
        );

        // A texture that reads integers has no f16 conversion the ISA defines: a fault
        // that says so.
        let u32x1 = Format {
            kind: ChannelKind::Unsigned,
            bits: 32,
            channels: 1,
        };
        mem.textures[0].1 = texture(image(u32x1, 1, 1, &[5, 0, 0, 0]), false, AddressMode::Clamp);
        let f = run(&m, 0, &l, &mem).unwrap_err();
        assert_eq!(f.kind, FaultKind::IllegalInstruction, "{f}");
        assert!(f.to_string().contains("reads integers"), "{f}");
    }
}

#[test]
fn sampler_forms_cuda_cannot_give_are_load_errors() {
    let kernel = |target: &str, decl: &str, params: &str, body: &str| {
        format!(
            ".version 8.0\n.target sm_90{target}\n.address_size 64\n{decl}\n\
             .visible .entry k(.param .u64 t{params}) {{\n.reg .f32 %f<5>;\n\
             .reg .b64 %rd<2>;\n.reg .b32 %r<3>;\nld.param.u64 %rd1, [t];\n{body}\nret;\n}}\n"
        )
    };
    let tex_s = "tex.1d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, s, {%f0}];";
    let ind = ", texmode_independent";
    let good = ".global .samplerref s = { filter_mode = linear };";
    assert!(Module::parse(&kernel(ind, good, "", tex_s)).is_ok());
    for (src, kind, why) in [
        // ptxas: "violates .target texmode_unified setting".
        (
            kernel("", good, "", "ret;"),
            LoadErrorKind::Semantic,
            "independent texturing mode",
        ),
        // ptxas: ".samplerref or .u64 register expected".
        (
            kernel(
                ind,
                good,
                "",
                "tex.1d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f0}];",
            ),
            LoadErrorKind::Semantic,
            "name a sampler",
        ),
        // ptxas takes a .u64 register as the sampler: a sampler handle, which CUDA's
        // driver never makes.
        (
            kernel(
                "",
                "",
                "",
                "tex.1d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, %rd1, {%f0}];",
            ),
            LoadErrorKind::Unsupported,
            "sampler handle in a register",
        ),
        (
            kernel(ind, "", ", .param .samplerref s", tex_s),
            LoadErrorKind::Unsupported,
            "`.samplerref` variables",
        ),
        (
            kernel(
                ind,
                ".global .samplerref s = { addr_mode_0 = clamp_ogl };",
                "",
                tex_s,
            ),
            LoadErrorKind::Unsupported,
            "clamp_ogl",
        ),
        (
            kernel(
                ind,
                ".global .samplerref s = { filter_mode = cubic };",
                "",
                tex_s,
            ),
            LoadErrorKind::Semantic,
            "not a sampler field",
        ),
        (
            kernel(ind, ".global .texref s;", "", tex_s),
            LoadErrorKind::Semantic,
            "not a `.samplerref`",
        ),
        (
            kernel(ind, ".global .texref s[2];", "", tex_s),
            LoadErrorKind::Unsupported,
            "arrays of references",
        ),
        (
            kernel("", ".global .texref r;", "", "ld.global.u32 %r1, [r];"),
            LoadErrorKind::Semantic,
            "not an address",
        ),
        (
            kernel("", "", "", "tex.1d.v2.f32.f32 {%f1, %f2}, [%rd1, {%f0}];"),
            LoadErrorKind::Semantic,
            ".v2.f16x2",
        ),
        (
            kernel("", "", "", "suld.b.1d.b32.trap {%r1}, [%rd1, s, {%r2}];"),
            LoadErrorKind::Semantic,
            "only `tex` and `tld4` take a sampler",
        ),
    ] {
        let e = Module::parse(&src).unwrap_err();
        assert_eq!(e.kind, kind, "{src}: {e}");
        assert!(e.message.contains(why), "{src}: {e}");
    }
}
