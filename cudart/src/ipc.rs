//! IPC memory handles. Over a driver with cuIpcGetMemHandle (NVIDIA's, and cumock's mock)
//! the handle is the driver's. Over one without (older cumock mocks) cudaMalloc memory is
//! a VMM allocation made exportable as a POSIX fd (see memory.rs), and the 64-byte
//! cudaIpcMemHandle_t is the runtime's own: it names the exporter (pid), the export (the
//! fd's number in the exporter and its inode), the allocation's size and the pointer's
//! offset in it, and carries a random secret made at the allocation's first export (128
//! bits from the kernel's RNG).
//!
//! The importer gets the fd only from the exporter's fd service (`cumock-fd-passing`: the
//! abstract Unix socket `cumock-cudart-ipc-<pid>`), sending the fd number and the secret;
//! the exporter serves only fds it exported for IPC handles, only for their secret
//! (compared in constant time), and sends a duplicate with SCM_RIGHTS. There is no
//! `pidfd_getfd` path: it would take any fd of a process its caller may ptrace, with no
//! handle and no check (VMM memory the exporter gave to someone else included), and it
//! worked under Yama only because the exporter let every process of its user ptrace it.
//! The importer then checks the fd is the file the handle names (inode, size) and the
//! offset lies inside it, before mapping. Any failed check is cudaErrorInvalidValue. The
//! exporter keeps the fd open until it frees the memory, so a handle is good for as long as
//! the memory is, as with NVIDIA's handles.
//!
//! Event handles are the driver's (stream.rs).
//!
//! Layout (little-endian): `cumockIP` magic (8 bytes), pid (i32), fd (i32), allocation
//! size (u64), offset of the exported pointer in it (u64), secret (16 bytes), inode (u64),
//! 8 zeros.

use crate::boundary::{cudart_fn, out_ref};
use crate::error::{self, RtError, RtResult};
use crate::runtime::{with_context, Backing, IpcMapping};
use cumock_abi::consts::*;
use cumock_abi::CUipcMemHandle;
use cumock_abi::CUmemAccessDesc;
use cumock_fd_passing::{self as fd_passing, Export, Secret};
use std::ffi::{c_char, c_uint, c_void};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};

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
    secret: Secret,
    inode: u64,
}

impl FdHandle {
    fn encode(&self) -> [u8; 64] {
        let mut b = [0u8; 64];
        b[..8].copy_from_slice(MAGIC);
        b[8..12].copy_from_slice(&self.pid.to_le_bytes());
        b[12..16].copy_from_slice(&self.fd.to_le_bytes());
        b[16..24].copy_from_slice(&self.size.to_le_bytes());
        b[24..32].copy_from_slice(&self.offset.to_le_bytes());
        b[32..48].copy_from_slice(&self.secret.0);
        b[48..56].copy_from_slice(&self.inode.to_le_bytes());
        b
    }

    /// The handle, if the bytes are one of ours (any other is the driver's to judge).
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
            secret: Secret(b[32..48].try_into().expect("16 bytes")),
            inode: u64_at(48),
        })
    }

    /// Whether the bytes that are not the exporter's to vouch for make sense: the offset
    /// inside the allocation, a size this process can map, the rest zeros.
    fn well_formed(&self, b: &[u8; 64]) -> bool {
        self.size > 0
            && self.size <= isize::MAX as u64
            && self.offset < self.size
            && self.fd >= 0
            && b[56..].iter().all(|x| *x == 0)
    }
}

