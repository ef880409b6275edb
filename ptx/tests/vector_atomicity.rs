//! A vector load or store of 16 bytes or less is one access, as on a GPU, whose memory
//! moves an aligned vector in one transaction. CUB's decoupled look-back (every
//! `DeviceScan`, `DeviceSelect`, radix sort's onesweep) stores a tile's status and value
//! with one `st.relaxed.gpu.v2.u32` and polls them with one `ld.relaxed.gpu.v2.u32` from
//! other blocks; split into elements, a reader on another host thread saw a new status
//! beside an old value and added a tile twice (cub_thrust's ExclusiveSum, about 1 run
//! in 100 with 8 host threads). Here one block stores vectors whose elements are all
//! equal while another reads them: a read whose elements differ is a torn vector.

mod common;
use common::*;
use cumock_ptx::{run, Engine, Launch, Module};

const SRC: &str = r#"
template <int N> __device__ void store(void *p, unsigned v);
template <> __device__ void store<2>(void *p, unsigned v) {
    asm volatile("st.relaxed.gpu.global.v2.u32 [%0], {%1, %1};" :: "l"(p), "r"(v) : "memory");
}
template <> __device__ void store<4>(void *p, unsigned v) {
    asm volatile("st.relaxed.gpu.global.v4.u32 [%0], {%1, %1, %1, %1};" :: "l"(p), "r"(v) : "memory");
}
template <int N> __device__ bool torn(void *p);
template <> __device__ bool torn<2>(void *p) {
    unsigned a, b;
    asm volatile("ld.relaxed.gpu.global.v2.u32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "l"(p) : "memory");
    return a != b;
}
template <> __device__ bool torn<4>(void *p) {
    unsigned a, b, c, d;
    asm volatile("ld.relaxed.gpu.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p) : "memory");
    return a != b || a != c || a != d;
}
__device__ void store64x2(void *p, unsigned long long v) {
    asm volatile("st.volatile.global.v2.u64 [%0], {%1, %1};" :: "l"(p), "l"(v) : "memory");
}
__device__ bool torn64x2(void *p) {
    unsigned long long a, b;
    asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
    return a != b;
}

// Block 0 writes, block 1 reads, each `n` times; `*count` gets the torn reads.
template <int N> __device__ void race(void *p, unsigned *count, unsigned n) {
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        for (unsigned i = 1; i <= n; i++) store<N>(p, i);
    } else {
        unsigned seen = 0;
        for (unsigned i = 0; i < n; i++) seen += torn<N>(p);
        *count = seen;
    }
}
extern "C" __global__ void race_v2_u32(void *p, unsigned *count, unsigned n) { race<2>(p, count, n); }
extern "C" __global__ void race_v4_u32(void *p, unsigned *count, unsigned n) { race<4>(p, count, n); }
extern "C" __global__ void race_v2_u64(void *p, unsigned *count, unsigned n) {
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        for (unsigned i = 1; i <= n; i++) store64x2(p, 0x100000001ull * i);
    } else {
        unsigned seen = 0;
        for (unsigned i = 0; i < n; i++) seen += torn64x2(p);
        *count = seen;
    }
}
"#;

fn torn_reads(kernel: &str, engine: Engine) -> u32 {
    let m = Module::parse(&ptx(SRC)).unwrap();
    let k = m.kernel(kernel).unwrap();
    let mut mem = TestMemory::new();
    let vector = mem.map(&[0u8; 16], true);
    let count = mem.map(&[0u8; 4], true);
    // Enough rounds for the two host threads to overlap for a long while in either engine.
    let rounds = 400_000u64;
    let p = params(&m.kernels[k], &[vector, count, rounds]);
    let l = Launch {
        host_threads: 2,
        step_limit: None,
        engine,
        ..launch(2, 32, &p)
    };
    run(&m, k, &l, &mem).unwrap();
    u32::from_le_bytes(mem.read(count)[..4].try_into().unwrap())
}

#[test]
fn vectors_of_eight_and_sixteen_bytes_are_never_seen_half_written() {
    for engine in [Engine::Interp, Engine::Jit] {
        for kernel in ["race_v2_u32", "race_v4_u32", "race_v2_u64"] {
            assert_eq!(torn_reads(kernel, engine), 0, "{kernel} on {engine:?}");
        }
    }
}
