// Issue 21's dynamic stack allocation (alloca, stacksave, stackrestore) and the special
// registers the system fills: %aggr_smem_size, %total_smem_size, %current_graph_exec,
// the %pm counters (in a file of their own, apart from video.cu's arithmetic).
#define K extern "C" __global__ void

// alloca: sizes from the input (4 to 203 bytes), alignments 8 and 64; what the ISA
// defines (alignment, the data written, stackrestore freeing) and, raw, how far below
// the saved stack pointer the allocations land.
K stack_alloca(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  // At least 4 bytes: a 0-byte alloca gives no memory to write (the ISA).
  unsigned long long size = in[t] % 200 + 4, sp, p1, p2, p3, sp2;
  unsigned v1, v2;
  asm volatile(
      "{ .reg .u64 s;\n\t"
      "stacksave.u64 %0;\n\t"
      "alloca.u64 %1, %7;\n\t"
      "alloca.u64 %2, %7, 64;\n\t"
      "st.local.u32 [%1], %8;\n\t"
      "st.local.u32 [%2], %9;\n\t"
      "ld.local.u32 %5, [%1];\n\t"
      "ld.local.u32 %6, [%2];\n\t"
      "stackrestore.u64 %0;\n\t"
      "alloca.u64 %3, %7;\n\t"
      "stacksave.u64 %4;\n\t"
      "stackrestore.u64 %0; }"
      : "=l"(sp), "=l"(p1), "=l"(p2), "=l"(p3), "=l"(sp2), "=r"(v1), "=r"(v2)
      : "l"(size), "r"(t), "r"(~t)
      : "memory");
  unsigned* o = out + 8 * t;
  o[0] = (unsigned)(sp - p1);
  o[1] = (unsigned)(p1 - p2);
  o[2] = (unsigned)(p1 % 8);
  o[3] = (unsigned)(p2 % 64);
  o[4] = v1;
  o[5] = v2;
  o[6] = p3 == p1;
  o[7] = sp2 == p3;
}

// With the manifest's 256 bytes of dynamic shared memory and 100 of static.
K special_registers_system(const unsigned* in, unsigned* out, int n) {
  __shared__ unsigned buf[25];
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x % 25] = t;
  __syncthreads();
  unsigned r[8];
  unsigned long long g;
  asm volatile("mov.u32 %0, %%aggr_smem_size;" : "=r"(r[0]));
  asm volatile("mov.u32 %0, %%total_smem_size;" : "=r"(r[1]));
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r[2]));
  asm volatile("mov.u64 %0, %%current_graph_exec;" : "=l"(g));
  r[3] = (unsigned)g;
  r[4] = (unsigned)(g >> 32);
  // The performance counters: whether they read zero (no profiler programs them).
  unsigned p0, p7;
  unsigned long long q0, q7;
  asm volatile("mov.u32 %0, %%pm0;" : "=r"(p0));
  asm volatile("mov.u32 %0, %%pm7;" : "=r"(p7));
  asm volatile("mov.u64 %0, %%pm0_64;" : "=l"(q0));
  asm volatile("mov.u64 %0, %%pm7_64;" : "=l"(q7));
  r[5] = (p0 != 0) | (p7 != 0) << 1;
  r[6] = (q0 != 0) | (q7 != 0) << 1;
  r[7] = buf[(threadIdx.x + 1) % 25] < 1u << 20;
  for (int k = 0; k < 8; k++) out[8 * t + k] = r[k];
}

// Where a block's shared memory lies in the shared window: the offsets of a static
// variable and of the dynamic shared memory (the manifest's 256 bytes), against the
// region sm_90 reserves for the system (`%reserved_smem_offset_begin`..`_cap`). The mock
// puts the kernel's variables right after the reserved 1 KiB; whether the H200 does is
// what this records. Words: 8 a thread.
K shared_layout(const unsigned* in, unsigned* out, int n) {
  __shared__ unsigned buf[25];
  extern __shared__ unsigned dyn[];
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x % 25] = t;
  dyn[threadIdx.x] = in[t % n];
  __syncthreads();
  unsigned r[8];
  r[0] = (unsigned)__cvta_generic_to_shared(&buf[0]);
  r[1] = (unsigned)__cvta_generic_to_shared(&dyn[0]);
  asm volatile("mov.u32 %0, %%reserved_smem_offset_begin;" : "=r"(r[2]));
  asm volatile("mov.u32 %0, %%reserved_smem_offset_cap;" : "=r"(r[3]));
  asm volatile("mov.u32 %0, %%reserved_smem_offset_1;" : "=r"(r[4]));
  r[5] = r[0] >= r[3];
  unsigned next = (threadIdx.x + 1) % blockDim.x;
  r[6] = dyn[next] == in[(blockIdx.x * blockDim.x + next) % n];
  r[7] = buf[(threadIdx.x + 1) % 25] < 1u << 20;
  for (int k = 0; k < 8; k++) out[8 * t + k] = r[k];
}
