//! Tensor copies (`cp.async.bulk.tensor`) as cuda::device::experimental writes them: a
//! box of a tensor map into shared memory (completing its bytes on a cuda::barrier),
//! elements outside the tensor read as zeros, swizzled as the map says, traversal strides;
//! and a box stored back, elements outside the tensor left unwritten. The maps are the
//! ones cuTensorMapEncodeTiled writes (`cumock_ptx::tensormap`), in global memory.

mod common;
use common::*;
use cumock_ptx::tensormap::{Im2colArgs, TensorMap, TiledArgs};
use cumock_ptx::{run, Engine, FaultKind, Module};

const SOURCE: &str = r#"
#include <cuda.h>
#include <cuda/barrier>
using barrier = cuda::barrier<cuda::thread_scope_block>;
namespace cde = cuda::device::experimental;

extern "C" __global__ void load_2d(const CUtensorMap* tm, float* out, int x, int y) {
  __shared__ alignas(1024) float box[1024];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ barrier bar;
  if (threadIdx.x == 0) { init(&bar, blockDim.x); cde::fence_proxy_async_shared_cta(); }
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) box[i] = -1.0f;
  __syncthreads();
  barrier::arrival_token tok;
  if (threadIdx.x == 0) {
    cde::cp_async_bulk_tensor_2d_global_to_shared(box, tm, x, y, bar);
    tok = cuda::device::barrier_arrive_tx(bar, 1, 1024);
  } else {
    tok = bar.arrive();
  }
  bar.wait(std::move(tok));
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) out[i] = box[i];
}

extern "C" __global__ void load_3d(const CUtensorMap* tm, unsigned* out, int x, int y, int z, unsigned bytes) {
  __shared__ alignas(128) unsigned box[1024];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ barrier bar;
  if (threadIdx.x == 0) { init(&bar, blockDim.x); cde::fence_proxy_async_shared_cta(); }
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) box[i] = 0xeeeeeeee;
  __syncthreads();
  barrier::arrival_token tok;
  if (threadIdx.x == 0) {
    cde::cp_async_bulk_tensor_3d_global_to_shared(box, tm, x, y, z, bar);
    tok = cuda::device::barrier_arrive_tx(bar, 1, bytes);
  } else {
    tok = bar.arrive();
  }
  bar.wait(std::move(tok));
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) out[i] = box[i];
}

// The same with PTX ISA 8.6's `.shared::cta` destination, one thread, spinning on the
// mbarrier's parity.
extern "C" __global__ void load_2d_cta(const CUtensorMap* tm, float* out, int x, int y) {
  __shared__ alignas(1024) float box[1024];
  __shared__ alignas(8) unsigned long long bar;
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  unsigned d = (unsigned)__cvta_generic_to_shared(box);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(b));
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], 1024;" :: "r"(b));
    asm volatile("cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(d), "l"(tm), "r"(x), "r"(y), "r"(b) : "memory");
    asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared.b64 p, [%0], 0; @!p bra W; }" :: "r"(b) : "memory");
    for (int i = 0; i < 1024; i++) out[i] = box[i];
  }
}

// Every block adds its box into the tensor (cp.reduce.async.bulk.tensor).
extern "C" __global__ void reduce_add_2d(const CUtensorMap* tm, int x, int y) {
  __shared__ alignas(1024) float box[256];
  box[threadIdx.x] = 1.0f + blockIdx.x;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2}], [%3];"
                 :: "l"(tm), "r"(x), "r"(y), "r"((unsigned)__cvta_generic_to_shared(box)) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}

// An im2col box of an NHWC map: `pixels` pixels of its channels from the filter base
// (w, h) of image n, read at the im2col offsets (ow, oh).
extern "C" __global__ void load_im2col_4d(const CUtensorMap* tm, float* out, int c, int w, int h,
                                          int n, unsigned short ow, unsigned short oh, unsigned bytes) {
  __shared__ alignas(1024) float box[1024];
  __shared__ alignas(8) unsigned long long bar;
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  unsigned d = (unsigned)__cvta_generic_to_shared(box);
  if (threadIdx.x == 0) {
    for (int i = 0; i < 1024; i++) box[i] = -1.0f;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(b));
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" :: "r"(b), "r"(bytes));
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};"
                 :: "r"(d), "l"(tm), "r"(c), "r"(w), "r"(h), "r"(n), "r"(b), "h"(ow), "h"(oh) : "memory");
    asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared.b64 p, [%0], 0; @!p bra W; }" :: "r"(b) : "memory");
    for (int i = 0; i < 1024; i++) out[i] = box[i];
  }
}

// A multicast's receiving side, shared by the two kernels below: every block of the
// cluster fills its box with -1 and sets up its mbarrier (expecting the box's 1024 bytes
// when `mask` names it), the cluster meets, and `rank` (the block's) is returned; after
// the copy, `multicast_wait_and_write` waits in the blocks of the mask and every block
// writes its box out (those outside the mask: as they left it).
__device__ unsigned multicast_setup(float* box, unsigned b, unsigned mask) {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  for (int i = threadIdx.x; i < 256; i += blockDim.x) box[i] = -1.0f;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    if (mask >> rank & 1)
      asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], 1024;" :: "r"(b));
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  asm volatile("barrier.cluster.arrive; barrier.cluster.wait;" ::: "memory");
  return rank;
}

