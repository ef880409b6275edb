//! Dynamic stack allocation (`alloca`, `stacksave`, `stackrestore`, PTX 7.3), bounded by
//! CU_LIMIT_STACK_SIZE; `setmaxnreg`'s warpgroup checks; and the special registers of
//! issue 21 that the ISA leaves to the system (`%aggr_smem_size`,
//! `%current_graph_exec`, `%pm0`-`%pm7`, `%pm0_64`-`%pm7_64`).

mod common;
use common::*;
use cumock_ptx::{run, Engine, FaultKind, KernelFault, Module};

const ENGINES: [Engine; 2] = [Engine::Interp, Engine::Jit];

fn module(body: &str, decls: &str) -> Module {
    let src = format!(
        ".version 9.0\n.target sm_90a\n.address_size 64\n{decls}\n\
         .visible .entry k(.param .u64 out, .param .u32 n)\n{{\n.reg .b64 %rd<16>;\n\
         .reg .b32 %r<16>;\n.reg .pred %p<4>;\nld.param.u64 %rd1, [out];\n\
         ld.param.u32 %r1, [n];\nmov.u32 %r2, %tid.x;\nmul.wide.u32 %rd2, %r2, 32;\n\
         add.s64 %rd3, %rd1, %rd2;\n{body}\nret;\n}}\n"
    );
    Module::parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"))
}

/// Runs `m` with `threads` threads, parameter n, CU_LIMIT_STACK_SIZE `stack`; 8 words a
/// thread come back.
fn go(
    m: &Module,
    threads: u32,
    n: u32,
    stack: u64,
    engine: Engine,
) -> Result<Vec<u32>, KernelFault> {
    let mut mem = TestMemory::new();
    let out = mem.map(&vec![0u8; 32 * threads as usize], true);
    let p = params(&m.kernels[0], &[out, u64::from(n)]);
    let mut l = launch(1, threads, &p);
    l.engine = engine;
    l.stack_bytes = stack;
    run(m, 0, &l, &mem).map(|_| to_u32s(&mem.read(out)))
}

/// Each thread allocates n bytes twice (the second 64-aligned), writes through both,
/// reads back, and restores the stack pointer: the first pointer again after it.
const ALLOCA: &str = "
stacksave.u32 %r3;
alloca.u32 %r4, %r1;
alloca.u32 %r5, %r1, 64;
st.local.u32 [%r4], %r2;
add.u32 %r6, %r2, 1000;
st.local.u32 [%r5], %r6;
ld.local.u32 %r7, [%r4];
ld.local.u32 %r8, [%r5];
stackrestore.u32 %r3;
alloca.u32 %r9, %r1;
stacksave.u32 %r10;
st.global.u32 [%rd3], %r3;
st.global.u32 [%rd3+4], %r4;
st.global.u32 [%rd3+8], %r5;
st.global.u32 [%rd3+12], %r7;
st.global.u32 [%rd3+16], %r8;
st.global.u32 [%rd3+20], %r9;
st.global.u32 [%rd3+24], %r10;
";

#[test]
fn alloca_grows_down_aligned_and_stackrestore_frees() {
    let m = module(ALLOCA, "");
    for engine in ENGINES {
        let o = go(&m, 40, 20, 1024, engine).unwrap();
        for t in 0..40usize {
            let w = &o[8 * t..8 * t + 8];
            let (sp, p1, p2) = (w[0], w[1], w[2]);
            // 20 bytes down, to a multiple of 8 (the least alignment).
            assert_eq!(p1, (sp - 20) & !7, "thread {t}: {w:x?}");
            // 20 more, to a multiple of 64.
            assert_eq!(p2, (p1 - 20) & !63, "thread {t}: {w:x?}");
            assert!(p2 % 64 == 0 && p1 % 8 == 0);
            assert_eq!((w[3], w[4]), (t as u32, t as u32 + 1000));
            // After stackrestore, the same allocation lands where the first did.
            assert_eq!(w[5], p1, "thread {t}: {w:x?}");
            assert_eq!(w[6], p1);
        }
    }
}

#[test]
fn alloca_past_the_stack_limit_faults_cleanly() {
    let m = module(ALLOCA, "");
    for engine in ENGINES {
        // 2 x 600 bytes do not fit in 1 KiB of stack.
        let e = go(&m, 32, 600, 1024, engine).unwrap_err();
        assert_eq!(e.kind, FaultKind::IllegalAddress, "{e:?}");
        assert!(e.detail.contains("stack overflow: alloca of 600"), "{e:?}");
        assert!(e.detail.contains("CU_LIMIT_STACK_SIZE"), "{e:?}");
        // A size that would wrap below address 0 faults too, never touches other memory.
        let e = go(&m, 32, u32::MAX, 1024, engine).unwrap_err();
        assert!(e.detail.contains("stack overflow"), "{e:?}");
        // With 2 KiB they fit.
        assert!(go(&m, 32, 600, 2048, engine).is_ok());
    }
}

