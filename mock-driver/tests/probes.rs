//! The probes (clients/probes/*.c) on the mock, compared section by section with their
//! transcripts recorded on the H200 (ci/gpu-probes.sh). A section that differs fails the
//! test unless `divergences.txt` beside the goldens declares it, with the reason.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

const GOLDENS: &str = "clients/probes/goldens/NVIDIA_H200-580.159.04";

/// A transcript cut at its `## section` lines; what comes before the first is "".
fn sections(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut name = String::new();
    let mut body = String::new();
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("## ") {
            out.insert(std::mem::take(&mut name), std::mem::take(&mut body));
            name = n.to_owned();
        } else {
            body.push_str(line);
            body.push('\n');
        }
    }
    out.insert(name, body);
    out
}

/// `probe section: reason` lines; `probe *: reason` declares the whole probe.
fn divergences() -> BTreeMap<(String, String), String> {
    let path = common::workspace().join(GOLDENS).join("divergences.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (key, reason) = l.split_once(": ").unwrap_or_else(|| {
                panic!("{}: `{l}` is not `probe section: reason`", path.display())
            });
            let (probe, section) = key.split_once(' ').unwrap_or((key, "*"));
            ((probe.to_owned(), section.to_owned()), reason.to_owned())
        })
        .collect()
}

/// The probe on the mock, with the mock's settings `env` (a profile, a device count).
fn run_probe_with(name: &str, args: &[String], env: &[(&str, String)]) -> String {
    let dir = common::scratch(&format!("probes-{}", std::process::id()));
    let exe = dir.join(name);
    let src = common::workspace()
        .join("clients/probes")
        .join(format!("{name}.c"));
    let lib = common::mock_dir();
    common::build_c(&src, &exe, &["-L", lib.to_str().unwrap(), "-lcuda", "-ldl"]);
    let out = std::process::Command::new(&exe)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("LD_LIBRARY_PATH", &lib)
        .output()
        .expect("running the probe");
    assert!(
        out.status.success(),
        "{name} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the probe prints text")
}

fn compare(name: &str, args: &[String]) {
    compare_with(name, args, &[])
}

fn compare_with(name: &str, args: &[String], env: &[(&str, String)]) {
    let golden_path: PathBuf = common::workspace()
        .join(GOLDENS)
        .join(format!("{name}.txt"));
    let golden = std::fs::read_to_string(&golden_path)
        .unwrap_or_else(|e| panic!("{}: {e}", golden_path.display()));
    let mock = run_probe_with(name, args, env);
    let declared = divergences();
    // The table has one line a name and flag: each is its own section.
    let split = |text: &str| {
        if name == "proc_address_table" {
            text.lines()
                .map(|l| {
                    (
                        l.split(':').next().unwrap_or("").to_owned(),
                        format!("{l}\n"),
                    )
                })
                .collect()
        } else {
            sections(text)
        }
    };
    let (want, got): (BTreeMap<String, String>, BTreeMap<String, String>) =
        (split(&golden), split(&mock));
    let mut failures = Vec::new();
    let mut declared_differences = 0;
    let mut stale = Vec::new();
    for (section, expected) in &want {
        let actual = got
            .get(section)
            .map(String::as_str)
            .unwrap_or("(section missing)\n");
        let whole = declared.contains_key(&(name.to_owned(), "*".to_owned()));
        let this = declared.contains_key(&(name.to_owned(), section.clone()));
        if actual == expected {
            // A declaration the mock no longer needs must go, so that the list stays true.
            if this {
                stale.push(section.clone());
            }
            continue;
        }
        if whole || this {
            declared_differences += 1;
            continue;
        }
        let diff: Vec<String> = expected
            .lines()
            .zip(actual.lines().chain(std::iter::repeat("(nothing)")))
            .filter(|(e, a)| e != a)
            .take(8)
            .map(|(e, a)| format!("    driver: {e}\n    mock:   {a}"))
            .collect();
        failures.push(format!("  ## {section}\n{}", diff.join("\n")));
    }
    eprintln!(
        "{name}: {} sections, {declared_differences} declared differences",
        want.len()
    );
    assert!(
        failures.is_empty(),
        "{name}: the mock differs from the H200 in undeclared sections:\n{}",
        failures.join("\n")
    );
    assert!(
        stale.is_empty(),
        "{name}: these sections are declared divergent but now match the H200; remove them \
         from divergences.txt: {stale:?}"
    );
}

