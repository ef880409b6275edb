"""The plugin on NVIDIA's Python clients: cuda-python's driver bindings
(`cuda.bindings.driver`) and cuda-core's VirtualMemoryResource, each test in its own
process on the mock, with leaks failing the test, and out-of-memory paths driven by fault
injection."""

import pytest

from cuda.bindings import driver as cu

OOM = cu.CUresult.CUDA_ERROR_OUT_OF_MEMORY


def check(result):
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(err)
    return rest[0] if len(rest) == 1 else rest


class ChunkAllocator:
    """A growing pool of physical chunks mapped into one reservation, in the manner of
    PyTorch's expandable segments: on out of memory it drops its cache and retries."""

    def __init__(self, device, chunks):
        self.prop = cu.CUmemAllocationProp()
        self.prop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
        self.prop.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
        self.prop.location.id = device
        self.gran = check(cu.cuMemGetAllocationGranularity(
            self.prop, cu.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM))
        self.access = cu.CUmemAccessDesc()
        self.access.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
        self.access.location.id = device
        self.access.flags = cu.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
        self.capacity = chunks
        self.va = int(check(cu.cuMemAddressReserve(chunks * self.gran, 0, 0, 0)))
        self.mapped = []
        self.cache = []  # created, not mapped: given back on out of memory
        self.retries = 0

    def _create(self):
        err, h = cu.cuMemCreate(self.gran, self.prop, 0)
        if err == OOM:
            self.retries += 1
            for c in self.cache:
                check(cu.cuMemRelease(c))
            self.cache.clear()
            err, h = cu.cuMemCreate(self.gran, self.prop, 0)
        check(err)
        return h

    def grow(self):
        h = self._create()
        at = self.va + len(self.mapped) * self.gran
        check(cu.cuMemMap(at, self.gran, 0, h, 0))
        check(cu.cuMemSetAccess(at, self.gran, [self.access], 1))
        self.mapped.append(h)
        return at

    def close(self):
        if self.mapped:
            check(cu.cuMemUnmap(self.va, len(self.mapped) * self.gran))
        for h in self.mapped + self.cache:
            check(cu.cuMemRelease(h))
        check(cu.cuMemAddressFree(self.va, self.capacity * self.gran))


def context(device):
    check(cu.cuInit(0))
    dev = check(cu.cuDeviceGet(device))
    check(cu.cuCtxSetCurrent(check(cu.cuDevicePrimaryCtxRetain(dev))))
    return dev


@pytest.mark.cumock(devices=2, leaks=True, strict=True)
def test_bindings_allocate_on_each_of_two_devices_and_free_everything():
    for device in (0, 1):
        dev = context(device)
        a = ChunkAllocator(device, chunks=4)
        data = bytes(range(256)) * 64
        at = a.grow()
        a.grow()
        check(cu.cuMemcpyHtoD(at + a.gran - 100, data, len(data)))  # across both chunks
        back = bytearray(len(data))
        check(cu.cuMemcpyDtoH(back, at + a.gran - 100, len(back)))
        assert bytes(back) == data
        check(cu.cuCtxSynchronize())
        a.close()
        check(cu.cuDevicePrimaryCtxRelease(dev))


@pytest.mark.cumock(fault="cuMemCreate:3:CUDA_ERROR_OUT_OF_MEMORY", leaks=True, strict=True)
def test_bindings_allocator_recovers_from_out_of_memory():
    dev = context(0)
    a = ChunkAllocator(0, chunks=8)
    a.grow()
    a.cache.append(check(cu.cuMemCreate(a.gran, a.prop, 0)))  # the 2nd create: cached
    a.grow()  # the 3rd create fails: the cache is given back, the retry succeeds
    assert a.retries == 1 and not a.cache
    a.grow()
    a.close()
    check(cu.cuDevicePrimaryCtxRelease(dev))


@pytest.mark.cumock(fault="cuMemCreate:every=1:CUDA_ERROR_OUT_OF_MEMORY", leaks=True, strict=True)
def test_bindings_allocator_reports_out_of_memory_when_retrying_fails():
    dev = context(0)
    a = ChunkAllocator(0, chunks=2)
    with pytest.raises(RuntimeError) as e:
        a.grow()
    assert e.value.args[0] == OOM and a.retries == 1
    a.close()
    check(cu.cuDevicePrimaryCtxRelease(dev))


# Not strict: cuda-core 1.2's VirtualMemoryResource leaks one reference of each physical
# allocation (it retains the handle with cuMemRetainAllocationHandle when it frees, and
# releases once, never dropping cuMemCreate's own reference), so on a GPU the memory is
# never given back. The mock's leak report says so, with the call stack, in the report.
@pytest.mark.cumock(leaks=True, misuse=True)
def test_core_virtual_memory_resource_grows_in_place():
    from cuda.core import Device, VirtualMemoryResource, VirtualMemoryResourceOptions

    dev = Device(0)
    dev.set_current()
    vmr = VirtualMemoryResource(dev, VirtualMemoryResourceOptions())
    buf = vmr.allocate(3 << 20)
    data = bytes((i * 31) % 256 for i in range(3 << 20))
    check(cu.cuMemcpyHtoD(int(buf.handle), data, len(data)))
    check(cu.cuCtxSynchronize())  # growing remaps: the copy must have landed first
    grown = vmr.modify_allocation(buf, 40 << 20)
    assert grown.size >= 40 << 20
    back = bytearray(len(data))
    check(cu.cuMemcpyDtoH(back, int(grown.handle), len(back)))
    assert bytes(back) == data
    grown.close()


@pytest.mark.cumock(fault="cuMemCreate:1:CUDA_ERROR_OUT_OF_MEMORY", leaks=True)
def test_core_virtual_memory_resource_surfaces_out_of_memory():
    from cuda.core import Device, VirtualMemoryResource, VirtualMemoryResourceOptions

    dev = Device(0)
    dev.set_current()
    vmr = VirtualMemoryResource(dev, VirtualMemoryResourceOptions())
    with pytest.raises(Exception, match="OUT_OF_MEMORY"):
        vmr.allocate(3 << 20)
    buf = vmr.allocate(3 << 20)  # the next create is not faulted
    buf.close()
