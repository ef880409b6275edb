//! Sharing a memory pool with another process (cuMemPoolExportToShareableHandle,
//! cuMemPoolImportFromShareableHandle, cuMemPoolExportPointer, cuMemPoolImportPointer),
//! POSIX file descriptors only, as NVIDIA's streamOrderedAllocationIPC sample uses them.
//!
//! How: a pool's chunks are ordinary allocations of the VMM model; an exported pointer's
//! chunks move to files of their own (`os::MemFile`, as cuIpcGetMemHandle's memory), and
//! the legacy IPC's fd service (model/ipc.rs, the `cumock-fd-passing` crate) serves them
//! to whoever proves the pool's secret. The secret (128 bits from the kernel's RNG, made
//! at the pool's or a pointer's first export) is written into the pool's exported file,
//! so only a process that was given that fd (SCM_RIGHTS, as CUDA's handle is passed)
//! learns it: the pointer's export data, which cuda.h says "is not a handle and may be
//! shared through any IPC mechanism", carries no secret, only where the chunks are (the
//! exporter's pid, the pool, the chunks' fd numbers there, the offset and length), and
//! opens nothing without the imported pool.
//!
//! The importer maps the allocation's whole chunks (as a GPU maps a pool's physical
//! memory by its chunks, so neighbours in them are reachable too) side by side in address
//! space of its own, with the imported pool's access (its device's, read-write, as the
//! H200 answers before any cuMemPoolSetAccess: probe api_gaps2, section pool-ipc), and
//! frees them with cuMemFree or cuMemFreeAsync (at its stream's turn). An imported pool
//! makes no allocations and cannot be a current pool (cuda.h). A pool imported into the
//! process that exported it is a pool of its own handle (the H200 takes that import),
//! through which importing a pointer is not emulated (CUDA_ERROR_NOT_SUPPORTED); a
//! pointer imported again through the same pool is the first import's pointer, as on the
//! H200.

use super::error::*;
use super::ids::{AllocationId, PoolId};
use super::pools::{Place, Pool};
use super::vmm::Storage;
use super::{Driver, State};
use cumock_abi::consts::*;
use cumock_abi::result::CUDA_ERROR_UNKNOWN;
use cumock_fd_passing::{self as fd_passing, Secret};
use std::os::fd::{AsFd, AsRawFd};

const POOL_MAGIC: &[u8; 8] = b"cumockMP";
const PTR_MAGIC: &[u8; 8] = b"cumockPP";

/// The most chunks one exported allocation may span (the export data's room).
const MAX_CHUNKS: usize = 6;

/// A pool imported from another process: the exporter's pid and pool, and the secret its
/// fd service asks for.
#[derive(Debug, Clone, Copy)]
pub struct Origin {
    pub pid: i32,
    pub pool: PoolId,
    pub secret: Secret,
}

/// Another process's pool allocation mapped here.
#[derive(Debug)]
pub struct ImportedPtr {
    /// The imported pool it came through.
    pub pool: PoolId,
    /// Its chunks' reservation, and each chunk's mapping.
    pub base: u64,
    pub maps: Vec<u64>,
    /// The export data it was imported from (a second import of it gives this pointer).
    pub data: [u8; 64],
}

/// What the pool's exported file holds (little-endian): magic, pid (i32), device (u32),
/// pool (u64), secret (16 bytes), zeros to 64.
pub(super) fn pool_file_content(pool: PoolId, p: &mut Pool) -> CuResult<[u8; 64]> {
    if p.origin.is_some() {
        return Err(invalid(format!(
            "pool {pool:#x} was imported from another process: only its exporter shares it"
        )));
    }
    let device = match p.place {
        Place::Device(d) => d as u32,
        _ => {
            return Err(not_supported(
                "exporting a host or managed memory pool to another process is not emulated",
            ))
        }
    };
    let secret = pool_secret(p)?;
    let mut b = [0u8; 64];
    b[..8].copy_from_slice(POOL_MAGIC);
    b[8..12].copy_from_slice(&fd_passing::pid().to_le_bytes());
    b[12..16].copy_from_slice(&device.to_le_bytes());
    b[16..24].copy_from_slice(&pool.handle().to_le_bytes());
    b[24..40].copy_from_slice(&secret.0);
    Ok(b)
}

