//! GPU coredump settings, process-wide (cuda.h's group CUDA_COREDUMP):
//! cuCoredumpSetAttributeGlobal keeps a setting, cuCoredumpGetAttributeGlobal gives it
//! back. The mock writes no GPU coredump, so turning dumps on (ENABLE_ON_EXCEPTION,
//! ENABLE_USER_TRIGGER set to true) is CUDA_ERROR_NOT_SUPPORTED, saying so; turning them
//! off, and what a dump would hold or where it would go, are kept as given. The
//! per-context pair (cuCoredumpGetAttribute, cuCoredumpSetAttribute) is not emulated.
//!
//! Sizes, as cuda.h lays the values out: a bool is 1 byte, the generation flags an
//! `int`, a path a string of at most 1023 characters. A NULL value asks for the size
//! (written to `*size`); cuda.h leaves open how the H200 measures a path (the probe
//! cuda_python records it): here, the current one's length with its NUL.

use super::Mock;
use crate::boundary::drv;
use crate::model::error::*;
use cumock_abi::*;
use std::ffi::c_void;

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

/// The process's settings, cuda.h's defaults until set.
struct Settings {
    trigger_host: bool,
    lightweight: bool,
    file: Vec<u8>,
    pipe: Vec<u8>,
    generation_flags: i32,
}

fn defaults() -> Settings {
    // cuda.h: core.cuda.HOSTNAME.PID and corepipe.cuda.HOSTNAME.PID.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let tail = format!("cuda.{}.{}", host.trim(), std::process::id());
    Settings {
        trigger_host: true,
        lightweight: false,
        file: format!("core.{tail}").into_bytes(),
        pipe: format!("corepipe.{tail}").into_bytes(),
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
        // Never on: the mock writes no dump (see the module).
        ENABLE_ON_EXCEPTION | ENABLE_USER_TRIGGER => Value::Bool(false),
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
        Value::Path(p) => p.len() + 1,
    }
}

/// `*size`, which the caller must give.
///
/// # Safety
/// `size` is NULL or points to a `size_t` the caller owns.
unsafe fn read_size(size: *mut usize) -> CuResult<usize> {
    if size.is_null() {
        return Err(invalid("size is NULL"));
    }
    // Safety: not NULL (checked above); the caller's size_t.
    Ok(unsafe { size.read_unaligned() })
}

impl CoredumpAttributesControlApi for Mock {
    unsafe fn cuCoredumpGetAttributeGlobal(
        attrib: CUcoredumpSettings,
        value: *mut c_void,
        size: *mut usize,
    ) -> CuResult<()> {
        drv()?;
        // Safety: the caller's size_t, or NULL (refused).
        let room = unsafe { read_size(size) }?;
        let v = current(SETTINGS.lock().get_or_insert_with(defaults), attrib)?;
        let need = size_of(&v);
        if value.is_null() {
            // Safety: checked not NULL by read_size.
            unsafe { size.write_unaligned(need) };
            return Ok(());
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

    unsafe fn cuCoredumpSetAttributeGlobal(
        attrib: CUcoredumpSettings,
        value: *mut c_void,
        size: *mut usize,
    ) -> CuResult<()> {
        drv()?;
        // Safety: the caller's size_t, or NULL (refused).
        let room = unsafe { read_size(size) }?;
        let mut guard = SETTINGS.lock();
        let s = guard.get_or_insert_with(defaults);
        let old = current(s, attrib)?;
        if value.is_null() {
            // Safety: checked not NULL by read_size.
            unsafe { size.write_unaligned(size_of(&old)) };
            return Ok(());
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
        match (attrib, new) {
            (ENABLE_ON_EXCEPTION | ENABLE_USER_TRIGGER, Value::Bool(true)) => {
                return Err(not_supported(
                    "cumock writes no GPU coredump: it cannot turn coredumps on",
                ))
            }
            (ENABLE_ON_EXCEPTION | ENABLE_USER_TRIGGER, _) => {}
            (TRIGGER_HOST, Value::Bool(b)) => s.trigger_host = b,
            (LIGHTWEIGHT, Value::Bool(b)) => s.lightweight = b,
            (FILE, Value::Path(p)) => s.file = p,
            (PIPE, Value::Path(p)) => s.pipe = p,
            (GENERATION_FLAGS, Value::Int(f)) => s.generation_flags = f,
            _ => unreachable!("a setting's value has its kind"),
        }
        Ok(())
    }
}
