//! The runtime programs of clients/runtime, compiled with nvcc (`-cudart shared`) and run
//! with cumock's runtime over the mock driver. Each program checks its own data (exit
//! status 1 when a check fails) and prints a transcript; where NVIDIA's runtime's
//! transcript of the same program on the H200 is recorded
//! (clients/runtime/goldens/<GPU>-<driver>/nvidia/), ours must equal it except for the
//! differences declared, each with its reason, in clients/runtime/goldens/differences.txt.
//! Programs that need kernels exit 77 (skipped, with the reason printed) while the driver
//! cannot load modules.

mod common;

use std::collections::HashMap;
use std::path::PathBuf;

const SKIPPED: i32 = 77;

/// The folders of NVIDIA's transcripts: `goldens/<GPU>-<driver>/` (or its `nvidia/`, as
/// ci/gpu-runtime.sh writes them).
fn goldens() -> Vec<PathBuf> {
    let dir = common::workspace().join("clients/runtime/goldens");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .map(|p| {
            if p.join("nvidia").is_dir() {
                p.join("nvidia")
            } else {
                p
            }
        })
        .collect();
    v.sort();
    v
}

/// Declared differences: program -> call texts (or `*`) whose steps may differ.
fn declared() -> HashMap<String, Vec<String>> {
    let path = common::workspace().join("clients/runtime/goldens/differences.txt");
    let mut m: HashMap<String, Vec<String>> = HashMap::new();
    for line in std::fs::read_to_string(path).unwrap_or_default().lines() {
        let line = line.split(" # ").next().unwrap_or("").trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (program, call) = line.split_once(' ').unwrap_or((line, "*"));
        m.entry(program.to_owned())
            .or_default()
            .push(call.trim().to_owned());
    }
    m
}

/// A transcript as steps: a call's line with the output lines under it.
fn steps(transcript: &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for line in transcript.lines() {
        match v.last_mut() {
            Some(last) if line.starts_with("    ") => {
                last.push('\n');
                last.push_str(line);
            }
            _ => v.push(line.to_owned()),
        }
    }
    v
}

fn call_of(step: &str) -> &str {
    step.lines()
        .next()
        .unwrap_or("")
        .split(" -> ")
        .next()
        .unwrap_or("")
}

/// The undeclared differences between NVIDIA's transcript and ours.
fn compare(program: &str, nvidia: &str, ours: &str) -> Vec<String> {
    compare_with(
        &declared().remove(program).unwrap_or_default(),
        nvidia,
        ours,
    )
}

/// The differences between two transcripts that `allowed` (declarations of one program)
/// does not cover.
fn compare_with(allowed: &[String], nvidia: &str, ours: &str) -> Vec<String> {
    if allowed.iter().any(|c| c == "*") {
        return Vec::new();
    }
    let (a, b) = (steps(nvidia), steps(ours));
    // A declaration `CALL #N` covers only the Nth step of that call in a transcript.
    let covered = |steps: &[String], i: usize| {
        let call = call_of(&steps[i]);
        let nth = steps[..=i].iter().filter(|s| call_of(s) == call).count();
        allowed
            .iter()
            .any(|c| c == call || *c == format!("{call} #{nth}"))
    };
    let mut out = Vec::new();
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &a, &b) {
        let (tag, old, new) = op.as_tag_tuple();
        if tag == similar::DiffTag::Equal {
            continue;
        }
        let sides = old
            .map(|i| ("nvidia", &a, i))
            .chain(new.map(|i| ("cumock", &b, i)));
        for (side, steps, i) in sides {
            if !covered(steps, i) {
                out.push(format!("{side}: {}", steps[i].replace('\n', "\n        ")));
            }
        }
    }
    out
}

fn run(program: &str, args: &[&str]) {
    run_exe(program, &common::nvcc(program), args);
}

fn run_exe(program: &str, exe: &std::path::Path, args: &[&str]) {
    check_run(program, common::on_mock(exe).args(args));
}

fn run_env(program: &str, exe: &std::path::Path, env: &[(&str, &str)]) {
    let mut c = common::on_mock(exe);
    c.envs(env.iter().copied());
    check_run(program, &mut c);
}

