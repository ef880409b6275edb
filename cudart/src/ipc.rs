//! IPC memory handles. Over a driver with cuIpcGetMemHandle (NVIDIA's) the handle is the
//! driver's. Over one without (older cumock mocks) cudaMalloc memory is a VMM allocation made
//! exportable as a POSIX fd (see memory.rs), and the 64-byte cudaIpcMemHandle_t carries
//! what another process needs to take that fd: the exporter's pid and the fd's number in
//! it (plus the allocation's size and the pointer's offset). The importer takes a
//! duplicate of the fd with pidfd_open + pidfd_getfd (Linux 5.6), which the kernel allows
//! when it may ptrace the exporter: the same user, and under Yama's ptrace_scope 1 only
//! because the exporter, at its first export, allowed any process of its user to
//! (prctl PR_SET_PTRACER_ANY). Where pidfd_getfd is refused anyway (a container's seccomp
//! profile often allows it only with CAP_SYS_PTRACE), the importer asks the exporter's fd
//! service instead: a thread the exporter starts at its first export, listening on the
//! abstract Unix socket `cumock-cudart-ipc-<pid>`, which sends a duplicate of an exported
//! fd (SCM_RIGHTS) to processes of the same user (SO_PEERCRED). The exporter keeps the fd
//! open until it frees the memory, so a handle is good for as long as the memory is, as
//! with NVIDIA's handles.
//!
//! Layout (little-endian): `cumockIP` magic (8 bytes), pid (i32), fd (i32), allocation
//! size (u64), offset of the exported pointer in it (u64), zeros.

use crate::boundary::{cudart_fn, out_ref};
use crate::driver::CUipcMemHandle;
use crate::error::{self, RtError, RtResult};
use crate::runtime::{with_context, Backing, IpcMapping};
use cumock_abi::consts::*;
use cumock_abi::CUmemAccessDesc;
use cumock_fd_passing as fd_passing;
use std::ffi::{c_uint, c_void};
use std::os::fd::AsRawFd;

/// The name of the runtime's fd service (the mock driver's is `cumock-driver-ipc`).
const FD_SERVICE: &str = "cumock-cudart-ipc";

const MAGIC: &[u8; 8] = b"cumockIP";

/// The size of `cudaIpcMemHandle_t`, which the handle fills.
#[cfg(test)]
#[allow(non_upper_case_globals)]
pub const FdHandleSize: usize = size_of::<CUipcMemHandle>();

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FdHandle {
    pid: i32,
    fd: i32,
    size: u64,
    offset: u64,
}

impl FdHandle {
    fn encode(&self) -> [u8; 64] {
        let mut b = [0u8; 64];
        b[..8].copy_from_slice(MAGIC);
        b[8..12].copy_from_slice(&self.pid.to_le_bytes());
        b[12..16].copy_from_slice(&self.fd.to_le_bytes());
        b[16..24].copy_from_slice(&self.size.to_le_bytes());
        b[24..32].copy_from_slice(&self.offset.to_le_bytes());
        b
    }

    fn decode(b: &[u8; 64]) -> Option<Self> {
        if &b[..8] != MAGIC {
            return None;
        }
        let i32_at = |i: usize| i32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Some(Self {
            pid: i32_at(8),
            fd: i32_at(12),
            size: u64_at(16),
            offset: u64_at(24),
        })
    }
}

/// Whether `fd` is one this process exported for an IPC handle (the fd service's check).
fn is_exported_fd(fd: i32) -> bool {
    crate::runtime::runtime().is_ok_and(|rt| {
        rt.state
            .lock()
            .allocations
            .values()
            .any(|a| a.exported_fd == Some(fd))
    })
}

fn get_handle(ptr: u64) -> RtResult<[u8; 64]> {
    let (d, rt, _) = with_context()?;
    if ptr == 0 {
        return Err(error::invalid("devPtr is NULL"));
    }
    let found = {
        let st = rt.state.lock();
        st.allocations
            .range(..=ptr)
            .next_back()
            .map(|(b, a)| (*b, *a))
    };
    let Some((base, alloc)) = found.filter(|(b, a)| match a.backing {
        Backing::Vmm { reserved, .. } => ptr < b + reserved,
        Backing::Driver => ptr < b + a.size,
    }) else {
        // Not the runtime's VMM memory: the driver's handle, if it has them.
        let mut h = CUipcMemHandle { reserved: [0; 64] };
        d.cuIpcGetMemHandle(&mut h, ptr)?;
        return Ok(h.reserved);
    };
    let (handle, reserved) = match alloc.backing {
        Backing::Vmm { handle, reserved } => (handle, reserved),
        Backing::Driver => {
            let mut h = CUipcMemHandle { reserved: [0; 64] };
            d.cuIpcGetMemHandle(&mut h, ptr)?;
            return Ok(h.reserved);
        }
    };
    let fd = match alloc.exported_fd {
        Some(fd) => fd,
        None => {
            let mut fd = -1;
            d.cuMemExportToShareableHandle(
                &mut fd,
                handle,
                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                0,
            )?;
            fd_passing::allow_fd_taking();
            fd_passing::serve_exported_fds(FD_SERVICE, is_exported_fd);
            if let Some(a) = rt.state.lock().allocations.get_mut(&base) {
                a.exported_fd = Some(fd);
            }
            fd
        }
    };
    Ok(FdHandle {
        pid: fd_passing::pid(),
        fd,
        size: reserved,
        offset: ptr - base,
    }
    .encode())
}

