//! Fuzzing targets, one per input surface of cumock, as plain functions of bytes:
//!
//! | target | surface | what a finding is |
//! |---|---|---|
//! | `ptx` | `cumock_ptx::Module::parse`, then every kernel run | a panic, a hang, an allocation past the limit |
//! | `fatbin` | `cumock_ptx::fatbin`'s readers, then the PTX they give | the same |
//! | `case` | the harness's case parser and expression evaluator | the same |
//! | `jit` | `cuModuleLoadDataEx` / `cuLibraryLoadData` with option arrays | the same, an internal error, a log buffer written past its size |
//! | `engines` | PTX text, every kernel run by the interpreter and by the compiled code | the same, any difference between the two (result, fault message, memory) |
//! | `api` | a byte-coded sequence of memory calls on the mock's model | the same, host memory outside the mock's reservations changed |
//!
//! Each target returns a small signature of what the input did (its error, its results),
//! which the deterministic engine ([`engine`]) uses as a poor man's coverage: an input
//! with a signature not seen before joins the pool that is mutated further. The
//! engine runs each input in a worker thread with a deadline, catches panics, and writes
//! a failing input to a file; `tests/targets.rs` replays the committed corpus and runs a
//! few thousand seeded mutations per target on stable Rust. The coverage-guided engine is
//! libFuzzer (feature `libfuzzer`, `ci/fuzz.sh`).

pub mod engine;
pub mod guard;
pub mod mutate;
pub mod targets;

#[global_allocator]
static ALLOC: guard::Guard = guard::Guard;

use std::path::PathBuf;

/// One input surface: its entry point, its mutations, and how long one input may take.
pub struct Target {
    pub name: &'static str,
    /// Runs one input; returns a signature of what it did.
    pub run: fn(&[u8]) -> u64,
    /// Mutates an input in place (the pool gives other inputs to splice from).
    pub mutate: fn(&mut Vec<u8>, &mut fastrand::Rng, &[Vec<u8>]),
    /// Inputs are cut to this length before mutation ends.
    pub max_len: usize,
}

pub const TARGETS: &[Target] = &[
    Target {
        name: "ptx",
        run: targets::ptx::run,
        mutate: targets::ptx::mutate,
        max_len: 32 << 10,
    },
    Target {
        name: "fatbin",
        run: targets::fatbin::run,
        mutate: targets::fatbin::mutate,
        max_len: 64 << 10,
    },
    Target {
        name: "case",
        run: targets::case::run,
        mutate: targets::case::mutate,
        max_len: 8 << 10,
    },
    Target {
        name: "jit",
        run: targets::jit::run,
        mutate: targets::jit::mutate,
        max_len: 512,
    },
    Target {
        name: "engines",
        run: targets::engines::run,
        mutate: targets::engines::mutate,
        max_len: 16 << 10,
    },
    Target {
        name: "api",
        run: targets::api::run,
        mutate: targets::api::mutate,
        max_len: 1024,
    },
];

pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// The `fuzz/` folder of the repository (corpus, crashes, dictionaries).
pub fn fuzz_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// FNV-1a: names corpus files by their content and folds signatures.
pub fn hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A signature from a few words: an error's kind and the start of its message, with
/// digits dropped (so that one error at many lines counts once).
pub fn signature(parts: &[&str]) -> u64 {
    let mut h = 0u64;
    for p in parts {
        let s: String = p.chars().filter(|c| !c.is_ascii_digit()).take(48).collect();
        h = h.rotate_left(17) ^ hash(s.as_bytes());
    }
    h
}

/// `CUMOCK_FUZZ_VERBOSE=1`: targets say what each input did (for `--replay`).
pub fn verbose() -> bool {
    static V: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *V.get_or_init(|| std::env::var_os("CUMOCK_FUZZ_VERBOSE").is_some())
}
