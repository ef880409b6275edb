//! Kernels that misbehave end in the fault a GPU would report (and the message says
//! where and why), never in a crash, a hang, or a touch of host memory.

mod common;
use common::*;
use cumock_ptx::{run, FaultKind, KernelFault, Module};

const ADVERSARIAL: &str = r#"
extern "C" __global__ void store_to(unsigned* p, unsigned v) { p[threadIdx.x] = v; }
extern "C" __global__ void load_from(const unsigned* p, unsigned* out) { out[threadIdx.x] = p[threadIdx.x]; }
extern "C" __global__ void spin(unsigned* out, int n) {
  unsigned x = threadIdx.x;
  for (;;) { x = x * 1664525u + 1013904223u; if (x == n) break; }
  out[0] = x;
}
extern "C" __global__ void trapper(unsigned* out) { if (threadIdx.x == 5) __trap(); out[threadIdx.x] = 1; }
extern "C" __global__ void asserter(unsigned* out) { assert(threadIdx.x != 7); out[threadIdx.x] = 1; }
extern "C" __global__ void misaligned(unsigned* out) { *(unsigned*)((char*)out + 2) = 1; }
extern "C" __global__ void shared_overflow(unsigned* out, int k) {
  __shared__ unsigned s[64];
  s[threadIdx.x * k] = 1;
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x];
}
extern "C" __global__ void divergent_barrier(unsigned* out) {
  if (threadIdx.x < 32) __syncthreads();
  out[threadIdx.x] = 1;
}
"#;

fn module() -> Module {
    Module::parse(&ptx(&format!("#include <assert.h>\n{ADVERSARIAL}"))).unwrap()
}

fn fault(m: &Module, kernel: &str, mem: &TestMemory, vals: &[u64], block: u32) -> KernelFault {
    let k = m.kernel(kernel).unwrap();
    let p = params(&m.kernels[k], vals);
    // The variables' addresses are only looked at by `asserter`, which stops first.
    let addrs = vec![0u64; m.globals.len()];
    let mut l = launch(1, block, &p);
    l.globals = &addrs;
    l.step_limit = Some(100_000);
    run(m, k, &l, mem).expect_err("the kernel should fault")
}

#[test]
fn a_store_to_an_unmapped_address_is_illegal() {
    let m = module();
    let mem = TestMemory::new();
    let f = fault(&m, "store_to", &mem, &[0x1234_5678_0000, 7], 32);
    assert_eq!(f.kind, FaultKind::IllegalAddress);
    assert_eq!(f.address, Some(0x1234_5678_0000));
    assert_eq!(
        (f.kernel.as_str(), f.block, f.thread),
        ("store_to", [0, 0, 0], [0, 0, 0])
    );
    assert!(f.instruction.starts_with("st.global.u32"), "{f}");
    let msg = f.to_string();
    assert!(
        msg.contains("no mapping at 0x123456780000")
            && msg.contains("store_to")
            && msg.contains(&format!("line {}", f.line)),
        "{msg}"
    );
}

#[test]
fn a_host_pointer_is_not_device_memory() {
    let m = module();
    let mem = TestMemory::new();
    let host = Box::new([0xabcdu32; 64]);
    let f = fault(&m, "load_from", &mem, &[host.as_ptr() as u64, 0], 32);
    assert_eq!(f.kind, FaultKind::IllegalAddress);
    assert_eq!(f.address, Some(host.as_ptr() as u64));
    assert_eq!(*host, [0xabcd; 64], "host memory untouched");
    let f = fault(&m, "store_to", &mem, &[host.as_ptr() as u64, 1], 32);
    assert_eq!(f.kind, FaultKind::IllegalAddress);
    assert_eq!(*host, [0xabcd; 64], "host memory untouched");
}

#[test]
fn a_write_past_the_end_of_a_mapping_faults_at_the_first_lane_out() {
    let m = module();
    let mut mem = TestMemory::new();
    let buf = mem.map(&[0u8; 64], true);
    let f = fault(&m, "store_to", &mem, &[buf, 9], 32);
    assert_eq!(f.kind, FaultKind::IllegalAddress);
    assert_eq!(f.address, Some(buf + 64));
    assert_eq!(f.thread, [16, 0, 0]);
}

