//! The few system calls the model stands on: address space (mmap PROT_NONE), physical
//! memory (memfd), and views of it. Every `unsafe` of the model lives here.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// Host address space held for a reservation: `PROT_NONE`, `MAP_NORESERVE`, so that a
/// 64 TiB reservation costs nothing and a host dereference of a device address faults,
/// as it does on a GPU.
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
            return Err(io::Error::last_os_error());
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
}

impl Drop for AddressSpace {
    fn drop(&mut self) {
        // Safety: the range was mapped by `reserve` and is owned by self.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// The physical memory of one allocation: a sealed memfd, and a host view of it through
/// which the mock reads and writes. Pages cost nothing until touched.
#[derive(Debug)]
pub struct Backing {
    /// Kept only while the memory may be exported; a memfd's view keeps its pages alive.
    fd: Option<OwnedFd>,
    view: *mut u8,
    len: usize,
    /// What the allocation is (device, handle types), carried in the memfd's name so that
    /// an importing process learns it from the fd alone.
    tag: String,
    /// An fd of it went out: someone else may map it, so it is never reused.
    exported: std::sync::atomic::AtomicBool,
}

// Safety: the view is a MAP_SHARED mapping owned by this value and freed only on drop;
// concurrent access through it is what device memory allows too (racy, never unsound for
// the mock, which only copies bytes).
unsafe impl Send for Backing {}
// Safety: as above; &Backing only hands out raw pointers used by explicit copies.
unsafe impl Sync for Backing {}

/// The name every memfd of the mock carries: an import checks it, so that an fd that is
/// not one of ours is refused before anything is mapped.
const MEMFD_NAME: &str = "cumock-allocation";

impl Backing {
    /// A new zero-filled allocation of `len` bytes. `keep_fd` keeps the memfd for export.
    pub fn create(len: usize, keep_fd: bool, tag: &str) -> io::Result<Self> {
        let name = CString::new(format!("{MEMFD_NAME} {tag}"))
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // Safety: name is a valid C string; the returned fd is owned below.
        let raw = unsafe {
            libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING)
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // Safety: raw is a fresh fd that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let size = libc::off_t::try_from(len).map_err(|_| io::ErrorKind::OutOfMemory)?;
        // Safety: plain system calls on an fd we own.
        unsafe {
            if libc::ftruncate(fd.as_raw_fd(), size) != 0 {
                return Err(io::Error::last_os_error());
            }
            // Sealing the size means an importer can trust it: nobody can shrink the
            // file under its mapping and make a later copy fault.
            let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
            if libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        let view = map_view(fd.as_fd_borrowed(), len)?;
        Ok(Self {
            fd: keep_fd.then_some(fd),
            view,
            len,
            tag: tag.to_owned(),
            exported: Default::default(),
        })
    }

    /// Opens an fd exported by a mock (this process's or another's). Anything else (a
    /// regular file, a pipe, /dev/null, a closed number) is refused and nothing is mapped.
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
        // Safety: fd is open for the duration of this call.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        let dup = borrowed
            .try_clone_to_owned()
            .map_err(|_| ImportError::NotAnFd)?;
        let view = map_view(dup.as_fd_borrowed(), len).map_err(ImportError::Map)?;
        // Imported memory belongs to another process too: as good as exported.
        Ok(Self {
            fd: Some(dup),
            view,
            len,
            tag,
            exported: std::sync::atomic::AtomicBool::new(true),
        })
    }

    /// A new fd for the same memory, close-on-exec as the real driver's are.
    pub fn export(&self) -> io::Result<OwnedFd> {
        match &self.fd {
            Some(fd) => {
                self.exported
                    .store(true, std::sync::atomic::Ordering::Relaxed);
                fd.try_clone()
            }
            None => Err(io::ErrorKind::Unsupported.into()),
        }
    }

    /// Whether the memory is this process's alone (never exported nor imported), and so
    /// may be reused for a new allocation.
    pub fn private(&self) -> bool {
        !self.exported.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Gives the pages back and leaves the memory zero-filled, for reuse: creating a memfd
    /// and its view costs several system calls, which the allocate-free cycle of an
    /// allocator would otherwise pay every time.
    pub fn recycle(&self) -> io::Result<()> {
        // Safety: the view is ours, shared and file-backed; MADV_REMOVE frees its pages
        // and the file's backing store, after which reads see zeros.
        if unsafe { libc::madvise(self.view.cast(), self.len, libc::MADV_REMOVE) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    pub fn size(&self) -> usize {
        self.len
    }

    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// Copies `src` into the memory at `offset`. The bounds are checked here.
    ///
    /// # Safety
    /// `src` is readable for `n` bytes (host memory a program handed to a copy, or
    /// another view).
    pub unsafe fn write(&self, offset: usize, src: *const u8, n: usize) {
        assert!(offset.checked_add(n).is_some_and(|end| end <= self.len));
        // Safety: the destination lies inside our view (asserted); the source is the
        // caller's promise (host memory handed to a copy, or another view). memmove
        // semantics, since a device-to-device copy may overlap itself.
        unsafe { std::ptr::copy(src, self.view.add(offset), n) };
    }

    /// Copies memory at `offset` out to `dst`. The bounds are checked here.
    ///
    /// # Safety
    /// `dst` is writable for `n` bytes.
    pub unsafe fn read(&self, offset: usize, dst: *mut u8, n: usize) {
        assert!(offset.checked_add(n).is_some_and(|end| end <= self.len));
        // Safety: as in `write`, the other way round.
        unsafe { std::ptr::copy(self.view.add(offset), dst, n) };
    }

    /// Fills `n` bytes at `offset` with a repeated pattern of 1, 2 or 4 bytes.
    pub fn fill(&self, offset: usize, pattern: &[u8], n: usize) {
        assert!(offset.checked_add(n).is_some_and(|end| end <= self.len));
        assert!(!pattern.is_empty());
        // Safety: the range lies inside our view (asserted) and nothing else borrows it as
        // a Rust reference (all access goes through raw copies).
        let dst = unsafe { std::slice::from_raw_parts_mut(self.view.add(offset), n) };
        if pattern.iter().all(|b| *b == pattern[0]) {
            dst.fill(pattern[0]);
        } else {
            for (i, b) in dst.iter_mut().enumerate() {
                *b = pattern[i % pattern.len()];
            }
        }
    }

    /// The address of byte `offset` of the view, for copies between two views.
    pub fn view_ptr(&self, offset: usize) -> *mut u8 {
        assert!(offset <= self.len);
        // Safety: offset is within the mapping (asserted).
        unsafe { self.view.add(offset) }
    }
}

impl Drop for Backing {
    fn drop(&mut self) {
        // Safety: the view was mapped by `map_view` with this length and is owned by self.
        unsafe { libc::munmap(self.view.cast(), self.len) };
    }
}

#[derive(Debug)]
pub enum ImportError {
    NotAnFd,
    Foreign(String),
    Map(io::Error),
}

trait AsFdBorrowed {
    fn as_fd_borrowed(&self) -> BorrowedFd<'_>;
}
impl AsFdBorrowed for OwnedFd {
    fn as_fd_borrowed(&self) -> BorrowedFd<'_> {
        std::os::fd::AsFd::as_fd(self)
    }
}

fn map_view(fd: BorrowedFd<'_>, len: usize) -> io::Result<*mut u8> {
    // Safety: a new shared mapping of a file we hold open; its lifetime is tied to the
    // Backing that stores the pointer.
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
        return Err(io::Error::last_os_error());
    }
    Ok(p.cast())
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
        let a = Backing::create(2 << 20, true, "t=1").unwrap();
        let fd = a.export().unwrap().into_raw_fd();
        let b = Backing::import(fd).unwrap();
        let mut out = [0u8; 5];
        // Safety: both pointers are to live local buffers of 5 bytes.
        unsafe {
            a.write(100, b"hello".as_ptr(), 5);
            b.read(100, out.as_mut_ptr(), 5);
        }
        assert_eq!(&out, b"hello");
        // Safety: fd was leaked above by into_raw_fd and is ours to close.
        unsafe { libc::close(fd) };
    }

    #[test]
    fn recycled_memory_reads_as_zeros() {
        let a = Backing::create(2 << 20, false, "t=1").unwrap();
        let mut out = [9u8; 4];
        // Safety: local buffers of 4 bytes.
        unsafe {
            a.write(4096, [1u8, 2, 3, 4].as_ptr(), 4);
            a.recycle().unwrap();
            a.read(4096, out.as_mut_ptr(), 4);
        }
        assert_eq!(out, [0; 4]);
        assert!(a.private());
    }

    #[test]
    fn foreign_fds_are_refused() {
        let f = std::fs::File::open("/dev/null").unwrap();
        assert!(matches!(
            Backing::import(f.as_raw_fd()),
            Err(ImportError::Foreign(_))
        ));
        assert!(matches!(Backing::import(-1), Err(ImportError::NotAnFd)));
        assert!(matches!(
            Backing::import(999_999),
            Err(ImportError::NotAnFd)
        ));
    }
}
