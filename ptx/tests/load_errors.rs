//! What the parser refuses, and how it says so: the line, the column, the kind, and the
//! instruction or name at fault.

use cumock_ptx::{LoadErrorKind, Module, StateSpace};

fn kernel(body: &str) -> String {
    format!(".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r<4>;\n.reg .pred %p<2>;\n{body}\nret;\n}}\n")
}

fn err(src: &str) -> cumock_ptx::LoadError {
    Module::parse(src).expect_err("should not load")
}

#[test]
fn an_unsupported_instruction_is_named_with_its_line() {
    let e = err(&kernel("mov.u32 %r1, 1;\nmax.relu.u32 %r1, %r2, %r3;"));
    assert_eq!((e.kind, e.line), (LoadErrorKind::Unsupported, 9));
    assert_eq!(
        e.to_string(),
        "line 9: unsupported instruction `max.relu.u32`"
    );
    let e = err(&kernel("max.relu.u32 %r1, %r2, %r3;"));
    assert_eq!((e.kind, e.line), (LoadErrorKind::Unsupported, 8));
    assert!(e.message.contains("max.relu.u32"), "{e}");
    let e = err(&kernel(
        "cp.async.bulk.tensor.3d.shared::cluster.global.im2col::w.mbarrier::complete_tx::bytes [%r1], [%r2, {%r3, %r3, %r3}], [%r1], {%r3, %r3};",
    ));
    assert_eq!(
        e.to_string(),
        "line 8: unsupported instruction `cp.async.bulk.tensor.3d.shared::cluster.global.im2col::w.mbarrier::complete_tx::bytes`: this tensor copy mode is not emulated"
    );
}

#[test]
fn undeclared_registers_and_unknown_labels_are_semantic_errors() {
    let e = err(&kernel("add.u32 %r1, %r9, 1;"));
    assert_eq!((e.kind, e.line), (LoadErrorKind::Semantic, 8));
    assert!(e.message.contains("%r9"), "{e}");
    let e = err(&kernel("bra NOWHERE;"));
    assert_eq!(e.kind, LoadErrorKind::Semantic);
    assert!(e.message.contains("NOWHERE"), "{e}");
    let e = err(&kernel("@%r1 bra $L;\n$L:"));
    assert!(e.message.contains("not a predicate"), "{e}");
}

#[test]
fn syntax_errors_give_line_and_column() {
    let e = err(&kernel("add.u32 %r1, %r2 %r3;"));
    assert_eq!((e.kind, e.line, e.column), (LoadErrorKind::Syntax, 8, 18));
    let e = err(".version 9.0\n.target sm_90\n.visible .entry k( {");
    assert_eq!(e.kind, LoadErrorKind::Syntax);
    assert!(err("").message.contains(".version"));
    assert_eq!(err("\u{0}\u{1}garbage").kind, LoadErrorKind::Syntax);
}

#[test]
fn a_newer_ptx_version_is_refused_as_a_driver_would() {
    let src = kernel("").replace(".version 9.0", ".version 9.5");
    let e = err(&src);
    assert_eq!(e.kind, LoadErrorKind::UnsupportedVersion);
    assert!(Module::parse_with_max_version(&src, (9, 5)).is_ok());
}

#[test]
fn device_library_calls_other_than_the_executors_are_unsupported() {
    // Recursion loads (`tests/calls.rs` runs it).
    let src = ".version 9.0\n.target sm_90\n.address_size 64\n.func f()\n{\ncall f, ();\nret;\n}\n";
    Module::parse(src).unwrap();
    // malloc is the executor's own with its signature; another bodiless function is not.
    let src = ".version 9.0\n.target sm_90\n.address_size 64\n.extern .func (.param .b64 r) malloc(.param .b64 a);\n.visible .entry k()\n{\n.param .b64 a;\n.param .b64 r;\ncall.uni (r), malloc, (a);\nret;\n}\n";
    assert!(Module::parse(src).unwrap().uses_device_heap());
    let e = err(&src.replace("malloc", "cudaMalloc"));
    assert_eq!((e.kind, e.line), (LoadErrorKind::Unsupported, 9));
    assert!(e.message.contains("cudaMalloc"), "{e}");
    let e = err(&src
        .replace("(.param .b64 a);", "(.param .b32 a);")
        .replace(".param .b64 a;", ".param .b32 a;"));
    assert_eq!((e.kind, e.line), (LoadErrorKind::Unsupported, 9));
    assert!(e.message.contains("malloc"), "{e}");
    // vprintf is the executor's own only with its signature.
    let src = ".version 9.0\n.target sm_90\n.address_size 64\n.extern .func (.param .b32 r) vprintf(.param .b32 a, .param .b64 b);\n.visible .entry k()\n{\n.param .b32 a;\n.param .b64 b;\n.param .b32 r;\ncall.uni (r), vprintf, (a, b);\nret;\n}\n";
    let e = err(src);
    assert_eq!((e.kind, e.line), (LoadErrorKind::Unsupported, 10));
    assert!(e.message.contains("vprintf"), "{e}");
}

