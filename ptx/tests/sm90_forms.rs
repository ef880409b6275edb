//! sm_90 forms of PTX ISA 9.0 (issue 21): `.b128` registers, half-precision and vector
//! atomics, `createpolicy` with `.L2::cache_hint` operands, `min`/`max` `.xorsign.abs`,
//! packed 16-bit integers and `.relu` integer min/max, saturated and flushing half
//! arithmetic and `cvt` `.relu`/`.satfinite` to halves. Expectations are
//! the IEEE encodings worked out by hand from the ISA's definitions; the H200's bits are
//! recorded by the corpus (ptx/corpus/sm90_forms.cu).

mod common;
use common::*;
use cumock_ptx::{run, Engine, LoadErrorKind, Module};

const HEAD: &str = ".version 9.0\n.target sm_90\n.address_size 64\n";

/// Runs `body` as a kernel of `threads` threads (one block) with `out` (`words` words,
/// initially `init`, zero-padded) in %rd1 and %r0 = %tid.x; returns `out`.
fn run_words(body: &str, threads: u32, init: &[u32], words: usize) -> Result<Vec<u32>, String> {
    let src = format!(
        "{HEAD}.visible .entry k(.param .u64 out)\n{{\n.reg .b64 %rd<16>;\n.reg .b32 %r<32>;\n\
         .reg .b16 %h<16>;\n.reg .pred %p<8>;\n.reg .f32 %f<8>;\n.reg .b128 %q<6>;\n\
         .shared .align 16 .b8 sm[256];\n.local .align 16 .b8 lm[32];\n\
         ld.param.u64 %rd1, [out];\nmov.u32 %r0, %tid.x;\n{body}\nret;\n}}\n"
    );
    let m = Module::parse(&src).map_err(|e| format!("{e}\n{src}"))?;
    let mut results = Vec::new();
    // The interpreter and the compiled engine (which hands these forms to the
    // interpreter's code) must agree; atomics of many threads may differ only in order,
    // so those tests check what does not depend on it.
    for engine in [Engine::Interp, Engine::Jit] {
        let mut mem = TestMemory::new();
        let mut bytes: Vec<u8> = init.iter().flat_map(|w| w.to_le_bytes()).collect();
        bytes.resize(words * 4, 0);
        let out = mem.map(&bytes, true);
        let p = params(&m.kernels[0], &[out]);
        let mut l = launch(1, threads, &p);
        l.engine = engine;
        results.push(
            run(&m, 0, &l, &mem)
                .map_err(|f| format!("{:?}: {f}", f.kind))
                .map(|_| to_u32s(&mem.read(out))[..words].to_vec()),
        );
    }
    let jit = results.pop().unwrap();
    let interp = results.pop().unwrap();
    if threads == 1 {
        assert_eq!(interp, jit, "the engines differ");
    }
    jit
}

fn run_ok(body: &str, threads: u32, init: &[u32], words: usize) -> Vec<u32> {
    run_words(body, threads, init, words).unwrap_or_else(|e| panic!("{e}"))
}

fn load_error(body: &str) -> cumock_ptx::LoadError {
    let src = format!(
        "{HEAD}.visible .entry k(.param .u64 out)\n{{\n.reg .b64 %rd<8>;\n.reg .b32 %r<8>;\n\
         .reg .b16 %h<8>;\n.reg .f32 %f<4>;\n.reg .b128 %q<2>;\n.shared .b8 sm[64];\n{body}\nret;\n}}\n"
    );
    Module::parse(&src).expect_err(body)
}

#[test]
fn b128_registers_pack_unpack_load_and_store_in_every_space() {
    // Global: 16 bytes at 0 copied to 16, through mov packs and unpacks; shared and local
    // round trips to 32 and 48; words 16.. keep the unpacked halves swapped.
    let body = "ld.global.b128 %q1, [%rd1];\n\
                mov.b128 {%rd2, %rd3}, %q1;\n\
                mov.b128 %q2, {%rd3, %rd2};\n\
                mov.b128 %q3, %q1;\n\
                st.global.b128 [%rd1+16], %q3;\n\
                st.shared.b128 [sm+16], %q2;\n\
                ld.shared.b128 %q4, [sm+16];\n\
                st.global.b128 [%rd1+32], %q4;\n\
                st.local.b128 [lm], %q1;\n\
                ld.local.b128 %q5, [lm];\n\
                st.global.b128 [%rd1+48], %q5;\n\
                mov.b128 %q0, 7;\n\
                st.global.b128 [%rd1+64], %q0;";
    let init = [0x1111_1111, 0x2222_2222, 0x3333_3333, 0x4444_4444];
    let out = run_ok(body, 1, &init, 20);
    assert_eq!(out[4..8], init);
    // Halves swapped: the high 64 bits (words 2, 3) first.
    assert_eq!(
        out[8..12],
        [0x3333_3333, 0x4444_4444, 0x1111_1111, 0x2222_2222]
    );
    assert_eq!(out[12..16], init);
    assert_eq!(out[16..20], [7, 0, 0, 0]);
}

