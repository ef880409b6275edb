/* Driver calls real programs use that the mock emulated late, second round: a context's
 * events (cuCtxRecordEvent, cuCtxWaitEvent: CUDA 12.5), the graph's batch memory-operation
 * nodes (cuGraphAddBatchMemOpNode, their getter and setters, cuGraphAddNode of type
 * BATCH_MEM_OP, stream memory operations in a stream capture), and a memory pool shared
 * with another process (cuMemPoolExportToShareableHandle with POSIX fds,
 * cuMemPoolImportFromShareableHandle, cuMemPoolExportPointer, cuMemPoolImportPointer, as
 * NVIDIA's streamOrderedAllocationIPC sample does: the section re-execs this program as
 * the importer and passes it the pool's fd over a Unix socket, SCM_RIGHTS). Each section
 * takes normal use and edge inputs (NULL out-parameters, bad handles, bad flags).
 *
 * Recorded on the H200 (clients/probes/goldens/NVIDIA_H200-580.159.04/api_gaps2.txt),
 * which settled what cuda.h leaves open, and the mock follows: cuCtxRecordEvent and
 * cuCtxWaitEvent take no NULL context (INVALID_CONTEXT); a batch node's context is named
 * (NULL: INVALID_VALUE) and a node of no operations is taken; only an allocation's own
 * address is exported; a pool imported into its own process is taken; a pointer
 * imported twice is the first import's pointer (so its second free is refused); an fd
 * of /dev/null is CUDA_ERROR_UNKNOWN, after which the pool variable holds nothing to
 * destroy (INVALID_VALUE).
 * No wait is left unsatisfied (it would hang the GPU's stream); no handle is used after
 * it is destroyed. No multicast API is called. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/socket.h>
#include <time.h>
#include "probe.h"

#define MiB (1024ull * 1024ull)

static const char *same(int yes) { return yes ? "yes" : "no"; }

/* A page of page-locked words the streams wait on and write (mapped for the device). */
static volatile unsigned *flags_page(void) {
    void *p = NULL;
    MUST(cuMemHostAlloc(&p, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
    memset(p, 0, 4096);
    return (volatile unsigned *)p;
}

static CUdeviceptr word(volatile unsigned *page, int i) {
    return (CUdeviceptr)(uintptr_t)(page + i);
}

static void settle(void) {
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

static void ctx_events(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    volatile unsigned *f = flags_page();
    CUstream a, b;
    MUST(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    MUST(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    CUevent e, e2;
    MUST(cuEventCreate(&e, 0));
    MUST(cuEventCreate(&e2, 0));

    CALL("record, nothing pending", cuCtxRecordEvent(ctx, e));
    CALL("query it", cuEventQuery(e));
    MUST(cuStreamWaitValue32(a, word(f, 0), 1, CU_STREAM_WAIT_VALUE_EQ));
    MUST(cuStreamWaitValue32(b, word(f, 1), 1, CU_STREAM_WAIT_VALUE_EQ));
    CALL("record, two streams waiting", cuCtxRecordEvent(ctx, e));
    settle();
    CALL("query while both wait", cuEventQuery(e));
    f[0] = 1;
    settle();
    CALL("query while b waits", cuEventQuery(e));
    f[1] = 1;
    CALL("synchronize it", cuEventSynchronize(e));
    CALL("record, NULL context", cuCtxRecordEvent(NULL, e2));
    CALL("query it", cuEventQuery(e2));
    float ms = -1;
    if (CALL("elapsed between them", cuEventElapsedTime(&ms, e, e2)) == CUDA_SUCCESS)
        SAY("elapsed >= 0: %s", same(ms >= 0));

    /* A wait: every stream of the context, and one made after it. */
    MUST(cuStreamWaitValue32(a, word(f, 2), 1, CU_STREAM_WAIT_VALUE_EQ));
    MUST(cuEventRecord(e, a));
    CALL("wait", cuCtxWaitEvent(ctx, e));
    CUstream c;
    MUST(cuStreamCreate(&c, CU_STREAM_NON_BLOCKING));
    MUST(cuStreamWriteValue32(b, word(f, 3), 7, 0));
    MUST(cuStreamWriteValue32(c, word(f, 4), 9, 0));
    settle();
    SAY("before the event: b wrote %u, the later stream wrote %u", f[3], f[4]);
    CALL("query b", cuStreamQuery(b));
    CALL("query the later stream", cuStreamQuery(c));
    f[2] = 1;
    CALL("synchronize b", cuStreamSynchronize(b));
    CALL("synchronize the later stream", cuStreamSynchronize(c));
    SAY("after: b wrote %u, the later stream wrote %u", f[3], f[4]);
    CALL("wait, NULL context", cuCtxWaitEvent(NULL, e));
    CALL("wait on a complete event", cuCtxWaitEvent(ctx, e));

    /* Edge inputs. */
    CALL("record, NULL event", cuCtxRecordEvent(ctx, NULL));
    CALL("wait, NULL event", cuCtxWaitEvent(ctx, NULL));
    CUcontext other;
    MUST(cuCtxCreate(&other, NULL, 0, 0));
    CUevent theirs;
    MUST(cuEventCreate(&theirs, 0));
    MUST(cuCtxSetCurrent(ctx));
    CALL("record an event of another context", cuCtxRecordEvent(ctx, theirs));
    CALL("record in the event's context", cuCtxRecordEvent(other, theirs));
    CALL("wait on an event of another context", cuCtxWaitEvent(ctx, theirs));
    CALL("synchronize the other context", cuCtxSynchronize_v2(other));
    MUST(cuEventDestroy(theirs));
    MUST(cuCtxDestroy(other));
    MUST(cuCtxSetCurrent(ctx));

    /* In a capture (relaxed mode: the capture itself is the question). */
    CUgraph gr = NULL;
    MUST(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_RELAXED));
    CALL("record during a capture", cuCtxRecordEvent(ctx, e));
    CALL("end that capture", cuStreamEndCapture(a, &gr));
    if (gr) cuGraphDestroy(gr);
    gr = NULL;
    MUST(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_RELAXED));
    MUST(cuEventRecord(e2, a));
    CALL("wait on an event recorded in a capture", cuCtxWaitEvent(ctx, e2));
    CALL("end that capture", cuStreamEndCapture(a, &gr));
    if (gr) cuGraphDestroy(gr);
    CALL("context synchronize", cuCtxSynchronize());
}

/* CUstreamBatchMemOpParams entries. */
static CUstreamBatchMemOpParams op_wait32(CUdeviceptr a, unsigned v, unsigned flags) {
    CUstreamBatchMemOpParams p;
    memset(&p, 0, sizeof p);
    p.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
    p.waitValue.address = a;
    p.waitValue.value = v;
    p.waitValue.flags = flags;
    return p;
}

static CUstreamBatchMemOpParams op_write32(CUdeviceptr a, unsigned v) {
    CUstreamBatchMemOpParams p;
    memset(&p, 0, sizeof p);
    p.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    p.writeValue.address = a;
    p.writeValue.value = v;
    return p;
}

static CUDA_BATCH_MEM_OP_NODE_PARAMS node_params(CUcontext ctx, CUstreamBatchMemOpParams *ops, unsigned n) {
    CUDA_BATCH_MEM_OP_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.ctx = ctx;
    p.count = n;
    p.paramArray = ops;
    return p;
}

static void show_node(const char *what, CUgraphNode n, CUcontext ctx) {
    CUDA_BATCH_MEM_OP_NODE_PARAMS got;
    memset(&got, 0, sizeof got);
    if (CALL(what, cuGraphBatchMemOpNodeGetParams(n, &got)) != CUDA_SUCCESS) return;
    SAY("ctx is the context: %s, count %u, flags %u", same(got.ctx == ctx), got.count, got.flags);
    for (unsigned i = 0; i < got.count && i < 4; i++)
        SAY("op %u: type %d value %u flags %u", i, (int)got.paramArray[i].operation,
            got.paramArray[i].waitValue.value, got.paramArray[i].waitValue.flags);
}

static void batch_mem_op_nodes(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    volatile unsigned *f = flags_page();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    CUgraphNode a = NULL, b = NULL;
    CUstreamBatchMemOpParams ops[2] = {op_wait32(word(f, 0), 1, CU_STREAM_WAIT_VALUE_EQ), op_write32(word(f, 1), 7)};
    CUDA_BATCH_MEM_OP_NODE_PARAMS p = node_params(ctx, ops, 2);
    CALL("add wait+write node", cuGraphAddBatchMemOpNode(&a, g, NULL, 0, &p));
    ops[1] = op_write32(word(f, 1), 99); /* the node keeps its own copy */
    CUstreamBatchMemOpParams one = op_write32(word(f, 2), 9);
    CUDA_BATCH_MEM_OP_NODE_PARAMS pn = node_params(NULL, &one, 1);
    CALL("add write node, NULL context, after it", cuGraphAddBatchMemOpNode(&b, g, &a, 1, &pn));
    CUgraphNodeType t = (CUgraphNodeType)-1;
    CALL("node type", cuGraphNodeGetType(a, &t));
    SAY("type %d", (int)t);
    show_node("get params", a, ctx);
    show_node("get params of the NULL-context node", b, ctx);
    CUgraphExec e;
    MUST(cuGraphInstantiate(&e, g, 0));
    CALL("launch", cuGraphLaunch(e, s));
    settle();
    CALL("query while the node waits", cuStreamQuery(s));
    SAY("before: %u %u", f[1], f[2]);
    f[0] = 1;
    CALL("synchronize", cuStreamSynchronize(s));
    SAY("after: %u %u", f[1], f[2]);

    CUstreamBatchMemOpParams ops2[2] = {op_wait32(word(f, 0), 2, CU_STREAM_WAIT_VALUE_EQ), op_write32(word(f, 3), 8)};
    CUDA_BATCH_MEM_OP_NODE_PARAMS p2 = node_params(ctx, ops2, 2);
    CALL("exec set: new address and values", cuGraphExecBatchMemOpNodeSetParams(e, a, &p2));
    CUDA_BATCH_MEM_OP_NODE_PARAMS p3 = node_params(ctx, ops2, 1);
    CALL("exec set: another count", cuGraphExecBatchMemOpNodeSetParams(e, a, &p3));
    CUstreamBatchMemOpParams swapped[2] = {op_write32(word(f, 3), 8), op_wait32(word(f, 0), 2, CU_STREAM_WAIT_VALUE_EQ)};
    CUDA_BATCH_MEM_OP_NODE_PARAMS p4 = node_params(ctx, swapped, 2);
    CALL("exec set: other types", cuGraphExecBatchMemOpNodeSetParams(e, a, &p4));
    CALL("launch again", cuGraphLaunch(e, s));
    settle();
    SAY("before: %u", f[3]);
    f[0] = 2;
    CALL("synchronize", cuStreamSynchronize(s));
    SAY("after: %u", f[3]);
    show_node("the graph's node after the exec set", a, ctx);
    CUDA_BATCH_MEM_OP_NODE_PARAMS p5 = node_params(ctx, &one, 1);
    CALL("node set: one operation", cuGraphBatchMemOpNodeSetParams(a, &p5));
    show_node("get params after it", a, ctx);

    /* cuGraphAddNode. */
    CUgraphNodeParams np;
    memset(&np, 0, sizeof np);
    np.type = CU_GRAPH_NODE_TYPE_BATCH_MEM_OP;
    CUstreamBatchMemOpParams w5 = op_write32(word(f, 5), 5);
    np.memOp.ctx = ctx;
    np.memOp.count = 1;
    np.memOp.paramArray = &w5;
    CUgraphNode c = NULL;
    CALL("add node of type BATCH_MEM_OP", cuGraphAddNode(&c, g, NULL, NULL, 0, &np));

    /* Edge inputs (nothing refused is launched). */
    CUgraphNode x = NULL;
    CALL("add, NULL params", cuGraphAddBatchMemOpNode(&x, g, NULL, 0, NULL));
    CUDA_BATCH_MEM_OP_NODE_PARAMS bad = node_params(ctx, &one, 1);
    bad.flags = 1;
    CALL("add, flags 1", cuGraphAddBatchMemOpNode(&x, g, NULL, 0, &bad));
    bad = node_params(ctx, &one, 0);
    CALL("add, count 0", cuGraphAddBatchMemOpNode(&x, g, NULL, 0, &bad));
    CUstreamBatchMemOpParams mis = op_write32(word(f, 0) + 1, 1);
    bad = node_params(ctx, &mis, 1);
    CALL("add, misaligned word", cuGraphAddBatchMemOpNode(&x, g, NULL, 0, &bad));
    CUstreamBatchMemOpParams flush = op_wait32(word(f, 0), 1, CU_STREAM_WAIT_VALUE_FLUSH);
    bad = node_params(ctx, &flush, 1);
    CALL("add, FLUSH wait", cuGraphAddBatchMemOpNode(&x, g, NULL, 0, &bad));
    CUstreamBatchMemOpParams junk;
    memset(&junk, 0, sizeof junk);
    junk.operation = (CUstreamBatchMemOpType)9;
    bad = node_params(ctx, &junk, 1);
    CALL("add, operation type 9", cuGraphAddBatchMemOpNode(&x, g, NULL, 0, &bad));
    CUgraphNode empty;
    MUST(cuGraphAddEmptyNode(&empty, g, NULL, 0));
    CUDA_BATCH_MEM_OP_NODE_PARAMS got;
    CALL("get params of an empty node", cuGraphBatchMemOpNodeGetParams(empty, &got));
    CALL("set params of an empty node", cuGraphBatchMemOpNodeSetParams(empty, &p5));
    MUST(cuGraphExecDestroy(e));
    MUST(cuGraphDestroy(g));

    /* Captured: each call a node. */
    MUST(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CALL("capture write", cuStreamWriteValue32(s, word(f, 6), 5, 0));
    CALL("capture wait", cuStreamWaitValue32(s, word(f, 7), 1, CU_STREAM_WAIT_VALUE_EQ));
    CUstreamBatchMemOpParams two[2] = {op_write32(word(f, 8), 6), op_write32(word(f, 9), 7)};
    CALL("capture batch of two", cuStreamBatchMemOp(s, 2, two, 0));
    CUgraph cg = NULL;
    CALL("end capture", cuStreamEndCapture(s, &cg));
    if (!cg) return;
    size_t n = 0;
    CALL("node count", cuGraphGetNodes(cg, NULL, &n));
    SAY("%zu nodes", n);
    CUgraphNode nodes[8];
    size_t m = 8;
    if (n <= 8 && cuGraphGetNodes(cg, nodes, &m) == CUDA_SUCCESS)
        for (size_t i = 0; i < m; i++) {
            CUgraphNodeType nt;
            cuGraphNodeGetType(nodes[i], &nt);
            SAY("node %zu type %d", i, (int)nt);
        }
    settle();
    SAY("captured, not run: %u", f[6]);
    CUgraphExec ce;
    MUST(cuGraphInstantiate(&ce, cg, 0));
    CALL("launch the capture", cuGraphLaunch(ce, s));
    settle();
    SAY("before the wait's word: %u %u %u", f[6], f[8], f[9]);
    f[7] = 1;
    CALL("synchronize", cuStreamSynchronize(s));
    SAY("after: %u %u %u", f[6], f[8], f[9]);
    /* Asked last: a NULL out-pointer may crash the real driver. */
    CALL("get params, NULL out", cuGraphBatchMemOpNodeGetParams(nodes[0], NULL));
}

/* ---- pool-ipc: the exporter here, the importer a re-exec'd child ---- */

static int send_fd(int sock, int fd, const void *data, size_t len) {
    struct iovec iov = {(void *)data, len};
    char ctl[CMSG_SPACE(sizeof(int))];
    memset(ctl, 0, sizeof ctl);
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctl;
    msg.msg_controllen = sizeof ctl;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    return sendmsg(sock, &msg, 0) == (ssize_t)len ? 0 : -1;
}

static int recv_fd(int sock, void *data, size_t len) {
    struct iovec iov = {data, len};
    char ctl[CMSG_SPACE(sizeof(int))];
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctl;
    msg.msg_controllen = sizeof ctl;
    if (recvmsg(sock, &msg, MSG_WAITALL) != (ssize_t)len) return -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (!c || c->cmsg_type != SCM_RIGHTS) return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return fd;
}

/* What the exporter sends with the pool's fd: two pointers' export data. */
struct shared {
    CUmemPoolPtrExportData small, large;
};

static int pool_child(int sock) {
    alarm(30);
    setvbuf(stdout, NULL, _IOLBF, 0);
    CUcontext ctx;
    CUresult r = cuInit(0);
    if (r == CUDA_SUCCESS) r = cuDevicePrimaryCtxRetain(&ctx, 0);
    if (r == CUDA_SUCCESS) r = cuCtxSetCurrent(ctx);
    if (r != CUDA_SUCCESS) { printf("  child: setup = %s\n", rname(r)); return 3; }
    struct shared sh;
    int fd = recv_fd(sock, &sh, sizeof sh);
    if (fd < 0) { printf("  child: no fd received\n"); return 4; }
    CUmemoryPool pool = NULL;
    if (CALL("  child: import pool", cuMemPoolImportFromShareableHandle(&pool, (void *)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) != CUDA_SUCCESS)
        return 0;
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    CUmemAccess_flags fl = (CUmemAccess_flags)99;
    CALL("  child: access before set", cuMemPoolGetAccess(&fl, pool, &loc));
    printf("    flags %d\n", (int)fl);
    CUmemAccessDesc d = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CALL("  child: set access", cuMemPoolSetAccess(pool, &d, 1));
    int again_fd = -1;
    CALL("  child: export the imported pool", cuMemPoolExportToShareableHandle(&again_fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    if (again_fd >= 0) close(again_fd);
    CUstream s;
    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
    CUdeviceptr fresh = 0;
    CALL("  child: allocate from the imported pool", cuMemAllocFromPoolAsync(&fresh, 4096, pool, s));
    CUdeviceptr small = 0, large = 0, again = 0;
    CALL("  child: import small", cuMemPoolImportPointer(&small, pool, &sh.small));
    CALL("  child: import large", cuMemPoolImportPointer(&large, pool, &sh.large));
    unsigned v[2] = {0, 0};
    if (small && cuMemcpyDtoH(v, small, sizeof v) == CUDA_SUCCESS)
        printf("    child reads small: 0x%08x 0x%08x\n", v[0], v[1]);
    if (large && cuMemcpyDtoH(v, large + 40 * MiB - 8, sizeof v) == CUDA_SUCCESS)
        printf("    child reads large's end: 0x%08x 0x%08x\n", v[0], v[1]);
    unsigned mine = 0xC0DE0001u;
    if (small) CALL("  child: write small", cuMemcpyHtoD(small + 4, &mine, sizeof mine));
    mine = 0xC0DE0002u;
    if (large) CALL("  child: write large", cuMemcpyHtoD(large + 40 * MiB - 4, &mine, sizeof mine));
    CALL("  child: import small again", cuMemPoolImportPointer(&again, pool, &sh.small));
    if (again) printf("    again is the first: %s\n", same(again == small));
    CUmemPoolPtrExportData junk;
    memset(&junk, 0x5a, sizeof junk);
    CUdeviceptr j = 0;
    CALL("  child: import junk data", cuMemPoolImportPointer(&j, pool, &junk));
    int null_fd = open("/dev/null", O_RDONLY);
    CALL("  child: import pool, fd of /dev/null", cuMemPoolImportFromShareableHandle(&pool, (void *)(uintptr_t)null_fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    close(null_fd);
    if (again) CALL("  child: free again", cuMemFree(again));
    if (small) CALL("  child: free small", cuMemFree(small));
    if (large) CALL("  child: free large async", cuMemFreeAsync(large, s));
    CALL("  child: synchronize", cuStreamSynchronize(s));
    CALL("  child: destroy the imported pool", cuMemPoolDestroy(pool));
    close(fd);
    char done = 1;
    if (write(sock, &done, 1) != 1) return 5;
    return 0;
}

static void pool_ipc(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    CUmemoryPool pool, plain;
    MUST(cuMemPoolCreate(&pool, &props));
    props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    MUST(cuMemPoolCreate(&plain, &props));
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr small, large, other;
    MUST(cuMemAllocFromPoolAsync(&small, 1000, pool, s));
    MUST(cuMemAllocFromPoolAsync(&large, 40 * MiB, pool, s));
    MUST(cuMemAllocFromPoolAsync(&other, 4096, plain, s));
    MUST(cuMemsetD32Async(small, 0xab0000a1u, 1000 / 4, s));
    MUST(cuMemsetD32Async(large, 0xab0000a2u, 40 * MiB / 4, s));
    MUST(cuStreamSynchronize(s));
    int fd = -1;
    CALL("export pool", cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    struct shared sh;
    memset(&sh, 0, sizeof sh);
    CALL("export small", cuMemPoolExportPointer(&sh.small, small));
    CALL("export large", cuMemPoolExportPointer(&sh.large, large));
    CUmemPoolPtrExportData x;
    CALL("export from a pool without handle types", cuMemPoolExportPointer(&x, other));
    CALL("export an interior pointer", cuMemPoolExportPointer(&x, small + 512));
    CUdeviceptr m;
    MUST(cuMemAlloc(&m, 4096));
    CALL("export cuMemAlloc memory", cuMemPoolExportPointer(&x, m));
    CUmemoryPool self = NULL;
    CALL("import the pool in its own process", cuMemPoolImportFromShareableHandle(&self, (void *)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    if (self) cuMemPoolDestroy(self);
    CALL("export pool, flags 1", cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 1));

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) { SAY("socketpair failed"); return; }
    char arg[16];
    snprintf(arg, sizeof arg, "%d", sv[1]);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        execl("/proc/self/exe", "api_gaps2", "pool-child", arg, (char *)NULL);
        printf("  child: exec failed\n");
        fflush(stdout);
        _exit(127);
    }
    close(sv[1]);
    if (pid < 0) { SAY("fork failed"); return; }
    if (send_fd(sv[0], fd, &sh, sizeof sh) != 0) SAY("sending the fd failed");
    char done = 0;
    if (read(sv[0], &done, 1) != 1) SAY("the child said nothing");
    int st = 0;
    waitpid(pid, &st, 0);
    SAY("child: exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    unsigned v[2] = {0, 0};
    if (cuMemcpyDtoH(v, small, sizeof v) == CUDA_SUCCESS) SAY("parent reads small: 0x%08x 0x%08x", v[0], v[1]);
    if (cuMemcpyDtoH(v, large + 40 * MiB - 8, sizeof v) == CUDA_SUCCESS) SAY("parent reads large's end: 0x%08x 0x%08x", v[0], v[1]);
    close(sv[0]);
    close(fd);
    CALL("free small", cuMemFreeAsync(small, s));
    CALL("free large", cuMemFreeAsync(large, s));
    CALL("free other", cuMemFreeAsync(other, s));
    CALL("synchronize", cuStreamSynchronize(s));
    CALL("destroy pool", cuMemPoolDestroy(pool));
    CALL("destroy plain pool", cuMemPoolDestroy(plain));
    /* Asked last: a NULL out-pointer may crash the real driver. */
    CALL("export pointer, NULL out", cuMemPoolExportPointer(NULL, m));
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "pool-child") == 0) return pool_child(atoi(argv[2]));
    setvbuf(stdout, NULL, _IOLBF, 0);
    section("ctx-events", ctx_events);
    section("batch-mem-op-nodes", batch_mem_op_nodes);
    section("pool-ipc", pool_ipc);
    return 0;
}
