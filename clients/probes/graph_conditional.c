/* Conditional graph nodes (cuda.h: cuGraphConditionalHandleCreate, cuGraphAddNode with
 * CU_GRAPH_NODE_TYPE_CONDITIONAL): what the driver answers to handles and nodes built
 * right and wrong, what it hands back (phGraph_out, node types, body graphs), and kernels
 * loaded as PTX text (cuModuleLoadData, no nvcc) that call the device runtime's
 * cudaGraphSetConditional, as nvcc compiles it: an IF, a WHILE counting down with a
 * default assigned at each launch, a SWITCH, and section capture (bodies filled by
 * cuStreamBeginCaptureToGraph, a conditional node added into a capture in progress, a
 * graph allocation captured into a body); recorded on the H200 (ci/gpu-probes.sh). No
 * multicast API is called. */
#include "probe.h"

static const char *ptx =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".extern .func cudaGraphSetConditional(.param .b64 h, .param .b32 v);\n"
    /* set(h, p): cudaGraphSetConditional(h, *p) */
    ".visible .entry set(.param .u64 h, .param .u64 p)\n"
    "{\n"
    "  .reg .b32 %r<2>;\n"
    "  .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [h];\n"
    "  ld.param.u64 %rd2, [p];\n"
    "  ld.global.u32 %r1, [%rd2];\n"
    "  { .param .b64 a0; st.param.b64 [a0], %rd1;\n"
    "    .param .b32 a1; st.param.b32 [a1], %r1;\n"
    "    call.uni cudaGraphSetConditional, (a0, a1); }\n"
    "  ret;\n"
    "}\n"
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
    /* down(h, p): *p -= 1; cudaGraphSetConditional(h, *p != 0) */
    ".visible .entry down(.param .u64 h, .param .u64 p)\n"
    "{\n"
    "  .reg .pred %q;\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [h];\n"
    "  ld.param.u64 %rd2, [p];\n"
    "  ld.global.u32 %r1, [%rd2];\n"
    "  sub.u32 %r2, %r1, 1;\n"
    "  st.global.u32 [%rd2], %r2;\n"
    "  setp.ne.u32 %q, %r2, 0;\n"
    "  selp.u32 %r3, 1, 0, %q;\n"
    "  { .param .b64 a0; st.param.b64 [a0], %rd1;\n"
    "    .param .b32 a1; st.param.b32 [a1], %r3;\n"
    "    call.uni cudaGraphSetConditional, (a0, a1); }\n"
    "  ret;\n"
    "}\n";

static CUcontext ctx;
static CUmodule mod;
static CUfunction setk, addk, downk;
static CUdeviceptr dval, dout;

static void setup(void) {
    init_primary(0, &ctx);
    CUresult r = CALL("load the PTX calling cudaGraphSetConditional", cuModuleLoadData(&mod, ptx));
    if (r != CUDA_SUCCESS) _exit(3);
    MUST(cuModuleGetFunction(&setk, mod, "set"));
    MUST(cuModuleGetFunction(&addk, mod, "add"));
    MUST(cuModuleGetFunction(&downk, mod, "down"));
    MUST(cuMemAlloc(&dval, 4));
    MUST(cuMemAlloc(&dout, 4));
}

static CUgraphNodeParams cond_params(CUgraphConditionalHandle h, CUgraphConditionalNodeType type, unsigned size) {
    CUgraphNodeParams p;
    memset(&p, 0, sizeof p);
    p.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    p.conditional.handle = h;
    p.conditional.type = type;
    p.conditional.size = size;
    p.conditional.ctx = ctx;
    return p;
}

static CUresult add_kernel(CUgraphNode *n, CUgraph g, CUgraphNode *dep, CUfunction f, void **args) {
    CUDA_KERNEL_NODE_PARAMS k;
    memset(&k, 0, sizeof k);
    k.func = f;
    k.gridDimX = k.gridDimY = k.gridDimZ = 1;
    k.blockDimX = k.blockDimY = k.blockDimZ = 1;
    k.kernelParams = args;
    return cuGraphAddKernelNode(n, g, dep, dep ? 1 : 0, &k);
}