#[test]
fn an_endless_loop_ends_at_the_step_limit() {
    let m = module();
    let mut mem = TestMemory::new();
    let out = mem.map(&[0u8; 4], true);
    let f = fault(&m, "spin", &mem, &[out, 3], 64);
    assert_eq!(f.kind, FaultKind::StepLimit, "{f}");
}

#[test]
fn trap_and_assert() {
    let m = module();
    let mut mem = TestMemory::new();
    let out = mem.map(&[0u8; 256], true);
    let f = fault(&m, "trapper", &mem, &[out], 32);
    assert_eq!((f.kind, f.thread), (FaultKind::Trap, [5, 0, 0]), "{f}");
    let f = fault(&m, "asserter", &mem, &[out], 32);
    assert_eq!((f.kind, f.thread), (FaultKind::Assert, [7, 0, 0]), "{f}");
}

#[test]
fn a_misaligned_store_is_misaligned() {
    let m = module();
    let mut mem = TestMemory::new();
    let out = mem.map(&[0u8; 64], true);
    let f = fault(&m, "misaligned", &mem, &[out], 1);
    assert_eq!(
        (f.kind, f.address),
        (FaultKind::MisalignedAddress, Some(out + 2)),
        "{f}"
    );
}

#[test]
fn shared_memory_out_of_range_is_illegal() {
    let m = module();
    let mut mem = TestMemory::new();
    let out = mem.map(&[0u8; 256], true);
    let f = fault(&m, "shared_overflow", &mem, &[out, 3], 64);
    assert_eq!(f.kind, FaultKind::IllegalAddress, "{f}");
    assert!(f.to_string().contains("shared memory"), "{f}");
    // Inside the array: fine.
    let k = m.kernel("shared_overflow").unwrap();
    let p = params(&m.kernels[k], &[out, 1]);
    let addrs = vec![0u64; m.globals.len()];
    let mut l = launch(1, 64, &p);
    l.globals = &addrs;
    run(&m, k, &l, &mem).unwrap();
}

#[test]
fn threads_that_exit_release_a_barrier_the_others_wait_at() {
    let m = module();
    let mut mem = TestMemory::new();
    let out = mem.map(&[0u8; 256], true);
    // 64 threads: the first warp waits at the barrier, the second exits: exited threads
    // count as arrived, so this completes.
    let k = m.kernel("divergent_barrier").unwrap();
    let p = params(&m.kernels[k], &[out]);
    let addrs = vec![0u64; m.globals.len()];
    let mut l = launch(1, 64, &p);
    l.globals = &addrs;
    run(&m, k, &l, &mem).unwrap();
    assert_eq!(to_u32s(&mem.read(out))[..64], [1; 64]);
}

#[test]
fn a_barrier_that_can_never_complete_is_reported() {
    // Hand-written: warp 1 waits at barrier 1 for 64 threads that never come.
    let src = r#"
.version 9.0
.target sm_90
.address_size 64
.visible .entry stuck(.param .u64 out)
{
    .reg .b32 %r<3>;
    .reg .pred %p<2>;
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 32;
@%p1 bra DONE;
    bar.sync 1, 64;
DONE:
    bar.sync 2, 64;
    ret;
}
"#;
    let m = Module::parse(src).unwrap();
    let mem = TestMemory::new();
    let l = launch(1, 64, &[0u8; 8]);
    let f = run(&m, 0, &l, &mem).unwrap_err();
    assert_eq!(f.kind, FaultKind::Deadlock, "{f}");
    assert!(f.to_string().contains("barrier"), "{f}");
}

