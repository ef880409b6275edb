//! The forms the ISA 9.0 audit (ptx/coverage/isa-9.0.txt) found missing, now decoded:
//! their results on both engines against values worked out by hand from the PTX ISA's
//! definitions. Where the H200 might read the ISA otherwise, corpus kernel
//! `isa_audit_edges` (ptx/corpus/isa_audit.cu) records it.

mod common;
use common::*;
use cumock_ptx::{run, Engine, Module};

const HEAD: &str = ".version 9.0\n.target sm_90\n.address_size 64\n";

/// Runs `body` (one thread) with `out` (`words` words, initially `init`) in %rd1; the
/// interpreter and the compiled engine must agree. Returns `out`.
fn run_words(module: &str, body: &str, init: &[u32], words: usize) -> Vec<u32> {
    let [interp, jit] = run_both(module, body, init, words);
    assert_eq!(interp, jit, "the engines differ");
    jit
}

/// `out` after the interpreter's run and after the compiled engine's.
fn run_both(module: &str, body: &str, init: &[u32], words: usize) -> [Vec<u32>; 2] {
    let src = format!(
        "{HEAD}{module}\n.visible .entry k(.param .u64 out)\n{{\n.reg .b64 %rd<16>;\n\
         .reg .b32 %r<32>;\n.reg .pred %p<8>;\n.reg .f64 %fd<16>;\n.reg .b16 %h<8>;\n\
         ld.param.u64 %rd1, [out];\n{body}\nret;\n}}\n"
    );
    let m = Module::parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut results = Vec::new();
    for engine in [Engine::Interp, Engine::Jit] {
        let mut mem = TestMemory::new();
        let mut bytes: Vec<u8> = init.iter().flat_map(|w| w.to_le_bytes()).collect();
        bytes.resize(words * 4, 0);
        let out = mem.map(&bytes, true);
        let globals = mem.map_globals(&m);
        let p = params(&m.kernels[0], &[out]);
        let mut l = launch(1, 1, &p);
        l.engine = engine;
        l.globals = &globals;
        run(&m, 0, &l, &mem).unwrap_or_else(|f| panic!("{engine:?}: {f}\n{src}"));
        results.push(to_u32s(&mem.read(out))[..words].to_vec());
    }
    let jit = results.pop().unwrap();
    [results.pop().unwrap(), jit]
}

#[test]
fn mad24_hi_adds_the_high_32_of_the_48_bit_product_and_saturates_s32() {
    // u32: 0x123456 * 0xabcdef (a's bits above 24 ignored) >> 16, plus 5.
    // s32: 0x7fffff^2 >> 16 = 0x3fffffe0, plus 0x7fffffff: clamped with .sat, wrapped
    // without; -2^23 * 0x7fffff >> 16 (rounded down) plus i32::MIN: clamped and wrapped;
    // -3 * 7 >> 16 = -1 (the shift is arithmetic).
    let body = "mov.u32 %r1, 0xff123456;\nmov.u32 %r2, 0xabcdef;\n\
                mad24.hi.u32 %r3, %r1, %r2, 5;\nst.global.u32 [%rd1], %r3;\n\
                mov.u32 %r1, 0x7fffff;\n\
                mad24.hi.sat.s32 %r3, %r1, %r1, 0x7fffffff;\nst.global.u32 [%rd1+4], %r3;\n\
                mad24.hi.s32 %r3, %r1, %r1, 0x7fffffff;\nst.global.u32 [%rd1+8], %r3;\n\
                mov.u32 %r2, 0x800000;\n\
                mad24.hi.sat.s32 %r3, %r2, %r1, 0x80000000;\nst.global.u32 [%rd1+12], %r3;\n\
                mad24.hi.s32 %r3, %r2, %r1, 0x80000000;\nst.global.u32 [%rd1+16], %r3;\n\
                mad24.hi.s32 %r3, 0xfffffd, 7, 0;\nst.global.u32 [%rd1+20], %r3;";
    let out = run_words("", body, &[], 6);
    assert_eq!(
        out,
        [
            0x0c37_9a5e,
            0x7fff_ffff,
            0xbfff_feff,
            0x8000_0000,
            0x4000_0080,
            0xffff_ffff
        ]
    );
}

#[test]
fn mad24_sat_is_only_hi_s32() {
    for body in [
        "mad24.lo.sat.s32 %r3, %r1, %r1, %r1;",
        "mad24.hi.sat.u32 %r3, %r1, %r1, %r1;",
    ] {
        let src = format!("{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<4>;\n{body}\nret;\n}}\n");
        assert!(Module::parse(&src).is_err(), "{body}");
    }
}

