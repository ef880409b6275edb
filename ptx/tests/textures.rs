//! Texture and surface objects in kernels compiled by nvcc 13.0: `tex` in each geometry,
//! `tld4`, `suld`/`sust`, the queries, over a memory that knows a few objects, each
//! result checked against a host computation written here apart from the executor's.

mod common;
use common::images::ImageMemory;
use common::*;
use cumock_ptx::{
    run, AddressMode, ChannelKind, Engine, FaultKind, Format, Image, Module, Sampler, Storage,
    SurfaceObject, Texels, TextureObject,
};
use std::sync::Arc;

/// TestMemory plus the texture and surface objects a kernel may name.
fn array_image(format: Format, w: u64, h: u64, d: u64, layered: bool, bytes: &[u8]) -> Image {
    let t = Texels::zeroed(bytes.len()).unwrap();
    assert!(t.write(0, bytes));
    let row = w * format.texel_bytes();
    Image {
        format,
        width: w,
        height: h,
        depth: d,
        layered,
        cubemap: false,
        extent_as_made: [w, h, d],
        row_pitch: row,
        slice_pitch: row * h,
        storage: Storage::Array(Arc::new(t)),
    }
}

const F32X1: Format = Format {
    kind: ChannelKind::Float,
    bits: 32,
    channels: 1,
};

fn sampler(linear: bool, normalized: bool, mode: AddressMode) -> Sampler {
    Sampler {
        address: [mode; 3],
        linear,
        normalized_coords: normalized,
        read_normalized: false,
        border: [0.0; 4],
        mipmap: Default::default(),
        seamless_cubemap: false,
        srgb: false,
    }
}

const KERNELS: &str = r#"
#include <cuda_runtime.h>
extern "C" __global__ void sample2d(cudaTextureObject_t t, float* out, int n, float scale, float off) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n * n) out[i] = tex2D<float>(t, (i % n) * scale + off, (i / n) * scale + off);
}
extern "C" __global__ void fetch1d(cudaTextureObject_t t, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<int>(t, i * 2 - 3);
}
extern "C" __global__ void sample3d(cudaTextureObject_t t, float* out, float x, float y, float z) {
  out[threadIdx.x] = tex3D<float>(t, x + threadIdx.x, y, z);
}
extern "C" __global__ void layered(cudaTextureObject_t t, float* out, int layers) {
  int l = threadIdx.x % layers;
  out[threadIdx.x] = tex2DLayered<float>(t, 1.5f, 0.5f, l);
}
extern "C" __global__ void gather(cudaTextureObject_t t, float4* out, float x, float y) {
  out[threadIdx.x] = tex2Dgather<float4>(t, x + threadIdx.x, y, 0);
}
extern "C" __global__ void rgba(cudaTextureObject_t t, float4* out) {
  out[threadIdx.x] = tex2D<float4>(t, threadIdx.x + 0.5f, 0.5f);
}
extern "C" __global__ void double_surface(cudaSurfaceObject_t s, int w, int h) {
  int x = threadIdx.x, y = blockIdx.x;
  if (x < w && y < h) {
    float v = surf2Dread<float>(s, x * 4, y);
    surf2Dwrite(v * 2.0f + 1.0f, s, x * 4, y);
  }
}
// Texel offsets and the residency predicate have no C++ form: inline PTX, as CUTLASS-like
// code writes it. Thread t samples at (x + t, y) with offsets (ox, oy); out gets, per
// thread, tex's r and its residency predicate, then tld4.r's four texels and an
// integer-coordinate tex's r, both with the same offsets.
extern "C" __global__ void offsets(cudaTextureObject_t t, unsigned* out, int ox, int oy,
                                   float x, float y) {
  float r[4], g[4], ir[4];
  unsigned p;
  float fx = x + threadIdx.x;
  asm volatile("{\n .reg .pred q;\n"
               " tex.2d.v4.f32.f32 {%0, %1, %2, %3}|q, [%5, {%6, %7}], {%8, %9};\n"
               " selp.u32 %4, 1, 0, q;\n}"
               : "=f"(r[0]), "=f"(r[1]), "=f"(r[2]), "=f"(r[3]), "=r"(p)
               : "l"(t), "f"(fx), "f"(y), "r"(ox), "r"(oy));
  asm volatile("tld4.r.2d.v4.f32.f32 {%0, %1, %2, %3}, [%4, {%5, %6}], {%7, %8};"
               : "=f"(g[0]), "=f"(g[1]), "=f"(g[2]), "=f"(g[3])
               : "l"(t), "f"(fx), "f"(y), "r"(ox), "r"(oy));
  asm volatile("tex.2d.v4.f32.s32 {%0, %1, %2, %3}, [%4, {%5, %6}], {%7, %8};"
               : "=f"(ir[0]), "=f"(ir[1]), "=f"(ir[2]), "=f"(ir[3])
               : "l"(t), "r"((int)fx), "r"((int)y), "r"(ox), "r"(oy));
  unsigned* o = out + 7 * threadIdx.x;
  o[0] = __float_as_uint(r[0]);
  o[1] = p;
  for (int k = 0; k < 4; k++) o[2 + k] = __float_as_uint(g[k]);
  o[6] = __float_as_uint(ir[0]);
}
// sust.p (formatted stores) has no C++ form either: four values, or two, at byte x.
extern "C" __global__ void formatted(cudaSurfaceObject_t s, unsigned a, unsigned b, unsigned c,
                                     unsigned d, int x, int two) {
  if (two)
    asm volatile("sust.p.2d.v2.b32.trap [%0, {%1, %2}], {%3, %4};"
                 :: "l"(s), "r"(x), "r"(0), "r"(a), "r"(b) : "memory");
  else
    asm volatile("sust.p.2d.v4.b32.trap [%0, {%1, %2}], {%3, %4, %5, %6};"
                 :: "l"(s), "r"(x), "r"(0), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}
extern "C" __global__ void surface_oob(cudaSurfaceObject_t s, int* out, int trap) {
  if (trap) {
    out[0] = surf2Dread<int>(s, 4 * 1000, 0);
  } else {
    out[0] = surf2Dread<int>(s, 4 * 1000, 0, cudaBoundaryModeZero);
    out[1] = surf2Dread<int>(s, 4 * 1000, 0, cudaBoundaryModeClamp);
  }
}
"#;

fn module() -> Module {
    Module::parse(&ptx(KERNELS)).unwrap()
}

fn engines() -> [Engine; 2] {
    [Engine::Interp, Engine::Jit]
}

/// The H200's bilinear filter (the test's own statement of it): the coordinate less half
/// a texel rounded to 1/256 (halves up); the corner upper in both dimensions weighs A*B
/// rounded to 1/256 (halves up), the others what is left of A, B and 1; the weighted sum
/// rounded once.
fn bilinear(t: &[f32], n: usize, x: f32, y: f32) -> f32 {
    let clampi = |i: i64| i.clamp(0, n as i64 - 1) as usize;
    let q8 = |u: f32| ((u - 0.5) as f64 * 256.0 + 0.5).floor() as i64;
    let (qx, qy) = (q8(x), q8(y));
    let (i, j, a, b) = (qx >> 8, qy >> 8, qx & 255, qy & 255);
    let ab = (a * b + 128) >> 8;
    let at = |ii: i64, jj: i64| t[clampi(jj) * n + clampi(ii)] as f64;
    (((256 - a - b + ab) as f64 * at(i, j)
        + (a - ab) as f64 * at(i + 1, j)
        + (b - ab) as f64 * at(i, j + 1)
        + ab as f64 * at(i + 1, j + 1))
        / 256.0) as f32
}

#[test]
fn tex2d_point_and_linear_match_the_h200s_arithmetic() {
    let m = module();
    let k = m.kernel("sample2d").unwrap();
    let n = 16usize;
    // Small integers: every weighted sum is exact, so the bits must agree.
    let vals: Vec<f32> = (0..n * n).map(|i| ((i * 7) % 13) as f32).collect();
    for engine in engines() {
        for linear in [false, true] {
            let mut mem = ImageMemory {
                mem: TestMemory::new(),
                textures: vec![(
                    0x51,
                    Arc::new(TextureObject {
                        levels: Vec::new(),
                        image: array_image(F32X1, n as u64, n as u64, 1, false, &f32s(&vals)),
                        sampler: sampler(linear, false, AddressMode::Clamp),
                    }),
                )],
                surfaces: vec![],
            };
            let out = mem.mem.map(&vec![0u8; n * n * 4], true);
            let (scale, off) = (0.93f32, 0.3f32);
            let p = params(
                &m.kernels[k],
                &[
                    0x51,
                    out,
                    n as u64,
                    scale.to_bits() as u64,
                    off.to_bits() as u64,
                ],
            );
            let mut l = launch(2, 128, &p);
            l.engine = engine;
            run(&m, k, &l, &mem).unwrap();
            let got = to_f32s(&mem.mem.read(out));
            for (i, g) in got.iter().enumerate() {
                let (x, y) = ((i % n) as f32 * scale + off, (i / n) as f32 * scale + off);
                let want = if linear {
                    bilinear(&vals, n, x, y)
                } else {
                    let c = |u: f32| (u.floor() as i64).clamp(0, n as i64 - 1) as usize;
                    vals[c(y) * n + c(x)]
                };
                assert_eq!(
                    g.to_bits(),
                    want.to_bits(),
                    "{engine:?} linear={linear} texel {i} at ({x}, {y}): {g} vs {want}"
                );
            }
        }
    }
}

#[test]
fn tex1dfetch_reads_linear_memory_with_integer_coordinates() {
    let m = module();
    let k = m.kernel("fetch1d").unwrap();
    let n = 40usize;
    let data: Vec<u32> = (0..n as u32).map(|i| i * 1000 + 7).collect();
    let mut mem = ImageMemory {
        mem: TestMemory::new(),
        textures: vec![],
        surfaces: vec![],
    };
    let base = mem.mem.map(&u32s(&data), false);
    mem.textures.push((
        9,
        Arc::new(TextureObject {
            levels: Vec::new(),
            image: Image {
                format: Format {
                    kind: ChannelKind::Signed,
                    bits: 32,
                    channels: 1,
                },
                width: n as u64,
                height: 1,
                depth: 1,
                layered: false,
                cubemap: false,
                extent_as_made: [n as u64, 0, 0],
                row_pitch: n as u64 * 4,
                slice_pitch: n as u64 * 4,
                storage: Storage::Device(base),
            },
            sampler: sampler(false, false, AddressMode::Border),
        }),
    ));
    let out = mem.mem.map(&vec![0u8; n * 4], true);
    let p = params(&m.kernels[k], &[9, out, n as u64]);
    run(&m, k, &launch(1, 64, &p), &mem).unwrap();
    let got = to_u32s(&mem.mem.read(out));
    for (i, g) in got.iter().enumerate() {
        let x = i as i64 * 2 - 3;
        // Border: outside [0, n) reads the border colour, 0.
        let want = if (0..n as i64).contains(&x) {
            data[x as usize]
        } else {
            0
        };
        assert_eq!(*g, want, "element {i} (x = {x})");
    }
}

#[test]
fn tex3d_and_layered_read_their_slices() {
    let m = module();
    let (w, h, d) = (4u64, 3u64, 5u64);
    let vals: Vec<f32> = (0..w * h * d).map(|i| i as f32).collect();
    let mut mem = ImageMemory {
        mem: TestMemory::new(),
        textures: vec![
            (
                1,
                Arc::new(TextureObject {
                    levels: Vec::new(),
                    image: array_image(F32X1, w, h, d, false, &f32s(&vals)),
                    sampler: sampler(false, false, AddressMode::Clamp),
                }),
            ),
            (
                2,
                Arc::new(TextureObject {
                    levels: Vec::new(),
                    image: array_image(F32X1, w, h, d, true, &f32s(&vals)),
                    sampler: sampler(false, false, AddressMode::Clamp),
                }),
            ),
        ],
        surfaces: vec![],
    };
    let out = mem.mem.map(&[0u8; 32 * 4], true);
    let k = m.kernel("sample3d").unwrap();
    let p = params(
        &m.kernels[k],
        &[
            1,
            out,
            0.5f32.to_bits() as u64,
            2.5f32.to_bits() as u64,
            3.5f32.to_bits() as u64,
        ],
    );
    run(&m, k, &launch(1, 8, &p), &mem).unwrap();
    let got = to_f32s(&mem.mem.read(out));
    for (x, g) in got.iter().take(8).enumerate() {
        let xi = (x as u64).min(w - 1);
        assert_eq!(*g, vals[(3 * h * w + 2 * w + xi) as usize], "x = {x}");
    }
    let k = m.kernel("layered").unwrap();
    let p = params(&m.kernels[k], &[2, out, d]);
    run(&m, k, &launch(1, 10, &p), &mem).unwrap();
    let got = to_f32s(&mem.mem.read(out));
    for (t, g) in got.iter().take(10).enumerate() {
        let layer = t as u64 % d;
        assert_eq!(*g, vals[(layer * w * h + 1) as usize], "thread {t}");
    }
}

#[test]
fn gather_and_four_channel_normalized_reads() {
    let m = module();
    let n = 4u64;
    let vals: Vec<f32> = (0..n * n).map(|i| i as f32 * 10.0).collect();
    let rgba: Vec<u8> = (0..n * 4).map(|i| (i * 17) as u8).collect();
    let mut norm = sampler(false, false, AddressMode::Clamp);
    norm.read_normalized = true;
    let mut mem = ImageMemory {
        mem: TestMemory::new(),
        textures: vec![
            (
                3,
                Arc::new(TextureObject {
                    levels: Vec::new(),
                    image: array_image(F32X1, n, n, 1, false, &f32s(&vals)),
                    sampler: sampler(false, false, AddressMode::Clamp),
                }),
            ),
            (
                4,
                Arc::new(TextureObject {
                    levels: Vec::new(),
                    image: array_image(
                        Format {
                            kind: ChannelKind::Unsigned,
                            bits: 8,
                            channels: 4,
                        },
                        n,
                        1,
                        1,
                        false,
                        &rgba,
                    ),
                    sampler: norm,
                }),
            ),
        ],
        surfaces: vec![],
    };
    let out = mem.mem.map(&[0u8; 16 * 4], true);
    let k = m.kernel("gather").unwrap();
    let p = params(
        &m.kernels[k],
        &[3, out, 1.0f32.to_bits() as u64, 2.0f32.to_bits() as u64],
    );
    run(&m, k, &launch(1, 2, &p), &mem).unwrap();
    let got = to_f32s(&mem.mem.read(out));
    // At (1 + t, 2): i = t, j = 1; lower left (i, j+1), lower right, upper right, upper left.
    for t in 0..2u64 {
        let v = |x: u64, y: u64| vals[(y * n + x) as usize];
        let want = [v(t, 2), v(t + 1, 2), v(t + 1, 1), v(t, 1)];
        assert_eq!(
            &got[t as usize * 4..t as usize * 4 + 4],
            &want,
            "thread {t}"
        );
    }
    let k = m.kernel("rgba").unwrap();
    let p = params(&m.kernels[k], &[4, out]);
    run(&m, k, &launch(1, 4, &p), &mem).unwrap();
    let got = to_f32s(&mem.mem.read(out));
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, rgba[i] as f32 / 255.0, "channel {i}");
    }
}

