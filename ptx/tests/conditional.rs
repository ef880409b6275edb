//! The device runtime's `cudaGraphSetConditional(handle, value)`, which nvcc compiles to a
//! call of an extern `.func`: the executor stores the value in the 4-byte word the
//! handle's address names (the driver makes handles so), and a handle that names no
//! writable memory faults where the store would.

mod common;
use common::*;
use cumock_ptx::{run, FaultKind, Module};

const SOURCE: &str = r#"
#include <cuda_runtime.h>
extern "C" __global__ void set_to(cudaGraphConditionalHandle h, unsigned v) {
  if (threadIdx.x == 3) cudaGraphSetConditional(h, v + threadIdx.x);
}
"#;

fn module() -> Module {
    Module::parse(&ptx(SOURCE)).unwrap()
}

#[test]
fn the_value_lands_in_the_handles_word() {
    let m = module();
    let mut mem = TestMemory::new();
    let word = mem.map(&u32s(&[0, 0xaaaa_aaaa]), true);
    let k = m.kernel("set_to").unwrap();
    let p = params(&m.kernels[k], &[word, 40]);
    run(&m, k, &launch(1, 32, &p), &mem).unwrap();
    assert_eq!(to_u32s(&mem.read(word)), [43, 0xaaaa_aaaa]);
}

#[test]
fn a_handle_naming_no_writable_word_faults() {
    let m = module();
    let k = m.kernel("set_to").unwrap();
    let mut mem = TestMemory::new();
    let read_only = mem.map(&[0u8; 8], false);
    for (handle, kind) in [
        (0x7000_0000_0000, FaultKind::IllegalAddress),
        (read_only, FaultKind::IllegalAddress),
        (read_only + 2, FaultKind::MisalignedAddress),
    ] {
        let p = params(&m.kernels[k], &[handle, 1]);
        let f = run(&m, k, &launch(1, 32, &p), &mem).expect_err("a fault");
        assert_eq!((f.kind, f.thread), (kind, [3, 0, 0]), "{f}");
    }
}