#[test]
fn lop3_with_a_predicate_combines_d_not_zero_with_q() {
    // lut 0x80 is a & b & c; 0x96 a ^ b ^ c. d is lop3's; p = (d != 0) op q.
    let body = "mov.u32 %r1, 0xf0;\nmov.u32 %r2, 0x3c;\nmov.u32 %r3, 0xff;\n\
                setp.eq.u32 %p1, %r1, %r1;\nsetp.ne.u32 %p2, %r1, %r1;\n\
                lop3.and.b32 %r4|%p3, %r1, %r2, %r3, 0x80, %p1;\n\
                lop3.and.b32 %r5|%p4, %r1, %r2, 0, 0x80, %p1;\n\
                lop3.or.b32 %r6|%p5, %r1, %r2, 0, 0x80, %p2;\n\
                lop3.or.b32 %r7|%p6, %r1, %r2, %r3, 0x96, !%p1;\n\
                st.global.v4.u32 [%rd1], {%r4, %r5, %r6, %r7};\n\
                selp.u32 %r8, 1, 0, %p3;\nselp.u32 %r9, 1, 0, %p4;\n\
                selp.u32 %r10, 1, 0, %p5;\nselp.u32 %r11, 1, 0, %p6;\n\
                st.global.v4.u32 [%rd1+16], {%r8, %r9, %r10, %r11};";
    let out = run_words("", body, &[], 8);
    assert_eq!(out[..4], [0x30, 0, 0, 0xf0 ^ 0x3c ^ 0xff]);
    assert_eq!(out[4..], [1, 0, 0, 1]);
}

#[test]
fn param_entry_names_the_kernel_parameters() {
    // ld.param::entry reads `out` itself; isspacep.param::entry is true of its generic
    // address (cvta.param) and false of a global one.
    let body = "ld.param::entry.u64 %rd2, [out];\nst.global.u64 [%rd1], %rd2;\n\
                cvta.param.u64 %rd3, out;\nisspacep.param::entry %p1, %rd3;\n\
                isspacep.param::entry %p2, %rd1;\n\
                selp.u32 %r1, 1, 0, %p1;\nselp.u32 %r2, 1, 0, %p2;\n\
                st.global.v2.u32 [%rd1+8], {%r1, %r2};";
    let out = run_words("", body, &[], 4);
    assert_eq!(out[2..], [1, 0]);
    assert_ne!(
        u64::from(out[0]) | u64::from(out[1]) << 32,
        0,
        "the address of out"
    );
}

#[test]
fn a_space_with_colons_is_never_taken_for_a_cache_hint() {
    // Before the audit `.param::entry` fell through as a hint and the load went generic.
    let src = format!(
        "{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<4>;\n\
         ld.global.foo::bar.u32 %r1, [%r2];\nret;\n}}\n"
    );
    assert!(Module::parse(&src).is_err());
}

