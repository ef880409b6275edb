//! The legacy launch (cuParamSet*, cuFuncSetBlockShape, cuFuncSetSharedSize, cuLaunch,
//! cuLaunchGrid, cuLaunchGridAsync) as the H200 ran it (probe api_gaps3, legacy-launch and
//! legacy-launch-errors): a function's own parameters and shape, launched for real.

#[path = "common/context.rs"]
mod context;
use context::primary_context;
use cuda::exports::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::CString;
use std::ptr::null_mut;
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

/// Each thread adds 1 to word 3 of `out`; thread 0 of block 0 writes `a`, `b`, the
/// grid's x and y and the dynamic shared memory size to words 0, 1, 2, 4 and 5.
const PTX: &str = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry legacy(.param .u64 out, .param .u32 a, .param .f32 b)
{
    .reg .u64 %rd<2>;
    .reg .u32 %r<8>;
    .reg .f32 %f1;
    .reg .pred %p;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    atom.global.add.u32 %r1, [%rd1+12], 1;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    or.b32 %r2, %r2, %r3;
    mov.u32 %r3, %ctaid.y;
    or.b32 %r2, %r2, %r3;
    setp.ne.u32 %p, %r2, 0;
    @%p ret;
    ld.param.u32 %r4, [a];
    st.global.u32 [%rd1], %r4;
    ld.param.f32 %f1, [b];
    st.global.f32 [%rd1+4], %f1;
    mov.u32 %r5, %nctaid.x;
    mov.u32 %r6, %nctaid.y;
    mul.lo.u32 %r5, %r5, 100;
    add.u32 %r5, %r5, %r6;
    st.global.u32 [%rd1+8], %r5;
    mov.u32 %r7, %dynamic_smem_size;
    st.global.u32 [%rd1+16], %r7;
    ret;
}
";

struct Fixture {
    _guard: std::sync::MutexGuard<'static, ()>,
    module: CUmodule,
    f: CUfunction,
    out: CUdeviceptr,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        // Safety: the fixture's own allocation and module.
        unsafe {
            cuMemFree_v2(self.out);
            cuModuleUnload(self.module);
        }
    }
}

/// The kernel loaded, `out` allocated and zeroed, and the parameters set to `a` and `b`
/// (cuParamSet*).
fn setup(a: u32, b: f32) -> Fixture {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    primary_context();
    let mut module: CUmodule = null_mut();
    let mut f: CUfunction = null_mut();
    let mut out: CUdeviceptr = 0;
    let image = CString::new(PTX).unwrap();
    // Safety: pointers to live locals and a NUL-terminated image.
    unsafe {
        assert_eq!(cuModuleLoadData(&mut module, image.as_ptr().cast()), 0);
        assert_eq!(cuModuleGetFunction(&mut f, module, c"legacy".as_ptr()), 0);
        assert_eq!(cuMemAlloc_v2(&mut out, 64), 0);
        assert_eq!(cuMemsetD8_v2(out, 0, 64), 0);
    }
    let fx = Fixture {
        _guard: guard,
        module,
        f,
        out,
    };
    fx.set_params(a, b);
    fx
}

impl Fixture {
    /// The parameters set one by one: out at 0, a at 8, b at 12.
    fn set_params(&self, a: u32, b: f32) {
        let out = self.out;
        // Safety: a live function and a live local of 8 bytes.
        unsafe {
            assert_eq!(cuParamSetSize(self.f, 16), 0);
            assert_eq!(
                cuParamSetv(self.f, 0, (&raw const out).cast_mut().cast(), 8),
                0
            );
            assert_eq!(cuParamSeti(self.f, 8, a), 0);
            assert_eq!(cuParamSetf(self.f, 12, b), 0);
        }
    }

    /// Words 0 to 4 of `out` after the context's work, then zeroed.
    fn words(&self) -> [u32; 5] {
        let mut w = [0u32; 5];
        // Safety: a live allocation of 64 bytes and a local of 20.
        unsafe {
            assert_eq!(cuCtxSynchronize(), 0);
            assert_eq!(cuMemcpyDtoH_v2(w.as_mut_ptr().cast(), self.out, 20), 0);
            assert_eq!(cuMemsetD8_v2(self.out, 0, 64), 0);
        }
        w
    }
}

#[test]
fn cu_launch_grid_runs_the_kernel_with_the_parameters_and_shape_set() {
    let fx = setup(7, 2.5);
    // Safety: a live function.
    unsafe {
        assert_eq!(cuFuncSetBlockShape(fx.f, 4, 2, 1), 0);
        assert_eq!(cuFuncSetSharedSize(fx.f, 256), 0);
        assert_eq!(cuLaunchGrid(fx.f, 3, 2), 0);
    }
    let w = fx.words();
    assert_eq!(w[0], 7);
    assert_eq!(f32::from_bits(w[1]), 2.5);
    assert_eq!(w[2], 302, "grid 3x2");
    assert_eq!(w[3], 3 * 2 * 4 * 2, "every thread of every block ran");
    assert_eq!(w[4], 256);

    // cuLaunch: one block of the same shape, one parameter changed.
    // Safety: a live function.
    unsafe {
        assert_eq!(cuParamSeti(fx.f, 8, 9), 0);
        assert_eq!(cuLaunch(fx.f), 0);
    }
    let w = fx.words();
    assert_eq!((w[0], w[2], w[3]), (9, 101, 8));
}

