//! Cubemaps (`tex.cube`, `tex.acube`, `tld4` on cubes) and mipmaps (`tex.level`,
//! `tex.grad`, `txq.level`, `txq.num_mipmap_levels`) in kernels compiled by nvcc 13.0,
//! each result checked against expectations written here from the documents (the CUDA
//! programming guide's cubemap table, CUDA_TEXTURE_DESC's mipmap fields), apart from
//! the executor's code. What the documents leave open (ties between cube faces, the
//! rounding of the level of detail) is kept out of these expectations: the H200 records
//! it through clients/runtime/cubemap_mipmap.cu (textures take objects the corpus's
//! kernels cannot be given).

mod common;
use common::images::ImageMemory;
use common::*;
use cumock_ptx::{
    run, AddressMode, ChannelKind, Engine, Format, Image, MipmapSampler, Module, Sampler, Storage,
    Texels, TextureObject,
};
use std::sync::Arc;

const F32X1: Format = Format {
    kind: ChannelKind::Float,
    bits: 32,
    channels: 1,
};

fn image(w: u64, h: u64, d: u64, layered: bool, cubemap: bool, vals: &[f32]) -> Image {
    let t = Texels::zeroed(vals.len() * 4).unwrap();
    assert!(t.write(0, &f32s(vals)));
    Image {
        format: F32X1,
        width: w,
        height: h,
        depth: d,
        layered,
        cubemap,
        extent_as_made: [w, h, d],
        row_pitch: w * 4,
        slice_pitch: w * h * 4,
        storage: Storage::Array(Arc::new(t)),
    }
}

fn sampler(linear: bool, mipmap: MipmapSampler) -> Sampler {
    Sampler {
        address: [AddressMode::Clamp; 3],
        linear,
        normalized_coords: true,
        read_normalized: false,
        border: [0.0; 4],
        mipmap,
        seamless_cubemap: false,
        srgb: false,
    }
}

const KERNELS: &str = r#"
#include <cuda_runtime.h>
extern "C" __global__ void cube(cudaTextureObject_t t, const float* dirs, float* out) {
  int i = threadIdx.x;
  out[i] = texCubemap<float>(t, dirs[3 * i], dirs[3 * i + 1], dirs[3 * i + 2]);
}
extern "C" __global__ void acube(cudaTextureObject_t t, const float* dirs, float* out, int cube) {
  int i = threadIdx.x;
  out[i] = texCubemapLayered<float>(t, dirs[3 * i], dirs[3 * i + 1], dirs[3 * i + 2], cube);
}
extern "C" __global__ void lod2d(cudaTextureObject_t t, const float* lods, float* out, float x, float y) {
  int i = threadIdx.x;
  out[i] = tex2DLod<float>(t, x, y, lods[i]);
}
extern "C" __global__ void grad2d(cudaTextureObject_t t, const float* g, float* out) {
  int i = threadIdx.x;
  out[i] = tex2DGrad<float>(t, 0.5f, 0.5f, make_float2(g[4 * i], g[4 * i + 1]),
                            make_float2(g[4 * i + 2], g[4 * i + 3]));
}
extern "C" __global__ void cube_grad(cudaTextureObject_t t, const float* g, float* out) {
  const float* p = g + 9 * threadIdx.x;
  out[threadIdx.x] = texCubemapGrad<float>(t, p[0], p[1], p[2], make_float4(p[3], p[4], p[5], 0.0f),
                                           make_float4(p[6], p[7], p[8], 0.0f));
}
extern "C" __global__ void cube_lod(cudaTextureObject_t t, float* out, float lod) {
  out[threadIdx.x] = texCubemapLod<float>(t, 0.2f, -1.0f, 0.3f, lod + threadIdx.x);
}
"#;

/// The programming guide's cubemap table, as data: for each face, the major axis and its
/// sign, and s and t as (axis, sign).
/// An axis (0: x, 1: y, 2: z) and a sign.
type Axis = (usize, f32);