fn decode_pool_file(b: &[u8; 64]) -> Option<(Origin, usize)> {
    if &b[..8] != POOL_MAGIC || b[40..].iter().any(|x| *x != 0) {
        return None;
    }
    Some((
        Origin {
            pid: i32::from_le_bytes(b[8..12].try_into().expect("4 bytes")),
            pool: PoolId::from_handle(u64::from_le_bytes(b[16..24].try_into().expect("8 bytes"))),
            secret: Secret(b[24..40].try_into().expect("16 bytes")),
        },
        u32::from_le_bytes(b[12..16].try_into().expect("4 bytes")) as usize,
    ))
}

/// The pool's secret, made once.
fn pool_secret(p: &mut Pool) -> CuResult<Secret> {
    if let Some(s) = p.secret {
        return Ok(s);
    }
    let s = Secret::new().map_err(|e| {
        CuError::new(
            super::ipc::CUDA_ERROR_OPERATING_SYSTEM,
            format!("getrandom: {e}"),
        )
    })?;
    p.secret = Some(s);
    Ok(s)
}

/// An exported pointer (little-endian): magic, pid (i32), chunk count (u32), pool (u64),
/// offset in the first chunk (u64), length (u64), the chunks' fd numbers (i32 each).
#[derive(Debug, Clone, PartialEq, Eq)]
struct PtrData {
    pid: i32,
    pool: PoolId,
    offset: u64,
    len: u64,
    fds: Vec<i32>,
}

impl PtrData {
    fn encode(&self) -> [u8; 64] {
        let mut b = [0u8; 64];
        b[..8].copy_from_slice(PTR_MAGIC);
        b[8..12].copy_from_slice(&self.pid.to_le_bytes());
        b[12..16].copy_from_slice(&(self.fds.len() as u32).to_le_bytes());
        b[16..24].copy_from_slice(&self.pool.handle().to_le_bytes());
        b[24..32].copy_from_slice(&self.offset.to_le_bytes());
        b[32..40].copy_from_slice(&self.len.to_le_bytes());
        for (i, fd) in self.fds.iter().enumerate() {
            b[40 + 4 * i..44 + 4 * i].copy_from_slice(&fd.to_le_bytes());
        }
        b
    }

    fn decode(b: &[u8; 64]) -> Option<Self> {
        if &b[..8] != PTR_MAGIC {
            return None;
        }
        let n = u32::from_le_bytes(b[12..16].try_into().expect("4 bytes")) as usize;
        if n == 0 || n > MAX_CHUNKS || b[40 + 4 * n..].iter().any(|x| *x != 0) {
            return None;
        }
        Some(Self {
            pid: i32::from_le_bytes(b[8..12].try_into().expect("4 bytes")),
            pool: PoolId::from_handle(u64::from_le_bytes(b[16..24].try_into().expect("8 bytes"))),
            offset: u64::from_le_bytes(b[24..32].try_into().expect("8 bytes")),
            len: u64::from_le_bytes(b[32..40].try_into().expect("8 bytes")),
            fds: (0..n)
                .map(|i| i32::from_le_bytes(b[40 + 4 * i..44 + 4 * i].try_into().expect("4")))
                .collect(),
        })
    }
}

impl State {
    /// Frees an imported pointer (cuMemFree); false if `ptr` is none.
    pub(super) fn free_imported(&mut self, ptr: u64) -> bool {
        let Some(i) = self.pools.imported.remove(&ptr) else {
            return false;
        };
        self.unmap_imported(&i);
        true
    }

