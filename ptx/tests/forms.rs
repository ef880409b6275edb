//! Forms compilers write (issue 21), checked against the PTX ISA's own examples and
//! definitions; their bit patterns on the H200 are recorded by the corpus
//! (ptx/corpus/issue21.cu).

mod common;
use common::*;
use cumock_ptx::{run, Module};

/// Runs `body` (PTX statements) as a one-warp kernel with an `out` pointer in %rd1.
fn run_body(decls: &str, body: &str, words: usize) -> Vec<u32> {
    let src = format!(
        ".version 9.0\n.target sm_90\n.address_size 64\n{decls}\n\
         .visible .entry k(.param .u64 out)\n{{\n.reg .b64 %rd<8>;\n.reg .b32 %r<32>;\n\
         .reg .b16 %h<16>;\n.reg .pred %p<8>;\n.reg .f32 %f<8>;\nld.param.u64 %rd1, [out];\n{body}\nret;\n}}\n"
    );
    let m = Module::parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut mem = TestMemory::new();
    let out = mem.map(&vec![0u8; words * 4], true);
    let globals: Vec<u64> = m
        .globals
        .iter()
        .map(|g| {
            let mut b = g.init.clone();
            b.resize(g.size as usize, 0);
            mem.map(&b, true)
        })
        .collect();
    let p = params(&m.kernels[0], &[out]);
    let mut l = launch(1, 1, &p);
    l.globals = &globals;
    run(&m, 0, &l, &mem).unwrap();
    to_u32s(&mem.read(out))
}

/// `st.global.u32 [%rd1+4k], reg` for each register.
fn store(regs: &[&str]) -> String {
    regs.iter()
        .enumerate()
        .map(|(k, r)| format!("st.global.u32 [%rd1+{}], {r};\n", 4 * k))
        .collect()
}

#[test]
fn bmsk_and_szext_follow_the_isa() {
    let body = "bmsk.wrap.b32 %r1, 1, 2;\n\
                szext.wrap.u32 %r2, 0xffffffff, 0;\n\
                bmsk.clamp.b32 %r3, 4, 40;\n\
                bmsk.wrap.b32 %r4, 4, 40;\n\
                bmsk.clamp.b32 %r5, 33, 3;\n\
                szext.clamp.s32 %r6, 0x80, 8;\n\
                szext.wrap.s32 %r7, 0x80, 40;\n\
                szext.clamp.u32 %r8, 0xabcd, 40;\n\
                szext.clamp.s32 %r9, 0x1234, 0;\n";
    let out = run_body(
        "",
        &format!(
            "{body}{}",
            store(&["%r1", "%r2", "%r3", "%r4", "%r5", "%r6", "%r7", "%r8", "%r9"])
        ),
        9,
    );
    assert_eq!(
        out,
        [
            0x6,         // the ISA's example
            0,           // the ISA's example
            0xffff_fff0, // width clamped: up to bit 31
            0xff0,       // width 40 wraps to 8
            0,           // position 33 clamped: nothing
            0xffff_ff80, // 8-bit 0x80 is negative
            0xffff_ff80, // width 40 wraps to 8: the same
            0xabcd,      // width clamped to 32: all of it
            0,           // width 0
        ]
    );
}