/// CU_TRSF_SRGB: an 8-bit unsigned texel read as normalized floats is decoded from sRGB
/// (IEC 61966-2-1's inverse transfer function) in red, green and blue, to 8 significant
/// bits as the H200 reads it (probe texel_formats, srgb-u8), values n up to 12 on the
/// H200's own linear segment, 20n/65536; alpha is not.
#[test]
fn srgb_reads_decode_colour_channels() {
    let m = module();
    let rgba: Vec<u8> = vec![0, 10, 128, 255, 200, 255, 1, 64];
    let mut srgb = sampler(false, false, AddressMode::Clamp);
    srgb.read_normalized = true;
    srgb.srgb = true;
    let format = Format {
        kind: ChannelKind::Unsigned,
        bits: 8,
        channels: 4,
    };
    let mut mem = ImageMemory {
        mem: TestMemory::new(),
        textures: vec![(
            4,
            Arc::new(TextureObject {
                levels: Vec::new(),
                image: array_image(format, 2, 1, 1, false, &rgba),
                sampler: srgb,
            }),
        )],
        surfaces: vec![],
    };
    let out = mem.mem.map(&[0u8; 16 * 2], true);
    let k = m.kernel("rgba").unwrap();
    let p = params(&m.kernels[k], &[4, out]);
    run(&m, k, &launch(1, 2, &p), &mem).unwrap();
    let got = to_f32s(&mem.mem.read(out));
    let decode = |c: f32| {
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    for (i, g) in got.iter().enumerate() {
        let c = rgba[i] as f32 / 255.0;
        if i % 4 == 3 {
            assert_eq!(*g, c, "alpha {i}");
            continue;
        }
        if rgba[i] <= 12 {
            assert_eq!(*g, rgba[i] as f32 * 20.0 / 65536.0, "channel {i}");
            continue;
        }
        let want = decode(c);
        assert_eq!(
            g.to_bits() & 0xffff,
            0,
            "channel {i}: {g} has 8 significant bits"
        );
        assert!(
            (g - want).abs() <= want / 256.0,
            "channel {i}: {g} != {want}"
        );
    }
}

/// `tex` and `tld4` with texel offsets (operand e) and `tex`'s residency predicate:
/// the offsets move the texel indices the coordinates give before the address mode
/// (clamp here, and wrap of normalized coordinates), tex's from a four-bit field and
/// tld4's from a six-bit one; p is true (no sparse textures).
#[test]
fn texel_offsets_move_the_indices_and_every_texel_is_resident() {
    let m = module();
    let k = m.kernel("offsets").unwrap();
    let n = 8usize;
    let vals: Vec<f32> = (0..n * n).map(|i| ((i * 5) % 17) as f32).collect();
    let at = |i: i64, j: i64, wrap: bool| {
        let fold = |v: i64| {
            if wrap {
                v.rem_euclid(n as i64) as usize
            } else {
                v.clamp(0, n as i64 - 1) as usize
            }
        };
        vals[fold(j) * n + fold(i)]
    };
    // (ox, oy) as the registers hold them; the last pairs lie outside tex's -8..=7 and
    // are taken as its low four bits, signed (9 -> -7, -9 -> 7), while tld4's field is
    // six bits (9 and -9 as they are, 100 -> -28), as the H200 recorded (runtime program
    // texture_offsets).
    for (ox, oy) in [(0i32, 0i32), (1, -1), (-8, 7), (3, 2), (9, -9), (100, 1)] {
        let eff = |v: i32| ((v << 28) >> 28) as i64;
        let (ex, ey) = (eff(ox), eff(oy));
        let eff4 = |v: i32| ((v << 26) >> 26) as i64;
        let (gx, gy) = (eff4(ox), eff4(oy));
        for engine in engines() {
            for (linear, normalized) in [(false, false), (true, false), (false, true)] {
                let mode = if normalized {
                    AddressMode::Wrap
                } else {
                    AddressMode::Clamp
                };
                let mut mem = ImageMemory {
                    mem: TestMemory::new(),
                    textures: vec![(
                        9,
                        Arc::new(TextureObject {
                            levels: Vec::new(),
                            image: array_image(F32X1, n as u64, n as u64, 1, false, &f32s(&vals)),
                            sampler: sampler(linear, normalized, mode),
                        }),
                    )],
                    surfaces: vec![],
                };
                let threads = 6usize;
                let out = mem.mem.map(&vec![0u8; threads * 7 * 4], true);
                // Normalized: x = (i + 0.5) / n for texel i; else texel units.
                let (x0, y0) = if normalized {
                    (1.5f32 / n as f32, 2.5f32 / n as f32)
                } else {
                    (1.3f32, 2.7f32)
                };
                let p = params(
                    &m.kernels[k],
                    &[
                        9,
                        out,
                        ox as u32 as u64,
                        oy as u32 as u64,
                        x0.to_bits() as u64,
                        y0.to_bits() as u64,
                    ],
                );
                let mut l = launch(1, threads as u32, &p);
                l.engine = engine;
                run(&m, k, &l, &mem).unwrap();
                let got = to_u32s(&mem.mem.read(out));
                let what = format!(
                    "{engine:?} linear={linear} normalized={normalized} offsets ({ox}, {oy})"
                );
                for t in 0..threads {
                    let o = &got[7 * t..7 * t + 7];
                    let x = x0 + t as f32;
                    // Texel-space coordinates (normalized ones fit 2^-21 exactly here).
                    let (u, v) = if normalized {
                        (x * n as f32, y0 * n as f32)
                    } else {
                        (x, y0)
                    };
                    let want = if linear {
                        bilinear(&vals, n, u + ex as f32, v + ey as f32)
                    } else {
                        at(u.floor() as i64 + ex, v.floor() as i64 + ey, normalized)
                    };
                    assert_eq!(f32::from_bits(o[0]), want, "{what}: tex, thread {t}");
                    assert_eq!(o[1], 1, "{what}: residency, thread {t}");
                    // The gather's footprint: (i, j) from the coordinate less half a
                    // texel, then counter-clockwise from the lower left.
                    let i = (u - 0.5).floor() as i64 + gx;
                    let j = (v - 0.5).floor() as i64 + gy;
                    let wrap = normalized;
                    let footprint = [
                        at(i, j + 1, wrap),
                        at(i + 1, j + 1, wrap),
                        at(i + 1, j, wrap),
                        at(i, j, wrap),
                    ];
                    let gathered: Vec<f32> = o[2..6].iter().map(|b| f32::from_bits(*b)).collect();
                    assert_eq!(gathered, footprint, "{what}: tld4, thread {t}");
                    // Integer coordinates read the texel (clamped: integer fetches do not
                    // wrap), the offsets added.
                    let (xi, yi) = (x as i64, y0 as i64);
                    assert_eq!(
                        f32::from_bits(o[6]),
                        at(xi + ex, yi + ey, false),
                        "{what}: integer tex, thread {t}"
                    );
                }
            }
        }
    }
}

/// `sust.p`: values converted to the surface's format (f32 to f16 toward zero, integers
/// saturated to narrower channels), R first, values past the channels ignored, channels
/// past the values zero, as the H200 recorded (runtime program surface_formatted); x a
/// sample (texel) index.
#[test]
fn formatted_surface_stores_convert_to_the_format() {
    let m = module();
    let k = m.kernel("formatted").unwrap();
    let fmt = |kind, bits, channels| Format {
        kind,
        bits,
        channels,
    };
    // (format, the values, two or four, x, what the surface's 2 texels hold after),
    // texels prefilled with 0xab.
    type Case = (Format, [u32; 4], bool, u64, Vec<u8>);
    let cases: Vec<Case> = vec![
        (
            fmt(ChannelKind::Unsigned, 8, 4),
            [300, 255, 7, u32::MAX],
            false,
            1,
            vec![0xab, 0xab, 0xab, 0xab, 255, 255, 7, 255],
        ),
        (
            fmt(ChannelKind::Signed, 16, 2),
            [(-40000i32) as u32, 12345, 9, 9],
            false,
            0,
            [(-32768i16).to_le_bytes(), 12345i16.to_le_bytes()]
                .concat()
                .into_iter()
                .chain([0xab; 4])
                .collect(),
        ),
        (
            fmt(ChannelKind::Float, 16, 4),
            [1.0f32.to_bits(), 65520.0f32.to_bits(), 0, 0],
            true,
            1,
            // 65520 toward zero is 65504 (0x7bff); the channels past the values zero.
            [0xab; 8]
                .into_iter()
                .chain([0x00, 0x3c, 0xff, 0x7b, 0x00, 0x00, 0x00, 0x00])
                .collect(),
        ),
        (
            fmt(ChannelKind::Float, 32, 1),
            [1.5f32.to_bits(), 7, 7, 7],
            false,
            1,
            [0xab; 4].into_iter().chain(1.5f32.to_le_bytes()).collect(),
        ),
    ];
    for engine in engines() {
        for (format, v, two, x, want) in &cases {
            let bytes = vec![0xabu8; 2 * format.texel_bytes() as usize];
            let img = array_image(*format, 2, 1, 1, false, &bytes);
            let Storage::Array(texels) = img.storage.clone() else {
                unreachable!()
            };
            let mem = ImageMemory {
                mem: TestMemory::new(),
                textures: vec![],
                surfaces: vec![(0x42, Arc::new(SurfaceObject { image: img }))],
            };
            let p = params(
                &m.kernels[k],
                &[
                    0x42,
                    v[0] as u64,
                    v[1] as u64,
                    v[2] as u64,
                    v[3] as u64,
                    *x,
                    *two as u64,
                ],
            );
            let mut l = launch(1, 1, &p);
            l.engine = engine;
            run(&m, k, &l, &mem).unwrap();
            let mut got = vec![0u8; bytes.len()];
            assert!(texels.read(0, &mut got));
            assert_eq!(&got, want, "{engine:?} {format:?}");
        }
        // x is a sample index (the PTX ISA; a byte offset only for sust.b): 2 lies past
        // the 2-texel surface, a fault under `.trap`.
        let img = array_image(fmt(ChannelKind::Unsigned, 8, 4), 2, 1, 1, false, &[0; 8]);
        let mem = ImageMemory {
            mem: TestMemory::new(),
            textures: vec![],
            surfaces: vec![(0x42, Arc::new(SurfaceObject { image: img }))],
        };
        let p = params(&m.kernels[k], &[0x42, 1, 2, 3, 4, 2, 0]);
        let mut l = launch(1, 1, &p);
        l.engine = engine;
        let f = run(&m, k, &l, &mem).unwrap_err();
        assert_eq!(f.kind, FaultKind::IllegalAddress, "{f}");
    }
}

#[test]
fn surfaces_read_and_write_with_byte_x_and_bounds_modes() {
    let m = module();
    let (w, h) = (5u64, 3u64);
    let vals: Vec<f32> = (0..w * h).map(|i| i as f32).collect();
    let img = array_image(F32X1, w, h, 1, false, &f32s(&vals));
    let Storage::Array(texels) = img.storage.clone() else {
        unreachable!()
    };
    let mut mem = ImageMemory {
        mem: TestMemory::new(),
        textures: vec![],
        surfaces: vec![(0x77, Arc::new(SurfaceObject { image: img }))],
    };
    let k = m.kernel("double_surface").unwrap();
    let p = params(&m.kernels[k], &[0x77, w, h]);
    run(&m, k, &launch(h as u32, 32, &p), &mem).unwrap();
    let mut b = vec![0u8; (w * h * 4) as usize];
    assert!(texels.read(0, &mut b));
    let want: Vec<f32> = vals.iter().map(|v| v * 2.0 + 1.0).collect();
    assert_eq!(to_f32s(&b), want);

    let out = mem.mem.map(&[0xffu8; 8], true);
    let k = m.kernel("surface_oob").unwrap();
    let p = params(&m.kernels[k], &[0x77, out, 0]);
    run(&m, k, &launch(1, 1, &p), &mem).unwrap();
    let got = to_u32s(&mem.mem.read(out));
    // `.zero` read 0; `.clamp` read the row's last element.
    assert_eq!(got, [0, want[(w - 1) as usize].to_bits()]);
    let p = params(&m.kernels[k], &[0x77, out, 1]);
    let f = run(&m, k, &launch(1, 1, &p), &mem).unwrap_err();
    assert_eq!(f.kind, FaultKind::IllegalAddress, "{f}");
    assert!(f.instruction.starts_with("suld.b.2d.b32.trap"), "{f}");

    mem.surfaces.clear();
    let f = run(&m, k, &launch(1, 1, &p), &mem).unwrap_err();
    assert!(f.detail.contains("not a surface object"), "{f}");
}

/// Each operand computed per lane in the compiled run just before the texture or
/// surface instruction that alone reads it: the run must leave it in the register file
/// for the sampling code (the instructions' reads, `ImageOp::sources`, keep it live), so
/// both engines give the same bits.
const LIVE_SOURCES: &str = r#"
#include <cuda_runtime.h>
extern "C" __global__ void live_sources(cudaTextureObject_t t, cudaSurfaceObject_t s, unsigned* out,
                                        float x, float y, int k) {
  unsigned i = threadIdx.x;
  unsigned* o = out + 8 * i;
  // First, so that the block's span cache holds `out` before the runs below (a miss
  // sends a run back to the interpreter, which would write the operands itself).
  *(volatile unsigned*)&o[7] = 7;
  float fx = x * 0.5f + i;
  o[0] = __float_as_uint(tex2D<float>(t, fx, y + 0.25f * i));
  o[1] = __float_as_uint(tex2DLod<float>(t, fx, y, 0.375f * (i % 4) + k));
  o[2] = __float_as_uint(tex2DGrad<float>(t, fx, y, make_float2(0.75f * (i % 5), 0.0f),
                                          make_float2(0.0f, 0.5f * (i % 3))));
  unsigned w;
  asm volatile("txq.level.width.b32 %0, [%1], %2;" : "=r"(w) : "l"(t), "r"(i % 3));
  o[3] = w;
  float r, g, b, a;
  asm volatile("tex.2d.v4.f32.f32 {%0, %1, %2, %3}, [%4, {%5, %6}], {%7, %8};"
               : "=f"(r), "=f"(g), "=f"(b), "=f"(a)
               : "l"(t), "f"(fx), "f"(y), "r"((int)(i % 5) - 2), "r"((int)(i % 3) - 1));
  o[4] = __float_as_uint(r);
  surf2Dwrite((int)(i * 3 + k), s, (i % 8) * 4, (i / 8) + k);
  o[5] = (unsigned)surf2Dread<int>(s, ((i + 1) % 8) * 4, (i / 8) + k);
}
"#;

#[test]
fn compiled_runs_leave_texture_operands_in_the_registers() {
    let m = Module::parse(&ptx(LIVE_SOURCES)).unwrap();
    let k = m.kernel("live_sources").unwrap();
    // Three levels of 8x8, 4x4 and 2x2 texels, each its own values.
    let level = |n: u64, base: f32| {
        let vals: Vec<f32> = (0..n * n).map(|i| base + ((i * 7) % 11) as f32).collect();
        array_image(F32X1, n, n, 1, false, &f32s(&vals))
    };
    let mut s = sampler(true, false, AddressMode::Clamp);
    s.mipmap.linear = true;
    s.mipmap.max_clamp = 2.0;
    let texture = Arc::new(TextureObject {
        image: level(8, 0.0),
        sampler: s,
        levels: vec![level(4, 100.0), level(2, 200.0)],
    });
    let threads = 16u32;
    let mut results = Vec::new();
    // Registers outlive a launch on their host thread (`README`: registers start
    // undefined): the interpreter's launch with k = 0 leaves other values in them than
    // k = 1 computes, so an operand the compiled run failed to write would show.
    for (engine, k_param) in [(Engine::Interp, 0), (Engine::Jit, 1), (Engine::Interp, 1)] {
        let surface = Arc::new(SurfaceObject {
            image: array_image(F32X1, 8, 4, 1, false, &[0u8; 8 * 4 * 4]),
        });
        let mut mem = ImageMemory {
            mem: TestMemory::new(),
            textures: vec![(3, texture.clone())],
            surfaces: vec![(4, surface)],
        };
        let out = mem.mem.map(&vec![0u8; threads as usize * 8 * 4], true);
        let p = params(
            &m.kernels[k],
            &[
                3,
                4,
                out,
                1.75f32.to_bits() as u64,
                2.5f32.to_bits() as u64,
                k_param,
            ],
        );
        let mut l = launch(1, threads, &p);
        l.engine = engine;
        run(&m, k, &l, &mem).unwrap();
        results.push(to_u32s(&mem.mem.read(out)));
    }
    assert_eq!(results[1], results[2], "compiled vs interpreter");
    let got = &results[2];
    // The operands mattered: levels of detail and txq's level differ by lane.
    let col = |c: usize| {
        (0..threads as usize)
            .map(|t| got[8 * t + c])
            .collect::<Vec<_>>()
    };
    for c in [1, 2, 3, 4] {
        let v = col(c);
        assert!(
            v.iter().any(|x| *x != v[0]),
            "column {c} is the same in every lane: {v:?}"
        );
    }
    assert_eq!(col(3)[..3], [8, 4, 2]);
}

/// The compiled engine calls the sampling code for texture and surface instructions
/// (`JitInfo::texture`) instead of counting them with what it runs through the
/// interpreter's code; the results the other tests compare under both engines.
#[test]
fn compiled_kernels_call_the_sampling_code() {
    let m = module();
    for (name, images) in [("offsets", 3), ("double_surface", 2), ("sample2d", 1)] {
        let k = m.kernel(name).unwrap();
        let info = m.jit_compile(k).expect("compiles");
        assert_eq!(info.texture, images, "{name}: {info:?}");
        assert!(info.native > 0, "{name}: {info:?}");
    }
}

#[test]
fn queries_and_unsupported_forms_at_load() {
    let src = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry q(.param .u64 t, .param .u64 o) {
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [t];
  ld.param.u64 %rd2, [o];
  txq.width.b32 %r1, [%rd1];
  txq.height.b32 %r2, [%rd1];
  suq.depth.b32 %r3, [%rd1];
  st.global.v2.u32 [%rd2], {%r1, %r2};
  st.global.u32 [%rd2+8], %r3;
  ret;
}
"#;
    let m = Module::parse(src).unwrap();
    let img = array_image(F32X1, 7, 3, 2, false, &[0u8; 7 * 3 * 2 * 4]);
    let mut mem = ImageMemory {
        mem: TestMemory::new(),
        textures: vec![(
            5,
            Arc::new(TextureObject {
                levels: Vec::new(),
                image: img.clone(),
                sampler: sampler(false, false, AddressMode::Clamp),
            }),
        )],
        surfaces: vec![(5, Arc::new(SurfaceObject { image: img }))],
    };
    let out = mem.mem.map(&[0u8; 12], true);
    let p = params(&m.kernels[0], &[5, out]);
    run(&m, 0, &launch(1, 1, &p), &mem).unwrap();
    assert_eq!(to_u32s(&mem.mem.read(out)), [7, 3, 2]);

    for (form, why) in [
        (
            "tex.2dms.v4.f32.s32 {%f1, %f1, %f1, %f1}, [%rd1, {%r1, %r1, %r1, %r1}];",
            "multisample textures",
        ),
        ("suq.filter_mode.b32 %r1, [%rd1];", "only width"),
        ("suq.channel_order.b32 %r1, [%rd1];", "only width"),
        (
            "txq.level.filter_mode.b32 %r1, [%rd1], 0;",
            "txq.level queries",
        ),
    ] {
        let src = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() {{\n\
             .reg .b32 %r<2>;\n.reg .f32 %f<2>;\n.reg .b64 %rd<2>;\n{form}\nret;\n}}\n"
        );
        let e = Module::parse(&src).unwrap_err();
        assert_eq!(
            e.kind,
            cumock_ptx::LoadErrorKind::Unsupported,
            "{form}: {e}"
        );
        assert!(e.message.contains(why), "{form}: {e}");
        assert_eq!(e.line, 8, "{e}");
    }
}

