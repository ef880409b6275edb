fn main() {
    // The case-file tests are generated from the files in cases/ when this crate is
    // built (rstest's #[files]): a case added or removed must rebuild them.
    println!("cargo:rerun-if-changed=../cases");
}