    fn unmap_imported(&mut self, i: &ImportedPtr) {
        for m in &i.maps {
            self.vmm.remove_mapping(*m);
        }
        self.vmm.remove_reservation(i.base);
    }
}

impl Driver {
    /// cuMemPoolImportFromShareableHandle: a pool standing for another process's, from
    /// the fd its cuMemPoolExportToShareableHandle gave.
    pub fn pool_import(&self, fd: i32, handle_type: i32, flags: u64) -> CuResult<PoolId> {
        self.state.lock().contexts.require_current()?;
        if flags != 0 {
            return Err(invalid(format!("flags must be 0, not {flags}")));
        }
        if handle_type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR {
            return Err(invalid(format!(
                "handle type {handle_type}: only POSIX file descriptors (1) are emulated"
            )));
        }
        let mut b = [0u8; 64];
        // Safety: pread into a local buffer of the length given; a bad fd is an error.
        let n = unsafe { libc::pread(fd, b.as_mut_ptr().cast(), b.len(), 0) };
        // Recorded on the H200 (probe api_gaps2): an fd of /dev/null, which reads nothing,
        // is CUDA_ERROR_UNKNOWN. (An fd of other bytes is not recorded: INVALID_VALUE.)
        if n != 64 {
            return Err(CuError::new(
                CUDA_ERROR_UNKNOWN,
                format!(
                    "fd {fd} holds no memory pool exported by cuMemPoolExportToShareableHandle"
                ),
            ));
        }
        let (origin, device) = decode_pool_file(&b).ok_or_else(|| {
            invalid(format!(
                "fd {fd} is not a memory pool exported by cuMemPoolExportToShareableHandle"
            ))
        })?;
        let devices = self.device_count();
        if device >= devices {
            return Err(invalid_device(format!(
                "the pool is device {device}'s, which this process's profile lacks"
            )));
        }
        let mut pool = Pool::new(
            Place::Device(device),
            devices,
            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            0,
            0,
            false,
        );
        pool.origin = Some(origin);
        Ok(self.state.lock().pools.insert(pool))
    }

    /// cuMemPoolExportPointer: where another process that imported the pool finds the
    /// allocation holding `ptr` (its chunks, moved to files of their own).
    pub fn pool_export_pointer(&self, ptr: u64) -> CuResult<[u8; 64]> {
        // The chunks' bytes move to files: not while a kernel uses them.
        let mut st = loop {
            let st = self.state.lock();
            let busy = {
                let chunks = self.exported_chunks(&st, ptr).unwrap_or_default();
                chunks
                    .iter()
                    .any(|(_, h)| st.vmm.export_waits_for_kernel(*h))
            };
            if !busy {
                break st;
            }
            drop(st);
            std::thread::sleep(std::time::Duration::from_micros(100));
        };
        st.contexts.require_current()?;
        let chunks = self.exported_chunks(&st, ptr)?;
        let (start, block) = st
            .pools
            .block_containing(ptr)
            .map(|(a, b)| (a, *b))
            .expect("checked by exported_chunks");
        let st = &mut *st;
        let secret = pool_secret(st.pools.live_mut(block.pool)?)?;
        super::ipc::start_fd_service()?;
        let mut fds = Vec::with_capacity(chunks.len());
        for (_, handle) in &chunks {
            let id = AllocationId::from_handle(*handle);
            if let Storage::Arena(range) = st.vmm.allocation_by_id(id).expect("mapped").storage {
                st.vmm.move_to_file(id, range)?;
            }
            let Storage::File(file) = &st.vmm.allocation_by_id(id).expect("mapped").storage else {
                unreachable!("moved above");
            };
            let fd = file.fd().expect("a file this process made keeps its fd");
            fds.push(fd.as_fd().as_raw_fd());
            st.ipc.serve(id, secret);
        }
        Ok(PtrData {
            pid: fd_passing::pid(),
            pool: block.pool,
            offset: start - chunks[0].0,
            len: block.requested,
            fds,
        }
        .encode())
    }

