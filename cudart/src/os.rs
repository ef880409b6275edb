//! The system calls under the runtime: anonymous mappings for pinned host memory on a
//! driver without it, and taking another process's fd for IPC.

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

/// A duplicate, in this process, of file descriptor `fd` of process `pid`
/// (pidfd_open + pidfd_getfd, Linux 5.6). The kernel allows it when this process may
/// ptrace `pid`: same user, and under Yama's ptrace_scope 1 only if `pid` allowed it
/// (`allow_fd_taking`).
pub fn take_fd(pid: i32, fd: i32) -> io::Result<i32> {
    // Safety: plain system calls on integers; a failure is reported by errno.
    unsafe {
        let pidfd = libc::syscall(libc::SYS_pidfd_open, pid, 0) as i32;
        if pidfd < 0 {
            return Err(io::Error::last_os_error());
        }
        let got = libc::syscall(libc::SYS_pidfd_getfd, pidfd, fd, 0) as i32;
        let err = io::Error::last_os_error();
        libc::close(pidfd);
        if got < 0 {
            Err(err)
        } else {
            Ok(got)
        }
    }
}

/// Lets any process of this user take this process's fds (Yama's ptrace_scope 1 would
/// otherwise allow only its ancestors): what an exporter of IPC handles opts into.
pub fn allow_fd_taking() {
    // Safety: prctl with integer arguments; on a kernel without Yama it fails harmlessly.
    unsafe { libc::prctl(libc::PR_SET_PTRACER, libc::PR_SET_PTRACER_ANY, 0, 0, 0) };
}

pub fn close(fd: i32) {
    // Safety: an fd the runtime owns.
    unsafe { libc::close(fd) };
}

pub fn pid() -> i32 {
    // Safety: getpid cannot fail.
    unsafe { libc::getpid() }
}