#[test]
fn b128_accesses_must_be_16_byte_aligned() {
    let e = run_words("ld.global.b128 %q1, [%rd1+8];", 1, &[], 8).unwrap_err();
    assert!(e.starts_with("MisalignedAddress"), "{e}");
    let e = run_words("atom.global.exch.b128 %q1, [%rd1+8], %q1;", 1, &[], 8).unwrap_err();
    assert!(e.starts_with("MisalignedAddress"), "{e}");
}

#[test]
fn b128_registers_only_go_where_the_isa_takes_them() {
    for body in [
        "add.u64 %rd1, %q1, 1;",
        "mov.b64 %rd1, %q1;",
        "ld.global.v2.b128 {%q0, %q1}, [%rd1];",
        "shfl.sync.idx.b32 %r1, %q1, 0, 31, -1;",
        "red.global.exch.b128 [%rd1], %q1;",
        "atom.global.add.b128 %q0, [%rd1], %q1;",
    ] {
        let e = load_error(body);
        assert!(
            matches!(e.kind, LoadErrorKind::Semantic | LoadErrorKind::Unsupported),
            "{body}: {e}"
        );
    }
    // An immediate with bit 63 set: 128-bit extension undocumented, refused.
    let e = load_error("mov.b128 %q0, 0x8000000000000000;");
    assert_eq!(e.kind, LoadErrorKind::Unsupported, "{e}");
}

#[test]
fn b128_cas_and_exch_swap_all_sixteen_bytes_or_nothing() {
    // Words 0..4 the memory, 4..8 cas that matches, 8..12 cas that fails (old returned,
    // memory unchanged), shared exch at 12..16 (old), shared value after at 16..20.
    let body = "mov.b128 %q1, {%rd0, %rd0};\n\
                ld.global.b128 %q1, [%rd1];\n\
                mov.b64 %rd2, 0x0000000600000005;\n\
                mov.b64 %rd3, 0x0000000800000007;\n\
                mov.b128 %q2, {%rd2, %rd3};\n\
                atom.global.cas.b128 %q3, [%rd1], %q1, %q2;\n\
                st.global.b128 [%rd1+16], %q3;\n\
                atom.global.cas.b128 %q3, [%rd1], %q1, 9;\n\
                st.global.b128 [%rd1+32], %q3;\n\
                st.shared.b128 [sm], %q1;\n\
                atom.shared.exch.b128 %q4, [sm], %q2;\n\
                st.global.b128 [%rd1+48], %q4;\n\
                ld.shared.b128 %q4, [sm];\n\
                st.global.b128 [%rd1+64], %q4;";
    let out = run_ok(body, 1, &[1, 2, 3, 4], 20);
    assert_eq!(out[0..4], [5, 6, 7, 8], "the swap happened");
    assert_eq!(out[4..8], [1, 2, 3, 4], "cas returns the old value");
    assert_eq!(
        out[8..12],
        [5, 6, 7, 8],
        "a failed cas returns what it found"
    );
    assert_eq!(out[12..16], [1, 2, 3, 4]);
    assert_eq!(out[16..20], [5, 6, 7, 8]);
}

#[test]
fn b128_exchanges_of_many_threads_form_one_chain_and_never_tear() {
    // Each of 256 threads exchanges (t+1, !(t+1)) into one 16-byte cell and stores what it
    // got: the olds and the final value are the initial value and every thread's exactly
    // once, each with its halves matching.
    let body = "add.u32 %r1, %r0, 1;\n\
                cvt.u64.u32 %rd2, %r1;\n\
                not.b64 %rd3, %rd2;\n\
                mov.b128 %q1, {%rd2, %rd3};\n\
                atom.global.exch.b128 %q2, [%rd1], %q1;\n\
                mul.wide.u32 %rd4, %r1, 16;\n\
                add.u64 %rd4, %rd1, %rd4;\n\
                st.global.b128 [%rd4], %q2;";
    let init = [0, 0, u32::MAX, u32::MAX];
    let out = run_ok(body, 256, &init, 4 * 257);
    let mut seen: Vec<u64> = out
        .chunks(4)
        .map(|c| {
            let (lo, hi) = (
                c[0] as u64 | (c[1] as u64) << 32,
                c[2] as u64 | (c[3] as u64) << 32,
            );
            assert_eq!(hi, !lo, "a torn 128-bit value: {c:x?}");
            lo
        })
        .collect();
    seen.sort();
    assert_eq!(seen, (0..=256).collect::<Vec<u64>>());
}