/// The export whose fd has number `fd`, if this process exported it for an IPC handle (the
/// fd service serves nothing else): a duplicate, made under the lock so that a free
/// meanwhile cannot close it first, and its secret.
fn exported_fd(fd: i32) -> Option<Export> {
    let rt = crate::runtime::runtime().ok()?;
    let st = rt.state.lock();
    let e = st
        .allocations
        .values()
        .find_map(|a| a.exported.filter(|e| e.fd == fd))?;
    // Safety: an exported fd stays open while its allocation is in the table (cudaFree
    // takes it out before closing the fd), and the table's lock is held.
    let own = unsafe { BorrowedFd::borrow_raw(e.fd) };
    Some(Export {
        fd: own.try_clone_to_owned().ok()?,
        secret: e.secret,
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
        return Ok(h.reserved.map(|c| c as u8));
    };
    let (handle, reserved) = match alloc.backing {
        Backing::Vmm { handle, reserved } => (handle, reserved),
        Backing::Driver => {
            let mut h = CUipcMemHandle { reserved: [0; 64] };
            d.cuIpcGetMemHandle(&mut h, ptr)?;
            return Ok(h.reserved.map(|c| c as u8));
        }
    };
    let os_error = |what: &str, e: std::io::Error| {
        RtError::new(error::OPERATING_SYSTEM, format!("{what}: {e}"))
    };
    let exported = match alloc.exported {
        Some(e) => e,
        None => {
            // Without the service no importer can reach the memory: the export fails.
            fd_passing::serve_exported_fds(FD_SERVICE, exported_fd)
                .map_err(|e| os_error("the IPC fd service could not start", e))?;
            let secret = Secret::new().map_err(|e| os_error("getrandom", e))?;
            let mut fd: i32 = -1;
            // Safety: a POSIX fd handle is an int, written to a live one.
            unsafe {
                d.cuMemExportToShareableHandle(
                    (&mut fd as *mut i32).cast(),
                    handle,
                    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                    0,
                )?
            };
            let e = crate::runtime::ExportedFd { fd, secret };
            if let Some(a) = rt.state.lock().allocations.get_mut(&base) {
                a.exported = Some(e);
            }
            e
        }
    };
    // Safety: the fd was exported for this allocation and stays open until it is freed.
    let own = unsafe { BorrowedFd::borrow_raw(exported.fd) };
    let inode = fd_passing::inode(own).map_err(|e| os_error("fstat", e))?;
    Ok(FdHandle {
        pid: fd_passing::pid(),
        fd: exported.fd,
        size: reserved,
        offset: ptr - base,
        secret: exported.secret,
        inode,
    }
    .encode())
}

cudart_fn! {
    fn cudaIpcGetMemHandle(handle: *mut CUipcMemHandle, dev_ptr: *mut c_void) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let handle = unsafe { out_ref(handle)? };
        handle.reserved = get_handle(dev_ptr as u64)?.map(|b| b as c_char);
        Ok(())
    }
}

fn open(h: CUipcMemHandle, flags: u32) -> RtResult<u64> {
    if flags != 1 {
        return Err(error::invalid(format!(
            "flags {flags:#x} are not cudaIpcMemLazyEnablePeerAccess"
        )));
    }
    let bytes = h.reserved.map(|c| c as u8);
    let (d, rt, _) = with_context()?;
    let Some(fh) = FdHandle::decode(&bytes) else {
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
    if !fh.well_formed(&bytes) {
        return Err(error::invalid(format!(
            "the handle is not one cudaIpcGetMemHandle made (offset {:#x} of {:#x} bytes)",
            fh.offset, fh.size
        )));
    }
    let fd = fd_passing::request_fd(FD_SERVICE, fh.pid, fh.fd, &fh.secret).map_err(|why| {
        error::invalid(format!(
            "process {}'s fd service gave no memory for this handle ({why}): the exporter has \
             exited or freed the memory, is another user's, or the handle was not made by \
             cudaIpcGetMemHandle",
            fh.pid
        ))
    })?;
    let inode = fd_passing::inode(fd.as_fd()).ok();
    let size = fd_passing::file_size(fd.as_fd()).ok();
    if (inode, size) != (Some(fh.inode), Some(fh.size)) {
        return Err(error::invalid(format!(
            "the memory process {} served is not what the handle says (inode {inode:?}, size \
             {size:?}; the handle: {}, {})",
            fh.pid, fh.inode, fh.size
        )));
    }
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
            secret: Secret([9; 16]),
            inode: 77,
        };
        let b = h.encode();
        assert_eq!(FdHandle::decode(&b), Some(h));
        assert!(h.well_formed(&b));
        assert_eq!(FdHandle::decode(&[0u8; 64]), None);
        // Offsets outside the allocation, absurd sizes, stray bytes: not ours.
        for bad in [
            FdHandle {
                offset: 1 << 63,
                ..h
            },
            FdHandle {
                offset: 2 << 20,
                ..h
            },
            FdHandle {
                size: 0,
                offset: 0,
                ..h
            },
            FdHandle {
                size: u64::MAX,
                ..h
            },
            FdHandle { fd: -1, ..h },
        ] {
            let b = bad.encode();
            assert!(!FdHandle::decode(&b).unwrap().well_formed(&b), "{bad:?}");
        }
        let mut stray = b;
        stray[63] = 1;
        assert!(!h.well_formed(&stray));
    }
}
