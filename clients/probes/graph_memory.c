/* Graph memory nodes (cuda.h: cuGraphAddMemAllocNode, cuGraphAddMemFreeNode; the CUDA
 * programming guide's "Graph Memory Nodes"): the device's graph memory attributes after
 * each step (add, instantiate, launch, free, trim, reset), whether an allocation keeps
 * its address across launches, what kernels and copies see of it, stream capture of
 * cuMemAllocAsync/cuMemFreeAsync, and the errors: a launch while an allocation is live,
 * a second executable graph, clone and child graphs, free nodes of foreign or freed
 * pointers, bad allocation parameters.
 *
 * Addresses differ from run to run: only their relations are printed (aligned, equal to
 * an earlier one). The attributes are printed as numbers of bytes. The kernel is PTX
 * text, loaded with cuModuleLoadData: no nvcc needed. Recorded on the H200
 * (ci/gpu-probes.sh), every section, host-and-managed (allocation nodes of host and
 * managed memory, cuda.core's GraphMemoryType HOST and MANAGED) included. No multicast
 * API is called. */
#include "probe.h"

#define MIB (1ull << 20)

static const char *ptx =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .entry fill(.param .u64 p, .param .u32 n, .param .u32 v)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<6>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [p];\n"
    "  ld.param.u32 %r1, [n];\n"
    "  ld.param.u32 %r2, [v];\n"
    "  mov.u32 %r3, %tid.x;\n"
    "  mov.u32 %r4, %ctaid.x;\n"
    "  mov.u32 %r5, %ntid.x;\n"
    "  mad.lo.u32 %r3, %r4, %r5, %r3;\n"
    "  setp.ge.u32 %p1, %r3, %r1;\n"
    "  @%p1 bra DONE;\n"
    "  mul.wide.u32 %rd2, %r3, 4;\n"
    "  add.u64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r2;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

static CUcontext ctx;
static CUfunction fillk;

static void setup(void) {
    init_primary(0, &ctx);
    CUmodule m;
    MUST(cuModuleLoadData(&m, ptx));
    MUST(cuModuleGetFunction(&fillk, m, "fill"));
}

static const char *attr_names[] = {"USED_MEM_CURRENT", "USED_MEM_HIGH", "RESERVED_MEM_CURRENT",
                                   "RESERVED_MEM_HIGH"};

/* The four attributes of device 0, in bytes, after `when`. */
static void attrs(const char *when) {
    printf("  attributes %s:", when);
    for (int a = 0; a < 4; a++) {
        cuuint64_t v = SENTINEL;
        CUresult r = cuDeviceGetGraphMemAttribute(0, (CUgraphMem_attribute)a, &v);
        if (r != CUDA_SUCCESS)
            printf(" %s=%s", attr_names[a], rname(r));
        else
            printf(" %s=%llu", attr_names[a], (unsigned long long)v);
    }
    printf("\n");
    fflush(stdout);
}

static CUDA_MEM_ALLOC_NODE_PARAMS alloc_params(size_t bytes) {
    CUDA_MEM_ALLOC_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.poolProps.location.id = 0;
    p.bytesize = bytes;
    return p;
}

/* A kernel node filling `n` u32 at `p` with `v`; its parameters are copied when added. */
static CUresult add_fill(CUgraphNode *node, CUgraph g, CUgraphNode *deps, size_t ndeps,
                         CUdeviceptr p, unsigned n, unsigned v) {
    void *args[] = {&p, &n, &v};
    CUDA_KERNEL_NODE_PARAMS k;
    memset(&k, 0, sizeof k);
    k.func = fillk;
    k.gridDimX = (n + 255) / 256;
    k.gridDimY = k.gridDimZ = 1;
    k.blockDimX = 256;
    k.blockDimY = k.blockDimZ = 1;
    k.kernelParams = args;
    return cuGraphAddKernelNode(node, g, deps, ndeps, &k);
}

/* A graph: alloc (bytes) -> fill -> [free]. */
static CUgraph alloc_fill_graph(size_t bytes, int with_free, CUdeviceptr *dptr) {
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS p = alloc_params(bytes);
    CUgraphNode a, k, f;
    MUST(cuGraphAddMemAllocNode(&a, g, NULL, 0, &p));
    MUST(add_fill(&k, g, &a, 1, p.dptr, (unsigned)(bytes / 4), 7));
    if (with_free) MUST(cuGraphAddMemFreeNode(&f, g, &k, 1, p.dptr));
    *dptr = p.dptr;
    return g;
}

static void yes_no(const char *what, int v) { SAY("%s: %s", what, v ? "yes" : "no"); }

static void attributes_at_start(void) {
    setup();
    attrs("at start");
    cuuint64_t v = SENTINEL;
    CALL("get USED_MEM_CURRENT of device 99", cuDeviceGetGraphMemAttribute(99, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &v));
    CALL("get attribute 99", cuDeviceGetGraphMemAttribute(0, (CUgraphMem_attribute)99, &v));
    OUT(v);
    CALL("trim device 0 with nothing to trim", cuDeviceGraphMemTrim(0));
    CALL("trim device 99", cuDeviceGraphMemTrim(99));
}