const FACES: [(usize, f32, Axis, Axis); 6] = [
    (0, 1.0, (2, -1.0), (1, -1.0)),
    (0, -1.0, (2, 1.0), (1, -1.0)),
    (1, 1.0, (0, 1.0), (2, 1.0)),
    (1, -1.0, (0, 1.0), (2, -1.0)),
    (2, 1.0, (0, 1.0), (1, -1.0)),
    (2, -1.0, (0, -1.0), (1, -1.0)),
];

/// The texel of an n x n face a direction without ties reads under point sampling.
fn cube_texel(d: [f32; 3], n: usize) -> (usize, usize, usize) {
    let major = (0..3)
        .max_by(|a, b| d[*a].abs().total_cmp(&d[*b].abs()))
        .unwrap();
    let face = FACES
        .iter()
        .position(|f| f.0 == major && (d[major] >= 0.0) == (f.1 > 0.0))
        .unwrap();
    let (_, _, (sa, ss), (ta, ts)) = FACES[face];
    let m = d[major].abs();
    let texel = |c: f32| (((c / m + 1.0) * 0.5 * n as f32).floor() as usize).min(n - 1);
    (face, texel(ss * d[sa]), texel(ts * d[ta]))
}

fn directions() -> Vec<[f32; 3]> {
    // No ties between the largest magnitudes, every face, every quadrant.
    let mut v = Vec::new();
    let mut rng = fastrand::Rng::with_seed(6);
    while v.len() < 64 {
        let d = [0; 3].map(|_| rng.f32() * 4.0 - 2.0);
        let mut m = d.map(f32::abs);
        m.sort_by(f32::total_cmp);
        if m[2] - m[1] > 1e-3 {
            v.push(d);
        }
    }
    v
}

#[test]
fn cubemap_lookups_follow_the_programming_guides_face_table() {
    let m = Module::parse(&ptx(KERNELS)).unwrap();
    let n = 4usize;
    // Two cubes: cube c, face f, texel (x, y) holds 1000c + 100f + 10y + x.
    let vals: Vec<f32> = (0..2 * 6 * n * n)
        .map(|i| {
            let (c, f, y, x) = (i / (6 * n * n), i / (n * n) % 6, i / n % n, i % n);
            (1000 * c + 100 * f + 10 * y + x) as f32
        })
        .collect();
    let cube = image(n as u64, n as u64, 6, false, true, &vals[..6 * n * n]);
    let cubes = image(n as u64, n as u64, 12, true, true, &vals);
    let mut mem = ImageMemory {
        mem: TestMemory::new(),
        surfaces: Vec::new(),
        textures: vec![
            (
                1,
                Arc::new(TextureObject {
                    image: cube,
                    sampler: sampler(false, MipmapSampler::default()),
                    levels: vec![],
                }),
            ),
            (
                2,
                Arc::new(TextureObject {
                    image: cubes,
                    sampler: sampler(false, MipmapSampler::default()),
                    levels: vec![],
                }),
            ),
        ],
    };
    let dirs = directions();
    let flat: Vec<f32> = dirs.iter().flatten().copied().collect();
    let din = mem.mem.map(&f32s(&flat), false);
    let out = mem.mem.map(&[0u8; 64 * 4], true);
    let k = m.kernel("cube").unwrap();
    run(
        &m,
        k,
        &launch(1, 64, &params(&m.kernels[k], &[1, din, out])),
        &mem,
    )
    .unwrap();
    let got = to_f32s(&mem.mem.read(out));
    for (d, g) in dirs.iter().zip(&got) {
        let (f, x, y) = cube_texel(*d, n);
        assert_eq!(*g, (100 * f + 10 * y + x) as f32, "direction {d:?}");
    }
    let k = m.kernel("acube").unwrap();
    for (c, cube_index) in [(0u64, 0u64), (1, 1), (1, 7)] {
        let p = params(&m.kernels[k], &[2, din, out, cube_index]);
        run(&m, k, &launch(1, 64, &p), &mem).unwrap();
        let got = to_f32s(&mem.mem.read(out));
        for (d, g) in dirs.iter().zip(&got) {
            let (f, x, y) = cube_texel(*d, n);
            let want = (1000 * c as usize + 100 * f + 10 * y + x) as f32;
            assert_eq!(*g, want, "cube {cube_index} direction {d:?}");
        }
    }
}