#[test]
fn clock_hi_is_the_high_word_of_clock64() {
    // Read between two %clock64 reads, which only grow: its value lies between theirs.
    let body = "mov.u64 %rd2, %clock64;\nmov.u32 %r1, %clock_hi;\nmov.u64 %rd3, %clock64;\n\
                st.global.u64 [%rd1], %rd2;\nst.global.u32 [%rd1+8], %r1;\n\
                st.global.u64 [%rd1+16], %rd3;";
    // The clocks of two runs differ: each engine's run checked on its own.
    for out in run_both("", body, &[], 6) {
        let (before, hi, after) = (out[1], out[2], out[5]);
        assert!(before <= hi && hi <= after, "{before} {hi} {after}");
    }
}
// a, b, c, rz, rm, rp (f64 bits), from Python's exact rationals (fractions).
const FMA64_CASES: [[u64; 6]; 52] = [
    [
        0x3ff0000000000000,
        0x3ff0000000000000,
        0x0000000000000001,
        0x3ff0000000000000,
        0x3ff0000000000000,
        0x3ff0000000000001,
    ],
    [
        0x3ff0000000000000,
        0x3ff0000000000000,
        0x8000000000000001,
        0x3fefffffffffffff,
        0x3fefffffffffffff,
        0x3ff0000000000000,
    ],
    [
        0xbff0000000000000,
        0x3ff0000000000000,
        0x0000000000000001,
        0xbfefffffffffffff,
        0xbff0000000000000,
        0xbfefffffffffffff,
    ],
    [
        0x3ff0000000000001,
        0x3fefffffffffffff,
        0xbff0000000000000,
        0x3c9ffffffffffffe,
        0x3c9ffffffffffffe,
        0x3c9ffffffffffffe,
    ],
    [
        0x4008000000000000,
        0x3fd5555555555555,
        0xbff0000000000000,
        0xbc90000000000000,
        0xbc90000000000000,
        0xbc90000000000000,
    ],
    [
        0x3fb999999999999a,
        0x4024000000000000,
        0xbff0000000000000,
        0x3c90000000000000,
        0x3c90000000000000,
        0x3c90000000000000,
    ],
    [
        0x1a70000000000000,
        0x20b0000000000000,
        0x0000000000000002,
        0x0000000000000002,
        0x0000000000000002,
        0x0000000000000003,
    ],
    [
        0x1e60000000000000,
        0x1e60000000000000,
        0x0000000000000000,
        0x0000000000000001,
        0x0000000000000001,
        0x0000000000000001,
    ],
    [
        0x7fefffffffffffff,
        0x4000000000000000,
        0xffefffffffffffff,
        0x7fefffffffffffff,
        0x7fefffffffffffff,
        0x7fefffffffffffff,
    ],
    [
        0x7fefffffffffffff,
        0x3ff0000000000001,
        0x0000000000000000,
        0x7fefffffffffffff,
        0x7fefffffffffffff,
        0x7ff0000000000000,
    ],
    [
        0xffefffffffffffff,
        0x3ff0000000000001,
        0x0000000000000000,
        0xffefffffffffffff,
        0xfff0000000000000,
        0xffefffffffffffff,
    ],
    [
        0x3ff8000000000000,
        0x4000000000000000,
        0xc008000000000000,
        0x0000000000000000,
        0x8000000000000000,
        0x0000000000000000,
    ],
    [
        0x8000000000000000,
        0x4014000000000000,
        0x0000000000000000,
        0x0000000000000000,
        0x8000000000000000,
        0x0000000000000000,
    ],
    [
        0x0000000000000000,
        0x4014000000000000,
        0x8000000000000000,
        0x0000000000000000,
        0x8000000000000000,
        0x0000000000000000,
    ],
    [
        0x8000000000000000,
        0x4014000000000000,
        0x8000000000000000,
        0x8000000000000000,
        0x8000000000000000,
        0x8000000000000000,
    ],
    [
        0x7e37e43c8800759c,
        0x01a56e1fc2f8f359,
        0x00000000000007e8,
        0x3ff0000000000000,
        0x3ff0000000000000,
        0x3ff0000000000001,
    ],
    [
        0x3ff0000000000000,
        0x3ff0000000000000,
        0x4c70000000000000,
        0x4c70000000000000,
        0x4c70000000000000,
        0x4c70000000000001,
    ],
    [
        0x3ff0000000000001,
        0x3ff0000000000001,
        0xcc70000000000000,
        0xcc6fffffffffffff,
        0xcc70000000000000,
        0xcc6fffffffffffff,
    ],
    [
        0x0170000000000000,
        0x3c30000000000000,
        0x3ff0000000000000,
        0x3ff0000000000000,
        0x3ff0000000000000,
        0x3ff0000000000001,
    ],
    [
        0x0170000000000000,
        0x3c30000000000000,
        0xbff0000000000000,
        0xbfefffffffffffff,
        0xbff0000000000000,
        0xbfefffffffffffff,
    ],
    [
        0x3faca9d37934f068,
        0x3e4351d220c5c7fc,
        0x3ec48fc20c497c80,
        0x3ec490d6ee43ee10,
        0x3ec490d6ee43ee10,
        0x3ec490d6ee43ee11,
    ],
    [
        0xbe31311b06ace67c,
        0x3eea3897640f3a76,
        0x3d2c2c9a7462a86d,
        0xba0b30d18c4b954a,
        0xba0b30d18c4b954a,
        0xba0b30d18c4b954a,
    ],
    [
        0xbee4f2ab7dc3be90,
        0xbfca31c20b97748a,
        0xbfac378891629b5c,
        0xbfac3743fa6acd24,
        0xbfac3743fa6acd25,
        0xbfac3743fa6acd24,
    ],
    [
        0xbef813a0f06b9f7e,
        0x4050b8599a09f768,
        0x3f59290980339ae5,
        0x3c386287857da8b4,
        0x3c386287857da8b4,
        0x3c386287857da8b4,
    ],
    [
        0x3e25e60aecb19b40,
        0x3e3e7af6b1c4c68c,
        0x409d032e76f125b0,
        0x409d032e76f125b0,
        0x409d032e76f125b0,
        0x409d032e76f125b1,
    ],
    [
        0xbe9aee15394b34dc,
        0x4024d4c7c789e870,
        0x3ed187deb0eb3275,
        0xbb9e65c7c3454020,
        0xbb9e65c7c3454020,
        0xbb9e65c7c3454020,
    ],
    [
        0x3e674bdd42e44158,
        0x4074e3bf92474e68,
        0xc2b3f9ebcd055470,
        0xc2b3f9ebcd05546f,
        0xc2b3f9ebcd055470,
        0xc2b3f9ebcd05546f,
    ],
    [
        0x3e2871f66d933900,
        0x40607a70c1e840b0,
        0xbe992d07aa953e69,
        0x3b6f181a65bb9800,
        0x3b6f181a65bb9800,
        0x3b6f181a65bb9800,
    ],
    [
        0x40f03da2db5dac10,
        0xc057ca06888ce510,
        0x41ab19a9e3a01f20,
        0x41aa587c8c771dfd,
        0x41aa587c8c771dfd,
        0x41aa587c8c771dfe,
    ],
    [
        0xc129a13c2c0671dc,
        0xc1247eb39a68759c,
        0xc2606a4052059295,
        0x3f361a2e97d5bb84,
        0x3f361a2e97d5bb84,
        0x3f361a2e97d5bb84,
    ],
    [
        0xbff9916fd798cb90,
        0x40f80240b2bf702e,
        0xc09a3267ad926d80,
        0xc103634579bcda19,
        0xc103634579bcda1a,
        0xc103634579bcda19,
    ],
    [
        0x3e8ebb2f4895ea56,
        0x3e68703d6b0a18c0,
        0xbd07782d978c3734,
        0xb9da4e1c1a0f0be0,
        0xb9da4e1c1a0f0be0,
        0xb9da4e1c1a0f0be0,
    ],
    [
        0x3fbbbab2fbe9657c,
        0xc0bd7da0d84dc8f2,
        0xbd6b084419e228ac,
        0xc0898e0ee06216c6,
        0xc0898e0ee06216c7,
        0xc0898e0ee06216c6,
    ],
    [
        0x4172b1d3f9404268,
        0x3f645fe6b2828e0e,
        0xc0e7ce565f024095,
        0xbdb997f4586b5728,
        0xbdb997f4586b5728,
        0xbdb997f4586b5728,
    ],
    [
        0xc0db3d75ae2ff400,
        0xc1366c413b996350,
        0xc0fa0285f0714b0a,
        0x422316649c2f08b8,
        0x422316649c2f08b8,
        0x422316649c2f08b9,
    ],
    [
        0xc07a85f726c75360,
        0xc0fbd70a5783bfc0,
        0xc18713452fab60fe,
        0xbe54aa67ba4b3600,
        0xbe54aa67ba4b3600,
        0xbe54aa67ba4b3600,
    ],
    [
        0x40a3f448bfc77120,
        0x3f349a6a6b90ac1a,
        0x414bba75a62c33a4,
        0x414bba760cf3ef35,
        0x414bba760cf3ef35,
        0x414bba760cf3ef36,
    ],
    [
        0x3e159669858d5560,
        0x3f7c33960bb18d4c,
        0xbda3066945faa186,
        0x3a80aab0b4ab6710,
        0x3a80aab0b4ab6710,
        0x3a80aab0b4ab6710,
    ],
    [
        0xbe89d55fe1d0ba00,
        0x3e912abab24ca91c,
        0x3d0e82b0f3f63af8,
        0xbd2417072efd2d27,
        0xbd2417072efd2d28,
        0xbd2417072efd2d27,
    ],
    [
        0xc16beab862a97108,
        0xbe4c9dfbad7c1900,
        0xbfc8f7347f67d049,
        0x3c7c07efb3e9c800,
        0x3c7c07efb3e9c800,
        0x3c7c07efb3e9c800,
    ],
    [
        0xbe8c6fc471dda8ec,
        0x41846f14b371b554,
        0x4069b66091d1a690,
        0x406893d783f33e0b,
        0x406893d783f33e0b,
        0x406893d783f33e0c,
    ],
    [
        0xbf55af20a06edc98,
        0x3f8763781e25a760,
        0x3eefb28d4ad02355,
        0x3bcf6b7ef4a387c0,
        0x3bcf6b7ef4a387c0,
        0x3bcf6b7ef4a387c0,
    ],
    [
        0xbeaab060f6971b2a,
        0xbef1279e62bb5b9c,
        0xbd6f3a5bdc1ecbde,
        0x3daaa9d767060ba8,
        0x3daaa9d767060ba8,
        0x3daaa9d767060ba9,
    ],
    [
        0x3ef6d0cc45d5c0b8,
        0xbe9be9b1afef3b8c,
        0x3da3e6cb5aa3284c,
        0xba62a629940be650,
        0xba62a629940be650,
        0xba62a629940be650,
    ],
    [
        0x9f40bc4c863e3554,
        0x9e6737bb80c01c64,
        0x00000000c310c4ee,
        0x00000000c3112611,
        0x00000000c3112611,
        0x00000000c3112612,
    ],
    [
        0x1f7cd0781cf0d476,
        0x1e368db96bd62888,
        0x800000000058cb2d,
        0x80000000005828b5,
        0x80000000005828b6,
        0x80000000005828b5,
    ],
    [
        0x9eda181bd33b90c0,
        0x9f795fa5f425d75e,
        0x800000000000065f,
        0x0000000002961435,
        0x0000000002961435,
        0x0000000002961436,
    ],
    [
        0x9e9bb093a01f6698,
        0x9e3e6627b59cd320,
        0x8000000000000005,
        0x8000000000000001,
        0x8000000000000002,
        0x8000000000000001,
    ],
    [
        0x9f59729cd7ff85b2,
        0x9e6651ace3b50144,
        0x0000000000000004,
        0x0000000000011bff,
        0x0000000000011bff,
        0x0000000000011c00,
    ],
    [
        0x9e9b7ff319015e08,
        0x1e5d33a00c0a1228,
        0x00000000002268ab,
        0x000000000022689e,
        0x000000000022689e,
        0x000000000022689f,
    ],
    [
        0x1f0a2ef80ba73a10,
        0x9f28235a5713c18a,
        0x000000003f1dfd70,
        0x000000003e7ffc35,
        0x000000003e7ffc35,
        0x000000003e7ffc36,
    ],
    [
        0x9e84134e4211b4c0,
        0x9e6a80dd9ed8d8ee,
        0x000000000000ffab,
        0x000000000000ffb3,
        0x000000000000ffb3,
        0x000000000000ffb4,
    ],
];

