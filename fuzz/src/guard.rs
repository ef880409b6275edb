//! What a panic cannot report: an allocation too large (a corrupt size taken at its
//! word), and a process that aborts (a stack overflow, an allocation that failed). The
//! allocator notes the largest allocation of the input being run; above the hard limit it
//! fails the allocation, and the process aborts. The input being run is published here,
//! so that an abort's signal handler can write it to a file before the process ends.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// An allocation above this is a finding (reported after the input, not fatal).
pub const SOFT_LIMIT: usize = 256 << 20;
/// An allocation above this fails: the process aborts and the input is written out.
pub const HARD_LIMIT: usize = 4 << 30;

static LARGEST: AtomicU64 = AtomicU64::new(0);

pub struct Guard;

fn note(size: usize) -> bool {
    if size > SOFT_LIMIT {
        LARGEST.fetch_max(size as u64, Ordering::Relaxed);
        if crate::verbose() && size <= HARD_LIMIT {
            // Where it came from (allocating here is allowed: those are small).
            eprintln!(
                "cumock-fuzz: {size} bytes allocated at once at\n{}",
                std::backtrace::Backtrace::force_capture()
            );
        }
        if size > HARD_LIMIT {
            dump_current(b"oom");
            return false;
        }
    }
    true
}

// Safety: every call goes to the system allocator unchanged, or fails with NULL.
unsafe impl GlobalAlloc for Guard {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !note(layout.size()) {
            return std::ptr::null_mut();
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !note(layout.size()) {
            return std::ptr::null_mut();
        }
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !note(new_size) {
            return std::ptr::null_mut();
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// The largest allocation above [`SOFT_LIMIT`] since the last call (0 if none).
pub fn take_largest() -> u64 {
    LARGEST.swap(0, Ordering::Relaxed)
}

thread_local! {
    /// The input this thread runs, and where its abort writes it (`<dir>/<target>-`):
    /// read by the allocator and by the signal handler on this same thread (a const
    /// initialiser: no lazy initialisation there).
    static CURRENT: Cell<(*const u8, usize, *const u8, usize)> =
        const { Cell::new((std::ptr::null(), 0, std::ptr::null(), 0)) };
}
static DUMPED: AtomicBool = AtomicBool::new(false);

/// Publishes the input about to run on this thread (it must stay alive until
/// [`clear_current`]); `prefix` is what [`install`] returned.
pub fn set_current(input: &[u8], prefix: &'static [u8]) {
    CURRENT.set((input.as_ptr(), input.len(), prefix.as_ptr(), prefix.len()));
}

pub fn clear_current() {
    CURRENT.set((std::ptr::null(), 0, std::ptr::null(), 0));
}

/// Writes the current input to `<prefix><why>` with system calls only (no allocation:
/// this runs inside the allocator and in a signal handler). Once per process.
fn dump_current(why: &[u8]) {
    let Ok((p, len, prefix, plen)) = CURRENT.try_with(Cell::get) else {
        return;
    };
    if p.is_null() || prefix.is_null() || DUMPED.swap(true, Ordering::Relaxed) {
        return;
    }
    let mut path = [0u8; 1024];
    if plen + why.len() + 1 > path.len() {
        return;
    }
    // Safety: prefix points to a leaked buffer of plen bytes; p to the input being run,
    // alive until clear_current.
    unsafe {
        std::ptr::copy_nonoverlapping(prefix, path.as_mut_ptr(), plen);
        path[plen..plen + why.len()].copy_from_slice(why);
        let fd = libc::open(
            path.as_ptr().cast(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC,
            0o644,
        );
        if fd >= 0 {
            let _ = libc::write(fd, p.cast(), len);
            libc::close(fd);
        }
        let msg = b"cumock-fuzz: the process is ending; the input is in ";
        let _ = libc::write(2, msg.as_ptr().cast(), msg.len());
        let _ = libc::write(2, path.as_ptr().cast(), plen + why.len());
        let _ = libc::write(2, b"\n".as_ptr().cast(), 1);
    }
}

extern "C" fn on_abort(_: libc::c_int) {
    dump_current(b"abort");
}

/// Where an aborting process writes its input (`<dir>/<target>-abort` or `-oom`), and
/// the SIGABRT handler that does it (a stack overflow and a failed allocation abort).
pub fn install(crash_dir: &std::path::Path, target: &str) -> &'static [u8] {
    let _ = std::fs::create_dir_all(crash_dir);
    let prefix = format!("{}/{target}-", crash_dir.display()).into_bytes();
    let prefix: &'static [u8] = Vec::leak(prefix);
    // Safety: a handler that only makes async-signal-safe calls; SA_RESETHAND gives the
    // signal its default action (end the process) once the handler returns.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_abort as *const () as usize;
        sa.sa_flags = libc::SA_RESETHAND;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGABRT, &sa, std::ptr::null_mut());
    }
    prefix
}
