//! The driver of the process (made on first use from the environment) and what a fork
//! does to it: the state's lock is held across fork(), and a child forked after cuInit
//! is refused every call, as on the real driver.

use super::error::*;
use super::profile::Profile;
use super::Driver;
use cumock_support::Settings;
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

/// The process's driver, made on first use from the process's settings (read once by
/// `cumock_support::settings`, through the diagnostics, which say what did not parse):
/// the only place the model is given them.
pub fn driver() -> Result<&'static Driver, &'static str> {
    static DRIVER: std::sync::OnceLock<Result<Driver, String>> = std::sync::OnceLock::new();
    DRIVER
        .get_or_init(|| {
            let settings = crate::diagnostics::settings();
            super::stream_queues::set_schedule(settings.schedule);
            let d = profile_from_settings(settings).map(|p| Driver::with_settings(p, settings));
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
        d.state.hold_for_fork();
    }
}

extern "C" fn after_fork_parent() {
    if let Ok(d) = driver() {
        // Safety: before_fork took the lock in this thread.
        unsafe { d.state.release_in_parent() };
    }
}

extern "C" fn after_fork_child() {
    if let Ok(d) = driver() {
        // Safety: this thread is the only one in the child, and it holds the lock (taken
        // in before_fork).
        unsafe { d.state.reset_in_child() };
        d.state.lock().vmm.after_fork_child();
        if d.initialized.load(Ordering::Acquire) {
            d.forked_after_init.store(true, Ordering::Release);
        }
    }
}

/// The devices: a profile file (`CUMOCK_PROFILE`), cut to `CUMOCK_DEVICES` of them if
/// that is set, or that many copies of the built-in H200.
pub fn profile_from_settings(settings: &Settings) -> Result<Profile, String> {
    let devices = settings.devices.clone()?;
    if let Some(path) = &settings.profile {
        let path = path.display();
        let bytes = super::images::read_file(&path.to_string(), super::images::MAX_PROFILE_BYTES)
            .map_err(|e| format!("CUMOCK_PROFILE={e}"))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("CUMOCK_PROFILE={path}: not UTF-8 text"))?;
        let mut p = Profile::parse(&text).map_err(|e| format!("CUMOCK_PROFILE={path}: {e}"))?;
        if let Some(n) = devices {
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
    match devices {
        Some(n) => Profile::builtin_with_devices(n),
        None => Ok(Profile::builtin()),
    }
}
