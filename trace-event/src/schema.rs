//! What the trace adds to the declaration: the enums its readers ask for, the structs it
//! shows by their fields, and the lookups of roles.txt's `trace` lines (the older names
//! of the calls it typed first, four values shown otherwise than their role, the words
//! for the handles it named first), which `abi/gen/gen.py` checks against the declaration
//! and generates. Everything else is the declaration's ([`crate::encode`]).

use crate::Value;

/// A C enum: its name in cuda.h and its values by name.
#[derive(Debug)]
pub struct Enum {
    pub name: &'static str,
    pub values: &'static [(&'static str, i64)],
}

impl Enum {
    /// The enum of cuda.h of that typedef name (a name it lacks does not build).
    pub const fn of(name: &'static str) -> Self {
        Self {
            name,
            values: cumock_abi::enum_values(name),
        }
    }

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
            if v != 0 && left & v == v {
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

// The enums the trace's readers ask for by name (`cumock trace2case`), from cuda.h.
pub static GRANULARITY: Enum = Enum::of("CUmemAllocationGranularity_flags");
pub static LOCATION_TYPE: Enum = Enum::of("CUmemLocationType");
pub static HANDLE_TYPE: Enum = Enum::of("CUmemAllocationHandleType");
pub static ALLOCATION_TYPE: Enum = Enum::of("CUmemAllocationType");
pub static ACCESS_FLAGS: Enum = Enum::of("CUmemAccess_flags");
pub static COMPRESSION: Enum = Enum::of("CUmemAllocationCompType");
pub static CTX_FLAGS: Enum = Enum::of("CUctx_flags");
pub static RESULT: Enum = Enum {
    name: "CUresult",
    values: cumock_abi::CU_RESULTS,
};

/// The trace's word for a handle type (`ctx` for `CUcontext`: roles.txt's `trace-noun`
/// lines); any other is named without its `CU` (`module#1`, `graphExec#2`).
pub fn noun(handle_type: &'static str) -> &'static str {
    cumock_abi::TRACE_NOUNS
        .iter()
        .find(|(t, _)| *t == handle_type)
        .map(|(_, n)| *n)
        .unwrap_or_else(|| handle_type.strip_prefix("CU").unwrap_or(handle_type))
}

/// The name a parameter has in the trace: cuda.h's, or the older one roles.txt's `trace`
/// lines keep for the calls the trace typed before it followed the declaration.
pub fn trace_name(base: &str, param: &'static str) -> &'static str {
    cumock_abi::TRACE_NAMES
        .iter()
        .find(|(b, p, _)| *b == base && *p == param)
        .map_or(param, |(_, _, name)| name)
}

/// A value the declaration types otherwise than the trace shows it (roles.txt's
/// `trace-as` lines).
#[derive(Debug, Clone, Copy)]
pub enum Override {
    /// A pointer-sized value that is a number (a file descriptor passed as `void *`).
    Number,
    /// An `int` the call writes through an untyped pointer (the exported fd).
    OutInt,
    /// A value the call writes through an untyped pointer, shown by its address.
    OutPointer,
    /// An out-parameter declared as an integer, holding a value of this enum.
    OutEnum(&'static str),
}

/// How the trace shows a parameter where its declared role does not say it.
pub fn shown_as(base: &str, param: &str) -> Option<Override> {
    let (_, _, how) = cumock_abi::TRACE_AS
        .iter()
        .find(|(b, p, _)| *b == base && *p == param)?;
    Some(match *how {
        "number" => Override::Number,
        "out-int" => Override::OutInt,
        "out-pointer" => Override::OutPointer,
        how => Override::OutEnum(how.strip_prefix("out-enum:")?),
    })
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
        // An alias is named once.
        assert_eq!(CTX_FLAGS.show_flags(4), "CU_CTX_SCHED_BLOCKING_SYNC");
        assert_eq!(RESULT.show(1), "CUDA_ERROR_INVALID_VALUE");
    }

    #[test]
    fn older_names_apply_to_their_call_only() {
        assert_eq!(trace_name("cuMemcpyHtoD", "dstDevice"), "dst");
        assert_eq!(trace_name("cuMemcpy2D", "dstDevice"), "dstDevice");
        assert_eq!(trace_name("cuMemMap", "ptr"), "ptr");
    }
}
