/* What the legacy stream's capture state answers while the calling thread's per-thread
 * default stream captures. The H200 (runs/2026-12-03-h200-session18/x/): STREAM_CAPTURE_IMPLICIT
 * with the status left unwritten, as with a blocking created stream capturing; the mock
 * the same (mock-driver/tests/graph_rules.rs). Prints one line a call.
 *
 *   gcc -I$CUDA_INCLUDE ci/explore/legacy_query_ptsz.c -lcuda -o legacy_query_ptsz
 */
#include <cuda.h>
#include <stdio.h>

static const char *name(CUresult r) {
    const char *s = NULL;
    cuGetErrorName(r, &s);
    return s ? s : "?";
}

int main(void) {
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) return 1;
    CUstreamCaptureStatus st = (CUstreamCaptureStatus)9;
    printf("begin(per-thread) = %s\n", name(cuStreamBeginCapture(CU_STREAM_PER_THREAD, CU_STREAM_CAPTURE_MODE_RELAXED)));
    CUresult r = cuStreamIsCapturing(CU_STREAM_LEGACY, &st);
    printf("is-capturing(legacy) = %s status=%d\n", name(r), (int)st);
    st = (CUstreamCaptureStatus)9;
    r = cuStreamIsCapturing(CU_STREAM_PER_THREAD, &st);
    printf("is-capturing(per-thread) = %s status=%d\n", name(r), (int)st);
    CUgraph g = NULL;
    /* Ended before the print: an argument list's order of evaluation is unspecified (gcc
     * read `g` before the call, printing "null" for the graph the call then wrote). */
    r = cuStreamEndCapture(CU_STREAM_PER_THREAD, &g);
    printf("end(per-thread) = %s graph=%s\n", name(r), g ? "set" : "null");
    if (g) cuGraphDestroy(g);
    return 0;
}