#[test]
fn vmm_fidelity_matches_the_h200() {
    compare("vmm_fidelity", &[]);
}

#[test]
fn kernels_probe_matches_the_h200() {
    let dir = common::workspace().join("clients/probes/kernels");
    compare("kernels", &[dir.display().to_string()]);
}

#[test]
fn proc_address_table_matches_the_h200() {
    let exports = common::workspace().join("abi/gen/exports-580.159.04.txt");
    compare("proc_address_table", &[exports.display().to_string()]);
}

#[test]
fn streams_probe_matches_the_h200() {
    compare("streams", &[]);
}

#[test]
fn host_memory_probe_matches_the_h200() {
    compare("host_memory", &[]);
}

#[test]
fn pools_ipc_probe_matches_the_h200() {
    compare("pools_ipc", &[]);
}

/// Recorded on the host with two NVLink-connected H200s; run on the mock with that host's
/// profile (its peer-access matrix included).
#[test]
fn two_gpus_probe_matches_the_2_gpu_h200_host() {
    let profile = common::workspace().join("mock-driver/profiles/h200x2-580.159.04.json");
    compare_with(
        "two_gpus",
        &[],
        &[("CUMOCK_PROFILE", profile.display().to_string())],
    );
}

/// Issue 19's malformed and oversized images, recorded on the H200.
#[test]
fn sandbox_images_probe_matches_the_h200() {
    compare("sandbox_images", &[]);
}

/// Thread-block clusters: attributes, launch errors, occupancy, and a kernel's view of
/// its cluster. Awaits its recording on the H200 (ci/gpu-probes.sh): until then the
/// mock's answers are checked against what cuda.h and the programming guide state.
#[test]
fn clusters_probe_matches_the_h200() {
    let golden = common::workspace().join(GOLDENS).join("clusters.txt");
    if golden.exists() {
        return compare("clusters", &[]);
    }
    eprintln!("clusters: awaiting a recording on the H200 (ci/gpu-probes.sh OUTDIR)");
    let mock = sections(&run_probe_with("clusters", &[], &[]));
    let attrs = &mock["attributes"];
    for line in [
        "fixed CLUSTER_SIZE_MUST_BE_SET = CUDA_SUCCESS, 1",
        "fixed REQUIRED_CLUSTER_WIDTH = CUDA_SUCCESS, 2",
        "plain REQUIRED_CLUSTER_WIDTH = CUDA_SUCCESS, 0",
    ] {
        assert!(attrs.contains(line), "{line}:\n{attrs}");
    }
    // cuda.h: a compile-time cluster shape cannot be set at run time.
    let set = &mock["set-attributes"];
    assert!(
        set.contains("set fixed REQUIRED_CLUSTER_WIDTH 4 = CUDA_ERROR_NOT_PERMITTED"),
        "{set}"
    );
    assert!(
        set.contains("plain, no cluster attribute, 4 blocks:  = CUDA_SUCCESS"),
        "{set}"
    );
    let launches = &mock["launch-errors"];
    for (case, result) in [
        ("plain, 4 blocks in clusters of 2", "CUDA_SUCCESS"),
        (
            "plain, 3 blocks in clusters of 2",
            "CUDA_ERROR_INVALID_CLUSTER_SIZE",
        ),
        ("plain, 8 blocks in clusters of 8", "CUDA_SUCCESS"),
        (
            "plain, 16 blocks in clusters of 16",
            "CUDA_ERROR_INVALID_CLUSTER_SIZE",
        ),
        (
            "plain non-portable, 16 blocks in clusters of 16",
            "CUDA_SUCCESS",
        ),
        (
            "plain non-portable, 32 blocks in clusters of 32",
            "CUDA_ERROR_INVALID_CLUSTER_SIZE",
        ),
        ("fixed, cuLaunchKernel of 4 blocks", "CUDA_SUCCESS"),
        ("fixed, clusters of 4", "CUDA_ERROR_INVALID_CLUSTER_SIZE"),
        (
            "explicit_only, cuLaunchKernel",
            "CUDA_ERROR_INVALID_CLUSTER_SIZE",
        ),
        ("small, clusters of 8", "CUDA_ERROR_INVALID_CLUSTER_SIZE"),
    ] {
        assert!(
            launches.contains(&format!("{case}:  = {result}\n")),
            "{case}:\n{launches}"
        );
    }
    // Each block reads the next rank's array and is counted by every thread of the next.
    let dsmem = &mock["shared-memory"];
    for line in [
        "block 3: read 0, hits 128, rank 3 of 4, cluster_ctaid 3, clusterid 0 of 3, explicit 1",
        "block 14: read 7000, hits 128, rank 6 of 8, cluster_ctaid 6, clusterid 1 of 2, explicit 1",
        "block 1: read 0, hits 128, rank 0 of 1, cluster_ctaid 0, clusterid 1 of 2, explicit 0",
    ] {
        assert!(dsmem.contains(line), "{line}:\n{dsmem}");
    }
}

