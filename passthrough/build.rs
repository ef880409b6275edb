fn main() {
    // Programs linked with -lcuda record the SONAME, and the loader then looks for that
    // name: it must be the real driver's.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcuda.so.1");
}
