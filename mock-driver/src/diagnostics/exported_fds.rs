//! Exported fds: an fd the program was given by cuMemExportToShareableHandle (or a
//! pool's export) and never closed is a leak, told apart from a number reused for another
//! file by the file's identity.

use super::call_sites::CallSite;
use super::Leak;
use parking_lot::Mutex;
use std::os::fd::{AsRawFd, OwnedFd};

/// An fd the program was given by cuMemExportToShareableHandle: still open at exit if
/// the same number names the same file (device and inode) then.
struct ExportedFd {
    fd: i32,
    identity: (u64, u64),
    /// Where the program exported it, when leak checking is on.
    site: Option<CallSite>,
}

static EXPORTED: Mutex<Vec<ExportedFd>> = Mutex::new(Vec::new());

pub fn note_exported_fd(fd: &OwnedFd) {
    if let Some(identity) = identity(fd.as_raw_fd()) {
        EXPORTED.lock().push(ExportedFd {
            fd: fd.as_raw_fd(),
            identity,
            site: super::settings().leaks.then(CallSite::capture),
        });
    }
}

fn identity(fd: i32) -> Option<(u64, u64)> {
    // Safety: fstat fills a plain struct; a closed fd makes it fail, which we report.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some((st.st_dev, st.st_ino))
}

/// The exported fds still open, as leaks.
pub(super) fn still_open() -> Vec<Leak> {
    EXPORTED
        .lock()
        .iter()
        .filter(|e| identity(e.fd) == Some(e.identity))
        .map(|e| Leak {
            what: format!("exported fd {} never closed", e.fd),
            site: e.site.clone(),
        })
        .collect()
}