__device__ void multicast_wait_and_write(const float* box, unsigned b, unsigned mask, unsigned rank, float* out) {
  if (mask >> rank & 1)
    asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared.b64 p, [%0], 0; @!p bra W; }" :: "r"(b) : "memory");
  for (int i = threadIdx.x; i < 256; i += blockDim.x) out[rank * 256 + i] = box[i];
  asm volatile("barrier.cluster.arrive; barrier.cluster.wait;" ::: "memory");
}

// Rank 0 of a cluster of 4 multicasts a 2D box to the blocks of `mask`.
extern "C" __global__ void multicast_2d(const CUtensorMap* tm, float* out, int x, int y, unsigned mask) {
  __shared__ alignas(1024) float box[256];
  __shared__ alignas(8) unsigned long long bar;
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  unsigned d = (unsigned)__cvta_generic_to_shared(box);
  unsigned rank = multicast_setup(box, b, mask);
  if (threadIdx.x == 0 && rank == 0)
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
                 :: "r"(d), "l"(tm), "r"(x), "r"(y), "r"(b), "h"((unsigned short)mask) : "memory");
  multicast_wait_and_write(box, b, mask, rank, out);
}

// The same with an im2col box of a 3d (NWC) map, offset `ow`: 64 pixels of 4 floats, sent
// by rank 1.
extern "C" __global__ void multicast_im2col(const CUtensorMap* tm, float* out, int c, int w, int n,
                                            unsigned short ow, unsigned mask) {
  __shared__ alignas(1024) float box[256];
  __shared__ alignas(8) unsigned long long bar;
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  unsigned d = (unsigned)__cvta_generic_to_shared(box);
  unsigned rank = multicast_setup(box, b, mask);
  if (threadIdx.x == 0 && rank == 1)
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], {%6}, %7;"
                 :: "r"(d), "l"(tm), "r"(c), "r"(w), "r"(n), "r"(b), "h"(ow), "h"((unsigned short)mask) : "memory");
  multicast_wait_and_write(box, b, mask, rank, out);
}

// Box words 5000 + i stored into a 3d map at (x, y, z).
extern "C" __global__ void store_3d(const CUtensorMap* tm, int x, int y, int z) {
  __shared__ alignas(1024) unsigned box[1024];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) box[i] = 5000 + i;
  cde::fence_proxy_async_shared_cta();
  __syncthreads();
  if (threadIdx.x == 0) {
    cde::cp_async_bulk_tensor_3d_shared_to_global(tm, x, y, z, box);
    cde::cp_async_bulk_commit_group();
    cde::cp_async_bulk_wait_group_read<0>();
  }
}

extern "C" __global__ void store_2d(const CUtensorMap* tm, int x, int y) {
  __shared__ alignas(1024) float box[1024];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) box[i] = 1000.0f + i;
  cde::fence_proxy_async_shared_cta();
  __syncthreads();
  if (threadIdx.x == 0) {
    cde::cp_async_bulk_tensor_2d_shared_to_global(tm, x, y, box);
    cde::cp_async_bulk_commit_group();
    cde::cp_async_bulk_wait_group_read<0>();
  }
}
"#;

fn module() -> Module {
    Module::parse(&ptx(SOURCE)).unwrap_or_else(|e| panic!("{e}"))
}

const ENGINES: [Engine; 2] = [Engine::Interp, Engine::Jit];

struct Tensor {
    dims: Vec<u64>,
    strides: Vec<u64>,
    box_dim: Vec<u32>,
    element_strides: Vec<u32>,
    swizzle: u32,
}

fn map(t: &Tensor, data_type: u32, address: u64) -> TensorMap {
    TensorMap::tiled(&TiledArgs {
        data_type,
        rank: t.dims.len() as u32,
        address,
        dims: &t.dims,
        global_strides: &t.strides,
        box_dim: &t.box_dim,
        element_strides: &t.element_strides,
        interleave: 0,
        swizzle: t.swizzle,
        l2_promotion: 2,
        oob_fill: 0,
    })
    .unwrap()
}

/// An interleaved 3d map (`interleave` 1: 16B, 2: 32B) of `data_type` over `dims`.
fn interleaved_map(
    data_type: u32,
    address: u64,
    dims: &[u64; 3],
    box_dim: &[u32; 3],
    element_strides: &[u32; 3],
    interleave: u32,
    swizzle: u32,
) -> TensorMap {
    let esize = if data_type == 7 { 4 } else { 2 };
    let strides = [dims[0] * esize, dims[0] * dims[1] * esize];
    TensorMap::tiled(&TiledArgs {
        data_type,
        rank: 3,
        address,
        dims,
        global_strides: &strides,
        box_dim,
        element_strides,
        interleave,
        swizzle,
        l2_promotion: 0,
        oob_fill: 0,
    })
    .unwrap()
}

fn launch_with(
    m: &Module,
    kernel: &str,
    mem: &TestMemory,
    vals: &[u64],
    engine: Engine,
) -> Result<(), cumock_ptx::KernelFault> {
    let k = m.kernel(kernel).unwrap();
    let p = params(&m.kernels[k], vals);
    let mut l = launch(1, 128, &p);
    l.engine = engine;
    run(m, k, &l, mem).map(|_| ())
}