fn check_run(program: &str, command: &mut std::process::Command) {
    let o = command.output().expect("running the program");
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&o.stderr);
    if o.status.code() == Some(SKIPPED) {
        let why = stdout
            .lines()
            .find(|l| l.starts_with("SKIP"))
            .unwrap_or("SKIP: no reason printed");
        eprintln!("{program}: {why}");
        return;
    }
    assert!(
        o.status.success(),
        "{program} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        o.status
    );
    // Ours on the mock, as a reviewed snapshot: any change in what the runtime (or the mock
    // under it) answers shows up in review (`cargo insta review`).
    insta::with_settings!({ snapshot_path => "snapshots", prepend_module_to_snapshot => false, omit_expression => true }, {
        insta::assert_snapshot!(program, stdout);
    });
    let transcript_out = common::scratch("transcripts").join(format!("{program}.txt"));
    std::fs::write(&transcript_out, &stdout).unwrap();
    for dir in goldens() {
        let golden = dir.join(format!("{program}.txt"));
        let Ok(nvidia) = std::fs::read_to_string(&golden) else {
            continue;
        };
        if nvidia.lines().any(|l| l.starts_with("SKIP")) {
            continue;
        }
        let diffs = compare(program, &nvidia, &stdout);
        assert!(
            diffs.is_empty(),
            "{program}: {} undeclared differences from {} (ours in {}; declare them with reasons in clients/runtime/goldens/differences.txt, or fix them):\n{}",
            diffs.len(),
            golden.display(),
            transcript_out.display(),
            diffs.join("\n")
        );
    }
}

#[test]
fn device_query() {
    run("device_query", &[]);
}

/// `sured.p` over ten formats, in range and out (clients/runtime/sured_p.cu).
#[test]
fn sured_p() {
    run("sured_p", &[]);
}

#[test]
fn memory() {
    run("memory", &[]);
}

#[test]
fn host_memory() {
    run("host_memory", &[]);
}

#[test]
fn managed_hints() {
    run("managed_hints", &[]);
}

#[test]
fn func_name() {
    run("func_name", &[]);
}

#[test]
fn cache_configs() {
    run("cache_configs", &[]);
}

#[test]
fn streams_events() {
    run("streams_events", &[]);
}

#[test]
fn pool() {
    run("pool", &[]);
}

#[test]
fn ipc_between_two_processes() {
    run("ipc", &[]);
}

#[test]
fn kernel_launch() {
    run("kernel_launch", &[]);
}

#[test]
fn kernel_fault_is_sticky() {
    run("kernel_fault", &[]);
}

/// Races show on some runs only: ten of them (a freed address reused by another thread
/// before the runtime forgot it was found this way).
/// The leak report's program (tests/diagnostics.rs), here for its transcript.
#[test]
fn leaky() {
    run("leaky", &[]);
}

#[test]
fn entry_points() {
    run("entry_points", &[]);
}

/// Device printf (formats, several blocks in a fixed order) reaching stdout at
/// cudaDeviceSynchronize; a failed assert's message and cudaErrorAssert.
#[test]
fn device_printf() {
    run("device_printf", &[]);
}

/// Device-side malloc/free, calls through function pointers, recursion, and a
/// recursion past the stack limit (last: its fault is sticky).
#[test]
fn device_calls() {
    run("device_calls", &[]);
}

/// Dynamic parallelism (`-rdc=true -lcudadevrt`): recursive launches, tail launches,
/// stream order, fire-and-forget, device cudaMalloc, launch errors, a child's fault.
#[test]
fn dynamic_parallelism() {
    run("dynamic_parallelism", &[]);
}

/// Device graph launch (`-rdc=true -lcudadevrt`): a device graph launched by a graph's
/// kernel fire-and-forget, as a sibling and as a tail launch, from the host, a scheduler
/// relaunching itself; the refusals (each in a process of its own: one faults) and the
/// fire-and-forget limit. Recorded on the H200: identical.
#[test]
fn device_graphs() {
    run("device_graphs", &[]);
}