static void set_attributes(void) {
    setup();
    cuuint64_t zero = 0, five = 5;
    CALL("set USED_MEM_HIGH to 0", cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &zero));
    CALL("set RESERVED_MEM_HIGH to 0", cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &zero));
    CALL("set USED_MEM_HIGH to 5", cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &five));
    CALL("set USED_MEM_CURRENT to 0", cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &zero));
    CALL("set RESERVED_MEM_CURRENT to 0", cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &zero));
    CALL("set USED_MEM_HIGH of device 99", cuDeviceSetGraphMemAttribute(99, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &zero));
    attrs("after the sets");
}

static void alloc_node(void) {
    setup();
    CUgraph gr;
    MUST(cuGraphCreate(&gr, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS p = alloc_params(MIB);
    p.dptr = SENTINEL;
    CUgraphNode a;
    CALL("add alloc node of 1 MiB", cuGraphAddMemAllocNode(&a, gr, NULL, 0, &p));
    yes_no("dptr set", p.dptr != SENTINEL && p.dptr != 0);
    yes_no("dptr aligned to the granularity", p.dptr % g == 0);
    CUgraphNodeType t;
    CALL("node type", cuGraphNodeGetType(a, &t));
    SAY("type = %d", (int)t);
    CUDA_MEM_ALLOC_NODE_PARAMS q;
    memset(&q, 0xA5, sizeof q);
    CALL("get params", cuGraphMemAllocNodeGetParams(a, &q));
    yes_no("same dptr", q.dptr == p.dptr);
    SAY("bytesize = %zu, accessDescCount = %zu, accessDescs %s", q.bytesize, q.accessDescCount,
        q.accessDescs ? "set" : "NULL");
    SAY("poolProps: allocType %d handleTypes %d location (%d, %d) maxSize %zu", (int)q.poolProps.allocType,
        (int)q.poolProps.handleTypes, (int)q.poolProps.location.type, q.poolProps.location.id,
        q.poolProps.maxSize);
    attrs("after adding the node");
    CUdeviceptr base = 0;
    size_t size = 0;
    CALL("address range of dptr before any launch", cuMemGetAddressRange(&base, &size, p.dptr));
    CUgraphNode f;
    CALL("add free node", cuGraphAddMemFreeNode(&f, gr, &a, 1, p.dptr));
    CUdeviceptr fd = 0;
    CALL("free node get params", cuGraphMemFreeNodeGetParams(f, &fd));
    yes_no("free node's dptr is the allocation's", fd == p.dptr);
    CALL("free node type", cuGraphNodeGetType(f, &t));
    SAY("type = %d", (int)t);
    CALL("alloc params of the free node", cuGraphMemAllocNodeGetParams(f, &q));
    CALL("free params of the alloc node", cuGraphMemFreeNodeGetParams(a, &fd));
    CUDA_MEM_ALLOC_NODE_PARAMS p2 = alloc_params(3 * MIB + 1);
    CUgraphNode a2;
    CALL("add alloc node of 3 MiB + 1", cuGraphAddMemAllocNode(&a2, gr, NULL, 0, &p2));
    yes_no("second dptr differs", p2.dptr != p.dptr);
    yes_no("second dptr aligned to the granularity", p2.dptr % g == 0);
    CALL("destroy the graph", cuGraphDestroy(gr));
    attrs("after destroying the graph");
}

static void alloc_node_errors(void) {
    setup();
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    CUgraphNode a;
    CUDA_MEM_ALLOC_NODE_PARAMS p = alloc_params(0);
    CALL("bytesize 0", cuGraphAddMemAllocNode(&a, g, NULL, 0, &p));
    p = alloc_params(MIB);
    p.poolProps.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CALL("handleTypes POSIX_FILE_DESCRIPTOR", cuGraphAddMemAllocNode(&a, g, NULL, 0, &p));
    p = alloc_params(MIB);
    p.poolProps.location.id = 99;
    CALL("location device 99", cuGraphAddMemAllocNode(&a, g, NULL, 0, &p));
    p = alloc_params(MIB);
    p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_INVALID;
    CALL("allocType INVALID", cuGraphAddMemAllocNode(&a, g, NULL, 0, &p));
    p = alloc_params(MIB);
    CUmemAccessDesc d[2] = {access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE),
                            access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)};
    p.accessDescs = d;
    p.accessDescCount = 1;
    CALL("one access descriptor (device 0, read-write)", cuGraphAddMemAllocNode(&a, g, NULL, 0, &p));
    p = alloc_params(MIB);
    p.accessDescs = d;
    p.accessDescCount = 2;
    CALL("two access descriptors on a one-GPU host", cuGraphAddMemAllocNode(&a, g, NULL, 0, &p));
    p = alloc_params(MIB);
    CALL("NULL graph", cuGraphAddMemAllocNode(&a, NULL, NULL, 0, &p));
    CALL("NULL nodeParams", cuGraphAddMemAllocNode(&a, g, NULL, 0, NULL));
    size_t n = 0;
    MUST(cuGraphGetNodes(g, NULL, &n));
    SAY("nodes in the graph: %zu", n);
}