/// Tensor maps: cuTensorMapEncodeTiled and cuTensorMapReplaceAddress on valid maps and on
/// each requirement of cuda.h broken. Awaits its recording on the H200 (ci/gpu-probes.sh):
/// until then the mock's own answers are checked against cuda.h's requirements here.
#[test]
fn tensor_map_probe_matches_the_h200() {
    let golden = common::workspace().join(GOLDENS).join("tensor_map.txt");
    if golden.exists() {
        return compare("tensor_map", &[]);
    }
    eprintln!("tensor_map: awaiting a recording on the H200 (ci/gpu-probes.sh OUTDIR)");
    let mock = sections(&run_probe_with("tensor_map", &[], &[]));
    let valid = &mock["valid"];
    for case in [
        "2d float32, swizzle 128B",
        "rank 5",
        "element strides 8",
        "dimension of 2^32",
    ] {
        assert!(
            valid.contains(&format!("{case} = CUDA_SUCCESS\n  map written")),
            "{case}:\n{valid}"
        );
    }
    // What the mock does not emulate says so, and leaves the map alone.
    for case in ["NaN fill, float32", "swizzle 128B atom 32B"] {
        assert!(
            valid.contains(&format!(
                "{case} = CUDA_ERROR_NOT_SUPPORTED\n  map untouched"
            )),
            "{case}:\n{valid}"
        );
    }
    // Each requirement cuda.h states, broken: an invalid value, the map untouched.
    let invalid = &mock["invalid"];
    for case in [
        "NULL map",
        "map 32 bytes off 64",
        "rank 0",
        "rank 6",
        "data type 99",
        "address 8 bytes in",
        "dimension 0",
        "dimension 2^32+1",
        "stride 408",
        "stride 2^40",
        "box 0",
        "box 257",
        "inner box of 8 bytes",
        "inner box of 256 bytes under swizzle 128B",
        "inner box of 128 bytes under swizzle 64B",
        "element stride 0",
        "element stride 9",
        "interleave 16B, rank 2",
        "interleave 7",
        "swizzle 9",
        "L2 promotion 9",
        "NaN fill, int32",
        "fill 5",
    ] {
        assert!(
            invalid.contains(&format!("{case} = CUDA_ERROR_INVALID_VALUE\n")),
            "{case}:\n{invalid}"
        );
    }
    assert!(mock["without-context"].contains("no context = CUDA_SUCCESS"));
}

