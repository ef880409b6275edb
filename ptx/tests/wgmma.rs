//! `wgmma.mma_async` in the executor, checked against host GEMMs: kernels generated here
//! for each shape, type, swizzle mode, majorness and operand source write A and B into
//! shared memory by the PTX ISA's canonical layouts (CUTLASS's `make_gmma_desc` forms),
//! build the descriptors by hand, run fence / mma_async (K steps) / commit / wait, and
//! store D by the accumulator fragment layout. Inputs are small integers: every sum is
//! exact, so these check layouts, descriptors, fragments and operand plumbing on both
//! engines; how the H200 rounds is the corpus's (`ptx/corpus/wgmma.cu`). Then the
//! warpgroup's errors: warps that do not all issue the instruction, a descriptor the
//! mock refuses, one outside shared memory.

mod common;
use common::*;
use cumock_ptx::{run, Engine, FaultKind, Module};

#[derive(Clone, Copy)]
struct Case {
    name: &'static str,
    n: u32,
    /// PTX types of D, A, B.
    d: &'static str,
    a: &'static str,
    b: &'static str,
    /// Descriptor mode: 0 none, 1 128B, 2 64B, 3 32B.
    swizzle: u32,
    trans_a: bool,
    trans_b: bool,
    a_regs: bool,
    negate_a: bool,
    negate_b: bool,
    /// scale-d of the first K step (the later ones accumulate).
    scale_d: bool,
    satfinite: bool,
    /// Warpgroups in the block, each computing the same product into its own D.
    groups: u32,
}

const BASE: Case = Case {
    name: "",
    n: 8,
    d: "f32",
    a: "f16",
    b: "f16",
    swizzle: 0,
    trans_a: false,
    trans_b: false,
    a_regs: false,
    negate_a: false,
    negate_b: false,
    scale_d: true,
    satfinite: false,
    groups: 1,
};

fn bits(t: &str) -> u32 {
    match t {
        "f16" | "bf16" => 16,
        "tf32" | "f32" | "s32" => 32,
        "b1" => 1,
        _ => 8,
    }
}

fn width(swizzle: u32) -> u32 {
    [1, 8, 4, 2][swizzle as usize]
}

/// One operand's place in shared memory: its image (rows × cols bytes, K-major: a row
/// per M or N index; MN-major: a row per k), its layout's offsets, and its K steps.
struct Operand {
    rows: u32,
    cols: u32,
    k_major: bool,
    lbo: u32,
    sbo: u32,
    bytes: u32,
    /// K-major, swizzled: bytes from one column of swizzle atoms to the next along K
    /// (a K wider than the swizzle row); else 0.
    atoms: u32,
    /// Byte offset of each K step's matrix.
    starts: Vec<u32>,
}

impl Case {
    fn k(&self) -> u32 {
        256 / bits(self.a)
    }

    /// Bytes of K a K-major row holds: 32 (one step), or the swizzle row's width.
    fn row_bytes(&self) -> u32 {
        (16 * width(self.swizzle)).max(32)
    }

    fn steps(&self) -> u32 {
        if self.trans_a || self.trans_b {
            2
        } else {
            self.row_bytes() / 32
        }
    }

    fn k_total(&self) -> u32 {
        self.k() * self.steps()
    }

    fn operand(&self, mn: u32, trans: bool) -> Operand {
        let w = width(self.swizzle);
        if !trans {
            let rb = 32 * self.steps();
            let (lbo, sbo) = if w == 1 {
                (128, rb / 16 * 128)
            } else {
                (16, 128 * w)
            };
            let atom_cols = rb.div_ceil(16 * w);
            let atoms = if w == 1 { 0 } else { mn / 8 * sbo };
            let starts = (0..self.steps())
                .map(|s| {
                    if w == 1 {
                        s * 2 * lbo
                    } else {
                        (32 * s) / (16 * w) * atoms + (32 * s) % (16 * w)
                    }
                })
                .collect();
            Operand {
                rows: mn,
                cols: rb,
                k_major: true,
                lbo,
                sbo,
                bytes: mn / 8 * sbo * if w == 1 { 1 } else { atom_cols },
                atoms,
                starts,
            }
        } else {
            let cols = 2 * mn;
            let (lbo, sbo) = if w == 1 {
                (cols / 16 * 128, 128)
            } else {
                assert!(cols % (16 * w) == 0, "{}: N too small", self.name);
                (128 * w, cols / (16 * w) * 128 * w)
            };
            let group = if w == 1 { lbo } else { sbo };
            Operand {
                rows: self.k_total(),
                cols,
                k_major: false,
                lbo,
                sbo,
                bytes: self.k_total() / 8 * group,
                atoms: 0,
                starts: (0..self.steps()).map(|s| 2 * s * group).collect(),
            }
        }
    }