#[test]
fn cas_b16_swaps_its_own_half_word_only() {
    // Memory 0xbbbb_aaaa: cas at +2 (0xbbbb -> 0x1234), then a failing cas at +0.
    let body = "atom.global.cas.b16 %h1, [%rd1+2], 0xbbbb, 0x1234;\n\
                atom.global.cas.b16 %h2, [%rd1], 0x0001, 0x5678;\n\
                st.shared.u16 [sm], 0x00ff;\n\
                atom.shared.cas.b16 %h3, [sm], 0x00ff, 0xff00;\n\
                ld.shared.u16 %h4, [sm];\n\
                mov.b32 %r1, {%h1, %h2};\n\
                mov.b32 %r2, {%h3, %h4};\n\
                st.global.v2.u32 [%rd1+8], {%r1, %r2};";
    let out = run_ok(body, 1, &[0xbbbb_aaaa], 4);
    assert_eq!(out, [0x1234_aaaa, 0, 0xaaaa_bbbb, 0xff00_00ff]);
}

#[test]
fn half_add_noftz_rounds_once_and_keeps_subnormals() {
    // f16: 1.0 + 2.0 = 3.0 (0x4200); the least subnormal doubled (0x0002); 65504 + 16 ties
    // up to infinity (0x7bff is odd); -0 + -0 = -0. bf16: 1 + 2^-8 ties to even (1.0);
    // 1 + 3*2^-9 rounds up (0x3f81); f16x2 and bf16x2 per half.
    let body = "atom.global.add.noftz.f16 %h1, [%rd1], 0x4000;\n\
                atom.global.add.noftz.f16 %h1, [%rd1+2], 0x0001;\n\
                atom.global.add.noftz.f16 %h1, [%rd1+4], 0x4c00;\n\
                red.global.add.noftz.f16 [%rd1+6], 0x8000;\n\
                atom.global.add.noftz.bf16 %h2, [%rd1+8], 0x3b80;\n\
                red.global.add.noftz.bf16 [%rd1+10], 0x3bc0;\n\
                atom.global.add.noftz.f16x2 %r1, [%rd1+12], 0x3c00bc00;\n\
                red.shared.add.noftz.bf16x2 [sm], 0x3f80bf80;\n\
                ld.shared.u32 %r2, [sm];\n\
                st.global.v2.u32 [%rd1+16], {%r1, %r2};";
    let init = [0x0001_3c00, 0x8000_7bff, 0x3f80_3f80, 0x3c00_3c00];
    let out = run_ok(body, 1, &init, 6);
    assert_eq!(out[0], 0x0002_4200);
    assert_eq!(out[1], 0x8000_7c00);
    assert_eq!(out[2], 0x3f81_3f80);
    // 1 + 1 = 2 (high), 1 - 1 = +0 (low).
    assert_eq!(out[3], 0x4000_0000);
    assert_eq!(out[4], 0x3c00_3c00, "the old value");
    // Shared started at 0: 0 + 1 (high), 0 - 1 (low).
    assert_eq!(out[5], 0x3f80_bf80);
}

#[test]
fn many_threads_adding_halves_lose_no_update() {
    // 256 threads add 1.0 to one f16 (256.0 = 0x5c00 exactly) and 0.5 to each bf16 of a
    // pair (128.0 = 0x4300); and add (1, 2, 3, 4) to a v4.f32 (256, 512, 768, 1024).
    let body = "red.global.add.noftz.f16 [%rd1], 0x3c00;\n\
                red.global.add.noftz.bf16x2 [%rd1+4], 0x3f003f00;\n\
                red.global.v4.f32.add [%rd1+16], {0f3F800000, 0f40000000, 0f40400000, 0f40800000};";
    let out = run_ok(body, 256, &[], 8);
    assert_eq!(out[..2], [0x5c00, 0x4300_4300]);
    assert_eq!(out[4..8], [256f32, 512.0, 768.0, 1024.0].map(f32::to_bits));
}