/// The queries NVIDIA's JIT compiles no code for (the H200's driver finds no function
/// that asks them: ci/explore/txq_jit.c): every `txq` of a texture object but width,
/// height and depth, in the kernel or in a function it calls, marks the kernel; the
/// format queries load (as on the H200) and fault if run anyway.
#[test]
fn txq_queries_nvidia_compiles_no_code_for_mark_their_kernels() {
    let module = |query: &str| {
        format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n\
             .func (.param .b32 r) ask(.param .b64 t) {{\n.reg .b32 %q;\n.reg .b64 %s;\n\
             ld.param.b64 %s, [t];\n{query} %q, [%s];\nst.param.b32 [r], %q;\nret;\n}}\n\
             .visible .entry direct(.param .u64 t, .param .u64 o) {{\n\
             .reg .b32 %r<2>;\n.reg .b64 %rd<3>;\n\
             ld.param.u64 %rd1, [t];\nld.param.u64 %rd2, [o];\n\
             {query} %r1, [%rd1];\nst.global.u32 [%rd2], %r1;\nret;\n}}\n\
             .visible .entry through_call(.param .u64 t) {{\n\
             .reg .b32 %r<2>;\n.reg .b64 %rd<2>;\n\
             ld.param.u64 %rd1, [t];\n{{\n.param .b64 a;\n.param .b32 b;\n\
             st.param.b64 [a], %rd1;\ncall (b), ask, (a);\n}}\nret;\n}}\n\
             .visible .entry plain(.param .u64 t) {{\n\
             .reg .b32 %r<2>;\n.reg .b64 %rd<2>;\n\
             ld.param.u64 %rd1, [t];\ntxq.width.b32 %r1, [%rd1];\nret;\n}}\n"
        )
    };
    for q in ["width", "height", "depth"] {
        let m = Module::parse(&module(&format!("txq.{q}.b32"))).unwrap();
        for k in &m.kernels {
            assert_eq!(k.nvidia_jit_refuses, None, "txq.{q}: {}", k.name);
        }
    }
    let refused = [
        "num_mipmap_levels",
        "array_size",
        "filter_mode",
        "addr_mode_0",
        "addr_mode_1",
        "addr_mode_2",
        "normalized_coords",
        "force_unnormalized_coords",
        "channel_data_type",
        "channel_order",
        "num_samples",
    ];
    for q in refused {
        let m = Module::parse(&module(&format!("txq.{q}.b32"))).unwrap();
        let why = |name: &str| {
            let k = &m.kernels[m.kernel(name).unwrap()];
            k.nvidia_jit_refuses.clone().unwrap_or_default()
        };
        assert!(
            why("direct").contains(&format!("txq.{q}.b32")),
            "{q}: {}",
            why("direct")
        );
        assert!(why("direct").contains("line 17:"), "{q}: {}", why("direct"));
        // The H200 found and loaded a kernel calling such a txq in a `.func`
        // (ci/explore/txq_module.c): only a kernel's own body marks it.
        assert_eq!(why("through_call"), "", "{q}");
        assert_eq!(why("plain"), "", "{q}");
    }
    // txq.level's sizes were not asked of the H200: they stay emulated, unmarked.
    let m = Module::parse(
        &module("txq.level.width.b32")
            .replace("[%s];", "[%s], 0;")
            .replace("[%rd1];\nst", "[%rd1], 0;\nst"),
    )
    .unwrap();
    assert_eq!(m.kernels[0].nvidia_jit_refuses, None);

    // Run anyway, a format query faults: its values are not emulated.
    let m = Module::parse(&module("txq.channel_order.b32")).unwrap();
    let k = m.kernel("direct").unwrap();
    let img = array_image(F32X1, 4, 4, 1, false, &[0u8; 4 * 4 * 4]);
    for engine in engines() {
        let mut mem = ImageMemory {
            mem: TestMemory::new(),
            textures: vec![(
                3,
                Arc::new(TextureObject {
                    levels: Vec::new(),
                    image: img.clone(),
                    sampler: sampler(false, false, AddressMode::Clamp),
                }),
            )],
            surfaces: Vec::new(),
        };
        let out = mem.mem.map(&[0u8; 4], true);
        let p = params(&m.kernels[k], &[3, out]);
        let mut l = launch(1, 1, &p);
        l.engine = engine;
        let f = run(&m, k, &l, &mem).unwrap_err();
        assert!(f.detail.contains("txq.channel_order"), "{engine:?}: {f}");
    }
}