#[test]
fn stackrestore_outside_the_stack_faults() {
    let m = module("stackrestore.u32 %r1;", "");
    for engine in ENGINES {
        let e = go(&m, 1, 0x10_0000, 1024, engine).unwrap_err();
        assert!(e.detail.contains("not a stack pointer"), "{e:?}");
    }
}

/// What a function allocates is freed when it returns: the caller's next allocation
/// reuses the place, and a call in a loop never exhausts the stack.
#[test]
fn alloca_in_a_function_is_freed_at_its_return() {
    let decls = "
.func (.param .b64 r) grab(.param .b64 n)
{
  .reg .u64 %q, %n;
  ld.param.u64 %n, [n];
  alloca.u64 %q, %n, 16;
  st.local.u64 [%q], %n;
  ld.local.u64 %n, [%q];
  st.param.u64 [r], %n;
  ret;
}";
    let body = "
stacksave.u64 %rd4;
mov.u32 %r5, 0;
LOOP:
cvt.u64.u32 %rd5, %r1;
{
.param .b64 a;
.param .b64 r;
st.param.b64 [a], %rd5;
call (r), grab, (a);
ld.param.b64 %rd6, [r];
}
add.u32 %r5, %r5, 1;
setp.lt.u32 %p1, %r5, 100;
@%p1 bra LOOP;
stacksave.u64 %rd7;
sub.s64 %rd8, %rd4, %rd7;
st.global.u64 [%rd3], %rd8;
st.global.u64 [%rd3+8], %rd6;
";
    let m = module(body, decls);
    for engine in ENGINES {
        // 100 calls of 300 bytes each would need 30000 bytes of a 1024-byte stack.
        let o = go(&m, 32, 300, 1024, engine).unwrap();
        assert_eq!(
            (o[0], o[1]),
            (0, 0),
            "the stack pointer is back where it was"
        );
        assert_eq!(o[2], 300, "the function read back what it wrote");
    }
}

#[test]
fn setmaxnreg_checks_its_warpgroup() {
    let m = module(
        "setmaxnreg.dec.sync.aligned.u32 40;\nst.global.u32 [%rd3], 1;",
        "",
    );
    for engine in ENGINES {
        // A whole warpgroup (128 threads), and two.
        let o = go(&m, 256, 0, 1024, engine).unwrap();
        assert!(o.chunks(8).all(|w| w[0] == 1));
        // 96 threads: the warpgroup is not whole.
        let e = go(&m, 96, 0, 1024, engine).unwrap_err();
        assert_eq!(e.kind, FaultKind::IllegalInstruction, "{e:?}");
        assert!(e.detail.contains("is not whole"), "{e:?}");
    }
    // Only part of the warp runs it.
    let m = module(
        "setp.lt.u32 %p1, %r2, 16;\n@%p1 setmaxnreg.inc.sync.aligned.u32 240;",
        "",
    );
    for engine in ENGINES {
        let e = go(&m, 128, 0, 1024, engine).unwrap_err();
        assert!(e.detail.contains("run it together"), "{e:?}");
    }
}

#[test]
fn system_special_registers() {
    let body = "
mov.u32 %r3, %aggr_smem_size;
mov.u32 %r4, %total_smem_size;
mov.u64 %rd4, %current_graph_exec;
mov.u32 %r5, %pm0;
mov.u32 %r6, %pm7;
mov.u64 %rd5, %pm3_64;
st.global.u32 [%rd3], %r3;
st.global.u32 [%rd3+4], %r4;
st.global.u64 [%rd3+8], %rd4;
st.global.u32 [%rd3+16], %r5;
st.global.u32 [%rd3+20], %r6;
st.global.u64 [%rd3+24], %rd5;
";
    let m = module(body, ".shared .align 4 .b8 buf[100];");
    for engine in ENGINES {
        let o = go(&m, 1, 0, 1024, engine).unwrap();
        // As the H200 answers (corpus special_registers_system): the total in 128-byte
        // units, the aggregate as declared plus the 1 KiB sm_90 reserves.
        assert_eq!(o[1], 128);
        assert_eq!(o[0], 100 + 1024);
        // No device graph, no profiler.
        assert_eq!(&o[2..8], &[0; 6]);
    }
    for bad in ["%pm8", "%pm0_32", "%pm_64"] {
        let src = format!(
            ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n\
             .reg .b32 %r<2>;\nmov.u32 %r1, {bad};\nret;\n}}\n"
        );
        assert!(Module::parse(&src).is_err(), "{bad} loaded");
    }
}
