//! A lock that survives `fork()`: in the child only the forking thread exists, so a lock
//! another thread held at the fork would stay held forever. Registered with
//! `pthread_atfork`, the owner takes the lock before the fork ([`hold_for_fork`]) and
//! releases it on both sides after: in the parent by unlocking, in the child by resetting
//! it to its initial state, since an unlock could try to wake a thread parked on it in the
//! parent, which does not exist there.
//!
//! [`hold_for_fork`]: ForkSafeMutex::hold_for_fork

use parking_lot::lock_api::RawMutex as _;
use parking_lot::{Mutex, RawMutex};

/// A `parking_lot::Mutex` (everything else uses it as one, through `Deref`) with the three
/// steps of a fork.
#[derive(Debug, Default)]
pub struct ForkSafeMutex<T>(Mutex<T>);

impl<T> ForkSafeMutex<T> {
    pub const fn new(value: T) -> Self {
        Self(Mutex::new(value))
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

    /// `pthread_atfork`'s child step: the lock as new, unlocked.
    ///
    /// # Safety
    /// Called in a forked child, by the thread that called
    /// [`hold_for_fork`](Self::hold_for_fork) on this lock before the fork: the only
    /// thread there, and the lock's holder, so nothing else reads the lock's state while
    /// it is written.
    pub unsafe fn reset_in_child(&self) {
        let raw = self.0.raw() as *const RawMutex as *mut RawMutex;
        // Safety: the caller's contract; `raw` points to this lock's own state, and a
        // RawMutex is a plain atomic byte for which INIT is a valid value.
        unsafe { raw.write(RawMutex::INIT) };
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
}
