// corpus-arch: compute_90a
// In a file of its own: a module the H200's driver refused would take no other kernel
// with it.
// setmaxnreg (sm_90a): a warpgroup gives registers back and takes them again; nothing to
// observe but that every thread goes on (the executor checks the warpgroup is whole and
// converged).
extern "C" __global__ void __launch_bounds__(128, 1) setmaxnreg_warpgroup(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned v = t < n ? in[t] : 0;
  asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
  v = v * 3 + 1;
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
  out[t] = v ^ 0x5a5a5a5a;
}