#[test]
fn faults_in_many_blocks_on_many_threads_report_one() {
    let m = module();
    let mem = TestMemory::new();
    let k = m.kernel("store_to").unwrap();
    let p = params(&m.kernels[k], &[0x10, 1]);
    let addrs = vec![0u64; m.globals.len()];
    let mut l = launch(500, 128, &p);
    l.globals = &addrs;
    l.host_threads = 4;
    let f = run(&m, k, &l, &mem).unwrap_err();
    assert_eq!(f.kind, FaultKind::IllegalAddress);
}

#[test]
fn a_launch_needing_absurd_host_memory_is_refused_not_allocated() {
    let src = ".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry big()\n{\n.local .align 8 .b8 depot[1073741824];\nret;\n}\n";
    let m = Module::parse(src).unwrap();
    let mem = TestMemory::new();
    let f = run(&m, 0, &launch(1, 1024, &[]), &mem).unwrap_err();
    assert!(
        f.detail
            .contains("bytes of registers, local and shared memory"),
        "{f}"
    );
}

/// A kernel that makes one access of the given PTX at the address in parameter `a`
/// (`%rd1`), then stores what it read (`%rd2`) to `out`: the access must fault before
/// the store.
fn wild_access(access: &str) -> Module {
    let src = format!(
        r#"
.version 9.0
.target sm_90
.address_size 64
.visible .entry wild(.param .u64 a, .param .u64 out)
{{
    .reg .b64 %rd<5>;
    .shared .align 8 .b8 s[64];
    .local .align 8 .b8 depot[16];
    ld.param.u64 %rd1, [a];
    mov.u64 %rd2, 7;
    {access}
    ld.param.u64 %rd3, [out];
    st.global.u64 [%rd3], %rd2;
    ret;
}}
"#
    );
    Module::parse(&src).unwrap_or_else(|e| panic!("{access}: {e}"))
}

#[test]
fn state_space_addresses_that_wrap_or_leave_their_window_fault() {
    let wraps = 0xFFFF_FFFF_FFFF_FFF8u64;
    let window = cumock_ptx::SHARED_WINDOW;
    // Past the block's shared memory: the region reserved for the system, then the 64
    // bytes the kernel declares, in the 128-byte unit they are allocated in.
    let past = cumock_ptx::RESERVED_SHARED + 128;
    // (access, address, the address the fault names, what the message says)
    let cases: [(&str, u64, &str); 11] = [
        ("ld.shared.u64 %rd2, [%rd1];", wraps, "shared memory"),
        ("st.shared.u64 [%rd1], %rd2;", wraps, "shared memory"),
        (
            "ld.shared.v2.u32 {%r1, %r2}, [%rd1];",
            wraps,
            "shared memory",
        ),
        (
            "atom.shared.add.u64 %rd2, [%rd1], 1;",
            wraps,
            "shared memory",
        ),
        ("ld.shared.u64 %rd2, [%rd1];", past, "shared memory"),
        ("ld.local.u64 %rd2, [%rd1];", wraps, "local memory"),
        ("st.local.u64 [%rd1], %rd2;", wraps, "local memory"),
        ("ld.u64 %rd2, [%rd1];", wraps, "no mapping"),
        ("st.u64 [%rd1], %rd2;", wraps, "no mapping"),
        ("st.u64 [%rd1], %rd2;", window + past, "shared memory"),
        (
            "ld.u64 %rd2, [%rd1];",
            window + cumock_ptx::WINDOW_SIZE,
            "no mapping",
        ),
    ];
    for (access, addr, what) in cases {
        let src_access = if access.contains("%r1") {
            format!(".reg .b32 %r<3>;\n    {access}")
        } else {
            access.to_string()
        };
        let m = wild_access(&src_access);
        let access = src_access;
        let mut mem = TestMemory::new();
        let out = mem.map(&[0u8; 8], true);
        let p = params(&m.kernels[0], &[addr, out]);
        for threads in [1, 32] {
            let l = launch(1, threads, &p);
            let f = run(&m, 0, &l, &mem)
                .expect_err(&format!("{access} at {addr:#x} on {threads} threads"));
            assert_eq!(f.kind, FaultKind::IllegalAddress, "{access}: {f}");
            // A generic address in a window is named by its offset in that space.
            let named = if (window..window + cumock_ptx::WINDOW_SIZE).contains(&addr) {
                addr - window
            } else {
                addr
            };
            assert_eq!(f.address, Some(named), "{access}: {f}");
            assert!(f.to_string().contains(what), "{access}: {f}");
        }
        assert_eq!(mem.read(out), vec![0u8; 8], "{access}: nothing was stored");
    }
}