    /// The chunks (address, allocation handle) of the live pool allocation holding
    /// `ptr`, whose pool may be shared.
    fn exported_chunks(&self, st: &State, ptr: u64) -> CuResult<Vec<(u64, u64)>> {
        let Some((start, b)) = st.pools.block_containing(ptr) else {
            return Err(invalid(format!(
                "{ptr:#x} is not memory of a live stream-ordered allocation"
            )));
        };
        // Recorded on the H200 (probe api_gaps2, "export an interior pointer"): only an
        // allocation's own address is exported.
        if start != ptr {
            return Err(invalid(format!(
                "{ptr:#x} lies inside the allocation at {start:#x}: export the address \
                 cuMemAllocFromPoolAsync gave"
            )));
        }
        let p = st.pools.live(b.pool)?;
        if p.handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR == 0 || p.origin.is_some() {
            return Err(invalid(format!(
                "{ptr:#x} is memory of pool {:#x}, which cannot be shared (created without \
                 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR in handleTypes, or imported)",
                b.pool
            )));
        }
        let end = start + b.len;
        let first = p
            .chunks
            .range(..=start)
            .next_back()
            .map(|(c, _)| *c)
            .expect("a block lies in a chunk");
        let chunks: Vec<(u64, u64)> = p
            .chunks
            .range(first..end)
            .map(|(c, _)| {
                let h = st.vmm.mapping_at(*c).expect("a chunk is mapped").handle;
                (*c, h)
            })
            .collect();
        if chunks.len() > MAX_CHUNKS {
            return Err(not_supported(format!(
                "the allocation spans {} of the pool's chunks; exporting more than \
                 {MAX_CHUNKS} is not emulated",
                chunks.len()
            )));
        }
        Ok(chunks)
    }

    /// cuMemPoolImportPointer: maps another process's pool allocation here, through the
    /// pool imported from it.
    pub fn pool_import_pointer(&self, pool: PoolId, bytes: &[u8; 64]) -> CuResult<u64> {
        let (origin, device, access) = {
            let st = self.state.lock();
            st.contexts.require_current()?;
            let p = st.pools.live(pool)?;
            let origin = p.origin.ok_or_else(|| {
                invalid(format!(
                    "pool {pool:#x} was not imported (cuMemPoolImportFromShareableHandle)"
                ))
            })?;
            (origin, p.device, p.access)
        };
        // A pool imported into the process that exported it is taken (as the H200 takes
        // it, probe api_gaps2); its pointers are the process's own, not emulated through it.
        if origin.pid == fd_passing::pid() {
            return Err(not_supported(
                "importing a pointer through a pool imported into the process that exported \
                 it is not emulated (the pointer is this process's own)",
            ));
        }
        // Recorded on the H200 (probe api_gaps2, "import small again"): the same data
        // imported again through the same pool gives the pointer its first import gave
        // (one mapping: its one cuMemFree frees it; a second free is refused).
        if let Some((&ptr, _)) = self
            .state
            .lock()
            .pools
            .imported
            .iter()
            .find(|(_, i)| i.pool == pool && &i.data == bytes)
        {
            return Ok(ptr);
        }
        let data = PtrData::decode(bytes)
            .ok_or_else(|| invalid("the data is not one cuMemPoolExportPointer made"))?;
        if (data.pid, data.pool) != (origin.pid, origin.pool) {
            return Err(invalid(
                "the data is of an allocation of another pool than the one imported",
            ));
        }
        let files = data
            .fds
            .iter()
            .map(|fd| super::ipc::request_fd(origin.pid, *fd, &origin.secret))
            .collect::<CuResult<Vec<_>>>()?;
        let n = self.device_count();
        let g = self.profile.devices[device].granularity_minimum;
        let mut st = self.state.lock();
        let st = &mut *st;
        let mut handles = Vec::new();
        let mut total = 0u64;
        for f in &files {
            match st
                .vmm
                .import(f.as_raw_fd(), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, n)
            {
                Ok(h) => {
                    total += st
                        .vmm
                        .allocation_by_id(AllocationId::from_handle(h))
                        .expect("just imported")
                        .size;
                    handles.push(h);
                }
                Err(e) => {
                    handles.iter().for_each(|h| drop(st.vmm.release(*h)));
                    return Err(e);
                }
            }
        }
        if data.offset + data.len > total {
            handles.iter().for_each(|h| drop(st.vmm.release(*h)));
            return Err(invalid("the data's range lies past the memory served"));
        }
        let base = match st.vmm.address_reserve(total, 0, 0, 0, g) {
            Ok(b) => b,
            Err(e) => {
                handles.iter().for_each(|h| drop(st.vmm.release(*h)));
                return Err(e);
            }
        };
        let mut maps = Vec::new();
        let mut at = base;
        for (i, h) in handles.iter().enumerate() {
            let size = st
                .vmm
                .allocation_by_id(AllocationId::from_handle(*h))
                .expect("imported")
                .size;
            // (A chunk is a multiple of the exporter's granularity; a profile of this
            // process with a coarser one refuses it here.)
            if let Err(e) = st.vmm.map(at, size, 0, *h, 0, g) {
                maps.iter().for_each(|m| st.vmm.remove_mapping(*m));
                st.vmm.remove_reservation(base);
                handles[i..].iter().for_each(|h| drop(st.vmm.release(*h)));
                return Err(e);
            }
            st.vmm.release(*h).expect("the mapping holds it");
            st.vmm.set_mapping_access(at, access);
            maps.push(at);
            at += size;
        }
        let ptr = base + data.offset;
        st.pools.imported.insert(
            ptr,
            ImportedPtr {
                pool,
                base,
                maps,
                data: *bytes,
            },
        );
        Ok(ptr)
    }

