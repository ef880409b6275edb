//! The host's loads of memory that device work wrote and the host has not synchronised
//! with (`CUMOCK_MISUSE` only): a trap on the program's view of the mock's own
//! page-locked and managed memory.
//!
//! Once a kernel or a queued copy has run and written bytes there, the pages holding
//! them are made inaccessible (PROT_NONE) until the host synchronises with that work. A
//! load by a program thread meanwhile faults; the SIGSEGV handler sees the address lies
//! in one of the allocations registered here, notes the load (thread, address, the
//! faulting instruction), gives the whole allocation its access back and returns, so the
//! load runs again and proceeds. The note is taken up at the thread's next call into the
//! driver (`drain`), where the ordering-bug model compares it with the work that wrote
//! the bytes (`ordering::host_loaded`). Device work never needs the program's view
//! protected while it runs: it has run already when the pages are armed, and a fault of a
//! thread of the mock's own (a stream's worker, a thread inside a driver call) only
//! disarms. Everything is best effort in one direction: a load the trap misses (a window
//! already ended by an earlier fault) goes unreported, never a load invented.
//!
//! The handler is async-signal-safe: atomics over fixed tables, `mprotect`, `gettid`,
//! and a call of the previous handler. A fault at any address outside the registered
//! allocations goes to the handler that was installed before ours, untouched (the
//! default action if there was none). The mock never protects memory it does not own:
//! only cuMemAllocHost / cuMemHostAlloc mappings and managed allocations are registered,
//! and an allocation leaves the table before it is freed.

