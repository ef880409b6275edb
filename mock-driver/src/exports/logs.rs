//! Error log management (cuda.h's group CUDA_LOGS, CUDA 12.9): the model is
//! `model::logs`, fed by `boundary::report` with the messages of each refused call. All
//! five answer before cuInit. Their flags, which cuda.h reserves, are ignored: the H200
//! takes 1 (probe api_gaps3, logs-dump and logs-file).

use super::Mock;
use crate::model::error::*;
use crate::model::logs::{self, Callback, Level, Refused};
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

        fn cuLogsCurrent(; iterator_out, _flags) {
            iterator_out.write(logs::with(|l| l.current()))
        }

        /// As the H200 answers (probe api_gaps3, logs-dump): nothing to dump leaves the
        /// buffer as it was (size 0); a dump too long for the room fills it, with no NUL,
        /// and reports the size of the whole dump.
        fn cuLogsDumpToMemory(; iterator, #[raw] buffer, #[raw] size, _flags) {
            let size = crate::boundary::Out::new(size, "size is NULL")?;
            if buffer.is_null() {
                return Err(invalid("buffer is NULL"));
            }
            let room = size.read();
            let from = iterator.as_ref().map(|i| i.read());
            let dump = match logs::with(|l| l.dump(from, room)) {
                Ok(d) => d,
                Err(why) => {
                    size.write(0)?;
                    return Err(invalid(match why {
                        // The H200's message.
                        Refused::TooSmall => "Provided buffer is not large enough to write any logs to",
                        Refused::PastTheEnd => "the iterator is past the newest message",
                    }));
                }
            };
            let text = dump.text.as_bytes();
            if !text.is_empty() {
                // Safety: cuda.h's contract: `buffer` holds `*size` bytes; at most that
                // many are written.
                let out = unsafe { std::slice::from_raw_parts_mut(buffer, room) };
                for (dst, &b) in out.iter_mut().zip(text) {
                    *dst = b as c_char;
                }
                if text.len() < room {
                    out[text.len()] = 0;
                }
            }
            size.write(text.len())?;
            iterator.map_or(Ok(()), |i| i.write(dump.next))
        }

        /// The file is written afresh, empty when nothing is new (the H200, probe
        /// api_gaps3 logs-file).
        fn cuLogsDumpToFile(; iterator, path_to_file, _flags) {
            let from = iterator.as_ref().map(|i| i.read());
            let dump = logs::with(|l| l.dump(from, usize::MAX))
                .map_err(|_| invalid("the iterator is past the newest message"))?;
            let path = path_to_file.to_string_lossy().into_owned();
            std::fs::write(&path, dump.text.as_bytes())
                .map_err(|e| invalid(format!("cannot write {path}: {e}")))?;
            iterator.map_or(Ok(()), |i| i.write(dump.next))
        }
    }
}

/// Keeps the messages of a call the driver refused, its reason and the code it returns,
/// as the H200 words them (probe api_gaps3, logs-callback), and hands each to the
/// callbacks, on the calling thread, after the call's work (no lock of the mock is held
/// while they run, so they may call the driver). The H200 logs nothing of a call refused
/// before cuInit.
pub fn refused(name: &str, code: CUresult, message: &str) {
    if code == cumock_abi::result::CUDA_ERROR_NOT_INITIALIZED {
        return;
    }
    let returning = format!(
        "Returning {code} ({}) from {name}",
        cumock_abi::result_name(code).unwrap_or("?")
    );
    for text in [message, &returning] {
        if !text.is_empty() {
            log_error(text);
        }
    }
}

/// One error message: kept with its dump line's prefix, and given to each callback.
fn log_error(text: &str) {
    let callbacks = logs::with(|l| l.record(&line_prefix(), text));
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

/// A dump line's prefix as the H200 writes it: `[14:03:44.744][140030847584064][CUDA][E] `,
/// the time of day (UTC here) and the logging thread's pthread_t.
fn line_prefix() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let day_ms = now.as_millis() % 86_400_000;
    let (h, m, s, ms) = (
        day_ms / 3_600_000,
        day_ms / 60_000 % 60,
        day_ms / 1000 % 60,
        day_ms % 1000,
    );
    // Safety: pthread_self takes nothing and cannot fail.
    let thread = unsafe { libc::pthread_self() };
    format!("[{h:02}:{m:02}:{s:02}.{ms:03}][{thread}][CUDA][E] ")
}