    fn kernel(&self) -> String {
        let (a, b) = (
            self.operand(64, self.trans_a),
            self.operand(self.n, self.trans_b),
        );
        let (n, k) = (self.n, self.k());
        let f16d = self.d == "f16";
        let nreg = if f16d { n / 4 } else { n / 2 };
        let dregs: Vec<String> = (0..nreg).map(|i| format!("%{i}")).collect();
        let float = !matches!(self.a, "s8" | "u8" | "b1");
        let halves = matches!(self.a, "f16" | "bf16");
        let mut imms = String::new();
        if float {
            imms += &format!(
                ", {}, {}",
                if self.negate_a { -1 } else { 1 },
                if self.negate_b { -1 } else { 1 }
            );
        }
        if halves {
            if !self.a_regs {
                imms += &format!(", {}", self.trans_a as u32);
            }
            imms += &format!(", {}", self.trans_b as u32);
        }
        let mods = format!(
            "m64n{n}k{k}{}.{}.{}.{}{}",
            if self.satfinite { ".satfinite" } else { "" },
            self.d,
            self.a,
            self.b,
            if self.a == "b1" { ".and.popc" } else { "" }
        );
        let (ai, bi) = (nreg, nreg + if self.a_regs { 4 } else { 1 });
        let a_op = if self.a_regs {
            format!("{{%{ai}, %{}, %{}, %{}}}", ai + 1, ai + 2, ai + 3)
        } else {
            format!("%{ai}")
        };
        let a_in = if self.a_regs {
            "\"r\"(ar[0]), \"r\"(ar[1]), \"r\"(ar[2]), \"r\"(ar[3])".to_string()
        } else {
            "\"l\"(desc(sa + a_starts[s], A_LBO, A_SBO, MODE))".to_string()
        };
        let outs: Vec<String> = (0..nreg).map(|i| format!("\"+r\"(d[{i}])")).collect();
        // An A in registers: `mma`'s m16n8kK A fragment of the warp's 16 rows (16- and
        // 8-bit types: v elements to a register).
        let (eb, v) = (bits(self.a) / 8, 32 / bits(self.a));
        let a_frag = if self.a_regs {
            format!(
                r#"for (int i = 0; i < 4 * {v}; i++) {{
      unsigned row = 16 * warp + g + 8 * ((i / {v}) & 1), col = {v} * t + i % {v} + 4 * {v} * (i / (2 * {v}));
      for (int by = 0; by < {eb}; by++)
        ar[i / {v}] |= (unsigned)A[row * {acols} + s * 32 + col * {eb} + by] << (8 * ((i % {v}) * {eb} + by));
    }}"#,
                acols = a.cols
            )
        } else {
            String::new()
        };
        format!(
            r#"
extern "C" __global__ void {name}(const unsigned char* A, const unsigned char* B, const {dt}* C, {dt}* D) {{
  enum {{ MODE = {mode}, W = {w}, A_LBO = {alb}, A_SBO = {asb}, B_LBO = {blb}, B_SBO = {bsb} }};
  const unsigned a_starts[] = {{ {ast} }}, b_starts[] = {{ {bst} }};
  __shared__ __align__(1024) unsigned char sa[{abytes}], sb[{bbytes}];
  place(sa, A, {arows}, {acols}, {akm}, W, A_LBO, A_SBO, {aat});
  place(sb, B, {brows}, {bcols}, {bkm}, W, B_LBO, B_SBO, {bat});
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;");
  unsigned group = threadIdx.x / 128, warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  C += group * 64 * {n};
  D += group * 64 * {n};
  unsigned d[{nreg}];
  for (int i = 0; i < {nreg}; i++) d[i] = 0;
  for (int i = 0; i < {n} / 2; i++) {{
    unsigned row = 16 * warp + g + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * t + i % 2;
    unsigned x = C[row * {n} + col];
    if ({f16d}) d[i / 2] |= x << (16 * (i % 2)); else d[i] = x;
  }}
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  for (unsigned s = 0; s < {steps}; s++) {{
    unsigned ar[4] = {{0, 0, 0, 0}};
    {a_frag}
    unsigned scale = s > 0 || {scale_d};
    asm volatile("{{\n .reg .pred p;\n setp.ne.b32 p, %{sc}, 0;\n wgmma.mma_async.sync.aligned.{mods} {{{dregs}}}, {a_op}, %{bi}, p{imms};\n}}"
      : {outs}
      : {a_in}, "l"(desc(sb + b_starts[s], B_LBO, B_SBO, MODE)), "r"(scale));
  }}
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  for (int i = 0; i < {n} / 2; i++) {{
    unsigned row = 16 * warp + g + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * t + i % 2;
    D[row * {n} + col] = {f16d} ? (d[i / 2] >> (16 * (i % 2))) & 0xffff : d[i];
  }}
}}
"#,
            name = self.name,
            dt = if f16d { "unsigned short" } else { "unsigned" },
            mode = self.swizzle,
            w = width(self.swizzle),
            alb = a.lbo,
            asb = a.sbo,
            ast = list(&a.starts),
            aat = a.atoms,
            bat = b.atoms,
            blb = b.lbo,
            bsb = b.sbo,
            bst = list(&b.starts),
            abytes = a.bytes,
            bbytes = b.bytes,
            arows = a.rows,
            acols = a.cols,
            akm = a.k_major,
            brows = b.rows,
            bcols = b.cols,
            bkm = b.k_major,
            steps = self.steps(),
            sc = bi + 1,
            dregs = dregs.join(", "),
            outs = outs.join(", "),
            scale_d = self.scale_d as u32,
        )
    }
}