static unsigned get(CUdeviceptr p) {
    unsigned v = 0xdeadbeef;
    MUST(cuMemcpyDtoH(&v, p, 4));
    return v;
}

static void put(CUdeviceptr p, unsigned v) { MUST(cuMemcpyHtoD(p, &v, 4)); }

static void handles(void) {
    setup();
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    CUgraphConditionalHandle h = SENTINEL;
    CALL("create with flags 0", cuGraphConditionalHandleCreate(&h, g, ctx, 0, 0));
    SAY("handle %s", h == SENTINEL ? "untouched" : h == 0 ? "zero" : "set");
    CUgraphConditionalHandle h2 = SENTINEL;
    CALL("create with ASSIGN_DEFAULT", cuGraphConditionalHandleCreate(&h2, g, ctx, 7, CU_GRAPH_COND_ASSIGN_DEFAULT));
    SAY("a second handle differs: %s", h2 != h ? "yes" : "no");
    CALL("create with flags 2", cuGraphConditionalHandleCreate(&h2, g, ctx, 0, 2));
    CALL("create with a NULL context", cuGraphConditionalHandleCreate(&h2, g, NULL, 0, 0));
    CALL("create for a NULL graph", cuGraphConditionalHandleCreate(&h2, NULL, ctx, 0, 0));
    CALL("create into NULL", cuGraphConditionalHandleCreate(NULL, g, ctx, 0, 0));
    CUgraphExec e;
    CALL("instantiate a graph with handles and no conditional node", cuGraphInstantiateWithFlags(&e, g, 0));
}

static void nodes(void) {
    setup();
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    CUgraphConditionalHandle h;
    MUST(cuGraphConditionalHandleCreate(&h, g, ctx, 0, 0));
    CUgraphNode n;
    CUgraphNodeParams p = cond_params(h, CU_GRAPH_COND_TYPE_IF, 1);
    CALL("IF of size 1", cuGraphAddNode(&n, g, NULL, NULL, 0, &p));
    SAY("phGraph_out %s", p.conditional.phGraph_out ? "set" : "NULL");
    CUgraphNodeType t;
    CALL("its type", cuGraphNodeGetType(n, &t));
    SAY("type = %d", (int)t);
    if (p.conditional.phGraph_out) {
        size_t count = 99;
        CALL("nodes of its body", cuGraphGetNodes(p.conditional.phGraph_out[0], NULL, &count));
        SAY("count = %zu", count);
    }
    p = cond_params(h, CU_GRAPH_COND_TYPE_IF, 2);
    CALL("IF of size 2", cuGraphAddNode(&n, g, NULL, NULL, 0, &p));
    p = cond_params(h, CU_GRAPH_COND_TYPE_IF, 3);
    CALL("IF of size 3", cuGraphAddNode(&n, g, NULL, NULL, 0, &p));
    p = cond_params(h, CU_GRAPH_COND_TYPE_WHILE, 2);
    CALL("WHILE of size 2", cuGraphAddNode(&n, g, NULL, NULL, 0, &p));
    p = cond_params(h, CU_GRAPH_COND_TYPE_SWITCH, 5);
    CALL("SWITCH of size 5", cuGraphAddNode(&n, g, NULL, NULL, 0, &p));
    p = cond_params(h, CU_GRAPH_COND_TYPE_SWITCH, 0);
    CALL("SWITCH of size 0", cuGraphAddNode(&n, g, NULL, NULL, 0, &p));
    p = cond_params(h, (CUgraphConditionalNodeType)7, 1);
    CALL("type 7", cuGraphAddNode(&n, g, NULL, NULL, 0, &p));
    p = cond_params(12345, CU_GRAPH_COND_TYPE_IF, 1);
    CALL("a handle never made", cuGraphAddNode(&n, g, NULL, NULL, 0, &p));
    size_t count = 0;
    MUST(cuGraphGetNodes(g, NULL, &count));
    SAY("nodes in the graph: %zu", count);
}

