//! Cooperative launches: every block in flight at once on a few host threads, blocks
//! yielding to each other, so that cooperative groups' grid sync (as nvcc 13.0 compiles
//! it: a barrier word in the grid workspace of %envreg1:%envreg2, spun on) completes with
//! one host thread as with many, under both engines; an ordinary launch has no workspace
//! and its grid sync traps; a grid sync that can never complete ends at the time limit.

mod common;
use common::*;
use cumock_ptx::{run, Engine, FaultKind, Launch, Module};
use std::time::Duration;

const SOURCE: &str = r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// Each round, thread 0 of each block reads its right neighbour's value of the previous
// round, the grid syncs, it writes its own as that plus one, the grid syncs again.
extern "C" __global__ void rounds(int *v, int *wrong, int n_rounds) {
    cg::grid_group grid = cg::this_grid();
    for (int r = 0; r < n_rounds; r++) {
        int seen = 0;
        if (threadIdx.x == 0) {
            seen = v[(blockIdx.x + 1) % gridDim.x];
            if (seen != r) atomicAdd(wrong, 1);
        }
        grid.sync();
        if (threadIdx.x == 0) v[blockIdx.x] = seen + 1;
        grid.sync();
    }
}

// Block 0 leaves before the sync: the others wait for it forever.
extern "C" __global__ void deserted(int *v) {
    if (blockIdx.x == 0) return;
    cg::this_grid().sync();
    v[blockIdx.x] = 1;
}
"#;

fn module() -> Module {
    Module::parse(&ptx(SOURCE)).unwrap()
}

fn rounds(engine: Engine, host_threads: usize, blocks: u32, n_rounds: u32) {
    let m = module();
    let k = m.kernel("rounds").unwrap();
    let mut mem = TestMemory::new();
    let v = mem.map(&u32s(&vec![0; blocks as usize]), true);
    let wrong = mem.map(&u32s(&[0]), true);
    let p = params(&m.kernels[k], &[v, wrong, n_rounds as u64]);
    let l = Launch {
        block: [96, 1, 1],
        host_threads,
        engine,
        cooperative: true,
        ..launch(blocks, 96, &p)
    };
    run(&m, k, &l, &mem).unwrap();
    assert_eq!(
        to_u32s(&mem.read(wrong)),
        [0],
        "{engine:?}, {host_threads} threads"
    );
    assert_eq!(
        to_u32s(&mem.read(v)),
        vec![n_rounds; blocks as usize],
        "{engine:?}, {host_threads} threads"
    );
}

#[test]
fn grid_sync_orders_every_round_on_one_host_thread_and_on_several() {
    for engine in [Engine::Interp, Engine::Jit] {
        for threads in [1, 2, 3] {
            rounds(engine, threads, 40, 6);
        }
    }
}

#[test]
fn a_grid_of_many_blocks_syncs_on_two_host_threads() {
    rounds(Engine::Jit, 2, 600, 3);
}

#[test]
fn grid_sync_in_an_ordinary_launch_traps() {
    let m = module();
    let k = m.kernel("rounds").unwrap();
    let mut mem = TestMemory::new();
    let v = mem.map(&u32s(&[0; 4]), true);
    let wrong = mem.map(&u32s(&[0]), true);
    let p = params(&m.kernels[k], &[v, wrong, 1]);
    let l = launch(4, 64, &p);
    let f = run(&m, k, &l, &mem).unwrap_err();
    assert_eq!(f.kind, FaultKind::Trap, "{f}");
}

#[test]
fn a_grid_sync_that_cannot_complete_ends_at_the_time_limit() {
    let m = module();
    let k = m.kernel("deserted").unwrap();
    let mut mem = TestMemory::new();
    let v = mem.map(&u32s(&[0; 8]), true);
    let p = params(&m.kernels[k], &[v]);
    let l = Launch {
        cooperative: true,
        step_limit: None,
        time_limit: Some(Duration::from_millis(500)),
        ..launch(8, 64, &p)
    };
    let f = run(&m, k, &l, &mem).unwrap_err();
    assert_eq!(f.kind, FaultKind::TimeLimit, "{f}");
    assert_eq!(to_u32s(&mem.read(v)), [0; 8]);
}

#[test]
fn the_grid_workspace_is_out_of_reach_of_an_ordinary_launch() {
    // A kernel that reads the address a cooperative launch's workspace has: an illegal
    // address in an ordinary launch, not the executor's memory.
    let src = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry peek(.param .u64 out)\n{{\n\
         .reg .b32 %r<2>;\n.reg .b64 %rd<3>;\n\
         ld.param.u64 %rd1, [out];\n\
         mov.u64 %rd2, {:#x};\n\
         ld.u32 %r1, [%rd2+4];\n\
         st.global.u32 [%rd1], %r1;\n\
         ret;\n}}\n",
        cumock_ptx::GRID_WINDOW
    );
    let m = Module::parse(&src).unwrap();
    let k = m.kernel("peek").unwrap();
    let mut mem = TestMemory::new();
    let out = mem.map(&u32s(&[7]), true);
    let p = params(&m.kernels[k], &[out]);
    for engine in [Engine::Interp, Engine::Jit] {
        let l = Launch {
            engine,
            ..launch(1, 32, &p)
        };
        let f = run(&m, k, &l, &mem).unwrap_err();
        assert_eq!(f.kind, FaultKind::IllegalAddress, "{f}");
        assert!(f.detail.contains("cooperative"), "{f}");
        // In a cooperative launch it is the workspace (zero before any sync), and a read
        // past its end is refused.
        let l = Launch {
            engine,
            cooperative: true,
            ..launch(1, 32, &p)
        };
        run(&m, k, &l, &mem).unwrap();
        assert_eq!(to_u32s(&mem.read(out)), [0]);
    }
}