/// `istypep` (no C++ form: inline PTX) over each lane's handle: texture 7, surface 9, and
/// neither (lanes whose handle is 0 or a stray number), under both engines. As on the H200
/// (ci/explore/istypep.c): every kind is false for every handle, texture and surface
/// objects included, since unified mode's objects are not `.texref`/`.surfref` variables.
#[test]
fn istypep_is_false_for_unified_mode_handles() {
    let src = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry kinds(.param .u64 o)
{
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [o];
    mov.u32 %r1, %tid.x;
    rem.u32 %r2, %r1, 4;
    // The handle by lane: 7, 9, 0, 1234.
    setp.eq.u32 %p1, %r2, 0;
    selp.u64 %rd2, 7, 9, %p1;
    setp.eq.u32 %p1, %r2, 2;
    selp.u64 %rd2, 0, %rd2, %p1;
    setp.eq.u32 %p1, %r2, 3;
    selp.u64 %rd2, 1234, %rd2, %p1;
    istypep.texref %p1, %rd2;
    istypep.surfref %p2, %rd2;
    istypep.samplerref %p3, %rd2;
    selp.u32 %r3, 1, 0, %p1;
    selp.u32 %r4, 2, 0, %p2;
    selp.u32 %r5, 4, 0, %p3;
    or.b32 %r3, %r3, %r4;
    or.b32 %r3, %r3, %r5;
    mul.wide.u32 %rd3, %r1, 4;
    add.u64 %rd4, %rd1, %rd3;
    st.global.u32 [%rd4], %r3;
    ret;
}
"#;
    let m = Module::parse(src).unwrap();
    let img = array_image(F32X1, 4, 4, 1, false, &[0u8; 4 * 4 * 4]);
    for engine in engines() {
        let mut mem = ImageMemory {
            mem: TestMemory::new(),
            textures: vec![(
                7,
                Arc::new(TextureObject {
                    levels: Vec::new(),
                    image: img.clone(),
                    sampler: sampler(false, false, AddressMode::Clamp),
                }),
            )],
            surfaces: vec![(9, Arc::new(SurfaceObject { image: img.clone() }))],
        };
        let out = mem.mem.map(&[0xffu8; 4 * 40], true);
        let p = params(&m.kernels[0], &[out]);
        let mut l = launch(1, 40, &p);
        l.engine = engine;
        run(&m, 0, &l, &mem).unwrap();
        let got = to_u32s(&mem.mem.read(out));
        let want = vec![0u32; 40];
        assert_eq!(got, want, "{engine:?}");
    }
    for (form, why) in [
        ("istypep.b64 %p1, %rd1;", "takes .texref"),
        ("istypep.texref %r1, %rd1;", "a predicate"),
    ] {
        let src = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() {{\n\
             .reg .pred %p<2>;\n.reg .b32 %r<2>;\n.reg .b64 %rd<2>;\n{form}\nret;\n}}\n"
        );
        let e = Module::parse(&src).unwrap_err();
        assert!(e.message.contains(why), "{form}: {e}");
    }
}