#[test]
fn fma_f64_directed_rounds_the_exact_sum_once() {
    // Thread t reads a, b, c at doubles 6t..6t+3 and writes rz, rm, rp after them.
    let n = FMA64_CASES.len();
    let body = "mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 48;\nadd.u64 %rd2, %rd1, %rd2;\n\
                ld.global.v2.f64 {%fd1, %fd2}, [%rd2];\nld.global.f64 %fd3, [%rd2+16];\n\
                fma.rz.f64 %fd4, %fd1, %fd2, %fd3;\nfma.rm.f64 %fd5, %fd1, %fd2, %fd3;\n\
                fma.rp.f64 %fd6, %fd1, %fd2, %fd3;\n\
                st.global.f64 [%rd2+24], %fd4;\nst.global.v2.f64 [%rd2+32], {%fd5, %fd6};";
    let src = format!(
        "{HEAD}.visible .entry k(.param .u64 out)\n{{\n.reg .b64 %rd<4>;\n.reg .b32 %r<2>;\n\
         .reg .f64 %fd<8>;\nld.param.u64 %rd1, [out];\n{body}\nret;\n}}\n"
    );
    let m = Module::parse(&src).unwrap();
    let init: Vec<u8> = FMA64_CASES
        .iter()
        .flat_map(|c| [c[0], c[1], c[2], 0, 0, 0])
        .flat_map(u64::to_le_bytes)
        .collect();
    for engine in [Engine::Interp, Engine::Jit] {
        let mut mem = TestMemory::new();
        let out = mem.map(&init, true);
        let p = params(&m.kernels[0], &[out]);
        let mut l = launch(1, n as u32, &p);
        l.engine = engine;
        run(&m, 0, &l, &mem).unwrap();
        let got: Vec<u64> = mem
            .read(out)
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        for (t, c) in FMA64_CASES.iter().enumerate() {
            assert_eq!(
                got[6 * t + 3..6 * t + 6],
                c[3..],
                "{engine:?}: fma of {:#x} {:#x} {:#x} (rz, rm, rp)",
                c[0],
                c[1],
                c[2]
            );
        }
    }
}