fn list(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

const PRELUDE: &str = r#"
// Swizzle<B,4,3> on a shared address: the 16-byte chunk bits XOR the row bits.
__device__ unsigned swz(unsigned a, unsigned w) { return a ^ (((a >> 7) & (w - 1)) << 4); }
// Byte (r, c) of a K-major image: r the M or N index, c the byte of K (swizzled: past
// the swizzle row's width, the next column of atoms, `atoms` bytes on).
__device__ unsigned kmaj(unsigned r, unsigned c, unsigned w, unsigned lbo, unsigned sbo, unsigned atoms) {
  return w == 1 ? (r % 8) * 16 + (r / 8) * sbo + (c / 16) * lbo + c % 16
                : (c / (16 * w)) * atoms + (r % 8) * 16 * w + (r / 8) * sbo + c % (16 * w);
}
// Byte (k, c) of an MN-major image: c the byte along M or N.
__device__ unsigned mnmaj(unsigned k, unsigned c, unsigned w, unsigned lbo, unsigned sbo) {
  unsigned mc = c / 16;
  return w == 1 ? mc * sbo + (k % 8) * 16 + (k / 8) * lbo + c % 16
                : (mc % w) * 16 + (mc / w) * lbo + (k % 8) * 16 * w + (k / 8) * sbo + c % 16;
}
__device__ void place(unsigned char* s, const unsigned char* img, unsigned rows, unsigned cols,
                      bool kmajor, unsigned w, unsigned lbo, unsigned sbo, unsigned atoms) {
  unsigned base = (unsigned)__cvta_generic_to_shared(s);
  for (unsigned i = threadIdx.x % 128; i < rows * cols; i += 128) {
    unsigned r = i / cols, c = i % cols;
    unsigned off = kmajor ? kmaj(r, c, w, lbo, sbo, atoms) : mnmaj(r, c, w, lbo, sbo);
    s[swz(base + off, w) - base] = img[i];
  }
}
__device__ unsigned long long desc(const void* p, unsigned lbo, unsigned sbo, unsigned mode) {
  unsigned long long a = (unsigned)__cvta_generic_to_shared(p);
  return ((a & 0x3ffff) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
         ((unsigned long long)(sbo >> 4) << 32) | ((unsigned long long)mode << 62);
}

// The warpgroup's errors: m64n8k16 f32 += f16 · f16 from a 64x16 A and 16x8 B without
// swizzle (zeros), D stored as thread-indexed words.
#define WG8(da, db) asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0,%1,%2,%3}, %4, %5, 1, 1, 1, 0, 0;" \
    : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]) : "l"(da), "l"(db))
#define SETUP \
  __shared__ __align__(1024) unsigned char sa[2048], sb[256]; \
  unsigned d[4] = {0, 0, 0, 0}; \
  unsigned long long da = desc(sa, 128, 256, 0), db = desc(sb, 128, 256, 0);
#define STORE for (int i = 0; i < 4; i++) out[threadIdx.x * 4 + i] = d[i];

extern "C" __global__ void wg_all(unsigned* out) { SETUP WG8(da, db); STORE }
extern "C" __global__ void wg_warp3_exits(unsigned* out) {
  SETUP if (threadIdx.x < 96) WG8(da, db); STORE
}
extern "C" __global__ void wg_warp3_at_barrier(unsigned* out) {
  SETUP if (threadIdx.x < 96) WG8(da, db); else __syncthreads(); STORE
}
extern "C" __global__ void wg_half_warp(unsigned* out) {
  SETUP if (threadIdx.x % 32 < 16) WG8(da, db); STORE
}
#define WG8_NEG(da, db) asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0,%1,%2,%3}, %4, %5, 1, -1, 1, 0, 0;" \
    : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]) : "l"(da), "l"(db))
