//! What each traced argument is: the calls a trace types, each with its parameters in
//! cuda.h's order, by the name the trace gives them and their kind. Both writers use it:
//! the mock maps its exports' arguments onto it by position, the pass-through recorder
//! by name. A call not listed here is still traced, its integers as numbers and its
//! pointers as addresses, under the exporter's own parameter names.
//!
//! When `abi/` declares every function from cuda.h with its parameter types, the kinds
//! here follow from those types (`CUmemGenericAllocationHandle` is a handle,
//! `CUdeviceptr` an address, `const char *` a string) and this table becomes the short
//! list of what the types cannot say: which pointers are out-pointers, which handle a
//! call creates.

use crate::{address, HandleNames, Value};
use cumock_abi::consts::*;

/// A C enum: its name in cuda.h and its values by name.
#[derive(Debug)]
pub struct Enum {
    pub name: &'static str,
    pub values: &'static [(&'static str, i64)],
}

impl Enum {
    pub fn value(&self, name: &str) -> Option<i64> {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }

    pub fn name_of(&self, v: i64) -> Option<&'static str> {
        self.values.iter().find(|(_, x)| *x == v).map(|(n, _)| *n)
    }

    /// A value by its name, or as a number where cuda.h names none.
    pub fn show(&self, v: i64) -> Value {
        match self.name_of(v) {
            Some(n) => Value::from(n),
            None => Value::from(v),
        }
    }

    /// Flags by their names joined by `|` (`0` where none is set and none is named 0).
    pub fn show_flags(&self, bits: u64) -> Value {
        if bits == 0 {
            return self.show(0);
        }
        let mut names = Vec::new();
        let mut left = bits;
        for (n, v) in self.values {
            let v = *v as u64;
            if v != 0 && bits & v == v {
                names.push(n.to_string());
                left &= !v;
            }
        }
        if left != 0 {
            names.push(left.to_string());
        }
        Value::from(names.join("|"))
    }
}

pub static GRANULARITY: Enum = Enum {
    name: "CUmemAllocationGranularity_flags",
    values: &[
        (
            "CU_MEM_ALLOC_GRANULARITY_MINIMUM",
            CU_MEM_ALLOC_GRANULARITY_MINIMUM as i64,
        ),
        (
            "CU_MEM_ALLOC_GRANULARITY_RECOMMENDED",
            CU_MEM_ALLOC_GRANULARITY_RECOMMENDED as i64,
        ),
    ],
};

pub static LOCATION_TYPE: Enum = Enum {
    name: "CUmemLocationType",
    values: &[
        (
            "CU_MEM_LOCATION_TYPE_INVALID",
            CU_MEM_LOCATION_TYPE_INVALID as i64,
        ),
        (
            "CU_MEM_LOCATION_TYPE_DEVICE",
            CU_MEM_LOCATION_TYPE_DEVICE as i64,
        ),
        (
            "CU_MEM_LOCATION_TYPE_HOST",
            CU_MEM_LOCATION_TYPE_HOST as i64,
        ),
        (
            "CU_MEM_LOCATION_TYPE_HOST_NUMA",
            CU_MEM_LOCATION_TYPE_HOST_NUMA as i64,
        ),
        (
            "CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT",
            CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT as i64,
        ),
    ],
};

pub static HANDLE_TYPE: Enum = Enum {
    name: "CUmemAllocationHandleType",
    values: &[
        ("CU_MEM_HANDLE_TYPE_NONE", CU_MEM_HANDLE_TYPE_NONE as i64),
        (
            "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR",
            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR as i64,
        ),
        ("CU_MEM_HANDLE_TYPE_WIN32", CU_MEM_HANDLE_TYPE_WIN32 as i64),
        (
            "CU_MEM_HANDLE_TYPE_WIN32_KMT",
            CU_MEM_HANDLE_TYPE_WIN32_KMT as i64,
        ),
        (
            "CU_MEM_HANDLE_TYPE_FABRIC",
            CU_MEM_HANDLE_TYPE_FABRIC as i64,
        ),
    ],
};

