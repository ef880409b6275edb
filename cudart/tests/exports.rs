//! cumock's libcudart.so.13 exports every symbol NVIDIA's does, in the version node
//! NVIDIA's uses, under NVIDIA's SONAME: programs linked against NVIDIA's runtime load.

mod common;

use object::{Object, ObjectSymbol};

#[test]
fn every_nvidia_export_is_there_with_its_version() {
    let data = std::fs::read(common::cudart_lib()).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let ours: std::collections::HashSet<String> = file
        .dynamic_symbols()
        .filter(|s| s.is_definition())
        .filter_map(|s| s.name().ok().map(str::to_owned))
        .collect();
    let list = std::fs::read_to_string(
        common::workspace().join("cudart/data/libcudart-13.0.96-exports.txt"),
    )
    .unwrap();
    let missing: Vec<&str> = list
        .split_whitespace()
        .filter(|n| !ours.contains(*n))
        .collect();
    assert!(
        missing.is_empty(),
        "{} of NVIDIA's exports are missing: {missing:?}",
        missing.len()
    );
    assert!(list.split_whitespace().count() > 400);
    // And nothing of the runtime's API beyond it: a name in src/not_implemented.rs that
    // NVIDIA's library does not have is a mistake there.
    let nvidia: std::collections::HashSet<&str> = list.split_whitespace().collect();
    let extra: Vec<&String> = ours
        .iter()
        .filter(|n| n.starts_with("cuda") || n.starts_with("__cuda"))
        .filter(|n| !nvidia.contains(n.as_str()))
        .collect();
    assert!(
        extra.is_empty(),
        "exports NVIDIA's runtime does not have: {extra:?}"
    );
}

#[test]
fn soname_and_version_node_are_nvidias() {
    let out = std::process::Command::new("objdump")
        .arg("-T")
        .arg(common::cudart_lib())
        .output()
        .expect("objdump");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.ends_with(" cudaMalloc"))
        .expect("cudaMalloc is exported");
    assert!(
        line.contains("libcudart.so.13"),
        "cudaMalloc is not in the libcudart.so.13 version node: {line}"
    );
    let dynamic = std::process::Command::new("readelf")
        .arg("-d")
        .arg(common::cudart_lib())
        .output()
        .expect("readelf");
    assert!(String::from_utf8_lossy(&dynamic.stdout).contains("Library soname: [libcudart.so.13]"));
}