/// Issue 20's asynchronous device: what each synchronising call waits for, recorded on
/// the H200.
#[test]
fn async_device_probe_matches_the_h200() {
    compare("async_device", &[]);
}

/// Cooperative launches: the occupancy limit, the grid workspace, grid syncs.
#[test]
fn cooperative_probe_matches_the_h200() {
    compare("cooperative", &[]);
}

/// Issue 20's graph memory nodes: attributes, address reuse, capture and the errors,
/// recorded on the H200.
#[test]
fn graph_memory_probe_matches_the_h200() {
    compare("graph_memory", &[]);
}

/// Issue 20's conditional nodes: handles, node checks, IF/WHILE/SWITCH driven by PTX
/// kernels calling cudaGraphSetConditional, recorded on the H200.
#[test]
fn graph_conditional_probe_matches_the_h200() {
    compare("graph_conditional", &[]);
}

/// Module, library and kernel queries, context configuration and the small calls the
/// mock emulated late (clients/probes/api_gaps.c). Awaits its recording on the H200
/// (ci/gpu-probes.sh): compared once the golden exists; until then the mock must answer
/// every section, with the layout and settings tests/api_gaps.rs checks.
#[test]
fn api_gaps_probe_matches_the_h200_once_recorded() {
    let golden = common::workspace().join(GOLDENS).join("api_gaps.txt");
    if golden.exists() {
        return compare("api_gaps", &[]);
    }
    eprintln!("api_gaps: awaiting a recording on the H200 (ci/gpu-probes.sh OUTDIR)");
    let mock = sections(&run_probe_with("api_gaps", &[], &[]));
    for s in [
        "module-queries",
        "loading-state",
        "library-queries",
        "context-config",
        "small-ones",
        "stream-memops",
    ] {
        let text = mock.get(s).unwrap_or_else(|| panic!("section {s} missing"));
        assert!(
            !text.contains("setup failed") && !text.contains("crash") && !text.contains("exit "),
            "{s}:\n{text}"
        );
        assert!(
            !text.contains("= CUDA_ERROR_NOT_SUPPORTED")
                || s == "small-ones"
                || s == "stream-memops",
            "{s}: a call not emulated:\n{text}"
        );
    }
    for (s, line) in [
        ("module-queries", "offset 16 size 24"),
        ("library-queries", "same as cuLibraryGetGlobal: yes"),
        ("context-config", "flags 0x4, primary flags 0x4 active 1"),
        ("stream-memops", "result 8, 64-bit word 0x2 0x1"),
        ("stream-memops", "host word 11"),
    ] {
        assert!(mock[s].contains(line), "{s}: no `{line}`:\n{}", mock[s]);
    }
}

/// A context's events, batch memory-operation nodes and a pool shared with a re-exec'd
/// process (clients/probes/api_gaps2.c), recorded on the H200 (tests/api_gaps2.rs checks
/// the same calls in detail).
#[test]
fn api_gaps2_probe_matches_the_h200() {
    compare("api_gaps2", &[]);
}

/// CUDA 12.8 and 13.0's batched memory calls and the 3D peer copies
/// (clients/probes/batch_copies.c), recorded on the H200 (its section
/// batch-zero-and-order, added since, is not compared until recorded).
#[test]
fn batch_copies_probe_matches_the_h200() {
    compare("batch_copies", &[]);
}