#[test]
fn half_min_max_pick_an_operand_and_nan_only_when_asked() {
    // f16: 1.0 = 0x3c00, -0 = 0x8000, NaN 0x7e01; bf16: 1.0 = 0x3f80, 2.0 = 0x4000,
    // 0xff81 a NaN. One NaN gives the other operand; .NaN, or two NaNs, the canonical NaN
    // 0x7fff (its exact bits on the H200: corpus half_minmax).
    let body = "mov.b16 %h1, 0x3c00;\nmov.b16 %h2, 0x7e01;\nmov.b16 %h3, 0x8000;\nmov.b16 %h4, 0x0000;\n\
                min.f16 %h5, %h1, %h2;\nmax.NaN.f16 %h6, %h1, %h2;\nmin.f16 %h7, %h3, %h4;\nmax.f16 %h8, %h3, %h4;\n\
                min.f16 %h9, %h2, %h2;\n\
                mov.b32 %r10, 0x3f80ff81;\nmov.b32 %r11, 0x40000000;\nmax.bf16x2 %r12, %r10, %r11;\nmin.NaN.bf16x2 %r13, %r10, %r11;\n\
                cvt.u32.u16 %r1, %h5;\ncvt.u32.u16 %r2, %h6;\ncvt.u32.u16 %r3, %h7;\ncvt.u32.u16 %r4, %h8;\ncvt.u32.u16 %r5, %h9;\n";
    let out = run_body(
        "",
        &format!(
            "{body}{}",
            store(&["%r1", "%r2", "%r3", "%r4", "%r5", "%r12", "%r13"])
        ),
        7,
    );
    assert_eq!(
        out,
        [
            0x3c00,
            0x7fff,
            0x8000,
            0x0000,
            0x7fff,
            0x4000_0000,
            0x3f80_7fff
        ]
    );
}

#[test]
fn half_comparisons_give_predicate_pairs_and_half_results() {
    // a = (lo 1.0, hi 2.0), b = (lo 2.0, hi 1.0) in f16.
    let body = "mov.b32 %r1, 0x40003c00;\nmov.b32 %r2, 0x3c004000;\n\
                setp.lt.f16x2 %p1|%p2, %r1, %r2;\nselp.u32 %r3, 1, 0, %p1;\nselp.u32 %r4, 1, 0, %p2;\n\
                set.lt.f16x2.f16x2 %r5, %r1, %r2;\nset.lt.u32.f16x2 %r6, %r1, %r2;\n\
                mov.b16 %h1, 0x3c00;\nmov.b16 %h2, 0x4000;\nset.lt.f16.f16 %h3, %h1, %h2;\ncvt.u32.u16 %r7, %h3;\n\
                set.gt.bf16.f16 %h4, %h1, %h2;\ncvt.u32.u16 %r8, %h4;\n\
                mov.b16 %h5, 0x0001;\nmov.b16 %h6, 0x8000;\nsetp.gt.ftz.f16 %p3, %h5, %h6;\nselp.u32 %r9, 1, 0, %p3;\n\
                setp.gt.f16 %p4, %h5, %h6;\nselp.u32 %r10, 1, 0, %p4;\n";
    let out = run_body(
        "",
        &format!(
            "{body}{}",
            store(&["%r3", "%r4", "%r5", "%r6", "%r7", "%r8", "%r9", "%r10"])
        ),
        8,
    );
    // A flushed subnormal equals -0, so `gt` fails with .ftz and holds without.
    assert_eq!(out, [1, 0, 0x3c00, 0xffff, 0x3c00, 0, 0, 1]);
}

#[test]
fn module_arrays_are_addressed_by_name_and_offset() {
    let decls = ".const .align 4 .u32 ctab[4] = {10, 20, 30, 40};\n\
                 .global .align 4 .u32 gtab[4] = {1, 2, 3, 4};\n\
                 .shared .align 4 .u32 stab[4];";
    let body = "st.shared.u32 [stab+8], 77;\nld.shared.u32 %r1, [stab+8];\n\
                ld.const.u32 %r2, [ctab+12];\nld.const.u32 %r3, [ctab];\n\
                ld.global.u32 %r4, [gtab+4];\n\
                mov.u64 %rd2, gtab+8;\nld.global.u32 %r5, [%rd2];\n\
                mov.u64 %rd3, stab;\nmov.u64 %rd4, stab+12;\nsub.s64 %rd5, %rd4, %rd3;\ncvt.u32.u64 %r6, %rd5;\n\
                mov.u32 %r7, %dynamic_smem_size;\nmov.u32 %r8, %globaltimer_hi;\nsetp.ne.u32 %p1, %r8, 0;\nselp.u32 %r9, 1, 0, %p1;\n\
                nanosleep.u32 10;\n";
    let out = run_body(
        decls,
        &format!(
            "{body}{}",
            store(&["%r1", "%r2", "%r3", "%r4", "%r5", "%r6", "%r7", "%r9"])
        ),
        8,
    );
    assert_eq!(out, [77, 40, 10, 2, 3, 12, 0, 1]);
}