#[test]
fn an_alias_is_its_aliasee_in_calls_and_addresses() {
    // `twice` is declared only; `.alias twice, dbl` makes it dbl: a call through either
    // name doubles, and both names give one address.
    let module = ".func (.param .b32 r) dbl(.param .b32 a) .abi_preserve 8 {\n\
                  .reg .b32 %t;\nld.param.b32 %t, [a];\nadd.u32 %t, %t, %t;\n\
                  st.param.b32 [r], %t;\nret;\n}\n\
                  .func (.param .b32 r) twice(.param .b32 a);\n.alias twice, dbl;";
    let body = "{\n.param .b32 a0;\n.param .b32 r0;\nst.param.b32 [a0], 21;\n\
                call (r0), twice, (a0);\nld.param.b32 %r1, [r0];\n}\n\
                mov.u64 %rd2, twice;\nmov.u64 %rd3, dbl;\nsetp.eq.u64 %p1, %rd2, %rd3;\n\
                selp.u32 %r2, 1, 0, %p1;\nst.global.v2.u32 [%rd1], {%r1, %r2};";
    assert_eq!(run_words(module, body, &[], 2), [42, 1]);
}

#[test]
fn an_alias_needs_a_defined_aliasee_and_its_prototype() {
    for module in [
        // The aliasee has no body.
        ".func f(.param .b32 a);\n.func g(.param .b32 a);\n.alias f, g;",
        // The prototypes differ.
        ".func g(.param .b32 a) { ret; }\n.func f(.param .b64 a);\n.alias f, g;",
        // The alias has a body of its own.
        ".func g() { ret; }\n.func f() { ret; }\n.alias f, g;",
    ] {
        let src = format!("{HEAD}{module}\n.visible .entry k() {{ ret; }}\n");
        assert!(Module::parse(&src).is_err(), "{module}");
    }
}

