//! GPU coredump settings, process-wide (cuda.h's group CUDA_COREDUMP):
//! cuCoredumpSetAttributeGlobal keeps a setting, cuCoredumpGetAttributeGlobal gives it
//! back, as the H200 did (probe cuda_python, section coredump). The mock writes no GPU
//! coredump: turning dumps on (ENABLE_ON_EXCEPTION, ENABLE_USER_TRIGGER) is kept as the
//! H200 keeps it, and says once on stderr that no dump will be written. The per-context
//! pair (cuCoredumpGetAttribute, cuCoredumpSetAttribute) is not emulated.
//!
//! Sizes, as recorded: a bool is 1 byte, the generation flags an `int`, a path always
//! 1024 bytes (a NULL value asks for the size, written to `*size`; a get into fewer bytes
//! is refused). The default paths are empty (the driver then names the file
//! core.cuda.HOSTNAME.PID when it dumps). LIGHTWEIGHT turned on sets the generation
//! flags to 63, as recorded (cuda.h's CU_COREDUMP_LIGHTWEIGHT_FLAGS are 47; the H200
//! adds SKIP_ABORT); turned off, the mock clears those bits (not recorded).

use super::Mock;
use crate::model::error::*;
use cumock_abi::*;

// CUcoredumpSettings (cuda.h).
const ENABLE_ON_EXCEPTION: CUcoredumpSettings = 1;
const TRIGGER_HOST: CUcoredumpSettings = 2;
const LIGHTWEIGHT: CUcoredumpSettings = 3;
const ENABLE_USER_TRIGGER: CUcoredumpSettings = 4;
const FILE: CUcoredumpSettings = 5;
const PIPE: CUcoredumpSettings = 6;
const GENERATION_FLAGS: CUcoredumpSettings = 7;

/// The longest path cuda.h allows, without its NUL.
const PATH_MAX: usize = 1023;

/// The generation flags LIGHTWEIGHT sets on the H200.
const LIGHTWEIGHT_FLAGS: i32 = 63;

/// The process's settings, cuda.h's defaults until set.
struct Settings {
    on_exception: bool,
    user_trigger: bool,
    trigger_host: bool,
    lightweight: bool,
    file: Vec<u8>,
    pipe: Vec<u8>,
    generation_flags: i32,
}

fn defaults() -> Settings {
    Settings {
        on_exception: false,
        user_trigger: false,
        trigger_host: true,
        lightweight: false,
        file: Vec::new(),
        pipe: Vec::new(),
        generation_flags: 0,
    }
}

static SETTINGS: parking_lot::Mutex<Option<Settings>> = parking_lot::Mutex::new(None);

/// A setting's value as the caller's memory holds it.
enum Value {
    Bool(bool),
    Int(i32),
    Path(Vec<u8>),
}

fn current(s: &Settings, attrib: CUcoredumpSettings) -> CuResult<Value> {
    Ok(match attrib {
        ENABLE_ON_EXCEPTION => Value::Bool(s.on_exception),
        ENABLE_USER_TRIGGER => Value::Bool(s.user_trigger),
        TRIGGER_HOST => Value::Bool(s.trigger_host),
        LIGHTWEIGHT => Value::Bool(s.lightweight),
        FILE => Value::Path(s.file.clone()),
        PIPE => Value::Path(s.pipe.clone()),
        GENERATION_FLAGS => Value::Int(s.generation_flags),
        _ => return Err(invalid(format!("{attrib} is not a CUcoredumpSettings"))),
    })
}

fn size_of(v: &Value) -> usize {
    match v {
        Value::Bool(_) => 1,
        Value::Int(_) => std::mem::size_of::<i32>(),
        Value::Path(_) => PATH_MAX + 1,
    }
}

impl CoredumpAttributesControlApi for Mock {
    // `*size` is the room `value` gives (read), or, with `value` NULL, where the size is
    // written.
    emulate! {
        fn cuCoredumpGetAttributeGlobal(_d; attrib, value, size) {
            let room = size.read();
            let v = current(SETTINGS.lock().get_or_insert_with(defaults), attrib)?;
            let need = size_of(&v);
            if value.is_null() {
                return size.write(need);
            }
            if room < need {
                return Err(invalid(format!(
                    "the value takes {need} bytes, *size gives {room}"
                )));
            }
            let bytes = match v {
                Value::Bool(b) => vec![u8::from(b)],
                Value::Int(i) => i.to_ne_bytes().to_vec(),
                Value::Path(mut p) => {
                    p.push(0);
                    p
                }
            };
            // Safety: `value` holds `room` >= bytes.len() bytes (cuda.h's contract for *size).
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), value.cast::<u8>(), bytes.len()) };
            Ok(())
        }

        fn cuCoredumpSetAttributeGlobal(_d; attrib, value, size) {
            let room = size.read();
            let mut guard = SETTINGS.lock();
            let s = guard.get_or_insert_with(defaults);
            let old = current(s, attrib)?;
            if value.is_null() {
                return size.write(size_of(&old));
            }
            // Byte `i` of the value, for `i` < `room`.
            // Safety: `value` holds `room` bytes (cuda.h's contract for *size); every call
            // below reads below `room`, and at most PATH_MAX + 1 bytes in all, however large
            // `*size` claims the memory is.
            let byte = |i: usize| unsafe { value.cast::<u8>().add(i).read() };
            let new = match old {
                Value::Bool(_) if room >= 1 => Value::Bool(byte(0) != 0),
                Value::Int(_) if room >= 4 => {
                    Value::Int(i32::from_ne_bytes([byte(0), byte(1), byte(2), byte(3)]))
                }
                // A path ends at its NUL or at *size, whichever is first.
                Value::Path(_) => {
                    let p: Vec<u8> = (0..room.min(PATH_MAX + 1))
                        .map(byte)
                        .take_while(|&b| b != 0)
                        .collect();
                    if p.len() > PATH_MAX {
                        return Err(invalid(format!(
                            "a coredump path is at most {PATH_MAX} characters"
                        )));
                    }
                    Value::Path(p)
                }
                _ => {
                    let need = size_of(&old);
                    return Err(invalid(format!(
                        "the value takes {need} bytes, *size gives {room}"
                    )));
                }
            };
            if let (ENABLE_ON_EXCEPTION | ENABLE_USER_TRIGGER, Value::Bool(true)) = (attrib, &new) {
                static SAID: std::sync::Once = std::sync::Once::new();
                SAID.call_once(|| {
                    eprintln!(
                        "cumock: GPU coredumps turned on (cuCoredumpSetAttributeGlobal): the \
                         setting is kept, but the mock writes no coredump"
                    )
                });
            }
            match (attrib, new) {
                (ENABLE_ON_EXCEPTION, Value::Bool(b)) => s.on_exception = b,
                (ENABLE_USER_TRIGGER, Value::Bool(b)) => s.user_trigger = b,
                (TRIGGER_HOST, Value::Bool(b)) => s.trigger_host = b,
                (LIGHTWEIGHT, Value::Bool(b)) => {
                    s.lightweight = b;
                    s.generation_flags = if b {
                        s.generation_flags | LIGHTWEIGHT_FLAGS
                    } else {
                        s.generation_flags & !LIGHTWEIGHT_FLAGS
                    };
                }
                (FILE, Value::Path(p)) => s.file = p,
                (PIPE, Value::Path(p)) => s.pipe = p,
                (GENERATION_FLAGS, Value::Int(f)) => s.generation_flags = f,
                _ => unreachable!("a setting's value has its kind"),
            }
            Ok(())
        }
    }
}