#[test]
fn vector_atomics_return_every_old_element_and_apply_per_element() {
    // v8.f16 max: NaN operand gives the memory's value; v2.f16x2 min; v2.f32 add flushes
    // subnormals (the ISA's global atom.add.f32).
    let body = "atom.global.v8.f16.max.noftz {%h0, %h1, %h2, %h3, %h4, %h5, %h6, %h7}, [%rd1], \
                {0x4000, 0x4000, 0x7e00, 0x8000, 0xfc00, 0x0001, 0x3c00, 0x0000};\n\
                mov.b32 %r1, {%h0, %h1};\n\
                mov.b32 %r2, {%h6, %h7};\n\
                st.global.v2.u32 [%rd1+64], {%r1, %r2};\n\
                atom.global.v2.f16x2.min.noftz {%r3, %r4}, [%rd1+16], {0xbc003c00, 0x7c00fc00};\n\
                st.global.v2.u32 [%rd1+72], {%r3, %r4};\n\
                red.global.v2.f32.add [%rd1+24], {0f00000001, 0f3F800000};\n\
                red.global.v2.bf16.add.noftz [%rd1+32], {0x3f80, 0x4000};\n\
                red.global.v4.bf16x2.min.noftz [%rd1+48], {0, 0xffffffff, 0x80000000, 1};";
    let init = [
        0x3c00_3c00, // f16 1.0, 1.0
        0x3c00_3c00, // 1.0, 1.0  (NaN operand, -0 vs 1)
        0x8000_3c00, // 1.0, -0   (-inf, least subnormal)
        0x8000_7e00, // NaN, -0   (1.0, +0)
        0x3c00_0000, // f16x2: +0 | 1.0
        0x0000_0000, // 0, 0
        0x0000_0001, // f32 least subnormal
        0x3f80_0000, // f32 1.0
        0x0000_3f80, // bf16 1.0, 0
        0,
        0,
        0,
        0x3f80_3f80, // bf16x2 (1, 1), (1, 1), (1, 1), (1, 1)
        0x3f80_3f80,
        0x3f80_3f80,
        0x3f80_3f80,
    ];
    let out = run_ok(body, 1, &init, 22);
    assert_eq!(
        out[..4],
        [0x4000_4000, 0x3c00_3c00, 0x0001_3c00, 0x0000_3c00],
        "max per element: 2 > 1; a NaN operand keeps 1.0; 1 > -inf, +subnormal > -0; \
         a NaN in memory gives the operand 1.0, +0 > -0"
    );
    // (+0, 1.0) min (1.0, -1.0); (+0, +0) min (-inf, +inf).
    assert_eq!(out[4..6], [0xbc00_0000, 0x0000_fc00], "f16x2 min per half");
    assert_eq!(out[6..8], [0, 0x4000_0000], "a subnormal sum flushes to +0");
    assert_eq!(out[8], 0x4000_4000, "bf16 1+1 = 2, 0+2 = 2");
    // (1, 1) min: (+0, +0); NaNs (kept 1.0); (-0, +0); (+0, least subnormal).
    assert_eq!(out[12..16], [0, 0x3f80_3f80, 0x8000_0000, 0x0000_0001]);
    assert_eq!(
        out[16..18],
        [0x3c00_3c00, 0x8000_7e00],
        "old elements 0, 1 and 6, 7"
    );
    assert_eq!(out[18..20], [0x3c00_0000, 0x0000_0000], "olds of the min");
}

#[test]
fn atom_forms_the_isa_leaves_out_are_refused() {
    for body in [
        "atom.global.exch.b16 %h1, [%rd1], %h2;",
        "atom.global.add.f16 %h1, [%rd1], %h2;",
        "atom.global.min.noftz.f16 %h1, [%rd1], %h2;",
        "atom.global.v2.f32.min {%f1, %f2}, [%rd1], {%f1, %f2};",
        "atom.global.v8.f16x2.add.noftz {%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7}, [%rd1], {%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7};",
        "atom.shared.v2.f32.add {%f1, %f2}, [%r1], {%f1, %f2};",
        "atom.global.v4.f32.add {%f1, %f2}, [%rd1], {%f1, %f2};",
        "atom.global.add.noftz.f32 %f1, [%rd1], %f2;",
    ] {
        let e = load_error(body);
        assert!(
            matches!(e.kind, LoadErrorKind::Semantic | LoadErrorKind::Unsupported),
            "{body}: {e}"
        );
    }
}