#[test]
fn blocks_are_clusters_launch_a_grid_of_clusters() {
    let kernel = |cluster: &str| {
        format!(
            "{HEAD}.visible .entry k(.param .u64 out) .reqntid 32 .reqnctapercluster \
             {cluster} .blocksareclusters\n{{\n.reg .b64 %rd<2>;\n.reg .b32 %r<2>;\n\
             ld.param.u64 %rd1, [out];\nmov.u32 %r1, %cluster_nctarank;\n\
             st.global.u32 [%rd1], %r1;\nret;\n}}\n"
        )
    };
    let m = Module::parse(&kernel("1")).unwrap();
    let mut mem = TestMemory::new();
    let out = mem.map(&[0xffu8; 4], true);
    let p = params(&m.kernels[0], &[out]);
    run(&m, 0, &launch(1, 32, &p), &mem).unwrap();
    assert_eq!(to_u32s(&mem.read(out)), [1]);
    // Clusters of two: a launch of one cluster runs two blocks, each seeing %nctaid.x 2.
    let m = Module::parse(&kernel("2")).unwrap();
    let k = &m.kernels[0];
    assert_eq!(k.grid_of_launch([3, 1, 1]), Some([6, 1, 1]));
    assert_eq!(k.grid_of_launch([u32::MAX, 1, 1]), None);
    let mut mem = TestMemory::new();
    let out = mem.map(&[0xffu8; 4], true);
    let p = params(k, &[out]);
    let mut l = launch(1, 32, &p);
    l.grid = k.grid_of_launch(l.grid).unwrap();
    run(&m, 0, &l, &mem).unwrap();
    assert_eq!(to_u32s(&mem.read(out)), [2]);
    // As ptxas: the directive needs both counts.
    let src = kernel("1").replace(".reqntid 32 ", "");
    assert!(Module::parse(&src).is_err());
    // And PTX ISA 9.0: the H200 refuses it under 8.0 (CUDA_ERROR_INVALID_PTX).
    let e = Module::parse(&kernel("1").replace(".version 9.0", ".version 8.0")).unwrap_err();
    assert!(e.message.contains("requires PTX ISA .version 9.0"), "{e}");
}

/// Eight halves as four little-endian words.
fn halves(h: [u16; 8]) -> [u32; 4] {
    std::array::from_fn(|k| u32::from(h[2 * k]) | u32::from(h[2 * k + 1]) << 16)
}

#[test]
fn half_bulk_reductions_round_once_keep_subnormals_and_skip_nans_in_min_max() {
    // Global words 0..4 += shared 16 bytes as f16 (add.noftz); 4..8 as bf16; 8..12 min.f16;
    // 12..16 max.bf16. Each source is written to shared memory first.
    let body = "\
                ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1+64];\n\
                st.shared.v4.u32 [sm], {%r1, %r2, %r3, %r4};\n\
                ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1+80];\n\
                st.shared.v4.u32 [sm+16], {%r1, %r2, %r3, %r4};\n\
                ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1+96];\n\
                st.shared.v4.u32 [sm+32], {%r1, %r2, %r3, %r4};\n\
                ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1+112];\n\
                st.shared.v4.u32 [sm+48], {%r1, %r2, %r3, %r4};\n\
                fence.proxy.async.shared::cta;\n\
                cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f16 [%rd1], [sm], 16;\n\
                cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16 [%rd1+16], [sm+16], 16;\n\
                cp.reduce.async.bulk.global.shared::cta.bulk_group.min.f16 [%rd1+32], [sm+32], 16;\n\
                cp.reduce.async.bulk.global.shared::cta.bulk_group.max.bf16 [%rd1+48], [sm+48], 16;\n\
                cp.async.bulk.commit_group;\ncp.async.bulk.wait_group 0;";
    let module = ".shared .align 16 .b8 sm[64];";
    let mut init = Vec::new();
    // Destinations: f16 (1 + 2^-10 + 2^-11 ties to even, 65504 + 65504 overflows, a
    // subnormal sum, an exact cancellation to +0), bf16, f16 for min, bf16 for max.
    init.extend(halves([
        0x3c00, 0x0001, 0x3c00, 0x3c01, 0x7bff, 0xfc00, 0x8001, 0x0000,
    ]));
    init.extend(halves([0x3f80, 0x0001, 0x3f80, 0x4040, 0, 0, 0, 0]));
    init.extend(halves([0x3c00, 0x7e00, 0x8000, 0xc000, 0x4400, 0, 0, 0]));
    init.extend(halves([0x3f80, 0x7fc0, 0xc000, 0x0001, 0, 0, 0, 0]));
    // Sources.
    init.extend(halves([
        0x4000, 0x0001, 0x1000, 0x1000, 0x7bff, 0x3c00, 0x0001, 0x8000,
    ]));
    init.extend(halves([0x3f80, 0x0001, 0x3b80, 0xbf80, 0, 0, 0, 0]));
    init.extend(halves([0x4000, 0x3c00, 0x3c00, 0x7e00, 0x4200, 0, 0, 0]));
    init.extend(halves([0x4000, 0xbf80, 0xc040, 0x0002, 0, 0, 0, 0]));
    let out = run_words(module, body, &init, 32);
    let add16 = halves([
        0x4200, 0x0002, 0x3c00, 0x3c02, 0x7c00, 0xfc00, 0x0000, 0x0000,
    ]);
    assert_eq!(out[0..4], add16, "add.noftz.f16");
    // bf16: 1 + 2^-8 ties to even (1.0), 3 - 1 = 2.
    let add_bf16 = halves([0x4000, 0x0002, 0x3f80, 0x4000, 0, 0, 0, 0]);
    assert_eq!(out[4..8], add_bf16, "add.noftz.bf16");
    let min16 = halves([0x3c00, 0x3c00, 0x8000, 0xc000, 0x4200, 0, 0, 0]);
    assert_eq!(out[8..12], min16, "min.f16 (a NaN gives the other)");
    let max_bf16 = halves([0x4000, 0xbf80, 0xc000, 0x0002, 0, 0, 0, 0]);
    assert_eq!(out[12..16], max_bf16, "max.bf16");
}

