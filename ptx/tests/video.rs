//! The video instructions (scalar `vadd`...`vset`, `vmad`, SIMD `vop2`/`vop4`) and the
//! other integer forms of issue 21 (`dp2a`, `fns`, `slct`, `cvt.pack.sat`), against
//! values worked by hand and against a reference written here over edge and random
//! operands, modifiers and selectors. The SIMD forms follow the PTX ISA's pseudocode;
//! the scalar forms, `vmad` and `fns` follow the H200 where it departs from the ISA
//! (the corpus, ptx/corpus/video.cu, recorded it; the hand cases say how they differ).

mod common;
use common::*;
use cumock_ptx::{run, Engine, Module};

const ENGINES: [Engine; 2] = [Engine::Interp, Engine::Jit];

/// Runs each instruction of `insts` (`D`, `A`, `B`, `C` stand for the destination and
/// the three sources, %r4 and %r1-%r3) for every (a, b, c) of `inputs`, one thread
/// each; result `[k][t]` is instruction k's d for input t (d starts as 0xdeadbeef).
fn run_insts(insts: &[String], inputs: &[(u32, u32, u32)]) -> Vec<Vec<u32>> {
    let n = insts.len();
    let mut body = String::new();
    for (k, inst) in insts.iter().enumerate() {
        let inst = inst
            .replace('D', "%r4")
            .replace('A', "%r1")
            .replace('B', "%r2")
            .replace('C', "%r3");
        body += &format!(
            "mov.u32 %r4, 0xdeadbeef;\n{inst};\nst.global.u32 [%rd6+{}], %r4;\n",
            4 * k
        );
    }
    let src = format!(
        ".version 9.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 inp, .param .u64 out)\n{{\n\
         .reg .b64 %rd<8>;\n.reg .b32 %r<16>;\n\
         ld.param.u64 %rd1, [inp];\nld.param.u64 %rd2, [out];\n\
         mov.u32 %r0, %tid.x;\nmul.wide.u32 %rd3, %r0, 12;\nadd.s64 %rd4, %rd1, %rd3;\n\
         ld.global.u32 %r1, [%rd4];\nld.global.u32 %r2, [%rd4+4];\nld.global.u32 %r3, [%rd4+8];\n\
         mul.wide.u32 %rd5, %r0, {};\nadd.s64 %rd6, %rd2, %rd5;\n{body}ret;\n}}\n",
        4 * n
    );
    let m = Module::parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let words: Vec<u32> = inputs.iter().flat_map(|&(a, b, c)| [a, b, c]).collect();
    let mut results = Vec::new();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let inp = mem.map(&u32s(&words), false);
        let out = mem.map(&vec![0u8; 4 * n * inputs.len()], true);
        let p = params(&m.kernels[0], &[inp, out]);
        let mut l = launch(1, inputs.len() as u32, &p);
        l.engine = engine;
        run(&m, 0, &l, &mem).unwrap_or_else(|e| panic!("{e:?}\n{src}"));
        let o = to_u32s(&mem.read(out));
        let per_inst: Vec<Vec<u32>> = (0..n)
            .map(|k| (0..inputs.len()).map(|t| o[t * n + k]).collect())
            .collect();
        results.push(per_inst);
    }
    assert_eq!(results[0], results[1], "the interpreter and the JIT differ");
    results.pop().unwrap()
}

/// One instruction on one input.
fn one(inst: &str, a: u32, b: u32, c: u32) -> u32 {
    run_insts(&[inst.to_string()], &[(a, b, c)])[0][0]
}