static void launch_and_trim(void) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr dptr;
    CUgraph g = alloc_fill_graph(MIB, 1, &dptr);
    attrs("after building alloc -> fill -> free");
    CUgraphExec e;
    CALL("instantiate", cuGraphInstantiateWithFlags(&e, g, 0));
    attrs("after instantiate");
    CALL("launch", cuGraphLaunch(e, s));
    CALL("synchronize", cuStreamSynchronize(s));
    attrs("after the first launch");
    CALL("launch again", cuGraphLaunch(e, s));
    CALL("synchronize", cuStreamSynchronize(s));
    attrs("after the second launch");
    CALL("trim", cuDeviceGraphMemTrim(0));
    attrs("after trim");
    cuuint64_t zero = 0;
    CALL("reset USED_MEM_HIGH", cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &zero));
    CALL("reset RESERVED_MEM_HIGH", cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &zero));
    attrs("after resetting the highs");
    CALL("launch after trim", cuGraphLaunch(e, s));
    CALL("synchronize", cuStreamSynchronize(s));
    attrs("after the launch after trim");
    CALL("destroy the executable graph", cuGraphExecDestroy(e));
    CALL("destroy the graph", cuGraphDestroy(g));
    attrs("after destroying both");
    CALL("trim", cuDeviceGraphMemTrim(0));
    attrs("after trim");
}

static void unfreed_allocation(void) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr dptr;
    CUgraph g = alloc_fill_graph(MIB, 0, &dptr);
    CUgraphExec e;
    MUST(cuGraphInstantiateWithFlags(&e, g, 0));
    CALL("launch", cuGraphLaunch(e, s));
    unsigned host[4] = {0};
    CALL("copy the allocation back on the stream", cuMemcpyDtoHAsync(host, dptr, sizeof host, s));
    CALL("synchronize", cuStreamSynchronize(s));
    SAY("the kernel wrote: %u %u %u %u", host[0], host[1], host[2], host[3]);
    attrs("after the launch (allocation live)");
    CUdeviceptr base = 0;
    size_t size = 0;
    CALL("address range of dptr + 100", cuMemGetAddressRange(&base, &size, dptr + 100));
    yes_no("range starts at dptr", base == dptr);
    SAY("range size = %zu", size);
    CALL("launch while the allocation is live", cuGraphLaunch(e, s));
    CALL("synchronize", cuStreamSynchronize(s));
    CALL("cuMemFreeAsync of the allocation", cuMemFreeAsync(dptr, s));
    CALL("synchronize", cuStreamSynchronize(s));
    attrs("after cuMemFreeAsync");
    CALL("cuMemFreeAsync again", cuMemFreeAsync(dptr, s));
    CALL("synchronize", cuStreamSynchronize(s));
    CALL("launch after the free", cuGraphLaunch(e, s));
    CALL("synchronize", cuStreamSynchronize(s));
    CUDA_MEM_ALLOC_NODE_PARAMS q;
    CUgraphNode nodes[3];
    size_t n = 3;
    MUST(cuGraphGetNodes(g, nodes, &n));
    CALL("get params", cuGraphMemAllocNodeGetParams(nodes[0], &q));
    yes_no("the address is the same as at the node's creation", q.dptr == dptr);
    CALL("cuMemsetD32 of the allocation after the launch", cuMemsetD32(dptr, 9, 4));
    CALL("cuMemcpyDtoH", cuMemcpyDtoH(host, dptr, sizeof host));
    SAY("read back: %u %u %u %u", host[0], host[1], host[2], host[3]);
    CALL("cuMemFree of the allocation", cuMemFree(dptr));
    attrs("after cuMemFree");
    CALL("cuMemFree again", cuMemFree(dptr));
    CALL("destroy the graph while nothing is live", cuGraphDestroy(g));
    CALL("launch after the graph is destroyed", cuGraphLaunch(e, s));
    CALL("synchronize", cuStreamSynchronize(s));
    CALL("copy from the allocation after that launch", cuMemcpyDtoH(host, dptr, sizeof host));
    SAY("read back: %u %u %u %u", host[0], host[1], host[2], host[3]);
    CALL("destroy the executable graph with its allocation live", cuGraphExecDestroy(e));
    attrs("after destroying it");
    CALL("cuMemFree after both are gone", cuMemFree(dptr));
    attrs("after that free");
}

static void auto_free_on_launch(void) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr dptr;
    CUgraph g = alloc_fill_graph(MIB, 0, &dptr);
    CUgraphExec e;
    CALL("instantiate with AUTO_FREE_ON_LAUNCH", cuGraphInstantiateWithFlags(&e, g, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH));
    CALL("launch", cuGraphLaunch(e, s));
    CALL("launch again", cuGraphLaunch(e, s));
    CALL("synchronize", cuStreamSynchronize(s));
    attrs("after two launches");
    unsigned host[2] = {0};
    CALL("cuMemcpyDtoH", cuMemcpyDtoH(host, dptr, sizeof host));
    SAY("read back: %u %u", host[0], host[1]);
    CALL("cuMemFreeAsync", cuMemFreeAsync(dptr, s));
    CALL("synchronize", cuStreamSynchronize(s));
    attrs("after the free");
    CALL("destroy the executable graph", cuGraphExecDestroy(e));
    CUgraphExec e2;
    CALL("instantiate with AUTO_FREE_ON_LAUNCH | DEVICE_LAUNCH",
         cuGraphInstantiateWithFlags(&e2, g, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH));
}