#[test]
fn module_variables_kernels_and_attributes() {
    let src = r#".version 9.0
.target sm_90
.address_size 64
.global .align 4 .u32 counter = 7;
.const .align 8 .f64 coeffs[3] = {0d3FF0000000000000, 0d4000000000000000, 0d4008000000000000};
.global .align 1 .b8 bytes[5] = {1, 2, 3};
.visible .entry k(.param .u64 a, .param .align 16 .b8 s[24], .param .u32 n) .maxntid 128, 2, 1 .reqntid 64
{
    .reg .b32 %r<10>;
    .reg .b64 %rd<3>;
    .shared .align 8 .b8 tile[100];
    .local .align 4 .b8 depot[40];
    ld.global.u32 %r1, [counter+0];
    ld.const.f64 %rd1, [coeffs+8];
    ret;
}
"#;
    let m = Module::parse(src).unwrap();
    assert_eq!(m.version, (9, 0));
    assert_eq!(m.target, "sm_90");
    let g: Vec<_> = m
        .globals
        .iter()
        .map(|g| (g.name.as_str(), g.space, g.size, g.align))
        .collect();
    assert_eq!(
        g,
        [
            ("counter", StateSpace::Global, 4, 4),
            ("coeffs", StateSpace::Const, 24, 8),
            ("bytes", StateSpace::Global, 5, 1)
        ]
    );
    assert_eq!(m.globals[0].init, 7u32.to_le_bytes());
    assert_eq!(m.globals[1].init[8..16], 2.0f64.to_le_bytes());
    // Only the initialised prefix: the zeros after it cost nothing.
    assert_eq!(m.globals[2].init, [1, 2, 3]);
    let k = &m.kernels[m.kernel("k").unwrap()];
    let p: Vec<_> = k
        .params
        .iter()
        .map(|p| (p.offset, p.size, p.align))
        .collect();
    assert_eq!(p, [(0, 8, 8), (16, 24, 16), (40, 4, 4)]);
    assert_eq!(
        (k.static_shared_bytes, k.max_threads_per_block, k.reqntid),
        (100, Some(256), Some([64, 1, 1]))
    );
    assert!(k.local_bytes_per_thread >= 40);
    assert_eq!(k.registers, 13);
}

#[test]
fn cache_policy_modifiers_and_global_cache_hint_operands_are_accepted() {
    let ok = kernel(
        "ld.param.u64 %rd1, [p];\nld.global.nc.L1::no_allocate.L2::256B.u32 %r1, [%rd1];\n\
         ld.global.L2::cache_hint.u32 %r1, [%rd1], %rd1;",
    )
    .replace(".reg .b32 %r<4>;", ".reg .b32 %r<4>;\n.reg .b64 %rd<2>;");
    Module::parse(&ok).unwrap();
    // The ISA allows `.L2::cache_hint` on global memory only.
    let e = err(&kernel("ld.shared.L2::cache_hint.u32 %r1, [%r2], %r3;"));
    assert_eq!(e.kind, LoadErrorKind::Semantic, "{e}");
    assert!(e.message.contains("L2::cache_hint"), "{e}");
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let deep = "{".repeat(100_000);
    let e = err(&format!(
        ".version 9.0\n.target sm_90\n.address_size 64\n.global .u32 x[2] = {deep};"
    ));
    assert_eq!(e.kind, LoadErrorKind::Syntax);
    let e = err(&kernel(&format!("mov.b64 %r1, {deep};")));
    assert_eq!(e.kind, LoadErrorKind::Syntax);
    let e = err(&kernel(&"{".repeat(100_000)));
    assert_eq!(e.kind, LoadErrorKind::Syntax);
}

#[test]
fn tensor_core_forms_not_emulated_are_named_and_fragments_are_counted() {
    // Sparse FP8 mma with f16 accumulators (which ptxas 13 refuses for sm_90 too) is not
    // decoded: named, with the line and why.
    let e = err(&kernel(
        "mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f16.e4m3.e4m3.f16 {%r0,%r1}, {%r0,%r1,%r2,%r3}, {%r0,%r1,%r2,%r3}, {%r0,%r1}, %r0, 0;",
    ));
    assert_eq!(e.kind, LoadErrorKind::Unsupported);
    assert_eq!(
        e.to_string(),
        "line 8: `mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f16.e4m3.e4m3.f16`: no such sparse `mma` on sm_90"
    );
    // wmma's sub-byte A is row-major only.
    let e = err(&kernel(
        "wmma.load.a.sync.aligned.col.m8n8k32.global.s4 {%r0}, [p];",
    ));
    assert_eq!(e.kind, LoadErrorKind::Unsupported);
    assert!(
        e.message.contains("wmma.load.a.sync.aligned.col.m8n8k32"),
        "{e}"
    );
    // A fragment with the wrong number of registers is the program's error.
    let e = err(&kernel(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r0,%r1,%r2,%r3}, {%r0,%r1}, {%r0,%r1}, {%r0,%r1,%r2,%r3};",
    ));
    assert_eq!(e.kind, LoadErrorKind::Semantic);
    assert!(e.message.contains("A takes 4 registers, found 2"), "{e}");
    // mma's A is row-major and B column-major, nothing else.
    let e = err(&kernel(
        "mma.sync.aligned.m16n8k8.col.row.f32.f16.f16.f32 {%r0,%r1,%r2,%r3}, {%r0,%r1}, {%r0}, {%r0,%r1,%r2,%r3};",
    ));
    assert_eq!(e.kind, LoadErrorKind::Unsupported);
}