#[test]
fn cache_policies_are_created_and_their_hints_change_no_result() {
    let body = "createpolicy.fractional.L2::evict_last.b64 %rd5, 0.5;\n\
                createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 %rd6;\n\
                createpolicy.fractional.L2::evict_first.b64 %rd7, 0f3F000000;\n\
                createpolicy.range.global.L2::evict_last.L2::evict_first.b64 %rd8, [%rd1], 256, 1024;\n\
                createpolicy.cvt.L2.b64 %rd9, %rd5;\n\
                ld.global.L2::cache_hint.u32 %r1, [%rd1], %rd5;\n\
                st.global.L2::cache_hint.u32 [%rd1+4], %r1, %rd6;\n\
                atom.global.add.L2::cache_hint.u32 %r2, [%rd1+8], 5, %rd8;\n\
                red.global.add.L2::cache_hint.u32 [%rd1+8], 1, %rd9;\n\
                ld.L2::cache_hint.v2.u32 {%r3, %r4}, [%rd1], %rd7;\n\
                st.global.v2.u32 [%rd1+16], {%r2, %r4};\n\
                setp.eq.u64 %p1, %rd5, %rd9;\n\
                selp.u32 %r5, 1, 0, %p1;\n\
                st.global.u32 [%rd1+24], %r5;";
    let out = run_ok(body, 1, &[41, 0, 10], 7);
    assert_eq!(out, [41, 41, 16, 0, 10, 41, 1]);
}

#[test]
fn cache_hints_outside_global_memory_and_bad_policies_are_load_errors() {
    for body in [
        "ld.shared.L2::cache_hint.u32 %r1, [sm], %rd1;",
        "ld.global.L2::cache_hint.u32 %r1, [%rd1];",
        "createpolicy.fractional.L2::evict_last.b64 %rd1, 1.5;",
        "createpolicy.fractional.L2::evict_last.b64 %rd1, 0f80000000;",
        "createpolicy.fractional.L2::evict_last.b64 %rd1, 0.0;",
        "createpolicy.fractional.L2::evict_normal.L2::evict_last.b64 %rd1, 0.5;",
        "createpolicy.fractional.L2::evict_last.b32 %r1, 0.5;",
    ] {
        let e = load_error(body);
        assert!(
            matches!(e.kind, LoadErrorKind::Semantic | LoadErrorKind::Unsupported),
            "{body}: {e}"
        );
    }
}

#[test]
fn xorsign_abs_takes_the_xor_of_the_signs_and_the_min_max_of_magnitudes() {
    // f32: min(|-2|, |3|) = 2 with sign 1; max: 3 with sign 1; +0, -0: zero with sign 1;
    // a negative NaN and 3: 3 with sign 1 (NaN ignored); with .NaN: the canonical NaN;
    // .ftz: a subnormal flushed, max(+0, +0) with the signs' XOR 1: -0.
    let body = "min.xorsign.abs.f32 %f1, 0fC0000000, 0f40400000;\n\
                max.xorsign.abs.f32 %f2, 0fC0000000, 0f40400000;\n\
                min.xorsign.abs.f32 %f3, 0f00000000, 0f80000000;\n\
                max.xorsign.abs.f32 %f4, 0fFFC00000, 0f40400000;\n\
                min.NaN.xorsign.abs.f32 %f5, 0fFFC00000, 0f40400000;\n\
                max.ftz.xorsign.abs.f32 %f6, 0f00000001, 0f80000000;\n\
                st.global.v4.f32 [%rd1], {%f1, %f2, %f3, %f4};\n\
                st.global.v2.f32 [%rd1+16], {%f5, %f6};\n\
                min.xorsign.abs.f16 %h1, 0xc000, 0x4200;\n\
                max.xorsign.abs.bf16 %h2, 0xc000, 0xc040;\n\
                mov.b32 %r1, {%h1, %h2};\n\
                max.xorsign.abs.f16x2 %r2, 0x7e00bc00, 0x3c00c200;\n\
                min.NaN.xorsign.abs.bf16x2 %r3, 0x7fc0bf80, 0x3f803f80;\n\
                st.global.v4.u32 [%rd1+32], {%r1, %r2, %r3, %r3};";
    let out = run_ok(body, 1, &[], 12);
    assert_eq!(
        out[..6],
        [
            0xc000_0000,
            0xc040_0000,
            0x8000_0000,
            0xc040_0000,
            0x7fff_ffff,
            0x8000_0000
        ]
    );
    // f16 -2 (min of 2, 3; sign 1); bf16 max(|-2|, |-3|) = 3, sign 0.
    assert_eq!(out[8], 0x4040_c000);
    // f16x2: high NaN vs 1.0 -> 1.0, sign 0; low max(|-1|, |-3|) = 3, sign 1^1 = 0.
    assert_eq!(out[9], 0x3c00_4200);
    // bf16x2 .NaN: high NaN (canonical 0x7fff); low min(1, 1) = 1 sign 1.
    assert_eq!(out[10], 0x7fff_bf80);
    assert!(load_error("min.abs.f32 %f1, %f2, %f3;")
        .message
        .contains("min.abs"));
}