/// Levels 8x8, 4x4, 2x2, 1x1, each texel of level k holding `level_value(k)`: what any
/// filter within a level reads, so the blend between levels is all a sample shows.
fn level_value(k: usize) -> f32 {
    [10.0, 20.0, 40.0, 80.0][k]
}

fn mip_texture(linear_mips: bool, mipmap: MipmapSampler) -> TextureObject {
    let lvl = |k: usize| {
        let n = 8u64 >> k;
        image(
            n,
            n,
            1,
            false,
            false,
            &vec![level_value(k); (n * n) as usize],
        )
    };
    TextureObject {
        image: lvl(0),
        sampler: sampler(
            true,
            MipmapSampler {
                linear: linear_mips,
                ..mipmap
            },
        ),
        levels: (1..4).map(lvl).collect(),
    }
}

#[test]
fn tex_level_picks_and_blends_levels_with_bias_and_clamps() {
    let m = Module::parse(&ptx(KERNELS)).unwrap();
    let k = m.kernel("lod2d").unwrap();
    let all = MipmapSampler {
        max_clamp: 3.0,
        ..Default::default()
    };
    let lods = [-2.0f32, 0.0, 0.5, 1.0, 1.25, 2.75, 3.0, 7.0, f32::NAN];
    // (linear mipmaps, sampler) -> expected per lod, from CUDA_TEXTURE_DESC: lod + bias,
    // clamped to [min, max] and to the levels there are; linear blends the two levels
    // around it by its fraction (exact here: quarters), point reads the nearest.
    let v = level_value;
    let cases: [(bool, MipmapSampler, [f32; 9]); 4] = [
        (
            true,
            all,
            [v(0), v(0), 15.0, v(1), 25.0, 70.0, v(3), v(3), v(0)],
        ),
        (
            false,
            all,
            [v(0), v(0), v(1), v(1), v(1), v(3), v(3), v(3), v(0)],
        ),
        (
            true,
            MipmapSampler {
                bias: 0.5,
                min_clamp: 1.0,
                max_clamp: 2.5,
                ..Default::default()
            },
            [v(1), v(1), v(1), 30.0, 35.0, 60.0, 60.0, 60.0, v(1)],
        ),
        // The default clamps (0, 0) keep every lookup on level 0.
        (true, MipmapSampler::default(), [v(0); 9]),
    ];
    for (linear, mip, want) in cases {
        let mut mem = ImageMemory {
            mem: TestMemory::new(),
            surfaces: Vec::new(),
            textures: vec![(3, Arc::new(mip_texture(linear, mip)))],
        };
        let lin = mem.mem.map(&f32s(&lods), false);
        let out = mem.mem.map(&[0u8; 9 * 4], true);
        let p = params(
            &m.kernels[k],
            &[
                3,
                lin,
                out,
                0.3f32.to_bits() as u64,
                0.6f32.to_bits() as u64,
            ],
        );
        for engine in [Engine::Interp, Engine::Jit] {
            let mut l = launch(1, 9, &p);
            l.engine = engine;
            run(&m, k, &l, &mem).unwrap();
            assert_eq!(
                to_f32s(&mem.mem.read(out)),
                want,
                "{engine:?} {linear} {mip:?}"
            );
        }
    }
}

#[test]
fn tex_grad_takes_the_level_of_detail_from_derivatives_in_texels() {
    let m = Module::parse(&ptx(KERNELS)).unwrap();
    let k = m.kernel("grad2d").unwrap();
    let all = MipmapSampler {
        max_clamp: 3.0,
        ..Default::default()
    };
    let mut mem = ImageMemory {
        mem: TestMemory::new(),
        surfaces: Vec::new(),
        textures: vec![(4, Arc::new(mip_texture(true, all)))],
    };
    // Normalized derivatives on an 8-texel level 0: (1/8, 0) is one texel (lod 0),
    // (0.5, 0) four (lod 2), (0, 1/4) against (1/4, 1/4) two texels against (2, 2),
    // which the H200 reads 176/256 above level 1 (clients/runtime/cubemap_mipmap.cu).
    let g = [
        [0.125f32, 0.0, 0.0, 0.0],
        [0.5, 0.0, 0.0, 0.1],
        [0.0, 0.25, 0.25, 0.25],
        [0.0, 0.0, 0.0, 0.0],
        [4.0, 0.0, 0.0, 0.0],
    ];
    let gin = mem.mem.map(&f32s(&g.concat()), false);
    let out = mem.mem.map(&[0u8; 5 * 4], true);
    run(
        &m,
        k,
        &launch(1, 5, &params(&m.kernels[k], &[4, gin, out])),
        &mem,
    )
    .unwrap();
    assert_eq!(to_f32s(&mem.mem.read(out)), [10.0, 40.0, 33.75, 10.0, 80.0]);
}

