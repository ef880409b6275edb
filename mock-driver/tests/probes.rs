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
    // Sections the probe asks that its golden lacks (added since the recording): said,
    // so that what awaits a recording is never silently taken as compared.
    let awaiting: Vec<&String> = got.keys().filter(|s| !want.contains_key(*s)).collect();
    eprintln!(
        "{name}: {} sections, {declared_differences} declared differences{}",
        want.len(),
        if awaiting.is_empty() {
            String::new()
        } else {
            format!(
                "; awaiting a recording on the H200 (ci/gpu-all.sh PARTS=probes PROBES={name}): {awaiting:?}"
            )
        }
    );
    // Nothing to compare them with yet, but the mock must answer each to its end: a
    // section it crashes in or leaves early would be recorded with nothing to fit.
    let unfinished: Vec<String> = awaiting
        .iter()
        .filter_map(|s| {
            let body = &got[*s];
            ["crash:", "setup failed", "  exit "]
                .iter()
                .find(|bad| body.contains(*bad))
                .map(|bad| format!("{s}: `{bad}`"))
        })
        .collect();
    assert!(
        unfinished.is_empty(),
        "{name}: sections awaiting a recording that the mock does not run to their end: {unfinished:?}"
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
/// its cluster. Recorded on the H200 and compared.
#[test]
fn clusters_probe_matches_the_h200() {
    compare("clusters", &[]);
}

/// Tensor maps: cuTensorMapEncodeTiled and cuTensorMapReplaceAddress on valid maps and on
/// each requirement of cuda.h broken, and interleaved maps. Recorded on the H200 and
/// compared.
#[test]
fn tensor_map_probe_matches_the_h200() {
    compare("tensor_map", &[]);
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
/// mock emulated late (clients/probes/api_gaps.c). Recorded on the H200 and compared.
#[test]
fn api_gaps_probe_matches_the_h200() {
    compare("api_gaps", &[]);
}

/// A context's events, batch memory-operation nodes and a pool shared with a re-exec'd
/// process (clients/probes/api_gaps2.c), recorded on the H200 (tests/api_gaps2.rs checks
/// the same calls in detail).
#[test]
fn api_gaps2_probe_matches_the_h200() {
    compare("api_gaps2", &[]);
}

/// CUDA 12.8 and 13.0's batched memory calls and the 3D peer copies
/// (clients/probes/batch_copies.c), recorded on the H200 and compared.
#[test]
fn batch_copies_probe_matches_the_h200() {
    compare("batch_copies", &[]);
}

/// Issue 20's exec setters and cuGraphExecUpdate: what each setter accepts and refuses
/// for every node type, and the update results. Recorded on the H200 and compared.
#[test]
fn graph_exec_update_probe_matches_the_h200() {
    compare("graph_exec_update", &[]);
}

/// Kernel-node attributes (probe graph_exec_update, section kernel-attributes): what the
/// mock keeps: a value set is read back, a cluster shape set on a node is the shape its
/// kernel runs with, and new parameters (on the node, on the executable graph) leave the
/// attributes. The H200 printed these lines too (recorded), but the section is declared
/// divergent as a whole for its last call, where the H200 crashes, so
/// graph_exec_update_probe_matches_the_h200 does not compare them: they are checked here.
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

/// Capture modes (probe graph_exec_update, section capture-modes, recorded on the H200 and
/// matched by graph_exec_update_probe_matches_the_h200): the rules cuda.h and the
/// programming guide state, checked by name: an unsafe call is refused on the capturing
/// thread unless the mode is relaxed, on other threads only in global mode; synchronising
/// or querying a capturing stream, or using the legacy stream while a blocking stream
/// captures, fails and invalidates the capture.
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

/// `.blocksareclusters` (clients/probes/blocks_are_clusters.c): a launch's grid counted in
/// clusters, every launch's blocks and special registers (recorded on the H200).
#[test]
fn blocks_are_clusters_probe_matches_the_h200() {
    compare("blocks_are_clusters", &[]);
}

/// Green contexts (clients/probes/green_contexts.c): SM resources, splits, descriptors,
/// green contexts, their streams, events and ids, recorded on the H200 and matched.
#[test]
fn green_contexts_probe_matches_the_h200() {
    compare("green_contexts", &[]);
}

/// What probe green_contexts left unrecorded (clients/probes/green_contexts2.c): SM
/// counts of mixed descriptors, a green context's streams after its destroy, events
/// recorded on the primary, CU_STREAM_PER_THREAD with a green context current. Recorded
/// on the H200 and matched.
#[test]
fn green_contexts2_probe_matches_the_h200() {
    compare("green_contexts2", &[]);
}

/// The driver functions no probe had asked about (clients/probes/api_gaps3.c): error log
/// management, the legacy launch, texture references, checkpoint queries, device
/// identity and deprecated calls, dma-buf handles, cuEventRecordWithFlags,
/// cuStreamGetId, occupancy with flags. Recorded on the H200; what stays different is
/// declared in divergences.txt.
#[test]
fn api_gaps3_probe_matches_the_h200() {
    compare("api_gaps3", &[]);
}

/// What cudarc's own tests left open about events recorded in a capture
/// (clients/probes/cudarc.c, docs/frameworks/cudarc.md). Recorded on the H200; the
/// section captured-event-after-a-clean-end awaits its recording.
#[test]
fn cudarc_probe_matches_the_h200() {
    compare("cudarc", &[]);
}

/// Texture and surface references at launch (clients/probes/texrefs.c): kernels naming
/// `.texref`/`.surfref` variables bound to arrays, linear memory and a surface array; a
/// module reference's state before any Set; rebinding after a launch; another module's
/// reference; the format rules; an unbound reference read by a kernel. Recorded on the
/// H200; the sections whose setup the probe has changed since await a re-recording
/// (divergences.txt).
#[test]
fn texrefs_probe_matches_the_h200() {
    compare("texrefs", &[]);
}

/// CUDA arrays, mipmapped arrays, texture and surface objects off their successful paths
/// (clients/probes/arrays.c), recorded on the H200; sections named *-crash ask what may
/// crash the H200, never the mock.
#[test]
fn arrays_probe_matches_the_h200() {
    compare("arrays", &[]);
}

/// Texel formats (clients/probes/texel_formats.c), recorded on the H200: plain texture
/// objects over the UNORM/SNORM and BC arrays, sRGB over every 8-bit value, and BC views
/// of blocks whose endpoints test the blending rules ptx/src/texture/bc.rs fitted
/// (other differences, signed -128, mid-range BC1, sRGB, linear filtering). Sections
/// added since (BC arrays of partial blocks, sRGB over 16-bit channels, sRGB with linear
/// filtering) await their recording.
#[test]
fn texel_formats_probe_matches_the_h200() {
    compare("texel_formats", &[]);
}

/// What txq and suq answer of texture and surface references and objects
/// (clients/probes/image_queries.c), recorded on the H200: the extents as each resource
/// was made, which queries the JIT takes, refuses at load or leaves without code.
#[test]
fn image_queries_probe_matches_the_h200() {
    compare("image_queries", &[]);
}

/// Texture views and descriptors at the driver (clients/probes/views.c), recorded on the
/// H200: which level and layer subranges a view may name and what level or layer 0 of it
/// reads, whether the driver honours CU_TRSF_READ_AS_INTEGER through a view, BC1 views
/// read both ways, and a border colour read back under each address mode. Sections
/// added since (layers past a layered array's end by float coordinates, views two past a
/// resource's levels and layers, cubemap-array views of partial cubes) await their
/// recording.
#[test]
fn views_probe_matches_the_h200() {
    compare("views", &[]);
}
