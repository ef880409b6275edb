//! Occupancy (cuda.h's group CUDA_OCCUPANCY): how many blocks of a function fit on a
//! multiprocessor, and the block size that fits the most.

use super::Mock;
use crate::boundary::{Handle, drv, out};
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
    if config.is_null() {
        return Err(invalid("config is NULL"));
    }
    // Safety: a non-NULL CUlaunchConfig of the program's, laid out as cuda.h says.
    let c = unsafe { config.cast::<LaunchConfig>().read_unaligned() };
    if c.num_attrs != 0 && c.attrs.is_null() {
        return Err(invalid(format!(
            "numAttrs is {} and attrs is NULL",
            c.num_attrs
        )));
    }
    let mut cluster = None;
    for i in 0..c.num_attrs as usize {
        // Safety: `attrs` holds `numAttrs` CUlaunchAttributes (cuda.h).
        let a = unsafe { c.attrs.add(i).read_unaligned() };
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
    unsafe fn cuOccupancyMaxActiveBlocksPerMultiprocessor(
        num_blocks: *mut c_int,
        func: CUfunction,
        block_size: c_int,
        dynamic_smem_size: usize,
    ) -> CuResult<()> {
        let d = drv()?;
        if num_blocks.is_null() {
            return Err(invalid("numBlocks is NULL"));
        }
        out(
            num_blocks,
            d.occupancy_blocks_per_sm(Handle::key(func), block_size, dynamic_smem_size)?,
        )
    }

    unsafe fn cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        num_blocks: *mut c_int,
        func: CUfunction,
        block_size: c_int,
        dynamic_smem_size: usize,
        _flags: c_uint,
    ) -> CuResult<()> {
        Self::cuOccupancyMaxActiveBlocksPerMultiprocessor(
            num_blocks,
            func,
            block_size,
            dynamic_smem_size,
        )
    }

    unsafe fn cuOccupancyMaxPotentialBlockSize(
        min_grid_size: *mut c_int,
        block_size: *mut c_int,
        func: CUfunction,
        block_to_smem: CUoccupancyB2DSize,
        dynamic_smem_size: usize,
        block_size_limit: c_int,
    ) -> CuResult<()> {
        let d = drv()?;
        if min_grid_size.is_null() || block_size.is_null() {
            return Err(invalid("minGridSize or blockSize is NULL"));
        }
        if block_to_smem.is_some() {
            return Err(not_supported(
                "a blockSizeToDynamicSMemSize callback is not emulated: pass NULL and dynamicSMemSize",
            ));
        }
        let (grid, block) = d.occupancy_potential_block_size(
            Handle::key(func),
            dynamic_smem_size,
            block_size_limit,
        )?;
        out(min_grid_size, grid)?;
        out(block_size, block)
    }

    unsafe fn cuOccupancyMaxPotentialClusterSize(
        cluster_size: *mut c_int,
        func: CUfunction,
        config: *const CUlaunchConfig,
    ) -> CuResult<()> {
        let d = drv()?;
        if cluster_size.is_null() {
            return Err(invalid("clusterSize is NULL"));
        }
        // Safety: NULL (refused) or the program's config, as cuda.h lays it out.
        let (threads, shared, _, _) = unsafe { launch_shape(config)? };
        out(
            cluster_size,
            d.occupancy_cluster_size(Handle::key(func), threads, shared)?,
        )
    }

    unsafe fn cuOccupancyMaxActiveClusters(
        num_clusters: *mut c_int,
        func: CUfunction,
        config: *const CUlaunchConfig,
    ) -> CuResult<()> {
        let d = drv()?;
        if num_clusters.is_null() {
            return Err(invalid("numClusters is NULL"));
        }
        // Safety: as above.
        let (threads, shared, cluster, grid) = unsafe { launch_shape(config)? };
        out(
            num_clusters,
            d.occupancy_active_clusters(Handle::key(func), threads, shared, cluster, grid)?,
        )
    }

    unsafe fn cuOccupancyMaxPotentialBlockSizeWithFlags(
        min_grid_size: *mut c_int,
        block_size: *mut c_int,
        func: CUfunction,
        block_to_smem: CUoccupancyB2DSize,
        dynamic_smem_size: usize,
        block_size_limit: c_int,
        _flags: c_uint,
    ) -> CuResult<()> {
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