/// `sured.b` (no C++ form: inline PTX): atomic reductions into a surface of 4 x 5
/// 32-bit texels from 8 blocks of 64 threads, which the host runs on several threads:
/// add, signed max and min (`.clamp` moving x = 4000 to the last element), or (`.zero`
/// dropping one out of range), and a 64-bit add over two 8-byte elements of the last row.
const REDUCTIONS: &str = r#"
extern "C" __global__ void reductions(unsigned long long s) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  int x = (i % 4) * 4;
  asm volatile("sured.b.add.2d.u32.trap [%0, {%1, %2}], %3;" :: "l"(s), "r"(x), "r"(0), "r"(1u) : "memory");
  asm volatile("sured.b.max.2d.s32.trap [%0, {%1, %2}], %3;" :: "l"(s), "r"(x), "r"(1), "r"((int)i - 100) : "memory");
  asm volatile("sured.b.min.2d.s32.clamp [%0, {%1, %2}], %3;" :: "l"(s), "r"(x), "r"(2), "r"((int)i - 100) : "memory");
  asm volatile("sured.b.or.2d.b32.zero [%0, {%1, %2}], %3;" :: "l"(s), "r"(x), "r"(3), "r"(1u << (i % 32)) : "memory");
  asm volatile("sured.b.add.2d.u64.trap [%0, {%1, %2}], %3;" :: "l"(s), "r"((int)(i % 2) * 8), "r"(4), "l"(0x100000001ull) : "memory");
  if (i == 0) {
    asm volatile("sured.b.min.2d.s32.clamp [%0, {%1, %2}], %3;" :: "l"(s), "r"(4000), "r"(2), "r"(-1000) : "memory");
    asm volatile("sured.b.or.2d.b32.zero [%0, {%1, %2}], %3;" :: "l"(s), "r"(4000), "r"(3), "r"(~0u) : "memory");
  }
}
"#;

#[test]
fn sured_reduces_atomically_into_surface_elements() {
    let m = Module::parse(&ptx(REDUCTIONS)).unwrap();
    let k = m.kernel("reductions").unwrap();
    // Compiled code calls the surface code for each of the seven.
    assert_eq!(m.jit_compile(k).expect("compiles").texture, 7);
    let int = Format {
        kind: ChannelKind::Signed,
        bits: 32,
        channels: 1,
    };
    for engine in engines() {
        let mut init = [0i32; 20];
        init[4..8].copy_from_slice(&[i32::MIN; 4]);
        init[8..12].copy_from_slice(&[i32::MAX; 4]);
        let bytes: Vec<u8> = init.iter().flat_map(|v| v.to_le_bytes()).collect();
        let surface = Arc::new(SurfaceObject {
            image: array_image(int, 4, 5, 1, false, &bytes),
        });
        let mem = ImageMemory {
            mem: TestMemory::new(),
            textures: Vec::new(),
            surfaces: vec![(6, surface.clone())],
        };
        let p = params(&m.kernels[k], &[6]);
        let mut l = launch(8, 64, &p);
        l.engine = engine;
        l.host_threads = 4;
        run(&m, k, &l, &mem).unwrap();
        let Storage::Array(t) = &surface.image.storage else {
            unreachable!()
        };
        let mut out = vec![0u8; 80];
        assert!(t.read(0, &mut out));
        let got: Vec<i32> = out
            .chunks(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let what = format!("{engine:?}");
        // 512 threads, 128 per element.
        assert_eq!(got[0..4], [128; 4], "{what}: add");
        assert_eq!(got[4..8], [408, 409, 410, 411], "{what}: max");
        assert_eq!(got[8..12], [-100, -99, -98, -1000], "{what}: min, clamped");
        let or: Vec<i32> = (0..4)
            .map(|e| (0..8).fold(0u32, |a, k| a | 1 << (e + 4 * k)) as i32)
            .collect();
        assert_eq!(got[12..16], or[..], "{what}: or");
        let wide = |e: usize| got[16 + 2 * e] as u32 as u64 | (got[17 + 2 * e] as u32 as u64) << 32;
        assert_eq!(
            [wide(0), wide(1)],
            [256 * 0x1_0000_0001u64; 2],
            "{what}: 64-bit add"
        );
    }
    // The ISA's operations and types only.
    for (form, kind) in [
        (
            "sured.b.and.2d.u32.trap [%rd1, {%r1, %r1}], %r1;",
            cumock_ptx::LoadErrorKind::Semantic,
        ),
        (
            "sured.b.add.2d.s64.trap [%rd1, {%r1, %r1}], %rd1;",
            cumock_ptx::LoadErrorKind::Semantic,
        ),
        (
            "sured.b.add.a2d.u32.trap [%rd1, {%r1, %r1, %r1, %r1}], %r1;",
            cumock_ptx::LoadErrorKind::Semantic,
        ),
    ] {
        let src = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() {{\n\
             .reg .b32 %r<2>;\n.reg .b64 %rd<2>;\n{form}\nret;\n}}\n"
        );
        let e = Module::parse(&src).unwrap_err();
        assert_eq!(e.kind, kind, "{form}: {e}");
    }
}

