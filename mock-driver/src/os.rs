//! The few system calls the model stands on: address space (mmap PROT_NONE), device memory
//! (large sparse memfd arenas, and a memfd of its own for memory that was exported), and
//! the host views through which the mock reads and writes it. The system calls the model
//! needs are here (the model's own `unsafe` blocks are where it touches the program's
//! host memory, its pools' fds and its lock across fork; see `model`).
//!
//! What this costs the host, and why: a process may hold 1,024 fds (the common soft
//! limit) and 65,530 mappings (`vm.max_map_count`), and a full H200 holds about 71,000
//! allocations of 2 MiB. So allocations are ranges of a few arenas (one fd and one mapping
//! each, whatever the number of allocations), and only memory that another process can
//! reach (exported, imported) has a file and a view of its own.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// Host address space: `PROT_NONE`, `MAP_NORESERVE`, so that a 64 TiB range costs
/// nothing and a host dereference of a device address faults, as it does on a GPU.
#[derive(Debug)]
pub struct AddressSpace {
    base: usize,
    len: usize,
}

impl AddressSpace {
    /// Reserves `len` bytes aligned to `align` (a power of two), at `hint` if that range is
    /// free, elsewhere if not (the real driver treats the address as a hint too).
    pub fn reserve(len: usize, align: usize, hint: usize) -> io::Result<Self> {
        if hint != 0 {
            // Safety: MAP_FIXED_NOREPLACE never replaces an existing mapping; the new
            // PROT_NONE range is owned by the returned value and unmapped on drop.
            let p = unsafe {
                libc::mmap(
                    hint as *mut libc::c_void,
                    len,
                    libc::PROT_NONE,
                    libc::MAP_PRIVATE
                        | libc::MAP_ANONYMOUS
                        | libc::MAP_NORESERVE
                        | libc::MAP_FIXED_NOREPLACE,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                if p as usize == hint {
                    return Ok(Self { base: hint, len });
                }
                // Kernels before 4.17 ignore MAP_FIXED_NOREPLACE and place it elsewhere.
                // Safety: p..p+len is the mapping just made.
                unsafe { libc::munmap(p, len) };
            }
        }
        let total = len.checked_add(align).ok_or(io::ErrorKind::OutOfMemory)?;
        // Safety: a fresh anonymous PROT_NONE mapping, trimmed below to the aligned part.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                total,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(mapping_error(io::Error::last_os_error()));
        }
        let start = p as usize;
        let base = (start + align - 1) & !(align - 1);
        let head = base - start;
        let tail = total - head - len;
        // Safety: both trimmed pieces lie inside the mapping made above and are not used.
        unsafe {
            if head > 0 {
                libc::munmap(p, head);
            }
            if tail > 0 {
                libc::munmap((base + len) as *mut libc::c_void, tail);
            }
        }
        Ok(Self { base, len })
    }

