//! Fatbins as nvcc 13.0 writes them: multi-architecture, compressed (zstd by default,
//! LZ4 with `-compress-mode=speed`), uncompressed, SASS only; and damaged ones.

mod common;
use common::*;
use cumock_ptx::fatbin::{self, FatbinError};
use cumock_ptx::Module;

const KERNEL: &str = r#"
extern "C" __global__ void scale(float* x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}
"#;

const MULTI: &[&str] = &[
    "-fatbin",
    "-gencode",
    "arch=compute_80,code=compute_80",
    "-gencode",
    "arch=compute_90,code=compute_90",
];

fn fatbin_with(extra: &[&str]) -> Vec<u8> {
    let mut args = MULTI.to_vec();
    args.extend_from_slice(extra);
    nvcc(KERNEL, &args)
}

fn target_of(ptx: &str) -> &str {
    ptx.lines()
        .find_map(|l| l.strip_prefix(".target "))
        .unwrap_or("")
}

#[test]
fn picks_the_highest_ptx_not_above_the_device() {
    let img = fatbin_with(&[]);
    assert!(fatbin::is_fatbin(&img) && !fatbin::is_elf(&img));
    assert_eq!(target_of(&fatbin::select_ptx(&img, 90).unwrap()), "sm_90");
    assert_eq!(target_of(&fatbin::select_ptx(&img, 100).unwrap()), "sm_90");
    assert_eq!(target_of(&fatbin::select_ptx(&img, 86).unwrap()), "sm_80");
    assert!(matches!(
        fatbin::select_ptx(&img, 75),
        Err(FatbinError::NoCompatiblePtx { .. })
    ));
}

#[test]
fn arch_specific_ptx_runs_on_its_architecture_only() {
    // nvcc 13's `-arch=sm_90a`: compute_90 PTX, compute_90a PTX and sm_90a SASS.
    let img = nvcc(KERNEL, &["-fatbin", "-arch=sm_90a"]);
    assert_eq!(target_of(&fatbin::select_ptx(&img, 90).unwrap()), "sm_90a");
    assert_eq!(target_of(&fatbin::select_ptx(&img, 100).unwrap()), "sm_90");
}

#[test]
fn every_compression_gives_the_same_ptx_and_it_runs() {
    let plain = fatbin_with(&["-Xfatbin", "-compress-all", "-compress-mode=none"]);
    let lz4 = fatbin_with(&["-Xfatbin", "-compress-all", "-compress-mode=speed"]);
    let zstd = fatbin_with(&["-Xfatbin", "-compress-all", "-compress-mode=size"]);
    let flags = |img: &[u8]| {
        fatbin::entries(img)
            .unwrap()
            .iter()
            .map(|e| e.flags & 0xa000)
            .collect::<Vec<_>>()
    };
    assert_eq!(flags(&plain), [0, 0]);
    assert_eq!(flags(&lz4), [0x2000, 0x2000]);
    assert_eq!(flags(&zstd), [0x8000, 0x8000]);
    let p = fatbin::select_ptx(&plain, 90).unwrap();
    assert_eq!(p, fatbin::select_ptx(&lz4, 90).unwrap());
    assert_eq!(p, fatbin::select_ptx(&zstd, 90).unwrap());
    assert!(p.contains(".entry scale("), "{p}");

    let m = Module::parse(&p).unwrap();
    let k = m.kernel("scale").unwrap();
    let mut mem = TestMemory::new();
    let x = mem.map(&f32s(&[1.0, 2.0, 3.0]), true);
    let prm = params(&m.kernels[k], &[x, 2.5f32.to_bits() as u64, 3]);
    cumock_ptx::run(&m, k, &launch(1, 32, &prm), &mem).unwrap();
    assert_eq!(to_f32s(&mem.read(x)), [2.5, 5.0, 7.5]);
}

#[test]
fn sass_only_is_refused_naming_the_way_out() {
    let img = nvcc(
        KERNEL,
        &["-fatbin", "-gencode", "arch=compute_90,code=sm_90"],
    );
    let e = fatbin::select_ptx(&img, 90).unwrap_err();
    assert_eq!(e, FatbinError::SassOnly { archs: vec![90] });
    let msg = e.to_string();
    assert!(
        msg.contains("sm_90")
            && msg.contains("-gencode arch=compute_90,code=compute_90")
            && msg.contains("`-rdc=true`")
            && msg.contains("cumock's own runtime then links"),
        "{msg}"
    );
    let cubin = nvcc(KERNEL, &["-cubin", "-arch=sm_90"]);
    assert!(fatbin::is_elf(&cubin) && !fatbin::is_fatbin(&cubin));
}

#[test]
fn a_wrapper_followed_by_its_fatbin_is_read_and_one_pointing_elsewhere_is_refused() {
    let img = fatbin_with(&[]);
    let mut wrapped = Vec::new();
    wrapped.extend_from_slice(&0x466243B1u32.to_le_bytes());
    wrapped.extend_from_slice(&1u32.to_le_bytes());
    wrapped.extend_from_slice(&0u64.to_le_bytes());
    assert!(fatbin::is_fatbin(&wrapped));
    assert!(
        matches!(fatbin::select_ptx(&wrapped, 90), Err(FatbinError::Malformed(m)) if m.contains("pointer"))
    );
    wrapped.extend_from_slice(&img);
    assert_eq!(
        fatbin::select_ptx(&wrapped, 90).unwrap(),
        fatbin::select_ptx(&img, 90).unwrap()
    );
}

#[test]
fn every_truncation_is_malformed_never_a_panic() {
    for img in [
        fatbin_with(&[]),
        fatbin_with(&["-Xfatbin", "-compress-all", "-compress-mode=speed"]),
    ] {
        let full_len = fatbin::entries(&img).map(|_| img.len()).unwrap();
        for n in 0..full_len {
            // Trailing padding may go without harm; anything that cuts an entry must fail.
            if let Ok(p) = fatbin::select_ptx(&img[..n], 90) {
                assert!(
                    n >= full_len - 16 && !p.is_empty(),
                    "prefix {n} of {full_len} accepted"
                );
            }
        }
    }
}

#[test]
fn random_mutations_never_panic_or_hang() {
    let seeds = [
        fatbin_with(&[]),
        fatbin_with(&["-Xfatbin", "-compress-all", "-compress-mode=speed"]),
    ];
    let mut rng = fastrand::Rng::with_seed(11);
    let start = std::time::Instant::now();
    for round in 0..3000 {
        let mut img = seeds[round % 2].clone();
        for _ in 0..rng.usize(1..8) {
            let i = rng.usize(..img.len());
            match rng.u8(..4) {
                0 => img[i] = rng.u8(..),
                1 => img[i] ^= 1 << rng.u8(..8),
                // Sizes and flags live in the headers: hit them often.
                2 => {
                    let j = rng.usize(..img.len().min(200));
                    img[j] = rng.u8(..)
                }
                _ => img.truncate(i.max(1)),
            }
        }
        let _ = fatbin::select_ptx(&img, 90);
        let garbage: Vec<u8> = (0..rng.usize(..300)).map(|_| rng.u8(..)).collect();
        let _ = fatbin::select_ptx(&garbage, 90);
    }
    assert!(
        start.elapsed().as_secs() < 60,
        "mutation rounds took {:?}",
        start.elapsed()
    );
}
