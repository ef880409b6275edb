"""cuda-core 1.2's memory resources, streams, events and kernels, unchanged, on the mock:
Device.allocate (the device's current pool), DeviceMemoryResource, PinnedMemoryResource
(CUDA 13's host memory pool), ManagedMemoryResource (the managed pool), and
LegacyPinnedMemoryResource; buffer copies between them in stream order, an event between
two streams, and a PTX kernel (Program needs NVRTC, which the test machine lacks when
nvrtc is not installed: then the PTX is given as ObjectCode) launched with launch() on
pinned, managed and device memory. Prints "ok" and what ran."""
import ctypes

from cuda.core import (
    Device,
    DeviceMemoryResource,
    LaunchConfig,
    LegacyPinnedMemoryResource,
    ManagedMemoryResource,
    ObjectCode,
    PinnedMemoryResource,
    Program,
    ProgramOptions,
    launch,
)

N = 1 << 16
PTX = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry add_one(.param .u64 p, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r2, [n];
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.s32 %r1, %r3, %r4, %r5;
    setp.ge.s32 %p1, %r1, %r2;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.s32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.u32 %r3, [%rd4];
    add.s32 %r3, %r3, 1;
    st.global.u32 [%rd4], %r3;
DONE:
    ret;
}
"""
SOURCE = r"""extern "C" __global__ void add_one(int *p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1;
}"""


def words(buf, n=N):
    """The host's view of host-reachable memory (pinned, managed), at its address."""
    return (ctypes.c_int32 * n).from_address(int(buf.handle))


dev = Device(0)
dev.set_current()
s1 = dev.create_stream()
s2 = dev.create_stream()
ran = []

# The kernel: NVRTC when there is one, else the same kernel as PTX.
try:
    prog = Program(SOURCE, "c++", ProgramOptions(arch="compute_90"))
    code = prog.compile("ptx")
    ran.append("nvrtc")
except Exception as e:  # cuda-pathfinder's DynamicLibNotFoundError, among others
    if "nvrtc" not in str(e).lower():
        raise
    code = ObjectCode.from_ptx(PTX.encode())  # bytes: a str is a path
    ran.append("ptx")
kernel = code.get_kernel("add_one")
attrs = kernel.attributes
assert attrs.max_threads_per_block >= 256, attrs.max_threads_per_block
assert attrs.num_regs >= 0
config = LaunchConfig(grid=(N + 255) // 256, block=256)

# Pinned host memory from CUDA 13's host memory pool: the host writes it at its address.
pinned_mr = PinnedMemoryResource()
assert pinned_mr.is_host_accessible and pinned_mr.is_device_accessible
src = pinned_mr.allocate(4 * N, stream=s1)
s1.sync()
host = words(src)
for i in range(0, N, 97):
    host[i] = i
# A device buffer from Device.allocate (the device's current pool), filled from the pinned
# one, incremented by the kernel, copied into managed memory on another stream after an
# event, and read by the host there.
dbuf = dev.allocate(4 * N, stream=s1)
dbuf.copy_from(src, stream=s1)
launch(s1, config, kernel, dbuf, ctypes.c_int32(N))
done = s1.record()
managed_mr = ManagedMemoryResource()
mbuf = managed_mr.allocate(4 * N, stream=s2)
s2.wait(done)
mbuf.copy_from(dbuf, stream=s2)
# The kernel on managed memory directly, then on pinned memory directly.
launch(s2, config, kernel, mbuf, ctypes.c_int32(N))
s2.sync()
got = words(mbuf)
for i in range(0, N, 97):
    assert got[i] == i + 2, (i, got[i])
launch(s1, config, kernel, src, ctypes.c_int32(N))
s1.sync()
for i in range(0, N, 97):
    assert host[i] == i + 1, (i, host[i])
ran.append("pinned, device and managed pools")

# A DeviceMemoryResource of its own pool, and legacy pinned memory (cuMemAllocHost):
# a round trip device -> legacy pinned through a second device buffer.
from cuda.core import DeviceMemoryResourceOptions  # noqa: E402

own = DeviceMemoryResource(dev, DeviceMemoryResourceOptions(max_size=64 << 20))
assert own.is_device_accessible and not own.is_host_accessible
d2 = own.allocate(4 * N, stream=s1)
d2.copy_from(mbuf, stream=s1)
legacy = LegacyPinnedMemoryResource().allocate(4 * N, stream=s1)
legacy.copy_from(d2, stream=s1)
s1.sync()
back = words(legacy)
for i in range(0, N, 97):
    assert back[i] == i + 2, (i, back[i])
ran.append("own device pool, legacy pinned")

# Events: one recorded with timing, waited on by the host.
e0 = s1.record(options={"timing_enabled": True})
launch(s1, config, kernel, d2, ctypes.c_int32(N))
e1 = s1.record(options={"timing_enabled": True})
e1.sync()
assert e1.is_done and (e1 - e0) >= 0.0
ran.append("events")

for b in (src, dbuf, mbuf, d2):
    b.close(s1)
legacy.close()
s1.sync()
own.close()
print("ok " + ", ".join(ran))
