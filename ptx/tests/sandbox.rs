//! Issue 19, "a sandbox that holds": images and PTX built to make the reader hang, run
//! past its buffer, allocate the host away or overflow its stack. Each runs in a child
//! process with a memory limit and a deadline (`common::guarded`), so that a regression
//! fails here instead of hanging CI or calling the host's OOM killer.

mod common;
use common::guarded;
use cumock_ptx::fatbin::{self, FatbinError};
use cumock_ptx::{LoadErrorKind, Module};
use std::time::Duration;

/// Private memory a guarded test may use: far below what any of the attacks took.
const LIMIT: u64 = 512 << 20;
const DEADLINE: Duration = Duration::from_secs(60);

const FLAG_ZSTD: u64 = 0x8000;

/// A fatbin of one PTX entry for sm_90 as nvcc lays it out (see `fatbin.rs`).
fn fatbin_of(payload: &[u8], flags: u64, uncompressed_size: u64) -> Vec<u8> {
    let padded = payload.len().next_multiple_of(8);
    let mut entry = vec![0u8; 64];
    entry[0..2].copy_from_slice(&1u16.to_le_bytes());
    entry[4..8].copy_from_slice(&64u32.to_le_bytes());
    entry[8..16].copy_from_slice(&(padded as u64).to_le_bytes());
    let compressed = if flags & FLAG_ZSTD != 0 {
        payload.len()
    } else {
        0
    };
    entry[16..20].copy_from_slice(&(compressed as u32).to_le_bytes());
    entry[28..32].copy_from_slice(&90u32.to_le_bytes());
    entry[40..48].copy_from_slice(&flags.to_le_bytes());
    entry[56..64].copy_from_slice(&uncompressed_size.to_le_bytes());
    entry.extend_from_slice(payload);
    entry.resize(64 + padded, 0);
    let mut img = Vec::new();
    img.extend_from_slice(&fatbin::FATBIN_MAGIC.to_le_bytes());
    img.extend_from_slice(&1u16.to_le_bytes());
    img.extend_from_slice(&16u16.to_le_bytes());
    img.extend_from_slice(&(entry.len() as u64).to_le_bytes());
    img.extend_from_slice(&entry);
    img
}

/// A zstd frame (RFC 8878) of raw and RLE blocks, with a 128 KiB window and no content
/// size: `rle_blocks` blocks of 128 KiB of one byte each after `raw`: 4 bytes of payload
/// per 128 KiB of output, the shape of a decompression bomb.
fn zstd_frame(raw: &[u8], rle_blocks: usize) -> Vec<u8> {
    let mut f = 0xFD2F_B528u32.to_le_bytes().to_vec();
    f.push(0); // frame header descriptor: no content size, no checksum, not single-segment
    f.push(7 << 3); // window descriptor: 2^(10+7) = 128 KiB
    let header = |last: bool, kind: u32, size: usize| {
        let v = u32::from(last) | kind << 1 | (size as u32) << 3;
        v.to_le_bytes()[..3].to_vec()
    };
    f.extend(header(rle_blocks == 0, 0, raw.len()));
    f.extend_from_slice(raw);
    for i in 0..rle_blocks {
        f.extend(header(i + 1 == rle_blocks, 1, 128 << 10));
        f.push(b' ');
    }
    f
}

const PTX: &str = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n";

#[test]
fn a_zstd_entry_decompresses_to_its_declared_size_and_no_further() {
    guarded(
        "a_zstd_entry_decompresses_to_its_declared_size_and_no_further",
        LIMIT,
        DEADLINE,
        || {
            let n = PTX.len() as u64;
            let exact = fatbin_of(&zstd_frame(PTX.as_bytes(), 0), FLAG_ZSTD, n);
            assert_eq!(fatbin::select_ptx(&exact, 90).unwrap(), PTX);
            // One byte more than declared is refused, naming the declared size.
            let short = fatbin_of(&zstd_frame(PTX.as_bytes(), 0), FLAG_ZSTD, n - 1);
            let e = fatbin::select_ptx(&short, 90).unwrap_err();
            assert!(
                matches!(&e, FatbinError::Decompression(m) if m.contains(&format!("declared {}", n - 1))),
                "{e}"
            );
            // The bomb: 160 KB of payload that would decompress to 5 GiB, declaring 4 KiB.
            let bomb = fatbin_of(&zstd_frame(PTX.as_bytes(), 40_000), FLAG_ZSTD, 4096);
            assert!(bomb.len() < 200_000);
            let e = fatbin::select_ptx(&bomb, 90).unwrap_err();
            assert!(e.to_string().contains("more than its declared 4096"), "{e}");
            // Declaring the 5 GiB is refused before decompressing anything.
            let honest_bomb = fatbin_of(&zstd_frame(PTX.as_bytes(), 40_000), FLAG_ZSTD, 5 << 30);
            let e = fatbin::select_ptx(&honest_bomb, 90).unwrap_err();
            assert!(
                e.to_string()
                    .contains("declares 5368709120 uncompressed bytes"),
                "{e}"
            );
        },
    );
}