/// `sured.p` (inline PTX): x counts samples and the data's signedness is the surface
/// format's (PTX ISA), reduced from 4 blocks of 64 threads that the host runs on several
/// threads. An s32x1 4 x 4 surface: add wrapping past 2^32, signed max and min (`.clamp`
/// moving x = 4000 to the last sample), or (`.zero` dropping x = -1); a u32x1 1D one of 8:
/// unsigned min, and; `.b64` max on u32x2 (unsigned) and min on s32x2 (signed).
const SAMPLE_REDUCTIONS: &str = r#"
extern "C" __global__ void sample_reductions(unsigned long long si, unsigned long long su,
                                             unsigned long long wu, unsigned long long ws) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  int x = i % 4, e = i % 2;
  asm volatile("sured.p.add.2d.b32.trap [%0, {%1, %2}], %3;" :: "l"(si), "r"(x), "r"(0), "r"(3u) : "memory");
  asm volatile("sured.p.max.2d.b32.trap [%0, {%1, %2}], %3;" :: "l"(si), "r"(x), "r"(1), "r"((int)i - 100) : "memory");
  asm volatile("sured.p.min.2d.b32.clamp [%0, {%1, %2}], %3;" :: "l"(si), "r"(x), "r"(2), "r"((int)i - 100) : "memory");
  asm volatile("sured.p.or.2d.b32.zero [%0, {%1, %2}], %3;" :: "l"(si), "r"(x), "r"(3), "r"(1u << (i % 32)) : "memory");
  asm volatile("sured.p.min.1d.b32.trap [%0, {%1}], %2;" :: "l"(su), "r"(x), "r"(i - 100u) : "memory");
  asm volatile("sured.p.and.1d.b32.trap [%0, {%1}], %2;" :: "l"(su), "r"(x + 4), "r"(~(1u << (i % 32))) : "memory");
  unsigned long long up = (unsigned long long)i << 32 | (255 - i);
  asm volatile("sured.p.max.1d.b64.trap [%0, {%1}], %2;" :: "l"(wu), "r"(e), "l"(up) : "memory");
  long long down = -(long long)i * 0x100000001ll;
  asm volatile("sured.p.min.1d.b64.trap [%0, {%1}], %2;" :: "l"(ws), "r"(e), "l"(down) : "memory");
  if (i == 0) {
    asm volatile("sured.p.min.2d.b32.clamp [%0, {%1, %2}], %3;" :: "l"(si), "r"(4000), "r"(2), "r"(-1000) : "memory");
    asm volatile("sured.p.or.2d.b32.zero [%0, {%1, %2}], %3;" :: "l"(si), "r"(-1), "r"(3), "r"(~0u) : "memory");
    asm volatile("sured.p.max.1d.b64.trap [%0, {%1}], %2;" :: "l"(wu), "r"(0), "l"(1ull << 63) : "memory");
  }
}
"#;

#[test]
fn sured_p_reduces_into_samples_by_the_surface_format() {
    let m = Module::parse(&ptx(SAMPLE_REDUCTIONS)).unwrap();
    let k = m.kernel("sample_reductions").unwrap();
    assert_eq!(m.jit_compile(k).expect("compiles").texture, 11);
    let format = |kind, channels| Format {
        kind,
        bits: 32,
        channels,
    };
    let words = |v: &[u32]| -> Vec<u8> { v.iter().flat_map(|w| w.to_le_bytes()).collect() };
    let read = |s: &SurfaceObject, n: usize| -> Vec<u32> {
        let Storage::Array(t) = &s.image.storage else {
            unreachable!()
        };
        let mut out = vec![0u8; 4 * n];
        assert!(t.read(0, &mut out));
        to_u32s(&out)
    };
    // What the 256 threads reduce, computed here: thread i reaches x = i % 4 (or i % 2).
    let threads = 0..256u32;
    let of = |x: u32, m: u32| threads.clone().filter(move |i| i % m == x);
    let add: Vec<u32> = (0..4)
        .map(|x| of(x, 4).fold(0xffff_fff0u32, |a, _| a.wrapping_add(3)))
        .collect();
    let max: Vec<u32> = (0..4)
        .map(|x| of(x, 4).map(|i| i as i32 - 100).max().unwrap() as u32)
        .collect();
    let mut min: Vec<u32> = (0..4)
        .map(|x| of(x, 4).map(|i| i as i32 - 100).min().unwrap() as u32)
        .collect();
    min[3] = (min[3] as i32).min(-1000) as u32;
    let or: Vec<u32> = (0..4)
        .map(|x| of(x, 4).fold(0, |a, i| a | 1 << (i % 32)))
        .collect();
    let umin: Vec<u32> = (0..4)
        .map(|x| of(x, 4).map(|i| i.wrapping_sub(100)).min().unwrap())
        .collect();
    let and: Vec<u32> = (0..4)
        .map(|x| of(x, 4).fold(!0, |a, i| a & !(1 << (i % 32))))
        .collect();
    let wide = |v: &[u32], e: usize| v[2 * e] as u64 | (v[2 * e + 1] as u64) << 32;
    let umax: Vec<u64> = (0..2)
        .map(|e| {
            let m = of(e, 2).map(|i| (i as u64) << 32 | (255 - i) as u64).max();
            m.unwrap().max(if e == 0 { 1 << 63 } else { 0 })
        })
        .collect();
    let smin: Vec<u64> = (0..2)
        .map(|e| {
            let m = of(e, 2).map(|i| -(i as i64) * 0x1_0000_0001).min();
            m.unwrap().min(0) as u64
        })
        .collect();
    for engine in engines() {
        let mut init = [0u32; 16];
        init[0..4].fill(0xffff_fff0);
        init[4..8].fill(i32::MIN as u32);
        init[8..12].fill(i32::MAX as u32);
        let si = Arc::new(SurfaceObject {
            image: array_image(
                format(ChannelKind::Signed, 1),
                4,
                4,
                1,
                false,
                &words(&init),
            ),
        });
        let init = [!0u32; 8];
        let su = Arc::new(SurfaceObject {
            image: array_image(
                format(ChannelKind::Unsigned, 1),
                8,
                1,
                1,
                false,
                &words(&init),
            ),
        });
        let wu = Arc::new(SurfaceObject {
            image: array_image(format(ChannelKind::Unsigned, 2), 2, 1, 1, false, &[0; 16]),
        });
        let ws = Arc::new(SurfaceObject {
            image: array_image(format(ChannelKind::Signed, 2), 2, 1, 1, false, &[0; 16]),
        });
        let mem = ImageMemory {
            mem: TestMemory::new(),
            textures: Vec::new(),
            surfaces: vec![
                (6, si.clone()),
                (7, su.clone()),
                (8, wu.clone()),
                (9, ws.clone()),
            ],
        };
        let p = params(&m.kernels[k], &[6, 7, 8, 9]);
        let mut l = launch(4, 64, &p);
        l.engine = engine;
        l.host_threads = 4;
        run(&m, k, &l, &mem).unwrap();
        let what = format!("{engine:?}");
        let got = read(&si, 16);
        assert_eq!(got[0..4], add[..], "{what}: add wrapping");
        assert_eq!(got[4..8], max[..], "{what}: signed max");
        assert_eq!(got[8..12], min[..], "{what}: signed min, clamped");
        assert_eq!(got[12..16], or[..], "{what}: or, x = -1 dropped");
        let got = read(&su, 8);
        assert_eq!(got[0..4], umin[..], "{what}: unsigned min");
        assert_eq!(got[4..8], and[..], "{what}: and");
        let got = read(&wu, 4);
        assert_eq!(
            [wide(&got, 0), wide(&got, 1)],
            umax[..],
            "{what}: .b64 unsigned max"
        );
        let got = read(&ws, 4);
        assert_eq!(
            [wide(&got, 0), wide(&got, 1)],
            smin[..],
            "{what}: .b64 signed min"
        );
    }
    // `.b64` is for min and max only; `.p` takes no other type.
    for form in [
        "sured.p.add.2d.b64.trap [%rd1, {%r1, %r1}], %rd1;",
        "sured.p.or.1d.b64.trap [%rd1, {%r1}], %rd1;",
        "sured.p.min.2d.u32.trap [%rd1, {%r1, %r1}], %r1;",
    ] {
        let src = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() {{\n\
             .reg .b32 %r<2>;\n.reg .b64 %rd<2>;\n{form}\nret;\n}}\n"
        );
        let e = Module::parse(&src).unwrap_err();
        assert_eq!(e.kind, cumock_ptx::LoadErrorKind::Semantic, "{form}: {e}");
    }
}

