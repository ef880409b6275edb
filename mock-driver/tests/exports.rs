//! The mock exports every symbol of the real 580.159.04 driver, under SONAME libcuda.so.1.

mod common;

use object::{Object, ObjectSymbol};

fn dynamic_symbols() -> Vec<String> {
    let lib = common::mock_lib();
    let data = std::fs::read(std::fs::canonicalize(&lib).unwrap()).unwrap();
    let file = object::File::parse(&*data).unwrap();
    file.dynamic_symbols()
        .filter(|s| s.is_definition() && s.is_global())
        .filter_map(|s| s.name().ok().map(str::to_owned))
        .collect()
}

#[test]
fn all_707_names_of_the_real_driver_are_exported() {
    let want: Vec<&str> = include_str!("../../abi/gen/exports-580.159.04.txt")
        .split_whitespace()
        .collect();
    assert_eq!(want.len(), 707);
    let have: std::collections::HashSet<String> = dynamic_symbols().into_iter().collect();
    let missing: Vec<&&str> = want.iter().filter(|n| !have.contains(**n)).collect();
    assert!(missing.is_empty(), "missing exports: {missing:?}");
}

#[test]
fn nothing_but_the_driver_api_is_exported() {
    let want: std::collections::HashSet<&str> =
        include_str!("../../abi/gen/exports-580.159.04.txt")
            .split_whitespace()
            .collect();
    let extra: Vec<String> = dynamic_symbols()
        .into_iter()
        .filter(|n| !want.contains(n.as_str()))
        .collect();
    // Rust's own runtime symbols are not exported from a cdylib; anything else would be
    // a name a program could link by mistake.
    assert!(
        extra.is_empty(),
        "exports not in the real driver: {extra:?}"
    );
}

#[test]
fn the_soname_is_libcuda_so_1() {
    let lib = std::fs::canonicalize(common::mock_lib()).unwrap();
    let out = std::process::Command::new("readelf")
        .arg("-d")
        .arg(&lib)
        .output()
        .expect("readelf (binutils)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Library soname: [libcuda.so.1]"), "{text}");
}
