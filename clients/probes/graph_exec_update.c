/* Changing an instantiated graph (cuda.h's per-node exec setters, cuGraphNodeSetEnabled,
 * cuGraphExecNodeSetParams, cuGraphExecUpdate): what each setter accepts and refuses for
 * every node type the mock builds (kernel, memcpy, memset, host, event record and wait,
 * child graph, empty, memory nodes), what cuda.h documents only as "may be rejected"
 * (a 1D memset's width and element size), which CUgraphExecUpdateResult and error nodes
 * cuGraphExecUpdate reports for each kind of change, and that a launch after a setter
 * runs the new work; cuGraphUpload, cuGraphExecGetFlags, cuGraphNodeFindInClone and
 * cuGraphDestroyNode. Kernels are PTX text (cuModuleLoadData, no nvcc). Written for issue
 * 20; recorded on the H200 (ci/gpu-probes.sh), every section. No multicast API is
 * called. */
#include "probe.h"
#include <pthread.h>

static const char *ptx =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    /* add(p, v): *p += v */
    ".visible .entry add(.param .u64 p, .param .u32 v)\n"
    "{\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<2>;\n"
    "  ld.param.u64 %rd1, [p];\n"
    "  ld.param.u32 %r1, [v];\n"
    "  ld.global.u32 %r2, [%rd1];\n"
    "  add.u32 %r3, %r2, %r1;\n"
    "  st.global.u32 [%rd1], %r3;\n"
    "  ret;\n"
    "}\n"
    /* ranks(p): p[blockIdx.x] = the number of blocks in the block's cluster */
    ".visible .entry ranks(.param .u64 p)\n"
    "{\n"
    "  .reg .b32 %r<3>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [p];\n"
    "  mov.u32 %r1, %ctaid.x;\n"
    "  mov.u32 %r2, %cluster_nctarank;\n"
    "  mul.wide.u32 %rd2, %r1, 4;\n"
    "  add.s64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r2;\n"
    "  ret;\n"
    "}\n";

static CUcontext ctx;
static CUmodule mod;
static CUfunction addk;
static CUdeviceptr da, db;
static CUstream s;

static void setup(void) {
    init_primary(0, &ctx);
    MUST(cuModuleLoadData(&mod, ptx));
    MUST(cuModuleGetFunction(&addk, mod, "add"));
    MUST(cuMemAlloc(&da, 4096));
    MUST(cuMemAlloc(&db, 4096));
    MUST(cuMemsetD8(da, 0, 4096));
    MUST(cuMemsetD8(db, 0, 4096));
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
}

static CUDA_KERNEL_NODE_PARAMS kparams(CUfunction f, void **args) {
    CUDA_KERNEL_NODE_PARAMS k;
    memset(&k, 0, sizeof k);
    k.func = f;
    k.gridDimX = k.gridDimY = k.gridDimZ = 1;
    k.blockDimX = k.blockDimY = k.blockDimZ = 1;
    k.kernelParams = args;
    return k;
}

static CUDA_MEMCPY3D copy1d(CUmemorytype st, const void *sh, CUdeviceptr sd, CUmemorytype dt, void *dh, CUdeviceptr dd, size_t n) {
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = st;
    c.srcHost = sh;
    c.srcDevice = sd;
    c.dstMemoryType = dt;
    c.dstHost = dh;
    c.dstDevice = dd;
    c.WidthInBytes = n;
    c.Height = 1;
    c.Depth = 1;
    return c;
}

static CUDA_MEMSET_NODE_PARAMS fill(CUdeviceptr dst, unsigned v, unsigned size, size_t w, size_t h, size_t pitch) {
    CUDA_MEMSET_NODE_PARAMS m;
    memset(&m, 0, sizeof m);
    m.dst = dst;
    m.value = v;
    m.elementSize = size;
    m.width = w;
    m.height = h;
    m.pitch = pitch;
    return m;
}

static unsigned word(CUdeviceptr p) {
    unsigned v = 0xdeadbeef;
    MUST(cuMemcpyDtoH(&v, p, 4));
    return v;
}

static void run(CUgraphExec e, const char *what) {
    CUresult r = cuGraphLaunch(e, s);
    if (r == CUDA_SUCCESS) r = cuStreamSynchronize(s);
    printf("%s: launch and synchronize = %s\n", what, rname(r));
    fflush(stdout);
}

static void host_fn(void *p) { (*(int *)p)++; }

/* The executable graph's kernel node: other arguments, another function's context. */
static void kernel_setters(void) {
    setup();
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    unsigned one = 1, ten = 10;
    void *args[] = {&da, &one};
    CUDA_KERNEL_NODE_PARAMS k = kparams(addk, args);
    CUgraphNode n, empty;
    MUST(cuGraphAddKernelNode(&n, g, NULL, 0, &k));
    MUST(cuGraphAddEmptyNode(&empty, g, NULL, 0));
    CUgraphExec e;
    MUST(cuGraphInstantiateWithFlags(&e, g, 0));
    void *args10[] = {&db, &ten};
    CUDA_KERNEL_NODE_PARAMS k10 = kparams(addk, args10);
    CALL("another pointer and value", cuGraphExecKernelNodeSetParams(e, n, &k10));
    run(e, "after it");
    SAY("first word %u, second %u", word(da), word(db));
    CALL("on the empty node", cuGraphExecKernelNodeSetParams(e, empty, &k10));
    CUcontext other;
    if (CALL("create a second context", cuCtxCreate(&other, NULL, 0, 0)) != CUDA_SUCCESS) return;
    CUmodule m2;
    CUfunction add2;
    MUST(cuModuleLoadData(&m2, ptx));
    MUST(cuModuleGetFunction(&add2, m2, "add"));
    MUST(cuCtxSetCurrent(ctx));
    CUDA_KERNEL_NODE_PARAMS k2 = kparams(add2, args10);
    CALL("a function of the second context", cuGraphExecKernelNodeSetParams(e, n, &k2));
    CUgraph g2;
    MUST(cuGraphClone(&g2, g));
    size_t count = 2;
    CUgraphNode cloned[2];
    MUST(cuGraphGetNodes(g2, cloned, &count));
    MUST(cuGraphKernelNodeSetParams(cloned[0], &k2));
    CUgraphExecUpdateResultInfo info;
    FILL(info);
    CALL("update to a graph whose kernel is of the second context", cuGraphExecUpdate(e, g2, &info));
    SAY("result %d, error node is the clone's kernel: %s, from node %s", (int)info.result,
        info.errorNode == cloned[0] ? "yes" : "no", info.errorFromNode ? "set" : "NULL");
}

