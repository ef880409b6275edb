"""cuda-core's VirtualMemoryResource, unchanged: allocate, grow with modify_allocation
(the fast path extends the reservation in place), write and read through the bindings,
deallocate. Runs on the mock and on a real driver. Prints "ok"."""
from cuda.bindings import driver as cu
from cuda.core import Device, VirtualMemoryResource, VirtualMemoryResourceOptions


def check(result):
    err, *rest = result
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"{err!r}")
    return rest[0] if len(rest) == 1 else rest


dev = Device(0)
dev.set_current()
vmr = VirtualMemoryResource(dev, VirtualMemoryResourceOptions())
buf = vmr.allocate(3 << 20)
data = bytes((i * 31) % 256 for i in range(3 << 20))
check(cu.cuMemcpyHtoD(int(buf.handle), data, len(data)))
grown = vmr.modify_allocation(buf, 40 << 20)
assert grown.size >= 40 << 20, grown.size
back = bytearray(len(data))
check(cu.cuMemcpyDtoH(back, int(grown.handle), len(back)))
assert bytes(back) == data, "data lost when the allocation grew"
tail = b"\xab" * (1 << 20)
check(cu.cuMemcpyHtoD(int(grown.handle) + (39 << 20), tail, len(tail)))
back = bytearray(len(tail))
check(cu.cuMemcpyDtoH(back, int(grown.handle) + (39 << 20), len(back)))
assert bytes(back) == tail
moved = int(grown.handle) != int(buf.handle)
size = grown.size
grown.close()
print(f"ok grown to {size >> 20} MiB ({'moved' if moved else 'in place'})")
