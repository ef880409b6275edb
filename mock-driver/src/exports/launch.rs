//! Kernel launches (cuda.h files them under `ExecutionControlApi`, whose methods in
//! exports/mod.rs call these): cuLaunchKernel, cuLaunchCooperativeKernel,
//! cuLaunchKernelEx (and its `_ptsz`), over `model::launch`, and the legacy launch
//! (cuParamSet*, cuFuncSetBlockShape, cuFuncSetSharedSize, cuLaunch, cuLaunchGrid,
//! cuLaunchGridAsync) over `model::legacy_launch`. A launch looks its function
//! up once (`Driver::launch_function`): the parameter buffer is read by its layout and
//! the model checks and queues the launch of it.

use super::per_thread;
use crate::boundary::{drv, Handle};
use crate::model::error::*;
use crate::model::ids::{FunctionId, StreamId};
use crate::model::launch::LaunchRequest;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::{c_uint, c_void};

emulate! {
    pub(super) fn cuLaunchKernel(
        d;
        f,
        grid_x, grid_y, grid_z,
        block_x, block_y, block_z,
        shared,
        stream,
        kernel_params,
        extra
    ) {
        let shape = Shape {
            grid: [grid_x, grid_y, grid_z],
            block: [block_x, block_y, block_z],
            shared,
        };
        // Safety: the parameter arrays are the program's, as cuLaunchKernel requires.
        unsafe { launch(d, f, shape, stream, kernel_params, extra, How::default()) }
    }

    pub(super) fn cuLaunchCooperativeKernel(
        d;
        f,
        grid_x, grid_y, grid_z,
        block_x, block_y, block_z,
        shared,
        stream,
        kernel_params
    ) {
        let shape = Shape {
            grid: [grid_x, grid_y, grid_z],
            block: [block_x, block_y, block_z],
            shared,
        };
        let how = How {
            cooperative: true,
            cluster: None,
        };
        // Safety: the parameter array is the program's, as cuLaunchCooperativeKernel
        // requires (it takes no `extra`).
        unsafe { launch(d, f, shape, stream, kernel_params, std::ptr::null_mut(), how) }
    }

    // The legacy launch (model/legacy_launch.rs): a function's own settings.
    pub(super) fn cuFuncSetBlockShape(d; hfunc, x, y, z) {
        d.legacy_block_shape(hfunc, x, y, z)
    }

    pub(super) fn cuFuncSetSharedSize(d; hfunc, bytes) {
        d.legacy_shared_size(hfunc, bytes)
    }

    pub(super) fn cuParamSetSize(d; hfunc, numbytes) {
        d.legacy_param_size(hfunc, numbytes)
    }

    pub(super) fn cuParamSeti(d; hfunc, offset, value) {
        d.legacy_param_write(hfunc, offset, &value.to_ne_bytes())
    }

    pub(super) fn cuParamSetf(d; hfunc, offset, value) {
        d.legacy_param_write(hfunc, offset, &value.to_ne_bytes())
    }

    /// NULL is CUDA_ERROR_INVALID_VALUE, with a size (probe api_gaps3, null-questions) and
    /// without (legacy-launch-errors2).
    pub(super) fn cuParamSetv(d; hfunc, offset, ptr, numbytes) {
        if ptr.is_null() {
            d.function_params(hfunc)?;
            return Err(invalid("cuParamSetv: ptr is NULL"));
        }
        // Safety: `ptr` holds `numbytes` bytes of the program's, as cuParamSetv requires.
        let bytes = unsafe { crate::boundary::slice(ptr.cast_const().cast::<u8>(), numbytes as usize, "ptr") }?;
        d.legacy_param_write(hfunc, offset, bytes)
    }

    /// The H200 refuses it with CU_PARAM_TR_DEFAULT, cuda.h's only texunit, and a
    /// module's texture reference (probe api_gaps3, texture-references): a kernel reads
    /// its module's references by name, bound with cuTexRefSet*, without this call.
    pub(super) fn cuParamSetTexRef(d; hfunc, texunit, _tex_ref) {
        d.function_params(hfunc)?;
        Err(invalid(format!(
            "cuParamSetTexRef (texunit {texunit}): the H200 refuses it; a kernel reads its \
             module's texture references once bound with cuTexRefSet*"
        )))
    }

    /// cuLaunch and cuLaunchGrid run on the legacy default stream: cuda.h gives them no
    /// stream, and no per-thread variant.
    pub(super) fn cuLaunch(d; f) {
        d.legacy_launch(f, [1, 1], StreamId::NULL)
    }

    pub(super) fn cuLaunchGrid(d; f, grid_width, grid_height) {
        d.legacy_launch(f, [grid_width, grid_height], StreamId::NULL)
    }

    pub(super) fn cuLaunchGridAsync(d; f, grid_width, grid_height, stream) {
        d.legacy_launch(f, [grid_width, grid_height], stream)
    }
}