/// The device runtime's queries (limits, configurations, device count, version,
/// attributes, function attributes, occupancy) against the host's answers; 2D and 3D
/// copies and sets, device events and waits, from a kernel.
#[test]
fn device_runtime_calls() {
    run("device_runtime_calls", &[]);
}

#[test]
fn kernel_more() {
    run("kernel_more", &[]);
}

#[test]
fn host_functions() {
    run("host_functions", &[]);
}

// Programs in the style of NVIDIA's samples (asyncAPI, simpleStreams, simpleHyperQ,
// StreamPriorities, simpleCallback): device work runs apart from the host.

#[test]
fn async_api() {
    run("async_api", &[]);
}

#[test]
fn simple_streams() {
    run("simple_streams", &[]);
}

#[test]
fn simple_hyperq() {
    run("simple_hyperq", &[]);
}

#[test]
fn api_gaps() {
    run("api_gaps", &[]);
}

#[test]
fn batch_copies() {
    run("batch_copies", &[]);
}

#[test]
fn stream_priorities() {
    run("stream_priorities", &[]);
}

#[test]
fn simple_callback() {
    run("simple_callback", &[]);
}

// Programs in the style of NVIDIA's samples simpleCudaGraphs and jacobiCudaGraphs: work
// built into graphs (explicitly and by stream capture) and launched many times.

#[test]
fn simple_cuda_graphs() {
    run("simple_cuda_graphs", &[]);
}

#[test]
fn graph_memory_nodes() {
    run("graph_memory_nodes", &[]);
}

#[test]
fn graph_conditional_nodes() {
    run("graph_conditional_nodes", &[]);
}

/// cudaGraphAddNode, cudaGraphNodeSetParams and cudaGraphExecNodeSetParams for memset,
/// kernel, memcpy, host and child graph nodes (recorded on the H200).
#[test]
fn graph_add_node() {
    run("graph_add_node", &[]);
}

/// The exec setters of every node type, cudaGraphNodeSetEnabled and cudaGraphExecUpdate's
/// results (recorded on the H200).
#[test]
fn graph_exec_update() {
    run("graph_exec_update", &[]);
}

/// Graph copy nodes to and from symbols, cudaGraphMemcpyNodeGetParams and kernel-node
/// attributes (recorded on the H200).
#[test]
fn graph_node_params() {
    run("graph_node_params", &[]);
}

/// Stream attributes: defaults, round trips, a copy, refused ids (recorded on the H200;
/// NVIDIA's runtime crashes on a NULL value pointer: declared).
#[test]
fn stream_attributes() {
    run("stream_attributes", &[]);
}

#[test]
fn jacobi_graphs() {
    run("jacobi_graphs", &[]);
}

// In the style of NVIDIA's reductionMultiBlockCG: cooperative launches whose blocks meet at
// cooperative groups' grid syncs, and the occupancy limit of a cooperative grid.

#[test]
fn cg_grid_sync() {
    run("cg_grid_sync", &[]);
}

// In the style of the CUDA programming guide's thread block cluster examples: a kernel
// compiled for clusters, the distributed shared memory histogram, neighbours' shared
// memory between cluster syncs, a split cluster barrier, non-portable and misconfigured
// clusters (recorded on the H200).
#[test]
fn clusters() {
    run("clusters", &[]);
}

// A cooperative launch in thread-block clusters: grid syncs across clusters, cluster syncs
// and distributed shared memory inside each, the occupancy limit of such a grid
// (cudaOccupancyMaxActiveClusters), a __cluster_dims__ kernel launched cooperatively
// (recorded on the H200).
#[test]
fn cg_clusters() {
    run("cg_clusters", &[]);
}

/// CUB and Thrust from the toolkit's headers: device-wide radix sorts, scans, reductions
/// and selection (decoupled look-back across blocks), Thrust's sorts, scans, unique and
/// copy_if, and CUB's block-wide primitives in a kernel of ours, each checked on the host.
#[test]
fn cub_thrust() {
    run("cub_thrust", &[]);
}

