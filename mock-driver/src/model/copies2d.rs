//! Pitched (2D) memory: cuMemAllocPitch's pitch rule, and the 2D copies and memsets,
//! row by row over the 1D ones. A 2D operation is checked whole before any row moves, so
//! one that runs past its allocation fails without writing anything.

use super::error::*;
use super::ids::DevicePtr;
use super::vmm::Need;
use super::{Driver, HostOrDevice, Pattern};
use crate::host_bytes::HostBytes;

/// Observed on the H200: cuMemAllocPitch's pitch is the width rounded up to 512 bytes,
/// whatever the element size (4, 8 or 16).
pub const PITCH_ALIGNMENT: u64 = 512;

/// Where a plane's first row starts: a host address (page-locked or pageable memory) or
/// a device address.
#[derive(Clone, Copy, Debug)]
pub enum PlaneStart {
    Host(*mut u8),
    Device(u64),
}

/// One side of a 2D copy: where its first row starts, and the distance between rows.
pub struct Plane {
    pub start: PlaneStart,
    pub pitch: u64,
}

impl Plane {
    /// `len` bytes of row `y`.
    ///
    /// # Safety
    /// A host plane is valid for its extent (writable when `write`), as `copy_2d` requires.
    unsafe fn row(&self, y: u64, len: u64, write: bool) -> HostOrDevice<'static> {
        match self.start {
            PlaneStart::Host(p) => {
                let r = p.wrapping_add((y * self.pitch) as usize);
                // Safety: the row lies in the plane's extent, per this function's contract.
                HostOrDevice::Host(unsafe {
                    if write {
                        HostBytes::writable(r, len as usize)
                    } else {
                        HostBytes::readable(r, len as usize)
                    }
                })
            }
            PlaneStart::Device(a) => {
                HostOrDevice::Device(DevicePtr::new(a.wrapping_add(y * self.pitch)))
            }
        }
    }
}

/// The pitch of a cuMemAllocPitch allocation, or why the arguments are refused.
pub fn pitch_for(width: u64, height: u64, element_size: u32) -> CuResult<u64> {
    if !matches!(element_size, 4 | 8 | 16) {
        return Err(invalid(format!(
            "ElementSizeBytes {element_size} is not 4, 8 or 16"
        )));
    }
    if width == 0 || height == 0 {
        return Err(invalid("WidthInBytes or Height is 0"));
    }
    width
        .checked_next_multiple_of(PITCH_ALIGNMENT)
        .ok_or_else(|| invalid("WidthInBytes overflows"))
}

/// The bytes a 2D operation spans from its first byte: every row's pitch but the last.
fn span(pitch: u64, width: u64, height: u64) -> CuResult<u64> {
    (height - 1)
        .checked_mul(pitch)
        .and_then(|n| n.checked_add(width))
        .ok_or_else(|| invalid("the 2D extent overflows"))
}

impl Driver {
    /// cuMemAllocPitch: (address, pitch).
    pub fn mem_alloc_pitch(
        &self,
        width: u64,
        height: u64,
        element_size: u32,
    ) -> CuResult<(u64, u64)> {
        let pitch = pitch_for(width, height, element_size)?;
        let size = pitch
            .checked_mul(height)
            .ok_or_else(|| out_of_memory("pitch * height overflows"))?;
        Ok((self.mem_alloc(size)?.get(), pitch))
    }

    /// Checks that `[addr, addr+len)` is device memory the current context's device may
    /// use as `need` (a page-locked host range counts as host memory, checked apart).
    pub(super) fn check_device_span(&self, addr: u64, len: u64, need: Need) -> CuResult<()> {
        let st = self.state.lock();
        let (_, ctx) = st.contexts.require_current()?;
        super::copies::within_requested(&st.vmm, addr, len)?;
        st.vmm.segments(addr, len, ctx.device, need).map(|_| ())
    }

    /// cuMemsetD2D8/16/32: `width` elements in each of `height` rows `pitch` bytes apart.
    pub fn memset_2d(
        &self,
        dst: u64,
        pitch: u64,
        pattern: Pattern,
        width: u64,
        height: u64,
    ) -> CuResult<()> {
        if !self.check_memset_2d(dst, pitch, pattern, width, height)? {
            return Ok(());
        }
        for y in 0..height {
            self.memset(DevicePtr::new(dst + y * pitch), pattern, width)?;
        }
        Ok(())
    }