#[test]
fn saturated_half_arithmetic_clamps_to_zero_and_one() {
    // 0.5*0.5+0.75 = 1.0; 2*2+1 = 5 -> 1.0; -1*1+0 -> +0; NaN -> +0; 0.25*0.5 = 0.125;
    // -0 -> +0; f16x2 per half; add.sat and mul.sat likewise.
    let body = "fma.rn.sat.f16 %h1, 0x3800, 0x3800, 0x3a00;\n\
                fma.rn.sat.f16 %h2, 0x4000, 0x4000, 0x3c00;\n\
                fma.rn.sat.f16 %h3, 0xbc00, 0x3c00, 0x0000;\n\
                fma.rn.sat.f16 %h4, 0x7e00, 0x3c00, 0x0000;\n\
                fma.rn.sat.f16 %h5, 0x3400, 0x3800, 0x0000;\n\
                fma.rn.sat.f16 %h6, 0x8000, 0x3c00, 0x8000;\n\
                mov.b32 %r1, {%h1, %h2};\n\
                mov.b32 %r2, {%h3, %h4};\n\
                mov.b32 %r3, {%h5, %h6};\n\
                fma.rn.sat.f16x2 %r4, 0x3c00bc00, 0x38003c00, 0x00003c00;\n\
                add.rn.sat.f16 %h7, 0x3c00, 0x3c00;\n\
                mul.sat.f16 %h8, 0xbc00, 0x3800;\n\
                mov.b32 %r5, {%h7, %h8};\n\
                st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};\n\
                st.global.u32 [%rd1+16], %r5;";
    let out = run_ok(body, 1, &[], 5);
    assert_eq!(
        out,
        [
            0x3c00_3c00,
            0x0000_0000,
            0x0000_3000,
            0x3800_0000,
            0x0000_3c00
        ]
    );
    assert!(load_error("fma.rn.sat.bf16 %h1, %h2, %h3, %h4;")
        .message
        .contains("fma"));
}