/// A global object's destructor frees memory after main returns, after the runtime's own
/// exit handler: cudaErrorCudartUnloading (Thrust's global_device_vector example accepts
/// that or cudaSuccess; recorded on the H200).
#[test]
fn exit_teardown() {
    run("exit_teardown", &[]);
}

// In the style of NVIDIA's simpleTensorCoreGEMM and cudaTensorCoreGemm (and their bf16,
// tf32, dmma and imma siblings): wmma GEMMs checked against the host's.
#[test]
fn tensor_core_gemm() {
    run("tensor_core_gemm", &[]);
}

// A small Hopper GEMM, sample style: wgmma.mma_async from shared-memory tiles the threads
// write (128-byte swizzle, and none), descriptors built by hand, checked against the
// host's GEMM. Built for sm_90a (its first line). Recorded on the H200.
#[test]
fn wgmma_gemm() {
    run("wgmma_gemm", &[]);
}

/// What the PTX ISA leaves open about wgmma's swizzle: a pattern off its 1024-byte
/// boundary, and the descriptor's base offset. Recorded on the H200: the mock's transcript
/// is the golden's, every case (the swizzle on absolute address bits, less the base offset).
#[test]
fn wgmma_swizzle_probe() {
    run("wgmma_swizzle_probe", &[]);
}

/// `__managed__` variables: initialised in the module, shared by the host and kernels at
/// one address (`__cudaRegisterManagedVar`, `__cudaInitModule`).
#[test]
fn managed_variables() {
    run("managed_variables", &[]);
}

/// Where a block's shared memory ends for its own stores: in 128-byte units past what it
/// declared, as the H200 allocates it (recorded; the mock's transcript is the golden's).
#[test]
fn shared_bounds_probe() {
    run("shared_bounds_probe", &[]);
}

/// The swizzle phase for every start row and base offset in each mode (the mock: the
/// address's row bits less the base offset), against the H200's recorded answers.
#[test]
fn wgmma_swizzle_phase_probe() {
    run("wgmma_swizzle_phase_probe", &[]);
}

// In the style of NVIDIA's globalToShmemAsyncCopy and CUDA's asynchronous-copy APIs on
// sm_90: cuda::pipeline, cooperative groups' memcpy_async, cuda::barrier with bulk
// copies, a producer warp and consumer warps on mbarriers; each checked by the program.
// Recorded on the H200.
#[test]
fn async_copy() {
    run("async_copy", &[]);
}

#[test]
fn tensor_oob_fill() {
    run("tensor_oob_fill", &[]);
}

/// Im2col tensor maps and loads of every rank, each box checked by the program against
/// the PTX ISA's im2col mode; cuTensorMapEncodeIm2col's answers to broken arguments
/// (recorded on the H200).
#[test]
fn tensor_im2col() {
    run("tensor_im2col", &[]);
}

/// Interleaved tiled maps (16B and 32B slices) loaded past their edges, each box checked
/// by the program; the encoder's answers to other interleaved boxes (recorded on the
/// H200; what the mock does not emulate of it is declared).
#[test]
fn tensor_interleave() {
    run("tensor_interleave", &[]);
}

/// Interleaved tiled maps (16B and 32B slices) with boxes wholly inside the tensor,
/// loaded and stored back, each checked by the program; last a 32B box past the edge
/// dumped for the H200's record (the mock ends that kernel: not emulated).
#[test]
fn tensor_interleave_inside() {
    run("tensor_interleave_inside", &[]);
}

/// A cp.async from freed memory: cudaErrorIllegalAddress at the synchronisation, and the
/// mock's message names the kernel, the instruction and the freed address.
#[test]
fn async_copy_from_freed_memory_faults() {
    let exe = common::nvcc("async_copy");
    let o = common::on_mock(&exe).arg("fault").output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("cudaDeviceSynchronize() -> cudaErrorIllegalAddress"),
        "{stdout}"
    );
    let freed = stderr
        .lines()
        .find_map(|l| l.strip_prefix("freed "))
        .expect("the program prints the freed address");
    let msg = stderr
        .lines()
        .find(|l| l.contains("kernel fault"))
        .unwrap_or_else(|| panic!("no fault message:\n{stderr}"));
    for part in [
        "copy_in",
        "thread (0,0,0)",
        "cp.async.cg.shared.global",
        freed,
    ] {
        assert!(msg.contains(part), "`{part}` missing from: {msg}");
    }
}