extern "C" __global__ void wg_two_instructions(unsigned* out) {
  SETUP if (threadIdx.x < 96) WG8(da, db); else WG8_NEG(da, db); STORE
}
// B (8 columns of 16 halves, K-major, 128-byte swizzle) 3 rows into its 1024-byte block,
// read with base offset 0 and 3.
#define OFF_PATTERN(base) \
  __shared__ __align__(1024) unsigned char sa[2048], sb[2048]; \
  unsigned d[4] = {0, 0, 0, 0}; \
  WG8(desc(sa, 128, 256, 0), desc(sb + 384, 16, 1024, 1) | (base##ull << 49)); STORE
extern "C" __global__ void wg_misaligned(unsigned* out) { OFF_PATTERN(0) }
extern "C" __global__ void wg_base_offset(unsigned* out) { OFF_PATTERN(3) }
extern "C" __global__ void wg_outside(unsigned* out) {
  SETUP WG8(desc(sa + 0x20000, 128, 256, 0), db); STORE
}
"#;

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "f16_none",
            ..BASE
        },
        Case {
            name: "f16_sw128",
            n: 64,
            swizzle: 1,
            groups: 2,
            ..BASE
        },
        Case {
            name: "bf16_sw64_regs",
            n: 32,
            a: "bf16",
            b: "bf16",
            swizzle: 2,
            a_regs: true,
            ..BASE
        },
        Case {
            name: "tf32_sw32_negb",
            n: 16,
            a: "tf32",
            b: "tf32",
            swizzle: 3,
            negate_b: true,
            ..BASE
        },
        Case {
            name: "f16acc_mn_sw128",
            n: 64,
            d: "f16",
            swizzle: 1,
            trans_a: true,
            trans_b: true,
            ..BASE
        },
        Case {
            name: "f16_mn_none",
            n: 16,
            trans_a: true,
            trans_b: true,
            ..BASE
        },
        Case {
            name: "bf16_mnb_sw64_nega_nod",
            n: 32,
            a: "bf16",
            b: "bf16",
            swizzle: 2,
            trans_b: true,
            negate_a: true,
            scale_d: false,
            ..BASE
        },
        Case {
            name: "f16_regs_mnb_sw32",
            n: 16,
            swizzle: 3,
            trans_b: true,
            a_regs: true,
            ..BASE
        },
        Case {
            name: "f16_mnb_sw32_two_atoms",
            n: 16,
            swizzle: 3,
            trans_b: true,
            ..BASE
        },
        Case {
            name: "e4m3_e5m2_sw128",
            n: 24,
            a: "e4m3",
            b: "e5m2",
            swizzle: 1,
            ..BASE
        },
        Case {
            name: "e5m2_f16acc",
            n: 8,
            d: "f16",
            a: "e5m2",
            b: "e5m2",
            ..BASE
        },
        Case {
            name: "s8_u8_sat_sw32",
            n: 48,
            d: "s32",
            a: "s8",
            b: "u8",
            swizzle: 3,
            satfinite: true,
            ..BASE
        },
        Case {
            name: "u8_regs",
            n: 16,
            d: "s32",
            a: "u8",
            b: "u8",
            a_regs: true,
            ..BASE
        },
        Case {
            name: "b1_popc",
            n: 8,
            d: "s32",
            a: "b1",
            b: "b1",
            ..BASE
        },
        Case {
            name: "bf16_n256_sw128",
            n: 256,
            a: "bf16",
            b: "bf16",
            swizzle: 1,
            ..BASE
        },
    ]
}

fn module() -> Module {
    let mut src = PRELUDE.to_string();
    for c in cases() {
        src += &c.kernel();
    }
    let ptx = nvcc(&src, &["-ptx", "-arch=compute_90a", "-O3"]);
    Module::parse(&String::from_utf8(ptx).unwrap()).unwrap()
}

/// The raw bits of small integer `x` as an element of type `t`.
fn encode(t: &str, x: f64) -> u64 {
    let f = (x as f32).to_bits() as u64;
    let half = || {
        if x == 0.0 {
            return 0;
        }
        let e = ((f >> 23) & 0xff) as i64 - 127;
        ((f >> 16) & 0x8000) | (((e + 15) as u64) << 10) | ((f >> 13) & 0x3ff)
    };
    match t {
        "f32" | "tf32" => f,
        "bf16" => f >> 16,
        "f16" => half(),
        "e5m2" => half() >> 8,
        "e4m3" if x == 0.0 => 0,
        "e4m3" => {
            let e = ((f >> 23) & 0xff) as i64 - 127;
            ((f >> 24) & 0x80) | (((e + 7) as u64) << 3) | ((f >> 20) & 7)
        }
        _ => x as i64 as u64 & 0xffff_ffff,
    }
}

/// A value of the type's range for element `i`: small, exact, both signs where signed.
fn value(t: &str, i: u32, salt: u32) -> f64 {
    let h = i
        .wrapping_mul(2654435761)
        .wrapping_add(salt.wrapping_mul(40503))
        >> 7;
    match t {
        "b1" => (h % 2) as f64,
        "u8" => (h % 7) as f64,
        _ => (h % 7) as f64 - 3.0,
    }
}

