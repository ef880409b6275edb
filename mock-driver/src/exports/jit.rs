//! The JIT options shared by cuModuleLoadDataEx, cuLibraryLoad*, cuLinkCreate and
//! cuLinkAdd*: most tune ptxas (optimisation level, register limits), which the host
//! executor has no use for; the log buffers and the wall time are outputs, written as
//! cuda.h documents them, so that a program that prints the error log after a failed
//! load prints why.

use crate::model::error::*;
use crate::model::ids::LinkId;
use cumock_abi::CUjit_option;
use std::ffi::{c_char, c_uint, c_void};
use std::time::Instant;

const CU_JIT_MAX_REGISTERS: CUjit_option = 0;
const CU_JIT_WALL_TIME: CUjit_option = 2;
const CU_JIT_INFO_LOG_BUFFER: CUjit_option = 3;
const CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: CUjit_option = 4;
const CU_JIT_ERROR_LOG_BUFFER: CUjit_option = 5;
const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: CUjit_option = 6;
const CU_JIT_LOG_VERBOSE: CUjit_option = 12;
/// cuda.h 13.0's CU_JIT_NUM_OPTIONS: options at or past it are not options.
const CU_JIT_NUM_OPTIONS: CUjit_option = 35;

/// One log buffer the program gave: where, how large, and the option-value slot its
/// size came in (and the filled size goes back out).
#[derive(Clone, Copy)]
struct LogBuffer {
    /// Addresses, not pointers, so that a link state's outputs can wait in a table for
    /// cuLinkComplete (read and written only through `finish`, under its contract).
    buf: usize,
    size_slot: Option<usize>,
    /// The size the program gave, read once: the slot is overwritten with the filled
    /// size, and a link state writes its logs more than once.
    cap: usize,
}

/// The output options of one call, read from the program's arrays.
pub struct JitOutputs {
    started: Instant,
    /// CU_JIT_MAX_REGISTERS: the registers a thread may use at most.
    pub max_registers: Option<u32>,
    wall_time: Option<usize>,
    /// CU_JIT_LOG_VERBOSE: the info log gets ptxas's lines (`-v`), else stays empty.
    verbose: bool,
    info: Option<LogBuffer>,
    error: Option<LogBuffer>,
}

impl JitOutputs {
    /// Reads `num` options and their values.
    ///
    /// # Safety
    /// When `num` is non-zero, `options` and `values` are NULL or point to `num` entries
    /// each, writable, as cuda.h requires of callers; the log buffers the values name
    /// are writable for the sizes given with them.
    pub unsafe fn read(
        num: c_uint,
        options: *const CUjit_option,
        values: *mut *mut c_void,
    ) -> CuResult<JitOutputs> {
        let mut out = JitOutputs {
            started: Instant::now(),
            max_registers: None,
            wall_time: None,
            verbose: false,
            info: None,
            error: None,
        };
        if num == 0 {
            return Ok(out);
        }
        if options.is_null() || values.is_null() {
            return Err(invalid(format!(
                "{num} JIT options, but the options or their values are NULL"
            )));
        }
        let (mut info_buf, mut info_size) = (None, None);
        let (mut err_buf, mut err_size) = (None, None);
        for i in 0..num as usize {
            // Safety: `num` entries each, per the caller's contract.
            let (opt, slot) = unsafe { (*options.add(i), values.add(i)) };
            match opt {
                CU_JIT_WALL_TIME => out.wall_time = Some(slot as usize),
                // Safety: the slot is readable (above); it holds an int.
                CU_JIT_LOG_VERBOSE => out.verbose = unsafe { *slot } as usize as u32 != 0,
                // Safety: the slot is readable (above); it holds an unsigned int.
                CU_JIT_MAX_REGISTERS => out.max_registers = Some(unsafe { *slot } as usize as u32),
                // Safety: the slot is readable (above); it holds the value itself.
                CU_JIT_INFO_LOG_BUFFER => info_buf = Some(unsafe { *slot } as *mut c_char),
                CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES => info_size = Some(slot as usize),
                // Safety: as above.
                CU_JIT_ERROR_LOG_BUFFER => err_buf = Some(unsafe { *slot } as *mut c_char),
                CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES => err_size = Some(slot as usize),
                o if !(0..CU_JIT_NUM_OPTIONS).contains(&o) => {
                    return Err(invalid(format!("{o} is not a CUjit_option")))
                }
                _ => {}
            }
        }
        let buffer = |buf: Option<*mut c_char>, size_slot| {
            buf.filter(|b| !b.is_null()).map(|buf| LogBuffer {
                buf: buf as usize,
                size_slot,
                // Safety: a slot of the arrays read above; the size is an unsigned int
                // in a pointer-sized value.
                cap: size_slot.map_or(0, |s| unsafe { *(s as *const *mut c_void) } as usize as u32
                    as usize),
            })
        };
        out.info = buffer(info_buf, info_size);
        out.error = buffer(err_buf, err_size);
        Ok(out)
    }