static void instantiate_rules(void) {
    setup();
    CUdeviceptr dptr;
    CUgraph g = alloc_fill_graph(MIB, 1, &dptr);
    CUgraphExec e, e2;
    CALL("instantiate", cuGraphInstantiateWithFlags(&e, g, 0));
    CALL("instantiate a second time", cuGraphInstantiateWithFlags(&e2, g, 0));
    CUDA_GRAPH_INSTANTIATE_PARAMS ip;
    memset(&ip, 0, sizeof ip);
    CALL("instantiate with params a second time", cuGraphInstantiateWithParams(&e2, g, &ip));
    SAY("result_out = %d", (int)ip.result_out);
    CALL("destroy the first", cuGraphExecDestroy(e));
    CALL("instantiate after destroying it", cuGraphInstantiateWithFlags(&e2, g, 0));
    CUgraph c;
    CALL("clone", cuGraphClone(&c, g));
    CUgraph parent;
    MUST(cuGraphCreate(&parent, 0));
    CUgraphNode child;
    CALL("as a child graph", cuGraphAddChildGraphNode(&child, parent, NULL, 0, g));
    CUgraph plain;
    MUST(cuGraphCreate(&plain, 0));
    CUgraphNode empty;
    MUST(cuGraphAddEmptyNode(&empty, plain, NULL, 0));
    CUgraphExec pe, pe2;
    CALL("instantiate a graph without memory nodes", cuGraphInstantiateWithFlags(&pe, plain, 0));
    CALL("and a second time", cuGraphInstantiateWithFlags(&pe2, plain, 0));
}

static void free_node_errors(void) {
    setup();
    CUgraph g, h;
    MUST(cuGraphCreate(&g, 0));
    MUST(cuGraphCreate(&h, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS p = alloc_params(MIB);
    CUgraphNode a, f;
    MUST(cuGraphAddMemAllocNode(&a, g, NULL, 0, &p));
    CUdeviceptr plain;
    MUST(cuMemAlloc(&plain, MIB));
    CALL("free node of cuMemAlloc memory", cuGraphAddMemFreeNode(&f, g, NULL, 0, plain));
    CALL("free node of 0", cuGraphAddMemFreeNode(&f, g, NULL, 0, 0));
    CALL("free node of dptr + 256", cuGraphAddMemFreeNode(&f, g, &a, 1, p.dptr + 256));
    CALL("free node of dptr in another graph", cuGraphAddMemFreeNode(&f, h, NULL, 0, p.dptr));
    CALL("then in its own graph", cuGraphAddMemFreeNode(&f, g, &a, 1, p.dptr));
    CALL("and a second time in the other graph", cuGraphAddMemFreeNode(&f, h, NULL, 0, p.dptr));
    CUDA_MEM_ALLOC_NODE_PARAMS p2 = alloc_params(MIB);
    CUgraphNode a2;
    MUST(cuGraphAddMemAllocNode(&a2, g, NULL, 0, &p2));
    CALL("free node of a second allocation in its own graph", cuGraphAddMemFreeNode(&f, g, &a2, 1, p2.dptr));
    CALL("and again in its own graph", cuGraphAddMemFreeNode(&f, g, &a2, 1, p2.dptr));
    CALL("and in the other graph", cuGraphAddMemFreeNode(&f, h, NULL, 0, p2.dptr));
    CUDA_MEM_ALLOC_NODE_PARAMS p3 = alloc_params(MIB);
    CUgraphNode a3;
    MUST(cuGraphAddMemAllocNode(&a3, g, NULL, 0, &p3));
    CALL("free node with no dependency on the allocation", cuGraphAddMemFreeNode(&f, g, NULL, 0, p3.dptr));
    CALL("cuMemFreeAsync of an allocation never launched", cuMemFreeAsync(p2.dptr, NULL));
    CALL("cuMemFree of an allocation never launched", cuMemFree(p2.dptr));
}

/* Graph g allocates and leaves it live; graph h frees it. */
static void free_in_another_graph(void) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr dptr;
    CUgraph g = alloc_fill_graph(MIB, 0, &dptr);
    CUgraph h;
    MUST(cuGraphCreate(&h, 0));
    CUgraphNode f;
    CALL("free node in another graph", cuGraphAddMemFreeNode(&f, h, NULL, 0, dptr));
    CUgraphExec eg, eh;
    MUST(cuGraphInstantiateWithFlags(&eg, g, 0));
    CALL("instantiate the freeing graph", cuGraphInstantiateWithFlags(&eh, h, 0));
    CALL("launch the freeing graph first", cuGraphLaunch(eh, s));
    CALL("synchronize", cuStreamSynchronize(s));
    CALL("launch the allocating graph", cuGraphLaunch(eg, s));
    CALL("synchronize", cuStreamSynchronize(s));
    attrs("after the allocating graph");
    CALL("launch the freeing graph", cuGraphLaunch(eh, s));
    CALL("synchronize", cuStreamSynchronize(s));
    attrs("after the freeing graph");
    CALL("launch the allocating graph again", cuGraphLaunch(eg, s));
    CALL("synchronize", cuStreamSynchronize(s));
    CALL("cuMemFreeAsync of an allocation another graph frees", cuMemFreeAsync(dptr, s));
    CALL("synchronize", cuStreamSynchronize(s));
}

static void two_graphs(void) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr d1, d2;
    CUgraph g1 = alloc_fill_graph(MIB, 1, &d1);
    CUgraph g2 = alloc_fill_graph(MIB, 1, &d2);
    yes_no("the two allocations have different addresses", d1 != d2);
    CUgraphExec e1, e2;
    MUST(cuGraphInstantiateWithFlags(&e1, g1, 0));
    MUST(cuGraphInstantiateWithFlags(&e2, g2, 0));
    CALL("launch the first", cuGraphLaunch(e1, s));
    CALL("launch the second", cuGraphLaunch(e2, s));
    CALL("synchronize", cuStreamSynchronize(s));
    attrs("after both, one stream");
    CUdeviceptr d3, d4;
    CUgraph g3 = alloc_fill_graph(4 * MIB, 0, &d3);
    CUgraph g4 = alloc_fill_graph(4 * MIB, 0, &d4);
    CUgraphExec e3, e4;
    MUST(cuGraphInstantiateWithFlags(&e3, g3, 0));
    MUST(cuGraphInstantiateWithFlags(&e4, g4, 0));
    CALL("launch a graph leaving 4 MiB live", cuGraphLaunch(e3, s));
    CALL("launch another", cuGraphLaunch(e4, s));
    CALL("synchronize", cuStreamSynchronize(s));
    attrs("with 8 MiB live");
    CALL("free one", cuMemFreeAsync(d3, s));
    CALL("synchronize", cuStreamSynchronize(s));
    CALL("trim", cuDeviceGraphMemTrim(0));
    attrs("after freeing one and trimming");
    CALL("free the other", cuMemFree(d4));
    CALL("trim", cuDeviceGraphMemTrim(0));
    attrs("after freeing the other and trimming");
}

