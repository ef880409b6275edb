//! CUDA 12.8 and 13.0's batched memory calls (cuMemcpyBatchAsync, cuMemcpy3DBatchAsync,
//! cuMemPrefetchBatchAsync, cuMemDiscardBatchAsync, cuMemDiscardAndPrefetchBatchAsync):
//! the rules cuda.h gives their arguments, shared by all of them. Each operation of a
//! batch is then the single call's (a copy is cuMemcpyAsync's or cuMemcpy3DAsync's, a
//! prefetch cuMemPrefetchAsync's), issued in the batch's order: cuda.h promises no order
//! within a batch, so one order is as good as any, and the batch as a whole follows the
//! stream's earlier work and precedes its later work, as cuda.h asks.

use super::error::*;
use super::ids::{ArrayId, StreamId};
use super::Driver;

/// A batch's attributes (or prefetch locations) as cuda.h spreads them over its
/// operations: `idxs[k]` is the first operation `attrs[k]` applies to, up to the next
/// entry's (the last entry's up to `count - 1`).
///
/// cuda.h: "the first entry in attrsIdxs must always be 0. Also, each entry must be
/// greater than the previous entry and the last entry should be less than count.
/// Furthermore, numAttrs must be lesser than or equal to count."
///
/// `repeats`: whether an entry may equal the one before it. The H200 refuses that for a
/// copy batch's attributes (`attrsIdxs {0, 0}`) but takes it for a prefetch batch's
/// locations (`prefetchLocIdxs {0, 0}`, probe batch_copies); the first of equal entries
/// then holds the run (`run_of`).
pub fn check_runs(idxs: &[usize], count: usize, what: &str, repeats: bool) -> CuResult<()> {
    if idxs.is_empty() {
        return Err(invalid(format!(
            "num{what} is 0: every operation of the batch needs an entry"
        )));
    }
    if idxs.len() > count {
        return Err(invalid(format!(
            "num{what} {} is more than count {count}",
            idxs.len()
        )));
    }
    if idxs[0] != 0 {
        return Err(invalid(format!(
            "the first entry of the {what} indices is {}, not 0",
            idxs[0]
        )));
    }
    for (k, w) in idxs.windows(2).enumerate() {
        if w[1] < w[0] || (w[1] == w[0] && !repeats) {
            return Err(invalid(format!(
                "{what} index {} ({}) is not greater than the one before it ({})",
                k + 1,
                w[1],
                w[0]
            )));
        }
    }
    let last = idxs[idxs.len() - 1];
    if last >= count {
        return Err(invalid(format!(
            "the last {what} index {last} is not less than count {count}"
        )));
    }
    Ok(())
}

/// Which entry of a batch's attributes applies to operation `i` (`idxs` checked by
/// `check_runs`): the last entry whose first operation is at most `i`; of entries naming
/// the same first operation (prefetch locations may), the first. Recorded on the H200
/// (probe batch_copies, batch-zero-and-order): locations {host, device 0} at indices
/// {0, 0} leave both ranges' last prefetch location the host.
pub fn run_of(idxs: &[usize], i: usize) -> usize {
    let last = idxs.partition_point(|&first| first <= i) - 1;
    idxs.partition_point(|&first| first < idxs[last])
}

/// cuda.h's `CUmemcpySrcAccessOrder`: when a batch's copy reads its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SrcAccessOrder {
    /// CU_MEMCPY_SRC_ACCESS_ORDER_STREAM: in stream order, as cuMemcpyAsync reads it.
    Stream,
    /// CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL: "all accesses must be complete before
    /// the API call returns" (a stack variable's lifetime).
    DuringApiCall,
    /// CU_MEMCPY_SRC_ACCESS_ORDER_ANY: "can happen even after the API call returns":
    /// stream order is one such time.
    Any,
}

impl SrcAccessOrder {
    pub fn of(raw: u32) -> CuResult<Self> {
        match raw {
            1 => Ok(Self::Stream),
            2 => Ok(Self::DuringApiCall),
            3 => Ok(Self::Any),
            0 => Err(invalid(
                "srcAccessOrder is CU_MEMCPY_SRC_ACCESS_ORDER_INVALID (0): each copy needs a \
                 valid one",
            )),
            other => Err(invalid(format!(
                "srcAccessOrder {other} is not a CUmemcpySrcAccessOrder"
            ))),
        }
    }
}

