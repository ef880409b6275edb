//! Occupancy (cuda.h's group CUDA_OCCUPANCY): how many blocks of a function fit on a
//! multiprocessor, and the block size that fits the most.

use super::Mock;
use crate::model::error::*;
use cumock_abi::*;
use std::ffi::{c_int, c_uint};

/// A launch configuration's threads per block, dynamic shared memory and cluster shape
/// (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, when given).
///
/// # Safety
/// `config` is NULL or the program's CUlaunchConfig, its `attrs` holding `numAttrs`.
#[allow(clippy::type_complexity)]
unsafe fn launch_shape(
    config: *const CUlaunchConfig,
) -> CuResult<(i32, usize, Option<[u32; 3]>, [u32; 3])> {
    // Safety: the caller's contract.
    let (c, attrs) = unsafe { super::launch::launch_config(config) }?;
    let mut cluster = None;
    for a in attrs {
        if a.id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION {
            cluster = Some([a.value[0], a.value[1], a.value[2]]);
        }
    }
    let threads = c.block.iter().map(|&d| i64::from(d)).product::<i64>();
    Ok((
        threads.min(i64::from(i32::MAX)) as i32,
        c.shared as usize,
        cluster,
        c.grid,
    ))
}

impl OccupancyApi for Mock {
    emulate! {
        fn cuOccupancyMaxActiveBlocksPerMultiprocessor(
            d;
            num_blocks,
            func,
            block_size,
            dynamic_smem_size
        ) {
            let n = d.occupancy_blocks_per_sm(func, block_size, dynamic_smem_size)?;
            num_blocks.write(n)
        }

        fn cuOccupancyMaxPotentialBlockSize(
            d;
            min_grid_size,
            block_size,
            func,
            block_to_smem,
            dynamic_smem_size,
            block_size_limit
        ) {
            let smem = |block: i32| match block_to_smem {
                // Safety: the program's function, called with a block size as cuda.h says.
                Some(f) => unsafe { f(block) },
                None => dynamic_smem_size,
            };
            let (grid, block) = d.occupancy_potential_block_size(func, &smem, block_size_limit)?;
            min_grid_size.write(grid)?;
            block_size.write(block)
        }

        fn cuOccupancyAvailableDynamicSMemPerBlock(d; dynamic_smem_size, func, num_blocks, block_size) {
            dynamic_smem_size.write(d.occupancy_available_dynamic_shared(func, num_blocks, block_size)?)
        }

        // The launch configuration is read by `launch_shape`, which refuses NULL itself.

        fn cuOccupancyMaxPotentialClusterSize(d; cluster_size, func, #[raw] config) {
            // Safety: NULL (refused) or the program's config, as cuda.h lays it out.
            let (threads, shared, _, _) = unsafe { launch_shape(config)? };
            cluster_size.write(d.occupancy_cluster_size(func, threads, shared)?)
        }

        fn cuOccupancyMaxActiveClusters(d; num_clusters, func, #[raw] config) {
            // Safety: as above.
            let (threads, shared, cluster, grid) = unsafe { launch_shape(config)? };
            let n = d.occupancy_active_clusters(func, threads, shared, cluster, grid)?;
            num_clusters.write(n)
        }
    }

    unsafe fn cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        num_blocks: *mut c_int,
        func: CUfunction,
        block_size: c_int,
        dynamic_smem_size: usize,
        flags: c_uint,
    ) -> CuResult<()> {
        check_occupancy_flags(flags)?;
        Self::cuOccupancyMaxActiveBlocksPerMultiprocessor(
            num_blocks,
            func,
            block_size,
            dynamic_smem_size,
        )
    }

    unsafe fn cuOccupancyMaxPotentialBlockSizeWithFlags(
        min_grid_size: *mut c_int,
        block_size: *mut c_int,
        func: CUfunction,
        block_to_smem: CUoccupancyB2DSize,
        dynamic_smem_size: usize,
        block_size_limit: c_int,
        flags: c_uint,
    ) -> CuResult<()> {
        check_occupancy_flags(flags)?;
        Self::cuOccupancyMaxPotentialBlockSize(
            min_grid_size,
            block_size,
            func,
            block_to_smem,
            dynamic_smem_size,
            block_size_limit,
        )
    }
}

/// CU_OCCUPANCY_DEFAULT or CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE (which changes nothing:
/// the mock's shared memory carve-out is never taken from the cache); the H200 refuses
/// any other bit (probe api_gaps3, occupancy-flags: 2 and 3 are CUDA_ERROR_INVALID_VALUE).
fn check_occupancy_flags(flags: c_uint) -> CuResult<()> {
    if flags & !1 != 0 {
        return Err(invalid(format!(
            "occupancy flags {flags:#x}: CU_OCCUPANCY_DEFAULT (0) or CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE (1)"
        )));
    }
    Ok(())
}
