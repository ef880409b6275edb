//! Copies and memsets, and the translation of device memory into host pointers for a
//! kernel: the bytes move outside the state's lock, kept in place by a `BytesInUse`, by
//! the safe functions of `crate::host_bytes`.

use super::error::*;
use super::ids::DevicePtr;
use super::vmm::{self, Need, ReservationKind, Segment, Vmm};
use super::Driver;
use crate::host_bytes::{self, HostBytes};

/// Where the bytes of a copy come from or go to.
pub enum HostOrDevice<'a> {
    Host(HostBytes<'a>),
    Device(DevicePtr),
}

/// What `cuMemsetD8/D16/D32` writes.
#[derive(Clone, Copy, Debug)]
pub enum Pattern {
    D8(u8),
    D16(u16),
    D32(u32),
}

impl Pattern {
    pub(super) fn bytes(&self) -> Vec<u8> {
        match self {
            Pattern::D8(v) => vec![*v],
            Pattern::D16(v) => v.to_ne_bytes().to_vec(),
            Pattern::D32(v) => v.to_ne_bytes().to_vec(),
        }
    }
}

impl Driver {
    /// Is `addr` device memory of this process (inside a reservation)? A "host" pointer
    /// that is, is treated as device memory, as unified addressing does; reading it as
    /// host memory would fault.
    pub fn is_device_address(&self, addr: DevicePtr) -> bool {
        self.state.lock().vmm.is_device_address(addr.get())
    }

    /// Copies `len` bytes; device sides are checked against the current context's device.
    /// Host sides hold at least `len` bytes.
    pub fn copy(&self, dst: HostOrDevice<'_>, src: HostOrDevice<'_>, len: u64) -> CuResult<()> {
        let device = self.state.lock().contexts.require_current()?.1.device;
        self.copy_on(device, dst, src, len, true)
    }

    /// What a copy of `len` bytes between the device addresses given (None: a host side)
    /// would be refused for, checked when an async copy is issued; its bytes move later,
    /// on its stream's worker (`copy_on`).
    pub fn check_copy_on(
        &self,
        device: usize,
        dst: Option<DevicePtr>,
        src: Option<DevicePtr>,
        len: u64,
    ) -> CuResult<()> {
        let st = self.state.lock();
        self.check_sticky(&st, device)?;
        for (side, need) in [(dst, Need::Write), (src, Need::Read)] {
            if let Some(a) = side {
                within_requested(&st.vmm, a.get(), len)?;
                st.vmm.segments(a.get(), len, device, need)?;
            }
        }
        Ok(())
    }

    /// Copies `len` bytes, device sides checked against `device`'s access. `settles`: a
    /// synchronous copy to the host returns when the data is there, after all earlier work
    /// in the stream, so nothing is in flight after it (a queued one settles nothing).
    pub fn copy_on(
        &self,
        device: usize,
        dst: HostOrDevice<'_>,
        src: HostOrDevice<'_>,
        len: u64,
        settles: bool,
    ) -> CuResult<()> {
        if settles {
            // A blocking copy empties the printf FIFO, as the synchronising calls do.
            self.flush_printf();
        }
        let (dst_segs, src_segs, bytes) = {
            let mut st = self.state.lock();
            self.check_sticky(&st, device)?;
            for side in [&dst, &src] {
                if let HostOrDevice::Device(a) = side {
                    within_requested(&st.vmm, a.get(), len)?;
                }
            }
            let host_side = match (&dst, &src) {
                (HostOrDevice::Device(a), HostOrDevice::Host(_)) => Some((a, Need::Write)),
                (HostOrDevice::Host(_), HostOrDevice::Device(a)) => Some((a, Need::Read)),
                _ => None,
            };
            if let Some((a, need)) = host_side {
                if let Some(e) = st.vmm.host_copy_would_crash(a.get(), len, device, need) {
                    return Err(e);
                }
            }
            let d = match dst {
                HostOrDevice::Device(a) => {
                    Some(st.vmm.segments(a.get(), len, device, Need::Write)?)
                }
                HostOrDevice::Host(_) => None,
            };
            let s = match src {
                HostOrDevice::Device(a) => {
                    Some(st.vmm.segments(a.get(), len, device, Need::Read)?)
                }
                HostOrDevice::Host(_) => None,
            };
            match (&d, &s) {
                (None, Some(_)) if settles => st.vmm.synchronized(),
                (None, Some(s)) => st.vmm.issued(s),
                (Some(d), s) => {
                    st.vmm.issued(d);
                    if let Some(s) = s {
                        st.vmm.issued(s);
                    }
                }
                (None, None) => {}
            }
            let bytes = st.vmm.hold_bytes();
            (d, s, bytes)
        };
        if super::ordering::enabled() {
            use super::ordering::Touch;
            let mut ranges = Vec::new();
            if let HostOrDevice::Device(a) = &dst {
                ranges.push((a.get(), a.get() + len, Touch::Write));
            }
            if let HostOrDevice::Device(a) = &src {
                ranges.push((a.get(), a.get() + len, Touch::Read));
            }
            let what = match (&dst, &src) {
                (HostOrDevice::Host(_), _) => "a copy to the host",
                (_, HostOrDevice::Host(_)) => "a copy from the host",
                _ => "a device-to-device copy",
            };
            super::ordering::touched_now(what, &ranges);
        }
        // The bytes move outside the lock: a 256 MiB copy must not stall other threads.
        // `bytes` keeps the segments' memory where it is even if another thread unmaps
        // or releases it meanwhile.
        match (dst, src, dst_segs, src_segs) {
            (_, HostOrDevice::Host(h), Some(d), None) => host_bytes::host_to_device(&d, h, &bytes),
            (HostOrDevice::Host(h), _, None, Some(s)) => host_bytes::device_to_host(h, &s, &bytes),
            (_, _, Some(d), Some(s)) => host_bytes::device_to_device(&d, &s, &bytes),
            (HostOrDevice::Host(d), HostOrDevice::Host(s), None, None) => {
                host_bytes::host_to_host(d, s, len as usize)
            }
            _ => unreachable!("segments exist exactly for device sides"),
        }
        Ok(())
    }

