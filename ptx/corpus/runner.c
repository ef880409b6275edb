/* Runs the instruction corpus on a real GPU through the driver API and records, per
 * kernel, the input and output words: ci/gpu-corpus.sh builds and runs it.
 *   runner MANIFEST PTXDIR OUTDIR
 * PTXDIR holds FILE.ptx for every FILE.cu of the manifest (nvcc -ptx -arch=compute_90 -O3).
 * Inputs are generated here, deterministically (the same generator as ptx/tests/corpus.rs
 * uses before a recording exists), and written out next to the outputs. Each kernel runs
 * in a process of its own (the driver initialised there, never before the fork): a GPU
 * error such as an illegal instruction poisons the whole process, not just its context. */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Bit patterns that find the edges: zeros, infinities, NaNs, subnormals, extremes. */
static const uint32_t SPECIAL[] = {
    0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7fa00001, 0x7fffffff,
    0x00000001, 0x807fffff, 0x00800000, 0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000, 0x3f000000,
    0x4f000000, 0xcf000000, 0x5f000000, 0x4b000001, 0x3fc00000, 0x40200000, 0xbfc00000, 0x477fe000,
    0x477ff000, 0x33800000, 0xffffffff, 0x0000001f, 0x00000020, 0x00000021, 0x0000003f, 0x00000040,
    0x7fffffff, 0x80000001, 0x0000ffff, 0x00008000, 0x000000ff, 0x00000080, 0x40490fdb, 0x3eaaaaab};