/// Levels 8x8, 4x4, 2x2, 1x1 whose texel (x, y) of level k holds level_value(k) + x: a
/// sample shows its level and its column.
fn ramp_mip_texture(max_anisotropy: u32) -> TextureObject {
    let lvl = |k: usize| {
        let n = 8u64 >> k;
        let vals: Vec<f32> = (0..n * n)
            .map(|i| level_value(k) + (i % n) as f32)
            .collect();
        image(n, n, 1, false, false, &vals)
    };
    TextureObject {
        image: lvl(0),
        sampler: sampler(
            false,
            MipmapSampler {
                max_clamp: 3.0,
                max_anisotropy,
                ..Default::default()
            },
        ),
        levels: (1..4).map(lvl).collect(),
    }
}

/// maxAnisotropy > 1 under tex.grad (0 and 1 take the H200's isotropic level of detail,
/// checked against its record in the executor's texture tests): EXT_texture_filter_anisotropic's footprint, written
/// here apart from the executor: Px, Py the derivative vectors' lengths in texels, N =
/// min(ceil(Pmax / Pmin), maxAnisotropy) point samples (here) along the longer vector at
/// i/(N+1) - 1/2 of it, level log2(Pmax / N) (the nearest level), their mean.
#[test]
fn anisotropic_tex_grad_averages_samples_along_the_major_axis() {
    let m = Module::parse(&ptx(KERNELS)).unwrap();
    let k = m.kernel("grad2d").unwrap();
    let g = [
        [0.5f32, 0.0, 0.0, 0.125],
        [0.5, 0.0, 0.0, 0.0],
        [0.0, 0.125, 0.375, 0.0],
        [0.25, 0.25, 0.0, 0.0625],
        [0.0, 0.0, 0.0, 0.0],
        [0.1, 0.05, 0.02, 0.04],
    ];
    for max in [2u32, 4, 16] {
        let mut mem = ImageMemory {
            mem: TestMemory::new(),
            surfaces: Vec::new(),
            textures: vec![(4, Arc::new(ramp_mip_texture(max)))],
        };
        let gin = mem.mem.map(&f32s(&g.concat()), false);
        let out = mem.mem.map(&[0u8; 6 * 4], true);
        let p = params(&m.kernels[k], &[4, gin, out]);
        run(&m, k, &launch(1, 6, &p), &mem).unwrap();
        let got = to_f32s(&mem.mem.read(out));
        for (d, got) in g.iter().zip(got) {
            let (dx, dy) = ([d[0], d[1]], [d[2], d[3]]);
            let len =
                |v: [f32; 2]| ((v[0] as f64 * 8.0).powi(2) + (v[1] as f64 * 8.0).powi(2)).sqrt();
            let (px, py) = (len(dx), len(dy));
            let (pmax, pmin, major) = if py > px { (py, px, dy) } else { (px, py, dx) };
            let n = if max <= 1 || pmax == 0.0 {
                1
            } else if pmin == 0.0 {
                max
            } else {
                ((pmax / pmin).ceil() as u32).min(max)
            };
            let lod = ((pmax / n as f64).log2() as f32).clamp(0.0, 3.0);
            let level = (((lod as f64 * 256.0).floor() as i64 + 128) >> 8) as usize;
            let size = 8usize >> level;
            let mut sum = 0f64;
            for i in 1..=n {
                let at = i as f32 / (n + 1) as f32 - 0.5;
                let u = 0.5f32 + major[0] * at;
                let x = ((u * size as f32).floor() as i64).clamp(0, size as i64 - 1);
                sum += (level_value(level) + x as f32) as f64;
            }
            let want = (sum / n as f64) as f32;
            assert_eq!(
                got, want,
                "maxAnisotropy {max}, derivatives {d:?}: {n} samples"
            );
        }
        if max == 4 {
            // (0.5, 0) against (0, 1/8): 4 texels by 1, so four samples on level 0
            // (columns 2 to 5), where the isotropic level is 2 (41).
            assert_eq!(got_first(&mem, out), 13.5);
        }
    }
}

