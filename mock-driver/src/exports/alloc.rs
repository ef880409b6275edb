//! Device memory allocations over `model::alloc`: cuMemAlloc, cuMemFree, cuMemGetInfo and
//! cuMemGetAddressRange (what allocation an address lies in). cuda.h files them under
//! `MemoryApi`, whose methods (exports/mod.rs) call these.

use super::out_pair;
use crate::diagnostics::{created, Made};

emulate! {

    pub(super) fn cuMemGetInfo_v2(d; free, total) {
        // The H200 zeroes both when it fails (no current context, say).
        let info = d.mem_info().map(|(f, t)| (f as usize, t as usize));
        out_pair(Some(free), Some(total), info, |_| true)
    }

    pub(super) fn cuMemAlloc_v2(d; dptr, bytesize) {
        d.capture_check_unsafe("cuMemAlloc")?;
        dptr.zero_on_failure(
            d.mem_alloc(bytesize as u64)
                .map(|p| created(Made::Reservation, p.get())),
        )
    }

    pub(super) fn cuMemFree_v2(d; dptr) {
        d.mem_free(dptr)
    }

    pub(super) fn cuMemGetAddressRange_v2(d; pbase, psize, dptr) {
        d.ctx_device(None)?;
        // The H200 zeroes what it was asked for when nothing is found.
        let found = d.address_range(dptr).map(|(b, s)| (b.get(), s as usize));
        out_pair(pbase, psize, found, |_| true)
    }
}