#[test]
fn b128_initialisers_are_zero_extended_values_and_a_scalar_one_is_refused() {
    let m = Module::parse(
        ".version 8.3\n.target sm_90\n.address_size 64\n\
         .visible .global .align 16 .b128 g[3] = {1, -1};\n\
         .visible .entry k() { ret; }\n",
    )
    .unwrap();
    let g = &m.globals[0];
    assert_eq!(g.size, 48);
    // As ptxas 13.0 lays it out (.nv.global.init): each value's 64 bits, zero-extended;
    // the third element, not initialised, costs nothing.
    let mut want = vec![0u8; 32];
    want[0] = 1;
    want[16..24].fill(0xff);
    assert_eq!(g.init, want);
    let e = Module::parse(
        ".version 8.3\n.target sm_90\n.address_size 64\n\
         .visible .global .align 16 .b128 s = 7;\n\
         .visible .entry k() { ret; }\n",
    )
    .unwrap_err();
    assert_eq!((e.line, e.kind), (4, LoadErrorKind::Semantic), "{e}");
}

#[test]
fn a_huge_initialised_global_costs_its_initialiser_not_its_size() {
    guarded(
        "a_huge_initialised_global_costs_its_initialiser_not_its_size",
        LIMIT,
        DEADLINE,
        || {
            // 4 GiB - 1 bytes, the largest variable PTX can declare here, and two values.
            let m = Module::parse(
                ".version 8.0\n.target sm_90\n.address_size 64\n\
                 .visible .global .align 4 .b8 big[4294967295] = {1, 2};\n\
                 .visible .entry k() { ret; }\n",
            )
            .unwrap();
            assert_eq!(m.globals[0].size, 4294967295);
            assert_eq!(m.globals[0].init, [1, 2]);
        },
    );
}

#[test]
fn deep_nesting_and_long_call_chains_are_errors_or_loads_never_a_stack_overflow() {
    guarded(
        "deep_nesting_and_long_call_chains_are_errors_or_loads_never_a_stack_overflow",
        LIMIT,
        DEADLINE,
        || {
            let head = ".version 8.0\n.target sm_90\n.address_size 64\n";
            // 30,000 nested initialiser braces: an error at the declaration's line.
            let deep = format!(
                "{head}.global .u32 x[1] = {}1{};\n",
                "{".repeat(30_000),
                "}".repeat(30_000)
            );
            let e = Module::parse(&deep).unwrap_err();
            assert_eq!(e.line, 4, "{e}");
            assert!(e.message.contains("nested too deeply"), "{e}");
            // 30,000 nested blocks in a body: scopes, each closed; it loads.
            let blocks = format!(
                "{head}.visible .entry k() {{ {} ret; {} }}\n",
                "{".repeat(30_000),
                "}".repeat(30_000)
            );
            Module::parse(&blocks).unwrap();
            // 20,000 functions each calling the next, and the last calling the first: the
            // cycle is found without recursing once per function, and the endless
            // recursion runs into the stack limit (CU_LIMIT_STACK_SIZE), never the host's.
            let n = 20_000;
            let mut chain = head.to_owned();
            for i in 0..n {
                chain.push_str(&format!(
                    ".func f{i}()\n{{ call.uni f{}, (); ret; }}\n",
                    (i + 1) % n
                ));
            }
            chain.push_str(".visible .entry k() { call.uni f0, (); ret; }\n");
            let m = Module::parse(&chain).unwrap();
            let mem = common::TestMemory::new();
            for engine in [cumock_ptx::Engine::Interp, cumock_ptx::Engine::Jit] {
                let mut l = common::launch(1, 32, &[]);
                l.engine = engine;
                let f = cumock_ptx::run(&m, 0, &l, &mem).unwrap_err();
                assert!(f.detail.contains("call stack overflow"), "{f}");
                // Far deeper with a larger stack, until the step limit.
                l.stack_bytes = 1 << 30;
                l.step_limit = Some(1 << 14);
                let f = cumock_ptx::run(&m, 0, &l, &mem).unwrap_err();
                assert_eq!(f.kind, cumock_ptx::FaultKind::StepLimit, "{f}");
            }
        },
    );
}