static void capture(void) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CALL("begin capture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CUdeviceptr p = SENTINEL, z = SENTINEL;
    CALL("cuMemAllocAsync of 1 MiB", cuMemAllocAsync(&p, MIB, s));
    yes_no("address set", p != SENTINEL && p != 0);
    yes_no("aligned to the granularity", p % g == 0);
    attrs("after the captured allocation");
    unsigned n = MIB / 4, v = 5;
    void *args[] = {&p, &n, &v};
    CALL("launch fill", cuLaunchKernel(fillk, n / 256, 1, 1, 256, 1, 1, 0, s, args, NULL));
    CALL("cuMemAllocAsync of 0 bytes", cuMemAllocAsync(&z, 0, s));
    OUT(z);
    CALL("cuMemFreeAsync", cuMemFreeAsync(p, s));
    CUgraph gr;
    CALL("end capture", cuStreamEndCapture(s, &gr));
    size_t count = 0;
    MUST(cuGraphGetNodes(gr, NULL, &count));
    CUgraphNode nodes[8];
    if (count > 8) count = 8;
    MUST(cuGraphGetNodes(gr, nodes, &count));
    printf("  node types:");
    for (size_t i = 0; i < count; i++) {
        CUgraphNodeType t;
        MUST(cuGraphNodeGetType(nodes[i], &t));
        printf(" %d", (int)t);
    }
    printf("\n");
    CUDA_MEM_ALLOC_NODE_PARAMS q;
    CALL("alloc params of the first node", cuGraphMemAllocNodeGetParams(nodes[0], &q));
    yes_no("its address is cuMemAllocAsync's", q.dptr == p);
    SAY("bytesize = %zu, accessDescCount = %zu, location (%d, %d)", q.bytesize, q.accessDescCount,
        (int)q.poolProps.location.type, q.poolProps.location.id);
    CUgraphExec e;
    CALL("instantiate", cuGraphInstantiateWithFlags(&e, gr, 0));
    CALL("launch", cuGraphLaunch(e, s));
    CALL("synchronize", cuStreamSynchronize(s));
    attrs("after its launch");
}