pub static ALLOCATION_TYPE: Enum = Enum {
    name: "CUmemAllocationType",
    values: &[
        ("CU_MEM_ALLOCATION_TYPE_INVALID", 0),
        (
            "CU_MEM_ALLOCATION_TYPE_PINNED",
            CU_MEM_ALLOCATION_TYPE_PINNED as i64,
        ),
        ("CU_MEM_ALLOCATION_TYPE_MANAGED", 2),
    ],
};

pub static ACCESS_FLAGS: Enum = Enum {
    name: "CUmemAccess_flags",
    values: &[
        (
            "CU_MEM_ACCESS_FLAGS_PROT_NONE",
            CU_MEM_ACCESS_FLAGS_PROT_NONE as i64,
        ),
        (
            "CU_MEM_ACCESS_FLAGS_PROT_READ",
            CU_MEM_ACCESS_FLAGS_PROT_READ as i64,
        ),
        (
            "CU_MEM_ACCESS_FLAGS_PROT_READWRITE",
            CU_MEM_ACCESS_FLAGS_PROT_READWRITE as i64,
        ),
    ],
};

pub static COMPRESSION: Enum = Enum {
    name: "CUmemAllocationCompType",
    values: &[
        (
            "CU_MEM_ALLOCATION_COMP_NONE",
            CU_MEM_ALLOCATION_COMP_NONE as i64,
        ),
        (
            "CU_MEM_ALLOCATION_COMP_GENERIC",
            CU_MEM_ALLOCATION_COMP_GENERIC as i64,
        ),
    ],
};

pub static RESULT: Enum = Enum {
    name: "CUresult",
    values: cumock_abi::CU_RESULTS,
};

pub static DEVICE_ATTRIBUTE: Enum = Enum {
    name: "CUdevice_attribute",
    values: cumock_abi::CU_DEVICE_ATTRIBUTES,
};

pub static POINTER_ATTRIBUTE: Enum = Enum {
    name: "CUpointer_attribute",
    values: cumock_abi::CU_POINTER_ATTRIBUTES,
};

