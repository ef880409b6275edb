//! The system calls under the runtime: anonymous mappings for pinned host memory on a
//! driver without it, and closing fds (taking another process's fd for IPC is the
//! `cumock-fd-passing` crate's, shared with the mock driver).

use std::ffi::c_void;
use std::io;

/// `size` bytes of zeroed, page-aligned, read-write memory.
pub fn map_anonymous(size: usize) -> io::Result<*mut c_void> {
    // Safety: a fresh private anonymous mapping touches no existing memory.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        Err(io::Error::last_os_error())
    } else {
        Ok(p)
    }
}

/// Unmaps what `map_anonymous` gave.
pub fn unmap(p: *mut c_void, size: usize) {
    // Safety: the runtime's own mapping of this size, no longer handed out.
    unsafe { libc::munmap(p, size) };
}

pub fn close(fd: i32) {
    // Safety: an fd the runtime owns.
    unsafe { libc::close(fd) };
}

/// Copies the program's bytes at `addr` into `buf` without trusting the address, as many
/// as are readable; returns how many. process_vm_readv on this very process: the kernel
/// checks the range (EFAULT) where a plain read of a bad pointer would fault the program.
/// Where a sandbox forbids the call (seccomp), nothing is read: the caller refuses.
pub fn read_program_memory(addr: u64, buf: &mut [u8]) -> usize {
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut c_void,
        iov_len: buf.len(),
    };
    // Safety: the kernel writes at most `buf.len()` bytes into `buf`, which we own, and
    // checks the remote range itself.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    n.max(0) as usize
}