#[test]
fn half_bulk_reductions_take_only_the_forms_ptxas_takes() {
    for form in [
        "add.f16 [%rd1], [sm], 16",
        "min.noftz.bf16 [%rd1], [sm], 16",
        "add.noftz.u32 [%rd1], [sm], 16",
    ] {
        let src = format!(
            "{HEAD}.visible .entry k(.param .u64 out)\n{{\n.reg .b64 %rd<2>;\n\
             .shared .align 16 .b8 sm[64];\n\
             cp.reduce.async.bulk.global.shared::cta.bulk_group.{form};\nret;\n}}\n"
        );
        assert!(Module::parse(&src).is_err(), "{form}");
    }
    let src = format!(
        "{HEAD}.visible .entry k()\n{{\n.shared .align 16 .b8 sm[64];\n\
         cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes\
         .add.noftz.f16 [sm], [sm+16], 16, [sm+32];\nret;\n}}\n"
    );
    assert!(Module::parse(&src).is_err(), "halves into shared memory");
}

#[test]
fn vector_variables_are_their_elements_aligned_to_the_vector() {
    let src = format!(
        "{HEAD}.global .v4 .f32 gv = {{1.0, 2.0, 3.0, 4.0}};\n\
         .const .v2 .u32 cv[2] = {{{{5, 6}}, {{7, 8}}}};\n\
         .global .align 4 .v2 .u16 small;\n\
         .visible .entry k(.param .u64 out)\n{{\n.reg .b64 %rd<2>;\n.reg .b32 %r<4>;\n\
         .reg .f32 %f<4>;\nld.param.u64 %rd1, [out];\n\
         ld.global.v4.f32 {{%f0, %f1, %f2, %f3}}, [gv];\nst.global.v4.f32 [%rd1], {{%f0, %f1, %f2, %f3}};\n\
         ld.const.v2.u32 {{%r0, %r1}}, [cv+8];\nst.global.v2.u32 [%rd1+16], {{%r0, %r1}};\nret;\n}}\n"
    );
    let m = Module::parse(&src).unwrap();
    let g = |n: &str| m.globals.iter().find(|g| g.name == n).unwrap();
    assert_eq!((g("gv").size, g("gv").align), (16, 16));
    assert_eq!((g("cv").size, g("cv").align), (16, 8));
    assert_eq!(
        (g("small").size, g("small").align),
        (4, 4),
        "an explicit .align stays"
    );
    let mut mem = TestMemory::new();
    let out = mem.map(&[0u8; 24], true);
    let globals = mem.map_globals(&m);
    let p = params(&m.kernels[0], &[out]);
    let mut l = launch(1, 1, &p);
    l.globals = &globals;
    run(&m, 0, &l, &mem).unwrap();
    let words = to_u32s(&mem.read(out));
    assert_eq!(words[..4], [1.0f32, 2.0, 3.0, 4.0].map(f32::to_bits));
    assert_eq!(words[4..], [7, 8]);
    for bad in [".global .v8 .u32 x;", ".global .v2 .pred x;"] {
        assert!(Module::parse(&format!("{HEAD}{bad}\n")).is_err(), "{bad}");
    }
}

