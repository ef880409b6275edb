//! The trace's encoding of a driver call, derived from the declaration (`cumock_abi`'s
//! `EXPORTS`, generated from NVIDIA's headers with each parameter's role): both writers,
//! the mock (`CUMOCK_TRACE`) and the pass-through recorder, hand the call's arguments
//! over as they came ([`TraceArg`]) and get the event's `args` and `out` back.
//!
//! Each parameter is written by its role: a value as a number (negative where its C type
//! is signed), a device address in hex, a handle by name ([`HandleNames`]; a device by
//! its ordinal), an enum by its name in cuda.h (`cumock_abi::ENUMS`), flags by the names
//! of their bits, a string as a string, the program's memory by its address, a struct
//! the trace knows (`CUmemAllocationProp`, `CUmemLocation`, `CUmemAccessDesc`s) by its
//! fields, any other pointer by its address (`null` for NULL). Out-parameters are read
//! after a call that succeeded, as their declared type. What the header cannot say is in
//! `abi/gen/roles.txt`: its `trace` lines (the trace's older names for the calls it typed
//! first, four values, the words for four handle types), generated into `cumock_abi`.
//!
//! The plan of each export is made once, at its first traced call.

use crate::schema::{self, Enum};
use crate::{address, Fields, HandleNames, Value};
use cumock_abi::{CUmemAccessDesc, CUmemAllocationProp, CUmemLocation, Export, Role};
use std::collections::HashMap;
use std::sync::OnceLock;

/// An argument as the program passed it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg<'a> {
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    /// A pointer (or a function pointer), by its address.
    Pointer(u64),
    /// A `CUmemLocation` passed by value.
    Location(CUmemLocation),
    /// A struct passed by value whose bytes have no padding (the IPC handles).
    Bytes(&'a [u8]),
    /// A struct passed by value the trace does not show: its type's name.
    Opaque(&'static str),
}

impl Arg<'_> {
    /// The argument by its Rust type alone, for a writer with no declaration to say what
    /// it means (cumock's runtime, whose exports `cumock_abi` does not declare): numbers
    /// as numbers, pointers by address (`null` for NULL), the structs as [`encode`] writes
    /// them.
    pub fn plain(&self) -> Value {
        match *self {
            Arg::Unsigned(u) => Value::from(u),
            Arg::Signed(i) => Value::from(i),
            Arg::Pointer(0) => Value::Null,
            Arg::Pointer(p) => address(p),
            Arg::Float(f) => Value::from(f),
            Arg::Location(l) => schema::location(l.type_, l.id),
            Arg::Bytes(b) => Value::from(b.iter().map(|x| format!("{x:02x}")).collect::<String>()),
            Arg::Opaque(t) => Value::from(t),
        }
    }
}

/// How an argument of this Rust type is handed to the trace: no text, no allocation.
pub trait TraceArg {
    fn arg(&self) -> Arg<'_>;
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(impl TraceArg for $t { fn arg(&self) -> Arg<'_> { Arg::Unsigned(*self as u64) } })*};
}
macro_rules! signed {
    ($($t:ty),*) => {$(impl TraceArg for $t { fn arg(&self) -> Arg<'_> { Arg::Signed(*self as i64) } })*};
}
unsigned!(u8, u16, u32, u64, usize);
signed!(i8, i16, i32, i64, isize);

impl TraceArg for f32 {
    fn arg(&self) -> Arg<'_> {
        Arg::Float(f64::from(*self))
    }
}

impl<T> TraceArg for *const T {
    fn arg(&self) -> Arg<'_> {
        Arg::Pointer(*self as usize as u64)
    }
}

impl<T> TraceArg for *mut T {
    fn arg(&self) -> Arg<'_> {
        Arg::Pointer(*self as usize as u64)
    }
}

/// The callbacks' function pointers, by address.
macro_rules! callbacks {
    ($($t:ty),*) => {$(impl TraceArg for $t {
        fn arg(&self) -> Arg<'_> { Arg::Pointer(self.map_or(0, |f| f as usize as u64)) }
    })*};
}
callbacks!(
    cumock_abi::CUhostFn,
    cumock_abi::CUstreamCallback,
    cumock_abi::CUlogsCallback,
    cumock_abi::CUasyncCallback,
    cumock_abi::CUoccupancyB2DSize
);

impl TraceArg for CUmemLocation {
    fn arg(&self) -> Arg<'_> {
        Arg::Location(*self)
    }
}

impl TraceArg for cumock_abi::CUipcMemHandle {
    fn arg(&self) -> Arg<'_> {
        // Safety: 64 `c_char`s, no padding; the bytes live as long as `self`.
        Arg::Bytes(unsafe { std::slice::from_raw_parts(self.reserved.as_ptr().cast(), 64) })
    }
}

