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