cudart_fn! {
    fn cudaIpcGetMemHandle(handle: *mut CUipcMemHandle, dev_ptr: *mut c_void) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let handle = unsafe { out_ref(handle)? };
        handle.reserved = get_handle(dev_ptr as u64)?;
        Ok(())
    }
}

fn open(h: CUipcMemHandle, flags: u32) -> RtResult<u64> {
    if flags != 1 {
        return Err(error::invalid(format!(
            "flags {flags:#x} are not cudaIpcMemLazyEnablePeerAccess"
        )));
    }
    let (d, rt, _) = with_context()?;
    let Some(fh) = FdHandle::decode(&h.reserved) else {
        let mut p = 0;
        d.cuIpcOpenMemHandle(&mut p, h, flags)?;
        return Ok(p);
    };
    if fh.pid == fd_passing::pid() {
        return Err(RtError::new(
            201,
            "a handle cannot be opened in the process that exported it",
        ));
    }
    // pidfd_getfd first; where the kernel or a seccomp profile refuses it, the exporter's
    // fd service.
    // CUMOCK_IPC=socket skips pidfd_getfd (and shows the fd service works).
    let socket_only = std::env::var("CUMOCK_IPC").is_ok_and(|v| v == "socket");
    let taken = if socket_only {
        Err(std::io::Error::other("skipped (CUMOCK_IPC=socket)"))
    } else {
        fd_passing::take_fd(fh.pid, fh.fd)
    };
    let fd = taken
        .or_else(|taking| {
            fd_passing::request_fd(FD_SERVICE, fh.pid, fh.fd).map_err(|asking| format!("pidfd_getfd: {taking}; the exporter's fd service: {asking}"))
        })
        .map_err(|why| {
            error::invalid(format!(
                "fd {} of process {} could not be had ({why}): the exporter has exited or freed the memory, or is another user's",
                fh.fd, fh.pid
            ))
        })?;
    let mut handle = 0;
    // Safety: the fd is ours; the driver reads it as the POSIX handle (cast to a pointer,
    // as cuda.h says for this handle type).
    let imported = unsafe {
        d.cuMemImportFromShareableHandle(
            &mut handle,
            fd.as_raw_fd() as usize as *mut c_void,
            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
        )
    };
    drop(fd);
    imported?;
    let size = fh.size as usize;
    let mut va = 0;
    let mapped = d
        .cuMemAddressReserve(&mut va, size, 0, 0, 0)
        .and_then(|()| {
            d.cuMemMap(va, size, 0, handle, 0).and_then(|()| {
                (0..rt.device_count).try_for_each(|dev| {
                    let desc = CUmemAccessDesc {
                        location: cumock_abi::CUmemLocation {
                            type_: CU_MEM_LOCATION_TYPE_DEVICE,
                            id: dev,
                        },
                        flags: CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                    };
                    d.cuMemSetAccess(va, size, &desc, 1)
                })
            })
        });
    if let Err(e) = mapped {
        if va != 0 {
            let _ = d.cuMemUnmap(va, size);
            let _ = d.cuMemAddressFree(va, size);
        }
        let _ = d.cuMemRelease(handle);
        return Err(e);
    }
    let ptr = va + fh.offset;
    rt.state.lock().ipc_opened.insert(
        ptr,
        IpcMapping {
            base: va,
            size: fh.size,
            handle,
        },
    );
    Ok(ptr)
}

cudart_fn! {
    fn cudaIpcOpenMemHandle(dev_ptr: *mut *mut c_void, handle: CUipcMemHandle, flags: c_uint) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let dev_ptr = unsafe { out_ref(dev_ptr)? };
        *dev_ptr = open(handle, flags)? as *mut c_void;
        Ok(())
    }
}

cudart_fn! {
    fn cudaIpcCloseMemHandle(dev_ptr: *mut c_void) {
        let (d, rt, _) = with_context()?;
        // Out of the table first, as cudaFree does (memory.rs: release).
        let known = rt.state.lock().ipc_opened.remove(&(dev_ptr as u64));
        let Some(m) = known else {
            return d.cuIpcCloseMemHandle(dev_ptr as u64).map_err(|e| {
                if e.code == error::NOT_SUPPORTED {
                    error::invalid(format!("{dev_ptr:?} is not memory from cudaIpcOpenMemHandle"))
                } else {
                    e
                }
            });
        };
        let closed = (|| {
            d.cuCtxSynchronize(std::ptr::null_mut())?;
            d.cuMemUnmap(m.base, m.size as usize)?;
            d.cuMemAddressFree(m.base, m.size as usize)?;
            d.cuMemRelease(m.handle)
        })();
        if closed.is_err() {
            rt.state.lock().ipc_opened.insert(dev_ptr as u64, m);
        }
        closed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_round_trips_and_foreign_bytes_are_not_ours() {
        let h = FdHandle {
            pid: 4242,
            fd: 17,
            size: 2 << 20,
            offset: 4096,
        };
        assert_eq!(FdHandle::decode(&h.encode()), Some(h));
        assert_eq!(FdHandle::decode(&[0u8; 64]), None);
    }
}