fn got_first(mem: &ImageMemory, out: u64) -> f32 {
    to_f32s(&mem.mem.read(out))[0]
}

/// tex.grad's isotropic level of detail as fitted to the H200 (ptx/src/texture.rs,
/// grad_lod), written here apart from the executor: lengths as the longer component
/// plus 11/32 of the shorter (that cut to 7 fraction bits, the sum to 9), the longest of
/// the two vectors and 11/16 of their sum and difference, cut to 8 bits, log2 rounded up
/// to 1/256.
fn h200_grad_lod(dx: [f64; 2], dy: [f64; 2]) -> f32 {
    let cut = |x: f64, bits: i32| {
        if x == 0.0 {
            return 0.0;
        }
        let unit = 2f64.powi(x.log2().floor() as i32 - bits);
        (x / unit).floor() * unit
    };
    let len = |v: [f64; 2]| {
        let (long, short) = (v[0].abs().max(v[1].abs()), v[0].abs().min(v[1].abs()));
        cut(long + cut(short * 11.0 / 32.0, 7), 9)
    };
    let sum = len([dx[0] + dy[0], dx[1] + dy[1]]);
    let difference = len([dx[0] - dy[0], dx[1] - dy[1]]);
    let extent = cut(
        len(dx).max(len(dy)).max(sum.max(difference) * 11.0 / 16.0),
        8,
    );
    ((extent.log2() * 256.0).ceil() / 256.0) as f32
}

