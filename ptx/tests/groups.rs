//! Cooperative groups' labeled partitions as nvcc compiles them: a warp split into
//! groups, each reducing and voting among its own lanes (`redux.sync`, `vote.sync` with a
//! member mask that differs from lane to lane).

mod common;
use common::*;
use cumock_ptx::{run, Engine, Module};

/// What cooperative groups' `labeled_partition` + `reduce` compile to (its headers need
/// CCCL's `<nv/target>`, which the registry's nvcc packages lack): the group's mask from
/// `__match_any_sync` on the label, then the sm_80 warp reductions and votes over it.
const SRC: &str = r#"
// Lane i joins group label[i]; each lane writes its group's sum, min, max, size, the
// ballot of odd values in the group, whether all its values agree, and the mask.
extern "C" __global__ void partitions(const int *in, const int *label, int *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    unsigned g = __match_any_sync(__activemask(), label[i]);
    out[i * 7 + 0] = __reduce_add_sync(g, v);
    out[i * 7 + 1] = __reduce_min_sync(g, v);
    out[i * 7 + 2] = __reduce_max_sync(g, (unsigned)v);
    out[i * 7 + 3] = __popc(g);
    out[i * 7 + 4] = __ballot_sync(g, v & 1);
    out[i * 7 + 5] = __all_sync(g, v == in[i - (i & 31)]);
    out[i * 7 + 6] = g;
}
"#;

#[test]
fn labeled_partitions_reduce_and_vote_each_among_their_own_lanes() {
    let text = ptx(SRC);
    assert!(
        text.contains("redux.sync"),
        "nvcc no longer emits redux.sync here"
    );
    let m = Module::parse(&text).unwrap();
    let k = m.kernel("partitions").unwrap();
    let n = 64usize;
    let mut r = fastrand::Rng::with_seed(7);
    let input: Vec<u32> = (0..n).map(|_| r.i32(-1000..1000) as u32).collect();
    // Groups of uneven sizes, interleaved within each warp.
    let label: Vec<u32> = (0..n as u32).map(|i| (i * 7 + i / 5) % 3).collect();
    let mut mem = TestMemory::new();
    let din = mem.map(&u32s(&input), false);
    let dl = mem.map(&u32s(&label), false);
    let dout = mem.map(&vec![0u8; n * 7 * 4], true);
    let p = params(&m.kernels[k], &[din, dl, dout]);
    run(&m, k, &launch(2, 32, &p), &mem).unwrap();
    let out = to_u32s(&mem.read(dout));
    for i in 0..n {
        let warp = i / 32 * 32;
        let members: Vec<usize> = (warp..warp + 32)
            .filter(|&j| label[j] == label[i])
            .collect();
        let vals: Vec<i32> = members.iter().map(|&j| input[j] as i32).collect();
        let sum = vals.iter().fold(0i32, |a, &b| a.wrapping_add(b));
        let min = *vals.iter().min().unwrap();
        let umax = members.iter().map(|&j| input[j]).max().unwrap();
        let mask = members.iter().fold(0u32, |m, &j| m | 1 << (j - warp));
        let ballot = members
            .iter()
            .filter(|&&j| input[j] & 1 != 0)
            .fold(0u32, |b, &j| b | 1 << (j - warp));
        let all = members.iter().all(|&j| input[j] == input[warp]);
        let want = [
            sum as u32,
            min as u32,
            umax,
            members.len() as u32,
            ballot,
            all as u32,
            mask,
        ];
        assert_eq!(
            &out[i * 7..i * 7 + 7],
            &want,
            "lane {i}, label {}",
            label[i]
        );
    }
}

/// Tiles of more than a warp (`tiled_partition<64>` over `block_tile_memory`): on sm_80
/// and later cooperative groups keep their barriers and exchange slots in the shared
/// memory the system reserves at the start of each block (`%reserved_smem_offset_1`),
/// not in the kernel's variables. The block's own shared array is filled around the
/// tile's work, so a reserved region that overlapped it (or was missing) shows.
const MULTI_WARP_SRC: &str = r#"
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void multi_warp_tiles(const int *in, int *out) {
    __shared__ cg::block_tile_memory<256> scratch;
    __shared__ int mine[256];
    auto block = cg::this_thread_block(scratch);
    auto tile = cg::tiled_partition<64>(block);
    int t = block.thread_rank();
    mine[t] = ~t;
    block.sync();
    int v = in[blockIdx.x * blockDim.x + t];
    int sum = cg::reduce(tile, v, cg::plus<int>());
    int first = tile.shfl(v, 0);
    tile.sync();
    int *o = out + 4 * (blockIdx.x * blockDim.x + t);
    o[0] = sum;
    o[1] = first;
    o[2] = tile.meta_group_rank();
    o[3] = mine[255 - t];
}
"#;

#[test]
fn multi_warp_tiles_use_the_reserved_shared_memory() {
    let text = ptx(MULTI_WARP_SRC);
    assert!(
        text.contains("%reserved_smem_offset_1"),
        "nvcc no longer keeps multi-warp tiles in the reserved shared memory"
    );
    let m = Module::parse(&text).unwrap();
    let k = m.kernel("multi_warp_tiles").unwrap();
    let (grid, block) = (3usize, 256usize);
    let n = grid * block;
    let mut r = fastrand::Rng::with_seed(11);
    let input: Vec<u32> = (0..n).map(|_| r.i32(-1000..1000) as u32).collect();
    for engine in [Engine::Interp, Engine::Jit] {
        let mut mem = TestMemory::new();
        let din = mem.map(&u32s(&input), false);
        let dout = mem.map(&vec![0u8; n * 16], true);
        // The module's variables (the headers' own) as a driver places them.
        let globals: Vec<u64> = m
            .globals
            .iter()
            .map(|g| {
                let mut bytes = g.init.clone();
                bytes.resize(g.size as usize, 0);
                mem.map(&bytes, true)
            })
            .collect();
        let p = params(&m.kernels[k], &[din, dout]);
        let mut l = launch(grid as u32, block as u32, &p);
        l.engine = engine;
        l.globals = &globals;
        run(&m, k, &l, &mem).unwrap();
        let out = to_u32s(&mem.read(dout));
        for i in 0..n {
            let tile = i / 64 * 64;
            let sum = input[tile..tile + 64]
                .iter()
                .fold(0i32, |a, &b| a.wrapping_add(b as i32));
            let t = (i % block) as u32;
            let want = [sum as u32, input[tile], t / 64, !(255 - t)];
            assert_eq!(&out[4 * i..4 * i + 4], &want, "{engine:?}, thread {i}");
        }
    }
}
