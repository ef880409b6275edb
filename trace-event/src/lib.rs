//! One trace event: a driver call, its arguments, what it returned through its
//! out-pointers, its result, thread and time. The mock (`CUMOCK_TRACE`) and the
//! pass-through recorder write it, `cumock trace2case` reads it; all three use this type.
//!
//! A line of a trace:
//!
//! ```json
//! {"seq":4,"fn":"cuMemMap","args":{"ptr":"0x7f2a00200000","size":2097152,"offset":0,"handle":"handle#1","flags":0},"out":{},"result":"CUDA_SUCCESS","thread":4242,"t_us":118}
//! ```
//!
//! Each value is written by what it is, as the declaration's roles say ([`encode`], both
//! writers'; [`schema`] holds what the declaration cannot say):
//! sizes, counts, flags and device ordinals as numbers; device and host addresses as hex
//! strings; handles (contexts, streams, events, allocation handles) by name, `ctx#1`,
//! `handle#2`, in order of first appearance, as transcripts name handles a case did not;
//! enums by their name in cuda.h; C strings as strings; a NULL pointer as `null`.
//! Out-pointers are read only after a call that succeeded. A reader asks for a field
//! as what it expects ([`Reader`]); a missing field, or one of another kind, is an error
//! that names the call and the field, never a zero.

pub mod encode;
pub mod schema;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

pub use serde_json::Value;

/// One driver call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// The call's number in the trace, from 0.
    pub seq: u64,
    /// The exported name (`cuMemMap`, `cuCtxCreate_v4`), or `__driver` for the line that
    /// says which driver a recording went to.
    #[serde(rename = "fn")]
    pub function: String,
    pub args: Fields,
    /// What the call wrote through its out-pointers; empty when it failed.
    pub out: Fields,
    /// The CUresult by name, or `CUresult(N)` for a code cuda.h does not name.
    pub result: String,
    pub thread: i64,
    /// Microseconds since the trace began.
    pub t_us: u64,
}

impl Event {
    pub fn succeeded(&self) -> bool {
        self.result == "CUDA_SUCCESS"
    }

    /// The call's arguments, read by kind.
    pub fn args(&self) -> Reader<'_> {
        Reader {
            function: &self.function,
            path: "args".into(),
            fields: Cow::Borrowed(&self.args),
        }
    }

    /// The call's outputs, read by kind.
    pub fn out(&self) -> Reader<'_> {
        Reader {
            function: &self.function,
            path: "out".into(),
            fields: Cow::Borrowed(&self.out),
        }
    }

    /// One JSON line, without the newline.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("an event is plain data")
    }

    pub fn from_line(line: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(line)
    }
}

/// A CUresult as a trace shows it.
pub fn result_name(code: u32) -> String {
    cumock_abi::result_name(code)
        .map(str::to_owned)
        .unwrap_or_else(|| format!("CUresult({code})"))
}

/// Named values in the order the call declares them (a JSON object).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fields(pub Vec<(String, Value)>);