#[test]
fn fma_oob_gives_zero_where_an_operand_is_the_oob_nan() {
    // The OOB NaN (0x7ff7, a NaN-filling tensor map's fill, or 0xfff7) in a or b makes +0;
    // in c, and any other NaN, it is an ordinary NaN operand (recorded on the H200:
    // corpus fma_oob); the halves of x2 forms apart; `.relu`.
    let body = "fma.rn.oob.f16 %h1, 0x3c00, 0x4000, 0x3c00;\n\
                fma.rn.oob.f16 %h2, 0xfff7, 0x4000, 0x3c00;\n\
                fma.rn.oob.f16 %h3, 0x3c00, 0x7ff7, 0x3c00;\n\
                fma.rn.oob.f16 %h4, 0x3c00, 0x4000, 0x7ff7;\n\
                fma.rn.oob.f16 %h5, 0x7fff, 0x4000, 0x3c00;\n\
                fma.rn.oob.relu.f16 %h6, 0xbc00, 0x3c00, 0x0000;\n\
                mov.b32 %r1, {%h1, %h2};\n\
                mov.b32 %r2, {%h3, %h4};\n\
                mov.b32 %r3, {%h5, %h6};\n\
                fma.rn.oob.f16x2 %r4, 0x3c007ff7, 0x40003c00, 0x3c003c00;\n\
                fma.rn.oob.bf16 %h7, 0x3f80, 0x4000, 0x3f80;\n\
                fma.rn.oob.bf16 %h8, 0x3f80, 0x4000, 0x7ff7;\n\
                mov.b32 %r5, {%h7, %h8};\n\
                fma.rn.oob.relu.bf16x2 %r6, 0x7ff73f80, 0x40004000, 0x3f803f80;\n\
                fma.rn.oob.relu.bf16x2 %r7, 0x3f80bf80, 0x40003f80, 0x3f800000;\n\
                st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};\n\
                st.global.v2.u32 [%rd1+16], {%r5, %r6};\n\
                st.global.u32 [%rd1+24], %r7;";
    let out = run_ok(body, 1, &[], 7);
    // 1*2+1 = 3 (0x4200); OOB a (negative) -> 0.
    assert_eq!(out[0], 0x0000_4200);
    // OOB b -> 0; OOB c is a NaN.
    let is_nan = |h: u32| h & 0x7c00 == 0x7c00 && h & 0x3ff != 0;
    assert_eq!(out[1] & 0xffff, 0);
    assert!(is_nan(out[1] >> 16), "{:#x}", out[1]);
    // An ordinary NaN gives a NaN, not 0; relu of -1 is +0.
    let nan = out[2] & 0xffff;
    assert!(is_nan(nan), "{nan:#x}");
    assert_eq!(out[2] >> 16, 0);
    // x2: the low half's a is OOB, the high half computes 1*2+1.
    assert_eq!(out[3], 0x4200_0000);
    // bf16: 1*2+1 = 3 (0x4040); OOB c -> a NaN.
    assert_eq!(out[4] & 0xffff, 0x4040);
    let h8 = out[4] >> 16;
    assert!(h8 & 0x7f80 == 0x7f80 && h8 & 0x7f != 0, "{h8:#x}");
    // bf16x2 relu: low 1*2+1 = 3, high OOB a -> 0; then -1*1+0 -> +0, 1*2+1 = 3.
    assert_eq!(out[5], 0x0000_4040);
    assert_eq!(out[6], 0x4040_0000);
    // The ISA's forms only: half types, `.rn`, no `.ftz`/`.sat`, `fma` alone.
    for bad in [
        "fma.rn.oob.f32 %f1, %f2, %f3, %f4;",
        "fma.rn.oob.ftz.f16 %h1, %h2, %h3, %h4;",
        "fma.rn.oob.sat.f16 %h1, %h2, %h3, %h4;",
        "fma.rz.oob.f16 %h1, %h2, %h3, %h4;",
        "add.rn.oob.f16 %h1, %h2, %h3;",
    ] {
        let e = load_error(bad);
        assert_eq!(e.kind, LoadErrorKind::Unsupported, "{bad}: {e}");
    }
}

#[test]
fn ftz_half_arithmetic_flushes_subnormal_inputs_and_results() {
    // add: the least subnormal + 0 flushes to +0 (without .ftz: 0x0001); sub: a negative
    // subnormal flushed is -0, -0 - +0 = -0; mul: 2^-14 * 0.5 = 2^-15 is a subnormal
    // result, flushed (without: 0x0200); fma.ftz.sat of 2^-14 * 0.5 + 0.5 = 0.5 (inputs
    // normal, exact sum); fma.ftz.relu.f16x2 per half.
    let body = "add.ftz.f16 %h1, 0x0001, 0x0000;\n\
                add.f16 %h2, 0x0001, 0x0000;\n\
                sub.ftz.f16 %h3, 0x8001, 0x0000;\n\
                mul.ftz.f16 %h4, 0x0400, 0x3800;\n\
                mul.f16 %h5, 0x0400, 0x3800;\n\
                fma.rn.ftz.sat.f16 %h6, 0x0400, 0x3800, 0x3800;\n\
                mov.b32 %r1, {%h1, %h2};\n\
                mov.b32 %r2, {%h3, %h4};\n\
                mov.b32 %r3, {%h5, %h6};\n\
                fma.rn.ftz.relu.f16x2 %r4, 0xbc000001, 0x3c003c00, 0x00000000;\n\
                st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};";
    let out = run_ok(body, 1, &[], 4);
    assert_eq!(out, [0x0001_0000, 0x0000_8000, 0x3800_0200, 0x0000_0000]);
}