fn load_error(body: &str) -> String {
    let src = format!(
        ".version 9.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{{\n\
         .reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n{body}\nret;\n}}\n"
    );
    match Module::parse(&src) {
        Ok(_) => panic!("`{body}` loaded"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn scalar_video_forms_by_hand() {
    let cases: &[(&str, u32, u32, u32, u32)] = &[
        // 0xffffffff as .u32 plus 1 as .s32 is 2^32: past S32_MAX, clamped.
        (
            "vadd.s32.u32.s32.sat D, A, B",
            0xffff_ffff,
            1,
            0,
            0x7fff_ffff,
        ),
        // Without .sat the 34-bit sum keeps its low 32 bits.
        ("vadd.s32.u32.s32 D, A, B", 0xffff_ffff, 1, 0, 0),
        // 1 - 2 clamped to an unsigned destination is 0.
        ("vsub.u32.u32.u32.sat D, A, B", 1, 2, 0, 0),
        ("vsub.u32.u32.u32 D, A, B", 1, 2, 0, 0xffff_ffff),
        // Byte 0 of a as .s8 (-128), half 1 of b as .u16 (0xffff): |-128 - 65535|.
        (
            "vabsdiff.s32.s32.u32 D, A.b0, B.h1",
            0x80,
            0xffff_0000,
            0,
            65663,
        ),
        // min(5, -3) + 10.
        ("vmin.s32.s32.s32.add D, A, B, C", 5, (-3i32) as u32, 10, 7),
        // max as unsigned: 0xfffffffd.
        (
            "vmax.u32.u32.u32 D, A, B",
            5,
            (-3i32) as u32,
            0,
            0xffff_fffd,
        ),
        // The secondary min compares with c of the destination's sign.
        (
            "vadd.s32.s32.s32.min D, A, B, C",
            1,
            2,
            0xffff_ffff,
            0xffff_ffff,
        ),
        ("vadd.u32.s32.s32.min D, A, B, C", 1, 2, 0xffff_ffff, 3),
        // Merge into half 1 of c, saturated to .s16: 40000 -> 32767. The ISA moves it
        // into half 1 (0x7fff_5678); the H200 merges the result's own bits 16-31,
        // here 0.
        (
            "vadd.s32.u32.u32.sat D.h1, A, B, C",
            40000,
            0,
            0x1234_5678,
            0x0000_5678,
        ),
        // Without .sat: 0x12345 + 0x10000's bits 16-31 (2), not its low half (0x2345).
        (
            "vadd.u32.u32.u32 D.h1, A, B, C",
            0x1_2345,
            0x1_0000,
            0xaaaa_bbbb,
            0x0002_bbbb,
        ),
        // Merge into byte 2 of c, saturated to .u8: 300 -> 255.
        (
            "vadd.u32.u32.u32.sat D.b2, A, B, C",
            200,
            100,
            0x1111_1111,
            0x11ff_1111,
        ),
        // Merge without .sat: the low byte of 300 (0x2c).
        (
            "vadd.u32.u32.u32 D.b0, A, B, C",
            200,
            100,
            0x1111_1111,
            0x1111_112c,
        ),
        // A negative result saturated for a signed byte: the ISA gives -128, the H200
        // the byte's maximum, 127 (a merge saturates to [0, max]).
        ("vsub.s32.s32.s32.sat D.b3, A, B, C", 0, 200, 0, 0x7f00_0000),
        (
            "vsub.u32.u32.u32.sat D.h0, A, B, C",
            1,
            2,
            0xaaaa_aaaa,
            0xaaaa_ffff,
        ),
        // .sat to an unsigned word clamps at 0 but, on the H200, not above: 2^32 + 1
        // keeps its low word (the ISA: U32_MAX).
        ("vadd.u32.u32.u32.sat D, A, B", 0xffff_ffff, 2, 0, 1),
        ("vsub.u32.s32.s32.sat D, A, B", 0, 1, 0, 0),
        // A sum's low word, sign-extended, meets the secondary max: 0x8000_0000 as
        // 0xffff_ffff_8000_0000 beats c = U32_MAX unsigned (the ISA keeps c).
        (
            "vadd.u32.u32.u32.max D, A, B, C",
            0x4000_0000,
            0x4000_0000,
            0xffff_ffff,
            0x8000_0000,
        ),
        // A difference wraps to 32 bits before .min: 0x7fffffff - (-1) is -2^31.
        (
            "vsub.s32.s32.s32.min D, A, B, C",
            0x7fff_ffff,
            0xffff_ffff,
            0,
            0x8000_0000,
        ),
        // Shifts: .clamp stops at 32 (1 << 32 is 0 in 32 bits, U32_MAX saturated).
        ("vshl.u32.u32.u32.clamp D, A, B", 1, 40, 0, 0),
        ("vshl.u32.u32.u32.sat.clamp D, A, B", 1, 40, 0, 0xffff_ffff),
        // .sat sees the shifted value's low 34 bits, sign-extended: 0x7f << 32 has
        // bits 33 and 32 set, so it is negative and clamps to S32_MIN (the ISA: MAX).
        (
            "vshl.s32.s32.u32.sat.clamp D, A, B",
            0x7f,
            32,
            0,
            0x8000_0000,
        ),
        // .wrap takes the amount mod 32: 40 -> 8.
        ("vshl.u32.u32.u32.wrap D, A, B", 1, 40, 0, 0x100),
        // An arithmetic shift of a signed a: 33 wraps to 1.
        (
            "vshr.s32.s32.u32.wrap D, A, B",
            0x8000_0000,
            33,
            0,
            0xc000_0000,
        ),
        // .clamp at 32 shifts out everything but the sign.
        (
            "vshr.s32.s32.u32.clamp D, A, B",
            0x8000_0000,
            99,
            0,
            0xffff_ffff,
        ),
        ("vshr.u32.u32.u32.clamp D, A, B", 0x8000_0000, 99, 0, 0),
        // A shifted byte: byte 1 (0x81 as .s8 = -127) << 4 = -2032, into .s16 half 0.
        (
            "vshl.s32.s32.u32.clamp D.h0, A.b1, B, C",
            0x8100,
            4,
            0xaaaa_0000,
            0xaaaa_f810,
        ),
        // vset: unsigned 0/1, with a secondary add.
        ("vset.s32.u32.lt D, A, B", (-1i32) as u32, 0, 0, 1),
        ("vset.u32.u32.lt D, A, B", (-1i32) as u32, 0, 0, 0),
        ("vset.u32.u32.ne.add D, A, B, C", 1, 2, 41, 42),
        ("vset.s32.s32.ge.max D, A, B, C", 1, 2, 7, 7),
        // The H200 meets c in a's sign: min(0, -1) signed is -1 (the ISA: unsigned, 0).
        (
            "vset.s32.s32.ne.min D, A, B, C",
            1,
            1,
            0xffff_ffff,
            0xffff_ffff,
        ),
        ("vset.u32.s32.ne.min D, A, B, C", 1, 1, 0xffff_ffff, 0),
        (
            "vset.u32.u32.eq D.b1, A.b0, B.b3, C",
            0x55,
            0x5500_0000,
            0xffff_ffff,
            0xffff_01ff,
        ),
    ];
    let insts: Vec<String> = cases.iter().map(|c| c.0.to_string()).collect();
    for (k, &(inst, a, b, c, want)) in cases.iter().enumerate() {
        let got = run_insts(&insts[k..=k], &[(a, b, c)])[0][0];
        assert_eq!(
            got, want,
            "{inst} with a={a:#x} b={b:#x} c={c:#x}: {got:#x}"
        );
    }
}

#[test]
fn vmad_forms_by_hand() {
    let cases: &[(&str, u32, u32, u32, u32)] = &[
        // (u32 * u32) + u32 scaled: 0xfffe0001 >> 15; 2^32 >> 15.
        (
            "vmad.u32.u32.u32.shr15 D, A.h0, B.h0, C",
            0xffff,
            0xffff,
            0,
            0x1_fffc,
        ),
        (
            "vmad.u32.u32.u32.shr15 D, A, B, C",
            0x1_0000,
            0x1_0000,
            0,
            0x2_0000,
        ),
        ("vmad.u32.u32.u32 D, A, B, C", 0x1_0000, 0x1_0000, 7, 7),
        // Signed, saturated: 2^32 - 1 -> S32_MAX.
        (
            "vmad.s32.s32.s32.sat D, A, B, C",
            0x1_0000,
            0x1_0000,
            (-1i32) as u32,
            0x7fff_ffff,
        ),
        // (u32 * u32) - u32 is signed: 15 - 20.
        ("vmad.s32.u32.u32 D, A, B, -C", 5, 3, 20, (-5i32) as u32),
        ("vmad.s32.u32.u32.sat D, A, B, -C", 5, 3, 20, (-5i32) as u32),
        // -(a * b) + c.
        ("vmad.s32.s32.s32 D, -A, B, C", 5, 3, 20, 5),
        ("vmad.s32.s32.s32 D, A, -B, C", 5, 3, 20, 5),
        // Both negated: the product is not.
        ("vmad.s32.s32.s32 D, -A, -B, C", 5, 3, 20, 35),
        // .po: a * b + c + 1.
        ("vmad.u32.u32.u32.po D, A, B, C", 3, 4, 5, 18),
        // .po with .shr7: (200 * 200 + 0 + 1) >> 7 = 312.
        ("vmad.u32.u32.u32.po.shr7 D, A, B, C", 200, 200, 0, 312),
        // A signed byte times an unsigned byte: -1 * 255 + 0.
        (
            "vmad.s32.s32.u32 D, A.b0, B.b1, C",
            0xff,
            0xff00,
            0,
            (-255i32) as u32,
        ),
        // The H200 multiplies the words as signed 32-bit integers: U32_MAX is -1 there,
        // so -2 saturates to 0 (the ISA: 2^33 - 2, clamped to U32_MAX).
        ("vmad.u32.u32.u32.sat D, A, B, C", 0xffff_ffff, 2, 0, 0),
        (
            "vmad.u32.u32.u32.sat D, A, B, C",
            0x7fff_ffff,
            4,
            0,
            0xffff_ffff,
        ),
        // ... and c is sign-extended: 1 * 1 + (-1) = 0, .shr15 of it 0 (the ISA's
        // unsigned c: 2^32 >> 15).
        ("vmad.u32.u32.u32.shr15 D, A, B, C", 1, 1, 0xffff_ffff, 0),
        // An unsigned scale shifts the 64-bit sum logically: -2^15 >> 15 is 2^49 - 1,
        // saturated.
        (
            "vmad.u32.u32.u32.sat.shr15 D, A, B, C",
            0xffff_8000,
            1,
            0,
            0xffff_ffff,
        ),
        // Negative scaled: (-2^20) >> 7, arithmetic.
        (
            "vmad.s32.s32.s32.shr7 D, A, B, C",
            (-(1i32 << 10)) as u32,
            1 << 10,
            0,
            (-(1i32 << 13)) as u32,
        ),
    ];
    for &(inst, a, b, c, want) in cases {
        let got = one(inst, a, b, c);
        assert_eq!(
            got, want,
            "{inst} with a={a:#x} b={b:#x} c={c:#x}: {got:#x}"
        );
    }
}

#[test]
fn simd_video_forms_by_hand() {
    let cases: &[(&str, u32, u32, u32, u32)] = &[
        // Halves of a with halves of b; 0xffff + 1 wraps in 16 bits, or clamps.
        (
            "vadd2.u32.u32.u32 D, A, B, C",
            0x0001_ffff,
            0x0001_0001,
            0,
            0x0002_0000,
        ),
        (
            "vadd2.u32.u32.u32.sat D, A, B, C",
            0x0001_ffff,
            0x0001_0001,
            0,
            0x0002_ffff,
        ),
        // Signed saturation per half.
        (
            "vadd2.s32.s32.s32.sat D, A, B, C",
            0x7fff_8000,
            0x0001_ffff,
            0,
            0x7fff_8000,
        ),
        (
            "vsub2.s32.s32.s32 D, A, B, C",
            0x0000_0005,
            0x0001_0007,
            0,
            0xffff_fffe,
        ),
        // Selectors from the pair {b, a}: a.h01 swaps a's halves; b.h22 is b's low half
        // twice.
        (
            "vadd2.u32.u32.u32 D, A.h01, B.h22, C",
            0x0002_0001,
            0x0000_0010,
            0,
            0x0011_0012,
        ),
        // a's halves picked from b (h32) and b's from a (h10).
        (
            "vsub2.u32.u32.u32 D, A.h32, B.h10, C",
            0x0001_0001,
            0x0005_0009,
            0,
            0x0004_0008,
        ),
        // vavrg2: (-3 + 0) >> 1 = -2; (1 + 2 + 1) >> 1 = 2.
        (
            "vavrg2.s32.s32.s32 D, A, B, C",
            0x0001_fffd,
            0x0002_0000,
            0,
            0x0002_fffe,
        ),
        // Unsigned: (0xffff + 0xffff + 1) >> 1 = 0xffff.
        (
            "vavrg2.u32.u32.u32 D, A, B, C",
            0xffff_0001,
            0xffff_0002,
            0,
            0xffff_0002,
        ),
        // The mask: only half 1 written, half 0 from c.
        (
            "vmax2.u32.u32.u32 D.h1, A, B, C",
            0x0005_0005,
            0x0009_0009,
            0xaaaa_bbbb,
            0x0009_bbbb,
        ),
        // .add: c plus the masked results, signed: (5 - 7) + (0 - 1) + 100 = 97.
        (
            "vsub2.s32.s32.s32.add D, A, B, C",
            0x0000_0005,
            0x0001_0007,
            100,
            97,
        ),
        (
            "vsub2.s32.s32.s32.add D.h0, A, B, C",
            0x0000_0005,
            0x0001_0007,
            100,
            98,
        ),
        // The classic SAD: |1-4| + |2-3| + |3-2| + |4-1| + 100.
        (
            "vabsdiff4.u32.u32.u32.add D, A, B, C",
            0x0102_0304,
            0x0403_0201,
            100,
            108,
        ),
        (
            "vsub4.s32.s32.s32.add D, A, B, C",
            0,
            0x0101_0101,
            0,
            (-4i32) as u32,
        ),
        // Per-byte saturation, signed and unsigned.
        (
            "vadd4.s32.s32.s32.sat D, A, B, C",
            0x7f80_7f80,
            0x01ff_0000,
            0,
            0x7f80_7f80,
        ),
        (
            "vadd4.u32.u32.u32.sat D, A, B, C",
            0xff01_ff01,
            0x0101_0000,
            0,
            0xff02_ff01,
        ),
        (
            "vadd4.u32.u32.u32 D, A, B, C",
            0xff01_ff01,
            0x0101_0000,
            0,
            0x0002_ff01,
        ),
        // Mask b31: bytes 3 and 1 from the result, 2 and 0 from c.
        (
            "vmax4.u32.u32.u32 D.b31, A, B, C",
            0x0102_0304,
            0x0403_0201,
            0xaabb_ccdd,
            0x04bb_03dd,
        ),
        // Selectors: a.b0123 reverses a; b.b4444 is b's byte 0 four times.
        (
            "vadd4.u32.u32.u32 D, A.b0123, B.b4444, C",
            0x0102_0304,
            0x0000_0010,
            0,
            0x1413_1211,
        ),
        // Bytes of b picked by a's selector, of a by b's.
        (
            "vsub4.u32.u32.u32 D, A.b7654, B.b3210, C",
            0x0101_0101,
            0x0504_0302,
            0,
            0x0403_0201,
        ),
        // vset2/vset4: per element 0/1; merge or count.
        (
            "vset2.s32.s32.lt D, A, B, C",
            0xffff_0001,
            0x0000_0001,
            0,
            0x0001_0000,
        ),
        (
            "vset2.u32.u32.lt D, A, B, C",
            0xffff_0001,
            0x0000_0002,
            0,
            0x0000_0001,
        ),
        (
            "vset4.u32.u32.ne.add D, A, B, C",
            0x0102_0304,
            0x0102_0305,
            10,
            11,
        ),
        (
            "vset4.s32.u32.lt D.b20, A, B, C",
            0x80ff_80ff,
            0x0000_0000,
            0x7777_7777,
            0x7701_7701,
        ),
        (
            "vavrg4.s32.s32.s32 D, A, B, C",
            0x80_7f_fd_03,
            0x80_7f_00_00,
            0,
            0x80_7f_fe_02,
        ),
    ];
    for &(inst, a, b, c, want) in cases {
        let got = one(inst, a, b, c);
        assert_eq!(
            got, want,
            "{inst} with a={a:#x} b={b:#x} c={c:#x}: {got:#x}"
        );
    }
}

// ---- a reference from the ISA's pseudocode, over many forms ----------------------

/// `partSelectSignExtend`.
fn part(x: u32, sel: &str, signed: bool) -> i128 {
    let (v, bits) = match sel {
        "" => (x as u64, 32),
        "b0" | "b1" | "b2" | "b3" => ((x >> (8 * (sel.as_bytes()[1] - b'0'))) as u8 as u64, 8),
        "h0" | "h1" => ((x >> (16 * (sel.as_bytes()[1] - b'0'))) as u16 as u64, 16),
        _ => unreachable!(),
    };
    if signed && v >> (bits - 1) == 1 {
        v as i128 - (1i128 << bits)
    } else {
        v as i128
    }
}

fn clamp_to(x: i128, bits: u32, signed: bool) -> i128 {
    if signed {
        x.clamp(-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        x.clamp(0, (1i128 << bits) - 1)
    }
}

struct ScalarForm {
    op: &'static str,
    d: bool,
    a: bool,
    b: bool,
    sat: bool,
    asel: &'static str,
    bsel: &'static str,
    /// "", "add", "min", "max", or a merge selector "b0".."h1".
    second: &'static str,
    mode: &'static str,
}

impl ScalarForm {
    fn text(&self) -> String {
        let t = |s: bool| if s { ".s32" } else { ".u32" };
        let dot = |s: &str| {
            if s.is_empty() {
                String::new()
            } else {
                format!(".{s}")
            }
        };
        let merge = self.second.starts_with(['b', 'h']);
        let types = if self.op == "vset" {
            format!("{}{}", t(self.a), t(self.b))
        } else {
            format!("{}{}{}", t(self.d), t(self.a), t(self.b))
        };
        let mut s = format!("{}{types}", self.op);
        if self.sat {
            s += ".sat";
        }
        s += &dot(self.mode);
        if !merge {
            s += &dot(self.second);
        }
        let dst = if merge {
            format!("D.{}", self.second)
        } else {
            "D".into()
        };
        s += &format!(" {dst}, A{}, B{}", dot(self.asel), dot(self.bsel));
        if !self.second.is_empty() {
            s += ", C";
        }
        s
    }

    /// The H200's rules (where they leave the ISA's pseudocode, each is said in
    /// `cumock_ptx::video::Scalar::eval`; the corpus recorded them in `video_scalar`).
    fn reference(&self, a: u32, b: u32, c: u32) -> u32 {
        let ta = part(a, self.asel, self.a);
        let tb = part(b, self.bsel, self.b);
        let shift = self.op == "vshl" || self.op == "vshr";
        let add_sub = self.op == "vadd" || self.op == "vsub";
        let r = match self.op {
            "vadd" => ta + tb,
            "vsub" => ta - tb,
            "vabsdiff" => (ta - tb).abs(),
            "vmin" => ta.min(tb),
            "vmax" => ta.max(tb),
            "vshl" | "vshr" => {
                let n = if self.mode == "clamp" {
                    tb.min(32)
                } else {
                    tb & 31
                };
                if self.op == "vshl" {
                    // In 64 bits.
                    i128::from((ta << n) as i64)
                } else {
                    ta >> n
                }
            }
            cmp => {
                let r = match cmp {
                    "vset.eq" => ta == tb,
                    "vset.ne" => ta != tb,
                    "vset.lt" => ta < tb,
                    "vset.le" => ta <= tb,
                    "vset.gt" => ta > tb,
                    _ => ta >= tb,
                };
                r as i128
            }
        };
        let merge_bits = match self.second {
            "b0" | "b1" | "b2" | "b3" => 8,
            "h0" | "h1" => 16,
            _ => 32,
        };
        let v = if !self.sat {
            r
        } else if shift {
            // The low 34 bits, sign-extended, clamped to the word.
            let low34 = (r as i64) << 30 >> 30;
            clamp_to(i128::from(low34), 32, self.d)
        } else if merge_bits < 32 {
            // [0, the subword's maximum]; a negative result takes the maximum.
            let max = if self.d {
                (1i128 << (merge_bits - 1)) - 1
            } else {
                (1i128 << merge_bits) - 1
            };
            if r < 0 || r > max {
                max
            } else {
                r
            }
        } else if self.d {
            clamp_to(r, 32, true)
        } else if r < 0 {
            0
        } else if add_sub {
            // No upper clamp: the low word.
            r & 0xffff_ffff
        } else {
            r
        };
        // An add's or sub's low word, sign-extended, goes on.
        let v = if add_sub {
            i128::from(v as u32 as i32)
        } else {
            v
        };
        let tc = part(c, "", self.d);
        // `min`/`max` compare in 64 bits, unsigned for an unsigned destination.
        let as_u64 = |x: i128| if self.d { x } else { i128::from(x as u64) };
        match self.second {
            "" => v as u32,
            "add" => (v as u32).wrapping_add(c),
            "min" if as_u64(v) < tc => v as u32,
            "max" if as_u64(v) > tc => v as u32,
            "min" | "max" => c,
            // `.h1` takes the value's bits 16-31 where they are.
            "h1" => (c & 0xffff) | (v as u32 & 0xffff_0000),
            sel => {
                let shift = merge_bits * u32::from(sel.as_bytes()[1] - b'0');
                let field = ((1u64 << merge_bits) - 1) as u32;
                (c & !(field << shift)) | ((v as u32 & field) << shift)
            }
        }
    }
}

/// What the H200 gives for (a, b, c).
type Reference = Box<dyn Fn(u32, u32, u32) -> u32>;

/// A fixed sequence of pseudo-random words (xorshift), the same every run.
fn words(n: usize, mut seed: u64) -> Vec<u32> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u32
        })
        .collect()
}

/// Operands: edge values of bytes, halves and words in every position, then random.
fn operand_sets() -> Vec<(u32, u32, u32)> {
    const EDGES: [u32; 16] = [
        0,
        1,
        0x7f,
        0x80,
        0xff,
        0x7fff,
        0x8000,
        0xffff,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_ffff,
        0x80ff_7f01,
        0x0180_ff7f,
        0x1234_5678,
        0xfffe_0002,
        33,
    ];
    let r = words(3 * 64, 0x9e37_79b9_7f4a_7c15);
    let mut v = Vec::new();
    for i in 0..64 {
        v.push((
            EDGES[i % 16],
            EDGES[(i / 4 + i) % 16],
            EDGES[(i * 7 + 3) % 16],
        ));
    }
    for i in 0..64 {
        v.push((r[3 * i], r[3 * i + 1], r[3 * i + 2]));
    }
    v
}

fn check_all(texts: &[String], refs: &[&dyn Fn(u32, u32, u32) -> u32]) {
    let inputs = operand_sets();
    for (chunk_t, chunk_r) in texts.chunks(24).zip(refs.chunks(24)) {
        let got = run_insts(chunk_t, &inputs);
        for (k, (text, reference)) in chunk_t.iter().zip(chunk_r).enumerate() {
            for (t, &(a, b, c)) in inputs.iter().enumerate() {
                let want = reference(a, b, c);
                assert_eq!(
                    got[k][t], want,
                    "{text} with a={a:#x} b={b:#x} c={c:#x}: got {:#x}, the H200 gives {want:#x}",
                    got[k][t]
                );
            }
        }
    }
}

#[test]
fn scalar_video_forms_match_the_h200_rules() {
    let sels = ["", "b0", "b1", "b2", "b3", "h0", "h1"];
    let seconds = ["", "add", "min", "max", "b0", "b3", "h0", "h1"];
    let ops = [
        "vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vset.eq", "vset.ne",
        "vset.lt", "vset.le", "vset.gt", "vset.ge",
    ];
    let r = words(8 * 400, 42);
    let mut forms = Vec::new();
    for k in 0..400 {
        let x = &r[8 * k..8 * k + 8];
        let op = ops[k % ops.len()];
        let shift = op == "vshl" || op == "vshr";
        let set = op.starts_with("vset");
        forms.push(ScalarForm {
            op: if set { "vset" } else { op },
            d: x[0] & 1 == 1,
            a: x[0] & 2 == 2,
            b: x[0] & 4 == 4 && !shift,
            sat: x[0] & 8 == 8 && !set,
            asel: sels[x[1] as usize % sels.len()],
            bsel: sels[x[2] as usize % sels.len()],
            second: seconds[x[3] as usize % seconds.len()],
            mode: if !shift {
                if set {
                    &op[5..]
                } else {
                    ""
                }
            } else if x[4] & 1 == 1 {
                "clamp"
            } else {
                "wrap"
            },
        });
    }
    // The reference names comparisons `vset.cmp`; the H200 meets c in a's sign.
    let texts: Vec<String> = forms.iter().map(ScalarForm::text).collect();
    let refs: Vec<Reference> = forms
        .into_iter()
        .map(|f| {
            let f = if f.op == "vset" {
                ScalarForm {
                    op: match f.mode {
                        "eq" => "vset.eq",
                        "ne" => "vset.ne",
                        "lt" => "vset.lt",
                        "le" => "vset.le",
                        "gt" => "vset.gt",
                        _ => "vset.ge",
                    },
                    d: f.a,
                    mode: "",
                    ..f
                }
            } else {
                f
            };
            Box::new(move |a, b, c| f.reference(a, b, c)) as Reference
        })
        .collect();
    let refs: Vec<&dyn Fn(u32, u32, u32) -> u32> = refs.iter().map(|b| b.as_ref()).collect();
    check_all(&texts, &refs);
}

#[test]
fn vmad_forms_match_the_h200_rules() {
    let sels = ["", "b0", "b1", "b2", "b3", "h0", "h1"];
    let r = words(6 * 200, 7);
    let mut texts = Vec::new();
    let mut refs: Vec<Reference> = Vec::new();
    for k in 0..200 {
        let x = &r[6 * k..6 * k + 6];
        let (sa, sb) = (x[0] & 1 == 1, x[0] & 2 == 2);
        let sat = x[0] & 4 == 4;
        let po = x[0] & 0x30 == 0x30;
        // At most one of: the product negated (by a or b), c negated.
        let (na, nb, nc) = if po {
            (false, false, false)
        } else {
            match x[1] % 5 {
                0 => (true, false, false),
                1 => (false, true, false),
                2 => (false, false, true),
                3 => (true, true, false),
                _ => (false, false, false),
            }
        };
        let shift = [0u32, 7, 15][x[2] as usize % 3];
        let (asel, bsel) = (sels[x[3] as usize % 7], sels[x[4] as usize % 7]);
        let t = |s: bool| if s { ".s32" } else { ".u32" };
        let dot = |s: &str| {
            if s.is_empty() {
                String::new()
            } else {
                format!(".{s}")
            }
        };
        let neg = |n: bool| if n { "-" } else { "" };
        texts.push(format!(
            "vmad{}{}{}{}{}{} D, {}A{}, {}B{}, {}C",
            t(sa || sb),
            t(sa),
            t(sb),
            if po { ".po" } else { "" },
            if sat { ".sat" } else { "" },
            match shift {
                7 => ".shr7",
                15 => ".shr15",
                _ => "",
            },
            neg(na),
            dot(asel),
            neg(nb),
            dot(bsel),
            neg(nc),
        ));
        refs.push(Box::new(move |a, b, c| {
            // The H200's rules (`cumock_ptx::video::Mad::eval` says where they leave
            // the ISA): the extracted operands multiply as signed 32-bit integers, c is
            // sign-extended, the 64-bit sum shifts arithmetically only when signed.
            let ta = part(a, asel, sa) as u32 as i32 as i64;
            let tb = part(b, bsel, sb) as u32 as i32 as i64;
            let signed_final = sa || sb || (na ^ nb) || nc;
            let tc = i64::from(c as i32);
            let sum = if po {
                ta * tb + tc + 1
            } else if na ^ nb {
                // ~(a * b) + c + 1.
                !(ta * tb) + tc + 1
            } else if nc {
                // a * b + ~c + 1.
                ta * tb + !tc + 1
            } else {
                ta * tb + tc
            };
            let result = if signed_final {
                sum >> shift
            } else {
                ((sum as u64) >> shift) as i64
            };
            if sat {
                clamp_to(i128::from(result), 32, signed_final) as u32
            } else {
                result as u32
            }
        }));
    }
    let refs: Vec<&dyn Fn(u32, u32, u32) -> u32> = refs.iter().map(|b| b.as_ref()).collect();
    check_all(&texts, &refs);
}

#[test]
fn simd_video_forms_match_the_isa_pseudocode() {
    let ops = [
        "vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax", "vset.eq", "vset.ne", "vset.lt",
        "vset.le", "vset.gt", "vset.ge",
    ];
    let r = words(8 * 400, 99);
    let mut texts = Vec::new();
    let mut refs: Vec<Reference> = Vec::new();
    for k in 0..400 {
        let x = &r[8 * k..8 * k + 8];
        let lanes: u32 = if k % 2 == 0 { 2 } else { 4 };
        let op = ops[(k / 2) % ops.len()];
        let set = op.starts_with("vset");
        let (sd, sa, sb) = (x[0] & 1 == 1, x[0] & 2 == 2, x[0] & 4 == 4);
        let add = x[0] & 8 == 8;
        let sat = !add && !set && x[0] & 16 == 16;
        let letter = if lanes == 2 { 'h' } else { 'b' };
        let pick = |w: u32| -> Vec<u8> {
            (0..lanes)
                .map(|i| ((w >> (4 * i)) % (2 * lanes)) as u8)
                .collect()
        };
        // Selector digits, highest element first.
        let (asel, bsel) = (pick(x[1]), pick(x[2]));
        let sel_text = |s: &[u8]| -> String {
            std::iter::once(letter)
                .chain(s.iter().rev().map(|d| (b'0' + d) as char))
                .collect()
        };
        let mask = if x[3] % 3 == 0 {
            (1u8 << lanes) - 1
        } else {
            (x[4] as u8 & ((1 << lanes) - 1)).max(1)
        };
        let mask_text: String = std::iter::once(letter)
            .chain(
                (0..lanes)
                    .rev()
                    .filter(|i| mask >> i & 1 == 1)
                    .map(|i| (b'0' + i as u8) as char),
            )
            .collect();
        let t = |s: bool| if s { ".s32" } else { ".u32" };
        let (name, cmp) = match op.split_once('.') {
            Some((n, c)) => (n, Some(c)),
            None => (op, None),
        };
        let types = if set {
            format!("{}{}", t(sa), t(sb))
        } else {
            format!("{}{}{}", t(sd), t(sa), t(sb))
        };
        texts.push(format!(
            "{name}{lanes}{types}{}{}{} D.{mask_text}, A.{}, B.{}, C",
            cmp.map(|c| format!(".{c}")).unwrap_or_default(),
            if sat { ".sat" } else { "" },
            if add { ".add" } else { "" },
            sel_text(&asel),
            sel_text(&bsel),
        ));
        let op = op.to_string();
        refs.push(Box::new(move |a, b, c| {
            let bits = 32 / lanes;
            let elem = |sel: u8, signed: bool| {
                let pair = (b as u64) << 32 | a as u64;
                let v = (pair >> (bits * sel as u32)) & ((1 << bits) - 1);
                if signed && v >> (bits - 1) == 1 {
                    v as i128 - (1i128 << bits)
                } else {
                    v as i128
                }
            };
            let mut t = Vec::new();
            for i in 0..lanes as usize {
                let (va, vb) = (elem(asel[i], sa), elem(bsel[i], sb));
                let r = match op.as_str() {
                    "vadd" => va + vb,
                    "vsub" => va - vb,
                    "vavrg" if va + vb >= 0 => (va + vb + 1) >> 1,
                    "vavrg" => (va + vb) >> 1,
                    "vabsdiff" => (va - vb).abs(),
                    "vmin" => va.min(vb),
                    "vmax" => va.max(vb),
                    "vset.eq" => (va == vb) as i128,
                    "vset.ne" => (va != vb) as i128,
                    "vset.lt" => (va < vb) as i128,
                    "vset.le" => (va <= vb) as i128,
                    "vset.gt" => (va > vb) as i128,
                    _ => (va >= vb) as i128,
                };
                t.push(if sat { clamp_to(r, bits, sd) } else { r });
            }
            if add {
                let mut d = c as i128;
                for (i, r) in t.iter().enumerate() {
                    if mask >> i & 1 == 1 {
                        d += r;
                    }
                }
                d as u32
            } else {
                let mut d = 0u32;
                let field = ((1u64 << bits) - 1) as u32;
                for (i, r) in t.iter().enumerate() {
                    let shift = bits * i as u32;
                    let v = if mask >> i & 1 == 1 {
                        *r as u32
                    } else {
                        c >> shift
                    };
                    d |= (v & field) << shift;
                }
                d
            }
        }));
    }
    let refs: Vec<&dyn Fn(u32, u32, u32) -> u32> = refs.iter().map(|b| b.as_ref()).collect();
    check_all(&texts, &refs);
}

#[test]
fn video_forms_the_isa_excludes_are_refused_at_load() {
    for (body, why) in [
        ("vset.u32.u32.lt.sat %r1, %r2, %r3;", "no `.sat`"),
        (
            "vadd2.u32.u32.u32.sat.add %r1, %r2, %r3, %r4;",
            "saturation cannot",
        ),
        (
            "vmad.s32.s32.s32 %r1, -%r2, %r3, -%r4;",
            "both the product and c",
        ),
        (
            "vmad.u32.u32.u32.po %r1, -%r2, %r3, %r4;",
            "negates no operand",
        ),
        ("vadd.u32.u32.u32 %r1, %r2.b4, %r3;", "b0-.b3"),
        ("vadd2.u32.u32.u32 %r1, %r2.h1, %r3, %r4;", "2-way selector"),
        (
            "vadd4.u32.u32.u32 %r1.b01, %r2, %r3, %r4;",
            "destination mask",
        ),
        (
            "vadd.u32.u32.u32.add %r1.b0, %r2, %r3, %r4;",
            "exclude each other",
        ),
        ("vadd.u32.u32.u32 %r1, %r2, %r3, %r4;", "takes 3 operands"),
        ("vshl.u32.u32.u32 %r1, %r2, %r3;", "`.clamp` or `.wrap`"),
        (
            "vshl.u32.u32.s32.wrap %r1, %r2, %r3;",
            "shift amount is .u32",
        ),
        (
            "vshl2.u32.u32.u32 %r1, %r2, %r3, %r4;",
            "unsupported instruction",
        ),
        (
            "vavrg.u32.u32.u32 %r1, %r2, %r3;",
            "unsupported instruction `vavrg",
        ),
        ("vadd.u64.u32.u32 %r1, %r2, %r3;", ".u32 or .s32"),
        ("add.u32 %r1, %r2.b0, %r3;", "undeclared"),
    ] {
        let e = load_error(body);
        assert!(e.contains(why), "`{body}`: {e}");
    }
}

// ---- dp2a, fns, slct, cvt.pack.sat ----------------------------------------------

#[test]
fn dp2a_fns_slct_and_cvt_pack_by_hand() {
    let cases: &[(&str, u32, u32, u32, u32)] = &[
        // a's halves (0xffff, 2) times b's bytes 0 and 1 (3, 0xff), plus c.
        (
            "dp2a.lo.u32.u32 D, A, B, C",
            0x0002_ffff,
            0x0000_ff03,
            10,
            10 + 0xffff * 3 + 2 * 0xff,
        ),
        // Signed a (-1, 2), unsigned b: bytes 2 and 3 (4, 5): -4 + 10 + c.
        ("dp2a.hi.s32.u32 D, A, B, C", 0x0002_ffff, 0x0504_0000, 1, 7),
        // Signed b: byte 0xff is -1: 0xffff (unsigned a) * -1 + 0 * ... + c(-1).
        (
            "dp2a.lo.u32.s32 D, A, B, C",
            0x0000_ffff,
            0x0000_00ff,
            0xffff_ffff,
            (-65536i32) as u32,
        ),
        // The ISA's examples of fns.
        ("fns.b32 D, A, B, C", 0xaaaa_aaaa, 3, 1, 3),
        ("fns.b32 D, A, B, C", 0xaaaa_aaaa, 3, (-1i32) as u32, 3),
        ("fns.b32 D, A, B, C", 0xaaaa_aaaa, 2, 1, 3),
        ("fns.b32 D, A, B, C", 0xaaaa_aaaa, 2, (-1i32) as u32, 1),
        // Offset 0: base itself, set or not.
        ("fns.b32 D, A, B, C", 0xaaaa_aaaa, 2, 0, 0xffff_ffff),
        ("fns.b32 D, A, B, C", 0xaaaa_aaaa, 1, 0, 1),
        // The 3rd set bit above bit 4 of 0xf0f0: bits 4,5,6 -> 6; the 5th: 12.
        ("fns.b32 D, A, B, C", 0xf0f0, 4, 3, 6),
        ("fns.b32 D, A, B, C", 0xf0f0, 4, 5, 12),
        // Running off either end.
        ("fns.b32 D, A, B, C", 0x8000_0001, 1, 2, 0xffff_ffff),
        ("fns.b32 D, A, B, C", 0x8000_0001, 31, -2i32 as u32, 0),
        // An offset of i32::MIN: the ISA finds nothing, the H200 gives 0 (ptxas's code
        // reads the count 2^31 as negative in its final test).
        ("fns.b32 D, A, B, C", 0xffff_ffff, 0, i32::MIN as u32, 0),
        ("fns.b32 D, A, B, C", 0x0000_0001, 31, i32::MIN as u32, 0),
        (
            "fns.b32 D, A, B, C",
            0xffff_ffff,
            31,
            (i32::MIN + 1) as u32,
            0xffff_ffff,
        ),
        // slct on the sign of c.
        ("slct.u32.s32 D, A, B, C", 11, 22, 0, 11),
        ("slct.u32.s32 D, A, B, C", 11, 22, 0x8000_0000, 22),
        ("slct.b32.f32 D, A, B, C", 11, 22, 0x8000_0000, 11), // -0.0 >= 0
        ("slct.b32.f32 D, A, B, C", 11, 22, 0x7fc0_0000, 22), // NaN
        ("slct.b32.f32 D, A, B, C", 11, 22, 0x8000_0001, 22), // -subnormal < 0
        ("slct.ftz.b32.f32 D, A, B, C", 11, 22, 0x8000_0001, 11), // flushed to -0
        ("slct.f32.f32 D, A, B, C", 11, 22, 0xbf80_0000, 22),
        // cvt.pack.sat: b low, a above, c's low bits on top.
        (
            "cvt.pack.sat.u8.s32.b32 D, A, B, C",
            300,
            (-5i32) as u32,
            0x1234,
            0x1234_ff00,
        ),
        (
            "cvt.pack.sat.s8.s32.b32 D, A, B, C",
            300,
            (-500i32) as u32,
            0xabcd_5678,
            0x5678_7f80,
        ),
        (
            "cvt.pack.sat.s8.s32.b32 D, A, B, C",
            5,
            (-6i32) as u32,
            0,
            0x0000_05fa,
        ),
        (
            "cvt.pack.sat.u16.s32 D, A, B",
            70000,
            (-1i32) as u32,
            0,
            0xffff_0000,
        ),
        (
            "cvt.pack.sat.s16.s32 D, A, B",
            (-70000i32) as u32,
            1234,
            0,
            0x8000_04d2,
        ),
    ];
    for &(inst, a, b, c, want) in cases {
        let got = one(inst, a, b, c);
        assert_eq!(
            got, want,
            "{inst} with a={a:#x} b={b:#x} c={c:#x}: {got:#x}"
        );
    }
}

#[test]
fn slct_keeps_64_bit_operands_and_sad_adds_the_difference() {
    let src = ".version 9.0\n.target sm_90\n.address_size 64\n\
               .visible .entry k(.param .u64 out)\n{\n.reg .b64 %rd<8>;\n.reg .b32 %r<8>;\n\
               .reg .f32 %f<2>;\nld.param.u64 %rd1, [out];\n\
               mov.b64 %rd2, 0x1122334455667788;\nmov.b64 %rd3, 0x99aabbccddeeff00;\n\
               slct.b64.s32 %rd4, %rd2, %rd3, -1;\nst.global.u64 [%rd1], %rd4;\n\
               mov.f32 %f1, 0f3f800000;\nslct.s64.f32 %rd5, %rd2, %rd3, %f1;\n\
               st.global.u64 [%rd1+8], %rd5;\n\
               sad.s32 %r1, -5, 7, 100;\nst.global.u32 [%rd1+16], %r1;\n\
               sad.u32 %r2, 5, 0xffffffff, 1;\nst.global.u32 [%rd1+20], %r2;\n\
               sad.u64 %rd6, 3, 10, 0xffffffffffffffff;\nst.global.u64 [%rd1+24], %rd6;\nret;\n}\n";
    let m = Module::parse(src).unwrap();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&[0u8; 32], true);
        let p = params(&m.kernels[0], &[out]);
        let mut l = launch(1, 1, &p);
        l.engine = engine;
        run(&m, 0, &l, &mem).unwrap();
        let o = mem.read(out);
        let u64_at = |i: usize| u64::from_le_bytes(o[i..i + 8].try_into().unwrap());
        let u32_at = |i: usize| u32::from_le_bytes(o[i..i + 4].try_into().unwrap());
        assert_eq!(u64_at(0), 0x99aa_bbcc_ddee_ff00);
        assert_eq!(u64_at(8), 0x1122_3344_5566_7788);
        // |−5 − 7| + 100; |5 − 0xffffffff| + 1 (unsigned); |3 − 10| + (−1) wraps to 6.
        assert_eq!(u32_at(16), 112);
        assert_eq!(u32_at(20), 0xffff_fffb);
        assert_eq!(u64_at(24), 6);
    }
}