/* Memcpy nodes: addresses, memory types, dimensions, zero bytes. */
static void memcpy_setters(void) {
    setup();
    unsigned src = 1234;
    MUST(cuMemcpyHtoD(da, &src, 4));
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    CUDA_MEMCPY3D c = copy1d(CU_MEMORYTYPE_DEVICE, NULL, da, CU_MEMORYTYPE_DEVICE, NULL, db, 4);
    CUgraphNode n, m;
    MUST(cuGraphAddMemcpyNode(&n, g, NULL, 0, &c, ctx));
    CUDA_MEMSET_NODE_PARAMS f = fill(da, 0, 4, 1, 1, 0);
    MUST(cuGraphAddMemsetNode(&m, g, NULL, 0, &f, ctx));
    CUgraphExec e;
    MUST(cuGraphInstantiateWithFlags(&e, g, 0));
    CUDA_MEMCPY3D c2 = copy1d(CU_MEMORYTYPE_DEVICE, NULL, da + 256, CU_MEMORYTYPE_DEVICE, NULL, db + 256, 8);
    unsigned v = 99;
    MUST(cuMemcpyHtoD(da + 256, &v, 4));
    CALL("other device addresses and length", cuGraphExecMemcpyNodeSetParams(e, n, &c2, ctx));
    run(e, "after it");
    SAY("copied %u", word(db + 256));
    CUDA_MEMCPY3D cu = copy1d(CU_MEMORYTYPE_UNIFIED, NULL, da, CU_MEMORYTYPE_UNIFIED, NULL, db, 4);
    CALL("the same device memory as UNIFIED", cuGraphExecMemcpyNodeSetParams(e, n, &cu, ctx));
    unsigned host = 0;
    CUDA_MEMCPY3D ch = copy1d(CU_MEMORYTYPE_DEVICE, NULL, da, CU_MEMORYTYPE_HOST, &host, 0, 4);
    CALL("a host destination", cuGraphExecMemcpyNodeSetParams(e, n, &ch, ctx));
    void *pinned;
    MUST(cuMemHostAlloc(&pinned, 4096, 0));
    CUDA_MEMCPY3D cp = copy1d(CU_MEMORYTYPE_HOST, pinned, 0, CU_MEMORYTYPE_DEVICE, NULL, db, 4);
    CALL("a page-locked source", cuGraphExecMemcpyNodeSetParams(e, n, &cp, ctx));
    CUDA_MEMCPY3D c0 = copy1d(CU_MEMORYTYPE_DEVICE, NULL, da, CU_MEMORYTYPE_DEVICE, NULL, db, 0);
    CALL("zero bytes", cuGraphExecMemcpyNodeSetParams(e, n, &c0, ctx));
    CUDA_MEMCPY3D c2d = copy1d(CU_MEMORYTYPE_DEVICE, NULL, da, CU_MEMORYTYPE_DEVICE, NULL, db, 16);
    c2d.Height = 2;
    c2d.srcPitch = c2d.dstPitch = 64;
    CALL("two rows", cuGraphExecMemcpyNodeSetParams(e, n, &c2d, ctx));
    CALL("on the memset node", cuGraphExecMemcpyNodeSetParams(e, m, &c2, ctx));
    CALL("NULL params", cuGraphExecMemcpyNodeSetParams(e, n, NULL, ctx));
    run(e, "after the refusals");
}