    /// cuMemFreeAsync of an imported pointer: it is freed at once for the program (a
    /// second free is refused), its memory unmapped at the stream's turn, as work queued
    /// before the free may use it. False if `ptr` is none.
    pub(super) fn free_imported_async(
        &self,
        ptr: u64,
        stream: super::ids::StreamId,
    ) -> CuResult<bool> {
        let Some(i) = self.state.lock().pools.imported.remove(&ptr) else {
            return Ok(false);
        };
        match super::process::driver() {
            Ok(d) if std::ptr::eq(d, self) => {
                let job = Box::new(move || d.state.lock().unmap_imported(&i));
                self.enqueue_work(stream, "cuMemFreeAsync", job)?;
            }
            // A driver of the tests' own: no stream worker may outlive it.
            _ => {
                self.drain_stream(stream)?;
                self.state.lock().unmap_imported(&i);
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_data_round_trips_and_foreign_bytes_are_refused() {
        let d = PtrData {
            pid: 4242,
            pool: PoolId::from_handle(0x0090_0000_0000_0003),
            offset: 0x200,
            len: 1000,
            fds: vec![17, 18],
        };
        assert_eq!(PtrData::decode(&d.encode()), Some(d.clone()));
        assert_eq!(PtrData::decode(&[0x5a; 64]), None);
        let mut b = d.encode();
        b[12] = 7; // more chunks than fit
        assert_eq!(PtrData::decode(&b), None);
        let mut f = [0u8; 64];
        f[..8].copy_from_slice(POOL_MAGIC);
        f[8..12].copy_from_slice(&4242i32.to_le_bytes());
        f[16..24].copy_from_slice(&d.pool.handle().to_le_bytes());
        let (o, device) = decode_pool_file(&f).unwrap();
        assert_eq!((o.pid, o.pool, device), (4242, d.pool, 0));
        assert!(decode_pool_file(&d.encode()).is_none());
    }
}