static void capture_errors(void) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr plain;
    MUST(cuMemAlloc(&plain, MIB));
    CALL("begin capture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CALL("cuMemFreeAsync of cuMemAlloc memory", cuMemFreeAsync(plain, s));
    CUgraph g = NULL;
    CALL("end capture", cuStreamEndCapture(s, &g));
    CALL("begin capture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CUdeviceptr p = 0;
    CALL("cuMemAllocAsync of 1 MiB, left live", cuMemAllocAsync(&p, MIB, s));
    CALL("end capture", cuStreamEndCapture(s, &g));
    CUgraphExec e;
    CALL("instantiate", cuGraphInstantiateWithFlags(&e, g, 0));
    CALL("launch", cuGraphLaunch(e, s));
    CALL("synchronize", cuStreamSynchronize(s));
    CALL("begin capture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CALL("cuMemFreeAsync of the live graph allocation", cuMemFreeAsync(p, s));
    CUgraph h = NULL;
    CALL("end capture", cuStreamEndCapture(s, &h));
    CUgraphExec eh;
    CALL("instantiate the freeing graph", cuGraphInstantiateWithFlags(&eh, h, 0));
    CALL("launch it", cuGraphLaunch(eh, s));
    CALL("synchronize", cuStreamSynchronize(s));
    attrs("after the captured free ran");
    CALL("launch the allocating graph again", cuGraphLaunch(e, s));
    CALL("synchronize", cuStreamSynchronize(s));
}

/* cuStreamBeginCaptureToGraph into a graph that holds an allocation node: a captured
 * cuMemAllocAsync, kernels on both allocations, a copy out, and captured frees of both
 * (the graph's own node's address among them). */
static void capture_to_graph(void) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr out;
    MUST(cuMemAlloc(&out, 8));
    MUST(cuMemsetD8(out, 0, 8));
    CUgraph gr;
    MUST(cuGraphCreate(&gr, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS ap;
    memset(&ap, 0, sizeof ap);
    ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    ap.bytesize = MIB;
    CUgraphNode an;
    MUST(cuGraphAddMemAllocNode(&an, gr, NULL, 0, &ap));
    CUdeviceptr first = ap.dptr;
    if (CALL("begin capture to the graph", cuStreamBeginCaptureToGraph(s, gr, &an, NULL, 1, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)) != CUDA_SUCCESS)
        return;
    CUdeviceptr p = SENTINEL;
    CALL("cuMemAllocAsync of 1 MiB", cuMemAllocAsync(&p, MIB, s));
    yes_no("address set", p != SENTINEL && p != 0);
    yes_no("another than the node's", p != first);
    attrs("after the captured allocation");
    unsigned n = MIB / 4, v1 = 3, v2 = 4;
    void *a1[] = {&first, &n, &v1}, *a2[] = {&p, &n, &v2};
    CALL("fill the node's allocation", cuLaunchKernel(fillk, n / 256, 1, 1, 256, 1, 1, 0, s, a1, NULL));
    CALL("fill the captured one", cuLaunchKernel(fillk, n / 256, 1, 1, 256, 1, 1, 0, s, a2, NULL));
    CALL("copy a word of each out", cuMemcpyDtoDAsync(out, first, 4, s));
    CALL("  and of the other", cuMemcpyDtoDAsync(out + 4, p, 4, s));
    CALL("cuMemFreeAsync of the node's allocation", cuMemFreeAsync(first, s));
    CALL("cuMemFreeAsync of the captured one", cuMemFreeAsync(p, s));
    CUgraph got = NULL;
    CALL("end capture", cuStreamEndCapture(s, &got));
    yes_no("the graph given", got == gr);
    size_t count = 0;
    MUST(cuGraphGetNodes(gr, NULL, &count));
    CUgraphNode nodes[16];
    if (count > 16) count = 16;
    MUST(cuGraphGetNodes(gr, nodes, &count));
    printf("  node types:");
    for (size_t i = 0; i < count; i++) {
        CUgraphNodeType t;
        MUST(cuGraphNodeGetType(nodes[i], &t));
        printf(" %d", (int)t);
    }
    printf("\n");
    CUgraphExec e;
    if (CALL("instantiate", cuGraphInstantiateWithFlags(&e, gr, 0)) != CUDA_SUCCESS) return;
    for (int i = 0; i < 2; i++) {
        MUST(cuMemsetD8(out, 0, 8));
        CALL("launch", cuGraphLaunch(e, s));
        CALL("synchronize", cuStreamSynchronize(s));
        unsigned w[2] = {0, 0};
        MUST(cuMemcpyDtoH(w, out, 8));
        SAY("words %u %u", w[0], w[1]);
    }
    attrs("after two launches");
    MUST(cuGraphExecDestroy(e));
    MUST(cuGraphDestroy(gr));
    CALL("trim", cuDeviceGraphMemTrim(0));
    attrs("after the graph was destroyed and memory trimmed");
    MUST(cuMemFree(out));
    MUST(cuStreamDestroy(s));
}

/* Graph user objects (cuUserObjectCreate and kin): what the driver refuses, and when
 * the destructor runs as references go (the graph's, then its executable graph's). The
 * destructor sets a flag; the probe polls it for up to two seconds (it runs on the
 * driver's thread, asynchronously). */
/* Graph allocations of host and managed memory (cuda.core's GraphMemoryType HOST and
 * MANAGED): which pool properties cuGraphAddMemAllocNode takes, and where it does, what
 * the allocation is once the graph ran: its memory type, whether it is managed, whether
 * a kernel node wrote it, the attributes (which count device memory). */
static void host_and_managed_one(const char *what, CUmemAllocationType type,
                                 CUmemLocationType loc, int id, int host_access) {
    SAY("-- %s", what);
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS p = alloc_params(MIB);
    p.poolProps.allocType = type;
    p.poolProps.location.type = loc;
    p.poolProps.location.id = id;
    CUmemAccessDesc d = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    if (host_access) {
        p.accessDescs = &d;
        p.accessDescCount = 1;
    }
    CUgraphNode a, k;
    CUresult r = cuGraphAddMemAllocNode(&a, g, NULL, 0, &p);
    SAY("add the allocation node = %s", rname(r));
    if (r != CUDA_SUCCESS) {
        MUST(cuGraphDestroy(g));
        return;
    }
    yes_no("dptr set", p.dptr != 0);
    CUDA_MEM_ALLOC_NODE_PARAMS back;
    memset(&back, 0, sizeof back);
    CALL("get the node's parameters", cuGraphMemAllocNodeGetParams(a, &back));
    SAY("  back: allocType %d location (%d, %d) same dptr %s", (int)back.poolProps.allocType,
        (int)back.poolProps.location.type, back.poolProps.location.id,
        back.dptr == p.dptr ? "yes" : "no");
    MUST(add_fill(&k, g, &a, 1, p.dptr, (unsigned)(MIB / 4), 7));
    CUgraphExec e;
    r = cuGraphInstantiateWithFlags(&e, g, 0);
    SAY("instantiate = %s", rname(r));
    if (r != CUDA_SUCCESS) {
        MUST(cuGraphDestroy(g));
        return;
    }
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CALL("launch", cuGraphLaunch(e, s));
    CALL("synchronize", cuStreamSynchronize(s));
    attrs("after the launch");
    unsigned mt = 0, managed = 0;
    CALL("memory type", cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p.dptr));
    SAY("  memory type %u", mt);
    CALL("is managed", cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p.dptr));
    SAY("  is managed %u", managed);
    unsigned word = 0;
    CALL("copy the last word to the host", cuMemcpyDtoH(&word, p.dptr + MIB - 4, 4));
    SAY("  last word %u", word);
    CALL("free the allocation outside the graph", cuMemFreeAsync(p.dptr, s));
    CALL("synchronize", cuStreamSynchronize(s));
    MUST(cuGraphExecDestroy(e));
    MUST(cuGraphDestroy(g));
    MUST(cuStreamDestroy(s));
    CALL("trim", cuDeviceGraphMemTrim(0));
}

static void host_and_managed(void) {
    setup();
    host_and_managed_one("pinned, device 0", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_DEVICE, 0, 0);
    host_and_managed_one("pinned, host", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST, 0, 0);
    host_and_managed_one("pinned, host, device 0 read-write", CU_MEM_ALLOCATION_TYPE_PINNED,
                         CU_MEM_LOCATION_TYPE_HOST, 0, 1);
    host_and_managed_one("pinned, host NUMA 0", CU_MEM_ALLOCATION_TYPE_PINNED,
                         CU_MEM_LOCATION_TYPE_HOST_NUMA, 0, 0);
    host_and_managed_one("pinned, host NUMA current", CU_MEM_ALLOCATION_TYPE_PINNED,
                         CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0, 0);
    host_and_managed_one("managed, device 0", CU_MEM_ALLOCATION_TYPE_MANAGED,
                         CU_MEM_LOCATION_TYPE_DEVICE, 0, 0);
    host_and_managed_one("managed, no location", CU_MEM_ALLOCATION_TYPE_MANAGED,
                         CU_MEM_LOCATION_TYPE_NONE, 0, 0);
    host_and_managed_one("managed, host", CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_HOST, 0, 0);
    attrs("at the end");
}

/* A free node added to a graph after it was instantiated: before its first launch, and
 * after a launch left the allocation live. */
static void free_node_after_instantiate(void) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    static const char *when[] = {"never instantiated", "instantiated, not launched", "launched"};
    for (int own_first = 1; own_first >= 0; own_first--) {
        for (int stage = 0; stage < 3; stage++) {
            SAY("-- %s, %s first", when[stage], own_first ? "its own graph" : "another graph");
            CUgraph g, g2;
            MUST(cuGraphCreate(&g, 0));
            MUST(cuGraphCreate(&g2, 0));
            CUDA_MEM_ALLOC_NODE_PARAMS p = alloc_params(MIB);
            CUgraphNode a, k, f;
            MUST(cuGraphAddMemAllocNode(&a, g, NULL, 0, &p));
            MUST(add_fill(&k, g, &a, 1, p.dptr, (unsigned)(MIB / 4), 7));
            CUgraphExec e = NULL;
            if (stage >= 1) MUST(cuGraphInstantiateWithFlags(&e, g, 0));
            if (stage == 2) {
                CALL("launch", cuGraphLaunch(e, s));
                CALL("synchronize", cuStreamSynchronize(s));
            }
            for (int i = 0; i < 2; i++) {
                if ((i == 0) == own_first)
                    CALL("add a free node to its own graph", cuGraphAddMemFreeNode(&f, g, &k, 1, p.dptr));
                else
                    CALL("add a free node to another graph", cuGraphAddMemFreeNode(&f, g2, NULL, 0, p.dptr));
            }
            if (e) MUST(cuGraphExecDestroy(e));
            if (stage == 2) {
                CALL("free it", cuMemFreeAsync(p.dptr, s));
                CALL("synchronize", cuStreamSynchronize(s));
            }
            MUST(cuGraphDestroy(g2));
            MUST(cuGraphDestroy(g));
        }
    }
    MUST(cuStreamDestroy(s));
    CALL("trim", cuDeviceGraphMemTrim(0));
}