static void if_node(void) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    CUgraphConditionalHandle h;
    MUST(cuGraphConditionalHandleCreate(&h, g, ctx, 0, 0));
    CUgraphNode set, c, k;
    void *set_args[] = {&h, &dval};
    MUST(add_kernel(&set, g, NULL, setk, set_args));
    CUgraphNodeParams p = cond_params(h, CU_GRAPH_COND_TYPE_IF, 2);
    CALL("IF/ELSE after the kernel that sets it", cuGraphAddNode(&c, g, &set, NULL, 1, &p));
    unsigned one = 1, hundred = 100;
    void *then_args[] = {&dout, &one}, *else_args[] = {&dout, &hundred};
    MUST(add_kernel(&k, p.conditional.phGraph_out[0], NULL, addk, then_args));
    MUST(add_kernel(&k, p.conditional.phGraph_out[1], NULL, addk, else_args));
    CUgraphExec e;
    CALL("instantiate", cuGraphInstantiateWithFlags(&e, g, 0));
    unsigned inputs[3] = {3, 0, 1};
    for (int i = 0; i < 3; i++) {
        put(dval, inputs[i]);
        put(dout, 0);
        CALL("launch", cuGraphLaunch(e, s));
        CALL("synchronize", cuStreamSynchronize(s));
        SAY("condition %u: added %u", inputs[i], get(dout));
    }
}

static void while_node(void) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    CUgraphConditionalHandle h;
    MUST(cuGraphConditionalHandleCreate(&h, g, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
    CUgraphNode c, k;
    CUgraphNodeParams p = cond_params(h, CU_GRAPH_COND_TYPE_WHILE, 1);
    CALL("WHILE", cuGraphAddNode(&c, g, NULL, NULL, 0, &p));
    void *down_args[] = {&h, &dval};
    MUST(add_kernel(&k, p.conditional.phGraph_out[0], NULL, downk, down_args));
    CUgraphExec e;
    CALL("instantiate", cuGraphInstantiateWithFlags(&e, g, 0));
    unsigned starts[2] = {6, 1};
    for (int i = 0; i < 2; i++) {
        put(dval, starts[i]);
        CALL("launch", cuGraphLaunch(e, s));
        CALL("synchronize", cuStreamSynchronize(s));
        SAY("from %u: counter now %u", starts[i], get(dval));
    }
}

static void switch_node(void) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    CUgraphConditionalHandle h;
    MUST(cuGraphConditionalHandleCreate(&h, g, ctx, 0, 0));
    CUgraphNode set, c, k;
    void *set_args[] = {&h, &dval};
    MUST(add_kernel(&set, g, NULL, setk, set_args));
    CUgraphNodeParams p = cond_params(h, CU_GRAPH_COND_TYPE_SWITCH, 3);
    CALL("SWITCH of 3", cuGraphAddNode(&c, g, &set, NULL, 1, &p));
    unsigned vals[3] = {1, 10, 100};
    void *args[3][2] = {{&dout, &vals[0]}, {&dout, &vals[1]}, {&dout, &vals[2]}};
    for (int i = 0; i < 3; i++) MUST(add_kernel(&k, p.conditional.phGraph_out[i], NULL, addk, args[i]));
    CUgraphExec e;
    CALL("instantiate", cuGraphInstantiateWithFlags(&e, g, 0));
    for (unsigned v = 0; v < 5; v++) {
        put(dval, v);
        put(dout, 0);
        CALL("launch", cuGraphLaunch(e, s));
        CALL("synchronize", cuStreamSynchronize(s));
        SAY("condition %u: added %u", v, get(dout));
    }
}

