//! The copy engine's byte moves: between the program's host buffers and device memory as
//! the host reaches it (the `Segment`s of `Vmm::segments`). Beside `os`, whose views these
//! bytes live in, this is the other home of the `unsafe` the model stands on: the model's
//! copies and memsets call the safe functions here.
//!
//! Two things make them sound. A host buffer is a [`HostBytes`], made from a slice, or
//! from a pointer whose validity the caller vouches for (the exports, as cuda.h requires
//! of the program); its length is checked against every move. Device segments are those
//! `Vmm::segments` made, used while a `BytesInUse` taken after them lives (the functions
//! take one), so their memory stays mapped and in place.

use crate::model::vmm::{BytesInUse, Segment};
use std::marker::PhantomData;

/// A host buffer on one side of a copy: `len` bytes at `ptr`, readable, and writable when
/// `writable`, for as long as the value lives.
#[derive(Clone, Copy, Debug)]
pub struct HostBytes<'a> {
    ptr: *mut u8,
    len: usize,
    writable: bool,
    _borrow: PhantomData<&'a mut [u8]>,
}

impl<'a> HostBytes<'a> {
    /// A source buffer.
    pub fn from_slice(bytes: &'a [u8]) -> Self {
        Self {
            ptr: bytes.as_ptr().cast_mut(),
            len: bytes.len(),
            writable: false,
            _borrow: PhantomData,
        }
    }

    /// A buffer that may be written.
    pub fn from_mut_slice(bytes: &'a mut [u8]) -> Self {
        Self {
            ptr: bytes.as_mut_ptr(),
            len: bytes.len(),
            writable: true,
            _borrow: PhantomData,
        }
    }

    /// The program's source buffer.
    ///
    /// # Safety
    /// `ptr` is readable for `len` bytes while the value lives (cuda.h's requirement of a
    /// copy's host source).
    pub unsafe fn readable(ptr: *const u8, len: usize) -> Self {
        Self {
            ptr: ptr.cast_mut(),
            len,
            writable: false,
            _borrow: PhantomData,
        }
    }

    /// The program's destination buffer (or either side of cuMemcpy, which may be both).
    ///
    /// # Safety
    /// `ptr` is readable and writable for `len` bytes while the value lives (cuda.h's
    /// requirement of a copy's host destination).
    pub unsafe fn writable(ptr: *mut u8, len: usize) -> Self {
        Self {
            ptr,
            len,
            writable: true,
            _borrow: PhantomData,
        }
    }

    fn check(&self, len: usize, write: bool) {
        assert!(
            len <= self.len,
            "a copy of {len} bytes over a host buffer of {}",
            self.len
        );
        assert!(
            !write || self.writable,
            "a copy into a read-only host buffer"
        );
    }
}

fn total(segments: &[Segment]) -> usize {
    segments.iter().map(|s| s.len).sum()
}

/// Copies the start of `src` into the device segments `dst`, in order.
pub fn host_to_device(dst: &[Segment], src: HostBytes<'_>, _held: &BytesInUse) {
    src.check(total(dst), false);
    let mut p = src.ptr as *const u8;
    for s in dst {
        // Safety: p stays within src, readable (checked above, and HostBytes' contract);
        // the segment is live device memory (held by `_held`). memmove, since a "host"
        // pointer may be another view of the same memory.
        unsafe { std::ptr::copy(p, s.ptr.as_ptr(), s.len) };
        p = p.wrapping_add(s.len);
    }
}

/// Copies the device segments `src`, in order, into the start of `dst`.
pub fn device_to_host(dst: HostBytes<'_>, src: &[Segment], _held: &BytesInUse) {
    dst.check(total(src), true);
    let mut p = dst.ptr;
    for s in src {
        // Safety: p stays within dst, writable (checked above, and HostBytes' contract);
        // the segment is live device memory (held by `_held`).
        unsafe { std::ptr::copy(s.ptr.as_ptr(), p, s.len) };
        p = p.wrapping_add(s.len);
    }
}

/// Copies between device segments of equal total length.
pub fn device_to_device(dst: &[Segment], src: &[Segment], _held: &BytesInUse) {
    let (mut di, mut si, mut doff, mut soff) = (0, 0, 0, 0);
    while di < dst.len() && si < src.len() {
        let d = &dst[di];
        let s = &src[si];
        let n = (d.len - doff).min(s.len - soff);
        // Safety: both pointers lie inside live device memory (held by `_held`); n fits
        // both segments. memmove, since a device-to-device copy may overlap itself.
        unsafe { std::ptr::copy(s.ptr.offset(soff).as_ptr(), d.ptr.offset(doff).as_ptr(), n) };
        doff += n;
        soff += n;
        if doff == d.len {
            di += 1;
            doff = 0;
        }
        if soff == s.len {
            si += 1;
            soff = 0;
        }
    }
}

/// Copies `len` bytes between two host buffers (cuMemcpy on two host addresses is a
/// plain memmove under unified addressing).
pub fn host_to_host(dst: HostBytes<'_>, src: HostBytes<'_>, len: usize) {
    dst.check(len, true);
    src.check(len, false);
    // Safety: both are valid for len bytes (checked above, and HostBytes' contract).
    unsafe { std::ptr::copy(src.ptr as *const u8, dst.ptr, len) };
}

/// Fills a host buffer with `pattern` repeated (a memset on page-locked host memory,
/// which unified addressing lets device calls name).
pub fn fill_host(dst: HostBytes<'_>, pattern: &[u8]) {
    dst.check(dst.len, true);
    // Safety: valid and writable for its length (HostBytes' contract, checked above).
    let bytes = unsafe { std::slice::from_raw_parts_mut(dst.ptr, dst.len) };
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = pattern[i % pattern.len()];
    }
}

/// Fills the device segments with `pattern` repeated, starting afresh in each segment
/// (each starts at an element boundary: the memset's address and every mapping are
/// aligned to the element's width).
pub fn fill(dst: &[Segment], pattern: &[u8], _held: &BytesInUse) {
    for s in dst {
        // Safety: the segment is live device memory, held by `_held`, and nothing
        // borrows it as a Rust reference (all access is through raw copies).
        let dst = unsafe { std::slice::from_raw_parts_mut(s.ptr.as_ptr(), s.len) };
        if pattern.iter().all(|b| *b == pattern[0]) {
            dst.fill(pattern[0]);
        } else {
            for (i, b) in dst.iter_mut().enumerate() {
                *b = pattern[i % pattern.len()];
            }
        }
    }
}
