//! Allocators written in the style of real ones run unchanged on the mock, and the
//! mock's diagnostics catch the bug planted in each mode of a buggy allocator.

mod common;

use std::process::{Command, Output};

fn run(exe: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(exe);
    c.args(args).env("LD_LIBRARY_PATH", common::mock_dir());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn pytorch_style_expandable_segments_run_on_the_mock() {
    let o = run(&common::client("expandable_segments"), &[], &[]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn a_stripe_over_every_device_runs_on_one_and_on_four() {
    let exe = common::client("striped");
    for n in ["1", "4"] {
        let o = run(&exe, &[], &[("CUMOCK_DEVICES", n)]);
        assert!(o.status.success(), "{}", text(&o));
        assert!(
            text(&o).contains(&format!("ok {n} device(s)")),
            "{}",
            text(&o)
        );
    }
}

#[test]
fn memmapipc_style_sharing_with_two_child_processes() {
    let o = run(&common::client("ipc"), &[], &[]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn cumock_exec_and_ld_preload_serve_linked_and_dlopening_programs() {
    let lib = common::mock_lib();
    for prog in ["dlopen_client", "buggy_allocator"] {
        let exe = common::client(prog);
        // cumock exec: LD_LIBRARY_PATH set for the program.
        let o = Command::new(common::cumock())
            .arg("exec")
            .arg("--")
            .arg(&exe)
            .env_remove("LD_LIBRARY_PATH")
            .output()
            .unwrap();
        assert!(o.status.success(), "{prog} under cumock exec: {}", text(&o));
        // LD_PRELOAD alone: the loader satisfies libcuda.so.1 by SONAME with the mock.
        let o = Command::new(&exe)
            .env_remove("LD_LIBRARY_PATH")
            .env("LD_PRELOAD", &lib)
            .output()
            .unwrap();
        assert!(o.status.success(), "{prog} under LD_PRELOAD: {}", text(&o));
        if prog == "dlopen_client" {
            assert!(text(&o).contains("libcuda.so.1"), "{}", text(&o));
        }
    }
}

#[test]
fn the_trace_has_every_call_with_arguments_result_thread_and_time() {
    let exe = common::client("buggy_allocator");
    let trace = common::scratch("trace").join("trace.jsonl");
    let _ = std::fs::remove_file(&trace);
    let o = run(
        &exe,
        &["clean"],
        &[("CUMOCK_TRACE", trace.to_str().unwrap())],
    );
    assert!(o.status.success(), "{}", text(&o));
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let create = lines
        .iter()
        .find(|l| l["fn"] == "cuMemCreate")
        .expect("cuMemCreate traced");
    assert_eq!(create["result"], "CUDA_SUCCESS");
    // Typed: sizes as numbers, handles by name, enums by name.
    assert!(
        create["args"]["size"].is_u64() && create["thread"].is_i64() && create["t_us"].is_u64(),
        "{create}"
    );
    assert_eq!(create["out"]["handle"], "handle#1", "{create}");
    assert_eq!(
        create["args"]["prop"]["location"]["type"], "CU_MEM_LOCATION_TYPE_DEVICE",
        "{create}"
    );
    let names: Vec<&str> = lines.iter().map(|l| l["fn"].as_str().unwrap()).collect();
    for f in [
        "cuInit",
        "cuMemAddressReserve",
        "cuMemMap",
        "cuMemSetAccess",
        "cuMemcpyHtoD_v2",
        "cuMemUnmap",
        "cuMemRelease",
        "cuMemAddressFree",
    ] {
        assert!(names.contains(&f), "{f} missing from {names:?}");
    }
}

#[test]
fn the_leak_report_names_each_kind_of_leak() {
    let o = run(
        &common::client("buggy_allocator"),
        &["leak"],
        &[("CUMOCK_LEAKS", "1")],
    );
    let t = text(&o);
    assert!(
        t.contains("reservation") && t.contains("never freed"),
        "{t}"
    );
    assert!(t.contains("never unmapped"), "{t}");
    assert!(t.contains("never released"), "{t}");
    assert!(
        t.contains("exported fd") && t.contains("never closed"),
        "{t}"
    );
    let clean = run(
        &common::client("buggy_allocator"),
        &["clean"],
        &[("CUMOCK_LEAKS", "1")],
    );
    assert!(text(&clean).contains("nothing leaked"), "{}", text(&clean));
}

#[test]
fn misuse_messages_name_the_call_and_the_rule() {
    let exe = common::client("buggy_allocator");
    for (mode, call, rule) in [
        (
            "misaligned",
            "cuMemCreate",
            "not a non-zero multiple of the granularity",
        ),
        (
            "free-before-unmap",
            "cuMemAddressFree",
            "still has a mapping",
        ),
        (
            "unknown-handle",
            "cuMemRelease",
            "was never an allocation handle",
        ),
        ("no-access", "cuMemcpyHtoD_v2", "has no read-write access"),
        ("unmap-in-flight", "cuMemUnmap", "may still be in flight"),
    ] {
        let o = run(&exe, &[mode], &[("CUMOCK_MISUSE", "1")]);
        let t = text(&o);
        assert!(
            t.contains(&format!("cumock: {call}: ")) && t.contains(rule),
            "{mode}: {t}"
        );
    }
    // Off unless asked for: the same program is quiet (but for calls that would crash a
    // real driver, which are always reported).
    let o = run(&exe, &["misaligned"], &[]);
    assert!(!text(&o).contains("cumock:"), "{}", text(&o));
}

#[test]
fn missing_peer_access_is_reported() {
    let o = run(
        &common::client("buggy_allocator"),
        &["no-peer"],
        &[("CUMOCK_MISUSE", "1"), ("CUMOCK_DEVICES", "2")],
    );
    let t = text(&o);
    assert!(t.contains("device 0 has no read-write access"), "{t}");
}

#[test]
fn strict_mode_fails_the_process_on_misuse_and_leaks_only() {
    let exe = common::client("buggy_allocator");
    for mode in [
        "leak",
        "misaligned",
        "unknown-handle",
        "no-access",
        "unmap-in-flight",
    ] {
        let o = run(&exe, &[mode], &[("CUMOCK_STRICT", "1")]);
        assert_eq!(o.status.code(), Some(86), "{mode}: {}", text(&o));
    }
    let o = run(&exe, &["clean"], &[("CUMOCK_STRICT", "1")]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn fault_injection_drives_the_allocators_out_of_memory_path() {
    let exe = common::client("buggy_allocator");
    let o = run(&exe, &["oom"], &[]);
    assert!(text(&o).contains("never ran out of memory"), "{}", text(&o));
    let o = run(
        &exe,
        &["oom"],
        &[("CUMOCK_FAULT", "cuMemCreate:5:CUDA_ERROR_OUT_OF_MEMORY")],
    );
    assert!(
        o.status.success() && text(&o).contains("recovered after out of memory"),
        "{}",
        text(&o)
    );
    let o = run(
        &exe,
        &["oom"],
        &[(
            "CUMOCK_FAULT",
            "cuMemCreate:every=9:CUDA_ERROR_OUT_OF_MEMORY",
        )],
    );
    assert!(
        o.status.success() && text(&o).contains("recovered after out of memory"),
        "{}",
        text(&o)
    );
    // At random, a failure can hit the retry too: the allocator then gives up, as
    // PyTorch raises OutOfMemoryError; the same seed fails the same calls every run.
    let runs: Vec<bool> = (0..2)
        .map(|_| {
            run(
                &exe,
                &["oom"],
                &[(
                    "CUMOCK_FAULT",
                    "cuMemCreate:rate=0.3:seed=3:CUDA_ERROR_OUT_OF_MEMORY",
                )],
            )
            .status
            .success()
        })
        .collect();
    assert_eq!(runs[0], runs[1], "the same seed must fail the same calls");
}

/// NVIDIA's Python packages, installed by ci/test.sh into target/py-clients.
fn python(script: &str) -> Output {
    let site = common::workspace().join("target/py-clients");
    assert!(
        site.join("cuda/core").is_dir(),
        "cuda-bindings and cuda-core are not in {}: run ci/test.sh",
        site.display()
    );
    Command::new("python3")
        .arg(common::workspace().join("clients/python").join(script))
        .env("PYTHONPATH", &site)
        .env("LD_LIBRARY_PATH", common::mock_dir())
        .output()
        .unwrap()
}

/// A Python program's leaks and misuse are reported at its own lines and functions (the
/// mock reads the interpreter's frames), not at the interpreter's native frames.
#[test]
fn python_call_sites_name_the_py_file_line_and_function() {
    let site = common::workspace().join("target/py-clients");
    let script = common::workspace().join("clients/python/leaky_bindings.py");
    let o = Command::new("python3")
        .arg(&script)
        .env("PYTHONPATH", &site)
        .env("LD_LIBRARY_PATH", common::mock_dir())
        .env("CUMOCK_LEAKS", "1")
        .env("CUMOCK_MISUSE", "1")
        .output()
        .unwrap();
    let out = text(&o);
    assert!(o.status.success() && out.contains("done"), "{out}");
    let err = String::from_utf8_lossy(&o.stderr);
    let line_of = |needle: &str| {
        let text = std::fs::read_to_string(&script).unwrap();
        1 + text.lines().position(|l| l.contains(needle)).unwrap()
    };
    for (what, call) in [
        ("never released", "handle = check(cu.cuMemCreate"),
        ("never freed", "va = check(cu.cuMemAddressReserve"),
    ] {
        let at = err
            .find(what)
            .unwrap_or_else(|| panic!("no leak `{what}` in:\n{err}"));
        let next = err[at..].lines().nth(1).unwrap_or("");
        assert!(
            next.contains(&format!(
                "grow_pool ({}:{})",
                script.display(),
                line_of(call)
            )),
            "{what}: {next}\n{err}"
        );
    }
    assert!(
        err.contains(&format!(
            "misuse ({}:{})",
            script.display(),
            line_of("return cu.cuMemAddressReserve(12345")
        )),
        "{err}"
    );
    assert!(!err.contains("_PyEval_EvalFrameDefault"), "{err}");
}

#[test]
fn nvidias_python_bindings_allocate_grow_copy_and_free() {
    let o = python("bindings_vmm.py");
    assert!(
        o.status.success() && text(&o).contains("ok NVIDIA H200"),
        "{}",
        text(&o)
    );
}

#[test]
fn cuda_cores_virtual_memory_resource_grows_with_its_data() {
    let o = python("core_vmr.py");
    assert!(
        o.status.success() && text(&o).contains("ok grown to 40 MiB"),
        "{}",
        text(&o)
    );
}

#[test]
fn cuda_cores_memory_resources_streams_events_and_kernels() {
    let o = python("core_memory.py");
    assert!(
        o.status.success()
            && text(&o).contains(
                "pinned, device and managed pools, own device pool, legacy pinned, events"
            ),
        "{}",
        text(&o)
    );
}

#[test]
fn cudarc_drives_the_vmm_api_through_its_sys_bindings() {
    let o = run(&common::example("cudarc_vmm"), &[], &[]);
    assert!(
        o.status.success() && text(&o).contains("ok"),
        "{}",
        text(&o)
    );
}
