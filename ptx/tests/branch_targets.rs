//! Indirect control flow through declared lists: `brx.idx` over a `.branchtargets` list
//! (each lane to its own label, an index past the list faulting) and indirect calls
//! naming a `.calltargets` list instead of a prototype; under both engines.

mod common;
use common::*;
use cumock_ptx::{run, Engine, FaultKind, Launch, Module};

const PTX: &str = r#"
.version 8.0
.target sm_90
.address_size 64

.func (.param .b32 r) twice(.param .b32 a)
{
    .reg .b32 %r<3>;
    ld.param.b32 %r1, [a];
    add.s32 %r2, %r1, %r1;
    st.param.b32 [r], %r2;
    ret;
}

.func (.param .b32 r) square(.param .b32 a)
{
    .reg .b32 %r<3>;
    ld.param.b32 %r1, [a];
    mul.lo.s32 %r2, %r1, %r1;
    st.param.b32 [r], %r2;
    ret;
}

// Lane t goes to label (t % 4) + bias of the list; each label's value plus t.
.visible .entry switch(.param .u64 out, .param .u32 bias)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    ts: .branchtargets L0, L1, L2, L3;
    mov.u32 %r1, %tid.x;
    ld.param.u32 %r7, [bias];
    rem.u32 %r2, %r1, 4;
    add.u32 %r2, %r2, %r7;
    brx.idx %r2, ts;
L0:
    mov.u32 %r3, 100;
    bra.uni JOIN;
L1:
    mov.u32 %r3, 200;
    bra.uni JOIN;
L2:
    mov.u32 %r3, 300;
    bra.uni JOIN;
L3:
    mov.u32 %r3, 400;
JOIN:
    add.u32 %r3, %r3, %r1;
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r3;
    ret;
}

// Even lanes call `twice`, odd lanes `square`, through a register and a .calltargets list.
.visible .entry calls(.param .u64 out)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<8>;
    .reg .pred %p<2>;
    ct: .calltargets twice, square;
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 1;
    setp.eq.u32 %p1, %r2, 0;
    mov.u64 %rd1, twice;
    mov.u64 %rd2, square;
    selp.b64 %rd3, %rd1, %rd2, %p1;
    {
        .param .b32 a0;
        .param .b32 r0;
        st.param.b32 [a0], %r1;
        call (r0), %rd3, (a0), ct;
        ld.param.b32 %r3, [r0];
    }
    ld.param.u64 %rd4, [out];
    mul.wide.u32 %rd5, %r1, 4;
    add.u64 %rd6, %rd4, %rd5;
    st.global.u32 [%rd6], %r3;
    ret;
}
"#;

const ENGINES: [Engine; 2] = [Engine::Interp, Engine::Jit];

#[test]
fn brx_idx_sends_each_lane_to_its_label_and_they_join() {
    let m = Module::parse(PTX).unwrap();
    let k = m.kernel("switch").unwrap();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&u32s(&[0; 64]), true);
        let p = params(&m.kernels[k], &[out, 0]);
        let l = Launch {
            engine,
            ..launch(1, 64, &p)
        };
        run(&m, k, &l, &mem).unwrap();
        let want: Vec<u32> = (0..64).map(|t| 100 * (t % 4 + 1) + t).collect();
        assert_eq!(to_u32s(&mem.read(out)), want, "{engine:?}");
    }
}

#[test]
fn an_index_past_the_branch_targets_faults() {
    let m = Module::parse(PTX).unwrap();
    let k = m.kernel("switch").unwrap();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&u32s(&[0; 64]), true);
        let p = params(&m.kernels[k], &[out, 2]);
        let l = Launch {
            engine,
            ..launch(1, 64, &p)
        };
        let f = run(&m, k, &l, &mem).unwrap_err();
        assert_eq!(f.kind, FaultKind::IllegalInstruction, "{f}");
        assert_eq!(f.thread, [2, 0, 0], "{f}");
        assert!(
            f.detail.contains("index 4, past the list's 4 targets"),
            "{f}"
        );
    }
}

#[test]
fn calls_through_a_calltargets_list_reach_each_lanes_function() {
    let m = Module::parse(PTX).unwrap();
    let k = m.kernel("calls").unwrap();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&u32s(&[0; 64]), true);
        let p = params(&m.kernels[k], &[out]);
        let l = Launch {
            engine,
            ..launch(1, 64, &p)
        };
        run(&m, k, &l, &mem).unwrap();
        let want: Vec<u32> = (0..64u32)
            .map(|t| if t % 2 == 0 { 2 * t } else { t * t })
            .collect();
        assert_eq!(to_u32s(&mem.read(out)), want, "{engine:?}");
    }
}

#[test]
fn lists_naming_what_is_not_there_are_refused_at_load() {
    let bad_label = PTX.replace(
        "ts: .branchtargets L0, L1, L2, L3;",
        "ts: .branchtargets L0, L9;",
    );
    let e = Module::parse(&bad_label).unwrap_err();
    assert!(e.message.contains("`ts` lists `L9`, not a label"), "{e:?}");
    let bad_func = PTX.replace(
        "ct: .calltargets twice, square;",
        "ct: .calltargets twice, cube;",
    );
    let e = Module::parse(&bad_func).unwrap_err();
    assert!(
        e.message.contains("`ct` lists `cube`, not a function"),
        "{e:?}"
    );
}
