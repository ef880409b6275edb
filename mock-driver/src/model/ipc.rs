//! Legacy IPC (cuIpcGetMemHandle, cuIpcOpenMemHandle, cuIpcCloseMemHandle, and the event
//! handles): another process opening cuMemAlloc memory of this one, so that both see the
//! same bytes.
//!
//! How: the allocation's bytes move to a file of their own (`os::MemFile`, as for
//! cuMemExportToShareableHandle), and the 64-byte handle names that file: the exporter's
//! pid, the number of the file's own fd in it, and the file's inode. The importer takes
//! a duplicate of the fd (the `cumock-fd-passing` crate: pidfd_getfd, or the exporter's fd service)
//! and maps it into a range of its own. The fd is the allocation's own, so it closes when
//! the memory is freed, and a handle of freed memory cannot be opened, as on the H200; the
//! inode tells the memory from a later file that took the same fd number. cumock's
//! runtime (`cudart/src/ipc.rs`) does the same over VMM memory with a handle of its own
//! (another magic).
//!
//! The rules are the H200's (probe pools_ipc, section ipc-legacy): a handle is the
//! allocation's, whichever pointer inside it was given; only cuMemAlloc memory has one;
//! the exporting process cannot open its own handle (CUDA_ERROR_INVALID_CONTEXT); a
//! process opening a handle twice gets the same pointer, and each open needs its close.

use super::error::*;
use super::ids::{AllocationId, EventId};
use super::vmm::{ReservationKind, Storage};
use super::Driver;
use cumock_fd_passing as fd_passing;

/// The name of this driver's fd service (cumock's runtime serves as `cumock-cudart-ipc`).
const FD_SERVICE: &str = "cumock-driver-ipc";
use cumock_abi::consts::*;
use cumock_abi::result::*;
use std::collections::{HashMap, HashSet};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

const MEM_MAGIC: &[u8; 8] = b"cumockDM";
const EVENT_MAGIC: &[u8; 8] = b"cumockDE";

/// What the H200 answers for an event handle it cannot make sense of.
const CUDA_ERROR_MAP_FAILED: cumock_abi::CUresult = 205;

/// `CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS`: the only flags cuIpcOpenMemHandle takes.
const LAZY_ENABLE_PEER_ACCESS: u32 = 1;

/// What a memory handle says (little-endian): magic, pid (i32), fd (i32), inode (u64),
/// then zeros.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemHandle {
    pub pid: i32,
    pub fd: i32,
    pub inode: u64,
}

impl MemHandle {
    pub fn encode(&self) -> [u8; 64] {
        let mut b = [0u8; 64];
        b[..8].copy_from_slice(MEM_MAGIC);
        b[8..12].copy_from_slice(&self.pid.to_le_bytes());
        b[12..16].copy_from_slice(&self.fd.to_le_bytes());
        b[16..24].copy_from_slice(&self.inode.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8; 64]) -> Option<Self> {
        if &b[..8] != MEM_MAGIC || b[24..].iter().any(|x| *x != 0) {
            return None;
        }
        Some(Self {
            pid: i32::from_le_bytes(b[8..12].try_into().expect("4 bytes")),
            fd: i32::from_le_bytes(b[12..16].try_into().expect("4 bytes")),
            inode: u64::from_le_bytes(b[16..24].try_into().expect("8 bytes")),
        })
    }
}

/// An event handle: magic, pid (i32), the event's key in that process (u64), zeros.
fn encode_event(pid: i32, event: u64) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[..8].copy_from_slice(EVENT_MAGIC);
    b[8..12].copy_from_slice(&pid.to_le_bytes());
    b[12..20].copy_from_slice(&event.to_le_bytes());
    b
}

fn decode_event(b: &[u8; 64]) -> Option<(i32, u64)> {
    if &b[..8] != EVENT_MAGIC || b[20..].iter().any(|x| *x != 0) {
        return None;
    }
    Some((
        i32::from_le_bytes(b[8..12].try_into().expect("4 bytes")),
        u64::from_le_bytes(b[12..20].try_into().expect("8 bytes")),
    ))
}

/// One handle opened in this process: where it is mapped and how many opens it has.
#[derive(Debug)]
struct Opened {
    ptr: u64,
    opens: u32,
}

/// This process's IPC bookkeeping.
#[derive(Debug, Default)]
pub struct Ipc {
    /// Allocations (ids) this process handed out a handle of: the fd service serves
    /// only their files.
    exported: HashSet<AllocationId>,
    /// Handles of other processes open here, by (pid, inode).
    opened: HashMap<(i32, u64), Opened>,
    /// Events created with CU_EVENT_INTERPROCESS.
    interprocess_events: HashSet<EventId>,
}