/// The box of a 2D float tensor (row-major, `width` x `height`, `pitch` bytes a row) at
/// (x, y), `bw` x `bh` elements, as shared memory holds it: row after row, zeros outside
/// the tensor, 16-byte chunks XORed with the 128-byte row's index under a 128B swizzle.
#[allow(clippy::too_many_arguments)]
fn model_2d(
    data: &[f32],
    width: i64,
    height: i64,
    pitch: i64,
    x: i64,
    y: i64,
    bw: i64,
    bh: i64,
    swizzle128: bool,
) -> Vec<f32> {
    let mut out = vec![-1.0f32; 1024];
    for r in 0..bh {
        for c in 0..bw {
            let (gx, gy) = (x + c, y + r);
            let v = if gx < 0 || gy < 0 || gx >= width || gy >= height {
                0.0
            } else {
                data[(gy * pitch / 4 + gx) as usize]
            };
            let mut at = ((r * bw + c) * 4) as usize;
            if swizzle128 {
                at ^= ((at >> 7) & 7) << 4;
            }
            out[at / 4] = v;
        }
    }
    out
}

#[test]
fn a_2d_box_loads_with_zeros_outside_the_tensor_and_swizzles() {
    let m = module();
    let (width, height, pitch) = (100i64, 37i64, 416i64);
    let data: Vec<f32> = (0..(pitch / 4 * height)).map(|i| i as f32 * 0.25).collect();
    let tensor = |swizzle| Tensor {
        dims: vec![width as u64, height as u64],
        strides: vec![pitch as u64],
        box_dim: vec![32, 8],
        element_strides: vec![1, 1],
        swizzle,
    };
    for engine in ENGINES {
        for swizzle in [0u32, 3] {
            // Boxes start at 16-byte boundaries of the innermost dimension (below).
            for (x, y) in [(0i64, 0i64), (12, 5), (80, 33), (-8, -3), (96, 36)] {
                let mut mem = TestMemory::new();
                let dt = mem.map(&f32s(&data), false);
                let dm = mem.map(&map(&tensor(swizzle), 7, dt).encode(), false);
                let want = model_2d(&data, width, height, pitch, x, y, 32, 8, swizzle == 3);
                // `load_2d_cta` leaves the rest of its buffer as the block found it: its
                // box's 256 words are compared.
                for (kernel, words) in [("load_2d", 1024), ("load_2d_cta", 256)] {
                    let dout = mem.map(&[0u8; 4096], true);
                    launch_with(
                        &m,
                        kernel,
                        &mem,
                        &[dm, dout, x as u32 as u64, y as u32 as u64],
                        engine,
                    )
                    .unwrap_or_else(|f| panic!("{f}"));
                    let got = to_f32s(&mem.read(dout));
                    assert_eq!(
                        got[..words],
                        want[..words],
                        "{kernel} {engine:?} swizzle {swizzle} at ({x}, {y})"
                    );
                }
            }
        }
        // A box starting off a 16-byte boundary (x = 13 of 4-byte elements, 52 bytes) ends
        // the kernel with an illegal instruction, as the H200 does for x = 1 (NVIDIA's
        // globalToShmemTMACopy sample).
        let mut mem = TestMemory::new();
        let dt = mem.map(&f32s(&data), false);
        let dm = mem.map(&map(&tensor(0), 7, dt).encode(), false);
        let dout = mem.map(&[0u8; 4096], true);
        let f = launch_with(&m, "load_2d", &mem, &[dm, dout, 13, 5], engine).unwrap_err();
        assert_eq!(f.kind, FaultKind::IllegalInstruction, "{engine:?}: {f}");
        assert!(f.detail.contains("multiple of 16 bytes"), "{f}");
    }
}

#[test]
fn traversal_strides_take_every_nth_element_of_outer_dimensions() {
    let m = module();
    // 3D u32 tensor 16 x 10 x 6; box 8 x 6 x 3 with strides 1, 2, 3: 8 x 3 x 1 elements.
    let (w, h, d) = (16i64, 10i64, 6i64);
    let data: Vec<u32> = (0..(w * h * d) as u32).map(|i| i * 3 + 1).collect();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let dt = mem.map(&u32s(&data), false);
        let t = Tensor {
            dims: vec![w as u64, h as u64, d as u64],
            strides: vec![(w * 4) as u64, (w * h * 4) as u64],
            box_dim: vec![8, 6, 3],
            element_strides: vec![1, 2, 3],
            swizzle: 0,
        };
        let tm = map(&t, 2, dt);
        assert_eq!(tm.box_counts()[..3], [8, 3, 1]);
        let dm = mem.map(&tm.encode(), false);
        let dout = mem.map(&[0u8; 4096], true);
        let (x, y, z) = (4i64, 5i64, 2i64);
        launch_with(
            &m,
            "load_3d",
            &mem,
            &[dm, dout, x as u64, y as u64, z as u64, 8 * 3 * 4],
            engine,
        )
        .unwrap_or_else(|f| panic!("{f}"));
        let got = to_u32s(&mem.read(dout));
        let mut k = 0;
        for zz in 0..1i64 {
            for yy in 0..3i64 {
                for xx in 0..8i64 {
                    let (gx, gy, gz) = (x + xx, y + 2 * yy, z + 3 * zz);
                    let want = if gx < w && gy < h && gz < d {
                        data[(gz * w * h + gy * w + gx) as usize]
                    } else {
                        0
                    };
                    assert_eq!(got[k], want, "{engine:?} element {k}");
                    k += 1;
                }
            }
        }
        assert!(
            got[k..].iter().all(|v| *v == 0xeeee_eeee),
            "past the box: untouched"
        );
    }
}

