//! Host memory the libraries map for themselves, and the program's memory read without
//! trusting its pointers.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Page-locked host memory handed to the program (cuMemAllocHost on the mock,
/// cudaMallocHost on a driver without it): an anonymous read-write mapping, unmapped on
/// drop. The program reads and writes it directly, so it is ordinary host memory.
#[derive(Debug)]
pub struct HostMapping {
    base: usize,
    len: usize,
}

impl HostMapping {
    /// `len` (> 0) bytes of zeroed, page-aligned host memory.
    pub fn create(len: usize) -> io::Result<Self> {
        // Safety: a fresh private anonymous mapping, owned by the returned value; it
        // touches no existing memory.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Self {
            base: p as usize,
            len,
        })
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

    /// The mapping's address, no longer unmapped on drop: for a table that keeps
    /// addresses and sizes (give it back with [`from_raw`](Self::from_raw)).
    pub fn into_raw(self) -> *mut libc::c_void {
        let p = self.base as *mut libc::c_void;
        std::mem::forget(self);
        p
    }

    /// Takes back a mapping [`into_raw`](Self::into_raw) gave out.
    ///
    /// # Safety
    /// `p` and `len` are a mapping's from `into_raw` and `len`, not taken back before.
    pub unsafe fn from_raw(p: *mut libc::c_void, len: usize) -> Self {
        Self {
            base: p as usize,
            len,
        }
    }
}

impl Drop for HostMapping {
    fn drop(&mut self) {
        // Safety: the range was mapped by `create` and is owned by self.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// Copies the program's bytes at `addr` into `buf` without trusting the address: as many
/// bytes as are readable from `addr` on, stopping at the first byte that is not (an
/// unmapped page, a PROT_NONE reservation, an address past the user range). Returns how
/// many were copied. A plain read of a bad pointer would fault the whole process; here the
/// kernel checks the range and answers EFAULT.
///
/// Page by page, so that a short read ends exactly where readable memory ends whatever
/// the kernel's granularity of partial transfers.
pub fn read_program_memory(addr: u64, buf: &mut [u8]) -> usize {
    const PAGE: u64 = 4096;
    let mut done = 0usize;
    while done < buf.len() {
        let at = match addr.checked_add(done as u64) {
            Some(a) if a != 0 => a,
            _ => break,
        };
        let to_page_end = (PAGE - at % PAGE) as usize;
        let n = to_page_end.min(buf.len() - done);
        let got = read_chunk(at, &mut buf[done..done + n]);
        done += got;
        if got < n {
            break;
        }
    }
    done
}

/// One chunk within a page: process_vm_readv on this very process, or, where a sandbox
/// forbids that call (seccomp: EPERM, ENOSYS), a write of the bytes into a pipe, which
/// the kernel equally checks (EFAULT) before reading them back.
fn read_chunk(addr: u64, buf: &mut [u8]) -> usize {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // Safety: the kernel writes at most `buf.len()` bytes into `buf`, which we own, and
    // checks the remote range itself (EFAULT where it is not readable).
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n >= 0 {
        return n as usize;
    }
    match io::Error::last_os_error().raw_os_error() {
        Some(libc::EFAULT) | Some(libc::ESRCH) => 0,
        _ => read_chunk_through_pipe(addr, buf),
    }
}

fn read_chunk_through_pipe(addr: u64, buf: &mut [u8]) -> usize {
    let mut fds = [0; 2];
    // Safety: pipe2 writes two fds into the array we own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return 0;
    }
    // Safety: both fds are fresh and ours; OwnedFd closes them.
    let (rd, wr) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // Safety: write reads from `addr` in the kernel, which answers EFAULT for bytes that
    // are not readable instead of faulting; a chunk (at most a page) fits a pipe's buffer.
    let w = unsafe { libc::write(wr.as_raw_fd(), addr as *const libc::c_void, buf.len()) };
    if w <= 0 {
        return 0;
    }
    // Safety: read writes at most `w` (<= buf.len()) bytes into `buf`, which we own.
    let r = unsafe { libc::read(rd.as_raw_fd(), buf.as_mut_ptr().cast(), w as usize) };
    r.max(0) as usize
}

/// A plain C value (an integer, or a struct of integers and pointers, for which every bit
/// pattern is a value) from the program's memory; `None` where it is not all readable.
pub fn read_program_value<T: Copy>(addr: u64) -> Option<T> {
    let mut bytes = vec![0u8; std::mem::size_of::<T>()];
    (read_program_memory(addr, &mut bytes) == bytes.len())
        // Safety: `bytes` holds size_of::<T>() bytes, and T is plain old data (above).
        .then(|| unsafe { bytes.as_ptr().cast::<T>().read_unaligned() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapping_is_zeroed_writable_and_readable_back() {
        let m = HostMapping::create(8192).unwrap();
        let mut buf = [1u8; 16];
        assert_eq!(read_program_memory(m.base() as u64, &mut buf), 16);
        assert_eq!(buf, [0; 16]);
        let p = m.into_raw();
        // Safety: the mapping just made, 8192 bytes, read-write.
        unsafe { p.cast::<u32>().write(7) };
        assert_eq!(read_program_value::<u32>(p as u64), Some(7));
        // Safety: from `into_raw` above, with its length.
        drop(unsafe { HostMapping::from_raw(p, 8192) });
    }

    #[test]
    fn the_pipe_fallback_reads_what_is_readable_and_nothing_else() {
        // The path taken where a sandbox forbids process_vm_readv.
        let bytes = *b"cumock";
        let mut buf = [0u8; 6];
        assert_eq!(read_chunk_through_pipe(bytes.as_ptr() as u64, &mut buf), 6);
        assert_eq!(buf, bytes);
        let m = HostMapping::create(1 << 16).unwrap();
        // Safety: the test's own mapping, made unreadable.
        let r = unsafe { libc::mprotect(m.base() as *mut libc::c_void, m.len(), libc::PROT_NONE) };
        assert_eq!(r, 0);
        assert_eq!(read_chunk_through_pipe(m.base() as u64, &mut buf), 0);
        assert_eq!(read_program_memory(m.base() as u64, &mut buf), 0);
    }

    #[test]
    fn reading_stops_where_readable_memory_ends() {
        assert_eq!(read_program_memory(0, &mut [0; 8]), 0);
        assert_eq!(read_program_memory(0x10, &mut [0; 8]), 0);
    }
}
