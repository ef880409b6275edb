//! The system calls under the runtime: closing fds (anonymous mappings for pinned host
//! memory and reading the program's memory are `cumock_support::host`'s, shared with the
//! mock driver; taking another process's fd for IPC is the `cumock-fd-passing` crate's).

pub use cumock_support::host::{read_program_memory, HostMapping};

pub fn close(fd: i32) {
    // Safety: an fd the runtime owns.
    unsafe { libc::close(fd) };
}