#[test]
fn a_stored_box_writes_only_inside_the_tensor() {
    let m = module();
    let (width, height, pitch) = (40i64, 12i64, 160i64);
    for engine in ENGINES {
        let (x, y) = (20i64, 7i64);
        let mut mem = TestMemory::new();
        let dt = mem.map(&vec![0u8; (pitch * height) as usize], true);
        let t = Tensor {
            dims: vec![width as u64, height as u64],
            strides: vec![pitch as u64],
            box_dim: vec![32, 8],
            element_strides: vec![1, 1],
            swizzle: 0,
        };
        let dm = mem.map(&map(&t, 7, dt).encode(), false);
        launch_with(&m, "store_2d", &mem, &[dm, x as u64, y as u64], engine)
            .unwrap_or_else(|f| panic!("{f}"));
        let got = to_f32s(&mem.read(dt));
        for gy in 0..height {
            for gx in 0..width {
                let (c, r) = (gx - x, gy - y);
                let want = if (0..32).contains(&c) && (0..8).contains(&r) {
                    1000.0 + (r * 32 + c) as f32
                } else {
                    0.0
                };
                assert_eq!(
                    got[(gy * width + gx) as usize],
                    want,
                    "{engine:?} ({gx}, {gy})"
                );
            }
        }
    }
}

#[test]
fn a_map_the_driver_did_not_write_or_a_tensor_out_of_memory_faults() {
    let m = module();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let dout = mem.map(&[0u8; 4096], true);
        let junk = mem.map(&[0x5au8; 128], false);
        let f = launch_with(&m, "load_2d", &mem, &[junk, dout, 0, 0], engine).unwrap_err();
        assert_eq!(f.kind, FaultKind::IllegalInstruction, "{f}");
        assert!(f.detail.contains("cuTensorMapEncodeTiled"), "{f}");
        assert!(f.instruction.contains("cp.async.bulk.tensor.2d"), "{f}");
        // A map over 64 bytes of memory whose box reaches past them.
        let small = mem.map(&[0u8; 64], false);
        let t = Tensor {
            dims: vec![64, 64],
            strides: vec![256],
            box_dim: vec![32, 8],
            element_strides: vec![1, 1],
            swizzle: 0,
        };
        let dm = mem.map(&map(&t, 7, small).encode(), false);
        let f = launch_with(&m, "load_2d", &mem, &[dm, dout, 0, 0], engine).unwrap_err();
        assert_eq!(
            (f.kind, f.address),
            (FaultKind::IllegalAddress, Some(small + 64)),
            "{f}"
        );
    }
}

#[test]
fn a_tensor_reduction_adds_every_blocks_box_inside_the_tensor() {
    let m = module();
    let (width, height, pitch) = (40i64, 12i64, 160i64);
    for engine in ENGINES {
        let (x, y) = (20i64, 7i64);
        let mut mem = TestMemory::new();
        let dt = mem.map(&f32s(&vec![0.5; (pitch / 4 * height) as usize]), true);
        let t = Tensor {
            dims: vec![width as u64, height as u64],
            strides: vec![pitch as u64],
            box_dim: vec![32, 8],
            element_strides: vec![1, 1],
            swizzle: 0,
        };
        let dm = mem.map(&map(&t, 7, dt).encode(), false);
        let k = m.kernel("reduce_add_2d").unwrap();
        let p = params(&m.kernels[k], &[dm, x as u64, y as u64]);
        let mut l = launch(4, 256, &p);
        l.engine = engine;
        run(&m, k, &l, &mem).unwrap_or_else(|f| panic!("{f}"));
        let got = to_f32s(&mem.read(dt));
        for gy in 0..height {
            for gx in 0..pitch / 4 {
                let inside = gx < width && (x..x + 32).contains(&gx) && (y..y + 8).contains(&gy);
                // Blocks 0-3 add 1, 2, 3 and 4.
                let want = if inside { 0.5 + 10.0 } else { 0.5 };
                assert_eq!(
                    got[(gy * pitch / 4 + gx) as usize],
                    want,
                    "{engine:?} ({gx}, {gy})"
                );
            }
        }
    }
}

// sm_90a's tensormap.replace: a kernel copies a template map into shared memory, points
// it at another tensor of fewer rows without the swizzle, publishes it to global memory
// (tensormap.cp_fenceproxy) and loads a box through it.
const RETARGET: &str = r#"
#include <cuda.h>
extern "C" __global__ void retarget(const CUtensorMap* tmpl, CUtensorMap* slot, const float* other,
                                    int height, float* out) {
  __shared__ alignas(128) CUtensorMap sm;
  __shared__ alignas(1024) float box[256];
  __shared__ alignas(8) unsigned long long bar;
  unsigned s = (unsigned)__cvta_generic_to_shared(&sm);
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) {
    sm = *tmpl;
    asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;" :: "r"(s), "l"(other) : "memory");
    asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 1, %1;" :: "r"(s), "r"(height) : "memory");
    asm volatile("tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%0], 0;" :: "r"(s) : "memory");
    asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(b));
  }
  __syncwarp();
  asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], 128;"
               :: "l"(slot), "r"(s) : "memory");
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" :: "l"(slot) : "memory");
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], 1024;" :: "r"(b));
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"((unsigned)__cvta_generic_to_shared(box)), "l"(slot), "r"(0), "r"(0), "r"(b) : "memory");
    asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared.b64 p, [%0], 0; @!p bra W; }" :: "r"(b) : "memory");
    for (int i = 0; i < 256; i++) out[i] = box[i];
  }
}
"#;

