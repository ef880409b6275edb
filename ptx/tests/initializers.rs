//! Module-scope initialisers holding variables' addresses, as nvcc 13 writes them for
//! `__device__ int *p = &x[2];`, structures of pointers (`.u64 s[4] = {7, generic(x)+4,
//! ...}`), pointers to pointers, `__constant__` targets, and packed structures whose
//! pointers straddle bytes (`.u8 pk[11] = {3, 0XFF(generic(x)+4), 0xFF00(generic(x)+4),
//! ...}`): the loader writes each address once the variables are placed
//! (`Global::initial_bytes`), and kernels read through them on both engines.

mod common;
use common::*;
use cumock_ptx::{run, Engine, LoadErrorKind, Module};

const SOURCE: &str = r#"
__device__ int x[4] = {1, 2, 3, 4};
__device__ int *p = &x[2];
__device__ int *q = x;
__constant__ float cf[2] = {1.5f, 2.5f};
__device__ const float *pc = &cf[1];
struct S { int tag; int *ptr; char c; int *ptr2; };
__device__ S s = {7, &x[1], 'z', x};
__device__ int *arr[3] = {x, &x[3], 0};
__device__ int **pp = &p;
struct __attribute__((packed)) P { char c; int *p; short s; };
__device__ P pk = {3, &x[1], 5};
__device__ unsigned long long as_int = (unsigned long long)&x[3];
extern __device__ int later[2];
__device__ int *before = &later[1];
__device__ int later[2] = {50, 60};
extern "C" __global__ void read_through(int *out) {
  out[0] = *p;
  out[1] = *q;
  out[2] = (int)(*pc * 2.0f);
  out[3] = *s.ptr;
  out[4] = s.tag;
  out[5] = *s.ptr2;
  out[6] = *arr[1];
  out[7] = arr[2] == 0;
  out[8] = **pp;
  out[9] = *pk.p;
  out[10] = pk.c + pk.s;
  out[11] = *(int *)as_int;
  out[12] = *before;
  // Writing through a pointer reaches the variable itself.
  *q = 100;
  out[13] = x[0];
}
"#;

#[test]
fn initialisers_hold_variables_addresses_and_kernels_read_through_them() {
    let text = ptx(SOURCE);
    // The forms nvcc wrote, which the test is about.
    for form in [
        "generic(x)+8",
        "generic(cf)+4",
        "generic(p)",
        "0XFF(generic(x)+4)",
    ] {
        assert!(
            text.contains(form),
            "nvcc no longer writes `{form}`:\n{text}"
        );
    }
    let m = Module::parse(&text).unwrap();
    let x = m.globals.iter().position(|g| g.name == "x").unwrap();
    let pk = m.globals.iter().position(|g| g.name == "pk").unwrap();
    assert!(
        m.globals[pk].relocs.len() == 8
            && m.globals[pk].relocs.iter().all(|r| r.target == x as u32)
    );
    let k = m.kernel("read_through").unwrap();
    for engine in [Engine::Interp, Engine::Jit] {
        let mut mem = TestMemory::new();
        let out = mem.map(&[0; 14 * 4], true);
        let globals = mem.map_globals(&m);
        let p = params(&m.kernels[k], &[out]);
        let mut l = launch(1, 1, &p);
        l.engine = engine;
        l.globals = &globals;
        run(&m, k, &l, &mem).unwrap();
        assert_eq!(
            to_u32s(&mem.read(out)),
            [3, 1, 5, 2, 7, 1, 4, 1, 3, 2, 8, 4, 60, 100],
            "{engine:?}"
        );
        // The packed pointer's eight bytes are x's address plus 4, little-endian.
        let bytes = mem.read(globals[pk]);
        assert_eq!(bytes[1..9], (globals[x] + 4).to_le_bytes(), "{engine:?}");
    }
}

fn module(vars: &str) -> Result<Module, cumock_ptx::LoadError> {
    Module::parse(&format!(
        ".version 9.0\n.target sm_90\n.address_size 64\n{vars}\n.visible .entry k() {{ ret; }}\n"
    ))
}

#[test]
fn initialisers_name_only_module_variables_with_room_for_an_address() {
    // var+off without generic(), a negative offset, a masked byte.
    let m = module(
        ".global .align 4 .b8 a[16];\n\
         .global .align 8 .u64 b[3] = {a+4, generic(a)-4, a};\n\
         .global .align 1 .u8 c[2] = {0xFF00(a+1), 7};",
    )
    .unwrap();
    let addrs = [0x1000_0000u64, 0x2000_0000, 0x3000_0000];
    let b = m.globals[1].initial_bytes(&addrs);
    assert_eq!(b[..8], 0x1000_0004u64.to_le_bytes());
    assert_eq!(b[8..16], 0x0fff_fffcu64.to_le_bytes());
    assert_eq!(b[16..24], 0x1000_0000u64.to_le_bytes());
    assert_eq!(m.globals[2].initial_bytes(&addrs), [0x00, 7]);
    // A variable declared after the one whose initialiser names it.
    let m =
        module(".global .align 8 .u64 f = generic(z)+2;\n.global .align 4 .u32 z = 5;").unwrap();
    assert_eq!(
        m.globals[0].initial_bytes(&[0x10, 0x40]),
        0x42u64.to_le_bytes()
    );
    // Unknown names, shared variables and addresses in narrow elements are refused.
    for (vars, kind) in [
        (
            ".global .u64 b = generic(nowhere);",
            LoadErrorKind::Semantic,
        ),
        (
            ".shared .align 4 .b8 sm[16];\n.global .u64 b = generic(sm);",
            LoadErrorKind::Semantic,
        ),
        (
            ".global .align 4 .b8 a[16];\n.global .u32 b = generic(a);",
            LoadErrorKind::Semantic,
        ),
        (
            ".global .align 4 .b8 a[16];\n.global .u8 b = 0(generic(a));",
            LoadErrorKind::Syntax,
        ),
    ] {
        let e = module(vars).expect_err(vars);
        assert_eq!(e.kind, kind, "{vars}: {e}");
    }
}
