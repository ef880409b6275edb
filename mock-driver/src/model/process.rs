//! The driver of the process (made on first use from the environment) and what a fork
//! does to it: the state's lock is held across fork(), and a child forked after cuInit
//! is refused every call, as on the real driver.

use super::error::*;
use super::profile::Profile;
use super::Driver;
use std::sync::atomic::Ordering;

impl Driver {
    /// A process forked after cuInit gets CUDA_ERROR_NOT_INITIALIZED from every call, cuInit
    /// included, as on the H200 (probe fork-after-init): the child must exec to use CUDA.
    pub(super) fn refuse_forked_child(&self) -> CuResult<()> {
        if self.forked_after_init.load(Ordering::Acquire) {
            return Err(CuError::new(
                cumock_abi::result::CUDA_ERROR_NOT_INITIALIZED,
                "this process was forked after cuInit: the driver serves only the process \
                 that initialised it (exec a new program in the child to use CUDA there)",
            ));
        }
        Ok(())
    }
}

/// The process's driver, made on first use from the environment (`CUMOCK_PROFILE`, a
/// profile file; `CUMOCK_DEVICES`, a device count).
pub fn driver() -> Result<&'static Driver, &'static str> {
    static DRIVER: std::sync::OnceLock<Result<Driver, String>> = std::sync::OnceLock::new();
    DRIVER
        .get_or_init(|| {
            let d = profile_from_env().map(Driver::new);
            // Safety: registering plain extern "C" functions with no captured state.
            unsafe {
                libc::pthread_atfork(
                    Some(before_fork),
                    Some(after_fork_parent),
                    Some(after_fork_child),
                )
            };
            d
        })
        .as_ref()
        .map_err(|e| e.as_str())
}

/// fork() while another thread holds the state's lock would leave the child with a lock
/// no thread will ever release: the lock is taken across the fork and released on both
/// sides, so the child starts with a consistent, unlocked state.
extern "C" fn before_fork() {
    if let Ok(d) = driver() {
        std::mem::forget(d.state.lock());
    }
}

extern "C" fn after_fork_parent() {
    if let Ok(d) = driver() {
        // Safety: before_fork took the lock in this thread and forgot its guard.
        unsafe { d.state.force_unlock() };
    }
}

extern "C" fn after_fork_child() {
    if let Ok(d) = driver() {
        // An unlock could hand the lock to a thread parked on it in the parent, which
        // does not exist here: the child resets the lock to its initial state instead.
        // Safety: this thread is the only one in the child, and it holds the lock (taken
        // in before_fork), so nothing else reads the lock's state while it is written.
        unsafe {
            let raw = d.state.raw() as *const parking_lot::RawMutex as *mut parking_lot::RawMutex;
            raw.write(<parking_lot::RawMutex as parking_lot::lock_api::RawMutex>::INIT);
        }
        d.state.lock().vmm.after_fork_child();
        if d.initialized.load(Ordering::Acquire) {
            d.forked_after_init.store(true, Ordering::Release);
        }
    }
}

pub fn profile_from_env() -> Result<Profile, String> {
    if let Ok(path) = std::env::var("CUMOCK_PROFILE") {
        let bytes = super::images::read_file(&path, super::images::MAX_PROFILE_BYTES)
            .map_err(|e| format!("CUMOCK_PROFILE={e}"))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("CUMOCK_PROFILE={path}: not UTF-8 text"))?;
        let mut p = Profile::parse(&text).map_err(|e| format!("CUMOCK_PROFILE={path}: {e}"))?;
        if let Ok(n) = std::env::var("CUMOCK_DEVICES") {
            let n: usize = n
                .parse()
                .map_err(|_| format!("CUMOCK_DEVICES={n} is not a number"))?;
            if n > p.devices.len() {
                return Err(format!(
                    "CUMOCK_DEVICES={n} but the profile has {} device(s)",
                    p.devices.len()
                ));
            }
            p.devices.truncate(n);
            if let Some(m) = &mut p.peer_access {
                m.truncate(n);
                m.iter_mut().for_each(|r| r.truncate(n));
            }
        }
        return Ok(p);
    }
    match std::env::var("CUMOCK_DEVICES") {
        Ok(n) => Profile::builtin_with_devices(
            n.parse()
                .map_err(|_| format!("CUMOCK_DEVICES={n} is not a number"))?,
        ),
        Err(_) => Ok(Profile::builtin()),
    }
}
