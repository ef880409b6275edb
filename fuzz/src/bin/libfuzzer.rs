//! libFuzzer's entry point (feature `libfuzzer`; `ci/fuzz.sh` builds it with sanitizer
//! coverage): the target is named by `CUMOCK_FUZZ_TARGET`.

#![no_main]

use cumock_fuzz::{engine, target, Target};
use std::sync::OnceLock;

fn chosen() -> &'static Target {
    static T: OnceLock<&'static Target> = OnceLock::new();
    T.get_or_init(|| {
        let name = std::env::var("CUMOCK_FUZZ_TARGET").expect("set CUMOCK_FUZZ_TARGET");
        target(&name).unwrap_or_else(|| panic!("no target {name}"))
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = engine::run_checked(chosen(), data);
});
