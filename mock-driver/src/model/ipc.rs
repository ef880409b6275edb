//! Legacy IPC (cuIpcGetMemHandle, cuIpcOpenMemHandle, cuIpcCloseMemHandle, and the event
//! handles): another process opening cuMemAlloc memory of this one, so that both see the
//! same bytes.
//!
//! How: the allocation's bytes move to a file of their own (`os::MemFile`, as for
//! cuMemExportToShareableHandle), and the 64-byte handle names that file: the exporter's
//! pid, the number of the file's own fd in it, the file's inode and size, and a random
//! secret made at the allocation's first export (128 bits from the kernel's RNG). The
//! importer asks the exporter's fd service for the fd, sending the fd number and the secret
//! (the `cumock-fd-passing` crate); the exporter serves only files of allocations it made
//! handles of (`Ipc::exported`), only for their secret, compared in constant time. Nothing
//! else reaches the fd: there is no `pidfd_getfd` path, which would take any fd of a
//! process its caller may ptrace with no handle at all (see the crate's doc for why it
//! went). So a handle forged from what `/proc` shows (pid, fd numbers, inodes) opens
//! nothing, and VMM memory exported with cuMemExportToShareableHandle is never served here:
//! that fd reaches only whoever it was given to.
//!
//! The importer checks what it got against the rest of the handle (inode, size) before
//! mapping it. The fd is the allocation's own, so it closes when the memory is freed, and
//! a handle of freed memory cannot be opened, as on the H200. cumock's runtime
//! (`cudart/src/ipc.rs`) does the same over VMM memory with a handle of its own (another
//! magic). A handle that fails any check is CUDA_ERROR_INVALID_VALUE, the H200's answer
//! for a junk handle (probe pools_ipc, "ipc-open junk handle").
//!
//! Event handles carry no secret: opening one maps nothing of the exporter (the importer
//! gets a stand-in event of its own), so a forged one reaches nothing.
//!
//! The rules are the H200's (probe pools_ipc, section ipc-legacy): a handle is the
//! allocation's, whichever pointer inside it was given (so its secret is made once per
//! allocation, and two handles of it are equal); only cuMemAlloc memory has one; the
//! exporting process cannot open its own handle (CUDA_ERROR_INVALID_CONTEXT); a process
//! opening a handle twice gets the same pointer, and each open needs its close.

use super::error::*;
use super::ids::{AllocationId, EventId};
use super::vmm::{ReservationKind, Storage};
use super::Driver;
use cumock_fd_passing::{self as fd_passing, Export, Secret};

/// The name of this driver's fd service (cumock's runtime serves as `cumock-cudart-ipc`).
const FD_SERVICE: &str = "cumock-driver-ipc";
use cumock_abi::consts::*;
use std::collections::{HashMap, HashSet};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

const MEM_MAGIC: &[u8; 8] = b"cumockDM";
const EVENT_MAGIC: &[u8; 8] = b"cumockDE";

/// What the H200 answers for an event handle it cannot make sense of.
const CUDA_ERROR_MAP_FAILED: cumock_abi::CUresult = 205;

/// What an export answers when the system refuses what it needs (fstat, the kernel's RNG,
/// the fd service's socket).
pub(crate) const CUDA_ERROR_OPERATING_SYSTEM: cumock_abi::CUresult = 304;

/// `CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS`: the only flags cuIpcOpenMemHandle takes.
const LAZY_ENABLE_PEER_ACCESS: u32 = 1;

/// What a memory handle says (little-endian): magic (8 bytes), pid (i32), fd (i32),
/// inode (u64), size (u64), secret (16 bytes), then 16 zeros.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemHandle {
    pub pid: i32,
    pub fd: i32,
    pub inode: u64,
    pub size: u64,
    pub secret: Secret,
}