    /// cuMemsetD2D8/16/32Async queued on `stream` when work it follows is pending there
    /// (always under a deferring schedule), as the 1D ones are (`memset_queued_on`):
    /// checked now, its rows set by the stream's worker. False where it runs in the call:
    /// nothing pending, managed memory.
    pub fn memset_2d_queued_on(
        &'static self,
        stream: super::ids::StreamId,
        dst: u64,
        pitch: u64,
        pattern: Pattern,
        width: u64,
        height: u64,
    ) -> CuResult<bool> {
        use super::stream_queues::{deferred, pending};
        let order = self.stream_order(stream)?;
        if !deferred() && !pending(stream, order) {
            return Ok(false);
        }
        if super::copies::managed_at(&self.state.lock(), dst) {
            return Ok(false);
        }
        let device = self.ctx_device(None)?;
        if !self.check_memset_2d(dst, pitch, pattern, width, height)? {
            return Ok(true);
        }
        self.check_sticky(&self.state.lock(), device)?;
        self.enqueue_work(
            stream,
            "a 2D memset",
            Box::new(move || {
                for y in 0..height {
                    let row = DevicePtr::new(dst + y * pitch);
                    // Checked when issued: what fails now was unmapped or freed meanwhile
                    // (on a GPU, a fault).
                    if let Err(e) = self.memset_on(device, row, pattern, width) {
                        crate::diagnostics::warn(
                            "cuMemsetD2D*",
                            &format!("a queued memset failed: {}", e.message),
                        );
                        return;
                    }
                }
            }),
        )?;
        Ok(true)
    }

    /// A 2D memset's checks: false when it sets nothing (no rows, or rows of nothing).
    fn check_memset_2d(
        &self,
        dst: u64,
        pitch: u64,
        pattern: Pattern,
        width: u64,
        height: u64,
    ) -> CuResult<bool> {
        let elem = pattern.bytes().len() as u64;
        if !dst.is_multiple_of(elem) {
            return Err(invalid(format!(
                "{dst:#x} is not aligned to the {elem}-byte element"
            )));
        }
        if width == 0 || height == 0 {
            return Ok(false);
        }
        let row = width
            .checked_mul(elem)
            .ok_or_else(|| invalid("the width overflows"))?;
        // Observed: the pitch matters only where there is a second row (pitch 0 with one
        // row is accepted).
        if height > 1 && (pitch < row || !pitch.is_multiple_of(elem)) {
            return Err(invalid(format!(
                "pitch {pitch} is less than the row ({row} bytes) or not a multiple of the \
                 {elem}-byte element"
            )));
        }
        self.check_device_span(dst, span(pitch, row, height)?, Need::Write)?;
        Ok(true)
    }

    /// cuMemcpy2D: `width` bytes of each of `height` rows.
    ///
    /// # Safety
    /// Host planes are valid for their extent (readable for the source, writable for the
    /// destination), as cuda.h requires of the program.
    pub unsafe fn copy_2d(&self, dst: Plane, src: Plane, width: u64, height: u64) -> CuResult<()> {
        self.check_copy_2d(&dst, &src, width, height)?;
        // Safety: this function's contract.
        unsafe { self.copy_2d_rows(None, &dst, &src, width, height) }
    }

    /// What a 2D copy would be refused for: pitches shorter than a row, device planes
    /// the current context's device may not use for their whole extent. Checked whole
    /// before any row moves (and when an async copy is issued, before it is queued).
    pub fn check_copy_2d(&self, dst: &Plane, src: &Plane, width: u64, height: u64) -> CuResult<()> {
        if width == 0 || height == 0 {
            return Ok(());
        }
        if height > 1 && (src.pitch < width || dst.pitch < width) {
            return Err(invalid(format!(
                "a pitch (source {}, destination {}) is less than WidthInBytes {width}",
                src.pitch, dst.pitch
            )));
        }
        for (plane, need) in [(dst, Need::Write), (src, Need::Read)] {
            if let PlaneStart::Device(a) = plane.start {
                self.check_device_span(a, span(plane.pitch, width, height)?, need)?;
            }
        }
        Ok(())
    }

    /// Moves a checked 2D copy's rows: with the current context's device's rights
    /// (`on` None: a synchronous copy, which settles), or `on` a device's (a copy queued
    /// on a stream, run by its worker).
    ///
    /// # Safety
    /// As `copy_2d`'s.
    pub unsafe fn copy_2d_rows(
        &self,
        on: Option<usize>,
        dst: &Plane,
        src: &Plane,
        width: u64,
        height: u64,
    ) -> CuResult<()> {
        for y in 0..height {
            // Safety: each row lies in its plane, per this function's contract.
            let (d, s) = unsafe { (dst.row(y, width, true), src.row(y, width, false)) };
            match on {
                None => self.copy(d, s, width)?,
                Some(device) => self.copy_on(device, d, s, width, false)?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pitch_is_the_width_rounded_up_to_512() {
        assert_eq!(pitch_for(1, 1, 4).unwrap(), 512);
        assert_eq!(pitch_for(512, 7, 16).unwrap(), 512);
        assert_eq!(pitch_for(513, 1, 8).unwrap(), 1024);
        assert_eq!(pitch_for(4096, 1, 4).unwrap(), 4096);
        for bad in [0, 1, 2, 3, 32] {
            assert!(pitch_for(100, 4, bad).is_err());
        }
        assert!(pitch_for(0, 4, 4).is_err());
        assert!(pitch_for(100, 0, 4).is_err());
        assert!(pitch_for(u64::MAX, 1, 4).is_err());
    }

    #[test]
    fn a_span_ends_at_the_last_rows_width() {
        assert_eq!(span(512, 100, 1).unwrap(), 100);
        assert_eq!(span(512, 100, 3).unwrap(), 1124);
        assert!(span(u64::MAX, 2, 3).is_err());
    }
}
