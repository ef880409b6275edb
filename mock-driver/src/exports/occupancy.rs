//! Occupancy (cuda.h's group CUDA_OCCUPANCY): how many blocks of a function fit on a
//! multiprocessor, and the block size that fits the most.

use super::Mock;
use crate::boundary::{drv, function_key, out};
use crate::model::error::*;
use cumock_abi::*;
use std::ffi::{c_int, c_uint};

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
            d.occupancy_blocks_per_sm(function_key(func), block_size, dynamic_smem_size)?,
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
            function_key(func),
            dynamic_smem_size,
            block_size_limit,
        )?;
        out(min_grid_size, grid)?;
        out(block_size, block)
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