/// tex.grad.cube (texCubemapGrad): the direction's derivatives become the face
/// coordinates' by the quotient rule on the guide's table, s = (sc/|ma| + 1)/2, and the
/// level of detail is tex.grad's of those in the face's texels (`h200_grad_lod`).
#[test]
fn cubemap_gradients_take_the_faces_derivatives() {
    let m = Module::parse(&ptx(KERNELS)).unwrap();
    let lvl = |k: usize| {
        let n = 4u64 >> k;
        let vals: Vec<f32> = (0..6 * n * n)
            .map(|i| level_value(k) + (i / (n * n)) as f32)
            .collect();
        image(n, n, 6, false, true, &vals)
    };
    let mip = MipmapSampler {
        linear: true,
        max_clamp: 2.0,
        ..Default::default()
    };
    let mut mem = ImageMemory {
        mem: TestMemory::new(),
        surfaces: Vec::new(),
        textures: vec![(
            5,
            Arc::new(TextureObject {
                image: lvl(0),
                sampler: sampler(true, mip),
                levels: vec![lvl(1), lvl(2)],
            }),
        )],
    };
    // Direction, then dPdx and dPdy.
    let cases: [[f32; 9]; 6] = [
        [0.2, -1.0, 0.3, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.2, -1.0, 0.3, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        [0.2, -1.0, 0.3, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0],
        [2.0, 0.5, -1.0, 0.0, 0.0, 1.5, 0.3, 0.0, 0.0],
        [-0.1, 0.4, -3.0, 1.0, 1.0, 0.0, 0.0, 0.0, 2.0],
        [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    ];
    let gin = mem.mem.map(&f32s(&cases.concat()), false);
    let out = mem.mem.map(&[0u8; 6 * 4], true);
    let k = m.kernel("cube_grad").unwrap();
    for engine in [Engine::Interp, Engine::Jit] {
        let p = params(&m.kernels[k], &[5, gin, out]);
        let mut l = launch(1, cases.len() as u32, &p);
        l.engine = engine;
        run(&m, k, &l, &mem).unwrap();
        let got = to_f32s(&mem.mem.read(out));
        for (c, got) in cases.iter().zip(got) {
            let d = [c[0], c[1], c[2]];
            let (face, lod) = if d == [0.0; 3] {
                (4, 0.0)
            } else {
                let major = (0..3)
                    .max_by(|a, b| d[*a].abs().total_cmp(&d[*b].abs()))
                    .unwrap();
                let face = FACES
                    .iter()
                    .position(|f| f.0 == major && (d[major] >= 0.0) == (f.1 > 0.0))
                    .unwrap();
                let (ma, msign, (sa, ss), (ta, ts)) = FACES[face];
                let mg = (d[ma] * msign) as f64;
                let texels = |g: &[f32]| {
                    let dm = (g[ma] * msign) as f64;
                    let q = |a: usize, sign: f32| {
                        let (sc, dsc) = ((d[a] * sign) as f64, (g[a] * sign) as f64);
                        (dsc * mg - sc * dm) / (2.0 * mg * mg) * 4.0
                    };
                    [q(sa, ss) as f32 as f64, q(ta, ts) as f32 as f64]
                };
                let lod = h200_grad_lod(texels(&c[3..6]), texels(&c[6..9]));
                (face, lod.clamp(0.0, 2.0))
            };
            let q8 = (lod as f64 * 256.0).floor() as i64;
            let (lo, f) = ((q8 >> 8) as usize, q8 & 255);
            let v = |k: usize| (level_value(k) + face as f32) as f64;
            let want = if f == 0 {
                v(lo) as f32
            } else {
                (((256 - f) as f64 * v(lo) + f as f64 * v(lo + 1)) / 256.0) as f32
            };
            assert_eq!(got, want, "{engine:?} case {c:?}");
        }
    }
}

#[test]
fn cubemap_levels_blend_on_the_face_the_direction_picks() {
    let m = Module::parse(&ptx(KERNELS)).unwrap();
    // A mipmapped cubemap: level k's faces all hold level_value(k) + face.
    let lvl = |k: usize| {
        let n = 4u64 >> k;
        let vals: Vec<f32> = (0..6 * n * n)
            .map(|i| level_value(k) + (i / (n * n)) as f32)
            .collect();
        image(n, n, 6, false, true, &vals)
    };
    let mip = MipmapSampler {
        linear: true,
        max_clamp: 2.0,
        ..Default::default()
    };
    let mut mem = ImageMemory {
        mem: TestMemory::new(),
        surfaces: Vec::new(),
        textures: vec![(
            5,
            Arc::new(TextureObject {
                image: lvl(0),
                sampler: sampler(true, mip),
                levels: vec![lvl(1), lvl(2)],
            }),
        )],
    };
    let out = mem.mem.map(&[0u8; 16], true);
    let k = m.kernel("cube_lod").unwrap();
    // (0.2, -1, 0.3) points at face 3 (-y); lods 0.5, 1.5, 2.5, 3.5 (clamped to 2).
    let p = params(&m.kernels[k], &[5, out, 0.5f32.to_bits() as u64]);
    run(&m, k, &launch(1, 4, &p), &mem).unwrap();
    assert_eq!(to_f32s(&mem.mem.read(out)), [18.0, 33.0, 43.0, 43.0]);
}

#[test]
fn txq_answers_levels_and_their_sizes() {
    let src = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry q(.param .u64 t, .param .u64 o) {
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [t];
  ld.param.u64 %rd2, [o];
  txq.num_mipmap_levels.b32 %r1, [%rd1];
  mov.b32 %r7, 2;
  txq.level.width.b32 %r2, [%rd1], %r7;
  txq.level.height.b32 %r3, [%rd1], %r7;
  mov.b32 %r7, 3;
  txq.level.width.b32 %r4, [%rd1], %r7;
  txq.width.b32 %r5, [%rd1];
  tex.level.2d.v4.f32.f32 {%r6, %r7, %r7, %r7}, [%rd1, {%r6, %r6}], 0f3FC00000;
  st.global.v4.u32 [%rd2], {%r1, %r2, %r3, %r4};
  st.global.v2.u32 [%rd2+16], {%r5, %r6};
  ret;
}
"#;
    let m = Module::parse(src).unwrap();
    let all = MipmapSampler {
        max_clamp: 3.0,
        ..Default::default()
    };
    let mut mem = ImageMemory {
        mem: TestMemory::new(),
        surfaces: Vec::new(),
        textures: vec![(6, Arc::new(mip_texture(true, all)))],
    };
    let out = mem.mem.map(&[0u8; 24], true);
    run(
        &m,
        0,
        &launch(1, 1, &params(&m.kernels[0], &[6, out])),
        &mem,
    )
    .unwrap();
    let got = to_u32s(&mem.mem.read(out));
    assert_eq!(got[..5], [4, 2, 2, 1, 8]);
    assert_eq!(
        f32::from_bits(got[5]),
        30.0,
        "lod 1.5 blends levels 1 and 2"
    );
}

#[test]
fn tld4_gathers_on_the_cube_face() {
    let src = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry g(.param .u64 t, .param .u64 o) {
  .reg .f32 %f<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [t];
  ld.param.u64 %rd2, [o];
  mov.f32 %f1, 0f00000000;
  mov.f32 %f2, 0f3F800000;
  tld4.r.cube.v4.f32.f32 {%f4, %f5, %f6, %f7}, [%rd1, {%f1, %f1, %f2, %f2}];
  st.global.v4.f32 [%rd2], {%f4, %f5, %f6, %f7};
  ret;
}
"#;
    let m = Module::parse(src).unwrap();
    let n = 4usize;
    let vals: Vec<f32> = (0..6 * n * n)
        .map(|i| (100 * (i / (n * n)) + 10 * (i / n % n) + i % n) as f32)
        .collect();
    let mut mem = ImageMemory {
        mem: TestMemory::new(),
        surfaces: Vec::new(),
        textures: vec![(
            7,
            Arc::new(TextureObject {
                image: image(4, 4, 6, false, true, &vals),
                sampler: sampler(false, MipmapSampler::default()),
                levels: vec![],
            }),
        )],
    };
    let out = mem.mem.map(&[0u8; 16], true);
    run(
        &m,
        0,
        &launch(1, 1, &params(&m.kernels[0], &[7, out])),
        &mem,
    )
    .unwrap();
    // +z is face 4, its centre (0.5, 0.5) two texels in: the footprint's lower left is
    // texel (1, 1); counter-clockwise from (i, j+1).
    assert_eq!(to_f32s(&mem.mem.read(out)), [421.0, 422.0, 412.0, 411.0]);
}

/// Seamless filtering's texel (i, j) of face `f` (n x n), i or j one past an edge: the
/// texel the direction through its centre reads under point sampling (the test's own
/// face table); None past a corner.
fn seamless_texel(f: usize, i: i64, j: i64, n: usize) -> Option<(usize, usize, usize)> {
    let inside = |v: i64| (0..n as i64).contains(&v);
    if !inside(i) && !inside(j) {
        return None;
    }
    let c = |k: i64| (2 * k + 1) as f32 / n as f32 - 1.0;
    let (major, sign, (sa, ss), (ta, ts)) = FACES[f];
    let mut d = [0f32; 3];
    d[major] = sign;
    d[sa] = ss * c(i);
    d[ta] = ts * c(j);
    Some(cube_texel(d, n))
}

/// CU_TRSF_SEAMLESS_CUBEMAP: linear filtering near a face's edge weighs the neighbouring
/// face's texels (the CUDA programming guide's seamless cubemap filtering), with the
/// weights of 2D filtering; a footprint over a cube corner has three texels and reads
/// the fourth as the H200's blend of them (85/256 beside, 86/256 diagonal). The same samples without the flag clamp at the face.
#[test]
fn seamless_cubemaps_filter_across_face_edges_and_corners() {
    let m = Module::parse(&ptx(KERNELS)).unwrap();
    let n = 4usize;
    let vals: Vec<f32> = (0..6 * n * n)
        .map(|i| {
            let (f, y, x) = (i / (n * n), i / n % n, i % n);
            (100 * f + 10 * y + x) as f32
        })
        .collect();
    // Edges of every face, two corners, and interior points (seamless changes nothing).
    let dirs: Vec<[f32; 3]> = vec![
        [-1.0, 0.2, 1.0],
        [1.0, -0.3, 1.0],
        [0.1, 1.0, 1.0],
        [0.35, -1.0, 1.0],
        [1.0, 0.6, -0.7],
        [-1.0, 1.0, 1.0],
        [1.0, -1.0, -1.0],
        [0.3, 0.1, 1.0],
        [0.97, 0.99, -0.2],
        [-0.6, -1.0, 0.99],
    ];
    let flat: Vec<f32> = dirs.iter().flatten().copied().collect();
    for seamless in [true, false] {
        let mut s = sampler(true, MipmapSampler::default());
        s.seamless_cubemap = seamless;
        let mut mem = ImageMemory {
            mem: TestMemory::new(),
            surfaces: Vec::new(),
            textures: vec![(
                1,
                Arc::new(TextureObject {
                    image: image(n as u64, n as u64, 6, false, true, &vals),
                    sampler: s,
                    levels: vec![],
                }),
            )],
        };
        let din = mem.mem.map(&f32s(&flat), false);
        let out = mem.mem.map(&vec![0u8; dirs.len() * 4], true);
        let k = m.kernel("cube").unwrap();
        for engine in [Engine::Interp, Engine::Jit] {
            let p = params(&m.kernels[k], &[1, din, out]);
            let mut l = launch(1, dirs.len() as u32, &p);
            l.engine = engine;
            run(&m, k, &l, &mem).unwrap();
            let got = to_f32s(&mem.mem.read(out));
            for (d, g) in dirs.iter().zip(&got) {
                // The face and its coordinates (ties: z, then y, then x), in 256ths.
                let major = if d[2].abs() >= d[0].abs() && d[2].abs() >= d[1].abs() {
                    2
                } else if d[1].abs() >= d[0].abs() {
                    1
                } else {
                    0
                };
                let f = FACES
                    .iter()
                    .position(|x| x.0 == major && (d[major] >= 0.0) == (x.1 > 0.0))
                    .unwrap();
                let (_, _, (sa, ss), (ta, ts)) = FACES[f];
                let mag = d[major].abs();
                let q8 = |c: f32| {
                    let u = (c / mag + 1.0) * 0.5 * n as f32;
                    ((u as f64 - 0.5) * 256.0 + 0.5).floor() as i64
                };
                let (qs, qt) = (q8(ss * d[sa]), q8(ts * d[ta]));
                let (i, j, a, b) = (qs >> 8, qt >> 8, qs & 255, qt & 255);
                let ab = (a * b + 128) >> 8;
                let w = [256 - a - b + ab, a - ab, b - ab, ab];
                let texel = |di: i64, dj: i64| -> Option<f64> {
                    let (ii, jj) = (i + di, j + dj);
                    if seamless {
                        seamless_texel(f, ii, jj, n)
                            .map(|(f2, x, y)| vals[(f2 * n + y) * n + x] as f64)
                    } else {
                        let c = |v: i64| v.clamp(0, n as i64 - 1) as usize;
                        Some(vals[(f * n + c(jj)) * n + c(ii)] as f64)
                    }
                };
                let mut t: Vec<Option<f64>> =
                    vec![texel(0, 0), texel(1, 0), texel(0, 1), texel(1, 1)];
                // The missing corner's texel: 85/256 of each texel beside it, 86/256 of the
                // diagonal one (the H200's tld4 gathers, cubemap_seamless).
                if let Some(m) = t.iter().position(Option::is_none) {
                    let v = |k: usize| t[k].unwrap();
                    t[m] = Some((85.0 * v(m ^ 1) + 85.0 * v(m ^ 2) + 86.0 * v(m ^ 3)) / 256.0);
                }
                let want = (t
                    .iter()
                    .zip(w)
                    .map(|(v, w)| v.unwrap() * w as f64)
                    .sum::<f64>()
                    / 256.0) as f32;
                assert_eq!(*g, want, "{engine:?} seamless={seamless} direction {d:?}");
            }
        }
    }
}
