//! cuGetProcAddress's resolution, shared by the mock and the pass-through driver: a base
//! name, a CUDA version and the per-thread flag give one exported symbol (`cuMemAlloc`
//! at 3020+ is `cuMemAlloc_v2`; per thread, `cuMemcpyHtoD` is `cuMemcpyHtoD_v2_ptds`),
//! from the declaration's table (cudaTypedefs.h's `PFN_<base>_v<version>` names).

use crate::EXPORTS;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcLookup {
    Found(&'static str),
    /// The function exists, but not yet at the requested version.
    TooOld,
    Unknown,
}

/// The exported symbol for `base` at `version`: the newest entry not newer than it,
/// preferring the per-thread-default-stream variant (`_ptds` or `_ptsz`) when asked and
/// one exists.
pub fn proc_address(base: &str, version: u32, per_thread: bool) -> ProcLookup {
    let entries = || {
        EXPORTS
            .iter()
            .filter_map(|e| e.proc.map(|p| (p, e.name)))
            .filter(move |(p, _)| p.base == base)
    };
    if entries().next().is_none() {
        return ProcLookup::Unknown;
    }
    let newest = |per_thread: bool| {
        entries()
            .filter(|(p, _)| p.variant.is_empty() != per_thread && p.version <= version)
            .max_by_key(|(p, _)| p.version)
            .map(|(_, name)| name)
    };
    // A function with a per-thread variant, asked for per thread at a version before that
    // variant existed, is too old (the H200 answers so: cuMemcpy with the per-thread flag
    // at 6050 is "version not sufficient", though cuMemcpy itself is older); one without
    // any is the plain function.
    let has_per_thread = entries().any(|(p, _)| !p.variant.is_empty());
    let found = newest(per_thread && has_per_thread);
    match found {
        Some(sym) => ProcLookup::Found(sym),
        None => ProcLookup::TooOld,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `entry_point!` (the runtime's driver table) types each base name as the export
    /// this resolution gives at the headers' version.
    #[test]
    fn entry_points_are_what_cu_get_proc_address_gives() {
        assert!(crate::ENTRY_POINTS.len() > 400);
        for (base, symbol) in crate::ENTRY_POINTS {
            assert_eq!(
                proc_address(base, crate::CUDA_VERSION, false),
                ProcLookup::Found(symbol),
                "{base}"
            );
        }
    }

    #[test]
    fn versions_pick_the_right_variant() {
        use ProcLookup::*;
        assert_eq!(
            proc_address("cuMemAlloc", 12000, false),
            Found("cuMemAlloc_v2")
        );
        assert_eq!(proc_address("cuMemAlloc", 3000, false), Found("cuMemAlloc"));
        assert_eq!(
            proc_address("cuCtxCreate", 13000, false),
            Found("cuCtxCreate_v4")
        );
        assert_eq!(
            proc_address("cuCtxCreate", 12000, false),
            Found("cuCtxCreate_v3")
        );
        assert_eq!(proc_address("cuMemCreate", 10000, false), TooOld);
        assert_eq!(proc_address("cuMemAlloc_v2", 12000, false), Unknown);
        assert_eq!(
            proc_address("cuMemcpyHtoD", 12000, true),
            Found("cuMemcpyHtoD_v2_ptds")
        );
        assert_eq!(
            proc_address("cuMemcpyHtoDAsync", 12000, true),
            Found("cuMemcpyHtoDAsync_v2_ptsz")
        );
        assert_eq!(
            proc_address("cuMemCreate", 12000, true),
            Found("cuMemCreate")
        );
    }
}
