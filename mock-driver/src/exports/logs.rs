//! Error log management (cuda.h's group CUDA_LOGS, CUDA 12.9): the model is
//! `model::logs`, fed by `boundary::report` with a message for each refused call. All five
//! answer before cuInit. What cuda.h leaves open awaits the H200's recording (probe
//! api_gaps3, sections logs-*); until then the mock follows cuda.h's words.

use super::Mock;
use crate::model::error::*;
use crate::model::logs::{self, Callback, Level};
use cumock_abi::*;
use std::ffi::{c_char, c_void, CString};

impl ErrorLogApi for Mock {
    emulate! {
        // cuda.h: the handle's location is optional.
        fn cuLogsRegisterCallback(; #[raw] callback_func, user_data, #[raw] callback_out) {
            let function = callback_func.ok_or_else(|| invalid("callbackFunc is NULL"))?;
            let handle = logs::with(|l| {
                l.register(Callback {
                    function: function as usize,
                    data: user_data as usize,
                })
            });
            match crate::boundary::Out::maybe(callback_out) {
                Some(out) => out.write(handle as CUlogsCallbackHandle),
                None => Ok(()),
            }
        }

        fn cuLogsUnregisterCallback(; #[raw] callback) {
            if logs::with(|l| l.unregister(callback as u64)) {
                Ok(())
            } else {
                Err(invalid("callback is not a registered log callback"))
            }
        }

        fn cuLogsCurrent(; iterator_out, flags) {
            reserved(flags)?;
            iterator_out.write(logs::with(|l| l.current()))
        }

        fn cuLogsDumpToMemory(; iterator, #[raw] buffer, #[raw] size, flags) {
            reserved(flags)?;
            let size = crate::boundary::Out::new(size, "size is NULL")?;
            if buffer.is_null() {
                return Err(invalid("buffer is NULL"));
            }
            let room = size.read();
            let from = iterator.as_ref().map(|i| i.read());
            let dump = match logs::with(|l| l.dump(from, room)) {
                Some(d) => d,
                None => {
                    size.write(0)?;
                    return Err(invalid(format!(
                        "a buffer of {room} bytes holds none of the log's messages"
                    )));
                }
            };
            // Safety: cuda.h's contract: `buffer` holds `*size` bytes; the dump is shorter
            // than `room` (its NUL included).
            let out = unsafe { std::slice::from_raw_parts_mut(buffer, room) };
            for (dst, &b) in out.iter_mut().zip(dump.text.as_bytes()) {
                *dst = b as c_char;
            }
            if room > 0 {
                out[dump.text.len()] = 0;
            }
            size.write(dump.text.len())?;
            iterator.map_or(Ok(()), |i| i.write(dump.next))
        }

        fn cuLogsDumpToFile(; iterator, path_to_file, flags) {
            reserved(flags)?;
            let from = iterator.as_ref().map(|i| i.read());
            let dump = logs::with(|l| l.dump(from, usize::MAX))
                .ok_or_else(|| invalid("the log holds nothing to dump"))?;
            let path = path_to_file.to_string_lossy().into_owned();
            std::fs::write(&path, dump.text.as_bytes())
                .map_err(|e| invalid(format!("cannot write {path}: {e}")))?;
            iterator.map_or(Ok(()), |i| i.write(dump.next))
        }
    }
}

/// cuda.h: "Reserved for future use, must be 0".
fn reserved(flags: std::ffi::c_uint) -> CuResult<()> {
    if flags != 0 {
        return Err(invalid(format!("flags {flags:#x} must be 0")));
    }
    Ok(())
}

/// Keeps the message of a call the driver refused, and hands it to the callbacks, on the
/// calling thread, after the call's work (no lock of the mock is held while they run, so
/// they may call the driver). The log's own calls are not logged.
pub fn refused(name: &str, code: CUresult, message: &str) {
    if name.starts_with("cuLogs") {
        return;
    }
    let code = cumock_abi::result_name(code).unwrap_or("?");
    let text = if message.is_empty() {
        format!("{name} failed: {code}")
    } else {
        format!("{name} failed: {code}: {message}")
    };
    let callbacks = logs::with(|l| l.record(text.clone()));
    if callbacks.is_empty() {
        return;
    }
    let Ok(c_text) = CString::new(text.replace('\0', " ")) else {
        return;
    };
    for c in callbacks {
        // Safety: `function` is the CUlogsCallback the program registered (checked
        // not NULL then); each call gets its own copy of the text, which it may write.
        unsafe {
            let f: unsafe extern "C" fn(*mut c_void, CUlogLevel, *mut c_char, usize) =
                std::mem::transmute(c.function);
            let mut copy = c_text.as_bytes_with_nul().to_vec();
            f(
                c.data as *mut c_void,
                Level::Error as CUlogLevel,
                copy.as_mut_ptr().cast(),
                copy.len() - 1,
            );
        }
    }
}