/// Issue 20's exec setters and cuGraphExecUpdate: what each setter accepts and refuses
/// for every node type, and the update results. Awaits its recording on the H200
/// (ci/gpu-probes.sh): compared once the golden exists; until then the mock must answer
/// every section, and its launches must leave what the setters asked for.
#[test]
fn graph_exec_update_probe_matches_the_h200_once_recorded() {
    let golden = common::workspace()
        .join(GOLDENS)
        .join("graph_exec_update.txt");
    if golden.exists() {
        return compare("graph_exec_update", &[]);
    }
    let mock = sections(&run_probe_with("graph_exec_update", &[], &[]));
    for s in [
        "kernel-setters",
        "memcpy-setters",
        "memset-setters",
        "host-and-event-setters",
        "child-setters",
        "enable",
        "generic-setters",
        "update",
        "update-children",
        "upload-find-destroy",
        "node-params",
        "child-graph-handle",
    ] {
        let text = mock.get(s).unwrap_or_else(|| panic!("section {s} missing"));
        assert!(
            !text.contains("setup failed") && !text.contains("crash"),
            "{s}:\n{text}"
        );
    }
    // The launches ran what the setters set (the data each leaves), and each refusal
    // left the node as it was.
    for (s, line) in [
        ("kernel-setters", "first word 0, second 10"),
        ("memcpy-setters", "copied 99"),
        ("memset-setters", "2D filled 5"),
        (
            "host-and-event-setters",
            "host calls: first data 0, second 1",
        ),
        ("child-setters", "first word 4, second 40"),
        ("child-setters", "second word 40"),
        (
            "enable",
            "kernel's word 0, memset's 0, copy's 0, host calls 1",
        ),
        ("enable", "kernel's word 1, memset's 0"),
        ("enable", "kernel's word 6"),
        ("update", "word 11, host calls: first data 0, second 1"),
        ("update-children", "word 40"),
        ("upload-find-destroy", "word 2"),
        ("upload-find-destroy", "clone: 2 nodes, 0 edges"),
        ("upload-find-destroy", "word 4"),
        (
            "node-params",
            "dst same, value 0x5a, element 2, 8x3, pitch 64",
        ),
        (
            "node-params",
            "src same type 2, dst same type 2, width 12, height 1, depth 1",
        ),
        (
            "child-graph-handle",
            "the same handle: yes; the graph added: no",
        ),
        (
            "child-graph-handle",
            "word 11 (1 + 10 if the node took the new kernel)",
        ),
        ("child-graph-handle", "word 22"),
        ("child-graph-handle", "word 33"),
    ] {
        assert!(mock[s].contains(line), "{s}: no '{line}' in\n{}", mock[s]);
    }
}

/// The limit of a cooperative launch in clusters (probe clusters, section
/// cooperative-occupancy): once recorded on the H200 (ci/gpu-probes.sh), the section is
/// compared with the rest of the probe; until then the mock's model is checked: as many
/// clusters as cuOccupancyMaxActiveClusters answers launch, one more is too large, and so
/// is the blocks-per-SM limit of a cooperative launch without clusters where that is more.
#[test]
fn cooperative_launches_in_clusters_fit_what_max_active_clusters_says() {
    let golden = common::workspace().join(GOLDENS).join("clusters.txt");
    let recorded = std::fs::read_to_string(&golden).unwrap_or_default();
    if sections(&recorded).contains_key("cooperative-occupancy") {
        return; // clusters_probe_matches_the_h200 compares it
    }
    eprintln!("clusters cooperative-occupancy: awaiting a recording on the H200 (ci/gpu-probes.sh OUTDIR)");
    let mock = sections(&run_probe_with("clusters", &[], &[]));
    let s = &mock["cooperative-occupancy"];
    for line in [
        "256 threads, clusters of 4: cuOccupancyMaxActiveClusters = CUDA_SUCCESS, 248\n\
         \x20 cooperative, 248 clusters:  = CUDA_SUCCESS\n\
         \x20 cooperative, 249 clusters:  = CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE\n\
         \x20 cooperative, 264 clusters (8 blocks an SM):  = CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE\n",
        "1024 threads, clusters of 8: cuOccupancyMaxActiveClusters = CUDA_SUCCESS, 30\n\
         \x20 cooperative, 30 clusters:  = CUDA_SUCCESS\n\
         \x20 cooperative, 31 clusters:  = CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE\n",
    ] {
        assert!(s.contains(line), "{line}:\n{s}");
    }
    assert_eq!(
        s.matches("cuCtxSynchronize = CUDA_SUCCESS").count(),
        9,
        "{s}"
    );
}

