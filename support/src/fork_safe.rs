//! A lock that survives `fork()`: in the child only the forking thread exists, so a lock
//! another thread held at the fork would stay held forever. Registered with
//! `pthread_atfork`, the owner takes the lock before the fork ([`hold_for_fork`]) and
//! releases it on both sides after: in the parent by unlocking, in the child by resetting
//! it to its initial state, since an unlock could try to wake a thread parked on it in the
//! parent, which does not exist there.
//!
//! The lock is [`StateLock`], whose uncontended release is a plain store: every mock call
//! takes the driver's state lock once, and the two atomic read-modify-writes of a
//! `parking_lot` lock and unlock were most of a cuMemAddressReserve+cuMemAddressFree
//! pair (issue 23).
//!
//! [`hold_for_fork`]: ForkSafeMutex::hold_for_fork

use lock_api::{GuardNoSend, RawMutex};
use parking_lot::lock_api;
use std::sync::atomic::{AtomicU32, Ordering};

/// A mutex over a futex word: taking it is one compare-and-swap, releasing it a plain
/// store (no read-modify-write, so no locked instruction on x86-64) and a load of the
/// sleepers' count. A thread that finds it taken spins briefly, then sleeps on the word.
///
/// The release's load may pass its store (x86-64 lets a load overtake an earlier store),
/// so a sleeper that registered in that instant may not be woken: every sleep is
/// therefore bounded ([`SLEEP_NS`]), after which the sleeper looks again. Such a miss
/// costs that sleeper at most one bound, never a hang; the window is a few nanoseconds
/// and the futex call itself rechecks the word, so it is rare.
#[derive(Debug)]
pub struct StateLock {
    /// 0 free, 1 taken: the futex word.
    word: AtomicU32,
    /// Threads asleep on `word`, or about to be.
    sleepers: AtomicU32,
}

/// How long a sleeper sleeps at most before it looks at the lock again (see
/// [`StateLock`]).
const SLEEP_NS: i64 = 1_000_000;

/// How many times a thread looks at a taken lock before it sleeps: about what a short
/// mock call holds it for.
const SPINS: u32 = 100;

impl StateLock {
    #[cold]
    fn lock_contended(&self) {
        for _ in 0..SPINS {
            std::hint::spin_loop();
            if self.word.load(Ordering::Relaxed) == 0 && self.try_lock() {
                return;
            }
        }
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        while !self.try_lock() {
            let bound = libc::timespec {
                tv_sec: 0,
                tv_nsec: SLEEP_NS,
            };
            // Safety: FUTEX_WAIT reads the word this lock owns and the timespec above;
            // it returns early when the word is no longer 1, on a wake, a signal or the
            // timeout, all of which the loop handles by trying again.
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.word.as_ptr(),
                    libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                    1u32,
                    &bound as *const libc::timespec,
                )
            };
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }

    #[cold]
    fn wake_one(&self) {
        // Safety: FUTEX_WAKE reads no memory but the word's address, which this lock owns.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.word.as_ptr(),
                libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                1u32,
            )
        };
    }
}

// Safety: `lock` and `try_lock` take the word from 0 to 1 with an acquiring
// compare-and-swap, so one holder at a time; `unlock` releases it with a release store.
unsafe impl RawMutex for StateLock {
    const INIT: Self = Self {
        word: AtomicU32::new(0),
        sleepers: AtomicU32::new(0),
    };

    // As parking_lot's: a guard stays on the thread that took the lock.
    type GuardMarker = GuardNoSend;

    #[inline]
    fn lock(&self) {
        if self
            .word
            .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
    }

    #[inline]
    fn try_lock(&self) -> bool {
        self.word
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    #[inline]
    unsafe fn unlock(&self) {
        self.word.store(0, Ordering::Release);
        if self.sleepers.load(Ordering::Relaxed) != 0 {
            self.wake_one();
        }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.word.load(Ordering::Relaxed) != 0
    }
}

/// The mutex over [`StateLock`] (everything uses it as a mutex, through `Deref`).
pub type Mutex<T> = lock_api::Mutex<StateLock, T>;

/// What [`ForkSafeMutex`]'s `lock` returns.
pub type ForkSafeGuard<'a, T> = lock_api::MutexGuard<'a, StateLock, T>;

/// A [`StateLock`] mutex with the three steps of a fork.
#[derive(Debug)]
pub struct ForkSafeMutex<T>(Mutex<T>);

impl<T: Default> Default for ForkSafeMutex<T> {
    fn default() -> Self {
        Self::new(T::default())
    }
}

impl<T> ForkSafeMutex<T> {
    pub const fn new(value: T) -> Self {
        Self(Mutex::const_new(StateLock::INIT, value))
    }

    /// `pthread_atfork`'s prepare step: takes the lock and keeps it through the fork.
    pub fn hold_for_fork(&self) {
        std::mem::forget(self.0.lock());
    }

    /// `pthread_atfork`'s parent step: releases what [`hold_for_fork`](Self::hold_for_fork)
    /// took.
    ///
    /// # Safety
    /// This thread called `hold_for_fork` on this lock and has not released it since.
    pub unsafe fn release_in_parent(&self) {
        // Safety: the caller's contract: this thread holds the lock, its guard forgotten.
        unsafe { self.0.force_unlock() };
    }

    /// `pthread_atfork`'s child step: the lock as new, unlocked, with no sleepers.
    ///
    /// # Safety
    /// Called in a forked child, by the thread that called
    /// [`hold_for_fork`](Self::hold_for_fork) on this lock before the fork: the only
    /// thread there, and the lock's holder, so nothing else reads the lock's state while
    /// it is written.
    pub unsafe fn reset_in_child(&self) {
        let raw = self.0.raw() as *const StateLock as *mut StateLock;
        // Safety: the caller's contract; `raw` points to this lock's own state, and INIT
        // is a valid value of it.
        unsafe { raw.write(StateLock::INIT) };
    }
}

impl<T> std::ops::Deref for ForkSafeMutex<T> {
    type Target = Mutex<T>;

    fn deref(&self) -> &Mutex<T> {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn held_for_a_fork_then_released_or_reset() {
        let m = ForkSafeMutex::new(1);
        m.hold_for_fork();
        assert!(m.try_lock().is_none(), "held across the fork");
        // Safety: held just above by this thread.
        unsafe { m.release_in_parent() };
        *m.lock() += 1;
        m.hold_for_fork();
        // Safety: as in a child: this thread holds it and no other thread uses it.
        unsafe { m.reset_in_child() };
        assert_eq!(*m.try_lock().expect("unlocked after the reset"), 2);
    }

    /// Threads that take turns with long and short holds, so that some sleep: every
    /// increment is counted once (mutual exclusion), and none is left asleep (the count
    /// completes, and no sleeper is left registered).
    #[test]
    fn excludes_and_wakes_its_sleepers() {
        let m = Arc::new(ForkSafeMutex::new(0u64));
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let m = m.clone();
                std::thread::spawn(move || {
                    for i in 0..2000u64 {
                        let mut g = m.lock();
                        let v = *g;
                        if (i + t) % 500 == 0 {
                            std::thread::sleep(std::time::Duration::from_micros(200));
                        }
                        *g = v + 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*m.lock(), 8 * 2000);
        // Safety: reads the raw lock's counter only; the lock is not taken or released.
        let raw = unsafe { m.raw() };
        assert_eq!(raw.sleepers.load(Ordering::SeqCst), 0);
        assert!(!m.is_locked());
    }
}