/// What an argument is, which decides how the trace shows it.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A size, count, flags or device ordinal: a number.
    Int,
    /// A device or host address: a hex string.
    Addr,
    /// A handle of this kind (`ctx`, `handle`, `stream`, `event`), by name.
    Handle(&'static str),
    /// A handle the call creates: a new name, even for a value seen before.
    NewHandle(&'static str),
    Enum(&'static Enum),
    Flags(&'static Enum),
    /// A C string (`const char *`, or a buffer the call fills).
    Str,
    /// `CUmemAllocationProp *`.
    Prop,
    /// `CUmemLocation *`.
    Location,
    /// `CUmemAccessDesc *`, as many as the call's `count`.
    AccessDescs,
    /// A pointer the trace does not follow (a parameter struct, a host buffer, a
    /// function pointer): its address.
    Opaque,
}

/// One parameter: its name in the trace, what it is, whether the call writes it, and
/// (for an out-value the mock reads back) how many bytes it has.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub name: &'static str,
    pub kind: Kind,
    pub out: bool,
    pub bytes: u8,
}

const fn arg(name: &'static str, kind: Kind) -> Param {
    Param {
        name,
        kind,
        out: false,
        bytes: 8,
    }
}

const fn out(name: &'static str, kind: Kind) -> Param {
    Param {
        name,
        kind,
        out: true,
        bytes: 8,
    }
}

/// An out-value of 4 bytes (`int *`, `unsigned int *`).
const fn out4(name: &'static str, kind: Kind) -> Param {
    Param {
        name,
        kind,
        out: true,
        bytes: 4,
    }
}

use Kind::*;

const CTX: Kind = Handle("ctx");
const MEM: Kind = Handle("handle");
const STREAM: Kind = Handle("stream");
const EVENT: Kind = Handle("event");

/// The calls a trace types, with their parameters in cuda.h's order.
pub static CALLS: &[(&str, &[Param])] = &[
    ("__driver", &[arg("path", Str)]),
    ("cuInit", &[arg("flags", Int)]),
    ("cuDriverGetVersion", &[out4("version", Int)]),
    (
        "cuGetErrorName",
        &[arg("error", Enum(&RESULT)), out("str", Opaque)],
    ),
    (
        "cuGetErrorString",
        &[arg("error", Enum(&RESULT)), out("str", Opaque)],
    ),
    (
        "cuGetProcAddress_v2",
        &[
            arg("symbol", Str),
            out("pfn", Opaque),
            arg("version", Int),
            arg("flags", Int),
            out4("status", Int),
        ],
    ),
    ("cuDeviceGet", &[out4("device", Int), arg("ordinal", Int)]),
    ("cuDeviceGetCount", &[out4("count", Int)]),
    (
        "cuDeviceGetName",
        &[out("name", Str), arg("len", Int), arg("dev", Int)],
    ),
    (
        "cuDeviceGetAttribute",
        &[
            out4("value", Int),
            arg("attribute", Enum(&DEVICE_ATTRIBUTE)),
            arg("dev", Int),
        ],
    ),
    ("cuDeviceTotalMem_v2", &[out("bytes", Int), arg("dev", Int)]),
    (
        "cuDeviceCanAccessPeer",
        &[out4("value", Int), arg("dev", Int), arg("peer", Int)],
    ),
    (
        "cuDevicePrimaryCtxRetain",
        &[out("ctx", CTX), arg("dev", Int)],
    ),
    ("cuDevicePrimaryCtxRelease_v2", &[arg("dev", Int)]),
    ("cuDevicePrimaryCtxReset_v2", &[arg("dev", Int)]),
    (
        "cuDevicePrimaryCtxGetState",
        &[arg("dev", Int), out4("flags", Int), out4("active", Int)],
    ),
    (
        "cuDevicePrimaryCtxSetFlags_v2",
        &[arg("dev", Int), arg("flags", Int)],
    ),
    (
        "cuCtxCreate_v2",
        &[
            out("ctx", NewHandle("ctx")),
            arg("flags", Int),
            arg("dev", Int),
        ],
    ),
    (
        "cuCtxCreate_v4",
        &[
            out("ctx", NewHandle("ctx")),
            arg("params", Opaque),
            arg("flags", Int),
            arg("dev", Int),
        ],
    ),
    ("cuCtxDestroy_v2", &[arg("ctx", CTX)]),
    ("cuCtxSetCurrent", &[arg("ctx", CTX)]),
    ("cuCtxGetCurrent", &[out("ctx", CTX)]),
    ("cuCtxPushCurrent_v2", &[arg("ctx", CTX)]),
    ("cuCtxPopCurrent_v2", &[out("ctx", CTX)]),
    ("cuCtxGetDevice", &[out4("device", Int)]),
    ("cuCtxSynchronize", &[]),
    (
        "cuCtxEnablePeerAccess",
        &[arg("ctx", CTX), arg("flags", Int)],
    ),
    ("cuCtxDisablePeerAccess", &[arg("ctx", CTX)]),
    (
        "cuStreamCreate",
        &[out("stream", NewHandle("stream")), arg("flags", Int)],
    ),
    ("cuStreamDestroy_v2", &[arg("stream", STREAM)]),
    ("cuStreamSynchronize", &[arg("stream", STREAM)]),
    (
        "cuEventCreate",
        &[out("event", NewHandle("event")), arg("flags", Int)],
    ),
    (
        "cuEventRecord",
        &[arg("event", EVENT), arg("stream", STREAM)],
    ),
    ("cuEventSynchronize", &[arg("event", EVENT)]),
    ("cuEventDestroy_v2", &[arg("event", EVENT)]),
    (
        "cuMemGetAllocationGranularity",
        &[
            out("granularity", Int),
            arg("prop", Prop),
            arg("option", Enum(&GRANULARITY)),
        ],
    ),
    (
        "cuMemAddressReserve",
        &[
            out("ptr", Addr),
            arg("size", Int),
            arg("align", Int),
            arg("addr", Addr),
            arg("flags", Int),
        ],
    ),
    ("cuMemAddressFree", &[arg("ptr", Addr), arg("size", Int)]),
    (
        "cuMemCreate",
        &[
            out("handle", NewHandle("handle")),
            arg("size", Int),
            arg("prop", Prop),
            arg("flags", Int),
        ],
    ),
    ("cuMemRelease", &[arg("handle", MEM)]),
    (
        "cuMemMap",
        &[
            arg("ptr", Addr),
            arg("size", Int),
            arg("offset", Int),
            arg("handle", MEM),
            arg("flags", Int),
        ],
    ),
    ("cuMemUnmap", &[arg("ptr", Addr), arg("size", Int)]),
    (
        "cuMemSetAccess",
        &[
            arg("ptr", Addr),
            arg("size", Int),
            arg("desc", AccessDescs),
            arg("count", Int),
        ],
    ),
    (
        "cuMemGetAccess",
        &[
            out("flags", Enum(&ACCESS_FLAGS)),
            arg("location", Location),
            arg("ptr", Addr),
        ],
    ),
    (
        "cuMemExportToShareableHandle",
        &[
            out4("fd", Int),
            arg("handle", MEM),
            arg("type", Enum(&HANDLE_TYPE)),
            arg("flags", Int),
        ],
    ),
    (
        "cuMemImportFromShareableHandle",
        &[
            out("handle", MEM),
            arg("fd", Int),
            arg("type", Enum(&HANDLE_TYPE)),
        ],
    ),
    (
        "cuMemRetainAllocationHandle",
        &[out("handle", MEM), arg("addr", Addr)],
    ),
    (
        "cuMemGetAllocationPropertiesFromHandle",
        &[out("prop", Prop), arg("handle", MEM)],
    ),
    ("cuMemGetInfo_v2", &[out("free", Int), out("total", Int)]),
    ("cuMemAlloc_v2", &[out("ptr", Addr), arg("size", Int)]),
    ("cuMemFree_v2", &[arg("ptr", Addr)]),
    (
        "cuMemGetAddressRange_v2",
        &[out("base", Addr), out("size", Int), arg("ptr", Addr)],
    ),
    (
        "cuPointerGetAttribute",
        &[
            out("data", Opaque),
            arg("attribute", Enum(&POINTER_ATTRIBUTE)),
            arg("ptr", Addr),
        ],
    ),
    (
        "cuMemcpy",
        &[arg("dst", Addr), arg("src", Addr), arg("n", Int)],
    ),
    (
        "cuMemcpyHtoD_v2",
        &[arg("dst", Addr), arg("src", Addr), arg("n", Int)],
    ),
    (
        "cuMemcpyDtoH_v2",
        &[arg("dst", Addr), arg("src", Addr), arg("n", Int)],
    ),
    (
        "cuMemcpyDtoD_v2",
        &[arg("dst", Addr), arg("src", Addr), arg("n", Int)],
    ),
    (
        "cuMemcpyAsync",
        &[
            arg("dst", Addr),
            arg("src", Addr),
            arg("n", Int),
            arg("stream", STREAM),
        ],
    ),
    (
        "cuMemcpyHtoDAsync_v2",
        &[
            arg("dst", Addr),
            arg("src", Addr),
            arg("n", Int),
            arg("stream", STREAM),
        ],
    ),
    (
        "cuMemcpyDtoHAsync_v2",
        &[
            arg("dst", Addr),
            arg("src", Addr),
            arg("n", Int),
            arg("stream", STREAM),
        ],
    ),
    (
        "cuMemcpyDtoDAsync_v2",
        &[
            arg("dst", Addr),
            arg("src", Addr),
            arg("n", Int),
            arg("stream", STREAM),
        ],
    ),
    (
        "cuMemsetD8_v2",
        &[arg("dst", Addr), arg("value", Int), arg("n", Int)],
    ),
    (
        "cuMemsetD16_v2",
        &[arg("dst", Addr), arg("value", Int), arg("n", Int)],
    ),
    (
        "cuMemsetD32_v2",
        &[arg("dst", Addr), arg("value", Int), arg("n", Int)],
    ),
];

/// The parameters of a call the trace types, in cuda.h's order.
pub fn params(function: &str) -> Option<&'static [Param]> {
    CALLS.iter().find(|(f, _)| *f == function).map(|(_, p)| *p)
}

/// A scalar of a kind, from its raw bits (an integer, or a pointer's address).
/// Struct and string kinds are read by the writer, which knows where they live; given
/// here, they are shown by their address.
pub fn scalar(kind: Kind, raw: u64, names: &mut HandleNames) -> Value {
    match kind {
        Int => Value::from(raw),
        Handle(k) => names.name(k, raw),
        NewHandle(k) => names.fresh(k, raw),
        Enum(e) => e.show(raw as i64),
        Flags(e) => e.show_flags(raw),
        Addr | Opaque | Str | Prop | Location | AccessDescs => {
            if raw == 0 && !matches!(kind, Addr) {
                Value::Null
            } else {
                address(raw)
            }
        }
    }
}

/// A signed integer argument (an `int` may be negative: `-1` is a value programs pass).
pub fn signed(kind: Kind, raw: i64, names: &mut HandleNames) -> Value {
    match kind {
        Int if raw < 0 => Value::from(raw),
        Enum(e) => e.show(raw),
        _ => scalar(kind, raw as u64, names),
    }
}

/// `CUmemLocation`.
pub fn location(type_: i32, id: i32) -> Value {
    serde_json::json!({"type": LOCATION_TYPE.show(type_.into()), "id": id})
}

/// `CUmemAllocationProp`: the fields a program sets.
pub fn prop(type_: i32, loc_type: i32, loc_id: i32, handle_types: i32, compression: u8) -> Value {
    serde_json::json!({
        "type": ALLOCATION_TYPE.show(type_.into()),
        "location": location(loc_type, loc_id),
        "handle_types": HANDLE_TYPE.show_flags(handle_types as u32 as u64),
        "compression": COMPRESSION.show(compression.into()),
    })
}

/// One `CUmemAccessDesc`.
pub fn access_desc(loc_type: i32, loc_id: i32, flags: i32) -> Value {
    serde_json::json!({
        "location": location(loc_type, loc_id),
        "flags": ACCESS_FLAGS.show(flags.into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_call_is_listed_once() {
        for (i, (f, _)) in CALLS.iter().enumerate() {
            assert!(
                CALLS[i + 1..].iter().all(|(g, _)| g != f),
                "{f} is listed twice"
            );
        }
    }

    #[test]
    fn enums_and_flags_by_name() {
        assert_eq!(GRANULARITY.show(1), "CU_MEM_ALLOC_GRANULARITY_RECOMMENDED");
        assert_eq!(GRANULARITY.show(7), 7);
        assert_eq!(
            HANDLE_TYPE.show_flags(9),
            "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR|CU_MEM_HANDLE_TYPE_FABRIC"
        );
        assert_eq!(HANDLE_TYPE.show_flags(0), "CU_MEM_HANDLE_TYPE_NONE");
        assert_eq!(
            HANDLE_TYPE.show_flags(0x11),
            "CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR|16"
        );
        assert_eq!(RESULT.show(1), "CUDA_ERROR_INVALID_VALUE");
    }

    #[test]
    fn scalars_by_kind() {
        let mut n = HandleNames::default();
        assert_eq!(scalar(Addr, 0x7f00_0020_0000, &mut n), "0x7f0000200000");
        assert_eq!(scalar(Addr, 0, &mut n), "0x0");
        assert_eq!(scalar(Opaque, 0, &mut n), Value::Null);
        assert_eq!(scalar(MEM, 0xabc, &mut n), "handle#1");
        assert_eq!(signed(Int, -1, &mut n), -1);
    }
}