/// The operand's byte image (`Operand`'s rows × cols) from element (mn, k)'s raw bits.
fn image(op: &Operand, t: &str, elem: impl Fn(u32, u32) -> u64) -> Vec<u8> {
    let mut img = vec![0u8; (op.rows * op.cols) as usize];
    let b = bits(t);
    if op.k_major {
        for r in 0..op.rows {
            for kk in 0..op.cols * 8 / b {
                let v = elem(r, kk);
                let bit = kk * b;
                for by in 0..b.div_ceil(8) {
                    let at = (r * op.cols + bit / 8 + by) as usize;
                    img[at] |= ((v >> (8 * by)) << (bit % 8)) as u8;
                }
            }
        }
    } else {
        for kk in 0..op.rows {
            for mn in 0..op.cols * 8 / b {
                let v = elem(mn, kk);
                for by in 0..b / 8 {
                    img[(kk * op.cols + mn * b / 8 + by) as usize] = (v >> (8 * by)) as u8;
                }
            }
        }
    }
    img
}

fn run_case(m: &Module, c: &Case, engine: Engine) -> (Vec<u8>, Vec<u8>) {
    let (kt, n) = (c.k_total(), c.n);
    let av = |r: u32, kk: u32| value(c.a, r * kt + kk, 1);
    let bv = |kk: u32, j: u32| value(c.b, kk * n + j, 2);
    let cv = |r: u32, j: u32| value("s32", r * n + j, 3);
    let (oa, ob) = (c.operand(64, c.trans_a), c.operand(n, c.trans_b));
    let a_img = image(&oa, c.a, |mn, kk| encode(c.a, av(mn, kk)));
    let b_img = image(&ob, c.b, |mn, kk| encode(c.b, bv(kk, mn)));
    let dsize = bits(c.d) / 8;
    let mut cbytes = Vec::new();
    let mut want = Vec::new();
    for _ in 0..c.groups {
        for r in 0..64 {
            for j in 0..n {
                let x = encode(c.d, cv(r, j));
                cbytes.extend_from_slice(&x.to_le_bytes()[..dsize as usize]);
                let mut acc = if c.scale_d { cv(r, j) } else { 0.0 };
                for kk in 0..kt {
                    let (x, y) = (av(r, kk), bv(kk, j));
                    acc += if c.a == "b1" {
                        (x as u32 & y as u32) as f64
                    } else {
                        let sa = if c.negate_a { -1.0 } else { 1.0 };
                        let sb = if c.negate_b { -1.0 } else { 1.0 };
                        sa * x * sb * y
                    };
                }
                let x = encode(c.d, acc);
                want.extend_from_slice(&x.to_le_bytes()[..dsize as usize]);
            }
        }
    }
    let k = m.kernel(c.name).unwrap();
    let mut mem = TestMemory::new();
    let (da, db, dc) = (
        mem.map(&a_img, false),
        mem.map(&b_img, false),
        mem.map(&cbytes, false),
    );
    let dd = mem.map(&vec![0u8; cbytes.len()], true);
    let p = params(&m.kernels[k], &[da, db, dc, dd]);
    let mut l = launch(1, 128 * c.groups, &p);
    l.engine = engine;
    run(m, k, &l, &mem).unwrap_or_else(|f| panic!("{} ({engine:?}): {f}", c.name));
    (mem.read(dd), want)
}

#[test]
fn wgmma_products_match_host_gemms_in_every_type_layout_and_engine() {
    let m = module();
    for c in cases() {
        let mut got = Vec::new();
        for engine in [Engine::Interp, Engine::Jit] {
            let (d, want) = run_case(&m, &c, engine);
            if d != want {
                let size = (bits(c.d) / 8) as usize;
                let at = (0..d.len() / size)
                    .find(|i| d[i * size..(i + 1) * size] != want[i * size..(i + 1) * size])
                    .unwrap();
                panic!(
                    "{} ({engine:?}): D[{}][{}] is {:02x?}, the host says {:02x?}",
                    c.name,
                    at / c.n as usize,
                    at % c.n as usize,
                    &d[at * size..(at + 1) * size],
                    &want[at * size..(at + 1) * size]
                );
            }
            got.push(d);
        }
        assert_eq!(got[0], got[1], "{}: the engines differ", c.name);
    }
}

/// Runs a 128-thread (or `threads`) error kernel; its fault.
fn fault_of(m: &Module, kernel: &str, threads: u32, engine: Engine) -> cumock_ptx::KernelFault {
    let k = m.kernel(kernel).unwrap();
    let mut mem = TestMemory::new();
    let out = mem.map(&vec![0u8; 4 * 4 * threads as usize], true);
    let p = params(&m.kernels[k], &[out]);
    let mut l = launch(1, threads, &p);
    l.engine = engine;
    match run(m, k, &l, &mem) {
        Ok(_) => panic!("{kernel}: ran to its end"),
        Err(f) => f,
    }
}