/// `txq`'s sampler queries (no C++ form: inline PTX) over texture objects of different
/// sampler state, under both engines: CUDA's enumerations (CUfilter_mode,
/// CUaddress_mode), normalized_coords 1 or 0, force_unnormalized_coords 0. The ISA gives
/// no numbers; runtime program texture_queries prints the H200's for the lead to record.
const SAMPLER_QUERIES: &str = r#"
extern "C" __global__ void sampler_queries(unsigned long long t, unsigned* out) {
  unsigned v[6];
  asm volatile("txq.filter_mode.b32 %0, [%1];" : "=r"(v[0]) : "l"(t));
  asm volatile("txq.addr_mode_0.b32 %0, [%1];" : "=r"(v[1]) : "l"(t));
  asm volatile("txq.addr_mode_1.b32 %0, [%1];" : "=r"(v[2]) : "l"(t));
  asm volatile("txq.addr_mode_2.b32 %0, [%1];" : "=r"(v[3]) : "l"(t));
  asm volatile("txq.normalized_coords.b32 %0, [%1];" : "=r"(v[4]) : "l"(t));
  asm volatile("txq.force_unnormalized_coords.b32 %0, [%1];" : "=r"(v[5]) : "l"(t));
  for (int k = 0; k < 6; k++) out[6 * threadIdx.x + k] = v[k];
}
"#;

#[test]
fn txq_sampler_queries_answer_the_texture_objects_sampler() {
    let m = Module::parse(&ptx(SAMPLER_QUERIES)).unwrap();
    let k = m.kernel("sampler_queries").unwrap();
    let img = array_image(F32X1, 4, 4, 1, false, &[0u8; 4 * 4 * 4]);
    let mut linear_wrap = sampler(true, true, AddressMode::Wrap);
    linear_wrap.address = [AddressMode::Wrap, AddressMode::Mirror, AddressMode::Border];
    let cases = [
        (linear_wrap, [1, 0, 2, 3, 1, 0]),
        (
            sampler(false, false, AddressMode::Clamp),
            [0, 1, 1, 1, 0, 0],
        ),
        (
            sampler(false, true, AddressMode::Border),
            [0, 3, 3, 3, 1, 0],
        ),
    ];
    for engine in engines() {
        for (s, want) in &cases {
            let texture = Arc::new(TextureObject {
                image: img.clone(),
                sampler: s.clone(),
                levels: Vec::new(),
            });
            let mut mem = ImageMemory {
                mem: TestMemory::new(),
                textures: vec![(9, texture)],
                surfaces: Vec::new(),
            };
            // Two warps' worth of threads: every lane answers.
            let out = mem.mem.map(&[0u8; 6 * 4 * 40], true);
            let p = params(&m.kernels[k], &[9, out]);
            let mut l = launch(1, 40, &p);
            l.engine = engine;
            run(&m, k, &l, &mem).unwrap();
            let got = to_u32s(&mem.mem.read(out));
            for (t, v) in got.chunks(6).enumerate() {
                assert_eq!(v, want, "{engine:?} thread {t}: {s:?}");
            }
        }
        // A handle that names no texture faults as the other queries do.
        let mut mem = ImageMemory {
            mem: TestMemory::new(),
            textures: Vec::new(),
            surfaces: Vec::new(),
        };
        let out = mem.mem.map(&[0u8; 24], true);
        let p = params(&m.kernels[k], &[9, out]);
        let mut l = launch(1, 1, &p);
        l.engine = engine;
        let f = run(&m, k, &l, &mem).unwrap_err();
        assert!(f.detail.contains("not a texture object"), "{f}");
    }
    // Independent mode queries a sampler through its `.samplerref`: refused.
    let src = ".version 8.0\n.target sm_90, texmode_independent\n.address_size 64\n\
               .visible .entry k(.param .u64 t) {\n.reg .b32 %r<2>;\n.reg .b64 %rd<2>;\n\
               ld.param.u64 %rd1, [t];\ntxq.filter_mode.b32 %r1, [%rd1];\nret;\n}\n";
    let e = Module::parse(src).unwrap_err();
    assert_eq!(e.kind, cumock_ptx::LoadErrorKind::Unsupported, "{e}");
    assert!(e.message.contains("sampler queries in independent"), "{e}");
}

/// `txq.level` on a texture of one level: level 0 answers as the plain query does
/// (mipmapped textures' levels: `tests/mipmaps_cubemaps.rs`); `.level` takes only the
/// sizes, as the ISA lists them.
#[test]
fn txq_level_of_a_plain_texture_is_its_size() {
    let src = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry q(.param .u64 t, .param .u64 o, .param .u32 lod) {
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [t];
  ld.param.u64 %rd2, [o];
  ld.param.u32 %r4, [lod];
  txq.level.width.b32 %r1, [%rd1], %r4;
  txq.level.height.b32 %r2, [%rd1], %r4;
  txq.level.depth.b32 %r3, [%rd1], 0;
  st.global.v2.u32 [%rd2], {%r1, %r2};
  st.global.u32 [%rd2+8], %r3;
  ret;
}
"#;
    let m = Module::parse(src).unwrap();
    let img = array_image(F32X1, 7, 3, 2, false, &[0u8; 7 * 3 * 2 * 4]);
    let texture = Arc::new(TextureObject {
        image: img,
        sampler: sampler(false, false, AddressMode::Clamp),
        levels: Vec::new(),
    });
    for engine in engines() {
        let mut mem = ImageMemory {
            mem: TestMemory::new(),
            textures: vec![(5, texture.clone())],
            surfaces: Vec::new(),
        };
        let out = mem.mem.map(&[0u8; 12], true);
        let p = params(&m.kernels[0], &[5, out, 0]);
        let mut l = launch(1, 1, &p);
        l.engine = engine;
        run(&m, 0, &l, &mem).unwrap();
        assert_eq!(to_u32s(&mem.mem.read(out)), [7, 3, 2]);
    }
    let src = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() {\n\
               .reg .b32 %r<2>;\n.reg .b64 %rd<2>;\n\
               txq.level.array_size.b32 %r1, [%rd1], 0;\nret;\n}\n";
    let e = Module::parse(src).unwrap_err();
    assert!(e.message.contains("width, height or depth"), "{e}");
}

const INTRINSICS: &str = r#"
#include <cuda_runtime.h>
extern "C" __global__ void all_forms(cudaTextureObject_t t, cudaSurfaceObject_t s, float4* f, int4* i, uint4* u, float x, int k) {
  f[0] = tex1D<float4>(t, x);
  f[1] = tex2D<float4>(t, x, x);
  f[2] = tex3D<float4>(t, x, x, x);
  f[3] = tex1DLayered<float4>(t, x, k);
  f[4] = tex2DLayered<float4>(t, x, x, k);
  f[5] = tex1Dfetch<float4>(t, k);
  i[0] = tex2D<int4>(t, x, x);
  u[0] = tex3D<uint4>(t, x, x, x);
  i[1] = tex1Dfetch<int4>(t, k);
  f[6] = tex2Dgather<float4>(t, x, x, 3);
  i[2] = tex2Dgather<int4>(t, x, x, 2);
  char c = surf1Dread<char>(s, k);
  short h = surf2Dread<short>(s, k, k);
  int2 v2 = surf3Dread<int2>(s, k, k, k);
  float4 v4 = surf2DLayeredread<float4>(s, k, k, k);
  long long d = surf1DLayeredread<long long>(s, k, k);
  surf1Dwrite(c, s, k);
  surf2Dwrite(h, s, k, k, cudaBoundaryModeClamp);
  surf3Dwrite(v2, s, k, k, k, cudaBoundaryModeZero);
  surf2DLayeredwrite(v4, s, k, k, k);
  surf1DLayeredwrite(d, s, k, k);
}
"#;

#[test]
fn every_texture_and_surface_form_nvcc_writes_loads() {
    let src = ptx(INTRINSICS);
    let m = Module::parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    assert!(m.kernel("all_forms").is_some());
    for form in [
        "tex.1d.",
        "tex.2d.",
        "tex.3d.",
        "tex.a1d.",
        "tex.a2d.",
        "tld4.",
        "suld.b.1d",
        "suld.b.2d",
        "suld.b.3d",
        "suld.b.a1d",
        "suld.b.a2d",
        "sust.b.1d",
        "sust.b.a2d",
    ] {
        assert!(src.contains(form), "nvcc no longer writes `{form}`:\n{src}");
    }
}