    /// Device memory as a kernel sees it, a range at once: `[addr, addr+len)` as host
    /// pointers (one piece per mapping it crosses), each piece translated as a kernel's
    /// access is (`State::device_span`: the same rules and errors, `need` read for loads,
    /// write for stores and atomics). What the tests use to look at device memory as a
    /// kernel would; page-locked host memory, which has no allocation to hold, is refused.
    /// The pointers stay valid, and the memory stays where it is, until the returned
    /// value is dropped: do not call the driver's export from the same thread meanwhile
    /// (an export waits for it). The memory counts as having work in flight until the
    /// next synchronising call, as a copy's does.
    pub fn translate(
        &self,
        addr: DevicePtr,
        len: u64,
        device: usize,
        need: Need,
    ) -> CuResult<Translation> {
        let addr = addr.get();
        let end = addr
            .checked_add(len)
            .ok_or_else(|| invalid("address + size wraps"))?;
        let mut st = self.state.lock();
        let mut segments = Vec::new();
        let mut at = addr;
        while at < end {
            let span = st.device_span(at, device, need)?;
            let Some(whole) = span.mapped else {
                return Err(invalid(format!(
                    "{at:#x} is page-locked host memory, not device memory"
                )));
            };
            let take = (span.start + span.size).min(end) - at;
            segments.push(whole.piece(at - span.start, take));
            at += take;
        }
        st.vmm.issued(&segments);
        Ok(Translation {
            segments,
            _bytes: st.vmm.hold_bytes(),
        })
    }

    pub fn memset(&self, dst: DevicePtr, pattern: Pattern, count: u64) -> CuResult<()> {
        let device = self.ctx_device(None)?;
        self.memset_on(device, dst, pattern, count)
    }

    /// A memset as `device` does it, whichever thread runs it (a stream's worker has no
    /// current context).
    pub(super) fn memset_on(
        &self,
        device: usize,
        dst: DevicePtr,
        pattern: Pattern,
        count: u64,
    ) -> CuResult<()> {
        let (dst, len) = memset_range(dst, &pattern, count)?;
        let (segs, held) = {
            let mut st = self.state.lock();
            self.check_sticky(&st, device)?;
            // Page-locked host memory has the same address on the device (unified
            // addressing), and is set as host memory, as copies treat it.
            if let Some(fits) = st.host.check_copy(dst, len) {
                fits?;
                drop(st);
                super::ordering::touched_now(
                    "a memset",
                    &[(dst, dst + len, super::ordering::Touch::Write)],
                );
                // Safety: the driver holds this page-locked range (allocated or
                // registered, so mapped and writable) and `fits` says the memset stays
                // in it; freeing it meanwhile is the program's race, as on a GPU.
                let bytes = unsafe { HostBytes::writable(dst as *mut u8, len as usize) };
                host_bytes::fill_host(bytes, &pattern.bytes());
                return Ok(());
            }
            within_requested(&st.vmm, dst, len)?;
            let segs = st.vmm.segments(dst, len, device, Need::Write)?;
            st.vmm.issued(&segs);
            (segs, st.vmm.hold_bytes())
        };
        super::ordering::touched_now(
            "a memset",
            &[(dst, dst + len, super::ordering::Touch::Write)],
        );
        host_bytes::fill(&segs, &pattern.bytes(), &held);
        Ok(())
    }