impl Fields {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, name: &str, value: Value) {
        self.0.push((name.to_owned(), value));
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Fields {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Fields;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of named values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Fields, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, Value>()? {
                    out.push((k, v));
                }
                Ok(Fields(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Why a field could not be read: the call, the field's path and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError(pub String);

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FieldError {}

/// Reads fields by the kind the reader expects.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    function: &'a str,
    path: String,
    fields: Cow<'a, Fields>,
}

impl<'a> Reader<'a> {
    fn field(&self, name: &str) -> Result<&Value, FieldError> {
        self.fields
            .get(name)
            .ok_or_else(|| self.error(name, "is missing"))
    }

    fn error(&self, name: &str, what: &str) -> FieldError {
        FieldError(format!("{}: {}.{name} {what}", self.function, self.path))
    }

    fn wrong(&self, name: &str, want: &str, v: &Value) -> FieldError {
        self.error(name, &format!("is not {want}: {v}"))
    }

    /// A number: a size, a count, flags, a device ordinal.
    pub fn int(&self, name: &str) -> Result<u64, FieldError> {
        let v = self.field(name)?;
        v.as_u64()
            .or_else(|| v.as_i64().map(|i| i as u64))
            .ok_or_else(|| self.wrong(name, "a number", v))
    }

    /// An address (`"0x7f2a00200000"`); NULL is 0.
    pub fn addr(&self, name: &str) -> Result<u64, FieldError> {
        let v = self.field(name)?;
        match v {
            Value::Null => Ok(0),
            Value::String(s) => s
                .strip_prefix("0x")
                .and_then(|h| u64::from_str_radix(h, 16).ok())
                .ok_or_else(|| self.wrong(name, "an address", v)),
            _ => Err(self.wrong(name, "an address", v)),
        }
    }

    /// A handle by its name in the trace (`ctx#1`); NULL is `None`.
    pub fn handle(&self, name: &str) -> Result<Option<&str>, FieldError> {
        let v = self.field(name)?;
        match v {
            Value::Null => Ok(None),
            Value::String(s) if s.contains('#') => Ok(Some(s)),
            _ => Err(self.wrong(name, "a handle", v)),
        }
    }

    /// An enum's value, written by name (or as a number where cuda.h names none).
    pub fn enumerated(&self, name: &str, e: &schema::Enum) -> Result<i64, FieldError> {
        let v = self.field(name)?;
        match v {
            Value::String(s) => e
                .value(s)
                .ok_or_else(|| self.wrong(name, &format!("a {}", e.name), v)),
            _ => v
                .as_i64()
                .ok_or_else(|| self.wrong(name, &format!("a {}", e.name), v)),
        }
    }

    /// Flags of an enum, written as names joined by `|`.
    pub fn flags(&self, name: &str, e: &schema::Enum) -> Result<u64, FieldError> {
        let v = self.field(name)?;
        match v {
            Value::String(s) => s.split('|').try_fold(0u64, |acc, n| {
                let bit = e.value(n).or_else(|| n.parse().ok());
                bit.map(|b| acc | b as u64)
                    .ok_or_else(|| self.wrong(name, &format!("flags of {}", e.name), v))
            }),
            _ => v
                .as_u64()
                .ok_or_else(|| self.wrong(name, &format!("flags of {}", e.name), v)),
        }
    }

    /// A C string.
    pub fn string(&self, name: &str) -> Result<&str, FieldError> {
        let v = self.field(name)?;
        v.as_str().ok_or_else(|| self.wrong(name, "a string", v))
    }

    /// A struct, read by its fields; NULL is `None`.
    pub fn structure(&self, name: &str) -> Result<Option<Reader<'a>>, FieldError> {
        let v = self.field(name)?;
        match v {
            Value::Null => Ok(None),
            Value::Object(_) => {
                let fields = Fields::deserialize(v).map_err(|_| self.wrong(name, "a struct", v))?;
                Ok(Some(Reader {
                    function: self.function,
                    path: format!("{}.{name}", self.path),
                    fields: Cow::Owned(fields),
                }))
            }
            _ => Err(self.wrong(name, "a struct", v)),
        }
    }

    /// A list of structs (access descriptors); NULL is empty.
    pub fn structures(&self, name: &str) -> Result<Vec<Reader<'a>>, FieldError> {
        let v = self.field(name)?;
        match v {
            Value::Null => Ok(Vec::new()),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let fields = Fields::deserialize(item)
                        .map_err(|_| self.wrong(&format!("{name}[{i}]"), "a struct", item))?;
                    Ok(Reader {
                        function: self.function,
                        path: format!("{}.{name}[{i}]", self.path),
                        fields: Cow::Owned(fields),
                    })
                })
                .collect(),
            _ => Err(self.wrong(name, "a list", v)),
        }
    }
}

/// Names for handles, in order of first appearance per kind (`ctx#1`, `handle#2`), as
/// transcripts name the handles a case did not. A handle a call creates gets a new name
/// even where its value was another's (the real driver's handles are heap pointers).
#[derive(Debug, Default)]
pub struct HandleNames {
    names: HashMap<(&'static str, u64), String>,
    counts: HashMap<&'static str, usize>,
}

impl HandleNames {
    /// The name of a handle the program passed or got back; NULL is `null`.
    pub fn name(&mut self, kind: &'static str, value: u64) -> Value {
        if value == 0 {
            return Value::Null;
        }
        if let Some(n) = self.names.get(&(kind, value)) {
            return Value::String(n.clone());
        }
        self.fresh(kind, value)
    }