#[test]
fn simple_texture() {
    run("simple_texture", &[]);
}

#[test]
fn texture_probe() {
    run("texture_probe", &[]);
}

#[test]
fn texture_offsets() {
    run("texture_offsets", &[]);
}

#[test]
fn surface_formatted() {
    run("surface_formatted", &[]);
}

#[test]
fn texture_depth_compare() {
    run("texture_depth_compare", &[]);
}

#[test]
fn cubemap_mipmap() {
    run("cubemap_mipmap", &[]);
}

#[test]
fn cubemap_seamless() {
    run("cubemap_seamless", &[]);
}

#[test]
fn texture_anisotropic() {
    run("texture_anisotropic", &[]);
}

#[test]
fn texture_forms() {
    run("texture_forms", &[]);
}

#[test]
fn texture_queries() {
    run("texture_queries", &[]);
}

/// Texture resource views: awaiting the H200's recording.
#[test]
fn texture_views() {
    run("texture_views", &[]);
}

#[test]
fn threads() {
    let exe = common::nvcc("threads");
    for _ in 0..10 {
        run_exe("threads", &exe, &[]);
    }
}

/// A program whose run path names NVIDIA's runtime (as PyTorch's libraries find the one
/// of the nvidia-cuda-runtime package) gets cumock's when it is preloaded: the loader
/// serves every request for the SONAME libcudart.so.13 with the library already loaded.
/// NVIDIA's runtime over the mock would fail its first call.
#[test]
fn preloading_wins_over_a_run_path() {
    let root = common::toolkit();
    let rpath = format!("-rpath={}", root.join("lib").display());
    let exe = common::nvcc_with("device_query", "device_query_rpath", &["-Xlinker", &rpath]);
    let lib = common::lib_dir();
    let preload = format!(
        "{}:{}",
        lib.join("libcudart.so.13").display(),
        lib.join("libcuda.so.1").display()
    );
    let o = std::process::Command::new(&exe)
        .env("LD_PRELOAD", preload)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.starts_with("cudaGetDeviceCount(&n) -> cudaSuccess\n    count=1"),
        "{out}"
    );
}

/// A program built with nvcc's default, `-cudart static`, carries NVIDIA's runtime, which
/// asks the driver for its private tables: on the mock it fails cleanly, with the mock's
/// message naming the cause and the fix, and never crashes.
#[test]
fn a_statically_linked_program_is_told_what_to_do() {
    let exe = common::nvcc_with(
        "device_query",
        "device_query_static",
        &["-cudart", "static"],
    );
    let o = common::on_mock(&exe).output().unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(
        o.status.code().is_some(),
        "killed by a signal: {:?}\n{err}",
        o.status
    );
    assert!(
        !out.starts_with("cudaGetDeviceCount(&n) -> cudaSuccess"),
        "{out}"
    );
    assert!(
        err.contains("-cudart shared") && err.contains("cumock exec"),
        "no advice in:\n{err}"
    );
    // The message names who asked: the program itself.
    assert!(
        err.contains("the program (") && err.contains("device_query_static"),
        "{err}"
    );
}