static void body_rules(void) {
    setup();
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    CUgraphConditionalHandle h;
    MUST(cuGraphConditionalHandleCreate(&h, g, ctx, 0, 0));
    CUgraphNode c, a;
    CUgraphNodeParams p = cond_params(h, CU_GRAPH_COND_TYPE_IF, 1);
    MUST(cuGraphAddNode(&c, g, NULL, NULL, 0, &p));
    CUDA_MEM_ALLOC_NODE_PARAMS ap;
    memset(&ap, 0, sizeof ap);
    ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    ap.bytesize = 1 << 20;
    CALL("an allocation node in the body", cuGraphAddMemAllocNode(&a, p.conditional.phGraph_out[0], NULL, 0, &ap));
    CUgraphExec e;
    CALL("instantiate", cuGraphInstantiateWithFlags(&e, g, 0));
    CUgraph c2;
    CALL("clone the graph", cuGraphClone(&c2, g));
    CALL("destroy a body graph", cuGraphDestroy(p.conditional.phGraph_out[0]));
}

/* Conditional nodes and stream capture: cuda.h says bodies "may be populated using graph
 * node creation APIs or cuStreamBeginCaptureToGraph", and that every operation but
 * destroy and node removal is permitted on a graph being captured into. */
static void capture(void) {
    setup();
    CUstream s, side;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    MUST(cuStreamCreate(&side, CU_STREAM_NON_BLOCKING));
    unsigned two = 2, ten = 10, hundred = 100;
    void *two_args[] = {&dout, &two}, *ten_args[] = {&dout, &ten}, *hundred_args[] = {&dout, &hundred};

    /* An IF/ELSE whose bodies are captured, the condition set by a kernel. */
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    CUgraphConditionalHandle h;
    MUST(cuGraphConditionalHandleCreate(&h, g, ctx, 0, 0));
    CUgraphNode set, c;
    void *set_args[] = {&h, &dval};
    MUST(add_kernel(&set, g, NULL, setk, set_args));
    CUgraphNodeParams p = cond_params(h, CU_GRAPH_COND_TYPE_IF, 2);
    MUST(cuGraphAddNode(&c, g, &set, NULL, 1, &p));
    CUgraph then = p.conditional.phGraph_out[0], other = p.conditional.phGraph_out[1];
    if (CALL("capture into the IF body", cuStreamBeginCaptureToGraph(s, then, NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL)) == CUDA_SUCCESS) {
        CALL("  a kernel", cuLaunchKernel(addk, 1, 1, 1, 1, 1, 1, 0, s, two_args, NULL));
        CALL("  a memset", cuMemsetD32Async(dval, 0, 1, s));
        CALL("  a kernel", cuLaunchKernel(addk, 1, 1, 1, 1, 1, 1, 0, s, ten_args, NULL));
        CUgraph got = NULL;
        CALL("  end", cuStreamEndCapture(s, &got));
        SAY("the body given: %s", got == then ? "yes" : got == NULL ? "NULL" : "another");
        size_t count = 99;
        MUST(cuGraphGetNodes(then, NULL, &count));
        SAY("%zu nodes in the body", count);
    }
    if (CALL("capture into the ELSE body", cuStreamBeginCaptureToGraph(s, other, NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL)) == CUDA_SUCCESS) {
        CALL("  a kernel", cuLaunchKernel(addk, 1, 1, 1, 1, 1, 1, 0, s, hundred_args, NULL));
        CUgraph got = NULL;
        CALL("  end", cuStreamEndCapture(s, &got));
    }
    CUgraphExec e;
    if (CALL("instantiate", cuGraphInstantiateWithFlags(&e, g, 0)) == CUDA_SUCCESS) {
        unsigned inputs[2] = {1, 0};
        for (int i = 0; i < 2; i++) {
            put(dval, inputs[i]);
            put(dout, 0);
            CALL("launch", cuGraphLaunch(e, s));
            CALL("synchronize", cuStreamSynchronize(s));
            SAY("condition %u: added %u, condition word now %u", inputs[i], get(dout), get(dval));
        }
    }

    /* A conditional node added into a capture in progress, its body captured on a second
     * stream while the first capture goes on. */
    put(dout, 0);
    if (CALL("begin a capture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL)) == CUDA_SUCCESS) {
        CALL("  a kernel", cuLaunchKernel(addk, 1, 1, 1, 1, 1, 1, 0, s, two_args, NULL));
        CUstreamCaptureStatus status;
        CUgraph cg = NULL;
        const CUgraphNode *deps = NULL;
        size_t ndeps = 0;
        CALL("  capture info", cuStreamGetCaptureInfo(s, &status, NULL, &cg, &deps, NULL, &ndeps));
        SAY("status %d, %zu dependencies", (int)status, ndeps);
        CUgraphConditionalHandle ch;
        CALL("  a handle of the capture's graph", cuGraphConditionalHandleCreate(&ch, cg, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
        CUgraphNode cn = NULL;
        CUgraphNodeParams cp = cond_params(ch, CU_GRAPH_COND_TYPE_IF, 1);
        CUresult r = CALL("  an IF node after them", cuGraphAddNode(&cn, cg, deps, NULL, ndeps, &cp));
        if (r == CUDA_SUCCESS) {
            CALL("  the IF node as the stream's dependency", cuStreamUpdateCaptureDependencies(s, &cn, NULL, 1, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
            if (CALL("  capture its body on another stream", cuStreamBeginCaptureToGraph(side, cp.conditional.phGraph_out[0], NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL)) == CUDA_SUCCESS) {
                CALL("    a kernel", cuLaunchKernel(addk, 1, 1, 1, 1, 1, 1, 0, side, ten_args, NULL));
                CUgraph body = NULL;
                CALL("    end", cuStreamEndCapture(side, &body));
            }
        }
        CALL("  a kernel after the IF", cuLaunchKernel(addk, 1, 1, 1, 1, 1, 1, 0, s, hundred_args, NULL));
        CUgraph got = NULL;
        if (CALL("  end", cuStreamEndCapture(s, &got)) == CUDA_SUCCESS && got) {
            size_t count = 99, edges = 99;
            MUST(cuGraphGetNodes(got, NULL, &count));
            MUST(cuGraphGetEdges(got, NULL, NULL, NULL, &edges));
            SAY("%zu nodes, %zu edges", count, edges);
            CUgraphExec ce;
            if (CALL("  instantiate", cuGraphInstantiateWithFlags(&ce, got, 0)) == CUDA_SUCCESS) {
                CALL("  launch", cuGraphLaunch(ce, s));
                CALL("  synchronize", cuStreamSynchronize(s));
                SAY("added %u", get(dout));
            }
        }
    }

    /* A graph allocation captured into a body (cuGraphAddMemAllocNode there is accepted,
     * and the graph refused at instantiate: section body-rules). */
    CUgraph g2;
    MUST(cuGraphCreate(&g2, 0));
    CUgraphConditionalHandle h2;
    MUST(cuGraphConditionalHandleCreate(&h2, g2, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
    CUgraphNode c2;
    CUgraphNodeParams p2 = cond_params(h2, CU_GRAPH_COND_TYPE_IF, 1);
    MUST(cuGraphAddNode(&c2, g2, NULL, NULL, 0, &p2));
    if (CALL("capture into a body", cuStreamBeginCaptureToGraph(s, p2.conditional.phGraph_out[0], NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL)) == CUDA_SUCCESS) {
        CUdeviceptr a = 0;
        CALL("  cuMemAllocAsync", cuMemAllocAsync(&a, 4096, s));
        CUgraph got = NULL;
        CALL("  end", cuStreamEndCapture(s, &got));
        CUgraphExec e2;
        CALL("instantiate", cuGraphInstantiateWithFlags(&e2, g2, 0));
    }
}

int main(void) {
    section("handles", handles);
    section("nodes", nodes);
    section("if-node", if_node);
    section("while-node", while_node);
    section("switch-node", switch_node);
    section("body-rules", body_rules);
    section("capture", capture);
    return 0;
}