impl MemHandle {
    pub fn encode(&self) -> [u8; 64] {
        let mut b = [0u8; 64];
        b[..8].copy_from_slice(MEM_MAGIC);
        b[8..12].copy_from_slice(&self.pid.to_le_bytes());
        b[12..16].copy_from_slice(&self.fd.to_le_bytes());
        b[16..24].copy_from_slice(&self.inode.to_le_bytes());
        b[24..32].copy_from_slice(&self.size.to_le_bytes());
        b[32..48].copy_from_slice(&self.secret.0);
        b
    }

    pub fn decode(b: &[u8; 64]) -> Option<Self> {
        if &b[..8] != MEM_MAGIC || b[48..].iter().any(|x| *x != 0) {
            return None;
        }
        Some(Self {
            pid: i32::from_le_bytes(b[8..12].try_into().expect("4 bytes")),
            fd: i32::from_le_bytes(b[12..16].try_into().expect("4 bytes")),
            inode: u64::from_le_bytes(b[16..24].try_into().expect("8 bytes")),
            size: u64::from_le_bytes(b[24..32].try_into().expect("8 bytes")),
            secret: Secret(b[32..48].try_into().expect("16 bytes")),
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

/// One handle opened in this process: the handle, where it is mapped and how many opens
/// it has.
#[derive(Debug)]
struct Opened {
    handle: MemHandle,
    ptr: u64,
    opens: u32,
}

impl Opened {
    /// Another open of the same handle (one that differs in any byte, the secret included,
    /// opens nothing: it was not proved to the exporter).
    fn reopen(&mut self, h: &MemHandle) -> CuResult<u64> {
        let same = self.handle.secret.matches(&h.secret)
            && (self.handle.fd, self.handle.size) == (h.fd, h.size);
        if !same {
            return Err(invalid("the handle is not the one opened for this memory"));
        }
        self.opens += 1;
        Ok(self.ptr)
    }
}

/// This process's IPC bookkeeping.
#[derive(Debug, Default)]
pub struct Ipc {
    /// Allocations (ids) this process handed out a handle of, with the handle's secret:
    /// the fd service serves only their files, only for that secret.
    exported: HashMap<AllocationId, Secret>,
    /// Handles of other processes open here, by (pid, inode).
    opened: HashMap<(i32, u64), Opened>,
    /// Events created with CU_EVENT_INTERPROCESS, and those standing for another
    /// process's (cuIpcOpenEventHandle).
    interprocess_events: HashSet<EventId>,
}

impl Ipc {
    /// The fd service may serve the file of allocation `id` to whoever proves `secret`
    /// (a pool's chunks, pool_ipc.rs).
    pub(super) fn serve(&mut self, id: AllocationId, secret: Secret) {
        self.exported.insert(id, secret);
    }

    /// Whether a record of `event` may be waited on by another process.
    pub fn is_interprocess(&self, event: EventId) -> bool {
        self.interprocess_events.contains(&event)
    }

    /// The event is destroyed.
    pub fn forget_event(&mut self, event: EventId) {
        self.interprocess_events.remove(&event);
    }
}

/// The export whose file has fd number `fd`, if it is the own fd of an allocation this
/// process handed out an IPC handle of (the fd service serves nothing else): a duplicate,
/// made under the lock so that a free meanwhile cannot close it, and its secret.
fn exported_fd(fd: i32) -> Option<Export> {
    let d = super::driver().ok()?;
    let st = d.state.lock();
    st.ipc.exported.iter().find_map(|(id, secret)| {
        let a = st.vmm.allocation_by_id(*id)?;
        let Storage::File(f) = &a.storage else {
            return None;
        };
        let own = f.fd().filter(|f| f.as_raw_fd() == fd)?;
        Some(Export {
            fd: own.try_clone_to_owned().ok()?,
            secret: *secret,
        })
    })
}

impl Driver {
    /// cuIpcGetMemHandle: the handle of the cuMemAlloc allocation holding `ptr`.
    pub fn ipc_get_mem_handle(&self, ptr: u64) -> CuResult<[u8; 64]> {
        // Its bytes move to a file of their own (below): not while a kernel uses them.
        let mut st = self.lock_unpinned(|st| st.vmm.mapping_at(ptr).map(|m| m.handle));
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
        let os_error = |what: &str, e: std::io::Error| {
            CuError::new(CUDA_ERROR_OPERATING_SYSTEM, format!("{what}: {e}"))
        };
        let inode = fd_passing::inode(fd).map_err(|e| os_error("fstat", e))?;
        let size = fd_passing::file_size(fd).map_err(|e| os_error("fstat", e))?;
        let fd = fd.as_raw_fd();
        let secret = match st.ipc.exported.get(&id) {
            Some(s) => *s,
            None => Secret::new().map_err(|e| os_error("getrandom", e))?,
        };
        // Without the service no importer can reach the memory: the export fails.
        fd_passing::serve_exported_fds(FD_SERVICE, exported_fd)
            .map_err(|e| os_error("the IPC fd service could not start", e))?;
        let st = &mut *st;
        // Freed allocations' ids are never given again: they need not be remembered.
        st.ipc
            .exported
            .retain(|id, _| st.vmm.allocation_by_id(*id).is_some());
        st.ipc.exported.insert(id, secret);
        Ok(MemHandle {
            pid: fd_passing::pid(),
            fd,
            inode,
            size,
            secret,
        }
        .encode())
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
            return o.reopen(&h);
        }
        let fd = take_fd(h)?;
        let mut st = self.state.lock();
        // Another thread may have opened it meanwhile.
        if let Some(o) = st.ipc.opened.get_mut(&(h.pid, h.inode)) {
            return o.reopen(&h);
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
                handle: h,
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

/// Starts this process's fd service (once), which serves what `Ipc::serve` lists.
pub(super) fn start_fd_service() -> CuResult<()> {
    fd_passing::serve_exported_fds(FD_SERVICE, exported_fd).map_err(|e| {
        CuError::new(
            CUDA_ERROR_OPERATING_SYSTEM,
            format!("the IPC fd service could not start: {e}"),
        )
    })
}

/// The file process `pid` serves as its fd number `fd` for `secret` (pool_ipc.rs).
pub(super) fn request_fd(pid: i32, fd: i32, secret: &Secret) -> CuResult<OwnedFd> {
    fd_passing::request_fd(FD_SERVICE, pid, fd, secret).map_err(|why| {
        invalid(format!(
            "process {pid}'s fd service gave no memory for this export ({why}): the exporter \
             has exited or freed the memory, is another user's, or the data was not made by \
             cuMemPoolExportPointer of the pool imported"
        ))
    })
}

/// A duplicate of the exporter's fd, from its fd service (which checks the secret), then
/// checked here to be the file the handle names.
fn take_fd(h: MemHandle) -> CuResult<OwnedFd> {
    if h.size == 0 || h.fd < 0 {
        return Err(invalid("the handle is not one cuIpcGetMemHandle made"));
    }
    let fd = fd_passing::request_fd(FD_SERVICE, h.pid, h.fd, &h.secret).map_err(|why| {
        invalid(format!(
            "process {}'s fd service gave no memory for this handle ({why}): the exporter \
             has exited or freed the memory, is another user's, or the handle was not made \
             by cuIpcGetMemHandle",
            h.pid
        ))
    })?;
    // The secret is the export's; a handle altered elsewhere is still not that export's.
    let inode = fd_passing::inode(fd.as_fd()).ok();
    let size = fd_passing::file_size(fd.as_fd()).ok();
    if (inode, size) != (Some(h.inode), Some(h.size)) {
        return Err(invalid(format!(
            "the memory process {} served is not what the handle says (inode {:?}, size \
             {:?}; the handle: {}, {})",
            h.pid, inode, size, h.inode, h.size
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
            size: 2 << 20,
            secret: Secret([7; 16]),
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