impl TraceArg for cumock_abi::CUipcEventHandle {
    fn arg(&self) -> Arg<'_> {
        // Safety: as above.
        Arg::Bytes(unsafe { std::slice::from_raw_parts(self.reserved.as_ptr().cast(), 64) })
    }
}

impl TraceArg for cumock_abi::CUeglFrame {
    fn arg(&self) -> Arg<'_> {
        Arg::Opaque("CUeglFrame")
    }
}

/// Where the writer reads the program's memory from.
pub trait Memory {
    /// Up to `buf.len()` bytes of what the program passed at `at`, which may be any
    /// value: how many could be read (a garbage pointer gets a trace, not a crash).
    fn read(&self, at: u64, buf: &mut [u8]) -> usize;

    /// An out-parameter the call has just written, after it succeeded: the driver wrote
    /// `buf.len()` bytes there, so a writer may read it directly. `read` by default.
    fn read_written(&self, at: u64, buf: &mut [u8]) -> usize {
        self.read(at, buf)
    }
}

/// How one parameter is shown.
#[derive(Debug, Clone, Copy)]
enum Show {
    Number,
    /// In hex, NULL included (`"0x0"`).
    Address,
    /// In hex, NULL as `null`.
    Pointer,
    Handle(&'static str),
    Enum(&'static Enum),
    Flags(&'static Enum),
    Str,
    Prop,
    Location,
    /// `CUmemAccessDesc`s, as many as the parameter at this index says.
    AccessDescs(usize),
    /// Written by the call: read after it succeeded; `true` where the declaration says
    /// it is an out-parameter of that type.
    Out(Pointee, bool),
    /// A string the call writes into a buffer of the parameter at this index's length.
    OutString(usize),
}

/// What an out-parameter points to, and whether the declaration says so (then the
/// driver wrote exactly that type there; an override's is read as a passed pointer).
#[derive(Debug, Clone, Copy)]
enum Pointee {
    Int {
        bytes: u8,
        signed: bool,
    },
    Address {
        bytes: u8,
    },
    Pointer,
    Float,
    /// A struct the trace does not show: where it was written.
    Struct,
    Handle {
        noun: &'static str,
        bytes: u8,
        created: bool,
    },
    Device,
    Enum(&'static Enum),
    Prop,
}

#[derive(Debug)]
struct Plan {
    /// The name in the trace.
    name: &'static str,
    show: Show,
}

/// An enum of cuda.h by its typedef name.
pub fn enum_named(name: &str) -> Option<&'static Enum> {
    static ENUMS: OnceLock<HashMap<&'static str, Enum>> = OnceLock::new();
    ENUMS
        .get_or_init(|| {
            cumock_abi::ENUMS
                .iter()
                .map(|(n, values)| (*n, Enum { name: n, values }))
                .collect()
        })
        .get(name)
}

/// The size of a handle type of the declaration (a type some parameter passes by value
/// as a handle), or None for a type that is not one.
fn handle_size(ty: &str) -> Option<u8> {
    static TYPES: OnceLock<Vec<(&'static str, u8)>> = OnceLock::new();
    let types = TYPES.get_or_init(|| {
        let mut v: Vec<(&'static str, u8)> = cumock_abi::EXPORTS
            .iter()
            .flat_map(|e| e.params.unwrap_or(&[]))
            .filter_map(|p| match p.role {
                Role::Handle(t) => Some((t, p.size as u8)),
                _ => None,
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    });
    let i = types.binary_search_by(|(t, _)| (*t).cmp(ty)).ok()?;
    Some(types[i].1)
}

/// What a `*mut T` out-parameter's `T` is, from its declared Rust type.
fn pointee(rust_type: &'static str, created: bool) -> Pointee {
    let t = rust_type
        .strip_prefix("*mut ")
        .or_else(|| rust_type.strip_prefix("*const "))
        .unwrap_or(rust_type);
    let t = t.strip_prefix("::std::ffi::").unwrap_or(t);
    match t {
        _ if t.starts_with('*') => Pointee::Pointer,
        "u8" | "c_uchar" | "c_char" => Pointee::Int {
            bytes: 1,
            signed: false,
        },
        "u16" | "c_ushort" => Pointee::Int {
            bytes: 2,
            signed: false,
        },
        "c_int" | "i32" | "EGLint" => Pointee::Int {
            bytes: 4,
            signed: true,
        },
        "c_uint" | "u32" | "cuuint32_t" | "GLuint" => Pointee::Int {
            bytes: 4,
            signed: false,
        },
        "usize" | "u64" | "c_ulonglong" | "cuuint64_t" => Pointee::Int {
            bytes: 8,
            signed: false,
        },
        "i64" | "c_longlong" | "isize" => Pointee::Int {
            bytes: 8,
            signed: true,
        },
        "f32" | "c_float" => Pointee::Float,
        "CUdeviceptr" => Pointee::Address { bytes: 8 },
        "CUdeviceptr_v1" => Pointee::Address { bytes: 4 },
        "CUdevice" => Pointee::Device,
        "CUmemAllocationProp" => Pointee::Prop,
        _ if handle_size(t).is_some_and(|b| b <= 8) => Pointee::Handle {
            noun: schema::noun(t),
            bytes: handle_size(t).unwrap_or(8),
            created,
        },
        _ => match enum_named(t) {
            Some(e) => Pointee::Enum(e),
            None => Pointee::Struct,
        },
    }
}

/// The plan of one export: each parameter's trace name and how it is shown.
fn plan_of(e: &'static Export) -> Vec<Plan> {
    let params = e.params.unwrap_or(&[]);
    let base = e.proc.map_or(e.name, |p| p.base);
    // A handle written by a call that creates one gets a new name even where the value
    // was another's before (the real driver's handles are heap pointers, reused).
    let creates = base.contains("Create");
    let index = |count: &str| params.iter().position(|p| p.name == count);
    params
        .iter()
        .map(|p| {
            let name = schema::trace_name(base, p.name);
            let show = match schema::shown_as(base, p.name) {
                Some(s) => match s {
                    schema::Override::Number => Show::Number,
                    schema::Override::OutInt => Show::Out(
                        Pointee::Int {
                            bytes: 4,
                            signed: true,
                        },
                        false,
                    ),
                    schema::Override::OutPointer => Show::Out(Pointee::Pointer, false),
                    schema::Override::OutEnum(t) => {
                        Show::Out(enum_named(t).map_or(Pointee::Struct, Pointee::Enum), true)
                    }
                },
                None => match p.role {
                    Role::Value => Show::Number,
                    Role::DeviceAddress | Role::HostMemory => Show::Address,
                    Role::Enum(t) => enum_named(t).map_or(Show::Number, Show::Enum),
                    Role::Flags(t) => enum_named(t).map_or(Show::Number, Show::Flags),
                    Role::Handle("CUdevice") => Show::Number,
                    Role::Handle(t) => Show::Handle(schema::noun(t)),
                    Role::String { .. } => Show::Str,
                    Role::In { .. } => match p.rust_type {
                        "*const CUmemAllocationProp" => Show::Prop,
                        "*const CUmemLocation" | "*mut CUmemLocation" => Show::Location,
                        _ => Show::Pointer,
                    },
                    Role::Out { .. } => Show::Out(pointee(p.rust_type, creates), true),
                    Role::Array { count, .. } => match (p.rust_type, index(count)) {
                        ("*const CUmemAccessDesc", Some(i)) => Show::AccessDescs(i),
                        _ => Show::Pointer,
                    },
                    Role::OutArray { count, .. } => {
                        match (p.rust_type.ends_with("c_char"), index(count)) {
                            (true, Some(i)) => Show::OutString(i),
                            _ => Show::Pointer,
                        }
                    }
                    Role::InOut { .. } | Role::Callback => Show::Pointer,
                },
            };
            Plan { name, show }
        })
        .collect()
}

fn plan(function: &str) -> Option<&'static [Plan]> {
    static PLANS: OnceLock<HashMap<&'static str, Vec<Plan>>> = OnceLock::new();
    PLANS
        .get_or_init(|| {
            cumock_abi::EXPORTS
                .iter()
                .filter(|e| e.params.is_some())
                .map(|e| (e.name, plan_of(e)))
                .collect()
        })
        .get(function)
        .map(Vec::as_slice)
}

/// The event's `args` and `out` of one call of the export `function`, its arguments in
/// declared order; `ok` when it succeeded (only then are out-parameters read).
pub fn encode(
    function: &str,
    args: &[Arg<'_>],
    ok: bool,
    names: &mut HandleNames,
    mem: &dyn Memory,
) -> (Fields, Fields) {
    let (mut a, mut o) = (Fields::new(), Fields::new());
    let Some(plans) = plan(function).filter(|p| p.len() == args.len()) else {
        // Undeclared (the debugger's exports take no arguments we know of).
        return (a, o);
    };
    let bits = |i: usize| match args.get(i) {
        Some(Arg::Unsigned(u) | Arg::Pointer(u)) => *u,
        Some(Arg::Signed(i)) => *i as u64,
        _ => 0,
    };
    for (p, arg) in plans.iter().zip(args) {
        match p.show {
            Show::Out(pointee, declared) => {
                if let (true, Arg::Pointer(at @ 1..)) = (ok, arg) {
                    if let Some(v) = read_out(pointee, *at, declared, names, mem) {
                        o.push(p.name, v);
                    }
                }
            }
            Show::OutString(len) => {
                if let (true, Arg::Pointer(at @ 1..)) = (ok, arg) {
                    let len = (bits(len) as usize).min(4096);
                    if let Some(v) = string(*at, len, mem) {
                        o.push(p.name, v);
                    }
                }
            }
            show => a.push(p.name, value(show, arg, &bits, names, mem)),
        }
    }
    (a, o)
}

/// An argument the call read.
fn value(
    show: Show,
    arg: &Arg<'_>,
    bits: &dyn Fn(usize) -> u64,
    names: &mut HandleNames,
    mem: &dyn Memory,
) -> Value {
    let raw = match *arg {
        Arg::Unsigned(u) | Arg::Pointer(u) => u,
        Arg::Signed(i) => match show {
            Show::Enum(e) => return e.show(i),
            _ if i < 0 => return Value::from(i),
            _ => i as u64,
        },
        Arg::Float(_) | Arg::Location(_) | Arg::Bytes(_) | Arg::Opaque(_) => return arg.plain(),
    };
    let at = raw;
    match show {
        // Handled by `encode`, after the call.
        Show::Out(..) | Show::OutString(_) => pointer(raw),
        Show::Number => Value::from(raw),
        Show::Address => address(raw),
        Show::Handle(noun) => names.name(noun, raw),
        Show::Enum(e) => e.show(raw as i64),
        Show::Flags(e) => e.show_flags(raw),
        Show::Pointer => pointer(raw),
        _ if at == 0 => Value::Null,
        // A string or struct that cannot be read is shown by its address, never followed
        // blindly.
        Show::Str => string(at, 512, mem).unwrap_or_else(|| address(at)),
        Show::Prop => read::<CUmemAllocationProp>(at, mem, false)
            .map(|p| prop(&p))
            .unwrap_or_else(|| address(at)),
        Show::Location => read::<CUmemLocation>(at, mem, false)
            .map(|l| schema::location(l.type_, l.id))
            .unwrap_or_else(|| address(at)),
        Show::AccessDescs(count) => descs(at, bits(count), mem).unwrap_or_else(|| address(at)),
    }
}

/// A value the call wrote through an out-parameter; `declared` where the declaration
/// types it (the driver wrote exactly that type there).
fn read_out(
    p: Pointee,
    at: u64,
    declared: bool,
    names: &mut HandleNames,
    mem: &dyn Memory,
) -> Option<Value> {
    let int = |bytes: u8| -> Option<u64> {
        let mut b = [0u8; 8];
        let buf = &mut b[..usize::from(bytes)];
        let n = if declared {
            mem.read_written(at, buf)
        } else {
            mem.read(at, buf)
        };
        (n == buf.len()).then(|| u64::from_le_bytes(b))
    };
    let signed = |bytes: u8, v: u64| {
        let shift = 64 - 8 * u32::from(bytes);
        ((v << shift) as i64) >> shift
    };
    Some(match p {
        Pointee::Int {
            bytes,
            signed: true,
        } => Value::from(signed(bytes, int(bytes)?)),
        Pointee::Int { bytes, .. } => Value::from(int(bytes)?),
        Pointee::Address { bytes } => address(int(bytes)?),
        Pointee::Pointer => pointer(int(8)?),
        Pointee::Float => Value::from(f64::from(f32::from_bits(int(4)? as u32))),
        Pointee::Struct => address(at),
        Pointee::Device => Value::from(signed(4, int(4)?)),
        Pointee::Enum(e) => e.show(signed(4, int(4)?)),
        Pointee::Handle {
            noun,
            bytes,
            created,
        } => {
            let h = int(bytes)?;
            if created {
                names.fresh(noun, h)
            } else {
                names.name(noun, h)
            }
        }
        Pointee::Prop => prop(&read::<CUmemAllocationProp>(at, mem, declared)?),
    })
}

fn pointer(raw: u64) -> Value {
    if raw == 0 {
        Value::Null
    } else {
        address(raw)
    }
}

/// A `T` of the program's at `at`; `written` for an out-parameter the call wrote.
fn read<T: Copy>(at: u64, mem: &dyn Memory, written: bool) -> Option<T> {
    let mut v = std::mem::MaybeUninit::<T>::zeroed();
    // Safety: the bytes of a zeroed `T`, as a buffer for `read` to fill; `T` is one of
    // the plain C structs or integers above, for which any bytes are a value.
    let buf = unsafe {
        std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of::<T>())
    };
    let n = if written {
        mem.read_written(at, buf)
    } else {
        mem.read(at, buf)
    };
    // Safety: all of it was read (or it was zeroed), and any bytes are a `T` here.
    (n == buf.len()).then(|| unsafe { v.assume_init() })
}

/// A NUL-terminated string of at most `max` bytes.
fn string(at: u64, max: usize, mem: &dyn Memory) -> Option<Value> {
    let mut buf = vec![0u8; max];
    let n = mem.read(at, &mut buf);
    let end = buf[..n].iter().position(|b| *b == 0)?;
    Some(Value::from(
        String::from_utf8_lossy(&buf[..end]).into_owned(),
    ))
}

fn prop(p: &CUmemAllocationProp) -> Value {
    schema::prop(
        p.type_,
        p.location.type_,
        p.location.id,
        p.requested_handle_types,
        p.alloc_flags.compression_type,
    )
}

fn descs(at: u64, count: u64, mem: &dyn Memory) -> Option<Value> {
    if count > 64 {
        return None;
    }
    let size = std::mem::size_of::<CUmemAccessDesc>() as u64;
    (0..count)
        .map(|i| {
            let d = read::<CUmemAccessDesc>(at + i * size, mem, false)?;
            Some(schema::access_desc(
                d.location.type_,
                d.location.id,
                d.flags,
            ))
        })
        .collect::<Option<Vec<_>>>()
        .map(Value::Array)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This process's own memory, read directly (the tests pass only valid pointers).
    struct Own;

    impl Memory for Own {
        fn read(&self, at: u64, buf: &mut [u8]) -> usize {
            // Safety: the tests' pointers point to live values of at least that size.
            unsafe { std::ptr::copy_nonoverlapping(at as *const u8, buf.as_mut_ptr(), buf.len()) };
            buf.len()
        }
    }

    /// Memory that cannot be read, as a garbage pointer is.
    struct Unreadable;

    impl Memory for Unreadable {
        fn read(&self, _: u64, _: &mut [u8]) -> usize {
            0
        }
    }

    /// An argument by value (the tests pass no struct by value).
    fn arg<T: TraceArg>(v: T) -> Arg<'static> {
        match v.arg() {
            Arg::Unsigned(u) => Arg::Unsigned(u),
            Arg::Signed(i) => Arg::Signed(i),
            Arg::Pointer(p) => Arg::Pointer(p),
            other => panic!("{other:?}"),
        }
    }

    fn json(f: &Fields) -> String {
        serde_json::to_string(f).unwrap()
    }

    #[test]
    fn arguments_by_role_and_outputs_after_success() {
        let mut names = HandleNames::default();
        let handle: u64 = 0xabc;
        let args = [
            arg(&handle as *const u64),
            arg(2usize << 20),
            arg(std::ptr::null::<CUmemAllocationProp>()),
            arg(0u64),
        ];
        let (a, o) = encode("cuMemCreate", &args, true, &mut names, &Own);
        assert_eq!(json(&a), r#"{"size":2097152,"prop":null,"flags":0}"#);
        assert_eq!(json(&o), r#"{"handle":"handle#1"}"#);
        let (_, o) = encode("cuMemCreate", &args, false, &mut names, &Own);
        assert!(o.is_empty(), "no outputs from a failed call");
        let args = [
            arg(0x8000_0000_0000u64),
            arg(4096usize),
            arg(0usize),
            arg(0xabcu64),
            arg(0u64),
        ];
        let (a, _) = encode("cuMemMap", &args, true, &mut names, &Own);
        assert_eq!(
            json(&a),
            r#"{"ptr":"0x800000000000","size":4096,"offset":0,"handle":"handle#1","flags":0}"#
        );
    }

    #[test]
    fn strings_enums_flags_and_the_traces_older_names() {
        let mut names = HandleNames::default();
        let symbol = c"cuMemMap";
        let status: i32 = 0;
        let pfn: usize = 0x1234;
        let args = [
            arg(symbol.as_ptr()),
            arg(&pfn as *const usize),
            arg(13000i32),
            arg(0u64),
            arg(&status as *const i32),
        ];
        let (a, o) = encode("cuGetProcAddress_v2", &args, true, &mut names, &Own);
        assert_eq!(
            json(&a),
            r#"{"symbol":"cuMemMap","version":13000,"flags":0}"#
        );
        assert_eq!(
            json(&o),
            r#"{"pfn":"0x1234","status":"CU_GET_PROC_ADDRESS_SUCCESS"}"#
        );
        // A stream's flags by name; the handle written by a create gets a new name.
        let stream: usize = 0x77;
        let args = [arg(&stream as *const usize), arg(1u32)];
        let (a, o) = encode("cuStreamCreate", &args, true, &mut names, &Own);
        assert_eq!(json(&a), r#"{"flags":"CU_STREAM_NON_BLOCKING"}"#);
        assert_eq!(json(&o), r#"{"stream":"stream#1"}"#);
        let (_, o) = encode("cuStreamCreate", &args, true, &mut names, &Own);
        assert_eq!(json(&o), r#"{"stream":"stream#2"}"#);
        // A handle the trace did not name before is named by its type.
        let f: usize = 0x99;
        let args = [
            arg(&f as *const usize),
            arg(0x55usize),
            arg(symbol.as_ptr()),
        ];
        let (a, o) = encode("cuModuleGetFunction", &args, true, &mut names, &Own);
        assert_eq!(json(&a), r#"{"hmod":"module#1","name":"cuMemMap"}"#);
        assert_eq!(json(&o), r#"{"hfunc":"function#1"}"#);
        // A negative int stays negative; a device is its ordinal.
        let args = [arg(0usize), arg(1i32), arg(-1i32)];
        let (a, o) = encode("cuDeviceGetAttribute", &args, true, &mut names, &Own);
        assert_eq!(
            json(&a),
            r#"{"attribute":"CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK","dev":-1}"#
        );
        assert!(o.is_empty(), "a NULL out-parameter is not read");
    }

    /// What the trace writes differently since it follows the declaration, in the calls
    /// it typed before: flags of a named enum by name (they were numbers), and
    /// cuGetProcAddress's status by name (above); every other value as it was.
    #[test]
    fn flags_of_a_named_enum_are_names_now() {
        let mut names = HandleNames::default();
        let ctx: usize = 0x10;
        let args = [arg(&ctx as *const usize), arg(12u32), arg(0i32)];
        let (a, o) = encode("cuCtxCreate_v2", &args, true, &mut names, &Own);
        assert_eq!(
            json(&a),
            r#"{"flags":"CU_CTX_SCHED_BLOCKING_SYNC|CU_CTX_MAP_HOST","dev":0}"#
        );
        assert_eq!(json(&o), r#"{"ctx":"ctx#1"}"#);
        let args = [arg(&ctx as *const usize), arg(0u32)];
        let (a, o) = encode("cuEventCreate", &args, true, &mut names, &Own);
        assert_eq!(json(&a), r#"{"flags":"CU_EVENT_DEFAULT"}"#);
        assert_eq!(json(&o), r#"{"event":"event#1"}"#);
        // Flags of no enum stay numbers.
        let args = [arg(0u64), arg(1usize), arg(0usize), arg(0u64), arg(5u64)];
        let (a, _) = encode("cuMemMap", &args, false, &mut names, &Own);
        assert_eq!(a.get("flags").unwrap(), 5);
    }

    #[test]
    fn unreadable_pointers_are_addresses_and_unread_outputs_are_left_out() {
        let mut names = HandleNames::default();
        let args = [arg(0usize), arg(1usize), arg(0x10usize), arg(0u64)];
        let (a, _) = encode("cuMemCreate", &args, false, &mut names, &Unreadable);
        assert_eq!(a.get("prop").unwrap(), "0x10");
        let args = [arg(0x10usize), arg(1usize), arg(0usize), arg(0u64)];
        let (_, o) = encode("cuMemCreate", &args, true, &mut names, &Unreadable);
        assert!(o.is_empty());
        // An array of access descriptors, as many as its count.
        let d = [CUmemAccessDesc {
            location: CUmemLocation { type_: 1, id: 0 },
            flags: 3,
        }];
        let args = [arg(0x1000u64), arg(4096usize), arg(d.as_ptr()), arg(1usize)];
        let (a, _) = encode("cuMemSetAccess", &args, true, &mut names, &Own);
        assert_eq!(
            json(&a),
            r#"{"ptr":"0x1000","size":4096,"desc":[{"flags":"CU_MEM_ACCESS_FLAGS_PROT_READWRITE","location":{"id":0,"type":"CU_MEM_LOCATION_TYPE_DEVICE"}}],"count":1}"#
        );
    }
}