#[test]
fn a_warpgroup_that_cannot_meet_at_the_instruction_is_an_error_not_a_hang() {
    let m = module();
    for engine in [Engine::Interp, Engine::Jit] {
        let k = m.kernel("wg_all").unwrap();
        let mut mem = TestMemory::new();
        let out = mem.map(&[0u8; 2048], true);
        let p = params(&m.kernels[k], &[out]);
        let mut l = launch(1, 128, &p);
        l.engine = engine;
        run(&m, k, &l, &mem).unwrap_or_else(|f| panic!("wg_all: {f}"));

        let f = fault_of(&m, "wg_warp3_exits", 128, engine);
        assert_eq!(f.kind, FaultKind::IllegalInstruction, "{f}");
        assert!(f.detail.contains("warp 3 of warpgroup 0 exited"), "{f}");
        let f = fault_of(&m, "wg_warp3_at_barrier", 128, engine);
        assert_eq!(f.kind, FaultKind::Deadlock, "{f}");
        assert!(
            f.detail.contains("warp 0 waits at wgmma.mma_async")
                && f.detail.contains("warp 3 waits at barrier 0"),
            "{f}"
        );
        let f = fault_of(&m, "wg_half_warp", 128, engine);
        assert_eq!(f.kind, FaultKind::IllegalInstruction, "{f}");
        assert!(f.detail.contains("lanes 0x0000ffff"), "{f}");
        let f = fault_of(&m, "wg_two_instructions", 128, engine);
        assert!(f.detail.contains("different wgmma.mma_async"), "{f}");
        let f = fault_of(&m, "wg_all", 64, engine);
        assert!(f.detail.contains("the block has 64 threads"), "{f}");
    }
}

#[test]
fn descriptors_off_their_pattern_are_read_and_a_matrix_outside_shared_faults() {
    let m = module();
    for engine in [Engine::Interp, Engine::Jit] {
        // A swizzled start past its pattern's first row, a non-zero base offset: read by
        // address as the H200 does (`wgmma::Swizzle::apply`; the layouts themselves are
        // `wgmma.rs`'s unit tests and the runtime's wgmma_swizzle_probe).
        for kernel in ["wg_misaligned", "wg_base_offset"] {
            let k = m.kernel(kernel).unwrap();
            let mut mem = TestMemory::new();
            let out = mem.map(&[0u8; 2048], true);
            let p = params(&m.kernels[k], &[out]);
            let mut l = launch(1, 128, &p);
            l.engine = engine;
            run(&m, k, &l, &mem).unwrap_or_else(|f| panic!("{kernel}: {f}"));
        }
        let f = fault_of(&m, "wg_outside", 128, engine);
        assert_eq!(f.kind, FaultKind::IllegalAddress, "{f}");
    }
}

/// A kernel holding one instruction, as PTX.
fn one(inst: &str) -> String {
    format!(
        ".version 9.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{{\n\
         .reg .b32 %r<200>;\n.reg .b64 %rd<4>;\n.reg .pred %p<2>;\n{inst}\nret;\n}}\n"
    )
}