#[test]
fn tensormap_replace_retargets_a_map_a_kernel_publishes() {
    let src = String::from_utf8(nvcc(RETARGET, &["-ptx", "-arch=compute_90a", "-O3"])).unwrap();
    let m = Module::parse(&src).unwrap_or_else(|e| panic!("{e}"));
    let (width, pitch) = (100i64, 416i64);
    let first: Vec<f32> = (0..(pitch / 4 * 37)).map(|i| i as f32).collect();
    let other: Vec<f32> = (0..(pitch / 4 * 37)).map(|i| -(i as f32)).collect();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let d1 = mem.map(&f32s(&first), false);
        let d2 = mem.map(&f32s(&other), false);
        let t = Tensor {
            dims: vec![width as u64, 37],
            strides: vec![pitch as u64],
            box_dim: vec![32, 8],
            element_strides: vec![1, 1],
            swizzle: 3,
        };
        let tmpl = mem.map(&map(&t, 7, d1).encode(), false);
        let slot = mem.map(&[0u8; 128], true);
        let dout = mem.map(&[0u8; 1024], true);
        let k = m.kernel("retarget").unwrap();
        let p = params(&m.kernels[k], &[tmpl, slot, d2, 5, dout]);
        let mut l = launch(1, 32, &p);
        l.engine = engine;
        run(&m, k, &l, &mem).unwrap_or_else(|f| panic!("{f}"));
        let got = to_f32s(&mem.read(dout));
        // The other tensor, 5 rows high now, unswizzled: rows 5-7 of the box are zeros.
        let want = model_2d(&other, width, 5, pitch, 0, 0, 32, 8, false);
        assert_eq!(got[..], want[..256], "{engine:?}");
    }
}

#[test]
fn an_im2col_box_walks_the_pixels_of_its_bounding_box() {
    let m = module();
    // NHWC f32: C 12, W 6, H 5, N 2, rows padded to 64 bytes; 8 channels a pixel.
    let (c_, w_, h_, n_) = (12i64, 6i64, 5i64, 2i64);
    let (sw, sh, sn) = (64i64, 6 * 64, 5 * 6 * 64);
    let data: Vec<f32> = (0..(sn * n_ / 4)).map(|i| i as f32 + 0.5).collect();
    // (lower, upper corners W first, pixels, coordinates c w h n, offsets, swizzle)
    type Case = ([i32; 2], [i32; 2], u32, [i64; 4], [u16; 2], u32);
    let cases: [Case; 5] = [
        // Padding 1, a 3x3 filter at its (1, 2) tap: bases W -1..=2, H -1..=1.
        ([-1, -1], [-2, -2], 20, [0, 2, -1, 0], [1, 2], 0),
        // No padding, from the last base: wraps into image 1, then past the batch.
        ([0, 0], [0, 0], 64, [4, 5, 4, 1], [0, 0], 0),
        // Channels 4.. run past C's 12.
        ([-2, 0], [1, 0], 32, [8, -2, 0, 0], [3, 1], 0),
        // 128B swizzle (a pixel is 32 bytes).
        ([-1, -1], [-1, -1], 32, [0, -1, -1, 0], [0, 0], 3),
        ([-1, -1], [-1, -1], 16, [2, 0, 3, 1], [2, 1], 2),
    ];
    for engine in ENGINES {
        for (lower, upper, pixels, coords, offs, swizzle) in cases {
            let mut mem = TestMemory::new();
            let dt = mem.map(&f32s(&data), false);
            let tm = TensorMap::im2col(&Im2colArgs {
                tiled: TiledArgs {
                    data_type: 7,
                    rank: 4,
                    address: dt,
                    dims: &[c_ as u64, w_ as u64, h_ as u64, n_ as u64],
                    global_strides: &[sw as u64, sh as u64, sn as u64],
                    box_dim: &[],
                    element_strides: &[1, 1, 1, 1],
                    interleave: 0,
                    swizzle,
                    l2_promotion: 0,
                    oob_fill: 0,
                },
                lower: &lower,
                upper: &upper,
                channels: 8,
                pixels,
            })
            .unwrap();
            let dm = mem.map(&tm.encode(), false);
            let dout = mem.map(&[0u8; 4096], true);
            let bytes = pixels as u64 * 8 * 4;
            let mut vals = vec![dm, dout];
            vals.extend(coords.iter().map(|&v| v as u32 as u64));
            vals.extend([offs[0] as u64, offs[1] as u64, bytes]);
            launch_with(&m, "load_im2col_4d", &mem, &vals, engine)
                .unwrap_or_else(|f| panic!("{f}"));
            let got = to_f32s(&mem.read(dout));
            // The model: bases walk W then H inside the box, then the next image.
            let mut want = vec![-1.0f32; 1024];
            let (mut w, mut h, mut n) = (coords[1], coords[2], coords[3]);
            let hi = |d: i64, u: i32| d - 1 + u as i64;
            for p in 0..pixels as i64 {
                for ch in 0..8i64 {
                    let (gc, gw, gh) = (coords[0] + ch, w + offs[0] as i64, h + offs[1] as i64);
                    let inside = (0..c_).contains(&gc)
                        && (0..w_).contains(&gw)
                        && (0..h_).contains(&gh)
                        && (0..n_).contains(&n);
                    let v = if inside {
                        data[((n * sn + gh * sh + gw * sw) / 4 + gc) as usize]
                    } else {
                        0.0
                    };
                    let mut at = ((p * 8 + ch) * 4) as usize;
                    let bits = [0, 1, 2, 3][swizzle as usize];
                    at ^= ((at >> 7) & ((1 << bits) - 1)) << 4;
                    want[at / 4] = v;
                }
                w += 1;
                if w > hi(w_, upper[0]) {
                    w = lower[0] as i64;
                    h += 1;
                    if h > hi(h_, upper[1]) {
                        h = lower[1] as i64;
                        n += 1;
                    }
                }
            }
            assert_eq!(
                got, want,
                "{engine:?} {lower:?} {upper:?} {coords:?} {offs:?}"
            );
        }
    }
}