    pub fn base(&self) -> usize {
        self.base
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for AddressSpace {
    fn drop(&mut self) {
        // Safety: the range was mapped by `reserve` and is owned by self.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// The host address of device memory, valid while the view it lies in is mapped (the
/// model keeps views mapped while any copy may use them: see `vmm::BytesInUse`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostPtr(*mut u8);

// Safety: a HostPtr is only an address; every access through it is a raw copy made while
// its view is kept mapped, and concurrent access is what device memory allows too (racy,
// never unsound for the mock, which only copies bytes).
unsafe impl Send for HostPtr {}
// Safety: as above.
unsafe impl Sync for HostPtr {}

impl HostPtr {
    pub fn as_ptr(self) -> *mut u8 {
        self.0
    }

    /// The address `offset` bytes further (no access is made).
    pub fn offset(self, offset: usize) -> Self {
        Self(self.0.wrapping_add(offset))
    }
}

/// A large sparse memfd from which allocations are carved, and its one view. Pages cost
/// nothing until touched and are given back by hole punching when an allocation goes.
#[derive(Debug)]
pub struct Arena {
    fd: OwnedFd,
    view: HostPtr,
    len: usize,
}

/// The name every memfd of the mock carries: an import checks it, so that an fd that is
/// not one of ours is refused before anything is mapped. Arenas are never exported: their
/// name differs, and an import of one is refused.
const MEMFD_NAME: &str = "cumock-allocation";
const ARENA_NAME: &str = "cumock-arena";

impl Arena {
    /// A new zero-filled arena of `len` bytes.
    pub fn create(len: usize) -> io::Result<Self> {
        let fd = memfd(ARENA_NAME, false)?;
        set_len(&fd, len)?;
        let view = map_view(fd.as_fd(), len)?;
        Ok(Self { fd, view, len })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn ptr(&self, offset: usize) -> HostPtr {
        assert!(offset <= self.len);
        self.view.offset(offset)
    }

    /// Gives the pages of `[offset, offset+len)` back to the host; they read as zeros
    /// afterwards.
    pub fn punch(&self, offset: usize, len: usize) -> io::Result<()> {
        assert!(offset.checked_add(len).is_some_and(|end| end <= self.len));
        let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        // Safety: fallocate on an fd we own, inside its size (asserted).
        let r = unsafe { libc::fallocate(self.fd.as_raw_fd(), mode, offset as i64, len as i64) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// The pieces of `[offset, offset+len)` that hold pages (the rest are holes, zeros),
    /// as offsets from `offset`: moving an allocation copies only these.
    pub fn data_extents(&self, offset: usize, len: usize) -> Vec<(usize, usize)> {
        let end = offset + len;
        let mut out = Vec::new();
        let mut at = offset;
        while at < end {
            // Safety: lseek on an fd we own; it only moves the fd's (unused) file offset.
            let data = unsafe { libc::lseek(self.fd.as_raw_fd(), at as i64, libc::SEEK_DATA) };
            if data < 0 || data as usize >= end {
                break;
            }
            let data = data as usize;
            // Safety: as above.
            let hole = unsafe { libc::lseek(self.fd.as_raw_fd(), data as i64, libc::SEEK_HOLE) };
            let hole = if hole < 0 {
                end
            } else {
                (hole as usize).min(end)
            };
            out.push((data - offset, hole - data));
            at = hole;
        }
        out
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // Safety: the view was mapped by `map_view` with this length and is owned by self.
        unsafe { libc::munmap(self.view.as_ptr().cast(), self.len) };
    }
}

/// Memory another process can reach: a sealed memfd of its own (made when an allocation
/// is first exported), or one imported from another process, and its view.
#[derive(Debug)]
pub struct MemFile {
    /// Kept for memory this process exported, so that a later export hands out the same
    /// file; none for imports, which cannot be exported again (an imported allocation
    /// reports no handle types, as on the real driver).
    fd: Option<OwnedFd>,
    view: HostPtr,
    len: usize,
    /// What the allocation is (device, handle types), carried in the memfd's name so that
    /// an importing process learns it from the fd alone.
    tag: String,
}

impl MemFile {
    /// A new zero-filled file of `len` bytes, for export.
    pub fn create(len: usize, tag: &str) -> io::Result<Self> {
        let fd = memfd(&format!("{MEMFD_NAME} {tag}"), true)?;
        set_len(&fd, len)?;
        // Sealing the size means an importer can trust it: nobody can shrink the file
        // under its mapping and make a later copy fault.
        let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
        // Safety: fcntl on an fd we own.
        if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let view = map_view(fd.as_fd(), len)?;
        Ok(Self {
            fd: Some(fd),
            view,
            len,
            tag: tag.to_owned(),
        })
    }

    /// Maps an fd exported by a mock (this process's or another's). Anything else (a
    /// regular file, a pipe, /dev/null, an arena, a closed number) is refused and nothing
    /// is mapped. The fd stays the caller's: the view keeps the memory alive.
    pub fn import(fd: RawFd) -> Result<Self, ImportError> {
        if fd < 0 {
            return Err(ImportError::NotAnFd);
        }
        // Safety: F_GETFD only reads the fd table.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
            return Err(ImportError::NotAnFd);
        }
        let link =
            std::fs::read_link(format!("/proc/self/fd/{fd}")).map_err(|_| ImportError::NotAnFd)?;
        let link = link.to_string_lossy();
        let Some(tag) = link.strip_prefix(&format!("/memfd:{MEMFD_NAME} ")) else {
            return Err(ImportError::Foreign(link.into_owned()));
        };
        let tag = tag.trim_end_matches(" (deleted)").to_owned();
        // Safety: F_GET_SEALS reads the seals of an fd that is open (checked above).
        let seals = unsafe { libc::fcntl(fd, libc::F_GET_SEALS) };
        let wanted = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW;
        if seals < 0 || seals & wanted != wanted {
            return Err(ImportError::Foreign(link.into_owned()));
        }
        // Safety: fstat fills a plain struct for an open fd.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return Err(ImportError::NotAnFd);
        }
        let len = usize::try_from(st.st_size).map_err(|_| ImportError::NotAnFd)?;
        if len == 0 {
            return Err(ImportError::Foreign(link.into_owned()));
        }
        // Safety: fd is open for the duration of this call (checked above).
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        let view = map_view(borrowed, len).map_err(ImportError::Map)?;
        Ok(Self {
            fd: None,
            view,
            len,
            tag,
        })
    }

    /// A new fd for the same memory, close-on-exec as the real driver's are.
    pub fn export(&self) -> io::Result<OwnedFd> {
        match &self.fd {
            Some(fd) => fd.try_clone().map_err(fd_error),
            None => Err(io::ErrorKind::Unsupported.into()),
        }
    }

    /// Copies `len` bytes from `src` into the file at `offset` (moving an allocation out of
    /// its arena).
    ///
    /// # Safety
    /// `src` is readable for `len` bytes.
    pub unsafe fn fill_from(&self, offset: usize, src: HostPtr, len: usize) {
        assert!(offset.checked_add(len).is_some_and(|end| end <= self.len));
        // Safety: the destination lies inside our view (asserted); the source is the
        // caller's promise; the two never overlap (different files).
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.view.as_ptr().add(offset), len) };
    }

    pub fn ptr(&self) -> HostPtr {
        self.view
    }

    pub fn size(&self) -> usize {
        self.len
    }

    /// The file's own fd, for memory this process exported (none for imports): what a
    /// legacy IPC handle names, so that the handle dies with the memory.
    pub fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.fd.as_ref().map(|f| f.as_fd())
    }

    pub fn tag(&self) -> &str {
        &self.tag
    }
}

impl Drop for MemFile {
    fn drop(&mut self) {
        // Safety: the view was mapped by `map_view` with this length and is owned by self.
        unsafe { libc::munmap(self.view.as_ptr().cast(), self.len) };
    }
}

#[derive(Debug)]
pub enum ImportError {
    NotAnFd,
    Foreign(String),
    Map(io::Error),
}

fn memfd(name: &str, sealable: bool) -> io::Result<OwnedFd> {
    let name = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let flags = libc::MFD_CLOEXEC | if sealable { libc::MFD_ALLOW_SEALING } else { 0 };
    // Safety: name is a valid C string; the returned fd is owned below.
    let raw = unsafe { libc::memfd_create(name.as_ptr(), flags) };
    if raw < 0 {
        return Err(fd_error(io::Error::last_os_error()));
    }
    // Safety: raw is a fresh fd that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

fn set_len(fd: &OwnedFd, len: usize) -> io::Result<()> {
    let size = libc::off_t::try_from(len).map_err(|_| io::ErrorKind::OutOfMemory)?;
    // Safety: ftruncate on an fd we own.
    if unsafe { libc::ftruncate(fd.as_raw_fd(), size) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Places a second view of the shared memory at `src` (an arena's or a file's view) at the
/// device address `at`, inside a reservation, so that the host reaches it there as the
/// program was granted (HOST-location allocations). `mremap` with an old size of 0
/// duplicates a shared mapping: both views are the same pages.
///
/// # Safety
/// `src` is the start of `len` bytes of a live MAP_SHARED view, and `[at, at+len)` is
/// address space the mock reserved and holds no other view.
pub unsafe fn alias_at(src: HostPtr, len: usize, at: usize, writable: bool) -> io::Result<()> {
    // Safety: per this function's contract; MREMAP_FIXED replaces only the reserved range.
    let p = unsafe {
        libc::mremap(
            src.as_ptr().cast(),
            0,
            len,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            at as *mut libc::c_void,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(mapping_error(io::Error::last_os_error()));
    }
    protect(
        at,
        len,
        if writable {
            Prot::ReadWrite
        } else {
            Prot::Read
        },
    )
}

/// What the host may do with a view placed by `alias_at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prot {
    None,
    Read,
    ReadWrite,
}

/// Changes what the host may do at a view placed by `alias_at`.
pub fn protect(at: usize, len: usize, prot: Prot) -> io::Result<()> {
    let prot = match prot {
        Prot::None => libc::PROT_NONE,
        Prot::Read => libc::PROT_READ,
        Prot::ReadWrite => libc::PROT_READ | libc::PROT_WRITE,
    };
    // Safety: the range is a view this process placed with `alias_at` (callers' rule);
    // changing its protection touches no other memory.
    if unsafe { libc::mprotect(at as *mut libc::c_void, len, prot) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Takes a view placed by `alias_at` away: the range is reserved address space again
/// (PROT_NONE, no memory), so a host dereference faults as before.
pub fn unalias(at: usize, len: usize) -> io::Result<()> {
    // Safety: MAP_FIXED over a view this process placed (callers' rule), with a fresh
    // inaccessible anonymous mapping, as the reservation was.
    let p = unsafe {
        libc::mmap(
            at as *mut libc::c_void,
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn map_view(fd: BorrowedFd<'_>, len: usize) -> io::Result<HostPtr> {
    // Safety: a new shared mapping of a file open for the duration of the call; its
    // lifetime is tied to the value that stores the pointer.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_NORESERVE,
            fd.as_raw_fd(),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(mapping_error(io::Error::last_os_error()));
    }
    Ok(HostPtr(p.cast()))
}

/// A host limit reached says which limit and how to raise it: the mock uses a mapping
/// only per arena, per address-space chunk and per exported or imported allocation, so
/// the count of mappings rarely matters, but a program holding tens of thousands of
/// shared allocations can still reach it.
fn mapping_error(e: io::Error) -> io::Error {
    if e.raw_os_error() != Some(libc::ENOMEM) {
        return e;
    }
    let count = std::fs::read_to_string("/proc/self/maps")
        .map(|m| m.lines().count())
        .unwrap_or(0);
    let limit = std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok());
    let why = map_limit_note(count, limit);
    io::Error::new(io::ErrorKind::OutOfMemory, format!("{e} ({why})"))
}

/// Why a mapping failed, from the process's count of mappings and the host's limit.
fn map_limit_note(count: usize, limit: Option<usize>) -> String {
    match limit {
        // A new mapping may split one in two: the limit is near, not only when reached.
        Some(l) if count + 8 >= l => format!(
            "the process has {count} host mappings and the limit vm.max_map_count is {l}: \
             raise it with `sysctl -w vm.max_map_count=N`"
        ),
        Some(l) => format!(
            "{count} host mappings, below the limit vm.max_map_count of {l}: the host's \
             memory or address space is exhausted"
        ),
        None => format!("{count} host mappings"),
    }
}

fn fd_error(e: io::Error) -> io::Error {
    if e.raw_os_error() != Some(libc::EMFILE) {
        return e;
    }
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // Safety: getrlimit fills a plain struct.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    io::Error::new(
        e.kind(),
        format!(
            "{e} (the process may hold {} open files, RLIMIT_NOFILE; the mock holds one per \
             arena and one per exported allocation: raise it with `ulimit -n N`, up to {})",
            lim.rlim_cur, lim.rlim_max
        ),
    )
}

/// Page-locked host memory the mock hands out (cuMemAllocHost, cuMemHostAlloc): an
/// anonymous read-write mapping, unmapped on drop (`cumock_support::host`, shared with the
/// runtime).
pub use cumock_support::host::HostMapping;

/// `len` (> 0) bytes of zeroed, page-aligned host memory; a failure says the host's limit
/// on mappings where that is the cause.
pub fn map_host(len: usize) -> io::Result<HostMapping> {
    HostMapping::create(len).map_err(mapping_error)
}

/// The mock's own second view of page-locked memory made by [`map_host_with_view`]:
/// the same pages at another address, unmapped on drop.
#[derive(Debug)]
pub struct OwnView {
    ptr: HostPtr,
    len: usize,
}

impl OwnView {
    pub fn ptr(&self) -> HostPtr {
        self.ptr
    }
}

impl Drop for OwnView {
    fn drop(&mut self) {
        // Safety: the view was mapped by `map_host_with_view` with this length and is
        // owned by self.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Page-locked memory in two views of one memfd: the program's, which the ordering-bug
/// trap (`host_trap`) may make inaccessible while a kernel may still write it, and the
/// mock's own, through which kernels reach the same pages meanwhile. Only with
/// ordering-bug reports on: shared pages are shared with a forked child too, where
/// [`map_host`]'s private ones are copied.
pub fn map_host_with_view(len: usize) -> io::Result<(HostMapping, OwnView)> {
    let fd = memfd("cumock-page-locked", false)?;
    set_len(&fd, len)?;
    let program = map_view(fd.as_fd(), len)?;
    let own = match map_view(fd.as_fd(), len) {
        Ok(v) => v,
        Err(e) => {
            // Safety: mapped just above with this length, owned by nothing else.
            unsafe { libc::munmap(program.as_ptr().cast(), len) };
            return Err(e);
        }
    };
    // Safety: `program` is a fresh mapping of `len` bytes that nothing else owns.
    let program = unsafe { HostMapping::from_raw(program.as_ptr().cast(), len) };
    Ok((program, OwnView { ptr: own, len }))
}

/// The host's physical memory in bytes: page-locked memory cannot exceed it.
pub fn physical_memory() -> u64 {
    // Safety: sysconf reads a system value and touches no memory of ours.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    (pages.max(0) as u64).saturating_mul(size.max(0) as u64)
}

/// The program's bytes at `addr`, as many as are readable, without trusting the address
/// (`cumock_support::host`, shared with the runtime).
pub use cumock_support::host::read_program_memory;

/// Whether every byte of `[start, start+len)` is mapped readable in this process, and if
/// so whether all of it is writable too (from /proc/self/maps); None where some byte is
/// not mapped, or not readable.
pub fn host_range_writable(start: u64, len: u64) -> Option<bool> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let end = start.checked_add(len)?;
    let mut ranges: Vec<(u64, u64, bool, bool)> = maps
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (lo, hi) = f.next()?.split_once('-')?;
            let perms = f.next()?.as_bytes();
            Some((
                u64::from_str_radix(lo, 16).ok()?,
                u64::from_str_radix(hi, 16).ok()?,
                perms.first() == Some(&b'r'),
                perms.get(1) == Some(&b'w'),
            ))
        })
        .collect();
    ranges.sort_unstable();
    let (mut at, mut writable) = (start, true);
    for (lo, hi, r, w) in ranges {
        if hi <= at || at >= end {
            continue;
        }
        if lo > at || !r {
            return None;
        }
        writable &= w;
        at = hi;
    }
    (at >= end).then_some(writable)
}

extern "C" {
    /// The C library's `stdout` (glibc and musl both export it).
    #[link_name = "stdout"]
    static C_STDOUT: *mut libc::FILE;
}

/// Writes `bytes` through the C library's `stdout` and flushes it: a CUDA program's own
/// `printf` output sits in that buffer, so device printf output comes after what the
/// program printed before, even when stdout is a pipe (fully buffered).
pub fn write_c_stdout(bytes: &[u8]) {
    // Safety: `stdout` is initialised by the C library before any code of the process
    // runs and never changes; fwrite and fflush lock the stream themselves, and `bytes`
    // is valid for its length.
    unsafe {
        let f = C_STDOUT;
        if f.is_null() {
            return;
        }
        libc::fwrite(bytes.as_ptr().cast(), 1, bytes.len(), f);
        libc::fflush(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::IntoRawFd;

    #[test]
    fn reservation_is_aligned_and_huge_ones_cost_nothing() {
        let a = AddressSpace::reserve(64 << 40, 2 << 20, 0).expect("64 TiB");
        assert_eq!(a.base() % (2 << 20), 0);
        let b = AddressSpace::reserve(2 << 20, 1 << 30, 0).unwrap();
        assert_eq!(b.base() % (1 << 30), 0);
    }

    #[test]
    fn two_imports_of_an_export_alias() {
        let a = MemFile::create(2 << 20, "t=1").unwrap();
        let fd = a.export().unwrap().into_raw_fd();
        let b = MemFile::import(fd).unwrap();
        // Safety: fd was leaked above by into_raw_fd and is ours to close; the import's
        // view keeps the memory.
        unsafe { libc::close(fd) };
        let mut out = [0u8; 5];
        // Safety: both views are 2 MiB; the local buffers are 5 bytes.
        unsafe {
            std::ptr::copy(b"hello".as_ptr(), a.ptr().offset(100).as_ptr(), 5);
            std::ptr::copy(b.ptr().offset(100).as_ptr(), out.as_mut_ptr(), 5);
        }
        assert_eq!(&out, b"hello");
        assert_eq!(b.tag(), "t=1");
    }

    #[test]
    fn punched_memory_reads_as_zeros_and_holes_are_skipped() {
        let a = Arena::create(64 << 20).unwrap();
        assert!(a.data_extents(0, 64 << 20).is_empty());
        // Safety: inside the 64 MiB view; local buffers of 4 bytes.
        unsafe { std::ptr::copy([1u8, 2, 3, 4].as_ptr(), a.ptr(4 << 20).as_ptr(), 4) };
        let ext = a.data_extents(2 << 20, 4 << 20);
        assert_eq!(ext.len(), 1);
        assert!(
            ext[0].0 <= 2 << 20 && ext[0].0 + ext[0].1 > 2 << 20,
            "{ext:?}"
        );
        a.punch(2 << 20, 4 << 20).unwrap();
        let mut out = [9u8; 4];
        // Safety: as above.
        unsafe { std::ptr::copy(a.ptr(4 << 20).as_ptr(), out.as_mut_ptr(), 4) };
        assert_eq!(out, [0; 4]);
    }

    #[test]
    fn a_huge_arena_costs_nothing_until_touched() {
        let a = Arena::create(1 << 40).expect("a 1 TiB sparse arena");
        assert_eq!(a.len(), 1 << 40);
    }

    #[test]
    fn host_limits_say_which_limit_and_how_to_raise_it() {
        let near = map_limit_note(65_525, Some(65_530));
        assert!(
            near.contains("vm.max_map_count") && near.contains("sysctl"),
            "{near}"
        );
        let far = map_limit_note(40, Some(65_530));
        assert!(
            far.contains("below the limit") && !far.contains("sysctl"),
            "{far}"
        );
        let maps = mapping_error(io::Error::from_raw_os_error(libc::ENOMEM)).to_string();
        assert!(maps.contains("host mappings"), "{maps}");
        let fds = fd_error(io::Error::from_raw_os_error(libc::EMFILE)).to_string();
        assert!(
            fds.contains("RLIMIT_NOFILE") && fds.contains("ulimit -n"),
            "{fds}"
        );
        // Other errors pass through as they are.
        let other = mapping_error(io::Error::from_raw_os_error(libc::EINVAL));
        assert_eq!(other.raw_os_error(), Some(libc::EINVAL));
    }

    #[test]
    fn foreign_fds_are_refused() {
        let f = std::fs::File::open("/dev/null").unwrap();
        assert!(matches!(
            MemFile::import(f.as_raw_fd()),
            Err(ImportError::Foreign(_))
        ));
        let arena = Arena::create(2 << 20).unwrap();
        assert!(matches!(
            MemFile::import(arena.fd.as_raw_fd()),
            Err(ImportError::Foreign(_))
        ));
        assert!(matches!(MemFile::import(-1), Err(ImportError::NotAnFd)));
        assert!(matches!(
            MemFile::import(999_999),
            Err(ImportError::NotAnFd)
        ));
    }
}