/// A library that embeds NVIDIA's static runtime (as warp, CuPy or PyTorch's kernels do)
/// is named in the message, which says it cannot run on the mock and what can.
#[test]
fn a_library_embedding_the_static_runtime_is_named() {
    let dir = common::scratch("embedded-runtime");
    let lib_src = dir.join("embedded.cu");
    std::fs::write(
        &lib_src,
        "#include <cuda_runtime.h>\n\
         extern \"C\" int embedded_count(void) { int n = -1; \
         return cudaGetDeviceCount(&n) == cudaSuccess ? n : -1; }\n",
    )
    .unwrap();
    let lib = dir.join("libembedded.so");
    let root = common::toolkit();
    let o = std::process::Command::new(root.join("bin/nvcc"))
        .args(["-shared", "-Xcompiler", "-fPIC", "-cudart", "static", "-L"])
        .arg(root.join("lib"))
        .arg(&lib_src)
        .arg("-o")
        .arg(&lib)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let main_src = dir.join("main.c");
    std::fs::write(
        &main_src,
        "#include <stdio.h>\nint embedded_count(void);\n\
         int main(void) { printf(\"count %d\\n\", embedded_count()); return 0; }\n",
    )
    .unwrap();
    let exe = dir.join("uses-embedded");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let o = std::process::Command::new(cc)
        .arg(&main_src)
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", dir.display()))
        .arg("-lembedded")
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = common::on_mock(&exe).output().unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("count -1"), "{out}");
    assert!(
        err.contains("libembedded.so") && err.contains("embeds NVIDIA's static CUDA runtime"),
        "{err}"
    );
}

/// Two devices of the mock (CUMOCK_DEVICES=2).
#[test]
fn peer_devices() {
    let exe = common::nvcc("peer");
    run_env("peer", &exe, &[("CUMOCK_DEVICES", "2")]);
}

/// The links between two devices of the mock (CUMOCK_DEVICES=2).
#[test]
fn p2p_attributes() {
    let exe = common::nvcc("p2p_attributes");
    run_env("p2p_attributes", &exe, &[("CUMOCK_DEVICES", "2")]);
}

/// A pool's peer access on two devices of the mock (NVIDIA's streamOrderedAllocationP2P
/// calls cudaMemPoolSetAccess, which the runtime refused as not implemented).
#[test]
fn pool_peer_access() {
    let exe = common::nvcc("pool_peer_access");
    run_env("pool_peer_access", &exe, &[("CUMOCK_DEVICES", "2")]);
}

/// The same programs built with `--default-stream per-thread` call the `_ptds`/`_ptsz`
/// exports; their transcripts are the plain programs' (same golden).
#[test]
fn per_thread_default_stream() {
    for program in [
        "streams_events",
        "memory",
        "pool",
        "async_api",
        "simple_streams",
        "simple_callback",
        "managed_hints",
    ] {
        let exe = common::nvcc_with(
            program,
            &format!("{program}_ptds"),
            &["--default-stream", "per-thread"],
        );
        run_exe(program, &exe, &[]);
    }
}

#[test]
fn a_declaration_can_name_one_occurrence_of_a_call() {
    let allowed = ["cudaGetLastError() #6".to_owned()];
    let nvidia = "cudaGetLastError() -> cudaSuccess\n".repeat(6);
    let mut ours = "cudaGetLastError() -> cudaSuccess\n".repeat(5);
    ours.push_str("cudaGetLastError() -> cudaErrorNotSupported\n");
    assert!(compare_with(&allowed, &nvidia, &ours).is_empty());
    let mut fifth = "cudaGetLastError() -> cudaSuccess\n".repeat(4);
    fifth.push_str(
        "cudaGetLastError() -> cudaErrorNotSupported\ncudaGetLastError() -> cudaSuccess\n",
    );
    assert_eq!(compare_with(&allowed, &nvidia, &fifth).len(), 2);
}

#[test]
fn comparison_finds_undeclared_differences_and_passes_declared_ones() {
    let nvidia =
        "cudaMalloc(&d, 1) -> cudaSuccess\n    d is 2MiB-aligned\ncudaFree(d) -> cudaSuccess\n";
    let ours =
        "cudaMalloc(&d, 1) -> cudaSuccess\n    d is 4KiB-aligned\ncudaFree(d) -> cudaSuccess\n";
    let d = compare("no-such-program", nvidia, ours);
    assert_eq!(d.len(), 2, "{d:?}");
    assert!(d[0].contains("2MiB") && d[1].contains("4KiB"));
    assert!(compare("no-such-program", nvidia, nvidia).is_empty());
}

#[test]
fn per_thread_arrays() {
    run("per_thread_arrays", &[]);
}

#[test]
fn library_kernels() {
    run("library_kernels", &[]);
}