#[test]
fn an_im2col_copy_needs_an_im2col_map() {
    let m = module();
    let mut mem = TestMemory::new();
    let dt = mem.map(&[0u8; 4096], false);
    let t = Tensor {
        dims: vec![8, 4, 4, 2],
        strides: vec![32, 128, 512],
        box_dim: vec![8, 4, 4, 1],
        element_strides: vec![1; 4],
        swizzle: 0,
    };
    let dm = mem.map(&map(&t, 7, dt).encode(), false);
    let dout = mem.map(&[0u8; 4096], true);
    for engine in ENGINES {
        let f = launch_with(
            &m,
            "load_im2col_4d",
            &mem,
            &[dm, dout, 0, 0, 0, 0, 0, 0, 512],
            engine,
        )
        .unwrap_err();
        assert_eq!(f.kind, FaultKind::IllegalInstruction, "{engine:?}: {f}");
        assert!(f.to_string().contains("im2col"), "{f}");
    }
}

#[test]
fn a_multicast_tensor_load_lands_in_every_block_of_its_mask() {
    let m = module();
    let k = m.kernel("multicast_2d").unwrap();
    let (width, height, pitch) = (40i64, 20i64, 160i64);
    let data: Vec<f32> = (0..(pitch / 4 * height)).map(|i| i as f32).collect();
    for engine in ENGINES {
        for mask in [0b1011u32, 0b0100, 0b1111] {
            let mut mem = TestMemory::new();
            let dt = mem.map(&f32s(&data), false);
            let t = Tensor {
                dims: vec![width as u64, height as u64],
                strides: vec![pitch as u64],
                box_dim: vec![32, 8],
                element_strides: vec![1, 1],
                swizzle: 3,
            };
            let dm = mem.map(&map(&t, 7, dt).encode(), false);
            let dout = mem.map(&[0u8; 4 * 1024], true);
            let (x, y) = (16i64, 15i64);
            let p = params(
                &m.kernels[k],
                &[dm, dout, x as u64, y as u64, u64::from(mask)],
            );
            let l = cumock_ptx::Launch {
                grid: [4, 1, 1],
                engine,
                cluster: Some([4, 1, 1]),
                ..launch(1, 64, &p)
            };
            run(&m, k, &l, &mem).unwrap_or_else(|f| panic!("{f}"));
            let got = to_f32s(&mem.read(dout));
            let boxed = model_2d(&data, width, height, pitch, x, y, 32, 8, true);
            for rank in 0..4usize {
                let want: &[f32] = if mask >> rank & 1 != 0 {
                    &boxed[..256]
                } else {
                    &[-1.0; 256]
                };
                assert_eq!(
                    &got[rank * 256..rank * 256 + 256],
                    want,
                    "{engine:?} mask {mask:#b} rank {rank}"
                );
            }
        }
    }
}

