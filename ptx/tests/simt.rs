//! Hand-written PTX for the block and warp semantics nvcc seldom emits on its own:
//! named barriers with counts (producer/consumer with bar.arrive), nested divergence
//! with reconvergence before a shuffle, bar.red with a predicate.

mod common;
use common::*;
use cumock_ptx::{run, Module};

const HEADER: &str = ".version 9.0\n.target sm_90\n.address_size 64\n";

fn run_one(body: &str, threads: u32, out_words: usize) -> Vec<u32> {
    let src = format!("{HEADER}.visible .entry k(.param .u64 out)\n{{\n{body}\n}}\n");
    let m = Module::parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut mem = TestMemory::new();
    let out = mem.map(&vec![0u8; out_words * 4], true);
    let p = params(&m.kernels[0], &[out]);
    run(&m, 0, &launch(1, threads, &p), &mem).unwrap();
    to_u32s(&mem.read(out))
}

#[test]
fn producer_warp_arrives_consumer_warp_waits() {
    // Warp 1 writes shared memory then `bar.arrive 1, 64`; warp 0 `bar.sync 1, 64` then
    // reads what warp 1 wrote. Warp 0 runs first: it must wait for the producer.
    let body = r#"
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .reg .pred %p<2>;
    .shared .align 4 .b8 buf[128];
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    setp.ge.u32 %p1, %r1, 32;
    @%p1 bra PRODUCE;
    bar.sync 1, 64;
    mov.u32 %r2, %r1;
    shl.b32 %r3, %r2, 2;
    mov.u32 %r4, buf;
    add.u32 %r4, %r4, %r3;
    ld.shared.u32 %r5, [%r4];
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r5;
    ret;
PRODUCE:
    sub.u32 %r1, %r1, 32;
    shl.b32 %r3, %r1, 2;
    mov.u32 %r4, buf;
    add.u32 %r4, %r4, %r3;
    mul.lo.u32 %r5, %r1, 7;
    add.u32 %r5, %r5, 1000;
    st.shared.u32 [%r4], %r5;
    bar.arrive 1, 64;
    ret;
"#;
    let got = run_one(body, 64, 32);
    assert_eq!(got, (0..32).map(|t| t * 7 + 1000).collect::<Vec<u32>>());
}

#[test]
fn nested_divergence_reconverges_before_the_shuffle() {
    // lane%2 / lane%3 nested branches give each lane a value; a full-warp shfl.bfly
    // afterwards must see all 32 lanes' values.
    let body = r#"
    .reg .b32 %r<10>;
    .reg .b64 %rd<4>;
    .reg .pred %p<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %laneid;
    and.b32 %r2, %r1, 1;
    setp.eq.u32 %p1, %r2, 0;
    @%p1 bra EVEN;
    rem.u32 %r3, %r1, 3;
    setp.eq.u32 %p2, %r3, 0;
    @%p2 bra ODD3;
    add.u32 %r4, %r1, 100;
    bra.uni JOIN;
ODD3:
    add.u32 %r4, %r1, 200;
    bra.uni JOIN;
EVEN:
    add.u32 %r4, %r1, 300;
JOIN:
    shfl.sync.bfly.b32 %r5, %r4, 1, 31, -1;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r5;
    ret;
"#;
    let value = |l: u32| {
        if l % 2 == 0 {
            l + 300
        } else if l % 3 == 0 {
            l + 200
        } else {
            l + 100
        }
    };
    let got = run_one(body, 32, 32);
    assert_eq!(got, (0..32).map(|l| value(l ^ 1)).collect::<Vec<u32>>());
}

#[test]
fn bar_red_counts_and_ands_over_the_block() {
    let body = r#"
    .reg .b32 %r<10>;
    .reg .b64 %rd<4>;
    .reg .pred %p<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 3;
    setp.eq.u32 %p1, %r2, 0;
    bar.red.popc.u32 %r3, 0, %p1;
    setp.lt.u32 %p2, %r1, 1000;
    bar.red.and.pred %p3, 2, %p2;
    selp.u32 %r4, 1, 0, %p3;
    mad.lo.u32 %r5, %r3, 10, %r4;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r5;
    ret;
"#;
    // 96 threads: 24 have tid%4 == 0; all are below 1000.
    let got = run_one(body, 96, 96);
    assert_eq!(got, vec![241; 96]);
}

/// A loop whose join block lies before its head, as nvcc lays out cdpQuadtree's
/// point-moving loop: the lanes that skip the store branch back to the join (a lower
/// pc) and reach `shfl.sync` before the lanes that store. The shuffle's member mask
/// names the whole warp, so it waits for them: every lane reads lane 0's count of this
/// iteration (4, 6, 8 and 10 even lanes below 8 + 4i; 28 in all). Running the shuffle
/// with only the lanes that came first read lane 0's register from the iteration before.
#[test]
fn a_shuffle_waits_for_its_member_mask() {
    let body = r#"
    .reg .b32 %r<12>;
    .reg .b64 %rd<4>;
    .reg .pred %p<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
    mov.u32 %r10, 0;
    mov.u32 %r5, 1000;
    bra.uni HEAD;
JOIN:
    popc.b32 %r5, %r4;
    shfl.sync.idx.b32 %r6, %r5, 0, 31, -1;
    add.u32 %r10, %r10, %r6;
    add.u32 %r2, %r2, 1;
HEAD:
    setp.lt.u32 %p1, %r2, 4;
    @!%p1 bra DONE;
    and.b32 %r3, %r1, 1;
    shl.b32 %r7, %r2, 2;
    add.u32 %r7, %r7, 8;
    setp.lt.u32 %p3, %r1, %r7;
    setp.eq.and.u32 %p2, %r3, 0, %p3;
    vote.sync.ballot.b32 %r4, %p2, -1;
    @!%p2 bra JOIN;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3+128], %r2;
    bra.uni JOIN;
DONE:
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r10;
    ret;
"#;
    let got = run_one(body, 32, 64);
    assert_eq!(
        &got[..32],
        &[28; 32][..],
        "each lane's sum of lane 0's counts"
    );
}