/// Whether `fd` is the own fd of an allocation this process handed out an IPC handle of
/// (the fd service's check: it serves nothing else).
fn is_exported_fd(fd: i32) -> bool {
    super::driver().is_ok_and(|d| {
        let st = d.state.lock();
        st.ipc.exported.iter().any(|id| {
            st.vmm
                .allocation_by_id(*id)
                .is_some_and(|a| match &a.storage {
                    Storage::File(f) => f.fd().is_some_and(|f| f.as_raw_fd() == fd),
                    Storage::Arena(_) => false,
                })
        })
    })
}

impl Driver {
    /// cuIpcGetMemHandle: the handle of the cuMemAlloc allocation holding `ptr`.
    pub fn ipc_get_mem_handle(&self, ptr: u64) -> CuResult<[u8; 64]> {
        let mut st = self.state.lock();
        st.contexts.require_current()?;
        // Observed: only cuMemAlloc memory, up to its requested size; VMM, pinned host
        // and pool memory are CUDA_ERROR_INVALID_VALUE.
        let base = match st.vmm.reservation_at(ptr) {
            Some((base, r)) => match r.kind {
                ReservationKind::Alloc { requested, .. } if ptr - base < requested => base,
                _ => return Err(invalid(format!("{ptr:#x} is not cuMemAlloc memory"))),
            },
            None => return Err(invalid(format!("{ptr:#x} is not cuMemAlloc memory"))),
        };
        let id = st
            .vmm
            .mapping_at(base)
            .map(|m| AllocationId::from_handle(m.handle))
            .expect("a cuMemAlloc range is mapped");
        let storage = &st.vmm.allocation_by_id(id).expect("mapped").storage;
        if let Storage::Arena(range) = *storage {
            st.vmm.move_to_file(id, range)?;
        }
        let Storage::File(file) = &st.vmm.allocation_by_id(id).expect("mapped").storage else {
            unreachable!("moved above");
        };
        let fd = file.fd().expect("a file this process made keeps its fd");
        let inode = fd_passing::inode(fd)
            .map_err(|e| CuError::new(CUDA_ERROR_UNKNOWN, format!("fstat: {e}")))?;
        let handle = MemHandle {
            pid: fd_passing::pid(),
            fd: fd.as_raw_fd(),
            inode,
        };
        let st = &mut *st;
        // Freed allocations' ids are never given again: they need not be remembered.
        st.ipc
            .exported
            .retain(|id| st.vmm.allocation_by_id(*id).is_some());
        st.ipc.exported.insert(id);
        fd_passing::allow_fd_taking();
        fd_passing::serve_exported_fds(FD_SERVICE, is_exported_fd);
        Ok(handle.encode())
    }

    /// cuIpcOpenMemHandle: maps another process's allocation here (or counts one more
    /// open of it, at the same address).
    pub fn ipc_open_mem_handle(&self, bytes: &[u8; 64], flags: u32) -> CuResult<u64> {
        if flags != LAZY_ENABLE_PEER_ACCESS {
            return Err(invalid(format!(
                "flags {flags:#x} are not CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS (1)"
            )));
        }
        let device = self.state.lock().contexts.require_current()?.1.device;
        let h = MemHandle::decode(bytes)
            .ok_or_else(|| invalid("the handle is not one cuIpcGetMemHandle made"))?;
        if h.pid == fd_passing::pid() {
            return Err(invalid_context(
                "a handle cannot be opened in the process that made it (as on the H200)",
            ));
        }
        if let Some(o) = self.state.lock().ipc.opened.get_mut(&(h.pid, h.inode)) {
            o.opens += 1;
            return Ok(o.ptr);
        }
        let fd = take_fd(h)?;
        let mut st = self.state.lock();
        // Another thread may have opened it meanwhile.
        if let Some(o) = st.ipc.opened.get_mut(&(h.pid, h.inode)) {
            o.opens += 1;
            return Ok(o.ptr);
        }
        let n = self.device_count();
        let g = self.profile.devices[device].granularity_minimum;
        let handle = st.vmm.import(
            fd.as_fd().as_raw_fd(),
            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            n,
        )?;
        let size = st
            .vmm
            .allocation_by_id(AllocationId::from_handle(handle))
            .expect("just imported")
            .size;
        let base = match st.vmm.address_reserve(size, 0, 0, 0, g) {
            Ok(b) => b,
            Err(e) => {
                st.vmm.release(handle).expect("just imported");
                return Err(e);
            }
        };
        st.vmm
            .map(base, size, 0, handle, 0, g)
            .expect("a fresh range takes the mapping");
        st.vmm.release(handle).expect("the mapping holds it");
        // Opened memory is usable from every device, as cuMemAlloc memory is.
        st.vmm.grant_all_devices(base, n);
        st.ipc.opened.insert(
            (h.pid, h.inode),
            Opened {
                ptr: base,
                opens: 1,
            },
        );
        Ok(base)
    }

