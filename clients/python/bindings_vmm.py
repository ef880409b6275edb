"""NVIDIA's Python bindings (cuda-bindings) driving the VMM API, unchanged: allocate,
grow, write and read through the bindings, free, with the data checked. Runs on the
mock (LD_LIBRARY_PATH from `cumock lib-path`) and on a real driver. Prints "ok"."""
import sys

from cuda.bindings import driver as cu


def check(result):
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{err!r}: {cu.cuGetErrorName(err)[1]}")
    return rest[0] if len(rest) == 1 else rest


def main():
    check(cu.cuInit(0))
    dev = check(cu.cuDeviceGet(0))
    ctx = check(cu.cuDevicePrimaryCtxRetain(dev))
    check(cu.cuCtxSetCurrent(ctx))
    name = check(cu.cuDeviceGetName(64, dev)).split(b"\0")[0].decode()
    vmm = check(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev))
    assert vmm == 1, vmm

    prop = cu.CUmemAllocationProp()
    prop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = 0
    gran = check(cu.cuMemGetAllocationGranularity(prop, cu.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM))
    access = cu.CUmemAccessDesc()
    access.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    access.location.id = 0
    access.flags = cu.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE

    # Reserve room for 8 chunks, map 2, then grow to 4 without moving anything.
    va = check(cu.cuMemAddressReserve(8 * gran, 0, 0, 0))
    handles = []
    for i in range(4):
        h = check(cu.cuMemCreate(gran, prop, 0))
        check(cu.cuMemMap(int(va) + i * gran, gran, 0, h, 0))
        check(cu.cuMemSetAccess(int(va) + i * gran, gran, [access], 1))
        handles.append(h)
        if i == 1:
            data = bytes((j * 13 + 7) % 256 for j in range(2 * gran - 4096))
            check(cu.cuMemcpyHtoD(int(va) + 4096, data, len(data)))
    back = bytearray(len(data))
    check(cu.cuMemcpyDtoH(back, int(va) + 4096, len(back)))
    assert bytes(back) == data, "data changed when the range grew"
    more = bytes(range(256)) * 1024
    check(cu.cuMemcpyHtoD(int(va) + 2 * gran - 1000, more, len(more)))  # across chunks 1-2
    back = bytearray(len(more))
    check(cu.cuMemcpyDtoH(back, int(va) + 2 * gran - 1000, len(back)))
    assert bytes(back) == more

    free, total = check(cu.cuMemGetInfo())
    check(cu.cuMemUnmap(va, 4 * gran))
    for h in handles:
        check(cu.cuMemRelease(h))
    check(cu.cuMemAddressFree(va, 8 * gran))
    free2, _ = check(cu.cuMemGetInfo())
    assert free2 - free == 4 * gran, (free, free2)
    check(cu.cuDevicePrimaryCtxRelease(dev))
    print(f"ok {name} granularity={gran}")


if __name__ == "__main__":
    sys.exit(main())
