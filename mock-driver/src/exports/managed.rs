//! Managed memory over `model::managed`: cuMemAllocManaged. cuda.h files it under
//! `MemoryApi`, whose method (exports/mod.rs) calls this; prefetches, advice and range
//! attributes are in `unified.rs`.

use crate::diagnostics::{created, Made};

emulate! {
    pub(super) fn cuMemAllocManaged(d; dptr, bytesize, flags) {
        dptr.zero_on_failure(
            d.mem_alloc_managed(bytesize as u64, flags)
                .map(|p| created(Made::Reservation, p)),
        )
    }
}
