"""PyTorch's CUDA caching allocator in expandable-segments mode, on a real GPU: tensors of
varied sizes allocated and freed so that segments grow and shrink (empty_cache gives
memory back). Run under `cumock trace` to record the driver calls it makes."""
import os

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
import torch  # noqa: E402

assert torch.cuda.is_available()
torch.manual_seed(0)
keep = []
for size_mib in [1, 3, 20, 2, 45, 7, 130, 1, 64, 18]:
    t = torch.empty(size_mib << 20, dtype=torch.uint8, device="cuda")
    t.fill_(size_mib % 251)
    keep.append(t)
checks = [int(t[-1].item()) == (t.numel() >> 20) % 251 for t in keep]
del keep[::2]
torch.cuda.synchronize()
torch.cuda.empty_cache()  # shrink: the freed pages are unmapped and released
more = [torch.ones(n << 20, dtype=torch.uint8, device="cuda") for n in (5, 90, 33)]
torch.cuda.synchronize()
stats = torch.cuda.memory_stats()
del keep, more
torch.cuda.empty_cache()
print(f"ok checks={all(checks)} segments={stats.get('num_alloc_retries', 0)} reserved_peak={stats['reserved_bytes.all.peak'] >> 20}MiB")
