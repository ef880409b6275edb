//! Legacy interprocess communication over `model::ipc`: a device allocation's and an
//! event's handles, passed to another process and opened there (cuIpcGetMemHandle,
//! cuIpcOpenMemHandle, cuIpcCloseMemHandle, cuIpcGetEventHandle, cuIpcOpenEventHandle).
//! cuda.h files them under `MemoryApi`, whose methods (exports/mod.rs) call these.

use cumock_abi::*;
use std::ffi::{c_char, c_uint};

/// CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING: what an opened event is.
const CU_EVENT_INTERPROCESS_FLAGS: c_uint = 0x4 | 0x2;

emulate! {
    pub(super) fn cuIpcGetMemHandle(d; handle, dptr) {
        let bytes = d.ipc_get_mem_handle(dptr.get())?;
        handle.write(CUipcMemHandle {
            reserved: bytes.map(|b| b as c_char),
        })
    }

    pub(super) fn cuIpcOpenMemHandle_v2(d; pdptr, handle, flags) {
        pdptr.write(d.ipc_open_mem_handle(&handle.reserved.map(|b| b as u8), flags)?)
    }

    pub(super) fn cuIpcCloseMemHandle(d; dptr) {
        d.ipc_close_mem_handle(dptr.get())
    }

    pub(super) fn cuIpcGetEventHandle(d; handle, #[nonnull] event) {
        match d.ipc_get_event_handle(event) {
            Ok(bytes) => handle.write(CUipcEventHandle {
                reserved: bytes.map(|b| b as c_char),
            }),
            Err((e, zeroed)) => {
                // Observed: the H200 writes the handle of a live event that is not
                // interprocess before refusing it.
                if zeroed {
                    handle.write(CUipcEventHandle { reserved: [0; 64] })?;
                }
                Err(e)
            }
        }
    }

    pub(super) fn cuIpcOpenEventHandle(d; ph, handle) {
        d.ipc_check_event_handle(&handle.reserved.map(|b| b as u8))?;
        // Another process's event. A record of an interprocess event returns once the
        // work before it has run (`Driver::event_record`), so whatever that process
        // recorded is complete by the time this one can learn of it: an event of this
        // process that is complete stands for it (interprocess events have no timing, as
        // CUDA requires); records of it here return the same way.
        let e = d.event_create(CU_EVENT_INTERPROCESS_FLAGS)?;
        d.ipc_event_created(e);
        ph.write_key(e)
    }
}