#[test]
fn parameter_reads_outside_the_buffer_fault() {
    // The buffer holds 16 bytes: `a` at 0, `out` at 8.
    let pw = cumock_ptx::PARAM_WINDOW;
    let cases: [(&str, u64); 4] = [
        ("ld.param.u64 %rd2, [out+8];", pw + 16),
        ("ld.param.u64 %rd2, [a+-8];", pw - 8),
        ("ld.u64 %rd2, [%rd1];", pw + 16),
        ("ld.u64 %rd2, [%rd1];", pw + 0xFFFF_FFF8),
    ];
    for (access, addr) in cases {
        let m = wild_access(access);
        let mut mem = TestMemory::new();
        let out = mem.map(&[0u8; 8], true);
        let p = params(&m.kernels[0], &[addr, out]);
        let f = run(&m, 0, &launch(1, 1, &p), &mem).expect_err(&format!("{access} at {addr:#x}"));
        assert_eq!(f.kind, FaultKind::IllegalAddress, "{f}");
        assert!(f.to_string().contains("kernel parameters"), "{f}");
        assert_eq!(mem.read(out), vec![0u8; 8], "{access}: nothing was stored");
    }
    // Inside the buffer: `out` read through its generic address.
    let m = wild_access("ld.u64 %rd2, [%rd1];");
    let mut mem = TestMemory::new();
    let out = mem.map(&[0u8; 8], true);
    let p = params(&m.kernels[0], &[pw + 8, out]);
    run(&m, 0, &launch(1, 1, &p), &mem).unwrap();
    assert_eq!(mem.read(out), out.to_le_bytes());
}

/// Runs a launch on a thread of its own and waits at most `guard` for it: a watchdog
/// that does not hold fails the test instead of hanging it.
fn run_guarded(
    m: Module,
    kernel: usize,
    l: cumock_ptx::Launch<'static>,
    guard: std::time::Duration,
) -> (Result<cumock_ptx::Stats, KernelFault>, std::time::Duration) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mem = TestMemory::new();
        let t = std::time::Instant::now();
        let r = run(&m, kernel, &l, &mem);
        let _ = tx.send((r, t.elapsed()));
    });
    rx.recv_timeout(guard)
        .expect("the launch outlived its time limit: the watchdog did not end it")
}

#[test]
fn a_runaway_kernel_and_a_huge_grid_end_at_the_time_limit() {
    let spin = r#"
.version 9.0
.target sm_90
.address_size 64
.visible .entry spin()
{
    .reg .b32 %r<3>;
    .reg .pred %p<2>;
    mov.u32 %r1, 0;
LOOP:
    add.u32 %r1, %r1, 1;
    setp.ne.u32 %p1, %r1, 0;
    bra LOOP;
}
.visible .entry empty()
{
    ret;
}
"#;
    let limit = std::time::Duration::from_millis(300);
    for (kernel, grid) in [("spin", 1), ("empty", (1u32 << 31) - 1)] {
        let m = Module::parse(spin).unwrap();
        let k = m.kernel(kernel).unwrap();
        let mut l = launch(grid, 32, &[]);
        l.step_limit = None;
        l.time_limit = Some(limit);
        let (r, took) = run_guarded(m, k, l, std::time::Duration::from_secs(60));
        let f = r.expect_err("the launch should end at its time limit");
        assert_eq!(f.kind, FaultKind::TimeLimit, "{f}");
        assert!(took >= limit, "ended after {took:?}, before its limit");
        let msg = f.to_string();
        assert!(
            msg.contains(kernel) && msg.contains("time limit of 0.3 s"),
            "{msg}"
        );
    }
}