#[test]
fn packed_16_bit_integers_and_relu_min_max() {
    // a = (0x8000, 0xffff), b = (0x0001, 0x0002) as (high, low) halves.
    let body = "mov.b32 %r1, 0x8000ffff;\n\
                mov.b32 %r2, 0x00010002;\n\
                add.u16x2 %r3, %r1, %r2;\n\
                add.s16x2 %r4, %r1, %r2;\n\
                min.u16x2 %r5, %r1, %r2;\n\
                min.s16x2 %r6, %r1, %r2;\n\
                max.s16x2 %r7, %r1, %r2;\n\
                max.u16x2 %r8, %r1, %r2;\n\
                min.relu.s16x2 %r9, %r1, %r2;\n\
                max.relu.s16x2 %r10, %r1, 0xfff0fff0;\n\
                min.relu.s32 %r11, -5, 3;\n\
                max.relu.s32 %r12, -5, 3;\n\
                min.relu.s32 %r13, 7, 3;\n\
                st.global.v4.u32 [%rd1], {%r3, %r4, %r5, %r6};\n\
                st.global.v4.u32 [%rd1+16], {%r7, %r8, %r9, %r10};\n\
                st.global.v4.u32 [%rd1+32], {%r11, %r12, %r13, %r13};";
    let out = run_ok(body, 1, &[], 12);
    assert_eq!(
        out,
        [
            0x8001_0001, // each half wraps: 0xffff + 2 = 0x0001
            0x8001_0001, // the same bits signed
            0x0001_0002, // unsigned: 1 < 0x8000, 2 < 0xffff
            0x8000_ffff, // signed: -32768 < 1, -1 < 2
            0x0001_0002,
            0x8000_ffff,
            0x0000_0000, // min (-32768, -1) clamped to 0
            0x0000_0000, // max(-32768, -16) and max(-1, -16) negative: 0
            0,
            3,
            3,
            3,
        ]
    );
}

#[test]
fn cvt_relu_and_satfinite_to_halves() {
    // f16x2 relu: a (-1.5) high -> 0, b (2.5) low -> 0x4100; NaN -> 0x7fff.
    // satfinite: 1e6 -> 65504 (0x7bff), -inf -> -65504 (0xfbff), NaN -> NaN.
    // bf16: f32 max rounds to infinity to nearest -> 0x7f7f with satfinite; rz -> 0x7f7f;
    // relu of -0 -> +0; rz of 1 + 2^-10 + 2^-11 + 2^-20 in f16 -> 1 + 2^-10 (0x3c01; to
    // nearest it would be 0x3c02).
    let body = "cvt.rn.relu.f16x2.f32 %r1, 0fBFC00000, 0f40200000;\n\
                cvt.rn.relu.f16.f32 %h1, 0f7FC00000;\n\
                cvt.rn.satfinite.f16.f32 %h2, 0f49742400;\n\
                mov.b32 %r2, {%h1, %h2};\n\
                cvt.rn.satfinite.f16x2.f32 %r3, 0fFF800000, 0f7FC00000;\n\
                cvt.rn.satfinite.bf16.f32 %h3, 0f7F7FFFFF;\n\
                cvt.rz.relu.bf16.f32 %h4, 0f80000000;\n\
                mov.b32 %r4, {%h3, %h4};\n\
                cvt.rz.f16x2.f32 %r5, 0f3F803008, 0fBF803008;\n\
                cvt.rn.relu.satfinite.bf16x2.f32 %r6, 0fFF800000, 0f7F800000;\n\
                cvt.rn.bf16.f32 %h5, 0f7F7FFFFF;\n\
                cvt.u32.u16 %r7, %h5;\n\
                st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};\n\
                st.global.v2.u32 [%rd1+16], {%r5, %r6};\n\
                st.global.u32 [%rd1+24], %r7;";
    let out = run_ok(body, 1, &[], 7);
    assert_eq!(
        out,
        [
            0x0000_4100,
            0x7bff_7fff,
            0xfbff_7fff,
            0x0000_7f7f,
            0x3c01_bc01,
            0x0000_7f7f,
            0x7f80, // without .satfinite: infinity
        ]
    );
}

#[test]
fn the_jit_runs_the_new_forms_as_the_interpreter_does() {
    // A loop around b128 moves and vector atomics: compiled runs hand them over.
    let body = "mov.u32 %r1, 0;\n\
                LOOP:\n\
                ld.global.b128 %q1, [%rd1];\n\
                mov.b128 {%rd2, %rd3}, %q1;\n\
                add.u64 %rd2, %rd2, 1;\n\
                mov.b128 %q1, {%rd2, %rd3};\n\
                st.global.b128 [%rd1], %q1;\n\
                red.global.v2.f32.add [%rd1+16], {0f3F800000, 0f40000000};\n\
                add.u32 %r1, %r1, 1;\n\
                setp.lt.u32 %p1, %r1, 100;\n\
                @%p1 bra LOOP;";
    let out = run_ok(body, 1, &[0, 0, 9, 9], 6);
    assert_eq!(out, [100, 0, 9, 9, 100f32.to_bits(), 200f32.to_bits()]);
}