/// A copy's `CUmemcpyFlags`: CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE (a hint, which
/// the mock's copies, never competing with kernels for engines, satisfy as they are) is
/// the only one.
pub fn check_copy_flags(flags: u32) -> CuResult<()> {
    if flags & !1 != 0 {
        return Err(invalid(format!(
            "flags {flags:#x} hold bits that are not CUmemcpyFlags"
        )));
    }
    Ok(())
}

/// A batch's `flags` argument: "Flags reserved for future use. Must be zero."
pub fn check_reserved_flags(flags: u64) -> CuResult<()> {
    if flags != 0 {
        return Err(invalid(format!("flags must be 0, not {flags:#x}")));
    }
    Ok(())
}

impl Driver {
    /// A batch's stream: a stream of the current context, and (cuda.h) "Must not be legacy
    /// NULL stream" (NULL or CU_STREAM_LEGACY; a per-thread default stream is a stream).
    pub fn batch_stream_check(&self, stream: StreamId) -> CuResult<()> {
        if stream == StreamId::NULL || stream == StreamId::LEGACY {
            return Err(invalid(
                "a batch is not issued on the legacy NULL stream: name a stream \
                 (or CU_STREAM_PER_THREAD)",
            ));
        }
        self.stream_check(stream)
    }

    /// The bytes of one element of a CUDA array (its format's size times its channels),
    /// the unit of cuMemcpy3DBatchAsync's extents and offsets on that array.
    pub fn array_element_bytes(&self, array: ArrayId) -> CuResult<u64> {
        Ok(self
            .state
            .lock()
            .textures
            .array(array)?
            .format
            .texel_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cumock_abi::result::CUDA_ERROR_INVALID_VALUE;

    #[test]
    fn attribute_runs_follow_cuda_h_rules() {
        assert!(check_runs(&[0, 6], 10, "Attrs", false).is_ok());
        assert!(check_runs(&[0], 1, "Attrs", false).is_ok());
        for (idxs, count) in [
            (&[][..], 3),
            (&[1][..], 3),
            (&[0, 0][..], 3),
            (&[0, 2, 1][..], 3),
            (&[0, 3][..], 3),
            (&[0, 1, 2][..], 2),
            (&[0][..], 0),
        ] {
            let e = check_runs(idxs, count, "Attrs", false).unwrap_err();
            assert_eq!(e.code, CUDA_ERROR_INVALID_VALUE, "{idxs:?} of {count}");
        }
    }

    #[test]
    fn prefetch_locations_may_repeat_a_first_operation() {
        assert!(check_runs(&[0, 0], 2, "PrefetchLocs", true).is_ok());
        assert!(check_runs(&[0, 0], 2, "Attrs", false).is_err());
        assert!(check_runs(&[0, 1, 0], 2, "PrefetchLocs", true).is_err());
        // The first of equal entries holds the run, as on the H200.
        assert_eq!(run_of(&[0, 0], 0), 0);
        assert_eq!(run_of(&[0, 0], 1), 0);
        assert_eq!(run_of(&[0, 1, 1, 3], 2), 1);
        assert_eq!(run_of(&[0, 1, 1, 3], 3), 3);
    }

    #[test]
    fn each_operation_takes_the_entry_whose_run_holds_it() {
        let idxs = [0, 6];
        let runs: Vec<usize> = (0..10).map(|i| run_of(&idxs, i)).collect();
        assert_eq!(runs, [0, 0, 0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(run_of(&[0, 1, 2], 2), 2);
    }

    #[test]
    fn source_access_orders_are_the_three_valid_ones() {
        assert_eq!(SrcAccessOrder::of(1).unwrap(), SrcAccessOrder::Stream);
        assert_eq!(
            SrcAccessOrder::of(2).unwrap(),
            SrcAccessOrder::DuringApiCall
        );
        assert_eq!(SrcAccessOrder::of(3).unwrap(), SrcAccessOrder::Any);
        assert!(SrcAccessOrder::of(0).is_err());
        assert!(SrcAccessOrder::of(4).is_err());
        assert!(check_copy_flags(1).is_ok());
        assert!(check_copy_flags(2).is_err());
    }
}