static volatile int user_object_destroyed;
static void CUDA_CB user_object_destroy(void *p) {
    (void)p;
    user_object_destroyed = 1;
}
static int user_object_destroyed_within_2s(void) {
    for (int i = 0; i < 200 && !user_object_destroyed; i++) usleep(10000);
    return user_object_destroyed;
}
static void user_objects(void) {
    CUcontext ctx;
    MUST(cuInit(0));
    MUST(cuDevicePrimaryCtxRetain(&ctx, 0));
    MUST(cuCtxSetCurrent(ctx));
    CUuserObject o;
    CALL("cuUserObjectCreate(flags 0)", cuUserObjectCreate(&o, NULL, user_object_destroy, 1, 0));
    CALL("cuUserObjectCreate(initialRefcount 0)",
         cuUserObjectCreate(&o, NULL, user_object_destroy, 0, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
    CALL("cuUserObjectCreate(destroy NULL)",
         cuUserObjectCreate(&o, NULL, NULL, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
    CALL("cuUserObjectCreate(refs 1)",
         cuUserObjectCreate(&o, NULL, user_object_destroy, 1, CU_USER_OBJECT_NO_DESTRUCTOR_SYNC));
    CALL("cuUserObjectRetain(count 0)", cuUserObjectRetain(o, 0));
    CALL("cuUserObjectRetain(count 1)", cuUserObjectRetain(o, 1));
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    CALL("cuGraphRetainUserObject(flags 2)", cuGraphRetainUserObject(g, o, 1, 2));
    CALL("cuGraphRetainUserObject(count 0)", cuGraphRetainUserObject(g, o, 0, 0));
    CALL("cuGraphRetainUserObject(move 1)", cuGraphRetainUserObject(g, o, 1, CU_GRAPH_USER_OBJECT_MOVE));
    CALL("cuGraphReleaseUserObject(count 0)", cuGraphReleaseUserObject(g, o, 0));
    CALL("cuUserObjectRelease(count 1, the program's last)", cuUserObjectRelease(o, 1));
    SAY("destroyed after the program's last release: %d", user_object_destroyed_within_2s());
    CUgraphNode n;
    MUST(cuGraphAddEmptyNode(&n, g, NULL, 0));
    CUgraphExec e;
    MUST(cuGraphInstantiate(&e, g, 0));
    MUST(cuGraphLaunch(e, 0));
    CALL("cuGraphDestroy", cuGraphDestroy(g));
    SAY("destroyed after the graph: %d", user_object_destroyed_within_2s());
    CALL("cuGraphExecDestroy", cuGraphExecDestroy(e));
    MUST(cuCtxSynchronize());
    SAY("destroyed after the executable graph: %d", user_object_destroyed_within_2s());
}

/* An allocation node ordered after the free of another: does it take the freed address
 * (the programming guide says CUDA reuses virtual addresses within a graph so;
 * cuda-samples graphMemoryFootprint prints whether it did)? One not ordered after the
 * free; a free node for each node at the address; removing a dependency then. */
static void address_reuse(void) {
    setup();
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS p = alloc_params(MIB);
    CUgraphNode a, fa, b, c, fb, f3, d;
    CALL("add alloc node a", cuGraphAddMemAllocNode(&a, g, NULL, 0, &p));
    CUdeviceptr pa = p.dptr;
    CALL("add free node of a after a", cuGraphAddMemFreeNode(&fa, g, &a, 1, pa));
    p = alloc_params(MIB);
    CALL("add alloc node b after the free of a", cuGraphAddMemAllocNode(&b, g, &fa, 1, &p));
    CUdeviceptr pb = p.dptr;
    yes_no("b has a's address", pb == pa);
    p = alloc_params(MIB);
    CALL("add alloc node c after a only", cuGraphAddMemAllocNode(&c, g, &a, 1, &p));
    yes_no("c has a's address", p.dptr == pa);
    CALL("add free node of b after b", cuGraphAddMemFreeNode(&fb, g, &b, 1, pb));
    CALL("add a third free node of that address", cuGraphAddMemFreeNode(&f3, g, &fb, 1, pb));
    p = alloc_params(MIB);
    CALL("add alloc node d after the free of b", cuGraphAddMemAllocNode(&d, g, &fb, 1, &p));
    yes_no("d has a's address", p.dptr == pa);
    CALL("remove the dependency a -> free of a", cuGraphRemoveDependencies(g, &a, &fa, NULL, 1));
    CALL("destroy the graph", cuGraphDestroy(g));
}

/* The call the H200 crashed on (SIGSEGV) in alloc-node-errors, alone in a section run
 * last, so that alloc-node-errors runs to its end. */
static void alloc_node_errors_null_crash(void) {
    setup();
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    CUgraphNode a;
    CUDA_MEM_ALLOC_NODE_PARAMS p = alloc_params(MIB);
    p.accessDescs = NULL;
    p.accessDescCount = 1;
    CALL("accessDescs NULL with a count of 1", cuGraphAddMemAllocNode(&a, g, NULL, 0, &p));
}

int main(void) {
    section("attributes-at-start", attributes_at_start);
    section("set-attributes", set_attributes);
    section("alloc-node", alloc_node);
    section("alloc-node-errors", alloc_node_errors);
    section("launch-and-trim", launch_and_trim);
    section("unfreed-allocation", unfreed_allocation);
    section("auto-free-on-launch", auto_free_on_launch);
    section("instantiate-rules", instantiate_rules);
    section("free-node-errors", free_node_errors);
    section("free-in-another-graph", free_in_another_graph);
    section("two-graphs", two_graphs);
    section("capture", capture);
    section("capture-errors", capture_errors);
    section("user-objects", user_objects);
    section("capture-to-graph", capture_to_graph);
    section("host-and-managed", host_and_managed);
    section("free-node-after-instantiate", free_node_after_instantiate);
    section("address-reuse", address_reuse);
    section("alloc-node-errors-null-crash", alloc_node_errors_null_crash);
    return 0;
}