#[test]
fn a_label_defined_twice_in_one_block_is_refused() {
    let e = err(&kernel("{ W: add.u32 %r1, %r1, 1;\nW: bra W; }"));
    assert_eq!(e.kind, LoadErrorKind::Semantic);
    assert!(e.message.contains("label `W` defined twice"), "{e}");
}

/// Which kernels may signal the host through memory: strong accesses outside the
/// block's own memories, system-scope fences, indirect calls, in the kernel or anything
/// it calls. Weak accesses and shared memory's `volatile` (old reductions' warp step) do
/// not.
#[test]
fn kernels_that_may_signal_the_host_are_told_apart() {
    let src = r#"
.version 9.0
.target sm_90
.address_size 64
.func fence_sys()
{
    membar.sys;
    ret;
}
.func plain()
{
    ret;
}
.visible .entry weak(.param .u64 p)
{
    .reg .b64 %rd<3>;
    .reg .b32 %r<3>;
    ld.param.u64 %rd1, [p];
    ld.global.u32 %r1, [%rd1];
    st.global.u32 [%rd1+4], %r1;
    ld.volatile.shared.u32 %r2, [0];
    st.volatile.shared.u32 [4], %r2;
    membar.gl;
    call.uni plain, ();
    ret;
}
.visible .entry volatile_store(.param .u64 p)
{
    .reg .b64 %rd<2>;
    .reg .b32 %r<2>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, 1;
    st.volatile.u32 [%rd1], %r1;
    ret;
}
.visible .entry acquire_load(.param .u64 p)
{
    .reg .b64 %rd<2>;
    .reg .b32 %r<2>;
    ld.param.u64 %rd1, [p];
    ld.acquire.sys.global.u32 %r1, [%rd1];
    ret;
}
.visible .entry calls_fence()
{
    call.uni fence_sys, ();
    ret;
}
"#;
    let m = Module::parse(src).expect("loads");
    let signals = |name: &str| m.kernels[m.kernel(name).unwrap()].may_signal_host;
    assert!(!signals("weak"));
    assert!(signals("volatile_store"));
    assert!(signals("acquire_load"));
    assert!(signals("calls_fence"));
}

/// Which parameters a kernel may store through: followed through address arithmetic,
/// conversions and loaded pointers; a parameter only read from is not named.
#[test]
fn the_parameters_a_kernel_stores_through_are_found() {
    let src = r#"
.version 9.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out, .param .u64 table, .param .u32 n, .param .u64 counter)
{
    .reg .b64 %rd<12>;
    .reg .b32 %r<4>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    ld.param.u64 %rd3, [table];
    ld.param.u64 %rd10, [counter];
    ld.param.u32 %r3, [n];
    cvta.to.global.u64 %rd4, %rd1;
    cvta.to.global.u64 %rd5, %rd2;
    mul.wide.u32 %rd6, %r3, 4;
    add.s64 %rd7, %rd5, %rd6;
    ld.global.u32 %r1, [%rd4];
    st.global.u32 [%rd7], %r1;
    ld.global.u64 %rd8, [%rd3];
    st.global.u32 [%rd8+8], %r1;
    atom.global.add.u32 %r2, [%rd10], 1;
    ret;
}
"#;
    let m = Module::parse(src).expect("loads");
    let k = &m.kernels[m.kernel("k").unwrap()];
    // out (1) directly, table (2) through the pointer loaded from it, counter (4) by the
    // atomic, n (3) as an index in out's address; never in (0), only read from.
    assert_eq!(k.params_stored_through, [1, 2, 3, 4]);
}

/// `__managed__` variables carry `.attribute(.managed)`; other attributes are refused by
/// name.
#[test]
fn managed_variables_are_marked_and_other_attributes_refused() {
    let head = ".version 9.0\n.target sm_90\n.address_size 64\n";
    let m = Module::parse(&format!(
        "{head}.global .attribute(.managed) .align 4 .u32 x = 5;\n.global .u32 y;\n"
    ))
    .expect("loads");
    let g: Vec<_> = m
        .globals
        .iter()
        .map(|g| (g.name.as_str(), g.managed))
        .collect();
    assert_eq!(g, [("x", true), ("y", false)]);
    assert_eq!(m.globals[0].init, 5u32.to_le_bytes());
    let e = err(&format!(
        "{head}.global .attribute(.unified(1, 2)) .u32 z;\n"
    ));
    assert_eq!(e.kind, LoadErrorKind::Unsupported, "{e}");
    assert!(e.to_string().contains("attribute"), "{e}");
}