pub(super) unsafe fn cuLaunchKernelEx(
    config: *const CUlaunchConfig,
    f: CUfunction,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CuResult<()> {
    // Safety: the caller's contract.
    let (c, attrs) = unsafe { launch_config(config) }?;
    let mut cooperative = false;
    let mut cluster = None;
    let mut ignored = 0;
    for a in attrs {
        match a.id {
            cumock_abi::CU_LAUNCH_ATTRIBUTE_COOPERATIVE => cooperative = a.value[0] != 0,
            // The blocks of a cluster run together (ptx/src/executor/cluster.rs).
            cumock_abi::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION => {
                cluster = Some([a.value[0], a.value[1], a.value[2]])
            }
            _ => ignored += 1,
        }
    }
    if ignored != 0 {
        // Attributes (priorities, programmatic serialisation, scheduling policies)
        // change how a GPU schedules blocks, not what a correct kernel computes; the
        // executor has no use for them, but says so.
        crate::diagnostics::warn(
            "cuLaunchKernelEx",
            &format!("{ignored} launch attributes ignored: the host executor runs blocks without priorities or scheduling policies"),
        );
    }
    let shape = Shape {
        grid: c.grid,
        block: c.block,
        shared: c.shared,
    };
    let how = How {
        cooperative,
        cluster,
    };
    // Safety: the parameter arrays are the program's, as cuLaunchKernelEx requires.
    unsafe {
        launch(
            drv()?,
            f.key(),
            shape,
            c.stream.key(),
            kernel_params,
            extra,
            how,
        )
    }
}

pub(super) unsafe fn cuLaunchKernelEx_ptsz(
    config: *const CUlaunchConfig,
    f: CUfunction,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CuResult<()> {
    // Safety: the caller's contract.
    let (mut c, _) = unsafe { launch_config(config) }?;
    c.stream = per_thread(c.stream);
    cuLaunchKernelEx((&raw const c).cast(), f, kernel_params, extra)
}

/// The program's launch configuration (cuLaunchKernelEx, cuOccupancyMaxPotentialClusterSize
/// and cuOccupancyMaxActiveClusters): NULL, or attributes counted but NULL, are
/// CUDA_ERROR_INVALID_VALUE.
///
/// # Safety
/// `config` is NULL or the program's CUlaunchConfig, its `attrs` holding `numAttrs`.
pub(super) unsafe fn launch_config<'a>(
    config: *const CUlaunchConfig,
) -> CuResult<(cumock_abi::LaunchConfig, &'a [cumock_abi::LaunchAttribute])> {
    // Safety: the caller's contract; the mock's layout of cuda.h's struct.
    let c = unsafe { crate::boundary::input(config.cast::<cumock_abi::LaunchConfig>(), "config") }?;
    // Safety: `attrs` holds `numAttrs` CUlaunchAttributes (cuda.h), each 72 bytes: the
    // id, padding to 8, then the 64-byte value union.
    let attrs =
        unsafe { crate::boundary::slice(c.attrs.cast_const(), c.num_attrs as usize, "attrs") }?;
    Ok((c, attrs))
}

/// A launch's grid, block and dynamic shared memory.
struct Shape {
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared: c_uint,
}

/// How a launch runs its blocks: cooperatively, in clusters (cuLaunchKernelEx's
/// attributes).
#[derive(Default)]
struct How {
    cooperative: bool,
    cluster: Option<[u32; 3]>,
}

/// cuLaunchKernel, cuLaunchCooperativeKernel and cuLaunchKernelEx: the function looked
/// up, its parameter buffer read, then the model's launch of it.
///
/// # Safety
/// The parameter arrays are the program's, as cuLaunchKernel requires.
unsafe fn launch(
    d: &'static crate::model::Driver,
    f: FunctionId,
    shape: Shape,
    stream: StreamId,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
    how: How,
) -> CuResult<()> {
    // Looked up once (a NULL or stale handle refused there): its parameters' layout
    // here, the launch's checks in the model.
    let function = d.launch_function(f)?;
    // Safety: as this function's contract.
    let params = unsafe { read_params(function.params(), kernel_params, extra)? };
    d.launch(
        &function,
        LaunchRequest {
            function: f,
            grid: shape.grid,
            block: shape.block,
            shared: shape.shared,
            stream,
            params,
            cooperative: how.cooperative,
            cluster: how.cluster,
        },
    )
}

/// The parameter buffer of function `f` (a graph's kernel node), as `read_params` reads
/// it.
///
/// # Safety
/// The arrays are the program's, as cuLaunchKernel requires.
pub(super) unsafe fn param_buffer(
    d: &crate::model::Driver,
    f: FunctionId,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CuResult<Vec<u8>> {
    // (A NULL function is refused by the lookup, as a launch's is.)
    let layout = d.function_params(f)?;
    // Safety: this function's contract.
    unsafe { read_params(&layout, kernel_params, extra) }
}

/// A kernel's parameter buffer, laid out as `layout`, from `kernelParams` (one pointer per
/// parameter) or from `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE), with the H200's
/// answers to misuse.
///
/// # Safety
/// The arrays are the program's, as cuLaunchKernel requires.
unsafe fn read_params(
    layout: &[cumock_ptx::Param],
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CuResult<Vec<u8>> {
    let size = crate::model::Driver::params_size(layout);
    let mut buf = vec![0u8; size];
    match (kernel_params.is_null(), extra.is_null()) {
        (false, false) => Err(invalid("both kernelParams and extra are given: pass one")),
        (true, true) if size > 0 => Err(invalid(format!(
            "the kernel takes {} parameters and neither kernelParams nor extra is given",
            layout.len()
        ))),
        (true, true) => Ok(buf),
        (false, true) => {
            for (i, p) in layout.iter().enumerate() {
                // Safety: kernelParams holds one pointer per parameter, each to a value of
                // the parameter's size (cuda.h).
                let src = unsafe { *kernel_params.add(i) };
                if src.is_null() {
                    return Err(invalid(format!("kernelParams[{i}] is NULL")));
                }
                let at = p.offset as usize;
                // Safety: as above.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        src.cast::<u8>(),
                        buf[at..].as_mut_ptr(),
                        p.size as usize,
                    )
                };
            }
            Ok(buf)
        }
        (true, false) => {
            let (mut pointer, mut len) = (std::ptr::null::<u8>(), None::<usize>);
            let mut i = 0;
            loop {
                // Safety: `extra` is a list of (key, value) pointers ending at
                // CU_LAUNCH_PARAM_END (cuda.h); it is read one key at a time.
                let key = unsafe { *extra.add(i) } as usize;
                match key {
                    0x00 => break,
                    0x01 => pointer = unsafe { *extra.add(i + 1) }.cast(),
                    0x02 => {
                        let p = unsafe { *extra.add(i + 1) }.cast::<usize>();
                        if p.is_null() {
                            return Err(invalid("CU_LAUNCH_PARAM_BUFFER_SIZE points to NULL"));
                        }
                        len = Some(unsafe { p.read_unaligned() });
                    }
                    other => {
                        return Err(invalid(format!("{other:#x} is not a CU_LAUNCH_PARAM key")))
                    }
                }
                i += 2;
                if i > 64 {
                    return Err(invalid("extra is not ended by CU_LAUNCH_PARAM_END"));
                }
            }
            let len = len.ok_or_else(|| invalid("extra has no CU_LAUNCH_PARAM_BUFFER_SIZE"))?;
            if pointer.is_null() {
                return Err(invalid("extra has no CU_LAUNCH_PARAM_BUFFER_POINTER"));
            }
            if len != size {
                // The H200 answers a buffer of another size than the kernel's parameters so.
                return Err(CuError::new(
                    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                    format!(
                        "the parameter buffer is {len} bytes; the kernel's parameters take {size}"
                    ),
                ));
            }
            // Safety: the program's buffer of `len` bytes.
            unsafe { std::ptr::copy_nonoverlapping(pointer, buf.as_mut_ptr(), len) };
            Ok(buf)
        }
    }
}