#[test]
fn malformed_wgmma_is_refused_at_load_naming_why() {
    use cumock_ptx::LoadErrorKind::{Semantic, Unsupported};
    let d4 = "{%r0,%r1,%r2,%r3}";
    let ok = [
        format!("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {d4}, %rd1, %rd2, %p1, 1, -1, 0, 1;"),
        format!("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {d4}, {{%r4,%r5,%r6,%r7}}, %rd2, 1, 1, 1, 0;"),
        format!("wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {d4}, %rd1, %rd2, 0, -1, 1;"),
        format!("wgmma.mma_async.sync.aligned.m64n8k32.satfinite.s32.u8.s8 {d4}, %rd1, %rd2, %p1;"),
        "wgmma.wait_group.sync.aligned 1;".to_string(),
        // Sparse: metadata and selector after B.
        format!("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {d4}, %rd1, %rd2, %r9, 1, %p1, 1, 1, 0, 0;"),
        format!("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.bf16.bf16 {d4}, {{%r4,%r5,%r6,%r7}}, %rd2, %r9, 0, 1, -1, 1, 1;"),
        format!("wgmma.mma_async.sp.sync.aligned.m64n8k16.f32.tf32.tf32 {d4}, %rd1, %rd2, %r9, 0, 1, 1, 1;"),
        format!("wgmma.mma_async.sp.sync.aligned.m64n8k64.s32.s8.u8 {d4}, %rd1, %rd2, %r9, 0, 1;"),
    ];
    for inst in &ok {
        Module::parse(&one(inst)).unwrap_or_else(|e| panic!("{inst}: {e:?}"));
    }
    let bad = [
        // tf32 has no transposes; f16 needs both (or one with A in registers).
        (format!("wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {d4}, %rd1, %rd2, 1, 1, 1, 0, 0;"), Semantic, "takes 6 operands"),
        (format!("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {d4}, %rd1, %rd2, 1, 1, 1, 0;"), Semantic, "takes 8 operands"),
        (format!("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {d4}, %rd1, %rd2, 1, 2, 1, 0, 0;"), Semantic, "imm-scale-a"),
        (format!("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {d4}, %rd1, %rd2, 1, 1, 1, 2, 0;"), Semantic, "imm-trans-a"),
        // D's registers: N/2 for f32.
        ("wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%r0,%r1,%r2,%r3}, %rd1, %rd2, 1, 1, 1, 0, 0;".to_string(), Semantic, "D takes 8 registers"),
        // Shapes and types sm_90a does not have (dense K for sparse, sparse b1); selectors;
        // .satfinite on floats.
        (format!("wgmma.mma_async.sync.aligned.m64n12k16.f32.f16.f16 {d4}, %rd1, %rd2, 1, 1, 1, 0, 0;"), Unsupported, "wgmma"),
        (format!("wgmma.mma_async.sync.aligned.m64n40k32.s32.s8.s8 {d4}, %rd1, %rd2, 1;"), Unsupported, "wgmma"),
        (format!("wgmma.mma_async.sp.sync.aligned.m64n8k16.f32.f16.f16 {d4}, %rd1, %rd2, %r9, 0, 1, 1, 1, 0, 0;"), Unsupported, "wgmma"),
        (format!("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {d4}, %rd1, %rd2, %r9, 2, 1, 1, 1, 0, 0;"), Semantic, "sp-sel"),
        (format!("wgmma.mma_async.sp.sync.aligned.m64n8k64.s32.s8.u8 {d4}, %rd1, %rd2, %r9, 1, 1;"), Semantic, "sp-sel"),
        (format!("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {d4}, %rd1, %rd2, 1, 1, 1, 0, 0;"), Semantic, "takes 10 operands"),
        (format!("wgmma.mma_async.sp.sync.aligned.m64n8k512.s32.b1.b1.and.popc {d4}, %rd1, %rd2, %r9, 0, 1;"), Unsupported, "wgmma"),
        (format!("wgmma.mma_async.sync.aligned.m64n8k16.satfinite.f32.f16.f16 {d4}, %rd1, %rd2, 1, 1, 1, 0, 0;"), Unsupported, "wgmma"),
        ("wgmma.wait_group.sync.aligned %r1;".to_string(), Semantic, "integer constant"),
    ];
    for (inst, kind, why) in &bad {
        let e = Module::parse(&one(inst)).map(|_| ()).unwrap_err();
        assert!(e.kind == *kind && e.message.contains(why), "{inst}: {e:?}");
    }
}

/// Sparse wgmma against the host: packed A (small integers in f16, exact in f32), a
/// different metadata word in every thread, both selectors, A from shared memory (32-byte
/// swizzle) and from registers; D = A·B with the zeros A's metadata leaves.
const SPARSE: &str = r#"// corpus-arch: compute_90a
__device__ unsigned swz32(unsigned a) { return a ^ (((a >> 7) & 1) << 4); }
// in: A packed 64x16 halves, B 32(N)x32(K) halves, metadata 128 words; out: 64x32 f32.
extern "C" __global__ void sparse(const unsigned short* a, const unsigned short* b, const unsigned* meta,
                                  float* out, int sel, int regs) {
  __shared__ __align__(1024) unsigned short sa[64 * 16], sb[32 * 32];
  unsigned base = (unsigned)__cvta_generic_to_shared(sa);
  for (unsigned i = threadIdx.x; i < 64 * 16; i += 128) {
    unsigned r = i / 16, c = i % 16;  // K-major, 32-byte rows, 32-byte swizzle
    unsigned off = (r % 8) * 32 + (r / 8) * 256 + 2 * c;
    sa[(swz32(base + off) - base) / 2] = a[i];
  }
  for (unsigned i = threadIdx.x; i < 32 * 32; i += 128) {
    unsigned n = i / 32, k = i % 32;  // K-major, no swizzle: 8x16-byte core matrices
    unsigned off = (n % 8) * 16 + (n / 8) * 512 + (k / 8) * 128 + 2 * (k % 8);
    sb[off / 2] = b[i];
  }
  __syncthreads();
  unsigned long long da = ((base & 0x3ffff) >> 4) | (1ull << 16) | ((256ull >> 4) << 32) | (3ull << 62);
  unsigned bb = (unsigned)__cvta_generic_to_shared(sb);
  unsigned long long db = ((bb & 0x3ffff) >> 4) | ((128ull >> 4) << 16) | ((512ull >> 4) << 32);
  unsigned w = threadIdx.x / 32, l = threadIdx.x % 32, g = l / 4, t = l % 4;
  unsigned f[4];
  for (int i = 0; i < 4; i++) {
    unsigned row = 16 * w + g + 8 * (i & 1), col = 2 * t + 8 * (i >> 1);
    f[i] = a[row * 16 + col] | (unsigned)a[row * 16 + col + 1] << 16;
  }
  unsigned e = meta[threadIdx.x];
  float d[16];
  for (int i = 0; i < 16; i++) d[i] = 0.0f;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#define D16 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}"
#define O16 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
            "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
  if (regs && sel)
    asm volatile("wgmma.mma_async.sp.sync.aligned.m64n32k32.f32.f16.f16 " D16 ", {%16,%17,%18,%19}, %20, %21, 1, 0, 1, 1, 0;"
                 : O16 : "r"(f[0]), "r"(f[1]), "r"(f[2]), "r"(f[3]), "l"(db), "r"(e));
  else if (regs)
    asm volatile("wgmma.mma_async.sp.sync.aligned.m64n32k32.f32.f16.f16 " D16 ", {%16,%17,%18,%19}, %20, %21, 0, 0, 1, 1, 0;"
                 : O16 : "r"(f[0]), "r"(f[1]), "r"(f[2]), "r"(f[3]), "l"(db), "r"(e));
  else if (sel)
    asm volatile("wgmma.mma_async.sp.sync.aligned.m64n32k32.f32.f16.f16 " D16 ", %16, %17, %18, 1, 0, 1, 1, 0, 0;"
                 : O16 : "l"(da), "l"(db), "r"(e));
  else
    asm volatile("wgmma.mma_async.sp.sync.aligned.m64n32k32.f32.f16.f16 " D16 ", %16, %17, %18, 0, 0, 1, 1, 0, 0;"
                 : O16 : "l"(da), "l"(db), "r"(e));
  asm volatile("wgmma.commit_group.sync.aligned;\n wgmma.wait_group.sync.aligned 0;" ::: "memory");
  for (unsigned i = 0; i < 16; i++) {
    unsigned row = 16 * w + g + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * t + i % 2;
    out[row * 32 + col] = d[i];
  }
}
"#;