#[test]
fn a_multicast_im2col_load_lands_in_every_block_of_its_mask() {
    let m = module();
    let k = m.kernel("multicast_im2col").unwrap();
    // NWC f32: C 4, W 10, N 3; padding 1 on the left, a 3-wide filter at its tap 2: bases
    // W -1..=7; 64 pixels run past the batch.
    let (c_, w_, n_) = (4i64, 10i64, 3i64);
    let data: Vec<f32> = (0..c_ * w_ * n_).map(|i| i as f32 + 1.0).collect();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let dt = mem.map(&f32s(&data), false);
        let tm = TensorMap::im2col(&Im2colArgs {
            tiled: TiledArgs {
                data_type: 7,
                rank: 3,
                address: dt,
                dims: &[c_ as u64, w_ as u64, n_ as u64],
                global_strides: &[16, 160],
                box_dim: &[],
                element_strides: &[1, 1, 1],
                interleave: 0,
                swizzle: 0,
                l2_promotion: 0,
                oob_fill: 1,
            },
            lower: &[-1],
            upper: &[-2],
            channels: 4,
            pixels: 64,
        })
        .unwrap();
        let dm = mem.map(&tm.encode(), false);
        let dout = mem.map(&[0u8; 4 * 1024], true);
        let mask = 0b1101u64;
        let p = params(
            &m.kernels[k],
            &[dm, dout, 0, (-1i32) as u32 as u64, 0, 2, mask],
        );
        let l = cumock_ptx::Launch {
            grid: [4, 1, 1],
            engine,
            cluster: Some([4, 1, 1]),
            ..launch(1, 64, &p)
        };
        run(&m, k, &l, &mem).unwrap_or_else(|f| panic!("{f}"));
        let got = to_f32s(&mem.read(dout));
        let mut boxed = Vec::new();
        let (mut w, mut n) = (-1i64, 0i64);
        for _ in 0..64 {
            for ch in 0..4 {
                let gw = w + 2;
                boxed.push(if (0..w_).contains(&gw) && n < n_ {
                    data[(n * w_ * c_ + gw * c_ + ch) as usize]
                } else {
                    f32::from_bits(0x7ff7_7ff7)
                });
            }
            w += 1;
            if w > w_ - 1 - 2 {
                w = -1;
                n += 1;
            }
        }
        for rank in 0..4usize {
            let want: Vec<u32> = if mask >> rank & 1 != 0 {
                boxed.iter().map(|x| x.to_bits()).collect()
            } else {
                vec![(-1.0f32).to_bits(); 256]
            };
            let have: Vec<u32> = got[rank * 256..rank * 256 + 256]
                .iter()
                .map(|x| x.to_bits())
                .collect();
            assert_eq!(have, want, "{engine:?} rank {rank}");
        }
    }
}

/// `tensormap.replace` on shared bytes that hold no map (numba-cuda's own test does it
/// on a 4-byte array): a GPU sets the field's bits and leaves the rest, so the kernel
/// goes on; the mock writes only the field's bytes of its encoding, and a copy through
/// the bytes would still find no map.
#[test]
fn tensormap_replace_on_bytes_that_hold_no_map_changes_only_its_field() {
    let src = r#"
.version 9.0
.target sm_90a
.address_size 64
.visible .entry poke(.param .u64 out)
{
    .reg .b64 %rd<4>;
    .reg .b32 %r<6>;
    .reg .pred %p<2>;
    .shared .align 128 .b8 s[4];
    mov.u32 %r1, s;
    mov.u32 %r2, 0;
FILL:
    add.u32 %r3, %r1, %r2;
    st.shared.u8 [%r3], 0xAA;
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, 128;
    @%p1 bra FILL;
    tensormap.replace.tile.rank.shared::cta.b1024.b32 [%r1], 2;
    ld.param.u64 %rd1, [out];
    mov.u32 %r2, 0;
COPY:
    add.u32 %r3, %r1, %r2;
    ld.shared.u8 %r4, [%r3];
    cvt.u64.u32 %rd2, %r2;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u8 [%rd3], %r4;
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, 128;
    @%p1 bra COPY;
    ret;
}
"#;
    let m = Module::parse(src).unwrap_or_else(|e| panic!("{e}"));
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&[0u8; 128], true);
        let p = params(&m.kernels[0], &[out]);
        let mut l = launch(1, 1, &p);
        l.engine = engine;
        run(&m, 0, &l, &mem).unwrap_or_else(|f| panic!("{engine:?}: {f}"));
        let got = mem.read(out);
        // The bytes read as the mock's encoding, before and after the rank (2, stored
        // as the field's value plus one) is set: only where the two differ may a byte
        // change, never the map's mark (bytes 0-3).
        let before = TensorMap::fields_of_any(&[0xAA; 128]);
        let (old, new) = (before.encode(), TensorMap { rank: 3, ..before }.encode());
        for (i, b) in got.iter().enumerate() {
            let expect = if i >= 4 && new[i] != old[i] {
                new[i]
            } else {
                0xAA
            };
            assert_eq!(*b, expect, "{engine:?}: byte {i}");
        }
        assert!(TensorMap::decode(&got.clone().try_into().unwrap()).is_none());
        assert_ne!(got, vec![0xAA; 128], "{engine:?}: the field changed");
    }
}