#[test]
fn an_unsized_array_takes_its_size_from_its_initialiser() {
    let src = format!(
        "{HEAD}.global .align 4 .u32 ua[] = {{1, 2, 3}};\n.global .u16 grid[][2] = {{{{4, 5}}, {{6, 7}}}};\n\
         .visible .entry k(.param .u64 out)\n{{\n.reg .b64 %rd<2>;\n.reg .b32 %r<4>;\n\
         ld.param.u64 %rd1, [out];\nld.global.u32 %r1, [ua+8];\nld.global.u16 %r2, [grid+6];\n\
         st.global.v2.u32 [%rd1], {{%r1, %r2}};\nret;\n}}\n"
    );
    let m = Module::parse(&src).unwrap();
    let g = |n: &str| m.globals.iter().find(|g| g.name == n).unwrap();
    assert_eq!((g("ua").size, g("grid").size), (12, 8));
    let mut mem = TestMemory::new();
    let out = mem.map(&[0u8; 8], true);
    let globals = mem.map_globals(&m);
    let p = params(&m.kernels[0], &[out]);
    let mut l = launch(1, 1, &p);
    l.globals = &globals;
    run(&m, 0, &l, &mem).unwrap();
    assert_eq!(to_u32s(&mem.read(out)), [3, 7]);
}

#[test]
fn a_short_braced_row_is_padded_to_its_dimension() {
    // As C's initialisers: {{4}, {6, 7}} is 4, 0, 6, 7; a vector's braces likewise;
    // elided braces run on.
    let src = format!(
        "{HEAD}.global .u16 g[2][2] = {{{{4}}, {{6, 7}}}};\n\
         .global .v2 .u32 v[3] = {{{{1}}, {{2, 3}}, {{4}}}};\n\
         .global .u8 flat[2][2] = {{1, 2, 3}};\n.visible .entry k() {{ ret; }}\n"
    );
    let m = Module::parse(&src).unwrap();
    let init = |n: &str| m.globals.iter().find(|g| g.name == n).unwrap().init.clone();
    assert_eq!(init("g"), [4, 0, 0, 0, 6, 0, 7, 0]);
    assert_eq!(to_u32s(&init("v")), [1, 0, 2, 3, 4]);
    assert_eq!(init("flat"), [1, 2, 3]);
    // Padding the text does not pay for is bounded: a load error, not gigabytes.
    let rows = vec!["{1}"; 64].join(", ");
    let src = format!("{HEAD}.global .u8 big[][1048576] = {{{rows}}};\n");
    assert!(Module::parse(&src).is_err());
}

#[test]
fn constant_expressions_follow_cs_operators_and_precedence() {
    // Each word is one expression, as C (64-bit, signed) evaluates it; the last two
    // doubles are a float expression and an initialiser's.
    let module = ".global .align 8 .u64 init_expr = (1 << 8) + 3 * 2;";
    let body = "mov.u32 %r1, (1<<4)+2;\nmov.u32 %r2, 1 + 2 * 3 << 1;\nmov.u32 %r3, ~0 & 0xff;\n\
                mov.s32 %r4, -(3+4);\nmov.u32 %r5, 10 % 3;\nmov.u32 %r6, (7 > 3) ? 1 : 2;\n\
                mov.s32 %r7, -8 >> 1;\nmov.u32 %r8, !0 + (2 == 2) + (1 && 0) + (0 || 3);\n\
                mov.u32 %r9, 6 ^ 3 | 8;\nmov.u32 %r10, 7 / 2;\n\
                st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};\n\
                st.global.v4.u32 [%rd1+16], {%r5, %r6, %r7, %r8};\n\
                st.global.v2.u32 [%rd1+(4*8)], {%r9, %r10};\n\
                mov.f64 %fd1, 2.5 * 2 + 1;\nst.global.f64 [%rd1+40], %fd1;\n\
                ld.global.u64 %rd2, [init_expr];\nst.global.u64 [%rd1+48], %rd2;";
    let src_words = run_words(module, body, &[], 14);
    assert_eq!(
        src_words[..10],
        [18, 14, 255, (-7i32) as u32, 1, 1, (-4i32) as u32, 3, 13, 3]
    );
    let f = f64::from_bits(u64::from(src_words[10]) | u64::from(src_words[11]) << 32);
    assert_eq!(f, 6.0);
    assert_eq!(src_words[12..], [262, 0]);
}

#[test]
fn bad_constant_expressions_are_load_errors() {
    for body in [
        "mov.u32 %r1, 1 / 0;",
        "mov.u32 %r1, (1 + 2;",
        "mov.u32 %r1, 1 ? 2;",
        "mov.u32 %r1, ~1.5;",
        "ld.global.u32 %r1, [%rd1+(1.5)];",
    ] {
        let src = format!(
            "{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n{body}\nret;\n}}\n"
        );
        assert!(Module::parse(&src).is_err(), "{body}");
    }
    // Deep nesting is refused, not a stack overflow.
    let deep = format!("{}1{}", "(".repeat(5000), ")".repeat(5000));
    let src = format!(
        "{HEAD}.visible .entry k()\n{{\n.reg .b32 %r<4>;\nmov.u32 %r1, {deep};\nret;\n}}\n"
    );
    assert!(Module::parse(&src).is_err());
}