/* Memset nodes: value and address, then each dimension, 1D and 2D. */
static void memset_setters(void) {
    setup();
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    CUgraphNode n1, n2;
    CUDA_MEMSET_NODE_PARAMS f1 = fill(da, 7, 4, 16, 1, 0);
    MUST(cuGraphAddMemsetNode(&n1, g, NULL, 0, &f1, ctx));
    CUDA_MEMSET_NODE_PARAMS f2 = fill(db, 1, 1, 8, 4, 64);
    MUST(cuGraphAddMemsetNode(&n2, g, NULL, 0, &f2, ctx));
    CUgraphExec e;
    MUST(cuGraphInstantiateWithFlags(&e, g, 0));
    CUDA_MEMSET_NODE_PARAMS v = fill(da + 512, 42, 4, 16, 1, 0);
    CALL("1D: another address and value", cuGraphExecMemsetNodeSetParams(e, n1, &v, ctx));
    run(e, "after it");
    SAY("filled %u", word(da + 512));
    v = fill(da, 42, 4, 8, 1, 0);
    CALL("1D: a narrower width", cuGraphExecMemsetNodeSetParams(e, n1, &v, ctx));
    v = fill(da, 42, 4, 64, 1, 0);
    CALL("1D: a wider width", cuGraphExecMemsetNodeSetParams(e, n1, &v, ctx));
    v = fill(da, 42, 2, 16, 1, 0);
    CALL("1D: 2-byte elements", cuGraphExecMemsetNodeSetParams(e, n1, &v, ctx));
    v = fill(da, 42, 4, 16, 2, 64);
    CALL("1D: two rows", cuGraphExecMemsetNodeSetParams(e, n1, &v, ctx));
    v = fill(da, 42, 4, 0, 1, 0);
    CALL("1D: zero width", cuGraphExecMemsetNodeSetParams(e, n1, &v, ctx));
    void *pinned;
    MUST(cuMemHostAlloc(&pinned, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
    CUdeviceptr mapped;
    MUST(cuMemHostGetDevicePointer(&mapped, pinned, 0));
    v = fill(mapped, 42, 4, 16, 1, 0);
    CALL("1D: mapped page-locked memory", cuGraphExecMemsetNodeSetParams(e, n1, &v, ctx));
    v = fill(db + 1024, 5, 1, 8, 4, 64);
    CALL("2D: another address and value", cuGraphExecMemsetNodeSetParams(e, n2, &v, ctx));
    v = fill(db, 5, 1, 4, 4, 64);
    CALL("2D: another width", cuGraphExecMemsetNodeSetParams(e, n2, &v, ctx));
    v = fill(db, 5, 1, 8, 2, 64);
    CALL("2D: another height", cuGraphExecMemsetNodeSetParams(e, n2, &v, ctx));
    v = fill(db, 5, 1, 8, 4, 128);
    CALL("2D: another pitch", cuGraphExecMemsetNodeSetParams(e, n2, &v, ctx));
    run(e, "after the refusals");
    SAY("2D filled %u", word(db + 1024) & 0xff);
}

/* Host nodes, event record and wait nodes. */
static void host_and_event_setters(void) {
    setup();
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    static int calls_a, calls_b;
    CUDA_HOST_NODE_PARAMS h = {host_fn, &calls_a};
    CUgraphNode hn, rec, wait;
    MUST(cuGraphAddHostNode(&hn, g, NULL, 0, &h));
    CUevent a, b, c;
    MUST(cuEventCreate(&a, 0));
    MUST(cuEventCreate(&b, 0));
    MUST(cuEventCreate(&c, 0));
    MUST(cuGraphAddEventRecordNode(&rec, g, &hn, 1, a));
    MUST(cuGraphAddEventWaitNode(&wait, g, NULL, 0, c));
    CUgraphExec e;
    MUST(cuGraphInstantiateWithFlags(&e, g, 0));
    CUDA_HOST_NODE_PARAMS h2 = {host_fn, &calls_b};
    CALL("host: another function's data", cuGraphExecHostNodeSetParams(e, hn, &h2));
    CALL("record: another event", cuGraphExecEventRecordNodeSetEvent(e, rec, b));
    CALL("wait: another event", cuGraphExecEventWaitNodeSetEvent(e, wait, b));
    CALL("record: on the wait node", cuGraphExecEventRecordNodeSetEvent(e, wait, a));
    CALL("wait: on the record node", cuGraphExecEventWaitNodeSetEvent(e, rec, a));
    CALL("record: on the host node", cuGraphExecEventRecordNodeSetEvent(e, hn, a));
    CALL("host: on the record node", cuGraphExecHostNodeSetParams(e, rec, &h2));
    CALL("record: a NULL event", cuGraphExecEventRecordNodeSetEvent(e, rec, NULL));
    CUevent start;
    MUST(cuEventCreate(&start, 0));
    MUST(cuEventRecord(start, s));
    run(e, "after them");
    SAY("host calls: first data %d, second %d", calls_a, calls_b);
    float ms;
    CALL("elapsed to the new event", cuEventElapsedTime(&ms, start, b));
    CALL("elapsed to the old event", cuEventElapsedTime(&ms, start, a));
    CUevent got = NULL;
    CALL("the graph's record node still names", cuGraphEventRecordNodeGetEvent(rec, &got));
    SAY("its first event: %s", got == a ? "yes" : "no");
    CALL("record node (graph): set another event", cuGraphEventRecordNodeSetEvent(rec, c));
    CALL("wait node (graph): set another event", cuGraphEventWaitNodeSetEvent(wait, a));
    CALL("record node (graph): on the wait node", cuGraphEventRecordNodeSetEvent(wait, a));
    MUST(cuGraphEventRecordNodeGetEvent(rec, &got));
    SAY("now names the third: %s", got == c ? "yes" : "no");
}

/* Child graph nodes: the same topology with other parameters, another topology. */
static void child_setters(void) {
    setup();
    CUgraph child, g;
    MUST(cuGraphCreate(&child, 0));
    CUgraphNode cm, ck;
    CUDA_MEMSET_NODE_PARAMS f = fill(da, 3, 4, 1, 1, 0);
    MUST(cuGraphAddMemsetNode(&cm, child, NULL, 0, &f, ctx));
    unsigned one = 1;
    void *args[] = {&da, &one};
    CUDA_KERNEL_NODE_PARAMS k = kparams(addk, args);
    MUST(cuGraphAddKernelNode(&ck, child, &cm, 1, &k));
    MUST(cuGraphCreate(&g, 0));
    CUgraphNode cn, en;
    MUST(cuGraphAddChildGraphNode(&cn, g, NULL, 0, child));
    MUST(cuGraphAddEmptyNode(&en, g, &cn, 1));
    CUgraphExec e;
    MUST(cuGraphInstantiateWithFlags(&e, g, 0));
    run(e, "first");
    SAY("word %u", word(da));
    /* The same topology, other parameters. */
    CUgraph same;
    MUST(cuGraphClone(&same, child));
    size_t count = 2;
    CUgraphNode sn[2];
    MUST(cuGraphGetNodes(same, sn, &count));
    CUDA_MEMSET_NODE_PARAMS f2 = fill(db, 30, 4, 1, 1, 0);
    MUST(cuGraphMemsetNodeSetParams(sn[0], &f2));
    unsigned ten = 10;
    void *args2[] = {&db, &ten};
    CUDA_KERNEL_NODE_PARAMS k2 = kparams(addk, args2);
    MUST(cuGraphKernelNodeSetParams(sn[1], &k2));
    CALL("a graph of the same topology", cuGraphExecChildGraphNodeSetParams(e, cn, same));
    run(e, "after it");
    SAY("first word %u, second %u", word(da), word(db));
    /* Another topology: a node more, no edge, another type. */
    CUgraph more, loose, other;
    MUST(cuGraphClone(&more, child));
    CUgraphNode x;
    MUST(cuGraphAddEmptyNode(&x, more, NULL, 0));
    CALL("a node more", cuGraphExecChildGraphNodeSetParams(e, cn, more));
    MUST(cuGraphCreate(&loose, 0));
    MUST(cuGraphAddMemsetNode(&x, loose, NULL, 0, &f, ctx));
    MUST(cuGraphAddKernelNode(&x, loose, NULL, 0, &k));
    CALL("the edge missing", cuGraphExecChildGraphNodeSetParams(e, cn, loose));
    MUST(cuGraphCreate(&other, 0));
    MUST(cuGraphAddEmptyNode(&x, other, NULL, 0));
    MUST(cuGraphAddKernelNode(&x, other, NULL, 0, &k));
    CALL("another node type", cuGraphExecChildGraphNodeSetParams(e, cn, other));
    CALL("on the empty node", cuGraphExecChildGraphNodeSetParams(e, en, same));
    CALL("a NULL graph", cuGraphExecChildGraphNodeSetParams(e, cn, NULL));
    run(e, "after the refusals");
    SAY("second word %u", word(db));
}

/* cuGraphNodeSetEnabled / GetEnabled on each node type. */
static void enable(void) {
    setup();
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    unsigned one = 1;
    void *args[] = {&da, &one};
    CUDA_KERNEL_NODE_PARAMS k = kparams(addk, args);
    static int calls;
    CUDA_HOST_NODE_PARAMS h = {host_fn, &calls};
    CUgraphNode kn, mn, cn, hn, en, rn;
    MUST(cuGraphAddKernelNode(&kn, g, NULL, 0, &k));
    CUDA_MEMSET_NODE_PARAMS f = fill(db, 9, 4, 1, 1, 0);
    MUST(cuGraphAddMemsetNode(&mn, g, NULL, 0, &f, ctx));
    CUDA_MEMCPY3D c = copy1d(CU_MEMORYTYPE_DEVICE, NULL, db, CU_MEMORYTYPE_DEVICE, NULL, db + 64, 4);
    MUST(cuGraphAddMemcpyNode(&cn, g, &mn, 1, &c, ctx));
    MUST(cuGraphAddHostNode(&hn, g, NULL, 0, &h));
    MUST(cuGraphAddEmptyNode(&en, g, NULL, 0));
    CUevent ev;
    MUST(cuEventCreate(&ev, 0));
    MUST(cuGraphAddEventRecordNode(&rn, g, NULL, 0, ev));
    CUgraphExec e;
    MUST(cuGraphInstantiateWithFlags(&e, g, 0));
    unsigned on = 7;
    CALL("kernel: is it enabled", cuGraphNodeGetEnabled(e, kn, &on));
    SAY("enabled = %u", on);
    CALL("kernel: disable", cuGraphNodeSetEnabled(e, kn, 0));
    CALL("memset: disable", cuGraphNodeSetEnabled(e, mn, 0));
    CALL("memcpy: disable", cuGraphNodeSetEnabled(e, cn, 0));
    on = 7;
    CALL("kernel: is it enabled", cuGraphNodeGetEnabled(e, kn, &on));
    SAY("enabled = %u", on);
    run(e, "disabled");
    SAY("kernel's word %u, memset's %u, copy's %u, host calls %d", word(da), word(db), word(db + 64), calls);
    CALL("kernel: enable with 2", cuGraphNodeSetEnabled(e, kn, 2));
    on = 7;
    CALL("kernel: is it enabled", cuGraphNodeGetEnabled(e, kn, &on));
    SAY("enabled = %u", on);
    run(e, "the kernel enabled again");
    SAY("kernel's word %u, memset's %u", word(da), word(db));
    CALL("host: disable", cuGraphNodeSetEnabled(e, hn, 0));
    CALL("empty: disable", cuGraphNodeSetEnabled(e, en, 0));
    CALL("event record: disable", cuGraphNodeSetEnabled(e, rn, 0));
    on = 7;
    CALL("host: is it enabled", cuGraphNodeGetEnabled(e, hn, &on));
    OUT(on);
    CALL("kernel: into NULL", cuGraphNodeGetEnabled(e, kn, NULL));
    CUgraph other;
    CUgraphNode stranger;
    MUST(cuGraphCreate(&other, 0));
    MUST(cuGraphAddKernelNode(&stranger, other, NULL, 0, &k));
    CALL("a kernel node of another graph", cuGraphNodeSetEnabled(e, stranger, 0));
    /* A disabled node stays disabled across setters. */
    MUST(cuGraphNodeSetEnabled(e, kn, 0));
    unsigned five = 5;
    void *args5[] = {&da, &five};
    CUDA_KERNEL_NODE_PARAMS k5 = kparams(addk, args5);
    CALL("set the disabled kernel's params", cuGraphExecKernelNodeSetParams(e, kn, &k5));
    on = 7;
    MUST(cuGraphNodeGetEnabled(e, kn, &on));
    SAY("enabled = %u", on);
    MUST(cuGraphNodeSetEnabled(e, kn, 1));
    run(e, "enabled with the new params");
    SAY("kernel's word %u", word(da));
}

/* cuGraphExecNodeSetParams and cuGraphNodeSetParams for each node type. */
static void generic_setters(void) {
    setup();
    CUgraph child, g;
    MUST(cuGraphCreate(&child, 0));
    CUgraphNode x;
    MUST(cuGraphAddEmptyNode(&x, child, NULL, 0));
    MUST(cuGraphCreate(&g, 0));
    CUevent a, b;
    MUST(cuEventCreate(&a, 0));
    MUST(cuEventCreate(&b, 0));
    CUgraphNode rec, wait, cn, en;
    MUST(cuGraphAddEventRecordNode(&rec, g, NULL, 0, a));
    MUST(cuGraphAddEventWaitNode(&wait, g, NULL, 0, a));
    MUST(cuGraphAddChildGraphNode(&cn, g, NULL, 0, child));
    MUST(cuGraphAddEmptyNode(&en, g, NULL, 0));
    CUgraphExec e;
    MUST(cuGraphInstantiateWithFlags(&e, g, 0));
    CUgraphNodeParams p;
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD;
    p.eventRecord.event = b;
    CALL("exec: event record", cuGraphExecNodeSetParams(e, rec, &p));
    CALL("exec: event record params on the wait node", cuGraphExecNodeSetParams(e, wait, &p));
    CALL("graph: event record", cuGraphNodeSetParams(rec, &p));
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT;
    p.eventWait.event = b;
    CALL("exec: event wait", cuGraphExecNodeSetParams(e, wait, &p));
    CALL("graph: event wait", cuGraphNodeSetParams(wait, &p));
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_GRAPH;
    p.graph.graph = child;
    CALL("exec: child graph, the same graph", cuGraphExecNodeSetParams(e, cn, &p));
    CUgraph bigger;
    MUST(cuGraphClone(&bigger, child));
    MUST(cuGraphAddEmptyNode(&x, bigger, NULL, 0));
    p.graph.graph = bigger;
    CALL("exec: child graph, a node more", cuGraphExecNodeSetParams(e, cn, &p));
    CALL("graph: child graph, a node more", cuGraphNodeSetParams(cn, &p));
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_EMPTY;
    CALL("exec: empty", cuGraphExecNodeSetParams(e, en, &p));
    CALL("graph: empty", cuGraphNodeSetParams(en, &p));
    run(e, "after them");
    /* Memory nodes: cuda.h says the API is unsupported for them. */
    CUgraph mg;
    MUST(cuGraphCreate(&mg, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS ap;
    memset(&ap, 0, sizeof ap);
    ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    ap.bytesize = 1 << 20;
    CUgraphNode an, fn;
    MUST(cuGraphAddMemAllocNode(&an, mg, NULL, 0, &ap));
    MUST(cuGraphAddMemFreeNode(&fn, mg, &an, 1, ap.dptr));
    CUgraphExec me;
    MUST(cuGraphInstantiateWithFlags(&me, mg, 0));
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
    p.free.dptr = ap.dptr;
    CALL("exec: memory free", cuGraphExecNodeSetParams(me, fn, &p));
    CALL("graph: memory free", cuGraphNodeSetParams(fn, &p));
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
    p.alloc.poolProps = ap.poolProps;
    p.alloc.bytesize = 1 << 20;
    CALL("exec: memory allocation", cuGraphExecNodeSetParams(me, an, &p));
    CALL("graph: memory allocation", cuGraphNodeSetParams(an, &p));
}

/* cuGraphExecUpdate: the result and error nodes for each kind of change. */
static void report(CUgraphExec e, CUgraph g, const char *what, CUgraphNode want, CUgraphNode want_from) {
    CUgraphExecUpdateResultInfo info;
    FILL(info);
    CUresult r = cuGraphExecUpdate(e, g, &info);
    printf("%s = %s\n", what, rname(r));
    printf("  result %d, error node %s, from node %s\n", (int)info.result,
           info.errorNode == NULL ? "NULL" : info.errorNode == want ? "the changed node" : "another",
           info.errorFromNode == NULL ? "NULL" : info.errorFromNode == want_from ? "the changed dependency" : "another");
    fflush(stdout);
}

/* A graph: memset(da) -> kernel(da) -> host, and an event record after the memset; a
 * memcpy db -> db+64 and a 2D memset of db+1024. Nodes in that order. */
static CUgraph base_graph(CUgraphNode nodes[6], CUevent ev, CUDA_KERNEL_NODE_PARAMS *k, CUDA_HOST_NODE_PARAMS *h) {
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    CUDA_MEMSET_NODE_PARAMS f = fill(da, 1, 4, 1, 1, 0);
    MUST(cuGraphAddMemsetNode(&nodes[0], g, NULL, 0, &f, ctx));
    MUST(cuGraphAddKernelNode(&nodes[1], g, &nodes[0], 1, k));
    MUST(cuGraphAddHostNode(&nodes[2], g, &nodes[1], 1, h));
    MUST(cuGraphAddEventRecordNode(&nodes[3], g, &nodes[0], 1, ev));
    CUDA_MEMCPY3D c = copy1d(CU_MEMORYTYPE_DEVICE, NULL, db, CU_MEMORYTYPE_DEVICE, NULL, db + 64, 4);
    MUST(cuGraphAddMemcpyNode(&nodes[4], g, NULL, 0, &c, ctx));
    CUDA_MEMSET_NODE_PARAMS f2 = fill(db + 1024, 2, 1, 8, 4, 64);
    MUST(cuGraphAddMemsetNode(&nodes[5], g, NULL, 0, &f2, ctx));
    return g;
}

static void update(void) {
    setup();
    unsigned one = 1, ten = 10;
    void *args[] = {&da, &one}, *args10[] = {&da, &ten};
    CUDA_KERNEL_NODE_PARAMS k = kparams(addk, args), k10 = kparams(addk, args10);
    static int calls_a, calls_b;
    CUDA_HOST_NODE_PARAMS h = {host_fn, &calls_a}, h2 = {host_fn, &calls_b};
    CUevent ev, ev2;
    MUST(cuEventCreate(&ev, 0));
    MUST(cuEventCreate(&ev2, 0));
    CUgraphNode n[6], m[6];
    CUgraph g = base_graph(n, ev, &k, &h);
    CUgraphExec e;
    MUST(cuGraphInstantiateWithFlags(&e, g, 0));

    CUgraph u = base_graph(m, ev2, &k10, &h2);
    report(e, u, "kernel, host and event changed", NULL, NULL);
    run(e, "after it");
    SAY("word %u, host calls: first data %d, second %d", word(da), calls_a, calls_b);

    u = base_graph(m, ev, &k, &h);
    CUgraphNode extra;
    MUST(cuGraphAddEmptyNode(&extra, u, NULL, 0));
    report(e, u, "a node more", NULL, NULL);

    u = base_graph(m, ev, &k, &h);
    MUST(cuGraphAddDependencies(u, &m[4], &m[5], NULL, 1));
    report(e, u, "an edge more", m[5], NULL);

    u = base_graph(m, ev, &k, &h);
    MUST(cuGraphRemoveDependencies(u, &m[0], &m[3], NULL, 1));
    MUST(cuGraphAddDependencies(u, &m[1], &m[3], NULL, 1));
    report(e, u, "an edge from another node", m[3], m[1]);

    /* Types and parameters: a graph built node by node with one change. */
    CUgraph t;
    MUST(cuGraphCreate(&t, 0));
    CUDA_MEMSET_NODE_PARAMS f = fill(da, 1, 4, 1, 1, 0);
    MUST(cuGraphAddMemsetNode(&m[0], t, NULL, 0, &f, ctx));
    MUST(cuGraphAddKernelNode(&m[1], t, &m[0], 1, &k));
    MUST(cuGraphAddHostNode(&m[2], t, &m[1], 1, &h));
    MUST(cuGraphAddEmptyNode(&m[3], t, &m[0], 1));
    CUDA_MEMCPY3D c = copy1d(CU_MEMORYTYPE_DEVICE, NULL, db, CU_MEMORYTYPE_DEVICE, NULL, db + 64, 4);
    MUST(cuGraphAddMemcpyNode(&m[4], t, NULL, 0, &c, ctx));
    CUDA_MEMSET_NODE_PARAMS f2 = fill(db + 1024, 2, 1, 8, 4, 64);
    MUST(cuGraphAddMemsetNode(&m[5], t, NULL, 0, &f2, ctx));
    report(e, t, "an event record node become an empty node", m[3], NULL);

    u = base_graph(m, ev, &k, &h);
    unsigned host = 0;
    CUDA_MEMCPY3D ch = copy1d(CU_MEMORYTYPE_DEVICE, NULL, db, CU_MEMORYTYPE_HOST, &host, 0, 4);
    MUST(cuGraphMemcpyNodeSetParams(m[4], &ch));
    report(e, u, "a copy to host memory", m[4], NULL);

    u = base_graph(m, ev, &k, &h);
    CUDA_MEMCPY3D cl = copy1d(CU_MEMORYTYPE_DEVICE, NULL, db + 128, CU_MEMORYTYPE_DEVICE, NULL, db + 256, 16);
    MUST(cuGraphMemcpyNodeSetParams(m[4], &cl));
    report(e, u, "a copy of other device addresses and length", NULL, NULL);

    u = base_graph(m, ev, &k, &h);
    CUDA_MEMSET_NODE_PARAMS w = fill(db + 1024, 2, 1, 4, 4, 64);
    MUST(cuGraphMemsetNodeSetParams(m[5], &w));
    report(e, u, "a 2D memset's width", m[5], NULL);

    u = base_graph(m, ev, &k, &h);
    w = fill(db + 2048, 3, 1, 8, 4, 64);
    MUST(cuGraphMemsetNodeSetParams(m[5], &w));
    report(e, u, "a 2D memset's address and value", NULL, NULL);

    u = base_graph(m, ev, &k, &h);
    w = fill(da, 1, 4, 32, 1, 0);
    MUST(cuGraphMemsetNodeSetParams(m[0], &w));
    report(e, u, "a 1D memset's width", NULL, NULL);

    u = base_graph(m, ev, &k, &h);
    w = fill(da, 1, 2, 2, 1, 0);
    MUST(cuGraphMemsetNodeSetParams(m[0], &w));
    report(e, u, "a 1D memset's element size", NULL, NULL);

    CUcontext other;
    if (cuCtxCreate(&other, NULL, 0, 0) == CUDA_SUCCESS) {
        CUmodule m2;
        CUfunction add2;
        MUST(cuModuleLoadData(&m2, ptx));
        MUST(cuModuleGetFunction(&add2, m2, "add"));
        MUST(cuCtxSetCurrent(ctx));
        CUDA_KERNEL_NODE_PARAMS k2 = kparams(add2, args);
        u = base_graph(m, ev, &k2, &h);
        report(e, u, "a kernel of another context", m[1], NULL);
    }
    run(e, "after the refusals");
    SAY("word %u", word(da));
}

/* cuGraphExecUpdate into child graphs. */
static void update_children(void) {
    setup();
    CUgraph child, g;
    MUST(cuGraphCreate(&child, 0));
    CUgraphNode x, y, cn;
    CUDA_MEMSET_NODE_PARAMS f = fill(da, 4, 4, 1, 1, 0);
    MUST(cuGraphAddMemsetNode(&x, child, NULL, 0, &f, ctx));
    MUST(cuGraphCreate(&g, 0));
    MUST(cuGraphAddChildGraphNode(&cn, g, NULL, 0, child));
    CUgraphExec e;
    MUST(cuGraphInstantiateWithFlags(&e, g, 0));
    CUgraph c2, u;
    MUST(cuGraphCreate(&c2, 0));
    CUDA_MEMSET_NODE_PARAMS f2 = fill(da, 40, 4, 1, 1, 0);
    MUST(cuGraphAddMemsetNode(&x, c2, NULL, 0, &f2, ctx));
    MUST(cuGraphCreate(&u, 0));
    MUST(cuGraphAddChildGraphNode(&y, u, NULL, 0, c2));
    report(e, u, "a child graph with another memset value", NULL, NULL);
    run(e, "after it");
    SAY("word %u", word(da));
    MUST(cuGraphAddEmptyNode(&x, c2, NULL, 0));
    MUST(cuGraphCreate(&u, 0));
    MUST(cuGraphAddChildGraphNode(&y, u, NULL, 0, c2));
    report(e, u, "a child graph with a node more", y, NULL);
    MUST(cuGraphCreate(&c2, 0));
    MUST(cuGraphAddEmptyNode(&x, c2, NULL, 0));
    MUST(cuGraphCreate(&u, 0));
    MUST(cuGraphAddChildGraphNode(&y, u, NULL, 0, c2));
    report(e, u, "a child graph whose node is of another type", y, NULL);
}

/* cuGraphExecUpdate's pairing of nodes, where cuda.h does not say its order: which node
 * and dependency it names for an edge less, an edge moved (more or fewer exit nodes),
 * the same graph built in another order, and a node's dependencies given in the other
 * order. Recorded on the H200 (section update-topology, matched). */
static const char *which(CUgraphNode x, const CUgraphNode *m, int count) {
    static const char *names[] = {"m0", "m1", "m2", "m3", "m4", "m5"};
    if (x == NULL) return "NULL";
    for (int i = 0; i < count; i++)
        if (x == m[i]) return names[i];
    return "another";
}

static void report_which(CUgraphExec e, CUgraph g, const char *what, const CUgraphNode *m, int count) {
    CUgraphExecUpdateResultInfo info;
    FILL(info);
    CUresult r = cuGraphExecUpdate(e, g, &info);
    printf("%s = %s\n", what, rname(r));
    printf("  result %d, error node %s, from node %s\n", (int)info.result,
           which(info.errorNode, m, count), which(info.errorFromNode, m, count));
    fflush(stdout);
}

static void update_topology(void) {
    setup();
    unsigned one = 1;
    void *args[] = {&da, &one};
    CUDA_KERNEL_NODE_PARAMS k = kparams(addk, args);
    static int calls;
    CUDA_HOST_NODE_PARAMS h = {host_fn, &calls};
    CUevent ev;
    MUST(cuEventCreate(&ev, 0));
    CUgraphNode n[6], m[6];
    CUgraph g = base_graph(n, ev, &k, &h);
    CUgraphExec e;
    MUST(cuGraphInstantiateWithFlags(&e, g, 0));

    CUgraph u = base_graph(m, ev, &k, &h);
    MUST(cuGraphRemoveDependencies(u, &m[0], &m[3], NULL, 1));
    report_which(e, u, "an edge less", m, 6);

    u = base_graph(m, ev, &k, &h);
    MUST(cuGraphRemoveDependencies(u, &m[1], &m[2], NULL, 1));
    MUST(cuGraphAddDependencies(u, &m[0], &m[2], NULL, 1));
    report_which(e, u, "an edge moved: more exit nodes", m, 6);

    u = base_graph(m, ev, &k, &h);
    MUST(cuGraphRemoveDependencies(u, &m[0], &m[3], NULL, 1));
    MUST(cuGraphAddDependencies(u, &m[4], &m[5], NULL, 1));
    report_which(e, u, "an edge moved: fewer exit nodes", m, 6);

    /* The same nodes and edges, the copy and the 2D memset added first. */
    MUST(cuGraphCreate(&u, 0));
    CUDA_MEMCPY3D c = copy1d(CU_MEMORYTYPE_DEVICE, NULL, db, CU_MEMORYTYPE_DEVICE, NULL, db + 64, 4);
    MUST(cuGraphAddMemcpyNode(&m[4], u, NULL, 0, &c, ctx));
    CUDA_MEMSET_NODE_PARAMS f2 = fill(db + 1024, 2, 1, 8, 4, 64);
    MUST(cuGraphAddMemsetNode(&m[5], u, NULL, 0, &f2, ctx));
    CUDA_MEMSET_NODE_PARAMS f = fill(da, 1, 4, 1, 1, 0);
    MUST(cuGraphAddMemsetNode(&m[0], u, NULL, 0, &f, ctx));
    MUST(cuGraphAddKernelNode(&m[1], u, &m[0], 1, &k));
    MUST(cuGraphAddHostNode(&m[2], u, &m[1], 1, &h));
    MUST(cuGraphAddEventRecordNode(&m[3], u, &m[0], 1, ev));
    report_which(e, u, "the same graph built in another order", m, 6);

    /* memset and kernel, both before an empty node: its dependencies in the other order. */
    CUgraph two;
    CUgraphNode p[3], q[3];
    MUST(cuGraphCreate(&two, 0));
    MUST(cuGraphAddMemsetNode(&p[0], two, NULL, 0, &f, ctx));
    MUST(cuGraphAddKernelNode(&p[1], two, NULL, 0, &k));
    MUST(cuGraphAddEmptyNode(&p[2], two, p, 2));
    CUgraphExec e2;
    MUST(cuGraphInstantiateWithFlags(&e2, two, 0));
    MUST(cuGraphCreate(&u, 0));
    MUST(cuGraphAddMemsetNode(&q[0], u, NULL, 0, &f, ctx));
    MUST(cuGraphAddKernelNode(&q[1], u, NULL, 0, &k));
    CUgraphNode swapped[2] = {q[1], q[0]};
    MUST(cuGraphAddEmptyNode(&q[2], u, swapped, 2));
    report_which(e2, u, "dependencies given in the other order", q, 3);
}

/* cuStreamBeginCaptureToGraph: a capture into the program's graph after nodes given.
 * Recorded on the H200 (section capture-to-graph, matched). */
static void capture_to_graph(void) {
    setup();
    CUgraph g, other;
    MUST(cuGraphCreate(&g, 0));
    MUST(cuGraphCreate(&other, 0));
    CUgraphNode set, empty, stranger;
    CUDA_MEMSET_NODE_PARAMS f = fill(da, 2, 4, 1, 1, 0);
    MUST(cuGraphAddMemsetNode(&set, g, NULL, 0, &f, ctx));
    MUST(cuGraphAddEmptyNode(&empty, g, NULL, 0));
    MUST(cuGraphAddEmptyNode(&stranger, other, NULL, 0));
    CALL("a dependency of another graph", cuStreamBeginCaptureToGraph(s, g, &stranger, NULL, 1, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUstreamCaptureStatus status = 7;
    MUST(cuStreamIsCapturing(s, &status));
    SAY("capturing: %d", (int)status);
    CALL("a NULL graph", cuStreamBeginCaptureToGraph(s, NULL, &set, NULL, 1, CU_STREAM_CAPTURE_MODE_GLOBAL));
    if (CALL("after the memset", cuStreamBeginCaptureToGraph(s, g, &set, NULL, 1, CU_STREAM_CAPTURE_MODE_GLOBAL)) != CUDA_SUCCESS)
        return;
    CUgraph in = NULL;
    const CUgraphNode *deps = NULL;
    size_t ndeps = 99;
    CALL("capture info", cuStreamGetCaptureInfo(s, &status, NULL, &in, &deps, NULL, &ndeps));
    SAY("status %d, the graph given: %s, %zu dependencies, the memset: %s", (int)status,
        in == g ? "yes" : "no", ndeps, ndeps == 1 && deps[0] == set ? "yes" : "no");
    CALL("destroy the graph", cuGraphDestroy(g));
    unsigned three = 3;
    void *args[] = {&da, &three};
    CALL("a kernel", cuLaunchKernel(addk, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
    CUgraph got = NULL;
    CALL("end", cuStreamEndCapture(s, &got));
    SAY("the graph given: %s", got == g ? "yes" : got == NULL ? "NULL" : "another");
    size_t count = 99, edges = 99;
    MUST(cuGraphGetNodes(g, NULL, &count));
    MUST(cuGraphGetEdges(g, NULL, NULL, NULL, &edges));
    SAY("%zu nodes, %zu edges", count, edges);
    CUgraphExec e;
    MUST(cuGraphInstantiateWithFlags(&e, g, 0));
    run(e, "the graph");
    SAY("word %u", word(da));
}

/* cuGraphUpload, cuGraphExecGetFlags, cuGraphNodeFindInClone, cuGraphDestroyNode. */
static void upload_find_destroy(void) {
    setup();
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    unsigned one = 1;
    void *args[] = {&da, &one};
    CUDA_KERNEL_NODE_PARAMS k = kparams(addk, args);
    CUgraphNode a, b, c;
    MUST(cuGraphAddKernelNode(&a, g, NULL, 0, &k));
    MUST(cuGraphAddEmptyNode(&b, g, &a, 1));
    MUST(cuGraphAddKernelNode(&c, g, &b, 1, &k));
    CUgraphExec e;
    MUST(cuGraphInstantiateWithFlags(&e, g, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH));
    cuuint64_t flags = SENTINEL;
    CALL("flags", cuGraphExecGetFlags(e, &flags));
    SAY("flags = %llu", (unsigned long long)flags);
    CALL("flags into NULL", cuGraphExecGetFlags(e, NULL));
    CALL("upload", cuGraphUpload(e, s));
    CALL("upload on the legacy stream", cuGraphUpload(e, NULL));
    run(e, "after the uploads");
    SAY("word %u", word(da));
    CALL("upload of NULL", cuGraphUpload(NULL, s));

    CUgraph clone;
    MUST(cuGraphClone(&clone, g));
    size_t count = 3;
    CUgraphNode cn[3];
    MUST(cuGraphGetNodes(clone, cn, &count));
    CUgraphNode found = NULL;
    CALL("find the second node in the clone", cuGraphNodeFindInClone(&found, b, clone));
    SAY("it is the clone's second node: %s", found == cn[1] ? "yes" : "no");
    CALL("find in the original graph", cuGraphNodeFindInClone(&found, b, g));
    CUgraphNode later;
    MUST(cuGraphAddEmptyNode(&later, g, NULL, 0));
    CALL("find a node added after the clone", cuGraphNodeFindInClone(&found, later, clone));
    CALL("destroy the clone's second node", cuGraphDestroyNode(cn[1]));
    CALL("find it now", cuGraphNodeFindInClone(&found, b, clone));
    size_t edges = 99;
    MUST(cuGraphGetEdges(clone, NULL, NULL, NULL, &edges));
    count = 99;
    MUST(cuGraphGetNodes(clone, NULL, &count));
    SAY("clone: %zu nodes, %zu edges", count, edges);
    CALL("destroy NULL", cuGraphDestroyNode(NULL));
    CUgraphExec ce;
    CALL("instantiate the clone", cuGraphInstantiateWithFlags(&ce, clone, 0));
    run(ce, "the clone");
    SAY("word %u", word(da));
    CALL("update the graph's executable graph from the clone", cuGraphExecUpdate(e, clone, NULL));

    CUgraph mg;
    MUST(cuGraphCreate(&mg, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS ap;
    memset(&ap, 0, sizeof ap);
    ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    ap.bytesize = 1 << 20;
    CUgraphNode an, en;
    MUST(cuGraphAddMemAllocNode(&an, mg, NULL, 0, &ap));
    MUST(cuGraphAddEmptyNode(&en, mg, &an, 1));
    CALL("destroy an empty node of a graph with an allocation node", cuGraphDestroyNode(en));
}

/* cuGraphHostNodeGetParams, cuGraphMemsetNodeGetParams, cuGraphMemcpyNodeGetParams of
 * nodes added with parameters, and of nodes captured from a stream. */
static void node_params(void) {
    setup();
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    static int calls;
    CUDA_HOST_NODE_PARAMS h = {host_fn, &calls};
    CUgraphNode hn, mn, cn;
    MUST(cuGraphAddHostNode(&hn, g, NULL, 0, &h));
    CUDA_MEMSET_NODE_PARAMS f = fill(db, 0x5a, 2, 8, 3, 64);
    MUST(cuGraphAddMemsetNode(&mn, g, NULL, 0, &f, ctx));
    CUDA_MEMCPY3D c = copy1d(CU_MEMORYTYPE_DEVICE, NULL, da + 8, CU_MEMORYTYPE_DEVICE, NULL, db + 16, 12);
    MUST(cuGraphAddMemcpyNode(&cn, g, NULL, 0, &c, ctx));
    CUDA_HOST_NODE_PARAMS hg;
    FILL(hg);
    CALL("host node", cuGraphHostNodeGetParams(hn, &hg));
    SAY("same function and data: %s", hg.fn == host_fn && hg.userData == &calls ? "yes" : "no");
    CUDA_MEMSET_NODE_PARAMS fg;
    FILL(fg);
    CALL("memset node", cuGraphMemsetNodeGetParams(mn, &fg));
    SAY("dst %s, value 0x%x, element %u, %zux%zu, pitch %zu", fg.dst == db ? "same" : "other",
        fg.value, fg.elementSize, fg.width, fg.height, fg.pitch);
    CUDA_MEMCPY3D cg;
    FILL(cg);
    CALL("memcpy node", cuGraphMemcpyNodeGetParams(cn, &cg));
    SAY("src %s type %d, dst %s type %d, width %zu, height %zu, depth %zu",
        cg.srcDevice == da + 8 ? "same" : "other", (int)cg.srcMemoryType,
        cg.dstDevice == db + 16 ? "same" : "other", (int)cg.dstMemoryType, cg.WidthInBytes,
        cg.Height, cg.Depth);
    CALL("memset params of the host node", cuGraphMemsetNodeGetParams(hn, &fg));
    CALL("host params into NULL", cuGraphHostNodeGetParams(hn, NULL));

    /* Captured. */
    CUgraph cap;
    MUST(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    MUST(cuMemsetD32Async(da, 7, 4, s));
    MUST(cuMemcpyDtoDAsync(db, da, 16, s));
    MUST(cuLaunchHostFunc(s, host_fn, &calls));
    MUST(cuStreamEndCapture(s, &cap));
    size_t count = 3;
    CUgraphNode nodes[3];
    MUST(cuGraphGetNodes(cap, nodes, &count));
    for (size_t i = 0; i < count; i++) {
        CUgraphNodeType t;
        MUST(cuGraphNodeGetType(nodes[i], &t));
        if (t == CU_GRAPH_NODE_TYPE_MEMSET) {
            FILL(fg);
            if (CALL("captured memset", cuGraphMemsetNodeGetParams(nodes[i], &fg)) == CUDA_SUCCESS)
                SAY("dst %s, value 0x%x, element %u, %zux%zu", fg.dst == da ? "same" : "other",
                fg.value, fg.elementSize, fg.width, fg.height);
        } else if (t == CU_GRAPH_NODE_TYPE_MEMCPY) {
            FILL(cg);
            if (CALL("captured copy", cuGraphMemcpyNodeGetParams(nodes[i], &cg)) == CUDA_SUCCESS)
                SAY("src type %d, dst type %d, width %zu", (int)cg.srcMemoryType,
                (int)cg.dstMemoryType, cg.WidthInBytes);
        } else if (t == CU_GRAPH_NODE_TYPE_HOST) {
            FILL(hg);
            if (CALL("captured host function", cuGraphHostNodeGetParams(nodes[i], &hg)) == CUDA_SUCCESS)
                SAY("same function and data: %s", hg.fn == host_fn && hg.userData == &calls ? "yes" : "no");
        }
    }
}

/* cuGraphChildGraphNodeGetGraph: the node's own graph (not a clone), which changes the
 * node, and what a graph made by cloning or instantiating holds. */
static void child_graph_handle(void) {
    setup();
    CUgraph child, g;
    MUST(cuGraphCreate(&child, 0));
    unsigned one = 1, ten = 10;
    void *args[] = {&da, &one}, *args10[] = {&da, &ten};
    CUDA_KERNEL_NODE_PARAMS k = kparams(addk, args), k10 = kparams(addk, args10);
    CUgraphNode x, cn;
    MUST(cuGraphAddKernelNode(&x, child, NULL, 0, &k));
    MUST(cuGraphCreate(&g, 0));
    MUST(cuGraphAddChildGraphNode(&cn, g, NULL, 0, child));
    CUgraph inner = NULL, again = NULL;
    CALL("its graph", cuGraphChildGraphNodeGetGraph(cn, &inner));
    CALL("its graph again", cuGraphChildGraphNodeGetGraph(cn, &again));
    SAY("the same handle: %s; the graph added: %s", inner == again ? "yes" : "no", inner == child ? "yes" : "no");
    size_t count = 0;
    MUST(cuGraphGetNodes(inner, NULL, &count));
    SAY("nodes %zu", count);
    CALL("a kernel node added to it", cuGraphAddKernelNode(&x, inner, NULL, 0, &k10));
    CUgraphExec e;
    MUST(cuGraphInstantiateWithFlags(&e, g, 0));
    run(e, "the parent");
    SAY("word %u (1 + 10 if the node took the new kernel)", word(da));
    CALL("another kernel node added after instantiation", cuGraphAddKernelNode(&x, inner, NULL, 0, &k10));
    run(e, "the parent again");
    SAY("word %u", word(da));
    CUgraph clone, cloned_inner = NULL;
    MUST(cuGraphClone(&clone, g));
    size_t n = 1;
    CUgraphNode ccn;
    MUST(cuGraphGetNodes(clone, &ccn, &n));
    CALL("the clone's child graph", cuGraphChildGraphNodeGetGraph(ccn, &cloned_inner));
    SAY("another graph: %s", cloned_inner != inner ? "yes" : "no");
    CALL("on a kernel node", cuGraphChildGraphNodeGetGraph(x, &again));
    CALL("into NULL", cuGraphChildGraphNodeGetGraph(cn, NULL));
    CALL("destroy the node's graph", cuGraphDestroy(inner));
    CALL("destroy the parent", cuGraphDestroy(g));
    run(e, "the executable graph after its graph went");
    SAY("word %u", word(da));
}

/* Kernel-node attributes (cuGraphKernelNodeGet/SetAttribute, CopyAttributes): each
 * attribute's value on a fresh node, set and read back, a cluster shape set on a node
 * and the kernel's view of it after instantiation, what cuGraphKernelNodeSetParams and
 * cuGraphExecKernelNodeSetParams leave of them, an attribute the mock does not keep, and
 * a node that is not a kernel node. Recorded on the H200: every line matches up to the
 * last call, where the H200 crashes (declared in divergences.txt). */
static void print_attr(const char *what, CUgraphNode n, CUkernelNodeAttrID id) {
    CUkernelNodeAttrValue v;
    memset(&v, 0, sizeof v);
    CUresult r = cuGraphKernelNodeGetAttribute(n, id, &v);
    const unsigned *w = (const unsigned *)&v;
    printf("%s: get %d = %s, words %u %u %u %u\n", what, (int)id, rname(r), w[0], w[1], w[2], w[3]);
    fflush(stdout);
}

static void kernel_attributes(void) {
    setup();
    CUfunction ranks;
    MUST(cuModuleGetFunction(&ranks, mod, "ranks"));
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    void *args[] = {&da};
    CUDA_KERNEL_NODE_PARAMS k = kparams(ranks, args);
    k.gridDimX = 4;
    void *args2[] = {&db};
    CUDA_KERNEL_NODE_PARAMS k2 = kparams(ranks, args2);
    k2.gridDimX = 4;
    CUgraphNode n, n2, empty;
    MUST(cuGraphAddKernelNode(&n, g, NULL, 0, &k));
    MUST(cuGraphAddKernelNode(&n2, g, &n, 1, &k2));
    MUST(cuGraphAddEmptyNode(&empty, g, NULL, 0));
    CUkernelNodeAttrID ids[] = {CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, CU_LAUNCH_ATTRIBUTE_COOPERATIVE,
                                CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, CU_LAUNCH_ATTRIBUTE_PRIORITY};
    for (int i = 0; i < 4; i++) print_attr("fresh node", n, ids[i]);
    CUkernelNodeAttrValue v;
    memset(&v, 0, sizeof v);
    v.clusterDim.x = 2;
    v.clusterDim.y = 1;
    v.clusterDim.z = 1;
    CALL("set cluster 2x1x1", cuGraphKernelNodeSetAttribute(n, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &v));
    print_attr("after it", n, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    CUgraphExec e;
    MUST(cuGraphInstantiateWithFlags(&e, g, 0));
    MUST(cuMemsetD8(da, 0, 16));
    run(e, "instantiated");
    SAY("cluster sizes seen by blocks 0 and 3: %u %u", word(da), word(da + 12));
    CALL("cuGraphExecKernelNodeSetParams, same kernel", cuGraphExecKernelNodeSetParams(e, n, &k));
    MUST(cuMemsetD8(da, 0, 16));
    run(e, "after it");
    SAY("cluster sizes seen by blocks 0 and 3: %u %u", word(da), word(da + 12));
    CALL("cuGraphKernelNodeSetParams, same kernel", cuGraphKernelNodeSetParams(n, &k));
    print_attr("after it", n, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
    memset(&v, 0, sizeof v);
    v.priority = -1;
    CALL("set priority -1", cuGraphKernelNodeSetAttribute(n, CU_LAUNCH_ATTRIBUTE_PRIORITY, &v));
    print_attr("after it", n, CU_LAUNCH_ATTRIBUTE_PRIORITY);
    memset(&v, 0, sizeof v);
    v.cooperative = 1;
    CALL("set cooperative 1", cuGraphKernelNodeSetAttribute(n, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v));
    print_attr("after it", n, CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
    memset(&v, 0, sizeof v);
    v.accessPolicyWindow.base_ptr = (void *)(uintptr_t)da;
    v.accessPolicyWindow.num_bytes = 4096;
    v.accessPolicyWindow.hitRatio = 0.5f;
    v.accessPolicyWindow.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
    v.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_STREAMING;
    CALL("set an access policy window", cuGraphKernelNodeSetAttribute(n, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
    memset(&v, 0, sizeof v);
    CALL("get it", cuGraphKernelNodeGetAttribute(n, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
    SAY("base is da: %s, bytes %zu, hit ratio %.2f, hit %d, miss %d",
        v.accessPolicyWindow.base_ptr == (void *)(uintptr_t)da ? "yes" : "no", v.accessPolicyWindow.num_bytes,
        v.accessPolicyWindow.hitRatio, (int)v.accessPolicyWindow.hitProp, (int)v.accessPolicyWindow.missProp);
    CALL("copy the attributes to the second node", cuGraphKernelNodeCopyAttributes(n2, n));
    for (int i = 1; i < 4; i++) print_attr("second node", n2, ids[i]);
    memset(&v, 0, sizeof v);
    v.memSyncDomain = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE;
    CALL("set MEM_SYNC_DOMAIN", cuGraphKernelNodeSetAttribute(n, CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN, &v));
    print_attr("the empty node", empty, CU_LAUNCH_ATTRIBUTE_PRIORITY);
    CALL("set on the empty node", cuGraphKernelNodeSetAttribute(empty, CU_LAUNCH_ATTRIBUTE_PRIORITY, &v));
    CALL("copy from the empty node", cuGraphKernelNodeCopyAttributes(n2, empty));
    CALL("get with a NULL value", cuGraphKernelNodeGetAttribute(n, CU_LAUNCH_ATTRIBUTE_PRIORITY, NULL));
}

/* Stream capture modes (cuda.h, cuStreamBeginCapture and cuThreadExchangeStreamCaptureMode):
 * which calls each mode refuses while a capture is active, on the capturing thread and on
 * another thread, and what the capture's end answers after. Recorded on the H200 (section
 * capture-modes, matched). */
static CUstream capturing;

static void *other_thread_alloc(void *arg) {
    (void)arg;
    MUST(cuCtxSetCurrent(ctx));
    CUdeviceptr p = 0;
    CUresult r = cuMemAlloc(&p, 256);
    printf("  another thread's cuMemAlloc = %s\n", rname(r));
    if (r == CUDA_SUCCESS) MUST(cuMemFree(p));
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    r = cuStreamIsCapturing(capturing, &st);
    printf("  another thread's cuStreamIsCapturing = %s, status %d\n", rname(r), (int)st);
    fflush(stdout);
    return NULL;
}

static void end_capture(const char *what) {
    CUgraph g = NULL;
    CUresult r = cuStreamEndCapture(capturing, &g);
    printf("%s: end capture = %s, graph %s\n", what, rname(r), g ? "set" : "NULL");
    fflush(stdout);
    if (g) cuGraphDestroy(g);
}

static void capture_modes(void) {
    setup();
    const char *names[] = {"global", "thread-local", "relaxed"};
    CUstreamCaptureMode modes[] = {CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                                   CU_STREAM_CAPTURE_MODE_RELAXED};
    for (int i = 0; i < 3; i++) {
        MUST(cuStreamCreate(&capturing, CU_STREAM_NON_BLOCKING));
        printf("mode %s\n", names[i]);
        CALL("  begin capture", cuStreamBeginCapture(capturing, modes[i]));
        CUdeviceptr p = 0;
        CUresult r = cuMemAlloc(&p, 256);
        printf("  this thread's cuMemAlloc = %s\n", rname(r));
        if (r == CUDA_SUCCESS) MUST(cuMemFree(p));
        pthread_t t;
        pthread_create(&t, NULL, other_thread_alloc, NULL);
        pthread_join(t, NULL);
        end_capture(names[i]);
        MUST(cuStreamDestroy(capturing));
    }
    MUST(cuStreamCreate(&capturing, CU_STREAM_NON_BLOCKING));
    CALL("capture, then synchronize the capturing stream", cuStreamBeginCapture(capturing, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CALL("  cuStreamSynchronize", cuStreamSynchronize(capturing));
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CALL("  cuStreamIsCapturing", cuStreamIsCapturing(capturing, &st));
    SAY("status %d", (int)st);
    end_capture("after the synchronize");
    CALL("capture, then query the capturing stream", cuStreamBeginCapture(capturing, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CALL("  cuStreamQuery", cuStreamQuery(capturing));
    end_capture("after the query");
    MUST(cuStreamDestroy(capturing));
    MUST(cuStreamCreate(&capturing, 0));
    CALL("capture a blocking stream, then a memset on the legacy stream",
         cuStreamBeginCapture(capturing, CU_STREAM_CAPTURE_MODE_RELAXED));
    CALL("  cuMemsetD8Async on the legacy stream", cuMemsetD8Async(da, 1, 4, NULL));
    end_capture("after it");
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    CALL("exchange the thread's mode for relaxed", cuThreadExchangeStreamCaptureMode(&mode));
    SAY("it was %d", (int)mode);
    CALL("  and back", cuThreadExchangeStreamCaptureMode(&mode));
    SAY("it was %d", (int)mode);
    MUST(cuStreamDestroy(capturing));
    CALL("synchronize the context after all of it", cuCtxSynchronize());
}

/* The call the H200 crashed on (SIGSEGV) in upload-find-destroy, alone in a section run
 * last, so that upload-find-destroy runs to its end: a clone's node destroyed twice. */
static void upload_find_destroy_twice_crash(void) {
    setup();
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    unsigned one = 1;
    void *args[] = {&da, &one};
    CUDA_KERNEL_NODE_PARAMS k = kparams(addk, args);
    CUgraphNode a, b, c;
    MUST(cuGraphAddKernelNode(&a, g, NULL, 0, &k));
    MUST(cuGraphAddEmptyNode(&b, g, &a, 1));
    MUST(cuGraphAddKernelNode(&c, g, &b, 1, &k));
    CUgraph clone;
    MUST(cuGraphClone(&clone, g));
    size_t count = 3;
    CUgraphNode cn[3];
    MUST(cuGraphGetNodes(clone, cn, &count));
    MUST(cuGraphDestroyNode(cn[1]));
    CALL("destroy it again", cuGraphDestroyNode(cn[1]));
}

int main(void) {
    section("kernel-setters", kernel_setters);
    section("memcpy-setters", memcpy_setters);
    section("memset-setters", memset_setters);
    section("host-and-event-setters", host_and_event_setters);
    section("child-setters", child_setters);
    section("enable", enable);
    section("generic-setters", generic_setters);
    section("update", update);
    section("update-children", update_children);
    section("upload-find-destroy", upload_find_destroy);
    section("node-params", node_params);
    section("child-graph-handle", child_graph_handle);
    section("update-topology", update_topology);
    section("capture-to-graph", capture_to_graph);
    section("kernel-attributes", kernel_attributes);
    section("capture-modes", capture_modes);
    section("upload-find-destroy-twice-crash", upload_find_destroy_twice_crash);
    return 0;
}
