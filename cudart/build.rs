fn main() {
    // Programs linked with -lcudart record the SONAME, and the loader then looks for it.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcudart.so.13");
    // NVIDIA's libcudart.so.13 versions every symbol with the node `libcudart.so.13`
    // (objdump -T), and programs linked against it ask for `cudaMalloc@libcudart.so.13`:
    // without that node the loader refuses them. --default-symver names the node after
    // the SONAME and puts every exported symbol in it.
    // GNU ld: rust-lld, the default linker, has no --default-symver.
    println!("cargo:rustc-cdylib-link-arg=-fuse-ld=bfd");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--default-symver");
    println!("cargo:rerun-if-changed=build.rs");
}
