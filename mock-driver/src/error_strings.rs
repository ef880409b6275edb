//! cuGetErrorName and cuGetErrorString: every CUresult of cuda.h, with the strings the
//! real driver returns (captured on the H200 by `ci/gpu-run.sh`, errors.json).

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::sync::OnceLock;

const STRINGS: &str = include_str!("../profiles/error-strings-580.159.04.json");

struct Table {
    names: HashMap<u32, CString>,
    strings: HashMap<u32, CString>,
}

fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| {
        let names = cumock_abi::CU_RESULTS
            .iter()
            .filter_map(|(n, v)| Some((u32::try_from(*v).ok()?, CString::new(*n).ok()?)))
            .collect();
        let parsed: HashMap<String, String> =
            serde_json::from_str(STRINGS).expect("valid JSON table");
        let strings = parsed
            .into_iter()
            .filter_map(|(k, v)| Some((k.parse().ok()?, CString::new(v).ok()?)))
            .collect();
        Table { names, strings }
    })
}

pub fn name(code: u32) -> Option<&'static CStr> {
    table().names.get(&code).map(|s| s.as_c_str())
}

pub fn string(code: u32) -> Option<&'static CStr> {
    let t = table();
    t.strings
        .get(&code)
        .map(|s| s.as_c_str())
        .or_else(|| t.names.get(&code).map(|s| s.as_c_str()))
}