#[test]
fn sparse_wgmma_places_the_stored_elements_as_the_metadata_says() {
    let m = Module::parse(&common::corpus_ptx(SPARSE)).unwrap_or_else(|e| panic!("{e}"));
    let k = m.kernel("sparse").unwrap();
    // A small integer as f16 bits (exact).
    let h = |x: i32| -> u16 {
        if x == 0 {
            return 0;
        }
        let (sign, m) = (u16::from(x < 0) << 15, x.unsigned_abs());
        let e = 31 - m.leading_zeros();
        sign | ((e + 15) as u16) << 10 | (((m << 10) >> e) & 0x3ff) as u16
    };
    let a: Vec<i32> = (0..64 * 16).map(|i| (i * 7 % 11) - 5).collect();
    let b: Vec<i32> = (0..32 * 32).map(|i| (i * 5 % 9) - 4).collect();
    // Each thread's nibbles: one of the six ordered pairs, by thread and nibble.
    const PAIRS: [u32; 6] = [0x4, 0x8, 0xc, 0x9, 0xd, 0xe];
    let meta: Vec<u32> = (0..128u32)
        .map(|t| {
            (0..8).fold(0, |m, q| {
                m | PAIRS[((t * 5 + q * 3) % 6) as usize] << (4 * q)
            })
        })
        .collect();
    let bytes16 = |v: &[i32]| -> Vec<u8> { v.iter().flat_map(|&x| h(x).to_le_bytes()).collect() };
    let mut bad = Vec::new();
    for engine in [Engine::Interp, Engine::Jit] {
        for (sel, regs) in [(0u64, 0u64), (1, 0), (0, 1), (1, 1)] {
            let mut mem = TestMemory::new();
            let da = mem.map(&bytes16(&a), false);
            let db = mem.map(&bytes16(&b), false);
            let dm = mem.map(&u32s(&meta), false);
            let dout = mem.map(&[0u8; 64 * 32 * 4], true);
            let p = params(&m.kernels[k], &[da, db, dm, dout, sel, regs]);
            let mut l = launch(1, 128, &p);
            l.engine = engine;
            run(&m, k, &l, &mem).unwrap_or_else(|f| panic!("{f}"));
            let got = to_f32s(&mem.read(dout));
            for row in 0..64usize {
                let (w, r) = (row / 16, row % 16);
                for col in 0..32usize {
                    let mut want = 0.0f32;
                    for j in 0..16usize {
                        let c = j / 2;
                        let lane = 4 * (r % 8) + 2 * sel as usize + c / 4;
                        let nib = meta[32 * w + lane] >> (16 * (r / 8) + 4 * (c % 4)) & 0xf;
                        let idx = if j % 2 == 0 { nib & 3 } else { nib >> 2 };
                        let kk = 4 * c + idx as usize;
                        want += (a[row * 16 + j] * b[col * 32 + kk]) as f32;
                    }
                    if got[row * 32 + col] != want {
                        bad.push(format!(
                            "{engine:?} sel {sel} regs {regs} ({row},{col}): {} vs {want}",
                            got[row * 32 + col]
                        ));
                    }
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} differ: {:?}",
        bad.len(),
        &bad[..bad.len().min(12)]
    );
}