    /// cuIpcCloseMemHandle: one open less; the last unmaps the memory.
    pub fn ipc_close_mem_handle(&self, ptr: u64) -> CuResult<()> {
        let mut st = self.state.lock();
        st.contexts.require_current()?;
        let Some((&key, o)) = st.ipc.opened.iter_mut().find(|(_, o)| o.ptr == ptr) else {
            return Err(invalid(format!(
                "{ptr:#x} is not an address cuIpcOpenMemHandle returned (or it was closed)"
            )));
        };
        o.opens -= 1;
        if o.opens == 0 {
            st.ipc.opened.remove(&key);
            st.vmm.remove_mapping(ptr);
            st.vmm.remove_reservation(ptr);
        }
        Ok(())
    }

    /// Notes an event created with CU_EVENT_INTERPROCESS.
    pub fn ipc_event_created(&self, event: EventId) {
        self.state.lock().ipc.interprocess_events.insert(event);
    }

    /// cuIpcGetEventHandle. `Err` carries, for a live event that is not interprocess, the
    /// zeros the H200 writes to the handle all the same.
    pub fn ipc_get_event_handle(&self, event: EventId) -> Result<[u8; 64], (CuError, bool)> {
        let mut st = self.state.lock();
        st.contexts.event(event).map_err(|e| (e, false))?;
        if !st.ipc.interprocess_events.contains(&event) {
            return Err((
                invalid_handle("the event was not created with CU_EVENT_INTERPROCESS"),
                true,
            ));
        }
        Ok(encode_event(fd_passing::pid(), event.handle()))
    }

    /// cuIpcOpenEventHandle: checks the handle; `Ok` means another process's event, which
    /// the caller stands in for with an event of this process (see the export).
    pub fn ipc_check_event_handle(&self, bytes: &[u8; 64]) -> CuResult<()> {
        self.state.lock().contexts.require_current()?;
        let (pid, _) = decode_event(bytes).ok_or_else(|| {
            CuError::new(
                CUDA_ERROR_MAP_FAILED,
                "the handle is not one cuIpcGetEventHandle made",
            )
        })?;
        if pid == fd_passing::pid() {
            return Err(invalid_context(
                "an event handle cannot be opened in the process that made it (as on the H200)",
            ));
        }
        Ok(())
    }
}

/// A duplicate of the exporter's fd, checked to be the memory the handle names.
fn take_fd(h: MemHandle) -> CuResult<OwnedFd> {
    // pidfd_getfd first; where the kernel or a seccomp profile refuses it, the exporter's
    // fd service. CUMOCK_IPC=socket skips pidfd_getfd (and shows the fd service works).
    let socket_only = std::env::var("CUMOCK_IPC").is_ok_and(|v| v == "socket");
    let taken = if socket_only {
        Err(std::io::Error::other("skipped (CUMOCK_IPC=socket)"))
    } else {
        fd_passing::take_fd(h.pid, h.fd)
    };
    let fd = taken
        .or_else(|taking| {
            fd_passing::request_fd(FD_SERVICE, h.pid, h.fd).map_err(|asking| {
                format!("pidfd_getfd: {taking}; the exporter's fd service: {asking}")
            })
        })
        .map_err(|why| {
            invalid(format!(
                "fd {} of process {} could not be had ({why}): the exporter has exited or \
                 freed the memory, or is another user's",
                h.fd, h.pid
            ))
        })?;
    // The fd number may now be another file's: the memory was freed.
    if fd_passing::inode(fd.as_fd()).ok() != Some(h.inode) {
        return Err(invalid(format!(
            "process {} freed the memory of this handle (its fd {} is another file now)",
            h.pid, h.fd
        )));
    }
    Ok(fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip_and_foreign_bytes_are_refused() {
        let h = MemHandle {
            pid: 4242,
            fd: 17,
            inode: 99,
        };
        assert_eq!(MemHandle::decode(&h.encode()), Some(h));
        assert_eq!(MemHandle::decode(&[0x5a; 64]), None);
        // Not an event handle, nor the other way round.
        assert_eq!(decode_event(&h.encode()), None);
        let e = encode_event(4242, 0x00e7_0000_0000_0005);
        assert_eq!(decode_event(&e), Some((4242, 0x00e7_0000_0000_0005)));
        assert_eq!(MemHandle::decode(&e), None);
    }
}