#[test]
fn cu_launch_grid_async_runs_on_its_stream() {
    let fx = setup(3, -1.0);
    let mut s: CUstream = null_mut();
    // Safety: a live out-pointer and function.
    unsafe {
        assert_eq!(cuStreamCreate(&mut s, 1 /* CU_STREAM_NON_BLOCKING */), 0);
        assert_eq!(cuFuncSetBlockShape(fx.f, 32, 1, 1), 0);
        assert_eq!(cuLaunchGridAsync(fx.f, 2, 1, s), 0);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(cuStreamDestroy_v2(s), 0);
    }
    let w = fx.words();
    assert_eq!((w[0], f32::from_bits(w[1]), w[2], w[3]), (3, -1.0, 201, 64));
}

#[test]
fn cu_launch_after_cu_launch_kernel_reuses_that_launchs_parameters_and_block() {
    let fx = setup(1, 1.0);
    let (mut out, mut a, mut b) = (fx.out, 5u32, 0.5f32);
    let mut args = [
        (&raw mut out).cast(),
        (&raw mut a).cast(),
        (&raw mut b).cast(),
    ];
    // Safety: a live function and parameters.
    unsafe {
        assert_eq!(cuFuncSetBlockShape(fx.f, 1, 1, 1), 0);
        assert_eq!(
            cuLaunchKernel(
                fx.f,
                1,
                1,
                1,
                16,
                1,
                1,
                0,
                null_mut(),
                args.as_mut_ptr(),
                null_mut()
            ),
            0
        );
    }
    assert_eq!(fx.words()[..4], [5, 0.5f32.to_bits(), 101, 16]);
    // Safety: a live function.
    assert_eq!(unsafe { cuLaunch(fx.f) }, 0);
    assert_eq!(fx.words()[..4], [5, 0.5f32.to_bits(), 101, 16]);
}

#[test]
fn bad_settings_are_refused_and_the_earlier_ones_kept() {
    let fx = setup(4, 0.0);
    // Safety: a live function.
    unsafe {
        assert_eq!(cuFuncSetBlockShape(fx.f, 2, 1, 1), 0);
        assert_eq!(cuFuncSetSharedSize(fx.f, 128), 0);
        for (x, y, z) in [
            (0, 1, 1),
            (2048, 1, 1),
            (1024, 2, 1),
            (-1, 1, 1),
            (1, 1, 65),
        ] {
            assert_eq!(
                cuFuncSetBlockShape(fx.f, x, y, z),
                CUDA_ERROR_INVALID_VALUE,
                "{x}x{y}x{z}"
            );
        }
        assert_eq!(
            cuFuncSetSharedSize(fx.f, 48 * 1024 + 1),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuParamSetSize(fx.f, 32768), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(cuParamSeti(fx.f, -4, 1), CUDA_ERROR_INVALID_VALUE);
        for (w, h) in [(0, 1), (1, 0), (1, 65536), (-1, 1)] {
            assert_eq!(
                cuLaunchGrid(fx.f, w, h),
                CUDA_ERROR_INVALID_VALUE,
                "{w}x{h}"
            );
        }
        assert_eq!(cuLaunch(fx.f), 0);
    }
    let w = fx.words();
    assert_eq!((w[0], w[3], w[4]), (4, 2, 128));
}

/// legacy-launch-errors2: more parameter bytes set than the kernel takes is refused at the
/// launch; fewer launch, the bytes past the size set read as zeros (writes past it are
/// taken but not passed).
#[test]
fn more_parameter_bytes_than_the_kernel_takes_are_refused_fewer_read_zeros() {
    let fx = setup(7, 1.5);
    // Safety: a live function.
    unsafe {
        assert_eq!(cuParamSetSize(fx.f, 24), 0);
        assert_eq!(cuLaunch(fx.f), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
        assert_eq!(cuParamSetSize(fx.f, 16), 0);
        assert_eq!(cuLaunch(fx.f), 0);
    }
    let w = fx.words();
    assert_eq!((w[0], w[1]), (7, 1.5f32.to_bits()));
    // Safety: a live function.
    unsafe {
        // `a` written, but only `out` within the size: `a` and `b` read as zeros.
        assert_eq!(cuParamSetSize(fx.f, 8), 0);
        assert_eq!(cuParamSeti(fx.f, 8, 9), 0);
        assert_eq!(cuLaunch(fx.f), 0);
    }
    let w = fx.words();
    assert_eq!((w[0], w[1], w[3]), (0, 0, 1));
}

/// legacy-launch-errors2: cuParamSetv of NULL is refused even for 0 bytes, and the block
/// shape needs a current context.
#[test]
fn null_values_and_no_context_are_refused() {
    let fx = setup(1, 1.0);
    // Safety: a live function; NULL is what the call is asked about.
    unsafe {
        assert_eq!(
            cuParamSetv(fx.f, 0, null_mut(), 0),
            CUDA_ERROR_INVALID_VALUE
        );
        let v = 0u64;
        assert_eq!(
            cuParamSetv(fx.f, 16, (&raw const v).cast_mut().cast(), 0),
            0
        );
        let mut ctx: CUcontext = null_mut();
        assert_eq!(cuCtxGetCurrent(&mut ctx), 0);
        assert_eq!(cuCtxSetCurrent(null_mut()), 0);
        let shape = cuFuncSetBlockShape(fx.f, 1, 1, 1);
        let launch = cuLaunch(fx.f);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        assert_eq!(shape, CUDA_ERROR_INVALID_CONTEXT);
        assert_eq!(launch, CUDA_ERROR_INVALID_CONTEXT);
    }
}