#[test]
fn abs_and_neg_of_bf16_change_the_sign_bit_only() {
    // bf16: 1.0 = 0x3f80, -1.0 = 0xbf80, -2.0 = 0xc000, 0x7fc1 a NaN.
    let body = "mov.b16 %h1, 0xbf80;\nabs.bf16 %h2, %h1;\ncvt.u32.u16 %r1, %h2;\n\
                mov.b16 %h3, 0x3f80;\nneg.bf16 %h4, %h3;\ncvt.u32.u16 %r2, %h4;\n\
                mov.b32 %r10, 0xbf80c000;\nabs.bf16x2 %r3, %r10;\n\
                mov.b32 %r11, 0x3f80c000;\nneg.bf16x2 %r4, %r11;\n\
                mov.b16 %h5, 0x7fc1;\nneg.bf16 %h6, %h5;\ncvt.u32.u16 %r5, %h6;\n";
    let out = run_body(
        "",
        &format!("{body}{}", store(&["%r1", "%r2", "%r3", "%r4", "%r5"])),
        5,
    );
    assert_eq!(out, [0x3f80, 0xbf80, 0x3f80_4000, 0xbf80_4000, 0xffc1]);
}

#[test]
fn fma_relu_of_halves_clamps_negatives_to_zero_and_nans_to_the_canonical_nan() {
    // bf16: 1.0 = 0x3f80, -2.0 = 0xc000, 0.5 = 0x3f00, 2.5 = 0x4020, 0x7fc1 a NaN;
    // f16: 1.0 = 0x3c00, -1.0 = 0xbc00, 2.0 = 0x4000.
    let body = "mov.b16 %h1, 0x3f80;\nmov.b16 %h2, 0xc000;\nmov.b16 %h3, 0x3f00;\n\
                fma.rn.relu.bf16 %h4, %h1, %h2, %h3;\ncvt.u32.u16 %r1, %h4;\n\
                mov.b16 %h5, 0x4000;\nfma.rn.relu.bf16 %h6, %h1, %h5, %h3;\ncvt.u32.u16 %r2, %h6;\n\
                mov.b16 %h7, 0x7fc1;\nfma.rn.relu.bf16 %h8, %h1, %h7, %h3;\ncvt.u32.u16 %r3, %h8;\n\
                mov.b32 %r10, 0x3f803f80;\nmov.b32 %r11, 0xc0004000;\nmov.b32 %r12, 0x3f003f00;\n\
                fma.rn.relu.bf16x2 %r4, %r10, %r11, %r12;\n\
                mov.b16 %h9, 0x3c00;\nmov.b16 %h10, 0xbc00;\nfma.rn.relu.f16 %h11, %h9, %h10, %h9;\n\
                cvt.u32.u16 %r5, %h11;\nfma.rn.relu.f16 %h12, %h9, %h9, %h9;\ncvt.u32.u16 %r6, %h12;\n";
    let out = run_body(
        "",
        &format!(
            "{body}{}",
            store(&["%r1", "%r2", "%r3", "%r4", "%r5", "%r6"])
        ),
        6,
    );
    assert_eq!(out, [0, 0x4020, 0x7fff, 0x4020, 0, 0x4000]);
}

#[test]
fn a_label_belongs_to_its_block_as_inlined_assembly_needs() {
    // The same inline assembly inlined twice: each `{ }` block has its own `W`, and each
    // branch goes to its own block's (to the first block's, %r1 would end at 7).
    let out = run_body(
        "",
        "mov.u32 %r1, 0;\nmov.u32 %r2, 0;\n\
         { W: add.u32 %r1, %r1, 1; setp.lt.u32 %p1, %r1, 3; @%p1 bra W; }\n\
         { W: add.u32 %r2, %r2, 1; setp.lt.u32 %p1, %r2, 5; @%p1 bra W; }\n\
         st.global.u32 [%rd1], %r1;\nst.global.u32 [%rd1+4], %r2;",
        2,
    );
    assert_eq!(out, [3, 5]);
}