    /// The name of a handle a call has just created.
    pub fn fresh(&mut self, kind: &'static str, value: u64) -> Value {
        if value == 0 {
            return Value::Null;
        }
        let n = self.counts.entry(kind).or_default();
        *n += 1;
        let name = format!("{kind}#{n}");
        self.names.insert((kind, value), name.clone());
        Value::String(name)
    }
}

/// An address as a trace shows it.
pub fn address(v: u64) -> Value {
    Value::String(format!("{v:#x}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(line: &str) -> Event {
        Event::from_line(line).unwrap()
    }

    #[test]
    fn an_event_round_trips_and_keeps_its_order() {
        let mut args = Fields::new();
        args.push("ptr", address(0x7f2a_0020_0000));
        args.push("size", Value::from(2u64 << 20));
        args.push("handle", Value::from("handle#1"));
        let e = Event {
            seq: 4,
            function: "cuMemMap".into(),
            args,
            out: Fields::new(),
            result: "CUDA_SUCCESS".into(),
            thread: 7,
            t_us: 118,
        };
        let line = e.to_line();
        assert_eq!(
            line,
            r#"{"seq":4,"fn":"cuMemMap","args":{"ptr":"0x7f2a00200000","size":2097152,"handle":"handle#1"},"out":{},"result":"CUDA_SUCCESS","thread":7,"t_us":118}"#
        );
        assert_eq!(event(&line), e);
    }

    #[test]
    fn a_missing_field_is_an_error_not_a_zero() {
        let e = event(
            r#"{"seq":0,"fn":"cuMemMap","args":{"ptr":"0x1000"},"out":{},"result":"CUDA_SUCCESS","thread":1,"t_us":0}"#,
        );
        assert_eq!(e.args().addr("ptr").unwrap(), 0x1000);
        assert_eq!(
            e.args().int("size").unwrap_err().to_string(),
            "cuMemMap: args.size is missing"
        );
        assert!(e
            .args()
            .int("ptr")
            .unwrap_err()
            .to_string()
            .contains("is not a number"));
        // A line without its result is refused whole.
        assert!(Event::from_line(
            r#"{"seq":0,"fn":"cuInit","args":{},"out":{},"thread":1,"t_us":0}"#
        )
        .is_err());
    }

    #[test]
    fn enums_flags_handles_and_structs_by_kind() {
        let e = event(
            r#"{"seq":0,"fn":"cuMemCreate","args":{"size":2097152,"prop":{"type":"CU_MEM_ALLOCATION_TYPE_PINNED","location":{"type":"CU_MEM_LOCATION_TYPE_DEVICE","id":0},"handle_types":"CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR|CU_MEM_HANDLE_TYPE_FABRIC","compression":0},"flags":0},"out":{"handle":"handle#1"},"result":"CUDA_SUCCESS","thread":1,"t_us":0}"#,
        );
        let prop = e.args().structure("prop").unwrap().unwrap();
        let loc = prop.structure("location").unwrap().unwrap();
        assert_eq!(loc.enumerated("type", &schema::LOCATION_TYPE).unwrap(), 1);
        assert_eq!(prop.flags("handle_types", &schema::HANDLE_TYPE).unwrap(), 9);
        assert_eq!(e.out().handle("handle").unwrap(), Some("handle#1"));
        assert!(loc
            .int("nope")
            .unwrap_err()
            .to_string()
            .contains("args.prop.location.nope is missing"));
    }

    #[test]
    fn handles_are_named_in_order_and_anew_when_created() {
        let mut n = HandleNames::default();
        assert_eq!(n.name("ctx", 0x55), "ctx#1");
        assert_eq!(n.name("ctx", 0x55), "ctx#1");
        assert_eq!(n.name("handle", 0x55), "handle#1");
        assert_eq!(n.fresh("ctx", 0x55), "ctx#2");
        assert_eq!(n.name("ctx", 0x55), "ctx#2");
        assert_eq!(n.name("ctx", 0), Value::Null);
    }
}