#[test]
fn mutated_texture_ptx_never_panics_and_what_parses_runs_to_an_end() {
    let seed = ptx(INTRINSICS);
    let mut mem = ImageMemory {
        mem: TestMemory::new(),
        textures: vec![],
        surfaces: vec![],
    };
    let out = mem.mem.map(&[0u8; 4096], true);
    // Every handle the kernel may be given names an object of some kind.
    let img = array_image(
        Format {
            kind: ChannelKind::Unsigned,
            bits: 8,
            channels: 4,
        },
        5,
        3,
        2,
        true,
        &[7u8; 5 * 3 * 2 * 4],
    );
    for (h, linear) in [(1u64, true), (2, false)] {
        let mut s = sampler(linear, h == 2, AddressMode::Mirror);
        s.read_normalized = linear;
        mem.textures.push((
            h,
            Arc::new(TextureObject {
                levels: Vec::new(),
                image: img.clone(),
                sampler: s,
            }),
        ));
        mem.surfaces
            .push((h, Arc::new(SurfaceObject { image: img.clone() })));
    }
    let mut rng = fastrand::Rng::with_seed(21);
    let (mut parsed, mut ran) = (0, 0);
    for round in 0..400u64 {
        let src = common::mutate::mutate(&seed, &mut rng);
        let Ok(m) = Module::parse(&src) else {
            continue;
        };
        parsed += 1;
        let Some(k) = m.kernel("all_forms") else {
            continue;
        };
        if m.kernels[k].params.len() != 7 {
            continue;
        }
        let x = (round as f32 * 0.37 - 3.0).to_bits() as u64;
        let p = params(
            &m.kernels[k],
            &[
                1 + round % 2,
                1 + round / 2 % 2,
                out,
                out,
                out,
                x,
                round % 9,
            ],
        );
        let mut l = launch(1, 32, &p);
        l.step_limit = Some(20_000);
        let _ = run(&m, k, &l, &mem);
        ran += 1;
    }
    assert!(parsed > 0 && ran > 0, "{parsed} parsed, {ran} ran");
}

/// One image instruction per kernel, run per lane with the handle `hs[tid]` names: x is
/// 0 (in bytes, 4 * tid for the surface accesses, tid for `sust.p`'s samples); each lane
/// stores the result in `out[tid]`.
fn lane_kernel(body: &str) -> String {
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 hs, .param .u64 out)\n{{\n\
         .reg .b32 %r<6>;\n.reg .b64 %rd<8>;\n.reg .f32 %f<6>;\n\
         ld.param.u64 %rd1, [hs];\nld.param.u64 %rd2, [out];\nmov.u32 %r1, %tid.x;\n\
         mul.wide.u32 %rd3, %r1, 8;\nadd.s64 %rd4, %rd1, %rd3;\nld.global.u64 %rd5, [%rd4];\n\
         mul.wide.u32 %rd6, %r1, 4;\nadd.s64 %rd7, %rd2, %rd6;\n\
         mov.u32 %r2, 0;\nmov.u32 %r3, 0;\nshl.b32 %r4, %r1, 2;\nmov.f32 %f0, 0f3F000000;\n\
         {body}\nst.global.u32 [%rd7], %r3;\nret;\n}}\n"
    )
}

/// A warp's lanes run an image instruction in turn: lanes naming two objects of the kind
/// each get their own's answer, and the first lane that faults is the one charged, with
/// its own fault: a handle that names no object of the kind, or (a lane past it) a
/// surface access out of bounds under `.trap`.
#[test]
fn the_first_faulting_lane_of_an_image_instruction_is_charged() {
    let u32x1 = Format {
        kind: ChannelKind::Unsigned,
        bits: 32,
        channels: 1,
    };
    let tex = |w: u64, first: f32, linear: bool| {
        let vals: Vec<f32> = (0..w).map(|i| first + i as f32).collect();
        Arc::new(TextureObject {
            image: array_image(F32X1, w, 1, 1, false, &f32s(&vals)),
            sampler: sampler(linear, false, AddressMode::Clamp),
            levels: Vec::new(),
        })
    };
    let surf = |w: u64| {
        Arc::new(SurfaceObject {
            image: array_image(u32x1, w, 1, 1, false, &vec![0u8; w as usize * 4]),
        })
    };
    // Even lanes name the first object, odd lanes the second: (texture 0x10: 4 wide,
    // point sampled, 1 at x 0; 0x11: 2 wide, linear, 5 at x 0), (surface 0x20: 4 wide;
    // 0x21: 8 wide).
    let objects = [(0x10u64, 0x11u64), (0x20, 0x21)];
    // The instruction, whether it takes a surface, and each object's answer (None: not
    // checked).
    let cases: [(&str, bool, Option<[u32; 2]>); 11] = [
        (
            "tex.2d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd5, {%r2, %r2}];\nmov.b32 %r3, %f1;",
            false,
            Some([1f32.to_bits(), 5f32.to_bits()]),
        ),
        (
            "tld4.r.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd5, {%f0, %f0}];",
            false,
            None,
        ),
        ("txq.width.b32 %r3, [%rd5];", false, Some([4, 2])),
        ("txq.level.width.b32 %r3, [%rd5], %r2;", false, Some([4, 2])),
        ("txq.filter_mode.b32 %r3, [%rd5];", false, Some([0, 1])),
        ("suq.width.b32 %r3, [%rd5];", true, Some([4, 8])),
        (
            "suld.b.2d.b32.trap {%r3}, [%rd5, {%r4, %r2}];",
            true,
            Some([0, 0]),
        ),
        ("sust.b.2d.b32.trap [%rd5, {%r4, %r2}], {%r1};", true, None),
        ("sust.p.2d.b32.trap [%rd5, {%r1, %r2}], {%r1};", true, None),
        (
            "sured.b.add.2d.u32.trap [%rd5, {%r4, %r2}], %r1;",
            true,
            None,
        ),
        (
            "sured.b.add.2d.u32.zero [%rd5, {%r4, %r2}], %r1;",
            true,
            None,
        ),
    ];
    for engine in engines() {
        for (body, surface, want) in cases {
            let m = Module::parse(&lane_kernel(body)).unwrap();
            let (a, b) = objects[surface as usize];
            let kind = if surface { "surface" } else { "texture" };
            let run_with = |hs: &[u64]| {
                let mut mem = ImageMemory {
                    mem: TestMemory::new(),
                    textures: vec![(0x10, tex(4, 1.0, false)), (0x11, tex(2, 5.0, true))],
                    surfaces: vec![(0x20, surf(4)), (0x21, surf(8))],
                };
                let handles: Vec<u8> = hs.iter().flat_map(|h| h.to_le_bytes()).collect();
                let hs_at = mem.mem.map(&handles, false);
                let out = mem.mem.map(&vec![0xffu8; hs.len() * 4], true);
                let p = params(&m.kernels[0], &[hs_at, out]);
                let mut l = launch(1, hs.len() as u32, &p);
                l.engine = engine;
                run(&m, 0, &l, &mem).map(|_| to_u32s(&mem.mem.read(out)))
            };
            let what = format!("{engine:?} `{body}`");

            // Four lanes, every access in bounds: each lane its object's answer.
            let hs: Vec<u64> = (0..4).map(|l| if l % 2 == 0 { a } else { b }).collect();
            let got = run_with(&hs).unwrap_or_else(|f| panic!("{what}: {f}"));
            if let Some(want) = want {
                assert_eq!(got, [want[0], want[1], want[0], want[1]], "{what}");
            }

            // A warp: lanes 2 and 3 name no object of the kind (3 one of the other kind).
            let other = objects[!surface as usize].0;
            let mut hs: Vec<u64> = (0..32).map(|l| if l % 2 == 0 { a } else { b }).collect();
            hs[2] = 0x99;
            hs[3] = other;
            let f = run_with(&hs).unwrap_err();
            assert_eq!(f.kind, FaultKind::IllegalAddress, "{what}: {f}");
            assert_eq!(f.thread, [2, 0, 0], "{what}: {f}");
            assert_eq!(
                f.detail,
                format!("0x99 is not a {kind} object of this context"),
                "{what}"
            );

            // Every handle good: the first lane whose access lies past its surface's
            // row is charged under `.trap` (lane 4, x 16 bytes on the 4-wide one).
            if surface {
                hs[2] = a;
                hs[3] = b;
                let r = run_with(&hs);
                if body.contains(".trap") {
                    let f = r.unwrap_err();
                    assert_eq!(f.kind, FaultKind::IllegalAddress, "{what}: {f}");
                    assert_eq!(f.thread, [4, 0, 0], "{what}: {f}");
                    assert_eq!(
                        f.detail,
                        "surface access at (16, 0, 0) lies outside the 4x1x1 surface \
                         (x in bytes, 16 per row)",
                        "{what}"
                    );
                } else {
                    r.unwrap_or_else(|f| panic!("{what}: {f}"));
                }
            }
        }
    }
}

/// What ptxas and the H200's driver refuse of the queries (probe image_queries,
/// runs/2026-12-03-h200-session18/call5): `txq.force_unnormalized_coords` of a named
/// `.texref` is INVALID_PTX (".samplerref expected"); `suq.array_size` is refused at load,
/// of a `.surfref` and of a surface object; `txq.width` of a `.texref` and `suq.depth` load.
#[test]
fn the_queries_the_h200_refuses_at_load_are_refused() {
    use cumock_ptx::LoadErrorKind::{Semantic, Unsupported};
    for (form, refused) in [
        (
            "txq.force_unnormalized_coords.b32 %r1, [t];",
            Some(Semantic),
        ),
        ("suq.array_size.b32 %r1, [s];", Some(Unsupported)),
        ("suq.array_size.b32 %r1, [%rd1];", Some(Unsupported)),
        ("txq.width.b32 %r1, [t];", None),
        ("suq.depth.b32 %r1, [s];", None),
    ] {
        let src = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.global .texref t;\n\
             .global .surfref s;\n.visible .entry k() {{\n.reg .b32 %r<2>;\n\
             .reg .b64 %rd<2>;\nmov.u64 %rd1, 0;\n{form}\nret;\n}}\n"
        );
        match (Module::parse(&src), refused) {
            (Err(e), Some(kind)) => assert_eq!(e.kind, kind, "{form}: {e}"),
            (Ok(_), None) => {}
            (r, want) => panic!("{form}: {:?}, wanted {want:?}", r.err()),
        }
    }
}
