"""An allocator written with NVIDIA's Python bindings that forgets to release a physical
allocation and to free a reservation, and misuses a call: under CUMOCK_LEAKS=1 and
CUMOCK_MISUSE=1 the mock's reports name this file's lines and functions (the Python call
sites), not the interpreter's native frames. Prints "done"."""
from cuda.bindings import driver as cu


def check(result):
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{err!r}")
    return rest[0] if len(rest) == 1 else rest


def grow_pool(prop, gran):
    # Leaked: never released.
    handle = check(cu.cuMemCreate(gran, prop, 0))
    # Leaked: never freed.
    va = check(cu.cuMemAddressReserve(4 * gran, 0, 0, 0))
    return handle, va


def misuse():
    # A size that is not a multiple of the granularity: CUDA_ERROR_INVALID_VALUE.
    return cu.cuMemAddressReserve(12345, 0, 0, 0)[0]


def main():
    check(cu.cuInit(0))
    dev = check(cu.cuDeviceGet(0))
    ctx = check(cu.cuDevicePrimaryCtxRetain(dev))
    check(cu.cuCtxSetCurrent(ctx))
    prop = cu.CUmemAllocationProp()
    prop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = 0
    gran = check(cu.cuMemGetAllocationGranularity(prop, cu.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM))
    grow_pool(prop, gran)
    assert misuse() != cu.CUresult.CUDA_SUCCESS
    print("done")


main()