    /// Writes the logs (`error` is the failure's reason, if the call failed) and the
    /// wall time.
    ///
    /// # Safety
    /// The arrays and buffers `read` was given are still valid.
    pub unsafe fn finish(&self, info: &str, error: Option<&str>) {
        // Safety: the caller's contract, passed on.
        unsafe {
            if let Some(b) = self.info {
                write_log(b, info);
            }
            if let Some(b) = self.error {
                write_log(b, error.unwrap_or(""));
            }
            if let Some(slot) = self.wall_time {
                // "Overwrites the option value with the total wall clock time, in
                // milliseconds": a float in the slot's first four bytes.
                let ms = self.started.elapsed().as_secs_f32() * 1000.0;
                (slot as *mut f32).write_unaligned(ms);
            }
        }
    }

    /// `finish` for a call's result.
    ///
    /// # Safety
    /// As `finish`.
    pub unsafe fn finish_with<T>(&self, r: &CuResult<T>) {
        // Safety: the caller's contract.
        unsafe { self.finish_verbose(r, "") }
    }

    /// `finish` for a call's result, with the info log's lines for CU_JIT_LOG_VERBOSE
    /// (written only when the program asked for them).
    ///
    /// # Safety
    /// As `finish`.
    pub unsafe fn finish_verbose<T>(&self, r: &CuResult<T>, verbose_info: &str) {
        let reason = r.as_ref().err().map(|e| {
            let code = cumock_abi::result_name(e.code).unwrap_or("?");
            format!("cumock: {code}: {}", e.message)
        });
        let info = if self.verbose { verbose_info } else { "" };
        // Safety: the caller's contract.
        unsafe { self.finish(info, reason.as_deref()) }
    }
}

/// Writes `text` into a log buffer, cut to its size with room for the NUL, and a size
/// back into the size slot as the H200 writes it (ci/gpu-checks.sh, logs): the text's
/// length when it fits, the buffer's size when it was cut. No size option means no room:
/// cuda.h gives the buffer no other size.
///
/// # Safety
/// `b.buf` is writable for the size in `b.size_slot`; the slot is writable.
unsafe fn write_log(b: LogBuffer, text: &str) {
    let Some(slot) = b.size_slot.map(|s| s as *mut *mut c_void) else {
        return;
    };
    let buf = b.buf as *mut u8;
    let cap = b.cap;
    if cap == 0 {
        return;
    }
    let n = text.len().min(cap - 1);
    // Safety: `n + 1 <= cap` bytes of a buffer the program says holds `cap`.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), buf, n);
        buf.add(n).write(0);
        *slot = if n < text.len() { cap } else { n } as *mut c_void;
    }
}

/// The outputs cuLinkCreate was given, by link state, written when the link completes
/// (or an input fails).
static LINK_OUTPUTS: std::sync::Mutex<Option<std::collections::HashMap<LinkId, JitOutputs>>> =
    std::sync::Mutex::new(None);

pub fn keep_link_outputs(link: LinkId, outputs: JitOutputs) {
    if let Ok(mut m) = LINK_OUTPUTS.lock() {
        m.get_or_insert_with(Default::default).insert(link, outputs);
    }
}

/// Writes a link state's logs for a result of one of its calls (`verbose_info`: the info
/// log's lines, for cuLinkComplete).
///
/// # Safety
/// The arrays and buffers cuLinkCreate was given are still valid (cuda.h: until
/// cuLinkDestroy).
pub unsafe fn finish_link<T>(link: LinkId, r: &CuResult<T>, verbose_info: &str) {
    if let Ok(m) = LINK_OUTPUTS.lock() {
        if let Some(o) = m.as_ref().and_then(|m| m.get(&link)) {
            // Safety: the caller's contract.
            unsafe { o.finish_verbose(r, verbose_info) };
        }
    }
}

pub fn forget_link_outputs(link: LinkId) {
    if let Ok(mut m) = LINK_OUTPUTS.lock() {
        if let Some(m) = m.as_mut() {
            m.remove(&link);
        }
    }
}
