"""PyTorch's caching allocator through the CUDA runtime, with no kernel launched: tensors
of many sizes (torch.empty), data copied in and out with cudaMemcpy (checked), growth,
frees, empty_cache, memory_stats kept consistent, and out-of-memory raised as PyTorch
raises it. Runs unchanged on NVIDIA's runtime and driver, and on cumock's runtime over the
mock (ci/gpu-torch.sh). The allocator mode comes from PYTORCH_CUDA_ALLOC_CONF (default, or
expandable_segments:True). Prints a transcript; exits 1 when a check fails.
"""
import os
import sys

import torch

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print(f"    CHECK FAILED: {what}")


def stats():
    s = torch.cuda.memory_stats()
    return {k: s.get(k, 0) for k in (
        "allocated_bytes.all.current", "reserved_bytes.all.current", "active_bytes.all.current",
        "num_alloc_retries", "num_ooms", "segment.all.current")}


def consistent(label):
    s = stats()
    print(f"{label}: allocated={s['allocated_bytes.all.current']} reserved={s['reserved_bytes.all.current']} "
          f"segments={s['segment.all.current']} ooms={s['num_ooms']}")
    check(s["allocated_bytes.all.current"] == torch.cuda.memory_allocated(), "memory_allocated agrees with memory_stats")
    check(s["reserved_bytes.all.current"] == torch.cuda.memory_reserved(), "memory_reserved agrees with memory_stats")
    check(s["allocated_bytes.all.current"] <= s["reserved_bytes.all.current"], "allocated <= reserved")


print(f"mode={os.environ.get('PYTORCH_CUDA_ALLOC_CONF', 'default')}")
print(f"is_available={torch.cuda.is_available()}")
if not torch.cuda.is_available():
    sys.exit(2)
print(f"device_count={torch.cuda.device_count()} name={torch.cuda.get_device_name(0)}")
props = torch.cuda.get_device_properties(0)
print(f"total_memory={props.total_memory} capability={props.major}.{props.minor} sms={props.multi_processor_count}")
consistent("start")

# Tensors of many sizes, each filled from the CPU and read back.
sizes = [1, 7, 512, 513, 4096, 65536, 1 << 20, (1 << 20) + 1, 3 << 20, 20 << 20, 100 << 20]
live = []
for n in sizes:
    t = torch.empty(n, dtype=torch.uint8, device="cuda")
    src = torch.arange(n, dtype=torch.int64).remainder(251).to(torch.uint8)
    t.copy_(src)
    back = t.cpu()
    check(torch.equal(back, src), f"{n} bytes round trip")
    live.append(t)
consistent("after many sizes")
allocated = torch.cuda.memory_allocated()
check(allocated >= sum(sizes), "every live tensor is counted")

# Device to device, then back.
a = live[-2]
b = torch.empty_like(a)
b.copy_(a)
check(torch.equal(b.cpu(), a.cpu()), "device-to-device copy")
del b

# Growth: a tensor that doubles, the old one freed each time.
t = torch.empty(1 << 20, dtype=torch.uint8, device="cuda")
for i in range(6):
    bigger = torch.empty(t.numel() * 2, dtype=torch.uint8, device="cuda")
    bigger[: t.numel()].copy_(t)
    t = bigger
consistent("after growth")

# Frees, and empty_cache giving the cached memory back.
del live, t, bigger, a
consistent("after frees")
check(torch.cuda.memory_allocated() == 0, "nothing is allocated after the frees")
torch.cuda.empty_cache()
consistent("after empty_cache")
check(torch.cuda.memory_reserved() == 0, "empty_cache gives everything back")

# Out of memory, as PyTorch raises it.
try:
    torch.empty(props.total_memory * 2, dtype=torch.uint8, device="cuda")
    check(False, "an allocation twice the device's memory fails")
except torch.OutOfMemoryError as e:
    print(f"OutOfMemoryError: {str(e).splitlines()[0][:60]}")
consistent("after the OOM")

# The allocator still works after it.
t = torch.empty(1 << 20, dtype=torch.uint8, device="cuda")
t.copy_(torch.full((1 << 20,), 9, dtype=torch.uint8))
check(int(t.cpu()[12345]) == 9, "allocation after the OOM")
del t
torch.cuda.synchronize()
torch.cuda.empty_cache()
consistent("end")
print(f"{failures} checks failed" if failures else "all checks passed")
sys.exit(1 if failures else 0)