/// Kernel-node attributes (probe graph_exec_update, section kernel-attributes, awaiting
/// its recording on the H200): until then, what the mock keeps is checked here: a value
/// set is read back, a cluster shape set on a node is the shape its kernel runs with, and
/// new parameters (on the node, on the executable graph) leave the attributes.
#[test]
fn kernel_node_attributes_are_kept_and_a_cluster_shape_is_honoured() {
    let mock = sections(&run_probe_with("graph_exec_update", &[], &[]));
    let s = &mock["kernel-attributes"];
    for line in [
        "set cluster 2x1x1 = CUDA_SUCCESS\nafter it: get 4 = CUDA_SUCCESS, words 2 1 1 0\n",
        "instantiated: launch and synchronize = CUDA_SUCCESS\n  cluster sizes seen by blocks 0 and 3: 2 2\n",
        "after it: launch and synchronize = CUDA_SUCCESS\n  cluster sizes seen by blocks 0 and 3: 2 2\n",
        "cuGraphKernelNodeSetParams, same kernel = CUDA_SUCCESS\nafter it: get 4 = CUDA_SUCCESS, words 2 1 1 0\n",
        "base is da: yes, bytes 4096, hit ratio 0.50, hit 2, miss 1\n",
        "second node: get 4 = CUDA_SUCCESS, words 2 1 1 0\n",
        "second node: get 8 = CUDA_SUCCESS, words 4294967295 0 0 0\n",
        "set on the empty node = CUDA_ERROR_INVALID_VALUE\n",
    ] {
        assert!(s.contains(line), "{line}:\n{s}");
    }
}

/// Capture modes (probe graph_exec_update, section capture-modes, awaiting its recording
/// on the H200): until then, the rules cuda.h and the programming guide state are checked
/// on the mock: an unsafe call is refused on the capturing thread unless the mode is
/// relaxed, on other threads only in global mode; synchronising or querying a capturing
/// stream, or using the legacy stream while a blocking stream captures, fails and
/// invalidates the capture.
#[test]
fn capture_modes_refuse_what_cuda_h_says() {
    let mock = sections(&run_probe_with("graph_exec_update", &[], &[]));
    let s = &mock["capture-modes"];
    for line in [
        "mode global\n  begin capture = CUDA_SUCCESS\n  this thread's cuMemAlloc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED\n  another thread's cuMemAlloc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED\n",
        "mode thread-local\n  begin capture = CUDA_SUCCESS\n  this thread's cuMemAlloc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED\n  another thread's cuMemAlloc = CUDA_SUCCESS\n",
        "mode relaxed\n  begin capture = CUDA_SUCCESS\n  this thread's cuMemAlloc = CUDA_SUCCESS\n  another thread's cuMemAlloc = CUDA_SUCCESS\n",
        "relaxed: end capture = CUDA_SUCCESS, graph set\n",
        "  cuStreamSynchronize = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED\n",
        "after the synchronize: end capture = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, graph NULL\n",
        "  cuMemsetD8Async on the legacy stream = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT\nafter it: end capture = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, graph NULL\n",
    ] {
        assert!(s.contains(line), "{line}:\n{s}");
    }
}

/// What cuda-python's own test suites found (clients/probes/cuda_python.c), recorded on
/// the H200 (2026-12-03) and matched (tests/cuda_python.rs checks the same calls in detail).
#[test]
fn cuda_python_probe_matches_the_h200() {
    compare("cuda_python", &[]);
}