use std::sync::atomic::{AtomicI32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::OnceLock;

const ALLOCATIONS: usize = 256;
const LOADS: usize = 256;
const MOCK_THREADS: usize = 512;

const FREE: u8 = 0;
/// Taken, its range being written: not yet anyone's to match.
const CLAIMED: u8 = 1;
const REGISTERED: u8 = 2;
const ARMED: u8 = 3;

struct Allocation {
    state: AtomicU8,
    start: AtomicUsize,
    len: AtomicUsize,
}

static TABLE: [Allocation; ALLOCATIONS] = [const {
    Allocation {
        state: AtomicU8::new(FREE),
        start: AtomicUsize::new(0),
        len: AtomicUsize::new(0),
    }
}; ALLOCATIONS];

const EMPTY: u8 = 0;
const FILLING: u8 = 1;
const FULL: u8 = 2;

/// A load the handler noted.
struct Load {
    state: AtomicU8,
    tid: AtomicI32,
    addr: AtomicUsize,
    pc: AtomicUsize,
    /// `DRAINS` when it was noted: a note no thread of the program takes up is dropped
    /// after a while.
    epoch: AtomicU64,
}

static NOTED: [Load; LOADS] = [const {
    Load {
        state: AtomicU8::new(EMPTY),
        tid: AtomicI32::new(0),
        addr: AtomicUsize::new(0),
        pc: AtomicUsize::new(0),
        epoch: AtomicU64::new(0),
    }
}; LOADS];
static PENDING: AtomicUsize = AtomicUsize::new(0);
static DRAINS: AtomicU64 = AtomicU64::new(0);

/// Threads that are the mock's for now (a stream's worker, a thread inside a driver
/// call): their faults disarm and note nothing. Thread ids, 0 for a free slot.
static MOCK: [AtomicI32; MOCK_THREADS] = [const { AtomicI32::new(0) }; MOCK_THREADS];

/// The SIGSEGV action installed before ours.
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

fn tid() -> i32 {
    // Safety: gettid takes no arguments and touches no memory.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

fn page() -> usize {
    static PAGE: OnceLock<usize> = OnceLock::new();
    // Safety: sysconf reads a system value.
    *PAGE.get_or_init(|| (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(4096) as usize)
}

/// The calling thread is the mock's until the returned guard drops (None where the
/// table is full: its faults then note loads, which `drain` drops as no program
/// thread's).
pub fn mock_thread() -> Option<MockThread> {
    let me = tid();
    for (i, slot) in MOCK.iter().enumerate() {
        if slot
            .compare_exchange(0, me, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            return Some(MockThread(i));
        }
    }
    None
}

pub struct MockThread(usize);

impl Drop for MockThread {
    fn drop(&mut self) {
        MOCK[self.0].store(0, Ordering::Release);
    }
}

/// Threads of the mock's running the program's code now (a stream's worker calling a
/// host function): their loads are the program's.
static PROGRAM: [AtomicI32; 64] = [const { AtomicI32::new(0) }; 64];

fn is_mock_thread(me: i32) -> bool {
    MOCK.iter().any(|t| t.load(Ordering::Acquire) == me)
        && !PROGRAM.iter().any(|t| t.load(Ordering::Acquire) == me)
}

/// Runs the program's host function `f` on a stream's worker: its loads are noted as a
/// program thread's, and handed to the ordering-bug model as the host function's own
/// (it runs in its stream's order) once it returns: `(address, instruction)` each.
pub fn program_code(f: impl FnOnce()) -> Vec<(u64, usize)> {
    if !crate::diagnostics::misuse_enabled() {
        f();
        return Vec::new();
    }
    let me = tid();
    let slot = PROGRAM.iter().find(|t| {
        t.compare_exchange(0, me, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    });
    f();
    if let Some(t) = slot {
        t.store(0, Ordering::Release);
    }
    drain()
}

/// The registered allocation holding `addr`.
fn slot_at(addr: usize) -> Option<&'static Allocation> {
    TABLE.iter().find(|a| {
        a.state.load(Ordering::Acquire) >= REGISTERED && {
            let start = a.start.load(Ordering::Acquire);
            addr >= start && addr - start < a.len.load(Ordering::Acquire)
        }
    })
}

fn restore(a: &Allocation) {
    let (start, len) = (
        a.start.load(Ordering::Acquire),
        a.len.load(Ordering::Acquire),
    );
    // Safety: a registered allocation is the mock's own mapping of `len` bytes (page
    // rounded) at `start`, read-write for the program: access as it was.
    unsafe {
        libc::mprotect(
            start as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
        )
    };
}

/// Makes the pages of `[lo, hi)` fault for the program, inside the mock's own allocation
/// `[start, start+len)` (registered now if it was not). Nothing is armed when the table
/// is full or the handler cannot be installed (a load then goes unseen).
pub fn arm(start: u64, len: u64, lo: u64, hi: u64) {
    if !install() || hi <= lo {
        return;
    }
    let p = page();
    let (start, len) = (start as usize, (len as usize).next_multiple_of(p));
    let a = match slot_at(start) {
        Some(a) => a,
        None => {
            let Some(a) = TABLE.iter().find(|a| {
                a.state
                    .compare_exchange(FREE, CLAIMED, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
            }) else {
                return;
            };
            a.start.store(start, Ordering::Release);
            a.len.store(len, Ordering::Release);
            a.state.store(REGISTERED, Ordering::Release);
            a
        }
    };
    let first = (lo as usize / p * p).max(start);
    let end = (hi as usize).next_multiple_of(p).min(start + len);
    if end <= first {
        return;
    }
    a.state.store(ARMED, Ordering::Release);
    // Safety: `[first, end)` lies in the mock's own allocation (clipped above).
    unsafe { libc::mprotect(first as *mut libc::c_void, end - first, libc::PROT_NONE) };
}

/// The host synchronised with what wrote at `addr`: its allocation is accessible again.
pub fn disarm_at(addr: u64) {
    if let Some(a) = slot_at(addr as usize) {
        if a.state
            .compare_exchange(ARMED, REGISTERED, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            restore(a);
        }
    }
}

/// The allocation at `start` is about to be freed: it leaves the table (its memory is
/// unmapped or replaced by the caller right after).
pub fn forget(start: u64) {
    for a in &TABLE {
        if a.state.load(Ordering::Acquire) >= REGISTERED
            && a.start.load(Ordering::Acquire) == start as usize
        {
            if a.state.load(Ordering::Acquire) == ARMED {
                restore(a);
            }
            a.state.store(FREE, Ordering::Release);
        }
    }
}

/// Installs the handler once; false if it could not be.
fn install() -> bool {
    static DONE: OnceLock<bool> = OnceLock::new();
    *DONE.get_or_init(|| {
        // Safety: zeroed sigaction structs are valid "no handler" values; the new one
        // names our handler with SA_SIGINFO, as its signature needs.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = on_fault
                as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
                as usize;
            new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESTART;
            libc::sigemptyset(&mut new.sa_mask);
            // The previous action is kept before ours can run.
            if libc::sigaction(libc::SIGSEGV, std::ptr::null(), &mut old) != 0 {
                return false;
            }
            let _ = PREVIOUS.set(old);
            libc::sigaction(libc::SIGSEGV, &new, std::ptr::null_mut()) == 0
        }
    })
}

/// The faulting instruction, and whether the access was a store where the platform says.
///
/// # Safety
/// `ctx` is the ucontext the kernel passed to a SA_SIGINFO handler.
unsafe fn where_faulted(ctx: *mut libc::c_void) -> (usize, bool) {
    let uc = ctx as *const libc::ucontext_t;
    if uc.is_null() {
        return (0, false);
    }
    #[cfg(target_arch = "x86_64")]
    {
        // Safety: the caller's rule; gregs are plain integers.
        let g = unsafe { &(*uc).uc_mcontext.gregs };
        // The page fault's error code: bit 1 set for a write.
        (
            g[libc::REG_RIP as usize] as usize,
            g[libc::REG_ERR as usize] & 2 != 0,
        )
    }
    #[cfg(target_arch = "aarch64")]
    {
        // Safety: the caller's rule.
        (unsafe { (*uc).uc_mcontext.pc } as usize, false)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        (0, false)
    }
}

extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // Safety: the kernel passes a valid siginfo to a SA_SIGINFO handler.
    let (addr, code) = unsafe { ((*info).si_addr() as usize, (*info).si_code) };
    // Ours only as a protection fault (SEGV_ACCERR) inside a registered allocation: an
    // unmapped page there, or a SIGSEGV sent by kill or raise, is not the trap's.
    const SEGV_ACCERR: libc::c_int = 2;
    let ours = if code == SEGV_ACCERR {
        slot_at(addr)
    } else {
        None
    };
    let Some(a) = ours else {
        // Safety: the arguments the kernel gave us, passed on as they came.
        unsafe { chain(sig, info, ctx) };
        return;
    };
    let was = match a
        .state
        .compare_exchange(ARMED, REGISTERED, Ordering::AcqRel, Ordering::Acquire)
    {
        Ok(_) => ARMED,
        Err(now) => now,
    };
    if was == FREE || was == CLAIMED {
        // Forgotten (being freed) since it matched: not ours any more.
        // Safety: the arguments the kernel gave us, passed on as they came.
        unsafe { chain(sig, info, ctx) };
        return;
    }
    // Armed or not (another thread may be disarming it now), the allocation gets its
    // access back, so the load runs again and proceeds.
    restore(a);
    if was != ARMED {
        return;
    }
    let me = tid();
    // Safety: `ctx` as the kernel passed it.
    let (pc, store) = unsafe { where_faulted(ctx) };
    // Stores are seen by the comparison at the synchronisation (`ordering`).
    if store || is_mock_thread(me) {
        return;
    }
    for l in &NOTED {
        if l.state
            .compare_exchange(EMPTY, FILLING, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            l.tid.store(me, Ordering::Relaxed);
            l.addr.store(addr, Ordering::Relaxed);
            l.pc.store(pc, Ordering::Relaxed);
            l.epoch
                .store(DRAINS.load(Ordering::Relaxed), Ordering::Relaxed);
            l.state.store(FULL, Ordering::Release);
            PENDING.fetch_add(1, Ordering::AcqRel);
            return;
        }
    }
}

/// Passes a fault that is not ours to the handler installed before ours.
///
/// # Safety
/// The arguments are those the kernel gave `on_fault`.
unsafe fn chain(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let prev = PREVIOUS.get();
    let h = prev.map_or(libc::SIG_DFL, |p| p.sa_sigaction);
    if h == libc::SIG_DFL || h == libc::SIG_IGN {
        // The default action: the faulting instruction runs again and ends the process
        // as it would have without us.
        // Safety: a zeroed sigaction is SIG_DFL with no flags.
        unsafe {
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(sig, &dfl, std::ptr::null_mut());
        }
        return;
    }
    let flags = prev.map_or(0, |p| p.sa_flags);
    if flags & libc::SA_SIGINFO != 0 {
        // Safety: with SA_SIGINFO, sa_sigaction is such a function.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(h) };
        f(sig, info, ctx);
    } else {
        // Safety: without it, sa_handler (the same field) is such a function.
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(h) };
        f(sig);
    }
}

/// At a driver call of a program thread: its noted loads, as `(address, instruction)`.
/// Notes no thread takes up for a while (a kernel's executor threads fault too, and
/// never call the driver) are dropped.
pub fn drain() -> Vec<(u64, usize)> {
    if PENDING.load(Ordering::Acquire) == 0 {
        return Vec::new();
    }
    let me = tid();
    let now = DRAINS.fetch_add(1, Ordering::AcqRel) + 1;
    let mut out = Vec::new();
    for l in &NOTED {
        if l.state.load(Ordering::Acquire) != FULL {
            continue;
        }
        let take = l.tid.load(Ordering::Relaxed) == me;
        if take || now - l.epoch.load(Ordering::Relaxed) > 64 {
            if take {
                out.push((
                    l.addr.load(Ordering::Relaxed) as u64,
                    l.pc.load(Ordering::Relaxed),
                ));
            }
            l.state.store(EMPTY, Ordering::Release);
            PENDING.fetch_sub(1, Ordering::AcqRel);
        }
    }
    out
}