static uint32_t fnv1a(const char* s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

/* xorshift32, and one word in four from SPECIAL. */
static void generate(const char* kernel, uint32_t* w, int n) {
  uint32_t x = fnv1a(kernel) | 1;
  for (int i = 0; i < n; i++) {
    x ^= x << 13; x ^= x >> 17; x ^= x << 5;
    uint32_t r = x;
    x ^= x << 13; x ^= x >> 17; x ^= x << 5;
    w[i] = (r & 3) == 0 ? SPECIAL[x % (sizeof SPECIAL / sizeof SPECIAL[0])] : x;
  }
}

static void write_hex(const char* dir, const char* kernel, const char* what, const uint32_t* w, int n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.%s.hex", dir, kernel, what);
  FILE* f = fopen(path, "w");
  if (!f) { perror(path); exit(1); }
  for (int i = 0; i < n; i++) fprintf(f, "%08x%c", w[i], i % 8 == 7 || i == n - 1 ? '\n' : ' ');
  fclose(f);
}

static void write_error(const char* dir, const char* kernel, const char* step, CUresult r) {
  char path[4096];
  const char* name = "?";
  cuGetErrorName(r, &name);
  snprintf(path, sizeof path, "%s/%s.error", dir, kernel);
  FILE* f = fopen(path, "w");
  if (f) { fprintf(f, "%s: %s (%d)\n", step, name, (int)r); fclose(f); }
  fprintf(stderr, "%s: %s: %s\n", kernel, step, name);
}

static char* read_file(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* b = malloc(n + 1);
  if (fread(b, 1, n, f) != (size_t)n) { fclose(f); free(b); return NULL; }
  b[n] = 0;
  fclose(f);
  return b;
}

static void dims(const char* s, unsigned d[2]) {
  d[1] = 1;
  if (sscanf(s, "%u,%u", &d[0], &d[1]) < 1) { fprintf(stderr, "bad dims %s\n", s); exit(1); }
}

#define TRY(step, call) do { CUresult r_ = (call); if (r_ != CUDA_SUCCESS) { write_error(outdir, kernel, step, r_); goto done; } } while (0)

/* One manifest line's kernel, in the calling (child) process: 0 when it ran. */
static int run_kernel(const char* kernel, const char* file, unsigned grid[2], unsigned block[2],
                      unsigned shmem, int nin, int nout, const unsigned* cluster, const char* ptxdir,
                      const char* outdir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", ptxdir, file);
  char* dot = strrchr(path, '.');
  strcpy(dot, ".ptx");
  char* ptx = read_file(path);
  if (!ptx) { perror(path); return 1; }
  uint32_t* in = calloc(nin, 4);
  uint32_t* out = calloc(nout, 4);
  generate(kernel, in, nin);
  write_hex(outdir, kernel, "in", in, nin);
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod = NULL;
  CUfunction fn;
  CUdeviceptr din = 0, dout = 0;
  int failed = 1;
  TRY("cuInit", cuInit(0));
  TRY("cuDeviceGet", cuDeviceGet(&dev, 0));
  TRY("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&ctx, dev));
  TRY("cuCtxSetCurrent", cuCtxSetCurrent(ctx));
  TRY("cuModuleLoadData", cuModuleLoadData(&mod, ptx));
  TRY("cuModuleGetFunction", cuModuleGetFunction(&fn, mod, kernel));
  TRY("cuMemAlloc", cuMemAlloc(&din, (size_t)nin * 4));
  TRY("cuMemAlloc", cuMemAlloc(&dout, (size_t)nout * 4));
  TRY("cuMemcpyHtoD", cuMemcpyHtoD(din, in, (size_t)nin * 4));
  TRY("cuMemsetD32", cuMemsetD32(dout, 0, nout));
  {
    int n = nin;
    void* args[] = {&din, &dout, &n};
    if (cluster) {
      /* The manifest's cluster shape: cuLaunchKernelEx with the cluster attribute. */
      CUlaunchAttribute attr;
      memset(&attr, 0, sizeof attr);
      attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attr.value.clusterDim.x = cluster[0];
      attr.value.clusterDim.y = cluster[1];
      attr.value.clusterDim.z = 1;
      CUlaunchConfig c;
      memset(&c, 0, sizeof c);
      c.gridDimX = grid[0]; c.gridDimY = grid[1]; c.gridDimZ = 1;
      c.blockDimX = block[0]; c.blockDimY = block[1]; c.blockDimZ = 1;
      c.sharedMemBytes = shmem;
      c.attrs = &attr;
      c.numAttrs = 1;
      TRY("cuLaunchKernelEx", cuLaunchKernelEx(&c, fn, args, NULL));
    } else {
      TRY("cuLaunchKernel", cuLaunchKernel(fn, grid[0], grid[1], 1, block[0], block[1], 1, shmem, 0, args, NULL));
    }
  }
  TRY("cuCtxSynchronize", cuCtxSynchronize());
  TRY("cuMemcpyDtoH", cuMemcpyDtoH(out, dout, (size_t)nout * 4));
  write_hex(outdir, kernel, "out", out, nout);
  printf("%-24s ok\n", kernel);
  failed = 0;
done:
  fflush(stdout);
  free(in); free(out); free(ptx);
  return failed;
}

int main(int argc, char** argv) {
  if (argc != 4) { fprintf(stderr, "usage: %s MANIFEST PTXDIR OUTDIR\n", argv[0]); return 2; }
  const char *manifest = argv[1], *ptxdir = argv[2], *outdir = argv[3];
  FILE* m = fopen(manifest, "r");
  if (!m) { perror(manifest); return 1; }
  char line[1024];
  int failures = 0, count = 0;
  while (fgets(line, sizeof line, m)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    char kernel[256], file[256], grid_s[64], block_s[64], cmp[64], cluster_s[64];
    unsigned shmem; int nin, nout;
    int fields = sscanf(line, "%255s %255s %63s %63s %u %d %d %63s %63s", kernel, file, grid_s, block_s, &shmem, &nin, &nout, cmp, cluster_s);
    if (fields != 8 && fields != 9) {
      fprintf(stderr, "bad manifest line: %s", line);
      return 1;
    }
    unsigned grid[2], block[2], cluster[2];
    dims(grid_s, grid);
    dims(block_s, block);
    if (fields == 9) dims(cluster_s, cluster);
    count++;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 1; }
    if (pid == 0) _exit(run_kernel(kernel, file, grid, block, shmem, nin, nout, fields == 9 ? cluster : NULL, ptxdir, outdir));
    int status = 0;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      if (WIFSIGNALED(status)) fprintf(stderr, "%s: the process died of signal %d\n", kernel, WTERMSIG(status));
      failures++;
    }
  }
  fclose(m);
  printf("%d kernels, %d failed\n", count, failures);
  return failures ? 1 : 0;
}