#[test]
fn integer_forms_the_isa_excludes_are_refused_at_load() {
    for (body, why) in [
        ("cvt.pack.u8.s32.b32 %r1, %r2, %r3, %r4;", "needs `.sat`"),
        ("cvt.pack.sat.u8.u32.b32 %r1, %r2, %r3, %r4;", "cvt.pack"),
        ("cvt.pack.sat.u16.s32.b32 %r1, %r2, %r3, %r4;", "cvt.pack"),
        (
            "dp2a.u32.u32 %r1, %r2, %r3, %r4;",
            "unsupported instruction",
        ),
        ("fns.b64 %rd1, %rd2, %r3, %r4;", "unsupported instruction"),
        (
            "slct.ftz.u32.s32 %r1, %r2, %r3, %r4;",
            "unsupported instruction",
        ),
        ("setmaxnreg.inc.sync.aligned.u32 20;", "24 to 256"),
        ("setmaxnreg.dec.sync.aligned.u32 100;", "multiple of 8"),
        ("setmaxnreg.inc.u32 64;", ".sync.aligned"),
        ("setmaxnreg.inc.sync.aligned.u32 %r1;", "constant"),
        ("alloca.u32 %r1, 16, 3;", "power of 2"),
        ("alloca.u32 %r1, 16, 0x1000000;", "power of 2"),
        ("alloca.b32 %r1, 16;", "unsupported instruction"),
    ] {
        let e = load_error(body);
        assert!(e.contains(why), "`{body}`: {e}");
    }
}