/// Interleaved maps (NC/8HWC8 of u16 under 16B, of f32 under 32B): a box inside the
/// tensor, one run of rows along W, loads one slice a row, rows in order and swizzled as
/// a tiled box's, and stores back the same way; a box reaching past the tensor's edge,
/// whose row is not one slice, of more than one row of W or with W stepped by 2 ends the
/// kernel naming what is not emulated.
#[test]
fn interleaved_boxes_inside_the_tensor_copy_a_slice_a_row() {
    let m = module();
    // (data type, element bytes, dims C8 x W x H, box, element strides, interleave,
    // swizzle, corner).
    type Case = (u32, usize, [u64; 3], [u32; 3], [u32; 3], u32, u32, [i64; 3]);
    let cases: [Case; 3] = [
        (1, 2, [8, 12, 7], [8, 8, 1], [1, 1, 1], 1, 3, [0, 2, 3]),
        (1, 2, [8, 12, 7], [8, 8, 1], [1, 1, 1], 1, 0, [0, 4, 3]),
        (7, 4, [8, 10, 6], [8, 4, 1], [1, 1, 1], 2, 1, [0, 5, 4]),
    ];
    for engine in ENGINES {
        for (ty, es, dims, box_dim, estr, il, sw, at) in cases {
            let n = (dims[0] * dims[1] * dims[2]) as usize;
            let elem = |i: usize| -> u64 {
                if es == 4 {
                    0x0100_0000 + i as u64
                } else {
                    0x400 + i as u64
                }
            };
            let bytes: Vec<u8> = (0..n)
                .flat_map(|i| elem(i).to_le_bytes()[..es].to_vec())
                .collect();
            let mut mem = TestMemory::new();
            let dt = mem.map(&bytes, true);
            let tm = interleaved_map(ty, dt, &dims, &box_dim, &estr, il, sw);
            let dm = mem.map(&tm.encode(), false);
            let dout = mem.map(&[0u8; 4096], true);
            let counts = tm.box_counts();
            let total = (counts[0] * counts[1] * counts[2]) as usize;
            let mut vals = vec![dm, dout];
            vals.extend(at.iter().map(|&v| v as u32 as u64));
            vals.push((total * es) as u64);
            launch_with(&m, "load_3d", &mem, &vals, engine).unwrap_or_else(|f| panic!("{f}"));
            let got = mem.read(dout);
            let span = [0u32, 1, 2, 3][sw as usize];
            let mut k = 0usize;
            for z in 0..counts[2] as i64 {
                for y in 0..counts[1] as i64 {
                    for c in 0..counts[0] as i64 {
                        let g = [
                            at[0] + c,
                            at[1] + y * i64::from(estr[1]),
                            at[2] + z * i64::from(estr[2]),
                        ];
                        let lin = (g[0] + dims[0] as i64 * (g[1] + dims[1] as i64 * g[2])) as usize;
                        let mut off = k * es;
                        off ^= ((off >> 7) & ((1 << span) - 1)) << 4;
                        let want = &elem(lin).to_le_bytes()[..es];
                        assert_eq!(
                            &got[off..off + es],
                            want,
                            "{engine:?} interleave {il} element {k}"
                        );
                        k += 1;
                    }
                }
            }
            // Stored back at the same corner: the box's bytes land where they came from.
            launch_with(
                &m,
                "store_3d",
                &mem,
                &[dm, at[0] as u64, at[1] as u32 as u64, at[2] as u64],
                engine,
            )
            .unwrap_or_else(|f| panic!("{f}"));
            let after = mem.read(dt);
            let shared: Vec<u8> = (0..1024u32)
                .flat_map(|i| (5000 + i).to_le_bytes())
                .collect();
            let mut k = 0usize;
            for z in 0..counts[2] as i64 {
                for y in 0..counts[1] as i64 {
                    for c in 0..counts[0] as i64 {
                        let g = [
                            at[0] + c,
                            at[1] + y * i64::from(estr[1]),
                            at[2] + z * i64::from(estr[2]),
                        ];
                        let lin = (g[0] + dims[0] as i64 * (g[1] + dims[1] as i64 * g[2])) as usize;
                        let mut off = k * es;
                        off ^= ((off >> 7) & ((1 << span) - 1)) << 4;
                        assert_eq!(
                            &after[lin * es..lin * es + es],
                            &shared[off..off + es],
                            "{engine:?} store {il} element {k}"
                        );
                        k += 1;
                    }
                }
            }
        }
        // Past the edge (W from 10 of 12), and a 16B map's 32-byte row.
        let mut mem = TestMemory::new();
        let dt = mem.map(&[0u8; 8 * 12 * 7 * 2], true);
        let dout = mem.map(&[0u8; 4096], true);
        let tm = interleaved_map(1, dt, &[8, 12, 7], &[8, 4, 1], &[1, 1, 1], 1, 0);
        let dm = mem.map(&tm.encode(), false);
        let f = launch_with(&m, "load_3d", &mem, &[dm, dout, 0, 10, 0, 64], engine).unwrap_err();
        assert_eq!(f.kind, FaultKind::IllegalInstruction, "{f}");
        assert!(f.detail.contains("past the tensor's edge"), "{f}");
        let f = launch_with(&m, "store_3d", &mem, &[dm, 0, 10, 0], engine).unwrap_err();
        assert!(f.detail.contains("past the tensor's edge"), "{f}");
        let tm = interleaved_map(7, dt, &[8, 12, 7], &[8, 4, 1], &[1, 1, 1], 1, 0);
        let dm = mem.map(&tm.encode(), false);
        let f = launch_with(&m, "load_3d", &mem, &[dm, dout, 0, 0, 0, 128], engine).unwrap_err();
        assert!(f.detail.contains("not the interleave's 16"), "{f}");
        // Two H rows, or W stepped by 2: laid out otherwise on the H200
        // (tensor_interleave_inside), not emulated.
        let tm = interleaved_map(1, dt, &[8, 12, 7], &[8, 4, 2], &[1, 1, 1], 1, 0);
        let dm = mem.map(&tm.encode(), false);
        let f = launch_with(&m, "load_3d", &mem, &[dm, dout, 0, 0, 0, 128], engine).unwrap_err();
        assert!(f.detail.contains("more than one row of W"), "{f}");
        let tm = interleaved_map(1, dt, &[8, 12, 7], &[8, 8, 1], &[1, 2, 1], 1, 0);
        let dm = mem.map(&tm.encode(), false);
        let f = launch_with(&m, "load_3d", &mem, &[dm, dout, 0, 0, 0, 64], engine).unwrap_err();
        assert!(f.detail.contains("traversal stride of 2"), "{f}");
    }
}