    /// A synchronous cuMemsetD8/16/32 on device memory is asynchronous with respect to the
    /// host (CUDA's "API synchronization behavior"): the H200 returns from one while a
    /// blocking stream's kernel it must follow still runs (probe async_device,
    /// sync-copy-vs-blocking-stream), and runs one at once when nothing is pending before
    /// it (a later memset on a non-blocking stream sees it done: probe host_memory,
    /// memset-async-and-2d-async). So it is queued on the legacy stream, checked now, when
    /// work it must follow is pending, and always under a deferring schedule
    /// (`stream_queues::deferred`). Managed memory is set at once, as the documentation
    /// excepts it. False when the memset must run now.
    pub fn memset_queued(
        &'static self,
        dst: DevicePtr,
        pattern: Pattern,
        count: u64,
    ) -> CuResult<bool> {
        self.memset_queued_on(super::ids::StreamId::NULL, dst, pattern, count)
    }

    /// A cuMemsetD8/16/32Async on `stream` (and a synchronous one, on the legacy stream):
    /// queued as `memset_queued` says, so that a memset behind a running kernel does not
    /// hold the host until the kernel ends (it used to run in the call, after the kernel).
    pub fn memset_queued_on(
        &'static self,
        stream: super::ids::StreamId,
        dst: DevicePtr,
        pattern: Pattern,
        count: u64,
    ) -> CuResult<bool> {
        use super::stream_queues::{deferred, pending};
        let order = self.stream_order(stream)?;
        if !deferred() && !pending(stream, order) {
            return Ok(false);
        }
        let device = self.ctx_device(None)?;
        let (a, len) = memset_range(dst, &pattern, count)?;
        {
            let st = self.state.lock();
            if managed_at(&st, a) || !st.vmm.is_device_address(a) {
                return Ok(false);
            }
            // The memset's errors are the call's: its checks now, its bytes later.
            self.check_sticky(&st, device)?;
            within_requested(&st.vmm, a, len)?;
            st.vmm.segments(a, len, device, Need::Write)?;
        }
        self.enqueue_work(
            stream,
            "a memset",
            Box::new(move || {
                // Checked when issued: what fails now was unmapped or freed meanwhile (on
                // a GPU, a fault).
                if let Err(e) = self.memset_on(device, dst, pattern, count) {
                    crate::diagnostics::warn(
                        "cuMemsetD*",
                        &format!("a queued memset failed: {}", e.message),
                    );
                }
            }),
        )?;
        Ok(true)
    }
}

/// Whether `a` is in cuMemAllocManaged memory, which the host reads and writes in place:
/// synchronous copies and memsets of it run in the call.
pub(super) fn managed_at(st: &super::State, a: u64) -> bool {
    st.host
        .managed
        .range(..=a)
        .next_back()
        .is_some_and(|(base, m)| a - base < m.size())
}

impl Driver {
    /// Whether `a` is device memory a synchronous copy from pageable host memory may land
    /// in later, in the legacy stream's order: device memory, not managed memory.
    pub fn stream_ordered_destination(&self, a: DevicePtr) -> bool {
        let st = self.state.lock();
        st.vmm.is_device_address(a.get()) && !managed_at(&st, a.get())
    }

    /// The printf FIFO emptied, as a blocking copy empties it.
    pub fn blocking_copy_flush(&self) {
        self.flush_printf();
    }
}

/// A memset's address and length in bytes, its element aligned and its count not
/// overflowing.
fn memset_range(dst: DevicePtr, pattern: &Pattern, count: u64) -> CuResult<(u64, u64)> {
    let dst = dst.get();
    let width = pattern.bytes().len() as u64;
    if !dst.is_multiple_of(width) {
        return Err(invalid(format!(
            "{dst:#x} is not aligned to the {width}-byte element"
        )));
    }
    let len = count
        .checked_mul(width)
        .ok_or_else(|| invalid("count overflows"))?;
    Ok((dst, len))
}

/// Device memory a kernel may use, as host memory (see [`Driver::translate`]).
pub struct Translation {
    /// The pieces of the range, in order; their lengths add up to the range's.
    pub segments: Vec<Segment>,
    _bytes: vmm::BytesInUse,
}

/// Observed: a copy or memset on cuMemAlloc memory must stay within the size asked for,
/// although the allocation is mapped to the granularity beyond it.
pub(super) fn within_requested(vmm: &Vmm, addr: u64, len: u64) -> CuResult<()> {
    if let Some((base, r)) = vmm.reservation_at(addr) {
        if let ReservationKind::Alloc { requested, .. } = r.kind {
            if (addr - base).saturating_add(len) > requested {
                return Err(invalid(format!(
                    "{len} bytes at {addr:#x} run past the end of the cuMemAlloc allocation \
                     ({requested} bytes at {base:#x})"
                )));
            }
        }
    }
    Ok(())
}
