//! Device printf and assert in kernels compiled by nvcc: `vprintf`'s records (formatted
//! as CUDA's host side formats them), its return value, the FIFO's limit, strings that
//! run into unmapped memory, and the message of a failed assert; both engines.

mod common;
use common::*;
use cumock_ptx::{run_with_printf, Engine, FaultKind, KernelFault, Launch, Module, PrintfBuffer};

const SRC: &str = r#"
#include <cstdio>
#include <cassert>
extern "C" __global__ void show(const char *s, int *p, int *ret) {
    char c = 'A' + threadIdx.x;
    float f = 1.5f * threadIdx.x;
    long long big = -1ll << 40;
    ret[blockIdx.x * blockDim.x + threadIdx.x] =
        printf("b%d t%u: [%5.2f] [%-4s] %s %c %lld %#x %e\n", blockIdx.x, threadIdx.x, f, s,
               p ? "non-null" : "null", c, big, 255u, 0.001);
}
extern "C" __global__ void strings(const char *a, const char *b) {
    printf("[%s][%.2s][%s]\n", a, a, b);
}
extern "C" __global__ void plain(int n) {
    for (int i = 0; i < n; i++) printf("line %d of a long run of output\n", i);
}
extern "C" __global__ void check(int bad) {
    assert(threadIdx.x != bad);
    printf("t%u passed\n", threadIdx.x);
}
"#;

fn module() -> Module {
    Module::parse(&ptx(SRC)).unwrap()
}

fn globals_of(m: &Module, mem: &mut TestMemory) -> Vec<u64> {
    m.globals.iter().map(|g| mem.map(&g.init, false)).collect()
}

/// `go` with the module's variables (the format strings) mapped.
fn printed(
    name: &str,
    grid: u32,
    block: u32,
    vals: &[u64],
    mem: &mut TestMemory,
    engine: Engine,
) -> (String, Result<(), KernelFault>, u64) {
    let m = module();
    let globals = globals_of(&m, mem);
    let k = m.kernel(name).unwrap();
    let p = params(&m.kernels[k], vals);
    let l = Launch {
        globals: &globals,
        host_threads: 1,
        engine,
        ..launch(grid, block, &p)
    };
    let buf = PrintfBuffer::new(1 << 20);
    let r = run_with_printf(&m, k, &l, mem, &buf).map(|_| ());
    // Asserts' messages after the printed text, as a terminal shows stdout and stderr.
    let mut text = buf.take();
    text.extend(buf.take_errors());
    (String::from_utf8(text).unwrap(), r, buf.dropped())
}

#[test]
fn printf_formats_ints_floats_strings_and_pointers_in_thread_order() {
    for engine in [Engine::Interp, Engine::Jit] {
        let mut mem = TestMemory::new();
        let s = mem.map(b"ab\0", false);
        let ret = mem.map(&[0u8; 4 * 6], true);
        let (out, r, _) = printed("show", 2, 3, &[s, s, ret], &mut mem, engine);
        r.unwrap();
        let mut want = String::new();
        for b in 0..2 {
            for t in 0..3u32 {
                want.push_str(&format!(
                    "b{b} t{t}: [{:5.2}] [ab  ] non-null {} {} 0xff 1.000000e-03\n",
                    1.5 * t as f64,
                    (b'A' + t as u8) as char,
                    -1i64 << 40
                ));
            }
        }
        assert_eq!(out, want, "{engine:?}");
        // printf returns the number of arguments.
        assert_eq!(to_u32s(&mem.read(ret)), [9; 6], "{engine:?}");
    }
}

#[test]
fn strings_end_at_unmapped_memory_and_never_fault() {
    let mut mem = TestMemory::new();
    // No NUL: the string ends where the mapping does.
    let a = mem.map(b"xyz", false);
    let (out, r, _) = printed(
        "strings",
        1,
        1,
        &[a, 0x1234_5678_0000],
        &mut mem,
        Engine::Interp,
    );
    r.unwrap();
    assert_eq!(out, "[xyz][xy][]\n");
    let (out, r, _) = printed("strings", 1, 1, &[0, a], &mut mem, Engine::Interp);
    r.unwrap();
    assert_eq!(out, "[(null)][][xyz]\n");
}

#[test]
fn the_fifo_limit_drops_records_past_it() {
    let m = module();
    let mut mem = TestMemory::new();
    let globals = globals_of(&m, &mut mem);
    let k = m.kernel("plain").unwrap();
    let p = params(&m.kernels[k], &[100]);
    let l = Launch {
        globals: &globals,
        host_threads: 1,
        ..launch(1, 1, &p)
    };
    let line = "line 0 of a long run of output\n".len();
    let buf = PrintfBuffer::new(10 * line as u64 + 5);
    run_with_printf(&m, k, &l, &mem, &buf).unwrap();
    let out = String::from_utf8(buf.take()).unwrap();
    assert_eq!(out.lines().count(), 10, "{out}");
    assert!(out.ends_with("line 9 of a long run of output\n"), "{out}");
    assert_eq!(buf.dropped(), 90);
}

#[test]
fn a_failed_assert_prints_the_gpus_message_and_faults() {
    for engine in [Engine::Interp, Engine::Jit] {
        let mut mem = TestMemory::new();
        let (out, r, _) = printed("check", 2, 4, &[2], &mut mem, engine);
        let f = r.unwrap_err();
        assert_eq!(f.kind, FaultKind::Assert, "{f}");
        assert_eq!((f.block, f.thread), ([0, 0, 0], [2, 0, 0]), "{f}");
        // The other threads of the warp took the other path first or after: only the
        // failing thread's message, with nvcc's file, line and function.
        let lines: Vec<&str> = out.lines().filter(|l| l.contains("Assertion")).collect();
        assert_eq!(lines.len(), 1, "{out}");
        let l = lines[0];
        assert!(l.ends_with(": void check(int): block: [0,0,0], thread: [2,0,0] Assertion `threadIdx.x != bad` failed."), "{l}");
        assert!(l.contains(".cu:19: "), "{l}");
    }
    // No thread fails: no message, no fault.
    let mut mem = TestMemory::new();
    let (out, r, _) = printed("check", 1, 2, &[7], &mut mem, Engine::Interp);
    r.unwrap();
    assert_eq!(out, "t0 passed\nt1 passed\n");
}
